//! `lint --watch`'s lint (`analysis::live::LiveLint`) on every rule's fixture: each file edited
//! on disk and then removed, read back through the same `Reloader` the watch uses, and the
//! live report compared with a lint of the tree loaded afresh after each step (the random model
//! of `tests/incremental.rs::live_lint_equals_fresh` holds it on generated batches).
#![allow(
    clippy::disallowed_methods,
    reason = "the test copies fixture trees to temp dirs and edits them there"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ryechain::analysis::live::LiveLint;
use ryechain::analysis::{Host, LintOptions, LintReport, lint};
use ryechain::db::Settings;
use ryechain::load::{Reloader, SpaceSpec, load};
use ryechain::rules::rules;
use ryechain::system::os::OsSystem;

fn opts(base: &Path) -> LintOptions {
    LintOptions {
        display_base: Some(base.to_path_buf()),
    }
}

/// The spaces loaded afresh into a new host.
fn loaded(specs: &[SpaceSpec], settings: &Settings) -> Host {
    let mut change = load(&OsSystem, specs).change;
    change.settings = Some(settings.clone());
    let mut host = Host::new();
    host.apply(change);
    host
}

fn assert_same(what: &str, live: &LintReport, fresh: &LintReport) {
    assert_eq!(live.summary, fresh.summary, "{what}: summary");
    assert_eq!(live.internal_errors, fresh.internal_errors, "{what}");
    let show = |r: &LintReport| {
        r.findings
            .iter()
            .map(|f| format!("{} {}:{} {}", f.rule, f.path, f.line, f.message))
            .collect::<Vec<_>>()
    };
    assert!(
        live.findings == fresh.findings,
        "{what}: live and fresh findings differ\nlive: {:#?}\nfresh: {:#?}",
        show(live),
        show(fresh)
    );
}

/// Every regular file under `dir` (sorted), symlinks left alone.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The real paths of the files and folders symlinks under `dir` point at.
fn link_targets(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_symlink()
                && let Ok(real) = e.path().canonicalize()
            {
                out.insert(real);
            }
        }
    }
    out
}

/// Copy a directory tree, symlinks as symlinks.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let ty = entry.file_type().unwrap();
        if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if ty.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Each fixture fires its rule beside near misses; together they fire every rule. After each
/// file's edit (a comment line: a signed file stops matching its hash) and its removal, the live
/// lint reports what a fresh one does, and a body edit of one tool re-checks less than the tree.
#[test]
fn every_rule_fixture_stays_equal_to_a_fresh_lint_through_edits_and_removals() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let settings = Settings {
        select: Some(vec!["ALL".to_owned(), "unrunnable-item".to_owned()]),
        ..Settings::default()
    };
    let mut fired: BTreeSet<String> = BTreeSet::new();
    let mut partial = 0usize;
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("project").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    for name in &dirs {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap().join(name);
        copy_tree(&root.join(name), &dir);
        let specs = ryechain::testing::fixture_spaces(&dir);
        let mut host = loaded(&specs, &settings);
        let mut live = LiveLint::new(&host.snapshot(), opts(&dir), &|_| {});
        let first = lint(&loaded(&specs, &settings).snapshot(), &opts(&dir), &|_| {});
        fired.extend(first.findings.iter().map(|f| f.rule.to_string()));
        assert_same(&format!("{name}: first"), &live.report(), &first);
        let reloader = Reloader::new(&OsSystem, &specs);
        let targets = link_targets(&dir);
        for (i, file) in files_under(&dir).iter().enumerate() {
            let rel = file.strip_prefix(&dir).unwrap().display().to_string();
            // The watcher reports the change of a symlink's target (or of a file in a linked
            // folder) at the target's path; `lint --watch` reads the links that reach it again
            // itself (`cli/watch.rs`, `Links`; `tests/cli_watch.rs`), the `Reloader` alone (here,
            // and in the language server) does not.
            if targets.iter().any(|t| file.starts_with(t)) {
                continue;
            }
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
                assert_same(
                    &format!(
                        "{name}: after the {step} of {rel} ({} re-checked, full: {:?})",
                        delta.rechecked, delta.full
                    ),
                    &live.report(),
                    &fresh,
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
