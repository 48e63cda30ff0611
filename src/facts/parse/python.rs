//! The `python/ast` metadata parser (§2.2–2.3): top-level literal assignments of a `.py` file.
//!
//! Only the top-level statements that can hold what is read are parsed, with ruff's Python
//! parser: a scan of the whole file (`py_scan`) finds them and checks what a broken or truncated
//! file leaves behind (open strings, brackets and blocks, bad indentation, headers without `:`,
//! lines ending in an operator); a tool's body, most of its bytes, is never parsed, and a
//! statement whose value is a plain literal (strings, ints, booleans, `None`, lists and dicts
//! of them) is read on the spot without ruff, as ruff would read it. When the scan
//! finds such damage, or a statement read has a syntax error, the whole text is parsed in
//! error-recovery mode, so a file with a syntax error still yields the header values that could
//! be read, plus one [`ParseProblem`] per error. Other grammar errors inside bodies are not
//! reported (the spec leaves "syntax error" to the implementation, §2.3; the rule's docs say
//! what counts).
//!
//! What is read: every top-level `Assign` statement with exactly one plain-name target
//! (`NAME = value`); later assignments to a name replace earlier ones. Annotated assignments,
//! augmented assignments, tuple/attribute/subscript/chained targets and anything nested in a
//! compound statement (`if`, `def`, `class`, `try`, ...) are ignored. An assignment written on
//! a line that holds a syntax error is not read either: the recovered tree there is a guess.
//!
//! What counts as a literal (`ast.literal_eval`, §2.3): str (every quoting and prefix, implicit
//! concatenation), bytes (decoded lossily into a string), int (beyond `i64` it becomes a float),
//! float, `True`/`False`/`None`, tuple/list/set (→ [`Value::List`]), `set()`, dict (→
//! [`Value::Map`]), and unary `-`/`+` applied once to a number or bool. Complex numbers are
//! literals to Python but have no [`Value`], so a value containing one is skipped like any
//! non-literal (calls, names, f-strings, operators, comprehensions, `**` splats, ...). A dict key
//! must be a scalar literal: strings are used as is, ints/floats/bools/`None` become their Python
//! `repr` (`1`, `2.5`, `True`, `None`); any other key makes the whole value non-literal.

use std::cell::{Cell, RefCell};

use ruff_python_ast::visitor::transformer::{self, Transformer};
use ruff_python_ast::{self as ast, AtomicNodeIndex, Expr, Number, PySourceType, Stmt, UnaryOp};
use ruff_python_parser::parse_unchecked_source;
use ruff_text_size::{Ranged, TextRange};

use super::py_scan::{self, Head};
use super::{EntryPoint, FieldNames, Fields, MAX_NESTING, MAX_TEXT_LEN, clamp_span};
use crate::model::{F64, ParseProblem, ParsedFile, Span, Spanned, Str, Value};

/// Python variable names feeding each metadata field: dunder before bare name, upper-case
/// before lower-case (§2.3 normalisation, DESIGN.md "Metadata").
pub(crate) const PYTHON_FIELDS: FieldNames = FieldNames {
    version: &["__version__", "version"],
    tool_type: &["__tool_type__", "tool_type"],
    executor_id: &["__executor_id__", "executor_id"],
    category: &["__category__", "category"],
    tool_description: &["__tool_description__", "tool_description"],
    config_schema: &["CONFIG_SCHEMA", "config_schema"],
    env_config: &["ENV_CONFIG", "env_config"],
    config: &["CONFIG", "config"],
    anchor: &["anchor"],
    verify_deps: &["verify_deps"],
    config_resolve: &["CONFIG_RESOLVE", "config_resolve"],
    inputs: &["INPUTS", "inputs"],
    outputs: &["OUTPUTS", "outputs"],
    child_constraints: &["CHILD_CONSTRAINTS", "child_constraints"],
};

/// Bracket depth past which a file is not handed to ruff's parser at all (its cost grows with the
/// depth; literal values deeper than `MAX_NESTING` are still refused one by one, keeping the rest
/// of the header).
const MAX_BRACKET_DEPTH: usize = 10_000;

/// Read the metadata header of a Python file (§2.3). Never panics.
pub fn parse_python(text: &str) -> ParsedFile {
    let (values, problems) = top_level_literals(text, |name| PYTHON_FIELDS.contains(name));
    let mut fields = Fields::new(&PYTHON_FIELDS);
    for (name, value) in values {
        fields.insert(&name, value);
    }
    ParsedFile {
        metadata: fields.metadata(),
        problems,
    }
}

/// Every top-level `NAME = <literal>` of a Python file whose name is `wanted`, in file order (a
/// later assignment to a name comes later in the list), with the problems met (syntax errors,
/// too-deep wanted values). This is what the header parser (metadata names) and the Python
/// extractor reader (`EXTENSIONS`, `PARSERS`, §1.5) both read; other names' values are never
/// built, so a module of many constants costs only its parse. Never panics.
pub fn top_level_literals(text: &str, wanted: impl Fn(&str) -> bool) -> Literals {
    if text.len() > MAX_TEXT_LEN {
        return (Vec::new(), super::too_large("Python").problems);
    }
    if let Some(at) = super::guard::python_too_deep(text, MAX_BRACKET_DEPTH) {
        let problem = ParseProblem {
            span: super::clamp_span(text, at, at + 1),
            message: format!(
                "brackets nested deeper than {MAX_BRACKET_DEPTH} levels; the header is not read"
            ),
        };
        return (Vec::new(), vec![problem]);
    }
    if let Some(found) = literals_of_statements(text, &wanted) {
        return found;
    }
    if text.len() >= LARGE_FILE_BYTES
        && let Some(found) = literals_in_pieces(text, &wanted)
    {
        return found;
    }
    literals_whole(text, &wanted)
}

/// Statements closer than this are parsed together with what lies between them (one parse
/// rather than one per statement: the dunders of a header sit a line apart).
const MERGE_GAP: usize = 512;

/// What the header reader does with a statement that can hold a wanted value.
enum ToRead<'t> {
    /// Parse `text[start..end]` (statements merged with what lies between them).
    Piece(usize, usize),
    /// `NAME = <plain literal>` read without the parser ([`simple_literal_assignment`]).
    Simple(&'t str, Spanned<Value>),
}

/// The top-level statements of `text` that can hold a wanted value (see [`py_scan`]): each
/// `NAME = …` statement whose name is wanted, and each logical line holding a `;`, merged with
/// their neighbours when close; a plain literal assignment is read on the spot. In file order.
/// `None` when the scan gave up.
fn statements_to_read<'t>(
    text: &'t str,
    wanted: &impl Fn(&str) -> bool,
) -> Option<Vec<ToRead<'t>>> {
    let stmts = py_scan::top_level(text)?;
    let mut out: Vec<ToRead<'t>> = Vec::new();
    for (i, stmt) in stmts.iter().enumerate() {
        let name = match stmt.head {
            Head::Assign(name) if wanted(name) => Some(name),
            _ => None,
        };
        if !stmt.semicolon && name.is_none() {
            continue;
        }
        let end = stmts.get(i + 1).map_or(text.len(), |next| next.start);
        if let Some(name) = name.filter(|_| !stmt.semicolon)
            && let Some(value) = simple_literal_assignment(text, stmt.start, end)
        {
            out.push(ToRead::Simple(name, value));
            continue;
        }
        match out.last_mut() {
            Some(ToRead::Piece(_, last_end)) if stmt.start - *last_end < MERGE_GAP => {
                *last_end = end;
            }
            _ => out.push(ToRead::Piece(stmt.start, end)),
        }
    }
    Some(out)
}

/// The value of a statement `text[start..end]` of the form `NAME = <plain literal>`, read
/// without ruff: what ruff and [`LiteralReader`] would read from it, or `None` for any other
/// statement (which is then parsed). A plain literal is a string without prefix, escape, line
/// break or control character (and not followed by another: implicit concatenation), a decimal
/// int that fits an `i64` (optionally negated by a `-` right before it), `True`, `False`, `None`,
/// or a list or dict of plain literals (dict keys plain strings) nested less than
/// [`MAX_NESTING`] deep; inside brackets, spaces, line breaks (`\n`), comments and a trailing
/// comma may sit between tokens. After the value: spaces and a comment on its last line, then
/// only blank and comment lines up to `end`.
fn simple_literal_assignment(text: &str, start: usize, end: usize) -> Option<Spanned<Value>> {
    let stmt = &text[start..end];
    let b = stmt.as_bytes();
    let mut i = 0;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        i += 1;
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    if b.get(i) != Some(&b'=') || b.get(i + 1) == Some(&b'=') {
        return None;
    }
    i += 1;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    let mut r = PlainLiteral {
        b,
        text: stmt,
        base: start,
        pos: i,
        items: Vec::new(),
        entries: Vec::new(),
    };
    let value = r.value(0)?;
    // The rest: spaces and a comment on the line, then blank and comment lines only.
    for (n, line) in super::split_newlines(&stmt[r.pos..]).enumerate() {
        let rest = line.trim_start_matches(' ');
        let comment = rest.starts_with('#') && !rest.contains('\r');
        if !(rest.is_empty() || comment || (n == 0 && line.is_empty())) {
            return None;
        }
        if n == 0 && !rest.is_empty() && !line.starts_with(' ') {
            return None;
        }
    }
    Some(value)
}

/// The reader of [`simple_literal_assignment`]: `pos` moves through `b` (= `text`, which starts
/// at byte `base` of the file).
struct PlainLiteral<'t> {
    b: &'t [u8],
    text: &'t str,
    base: usize,
    pos: usize,
    /// The items of the lists and dicts being read, innermost last: each takes its own off the
    /// top when it closes, into a slice of exactly their number (a header is held for the whole
    /// run; a `Vec` grown item by item kept up to twice the room).
    items: Vec<Spanned<Value>>,
    entries: Vec<(Spanned<Str>, Spanned<Value>)>,
}

impl PlainLiteral<'_> {
    fn spanned(&self, value: Value, start: usize) -> Spanned<Value> {
        Spanned::new(value, Span::new(self.base + start, self.base + self.pos))
    }

    /// Past spaces, line breaks and comments between the tokens of a bracketed value; `None` at
    /// anything it does not model (`\r`, tabs, form feeds, continuations).
    fn blanks(&mut self) -> Option<()> {
        loop {
            match self.b.get(self.pos) {
                Some(b' ' | b'\n') => self.pos += 1,
                Some(b'#') => {
                    let rest = &self.b[self.pos..];
                    let n = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
                    if memchr::memchr(b'\r', &rest[..n]).is_some() {
                        return None;
                    }
                    self.pos += n;
                }
                Some(b'\r' | b'\t' | b'\x0c' | b'\\') => return None,
                _ => return Some(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<Spanned<Value>> {
        if depth >= MAX_NESTING {
            return None;
        }
        let start = self.pos;
        let value = match *self.b.get(self.pos)? {
            b'"' | b'\'' => Value::Str(self.string()?),
            b'-' | b'0'..=b'9' => self.int()?,
            b'[' => {
                self.pos += 1;
                let mark = self.items.len();
                self.blanks()?;
                while self.b.get(self.pos) != Some(&b']') {
                    let item = self.value(depth + 1)?;
                    self.items.push(item);
                    if !self.comma_or(b']')? {
                        break;
                    }
                }
                self.pos += 1;
                Value::List(self.items.drain(mark..).collect())
            }
            b'{' => {
                self.pos += 1;
                let mark = self.entries.len();
                self.blanks()?;
                while self.b.get(self.pos) != Some(&b'}') {
                    let key_start = self.pos;
                    if !matches!(self.b.get(self.pos), Some(b'"' | b'\'')) {
                        return None;
                    }
                    let key = self.string()?;
                    let key =
                        Spanned::new(key, Span::new(self.base + key_start, self.base + self.pos));
                    self.blanks()?;
                    if self.b.get(self.pos) != Some(&b':') {
                        return None;
                    }
                    self.pos += 1;
                    self.blanks()?;
                    let value = self.value(depth + 1)?;
                    self.entries.push((key, value));
                    if !self.comma_or(b'}')? {
                        break;
                    }
                }
                self.pos += 1;
                Value::Map(self.entries.drain(mark..).collect())
            }
            _ => {
                let word = self.b[self.pos..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c >= 0x80)
                    .count();
                let value = match &self.text[self.pos..self.pos + word] {
                    "True" => Value::Bool(true),
                    "False" => Value::Bool(false),
                    "None" => Value::Null,
                    _ => return None,
                };
                self.pos += word;
                value
            }
        };
        Some(self.spanned(value, start))
    }

    /// After an item of a list or dict: blanks, then `,` (and blanks: `true`, another item may
    /// follow) or the closing bracket `close` (`false`, left for the caller); `None` otherwise.
    fn comma_or(&mut self, close: u8) -> Option<bool> {
        self.blanks()?;
        match *self.b.get(self.pos)? {
            b',' => {
                self.pos += 1;
                self.blanks()?;
                Some(true)
            }
            c if c == close => Some(false),
            _ => None,
        }
    }

    /// A one-line string without prefix, escape or control character (tabs aside), quoted by
    /// the byte at `pos`; not a triple-quoted one.
    fn string(&mut self) -> Option<Str> {
        let q = self.b[self.pos];
        let open = self.pos;
        let len = memchr::memchr(q, &self.b[open + 1..])?;
        let close = open + 1 + len;
        // An empty string followed by the same quote opens a triple-quoted string.
        if len == 0 && self.b.get(close + 1) == Some(&q) {
            return None;
        }
        let content = &self.text[open + 1..close];
        if content
            .bytes()
            .any(|c| c == b'\\' || (c < b' ' && c != b'\t') || c == 0x7f)
        {
            return None;
        }
        self.pos = close + 1;
        Some(Str::from(content))
    }

    /// A decimal int that fits an `i64`, optionally with a `-` right before it; nothing else of
    /// a number (a `.`, an exponent, a `j`, `_` or another base) may follow.
    fn int(&mut self) -> Option<Value> {
        let negate = self.b[self.pos] == b'-';
        let digits_at = self.pos + usize::from(negate);
        let n = self.b[digits_at..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let digits = &self.text[digits_at..digits_at + n];
        let next = self.b.get(digits_at + n).copied().unwrap_or(b' ');
        if n == 0
            || (n > 1 && digits.starts_with('0'))
            || next == b'.'
            || next.is_ascii_alphanumeric()
            || next == b'_'
            || next >= 0x80
        {
            return None;
        }
        let u: u64 = digits.parse().ok()?;
        let v = match i64::try_from(u) {
            Ok(v) if negate => -v,
            Ok(v) => v,
            Err(_) if negate && u == 1u64 << 63 => i64::MIN,
            Err(_) => return None,
        };
        self.pos = digits_at + n;
        Some(Value::Int(v))
    }
}

/// [`top_level_literals`] from a parse of only the statements that can hold wanted values (see
/// [`statements_to_read`]): a tool's body (most of its bytes) is never parsed. `None` when the
/// scan gave up or a statement read has a syntax error (the whole text is then parsed, and its
/// problems are the whole parse's). What counts as a syntax error is therefore: an error in a
/// statement read, or any of the damage [`py_scan`] looks for anywhere in the file.
fn literals_of_statements(text: &str, wanted: &impl Fn(&str) -> bool) -> Option<Literals> {
    let mut values = Vec::new();
    let mut problems = Vec::new();
    for item in statements_to_read(text, wanted)? {
        match item {
            ToRead::Simple(name, value) => values.push((name.to_owned(), value)),
            ToRead::Piece(s, e) => {
                let (v, p) = literals_of_pieces(std::iter::once((s, &text[s..e])), wanted)?;
                values.extend(v);
                problems.extend(p);
            }
        }
    }
    Some((values, problems))
}

/// The wanted literals of pieces of a file (each with its byte offset) parsed one by one; `None`
/// as soon as a piece does not parse cleanly.
fn literals_of_pieces<'t>(
    pieces: impl Iterator<Item = (usize, &'t str)>,
    wanted: &impl Fn(&str) -> bool,
) -> Option<Literals> {
    let mut values = Vec::new();
    let mut problems = Vec::new();
    for (base, piece) in pieces {
        let parsed = parse_unchecked_source(piece, PySourceType::Python);
        let clean = parsed.errors().is_empty();
        if clean {
            let errors = ErrorIndex::new(piece, std::iter::empty());
            let found = literals_of(piece, base, &parsed, &errors, wanted);
            values.extend(found.0);
            problems.extend(found.1);
        }
        dismantle(parsed.into_syntax().body);
        if !clean {
            return None;
        }
    }
    Some((values, problems))
}

/// The wanted values and the problems met, as [`top_level_literals`] returns them.
type Literals = (Vec<(String, Spanned<Value>)>, Vec<ParseProblem>);

/// [`top_level_literals`] read a piece at a time (see [`chunks`]); `None` when a piece does not
/// parse cleanly (the whole file must then be parsed as one).
fn literals_in_pieces(text: &str, wanted: &impl Fn(&str) -> bool) -> Option<Literals> {
    literals_of_pieces(chunks(text), wanted)
}

/// [`top_level_literals`] from one parse of the whole text.
fn literals_whole(text: &str, wanted: &impl Fn(&str) -> bool) -> Literals {
    let _one_at_a_time = large_parse_turn(text);
    let parsed = parse_unchecked_source(text, PySourceType::Python);
    let mut problems: Vec<ParseProblem> = parsed
        .errors()
        .iter()
        .map(|e| ParseProblem {
            span: span_of(text, e.location),
            message: format!("Python syntax error: {}", e.error),
        })
        .collect();
    let errors = ErrorIndex::new(text, parsed.errors().iter().map(|e| e.location));
    let (values, too_deep) = literals_of(text, 0, &parsed, &errors, wanted);
    problems.extend(too_deep);
    dismantle(parsed.into_syntax().body);
    (values, problems)
}

/// The wanted top-level literals of one parsed module (`text` starting at byte `base` of the
/// file), and a problem for each wanted value nested too deep.
fn literals_of(
    text: &str,
    base: usize,
    parsed: &ruff_python_parser::Parsed<ast::ModModule>,
    errors: &ErrorIndex,
    wanted: &impl Fn(&str) -> bool,
) -> (Vec<(String, Spanned<Value>)>, Vec<ParseProblem>) {
    let mut values = Vec::new();
    let mut problems = Vec::new();
    for stmt in &parsed.syntax().body {
        let Stmt::Assign(assign) = stmt else { continue };
        let [Expr::Name(target)] = assign.targets.as_slice() else {
            continue;
        };
        if !wanted(target.id.as_str())
            || target.is_invalid()
            || errors.on_lines_of(text, assign.range)
        {
            continue;
        }
        let reader = LiteralReader {
            text,
            base,
            too_deep: Cell::new(false),
        };
        match reader.literal(&assign.value, 0) {
            Some(value) => values.push((target.id.as_str().to_owned(), value)),
            None if reader.too_deep.get() => problems.push(ParseProblem {
                span: reader.span(assign.value.range()),
                message: format!(
                    "`{}` is nested deeper than {MAX_NESTING} levels; its value is not read",
                    target.id.as_str()
                ),
            }),
            None => {}
        }
    }
    (values, problems)
}

/// From this size on, a file is parsed a piece at a time (see [`chunks`]): ruff's syntax tree
/// takes about 30 bytes per byte of source, so a 7 MB module held a 200 MiB tree.
const LARGE_FILE_BYTES: usize = 1 << 20;

/// The size a piece of a large file grows to before it is cut at the next safe line.
const CHUNK_BYTES: usize = 256 << 10;

/// A large file cut into pieces of whole top-level statements, each with its byte offset. A cut
/// goes before a line that starts in column 0 with a name character (not `else`, `elif`,
/// `except`, `finally`), after a line that also starts in column 0 with a name character and
/// does not end with `\`, `:`, `,` or an opening bracket: a simple top-level statement ends
/// there, as far as a line can tell.
///
/// A line cannot tell whether it lies inside a string or brackets opened earlier. That is why a
/// piece counts only when it parses without a single error, and the whole file is parsed as one
/// otherwise: a piece that parses cleanly from a fresh start ends with the lexer in a fresh state
/// (no string or bracket open, no block pending), which is the state the whole file's lexer is
/// in at the cut too. So a file whose pieces all parse cleanly has exactly their statements, in
/// order, and no syntax error, as the single parse would find.
fn chunks(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = next_cut(text, start + CHUNK_BYTES).unwrap_or(text.len());
        let piece = (start, &text[start..end]);
        start = end;
        Some(piece)
    })
}

/// The first safe cut (see [`chunks`]) at or after byte `from`, if any.
fn next_cut(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    if from >= b.len() {
        return None;
    }
    let starts_statement = |at: usize| {
        b.get(at)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    };
    let mut line = from;
    loop {
        // The start of the next line after `line - 1`.
        let nl = memchr::memchr(b'\n', &b[line.saturating_sub(1)..])? + line.saturating_sub(1);
        let next = nl + 1;
        if next >= b.len() {
            return None;
        }
        let prev_start = b[..nl]
            .iter()
            .rposition(|c| *c == b'\n')
            .map_or(0, |p| p + 1);
        let prev = text[prev_start..nl].trim_end_matches('\r').trim_end();
        let continues = ["else", "elif", "except", "finally"].iter().any(|k| {
            text[next..].starts_with(k)
                && !b
                    .get(next + k.len())
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        });
        if starts_statement(next)
            && starts_statement(prev_start)
            && !continues
            && !prev.ends_with(['\\', ':', ',', '(', '[', '{'])
        {
            return Some(next);
        }
        line = next + 1;
    }
}

/// A whole-file parse of a large file waits for any other to finish: a large file that could not
/// be read in pieces (a syntax error, an unlucky cut) builds its whole tree, and two such trees
/// at once on two threads doubled the peak. Nothing is awaited while the turn is held (the parse
/// is pure), so it cannot deadlock.
fn large_parse_turn(text: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    (text.len() >= LARGE_FILE_BYTES).then(|| TURN.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Whether the module's code is meant to be run, and how (a fact for `unknown-primitive`, never
/// part of the metadata): a top-level `if __name__ == "__main__":` block (either operand order,
/// `==` only), or a top-level `def execute` / `async def execute` (the `python/function`
/// runtime's entry point). Nested definitions and blocks do not count. Never panics.
pub fn entry_point(text: &str) -> Option<EntryPoint> {
    if text.len() > MAX_TEXT_LEN || super::guard::python_too_deep(text, MAX_BRACKET_DEPTH).is_some()
    {
        return None;
    }
    if let Some(found) = entry_point_of_statements(text) {
        return found;
    }
    if text.len() >= LARGE_FILE_BYTES
        && let Some(found) = entry_point_in_pieces(text)
    {
        return found;
    }
    entry_point_whole(text)
}

/// [`entry_point`] from the top-level statements (see [`py_scan`]): `def execute` and `async def
/// execute` are known by their first line, each top-level `if` block is parsed on its own, and
/// so is each statement that may run code (one the scan could not name and that is no import,
/// class or declaration, or one sharing its line with others). `None` when the scan gave up or
/// such a statement has a syntax error (parse the whole text).
fn entry_point_of_statements(text: &str) -> Option<Option<EntryPoint>> {
    let stmts = py_scan::top_level(text)?;
    // Top-level code counts only when no `__main__` block or `execute` says more.
    let mut code = false;
    for (i, stmt) in stmts.iter().enumerate() {
        let piece = &text[stmt.start..stmts.get(i + 1).map_or(text.len(), |next| next.start)];
        match stmt.head {
            Head::Def("execute") => return Some(Some(EntryPoint::ExecuteFunction)),
            Head::If => {
                let parsed = parse_unchecked_source(piece, PySourceType::Python);
                let clean = parsed.errors().is_empty();
                let found = clean.then(|| entry_point_of(&parsed)).flatten();
                dismantle(parsed.into_syntax().body);
                if !clean {
                    return None;
                }
                if found.is_some() {
                    return Some(found);
                }
            }
            _ if !code && (stmt.semicolon || (stmt.head == Head::Other && may_run_code(piece))) => {
                let parsed = parse_unchecked_source(piece, PySourceType::Python);
                let clean = parsed.errors().is_empty();
                code = parsed.syntax().body.iter().any(runs_code);
                dismantle(parsed.into_syntax().body);
                if !clean {
                    return None;
                }
            }
            _ => {}
        }
    }
    Some(code.then_some(EntryPoint::TopLevelCode))
}

/// [`entry_point`] read a piece at a time, up to the first piece with a syntax error: the
/// statements before it are the whole file's (see [`chunks`]), so the first `__main__` block or
/// `execute` among them is the answer, else whether any runs code. `None` when that piece comes
/// first (parse the whole file).
fn entry_point_in_pieces(text: &str) -> Option<Option<EntryPoint>> {
    let mut code = false;
    for (_, chunk) in chunks(text) {
        let parsed = parse_unchecked_source(chunk, PySourceType::Python);
        let clean = parsed.errors().is_empty();
        let found = if clean { entry_point_of(&parsed) } else { None };
        dismantle(parsed.into_syntax().body);
        if !clean {
            return None;
        }
        match found {
            Some(EntryPoint::TopLevelCode) => code = true,
            Some(found) => return Some(Some(found)),
            None => {}
        }
    }
    Some(code.then_some(EntryPoint::TopLevelCode))
}

/// [`entry_point`] from one parse of the whole text.
fn entry_point_whole(text: &str) -> Option<EntryPoint> {
    let _one_at_a_time = large_parse_turn(text);
    let parsed = parse_unchecked_source(text, PySourceType::Python);
    let found = entry_point_of(&parsed);
    dismantle(parsed.into_syntax().body);
    found
}

/// The first top-level statement of a parsed module that makes it an entry point.
fn entry_point_of(parsed: &ruff_python_parser::Parsed<ast::ModModule>) -> Option<EntryPoint> {
    let body = &parsed.syntax().body;
    body.iter()
        .find_map(|stmt| match stmt {
            Stmt::If(s) if is_main_test(&s.test) => Some(EntryPoint::MainBlock),
            Stmt::FunctionDef(f) if f.name.id.as_str() == "execute" => {
                Some(EntryPoint::ExecuteFunction)
            }
            _ => None,
        })
        .or_else(|| {
            body.iter()
                .any(runs_code)
                .then_some(EntryPoint::TopLevelCode)
        })
}

/// A top-level statement that runs code when the module runs ([`EntryPoint::TopLevelCode`]).
fn runs_code(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Expr(e) => matches!(&*e.value, Expr::Call(_) | Expr::Await(_)),
        Stmt::For(_) | Stmt::While(_) | Stmt::With(_) => true,
        _ => false,
    }
}

/// Whether a top-level statement the scan could not name may run code: not an import, a class,
/// a decorator, a docstring or another plain declaration (those are never parsed).
fn may_run_code(stmt_text: &str) -> bool {
    let first = stmt_text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or_default();
    if first.is_empty() {
        // A docstring, a decorator, a comment... or a bracketed expression.
        return stmt_text.starts_with(['(', '[']);
    }
    !matches!(
        first,
        "import"
            | "from"
            | "class"
            | "try"
            | "global"
            | "nonlocal"
            | "pass"
            | "del"
            | "assert"
            | "raise"
            | "return"
            | "type"
            | "match"
            | "elif"
            | "else"
            | "except"
            | "finally"
    )
}

/// `__name__ == "__main__"` or `"__main__" == __name__`.
fn is_main_test(test: &Expr) -> bool {
    let Expr::Compare(cmp) = test else {
        return false;
    };
    let ([ast::CmpOp::Eq], [right]) = (&*cmp.ops, &*cmp.comparators) else {
        return false;
    };
    let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == "__name__");
    let is_main = |e: &Expr| matches!(e, Expr::StringLiteral(s) if s.value.to_str() == "__main__");
    (is_name(&cmp.left) && is_main(right)) || (is_main(&cmp.left) && is_name(right))
}

/// Drop a syntax tree without recursion. The derived `Drop` of ruff's AST recurses once per
/// nesting level, so a pathological file (`[[[[…` a hundred thousand deep, `1+1+1+…`, `a.a.a…`)
/// that ruff parses fine on its grown stack would overflow ours when the tree is dropped. Here
/// every statement, expression, pattern and f-string element is detached from its parent (a
/// leaf is left in its place) and pushed onto a work list, so each node is dropped shallow.
///
/// A node spanning fewer than [`SHALLOW_BYTES`] of source is dropped whole: every nesting level
/// takes at least one character of source (`-x`, `[x]`, `a.b`), so its recursion is bounded
/// by its length, and the common file pays for dismantling only its few large statements.
fn dismantle(body: impl IntoIterator<Item = Stmt>) {
    let dismantler = Dismantler::default();
    dismantler
        .work
        .borrow_mut()
        .extend(body.into_iter().map(Node::Stmt));
    loop {
        let Some(node) = dismantler.work.borrow_mut().pop() else {
            break;
        };
        if node.source_len() < SHALLOW_BYTES {
            drop(node);
            continue;
        }
        match node {
            Node::Stmt(mut stmt) => transformer::walk_stmt(&dismantler, &mut stmt),
            Node::Expr(mut expr) => transformer::walk_expr(&dismantler, &mut expr),
            Node::Pattern(mut pattern) => transformer::walk_pattern(&dismantler, &mut pattern),
            Node::Element(mut element) => {
                transformer::walk_interpolated_string_element(&dismantler, &mut element);
            }
        }
    }
}

/// Below this many source bytes a node is dropped by its own (recursive) `Drop`: at most that
/// many levels deep, a few hundred kilobytes of stack at worst.
const SHALLOW_BYTES: u32 = 1024;

enum Node {
    Stmt(Stmt),
    Expr(Expr),
    Pattern(ast::Pattern),
    Element(ast::InterpolatedStringElement),
}

impl Node {
    fn source_len(&self) -> u32 {
        let range = match self {
            Node::Stmt(n) => n.range(),
            Node::Expr(n) => n.range(),
            Node::Pattern(n) => n.range(),
            Node::Element(n) => n.range(),
        };
        range.len().to_u32()
    }
}

#[derive(Default)]
struct Dismantler {
    work: RefCell<Vec<Node>>,
}

impl Transformer for Dismantler {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        let leaf = Stmt::Pass(ast::StmtPass {
            node_index: AtomicNodeIndex::NONE,
            range: TextRange::default(),
        });
        self.work
            .borrow_mut()
            .push(Node::Stmt(std::mem::replace(stmt, leaf)));
    }
    fn visit_expr(&self, expr: &mut Expr) {
        let leaf = Expr::NoneLiteral(ast::ExprNoneLiteral::default());
        self.work
            .borrow_mut()
            .push(Node::Expr(std::mem::replace(expr, leaf)));
    }
    fn visit_pattern(&self, pattern: &mut ast::Pattern) {
        let leaf = ast::Pattern::MatchSingleton(ast::PatternMatchSingleton {
            node_index: AtomicNodeIndex::NONE,
            range: TextRange::default(),
            value: ast::Singleton::None,
        });
        self.work
            .borrow_mut()
            .push(Node::Pattern(std::mem::replace(pattern, leaf)));
    }
    fn visit_interpolated_string_element(&self, element: &mut ast::InterpolatedStringElement) {
        let leaf = ast::InterpolatedStringElement::Literal(ast::InterpolatedStringLiteralElement {
            range: TextRange::default(),
            node_index: AtomicNodeIndex::NONE,
            value: Box::default(),
        });
        self.work
            .borrow_mut()
            .push(Node::Element(std::mem::replace(element, leaf)));
    }
}

/// Syntax error ranges sorted by start, with running maxima of their ends, so "does this
/// statement's lines hold an error" is a binary search rather than a scan (a file can hold many
/// errors). Empty error ranges count as one byte wide.
struct ErrorIndex {
    starts: Vec<usize>,
    max_end: Vec<usize>,
    /// Offsets of the text's line breaks (only collected when there are errors): each `\n` and
    /// each lone `\r` (Python's tokenizer ends lines at either, as universal newlines do).
    newlines: Vec<usize>,
}

impl ErrorIndex {
    fn new(text: &str, ranges: impl Iterator<Item = TextRange>) -> Self {
        let mut ranges: Vec<(usize, usize)> = ranges
            .map(|r| {
                let start = r.start().to_usize();
                (start, r.end().to_usize().max(start + 1))
            })
            .collect();
        ranges.sort_unstable();
        let starts = ranges.iter().map(|r| r.0).collect();
        let max_end = ranges
            .iter()
            .scan(0, |max, r| {
                *max = (*max).max(r.1);
                Some(*max)
            })
            .collect();
        let newlines = if ranges.is_empty() {
            Vec::new()
        } else {
            let b = text.as_bytes();
            memchr::memchr2_iter(b'\n', b'\r', b)
                .filter(|&i| b[i] == b'\n' || b.get(i + 1) != Some(&b'\n'))
                .collect()
        };
        ErrorIndex {
            starts,
            max_end,
            newlines,
        }
    }

    /// Whether an error overlaps the lines `range` is written on: from the start of its first
    /// line through the line break ending its last line (one past the end at end of text).
    fn on_lines_of(&self, text: &str, range: TextRange) -> bool {
        let (start, end) = (range.start().to_usize(), range.end().to_usize());
        if self.starts.is_empty() {
            return false;
        }
        let before = self.newlines.partition_point(|p| *p < start);
        let from = before
            .checked_sub(1)
            .and_then(|i| self.newlines.get(i))
            .map_or(0, |p| p + 1);
        let after = self.newlines.partition_point(|p| *p < end);
        let to = self.newlines.get(after).map_or(text.len() + 1, |p| p + 1);
        let n = self.starts.partition_point(|s| *s < to);
        n > 0 && self.max_end.get(n - 1).is_some_and(|e| *e > from)
    }
}

fn span_of(text: &str, range: TextRange) -> Span {
    clamp_span(text, range.start().to_usize(), range.end().to_usize())
}

/// Converts literal expressions into spanned [`Value`]s; `None` means "not a literal".
struct LiteralReader<'t> {
    text: &'t str,
    /// Byte offset of `text` in the file (a piece of a large file starts past 0).
    base: usize,
    /// Set when conversion stopped at [`MAX_NESTING`] rather than at a non-literal.
    too_deep: Cell<bool>,
}

impl LiteralReader<'_> {
    fn spanned(&self, value: Value, range: TextRange) -> Spanned<Value> {
        Spanned::new(value, self.span(range))
    }

    /// The span of `range` of `text`, in the file.
    fn span(&self, range: TextRange) -> Span {
        let span = span_of(self.text, range);
        if self.base == 0 {
            return span;
        }
        Span::new(
            span.start as usize + self.base,
            span.end as usize + self.base,
        )
    }

    fn literal(&self, expr: &Expr, depth: usize) -> Option<Spanned<Value>> {
        if depth > MAX_NESTING {
            self.too_deep.set(true);
            return None;
        }
        let value = match expr {
            Expr::StringLiteral(s) => Value::Str(Str::from(s.value.to_str())),
            Expr::BytesLiteral(b) => {
                let bytes: Vec<u8> = b.value.bytes().collect();
                Value::Str(String::from_utf8_lossy(&bytes).into())
            }
            Expr::NumberLiteral(n) => number(&n.value, false)?,
            Expr::BooleanLiteral(b) => Value::Bool(b.value),
            Expr::NoneLiteral(_) => Value::Null,
            Expr::UnaryOp(u) => signed(u)?,
            Expr::List(ast::ExprList { elts, .. })
            | Expr::Tuple(ast::ExprTuple { elts, .. })
            | Expr::Set(ast::ExprSet { elts, .. }) => Value::List(
                elts.iter()
                    .map(|e| self.literal(e, depth + 1))
                    .collect::<Option<Box<[_]>>>()?,
            ),
            Expr::Dict(d) => {
                let mut entries = Vec::with_capacity(d.items.len());
                for item in &d.items {
                    let key_expr = item.key.as_ref()?;
                    let key = Spanned::new(dict_key(key_expr)?, self.span(key_expr.range()));
                    entries.push((key, self.literal(&item.value, depth + 1)?));
                }
                Value::Map(entries.into_boxed_slice())
            }
            // `set()` is the one call `ast.literal_eval` accepts: the empty set.
            Expr::Call(call)
                if call.arguments.args.is_empty()
                    && call.arguments.keywords.is_empty()
                    && matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "set") =>
            {
                Value::List(Box::default())
            }
            _ => return None,
        };
        Some(self.spanned(value, expr.range()))
    }
}

/// A number literal, optionally negated. Complex numbers have no [`Value`].
fn number(n: &Number, negate: bool) -> Option<Value> {
    match n {
        Number::Int(i) => {
            if let Some(v) = i.as_i64() {
                return Some(Value::Int(if negate { -v } else { v }));
            }
            if let Some(u) = i.as_u64() {
                if negate && u == 1u64 << 63 {
                    return Some(Value::Int(i64::MIN));
                }
                let f = u as f64;
                return Some(Value::Float(F64(if negate { -f } else { f })));
            }
            let f = big_int_decimal(&i.to_string())?.parse::<f64>().ok()?;
            Some(Value::Float(F64(if negate { -f } else { f })))
        }
        Number::Float(f) => Some(Value::Float(F64(if negate { -f } else { *f }))),
        Number::Complex { .. } => None,
    }
}

/// `-x` / `+x` on a number or bool literal (one level only, as `ast.literal_eval`).
fn signed(u: &ast::ExprUnaryOp) -> Option<Value> {
    let negate = match u.op {
        UnaryOp::USub => true,
        UnaryOp::UAdd => false,
        UnaryOp::Not | UnaryOp::Invert => return None,
    };
    match &*u.operand {
        Expr::NumberLiteral(n) => number(&n.value, negate),
        Expr::BooleanLiteral(b) => {
            let v = i64::from(b.value);
            Some(Value::Int(if negate { -v } else { v }))
        }
        _ => None,
    }
}

/// The string a literal dict key is stored under: strings as is, other scalars as Python `repr`.
fn dict_key(expr: &Expr) -> Option<Str> {
    Some(match expr {
        Expr::StringLiteral(s) => Str::from(s.value.to_str()),
        other => dict_key_text(other)?.into(),
    })
}

/// A dict key other than a string literal, as Python's `repr` writes it.
fn dict_key_text(expr: &Expr) -> Option<String> {
    match expr {
        Expr::BytesLiteral(b) => {
            let bytes: Vec<u8> = b.value.bytes().collect();
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        Expr::BooleanLiteral(b) => Some(if b.value { "True" } else { "False" }.to_owned()),
        Expr::NoneLiteral(_) => Some("None".to_owned()),
        Expr::NumberLiteral(n) => number_key(&n.value, false),
        Expr::UnaryOp(u) => match (&u.op, &*u.operand) {
            (UnaryOp::USub, Expr::NumberLiteral(n)) => number_key(&n.value, true),
            (UnaryOp::UAdd, Expr::NumberLiteral(n)) => number_key(&n.value, false),
            (UnaryOp::USub, Expr::BooleanLiteral(b)) => Some(format!("-{}", i64::from(b.value))),
            (UnaryOp::UAdd, Expr::BooleanLiteral(b)) => Some(i64::from(b.value).to_string()),
            _ => None,
        },
        _ => None,
    }
}

fn number_key(n: &Number, negate: bool) -> Option<String> {
    let sign = if negate { "-" } else { "" };
    match n {
        Number::Int(i) => match i.as_u64() {
            Some(0) => Some("0".to_owned()),
            Some(u) => Some(format!("{sign}{u}")),
            None => Some(format!("{sign}{}", big_int_decimal(&i.to_string())?)),
        },
        Number::Float(f) => Some(py_float_repr(if negate { -f } else { *f })),
        Number::Complex { .. } => None,
    }
}

/// The decimal digits of an integer token (`123_456`, `0x_FF`, `0o17`, `0b101`), exactly.
fn big_int_decimal(token: &str) -> Option<String> {
    let token: String = token.chars().filter(|c| *c != '_').collect();
    let lower = token.to_ascii_lowercase();
    let (radix, digits) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, lower.as_str()),
    };
    if digits.is_empty() {
        return None;
    }
    // Little-endian limbs of base 10^9.
    const BASE: u64 = 1_000_000_000;
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let mut carry = u64::from(c.to_digit(radix)?);
        for limb in &mut limbs {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % BASE;
            carry = v / BASE;
        }
        while carry > 0 {
            limbs.push(carry % BASE);
            carry /= BASE;
        }
    }
    let mut out = String::new();
    for (i, limb) in limbs.iter().rev().enumerate() {
        if i == 0 {
            out.push_str(&limb.to_string());
        } else {
            out.push_str(&format!("{limb:09}"));
        }
    }
    Some(out)
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form outside `1e-4 <= |x| < 1e16`.
pub(crate) fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    if f == 0.0 {
        return format!("{sign}0.0");
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let point = usize::try_from(exp).unwrap_or(0) + 1;
            if digits.len() <= point {
                format!("{sign}{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{sign}{}.{}", &digits[..point], &digits[point..])
            }
        } else {
            let zeros = usize::try_from(-exp - 1).unwrap_or(0);
            format!("{sign}0.{}{digits}", "0".repeat(zeros))
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{frac}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ParsedFile {
        parse_python(text)
    }

    #[test]
    fn plain_string_assignments_are_read_without_the_parser_and_others_are_not() {
        let simple =
            |stmt: &str| simple_literal_assignment(stmt, 0, stmt.len()).map(|v| (v.value, v.span));
        let s = |t: &str| Value::Str(Str::from(t));
        assert_eq!(
            simple("__version__ = \"1.0\"\n"),
            Some((s("1.0"), Span::new(14, 19)))
        );
        assert_eq!(
            simple("X='a b é'  # note\n\n# more\n   \n"),
            Some((s("a b é"), Span::new(2, 10)))
        );
        assert_eq!(simple("X = ''\n"), Some((s(""), Span::new(4, 6))));
        // Lists and dicts of plain literals, across lines, with comments and trailing commas.
        let text = "X = {\n    \"a\": [1, -2, True],  # c\n    'b': {'c': None,},\n}  # end\n\n";
        let (value, span) = simple(text).expect("a plain dict");
        assert_eq!(span, Span::new(4, text.find("}  #").unwrap() + 1));
        assert_eq!(
            serde_json::to_string(&value.to_json()).unwrap(),
            r#"{"a":[1,-2,true],"b":{"c":null}}"#
        );
        assert_eq!(
            simple("X = [-9223372036854775808, 0, []]\n").map(|v| v.0.to_json()),
            Some(serde_json::json!([i64::MIN, 0, []]))
        );
        for other in [
            "X = {1: 2}\n",
            "X = {'a', 'b'}\n",
            "X = {**y}\n",
            "X = ('a',)\n",
            "X = [1.5]\n",
            "X = [1e3, 0x1f, 1_0, 3j]\n",
            "X = [01]\n",
            "X = [9223372036854775808]\n",
            "X = [- 1]\n",
            "X = [x for x in y]\n",
            "X = ['a' 'b']\n",
            "X = [\n\t1]\n",
            "X = [1,\r\n 2]\n",
            "X = [1, \\\n 2]\n",
            "X = {'a': 1}['a']\n",
            "X = [True][0]\n",
            "X = [Truee]\n",
            "X = [1\n",
            "X = \"\"\"doc\"\"\"\n",
            "X = \"a\\n\"\n",
            "X = r\"a\"\n",
            "X = \"a\" \"b\"\n",
            "X = \"a\".upper()\n",
            "X = \"a\"#c\n",
            "X = \"a\"\r\n",
            "X = \"a\"\nY = 1\n",
            "X = \"a\tb\u{1}\"\n",
            "X == \"a\"\n",
            "X = 'a\n",
            "X: str = 'a'\n",
        ] {
            assert_eq!(simple(other), None, "{other:?}");
        }
    }

    fn value_of(text: &str) -> Option<Value> {
        parse(text).metadata.config().map(|v| v.value.clone())
    }

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    /// Drop spans so structures can be compared with plain expectations.
    fn plain(v: &Value) -> serde_json::Value {
        v.to_json()
    }

    fn line_of(text: &str, offset: u32) -> usize {
        text[..offset as usize].matches('\n').count() + 1
    }

    fn slice(text: &str, span: Span) -> &str {
        &text[span.range()]
    }

    /// A large module: a header, `filler` lines up to past `LARGE_FILE_BYTES`, with `middle`
    /// written about halfway and `tail` at the end.
    fn large(header: &str, middle: &str, tail: &str) -> String {
        let mut text = header.to_owned();
        let line = "x = [1, 2, 3]  # filler\n";
        let half = LARGE_FILE_BYTES / 2;
        while text.len() < half {
            text.push_str(line);
        }
        text.push_str(middle);
        while text.len() < LARGE_FILE_BYTES + CHUNK_BYTES {
            text.push_str(line);
        }
        text.push_str(tail);
        text
    }

    /// Piecewise reading answers exactly what one parse of the whole file answers; reading only
    /// the statements that can hold values finds the same values, and the same problems when
    /// those statements have them.
    fn same_as_whole(text: &str) {
        assert!(text.len() >= LARGE_FILE_BYTES);
        let wanted = |n: &str| PYTHON_FIELDS.contains(n) || n == "late";
        let whole = literals_whole(text, &wanted);
        let pieces = literals_in_pieces(text, &wanted).unwrap_or_else(|| whole.clone());
        assert_eq!(pieces, whole);
        let entry = entry_point_in_pieces(text).unwrap_or_else(|| entry_point_whole(text));
        assert_eq!(entry, entry_point_whole(text));
        let read = top_level_literals(text, wanted);
        assert_eq!(read.0, whole.0);
        assert!(read.1.is_empty() || read.1 == whole.1);
        assert_eq!(entry_point(text), entry_point_whole(text));
    }

    #[test]
    fn large_files_are_read_in_pieces_with_the_same_answers() {
        let header = "__version__ = \"1.0.0\"\nCONFIG = {\"a\": [1, 2]}\n";
        // Clean: every piece parses, so the pieces' answers are used.
        let clean = large(header, "late = {'k': 'v'}\n", "late = 'last'\n");
        assert!(chunks(&clean).count() > 2);
        assert!(literals_in_pieces(&clean, &|_| true).is_some());
        same_as_whole(&clean);
        let p = parse(&clean);
        assert_eq!(p.metadata.version().unwrap().value, s("1.0.0"));
        assert_eq!(
            slice(&clean, p.metadata.config().unwrap().span),
            "{\"a\": [1, 2]}"
        );
        // An entry point after the first piece, and one inside a string (not an entry point).
        let main = large(header, "def execute():\n    pass\n", "");
        assert_eq!(entry_point(&main), Some(EntryPoint::ExecuteFunction));
        same_as_whole(&main);
        // Cuts that would fall inside a string, brackets, a decorated definition or an `if`
        // with an `else`: the pieces do not parse, the whole file is read as one.
        let filler = "y = 1\n".repeat(CHUNK_BYTES / 6 + 10);
        for middle in [
            format!("s = \"\"\"\n{filler}\"\"\"\n"),
            format!("d = [\n{}]\n", "y,\n".repeat(CHUNK_BYTES / 3)),
            format!("@decorator\n{filler}def f():\n    pass\n"),
            format!("if True:\n    y = 1\nelse:\n    y = 2\n{filler}"),
        ] {
            same_as_whole(&large(header, &middle, "late = 1\n"));
        }
        // A syntax error at the end: the pieces give way to one parse; in a statement that is
        // not read, it is not a problem of the header's (see `literals_of_statements`).
        let broken = large(header, "", "def broken(:\n");
        assert!(literals_in_pieces(&broken, &|_| true).is_none());
        same_as_whole(&broken);
        // An open bracket is seen by the scan, wherever it is.
        assert!(!parse(&broken).problems.is_empty());
        let broken = large(header, "", "def broken():\n    x = = 1\n");
        same_as_whole(&broken);
        assert!(parse(&broken).problems.is_empty());
        let broken = large(header, "", "late = (:\n");
        same_as_whole(&broken);
        assert!(!parse(&broken).problems.is_empty());
    }

    #[test]
    fn cuts_fall_between_simple_top_level_statements() {
        let text =
            "a = 1\nif x:\n    b = 2\nelse:\n    b = 3\nc = (1,\n2)\nd = 4\n@dec\ne = 5\nf = 6\n";
        let mut cuts: Vec<&str> = (0..text.len())
            .filter_map(|i| next_cut(text, i))
            .map(|c| text[c..].lines().next().unwrap_or_default())
            .collect();
        cuts.dedup();
        // Not inside the `if`/`else`, the brackets, after a continued line or a decorator.
        assert_eq!(cuts, ["if x:", "f = 6"]);
    }

    #[test]
    fn dunders_and_spans() {
        let text = "\"\"\"Tool docstring.\"\"\"\n__version__ = \"1.2.3\"\n__tool_type__ = 'python'\n__executor_id__ = \"rye/core/runtimes/python_script_runtime\"\n__category__ = 'rye/file'\n__tool_description__ = \"Reads a file\"\n";
        let p = parse(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let m = &p.metadata;
        let v = m.version().unwrap();
        assert_eq!(v.value, s("1.2.3"));
        assert_eq!(slice(text, v.span), "\"1.2.3\"");
        assert_eq!(m.tool_type().unwrap().value, s("python"));
        assert_eq!(
            m.executor_id().unwrap().value,
            s("rye/core/runtimes/python_script_runtime")
        );
        assert_eq!(m.category().unwrap().value, s("rye/file"));
        assert_eq!(m.tool_description().unwrap().value, s("Reads a file"));
    }

    #[test]
    fn executor_none_is_explicit_null() {
        let p = parse("__executor_id__ = None\n");
        let e = p.metadata.executor_id().unwrap();
        assert_eq!(e.value, Value::Null);
        assert_eq!(e.span, Span::new(18, 22));
    }

    #[test]
    fn string_quotings_and_prefixes() {
        let cases: &[(&str, &str)] = &[
            ("'single'", "single"),
            ("\"double\"", "double"),
            ("'''triple\nsingle'''", "triple\nsingle"),
            ("\"\"\"triple\ndouble\"\"\"", "triple\ndouble"),
            ("r'\\d+\\n'", "\\d+\\n"),
            ("R\"raw\\t\"", "raw\\t"),
            ("u'unicode é'", "unicode é"),
            ("U'x'", "x"),
            ("b'bytes'", "bytes"),
            ("rb'\\x00raw'", "\\x00raw"),
            ("Br'B'", "B"),
            ("b'\\xff\\xfe'", "\u{fffd}\u{fffd}"),
            ("'esc\\taped\\n'", "esc\taped\n"),
            ("'\\N{BULLET}'", "\u{2022}"),
            ("'a' \"b\" '''c'''", "abc"),
            ("('multi'\n    'line'\n    r'\\parts')", "multiline\\parts"),
        ];
        for (src, want) in cases {
            let text = format!("CONFIG = {src}\n");
            assert_eq!(value_of(&text), Some(s(want)), "source {src:?}");
        }
    }

    #[test]
    fn numbers_and_constants() {
        let cases: &[(&str, Value)] = &[
            ("42", Value::Int(42)),
            ("-7", Value::Int(-7)),
            ("+7", Value::Int(7)),
            ("1_000", Value::Int(1000)),
            ("0x1F", Value::Int(31)),
            ("0o17", Value::Int(15)),
            ("0b101", Value::Int(5)),
            ("-9223372036854775808", Value::Int(i64::MIN)),
            (
                "9223372036854775808",
                Value::Float(F64(9223372036854775808.0)),
            ),
            (
                "123456789012345678901234567890",
                Value::Float(F64(1.2345678901234568e29)),
            ),
            (
                "-0x1_0000_0000_0000_0000_0000",
                Value::Float(F64(-(2f64.powi(80)))),
            ),
            ("1.5", Value::Float(F64(1.5))),
            ("-2.5e3", Value::Float(F64(-2500.0))),
            (".5", Value::Float(F64(0.5))),
            ("True", Value::Bool(true)),
            ("False", Value::Bool(false)),
            ("None", Value::Null),
            ("-True", Value::Int(-1)),
        ];
        for (src, want) in cases {
            let text = format!("CONFIG = {src}\n");
            assert_eq!(value_of(&text).as_ref(), Some(want), "source {src:?}");
        }
    }

    #[test]
    fn non_literals_are_skipped() {
        for src in [
            "f'x{y}'",
            "'a' f'b'",
            "1j",
            "-1j",
            "1 + 2j",
            "[1, 2j]",
            "1 + 2",
            "--1",
            "not True",
            "~1",
            "foo()",
            "set([1])",
            "name",
            "os.environ",
            "[x for x in y]",
            "{**other}",
            "{'a': b}",
            "{(1, 2): 'tuple key'}",
            "[*rest]",
            "lambda: 1",
            "...",
        ] {
            let text = format!("CONFIG = {src}\n");
            let p = parse(&text);
            assert!(p.problems.is_empty(), "{src:?}: {:?}", p.problems);
            assert_eq!(
                p.metadata.config(),
                None,
                "source {src:?} should be skipped"
            );
        }
    }

    #[test]
    fn containers() {
        let text = "CONFIG = {\n    'command': 'python',\n    \"args\": [\n        '{tool_path}',\n        '--flag',\n    ],\n    'tuple': (1, 2.5,),\n    'single': (1,),\n    'set': {3},\n    'empty_set': set(),\n    'nested': {'a': {'b': None, 'c': True,},},\n    1: 'int key',\n    -2.5: 'float key',\n    True: 'bool key',\n    None: 'none key',\n    1e20: 'big float key',\n}\n";
        let p = parse(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let cfg = p.metadata.config().unwrap();
        assert_eq!(
            plain(&cfg.value),
            serde_json::json!({
                "command": "python",
                "args": ["{tool_path}", "--flag"],
                "tuple": [1, 2.5],
                "single": [1],
                "set": [3],
                "empty_set": [],
                "nested": {"a": {"b": null, "c": true}},
                "1": "int key",
                "-2.5": "float key",
                "True": "bool key",
                "None": "none key",
                "1e+20": "big float key",
            })
        );
        assert_eq!(line_of(text, cfg.span.start), 1);
        assert!(slice(text, cfg.span).starts_with('{') && slice(text, cfg.span).ends_with('}'));
        let map = cfg.value.as_map().unwrap();
        let (key, args) = &map[1];
        assert_eq!(slice(text, key.span), "\"args\"");
        assert_eq!(line_of(text, args.span.start), 3);
        let items = args.value.as_list().unwrap();
        assert_eq!(slice(text, items[1].span), "'--flag'");
        assert_eq!(line_of(text, items[1].span.start), 5);
    }

    #[test]
    fn bare_tuple_assignment() {
        assert_eq!(
            value_of("CONFIG = 'a', 'b'\n").map(|v| plain(&v)),
            Some(serde_json::json!(["a", "b"]))
        );
        assert_eq!(
            value_of("CONFIG = ()\n").map(|v| plain(&v)),
            Some(serde_json::json!([]))
        );
    }

    #[test]
    fn which_assignments_count() {
        let text = "__version__ = '0.1.0'\n__version__ = '0.2.0'\n__tool_type__: str = 'annotated'\nif True:\n    __category__ = 'inside-if'\ndef f():\n    __executor_id__ = 'inside-def'\na, CONFIG = 1, {'x': 1}\nENV_CONFIG = CONFIG_SCHEMA = {'chained': 1}\nINPUTS = ['a']\nINPUTS += ['b']\nOUTPUTS = ['kept']\nOUTPUTS = compute()\n";
        let p = parse(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let m = &p.metadata;
        assert_eq!(m.version().unwrap().value, s("0.2.0"));
        assert_eq!(line_of(text, m.version().unwrap().span.start), 2);
        assert_eq!(m.tool_type(), None);
        assert_eq!(m.category(), None);
        assert_eq!(m.executor_id(), None);
        assert_eq!(m.config(), None);
        assert_eq!(m.env_config(), None);
        assert_eq!(m.config_schema(), None);
        assert_eq!(
            m.inputs().map(|v| plain(&v.value)),
            Some(serde_json::json!(["a"]))
        );
        // A later non-literal assignment is skipped, so the earlier literal stays (§2.3 [L]).
        assert_eq!(
            m.outputs().map(|v| plain(&v.value)),
            Some(serde_json::json!(["kept"]))
        );
    }

    #[test]
    fn normalisation_prefers_dunders_and_upper_case() {
        let text = "version = 'bare'\n__version__ = 'dunder'\ntool_type = 'bare-type'\nconfig = {'lower': 1}\nCONFIG = {'upper': 1}\nenv_config = {'e': 1}\nanchor = {'enabled': True}\nverify_deps = {'scope': 'anchor'}\nCONFIG_RESOLVE = {'path': 'x.yaml'}\nCHILD_CONSTRAINTS = {'a/b': {'min_version': '1.0.0'}}\noutputs = ['o']\nINPUTS = ['i']\n";
        let m = parse(text).metadata;
        assert_eq!(m.version().unwrap().value, s("dunder"));
        assert_eq!(m.tool_type().unwrap().value, s("bare-type"));
        assert_eq!(
            plain(&m.config().unwrap().value),
            serde_json::json!({"upper": 1})
        );
        assert_eq!(
            plain(&m.env_config().unwrap().value),
            serde_json::json!({"e": 1})
        );
        assert_eq!(
            plain(&m.anchor().unwrap().value),
            serde_json::json!({"enabled": true})
        );
        assert_eq!(
            plain(&m.verify_deps().unwrap().value),
            serde_json::json!({"scope": "anchor"})
        );
        assert_eq!(
            plain(&m.config_resolve().unwrap().value),
            serde_json::json!({"path": "x.yaml"})
        );
        assert_eq!(plain(&m.outputs().unwrap().value), serde_json::json!(["o"]));
        assert_eq!(plain(&m.inputs().unwrap().value), serde_json::json!(["i"]));
        let cc = m.child_constraints().unwrap();
        assert!(cc.value.get("a/b").is_some());
    }

    #[test]
    fn syntax_error_is_reported_and_header_still_read() {
        let text = "__version__ = '1.0.0'\n__executor_id__ = 'rye/x'\n\ndef broken(:\n    pass\n\nCONFIG = {'after': 'error'}\n";
        let p = parse(text);
        assert!(!p.problems.is_empty());
        let first = &p.problems[0];
        assert!(
            first.message.starts_with("Python syntax error: "),
            "{}",
            first.message
        );
        assert_eq!(line_of(text, first.span.start), 4);
        assert_eq!(p.metadata.version().unwrap().value, s("1.0.0"));
        assert_eq!(p.metadata.executor_id().unwrap().value, s("rye/x"));
        assert_eq!(
            plain(&p.metadata.config().unwrap().value),
            serde_json::json!({"after": "error"})
        );
    }

    /// A CRLF or CR-only file with a syntax error yields what its LF form does: Python ends
    /// lines at a lone `\r` too, so an error does not make the whole file one line.
    #[test]
    fn syntax_error_in_crlf_or_cr_text_reads_as_in_lf_text() {
        let lf = "__version__ = '1.0.0'\n__executor_id__ = 'rye/x'\n\ndef broken(:\n    pass\n\nCONFIG = {'after': 'error'}\nlast = (\n";
        let want = parse(lf);
        for eol in ["\r\n", "\r"] {
            let text = lf.replace('\n', eol);
            let p = parse(&text);
            assert_eq!(p.problems.len(), want.problems.len(), "{eol:?}");
            let values = |p: &ParsedFile| {
                [
                    p.metadata.version(),
                    p.metadata.executor_id(),
                    p.metadata.config(),
                ]
                .map(|v| v.map(|v| plain(&v.value)))
            };
            assert_eq!(values(&p), values(&want), "{eol:?}");
        }
    }

    #[test]
    fn assignment_touching_an_error_is_not_read() {
        let text = "__version__ = '1.0.0'\nCONFIG = {'a': 1,\n";
        let p = parse(text);
        assert!(!p.problems.is_empty());
        assert_eq!(p.metadata.version().unwrap().value, s("1.0.0"));
        assert_eq!(p.metadata.config(), None);

        let text = "__version__ = 'unterminated\n__category__ = 'ok'\n";
        let p = parse(text);
        assert!(!p.problems.is_empty());
        assert_eq!(line_of(text, p.problems[0].span.start), 1);
        assert_eq!(p.metadata.version(), None);
        assert_eq!(p.metadata.category().unwrap().value, s("ok"));
    }

    #[test]
    fn error_index_matches_whole_lines() {
        use ruff_text_size::TextSize;
        let r = |a: u32, b: u32| TextRange::new(TextSize::new(a), TextSize::new(b));
        // `)` at 6; line breaks at 7, 13 and 19.
        let text = "a = 1 )\nb = 2\nc = (\n";
        let index = ErrorIndex::new(text, [r(6, 7), r(19, 19)].into_iter());
        assert!(
            index.on_lines_of(text, r(0, 5)),
            "error later on the same line"
        );
        assert!(
            !index.on_lines_of(text, r(8, 13)),
            "clean line between errors"
        );
        assert!(
            index.on_lines_of(text, r(14, 19)),
            "empty error at the line break"
        );
        let at_eof = ErrorIndex::new("x = (", [r(5, 5)].into_iter());
        assert!(at_eof.on_lines_of("x = (", r(0, 5)));
        assert!(!ErrorIndex::new(text, std::iter::empty()).on_lines_of(text, r(0, 5)));
    }

    #[test]
    fn error_on_the_same_line_skips_the_assignment() {
        let p = parse("__version__ = '1' )\n__category__ = 'c'\n");
        assert!(!p.problems.is_empty());
        assert_eq!(p.metadata.version(), None);
        assert_eq!(p.metadata.category().unwrap().value, s("c"));
    }

    #[test]
    fn many_errors_and_statements_stay_fast() {
        let text = "x = )\n__version__ = '1'\n".repeat(20_000);
        let p = parse(&text);
        assert!(p.problems.len() >= 20_000);
        assert_eq!(p.metadata.version().unwrap().value, s("1"));
        // The same on one line (statements separated by `;`): every assignment shares its line
        // with an error, so none is read, and finding that out stays linear.
        let text = format!("{}\n", "x = ); __version__ = '1'; ".repeat(20_000));
        let p = parse(&text);
        assert!(p.problems.len() >= 20_000);
        assert_eq!(p.metadata.version(), None);
    }

    #[test]
    fn empty_and_odd_texts() {
        for text in [
            "",
            "\n",
            "# only a comment\n",
            "\u{feff}",
            "\r\n\r\n",
            "x = (",
        ] {
            let p = parse(text);
            assert_eq!(p.metadata, Default::default(), "{text:?}");
        }
        let p = parse("\u{feff}__version__ = '1'\r\n");
        assert_eq!(p.metadata.version().unwrap().value, s("1"));
    }

    #[test]
    fn pathological_depth_does_not_overflow_the_stack() {
        // Each of these builds a syntax tree up to 100 000 levels deep; dropping it recursively
        // would overflow a 2 MiB test thread stack.
        let n = 100_000;
        // ruff's lexer is quadratic in f-string nesting, so those two cases stay smaller.
        let f = 10_000;
        let texts = [
            format!("CONFIG = {}1{}\n", "[".repeat(n), "]".repeat(n)),
            format!("CONFIG = {}1\n", "-".repeat(n)),
            format!("CONFIG = {}1\n", "1+".repeat(n)),
            format!("CONFIG = a{}\n", ".a".repeat(n)),
            format!("CONFIG = f{}\n", "()".repeat(n)),
            format!("CONFIG = {}1\n", "not ".repeat(n)),
            format!("CONFIG = {}1\n", "lambda: ".repeat(n)),
            format!("CONFIG = {}1{}\n", "{1:".repeat(n), "}".repeat(n)),
            format!("CONFIG = {}1\n", "x if y else ".repeat(n)),
            format!(
                "match x:\n    case {}1{}:\n        pass\n",
                "[".repeat(n),
                "]".repeat(n)
            ),
            format!("CONFIG = {}\n", "f'{".repeat(f)),
            format!("CONFIG = f'{{x:{}}}'\n", "{x:".repeat(f)),
            "if x: ".repeat(n),
        ];
        for text in &texts {
            let p = parse(text);
            assert_eq!(p.metadata.config(), None);
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 5_000;
        let text = format!(
            "CONFIG = {}{}\n__version__ = '1'\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let p = parse(&text);
        assert_eq!(p.metadata.config(), None);
        assert_eq!(p.problems.len(), 1, "{:?}", p.problems);
        assert!(p.problems[0].message.contains("`CONFIG` is nested deeper"));
        assert_eq!(p.metadata.version().unwrap().value, s("1"));
        let ok = format!("CONFIG = {}1{}\n", "[".repeat(50), "]".repeat(50));
        assert!(parse(&ok).metadata.config().is_some());
    }

    #[test]
    fn float_repr_matches_python() {
        for (f, want) in [
            (1.0, "1.0"),
            (-2.5, "-2.5"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (123456789.125, "123456789.125"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (1e100, "1e+100"),
            (f64::INFINITY, "inf"),
            (f64::NAN, "nan"),
        ] {
            assert_eq!(py_float_repr(f), want, "{f:?}");
        }
    }

    #[test]
    fn big_int_decimal_converts_radixes() {
        assert_eq!(
            big_int_decimal("0xFFFF_FFFF_FFFF_FFFF_F").as_deref(),
            Some("295147905179352825855")
        );
        assert_eq!(big_int_decimal("0b1").as_deref(), Some("1"));
        assert_eq!(
            big_int_decimal("1_000_000_000_000_000_000_000").as_deref(),
            Some("1000000000000000000000")
        );
        assert_eq!(big_int_decimal("0x"), None);
        assert_eq!(big_int_decimal("12a"), None);
    }

    #[test]
    fn entry_points_are_top_level_main_blocks_and_execute_functions() {
        let main = "__version__ = '1'\n\nif __name__ == \"__main__\":\n    run()\n";
        assert_eq!(entry_point(main), Some(EntryPoint::MainBlock));
        let flipped = "if '__main__' == __name__:\n    run()\n";
        assert_eq!(entry_point(flipped), Some(EntryPoint::MainBlock));
        let exec = "def execute(params, project_path):\n    return {}\n";
        assert_eq!(entry_point(exec), Some(EntryPoint::ExecuteFunction));
        let aexec = "async def execute(params, project_path):\n    return {}\n";
        assert_eq!(entry_point(aexec), Some(EntryPoint::ExecuteFunction));
        // Near-misses: a library module, a nested definition, another comparison, a `main`.
        for text in [
            "__tool_type__ = 'python'\nclass Error(Exception):\n    pass\n",
            "class Tool:\n    def execute(self):\n        pass\n",
            "def run():\n    if __name__ == '__main__':\n        pass\n",
            "if __name__ != '__main__':\n    pass\n",
            "if __name__ == 'main':\n    pass\n",
            "def main(params):\n    return {}\n",
            "def execute_all():\n    pass\n",
        ] {
            assert_eq!(entry_point(text), None, "{text}");
        }
        // A syntax error elsewhere does not hide the block.
        let broken = "CONFIG = {\n\nif __name__ == '__main__':\n    run()\n";
        let _ = entry_point(broken);
    }

    /// Issue 35 item 3: code that runs at the top level is a script's sign; what a library
    /// module does at the top level (imports, classes, definitions, assignments, docstrings,
    /// `try` imports) is not; a `__main__` block or `execute` names the entry point first.
    #[test]
    fn top_level_code_is_a_scripts_entry_point() {
        for text in [
            "import sys\nprint(sys.argv)\n",
            "main()\n",
            "import json; print(json.dumps({}))\n",
            "x = 1; run(x)\n",
            "for a in range(3):\n    pass\n",
            "while False:\n    pass\n",
            "with open('f') as f:\n    pass\n",
            "await main()\n",
            "(print)('x')\n",
        ] {
            assert_eq!(entry_point(text), Some(EntryPoint::TopLevelCode), "{text}");
            assert_eq!(
                entry_point_whole(text),
                Some(EntryPoint::TopLevelCode),
                "{text}"
            );
        }
        for text in [
            "\"\"\"Docstring.\"\"\"\nimport logging\nlog = logging.getLogger(__name__)\n",
            "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n",
            "@decorator\ndef f():\n    print(1)\n",
            "X: int = compute()\nY += 1\n[print(x) for x in []]\nf'{x}'\nprint\n",
            "class A:\n    print(1)\n",
        ] {
            assert_eq!(entry_point(text), None, "{text}");
            assert_eq!(entry_point_whole(text), None, "{text}");
        }
        let both = "print('hi')\nif __name__ == '__main__':\n    run()\n";
        assert_eq!(entry_point(both), Some(EntryPoint::MainBlock));
        assert_eq!(entry_point_whole(both), Some(EntryPoint::MainBlock));
    }
}

/// Reading only the statements that can hold values (`literals_of_statements`,
/// `entry_point_of_statements`) answers what one parse of the whole module answers, for every
/// module that parses cleanly.
#[cfg(test)]
mod statement_proptests {
    use proptest::prelude::*;

    use super::{
        PYTHON_FIELDS, entry_point, entry_point_whole, literals_whole, simple_literal_assignment,
        top_level_literals,
    };

    /// Whole statements (some spanning lines, some hiding fake statements in strings or
    /// comments, some with strings nested in f-string fields with the same quotes).
    const WHOLE: &[&str] = &[
        "__version__ = \"1.0\"",
        "__executor_id__ = 'rye/x'",
        "__executor_id__ = None",
        "__category__ = 'c'; __tool_type__ = \"python\"",
        "y = 1; __version__ = '9'",
        "y = ';'; __tool_description__ = 'after a semicolon in a string'",
        "CONFIG = {\"a\": [1, 2],\n  'b': {'c': None}}",
        "CONFIG_SCHEMA = {\n    \"type\": \"object\",  # }\n}",
        "CONFIG_SCHEMA = {\n    \"n\": [1, -2, None],\n    'm': {'t': True,},  # c\n}  # end",
        "__executor_id__ = [\"a\", 'b']  # list",
        "doc = \"\"\"\n__version__ = \"fake\"\n\"\"\"",
        "doc = '''it''s\n__executor_id__ = 'fake'\n'''",
        "s = f\"{x!r:>{w}} {{lit}} {d['k']} {y=}\"",
        "t = f'{f\"{y}\"}' + rf'\\{z}' + b'\\''",
        "u = f\"{x:{'>'}10}\" if x else F'{ {1: 2}[1] }'",
        "v = f\"{d[\"k\"]}\"\n__version__ = f\"{'x'}\"",
        "w = f'{f'{f'{1}'}'}'",
        "v = f\"{\"(\"}\"",
        "x = [f\"{\"(\"}\", 1, rF'{'['}', b'[', 1 if f\"{\")\"}\" else 2]",
        "y = {'k': (Rb'(', t\"{\"}\"}\", fr\"{\"]\"}\")}",
        "w = f\"{\")\"}\"",
        "w = f'{'\\''}'",
        "s2 = f\"{x:'^10}\" + f\"{x:(>5}\"",
        "y = 1  # ''' ( \"",
        "y = 2  # '''",
        "z = f\"\"\"{\"\"\"\n\"\"\"}\"\"\" if 0 else f'''{'''\n'''}'''",
        "__tool_type__ = t'{x}' if 0 else 'tool'",
        "# __version__ = 'comment' with \" and '",
        "def execute(params):\n    __version__ = 'inner'\n    return params",
        "async def execute():\n    pass",
        "def execute2():\n    pass",
        "if __name__ == \"__main__\":\n    main()",
        "if \"__main__\" == __name__:\n    pass\nelse:\n    pass",
        "if x:\n    __version__ = 'nested'\nelif y:\n    pass",
        "@dec\ndef f():\n    return '''\n__version__ = 0\n'''",
        "class C:\n    CONFIG = {}",
        "a = 1 + \\\n    2",
        "__version__ = (\n    '2.0'\n)",
        "__version__: str = 'annotated'",
        "__version__ == 'compare'",
        "late = {'k': 'v'}",
        "import os",
        "\"\"\"Module docstring.\"\"\"",
        "print('ran')",
        "import os; main()",
        "x = 1; run(x)",
        "for i in []:\n    pass",
        "with x:\n    pass",
        "await go()  # call",
        "try:\n    main()\nexcept Exception:\n    pass",
        "",
    ];

    /// Pieces that open or close strings, brackets and blocks, or are not Python.
    const LOOSE: &[&str] = &[
        "    indented = 1",
        "(",
        ")",
        "\"\"\"",
        "'",
        "f'{",
        "}",
        "else:",
        "x = = 1",
        "def broken(:",
        "\\",
        "def cut(rows) -> i4",
        "for x",
        "@dec",
        "try:\n    pass",
        "x =",
        "y = 1 +",
    ];

    fn module() -> impl Strategy<Value = String> {
        let line_end = prop::sample::select(&["\n", "\r\n", "\r"][..]);
        let whole = prop::collection::vec(prop::sample::select(WHOLE), 0..12);
        let piece = prop_oneof![
            6 => prop::sample::select(WHOLE),
            1 => prop::sample::select(LOOSE),
        ];
        let mixed = prop::collection::vec(piece, 0..12);
        (prop_oneof![whole, mixed], line_end).prop_map(|(pieces, end)| {
            pieces
                .iter()
                .map(|p| p.replace('\n', end) + end)
                .collect::<String>()
        })
    }

    /// A literal-like value: plain literals nested in lists and dicts, with the blanks,
    /// comments and commas Python allows between tokens, and near misses of every kind.
    fn literal() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(
            &[
                "\"a b\"",
                "'é'",
                "\"\"",
                "''",
                "\"t\tab\"",
                "\"es\\c\"",
                "\"a\" \"b\"",
                "r\"x\"",
                "b'x'",
                "f'x'",
                "0",
                "7",
                "-3",
                "00",
                "01",
                "-0",
                "1_0",
                "9223372036854775807",
                "-9223372036854775808",
                "9223372036854775808",
                "1.5",
                "1e3",
                "0x1f",
                "3j",
                "1.",
                "True",
                "False",
                "None",
                "none",
                "Truex",
                "x",
                "- 1",
                "+1",
                "set()",
                "(1)",
                "(1,)",
                "{1: 2}",
                "{'a'}",
                "[]",
                "{}",
                "\"\"\"t\"\"\"",
                "'a'.upper()",
                "1 if 2 else 3",
            ][..],
        )
        .prop_map(str::to_owned);
        let sep = prop::sample::select(
            &[
                ", ",
                ",",
                " , ",
                ",\n    ",
                ",  # c, ]\n  ",
                "\n",
                " ",
                ",\t",
                ",\r\n",
            ][..],
        );
        let open = prop::sample::select(&["", "\n  ", "  # open\n  ", " "][..]);
        leaf.prop_recursive(4, 32, 6, move |inner| {
            let items = prop::collection::vec(
                (
                    inner.clone(),
                    prop::sample::select(&["'k'", "\"k2\"", "1", "'k' 'l'"][..]),
                ),
                0..5,
            );
            (
                items,
                sep.clone(),
                open.clone(),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(|(items, sep, open, dict, trailing)| {
                    let body: Vec<String> = items
                        .iter()
                        .map(|(v, k)| if dict { format!("{k}: {v}") } else { v.clone() })
                        .collect();
                    let mut text = body.join(sep);
                    if trailing && !body.is_empty() {
                        text.push(',');
                    }
                    let (l, r) = if dict { ('{', '}') } else { ('[', ']') };
                    format!("{l}{open}{text}{r}")
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Whatever `simple_literal_assignment` reads, ruff reads the same (value and spans);
        /// what ruff cannot read, it does not read either.
        #[test]
        fn simple_literal_assignments_read_as_ruff_reads_them(
            value in literal(),
            tail in prop::sample::select(&["\n", "  # note\n", "\n# more\n\n", "#c\n", " .x\n", "\r\n", ""][..]),
        ) {
            let text = format!("X = {value}{tail}");
            let whole = literals_whole(&text, &|n: &str| n == "X");
            if let Some(fast) = simple_literal_assignment(&text, 0, text.len()) {
                prop_assert!(whole.1.is_empty(), "{:?}", whole.1);
                prop_assert_eq!(whole.0, vec![("X".to_owned(), fast)]);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn statements_read_alone_answer_as_the_whole_parse(text in module()) {
            let wanted = |n: &str| PYTHON_FIELDS.contains(n) || n == "late";
            let whole = literals_whole(&text, &wanted);
            let read = top_level_literals(&text, wanted);
            if whole.1.is_empty() {
                prop_assert_eq!(&read, &whole);
                prop_assert_eq!(entry_point(&text), entry_point_whole(&text));
            } else {
                // A syntax error in a statement that is not read is not reported; the values
                // read are then the clean statements' values.
                prop_assert!(read.1.is_empty() || read == whole);
            }
        }
    }
}
