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
    // SAFETY: sending a signal to the child we spawned.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    until(&rx, &["stopped watching"]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}
