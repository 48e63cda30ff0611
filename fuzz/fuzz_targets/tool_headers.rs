//! Fuzz target: every metadata parser of tool headers (Python, YAML, JavaScript, shell) on the
//! same untrusted text, and the fast YAML loader against the `serde_yaml` path. A panic, a
//! disagreement or a slow unit is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ryechain::parse::{ParserKind, parse, yaml_loaders_agree};

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
    if let Some(Err(diff)) = yaml_loaders_agree(&text) {
        panic!("the YAML loaders disagree on {text:?}:\n{diff}");
    }
});
