//! Fuzz target: lockfile loading (`<id>@<version>.lock.json`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ryechain::integrity::lockfile::parse_lockfile;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(lock) = parse_lockfile(&text) {
        // What loads must write back and load again.
        let again = parse_lockfile(&lock.to_text()).expect("a written lockfile loads");
        assert_eq!(again.root, lock.root);
    }
});
