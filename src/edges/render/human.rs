//! The human-readable renderer: rustc/ruff-style reports with source excerpts and a summary line.

use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

use crate::diagnostic::{Excerpt, Finding, FindingNote, Severity, Summary};

/// At most this many notes are printed per finding; the rest are counted in one closing note.
const MAX_NOTES: usize = 10;

/// How to render human output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HumanOptions {
    /// Emit ANSI colour escapes (the caller decides from the terminal and `--color`).
    pub color: bool,
    /// Leave out the summary line (`lint --quiet`): only the findings.
    pub quiet: bool,
}

/// One line per finding (`path:line:col: rule message`, as ruff's concise format), then the
/// summary line unless `quiet`; the result ends with a newline.
pub fn concise(findings: &[Finding], summary: &Summary, quiet: bool) -> String {
    let mut out = String::new();
    for f in super::sorted(findings) {
        out.push_str(&format!(
            "{}:{}:{}: {} {}\n",
            f.path, f.line, f.column, f.rule, f.message
        ));
    }
    if !quiet {
        out.push_str(&summary_line(findings, summary));
        out.push('\n');
    }
    out
}

/// Render every finding followed by a summary line; the result ends with a newline.
pub fn render(findings: &[Finding], summary: &Summary, opts: &HumanOptions) -> String {
    let renderer = if opts.color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for finding in super::sorted(findings) {
        out.push_str(&render_finding(&renderer, finding));
        out.push_str("\n\n");
    }
    if !opts.quiet {
        out.push_str(&summary_line(findings, summary));
        out.push('\n');
    }
    out
}

/// One finding as a rustc-style report (no trailing newline).
fn render_finding(renderer: &Renderer, finding: &Finding) -> String {
    let title = level(finding.severity)
        .primary_title(finding.message.as_str())
        .id(&*finding.rule);
    let mut primary = Group::with_title(title);
    primary = match &finding.excerpt {
        Some(excerpt) => primary.element(
            Snippet::source(excerpt.text.as_str())
                .line_start(to_usize(excerpt.line_start.max(1)))
                .path(finding.path.as_str())
                .annotation(AnnotationKind::Primary.span(clamp_highlight(excerpt))),
        ),
        None => primary.element(
            Origin::path(finding.path.as_str())
                .line(to_usize(finding.line.max(1)))
                .char_column(to_usize(finding.column.max(1))),
        ),
    };
    if let Some(help) = &finding.help {
        primary = primary.element(Level::HELP.message(&**help));
    }
    if let Some(question) = did_you_mean(&finding.suggestions) {
        primary = primary.element(Level::HELP.message(question));
    }

    // Notes without a location stay in the primary group (`= note: ...`); located notes become
    // their own groups (`note: ...` and `--> path:line`) after it.
    let shown = &finding.notes[..finding.notes.len().min(MAX_NOTES)];
    for note in shown.iter().filter(|n| n.path.is_none()) {
        primary = primary.element(Level::NOTE.message(note.message.as_str()));
    }
    let mut groups = vec![primary];
    groups.extend(shown.iter().filter_map(located_note));
    let hidden = finding.notes.len() - shown.len();
    if hidden > 0 {
        groups.push(
            Group::with_level(Level::NOTE)
                .element(Level::NOTE.message(format!("... and {hidden} more"))),
        );
    }
    renderer.render(&groups)
}

/// "did you mean `a`?", "did you mean `a`, `b` or `c`?"; `None` without suggestions.
pub(crate) fn did_you_mean(suggestions: &[String]) -> Option<String> {
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
    let (last, init) = quoted.split_last()?;
    Some(if init.is_empty() {
        format!("did you mean {last}?")
    } else {
        format!("did you mean {} or {last}?", init.join(", "))
    })
}

/// A note that points at another file, as its own `note:` group.
fn located_note(note: &FindingNote) -> Option<Group<'_>> {
    let path = note.path.as_deref()?;
    let mut origin = Origin::path(path);
    if let Some(line) = note.line {
        origin = origin.line(to_usize(line.max(1)));
    }
    Some(Group::with_title(Level::NOTE.secondary_title(note.message.as_str())).element(origin))
}

fn level(severity: Severity) -> Level<'static> {
    match severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    }
}

/// The excerpt's highlight clamped into its text and widened to character boundaries.
fn clamp_highlight(excerpt: &Excerpt) -> Range<usize> {
    let text = excerpt.text.as_str();
    let mut end = excerpt.highlight.end.min(text.len());
    let mut start = excerpt.highlight.start.min(end);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

fn to_usize(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// `Found 3 errors and 1 warning in 2 files (41 tools checked).` or `All checks passed (...).`
///
/// Error and warning counts come from `summary`; info findings (which `Summary` does not count)
/// and the number of files with findings come from `findings`.
fn summary_line(findings: &[Finding], summary: &Summary) -> String {
    let mut line = counts_line(findings, summary);
    if summary.hidden > 0 {
        let spaces = summary.hidden_spaces.names();
        let flag = summary.shown.union(summary.hidden_spaces).names().join(",");
        line.push_str(&format!(
            " {} in {} files no {} tool uses {} not shown (`--space {flag}` shows {}).",
            plural(summary.hidden, "finding", "findings"),
            and_list(
                &spaces
                    .iter()
                    .map(|s| format!("{s}-space"))
                    .collect::<Vec<_>>()
            ),
            or_list(&summary.shown.names()),
            if summary.hidden == 1 { "is" } else { "are" },
            if summary.hidden == 1 { "it" } else { "them" },
        ));
    }
    line
}

/// `project`, `project- or user-space`, `project-, user- or system-space`.
fn or_list(spaces: &[&str]) -> String {
    match spaces.split_last() {
        None => "other".to_owned(),
        Some((last, [])) => format!("{last}-space"),
        Some((last, init)) => format!("{}- or {last}-space", init.join("-, ")),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, init)) => format!("{} and {last}", init.join(", ")),
    }
}

/// The counts part of [`summary_line`], with the spaces read.
fn counts_line(findings: &[Finding], summary: &Summary) -> String {
    let mut tools = format!("{} checked", plural(summary.tools, "tool", "tools"));
    let read = summary.read.names();
    if !read.is_empty() {
        let spaces: Vec<String> = read.iter().map(|s| (*s).to_owned()).collect();
        tools.push_str(&format!(
            " across the {} {}",
            and_list(&spaces),
            if read.len() == 1 { "space" } else { "spaces" }
        ));
    }
    let infos = findings
        .iter()
        .filter(|f| f.severity == Severity::Info)
        .count();
    let mut parts = Vec::new();
    if summary.errors > 0 {
        parts.push(plural(summary.errors, "error", "errors"));
    }
    if summary.warnings > 0 {
        parts.push(plural(summary.warnings, "warning", "warnings"));
    }
    if infos > 0 {
        parts.push(plural(infos, "info message", "info messages"));
    }
    let Some((last, init)) = parts.split_last() else {
        return format!("All checks passed ({tools}).");
    };
    let counts = if init.is_empty() {
        last.clone()
    } else {
        format!("{} and {last}", init.join(", "))
    };
    let mut paths: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    match paths.len() {
        0 => format!("Found {counts} ({tools})."),
        n => format!(
            "Found {counts} in {} ({tools}).",
            plural(n, "file", "files")
        ),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Excerpt;
    use crate::render::fixtures;

    fn plain(findings: &[Finding], summary: &Summary) -> String {
        render(
            findings,
            summary,
            &HumanOptions {
                color: false,
                quiet: false,
            },
        )
    }

    #[test]
    fn sample_report() {
        insta::assert_snapshot!(plain(&fixtures::sample(), &fixtures::sample_summary()));
    }

    #[test]
    fn empty_report() {
        let summary = Summary {
            files: 12,
            tools: 41,
            errors: 0,
            warnings: 0,
            ..Summary::default()
        };
        let out = plain(&[], &summary);
        assert_eq!(out, "All checks passed (41 tools checked).\n");
        insta::assert_snapshot!(out, @"All checks passed (41 tools checked).");
    }

    #[test]
    fn error_with_excerpt_help_and_located_note() {
        let summary = Summary {
            files: 1,
            tools: 1,
            errors: 1,
            warnings: 0,
            ..Summary::default()
        };
        insta::assert_snapshot!(plain(&[fixtures::error_with_excerpt()], &summary));
    }

    #[test]
    fn suggestions_read_as_one_question() {
        assert_eq!(did_you_mean(&[]), None);
        let one = ["a/b".to_owned()];
        assert_eq!(did_you_mean(&one).as_deref(), Some("did you mean `a/b`?"));
        let three = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        assert_eq!(
            did_you_mean(&three).as_deref(),
            Some("did you mean `a`, `b` or `c`?")
        );
        let out = plain(&[fixtures::error_with_excerpt()], &Summary::default());
        assert!(
            out.contains("= help: did you mean `rye/runtimes/python`?"),
            "{out}"
        );
    }

    #[test]
    fn warning_without_excerpt_prints_location_only() {
        let summary = Summary {
            files: 1,
            tools: 2,
            errors: 0,
            warnings: 1,
            ..Summary::default()
        };
        let out = plain(&[fixtures::warning_without_excerpt()], &summary);
        assert!(out.contains("--> .ai/tools/my tools/list.py:1:1"), "{out}");
        insta::assert_snapshot!(out);
    }

    #[test]
    fn multi_line_span() {
        let summary = Summary {
            files: 1,
            tools: 1,
            errors: 0,
            warnings: 0,
            ..Summary::default()
        };
        insta::assert_snapshot!(plain(&[fixtures::multi_line_span()], &summary));
    }

    #[test]
    fn non_ascii_line() {
        let summary = Summary {
            files: 1,
            tools: 1,
            errors: 1,
            warnings: 0,
            ..Summary::default()
        };
        insta::assert_snapshot!(plain(&[fixtures::non_ascii_line()], &summary));
    }

    #[test]
    fn long_note_lists_are_cut_after_ten() {
        let mut finding = fixtures::warning_without_excerpt();
        finding.notes = (1..=13)
            .map(|i| FindingNote {
                message: format!("cycle member {i}"),
                path: None,
                line: None,
            })
            .collect();
        let out = plain(
            &[finding],
            &Summary {
                files: 1,
                tools: 13,
                errors: 0,
                warnings: 1,
                ..Summary::default()
            },
        );
        assert!(out.contains("note: cycle member 10"), "{out}");
        assert!(!out.contains("cycle member 11"), "{out}");
        assert!(out.contains("= note: ... and 3 more"), "{out}");
    }

    #[test]
    fn plain_output_has_no_ansi_escapes() {
        let out = plain(&fixtures::sample(), &fixtures::sample_summary());
        assert!(!out.contains('\u{1b}'));
    }

    #[test]
    fn colored_output_has_ansi_escapes() {
        let out = render(
            &fixtures::sample(),
            &fixtures::sample_summary(),
            &HumanOptions {
                color: true,
                quiet: false,
            },
        );
        assert!(out.contains('\u{1b}'));
    }

    #[test]
    fn broken_positions_do_not_panic() {
        let mut finding = fixtures::non_ascii_line();
        finding.line = u32::MAX;
        finding.column = 0;
        let mut finding_without_excerpt = finding.clone();
        finding_without_excerpt.excerpt = None;
        let mut excerpts = Vec::new();
        let text = "é日\n".to_owned();
        for highlight in [
            0..0,
            1..2,
            Range { start: 2, end: 1 },
            3..99,
            99..200,
            0..usize::MAX,
            usize::MAX..usize::MAX,
        ] {
            excerpts.push(Excerpt {
                line_start: u32::MAX,
                text: text.clone(),
                highlight,
            });
        }
        excerpts.push(Excerpt {
            line_start: 0,
            text: String::new(),
            highlight: 5..9,
        });
        let mut findings = vec![finding_without_excerpt];
        for excerpt in excerpts {
            let mut f = finding.clone();
            f.excerpt = Some(excerpt);
            findings.push(f);
        }
        let out = plain(&findings, &Summary::default());
        assert!(out.ends_with("(0 tools checked).\n"), "{out}");
        assert!(out.contains("café.py:4294967295:1"), "{out}");
    }

    #[test]
    fn clamp_widens_to_char_boundaries() {
        let excerpt = Excerpt {
            line_start: 1,
            text: "aé日".to_owned(),
            highlight: 2..4,
        };
        assert_eq!(clamp_highlight(&excerpt), 1..6);
        let excerpt = Excerpt {
            line_start: 1,
            text: "ab".to_owned(),
            highlight: Range { start: 7, end: 3 },
        };
        assert_eq!(clamp_highlight(&excerpt), 2..2);
    }

    #[test]
    fn summary_line_names_the_spaces_read_and_what_it_left_out() {
        use crate::model::{SpaceKind, SpaceSet};
        let summary = Summary {
            tools: 22,
            errors: 1,
            read: SpaceSet::ALL,
            shown: SpaceSet::PROJECT,
            hidden: 2,
            hidden_spaces: SpaceSet::of(SpaceKind::User),
            ..Summary::default()
        };
        assert_eq!(
            summary_line(&[], &summary),
            "Found 1 error (22 tools checked across the project, user and system spaces). \
             2 findings in user-space files no project-space tool uses are not shown \
             (`--space project,user` shows them)."
        );
        let one = Summary {
            read: SpaceSet::PROJECT.with(SpaceKind::System),
            shown: SpaceSet::of(SpaceKind::User).with(SpaceKind::System),
            hidden: 1,
            hidden_spaces: SpaceSet::PROJECT,
            ..summary
        };
        assert_eq!(
            summary_line(&[], &one),
            "Found 1 error (22 tools checked across the project and system spaces). \
             1 finding in project-space files no user- or system-space tool uses is not shown \
             (`--space project,user,system` shows it)."
        );
    }

    #[test]
    fn summary_line_counts() {
        let findings = fixtures::sample();
        let s = |errors, warnings| {
            summary_line(
                &findings,
                &Summary {
                    files: 9,
                    tools: 1,
                    errors,
                    warnings,
                    ..Summary::default()
                },
            )
        };
        assert_eq!(
            s(3, 1),
            "Found 3 errors, 1 warning and 1 info message in 3 files (1 tool checked)."
        );
        assert_eq!(
            s(1, 0),
            "Found 1 error and 1 info message in 3 files (1 tool checked)."
        );
        let none = Summary {
            files: 2,
            tools: 41,
            errors: 3,
            warnings: 1,
            ..Summary::default()
        };
        assert_eq!(
            summary_line(&[], &none),
            "Found 3 errors and 1 warning (41 tools checked)."
        );
    }
}
