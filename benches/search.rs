//! Benchmarks of `rye_search` on a warm server: a generated tree loaded and watched once
//! (`mcp::warm`, as the MCP server keeps a project between calls), then one search call after
//! another, each as the server answers it: the barrier that brings the database in line with the
//! disk, the search (`Analysis::search`), the page's signature verdicts and the JSON.
//!
//! - `warm_search`: several query shapes (a term, two terms, a phrase, `AND`/`OR`/`NOT`, a
//!   wildcard, a fuzzy term, `*` over every space, a seed-era scope, sorted by name);
//! - `after_edit`: one tool's description changed on disk before each call (the watcher's event
//!   read, the file re-read, its memos recomputed), then a search that finds the edit.
//!
//! Tree: `RYECHAIN_BENCH_TREE=/tmp/t100k` searches a tree `examples/gen_tree` wrote (`cargo run
//! --release --example gen_tree -- /tmp/t100k --tools 100000 --seed 1`); otherwise a tree of
//! `RYECHAIN_BENCH_TOOLS` tools is generated into a temp dir (default 10,000 under `cargo bench`,
//! 1,000 when `cargo test` runs each benchmark once). Threads: `RAYON_NUM_THREADS`. The first
//! search (every item's search document computed) is printed, not benchmarked. Every iteration
//! asserts the total it must find, counted once before timing (CONVENTIONS habit 15).
#![allow(
    clippy::disallowed_methods,
    reason = "the benchmark writes its tree and an edited tool, and reads its settings from the environment"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ryechain::edges::mcp::warm::{Refresh, Warm};
use ryechain::facts::search::{SearchRequest, SortBy, Source};
use ryechain::integrity::ItemKind;
use ryechain::system::os::OsSystem;
use ryechain_synth::{GenOptions, TempTree, bench_tools, generate};

/// The tree searched: `RYECHAIN_BENCH_TREE`, or one generated into a temp dir.
struct Tree {
    _generated: Option<TempTree>,
    dir: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        if let Some(dir) = std::env::var_os("RYECHAIN_BENCH_TREE") {
            return Tree {
                _generated: None,
                dir: PathBuf::from(dir),
            };
        }
        let tree = generate(&GenOptions {
            tools: bench_tools(),
            seed: 1,
        });
        let generated = TempTree::write(&tree).expect("the tree is written");
        Tree {
            dir: generated.dir().to_owned(),
            _generated: Some(generated),
        }
    }
}

/// One call as the server answers it: refresh, search, the page's verdicts, the JSON.
fn call(warm: &mut Warm, req: &SearchRequest) -> usize {
    warm.refresh();
    let (a, index) = warm.search_view();
    let answer = a.search_in(index, req).expect("the query parses");
    let verdicts: Vec<_> = answer
        .hits
        .iter()
        .map(|h| a.verify_file(h.file, &h.id))
        .collect();
    let echo = ryechain::render::search::Echo {
        query: &req.query,
        item_type: req.kind.name(),
        source: req.source.name(),
        limit: req.limit,
        offset: req.offset,
        scope: None,
        space: None,
    };
    let json = ryechain::render::search::response(&answer, &verdicts, &echo, &|p: &Path| {
        p.display().to_string()
    });
    assert_eq!(
        json["results"].as_array().map(Vec::len),
        Some(answer.hits.len())
    );
    answer.total
}

/// The query shapes measured, by name.
fn shapes() -> Vec<(&'static str, SearchRequest)> {
    let tool = |q: &str| SearchRequest::new(ItemKind::Tool, q);
    vec![
        ("term", tool("tables")),
        ("two_terms", tool("sync acme")),
        ("phrase", tool("\"for acme\"")),
        ("and_or_not", tool("(tables OR logs) AND acme NOT gcp")),
        ("wildcard", tool("rotat*")),
        (
            "fuzzy",
            SearchRequest {
                fuzzy: 2,
                ..tool("tabels")
            },
        ),
        (
            "all_spaces_star",
            SearchRequest {
                source: Source::All,
                ..tool("*")
            },
        ),
        (
            "scope_glob",
            SearchRequest {
                source: Source::All,
                id_glob: Some("rye/core/*".to_owned()),
                ..tool("*")
            },
        ),
        (
            "sort_by_name",
            SearchRequest {
                sort_by: SortBy::Name,
                ..tool("tables")
            },
        ),
    ]
}

fn warm_search(c: &mut Criterion) {
    let tree = Tree::new();
    let started = Instant::now();
    let mut warm = Warm::open(&OsSystem, ryechain::testing::generated_spaces(&tree.dir));
    let opened = started.elapsed();
    let started = Instant::now();
    let first = call(&mut warm, &SearchRequest::new(ItemKind::Tool, "tables"));
    eprintln!(
        "{}: opened (loaded and watched) in {:.0} ms; first search ({first} found, every search document computed) in {:.0} ms",
        tree.dir.display(),
        opened.as_secs_f64() * 1000.0,
        started.elapsed().as_secs_f64() * 1000.0
    );
    let mut group = c.benchmark_group("warm_search");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(10));
    for (name, req) in shapes() {
        let expected = call(&mut warm, &req);
        assert!(expected > 0, "{name} finds something");
        eprintln!("{name}: {expected} found");
        group.bench_function(name, |b| {
            b.iter(|| {
                assert_eq!(call(&mut warm, &req), expected);
                assert_eq!(warm.last_refresh(), Refresh::Unchanged);
            })
        });
    }
    group.finish();

    // One tool's description edited on disk before each call; the search finds the edit.
    let path = first_python_tool(tree.dir.join("project/.ai/tools"))
        .expect("a Python tool in the project");
    let original = std::fs::read_to_string(&path).expect("the tool reads");
    let key = "__tool_description__ = \"";
    assert!(
        original.contains(key),
        "{} has a description",
        path.display()
    );
    let mut n = 0u64;
    let mut group = c.benchmark_group("after_edit");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("edit_then_search", |b| {
        b.iter_batched(
            || {
                n += 1;
                let word = format!("zqedit{n}");
                let text = original.replacen(key, &format!("{key}{word} "), 1);
                std::fs::write(&path, text).expect("the tool is written");
                SearchRequest::new(ItemKind::Tool, &word)
            },
            |req| {
                assert_eq!(call(&mut warm, &req), 1);
                assert!(matches!(warm.last_refresh(), Refresh::Reloaded(_)));
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
    std::fs::write(&path, original).expect("the tool is restored");
}

/// The first `.py` file below `dir`.
fn first_python_tool(dir: PathBuf) -> Option<PathBuf> {
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<PathBuf> = d
            .read_dir()
            .ok()?
            .filter_map(|e| Some(e.ok()?.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "py") && !p.is_symlink() {
                return Some(p);
            }
        }
    }
    None
}

criterion_group!(benches, warm_search);
criterion_main!(benches);
