//! A temporary project beside a home directory (its user space) for the tests that drive the
//! `ryechain` binary end to end, and the check for the official MCP Python SDK they run against.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

/// `ryechain <args>` in `cwd` with `home` as the home directory (the user space), nothing of the
/// caller's spaces or signing key inherited.
pub fn command_in(cwd: &Path, home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("USER_SPACE")
        .env_remove("RYE_SYSTEM_SPACE")
        .env_remove("RYE_SIGNING_KEY_DIR")
        .stdin(Stdio::null());
    cmd
}

/// [`command_in`] run to its end, which must succeed.
pub fn ryechain_in(cwd: &Path, home: &Path, args: &[&str]) -> Output {
    let out = command_in(cwd, home, args)
        .output()
        .expect("spawn ryechain");
    assert!(
        out.status.success(),
        "ryechain {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A temporary directory holding `home/` (the user space) and a project folder.
pub struct TempProject {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub dir: PathBuf,
}

impl TempProject {
    /// Empty `home/` and `<project>/` folders, nothing run in them yet.
    pub fn empty(project: &str) -> TempProject {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let dir = tmp.path().join(project);
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        TempProject { tmp, home, dir }
    }

    /// `ryechain init` in `proj/` and a fresh key in the user space, trusted there (as
    /// `ryechain keys generate` leaves it).
    pub fn keyed() -> TempProject {
        let p = TempProject::empty("proj");
        p.cli(&["init"]);
        p.cli(&["keys", "generate"]);
        p
    }

    /// `ryechain <args>` in the project.
    pub fn command(&self, args: &[&str]) -> Command {
        command_in(&self.dir, &self.home, args)
    }

    /// `ryechain <args>` in the project, which must succeed.
    pub fn cli(&self, args: &[&str]) -> Output {
        ryechain_in(&self.dir, &self.home, args)
    }

    /// Write `rel` (relative to the project folder), its folders made as needed.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The project folder as a string, for JSON arguments.
    pub fn path_str(&self) -> String {
        self.dir.display().to_string()
    }
}

/// A missing MCP peer: a failure where one is required (`RYECHAIN_REQUIRE_MCP_CLIENTS=1`, set by
/// `.ci/run`, or `CI=true`), otherwise a skip that says why.
pub fn mcp_missing(what: &str, how: &str) {
    let required = std::env::var("RYECHAIN_REQUIRE_MCP_CLIENTS").is_ok_and(|v| v == "1")
        || std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(!required, "{what} is required here but missing: {how}");
    eprintln!("skipped: {what} is not installed ({how})");
}

/// The virtualenv's python that `.ci/run` installs the official MCP Python SDK into.
pub fn mcp_venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv/bin/python")
}

/// That python when it can import `module` of the SDK; otherwise [`mcp_missing`] and `None`.
pub fn mcp_sdk(module: &str) -> Option<PathBuf> {
    let python = mcp_venv_python();
    let ok = python.exists()
        && Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    mcp_missing(
        "the MCP Python SDK",
        "python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install mcp==2.3.0",
    );
    None
}
