//! L3 `.ai/config/ryechain.yaml`: rule selection, severities and the chain length limit, deep-merged
//! system → user → project with the same `deep_merge` as CONFIG_RESOLVE (§7.4: mappings merge
//! recursively, every other value is replaced).

use crate::db::{Db, FileContents, SourceFile, Workspace};
use crate::diagnostic::Severity;
use crate::model::{SpaceKind, Span};

/// Config file locations relative to a space's `.ai/`.
pub use crate::place::CONFIG_RELS;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LintConfig {
    /// Rule ids or families to run; `None` = all.
    pub select: Option<Vec<String>>,
    pub ignore: Vec<String>,
    /// Per-rule severity; `None` turns the rule off.
    pub severity: Vec<(String, Option<Severity>)>,
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
                            other => problem(
                                span,
                                format!(
                                    "unknown key `lint.{other}`{} (expected select, ignore, severity)",
                                    did_you_mean(other, &["select", "ignore", "severity"])
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
                                    "unknown key `chain.{other}`{} (expected max_depth)",
                                    did_you_mean(other, &["max_depth"])
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
                                    "unknown key `integrity.{other}`{} (expected require_signatures)",
                                    did_you_mean(other, &["require_signatures"])
                                ),
                            ),
                        }
                    }
                }
                other => problem(
                    key_span(text, other),
                    format!(
                        "unknown section `{other}`{} (expected lint, chain, integrity)",
                        did_you_mean(other, &["lint", "chain", "integrity"])
                    ),
                ),
            }
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
