//! `lint --watch`'s lint (`analysis::live::LiveLint`) on every rule's fixture: each file edited
//! on disk and then removed, read back through the same `Reloader` the watch uses, and the
//! live report compared with a lint of the tree loaded afresh after each step (the random model
//! of `tests/incremental.rs::live_lint_equals_fresh` holds it on generated batches).
#![allow(
    clippy::disallowed_methods,
    reason = "the test copies fixture trees to temp dirs and edits them there"
)]

use std::collections::BTreeSet;
use std::path::Path;

use ryechain::analysis::lint;
use ryechain::analysis::live::LiveLint;
use ryechain::load::{Reloader, load};
use ryechain::rules::rules;
use ryechain::system::os::OsSystem;

mod common;
use common::{
    assert_same_reports, copy_tree, entries_under, every_rule, fixture_dirs, loaded, opts,
};

/// Each fixture fires its rule beside near misses; together they fire every rule. After each
/// file's edit (a comment line: a signed file stops matching its hash) and its removal, the live
/// lint reports what a fresh one does, and a body edit of one tool re-checks less than the tree.
#[test]
fn every_rule_fixture_stays_equal_to_a_fresh_lint_through_edits_and_removals() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let settings = every_rule();
    let mut fired: BTreeSet<String> = BTreeSet::new();
    let mut partial = 0usize;
    for name in &fixture_dirs(&root) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap().join(name);
        copy_tree(&root.join(name), &dir);
        let specs = ryechain::testing::fixture_spaces(&dir);
        let mut host = loaded(&specs, &settings);
        let mut live = LiveLint::new(host.analysis(), opts(&dir), &|_| {});
        let first = lint(&loaded(&specs, &settings).snapshot(), &opts(&dir), &|_| {});
        fired.extend(first.findings.iter().map(|f| f.rule.to_string()));
        assert_same_reports(
            &format!("{name}: first"),
            ("live", &live.report()),
            ("fresh", &first),
        );
        // The watcher reports the change of a symlink's target (or of a file in a linked folder)
        // at the target's path only: the `Reloader` reads the links that reach it again, those
        // the load met and those it meets.
        let mut reloader = Reloader::new(&OsSystem, &specs);
        reloader.note_links(&load(&OsSystem, &specs).links);
        let (files, _) = entries_under(&dir);
        for (i, file) in files.iter().enumerate() {
            let rel = file.strip_prefix(&dir).unwrap().display().to_string();
            for step in ["edit", "removal"] {
                if step == "edit" {
                    let mut text = std::fs::read(file).unwrap();
                    text.extend_from_slice(format!("\n# edit {i}\n").as_bytes());
                    std::fs::write(file, text).unwrap();
                } else {
                    std::fs::remove_file(file).unwrap();
                }
                let db = host.snapshot();
                let change = reloader.reload(std::slice::from_ref(file), &|d| db.paths_under(d));
                drop(db);
                let delta = live.apply(&mut host, change);
                if delta.full.is_none() && delta.rechecked < live.summary().files {
                    partial += 1;
                }
                let fresh = lint(&loaded(&specs, &settings).snapshot(), &opts(&dir), &|_| {});
                assert_same_reports(
                    &format!(
                        "{name}: after the {step} of {rel} ({} re-checked, full: {:?})",
                        delta.rechecked, delta.full
                    ),
                    ("live", &live.report()),
                    ("fresh", &fresh),
                );
                assert_eq!(delta.summary, fresh.summary, "{name}: {step} of {rel}");
            }
        }
    }
    let all: BTreeSet<String> = rules().rules.iter().map(|r| r.id.to_string()).collect();
    let missing: Vec<_> = all.difference(&fired).collect();
    assert!(missing.is_empty(), "rules no fixture fired: {missing:?}");
    assert!(
        partial > 100,
        "most steps re-check only what they reach: {partial}"
    );
}

/// `--watch` (and the editor) follow a lockfile's chain: editing a tool a sound lockfile pins
/// makes that lockfile stale in the live report, as in a fresh lint, without a full re-check.
#[test]
fn a_tool_edit_turns_the_lockfile_that_pins_it_stale_in_the_live_lint() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stale-lockfile");
    let settings = every_rule();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("stale-lockfile");
    copy_tree(&root, &dir);
    let specs = ryechain::testing::fixture_spaces(&dir);
    let mut host = loaded(&specs, &settings);
    let mut live = LiveLint::new(host.analysis(), opts(&dir), &|_| {});
    let stale_fresh = |report: &ryechain::analysis::LintReport| {
        report
            .findings
            .iter()
            .any(|f| &*f.rule == "stale-lockfile" && f.path.contains("ok_fresh@1.0.0"))
    };
    assert!(!stale_fresh(&live.report()));
    let tool = dir.join("project/.ai/tools/acme/ok_fresh.py");
    let mut text = std::fs::read(&tool).unwrap();
    text.extend_from_slice(b"\n# an edit\n");
    std::fs::write(&tool, text).unwrap();
    let mut reloader = Reloader::new(&OsSystem, &specs);
    let db = host.snapshot();
    let change = reloader.reload(std::slice::from_ref(&tool), &|d| db.paths_under(d));
    drop(db);
    let delta = live.apply(&mut host, change);
    assert!(delta.full.is_none(), "{:?}", delta.full);
    let fresh = lint(&loaded(&specs, &settings).snapshot(), &opts(&dir), &|_| {});
    assert!(stale_fresh(&fresh));
    assert_same_reports(
        "after the edit",
        ("live", &live.report()),
        ("fresh", &fresh),
    );
}
