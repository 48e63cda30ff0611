//! L6 `lint --fix` and `lint --diff` (ruff's): the certain fixes (`Analysis::fixes`: a certain
//! "did you mean", the header line a script forgot, an unused suppression removed, a stale
//! lockfile refreshed) applied to the texts in memory, round after round until no fix is left
//! (at most `MAX_ROUNDS`), then written — each file replaced atomically, and only while it still
//! holds the text that was read (`files::replace`) — or shown as unified diffs.
//!
//! Only files of the project being linted are written (not the user's space, a bundle or a file
//! reached through a symlink); a fixed file that was signed keeps its old signature, which no
//! longer matches: the person reviews the change and signs it (`ryechain sign`), never this.
#![allow(
    clippy::disallowed_methods,
    reason = "the fix edge reads the clock and rewrites the files it fixes"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Context;
use crate::analysis::{Checks, LintOptions};
use crate::db::{Change, FileChange, Settings};
use crate::edges::files::replace::{
    CHANGED_AFTER, CHANGED_BEFORE, Durability, Replace, replace_all,
};
use crate::integrity::ItemKind;
use crate::load::Reloader;

/// Fix rounds before giving up on a tree whose fixes keep making fixes (ruff stops at 100; a
/// fix here never makes another of its own kind, so two rounds are the most a tree has needed).
const MAX_ROUNDS: usize = 10;

/// One file the fixes change.
#[derive(Debug)]
pub struct FileFix {
    /// As loaded (below the project's `.ai/`).
    pub path: PathBuf,
    /// As shown (relative to the project).
    pub shown: String,
    /// The text read from disk, and the text after every round's fixes.
    pub original: String,
    pub text: String,
    /// The rule of each fix applied, in order.
    pub rules: Vec<String>,
    /// The item's id and kind when it was signed (its signature no longer matches once fixed).
    pub signed: Option<(ItemKind, String)>,
}

/// What the fixes of a tree do.
#[derive(Debug, Default)]
pub struct Fixes {
    /// By path.
    pub files: Vec<FileFix>,
    /// Findings with a fix that were left alone, and why (each once).
    pub left: Vec<String>,
    /// Rounds ran out with fixes still to make.
    pub unsettled: bool,
    pub notices: Vec<String>,
}

impl Fixes {
    pub fn count(&self) -> usize {
        self.files.iter().map(|f| f.rules.len()).sum()
    }
}

/// Lockfiles are stamped with this moment.
fn now_stamp() -> String {
    let (secs, micros) = super::now();
    crate::integrity::timefmt::iso_timestamp(secs, micros)
}

/// The fixes of the tree of `path` with `settings`, made in memory: load it, lint it, apply the
/// certain fixes of every project file with findings, and again on the fixed texts, until no
/// fix is left.
pub fn plan(ctx: &Context<'_>, path: &Path, settings: Settings) -> anyhow::Result<Fixes> {
    let project = ctx.project_root(path)?;
    let ai = project.join(".ai");
    let (specs, _) = ctx.spaces(&project)?;
    let (mut host, notices, _) = ctx.host_with_links(&project, settings)?;
    let reloader = Reloader::new(ctx.sys, &specs);
    let opts = LintOptions {
        display_base: Some(project.clone()),
    };
    let stamp = now_stamp();
    let mut fixes = Fixes {
        notices,
        ..Fixes::default()
    };
    let mut by_path: BTreeMap<PathBuf, FileFix> = BTreeMap::new();
    let mut left: BTreeMap<String, String> = BTreeMap::new();
    let mut settled = false;
    for _ in 0..MAX_ROUNDS {
        let a = host.analysis();
        let parts = a.lint_parts(&opts, &|_| {}, false, Checks::Memoized);
        let mut change = Change::default();
        for lf in &parts.files {
            // Only files with a finding that may have a fix are asked for theirs.
            if !lf
                .findings
                .iter()
                .any(|f| f.fix.is_some() || &*f.rule == "stale-lockfile")
            {
                continue;
            }
            let file = lf.file;
            let at = a.path(file).to_path_buf();
            let shown = crate::analysis::display_path(&at, Some(&project));
            let found = a.fixes(file, &stamp);
            if found.is_empty() {
                continue;
            }
            let why_not = if !at.starts_with(&ai) {
                Some("it is outside the project (only the project's files are fixed)")
            } else if ctx.sys.is_symlink(&at) {
                Some("it is a symbolic link (fix the file it points to)")
            } else {
                None
            };
            if let Some(why) = why_not {
                left.entry(shown.clone())
                    .or_insert_with(|| format!("{shown} is not fixed: {why}"));
                continue;
            }
            let Some(text) = a.text(file) else { continue };
            let (new, rules) = apply(&text, found);
            if new == *text {
                continue;
            }
            let Some(spec) = reloader.buffer(&at, &new) else {
                continue;
            };
            let entry = by_path.entry(at.clone()).or_insert_with(|| {
                let rel = a.rel(file);
                let kind = ItemKind::of_rel(rel);
                let verdict = kind.map(|_| a.verify_file(file, "").verdict);
                let signed = match (kind, verdict) {
                    (Some(kind), Some(v)) if !v.is_unsigned() => {
                        item_id(kind, rel).map(|id| (kind, id))
                    }
                    _ => None,
                };
                FileFix {
                    path: at.clone(),
                    shown,
                    original: text.to_string(),
                    text: String::new(),
                    rules: Vec::new(),
                    signed,
                }
            });
            entry.text = new;
            entry.rules.extend(rules);
            change.files.push(FileChange::Write(spec));
        }
        if change.files.is_empty() {
            settled = true;
            break;
        }
        host.apply(change);
    }
    // The texts are in memory: the process ends soon, and the OS takes it back at once.
    std::mem::forget(host);
    fixes.unsettled = !settled;
    fixes.files = by_path.into_values().collect();
    fixes.left = left.into_values().collect();
    Ok(fixes)
}

/// `text` with `found` applied: in order, each fix that overlaps none applied before it (a
/// later round takes the rest), and the rule of each fix applied.
fn apply(text: &str, mut found: Vec<crate::analysis::ide::QuickFix>) -> (String, Vec<String>) {
    found.sort_by_key(|f| (f.span.start, f.span.end));
    let mut chosen: Vec<crate::analysis::ide::QuickFix> = Vec::new();
    for f in found {
        let clear = chosen.last().is_none_or(|last| {
            // Two insertions at one place, or an edit inside another, wait for the next round.
            last.span.end <= f.span.start
                && !(last.span.end == f.span.start && last.span.start == f.span.start)
        });
        if clear && text.get(f.span.range()).is_some() {
            chosen.push(f);
        }
    }
    let mut out = text.to_owned();
    for f in chosen.iter().rev() {
        out.replace_range(f.span.range(), &f.replacement);
    }
    (
        out,
        chosen
            .into_iter()
            .map(|f| f.diagnostic.rule.to_string())
            .collect(),
    )
}

/// The id `ryechain sign` takes for the item at `rel`.
fn item_id(kind: ItemKind, rel: &str) -> Option<String> {
    match kind {
        ItemKind::Tool => crate::resolve::split_tool_rel(rel).map(|(id, _)| id.to_owned()),
        _ => rel
            .strip_prefix(kind.dir())?
            .strip_suffix(".md")
            .map(|id| format!("{}:{id}", kind.name())),
    }
}

/// Write every fixed file, each only while it still holds the text read; what happened to each
/// (`Err`: left as it is, and why).
pub fn write(fixes: &Fixes) -> Vec<Result<(), String>> {
    let jobs: Vec<Result<Replace<'_>, String>> = fixes
        .files
        .iter()
        .map(|f| {
            Ok(Replace {
                path: &f.path,
                old: f.original.as_bytes(),
                new: f.text.as_bytes(),
                stamp: None,
            })
        })
        .collect();
    let (done, synced) = replace_all(jobs, &Durability::EachFile);
    let mut done: Vec<Result<(), String>> = done
        .into_iter()
        .map(|r| {
            r.map_err(|e| match e.as_str() {
                CHANGED_BEFORE | CHANGED_AFTER => {
                    "it changed since it was read; lint it again".to_owned()
                }
                _ => e,
            })
        })
        .collect();
    // A failed sync leaves the files replaced, perhaps not durable yet: said once.
    if let Some(Err(e)) = synced.into_iter().find(Result::is_err) {
        for r in done.iter_mut().filter(|r| r.is_ok()) {
            *r = Err(format!("written, but not synced to disk: {e:#}"));
        }
    }
    done
}

/// The unified diff of every fixed file, `a/` and `b/` before the path as `git diff` writes.
pub fn diff(fixes: &Fixes) -> String {
    let mut out = String::new();
    for f in &fixes.files {
        let d = similar::TextDiff::from_lines(&f.original, &f.text);
        out.push_str(
            &d.unified_diff()
                .context_radius(3)
                .header(&format!("a/{}", f.shown), &format!("b/{}", f.shown))
                .to_string(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(start: usize, end: usize, replacement: &str) -> crate::analysis::ide::QuickFix {
        crate::analysis::ide::QuickFix {
            span: crate::model::Span::new(start, end),
            replacement: replacement.to_owned(),
            title: String::new(),
            diagnostic: crate::diagnostic::Diagnostic {
                rule: "r".into(),
                severity: crate::diagnostic::Severity::Error,
                path: std::sync::Arc::new(PathBuf::from("x")),
                span: None,
                item_id: None,
                space: None,
                message: String::new(),
                help: None,
                notes: Vec::new(),
                suggestions: None,
                edit: None,
            },
        }
    }

    /// Fixes apply from the end, each only where no earlier one did: an overlapping fix and a
    /// second insertion at one place wait for the next round.
    #[test]
    fn overlapping_fixes_wait_for_the_next_round() {
        let text = "abcdef";
        let (out, rules) = apply(
            text,
            vec![fix(4, 6, "XY"), fix(0, 2, "12"), fix(1, 3, "no")],
        );
        assert_eq!(out, "12cdXY");
        assert_eq!(rules.len(), 2);
        let (out, rules) = apply(text, vec![fix(3, 3, "+"), fix(3, 3, "-")]);
        assert_eq!((out.as_str(), rules.len()), ("abc+def", 1));
        // A span past the text is left out.
        assert_eq!(apply(text, vec![fix(5, 9, "z")]).0, text);
    }

    /// A file that changed after it was read is left as it is, with the reason.
    #[test]
    fn a_file_changed_since_it_was_read_is_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.py"), dir.path().join("b.py"));
        std::fs::write(&a, "old\n").unwrap();
        std::fs::write(&b, "edited meanwhile\n").unwrap();
        let file = |path: &Path| FileFix {
            path: path.to_path_buf(),
            shown: path.display().to_string(),
            original: "old\n".to_owned(),
            text: "new\n".to_owned(),
            rules: vec!["r".to_owned()],
            signed: None,
        };
        let fixes = Fixes {
            files: vec![file(&a), file(&b)],
            ..Fixes::default()
        };
        let done = write(&fixes);
        assert_eq!(done[0], Ok(()));
        assert_eq!(
            done[1],
            Err("it changed since it was read; lint it again".to_owned())
        );
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "edited meanwhile\n");
        assert!(diff(&fixes).contains("-old\n+new\n"));
    }
}
