//! The MCP runtimes end to end (§13, issue 33 item 2): `ryechain exec` of tools whose chains run
//! `ryechain mcp-call` against a server nobody on the project wrote — built with the official MCP
//! Python SDK (`tests/mcp_servers/sdk_server.py`, run by the virtualenv `.ci/run` makes at
//! `target/mcp-venv`) — over stdio and over streamable HTTP on 127.0.0.1: structured and text
//! data, an MCP tool error, a crash in the middle of a call, a server that never answers
//! `initialize` (nothing left running), server config paths out of their space and a tampered
//! server config (refused before anything is spawned), `rye_execute` of the MCP server, and the
//! example project's MCP tool.
//!
//! Without the SDK the tests skip and say why, unless `RYECHAIN_REQUIRE_MCP_CLIENTS=1` (set by
//! `.ci/run`) or `CI=true`, which turn a missing peer into a failure.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests spawn ryechain and its peers and write temporary projects"
)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};

use common::project::{BIN, TempProject, mcp_sdk};

/// How long a peer may take to start or a process to be reaped here (a debug build on a busy
/// machine); nothing is timed against it.
const PATIENCE: Duration = Duration::from_secs(60);

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn server_script() -> PathBuf {
    repo().join("tests/mcp_servers/sdk_server.py")
}

/// The venv's python when the SDK is installed; otherwise skip (or fail where it is required).
fn sdk() -> Option<PathBuf> {
    mcp_sdk("mcp.server.mcpserver")
}

/// A temporary project with a user space (its home) holding a fresh trusted key.
struct Project {
    p: TempProject,
    python: PathBuf,
}

impl std::ops::Deref for Project {
    type Target = TempProject;
    fn deref(&self) -> &TempProject {
        &self.p
    }
}

struct Out {
    code: i32,
    json: Json,
    stdout: String,
    stderr: String,
}

impl Project {
    fn new(python: PathBuf) -> Project {
        Project {
            p: TempProject::keyed(),
            python,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// A file under the temporary directory (outside every space).
    fn scratch(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// `.ai/tools/mcp/servers/<name>.yaml` with this `config` body (YAML, indented by two).
    fn server(&self, name: &str, config: &str) {
        self.write(
            &format!(".ai/tools/mcp/servers/{name}.yaml"),
            &format!(
                "tool_type: mcp_server\nexecutor_id: null\ncategory: mcp/servers\nversion: \"1.0.0\"\ndescription: \"test server {name}\"\nconfig:\n{config}"
            ),
        );
    }

    /// A stdio server config running the SDK peer with `args`.
    fn stdio_server(&self, name: &str, args: &[&str], extra: &str) {
        let mut list = vec![format!("{:?}", server_script().display().to_string())];
        list.extend(args.iter().map(|a| format!("{a:?}")));
        self.server(
            name,
            &format!(
                "  transport: stdio\n  command: {:?}\n  args: [{}]\n{extra}",
                self.python.display().to_string(),
                list.join(", ")
            ),
        );
    }

    /// `.ai/tools/mcp/<server>/<tool>.yaml` calling `tool_name` of server `mcp/servers/<server>`.
    fn tool(&self, server: &str, tool: &str, runtime: &str, extra: &str) {
        self.write(
            &format!(".ai/tools/mcp/{server}/{tool}.yaml"),
            &format!(
                "tool_type: mcp\nexecutor_id: rye/core/runtimes/mcp/{runtime}\ncategory: mcp/{server}\nversion: \"1.0.0\"\ndescription: \"{tool} of {server}\"\nconfig:\n  server: mcp/servers/{server}\n  server_config_path: \"{{project_path}}/.ai/tools/mcp/servers/{server}.yaml\"\n  tool_name: {tool}\n{extra}"
            ),
        );
    }

    fn sign(&self) {
        self.ok(&["sign", "mcp/**"]);
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.p.command(args);
        cmd.env("RYE_TEST_GREETING", "hello from the caller")
            .env("RYE_TEST_SECRET", "not for the server");
        cmd
    }

    fn run(&self, args: &[&str]) -> Out {
        let out = self.command(args).output().expect("ryechain runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        Out {
            code: out.status.code().unwrap_or(-1),
            json: serde_json::from_str(&stdout).unwrap_or(Json::Null),
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn ok(&self, args: &[&str]) {
        let out = self.run(args);
        assert_eq!(
            out.code, 0,
            "ryechain {args:?}: {}{}",
            out.stdout, out.stderr
        );
    }

    fn exec(&self, id: &str, params: Json, extra: &[&str]) -> Out {
        let params = params.to_string();
        let mut args = vec!["exec", id, "--params", &params, "--no-lockfile"];
        args.extend_from_slice(extra);
        self.run(&args)
    }
}

/// Whether `pid` is gone (or a zombie nobody has reaped yet), waiting up to `PATIENCE`.
fn gone(pid: i32) -> bool {
    let start = Instant::now();
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let dead = match stat {
            Err(_) => true,
            Ok(s) => s
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        };
        if dead {
            return true;
        }
        if start.elapsed() > PATIENCE {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Processes (not zombies) whose command line names something under `dir`.
fn running_under(dir: &Path) -> Vec<String> {
    let needle = dir.to_str().unwrap();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && !gone_now(pid) {
            out.push(format!("{pid}: {cmdline}"));
        }
    }
    out
}

fn gone_now(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Nothing started from the project `p` is left (waiting up to `PATIENCE` for the kills to land).
fn assert_nothing_left(p: &Project, what: &str) {
    let start = Instant::now();
    loop {
        let left = running_under(p.tmp.path());
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "{what}: still running: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pid_in(path: &Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Ok(t) = std::fs::read_to_string(path)
            && let Ok(pid) = t.trim().parse()
        {
            return pid;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "{} was never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The SDK peer serving streamable HTTP on 127.0.0.1 (killed when dropped).
struct HttpPeer {
    child: Child,
    port: u16,
}

impl HttpPeer {
    fn start(python: &Path, dir: &Path, extra: &[&str]) -> HttpPeer {
        let portfile = dir.join(format!("port-{}", extra.join("-")));
        let child = Command::new(python)
            .arg(server_script())
            .arg("--http")
            .arg(&portfile)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the HTTP peer starts");
        let port = pid_in(&portfile);
        HttpPeer {
            child,
            port: u16::try_from(port).unwrap(),
        }
    }
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_error(out: &Out, needle: &str) {
    assert_eq!(
        out.json["status"], "error",
        "{}\n{}",
        out.stdout, out.stderr
    );
    let error = out.json["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(needle),
        "{error:?} lacks {needle:?}\n{}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------------------------

#[test]
fn s13_stdio_tools_answer_structured_and_text_data() {
    let Some(python) = sdk() else { return };
    let p = Project::new(python);
    p.stdio_server(
        "peer",
        &[],
        "  env:\n    GREETING: \"${RYE_TEST_GREETING}\"\n",
    );
    for tool in ["add", "echo", "env", "cwd"] {
        p.tool("peer", tool, "stdio", "");
    }
    p.sign();

    let out = p.exec("mcp/peer/add", json!({"a": 2, "b": 3}), &["--trace"]);
    assert_eq!(
        out.json["status"], "success",
        "{}\n{}",
        out.stdout, out.stderr
    );
    // Structured content is the data.
    assert_eq!(out.json["data"], json!({"sum": 5, "inputs": [2, 3]}));
    assert_eq!(
        out.json["chain"],
        json!([
            "mcp/peer/add",
            "rye/core/runtimes/mcp/stdio",
            "rye/core/primitives/subprocess"
        ])
    );
    // The server config was verified like a chain element, before the spawn.
    let verified: Vec<&Json> = out.json["trace"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["step"] == "verify_integrity" && e["item_id"] == "mcp/servers/peer")
        .collect();
    assert_eq!(verified.len(), 1, "{}", out.stdout);
    assert_eq!(verified[0]["verified"], true);

    // One text block and no structured content: the text is the data.
    let out = p.exec("mcp/peer/echo", json!({"text": "héllo"}), &[]);
    assert_eq!(out.json["status"], "success", "{}", out.stdout);
    assert_eq!(out.json["data"], "héllo");

    // The server gets the config's env (filled from the caller's) and the SDKs' base
    // environment, not the caller's other variables.
    let out = p.exec("mcp/peer/env", json!({"name": "GREETING"}), &[]);
    assert_eq!(out.json["data"], "hello from the caller", "{}", out.stdout);
    let out = p.exec("mcp/peer/env", json!({"name": "RYE_TEST_SECRET"}), &[]);
    assert_eq!(out.json["data"], "<unset>", "{}", out.stdout);
    let out = p.exec("mcp/peer/env", json!({"name": "PATH"}), &[]);
    assert_ne!(out.json["data"], "<unset>", "{}", out.stdout);

    // Its working directory is the project.
    let out = p.exec("mcp/peer/cwd", json!({}), &[]);
    assert_eq!(
        out.json["data"],
        p.dir.canonicalize().unwrap().to_str().unwrap(),
        "{}",
        out.stdout
    );
}

#[test]
fn s13_an_mcp_tool_error_and_an_unknown_tool_are_errors_with_their_text() {
    let Some(python) = sdk() else { return };
    let p = Project::new(python);
    p.stdio_server("peer", &[], "");
    p.tool("peer", "fail", "stdio", "");
    p.tool("peer", "missing_tool", "stdio", "");
    p.sign();
    let out = p.exec("mcp/peer/fail", json!({"reason": "the disk is full"}), &[]);
    assert_error(&out, "cannot do it: the disk is full");
    assert_eq!(out.json["data"]["tool"], "fail");
    assert_eq!(out.code, 1);
    let out = p.exec("mcp/peer/missing_tool", json!({}), &[]);
    assert_eq!(out.json["status"], "error", "{}", out.stdout);
    assert!(
        out.json["error"].as_str().unwrap().contains("missing_tool"),
        "{}",
        out.stdout
    );
}

#[test]
fn s13_a_server_that_crashes_mid_call_is_a_clear_error_and_leaves_nothing() {
    let Some(python) = sdk() else { return };
    let p = Project::new(python);
    let pidfile = p.scratch("crash.pid");
    let childfile = p.scratch("crash-child.pid");
    p.stdio_server(
        "peer",
        &[
            "--pidfile",
            pidfile.to_str().unwrap(),
            "--child-pidfile",
            childfile.to_str().unwrap(),
        ],
        "",
    );
    p.tool("peer", "crash", "stdio", "");
    p.sign();
    let out = p.exec("mcp/peer/crash", json!({"code": 3}), &[]);
    assert_error(&out, "exited during the call of `crash`");
    assert_error(&out, "crashing on purpose");
    assert_eq!(
        out.json["data"]["server_stderr"],
        "sdk_server: crashing on purpose"
    );
    assert!(gone(pid_in(&pidfile)), "the server is still running");
    assert!(
        gone(pid_in(&childfile)),
        "the server's child is still running"
    );
    assert_nothing_left(&p, "after the crash");
}

#[test]
fn s13_a_server_that_never_answers_initialize_times_out_and_leaves_nothing() {
    let Some(python) = sdk() else { return };
    let p = Project::new(python);
    let pidfile = p.scratch("hang.pid");
    let childfile = p.scratch("hang-child.pid");
    p.stdio_server(
        "hang",
        &[
            "--hang",
            "--pidfile",
            pidfile.to_str().unwrap(),
            "--child-pidfile",
            childfile.to_str().unwrap(),
        ],
        "",
    );
    // The tool's own timeout replaces the runtime's 60 s.
    p.tool("hang", "add", "stdio", "  timeout: 3\n");
    p.sign();
    let out = p.exec("mcp/hang/add", json!({"a": 1, "b": 2}), &[]);
    assert_error(&out, "did not answer `initialize` within 2.7 s");
    // The server may not have got as far as writing its pids: their paths are in the command
    // lines, so no process naming the test's folder may be left.
    assert_nothing_left(&p, "after the initialize timeout");

    // The runner's own timeout (shorter than the tool's) kills `mcp-call`: the server and its
    // child die with it, with or without a cgroup.
    for extra in [
        &["--timeout", "2"][..],
        &["--timeout", "2", "--no-cgroup"][..],
    ] {
        let _ = std::fs::remove_file(&pidfile);
        let _ = std::fs::remove_file(&childfile);
        let out = p.exec("mcp/hang/add", json!({"a": 1, "b": 2}), extra);
        assert_error(&out, "timed out after 2 seconds");
        assert_nothing_left(&p, &format!("{extra:?}"));
    }
}

#[test]
fn s13_streamable_http_tools_answer_and_fail_like_stdio_ones() {
    let Some(python) = sdk() else { return };
    let p = Project::new(python.clone());
    let peer = HttpPeer::start(&python, p.tmp.path(), &[]);
    p.server(
        "web",
        &format!(
            "  transport: http\n  url: \"{}\"\n  headers:\n    X-Caller: \"${{RYE_TEST_GREETING}}\"\n",
            peer.url()
        ),
    );
    for tool in ["add", "echo", "fail"] {
        p.tool("web", tool, "http", "");
    }
    // A stdio runtime naming an http server is refused (the runtime and the config disagree).
    p.tool("web", "wrong", "stdio", "");
    p.sign();
    let out = p.exec("mcp/web/add", json!({"a": 40, "b": 2}), &[]);
    assert_eq!(
        out.json["status"], "success",
        "{}\n{}",
        out.stdout, out.stderr
    );
    assert_eq!(out.json["data"], json!({"sum": 42, "inputs": [40, 2]}));
    let out = p.exec("mcp/web/echo", json!({"text": "over http"}), &[]);
    assert_eq!(out.json["data"], "over http", "{}", out.stdout);
    let out = p.exec("mcp/web/fail", json!({"reason": "no"}), &[]);
    assert_error(&out, "cannot do it: no");
    let out = p.exec("mcp/web/wrong", json!({}), &[]);
    assert_error(&out, "says `transport: http`");

    // A server that accepts connections and never answers: `initialize` times out.
    let hang = HttpPeer::start(&python, p.tmp.path(), &["--hang"]);
    p.server(
        "webhang",
        &format!("  transport: http\n  url: \"{}\"\n", hang.url()),
    );
    p.tool("webhang", "add", "http", "  timeout: 3\n");
    p.sign();
    let out = p.exec("mcp/webhang/add", json!({}), &[]);
    assert_error(&out, "did not answer `initialize` within 2.7 s");

    // Nothing listens: a clear error naming the URL.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    p.server(
        "nowhere",
        &format!("  transport: http\n  url: \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    p.tool("nowhere", "add", "http", "");
    p.sign();
    let out = p.exec("mcp/nowhere/add", json!({}), &[]);
    assert_error(&out, "failed during `initialize`");
    assert_error(&out, &format!("127.0.0.1:{port}"));
}

#[test]
fn s13_server_config_paths_out_of_their_space_are_refused_before_any_spawn() {
    let Some(python) = sdk() else { return };
    let p = Project::new(python);
    let marker = p.scratch("spawned");
    // A config outside every space, and a symlink to it from inside the project's tools.
    let outside = p.scratch("outside.yaml");
    std::fs::write(
        &outside,
        format!(
            "tool_type: mcp_server\nconfig:\n  transport: stdio\n  command: touch\n  args: [{:?}]\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(p.path(".ai/tools/mcp/servers")).unwrap();
    std::os::unix::fs::symlink(&outside, p.path(".ai/tools/mcp/servers/link.yaml")).unwrap();
    let cases = [
        (
            "dotdot",
            "{project_path}/.ai/tools/../../outside.yaml",
            "`.` or `..` components",
        ),
        (
            "absolute",
            outside.to_str().unwrap(),
            "outside every space's tools",
        ),
        (
            "link",
            "{project_path}/.ai/tools/mcp/servers/link.yaml",
            "is a symlink out of its space",
        ),
        (
            "config",
            "{project_path}/.ai/config/x.yaml",
            "outside every space's tools",
        ),
    ];
    for (name, path, _) in &cases {
        p.write(
            &format!(".ai/tools/mcp/bad/{name}.yaml"),
            &format!(
                "tool_type: mcp\nexecutor_id: rye/core/runtimes/mcp/stdio\ncategory: mcp/bad\nversion: \"1.0.0\"\ndescription: \"{name}\"\nconfig:\n  server_config_path: \"{path}\"\n  tool_name: add\n"
            ),
        );
    }
    // A server config whose `cwd` leaves the project.
    p.server(
        "updir",
        &format!(
            "  transport: stdio\n  command: touch\n  args: [{:?}]\n  cwd: ../..\n",
            marker.display().to_string()
        ),
    );
    p.tool("updir", "add", "stdio", "");
    p.ok(&["sign", "mcp/bad/*"]);
    p.ok(&["sign", "mcp/updir/*"]);
    p.ok(&["sign", "mcp/servers/updir"]);
    for (name, _, want) in &cases {
        let out = p.exec(&format!("mcp/bad/{name}"), json!({}), &[]);
        assert_error(&out, want);
    }
    let out = p.exec("mcp/updir/add", json!({}), &[]);
    assert_error(&out, "leaves its space with `..`");
    assert!(!marker.exists(), "a refused server config was run");
}

#[test]
fn s10_a_tampered_or_unsigned_server_config_is_refused_before_any_spawn() {
    let Some(python) = sdk() else { return };
    let p = Project::new(python);
    let marker = p.scratch("spawned");
    p.stdio_server("peer", &[], "");
    p.tool("peer", "echo", "stdio", "");
    p.sign();
    let out = p.exec("mcp/peer/echo", json!({"text": "x"}), &[]);
    assert_eq!(out.json["status"], "success", "{}", out.stdout);
    // Someone swaps the command after signing.
    let path = p.path(".ai/tools/mcp/servers/peer.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let head = text.split_once("config:").unwrap().0;
    std::fs::write(
        &path,
        format!(
            "{head}config:\n  transport: stdio\n  command: touch\n  args: [{:?}]\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let out = p.exec("mcp/peer/echo", json!({"text": "x"}), &[]);
    assert_error(&out, "Integrity failed");
    assert_error(&out, "mcp/servers/peer.yaml");
    // An unsigned config is refused too, unless the person allows unsigned items.
    let unsigned = text.split_once('\n').unwrap().1;
    std::fs::write(&path, unsigned).unwrap();
    let out = p.exec("mcp/peer/echo", json!({"text": "x"}), &[]);
    assert_eq!(out.json["status"], "error", "{}", out.stdout);
    let out = p.exec("mcp/peer/echo", json!({"text": "x"}), &["--allow-unsigned"]);
    assert_eq!(out.json["status"], "success", "{}", out.stdout);
    assert!(!marker.exists(), "a refused server config was run");
}

/// `rye_execute` of `ryechain mcp` runs an MCP tool the same way (raw JSON-RPC lines).
#[test]
fn s12_3_rye_execute_runs_an_mcp_tool() {
    let Some(python) = sdk() else { return };
    let p = Project::new(python);
    p.stdio_server("peer", &[], "");
    p.tool("peer", "add", "stdio", "");
    p.sign();
    let mut child = p
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "rye_execute", "arguments": {
                "item_type": "tool", "item_id": "mcp/peer/add",
                "project_path": p.dir.to_str().unwrap(),
                "parameters": {"a": 20, "b": 22}}}}),
    ];
    for l in &lines {
        writeln!(stdin, "{l}").unwrap();
    }
    stdin.flush().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut answer = Json::Null;
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 0 {
        let msg: Json = serde_json::from_str(&line).unwrap();
        line.clear();
        if msg["id"] == 2 {
            answer = msg;
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    let response = &answer["result"]["structuredContent"];
    assert_eq!(response["status"], "success", "{answer}");
    assert_eq!(
        response["data"],
        json!({"sum": 42, "inputs": [20, 22]}),
        "{answer}"
    );
}

/// The example project's MCP tool (its server is the SDK script under `examples/`), signed like
/// the other examples, runs end to end.
#[test]
fn s13_the_example_mcp_tool_runs_end_to_end() {
    let Some(python) = sdk() else { return };
    let examples = repo().join("examples");
    let out = Command::new(BIN)
        .args([
            "exec",
            "mcp/notes/add_note",
            examples.join("project").to_str().unwrap(),
            "--user-space",
            examples.join("user").to_str().unwrap(),
            "--params",
            r#"{"title": "Ship", "body": "on Friday"}"#,
            "--no-lockfile",
        ])
        .env("RYE_MCP_PYTHON", &python)
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: Json = serde_json::from_str(&stdout).unwrap_or(Json::Null);
    assert_eq!(
        json["status"],
        "success",
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json["data"]["title"], "Ship", "{stdout}");
    assert_eq!(json["data"]["words"], 2, "{stdout}");
}
