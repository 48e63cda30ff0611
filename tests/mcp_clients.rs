//! `ryechain mcp`: the execute and search tools' arguments and schemas (checked here directly), the protocol
//! on the wire (raw JSON-RPC lines: version negotiation, `structuredContent` by version, nothing
//! but protocol messages on stdout, a clean exit when stdin closes), and a real client nobody on
//! the project wrote: the official MCP Python SDK (PyPI `mcp`, in the virtualenv `.ci/run`
//! makes at `target/mcp-venv`) runs `tests/mcp_clients/mcp_client_session.py` against a signed
//! temporary project.
//!
//! Without the SDK that test skips and says why, unless `RYECHAIN_REQUIRE_MCP_CLIENTS=1` (set by
//! `.ci/run`) or `CI=true`, which turn a missing client into a failure.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests spawn the server and its client and write a temporary project"
)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use ryechain::edges::mcp::args::{self, ExecuteArgs};
use ryechain::edges::mcp::search;
use ryechain::edges::mcp::server::{has_structured_content, tool_result};
use ryechain::edges::mcp::tools::{self, ToolNames};
use ryechain::facts::search::{SearchRequest, SortBy, Source};
use ryechain::integrity::ItemKind;
use ryechain::system::os::OsSystem;
use serde_json::{Map, Value as Json, json};

use common::project::{BIN, mcp_sdk, ryechain_in};

/// How long any one answer of the server may take here (a debug build on a busy machine).
const PATIENCE: Duration = Duration::from_secs(60);

fn object(v: Json) -> Map<String, Json> {
    match v {
        Json::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn read(v: Json) -> Result<ExecuteArgs, String> {
    args::read(Some(&object(v)))
}

// ---------------------------------------------------------------------------------------------
// The arguments and the schema.

#[test]
fn arguments_are_read_with_seed_003s_defaults() {
    let a =
        read(json!({"item_type": "tool", "item_id": "acme/greet", "project_path": "/p"})).unwrap();
    assert_eq!(
        a,
        ExecuteArgs {
            item_type: "tool".into(),
            item_id: "acme/greet".into(),
            project_path: Some("/p".into()),
            parameters: Map::new(),
            dry_run: false,
            threaded: None,
        }
    );
    // null stands for "not given" in an optional argument, as many clients send it.
    let a = read(json!({
        "item_type": "tool", "item_id": "x", "project_path": "/p",
        "parameters": null, "dry_run": null, "thread": false
    }))
    .unwrap();
    assert_eq!(
        (a.parameters.len(), a.dry_run, a.threaded),
        (0, false, None)
    );
    let a = read(json!({
        "item_type": "tool", "item_id": "x", "project_path": "/p",
        "parameters": {"n": 1}, "dry_run": true
    }))
    .unwrap();
    assert_eq!(a.parameters, object(json!({"n": 1})));
    assert!(a.dry_run);
    // The type is checked by the caller, which answers §12.1's words.
    assert_eq!(
        read(json!({"item_type": "prompt", "item_id": "x"}))
            .unwrap()
            .item_type,
        "prompt"
    );
    // No project_path: the server's default project may stand in.
    assert_eq!(
        read(json!({"item_type": "tool", "item_id": "x"}))
            .unwrap()
            .project_path,
        None
    );
}

#[test]
fn missing_mistyped_and_unknown_arguments_say_what_to_send() {
    let cases = [
        (
            json!({}),
            "Missing required argument `item_type` (one of directive, tool, knowledge)",
        ),
        (
            json!({"item_type": "tool"}),
            "Missing required argument `item_id` (the item's id, such as `rye/bash/bash`)",
        ),
        (
            json!({"item_type": 3, "item_id": "x"}),
            "Argument `item_type` must be a string, not a number",
        ),
        (
            json!({"item_type": "tool", "item_id": ["x"]}),
            "Argument `item_id` must be a string, not an array",
        ),
        (
            json!({"item_type": "tool", "item_id": null}),
            "Argument `item_id` must be a string, not null",
        ),
        (
            json!({"item_type": "tool", "item_id": "x", "project_path": 1}),
            "Argument `project_path` must be a string, not a number",
        ),
        (
            json!({"item_type": "tool", "item_id": "x", "parameters": "{\"n\": 1}"}),
            "Argument `parameters` must be an object, not a string",
        ),
        (
            json!({"item_type": "tool", "item_id": "x", "dry_run": "true"}),
            "Argument `dry_run` must be a boolean, not a string",
        ),
        // A misspelt dry_run must not run the tool for real.
        (
            json!({"item_type": "tool", "item_id": "x", "dryrun": true}),
            "Unknown argument `dryrun` (did you mean `dry_run`?); the arguments are item_type, item_id, project_path, parameters, dry_run, thread",
        ),
        (
            json!({"item_type": "tool", "item_id": "x", "colour": 1}),
            "Unknown argument `colour`; the arguments are item_type, item_id, project_path, parameters, dry_run, thread",
        ),
    ];
    for (given, expected) in cases {
        assert_eq!(read(given.clone()), Err(expected.to_owned()), "{given}");
    }
    // No arguments at all is the empty object.
    assert_eq!(
        args::read(None),
        Err("Missing required argument `item_type` (one of directive, tool, knowledge)".into())
    );
}

#[test]
fn thread_and_its_companions_are_refused_for_want_of_an_llm_provider() {
    let base = json!({"item_type": "directive", "item_id": "x", "project_path": "/p"});
    let with = |k: &str, v: Json| {
        let mut m = object(base.clone());
        m.insert(k.into(), v);
        args::read(Some(&m)).unwrap().threaded
    };
    assert_eq!(with("thread", json!(true)), Some("thread"));
    assert_eq!(with("async", json!(true)), Some("async"));
    assert_eq!(with("model", json!("m")), Some("model"));
    assert_eq!(
        with("limit_overrides", json!({"turns": 3})),
        Some("limit_overrides")
    );
    assert_eq!(with("thread", json!(false)), None);
    assert_eq!(with("model", Json::Null), None);
    let text = args::thread_refusal("thread");
    assert!(text.contains("needs an LLM provider"), "{text}");
    assert!(text.contains("without `thread`"), "{text}");
    let text = args::thread_refusal("model");
    assert!(
        text.starts_with("`model` applies only to threaded execution"),
        "{text}"
    );
}

#[test]
fn project_path_must_be_an_absolute_project_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(project.join(".ai")).unwrap();
    std::fs::create_dir_all(tmp.path().join("bare")).unwrap();
    std::fs::write(tmp.path().join("file"), "").unwrap();
    let at = |p: &Path| p.to_str().unwrap().to_owned();
    let dir =
        |given: Option<&str>, default: Option<&Path>| args::project_dir(&OsSystem, given, default);
    assert_eq!(dir(Some(&at(&project)), None), Ok(project.clone()));
    // The server's default project stands in only when the call names none.
    let other = tmp.path().join("other");
    assert_eq!(dir(None, Some(&other)), Ok(other.clone()));
    assert_eq!(dir(Some(&at(&project)), Some(&other)), Ok(project.clone()));
    let err = |given: Option<&str>| dir(given, None).unwrap_err();
    assert_eq!(
        err(None),
        "Missing required argument `project_path` (the absolute path of the project directory, the one holding `.ai/`)"
    );
    assert_eq!(
        err(Some("proj")),
        "Argument `project_path` must be an absolute path, not `proj`; give the absolute path of the project directory, the one holding `.ai/`"
    );
    assert!(err(Some("")).starts_with("Argument `project_path` is empty"));
    let gone = at(&tmp.path().join("gone"));
    assert_eq!(
        err(Some(&gone)),
        format!("Argument `project_path` {gone} does not exist")
    );
    let file = at(&tmp.path().join("file"));
    assert_eq!(
        err(Some(&file)),
        format!("Argument `project_path` {file} is a file, not the project directory")
    );
    let bare = at(&tmp.path().join("bare"));
    assert_eq!(
        err(Some(&bare)),
        format!(
            "Argument `project_path` {bare} has no `.ai/` directory, so it is no Rye project (`ryechain init` makes one)"
        )
    );
    // A folder inside the project is not the project (the reference reads `<project_path>/.ai`).
    let inner = at(&project.join(".ai"));
    assert!(err(Some(&inner)).contains("has no `.ai/` directory"));
}

#[test]
fn the_schema_lists_seed_003s_parameters_under_either_name() {
    let schema = tools::execute_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["required"],
        json!(["item_type", "item_id", "project_path"])
    );
    let props: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(props, tools::EXECUTE_ARGUMENTS);
    assert_eq!(
        schema["properties"]["item_type"]["enum"],
        json!(["directive", "tool", "knowledge"])
    );
    assert_eq!(schema["properties"]["parameters"]["type"], "object");
    assert_eq!(schema["properties"]["parameters"]["default"], json!({}));
    for flag in ["dry_run", "thread"] {
        assert_eq!(schema["properties"][flag]["type"], "boolean");
        assert_eq!(schema["properties"][flag]["default"], false);
    }
    let seed = tools::execute_tool(ToolNames::Seed);
    assert_eq!(seed.name, "rye_execute");
    assert_eq!(Json::Object((*seed.input_schema).clone()), schema);
    assert_eq!(ToolNames::Seed.server_name(), "ryechain");
    let reference = tools::execute_tool(ToolNames::Reference);
    assert_eq!(reference.name, "execute");
    assert_eq!(ToolNames::Reference.server_name(), "rye");
}

/// The property names of a schema, in order.
fn properties(schema: &Json) -> Vec<&str> {
    schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn the_load_and_sign_schemas_list_the_references_parameters_under_either_name() {
    // §12.8, §12.9: the same required three as execute; spaces by name.
    let load = tools::load_schema();
    assert_eq!(properties(&load), tools::LOAD_ARGUMENTS);
    assert_eq!(
        load["required"],
        json!(["item_type", "item_id", "project_path"])
    );
    assert_eq!(
        load["properties"]["source"]["enum"],
        json!(["project", "user", "system"])
    );
    assert_eq!(
        load["properties"]["destination"]["enum"],
        json!(["project", "user"])
    );
    let sign = tools::sign_schema();
    assert_eq!(properties(&sign), tools::SIGN_ARGUMENTS);
    assert_eq!(sign["properties"]["source"]["default"], "project");
    assert_eq!(
        sign["properties"]["source"]["enum"],
        json!(["project", "user"])
    );
    for (names, l, s) in [
        (ToolNames::Seed, "rye_load", "rye_sign"),
        (ToolNames::Reference, "load", "sign"),
    ] {
        let (lt, st) = (tools::load_tool(names), tools::sign_tool(names));
        assert_eq!((lt.name.as_ref(), st.name.as_ref()), (l, s));
        assert_eq!(Json::Object((*lt.input_schema).clone()), load);
        assert_eq!(Json::Object((*st.input_schema).clone()), sign);
    }
}

fn read_search(v: Json) -> Result<search::SearchArgs, String> {
    search::read(Some(&object(v)))
}

#[test]
fn search_arguments_are_read_with_the_references_defaults_and_the_seed_era_names() {
    let a = read_search(json!({"item_type": "tool", "query": "x", "project_path": "/p"})).unwrap();
    assert_eq!(
        a.request,
        SearchRequest::new(ItemKind::Tool, "x"),
        "source project, limit 10, offset 0, by score"
    );
    assert_eq!((a.scope, a.space), (None, None));
    let a = read_search(json!({
        "item_type": "knowledge", "query": "q", "source": "all", "limit": 3, "offset": 6,
        "sort_by": "name", "fields": {"category": "core"}, "filters": {"version": ">=1.0.0"},
        "fuzzy": {"enabled": true}, "proximity": {"enabled": true, "max_distance": 3},
    }))
    .unwrap();
    let r = &a.request;
    assert_eq!(
        (r.kind, r.source, r.limit, r.offset),
        (ItemKind::Knowledge, Source::All, 3, 6)
    );
    assert_eq!(r.sort_by, SortBy::Name);
    assert_eq!(r.fields, [("category".to_owned(), "core".to_owned())]);
    assert_eq!(r.filters, [("version".to_owned(), json!(">=1.0.0"))]);
    assert_eq!(
        (r.fuzzy, r.proximity),
        (search::DEFAULT_FUZZY_DISTANCE, Some(3))
    );
    let off = read_search(
        json!({"item_type": "tool", "query": "q", "fuzzy": {"enabled": false, "max_distance": 4}}),
    )
    .unwrap();
    assert_eq!(off.request.fuzzy, 0);
    // The seed era: `scope` for the type and a namespace, `space` (default all) for the source.
    let a = read_search(json!({"scope": "rye.search.tool.rye.core.*", "query": "*"})).unwrap();
    assert_eq!(a.request.kind, ItemKind::Tool);
    assert_eq!(a.request.id_glob.as_deref(), Some("rye/core/*"));
    assert_eq!(a.request.source, Source::All);
    assert_eq!(
        (a.scope.as_deref(), a.space.as_deref()),
        (Some("rye.search.tool.rye.core.*"), Some("all"))
    );
    let a = read_search(json!({"scope": "directive", "space": "user", "query": "q"})).unwrap();
    assert_eq!(
        (a.request.kind, a.request.source),
        (ItemKind::Directive, Source::User)
    );
    let a =
        read_search(json!({"item_type": "tool", "scope": "tool.acme.*", "query": "q"})).unwrap();
    assert_eq!(a.request.id_glob.as_deref(), Some("acme/*"));
}

#[test]
fn bad_search_arguments_say_what_to_send() {
    let err = |v: Json| read_search(v).unwrap_err();
    assert_eq!(
        err(json!({"item_type": "tool"})),
        "Missing required argument `query` (keywords to search for; `*` lists every item)"
    );
    assert!(err(json!({"query": "q"})).starts_with("Missing required argument `item_type`"));
    assert!(err(json!({"query": "q"})).contains("seed-era `scope`"));
    assert_eq!(
        err(json!({"item_type": "prompt", "query": "q"})),
        "Unknown item type: prompt"
    );
    assert!(err(json!({"scope": "prompt.x", "query": "q"})).contains("names no item type"));
    assert!(
        err(json!({"item_type": "tool", "scope": "directive", "query": "q"}))
            .contains("different item types")
    );
    assert!(
        err(json!({"item_type": "tool", "query": "q", "source": "user", "space": "all"}))
            .contains("different spaces")
    );
    assert_eq!(
        err(json!({"item_type": "tool", "query": "q", "source": "everywhere"})),
        "Argument `source` must be one of project, user, system, all, not `everywhere`"
    );
    assert_eq!(
        err(json!({"item_type": "tool", "query": "q", "limit": -1})),
        "Argument `limit` must be a whole number of 0 or more, not a number"
    );
    assert_eq!(
        err(json!({"item_type": "tool", "query": "q", "limt": 3})),
        "Unknown argument `limt` (did you mean `limit`?); the arguments are item_type, query, project_path, source, limit, offset, sort_by, fields, filters, fuzzy, proximity, scope, space"
    );
    assert!(
        err(json!({"item_type": "tool", "query": "q", "fuzzy": true}))
            .starts_with("Argument `fuzzy` must be an object")
    );
    assert_eq!(
        err(json!({"item_type": "tool", "query": "q", "fuzzy": {"on": true}})),
        "Unknown key `on` in `fuzzy`; its keys are enabled, max_distance"
    );
    assert_eq!(
        err(json!({"item_type": "tool", "query": "q", "fields": {"name": 3}})),
        "Argument `fields.name` must be a query string, not a number"
    );
    assert!(
        err(json!({"item_type": "tool", "query": "q", "sort_by": "size"}))
            .contains("score, date, name")
    );
}

#[test]
fn the_search_schema_lists_the_references_parameters_and_the_seed_era_names() {
    let schema = tools::search_schema();
    assert_eq!(schema["required"], json!(["query", "project_path"]));
    let props: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(props, tools::SEARCH_ARGUMENTS);
    assert_eq!(schema["properties"]["source"]["default"], "project");
    assert_eq!(schema["properties"]["space"]["default"], "all");
    assert_eq!(schema["properties"]["limit"]["default"], 10);
    assert_eq!(
        schema["properties"]["proximity"]["properties"]["max_distance"]["default"],
        5
    );
    assert_eq!(tools::search_tool(ToolNames::Seed).name, "rye_search");
    assert_eq!(tools::search_tool(ToolNames::Reference).name, "search");
}

#[test]
fn a_response_is_one_text_item_and_structured_content_where_the_protocol_has_it() {
    let ok = json!({"status": "success", "data": {"a": 1}});
    let r = tool_result(ok.clone(), true);
    assert_eq!(r.is_error, Some(false));
    assert_eq!(r.structured_content, Some(ok.clone()));
    assert_eq!(r.content.len(), 1);
    let text = r.content[0].as_text().map(|t| t.text.clone()).unwrap();
    assert_eq!(serde_json::from_str::<Json>(&text).unwrap(), ok);
    let passed = json!({"status": "validation_passed"});
    assert_eq!(tool_result(passed, false).is_error, Some(false));
    let err = json!({"status": "error", "error": "Tool not found: x"});
    let r = tool_result(err, false);
    assert_eq!(r.is_error, Some(true));
    assert_eq!(r.structured_content, None);
    for (version, structured) in [
        (ProtocolVersion::V_2024_11_05, false),
        (ProtocolVersion::V_2025_03_26, false),
        (ProtocolVersion::V_2025_06_18, true),
        (ProtocolVersion::V_2025_11_25, true),
        (ProtocolVersion::V_2026_07_28, true),
    ] {
        assert_eq!(
            has_structured_content(Some(&version)),
            structured,
            "{version}"
        );
    }
    assert!(!has_structured_content(None));
}

// ---------------------------------------------------------------------------------------------
// The protocol on the wire, with raw JSON-RPC lines.

/// A running `ryechain mcp` spoken to line by line.
struct Wire {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl Wire {
    fn start(home: &Path, args: &[&str]) -> Wire {
        let mut child = Command::new(BIN)
            .arg("mcp")
            .args(args)
            .env("HOME", home)
            .env_remove("USER_SPACE")
            .env_remove("RYE_SYSTEM_SPACE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ryechain mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Wire {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    fn send(&mut self, message: &Json) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line on stdout, which must be one JSON-RPC message.
    fn recv(&self) -> Json {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("the server answers");
        let message: Json = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only protocol messages: {line:?} ({e})"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    fn initialize(&mut self, version: &str) -> Json {
        self.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}
            }
        }));
        let answer = self.recv();
        assert_eq!(answer["id"], 0, "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Close stdin and wait for the server to exit: its exit code, what else it wrote to
    /// stdout, and its stderr.
    fn close(mut self) -> (Option<i32>, Vec<String>, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let rest: Vec<String> = self.lines.try_iter().collect();
        (status.code(), rest, self.stderr.join().unwrap())
    }
}

#[test]
fn the_server_writes_only_protocol_messages_and_exits_cleanly_when_stdin_closes() {
    let home = tempfile::tempdir().unwrap();
    // Input that ends before `initialize`: nothing was asked, a clean exit.
    let (code, rest, stderr) = Wire::start(home.path(), &[]).close();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(rest.is_empty() && stderr.is_empty(), "{rest:?} {stderr}");

    let mut wire = Wire::start(home.path(), &[]);
    let init = wire.initialize("2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "ryechain", "{init}");
    assert_eq!(
        init["result"]["serverInfo"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{init}"
    );
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    wire.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let list = wire.recv();
    assert_eq!(list["id"], 1);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["rye_execute", "rye_search", "rye_load", "rye_sign"],
        "{list}"
    );
    // An unknown tool is a protocol error (-32602, as the MCP specification answers it).
    wire.send(&json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "rye_nonesuch", "arguments": {}}
    }));
    let unknown = wire.recv();
    assert_eq!(unknown["id"], 2);
    assert_eq!(
        unknown["error"],
        json!({"code": -32602, "message": "Unknown tool: rye_nonesuch"})
    );
    // Arguments that are not an object: a malformed request (-32602), not an unknown method.
    wire.send(&json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "rye_execute", "arguments": "item_type=tool"}
    }));
    let malformed = wire.recv();
    assert_eq!(malformed["id"], 3);
    assert_eq!(malformed["error"]["code"], -32602, "{malformed}");
    let (code, rest, stderr) = wire.close();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn versions_negotiate_as_the_spec_says_and_gate_structured_content() {
    let home = tempfile::tempdir().unwrap();
    // A version the server speaks is echoed; any other is answered with the newest one it
    // speaks over `initialize` (2026-07-28 has no handshake).
    for (asked, agreed, structured) in [
        ("2024-11-05", "2024-11-05", false),
        ("2025-03-26", "2025-03-26", false),
        ("2025-06-18", "2025-06-18", true),
        ("2025-11-25", "2025-11-25", true),
        ("2026-07-28", "2025-11-25", true),
        ("2099-01-01", "2025-11-25", true),
        ("2024-01-01", "2025-11-25", true),
    ] {
        let mut wire = Wire::start(home.path(), &["--tool-names", "reference"]);
        let init = wire.initialize(asked);
        assert_eq!(init["result"]["protocolVersion"], agreed, "{asked}: {init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "rye", "{init}");
        wire.send(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "execute", "arguments": {"item_type": "tool"}}
        }));
        let call = wire.recv();
        let result = &call["result"];
        assert_eq!(result["isError"], true, "{call}");
        let text = result["content"][0]["text"].as_str().unwrap();
        let response: Json = serde_json::from_str(text).unwrap();
        assert_eq!(
            response,
            json!({"status": "error", "error": "Missing required argument `item_id` (the item's id, such as `rye/bash/bash`)"})
        );
        assert_eq!(
            result.get("structuredContent"),
            structured.then_some(&response),
            "{asked}: {call}"
        );
        let (code, _, stderr) = wire.close();
        assert_eq!(code, Some(0), "{stderr}");
    }
}

#[test]
fn an_agents_sign_call_never_makes_or_trusts_a_key() {
    // Trust comes from the person: where no signing key exists, `ryechain sign` at the command
    // line makes and trusts one, but `rye_sign` answers an error and writes nothing; where the
    // key exists but is not trusted, the same.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    ryechain_in(&project, &home, &["init"]);
    ryechain_in(
        &project,
        &home,
        &["new", "tool", "acme/greet", "--runtime", "bash"],
    );
    let tool = project.join(".ai/tools/acme/greet.sh");
    let before = std::fs::read_to_string(&tool).unwrap();
    let sign = |wire: &mut Wire, id: u64| {
        wire.send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "rye_sign", "arguments": {
                "item_type": "tool", "item_id": "acme/greet",
                "project_path": project.to_str().unwrap()
            }}
        }));
        let call = wire.recv();
        assert_eq!(call["result"]["isError"], true, "{call}");
        call["result"]["structuredContent"]["error"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let mut wire = Wire::start(&home, &[]);
    wire.initialize("2025-11-25");
    let error = sign(&mut wire, 1);
    assert!(
        error.starts_with("no signing key in ") && error.contains("`ryechain keys generate`"),
        "{error}"
    );
    assert!(!home.join(".ai/config/keys").exists());
    assert_eq!(std::fs::read_to_string(&tool).unwrap(), before);
    let (code, _, _) = wire.close();
    assert_eq!(code, Some(0));

    // A key made, then its trust document removed.
    ryechain_in(&project, &home, &["keys", "generate"]);
    std::fs::remove_dir_all(home.join(".ai/config/keys/trusted")).unwrap();
    let _ = std::fs::remove_dir_all(home.join(".ai/trusted_keys"));
    let mut wire = Wire::start(&home, &[]);
    wire.initialize("2025-11-25");
    let error = sign(&mut wire, 1);
    assert!(
        error.contains("is not trusted") && error.contains("`ryechain keys trust "),
        "{error}"
    );
    assert!(!home.join(".ai/config/keys/trusted").exists());
    assert_eq!(std::fs::read_to_string(&tool).unwrap(), before);
    let (code, _, _) = wire.close();
    assert_eq!(code, Some(0));
}

#[test]
fn path_is_the_project_of_a_call_that_names_none() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    ryechain_in(&project, &home, &["init"]);
    ryechain_in(
        &project,
        &home,
        &["new", "tool", "acme/greet", "--runtime", "bash"],
    );
    // Found upwards, as `lint` finds it.
    let inner = project.join(".ai/tools");
    let mut wire = Wire::start(&home, &[inner.to_str().unwrap()]);
    wire.initialize("2025-11-25");
    wire.send(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "rye_execute", "arguments": {
            "item_type": "tool", "item_id": "acme/greet", "dry_run": true
        }}
    }));
    let call = wire.recv();
    let response = &call["result"]["structuredContent"];
    assert_eq!(response["status"], "validation_passed", "{call}");
    assert_eq!(response["chain"][0], "acme/greet", "{call}");
    let (code, _, stderr) = wire.close();
    assert_eq!(code, Some(0), "{stderr}");
    // A PATH that holds no project is refused at start (exit 2), before any protocol message.
    let (code, rest, stderr) = Wire::start(&home, &[tmp.path().to_str().unwrap()]).close();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(stderr.contains("could not find `.ai/`"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// The official Python SDK as the client.

#[test]
fn the_official_python_sdk_lists_and_calls_rye_execute() {
    let Some(python) = mcp_sdk("mcp.client.stdio") else {
        return;
    };
    // A project with a signed bash tool and a signed one edited after signing, and a user space
    // (in the home directory) trusting the key.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    ryechain_in(&project, &home, &["init"]);
    for tool in [
        "acme/greet",
        "acme/tampered",
        "acme/publish_tables",
        "acme/sync_logs",
    ] {
        ryechain_in(&project, &home, &["new", "tool", tool, "--runtime", "bash"]);
    }
    // Descriptions the searches look for.
    for (tool, description) in [
        ("publish_tables", "Publish tables to the warehouse"),
        ("sync_logs", "Sync logs from the gateway"),
    ] {
        let path = project.join(format!(".ai/tools/acme/{tool}.sh"));
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replace(&format!("Describe what acme/{tool} does"), description);
        std::fs::write(&path, text).unwrap();
    }
    // A knowledge entry (the reference's `---` frontmatter) and a directive with a required input.
    std::fs::create_dir_all(project.join(".ai/knowledge/acme")).unwrap();
    std::fs::write(
        project.join(".ai/knowledge/acme/notes.md"),
        "---\ntitle: Deploy notes\nid: notes\n---\n\nShip on Fridays.\n",
    )
    .unwrap();
    std::fs::create_dir_all(project.join(".ai/directives/acme")).unwrap();
    std::fs::write(
        project.join(".ai/directives/acme/flow.md"),
        "# Flow\n\nResearch {input:topic}.\n\n```xml\n<directive name=\"flow\" version=\"1.0.0\">\n  <metadata><description>Research</description><category>acme</category></metadata>\n  <inputs><input name=\"topic\" required=\"true\"/></inputs>\n  <outputs><output name=\"summary\"/></outputs>\n</directive>\n```\n",
    )
    .unwrap();
    // Tools left unsigned for rye_sign, one of them with a misspelt executor id.
    for tool in ["later/fresh", "later/second", "later/broken"] {
        ryechain_in(&project, &home, &["new", "tool", tool, "--runtime", "bash"]);
    }
    let broken = project.join(".ai/tools/later/broken.sh");
    let text = std::fs::read_to_string(&broken).unwrap();
    std::fs::write(
        &broken,
        text.replace("runtimes/bash/bash", "runtimes/bash/bsh"),
    )
    .unwrap();
    ryechain_in(&project, &home, &["keys", "generate"]);
    ryechain_in(&project, &home, &["sign", "acme/*"]);
    ryechain_in(&project, &home, &["sign", "acme/*", "--type", "knowledge"]);
    ryechain_in(&project, &home, &["sign", "acme/*", "--type", "directive"]);
    let tampered = project.join(".ai/tools/acme/tampered.sh");
    let text = std::fs::read_to_string(&tampered).unwrap();
    std::fs::write(&tampered, format!("{text}echo edited after signing\n")).unwrap();

    let out = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/mcp_client_session.py"))
        .current_dir(tmp.path())
        .env("RYECHAIN_BIN", BIN)
        .env("RYECHAIN_VERSION", env!("CARGO_PKG_VERSION"))
        .env("RYECHAIN_PROJECT", &project)
        .env("RYECHAIN_HOME", &home)
        .env("HOME", &home)
        .stdin(Stdio::null())
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{stderr}"
    );
    let checks = stdout.lines().filter(|l| l.starts_with("ok: ")).count();
    assert_eq!(checks, 31, "{stdout}\n{stderr}");
    // The server wrote nothing to its stderr (the client passes it through).
    assert!(stderr.trim().is_empty(), "{stderr}");
}
