//! Dynamic shell completion (issue 35 item 14): a real bash sources `COMPLETE=bash ryechain` and
//! runs the completion function it defines, as pressing Tab does, in a temporary project: tool
//! ids from the project, the user space and the system bundle, rule ids for `rule`, rule ids and
//! families after a comma in `--select`.
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects and spawn bash"
)]

use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

/// What bash's completion of `words` (the last one being completed) offers, in `cwd`.
fn complete(cwd: &Path, home: &Path, words: &[&str]) -> Vec<String> {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        r#"source <(COMPLETE=bash ryechain)
COMP_WORDS=({words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
COMP_TYPE=9
_clap_complete_ryechain ryechain "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        words = quoted.join(" ")
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &script])
        .current_dir(cwd)
        .env("PATH", path)
        .env("HOME", home)
        .env_remove("USER_SPACE")
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

fn ryechain(cwd: &Path, home: &Path, args: &[&str]) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("USER_SPACE")
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}");
}

#[test]
fn bash_completes_item_ids_and_rule_names() {
    if Command::new("bash").arg("--version").output().is_err() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "bash is missing"
        );
        eprintln!("skipped: bash is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (home, project) = (tmp.path().join("home"), tmp.path().join("proj"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    ryechain(&project, &home, &["init"]);
    for id in ["acme/greet", "acme/grow", "acme/sync", "other/greet"] {
        ryechain(&project, &home, &["new", "tool", id, "--runtime", "bash"]);
    }
    // A tool of the user space (the home directory).
    std::fs::create_dir_all(home.join(".ai/tools/acme")).unwrap();
    std::fs::write(
        home.join(".ai/tools/acme/grill.sh"),
        "__executor_id__=\"rye/core/runtimes/bash/bash\"\n",
    )
    .unwrap();
    // From a subfolder: the project is found upwards, as the commands find it.
    let inner = project.join(".ai/tools");
    for command in ["exec", "chain", "sign", "lock", "verify", "load"] {
        assert_eq!(
            complete(&inner, &home, &["ryechain", command, "acme/gr"]),
            ["acme/greet", "acme/grill", "acme/grow"],
            "{command}"
        );
    }
    let runtimes = complete(
        &project,
        &home,
        &["ryechain", "exec", "rye/core/runtimes/ba"],
    );
    assert_eq!(runtimes, ["rye/core/runtimes/bash/bash"]);
    // A deprecated flat alias only when it is the one typed.
    assert_eq!(
        complete(
            &project,
            &home,
            &["ryechain", "exec", "rye/core/runtimes/bash_"]
        ),
        ["rye/core/runtimes/bash_runtime"]
    );
    assert_eq!(
        complete(&project, &home, &["ryechain", "rule", "ambig"]),
        ["ambiguous-item"]
    );
    let select = complete(
        &project,
        &home,
        &["ryechain", "lint", "--select", "chain,missing-exec"],
    );
    assert_eq!(select, ["chain,missing-executor"]);
    let families = complete(&project, &home, &["ryechain", "lint", "--ignore", "integ"]);
    assert!(families.iter().any(|c| c == "integrity"), "{families:?}");
    // Outside any project: nothing to offer, and no error.
    let nowhere = tmp.path().join("nowhere");
    std::fs::create_dir_all(&nowhere).unwrap();
    assert!(complete(&nowhere, &home, &["ryechain", "exec", "acme/"]).is_empty());
}
