//! `ryechain --version` and `ryechain man` as a user runs them (issue 35 item 14): the version
//! names its commit and date in a git checkout, as cargo's does; a page per subcommand with the
//! ENVIRONMENT it reads and its EXIT STATUS.
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests spawn the binary and read the pages it writes"
)]

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn version_names_the_commit_and_its_date_in_a_checkout() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    let line = out.trim();
    let rest = line
        .strip_prefix(&format!("ryechain {}", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{line}"));
    let in_checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join(".git").exists();
    if !in_checkout {
        assert_eq!(rest, "", "outside a checkout the version is bare");
        return;
    }
    // ` (1a2b3c4d5 2026-11-27)`
    let inner = rest
        .strip_prefix(" (")
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no commit in {line:?}"));
    let (hash, date) = inner.split_once(' ').unwrap();
    assert!(
        hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{line}"
    );
    assert_eq!(date.len(), 10, "{line}");
    assert_eq!(date.as_bytes()[4], b'-', "{line}");
}

#[test]
fn every_subcommand_has_a_page_with_environment_and_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&["man", "--out-dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for expected in [
        "ryechain.1",
        "ryechain-lint.1",
        "ryechain-exec.1",
        "ryechain-load.1",
    ] {
        assert!(
            pages.iter().any(|p| p == expected),
            "{expected} in {pages:?}"
        );
    }
    for page in &pages {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        for section in [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH ENVIRONMENT",
            ".SH \"EXIT STATUS\"",
        ] {
            assert!(text.contains(section), "{page} lacks {section}");
        }
        assert!(text.contains("USER_SPACE"), "{page}");
    }
    let (code, out, _) = run(&["man", "exec"]);
    assert_eq!(code, 0);
    assert!(out.contains("ryechain\\-exec"), "the page is exec's");
    assert!(out.contains("\\-\\-params"), "its options are listed");
    let (code, out, err) = run(&["man", "nope"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("no subcommand `nope`"), "{err}");
}
