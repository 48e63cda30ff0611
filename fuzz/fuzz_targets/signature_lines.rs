//! Fuzz target: signature-line parsing in every wrapper format (`#`, `//`, `<!-- -->`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ryechain::integrity::sigline::{SignatureFormat, parse_signature};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for fmt in [
        SignatureFormat::hash_comment(),
        SignatureFormat::slash_comment(),
        SignatureFormat::html_comment(),
    ] {
        let _ = parse_signature(&text, &fmt);
    }
});
