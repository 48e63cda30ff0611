//! L0 where a file sits in a space: the one classification of a path relative to `.ai/` (tools,
//! extractors, directives, knowledge, config, trust documents, key approvals, lockfiles, other),
//! and the folder and file names it is decided by. Every layer decides from here: the loader,
//! lint, the lint cache, `sign`, `verify`, the trust store and lockfile index. The kinds a file's
//! header refines a tool into (runtime, primitive, library module, data) are the query
//! `resolve::file_kind`.

/// Where tools live.
pub const TOOLS_DIR: &str = "tools/";
/// Where directives live (`.md` files).
pub const DIRECTIVES_DIR: &str = "directives/";
/// Where knowledge entries live (`.md` files).
pub const KNOWLEDGE_DIR: &str = "knowledge/";
/// The extractors: tools that say how other items are parsed (§1.6).
pub const EXTRACTORS_DIR: &str = "tools/rye/core/extractors/";
/// ryechain's configuration, relative to a space's `.ai/`.
pub const CONFIG_RELS: [&str; 2] = ["config/ryechain.yaml", "config/ryechain.yml"];
/// Trust-store directories relative to a space's `.ai/`, in lookup order.
pub const TRUST_DIRS: [&str; 2] = ["config/keys/trusted/", "trusted_keys/"];
/// Where approvals of project keys live, relative to the user space's `.ai/`.
pub const APPROVED_DIR: &str = "config/keys/approved/";
/// Where lockfiles live, relative to a space's `.ai/`.
pub const LOCKFILES_DIR: &str = "lockfiles/";
/// The suffix of every lockfile name.
pub const LOCKFILE_SUFFIX: &str = ".lock.json";

/// The place of a file, from its path relative to `.ai/` alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// Under `tools/` (any extension: whether the extractors parse it is the query's to say).
    Tool,
    /// Under the extractors' folder.
    Extractor,
    /// `directives/….md`.
    Directive,
    /// `knowledge/….md`.
    Knowledge,
    /// `config/ryechain.yaml` (or `.yml`).
    Config,
    /// A trusted key (`config/keys/trusted/*.toml|.pem`, the seed era's `trusted_keys/`).
    TrustDocument,
    /// A person's approval of a key a project ships (`config/keys/approved/*.toml`).
    KeyApproval,
    /// `lockfiles/…<id>@<version>.lock.json`.
    Lockfile,
    /// Anything else: a non-`.md` file under `directives/` or `knowledge/`, notes, caches.
    Other,
}

impl Place {
    /// The place of `rel` (a path relative to `.ai/`, `/`-separated).
    pub fn of(rel: &str) -> Place {
        if rel.starts_with(EXTRACTORS_DIR) {
            Place::Extractor
        } else if rel.starts_with(TOOLS_DIR) {
            Place::Tool
        } else if rel.starts_with(DIRECTIVES_DIR) && rel.ends_with(".md") {
            Place::Directive
        } else if rel.starts_with(KNOWLEDGE_DIR) && rel.ends_with(".md") {
            Place::Knowledge
        } else if CONFIG_RELS.contains(&rel) {
            Place::Config
        } else if trust_doc_rank(rel).is_some() {
            Place::TrustDocument
        } else if is_approval_doc(rel) {
            Place::KeyApproval
        } else if is_lockfile_rel(rel) {
            Place::Lockfile
        } else {
            Place::Other
        }
    }

    /// An item a signature covers (a tool, an extractor, a directive, a knowledge entry).
    pub fn is_item(self) -> bool {
        matches!(
            self,
            Place::Tool | Place::Extractor | Place::Directive | Place::Knowledge
        )
    }
}

/// Whether `rel` is a trust-store document, and its layout rank (`.toml` before `.pem`, the
/// current folder before the seed era's).
pub fn trust_doc_rank(rel: &str) -> Option<u8> {
    for (i, dir) in TRUST_DIRS.iter().enumerate() {
        if let Some(name) = rel.strip_prefix(dir)
            && !name.contains('/')
        {
            let i = i as u8;
            if name.ends_with(".toml") {
                return Some(i * 2);
            }
            if name.ends_with(".pem") {
                return Some(i * 2 + 1);
            }
        }
    }
    None
}

/// Whether `rel` is an approval document (`config/keys/approved/<name>.toml`).
pub fn is_approval_doc(rel: &str) -> bool {
    rel.strip_prefix(APPROVED_DIR)
        .is_some_and(|name| !name.contains('/') && name.ends_with(".toml"))
}

/// Whether `rel` names a lockfile (`lockfiles/<…>.lock.json` with a non-empty name).
pub fn is_lockfile_rel(rel: &str) -> bool {
    rel.strip_prefix(LOCKFILES_DIR)
        .and_then(|r| r.strip_suffix(LOCKFILE_SUFFIX))
        .is_some_and(|stem| !stem.is_empty() && !stem.ends_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_place_from_its_path() {
        let cases = [
            ("tools/a/b.py", Place::Tool),
            ("tools/a/data.csv", Place::Tool),
            (
                "tools/rye/core/extractors/python/python_extractor.yaml",
                Place::Extractor,
            ),
            ("directives/a/b.md", Place::Directive),
            ("directives/a/notes.txt", Place::Other),
            ("knowledge/x.md", Place::Knowledge),
            ("knowledge/x.yaml", Place::Other),
            ("config/ryechain.yaml", Place::Config),
            ("config/other.yaml", Place::Other),
            ("config/keys/trusted/k.toml", Place::TrustDocument),
            ("trusted_keys/k.pem", Place::TrustDocument),
            ("config/keys/trusted/sub/k.toml", Place::Other),
            ("config/keys/approved/a.toml", Place::KeyApproval),
            ("lockfiles/a/b@1.0.0.lock.json", Place::Lockfile),
            ("lockfiles/.lock.json", Place::Other),
            ("README.md", Place::Other),
        ];
        for (rel, place) in cases {
            assert_eq!(Place::of(rel), place, "{rel}");
        }
    }
}
