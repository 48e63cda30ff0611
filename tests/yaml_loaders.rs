//! The YAML header reader (`parse::yaml_load`, one parse of libyaml's events with their marks)
//! on every YAML file in the repository (bundled system space, examples, rule files, rule
//! fixtures and test trees) and on a generated tree: its values and errors are serde_yaml's, and
//! every span it gives holds the text of its key or value.
#![allow(
    clippy::disallowed_methods,
    reason = "the test reads the repository's YAML files"
)]

use ryechain::parse::{yaml_loaders_agree, yaml_spans_hold_their_text};
use ryechain::testing::repository_files;

#[test]
fn the_loader_agrees_with_serde_yaml_on_every_repository_yaml_file() {
    let files = repository_files(&["yaml", "yml"]);
    assert!(files.len() > 100, "only {} YAML files found", files.len());
    let (mut compared, mut guarded) = (0, 0);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        match yaml_loaders_agree(&text) {
            None => guarded += 1,
            Some(Ok(())) => compared += 1,
            Some(Err(diff)) => panic!("{}:\n{diff}", path.display()),
        }
    }
    // Only files nested past the limit are left to the nesting guard.
    assert!(
        guarded <= 2,
        "{compared} compared, {guarded} left to the guard"
    );
}

/// Every key and value span of every repository YAML file reads, alone, as its key or value.
#[test]
fn every_span_holds_its_text_on_every_repository_yaml_file() {
    let files = repository_files(&["yaml", "yml"]);
    let mut checked = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        match yaml_spans_hold_their_text(&text) {
            Ok(n) => checked += n,
            Err(diff) => panic!("{}:\n{diff}", path.display()),
        }
    }
    assert!(checked > 3_000, "only {checked} spans checked");
}

/// The same on a generated tree's YAML tools (the benchmark's shape).
#[test]
fn spans_and_values_hold_on_a_generated_tree() {
    let tree = ryechain_synth::generate(&ryechain_synth::GenOptions {
        tools: 2_000,
        seed: 11,
    });
    let (mut files, mut spans) = (0, 0);
    for file in tree
        .files
        .iter()
        .filter(|f| f.path.ends_with(".yaml") || f.path.ends_with(".yml"))
    {
        files += 1;
        if let Some(Err(diff)) = yaml_loaders_agree(&file.contents) {
            panic!("{}:\n{diff}", file.path);
        }
        match yaml_spans_hold_their_text(&file.contents) {
            Ok(n) => spans += n,
            Err(diff) => panic!("{}:\n{diff}", file.path),
        }
    }
    assert!(
        files > 500 && spans > files * 5,
        "{files} files, {spans} spans"
    );
}
