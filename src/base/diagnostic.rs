//! L0 vocabulary for findings: severities, diagnostics with spans (core side) and located findings
//! with line/column and source excerpts (what the renderers at the edge print).

use std::path::PathBuf;
use std::sync::Arc;

use crate::model::{Space, Span};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

/// A secondary location: "the runtime is defined here", "cycle member", ...
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Note {
    pub message: String,
    pub path: Option<Arc<PathBuf>>,
    pub span: Option<Span>,
}

/// Replacements offered for the text `original` inside a diagnostic's primary span ("did you
/// mean"), best first. `certain` when the first may be applied as a fix without asking.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Suggestions {
    pub original: String,
    pub replacements: Vec<String>,
    pub certain: bool,
}

/// A finding as core queries return it: byte spans, no line numbers (so that queries do not depend
/// on whole-file text and body edits can backdate).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub rule: Arc<str>,
    pub severity: Severity,
    pub path: Arc<PathBuf>,
    pub span: Option<Span>,
    pub item_id: Option<String>,
    pub space: Option<Space>,
    pub message: String,
    /// Shared between the diagnostics of a rule when its help has no placeholders.
    pub help: Option<Arc<str>>,
    pub notes: Vec<Note>,
    pub suggestions: Option<Suggestions>,
    /// An edit that fixes the finding for certain (a quick fix, `Finding::fix`), when it is not
    /// a certain suggestion.
    pub edit: Option<Box<Edit>>,
}

/// An edit of the finding's file, with a title saying what it does: `span` replaced by
/// `replacement`, or, with `line_after`, `replacement` inserted as a line of its own after the
/// line `span` ends on — located in the text when the edit is applied (queries read no line
/// structure), and offered only where the rest of that line is blank or a comment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
    pub title: String,
    pub line_after: bool,
}

/// Byte offset → 1-based line and column (columns count characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<u32>,
}

/// The offset after each line terminator of `text`: `\n`, `\r\n` or a lone `\r` (as Python's
/// universal newlines and the language server protocol count lines), in order.
pub fn line_ends(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'\n', b'\r', bytes)
        .filter(move |&i| bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n'))
        .map(|i| i + 1)
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0u32];
        starts.extend(line_ends(text).map(|i| u32::try_from(i).unwrap_or(u32::MAX)));
        LineIndex { starts }
    }
    /// 1-based (line, column) of `offset`; offsets past the end clamp to the last position.
    pub fn line_col(&self, text: &str, offset: u32) -> (u32, u32) {
        let offset = offset.min(u32::try_from(text.len()).unwrap_or(u32::MAX));
        let line = match self.starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.starts[line] as usize;
        let mut end = offset as usize;
        while end > start && !text.is_char_boundary(end) {
            end -= 1;
        }
        let col = text[start..end].chars().count() + 1;
        (line as u32 + 1, col as u32)
    }
    /// Byte range of 1-based `line` without its line terminator.
    pub fn line_range(&self, text: &str, line: u32) -> std::ops::Range<usize> {
        let i = (line.max(1) - 1) as usize;
        let start = self.starts.get(i).map_or(text.len(), |s| *s as usize);
        let mut end = self.starts.get(i + 1).map_or(text.len(), |s| *s as usize);
        let bytes = text.as_bytes();
        while end > start && matches!(bytes[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        start..end
    }
}

/// A diagnostic resolved for output: line/column, display path, and the source it points at.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    pub rule: Arc<str>,
    pub severity: Severity,
    /// Path as shown to the user (relative to the working directory when below it).
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub item_id: Option<String>,
    /// Space label (`project`, `user`, `system:<bundle>`), shared between findings.
    pub space: Option<Arc<str>>,
    pub message: String,
    pub help: Option<Arc<str>>,
    pub notes: Vec<FindingNote>,
    /// The source lines the primary span covers (plus the span inside them), when readable text.
    pub excerpt: Option<Excerpt>,
    /// Text offered instead of what was written ("did you mean"), best first.
    pub suggestions: Vec<String>,
    /// An edit safe to apply without asking (a certain suggestion located in the text).
    pub fix: Option<Box<Fix>>,
}

/// Replace the text between two 1-based positions (end exclusive) with `replacement`; `title`
/// says what that does.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fix {
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub replacement: String,
    pub title: String,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FindingNote {
    pub message: String,
    pub path: Option<String>,
    pub line: Option<u32>,
}

/// Source text starting at `line_start` and the byte range inside `text` to underline.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Excerpt {
    pub line_start: u32,
    pub text: String,
    pub highlight: std::ops::Range<usize>,
}

/// Totals reported with every lint run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files loaded from every space (a directory given as two spaces counts twice). The human
    /// summary line counts something else: the distinct paths that have findings.
    pub files: usize,
    /// Tool files checked, per space.
    pub tools: usize,
    pub errors: usize,
    pub warnings: usize,
    /// The spaces the lint read (empty: not told, and the summary line does not say).
    pub read: crate::model::SpaceSet,
    /// The spaces reported whole (`lint --space`).
    pub shown: crate::model::SpaceSet,
    /// Findings left out because their files are in spaces not asked for and no tool of an
    /// asked-for space uses them (`analysis::scope`), and those spaces.
    pub hidden: usize,
    pub hidden_spaces: crate::model::SpaceSet,
}

/// Deterministic output order: path, line, rule (CONVENTIONS habit 12), then column and message.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(compare_findings);
}

/// The order of [`sort_findings`], for sorting references.
pub fn compare_findings(a: &Finding, b: &Finding) -> std::cmp::Ordering {
    (&a.path, a.line, &a.rule, a.column, &a.message)
        .cmp(&(&b.path, b.line, &b.rule, b.column, &b.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §10.2 (universal newlines): a CR-only or CRLF file has the lines an LF file has, so a
    /// finding in any checkout is reported on the same line.
    #[test]
    fn lone_cr_and_crlf_end_lines_as_lf_does() {
        for text in [
            "a\nbc\n\nd",
            "a\r\nbc\r\n\r\nd",
            "a\rbc\r\rd",
            "a\rbc\r\n\nd",
        ] {
            let idx = LineIndex::new(text);
            let d = text.find('d').unwrap() as u32;
            assert_eq!(idx.line_col(text, d), (4, 1), "{text:?}");
            let c = text.find('c').unwrap() as u32;
            assert_eq!(idx.line_col(text, c), (2, 2), "{text:?}");
            assert_eq!(&text[idx.line_range(text, 2)], "bc", "{text:?}");
        }
    }

    #[test]
    fn line_col_counts_chars() {
        let text = "ab\nçd\n\nx";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), (1, 1));
        assert_eq!(idx.line_col(text, 3), (2, 1));
        assert_eq!(idx.line_col(text, 5), (2, 2)); // after the two-byte `ç`
        assert_eq!(idx.line_col(text, 8), (4, 1));
        assert_eq!(idx.line_col(text, 99), (4, 2));
        assert_eq!(&text[idx.line_range(text, 2)], "çd");
        assert_eq!(&text[idx.line_range(text, 3)], "");
    }
}
