//! The fast YAML loaders (line by line, `parse::yaml_simple`; libyaml events, `parse::yaml_fast`)
//! give exactly what the `serde_yaml` path gives, on every YAML file in the repository: bundled
//! system space, examples, rule files, rule fixtures and test trees.
#![allow(
    clippy::disallowed_methods,
    reason = "the test reads the repository's YAML files"
)]

use ryechain::parse::{yaml_loaders_agree, yaml_spans_agree};
use ryechain::testing::repository_files;

#[test]
fn fast_loader_agrees_with_serde_yaml_on_every_repository_yaml_file() {
    let files = repository_files(&["yaml", "yml"]);
    assert!(files.len() > 100, "only {} YAML files found", files.len());
    let (mut compared, mut declined) = (0, 0);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        match yaml_loaders_agree(&text) {
            None => declined += 1,
            Some(Ok(())) => compared += 1,
            Some(Err(diff)) => panic!("{}:\n{diff}", path.display()),
        }
    }
    // Anchors, aliases and tags are rare in tool files: nearly all take the fast path.
    assert!(
        compared > declined * 10,
        "{compared} compared, {declined} declined"
    );
}

/// The one-pass spanned reader of plain headers gives the located path's entries and spans on
/// every repository YAML file it reads, and reads most of them.
#[test]
fn spanned_reader_agrees_with_the_locator_on_every_repository_yaml_file() {
    let files = repository_files(&["yaml", "yml"]);
    let (mut compared, mut declined) = (0, 0);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        match yaml_spans_agree(&text) {
            None => declined += 1,
            Some(Ok(())) => compared += 1,
            Some(Err(diff)) => panic!("{}:\n{diff}", path.display()),
        }
    }
    assert!(
        compared > declined,
        "{compared} compared, {declined} declined"
    );
}

/// The same on a generated tree's YAML tools (the benchmark's shape).
#[test]
fn spanned_reader_agrees_with_the_locator_on_a_generated_tree() {
    let tree = ryechain_synth::generate(&ryechain_synth::GenOptions {
        tools: 2_000,
        seed: 11,
    });
    let (mut compared, mut declined) = (0, 0);
    for file in tree
        .files
        .iter()
        .filter(|f| f.path.ends_with(".yaml") || f.path.ends_with(".yml"))
    {
        match yaml_spans_agree(&file.contents) {
            None => declined += 1,
            Some(Ok(())) => compared += 1,
            Some(Err(diff)) => panic!("{}:\n{diff}", file.path),
        }
    }
    assert!(
        compared > 500 && declined * 10 < compared,
        "{compared} compared, {declined} declined"
    );
}
