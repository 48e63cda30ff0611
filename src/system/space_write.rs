//! L1 writing one file below a space's `.ai/` from a checked path (`model::SpaceRel`), without
//! following a symlink anywhere below `.ai/`: each folder is opened relative to its parent with
//! `O_NOFOLLOW` (and made when missing), the text is written to a temporary file in the last
//! folder, synced, and renamed over the target (a rename replaces a symlink's own entry, never
//! what it points at). Lockfiles go through here: their names come from item headers.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, CWD, Mode, OFlags, mkdirat, openat, renameat, unlinkat};
use rustix::io::Errno;

use crate::model::SpaceRel;

/// Write `bytes` to `<ai>/<rel>` with permission bits `mode`, atomically; returns the path
/// written. `ai` is the space's `.ai` folder (followed if it is itself a link: it is the space);
/// nothing below it is. A folder on the way that is a symlink, or not a folder, is an error that
/// names it, and nothing is written.
pub fn write_in_space(
    ai: &Path,
    rel: &SpaceRel,
    bytes: &[u8],
    mode: u32,
) -> std::io::Result<PathBuf> {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = openat(CWD, ai, dir_flags, Mode::empty())
        .map_err(|e| annotate(e, &format!("cannot open {}", ai.display())))?;
    let segments: Vec<&str> = rel.segments().collect();
    let Some((name, folders)) = segments.split_last() else {
        return Err(std::io::Error::other("an empty path names no file"));
    };
    let mut at = ai.to_path_buf();
    for folder in folders {
        at.push(folder);
        dir = open_or_make(&dir, folder, &at)?;
    }
    let target = at.join(name);
    let tmp = format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let file = openat(
        &dir,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .map_err(|e| annotate(e, &format!("cannot create a file in {}", at.display())))?;
    let written = write_synced(file, bytes, mode)
        .and_then(|()| renameat(&dir, tmp.as_str(), &dir, *name).map_err(Into::into));
    if let Err(e) = written {
        let _ = unlinkat(&dir, tmp.as_str(), AtFlags::empty());
        return Err(annotate_io(
            e,
            &format!("cannot write {}", target.display()),
        ));
    }
    // The rename is durable once its folder is.
    rustix::fs::fsync(&dir).map_err(|e| annotate(e, &format!("cannot sync {}", at.display())))?;
    Ok(target)
}

/// The folder `name` below `parent`, made if missing; a symlink or a non-folder is refused.
fn open_or_make(parent: &OwnedFd, name: &str, shown: &Path) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let refused = || {
        std::io::Error::other(format!(
            "{} is a symlink or not a folder; ryechain writes nothing through it",
            shown.display()
        ))
    };
    match openat(parent, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(Errno::NOENT) => {
            match mkdirat(parent, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(annotate(e, &format!("cannot create {}", shown.display()))),
            }
            openat(parent, name, flags, Mode::empty()).map_err(|e| match e {
                Errno::LOOP | Errno::NOTDIR => refused(),
                e => annotate(e, &format!("cannot open {}", shown.display())),
            })
        }
        Err(Errno::LOOP | Errno::NOTDIR) => Err(refused()),
        Err(e) => Err(annotate(e, &format!("cannot open {}", shown.display()))),
    }
}

fn write_synced(fd: OwnedFd, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    // The mode given to `openat` is narrowed by the umask; set it exactly.
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    file.sync_all()
}

fn annotate(e: Errno, what: &str) -> std::io::Error {
    annotate_io(e.into(), what)
}

fn annotate_io(e: std::io::Error, what: &str) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "the tests make folders, links and files to write among"
)]
mod tests {
    use super::*;

    fn rel(s: &str) -> SpaceRel {
        SpaceRel::new(s).unwrap()
    }

    #[test]
    fn writes_make_folders_and_replace_atomically() {
        let tmp = tempfile::tempdir().unwrap();
        let ai = tmp.path().join(".ai");
        std::fs::create_dir(&ai).unwrap();
        let r = rel("lockfiles/acme/x@1.0.0.lock.json");
        let path = write_in_space(&ai, &r, b"one", 0o644).unwrap();
        assert_eq!(path, ai.join("lockfiles/acme/x@1.0.0.lock.json"));
        write_in_space(&ai, &r, b"two", 0o600).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let names: Vec<_> = std::fs::read_dir(ai.join("lockfiles/acme"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x@1.0.0.lock.json"], "no temporary file is left");
    }

    /// A symlinked `.ai/lockfiles` (or any folder below `.ai/`) is never written through.
    #[test]
    fn a_symlinked_folder_is_refused_and_nothing_is_written_outside() {
        let tmp = tempfile::tempdir().unwrap();
        let ai = tmp.path().join("p/.ai");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&ai).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, ai.join("lockfiles")).unwrap();
        let e = write_in_space(&ai, &rel("lockfiles/x@1.0.0.lock.json"), b"x", 0o644)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a symlink or not a folder"), "{e}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);

        // Deeper, and a file where a folder should be.
        std::fs::remove_file(ai.join("lockfiles")).unwrap();
        std::fs::create_dir_all(ai.join("lockfiles")).unwrap();
        std::os::unix::fs::symlink(&outside, ai.join("lockfiles/acme")).unwrap();
        assert!(write_in_space(&ai, &rel("lockfiles/acme/x@1.lock.json"), b"x", 0o644).is_err());
        std::fs::write(ai.join("lockfiles/file"), "").unwrap();
        assert!(write_in_space(&ai, &rel("lockfiles/file/x@1.lock.json"), b"x", 0o644).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    /// A symlink at the target's own name is replaced, not written through.
    #[test]
    fn a_symlink_at_the_target_is_replaced_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let ai = tmp.path().join(".ai");
        std::fs::create_dir_all(ai.join("lockfiles")).unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, ai.join("lockfiles/x@1.lock.json")).unwrap();
        write_in_space(&ai, &rel("lockfiles/x@1.lock.json"), b"new", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(
            std::fs::read_to_string(ai.join("lockfiles/x@1.lock.json")).unwrap(),
            "new"
        );
    }
}
