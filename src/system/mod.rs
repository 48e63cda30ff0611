//! L1 the operating-system boundary as a trait: walking, reading, canonicalizing, environment.
//! `os.rs` is the only implementation that touches `std::fs`/`std::env`; core code never does I/O.

pub mod os;

use std::path::{Path, PathBuf};

/// A file met while walking (directories are not listed), or an error the walk met.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkEntry {
    pub path: PathBuf,
    /// The entry itself is a symlink.
    pub is_symlink: bool,
    /// The walk could not go on here (permission denied, a symlink loop...).
    pub error: Option<String>,
    /// Not a regular file, in words (`a FIFO`, `a socket`, `a dangling symlink`...): the loader
    /// records it without opening it.
    pub not_regular: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadResult {
    Bytes(Vec<u8>),
    TooLarge(u64),
    Error(String),
}

pub trait System: Send + Sync {
    /// Every file below `dir`, following symlinks (loops are reported as errors), in no order.
    fn walk(&self, dir: &Path) -> Vec<WalkEntry>;
    /// `walk` for a directory known to hold few files (the extractors of a space): an
    /// implementation may skip the set-up of a parallel walk.
    fn walk_small(&self, dir: &Path) -> Vec<WalkEntry> {
        self.walk(dir)
    }
    /// The file's bytes, unless it is larger than `limit`. A file that is not a regular file (a
    /// FIFO, a device...) is an `Error` saying so; reading never blocks on it.
    fn read(&self, path: &Path, limit: u64) -> ReadResult;
    /// `read` for a path the walk just listed as a regular file (not a symlink): an
    /// implementation may skip checks the walk already made, never the refusal of a file that is
    /// no longer regular.
    fn read_walked(&self, path: &Path, limit: u64) -> ReadResult {
        self.read(path, limit)
    }
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf>;
    fn is_dir(&self, path: &Path) -> bool;
    fn is_file(&self, path: &Path) -> bool;
    fn env_var(&self, name: &str) -> Option<String>;
    fn current_dir(&self) -> std::io::Result<PathBuf>;
}
