//! The `lint` flags users of ruff and clippy reach for (`--statistics`, `--output-file`,
//! `--exit-zero`, `--quiet`, `--show-files`), shell completions, the man page and the
//! pre-commit hook, run by the built binary on the bundled example tree (10 findings: 7 errors,
//! 3 warnings, one of them in a user-space file no project tool uses, which `lint` leaves out
//! unless `--space` asks; exit 1).
#![allow(
    clippy::disallowed_methods,
    reason = "the test runs the binary and reads the files it writes"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(extra: &[&str]) -> Output {
    run_with_user("examples/user", extra)
}

fn run_with_user(user_space: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args([
            "lint",
            "examples/project",
            "--user-space",
            user_space,
            "--no-progress",
        ])
        .args(extra)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env_remove("RYE_SYSTEM_SPACE")
        .output()
        .unwrap()
}

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const SUMMARY: &str = "Found 6 errors and 3 warnings in 7 files (46 tools checked across the \
                       project, user and system spaces). 1 finding in user-space files no \
                       project-space tool uses is not shown (`--space project,user` shows it).";

#[test]
fn the_example_tree_as_a_baseline() {
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(out(&o).lines().last(), Some(SUMMARY));
}

#[test]
fn statistics_count_findings_per_rule() {
    let o = run(&["--statistics", "--space", "all"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let text = out(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "2  missing-executor       error    An executor id that resolves to no file the element may see",
            "2  unsigned-item          warning  A tool, directive or knowledge item without a signature line",
        ]
    );
    assert_eq!(lines.len(), 8, "{text}");
    let total: usize = lines
        .iter()
        .map(|l| {
            l.split_whitespace()
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(total, 10);
    assert!(!text.contains("-->"), "no findings printed: {text}");
    // Ties are sorted by rule id.
    assert!(lines[2].contains("content-hash-mismatch"), "{text}");
}

#[test]
fn statistics_as_json_and_not_with_sarif() {
    let o = run(&["--statistics", "--format", "json", "--space", "all"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0]["rule"], "missing-executor");
    assert_eq!(rows[0]["count"], 2);
    assert_eq!(rows[0]["severity"], "error");
    let total: u64 = rows.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    assert_eq!(total, 10);

    let o = run(&["--statistics", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("cannot be combined with `--format sarif`"));
    assert!(o.stdout.is_empty());
}

#[test]
fn output_file_takes_the_report_instead_of_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let human = dir.path().join("report.txt");
    let o = run(&["--output-file", human.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let text = std::fs::read_to_string(&human).unwrap();
    assert_eq!(text.lines().last(), Some(SUMMARY));
    assert!(!text.contains('\u{1b}'), "no colour in a file");

    let sarif = dir.path().join("ryechain.sarif");
    let o = run(&["--format", "sarif", "-o", sarif.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 9);
    // Issue 35 item 16: every rule carries a `helpUri`, the rule file whose docs are its page.
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(!rules.is_empty());
    for rule in rules {
        let uri = rule["helpUri"].as_str().unwrap_or_default();
        let rel = uri
            .strip_prefix("https://github.com/ryechain/ryechain/blob/main/")
            .unwrap_or_else(|| panic!("{rule}"));
        assert!(
            rel.ends_with(&format!("/{}.yaml", rule["id"].as_str().unwrap())),
            "{uri}"
        );
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(rel).is_file(),
            "{uri}"
        );
    }

    let o = run(&["--output-file", "/nonexistent-dir/report.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).starts_with("error: cannot write the report to /nonexistent-dir/report.txt: "),
        "{}",
        err(&o)
    );
}

#[test]
fn exit_zero_keeps_the_report_and_exits_0() {
    let o = run(&["--exit-zero"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(out(&o).lines().last(), Some(SUMMARY));
    // Usage errors still exit 2.
    let o = run(&["--exit-zero", "--select", "no-such-rule"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn quiet_prints_only_the_findings() {
    // The user space given as the project itself: a setup notice on stderr without --quiet.
    let loud = run_with_user("examples/project", &[]);
    assert!(err(&loud).starts_with("warning: the user space is the project directory"));
    assert!(out(&loud).contains("Found "));

    let o = run_with_user("examples/project", &["--quiet"]);
    assert_eq!(o.status.code(), loud.status.code());
    assert_eq!(err(&o), "");
    let text = out(&o);
    assert!(!text.contains("Found "), "{text}");
    assert!(text.contains("error[executor-cycle]"), "{text}");
    // The findings are the same as without --quiet, less the summary.
    let loud_text = out(&loud);
    assert!(loud_text.starts_with(text.trim_end()), "{text}");

    // A clean run prints nothing at all.
    let o = run(&["--quiet", "--select", "ambiguous-item"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(out(&o), "");
    let o = run(&["--select", "ambiguous-item"]);
    assert_eq!(
        out(&o),
        "All checks passed (46 tools checked across the project, user and system spaces).\n"
    );
}

/// Issue 35 item 10: a broken personal tool in the user space that no project tool uses does
/// not fail the project's lint; `--space user` (or `all`) reports it, and a user-space runtime
/// a project tool runs through is reported either way.
#[test]
fn a_user_tool_no_project_tool_uses_is_left_out_unless_asked_for() {
    let user_tool = "examples/user/.ai/tools/personal/notes/sync_notes.py";
    let concise = |extra: &[&str]| {
        let mut args = vec!["--output-format", "concise", "-q"];
        args.extend_from_slice(extra);
        let o = run(&args);
        (o.status.code(), out(&o))
    };
    let (code, text) = concise(&[]);
    assert_eq!(code, Some(1));
    assert!(!text.contains(user_tool), "{text}");
    assert_eq!(text.lines().count(), 9, "{text}");
    for asked in [&["--space", "project,user"][..], &["--space", "all"]] {
        let (_, text) = concise(asked);
        assert!(
            text.lines()
                .any(|l| l.contains(user_tool) && l.contains("missing-executor")),
            "{asked:?}: {text}"
        );
        assert_eq!(text.lines().count(), 10, "{asked:?}: {text}");
    }
    // Only the user space: the project's own findings are left out, and said so.
    let (code, text) = concise(&["--space", "user"]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains(user_tool), "{text}");
    let o = run(&["--space", "user"]);
    let text = out(&o);
    assert!(
        text.trim_end().ends_with(
            "9 findings in project-space files no user-space tool uses are not shown \
             (`--space project,user` shows them)."
        ),
        "{text}"
    );
    // The JSON summary says the same.
    let o = run(&["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["hidden"], 1);
    assert_eq!(v["summary"]["hidden_spaces"], serde_json::json!(["user"]));
    assert_eq!(
        v["summary"]["spaces"],
        serde_json::json!(["project", "user", "system"])
    );
    // A bad --space value is a usage error.
    let o = run(&["--space", "users"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("possible values"), "{}", err(&o));
}

/// Issue 30 item 10: the findings' paths are relative to the project root whatever the
/// working directory, as cargo's are relative to its workspace.
#[test]
fn paths_are_relative_to_the_project_root_from_any_working_directory() {
    let lint_from = |cwd: &Path, project: &Path| {
        let o = Command::new(env!("CARGO_BIN_EXE_ryechain"))
            .arg("lint")
            .arg(project)
            .args(["--user-space"])
            .arg(repo().join("examples/user"))
            .args(["--no-progress", "--no-cache", "--format", "json"])
            .current_dir(cwd)
            .env("NO_COLOR", "1")
            .env_remove("RYE_SYSTEM_SPACE")
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let project = repo().join("examples/project");
    let from_repo = lint_from(&repo(), &project);
    let from_inside = lint_from(&project.join(".ai/tools"), &project);
    let from_tmp = lint_from(&std::env::temp_dir(), &project);
    assert!(from_repo.contains("\"path\": \".ai/tools/"), "{from_repo}");
    assert_eq!(from_repo, from_inside);
    assert_eq!(from_repo, from_tmp);
}

#[test]
fn show_files_lists_what_would_be_checked() {
    let o = run(&["--show-files"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    let lines: Vec<&str> = text.lines().collect();
    // Relative to the project root (not the working directory); outside it, in full.
    assert!(
        lines.contains(&".ai/tools/acme/data/csv_profile.py"),
        "{text}"
    );
    let user = repo().join("examples/user/.ai/tools/personal/notes/sync_notes.py");
    assert!(lines.contains(&user.to_str().unwrap()), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("<embedded:ryechain>/.ai/tools/rye/core/")),
        "{text}"
    );
    let mut sorted = lines.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(lines, sorted, "sorted, each once");
    assert!(!text.contains("error["), "nothing is checked");
}

#[test]
fn completions_for_every_shell() {
    for (shell, marker) in [
        ("bash", "_ryechain()"),
        ("zsh", "#compdef ryechain"),
        ("fish", "complete -c ryechain"),
        ("elvish", "edit:completion:arg-completer[ryechain]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = bin(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let text = out(&o);
        assert!(text.contains(marker), "{shell}: {marker}");
        assert!(text.contains("show-files"), "{shell} completes lint flags");
    }
    let o = bin(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn man_page_in_roff() {
    let o = bin(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    let text = out(&o);
    assert!(text.contains(".TH ryechain 1"), "{text}");
    assert!(text.contains(".SH SUBCOMMANDS"), "{text}");
    assert!(text.contains("ryechain\\-lint"), "{text}");
}

#[test]
fn pre_commit_hook_runs_lint_on_ai_trees() {
    let text = std::fs::read_to_string(repo().join(".pre-commit-hooks.yaml")).unwrap();
    let hooks: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let hook = &hooks[0];
    assert_eq!(hook["id"].as_str(), Some("ryechain"));
    assert_eq!(hook["language"].as_str(), Some("rust"));
    assert_eq!(hook["entry"].as_str(), Some("ryechain lint"));
    assert_eq!(hook["pass_filenames"].as_bool(), Some(false));
    assert!(hook["files"].as_str().unwrap().contains(r"\.ai/"), "{text}");
}

#[test]
fn readme_shows_the_ci_setup() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(text.contains("ryechain lint --format sarif --output-file ryechain.sarif"));
    assert!(text.contains("github/codeql-action/upload-sarif"));
    assert!(text.contains("sarif_file: ryechain.sarif"));
}

/// Issue 30 item 10: a bundle's own repository linted as the project with itself as the system
/// space is read once, as the project: no "symlink into the system space", no space violation
/// between its own files, no item counted twice.
#[test]
fn a_project_that_is_also_the_system_space_is_loaded_once() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().canonicalize().unwrap().join("bundle");
    let tools = bundle.join(".ai/tools");
    std::fs::create_dir_all(tools.join("acme")).unwrap();
    std::fs::write(
        tools.join("acme/rt.yaml"),
        "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: acme/prim\n",
    )
    .unwrap();
    std::fs::write(
        tools.join("acme/prim.yaml"),
        "version: \"1.0.0\"\ntool_type: primitive\nexecutor_id: rye/core/primitives/subprocess\n",
    )
    .unwrap();
    // The bundle's extractors (they make `.yaml` a tool extension), as every bundle has them.
    let extractors = repo().join(".ai/tools/rye/core/extractors");
    let mut files = 2;
    for kind in ["tool", "directive", "knowledge"] {
        let to = tools.join("rye/core/extractors").join(kind);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(extractors.join(kind)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            files += 1;
        }
    }
    let user = tmp.path().join("user");
    std::fs::create_dir_all(user.join(".ai")).unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_ryechain"))
            .args(args)
            .arg(&bundle)
            .arg("--system-space")
            .arg(&bundle)
            .arg("--user-space")
            .arg(&user)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    let (out, err) = run(&["lint", "--no-cache", "--ignore", "integrity"]);
    assert!(
        err.contains("is the project directory; it is loaded once, as the project"),
        "{err}"
    );
    assert!(
        out.contains(&format!(
            "({files} tools checked across the project and user spaces)"
        )),
        "{out}"
    );
    let (out, _) = run(&["chain", "acme/rt"]);
    assert!(!out.contains("symlink"), "{out}");
    assert!(out.contains("acme/rt (project)"), "{out}");
}

/// Issue 35 item 1: the project is found as cargo finds `Cargo.toml` — the nearest folder up
/// that holds `.ai/` — so a command run in a subfolder checks the project, and a folder with no
/// `.ai/` anywhere up is an error (exit 2) for every command that needs a project, never
/// "All checks passed" over the embedded bundle alone.
#[test]
fn the_project_is_found_upwards_and_its_absence_is_an_error() {
    let run_in = |cwd: &Path, args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_ryechain"))
            .args(args)
            .arg("--user-space")
            .arg(repo().join("examples/user"))
            .current_dir(cwd)
            .env("NO_COLOR", "1")
            .env_remove("RYE_SYSTEM_SPACE")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    let project = repo().join("examples/project");
    let lint = ["lint", "--no-cache", "--format", "json"];
    let from_root = run_in(&project, &lint);
    let from_sub = run_in(&project.join(".ai/tools/acme"), &lint);
    assert_eq!(from_root.1, from_sub.1);
    assert!(
        from_root.1.contains("\"path\": \".ai/tools/"),
        "{}",
        from_root.1
    );

    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().canonicalize().unwrap();
    let want = format!(
        "could not find `.ai/` in {} or any parent directory",
        empty.display()
    );
    for args in [
        &["lint"][..],
        &["exec", "acme/x"],
        &["chain", "acme/x"],
        &["verify"],
        &["sign", "acme/x"],
        &["lock", "acme/x"],
    ] {
        let (code, out, err) = run_in(&empty, args);
        assert_eq!(code, Some(2), "{args:?}: {out}\n{err}");
        assert!(err.contains(&want), "{args:?}: {err}");
        assert!(!out.contains("All checks passed"), "{args:?}: {out}");
    }
}

/// Did-you-mean where a rule is named (issue 35 item 13): a misspelt rule id in `--select` or
/// `rule` names the rule meant; a name near nothing names nothing; a family is suggested only
/// where families are accepted.
#[test]
fn misspelt_rule_ids_are_answered_with_the_rule_meant() {
    let out = run(&["--select", "missing-executer"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did you mean `missing-executor`?"), "{err}");
    let out = run(&["--ignore", "integrty"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean `integrity`?"), "{err}");
    let out = run(&["--select", "zzzzzzzz"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("did you mean"), "{err}");
    let out = bin(&["rule", "unknown-primitiv"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did you mean `unknown-primitive`?"), "{err}");
}

/// Words other tools use for a command point at ryechain's (`run` → `exec`, `check` → `lint`),
/// as a usage error.
#[test]
fn other_tools_command_words_point_at_ours() {
    for (word, ours) in [("run", "exec"), ("check", "lint"), ("validate", "lint")] {
        let out = bin(&[word, "x"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{word}: {err}");
        assert!(
            err.contains(&format!("the command for that is `ryechain {ours}`")),
            "{word}: {err}"
        );
    }
    let out = bin(&["frobnicate"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(!err.contains("the command for that"), "{err}");
}

/// Issue 35 item 10 through the lint cache: a cold run, the replay of an unchanged tree and a
/// re-check after an edit that brings a user runtime into use (the runtime itself untouched)
/// each report what `--no-cache` reports, in every scope.
#[test]
fn the_cache_scopes_its_findings_as_a_full_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let user = dir.path().join("user");
    let tools = project.join(".ai/tools/acme");
    let team = user.join(".ai/tools/team");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(&team).unwrap();
    let tool = |executor: &str| {
        format!(
            "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"{executor}\"\n__category__ = \"x\"\n"
        )
    };
    let b = tools.join("b.py");
    std::fs::write(&b, tool("rye/core/runtimes/python/script")).unwrap();
    std::fs::write(team.join("rt.py"), tool("rye/core/runtimes/nope")).unwrap();
    std::fs::write(team.join("alone.py"), tool("rye/core/runtimes/nope")).unwrap();
    let lint = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_ryechain"))
            .args(["lint", "--no-progress", "--ignore", "integrity"])
            .args(["--output-format", "concise"])
            .args(extra)
            .arg("--user-space")
            .arg(&user)
            .arg(&project)
            .env("RYECHAIN_CACHE_DIR", dir.path().join("cache"))
            .env("RYECHAIN_CACHE_REPORT", "1")
            .env_remove("RYE_SYSTEM_SPACE")
            .output()
            .unwrap();
        (out(&o), err(&o))
    };
    for scope in ["project", "user", "all"] {
        for (step, executor) in [(0, "rye/core/runtimes/python/script"), (1, "team/rt")] {
            std::fs::write(&b, tool(executor)).unwrap();
            let (fresh, _) = lint(&["--space", scope, "--no-cache"]);
            let (first, how) = lint(&["--space", scope]);
            assert_eq!(first, fresh, "{scope} step {step} ({how})");
            let (again, how) = lint(&["--space", scope]);
            assert!(how.contains("cache: "), "{how}");
            assert_eq!(again, fresh, "{scope} step {step}, replayed ({how})");
            let shows = |name: &str| fresh.lines().any(|l| l.contains(name));
            match scope {
                "project" => {
                    assert_eq!(shows("team/rt.py"), step == 1, "{fresh}");
                    assert!(!shows("alone.py"), "{fresh}");
                }
                _ => assert!(shows("team/rt.py") && shows("alone.py"), "{fresh}"),
            }
        }
    }
}
