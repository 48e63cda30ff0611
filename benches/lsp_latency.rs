//! The language server's latency, measured end to end through the protocol (an in-process client
//! over `Connection::memory()`): a header edit of one open tool until its diagnostics are
//! published; a runtime edit until 100 open tools that run on it are re-published; a runtime
//! changed on disk until 100 tools that run on it, none of them open, are re-published by the
//! workspace pass; the config changed on disk until a closed file's severity moves (every file
//! re-checked); and server start until the first diagnostics of a file opened at once (on a
//! larger tree).
//!
//! `cargo bench --bench lsp_latency` — sizes from `RYECHAIN_BENCH_TOOLS` (default 10000) and
//! `RYECHAIN_BENCH_START_TOOLS` (default 100000; 0 skips the start measurement). Every sample
//! checks the diagnostics it waited for, so a broken server cannot post a fast time.
#![allow(
    clippy::disallowed_methods,
    reason = "the harness writes its trees to temp dirs and reads the clock"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_server::Connection;
use ryechain::db::Settings;
use ryechain::lsp::server::{InitOptions, Setup, run};
use ryechain::lsp::uri;
use ryechain::system::os::OsSystem;
use ryechain::testing::{LspClient, generated_spaces, published};
use ryechain_synth::{GenOptions, generate, write_tree};
use serde_json::{Value, json};

const DEPENDENTS: usize = 100;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const RUNTIME: &str = "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\ncategory: bench\ndescription: \"bench runtime\"\n";

fn dependent(i: usize, executor: &str) -> String {
    format!(
        "\"\"\"Bench tool {i}.\"\"\"\n\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"{executor}\"\n__category__ = \"bench\"\n__tool_description__ = \"d\"\n\n\ndef main(params):\n    return {{}}\n"
    )
}

/// A generated tree of `tools` tools plus the bench runtime and its dependents; the dir.
fn tree(tools: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    write_tree(&dir, &generate(&GenOptions { tools, seed: 1 })).unwrap();
    let tools_dir = dir.join("project/.ai/tools/bench");
    std::fs::create_dir_all(&tools_dir).unwrap();
    // The runtime the open tools run on, and a second one whose dependents no editor opens.
    for (runtime, prefix) in [("runtime", "dep"), ("runtime_b", "closed")] {
        std::fs::write(tools_dir.join(format!("{runtime}.yaml")), RUNTIME).unwrap();
        for i in 0..DEPENDENTS {
            let text = dependent(i, &format!("bench/{runtime}"));
            std::fs::write(tools_dir.join(format!("{prefix}_{i:03}.py")), text).unwrap();
        }
    }
    // A closed tool with a finding: its diagnostics tell the first workspace pass has run.
    std::fs::write(tools_dir.join("sentinel.py"), dependent(0, "bench/nowhere")).unwrap();
    (tmp, dir)
}

fn file_uri(dir: &Path, rel: &str) -> String {
    uri::from_path(&dir.join("project/.ai").join(rel))
        .unwrap()
        .as_str()
        .to_owned()
}

/// Run the server on the tree at `dir`; `body` gets the client right after `initialized` and
/// the instant the server thread was started.
fn with_server(dir: &Path, body: impl FnOnce(&mut LspClient, Instant)) {
    let (server, client) = Connection::memory();
    let specs = generated_spaces(dir);
    let spaces = move |_: &Path, _: &InitOptions| Ok((specs.clone(), Vec::new()));
    let setup = Setup {
        sys: &OsSystem,
        spaces: &spaces,
        materialised: Arc::new(|_: &str, _: &str| None),
        rule_doc: Arc::new(|_: &str| None),
        // The generated trees are unsigned: integrity is measured by the lint benches.
        settings: Settings {
            ignore: vec!["integrity".to_owned()],
            ..Settings::default()
        },
        sign: None,
    };
    std::thread::scope(|s| {
        let started = Instant::now();
        let handle = s.spawn(|| run(&server, &setup));
        let mut c = LspClient::new(client);
        let root = uri::from_path(&dir.join("project")).unwrap();
        c.request(
            "initialize",
            json!({"processId": null, "rootUri": root.as_str(), "capabilities": {}}),
        );
        c.notify("initialized", json!({}));
        body(&mut c, started);
        c.request("shutdown", Value::Null);
        c.notify("exit", Value::Null);
        assert!(handle.join().unwrap().unwrap());
    });
}

fn open(c: &LspClient, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "x", "version": 1, "text": text}}),
    );
}

fn change(c: &LspClient, uri: &str, version: i32, text: &str) {
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

fn has(diags: &[Value], rule: &str) -> bool {
    diags.iter().any(|d| d["code"] == rule)
}

/// The bench runtime constraining each of its `prefix_NNN` dependents to version 2.
fn strict_runtime(prefix: &str) -> String {
    format!(
        "{RUNTIME}child_constraints:\n{}",
        (0..DEPENDENTS)
            .map(|i| format!("  bench/{prefix}_{i:03}: {{min_version: \"2.0.0\"}}\n"))
            .collect::<String>()
    )
}

/// Wait until each of `uris` is published with (`strict`) or without a constraint violation.
fn republished(c: &mut LspClient, uris: &[String], strict: bool) {
    let mut left: std::collections::BTreeSet<&str> = uris.iter().map(String::as_str).collect();
    while !left.is_empty() {
        let msg = c
            .next_message(ryechain::testing::LSP_WAIT)
            .expect("the dependents are re-published");
        if let Some((u, d)) = published(&msg)
            && has(&d, "version-constraint-violation") == strict
        {
            left.remove(u.as_str());
        }
    }
}

fn summary(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    let pick = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name}: median {:.2} ms, p90 {:.2} ms, min {:.2} ms, max {:.2} ms ({} samples)",
        pick(0.5),
        pick(0.9),
        ms[0],
        ms[ms.len() - 1],
        ms.len()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn edits(tools: usize) {
    let (_tmp, dir) = tree(tools);
    let files = walk_count(&dir);
    println!("tree: {tools} generated tools + 1 runtime + {DEPENDENTS} dependents, {files} files");
    with_server(&dir, |c, _| {
        let rt = file_uri(&dir, "tools/bench/runtime.yaml");
        let deps: Vec<String> = (0..DEPENDENTS)
            .map(|i| file_uri(&dir, &format!("tools/bench/dep_{i:03}.py")))
            .collect();
        for (i, u) in deps.iter().enumerate() {
            open(c, u, &dependent(i, "bench/runtime"));
        }
        open(c, &rt, RUNTIME);
        c.diagnostics_until(&deps[0], |_| true);
        // The first workspace pass (every file) has run.
        c.diagnostics_until(&file_uri(&dir, "tools/bench/sentinel.py"), |d| {
            has(d, "missing-executor")
        });
        c.settle(Duration::from_millis(500));

        // A header edit of one open tool (its executor id flips between a typo and the runtime).
        let (mut to_typo, mut to_fixed) = (Vec::new(), Vec::new());
        for v in 2..62 {
            let typo = v % 2 == 0;
            let exec = if typo {
                "bench/runtimo"
            } else {
                "bench/runtime"
            };
            let t = Instant::now();
            change(c, &deps[0], v, &dependent(0, exec));
            c.diagnostics_until(&deps[0], |d| has(d, "missing-executor") == typo);
            if typo { &mut to_typo } else { &mut to_fixed }.push(ms(t.elapsed()));
            c.settle(Duration::from_millis(150));
        }
        let mut leaf = to_typo.clone();
        leaf.extend(&to_fixed);
        summary(
            "header edit of one open tool -> its diagnostics published",
            leaf,
        );
        summary(
            "  of which: the id broken (a typo, with suggestions)",
            to_typo,
        );
        summary("  of which: the id fixed", to_fixed);

        // A runtime edit: it starts (or stops) constraining every dependent to version 2.
        let strict = strict_runtime("dep");
        let mut runtime = Vec::new();
        for v in 2..22 {
            let strict_now = v % 2 == 0;
            let t = Instant::now();
            change(c, &rt, v, if strict_now { &strict } else { RUNTIME });
            republished(c, &deps, strict_now);
            runtime.push(ms(t.elapsed()));
            c.settle(Duration::from_millis(300));
        }
        summary(
            &format!("runtime edit -> {DEPENDENTS} open dependents re-published"),
            runtime,
        );

        // A runtime changed on disk (a watched-file event): its closed dependents are published
        // by the workspace pass, after the edits pause (150 ms).
        let rt_b = file_uri(&dir, "tools/bench/runtime_b.yaml");
        let rt_b_path = dir.join("project/.ai/tools/bench/runtime_b.yaml");
        let closed: Vec<String> = (0..DEPENDENTS)
            .map(|i| file_uri(&dir, &format!("tools/bench/closed_{i:03}.py")))
            .collect();
        let strict = strict_runtime("closed");
        let mut on_disk = Vec::new();
        for v in 0..12 {
            let strict_now = v % 2 == 0;
            std::fs::write(&rt_b_path, if strict_now { &strict } else { RUNTIME }).unwrap();
            let t = Instant::now();
            c.notify(
                "workspace/didChangeWatchedFiles",
                json!({"changes": [{"uri": rt_b, "type": 2}]}),
            );
            republished(c, &closed, strict_now);
            on_disk.push(ms(t.elapsed()));
            c.settle(Duration::from_millis(300));
        }
        summary(
            &format!(
                "runtime changed on disk -> {DEPENDENTS} closed dependents re-published (150 ms pause included)"
            ),
            on_disk,
        );

        // The config changed on disk (every file's findings may move): the closed sentinel's
        // missing executor flips between an error and a warning.
        let cfg_path = dir.join("project/.ai/config/ryechain.yaml");
        std::fs::create_dir_all(cfg_path.parent().unwrap()).unwrap();
        let cfg = uri::from_path(&cfg_path).unwrap().as_str().to_owned();
        let sentinel = file_uri(&dir, "tools/bench/sentinel.py");
        let mut config = Vec::new();
        for v in 0..8 {
            let warning = v % 2 == 0;
            let level = if warning { "warning" } else { "error" };
            let text = format!("lint:\n  severity:\n    missing-executor: {level}\n");
            std::fs::write(&cfg_path, text).unwrap();
            let t = Instant::now();
            c.notify(
                "workspace/didChangeWatchedFiles",
                json!({"changes": [{"uri": cfg, "type": if v == 0 { 1 } else { 2 }}]}),
            );
            let want = if warning { 2 } else { 1 };
            c.diagnostics_until(&sentinel, |d| {
                d.iter()
                    .any(|d| d["code"] == "missing-executor" && d["severity"] == want)
            });
            if v > 0 {
                config.push(ms(t.elapsed()));
            }
            c.settle(Duration::from_millis(300));
        }
        summary(
            "config changed on disk -> every file re-checked, a closed file re-published (150 ms pause included)",
            config,
        );
    });
}

fn start(tools: usize) {
    let (_tmp, dir) = tree(tools);
    println!(
        "tree: {tools} generated tools + 1 runtime + {DEPENDENTS} dependents, {} files",
        walk_count(&dir)
    );
    let mut samples = Vec::new();
    for _ in 0..3 {
        with_server(&dir, |c, started| {
            let u = file_uri(&dir, "tools/bench/dep_007.py");
            open(c, &u, &dependent(7, "bench/runtimo"));
            c.diagnostics_until(&u, |d| has(d, "missing-executor"));
            samples.push(ms(started.elapsed()));
        });
    }
    summary(
        "server start -> first diagnostics of a file opened at once",
        samples,
    );
}

fn walk_count(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(_) => n += 1,
                Err(_) => {}
            }
        }
    }
    n
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs it with nothing asked.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    edits(env_usize("RYECHAIN_BENCH_TOOLS", 10_000));
    let big = env_usize("RYECHAIN_BENCH_START_TOOLS", 100_000);
    if big > 0 {
        start(big);
    }
}
