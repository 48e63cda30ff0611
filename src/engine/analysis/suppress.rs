//! L5 suppressions: what a file's suppression comments (`parse::suppress`) and the config's
//! `lint.per-file-ignores` take out of a lint, and the comments that take nothing out
//! (`unused-suppression`). Applied where rule selection and severities are, to one file's
//! findings at a time (its own text and the config decide), so the lint cache, `--watch` and the
//! editor, which keep findings per file, keep them suppressed the same way.
//!
//! Graph-wide findings (executor cycles) are suppressed by the comments of the file they are
//! reported at (`suppress_graph`); whether a comment naming such a rule is used is told from
//! the graph's findings at that file (the graph query, asked only for a file whose comments name
//! a graph-wide rule).

use std::sync::Arc;

use super::{INTERNAL_ERROR, effective, effective_severity};
use crate::db::{RootDb, SourceFile};
use crate::diagnostic::{Diagnostic, Edit, LineIndex};
use crate::model::Span;
use crate::parse::suppress::{CommentSyntax, Directive, DirectiveProblem, directives};
use crate::rules::{Check, Rule, RuleSet, Scope, Site, of_kind, rule_set};

/// The id of the rule that reports suppressions that suppress nothing.
pub const UNUSED_SUPPRESSION: &str = "unused-suppression";

/// Whether `token` of a rule list (an id, a family or `ALL`) names the rule `id`.
fn names(set: &RuleSet, token: &str, id: &str) -> bool {
    token == "ALL" || token == id || set.get(id).is_some_and(|r| r.family == token)
}

/// The rule ids or families `lint.per-file-ignores` turns off in `file`.
fn ignored_in(db: &RootDb, file: SourceFile) -> Vec<&str> {
    let ignores = crate::config::file_ignores(db);
    if ignores.is_empty() {
        return Vec::new();
    }
    ignores.for_rel(file.rel(db))
}

/// A file's suppression comments and the index of its lines (`None`: no text, or none).
struct Comments {
    list: Vec<Directive>,
    index: LineIndex,
    text: Arc<str>,
}

impl Comments {
    fn of(db: &RootDb, file: SourceFile) -> Option<Comments> {
        let text = file.contents(db).text()?;
        let list = directives(&text, CommentSyntax::of(file.rel(db)));
        if list.is_empty() {
            return None;
        }
        let index = LineIndex::new(&text);
        Some(Comments {
            list,
            index,
            text: Arc::from(text.as_ref()),
        })
    }

    /// The 1-based line a finding starts on (line 1 without a position).
    fn line_of(&self, span: Option<Span>) -> u32 {
        self.index
            .line_col(&self.text, span.map_or(0, |s| s.start))
            .0
    }

    /// The comments on `line` (they are in line order), with their indices.
    fn on_line(&self, line: u32) -> impl Iterator<Item = (usize, &Directive)> {
        let from = self.list.partition_point(|d| d.line < line);
        self.list[from..]
            .iter()
            .take_while(move |d| d.line == line)
            .enumerate()
            .map(move |(i, d)| (from + i, d))
    }
}

/// `file`'s findings (its own checks' diagnostics, rules selected and severities applied) with
/// those `lint.per-file-ignores` and its suppression comments take out; with `report_unused`,
/// plus the `unused-suppression` findings of its comments. Internal errors are never suppressed.
pub fn suppress(
    db: &RootDb,
    file: SourceFile,
    mut diags: Vec<Diagnostic>,
    report_unused: bool,
) -> Vec<Diagnostic> {
    let set = rule_set(db);
    let ignored = ignored_in(db, file);
    let off_here = |id: &str| ignored.iter().any(|t| names(set, t, id));
    if !ignored.is_empty() {
        diags.retain(|d| d.rule.as_ref() == INTERNAL_ERROR || !off_here(&d.rule));
    }
    let unused_rules: Vec<&Rule> = if report_unused && !off_here(UNUSED_SUPPRESSION) {
        of_kind(db, |c| matches!(c, Check::UnusedSuppression { .. }))
            .filter(|r| effective_severity(db, r).is_some())
            .collect()
    } else {
        Vec::new()
    };
    if diags.is_empty() && unused_rules.is_empty() {
        return diags;
    }
    let Some(comments) = Comments::of(db, file) else {
        return diags;
    };
    let path = file.path(db);
    // Which id of which comment took a finding out.
    let mut used: Vec<Vec<bool>> = comments
        .list
        .iter()
        .map(|d| vec![false; d.ids.len()])
        .collect();
    diags.retain(|d| {
        if d.rule.as_ref() == INTERNAL_ERROR || d.path != *path {
            return true;
        }
        let line = comments.line_of(d.span);
        for (i, c) in comments.on_line(line) {
            if let Some(j) = c.ids.iter().position(|(id, _)| *id == *d.rule) {
                used[i][j] = true;
                return false;
            }
        }
        true
    });
    if unused_rules.is_empty() {
        return diags;
    }
    // The graph-wide findings reported at this file, by line (asked only when a comment names a
    // graph-wide rule).
    let names_graph_rule = comments.list.iter().any(|c| {
        c.ids
            .iter()
            .any(|(id, _)| set.get(id).is_some_and(|r| r.scope == Scope::Graph))
    });
    let graph_here: Vec<(u32, Arc<str>)> = if names_graph_rule {
        super::checked_graph_diagnostics_unsuppressed(db)
            .into_iter()
            .filter(|d| d.path == *path && !off_here(&d.rule))
            .map(|d| (comments.line_of(d.span), d.rule))
            .collect()
    } else {
        Vec::new()
    };
    let site = |span: Span| Site {
        path,
        span: Some(span),
        item_id: crate::resolve::tool_id_ref(db, file),
        space: Some(file.space(db)),
    };
    for (i, c) in comments.list.iter().enumerate() {
        let mut reasons: Vec<(String, Option<&str>)> = Vec::new();
        let mut first_span = None;
        let mut removable: Vec<usize> = Vec::new();
        let mut misspelt = false;
        if let Some(problem) = c.problem {
            reasons.push((problem.text().to_owned(), Some("unreadable")));
            // An empty list is removed; a comment whose ids cannot be read is left to its author.
            misspelt |= problem != DirectiveProblem::EmptyList;
        }
        for (j, (id, span)) in c.ids.iter().enumerate() {
            if used[i][j] {
                continue;
            }
            let reason = if c.ids[..j].iter().any(|(other, _)| other == id) {
                Some((format!("`{id}` is named twice"), None))
            } else {
                match set.get(id) {
                    None => {
                        misspelt = true;
                        Some((
                            format!(
                                "`{id}` is not a rule id{}",
                                crate::rules::did_you_mean_rule(set, id, false)
                            ),
                            Some("unknown"),
                        ))
                    }
                    Some(rule) if rule.id.as_ref() == UNUSED_SUPPRESSION => Some((
                        format!("`{id}` findings are not suppressed by a comment"),
                        Some("not_by_comment"),
                    )),
                    // A rule that did not run here is not judged.
                    Some(rule) if effective_severity(db, rule).is_none() || off_here(id) => None,
                    Some(rule)
                        if rule.scope == Scope::Graph
                            && graph_here
                                .iter()
                                .any(|(l, r)| *l == c.line && r.as_ref() == id.as_str()) =>
                    {
                        None
                    }
                    Some(_) => Some((format!("no `{id}` finding starts on this line"), None)),
                }
            };
            if let Some(reason) = reason {
                first_span.get_or_insert(*span);
                removable.push(j);
                reasons.push(reason);
            }
        }
        if reasons.is_empty() {
            continue;
        }
        let span = first_span.unwrap_or(c.comment);
        let variant = reasons.iter().find_map(|(_, v)| *v);
        let problem = reasons
            .iter()
            .map(|(r, _)| r.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let shown: Vec<&str> = removable.iter().map(|&j| c.ids[j].0.as_str()).collect();
        let edit = (!misspelt).then(|| removal(&comments.text, c, &removable));
        for rule in &unused_rules {
            let mut d = rule.emit(
                site(span),
                &[("rule", shown.join(", ")), ("problem", problem.clone())],
                variant,
                Vec::new(),
            );
            d.edit = edit.clone().flatten().map(Box::new);
            diags.extend(effective(db, d));
        }
    }
    diags
}

/// The edit that takes the ids at `drop` out of comment `c` (the whole comment, and its line
/// when it stands alone, when none would be left).
fn removal(text: &str, c: &Directive, drop: &[usize]) -> Option<Edit> {
    let keep: Vec<&str> = c
        .ids
        .iter()
        .enumerate()
        .filter(|(j, _)| !drop.contains(j))
        .map(|(_, (id, _))| id.as_str())
        .collect();
    if keep.is_empty() {
        let (start, end) = if c.own_line {
            // The line and its line break.
            let start = text[..c.comment.start as usize]
                .rfind(['\n', '\r'])
                .map_or(0, |i| i + 1);
            let rest = &text[c.comment.end as usize..];
            let eol = rest.find(['\n', '\r']).unwrap_or(rest.len());
            let brk = if rest[eol..].starts_with("\r\n") {
                2
            } else {
                usize::from(eol < rest.len())
            };
            (start, c.comment.end as usize + eol + brk)
        } else {
            (c.removal as usize, c.comment.end as usize)
        };
        return Some(Edit {
            span: Span::new(start, end),
            replacement: String::new(),
            title: "Remove the unused suppression comment".to_owned(),
            line_after: false,
        });
    }
    let first = c.ids.first()?.1.start as usize;
    let last = c.ids.last()?.1.end as usize;
    Some(Edit {
        span: Span::new(first, last),
        replacement: keep.join(", "),
        title: format!(
            "Remove {} from the suppression comment",
            drop.iter()
                .map(|&j| format!("`{}`", c.ids[j].0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        line_after: false,
    })
}

/// Graph-wide findings (rules selected, severities applied) without those the config's
/// `lint.per-file-ignores` or the comments of the file each is reported at take out.
pub fn suppress_graph(db: &RootDb, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out = Vec::with_capacity(diags.len());
    let mut by_path: Vec<(Arc<std::path::PathBuf>, Option<SourceFile>)> = Vec::new();
    for d in diags {
        let file = match by_path.iter().find(|(p, _)| *p == d.path) {
            Some((_, f)) => *f,
            None => {
                let f = db.file_at(&d.path);
                by_path.push((d.path.clone(), f));
                f
            }
        };
        match file {
            Some(f) => out.extend(suppress(db, f, vec![d], false)),
            None => out.push(d),
        }
    }
    out
}
