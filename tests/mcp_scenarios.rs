//! The reference's scenarios for `rye_execute`, `rye_sign` and `rye_load` (§14 #12–#19, #54,
//! #55), ported to `ryechain mcp`, and the bad input the server must survive (a 10 MB
//! `parameters` object, lines that are not JSON-RPC, a request before `initialize`): each is
//! spoken over the protocol (raw JSON-RPC lines on the binary's stdio) against a temporary
//! project signed with a real key, and each scenario test names the scenario it ports.
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects and spawn the binary"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value as Json, json};

mod common;

use common::project::{BIN, TempProject};

/// A temporary home (the user space, trusting the signing key) and project.
struct Tree(TempProject);

impl Tree {
    fn new() -> Tree {
        let p = TempProject::empty("project");
        std::fs::create_dir_all(p.dir.join(".ai")).unwrap();
        p.cli(&["keys", "generate"]);
        Tree(p)
    }

    fn home(&self) -> PathBuf {
        self.0.home.clone()
    }

    fn project(&self) -> PathBuf {
        self.0.dir.clone()
    }

    fn project_str(&self) -> String {
        self.0.path_str()
    }

    /// Write `.ai/<rel>` of the project.
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        self.0.write(&format!(".ai/{rel}"), text)
    }

    /// `ryechain <args>` in the project, which must succeed.
    fn cli(&self, args: &[&str]) {
        self.0.cli(args);
    }

    /// A server session: initialized, ready for calls.
    fn server(&self) -> Server {
        let mut child = Command::new(BIN)
            .arg("mcp")
            .env("HOME", self.home())
            .env_remove("USER_SPACE")
            .env_remove("RYE_SYSTEM_SPACE")
            .env_remove("RYE_SIGNING_KEY_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            stdin: Some(stdin),
            stdout,
            next: 1,
            project: self.project_str(),
        };
        s.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "scenarios", "version": "0"}}
        }));
        let init = s.recv();
        assert_eq!(init["id"], 0, "{init}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
    project: String,
}

impl Server {
    fn send(&mut self, message: &Json) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Json {
        let mut line = String::new();
        assert!(
            self.stdout.read_line(&mut line).unwrap() > 0,
            "the server hung up"
        );
        serde_json::from_str(&line).unwrap()
    }

    /// `tools/call` of `tool` with `arguments` (and the project): the JSON answered, with
    /// `isError` checked against its status.
    fn call(&mut self, tool: &str, mut arguments: Json) -> Json {
        arguments["project_path"] = json!(self.project);
        let id = self.next;
        self.next += 1;
        self.send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}
        }));
        let answer = self.recv();
        assert_eq!(answer["id"], id, "{answer}");
        let result = &answer["result"];
        let response = result["structuredContent"].clone();
        let text = result["content"][0]["text"].as_str().unwrap();
        assert_eq!(serde_json::from_str::<Json>(text).unwrap(), response);
        assert_eq!(
            result["isError"] == json!(true),
            response["status"] == "error",
            "{answer}"
        );
        response
    }

    fn execute(&mut self, item_type: &str, item_id: &str, extra: Json) -> Json {
        let mut args = json!({"item_type": item_type, "item_id": item_id});
        if let Json::Object(more) = extra {
            args.as_object_mut().unwrap().extend(more);
        }
        self.call("rye_execute", args)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        if !std::thread::panicking() {
            assert!(status.success(), "the server exits 0 when stdin closes");
        }
    }
}

const WORKFLOW: &str = "# Workflow\n\nWrite {input:topic} to {input:path} ({input:mode:overview}){input:suffix?}\n\n```xml\n<directive name=\"workflow\" version=\"1.0.0\">\n  <metadata>\n    <description>A test workflow</description>\n    <category>test</category>\n  </metadata>\n  <inputs>\n    <input name=\"topic\" type=\"string\" required=\"true\"/>\n    <input name=\"path\" type=\"string\" required=\"true\"/>\n  </inputs>\n  <actions>\n    <execute item_type=\"tool\" item_id=\"rye/file-system/write\">\n      <param name=\"path\" value=\"{input:path}\"/>\n      <param name=\"content\" value=\"{input:data?}\"/>\n    </execute>\n    <search query=\"{input:topic}\" item_type=\"knowledge\"/>\n  </actions>\n</directive>\n```\n";

/// §14 #12, #15, #17, #18, #19: a signed project directive executes through the server (its
/// body and actions with the inputs filled in: a present key, a `:default`, a missing `?`), a
/// dry run validates, and a directive that does not exist is an error.
#[test]
fn s14_12_15_17_18_19_directives_execute_over_mcp() {
    let t = Tree::new();
    t.write("directives/test/workflow.md", WORKFLOW);
    t.cli(&["sign", "test/workflow", "--type", "directive"]);
    let mut s = t.server();
    let r = s.execute(
        "directive",
        "test/workflow",
        json!({"parameters": {"topic": "rust", "path": "/tmp/out"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["type"], "directive");
    assert!(r["metadata"]["duration_ms"].is_u64(), "{r}");
    // #18: present, `:default`, missing `?`.
    assert!(
        r["body"]
            .as_str()
            .unwrap()
            .contains("Write rust to /tmp/out (overview)\n"),
        "{r}"
    );
    // #19: action params and attributes.
    let actions = r["actions"].as_array().expect("actions");
    let write = &actions[0];
    assert_eq!(write["params"]["path"], "/tmp/out", "{r}");
    assert_eq!(write["params"]["content"], "", "{r}");
    assert_eq!(actions[1]["attributes"]["query"], "rust", "{r}");

    // #15
    let r = s.execute(
        "directive",
        "test/workflow",
        json!({"parameters": {"topic": "rust", "path": "/tmp/out"}, "dry_run": true}),
    );
    assert_eq!(r["status"], "validation_passed", "{r}");
    // §12.5: a required input missing.
    let r = s.execute(
        "directive",
        "test/workflow",
        json!({"parameters": {"topic": "rust"}}),
    );
    assert_eq!(r["error"], "Missing required inputs: path", "{r}");
    // #17
    let r = s.execute("directive", "test/nonexistent", json!({}));
    assert_eq!(r["status"], "error");
    assert_eq!(r["error"], "Directive not found: test/nonexistent", "{r}");
}

/// §14 #13, #16: a signed Python tool with `__executor_id__ = None` is a one-element chain: run,
/// it is refused as an unknown primitive (with parameters too); a dry run validates it.
#[test]
fn s14_13_16_a_tool_without_an_executor_over_mcp() {
    let t = Tree::new();
    t.write(
        "tools/test/mytool.py",
        "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = None\n__category__ = \"test\"\n\nprint('hi')\n",
    );
    t.cli(&["sign", "test/mytool", "--force"]);
    let mut s = t.server();
    for extra in [json!({}), json!({"parameters": {"arg1": "value1"}})] {
        let r = s.execute("tool", "test/mytool", extra);
        assert_eq!(r["status"], "error", "{r}");
        assert!(
            r["error"].as_str().unwrap().contains("Unknown primitive"),
            "{r}"
        );
    }
    let r = s.execute("tool", "test/mytool", json!({"dry_run": true}));
    assert_eq!(r["status"], "validation_passed", "{r}");
    assert_eq!(r["chain"], json!(["test/mytool"]), "{r}");
}

/// §14 #14: a signed `---` frontmatter entry executes: its title in `data`.
#[test]
fn s14_14_a_dash_frontmatter_entry_executes_over_mcp() {
    let t = Tree::new();
    t.write(
        "knowledge/entry.md",
        "---\ntitle: Test Entry\nid: entry\n---\n\nContent here",
    );
    t.cli(&["sign", "entry", "--type", "knowledge"]);
    let mut s = t.server();
    let r = s.execute("knowledge", "entry", json!({}));
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["type"], "knowledge");
    assert_eq!(r["data"]["title"], "Test Entry", "{r}");
    assert_eq!(r["data"]["body"], "Content here", "{r}");
}

/// How many signature lines a file holds.
fn signature_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.contains("rye:signed:"))
        .count()
}

/// §14 #54: `rye_sign` of a directive, a tool and a knowledge entry, each with its comment
/// form; a re-sign keeps exactly one signature line; a missing item is "not found"; a directive
/// without its XML is refused as invalid.
#[test]
fn s14_54_sign_over_mcp() {
    let t = Tree::new();
    let directive = t.write(
        "directives/test/test.md",
        &WORKFLOW.replace("name=\"workflow\"", "name=\"test\""),
    );
    let tool = t.write(
        "tools/test/script.py",
        "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\n__category__ = \"test\"\n\nprint('{}')\n",
    );
    let entry = t.write(
        "knowledge/test/test.md",
        "```yaml\nid: test\ntitle: Test\nversion: \"1.0.0\"\nentry_type: reference\n```\n\nBody.\n",
    );
    let bad = t.write("directives/test/plain.md", "# Plain\n\nNo XML here.\n");
    let mut s = t.server();
    let sign = |s: &mut Server, item_type: &str, id: &str| {
        s.call("rye_sign", json!({"item_type": item_type, "item_id": id}))
    };
    let r = sign(&mut s, "directive", "test/test");
    assert_eq!(r["status"], "signed", "{r}");
    assert_eq!(r["path"], directive.display().to_string());
    assert!(
        std::fs::read_to_string(&directive)
            .unwrap()
            .starts_with("<!-- rye:signed:")
    );
    let r = sign(&mut s, "tool", "test/script");
    assert_eq!(r["status"], "signed", "{r}");
    assert!(
        std::fs::read_to_string(&tool)
            .unwrap()
            .starts_with("# rye:signed:")
    );
    let r = sign(&mut s, "knowledge", "test/test");
    assert_eq!(r["status"], "signed", "{r}");
    assert!(
        std::fs::read_to_string(&entry)
            .unwrap()
            .starts_with("<!-- rye:signed:")
    );
    // Re-signed: one line still.
    let r = sign(&mut s, "tool", "test/script");
    assert_eq!(r["status"], "signed", "{r}");
    assert_eq!(signature_lines(&tool), 1);
    for path in [&directive, &entry] {
        assert_eq!(signature_lines(path), 1);
    }
    let r = sign(&mut s, "tool", "test/nonexistent");
    assert!(r["error"].as_str().unwrap().contains("not found"), "{r}");
    let r = sign(&mut s, "directive", "test/plain");
    assert_eq!(r["status"], "error", "{r}");
    let said = r.to_string().to_lowercase();
    assert!(
        said.contains("invalid") || said.contains("validation"),
        "{r}"
    );
    assert_eq!(signature_lines(&bad), 0);
    // What was signed verifies: the tool runs.
    let r = s.execute("tool", "test/script", json!({}));
    assert_eq!(r["status"], "success", "{r}");
}

/// §14 #55: `rye_load` of a signed directive and a signed tool answers the content and
/// `metadata.name == "test"`; a missing item is "not found".
#[test]
fn s14_55_load_over_mcp() {
    let t = Tree::new();
    t.write(
        "directives/test/test.md",
        &WORKFLOW.replace("name=\"workflow\"", "name=\"test\""),
    );
    t.write(
        "tools/test/test.py",
        "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\n__category__ = \"test\"\n\nprint('{}')\n",
    );
    t.cli(&["sign", "test/test", "--type", "directive"]);
    t.cli(&["sign", "test/test"]);
    let mut s = t.server();
    for item_type in ["directive", "tool"] {
        let r = s.call(
            "rye_load",
            json!({"item_type": item_type, "item_id": "test/test"}),
        );
        assert_eq!(r["status"], "success", "{r}");
        assert_eq!(r["metadata"]["name"], "test", "{r}");
        assert!(
            r["content"].as_str().unwrap().contains("rye:signed:"),
            "{r}"
        );
    }
    let r = s.call(
        "rye_load",
        json!({"item_type": "tool", "item_id": "test/nonexistent"}),
    );
    assert_eq!(r["status"], "error", "{r}");
    assert!(r["error"].as_str().unwrap().contains("not found"), "{r}");
}

/// A project with `test/size`, a signed bash tool that answers how many bytes of parameters it
/// read on stdin.
fn sized_tool() -> Tree {
    let t = Tree::new();
    t.cli(&["new", "tool", "test/size", "--runtime", "bash"]);
    let path = t.project().join(".ai/tools/test/size.sh");
    let text = std::fs::read_to_string(&path).unwrap();
    let body = text.find("params=$(cat)").unwrap();
    std::fs::write(
        &path,
        format!(
            "{}params=$(cat)\nprintf '{{\"bytes\": %d}}\\n' \"${{#params}}\"\n",
            &text[..body]
        ),
    )
    .unwrap();
    t.cli(&["sign", "test/size"]);
    t
}

/// A 10 MB `parameters` object reaches the tool whole, and the server answers the next call.
#[test]
fn a_ten_megabyte_parameters_object_is_handed_to_the_tool() {
    let t = sized_tool();
    let mut s = t.server();
    let blob = "x".repeat(10 * 1024 * 1024);
    let r = s.execute("tool", "test/size", json!({"parameters": {"blob": blob}}));
    assert_eq!(r["status"], "success", "{}", r["error"]);
    // As the reference writes them (`json.dumps`: `": "` between key and value).
    let sent = format!("{{\"blob\": \"{blob}\"}}").len();
    assert_eq!(r["data"]["bytes"], json!(sent), "{}", r["data"]);
    let r = s.execute("tool", "test/size", json!({"parameters": {}}));
    assert_eq!(r["data"]["bytes"], 2, "{r}");
}

/// Lines that are not JSON-RPC: a line that is not JSON is ignored (rmcp's choice, as the other
/// official SDKs: there is no id to answer, and answering garbage can start an error storm with
/// a peer that echoes it), JSON that is no message is `-32600`, an unknown method `-32601`; a
/// request before `initialize` is refused with an error; the server keeps serving after each.
#[test]
fn malformed_json_rpc_and_a_request_before_initialize_are_answered_and_survived() {
    let t = sized_tool();
    let mut child = Command::new(BIN)
        .arg("mcp")
        .env("HOME", t.home())
        .env_remove("USER_SPACE")
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut s = Server {
        stdin: child.stdin.take(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        child,
        next: 10,
        project: t.project_str(),
    };
    // Before initialize.
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let early = s.recv();
    assert_eq!(early["id"], 1, "{early}");
    assert!(early["error"]["code"].is_i64(), "{early}");
    s.send(&json!({
        "jsonrpc": "2.0", "id": 2, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bad", "version": "0"}}
    }));
    assert_eq!(s.recv()["result"]["protocolVersion"], "2025-11-25");
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // Not JSON: ignored; the next request is answered first.
    writeln!(s.stdin.as_mut().unwrap(), "this is not JSON {{").unwrap();
    s.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    let pong = s.recv();
    assert_eq!(pong["id"], 3, "{pong}");
    // JSON that is no JSON-RPC message.
    s.send(&json!({"jsonrpc": "2.0", "id": 4}));
    let invalid = s.recv();
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    s.send(&json!([1, 2, 3]));
    s.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/nonesuch"}));
    let mut unknown = s.recv();
    while unknown["id"] != 5 {
        assert_eq!(unknown["error"]["code"], -32600, "{unknown}");
        unknown = s.recv();
    }
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // And a real call still runs.
    let r = s.execute("tool", "test/size", json!({"parameters": {"a": 1}}));
    assert_eq!(r["status"], "success", "{r}");
}
