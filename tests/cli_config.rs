//! `ryechain config` (issue 35 item 15): the settings in force, each with the file and line that
//! set it (or `default`), through the real binary on temporary user and project spaces; and the
//! JSON Schema of `.ai/config/ryechain.yaml`, generated from its type, equal to the checked-in
//! `docs/ryechain.schema.json`.
#![allow(
    clippy::disallowed_methods,
    reason = "end-to-end tests write temporary projects and spawn the binary"
)]

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value as Json, json};

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

fn run(tmp: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(tmp.join("project"))
        .env("USER_SPACE", tmp.join("user"))
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The setting `key` of a `--format json` answer.
fn setting<'a>(answer: &'a Json, key: &str) -> &'a Json {
    answer["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {answer}"))
}

#[test]
fn config_shows_each_setting_with_the_file_and_line_that_set_it() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let user = t.join("user/.ai/config/ryechain.yaml");
    let project = t.join("project/.ai/config/ryechain.yaml");
    write(
        &user,
        "lint:\n  select: [chain]\n  severity:\n    ambiguous-item: error\n    unsigned-item: off\nchain:\n  max_depth: 7\n",
    );
    write(
        &project,
        "# the project's word\nlint:\n  severity:\n    unsigned-item: warning\n  select: [ALL]\n",
    );
    let (code, out, err) = run(t, &["config", "--format", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let answer: Json = serde_json::from_str(&out).unwrap();
    let origin = |path: &Path, line: u64| json!({"space": "", "path": path.display().to_string(), "line": line});
    let at = |key: &str| {
        let mut o = setting(&answer, key)["origin"].clone();
        if let Some(m) = o.as_object_mut() {
            m.insert("space".into(), json!(""));
        }
        o
    };
    // The project replaces the user's list, merges into the user's severities.
    assert_eq!(setting(&answer, "lint.select")["value"], json!(["ALL"]));
    assert_eq!(at("lint.select"), origin(&project, 5));
    assert_eq!(
        setting(&answer, "lint.severity.ambiguous-item")["value"],
        "error"
    );
    assert_eq!(at("lint.severity.ambiguous-item"), origin(&user, 4));
    assert_eq!(
        setting(&answer, "lint.severity.unsigned-item")["value"],
        "warning"
    );
    assert_eq!(at("lint.severity.unsigned-item"), origin(&project, 4));
    assert_eq!(setting(&answer, "chain.max_depth")["value"], 7);
    assert_eq!(at("chain.max_depth"), origin(&user, 7));
    // Unset: the defaults.
    assert_eq!(setting(&answer, "lint.ignore")["value"], json!([]));
    assert_eq!(setting(&answer, "lint.ignore")["origin"], "default");
    assert_eq!(
        setting(&answer, "integrity.require_signatures")["value"],
        true
    );
    assert_eq!(
        setting(&answer, "integrity.require_signatures")["origin"],
        "default"
    );
    let spaces: Vec<&str> = answer["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["space"].as_str().unwrap())
        .collect();
    assert_eq!(spaces, ["user", "project"], "{answer}");
    assert_eq!(answer["problems"], json!([]));

    // The same for a person.
    let (code, out, _) = run(t, &["config"]);
    assert_eq!(code, 0);
    let line = |key: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} in {out}"))
            .to_owned()
    };
    assert!(
        line("chain.max_depth").ends_with(&format!("7  ({}:7)", user.display())),
        "{out}"
    );
    assert!(line("lint.ignore").ends_with("[]  (default)"), "{out}");
    assert!(out.contains("command-line flags"), "{out}");
}

#[test]
fn a_projects_lowering_of_the_integrity_policy_is_shown_ignored_and_a_broken_config_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let project = t.join("project/.ai/config/ryechain.yaml");
    write(
        &project,
        "integrity:\n  require_signatures: false\nchain:\n  max_dept: 3\n",
    );
    std::fs::create_dir_all(t.join("user")).unwrap();
    let (code, out, _) = run(t, &["config", "--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let answer: Json = serde_json::from_str(&out).unwrap();
    // Trust comes from the person: the project's `false` is not in force.
    let req = setting(&answer, "integrity.require_signatures");
    assert_eq!(
        (&req["value"], &req["origin"]),
        (&json!(true), &json!("default"))
    );
    assert_eq!(setting(&answer, "chain.max_depth")["value"], 10);
    let problems: Vec<(u64, &str)> = answer["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["line"].as_u64().unwrap(), p["message"].as_str().unwrap()))
        .collect();
    assert!(
        problems.iter().any(|(l, m)| *l == 4
            && m.contains("unknown key `chain.max_dept`; did you mean `max_depth`?")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|(l, m)| *l == 2 && m.contains("in a project's config is ignored")),
        "{problems:?}"
    );
    let (code, _, err) = run(t, &["config"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("warning: {}:4: ", project.display())),
        "{err}"
    );
}

#[test]
fn the_checked_in_schema_is_the_one_the_config_type_generates() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("project")).unwrap();
    let (code, out, err) = run(tmp.path(), &["config", "--schema"]);
    assert_eq!(code, 0, "{err}");
    let checked_in = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ryechain.schema.json"),
    )
    .unwrap();
    assert!(
        out == checked_in,
        "docs/ryechain.schema.json is out of date: run `cargo run -- config --schema > docs/ryechain.schema.json`"
    );
    let schema: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["title"], "ryechain configuration");
}
