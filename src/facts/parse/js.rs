//! The `javascript/javascript` metadata parser (§2.5): header constants of `.js .ts .mjs .cjs`.
//!
//! Not a JavaScript parser: the text is split into tokens (strings, template literals, regular
//! expressions and comments are recognised so their contents never look like code), then
//! top-level declarations `(export )?(const|let|var) NAME(: Type)? = <initializer>` are picked
//! out — top level meaning outside any `{}`/`()`/`[]`, so locals inside functions are ignored.
//!
//! Names read: the dunders `__version__ __tool_type__ __executor_id__ __category__
//! __tool_description__` and the constants `CONFIG_SCHEMA ENV_CONFIG CONFIG CONFIG_RESOLVE INPUTS
//! OUTPUTS CHILD_CONSTRAINTS`. A later declaration of a name replaces an earlier one.
//!
//! Initializers are read as JSON-like literals, more leniently than `JSON.parse` after the
//! reference's text rewriting: `//` and `/* */` comments, bare and single-quoted keys,
//! single-quoted strings, template literals without `${…}`, trailing commas, hex/octal/binary
//! numbers, numeric separators, `Infinity`/`NaN`, and a trailing `as const`/`satisfies T` are
//! all accepted. Every nested value keeps its own span. An object or array literal that cannot
//! be read (a variable, a call, a spread, a `${…}` substitution, `undefined`, a missing comma...)
//! is omitted and reported as a [`ParseProblem`] naming the constant, the reason and where.
//! A scalar initializer that is not a literal (`= require(…)`, `= \`v${x}\``) is skipped
//! silently, as a non-literal Python value is.

use super::{EntryPoint, FieldNames, Fields, MAX_NESTING, MAX_TEXT_LEN, clamp_span};
use crate::model::{F64, ParseProblem, ParsedFile, Span, Spanned, Str, Value};

/// JS names feeding each metadata field (§2.5; DESIGN.md "Metadata" adds the upper-case I/O,
/// constraint and resolve constants).
pub(crate) const JS_FIELDS: FieldNames = FieldNames {
    version: &["__version__"],
    tool_type: &["__tool_type__"],
    executor_id: &["__executor_id__"],
    category: &["__category__"],
    tool_description: &["__tool_description__"],
    config_schema: &["CONFIG_SCHEMA"],
    env_config: &["ENV_CONFIG"],
    config: &["CONFIG"],
    anchor: &[],
    verify_deps: &[],
    config_resolve: &["CONFIG_RESOLVE"],
    inputs: &["INPUTS"],
    outputs: &["OUTPUTS"],
    child_constraints: &["CHILD_CONSTRAINTS"],
};

pub(crate) const DUNDERS: &[&str] = &[
    "__version__",
    "__tool_type__",
    "__executor_id__",
    "__category__",
    "__tool_description__",
];
pub(crate) const CONSTANTS: &[&str] = &[
    "CONFIG_SCHEMA",
    "ENV_CONFIG",
    "CONFIG",
    "CONFIG_RESOLVE",
    "INPUTS",
    "OUTPUTS",
    "CHILD_CONSTRAINTS",
];

/// How far past `NAME:` a type annotation is searched for its `=` (in tokens).
const MAX_ANNOTATION_TOKENS: usize = 512;

/// Read the metadata header of a JavaScript/TypeScript file (§2.5). Never panics.
pub fn parse_js(text: &str) -> ParsedFile {
    if text.len() > MAX_TEXT_LEN {
        return super::too_large("JavaScript");
    }
    let tokens = lex(text);
    let mut fields = Fields::new(&JS_FIELDS);
    let mut problems = Vec::new();
    let mut depth = 0usize;
    for i in 0..tokens.len() {
        let tok = &tokens[i];
        if tok.kind == Kind::Punct {
            match tok.text(text) {
                "{" | "(" | "[" => depth += 1,
                "}" | ")" | "]" => depth = depth.saturating_sub(1),
                _ => {}
            }
            continue;
        }
        if depth != 0 || !matches!(tok.ident(text), Some("const" | "let" | "var")) {
            continue;
        }
        if i > 0 && tokens[i - 1].is_punct(text, ".") {
            continue;
        }
        let Some((name, init)) = declaration(text, &tokens, i) else {
            continue;
        };
        let is_constant = CONSTANTS.contains(&name);
        if !is_constant && !DUNDERS.contains(&name) {
            continue;
        }
        let reader = LiteralReader {
            text,
            tokens: &tokens,
        };
        let container = tokens
            .get(init)
            .is_some_and(|t| t.is_punct(text, "{") || t.is_punct(text, "["));
        match reader.value(init, 0) {
            Ok((value, next)) => match reader.follow_problem(next) {
                None => fields.insert(name, value),
                Some(err) if is_constant && container => problems.push(read_problem(name, err)),
                Some(_) => {}
            },
            Err(err) if is_constant && container => problems.push(read_problem(name, err)),
            Err(_) => {}
        }
    }
    ParsedFile {
        metadata: fields.metadata(),
        problems,
    }
}

/// Whether the script's code says it is meant to be run (a fact for `unknown-primitive`, never
/// part of the metadata): `require.main === module` (or `==`), `import.meta.main`, or a
/// top-level `execute` — `(export )?(async )?function execute`, `export const|let|var execute`,
/// `exports.execute =` / `module.exports.execute =`. Never panics.
pub fn entry_point(text: &str) -> Option<EntryPoint> {
    if text.len() > MAX_TEXT_LEN {
        return None;
    }
    let tokens = lex(text);
    let is = |i: usize, s: &str| {
        tokens
            .get(i)
            .is_some_and(|t| t.is_ident(text, s) || t.is_punct(text, s))
    };
    let mut depth = 0usize;
    for (i, tok) in tokens.iter().enumerate() {
        if tok.kind == Kind::Punct {
            match tok.text(text) {
                "{" | "(" | "[" => depth += 1,
                "}" | ")" | "]" => depth = depth.saturating_sub(1),
                _ => {}
            }
            continue;
        }
        let after_dot = i > 0 && tokens[i - 1].is_punct(text, ".");
        if after_dot {
            continue;
        }
        let node_main = (is(i, "require")
            && is(i + 1, ".")
            && is(i + 2, "main")
            && (is(i + 3, "===") || is(i + 3, "=="))
            && is(i + 4, "module"))
            || (is(i, "import")
                && is(i + 1, ".")
                && is(i + 2, "meta")
                && is(i + 3, ".")
                && is(i + 4, "main"));
        if node_main {
            return Some(EntryPoint::NodeMain);
        }
        if depth != 0 {
            continue;
        }
        let top_level_execute = (is(i, "function") && is(i + 1, "execute"))
            || (is(i, "export")
                && matches!(
                    tokens.get(i + 1).and_then(|t| t.ident(text)),
                    Some("const" | "let" | "var")
                )
                && is(i + 2, "execute"))
            || (is(i, "exports") && is(i + 1, ".") && is(i + 2, "execute") && is(i + 3, "="))
            || (is(i, "module")
                && is(i + 1, ".")
                && is(i + 2, "exports")
                && is(i + 3, ".")
                && is(i + 4, "execute")
                && is(i + 5, "="));
        if top_level_execute {
            return Some(EntryPoint::ExecuteFunction);
        }
    }
    None
}

fn read_problem(name: &str, err: LitError) -> ParseProblem {
    ParseProblem {
        span: err.span,
        message: format!("could not read `{name}` as a literal: {}", err.message),
    }
}

/// At `const|let|var` token `i`: the declared name and the index of its initializer's first token.
fn declaration<'t>(text: &'t str, tokens: &[Token], i: usize) -> Option<(&'t str, usize)> {
    let name = tokens.get(i + 1)?.ident(text)?;
    let mut j = i + 2;
    if tokens.get(j)?.is_punct(text, ":") {
        // TypeScript annotation: skip to the `=` outside any `<>`, `()`, `[]`, `{}`.
        let mut nest = 0usize;
        j += 1;
        let limit = j + MAX_ANNOTATION_TOKENS;
        loop {
            let t = tokens.get(j)?;
            if j > limit || (nest == 0 && t.is_punct(text, ";")) {
                return None;
            }
            if t.kind == Kind::Punct {
                match t.text(text) {
                    "<" | "(" | "[" | "{" => nest += 1,
                    ">" | ")" | "]" | "}" => {
                        if nest == 0 {
                            return None;
                        }
                        nest -= 1;
                    }
                    "=" if nest == 0 => break,
                    _ => {}
                }
            }
            j += 1;
        }
    }
    tokens.get(j)?.is_punct(text, "=").then_some((name, j + 1))
}

/// Why a literal could not be read, and where.
#[derive(Debug)]
struct LitError {
    span: Span,
    message: String,
}

/// Reads a JSON-like literal from the token list.
struct LiteralReader<'a, 't> {
    text: &'t str,
    tokens: &'a [Token],
}

impl LiteralReader<'_, '_> {
    fn err<T>(&self, at: usize, message: impl Into<String>) -> Result<T, LitError> {
        let span = match self.tokens.get(at) {
            Some(t) => clamp_span(self.text, t.start as usize, t.end as usize),
            None => Span::empty(self.text.len()),
        };
        Err(LitError {
            span,
            message: message.into(),
        })
    }

    fn describe(&self, at: usize) -> String {
        match self.tokens.get(at) {
            None => "the end of the file".to_owned(),
            Some(t) => {
                let s = t.text(self.text);
                let short: String = s.chars().take(40).collect();
                if short.len() < s.len() {
                    format!("`{short}…`")
                } else {
                    format!("`{short}`")
                }
            }
        }
    }

    fn span(&self, from: usize, to: usize) -> Span {
        let start = self
            .tokens
            .get(from)
            .map_or(self.text.len(), |t| t.start as usize);
        let end = self.tokens.get(to).map_or(start, |t| t.end as usize);
        clamp_span(self.text, start, end)
    }

    /// Parse one value starting at token `at`; returns it and the index of the next token.
    fn value(&self, at: usize, depth: usize) -> Result<(Spanned<Value>, usize), LitError> {
        if depth > MAX_NESTING {
            return self.err(
                at,
                format!("the literal is nested deeper than {MAX_NESTING} levels"),
            );
        }
        let Some(tok) = self.tokens.get(at) else {
            return self.err(at, "expected a value, found the end of the file");
        };
        let text = tok.text(self.text);
        let scalar = |v: Value| Ok((Spanned::new(v, self.span(at, at)), at + 1));
        match &tok.kind {
            Kind::Str => match tok.string(self.text) {
                Ok(s) => scalar(Value::Str(s.into())),
                Err(e) => self.err(at, e),
            },
            Kind::Template => match tok.template(self.text) {
                Some(s) => scalar(Value::Str(s.into())),
                None => self.err(
                    at,
                    "a template literal with `${…}` substitutions is not a constant",
                ),
            },
            Kind::Num => match number(text) {
                Some(v) => scalar(v),
                None => self.err(at, format!("`{text}` is not a number")),
            },
            Kind::Regex => self.err(at, "a regular expression is not a JSON value"),
            Kind::Ident => match text {
                "true" => scalar(Value::Bool(true)),
                "false" => scalar(Value::Bool(false)),
                "null" => scalar(Value::Null),
                "Infinity" => scalar(Value::Float(F64(f64::INFINITY))),
                "NaN" => scalar(Value::Float(F64(f64::NAN))),
                "undefined" => self.err(at, "`undefined` is not a JSON value"),
                _ => self.err(
                    at,
                    format!("`{text}` is a variable or expression, not a literal"),
                ),
            },
            Kind::Punct => match text {
                "{" => self.object(at, depth),
                "[" => self.array(at, depth),
                "-" | "+" => {
                    let negate = text == "-";
                    let Some(next) = self
                        .tokens
                        .get(at + 1)
                        .filter(|t| t.kind == Kind::Num || t.is_ident(self.text, "Infinity"))
                    else {
                        return self.err(at, format!("expected a number after `{text}`"));
                    };
                    let v = if next.kind == Kind::Num {
                        number(next.text(self.text))
                    } else {
                        Some(Value::Float(F64(f64::INFINITY)))
                    };
                    let v = match v {
                        Some(Value::Int(i)) if negate => i
                            .checked_neg()
                            .map_or(Value::Float(F64(-(i as f64))), Value::Int),
                        Some(Value::Float(f)) if negate => Value::Float(F64(-f.0)),
                        Some(v) => v,
                        None => {
                            return self
                                .err(at + 1, format!("{} is not a number", self.describe(at + 1)));
                        }
                    };
                    Ok((Spanned::new(v, self.span(at, at + 1)), at + 2))
                }
                _ => self.err(at, format!("expected a value, found {}", self.describe(at))),
            },
        }
    }

    fn object(&self, open: usize, depth: usize) -> Result<(Spanned<Value>, usize), LitError> {
        let mut entries = Vec::new();
        let mut i = open + 1;
        loop {
            let Some(tok) = self.tokens.get(i) else {
                return self.err(open, "this `{` is never closed");
            };
            if tok.is_punct(self.text, "}") {
                let map = Value::Map(entries.into_boxed_slice());
                return Ok((Spanned::new(map, self.span(open, i)), i + 1));
            }
            let key_text = tok.text(self.text);
            let literal_key = match tok.kind {
                Kind::Str => tok.string(self.text).ok(),
                Kind::Template => tok.template(self.text),
                _ => None,
            };
            let key = match (literal_key, tok.kind) {
                (Some(key), _) => key,
                (None, Kind::Ident) => key_text.to_owned(),
                (None, Kind::Num) => match number(key_text) {
                    Some(Value::Int(n)) => n.to_string(),
                    Some(Value::Float(f)) => js_number_string(f.0),
                    _ => return self.err(i, format!("`{key_text}` is not a valid key")),
                },
                (None, Kind::Punct) if key_text == "..." => {
                    return self.err(i, "a `...` spread is not a literal");
                }
                (None, Kind::Punct) if key_text == "[" => {
                    return self.err(i, "a computed `[key]` is not a literal");
                }
                _ => {
                    return self.err(
                        i,
                        format!("expected a key or `}}`, found {}", self.describe(i)),
                    );
                }
            };
            let key = Spanned::new(Str::from(key), self.span(i, i));
            let Some(colon) = self.tokens.get(i + 1) else {
                return self.err(open, "this `{` is never closed");
            };
            if !colon.is_punct(self.text, ":") {
                let reason = match colon.text(self.text) {
                    "," | "}" if tok.kind == Kind::Ident => {
                        format!("shorthand property `{key_text}` refers to a variable")
                    }
                    "(" => format!("method `{key_text}` is not a literal"),
                    _ => format!("expected `:` after key, found {}", self.describe(i + 1)),
                };
                return self.err(i + 1, reason);
            }
            let (value, next) = self.value(i + 2, depth + 1)?;
            entries.push((key, value));
            i = next;
            match self.tokens.get(i) {
                Some(t) if t.is_punct(self.text, ",") => i += 1,
                Some(t) if t.is_punct(self.text, "}") => {}
                Some(_) => {
                    return self.err(
                        i,
                        format!(
                            "expected `,` or `}}` after a value, found {}",
                            self.describe(i)
                        ),
                    );
                }
                None => return self.err(open, "this `{` is never closed"),
            }
        }
    }

    fn array(&self, open: usize, depth: usize) -> Result<(Spanned<Value>, usize), LitError> {
        let mut items = Vec::new();
        let mut i = open + 1;
        loop {
            let Some(tok) = self.tokens.get(i) else {
                return self.err(open, "this `[` is never closed");
            };
            if tok.is_punct(self.text, "]") {
                let list = Value::List(items.into_boxed_slice());
                return Ok((Spanned::new(list, self.span(open, i)), i + 1));
            }
            if tok.is_punct(self.text, ",") {
                return self.err(i, "an array hole (`,,`) is not a JSON value");
            }
            if tok.is_punct(self.text, "...") {
                return self.err(i, "a `...` spread is not a literal");
            }
            let (value, next) = self.value(i, depth + 1)?;
            items.push(value);
            i = next;
            match self.tokens.get(i) {
                Some(t) if t.is_punct(self.text, ",") => i += 1,
                Some(t) if t.is_punct(self.text, "]") => {}
                Some(_) => {
                    return self.err(
                        i,
                        format!(
                            "expected `,` or `]` after a value, found {}",
                            self.describe(i)
                        ),
                    );
                }
                None => return self.err(open, "this `[` is never closed"),
            }
        }
    }

    /// Whether the declaration really ends after the literal (token `next` on): `;`, `,`, the end,
    /// `as const`/`satisfies T`, or a new line not continuing the expression.
    fn follow_problem(&self, next: usize) -> Option<LitError> {
        let tok = self.tokens.get(next)?;
        let text = tok.text(self.text);
        if matches!(text, ";" | ",") && tok.kind == Kind::Punct {
            return None;
        }
        if tok.kind == Kind::Ident && matches!(text, "as" | "satisfies") {
            return None;
        }
        // Automatic semicolon insertion ends the statement at a line break unless the next
        // line continues the expression (an operator, `(`, `[`, a tagged template...).
        let continues = match tok.kind {
            Kind::Punct => !matches!(
                text,
                "{" | "}" | ")" | "]" | "!" | "~" | "++" | "--" | "@" | "#"
            ),
            Kind::Template => true,
            _ => false,
        };
        if tok.newline_before && !continues {
            return None;
        }
        self.err::<()>(
            next,
            format!(
                "the literal is followed by {}, so the value is an expression",
                self.describe(next)
            ),
        )
        .err()
    }
}

/// A JS numeric literal (`12`, `1.5e3`, `.5`, `0x1F`, `0o17`, `0b101`, `1_000`, `10n`).
fn number(text: &str) -> Option<Value> {
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    let cleaned = cleaned.strip_suffix('n').unwrap_or(&cleaned).to_owned();
    let lower = cleaned.to_ascii_lowercase();
    let radix = match lower.get(..2) {
        Some("0x") => Some(16),
        Some("0o") => Some(8),
        Some("0b") => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        let digits = &lower[2..];
        if digits.is_empty() {
            return None;
        }
        return match u64::from_str_radix(digits, radix) {
            Ok(v) => Some(i64::try_from(v).map_or(Value::Float(F64(v as f64)), Value::Int)),
            Err(_) => {
                let mut f = 0f64;
                for c in digits.chars() {
                    f = f * f64::from(radix) + f64::from(c.to_digit(radix)?);
                }
                Some(Value::Float(F64(f)))
            }
        };
    }
    if !lower.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if lower.bytes().all(|b| b.is_ascii_digit())
        && let Ok(i) = lower.parse::<i64>()
    {
        return Some(Value::Int(i));
    }
    lower.parse::<f64>().ok().map(|f| Value::Float(F64(f)))
}

/// How JS prints a number used as a property key (enough for keys written in source).
fn js_number_string(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        format!("{f}")
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Ident,
    /// A quoted string; decoded on demand ([`Token::string`]), as few are ever read.
    Str,
    /// A template literal; cooked on demand ([`Token::template`]).
    Template,
    Num,
    Regex,
    Punct,
}

/// One token: 12 bytes (offsets are `u32`, as texts over `MAX_TEXT_LEN` are refused), so a
/// 1 MB file of one-character tokens costs 12 MB, not the 56 MB decoded strings once took.
#[derive(Clone, Debug)]
struct Token {
    kind: Kind,
    start: u32,
    end: u32,
    /// A line break lies between the previous token and this one.
    newline_before: bool,
}

impl Token {
    fn text<'t>(&self, text: &'t str) -> &'t str {
        text.get(self.start as usize..self.end as usize)
            .unwrap_or("")
    }
    /// The decoded value of a [`Kind::Str`] token; `Err` when it is unterminated.
    fn string(&self, text: &str) -> Result<String, String> {
        let start = self.start as usize;
        match text[start..].chars().next() {
            Some(quote @ ('"' | '\'')) => lex_string(text, start, quote).1,
            _ => Err("not a string".to_owned()),
        }
    }
    /// The cooked value of a [`Kind::Template`] token; `None` when it has substitutions or is
    /// unterminated.
    fn template(&self, text: &str) -> Option<String> {
        lex_template(text, self.start as usize).1
    }
    fn ident<'t>(&self, text: &'t str) -> Option<&'t str> {
        (self.kind == Kind::Ident).then(|| self.text(text))
    }
    fn is_ident(&self, text: &str, s: &str) -> bool {
        self.kind == Kind::Ident && self.text(text) == s
    }
    fn is_punct(&self, text: &str, s: &str) -> bool {
        self.kind == Kind::Punct && self.text(text) == s
    }
}

const MULTI_PUNCT: &[&str] = &[
    "===", "!==", "**=", "...", "==", "!=", "=>", "<=", ">=", "&&", "||", "??", "?.", "++", "--",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**",
];

/// Keywords after which a `/` starts a regular expression rather than a division.
const REGEX_AFTER: &[&str] = &[
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
];

fn is_ident_start(c: char) -> bool {
    c == '_' || c == '$' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c == '$' || c.is_alphanumeric() || c == '\u{200c}' || c == '\u{200d}'
}

/// Split `text` into tokens; comments and whitespace are dropped. Never fails: anything
/// unrecognised becomes a one-character punctuation token.
fn lex(text: &str) -> Vec<Token> {
    let mut tokens: Vec<Token> = Vec::new();
    let mut scratch = String::new();
    let mut i = 0;
    let mut newline = false;
    if text.starts_with("#!") {
        // The hashbang line ends at any line terminator: a CR-only file is more than its first
        // line (ECMAScript's, and universal newlines', line breaks).
        i = text.find(['\n', '\r']).unwrap_or(text.len());
    }
    while let Some(c) = text[i..].chars().next() {
        let start = i;
        let next = text[i + c.len_utf8()..].chars().next();
        if c == '\n' || c == '\r' || c == '\u{2028}' || c == '\u{2029}' {
            newline = true;
            i += c.len_utf8();
            continue;
        }
        if c.is_whitespace() || c == '\u{feff}' {
            i += c.len_utf8();
            continue;
        }
        if c == '/' && next == Some('/') {
            i = text[i..].find(['\n', '\r']).map_or(text.len(), |n| i + n);
            continue;
        }
        if c == '/' && next == Some('*') {
            let end = text[i + 2..]
                .find("*/")
                .map_or(text.len(), |n| i + 2 + n + 2);
            newline |= text[i..end].contains('\n');
            i = end;
            continue;
        }
        let kind = if c == '"' || c == '\'' {
            i = scan_string(text, i, c, &mut scratch).0;
            Kind::Str
        } else if c == '`' {
            i = lex_template(text, i).0;
            Kind::Template
        } else if c.is_ascii_digit() || (c == '.' && next.is_some_and(|n| n.is_ascii_digit())) {
            i = lex_number(text, i);
            Kind::Num
        } else if is_ident_start(c) || c == '\\' {
            i += c.len_utf8();
            while let Some(d) = text[i..]
                .chars()
                .next()
                .filter(|d| is_ident_char(*d) || *d == '\\')
            {
                i += d.len_utf8();
            }
            Kind::Ident
        } else if c == '/' && regex_allowed(text, tokens.last()) {
            match lex_regex(text, i) {
                Some(end) => {
                    i = end;
                    Kind::Regex
                }
                None => {
                    i += 1;
                    Kind::Punct
                }
            }
        } else {
            let rest = &text[i..];
            let len = MULTI_PUNCT
                .iter()
                .find(|p| rest.starts_with(**p))
                .map_or(c.len_utf8(), |p| p.len());
            i += len;
            Kind::Punct
        };
        tokens.push(Token {
            kind,
            // Cannot truncate: `parse_js` and `entry_point` refuse texts over `MAX_TEXT_LEN`.
            start: start as u32,
            end: i as u32,
            newline_before: newline,
        });
        newline = false;
    }
    tokens
}

fn regex_allowed(text: &str, prev: Option<&Token>) -> bool {
    match prev {
        None => true,
        Some(t) => match &t.kind {
            Kind::Punct => !matches!(t.text(text), ")" | "]" | "}"),
            Kind::Ident => REGEX_AFTER.contains(&t.text(text)),
            _ => false,
        },
    }
}

/// Scan a regular expression literal at `start` (a `/`); `None` if the line ends first.
fn lex_regex(text: &str, start: usize) -> Option<usize> {
    let mut in_class = false;
    let mut chars = text[start + 1..].char_indices();
    while let Some((off, c)) = chars.next() {
        match c {
            '\n' | '\r' => return None,
            '\\' => {
                if matches!(chars.next(), None | Some((_, '\n' | '\r'))) {
                    return None;
                }
            }
            '[' => in_class = true,
            ']' => in_class = false,
            '/' if !in_class => {
                let mut end = start + 1 + off + 1;
                while let Some(f) = text[end..].chars().next().filter(|f| is_ident_char(*f)) {
                    end += f.len_utf8();
                }
                return Some(end);
            }
            _ => {}
        }
    }
    None
}

fn lex_number(text: &str, start: usize) -> usize {
    let mut i = start;
    let hex = text[start..].starts_with("0x") || text[start..].starts_with("0X");
    let mut prev = '\0';
    while let Some(c) = text[i..].chars().next() {
        let sign_ok = (c == '+' || c == '-') && !hex && (prev == 'e' || prev == 'E');
        if !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || sign_ok) {
            break;
        }
        prev = c;
        i += c.len_utf8();
    }
    i
}

/// Scan a quoted string at `start`; returns the end offset and the decoded value.
fn lex_string(text: &str, start: usize, quote: char) -> (usize, Result<String, String>) {
    let mut out = String::new();
    match scan_string(text, start, quote, &mut out) {
        (end, true) => (end, Ok(out)),
        (end, false) => (end, Err("unterminated string".to_owned())),
    }
}

/// Scan a quoted string at `start`, decoding it into `out` (cleared first); returns the end
/// offset and whether the string is terminated. The lexer passes one reused buffer, so
/// skipping a string allocates nothing.
fn scan_string(text: &str, start: usize, quote: char, out: &mut String) -> (usize, bool) {
    out.clear();
    let mut chars = text[start + 1..].char_indices().peekable();
    let base = start + 1;
    while let Some((off, c)) = chars.next() {
        match c {
            c if c == quote => return (base + off + 1, true),
            '\n' | '\r' => return (base + off, false),
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                decode_escape(e, &mut chars, out);
            }
            c => out.push(c),
        }
    }
    (text.len(), false)
}

/// Decode the escape whose letter `e` was just read (the backslash before it already consumed).
fn decode_escape(
    e: char,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    out: &mut String,
) {
    let hex =
        |n: usize, chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| -> Option<u32> {
            let mut v = 0u32;
            for _ in 0..n {
                let d = chars.peek()?.1.to_digit(16)?;
                chars.next();
                v = v * 16 + d;
            }
            Some(v)
        };
    match e {
        'n' => out.push('\n'),
        't' => out.push('\t'),
        'r' => out.push('\r'),
        'b' => out.push('\u{8}'),
        'f' => out.push('\u{c}'),
        'v' => out.push('\u{b}'),
        '0' if !chars.peek().is_some_and(|(_, c)| c.is_ascii_digit()) => out.push('\0'),
        'x' => match hex(2, chars) {
            Some(v) => out.push(char::from_u32(v).unwrap_or('\u{fffd}')),
            None => out.push('x'),
        },
        'u' => {
            let code = if chars.peek().is_some_and(|(_, c)| *c == '{') {
                chars.next();
                let mut v = 0u32;
                let mut ok = false;
                while let Some(&(_, c)) = chars.peek() {
                    chars.next();
                    if c == '}' {
                        ok = true;
                        break;
                    }
                    match c.to_digit(16) {
                        Some(d) if v <= 0x10FFFF => v = v * 16 + d,
                        _ => break,
                    }
                }
                ok.then_some(v)
            } else {
                hex(4, chars)
            };
            match code {
                // A UTF-16 surrogate pair written as two `\uXXXX` escapes.
                Some(hi @ 0xD800..=0xDBFF) => {
                    let mut look = chars.clone();
                    let lo = match (look.next(), look.next()) {
                        (Some((_, '\\')), Some((_, 'u'))) => hex(4, &mut look),
                        _ => None,
                    };
                    match lo {
                        Some(lo @ 0xDC00..=0xDFFF) => {
                            *chars = look;
                            let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                        }
                        _ => out.push('\u{fffd}'),
                    }
                }
                Some(v) => out.push(char::from_u32(v).unwrap_or('\u{fffd}')),
                None => out.push('u'),
            }
        }
        // Line continuation.
        '\r' => {
            if chars.peek().is_some_and(|(_, c)| *c == '\n') {
                chars.next();
            }
        }
        '\n' | '\u{2028}' | '\u{2029}' => {}
        other => out.push(other),
    }
}

/// Scan a template literal at `start` (a backtick), skipping over `${…}` code with nested
/// strings, templates and comments (iteratively, with an explicit stack). Returns the end
/// offset and the cooked text when there is no substitution and the template is terminated.
fn lex_template(text: &str, start: usize) -> (usize, Option<String>) {
    enum Frame {
        Template,
        Code { braces: usize },
    }
    let mut stack = vec![Frame::Template];
    let mut cooked = String::new();
    let mut substituted = false;
    let mut i = start + 1;
    while let Some(top) = stack.last_mut() {
        let Some(c) = text[i..].chars().next() else {
            return (text.len(), None);
        };
        let next = text[i + c.len_utf8()..].chars().next();
        match top {
            Frame::Template => match c {
                '\\' => {
                    let mut chars = text[i + 1..].char_indices().peekable();
                    match chars.next() {
                        Some((_, e)) => {
                            let mut decoded = String::new();
                            decode_escape(e, &mut chars, &mut decoded);
                            if stack.len() == 1 {
                                cooked.push_str(&decoded);
                            }
                            i = chars.peek().map_or(text.len(), |(off, _)| i + 1 + off);
                        }
                        None => return (text.len(), None),
                    }
                }
                '`' => {
                    stack.pop();
                    i += 1;
                }
                '$' if next == Some('{') => {
                    substituted = true;
                    stack.push(Frame::Code { braces: 0 });
                    i += 2;
                }
                '\r' => {
                    if stack.len() == 1 {
                        cooked.push('\n');
                    }
                    i += if next == Some('\n') { 2 } else { 1 };
                }
                c => {
                    if stack.len() == 1 {
                        cooked.push(c);
                    }
                    i += c.len_utf8();
                }
            },
            Frame::Code { braces } => match c {
                '{' => {
                    *braces += 1;
                    i += 1;
                }
                '}' => {
                    if *braces == 0 {
                        stack.pop();
                    } else {
                        *braces -= 1;
                    }
                    i += 1;
                }
                '"' | '\'' => i = lex_string(text, i, c).0,
                '`' => {
                    stack.push(Frame::Template);
                    i += 1;
                }
                '/' if next == Some('/') => {
                    i = text[i..].find(['\n', '\r']).map_or(text.len(), |n| i + n)
                }
                '/' if next == Some('*') => {
                    i = text[i + 2..]
                        .find("*/")
                        .map_or(text.len(), |n| i + 2 + n + 2)
                }
                c => i += c.len_utf8(),
            },
        }
    }
    (i, (!substituted).then_some(cooked))
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

    #[test]
    fn dunder_declarations() {
        let text = "#!/usr/bin/env node\n// rye:signed:abc\nexport const __version__ = \"1.0.0\";\nlet __tool_type__ = 'javascript'\nvar __category__: string = `rye/web`;\nexport const __executor_id__: string | null = null;\nconst __tool_description__ = 'It\\'s a \"tool\"\\u00e9\\u{1F600}\\x41';\n";
        let p = parse_js(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let m = &p.metadata;
        let v = m.version().unwrap();
        assert_eq!(v.value, s("1.0.0"));
        assert_eq!(slice(text, v.span), "\"1.0.0\"");
        assert_eq!(line_of(text, v.span.start), 3);
        assert_eq!(m.tool_type().unwrap().value, s("javascript"));
        assert_eq!(m.category().unwrap().value, s("rye/web"));
        let e = m.executor_id().unwrap();
        assert_eq!(e.value, Value::Null);
        assert_eq!(slice(text, e.span), "null");
        assert_eq!(
            m.tool_description().unwrap().value,
            s("It's a \"tool\"é😀A")
        );
    }

    /// A CRLF or CR-only file reads as its LF form: the hashbang line ends at its `\r`.
    #[test]
    fn crlf_and_cr_files_read_as_lf_files() {
        let lf = "#!/usr/bin/env node\n// rye:signed:abc\nexport const __version__ = \"1.0.0\";\nconst __category__ = `a${1 // c\n}`;\nconst __executor_id__ = 'rye/core/runtimes/node/node'\n";
        let want = parse_js(lf).metadata;
        assert_eq!(want.version().unwrap().value, s("1.0.0"));
        for eol in ["\r\n", "\r"] {
            let p = parse_js(&lf.replace('\n', eol));
            assert!(p.problems.is_empty(), "{eol:?}: {:?}", p.problems);
            let values = |m: &crate::model::Metadata| {
                [m.version(), m.category(), m.executor_id()].map(|v| v.map(|v| v.value.clone()))
            };
            assert_eq!(values(&p.metadata), values(&want), "{eol:?}");
        }
    }

    #[test]
    fn object_literal_with_comments_trailing_commas_and_bare_keys() {
        let text = "export const CONFIG: Record<string, unknown> = {\n  // the command\n  command: 'node', /* inline */\n  \"args\": [\n    '{tool_path}',\n    \"--flag\", // trailing\n  ],\n  timeout: 300,\n  ratio: -1.5,\n  hex: 0xFF,\n  big: 1_000_000,\n  'nested': { a: true, b: null, c: `tpl`, },\n  42: 'numeric key',\n} as const;\n";
        let p = parse_js(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let cfg = p.metadata.config().unwrap();
        assert_eq!(
            cfg.value.to_json(),
            serde_json::json!({
                "command": "node",
                "args": ["{tool_path}", "--flag"],
                "timeout": 300,
                "ratio": -1.5,
                "hex": 255,
                "big": 1000000,
                "nested": {"a": true, "b": null, "c": "tpl"},
                "42": "numeric key",
            })
        );
        assert!(slice(text, cfg.span).starts_with("{\n  // the command"));
        assert!(slice(text, cfg.span).ends_with('}'));
        let args = cfg.value.get("args").unwrap();
        let items = args.value.as_list().unwrap();
        assert_eq!(slice(text, items[1].span), "\"--flag\"");
        assert_eq!(line_of(text, items[1].span.start), 6);
        assert_eq!(slice(text, cfg.value.get("ratio").unwrap().span), "-1.5");
        let keys: Vec<&str> = cfg
            .value
            .as_map()
            .unwrap()
            .iter()
            .map(|(k, _)| slice(text, k.span))
            .collect();
        assert_eq!(keys[1], "\"args\"");
    }

    #[test]
    fn all_constants_are_read() {
        let text = "const CONFIG_SCHEMA = {type: 'object'};\nconst ENV_CONFIG = {env: {A: '1'}};\nconst CONFIG_RESOLVE = {path: 'x.yaml', mode: 'merge'};\nconst INPUTS = ['a', 'b'];\nconst OUTPUTS = [{name: 'out'}];\nconst CHILD_CONSTRAINTS = {'rye/x': {min_version: '1.0.0'}};\n";
        let p = parse_js(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let m = p.metadata;
        assert!(m.config_schema().is_some());
        assert!(m.env_config().is_some());
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
        assert_eq!(m.input_names(), vec!["a", "b"]);
        assert_eq!(m.output_names(), vec!["out"]);
        assert!(m.constraint_for("rye/x").is_some());
    }

    #[test]
    fn failures_are_reported_with_name_and_location() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "const CONFIG = { command: process.env.NODE };\n",
                "process",
                "variable",
            ),
            (
                "const CONFIG = { a: 1 b: 2 };\n",
                "b",
                "expected `,` or `}`",
            ),
            ("const CONFIG = { ...base, a: 1 };\n", "...", "spread"),
            ("const CONFIG = { [key]: 1 };\n", "[", "computed"),
            (
                "const CONFIG = { shorthand };\n",
                "}",
                "shorthand property `shorthand`",
            ),
            (
                "const CONFIG = { run() { return 1 } };\n",
                "(",
                "method `run`",
            ),
            (
                "const CONFIG = { a: `x${y}` };\n",
                "`x${y}`",
                "substitutions",
            ),
            (
                "const CONFIG = { a: undefined };\n",
                "undefined",
                "`undefined`",
            ),
            ("const INPUTS = [1,,2];\n", ",", "hole"),
            ("const INPUTS = ['a', 'b'].map(f);\n", ".", "expression"),
            ("const CONFIG = { a: 1,\n", "{", "never closed"),
            (
                "const CONFIG = { a: 'unterminated\n};\n",
                "'unterminated",
                "unterminated string",
            ),
            ("const CONFIG = { a: 1 + 2 };\n", "+", "expected `,` or `}`"),
        ];
        for (text, at, why) in cases {
            let p = parse_js(text);
            assert_eq!(p.metadata.config(), None, "{text:?}");
            assert_eq!(p.metadata.inputs(), None, "{text:?}");
            assert_eq!(p.problems.len(), 1, "{text:?}: {:?}", p.problems);
            let problem = &p.problems[0];
            let name = if text.contains("INPUTS") {
                "INPUTS"
            } else {
                "CONFIG"
            };
            assert!(
                problem.message.contains(&format!("`{name}`")),
                "{}",
                problem.message
            );
            assert!(
                problem.message.contains(why),
                "{text:?}: {}",
                problem.message
            );
            assert_eq!(
                slice(text, problem.span),
                *at,
                "{text:?}: {}",
                problem.message
            );
        }
    }

    #[test]
    fn non_literal_scalars_and_locals_are_skipped_silently() {
        let text = "const __version__ = require('./package.json').version;\nconst __category__ = `rye/${x}`;\nconst __tool_type__ = 'a' + 'b';\nfunction f() {\n  const __executor_id__ = 'inside-function';\n  const CONFIG = {inner: true};\n}\nif (x) { var __tool_description__ = 'in block'; }\nconst CONFIG = makeConfig();\nobj.const = 1;\nconst other = {a: 1};\n";
        let p = parse_js(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.metadata, Default::default());
    }

    #[test]
    fn strings_comments_and_regexes_do_not_confuse_the_scanner() {
        let text = "const a = '{ const CONFIG = {bad} }';\nconst b = \"}\";\nconst re = /[}{]\\/\"/g;\nconst t = `${ { x: '}' } } const __version__ = 'no'`;\n/* const __version__ = 'commented' */\n// const CONFIG = {x: 1}\nconst q = 4 / 2 / 1;\nexport const __version__ = '2.0.0';\nconst CONFIG = {ok: 1};\n";
        let p = parse_js(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.metadata.version().unwrap().value, s("2.0.0"));
        assert_eq!(
            p.metadata.config().unwrap().value.to_json(),
            serde_json::json!({"ok": 1})
        );
    }

    #[test]
    fn later_declaration_wins_and_asi() {
        let text = "var __version__ = '1.0.0'\nvar __version__ = '1.1.0'\nconst INPUTS = ['x']\nconst OUTPUTS = ['y']\n";
        let p = parse_js(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let v = p.metadata.version().cloned().unwrap();
        assert_eq!(v.value, s("1.1.0"));
        assert_eq!(line_of(text, v.span.start), 2);
        assert_eq!(p.metadata.input_names(), vec!["x"]);
        assert_eq!(p.metadata.output_names(), vec!["y"]);
    }

    #[test]
    fn typescript_annotations() {
        let text = "export const CONFIG: { command: string; args: Array<string> } = { command: 'tsx', args: [] };\nexport const INPUTS: ReadonlyArray<{ name: string }> = [{ name: 'q' }];\nlet x: (a: number) => void = () => {};\nconst __version__: string = '3.1.4';\n";
        let p = parse_js(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(
            p.metadata.config().cloned().unwrap().value.to_json(),
            serde_json::json!({"command": "tsx", "args": []})
        );
        assert_eq!(p.metadata.input_names(), vec!["q"]);
        assert_eq!(p.metadata.version().unwrap().value, s("3.1.4"));
    }

    #[test]
    fn numbers() {
        for (src, want) in [
            ("1", Value::Int(1)),
            ("-1", Value::Int(-1)),
            ("+2", Value::Int(2)),
            ("1.0", Value::Float(F64(1.0))),
            (".5", Value::Float(F64(0.5))),
            ("1e3", Value::Float(F64(1000.0))),
            ("1E-3", Value::Float(F64(0.001))),
            ("0b101", Value::Int(5)),
            ("0o17", Value::Int(15)),
            ("0XfF", Value::Int(255)),
            ("10n", Value::Int(10)),
            ("99999999999999999999", Value::Float(F64(1e20))),
            ("-Infinity", Value::Float(F64(f64::NEG_INFINITY))),
        ] {
            let text = format!("const CONFIG = {{ n: {src} }};");
            let p = parse_js(&text);
            assert!(p.problems.is_empty(), "{src}: {:?}", p.problems);
            assert_eq!(
                p.metadata.config().unwrap().value.get("n").unwrap().value,
                want,
                "{src}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!(
            "const CONFIG = {}1{};",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let p = parse_js(&text);
        assert_eq!(p.metadata.config(), None);
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.contains("nested deeper"));
        let text = format!("const x = `{}`;", "${`".repeat(50_000));
        assert_eq!(parse_js(&text), ParsedFile::default());
    }

    #[test]
    fn empty_and_garbage() {
        for text in [
            "",
            "\u{feff}",
            "const",
            "const CONFIG",
            "const CONFIG =",
            "const CONFIG: = {",
            "'",
            "`",
            "/",
            "\\u",
        ] {
            let p = parse_js(text);
            assert_eq!(p.metadata, Default::default(), "{text:?}");
        }
        let p = parse_js("const CONFIG =");
        assert!(p.problems.is_empty());
    }

    #[test]
    fn entry_points_of_scripts() {
        for (text, want) in [
            (
                "if (require.main === module) { main(); }\n",
                Some(EntryPoint::NodeMain),
            ),
            (
                "if (import.meta.main) main();\n",
                Some(EntryPoint::NodeMain),
            ),
            (
                "export async function execute(params) {}\n",
                Some(EntryPoint::ExecuteFunction),
            ),
            (
                "function execute(p) { return p; }\n",
                Some(EntryPoint::ExecuteFunction),
            ),
            (
                "export const execute = async (p) => p;\n",
                Some(EntryPoint::ExecuteFunction),
            ),
            (
                "exports.execute = run;\n",
                Some(EntryPoint::ExecuteFunction),
            ),
            (
                "module.exports.execute = run;\n",
                Some(EntryPoint::ExecuteFunction),
            ),
            // Near-misses: a library, a nested function, a method, a string, a comment.
            (
                "export function helper() {}\nmodule.exports = { helper };\n",
                None,
            ),
            ("function outer() { function execute() {} }\n", None),
            ("obj.function; x.execute = 1;\n", None),
            (
                "const s = 'require.main === module';\n// import.meta.main\n",
                None,
            ),
        ] {
            assert_eq!(entry_point(text), want, "{text}");
        }
    }
}
