//! L0 vocabulary: spaces, spans, metadata values and records, chain elements. Pure data, no I/O.

use std::fmt;
use std::sync::Arc;

/// Paths of files of the embedded bundle start with this (`<embedded:ryechain>/.ai/…`).
pub const EMBEDDED_PATH_PREFIX: &str = "<embedded:";

/// A byte range into one file's text (`start..end`, UTF-8 offsets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Span {
            start: clamp(start),
            end: clamp(end.max(start)),
        }
    }
    pub fn empty(at: usize) -> Self {
        Span::new(at, at)
    }
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    /// The span `by` bytes later (a header-relative span made absolute).
    pub fn shifted(self, by: u32) -> Span {
        Span {
            start: self.start.saturating_add(by),
            end: self.end.saturating_add(by),
        }
    }
    /// The span `by` bytes earlier (an absolute span made relative to a header at `by`).
    pub fn unshifted(self, by: u32) -> Span {
        Span {
            start: self.start.saturating_sub(by),
            end: self.end.saturating_sub(by),
        }
    }
}

/// A value together with the span of source text that says it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

/// Which kind of space a file lives in. Precedence (§1.2): project 3, user 2, system 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpaceKind {
    Project,
    User,
    System,
}

impl SpaceKind {
    /// The precedence number of §1.2 / §4.4 (`system:*` maps to 1, DESIGN.md).
    pub fn precedence(self) -> u8 {
        match self {
            SpaceKind::Project => 3,
            SpaceKind::User => 2,
            SpaceKind::System => 1,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            SpaceKind::Project => "project",
            SpaceKind::User => "user",
            SpaceKind::System => "system",
        }
    }
    /// Whether files of this space may be edited by the user (§4.5 "mutable").
    pub fn is_mutable(self) -> bool {
        !matches!(self, SpaceKind::System)
    }
    /// The spaces an element of this space may resolve executors in, in search order (§1.7).
    pub fn visible_kinds(self) -> &'static [SpaceKind] {
        match self {
            SpaceKind::Project => &[SpaceKind::Project, SpaceKind::User, SpaceKind::System],
            SpaceKind::User => &[SpaceKind::User, SpaceKind::System],
            SpaceKind::System => &[SpaceKind::System],
        }
    }
}

/// A space: project, user, or one system bundle. Labels per §1.4: `project`, `user`, `system:<bundle>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    Project,
    User,
    System { order: u16, bundle: Arc<str> },
}

impl Space {
    pub fn kind(&self) -> SpaceKind {
        match self {
            Space::Project => SpaceKind::Project,
            Space::User => SpaceKind::User,
            Space::System { .. } => SpaceKind::System,
        }
    }
    pub fn label(&self) -> String {
        match self {
            Space::Project => "project".to_owned(),
            Space::User => "user".to_owned(),
            Space::System { bundle, .. } => format!("system:{bundle}"),
        }
    }
    /// Search position: project first, then user, then bundles in configured order.
    pub fn search_rank(&self) -> u32 {
        match self {
            Space::Project => 0,
            Space::User => 1,
            Space::System { order, .. } => 2 + u32::from(*order),
        }
    }
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// A 64-bit float compared by bit pattern, so metadata values can be `Eq` (salsa backdating).
#[derive(Clone, Copy, Debug)]
pub struct F64(pub f64);

impl PartialEq for F64 {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}
impl Eq for F64 {}
impl std::hash::Hash for F64 {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state)
    }
}

/// A string of a metadata value or a mapping key. Up to 24 bytes are stored inline: most keys
/// and many values (`type`, `string`, a version, a short category) are that short, and every
/// file's values are kept for the whole run, so a heap allocation apiece added up.
pub type Str = compact_str::CompactString;

/// A metadata value read from a Python literal, a YAML node or a JS object literal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(F64),
    Str(Str),
    /// Boxed slices rather than vectors (no capacity word): a `Value` is 24 bytes, not 32.
    List(Box<[Spanned<Value>]>),
    /// Keys in source order; later duplicates are kept (readers take the last).
    Map(Box<[(Spanned<Str>, Spanned<Value>)]>),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_map(&self) -> Option<&[(Spanned<Str>, Spanned<Value>)]> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_list(&self) -> Option<&[Spanned<Value>]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }
    /// Last entry with this key (Python dict / YAML mapping semantics).
    pub fn get(&self, key: &str) -> Option<&Spanned<Value>> {
        self.as_map()?
            .iter()
            .rev()
            .find(|(k, _)| k.value == key)
            .map(|(_, v)| v)
    }
    /// The name of this value's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Map(_) => "mapping",
        }
    }
    /// Plain JSON view (spans dropped), for `--json` output and templating.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(f.0).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.to_string()),
            Value::List(l) => J::Array(l.iter().map(|v| v.value.to_json()).collect()),
            Value::Map(m) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m {
                    out.insert(k.value.to_string(), v.value.to_json());
                }
                J::Object(out)
            }
        }
    }
}

/// One field of the normalised metadata record (§2.1), in the record's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    Version,
    ToolType,
    /// Absent or `Null` means terminal (§2.1).
    ExecutorId,
    Category,
    ToolDescription,
    ConfigSchema,
    EnvConfig,
    Config,
    Anchor,
    VerifyDeps,
    ConfigResolve,
    Inputs,
    Outputs,
    ChildConstraints,
}

impl Field {
    /// Every field, in the record's order.
    pub const ALL: [Field; 14] = [
        Field::Version,
        Field::ToolType,
        Field::ExecutorId,
        Field::Category,
        Field::ToolDescription,
        Field::ConfigSchema,
        Field::EnvConfig,
        Field::Config,
        Field::Anchor,
        Field::VerifyDeps,
        Field::ConfigResolve,
        Field::Inputs,
        Field::Outputs,
        Field::ChildConstraints,
    ];
    /// The field's name in the record (`tool_description`, `child_constraints`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Field::Version => "version",
            Field::ToolType => "tool_type",
            Field::ExecutorId => "executor_id",
            Field::Category => "category",
            Field::ToolDescription => "tool_description",
            Field::ConfigSchema => "config_schema",
            Field::EnvConfig => "env_config",
            Field::Config => "config",
            Field::Anchor => "anchor",
            Field::VerifyDeps => "verify_deps",
            Field::ConfigResolve => "config_resolve",
            Field::Inputs => "inputs",
            Field::Outputs => "outputs",
            Field::ChildConstraints => "child_constraints",
        }
    }
}

/// The normalised metadata record of one file (§2.1, §2.3 normalisation, DESIGN.md metadata decision).
/// Header values only: nothing derived from a tool's body lives here, so body edits backdate it.
///
/// Only the fields a file sets are stored, in field order: a tool sets a handful of the 14, and
/// one record is kept per file for the whole run (an `Option` per field was 560 bytes a file,
/// most of them `None`). Read a field with its accessor (`version()`, ...) or [`Metadata::get`].
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Metadata {
    fields: Box<[(Field, Spanned<Value>)]>,
}

macro_rules! field_accessors {
    ($($(#[$doc:meta])* $name:ident => $field:ident),* $(,)?) => {
        impl Metadata {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Option<&Spanned<Value>> {
                    self.get(Field::$field)
                }
            )*
        }
    };
}

field_accessors! {
    version => Version,
    tool_type => ToolType,
    /// Absent or `Null` means terminal (§2.1).
    executor_id => ExecutorId,
    category => Category,
    tool_description => ToolDescription,
    config_schema => ConfigSchema,
    env_config => EnvConfig,
    config => Config,
    anchor => Anchor,
    verify_deps => VerifyDeps,
    config_resolve => ConfigResolve,
    inputs => Inputs,
    outputs => Outputs,
    child_constraints => ChildConstraints,
}

impl Metadata {
    /// The record of the given fields (a field given twice keeps its last value).
    pub fn from_fields(fields: impl IntoIterator<Item = (Field, Spanned<Value>)>) -> Self {
        let mut fields: Vec<(Field, Spanned<Value>)> = fields.into_iter().collect();
        // Stable: of two entries for one field, the later stays last and wins the dedup below.
        fields.sort_by_key(|(f, _)| *f);
        let mut out: Vec<(Field, Spanned<Value>)> = Vec::with_capacity(fields.len());
        for entry in fields {
            match out.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => out.push(entry),
            }
        }
        Metadata {
            fields: out.into_boxed_slice(),
        }
    }
    /// One field's value, if the file sets it.
    pub fn get(&self, field: Field) -> Option<&Spanned<Value>> {
        self.fields
            .binary_search_by_key(&field, |(f, _)| *f)
            .ok()
            .map(|i| &self.fields[i].1)
    }
    /// The fields the file sets, in field order.
    pub fn iter(&self) -> impl Iterator<Item = (Field, &Spanned<Value>)> {
        self.fields.iter().map(|(f, v)| (*f, v))
    }

    /// Where the header starts: the first byte of a field's span (0 without fields). A field's
    /// span starts at or before every span inside its value (each parser spans a field from its
    /// key or its value's first byte; `tests/pathological_input.rs` checks it on every header of
    /// the repository), so the top-level spans are enough.
    pub fn header_start(&self) -> u32 {
        self.fields
            .iter()
            .map(|(_, v)| v.span.start)
            .min()
            .unwrap_or(0)
    }

    /// The first byte of any span in the record, nested ones included (what
    /// [`Metadata::header_start`] must equal).
    pub fn first_span_start(&self) -> u32 {
        fn first(v: &Spanned<Value>) -> u32 {
            let inner = match &v.value {
                Value::List(items) => items.iter().map(first).min(),
                Value::Map(entries) => entries
                    .iter()
                    .map(|(k, v)| k.span.start.min(first(v)))
                    .min(),
                _ => None,
            };
            inner.map_or(v.span.start, |i| i.min(v.span.start))
        }
        self.fields.iter().map(|(_, v)| first(v)).min().unwrap_or(0)
    }

    /// Make every span relative to `base` (the header's start): the record then says nothing
    /// about where the header sits, so an edit above it leaves the record equal.
    pub fn make_relative(&mut self, base: u32) {
        fn shift(v: &mut Spanned<Value>, base: u32) {
            v.span = v.span.unshifted(base);
            match &mut v.value {
                Value::List(items) => items.iter_mut().for_each(|i| shift(i, base)),
                Value::Map(entries) => {
                    for (k, v) in entries.iter_mut() {
                        k.span = k.span.unshifted(base);
                        shift(v, base);
                    }
                }
                _ => {}
            }
        }
        if base == 0 {
            return;
        }
        for (_, v) in self.fields.iter_mut() {
            shift(v, base);
        }
    }
}

/// Shows every field, set or not, as the record's fields would.
impl fmt::Debug for Metadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Metadata");
        for field in Field::ALL {
            s.field(field.name(), &self.get(field));
        }
        s.finish()
    }
}

/// What a file's executor field says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecutorRef<'a> {
    /// No executor field, or an explicit `None`/`null`: the element is terminal.
    Terminal,
    /// A string id (possibly hostile; see `item_id_problem`).
    Id(&'a str, Span),
    /// A value of the wrong type (e.g. a number).
    WrongType(&'static str, Span),
}

impl Metadata {
    pub fn executor(&self) -> ExecutorRef<'_> {
        match self.executor_id() {
            None => ExecutorRef::Terminal,
            Some(Spanned {
                value: Value::Null, ..
            }) => ExecutorRef::Terminal,
            Some(Spanned {
                value: Value::Str(s),
                span,
            }) => ExecutorRef::Id(s, *span),
            Some(Spanned { value, span }) => ExecutorRef::WrongType(value.type_name(), *span),
        }
    }
    pub fn version_str(&self) -> Option<Spanned<&str>> {
        let v = self.version()?;
        v.value.as_str().map(|s| Spanned::new(s, v.span))
    }
    pub fn tool_type_str(&self) -> Option<&str> {
        self.tool_type()?.value.as_str()
    }
    /// Declared input names (`inputs`), see `io_names`.
    pub fn input_names(&self) -> Vec<String> {
        self.inputs()
            .map(|v| io_names(&v.value))
            .unwrap_or_default()
    }
    /// Declared output names (`outputs`), see `io_names`.
    pub fn output_names(&self) -> Vec<String> {
        self.outputs()
            .map(|v| io_names(&v.value))
            .unwrap_or_default()
    }
    /// `child_constraints[child_id]` as `(min_version, max_version)` spanned strings.
    pub fn constraint_for(&self, child_id: &str) -> Option<ChildConstraint> {
        let cc = self.child_constraints()?;
        let entry = cc.value.get(child_id)?;
        let bound = |key: &str| {
            entry.value.get(key).and_then(|v| match &v.value {
                Value::Str(s) => Some(Spanned::new(s.to_string(), v.span)),
                Value::Int(i) => Some(Spanned::new(i.to_string(), v.span)),
                Value::Float(f) => Some(Spanned::new(f.0.to_string(), v.span)),
                _ => None,
            })
        };
        Some(ChildConstraint {
            span: entry.span,
            min_version: bound("min_version"),
            max_version: bound("max_version"),
        })
    }
}

/// One `child_constraints` entry (§4.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildConstraint {
    pub span: Span,
    pub min_version: Option<Spanned<String>>,
    pub max_version: Option<Spanned<String>>,
}

/// Names declared by an `inputs`/`outputs` value: a list of strings (seed 004), a list of mappings
/// with `name` (directive style), or a mapping whose keys are the names. Sorted, deduplicated.
pub fn io_names(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = match v {
        Value::Str(s) => vec![s.to_string()],
        Value::List(items) => items
            .iter()
            .filter_map(|i| match &i.value {
                Value::Str(s) => Some(s.to_string()),
                Value::Map(_) => i
                    .value
                    .get("name")
                    .and_then(|n| n.value.as_str())
                    .map(str::to_owned),
                _ => None,
            })
            .collect(),
        Value::Map(m) => m.iter().map(|(k, _)| k.value.to_string()).collect(),
        _ => Vec::new(),
    };
    out.sort();
    out.dedup();
    out
}

/// A problem a parser met, with where it is. Parsing never fails; it returns what it read plus these.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ParseProblem {
    pub span: Span,
    pub message: String,
}

/// The result of parsing one file's header.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ParsedFile {
    pub metadata: Metadata,
    pub problems: Vec<ParseProblem>,
}

/// Why an item id (from a file path or an `executor_id`) is refused (§1.7, DESIGN.md item ids).
pub fn item_id_problem(id: &str) -> Option<&'static str> {
    if id.is_empty() {
        return Some("the id is empty");
    }
    if id.starts_with('/') || id.starts_with('\\') || id.get(1..2) == Some(":") {
        return Some("the id is an absolute path");
    }
    // Bytes, not `str` searches: every chain element's id is checked (2.6% of a cold lint's
    // instructions went to `str::split`'s and `contains`' char searchers).
    let b = id.as_bytes();
    if memchr::memchr(b'\\', b).is_some() {
        return Some("the id contains a backslash; ids use `/` separators");
    }
    if memchr::memchr(0, b).is_some() {
        return Some("the id contains a NUL byte");
    }
    for seg in b.split(|&c| c == b'/') {
        match seg {
            [] => return Some("the id has an empty path segment"),
            b".." => return Some("the id contains a `..` segment"),
            b"." => return Some("the id contains a `.` segment"),
            _ => {}
        }
    }
    None
}

/// A path below a space's `.ai/` built from item text (an id, a version): every `/`-separated
/// segment is checked (not empty, not `.` or `..`, no backslash or NUL, not absolute), so it
/// can only name a place inside the space. The one way to join item text onto a space's folder
/// (DESIGN.md: "one checked path builder"); writing it is `system::space_write`'s, which also
/// refuses to follow a symlink out of the space.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpaceRel(String);

impl SpaceRel {
    /// `rel` when every segment stays inside the space; otherwise why not, in words.
    pub fn new(rel: impl Into<String>) -> Result<SpaceRel, String> {
        let rel = rel.into();
        match item_id_problem(&rel) {
            None => Ok(SpaceRel(rel)),
            Some(reason) => Err(format!(
                "`{rel}` does not name a file inside the space: {}",
                reason.replacen("the id", "the path", 1)
            )),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The segments, first to last.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

impl std::fmt::Display for SpaceRel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A set of space kinds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SpaceSet(u8);

impl SpaceSet {
    pub const NONE: SpaceSet = SpaceSet(0);
    pub const ALL: SpaceSet = SpaceSet(0b111);
    /// What a lint shows unless told otherwise.
    pub const PROJECT: SpaceSet = SpaceSet(1);

    pub fn of(kind: SpaceKind) -> SpaceSet {
        SpaceSet(match kind {
            SpaceKind::Project => 1,
            SpaceKind::User => 2,
            SpaceKind::System => 4,
        })
    }

    #[must_use]
    pub fn with(self, kind: SpaceKind) -> SpaceSet {
        SpaceSet(self.0 | SpaceSet::of(kind).0)
    }

    #[must_use]
    pub fn union(self, other: SpaceSet) -> SpaceSet {
        SpaceSet(self.0 | other.0)
    }

    pub fn contains(self, kind: SpaceKind) -> bool {
        self.0 & SpaceSet::of(kind).0 != 0
    }

    pub fn meets(self, other: SpaceSet) -> bool {
        self.0 & other.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// As one byte (the lint cache stores it), and back (unknown bits dropped).
    pub fn bits(self) -> u8 {
        self.0
    }
    pub fn from_bits(bits: u8) -> SpaceSet {
        SpaceSet(bits & SpaceSet::ALL.0)
    }

    /// The kinds in it, project first.
    pub fn kinds(self) -> impl Iterator<Item = SpaceKind> {
        [SpaceKind::Project, SpaceKind::User, SpaceKind::System]
            .into_iter()
            .filter(move |&k| self.contains(k))
    }

    /// `project`, `user`, `system`, as `--space` spells them.
    pub fn names(self) -> Vec<&'static str> {
        self.kinds().map(kind_name).collect()
    }
}

/// A space kind as `--space` and the summary line spell it.
pub fn kind_name(kind: SpaceKind) -> &'static str {
    match kind {
        SpaceKind::Project => "project",
        SpaceKind::User => "user",
        SpaceKind::System => "system",
    }
}

/// The kind of a finding's space label (`project`, `user`, `system:<bundle>`).
pub fn kind_of_label(label: &str) -> Option<SpaceKind> {
    match label {
        "project" => Some(SpaceKind::Project),
        "user" => Some(SpaceKind::User),
        _ if label.starts_with("system") => Some(SpaceKind::System),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-level checks answer as `str` searches in the order they are made, for every id
    /// of up to five characters over the bytes that matter.
    #[test]
    fn id_problems_match_the_str_form_exhaustively() {
        fn by_str(id: &str) -> Option<&'static str> {
            if id.is_empty() {
                return Some("the id is empty");
            }
            if id.starts_with('/') || id.starts_with('\\') || id.get(1..2) == Some(":") {
                return Some("the id is an absolute path");
            }
            if id.contains('\\') {
                return Some("the id contains a backslash; ids use `/` separators");
            }
            if id.contains('\0') {
                return Some("the id contains a NUL byte");
            }
            id.split('/').find_map(|seg| match seg {
                "" => Some("the id has an empty path segment"),
                ".." => Some("the id contains a `..` segment"),
                "." => Some("the id contains a `.` segment"),
                _ => None,
            })
        }
        let alphabet = ['a', '/', '.', '\\', '\0', ':'];
        let mut ids = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = ids
                .iter()
                .filter(|id| id.len() == ids.last().map_or(0, String::len))
                .flat_map(|id| alphabet.iter().map(move |c| format!("{id}{c}")))
                .collect();
            ids.extend(longer);
        }
        assert_eq!(ids.len(), 1 + 6 + 36 + 216 + 1296 + 7776);
        for id in &ids {
            assert_eq!(item_id_problem(id), by_str(id), "{id:?}");
        }
    }

    #[test]
    fn hostile_ids_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "..",
            "a//b",
            "a/",
            "./a",
            "C:/x",
            "a\\b",
        ] {
            assert!(item_id_problem(bad).is_some(), "{bad:?} should be refused");
        }
        for ok in [
            "rye/bash/bash",
            "a",
            "rye/core/runtimes/python_script_runtime",
            "a.b/c-d",
        ] {
            assert_eq!(item_id_problem(ok), None, "{ok:?} should be accepted");
        }
    }

    #[test]
    fn io_names_accepts_three_shapes() {
        let s = |x: &str| Spanned::new(Value::Str(x.into()), Span::default());
        let list = Value::List(Box::new([s("b"), s("a"), s("a")]));
        assert_eq!(io_names(&list), vec!["a", "b"]);
        let map = Value::Map(Box::new([(
            Spanned::new("x".into(), Span::default()),
            s("string"),
        )]));
        assert_eq!(io_names(&map), vec!["x"]);
        let named = Value::List(Box::new([Spanned::new(map.clone(), Span::default())]));
        assert_eq!(io_names(&named), Vec::<String>::new());
        let named = Value::List(Box::new([Spanned::new(
            Value::Map(Box::new([(
                Spanned::new("name".into(), Span::default()),
                s("q"),
            )])),
            Span::default(),
        )]));
        assert_eq!(io_names(&named), vec!["q"]);
    }

    /// DESIGN.md "one checked path builder": text from an item's header can never name a
    /// place outside the space.
    #[test]
    fn space_rels_stay_inside_the_space() {
        assert_eq!(
            SpaceRel::new("lockfiles/acme/x@1.0.0.lock.json")
                .unwrap()
                .segments()
                .collect::<Vec<_>>(),
            ["lockfiles", "acme", "x@1.0.0.lock.json"]
        );
        for bad in [
            "lockfiles/x@1.0.0/../../../../tmp/x.lock.json",
            "/etc/passwd",
            "lockfiles//x",
            "lockfiles/./x",
            "lockfiles\\x",
            "c:/x",
            "",
            "x\0y",
        ] {
            let e = SpaceRel::new(bad).unwrap_err();
            assert!(
                e.contains("does not name a file inside the space"),
                "{bad}: {e}"
            );
            assert!(!e.contains("the id"), "{e}");
        }
    }
}
