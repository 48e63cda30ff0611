//! The language server in process over `Connection::memory()`: open, edit and fix a tool; a
//! runtime edit re-publishing its dependents; files created and deleted on disk; hover,
//! definition, completion, symbols and the quick fix; cancellation, stale generations, protocol
//! errors, and a clean shutdown.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests write workspaces to temp dirs and edit them on disk"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_server::{Connection, Message};
use ryechain::db::Settings;
use ryechain::load::SpaceSource;
use ryechain::lsp::server::{InitOptions, Setup, run};
use ryechain::lsp::uri;
use ryechain::system::os::OsSystem;
use ryechain::testing::{LspClient as Client, three_spaces};
use serde_json::{Value, json};

const RUNTIME: &str = "\
version: \"1.0.0\"
tool_type: runtime
executor_id: rye/core/runtimes/python/script
category: acme/runtimes
description: \"Project runtime\"
";

fn tool(executor: &str) -> String {
    format!(
        "\"\"\"A tool.\"\"\"\n\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"{executor}\"\n__category__ = \"acme\"\n__tool_description__ = \"d\"\n\n\ndef main(params):\n    return {{}}\n"
    )
}

struct Workspace {
    _dir: tempfile::TempDir,
    project: PathBuf,
    user: PathBuf,
}

impl Workspace {
    fn new(files: &[(&str, &str)]) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let user = dir.path().join("user");
        std::fs::create_dir_all(user.join(".ai/tools")).unwrap();
        let ws = Workspace {
            project,
            user,
            _dir: dir,
        };
        for (rel, text) in files {
            ws.write(rel, text);
        }
        ws
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.project.join(".ai").join(rel)
    }
    fn uri(&self, rel: &str) -> String {
        uri::from_path(&self.path(rel)).unwrap().as_str().to_owned()
    }
    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// The workspace-aware helpers on top of the shared client.
trait Edits {
    fn notify(&self, method: &str, params: Value);
    fn open(&self, ws: &Workspace, rel: &str) {
        let text = std::fs::read_to_string(ws.path(rel)).unwrap();
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": ws.uri(rel), "languageId": "python", "version": 1, "text": text}}),
        );
    }
    /// `workspace/didChangeWatchedFiles` for one file (`kind`: 1 created, 2 changed, 3 deleted).
    fn on_disk(&self, ws: &Workspace, rel: &str, kind: u32) {
        self.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": ws.uri(rel), "type": kind}]}),
        );
    }
    fn replace(&self, ws: &Workspace, rel: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": ws.uri(rel), "version": version},
                   "contentChanges": [{"text": text}]}),
        );
    }
}

impl Edits for Client {
    fn notify(&self, method: &str, params: Value) {
        Client::notify(self, method, params);
    }
}

/// A numeric request id as JSON (for `$/cancelRequest`).
fn c_id(id: &lsp_server::RequestId) -> Value {
    serde_json::from_str(&id.to_string()).unwrap()
}

fn codes(diags: &[Value]) -> Vec<String> {
    let mut c: Vec<String> = diags
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_owned())
        .collect();
    c.sort();
    c
}

fn rules(diags: &[Value], rule: &str) -> bool {
    diags.iter().any(|d| d["code"] == rule)
}

/// The spaces of a test workspace: its project (from `initialize`), its user dir, the embedded
/// bundle.
fn spaces_with_user(
    user: PathBuf,
) -> impl Fn(&Path, &InitOptions) -> anyhow::Result<(Vec<ryechain::load::SpaceSpec>, Vec<String>)> + Sync
{
    move |project: &Path, _: &InitOptions| {
        Ok((
            three_spaces(
                project.to_path_buf(),
                user.clone(),
                SpaceSource::Embedded,
                "ryechain",
            ),
            Vec::new(),
        ))
    }
}

/// A server setup over `spaces` with no embedded copies and no rule pages.
fn plain_setup<'a>(spaces: &'a ryechain::lsp::server::SpacesFn<'a>) -> Setup<'a> {
    Setup {
        sys: &OsSystem,
        spaces,
        materialised: Arc::new(|_: &str, _: &str| None),
        rule_doc: Arc::new(|_: &str| None),
        settings: Settings::default(),
        sign: None,
    }
}

/// Run the server on `ws` and hand a client to `body`; checks a clean `shutdown` + `exit`.
fn with_server(ws: &Workspace, caps: Value, init: Value, body: impl FnOnce(&mut Client)) {
    let (server, client) = Connection::memory();
    let user = ws.user.clone();
    let spaces = spaces_with_user(user);
    let docs = tempfile::tempdir().unwrap();
    let docs_root = docs.path().to_path_buf();
    let setup = Setup {
        sys: &OsSystem,
        spaces: &spaces,
        materialised: Arc::new(|_: &str, _: &str| None),
        rule_doc: Arc::new(move |id: &str| uri::from_path(&docs_root.join(format!("{id}.md")))),
        settings: Settings::default(),
        sign: None,
    };
    std::thread::scope(|s| {
        let handle = s.spawn(|| run(&server, &setup));
        let mut c = Client::new(client);
        let root = uri::from_path(&ws.project).unwrap();
        let init_result = c.request(
            "initialize",
            json!({"processId": null, "rootUri": root.as_str(), "capabilities": caps,
                   "initializationOptions": init}),
        );
        assert_eq!(init_result["serverInfo"]["name"], "ryechain");
        c.notify("initialized", json!({}));
        body(&mut c);
        assert_eq!(c.request("shutdown", Value::Null), Value::Null);
        c.notify("exit", Value::Null);
        let clean = handle.join().unwrap().unwrap();
        assert!(clean, "shutdown then exit is a clean end");
    });
}

fn no_integrity() -> Value {
    json!({"ignore": ["integrity"]})
}

#[test]
fn typo_is_diagnosed_with_rule_code_docs_link_and_quick_fix_then_cleared() {
    let ws = Workspace::new(&[(
        "tools/acme/digest.py",
        &tool("rye/core/runtimes/python/scirpt"),
    )]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        let uri = ws.uri("tools/acme/digest.py");
        c.open(&ws, "tools/acme/digest.py");
        let diags = c.diagnostics_until(&uri, |d| rules(d, "missing-executor"));
        let d = diags
            .iter()
            .find(|d| d["code"] == "missing-executor")
            .unwrap();
        assert_eq!(d["severity"], 1);
        assert_eq!(d["source"], "ryechain");
        assert!(
            d["codeDescription"]["href"]
                .as_str()
                .unwrap()
                .ends_with("/missing-executor.md"),
            "{d}"
        );
        assert!(
            d["message"]
                .as_str()
                .unwrap()
                .contains("did you mean `rye/core/runtimes/python/script`"),
            "{d}"
        );
        // The range is the id inside the quotes of line 5 (0-based 4).
        assert_eq!(d["range"]["start"]["line"], 4);
        // The quick fix replaces exactly the typo.
        let actions = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}}),
        );
        let action = &actions[0];
        assert_eq!(action["kind"], "quickfix");
        let edit = &action["edit"]["changes"][&uri][0];
        assert_eq!(edit["newText"], "rye/core/runtimes/python/script");
        let text = tool("rye/core/runtimes/python/scirpt");
        let line = text.lines().nth(4).unwrap();
        let col = line.find("rye/").unwrap();
        assert_eq!(edit["range"]["start"], json!({"line": 4, "character": col}));
        // Fixing the buffer clears the diagnostics.
        c.replace(
            &ws,
            "tools/acme/digest.py",
            2,
            &tool("rye/core/runtimes/python/script"),
        );
        c.diagnostics_until(&uri, |d| d.is_empty());
    });
}

/// Issue 35 item 3 in the editor: a script with top-level code and no executor is an error whose
/// quick fix inserts the header line after the tool type's line; applied, the file is clean.
#[test]
fn a_script_without_an_executor_gets_a_quick_fix_that_adds_the_header_line() {
    let script = "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__category__ = \"acme\"\n\nimport sys\n\nprint(sys.argv)\n";
    let ws = Workspace::new(&[("tools/acme/hello.py", script)]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        let uri = ws.uri("tools/acme/hello.py");
        c.open(&ws, "tools/acme/hello.py");
        let diags = c.diagnostics_until(&uri, |d| rules(d, "unknown-primitive"));
        let d = diags
            .iter()
            .find(|d| d["code"] == "unknown-primitive")
            .unwrap();
        assert_eq!(d["severity"], 1, "{d}");
        let actions = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}}),
        );
        let action = &actions[0];
        let line = "__executor_id__ = \"rye/core/runtimes/python/script\"";
        assert_eq!(action["title"], format!("Add `{line}`"), "{actions}");
        let edit = &action["edit"]["changes"][&uri][0];
        assert_eq!(edit["newText"], format!("{line}\n"));
        let at = json!({"line": 2, "character": 0});
        assert_eq!(edit["range"], json!({"start": at, "end": at}));
        let fixed = script.replacen("__category__", &format!("{line}\n__category__"), 1);
        c.replace(&ws, "tools/acme/hello.py", 2, &fixed);
        c.diagnostics_until(&uri, <[Value]>::is_empty);
    });
}

/// Issue 35 item 11 in the editor: a suppression comment takes its line's finding out as lint
/// does; once it suppresses nothing, `unused-suppression` says so and its quick fix removes it.
#[test]
fn a_suppression_comment_works_as_in_lint_and_an_idle_one_is_removed_by_a_quick_fix() {
    let suppressed = tool("rye/core/runtimes/python/scirpt")
        .replace("scirpt\"", "scirpt\"  # ryechain: ignore[missing-executor]");
    let ws = Workspace::new(&[("tools/acme/digest.py", &suppressed)]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        let uri = ws.uri("tools/acme/digest.py");
        c.open(&ws, "tools/acme/digest.py");
        c.diagnostics_until(&uri, <[Value]>::is_empty);
        let idle = suppressed.replace("scirpt", "script");
        c.replace(&ws, "tools/acme/digest.py", 2, &idle);
        let diags = c.diagnostics_until(&uri, |d| rules(d, "unused-suppression"));
        assert_eq!(codes(&diags), ["unused-suppression"]);
        let d = &diags[0];
        assert!(
            d["message"]
                .as_str()
                .unwrap()
                .contains("no `missing-executor` finding starts on this line"),
            "{d}"
        );
        let actions = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}}),
        );
        let action = &actions[0];
        assert_eq!(action["title"], "Remove the unused suppression comment");
        let edit = &action["edit"]["changes"][&uri][0];
        assert_eq!(edit["newText"], "");
        let line = idle.lines().nth(4).unwrap();
        let at = line.find("  #").unwrap();
        assert_eq!(
            edit["range"],
            json!({"start": {"line": 4, "character": at}, "end": {"line": 4, "character": line.len()}})
        );
        c.replace(
            &ws,
            "tools/acme/digest.py",
            3,
            &tool("rye/core/runtimes/python/script"),
        );
        c.diagnostics_until(&uri, <[Value]>::is_empty);
    });
}

#[test]
fn half_typed_python_gets_a_parse_diagnostic_where_it_breaks() {
    let ws = Workspace::new(&[("tools/acme/t.py", &tool("rye/core/runtimes/python/script"))]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        let uri = ws.uri("tools/acme/t.py");
        c.open(&ws, "tools/acme/t.py");
        c.diagnostics_until(&uri, <[Value]>::is_empty);
        let broken = "__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/run\n";
        c.replace(&ws, "tools/acme/t.py", 2, broken);
        let diags = c.diagnostics_until(&uri, |d| !d.is_empty());
        let d = diags
            .iter()
            .find(|d| d["code"] == "unparseable-metadata")
            .unwrap_or_else(|| panic!("{diags:#?}"));
        assert_eq!(d["range"]["start"]["line"], 1, "{d}");
    });
}

#[test]
fn a_runtime_edit_republishes_every_dependent_and_fixing_it_clears_them() {
    let ws = Workspace::new(&[
        ("tools/acme/runtimes/rt.yaml", RUNTIME),
        ("tools/acme/a.py", &tool("acme/runtimes/rt")),
        ("tools/acme/b.py", &tool("acme/runtimes/rt")),
    ]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        for rel in [
            "tools/acme/a.py",
            "tools/acme/b.py",
            "tools/acme/runtimes/rt.yaml",
        ] {
            c.open(&ws, rel);
        }
        let (a, b) = (ws.uri("tools/acme/a.py"), ws.uri("tools/acme/b.py"));
        // The runtime now demands version 2 of its children: both dependents break.
        let strict = format!(
            "{RUNTIME}child_constraints:\n  acme/a: {{min_version: \"2.0.0\"}}\n  acme/b: {{min_version: \"2.0.0\"}}\n"
        );
        c.replace(&ws, "tools/acme/runtimes/rt.yaml", 2, &strict);
        let rt = ws.uri("tools/acme/runtimes/rt.yaml");
        let da = c.diagnostics_until(&a, |d| rules(d, "version-constraint-violation"));
        let db = c.diagnostics_until(&b, |d| rules(d, "version-constraint-violation"));
        assert_eq!(codes(&da), codes(&db));
        // The dependent's finding points at the runtime file.
        let related = da[0]["relatedInformation"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            related.iter().any(|r| r["location"]["uri"] == rt),
            "{da:#?}"
        );
        c.replace(&ws, "tools/acme/runtimes/rt.yaml", 3, RUNTIME);
        c.diagnostics_until(&a, <[Value]>::is_empty);
        c.diagnostics_until(&b, <[Value]>::is_empty);
    });
}

/// After the first workspace pass, a pass re-checks only what a change reaches: files no
/// editor has open are published from it — the dependents of a runtime changed on disk, a tool
/// added beside them, a removed tool cleared — and a fix clears them again.
#[test]
fn closed_dependents_of_a_change_on_disk_are_published_by_the_next_pass() {
    let ws = Workspace::new(&[
        ("tools/acme/runtimes/rt.yaml", RUNTIME),
        ("tools/acme/a.py", &tool("acme/runtimes/rt")),
        ("tools/acme/b.py", &tool("acme/runtimes/rt")),
        ("tools/acme/c.py", &tool("acme/missing/one")),
    ]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        let uri = |rel: &str| ws.uri(rel);
        // The first pass (every file) has run.
        c.diagnostics_until(&uri("tools/acme/c.py"), |d| rules(d, "missing-executor"));
        let strict = format!(
            "{RUNTIME}child_constraints:\n  acme/a: {{min_version: \"2.0.0\"}}\n  acme/b: {{min_version: \"2.0.0\"}}\n"
        );
        ws.write("tools/acme/runtimes/rt.yaml", &strict);
        c.on_disk(&ws, "tools/acme/runtimes/rt.yaml", 2);
        for rel in ["tools/acme/a.py", "tools/acme/b.py"] {
            c.diagnostics_until(&uri(rel), |d| rules(d, "version-constraint-violation"));
        }
        // A tool added (ids come) and one removed.
        ws.write("tools/acme/d.py", &tool("acme/missing/two"));
        c.on_disk(&ws, "tools/acme/d.py", 1);
        c.diagnostics_until(&uri("tools/acme/d.py"), |d| rules(d, "missing-executor"));
        std::fs::remove_file(ws.path("tools/acme/c.py")).unwrap();
        c.on_disk(&ws, "tools/acme/c.py", 3);
        c.diagnostics_until(&uri("tools/acme/c.py"), <[Value]>::is_empty);
        ws.write("tools/acme/runtimes/rt.yaml", RUNTIME);
        c.on_disk(&ws, "tools/acme/runtimes/rt.yaml", 2);
        for rel in ["tools/acme/a.py", "tools/acme/b.py"] {
            c.diagnostics_until(&uri(rel), <[Value]>::is_empty);
        }
    });
}

/// A config changed on disk reaches every file: closed files are published with the severity
/// in force, cleared when their rule is ignored, and published again when it is not, and a later
/// runtime change still reaches its closed dependents (the pass kept what each tool depends on).
#[test]
fn a_config_change_on_disk_republishes_closed_files_with_the_rules_in_force() {
    let ws = Workspace::new(&[
        ("tools/acme/runtimes/rt.yaml", RUNTIME),
        ("tools/acme/a.py", &tool("acme/runtimes/rt")),
        ("tools/acme/c.py", &tool("acme/missing/one")),
    ]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        let uri = |rel: &str| ws.uri(rel);
        let severity = |d: &[Value], want: u64| {
            d.iter()
                .any(|d| d["code"] == "missing-executor" && d["severity"] == want)
        };
        let c_py = uri("tools/acme/c.py");
        c.diagnostics_until(&c_py, |d| severity(d, 1));
        let cfg = "config/ryechain.yaml";
        ws.write(cfg, "lint:\n  severity: {missing-executor: warning}\n");
        c.on_disk(&ws, cfg, 1);
        c.diagnostics_until(&c_py, |d| severity(d, 2));
        ws.write(cfg, "lint:\n  ignore: [missing-executor]\n");
        c.on_disk(&ws, cfg, 2);
        c.diagnostics_until(&c_py, <[Value]>::is_empty);
        ws.write(cfg, "lint: {}\n");
        c.on_disk(&ws, cfg, 2);
        c.diagnostics_until(&c_py, |d| severity(d, 1));
        let strict = format!("{RUNTIME}child_constraints:\n  acme/a: {{min_version: \"2.0.0\"}}\n");
        ws.write("tools/acme/runtimes/rt.yaml", &strict);
        c.on_disk(&ws, "tools/acme/runtimes/rt.yaml", 2);
        c.diagnostics_until(&uri("tools/acme/a.py"), |d| {
            rules(d, "version-constraint-violation")
        });
    });
}

#[test]
fn files_created_and_deleted_on_disk_are_seen_through_watched_file_events() {
    let ws = Workspace::new(&[("tools/acme/ok.py", &tool("rye/core/runtimes/python/script"))]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        let rel = "tools/acme/new.py";
        ws.write(rel, &tool("acme/missing/runtime"));
        c.on_disk(&ws, rel, 1);
        // Not open: published by the workspace pass.
        c.diagnostics_until(&ws.uri(rel), |d| rules(d, "missing-executor"));
        std::fs::remove_file(ws.path(rel)).unwrap();
        c.on_disk(&ws, rel, 3);
        c.diagnostics_until(&ws.uri(rel), <[Value]>::is_empty);
        // A folder deleted at once removes its files.
        ws.write("tools/acme/sub/x.py", &tool("acme/missing/x"));
        c.on_disk(&ws, "tools/acme/sub", 1);
        c.diagnostics_until(&ws.uri("tools/acme/sub/x.py"), |d| !d.is_empty());
        std::fs::remove_dir_all(ws.path("tools/acme/sub")).unwrap();
        c.on_disk(&ws, "tools/acme/sub", 3);
        c.diagnostics_until(&ws.uri("tools/acme/sub/x.py"), <[Value]>::is_empty);
    });
}

/// An editor reports a change of a symlink's target at the target's path only: the server
/// reads every link to it again (here a user-space link to a project tool, met by the full
/// load), as `lint --watch` does (the shared `Reloader`).
#[test]
#[cfg(unix)]
fn a_link_is_read_again_when_only_its_target_is_reported() {
    let target = "tools/acme/target.py";
    let ws = Workspace::new(&[(target, &tool("acme/missing/one"))]);
    let team = ws.user.join(".ai/tools/team");
    std::fs::create_dir_all(&team).unwrap();
    let link = team.join("linked.py");
    std::os::unix::fs::symlink(ws.path(target), &link).unwrap();
    let link_uri = uri::from_path(&link).unwrap().as_str().to_owned();
    with_server(&ws, json!({}), no_integrity(), |c| {
        // Published by the workspace pass, after the full load.
        c.diagnostics_until(&link_uri, |d| rules(d, "missing-executor"));
        ws.write(target, &tool("rye/core/runtimes/python/script"));
        c.on_disk(&ws, target, 2);
        c.diagnostics_until(&ws.uri(target), |d| !rules(d, "missing-executor"));
        c.diagnostics_until(&link_uri, |d| !rules(d, "missing-executor"));
    });
}

#[test]
fn hover_definition_completion_and_symbols_on_an_executor_id() {
    let ws = Workspace::new(&[
        ("tools/acme/runtimes/rt.yaml", RUNTIME),
        ("tools/acme/a.py", &tool("acme/runtimes/rt")),
    ]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        let uri = ws.uri("tools/acme/a.py");
        c.open(&ws, "tools/acme/a.py");
        let text = tool("acme/runtimes/rt");
        let line = 4;
        let col = text.lines().nth(4).unwrap().find("acme/").unwrap() + 3;
        let at =
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": col}});
        let hover = c.request("textDocument/hover", at.clone());
        let md = hover["contents"]["value"].as_str().unwrap();
        assert!(md.contains("`acme/runtimes/rt` — project"), "{md}");
        assert!(md.contains("rye/core/runtimes/python/script"), "{md}");
        assert!(md.contains("primitive"), "{md}");
        let def = c.request("textDocument/definition", at);
        assert_eq!(def["uri"], ws.uri("tools/acme/runtimes/rt.yaml"));
        // Off the id: nothing.
        let none = c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 9, "character": 2}}),
        );
        assert_eq!(none, Value::Null);
        // Completion inside a half-typed id: runtimes first, the typed prefix replaced.
        let typing = text.replace("\"acme/runtimes/rt\"", "\"rye/core/runtimes/py");
        c.replace(&ws, "tools/acme/a.py", 2, &typing);
        let col = typing.lines().nth(4).unwrap().len();
        let list = c.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": col}}),
        );
        let items = list["items"].as_array().unwrap();
        let labels: Vec<&str> = items.iter().map(|i| i["label"].as_str().unwrap()).collect();
        assert!(
            labels.contains(&"rye/core/runtimes/python/script"),
            "{labels:?}"
        );
        assert!(
            labels.iter().all(|l| l.starts_with("rye/core/runtimes/py")),
            "{labels:?}"
        );
        let start = typing.lines().nth(4).unwrap().find("rye/").unwrap();
        assert_eq!(items[0]["textEdit"]["range"]["start"]["character"], start);
        // Issue 35 item 16: the folder ids first; the reference-era flat aliases
        // (`python_script_runtime`) after them, marked deprecated.
        let first_flat = labels
            .iter()
            .position(|l| l.ends_with("_runtime"))
            .expect("a flat alias is offered");
        assert!(
            labels[..first_flat]
                .iter()
                .all(|l| !l.ends_with("_runtime"))
        );
        assert!(
            labels[first_flat..].iter().all(|l| l.ends_with("_runtime")),
            "{labels:?}"
        );
        for item in items {
            let flat = item["label"].as_str().unwrap().ends_with("_runtime");
            assert_eq!(item["tags"] == json!([1]), flat, "{item}");
        }
        // Runtimes before primitives.
        let core = typing.replace("\"rye/core/runtimes/py", "\"rye/core/");
        c.replace(&ws, "tools/acme/a.py", 3, &core);
        let col = core.lines().nth(4).unwrap().len();
        let list = c.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": col}}),
        );
        let labels: Vec<&str> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect();
        let primitive = labels
            .iter()
            .position(|l| l.starts_with("rye/core/primitives/"))
            .unwrap_or_else(|| panic!("{labels:?}"));
        let last_runtime = labels
            .iter()
            .rposition(|l| l.starts_with("rye/core/runtimes/"))
            .unwrap_or_else(|| panic!("{labels:?}"));
        assert!(last_runtime < primitive, "{labels:?}");
        // Symbols: the header keys.
        c.replace(&ws, "tools/acme/a.py", 4, &text);
        let symbols = c.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
        let names: Vec<&str> = symbols
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "version",
                "tool_type",
                "executor_id",
                "category",
                "description"
            ]
        );
    });
}

#[test]
fn protocol_errors_unknown_methods_cancellation_and_requests_after_shutdown() {
    let ws = Workspace::new(&[("tools/acme/ok.py", &tool("rye/core/runtimes/python/script"))]);
    let (server, client) = Connection::memory();
    let spaces = spaces_with_user(ws.user.clone());
    let setup = plain_setup(&spaces);
    std::thread::scope(|s| {
        let handle = s.spawn(|| run(&server, &setup));
        let mut c = Client::new(client);
        // Before initialize: an error, and the server keeps waiting.
        let id = c.send_request("textDocument/hover", json!({}));
        let r = c.response(&id);
        assert_eq!(r.response_result.unwrap_err().code, -32002);
        let root = uri::from_path(&ws.project).unwrap();
        c.request(
            "initialize",
            json!({"processId": null, "rootUri": root.as_str(), "capabilities": {}}),
        );
        c.notify("initialized", json!({}));
        let id = c.send_request("ryechain/unknown", json!({}));
        assert_eq!(c.response(&id).response_result.unwrap_err().code, -32601);
        let id = c.send_request("textDocument/hover", json!({"bad": true}));
        assert_eq!(c.response(&id).response_result.unwrap_err().code, -32602);
        // A cancelled request is answered once, with RequestCancelled.
        let id = c.send_request(
            "textDocument/hover",
            json!({"textDocument": {"uri": ws.uri("tools/acme/ok.py")}, "position": {"line": 4, "character": 20}}),
        );
        c.notify("$/cancelRequest", json!({"id": c_id(&id)}));
        let r = c.response(&id);
        // Answered before the cancel arrived is also a single answer; otherwise RequestCancelled.
        if let Err(e) = r.response_result {
            assert_eq!(e.code, -32800);
        }
        // A second initialize is refused; cancelling an answered request is not answered again.
        let id = c.send_request("initialize", json!({"processId": null, "capabilities": {}}));
        assert_eq!(c.response(&id).response_result.unwrap_err().code, -32600);
        let answered = c.send_request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": ws.uri("tools/acme/ok.py")}}),
        );
        assert!(c.response(&answered).response_result.is_ok());
        c.notify("$/cancelRequest", json!({"id": c_id(&answered)}));
        c.request("shutdown", Value::Null);
        let id = c.send_request("textDocument/hover", json!({}));
        assert_eq!(c.response(&id).response_result.unwrap_err().code, -32600);
        c.notify("exit", Value::Null);
        assert!(handle.join().unwrap().unwrap());
        // Nothing more arrives: in particular no second answer to either cancelled request.
        while let Ok(m) = c.conn.receiver.recv_timeout(Duration::from_millis(200)) {
            assert!(
                !matches!(&m, Message::Response(r) if r.id == id || r.id == answered),
                "{m:?}"
            );
        }
    });
}

#[test]
fn exit_without_shutdown_and_closed_input_end_the_server() {
    let ws = Workspace::new(&[]);
    for close in [false, true] {
        let (server, client) = Connection::memory();
        let spaces = spaces_with_user(ws.user.clone());
        let setup = plain_setup(&spaces);
        std::thread::scope(|s| {
            let handle = s.spawn(|| run(&server, &setup));
            let mut c = Client::new(client);
            let root = uri::from_path(&ws.project).unwrap();
            c.request(
                "initialize",
                json!({"processId": null, "rootUri": root.as_str(), "capabilities": {}}),
            );
            c.notify("initialized", json!({}));
            if close {
                drop(c);
            } else {
                c.notify("exit", Value::Null);
            }
            assert!(
                !handle.join().unwrap().unwrap(),
                "no shutdown: not a clean end"
            );
        });
    }
}

/// After a burst of edits, what the client was last told for each file equals a from-scratch
/// lint of the final state: results of older generations never overwrite newer ones.
#[test]
fn after_a_burst_of_edits_the_published_state_is_the_final_state() {
    let ws = Workspace::new(&[
        ("tools/acme/runtimes/rt.yaml", RUNTIME),
        ("tools/acme/a.py", &tool("acme/runtimes/rt")),
    ]);
    with_server(&ws, json!({}), no_integrity(), |c| {
        c.open(&ws, "tools/acme/a.py");
        c.open(&ws, "tools/acme/runtimes/rt.yaml");
        let strict = format!("{RUNTIME}child_constraints:\n  acme/a: {{min_version: \"2.0.0\"}}\n");
        for v in 2..=40 {
            let exec = if v % 3 == 0 {
                "acme/runtimes/rt"
            } else {
                "acme/runtimes/gone"
            };
            c.replace(&ws, "tools/acme/a.py", v, &tool(exec));
            let rt = if v % 2 == 0 {
                RUNTIME.to_owned()
            } else {
                RUNTIME.replace("python/script", "python/nope")
            };
            c.replace(&ws, "tools/acme/runtimes/rt.yaml", v, &rt);
        }
        // Final: a.py names a missing runtime (40 % 3 != 0), rt.yaml is sound (40 is even).
        let a = c.diagnostics_until(&ws.uri("tools/acme/a.py"), |d| {
            codes(d) == ["missing-executor"]
        });
        assert!(
            a[0]["message"]
                .as_str()
                .unwrap()
                .contains("acme/runtimes/gone")
        );
        c.diagnostics_until(&ws.uri("tools/acme/runtimes/rt.yaml"), <[Value]>::is_empty);
        // Then a.py names the runtime again and the runtime constrains it: a.py's finding comes
        // from the runtime edit alone.
        c.replace(&ws, "tools/acme/a.py", 41, &tool("acme/runtimes/rt"));
        c.replace(&ws, "tools/acme/runtimes/rt.yaml", 41, &strict);
        c.diagnostics_until(&ws.uri("tools/acme/a.py"), |d| {
            codes(d) == ["version-constraint-violation"]
        });
        c.diagnostics_until(&ws.uri("tools/acme/runtimes/rt.yaml"), <[Value]>::is_empty);
        // Quiet for a moment: nothing stale arrives afterwards.
        let deadline = Instant::now() + Duration::from_millis(500);
        while let Ok(m) = c
            .conn
            .receiver
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if let Message::Notification(n) = &m
                && n.method == "textDocument/publishDiagnostics"
            {
                let d = n.params["diagnostics"].as_array().unwrap();
                let want: &[&str] = if n.params["uri"] == ws.uri("tools/acme/a.py") {
                    &["version-constraint-violation"]
                } else {
                    &[]
                };
                assert_eq!(codes(d), want, "a stale publish: {n:?}");
            }
        }
    });
}

#[test]
fn bad_input_half_typed_yaml_huge_buffer_non_utf8_and_a_symlink_loop() {
    let ws = Workspace::new(&[
        ("tools/acme/runtimes/rt.yaml", RUNTIME),
        ("tools/acme/a.py", &tool("acme/runtimes/rt")),
    ]);
    // Bytes that are not UTF-8 on disk, and a directory symlink loop inside a space.
    std::fs::write(
        ws.path("tools/acme/latin1.py"),
        b"__version__ = \"caf\xe9\"\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(ws.path("tools/acme"), ws.path("tools/acme/loop")).unwrap();
    with_server(&ws, json!({}), no_integrity(), |c| {
        c.diagnostics_until(&ws.uri("tools/acme/latin1.py"), |d| {
            rules(d, "unreadable-file")
        });
        // Half-typed YAML: a parse diagnostic on the line that breaks.
        let rt = ws.uri("tools/acme/runtimes/rt.yaml");
        c.open(&ws, "tools/acme/runtimes/rt.yaml");
        let broken = format!("{RUNTIME}inputs: [a, b\nbody: {{\n");
        c.replace(&ws, "tools/acme/runtimes/rt.yaml", 2, &broken);
        let d = c.diagnostics_until(&rt, |d| rules(d, "unparseable-metadata"));
        let line = d[0]["range"]["start"]["line"].as_u64().unwrap();
        assert!((5..=7).contains(&line), "{d:#?}");
        // A 50 MB buffer is refused as too large, not parsed, and the server keeps answering.
        let a = ws.uri("tools/acme/a.py");
        c.open(&ws, "tools/acme/a.py");
        let huge = format!("{}{}", tool("acme/runtimes/rt"), "#".repeat(50 << 20));
        c.replace(&ws, "tools/acme/a.py", 2, &huge);
        let d = c.diagnostics_until(&a, |d| rules(d, "unreadable-file"));
        assert!(
            d[0]["message"].as_str().unwrap().contains("limit"),
            "{d:#?}"
        );
        c.replace(&ws, "tools/acme/a.py", 3, &tool("acme/runtimes/rt"));
        let symbols = c.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": a}}),
        );
        assert_eq!(symbols.as_array().unwrap().len(), 5);
    });
}
