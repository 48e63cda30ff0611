//! A misspelt item id on the command line (issue 35 item 13): `exec`, `chain`, `lock`, `verify`
//! and `sign` say where they looked and which id was probably meant; a far-off id gets no guess.
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write a temporary project and spawn the binary"
)]

use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let tool = dir.path().join("project/.ai/tools/bench/noop.sh");
    std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
    std::fs::create_dir_all(dir.path().join("user")).unwrap();
    std::fs::write(
        &tool,
        "__version__=\"1.0.0\"\n__tool_type__=\"bash\"\n__executor_id__=\"rye/core/runtimes/bash/bash\"\necho '{}'\n",
    )
    .unwrap();
    dir
}

fn run(dir: &tempfile::TempDir, args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .args(args)
        .env("USER_SPACE", dir.path().join("user"))
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn misspelt_ids_are_answered_with_the_id_meant_and_the_spaces_searched() {
    let dir = tree();
    let project = dir.path().join("project").display().to_string();
    for args in [
        vec!["exec", "bench/noopp", &project, "--format", "human"],
        vec!["chain", "bench/nop", &project],
        vec!["lock", "bench/noo", &project],
        vec!["verify", "bench/nopo", &project],
        vec!["sign", "bench/nop", &project],
    ] {
        let (code, out) = run(&dir, &args);
        assert_eq!(code, 1, "{args:?}: {out}");
        assert!(out.contains("Tool not found: bench/"), "{args:?}: {out}");
        assert!(
            out.contains("did you mean `bench/noop`?"),
            "{args:?}: {out}"
        );
        if args[0] != "exec" {
            assert!(out.contains("searched in"), "{args:?}: {out}");
            assert!(out.contains(".ai/tools"), "{args:?}: {out}");
        }
    }
    // The agent's answer carries it as `hint`.
    let (_, out) = run(&dir, &["exec", "bench/noopp", &project, "--format", "json"]);
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["hint"], "did you mean `bench/noop`?");
    assert_eq!(
        r["error"], "Tool not found: bench/noopp",
        "the reference's words stay"
    );
    // Nothing near: no guess.
    let (code, out) = run(&dir, &["lock", "zzz/qqq/xxx", &project]);
    assert_eq!(code, 1);
    assert!(!out.contains("did you mean"), "{out}");
}
