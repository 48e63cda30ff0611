//! End-to-end tests of `ryechain exec --type directive|knowledge` (§12.5, §12.6): the real binary,
//! temporary projects signed with a real key. Each test names the scenario it ports (§14).
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects and spawn the binary"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value as Json, json};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

const WORKFLOW: &str = r#"# Workflow

Research {input:topic} and write it down.

```xml
<directive name="workflow" version="1.0.0">
  <metadata><description>Research a topic</description><category>demo</category></metadata>
  <inputs>
    <input name="topic" required="true">What to research</input>
    <input name="out" default="/tmp/notes.md"/>
  </inputs>
  <process>
    <step>
      <execute item_type="tool" item_id="rye/file-system/write">
        <param name="path" value="{input:out}"/>
        <param name="content">{input:topic} notes{input:suffix?}</param>
      </execute>
    </step>
  </process>
  <outputs><output name="summary" type="string" required="true"/></outputs>
</directive>
```
"#;

/// §14 #14's entry: `---` frontmatter.
const ENTRY: &str = "---\ntitle: Test Entry\nid: entry\n---\n\nContent here";

struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    /// A project with `files` (paths under `.ai/`), a user space with a key, everything signed.
    fn signed(files: &[(&str, &str)]) -> Tree {
        let t = Tree::unsigned(files);
        assert_eq!(t.run(&["keys", "generate"]).0, 0);
        for kind in ["directive", "knowledge"] {
            // A tree without items of a kind answers "No … found" (exit 1).
            let (code, out, err) = t.run(&["sign", "*", &t.project_str(), "--type", kind]);
            assert!(code == 0 || out.contains("No "), "sign {kind}: {out}{err}");
        }
        t
    }

    fn unsigned(files: &[(&str, &str)]) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("user")).unwrap();
        for (rel, text) in files {
            let path = dir.path().join("project/.ai").join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Tree { dir }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn project_str(&self) -> String {
        self.project().display().to_string()
    }

    fn user(&self) -> &Path {
        self.dir.path()
    }

    /// `ryechain <args>`: (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(BIN)
            .args(args)
            .env("USER_SPACE", self.user().join("user"))
            .env_remove("RYE_SYSTEM_SPACE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `exec ITEM PROJECT --type KIND --format json [extra]`: (exit code, response).
    fn exec(&self, kind: &str, item: &str, extra: &[&str]) -> (i32, Json) {
        let project = self.project_str();
        let mut args = vec!["exec", item, &project, "--type", kind, "--format", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = self.run(&args);
        let json = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
        (code, json)
    }
}

/// §14 #12: a signed project directive executes: its body, inputs filled in, the outputs, the
/// actions, and the envelope's metadata.
#[test]
fn s14_12_a_signed_directive_executes_in_the_callers_thread() {
    let t = Tree::signed(&[("directives/demo/workflow.md", WORKFLOW)]);
    let (code, r) = t.exec(
        "directive",
        "demo/workflow",
        &["--params", r#"{"topic":"rust"}"#],
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["status"], "success");
    assert_eq!(r["type"], "directive");
    assert_eq!(r["item_id"], "demo/workflow");
    assert!(r["metadata"]["duration_ms"].is_u64(), "{r}");
    assert!(r["your_directions"].as_str().is_some_and(|s| !s.is_empty()));
    let body = r["body"].as_str().unwrap();
    assert!(body.contains("Research rust and write it down."), "{body}");
    assert!(
        !body.contains("rye:signed"),
        "the signature line is not the body"
    );
    assert_eq!(
        r["outputs"],
        json!([{"name": "summary", "type": "string", "required": true}])
    );
    // §14 #19 through the binary: the declared default and the optional input's "".
    assert_eq!(
        r["actions"][0]["params"],
        json!({"path": "/tmp/notes.md", "content": "rust notes"})
    );
}

/// §12.5: `parameters.inputs` is read when it is an object; a missing required input is refused
/// with the declared inputs.
#[test]
fn s12_5_inputs_are_checked_after_defaults() {
    let t = Tree::signed(&[("directives/demo/workflow.md", WORKFLOW)]);
    let (code, r) = t.exec("directive", "demo/workflow", &[]);
    assert_eq!(code, 1);
    assert_eq!(r["error"], "Missing required inputs: topic");
    assert_eq!(r["declared_inputs"][1]["default"], "/tmp/notes.md");
    let (code, r) = t.exec(
        "directive",
        "demo/workflow",
        &["--params", r#"{"inputs":{"topic":"go"}}"#],
    );
    assert_eq!(code, 0, "{r}");
    assert!(r["body"].as_str().unwrap().contains("Research go"));
}

/// §14 #15, #17: a dry run validates; a directive that does not exist is an error.
#[test]
fn s14_15_and_17_dry_run_and_not_found() {
    let t = Tree::signed(&[("directives/demo/workflow.md", WORKFLOW)]);
    let (code, r) = t.exec(
        "directive",
        "demo/workflow",
        &["--dry-run", "--params", r#"{"topic":"x"}"#],
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["status"], "validation_passed");
    assert_eq!(r["message"], "Directive validation passed (dry run)");
    let (code, r) = t.exec("directive", "demo/nope", &[]);
    assert_eq!(code, 1);
    assert_eq!(r["status"], "error");
    assert_eq!(r["error"], "Directive not found: demo/nope");
    let (_, r) = t.exec("knowledge", "demo/nope", &[]);
    assert_eq!(r["error"], "Knowledge entry not found: demo/nope");
}

/// §14 #14: a signed `---` entry answers its metadata and body.
#[test]
fn s14_14_a_signed_dash_frontmatter_entry_executes() {
    let t = Tree::signed(&[("knowledge/demo/entry.md", ENTRY)]);
    let (code, r) = t.exec("knowledge", "demo/entry", &[]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["status"], "success");
    assert_eq!(r["type"], "knowledge");
    assert_eq!(r["data"]["title"], "Test Entry");
    assert_eq!(r["data"]["body"], "Content here");
    assert_eq!(
        r["your_directions"],
        "Use this knowledge to inform your decisions."
    );
    assert!(r["metadata"]["duration_ms"].is_u64());
}

/// §10.5: verified before it is parsed. An edit after signing, and an unsigned item, are
/// refused as integrity errors (no duration: the reference raises there, §12.2); the person's
/// `--allow-unsigned` runs the unsigned one.
#[test]
fn s10_5_signatures_are_verified_before_parsing() {
    let t = Tree::signed(&[
        ("knowledge/demo/entry.md", ENTRY),
        ("directives/demo/workflow.md", WORKFLOW),
    ]);
    let path = t.project().join(".ai/knowledge/demo/entry.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("Content here", "Edited")).unwrap();
    let (code, r) = t.exec("knowledge", "demo/entry", &[]);
    assert_eq!(code, 1);
    assert_eq!(r["error_type"], "integrity");
    assert!(r["error"].as_str().unwrap().contains("entry.md"), "{r}");
    assert!(r.get("metadata").is_none());
    // Broken XML after signing: the signature fails first, so the parse is never reached.
    let path = t.project().join(".ai/directives/demo/workflow.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("</process>", "</proc>")).unwrap();
    let (_, r) = t.exec(
        "directive",
        "demo/workflow",
        &["--params", r#"{"topic":"x"}"#],
    );
    assert_eq!(r["error_type"], "integrity", "{r}");

    let u = Tree::unsigned(&[("knowledge/demo/entry.md", ENTRY)]);
    assert_eq!(u.run(&["keys", "generate"]).0, 0);
    let (code, r) = u.exec("knowledge", "demo/entry", &[]);
    assert_eq!((code, &r["error_type"]), (1, &json!("integrity")), "{r}");
    let (code, r) = u.exec("knowledge", "demo/entry", &["--allow-unsigned"]);
    assert_eq!(code, 0, "{r}");
}

/// A directive that is not well-formed is answered with the XML parser's words (the lint rule
/// `invalid-directive` reports the same file before anyone runs it).
#[test]
fn malformed_directives_are_refused_with_the_parsers_words() {
    // `sign` refuses it, so it runs unsigned, by the person's leave.
    let broken = WORKFLOW.replace("</process>", "</proc>");
    let t = Tree::unsigned(&[("directives/demo/broken.md", &broken)]);
    assert_eq!(t.run(&["keys", "generate"]).0, 0);
    let (code, out, _) = t.run(&["sign", "*", &t.project_str(), "--type", "directive"]);
    assert!(code != 0 && out.contains("Invalid XML"), "{out}");
    let (code, r) = t.exec(
        "directive",
        "demo/broken",
        &["--allow-unsigned", "--params", r#"{"topic":"x"}"#],
    );
    assert_eq!(code, 1);
    let error = r["error"].as_str().unwrap();
    assert!(error.starts_with("Invalid XML: "), "{error}");
    let (code, out, _) = t.run(&["lint", &t.project_str(), "--format", "json", "--no-cache"]);
    assert_eq!(code, 1);
    assert!(out.contains("invalid-directive"), "{out}");
}

/// Hostile ids never reach the file system.
#[test]
fn hostile_ids_are_refused() {
    let t = Tree::signed(&[("knowledge/demo/entry.md", ENTRY)]);
    for id in ["../x", "/etc/passwd", "a//b"] {
        let project = t.project_str();
        let (code, out, _) = t.run(&[
            "exec",
            id,
            &project,
            "--type",
            "knowledge",
            "--format",
            "json",
        ]);
        assert_eq!(code, 2, "{id}: {out}");
        assert!(out.contains("Invalid item id"), "{id}: {out}");
    }
}
