//! A YAML stream loaded from libyaml's events (`yaml_events`) into spanned values, by the rules
//! `serde_yaml` 0.9 reads a document with (the reference reads headers with Python's
//! `safe_load`; serde_yaml is its stand-in for types, tags and errors).
//!
//! Two steps. The builder turns the events of each document into [`Node`]s that keep libyaml's
//! marks: a scalar spans its written text (quotes and block indicators included), a flow
//! collection its brackets, a block collection its first key or dash to the end of its last
//! entry. Anchored nodes are shared (`Rc`) and an alias points at its anchor, so a chain of
//! aliases costs what its text costs. The values of top-level keys that feed no field are
//! skipped unbuilt (anchors in them are still built, as a later alias may name them). Then
//! [`Converter`] makes [`Value`]s: plain scalars resolved as serde_yaml resolves them, tags as
//! serde_yaml treats them, `<<` merge keys applied (explicit keys win), aliases expanded with
//! the span of the alias (a finding points where the value is used), under serde_yaml's
//! repetition and recursion limits, with its error texts.
//!
//! Known difference: an alias inside the node it names (`&a [*a]`) is an unknown anchor here;
//! serde_yaml follows it round until its recursion or repetition limit. Both refuse the document.

use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::yaml_events::{Event, Kind, LibyamlError, Parser};
use super::yaml_node::{LoadError, Rest, key_string, unread_top_level_key};
use super::{MAX_NESTING, clamp_span, floor_boundary};
use crate::model::{F64, Span, Spanned, Str, Value};

/// A node as built, with its byte range in the loaded text.
#[derive(Debug)]
pub(super) struct Node {
    kind: NodeKind,
    pub start: usize,
    pub end: usize,
}

impl Node {
    /// The node itself, past the anchor it is defined with.
    fn plain(&self) -> &Node {
        match &self.kind {
            NodeKind::Anchored(inner) => inner.plain(),
            _ => self,
        }
    }
}

#[derive(Debug)]
enum NodeKind {
    Scalar {
        value: Str,
        plain: bool,
        tag: Option<Box<str>>,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
    /// An anchored node where it is defined.
    Anchored(Rc<Node>),
    /// `*name`: the node the anchor names.
    Alias(Rc<Node>),
    /// The value of a top-level key that feeds no field.
    Skipped,
}

/// One document: its root (`None` when empty), the marks of its start and how many events it
/// had (serde_yaml's repetition limit is a multiple of that).
#[derive(Debug)]
pub(super) struct Document {
    pub root: Option<Node>,
    pub start: (usize, usize),
    pub events: usize,
}

/// What the builder made of a stream.
#[derive(Debug)]
pub(super) enum Loaded {
    /// The first document failed to load (or nested past `MAX_NESTING`: `deep`).
    Failed {
        error: LoadError,
        #[cfg_attr(
            not(any(test, feature = "testing")),
            expect(dead_code, reason = "the test oracle reads it")
        )]
        deep: bool,
    },
    /// The first document, what follows it (with the start marks of a later document that has
    /// content), and the deepest nesting met.
    Stream {
        first: Document,
        rest: Rest,
        rest_at: Option<(usize, usize)>,
        max_depth: usize,
    },
}

/// Load `text` (no BOM: the caller cuts it off).
pub(super) fn load(text: &str) -> Loaded {
    let Some(mut parser) = Parser::new(text) else {
        return Loaded::Failed {
            error: LoadError {
                message: "libyaml could not start a parser".to_owned(),
                index: None,
            },
            deep: false,
        };
    };
    let mut b = Builder {
        text,
        parser: &mut parser,
        depth: 0,
        max_depth: 0,
        events: 0,
        anchors: FxHashMap::default(),
    };
    let first = match b.document(true) {
        Ok(Some(doc)) => doc,
        Ok(None) => Document {
            root: None,
            start: (0, 0),
            events: 0,
        },
        Err(Stop { error, deep }) => return Loaded::Failed { error, deep },
    };
    // Later documents: the first with content (or an error) ends the look.
    let (rest, rest_at) = loop {
        match b.document(false) {
            Ok(None) => break (Rest::Nothing, None),
            Ok(Some(doc)) => match Converter::new(text, 0, doc.events).root(doc.root.as_ref()) {
                Ok(
                    None
                    | Some(Spanned {
                        value: Value::Null, ..
                    }),
                ) => continue,
                Ok(Some(_)) => break (Rest::MoreContent, Some(doc.start)),
                Err(e) => break (Rest::Error(e), None),
            },
            Err(Stop { error, .. }) => break (Rest::Error(error), None),
        }
    };
    Loaded::Stream {
        first,
        rest,
        rest_at,
        max_depth: b.max_depth,
    }
}

/// An early end of the builder.
struct Stop {
    error: LoadError,
    deep: bool,
}

impl From<LibyamlError> for Stop {
    fn from(e: LibyamlError) -> Self {
        Stop {
            error: LoadError {
                message: e.message,
                index: Some(e.index),
            },
            deep: false,
        }
    }
}

struct Builder<'p, 't> {
    text: &'t str,
    parser: &'p mut Parser<'t>,
    depth: usize,
    max_depth: usize,
    /// Events of the current document.
    events: usize,
    /// The current document's anchors (each document has its own, as in serde_yaml).
    anchors: FxHashMap<Str, Rc<Node>>,
}

impl Builder<'_, '_> {
    fn next(&mut self) -> Result<Event, Stop> {
        self.events += 1;
        Ok(self.parser.next()?)
    }

    /// The next document; `None` at the end of the stream. `top`: the first document, whose
    /// root's unread keys are skipped.
    fn document(&mut self, top: bool) -> Result<Option<Document>, Stop> {
        self.anchors.clear();
        self.events = 0;
        let mut start = (0, 0);
        loop {
            let ev = self.next()?;
            match ev.kind {
                Kind::StreamStart => {}
                Kind::DocumentStart => start = (ev.start, ev.end),
                Kind::StreamEnd => return Ok(None),
                Kind::DocumentEnd => {
                    return Ok(Some(Document {
                        root: None,
                        start,
                        events: self.events,
                    }));
                }
                _ => {
                    let root = self.node(ev, top)?;
                    // libyaml gives nothing else before the document's end.
                    let end = self.next()?;
                    if !matches!(end.kind, Kind::DocumentEnd) {
                        return Err(self.error("expected the end of the document", end.start));
                    }
                    return Ok(Some(Document {
                        root: Some(root),
                        start,
                        events: self.events,
                    }));
                }
            }
        }
    }

    /// The node that starts with `ev`. `top`: the document's root.
    fn node(&mut self, ev: Event, top: bool) -> Result<Node, Stop> {
        let (start, end) = (ev.start, ev.end);
        match ev.kind {
            Kind::Scalar {
                value,
                plain,
                tag,
                anchor,
            } => {
                let end = start + trimmed_len(self.text, start, end);
                let node = Node {
                    kind: NodeKind::Scalar { value, plain, tag },
                    start,
                    end,
                };
                Ok(self.anchored(anchor, node))
            }
            Kind::Alias(name) => match self.anchors.get(&name) {
                Some(target) => Ok(Node {
                    kind: NodeKind::Alias(Rc::clone(target)),
                    start,
                    end,
                }),
                None => Err(self.error("unknown anchor", start)),
            },
            Kind::SequenceStart { anchor, flow } => {
                self.enter(start)?;
                let mut items = Vec::new();
                let close = loop {
                    let ev = self.next()?;
                    if let Kind::SequenceEnd = ev.kind {
                        break ev;
                    }
                    items.push(self.node(ev, false)?);
                };
                self.depth -= 1;
                let end = match (flow, items.last()) {
                    (false, Some(last)) => last.end,
                    _ => close.end,
                };
                let node = Node {
                    kind: NodeKind::Seq(items),
                    start,
                    end,
                };
                Ok(self.anchored(anchor, node))
            }
            Kind::MappingStart {
                anchor,
                local_tag,
                flow,
            } => {
                let top = top && !local_tag;
                self.enter(start)?;
                let mut entries = Vec::new();
                let close = loop {
                    let ev = self.next()?;
                    if let Kind::MappingEnd = ev.kind {
                        break ev;
                    }
                    let key = self.node(ev, false)?;
                    let ev = self.next()?;
                    let value = if top && unread(&key) {
                        let at = ev.start;
                        self.skip(ev)?;
                        Node {
                            kind: NodeKind::Skipped,
                            start: at,
                            end: at,
                        }
                    } else {
                        self.node(ev, false)?
                    };
                    entries.push((key, value));
                };
                self.depth -= 1;
                let end = match (flow, entries.last()) {
                    (false, Some((_, last))) => last.end,
                    _ => close.end,
                };
                let node = Node {
                    kind: NodeKind::Map(entries),
                    start,
                    end,
                };
                Ok(self.anchored(anchor, node))
            }
            _ => Err(self.error("unexpected YAML event", start)),
        }
    }

    /// Past the node that starts with `ev`, building only what an anchor names.
    fn skip(&mut self, ev: Event) -> Result<(), Stop> {
        match &ev.kind {
            Kind::Scalar {
                anchor: Some(_), ..
            }
            | Kind::SequenceStart {
                anchor: Some(_), ..
            }
            | Kind::MappingStart {
                anchor: Some(_), ..
            } => self.node(ev, false).map(drop),
            Kind::Scalar { .. } => Ok(()),
            Kind::Alias(name) => match self.anchors.contains_key(name) {
                true => Ok(()),
                false => Err(self.error("unknown anchor", ev.start)),
            },
            Kind::SequenceStart { .. } | Kind::MappingStart { .. } => {
                self.enter(ev.start)?;
                loop {
                    let ev = self.next()?;
                    if matches!(ev.kind, Kind::SequenceEnd | Kind::MappingEnd) {
                        break;
                    }
                    self.skip(ev)?;
                }
                self.depth -= 1;
                Ok(())
            }
            _ => Err(self.error("unexpected YAML event", ev.start)),
        }
    }

    /// `node`, registered under `anchor` when it has one.
    fn anchored(&mut self, anchor: Option<Str>, node: Node) -> Node {
        let Some(name) = anchor else { return node };
        let (start, end) = (node.start, node.end);
        let shared = Rc::new(node);
        self.anchors.insert(name, Rc::clone(&shared));
        Node {
            kind: NodeKind::Anchored(shared),
            start,
            end,
        }
    }

    /// One level deeper. Past `MAX_NESTING` the load stops (libyaml's scan is quadratic in the
    /// depth; the caller runs the nesting guard, whose verdict such files always got).
    fn enter(&mut self, at: usize) -> Result<(), Stop> {
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
        if self.depth > MAX_NESTING {
            let mut stop = self.error("recursion limit exceeded", at);
            stop.deep = true;
            return Err(stop);
        }
        Ok(())
    }

    fn error(&self, message: &str, at: usize) -> Stop {
        Stop {
            error: marked_error(self.text, message.to_owned(), at),
            deep: false,
        }
    }
}

/// Whether a root key's value feeds no field (a plain or quoted string key, not `<<`).
fn unread(key: &Node) -> bool {
    match &key.plain().kind {
        NodeKind::Scalar { value, plain, tag } => {
            let as_str = match tag.as_deref() {
                Some(t) if !t.starts_with('!') => t == "tag:yaml.org,2002:str",
                _ => !*plain || matches!(untagged_plain(value), Value::Str(_)),
            };
            as_str && unread_top_level_key(value)
        }
        _ => false,
    }
}

/// The length of `text[start..end]` without trailing whitespace (a block scalar's marks run to
/// the next line).
fn trimmed_len(text: &str, start: usize, end: usize) -> usize {
    text.get(start..end)
        .map_or(end.saturating_sub(start), |s| s.trim_end().len())
}

/// serde_yaml's text for an error at byte `at`: the message, then ` at line L column C`
/// (1-based, columns in characters) unless it is the very start.
fn marked_error(text: &str, message: String, at: usize) -> LoadError {
    let (line, column) = mark_of(text, at);
    let message = if line != 0 || column != 0 {
        format!("{message} at line {} column {}", line + 1, column + 1)
    } else {
        message
    };
    LoadError {
        message,
        index: Some(at),
    }
}

/// libyaml's 0-based line and column of byte `at`: lines end at `\r\n`, `\r`, `\n`, NEL, LS and
/// PS; columns count characters.
fn mark_of(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..floor_boundary(text, at)];
    let (mut line, mut column) = (0, 0);
    let mut chars = before.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => {
                line += 1;
                column = 0;
            }
            _ => column += 1,
        }
    }
    (line, column)
}

/// One step of serde_yaml's path to a value, for its error texts.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Index(usize),
    Key(&'a str),
    Unknown,
}

/// serde_yaml's `Path` display: `.` at the root, `a.b[0]` below it.
fn path_text(segs: &[Seg<'_>]) -> String {
    fn parent(segs: &[Seg<'_>]) -> String {
        if segs.is_empty() {
            String::new()
        } else {
            format!("{}.", path_text(segs))
        }
    }
    match segs.split_last() {
        None => ".".to_owned(),
        Some((Seg::Index(i), up)) => format!("{}[{i}]", path_text(up)),
        Some((Seg::Key(k), up)) => format!("{}{k}", parent(up)),
        Some((Seg::Unknown, up)) => format!("{}?", parent(up)),
    }
}

/// Built nodes into [`Value`]s (see the module's description).
pub(super) struct Converter<'a> {
    /// The loaded text (error marks are counted in it) and where it starts in the file.
    text: &'a str,
    base: usize,
    jumps: usize,
    jump_limit: usize,
    path: Vec<Seg<'a>>,
    /// Whether `<<` merge keys are applied (the test oracle compares them unapplied).
    pub merge: bool,
    /// Mapping keys that are not scalars, with their spans (the entry is left out).
    pub complex_keys: Vec<(Span, &'static str)>,
}

/// An entry of a converted mapping.
pub(super) type Entry = (Spanned<Str>, Spanned<Value>);

impl<'a> Converter<'a> {
    pub(super) fn new(text: &'a str, base: usize, events: usize) -> Self {
        Converter {
            text,
            base,
            jumps: 0,
            jump_limit: events.saturating_mul(100),
            path: Vec::new(),
            merge: true,
            complex_keys: Vec::new(),
        }
    }

    /// A node's span in the file.
    pub(super) fn span(&self, start: usize, end: usize) -> Span {
        let s = clamp_span(self.text, start, end);
        Span::new(s.start as usize + self.base, s.end as usize + self.base)
    }

    /// The document's root value; `None` for an empty document.
    pub(super) fn root(
        &mut self,
        root: Option<&'a Node>,
    ) -> Result<Option<Spanned<Value>>, LoadError> {
        root.map(|n| self.value(n, None, 0)).transpose()
    }

    /// The root's entries when it is a mapping (as [`Converter::root`] otherwise).
    pub(super) fn root_entries(&mut self, root: &'a Node) -> Result<Option<Vec<Entry>>, LoadError> {
        match &root.plain().kind {
            NodeKind::Map(entries) => self.entries(entries, None, 1).map(Some),
            _ => Ok(None),
        }
    }

    fn value(
        &mut self,
        node: &'a Node,
        respan: Option<Span>,
        depth: usize,
    ) -> Result<Spanned<Value>, LoadError> {
        let span = respan.unwrap_or_else(|| self.span(node.start, node.end));
        let value = match &node.kind {
            NodeKind::Scalar { value, plain, tag } => resolve(value, *plain, tag.as_deref())
                .map_err(|message| self.error(message, node.start))?,
            NodeKind::Anchored(inner) => return self.value(inner, respan, depth),
            NodeKind::Alias(target) => {
                self.jumps += 1;
                if self.jumps > self.jump_limit {
                    return Err(LoadError {
                        message: "repetition limit exceeded".to_owned(),
                        index: None,
                    });
                }
                return self.value(target, Some(span), depth);
            }
            NodeKind::Skipped => Value::Null,
            NodeKind::Seq(items) => {
                self.deeper(node, depth)?;
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Seg::Index(i));
                    out.push(self.value(item, respan, depth + 1)?);
                    self.path.pop();
                }
                Value::List(out.into_boxed_slice())
            }
            NodeKind::Map(entries) => {
                self.deeper(node, depth)?;
                Value::Map(self.entries(entries, respan, depth + 1)?.into_boxed_slice())
            }
        };
        Ok(Spanned::new(value, span))
    }

    /// serde_yaml's recursion limit: a collection nested in `depth` others.
    fn deeper(&self, node: &Node, depth: usize) -> Result<(), LoadError> {
        if depth >= MAX_NESTING {
            return Err(marked_error(
                self.text,
                "recursion limit exceeded".to_owned(),
                node.start,
            ));
        }
        Ok(())
    }

    fn entries(
        &mut self,
        entries: &'a [(Node, Node)],
        respan: Option<Span>,
        depth: usize,
    ) -> Result<Vec<Entry>, LoadError> {
        let mut merged: Vec<Entry> = Vec::new();
        let mut out = Vec::with_capacity(entries.len());
        for (key_node, value_node) in entries {
            let key = self.value(key_node, respan, depth)?;
            if matches!(value_node.kind, NodeKind::Skipped) {
                continue;
            }
            self.path.push(match &key_node.plain().kind {
                NodeKind::Scalar { value, .. } => Seg::Key(value),
                _ => Seg::Unknown,
            });
            let value = self.value(value_node, respan, depth)?;
            self.path.pop();
            let Some(name) = key_string(&key.value) else {
                self.complex_keys.push((key.span, kind_of(&key.value)));
                continue;
            };
            if self.merge && name == "<<" && matches!(key.value, Value::Str(_)) {
                // Merge key (YAML 1.1, honoured by `safe_load`): merged entries come first so
                // explicit keys, read later, win; of several merged maps the first wins.
                match value.value {
                    Value::Map(inner) => {
                        merged.extend(inner.into_vec());
                        continue;
                    }
                    Value::List(items)
                        if items.iter().all(|i| matches!(i.value, Value::Map(_))) =>
                    {
                        for item in items.into_vec().into_iter().rev() {
                            if let Value::Map(inner) = item.value {
                                merged.extend(inner.into_vec());
                            }
                        }
                        continue;
                    }
                    other => {
                        out.push((
                            Spanned::new(name.into(), key.span),
                            Spanned::new(other, value.span),
                        ));
                        continue;
                    }
                }
            }
            out.push((Spanned::new(name.into(), key.span), value));
        }
        if merged.is_empty() {
            return Ok(out);
        }
        merged.extend(out);
        merged.shrink_to_fit();
        Ok(merged)
    }

    fn error(&self, message: String, at: usize) -> LoadError {
        let path = path_text(&self.path);
        let message = if path == "." {
            message
        } else {
            format!("{path}: {message}")
        };
        marked_error(self.text, message, at)
    }
}

/// A value's type in YAML's words (a list is a sequence).
pub(super) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "sequence",
        other => other.type_name(),
    }
}

/// A scalar's value as serde_yaml gives it: untagged (or with a local tag such as `!t`, whose
/// value serde_yaml reads untagged) a plain scalar is resolved, a quoted one is a string; the
/// core tags `!!bool`, `!!int`, `!!float` and `!!null` must hold what they say (serde_yaml's
/// error otherwise); any other tag (`!!str`, `!!binary`, ...) gives a string.
fn resolve(value: &Str, plain: bool, tag: Option<&str>) -> Result<Value, String> {
    let invalid = |expected: &str| format!("invalid value: string {value:?}, expected {expected}");
    match tag {
        None => {}
        Some(t) if t.starts_with('!') => {}
        Some("tag:yaml.org,2002:bool") => {
            return parse_bool(value)
                .map(Value::Bool)
                .ok_or_else(|| invalid("a boolean"));
        }
        Some("tag:yaml.org,2002:int") => {
            return parse_int(value).ok_or_else(|| invalid("an integer"));
        }
        Some("tag:yaml.org,2002:float") => {
            return parse_f64(value)
                .map(|f| Value::Float(F64(f)))
                .ok_or_else(|| invalid("a float"));
        }
        Some("tag:yaml.org,2002:null") => {
            return is_null(value)
                .then_some(Value::Null)
                .ok_or_else(|| invalid("null"));
        }
        Some(_) => return Ok(Value::Str(value.clone())),
    }
    Ok(if plain {
        untagged_plain(value)
    } else {
        Value::Str(value.clone())
    })
}

fn is_null(v: &str) -> bool {
    matches!(v, "null" | "Null" | "NULL" | "~")
}

fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// An untagged plain scalar as serde_yaml 0.9 resolves it (`de::visit_untagged_scalar`):
/// integers beyond 64 bits become floats.
pub(super) fn untagged_plain(v: &Str) -> Value {
    if v.is_empty() || is_null(v) {
        return Value::Null;
    }
    if let Some(b) = parse_bool(v) {
        return Value::Bool(b);
    }
    // Every number serde_yaml reads starts with a digit, a sign or a dot (`.inf`, `.5`); Rust's
    // float parser also takes `inf`/`nan`, but those are not finite and are refused anyway.
    if !matches!(v.as_bytes()[0], b'0'..=b'9' | b'+' | b'-' | b'.') {
        return Value::Str(v.clone());
    }
    if let Some(n) = parse_int(v) {
        return n;
    }
    if !digits_but_not_number(v)
        && let Some(f) = parse_f64(v)
    {
        return Value::Float(F64(f));
    }
    Value::Str(v.clone())
}

/// serde_yaml's `visit_int`: 64-bit, then 128-bit, signed or not; beyond `i64` a float.
fn parse_int(v: &str) -> Option<Value> {
    let wide = |n: i128| i64::try_from(n).map_or(Value::Float(F64(n as f64)), Value::Int);
    if let Some(n) = parse_unsigned_int(v, u64::from_str_radix) {
        return Some(i64::try_from(n).map_or(Value::Float(F64(n as f64)), Value::Int));
    }
    if let Some(n) = parse_negative_int(v, i64::from_str_radix) {
        return Some(Value::Int(n));
    }
    if let Some(n) = parse_unsigned_int(v, u128::from_str_radix) {
        return Some(i64::try_from(n).map_or(Value::Float(F64(n as f64)), Value::Int));
    }
    parse_negative_int(v, i128::from_str_radix).map(wide)
}

fn parse_unsigned_int<T>(
    scalar: &str,
    from_str_radix: fn(&str, u32) -> Result<T, std::num::ParseIntError>,
) -> Option<T> {
    let unpositive = scalar.strip_prefix('+').unwrap_or(scalar);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(int) = from_str_radix(rest, radix) {
                return Some(int);
            }
        }
    }
    if unpositive.starts_with(['+', '-']) || digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(unpositive, 10).ok()
}

fn parse_negative_int<T>(
    scalar: &str,
    from_str_radix: fn(&str, u32) -> Result<T, std::num::ParseIntError>,
) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = scalar.strip_prefix(prefix)
            && let Ok(int) = from_str_radix(&format!("-{rest}"), radix)
        {
            return Some(int);
        }
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(scalar, 10).ok()
}

fn parse_f64(scalar: &str) -> Option<f64> {
    let unpositive = match scalar.strip_prefix('+') {
        Some(u) if u.starts_with(['+', '-']) => return None,
        Some(u) => u,
        None => scalar,
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = scalar {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = scalar {
        return Some(f64::NAN.copysign(1.0));
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}

fn digits_but_not_number(scalar: &str) -> bool {
    let scalar = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
    scalar.len() > 1 && scalar.starts_with('0') && scalar[1..].bytes().all(|b| b.is_ascii_digit())
}
