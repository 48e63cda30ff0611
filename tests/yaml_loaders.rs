//! The fast YAML loaders (line by line, `parse::yaml_simple`; libyaml events, `parse::yaml_fast`)
//! give exactly what the `serde_yaml` path gives, on every YAML file in the repository: bundled
//! system space, examples, rule files, rule fixtures and test trees.
#![allow(
    clippy::disallowed_methods,
    reason = "the test reads the repository's YAML files"
)]

use std::path::{Path, PathBuf};

use ryechain::parse::{yaml_loaders_agree, yaml_spans_agree};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        if path.is_dir() {
            yaml_files(&path, out);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        ) {
            out.push(path);
        }
    }
}

#[test]
fn fast_loader_agrees_with_serde_yaml_on_every_repository_yaml_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    yaml_files(root, &mut files);
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    yaml_files(root, &mut files);
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
    let tree = ryechain::synth::generate(&ryechain::synth::GenOptions {
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
