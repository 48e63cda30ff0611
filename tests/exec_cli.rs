//! End-to-end tests of `ryechain exec` (§12.3): the real binary runs real tools through the shipped
//! runtimes (python3, node, bash), in temporary projects or the bundled example tree. Each test
//! names the spec scenario it ports (§14) or the reference bug it pins (§15).
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects and spawn the binary"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::Sleeps;

use serde_json::{Value as Json, json};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

/// A program the test needs; `false` (with the reason printed) when it is missing.
fn have(program: &str) -> bool {
    let ok = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP: `{program}` is not installed on this machine; .ci/run installs it");
    }
    ok
}

struct Out {
    code: i32,
    json: Json,
    stdout: String,
    stderr: String,
}

/// Run `ryechain <args>` with an isolated user space (never the real home directory).
fn ryechain(user: &Path, args: &[&str]) -> Out {
    let out = Command::new(BIN)
        .args(args)
        .env("USER_SPACE", user)
        .env_remove("RYE_SYSTEM_SPACE")
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

/// A temporary project (`<tmp>/project`) and user space (`<tmp>/user`).
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("project/.ai/tools")).unwrap();
        std::fs::create_dir_all(dir.path().join("user/.ai")).unwrap();
        Tree { dir }
    }
    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }
    fn user(&self) -> PathBuf {
        self.dir.path().join("user")
    }
    /// Write `<project>/<rel>`.
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.project().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    /// `ryechain exec ITEM <project> --allow-unsigned <extra…>`.
    fn exec(&self, item: &str, extra: &[&str]) -> Out {
        let project = self.project();
        let mut args = vec!["exec", item, project.to_str().unwrap(), "--allow-unsigned"];
        args.extend_from_slice(extra);
        ryechain(&self.user(), &args)
    }
}

/// A python/script tool printing what it received: argv, stdin and selected env vars.
const ECHO_TOOL: &str = r#"__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
import json, os, sys
stdin = sys.stdin.read()
print(json.dumps({"argv": sys.argv, "stdin": stdin, "cwd": os.getcwd(),
                  "env": {k: os.environ.get(k) for k in ["PYTHONPATH", "PYTHONUNBUFFERED", "MY_VAR", "RYE_PYTHON"]}}))
"#;

#[test]
fn s14_59_collision_rule_and_params_json_on_stdin() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    let tool = t.write(".ai/tools/t/echo.py", ECHO_TOOL);
    let params = r#"{"command": "ls", "args": ["-l"], "x": 1, "é": "ü"}"#;
    let out = t.exec("t/echo", &["--params", params, "--no-lockfile"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json["status"], "success");
    let data = &out.json["data"];
    // The runtime's program ran the tool; the caller's command/args did not replace it (§8.5).
    assert_eq!(data["argv"][0], tool.to_str().unwrap());
    assert_eq!(data["argv"][1], "--project-path");
    // params_json is Python's json.dumps of the caller parameters, byte for byte (§8.2.6); the
    // caller's command/args reach the tool there and only there (§8.5).
    assert_eq!(
        data["stdin"],
        r#"{"command": "ls", "args": ["-l"], "x": 1, "\u00e9": "\u00fc"}"#
    );
    assert_eq!(
        out.json["chain"],
        json!([
            "t/echo",
            "rye/core/runtimes/python/script",
            "rye/core/primitives/subprocess"
        ])
    );
    assert!(out.json["metadata"]["duration_ms"].is_u64());
}

/// A project runtime with an anchor (cwd `{anchor_path}`) that hands the context to a bash tool
/// as arguments and the parameters on stdin; the tool prints what it got.
const ANCHORED_RUNTIME: &str = r#"version: "1.0.0"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
anchor:
  enabled: true
  mode: always
  root: tool_dir
  cwd: "{anchor_path}"
config:
  command: /bin/bash
  args: ["{tool_path}", "{anchor_path}", "{tool_dir}", "{project_path}"]
  input_data: "{params_json}"
  timeout: 300
"#;

const SHOW_TOOL: &str = r#"__version__="1.0.0"
__executor_id__="t/anchored-rt"
params=$(cat)
printf '{"argv": ["%s", "%s", "%s"], "cwd": "%s", "params": %s}\n' "$1" "$2" "$3" "$PWD" "$params"
"#;

/// §8.2.6 as the reference passes it: `params_json` holds every caller parameter except `cwd`,
/// `env` and `timeout` (and, unlike the reference, keeps `command`/`args`: §8.5), so caller keys
/// named like the context (`anchor_path`, `tool_dir`, `project_path`) reach the tool as data —
/// while the context the chain runs with (arguments, working directory) stays ryechain's own
/// (§15.24).
#[test]
fn s8_2_6_params_json_keeps_context_named_caller_keys_as_data() {
    if !have("bash") {
        return;
    }
    let t = Tree::new();
    t.write(".ai/tools/t/anchored-rt.yaml", ANCHORED_RUNTIME);
    let tool = t.write(".ai/tools/t/show.sh", SHOW_TOOL);
    let params = r#"{"anchor_path":"/evil","tool_dir":"x","project_path":"y","n":1,"command":"c","timeout":5}"#;
    let out = t.exec("t/show", &["--params", params, "--no-lockfile"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let data = &out.json["data"];
    assert_eq!(
        data["params"],
        json!({"anchor_path": "/evil", "tool_dir": "x", "project_path": "y", "n": 1, "command": "c"}),
        "{}",
        out.stdout
    );
    let keys: Vec<&str> = data["params"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["anchor_path", "tool_dir", "project_path", "n", "command"]
    );
    let dir = tool.parent().unwrap().to_str().unwrap();
    let project = t.project();
    assert_eq!(data["argv"], json!([dir, dir, project.to_str().unwrap()]));
    let cwd = PathBuf::from(data["cwd"].as_str().unwrap());
    assert_eq!(
        cwd.canonicalize().unwrap(),
        Path::new(dir).canonicalize().unwrap()
    );
}

#[test]
fn caller_values_are_data_never_templates() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    t.write(".ai/tools/t/echo.py", ECHO_TOOL);
    let params = json!({"a": "${HOME}", "b": "{tool_path}", "c": "$(id)", "d": "{params_json}"});
    let out = t.exec(
        "t/echo",
        &["--params", &params.to_string(), "--no-lockfile"],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let stdin: Json = serde_json::from_str(out.json["data"]["stdin"].as_str().unwrap()).unwrap();
    assert_eq!(
        stdin, params,
        "parameters must reach the tool byte for byte"
    );
}

#[test]
fn params_from_a_file_and_bad_params_are_clear_errors() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    t.write(".ai/tools/t/echo.py", ECHO_TOOL);
    let file = t.write("params.json", r#"{"from": "file"}"#);
    let at = format!("@{}", file.display());
    let out = t.exec("t/echo", &["--params", &at, "--no-lockfile"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json["data"]["stdin"], r#"{"from": "file"}"#);

    // Bad parameters are a usage error (exit 2, issue 35 item 8), still answered as a response.
    for bad in ["{not json", "[1, 2]", "\"text\""] {
        let out = t.exec("t/echo", &["--params", bad]);
        assert_eq!(out.code, 2, "{bad}: {}", out.stdout);
        assert_eq!(out.json["status"], "error", "{bad}");
        assert!(
            out.json["error"].as_str().unwrap().contains("--params"),
            "{bad}: {}",
            out.json["error"]
        );
    }
    let out = t.exec("t/echo", &["--params", "@/nonexistent/params.json"]);
    assert_eq!(out.code, 2);
    assert_eq!(out.json["status"], "error");
}

#[test]
fn usage_errors_exit_2() {
    let t = Tree::new();
    for bad in [
        ["--timeout", "0"],
        ["--timeout", "abc"],
        ["--max-output", "lots"],
    ] {
        let out = t.exec("t/x", &bad);
        assert_eq!(out.code, 2, "{bad:?}: {}", out.stderr);
        assert!(out.stderr.contains(bad[0]), "{bad:?}: {}", out.stderr);
    }
}

#[test]
fn unknown_items_exit_1_and_hostile_ids_exit_2() {
    let t = Tree::new();
    let out = t.exec("t/missing", &[]);
    assert_eq!(out.code, 1);
    assert_eq!(out.json["status"], "error");
    assert_eq!(out.json["error"], "Tool not found: t/missing");
    // An id that can never name a file is a usage error, as in every other command.
    for hostile in ["../etc/passwd", "/etc/passwd", "a//b", "a/./b"] {
        let out = t.exec(hostile, &[]);
        assert_eq!(out.code, 2, "{hostile}");
        assert_eq!(out.json["status"], "error", "{hostile}");
        assert!(
            out.json["error"]
                .as_str()
                .unwrap()
                .starts_with("Invalid item id"),
            "{hostile}: {}",
            out.json["error"]
        );
    }
}

/// §15.25: without `input_data` the tool's stdin is null, never ryechain's own stdin — here a pipe
/// the test holds open, which `cat` would wait on until the timeout if it were inherited.
#[test]
fn s15_25_null_stdin_even_when_ours_is_an_open_pipe() {
    if !have("cat") {
        return;
    }
    let t = Tree::new();
    t.write(
        ".ai/tools/t/cat-rt.yaml",
        "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\nconfig:\n  command: cat\n",
    );
    t.write(
        ".ai/tools/t/cat.yaml",
        "version: \"1.0.0\"\nexecutor_id: t/cat-rt\nconfig:\n  command: cat\n",
    );
    let project = t.project();
    let mut child = Command::new(BIN)
        .args([
            "exec",
            "t/cat",
            project.to_str().unwrap(),
            "--allow-unsigned",
            "--no-lockfile",
            "--timeout",
            "20",
        ])
        .env("USER_SPACE", t.user())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn ryechain");
    let keep_open = child.stdin.take();
    let out = child.wait_with_output().expect("ryechain finishes");
    drop(keep_open);
    let json: Json = serde_json::from_slice(&out.stdout).expect("JSON response");
    assert_eq!(json["status"], "success", "{json}");
    assert_eq!(json["data"]["stdout"], "");
    assert_eq!(json["data"]["return_code"], 0);
}

/// Single-item loading: `exec` reads the candidates of its chain, never the rest of the tree — a
/// FIFO elsewhere under `tools/` (which a whole-tree read would block on) is never opened.
#[test]
fn exec_reads_only_its_chain() {
    if !have("python3") || !have("mkfifo") {
        return;
    }
    let t = Tree::new();
    t.write(".ai/tools/t/echo.py", ECHO_TOOL);
    let fifo = t.project().join(".ai/tools/zz/blocker.py");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = t.exec("t/echo", &["--no-lockfile"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let out = t.exec("t/echo", &["--dry-run"]);
    assert_eq!(out.json["status"], "validation_passed");
}

/// §14.20: without a PATH the project is the current directory.
#[test]
fn s14_20_project_path_defaults_to_the_current_directory() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    t.write(".ai/tools/t/echo.py", ECHO_TOOL);
    let out = Command::new(BIN)
        .args(["exec", "t/echo", "--allow-unsigned", "--no-lockfile"])
        .current_dir(t.project())
        .env("USER_SPACE", t.user())
        .stdin(Stdio::null())
        .output()
        .expect("spawn ryechain");
    let json: Json = serde_json::from_slice(&out.stdout).expect("JSON response");
    assert_eq!(json["status"], "success", "{json}");
    let project = t.project().canonicalize().unwrap();
    let argv_project = PathBuf::from(json["data"]["argv"][2].as_str().unwrap());
    assert_eq!(argv_project.canonicalize().unwrap(), project);
}

#[test]
fn s14_13_tool_without_executor_is_unknown_primitive() {
    let t = Tree::new();
    t.write(
        ".ai/tools/t/lonely.py",
        "__version__ = \"1.0.0\"\n__executor_id__ = None\nprint('ran')\n",
    );
    let out = t.exec("t/lonely", &["--params", r#"{"arg1": "value1"}"#]);
    assert_eq!(out.code, 1);
    assert_eq!(out.json["status"], "error");
    assert_eq!(out.json["error"], "Unknown primitive: t/lonely");
}

/// Issue 35 item 3: a script that forgot `__executor_id__` (top-level code, no executor) is an
/// error in `lint` and in `chain` (exit 1, lint's words), where a library module beside it is
/// not; `exec` refuses it as the reference does.
#[test]
fn a_script_that_forgot_its_executor_is_an_error_in_lint_chain_and_exec() {
    let t = Tree::new();
    t.write(
        ".ai/tools/demo/hello.py",
        "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__category__ = \"demo\"\n\nimport json\n\nprint(json.dumps({\"hello\": \"world\"}))\n",
    );
    t.write(
        ".ai/tools/demo/util.py",
        "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__category__ = \"demo\"\n\nimport json\n\ndef dump(x):\n    return json.dumps(x)\n",
    );
    let project = t.project();
    let p = project.to_str().unwrap();
    let lint = ryechain(
        &t.user(),
        &["lint", p, "--no-progress", "--ignore", "integrity"],
    );
    assert_eq!(lint.code, 1, "{}", lint.stdout);
    assert!(
        lint.stdout
            .contains("error[unknown-primitive]: Unknown primitive: demo/hello")
    );
    assert!(!lint.stdout.contains("demo/util"), "{}", lint.stdout);

    let chain = ryechain(&t.user(), &["chain", "demo/hello", p]);
    assert_eq!(chain.code, 1, "{}", chain.stdout);
    assert!(
        chain
            .stdout
            .contains("error[unknown-primitive]: Unknown primitive: demo/hello"),
        "{}",
        chain.stdout
    );
    assert!(chain.stdout.contains("rye/core/runtimes/python/script"));
    assert!(!chain.stdout.contains("validation passed"));
    let util = ryechain(&t.user(), &["chain", "demo/util", p]);
    assert_eq!(util.code, 0, "{}", util.stdout);

    let out = t.exec("demo/hello", &[]);
    assert_eq!(out.code, 1);
    assert_eq!(out.json["error"], "Unknown primitive: demo/hello");
}

#[test]
fn s12_4_dry_run_is_the_chain_json_answer() {
    let t = Tree::new();
    t.write(".ai/tools/t/echo.py", ECHO_TOOL);
    let project = t.project();
    let p = project.to_str().unwrap();
    let dry = ryechain(&t.user(), &["exec", "t/echo", p, "--dry-run"]);
    let chain = ryechain(&t.user(), &["chain", "t/echo", p, "--json"]);
    assert_eq!(dry.code, 0, "{}", dry.stdout);
    assert_eq!(dry.json["status"], "validation_passed");
    // The same answer as `chain --json`, plus the whole call's duration (§12.2).
    let mut dry = dry.json;
    assert!(dry["metadata"]["duration_ms"].is_u64());
    dry.as_object_mut().unwrap().remove("metadata");
    assert_eq!(dry, chain.json);
    // Seed 000's shape (ids, pairs) and seed 003's texts, plus what the reference's answer has:
    // each element's space and integrity hash (DESIGN.md output decision).
    assert_eq!(dry["message"], "Tool chain validation passed (dry run)");
    assert_eq!(
        dry["chain"],
        serde_json::json!([
            "t/echo",
            "rye/core/runtimes/python/script",
            "rye/core/primitives/subprocess"
        ])
    );
    let pairs = dry["validated_pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[0]["child"], "t/echo");
    assert_eq!(pairs[0]["parent"], "rye/core/runtimes/python/script");
    let detail = dry["chain_detail"].as_array().unwrap();
    let spaces: Vec<_> = detail
        .iter()
        .map(|d| d["space"].as_str().unwrap())
        .collect();
    assert_eq!(spaces, ["project", "system:ryechain", "system:ryechain"]);
    // The hash the lockfile records for the tool (§10.2: the tool text as hashed).
    let out = ryechain(&t.user(), &["lock", "t/echo", p]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lock: Json = serde_json::from_str(
        &std::fs::read_to_string(project.join(".ai/lockfiles/t/echo@1.0.0.lock.json")).unwrap(),
    )
    .unwrap();
    for (d, entry) in detail
        .iter()
        .zip(lock["resolved_chain"].as_array().unwrap())
    {
        assert_eq!(d["integrity"], entry["integrity"], "{d}");
        assert_eq!(d["integrity"].as_str().unwrap().len(), 64);
    }
}

#[test]
fn s14_62_unsigned_tool_is_refused_before_anything_runs() {
    let t = Tree::new();
    let marker = t.project().join("ran");
    t.write(
        ".ai/tools/t/touch.py",
        &format!(
            "__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\nopen({:?}, 'w').write('x')\n",
            marker.display().to_string()
        ),
    );
    let project = t.project();
    let out = ryechain(&t.user(), &["exec", "t/touch", project.to_str().unwrap()]);
    assert_eq!(out.code, 1);
    let tool = project.join(".ai/tools/t/touch.py");
    assert_eq!(
        out.json["error"],
        format!("Unsigned item: {}", tool.display())
    );
    assert!(!marker.exists(), "nothing may run after a refusal");
}

#[test]
fn timeout_kills_the_whole_process_group_and_keeps_partial_output() {
    if !have("python3") || !have("sleep") {
        return;
    }
    let t = Tree::new();
    let pids = t.project().join("pids");
    t.write(
        ".ai/tools/t/hang.py",
        &format!(
            r#"__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
import os, subprocess, sys, time
child = subprocess.Popen(["sleep", "100"])
open({:?}, "w").write(f"{{os.getpid()}} {{child.pid}}")
print("partial output", flush=True)
time.sleep(100)
"#,
            pids.display().to_string()
        ),
    );
    let out = t.exec("t/hang", &["--timeout", "1", "--no-lockfile"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json["status"], "error");
    let err = out.json["error"].as_str().unwrap();
    assert!(err.contains("timed out after 1 second"), "{err}");
    assert!(
        out.json.to_string().contains("partial output"),
        "the output captured before the timeout is returned: {}",
        out.stdout
    );
    let pids = std::fs::read_to_string(&pids).expect("the tool recorded its pids");
    for pid in pids.split_whitespace() {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        // A killed process may linger for a moment as a zombie of init; give it a little time.
        let mut alive = proc.exists();
        for _ in 0..50 {
            if !alive {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            let stat = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
            alive = proc.exists() && !stat.contains(") Z ");
        }
        assert!(
            !alive,
            "process {pid} of the tool's group survived the timeout"
        );
    }
}

#[test]
fn floods_non_utf8_huge_json_and_failing_exit_codes_are_clear() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    let head = "__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\nimport json, sys\n";
    t.write(
        ".ai/tools/t/flood.py",
        &format!("{head}sys.stdout.write('x' * (20 * 1024 * 1024))\n"),
    );
    t.write(
        ".ai/tools/t/bytes.py",
        &format!("{head}sys.stdout.buffer.write(b'\\xff\\xfe ok')\n"),
    );
    t.write(
        ".ai/tools/t/huge.py",
        &format!("{head}print(json.dumps({{'items': ['y' * 100] * 50000}}))\n"),
    );
    t.write(
        ".ai/tools/t/fails.py",
        &format!(
            "{head}print(json.dumps({{'partial': 1}}))\nsys.stderr.write('it broke')\nsys.exit(3)\n"
        ),
    );

    let out = t.exec("t/flood", &["--max-output", "1048576", "--no-lockfile"]);
    assert!(
        out.stdout.len() < 3 * 1024 * 1024,
        "output is capped: {} bytes",
        out.stdout.len()
    );
    assert!(
        out.stdout.contains("truncated"),
        "the cap is reported: {}",
        &out.stdout[out.stdout.len().saturating_sub(400)..]
    );

    let out = t.exec("t/bytes", &["--no-lockfile"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.json["data"]["stdout"]
            .as_str()
            .unwrap()
            .ends_with(" ok")
    );

    let out = t.exec("t/huge", &["--no-lockfile"]);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.json["data"]["items"].as_array().map(Vec::len),
        Some(50000)
    );

    let out = t.exec("t/fails", &["--no-lockfile"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.json["status"], "error");
    assert_eq!(out.json["error"], "it broke");
    assert_eq!(out.json["data"]["partial"], 1);
}

#[test]
fn s10_7_lockfile_written_after_success_then_checked() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    let tool = t.write(".ai/tools/t/echo.py", ECHO_TOOL);
    let lock = t.project().join(".ai/lockfiles/t/echo@1.0.0.lock.json");

    let out = t.exec("t/echo", &["--no-lockfile"]);
    assert_eq!(out.code, 0);
    assert!(!lock.exists(), "--no-lockfile writes nothing");

    let out = t.exec("t/echo", &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.json["metadata"]["lockfile_created"], true);
    assert!(lock.exists());
    // Nothing but the lockfile was written (the user space stays untouched too).
    let mut written = Vec::new();
    let mut stack = vec![t.dir.path().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                written.push(e.path());
            }
        }
    }
    written.sort();
    assert_eq!(written, vec![lock.clone(), tool.clone()]);

    let out = t.exec("t/echo", &[]);
    assert_eq!(out.json["metadata"]["lockfile_used"], true);
    assert_eq!(out.json["metadata"]["lockfile_created"], false);

    std::fs::write(&tool, format!("{ECHO_TOOL}# edited\n")).unwrap();
    let out = t.exec("t/echo", &[]);
    assert_eq!(out.code, 1);
    // The reference's text, then the lockfile and the command that fixes it.
    assert_eq!(
        out.json["error"],
        format!(
            "Lockfile integrity mismatch for t/echo. Re-sign and delete stale lockfile. (lockfile: {}; delete it, or rewrite it from the current files with `ryechain lock t/echo --force`)",
            lock.display()
        )
    );
    let out = t.exec("t/echo", &["--no-lockfile"]);
    assert_eq!(out.code, 0, "--no-lockfile skips the check too");
}

#[test]
fn s11_2_trace_events() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    t.write(".ai/tools/t/echo.py", ECHO_TOOL);
    let user_tool = t.user().join(".ai/tools/t/echo.py");
    std::fs::create_dir_all(user_tool.parent().unwrap()).unwrap();
    std::fs::write(&user_tool, ECHO_TOOL).unwrap();
    let out = t.exec("t/echo", &["--trace", "--no-lockfile"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let trace = out.json["trace"].as_array().expect("trace");
    let resolve: Vec<&Json> = trace.iter().filter(|e| e["step"] == "resolve").collect();
    assert_eq!(resolve.len(), 3);
    assert_eq!(resolve[0]["space"], "project");
    assert_eq!(
        resolve[0]["shadowed"],
        json!([{"path": user_tool.display().to_string(), "space": "user"}])
    );
    let verify: Vec<&Json> = trace
        .iter()
        .filter(|e| e["step"] == "verify_integrity")
        .collect();
    assert!(!verify.is_empty());
    assert_eq!(verify[0]["item_id"], "t/echo");
    assert_eq!(
        verify[0]["verified"], false,
        "unsigned, accepted by --allow-unsigned"
    );
    let env: Vec<&Json> = trace
        .iter()
        .filter(|e| e["step"] == "resolve_env")
        .collect();
    let runtime = env
        .iter()
        .find(|e| e["contributed_by"] == "rye/core/runtimes/python/script")
        .expect("the runtime contributes env");
    assert_eq!(
        runtime["keys"],
        json!(["PROJECT_VENV_PYTHON", "PYTHONUNBUFFERED", "RYE_PYTHON"])
    );
}

#[test]
fn s5_1_tool_env_overrides_runtime_env() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    t.write(
        ".ai/tools/t/env.py",
        &ECHO_TOOL.replace(
            "import json",
            "ENV_CONFIG = {\"env\": {\"PYTHONUNBUFFERED\": \"0\", \"MY_VAR\": \"${PYTHONUNBUFFERED}-x\"}}\nimport json",
        ),
    );
    let out = t.exec("t/env", &["--no-lockfile"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.json["data"]["env"]["PYTHONUNBUFFERED"], "0");
    // Static env is expanded in mapping order against the env built so far.
    assert_eq!(out.json["data"]["env"]["MY_VAR"], "0-x");
}

#[test]
fn s14_60_config_resolve_reaches_the_tool() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    t.write(
        ".ai/tools/t/cfg.py",
        &ECHO_TOOL.replace(
            "import json",
            "CONFIG_RESOLVE = {\"path\": \"demo.yaml\", \"mode\": \"deep_merge\"}\nimport json",
        ),
    );
    t.write(".ai/config/demo.yaml", "b:\n  y: 2\n");
    std::fs::create_dir_all(t.user().join(".ai/config")).unwrap();
    std::fs::write(t.user().join(".ai/config/demo.yaml"), "a: 1\nb:\n  x: 1\n").unwrap();
    let out = t.exec(
        "t/cfg",
        &[
            "--no-lockfile",
            "--params",
            r#"{"resolved_config": "caller"}"#,
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    let stdin: Json = serde_json::from_str(out.json["data"]["stdin"].as_str().unwrap()).unwrap();
    assert_eq!(
        stdin["resolved_config"],
        json!({"a": 1, "b": {"x": 1, "y": 2}})
    );
}

#[test]
fn s14_61_anchor_puts_the_tool_dir_on_pythonpath() {
    if !have("python3") {
        return;
    }
    let t = Tree::new();
    t.write(".ai/tools/pkg/echo.py", ECHO_TOOL);
    t.write(".ai/tools/pkg/__init__.py", "");
    t.write(".ai/tools/plain/echo.py", ECHO_TOOL);
    let out = t.exec("pkg/echo", &["--no-lockfile"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let dir = t.project().join(".ai/tools/pkg");
    let pythonpath = out.json["data"]["env"]["PYTHONPATH"].as_str().unwrap();
    // The tool dir comes first; the embedded runtime's `lib` has no directory on disk, so it
    // adds nothing after it.
    assert_eq!(
        pythonpath.split(':').next(),
        Some(dir.to_str().unwrap()),
        "{pythonpath}"
    );
    let out = t.exec("plain/echo", &["--no-lockfile"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.json["data"]["env"]["PYTHONPATH"], Json::Null);
}

/// The runnable demo tools of `examples/`, signed and trusted through `examples/user`.
fn example(item: &str, params: &str) -> Out {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let project = root.join("project");
    let user = root.join("user");
    ryechain(
        &user,
        &[
            "exec",
            item,
            project.to_str().unwrap(),
            "--params",
            params,
            "--no-lockfile",
        ],
    )
}

/// §13 and §15.32: every bundled runtime runs its example tool end to end — the bash runtime too,
/// which the reference could not run (it executed `/bin/bash -c {command}` and `{command}` is the
/// runtime's own `/bin/bash` under the collision rule).
#[test]
fn s13_s15_32_shipped_runtimes_run_the_example_tools() {
    let mut cases = vec![];
    if have("python3") {
        cases.push(("demo/greet_script", "python/script"));
        cases.push(("demo/greet_function", "python/function"));
        cases.push(("demo/greet_async", "python/function (async)"));
    }
    if have("node") {
        cases.push(("demo/greet_node", "node/node"));
    }
    if have("bash") {
        cases.push(("demo/greet_bash", "bash/bash"));
    }
    for (item, runtime) in cases {
        let out = example(item, r#"{"name": "Ada"}"#);
        assert_eq!(out.code, 0, "{item}: {}\n{}", out.stdout, out.stderr);
        assert_eq!(out.json["status"], "success", "{item}");
        assert_eq!(out.json["data"]["runtime"], runtime, "{item}");
        assert_eq!(out.json["data"]["params"], json!({"name": "Ada"}), "{item}");
    }
}

/// A CommonJS tool printing its own script path (`process.argv[1]`) and its parameters.
const NODE_TOOL: &str = r#"const __version__ = "1.0.0";
const __executor_id__ = "EXECUTOR";
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  console.log(JSON.stringify({ script: process.argv[1], from: "the tool", params: JSON.parse(input) }));
});
"#;

/// §13 node/node (and the reference-era id `node_runtime`, whose reference YAML passed no
/// arguments, §15.40): node runs the tool file itself, and the tool's own output comes back.
#[test]
fn s13_s15_40_node_runtimes_run_the_tool_file() {
    if !have("node") {
        return;
    }
    let t = Tree::new();
    for (name, runtime) in [
        ("nested", "rye/core/runtimes/node/node"),
        ("flat", "rye/core/runtimes/node_runtime"),
    ] {
        let tool = t.write(
            &format!(".ai/tools/t/{name}.js"),
            &NODE_TOOL.replace("EXECUTOR", runtime),
        );
        let out = t.exec(
            &format!("t/{name}"),
            &["--params", r#"{"n": 1}"#, "--no-lockfile"],
        );
        assert_eq!(out.code, 0, "{name}: {}\n{}", out.stdout, out.stderr);
        assert_eq!(
            out.json["data"],
            json!({"script": tool.to_str().unwrap(), "from": "the tool", "params": {"n": 1}}),
            "{name}"
        );
    }
}

/// A run that did not run the tool is never a success: a runtime like the reference's
/// `node_runtime.yaml` (`args: []`, §15.40) started `node` with the parameters on stdin as its
/// script, which printed nothing and answered success. Now the planner refuses before spawning.
#[test]
fn s15_40_a_chain_that_never_names_the_tool_is_refused_before_spawning() {
    let t = Tree::new();
    let marker = t.project().join("ran");
    t.write(
        ".ai/tools/t/node_rt.yaml",
        "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\nconfig:\n  command: node\n  args: []\n  input_data: \"{params_json}\"\n",
    );
    let tool = t.write(
        ".ai/tools/t/hi.js",
        &format!(
            "const __version__ = \"1.0.0\";\nconst __executor_id__ = \"t/node_rt\";\nrequire(\"fs\").writeFileSync({:?}, \"x\");\nconsole.log(\"{{}}\");\n",
            marker.display().to_string()
        ),
    );
    let out = t.exec("t/hi", &["--no-lockfile"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json["status"], "error");
    let err = out.json["error"].as_str().unwrap();
    assert!(
        err.starts_with(&format!(
            "The chain of t/hi never runs t/hi: its command line `node` does not name the tool file {}",
            tool.display()
        )),
        "{err}"
    );
    assert!(!marker.exists(), "nothing may run after a refusal");
}

/// Calling a runtime directly runs no tool: its `{tool_path}` is its own YAML file, which
/// `/bin/bash` (or node, or python) would run as a script.
#[test]
fn calling_a_runtime_directly_is_refused() {
    let t = Tree::new();
    for id in [
        "rye/core/runtimes/bash_runtime",
        "rye/core/runtimes/node/node",
    ] {
        let out = t.exec(id, &["--no-lockfile"]);
        assert_eq!(out.code, 1, "{id}: {}", out.stdout);
        assert_eq!(out.json["status"], "error", "{id}");
        let err = out.json["error"].as_str().unwrap();
        assert!(
            err.starts_with(&format!("`{id}` is a runtime: it runs the tools")),
            "{id}: {err}"
        );
        assert!(out.json.get("data").is_none(), "{id}: nothing ran");
    }
}

/// Ways a tool leaves a `sleep 300` behind, writing its pid to `$PIDS`: in the background (same
/// process group), as a daemon in its own session, double-forked, and double-forked into its own
/// session (re-parented twice, in no group of the tool's).
const LEFT_BEHIND: [&str; 4] = [
    "sleep 300 & echo $! > \"$PIDS\"",
    "setsid sleep 300 >/dev/null 2>&1 & echo $! > \"$PIDS\"",
    "( (sleep 300 >/dev/null 2>&1 & echo $! > \"$PIDS\") & )",
    "( (setsid sleep 300 >/dev/null 2>&1 & echo $! > \"$PIDS\") & )",
];

/// Run a bash tool that starts `start`, waits until the pid file is written, then runs `end`;
/// assert that the sleep it left is gone once `ryechain exec` has answered.
fn assert_nothing_outlives(start: &str, end: &str, extra: &[&str], want_status: &str) {
    let t = Tree::new();
    let pids = t.project().join("pids");
    t.write(
        ".ai/tools/t/leave.sh",
        &format!(
            "__version__=\"1.0.0\"\n__executor_id__=\"rye/core/runtimes/bash/bash\"\nPIDS={:?}\n{start}\nwhile [ ! -s \"$PIDS\" ]; do sleep 0.01; done\n{end}\n",
            pids.display().to_string()
        ),
    );
    let mut args = vec!["--no-lockfile"];
    args.extend_from_slice(extra);
    let out = t.exec("t/leave", &args);
    let sleeps = Sleeps::from_file(&pids);
    assert_eq!(
        out.json["status"], want_status,
        "{start} {extra:?}: {}",
        out.stdout
    );
    assert_eq!(sleeps.0.len(), 1, "{start} {extra:?}: {}", out.stdout);
    assert!(
        sleeps.all_gone(),
        "{start} {extra:?}: the sleep {:?} outlived the run",
        sleeps.0
    );
}

/// §9.1.6, issue 30 item 3: nothing a tool starts outlives its run — after a normal exit, whether it
/// stayed in the tool's process group or left it (`setsid`, double fork). With `--no-cgroup` the
/// process group and the orphans re-parented to ryechain (a subreaper) are all there is; by
/// default a cgroup holds them too where one can be made.
#[test]
fn nothing_a_tool_starts_outlives_a_normal_exit() {
    if !have("bash") || !have("setsid") || !have("sleep") || !Path::new("/proc/self").exists() {
        return;
    }
    for start in LEFT_BEHIND {
        // A bound on a tool that never writes its pid file (the runtime's is 300 s).
        for extra in [
            &["--no-cgroup", "--timeout", "30"][..],
            &["--timeout", "30"],
        ] {
            assert_nothing_outlives(start, "exit 0", extra, "success");
        }
    }
}

/// The same after a timeout (§9.1.6): a `setsid` daemon used to survive it (only the group was killed).
#[test]
fn nothing_a_tool_starts_outlives_a_timeout() {
    if !have("bash") || !have("setsid") || !have("sleep") || !Path::new("/proc/self").exists() {
        return;
    }
    for start in LEFT_BEHIND {
        for extra in [&["--no-cgroup", "--timeout", "1"][..], &["--timeout", "1"]] {
            assert_nothing_outlives(start, "sleep 100", extra, "error");
        }
    }
}

/// Issue 35 item 5: `ryechain init` makes a project and `ryechain new tool ID --runtime R` a tool
/// from R's template, as `cargo new`: each new tool lints without an error and, once signed,
/// runs and hands its parameters back. A second tool of one id is refused, and so is `new`
/// outside any project.
#[test]
fn init_and_new_tool_make_tools_that_lint_and_run_after_sign() {
    if !have("python3") || !have("node") || !have("bash") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = |cwd: &Path, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ryechain"))
            .args(args)
            .current_dir(cwd)
            .env("HOME", &home)
            .env_remove("USER_SPACE")
            .env_remove("RYE_SYSTEM_SPACE")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    assert_eq!(run(&project, &["init"]).0, Some(0));
    assert!(project.join(".ai/config/ryechain.yaml").is_file());
    assert_eq!(run(&project, &["init"]).0, Some(2), "already a project");
    let runtimes = ["python", "function", "node", "bash"];
    for rt in runtimes {
        let (code, out, err) = run(
            &project,
            &["new", "tool", &format!("acme/t_{rt}"), "--runtime", rt],
        );
        assert_eq!(code, Some(0), "{out}{err}");
    }
    let (code, out, err) = run(&project, &["lint", "--format", "json", "--no-cache"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let report: Json = serde_json::from_str(&out).unwrap();
    let rules: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules, ["unsigned-item"; 4],
        "only the signatures are missing"
    );
    assert_eq!(run(&project, &["keys", "generate"]).0, Some(0));
    assert_eq!(run(&project, &["sign", "acme/*"]).0, Some(0));
    // From a subfolder: the project is found upwards.
    let sub = project.join(".ai/tools/acme");
    for rt in runtimes {
        let id = format!("acme/t_{rt}");
        let (code, out, err) = run(
            &sub,
            &["exec", &id, "--params", r#"{"n": 1}"#, "--format", "json"],
        );
        assert_eq!(code, Some(0), "{id}: {out}{err}");
        let answer: Json = serde_json::from_str(&out).unwrap();
        assert_eq!(
            answer["data"],
            json!({"ok": true, "params": {"n": 1}}),
            "{id}"
        );
    }
    let (code, _, err) = run(&project, &["new", "tool", "acme/t_bash"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("acme/t_bash already exists"), "{err}");
    let (code, _, err) = run(tmp.path(), &["new", "tool", "x/y"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("could not find `.ai/`") && err.contains("ryechain init"),
        "{err}"
    );
}
