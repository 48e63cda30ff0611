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

/// Issue 35 item 6: `sign` validates the tool's chain first. A misspelt executor id is refused
/// (alone and in a batch, the file left as it was) with lint's words and the rule; `--force`
/// signs it with that finding as a warning. In the same batch, a tool whose runtime lives in the
/// user space is signed: the batch loads what its chains read outside the project.
#[test]
fn sign_refuses_a_tool_whose_chain_is_broken_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let project = root.join("project");
    let user = root.join("user");
    let tools = project.join(".ai/tools/demo");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(user.join(".ai/tools/mine")).unwrap();
    let tool = |executor: &str| {
        format!(
            "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"{executor}\"\n__category__ = \"demo\"\n\ndef execute(params, project_path):\n    return {{}}\n"
        )
    };
    let typo = tool("rye/core/runtimes/python/scirpt");
    std::fs::write(tools.join("typo.py"), &typo).unwrap();
    std::fs::write(tools.join("good.py"), tool("mine/rt")).unwrap();
    std::fs::write(
        user.join(".ai/tools/mine/rt.yaml"),
        "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\ncategory: mine\nconfig:\n  command: python3\n  args: [\"{tool_path}\"]\n",
    )
    .unwrap();
    let sign = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_ryechain"))
            .arg("sign")
            .args(args)
            .current_dir(&project)
            .env("USER_SPACE", &user)
            .env("HOME", &user)
            .env_remove("RYE_SYSTEM_SPACE")
            .env_remove("RYE_SIGNING_KEY_DIR")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8(o.stdout).unwrap() + &String::from_utf8(o.stderr).unwrap(),
        )
    };
    let (code, out) = sign(&["demo/typo"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("Chain validation failed")
            && out
                .contains("Executor not found: rye/core/runtimes/python/scirpt [missing-executor]"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(tools.join("typo.py")).unwrap(),
        typo
    );

    let (code, out) = sign(&["demo/*"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("signed  demo/good"), "{out}");
    assert!(out.contains("FAILED  demo/typo"), "{out}");
    assert!(out.contains("Signed 1/2 items, 1 failed"), "{out}");
    assert_eq!(
        std::fs::read_to_string(tools.join("typo.py")).unwrap(),
        typo
    );

    let (code, out) = sign(&["demo/typo", "--force"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("signed with --force despite: Executor not found"),
        "{out}"
    );
    assert!(
        std::fs::read_to_string(tools.join("typo.py"))
            .unwrap()
            .starts_with("# rye:signed:")
    );
}
