//! L6 replacing a batch of files, each atomically (`sign`): every target checked to hold still
//! what was validated, its new text written to a temporary file beside it with the target's
//! owner, group, mode and extended attributes, and renamed over it (`tempfile`'s `persist`);
//! the old file checked once more after the rename, and the new one checked to be the file
//! written. Durability is batched: one `syncfs` of each file system before the renames and one
//! after (`Durability::FileSystems`), or a sync of each temporary file and then of each folder.
//!
//! Why a crash leaves every target old or new: a rename is atomic — the name refers to the old
//! or the new file, never to neither — and none is issued before the temporary files' data is on
//! disk (a failed sync fails every file, and none is renamed). What a crash can leave besides is
//! temporary files, `.<name>.ryechain-sign.<pid>.<random>.tmp` beside their targets: walks skip
//! them (`system::sign_leftover_pid`), and the next batch over their folder removes those whose
//! process is no longer alive, or that are more than a day old (a process id reused since). The
//! batch as a whole is not atomic: a crash may leave some files replaced and others not.
//!
//! Why a write from another process is never lost silently: a write that lands before the
//! rename either shows in the target's stamp checked just before it (its size, times or inode
//! moved: the file is left as it is) or, landing between that check and the rename, in the old
//! file, still held open, checked after it — then the old file's text, with the write, is put
//! back in the target's place (`put_back`). Either way the file is reported as changed and left
//! unsigned. A write that lands after the rename changes the new file, which the last check sees.
#![allow(
    clippy::disallowed_methods,
    reason = "the replace edge reads, writes and renames the files being signed"
)]

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read as _, Seek as _, Write as _};
use std::path::Path;

use rayon::prelude::*;
use tempfile::TempPath;

use super::{FileSystems, sync_dir};
use crate::system::FileStamp;
use crate::system::os::stamp_from;

/// One file to replace: its path (a symlink's target: a symlink stays a symlink), the bytes it
/// must still hold (what was validated and signed) and its new bytes.
pub struct Replace<'t> {
    pub path: &'t Path,
    pub old: &'t [u8],
    pub new: &'t [u8],
    /// A stamp of `path` known to go with `old`: taken after `old` was read, of a file that had
    /// not changed for a while before that read began ([`settled_since`]). While the file has
    /// this stamp it holds `old`, and any write to it moves its modification time: it is not read
    /// again. `None`: the bytes are compared, before and after the rename.
    pub stamp: Option<FileStamp>,
}

/// `stamp` (taken after the file was read) when it shows the file last changed well before
/// `read_from` (nanoseconds since the epoch, before the read began: the lint cache's racy
/// window, `FileStamp::settled_before`): then what was read is what the file held when stamped.
pub fn settled_since(stamp: FileStamp, read_from: i64) -> Option<FileStamp> {
    stamp.settled_before(read_from).then_some(stamp)
}

/// How a batch's temporary files, then its renames, are made durable.
pub enum Durability<'f> {
    /// One `syncfs` of each file system before the renames and one after (it writes whatever
    /// else is dirty there too, which a large batch waits for in any case).
    FileSystems(&'f FileSystems),
    /// A sync of each temporary file, then of each folder renamed in.
    EachFile,
}

/// The reason given when a file no longer holds what was validated.
pub const CHANGED_BEFORE: &str = "the file changed since it was read; sign it again";
/// The reason given when a replaced file does not hold what was written.
pub const CHANGED_AFTER: &str = "the file changed while it was written; sign it again";

/// Threads that check, write and rename files: most of their time is spent waiting on the file
/// system (a sync, or the discard of an old file's blocks on a file system mounted with
/// `discard`), not on a core.
const IO_THREADS: usize = 16;

/// A leftover whose process id is alive is still removed once it is this old: the id was
/// reused (no batch runs for a day).
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// What `replace_all` did: each job's outcome, and each sync of the replacements.
pub type Replaced = (Vec<Result<(), String>>, Vec<anyhow::Result<()>>);

/// Replace every `Ok` job; each job's outcome in order (an `Err` job keeps its reason), and the
/// outcome of making the replacements durable (a failure there leaves the files replaced but
/// perhaps not durable: the caller reports it as a notice). Leftovers of dead runs in the jobs'
/// folders are removed first.
pub fn replace_all(
    jobs: Vec<Result<Replace<'_>, String>>,
    durability: &Durability<'_>,
) -> Replaced {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(IO_THREADS.max(rayon::current_num_threads()))
        .build();
    let run = || replace_on_this_pool(&jobs, durability);
    match &pool {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    }
}

fn replace_on_this_pool(
    jobs: &[Result<Replace<'_>, String>],
    durability: &Durability<'_>,
) -> Replaced {
    let folders: BTreeSet<&Path> = jobs.iter().flatten().map(|j| folder_of(j.path)).collect();
    folders.par_iter().for_each(|dir| remove_leftovers(dir));
    let each_file = matches!(durability, Durability::EachFile);
    let staged: Vec<Result<Staged, String>> = jobs
        .par_iter()
        .map(|job| stage(job.as_ref().map_err(Clone::clone)?, each_file))
        .collect();
    #[cfg(feature = "testing")]
    pause("staged");
    // Nothing is renamed unless every temporary file is on disk.
    let failed = match durability {
        Durability::FileSystems(fs) => fs
            .sync()
            .err()
            .map(|e| format!("{e:#}; this file was not replaced")),
        Durability::EachFile => None,
    };
    let done: Vec<Result<(), String>> = jobs
        .par_iter()
        .zip(staged)
        .map(|(job, staged)| {
            let staged = staged?;
            let job = job.as_ref().map_err(Clone::clone)?;
            match &failed {
                Some(why) => Err(why.clone()),
                None => commit(job, staged),
            }
        })
        .collect();
    let synced = match durability {
        Durability::FileSystems(fs) => vec![fs.sync()],
        Durability::EachFile => {
            let renamed: BTreeSet<&Path> = jobs
                .iter()
                .zip(&done)
                .filter(|(_, d)| d.is_ok())
                .filter_map(|(j, _)| Some(folder_of(j.as_ref().ok()?.path)))
                .collect();
            renamed.into_par_iter().map(sync_dir).collect()
        }
    };
    (done, synced)
}

/// A job's new text in a temporary file beside its target: the stamp the target had when it was
/// checked, and the temporary file's once written.
struct Staged {
    tmp: TempPath,
    checked: FileStamp,
    written: FileStamp,
}

/// Check that the target still holds what was validated, and write its new text to a temporary
/// file with the target's owner, group, mode and extended attributes (synced, when `sync`).
fn stage(job: &Replace<'_>, sync: bool) -> Result<Staged, String> {
    let (old, meta) = open_checked(job)?;
    let (tmp, written) = write_temporary(job.path, job.new, (&old, &meta), sync)?;
    let checked = stamp_from(&meta);
    Ok(Staged {
        tmp,
        checked,
        written,
    })
}

/// Rename the staged file over its target, if the target still has the stamp it was checked
/// with; then check that the old file did not change in between (else its text goes back in
/// place) and that the target is the file written.
fn commit(job: &Replace<'_>, staged: Staged) -> Result<(), String> {
    let Staged {
        tmp,
        checked,
        written,
    } = staged;
    // Held open across the rename: a write that lands in it before the rename shows after.
    let old = open_target(job.path).map_err(|_| CHANGED_BEFORE.to_owned())?;
    if stamp_of(&old) != Some(checked) {
        return Err(CHANGED_BEFORE.to_owned());
    }
    #[cfg(feature = "testing")]
    pause(&job.path.to_string_lossy());
    tmp.persist(job.path)
        .map_err(|e| format!("cannot replace {}: {}", job.path.display(), e.error))?;
    // (Its change time moved: the rename unlinked it.)
    let after = stamp_of(&old);
    let unchanged = after.is_some_and(|a| a.size == checked.size && a.mtime_ns == checked.mtime_ns)
        && (job.stamp.is_some() || holds(&old, job.old));
    if !unchanged {
        return Err(put_back(job.path, &old, written));
    }
    match std::fs::symlink_metadata(job.path) {
        Ok(m) if is_written(&stamp_from(&m), &written) => Ok(()),
        _ => Err(CHANGED_AFTER.to_owned()),
    }
}

/// The old file changed between its check and the rename (a write went to it, not to the new
/// file): its text, with that write, goes back in the target's place — unless the target is no
/// longer the file written (another process replaced it since; theirs stays). The reason.
fn put_back(path: &Path, old: &File, written: FileStamp) -> String {
    let restored = (|| {
        let mut text = Vec::new();
        let mut reader = old;
        reader
            .rewind()
            .and_then(|_| reader.read_to_end(&mut text))
            .map_err(|e| e.to_string())?;
        let meta = old.metadata().map_err(|e| e.to_string())?;
        let (tmp, _) = write_temporary(path, &text, (old, &meta), true)?;
        let ours =
            std::fs::symlink_metadata(path).is_ok_and(|m| is_written(&stamp_from(&m), &written));
        if ours {
            tmp.persist(path).map_err(|e| e.error.to_string())?;
        }
        Ok::<(), String>(())
    })();
    match restored {
        Ok(()) => CHANGED_BEFORE.to_owned(),
        Err(e) => format!(
            "{CHANGED_BEFORE}: it was replaced while it changed, and its text could not be put \
             back ({e})"
        ),
    }
}

/// Whether a stamp is the temporary file's once written, unchanged (not its change time, which
/// the rename moves on some file systems).
fn is_written(now: &FileStamp, written: &FileStamp) -> bool {
    (now.dev, now.ino, now.size, now.mtime_ns)
        == (written.dev, written.ino, written.size, written.mtime_ns)
}

/// The target opened for reading: never through a symlink, never blocking (on a FIFO put in
/// its place).
fn open_target(path: &Path) -> std::io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    opts.open(path)
}

fn stamp_of(file: &File) -> Option<FileStamp> {
    file.metadata().ok().map(|m| stamp_from(&m))
}

/// The target opened and what `fstat` says of it, when it is a regular file that still holds
/// what `job` says was validated (by its stamp, else its bytes).
fn open_checked(job: &Replace<'_>) -> Result<(File, std::fs::Metadata), String> {
    let changed = || CHANGED_BEFORE.to_owned();
    let file = open_target(job.path).map_err(|_| changed())?;
    let meta = file.metadata().map_err(|_| changed())?;
    let stamp = stamp_from(&meta);
    let same = meta.is_file()
        && match &job.stamp {
            Some(s) => *s == stamp,
            None => stamp.size == job.old.len() as u64 && holds(&file, job.old),
        };
    same.then_some((file, meta)).ok_or_else(changed)
}

/// Whether `file` holds exactly `bytes`, read from its start.
fn holds(file: &File, bytes: &[u8]) -> bool {
    let mut text = Vec::with_capacity(bytes.len() + 1);
    let mut reader = file;
    reader.rewind().is_ok()
        && reader
            .take(bytes.len() as u64 + 1)
            .read_to_end(&mut text)
            .is_ok()
        && text == bytes
}

/// The folder a path is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Write `bytes` to a new temporary file beside `target`, with the owner, group, mode and
/// extended attributes of `like` (the target, open, and what `fstat` said of it), synced when
/// `sync`; the file, and its stamp once written. A file whose owner, mode or attributes cannot be
/// kept is not written.
fn write_temporary(
    target: &Path,
    bytes: &[u8],
    (like, meta): (&File, &std::fs::Metadata),
    sync: bool,
) -> Result<(TempPath, FileStamp), String> {
    let dir = folder_of(target);
    let mode = stamp_from(meta).mode & 0o7777;
    let prefix = temporary_prefix(target);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(mode & 0o777));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| format!("cannot create a temporary file in {}: {e}", dir.display()))?;
    let tmp_path = tmp.path().to_path_buf();
    let cannot_write = |e: std::io::Error| format!("cannot write {}: {e}", tmp_path.display());
    tmp.write_all(bytes).map_err(cannot_write)?;
    let file = tmp.as_file();
    let stat = || {
        file.metadata()
            .map_err(|e| format!("cannot stat {} once written: {e}", tmp_path.display()))
    };
    // (Not the process's in a set-group-id folder.)
    if owner(&stat()?) != owner(meta) {
        keep_owner(file, meta)?;
    }
    // After a change of owner (it drops file capabilities), and before the mode: setting an ACL
    // sets group bits, a change of owner clears set-id bits, and the umask masked the creation.
    keep_extended_attributes(like, file)
        .map_err(|e| format!("cannot keep its extended attributes ({e}); not signed"))?;
    set_mode(file, mode)?;
    let now = stat()?;
    let written = stamp_from(&now);
    if written.mode & 0o7777 != mode || owner(&now) != owner(meta) {
        return Err(format!(
            "cannot keep its owner, group and permission bits ({:?} {mode:o}: the copy got \
             {:?} {:o}); not signed",
            owner(meta),
            owner(&now),
            written.mode & 0o7777
        ));
    }
    if sync {
        tmp.as_file().sync_all().map_err(cannot_write)?;
    }
    Ok((tmp.into_temp_path(), written))
}

/// The start of a temporary file's name beside `target`: `.<name>.ryechain-sign.<pid>.` (the
/// name cut to 64 characters: the whole must stay a valid file name), which the random part and
/// `.tmp` end. `system::sign_leftover_pid` reads the process id back.
fn temporary_prefix(target: &Path) -> String {
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let name: String = name.chars().take(64).collect();
    format!(
        ".{name}{}{}.",
        crate::system::SIGN_TEMPORARY_MARK,
        std::process::id()
    )
}

/// A file's owner and group.
#[cfg(unix)]
fn owner(meta: &std::fs::Metadata) -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    (meta.uid(), meta.gid())
}

#[cfg(not(unix))]
fn owner(_meta: &std::fs::Metadata) -> (u32, u32) {
    (0, 0)
}

/// Give `tmp` the owner and group of `original` (a batch run as root must not make another
/// user's file root's); a change the process may not make refuses the file.
#[cfg(unix)]
fn keep_owner(tmp: &File, original: &std::fs::Metadata) -> Result<(), String> {
    let (uid, gid) = owner(original);
    std::os::unix::fs::fchown(tmp, Some(uid), Some(gid)).map_err(|e| {
        format!("cannot keep its owner and group (uid {uid}, gid {gid}): {e}; not signed")
    })
}

#[cfg(not(unix))]
fn keep_owner(_tmp: &File, _original: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

/// Set `tmp`'s permission bits.
fn set_mode(tmp: &File, mode: u32) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("cannot set its permission bits ({mode:o}): {e}; not signed"))
    }
    #[cfg(not(unix))]
    {
        let _ = (tmp, mode);
        Ok(())
    }
}

/// Give `to` exactly the extended attributes of `from` (user attributes, ACLs, security labels):
/// each of `from`'s set where `to` lacks it or holds another value, each only `to` has (a
/// default ACL of the folder, inherited) removed. A file system without them has none to keep.
#[cfg(target_os = "linux")]
fn keep_extended_attributes(from: &File, to: &File) -> std::io::Result<()> {
    use rustix::fs::{XattrFlags, fremovexattr, fsetxattr};
    let theirs = xattr_names(from)?;
    let ours = xattr_names(to)?;
    if theirs.is_empty() && ours.is_empty() {
        return Ok(());
    }
    let names = |list: &[u8]| -> Vec<std::ffi::CString> {
        list.split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .filter_map(|n| std::ffi::CString::new(n).ok())
            .collect()
    };
    let (theirs, ours) = (names(&theirs), names(&ours));
    for name in &ours {
        if !theirs.contains(name) {
            fremovexattr(to, name.as_c_str())?;
        }
    }
    for name in &theirs {
        let value = xattr_value(from, name)?;
        let same = ours.contains(name) && xattr_value(to, name).is_ok_and(|v| v == value);
        if !same {
            fsetxattr(to, name.as_c_str(), &value, XattrFlags::empty())?;
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn keep_extended_attributes(_from: &File, _to: &File) -> std::io::Result<()> {
    Ok(())
}

/// The names of `file`'s extended attributes, each ended by a NUL (none where the file system
/// has no extended attributes).
#[cfg(target_os = "linux")]
fn xattr_names(file: &File) -> std::io::Result<Vec<u8>> {
    use rustix::io::Errno;
    let mut small = [0u8; 256];
    match rustix::fs::flistxattr(file, &mut small[..]) {
        Ok(n) => return Ok(small[..n].to_vec()),
        Err(Errno::NOTSUP) => return Ok(Vec::new()),
        Err(Errno::RANGE) => {}
        Err(e) => return Err(e.into()),
    }
    loop {
        let mut list = vec![0u8; rustix::fs::flistxattr_query(file)?.max(1)];
        match rustix::fs::flistxattr(file, &mut list[..]) {
            Ok(n) => {
                list.truncate(n);
                return Ok(list);
            }
            // (It grew since it was measured.)
            Err(Errno::RANGE) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// The value of `file`'s extended attribute `name`.
#[cfg(target_os = "linux")]
fn xattr_value(file: &File, name: &std::ffi::CStr) -> std::io::Result<Vec<u8>> {
    loop {
        let mut value = vec![0u8; rustix::fs::fgetxattr_query(file, name)?];
        match rustix::fs::fgetxattr(file, name, &mut value[..]) {
            Ok(n) => {
                value.truncate(n);
                return Ok(value);
            }
            Err(rustix::io::Errno::RANGE) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Remove what runs of `sign` that are over left in `dir`: temporary files (and an older build's
/// spare folders) whose process is not alive, or that are more than a day old. A live run's
/// (another `sign`, or a call of this process's own MCP server) stay.
fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = crate::system::sign_leftover_pid(name.as_encoded_bytes()) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let stale = meta
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_AFTER);
        if is_alive(pid) && !stale {
            continue;
        }
        let path = entry.path();
        let _ = if meta.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
    }
}

/// Whether process `pid` exists (this process counts; one of another user's too).
#[cfg(unix)]
fn is_alive(pid: u32) -> bool {
    use rustix::process::{Pid, test_kill_process};
    if pid == std::process::id() {
        return true;
    }
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    !matches!(test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

/// Without a way to ask, every process counts as alive: leftovers go once a day old.
#[cfg(not(unix))]
fn is_alive(_pid: u32) -> bool {
    true
}

/// A test hook: with `RYECHAIN_TEST_SIGN_PAUSE` set to the path of a FIFO, write `<n> <at>` (the
/// pause's number, and where the batch is: `staged`, or the path about to be renamed over) to
/// that path with `.at` added (whole: by a rename), then wait until a writer has opened the FIFO
/// and closed it. One pause at a time.
#[cfg(feature = "testing")]
fn pause(at: &str) {
    static ONE: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
    let Some(fifo) = std::env::var_os("RYECHAIN_TEST_SIGN_PAUSE") else {
        return;
    };
    let mut n = ONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *n += 1;
    let (mut at_path, mut next) = (fifo.clone(), fifo.clone());
    at_path.push(".at");
    next.push(".at.next");
    let _ =
        std::fs::write(&next, format!("{n} {at}")).and_then(|()| std::fs::rename(&next, &at_path));
    if let Ok(mut f) = File::open(&fifo) {
        let _ = std::io::copy(&mut f, &mut std::io::sink());
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::PathBuf;

    use super::*;

    /// A job per path: `old\n` to `new\n`, checked by its bytes.
    fn old_to_new(paths: &[PathBuf]) -> Vec<Result<Replace<'_>, String>> {
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

    /// Files `names` in `dir`, each holding `old\n`.
    fn holding_old(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
        names
            .iter()
            .map(|n| {
                let p = dir.join(n);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, "old\n").unwrap();
                p
            })
            .collect()
    }

    /// The names in `dir` that start with a dot (temporary files, leftovers).
    fn dotted(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect()
    }

    /// Both durabilities for files in `dir`.
    fn each_durability(dir: &Path, f: impl Fn(&Durability<'_>)) {
        let dev = std::fs::metadata(dir).unwrap().dev();
        let probe = dir.join("probe");
        let fs = FileSystems::open([(dev, probe.as_path())]).unwrap();
        f(&Durability::FileSystems(&fs));
        f(&Durability::EachFile);
    }

    /// Every kept job replaced (bytes and exact permission bits, even bits the umask clears);
    /// a file that no longer holds what was validated, a symlink or a FIFO put in a file's
    /// place, and a job refused before are left as they are, with their reasons; no temporary
    /// file is left behind. With each durability.
    #[test]
    fn files_are_replaced_with_their_modes_and_changed_ones_are_left() {
        let tmp = tempfile::tempdir().unwrap();
        each_durability(tmp.path(), |durability| {
            let dir = tmp
                .path()
                .join(format!("{}", matches!(durability, Durability::EachFile)));
            let paths = holding_old(&dir, &["a.py", "sub/b.py", "sub/c.py", "d.py"]);
            for (p, mode) in paths.iter().zip([0o640, 0o755, 0o644, 0o666]) {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            std::fs::write(&paths[2], "edited\n").unwrap();
            let link = dir.join("link.py");
            std::os::unix::fs::symlink(&paths[0], &link).unwrap();
            let fifo = dir.join("fifo.py");
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &fifo,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
            let specials = [link.clone(), fifo.clone()];
            let mut jobs = old_to_new(&paths);
            jobs.extend(old_to_new(&specials));
            jobs.push(Err("refused".to_owned()));
            let (done, synced) = replace_all(jobs, durability);
            assert!(synced.iter().all(Result::is_ok));
            let changed = || Err(CHANGED_BEFORE.to_owned());
            let want = [Ok(()), Ok(()), changed(), Ok(()), changed(), changed()];
            assert_eq!(done[..6], want);
            assert_eq!(done[6], Err("refused".to_owned()));
            let read = |p: &Path| std::fs::read_to_string(p).unwrap();
            let texts: Vec<String> = paths.iter().map(|p| read(p)).collect();
            assert_eq!(texts, ["new\n", "new\n", "edited\n", "new\n"]);
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
            for d in [dir.clone(), dir.join("sub")] {
                assert!(dotted(&d).is_empty(), "{:?}", dotted(&d));
            }
        });
    }

    /// A job with a stamp is checked by it alone: a file that still has its stamp is replaced
    /// (the bytes `old` names are not compared — here they are wrong on purpose), with its
    /// permission bits; a file written to since (the same bytes again: its change time moves),
    /// or replaced by another file with the same bytes, is left with `CHANGED_BEFORE`.
    #[test]
    fn a_job_with_a_stamp_is_checked_by_its_stamp() {
        let tmp = tempfile::tempdir().unwrap();
        each_durability(tmp.path(), |durability| {
            let dir = tmp
                .path()
                .join(format!("{}", matches!(durability, Durability::EachFile)));
            let paths = holding_old(&dir, &["kept.py", "rewritten.py", "swapped.py"]);
            for p in &paths {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o750)).unwrap();
            }
            let stamps: Vec<FileStamp> = paths
                .iter()
                .map(|p| stamp_from(&std::fs::metadata(p).unwrap()))
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
            let (done, _) = replace_all(jobs, durability);
            let changed = || Err(CHANGED_BEFORE.to_owned());
            assert_eq!(done, vec![Ok(()), changed(), changed()]);
            let read = |p: &Path| std::fs::read_to_string(p).unwrap();
            assert_eq!(read(&paths[0]), "new\n");
            assert_eq!(std::fs::metadata(&paths[0]).unwrap().mode() & 0o7777, 0o750);
            assert_eq!(read(&paths[1]), "old\n");
            assert_eq!(read(&paths[2]), "old\n");
            assert_eq!(
                std::fs::read_dir(&dir).unwrap().count(),
                3,
                "only the three files"
            );
        });
    }

    /// A target written to between its check and the rename is left as it is (its stamp
    /// moved); a staged file written to, or put in place of, before the rename is reported
    /// (`CHANGED_AFTER`: the target is not the file written); an untouched one is replaced.
    #[test]
    fn files_changed_between_staging_and_the_rename_are_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let paths = holding_old(dir, &["a.py", "b.py", "c.py", "d.py"]);
        let jobs = old_to_new(&paths);
        let staged: Vec<Staged> = jobs
            .iter()
            .map(|j| stage(j.as_ref().unwrap(), false).unwrap())
            .collect();
        // a: the target edited.
        std::fs::write(&paths[0], "edited meanwhile\n").unwrap();
        // b: the same bytes written again to its staged file (its size does not move).
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&staged[1].tmp, "new\n").unwrap();
        // c: another file renamed in place of its staged file.
        std::fs::write(dir.join("other"), "new\n").unwrap();
        std::fs::rename(dir.join("other"), &staged[2].tmp).unwrap();
        let done: Vec<Result<(), String>> = jobs
            .iter()
            .zip(staged)
            .map(|(j, s)| commit(j.as_ref().unwrap(), s))
            .collect();
        let after = || Err(CHANGED_AFTER.to_owned());
        assert_eq!(
            done,
            [Err(CHANGED_BEFORE.to_owned()), after(), after(), Ok(())]
        );
        let texts: Vec<String> = paths
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        assert_eq!(texts, ["edited meanwhile\n", "new\n", "new\n", "new\n"]);
        assert!(dotted(dir).is_empty(), "{:?}", dotted(dir));
    }

    /// A write that went to the old file after its last check (the rename then put the new
    /// file in its place without it): the old file's text, with the write, is put back, with the
    /// old file's mode; the reason is `CHANGED_BEFORE`.
    #[test]
    fn a_write_to_the_old_file_around_the_rename_is_put_back() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = holding_old(tmp.path(), &["a.py"]);
        std::fs::set_permissions(&paths[0], std::fs::Permissions::from_mode(0o751)).unwrap();
        let jobs = old_to_new(&paths);
        let job = jobs[0].as_ref().unwrap();
        let staged = stage(job, false).unwrap();
        let mut old = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .open(&paths[0])
            .unwrap();
        staged.tmp.persist(&paths[0]).unwrap();
        old.write_all(b"a write\n").unwrap();
        assert_eq!(put_back(&paths[0], &old, staged.written), CHANGED_BEFORE);
        assert_eq!(
            std::fs::read_to_string(&paths[0]).unwrap(),
            "old\na write\n"
        );
        assert_eq!(std::fs::metadata(&paths[0]).unwrap().mode() & 0o7777, 0o751);
        // Not over a file someone else put there since.
        let staged = stage(
            &Replace {
                old: b"old\na write\n",
                ..*job
            },
            false,
        )
        .unwrap();
        std::fs::write(tmp.path().join("theirs"), "theirs\n").unwrap();
        std::fs::rename(tmp.path().join("theirs"), &paths[0]).unwrap();
        let _ = put_back(&paths[0], &old, staged.written);
        drop(staged);
        assert_eq!(std::fs::read_to_string(&paths[0]).unwrap(), "theirs\n");
        assert!(dotted(tmp.path()).is_empty(), "{:?}", dotted(tmp.path()));
    }

    /// The new file keeps the old one's extended attributes (a `user.` one here) and loses any
    /// it got that the old one lacks; as root, its owner and group too, set-id bits included.
    #[test]
    #[allow(clippy::print_stderr, reason = "says which check is left out")]
    fn owner_group_mode_and_extended_attributes_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = holding_old(tmp.path(), &["a.py", "b.py"]);
        let flags = rustix::fs::XattrFlags::empty();
        if let Err(e) = rustix::fs::setxattr(&paths[0], "user.note", b"kept", flags) {
            eprintln!("skipped: no user extended attributes here ({e})");
            return;
        }
        let root = rustix::process::geteuid().is_root();
        if root {
            std::os::unix::fs::chown(&paths[0], Some(4321), Some(4322)).unwrap();
        } else {
            eprintln!("not root: the change of owner is not checked");
        }
        std::fs::set_permissions(&paths[0], std::fs::Permissions::from_mode(0o6750)).unwrap();
        // A temporary file that got an attribute of its own loses it.
        let job = Replace {
            path: &paths[1],
            old: b"old\n",
            new: b"new\n",
            stamp: None,
        };
        let staged = stage(&job, false).unwrap();
        let a = File::open(&paths[0]).unwrap();
        let t = File::open(&staged.tmp).unwrap();
        rustix::fs::fsetxattr(&t, "user.extra", b"x", flags).unwrap();
        keep_extended_attributes(&a, &t).unwrap();
        assert_eq!(xattr_names(&t).unwrap(), b"user.note\0");
        drop(staged);
        let (done, _) = replace_all(old_to_new(&paths), &Durability::EachFile);
        assert_eq!(done, [Ok(()), Ok(())]);
        let meta = std::fs::metadata(&paths[0]).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o6750);
        if root {
            assert_eq!((meta.uid(), meta.gid()), (4321, 4322));
        }
        let mut value = [0u8; 16];
        let n = rustix::fs::getxattr(&paths[0], "user.note", &mut value[..]).unwrap();
        assert_eq!(&value[..n], b"kept");
        assert_eq!(std::fs::read_to_string(&paths[0]).unwrap(), "new\n");
    }

    /// A temporary file's name carries this process's id, which `sign_leftover_pid` reads back.
    #[test]
    fn temporary_names_are_recognised_with_their_process() {
        let prefix = temporary_prefix(Path::new("/x/a.b.py"));
        let name = format!("{prefix}Ab3xYz.tmp");
        assert_eq!(
            name,
            format!(".a.b.py.ryechain-sign.{}.Ab3xYz.tmp", std::process::id())
        );
        let pid = crate::system::sign_leftover_pid;
        assert_eq!(pid(name.as_bytes()), Some(std::process::id()));
        assert_eq!(pid(b".ryechain-sign.77.1234567"), Some(77));
        for other in [
            "a.py",
            ".a.py.123.456.tmp",
            ".a.py.ryechain-sign.12.tmp",
            ".a.py.ryechain-sign.x.ab.tmp",
            ".a.py.ryechain-sign.12.a-b.tmp",
            ".ryechain-sign.12",
            "a.py.ryechain-sign.12.ab.tmp",
        ] {
            assert_eq!(pid(other.as_bytes()), None, "{other}");
        }
        let long = "x".repeat(255);
        assert!(temporary_prefix(Path::new(&long)).len() < 100);
        // As `tempfile` ends it.
        let tmp = tempfile::tempdir().unwrap();
        let paths = holding_old(tmp.path(), &["a.py"]);
        let staged = stage(old_to_new(&paths)[0].as_ref().unwrap(), false).unwrap();
        let made = staged.tmp.file_name().unwrap().as_encoded_bytes();
        assert_eq!(pid(made), Some(std::process::id()), "{:?}", staged.tmp);
    }

    /// A batch removes the leftovers of runs that are over from its folders — a temporary file
    /// and an older build's spare folder of a process that is gone — and keeps those of live
    /// processes (this one's) and everything else.
    #[test]
    fn leftovers_of_dead_runs_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let paths = holding_old(dir, &["a.py"]);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let dead_tmp = dir.join(format!(".b.py.ryechain-sign.{dead}.aB1.tmp"));
        let live_tmp = dir.join(format!(".b.py.ryechain-sign.{me}.aB1.tmp"));
        let spare = dir.join(format!(".ryechain-sign.{dead}.123456789"));
        std::fs::create_dir(&spare).unwrap();
        for p in [
            &dead_tmp,
            &live_tmp,
            &spare.join("0.tmp"),
            &dir.join(".other.tmp"),
        ] {
            std::fs::write(p, "x").unwrap();
        }
        let (done, _) = replace_all(old_to_new(&paths), &Durability::EachFile);
        assert_eq!(done, [Ok(())]);
        let mut left = dotted(dir);
        left.sort();
        let live = live_tmp.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(left, [live, ".other.tmp".to_owned()]);
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
}
