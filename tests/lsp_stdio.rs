//! The `ryechain lsp` binary over real pipes: a body that is not JSON gets `-32700` and the
//! session goes on; `shutdown` + `exit` ends it with code 0; closing stdin without `shutdown`
//! ends it with code 1 (as the protocol asks); nothing but protocol frames reaches stdout.
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
