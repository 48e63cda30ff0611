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
use ryechain::synth::{GenOptions, generate};
use ryechain::system::os::OsSystem;

#[test]
fn every_planted_problem_is_found_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let tree = generate(&GenOptions {
        tools: 600,
        seed: 7,
    });
    ryechain::testing::write_tree(&dir, &tree).unwrap();
    let manifest = tree.manifest;
    let specs = ryechain::testing::generated_spaces(&dir);
    let outcome = load(&OsSystem, &specs);
    assert!(outcome.notices.is_empty(), "{:?}", outcome.notices);
    let mut host = Host::new();
    let mut change = outcome.change;
    // The generator writes unsigned trees (no key): the integrity family is checked elsewhere.
    change.settings = Some(Settings {
        ignore: vec!["integrity".to_owned()],
        ..Settings::default()
    });
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
        .map(|f| (f.rule.clone(), f.path.clone()))
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
        "found but not planted (a clean tool flagged?): {extra:#?}"
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
