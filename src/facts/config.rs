//! L3 `.ai/config/ryechain.yaml`: rule selection, severities and the chain length limit, deep-merged
//! system → user → project with the same `deep_merge` as CONFIG_RESOLVE (§7.4: mappings merge
//! recursively, every other value is replaced); the file's shape as a type (`ConfigFile`, whose
//! JSON Schema `ryechain config --schema` prints); and the merged settings with the file and line
//! each came from (`effective_settings`, for `ryechain config`).

use crate::db::{Db, FileContents, SourceFile, Workspace};
use crate::diagnostic::Severity;
use crate::model::{SpaceKind, Span};

/// Config file locations relative to a space's `.ai/`.
pub use crate::place::CONFIG_RELS;

/// The maximum chain length of the reference (`MAX_CHAIN_DEPTH`, §3.2, scenario 1), unless
/// `chain.max_depth` says otherwise.
pub const DEFAULT_MAX_DEPTH: usize = 10;

/// The sections of a config file, and the keys of each, as the reader below accepts them (and
/// as `ConfigFile` types them: `tests` holds the two equal).
pub const SECTIONS: [&str; 3] = ["lint", "chain", "integrity"];
pub const LINT_KEYS: [&str; 4] = ["select", "ignore", "severity", "per-file-ignores"];
pub const CHAIN_KEYS: [&str; 1] = ["max_depth"];
pub const INTEGRITY_KEYS: [&str; 1] = ["require_signatures"];

/// `.ai/config/ryechain.yaml` (or `.yml`) in any space: merged system → user → project, each
/// mapping key by key, every other value replaced.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "ryechain configuration",
    description = "`.ai/config/ryechain.yaml` of a Rye OS space: which lint rules run and how severe they are, the chain length limit, and the integrity policy. The system's, the user's and the project's files are merged in that order; a project can never lower the integrity policy."
)]
pub struct ConfigFile {
    /// Which rules `ryechain lint` (and the editor) runs, and at what severity.
    pub lint: Option<LintSection>,
    /// Executor chains.
    pub chain: Option<ChainSection>,
    /// Signatures.
    pub integrity: Option<IntegritySection>,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LintSection {
    /// Rule ids or families to run (`ALL` for every rule, opt-in rules included); without it,
    /// every rule that is on by default. `ryechain rules` lists them; `--select` replaces it.
    pub select: Option<Vec<String>>,
    /// Rule ids or families not to run; `--ignore` adds to it.
    pub ignore: Option<Vec<String>>,
    /// A severity per rule id: `error`, `warning`, `info`, or `off` to turn it off (an opt-in
    /// rule given a level runs).
    pub severity: Option<std::collections::BTreeMap<String, Level>>,
    /// Rules not reported in the files a glob matches (ruff's `per-file-ignores`): each glob
    /// (`*` stays within a folder, `**` crosses folders) is matched against the file's path
    /// below its space's directory (`.ai/tools/legacy/*.py`), or, when it holds no `/`, against
    /// its file name; its list names rule ids or families (`ALL` for every rule).
    #[serde(rename = "per-file-ignores")]
    pub per_file_ignores: Option<std::collections::BTreeMap<String, Vec<String>>>,
}

/// A rule's severity in the config (`warn` is `warning`; `off` turns the rule off).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Warn,
    Info,
    Off,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChainSection {
    /// The most links a chain may have, tool to primitive (default 10, the reference's
    /// `MAX_CHAIN_DEPTH`); `--max-depth` overrides it.
    #[schemars(range(min = 1, max = 1000))]
    pub max_depth: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntegritySection {
    /// Whether items must be signed by a trusted key to run (default true). Only the user's or
    /// the system's file may set it to false: a project's `false` is ignored.
    pub require_signatures: Option<bool>,
}

/// The JSON Schema of `ConfigFile` (draft 2020-12), as `ryechain config --schema` prints it.
pub fn config_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(ConfigFile)).unwrap_or_default()
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LintConfig {
    /// Rule ids or families to run; `None` = all.
    pub select: Option<Vec<String>>,
    pub ignore: Vec<String>,
    /// Per-rule severity; `None` turns the rule off.
    pub severity: Vec<(String, Option<Severity>)>,
    /// `lint.per-file-ignores`: each glob (in the merged file's order) and the rule ids or
    /// families it turns off in the files it matches. Globs that do not compile are left out
    /// (and reported as problems).
    pub per_file_ignores: Vec<(String, Vec<String>)>,
    pub max_depth: Option<usize>,
    /// `integrity.require_signatures` (`None`: not configured; the execution policy defaults to true).
    /// A project's `false` never reaches it (see `lowering_ignored`).
    pub require_signatures: Option<bool>,
    /// Project config files that say `integrity.require_signatures: false`, and where: ignored,
    /// because a project can never lower the integrity policy (DESIGN.md "Trust").
    pub lowering_ignored: Vec<(SourceFile, Option<Span>)>,
    /// Problems found in the config files: file, span, message.
    pub problems: Vec<(SourceFile, Option<Span>, String)>,
    /// The config files read, lowest precedence first.
    pub sources: Vec<SourceFile>,
}

/// Recursive merge: mappings merge key by key, anything else in `over` replaces `base`.
pub fn deep_merge(base: &mut serde_yaml::Value, over: serde_yaml::Value) {
    match (base, over) {
        (serde_yaml::Value::Mapping(b), serde_yaml::Value::Mapping(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => deep_merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// The span of the first line that writes `key:` (best effort, for pointing at config problems).
pub fn key_span(text: &str, key: &str) -> Option<Span> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let bare = trimmed.trim_start_matches(['"', '\'']);
        if let Some(rest) = bare.strip_prefix(key)
            && rest
                .trim_start_matches(['"', '\''])
                .trim_start()
                .starts_with(':')
        {
            let start = offset + indent;
            return Some(Span::new(start, start + trimmed.trim_end().len()));
        }
        offset += line.len();
    }
    None
}

/// The config files of every space, lowest precedence first (`LintConfig::sources`): what each
/// file's own checks read to tell whether they check a config file — not the configs' contents,
/// so that an edit of a config re-runs no other file's checks (at 100k tools every tool's file
/// checks ran again: a sixth of the re-check's time).
pub fn config_sources(db: &dyn Db) -> &[SourceFile] {
    config_sources_of(db, db.workspace())
}

/// [`config_sources`], keyed by the workspace input (an argument-free query interns its empty
/// key on every call: once per file checked).
#[salsa::tracked(returns(ref))]
fn config_sources_of(db: &dyn Db, _ws: Workspace) -> Vec<SourceFile> {
    config_files(db)
}

fn config_files(db: &dyn Db) -> Vec<SourceFile> {
    // Lowest precedence first: the last bundle, ..., the first bundle, user, project.
    let mut out = Vec::new();
    for root in db.workspace().roots(db).iter().rev() {
        let (files, rels) = (root.files(db), root.rels(db));
        for rel in CONFIG_RELS {
            let i = rels.partition_point(|r| r.as_ref() < rel);
            if let (Some(&f), Some(r)) = (files.get(i), rels.get(i))
                && r.as_ref() == rel
            {
                out.push(f);
            }
        }
    }
    out
}

fn string_list(v: &serde_yaml::Value) -> Option<Vec<String>> {
    v.as_sequence()?
        .iter()
        .map(|i| i.as_str().map(str::to_owned))
        .collect()
}

#[salsa::tracked(returns(ref))]
pub fn lint_config(db: &dyn Db) -> LintConfig {
    let mut cfg = LintConfig::default();
    let mut merged = serde_yaml::Value::Mapping(Default::default());
    for &file in config_sources(db) {
        cfg.sources.push(file);
        let FileContents::Text(text) = file.contents(db) else {
            continue;
        };
        let text = text.as_str();
        let text: &str = &text;
        let found_before = cfg.problems.len();
        let mut problem = |span: Option<Span>, msg: String| cfg.problems.push((file, span, msg));
        let doc: serde_yaml::Value = match crate::parse::guard::yaml_from_str(text) {
            Ok(serde_yaml::Value::Null) => continue,
            Ok(v) => v,
            Err(e) => {
                let span = e.offset().map(Span::empty);
                let what = match e {
                    crate::parse::guard::YamlError::TooDeep(_) => "",
                    crate::parse::guard::YamlError::Syntax(_) => "YAML syntax error: ",
                };
                problem(span, format!("{what}{e}"));
                continue;
            }
        };
        let Some(map) = doc.as_mapping() else {
            problem(
                None,
                "the config file must be a mapping with `lint:` and `chain:` sections".to_owned(),
            );
            continue;
        };
        for (k, v) in map {
            let key = k.as_str().unwrap_or_default();
            match key {
                "lint" => {
                    for (lk, lv) in v.as_mapping().into_iter().flatten() {
                        let lkey = lk.as_str().unwrap_or_default();
                        let span = key_span(text, lkey);
                        match lkey {
                            // Rule names are checked against the rule registry in L4 (`rules::checks`).
                            "select" | "ignore" => {
                                if string_list(lv).is_none() {
                                    problem(
                                        span,
                                        format!(
                                            "`lint.{lkey}` must be a list of rule ids or families"
                                        ),
                                    );
                                }
                            }
                            "severity" => {
                                for (rk, rv) in lv.as_mapping().into_iter().flatten() {
                                    let rid = rk.as_str().unwrap_or_default();
                                    let level = rv.as_str().unwrap_or_default();
                                    if level != "off" && Severity::parse(level).is_none() {
                                        problem(
                                            key_span(text, rid).or(span),
                                            format!(
                                                "severity `{level}` for `{rid}` must be error, warning, info or off"
                                            ),
                                        );
                                    }
                                }
                            }
                            "per-file-ignores" => {
                                let Some(map) = lv.as_mapping() else {
                                    problem(
                                        span,
                                        "`lint.per-file-ignores` must map file globs to lists of rule ids".to_owned(),
                                    );
                                    continue;
                                };
                                for (gk, gv) in map {
                                    let glob = gk.as_str().unwrap_or_default();
                                    let at = key_span(text, glob).or(span);
                                    if let Err(e) = file_glob(glob) {
                                        problem(at, e);
                                    }
                                    if string_list(gv).is_none() {
                                        problem(
                                            at,
                                            format!(
                                                "`lint.per-file-ignores` entry `{glob}` must be a list of rule ids or families"
                                            ),
                                        );
                                    }
                                }
                            }
                            other => problem(
                                span,
                                format!(
                                    "unknown key `lint.{other}`{} (expected {})",
                                    did_you_mean(other, &LINT_KEYS),
                                    LINT_KEYS.join(", ")
                                ),
                            ),
                        }
                    }
                }
                "chain" => {
                    for (ck, cv) in v.as_mapping().into_iter().flatten() {
                        let ckey = ck.as_str().unwrap_or_default();
                        let span = key_span(text, ckey);
                        match ckey {
                            "max_depth" if cv.as_u64().is_some_and(|d| (1..=1000).contains(&d)) => {
                            }
                            "max_depth" => problem(
                                span,
                                "`chain.max_depth` must be an integer from 1 to 1000".to_owned(),
                            ),
                            other => problem(
                                span,
                                format!(
                                    "unknown key `chain.{other}`{} (expected {})",
                                    did_you_mean(other, &CHAIN_KEYS),
                                    CHAIN_KEYS.join(", ")
                                ),
                            ),
                        }
                    }
                }
                "integrity" => {
                    for (ik, iv) in v.as_mapping().into_iter().flatten() {
                        let ikey = ik.as_str().unwrap_or_default();
                        let span = key_span(text, ikey);
                        match ikey {
                            "require_signatures" if iv.as_bool().is_some() => {}
                            "require_signatures" => problem(
                                span,
                                "`integrity.require_signatures` must be true or false".to_owned(),
                            ),
                            other => problem(
                                span,
                                format!(
                                    "unknown key `integrity.{other}`{} (expected {})",
                                    did_you_mean(other, &INTEGRITY_KEYS),
                                    INTEGRITY_KEYS.join(", ")
                                ),
                            ),
                        }
                    }
                }
                other => problem(
                    key_span(text, other),
                    format!(
                        "unknown section `{other}`{} (expected {})",
                        did_you_mean(other, &SECTIONS),
                        SECTIONS.join(", ")
                    ),
                ),
            }
        }
        // What the checks above accept, the type (and so the published schema) accepts too: a
        // file they pass that the type refuses is still reported, never taken silently.
        if cfg.problems.len() == found_before
            && let Err(e) = serde_yaml::from_value::<ConfigFile>(doc.clone())
        {
            cfg.problems.push((
                file,
                None,
                format!("the config does not fit its schema: {e}"),
            ));
        }
        let mut doc = doc;
        // Where the file really lives: a user config that is a symlink into the project is the
        // project's word.
        let lives_in = file
            .link_origin(db)
            .unwrap_or_else(|| file.space(db).kind());
        if lives_in == SpaceKind::Project
            && let Some(integrity) = doc.get_mut("integrity").and_then(|i| i.as_mapping_mut())
            && integrity
                .get("require_signatures")
                .and_then(|v| v.as_bool())
                == Some(false)
        {
            integrity.remove("require_signatures");
            cfg.lowering_ignored
                .push((file, key_span(text, "require_signatures")));
        }
        deep_merge(&mut merged, doc);
    }
    let lint = merged.get("lint");
    cfg.select = lint.and_then(|l| l.get("select")).and_then(string_list);
    cfg.ignore = lint
        .and_then(|l| l.get("ignore"))
        .and_then(string_list)
        .unwrap_or_default();
    for (rk, rv) in lint
        .and_then(|l| l.get("severity"))
        .and_then(|s| s.as_mapping())
        .into_iter()
        .flatten()
    {
        if let (Some(rid), Some(level)) = (rk.as_str(), rv.as_str()) {
            let sev = if level == "off" {
                Some(None)
            } else {
                Severity::parse(level).map(Some)
            };
            if let Some(sev) = sev {
                cfg.severity.push((rid.to_owned(), sev));
            }
        }
    }
    for (gk, gv) in lint
        .and_then(|l| l.get("per-file-ignores"))
        .and_then(|s| s.as_mapping())
        .into_iter()
        .flatten()
    {
        if let (Some(glob), Some(ids)) = (gk.as_str(), string_list(gv))
            && file_glob(glob).is_ok()
        {
            cfg.per_file_ignores.push((glob.to_owned(), ids));
        }
    }
    cfg.max_depth = merged
        .get("chain")
        .and_then(|c| c.get("max_depth"))
        .and_then(serde_yaml::Value::as_u64)
        .filter(|d| (1..=1000).contains(d))
        .map(|d| d as usize);
    cfg.require_signatures = merged
        .get("integrity")
        .and_then(|c| c.get("require_signatures"))
        .and_then(serde_yaml::Value::as_bool);
    cfg
}

/// The matcher of a `lint.per-file-ignores` glob, or why it is not one. `*` and `?` stay within
/// a folder, `**` crosses folders.
pub fn file_glob(glob: &str) -> Result<globset::GlobMatcher, String> {
    if glob.is_empty() {
        return Err("`lint.per-file-ignores` has an empty glob".to_owned());
    }
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            format!(
                "`{glob}` in `lint.per-file-ignores` is not a valid glob: {}",
                e.kind()
            )
        })
}

/// `lint.per-file-ignores` compiled: each glob's matcher and the rule ids or families it turns
/// off. Equal when the globs and lists are (its matchers follow from them).
#[derive(Clone, Debug, Default)]
pub struct FileIgnores {
    entries: Vec<FileIgnore>,
}

#[derive(Clone, Debug)]
struct FileIgnore {
    glob: String,
    matcher: globset::GlobMatcher,
    /// The glob holds a `/`: matched against `.ai/<rel>`, else against the file name.
    whole_path: bool,
    rules: Vec<String>,
}

impl PartialEq for FileIgnores {
    fn eq(&self, other: &FileIgnores) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|(a, b)| a.glob == b.glob && a.rules == b.rules)
    }
}

impl Eq for FileIgnores {}

impl FileIgnores {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The rule ids or families (or `ALL`) turned off in the file at `rel` (below its space's
    /// `.ai/`).
    pub fn for_rel(&self, rel: &str) -> Vec<&str> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        let path = format!(".ai/{rel}");
        let name = rel.rsplit('/').next().unwrap_or(rel);
        self.entries
            .iter()
            .filter(|e| {
                e.matcher
                    .is_match(if e.whole_path { path.as_str() } else { name })
            })
            .flat_map(|e| e.rules.iter().map(String::as_str))
            .collect()
    }
}

/// `lint.per-file-ignores` of the merged config, compiled once per config.
pub fn file_ignores(db: &dyn Db) -> &FileIgnores {
    file_ignores_of(db, db.workspace())
}

/// [`file_ignores`], keyed by the workspace input (see [`config_sources_of`]).
#[salsa::tracked(returns(ref))]
fn file_ignores_of(db: &dyn Db, _ws: Workspace) -> FileIgnores {
    FileIgnores {
        entries: lint_config(db)
            .per_file_ignores
            .iter()
            .filter_map(|(glob, rules)| {
                Some(FileIgnore {
                    glob: glob.clone(),
                    matcher: file_glob(glob).ok()?,
                    whole_path: glob.contains('/'),
                    rules: rules.clone(),
                })
            })
            .collect(),
    }
}

/// One setting in force: its dotted key (`lint.severity.<rule>` per rule), its value, and the
/// config file and line that set it (`None`: the default).
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub key: String,
    pub value: serde_json::Value,
    pub origin: Option<(SourceFile, Option<usize>)>,
}

/// The settings in force, each with the file that set it: the values are `lint_config`'s (the
/// same merge); the origin of each is the last file that wrote its key, where no later file
/// replaced a section above it with something that is not a mapping.
pub fn effective_settings(db: &dyn Db) -> Vec<Setting> {
    use rustc_hash::FxHashMap;
    use serde_json::json;
    let cfg = lint_config(db);
    // Dotted key → (file, line) of its last writer.
    let mut writers: FxHashMap<String, (SourceFile, Option<usize>)> = FxHashMap::default();
    for &file in config_sources(db) {
        let FileContents::Text(text) = file.contents(db) else {
            continue;
        };
        let text = text.as_str();
        let Ok(doc) = crate::parse::guard::yaml_from_str::<serde_yaml::Value>(&text) else {
            continue;
        };
        let ignored = cfg.lowering_ignored.iter().any(|(f, _)| *f == file);
        let mut stack = vec![(String::new(), "", &doc)];
        while let Some((prefix, leaf, value)) = stack.pop() {
            match value.as_mapping() {
                Some(map) => {
                    for (k, v) in map {
                        let Some(k) = k.as_str() else { continue };
                        let key = if prefix.is_empty() {
                            k.to_owned()
                        } else {
                            format!("{prefix}.{k}")
                        };
                        stack.push((key, k, v));
                    }
                }
                None if prefix.is_empty() => {}
                None => {
                    if ignored && prefix == "integrity.require_signatures" {
                        continue;
                    }
                    // A value replaces whatever was merged under its key.
                    let below = format!("{prefix}.");
                    writers.retain(|k, _| !k.starts_with(&below));
                    let line = key_span(&text, leaf).map(|sp| {
                        text.as_bytes()[..sp.start as usize]
                            .iter()
                            .filter(|&&b| b == b'\n')
                            .count()
                            + 1
                    });
                    writers.insert(prefix, (file, line));
                }
            }
        }
    }
    let set = |key: &str, value: serde_json::Value, configured: bool| Setting {
        key: key.to_owned(),
        value,
        origin: if configured {
            writers.get(key).copied()
        } else {
            None
        },
    };
    let mut out = vec![
        set("lint.select", json!(cfg.select), cfg.select.is_some()),
        set(
            "lint.ignore",
            json!(cfg.ignore),
            writers.contains_key("lint.ignore"),
        ),
    ];
    for (rule, level) in &cfg.severity {
        let name = level.map_or("off", |l| l.as_str());
        out.push(set(&format!("lint.severity.{rule}"), json!(name), true));
    }
    for (glob, ids) in &cfg.per_file_ignores {
        out.push(set(
            &format!("lint.per-file-ignores.{glob}"),
            json!(ids),
            true,
        ));
    }
    out.push(set(
        "chain.max_depth",
        json!(cfg.max_depth.unwrap_or(DEFAULT_MAX_DEPTH)),
        cfg.max_depth.is_some(),
    ));
    out.push(set(
        "integrity.require_signatures",
        json!(cfg.require_signatures.unwrap_or(true)),
        cfg.require_signatures.is_some(),
    ));
    out
}

/// `; did you mean `x`?` for a key near one of `known` (`message::nearest`), or nothing.
fn did_you_mean(name: &str, known: &[&str]) -> String {
    crate::message::did_you_mean(name, known.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A misspelt key names the key meant; a name near none names none.
    #[test]
    fn misspelt_keys_are_answered_with_the_key_meant() {
        let known = ["select", "ignore", "severity"];
        assert_eq!(did_you_mean("selct", &known), "; did you mean `select`?");
        assert_eq!(
            did_you_mean("severty", &known),
            "; did you mean `severity`?"
        );
        assert_eq!(did_you_mean("exclude", &known), "");
        assert_eq!(
            did_you_mean("max-depth", &["max_depth"]),
            "; did you mean `max_depth`?"
        );
    }

    /// The keys of an object schema (`$defs` references followed).
    fn keys_of<'s>(schema: &'s serde_json::Value, at: &'s serde_json::Value) -> Vec<&'s str> {
        let at = match at
            .get("anyOf")
            .and_then(|a| a.get(0))
            .and_then(|r| r.get("$ref"))
        {
            Some(serde_json::Value::String(r)) => {
                &schema["$defs"][r.trim_start_matches("#/$defs/")]
            }
            _ => at,
        };
        at["properties"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// The published schema (generated from `ConfigFile`) lists exactly the sections and keys
    /// the reader accepts, and refuses what it refuses.
    #[test]
    fn the_schema_and_the_reader_name_the_same_keys() {
        let schema = config_schema();
        assert_eq!(keys_of(&schema, &schema), SECTIONS);
        let props = &schema["properties"];
        assert_eq!(keys_of(&schema, &props["lint"]), LINT_KEYS);
        assert_eq!(keys_of(&schema, &props["chain"]), CHAIN_KEYS);
        assert_eq!(keys_of(&schema, &props["integrity"]), INTEGRITY_KEYS);
        assert_eq!(schema["additionalProperties"], false);
        let levels = &schema["$defs"]["Level"]["enum"];
        for level in ["error", "warning", "warn", "info", "off"] {
            assert!(
                levels.as_array().unwrap().contains(&level.into()),
                "{level}: {levels}"
            );
            assert!(level == "off" || Severity::parse(level).is_some());
        }
        let max = &schema["$defs"]["ChainSection"]["properties"]["max_depth"];
        assert_eq!(
            (max["minimum"].as_u64(), max["maximum"].as_u64()),
            (Some(1), Some(1000))
        );
    }

    #[test]
    fn the_type_reads_what_the_reader_accepts_and_refuses_what_it_refuses() {
        let fits = |text: &str| {
            let v: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
            serde_yaml::from_value::<ConfigFile>(v).is_ok()
        };
        for ok in [
            "lint:\n  select: [ALL]\n  ignore: []\n  severity: {ambiguous-item: error, x: warn, y: off}\n",
            "chain: {max_depth: 12}\nintegrity: {require_signatures: true}\n",
            "lint:\n  per-file-ignores:\n    \".ai/tools/legacy/**\": [missing-executor, integrity]\n",
            "lint: null\nchain:\n",
            "{}",
        ] {
            assert!(fits(ok), "{ok}");
        }
        for bad in [
            "lint: {selct: [a]}",
            "lint: {select: a}",
            "lint: {severity: {x: loud}}",
            "chain: {max_depth: -1}",
            "integrity: {require_signatures: maybe}",
            "rules: {}",
            "lint: 5",
            "lint: {per-file-ignores: [a]}",
            "lint: {per-file-ignores: {\"*.py\": missing-executor}}",
            "lint: {per_file_ignores: {}}",
        ] {
            assert!(!fits(bad), "{bad}");
        }
    }

    #[test]
    fn deep_merge_replaces_lists_and_merges_maps() {
        let mut base: serde_yaml::Value =
            serde_yaml::from_str("a: 1\nb: {x: 1}\nl: [1, 2]").unwrap();
        let over: serde_yaml::Value = serde_yaml::from_str("b: {y: 2}\nl: [3]").unwrap();
        deep_merge(&mut base, over);
        let want: serde_yaml::Value =
            serde_yaml::from_str("a: 1\nb: {x: 1, y: 2}\nl: [3]").unwrap();
        assert_eq!(base, want);
    }

    #[test]
    fn key_span_finds_the_line() {
        let text = "lint:\n  select: [a]\n";
        let span = key_span(text, "select").unwrap();
        assert_eq!(&text[span.range()], "select: [a]");
    }
}
