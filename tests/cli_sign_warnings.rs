//! `ryechain sign` of a batch prints each distinct validation warning once, after the list, with
//! the items it applies to — not the same line once per file (issue 8, item 6).
#![allow(
    clippy::disallowed_methods,
    reason = "the test writes a temporary tree and runs the binary"
)]

use std::process::Command;

#[test]
fn batch_warnings_are_printed_once_with_their_items() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let project = root.join("project");
    let tools = project.join(".ai/tools/acme/data");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(root.join("user")).unwrap();
    // `.json` has no metadata parser: each file is signed with the same warning.
    for n in ["a", "b", "c", "d", "e", "f", "g"] {
        std::fs::write(
            tools.join(format!("{n}.json")),
            format!("{{\"n\": \"{n}\"}}\n"),
        )
        .unwrap();
    }
    let o = Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args(["sign", "acme/data/*", "."])
        .current_dir(&project)
        .env("USER_SPACE", root.join("user"))
        .env("HOME", root.join("user"))
        .env_remove("RYE_SYSTEM_SPACE")
        .env_remove("RYE_SIGNING_KEY_DIR")
        .output()
        .unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("signed  ")).count(),
        7,
        "{out}"
    );
    let warnings: Vec<&&str> = lines.iter().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        [
            &"warning: no metadata parser is configured for `.json`: the file is signed without checking its metadata (7 items: acme/data/a, acme/data/b, acme/data/c, acme/data/d, acme/data/e and 2 more)"
        ],
        "{out}"
    );
    assert_eq!(lines.last(), Some(&"Signed 7/7 items"));
}
