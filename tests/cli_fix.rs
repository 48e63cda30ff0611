//! Fix and suppress, as ruff does (issue 35 item 11), by the built binary over real trees:
//! `lint --diff` shows the certain fixes and changes nothing; `lint --fix` writes them (a typo
//! with one close id, the header line a script forgot, an unused suppression, a stale lockfile
//! whose chain is signed), reports what remains and exits by it, names the signed items it
//! changed for `ryechain sign` without signing them, and leaves files outside the project; the
//! suppression comments of each file type take findings out on their own line only, misspelt or
//! idle ones are reported; `lint.per-file-ignores` turns rules off by glob; and the lint cache
//! replays suppressions as a fresh lint reports them, an executor cycle's included.
#![allow(
    clippy::disallowed_methods,
    reason = "the test writes temporary trees and runs the binary"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output};

const RUNTIME: &str = "rye/core/runtimes/python/script";

/// A Python tool naming `executor`, with `extra` after its executor line's value.
fn tool(executor: &str, extra: &str) -> String {
    format!(
        "\"\"\"A tool.\"\"\"\n\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"{executor}\"{extra}\n__category__ = \"acme\"\n__tool_description__ = \"d\"\n\n\ndef main(params):\n    return {{}}\n"
    )
}

/// A script that forgot its executor (issue 35 item 3).
const SCRIPT: &str = "\"\"\"A script.\"\"\"\n\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__category__ = \"acme\"\n__tool_description__ = \"d\"\n\nprint(\"hello\")\n";

/// A project and a user space in a temporary folder, and the binary run in them.
struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    user: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (project, user) = (root.join("project"), root.join("user"));
        std::fs::create_dir_all(project.join(".ai/tools")).unwrap();
        std::fs::create_dir_all(user.join(".ai")).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        Env {
            _tmp: tmp,
            root,
            project,
            user,
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }

    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ryechain"));
        c.args(args)
            .current_dir(&self.project)
            .env("USER_SPACE", &self.user)
            .env("HOME", self.root.join("home"))
            .env("RYECHAIN_CACHE_DIR", self.root.join("cache"))
            .env("NO_COLOR", "1")
            .env_remove("RYE_SYSTEM_SPACE")
            .env_remove("RYE_SIGNING_KEY_DIR");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        write_in(&self.project, rel, text)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.project.join(".ai").join(rel)).unwrap()
    }
}

fn write_in(base: &std::path::Path, rel: &str, text: &str) -> PathBuf {
    let p = base.join(".ai").join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn assert_code(o: &Output, want: i32) {
    assert_eq!(
        o.status.code(),
        Some(want),
        "exit code\n--- stdout\n{}\n--- stderr\n{}",
        out(o),
        err(o)
    );
}

/// `path:line:col: rule` of each finding of a concise report.
fn findings(o: &Output) -> Vec<String> {
    out(o)
        .lines()
        .filter(|l| l.starts_with(".ai/") || l.starts_with('/'))
        .map(|l| {
            let (at, rest) = l.split_once(": ").unwrap();
            format!("{at}: {}", rest.split(' ').next().unwrap())
        })
        .collect()
}

const CONCISE: [&str; 4] = ["lint", "--ignore", "integrity", "--format=concise"];

fn lint(env: &Env, extra: &[&str]) -> Output {
    env.run(&[&CONCISE[..], extra].concat())
}

/// The three kinds of text fix of a fresh tree, and one finding no fix can mend.
fn fixable(env: &Env) {
    env.write(
        "tools/acme/typo.py",
        &tool("rye/core/runtimes/python/scirpt", ""),
    );
    env.write("tools/acme/script.py", SCRIPT);
    // No tool type either: the line goes after the version's.
    env.write(
        "tools/acme/bare.py",
        "__version__ = \"1.0.0\"\n\nprint(\"hello\")\n",
    );
    env.write(
        "tools/acme/idle.py",
        &tool(RUNTIME, "  # ryechain: ignore[missing-executor]"),
    );
}

#[test]
fn diff_shows_each_certain_fix_and_changes_nothing() {
    let env = Env::new();
    fixable(&env);
    let before: Vec<String> = ["typo.py", "script.py", "idle.py"]
        .iter()
        .map(|f| env.read(&format!("tools/acme/{f}")))
        .collect();
    let o = env.run(&["lint", "--ignore", "integrity", "--diff"]);
    assert_code(&o, 1);
    let diff = out(&o);
    for want in [
        "--- a/.ai/tools/acme/typo.py\n+++ b/.ai/tools/acme/typo.py\n",
        "-__executor_id__ = \"rye/core/runtimes/python/scirpt\"\n+__executor_id__ = \"rye/core/runtimes/python/script\"\n",
        " __tool_type__ = \"python\"\n+__executor_id__ = \"rye/core/runtimes/python/script\"\n __category__",
        "-__executor_id__ = \"rye/core/runtimes/python/script\"  # ryechain: ignore[missing-executor]\n+__executor_id__ = \"rye/core/runtimes/python/script\"\n",
        " __version__ = \"1.0.0\"\n+__executor_id__ = \"rye/core/runtimes/python/script\"\n \n print",
    ] {
        assert!(diff.contains(want), "{want}\n--- in\n{diff}");
    }
    assert!(
        err(&o).contains("Would fix 4 findings in 4 files"),
        "{}",
        err(&o)
    );
    let after: Vec<String> = ["typo.py", "script.py", "idle.py"]
        .iter()
        .map(|f| env.read(&format!("tools/acme/{f}")))
        .collect();
    assert_eq!(before, after, "--diff changes nothing");
    // Nothing to fix: exit 0.
    let clean = Env::new();
    clean.write("tools/acme/ok.py", &tool(RUNTIME, ""));
    let o = clean.run(&["lint", "--ignore", "integrity", "--diff"]);
    assert_code(&o, 0);
    assert_eq!(out(&o), "");
    assert!(err(&o).contains("No fixes available."), "{}", err(&o));
}

#[test]
fn fix_writes_the_fixes_then_reports_what_remains_and_exits_by_it() {
    let env = Env::new();
    fixable(&env);
    let script = env.project.join(".ai/tools/acme/script.py");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    // No id is near this one: it stays.
    env.write("tools/acme/far.py", &tool("acme/nothing/near", ""));
    let o = lint(&env, &["--fix"]);
    assert_code(&o, 1);
    assert_eq!(
        findings(&o),
        [".ai/tools/acme/far.py:5:19: missing-executor"],
        "{}",
        out(&o)
    );
    let e = err(&o);
    for want in [
        "fixed .ai/tools/acme/bare.py (1 fix: unknown-primitive)",
        "fixed .ai/tools/acme/idle.py (1 fix: unused-suppression)",
        "fixed .ai/tools/acme/script.py (1 fix: unknown-primitive)",
        "fixed .ai/tools/acme/typo.py (1 fix: missing-executor)",
        "4 fixed in 4 files, 1 remaining.",
    ] {
        assert!(e.contains(want), "{want}\n--- in\n{e}");
    }
    assert_eq!(env.read("tools/acme/typo.py"), tool(RUNTIME, ""));
    assert_eq!(env.read("tools/acme/idle.py"), tool(RUNTIME, ""));
    assert!(env.read("tools/acme/script.py").contains(
        "__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\n"
    ));
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777,
        0o750,
        "a fixed file keeps its mode"
    );
    // Fixed and clean: exit 0, no remaining.
    std::fs::remove_file(env.project.join(".ai/tools/acme/far.py")).unwrap();
    let o = lint(&env, &["--fix"]);
    assert_code(&o, 0);
    assert!(
        err(&o).contains("0 fixed in 0 files, 0 remaining."),
        "{}",
        err(&o)
    );
}

#[test]
fn only_the_projects_own_files_are_fixed() {
    let env = Env::new();
    // A project tool runs on a user runtime whose executor id is a typo: the chain break is
    // reported at the user's file, which `--fix` leaves to its owner.
    write_in(
        &env.user,
        "tools/team/rt.yaml",
        "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subproces\ncategory: team\ndescription: \"d\"\nconfig:\n  command: /bin/true\n",
    );
    env.write("tools/acme/uses.py", &tool("team/rt", ""));
    let o = lint(&env, &["--fix"]);
    assert_code(&o, 1);
    assert!(
        err(&o).contains("is not fixed: it is outside the project"),
        "{}",
        err(&o)
    );
    assert!(
        std::fs::read_to_string(env.user.join(".ai/tools/team/rt.yaml"))
            .unwrap()
            .contains("subproces\n")
    );
}

#[test]
fn a_fixed_signed_item_keeps_its_old_signature_and_is_named_for_sign() {
    let env = Env::new();
    assert_code(&env.run(&["keys", "generate"]), 0);
    env.write(
        "tools/acme/idle.py",
        &tool(RUNTIME, "  # ryechain: ignore[missing-executor]"),
    );
    assert_code(&env.run(&["sign", "acme/idle"]), 0);
    let signed = env.read("tools/acme/idle.py");
    let sigline = signed
        .lines()
        .find(|l| l.contains("rye:signed:"))
        .unwrap()
        .to_owned();
    let o = env.run(&["lint", "--fix", "--format=concise"]);
    // The fix leaves the signature as it was, which no longer matches: an error remains.
    assert_code(&o, 1);
    assert_eq!(
        findings(&o),
        [".ai/tools/acme/idle.py:1:1: content-hash-mismatch"],
        "{}",
        out(&o)
    );
    let fixed = env.read("tools/acme/idle.py");
    assert!(fixed.contains(&sigline), "the signature line is left alone");
    assert!(!fixed.contains("ryechain: ignore"));
    assert!(
        err(&o).contains(
            "note: acme/idle was signed; its signature no longer matches the fixed text: review the change, then `ryechain sign acme/idle` (a fix never signs for you)"
        ),
        "{}",
        err(&o)
    );
    assert_code(&env.run(&["sign", "acme/idle"]), 0);
    assert_code(&env.run(&["lint"]), 0);
}

#[test]
fn a_stale_lockfile_is_refreshed_only_when_its_chain_is_signed() {
    let env = Env::new();
    assert_code(&env.run(&["keys", "generate"]), 0);
    env.write("tools/acme/report.py", &tool(RUNTIME, ""));
    assert_code(&env.run(&["sign", "acme/report"]), 0);
    assert_code(&env.run(&["lock", "acme/report"]), 0);
    let lock_rel = "lockfiles/acme/report@1.0.0.lock.json";
    let old_lock = env.read(lock_rel);
    // The tool changes and is signed again elsewhere (a teammate's commit): the lockfile here
    // still pins the old text.
    env.write(
        "tools/acme/report.py",
        &tool(RUNTIME, "").replace("return {}", "return {\"v\": 2}"),
    );
    assert_code(&env.run(&["sign", "acme/report"]), 0);
    env.write(lock_rel, &old_lock);
    let o = env.run(&["lint", "--format=concise"]);
    assert_code(&o, 1);
    assert!(findings(&o)[0].ends_with("stale-lockfile"), "{}", out(&o));
    let o = env.run(&["lint", "--fix", "--format=concise"]);
    assert_code(&o, 0);
    assert!(
        err(&o).contains("fixed .ai/lockfiles/acme/report@1.0.0.lock.json (1 fix: stale-lockfile)"),
        "{}",
        err(&o)
    );
    assert_ne!(env.read(lock_rel), old_lock);
    assert_code(&env.run(&["exec", "acme/report", "--dry-run"]), 0);

    // Edited and not signed again: the lockfile would pin a text nobody signed; it is left.
    let refreshed = env.read(lock_rel);
    env.write(
        "tools/acme/report.py",
        &env.read("tools/acme/report.py")
            .replace("return {\"v\": 2}", "return {\"v\": 3}"),
    );
    let o = env.run(&["lint", "--fix", "--format=concise"]);
    assert_code(&o, 1);
    let left = findings(&o);
    assert!(
        left.iter().any(|f| f.ends_with("stale-lockfile"))
            && left.iter().any(|f| f.ends_with("content-hash-mismatch")),
        "{left:?}"
    );
    assert_eq!(env.read(lock_rel), refreshed);
}

#[test]
fn suppression_comments_of_each_file_type_take_out_their_own_line_only() {
    let env = Env::new();
    env.write(
        "tools/acme/py.py",
        &tool("acme/nowhere", "  # ryechain: ignore[missing-executor]"),
    );
    env.write(
        "tools/acme/sh.sh",
        "#!/bin/bash\n__version__=\"1.0.0\"\n__tool_type__=\"bash\"\n__executor_id__=\"acme/nowhere\"  # ryechain: ignore[missing-executor]\n__category__=\"acme\"\n__tool_description__=\"d\"\necho '{}'\n",
    );
    env.write(
        "tools/acme/rt.yaml",
        "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: acme/nowhere  # ryechain: ignore[missing-executor]\ncategory: acme\ndescription: \"d\"\nconfig:\n  command: /bin/true\n",
    );
    env.write(
        "tools/acme/js.js",
        "const __version__ = \"1.0.0\";\nconst __tool_type__ = \"javascript\";\nconst __executor_id__ = \"acme/nowhere\"; // ryechain: ignore[missing-executor, ambiguous-item]\nconst __category__ = \"acme\";\nconst __tool_description__ = \"d\";\nasync function execute(params) { return {}; }\nmodule.exports = { execute };\n",
    );
    env.write(
        "directives/acme/flow.md",
        "# Flow\n\n```xml\n<directive name=\"flow\"> <!-- ryechain: ignore[invalid-directive] -->\n  <metadata><description>d</description></metadata>\n</directive>\n```\n",
    );
    let o = lint(&env, &["--no-cache"]);
    // The JavaScript comment's second id suppresses nothing on its line.
    assert_eq!(
        findings(&o),
        [".ai/tools/acme/js.js:3:79: unused-suppression"],
        "{}",
        out(&o)
    );
    assert!(
        out(&o).contains("Unused suppression: no `ambiguous-item` finding starts on this line"),
        "{}",
        out(&o)
    );
    assert_code(&o, 0);
    // Ruff's semantics: a comment on the line above suppresses nothing.
    env.write(
        "tools/acme/py.py",
        &tool("acme/nowhere", "").replace(
            "__executor_id__",
            "# ryechain: ignore[missing-executor]\n__executor_id__",
        ),
    );
    // A misspelt id is named with the one meant.
    env.write(
        "tools/acme/rt.yaml",
        "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: acme/nowhere  # ryechain: ignore[missing-executer]\ncategory: acme\ndescription: \"d\"\nconfig:\n  command: /bin/true\n",
    );
    let o = lint(&env, &["--no-cache"]);
    assert_code(&o, 1);
    assert_eq!(
        findings(&o),
        [
            ".ai/tools/acme/js.js:3:79: unused-suppression",
            ".ai/tools/acme/py.py:5:20: unused-suppression",
            ".ai/tools/acme/py.py:6:19: missing-executor",
            ".ai/tools/acme/rt.yaml:3:14: missing-executor",
            ".ai/tools/acme/rt.yaml:3:47: unused-suppression",
        ],
        "{}",
        out(&o)
    );
    assert!(
        out(&o).contains(
            "Unused suppression: `missing-executer` is not a rule id; did you mean `missing-executor`?"
        ),
        "{}",
        out(&o)
    );
}

#[test]
fn per_file_ignores_turn_rules_off_in_the_files_a_glob_matches() {
    let env = Env::new();
    env.write("tools/acme/legacy/old.py", &tool("acme/nowhere", ""));
    env.write("tools/acme/thing_old.py", &tool("acme/nowhere", ""));
    env.write("tools/acme/new.py", &tool("acme/nowhere", ""));
    env.write(
        "config/ryechain.yaml",
        "lint:\n  per-file-ignores:\n    \".ai/tools/acme/legacy/**\": [missing-executor]\n    \"*_old.py\": [resolution]\n",
    );
    let o = lint(&env, &["--no-cache"]);
    assert_code(&o, 1);
    assert_eq!(
        findings(&o),
        [".ai/tools/acme/new.py:5:19: missing-executor"],
        "{}",
        out(&o)
    );
    // `ryechain config` shows the setting and where it was set.
    let o = env.run(&["config", "--format", "json"]);
    let cfg: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let setting = cfg["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "lint.per-file-ignores..ai/tools/acme/legacy/**")
        .unwrap_or_else(|| panic!("{cfg:#}"));
    assert_eq!(setting["value"], serde_json::json!(["missing-executor"]));
    assert_eq!(setting["origin"]["line"], 3, "{setting}");
    // An id there that is no rule is a config finding, with the id meant.
    env.write(
        "config/ryechain.yaml",
        "lint:\n  per-file-ignores:\n    \"*.py\": [missing-executr]\n",
    );
    let o = lint(&env, &["--no-cache"]);
    assert!(
        out(&o).contains(
            "`missing-executr` in `lint.per-file-ignores` (`*.py`) is not a rule id or family; did you mean `missing-executor`?"
        ),
        "{}",
        out(&o)
    );
}

/// A concise lint through the cache and without it, which must agree; the cache's own report.
fn cached_and_fresh(env: &Env) -> (Vec<String>, String) {
    let cached = env.run_env(&CONCISE, &[("RYECHAIN_CACHE_REPORT", "1")]);
    let fresh = lint(env, &["--no-cache"]);
    assert_eq!(out(&cached), out(&fresh), "the cache replays a fresh lint");
    assert_eq!(cached.status.code(), fresh.status.code());
    (findings(&fresh), err(&cached))
}

#[test]
fn the_cache_replays_suppressions_as_a_fresh_lint_reports_them() {
    let env = Env::new();
    env.write("tools/acme/a.py", &tool("acme/nowhere", ""));
    env.write("tools/acme/b.py", &tool(RUNTIME, ""));
    let (f, _) = cached_and_fresh(&env);
    assert_eq!(f, [".ai/tools/acme/a.py:5:19: missing-executor"]);
    // A comment added: the file is read again, its findings replaced.
    env.write(
        "tools/acme/a.py",
        &tool("acme/nowhere", "  # ryechain: ignore[missing-executor]"),
    );
    let (f, report) = cached_and_fresh(&env);
    assert!(f.is_empty(), "{f:?}");
    assert!(
        report.contains("cache: partial (1 files re-checked, 1 changed"),
        "{report}"
    );
    // Moved to the wrong line: both the finding and the idle comment.
    env.write(
        "tools/acme/a.py",
        &tool("acme/nowhere", "").replace(
            "__category__ = \"acme\"",
            "__category__ = \"acme\"  # ryechain: ignore[missing-executor]",
        ),
    );
    let (f, _) = cached_and_fresh(&env);
    assert_eq!(f.len(), 2, "{f:?}");
    // per-file-ignores (a config: a full run).
    env.write(
        "config/ryechain.yaml",
        "lint:\n  per-file-ignores:\n    \"a.py\": [missing-executor, unused-suppression]\n",
    );
    let (f, _) = cached_and_fresh(&env);
    assert!(f.is_empty(), "{f:?}");

    // An executor cycle, suppressed at the file it is reported at; when it is broken, the
    // comment suppresses nothing, through the cache as fresh.
    let env = Env::new();
    env.write(
        "tools/acme/x.py",
        &tool("acme/y", "  # ryechain: ignore[executor-cycle]"),
    );
    env.write("tools/acme/y.py", &tool("acme/x", ""));
    let (f, _) = cached_and_fresh(&env);
    assert!(f.is_empty(), "the cycle is suppressed: {f:?}");
    env.write("tools/acme/y.py", &tool(RUNTIME, ""));
    let (f, report) = cached_and_fresh(&env);
    assert_eq!(f, [".ai/tools/acme/x.py:5:48: unused-suppression"]);
    // Re-checked file by file: the comment's file reads the chain it is on (no cycle now).
    assert!(
        report.contains("cache: partial (2 files re-checked, 1 changed"),
        "{report}"
    );
    env.write("tools/acme/y.py", &tool("acme/x", ""));
    let (f, report) = cached_and_fresh(&env);
    assert!(f.is_empty(), "suppressed again: {f:?}");
    assert!(report.contains("cache: full run"), "{report}");
}

/// What lint no longer reports, `chain` and `sign` do not hold against the item either: one
/// voice for a suppressed finding.
#[test]
fn lint_chain_and_sign_agree_on_a_suppressed_finding() {
    let env = Env::new();
    assert_code(&env.run(&["keys", "generate"]), 0);
    env.write(
        "tools/acme/script.py",
        &SCRIPT.replace(
            "__tool_type__ = \"python\"",
            "__tool_type__ = \"python\"  # ryechain: ignore[unknown-primitive]",
        ),
    );
    assert_code(&lint(&env, &["--no-cache"]), 0);
    assert_code(&env.run(&["chain", "acme/script"]), 0);
    let o = env.run(&["sign", "acme/script"]);
    assert_code(&o, 0);
    // Without the comment, all three refuse it.
    env.write("tools/acme/script.py", SCRIPT);
    assert_code(&lint(&env, &["--no-cache"]), 1);
    assert_code(&env.run(&["chain", "acme/script"]), 1);
    let o = env.run(&["sign", "acme/script"]);
    assert_code(&o, 1);
    assert!(out(&o).contains("unknown-primitive"), "{}", out(&o));
}

/// SARIF carries the same fixes, each described by what it does (a code-scanning UI shows it).
#[test]
fn sarif_results_carry_the_fixes_with_their_titles() {
    let env = Env::new();
    fixable(&env);
    let o = env.run(&[
        "lint",
        "--ignore",
        "integrity",
        "--format",
        "sarif",
        "--no-cache",
    ]);
    assert_code(&o, 1);
    let log: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut titles: Vec<String> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["fixes"][0]["description"]["text"].as_str())
        .map(str::to_owned)
        .collect();
    titles.sort();
    assert_eq!(
        titles,
        [
            "Add `__executor_id__ = \"rye/core/runtimes/python/script\"`",
            "Add `__executor_id__ = \"rye/core/runtimes/python/script\"`",
            "Remove the unused suppression comment",
            "Replace with `rye/core/runtimes/python/script`",
        ]
    );
}
