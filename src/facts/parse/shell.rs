//! The `shell/shell` metadata parser: header assignments of `.sh` tools.
//!
//! The seeds speak of shell tools "with metadata headers" but define no format (§2.6, §15.14);
//! this is ryechain's: plain shell variable assignments at the start of a line, which bash itself
//! runs harmlessly —
//!
//! ```sh
//! #!/usr/bin/env bash
//! __version__="1.0.0"
//! __executor_id__="rye/core/runtimes/bash/bash"
//! __category__=demo
//! CONFIG='{"timeout": 30}'
//! ```
//!
//! Read: the dunders `__version__ __tool_type__ __executor_id__ __category__
//! __tool_description__` (a shell word: `'single'`, `"double"` with the `\" \\ \$ \`` escapes, or
//! a bare word) and the constants `CONFIG_SCHEMA ENV_CONFIG CONFIG CONFIG_RESOLVE INPUTS OUTPUTS
//! CHILD_CONSTRAINTS`, whose value is JSON text in one shell word. An optional `export ` or
//! `readonly ` prefix is allowed. Only lines that start in column 0 count (indented lines belong to
//! functions and blocks); a later assignment replaces an earlier one. A value with an expansion
//! (`$x`, `$(…)`, a backtick) is not a literal and is skipped; constant JSON that does not parse
//! is reported as a problem. Lines may end in `\n`, `\r\n` or a lone `\r`. Never panics.

use super::js::{CONSTANTS, DUNDERS};
use super::{FieldNames, Fields, MAX_NESTING, MAX_TEXT_LEN, clamp_span};
use crate::model::{F64, ParseProblem, ParsedFile, Span, Spanned, Value};

/// Shell names feeding each metadata field (the JS parser's names).
pub(crate) const SHELL_FIELDS: FieldNames = super::js::JS_FIELDS;

/// Why a shell word is not a literal.
enum WordError {
    /// An expansion or a construct that is not a plain literal: skipped silently.
    NotLiteral,
    /// An unterminated quote: reported.
    Unterminated,
}

/// Read one shell word starting at `s` (the text after `=`); returns the value and its byte length.
fn shell_word(s: &str) -> Result<(String, usize), WordError> {
    let mut out = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        match c {
            ' ' | '\t' | '\n' | '\r' | ';' | '&' | '|' => return Ok((out, i)),
            '\'' => {
                chars.next();
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, ch)) => out.push(ch),
                        None => return Err(WordError::Unterminated),
                    }
                }
            }
            '"' => {
                chars.next();
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, e @ ('"' | '\\' | '$' | '`'))) => out.push(e),
                            Some((_, '\n')) => {}
                            Some((_, other)) => {
                                out.push('\\');
                                out.push(other);
                            }
                            None => return Err(WordError::Unterminated),
                        },
                        Some((_, '$' | '`')) => return Err(WordError::NotLiteral),
                        Some((_, ch)) => out.push(ch),
                        None => return Err(WordError::Unterminated),
                    }
                }
            }
            '\\' => {
                chars.next();
                match chars.next() {
                    Some((_, '\n')) | None => {}
                    Some((_, ch)) => out.push(ch),
                }
            }
            '$' | '`' | '(' | ')' | '<' | '>' | '*' | '?' | '[' | '~' | '{' => {
                return Err(WordError::NotLiteral);
            }
            _ => {
                chars.next();
                out.push(c);
            }
        }
    }
    Ok((out, s.len()))
}

/// A JSON value as a metadata value, every node spanned with the whole word (JSON text inside a
/// shell word has no stable offsets of its own once quotes and escapes are removed).
fn from_json(v: serde_json::Value, span: Span, depth: usize) -> Option<Value> {
    use serde_json::Value as J;
    if depth > MAX_NESTING {
        return None;
    }
    Some(match v {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(b),
        J::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(F64(n.as_f64()?)),
        },
        J::String(s) => Value::Str(s.into()),
        J::Array(items) => Value::List(
            items
                .into_iter()
                .map(|i| from_json(i, span, depth + 1).map(|v| Spanned::new(v, span)))
                .collect::<Option<_>>()?,
        ),
        J::Object(map) => Value::Map(
            map.into_iter()
                .map(|(k, v)| {
                    from_json(v, span, depth + 1)
                        .map(|v| (Spanned::new(k.into(), span), Spanned::new(v, span)))
                })
                .collect::<Option<_>>()?,
        ),
    })
}

/// Read the metadata header of a shell script. Never panics.
pub fn parse_shell(text: &str) -> ParsedFile {
    if text.len() > MAX_TEXT_LEN {
        return super::too_large("Shell");
    }
    let mut fields = Fields::new(&SHELL_FIELDS);
    let mut problems = Vec::new();
    let mut offset = 0;
    // Lines end at `\n` or `\r`, as universal newlines end them (the reference reads item text
    // in Python's text mode, §10.2): a CRLF or CR-only checkout reads as its LF form.
    for line in text.split_inclusive(['\n', '\r']) {
        let start = offset;
        offset += line.len();
        let mut rest = line;
        let mut at = start;
        for prefix in ["export ", "readonly "] {
            if let Some(r) = rest.strip_prefix(prefix) {
                at += prefix.len();
                rest = r.trim_start_matches(' ');
                at += r.len() - rest.len();
            }
        }
        let Some(eq) = rest.find('=') else { continue };
        let name = &rest[..eq];
        let is_dunder = DUNDERS.contains(&name);
        if !is_dunder && !CONSTANTS.contains(&name) {
            continue;
        }
        let value_at = at + eq + 1;
        let word = &text[value_at..offset];
        let (value, len) = match shell_word(word) {
            Ok(v) => v,
            Err(WordError::NotLiteral) => continue,
            Err(WordError::Unterminated) => {
                problems.push(ParseProblem {
                    span: clamp_span(text, value_at, offset),
                    message: format!("the value of `{name}` has an unterminated quote"),
                });
                continue;
            }
        };
        let span = clamp_span(text, value_at, value_at + len);
        if is_dunder {
            fields.insert(name, Spanned::new(Value::Str(value.into()), span));
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(&value) {
            Ok(json) => match from_json(json, span, 0) {
                Some(v) => fields.insert(name, Spanned::new(v, span)),
                None => problems.push(ParseProblem {
                    span,
                    message: format!("the JSON value of `{name}` is nested too deeply"),
                }),
            },
            Err(e) => problems.push(ParseProblem {
                span,
                message: format!("the value of `{name}` is not valid JSON: {e}"),
            }),
        }
    }
    ParsedFile {
        metadata: fields.metadata(),
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: Option<&Spanned<Value>>) -> Option<&str> {
        v.and_then(|v| v.value.as_str())
    }

    #[test]
    fn reads_dunders_in_every_quoting() {
        let text = "#!/usr/bin/env bash\n__version__=\"1.0.0\"\n__executor_id__='rye/core/runtimes/bash/bash'\nexport __category__=demo/tools\n__tool_description__=\"say \\\"hi\\\"\"\n";
        let p = parse_shell(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(s(p.metadata.version()), Some("1.0.0"));
        assert_eq!(
            s(p.metadata.executor_id()),
            Some("rye/core/runtimes/bash/bash")
        );
        assert_eq!(s(p.metadata.category()), Some("demo/tools"));
        assert_eq!(s(p.metadata.tool_description()), Some("say \"hi\""));
        let span = p.metadata.executor_id().map(|v| v.span).unwrap();
        assert_eq!(&text[span.range()], "'rye/core/runtimes/bash/bash'");
    }

    /// A CRLF or CR-only checkout reads as its LF form (universal newlines, as the reference
    /// reads item text, §10.2); spans point at the value's bytes in the raw text.
    #[test]
    fn crlf_and_cr_lines_read_as_lf_lines() {
        let lf = "#!/usr/bin/env bash\n__version__=\"1.0.0\"\n__executor_id__=rye/core/runtimes/bash/bash\nCONFIG='{\"timeout\": 30}'\n";
        let want = parse_shell(lf).metadata;
        for eol in ["\r\n", "\r"] {
            let text = lf.replace('\n', eol);
            let p = parse_shell(&text);
            assert!(p.problems.is_empty(), "{eol:?}: {:?}", p.problems);
            assert_eq!(s(p.metadata.version()), Some("1.0.0"), "{eol:?}");
            assert_eq!(
                s(p.metadata.executor_id()),
                Some("rye/core/runtimes/bash/bash")
            );
            assert_eq!(
                p.metadata.config().map(|v| v.value.to_json()),
                want.config().map(|v| v.value.to_json())
            );
            let span = p.metadata.version().map(|v| v.span).unwrap();
            assert_eq!(&text[span.range()], "\"1.0.0\"");
        }
    }

    #[test]
    fn expansions_indented_lines_and_other_names_are_ignored() {
        let text = "__version__=$VERSION\nf() {\n  __executor_id__=x\n}\nVERSION=1\n__category__=\"a$(id)\"\n";
        let p = parse_shell(text);
        assert!(p.problems.is_empty());
        assert_eq!(p.metadata, crate::model::Metadata::default());
    }

    #[test]
    fn later_assignment_wins_and_trailing_comments_end_the_word() {
        let p = parse_shell("__version__=1.0.0\n__version__=2.0.0 # bumped\n");
        assert_eq!(s(p.metadata.version()), Some("2.0.0"));
    }

    #[test]
    fn constants_are_json_words() {
        let p = parse_shell("CONFIG='{\"timeout\": 30, \"args\": [\"a\"]}'\nENV_CONFIG='{bad'\n");
        let cfg = p.metadata.config().map(|v| v.value.to_json());
        assert_eq!(cfg, Some(serde_json::json!({"timeout": 30, "args": ["a"]})));
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.contains("ENV_CONFIG"));
    }

    #[test]
    fn unterminated_quote_is_a_problem_not_a_panic() {
        let p = parse_shell("__version__=\"1.0\n");
        assert_eq!(p.metadata.version(), None);
        assert_eq!(p.problems.len(), 1);
    }
}
