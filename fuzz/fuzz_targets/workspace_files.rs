//! Fuzz target: text read from a workspace by queries — `.ai/config/ryechain.yaml`, extractor
//! YAML, a tool of every extension, a CONFIG_RESOLVE file and a project `.env` — pushed into a
//! database and linted, the way the CLI and the editor feed untrusted files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ryechain::analysis::{LintOptions, lint};
use ryechain::testing::{FixtureFile, change_for};
use ryechain::model::Space;
use ryechain::db::Settings;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let file = |rel: &str| FixtureFile {
        space: Space::Project,
        rel: rel.to_owned(),
        text: text.clone(),
    };
    let files = vec![
        file("config/ryechain.yaml"),
        file("tools/rye/core/extractors/tool/tool_extractor.yaml"),
        file("tools/f/a.py"),
        file("tools/f/b.yaml"),
        file("tools/f/c.js"),
        file("tools/f/d.sh"),
        file("lockfiles/f/a@1.0.0.lock.json"),
        file("config/keys/trusted/0123456789abcdef.toml"),
    ];
    let mut host = ryechain::analysis::Host::new();
    host.apply(change_for(&files, Settings::default()));
    let report = lint(host.db(), &LintOptions::default(), &|_| {});
    assert_eq!(report.internal_errors, 0, "a check panicked");
    let _ = ryechain::exec::env::parse_dotenv(&text);
});
