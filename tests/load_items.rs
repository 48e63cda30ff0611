//! End-to-end tests of `ryechain load` (§12.8, the CLI side of `rye_load`): the real binary on
//! temporary projects signed with a real key.
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects and spawn the binary"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value as Json;

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

const ENTRY: &str = "```yaml\nname: deploy\ntitle: Deploy notes\nversion: \"1.2.0\"\nentry_type: reference\ncategory: ops\n```\n\nShip on Fridays.\n";

struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("user")).unwrap();
        std::fs::create_dir_all(dir.path().join("project/.ai")).unwrap();
        let t = Tree { dir };
        assert_eq!(t.run(&["keys", "generate"]).0, 0);
        t
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn user(&self) -> PathBuf {
        self.dir.path().join("user")
    }

    /// Write `.ai/<rel>` of `space` (a project or user dir) and sign it there.
    fn signed_entry(&self, space: &Path, rel: &str, text: &str) {
        let path = space.join(".ai").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        let id = rel.trim_start_matches("knowledge/").trim_end_matches(".md");
        let mut args = vec!["sign", id, "--type", "knowledge"];
        let project = self.project().display().to_string();
        if space == self.user() {
            args.extend(["--space", "user"]);
        }
        args.push(&project);
        let (code, out, err) = self.run(&args);
        assert_eq!(code, 0, "{out}{err}");
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(BIN)
            .args(args)
            .env("USER_SPACE", self.user())
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

    /// `load ITEM PROJECT --format json [extra]`: (exit code, answer).
    fn load(&self, item: &str, extra: &[&str]) -> (i32, Json) {
        let project = self.project().display().to_string();
        let mut args = vec!["load", item, &project, "--format", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = self.run(&args);
        let json = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        (code, json)
    }
}

/// §12.8: content and metadata of a verified item, from the first space that holds it or the
/// one named.
#[test]
fn s12_8_loads_content_and_metadata_from_the_space_asked() {
    let t = Tree::new();
    t.signed_entry(&t.project(), "knowledge/ops/deploy.md", ENTRY);
    t.signed_entry(
        &t.user(),
        "knowledge/ops/deploy.md",
        &ENTRY.replace("Fridays", "Mondays"),
    );
    let (code, r) = t.load("ops/deploy", &["--type", "knowledge"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["status"], "success");
    assert_eq!(r["source"], "project");
    assert!(r["content"].as_str().unwrap().contains("Ship on Fridays."));
    assert_eq!(r["metadata"]["name"], "deploy");
    assert_eq!(r["metadata"]["extension"], ".md");
    assert_eq!(r["metadata"]["version"], "1.2.0");
    assert!(
        r["path"]
            .as_str()
            .unwrap()
            .ends_with("project/.ai/knowledge/ops/deploy.md")
    );
    let (_, r) = t.load("ops/deploy", &["--type", "knowledge", "--from", "user"]);
    assert_eq!(r["source"], "user");
    assert!(r["content"].as_str().unwrap().contains("Mondays"));
    // A tool of the system bundle, by the tool's resolution.
    let (code, r) = t.load("rye/core/primitives/subprocess", &[]);
    assert_eq!(code, 0, "{r}");
    assert!(r["source"].as_str().unwrap().starts_with("system"));
    assert_eq!(r["metadata"]["extension"], ".yaml");
}

/// §12.8 with §15's fix: a copy keeps the category path, stays valid (its signature covers the
/// same bytes), and never replaces a file that is there.
#[test]
fn s12_8_copies_keep_the_category_path_and_never_overwrite() {
    let t = Tree::new();
    t.signed_entry(&t.user(), "knowledge/ops/deploy.md", ENTRY);
    let (code, r) = t.load("ops/deploy", &["--type", "knowledge", "--to", "project"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["copied_to"], "project");
    let copied = t.project().join(".ai/knowledge/ops/deploy.md");
    assert_eq!(r["destination_path"], copied.display().to_string());
    let original = std::fs::read_to_string(t.user().join(".ai/knowledge/ops/deploy.md")).unwrap();
    assert_eq!(std::fs::read_to_string(&copied).unwrap(), original);
    // The copy is the project's now, and verifies there.
    let (code, r) = t.load("ops/deploy", &["--type", "knowledge", "--from", "project"]);
    assert_eq!(code, 0, "{r}");
    // Again: the file is there, and is left alone.
    std::fs::write(&copied, "mine\n").unwrap();
    let (code, r) = t.load(
        "ops/deploy",
        &["--type", "knowledge", "--from", "user", "--to", "project"],
    );
    assert_eq!(code, 1);
    assert!(
        r["error"].as_str().unwrap().contains("exists already"),
        "{r}"
    );
    assert_eq!(std::fs::read_to_string(&copied).unwrap(), "mine\n");
    // Into the space it is in: nothing to copy.
    let (code, r) = t.load(
        "ops/deploy",
        &["--type", "knowledge", "--from", "user", "--to", "user"],
    );
    assert_eq!(code, 1);
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("already in the user space"),
        "{r}"
    );
}

/// §12.8: not found names the item; a tampered item is refused before its content is given;
/// hostile ids are usage errors.
#[test]
fn s12_8_refusals() {
    let t = Tree::new();
    t.signed_entry(&t.project(), "knowledge/ops/deploy.md", ENTRY);
    let (code, r) = t.load("ops/nope", &["--type", "knowledge"]);
    assert_eq!(code, 1);
    assert_eq!(r["error"], "Item not found: ops/nope");
    assert_eq!(r["item_type"], "knowledge");
    assert_eq!(r["item_id"], "ops/nope");
    let path = t.project().join(".ai/knowledge/ops/deploy.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("Fridays", "Sundays")).unwrap();
    let (code, r) = t.load("ops/deploy", &["--type", "knowledge"]);
    assert_eq!(code, 1);
    assert_eq!(r["error_type"], "integrity");
    assert!(r.get("content").is_none());
    let (code, r) = t.load("ops/deploy", &["--type", "knowledge", "--allow-unsigned"]);
    assert_eq!(
        code, 1,
        "an edited signed item is a mismatch, not unsigned: {r}"
    );
    let project = t.project().display().to_string();
    let (code, _, err) = t.run(&["load", "../x", &project, "--type", "knowledge"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("Invalid item id"), "{err}");
}
