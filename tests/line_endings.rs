//! §10.2 on a Windows or `core.autocrlf` checkout: the reference reads item text in Python's text
//! mode (universal newlines), so `\r\n` and a lone `\r` are `\n` to it before anything is hashed.
//! A CRLF copy and a CR-only copy of every example item (`examples/project`, `examples/user` and
//! the bundled `.ai/` as a system space) verify, lint and run exactly as the LF original: the same
//! verdicts, the same findings at the same lines and columns (a lone `\r` ends a line as `\n`
//! does), the same `exec` responses — with the LF tree's lockfiles, whose hashes the other trees
//! must match (§10.7).
#![allow(
    clippy::disallowed_methods,
    reason = "the test writes copies of the example tree and runs the ryechain binary on them"
)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value as Json;

const LINE_BREAKS: [(&str, &str); 3] = [("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")];

/// `<dir>/{project,user,system}` from the example tree and the bundled `.ai/`, every file under
/// `.ai/` with its `\n` made `eol`.
fn tree(dir: &Path, eol: &str) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    common::copy_tree(&repo.join("examples/project"), &dir.join("project"));
    common::copy_tree(&repo.join("examples/user"), &dir.join("user"));
    common::copy_tree(&repo.join(".ai"), &dir.join("system/.ai"));
    for file in common::files_under(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains('\r'),
            "{} has a `\\r` already",
            file.display()
        );
        std::fs::write(&file, text.replace('\n', eol)).unwrap();
    }
}

/// `ryechain <args> --user-space user --system-space system` run in `dir`: exit code and stdout
/// as JSON, the tree's own path replaced by `<tree>`.
fn ryechain(dir: &Path, args: &[&str]) -> (i32, Json) {
    let out = Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args(args)
        .args(["--user-space", "user", "--system-space", "system"])
        .current_dir(dir)
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).replace(dir.to_str().unwrap(), "<tree>");
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), json)
}

/// A lint report's summary and findings, one finding a line, sorted.
fn findings(report: &Json) -> String {
    let mut lines: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(Json::to_string)
        .collect();
    lines.sort();
    lines.push(report["summary"].to_string());
    lines.join("\n")
}

/// An `exec` response without its timing.
fn response(mut r: Json) -> Json {
    if let Some(m) = r.get_mut("metadata").and_then(Json::as_object_mut) {
        m.remove("duration_ms");
    }
    // A graph's answer names its run (time and a random suffix) and where its state went.
    if let Some(d) = r.get_mut("data").and_then(Json::as_object_mut)
        && d.contains_key("graph_run_id")
    {
        for key in ["graph_run_id", "state_item", "warnings"] {
            d.remove(key);
        }
    }
    r
}

#[test]
fn s10_2_crlf_and_cr_copies_verify_lint_and_run_as_the_lf_original() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = LINE_BREAKS
        .iter()
        .map(|(name, eol)| {
            let dir = tmp.path().join(name);
            tree(&dir, eol);
            dir
        })
        .collect();
    let lf = &dirs[0];

    let verify = |dir: &Path| ryechain(dir, &["verify", "project", "--json"]);
    let lint = |dir: &Path| {
        let (code, report) = ryechain(dir, &["lint", "project", "--format", "json"]);
        format!("exit {code}\n{}", findings(&report))
    };
    let (code, verdicts) = verify(lf);
    assert_eq!(code, 1, "kpi_table.py is tampered on purpose: {verdicts:#}");
    // Signed items of the project and user spaces, and the system items (unsigned).
    let verified = verdicts["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["verified"] == true)
        .count();
    assert_eq!(verified, 24, "{verdicts:#}");
    let tools: Vec<String> = verdicts["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| {
            let path = i["path"].as_str().unwrap();
            // Project paths are shown relative to the project root; the user space's in full.
            path.starts_with(".ai/") || path.starts_with("<tree>/user/")
        })
        .map(|i| i["item_id"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.len() >= 5, "the example tools are listed: {tools:?}");
    let lf_lint = lint(lf);
    for (dir, (name, _)) in dirs.iter().zip(LINE_BREAKS).skip(1) {
        assert_eq!(verify(dir), (code, verdicts.clone()), "{name}: verify");
        assert_eq!(lint(dir), lf_lint, "{name}: lint");
    }

    // Run every tool of the project and user spaces, first in the LF tree (which writes the
    // lockfiles), then with those lockfiles in every tree.
    let exec = |dir: &Path, id: &str| {
        let (code, r) = ryechain(
            dir,
            &[
                "exec",
                id,
                "project",
                "--allow-unsigned",
                "--timeout",
                "30",
                "--params",
                r#"{"name": "Ada"}"#,
                "--format",
                "json",
            ],
        );
        (code, response(r))
    };
    // The HTTP example sends a request to a server of its caller's (`exec_http` runs it against
    // one); its verdict and findings are compared above.
    let tools: Vec<String> = tools
        .into_iter()
        .filter(|id| id != "demo/fetch_greeting")
        .collect();
    for id in &tools {
        exec(lf, id);
    }
    let locks = lf.join("project/.ai/lockfiles");
    assert!(locks.is_dir(), "the LF runs wrote no lockfile");
    for dir in &dirs[1..] {
        common::copy_tree(&locks, &dir.join("project/.ai/lockfiles"));
    }
    for id in &tools {
        let want = exec(lf, id);
        if want.1["status"] == "success" {
            assert_eq!(want.1["metadata"]["lockfile_used"], true, "{id}: {want:?}");
        }
        for (dir, (name, _)) in dirs.iter().zip(LINE_BREAKS).skip(1) {
            // bash reads a `\r` as part of a word (`$'\r': command not found`) or, CR-only, the
            // whole script as one comment line: bash's reading, which the reference spawns too.
            // Its verdict and findings are compared above.
            // The example graph runs `demo/greet_bash` as one of its actions.
            if id == "demo/greet_bash" || id == "demo/greet_flow" {
                continue;
            }
            assert_eq!(exec(dir, id), want, "{name}: exec {id}");
        }
    }
}
