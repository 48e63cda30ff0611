//! libyaml's events with their marks: the one YAML parser behind the metadata reader
//! (`yaml_load` builds nodes from these events; `serde_yaml`, for typed documents, drives the
//! same libyaml port). This file is the only place that calls libyaml, so its `unsafe` stays here.
//!
//! Why libyaml and not a pure-Rust parser: it is the parser `serde_yaml` already builds on, so a
//! header and a typed document are read by the same grammar with the same error texts, and on
//! this project's inputs it is faster than the maintained pure-Rust one (`saphyr-parser` took
//! 2.1× as long on a 1 MB config and 1.2× on a tool header; see docs/performance.md).

use std::mem::MaybeUninit;

use crate::model::Str;

/// What an event is, with the properties the builder reads.
#[derive(Debug)]
pub(super) enum Kind {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    /// `*name`.
    Alias(Str),
    /// A scalar's value (escapes and folding applied), whether it was written plain, its tag
    /// (libyaml's resolved form: `!!int` is `tag:yaml.org,2002:int`) and anchor.
    Scalar {
        value: Str,
        plain: bool,
        tag: Option<Box<str>>,
        anchor: Option<Str>,
    },
    SequenceStart {
        anchor: Option<Str>,
        flow: bool,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<Str>,
        /// Whether its tag is a local one (`!t`, `!`): serde_yaml then reads it as a tagged
        /// value, whose mapping is no longer the document's root mapping.
        local_tag: bool,
        flow: bool,
    },
    MappingEnd,
}

/// One event and the byte range libyaml marks for it.
#[derive(Debug)]
pub(super) struct Event {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// A libyaml parser over `text`, deleted on drop.
pub(super) struct Parser<'t> {
    sys: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    _text: &'t str,
}

/// A libyaml failure: serde_yaml's rendering of it and the byte index of its problem mark.
#[derive(Debug)]
pub(super) struct LibyamlError {
    pub message: String,
    pub index: usize,
}

impl<'t> Parser<'t> {
    /// A parser of `text` (no BOM: libyaml mis-reads the lines after one, so the caller cuts it).
    pub(super) fn new(text: &'t str) -> Option<Self> {
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

    /// The next event; after an error, the same error again.
    pub(super) fn next(&mut self) -> Result<Event, LibyamlError> {
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
unsafe fn convert(e: &unsafe_libyaml::yaml_event_t) -> Event {
    let start = usize::try_from(e.start_mark.index).unwrap_or(usize::MAX);
    let end = usize::try_from(e.end_mark.index).unwrap_or(usize::MAX);
    // SAFETY: the union member read is the one `type_` says is filled; its anchor and tag are
    // null or NUL-terminated strings libyaml allocated for this event, and a scalar's value is
    // `length` bytes.
    let kind = unsafe {
        let c_text = |ptr: *const u8| {
            (!ptr.is_null())
                .then(|| std::ffi::CStr::from_ptr(ptr.cast()))
                .map(|c| Str::from(String::from_utf8_lossy(c.to_bytes())))
        };
        match e.type_ {
            unsafe_libyaml::YAML_STREAM_START_EVENT => Kind::StreamStart,
            unsafe_libyaml::YAML_DOCUMENT_START_EVENT => Kind::DocumentStart,
            unsafe_libyaml::YAML_DOCUMENT_END_EVENT => Kind::DocumentEnd,
            unsafe_libyaml::YAML_ALIAS_EVENT => {
                Kind::Alias(c_text(e.data.alias.anchor).unwrap_or_default())
            }
            unsafe_libyaml::YAML_SCALAR_EVENT => {
                let s = &e.data.scalar;
                let bytes = std::slice::from_raw_parts(s.value, s.length as usize);
                Kind::Scalar {
                    value: match std::str::from_utf8(bytes) {
                        Ok(v) => Str::from(v),
                        Err(_) => Str::from(String::from_utf8_lossy(bytes)),
                    },
                    plain: s.style == unsafe_libyaml::YAML_PLAIN_SCALAR_STYLE,
                    tag: c_text(s.tag).map(|t| Box::from(t.as_str())),
                    anchor: c_text(s.anchor),
                }
            }
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT => {
                let s = &e.data.sequence_start;
                Kind::SequenceStart {
                    anchor: c_text(s.anchor),
                    flow: s.style == unsafe_libyaml::YAML_FLOW_SEQUENCE_STYLE,
                }
            }
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT => Kind::SequenceEnd,
            unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                let m = &e.data.mapping_start;
                Kind::MappingStart {
                    anchor: c_text(m.anchor),
                    local_tag: c_text(m.tag).is_some_and(|t| t.starts_with('!')),
                    flow: m.style == unsafe_libyaml::YAML_FLOW_MAPPING_STYLE,
                }
            }
            unsafe_libyaml::YAML_MAPPING_END_EVENT => Kind::MappingEnd,
            // `YAML_NO_EVENT`, which a successful parse never gives.
            _ => Kind::StreamEnd,
        }
    };
    Event { kind, start, end }
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
