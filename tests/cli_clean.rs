//! `ryechain clean` (issue 35 item 15): the project's lint cache goes, the others stay unless
//! `--all`, and nothing but the cache's own files is ever removed from the folder.
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects and spawn the binary"
)]

use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

fn run(tmp: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .args(args)
        .env("RYECHAIN_CACHE_DIR", tmp.join("cache"))
        .env("USER_SPACE", tmp.join("user"))
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn caches(tmp: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn clean_removes_the_projects_cache_then_every_cache_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for p in ["a", "b"] {
        std::fs::create_dir_all(t.join(p).join(".ai/tools")).unwrap();
    }
    std::fs::create_dir_all(t.join("user")).unwrap();
    let (a, b) = (
        t.join("a").display().to_string(),
        t.join("b").display().to_string(),
    );
    for p in [&a, &b] {
        assert_eq!(run(t, &["lint", p, "-q"]).0, 0);
    }
    std::fs::write(t.join("cache/notes.txt"), "mine").unwrap();
    assert_eq!(caches(t).len(), 3, "{:?}", caches(t));
    let (code, out) = run(t, &["clean", &a]);
    assert_eq!(code, 0);
    assert!(out.contains("removed 1 cache file"), "{out}");
    assert_eq!(caches(t).len(), 2, "b's cache and the note stay");
    let (_, out) = run(t, &["clean", &a]);
    assert!(out.contains("nothing to remove"), "{out}");
    let (code, out) = run(t, &["clean", "--all"]);
    assert_eq!(code, 0);
    assert!(out.contains("removed 1 cache file"), "{out}");
    assert_eq!(caches(t), ["notes.txt"]);
}
