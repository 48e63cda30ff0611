//! End-to-end tests of the state-graph runtime (issue 33 item 3, §13's state-graph row): the real
//! binary runs `ryechain exec` of graph tools over real trees, the runtime's process being
//! ryechain itself (`${RYECHAIN_EXE} graph-run`), each action a real tool through the executor.
//! Conditional edges, foreach (sequential and parallel), return, on_error and `_last_error`,
//! max_steps, capabilities, the state persisted (signed) after every step and resumed, and the
//! bad input of the issue; then the example graph of `examples/project`.
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects and spawn the binary"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;

use serde_json::{Value as Json, json};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

/// python3, which the test tools are written in; missing, the test is skipped saying why, and
/// fails under `CI=true` (.ci/run installs it).
fn have_python() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "python3 is missing under CI=true"
        );
        eprintln!("SKIP: `python3` is not installed on this machine; .ci/run installs it");
    }
    ok
}

struct Out {
    code: i32,
    json: Json,
    stdout: String,
    stderr: String,
}

impl Out {
    /// The graph's own answer (the tool's `data`).
    fn data(&self) -> &Json {
        &self.json["data"]
    }
    fn show(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// A temporary project and user space; the user's config lets unsigned items run (the person's
/// choice, which the graph's actions and a resumed state honour as `exec` does) unless `signed`.
struct Tree {
    dir: tempfile::TempDir,
}

/// A python/script tool: `BODY` sees `params` (the parameters) and `project` (the project
/// path), and sets `out` (printed as JSON).
fn py_tool(body: &str) -> String {
    format!(
        "__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\nimport json, os, sys, glob, time\nparams = json.loads(sys.stdin.read() or \"{{}}\")\nproject = sys.argv[2]\nout = {{}}\n{body}\nprint(json.dumps(out))\n"
    )
}

impl Tree {
    fn new() -> Tree {
        let t = Tree::signed();
        t.write_user(
            ".ai/config/ryechain.yaml",
            "integrity:\n  require_signatures: false\n",
        );
        t
    }
    /// A tree whose items must be signed (none of the unsigned-items config).
    fn signed() -> Tree {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("project/.ai/tools")).unwrap();
        std::fs::create_dir_all(root.join("user/.ai")).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        let t = Tree { dir };
        t.write(
            "t/echo.py",
            &py_tool("out = {'got': params, 'n': params.get('n', 0)}"),
        );
        t.write(
            "t/double.py",
            &py_tool("out = {'value': params['x'] * 2, 'x': params['x']}"),
        );
        t.write(
            "t/fail.py",
            &py_tool("sys.stderr.write('boom: the tool failed\\n'); sys.exit(3)"),
        );
        t
    }
    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }
    fn project(&self) -> PathBuf {
        self.root().join("project")
    }
    fn user(&self) -> PathBuf {
        self.root().join("user")
    }
    /// `<project>/.ai/tools/<rel>`.
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.project().join(".ai/tools").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn write_user(&self, rel: &str, text: &str) {
        let p = self.user().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    fn run(&self, args: &[&str]) -> Out {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(self.project())
            .env("USER_SPACE", self.user())
            .env("HOME", self.root().join("home"))
            .env("RYECHAIN_CACHE_DIR", self.root().join("cache"))
            .env_remove("RYE_SYSTEM_SPACE")
            .env_remove("RYE_SIGNING_KEY_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("spawn ryechain");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        Out {
            code: out.status.code().unwrap_or(-1),
            json: serde_json::from_str(&stdout).unwrap_or(Json::Null),
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
    /// `ryechain exec <graph> <project> --params <params> --format json`.
    fn exec(&self, graph: &str, params: &Json) -> Out {
        let project = self.project();
        self.run(&[
            "exec",
            graph,
            project.to_str().unwrap(),
            "--params",
            &params.to_string(),
            "--format",
            "json",
        ])
    }
    /// A graph tool `flows/<name>` with this `config` (YAML, indented by two) and top-level extra.
    fn graph(&self, name: &str, extra: &str, config: &str) {
        let text = format!(
            "version: \"1.0.0\"\ntool_type: graph\nexecutor_id: rye/core/runtimes/state-graph/runtime\ncategory: flows\ndescription: \"test graph\"\n{extra}config:\n{config}"
        );
        self.write(&format!("flows/{name}.yaml"), &text);
    }
    /// The state files of a graph's runs.
    fn states(&self, graph_id: &str) -> Vec<PathBuf> {
        let dir = self.project().join(".ai/knowledge/graphs").join(graph_id);
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }
}

const ALL: &str = "permissions: [\"rye.execute.tool.*\"]\n";

fn ok(out: &Out) {
    assert_eq!(out.code, 0, "{}", out.show());
    assert_eq!(out.json["status"], "success", "{}", out.show());
    assert_eq!(out.data()["success"], true, "{}", out.show());
}

#[test]
fn a_conditional_edge_takes_the_first_matching_when() {
    if !have_python() {
        return;
    }
    let t = Tree::new();
    t.graph(
        "branch",
        ALL,
        "  start: measure
  nodes:
    measure:
      action:
        primary: execute
        item_type: tool
        item_id: t/echo
        params: {n: \"${inputs.n}\"}
      assign:
        n: \"${result.n}\"
      next:
        - to: big
          when: {path: \"result.n\", op: gt, value: 5}
        - to: medium
          when: {path: \"state.n\", op: gte, value: 3}
        - to: small
    big:
      action: {primary: execute, item_type: tool, item_id: t/echo, params: {size: big}}
      assign: {size: \"${result.got.size}\"}
      next: done
    medium:
      action: {primary: execute, item_type: tool, item_id: t/echo, params: {size: medium}}
      assign: {size: \"${result.got.size}\"}
      next: done
    small:
      action: {primary: execute, item_type: tool, item_id: t/echo, params: {size: small}}
      assign: {size: \"${result.got.size}\"}
      next: done
    done:
      type: return
",
    );
    for (n, size) in [(7, "big"), (3, "medium"), (1, "small")] {
        let out = t.exec("flows/branch", &json!({"n": n}));
        ok(&out);
        let data = out.data();
        assert_eq!(data["state"]["size"], size, "n={n}");
        // A whole `${…}` keeps the number a number.
        assert_eq!(data["state"]["n"], n);
        assert_eq!(data["steps"], 3);
        assert_eq!(data["status"], "completed");
        assert_eq!(
            out.json["chain"],
            json!([
                "flows/branch",
                "rye/core/runtimes/state-graph/runtime",
                "rye/core/primitives/subprocess"
            ])
        );
    }
}

const FOREACH: &str = "  start: each
  nodes:
    each:
      type: foreach
      over: \"${inputs.xs}\"
      as: x
      PARALLEL
      action:
        primary: execute
        item_type: tool
        item_id: t/double
        params: {x: \"${x}\"}
      collect: doubled
      next: done
    done:
      type: return
      output:
        first: \"${state.doubled.0.value}\"
        all: \"${state.doubled}\"
";

#[test]
fn foreach_runs_the_action_per_item_in_order_and_collects() {
    if !have_python() {
        return;
    }
    let t = Tree::new();
    t.graph("each", ALL, &FOREACH.replace("PARALLEL", "parallel: false"));
    let out = t.exec("flows/each", &json!({"xs": [1, 2, 3, 4]}));
    ok(&out);
    let data = out.data();
    let values: Vec<&Json> = data["state"]["doubled"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["value"])
        .collect();
    assert_eq!(values, [&json!(2), &json!(4), &json!(6), &json!(8)]);
    // The results are unwrapped: the tool's data, no envelope.
    assert!(data["state"]["doubled"][0].get("chain").is_none());
    assert_eq!(data["output"]["first"], 2);
    // The item's name is gone from the state once the foreach is done.
    assert!(data["state"].get("x").is_none());
    assert_eq!(data["steps"], 2);
}

#[test]
fn a_parallel_foreach_runs_its_iterations_at_once() {
    if !have_python() {
        return;
    }
    let t = Tree::new();
    // Each iteration marks itself started, then waits (up to 20 s) until all three are: run one
    // after another, the first would see only itself.
    t.write(
        "t/barrier.py",
        &py_tool(
            "d = os.path.join(project, 'barrier')\nos.makedirs(d, exist_ok=True)\nopen(os.path.join(d, str(params['x'])), 'w').close()\nend = time.time() + 20\nwhile len(os.listdir(d)) < 3 and time.time() < end:\n    time.sleep(0.02)\nout = {'x': params['x'], 'saw': len(os.listdir(d)), 'pid': os.getpid()}",
        ),
    );
    let graph = FOREACH
        .replace("PARALLEL", "parallel: true")
        .replace("t/double", "t/barrier");
    t.graph("fan", ALL, &graph);
    let out = t.exec("flows/fan", &json!({"xs": [1, 2, 3]}));
    ok(&out);
    let results = out.data()["state"]["doubled"].as_array().unwrap().clone();
    assert_eq!(results.len(), 3);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["x"], i + 1, "in the items' order: {results:?}");
        assert_eq!(r["saw"], 3, "iteration {} ran alone: {results:?}", i + 1);
    }
    // Each in a process of its own.
    let pids: std::collections::BTreeSet<u64> =
        results.iter().map(|r| r["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 3);
}

#[test]
fn on_error_routes_to_the_recovery_node_with_last_error() {
    if !have_python() {
        return;
    }
    let t = Tree::new();
    t.graph(
        "recover",
        ALL,
        "  start: risky
  nodes:
    risky:
      action: {primary: execute, item_type: tool, item_id: t/fail}
      assign: {never: \"set\"}
      on_error: handle
      next: done
    handle:
      action:
        primary: execute
        item_type: tool
        item_id: t/echo
        params: {failed_node: \"${state._last_error.node}\", why: \"${state._last_error.error}\"}
      assign:
        recovered_from: \"${result.got.failed_node}\"
        why: \"${result.got.why}\"
      next: done
    done:
      type: return
",
    );
    let out = t.exec("flows/recover", &json!({}));
    ok(&out);
    let state = &out.data()["state"];
    assert_eq!(state["recovered_from"], "risky");
    assert!(
        state["why"]
            .as_str()
            .unwrap()
            .contains("boom: the tool failed"),
        "{state}"
    );
    assert_eq!(state["_last_error"]["node"], "risky");
    assert!(
        state.get("never").is_none(),
        "a failed action assigns nothing"
    );

    // The graph's policy: `continue` skips the assign and takes the edges; `fail` ends the walk.
    for (policy, completes) in [("continue", true), ("fail", false)] {
        t.graph(
            &format!("policy_{policy}"),
            ALL,
            &format!(
                "  start: risky
  on_error: {policy}
  nodes:
    risky:
      action: {{primary: execute, item_type: tool, item_id: t/fail}}
      assign: {{never: \"set\"}}
      next: done
    done:
      type: return
"
            ),
        );
        let out = t.exec(&format!("flows/policy_{policy}"), &json!({}));
        assert_eq!(out.code, if completes { 0 } else { 1 }, "{}", out.show());
        let data = out.data();
        assert_eq!(data["success"], completes, "{policy}: {}", out.show());
        assert_eq!(data["state"]["_last_error"]["node"], "risky");
        assert!(data["state"].get("never").is_none());
        if !completes {
            assert_eq!(out.json["status"], "error");
            assert_eq!(data["node"], "risky");
            assert!(
                out.json["error"].as_str().unwrap().contains("boom"),
                "{}",
                out.show()
            );
        }
    }
}

#[test]
fn max_steps_ends_a_cycle_with_a_clear_error_and_a_default_cap() {
    if !have_python() {
        return;
    }
    let t = Tree::new();
    let cycle = "  start: a
  MAX
  nodes:
    a:
      action: {primary: execute, item_type: tool, item_id: t/echo}
      next: b
    b:
      action: {primary: execute, item_type: tool, item_id: t/echo}
      next: a
";
    t.graph("loop3", ALL, &cycle.replace("MAX", "max_steps: 3"));
    let out = t.exec("flows/loop3", &json!({}));
    assert_eq!(out.code, 1, "{}", out.show());
    assert_eq!(out.json["status"], "error");
    let error = out.json["error"].as_str().unwrap();
    assert!(error.starts_with("Max steps exceeded (3)"), "{error}");
    assert!(error.contains("the next node was `b`"), "{error}");
    assert_eq!(out.data()["steps"], 3);

    // Without max_steps, the default cap; the actions here are denied (no process each), so the
    // 100 steps are cheap, every one routed by `on_error`.
    t.graph(
        "loop_default",
        "permissions: [\"rye.execute.tool.nothing\"]\n",
        "  start: a
  nodes:
    a:
      action: {primary: execute, item_type: tool, item_id: t/echo}
      on_error: b
    b:
      action: {primary: execute, item_type: tool, item_id: t/echo}
      on_error: a
",
    );
    let out = t.exec("flows/loop_default", &json!({}));
    assert_eq!(out.code, 1, "{}", out.show());
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "Max steps exceeded (100, the default cap of a graph without `max_steps`)"
        ),
        "{error}"
    );
    assert_eq!(out.data()["steps"], 100);
    // Nothing is left running: the graph's process ended with its answer.
    assert!(out.stdout.contains("graph_run_id"));
}

#[test]
fn capabilities_fail_closed_and_wildcards_grant() {
    if !have_python() {
        return;
    }
    let t = Tree::new();
    let config = "  start: a
  nodes:
    a:
      action: {primary: execute, item_type: tool, item_id: t/echo, params: {hi: 1}}
      assign: {got: \"${result.got.hi}\"}
      next: done
    done:
      type: return
";
    // No permissions in the graph, none passed: nothing runs.
    t.graph("caps", "", config);
    let out = t.exec("flows/caps", &json!({}));
    assert_eq!(out.code, 1, "{}", out.show());
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.starts_with("Permission denied: no capabilities."),
        "{error}"
    );
    // A capability for something else: denied, naming what was needed.
    let out = t.exec(
        "flows/caps",
        &json!({"capabilities": ["rye.execute.tool.other.*"]}),
    );
    assert_eq!(out.code, 1);
    assert_eq!(
        out.json["error"],
        "Permission denied: 'rye.execute.tool.t.echo' not covered by capabilities"
    );
    // An empty list passed is no capability at all, even where the graph declares some.
    t.graph(
        "caps_declared",
        "permissions: [\"rye.execute.tool.t.*\"]\n",
        config,
    );
    let out = t.exec("flows/caps_declared", &json!({"capabilities": []}));
    assert_eq!(out.code, 1);
    // Wildcards grant: passed by the caller, or declared by the graph.
    for (graph, params) in [
        (
            "flows/caps",
            json!({"capabilities": ["rye.execute.tool.t.*"]}),
        ),
        ("flows/caps", json!({"capabilities": ["rye.*"]})),
        (
            "flows/caps",
            json!({"capabilities": ["rye.execute.tool.t.ech?"]}),
        ),
        ("flows/caps_declared", json!({})),
    ] {
        let out = t.exec(graph, &params);
        ok(&out);
        assert_eq!(out.data()["state"]["got"], 1);
        // The runtime's parameters are not the graph's inputs.
        assert!(out.data()["state"]["inputs"].get("capabilities").is_none());
    }
}

#[test]
fn bad_input_gives_clear_errors_and_warnings() {
    if !have_python() {
        return;
    }
    let t = Tree::new();
    // A foreach over something that is not a list: an error of that node.
    t.graph(
        "not_a_list",
        ALL,
        "  start: each
  nodes:
    each:
      type: foreach
      over: \"${inputs.xs}\"
      action: {primary: execute, item_type: tool, item_id: t/echo}
      next: done
    done:
      type: return
",
    );
    let out = t.exec("flows/not_a_list", &json!({"xs": "abc"}));
    assert_eq!(out.code, 1, "{}", out.show());
    assert_eq!(
        out.json["error"],
        "foreach node `each`: `over` (${inputs.xs}) is a string ('abc'), not a list"
    );
    assert_eq!(out.data()["state"]["_last_error"]["node"], "each");

    // An assign reading a missing path: a warning naming it, the value null (never "None").
    t.graph(
        "missing",
        ALL,
        "  start: a
  nodes:
    a:
      action: {primary: execute, item_type: tool, item_id: t/echo, params: {name: x}}
      assign:
        whole: \"${result.gott.name}\"
        inside: \"name=${state.nmae}\"
      next: done
    done:
      type: return
",
    );
    let out = t.exec("flows/missing", &json!({}));
    ok(&out);
    let data = out.data();
    assert_eq!(data["state"]["whole"], Json::Null);
    assert_eq!(data["state"]["inside"], "name=");
    let warnings: Vec<&str> = data["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Json::as_str)
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`${result.gott.name}`") && w.contains("did you mean `result.got`")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("`${state.nmae}`")),
        "{warnings:?}"
    );
    assert!(!out.stdout.contains("None"), "{}", out.stdout);

    // An action whose tool fails: the walk ends with the tool's error.
    t.graph(
        "fails",
        ALL,
        "  start: a
  nodes:
    a:
      action: {primary: execute, item_type: tool, item_id: t/fail}
      next: done
    done:
      type: return
",
    );
    let out = t.exec("flows/fails", &json!({}));
    assert_eq!(out.code, 1);
    assert_eq!(out.json["status"], "error");
    assert!(
        out.json["error"]
            .as_str()
            .unwrap()
            .contains("boom: the tool failed"),
        "{}",
        out.show()
    );

    // A graph the lint rules hold broken is refused before anything runs, naming the rule.
    t.graph(
        "broken",
        ALL,
        "  start: a
  nodes:
    a:
      action: {primary: execute, item_type: tool, item_id: t/echo}
      next: nowhere
",
    );
    let out = t.exec("flows/broken", &json!({}));
    assert_eq!(out.code, 1);
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.contains("graph-unknown-node") && error.contains("nowhere"),
        "{error}"
    );
    assert!(t.states("flows/broken").is_empty(), "nothing ran");

    // Required inputs of the config_schema.
    t.graph(
        "needs",
        &format!(
            "{ALL}config_schema:\n  type: object\n  properties:\n    who: {{type: string}}\n  required: [who]\n"
        ),
        "  start: done
  nodes:
    done:
      type: return
",
    );
    let out = t.exec("flows/needs", &json!({}));
    assert_eq!(out.code, 1);
    assert_eq!(
        out.json["error"],
        "Input validation failed: missing required input 'who'"
    );
}

/// A tool that reports what the run's state file said when it ran (the step count persisted
/// before this step), and a graph of three steps around it.
fn peek_tree(t: &Tree) {
    t.write(
        "t/peek.py",
        &py_tool(
            "files = glob.glob(os.path.join(project, '.ai/knowledge/graphs/flows/peek/*.md'))\ntext = open(files[0]).read() if len(files) == 1 else ''\nline = [l for l in text.splitlines() if l.startswith('step_count:')]\nout = {'files': len(files), 'step_count': int(line[0].split(':')[1]) if line else None, 'signed': text.startswith('<!-- rye:signed:')}",
        ),
    );
    t.graph(
        "peek",
        ALL,
        "  start: one
  nodes:
    one:
      action: {primary: execute, item_type: tool, item_id: t/peek}
      assign: {at_one: \"${result}\"}
      next: two
    two:
      action: {primary: execute, item_type: tool, item_id: t/peek}
      assign: {at_two: \"${result}\"}
      next: done
    done:
      type: return
",
    );
}

#[test]
fn the_state_is_written_after_every_step_and_signed_with_the_persons_key() {
    if !have_python() {
        return;
    }
    // Without a key: written unsigned after each step, with a warning naming `keys generate`.
    let t = Tree::new();
    peek_tree(&t);
    let out = t.exec("flows/peek", &json!({}));
    ok(&out);
    let state = &out.data()["state"];
    assert_eq!(
        state["at_one"]["step_count"], 0,
        "the state before the first step"
    );
    assert_eq!(
        state["at_two"]["step_count"], 1,
        "the state after the first step"
    );
    assert_eq!(state["at_two"]["files"], 1);
    assert_eq!(state["at_two"]["signed"], false);
    let warnings = out.data()["warnings"].to_string();
    assert!(
        warnings.contains("written unsigned") && warnings.contains("keys generate"),
        "{warnings}"
    );
    let states = t.states("flows/peek");
    assert_eq!(states.len(), 1);
    let text = std::fs::read_to_string(&states[0]).unwrap();
    assert!(
        text.contains("status: completed\n") && text.contains("step_count: 3\n"),
        "{text}"
    );
    let run_id = out.data()["graph_run_id"].as_str().unwrap();
    assert_eq!(
        states[0].file_name().unwrap().to_str().unwrap(),
        format!("{run_id}.md")
    );

    // With the person's trusted key (and no unsigned items allowed): signed after each step,
    // and the entry verifies as a knowledge item.
    let t = Tree::signed();
    peek_tree(&t);
    assert_eq!(t.run(&["keys", "generate"]).code, 0);
    assert_eq!(t.run(&["sign", "**"]).code, 0);
    let out = t.exec("flows/peek", &json!({}));
    ok(&out);
    let state = &out.data()["state"];
    assert_eq!(state["at_two"]["signed"], true, "{}", out.show());
    assert!(out.data().get("warnings").is_none(), "{}", out.show());
    let item = out.data()["state_item"].as_str().unwrap();
    let project = t.project();
    let shown = t.run(&[
        "exec",
        item,
        project.to_str().unwrap(),
        "--type",
        "knowledge",
        "--format",
        "json",
    ]);
    assert_eq!(shown.code, 0, "{}", shown.show());
    assert_eq!(shown.json["data"]["entry_type"], "graph_state");
    assert_eq!(shown.json["data"]["status"], "completed");
    // The whole project lints clean with the state in it.
    let lint = t.run(&["lint", project.to_str().unwrap(), "--no-cache"]);
    assert_eq!(lint.code, 0, "{}", lint.show());
}

#[test]
fn resume_run_id_continues_a_persisted_run_and_refuses_a_tampered_one() {
    if !have_python() {
        return;
    }
    let t = Tree::signed();
    // `gate` fails until the file `open` exists in the project.
    t.write(
        "t/gate.py",
        &py_tool(
            "if not os.path.exists(os.path.join(project, 'open')):\n    sys.stderr.write('the gate is closed\\n'); sys.exit(1)\nout = {'passed': True}",
        ),
    );
    t.graph(
        "gated",
        ALL,
        "  start: first
  nodes:
    first:
      action: {primary: execute, item_type: tool, item_id: t/echo, params: {n: \"${inputs.n}\"}}
      assign: {from_first: \"${result.n}\"}
      next: gate
    gate:
      action: {primary: execute, item_type: tool, item_id: t/gate}
      assign: {passed: \"${result.passed}\"}
      next: done
    done:
      type: return
",
    );
    assert_eq!(t.run(&["keys", "generate"]).code, 0);
    assert_eq!(t.run(&["sign", "**"]).code, 0);
    let out = t.exec("flows/gated", &json!({"n": 41}));
    assert_eq!(out.code, 1, "{}", out.show());
    assert_eq!(out.data()["node"], "gate");
    let run_id = out.data()["graph_run_id"].as_str().unwrap().to_owned();
    let states = t.states("flows/gated");
    assert_eq!(states.len(), 1);
    let text = std::fs::read_to_string(&states[0]).unwrap();
    assert!(text.starts_with("<!-- rye:signed:"), "{text}");
    assert!(
        text.contains("status: error\n") && text.contains("current_node: \"gate\"\n"),
        "{text}"
    );

    // Tampered: refused, nothing runs.
    std::fs::write(
        &states[0],
        text.replace("\"from_first\": 41", "\"from_first\": 42"),
    )
    .unwrap();
    let out = t.exec("flows/gated", &json!({"resume_run_id": run_id}));
    assert_eq!(out.code, 1, "{}", out.show());
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("Cannot resume run `{run_id}`")),
        "{error}"
    );
    std::fs::write(&states[0], &text).unwrap();

    // A run id that is no path segment never reaches the file system.
    let out = t.exec("flows/gated", &json!({"resume_run_id": "../../x"}));
    assert_eq!(out.code, 1);
    assert!(out.json["error"].as_str().unwrap().contains("is no run id"));

    // Resumed: the failed node runs again, the state of the first run carries on.
    std::fs::write(t.project().join("open"), "").unwrap();
    let out = t.exec("flows/gated", &json!({"resume_run_id": run_id}));
    ok(&out);
    let data = out.data();
    assert_eq!(data["graph_run_id"], run_id.as_str());
    assert_eq!(data["state"]["from_first"], 41);
    assert_eq!(data["state"]["passed"], true);
    assert_eq!(
        data["steps"], 4,
        "two steps, then the gate again and the return"
    );
    assert_eq!(t.states("flows/gated").len(), 1, "the same run's file");
    // A completed run is not resumed again.
    let out = t.exec("flows/gated", &json!({"resume_run_id": run_id}));
    assert_eq!(out.code, 1);
    assert!(
        out.json["error"]
            .as_str()
            .unwrap()
            .contains("completed already")
    );
}

#[test]
fn a_failing_action_leaves_nothing_running() {
    if !have_python() {
        return;
    }
    let t = Tree::new();
    let pids = t.root().join("pids");
    // The tool starts a detached sleep, writes its pid, and fails.
    t.write(
        "t/leaky.py",
        &py_tool(&format!(
            "import subprocess\np = subprocess.Popen(['sleep', '300'], start_new_session=True)\nopen({:?}, 'a').write(str(p.pid) + '\\n')\nsys.exit(1)",
            pids.to_str().unwrap()
        )),
    );
    t.graph(
        "leak",
        ALL,
        "  start: a
  nodes:
    a:
      type: foreach
      over: [1, 2]
      parallel: true
      action: {primary: execute, item_type: tool, item_id: t/leaky}
      next: b
    b:
      action: {primary: execute, item_type: tool, item_id: t/leaky}
      next: done
    done:
      type: return
",
    );
    let out = t.exec("flows/leak", &json!({}));
    let sleeps = common::Sleeps::from_file(&pids);
    assert_eq!(out.code, 1, "{}", out.show());
    assert_eq!(sleeps.0.len(), 3, "{}", out.show());
    assert!(
        sleeps.all_gone(),
        "a sleep a graph's tool started outlived the run"
    );
}

#[test]
fn the_example_graph_runs_end_to_end() {
    if !have_python()
        || !Command::new("bash")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    {
        return;
    }
    // A copy, so the run's state is written outside the repository.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    common::copy_tree(&examples.join("project"), &root.join("project"));
    common::copy_tree(&examples.join("user"), &root.join("user"));
    let run = |params: &str| {
        let out = Command::new(BIN)
            .args([
                "exec",
                "demo/greet_flow",
                root.join("project").to_str().unwrap(),
                "--user-space",
                root.join("user").to_str().unwrap(),
                "--params",
                params,
                "--format",
                "json",
            ])
            .env("HOME", &root)
            .env_remove("USER_SPACE")
            .env_remove("RYE_SYSTEM_SPACE")
            .env_remove("RYE_SIGNING_KEY_DIR")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (
            out.status.code(),
            serde_json::from_str::<Json>(&stdout).unwrap_or(Json::Null),
            format!("{stdout}\n{stderr}"),
        )
    };
    let (code, json, shown) = run(r#"{"names": ["Ada", "Grace", "Linus"]}"#);
    assert_eq!(code, Some(0), "{shown}");
    let data = &json["data"];
    assert_eq!(data["success"], true, "{shown}");
    assert_eq!(data["output"]["first"], "Hello, Ada!");
    let everyone: Vec<&Json> = data["output"]["everyone"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["greeting"])
        .collect();
    assert_eq!(
        everyone,
        [
            &json!("Hello, Ada!"),
            &json!("Hello, Grace!"),
            &json!("Hello, Linus!")
        ]
    );
    assert_eq!(data["output"]["farewell"], "Hello from bash!");
    assert_eq!(data["steps"], 4);
    // One name: the conditional edge goes straight to the other return.
    let (code, json, shown) = run(r#"{"names": ["Ada"]}"#);
    assert_eq!(code, Some(0), "{shown}");
    assert_eq!(json["data"]["output"], json!({"greeting": "Hello, Ada!"}));
    assert_eq!(json["data"]["steps"], 2);
}

#[test]
fn allow_unsigned_reaches_the_actions_and_a_projects_env_cannot_forge_it() {
    if !have_python() {
        return;
    }
    let t = Tree::signed();
    t.graph(
        "plain",
        ALL,
        "  start: a
  nodes:
    a:
      action: {primary: execute, item_type: tool, item_id: t/echo, params: {n: 5}}
      assign: {n: \"${result.n}\"}
      next: done
    done:
      type: return
",
    );
    let project = t.project();
    let p = project.to_str().unwrap();
    // Nothing is signed: the caller's --allow-unsigned lets the graph and its actions run.
    let out = t.run(&[
        "exec",
        "flows/plain",
        p,
        "--allow-unsigned",
        "--format",
        "json",
    ]);
    ok(&out);
    assert_eq!(out.data()["state"]["n"], 5);
    // The graph signed, its action's tool not: without the flag, the action is refused, and a
    // project's `.env` naming the runner's variable changes nothing.
    assert_eq!(t.run(&["keys", "generate"]).code, 0);
    assert_eq!(t.run(&["sign", "flows/plain"]).code, 0, "sign the graph");
    std::fs::write(project.join(".env"), "RYECHAIN_ALLOW_UNSIGNED=1\n").unwrap();
    let out = t.exec("flows/plain", &json!({}));
    assert_eq!(out.code, 1, "{}", out.show());
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.contains("Unsigned item") && error.contains("echo.py"),
        "{error}"
    );
}
