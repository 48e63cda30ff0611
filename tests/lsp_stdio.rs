//! The `ryechain lsp` binary over real pipes: a body that is not JSON gets `-32700` and the
//! session goes on; `shutdown` + `exit` ends it with code 0; closing stdin without `shutdown`
//! ends it with code 1 (as the protocol asks); nothing but protocol frames reaches stdout. And
//! the code actions that need the command's own flows: "Re-sign this item" (`ryechain sign`'s,
//! as the person, never making a key) and a stale lockfile's refresh.
#![allow(
    clippy::disallowed_methods,
    reason = "the test spawns the binary and talks to it over pipes"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

fn read_frame(out: &mut BufReader<ChildStdout>) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("a header line");
        assert!(
            name.eq_ignore_ascii_case("content-length"),
            "only protocol frames: {line}"
        );
        len = Some(value.trim().parse::<usize>().unwrap());
    }
    let mut body = vec![0; len?];
    out.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).expect("frames hold JSON"))
}

fn spawn(dir: &std::path::Path) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .arg("lsp")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("HOME", dir)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

#[test]
fn malformed_json_is_answered_and_shutdown_exit_ends_with_zero() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".ai/tools")).unwrap();
    let (mut child, mut out) = spawn(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&frame("{this is not json")).unwrap();
    let err = read_frame(&mut out).unwrap();
    assert_eq!(err["error"]["code"], -32700, "{err}");
    assert_eq!(err["id"], Value::Null);
    let root = format!("file://{}", dir.path().display());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": null, "rootUri": root, "capabilities": {}}});
    stdin.write_all(&frame(&init.to_string())).unwrap();
    let r = read_frame(&mut out).unwrap();
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["serverInfo"]["name"], "ryechain");
    for msg in [
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
    ] {
        stdin.write_all(&frame(&msg.to_string())).unwrap();
    }
    loop {
        let m = read_frame(&mut out).expect("the shutdown answer");
        if m["id"] == 2 {
            assert_eq!(m["result"], Value::Null);
            break;
        }
    }
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "method": "exit"}).to_string(),
        ))
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn closed_stdin_without_shutdown_ends_with_one() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, mut out) = spawn(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    let root = format!("file://{}", dir.path().display());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": null, "rootUri": root, "capabilities": {}}});
    stdin.write_all(&frame(&init.to_string())).unwrap();
    assert_eq!(read_frame(&mut out).unwrap()["id"], 1);
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

/// A session with `ryechain lsp` over pipes: messages the server sends unasked (notifications,
/// its own requests) are kept while an answer is awaited.
struct Session {
    child: Child,
    stdin: std::process::ChildStdin,
    out: BufReader<ChildStdout>,
    seen: Vec<Value>,
    next: i64,
}

impl Session {
    fn start(root: &std::path::Path, project: &std::path::Path, caps: Value) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ryechain"))
            .arg("lsp")
            .env("XDG_CACHE_HOME", root.join("cache"))
            .env("HOME", root.join("home"))
            .env("USER_SPACE", root.join("user"))
            .env_remove("RYE_SIGNING_KEY_DIR")
            .env_remove("RYE_SYSTEM_SPACE")
            .current_dir(project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let stdin = child.stdin.take().unwrap();
        let mut s = Session {
            child,
            stdin,
            out,
            seen: Vec::new(),
            next: 0,
        };
        let root_uri = format!("file://{}", project.display());
        let init = s.request(
            "initialize",
            json!({"processId": null, "rootUri": root_uri, "capabilities": caps}),
        );
        assert_eq!(
            init["result"]["capabilities"]["executeCommandProvider"]["commands"],
            json!(["ryechain.sign"]),
            "{init}"
        );
        s.notify("initialized", json!({}));
        s
    }

    fn send(&mut self, msg: &Value) {
        self.stdin.write_all(&frame(&msg.to_string())).unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = read_frame(&mut self.out).expect("the server answers");
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
            self.seen.push(m);
        }
    }

    /// The first message kept or coming with this method.
    fn message(&mut self, method: &str) -> Value {
        if let Some(at) = self.seen.iter().position(|m| m["method"] == method) {
            return self.seen.remove(at);
        }
        loop {
            let m = read_frame(&mut self.out).expect("the server goes on");
            if m["method"] == method {
                return m;
            }
            self.seen.push(m);
        }
    }

    fn end(mut self) {
        assert_eq!(self.request("shutdown", Value::Null)["result"], Value::Null);
        self.notify("exit", Value::Null);
        assert_eq!(self.child.wait().unwrap().code(), Some(0));
    }
}

/// The "Re-sign this item" action the server offers for `uri`'s text.
fn resign_action(s: &mut Session, uri: &str, text: &str) -> Value {
    let lines = u32::try_from(text.lines().count()).unwrap();
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["command"]["command"] == "ryechain.sign")
        .cloned()
        .unwrap_or_else(|| panic!("no re-sign action in {actions:#}"))
}

const TOOL: &str = "\"\"\"A tool.\"\"\"\n\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\n__category__ = \"acme\"\n__tool_description__ = \"d\"\n\n\ndef main(params):\n    return {}\n";

fn ryechain(
    root: &std::path::Path,
    project: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args(args)
        .env("HOME", root.join("home"))
        .env("USER_SPACE", root.join("user"))
        .env("NO_COLOR", "1")
        .env_remove("RYE_SIGNING_KEY_DIR")
        .env_remove("RYE_SYSTEM_SPACE")
        .current_dir(project)
        .output()
        .unwrap()
}

/// Issue 35 item 11: an edited signed tool gets "Re-sign this item", a command the server runs
/// through `ryechain sign`'s flow with the person's key; the open buffer is brought to the signed
/// text (`workspace/applyEdit`) and the file then verifies. A buffer with unsaved edits is
/// refused, and without a signing key the command says how to make one and makes none.
#[test]
fn re_sign_this_item_signs_with_the_persons_key_and_never_makes_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    let tool = project.join(".ai/tools/acme/report.py");
    std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::create_dir_all(root.join("user/.ai")).unwrap();
    std::fs::write(&tool, TOOL).unwrap();
    let uri = format!("file://{}", tool.display());

    // No signing key: an error that names `ryechain keys generate`; nothing made or written.
    let mut s = Session::start(&root, &project, json!({}));
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": TOOL}}),
    );
    let action = resign_action(&mut s, &uri, TOOL);
    assert_eq!(
        action["title"],
        "Re-sign this tool (`ryechain sign acme/report`)"
    );
    let answer = s.request(
        "workspace/executeCommand",
        json!({"command": "ryechain.sign", "arguments": action["command"]["arguments"]}),
    );
    let error = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(error.contains("ryechain keys generate"), "{answer}");
    assert!(!root.join("user/.ai/config/keys").exists(), "no key made");
    assert_eq!(std::fs::read_to_string(&tool).unwrap(), TOOL);
    s.end();

    // With the person's key: signed, the buffer brought along, the file verifies.
    assert!(
        ryechain(&root, &project, &["keys", "generate"])
            .status
            .success()
    );
    assert!(
        ryechain(&root, &project, &["sign", "acme/report"])
            .status
            .success()
    );
    let edited = std::fs::read_to_string(&tool)
        .unwrap()
        .replace("return {}", "return {\"v\": 2}");
    std::fs::write(&tool, &edited).unwrap();
    let lint = ryechain(&root, &project, &["lint", "--no-cache", "--format=concise"]);
    assert!(
        String::from_utf8_lossy(&lint.stdout).contains("content-hash-mismatch"),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    let mut s = Session::start(&root, &project, json!({"workspace": {"applyEdit": true}}));
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": edited}}),
    );
    let action = resign_action(&mut s, &uri, &edited);
    // Unsaved edits in the buffer: refused (what is signed is the file on disk).
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": format!("{edited}# more\n")}]}),
    );
    let answer = s.request(
        "workspace/executeCommand",
        json!({"command": "ryechain.sign", "arguments": action["command"]["arguments"]}),
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unsaved changes"),
        "{answer}"
    );
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": edited}]}),
    );
    let answer = s.request(
        "workspace/executeCommand",
        json!({"command": "ryechain.sign", "arguments": action["command"]["arguments"]}),
    );
    assert_eq!(answer["result"]["status"], "signed", "{answer}");
    let signed = std::fs::read_to_string(&tool).unwrap();
    assert!(signed.contains("rye:signed:") && signed.contains("return {\"v\": 2}"));
    let apply = s.message("workspace/applyEdit");
    let edit = &apply["params"]["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], signed.as_str(), "{apply}");
    // The refusal was shown first, then the signature.
    let refused = s.message("window/showMessage");
    assert!(
        refused["params"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unsaved changes"),
        "{refused}"
    );
    let shown = s.message("window/showMessage");
    assert_eq!(
        shown["params"]["message"],
        "ryechain: signed tool acme/report (project)"
    );
    s.end();
    let lint = ryechain(&root, &project, &["lint", "--no-cache"]);
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
}

/// The editor offers the lockfile refresh `lint --fix` makes: a stale lockfile of a signed chain
/// gets a quick fix whose edit is the whole lockfile as `ryechain lock --force` would write it;
/// written, the tree lints clean.
#[test]
fn a_stale_lockfile_gets_the_refresh_as_a_quick_fix() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    let tool = project.join(".ai/tools/acme/report.py");
    std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::create_dir_all(root.join("user/.ai")).unwrap();
    std::fs::write(&tool, TOOL).unwrap();
    for args in [
        &["keys", "generate"][..],
        &["sign", "acme/report"],
        &["lock", "acme/report"],
    ] {
        assert!(ryechain(&root, &project, args).status.success(), "{args:?}");
    }
    let lock = project.join(".ai/lockfiles/acme/report@1.0.0.lock.json");
    let old = std::fs::read_to_string(&lock).unwrap();
    std::fs::write(&tool, TOOL.replace("return {}", "return {\"v\": 2}")).unwrap();
    assert!(
        ryechain(&root, &project, &["sign", "acme/report"])
            .status
            .success()
    );
    // The lockfile as it was before the tool changed (a teammate's signed commit, say).
    std::fs::write(&lock, &old).unwrap();
    let uri = format!("file://{}", lock.display());
    let mut s = Session::start(&root, &project, json!({}));
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": old}}),
    );
    let lines = u32::try_from(old.lines().count()).unwrap();
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    let fix = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["diagnostics"][0]["code"] == "stale-lockfile")
        .cloned()
        .unwrap_or_else(|| panic!("{actions:#}"));
    assert_eq!(
        fix["title"],
        "Refresh the lockfile for the chain as it is now (`ryechain lock acme/report --force`)"
    );
    let edit = &fix["edit"]["changes"][&uri][0];
    assert_eq!(edit["range"]["start"], json!({"line": 0, "character": 0}));
    let fresh = edit["newText"].as_str().unwrap();
    s.end();
    std::fs::write(&lock, fresh).unwrap();
    let lint = ryechain(&root, &project, &["lint", "--no-cache"]);
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
}
