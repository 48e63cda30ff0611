//! L6 writing files the way ryechain's edges must: a temporary file in the target's folder renamed
//! over it (`stage`, `write_atomically`), its mode set, folders synced (`sync_dir`), and the file
//! systems of a batch opened once to be synced together (`FileSystems`); replacing a batch of
//! files, each atomically with its owner, mode and extended attributes (`replace`, for `sign`).
#![allow(
    clippy::disallowed_methods,
    reason = "the edge's file-system primitives: they write and sync files"
)]

pub mod replace;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

#[cfg(unix)]
pub fn set_mode(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the permissions of {}", path.display()))
}

#[cfg(not(unix))]
pub fn set_mode(_path: &Path, _mode: u32) -> anyhow::Result<()> {
    Ok(())
}

/// Replace `path` with `bytes` atomically: a temporary file in the same directory, written with
/// `mode`, synced, then renamed over the target. A failure leaves the target untouched.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    stage(path, bytes, mode)?.commit()
}

/// New contents written and synced to a temporary file beside their target, not yet in place.
/// Dropping it without `commit` removes the temporary file.
#[must_use = "a staged file replaces nothing until it is committed"]
pub struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    done: bool,
}

impl Staged {
    /// Rename the temporary file over the target (atomic: readers see the old or the new file).
    /// The rename is durable once the target's directory is synced (`sync_dir`).
    pub fn commit(mut self) -> anyhow::Result<()> {
        std::fs::rename(&self.tmp, &self.target)
            .with_context(|| format!("cannot replace {}", self.target.display()))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to a new temporary file beside `path` with permission bits `mode`, and sync it
/// to disk (so a later rename can only ever expose the complete contents).
pub fn stage(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<Staged> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let staged = Staged {
        tmp: dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id())),
        target: path.to_path_buf(),
        done: false,
    };
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(mode);
    }
    let mut file = opts
        .open(&staged.tmp)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    // The creation mode is masked by the umask; set the exact bits (through the open file: no
    // second path lookup).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("cannot set the permissions of {}", staged.tmp.display()))?;
    }
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", staged.tmp.display()))?;
    Ok(staged)
}

/// The file systems a batch writes to, each through one of its directories opened before the
/// batch writes anything: `syncfs` on such a descriptor writes every dirty file and directory
/// of that file system to disk (this process's or not) and reports any write error recorded
/// since the descriptor was opened — so none of the batch's is missed.
pub struct FileSystems(Vec<(u64, PathBuf, std::fs::File)>);

impl FileSystems {
    /// The file systems of `files` (each with the device it is on), each through the folder of
    /// its first file, opened. `None` — the caller syncs file by file — where `syncfs` is not
    /// available, a folder cannot be opened, or a folder is not on its file's device (the file
    /// is a mount point: its folder's file system, where its temporary file would go, is not
    /// the one named).
    #[cfg(target_os = "linux")]
    pub fn open<'a>(files: impl IntoIterator<Item = (u64, &'a Path)>) -> Option<FileSystems> {
        use std::os::unix::fs::MetadataExt;
        let mut open: Vec<(u64, PathBuf, std::fs::File)> = Vec::new();
        for (dev, file) in files {
            if open.iter().any(|(d, _, _)| *d == dev) {
                continue;
            }
            let dir = file.parent().filter(|d| !d.as_os_str().is_empty())?;
            let d = std::fs::File::open(dir).ok()?;
            if d.metadata().ok()?.dev() != dev {
                return None;
            }
            open.push((dev, dir.to_path_buf(), d));
        }
        Some(FileSystems(open))
    }

    #[cfg(not(target_os = "linux"))]
    pub fn open<'a>(_files: impl IntoIterator<Item = (u64, &'a Path)>) -> Option<FileSystems> {
        None
    }

    /// Write each file system's dirty files and directories to disk, and wait for it.
    #[cfg(target_os = "linux")]
    pub fn sync(&self) -> anyhow::Result<()> {
        for (_, dir, d) in &self.0 {
            rustix::fs::syncfs(d)
                .map_err(std::io::Error::from)
                .with_context(|| format!("cannot sync the file system of {}", dir.display()))?;
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    pub fn sync(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// Sync a directory, making the renames done in it durable.
#[cfg(unix)]
pub fn sync_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync the directory {}", dir.display()))
}

/// Directories cannot be opened for syncing here; renames are as durable as the platform makes
/// them.
#[cfg(not(unix))]
pub fn sync_dir(_dir: &Path) -> anyhow::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One folder per file system, opened: two files on one device give one; a file whose
    /// folder cannot be opened, or is not on the device named, gives none (the caller syncs
    /// file by file).
    #[test]
    #[cfg(target_os = "linux")]
    fn file_systems_are_opened_once_through_a_folder_on_their_device() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a.py"), tmp.path().join("sub/b.py"));
        std::fs::create_dir_all(tmp.path().join("sub")).unwrap();
        std::fs::write(&a, "a\n").unwrap();
        std::fs::write(&b, "b\n").unwrap();
        let dev = std::fs::metadata(&a).unwrap().dev();
        let fs = FileSystems::open([(dev, a.as_path()), (dev, b.as_path())]).unwrap();
        assert_eq!(fs.0.len(), 1, "one file system");
        assert_eq!((fs.0[0].0, fs.0[0].1.as_path()), (dev, tmp.path()));
        fs.sync().unwrap();
        let gone = tmp.path().join("gone/c.py");
        assert!(FileSystems::open([(dev, gone.as_path())]).is_none());
        assert!(FileSystems::open([(dev ^ 1, a.as_path())]).is_none());
    }
}
