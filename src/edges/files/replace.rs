//! L6 replacing many files at once, each atomically (`sign` of a batch): every target checked to
//! hold still what was validated (its bytes, or its stamp when that shows it settled before it was
//! read), its new text staged in a temporary file, made durable, put in the target's place and
//! checked to be the file written, unchanged — each file reached by its name through its folder,
//! held open (`openat`, `renameat`), not by a lookup of every component of its path.
//!
//! Why a crash leaves every file either old or new: a rename (or an exchange of two names) is
//! atomic — the name refers to the old or the new inode, never to neither — and none is issued
//! before its temporary file's data is on disk (`Durability`: a sync of each file system written
//! to, for each segment of the batch, or a sync of each file; a file system sync that reports an
//! error — any write error there since the batch began — fails every file not replaced yet, and
//! none of them is replaced). An old file is written again (as the temporary file of a later
//! segment, see `Durability::FileSystems`) only once the exchange that took it out of its place
//! is on disk, and only when nothing else has it open. A replacement that does not survive a
//! crash leaves the old file (and perhaps a stray temporary file: `.<name>.<pid>.<nanos>.tmp`
//! beside it, or a file in a spare folder `.ryechain-sign.<pid>.<nanos>` beside the first
//! file of its file system). The batch as a whole is not atomic: a crash may leave some files
//! replaced and others not.
#![allow(
    clippy::disallowed_methods,
    reason = "the replace edge reads, writes and renames the files being signed"
)]

use std::collections::BTreeSet;
use std::path::Path;

use rayon::prelude::*;

use super::{FileSystems, sync_dir};
use crate::system::FileStamp;

/// One file to replace: its path (a symlink's target: a symlink stays a symlink), the bytes it
/// must still hold (what was validated and signed) and its new bytes.
pub struct Replace<'t> {
    pub path: &'t Path,
    pub old: &'t [u8],
    pub new: &'t [u8],
    /// A stamp of `path` known to go with `old`: taken after `old` was read, of a file that had
    /// not changed for a while before that read began ([`settled_since`]). While the file has
    /// this stamp it holds `old` — one `fstatat` instead of reading it again (an open, `fstat`,
    /// a read and a close). `None`: the bytes are compared.
    pub stamp: Option<FileStamp>,
    /// The device `path` is on, when known: with `Durability::FileSystems`, its new text is
    /// staged in that file system's spare folder.
    pub dev: Option<u64>,
}

/// `stamp` (taken after the file was read) when it shows the file last changed well before
/// `read_from` (nanoseconds since the epoch, before the read began: the lint cache's racy
/// window, `FileStamp::settled_before`): then what was read is what the file held when stamped.
pub fn settled_since(stamp: FileStamp, read_from: i64) -> Option<FileStamp> {
    stamp.settled_before(read_from).then_some(stamp)
}

/// How a batch's temporary files are made durable before any is put in its target's place.
pub enum Durability<'f> {
    /// In segments of `SEGMENT` files: each segment's new texts staged in a spare folder of
    /// their file system, one `syncfs` of each file system, then each staged file exchanged
    /// with its target (`renameat2` `RENAME_EXCHANGE`); a final sync after the last. The old
    /// file each exchange leaves in the spare folder is written again as a temporary file of
    /// the segment after next — by then the sync between has put the exchange on disk — when
    /// nothing else has it open (a write lease), it has one link, this process's owner and
    /// group and no extended attributes; else it is removed. Why: a rename over a file frees
    /// the old file's blocks, and on a file system mounted with `discard` the rename waits for
    /// their discard (on this project's VM, 50k renames 1.27–1.54 s, four discards in flight);
    /// written again, the old files' blocks are not freed, and only the last two segments' old
    /// files are removed. Files with no spare folder (their device unknown, or the folder could
    /// not be made) are staged beside their targets and renamed over them.
    FileSystems(&'f FileSystems),
    /// A sync of each temporary file, then of each folder renamed in.
    EachFile,
}

/// The reason given when a file no longer holds what was validated.
pub const CHANGED_BEFORE: &str = "the file changed since it was read; sign it again";
/// The reason given when a replaced file does not hold what was written.
pub const CHANGED_AFTER: &str = "the file changed while it was written; sign it again";

/// Threads that stage, rename (and, where the file system cannot be synced at once, sync)
/// files: a file sync waits on the disk, not on a core, and the file system commits syncs that
/// arrive together at once (on this project's ext4 VM, 1,000 temporary files took 2.9 ms each
/// synced one after another and about 0.2–0.3 ms each with 16 syncs in flight); a rename that
/// frees the old file's blocks on a file system mounted with `discard` waits for the discard
/// (16 in flight: 15 µs a file on this VM, 72 µs one at a time).
const IO_THREADS: usize = 16;

/// At most this many files of one folder are handled by one task (a folder of 100k files is
/// still spread over the threads; each task opens the folder for itself).
const FILES_PER_TASK: usize = 64;

/// Files per segment with `Durability::FileSystems`: a sync per segment, and the old files of
/// the last two segments removed at the end.
const SEGMENT: usize = 4096;

/// What `replace_all` did: each job's outcome, and each sync of the replacements.
pub type Replaced = (Vec<Result<(), String>>, Vec<anyhow::Result<()>>);

/// Replace every `Ok` job; each job's outcome in order (an `Err` job keeps its reason), and the
/// outcome of making the replacements durable (a failure there leaves the files replaced but
/// perhaps not durable: the caller reports it as a notice).
pub fn replace_all(
    jobs: Vec<Result<Replace<'_>, String>>,
    durability: &Durability<'_>,
) -> Replaced {
    replace_in_segments(jobs, durability, SEGMENT)
}

/// `replace_all` with segments of `segment` files.
fn replace_in_segments(
    jobs: Vec<Result<Replace<'_>, String>>,
    durability: &Durability<'_>,
    segment: usize,
) -> Replaced {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(IO_THREADS.max(rayon::current_num_threads()))
        .build()
        .ok();
    let pool = pool.as_ref();
    match durability {
        Durability::EachFile => {
            let staged = stage(pool, &jobs, &[], Vec::new(), true);
            let (committed, _) = commit(pool, &jobs, staged, None, &[]);
            let dirs: BTreeSet<&Path> = jobs
                .iter()
                .zip(&committed)
                .filter(|(_, c)| c.is_ok())
                .filter_map(|(job, _)| job.as_ref().ok()?.path.parent())
                .collect();
            let synced = install(pool, || dirs.into_par_iter().map(sync_dir).collect());
            (committed, synced)
        }
        Durability::FileSystems(fs) => {
            let spares: Vec<imp::Spares> = fs
                .folders()
                .filter_map(|(dev, dir)| imp::Spares::make(dev, dir))
                .collect();
            let mut committed = Vec::with_capacity(jobs.len());
            // The old files of the last two segments, by parity: those of segment k - 2 are
            // written again in segment k (the sync before segment k - 1's exchanges put
            // segment k - 2's on disk).
            let mut free: [Vec<Option<imp::Slot>>; 2] = [Vec::new(), Vec::new()];
            let mut failed: Option<String> = None;
            for (k, segment) in jobs.chunks(segment.max(1)).enumerate() {
                let mut slots = std::mem::take(&mut free[k % 2]);
                if let Some(why) = &failed {
                    remove(pool, &spares, slots);
                    committed.extend(segment.iter().map(|j| match j {
                        Err(e) => Err(e.clone()),
                        Ok(_) => Err(why.clone()),
                    }));
                    continue;
                }
                let unused = slots.split_off(slots.len().min(segment.len()));
                remove(pool, &spares, unused);
                let staged = stage(pool, segment, &spares, slots, false);
                failed = fs
                    .sync()
                    .err()
                    .map(|e| format!("{e:#}; this file was not replaced"));
                let (done, freed) = commit(pool, segment, staged, failed.as_deref(), &spares);
                free[k % 2] = freed;
                committed.extend(done);
            }
            // The last exchanges made durable beside the removal of the old files left (each
            // removal waits for its discard where the file system discards).
            let ((), synced) = beside(
                || fs.sync(),
                || {
                    for slots in free {
                        remove(pool, &spares, slots);
                    }
                    for s in spares {
                        s.close();
                    }
                },
            );
            (committed, vec![synced])
        }
    }
}

/// Stage `jobs` (one task per run of a folder), in spare folders where there is one for the
/// job's device — writing `slots[i]` again for job `i` where it can — else beside the target
/// (and sync each file, when `each_file`).
fn stage(
    pool: Option<&rayon::ThreadPool>,
    jobs: &[Result<Replace<'_>, String>],
    spares: &[imp::Spares],
    slots: Vec<Option<imp::Slot>>,
    each_file: bool,
) -> Vec<Vec<Result<imp::Staged, String>>> {
    let tasks = tasks(jobs);
    let mut slots = slots.into_iter();
    let given: Vec<Vec<Option<imp::Slot>>> = tasks
        .iter()
        .map(|r| slots.by_ref().take(r.len()).collect())
        .collect();
    install(pool, || {
        tasks
            .into_par_iter()
            .zip(given)
            .map(|(range, slots)| imp::stage_task(&jobs[range], each_file, spares, slots))
            .collect()
    })
}

/// Put each staged file in its target's place and check the target is then the file staged,
/// unchanged; with `failed` (the file systems could not be synced), remove them instead. Each
/// job's outcome, and the old files left in spare folders to be written again (by job).
fn commit(
    pool: Option<&rayon::ThreadPool>,
    jobs: &[Result<Replace<'_>, String>],
    staged: Vec<Vec<Result<imp::Staged, String>>>,
    failed: Option<&str>,
    spares: &[imp::Spares],
) -> (Vec<Result<(), String>>, Vec<Option<imp::Slot>>) {
    let done: Vec<Vec<imp::Done>> = install(pool, || {
        tasks(jobs)
            .into_par_iter()
            .zip(staged)
            .map(|(range, st)| imp::commit_task(&jobs[range], st, failed, spares))
            .collect()
    });
    done.into_iter().flatten().unzip()
}

/// Remove old files left in spare folders (each waits for its blocks' discard where the file
/// system discards: on the I/O threads).
fn remove(pool: Option<&rayon::ThreadPool>, spares: &[imp::Spares], slots: Vec<Option<imp::Slot>>) {
    install(pool, || {
        slots
            .into_par_iter()
            .with_min_len(FILES_PER_TASK)
            .flatten()
            .for_each(|s| imp::remove(spares, s));
    });
}

/// Run `sync` on a thread of its own beside `work`; both results.
fn beside<W: Send>(
    sync: impl FnOnce() -> anyhow::Result<()> + Send,
    work: impl FnOnce() -> W,
) -> (W, anyhow::Result<()>) {
    std::thread::scope(|s| {
        let synced = s.spawn(sync);
        let done = work();
        let synced = synced
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the file system sync did not finish")));
        (done, synced)
    })
}

/// Run `f` on the I/O pool when there is one (else on rayon's global pool).
fn install<R: Send>(pool: Option<&rayon::ThreadPool>, f: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// The jobs split into tasks: runs of jobs in one folder, at most `FILES_PER_TASK` each.
fn tasks(jobs: &[Result<Replace<'_>, String>]) -> Vec<std::ops::Range<usize>> {
    fn dir<'a>(j: &Result<Replace<'a>, String>) -> Option<&'a Path> {
        j.as_ref().ok().and_then(|r| r.path.parent())
    }
    let mut tasks = Vec::new();
    let mut start = 0;
    for i in 1..=jobs.len() {
        if i == jobs.len() || i - start == FILES_PER_TASK || dir(&jobs[i]) != dir(&jobs[start]) {
            if start < i {
                tasks.push(start..i);
            }
            start = i;
        }
    }
    tasks
}

/// The name of a temporary file beside `name`.
fn temporary_name(name: &str) -> String {
    format!(".{name}.{}.tmp", unique())
}

/// `<pid>.<nanos>`: a name part no other process, and no earlier call here, is likely to use.
fn unique() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    // (The process id asked once: a system call each time.)
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    format!("{}.{nanos}", PID.get_or_init(std::process::id))
}

#[cfg(unix)]
mod imp {
    //! Through open folders (`openat`, `renameat`, `renameat2`, `unlinkat`).
    use std::ffi::{CString, OsStr};
    use std::io::{Read as _, Write as _};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU64, Ordering};

    use std::os::unix::fs::DirBuilderExt as _;

    use super::{CHANGED_AFTER, CHANGED_BEFORE, FileStamp, Replace, temporary_name, unique};

    /// A staged temporary file: its name (in the target's folder, or in a spare folder), what
    /// `fstat` said of it once written, and — staged in a spare folder — which one and the stamp
    /// of the old file checked (what the exchange must take out of the target's place).
    pub struct Staged {
        tmp: CString,
        stamp: Stamp,
        spare: Option<(usize, Stamp)>,
    }

    /// A job's outcome, and the old file its exchange left in a spare folder.
    pub type Done = (Result<(), String>, Option<Slot>);

    /// An old file in a spare folder (by index), to be written again or removed.
    pub struct Slot {
        spares: usize,
        name: CString,
    }

    /// What shows a file is the one staged, its bytes unchanged since: its inode, size and
    /// modification time (any write moves it; not its change time, which the rename itself
    /// moves on ext4 and others). Compared instead of reading the file back: one `fstatat` for
    /// an open, `fstat`, two reads and a close.
    #[derive(Clone, Copy, PartialEq, Eq)]
    struct Stamp {
        dev: u64,
        ino: u64,
        size: u64,
        mtime_ns: i64,
    }

    impl Stamp {
        /// The stamp of what a `stat` call said, `None` for anything but a regular file: the
        /// staged file by its descriptor, the renamed one by its name.
        fn of(st: &libc::stat) -> Option<Stamp> {
            let regular = (st.st_mode & libc::S_IFMT) == libc::S_IFREG;
            regular.then(|| Stamp::from(crate::system::os::stamp_of_stat(st)))
        }
    }

    impl From<FileStamp> for Stamp {
        fn from(s: FileStamp) -> Stamp {
            Stamp {
                dev: s.dev,
                ino: s.ino,
                size: s.size,
                mtime_ns: s.mtime_ns,
            }
        }
    }

    /// What a `stat` call (`call`, given where to write) says; `None` when it fails.
    fn stat_by(call: impl FnOnce(*mut libc::stat) -> libc::c_int) -> Option<libc::stat> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        if call(st.as_mut_ptr()) != 0 {
            return None;
        }
        // SAFETY: the call succeeded and filled `st`.
        Some(unsafe { st.assume_init() })
    }

    /// `fstat` of an open descriptor (a file's, a folder's).
    fn fstat(fd: &impl AsRawFd) -> Option<libc::stat> {
        // SAFETY: the descriptor is open for the call and `st` points at room for a `stat`.
        stat_by(|st| unsafe { libc::fstat(fd.as_raw_fd(), st) })
    }

    /// A folder held open (`O_PATH` where there is one: nothing is read through it).
    struct Folder {
        path: PathBuf,
        fd: OwnedFd,
    }

    impl Folder {
        fn open(path: &Path) -> std::io::Result<Folder> {
            let c = CString::new(path.as_os_str().as_bytes())
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
            #[cfg(target_os = "linux")]
            let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
            #[cfg(not(target_os = "linux"))]
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
            // SAFETY: `c` is NUL-terminated; the descriptor returned is owned by nobody else.
            let fd = unsafe { libc::open(c.as_ptr(), flags) };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: `fd` was just opened and is owned by nothing else.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            Ok(Folder {
                path: path.to_path_buf(),
                fd,
            })
        }

        /// Open `name` here with `flags` (and `mode`, when creating).
        fn open_at(&self, name: &CString, flags: i32, mode: u32) -> std::io::Result<std::fs::File> {
            // SAFETY: the folder's descriptor is open for the call and `name` NUL-terminated; the
            // descriptor returned is owned by nobody else.
            let fd = unsafe {
                libc::openat(
                    self.fd.as_raw_fd(),
                    name.as_ptr(),
                    flags | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                    mode,
                )
            };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: `fd` was just opened and is owned by nothing else.
            Ok(unsafe { std::fs::File::from_raw_fd(fd) })
        }

        /// Whether `name` here is a regular file (not a symlink) holding exactly `bytes` (its
        /// size, then its bytes); then its permission bits and its stamp.
        fn holds(&self, name: &CString, bytes: &[u8]) -> Option<(u32, Stamp)> {
            // Non-blocking: a FIFO put in the file's place must not hang the batch.
            let mut f = self
                .open_at(name, libc::O_RDONLY | libc::O_NONBLOCK, 0)
                .ok()?;
            let st = fstat(&f)?;
            let stamp = Stamp::of(&st)?;
            if stamp.size != bytes.len() as u64 {
                return None;
            }
            let mut buf = vec![0; bytes.len()];
            f.read_exact(&mut buf).ok()?;
            let mode = crate::system::os::stamp_of_stat(&st).mode & 0o7777;
            (buf == bytes).then_some((mode, stamp))
        }

        /// Whether `name` here (not followed if a symlink) is a regular file that still has
        /// `stamp`, every field of it; then its permission bits and its stamp.
        fn has(&self, name: &CString, stamp: &FileStamp) -> Option<(u32, Stamp)> {
            let st = self.stat(name)?;
            let now = crate::system::os::stamp_of_stat(&st);
            let regular = (st.st_mode & libc::S_IFMT) == libc::S_IFREG;
            (regular && now == *stamp).then_some((now.mode & 0o7777, Stamp::from(now)))
        }

        /// Whether the target `name` here still holds what `job` says was validated (by its
        /// stamp, else its bytes); then its permission bits and its stamp.
        fn check(&self, name: &CString, job: &Replace<'_>) -> Option<(u32, Stamp)> {
            match &job.stamp {
                Some(stamp) => self.has(name, stamp),
                None => self.holds(name, job.old),
            }
        }

        /// `name` here, not followed if a symlink, as a stamp (`None`: not a regular file).
        fn stamp(&self, name: &CString) -> Option<Stamp> {
            Stamp::of(&self.stat(name)?)
        }

        /// `fstatat` of `name` here, not followed if a symlink.
        fn stat(&self, name: &CString) -> Option<libc::stat> {
            // SAFETY: the folder's descriptor is open for the call, `name` NUL-terminated and
            // `st` points at room for a `stat`.
            stat_by(|st| unsafe {
                libc::fstatat(
                    self.fd.as_raw_fd(),
                    name.as_ptr(),
                    st,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            })
        }

        fn unlink(&self, name: &CString) {
            // SAFETY: the folder's descriptor is open for the call and `name` NUL-terminated.
            unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) };
        }

        /// Rename `from` here to `to` in `dir`.
        fn rename(&self, from: &CString, dir: &Folder, to: &CString) -> std::io::Result<()> {
            // SAFETY: both folders' descriptors are open for the call; both names
            // NUL-terminated.
            let r = unsafe {
                libc::renameat(
                    self.fd.as_raw_fd(),
                    from.as_ptr(),
                    dir.fd.as_raw_fd(),
                    to.as_ptr(),
                )
            };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }

        /// Exchange `a` here and `b` in `dir`, atomically (each name then refers to the other's
        /// file). `Unsupported` where the platform or the file system cannot.
        fn exchange(&self, a: &CString, dir: &Folder, b: &CString) -> std::io::Result<()> {
            #[cfg(target_os = "linux")]
            {
                // SAFETY: both folders' descriptors are open for the call; both names
                // NUL-terminated; `renameat2` takes exactly these arguments.
                let r = unsafe {
                    libc::syscall(
                        libc::SYS_renameat2,
                        self.fd.as_raw_fd(),
                        a.as_ptr(),
                        dir.fd.as_raw_fd(),
                        b.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
                if r == 0 {
                    return Ok(());
                }
                let e = std::io::Error::last_os_error();
                let unsupported = [libc::EINVAL, libc::ENOSYS, libc::EOPNOTSUPP];
                if e.raw_os_error().is_some_and(|n| unsupported.contains(&n)) {
                    return Err(std::io::Error::new(std::io::ErrorKind::Unsupported, e));
                }
                Err(e)
            }
            #[cfg(not(target_os = "linux"))]
            {
                let _ = (a, dir, b);
                Err(std::io::ErrorKind::Unsupported.into())
            }
        }
    }

    /// A file system's spare folder: made by this process (mode 0700) in the folder the file
    /// system is synced through, new texts staged in it and old files kept there to be written
    /// again; removed when the batch is done.
    pub struct Spares {
        dev: u64,
        folder: Folder,
        next: AtomicU64,
    }

    impl Spares {
        /// A spare folder in `dir` on device `dev`; `None` when it cannot be made there, or is
        /// not on `dev`.
        pub fn make(dev: u64, dir: &Path) -> Option<Spares> {
            let path = dir.join(format!(".ryechain-sign.{}", unique()));
            std::fs::DirBuilder::new().mode(0o700).create(&path).ok()?;
            let folder = Folder::open(&path).ok();
            let on_dev = folder.as_ref().and_then(|f| fstat(&f.fd));
            match (folder, on_dev) {
                (Some(folder), Some(st)) if crate::system::os::stamp_of_stat(&st).dev == dev => {
                    Some(Spares {
                        dev,
                        folder,
                        next: AtomicU64::new(0),
                    })
                }
                _ => {
                    let _ = std::fs::remove_dir(&path);
                    None
                }
            }
        }

        /// A name not used yet in the spare folder.
        fn fresh_name(&self) -> CString {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            CString::new(format!("{n}.tmp")).expect("no NUL in a number")
        }

        /// Remove the (empty by now) spare folder; one that cannot be removed stays.
        pub fn close(self) {
            let Folder { path, fd } = self.folder;
            drop(fd);
            let _ = std::fs::remove_dir(path);
        }
    }

    /// Remove an old file left in a spare folder.
    pub fn remove(spares: &[Spares], slot: Slot) {
        if let Some(s) = spares.get(slot.spares) {
            s.folder.unlink(&slot.name);
        }
    }

    /// `slot` (in `spares`) opened to be written again, its write lease held (released when the
    /// file is closed), and its permission bits — when that is safe: a regular file with one
    /// link, this process's owner and group, no extended attributes, and nothing else has it
    /// open (a write lease is granted only then; whoever opens it by its spare name while the
    /// lease is held waits until the file is closed). `None` otherwise.
    fn reuse(spares: &Spares, slot: &CString) -> Option<(std::fs::File, u32)> {
        // The process's identity, asked once.
        static IDS: std::sync::OnceLock<(libc::uid_t, libc::gid_t)> = std::sync::OnceLock::new();
        // SAFETY: plain queries of the process's identity.
        let (uid, gid) = *IDS.get_or_init(|| unsafe { (libc::geteuid(), libc::getegid()) });
        let file = spares.folder.open_at(slot, libc::O_WRONLY, 0).ok()?;
        let st = fstat(&file)?;
        let regular = (st.st_mode & libc::S_IFMT) == libc::S_IFREG;
        (regular && st.st_nlink == 1 && st.st_uid == uid && st.st_gid == gid).then_some(())?;
        let mode = crate::system::os::stamp_of_stat(&st).mode & 0o7777;
        (no_extended_attributes(&file) && lease(&file)).then_some((file, mode))
    }

    /// Whether `file` has no extended attributes (an ACL or a security label it must not carry
    /// to another file).
    #[cfg(target_os = "linux")]
    fn no_extended_attributes(file: &std::fs::File) -> bool {
        // SAFETY: the descriptor is open for the call; a null list of size 0 asks the size.
        let n = unsafe { libc::flistxattr(file.as_raw_fd(), std::ptr::null_mut(), 0) };
        n == 0
            || (n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EOPNOTSUPP))
    }

    #[cfg(not(target_os = "linux"))]
    fn no_extended_attributes(_file: &std::fs::File) -> bool {
        false
    }

    /// Take a write lease on `file`: granted only when no other open file refers to it.
    #[cfg(target_os = "linux")]
    fn lease(file: &std::fs::File) -> bool {
        // A lease broken by someone opening the file signals its holder with SIGIO, which
        // would end the process: ignored (this process uses no SIGIO).
        static IGNORED: std::sync::Once = std::sync::Once::new();
        IGNORED.call_once(|| {
            // SAFETY: setting a signal's disposition to "ignore" runs no handler code.
            unsafe { libc::signal(libc::SIGIO, libc::SIG_IGN) };
        });
        // SAFETY: the descriptor is open for the call.
        unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_WRLCK) == 0 }
    }

    /// No leases here: whether another process has the file open cannot be known.
    #[cfg(not(target_os = "linux"))]
    fn lease(_file: &std::fs::File) -> bool {
        false
    }

    /// The folder and the file name of a job's path.
    fn split(path: &Path) -> Option<(&Path, &OsStr)> {
        let name = path.file_name()?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        Some((dir.unwrap_or(Path::new(".")), name))
    }

    fn c_name(name: &OsStr) -> Option<CString> {
        CString::new(name.as_bytes()).ok()
    }

    /// The bits the process's umask clears (Linux: `/proc/self/status`; read once; `None` when
    /// unknown: the exact bits are then always set).
    fn umask() -> Option<u32> {
        static UMASK: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
        *UMASK.get_or_init(|| {
            let status = std::fs::read_to_string("/proc/self/status").ok()?;
            let line = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
            u32::from_str_radix(line.trim(), 8).ok()
        })
    }

    /// Stage the jobs of one task (all in one folder): check each file still holds its old
    /// bytes, write its new bytes to a temporary file with its permission bits — in the spare
    /// folder of its device if there is one (`slots[i]` written again for job `i` where that is
    /// safe, else a new file), else beside it (and sync it, when `sync`). Slots not written
    /// again are removed.
    pub fn stage_task(
        jobs: &[Result<Replace<'_>, String>],
        sync: bool,
        spares: &[Spares],
        slots: Vec<Option<Slot>>,
    ) -> Vec<Result<Staged, String>> {
        let mut slots = slots.into_iter();
        let first = jobs.iter().find_map(|j| j.as_ref().ok());
        let folder = first
            .and_then(|j| split(j.path))
            .map(|(dir, _)| Folder::open(dir));
        let staged = jobs
            .iter()
            .map(|job| {
                let slot = slots.next().flatten();
                let spare = job.as_ref().ok().and_then(|j| {
                    let dev = j.dev?;
                    spares.iter().position(|s| s.dev == dev)
                });
                // The slot goes to its job when in that job's spare folder, else it is removed.
                let slot = match slot {
                    Some(s) if Some(s.spares) == spare => Some(s.name),
                    Some(s) => {
                        remove(spares, s);
                        None
                    }
                    None => None,
                };
                let job = job.as_ref().map_err(Clone::clone)?;
                let folder = match &folder {
                    Some(Ok(f)) => Ok(f),
                    Some(Err(e)) => Err(format!(
                        "cannot create a temporary file in {}: {e}",
                        job.path.parent().unwrap_or(job.path).display()
                    )),
                    None => Err(CHANGED_BEFORE.to_owned()),
                };
                let spare = spare.map(|i| (i, &spares[i]));
                match folder {
                    Ok(folder) => stage_one(folder, job, sync, spare, slot),
                    Err(e) => {
                        if let (Some((_, spares)), Some(name)) = (spare, &slot) {
                            spares.folder.unlink(name);
                        }
                        Err(e)
                    }
                }
            })
            .collect();
        slots.flatten().for_each(|s| remove(spares, s));
        staged
    }

    /// Stage `job`: check its target still holds what was validated, then write its new text —
    /// in the spare folder `spare` (index and folder) when given, to `slot` when that is safe
    /// to write again (`reuse`) else to a new file (the slot is removed), or else to a new file
    /// beside the target (synced, when `sync`).
    fn stage_one(
        folder: &Folder,
        job: &Replace<'_>,
        sync: bool,
        spare: Option<(usize, &Spares)>,
        slot: Option<CString>,
    ) -> Result<Staged, String> {
        let checked = split(job.path)
            .and_then(|(_, name)| Some((name, c_name(name)?)))
            // What was validated and hashed must still be what the file holds.
            .and_then(|(name, target)| Some((name, folder.check(&target, job)?)));
        let Some((name, (mode, old))) = checked else {
            if let (Some((_, spares)), Some(slot)) = (spare, &slot) {
                spares.folder.unlink(slot);
            }
            return Err(CHANGED_BEFORE.to_owned());
        };
        let Some((i, spares)) = spare else {
            let tmp = CString::new(temporary_name(&name.to_string_lossy()))
                .map_err(|_| CHANGED_BEFORE.to_owned())?;
            let stamp = write_new(folder, &tmp, None, job.new, mode, sync)?;
            return Ok(Staged {
                tmp,
                stamp,
                spare: None,
            });
        };
        let (tmp, file) = match slot.map(|s| {
            let file = reuse(spares, &s);
            (s, file)
        }) {
            Some((s, Some(file))) => (s, Some(file)),
            Some((s, None)) => {
                spares.folder.unlink(&s);
                (spares.fresh_name(), None)
            }
            None => (spares.fresh_name(), None),
        };
        let stamp = write_new(&spares.folder, &tmp, file, job.new, mode, false)?;
        Ok(Staged {
            tmp,
            stamp,
            spare: Some((i, old)),
        })
    }

    /// Write `new` to `tmp` in `folder` with permission bits `mode` — to `file` (an old file
    /// opened to be written again, with its permission bits: written from its start, cut to the
    /// new length) or to a new file — and sync it when `sync`; its stamp once written. A file
    /// that cannot be written is removed.
    fn write_new(
        folder: &Folder,
        tmp: &CString,
        file: Option<(std::fs::File, u32)>,
        new: &[u8],
        mode: u32,
        sync: bool,
    ) -> Result<Stamp, String> {
        let tmp_path = || {
            folder
                .path
                .join(OsStr::from_bytes(tmp.as_bytes()))
                .display()
                .to_string()
        };
        let (mut file, again) = match file {
            Some((f, had)) => (f, Some(had)),
            None => {
                let f = folder
                    .open_at(tmp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, mode)
                    .map_err(|e| {
                        format!(
                            "cannot create a temporary file in {}: {e}",
                            folder.path.display()
                        )
                    })?;
                (f, None)
            }
        };
        let written = (|| {
            use std::os::unix::fs::PermissionsExt;
            // A new file's creation mode is masked by the umask: the exact bits are set when
            // it masks any; an old file's are set when they differ.
            let set_mode = match again {
                Some(had) => had != mode,
                None => umask().is_none_or(|m| m & mode != 0),
            };
            if set_mode {
                file.set_permissions(std::fs::Permissions::from_mode(mode))
                    .map_err(|e| format!("cannot set the permissions of {}: {e}", tmp_path()))?;
            }
            file.write_all(new)
                .and_then(|()| match again {
                    Some(_) => file.set_len(new.len() as u64),
                    None => Ok(()),
                })
                .and_then(|()| if sync { file.sync_all() } else { Ok(()) })
                .map_err(|e| format!("cannot write {}: {e}", tmp_path()))?;
            fstat(&file)
                .as_ref()
                .and_then(Stamp::of)
                .ok_or_else(|| format!("cannot stat {} once written", tmp_path()))
        })();
        if written.is_err() {
            folder.unlink(tmp);
        }
        written
    }

    /// Put the staged files of one task in their targets' places and check each target is then
    /// the file staged, unchanged; with `failed` (the file systems could not be synced), remove
    /// them instead. A file staged beside its target is renamed over it; one staged in a spare
    /// folder is exchanged with it, and the old file it takes out must be the one checked —
    /// else it is put back (`CHANGED_BEFORE`). Each job's outcome, and the old file left in a
    /// spare folder, to be written again.
    pub fn commit_task(
        jobs: &[Result<Replace<'_>, String>],
        staged: Vec<Result<Staged, String>>,
        failed: Option<&str>,
        spares: &[Spares],
    ) -> Vec<Done> {
        let first = jobs.iter().find_map(|j| j.as_ref().ok());
        let folder = first
            .and_then(|j| split(j.path))
            .map(|(dir, _)| Folder::open(dir));
        jobs.iter()
            .zip(staged)
            .map(|(job, st)| {
                let (st, job) = match (st, job) {
                    (Ok(st), Ok(job)) => (st, job),
                    (Err(e), _) => return (Err(e), None),
                    (Ok(_), Err(e)) => return (Err(e.clone()), None),
                };
                let cannot = |e: &dyn std::fmt::Display| {
                    format!("cannot replace {}: {e}", job.path.display())
                };
                let target_folder = match &folder {
                    Some(Ok(f)) => Ok(f),
                    Some(Err(e)) => Err(cannot(e)),
                    None => Err(CHANGED_AFTER.to_owned()),
                };
                let folder = match target_folder {
                    Ok(f) => f,
                    // (A file staged beside its target cannot be reached to remove it: it
                    // stays, as after a crash.)
                    Err(why) => {
                        if let Some((i, _)) = st.spare {
                            spares[i].folder.unlink(&st.tmp);
                        }
                        return (Err(why), None);
                    }
                };
                // Where the staged file is: a spare folder, or its target's folder.
                let in_folder = match st.spare {
                    Some((i, _)) => &spares[i].folder,
                    None => folder,
                };
                let fail = |why: String| {
                    in_folder.unlink(&st.tmp);
                    (Err(why), None)
                };
                if let Some(why) = failed {
                    return fail(why.to_owned());
                }
                let Some(target) = split(job.path).and_then(|(_, n)| c_name(n)) else {
                    return fail(CHANGED_AFTER.to_owned());
                };
                // From a spare folder, exchanged (else, or where the file system cannot,
                // renamed over the target).
                let exchanged = match st.spare {
                    Some(_) => match in_folder.exchange(&st.tmp, folder, &target) {
                        Ok(()) => true,
                        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => false,
                        Err(e) => return fail(cannot(&e)),
                    },
                    None => false,
                };
                let slot = match st.spare {
                    Some((i, old)) if exchanged => {
                        // The file taken out must be the one checked; else it goes back.
                        if in_folder.stamp(&st.tmp) != Some(old) {
                            return (put_back(in_folder, &st.tmp, folder, &target), None);
                        }
                        Some(Slot {
                            spares: i,
                            name: st.tmp,
                        })
                    }
                    _ => {
                        if let Err(e) = in_folder.rename(&st.tmp, folder, &target) {
                            return fail(cannot(&e));
                        }
                        None
                    }
                };
                let done = if folder.stamp(&target).is_some_and(|s| s == st.stamp) {
                    Ok(())
                } else {
                    Err(CHANGED_AFTER.to_owned())
                };
                (done, slot)
            })
            .collect()
    }

    /// The target changed between its check and the exchange: exchange back (the target holds
    /// again what it held; the new file, now at `tmp`, goes) and report it.
    fn put_back(
        spares: &Folder,
        tmp: &CString,
        folder: &Folder,
        target: &CString,
    ) -> Result<(), String> {
        match spares.exchange(tmp, folder, target) {
            Ok(()) => {
                spares.unlink(tmp);
                Err(CHANGED_BEFORE.to_owned())
            }
            Err(e) => Err(format!(
                "{CHANGED_BEFORE}: it was replaced while it changed, and could not be put back \
                 ({e}); what it held is in {}",
                spares
                    .path
                    .join(OsStr::from_bytes(tmp.as_bytes()))
                    .display()
            )),
        }
    }
}

#[cfg(not(unix))]
mod imp {
    //! By path, with `std::fs`.
    use std::io::Write as _;
    use std::path::PathBuf;

    use super::{CHANGED_AFTER, CHANGED_BEFORE, Replace, temporary_name};

    /// A staged temporary file: its path.
    pub struct Staged {
        tmp: PathBuf,
    }

    /// No old file is written again here (no exchange of two names, no leases).
    pub enum Slot {}

    /// A job's outcome (never an old file to write again).
    pub type Done = (Result<(), String>, Option<Slot>);

    /// No spare folders here.
    pub struct Spares;

    impl Spares {
        pub fn make(_dev: u64, _dir: &std::path::Path) -> Option<Spares> {
            None
        }

        pub fn close(self) {}
    }

    pub fn remove(_spares: &[Spares], slot: Slot) {
        match slot {}
    }

    fn holds(path: &std::path::Path, bytes: &[u8]) -> bool {
        std::fs::read(path).is_ok_and(|b| b == bytes)
    }

    pub fn stage_task(
        jobs: &[Result<Replace<'_>, String>],
        sync: bool,
        _spares: &[Spares],
        _slots: Vec<Option<Slot>>,
    ) -> Vec<Result<Staged, String>> {
        jobs.iter()
            .map(|job| {
                let job = job.as_ref().map_err(Clone::clone)?;
                if !holds(job.path, job.old) {
                    return Err(CHANGED_BEFORE.to_owned());
                }
                let name = job
                    .path
                    .file_name()
                    .ok_or_else(|| CHANGED_BEFORE.to_owned())?;
                let tmp = job
                    .path
                    .with_file_name(temporary_name(&name.to_string_lossy()));
                let written = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&tmp)
                    .and_then(|mut f| {
                        f.write_all(job.new)?;
                        if sync { f.sync_all() } else { Ok(()) }
                    });
                match written {
                    Ok(()) => Ok(Staged { tmp }),
                    Err(e) => {
                        let _ = std::fs::remove_file(&tmp);
                        Err(format!("cannot write {}: {e}", tmp.display()))
                    }
                }
            })
            .collect()
    }

    pub fn commit_task(
        jobs: &[Result<Replace<'_>, String>],
        staged: Vec<Result<Staged, String>>,
        failed: Option<&str>,
        _spares: &[Spares],
    ) -> Vec<Done> {
        jobs.iter()
            .zip(staged)
            .map(|(job, st)| {
                let st = st?;
                let job = job.as_ref().map_err(Clone::clone)?;
                if let Some(why) = failed {
                    let _ = std::fs::remove_file(&st.tmp);
                    return Err(why.to_owned());
                }
                if let Err(e) = std::fs::rename(&st.tmp, job.path) {
                    let _ = std::fs::remove_file(&st.tmp);
                    return Err(format!("cannot replace {}: {e}", job.path.display()));
                }
                if holds(job.path, job.new) {
                    Ok(())
                } else {
                    Err(CHANGED_AFTER.to_owned())
                }
            })
            .map(|done| (done, None))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kept job replaced (bytes and exact permission bits, even bits the umask clears);
    /// a file that no longer holds what was validated, a symlink or a FIFO put in a file's
    /// place, and a job refused before are left as they are, with their reasons; no temporary
    /// file is left behind. With each durability.
    #[test]
    #[cfg(unix)]
    fn files_are_replaced_with_their_modes_and_changed_ones_are_left() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        for by_file_system in [true, false] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            let paths: Vec<std::path::PathBuf> = ["a.py", "sub/b.py", "sub/c.py", "d.py"]
                .iter()
                .map(|n| dir.join(n))
                .collect();
            for (p, mode) in paths.iter().zip([0o640, 0o755, 0o644, 0o666]) {
                std::fs::write(p, "old\n").unwrap();
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            std::fs::write(&paths[2], "edited\n").unwrap();
            let link = dir.join("link.py");
            std::os::unix::fs::symlink(&paths[0], &link).unwrap();
            let fifo = dir.join("fifo.py");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: `c` is NUL-terminated.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            let specials = [link.clone(), fifo.clone()];
            let mut jobs = old_to_new(&paths);
            jobs.extend(old_to_new(&specials));
            jobs.push(Err("refused".to_owned()));
            let dev = std::fs::metadata(dir).unwrap().dev();
            let fs = FileSystems::open([(dev, paths[0].as_path())]);
            let durability = match (&fs, by_file_system) {
                (Some(fs), true) => Durability::FileSystems(fs),
                _ => Durability::EachFile,
            };
            // Segments of two: the old files of the first written again in the third.
            let (done, synced) = replace_in_segments(jobs, &durability, 2);
            assert!(synced.iter().all(Result::is_ok));
            assert_eq!(
                done,
                vec![
                    Ok(()),
                    Ok(()),
                    Err(CHANGED_BEFORE.to_owned()),
                    Ok(()),
                    Err(CHANGED_BEFORE.to_owned()),
                    Err(CHANGED_BEFORE.to_owned()),
                    Err("refused".to_owned()),
                ]
            );
            let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
            assert_eq!(read(&paths[0]), "new\n");
            assert_eq!(read(&paths[1]), "new\n");
            assert_eq!(read(&paths[2]), "edited\n");
            assert_eq!(read(&paths[3]), "new\n");
            assert!(
                std::fs::symlink_metadata(&link)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
            let modes: Vec<u32> = paths
                .iter()
                .map(|p| std::fs::metadata(p).unwrap().mode() & 0o7777)
                .collect();
            assert_eq!(modes, [0o640, 0o755, 0o644, 0o666]);
            for d in [dir.to_path_buf(), dir.join("sub")] {
                let stray = temporaries(&d);
                assert!(stray.is_empty(), "{stray:?}");
            }
        }
    }

    /// Each of `paths` written with `old {i}`; the texts of its job, `old {i}` → `new {i}, …`
    /// (each file its own texts).
    fn numbered(paths: &[std::path::PathBuf]) -> Vec<(String, String)> {
        paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let old = format!("old {i}\n");
                std::fs::write(p, &old).unwrap();
                (old, format!("new {i}, a longer text than the old one\n"))
            })
            .collect()
    }

    /// `n` files `f{i}.py` in `dir` (by `numbered`), and the device they are on.
    #[cfg(target_os = "linux")]
    fn numbered_in(
        dir: &std::path::Path,
        n: usize,
    ) -> (Vec<std::path::PathBuf>, u64, Vec<(String, String)>) {
        use std::os::unix::fs::MetadataExt;
        let paths: Vec<std::path::PathBuf> = (0..n).map(|i| dir.join(format!("f{i}.py"))).collect();
        let texts = numbered(&paths);
        (paths, std::fs::metadata(dir).unwrap().dev(), texts)
    }

    /// Jobs of `paths` and their `texts`, checked by their bytes, on device `dev` (staged in
    /// its spare folder).
    fn jobs_of<'t>(
        paths: &'t [std::path::PathBuf],
        texts: &'t [(String, String)],
        dev: u64,
    ) -> Vec<Result<Replace<'t>, String>> {
        paths
            .iter()
            .zip(texts)
            .map(|(p, (old, new))| {
                Ok(Replace {
                    path: p,
                    old: old.as_bytes(),
                    new: new.as_bytes(),
                    stamp: None,
                    dev: Some(dev),
                })
            })
            .collect()
    }

    /// Synced by file system, in segments: every file gets its own new text and its own
    /// permission bits; the old files of earlier segments are written again as temporary files
    /// (some replaced file now has an inode an old file had), and nothing is left behind — no
    /// temporary file, no spare folder.
    #[test]
    #[cfg(target_os = "linux")]
    #[allow(clippy::print_stderr, reason = "says why a check is left out")]
    fn old_files_are_written_again_in_later_segments() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let paths: Vec<std::path::PathBuf> = (0..13)
            .map(|i| {
                dir.join(if i % 3 == 0 { "sub" } else { "." })
                    .join(format!("f{i}.py"))
            })
            .collect();
        let dev = std::fs::metadata(dir).unwrap().dev();
        let texts = numbered(&paths);
        let modes: Vec<u32> = (0..13)
            .map(|i| if i % 2 == 0 { 0o640 } else { 0o755 })
            .collect();
        for (p, m) in paths.iter().zip(&modes) {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(*m)).unwrap();
        }
        let old_inodes: BTreeSet<u64> = paths
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().ino())
            .collect();
        let fs = FileSystems::open([(dev, paths[0].as_path())]).unwrap();
        let (done, synced) = replace_in_segments(
            jobs_of(&paths, &texts, dev),
            &Durability::FileSystems(&fs),
            3,
        );
        assert!(done.iter().all(Result::is_ok), "{done:?}");
        assert!(synced.iter().all(Result::is_ok));
        let mut reused = 0;
        for ((p, (_, new)), m) in paths.iter().zip(&texts).zip(&modes) {
            assert_eq!(&std::fs::read_to_string(p).unwrap(), new);
            let meta = std::fs::metadata(p).unwrap();
            assert_eq!(meta.mode() & 0o7777, *m, "{}", p.display());
            assert_eq!(meta.nlink(), 1);
            reused += usize::from(old_inodes.contains(&meta.ino()));
        }
        // Segments 2, 3 and 4 (7 files) are staged in the old files of segments 0, 1 and 2 —
        // where the file system exchanges names and grants leases.
        match exchanges_and_leases(dir) {
            Ok(()) => assert_eq!(reused, 7),
            Err(why) => eprintln!("old files not written again on this file system ({why})"),
        }
        for d in [dir.to_path_buf(), dir.join("sub")] {
            let left: Vec<String> = std::fs::read_dir(&d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect();
            assert!(left.is_empty(), "{left:?}");
        }
    }

    /// Whether the file system of `dir` exchanges two names (`RENAME_EXCHANGE`) and grants a
    /// write lease: what writing old files again needs (the tests' temporary folders may be on
    /// another file system than this project's VM's ext4).
    #[cfg(target_os = "linux")]
    fn exchanges_and_leases(dir: &std::path::Path) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let (a, b) = (dir.join(".probe-a"), dir.join(".probe-b"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let c = |p: &std::path::Path| std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        let (ca, cb) = (c(&a), c(&b));
        // SAFETY: both names NUL-terminated; `renameat2` takes exactly these arguments.
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                libc::AT_FDCWD,
                ca.as_ptr(),
                libc::AT_FDCWD,
                cb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        let exchanged = (r == 0)
            .then_some(())
            .ok_or_else(|| format!("exchange: {}", std::io::Error::last_os_error()));
        let file = std::fs::OpenOptions::new().write(true).open(&a).unwrap();
        // SAFETY: the descriptor is open for the call.
        let leased = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_WRLCK) };
        let leased = (leased == 0)
            .then_some(())
            .ok_or_else(|| format!("lease: {}", std::io::Error::last_os_error()));
        drop(file);
        std::fs::remove_file(a).unwrap();
        std::fs::remove_file(b).unwrap();
        exchanged.and(leased)
    }

    /// An old file something else still has open (a reader that opened it before it was
    /// replaced) is not written again: that reader still reads the old text. An old file with
    /// another link is not either: the other name keeps the old text.
    #[test]
    #[cfg(target_os = "linux")]
    fn an_old_file_open_elsewhere_or_linked_elsewhere_is_not_written_again() {
        use std::io::{Read as _, Seek as _};
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (paths, dev, texts) = numbered_in(dir, 8);
        let mut reader = std::fs::File::open(&paths[0]).unwrap();
        std::fs::hard_link(&paths[1], dir.join("kept.txt")).unwrap();
        let fs = FileSystems::open([(dev, paths[0].as_path())]).unwrap();
        let (done, _) = replace_in_segments(
            jobs_of(&paths, &texts, dev),
            &Durability::FileSystems(&fs),
            2,
        );
        assert!(done.iter().all(Result::is_ok), "{done:?}");
        for (p, (_, new)) in paths.iter().zip(&texts) {
            assert_eq!(&std::fs::read_to_string(p).unwrap(), new);
        }
        let mut held = String::new();
        reader.rewind().unwrap();
        reader.read_to_string(&mut held).unwrap();
        assert_eq!(held, texts[0].0);
        assert_eq!(
            reader.metadata().unwrap().nlink(),
            0,
            "removed, not written again"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("kept.txt")).unwrap(),
            texts[1].0
        );
        assert_eq!(std::fs::metadata(dir.join("kept.txt")).unwrap().nlink(), 1);
    }

    /// A target changed after it was checked and before the exchange is put back: it keeps
    /// what it was changed to, the new text is removed, and the job reports `CHANGED_BEFORE`;
    /// an untouched one beside it is replaced.
    #[test]
    #[cfg(target_os = "linux")]
    #[allow(clippy::print_stderr, reason = "a test that skips says why")]
    fn a_target_changed_before_the_exchange_is_put_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        if let Err(why) = exchanges_and_leases(dir) {
            eprintln!("skipped: no exchange of names on this file system ({why})");
            return;
        }
        let (paths, dev, texts) = numbered_in(dir, 2);
        let jobs = jobs_of(&paths, &texts, dev);
        let spares = [imp::Spares::make(dev, dir).unwrap()];
        let staged = imp::stage_task(&jobs, false, &spares, Vec::new());
        std::fs::write(&paths[0], "edited meanwhile\n").unwrap();
        let done: Vec<Result<(), String>> = imp::commit_task(&jobs, staged, None, &spares)
            .into_iter()
            .map(|(done, slot)| {
                if let Some(s) = slot {
                    imp::remove(&spares, s);
                }
                done
            })
            .collect();
        assert_eq!(done, vec![Err(CHANGED_BEFORE.to_owned()), Ok(())]);
        assert_eq!(
            std::fs::read_to_string(&paths[0]).unwrap(),
            "edited meanwhile\n"
        );
        assert_eq!(std::fs::read_to_string(&paths[1]).unwrap(), texts[1].1);
        for s in spares {
            s.close();
        }
        let left: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }

    /// A job per path: `old\n` to `new\n`, checked by its bytes.
    fn old_to_new(paths: &[std::path::PathBuf]) -> Vec<Result<Replace<'_>, String>> {
        paths
            .iter()
            .map(|p| {
                Ok(Replace {
                    path: p,
                    old: b"old\n",
                    new: b"new\n",
                    stamp: None,
                    dev: std::fs::metadata(p).ok().map(|m| {
                        use std::os::unix::fs::MetadataExt;
                        m.dev()
                    }),
                })
            })
            .collect()
    }

    /// The temporary files left in `dir`.
    fn temporaries(dir: &std::path::Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    /// Files `names` in `dir`, each holding `old\n`.
    fn holding_old(dir: &std::path::Path, names: &[&str]) -> Vec<std::path::PathBuf> {
        names
            .iter()
            .map(|n| {
                let p = dir.join(n);
                std::fs::write(&p, "old\n").unwrap();
                p
            })
            .collect()
    }

    /// A staged file written to, or put in place of, between staging and the rename is not
    /// reported as replaced; an untouched one is (`commit_task`'s check of the renamed file).
    #[test]
    #[cfg(unix)]
    fn a_staged_file_changed_before_the_rename_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let paths = holding_old(dir, &["a.py", "b.py", "c.py"]);
        let jobs = old_to_new(&paths);
        let staged = imp::stage_task(&jobs, false, &[], Vec::new());
        let staged_of = |name: &str| {
            std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    let n = p.file_name().unwrap().to_string_lossy();
                    n.starts_with(&format!(".{name}.")) && n.ends_with(".tmp")
                })
                .unwrap()
        };
        // a: the same bytes written again (its modification time moves, its size does not).
        let a = staged_of("a.py");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&a, "new\n").unwrap();
        // b: another file renamed in its place.
        let b = staged_of("b.py");
        std::fs::write(dir.join("other"), "new\n").unwrap();
        std::fs::rename(dir.join("other"), &b).unwrap();
        let done: Vec<Result<(), String>> = imp::commit_task(&jobs, staged, None, &[])
            .into_iter()
            .map(|(done, _)| done)
            .collect();
        assert_eq!(
            done,
            vec![
                Err(CHANGED_AFTER.to_owned()),
                Err(CHANGED_AFTER.to_owned()),
                Ok(())
            ]
        );
        for p in &paths {
            assert_eq!(std::fs::read_to_string(p).unwrap(), "new\n");
        }
    }

    /// A job with a stamp is checked by it alone: a file that still has its stamp is replaced
    /// (the bytes `old` names are not compared — here they are wrong on purpose), with its
    /// permission bits; a file written to since (the same bytes again: its change time moves),
    /// or replaced by another file with the same bytes, is left with `CHANGED_BEFORE`. With
    /// each durability (by file system: staged in the spare folder, exchanged).
    #[test]
    #[cfg(unix)]
    fn a_job_with_a_stamp_is_checked_by_its_stamp() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        for by_file_system in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            let paths = holding_old(dir, &["kept.py", "rewritten.py", "swapped.py"]);
            for p in &paths {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o750)).unwrap();
            }
            let stamps: Vec<FileStamp> = paths
                .iter()
                .map(|p| crate::system::os::stamp_from(&std::fs::metadata(p).unwrap()))
                .collect();
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::fs::write(&paths[1], "old\n").unwrap();
            std::fs::write(dir.join("other"), "old\n").unwrap();
            std::fs::rename(dir.join("other"), &paths[2]).unwrap();
            let jobs: Vec<Result<Replace<'_>, String>> = paths
                .iter()
                .zip(&stamps)
                .map(|(p, s)| {
                    Ok(Replace {
                        path: p,
                        old: b"not what the file holds",
                        new: b"new\n",
                        stamp: Some(*s),
                        dev: Some(s.dev),
                    })
                })
                .collect();
            let fs = FileSystems::open([(stamps[0].dev, paths[0].as_path())]);
            let durability = match (&fs, by_file_system) {
                (Some(fs), true) => Durability::FileSystems(fs),
                _ => Durability::EachFile,
            };
            let (done, _) = replace_all(jobs, &durability);
            assert_eq!(
                done,
                vec![
                    Ok(()),
                    Err(CHANGED_BEFORE.to_owned()),
                    Err(CHANGED_BEFORE.to_owned())
                ]
            );
            let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
            assert_eq!(read(&paths[0]), "new\n");
            assert_eq!(std::fs::metadata(&paths[0]).unwrap().mode() & 0o7777, 0o750);
            assert_eq!(read(&paths[1]), "old\n");
            assert_eq!(read(&paths[2]), "old\n");
            let left = std::fs::read_dir(dir).unwrap().count();
            assert_eq!(left, 3, "nothing but the three files");
        }
    }

    /// A stamp is trusted only when both its times lie more than the racy window before the
    /// read began.
    #[test]
    fn a_stamp_is_settled_only_outside_the_racy_window() {
        let at = |mtime_ns, ctime_ns| FileStamp {
            size: 4,
            mtime_ns,
            ctime_ns,
            ino: 1,
            dev: 1,
            mode: 0o100_644,
        };
        const RACY_NS: i64 = FileStamp::RACY_NS;
        let from = 10 * RACY_NS;
        let old = from - RACY_NS - 1;
        assert_eq!(settled_since(at(old, old), from), Some(at(old, old)));
        assert_eq!(settled_since(at(old, from - RACY_NS), from), None);
        assert_eq!(settled_since(at(from - RACY_NS, old), from), None);
        assert_eq!(settled_since(at(old, from + 1), from), None);
        assert_eq!(settled_since(at(i64::MIN, i64::MIN), i64::MIN), None);
    }

    #[test]
    fn tasks_split_at_folders_and_at_the_task_size() {
        let paths: Vec<std::path::PathBuf> = (0..(FILES_PER_TASK + 3))
            .map(|i| format!("/a/f{i}").into())
            .chain(["/b/x".into(), "/b/y".into(), "/a/z".into()])
            .collect();
        let jobs: Vec<Result<Replace<'_>, String>> = paths
            .iter()
            .map(|p| {
                Ok(Replace {
                    path: p,
                    old: b"",
                    new: b"",
                    stamp: None,
                    dev: None,
                })
            })
            .collect();
        let n = FILES_PER_TASK;
        assert_eq!(
            tasks(&jobs),
            vec![0..n, n..n + 3, n + 3..n + 5, n + 5..n + 6]
        );
        assert!(tasks(&[]).is_empty());
    }
}
