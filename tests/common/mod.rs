//! Helpers shared by the integration tests that copy fixture trees to temp dirs and edit them.
#![allow(
    clippy::disallowed_methods,
    reason = "tests copy and walk their trees on disk"
)]
#![allow(dead_code, reason = "each test binary uses its own part of these")]

use std::path::{Path, PathBuf};

/// Copy a directory tree, symlinks as symlinks.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let ty = entry.file_type().unwrap();
        if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if ty.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Every regular file under `dir` (sorted, symlinks not followed), and every symlink.
pub fn entries_under(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut links) = (Vec::new(), Vec::new());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_file() {
                files.push(e.path());
            } else if ty.is_symlink() {
                links.push(e.path());
            }
        }
    }
    files.sort();
    links.sort();
    (files, links)
}

/// Every regular file under `dir` (sorted), skipping symlinks.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    entries_under(dir).0
}

use ryechain::analysis::{Host, LintOptions, LintReport};
use ryechain::db::Settings;
use ryechain::load::{SpaceSpec, load};
use ryechain::system::os::OsSystem;

/// Paths shown relative to `base`.
pub fn opts(base: &Path) -> LintOptions {
    LintOptions {
        display_base: Some(base.to_path_buf()),
    }
}

/// The spaces loaded afresh into a new host.
pub fn loaded(specs: &[SpaceSpec], settings: &Settings) -> Host {
    let mut change = load(&OsSystem, specs).change;
    change.settings = Some(settings.clone());
    let mut host = Host::new();
    host.apply(change);
    host
}

/// The settings that run every rule, opt-in ones too.
pub fn every_rule() -> Settings {
    Settings {
        select: Some(vec!["ALL".to_owned(), "unrunnable-item".to_owned()]),
        ..Settings::default()
    }
}

/// The names of the rule fixture folders under `root` (each with a `project/`), sorted.
pub fn fixture_dirs(root: &Path) -> Vec<String> {
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("project").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

/// Two reports of the same tree are the same: totals, internal errors and findings (`a` and `b`
/// name them in the message).
pub fn assert_same_reports(what: &str, (a, ra): (&str, &LintReport), (b, rb): (&str, &LintReport)) {
    assert_eq!(ra.summary, rb.summary, "{what}: summary");
    assert_eq!(
        ra.internal_errors, rb.internal_errors,
        "{what}: internal errors"
    );
    if ra.findings != rb.findings {
        let show = |r: &LintReport| {
            r.findings
                .iter()
                .map(|f| format!("{} {}:{} {}", f.rule, f.path, f.line, f.message))
                .collect::<Vec<_>>()
        };
        panic!(
            "{what}: {a} and {b} findings differ\n{a}: {:#?}\n{b}: {:#?}",
            show(ra),
            show(rb)
        );
    }
}

/// Whether the process is gone (absent, or a zombie waiting for its parent to reap it).
pub fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// Wait (a bounded while) for processes killed by SIGKILL to disappear.
pub fn all_gone(pids: &[u32]) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if pids.iter().all(|&p| gone(p)) {
            return true;
        }
        if std::time::Instant::now() > until {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Sleeps a test started, by pid (one a line): killed when the test ends, pass or fail, while
/// still a `sleep` (never a process that reused the number), so none leaks.
pub struct Sleeps(pub Vec<u32>);

impl Sleeps {
    pub fn from_lines(bytes: &[u8]) -> Sleeps {
        Sleeps(
            String::from_utf8_lossy(bytes)
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect(),
        )
    }
    pub fn from_file(path: &Path) -> Sleeps {
        Sleeps::from_lines(&std::fs::read(path).unwrap_or_default())
    }
    /// Whether every one is gone, allowing a short while for the kernel to finish a kill.
    pub fn all_gone(&self) -> bool {
        all_gone(&self.0)
    }
}

impl Drop for Sleeps {
    fn drop(&mut self) {
        for &pid in &self.0 {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if !gone(pid) && cmdline.starts_with(b"sleep") {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
}

pub mod project;
