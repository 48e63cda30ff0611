//! L1 the real operating system: parallel directory walks (`ignore`), file reads, environment.
#![allow(
    clippy::disallowed_methods,
    reason = "this file is the OS edge of the System trait"
)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::{ReadResult, System, WalkEntry};

#[derive(Clone, Copy, Debug, Default)]
pub struct OsSystem;

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}

impl System for OsSystem {
    fn walk(&self, dir: &Path) -> Vec<WalkEntry> {
        let (tx, rx) = mpsc::channel();
        ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .hidden(false)
            .follow_links(true)
            .build_parallel()
            .run(|| {
                let tx = tx.clone();
                Box::new(move |res| {
                    let entry = match res {
                        Ok(e) if e.file_type().is_some_and(|t| t.is_dir()) => {
                            return ignore::WalkState::Continue;
                        }
                        Ok(e) => WalkEntry {
                            is_symlink: e.path_is_symlink(),
                            path: e.into_path(),
                            error: None,
                        },
                        Err(err) => WalkEntry {
                            path: error_path(&err).unwrap_or_else(|| dir.to_path_buf()),
                            is_symlink: false,
                            error: Some(err.to_string()),
                        },
                    };
                    let _ = tx.send(entry);
                    ignore::WalkState::Continue
                })
            });
        drop(tx);
        rx.into_iter().collect()
    }

    fn walk_small(&self, dir: &Path) -> Vec<WalkEntry> {
        // One thread: starting the parallel walker's pool costs more than walking a few files.
        ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .hidden(false)
            .follow_links(true)
            .build()
            .filter_map(|res| match res {
                Ok(e) if e.file_type().is_some_and(|t| t.is_dir()) => None,
                Ok(e) => Some(WalkEntry {
                    is_symlink: e.path_is_symlink(),
                    path: e.into_path(),
                    error: None,
                }),
                Err(err) => Some(WalkEntry {
                    path: error_path(&err).unwrap_or_else(|| dir.to_path_buf()),
                    is_symlink: false,
                    error: Some(err.to_string()),
                }),
            })
            .collect()
    }

    fn read(&self, path: &Path, limit: u64) -> ReadResult {
        let mut file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) => return ReadResult::Error(e.to_string()),
        };
        match file.metadata() {
            Ok(m) if m.is_dir() => return ReadResult::Error("it is a directory".to_owned()),
            Ok(m) if m.len() > limit => return ReadResult::TooLarge(m.len()),
            Ok(_) => {}
            Err(e) => return ReadResult::Error(e.to_string()),
        }
        let mut buf = Vec::new();
        // Read at most limit + 1 bytes: a file that grew past the limit is still refused.
        match file.by_ref().take(limit + 1).read_to_end(&mut buf) {
            Ok(n) if n as u64 > limit => ReadResult::TooLarge(n as u64),
            Ok(_) => ReadResult::Bytes(buf),
            Err(e) => ReadResult::Error(e.to_string()),
        }
    }

    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }
    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn current_dir(&self) -> std::io::Result<PathBuf> {
        std::env::current_dir()
    }
}
