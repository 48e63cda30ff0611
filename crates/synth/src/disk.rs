//! Generated trees on disk (the crate's only I/O): writing one under a directory, a tree in a
//! temporary directory for tests and benchmarks, and the benchmarks' tree size.
#![allow(
    clippy::disallowed_methods,
    reason = "test support writes generated trees to temp dirs"
)]

use std::io;
use std::path::{Path, PathBuf};

use crate::GeneratedTree;

/// Write a generated tree (files and symlinks) under `dir`.
pub fn write_tree(dir: &Path, tree: &GeneratedTree) -> io::Result<()> {
    for f in &tree.files {
        let p = dir.join(&f.path);
        std::fs::create_dir_all(p.parent().unwrap_or(dir))?;
        std::fs::write(&p, &f.contents)?;
    }
    for l in &tree.symlinks {
        let p = dir.join(&l.path);
        std::fs::create_dir_all(p.parent().unwrap_or(dir))?;
        #[cfg(unix)]
        std::os::unix::fs::symlink(&l.target, &p)?;
    }
    Ok(())
}

/// A generated tree written into a fresh temporary directory, removed when this is dropped.
pub struct TempTree {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl TempTree {
    /// Write `tree` into a new temporary directory.
    pub fn write(tree: &GeneratedTree) -> io::Result<TempTree> {
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().canonicalize()?;
        write_tree(&dir, tree)?;
        Ok(TempTree { _tmp: tmp, dir })
    }

    /// The directory holding `project/`, `user/` and `system/`: the canonical path, so the
    /// paths the loader reports start with it.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The number of tools of a benchmark's tree: `RYECHAIN_BENCH_TOOLS`, else 10,000 under `cargo
/// bench` and 1,000 when `cargo test --all-targets` runs each benchmark once as a test
/// (criterion's test mode, no `--bench` argument).
pub fn bench_tools() -> usize {
    std::env::var("RYECHAIN_BENCH_TOOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if std::env::args().any(|a| a == "--bench") {
            10_000
        } else {
            1_000
        })
}
