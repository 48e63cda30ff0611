//! Fuzz target: trust documents in every layout (TOML identity docs and raw PEM files).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ryechain::integrity::trust::parse_trust_doc;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for rel in [
        "config/keys/trusted/0123456789abcdef.toml",
        "trusted_keys/0123456789abcdef.toml",
        "trusted_keys/0123456789abcdef.pem",
    ] {
        let _ = parse_trust_doc(rel, &text);
    }
});
