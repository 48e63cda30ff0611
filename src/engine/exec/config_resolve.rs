//! L5 CONFIG_RESOLVE (§7): the config file a tool declares (`config_resolve: {path, mode}`),
//! found at `.ai/config/<path>` of every space in the database (asked for lazily), deep-merged or
//! first-matched, signature-checked ("warn if unsigned, fail loudly if tampered") and returned as
//! the JSON value the caller injects as `parameters["resolved_config"]`.
//!
//! Decisions on the open points of §7.4 (each pinned by a test in `tests/exec_anchor_config.rs`):
//! - the default mode is `deep_merge`;
//! - a file missing from every space resolves to `{}` without an error;
//! - every system bundle takes part, in bundle order (the lowest-precedence bundle merges first,
//!   so the first bundle beats later ones, and user and project beat every bundle);
//! - deep merge merges mappings key by key, recursively; any other value — lists included —
//!   replaces the lower one (`config::deep_merge`);
//! - formats by extension: `.yaml`/`.yml` (YAML) and `.json` (JSON); any other extension, or none,
//!   is a declaration error (the path must name the file exactly);
//! - a path that is absolute, contains `..`/`.`/empty segments, a backslash or a NUL is refused;
//! - an empty document counts as an empty mapping; a document that does not parse or is not a
//!   mapping is an error naming the file;
//! - signatures: the embedded bundle is trusted by construction; a file without a valid signature
//!   line is a warning (returned as data); a tampered file, a bad signature or an untrusted key
//!   fails with the integrity error text. JSON cannot carry a signature line (§15.28), so JSON
//!   config files always warn;
//! - the list form `[spec, …]` resolves to `{path: resolved, …}`;
//! - a caller-supplied `resolved_config` parameter is overwritten (`inject`).

use std::path::PathBuf;

use serde_json::Value as J;

use super::facts::Ask;
use crate::analysis::Analysis;
use crate::db::SourceFile;
use crate::integrity::extension_of;
use crate::model::Value;

/// The parameter the resolved config is injected as (§7.3).
pub const RESOLVED_CONFIG_KEY: &str = "resolved_config";

/// Where config files live, relative to a space's `.ai/`.
pub const CONFIG_DIR: &str = "config";

/// How the tiers combine (§7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigMode {
    /// Every space's file, system → user → project, merged (project wins).
    DeepMerge,
    /// The first existing file, project → user → system bundles.
    FirstMatch,
}

/// One declared config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigSpec {
    /// Relative to `.ai/config/`.
    pub path: String,
    pub mode: ConfigMode,
}

/// A `config_resolve` declaration: one spec, or the list form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigDecl {
    One(ConfigSpec),
    List(Vec<ConfigSpec>),
}

/// The result of resolving a declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedConfig {
    /// A JSON object (`{}` when no file exists).
    pub value: J,
    /// The files that took part, in merge order (lowest precedence first).
    pub sources: Vec<PathBuf>,
    /// Unsigned files, in words.
    pub warnings: Vec<String>,
}

/// Why a path may not name a config file, or `None` when it may.
fn path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("is empty");
    }
    if path.starts_with('/') || path.get(1..2) == Some(":") {
        return Some("is absolute");
    }
    if path.contains('\\') {
        return Some("contains a backslash");
    }
    if path.contains('\0') {
        return Some("contains a NUL byte");
    }
    for seg in path.split('/') {
        match seg {
            "" => return Some("has an empty segment"),
            ".." => return Some("contains `..`"),
            "." => return Some("contains `.`"),
            _ => {}
        }
    }
    None
}

/// The file format, by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Yaml,
    Json,
}

fn format_of(path: &str) -> Option<Format> {
    match extension_of(path) {
        ".yaml" | ".yml" => Some(Format::Yaml),
        ".json" => Some(Format::Json),
        _ => None,
    }
}

fn spec_of(v: &Value) -> Result<ConfigSpec, String> {
    let path = match v {
        Value::Str(s) => return checked(s, ConfigMode::DeepMerge),
        Value::Map(_) => v.get("path").map(|p| &p.value),
        other => {
            return Err(format!(
                "config_resolve must be a mapping with `path` and `mode` (or a list of them), not {}",
                other.type_name()
            ));
        }
    };
    let path = match path {
        Some(Value::Str(s)) => s,
        Some(other) => {
            return Err(format!(
                "config_resolve `path` must be a string, not {}",
                other.type_name()
            ));
        }
        None => return Err("config_resolve has no `path`".to_owned()),
    };
    let mode = match v.get("mode").map(|m| &m.value) {
        None | Some(Value::Null) => ConfigMode::DeepMerge,
        Some(Value::Str(m)) if m == "deep_merge" => ConfigMode::DeepMerge,
        Some(Value::Str(m)) if m == "first_match" => ConfigMode::FirstMatch,
        Some(other) => {
            return Err(format!(
                "config_resolve mode {} is not `deep_merge` or `first_match`",
                other.to_json()
            ));
        }
    };
    checked(path, mode)
}

fn checked(path: &str, mode: ConfigMode) -> Result<ConfigSpec, String> {
    if let Some(why) = path_problem(path) {
        return Err(format!(
            "config_resolve path `{path}` {why}; it must be a relative path inside .ai/config/"
        ));
    }
    if format_of(path).is_none() {
        return Err(format!(
            "config_resolve path `{path}` must end in .yaml, .yml or .json"
        ));
    }
    Ok(ConfigSpec {
        path: path.to_owned(),
        mode,
    })
}

/// Read a declaration (a mapping, a bare path string, or a list of either).
pub fn parse_decl(v: &Value) -> Result<ConfigDecl, String> {
    match v {
        Value::List(items) => items
            .iter()
            .map(|i| spec_of(&i.value))
            .collect::<Result<Vec<_>, _>>()
            .map(ConfigDecl::List),
        other => spec_of(other).map(ConfigDecl::One),
    }
}

/// "Warn if unsigned, fail loudly if tampered."
fn check_signature(
    a: Analysis<'_>,
    file: SourceFile,
    text: &str,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    let path = a.path(file).display().to_string();
    let Some(verdict) = a.verify_as_tool(file, text) else {
        return Ok(());
    };
    if verdict.passed() {
        Ok(())
    } else if verdict.is_unsigned() {
        warnings.push(format!("Unsigned config file: {path}"));
        Ok(())
    } else {
        Err(verdict
            .error_text(&path)
            .unwrap_or_else(|| format!("Integrity failed: {path}")))
    }
}

/// Read one config file into a YAML value (a mapping).
fn load(
    a: Analysis<'_>,
    file: SourceFile,
    format: Format,
    warnings: &mut Vec<String>,
) -> Result<serde_yaml::Value, String> {
    let path = a.path(file).display().to_string();
    let text = a
        .contents(file)
        .map_err(|why| format!("Config file {path}: {why}"))?;
    let text: &str = &text;
    check_signature(a, file, text, warnings)?;
    let doc: serde_yaml::Value = match format {
        Format::Yaml => crate::parse::guard::yaml_from_str(text)
            .map_err(|e| format!("Config file {path} is not valid YAML: {e}"))?,
        Format::Json => {
            let j: J = serde_json::from_str(text)
                .map_err(|e| format!("Config file {path} is not valid JSON: {e}"))?;
            serde_yaml::to_value(j).map_err(|e| format!("Config file {path}: {e}"))?
        }
    };
    match doc {
        serde_yaml::Value::Null => Ok(serde_yaml::Value::Mapping(Default::default())),
        m @ serde_yaml::Value::Mapping(_) => {
            // Keys must be expressible in JSON (the value reaches the tool as JSON).
            serde_json::to_value(&m)
                .map_err(|e| format!("Config file {path} cannot be passed on as JSON: {e}"))?;
            Ok(m)
        }
        other => Err(format!(
            "Config file {path} must hold a mapping, not {}",
            yaml_type(&other)
        )),
    }
}

fn yaml_type(v: &serde_yaml::Value) -> &'static str {
    match v {
        serde_yaml::Value::Null => "null",
        serde_yaml::Value::Bool(_) => "a boolean",
        serde_yaml::Value::Number(_) => "a number",
        serde_yaml::Value::String(_) => "a string",
        serde_yaml::Value::Sequence(_) => "a list",
        serde_yaml::Value::Mapping(_) => "a mapping",
        serde_yaml::Value::Tagged(_) => "a tagged value",
    }
}

/// Resolve one spec. `None` while `.ai/config/<path>` of every space is not loaded yet.
#[cfg(any(test, feature = "testing"))]
pub fn resolve_spec(
    a: Analysis<'_>,
    spec: &ConfigSpec,
    ask: &Ask<'_>,
) -> Option<Result<ResolvedConfig, String>> {
    let rel = format!("{CONFIG_DIR}/{}", spec.path);
    if !ask.space_file_loaded(&rel) {
        return None;
    }
    Some(resolve_loaded(a, spec, &rel))
}

fn resolve_loaded(a: Analysis<'_>, spec: &ConfigSpec, rel: &str) -> Result<ResolvedConfig, String> {
    let format = format_of(&spec.path).unwrap_or(Format::Yaml);
    let found = a.files_at(rel);
    let files: Vec<SourceFile> = match spec.mode {
        // Search order reversed: the last bundle first … the first bundle, user, project.
        ConfigMode::DeepMerge => found.into_iter().rev().collect(),
        ConfigMode::FirstMatch => found.into_iter().take(1).collect(),
    };
    let mut merged = serde_yaml::Value::Mapping(Default::default());
    let mut warnings = Vec::new();
    let mut sources = Vec::new();
    for file in files {
        let doc = load(a, file, format, &mut warnings)?;
        crate::config::deep_merge(&mut merged, doc);
        sources.push(a.path(file).to_path_buf());
    }
    let value = serde_json::to_value(&merged)
        .map_err(|e| format!("Config `{}` cannot be passed on as JSON: {e}", spec.path))?;
    Ok(ResolvedConfig {
        value,
        sources,
        warnings,
    })
}

/// Resolve a tool's `config_resolve` declaration (the metadata value). `None` while config files
/// are not loaded yet (`ask.needs()` lists every one at once); `Some(Err)` for a bad declaration
/// or a bad, unreadable or tampered file.
pub fn resolve_config(
    a: Analysis<'_>,
    decl: &Value,
    ask: &Ask<'_>,
) -> Option<Result<ResolvedConfig, String>> {
    let decl = match parse_decl(decl) {
        Ok(d) => d,
        Err(e) => return Some(Err(e)),
    };
    let specs: Vec<&ConfigSpec> = match &decl {
        ConfigDecl::One(s) => vec![s],
        ConfigDecl::List(l) => l.iter().collect(),
    };
    // Ask about every file before stopping, so the edge answers them in one round.
    let loaded: Vec<bool> = specs
        .iter()
        .map(|s| ask.space_file_loaded(&format!("{CONFIG_DIR}/{}", s.path)))
        .collect();
    if loaded.contains(&false) {
        return None;
    }
    let mut results = Vec::with_capacity(specs.len());
    for s in &specs {
        match resolve_loaded(a, s, &format!("{CONFIG_DIR}/{}", s.path)) {
            Ok(r) => results.push((s.path.clone(), r)),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(Ok(match decl {
        ConfigDecl::One(_) => results
            .pop()
            .map(|(_, r)| r)
            .unwrap_or_else(|| ResolvedConfig {
                value: J::Object(Default::default()),
                sources: Vec::new(),
                warnings: Vec::new(),
            }),
        ConfigDecl::List(_) => {
            let mut value = serde_json::Map::new();
            let mut sources = Vec::new();
            let mut warnings = Vec::new();
            for (path, r) in results {
                value.insert(path, r.value);
                sources.extend(r.sources);
                warnings.extend(r.warnings);
            }
            ResolvedConfig {
                value: J::Object(value),
                sources,
                warnings,
            }
        }
    }))
}

/// Put the resolved config into the parameters as `resolved_config`, replacing any value the
/// caller supplied (§7.4: the resolved config is authoritative).
pub fn inject(params: &mut serde_json::Map<String, J>, resolved: &ResolvedConfig) {
    params.insert(RESOLVED_CONFIG_KEY.to_owned(), resolved.value.clone());
}
