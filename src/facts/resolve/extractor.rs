//! L3 the data-driven extractor facts (§1.5, §1.6): the tool extension list and the parsers map,
//! read from `*_extractor.*` files under `.ai/tools/rye/core/extractors/` of every space.

use std::sync::Arc;

use crate::db::{Db, FileContents, SourceFile, Workspace};
use crate::parse::ParserKind;

/// Directory (relative to a space's `.ai/`) that holds extractor files.
pub use crate::place::EXTRACTORS_DIR;

/// The extension list and parser map in force for the whole workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractorConfig {
    /// Tool extensions in first-appearance order (project → user → bundles; files by path;
    /// entries in file order). DESIGN.md: deterministic, unlike the reference's set (§15.18).
    pub extensions: Vec<Arc<str>>,
    /// Extension → parser; first found wins (project > user > system, §1.6).
    pub parsers: Vec<(Arc<str>, ParserKind)>,
    /// The extractor files that contributed, in reading order.
    pub sources: Vec<SourceFile>,
    /// Problems met while reading extractors: file, message (e.g. an unknown parser name).
    pub problems: Vec<(SourceFile, String)>,
}

impl ExtractorConfig {
    pub fn parser_for(&self, ext: &str) -> Option<ParserKind> {
        self.parsers
            .iter()
            .find(|(e, _)| e.as_ref() == ext)
            .map(|(_, p)| *p)
            .or_else(|| ParserKind::builtin_for_extension(ext))
    }
    pub fn has_extension(&self, ext: &str) -> bool {
        self.extensions.iter().any(|e| e.as_ref() == ext)
    }
    pub fn extension_rank(&self, ext: &str) -> Option<usize> {
        self.extensions.iter().position(|e| e.as_ref() == ext)
    }
}

/// The item type an extractor file serves: its parent directory when that is a type name
/// (`extractors/tool/…`), else the file-name prefix (`tool_extractor.yaml`).
pub(crate) fn extractor_item_type(rel: &str) -> Option<&str> {
    let rest = rel.strip_prefix(EXTRACTORS_DIR)?;
    let (dir, name) = match rest.rsplit_once('/') {
        Some((dir, name)) => (dir.rsplit('/').next().unwrap_or(dir), name),
        None => ("", rest),
    };
    if name.starts_with('_') {
        return None;
    }
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .or_else(|| name.strip_suffix(".py"))?;
    let prefix = stem.strip_suffix("_extractor")?;
    if matches!(dir, "tool" | "directive" | "knowledge") {
        Some(dir)
    } else {
        Some(prefix)
    }
}

/// The extractors in force (§1.5): [`extractor_config_of`] of the database's workspace.
pub fn extractor_config(db: &dyn Db) -> &ExtractorConfig {
    extractor_config_of(db, db.workspace())
}

/// Keyed by the workspace input rather than by no argument at all: salsa interns the empty key
/// of an argument-free query on every call (seven calls per tool in a lint), while an input is
/// its own key.
#[salsa::tracked(returns(ref))]
pub fn extractor_config_of(db: &dyn Db, _ws: Workspace) -> ExtractorConfig {
    let mut cfg = ExtractorConfig {
        extensions: Vec::new(),
        parsers: Vec::new(),
        sources: Vec::new(),
        problems: Vec::new(),
    };
    for root in db.workspace().roots(db) {
        for (rel, file) in root.entries_under(db, EXTRACTORS_DIR) {
            // Directive/knowledge extractors do not add tool extensions (avoids the `.md` quirk, §15.19).
            if extractor_item_type(rel) != Some("tool") {
                continue;
            }
            let FileContents::Text(text) = file.contents(db) else {
                continue;
            };
            cfg.sources.push(file);
            if rel.ends_with(".py") {
                read_python_extractor(file, &text.as_str(), &mut cfg);
            } else if let Some(doc) = extractor_yaml(db, file) {
                read_yaml_extractor(file, doc, &mut cfg);
            }
        }
    }
    if cfg.extensions.is_empty() {
        cfg.extensions.push(Arc::from(".py"));
    }
    cfg
}

fn push_extension(cfg: &mut ExtractorConfig, ext: &str) {
    let ext = if ext.starts_with('.') {
        ext.to_owned()
    } else {
        format!(".{ext}")
    };
    if !cfg.has_extension(&ext) {
        cfg.extensions.push(Arc::from(ext));
    }
}

fn push_parser(cfg: &mut ExtractorConfig, file: SourceFile, ext: &str, name: &str) {
    if cfg.parsers.iter().any(|(e, _)| e.as_ref() == ext) {
        return;
    }
    match ParserKind::from_name(name) {
        Some(kind) => cfg.parsers.push((Arc::from(ext), kind)),
        None => cfg.problems.push((
            file,
            format!("unknown parser `{name}` for `{ext}`; built-in parsers are python/ast, yaml/yaml, javascript/javascript"),
        )),
    }
}

/// The YAML document of one extractor file, parsed once for every reader (the extension list and
/// parsers map here, the signature formats in `integrity`). `None` when it does not parse: the
/// file's own problem is reported by `file_diagnostics`.
#[salsa::tracked(returns(ref))]
pub fn extractor_yaml(db: &dyn Db, file: SourceFile) -> Option<serde_yaml::Value> {
    let text = file.contents(db).text()?;
    // The bundle's own extractors as converted at build time (exactly their text, so exactly
    // their document; `tests::prebuilt_extractors_are_their_yaml`).
    if let Some(json) = crate::embedded::prebuilt_yaml_json(&text)
        && let Ok(doc) = serde_json::from_str(json)
    {
        return Some(doc);
    }
    crate::parse::guard::yaml_from_str(&text).ok()
}

fn read_yaml_extractor(file: SourceFile, doc: &serde_yaml::Value, cfg: &mut ExtractorConfig) {
    if let Some(exts) = doc.get("extensions").and_then(|v| v.as_sequence()) {
        for e in exts.iter().filter_map(|e| e.as_str()) {
            push_extension(cfg, e);
        }
    }
    if let Some(parsers) = doc.get("parsers").and_then(|v| v.as_mapping()) {
        for (k, v) in parsers {
            if let (Some(ext), Some(name)) = (k.as_str(), v.as_str()) {
                push_parser(cfg, file, ext, name);
            }
        }
    }
}

/// `EXTENSIONS = [".py", ...]` and `PARSERS = {".py": "python/ast"}` in a Python extractor
/// (§1.5), read as top-level literals by the `python/ast` parser; the last assignment of a name
/// wins, as in Python. Syntax problems are the file's own diagnostics (`file_diagnostics`).
fn read_python_extractor(file: SourceFile, text: &str, cfg: &mut ExtractorConfig) {
    let (mut values, _problems) = crate::parse::python_top_level_literals(text, |name| {
        matches!(name, "EXTENSIONS" | "PARSERS")
    });
    // Later assignments replace earlier ones: keep only the last of each name.
    let mut seen = std::collections::HashSet::new();
    values.reverse();
    values.retain(|(name, _)| seen.insert(name.clone()));
    values.reverse();
    for (name, value) in values {
        match name.as_str() {
            "EXTENSIONS" => {
                for e in value
                    .value
                    .as_list()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|v| v.value.as_str())
                {
                    push_extension(cfg, e);
                }
            }
            "PARSERS" => {
                for (k, v) in value.value.as_map().unwrap_or_default() {
                    if let Some(name) = v.value.as_str() {
                        push_parser(cfg, file, &k.value, name);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_type_from_dir_or_name() {
        assert_eq!(
            extractor_item_type("tools/rye/core/extractors/tool/tool_extractor.yaml"),
            Some("tool")
        );
        assert_eq!(
            extractor_item_type("tools/rye/core/extractors/tool_extractor.yaml"),
            Some("tool")
        );
        assert_eq!(
            extractor_item_type("tools/rye/core/extractors/knowledge/knowledge_extractor.yaml"),
            Some("knowledge")
        );
        assert_eq!(
            extractor_item_type("tools/rye/core/extractors/directive_extractor.py"),
            Some("directive")
        );
        assert_eq!(
            extractor_item_type("tools/rye/core/extractors/tool/_tool_extractor.yaml"),
            None
        );
        assert_eq!(
            extractor_item_type("tools/rye/core/extractors/tool/readme.md"),
            None
        );
        assert_eq!(extractor_item_type("tools/other/tool_extractor.yaml"), None);
    }

    /// Every YAML extractor of the bundle has a build-time JSON form, and it is exactly the
    /// document its YAML parses to; a file edited by one byte is parsed from its YAML.
    #[test]
    fn prebuilt_extractors_are_their_yaml() {
        let mut seen = 0;
        for (rel, bytes) in crate::embedded::embedded_system_files() {
            if !(rel.starts_with(".ai/tools/rye/core/extractors/") && rel.ends_with(".yaml")) {
                continue;
            }
            seen += 1;
            let text = std::str::from_utf8(bytes).unwrap();
            let json = crate::embedded::prebuilt_yaml_json(text)
                .unwrap_or_else(|| panic!("{rel} has no build-time JSON"));
            let from_json: serde_yaml::Value = serde_json::from_str(json).unwrap();
            let from_yaml: serde_yaml::Value = crate::parse::guard::yaml_from_str(text).unwrap();
            assert_eq!(from_json, from_yaml, "{rel}");
            assert!(
                crate::embedded::prebuilt_yaml_json(&format!("{text}\n")).is_none(),
                "{rel}"
            );
        }
        assert!(seen >= 3, "the bundle's YAML extractors: {seen}");
    }
}
