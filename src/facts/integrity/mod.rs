//! L3 integrity (§10): signature lines, content hashes, Ed25519 keys, the trust store and the
//! per-file verdict, as salsa queries over file text. No chain query reads anything here
//! (DESIGN.md invariant: a body edit re-runs integrity for that file only).

pub mod batch;
pub mod canonical;
pub mod hash;
pub mod keys;
pub mod lockfile;
pub mod sigline;
pub mod timefmt;
pub mod trust;

#[cfg(test)]
mod proptests;

use std::path::PathBuf;
use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::db::{Db, FileContents, SourceFile};
use crate::model::{SpaceKind, Span};
use crate::resolve::extractor::{EXTRACTORS_DIR, extractor_item_type};

pub use sigline::{SigLine, Signature, SignatureFormat};
pub use trust::TrustedKey;

/// The key fingerprint shown for items of ryechain's embedded bundle (trusted by construction).
pub const EMBEDDED_KEY_FP: &str = "embedded";

/// The three signed item kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    Tool,
    Directive,
    Knowledge,
}

impl ItemKind {
    /// The folder of the kind's items under `.ai/` (with its slash).
    pub fn dir(self) -> &'static str {
        match self {
            ItemKind::Tool => crate::place::TOOLS_DIR,
            ItemKind::Directive => crate::place::DIRECTIVES_DIR,
            ItemKind::Knowledge => crate::place::KNOWLEDGE_DIR,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Directive => "directive",
            ItemKind::Knowledge => "knowledge",
        }
    }
    pub fn from_name(name: &str) -> Option<ItemKind> {
        match name {
            "tool" => Some(ItemKind::Tool),
            "directive" => Some(ItemKind::Directive),
            "knowledge" => Some(ItemKind::Knowledge),
            _ => None,
        }
    }
    /// The item kind of a file from its path relative to `.ai/`: `tools/…` (any extension),
    /// `directives/….md`, `knowledge/….md`.
    pub fn of_rel(rel: &str) -> Option<ItemKind> {
        use crate::place::Place;
        match Place::of(rel) {
            Place::Tool | Place::Extractor => Some(ItemKind::Tool),
            Place::Directive => Some(ItemKind::Directive),
            Place::Knowledge => Some(ItemKind::Knowledge),
            _ => None,
        }
    }
}

/// The extension of a file name including its dot (`.py`), or `""`.
pub fn extension_of(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    match name.rfind('.') {
        Some(i) if i > 0 => &name[i..],
        _ => "",
    }
}

/// The built-in signature format when no extractor configures one (§10.1).
pub fn default_format(kind: ItemKind, ext: &str) -> SignatureFormat {
    match kind {
        ItemKind::Directive | ItemKind::Knowledge => SignatureFormat::html_comment(),
        ItemKind::Tool if matches!(ext, ".js" | ".ts" | ".mjs" | ".cjs") => {
            SignatureFormat::slash_comment()
        }
        ItemKind::Tool => SignatureFormat::hash_comment(),
    }
}

/// Signature formats configured by extractors: (item kind, extension or `""` for the default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignatureFormats {
    pub entries: Vec<((ItemKind, String), SignatureFormat)>,
}

impl SignatureFormats {
    /// Per-extension entry, then the kind's default entry, then the built-in format.
    pub fn get(&self, kind: ItemKind, ext: &str) -> SignatureFormat {
        let find = |e: &str| {
            self.entries
                .iter()
                .find(|((k, x), _)| *k == kind && x == e)
                .map(|(_, f)| f.clone())
        };
        find(ext)
            .or_else(|| find(""))
            .unwrap_or_else(|| default_format(kind, ext))
    }
}

fn yaml_format(v: &serde_yaml::Value) -> Option<SignatureFormat> {
    let prefix = v.get("prefix")?.as_str()?.to_owned();
    Some(SignatureFormat {
        prefix,
        suffix: v.get("suffix").and_then(|s| s.as_str()).map(str::to_owned),
        after_shebang: v
            .get("after_shebang")
            .and_then(|b| b.as_bool())
            .unwrap_or(true),
    })
}

/// An item kind as a query key: signature formats are read per kind, so verifying a tool never
/// parses the directive and knowledge extractors.
#[salsa::interned(unsafe(no_lifetime), revisions = usize::MAX, debug)]
pub struct KindKey {
    pub kind: ItemKind,
}

/// The signature formats in force for one item kind.
pub fn formats_of(db: &dyn Db, kind: ItemKind) -> &SignatureFormats {
    signature_formats(db, KindKey::new(db, kind))
}

/// `signature_format` / `signature_formats` of the extractor YAMLs of one item kind, first found
/// wins (project > user > system; files by path) per extension (§10.1).
#[salsa::tracked(returns(ref))]
pub fn signature_formats(db: &dyn Db, key: KindKey) -> SignatureFormats {
    let wanted = *key.kind(db);
    let mut out = SignatureFormats::default();
    for root in db.workspace().roots(db) {
        for (rel, file) in root.entries_under(db, EXTRACTORS_DIR) {
            if rel.ends_with(".py") {
                continue;
            }
            let Some(kind) = extractor_item_type(rel).and_then(ItemKind::from_name) else {
                continue;
            };
            if kind != wanted {
                continue;
            }
            let Some(doc) = crate::resolve::extractor::extractor_yaml(db, file) else {
                continue;
            };
            let mut push = |ext: String, fmt: SignatureFormat| {
                if !out
                    .entries
                    .iter()
                    .any(|((k, e), _)| *k == kind && *e == ext)
                {
                    out.entries.push(((kind, ext), fmt));
                }
            };
            if let Some(map) = doc.get("signature_formats").and_then(|m| m.as_mapping()) {
                for (k, v) in map {
                    if let (Some(ext), Some(fmt)) = (k.as_str(), yaml_format(v)) {
                        push(ext.to_owned(), fmt);
                    }
                }
            }
            if let Some(fmt) = doc.get("signature_format").and_then(yaml_format) {
                push(String::new(), fmt);
            }
        }
    }
    out
}

/// The signature format in force for a file (by its item kind and extension).
pub fn format_for(db: &dyn Db, kind: ItemKind, rel: &str) -> SignatureFormat {
    formats_of(db, kind).get(kind, extension_of(rel))
}

/// Whether a file is part of ryechain's embedded bundle (compiled into the binary).
pub fn is_embedded(db: &dyn Db, file: SourceFile) -> bool {
    file.path(db)
        .to_str()
        .is_some_and(|p| p.starts_with(crate::model::EMBEDDED_PATH_PREFIX))
}

/// The signature line of an item file (`Absent` for non-items and unreadable files). Not a query
/// of its own: its only reader is the verdict (`signature_status`), which is memoized, so a
/// second memo per file would only hold the line twice (at 100k files, megabytes).
pub fn signature_line(db: &dyn Db, file: SourceFile) -> SigLine {
    let rel = file.rel(db);
    let (Some(kind), Some(text)) = (ItemKind::of_rel(rel), file.contents(db).text()) else {
        return SigLine::Absent;
    };
    sigline::parse_signature(&text, &format_for(db, kind, rel))
}

/// The content hash of an item file (§10.2), or why there is none: the memoized query, for
/// lockfiles, which compare the hashes of other files.
#[salsa::tracked(returns(ref))]
pub fn content_hash(db: &dyn Db, file: SourceFile) -> Result<Arc<str>, String> {
    hash_of(db, file).map(Arc::from)
}

/// The content hash of an item file, computed (not memoized: the verdict, memoized, is its
/// reader in a lint, which would otherwise keep every file's hash twice).
fn hash_of(db: &dyn Db, file: SourceFile) -> Result<String, String> {
    let rel = file.rel(db);
    let kind = ItemKind::of_rel(rel).ok_or_else(|| "not an item file".to_owned())?;
    let contents = file.contents(db);
    let text = contents.text().ok_or_else(|| {
        format!(
            "the file cannot be read: {}",
            contents.problem().unwrap_or_default()
        )
    })?;
    let fmt = format_for(db, kind, rel);
    hash::content_hash(kind, &text, &fmt.prefix).map_err(str::to_owned)
}

/// Every trusted key of the workspace, in lookup order, plus the documents that were refused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustStore {
    /// (key, the document that vouches for it), first match wins on lookup.
    pub keys: Vec<(TrustedKey, SourceFile)>,
    /// Keys the project ships that the person has not approved for this project (and that no
    /// other space trusts): listed, never trusted (DESIGN.md "Trust").
    pub unapproved: Vec<(TrustedKey, SourceFile)>,
    /// Refused documents and why (shown by lint as `untrusted-key` context, never trusted).
    pub problems: Vec<(SourceFile, String)>,
    /// The Ed25519 key of each entry of `keys` (same order), parsed from its PEM once per run
    /// rather than once per signature; `None` when the PEM is not an Ed25519 public key.
    pub verifying: Vec<Option<ed25519_dalek::VerifyingKey>>,
}

impl TrustStore {
    pub fn lookup(&self, fp: &str) -> Option<&(TrustedKey, SourceFile)> {
        self.keys.iter().find(|(k, _)| k.fingerprint == fp)
    }

    /// The project document shipping `fp` when the key is waiting for the person's approval.
    pub fn unapproved(&self, fp: &str) -> Option<&(TrustedKey, SourceFile)> {
        self.unapproved.iter().find(|(k, _)| k.fingerprint == fp)
    }

    /// The parsed key trusted under `fp`: `None` when no key is, `Some(None)` when its PEM does
    /// not parse (every signature under it is then bad).
    pub fn verifying_key(&self, fp: &str) -> Option<Option<ed25519_dalek::VerifyingKey>> {
        let at = self.keys.iter().position(|(k, _)| k.fingerprint == fp)?;
        Some(self.verifying.get(at).copied().flatten())
    }

    /// What an untrusted-key verdict says about `fp` when the project ships it unapproved.
    pub fn approval_hint(&self, db: &dyn Db, fp: &str) -> Option<Box<Unapproved>> {
        let (_, file) = self.unapproved(fp)?;
        Some(Box::new(Unapproved {
            document: file.path(db).as_ref().clone(),
            project: project_dir_of(db, *file)?,
        }))
    }
}

/// The project directory (the folder holding `.ai/`) of a project file, as approvals name it.
pub fn project_dir_of(db: &dyn Db, file: SourceFile) -> Option<PathBuf> {
    let root = db
        .workspace()
        .roots(db)
        .iter()
        .find(|r| r.space(db) == file.space(db))?;
    project_dir(db, *root)
}

/// The project directory of a space root (`None` for other spaces).
fn project_dir(db: &dyn Db, root: crate::db::SpaceRoot) -> Option<PathBuf> {
    (root.space(db).kind() == SpaceKind::Project)
        .then(|| root.root(db).parent().map(PathBuf::from))
        .flatten()
}

/// A trust document of `root` that lives in `root`'s space, or why it is ignored.
fn own_text(db: &dyn Db, file: SourceFile, what: &str) -> Result<String, String> {
    if let Some(origin) = file.link_origin(db)
        && origin != file.space(db).kind()
    {
        return Err(format!(
            "this {what} is a symlink into the {} space; a space trusts only its own key files, so it is ignored",
            origin.name()
        ));
    }
    match file.contents(db) {
        FileContents::Text(text) => Ok(text.as_str().into_owned()),
        FileContents::SymlinkEscape { .. } => Err(format!(
            "this {what} is a symlink out of every space; it is ignored"
        )),
        _ => Err(format!("this {what} cannot be read")),
    }
}

/// The trust store read from all three layouts of §10.4: project → user → bundles, and within a
/// space `.toml` before `.pem`, seed-era directory first. A document that is a symlink into
/// another space, or out of every space, is ignored with a problem. Keys the project ships count
/// only when the user space holds the person's approval of that key for that project
/// (`trust::Approval`); approvals anywhere but the user space are not read.
#[salsa::tracked(returns(ref))]
pub fn trust_store(db: &dyn Db) -> TrustStore {
    let mut store = TrustStore::default();
    let roots = db.workspace().roots(db);
    let mut approvals = FxHashSet::default();
    for root in roots
        .iter()
        .filter(|r| r.space(db).kind() == SpaceKind::User)
    {
        for (rel, file) in root.entries_under(db, trust::APPROVED_DIR) {
            if !trust::is_approval_doc(rel) {
                continue;
            }
            match own_text(db, file, "key approval").and_then(|text| trust::parse_approval(&text)) {
                Ok(a) => {
                    approvals.insert(a);
                }
                Err(e) => store.problems.push((file, e)),
            }
        }
    }
    let mut waiting = Vec::new();
    for &root in roots {
        let project = project_dir(db, root).map(|p| p.display().to_string());
        let mut docs: Vec<(u8, SourceFile)> = trust::TRUST_DIRS
            .iter()
            .flat_map(|dir| root.entries_under(db, dir))
            .filter_map(|(rel, f)| trust::trust_doc_rank(rel).map(|r| (r, f)))
            .collect();
        docs.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.rel(db).cmp(b.1.rel(db))));
        for (_, file) in docs {
            let key = own_text(db, file, "trusted-key file")
                .and_then(|text| trust::parse_trust_doc(file.rel(db), &text));
            match (key, &project) {
                (Err(e), _) => store.problems.push((file, e)),
                (Ok(key), Some(project))
                    if !approvals.contains(&trust::Approval::of(&key, project)) =>
                {
                    waiting.push((key, file));
                }
                (Ok(key), _) => store.keys.push((key, file)),
            }
        }
    }
    // A key the person trusts some other way is not waiting for anything.
    waiting.retain(|(k, _)| store.lookup(&k.fingerprint).is_none());
    store.unapproved = waiting;
    store.verifying = store
        .keys
        .iter()
        .map(|(k, _)| keys::public_key_from_pem(&k.pem).ok())
        .collect();
    store
}

/// Where a key an item is signed with waits for the person's approval: the project document
/// that ships it, and the project to approve it for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unapproved {
    pub document: PathBuf,
    pub project: PathBuf,
}

/// The integrity verdict of one item (§10.5 order: parse → hash → trust → signature).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Signed, hash matches, key trusted, signature valid.
    Verified {
        key_fp: String,
        hash: String,
    },
    /// Part of ryechain's embedded bundle: trusted by construction (`key_fp: "embedded"`).
    Embedded {
        hash: String,
    },
    /// No signature line (`legacy`: a `rye:validated`/`kiwi-mcp` placeholder).
    Unsigned {
        legacy: bool,
        span: Option<Span>,
    },
    /// A `rye:signed:` line whose fields are not well formed (unsigned to the reference).
    Malformed {
        reason: String,
        span: Span,
    },
    HashMismatch {
        expected: String,
        got: String,
        span: Span,
    },
    UntrustedKey {
        key_fp: String,
        span: Span,
        /// The key is shipped by the project and waits for the person's approval.
        unapproved: Option<Box<Unapproved>>,
    },
    BadSignature {
        key_fp: String,
        span: Span,
    },
    /// The content cannot be hashed (a directive without XML) or read.
    Unhashable {
        reason: String,
    },
}

impl Verdict {
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Verified { .. } | Verdict::Embedded { .. })
    }
    pub fn is_unsigned(&self) -> bool {
        matches!(self, Verdict::Unsigned { .. } | Verdict::Malformed { .. })
    }
    /// The key fingerprint to show (`embedded` for the embedded bundle).
    pub fn key_fp(&self) -> Option<&str> {
        match self {
            Verdict::Verified { key_fp, .. } => Some(key_fp),
            Verdict::Embedded { .. } => Some(EMBEDDED_KEY_FP),
            _ => None,
        }
    }
    /// The reference's `IntegrityError` text for a failing item (§10.5), `None` when it passed.
    pub fn error_text(&self, path: &str) -> Option<String> {
        Some(match self {
            Verdict::Verified { .. } | Verdict::Embedded { .. } => return None,
            Verdict::Unsigned { .. } | Verdict::Malformed { .. } => {
                crate::message::unsigned_item(path)
            }
            Verdict::HashMismatch { expected, got, .. } => crate::message::integrity_failed(
                path,
                &expected[..expected.len().min(16)],
                &got[..got.len().min(16)],
            ),
            Verdict::UntrustedKey {
                key_fp,
                unapproved: Some(u),
                ..
            } => crate::message::unapproved_key(
                key_fp,
                path,
                &u.document.display().to_string(),
                &u.project.display().to_string(),
            ),
            Verdict::UntrustedKey { key_fp, .. } => crate::message::untrusted_key(key_fp, path),
            Verdict::BadSignature { .. } => crate::message::bad_signature(path),
            Verdict::Unhashable { reason } => reason.clone(),
        })
    }
}

/// Verify item text against a trust store (pure; also used for files outside the database, such
/// as verify_deps files the execution path reads).
pub fn verify_text(
    kind: ItemKind,
    fmt: &SignatureFormat,
    text: &str,
    trusted: &dyn Fn(&str) -> Option<String>,
) -> Verdict {
    let line = sigline::parse_signature(text, fmt);
    let got = match hash::content_hash(kind, text, &fmt.prefix) {
        Ok(h) => h,
        Err(reason) => {
            return Verdict::Unhashable {
                reason: reason.to_owned(),
            };
        }
    };
    let key_for = |fp: &str| trusted(fp).map(|pem| keys::public_key_from_pem(&pem).ok());
    verdict_from(line, got, &key_for)
}

/// A verdict, or what is left to decide it: one Ed25519 verification.
#[derive(Clone, Debug)]
pub enum Claim {
    Settled(Verdict),
    Verify(Box<PendingSignature>),
}

/// A signature whose hash matches and whose key is trusted: `Verified` if it verifies,
/// `BadSignature` if not (`settle`).
#[derive(Clone, Debug)]
pub struct PendingSignature {
    pub key: ed25519_dalek::VerifyingKey,
    pub signature: ed25519_dalek::Signature,
    key_fp: String,
    /// The content hash (hex), which is the signed message.
    pub hash: String,
    span: Span,
}

impl PendingSignature {
    /// The verdict once the verification answered `valid`.
    pub fn settle(self, valid: bool) -> Verdict {
        if valid {
            Verdict::Verified {
                key_fp: self.key_fp,
                hash: self.hash,
            }
        } else {
            Verdict::BadSignature {
                key_fp: self.key_fp,
                span: self.span,
            }
        }
    }
    /// The job of this signature in a batch (`batch::verify_each`).
    pub fn job(&self) -> batch::Job<'_> {
        batch::Job {
            key: &self.key,
            msg: self.hash.as_bytes(),
            sig: &self.signature,
        }
    }
}

impl Claim {
    /// The verdict, verifying the signature on its own if one is pending.
    pub fn settle_alone(self) -> Verdict {
        match self {
            Claim::Settled(v) => v,
            Claim::Verify(p) => {
                use ed25519_dalek::Verifier;
                let valid = p.key.verify(p.hash.as_bytes(), &p.signature).is_ok();
                p.settle(valid)
            }
        }
    }
}

/// `key_for(fp)`: `None` when no key is trusted under `fp`, `Some(None)` when the trusted PEM is
/// not an Ed25519 public key (a bad signature, as any signature under it).
fn verdict_from(
    line: SigLine,
    got: String,
    key_for: &dyn Fn(&str) -> Option<Option<ed25519_dalek::VerifyingKey>>,
) -> Verdict {
    claim_from(line, got, key_for).settle_alone()
}

/// `verdict_from` up to the signature's verification.
fn claim_from(
    line: SigLine,
    got: String,
    key_for: &dyn Fn(&str) -> Option<Option<ed25519_dalek::VerifyingKey>>,
) -> Claim {
    let (span, sig) = match line {
        SigLine::Absent => {
            return Claim::Settled(Verdict::Unsigned {
                legacy: false,
                span: None,
            });
        }
        SigLine::Legacy { span } => {
            return Claim::Settled(Verdict::Unsigned {
                legacy: true,
                span: Some(span),
            });
        }
        SigLine::Malformed { span, reason } => {
            return Claim::Settled(Verdict::Malformed { reason, span });
        }
        SigLine::Signed { span, signature } => (span, signature),
    };
    if sig.content_hash != got {
        return Claim::Settled(Verdict::HashMismatch {
            expected: sig.content_hash,
            got,
            span,
        });
    }
    let Some(key) = key_for(&sig.key_fp) else {
        return Claim::Settled(Verdict::UntrustedKey {
            key_fp: sig.key_fp,
            span,
            unapproved: None,
        });
    };
    // A trusted PEM that is no Ed25519 key, or a signature that is not 64 bytes of base64url:
    // no key verifies it.
    match (key, keys::decode_signature(&sig.signature)) {
        (Some(key), Some(signature)) => Claim::Verify(Box::new(PendingSignature {
            key,
            signature,
            key_fp: sig.key_fp,
            hash: got,
            span,
        })),
        _ => Claim::Settled(Verdict::BadSignature {
            key_fp: sig.key_fp,
            span,
        }),
    }
}

/// Sign item text (§10.3 flow): stage a well-formed placeholder line where the signature goes
/// (so the hash covers exactly what the final file holds besides that line, whatever the
/// format), hash, sign the hex hash, and put the real line in place. Pure: the caller supplies
/// the key and the timestamp (`timefmt::signature_timestamp`).
pub fn sign_text(
    kind: ItemKind,
    fmt: &SignatureFormat,
    text: &str,
    key: &ed25519_dalek::SigningKey,
    key_fp: &str,
    timestamp: String,
) -> Result<(String, Signature), &'static str> {
    let placeholder = Signature {
        timestamp: timefmt::signature_timestamp(0),
        content_hash: "0".repeat(64),
        signature: "AA".to_owned(),
        key_fp: "0".repeat(16),
        provenance: None,
    };
    let staged = sigline::with_signature_line(text, fmt, &placeholder.line(fmt));
    let content_hash = hash::content_hash(kind, &staged, &fmt.prefix)?;
    let signature = Signature {
        timestamp,
        signature: keys::sign_hash(key, &content_hash),
        content_hash,
        key_fp: key_fp.to_owned(),
        provenance: None,
    };
    let signed = sigline::with_signature_line(&staged, fmt, &signature.line(fmt));
    Ok((signed, signature))
}

/// The verdict of an item file of the workspace, memoized (verify, exec and lockfile readers).
#[salsa::tracked(returns(ref))]
pub fn signature_status(db: &dyn Db, file: SourceFile) -> Verdict {
    verdict_of(db, file)
}

/// The verdict of an item file, computed: for `integrity_diagnostics`, itself memoized, so a lint
/// keeps one integrity memo per file (its findings, none for a verified file), not the verdict
/// and its hash besides.
pub fn verdict_of(db: &dyn Db, file: SourceFile) -> Verdict {
    claim_of(db, file).settle_alone()
}

/// `verdict_of` up to the signature's verification: what a lint collects from many files to
/// verify their signatures in one batch (`batch::verify_each`).
pub fn claim_of(db: &dyn Db, file: SourceFile) -> Claim {
    let got = match hash_of(db, file) {
        Ok(h) => h,
        Err(reason) => return Claim::Settled(Verdict::Unhashable { reason }),
    };
    if is_embedded(db, file) {
        return Claim::Settled(Verdict::Embedded { hash: got });
    }
    let store = trust_store(db);
    let key_for = |fp: &str| store.verifying_key(fp);
    match claim_from(signature_line(db, file), got, &key_for) {
        Claim::Settled(Verdict::UntrustedKey { key_fp, span, .. }) => {
            Claim::Settled(Verdict::UntrustedKey {
                unapproved: store.approval_hint(db, &key_fp),
                key_fp,
                span,
            })
        }
        claim => claim,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_kinds_and_extensions() {
        assert_eq!(ItemKind::of_rel("tools/a/b.py"), Some(ItemKind::Tool));
        assert_eq!(
            ItemKind::of_rel("directives/a.md"),
            Some(ItemKind::Directive)
        );
        assert_eq!(
            ItemKind::of_rel("knowledge/x/y.md"),
            Some(ItemKind::Knowledge)
        );
        assert_eq!(ItemKind::of_rel("knowledge/x/y.txt"), None);
        assert_eq!(ItemKind::of_rel("config/ryechain.yaml"), None);
        assert_eq!(extension_of("tools/a.tar.gz"), ".gz");
        assert_eq!(extension_of("tools/.hidden"), "");
        assert_eq!(
            default_format(ItemKind::Tool, ".ts"),
            SignatureFormat::slash_comment()
        );
    }

    #[test]
    fn error_texts_are_the_references() {
        let p = "/x/.ai/tools/a.py";
        let v = Verdict::HashMismatch {
            expected: "a".repeat(64),
            got: "b".repeat(64),
            span: Span::empty(0),
        };
        assert_eq!(
            v.error_text(p).unwrap(),
            format!(
                "Integrity failed: {p} (expected {}…, got {}…)",
                "a".repeat(16),
                "b".repeat(16)
            )
        );
        assert_eq!(
            Verdict::UntrustedKey {
                key_fp: "0123456789abcdef".into(),
                span: Span::empty(0),
                unapproved: None,
            }
            .error_text(p)
            .unwrap(),
            format!(
                "Untrusted key 0123456789abcdef for {p}. Add the key to the trust store via the sign tool."
            )
        );
        assert_eq!(
            Verdict::Unsigned {
                legacy: true,
                span: None
            }
            .error_text(p)
            .unwrap(),
            format!("Unsigned item: {p}")
        );
        assert_eq!(
            Verdict::BadSignature {
                key_fp: String::new(),
                span: Span::empty(0)
            }
            .error_text(p)
            .unwrap(),
            format!("Ed25519 signature verification failed: {p}")
        );
    }
}
