//! Fuzz target: every metadata parser of tool headers (Python, YAML, JavaScript, shell) on the
//! same untrusted text. A panic or a slow unit is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ryechain::parse::{ParserKind, parse};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for kind in [
        ParserKind::PythonAst,
        ParserKind::Yaml,
        ParserKind::JavaScript,
        ParserKind::Shell,
    ] {
        let parsed = parse(kind, &text);
        for p in &parsed.problems {
            assert!(p.span.end as usize <= text.len(), "problem span outside the text");
        }
    }
});
