//! L1 the real operating system: the one directory walk (`ignore`, parallel or on one thread),
//! the census's stamping walk (which may take a directory on trust without reading it), file
//! reads, environment.
#![allow(
    clippy::disallowed_methods,
    reason = "this file is the OS edge of the System trait"
)]

use std::io::Read;
use std::path::{Path, PathBuf};

use super::unfollowable;
use super::{ReadInto, ReadResult, System, WalkEntry};

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

/// What a file that is neither a regular file nor a directory is, in words.
fn special_kind(ft: std::fs::FileType) -> Option<&'static str> {
    if ft.is_file() || ft.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Some("a FIFO");
        }
        if ft.is_socket() {
            return Some("a socket");
        }
        if ft.is_char_device() {
            return Some("a character device");
        }
        if ft.is_block_device() {
            return Some("a block device");
        }
    }
    if ft.is_symlink() {
        return Some("a symlink that cannot be followed");
    }
    Some("neither a file nor a directory")
}

/// A mutex's guard, poisoned or not (what the walks collect stays usable after a panic on
/// another thread).
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A walk error at a symlink whose target cannot be reached is no walk error: the entry is a file
/// that is not a regular file (§1.7), as the single-item loader sees it.
fn broken_symlink(err: &ignore::Error) -> Option<WalkEntry> {
    dangling(&error_path(err)?)
}

/// The entry of a symlink at `path` that cannot be followed; `None` if `path` is no such link.
fn dangling(path: &Path) -> Option<WalkEntry> {
    let link = std::fs::symlink_metadata(path).ok()?;
    if !link.file_type().is_symlink() {
        return None;
    }
    let what = match std::fs::metadata(path) {
        Ok(_) => return None,
        Err(e) => unfollowable(&e),
    };
    Some(WalkEntry {
        path: path.to_path_buf(),
        is_symlink: true,
        error: None,
        not_regular: Some(what),
    })
}

/// The walk of every tree (`walk`, `walk_small`, `walk_noting_links`, the loader's and the
/// watch's): `ignore`'s walker with all its filters off (hidden files, ignore files: a space
/// lists everything), symlinks followed (a loop is an error).
fn walker(dir: &Path) -> ignore::WalkBuilder {
    let mut walk = ignore::WalkBuilder::new(dir);
    walk.standard_filters(false)
        .hidden(false)
        .follow_links(true);
    walk
}

fn walk_entry(dir: &Path, res: Result<ignore::DirEntry, ignore::Error>) -> Option<WalkEntry> {
    Some(match res {
        Ok(e) if e.file_type().is_some_and(|t| t.is_dir()) => return None,
        Ok(e) => WalkEntry {
            is_symlink: e.path_is_symlink(),
            not_regular: e.file_type().and_then(special_kind).map(str::to_owned),
            path: e.into_path(),
            error: None,
        },
        Err(err) => broken_symlink(&err).unwrap_or_else(|| WalkEntry {
            path: error_path(&err).unwrap_or_else(|| dir.to_path_buf()),
            is_symlink: false,
            error: Some(err.to_string()),
            not_regular: None,
        }),
    })
}

/// What a parallel walk's threads found, each thread's lists handed over once, when the walk
/// drops its visitor (a message per file through a channel cost more).
#[derive(Default)]
struct Walked {
    entries: Vec<Vec<WalkEntry>>,
    /// Directories below the root entered through a symlink.
    links: Vec<Vec<PathBuf>>,
}

/// Builds one [`WalkThread`] per walker thread.
struct CollectWalk<'a> {
    dir: &'a Path,
    found: &'a std::sync::Mutex<Walked>,
}

impl<'a> ignore::ParallelVisitorBuilder<'a> for CollectWalk<'a> {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 'a> {
        Box::new(WalkThread {
            dir: self.dir,
            found: self.found,
            entries: Vec::new(),
            links: Vec::new(),
        })
    }
}

/// One walker thread's finds.
struct WalkThread<'a> {
    dir: &'a Path,
    found: &'a std::sync::Mutex<Walked>,
    entries: Vec<WalkEntry>,
    links: Vec<PathBuf>,
}

impl ignore::ParallelVisitor for WalkThread<'_> {
    fn visit(&mut self, res: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        match res {
            // A directory entered through a symlink (the walk's root, at depth 0, is never
            // marked as one).
            Ok(e) if e.path_is_symlink() && e.file_type().is_some_and(|t| t.is_dir()) => {
                self.links.push(e.into_path());
            }
            res => {
                if let Some(entry) = walk_entry(self.dir, res) {
                    self.entries.push(entry);
                }
            }
        }
        ignore::WalkState::Continue
    }
}

impl Drop for WalkThread<'_> {
    fn drop(&mut self) {
        let mut found = lock(self.found);
        found.entries.push(std::mem::take(&mut self.entries));
        found.links.push(std::mem::take(&mut self.links));
    }
}

/// Open for reading without blocking: a FIFO swapped in after the `stat` would otherwise wait
/// for a writer forever. `O_NONBLOCK` changes nothing for reads of a regular file.
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    opts.open(path)
}

#[cfg(unix)]
fn dir_id(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn dir_id(_m: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// The lint cache's census walk: `walk`'s entries (symlinks followed, a symlink back to an
/// ancestor reported as a loop, special files and dangling symlinks marked), each regular file
/// stamped relative to its open directory (`statx` on the directory's descriptor: no lookup of
/// the whole path per file, which was most of a census's kernel time). Directories are walked
/// in parallel. `stamp` is `dir`'s own; a directory `known` vouches for at that stamp is not
/// read: its names are stamped one by one (`census_known`), which saves reading the directory
/// (an `fstat` and two `getdents64` calls) — a third of a census's system calls on a tree of a
/// few files per folder. (Not the loader's `ignore` walk: that reads every directory it enters
/// and stats its entries by whole path; skipping a vouched directory is what this walk is for.)
#[allow(
    clippy::too_many_arguments,
    reason = "where the walk is, and what it carries down"
)]
fn census_walk(
    dir: &Path,
    name: Option<&str>,
    nth: u32,
    parent: Option<BorrowedFd<'_>>,
    vouched_parent: Option<u32>,
    stamp: Option<super::FileStamp>,
    ancestors: Ancestors<'_>,
    known: &super::Known<'_>,
    sink: &Sink,
) {
    // Below a directory taken on trust, a subdirectory is asked about by its name there.
    let met = match (vouched_parent, name) {
        (Some(parent), Some(name)) => super::MetDir::Child { parent, name, nth },
        _ => super::MetDir::Path(dir),
    };
    if let Some(stamp) = stamp
        && let Some(vouched) = known(met, &stamp)
        && census_known(dir, name, parent, vouched, ancestors, known, sink)
    {
        return;
    }
    census_listed(dir, stamp, ancestors, known, sink);
}

/// What a census walk found, directory by directory (each directory's entries are moved once,
/// when the walk ends, instead of up through every parent), under one lock taken once a
/// directory.
#[derive(Default)]
struct Sink(std::sync::Mutex<Found>);

#[derive(Default)]
struct Found {
    entries: Vec<Vec<Stamped>>,
    listings: Vec<super::DirListing>,
    settled: Vec<Vec<u32>>,
    settled_digest: u128,
    vouched: Vec<u32>,
}

impl Sink {
    fn found(&self) -> std::sync::MutexGuard<'_, Found> {
        lock(&self.0)
    }

    /// What a directory that was read holds.
    fn put(&self, entries: Vec<Stamped>, listing: Option<super::DirListing>) {
        if entries.is_empty() && listing.is_none() {
            return;
        }
        let mut found = self.found();
        if !entries.is_empty() {
            found.entries.push(entries);
        }
        found.listings.extend(listing);
    }

    /// What a directory taken on trust (`token`) holds.
    fn put_vouched(&self, token: u32, entries: Vec<Stamped>, (settled, digest): Settles) {
        let mut found = self.found();
        found.vouched.push(token);
        found.settled_digest = found.settled_digest.wrapping_add(digest);
        if !entries.is_empty() {
            found.entries.push(entries);
        }
        if !settled.is_empty() {
            found.settled.push(settled);
        }
    }

    fn into_walked(self) -> super::WalkStamped {
        let found = self
            .0
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut entries = Vec::with_capacity(found.entries.iter().map(Vec::len).sum());
        for part in found.entries {
            entries.extend(part);
        }
        super::WalkStamped {
            entries,
            listings: found.listings,
            settled: found.settled.concat(),
            settled_digest: found.settled_digest,
            vouched: found.vouched,
        }
    }
}

/// The (dev, inode) of the directories a census walk is below, innermost first: a chain on the
/// walk's stack (no list copied for each directory).
#[derive(Clone, Copy)]
struct Ancestors<'a>(Option<&'a Ancestor<'a>>);

struct Ancestor<'a> {
    id: (u64, u64),
    up: Ancestors<'a>,
}

impl Ancestors<'_> {
    fn contains(self, id: &(u64, u64)) -> bool {
        let mut at = self.0;
        while let Some(a) = at {
            if a.id == *id {
                return true;
            }
            at = a.up.0;
        }
        false
    }
}

/// A directory met by the census.
struct Subdir {
    path: PathBuf,
    /// Where its name starts in `path`, and its place among its parent's subdirectories in the
    /// order of the parent's names (`MetDir::Child`); `usize::MAX` where no one asks.
    name_at: usize,
    nth: u32,
    /// (dev, inode).
    id: (u64, u64),
    stamp: Option<super::FileStamp>,
}

impl Subdir {
    /// A subdirectory met by listing its parent (asked about by its path, if at all).
    fn listed(path: PathBuf, id: (u64, u64), stamp: Option<super::FileStamp>) -> Subdir {
        Subdir {
            path,
            name_at: usize::MAX,
            nth: 0,
            id,
            stamp,
        }
    }

    /// Its name, as `census_known_entries` joined it to its parent's path.
    fn name(&self) -> Option<&str> {
        let bytes = self.path.as_os_str().as_encoded_bytes();
        std::str::from_utf8(bytes.get(self.name_at..)?).ok()
    }
}

/// The tokens of a directory's settled names, and the sum of their `Settled::mix`.
type Settles = (Vec<u32>, u128);

/// A census entry: what the walk met, and its stamp.
type Stamped = (WalkEntry, Option<super::FileStamp>);

/// `census_walk` of a directory read with `read_dir`.
fn census_listed(
    dir: &Path,
    stamp: Option<super::FileStamp>,
    ancestors: Ancestors<'_>,
    known: &super::Known<'_>,
    sink: &Sink,
) {
    let entry = |path: PathBuf,
                 is_symlink: bool,
                 error: Option<String>,
                 not_regular: Option<String>| WalkEntry {
        path,
        is_symlink,
        error,
        not_regular,
    };
    // A walk error at `path`, worded as the load's walk words it (path, then the error).
    let error_at = |path: &Path, e: &dyn std::fmt::Display| {
        let msg = format!("{}: {e}", path.display());
        (entry(path.to_path_buf(), false, Some(msg), None), None)
    };
    let mut out = Vec::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            out.push(error_at(dir, &e));
            sink.put(out, None);
            return;
        }
    };
    // The names, while every entry is a regular file or a directory with a UTF-8 name.
    let mut names = Some(String::new());
    let mut subdirs: Vec<Subdir> = Vec::new();
    for ent in rd {
        let ent = match ent {
            Ok(e) => e,
            Err(e) => {
                names = None;
                out.push(error_at(dir, &e));
                continue;
            }
        };
        let path = ent.path();
        let ft = match ent.file_type() {
            Ok(t) => t,
            Err(e) => {
                names = None;
                out.push(error_at(&path, &e));
                continue;
            }
        };
        let plain = (ft.is_dir() || ft.is_file())
            .then(|| ent.file_name().into_string().ok())
            .flatten();
        match (&mut names, plain) {
            (Some(all), Some(name)) => {
                all.push_str(&name);
                all.push('\0');
            }
            (_, None) => names = None,
            (None, Some(_)) => {}
        }
        if ft.is_dir() {
            match ent.metadata() {
                Ok(m) => subdirs.push(Subdir::listed(path, dir_id(&m), Some(stamp_from(&m)))),
                Err(e) => {
                    names = None;
                    out.push(error_at(&path, &e));
                }
            }
        } else if ft.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() => {
                    let id = dir_id(&m);
                    if ancestors.contains(&id) {
                        let msg = format!(
                            "File system loop found: {} points to an ancestor",
                            path.display()
                        );
                        out.push((entry(path, false, Some(msg), None), None));
                    } else {
                        // Reached through a link: never vouched for (its target may change).
                        subdirs.push(Subdir::listed(path, id, None));
                    }
                }
                Ok(m) if m.is_file() => {
                    out.push((entry(path.clone(), true, None, None), stamp_of(&path)))
                }
                Ok(m) => {
                    let what =
                        special_kind(m.file_type()).unwrap_or("neither a file nor a directory");
                    out.push((entry(path, true, None, Some(what.to_owned())), None));
                }
                Err(e) => {
                    out.push((entry(path, true, None, Some(unfollowable(&e))), None));
                }
            }
        } else if ft.is_file() {
            let stamp = ent.metadata().ok().map(|m| stamp_from(&m));
            if stamp.is_none() {
                names = None;
            }
            out.push((entry(path, false, None, None), stamp));
        } else {
            out.push((
                entry(path, false, None, special_kind(ft).map(str::to_owned)),
                None,
            ));
        }
    }
    let listing = match (stamp, names) {
        (Some(stamp), Some(names)) => Some(super::DirListing {
            path: dir.to_path_buf(),
            stamp,
            names: sorted_names(&names),
        }),
        _ => None,
    };
    sink.put(out, listing);
    census_subdirs(subdirs, None, None, ancestors, known, sink);
}

/// `names` (each followed by a `\0`) in byte order: the order the lint cache keeps a
/// directory's subdirectories in, so that a census meets the `n`th subdirectory of a vouched
/// directory's names at the `n`th of its records (`MetDir::Child`).
fn sorted_names(names: &str) -> String {
    let mut each: Vec<&str> = names.split_terminator('\0').collect();
    each.sort_unstable();
    let mut out = String::with_capacity(names.len());
    for name in each {
        out.push_str(name);
        out.push('\0');
    }
    out
}

/// A directory's descriptor, where its subdirectories may be opened by name; `None` where
/// there is none (they are opened by path).
#[cfg(unix)]
type BorrowedFd<'a> = std::os::fd::BorrowedFd<'a>;
#[cfg(not(unix))]
type BorrowedFd<'a> = std::marker::PhantomData<&'a ()>;

/// Walk `subdirs` of the directory open at `parent` (if it is) and vouched for with token
/// `vouched_parent` (if it was), in parallel.
fn census_subdirs(
    subdirs: Vec<Subdir>,
    parent: Option<BorrowedFd<'_>>,
    vouched_parent: Option<u32>,
    ancestors: Ancestors<'_>,
    known: &super::Known<'_>,
    sink: &Sink,
) {
    use rayon::prelude::*;
    if subdirs.is_empty() {
        return;
    }
    subdirs.into_par_iter().for_each(|d| {
        let here = Ancestor {
            id: d.id,
            up: ancestors,
        };
        let anc = Ancestors(Some(&here));
        let (path, name, nth) = (&d.path, d.name(), d.nth);
        census_walk(
            path,
            name,
            nth,
            parent,
            vouched_parent,
            d.stamp,
            anc,
            known,
            sink,
        );
    });
}

/// `census_walk` of a directory whose names `known` vouched for: each name stamped relative to
/// the directory, opened `O_PATH` (no read); a settled name (its record's fingerprint matches)
/// gives its token, no entry. `false` (nothing recorded) — list it after all — when a name is
/// gone or no longer a regular file or directory (the directory changed after its stamp was
/// taken).
#[cfg(target_os = "linux")]
#[allow(
    clippy::too_many_arguments,
    reason = "where the walk is, and what it carries down"
)]
fn census_known(
    dir: &Path,
    name: Option<&str>,
    parent: Option<BorrowedFd<'_>>,
    vouched: super::KnownDir<'_>,
    ancestors: Ancestors<'_>,
    known: &super::Known<'_>,
    sink: &Sink,
) -> bool {
    use std::os::fd::AsFd;
    // A folder whose every name has a settled record holds only files (most folders of a tool
    // tree): its names are stamped from its parent's descriptor (`dir/name`) and it is never
    // opened. The lookup of the folder's name again for each of its files, hot in the dentry
    // cache, costs less than opening and closing it (two system calls, and the process's
    // descriptor table is one lock for both threads). Stamping every name by its whole path
    // instead, no folder opened, was slower again (more components for each file). (A folder
    // swapped for a symlink meanwhile is followed here; a name reached that way is another
    // inode, whose fingerprint matches no record — an entry, read and compared —, or through a
    // link to this very folder, the same file.)
    let leaf = !vouched.settled.is_empty()
        && vouched
            .settled
            .iter()
            .all(|r| r.token != super::Settled::NONE.token);
    if let (true, Some(parent), Some(name)) = (leaf, parent, name) {
        return census_known_entries(dir, parent, Some(name.as_bytes()), vouched).is_some_and(
            |(out, subdirs, settled)| {
                sink.put_vouched(vouched.token, out, settled);
                // (A name that turned out to be a folder after all is opened by its path.)
                census_subdirs(subdirs, None, Some(vouched.token), ancestors, known, sink);
                true
            },
        );
    }
    let Some(handle) = open_dir_path(dir, name, parent) else {
        return false;
    };
    census_known_entries(dir, handle.as_fd(), None, vouched).is_some_and(
        |(out, subdirs, settled)| {
            sink.put_vouched(vouched.token, out, settled);
            census_subdirs(
                subdirs,
                Some(handle.as_fd()),
                Some(vouched.token),
                ancestors,
                known,
                sink,
            );
            true
        },
    )
}

/// `dir` opened `O_PATH` (for `fstatat` of its names, `openat` of its subdirectories): by its
/// `name` in `parent` when that is open (the kernel looks up one name, not every component of
/// the path: the census opens each of a tree's 23k folders), without following a symlink
/// there (the stamp that vouched for it was the directory's own).
#[cfg(target_os = "linux")]
fn open_dir_path(
    dir: &Path,
    name: Option<&str>,
    parent: Option<BorrowedFd<'_>>,
) -> Option<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    match parent {
        Some(parent) => rustix::fs::openat(parent, name?, flags | OFlags::NOFOLLOW, Mode::empty()),
        None => rustix::fs::open(dir, flags, Mode::empty()),
    }
    .ok()
}

/// The entries of a vouched directory (`census_known`), its subdirectories, and the tokens and
/// fingerprints of its settled names. Its names are stamped relative to `handle`: the
/// directory's own descriptor, or its parent's when `prefix` (the directory's name) is given.
#[cfg(target_os = "linux")]
#[allow(
    clippy::type_complexity,
    reason = "a private triple, named where it is taken apart"
)]
fn census_known_entries(
    dir: &Path,
    handle: BorrowedFd<'_>,
    prefix: Option<&[u8]>,
    vouched: super::KnownDir<'_>,
) -> Option<(Vec<Stamped>, Vec<Subdir>, Settles)> {
    use rustix::fs::FileType;
    // `prefix/` then each name and a NUL, written into one buffer.
    let mut path: Vec<u8> = Vec::with_capacity(256);
    if let Some(p) = prefix {
        if p.is_empty() || p.contains(&b'/') || p.contains(&0) {
            return None;
        }
        path.extend_from_slice(p);
        path.push(b'/');
    }
    let base = path.len();
    let mut out = Vec::new();
    let mut subdirs: Vec<Subdir> = Vec::new();
    let mut settled = Vec::with_capacity(vouched.settled.len());
    let mut digest = 0u128;
    let mut records = vouched.settled.iter();
    let mut rest = vouched.names;
    while !rest.is_empty() {
        // Names come from the cache file: only a plain name is stamped (never a path that could
        // leave the directory); anything else lists the directory instead. One pass finds a
        // name's end (its `\0`, or the end of the list) and any `/` in it.
        let end = rest.bytes().position(|b| b == 0 || b == b'/');
        let (name, next) = match end.map(|e| (e, rest.as_bytes()[e])) {
            Some((e, 0)) => (rest.get(..e)?, rest.get(e + 1..)?),
            Some(_) => return None,
            None => (rest, ""),
        };
        rest = next;
        if name.is_empty() || name == "." || name == ".." {
            return None;
        }
        let record = records.next().unwrap_or(super::Settled::NONE);
        path.truncate(base);
        path.extend_from_slice(name.as_bytes());
        path.push(0);
        // (No name holds a NUL: the names were split at them, and the prefix was checked.)
        let name_z = std::ffi::CStr::from_bytes_with_nul(&path).ok()?;
        let st = rustix::fs::statat(handle, name_z, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        let stamp = stamp_of_stat(&st);
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile
                if record.token != super::Settled::NONE.token
                    && stamp.fingerprint() == record.fingerprint =>
            {
                settled.push(record.token);
                digest = digest.wrapping_add(super::Settled::mix(record.token, record.fingerprint));
            }
            FileType::RegularFile => out.push((
                WalkEntry {
                    path: dir.join(name),
                    is_symlink: false,
                    error: None,
                    not_regular: None,
                },
                Some(stamp),
            )),
            FileType::Directory => {
                let path = dir.join(name);
                subdirs.push(Subdir {
                    name_at: path.as_os_str().len().saturating_sub(name.len()),
                    nth: u32::try_from(subdirs.len()).unwrap_or(u32::MAX),
                    path,
                    id: (stamp.dev, stamp.ino),
                    stamp: Some(stamp),
                });
            }
            _ => return None,
        }
    }
    Some((out, subdirs, (settled, digest)))
}

#[cfg(not(target_os = "linux"))]
#[allow(
    clippy::too_many_arguments,
    reason = "where the walk is, and what it carries down"
)]
fn census_known(
    _dir: &Path,
    _name: Option<&str>,
    _parent: Option<BorrowedFd<'_>>,
    _vouched: super::KnownDir<'_>,
    _ancestors: Ancestors<'_>,
    _known: &super::Known<'_>,
    _sink: &Sink,
) -> bool {
    false
}

/// The stamp of the file at `path` (symlinks followed).
fn stamp_of(path: &Path) -> Option<super::FileStamp> {
    std::fs::metadata(path).ok().map(|m| stamp_from(&m))
}

/// The wall clock in nanoseconds since the Unix epoch (0 before it), as stamps count.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The stamp of what a `stat` call filled in (as [`stamp_from`] of the same file's metadata).
#[cfg(unix)]
#[allow(
    clippy::unnecessary_cast,
    reason = "the fields' types differ from platform to platform"
)]
pub fn stamp_of_stat(st: &rustix::fs::Stat) -> super::FileStamp {
    super::FileStamp {
        size: u64::try_from(st.st_size).unwrap_or(0),
        mtime_ns: (st.st_mtime as i64).saturating_mul(1_000_000_000) + st.st_mtime_nsec as i64,
        ctime_ns: (st.st_ctime as i64).saturating_mul(1_000_000_000) + st.st_ctime_nsec as i64,
        ino: st.st_ino as u64,
        dev: st.st_dev as u64,
        mode: st.st_mode as u32,
    }
}

/// The stamp of what `m` describes.
#[cfg(unix)]
pub fn stamp_from(m: &std::fs::Metadata) -> super::FileStamp {
    use std::os::unix::fs::MetadataExt;
    super::FileStamp {
        size: m.size(),
        mtime_ns: m.mtime().saturating_mul(1_000_000_000) + m.mtime_nsec(),
        ctime_ns: m.ctime().saturating_mul(1_000_000_000) + m.ctime_nsec(),
        ino: m.ino(),
        dev: m.dev(),
        mode: m.mode(),
    }
}

/// The stamp of what `m` describes: its size only (no caller trusts a stamp off unix).
#[cfg(not(unix))]
pub fn stamp_from(m: &std::fs::Metadata) -> super::FileStamp {
    super::FileStamp {
        size: m.len(),
        mtime_ns: 0,
        ctime_ns: 0,
        ino: 0,
        dev: 0,
        mode: 0,
    }
}

/// Open without blocking, `fstat` the open file (a directory, FIFO or device is refused, a file
/// over `limit` is not read) and read it into a buffer of its size: two `read` calls for a file
/// that did not change size.
fn read_opened(path: &Path, limit: u64) -> ReadResult {
    match read_opened_into(path, limit, 0, &mut Vec::new()) {
        ReadInto::Read(r) => r,
        // Nothing is appended under a size of 0.
        ReadInto::Appended(_) => ReadResult::Error("read into the wrong buffer".to_owned()),
    }
}

/// `read_opened`, appending the bytes of a file whose `fstat` size is under `inline_below` to
/// `buf` (a larger file gets a buffer of its own, in `ReadInto::Read`).
fn read_opened_into(path: &Path, limit: u64, inline_below: u64, buf: &mut Vec<u8>) -> ReadInto {
    match open_nonblocking(path) {
        Ok(file) => read_file_into(file, limit, inline_below, buf),
        Err(e) => ReadInto::Read(ReadResult::Error(e.to_string())),
    }
}

/// `read_opened_into` of a file already open.
fn read_file_into(
    mut file: std::fs::File,
    limit: u64,
    inline_below: u64,
    buf: &mut Vec<u8>,
) -> ReadInto {
    let len = match file.metadata() {
        Ok(m) if m.is_dir() => {
            return ReadInto::Read(ReadResult::Error("it is a directory".to_owned()));
        }
        Ok(m) if !m.is_file() => {
            let what = special_kind(m.file_type()).unwrap_or("of an unknown kind");
            return ReadInto::Read(ReadResult::Error(format!("not a regular file ({what})")));
        }
        Ok(m) if m.len() > limit => return ReadInto::Read(ReadResult::TooLarge(m.len())),
        Ok(m) => m.len(),
        Err(e) => return ReadInto::Read(ReadResult::Error(e.to_string())),
    };
    if len < inline_below {
        let at = buf.len();
        return match read_sized(&mut file, len, limit, buf) {
            Ok(n) if n as u64 > limit => {
                buf.truncate(at);
                ReadInto::Read(ReadResult::TooLarge(n as u64))
            }
            Ok(n) => ReadInto::Appended(at..at + n),
            Err(e) => ReadInto::Read(ReadResult::Error(e.to_string())),
        };
    }
    let mut own = Vec::new();
    ReadInto::Read(match read_sized(&mut file, len, limit, &mut own) {
        Ok(n) if n as u64 > limit => ReadResult::TooLarge(n as u64),
        Ok(_) => ReadResult::Bytes(own),
        Err(e) => ReadResult::Error(e.to_string()),
    })
}

/// Read a file whose `fstat` said `len` bytes into `buf`, at most `limit + 1` bytes (a file that
/// grew past the limit is still refused). The first read asks for one byte more than `len`: when
/// it returns exactly `len`, the file ended there and the read that would find the end (one
/// system call per file, a tenth of a lint's) is skipped. Otherwise (the file grew or shrank
/// since the `fstat`, or the file system returns short reads) it reads on to the end.
/// The bytes are appended to `buf`, read straight into its spare capacity (zeroing it first
/// was a `memset` of every byte of the tree); the count read is returned.
fn read_sized(
    file: &mut impl ReadUninit,
    len: u64,
    limit: u64,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let want = usize::try_from(len.min(limit).saturating_add(1)).unwrap_or(0);
    let at = buf.len();
    buf.reserve(want);
    let first = loop {
        match file.read_uninit(&mut buf.spare_capacity_mut()[..want]) {
            Ok(n) => break n.min(want),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    // SAFETY: `read_uninit` initialized the first `first` bytes of the spare capacity, which
    // starts at `at` (`first <= want <= capacity - at`).
    unsafe { buf.set_len(at + first) };
    if first as u64 == len && first != want {
        return Ok(first);
    }
    if first == 0 {
        return Ok(0);
    }
    match file
        .take((limit + 1).saturating_sub(first as u64))
        .read_to_end(buf)
    {
        Ok(rest) => Ok(first + rest),
        Err(e) => {
            buf.truncate(at);
            Err(e)
        }
    }
}

/// A reader that can fill memory not yet initialized (`read_sized`).
trait ReadUninit: Read {
    /// As `Read::read` into `out`; returns how many bytes from its start were written.
    fn read_uninit(&mut self, out: &mut [std::mem::MaybeUninit<u8>]) -> std::io::Result<usize>;
}

impl ReadUninit for std::fs::File {
    #[cfg(unix)]
    fn read_uninit(&mut self, out: &mut [std::mem::MaybeUninit<u8>]) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        // SAFETY: `out` is valid for writes of `out.len()` bytes for the call's duration, and
        // `read(2)` writes at most that many; the descriptor is open (owned by `self`).
        let n = unsafe { libc::read(self.as_raw_fd(), out.as_mut_ptr().cast(), out.len()) };
        usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
    }

    #[cfg(not(unix))]
    fn read_uninit(&mut self, out: &mut [std::mem::MaybeUninit<u8>]) -> std::io::Result<usize> {
        out.fill(std::mem::MaybeUninit::new(0));
        // SAFETY: every byte of `out` was just initialized.
        let out = unsafe { &mut *(std::ptr::from_mut(out) as *mut [u8]) };
        self.read(out)
    }
}

impl System for OsSystem {
    fn walk(&self, dir: &Path) -> Vec<WalkEntry> {
        self.walk_noting_links(dir).0
    }

    fn walk_noting_links(&self, dir: &Path) -> (Vec<WalkEntry>, Option<Vec<PathBuf>>) {
        let found = std::sync::Mutex::new(Walked::default());
        walker(dir)
            .build_parallel()
            .visit(&mut CollectWalk { dir, found: &found });
        let Walked { entries, links } = found
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Moved, not `concat`ed (which would clone every entry's path).
        let mut all = Vec::with_capacity(entries.iter().map(Vec::len).sum());
        for mut part in entries {
            all.append(&mut part);
        }
        (all, Some(links.into_iter().flatten().collect()))
    }

    fn walk_small(&self, dir: &Path) -> Vec<WalkEntry> {
        // The same walk on this thread: the few files of a base load (keys, extractors) do not
        // need the parallel walker's threads.
        walker(dir)
            .build()
            .filter_map(|res| walk_entry(dir, res))
            .collect()
    }

    fn read(&self, path: &Path, limit: u64) -> ReadResult {
        // `stat` first: opening a FIFO or a device may block or act on the device.
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return ReadResult::Error("it is a directory".to_owned()),
            Ok(m) => {
                if let Some(what) = special_kind(m.file_type()) {
                    return ReadResult::Error(format!("not a regular file ({what})"));
                }
            }
            Err(e) => return ReadResult::Error(e.to_string()),
        }
        read_opened(path, limit)
    }

    fn read_walked(&self, path: &Path, limit: u64) -> ReadResult {
        // The walk saw a regular file here, so the `stat` of `read` is skipped; a file swapped
        // for a FIFO or device since is still refused by the `fstat` after the non-blocking open.
        read_opened(path, limit)
    }

    fn read_walked_into(
        &self,
        path: &Path,
        limit: u64,
        inline_below: u64,
        buf: &mut Vec<u8>,
    ) -> ReadInto {
        read_opened_into(path, limit, inline_below, buf)
    }

    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
    fn canonicalize_child(&self, real_parent: &Path, path: &Path) -> std::io::Result<PathBuf> {
        // One `lstat` instead of `realpath`'s `readlink` of every component of the path.
        match (std::fs::symlink_metadata(path), path.file_name()) {
            (Ok(m), Some(name)) if !m.file_type().is_symlink() => Ok(real_parent.join(name)),
            (Err(e), _) => Err(e),
            _ => std::fs::canonicalize(path),
        }
    }
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }
    fn is_symlink(&self, path: &Path) -> bool {
        path.is_symlink()
    }
    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn current_dir(&self) -> std::io::Result<PathBuf> {
        std::env::current_dir()
    }
    fn stamp(&self, path: &Path) -> Option<super::FileStamp> {
        stamp_of(path)
    }

    fn walk_stamped(&self, dir: &Path, known: &super::Known<'_>) -> super::WalkStamped {
        let mut root = None;
        let mut stamp = None;
        // Followed if `dir` is a symlink, as the walk follows it; its stamp is then the
        // target's, which changes with what it lists.
        if let Ok(m) = std::fs::metadata(dir) {
            root = Some(Ancestor {
                id: dir_id(&m),
                up: Ancestors(None),
            });
            stamp = Some(stamp_from(&m));
        }
        let sink = Sink::default();
        let root = Ancestors(root.as_ref());
        census_walk(dir, None, 0, None, None, stamp, root, known, &sink);
        sink.into_walked()
    }
}

#[cfg(test)]
mod tests {
    use super::read_sized;
    use std::io::Read;

    /// A reader that hands out at most `step` bytes per call.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
        calls: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    impl super::ReadUninit for Trickle<'_> {
        fn read_uninit(&mut self, out: &mut [std::mem::MaybeUninit<u8>]) -> std::io::Result<usize> {
            self.calls += 1;
            let n = self.step.min(out.len()).min(self.data.len());
            for (o, b) in out.iter_mut().zip(&self.data[..n]) {
                o.write(*b);
            }
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn read(data: &[u8], step: usize, len: u64, limit: u64) -> (Vec<u8>, usize, usize) {
        let mut r = Trickle {
            data,
            step,
            calls: 0,
        };
        let mut buf = vec![9; 3];
        let n = read_sized(&mut r, len, limit, &mut buf).unwrap();
        assert_eq!(buf[..3], [9, 9, 9], "appended after what the buffer held");
        (buf[3..].to_vec(), n, r.calls)
    }

    #[test]
    fn small_files_are_appended_to_the_buffer_given_and_large_ones_get_their_own() {
        use super::{ReadInto, ReadResult, read_opened_into};
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::write(&a, "alpha").unwrap();
        std::fs::write(&b, "bravo!").unwrap();
        std::fs::write(&c, "x".repeat(100)).unwrap();
        let mut buf = Vec::new();
        assert_eq!(
            read_opened_into(&a, 1000, 50, &mut buf),
            ReadInto::Appended(0..5)
        );
        assert_eq!(
            read_opened_into(&b, 1000, 50, &mut buf),
            ReadInto::Appended(5..11)
        );
        assert_eq!(
            read_opened_into(&c, 1000, 50, &mut buf),
            ReadInto::Read(ReadResult::Bytes(vec![b'x'; 100]))
        );
        assert_eq!(
            read_opened_into(&c, 10, 500, &mut buf),
            ReadInto::Read(ReadResult::TooLarge(100))
        );
        assert!(matches!(
            read_opened_into(&dir.path().join("none"), 1000, 50, &mut buf),
            ReadInto::Read(ReadResult::Error(_))
        ));
        assert_eq!(buf, b"alphabravo!");
    }

    #[test]
    fn a_file_of_its_stat_size_is_read_in_one_call() {
        assert_eq!(read(b"hello", 100, 5, 1000), (b"hello".to_vec(), 5, 1));
        assert_eq!(read(b"", 100, 0, 1000), (Vec::new(), 0, 1));
    }

    #[test]
    fn short_reads_grown_and_shrunk_files_are_read_to_the_end() {
        // Short reads: every byte, whatever the step.
        let data: Vec<u8> = (0..=255).collect();
        for step in [1, 3, 255, 256, 1000] {
            let (buf, n, _) = read(&data, step, 256, 1000);
            assert_eq!((buf.as_slice(), n), (data.as_slice(), 256), "step {step}");
        }
        // Grown since the stat: the rest is read too.
        assert_eq!(read(b"hello world", 100, 5, 1000).0, b"hello world");
        // Shrunk: what is there.
        assert_eq!(read(b"hel", 100, 5, 1000).0, b"hel");
        // Grown past the limit: limit + 1 bytes, so the caller refuses it.
        let (buf, n, _) = read(&data, 7, 10, 20);
        assert_eq!((buf.len(), n), (21, 21));
    }
}
