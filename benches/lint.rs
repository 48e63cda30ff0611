//! Benchmarks of the lint engine on generated trees (`ryechain_synth`), written to a temp dir:
//!
//! - `lint_cold`: load + analyse the whole tree, unsigned (integrity family ignored, as
//!   `benches/measure.sh` runs it) and signed (`ryechain_synth::sign`, default rules, integrity on);
//! - `relint_body_edit`: one tool body edited, then the full lint again (warm database);
//! - `revalidate_leaf_edit`: one signed tool's body or header edited (`Host::apply`), then that
//!   file's findings (`analysis::file_findings`), as an editor re-checks after a keystroke;
//! - `revalidate_runtime_edit`: the header of a runtime used by N tools edited, then the findings of
//!   the runtime and of every tool whose chain runs through it (throughput: per file re-checked);
//! - `watch`: the same three edits through `analysis::live::LiveLint`, as `lint --watch` applies a
//!   batch of changes: what to re-check is found, re-checked, and the totals kept; and a tool
//!   added then removed (the ids "did you mean" searches change);
//! - `resolve_chain`: the chain of one tool, loaded lazily from disk as `ryechain chain ITEM` does
//!   (`lazy`), and from a fully analysed database (`warm`).
//!
//! Tree size: `RYECHAIN_BENCH_TOOLS` (default 10000 under `cargo bench`, 1000 when `cargo test`
//! runs each benchmark once; `RYECHAIN_BENCH_TOOLS=100000 cargo bench --bench lint` for the 100k
//! figures, about a quarter of an hour). Threads: `RAYON_NUM_THREADS` (rayon's
//! own variable; default one per core). Every iteration asserts the number of findings it
//! expects — the manifest's planted count for whole lints, a count taken once before timing for
//! the per-file re-checks — so a broken engine cannot post a fast time (CONVENTIONS habit 15).

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ryechain::analysis::chain_view::chain_of;
use ryechain::analysis::live::LiveLint;
use ryechain::analysis::{Host, LintOptions, file_findings, lint};
use ryechain::db::change::FileSpec;
use ryechain::db::{Change, FileChange, FileContents, Settings, SourceFile};
use ryechain::load::{load, load_items};
use ryechain::model::SpaceKind;
use ryechain::resolve::{chain, metadata, tool_files, tool_id};
use ryechain::system::os::OsSystem;
use ryechain_synth::{GenOptions, TempTree, bench_tools, generate, sign};

/// A generated tree on disk and the number of findings its manifest plants.
struct Tree {
    generated: TempTree,
    planted: usize,
    signed: bool,
}

impl Tree {
    fn new(signed: bool) -> Tree {
        let mut tree = generate(&GenOptions {
            tools: bench_tools(),
            seed: 1,
        });
        if signed {
            sign(&mut tree).expect("the throwaway key signs");
        }
        Tree {
            generated: TempTree::write(&tree).expect("the tree is written"),
            planted: tree.manifest.planted.len(),
            signed,
        }
    }

    /// Default rules for a signed tree; an unsigned one ignores the integrity family (one
    /// `unsigned-item` per item otherwise), as `benches/measure.sh` does.
    fn settings(&self) -> Settings {
        if self.signed {
            Settings::default()
        } else {
            Settings {
                ignore: vec!["integrity".to_owned()],
                ..Settings::default()
            }
        }
    }

    fn specs(&self) -> Vec<ryechain::load::SpaceSpec> {
        ryechain::testing::generated_spaces(self.generated.dir())
    }

    /// Load the whole tree and lint it: the host and the number of findings.
    fn cold(&self) -> (Host, usize) {
        let mut change = load(&OsSystem, &self.specs()).change;
        change.settings = Some(self.settings());
        let mut host = Host::new();
        host.apply(change);
        let n = lint(&host.snapshot(), &LintOptions::default(), &|_| {})
            .findings
            .len();
        (host, n)
    }
}

fn lint_cold(c: &mut Criterion, trees: &[&Tree]) {
    let mut group = c.benchmark_group(format!("lint_cold_{}_tools", bench_tools()));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for tree in trees {
        let name = if tree.signed { "signed" } else { "unsigned" };
        group.bench_function(name, |b| {
            b.iter(|| {
                let (_, n) = tree.cold();
                assert_eq!(n, tree.planted);
            })
        });
    }
    group.finish();
}

/// A file's text and where it lives, to write edited versions of it.
struct Target {
    file: SourceFile,
    spec: FileSpec,
    text: String,
}

impl Target {
    fn of(host: &Host, file: SourceFile) -> Target {
        let db = host.db();
        let text = file
            .contents(db)
            .text()
            .expect("a generated file is text")
            .into_owned();
        Target {
            file,
            spec: FileSpec {
                space: file.space(db).clone(),
                path: file.path(db).as_ref().clone(),
                rel: file.rel(db).to_string(),
                contents: FileContents::Text(text.as_str().into()),
                link_origin: None,
            },
            text,
        }
    }

    fn write(&self, host: &mut Host, text: String) {
        host.apply(self.change(text));
    }

    /// The change that writes `text` to the file.
    fn change(&self, text: String) -> Change {
        let mut spec = self.spec.clone();
        spec.contents = FileContents::Text(text.into());
        Change {
            files: vec![FileChange::Write(spec)],
            ..Change::default()
        }
    }

    /// The text with a comment appended (the header is untouched).
    fn body_edit(&self, n: u64) -> String {
        format!("{}\n# edit {n}\n", self.text)
    }

    /// The text with the description in the header changed (Python dunder or YAML key).
    fn header_edit(&self, n: u64) -> String {
        for key in ["__tool_description__ = \"", "\ndescription: \""] {
            if self.text.contains(key) {
                return self.text.replacen(key, &format!("{key}edit {n}: "), 1);
            }
        }
        panic!("{} has no description to edit", self.spec.rel);
    }
}

/// Findings of the given files (selection and severities applied), summed.
fn findings_of(host: &Host, files: &[SourceFile]) -> usize {
    let opts = LintOptions::default();
    files
        .iter()
        .map(|&f| file_findings(host.db(), f, &opts).len())
        .sum()
}

/// The number of findings after an edit: taken once, before timing, and checked to be the clean
/// count plus the `content-hash-mismatch` the edit of a signed file must cause.
fn count_after(host: &mut Host, target: &Target, edited: String, files: &[SourceFile]) -> usize {
    target.write(host, target.text.clone());
    let before = findings_of(host, files);
    target.write(host, edited);
    let opts = LintOptions::default();
    let own = file_findings(host.db(), target.file, &opts);
    assert!(
        own.iter().any(|f| &*f.rule == "content-hash-mismatch"),
        "an edited signed file no longer verifies: {own:?}"
    );
    let after = findings_of(host, files);
    assert_eq!(after, before + 1, "only the edited file's signature breaks");
    target.write(host, target.text.clone());
    after
}

fn revalidate(c: &mut Criterion, tree: &Tree) {
    let (mut host, n) = tree.cold();
    assert_eq!(n, tree.planted);
    let db = host.snapshot();
    let opts = LintOptions::default();
    // A clean project Python tool with the longest chain, and the project runtime most tools run
    // through (every clean file has no finding at all).
    let clean = |f: SourceFile| file_findings(&db, f, &opts).is_empty();
    let files = tool_files(&db).clone();
    let leaf = files
        .iter()
        .copied()
        .filter(|&f| f.space(&db).kind() == SpaceKind::Project && f.rel(&db).ends_with(".py"))
        .filter(|&f| clean(f))
        .max_by_key(|&f| (chain(&db, f).elements.len(), std::cmp::Reverse(f.rel(&db))))
        .expect("a clean project tool");
    let mut users: rustc_hash::FxHashMap<SourceFile, Vec<SourceFile>> = Default::default();
    for &f in &files {
        for e in chain(&db, f).elements.iter().skip(1) {
            if let Some(rt) = e.file {
                users.entry(rt).or_default().push(f);
            }
        }
    }
    let (runtime, dependents) = users
        .into_iter()
        .filter(|(rt, _)| rt.space(&db).kind() == SpaceKind::Project && clean(*rt))
        .max_by_key(|(rt, u)| (u.len(), std::cmp::Reverse(rt.rel(&db))))
        .expect("a project runtime used by tools");
    let leaf_chain = chain(&db, leaf).elements.len();
    let leaf_id = tool_id(&db, leaf).expect("a tool has an id");
    drop(db);

    let mut group = c.benchmark_group(format!("revalidate_{}_tools", bench_tools()));
    group.sample_size(20);
    let target = Target::of(&host, leaf);
    let before = metadata(host.db(), leaf).clone();
    target.write(&mut host, target.header_edit(0));
    assert_ne!(
        **metadata(host.db(), leaf),
        *before,
        "the header edit changes the metadata"
    );
    target.write(&mut host, target.text.clone());
    for (name, edit) in [
        (
            "leaf_edit_body",
            Target::body_edit as fn(&Target, u64) -> String,
        ),
        ("leaf_edit_header", Target::header_edit),
    ] {
        let expected = count_after(&mut host, &target, edit(&target, 0), &[leaf]);
        let mut counter = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                counter += 1;
                target.write(&mut host, edit(&target, counter));
                assert_eq!(findings_of(&host, &[leaf]), expected);
            })
        });
        target.write(&mut host, target.text.clone());
    }

    let rt = Target::of(&host, runtime);
    let mut checked = vec![runtime];
    checked.extend(&dependents);
    let expected = count_after(&mut host, &rt, rt.header_edit(0), &checked);
    group.throughput(Throughput::Elements(checked.len() as u64));
    let mut counter = 0u64;
    group.bench_function(
        BenchmarkId::new("runtime_edit", format!("{}_dependents", dependents.len())),
        |b| {
            b.iter(|| {
                counter += 1;
                rt.write(&mut host, rt.header_edit(counter));
                assert_eq!(findings_of(&host, &checked), expected);
            })
        },
    );
    rt.write(&mut host, rt.text.clone());
    group.finish();

    watch(c, &mut host, &target, &rt, dependents.len());

    let mut group = c.benchmark_group(format!("resolve_chain_{}_tools", bench_tools()));
    group.sample_size(20);
    let ids = [leaf_id.clone()];
    group.bench_function(format!("lazy_{leaf_chain}_elements"), |b| {
        b.iter(|| {
            let (lazy, _, _) = load_items(&OsSystem, &tree.specs(), &ids, tree.settings());
            let view = chain_of(lazy.db(), &leaf_id);
            assert_eq!(view.elements.len(), leaf_chain);
            assert!(view.validation.valid && view.error.is_none());
        })
    });
    group.bench_function(format!("warm_{leaf_chain}_elements"), |b| {
        b.iter(|| {
            let view = chain_of(host.db(), &leaf_id);
            assert_eq!(view.elements.len(), leaf_chain);
            assert!(view.validation.valid && view.error.is_none());
        })
    });
    group.finish();
}

/// An edit of a file's text (the iteration number makes each one new).
type Edit = fn(&Target, u64) -> String;

/// `lint --watch`'s path: one change applied through `LiveLint`, which re-checks only the files
/// it reaches (the leaf tool; the runtime and every tool whose chain reads its id) and keeps the
/// totals. Each iteration asserts the totals (the clean count plus the edited file's broken
/// signature) and the number of files re-checked, taken once before timing.
fn watch(c: &mut Criterion, host: &mut Host, leaf: &Target, runtime: &Target, dependents: usize) {
    let mut live = LiveLint::new(host.analysis(), LintOptions::default(), &|_| {});
    let total = |s: ryechain::diagnostic::Summary| s.errors + s.warnings;
    let clean = total(live.summary());
    let mut group = c.benchmark_group(format!("watch_{}_tools", bench_tools()));
    group.sample_size(20);
    let cases: [(&str, &Target, Edit); 3] = [
        ("leaf_edit_body", leaf, Target::body_edit),
        ("leaf_edit_header", leaf, Target::header_edit),
        ("runtime_edit", runtime, Target::header_edit),
    ];
    for (name, target, edit) in cases {
        let first = live.apply(host, target.change(edit(target, 0)));
        assert!(first.full.is_none(), "{name}: {:?}", first.full);
        assert_eq!(
            total(first.summary),
            clean + 1,
            "{name}: the signature breaks"
        );
        let rechecked = first.rechecked;
        if target.file == runtime.file {
            assert!(
                rechecked > dependents,
                "{name}: the runtime and its {dependents} users"
            );
            group.throughput(Throughput::Elements(rechecked as u64));
        } else {
            assert_eq!(rechecked, 1, "{name}: a leaf tool alone");
            group.throughput(Throughput::Elements(1));
        }
        let mut counter = 0u64;
        group.bench_function(
            BenchmarkId::new(name, format!("{rechecked}_rechecked")),
            |b| {
                b.iter(|| {
                    counter += 1;
                    let d = live.apply(host, target.change(edit(target, counter)));
                    assert_eq!((total(d.summary), d.rechecked), (clean + 1, rechecked));
                })
            },
        );
        let back = live.apply(host, target.change(target.text.clone()));
        assert_eq!(total(back.summary), clean, "{name}: restored");
    }
    // A tool added beside the leaf (a copy: validly signed, a new id) and removed again: the ids
    // every "did you mean" searches come and go.
    let mut added = leaf.spec.clone();
    added.path.set_file_name("bench_added.py");
    added.rel = format!(
        "{}/bench_added.py",
        leaf.spec
            .rel
            .rsplit_once('/')
            .map_or("tools", |(dir, _)| dir)
    );
    let add = || Change {
        files: vec![FileChange::Write(added.clone())],
        ..Change::default()
    };
    let remove = || Change {
        files: vec![FileChange::Remove(added.path.clone())],
        ..Change::default()
    };
    let first = live.apply(host, add());
    assert!(first.full.is_none(), "added: {:?}", first.full);
    assert_eq!(
        total(first.summary),
        clean,
        "a copy of a signed tool is clean"
    );
    let gone = live.apply(host, remove());
    assert_eq!(total(gone.summary), clean, "removed");
    let (on_add, on_remove) = (first.rechecked, gone.rechecked);
    group.throughput(Throughput::Elements(1));
    group.bench_function(
        BenchmarkId::new(
            "tool_added_then_removed",
            format!("{on_add}_{on_remove}_rechecked"),
        ),
        |b| {
            b.iter(|| {
                let a = live.apply(host, add());
                let r = live.apply(host, remove());
                assert_eq!(
                    (total(a.summary), a.rechecked, total(r.summary), r.rechecked),
                    (clean, on_add, clean, on_remove)
                );
            })
        },
    );
    group.finish();
}

/// The full lint again after one body edit (the database stays warm).
fn relint_body_edit(c: &mut Criterion, tree: &Tree) {
    let (mut host, _) = tree.cold();
    let file = {
        let db = host.snapshot();
        tool_files(&db)
            .iter()
            .copied()
            .find(|f| f.rel(&db).ends_with(".py"))
            .expect("a Python tool")
    };
    let target = Target::of(&host, file);
    let mut group = c.benchmark_group(format!("relint_{}_tools", bench_tools()));
    group.sample_size(10);
    let mut counter = 0u64;
    group.bench_function("body_edit", |b| {
        b.iter(|| {
            counter += 1;
            target.write(&mut host, target.body_edit(counter));
            let n = lint(&host.snapshot(), &LintOptions::default(), &|_| {})
                .findings
                .len();
            assert_eq!(n, tree.planted);
        })
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let unsigned = Tree::new(false);
    let signed = Tree::new(true);
    lint_cold(c, &[&unsigned, &signed]);
    relint_body_edit(c, &unsigned);
    revalidate(c, &signed);
}

criterion_group!(benches, bench);
criterion_main!(benches);
