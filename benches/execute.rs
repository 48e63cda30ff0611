//! Benchmarks of `rye_execute` with `dry_run: true` (§12.4) on a generated tree, in process, as
//! the MCP server answers it: no protocol, everything after the JSON-RPC message is read.
//!
//! - `dry_run/server_execute`: one call of the server's handler (`mcp::Server::execute`): the
//!   arguments read and checked, the project's spaces built, a fresh execution session opened
//!   (the server opens one per call, so edits on disk are seen: the base dirs of every space
//!   walked, the rest read lazily), the chain built and validated by the planner with the files
//!   it asks for read, and seed 003's JSON rendered; on tokio's blocking pool, as served;
//! - `dry_run/session_open`: the session's opening alone (`runner::execute::Session::open`);
//! - `dry_run/session_execute`: the dry run on a session opened once (what a session kept
//!   between calls would cost; the server does not keep one).
//!
//! Tree: `RYECHAIN_BENCH_TREE=/tmp/t100k` uses a tree `examples/gen_tree` wrote (`cargo run
//! --release --example gen_tree -- /tmp/t100k --tools 100000 --seed 1`); otherwise a tree of
//! `RYECHAIN_BENCH_TOOLS` tools is generated into a temp dir (default 10,000 under `cargo bench`,
//! 1,000 when `cargo test` runs each benchmark once). The tool: `RYECHAIN_BENCH_TOOL` (the MCP
//! comparison uses `acme/gcp/publish_tables`), else the first project tool, in path order, whose
//! dry run passes. Every iteration asserts the answer (`validation_passed`, the chain's length
//! counted once before timing; CONVENTIONS habit 15).
#![allow(
    clippy::disallowed_methods,
    reason = "the benchmark writes its tree and reads its settings from the environment"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ryechain::db::Settings;
use ryechain::edges::mcp::{Server, SignItems, Spaces, ToolNames};
use ryechain::edges::runner::execute::{ExecCall, Executed, Session};
use ryechain::load::SpaceSpec;
use ryechain::system::os::OsSystem;
use ryechain_synth::{GenOptions, TempTree, bench_tools, generate};
use serde_json::{Map, Value as Json, json};

static OS: OsSystem = OsSystem;

/// The tree executed in: `RYECHAIN_BENCH_TREE`, or one generated into a temp dir.
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

/// A dry run of `item_id` on a session, as the server calls it.
fn dry_run(session: &mut Session<'_>, item_id: &str) -> Result<Executed, String> {
    session.execute(ExecCall {
        item_id: item_id.to_owned(),
        params: Map::new(),
        dry_run: true,
        trace: false,
        timeout: None,
        output_cap: ryechain::exec::DEFAULT_OUTPUT_CAP,
        allow_unsigned: false,
        use_lockfile: true,
        env: BTreeMap::new(),
    })
}

/// The chain's length when `item_id`'s dry run passes.
fn passes(specs: &[SpaceSpec], item_id: &str) -> Option<usize> {
    let mut session = Session::open(&OS, specs, Settings::default());
    match dry_run(&mut session, item_id) {
        Ok(Executed::DryRun(view)) => {
            let answer = ryechain::render::exec::dry_run_response(&view, None);
            (answer["status"] == "validation_passed").then_some(view.elements.len())
        }
        _ => None,
    }
}

/// The tool benchmarked: `RYECHAIN_BENCH_TOOL`, or the first project tool whose dry run passes.
fn pick_tool(project: &Path, specs: &[SpaceSpec]) -> (String, usize) {
    if let Ok(id) = std::env::var("RYECHAIN_BENCH_TOOL") {
        let len = passes(specs, &id).unwrap_or_else(|| panic!("{id}'s dry run passes"));
        return (id, len);
    }
    let tools = project.join(".ai/tools");
    let mut stack = vec![tools.clone()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in d.read_dir().expect("the tools dir reads").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "py") && !p.is_symlink() {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .iter()
        .take(200)
        .find_map(|p| {
            let rel = p.strip_prefix(&tools).ok()?.with_extension("");
            let id = rel.to_str()?.to_owned();
            passes(specs, &id).map(|len| (id, len))
        })
        .expect("a project tool whose dry run passes among the first 200")
}

fn dry_run_benches(c: &mut Criterion) {
    let tree = Tree::new();
    let project = tree.dir.join("project");
    let specs = ryechain::testing::generated_spaces(&tree.dir);
    let (item_id, chain_len) = pick_tool(&project, &specs);
    eprintln!(
        "{}: dry run of {item_id} (a chain of {chain_len})",
        tree.dir.display()
    );

    let spaces: Spaces = {
        let specs = specs.clone();
        Arc::new(move |_: &Path| Ok((specs.clone(), Vec::new())))
    };
    // A dry run signs nothing.
    let sign: SignItems = Arc::new(|_| anyhow::bail!("the bench signs nothing"));
    let server = Server::new(ToolNames::Seed, &OS, spaces, sign, None, BTreeMap::new());
    let args: Map<String, Json> = json!({
        "item_type": "tool",
        "item_id": item_id,
        "project_path": project,
        "dry_run": true,
    })
    .as_object()
    .expect("an object")
    .clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let call = || {
        let answer =
            runtime.block_on(server.execute(Some(&args), Instant::now(), std::future::pending()));
        assert_eq!(answer["status"], "validation_passed", "{answer}");
        assert_eq!(
            answer["chain"].as_array().map(Vec::len),
            Some(chain_len),
            "{answer}"
        );
    };
    let started = Instant::now();
    call();
    eprintln!(
        "first server call: {:.2} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );

    let mut group = c.benchmark_group("dry_run");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("server_execute", |b| b.iter(call));
    group.bench_function("session_open", |b| {
        b.iter(|| {
            let session = Session::open(&OS, &specs, Settings::default());
            assert!(session.notices.is_empty(), "{:?}", session.notices);
            session
        })
    });
    let mut session = Session::open(&OS, &specs, Settings::default());
    group.bench_function("session_execute", |b| {
        b.iter(|| match dry_run(&mut session, &item_id) {
            Ok(Executed::DryRun(view)) => {
                assert_eq!(view.elements.len(), chain_len);
                assert!(view.validation.valid);
            }
            other => panic!("{item_id}'s dry run: {other:?}"),
        })
    });
    group.finish();
}

criterion_group!(benches, dry_run_benches);
criterion_main!(benches);
