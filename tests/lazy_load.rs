//! Lazy single-item loading (`load::ItemLoader`, `analysis::lazy::chain_needs`): for every tool of
//! the example tree and of generated trees, the lazily loaded database gives the same chain view,
//! validation and integrity verdicts as a full load, reads only the probed candidate files, and
//! loads a small bounded number of files.
#![allow(
    clippy::disallowed_methods,
    reason = "the test writes trees to temp dirs and records a real file system's reads"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ryechain::analysis::Host;
use ryechain::analysis::chain_view::chain_of;
use ryechain::analysis::lazy::chain_needs;
use ryechain::analysis::verify::verify_chain;
use ryechain::db::{Change, Db, FileChange, Settings};
use ryechain::exec::facts::Loaded;
use ryechain::load::{BASE_DIRS, ItemLoader, SpaceSource, SpaceSpec, load, load_item};
use ryechain::model::SpaceKind;
use ryechain::resolve::{ChainEnd, chain, extractor_config, resolve_root, tool_files, tool_id};
use ryechain::system::os::OsSystem;
use ryechain::system::{ReadResult, System, WalkEntry};
use ryechain::testing::{generated_spaces, three_spaces};
use ryechain_synth::{GenOptions, generate, write_tree};

/// The real file system, recording every file read and every directory walked.
#[derive(Default)]
struct Recording {
    reads: Mutex<Vec<PathBuf>>,
    walks: Mutex<Vec<PathBuf>>,
}

impl System for Recording {
    fn walk(&self, dir: &Path) -> Vec<WalkEntry> {
        self.walks.lock().unwrap().push(dir.to_path_buf());
        OsSystem.walk(dir)
    }
    fn read(&self, path: &Path, limit: u64) -> ReadResult {
        self.reads.lock().unwrap().push(path.to_path_buf());
        OsSystem.read(path, limit)
    }
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        OsSystem.canonicalize(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        OsSystem.is_dir(path)
    }
    fn is_file(&self, path: &Path) -> bool {
        OsSystem.is_file(path)
    }
    fn env_var(&self, name: &str) -> Option<String> {
        OsSystem.env_var(name)
    }
    fn current_dir(&self) -> std::io::Result<PathBuf> {
        OsSystem.current_dir()
    }
}

fn full_host(specs: &[SpaceSpec], settings: &Settings) -> (Host, usize) {
    let outcome = load(&OsSystem, specs);
    let mut change = outcome.change;
    let files = change.roots.iter().flatten().map(|r| r.files.len()).sum();
    change.settings = Some(settings.clone());
    let mut host = Host::new();
    host.apply(change);
    (host, files)
}

/// Every tool id of the fully loaded workspace (project-resolvable or not), sorted.
fn all_tool_ids(host: &Host) -> BTreeSet<String> {
    let db = host.db();
    tool_files(db)
        .iter()
        .filter_map(|&f| tool_id(db, f))
        .collect()
}

/// Which files of `specs` a lazy load may read: base-load files and candidates of probed ids.
fn allowed_read(specs: &[SpaceSpec], probed: &BTreeSet<String>, exts: &[String], p: &Path) -> bool {
    specs.iter().any(|s| {
        let SpaceSource::Dir(base) = &s.source else {
            return false;
        };
        let ai = base.join(".ai");
        let Ok(rel) = p.strip_prefix(&ai) else {
            return false;
        };
        let rel = rel.to_str().unwrap();
        BASE_DIRS
            .iter()
            .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
            || ryechain::config::CONFIG_RELS.contains(&rel)
            || probed
                .iter()
                .any(|id| exts.iter().any(|e| rel == format!("tools/{id}{e}")))
    })
}

struct Stats {
    items: usize,
    max_loaded: usize,
    full_files: usize,
}

/// For every tool id of the tree (plus ids that exist nowhere), the lazy load equals the full
/// load (§12.4 dry-run JSON, §4 validation, §10.5 verdicts), and reads only allowed files.
fn lazy_equals_full(specs: &[SpaceSpec], settings: &Settings) -> Stats {
    let (full, full_files) = full_host(specs, settings);
    let fdb = full.snapshot();
    let mut ids = all_tool_ids(&full);
    ids.insert("no/such/tool".to_owned());
    let on_disk = specs
        .iter()
        .filter(|s| matches!(s.source, SpaceSource::Dir(_)))
        .count();
    let mut stats = Stats {
        items: ids.len(),
        max_loaded: 0,
        full_files,
    };
    for id in &ids {
        let sys = Recording::default();
        let (host, loader, _) = load_item(&sys, specs, id, settings.clone());
        let db = host.snapshot();

        let (lazy_view, full_view) = (chain_of(&db, id), chain_of(&fdb, id));
        assert_eq!(lazy_view, full_view, "chain view of {id}");
        assert_eq!(
            ryechain::render::chain::dry_run(&lazy_view),
            ryechain::render::chain::dry_run(&full_view),
            "dry run of {id}"
        );
        assert_eq!(
            verify_chain(&db, id, &[]),
            verify_chain(&fdb, id, &[]),
            "verdicts of {id}"
        );

        // Probed: the chain's ids, the id it stops at and the runtimes a help may name, nothing
        // else.
        let mut expected: BTreeSet<String> = BTreeSet::from([id.clone()]);
        if let Some(root) = &resolve_root(&fdb, id).found {
            let ch = chain(&fdb, root.file);
            expected.extend(ch.ids());
            if let ChainEnd::Missing { executor_id, .. } | ChainEnd::Cycle { executor_id, .. } =
                &ch.end
            {
                expected.insert(executor_id.clone());
            }
            // A state graph: the tools its actions name (`graph-unresolved-action` resolves them).
            expected.extend(ryechain::rules::graph_checks::graph_action_ids(
                ryechain::resolve::metadata(&fdb, root.file),
            ));
            // A chain that ends at a file that is no primitive: the runtimes the
            // `unknown-primitive` help may name (its rule's list for the file's extension).
            if matches!(ch.end, ChainEnd::Terminal) {
                for r in ryechain::rules::rules().with_check(|c| {
                    matches!(c, ryechain::rules::Check::TerminalNotPrimitive { .. })
                }) {
                    expected.extend(
                        ryechain::rules::checks::runtime_candidates(&fdb, root.file, &r.check)
                            .iter()
                            .cloned(),
                    );
                }
            }
        }
        assert_eq!(loader.probed_items(), &expected, "probed ids of {id}");

        // Reads: only base-load files and candidate files of probed ids.
        let exts: Vec<String> = extractor_config(&db)
            .extensions
            .iter()
            .map(|e| e.to_string())
            .collect();
        for p in sys.reads.lock().unwrap().iter() {
            assert!(
                allowed_read(specs, loader.probed_items(), &exts, p),
                "{id}: read {}",
                p.display()
            );
        }
        for d in sys.walks.lock().unwrap().iter() {
            assert!(
                BASE_DIRS.iter().any(|b| d.ends_with(b)),
                "{id}: walked {}",
                d.display()
            );
        }

        // Bounded: base load plus one file per (probed id, space, extension) at most.
        let (_, base) = ItemLoader::new(&OsSystem, specs);
        let base_files: usize = base
            .change
            .roots
            .iter()
            .flatten()
            .map(|r| r.files.len())
            .sum();
        assert!(
            loader.loaded_files() <= base_files + expected.len() * on_disk * exts.len(),
            "{id}: {} files loaded",
            loader.loaded_files()
        );
        stats.max_loaded = stats.max_loaded.max(loader.loaded_files());
    }
    stats
}

#[test]
fn example_tree_lazy_chains_equal_full_chains() {
    let specs = ryechain::testing::example_spaces();
    let stats = lazy_equals_full(&specs, &Settings::default());
    assert!(stats.items > 20, "{} items", stats.items);
}

#[test]
fn generated_trees_lazy_chains_equal_full_chains() {
    for seed in [1, 7, 23] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let tree = generate(&GenOptions { tools: 300, seed });
        write_tree(&dir, &tree).unwrap();
        // The tree plants cycles, missing executors, too-deep chains, shadowing and symlinks.
        let kinds: BTreeSet<&str> = tree
            .manifest
            .planted
            .iter()
            .map(|p| p.rule.as_str())
            .collect();
        for k in [
            "executor-cycle",
            "missing-executor",
            "chain-too-deep",
            "upward-space-dependency",
        ] {
            assert!(kinds.contains(k), "seed {seed} plants {k}: {kinds:?}");
        }
        let specs = generated_spaces(&dir);
        let stats = lazy_equals_full(&specs, &Settings::default());
        assert!(stats.items >= 300, "seed {seed}: {} items", stats.items);
        // Far fewer files than the whole tree (base load ≈ extractors; chains ≤ 15 elements).
        assert!(
            stats.max_loaded * 5 < stats.full_files,
            "seed {seed}: {} of {} files",
            stats.max_loaded,
            stats.full_files
        );
        // A smaller chain limit cuts chains (and probes) short the same way in both loads.
        let short = Settings {
            max_depth: Some(3),
            ..Settings::default()
        };
        lazy_equals_full(&specs, &short);
    }
}

#[test]
fn chain_needs_asks_for_the_root_first_then_for_the_chain() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let tree = generate(&GenOptions { tools: 50, seed: 3 });
    write_tree(&dir, &tree).unwrap();
    let specs = generated_spaces(&dir);
    let (full, _) = full_host(&specs, &Settings::default());
    let id = all_tool_ids(&full)
        .into_iter()
        .find(|id| {
            resolve_root(full.db(), id)
                .found
                .as_ref()
                .is_some_and(|c| c.space.kind() == SpaceKind::Project)
        })
        .unwrap();
    // Everything loaded: nothing to ask.
    assert!(chain_needs(full.db(), &id, &Loaded::All).is_empty());
    // Nothing probed: the root id alone; hostile ids never.
    let (loader, outcome) = ItemLoader::new(&OsSystem, &specs);
    let mut host = Host::new();
    host.apply(outcome.change);
    let none = Loaded::Some(BTreeSet::new());
    assert_eq!(chain_needs(host.db(), &id, &none), vec![id.clone()]);
    assert!(chain_needs(host.db(), "../etc/passwd", &none).is_empty());
    // Root probed: the next element (not loaded yet, so the chain stops there as missing).
    let mut loader = loader;
    let change = loader.probe_items(host.analysis(), std::slice::from_ref(&id));
    assert!(!change.files.is_empty());
    host.apply(change);
    let loaded = Loaded::Some(loader.probed_items().clone());
    let next = chain_needs(host.db(), &id, &loaded);
    let full_chain = chain(
        full.db(),
        resolve_root(full.db(), &id).found.as_ref().unwrap().file,
    );
    assert_eq!(next, vec![full_chain.ids()[1].clone()]);
}

#[test]
fn probes_refuse_hostile_ids_and_rels_and_load_space_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".ai/tools/a")).unwrap();
    std::fs::create_dir_all(project.join(".ai/lockfiles/a")).unwrap();
    std::fs::write(project.join(".ai/tools/a/b.py"), "__executor_id__ = None\n").unwrap();
    std::fs::write(project.join(".ai/lockfiles/a/b@1.0.0.lock.json"), "{}").unwrap();
    std::fs::write(dir.join("secret.py"), "x = 1\n").unwrap();
    let specs = three_spaces(
        project.clone(),
        dir.join("user"),
        SpaceSource::Embedded,
        "ryechain",
    );
    let sys = Recording::default();
    let (mut loader, outcome) = ItemLoader::new(&sys, &specs);
    assert_eq!(
        outcome.notices.len(),
        1,
        "no user space: {:?}",
        outcome.notices
    );
    let mut host = Host::new();
    host.apply(outcome.change);

    let hostile = ["../../secret".to_owned(), "/etc/passwd".to_owned()];
    let change = loader.probe_items(host.analysis(), &hostile);
    assert!(change.files.is_empty());
    assert!(hostile.iter().all(|h| loader.probed_items().contains(h)));
    let change = loader.probe_space_files(&["../secret.py".to_owned()]);
    assert!(change.files.is_empty());
    assert!(sys.reads.lock().unwrap().is_empty());

    let rel = "lockfiles/a/b@1.0.0.lock.json".to_owned();
    let change = loader.probe_space_files(std::slice::from_ref(&rel));
    let paths = written(&change);
    assert_eq!(paths, vec![project.join(".ai").join(&rel)]);
    assert!(loader.probed_space_files().contains(&rel));
    // Probed once: asking again reads nothing.
    assert!(loader.probe_space_files(&[rel]).files.is_empty());

    let change = loader.probe_items(host.analysis(), &["a/b".to_owned()]);
    assert_eq!(written(&change), vec![project.join(".ai/tools/a/b.py")]);
    host.apply(change);
    let db = host.snapshot();
    assert!(chain_of(&db, "a/b").found);
}

fn written(change: &Change) -> Vec<PathBuf> {
    change
        .files
        .iter()
        .filter_map(|c| match c {
            FileChange::Write(f) => Some(f.path.clone()),
            FileChange::Remove(_) => None,
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn a_fifo_candidate_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".ai/tools/a")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(project.join(".ai/tools/a/b.py"))
        .status()
        .unwrap();
    assert!(status.success());
    let specs = three_spaces(project, dir.join("user"), SpaceSource::Embedded, "ryechain");
    let sys = Recording::default();
    // Would block forever if the FIFO were opened.
    let (host, loader, _) = load_item(&sys, &specs, "a/b", Settings::default());
    assert!(sys.reads.lock().unwrap().is_empty());
    assert!(!chain_of(&host.snapshot(), "a/b").found);
    assert!(loader.probed_items().contains("a/b"));
    let db: &dyn Db = host.db();
    assert!(
        tool_files(db)
            .iter()
            .all(|f| f.space(db).kind() == SpaceKind::System)
    );
}

/// §1.7: the first *regular file* wins, so a dangling symlink is no candidate for the lazy loader
/// (the full load, which walks, records it as an unreadable file for `unreadable-file`).
#[cfg(unix)]
#[test]
fn a_dangling_symlink_candidate_is_not_a_regular_file_1_7() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".ai/tools/a")).unwrap();
    std::os::unix::fs::symlink(dir.join("gone.py"), project.join(".ai/tools/a/b.py")).unwrap();
    std::fs::write(project.join(".ai/tools/a/b.yaml"), "tool_type: python\n").unwrap();
    let specs = three_spaces(
        project.clone(),
        dir.join("user"),
        SpaceSource::Embedded,
        "ryechain",
    );
    let (host, _, _) = load_item(&OsSystem, &specs, "a/b", Settings::default());
    let view = chain_of(&host.snapshot(), "a/b");
    assert!(view.found);
    assert_eq!(
        view.elements[0].path.as_deref(),
        Some(project.join(".ai/tools/a/b.yaml").as_path())
    );
}
