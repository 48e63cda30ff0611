//! Property tests for the metadata parsers: no input panics them, and every span they return
//! lies inside the text on char boundaries.

use proptest::prelude::*;

use super::{ParserKind, parse};
use crate::model::{Metadata, ParsedFile, Span, Spanned, Value};

fn check_span(text: &str, span: Span, what: &str) -> Result<(), TestCaseError> {
    let (start, end) = (span.start as usize, span.end as usize);
    prop_assert!(
        start <= end && end <= text.len(),
        "{what} span {span:?} outside text of {} bytes",
        text.len()
    );
    prop_assert!(
        text.is_char_boundary(start) && text.is_char_boundary(end),
        "{what} span {span:?} splits a char"
    );
    Ok(())
}

fn check_value(text: &str, v: &Spanned<Value>) -> Result<(), TestCaseError> {
    check_span(text, v.span, "value")?;
    match &v.value {
        Value::List(items) => {
            for item in items {
                check_value(text, item)?;
            }
        }
        Value::Map(entries) => {
            for (k, item) in entries {
                check_span(text, k.span, "key")?;
                check_value(text, item)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn fields(m: &Metadata) -> [Option<&Spanned<Value>>; 14] {
    crate::model::Field::ALL.map(|f| m.get(f))
}

fn check_parsed(text: &str, parsed: &ParsedFile) -> Result<(), TestCaseError> {
    for v in fields(&parsed.metadata).into_iter().flatten() {
        check_value(text, v)?;
    }
    // The header's spans count from its first field's (`header_start`): nothing inside a field
    // may start before it.
    prop_assert_eq!(
        parsed.metadata.header_start(),
        parsed.metadata.first_span_start()
    );
    for p in &parsed.problems {
        check_span(text, p.span, "problem")?;
        prop_assert!(!p.message.is_empty());
    }
    Ok(())
}

fn check_all(text: &str) -> Result<(), TestCaseError> {
    for kind in [
        ParserKind::PythonAst,
        ParserKind::Yaml,
        ParserKind::JavaScript,
        ParserKind::Shell,
    ] {
        let parsed = parse(kind, text);
        check_parsed(text, &parsed)?;
    }
    Ok(())
}

/// Fragments that steer random texts into the interesting paths of all three parsers.
const FRAGMENTS: &[&str] = &[
    "__version__ = ",
    "CONFIG = ",
    "const CONFIG = ",
    "export let __version__: string = ",
    "config:",
    "version: ",
    "inputs:\n  - ",
    "- ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ",",
    ":",
    "=",
    "'",
    "\"",
    "'''",
    "\"\"\"",
    "`",
    "${",
    "#",
    "# rye:signed:x",
    "//",
    "/*",
    "*/",
    "/",
    "\\",
    "\\u{1F600}",
    "\\x4",
    "r'",
    "b'",
    "f'",
    "-",
    "+",
    "1",
    "1.5e3",
    "0x1F",
    "None",
    "True",
    "null",
    "~",
    "---",
    "...",
    "&a",
    "*a",
    "!tag",
    "<<: ",
    "|",
    ">-",
    "é",
    "€",
    "😀",
    "\u{feff}",
    "\u{2028}",
    "if x:\n    ",
    "def f(",
    "lambda: ",
    "as const",
    ";",
    "?",
    "%",
    "__executor_id__=",
    "export ",
    "$(",
];

fn fragment_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..64).prop_map(|parts| parts.concat())
}

/// Pieces of directives and knowledge entries: fences, tags, verbatim bodies, frontmatter.
const DOC_FRAGMENTS: &[&str] = &[
    "```xml\n",
    "```\n",
    "````\n",
    "```yaml\n",
    "---\n",
    "<!-- sig -->\n",
    "<directive",
    " name=\"d\"",
    " version='1'",
    ">",
    "/>",
    "</directive>",
    "<metadata>",
    "</metadata>",
    "<inputs><input name=\"a\" required=\"true\"/></inputs>",
    "<template>",
    "</template>",
    "<raw>",
    "</raw>",
    "<execute item_id=\"x\">",
    "<param name=\"p\">v</param>",
    "</execute>",
    "<permissions>*</permissions>",
    "é",
    "<",
    "&",
    "&amp;",
    "\n",
    "name: e\n",
    "title: [\n",
    "a: b: c\n",
    "<!DOCTYPE x [<!ENTITY e \"x\">]>",
    "&e;",
];

fn doc_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(DOC_FRAGMENTS), 0..48)
        .prop_map(|parts| parts.concat())
}

/// Directive and knowledge parses never panic, and every span they give is inside the text on
/// char boundaries.
fn check_docs(text: &str) -> Result<(), TestCaseError> {
    match super::directive::parse_directive(text) {
        Ok(d) => {
            for a in [&d.name, &d.version].into_iter().flatten() {
                check_span(text, a.span, "directive attribute")?;
                prop_assert_eq!(
                    &text[a.span.start as usize..a.span.end as usize],
                    a.value.as_str()
                );
            }
        }
        Err(e) => {
            if let Some(span) = e.span {
                check_span(text, span, "directive error")?;
            }
        }
    }
    if let Err(e) = super::knowledge::parse_knowledge(text)
        && let Some(span) = e.span
    {
        check_span(text, span, "knowledge error")?;
    }
    Ok(())
}

proptest! {
    #[test]
    fn directives_and_knowledge_never_panic(text in doc_text()) {
        check_docs(&text)?;
    }

    #[test]
    fn directives_and_knowledge_never_panic_on_any_string(text in any::<String>()) {
        check_docs(&text)?;
    }

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        check_all(&text)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        check_all(&text)?;
    }

    #[test]
    fn fragment_soup_never_panics(text in fragment_text()) {
        check_all(&text)?;
    }

    #[test]
    fn python_header_values_are_read_around_noise(
        noise in fragment_text(),
        version in "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
    ) {
        // A well-formed header line followed by anything: spans stay valid, and the header value
        // is read unless the noise makes the statement itself malformed.
        let text = format!("__version__ = '{version}'\n{noise}");
        let parsed = parse(ParserKind::PythonAst, &text);
        check_parsed(&text, &parsed)?;
        if parsed.problems.is_empty() {
            let v = parsed.metadata.version().map(|v| v.value.clone());
            if !noise.contains("__version__") {
                prop_assert_eq!(v, Some(Value::Str(version.into())));
            }
        }
    }
}
