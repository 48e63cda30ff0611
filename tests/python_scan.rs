//! The scan of a Python module's top-level statements (`parse::py_scan`) reads every Python file
//! of the repository (bundled system space, examples, fixtures) and of a generated tree the same
//! with its line reader that skips to the bytes that matter as with the token-by-token reader it
//! replaced (the unit tests hold the two together on generated soups of Python pieces).
#![allow(
    clippy::disallowed_methods,
    reason = "the test reads the repository's Python files"
)]

use ryechain::parse::python_scans_agree;
use ryechain::testing::repository_files;
use ryechain_synth::{GenOptions, generate};

#[test]
fn line_readers_agree_on_every_repository_python_file() {
    let files = repository_files(&["py"]);
    assert!(files.len() > 100, "only {} Python files found", files.len());
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if let Err(diff) = python_scans_agree(&text) {
            panic!("{}:\n{diff}", path.display());
        }
    }
}

#[test]
fn line_readers_agree_on_a_generated_tree() {
    let tree = generate(&GenOptions {
        tools: 2_000,
        seed: 7,
    });
    let mut compared = 0;
    for file in tree.files.iter().filter(|f| f.path.ends_with(".py")) {
        if let Err(diff) = python_scans_agree(&file.contents) {
            panic!("{}:\n{diff}", file.path);
        }
        compared += 1;
    }
    assert!(compared > 1_000, "only {compared} Python files generated");
}
