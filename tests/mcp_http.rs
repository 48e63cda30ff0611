//! `ryechain mcp --http` (issue 32 item 5): the streamable HTTP transport behind a bearer token.
//! Raw HTTP over a `TcpStream` checks the guard (no token or a wrong one: 401 with a
//! `WWW-Authenticate: Bearer` challenge; the right one: served; a foreign Host or Origin: 403), the
//! refusals at start (no token: exit 2 naming both ways to give one; a token on the command line;
//! a non-loopback address without `--allow-remote`; a token file others may read), a clean stop on
//! SIGTERM that ends a tool still running, and a stdout left empty. The official MCP Python SDK
//! (PyPI `mcp`, in `target/mcp-venv`) then runs `tests/mcp_clients/mcp_http_session.py` against a
//! signed temporary project over HTTP, and compares answers with the same calls over stdio.
//!
//! Without the SDK that test skips and says why, unless `RYECHAIN_REQUIRE_MCP_CLIENTS=1` (set by
//! `.ci/run`) or `CI=true`, which turn a missing client into a failure.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests spawn the server and its client and write a temporary project"
)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};

use common::project::{BIN, mcp_sdk, ryechain_in};

/// How long any one answer of the server may take here (a debug build on a busy machine).
const PATIENCE: Duration = Duration::from_secs(60);

const TOKEN: &str = "3f9c1e7a-test-token";

/// `ryechain mcp <args>` run to its end with `token` (if any) in RYECHAIN_MCP_TOKEN.
fn mcp_once(home: &Path, token: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("mcp")
        .args(args)
        .env("HOME", home)
        .env_remove("RYECHAIN_MCP_TOKEN")
        .env_remove("USER_SPACE")
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null());
    if let Some(token) = token {
        cmd.env("RYECHAIN_MCP_TOKEN", token);
    }
    cmd.output().expect("spawn ryechain mcp")
}

/// A running `ryechain mcp --http`.
struct Served {
    child: Child,
    addr: SocketAddr,
    stderr: mpsc::Receiver<String>,
}

impl Served {
    /// Start it with `token` in RYECHAIN_MCP_TOKEN and wait for the address it announces.
    fn start(home: &Path, token: Option<&str>, args: &[&str]) -> Served {
        let mut cmd = Command::new(BIN);
        cmd.args(["mcp", "--http", "127.0.0.1:0"])
            .args(args)
            .env("HOME", home)
            .env_remove("RYECHAIN_MCP_TOKEN")
            .env_remove("USER_SPACE")
            .env_remove("RYE_SYSTEM_SPACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            cmd.env("RYECHAIN_MCP_TOKEN", token);
        }
        let mut child = cmd.spawn().expect("spawn ryechain mcp --http");
        let err = child.stderr.take().unwrap();
        let (tx, stderr) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut before = Vec::new();
        let url = loop {
            let line = stderr.recv_timeout(PATIENCE).unwrap_or_else(|_| {
                panic!("the server announced no address; its stderr: {before:?}")
            });
            if let Some(url) = line
                .strip_prefix("listening on http://")
                .and_then(|rest| rest.strip_suffix("/mcp"))
            {
                break url.to_owned();
            }
            before.push(line);
        };
        // Nothing comes before the announcement here (no notices about these spaces).
        assert!(before.is_empty(), "{before:?}");
        let addr: SocketAddr = url.parse().unwrap();
        assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
        Served {
            child,
            addr,
            stderr,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// SIGTERM, then its exit code, its stdout and the rest of its stderr.
    fn stop(mut self) -> (Option<i32>, String, String) {
        let pid = i32::try_from(self.child.id()).unwrap();
        let pid = rustix::process::Pid::from_raw(pid).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not stop on SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stdout = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        let rest: Vec<String> = self.stderr.try_iter().collect();
        (status.code(), stdout, rest.join("\n"))
    }
}

/// An HTTP answer: status, headers (names lower-cased) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request on a connection of its own (closed after the answer).
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

fn initialize() -> String {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}
        }
    })
    .to_string()
}

const JSON_AND_SSE: (&str, &str) = ("Accept", "application/json, text/event-stream");
const CONTENT_JSON: (&str, &str) = ("Content-Type", "application/json");

/// A POST of `body` to /mcp with these headers besides Accept and Content-Type.
fn post(addr: SocketAddr, extra: &[(&str, &str)], body: &str) -> Answer {
    let mut headers = vec![JSON_AND_SSE, CONTENT_JSON];
    headers.extend_from_slice(extra);
    request(addr, "POST", "/mcp", &headers, body)
}

/// The JSON-RPC messages of an SSE (or JSON) answer's body.
fn messages(answer: &Answer) -> Vec<Json> {
    if answer
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json"))
    {
        return vec![serde_json::from_str(&answer.body).unwrap()];
    }
    answer
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

// ---------------------------------------------------------------------------------------------
// Refusals at start.

#[test]
fn without_a_token_the_server_does_not_start_and_says_how_to_give_one() {
    let home = tempfile::tempdir().unwrap();
    let out = mcp_once(home.path(), None, &["--http", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("RYECHAIN_MCP_TOKEN"), "{stderr}");
    assert!(stderr.contains("--token-file"), "{stderr}");
    // An empty token is none.
    let out = mcp_once(home.path(), Some(""), &["--http", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("RYECHAIN_MCP_TOKEN is empty"), "{stderr}");
}

#[test]
fn the_command_line_cannot_carry_the_token() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["--http", "127.0.0.1:0", "--token", TOKEN][..],
        &["--http", "127.0.0.1:0", &format!("--token={TOKEN}")],
        &["--http", "127.0.0.1:0", "--bearer-token", TOKEN],
    ] {
        let out = mcp_once(home.path(), None, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("unexpected argument"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn an_address_other_than_loopback_is_refused_without_allow_remote() {
    let home = tempfile::tempdir().unwrap();
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.7:8765"] {
        let out = mcp_once(home.path(), Some(TOKEN), &["--http", addr]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{addr}: {stderr}");
        assert!(stderr.contains("is not a loopback address"), "{stderr}");
        assert!(stderr.contains("--allow-remote"), "{stderr}");
    }
    let out = mcp_once(home.path(), Some(TOKEN), &["--http", "example.com:80"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no IP:PORT address"));
    // The HTTP flags mean nothing without --http.
    let out = mcp_once(home.path(), Some(TOKEN), &["--allow-remote"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_token_file_must_be_its_owners_alone_and_hold_a_token() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("token");
    let run = |mode: u32, text: &str| {
        std::fs::write(&file, text).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        let args = [
            "--http",
            "127.0.0.1:0",
            "--token-file",
            file.to_str().unwrap(),
        ];
        let out = mcp_once(home.path(), None, &args);
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = run(0o644, "t\n");
    assert!(
        stderr.contains("may be read or written by others (mode 644)"),
        "{stderr}"
    );
    assert!(stderr.contains("chmod 600"), "{stderr}");
    assert!(run(0o620, "t\n").contains("(mode 620)"));
    assert!(run(0o600, "\n").contains("is empty"));
    assert!(run(0o600, "two words\n").contains("cannot carry it"));
    let gone = home.path().join("gone");
    let out = mcp_once(
        home.path(),
        None,
        &[
            "--http",
            "127.0.0.1:0",
            "--token-file",
            gone.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read --token-file"));
}

// ---------------------------------------------------------------------------------------------
// The guard on the wire.

#[test]
fn every_request_without_the_token_is_refused_with_401() {
    let home = tempfile::tempdir().unwrap();
    let server = Served::start(home.path(), Some(TOKEN), &[]);
    let addr = server.addr;
    let right = bearer(TOKEN);

    let none = post(addr, &[], &initialize());
    assert_eq!(none.status, 401, "{}", none.body);
    assert_eq!(
        none.header("www-authenticate"),
        Some(r#"Bearer realm="ryechain""#)
    );
    for wrong in [
        bearer("3f9c1e7a-test-toke"),
        bearer(&format!("{TOKEN}x")),
        format!("Basic {TOKEN}"),
        TOKEN.to_owned(),
        "Bearer".to_owned(),
    ] {
        let answer = post(addr, &[("Authorization", &wrong)], &initialize());
        assert_eq!(answer.status, 401, "{wrong}: {}", answer.body);
        assert_eq!(
            answer.header("www-authenticate"),
            Some(r#"Bearer realm="ryechain", error="invalid_token""#),
            "{wrong}"
        );
        assert!(!answer.body.contains(TOKEN), "{}", answer.body);
    }
    // Every method and every path, not only the endpoint's POST.
    for (method, path) in [
        ("GET", "/mcp"),
        ("DELETE", "/mcp"),
        ("GET", "/"),
        ("POST", "/other"),
    ] {
        let answer = request(addr, method, path, &[JSON_AND_SSE], "");
        assert_eq!(answer.status, 401, "{method} {path}");
        assert!(answer.header("www-authenticate").is_some());
    }

    // The right token: initialize, then tools/list in the session it opened.
    let auth = ("Authorization", right.as_str());
    let init = post(addr, &[auth], &initialize());
    assert_eq!(init.status, 200, "{}", init.body);
    let session = init.header("mcp-session-id").expect("a session").to_owned();
    let answer = &messages(&init)[0];
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "ryechain",
        "{answer}"
    );
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    let in_session = [
        auth,
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(post(addr, &in_session, &note).status, 202);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let listed = post(addr, &in_session, &list);
    assert_eq!(listed.status, 200, "{}", listed.body);
    let names: Vec<Json> = messages(&listed)[0]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, ["rye_execute", "rye_search", "rye_load", "rye_sign"]);
    // The token is checked on every request of a session, not only its first.
    let stolen = [("Mcp-Session-Id", session.as_str()), JSON_AND_SSE];
    assert_eq!(post(addr, &stolen, &list).status, 401);
    // The session ends on DELETE (204, as the official SDKs' clients expect); it is gone then.
    let ended = request(addr, "DELETE", "/mcp", &in_session, "");
    assert_eq!(ended.status, 204, "{}", ended.body);
    assert_eq!(post(addr, &in_session, &list).status, 404);
    // Off the endpoint, with the token: 404.
    assert_eq!(
        request(addr, "POST", "/", &[auth, JSON_AND_SSE], &list).status,
        404
    );

    // DNS rebinding: a Host or a browser Origin naming another machine is refused (403), a
    // loopback one is served.
    let foreign_host = post(addr, &[auth, ("Host", "rebind.example:80")], &initialize());
    assert_eq!(foreign_host.status, 403, "{}", foreign_host.body);
    let foreign_origin = post(
        addr,
        &[auth, ("Origin", "http://rebind.example")],
        &initialize(),
    );
    assert_eq!(foreign_origin.status, 403, "{}", foreign_origin.body);
    let local = format!("http://localhost:{}", addr.port());
    let local_origin = post(
        addr,
        &[
            auth,
            ("Host", &format!("localhost:{}", addr.port())),
            ("Origin", &local),
        ],
        &initialize(),
    );
    assert_eq!(local_origin.status, 200, "{}", local_origin.body);

    let (code, stdout, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn a_token_file_is_read_and_wins_over_the_environment() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("token");
    std::fs::write(&file, "from-the-file\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let server = Served::start(
        home.path(),
        Some("from-the-environment"),
        &["--token-file", file.to_str().unwrap()],
    );
    let with = |token: &str| {
        post(
            server.addr,
            &[("Authorization", &bearer(token))],
            &initialize(),
        )
    };
    assert_eq!(with("from-the-file").status, 200);
    assert_eq!(with("from-the-file\n".trim_end()).status, 200);
    assert_eq!(with("from-the-environment").status, 401);
    let (code, stdout, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
}

// ---------------------------------------------------------------------------------------------
// Projects.

/// A project with the signed bash tools `tools` (their bodies replaced where `bodies` says), a
/// user space in `home` trusting the key.
fn signed_project(root: &Path, tools: &[&str], bodies: &[(&str, &str)]) -> (PathBuf, PathBuf) {
    let home = root.join("home");
    let project = root.join("proj");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    ryechain_in(&project, &home, &["init"]);
    for tool in tools {
        ryechain_in(&project, &home, &["new", "tool", tool, "--runtime", "bash"]);
    }
    for (tool, body) in bodies {
        let path = project.join(format!(".ai/tools/{tool}.sh"));
        let text = std::fs::read_to_string(&path).unwrap();
        let (head, _) = text.split_once("params=$(cat)").unwrap();
        std::fs::write(&path, format!("{head}{body}")).unwrap();
    }
    ryechain_in(&project, &home, &["keys", "generate"]);
    ryechain_in(&project, &home, &["sign", "acme/*"]);
    (home, project)
}

#[test]
fn sigterm_ends_a_tool_still_running_and_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    // A tool that writes its pid, then sleeps far longer than the test waits.
    let (home, project) = signed_project(
        tmp.path(),
        &["acme/slow", "acme/env"],
        &[
            ("acme/slow", "echo $$ > \"$1/slow.pid\"\nexec sleep 600\n"),
            (
                "acme/env",
                "printf '{\"home\": \"%s\", \"token\": \"%s\"}' \"$HOME\" \"${RYECHAIN_MCP_TOKEN:-unset}\"\n",
            ),
        ],
    );
    let server = Served::start(&home, Some(TOKEN), &[]);
    let addr = server.addr;
    let right = bearer(TOKEN);
    let auth = ("Authorization", right.as_str());
    let init = post(addr, &[auth], &initialize());
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let in_session = [
        auth,
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    // The server's token is not handed on to the tools it runs (the rest of its environment is).
    let env_call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "rye_execute", "arguments": {
            "item_type": "tool", "item_id": "acme/env",
            "project_path": project.to_str().unwrap()
        }}
    });
    let answered = post(addr, &in_session, &env_call.to_string());
    let data = &messages(&answered)[0]["result"]["structuredContent"]["data"];
    assert_eq!(
        *data,
        json!({"home": home.to_str().unwrap(), "token": "unset"}),
        "{}",
        answered.body
    );
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "rye_execute", "arguments": {
            "item_type": "tool", "item_id": "acme/slow",
            "project_path": project.to_str().unwrap()
        }}
    })
    .to_string();
    let headers = [right.clone(), session.clone()];
    let caller = std::thread::spawn(move || {
        post(
            addr,
            &[
                ("Authorization", &headers[0]),
                ("Mcp-Session-Id", &headers[1]),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            &call,
        )
    });
    let pid_file = project.join("slow.pid");
    let deadline = Instant::now() + PATIENCE;
    let pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let (code, stdout, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    // The tool is gone (neither running nor a zombie: once the server has exited, nothing of
    // it is left for anyone to reap).
    let deadline = Instant::now() + PATIENCE;
    while Path::new(&format!("/proc/{pid}")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.contains("sleep"))
    {
        assert!(
            Instant::now() < deadline,
            "the tool {pid} outlived the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The call's connection ended with the server, answered or not.
    let _ = caller.join();
}

// ---------------------------------------------------------------------------------------------
// The official Python SDK as the client.

#[test]
fn the_official_python_sdk_speaks_to_the_server_over_http() {
    let Some(python) = mcp_sdk("mcp.client.streamable_http") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (home, project) = signed_project(
        tmp.path(),
        &["acme/greet", "acme/tampered", "acme/publish_tables"],
        &[],
    );
    // A description the search looks for (the tool signed again after the edit).
    let path = project.join(".ai/tools/acme/publish_tables.sh");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "Describe what acme/publish_tables does",
        "Publish tables to the warehouse",
    );
    std::fs::write(&path, text).unwrap();
    ryechain_in(&project, &home, &["sign", "acme/publish_tables"]);
    let tampered = project.join(".ai/tools/acme/tampered.sh");
    let text = std::fs::read_to_string(&tampered).unwrap();
    std::fs::write(&tampered, format!("{text}echo edited after signing\n")).unwrap();

    let server = Served::start(&home, Some(TOKEN), &[]);
    let out = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/mcp_http_session.py"))
        .current_dir(tmp.path())
        .env("RYECHAIN_MCP_URL", server.url())
        .env("RYECHAIN_MCP_TOKEN", TOKEN)
        .env("RYECHAIN_BIN", BIN)
        .env("RYECHAIN_PROJECT", &project)
        .env("RYECHAIN_HOME", &home)
        .env("HOME", &home)
        .stdin(Stdio::null())
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (code, server_stdout, server_stderr) = server.stop();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{stderr}\nserver: {server_stderr}"
    );
    let checks = stdout.lines().filter(|l| l.starts_with("ok: ")).count();
    assert_eq!(checks, 10, "{stdout}\n{stderr}");
    // The SDK ended its sessions without a complaint.
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    assert_eq!(code, Some(0), "{server_stderr}");
    assert!(server_stdout.is_empty(), "{server_stdout}");
    assert!(server_stderr.is_empty(), "{server_stderr}");
}
