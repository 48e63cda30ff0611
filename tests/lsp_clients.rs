//! `ryechain lsp` end to end with real clients nobody on the project wrote: pytest-lsp (PyPI,
//! in the virtualenv `.ci/run` makes at `target/lsp-venv`) drives open/edit/quick fix/hover/
//! definition/completion/symbols with VS Code's and Neovim's capabilities; Neovim headless
//! (Debian's `neovim`, 0.7) receives the diagnostics of a fixture workspace.
//!
//! Without the clients these tests skip and say why, unless `RYECHAIN_REQUIRE_LSP_CLIENTS=1`
//! (set by `.ci/run`), which turns a missing client into a failure.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests spawn the clients and write a fixture workspace"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

fn missing(what: &str, how: &str) {
    let required = std::env::var("RYECHAIN_REQUIRE_LSP_CLIENTS").is_ok_and(|v| v == "1");
    assert!(!required, "{what} is required here but missing: {how}");
    eprintln!("skipped: {what} is not installed ({how})");
}

/// Whether Neovim is installed (a missing one is a skip that says why, or a failure under CI).
fn have_nvim() -> bool {
    let found = Command::new("nvim")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        missing("Neovim", "apt-get install neovim");
    }
    found
}

fn venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lsp-venv/bin/python")
}

#[test]
fn pytest_lsp_drives_open_edit_fix_hover_definition_completion_and_symbols() {
    let python = venv_python();
    let has_pytest_lsp = python.exists()
        && Command::new(&python)
            .args(["-c", "import pytest_lsp"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !has_pytest_lsp {
        missing(
            "pytest-lsp",
            "python3 -m venv target/lsp-venv && target/lsp-venv/bin/pip install pytest-lsp==1.0.1",
        );
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp_clients");
    let out = Command::new(&python)
        .current_dir(&dir)
        .env("RYECHAIN_BIN", BIN)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "test_pytest_lsp.py",
        ])
        .output()
        .expect("pytest runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pytest-lsp failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("4 passed"), "{text}");
}

#[test]
fn neovim_headless_receives_the_diagnostics_of_a_fixture_workspace() {
    if !have_nvim() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let user = dir.path().join("user");
    let tool = project.join(".ai/tools/acme/digest.py");
    std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
    std::fs::create_dir_all(user.join(".ai")).unwrap();
    std::fs::write(
        &tool,
        "\"\"\"A tool.\"\"\"\n\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/scirpt\"\n__category__ = \"acme\"\n__tool_description__ = \"d\"\n",
    )
    .unwrap();
    // A sound neighbour whose diagnostics must not leak into the opened buffer.
    std::fs::write(
        project.join(".ai/tools/acme/ok.py"),
        "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\n",
    )
    .unwrap();
    let out_file = dir.path().join("out.txt");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp_clients/nvim_diagnostics.lua");
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("RYECHAIN_BIN", BIN)
        .env("RYECHAIN_ROOT", &project)
        .env("RYECHAIN_FILE", &tool)
        .env("RYECHAIN_USER", &user)
        .env("RYECHAIN_OUT", &out_file)
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("HOME", dir.path())
        .status()
        .expect("nvim runs");
    let rows = std::fs::read_to_string(&out_file).unwrap_or_default();
    assert!(status.success(), "nvim failed: {rows}");
    let rows: Vec<&str> = rows.lines().collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(
        rows[0].starts_with(
            "4:18:missing-executor:Executor not found: rye/core/runtimes/python/scirpt"
        ),
        "{rows:?}"
    );
    assert!(
        rows[0].contains("did you mean `rye/core/runtimes/python/script`?"),
        "{rows:?}"
    );
    // The server wrote nothing into the workspace.
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![project.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    assert_eq!(
        files,
        [
            project.join(".ai/tools/acme/digest.py"),
            project.join(".ai/tools/acme/ok.py")
        ]
    );
}

/// The README's Neovim snippet, as printed there, is the `init.lua` of a headless Neovim (the
/// version `.ci/run` installs): opening a tool of the example project starts `ryechain lsp` at
/// the project (found upwards from the file) and its diagnostics arrive.
#[test]
fn the_readmes_neovim_snippet_works() {
    if !have_nvim() {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let snippet = readme
        .split("```lua\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README has a lua block");
    let tmp = tempfile::tempdir().unwrap();
    let init = tmp.path().join("init.lua");
    std::fs::write(&init, snippet).unwrap();
    // `ryechain` on the PATH, as the snippet calls it.
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tmp.path().join("out.txt");
    let check = tmp.path().join("check.lua");
    std::fs::write(
        &check,
        r#"vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("RYECHAIN_FILE")))
local buf = vim.api.nvim_get_current_buf()
local got = vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
local rows = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(rows, (d.message:gsub("\n", " "))) end
vim.fn.writefile(got and rows or { "no diagnostics within 20 s" }, os.getenv("RYECHAIN_OUT"))
vim.cmd("qa!")
"#,
    )
    .unwrap();
    let file = repo.join("examples/project/.ai/tools/acme/reports/weekly_digest.py");
    let status = Command::new("nvim")
        .arg("--headless")
        .arg("-u")
        .arg(&init)
        .arg("-c")
        .arg(format!("luafile {}", check.display()))
        .current_dir(tmp.path())
        .env("PATH", path)
        // A home of its own: Neovim writes its state there.
        .env("HOME", tmp.path())
        .env("RYECHAIN_FILE", &file)
        .env("RYECHAIN_OUT", &out)
        .env_remove("RYE_SYSTEM_SPACE")
        .status()
        .expect("nvim runs");
    let rows = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(status.success(), "nvim failed: {rows}");
    assert!(
        rows.contains("Executor not found: rye/core/runtimes/python/scirpt"),
        "{rows}"
    );
}
