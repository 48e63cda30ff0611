//! L3 suppression comments: `# ryechain: ignore[rule-a, rule-b]` (Python, shell, YAML, TOML),
//! `// ryechain: ignore[…]` (JavaScript) and `<!-- ryechain: ignore[…] -->` (markdown), read
//! from a file's text by the comment syntax of its type: on which line each one stands, where it
//! is, and the rule ids it names. Pure and total: a directive it cannot read comes back with a
//! problem instead of its ids.
//!
//! A directive suppresses findings that start on its own line (ruff's `# noqa` semantics: the
//! same line, never the next). It must open a comment: `#` (or `//`, `<!--`) with only spaces
//! before `ryechain:`; a second comment on the line may hold it (`# note # ryechain: …`). It is
//! read wherever such text stands, a string literal included (as ruff's first `noqa` reader did):
//! the text is not tokenized.

use crate::model::Span;

/// How comments open in a file's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommentSyntax {
    /// `# …` (Python, shell, YAML, TOML).
    Hash,
    /// `// …` (JavaScript, TypeScript).
    Slash,
    /// `<!-- … -->` (markdown: directives and knowledge).
    Html,
    /// A file of another type: `#` and `//` are both read.
    Any,
    /// A file that holds no comments (JSON: lockfiles).
    None,
}

impl CommentSyntax {
    /// The comment syntax of a file by its name's extension.
    pub fn of(rel: &str) -> CommentSyntax {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        match ext {
            "py" | "pyi" | "sh" | "bash" | "zsh" | "yaml" | "yml" | "toml" | "rb" | "pl" | "r" => {
                CommentSyntax::Hash
            }
            "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "jsx" | "tsx" => CommentSyntax::Slash,
            "md" | "markdown" | "html" | "xml" => CommentSyntax::Html,
            "json" => CommentSyntax::None,
            _ => CommentSyntax::Any,
        }
    }

    /// The texts that open a comment here.
    fn openers(self) -> &'static [&'static str] {
        match self {
            CommentSyntax::Hash => &["#"],
            CommentSyntax::Slash => &["//"],
            CommentSyntax::Html => &["<!--"],
            CommentSyntax::Any => &["#", "//"],
            CommentSyntax::None => &[],
        }
    }
}

/// What cannot be read in a directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectiveProblem {
    /// `ryechain: ignore` without `[rule-id, …]` (a blanket suppression is not accepted).
    NoList,
    /// `ryechain: ignore[]`.
    EmptyList,
    /// `ryechain: ignore[a, b` without its `]`.
    Unclosed,
}

impl DirectiveProblem {
    pub fn text(self) -> &'static str {
        match self {
            DirectiveProblem::NoList => {
                "`ryechain: ignore` must name the rules it suppresses in brackets (`ryechain: ignore[rule-id]`); it suppresses nothing"
            }
            DirectiveProblem::EmptyList => {
                "`ryechain: ignore[]` names no rule; it suppresses nothing"
            }
            DirectiveProblem::Unclosed => {
                "`ryechain: ignore[` has no closing `]`; it suppresses nothing"
            }
        }
    }
}

/// One suppression comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// Its line, 1-based (lines end at `\n`, `\r\n` or a lone `\r`, as findings count them).
    pub line: u32,
    /// From the comment opener to the comment's end (the `-->`, or the line's end).
    pub comment: Span,
    /// Where the text before the opener starts being blank: removing `removal..comment.end`
    /// removes the comment and the spaces in front of it.
    pub removal: u32,
    /// Whether the line holds nothing but this comment (and spaces).
    pub own_line: bool,
    /// The rule ids in brackets, in order, each with its span.
    pub ids: Vec<(String, Span)>,
    pub problem: Option<DirectiveProblem>,
}

/// The words after `ryechain:`.
const MARKER: &str = "ryechain:";

/// Every suppression comment of `text`, in order. Cheap when there is none (one substring
/// search).
pub fn directives(text: &str, syntax: CommentSyntax) -> Vec<Directive> {
    let openers = syntax.openers();
    if openers.is_empty() {
        return Vec::new();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    // Lines counted up to the last directive found (each byte once).
    let (mut line, mut counted) = (1u32, 0usize);
    // Built once: a lint scans every file, and building the searcher was a fifth of the scan.
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(MARKER.as_bytes()));
    for at in FINDER.find_iter(bytes) {
        let line_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n' || b == b'\r')
            .map_or(0, |i| i + 1);
        let before = &text[line_start..at];
        let trimmed = before.trim_end_matches([' ', '\t']);
        let Some(opener) = openers.iter().find(|o| trimmed.ends_with(**o)) else {
            continue;
        };
        let open_at = line_start + trimmed.len() - opener.len();
        // A `//` that is the end of `http://` is no comment, nor is `#` inside a word.
        if *opener == "//" && text[..open_at].ends_with(':') {
            continue;
        }
        let Some(d) = read_directive(text, line_start, open_at, at, syntax) else {
            continue;
        };
        line += count_lines(&text[counted..line_start]);
        counted = line_start;
        out.push(Directive { line, ..d });
    }
    // Two on one line (`# ryechain: ignore[a]  # ryechain: ignore[b]`): the first ends where
    // the second begins, so that removing one leaves the other.
    for i in 1..out.len() {
        if out[i].line == out[i - 1].line {
            let next = out[i].removal;
            let prev = &mut out[i - 1];
            prev.comment.end = next.max(prev.comment.start);
            prev.own_line = false;
            out[i].own_line = false;
        }
    }
    out
}

/// Line breaks in `text` (`\r\n` once).
fn count_lines(text: &str) -> u32 {
    u32::try_from(crate::diagnostic::line_ends(text).count()).unwrap_or(u32::MAX)
}

/// The directive whose comment opens at `open_at` and whose `ryechain:` is at `at`; `None`
/// when the words after `ryechain:` are not `ignore`.
fn read_directive(
    text: &str,
    line_start: usize,
    open_at: usize,
    at: usize,
    syntax: CommentSyntax,
) -> Option<Directive> {
    let rest_start = at + MARKER.len();
    let line_end = text[rest_start..]
        .find(['\n', '\r'])
        .map_or(text.len(), |i| rest_start + i);
    let after = &text[rest_start..line_end];
    let lead = after.len() - after.trim_start_matches([' ', '\t']).len();
    let word = &after[lead..];
    let rest = word.strip_prefix("ignore")?;
    // `ignored`, `ignore-me`: another word.
    if rest
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let list_at = rest_start + lead + "ignore".len();
    let comment_end = match syntax {
        CommentSyntax::Html => text[list_at..line_end]
            .find("-->")
            .map_or(line_end, |i| list_at + i + 3),
        _ => line_end,
    };
    let removal = line_start
        + text[line_start..open_at]
            .trim_end_matches([' ', '\t'])
            .len();
    let own_line = removal == line_start
        && text[comment_end..line_end]
            .trim_matches([' ', '\t'])
            .is_empty();
    let mut d = Directive {
        line: 0,
        comment: Span::new(open_at, comment_end),
        removal: u32::try_from(removal).unwrap_or(u32::MAX),
        own_line,
        ids: Vec::new(),
        problem: None,
    };
    let inner = &text[list_at..comment_end];
    let spaces = inner.len() - inner.trim_start_matches([' ', '\t']).len();
    let Some(list) = inner[spaces..].strip_prefix('[') else {
        d.problem = Some(DirectiveProblem::NoList);
        return Some(d);
    };
    let list_start = list_at + spaces + 1;
    let Some(close) = list.find(']') else {
        d.problem = Some(DirectiveProblem::Unclosed);
        return Some(d);
    };
    let mut offset = list_start;
    for part in list[..close].split(',') {
        let id = part.trim_matches([' ', '\t']);
        if !id.is_empty() {
            let start = offset + (part.len() - part.trim_start_matches([' ', '\t']).len());
            d.ids
                .push((id.to_owned(), Span::new(start, start + id.len())));
        }
        offset += part.len() + 1;
    }
    if d.ids.is_empty() {
        d.problem = Some(DirectiveProblem::EmptyList);
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(d: &Directive) -> Vec<&str> {
        d.ids.iter().map(|(id, _)| id.as_str()).collect()
    }

    #[test]
    fn each_file_type_reads_its_own_comments() {
        let py = "x = 1\n__executor_id__ = \"a/b\"  # ryechain: ignore[missing-executor]\n";
        let d = directives(py, CommentSyntax::of("tools/a.py"));
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].line, ids(&d[0])), (2, vec!["missing-executor"]));
        assert_eq!(
            &py[d[0].comment.range()],
            "# ryechain: ignore[missing-executor]"
        );
        assert_eq!(
            &py[d[0].removal as usize..d[0].comment.start as usize],
            "  "
        );
        assert!(!d[0].own_line);
        let (at, span) = (&d[0].ids[0].0, d[0].ids[0].1);
        assert_eq!(&py[span.range()], at);

        let js = "const a = 1; // ryechain: ignore[a-b, c]\n";
        let d = directives(js, CommentSyntax::of("x.js"));
        assert_eq!(ids(&d[0]), ["a-b", "c"]);
        // A `#` is no comment in JavaScript.
        assert!(directives("# ryechain: ignore[a]", CommentSyntax::Slash).is_empty());

        let md = "text\r\n<!-- ryechain: ignore[invalid-directive] --> tail\r\n";
        let d = directives(md, CommentSyntax::of("directives/x.md"));
        assert_eq!((d[0].line, ids(&d[0])), (2, vec!["invalid-directive"]));
        assert_eq!(
            &md[d[0].comment.range()],
            "<!-- ryechain: ignore[invalid-directive] -->"
        );
        assert!(!d[0].own_line, "text follows it");

        let yaml = "a: 1\n\n#ryechain:ignore[x,y ,  z]\n";
        let d = directives(yaml, CommentSyntax::of("x.yaml"));
        assert_eq!((d[0].line, ids(&d[0])), (3, vec!["x", "y", "z"]));
        assert!(d[0].own_line);
        assert!(
            directives(
                "{\"a\": \"# ryechain: ignore[x]\"}",
                CommentSyntax::of("a.lock.json")
            )
            .is_empty()
        );
    }

    #[test]
    fn text_that_is_not_a_directive_is_left_alone() {
        for t in [
            "# see ryechain: ignore[x] in the docs",
            "# ryechain: ignored[x]",
            "# ryechain: check[x]",
            "x = 'ryechain: ignore[x]'",
            "url = 'http://ryechain: ignore[x]'",
        ] {
            assert!(directives(t, CommentSyntax::Any).is_empty(), "{t}");
        }
        // A second comment on the line may hold one.
        let d = directives("x  # note # ryechain: ignore[a]", CommentSyntax::Hash);
        assert_eq!(ids(&d[0]), ["a"]);
        // Two on one line: the first ends where the second begins.
        let t = "x = 1  # ryechain: ignore[a]  # ryechain: ignore[b]\n";
        let d = directives(t, CommentSyntax::Hash);
        assert_eq!((ids(&d[0]), ids(&d[1])), (vec!["a"], vec!["b"]));
        assert_eq!(&t[d[0].comment.range()], "# ryechain: ignore[a]");
        assert_eq!(
            &t[d[1].removal as usize..d[1].comment.end as usize],
            "  # ryechain: ignore[b]"
        );
    }

    #[test]
    fn unreadable_directives_say_why() {
        let p = |t: &str| directives(t, CommentSyntax::Hash)[0].problem;
        assert_eq!(p("# ryechain: ignore"), Some(DirectiveProblem::NoList));
        assert_eq!(
            p("# ryechain: ignore missing-executor"),
            Some(DirectiveProblem::NoList)
        );
        assert_eq!(
            p("# ryechain: ignore[ , ]"),
            Some(DirectiveProblem::EmptyList)
        );
        assert_eq!(
            p("# ryechain: ignore[a, b"),
            Some(DirectiveProblem::Unclosed)
        );
        assert_eq!(p("# ryechain: ignore[a]"), None);
    }

    #[test]
    fn lines_count_as_findings_count_them() {
        let t = "a\rb\r\n# ryechain: ignore[x]\n\n\n# ryechain: ignore[y]\n";
        let d = directives(t, CommentSyntax::Hash);
        assert_eq!(d.iter().map(|d| d.line).collect::<Vec<_>>(), [3, 6]);
        let idx = crate::diagnostic::LineIndex::new(t);
        for d in &d {
            assert_eq!(idx.line_col(t, d.comment.start).0, d.line);
        }
    }
}
