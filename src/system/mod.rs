//! L1 the operating-system boundary as a trait: walking, reading, canonicalizing, environment.
//! `os.rs` is the only implementation that touches `std::fs`/`std::env`; `space_write.rs` writes
//! a file below a space's `.ai/` without following symlinks; core code never does I/O.

pub mod census;
pub mod os;
#[cfg(unix)]
pub mod space_write;

use std::path::{Path, PathBuf};

pub use census::{DirListing, Known, KnownDir, MetDir, Settled, SettledRecords, WalkStamped};

/// Why a symlink whose target `stat` failed with `e` is not a regular file, in the walk's words
/// (every walk, and the watch's re-reading of a link, says it the same way).
pub fn unfollowable(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        "a dangling symlink: its target does not exist".to_owned()
    } else {
        format!("a symlink that cannot be followed: {e}")
    }
}

/// What names a temporary file of `sign` (`.<name>.ryechain-sign.<pid>.<random>.tmp`, beside its
/// target, `edges::files::replace`), and begins the spare folders older builds made
/// (`.ryechain-sign.<pid>.<nanos>`).
pub const SIGN_TEMPORARY_MARK: &str = ".ryechain-sign.";

/// The process id a leftover of `sign` is named with — one of its temporary files, or a spare
/// folder of an older build — or `None` for any other name. Walks skip these names (they are
/// never items), and `sign` removes those whose process is gone.
pub fn sign_leftover_pid(name: &[u8]) -> Option<u32> {
    if name.first() != Some(&b'.') {
        return None;
    }
    let name = std::str::from_utf8(name).ok()?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = name.strip_prefix(SIGN_TEMPORARY_MARK) {
        // An older build's spare folder: `<pid>.<nanos>`.
        let (pid, nanos) = rest.split_once('.')?;
        return (digits(pid) && digits(nanos)).then(|| pid.parse().ok())?;
    }
    let body = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, tail) = body.rsplit_once(SIGN_TEMPORARY_MARK)?;
    let (pid, random) = tail.split_once('.')?;
    let random_ok = !random.is_empty() && random.bytes().all(|b| b.is_ascii_alphanumeric());
    (digits(pid) && random_ok).then(|| pid.parse().ok())?
}

/// Whether `path` is a leftover of `sign` or lies in an older build's spare folder (whose files
/// were `<n>.tmp`): what a walk of a space does not list.
pub fn is_sign_leftover(path: &Path) -> bool {
    let named = |p: Option<&std::ffi::OsStr>| {
        p.is_some_and(|n| sign_leftover_pid(n.as_encoded_bytes()).is_some())
    };
    named(path.file_name()) || named(path.parent().and_then(Path::file_name))
}

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

/// What `System::read_walked_into` did with a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadInto {
    /// Its bytes were appended to the buffer given, at this range.
    Appended(std::ops::Range<usize>),
    /// It was read into a buffer of its own (or not read), as `read_walked` says.
    Read(ReadResult),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadResult {
    Bytes(Vec<u8>),
    TooLarge(u64),
    Error(String),
}

/// What a file's metadata says about its contents, to tell a changed file from an unchanged one
/// without reading it (the lint cache): any write changes `ctime` (which no user call can set
/// back), `size` or `mtime`; a replaced file changes `ino`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FileStamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub dev: u64,
    pub mode: u32,
}

impl FileStamp {
    /// A stamp whose ctime or mtime lies less than this before the start of the run that took it
    /// may belong to a file still being written (coarse file-system clocks: up to 2 s on FAT):
    /// it cannot stand for the file's contents.
    pub const RACY_NS: i64 = 2_000_000_000;

    /// Whether the file last changed (ctime and mtime) more than [`Self::RACY_NS`] before
    /// `start` (nanoseconds since the epoch, taken before the file was read): then this stamp,
    /// taken after that read, stands for what was read, and any later change moves its ctime.
    pub fn settled_before(&self, start: i64) -> bool {
        let limit = start.saturating_sub(Self::RACY_NS);
        self.ctime_ns < limit && self.mtime_ns < limit
    }

    /// A 128-bit fingerprint of every field: what a settled name's record keeps instead of the
    /// stamp itself ([`KnownDir::settled`]).
    pub fn fingerprint(&self) -> u128 {
        let mut b = [0u8; 44];
        b[..8].copy_from_slice(&self.size.to_le_bytes());
        b[8..16].copy_from_slice(&self.mtime_ns.to_le_bytes());
        b[16..24].copy_from_slice(&self.ctime_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.ino.to_le_bytes());
        b[32..40].copy_from_slice(&self.dev.to_le_bytes());
        b[40..].copy_from_slice(&self.mode.to_le_bytes());
        xxhash_rust::xxh3::xxh3_128(&b)
    }
}

pub trait System: Send + Sync {
    /// Every file below `dir`, following symlinks (loops are reported as errors), in no order.
    fn walk(&self, dir: &Path) -> Vec<WalkEntry>;
    /// `walk` for a directory known to hold few files (the extractors of a space): an
    /// implementation may skip the set-up of a parallel walk.
    fn walk_small(&self, dir: &Path) -> Vec<WalkEntry> {
        self.walk(dir)
    }
    /// `walk`, also giving the directories below `dir` it entered through a symlink (as walked
    /// paths), when the implementation knows them; `None`: unknown (the caller looks itself).
    /// Whether `dir` itself is a symlink is not told.
    fn walk_noting_links(&self, dir: &Path) -> (Vec<WalkEntry>, Option<Vec<PathBuf>>) {
        (self.walk(dir), None)
    }
    /// `walk`, with the `stamp` of every regular file and symlink listed (`None` for the rest),
    /// taken during the walk: the lint cache's census. Also returns the directories it listed
    /// whose entries were all regular files and directories with UTF-8 names, with their stamps
    /// and names ([`DirListing`]); `known` vouches for such a listing from an earlier census, and
    /// a directory whose stamp still matches may be stamped name by name instead of read again,
    /// its settled names reported by token (an implementation may ignore `known` and list
    /// everything).
    fn walk_stamped(&self, dir: &Path, known: &Known<'_>) -> WalkStamped {
        let _ = known;
        let entries = self
            .walk(dir)
            .into_iter()
            .map(|e| {
                let stamp = (e.error.is_none() && e.not_regular.is_none())
                    .then(|| self.stamp(&e.path))
                    .flatten();
                (e, stamp)
            })
            .collect();
        WalkStamped {
            entries,
            ..WalkStamped::default()
        }
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
    /// `read_walked`, appending the bytes of a file smaller than `inline_below` to `buf`: the bulk
    /// load reads a few hundred small files into one buffer (their texts share it) instead of
    /// one allocation each, copied later.
    fn read_walked_into(
        &self,
        path: &Path,
        limit: u64,
        inline_below: u64,
        buf: &mut Vec<u8>,
    ) -> ReadInto {
        match self.read_walked(path, limit) {
            ReadResult::Bytes(bytes) if (bytes.len() as u64) < inline_below => {
                let at = buf.len();
                buf.extend_from_slice(&bytes);
                ReadInto::Appended(at..buf.len())
            }
            other => ReadInto::Read(other),
        }
    }
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf>;
    /// `canonicalize(path)` when `real_parent` is already the canonical path of `path`'s parent:
    /// an implementation may skip resolving the parent again (`path` not being a symlink, its
    /// canonical path is `real_parent` joined with its name).
    fn canonicalize_child(&self, real_parent: &Path, path: &Path) -> std::io::Result<PathBuf> {
        let _ = real_parent;
        self.canonicalize(path)
    }
    fn is_dir(&self, path: &Path) -> bool;
    fn is_file(&self, path: &Path) -> bool;
    /// `path` itself is a symlink (not followed).
    fn is_symlink(&self, path: &Path) -> bool {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        match (self.canonicalize(parent), self.canonicalize(path)) {
            (Ok(real_parent), Ok(real)) => real != real_parent.join(name),
            _ => false,
        }
    }
    fn env_var(&self, name: &str) -> Option<String>;
    /// The stamp of the file at `path` (symlinks followed); `None` when it cannot be read or the
    /// implementation has none (then nothing is cached).
    fn stamp(&self, _path: &Path) -> Option<FileStamp> {
        None
    }
    fn current_dir(&self) -> std::io::Result<PathBuf>;
}
