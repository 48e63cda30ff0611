//! The HTTP client primitive (§9.3) end to end: `ryechain exec` runs YAML tools whose executor is
//! `rye/core/primitives/http_client` against a real HTTP/1.1 server on 127.0.0.1 that the test
//! starts (std::net, one thread per connection) and that checks what it was sent. Also the bad
//! input of issue 33: a refused port, a name that does not resolve, a server that answers
//! garbage, one that never answers, a 100 MB body (capped), and a tampered tool (refused before
//! the server sees a request).
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects, run a local server and spawn the binary"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value as Json, json};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

/// One request as the server read it.
#[derive(Clone, Debug)]
struct Request {
    method: String,
    target: String,
    /// Lower-cased names.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server does with a connection.
enum Reply {
    /// A response: status line, headers and body.
    Http {
        status: &'static str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Bytes that are not HTTP, then close.
    Garbage,
    /// Close without answering.
    Close,
    /// Keep the connection open and never answer (until the client goes).
    Hang,
    /// A 200 whose body is `n` bytes, written until the client stops reading.
    Huge(u64),
}

fn http(status: &'static str, content_type: &str, body: &[u8]) -> Reply {
    Reply::Http {
        status,
        headers: vec![("Content-Type".into(), content_type.into())],
        body: body.to_vec(),
    }
}

/// A server on 127.0.0.1 answering each connection with `reply(n, request)`, `n` counting
/// connections from 0. It records every request it read.
struct Server {
    port: u16,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Request>>>,
}

type Handler = dyn Fn(usize, &Request) -> Reply + Send + Sync;

impl Server {
    fn start(reply: impl Fn(usize, &Request) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let reply: Arc<Handler> = Arc::new(reply);
        let (c, r) = (Arc::clone(&connections), Arc::clone(&requests));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let n = c.fetch_add(1, Ordering::SeqCst);
                let (reply, r) = (Arc::clone(&reply), Arc::clone(&r));
                std::thread::spawn(move || serve(stream, n, &*reply, &r));
            }
        });
        Server {
            port,
            connections,
            requests,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let len = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

fn serve(mut stream: TcpStream, n: usize, reply: &Handler, log: &Mutex<Vec<Request>>) {
    let Some(req) = read_request(&stream) else {
        return;
    };
    log.lock().unwrap().push(req.clone());
    match reply(n, &req) {
        Reply::Http {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", body.len());
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("Connection: close\r\n\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
        Reply::Garbage => {
            let _ = stream.write_all(b"\x00\x01 this is not HTTP at all \xff\xfe\r\n\r\n");
        }
        Reply::Close => {}
        Reply::Hang => {
            // Read until the client closes its side: then it has given up.
            let mut sink = [0u8; 64];
            while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
            log.lock().unwrap().push(Request {
                method: "CLOSED".into(),
                target: n.to_string(),
                headers: Vec::new(),
                body: Vec::new(),
            });
        }
        Reply::Huge(total) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {total}\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            let chunk = vec![b'x'; 64 * 1024];
            let mut sent = 0u64;
            while sent < total {
                let n = chunk.len().min((total - sent) as usize);
                if stream.write_all(&chunk[..n]).is_err() {
                    break;
                }
                sent += n as u64;
            }
            log.lock().unwrap().push(Request {
                method: "SENT".into(),
                target: sent.to_string(),
                headers: Vec::new(),
                body: Vec::new(),
            });
        }
    }
}

struct Out {
    code: i32,
    json: Json,
    stdout: String,
    stderr: String,
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
    /// Write the tool `<id>.yaml` with this YAML body (after the header lines).
    fn tool(&self, id: &str, yaml: &str) -> PathBuf {
        let p = self.project().join(format!(".ai/tools/{id}.yaml"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let text = format!(
            "version: \"1.0.0\"\ntool_type: http\nexecutor_id: rye/core/primitives/http_client\ncategory: {}\n{yaml}",
            id.rsplit_once('/').map_or("", |(c, _)| c)
        );
        std::fs::write(&p, text).unwrap();
        p
    }
    /// `ryechain <args>` with this user space and `env` added (proxies off).
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Out {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env("USER_SPACE", self.user())
            .env_remove("RYE_SYSTEM_SPACE")
            .stdin(Stdio::null());
        for var in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("spawn ryechain");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        Out {
            code: out.status.code().unwrap_or(-1),
            json: serde_json::from_str(&stdout).unwrap_or(Json::Null),
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
    /// `ryechain exec ITEM <project> --allow-unsigned --no-lockfile --format json <extra…>`.
    fn exec(&self, item: &str, extra: &[&str], env: &[(&str, &str)]) -> Out {
        let project = self.project();
        let mut args = vec![
            "exec",
            item,
            project.to_str().unwrap(),
            "--allow-unsigned",
            "--no-lockfile",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        self.run(&args, env)
    }
}

fn port(s: &Server) -> String {
    s.port.to_string()
}

/// §9.3: a POST with `${VAR}` in the url and a header, `{param}` in the url with `{{`/`}}`
/// escapes, a JSON body templated from the parameters, bearer auth from the environment; the
/// server checks each and answers JSON, which comes back as `data.body`.
#[test]
fn s9_3_post_sends_method_url_headers_auth_and_json_body() {
    let server = Server::start(|_, req| {
        let ok = req.method == "POST"
            && req.target == "/items/42?q={literal}"
            && req.header("authorization") == Some("Bearer s3cret")
            && req.header("x-trace") == Some("trace-7")
            && req.header("content-type") == Some("application/json")
            && serde_json::from_slice::<Json>(&req.body).ok()
                == Some(json!({"name": "Ada", "count": 3}));
        if ok {
            Reply::Http {
                status: "201 Created",
                headers: vec![
                    ("Content-Type".into(), "application/json".into()),
                    ("X-Server".into(), "test".into()),
                ],
                body: br#"{"created": true, "id": 42}"#.to_vec(),
            }
        } else {
            http(
                "400 Bad Request",
                "text/plain",
                format!("{req:?}").as_bytes(),
            )
        }
    });
    let t = Tree::new();
    t.tool(
        "t/create",
        r#"config:
  method: post
  url: "http://127.0.0.1:${TEST_PORT}/items/{item}?q={{literal}}"
  headers:
    X-Trace: "${TRACE_ID}"
  body:
    name: "{name}"
    count: "{count}"
  auth:
    type: bearer
    token: "${API_TOKEN}"
  timeout: 5
"#,
    );
    let out = t.exec(
        "t/create",
        &["--params", r#"{"item": 42, "name": "Ada", "count": 3}"#],
        &[
            ("TEST_PORT", &port(&server)),
            ("TRACE_ID", "trace-7"),
            ("API_TOKEN", "s3cret"),
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json["status"], "success");
    assert_eq!(out.json["data"]["status_code"], 201);
    assert_eq!(out.json["data"]["body"], json!({"created": true, "id": 42}));
    assert_eq!(out.json["data"]["headers"]["x-server"], "test");
    assert_eq!(
        out.json["chain"],
        json!(["t/create", "rye/core/primitives/http_client"])
    );
    assert_eq!(server.requests().len(), 1);
}

/// §9.3: a text body stays text; an api_key header; GET sends no body even when one is
/// configured; 4xx and 5xx are errors `HTTP <code>: <reason>` with the body kept in `data`.
#[test]
fn s9_3_text_bodies_api_keys_and_error_statuses() {
    let server = Server::start(|_, req| {
        if req.header("x-api-key") != Some("k-1") || !req.body.is_empty() {
            return http("401 Unauthorized", "text/plain", b"who are you");
        }
        match req.target.as_str() {
            "/ok" => http("200 OK", "text/plain", b"plain text, not JSON"),
            "/missing" => http("404 Not Found", "application/json", br#"{"detail": "no"}"#),
            _ => http("503 Service Unavailable", "text/plain", b"down"),
        }
    });
    let t = Tree::new();
    t.tool(
        "t/get",
        r#"config:
  url: "http://127.0.0.1:${TEST_PORT}/{path}"
  body: {ignored: true}
  auth: {type: api_key, key: "${KEY}"}
"#,
    );
    let env = [("TEST_PORT", port(&server)), ("KEY", "k-1".to_owned())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let ok = t.exec("t/get", &["--params", r#"{"path": "ok"}"#], &env);
    assert_eq!(ok.code, 0, "{}\n{}", ok.stdout, ok.stderr);
    assert_eq!(ok.json["data"]["body"], "plain text, not JSON");
    assert_eq!(ok.json["data"]["status_code"], 200);

    let missing = t.exec("t/get", &["--params", r#"{"path": "missing"}"#], &env);
    assert_eq!(missing.code, 1);
    assert_eq!(missing.json["status"], "error");
    assert_eq!(missing.json["error"], "HTTP 404: Not Found");
    assert_eq!(missing.json["data"]["body"], json!({"detail": "no"}));

    let down = t.exec("t/get", &["--params", r#"{"path": "down"}"#], &env);
    assert_eq!(down.code, 1);
    assert_eq!(down.json["error"], "HTTP 503: Service Unavailable");
    assert_eq!(down.json["data"]["status_code"], 503);
    assert_eq!(
        server.requests().len(),
        3,
        "a 5xx is an answer, never retried"
    );
}

/// §9.3 retries: connection errors are retried with the backoff (linear: 1 s), and the third
/// attempt's answer is the result.
#[test]
fn s9_3_a_retry_succeeds_on_the_third_attempt() {
    let server = Server::start(|n, _| {
        if n < 2 {
            Reply::Close
        } else {
            http("200 OK", "application/json", br#"{"attempt": 3}"#)
        }
    });
    let t = Tree::new();
    t.tool(
        "t/flaky",
        r#"config:
  url: "http://127.0.0.1:${TEST_PORT}/"
  retry: {max_attempts: 3, backoff: linear}
"#,
    );
    let out = t.exec("t/flaky", &[], &[("TEST_PORT", &port(&server))]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json["data"]["body"], json!({"attempt": 3}));
    assert_eq!(server.connections(), 3);
}

/// A server that accepts and never answers: the request times out (`--timeout`, or the
/// configured one), each attempt counted, and the answer is the spec's text; nothing is left
/// open (the server sees the client close).
#[test]
fn s9_3_a_server_that_never_answers_times_out() {
    let server = Server::start(|_, _| Reply::Hang);
    let t = Tree::new();
    t.tool(
        "t/hang",
        r#"config:
  url: "http://127.0.0.1:${TEST_PORT}/slow"
  timeout: 1
  retry: {max_attempts: 2, backoff: linear}
"#,
    );
    let out = t.exec("t/hang", &[], &[("TEST_PORT", &port(&server))]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json["status"], "error");
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.starts_with("Request failed after 2 attempts: timed out after 1 seconds"),
        "{error}"
    );
    assert_eq!(out.json["data"]["status_code"], 0);
    assert_eq!(out.json["data"]["body"], Json::Null);
    assert_eq!(server.connections(), 2);
}

/// Stream mode (§9.3): each `data:` line with a non-empty remainder is an event, counted and
/// returned in order; comments, empty data lines and other fields are not.
#[test]
fn s9_3_stream_mode_counts_and_returns_sse_events() {
    let n = 25;
    let server = Server::start(move |_, req| {
        if req.header("accept") != Some("text/event-stream") {
            return http("406 Not Acceptable", "text/plain", b"");
        }
        let mut body = String::from(": a comment\n\n");
        for i in 0..n {
            body.push_str(&format!("event: tick\ndata: {{\"i\": {i}}}\nid: {i}\n\n"));
        }
        body.push_str("data:\ndata:   \n\n");
        http("200 OK", "text/event-stream", body.as_bytes())
    });
    let t = Tree::new();
    t.tool(
        "t/events",
        r#"config:
  url: "http://127.0.0.1:${TEST_PORT}/events"
  headers: {Accept: text/event-stream}
"#,
    );
    let out = t.exec(
        "t/events",
        &["--params", r#"{"mode": "stream"}"#],
        &[("TEST_PORT", &port(&server))],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json["data"]["stream_events_count"], n);
    let events = out.json["data"]["body"].as_array().unwrap();
    assert_eq!(events.len(), n);
    assert_eq!(events[0], r#"{"i": 0}"#);
    assert_eq!(events[n - 1], format!(r#"{{"i": {}}}"#, n - 1));

    let bad = t.exec(
        "t/events",
        &["--params", r#"{"mode": "batch"}"#],
        &[("TEST_PORT", &port(&server))],
    );
    assert_eq!(bad.code, 1);
    assert_eq!(
        bad.json["error"],
        "Unknown mode: batch. Must be 'sync' or 'stream'"
    );
    assert_eq!(server.requests().len(), 1, "an unknown mode sends nothing");
}

/// Bad input: a refused port and a name that does not resolve are clear errors after the
/// configured attempts; a server that answers garbage is not retried (it answered).
#[test]
fn refused_unresolvable_and_garbage_are_clear_errors() {
    let t = Tree::new();
    // A port nobody listens on: bind one, then close it.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    t.tool(
        "t/refused",
        r#"config:
  url: "http://127.0.0.1:${TEST_PORT}/"
  retry: {max_attempts: 2, backoff: linear}
"#,
    );
    let out = t.exec("t/refused", &[], &[("TEST_PORT", &closed.to_string())]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.json["error"],
        format!("Request failed after 2 attempts: connection refused by 127.0.0.1:{closed}")
    );

    // RFC 6761: `.invalid` never resolves.
    t.tool(
        "t/nowhere",
        "config:\n  url: \"http://no-such-host.invalid/x\"\n  timeout: 10\n",
    );
    let out = t.exec("t/nowhere", &[], &[]);
    assert_eq!(out.code, 1);
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.starts_with("Request failed after 1 attempts: ")
            && error.contains("no-such-host.invalid"),
        "{error}"
    );

    let server = Server::start(|_, _| Reply::Garbage);
    t.tool(
        "t/garbage",
        r#"config:
  url: "http://127.0.0.1:${TEST_PORT}/"
  retry: {max_attempts: 3, backoff: linear}
"#,
    );
    let out = t.exec("t/garbage", &[], &[("TEST_PORT", &port(&server))]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.starts_with("Request failed after 1 attempts: ")
            && error.contains("did not answer in HTTP/1.1"),
        "{error}"
    );
    assert_eq!(server.connections(), 1, "garbage is an answer: no retry");
}

/// Bad input: a 100 MB response is cut at the output cap, said clearly as an error, and the rest
/// is never read (the server's writes stop far short of 100 MB once the client hangs up).
#[test]
fn a_100_mb_response_is_capped_and_not_read() {
    let total: u64 = 100 * 1024 * 1024;
    let server = Server::start(move |_, _| Reply::Huge(total));
    let t = Tree::new();
    t.tool(
        "t/huge",
        "config:\n  url: \"http://127.0.0.1:${TEST_PORT}/big\"\n",
    );
    let out = t.exec(
        "t/huge",
        &["--max-output", "65536"],
        &[("TEST_PORT", &port(&server))],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.json["status"], "error");
    assert_eq!(
        out.json["error"],
        format!(
            "The response body is larger than the output cap of 65536 bytes: kept the first 65536 of {total} bytes and read no further (raise the cap with --max-output)"
        )
    );
    assert_eq!(out.json["data"]["body"].as_str().unwrap().len(), 65536);
    assert_eq!(
        out.json["data"]["truncated"],
        json!({"body": total, "kept": 65536})
    );
    // The server stops when the client hangs up: wait for its record of what it wrote.
    let waited = std::time::Instant::now();
    let sent = loop {
        if let Some(r) = server.requests().iter().find(|r| r.method == "SENT") {
            break r.target.parse::<u64>().unwrap();
        }
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(30),
            "the server is still writing: the client never hung up"
        );
        std::thread::yield_now();
    };
    assert!(sent < total, "the whole body was sent ({sent} bytes)");
}

/// §10, issue 33 item 5: integrity of every chain element is checked before any request: an
/// unsigned tool (without --allow-unsigned) and a signed tool edited after signing are refused,
/// and the server sees no request.
#[test]
fn s10_a_tampered_or_unsigned_tool_sends_no_request() {
    let server = Server::start(|_, _| http("200 OK", "text/plain", b"hi"));
    let t = Tree::new();
    let tool = t.tool(
        "t/signed",
        "config:\n  url: \"http://127.0.0.1:${TEST_PORT}/\"\n",
    );
    let project = t.project();
    let env = [("TEST_PORT", port(&server))];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let exec = |env: &[(&str, &str)]| {
        t.run(
            &[
                "exec",
                "t/signed",
                project.to_str().unwrap(),
                "--no-lockfile",
                "--format",
                "json",
            ],
            env,
        )
    };
    let unsigned = exec(&env);
    assert_eq!(unsigned.code, 1, "{}", unsigned.stdout);
    assert_eq!(
        unsigned.json["error"],
        format!("Unsigned item: {}", tool.display())
    );
    let keys = t.run(&["keys", "generate"], &[]);
    assert_eq!(keys.code, 0, "{}{}", keys.stdout, keys.stderr);
    let sign = t.run(&["sign", "t/signed", project.to_str().unwrap()], &[]);
    assert_eq!(sign.code, 0, "{}{}", sign.stdout, sign.stderr);
    let signed = exec(&env);
    assert_eq!(signed.code, 0, "{}{}", signed.stdout, signed.stderr);
    assert_eq!(server.requests().len(), 1);
    let text = std::fs::read_to_string(&tool).unwrap();
    std::fs::write(&tool, text.replace("/\"", "/evil\"")).unwrap();
    let tampered = exec(&env);
    assert_eq!(tampered.code, 1, "{}", tampered.stdout);
    let error = tampered.json["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("Integrity failed: {}", tool.display())),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1, "the tampered tool sent nothing");
}

/// A dry run shows the request that would be sent, auth's secret redacted, and sends nothing;
/// the trace has the pipeline's events.
#[test]
fn s12_4_dry_run_shows_the_request_with_secrets_redacted() {
    let server = Server::start(|_, _| http("200 OK", "text/plain", b"hi"));
    let t = Tree::new();
    t.tool(
        "t/secret",
        r#"config:
  method: put
  url: "http://127.0.0.1:${TEST_PORT}/v1/{thing}"
  body: {a: 1}
  auth: {type: bearer, token: "${API_TOKEN}"}
"#,
    );
    let env = [
        ("TEST_PORT", port(&server)),
        ("API_TOKEN", "s3cret".to_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = t.exec(
        "t/secret",
        &["--dry-run", "--params", r#"{"thing": "x"}"#],
        &env,
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.json["status"], "validation_passed");
    let req = &out.json["request"];
    assert_eq!(req["method"], "PUT");
    assert_eq!(req["url"], format!("http://127.0.0.1:{}/v1/x", server.port));
    assert_eq!(req["headers"]["Authorization"], "Bearer <redacted>");
    assert_eq!(req["body"], json!({"a": 1}));
    assert!(!out.stdout.contains("s3cret"), "{}", out.stdout);
    assert_eq!(server.requests().len(), 0, "a dry run sends nothing");

    let traced = t.exec(
        "t/secret",
        &["--trace", "--params", r#"{"thing": "x"}"#],
        &env,
    );
    assert_eq!(traced.code, 0, "{}", traced.stdout);
    let steps: Vec<&str> = traced.json["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["step"].as_str().unwrap_or(""))
        .collect();
    assert!(steps.contains(&"resolve"), "{steps:?}");
    assert!(steps.contains(&"verify_integrity"), "{steps:?}");
}

/// A url naming a parameter nobody gave is a clear error before anything is sent.
#[test]
fn a_missing_url_name_is_a_clear_error() {
    let t = Tree::new();
    t.tool(
        "t/missing",
        "config:\n  url: \"http://127.0.0.1:9/{city}\"\n",
    );
    let out = t.exec("t/missing", &[], &[]);
    assert_eq!(out.code, 1);
    let error = out.json["error"].as_str().unwrap();
    assert!(
        error.starts_with("url: `{city}` names no parameter"),
        "{error}"
    );
}

/// The example HTTP tool of `examples/project` (signed, trusted through `examples/user`) runs
/// end to end against a local server, its base url from `${DEMO_API_BASE}`.
#[test]
fn the_example_http_tool_runs_end_to_end() {
    let server = Server::start(|_, req| {
        if req.target == "/greet/Ada" && req.header("accept") == Some("application/json") {
            http(
                "200 OK",
                "application/json",
                br#"{"greeting": "Hello, Ada"}"#,
            )
        } else {
            http("400 Bad Request", "text/plain", req.target.as_bytes())
        }
    });
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let project = root.join("project");
    let mut cmd = Command::new(BIN);
    cmd.args([
        "exec",
        "demo/fetch_greeting",
        project.to_str().unwrap(),
        "--params",
        r#"{"name": "Ada"}"#,
        "--no-lockfile",
        "--format",
        "json",
    ])
    .env("USER_SPACE", root.join("user"))
    .env("DEMO_API_BASE", server.url(""))
    .env_remove("RYE_SYSTEM_SPACE")
    .stdin(Stdio::null());
    for var in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Json = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["data"]["body"], json!({"greeting": "Hello, Ada"}));
}

/// The MCP server's `rye_execute` runs an HTTP tool the same way (the shared session), its
/// `${VAR}` from the server's environment, and answers the response as the call's result.
#[test]
fn rye_execute_over_mcp_sends_the_request() {
    let server = Server::start(|_, req| {
        if req.target == "/ping?who=mcp" {
            http("200 OK", "application/json", br#"{"pong": true}"#)
        } else {
            http("404 Not Found", "text/plain", b"")
        }
    });
    let t = Tree::new();
    t.tool(
        "t/ping",
        "config:\n  url: \"http://127.0.0.1:${TEST_PORT}/ping?who={who}\"\n",
    );
    let project = t.project();
    assert_eq!(t.run(&["keys", "generate"], &[]).code, 0);
    assert_eq!(
        t.run(&["sign", "t/ping", project.to_str().unwrap()], &[])
            .code,
        0
    );
    let mut child = Command::new(BIN)
        .args(["mcp", project.to_str().unwrap()])
        .env("USER_SPACE", t.user())
        .env("TEST_PORT", port(&server))
        .env_remove("RYE_SYSTEM_SPACE")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let say = |stdin: &mut std::process::ChildStdin, m: Json| {
        writeln!(stdin, "{m}").unwrap();
        stdin.flush().unwrap();
    };
    say(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "exec_http", "version": "0"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    say(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    say(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "rye_execute", "arguments": {
            "item_type": "tool", "item_id": "t/ping", "project_path": project,
            "parameters": {"who": "mcp"}}}}),
    );
    line.clear();
    stdout.read_line(&mut line).unwrap();
    drop(stdin);
    let answer: Json = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    let response = &answer["result"]["structuredContent"];
    assert_eq!(response["status"], "success", "{answer}");
    assert_eq!(response["data"]["body"], json!({"pong": true}));
    assert_eq!(server.requests().len(), 1);
    assert!(child.wait().unwrap().success());
}

/// Issue 33 item 5: a timed-out request leaves nothing open. Sent from this (long-lived) test
/// process, as the MCP server sends one: when `send` returns, the server has seen the client
/// close every connection it opened.
#[test]
fn a_timed_out_request_leaves_no_connection_open() {
    use ryechain::exec::http::{Backoff, HttpEnd, HttpPlan, Mode};
    let server = Server::start(|_, _| Reply::Hang);
    let plan = HttpPlan {
        method: "GET".into(),
        url: server.url("/slow"),
        headers: Vec::new(),
        body: None,
        timeout: std::time::Duration::from_millis(300),
        max_attempts: 2,
        backoff: Backoff::Linear,
        mode: Mode::Sync,
        output_cap: 1024,
        secret_headers: Vec::new(),
    };
    let outcome = ryechain::runner::http::send(&plan);
    assert_eq!(outcome.attempts, 2);
    assert!(
        matches!(&outcome.end, HttpEnd::Failed { attempts: 2, last } if last.starts_with("timed out after 0.3 seconds")),
        "{outcome:?}"
    );
    // The server thread records the close as soon as it reads the end of the stream.
    let closed = |s: &Server| s.requests().iter().filter(|r| r.method == "CLOSED").count();
    let waited = std::time::Instant::now();
    while closed(&server) < 2 && waited.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::yield_now();
    }
    assert_eq!(
        closed(&server),
        2,
        "every connection was closed by the client"
    );
}
