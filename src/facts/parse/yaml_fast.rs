//! YAML documents loaded into [`YNode`]s straight from libyaml's events, for the common case.
//!
//! `serde_yaml` buffers every event of a document (with its marks) before deserializing, then
//! hands each value through serde: for a 1 MB metadata value that is most of the parse time. Here
//! the same libyaml port (`unsafe-libyaml`) is driven directly and nodes are built as events
//! arrive. Only documents without node properties are taken — no anchor, alias or tag, nothing
//! nested past `MAX_NESTING` — and for those the result is exactly what the `serde_yaml` path
//! gives (the plain-scalar resolution below is serde_yaml 0.9's, and libyaml's errors are
//! formatted as serde_yaml formats them); anything else answers [`Fast::Unsupported`] and the
//! caller takes the `serde_yaml` path. `tests::agrees_with_serde_yaml` checks the two agree.
//!
//! Deep nesting: libyaml's scanner costs O(depth) per token, and its look-ahead is bounded (a
//! simple-key candidate goes stale at the end of its line or 1024 characters on), so stopping
//! at the first node deeper than `MAX_NESTING` bounds the work; the caller then runs the
//! nesting guard, whose verdict such files always got.

use std::mem::MaybeUninit;

use super::MAX_NESTING;
use super::yaml_node::{LoadError, Rest, YNode, unread_top_level_key};

/// What the fast loader made of a text.
pub(super) enum Fast {
    /// The text uses something only the `serde_yaml` path handles (anchors, aliases, tags, deep
    /// nesting, a non-UTF-8 scalar).
    Unsupported,
    /// The first document failed to load: serde_yaml's message and the byte index it points at.
    FirstError { message: String, index: usize },
    /// The first document (`Null` for an empty stream), then what follows it, and the deepest
    /// nesting met in any document.
    Loaded {
        first: YNode,
        rest: Rest,
        max_depth: usize,
    },
}

impl Fast {
    /// The answer in the `serde_yaml` path's terms; `None` when the fast loader declined.
    pub(super) fn into_result(self) -> Option<Result<(YNode, Rest), LoadError>> {
        match self {
            Fast::Unsupported => None,
            Fast::FirstError { message, index } => Some(Err(LoadError {
                message,
                index: Some(index),
            })),
            Fast::Loaded { first, rest, .. } => Some(Ok((first, rest))),
        }
    }
}

/// An event with what the builder needs of it.
enum Ev {
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Scalar(YNode),
    SequenceStart,
    SequenceEnd,
    MappingStart,
    MappingEnd,
    /// An anchor, alias, tag or non-UTF-8 scalar.
    Unsupported,
}

/// A libyaml parser over `text`, deleted on drop.
struct Parser<'t> {
    sys: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    _text: &'t str,
}

/// A libyaml failure: serde_yaml's rendering of it and the byte index of its problem mark.
struct LibyamlError {
    message: String,
    index: usize,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Option<Self> {
        let mut sys = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
        // SAFETY: `yaml_parser_initialize` fills the whole struct (or fails without allocating);
        // the input pointer stays valid for `'t`, which outlives the parser.
        unsafe {
            let p = sys.as_mut_ptr();
            if unsafe_libyaml::yaml_parser_initialize(p).fail {
                return None;
            }
            unsafe_libyaml::yaml_parser_set_encoding(p, unsafe_libyaml::YAML_UTF8_ENCODING);
            unsafe_libyaml::yaml_parser_set_input_string(p, text.as_ptr(), text.len() as u64);
        }
        Some(Parser { sys, _text: text })
    }

    fn next(&mut self) -> Result<Ev, LibyamlError> {
        let mut event = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
        // SAFETY: the parser was initialised in `new`; an event filled by a successful
        // `yaml_parser_parse` is read, then deleted exactly once.
        unsafe {
            let p = self.sys.as_mut_ptr();
            let failed_before = (&*p).error != unsafe_libyaml::YAML_NO_ERROR;
            if failed_before || unsafe_libyaml::yaml_parser_parse(p, event.as_mut_ptr()).fail {
                return Err(parse_error(p));
            }
            let e = event.as_mut_ptr();
            let ev = convert(&*e);
            unsafe_libyaml::yaml_event_delete(e);
            Ok(ev)
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: initialised in `new` (a failed initialisation never builds a `Parser`).
        unsafe { unsafe_libyaml::yaml_parser_delete(self.sys.as_mut_ptr()) }
    }
}

/// # Safety
/// `e` is an event just filled by `yaml_parser_parse`.
unsafe fn convert(e: &unsafe_libyaml::yaml_event_t) -> Ev {
    // SAFETY: the union member read is the one `type_` says is filled.
    unsafe {
        match e.type_ {
            unsafe_libyaml::YAML_STREAM_START_EVENT | unsafe_libyaml::YAML_DOCUMENT_START_EVENT => {
                Ev::DocumentStart
            }
            unsafe_libyaml::YAML_STREAM_END_EVENT => Ev::StreamEnd,
            unsafe_libyaml::YAML_DOCUMENT_END_EVENT => Ev::DocumentEnd,
            unsafe_libyaml::YAML_SCALAR_EVENT => {
                let s = &e.data.scalar;
                if !s.anchor.is_null() || !s.tag.is_null() {
                    return Ev::Unsupported;
                }
                let bytes = std::slice::from_raw_parts(s.value, s.length as usize);
                let Ok(v) = std::str::from_utf8(bytes) else {
                    return Ev::Unsupported;
                };
                Ev::Scalar(if s.style == unsafe_libyaml::YAML_PLAIN_SCALAR_STYLE {
                    untagged_plain(v)
                } else {
                    YNode::Str(v.to_owned())
                })
            }
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT => {
                let s = &e.data.sequence_start;
                if !s.anchor.is_null() || !s.tag.is_null() {
                    return Ev::Unsupported;
                }
                Ev::SequenceStart
            }
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT => Ev::SequenceEnd,
            unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                let m = &e.data.mapping_start;
                if !m.anchor.is_null() || !m.tag.is_null() {
                    return Ev::Unsupported;
                }
                Ev::MappingStart
            }
            unsafe_libyaml::YAML_MAPPING_END_EVENT => Ev::MappingEnd,
            _ => Ev::Unsupported, // aliases (and `YAML_NO_EVENT`, which a success never gives)
        }
    }
}

/// serde_yaml's rendering of a libyaml error (`unsafe_libyaml::error::Error`'s `Display`).
///
/// # Safety
/// `p` is an initialised parser whose last call failed.
unsafe fn parse_error(p: *const unsafe_libyaml::yaml_parser_t) -> LibyamlError {
    // SAFETY: libyaml's problem and context are NUL-terminated static strings or null.
    unsafe {
        let cstr = |ptr: *const std::ffi::c_char| {
            (!ptr.is_null()).then(|| std::ffi::CStr::from_ptr(ptr).to_string_lossy().into_owned())
        };
        let parser: &unsafe_libyaml::yaml_parser_t = &*p;
        let problem = cstr(parser.problem)
            .unwrap_or_else(|| "libyaml parser failed but there is no error".to_owned());
        let pm = parser.problem_mark;
        let cm = parser.context_mark;
        let mark = |m: unsafe_libyaml::yaml_mark_t| {
            if m.line != 0 || m.column != 0 {
                format!("line {} column {}", m.line + 1, m.column + 1)
            } else {
                format!("position {}", m.index)
            }
        };
        let mut message = problem;
        if pm.line != 0 || pm.column != 0 {
            message.push_str(&format!(" at {}", mark(pm)));
        } else if parser.problem_offset != 0 {
            message.push_str(&format!(" at position {}", parser.problem_offset));
        }
        if let Some(context) = cstr(parser.context) {
            message.push_str(&format!(", {context}"));
            if (cm.line != 0 || cm.column != 0) && (cm.line != pm.line || cm.column != pm.column) {
                message.push_str(&format!(" at {}", mark(cm)));
            }
        }
        LibyamlError {
            message,
            index: usize::try_from(pm.index).unwrap_or(usize::MAX),
        }
    }
}

/// Load `text` (no BOM: the caller cuts it off, as for the `serde_yaml` path).
pub(super) fn load(text: &str) -> Fast {
    let Some(mut parser) = Parser::new(text) else {
        return Fast::Unsupported;
    };
    let mut b = Builder {
        parser: &mut parser,
        depth: 0,
        max_depth: 0,
    };
    b.load()
}

/// An early exit of the builder.
enum Stop {
    Unsupported,
    Error(LibyamlError),
}

impl From<LibyamlError> for Stop {
    fn from(e: LibyamlError) -> Self {
        Stop::Error(e)
    }
}

struct Builder<'p, 't> {
    parser: &'p mut Parser<'t>,
    depth: usize,
    max_depth: usize,
}

impl Builder<'_, '_> {
    fn load(&mut self) -> Fast {
        let first = match self.document(true) {
            Ok(Some(node)) => node,
            // An empty stream reads as one empty document (serde_yaml's `Event::Void`).
            Ok(None) => {
                return Fast::Loaded {
                    first: YNode::Null,
                    rest: Rest::Nothing,
                    max_depth: 0,
                };
            }
            Err(Stop::Unsupported) => return Fast::Unsupported,
            Err(Stop::Error(e)) => {
                return Fast::FirstError {
                    message: e.message,
                    index: e.index,
                };
            }
        };
        // Later documents: the first with content (or an error) ends the look.
        let rest = loop {
            match self.document(false) {
                Ok(None) => break Rest::Nothing,
                Ok(Some(YNode::Null)) => continue,
                Ok(Some(_)) => break Rest::MoreContent,
                Err(Stop::Unsupported) => return Fast::Unsupported,
                Err(Stop::Error(e)) => {
                    break Rest::Error(LoadError {
                        message: e.message,
                        index: Some(e.index),
                    });
                }
            }
        };
        Fast::Loaded {
            first,
            rest,
            max_depth: self.max_depth,
        }
    }

    /// The next document's root; `None` at the end of the stream.
    fn document(&mut self, top: bool) -> Result<Option<YNode>, Stop> {
        loop {
            match self.parser.next()? {
                Ev::DocumentStart => {}
                Ev::StreamEnd => return Ok(None),
                Ev::DocumentEnd => return Ok(Some(YNode::Null)),
                ev => {
                    let node = self.node(ev, top)?;
                    // The document ends here (libyaml gives nothing else before its end).
                    match self.parser.next()? {
                        Ev::DocumentEnd => return Ok(Some(node)),
                        _ => return Err(Stop::Unsupported),
                    }
                }
            }
        }
    }

    /// The node that starts with `ev`. `top`: the document's root, whose unread keys are skipped.
    fn node(&mut self, ev: Ev, top: bool) -> Result<YNode, Stop> {
        match ev {
            Ev::Scalar(s) => Ok(s),
            Ev::SequenceStart => {
                self.enter()?;
                let mut items = Vec::new();
                loop {
                    match self.parser.next()? {
                        Ev::SequenceEnd => break,
                        ev => items.push(self.node(ev, false)?),
                    }
                }
                self.depth -= 1;
                Ok(YNode::Seq(items))
            }
            Ev::MappingStart => {
                self.enter()?;
                let mut entries = Vec::new();
                loop {
                    let key = match self.parser.next()? {
                        Ev::MappingEnd => break,
                        ev => self.node(ev, false)?,
                    };
                    let ev = self.parser.next()?;
                    let value = if top && unread_top_level_key(&key) {
                        self.skip(ev)?;
                        YNode::Skipped
                    } else {
                        self.node(ev, false)?
                    };
                    entries.push((key, value));
                }
                self.depth -= 1;
                Ok(YNode::Map(entries))
            }
            _ => Err(Stop::Unsupported),
        }
    }

    /// Past the node that starts with `ev`, building nothing.
    fn skip(&mut self, ev: Ev) -> Result<(), Stop> {
        let mut open = 0usize;
        let mut ev = ev;
        loop {
            match ev {
                Ev::SequenceStart | Ev::MappingStart => {
                    open += 1;
                    self.max_depth = self.max_depth.max(self.depth + open);
                    if self.depth + open > MAX_NESTING {
                        return Err(Stop::Unsupported);
                    }
                }
                Ev::SequenceEnd | Ev::MappingEnd => open = open.saturating_sub(1),
                Ev::Scalar(_) => {}
                _ => return Err(Stop::Unsupported),
            }
            if open == 0 {
                return Ok(());
            }
            ev = self.parser.next()?;
        }
    }

    fn enter(&mut self) -> Result<(), Stop> {
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
        // serde_yaml refuses past its recursion limit; leave that error to its path.
        if self.depth > MAX_NESTING {
            return Err(Stop::Unsupported);
        }
        Ok(())
    }
}

/// An untagged plain scalar as serde_yaml 0.9 resolves it (`de::visit_untagged_scalar`) and
/// `YNodeVisitor` stores it.
pub(super) fn untagged_plain(v: &str) -> YNode {
    if v.is_empty() || matches!(v, "null" | "Null" | "NULL" | "~") {
        return YNode::Null;
    }
    match v {
        "true" | "True" | "TRUE" => return YNode::Bool(true),
        "false" | "False" | "FALSE" => return YNode::Bool(false),
        _ => {}
    }
    // Every number serde_yaml reads starts with a digit, a sign or a dot (`.inf`, `.5`); Rust's
    // float parser also takes `inf`/`nan`, but those are not finite and are refused anyway.
    if !matches!(v.as_bytes()[0], b'0'..=b'9' | b'+' | b'-' | b'.') {
        return YNode::Str(v.to_owned());
    }
    if let Some(n) = parse_unsigned_int(v, u64::from_str_radix) {
        return i64::try_from(n).map_or(YNode::Float(n as f64), YNode::Int);
    }
    if let Some(n) = parse_negative_int(v, i64::from_str_radix) {
        return YNode::Int(n);
    }
    if let Some(n) = parse_unsigned_int(v, u128::from_str_radix) {
        return i64::try_from(n).map_or(YNode::Float(n as f64), YNode::Int);
    }
    if let Some(n) = parse_negative_int(v, i128::from_str_radix) {
        return i64::try_from(n).map_or(YNode::Float(n as f64), YNode::Int);
    }
    if !digits_but_not_number(v)
        && let Some(f) = parse_f64(v)
    {
        return YNode::Float(f);
    }
    YNode::Str(v.to_owned())
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::parse::yaml::load_with_serde;

    /// The fast loader's answer in the `serde_yaml` path's terms; `None` when it declines.
    fn fast(text: &str) -> Option<Result<(YNode, Rest), LoadError>> {
        load(text).into_result()
    }

    /// Compared through `Debug`, so a NaN equals a NaN.
    fn same(text: &str) -> Result<bool, TestCaseError> {
        let Some(ours) = fast(text) else {
            return Ok(false);
        };
        let theirs = load_with_serde(text);
        prop_assert_eq!(
            format!("{ours:?}"),
            format!("{theirs:?}"),
            "text: {:?}",
            text
        );
        Ok(true)
    }

    #[test]
    fn agrees_with_serde_yaml_on_every_scalar_form_and_error() {
        let cases = [
            "",
            "---\n",
            "# only a comment\n",
            "a: 1\nb: -2\nc: +3\nd: 0x1F\ne: -0o17\nf: 0b101\ng: 012\nh: -012\ni: 1_000\n",
            "a: 1.5\nb: 1e3\nc: .inf\nd: -.Inf\ne: .NaN\nf: +.inf\ng: 1e400\nh: 18446744073709551616\n",
            "a: 9223372036854775808\nb: -9223372036854775809\nc: 340282366920938463463374607431768211456\n",
            "a: inf\nb: NaN\nc: Infinity\nd: e3\ne: _1\nf: é1\ng: -inf\nh: +nan\ni: .5\nj: -.5e2\nk: 1.\n",
            "a: ~\nb: null\nc: Null\nd:\ne: true\nf: False\ng: yes\nh: 'true'\ni: \"1\"\n",
            "version: 1.0.0\nconfig:\n  command: [node, '{tool_path}']\n  env: {A: 1, B: \"x\\ty\"}\n",
            "description: |\n  literal\n  text\nother: >\n  folded\n  text\n",
            "a: 1\n---\nb: 2\n",
            "a: 1\n---\n---\n...\n",
            "a: 1\n--- [\n",
            "a: 1\nb\n",
            "a: [1, 2\n",
            "a: 'unterminated\n",
            "\tkey: 1\n",
            "a: 1\n a: 2\n",
            "? [complex, key]\n: value\n",
            "- 1\n- two\n- [3]\n",
            "just a scalar\n",
            "a: b: c\n",
            "key: value # comment\nlist:\n- a\n- b\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: \"\\u00e9\\x41\"\nb: 'it''s'\n",
            "unread: {deep: [1, 2, {x: y}]}\nversion: 2\n",
            "<<: {version: 1}\nversion: 2\n",
        ];
        let mut taken = 0;
        for text in cases {
            if same(text).unwrap() {
                taken += 1;
            }
        }
        assert!(
            taken >= cases.len() - 2,
            "the fast loader declined too much: {taken}"
        );
        // What it must decline: anchors, aliases and tags.
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !tag 1\n",
            "a: !!int 1\n",
            "a: &m {b: 1}\n",
        ] {
            assert!(fast(text).is_none(), "{text:?}");
        }
    }

    /// Fragments of YAML, glued at random: most texts are invalid somewhere, so errors (message
    /// and position) are compared as often as values.
    fn fragments() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "a",
            "key",
            "version",
            "config",
            "b c",
            "-",
            "- ",
            ": ",
            ":",
            "? ",
            "[",
            "]",
            "{",
            "}",
            ", ",
            "'q'",
            "\"d\\n\"",
            "\"u\\u00e9\"",
            "'",
            "\"",
            "1",
            "-1",
            "0x1F",
            "012",
            "1e3",
            ".inf",
            ".nan",
            "~",
            "null",
            "True",
            "+1",
            "1_000",
            "0b101",
            "# c",
            "|",
            ">",
            "\n",
            "\n  ",
            "\n    ",
            "\n- ",
            "---",
            "...",
            "\t",
            "&a ",
            "*a",
            "!t ",
            "%YAML 1.1",
            "é",
            "<<: ",
        ]);
        prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    /// The generator reaches the fast loader's values and its errors, not only its refusals.
    #[test]
    fn fragments_exercise_values_and_errors() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut values, mut errors, mut declined) = (0, 0, 0);
        for _ in 0..2000 {
            let text = fragments().new_tree(&mut runner).unwrap().current();
            match fast(&text) {
                None => declined += 1,
                Some(Ok(_)) => values += 1,
                Some(Err(_)) => errors += 1,
            }
        }
        assert!(
            values > 200 && errors > 200,
            "{values} values, {errors} errors, {declined} declined"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn agrees_with_serde_yaml(text in fragments()) {
            same(&text)?;
        }
    }
}
