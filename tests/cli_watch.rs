//! `ryechain lint --watch` as a user runs it: the first report, then a file created with a typo
//! in its executor id is reported as new, its fix as fixed, a deleted file's findings as fixed, a
//! runtime's edit re-checks the tools that run on it and a config file everything, and Ctrl-C (SIGINT) ends the watch cleanly with exit code 0.
#![allow(
    clippy::disallowed_methods,
    reason = "the test spawns the binary and edits files on disk"
)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn tool(executor: &str) -> String {
    format!(
        "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"{executor}\"\n__category__ = \"acme\"\n"
    )
}

/// Lines until one contains every needle (panics after 30 s), returned with what came before.
fn until(rx: &mpsc::Receiver<String>, needles: &[&str]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lines = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no line with {needles:?}; got {lines:#?}"));
        let done = needles.iter().all(|n| line.contains(n));
        lines.push(line);
        if done {
            return lines;
        }
    }
}

#[test]
fn watch_reports_new_and_fixed_findings_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let user = dir.path().join("user");
    let tools = project.join(".ai/tools/acme");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(user.join(".ai")).unwrap();
    std::fs::write(tools.join("ok.py"), tool("rye/core/runtimes/python/script")).unwrap();
    let target = tools.join("target.py");
    std::fs::write(&target, tool("rye/core/primitives/subprocess")).unwrap();
    let team = user.join(".ai/tools/team");
    std::fs::create_dir_all(&team).unwrap();
    std::os::unix::fs::symlink(&target, team.join("linked.py")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args([
            "lint",
            "--watch",
            "--no-progress",
            "--ignore",
            "integrity",
            // The links in the user space are tools no project tool uses: reported when asked.
            "--space",
            "all",
            "--user-space",
        ])
        .arg(&user)
        .arg(&project)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    until(&rx, &["watching", "project/.ai"]);

    std::fs::write(
        tools.join("typo.py"),
        tool("rye/core/runtimes/python/scirpt"),
    )
    .unwrap();
    let lines = until(&rx, &["+ ", "typo.py", "missing-executor"]);
    assert!(
        lines.iter().any(|l| l.contains("1 new, 0 fixed")),
        "{lines:#?}"
    );

    std::fs::write(
        tools.join("typo.py"),
        tool("rye/core/runtimes/python/script"),
    )
    .unwrap();
    let lines = until(&rx, &["- ", "typo.py", "missing-executor"]);
    assert!(
        lines.iter().any(|l| l.contains("0 new, 1 fixed")),
        "{lines:#?}"
    );

    std::fs::write(tools.join("gone.py"), tool("acme/nowhere")).unwrap();
    until(&rx, &["+ ", "gone.py", "missing-executor"]);
    std::fs::remove_file(tools.join("gone.py")).unwrap();
    until(&rx, &["- ", "gone.py", "missing-executor"]);

    // A runtime's edit re-checks the tools that run on it, and only them.
    std::fs::write(tools.join("rt.py"), tool("rye/core/primitives/subprocess")).unwrap();
    until(&rx, &["1 file(s) changed, 1 re-checked"]);
    std::fs::write(tools.join("uses.py"), tool("acme/rt")).unwrap();
    until(&rx, &["1 file(s) changed, 1 re-checked"]);
    std::fs::write(tools.join("rt.py"), tool("acme/nowhere")).unwrap();
    let lines = until(&rx, &["+ ", "rt.py", "missing-executor"]);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("1 file(s) changed, 2 re-checked")),
        "{lines:#?}"
    );

    // A link in another space to a file that changes is read again with it (the watcher reports
    // only the target's path): one made before the watch started, one made in a new folder while
    // watching (the folder's event may come alone, before a watch on it could see the link).
    let later = user.join(".ai/tools/later");
    std::fs::create_dir_all(&later).unwrap();
    std::os::unix::fs::symlink(&target, later.join("linked_later.py")).unwrap();
    until(&rx, &["file(s) changed"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(&target, tool("acme/elsewhere")).unwrap();
    // Printed sorted by path: the team folder's link last.
    let lines = until(&rx, &["+ ", "team/linked.py", "missing-executor"]);
    assert!(
        lines.iter().any(|l| l.contains("3 file(s) changed")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("+ ")
            && l.contains("later/linked_later.py")
            && l.contains("missing-executor")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("+ ") && l.contains("target.py") && l.contains("missing-executor")),
        "{lines:#?}"
    );

    // A config file can move every finding: everything is checked again.
    let config = project.join(".ai/config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("ryechain.yaml"),
        "lint:\n  ignore: [missing-executor]\n",
    )
    .unwrap();
    let lines = until(&rx, &["- ", "rt.py", "missing-executor"]);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("(everything: .ai/config/ryechain.yaml was added)")),
        "{lines:#?}"
    );

    let pid = i32::try_from(child.id()).unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    until(&rx, &["stopped watching"]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// The findings of a JSON report or delta as comparable keys (path, rule, message, severity).
fn keys(list: &serde_json::Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            format!(
                "{} {} {} {}",
                d["path"], d["rule"], d["message"], d["severity"]
            )
        })
        .collect()
}

/// Suppression comments and `lint.per-file-ignores` (issue 35 item 11) change what `--watch`
/// reports exactly as they change a one-shot lint of the same tree: after each batch, the first
/// report with every delta applied equals a fresh `lint --format json --no-cache`.
#[test]
fn watch_follows_suppressions_as_a_one_shot_lint_does() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let user = dir.path().join("user");
    let tools = project.join(".ai/tools/acme");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(user.join(".ai")).unwrap();
    std::fs::write(tools.join("a.py"), tool("acme/nowhere")).unwrap();
    std::fs::write(tools.join("b.py"), tool("rye/core/runtimes/python/script")).unwrap();
    // A broken user runtime no project tool uses yet, and a broken user tool none ever uses
    // (issue 35 item 10): left out until b.py runs on the runtime.
    let team = user.join(".ai/tools/team");
    std::fs::create_dir_all(&team).unwrap();
    let user_rt = team.join("rt.py");
    std::fs::write(&user_rt, tool("rye/core/runtimes/nope")).unwrap();
    std::fs::write(team.join("alone.py"), tool("rye/core/runtimes/nope")).unwrap();
    let lint = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ryechain"));
        c.args([
            "lint",
            "--no-progress",
            "--ignore",
            "integrity",
            "--format",
            "json",
        ])
        .args(extra)
        .arg("--user-space")
        .arg(&user)
        .arg(&project)
        .current_dir(dir.path());
        c
    };
    let one_shot = || {
        let o = lint(&["--no-cache"]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut k = keys(&v["diagnostics"]);
        k.sort();
        k
    };
    let mut child = lint(&["--watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The first report is one pretty-printed object; each batch then is one line.
    let first = until(&rx, &["}"]);
    let mut first = first;
    while first.last().map(String::as_str) != Some("}") {
        first.extend(until(&rx, &["}"]));
    }
    let report: serde_json::Value = serde_json::from_str(&first.join("\n")).unwrap();
    let mut model = keys(&report["diagnostics"]);
    model.sort();
    assert_eq!(model, one_shot());
    // The watcher is set up after the report is printed.
    std::thread::sleep(Duration::from_millis(500));
    assert!(!model.iter().any(|k| k.contains("team/")), "{model:#?}");
    let a = tools.join("a.py");
    let b = tools.join("b.py");
    let steps: Vec<(&std::path::Path, String)> = vec![
        // b.py now runs on the user's broken runtime: its findings are shown, the file untouched.
        (&b, tool("team/rt")),
        // The runtime, in use, is edited.
        (&user_rt, tool("rye/core/runtimes/nope2")),
        // No longer used: its findings go.
        (&b, tool("rye/core/runtimes/python/script")),
        // Suppressed on its line.
        (
            &a,
            tool("acme/nowhere").replace(
                "acme/nowhere\"",
                "acme/nowhere\"  # ryechain: ignore[missing-executor]",
            ),
        ),
        // On the wrong line: the finding again, and the idle comment.
        (
            &a,
            tool("acme/nowhere").replace(
                "__category__ = \"acme\"",
                "__category__ = \"acme\"  # ryechain: ignore[missing-executr]",
            ),
        ),
    ];
    let config = project.join(".ai/config/ryechain.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let configs = [
        "lint:\n  per-file-ignores:\n    \"a.py\": [missing-executor]\n",
        "lint:\n  per-file-ignores:\n    \"*.py\": [ALL]\n",
        "lint: {}\n",
    ];
    let apply = |model: &mut Vec<String>, line: &str| {
        let delta: serde_json::Value = serde_json::from_str(line).unwrap();
        for gone in keys(&delta["fixed"]) {
            let at = model
                .iter()
                .position(|k| *k == gone)
                .expect("a fixed finding was reported");
            model.remove(at);
        }
        model.extend(keys(&delta["new"]));
        model.sort();
    };
    for (path, text) in steps {
        std::fs::write(path, text).unwrap();
        // A write the watcher saw in two batches (truncated, then written) is two lines.
        let lines = until(&rx, &["\"changed_files\""]);
        apply(&mut model, lines.last().unwrap());
        while model != one_shot() {
            match rx.recv_timeout(Duration::from_secs(3)) {
                Ok(line) if line.contains("\"changed_files\"") => apply(&mut model, &line),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        assert_eq!(model, one_shot(), "after {}", path.display());
        assert!(!model.iter().any(|k| k.contains("alone.py")), "{model:#?}");
        if path == b.as_path() || path == user_rt.as_path() {
            let in_use = std::fs::read_to_string(&b).unwrap().contains("team/rt");
            assert_eq!(
                model.iter().any(|k| k.contains("team/rt.py")),
                in_use,
                "after {}: {model:#?}",
                path.display()
            );
        }
    }
    for text in configs {
        std::fs::write(&config, text).unwrap();
        // A write the watcher saw in two batches (truncated, then written) is two lines.
        let lines = until(&rx, &["\"changed_files\""]);
        apply(&mut model, lines.last().unwrap());
        while model != one_shot() {
            match rx.recv_timeout(Duration::from_secs(3)) {
                Ok(line) if line.contains("\"changed_files\"") => apply(&mut model, &line),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        assert_eq!(model, one_shot(), "after {text}");
    }
    let pid = i32::try_from(child.id()).unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
