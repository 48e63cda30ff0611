//! Fuzz target: rule files (`rules/<family>/<id>.yaml`) compiled into validated rules.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ryechain::rules::compile_rule;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = compile_rule("chain/fuzzed-rule.yaml", &text);
});
