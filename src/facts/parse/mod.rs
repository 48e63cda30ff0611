//! L3 metadata extraction (§2): the built-in parser registry keyed by the extractor's parser names.
//!
//! Four parsers live here, each a pure function of a file's text: [`parse_python`] (§2.2–2.3,
//! real Python AST via `ruff_python_parser`), [`parse_yaml`] (§2.4, `serde_yaml` plus a
//! line-based span locator) and [`parse_js`] (§2.5, a token scanner, not a full JS parser).
//! None of them panics or fails: what could be read is returned together with
//! [`ParseProblem`]s that carry byte spans into the text.

pub mod directive;
pub mod guard;
pub mod item_doc;
mod js;
pub mod knowledge;
mod py_scan;
mod python;
mod shell;
pub mod suppress;
mod yaml;
mod yaml_events;
mod yaml_load;
mod yaml_node;
#[cfg(any(test, feature = "testing"))]
mod yaml_oracle;

#[cfg(test)]
mod proptests;

pub use js::parse_js;
pub use python::{parse_python, top_level_literals as python_top_level_literals};
pub use shell::parse_shell;
pub use yaml::parse_yaml;

use crate::model::{Field, Metadata, ParsedFile, Span, Spanned, Value};

/// A built-in parser. Extractor `parsers:` names map onto these (§1.6; DESIGN.md: no Python
/// parser modules are executed, the name is a key into this registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParserKind {
    PythonAst,
    Yaml,
    JavaScript,
    /// `.sh` header assignments (ryechain's format; only where an extractor maps it).
    Shell,
}

impl ParserKind {
    /// Parser name as written in `tool_extractor.yaml` (`python/ast`, legacy `python_ast`, ...).
    pub fn from_name(name: &str) -> Option<ParserKind> {
        match name {
            "python/ast" | "python_ast" | "python" => Some(ParserKind::PythonAst),
            "yaml/yaml" | "yaml" => Some(ParserKind::Yaml),
            "javascript/javascript" | "javascript" | "js" => Some(ParserKind::JavaScript),
            "shell/shell" | "shell" | "bash" => Some(ParserKind::Shell),
            _ => None,
        }
    }
    #[cfg(any(test, feature = "testing"))]
    pub fn name(self) -> &'static str {
        match self {
            ParserKind::PythonAst => "python/ast",
            ParserKind::Yaml => "yaml/yaml",
            ParserKind::JavaScript => "javascript/javascript",
            ParserKind::Shell => "shell/shell",
        }
    }
    /// The parser used for an extension when no extractor's parsers map names one (issue: trees
    /// written for the reference have extractors without a parsers map).
    pub fn builtin_for_extension(ext: &str) -> Option<ParserKind> {
        match ext {
            ".py" => Some(ParserKind::PythonAst),
            ".yaml" | ".yml" => Some(ParserKind::Yaml),
            ".js" | ".ts" | ".mjs" | ".cjs" => Some(ParserKind::JavaScript),
            _ => None,
        }
    }
}

/// Parse one file's header. Never panics, never fails: problems come back with spans.
pub fn parse(kind: ParserKind, text: &str) -> ParsedFile {
    match kind {
        ParserKind::PythonAst => parse_python(text),
        ParserKind::Yaml => parse_yaml(text),
        ParserKind::JavaScript => parse_js(text),
        ParserKind::Shell => parse_shell(text),
    }
}

/// Whether the scan of a Python module's top-level statements reads `text` the same with its
/// line reader that skips to the bytes that matter as with the token-by-token one it replaced
/// (test support). `Err` holds both answers.
#[cfg(any(test, feature = "testing"))]
pub fn python_scans_agree(text: &str) -> Result<(), String> {
    let fast = py_scan::top_level(text);
    let oracle = py_scan::top_level_by_tokens(text);
    if fast == oracle {
        Ok(())
    } else {
        Err(format!("skipping: {fast:?}\ntoken by token: {oracle:?}"))
    }
}

/// Whether the YAML loader and `serde_yaml` agree on `text`: values, later documents, errors
/// and their positions (test support: the differential tests and the fuzz target call it).
/// `None` when the nesting guard decides the text.
#[cfg(any(test, feature = "testing"))]
pub fn yaml_loaders_agree(text: &str) -> Option<Result<(), String>> {
    yaml_oracle::loaders_agree(text)
}

/// Whether every span the YAML header reader gives holds its value's text, read alone through
/// `serde_yaml` (test support); the number of spans checked.
#[cfg(any(test, feature = "testing"))]
pub fn yaml_spans_hold_their_text(text: &str) -> Result<usize, String> {
    yaml_oracle::spans_hold_their_text(text)
}

/// A sign in a file's code that it is meant to be run, not imported (DESIGN.md: files under
/// `tools/` with no executor and no such sign are library or data items). Not metadata: it is
/// read from the body, so only the `unknown-primitive` checks ask for it, through its own query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryPoint {
    /// A `#!` interpreter line at the very start of the file.
    Shebang,
    /// Python's top-level `if __name__ == "__main__":`.
    MainBlock,
    /// A top-level `execute` function (Python `def`/`async def`, a JS function or export).
    ExecuteFunction,
    /// Node's `require.main === module` or `import.meta.main`.
    NodeMain,
    /// Python code at the top level that runs when the file runs: a call or `await` as a
    /// statement (`print(…)`, `main()`), a `for`, `while` or `with` block. What a script that
    /// forgot its executor looks like; a library module defines, imports and assigns.
    TopLevelCode,
}

/// How a file's code says it is meant to be run: a shebang for any file, then what the parser of
/// `kind` can see (Python and JavaScript; YAML and shell have no code-level entry point beyond the
/// shebang). `None` for a file that looks like a library or data. Never panics.
pub fn entry_point(kind: Option<ParserKind>, text: &str) -> Option<EntryPoint> {
    if text.trim_start_matches('\u{feff}').starts_with("#!") {
        return Some(EntryPoint::Shebang);
    }
    match kind? {
        ParserKind::PythonAst => python::entry_point(text),
        ParserKind::JavaScript => js::entry_point(text),
        ParserKind::Yaml | ParserKind::Shell => None,
    }
}

/// Largest text the parsers accept: spans are `u32` offsets (and ruff's `TextSize` is `u32`).
pub(crate) const MAX_TEXT_LEN: usize = u32::MAX as usize;

/// Deepest literal nesting the parsers convert; deeper values are refused rather than risking
/// the stack (Python's own `literal_eval` and `serde_json` refuse far shallower input too).
pub(crate) const MAX_NESTING: usize = 128;

/// The problem reported for a text longer than [`MAX_TEXT_LEN`].
/// `text.split('\n')`, each line break found with `memchr`'s vector search (the `str`
/// searcher's set-up for every line was 2.6% of a cold lint's instructions).
pub(crate) fn split_newlines(text: &str) -> impl Iterator<Item = &str> + '_ {
    let mut start = 0;
    let mut breaks = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        // A `\n` is a whole character: both ends are char boundaries.
        Some(match breaks.next() {
            Some(at) => {
                let line = &text[start..at];
                start = at + 1;
                line
            }
            None => {
                done = true;
                &text[start..]
            }
        })
    })
}

pub(crate) fn too_large(what: &str) -> ParsedFile {
    ParsedFile {
        metadata: Metadata::default(),
        problems: vec![crate::model::ParseProblem {
            span: Span::empty(0),
            message: format!("{what} file is larger than 4 GiB; metadata not read"),
        }],
    }
}

/// `start..end` clamped into `text` and widened outwards onto char boundaries.
pub(crate) fn clamp_span(text: &str, start: usize, end: usize) -> Span {
    let start = floor_boundary(text, start);
    let end = ceil_boundary(text, end.max(start));
    Span::new(start, end)
}

/// The largest char boundary `<= i` (clamped to the text length).
pub(crate) fn floor_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary `>= i` (clamped to the text length).
pub(crate) fn ceil_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// For each [`Metadata`] field, the source names that feed it, first found wins (§2.3
/// normalisation; DESIGN.md "Metadata" decision).
pub(crate) struct FieldNames {
    pub version: &'static [&'static str],
    pub tool_type: &'static [&'static str],
    pub executor_id: &'static [&'static str],
    pub category: &'static [&'static str],
    pub tool_description: &'static [&'static str],
    pub config_schema: &'static [&'static str],
    pub env_config: &'static [&'static str],
    pub config: &'static [&'static str],
    pub anchor: &'static [&'static str],
    pub verify_deps: &'static [&'static str],
    pub config_resolve: &'static [&'static str],
    pub inputs: &'static [&'static str],
    pub outputs: &'static [&'static str],
    pub child_constraints: &'static [&'static str],
}

impl FieldNames {
    /// The source names of every field, in [`Field::ALL`] order.
    fn all(&self) -> [&'static [&'static str]; 14] {
        [
            self.version,
            self.tool_type,
            self.executor_id,
            self.category,
            self.tool_description,
            self.config_schema,
            self.env_config,
            self.config,
            self.anchor,
            self.verify_deps,
            self.config_resolve,
            self.inputs,
            self.outputs,
            self.child_constraints,
        ]
    }

    /// Whether `name` feeds any field (the parsers read only those values).
    pub fn contains(&self, name: &str) -> bool {
        self.slot(name).is_some()
    }

    /// The field `name` feeds (its index in [`Field::ALL`]) and its rank among that field's
    /// source names (0 wins over 1), if any.
    fn slot(&self, name: &str) -> Option<(u8, u8)> {
        self.all().iter().enumerate().find_map(|(field, names)| {
            let rank = names.iter().position(|n| *n == name)?;
            Some((u8::try_from(field).ok()?, u8::try_from(rank).ok()?))
        })
    }
}

/// Named values read from a file's top level, each kept under the field its name feeds and the
/// name's rank there; inserting a name again replaces its value (later wins), a name that feeds
/// no field is dropped. A short list, not a map: a header holds a handful of the few dozen
/// names that feed fields (and no name is copied: each was a string allocation per value).
pub(crate) struct Fields<'n> {
    names: &'n FieldNames,
    /// (field index in [`Field::ALL`], rank of the name, value).
    values: Vec<(u8, u8, Spanned<Value>)>,
}

impl<'n> Fields<'n> {
    pub fn new(names: &'n FieldNames) -> Self {
        Fields {
            names,
            values: Vec::new(),
        }
    }

    pub fn insert(&mut self, name: &str, value: Spanned<Value>) {
        let Some((field, rank)) = self.names.slot(name) else {
            return;
        };
        match self
            .values
            .iter_mut()
            .find(|(f, r, _)| (*f, *r) == (field, rank))
        {
            Some((_, _, v)) => *v = value,
            None => self.values.push((field, rank, value)),
        }
    }

    /// The normalised record: for each field, the value of the first of its source names that
    /// was read. Moved out, not cloned: a 1 MB `config` is not copied.
    pub fn metadata(mut self) -> Metadata {
        // Stable: field, then rank; the first of each field wins.
        self.values.sort_by_key(|(f, r, _)| (*f, *r));
        let mut last = None;
        Metadata::from_fields(self.values.into_iter().filter_map(|(f, _, v)| {
            if last == Some(f) {
                return None;
            }
            last = Some(f);
            Some((Field::ALL[usize::from(f)], v))
        }))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn split_newlines_is_split_on_newline() {
        for text in [
            "",
            "\n",
            "\n\n",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "é\nü\n\nx",
            "\na",
            "a\n\n",
        ] {
            let ours: Vec<&str> = super::split_newlines(text).collect();
            let std: Vec<&str> = text.split('\n').collect();
            assert_eq!(ours, std, "{text:?}");
        }
    }

    use super::*;

    #[test]
    fn field_names_are_disjoint() {
        for table in [
            &python::PYTHON_FIELDS,
            &yaml_node::YAML_FIELDS,
            &js::JS_FIELDS,
            &shell::SHELL_FIELDS,
        ] {
            let all = table.all().concat();
            let unique: std::collections::HashSet<_> = all.iter().collect();
            assert_eq!(unique.len(), all.len(), "a name feeds two fields: {all:?}");
            assert!(all.iter().all(|n| table.contains(n)));
            assert!(!table.contains("not_a_field"));
        }
    }

    #[test]
    fn clamp_span_lands_on_char_boundaries() {
        let text = "aé€";
        assert_eq!(clamp_span(text, 2, 3), Span::new(1, 3));
        assert_eq!(clamp_span(text, 4, 5), Span::new(3, 6));
        assert_eq!(clamp_span(text, 10, 20), Span::new(6, 6));
        assert_eq!(clamp_span(text, 3, 1), Span::new(3, 3));
        assert_eq!(clamp_span("", 5, 9), Span::new(0, 0));
    }

    #[test]
    fn entry_point_dispatch() {
        assert_eq!(
            entry_point(None, "#!/bin/sh\necho hi\n"),
            Some(EntryPoint::Shebang)
        );
        assert_eq!(entry_point(None, "echo hi\n"), None);
        assert_eq!(
            entry_point(Some(ParserKind::Shell), "__version__=1\n"),
            None
        );
        assert_eq!(
            entry_point(Some(ParserKind::Yaml), "config:\n  command: x\n"),
            None
        );
        let py = "if __name__ == '__main__':\n    pass\n";
        assert_eq!(
            entry_point(Some(ParserKind::PythonAst), py),
            Some(EntryPoint::MainBlock)
        );
        // The Python parser is not asked about a JS file and vice versa.
        assert_eq!(entry_point(Some(ParserKind::JavaScript), py), None);
    }

    #[test]
    fn dispatch_by_kind() {
        let py = parse(ParserKind::PythonAst, "__version__ = '1.0.0'\n");
        assert_eq!(py.metadata.version_str().map(|s| s.value), Some("1.0.0"));
        let yaml = parse(ParserKind::Yaml, "version: 1.0.0\n");
        assert_eq!(yaml.metadata.version_str().map(|s| s.value), Some("1.0.0"));
        let js = parse(
            ParserKind::JavaScript,
            "export const __version__ = '1.0.0';\n",
        );
        assert_eq!(js.metadata.version_str().map(|s| s.value), Some("1.0.0"));
    }
}
