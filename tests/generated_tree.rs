//! Lint a generated synthetic tree (three spaces, shadowing, symlinks, chains of 2–10) and check
//! that every planted problem is found where the manifest says and that no clean tool is flagged.
#![allow(
    clippy::disallowed_methods,
    reason = "the test writes the generated tree to a temp dir"
)]

use std::collections::BTreeSet;

use ryechain::analysis::{Host, LintOptions, lint};
use ryechain::db::Settings;
use ryechain::load::load;
use ryechain::system::os::OsSystem;
use ryechain_synth::{GenOptions, GeneratedTree, TRUST_DOC_DIR, generate, sign};

/// Write `tree` to a temp dir, lint it with `settings`, and check that the findings are exactly the
/// manifest's planted ones (rule and path), one each.
fn assert_lints_to_the_manifest(tree: GeneratedTree, settings: Settings) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    ryechain_synth::write_tree(&dir, &tree).unwrap();
    let manifest = tree.manifest;
    let specs = ryechain::testing::generated_spaces(&dir);
    let outcome = load(&OsSystem, &specs);
    assert!(outcome.notices.is_empty(), "{:?}", outcome.notices);
    let mut host = Host::new();
    let mut change = outcome.change;
    change.settings = Some(settings);
    host.apply(change);
    let report = lint(
        &host.snapshot(),
        &LintOptions {
            display_base: Some(dir.clone()),
        },
        &|_| {},
    );
    assert_eq!(report.internal_errors, 0);

    let found: BTreeSet<(String, String)> = report
        .findings
        .iter()
        .map(|f| (f.rule.to_string(), f.path.clone()))
        .collect();
    let planted: BTreeSet<(String, String)> = manifest
        .planted
        .iter()
        .map(|p| (p.rule.clone(), p.path.clone()))
        .collect();
    let missed: Vec<_> = planted.difference(&found).collect();
    let extra: Vec<_> = found.difference(&planted).collect();
    assert!(missed.is_empty(), "planted but not found: {missed:#?}");
    assert!(
        extra.is_empty(),
        "found but not planted (a clean tool flagged?): {:#?}",
        &extra[..extra.len().min(20)]
    );
    assert_eq!(
        report.findings.len(),
        planted.len(),
        "one finding per planted problem"
    );
    let kinds: BTreeSet<&str> = manifest.planted.iter().map(|p| p.rule.as_str()).collect();
    assert!(
        kinds.len() >= 12,
        "the generator plants every kind of problem: {kinds:?}"
    );
}

#[test]
fn every_planted_problem_is_found_and_nothing_else() {
    let tree = generate(&GenOptions {
        tools: 600,
        seed: 7,
    });
    // An unsigned tree: the integrity family would add one unsigned-item per item.
    let settings = Settings {
        ignore: vec!["integrity".to_owned()],
        ..Settings::default()
    };
    assert_lints_to_the_manifest(tree, settings);
}

/// `gen_tree --sign`: with every item signed and the key trusted in the user space, the default
/// rules (integrity family included) report exactly the planted findings — no unsigned-item, no
/// untrusted key, no hash mismatch, symlinked items included.
#[test]
fn a_signed_tree_lints_with_the_default_rules_to_exactly_the_planted_findings() {
    let mut tree = generate(&GenOptions {
        tools: 400,
        seed: 7,
    });
    assert!(!tree.symlinks.is_empty(), "the tree has symlinked items");
    let key = sign(&mut tree).unwrap();
    assert_eq!(
        tree.manifest.signed_by.as_deref(),
        Some(key.fingerprint.as_str())
    );
    let doc = format!("{TRUST_DOC_DIR}/{}.toml", key.fingerprint);
    assert!(tree.files.iter().any(|f| f.path == doc), "{doc} is written");
    assert_eq!(tree.manifest.files, tree.files.len());
    assert_lints_to_the_manifest(tree, Settings::default());
}
