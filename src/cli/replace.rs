//! L6 replacing many files at once, each atomically (`sign` of a batch): every target checked to
//! hold still what was validated (its bytes, or its stamp when that shows it settled before it was
//! read), its new text staged in a temporary file beside it, made durable, renamed over it and
//! checked to be the file written, unchanged — each file reached by its name through its folder,
//! held open (`openat`, `renameat`), not by a lookup of every component of its path.
//!
//! Why a crash leaves every file either old or new: a rename is atomic (the name refers to the old
//! or the new inode, never to neither), and no rename is issued before its temporary file's data
//! is on disk (`Durability`: a sync of each file system written to, for each half of the batch,
//! or a sync of each file; a file system sync that reports an error — any write error there since
//! the batch began — fails every file not renamed yet, and none of them is renamed). A rename
//! that does not survive a crash leaves the old file (and perhaps a stray
//! `.<name>.<pid>.<nanos>.tmp` beside it). The batch as a whole is not atomic: a crash may leave
//! some files replaced and others not.
#![allow(
    clippy::disallowed_methods,
    reason = "the replace edge reads, writes and renames the files being signed"
)]

use std::collections::BTreeSet;
use std::path::Path;

use rayon::prelude::*;

use super::keys::{FileSystems, sync_dir};
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
}

/// `stamp` (taken after the file was read) when it shows the file last changed well before
/// `read_from` (nanoseconds since the epoch, before the read began: the lint cache's racy
/// window, `FileStamp::settled_before`): then what was read is what the file held when stamped.
pub fn settled_since(stamp: FileStamp, read_from: i64) -> Option<FileStamp> {
    stamp.settled_before(read_from).then_some(stamp)
}

/// How a batch's temporary files are made durable before any is renamed.
pub enum Durability<'f> {
    /// A `syncfs` of each file system once half the batch is staged (beside the staging of the
    /// other half), one when all is staged (beside the renames of the first half, before those
    /// of the second), one after the renames (`FileSystems`).
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

/// What `replace_all` did: each job's outcome, and each sync of the renames.
pub type Replaced = (Vec<Result<(), String>>, Vec<anyhow::Result<()>>);

/// Replace every `Ok` job of `first`, then of what `rest` gives; each job's outcome in order
/// (an `Err` job keeps its reason), and the outcome of making the renames durable (a failure
/// there leaves the files replaced but perhaps not durable: the caller reports it as a notice).
/// `rest` (the second half's jobs, their new texts made by it) is called beside the first half's
/// sync when the batch is synced by file system, else before anything is written. When it fails,
/// nothing is renamed: the staged files are removed and its error returned.
pub fn replace_all<'t>(
    first: Vec<Result<Replace<'t>, String>>,
    rest: impl FnOnce() -> anyhow::Result<Vec<Result<Replace<'t>, String>>> + Send,
    durability: &Durability<'_>,
) -> anyhow::Result<Replaced> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(IO_THREADS.max(rayon::current_num_threads()))
        .build()
        .ok();
    let pool = pool.as_ref();
    let each_file = matches!(durability, Durability::EachFile);
    // (1) Stage every new text (and sync each, file by file).
    let stage = |jobs: &[Result<Replace<'t>, String>]| -> Vec<Vec<Result<imp::Staged, String>>> {
        install(pool, || {
            tasks(jobs)
                .par_iter()
                .map(|range| imp::stage_task(&jobs[range.clone()], each_file))
                .collect()
        })
    };
    // (3) Rename each over its target and check it is the file staged, unchanged; with
    // `failed` (the file systems could not be synced), remove the staged files instead.
    let commit = |jobs: &[Result<Replace<'t>, String>],
                  staged: Vec<Vec<Result<imp::Staged, String>>>,
                  failed: Option<&str>|
     -> Vec<Result<(), String>> {
        install(pool, || {
            tasks(jobs)
                .par_iter()
                .zip(staged)
                .map(|(range, st)| imp::commit_task(&jobs[range.clone()], st, failed))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect()
    };
    let not_synced = |e: anyhow::Error| format!("{e:#}; nothing was replaced");
    // (2) Make the staged files durable before any of them is renamed over its target.
    let (jobs, committed) = match durability {
        // In two halves. A file system's writeback runs on one kernel thread (on this project's
        // VM, 0.5–0.8 s of one core for 50k staged files, the other core idle, before any rename
        // could start): the first half's `syncfs` runs beside the making of the second half
        // (`rest`: its signing) and its staging, the second half's beside the renames of the
        // first. A sync reports a write error once: the first's fails both halves, the
        // second's the second half.
        Durability::FileSystems(fs) if !first.is_empty() => {
            let staged_a = stage(&first);
            let (made_b, sync_a) = beside(
                || fs.sync(),
                || {
                    rest().map(|second| {
                        let staged = stage(&second);
                        (second, staged)
                    })
                },
            );
            let (second, staged_b) = match made_b {
                Ok(made) => made,
                Err(e) => {
                    // Nothing renamed: the first half's staged files go.
                    commit(&first, staged_a, Some("not replaced"));
                    return Err(e);
                }
            };
            let failed_a = sync_a.err().map(not_synced);
            let (mut committed, sync_b) = beside(
                || fs.sync(),
                || commit(&first, staged_a, failed_a.as_deref()),
            );
            let failed_b = failed_a.or_else(|| {
                sync_b
                    .err()
                    .map(|e| format!("{e:#}; this file was not replaced"))
            });
            committed.extend(commit(&second, staged_b, failed_b.as_deref()));
            let mut jobs = first;
            jobs.extend(second);
            (jobs, committed)
        }
        Durability::FileSystems(fs) => {
            let jobs = rest()?;
            let staged = stage(&jobs);
            let failed = fs.sync().err().map(not_synced);
            let committed = commit(&jobs, staged, failed.as_deref());
            (jobs, committed)
        }
        Durability::EachFile => {
            let mut jobs = first;
            jobs.extend(rest()?);
            let staged = stage(&jobs);
            let committed = commit(&jobs, staged, None);
            (jobs, committed)
        }
    };
    // (4) Make the renames durable.
    let synced = match durability {
        Durability::FileSystems(fs) => vec![fs.sync()],
        Durability::EachFile => {
            let dirs: BTreeSet<&Path> = jobs
                .iter()
                .zip(&committed)
                .filter(|(_, c)| c.is_ok())
                .filter_map(|(job, _)| job.as_ref().ok()?.path.parent())
                .collect();
            install(pool, || dirs.into_par_iter().map(sync_dir).collect())
        }
    };
    Ok((committed, synced))
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
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    // (The process id asked once: a system call each time.)
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    format!(".{name}.{}.{nanos}.tmp", PID.get_or_init(std::process::id))
}

#[cfg(unix)]
mod imp {
    //! Through open folders (`openat`, `renameat`, `unlinkat`).
    use std::ffi::{CString, OsStr};
    use std::io::{Read as _, Write as _};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use super::{CHANGED_AFTER, CHANGED_BEFORE, FileStamp, Replace, temporary_name};

    /// A staged temporary file: its name in the target's folder, and what `fstat` said of it
    /// once written.
    pub struct Staged {
        tmp: CString,
        stamp: Stamp,
    }

    /// What shows a file is the one staged, its bytes unchanged since: its inode, size and
    /// modification time (any write moves it; not its change time, which the rename itself
    /// moves on ext4 and others). Compared instead of reading the file back: one `fstatat` for
    /// an open, `fstat`, two reads and a close.
    #[derive(PartialEq, Eq)]
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
            let s = crate::system::os::stamp_of_stat(st);
            let regular = (st.st_mode & libc::S_IFMT) == libc::S_IFREG;
            regular.then_some(Stamp {
                dev: s.dev,
                ino: s.ino,
                size: s.size,
                mtime_ns: s.mtime_ns,
            })
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

    /// A folder held open (`O_PATH` where there is one: nothing is read through it).
    struct Folder<'p> {
        path: &'p Path,
        fd: OwnedFd,
    }

    impl<'p> Folder<'p> {
        fn open(path: &'p Path) -> std::io::Result<Folder<'p>> {
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
            Ok(Folder { path, fd })
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
        /// size, then its bytes), and then its permission bits.
        fn holds(&self, name: &CString, bytes: &[u8]) -> Option<u32> {
            use std::os::unix::fs::MetadataExt;
            // Non-blocking: a FIFO put in the file's place must not hang the batch.
            let mut f = self
                .open_at(name, libc::O_RDONLY | libc::O_NONBLOCK, 0)
                .ok()?;
            let meta = f.metadata().ok()?;
            if !meta.is_file() || meta.len() != bytes.len() as u64 {
                return None;
            }
            let mut buf = vec![0; bytes.len()];
            f.read_exact(&mut buf).ok()?;
            (buf == bytes).then_some(meta.mode() & 0o7777)
        }

        /// Whether `name` here (not followed if a symlink) is a regular file that still has
        /// `stamp`, every field of it; then its permission bits.
        fn has(&self, name: &CString, stamp: &FileStamp) -> Option<u32> {
            let st = self.stat(name)?;
            let now = crate::system::os::stamp_of_stat(&st);
            let regular = (st.st_mode & libc::S_IFMT) == libc::S_IFREG;
            (regular && now == *stamp).then_some(now.mode & 0o7777)
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

        fn rename(&self, from: &CString, to: &CString) -> std::io::Result<()> {
            let fd = self.fd.as_raw_fd();
            // SAFETY: the folder's descriptor is open for the call; both names NUL-terminated.
            if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }
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
    /// bytes, write its new bytes to a temporary file beside it with its permission bits (and
    /// sync it, when `sync`).
    pub fn stage_task(
        jobs: &[Result<Replace<'_>, String>],
        sync: bool,
    ) -> Vec<Result<Staged, String>> {
        let Some(first) = jobs.iter().find_map(|j| j.as_ref().ok()) else {
            return jobs.iter().map(|j| Err(err_of(j))).collect();
        };
        let folder = split(first.path).map(|(dir, _)| Folder::open(dir));
        jobs.iter()
            .map(|job| {
                let job = job.as_ref().map_err(Clone::clone)?;
                let folder = match &folder {
                    Some(Ok(f)) => f,
                    Some(Err(e)) => {
                        return Err(format!(
                            "cannot create a temporary file in {}: {e}",
                            job.path.parent().unwrap_or(job.path).display()
                        ));
                    }
                    None => return Err(CHANGED_BEFORE.to_owned()),
                };
                stage_one(folder, job, sync)
            })
            .collect()
    }

    fn err_of(job: &Result<Replace<'_>, String>) -> String {
        match job {
            Err(e) => e.clone(),
            Ok(_) => CHANGED_BEFORE.to_owned(),
        }
    }

    fn stage_one(folder: &Folder<'_>, job: &Replace<'_>, sync: bool) -> Result<Staged, String> {
        let (_, name) = split(job.path).ok_or_else(|| CHANGED_BEFORE.to_owned())?;
        let target = c_name(name).ok_or_else(|| CHANGED_BEFORE.to_owned())?;
        // What was validated and hashed must still be what the file holds.
        let mode = match &job.stamp {
            Some(stamp) => folder.has(&target, stamp),
            None => folder.holds(&target, job.old),
        }
        .ok_or_else(|| CHANGED_BEFORE.to_owned())?;
        let tmp_name = temporary_name(&name.to_string_lossy());
        let tmp = CString::new(tmp_name.clone()).map_err(|_| CHANGED_BEFORE.to_owned())?;
        let tmp_path = || folder.path.join(&tmp_name).display().to_string();
        let mut file = folder
            .open_at(&tmp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, mode)
            .map_err(|e| {
                format!(
                    "cannot create a temporary file in {}: {e}",
                    folder.path.display()
                )
            })?;
        let written = (|| {
            // The creation mode is masked by the umask; set the exact bits when it masks any.
            if umask().is_none_or(|m| m & mode != 0) {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(mode))
                    .map_err(|e| format!("cannot set the permissions of {}: {e}", tmp_path()))?;
            }
            file.write_all(job.new)
                .and_then(|()| if sync { file.sync_all() } else { Ok(()) })
                .map_err(|e| format!("cannot write {}: {e}", tmp_path()))?;
            // SAFETY: the file's descriptor is open for the call and `st` points at room for a
            // `stat`.
            stat_by(|st| unsafe { libc::fstat(file.as_raw_fd(), st) })
                .as_ref()
                .and_then(Stamp::of)
                .ok_or_else(|| format!("cannot stat {} once written", tmp_path()))
        })();
        match written {
            Ok(stamp) => Ok(Staged { tmp, stamp }),
            Err(e) => {
                folder.unlink(&tmp);
                Err(e)
            }
        }
    }

    /// Rename the staged files of one task over their targets and check each target is then
    /// the file staged, unchanged; with `failed` (the file systems could not be synced), remove
    /// them instead.
    pub fn commit_task(
        jobs: &[Result<Replace<'_>, String>],
        staged: Vec<Result<Staged, String>>,
        failed: Option<&str>,
    ) -> Vec<Result<(), String>> {
        let first = jobs.iter().find_map(|j| j.as_ref().ok());
        let folder = first
            .and_then(|j| split(j.path))
            .map(|(dir, _)| Folder::open(dir));
        jobs.iter()
            .zip(staged)
            .map(|(job, st)| {
                let st = st?;
                let job = job.as_ref().map_err(Clone::clone)?;
                let folder = match &folder {
                    Some(Ok(f)) => f,
                    // (The temporary file cannot be reached to remove it: it stays, as after a
                    // crash.)
                    Some(Err(e)) => {
                        return Err(format!("cannot replace {}: {e}", job.path.display()));
                    }
                    None => return Err(CHANGED_AFTER.to_owned()),
                };
                if let Some(why) = failed {
                    folder.unlink(&st.tmp);
                    return Err(why.to_owned());
                }
                let target = split(job.path)
                    .and_then(|(_, n)| c_name(n))
                    .ok_or_else(|| CHANGED_AFTER.to_owned())?;
                if let Err(e) = folder.rename(&st.tmp, &target) {
                    folder.unlink(&st.tmp);
                    return Err(format!("cannot replace {}: {e}", job.path.display()));
                }
                if folder.stamp(&target).is_some_and(|s| s == st.stamp) {
                    Ok(())
                } else {
                    Err(CHANGED_AFTER.to_owned())
                }
            })
            .collect()
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

    fn holds(path: &std::path::Path, bytes: &[u8]) -> bool {
        std::fs::read(path).is_ok_and(|b| b == bytes)
    }

    pub fn stage_task(
        jobs: &[Result<Replace<'_>, String>],
        sync: bool,
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
    ) -> Vec<Result<(), String>> {
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
            // Three jobs first, the other four made by `rest` (beside the first half's sync).
            let rest = jobs.split_off(3);
            let (done, synced) = replace_all(jobs, || Ok(rest), &durability).unwrap();
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
        let staged = imp::stage_task(&jobs, false);
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
        let done = imp::commit_task(&jobs, staged, None);
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
    /// or replaced by another file with the same bytes, is left with `CHANGED_BEFORE`.
    #[test]
    #[cfg(unix)]
    fn a_job_with_a_stamp_is_checked_by_its_stamp() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
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
                })
            })
            .collect();
        let (done, _) = replace_all(jobs, || Ok(Vec::new()), &Durability::EachFile).unwrap();
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

    /// When the second half cannot be made (an internal error while signing it), nothing is
    /// renamed: the first half's staged files are removed, the files keep their old texts, and
    /// the error is returned. With each durability.
    #[test]
    #[cfg(unix)]
    fn a_second_half_that_fails_leaves_every_file_as_it_was() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let paths = holding_old(dir, &["a.py", "b.py", "c.py"]);
        let dev = std::fs::metadata(dir).unwrap().dev();
        let fs = FileSystems::open([(dev, paths[0].as_path())]);
        let durabilities = [
            fs.as_ref().map(Durability::FileSystems),
            Some(Durability::EachFile),
        ];
        for durability in durabilities.iter().flatten() {
            let jobs = old_to_new(&paths);
            let made = || Err(anyhow::anyhow!("internal error: the second half"));
            let err = replace_all(jobs, made, durability).unwrap_err();
            assert_eq!(err.to_string(), "internal error: the second half");
            for p in &paths {
                assert_eq!(std::fs::read_to_string(p).unwrap(), "old\n");
            }
            let left = temporaries(dir);
            assert!(left.is_empty(), "{left:?}");
        }
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
