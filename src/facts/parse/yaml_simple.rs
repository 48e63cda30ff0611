//! YAML documents of the plain shape tool headers have, loaded without libyaml: block mappings
//! with simple keys, block sequences (indented, indentless, compact `- key: value`), one-line
//! plain, quoted and flow-sequence scalars, comments and blank lines.
//!
//! A 500-byte tool file cost libyaml about 20 µs (its reader decodes and checks every character
//! into a buffer, its scanner keeps a token queue); this reads such a file line by line. It
//! answers only for texts it fully understands and gives up (`None`, and `yaml_fast` takes the
//! text) at anything else: tabs, CR, control characters, directives and document markers,
//! anchors/tags/aliases, block scalars (`|`, `>`), flow mappings, nested or multi-line flow
//! collections, escapes in quoted scalars, quoted or complex keys, multi-line plain scalars, a
//! value whose plain text holds `: `, any indentation YAML would refuse, nesting past
//! `MAX_NESTING`. Where it answers, it answers what `yaml_fast` answers: the plain scalars are
//! resolved by the same function, the structure is YAML's (`tests::agrees_with_libyaml`, a
//! differential proptest over generated and mutated documents).

use super::yaml_fast::{Fast, untagged_plain};
use super::yaml_node::{
    MAX_KEY_CANDIDATES, Rest, YNode, key_string, only_node_properties, unread_top_level_key,
};
use super::{MAX_NESTING, clamp_span};
use crate::model::{F64, Span, Spanned, Str, Value};

/// One line with content (blank and comment-only lines are left out).
#[derive(Clone, Copy)]
struct Line<'t> {
    indent: usize,
    /// From the first non-space character, trailing spaces cut.
    text: &'t str,
    /// Offset in the text of the physical line this is part of (a compact `- key: value` item
    /// is read again from the key on, at its column, on the same physical line).
    start: usize,
}

/// The lines with content of `text` (printable, see [`all_printable`]); `None` at a directive
/// or a document marker.
fn content_lines(text: &str) -> Option<Vec<Line<'_>>> {
    let mut lines = Vec::new();
    let mut start = 0;
    for raw in super::split_newlines(text) {
        let at = start;
        start += raw.len() + 1;
        let trimmed = raw.trim_end_matches(' ');
        let body = trimmed.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if raw.starts_with('%') || raw.starts_with("---") || raw.starts_with("...") {
            return None;
        }
        lines.push(Line {
            indent: trimmed.len() - body.len(),
            text: body,
            start: at,
        });
    }
    Some(lines)
}

/// Load `text` (no BOM), or `None` when it is not of the shape this loader reads.
pub(super) fn load(text: &str) -> Option<Fast> {
    if !all_printable(text) {
        return None;
    }
    let lines = content_lines(text)?;
    let mut r = Reader {
        lines,
        at: 0,
        depth: 0,
        max_depth: 0,
    };
    let first = if r.lines.is_empty() {
        YNode::Null
    } else {
        let indent = r.lines[0].indent;
        let root = r.block(indent, true)?;
        if r.at != r.lines.len() {
            return None;
        }
        root
    };
    Some(Fast::Loaded {
        first,
        rest: Rest::Nothing,
        max_depth: r.max_depth,
    })
}

/// A block mapping's entries, keys and values spanned.
type Entries = Vec<(Spanned<Str>, Spanned<Value>)>;

/// The top-level entries of `text` with the spans `yaml::parse_yaml_located` gives them (its
/// locator re-finds every key and value in the text after the load), in one pass; top-level
/// entries that feed no field are read and left out, as that path leaves them out. `None`
/// (the located path answers) for anything [`load`] declines, and for what the locator would
/// not place where the value was read: a root that is not a block mapping at column 0, a key
/// that does not read back as written (`0x1F:`, `True:`), a key after more lines at its
/// mapping's indentation than the locator tries, whitespace other than spaces and line breaks,
/// nesting near the depth guard, a BOM.
pub(super) fn load_spanned(text: &str) -> Option<Entries> {
    if text.starts_with('\u{feff}') || !all_printable(text) {
        return None;
    }
    // The locator trims and indents with Unicode whitespace; this reader with spaces only.
    if !text.is_ascii()
        && text
            .chars()
            .any(|c| c.is_whitespace() && c != ' ' && c != '\n')
    {
        return None;
    }
    let lines = content_lines(text)?;
    let first = lines.first()?;
    if first.indent != 0 || key_of(first.text).is_none() {
        return None;
    }
    let mut sp = Spanner {
        text,
        r: Reader {
            lines,
            at: 0,
            depth: 0,
            max_depth: 0,
        },
    };
    let entries = sp.mapping(0, true)?;
    let r = &sp.r;
    (r.at == r.lines.len() && r.max_depth <= MAX_NESTING / 2).then_some(entries)
}

/// The spanned reader: [`Reader`]'s walk over the lines, each value spanned as the locator of
/// `yaml.rs` spans it (`Locator::value_site`, `item_site`, `inline_rest`).
struct Spanner<'t> {
    text: &'t str,
    /// The line cursor and depth count, shared with [`Reader`] (whose node-building walk this
    /// one does not use).
    r: Reader<'t>,
}

impl<'t> Spanner<'t> {
    fn peek(&self) -> Option<Line<'t>> {
        self.r.peek()
    }

    fn enter(&mut self) -> Option<()> {
        self.r.enter()
    }

    fn span(&self, start: usize, end: usize) -> Span {
        clamp_span(self.text, start, end)
    }

    /// Where the content of `line` ends (trailing spaces cut): the end of a block value's span.
    fn content_end(line: Line<'_>) -> usize {
        line.start + line.indent + line.text.len()
    }

    /// The block node at `indent` starting on the current line.
    fn block(&mut self, indent: usize) -> Option<Value> {
        let line = self.peek()?;
        if line.indent != indent {
            return None;
        }
        if is_dash(line.text) {
            Some(Value::List(self.sequence(indent)?.0.into_boxed_slice()))
        } else if key_of(line.text).is_some() {
            Some(Value::Map(self.mapping(indent, false)?.into_boxed_slice()))
        } else {
            None
        }
    }

    /// A block mapping whose keys sit at `indent`.
    fn mapping(&mut self, indent: usize, top: bool) -> Option<Entries> {
        self.enter()?;
        let mut entries = Vec::new();
        // Lines at this indentation since the last key (an indentless sequence's dashes): the
        // locator gives up on a key past `MAX_KEY_CANDIDATES` of them.
        let mut passed = 0;
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let (key, rest) = key_of(line.text)?;
            if passed + 1 > MAX_KEY_CANDIDATES {
                return None;
            }
            let key_node = untagged_plain(key);
            if !matches!(&key_node, YNode::Str(_)) && key_string(&key_node)? != key {
                return None;
            }
            self.r.at += 1;
            let key_start = line.start + line.indent;
            let key_span = self.span(key_start, key_start + key.len());
            passed = 0;
            let (value, span) = if value_is_empty(rest) {
                let span = self.span(key_start, Self::content_end(line));
                let value = match self.peek() {
                    Some(next) if next.indent > indent => self.block(next.indent)?,
                    // An indentless sequence: its dashes sit at the keys' indentation.
                    Some(next) if next.indent == indent && is_dash(next.text) => {
                        let (items, dashes) = self.sequence(indent)?;
                        passed = dashes;
                        Value::List(items.into_boxed_slice())
                    }
                    _ => Value::Null,
                };
                (value, span)
            } else {
                let (s, e) = self.inline_span(line, key_start + key.len() + 1)?;
                let span = self.span(s, e);
                (self.inline(rest.trim_start_matches(' '), span)?, span)
            };
            if top && unread_top_level_key(&key_node) {
                continue;
            }
            entries.push((
                Spanned::new(Str::from(key), key_span),
                Spanned::new(value, span),
            ));
        }
        self.r.depth -= 1;
        Some(entries)
    }

    /// A block sequence whose dashes sit at `indent`, and how many dashes it has.
    fn sequence(&mut self, indent: usize) -> Option<(Vec<Spanned<Value>>, usize)> {
        self.enter()?;
        let mut items = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent || (line.indent == indent && !is_dash(line.text)) {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let dash = line.start + line.indent;
            let after = &line.text[1..];
            let item = after.trim_start_matches(' ');
            let content = dash + 1 + (after.len() - item.len());
            if value_is_empty(item) {
                self.r.at += 1;
                let span = self.span(dash, Self::content_end(line));
                let value = match self.peek() {
                    Some(next) if next.indent > indent => self.block(next.indent)?,
                    _ => Value::Null,
                };
                items.push(Spanned::new(value, span));
            } else if is_dash(item) || key_of(item).is_some() {
                // `- key: value` or `- - x`: a nested block starting on the dash's line, at
                // the column of its first character; spanned from the dash to the line's end.
                let span = self.span(dash, Self::content_end(line));
                let column = content - line.start;
                self.r.lines[self.r.at] = Line {
                    indent: column,
                    text: item,
                    start: line.start,
                };
                items.push(Spanned::new(self.block(column)?, span));
            } else {
                self.r.at += 1;
                let (s, e) = self.inline_span(line, content)?;
                let span = self.span(s, e);
                items.push(Spanned::new(self.inline(item, span)?, span));
            }
        }
        self.r.depth -= 1;
        let dashes = items.len();
        Some((items, dashes))
    }

    /// A value written on its line (see [`Reader::inline`]); a flow sequence's items take its
    /// span, as the locator gives them.
    fn inline(&mut self, text: &str, span: Span) -> Option<Value> {
        if let Some(inner) = text.strip_prefix('[') {
            let (items, after) = inner.split_once(']')?;
            if !comment_or_nothing(after) {
                return None;
            }
            self.enter()?;
            let mut out = Vec::new();
            let items = items.trim_matches(' ');
            if !items.is_empty() {
                for item in items.split(',') {
                    out.push(Spanned::new(
                        scalar_value(flow_scalar(item.trim_matches(' '))?),
                        span,
                    ));
                }
            }
            self.r.depth -= 1;
            return Some(Value::List(out.into_boxed_slice()));
        }
        let (node, after) = scalar(text, false)?;
        comment_or_nothing(after).then(|| scalar_value(node))
    }

    /// The locator's `inline_rest` on `line` from byte `from` of the text: the value's text with
    /// a trailing comment cut (a `#` after a space, outside the quotes it pairs along the line)
    /// and the ends trimmed; `None` when nothing or only node properties are there.
    fn inline_span(&self, line: Line<'_>, from: usize) -> Option<(usize, usize)> {
        let rest = self.text.get(from..Self::content_end(line))?;
        let body = rest.trim_start_matches(' ');
        let lead = rest.len() - body.len();
        let mut end = body.len();
        let mut quote: Option<u8> = None;
        let mut prev_space = true;
        for (i, &c) in body.as_bytes().iter().enumerate() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == b'#' && prev_space => {
                    end = i;
                    break;
                }
                None if c == b'"' || c == b'\'' => quote = Some(c),
                None => {}
            }
            prev_space = c == b' ';
        }
        let body = body[..end].trim_end_matches(' ');
        if only_node_properties(body) {
            return None;
        }
        let start = from + lead;
        Some((start, start + body.len()))
    }
}

/// A scalar node as a value.
fn scalar_value(node: YNode) -> Value {
    match node {
        YNode::Str(s) => Value::Str(s.into()),
        YNode::Int(i) => Value::Int(i),
        YNode::Float(f) => Value::Float(F64(f)),
        YNode::Bool(b) => Value::Bool(b),
        YNode::Null | YNode::Skipped | YNode::Seq(_) | YNode::Map(_) => Value::Null,
    }
}

/// What libyaml's reader accepts (`IS_PRINTABLE`), less tabs and CR, which this loader leaves
/// to libyaml.
/// Every character `printable`: printable ASCII and `\n` checked a block at a time (no early
/// exit, so the loop vectorizes), anything else a character at a time.
fn all_printable(text: &str) -> bool {
    let plain = text.bytes().fold(true, |ok, b| {
        ok & ((b' '..=b'~').contains(&b) | (b == b'\n'))
    });
    plain || text.chars().all(printable)
}

/// libyaml's line breaks NEL, LS and PS are left to it too.
fn printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        && !matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}')
}

struct Reader<'t> {
    lines: Vec<Line<'t>>,
    at: usize,
    depth: usize,
    max_depth: usize,
}

impl<'t> Reader<'t> {
    fn peek(&self) -> Option<Line<'t>> {
        self.lines.get(self.at).copied()
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
        (self.depth <= MAX_NESTING).then_some(())
    }

    /// The block node whose first line is the current one, at `indent`.
    fn block(&mut self, indent: usize, top: bool) -> Option<YNode> {
        let line = self.peek()?;
        if line.indent != indent {
            return None;
        }
        if is_dash(line.text) {
            self.sequence(indent)
        } else if key_of(line.text).is_some() {
            self.mapping(indent, top)
        } else {
            None
        }
    }

    /// A block mapping whose keys sit at `indent`.
    fn mapping(&mut self, indent: usize, top: bool) -> Option<YNode> {
        self.enter()?;
        let mut entries = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let (key, rest) = key_of(line.text)?;
            self.at += 1;
            let key = untagged_plain(key);
            let value = if value_is_empty(rest) {
                match self.peek() {
                    Some(next) if next.indent > indent => self.block(next.indent, false)?,
                    // An indentless sequence: YAML lets a mapping's value list sit at its keys'
                    // indentation.
                    Some(next) if next.indent == indent && is_dash(next.text) => {
                        self.sequence(indent)?
                    }
                    _ => YNode::Null,
                }
            } else {
                // A more indented line next (a continued plain scalar, or an error) ends the
                // loop below with `None`.
                self.inline(rest.trim_start_matches(' '))?
            };
            let value = if top && unread_top_level_key(&key) {
                YNode::Skipped
            } else {
                value
            };
            entries.push((key, value));
        }
        self.depth -= 1;
        Some(YNode::Map(entries))
    }

    /// A block sequence whose dashes sit at `indent`.
    fn sequence(&mut self, indent: usize) -> Option<YNode> {
        self.enter()?;
        let mut items = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent || (line.indent == indent && !is_dash(line.text)) {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let after = &line.text[1..];
            let item = after.trim_start_matches(' ');
            if value_is_empty(item) {
                self.at += 1;
                items.push(match self.peek() {
                    Some(next) if next.indent > indent => self.block(next.indent, false)?,
                    _ => YNode::Null,
                });
            } else if is_dash(item) || key_of(item).is_some() {
                // `- key: value` or `- - x`: a nested block starting on the dash's line, at
                // the column of its first character.
                let column = indent + 1 + (after.len() - item.len());
                self.lines[self.at] = Line {
                    indent: column,
                    text: item,
                    start: line.start,
                };
                items.push(self.block(column, false)?);
            } else {
                self.at += 1;
                items.push(self.inline(item)?);
            }
        }
        self.depth -= 1;
        Some(YNode::Seq(items))
    }

    /// A value written on its line: a quoted or plain scalar, or a flow sequence of scalars.
    fn inline(&mut self, text: &str) -> Option<YNode> {
        if let Some(inner) = text.strip_prefix('[') {
            let (items, after) = inner.split_once(']')?;
            if !comment_or_nothing(after) {
                return None;
            }
            self.enter()?;
            let mut out = Vec::new();
            let items = items.trim_matches(' ');
            if !items.is_empty() {
                for item in items.split(',') {
                    out.push(flow_scalar(item.trim_matches(' '))?);
                }
            }
            self.depth -= 1;
            return Some(YNode::Seq(out));
        }
        let (node, after) = scalar(text, false)?;
        comment_or_nothing(after).then_some(node)
    }
}

/// Whether a line is a sequence entry (`-` alone or followed by a space).
fn is_dash(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// A value part that is empty or only a comment.
fn value_is_empty(rest: &str) -> bool {
    let rest = rest.trim_start_matches(' ');
    rest.is_empty() || rest.starts_with('#')
}

/// What may follow a value on its line: nothing, or spaces and a comment.
fn comment_or_nothing(after: &str) -> bool {
    after.is_empty() || (after.starts_with(' ') && value_is_empty(after))
}

/// `key: rest` with a simple plain key (letters, digits, `_`, `-`, `.`, `/`; starting with a
/// letter, digit or `_`): the key and what follows the `:`.
fn key_of(text: &str) -> Option<(&str, &str)> {
    // The key's bytes, then its `:` (not a search for the `:` along the whole line).
    let b = text.as_bytes();
    let first = *b.first()?;
    if !(first.is_ascii_alphanumeric() || first == b'_') {
        return None;
    }
    let colon = b
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/')))
        .filter(|&n| b[n] == b':')?;
    let (key, rest) = (&text[..colon], &text[colon + 1..]);
    (rest.is_empty() || rest.starts_with(' ')).then_some((key, rest))
}

/// A scalar at the start of `text` and what follows it on the line. `flow`: inside `[...]`,
/// where a plain scalar also ends at `,` (the caller splits there) and may not hold `[]{}`.
fn scalar(text: &str, flow: bool) -> Option<(YNode, &str)> {
    let first = text.chars().next()?;
    match first {
        '"' => {
            let inner = &text[1..];
            let end = inner.find('"')?;
            let value = &inner[..end];
            if value.contains('\\') {
                return None;
            }
            Some((YNode::Str(value.to_owned()), &inner[end + 1..]))
        }
        '\'' => {
            let inner = &text[1..];
            let end = inner.find('\'')?;
            if inner[end + 1..].starts_with('\'') {
                return None;
            }
            Some((YNode::Str(inner[..end].to_owned()), &inner[end + 1..]))
        }
        _ => {
            // Indicators that start something else (or need libyaml's judgement).
            if matches!(
                first,
                '-' | '?'
                    | ':'
                    | ','
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '#'
                    | '&'
                    | '*'
                    | '!'
                    | '|'
                    | '>'
                    | '%'
                    | '@'
                    | '`'
            ) {
                // `-1`, `-x`: a plain scalar; `- ` was taken as a sequence entry before.
                if !(first == '-' && text.len() > 1 && !text[1..].starts_with(' ')) {
                    return None;
                }
            }
            let end = followed_by(text, b'#', true).unwrap_or(text.len());
            let value = text[..end].trim_end_matches(' ');
            if followed_by(value, b':', false).is_some() || value.ends_with(':') {
                return None;
            }
            if flow && value.contains(['[', ']', '{', '}', ',', ':']) {
                return None;
            }
            Some((untagged_plain(value), &text[value.len()..]))
        }
    }
}

/// The first `c` in `text` preceded by a space (`after_space`: `" #"`, a comment) or followed by
/// one (`": "`, a mapping value).
fn followed_by(text: &str, c: u8, after_space: bool) -> Option<usize> {
    let b = text.as_bytes();
    memchr::memchr_iter(c, b).find(|&at| {
        if after_space {
            at > 0 && b[at - 1] == b' '
        } else {
            b.get(at + 1) == Some(&b' ')
        }
    })
}

/// One item of a one-line flow sequence: a scalar and nothing else.
fn flow_scalar(item: &str) -> Option<YNode> {
    if item.is_empty() || item.contains('#') {
        return None;
    }
    let (node, after) = scalar(item, true)?;
    after.trim_matches(' ').is_empty().then_some(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A single document's root and depth.
    fn loaded(fast: Fast) -> Option<(YNode, usize)> {
        match fast {
            Fast::Loaded {
                first,
                rest: Rest::Nothing,
                max_depth,
            } => Some((first, max_depth)),
            _ => None,
        }
    }

    fn fast(text: &str) -> Option<(YNode, usize)> {
        loaded(crate::parse::yaml_fast::load(text))
    }

    fn simple(text: &str) -> Option<(YNode, usize)> {
        loaded(load(text)?)
    }

    /// Where this loader answers, libyaml (through `yaml_fast`) loads the same document.
    fn agree(text: &str) -> bool {
        match simple(text) {
            None => false,
            Some(got) => {
                assert_eq!(Some(got), fast(text), "{text:?}");
                true
            }
        }
    }

    #[test]
    fn reads_tool_headers_as_libyaml_does() {
        for text in [
            "",
            "# only a comment\n\n",
            "version: \"3.0.15\"\ntool_type: mcp\nexecutor_id: \"acme/runtimes/x\"\n\nconfig:\n  server: \"mcp/servers/jira\"\n  timeout: 30\n",
            "config_schema:\n  type: object\n  required: [source]\n  properties:\n    source: {}\n",
            "args:\n  - \"{database_url}\"\n  - --format=custom\n  - s3://{bucket}/{prefix}\n",
            "list:\n- a\n- b # note\nnext: 1\n",
            "steps:\n  - action: run\n    params:\n      limit: 5\n  - action: stop\n",
            "-   a: 1\n    b: 2\n-   c: 3\n",
            "a:\n  - - 1\n    - 2\n  -\n    b: c\n  -\n",
            "x: -1\ny: -x\nz: 'single # not a comment'\nw: plain # comment\nv: []\nu: [a, 'b', \"c\", 1, true]\n",
            "version: 1.0.0\nn: ~\nm:\nl: 0x1F\nk: 012\nj: yes\n",
            "url: http://example.com/a:b\nkey.with-dash/slash: é漢字\n",
        ] {
            if text.contains("source: {}") {
                assert!(simple(text).is_none(), "flow mappings are libyaml's");
                continue;
            }
            assert!(agree(text), "declined: {text:?}");
        }
    }

    /// The spanned reader declines what the locator would place elsewhere or not at all, and
    /// answers as it does on the shapes near those.
    #[test]
    fn spanned_reader_declines_what_the_locator_places_otherwise() {
        let dashes = "- x\n".repeat(70);
        for text in [
            "  config: 1\n".to_owned(),
            "config:\n  0x1F: a\n".to_owned(),
            "config:\n  True: a\n".to_owned(),
            "config:\n  1.50: a\n".to_owned(),
            format!(
                "config:\n  list:\n{}  next: 1\n",
                dashes.replace("- ", "  - ")
            ),
            "config: a\u{a0}b\n".to_owned(),
            "\u{feff}config: 1\n".to_owned(),
            "- a\n".to_owned(),
            String::new(),
        ] {
            assert!(load_spanned(&text).is_none(), "answered: {text:?}");
        }
        for text in [
            "config:\n  123: a\n  true: b\n  1.5: c\n  null: d\n".to_owned(),
            format!("config:\n  list:\n{}  next: 1\n", "  - x\n".repeat(60)),
            "config: it's \"x\" # c\ninputs:\n- - a\n  - b\n-   k: [1, 'two']\n    j: ~\n-\n  z: 1\n".to_owned(),
            "description: é漢字 # note\nversion: 1.0.0\nother:\n  a: [skipped]\n".to_owned(),
        ] {
            let verdict = crate::parse::yaml_spans_agree(&text);
            assert!(matches!(verdict, Some(Ok(()))), "{text:?}: {verdict:?}");
        }
    }

    #[test]
    fn gives_up_on_what_it_does_not_read() {
        for text in [
            "a: |\n  block\n",
            "a: >\n  folded\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "---\na: 1\n",
            "a: 1\n---\nb: 2\n",
            "%YAML 1.2\n---\na: 1\n",
            "a:\tb\n",
            "a: 1\r\nb: 2\r\n",
            "a: \"esc\\n\"\n",
            "a: 'it''s'\n",
            "\"quoted\": key\n",
            "a: b: c\n",
            "a: long\n  continued\n",
            "a: 1\n  b: 2\n",
            "a: [1, [2]]\n",
            "a: [1] x\n",
            "a: 'x' y\n",
            "a: \"x\"y\n",
            "a: [1,\n  2]\n",
            "a: {b: 1}\n",
            "just a scalar\n",
            "- 1\nb: 2\n",
            "a: 1\n b: 2\n",
            "? complex\n: value\n",
            "a: \u{1}\n",
        ] {
            assert!(simple(text).is_none(), "answered: {text:?}");
        }
    }

    /// Generated documents: mappings and sequences nested a few levels, every scalar form this
    /// loader reads and several it does not, comments, blank lines, indentless and compact
    /// sequences; then the same documents with one character inserted, removed or replaced.
    mod differential {
        use super::*;
        use proptest::prelude::*;

        fn scalar_text() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-z][a-z0-9_./:-]{0,8}",
                "-?[0-9]{1,4}(\\.[0-9]{1,2})?",
                Just("true".to_owned()),
                Just("null".to_owned()),
                Just("~".to_owned()),
                Just("0x1F".to_owned()),
                Just("012".to_owned()),
                "\"[a-z #:,'\\[\\]{}]{0,6}\"",
                "'[a-z #:,\"\\[\\]]{0,6}'",
                "\\[([a-z0-9]{1,3}(, ?[a-z0-9'\"]{1,3}){0,2})?\\]",
                "[a-z]{1,3}( #[a-z ]{0,4})?",
                Just("a: b".to_owned()),
                "[a-z]{1,3}#[a-z]{1,2}",
                "'[a-z]{0,2}''[a-z]{0,2}'",
                Just("|".to_owned()),
                Just("&x y".to_owned()),
            ]
        }

        fn key() -> impl Strategy<Value = String> {
            "[a-z_][a-z0-9_-]{0,5}"
        }

        #[derive(Clone, Debug)]
        enum Doc {
            Scalar(String),
            Map(Vec<(String, Doc)>),
            Seq(Vec<Doc>),
        }

        fn doc() -> impl Strategy<Value = Doc> {
            let leaf = scalar_text().prop_map(Doc::Scalar);
            leaf.prop_recursive(4, 24, 4, |inner| {
                prop_oneof![
                    proptest::collection::vec((key(), inner.clone()), 1..4).prop_map(Doc::Map),
                    proptest::collection::vec(inner, 1..4).prop_map(Doc::Seq),
                ]
            })
        }

        /// `doc` written at `indent`; `style` picks indentless/compact forms and comments.
        fn write(doc: &Doc, indent: usize, style: u8, out: &mut String) {
            let pad = " ".repeat(indent);
            match doc {
                Doc::Scalar(s) => {
                    out.push_str(&pad);
                    out.push_str(s);
                    out.push('\n');
                }
                Doc::Map(entries) => {
                    for (i, (k, v)) in entries.iter().enumerate() {
                        if style & 4 != 0 && i == 1 {
                            out.push_str(&format!("{pad}# note\n\n"));
                        }
                        match v {
                            Doc::Scalar(s) => out.push_str(&format!("{pad}{k}: {s}\n")),
                            Doc::Seq(_) if style & 1 != 0 => {
                                out.push_str(&format!("{pad}{k}:\n"));
                                write(v, indent, style, out);
                            }
                            _ => {
                                out.push_str(&format!("{pad}{k}:\n"));
                                write(v, indent + 2, style, out);
                            }
                        }
                    }
                }
                Doc::Seq(items) => {
                    for v in items {
                        match v {
                            Doc::Scalar(s) => out.push_str(&format!("{pad}- {s}\n")),
                            Doc::Map(_) | Doc::Seq(_) if style & 2 != 0 => {
                                // Compact: the nested block starts on the dash's line.
                                let gap = if style & 8 != 0 { "   " } else { " " };
                                let mut nested = String::new();
                                write(v, indent + 1 + gap.len(), style, &mut nested);
                                let trimmed = nested.trim_start_matches(' ');
                                out.push_str(&format!("{pad}-{gap}{trimmed}"));
                            }
                            _ => {
                                out.push_str(&format!("{pad}-\n"));
                                write(v, indent + 2, style, out);
                            }
                        }
                    }
                }
            }
        }

        /// One character inserted at, removed at or put in place of the one at a byte offset
        /// (moved back to a character boundary), as the strategies' `edit` says.
        fn apply_edit(text: &mut String, edit: Option<(usize, u8, String)>) {
            let Some((at, how, c)) = edit else {
                return;
            };
            let mut at = at.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match how {
                0 => text.insert_str(at, &c),
                1 if at < text.len() => {
                    text.remove(at);
                }
                _ if at < text.len() => {
                    text.remove(at);
                    text.insert_str(at, &c);
                }
                _ => {}
            }
        }

        /// Keys that feed fields (so their values are read at the top level) and others.
        fn top_key() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("config".to_owned()),
                Just("inputs".to_owned()),
                Just("env_config".to_owned()),
                Just("version".to_owned()),
                Just("config_schema".to_owned()),
                key(),
                Just("123".to_owned()),
                Just("true".to_owned()),
                Just("True".to_owned()),
                Just("0x1F".to_owned()),
                Just("1.50".to_owned()),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(3000))]
            /// Where the one-pass spanned reader answers, it gives the entries, values and
            /// spans the load-then-locate path gives; the documents are nested under keys
            /// that feed fields, so their insides are read, and then edited as above.
            #[test]
            fn spans_agree_with_the_locator(
                entries in proptest::collection::vec((top_key(), doc()), 1..4),
                style in 0u8..16,
                edit in proptest::option::of((0usize..400, 0u8..3, "[ a:#\\-\n\\[\\]'\"\u{a0}é]")),
            ) {
                let d = Doc::Map(entries);
                let mut text = String::new();
                write(&d, 0, style, &mut text);
                apply_edit(&mut text, edit);
                if let Some(verdict) = crate::parse::yaml_spans_agree(&text) {
                    prop_assert!(verdict.is_ok(), "{:?}\n{}", text, verdict.unwrap_err());
                }
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn agrees_with_libyaml(
                d in doc(),
                style in 0u8..16,
                edit in proptest::option::of((0usize..400, 0u8..3, "[ a:#\\-\n\\[\\]'\"]")),
            ) {
                let mut text = String::new();
                write(&d, 0, style, &mut text);
                apply_edit(&mut text, edit);
                if let Some(got) = simple(&text) {
                    prop_assert_eq!(Some(got), fast(&text), "{:?}", text);
                }
            }
        }
    }
}
