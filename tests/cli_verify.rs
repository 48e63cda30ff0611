//! `ryechain verify` and the integrity lines of `ryechain chain`, run as a binary on the rule
//! fixtures (signed with a throwaway key whose public half the fixtures trust).
#![allow(
    clippy::disallowed_methods,
    reason = "the test runs the ryechain binary"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn ryechain(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args(args)
        .arg("--user-space")
        .arg(dir.join("user"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run ryechain");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn verify_all_items_fails_on_unsigned_unless_allowed() {
    let dir = fixture("unsigned-item");
    let project = dir.join("project");
    let p = project.to_str().unwrap();
    let (code, out, _) = ryechain(&["verify", p], &dir);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAILED  Unsigned item: "), "{out}");
    assert!(out.contains("ok_signed.py (key 1cae49885ebad676)"), "{out}");
    assert!(out.contains("(key embedded)"), "{out}");
    let (code, out, _) = ryechain(&["verify", p, "--allow-unsigned"], &dir);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("allowed Unsigned item: "), "{out}");
}

#[test]
fn verify_named_chain_and_json() {
    let dir = fixture("content-hash-mismatch");
    let project = dir.join("project");
    let p = project.to_str().unwrap();
    let (code, out, _) = ryechain(&["verify", "acme/ok_signed", p], &dir);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = ryechain(&["verify", "acme/bad_edited", "--path", p, "--json"], &dir);
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["failed"], 1);
    let first = &v["items"][0];
    assert_eq!(first["item_id"], "acme/bad_edited");
    assert_eq!(first["verified"], false);
    assert!(
        first["error"]
            .as_str()
            .unwrap()
            .starts_with("Integrity failed: "),
        "{first}"
    );
    // Even --allow-unsigned does not accept a tampered file.
    let (code, _, _) = ryechain(&["verify", "acme/bad_edited", p, "--allow-unsigned"], &dir);
    assert_eq!(code, 1);
    let (code, _, err) = ryechain(&["verify", "acme/nope", p], &dir);
    assert_eq!(code, 2);
    assert!(err.contains("Tool not found: acme/nope"), "{err}");
}

#[test]
fn chain_shows_each_elements_verdict() {
    let dir = fixture("untrusted-key");
    let project = dir.join("project");
    let (_, out, _) = ryechain(
        &["chain", "acme/bad_foreign", project.to_str().unwrap()],
        &dir,
    );
    assert!(
        out.contains("integrity: Untrusted key 53df40034e88aa00 for "),
        "{out}"
    );
    assert!(out.contains("integrity: verified (key embedded)"), "{out}");
}
