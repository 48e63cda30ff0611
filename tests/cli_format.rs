//! Output as a user asks for it (issue 35 item 12): `--format concise` (also ruff's
//! `--output-format`), `--color auto|always|never` with `NO_COLOR` and `FORCE_COLOR`, and
//! `--format json` spelled the same in every command that answers JSON (the old `--json` kept).
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests spawn the binary on the bundled example tree"
)]

use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(root)
        .env_remove("NO_COLOR")
        .env_remove("FORCE_COLOR")
        .env("USER_SPACE", root.join("examples/user"))
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const LINT: [&str; 3] = ["lint", "examples/project", "--no-cache"];

#[test]
fn concise_is_one_line_per_finding_then_the_summary() {
    let (code, out) = run(&[&LINT[..], &["--format", "concise"]].concat(), &[]);
    assert_eq!(code, 1, "the example tree has errors");
    let lines: Vec<&str> = out.lines().collect();
    let (summary, findings) = lines.split_last().unwrap();
    assert!(findings.len() > 3, "{out}");
    for line in findings {
        // `path:line:col: rule message`
        let mut parts = line.splitn(4, ':');
        let (path, l, c, rest) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        // Below the working directory relative, elsewhere (the user space) absolute.
        assert!(path.starts_with(".ai/") || path.starts_with('/'), "{line}");
        assert!(
            l.parse::<u32>().is_ok() && c.parse::<u32>().is_ok(),
            "{line}"
        );
        let rule = rest.trim_start().split(' ').next().unwrap();
        assert!(
            rule.chars().all(|ch| ch.is_ascii_lowercase() || ch == '-'),
            "{line}"
        );
    }
    assert!(summary.contains("error"), "{summary}");
    assert!(out.ends_with(".\n"), "the summary ends its line: {out:?}");
    // ruff's spelling, and `-q` without the summary.
    let (_, quiet) = run(
        &[&LINT[..], &["--output-format", "concise", "-q"]].concat(),
        &[],
    );
    assert_eq!(quiet.lines().count(), findings.len(), "{quiet}");
}

#[test]
fn color_follows_the_flag_then_force_color_then_no_color() {
    let esc = |out: &str| out.contains('\u{1b}');
    // A pipe: no colour unless asked.
    assert!(!esc(&run(&LINT, &[]).1));
    assert!(esc(&run(&LINT, &[("FORCE_COLOR", "1")]).1));
    assert!(!esc(&run(&LINT, &[("FORCE_COLOR", "0")]).1));
    assert!(esc(&run(
        &[&["--color", "always"][..], &LINT[..]].concat(),
        &[("NO_COLOR", "1")]
    )
    .1));
    assert!(!esc(&run(
        &[&LINT[..], &["--color", "never"]].concat(),
        &[("FORCE_COLOR", "1")]
    )
    .1));
    assert!(!esc(&run(&LINT, &[("NO_COLOR", "1")]).1));
}

#[test]
fn format_json_is_spelled_the_same_everywhere() {
    let project = "examples/project";
    for args in [
        vec!["chain", "acme/deploy/notify_slack", project],
        vec!["verify", "--path", project],
        vec!["keys", "list", project],
        vec!["exec", "acme/nope", project],
        vec!["load", "acme/nope", project],
        vec!["sign", "acme/nope", project],
    ] {
        let (_, out) = run(&[&args[..], &["--format", "json"]].concat(), &[]);
        let parsed: Result<serde_json::Value, _> = serde_json::from_str(&out);
        assert!(parsed.is_ok(), "{args:?} --format json: {out}");
    }
    // The flag of before still works where it was.
    for args in [
        vec!["chain", "acme/deploy/notify_slack", project, "--json"],
        vec!["verify", "--path", project, "--json"],
        vec!["keys", "list", project, "--json"],
    ] {
        let (_, out) = run(&args, &[]);
        assert!(
            serde_json::from_str::<serde_json::Value>(&out).is_ok(),
            "{args:?}: {out}"
        );
    }
}
