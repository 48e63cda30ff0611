//! The `yaml/yaml` metadata parser (§2.4): top-level keys of a `.yaml`/`.yml` file, with spans.
//!
//! The document is loaded with `serde_yaml` into a small tree of our own (so duplicate keys are
//! kept, later wins, as with Python's `safe_load`; integers beyond 64 bits become floats; tags
//! are dropped in favour of the tagged value; `<<` merge keys are applied, explicit keys win).
//! `serde_yaml` has no spans, so they are recovered from the text by a line-based locator:
//! a key is looked up on the lines of its mapping (same indentation, in source order); an inline
//! value gets the span of the text after the colon (comment stripped), a block value gets the
//! span of its key line, and its entries/items are looked up in the indented block below.
//! Whatever cannot be located (flow collections, aliases, merged keys) gets the span of the
//! nearest located ancestor.
//!
//! Decisions: an empty document (empty file, only comments) is empty metadata without a
//! problem; a document that is not a mapping is empty metadata plus a problem; a syntax error is
//! empty metadata plus a problem at the error's byte offset. Multi-document streams: the first
//! document is read; if a later document holds anything (or is malformed) a problem is reported,
//! because the reference `safe_load` refuses such a stream. A leading `# rye:signed:…` line is
//! an ordinary YAML comment.

use serde::Deserialize;

use super::yaml_fast::Fast;
use super::yaml_node::{
    LoadError, MAX_KEY_CANDIDATES, Rest, TopNode, YAML_FIELDS, YNode, key_string,
    only_node_properties,
};
use super::{Fields, MAX_NESTING, MAX_TEXT_LEN, ceil_boundary, clamp_span};
use crate::model::{F64, ParseProblem, ParsedFile, Span, Spanned, Str, Value};

/// Read the metadata header of a YAML file (§2.4). Never panics.
pub fn parse_yaml(text: &str) -> ParsedFile {
    if text.len() > MAX_TEXT_LEN {
        return super::too_large("YAML");
    }
    // The plain shape of most tool headers is read in one pass that gives each value its span
    // as it goes (`yaml_simple::load_spanned`: the spans the locator below would find).
    if let Some(entries) = super::yaml_simple::load_spanned(text) {
        return from_entries(entries, Vec::new());
    }
    parse_yaml_located(text)
}

/// The top-level entries read, into metadata.
fn from_entries(
    entries: Vec<(Spanned<Str>, Spanned<Value>)>,
    problems: Vec<ParseProblem>,
) -> ParsedFile {
    let mut fields = Fields::new(&YAML_FIELDS);
    for (key, value) in entries {
        fields.insert(&key.value, value);
    }
    ParsedFile {
        metadata: fields.metadata(),
        problems,
    }
}

/// [`parse_yaml`] of any document: loaded (line by line, from libyaml's events or through
/// `serde_yaml`), then each value located in the text.
fn parse_yaml_located(text: &str) -> ParsedFile {
    match located_entries(text) {
        Ok((entries, problems)) => from_entries(entries, problems),
        Err(parsed) => parsed,
    }
}

/// The top-level entries of the first document with their spans and the problems met, or the
/// whole answer when the document holds no mapping to read (empty, not a mapping, refused).
#[allow(
    clippy::type_complexity,
    reason = "a private pair, taken apart by its two callers"
)]
pub(super) fn located_entries(
    text: &str,
) -> Result<(Vec<(Spanned<Str>, Spanned<Value>)>, Vec<ParseProblem>), ParsedFile> {
    let mut problems = Vec::new();
    // libyaml mis-reads every line after the first when the text starts with a BOM, so the
    // BOM is cut off here and error offsets are shifted back by its length.
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    // Deep nesting is refused before libyaml's full scan, which is quadratic in it (`guard`).
    // The fast loader stops by itself past `MAX_NESTING` (its look-ahead is bounded), so the
    // guard runs only when the fast loader declines, fails, or came near the limit: then its
    // verdict is the one the file always got.
    let fast = super::yaml_simple::load(&text[bom..])
        .unwrap_or_else(|| super::yaml_fast::load(&text[bom..]));
    let guard_needed = match &fast {
        Fast::Loaded { max_depth, .. } => *max_depth > MAX_NESTING / 2,
        Fast::Unsupported | Fast::FirstError { .. } => true,
    };
    if guard_needed && let Err(deep) = super::guard::check_yaml_nesting(text) {
        let at = super::floor_boundary(text, deep.offset);
        problems.push(ParseProblem {
            span: clamp_span(text, at, at + 1),
            message: deep.to_string(),
        });
        return Err(ParsedFile {
            metadata: Default::default(),
            problems,
        });
    }
    let (first, rest) = match load(&text[bom..], fast) {
        Err(e) => {
            problems.push(syntax_problem(text, bom, &e));
            return Err(ParsedFile {
                metadata: Default::default(),
                problems,
            });
        }
        Ok(loaded) => loaded,
    };
    let lines = Lines::new(text);
    let (doc_start, doc_end) = lines.first_document();
    match rest {
        Rest::Nothing => {}
        Rest::MoreContent => problems.push(ParseProblem {
            span: lines.line_span(doc_end),
            message: "the YAML file holds more than one document; only the first is read"
                .to_owned(),
        }),
        Rest::Error(e) => problems.push(syntax_problem(text, bom, &e)),
    }

    let doc_span = lines.line_span(doc_start);
    let entries = match first {
        YNode::Null => {
            return Err(ParsedFile {
                metadata: Default::default(),
                problems,
            });
        }
        YNode::Map(entries) => entries,
        other => {
            problems.push(ParseProblem {
                span: doc_span,
                message: format!(
                    "YAML document is not a mapping (it is a {}); no metadata read",
                    other.kind()
                ),
            });
            return Err(ParsedFile {
                metadata: Default::default(),
                problems,
            });
        }
    };

    let mut locator = Locator {
        text,
        lines: &lines,
        doc_end,
        problems: &mut problems,
    };
    let top = Loc {
        line: doc_start,
        col: 0,
    };
    // Entries skipped at load (`YNode::Skipped`) are only located, never converted.
    let entries = locator.map_entries(entries, Some(top), doc_span, 0);
    Ok((entries, problems))
}

/// The first document's root (`Null` for an empty text) and what follows it, from the fast
/// loader's answer for `text`: documents without anchors, aliases or tags are read straight from
/// libyaml's events (`yaml_fast`); the rest go through `serde_yaml`, with the same result.
fn load(text: &str, fast: Fast) -> Result<(YNode, Rest), LoadError> {
    fast.into_result().unwrap_or_else(|| load_with_serde(text))
}

/// [`load`] through `serde_yaml` (every YAML feature; the reference for `yaml_fast`).
pub(super) fn load_with_serde(text: &str) -> Result<(YNode, Rest), LoadError> {
    let mut documents = serde_yaml::Deserializer::from_str(text);
    let first = match documents
        .next()
        .map(|d| TopNode::deserialize(d).map(|t| t.0))
    {
        None => YNode::Null,
        Some(Err(e)) => return Err(e.into()),
        Some(Ok(node)) => node,
    };
    // Later documents: the serde_yaml iterator repeats an error forever, so stop at the first.
    for next in documents {
        return Ok(match YNode::deserialize(next) {
            Ok(YNode::Null) => continue,
            Ok(_) => (first, Rest::MoreContent),
            Err(e) => (first, Rest::Error(e.into())),
        });
    }
    Ok((first, Rest::Nothing))
}

/// A problem for a load error; its location is a byte index into `text[base..]`.
fn syntax_problem(text: &str, base: usize, e: &LoadError) -> ParseProblem {
    let span = match e.index {
        Some(index) => {
            let at = super::floor_boundary(text, base.saturating_add(index));
            let next = ceil_boundary(text, at + 1);
            // Point at the offending character unless it is a line break (or the end).
            match text.get(at..next) {
                Some(c) if !c.is_empty() && c != "\n" && c != "\r" => clamp_span(text, at, next),
                _ => clamp_span(text, at, at),
            }
        }
        None => Span::empty(0),
    };
    ParseProblem {
        span,
        message: format!("YAML syntax error: {}", e.message),
    }
}

/// Where a block node's content starts: a line and the byte column of its first key or dash.
#[derive(Clone, Copy, Debug)]
struct Loc {
    line: usize,
    col: usize,
}

/// Byte ranges of the text's lines (without the line break; a leading BOM is skipped).
struct Lines<'t> {
    text: &'t str,
    ranges: Vec<(usize, usize)>,
    /// Leading spaces of each line; `None` for blank and comment-only lines.
    indents: Vec<Option<usize>>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        let mut ranges = Vec::new();
        let mut start = 0;
        // Each line without its terminator (`\n`, `\r\n` or a lone `\r`, as YAML and Python's
        // universal newlines end lines); the last line even when empty.
        let bytes = text.as_bytes();
        for after in crate::diagnostic::line_ends(text) {
            let mut end = after - 1;
            if bytes[end] == b'\n' && end > start && bytes[end - 1] == b'\r' {
                end -= 1;
            }
            ranges.push((start, end));
            start = after;
        }
        ranges.push((start, text.len()));
        if let Some(first) = ranges.first_mut()
            && text.starts_with('\u{feff}')
        {
            first.0 += '\u{feff}'.len_utf8();
        }
        let indents = ranges
            .iter()
            .map(|&(s, e)| {
                let line = text.get(s..e).unwrap_or("");
                let content = line.trim_start_matches(' ');
                let trimmed = content.trim_start();
                (!trimmed.is_empty() && !trimmed.starts_with('#'))
                    .then(|| line.len() - content.len())
            })
            .collect();
        Lines {
            text,
            ranges,
            indents,
        }
    }

    fn len(&self) -> usize {
        self.ranges.len()
    }

    fn line(&self, i: usize) -> &'t str {
        self.ranges
            .get(i)
            .and_then(|&(s, e)| self.text.get(s..e))
            .unwrap_or("")
    }

    fn start(&self, i: usize) -> usize {
        self.ranges.get(i).map_or(self.text.len(), |r| r.0)
    }

    /// Indentation (leading spaces) of line `i`, or `None` for a blank or comment-only line.
    fn indent(&self, i: usize) -> Option<usize> {
        self.indents.get(i).copied().flatten()
    }

    /// The span of line `i` without its surrounding whitespace (empty at the end of the text).
    fn line_span(&self, i: usize) -> Span {
        let line = self.line(i);
        let start = self.start(i) + (line.len() - line.trim_start().len());
        clamp_span(self.text, start, start + line.trim().len())
    }

    /// The first document's content lines: `(first content line, line after its end)`.
    fn first_document(&self) -> (usize, usize) {
        let mut i = 0;
        while i < self.len() {
            let line = self.line(i);
            if self.indent(i).is_none() || line.starts_with('%') {
                i += 1;
            } else if is_marker(line, "---") {
                i += 1;
                break;
            } else {
                break;
            }
        }
        while i < self.len() && self.indent(i).is_none() {
            i += 1;
        }
        let start = i.min(self.len().saturating_sub(1));
        let end = (start + 1..self.len())
            .find(|&j| is_marker(self.line(j), "---") || is_marker(self.line(j), "..."))
            .unwrap_or(self.len());
        (start, end)
    }
}

/// Whether `line` is the document marker `marker` (`---` or `...`) at column 0.
fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// Whether `s` starts with a block sequence dash (`-` then a space or the end).
fn is_dash(s: &str) -> bool {
    s == "-" || s.starts_with("- ") || s.starts_with("-\t")
}

/// Converts loaded nodes into spanned [`Value`]s, locating them in the text as it goes.
struct Locator<'a, 't> {
    text: &'t str,
    lines: &'a Lines<'t>,
    doc_end: usize,
    problems: &'a mut Vec<ParseProblem>,
}

impl Locator<'_, '_> {
    fn convert(
        &mut self,
        node: YNode,
        loc: Option<Loc>,
        span: Span,
        depth: usize,
    ) -> Spanned<Value> {
        let value = match node {
            YNode::Null | YNode::Skipped => Value::Null,
            YNode::Bool(b) => Value::Bool(b),
            YNode::Int(i) => Value::Int(i),
            YNode::Float(f) => Value::Float(F64(f)),
            YNode::Str(s) => Value::Str(s.into()),
            _ if depth > MAX_NESTING => {
                self.problems.push(ParseProblem {
                    span,
                    message: format!(
                        "YAML value nested deeper than {MAX_NESTING} levels; replaced by null"
                    ),
                });
                Value::Null
            }
            YNode::Seq(items) => Value::List(
                self.seq_items(items, loc, span, depth + 1)
                    .into_boxed_slice(),
            ),
            YNode::Map(entries) => Value::Map(
                self.map_entries(entries, loc, span, depth + 1)
                    .into_boxed_slice(),
            ),
        };
        Spanned::new(value, span)
    }

    fn map_entries(
        &mut self,
        entries: Vec<(YNode, YNode)>,
        loc: Option<Loc>,
        fallback: Span,
        depth: usize,
    ) -> Vec<(Spanned<Str>, Spanned<Value>)> {
        let mut merged = Vec::new();
        // Sized for every entry (the values are kept for the whole run: no growth slack).
        let mut out = Vec::with_capacity(entries.len());
        let mut cursor = loc.map_or(0, |l| l.line);
        for (key, value) in entries {
            if let (YNode::Skipped, YNode::Str(name)) = (&value, &key) {
                // Located all the same, so the search for the next key starts past this one.
                if let Some(site) = loc.and_then(|l| self.find_key(l, cursor, name)) {
                    cursor = site.line + 1;
                }
                continue;
            }
            let is_str = matches!(key, YNode::Str(_));
            let Some(name) = key_string(&key) else {
                self.problems.push(ParseProblem {
                    span: fallback,
                    message: format!(
                        "YAML mapping key is a {}, not a scalar; entry ignored",
                        key.kind()
                    ),
                });
                continue;
            };
            let is_merge = name == "<<" && is_str;
            let site = loc.and_then(|l| self.find_key(l, cursor, &name));
            let (key_span, value_span, value_loc) = match site {
                Some(site) => {
                    cursor = site.line + 1;
                    let (span, child) =
                        self.value_site(site.line, site.col, site.key_start, site.after_colon);
                    (site.key_span, span, child)
                }
                None => (fallback, fallback, None),
            };
            if is_merge {
                // Merge key (YAML 1.1, honoured by `safe_load`): merged entries come first so
                // explicit keys, read later, win; of several merged maps the first wins.
                let mergeable = match &value {
                    YNode::Map(_) => true,
                    YNode::Seq(items) => items.iter().all(|i| matches!(i, YNode::Map(_))),
                    _ => false,
                };
                if mergeable {
                    let maps = match value {
                        YNode::Seq(items) => items.into_iter().rev().collect(),
                        map => vec![map],
                    };
                    for m in maps {
                        if let YNode::Map(inner) = m {
                            let entries = self.map_entries(inner, None, value_span, depth + 1);
                            merged.extend(entries);
                        }
                    }
                    continue;
                }
            }
            let value = self.convert(value, value_loc, value_span, depth);
            out.push((Spanned::new(name.into(), key_span), value));
        }
        if merged.is_empty() {
            return out;
        }
        merged.extend(out);
        merged.shrink_to_fit();
        merged
    }

    fn seq_items(
        &mut self,
        items: Vec<YNode>,
        loc: Option<Loc>,
        fallback: Span,
        depth: usize,
    ) -> Vec<Spanned<Value>> {
        let mut loc = loc;
        let mut cursor = loc.map_or(0, |l| l.line);
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let site = loc.and_then(|l| self.find_item(l, cursor));
            let Some((line, dash)) = site else {
                // Not a block sequence we can follow (flow style, alias...): stop looking.
                loc = None;
                out.push(self.convert(item, None, fallback, depth));
                continue;
            };
            cursor = line + 1;
            let (span, child) = self.item_site(line, dash, &item);
            out.push(self.convert(item, child, span, depth));
        }
        out
    }

    /// Find `key` in the block mapping at `loc`, from line `from` on.
    fn find_key(&self, loc: Loc, from: usize, key: &str) -> Option<KeySite> {
        // Keys are found in source order, so the next key is normally on the next candidate
        // line; giving up after a bounded number of candidates keeps unlocatable keys (escaped
        // or complex keys, merged entries) from making the search quadratic.
        let mut candidates = 0;
        for i in from..self.doc_end.min(self.lines.len()) {
            let col = if i == loc.line {
                loc.col
            } else {
                match self.lines.indent(i) {
                    None => continue,
                    Some(ind) if ind < loc.col => return None,
                    Some(ind) if ind > loc.col => continue,
                    Some(ind) => ind,
                }
            };
            candidates += 1;
            if candidates > MAX_KEY_CANDIDATES {
                return None;
            }
            let line = self.lines.line(i);
            let Some(content) = line.get(col..) else {
                continue;
            };
            if let Some((key_len, colon)) = match_key(content, key) {
                let key_start = self.lines.start(i) + col;
                return Some(KeySite {
                    line: i,
                    col,
                    key_start,
                    key_span: clamp_span(self.text, key_start, key_start + key_len),
                    after_colon: key_start + colon + 1,
                });
            }
        }
        None
    }

    /// Find the next item (`- …`) of the block sequence at `loc`, from line `from` on.
    fn find_item(&self, loc: Loc, from: usize) -> Option<(usize, usize)> {
        for i in from..self.doc_end.min(self.lines.len()) {
            let col = if i == loc.line {
                loc.col
            } else {
                match self.lines.indent(i) {
                    None => continue,
                    Some(ind) if ind > loc.col => continue,
                    Some(ind) if ind < loc.col => return None,
                    Some(ind) => ind,
                }
            };
            let content = self.lines.line(i).get(col..)?;
            return is_dash(content).then(|| (i, self.lines.start(i) + col));
        }
        None
    }

    /// Span and block location of a mapping value whose key (at `key_col`) sits on `line`.
    fn value_site(
        &self,
        line: usize,
        key_col: usize,
        key_start: usize,
        after_colon: usize,
    ) -> (Span, Option<Loc>) {
        match self.inline_rest(line, after_colon) {
            Some((s, e)) => (clamp_span(self.text, s, e), None),
            None => {
                let span = clamp_span(self.text, key_start, self.line_content_end(line));
                (span, self.block_below(line, key_col, true))
            }
        }
    }

    /// Span and block location of the sequence item whose dash is at byte `dash` on `line`.
    fn item_site(&self, line: usize, dash: usize, item: &YNode) -> (Span, Option<Loc>) {
        let line_start = self.lines.start(line);
        let dash_col = dash - line_start;
        let after = self.text.get(dash + 1..).unwrap_or("");
        let content = dash + 1 + (after.len() - after.trim_start_matches([' ', '\t']).len());
        match self.inline_rest(line, content) {
            None => {
                let span = clamp_span(self.text, dash, self.line_content_end(line));
                (span, self.block_below(line, dash_col, false))
            }
            Some((s, e)) => {
                let rest = self.text.get(s..e).unwrap_or("");
                let nested_block = match item {
                    YNode::Map(_) => !rest.starts_with(['{', '*', '"', '\'', '&', '!']),
                    YNode::Seq(_) => is_dash(rest) || rest.starts_with("- "),
                    _ => false,
                };
                if nested_block {
                    let span = clamp_span(self.text, dash, self.line_content_end(line));
                    (
                        span,
                        Some(Loc {
                            line,
                            col: s - line_start,
                        }),
                    )
                } else {
                    (clamp_span(self.text, s, e), None)
                }
            }
        }
    }

    /// The block content under `line` (indented past `col`; with `compact`, a sequence at `col`).
    fn block_below(&self, line: usize, col: usize, compact: bool) -> Option<Loc> {
        let next = (line + 1..self.doc_end.min(self.lines.len()))
            .find(|&j| self.lines.indent(j).is_some())?;
        let ind = self.lines.indent(next)?;
        let content = self.lines.line(next).get(ind..).unwrap_or("");
        (ind > col || (compact && ind == col && is_dash(content))).then_some(Loc {
            line: next,
            col: ind,
        })
    }

    fn line_content_end(&self, line: usize) -> usize {
        self.lines.start(line) + self.lines.line(line).trim_end().len()
    }

    /// The inline value text on `line` from byte `from`: trimmed, trailing comment removed.
    /// `None` when nothing but node properties (`&anchor`, `!tag`) or a block scalar header
    /// (`|`, `>-`, ...) is there, i.e. the value is a block below.
    fn inline_rest(&self, line: usize, from: usize) -> Option<(usize, usize)> {
        let line_end = self.lines.start(line) + self.lines.line(line).len();
        let rest = self.text.get(from..line_end)?;
        let lead = rest.len() - rest.trim_start().len();
        let body = &rest[lead..];
        let mut end = body.len();
        let mut quote: Option<char> = None;
        let mut prev_space = true;
        for (i, c) in body.char_indices() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '#' && prev_space => {
                    end = i;
                    break;
                }
                None if c == '"' || c == '\'' => quote = Some(c),
                None => {}
            }
            prev_space = c == ' ' || c == '\t';
        }
        let body = body[..end].trim_end();
        if only_node_properties(body) {
            return None;
        }
        let start = from + lead;
        Some((start, start + body.len()))
    }
}

/// Where a mapping key was found.
struct KeySite {
    line: usize,
    col: usize,
    key_start: usize,
    key_span: Span,
    after_colon: usize,
}

/// If `content` starts with `key` (plain, `"key"` or `'key'`) followed by `:` (then a space or
/// the end), return `(length of the written key, offset of the colon)`.
fn match_key(content: &str, key: &str) -> Option<(usize, usize)> {
    for quote in [None, Some('"'), Some('\'')] {
        let rest = match quote {
            None => content.strip_prefix(key),
            Some(q) => content
                .strip_prefix(q)
                .and_then(|r| r.strip_prefix(key))
                .and_then(|r| r.strip_prefix(q)),
        };
        let Some(rest) = rest else { continue };
        let written = content.len() - rest.len();
        let gap = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if let Some(tail) = rest[gap..].strip_prefix(':')
            && (tail.is_empty() || tail.starts_with([' ', '\t']))
        {
            return Some((written, written + gap));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, span: Span) -> &str {
        &text[span.range()]
    }

    fn line_of(text: &str, offset: u32) -> usize {
        text[..offset as usize].matches('\n').count() + 1
    }

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    const TOOL: &str = "# rye:signed:2025-01-01T00:00:00Z:abc123:def456:fp\nversion: \"1.0.0\"   # the version\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\ncategory: rye/core/runtimes\ndescription: Runs python scripts\nenv_config:\n  interpreter:\n    type: local_binary\n    binaries:\n      - python\n      - python3\n    search_paths: [\".venv/bin\", \".venv/Scripts\"]\n  env:\n    PYTHONUNBUFFERED: \"1\"\nconfig:\n  command: \"${RYE_PYTHON}\"\n  args:\n  - \"{tool_path}\"\n  - --project-path\n  timeout: 300\ninputs:\n  - name: path\n    type: string\n  - name: mode\n    type: string\nanchor: {enabled: true, mode: auto}\nverify_deps: ~\nconfig_resolve:\n  path: runtimes/python.yaml\n  mode: merge\nchild_constraints:\n  rye/x/y:\n    min_version: 1.0.0\n";

    #[test]
    fn reads_keys_with_line_spans() {
        let p = parse_yaml(TOOL);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let m = &p.metadata;
        let v = m.version().unwrap();
        assert_eq!(v.value, s("1.0.0"));
        assert_eq!(slice(TOOL, v.span), "\"1.0.0\"");
        assert_eq!(line_of(TOOL, v.span.start), 2);
        let t = m.tool_type().unwrap();
        assert_eq!(
            (slice(TOOL, t.span), line_of(TOOL, t.span.start)),
            ("runtime", 3)
        );
        let e = m.executor_id().unwrap();
        assert_eq!(slice(TOOL, e.span), "rye/core/primitives/subprocess");
        assert_eq!(m.category().unwrap().value, s("rye/core/runtimes"));
        assert_eq!(
            m.tool_description().unwrap().value,
            s("Runs python scripts")
        );

        let env = m.env_config().unwrap();
        assert_eq!(slice(TOOL, env.span), "env_config:");
        assert_eq!(line_of(TOOL, env.span.start), 7);
        let interp = env.value.get("interpreter").unwrap();
        assert_eq!(line_of(TOOL, interp.span.start), 8);
        let kind = interp.value.get("type").unwrap();
        assert_eq!(slice(TOOL, kind.span), "local_binary");
        let bins = interp
            .value
            .get("binaries")
            .unwrap()
            .value
            .as_list()
            .unwrap();
        assert_eq!(slice(TOOL, bins[1].span), "python3");
        assert_eq!(line_of(TOOL, bins[1].span.start), 12);
        let search = interp.value.get("search_paths").unwrap();
        assert_eq!(
            search.value.to_json(),
            serde_json::json!([".venv/bin", ".venv/Scripts"])
        );
        // Flow items get the span of the flow collection.
        assert_eq!(search.value.as_list().unwrap()[0].span, search.span);
        let map = env.value.as_map().unwrap();
        assert_eq!(slice(TOOL, map[1].0.span), "env");
        assert_eq!(
            slice(
                TOOL,
                env.value
                    .get("env")
                    .unwrap()
                    .value
                    .get("PYTHONUNBUFFERED")
                    .unwrap()
                    .span
            ),
            "\"1\""
        );

        let cfg = m.config().unwrap();
        let args = cfg.value.get("args").unwrap();
        let items = args.value.as_list().unwrap();
        assert_eq!(slice(TOOL, items[0].span), "\"{tool_path}\"");
        assert_eq!(slice(TOOL, items[1].span), "--project-path");
        assert_eq!(cfg.value.get("timeout").unwrap().value, Value::Int(300));
        assert_eq!(
            line_of(TOOL, cfg.value.get("timeout").unwrap().span.start),
            21
        );

        let inputs = m.inputs().unwrap();
        let items = inputs.value.as_list().unwrap();
        assert_eq!(line_of(TOOL, items[1].span.start), 25);
        let ty = items[1].value.get("type").unwrap();
        assert_eq!(
            (slice(TOOL, ty.span), line_of(TOOL, ty.span.start)),
            ("string", 26)
        );
        assert_eq!(m.input_names(), vec!["mode", "path"]);

        let anchor = m.anchor().unwrap();
        assert_eq!(slice(TOOL, anchor.span), "{enabled: true, mode: auto}");
        assert_eq!(
            anchor.value.get("enabled").unwrap().value,
            Value::Bool(true)
        );
        assert_eq!(m.verify_deps().unwrap().value, Value::Null);
        assert_eq!(
            m.config_resolve()
                .as_ref()
                .unwrap()
                .value
                .get("mode")
                .unwrap()
                .value,
            s("merge")
        );
        let cc = m.constraint_for("rye/x/y").unwrap();
        assert_eq!(cc.min_version.as_ref().unwrap().value, "1.0.0");
        assert_eq!(line_of(TOOL, cc.min_version.unwrap().span.start), 34);
    }

    #[test]
    fn scalars_and_tags() {
        let text = "config:\n  i: -12\n  f: 2.5\n  big: 123456789012345678901234567890\n  inf: .inf\n  t: yes_not_bool\n  b: false\n  n: null\n  tilde: ~\n  tagged: !custom {x: 1}\n  str_tag: !!str 12\n  hex: 0x1F\n  block: |\n    line one\n    line two\n  folded: >-\n    a\n    b\n  1: int key\n  true: bool key\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let cfg = p.metadata.config().unwrap().value.clone();
        let get = |k: &str| cfg.get(k).unwrap().value.clone();
        assert_eq!(get("i"), Value::Int(-12));
        assert_eq!(get("f"), Value::Float(F64(2.5)));
        assert_eq!(get("big"), Value::Float(F64(1.2345678901234568e29)));
        assert_eq!(get("inf"), Value::Float(F64(f64::INFINITY)));
        assert_eq!(get("t"), s("yes_not_bool"));
        assert_eq!(get("b"), Value::Bool(false));
        assert_eq!(get("n"), Value::Null);
        assert_eq!(get("tilde"), Value::Null);
        assert_eq!(get("tagged").to_json(), serde_json::json!({"x": 1}));
        assert_eq!(get("str_tag"), s("12"));
        assert_eq!(get("hex"), Value::Int(31));
        assert_eq!(get("block"), s("line one\nline two\n"));
        assert_eq!(get("folded"), s("a b"));
        assert_eq!(get("1"), s("int key"));
        assert_eq!(get("true"), s("bool key"));
        let block = cfg.get("block").unwrap();
        assert_eq!(slice(text, block.span), "block: |");
    }

    #[test]
    fn duplicate_keys_later_wins_and_merge_keys() {
        let text = "version: 0.1.0\nversion: 0.2.0\nbase: &base\n  command: python\n  timeout: 10\nconfig:\n  <<: *base\n  timeout: 20\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let v = p.metadata.version().unwrap();
        assert_eq!(v.value, s("0.2.0"));
        assert_eq!(line_of(text, v.span.start), 2);
        let cfg = p.metadata.config().unwrap();
        assert_eq!(cfg.value.get("command").unwrap().value, s("python"));
        assert_eq!(cfg.value.get("timeout").unwrap().value, Value::Int(20));
        assert_eq!(
            line_of(text, cfg.value.get("timeout").unwrap().span.start),
            8
        );
    }

    #[test]
    fn quoted_keys_and_compact_sequences() {
        let text = "\"version\": '2.0.0'\n'outputs':\n- a\n- b\ninputs: [x, y]\n";
        let p = parse_yaml(text);
        let m = p.metadata;
        assert_eq!(slice(text, m.version().unwrap().span), "'2.0.0'");
        let outs = m.outputs().unwrap();
        let items = outs.value.as_list().unwrap();
        assert_eq!(line_of(text, items[1].span.start), 4);
        assert_eq!(slice(text, items[1].span), "b");
        assert_eq!(
            m.inputs().unwrap().value.to_json(),
            serde_json::json!(["x", "y"])
        );
    }

    #[test]
    fn nested_sequences_and_maps_in_items() {
        let text = "config:\n  matrix:\n    - - 1\n      - 2\n    -\n      name: x\n      deep:\n        - k: v\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let m = p.metadata.config().unwrap();
        let matrix = m
            .value
            .get("matrix")
            .unwrap()
            .value
            .as_list()
            .unwrap()
            .to_vec();
        let inner = matrix[0].value.as_list().unwrap();
        assert_eq!(
            (
                slice(text, inner[1].span),
                line_of(text, inner[1].span.start)
            ),
            ("2", 4)
        );
        let name = matrix[1].value.get("name").unwrap();
        assert_eq!(
            (slice(text, name.span), line_of(text, name.span.start)),
            ("x", 6)
        );
        let deep = matrix[1]
            .value
            .get("deep")
            .unwrap()
            .value
            .as_list()
            .unwrap();
        let k = deep[0].value.get("k").unwrap();
        assert_eq!((slice(text, k.span), line_of(text, k.span.start)), ("v", 8));
    }

    #[test]
    fn syntax_error_location() {
        let text = "version: 1.0.0\nconfig:\n  args: [a, b\n  other: 1\n";
        let p = parse_yaml(text);
        assert_eq!(p.metadata, Default::default());
        assert_eq!(p.problems.len(), 1);
        let problem = &p.problems[0];
        assert!(
            problem.message.starts_with("YAML syntax error: "),
            "{}",
            problem.message
        );
        assert_eq!(line_of(text, problem.span.start), 4);

        let text = "é: 1\nkey: 'unterminated\n";
        let p = parse_yaml(text);
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].span.end as usize <= text.len());

        let text = "a: b: c\n";
        let p = parse_yaml(text);
        assert_eq!(p.problems.len(), 1);
        assert_eq!(slice(text, p.problems[0].span), ":");
    }

    #[test]
    fn non_mapping_and_empty_documents() {
        for text in ["- a\n- b\n", "just a string\n", "42\n"] {
            let p = parse_yaml(text);
            assert_eq!(p.metadata, Default::default());
            assert_eq!(p.problems.len(), 1, "{text:?}");
            assert!(
                p.problems[0]
                    .message
                    .starts_with("YAML document is not a mapping")
            );
            assert_eq!(p.problems[0].span.start, 0);
        }
        for text in [
            "",
            "\n",
            "# rye:validated:abc\n",
            "---\n",
            "~\n",
            "\u{feff}",
        ] {
            let p = parse_yaml(text);
            assert_eq!(p, ParsedFile::default(), "{text:?}");
        }
    }

    #[test]
    fn signature_line_and_document_markers() {
        let text =
            "# rye:validated:2025:hash\n%YAML 1.2\n---\nversion: 3.0.0\nexecutor_id: null\n---\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let v = p.metadata.version().unwrap();
        assert_eq!(line_of(text, v.span.start), 4);
        assert_eq!(p.metadata.executor_id().unwrap().value, Value::Null);
    }

    #[test]
    fn multi_document_streams() {
        let text = "version: 1.0.0\n---\nversion: 2.0.0\n";
        let p = parse_yaml(text);
        assert_eq!(p.metadata.version().unwrap().value, s("1.0.0"));
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.contains("more than one document"));
        assert_eq!(slice(text, p.problems[0].span), "---");

        let text = "version: 1.0.0\n---\nbad: [\n";
        let p = parse_yaml(text);
        assert_eq!(p.metadata.version().unwrap().value, s("1.0.0"));
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.starts_with("YAML syntax error"));
    }

    #[test]
    fn crlf_and_bom() {
        let text = "\u{feff}version: 1.0.0\r\nconfig:\r\n  a: x\r\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(slice(text, p.metadata.version().unwrap().span), "1.0.0");
        let a = p.metadata.config().unwrap().value.get("a").unwrap().clone();
        assert_eq!(slice(text, a.span), "x");
    }

    #[test]
    fn bom_error_offsets_point_into_the_text() {
        let text = "\u{feff}a: 1\nb: [\n";
        let p = parse_yaml(text);
        assert_eq!(p.problems.len(), 1);
        assert_eq!(p.problems[0].span, Span::empty(text.len()));
    }

    #[test]
    fn unlocatable_keys_stay_fast_and_fall_back_to_the_parent_span() {
        let mut text = String::from("config:\n");
        for i in 0..20_000 {
            text.push_str(&format!("  \"k\\x41{i}\": {i}\n"));
        }
        text.push_str("version: 1.0.0\n");
        let p = parse_yaml(&text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let cfg = p.metadata.config().unwrap();
        let entry = cfg.value.get("kA19999").unwrap();
        assert_eq!(entry.value, Value::Int(19999));
        assert_eq!(entry.span, cfg.span);
        assert_eq!(slice(&text, p.metadata.version().unwrap().span), "1.0.0");
    }

    #[test]
    fn non_scalar_key_is_reported() {
        let text = "config:\n  ? [1, 2]\n  : x\n  ok: 1\n";
        let p = parse_yaml(text);
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.contains("not a scalar"));
        assert_eq!(
            p.metadata.config().unwrap().value.to_json(),
            serde_json::json!({"ok": 1})
        );
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        let text = format!("config: {}1{}\n", "[".repeat(10_000), "]".repeat(10_000));
        let p = parse_yaml(&text);
        assert_eq!(p.problems.len(), 1);
        let text = format!("config: {}1{}\n", "[".repeat(100), "]".repeat(100));
        assert!(parse_yaml(&text).metadata.config().is_some());
    }
}
