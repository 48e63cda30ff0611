//! Output errors end to end: every subcommand that prints, run by the built binary with its
//! stdout on a full disk (`/dev/full`), a pipe whose reader is already closed, or a closed file
//! descriptor, exits with a clear line or silently — never with a panic (issue 8, item 4).
#![allow(
    clippy::disallowed_methods,
    reason = "the test runs the binary with its stdout on special files and pipes"
)]

use std::fs::File;
use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary on the bundled example tree (or any subcommand), run from the repository root.
fn cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ryechain"));
    c.args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("HOME", repo().join("examples/user"))
        // The lint cache goes under target/, never into the example tree (HOME above).
        .env(
            "RYECHAIN_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-output-cache"),
        )
        .env_remove("USER_SPACE")
        .env_remove("RYE_SYSTEM_SPACE");
    c
}

const LINT: &[&str] = &[
    "lint",
    "examples/project",
    "--user-space",
    "examples/user",
    "--no-progress",
];

/// Every printing subcommand that needs nothing but the example tree.
fn printing_commands() -> Vec<Vec<&'static str>> {
    vec![
        LINT.to_vec(),
        [LINT, &["--format", "json"]].concat(),
        [LINT, &["--format", "sarif"]].concat(),
        [LINT, &["--statistics"]].concat(),
        [LINT, &["--show-files"]].concat(),
        vec!["rules"],
        vec!["rule", "missing-executor"],
        vec!["chain", "acme/data/csv_profile", "examples/project"],
        vec![
            "chain",
            "acme/data/csv_profile",
            "examples/project",
            "--json",
        ],
        vec!["graph", "examples/project"],
        vec!["graph", "examples/project", "--format", "json"],
        vec!["verify", "--path", "examples/project"],
        vec!["keys", "list", "examples/project"],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["--help"],
        vec!["lint", "--help"],
        vec!["--version"],
    ]
}

/// The exit code of a run whose output is read to the end.
fn normal_code(args: &[&str]) -> Option<i32> {
    cmd(args).output().unwrap().status.code()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_no_panic(args: &[&str], o: &Output) {
    let err = stderr(o);
    assert!(
        !err.contains("panicked") && o.status.code() != Some(101),
        "{args:?} panicked: {:?}\n{err}",
        o.status
    );
}

#[test]
fn a_full_disk_is_one_line_on_stderr_and_exit_2() {
    for args in printing_commands() {
        let o = cmd(&args)
            .stdout(File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_no_panic(&args, &o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        let last = err.lines().last().unwrap_or_default();
        assert_eq!(
            last, "error: cannot write to standard output: No space left on device (os error 28)",
            "{args:?}"
        );
        assert_eq!(
            err.matches("cannot write to standard output").count(),
            1,
            "{args:?}: {err}"
        );
    }
}

#[test]
fn lint_report_to_a_full_disk_file_is_an_error() {
    let o = cmd(&[LINT, &["--output-file", "/dev/full"]].concat())
        .output()
        .unwrap();
    assert_no_panic(LINT, &o);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        "error: cannot write the report to /dev/full: No space left on device (os error 28)"
    );
}

/// A pipe whose reader is closed before the binary writes: no message, no panic, and the exit
/// code the command would have had (lint still fails on the example's errors).
#[test]
fn a_closed_pipe_is_silent() {
    for args in printing_commands() {
        let mut child = cmd(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end at once: every write of the child meets EPIPE.
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("standard output"), "{args:?}: {err}");
        assert_eq!(status.code(), normal_code(&args), "{args:?}: {err}");
    }
}

/// A reader that goes away while a long report is still being written (the SARIF log of the
/// example is larger than a pipe buffer): the rest is dropped silently, the exit code stays.
#[test]
fn a_pipe_closed_mid_report_is_silent() {
    let args = [LINT, &["--format", "sarif"]].concat();
    let mut child = cmd(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    out.read_exact(&mut first).unwrap();
    assert_eq!(&first[..1], b"{");
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_no_panic(&args, &o);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "");
}

/// A closed stdout descriptor (`>&-`): the Rust runtime reopens it on `/dev/null`, so the run
/// completes as usual; what matters is that nothing panics.
#[test]
fn a_closed_stdout_descriptor_does_not_panic() {
    for args in [LINT.to_vec(), vec!["rules"], vec!["--help"]] {
        let mut c = cmd(&args);
        // SAFETY: `close` is async-signal-safe; the closure runs in the forked child only.
        unsafe {
            c.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
        let o = c.stderr(Stdio::piped()).output().unwrap();
        assert_no_panic(&args, &o);
        assert_eq!(
            o.status.code(),
            normal_code(&args),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// A stderr that cannot be written (`2>/dev/full`) is no reason to panic either: the exit code
/// still says what happened.
#[test]
fn a_full_stderr_does_not_panic() {
    // An unknown rule is reported on stderr only.
    let o = cmd(&[LINT, &["--select", "no-such-rule"]].concat())
        .stderr(File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = cmd(LINT)
        .stdout(File::create("/dev/full").unwrap())
        .stderr(File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
