//! The lint cache (issue 10): a cached run reports exactly what a run without the cache reports,
//! on every rule's fixture and on a generated tree under random edits (proptest); an unchanged
//! tree is replayed from stamps alone; an edit re-checks the changed files and exactly the files
//! whose chains read their ids; a damaged, foreign or concurrently written cache is survived.
#![allow(
    clippy::disallowed_methods,
    reason = "the test writes trees and caches to temp dirs and runs the binary"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{assert_same_reports, copy_tree, every_rule, files_under, fixture_dirs, loaded, opts};

use proptest::prelude::*;
use ryechain::analysis::lazy::file_chain_ids;
use ryechain::analysis::{Checks, Host, LintReport, lint};
use ryechain::db::Settings;
use ryechain::lint_cache::{self, CacheKey, CachedLint, How};
use ryechain::load::{SpaceSpec, load};
use ryechain::model::SpaceSet;
use ryechain::resolve::{tool_files, tool_id};
use ryechain::rules::rules;
use ryechain::system::os::OsSystem;
use ryechain::system::{FileStamp, KnownDir, MetDir, Settled, SettledRecords};
use ryechain_synth::{GenOptions, generate};

/// A lint without the cache.
fn cold(specs: &[SpaceSpec], settings: &Settings, base: &Path) -> LintReport {
    lint(&loaded(specs, settings).snapshot(), &opts(base), &|_| {})
}

/// A lint without the cache that shows what `shown` asks for (`lint --space`).
fn cold_scoped(
    specs: &[SpaceSpec],
    settings: &Settings,
    base: &Path,
    shown: SpaceSet,
) -> LintReport {
    let host = loaded(specs, settings);
    let a = host.analysis();
    let mut parts = a.lint_parts(&opts(base), &|_| {}, false, Checks::OneShot);
    let hidden = a.hide_unused(&mut parts, shown);
    let mut report = parts.into_report();
    report.summary.hidden = hidden.count;
    report.summary.hidden_spaces = hidden.spaces;
    report
}

/// A lint through the cache file `cache`.
fn cached(
    specs: &[SpaceSpec],
    settings: &Settings,
    base: &Path,
    cache: &Path,
) -> (LintReport, How) {
    cached_scoped(specs, settings, base, cache, SpaceSet::ALL)
}

/// [`cached`], showing what `shown` asks for.
fn cached_scoped(
    specs: &[SpaceSpec],
    settings: &Settings,
    base: &Path,
    cache: &Path,
    shown: SpaceSet,
) -> (LintReport, How) {
    let o = opts(base);
    let run = CachedLint {
        sys: &OsSystem,
        specs,
        settings: settings.clone(),
        opts: &o,
        key: CacheKey::new(None, settings, specs, Some(base)),
        path: cache.to_path_buf(),
        shown,
    };
    let out = lint_cache::lint(&run, &|a| a.lint_parts(&o, &|_| {}, true, Checks::OneShot));
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    (out.report, out.how)
}

fn assert_same(what: &str, a: &LintReport, b: &LintReport) {
    assert_same_reports(what, ("cached", a), ("cold", b));
}

fn append(path: &Path, text: &str) {
    let mut s = std::fs::read(path).unwrap();
    s.extend_from_slice(text.as_bytes());
    std::fs::write(path, s).unwrap();
}

/// Every rule's fixture (each fires its rule, beside near misses): the cached run, its replay,
/// and the runs after an edit and a removal of each of its files report what a cold run does;
/// together the fixtures fire every rule.
#[test]
fn every_rule_fixture_is_reported_identically_through_the_cache() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let settings = every_rule();
    let mut fired: BTreeSet<String> = BTreeSet::new();
    for name in &fixture_dirs(&root) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap().join(name);
        copy_tree(&root.join(name), &dir);
        let specs = ryechain::testing::fixture_spaces(&dir);
        let cache = tmp.path().join("cache.bin");
        let base = dir.clone();

        let first = cold(&specs, &settings, &base);
        fired.extend(first.findings.iter().map(|f| f.rule.to_string()));
        let (r, how) = cached(&specs, &settings, &base, &cache);
        assert!(matches!(how, How::Full(_)), "{name}: {how}");
        assert_same(&format!("{name}: first cached run"), &r, &first);
        let (r, how) = cached(&specs, &settings, &base, &cache);
        assert!(matches!(how, How::Reused { .. }), "{name}: {how}");
        assert_same(&format!("{name}: replay"), &r, &first);

        // Edit each file in turn (a comment line: signed files stop matching their hash), then
        // remove it, comparing after each step.
        for (i, file) in files_under(&dir).iter().enumerate() {
            let rel = file.strip_prefix(&dir).unwrap().display().to_string();
            append(file, &format!("\n# edit {i}\n"));
            let (r, how) = cached(&specs, &settings, &base, &cache);
            assert_same(
                &format!("{name}: after editing {rel} ({how})"),
                &r,
                &cold(&specs, &settings, &base),
            );
            std::fs::remove_file(file).unwrap();
            let (r, how) = cached(&specs, &settings, &base, &cache);
            assert_same(
                &format!("{name}: after removing {rel} ({how})"),
                &r,
                &cold(&specs, &settings, &base),
            );
        }
    }
    let all: BTreeSet<String> = rules().rules.iter().map(|r| r.id.to_string()).collect();
    let missing: Vec<_> = all.difference(&fired).collect();
    assert!(missing.is_empty(), "rules no fixture fired: {missing:?}");
}

/// A generated tree written to a temp dir.
struct Tree {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    specs: Vec<SpaceSpec>,
    cache: PathBuf,
}

fn generated(tools: usize, seed: u64) -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("tree");
    ryechain_synth::write_tree(&dir, &generate(&GenOptions { tools, seed })).unwrap();
    let specs = ryechain::testing::generated_spaces(&dir);
    let cache = tmp.path().join("cache.bin");
    Tree {
        _tmp: tmp,
        dir,
        specs,
        cache,
    }
}

/// Tool files of the project and user spaces, relative to the tree (extractors left out).
fn item_files(dir: &Path) -> Vec<PathBuf> {
    ["project/.ai/tools", "user/.ai/tools"]
        .iter()
        .flat_map(|d| files_under(&dir.join(d)))
        .filter(|p| !p.to_string_lossy().contains("/extractors/"))
        .filter(|p| p.extension().is_some_and(|e| e == "py" || e == "yaml"))
        .collect()
}

/// Tools whose findings read `id` (their chains name it, or they carry it), from a cold database.
fn readers_of(specs: &[SpaceSpec], id: &str) -> usize {
    let outcome = load(&OsSystem, specs);
    let mut host = Host::new();
    let mut change = outcome.change;
    change.settings = Some(Settings::default());
    host.apply(change);
    let db = host.snapshot();
    tool_files(&db)
        .iter()
        .copied()
        .filter(|&f| {
            tool_id(&db, f).as_deref() == Some(id)
                || file_chain_ids(&db, f).ids.iter().any(|d| d == id)
        })
        .count()
}

/// Edits re-check exactly the changed files and the tools that read their ids, and the reports
/// stay those of a cold run.
#[test]
fn an_edit_rechecks_the_changed_file_and_what_reads_its_id() {
    let t = generated(300, 7);
    let settings = Settings::default();
    let base = t.dir.clone();
    let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
    assert!(matches!(how, How::Full(_)), "{how}");
    assert_same("first", &r, &cold(&t.specs, &settings, &base));

    // A leaf's body: only the leaf (nothing names a leaf).
    let leaf = item_files(&t.dir)
        .into_iter()
        .find(|p| {
            let id = p
                .strip_prefix(t.dir.join("project/.ai/tools"))
                .ok()
                .map(|r| r.with_extension("").display().to_string());
            p.extension().is_some_and(|e| e == "py")
                && id.is_some_and(|id| readers_of(&t.specs, &id) == 1)
        })
        .expect("a project leaf tool");
    append(&leaf, "\nx = 1\n");
    let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
    // (Files written less than two seconds before a run are read again and hashed: `reread`.)
    assert!(
        matches!(
            how,
            How::Partial {
                rechecked: 1,
                changed: 1,
                ..
            }
        ),
        "{how}"
    );
    assert_same("leaf body", &r, &cold(&t.specs, &settings, &base));

    // A runtime: it and every tool that reads its id.
    let tools_dir = t.dir.join("project/.ai/tools");
    let id_of_runtime = |p: &Path| {
        p.strip_prefix(&tools_dir)
            .unwrap()
            .with_extension("")
            .display()
            .to_string()
    };
    let (runtime, readers) = files_under(&tools_dir)
        .into_iter()
        .filter(|p| {
            p.to_string_lossy().contains("/runtimes/") && p.extension().is_some_and(|e| e == "yaml")
        })
        .map(|p| {
            let n = readers_of(&t.specs, &id_of_runtime(&p));
            (p, n)
        })
        .max_by_key(|(_, n)| *n)
        .expect("a project runtime");
    let rid = id_of_runtime(&runtime);
    assert!(readers > 1, "{rid} is read by {readers} tools");
    // The runtime may be reached through symlinks too: each is another changed file.
    append(&runtime, "\n# runtime edit\n");
    let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
    match how {
        How::Partial {
            rechecked, changed, ..
        } => {
            assert!(changed >= 1);
            assert_eq!(rechecked, readers + changed - 1, "{how}");
        }
        other => panic!("expected a partial run, got {other}"),
    }
    assert_same("runtime edit", &r, &cold(&t.specs, &settings, &base));

    // Nothing changed since: replayed (files written within the racy window are read again).
    let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
    assert!(matches!(how, How::Reused { .. }), "{how}");
    assert_same("replay", &r, &cold(&t.specs, &settings, &base));

    // A config change moves everything: a full run.
    let cfg = t.dir.join("project/.ai/config/ryechain.yaml");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    std::fs::write(&cfg, "lint:\n  ignore: [invalid-version]\n").unwrap();
    let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
    assert!(matches!(how, How::Full(_)), "{how}");
    assert_same("config", &r, &cold(&t.specs, &settings, &base));
}

/// A tool added whose chain stops at the length limit before the cycle it runs into: the cycle's
/// finding (which counts and names what runs into it) must change, so the cache cannot keep it.
#[test]
fn a_tool_added_in_front_of_a_cycle_beyond_the_chain_limit_moves_its_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("tree");
    let tool = |id: &str, exec: &str| {
        let p = dir.join(format!("project/.ai/tools/loop/{id}.py"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let text = format!(
            "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"loop/{exec}\"\n"
        );
        std::fs::write(p, text).unwrap();
    };
    // d <-> e, c -> d, b -> c; chains of at most three elements.
    for (id, exec) in [("d", "e"), ("e", "d"), ("c", "d"), ("b", "c")] {
        tool(id, exec);
    }
    std::fs::create_dir_all(dir.join("user/.ai")).unwrap();
    std::fs::create_dir_all(dir.join("system/.ai")).unwrap();
    let cfg = dir.join("project/.ai/config/ryechain.yaml");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    std::fs::write(&cfg, "chain:\n  max_depth: 3\n").unwrap();
    let specs = ryechain::testing::generated_spaces(&dir);
    let cache = tmp.path().join("cache.bin");
    let settings = Settings::default();
    let base = dir.clone();
    let (r, _) = cached(&specs, &settings, &base, &cache);
    assert_same("initial", &r, &cold(&specs, &settings, &base));
    // a -> b: a's chain (a, b, c) stops at the limit; in the graph it runs into the cycle.
    tool("a", "b");
    let (r, how) = cached(&specs, &settings, &base, &cache);
    let fresh = cold(&specs, &settings, &base);
    let cycle = |r: &LintReport| {
        r.findings
            .iter()
            .filter(|f| &*f.rule == "executor-cycle")
            .map(|f| (f.message.clone(), f.notes.len()))
            .collect::<Vec<_>>()
    };
    assert_eq!(cycle(&fresh).len(), 1, "{:?}", fresh.findings);
    assert_eq!(cycle(&r), cycle(&fresh), "{how}");
    assert_same(&format!("a added ({how})"), &r, &fresh);
}

/// One random change to a generated tree.
#[derive(Clone, Debug)]
enum Op {
    Body(usize),
    Executor(usize, usize),
    Typo(usize, usize),
    Remove(usize),
    Copy(usize),
    Shadow(usize),
    Touch(usize),
    Config(u8),
    /// A suppression comment on a file's executor line (`SUPPRESS`).
    Suppress(usize, usize),
}

/// The rules a suppression comment may name: a chain-edge rule, the graph-wide one, a chain
/// rule, `unused-suppression` itself and a misspelt id.
const SUPPRESS: [&str; 5] = [
    "missing-executor",
    "executor-cycle",
    "chain-too-deep",
    "unused-suppression",
    "mising-executor",
];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<usize>().prop_map(Op::Body),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Executor(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Typo(a, b)),
        any::<usize>().prop_map(Op::Remove),
        any::<usize>().prop_map(Op::Copy),
        any::<usize>().prop_map(Op::Shadow),
        any::<usize>().prop_map(Op::Touch),
        (0..4u8).prop_map(Op::Config),
        (any::<usize>(), 0..SUPPRESS.len()).prop_map(|(a, r)| Op::Suppress(a, r)),
    ]
}

/// The id of a tool file (path under `tools/` without its extension).
fn id_of(dir: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(dir).unwrap().display().to_string();
    let rel = rel
        .split_once(".ai/tools/")
        .map_or(rel.clone(), |(_, r)| r.to_owned());
    rel.rsplit_once('.')
        .map_or(rel.clone(), |(id, _)| id.to_owned())
}

/// Point `file`'s executor at `target` (a Python or YAML header line).
fn set_executor(file: &Path, target: &str) {
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("__executor_id__") {
                format!("__executor_id__ = \"{target}\"")
            } else if l.starts_with("executor_id:") {
                format!("executor_id: {target}")
            } else {
                l.to_owned()
            }
        })
        .collect();
    std::fs::write(file, out.join("\n") + "\n").unwrap();
}

fn apply(dir: &Path, op: &Op, step: usize) {
    let files = item_files(dir);
    if files.is_empty() {
        return;
    }
    let pick = |i: usize| &files[i % files.len()];
    match op {
        Op::Body(i) => append(pick(*i), &format!("\n# step {step}\n")),
        Op::Executor(i, j) => set_executor(pick(*i), &id_of(dir, pick(*j))),
        Op::Typo(i, j) => {
            // A near miss of an existing id: a missing executor with suggestions.
            let mut id = id_of(dir, pick(*j));
            id.push('x');
            set_executor(pick(*i), &id);
        }
        Op::Remove(i) => std::fs::remove_file(pick(*i)).unwrap(),
        Op::Copy(i) => {
            let from = pick(*i);
            let name = format!(
                "copy_{step}.{}",
                from.extension().unwrap_or_default().to_string_lossy()
            );
            std::fs::copy(from, from.with_file_name(name)).unwrap();
        }
        Op::Shadow(i) => {
            // The same id in the other space (project shadows user).
            let from = pick(*i);
            let rel = from.strip_prefix(dir).unwrap().display().to_string();
            let to = if let Some(r) = rel.strip_prefix("project/") {
                dir.join("user").join(r)
            } else {
                dir.join("project").join(rel.trim_start_matches("user/"))
            };
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(from, to).unwrap();
        }
        Op::Touch(i) => {
            let bytes = std::fs::read(pick(*i)).unwrap();
            std::fs::write(pick(*i), bytes).unwrap();
        }
        Op::Suppress(i, r) => {
            let file = pick(*i);
            let Ok(text) = std::fs::read_to_string(file) else {
                return;
            };
            let comment = format!("  # ryechain: ignore[{}]", SUPPRESS[*r]);
            let out: Vec<String> = text
                .lines()
                .map(|l| {
                    if l.starts_with("__executor_id__") || l.starts_with("executor_id:") {
                        format!("{l}{comment}")
                    } else {
                        l.to_owned()
                    }
                })
                .collect();
            std::fs::write(file, out.join("\n") + "\n").unwrap();
        }
        Op::Config(which) => {
            let cfg = dir.join("project/.ai/config/ryechain.yaml");
            std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
            let text = match which {
                0 => "lint:\n  ignore: [invalid-version]\n",
                // Tool, runtime, primitive: longer chains and cycles stop at the limit.
                1 => "chain:\n  max_depth: 3\n",
                2 => {
                    "lint:\n  per-file-ignores:\n    \"*.py\": [missing-executor]\n    \".ai/tools/**/*.yaml\": [chain]\n"
                }
                _ => "lint: {}\n",
            };
            std::fs::write(cfg, text).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    /// Incremental equals from scratch: after any sequence of edits, the cached report is the
    /// cold one.
    #[test]
    fn cached_lint_equals_cold_lint_after_random_edits(
        seed in 0u64..1000,
        ops in proptest::collection::vec(op(), 1..6),
    ) {
        let t = generated(40, seed);
        let settings = Settings::default();
        let base = t.dir.clone();
        let (r, _) = cached(&t.specs, &settings, &base, &t.cache);
        assert_same("initial", &r, &cold(&t.specs, &settings, &base));
        // The scoped report of the same cache (issue 35 item 10) is the scoped cold one.
        let project = SpaceSet::PROJECT;
        let (r, _) = cached_scoped(&t.specs, &settings, &base, &t.cache, project);
        assert_same("initial, project scope", &r, &cold_scoped(&t.specs, &settings, &base, project));
        for (step, op) in ops.iter().enumerate() {
            apply(&t.dir, op, step);
            let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
            assert_same(&format!("after {op:?} ({how})"), &r, &cold(&t.specs, &settings, &base));
            let (r, how) = cached_scoped(&t.specs, &settings, &base, &t.cache, project);
            let c = cold_scoped(&t.specs, &settings, &base, project);
            assert_same(&format!("after {op:?} ({how}), project scope"), &r, &c);
        }
    }
}

// The binary: flags, the cache directory, damaged caches, concurrent runs.

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ryechain")
}

/// `ryechain lint` of the generated tree at `dir`, JSON, with the cache in `cache_dir`.
fn lint_cmd(dir: &Path, cache_dir: &Path) -> Command {
    let mut c = Command::new(bin());
    c.args(["lint", "project", "--user-space", "user"])
        .args([
            "--system-space",
            "gen=system",
            "--format",
            "json",
            "--no-progress",
        ])
        .current_dir(dir)
        .env("RYECHAIN_CACHE_DIR", cache_dir);
    c
}

fn run_lint(dir: &Path, cache_dir: &Path, extra: &[&str]) -> (String, String) {
    let out = lint_cmd(dir, cache_dir)
        .args(extra)
        .env("RYECHAIN_CACHE_REPORT", "1")
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn the_binary_replays_from_stamps_and_no_cache_bypasses_it() {
    let t = generated(120, 3);
    let caches = t._tmp.path().join("caches");
    let (cold_out, _) = run_lint(&t.dir, &caches, &["--no-cache"]);
    assert!(cache_files(&caches).is_empty(), "--no-cache wrote a cache");
    // Past the racy window of the files just written: the replay reads no file.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (first, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: full run"), "{err}");
    assert_eq!(first, cold_out);
    assert_eq!(cache_files(&caches).len(), 1);
    let (again, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: reused (0 files re-read)"), "{err}");
    assert_eq!(again, cold_out);
    // Every walked file was settled by its stamp alone (no census entry, no lookup by path).
    let items = item_files(&t.dir).len();
    let all = settled_files(&err);
    assert!(all >= items, "{items} items, {err}");
    // A file rewritten with the same bytes is read and found unchanged; its new stamp is not
    // settled while it is racy, then it is again.
    let f = &item_files(&t.dir)[0];
    std::fs::write(f, std::fs::read(f).unwrap()).unwrap();
    let (again, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: reused (1 files re-read)"), "{err}");
    assert_eq!(settled_files(&err), all - 1, "{err}");
    assert_eq!(again, cold_out);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (again, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: reused (1 files re-read)"), "{err}");
    let (again2, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: reused (0 files re-read)"), "{err}");
    assert_eq!(settled_files(&err), all, "{err}");
    assert_eq!((again, again2), (cold_out.clone(), cold_out));
}

#[test]
fn settled_records_that_do_not_match_their_entries_make_a_full_run() {
    use lint_cache::store;
    use ryechain::load::CensusDir;
    let t = generated(40, 11);
    let settings = Settings::default();
    let base = t.dir.clone();
    // A hard link: two names with one stamp, each settled by its own record.
    let orig = item_files(&t.dir)[0].clone();
    let link_name = format!("linked_{}", orig.file_name().unwrap().to_string_lossy());
    std::fs::hard_link(&orig, orig.with_file_name(&link_name)).unwrap();
    let orig_name = orig.file_name().unwrap().to_string_lossy().into_owned();
    // Past the racy window: the first cached run settles every file.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let cold_report = cold(&t.specs, &settings, &base);
    assert!(matches!(
        cached(&t.specs, &settings, &base, &t.cache).1,
        How::Full(_)
    ));
    let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
    assert_eq!(how, How::Reused { reread: 0 });
    assert_same("replayed", &r, &cold_report);
    let data = || match store::read(&t.cache) {
        store::Read::Hit(p) => p.data().unwrap(),
        other => panic!("{other:?}"),
    };
    let name_index =
        |d: &CensusDir, name: &str| d.names.split_terminator('\0').position(|n| n == name);
    let tamper = |what: &str, edit: &dyn Fn(&mut CensusDir) -> bool| {
        let mut d = data();
        assert!(d.dirs.iter_mut().any(edit), "{what}: nothing to edit");
        store::write(&t.cache, &d).unwrap();
        let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
        assert_eq!(
            how,
            How::Full("the cache's settled files do not match its entries".to_owned()),
            "{what}"
        );
        assert_same(what, &r, &cold_report);
        // The full run wrote a cache that replays again.
        let again = cached(&t.specs, &settings, &base, &t.cache).1;
        assert_eq!(again, How::Reused { reread: 0 }, "{what}");
    };
    let settled = |d: &CensusDir| -> Vec<usize> {
        (0..d.settled.len())
            .filter(|&i| d.settled[i] != Settled::NONE)
            .collect()
    };
    tamper("two files' tokens swapped", &|d| {
        let ix = settled(d);
        // (Not the hard link's directory if its two names come first: their stamps are one.)
        if ix.len() < 2 || d.settled[ix[0]].fingerprint == d.settled[ix[1]].fingerprint {
            return false;
        }
        let t = d.settled[ix[0]].token;
        d.settled[ix[0]].token = d.settled[ix[1]].token;
        d.settled[ix[1]].token = t;
        true
    });
    tamper("a token past the entries", &|d| {
        let Some(&i) = settled(d).first() else {
            return false;
        };
        d.settled[i].token = u32::MAX - 1;
        true
    });
    tamper("two names settled as one entry", &|d| {
        let (Some(a), Some(b)) = (name_index(d, &orig_name), name_index(d, &link_name)) else {
            return false;
        };
        assert_eq!(d.settled[a].fingerprint, d.settled[b].fingerprint);
        d.settled[b].token = d.settled[a].token;
        true
    });
}

/// The `K` of `cache: …; N of M directories not read again, K files settled by their stamps`.
fn settled_files(report: &str) -> usize {
    let (head, _) = report
        .split_once(" files settled by their stamps")
        .unwrap_or_else(|| panic!("no settled count in {report:?}"));
    head.rsplit(' ').next().unwrap().parse().unwrap()
}

/// The `N of M` of `cache: …; N of M directories not read again`.
fn dirs_on_trust(report: &str) -> (usize, usize) {
    let tail = report
        .split("; ")
        .nth(1)
        .unwrap_or_else(|| panic!("no directory count in {report:?}"));
    let mut words = tail.split_whitespace();
    let n = words.next().unwrap().parse().unwrap();
    assert_eq!(words.next(), Some("of"), "{report}");
    let m = words.next().unwrap().parse().unwrap();
    (n, m)
}

#[test]
fn directories_taken_on_trust_still_show_added_removed_and_replaced_entries() {
    // The census does not read a directory whose stamp matches the cache's (older than the
    // racy window); each edit below changes one such directory, and each cached run must equal
    // a cold one.
    let t = generated(120, 5);
    let caches = t._tmp.path().join("caches");
    let tools = t.dir.join("project/.ai/tools");
    std::fs::create_dir_all(tools.join("empty/deeper")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (first, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: full run"), "{err}");
    let (again, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: reused (0 files re-read)"), "{err}");
    assert_eq!(again, first);
    let (trusted, of) = dirs_on_trust(&err);
    assert!(of > 10 && trusted == of, "{err}");

    let check = |what: &str| {
        let (cold, _) = run_lint(&t.dir, &caches, &["--no-cache"]);
        let (cached, err) = run_lint(&t.dir, &caches, &[]);
        assert_eq!(cached, cold, "{what}: {err}");
        let (trusted, of) = dirs_on_trust(&err);
        assert!(
            trusted < of,
            "{what}: a changed directory was taken on trust: {err}"
        );
        cold
    };
    // A tool added beside others: a new finding-free file, then one naming a missing executor.
    let some = item_files(&t.dir)
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "py"))
        .unwrap();
    let dir = some.parent().unwrap().to_path_buf();
    std::fs::write(
        dir.join("added_on_trust.py"),
        "__executor_id__ = \"no/such/runtime\"\n",
    )
    .unwrap();
    let out = check("a file added");
    assert!(out.contains("added_on_trust"), "{out}");
    // A file removed.
    std::fs::remove_file(&some).unwrap();
    check("a file removed");
    // A tool in a directory that was empty (two levels: `empty` itself is unchanged).
    std::fs::write(
        tools.join("empty/deeper/late.py"),
        "__executor_id__ = \"no/such/runtime\"\n",
    )
    .unwrap();
    let out = check("a file in an empty directory");
    assert!(out.contains("late.py"), "{out}");
    // A file replaced by a directory of the same name holding a tool.
    let other = item_files(&t.dir)
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "yaml"))
        .unwrap();
    std::fs::remove_file(&other).unwrap();
    std::fs::create_dir(&other).unwrap();
    std::fs::write(
        other.join("inner.py"),
        "__executor_id__ = \"no/such/runtime\"\n",
    )
    .unwrap();
    let out = check("a file replaced by a directory");
    assert!(out.contains("inner.py"), "{out}");
}

#[test]
fn a_damaged_or_foreign_cache_is_discarded_with_a_warning_and_rebuilt() {
    let t = generated(60, 5);
    let caches = t._tmp.path().join("caches");
    let (cold_out, _) = run_lint(&t.dir, &caches, &["--no-cache"]);
    run_lint(&t.dir, &caches, &[]);
    let file = cache_files(&caches).pop().expect("a cache file");
    let good = std::fs::read(&file).unwrap();
    // The header (magic 16, format 4, the version's length 2, the version), the head's length.
    let version_len = usize::from(u16::from_le_bytes([good[20], good[21]]));
    let at = 22 + version_len;
    let head_len = u64::from_le_bytes(good[at..at + 8].try_into().unwrap());
    let body_start = at + 8 + usize::try_from(head_len).unwrap();
    assert!(body_start < good.len() - 40, "a body after the head");
    let damages: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() / 2].to_vec(), "cut short"),
        ("empty", Vec::new(), "not a ryechain lint cache"),
        (
            "foreign",
            b"PK\x03\x04 some zip file".to_vec(),
            "not a ryechain lint cache",
        ),
        (
            "flipped byte",
            {
                let mut b = good.clone();
                let mid = b.len() / 2;
                b[mid] ^= 0x55;
                b
            },
            "checksum",
        ),
        // The head (read first, for the census; the findings end it) is under its checksum.
        (
            "flipped byte in the head",
            {
                let mut b = good.clone();
                b[48] ^= 0x01;
                b
            },
            "checksum",
        ),
        (
            "flipped byte at the head's end",
            {
                let mut b = good.clone();
                b[body_start - 1] ^= 0x01;
                b
            },
            "checksum",
        ),
        (
            "other version",
            {
                // The version string follows the magic (16 bytes), the format (4) and its length (2).
                let mut b = good.clone();
                b[22] = b'9';
                b
            },
            "written by ryechain 9",
        ),
    ];
    for (what, bytes, says) in damages {
        std::fs::write(&file, &bytes).unwrap();
        let (out, err) = run_lint(&t.dir, &caches, &[]);
        assert!(
            err.contains("discarding the lint cache") && err.contains(says),
            "{what}: {err}"
        );
        assert!(err.contains("cache: full run"), "{what}: {err}");
        assert_eq!(out, cold_out, "{what}");
        // Rebuilt: the next run replays it.
        let (out, err) = run_lint(&t.dir, &caches, &[]);
        assert!(err.contains("cache: reused"), "{what}: {err}");
        assert_eq!(out, cold_out, "{what}");
    }
    // The body (the entries) has a checksum of its own, checked by a run that reads it: the
    // replay of the unchanged tree uses only the head and is right without it; after an edit the
    // run reads the body, finds the damage, and runs in full. (Past the racy window of the files
    // just written, and once settled, so that the replay reads no file and no entry.)
    std::thread::sleep(std::time::Duration::from_millis(2100));
    run_lint(&t.dir, &caches, &[]);
    let (_, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: reused (0 files re-read)"), "{err}");
    let mut flipped = std::fs::read(&file).unwrap();
    let at = flipped.len() - 50;
    flipped[at] ^= 0x01;
    std::fs::write(&file, &flipped).unwrap();
    let (out, err) = run_lint(&t.dir, &caches, &[]);
    assert!(err.contains("cache: reused"), "{err}");
    assert!(!err.contains("discarding"), "{err}");
    assert_eq!(out, cold_out);
    append(&item_files(&t.dir)[0], "\n# an edit\n");
    let (edited_cold, _) = run_lint(&t.dir, &caches, &["--no-cache"]);
    let (out, err) = run_lint(&t.dir, &caches, &[]);
    assert!(
        err.contains("discarding the lint cache") && err.contains("checksum"),
        "{err}"
    );
    assert!(err.contains("cache: full run"), "{err}");
    assert_eq!(out, edited_cold);
}

/// Lockfiles are ordinary tracked inputs: an edit to a file of a lockfile's chain re-checks the
/// lockfile (its `stale-lockfile` finding comes and goes as in a cold lint), an unrelated edit
/// does not, and an edited lockfile is re-checked alone; none of it is a full run.
#[test]
fn lockfiles_are_followed_file_by_file() {
    let t = generated(40, 11);
    let caches = t._tmp.path().join("caches");
    // Lock every project tool whose chain can be locked.
    let mut locked: Vec<(String, PathBuf)> = Vec::new();
    for file in item_files(&t.dir) {
        let rel = file
            .strip_prefix(&t.dir)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let Some(id) = rel
            .strip_prefix("project/.ai/tools/")
            .and_then(|r| r.rsplit_once('.'))
            .map(|(id, _)| id.to_owned())
        else {
            continue;
        };
        let out = Command::new(bin())
            .args(["lock", &id, "project", "--user-space", "user"])
            .args(["--system-space", "gen=system"])
            .current_dir(&t.dir)
            .output()
            .unwrap();
        if out.status.success() {
            locked.push((id, t.dir.join(&rel)));
        }
    }
    assert!(locked.len() >= 2, "the tree has lockable tools: {locked:?}");
    let check = |what: &str, expect: &str| {
        let (cold, _) = run_lint(&t.dir, &caches, &["--no-cache"]);
        let (out, err) = run_lint(&t.dir, &caches, &[]);
        assert!(err.contains(expect), "{what}: {err}");
        assert!(!err.contains("full run"), "{what}: {err}");
        assert_eq!(out, cold, "{what}");
        out
    };
    run_lint(&t.dir, &caches, &[]);
    check("unchanged", "cache: reused");
    let stale = |out: &str, id: &str| {
        out.matches("stale-lockfile").count() > 0 && out.contains(&format!("{id}@"))
    };
    // The root of the first lockfile edited: its lockfile is re-checked and turns stale.
    let (id, file) = &locked[0];
    append(file, "\n# an edit\n");
    let out = check("root edited", "cache: partial");
    assert!(stale(&out, id), "{out}");
    // An unrelated edit keeps that finding without re-checking the lockfile.
    let unrelated = item_files(&t.dir)
        .into_iter()
        .find(|f| !locked.iter().any(|(_, l)| l == f) && f.starts_with(t.dir.join("project")))
        .unwrap();
    append(&unrelated, "\n# unrelated\n");
    let out = check("unrelated edit", "cache: partial");
    assert!(stale(&out, id), "{out}");
    // The lockfile itself rewritten: re-checked alone, fresh again.
    let out = Command::new(bin())
        .args(["lock", id, "project", "--user-space", "user", "--force"])
        .args(["--system-space", "gen=system"])
        .current_dir(&t.dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = check("lockfile rewritten", "cache: partial (1 files re-checked");
    assert!(!stale(&out, id), "{out}");
}

/// A FIFO (or any special file) where the cache file should be is discarded without a read: it
/// used to block `lint` for ever on its open.
#[test]
fn a_fifo_at_the_cache_path_is_discarded_not_waited_on() {
    let t = generated(20, 6);
    let caches = t._tmp.path().join("caches");
    let (cold_out, _) = run_lint(&t.dir, &caches, &["--no-cache"]);
    run_lint(&t.dir, &caches, &[]);
    let file = cache_files(&caches).pop().expect("a cache file");
    std::fs::remove_file(&file).unwrap();
    let made = Command::new("mkfifo").arg(&file).status().unwrap();
    assert!(made.success(), "mkfifo is part of coreutils");
    let mut child = lint_cmd(&t.dir, &caches)
        .env("RYECHAIN_CACHE_REPORT", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A hung lint is killed after a minute, so that this test fails instead of hanging.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("lint hung on a FIFO at the cache path");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("discarding the lint cache") && err.contains("not a regular file"),
        "{err}"
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), cold_out);
}

#[test]
fn concurrent_runs_share_the_cache_safely() {
    let t = generated(200, 9);
    let caches = t._tmp.path().join("caches");
    let (cold_out, _) = run_lint(&t.dir, &caches, &["--no-cache"]);
    for round in 0..2 {
        if round == 1 {
            append(&item_files(&t.dir)[3], "\n# concurrent edit\n");
        }
        let expected = run_lint(&t.dir, &caches, &["--no-cache"]).0;
        if round == 0 {
            assert_eq!(expected, cold_out);
        }
        let children: Vec<_> = (0..4)
            .map(|_| {
                lint_cmd(&t.dir, &caches)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                !String::from_utf8_lossy(&out.stderr).contains("discarding"),
                "a concurrent run saw a half-written cache: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
        }
        // One cache file, whole (no temp files left), replayed by the next run.
        let files = cache_files(&caches);
        assert_eq!(files.len(), 1, "{files:?}");
        let (out, err) = run_lint(&t.dir, &caches, &[]);
        assert!(err.contains("cache: reused"), "{err}");
        assert_eq!(out, expected);
    }
}

/// Special files through the census: a FIFO, a dangling symlink, a directory symlink back to an
/// ancestor (a loop), a symlink out of every space, a non-UTF-8 file and an unreadable
/// directory — the cached runs (first, replay, after an edit) report what a cold run does.
#[test]
fn special_files_are_reported_identically_through_the_cache() {
    let t = generated(30, 11);
    let tools = t.dir.join("project/.ai/tools");
    let odd = tools.join("odd");
    std::fs::create_dir_all(&odd).unwrap();
    let fifo = odd.join("pipe.py");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    assert!(made || !fifo.exists());
    std::os::unix::fs::symlink(odd.join("nowhere.py"), odd.join("dangling.py")).unwrap();
    std::os::unix::fs::symlink(&tools, odd.join("loop")).unwrap();
    let outside = t._tmp.path().join("outside.py");
    std::fs::write(&outside, "__version__ = \"1.0.0\"\n").unwrap();
    std::os::unix::fs::symlink(&outside, odd.join("escape.py")).unwrap();
    std::fs::write(
        odd.join("latin1.py"),
        b"__version__ = \"1.0.0\"  # caf\xe9\n",
    )
    .unwrap();
    let locked = odd.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::write(locked.join("hidden.py"), "x = 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();

    let settings = Settings::default();
    let base = t.dir.clone();
    for step in ["first", "replay"] {
        let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
        assert_same(step, &r, &cold(&t.specs, &settings, &base));
        // The census meets each of them as the cached run did (the loop as a loop, not followed
        // until the kernel refuses a path of 40 links): the replay is no full run.
        if step == "replay" {
            assert!(matches!(how, How::Reused { .. }), "{how:?}");
        }
    }
    std::fs::write(&outside, "__version__ = \"2\"\n").unwrap();
    append(&item_files(&t.dir)[0], "\n# edit\n");
    let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
    assert_same(
        &format!("after edits ({how})"),
        &r,
        &cold(&t.specs, &settings, &base),
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (r, how) = cached(&t.specs, &settings, &base, &t.cache);
    assert_same(
        &format!("after unlocking ({how})"),
        &r,
        &cold(&t.specs, &settings, &base),
    );
}

#[test]
fn the_census_stamps_only_plain_vouched_names_and_lists_a_directory_otherwise() {
    use ryechain::system::System;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().canonicalize().unwrap().join("tools");
    std::fs::create_dir_all(d.join("b")).unwrap();
    std::fs::write(d.join("a.py"), "x = 1\n").unwrap();
    std::fs::write(d.join("b/c.py"), "y = 2\n").unwrap();
    let sorted = |mut v: Vec<(
        ryechain::system::WalkEntry,
        Option<ryechain::system::FileStamp>,
    )>| {
        v.sort_by(|x, y| x.0.path.cmp(&y.0.path));
        v
    };
    let walked = OsSystem.walk_stamped(&d, &|_, _| None);
    let (plain, listed) = (sorted(walked.entries), walked.listings);
    assert_eq!(plain.len(), 2);
    let top = listed.iter().find(|l| l.path == d).unwrap().clone();
    let mut names: Vec<&str> = top.names.split_terminator('\0').collect();
    names.sort_unstable();
    assert_eq!(names, ["a.py", "b"]);
    // Vouched at its stamp: the same entries and stamps, the directory not listed but named
    // by its token; its subdirectory asked about by name under that token.
    let vouched = top.names.clone();
    let asked = std::sync::Mutex::new(Vec::new());
    let vouch = |settled: &'static [Settled]| {
        let (d, stamp, names) = (d.clone(), top.stamp, vouched.clone());
        let packed: &'static [u8] = Box::leak(SettledRecords::pack(settled).into_boxed_slice());
        let asked = &asked;
        move |met: MetDir<'_>, s: &FileStamp| {
            let root = matches!(met, MetDir::Path(p) if p == d);
            if let MetDir::Child { parent, name, .. } = met {
                asked.lock().unwrap().push((parent, name.to_owned()));
            }
            (root && *s == stamp).then_some(KnownDir {
                names: Box::leak(names.clone().into_boxed_str()),
                settled: SettledRecords::new(packed).unwrap(),
                token: 41,
            })
        }
    };
    let trusted = OsSystem.walk_stamped(&d, &vouch(&[]));
    assert_eq!(sorted(trusted.entries), plain);
    assert!(trusted.settled.is_empty());
    assert_eq!(trusted.vouched, [41]);
    assert_eq!(*asked.lock().unwrap(), [(41, "b".to_owned())]);
    let listed = trusted.listings;
    assert!(listed.iter().all(|l| l.path != d));
    // Settled records (one per name, in the names' order): a regular file stamped with its
    // record's fingerprint gives the token, no entry; a record on a directory is ignored (it is
    // walked); a fingerprint that differs, or `Settled::NONE`, gives the entry.
    let a_stamp = plain
        .iter()
        .find(|e| e.0.path.ends_with("a.py"))
        .unwrap()
        .1
        .unwrap();
    let b_stamp = listed.iter().find(|l| l.path == d.join("b")).unwrap().stamp;
    // One record per name, in the listing's own order: `a` for `a.py`, `b` for `b`.
    let order: Vec<String> = vouched.split_terminator('\0').map(str::to_owned).collect();
    let records = |a: Settled, b: Settled| -> &'static [Settled] {
        let v: Vec<Settled> = order
            .iter()
            .map(|n| if n == "a.py" { a } else { b })
            .collect();
        Box::leak(v.into_boxed_slice())
    };
    let record = |token: u32, fingerprint: u128| Settled { token, fingerprint };
    let good = records(
        record(7, a_stamp.fingerprint()),
        record(9, b_stamp.fingerprint()),
    );
    let settled = OsSystem.walk_stamped(&d, &vouch(good));
    assert_eq!(settled.settled, [7]);
    assert_eq!(
        settled.settled_digest,
        Settled::mix(7, a_stamp.fingerprint())
    );
    let rest: Vec<_> = plain
        .iter()
        .filter(|e| !e.0.path.ends_with("a.py"))
        .cloned()
        .collect();
    assert_eq!(sorted(settled.entries), rest);
    for (what, bad) in [
        (
            "another fingerprint",
            records(record(7, a_stamp.fingerprint() ^ 1), Settled::NONE),
        ),
        ("no record", records(Settled::NONE, Settled::NONE)),
        (
            "NONE's token with the right fingerprint",
            records(record(u32::MAX, a_stamp.fingerprint()), Settled::NONE),
        ),
    ] {
        let w = OsSystem.walk_stamped(&d, &vouch(bad));
        assert!(w.settled.is_empty(), "{what}");
        assert_eq!(sorted(w.entries), plain, "{what}");
    }
    // Names that are not plain, or gone: the directory is listed as if nothing were vouched.
    for bad in [
        "../tools\0",
        "a.py\0..\0",
        "b/c.py\0",
        "\0",
        "a.py\0gone.py\0",
    ] {
        let w = OsSystem.walk_stamped(&d, &|met: MetDir<'_>, _: &FileStamp| {
            matches!(met, MetDir::Path(p) if p == d).then_some(KnownDir {
                names: bad,
                settled: SettledRecords::default(),
                token: 0,
            })
        });
        let (entries, listed) = (w.entries, w.listings);
        assert_eq!(sorted(entries), plain, "{bad:?}");
        assert!(w.vouched.is_empty(), "{bad:?}");
        assert_eq!(
            listed.iter().find(|l| l.path == d).unwrap().names,
            top.names,
            "{bad:?}"
        );
    }
}
