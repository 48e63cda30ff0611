//! The full load (a parallel walk, then the files read a chunk at a time into shared buffers)
//! must load exactly what the plainest `System` over the same OS loads — one thread's walk, each
//! file read into a buffer of its own, every path resolved from the root — : same files, texts,
//! problems, link origins and notices, on trees with everything a walk can meet (files of every
//! size, bytes that are not UTF-8 amid others of the same buffer, names that are not UTF-8,
//! symlinks to files and folders in and out of the spaces, dangling symlinks, a FIFO, a loop).
#![cfg(target_os = "linux")]
#![allow(
    clippy::disallowed_methods,
    reason = "the test builds trees on disk and compares two OS-backed loads"
)]

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use ryechain::db::{Change, FileContents};
use ryechain::load::{LoadOutcome, SpaceSource, load};
use ryechain::system::os::OsSystem;
use ryechain::system::{ReadResult, System, WalkEntry};
use ryechain::testing::three_spaces;

/// The OS through the trait's defaults only: `walk` is the one-thread walk (`walk_small`),
/// nothing tells which folders were entered through a link, every file is read into a buffer of
/// its own (then copied) and every path canonicalized from the root.
struct OneAtATime;

impl System for OneAtATime {
    fn walk(&self, dir: &Path) -> Vec<WalkEntry> {
        OsSystem.walk_small(dir)
    }
    fn read(&self, path: &Path, limit: u64) -> ReadResult {
        OsSystem.read(path, limit)
    }
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        OsSystem.canonicalize(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        OsSystem.is_dir(path)
    }
    fn is_file(&self, path: &Path) -> bool {
        OsSystem.is_file(path)
    }
    fn env_var(&self, name: &str) -> Option<String> {
        OsSystem.env_var(name)
    }
    fn stamp(&self, path: &Path) -> Option<ryechain::system::FileStamp> {
        OsSystem.stamp(path)
    }
    fn current_dir(&self) -> std::io::Result<PathBuf> {
        OsSystem.current_dir()
    }
}

/// Every file of every space, by path, as comparable rows (texts as strings).
fn files_of(outcome: &LoadOutcome) -> Vec<(PathBuf, String, String, String)> {
    let Change { roots, .. } = &outcome.change;
    let mut rows: Vec<_> = roots
        .iter()
        .flatten()
        .flat_map(|root| &root.files)
        .map(|f| {
            let contents = match &f.contents {
                FileContents::Text(t) => format!("text {:?}", t.as_str()),
                other => format!("{other:?}"),
            };
            (
                f.path.clone(),
                f.rel.clone(),
                contents,
                format!("{:?} {:?}", f.space, f.link_origin),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// Load the tree under `dir` (`project`, `user`, `system`) both ways and compare; the files
/// of the full load, for further checks.
fn loads_agree(dir: &Path) -> Vec<(PathBuf, String, String, String)> {
    let specs = three_spaces(
        dir.join("project"),
        dir.join("user"),
        SpaceSource::Dir(dir.join("system")),
        "gen",
    );
    let ahead = load(&OsSystem, &specs);
    let after = load(&OneAtATime, &specs);
    let files = files_of(&ahead);
    assert_eq!(files, files_of(&after), "the files loaded");
    assert_eq!(ahead.notices, after.notices, "the notices");
    // Files come by `rel` within each space (the database's order).
    for root in ahead.change.roots.iter().flatten() {
        assert!(
            root.files.windows(2).all(|w| w[0].rel < w[1].rel),
            "{:?} not in rel order",
            root.space
        );
    }
    files
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A tree with every kind of file and folder a walk meets, in the project space's tools.
fn every_kind_of_file(dir: &Path) {
    let tools = dir.join("project/.ai/tools");
    // Enough small files to fill more than one batch (1 MiB), one folder past a job (512).
    for i in 0..700 {
        let body = format!(
            "__version__ = \"1.0.{i}\"\n{}",
            "# filler line\n".repeat(200)
        );
        write(
            &tools.join(format!("big_folder/t{i:03}.py")),
            body.as_bytes(),
        );
    }
    for d in 0..30 {
        for f in 0..3 {
            write(
                &tools.join(format!("nest/d{d}/sub/f{f}.yaml")),
                format!("version: \"1.0.{f}\"\nexecutor_id: x/{d}\n").as_bytes(),
            );
        }
    }
    // Not UTF-8, between files of the same folder (and so of the same batch).
    write(&tools.join("mixed/a.py"), b"x = 1\n");
    write(&tools.join("mixed/b.py"), b"y = '\xff\xfe'\n");
    write(&tools.join("mixed/c.py"), b"z = 3\n");
    write(&tools.join("mixed/empty.py"), b"");
    // Past the size read into a shared buffer, and past the limit of what is read at all.
    write(
        &tools.join("sizes/large.py"),
        "# x\n".repeat(10_000).as_bytes(),
    );
    write(&tools.join("sizes/huge.py"), &vec![b'#'; 9 * 1024 * 1024]);
    // A name that is not UTF-8, a hidden folder.
    let odd = tools.join(std::ffi::OsStr::from_bytes(b"odd\xffname.py"));
    write(&odd, b"x = 1\n");
    write(&tools.join(".hidden/h.py"), b"h = 1\n");
    // Symlinks to files: inside the space, into another space, out of every space, nowhere.
    write(&dir.join("user/.ai/tools/shared/u.py"), b"u = 1\n");
    write(&dir.join("outside/o.py"), b"o = 1\n");
    let links = tools.join("links");
    std::fs::create_dir_all(&links).unwrap();
    std::os::unix::fs::symlink(tools.join("mixed/a.py"), links.join("in.py")).unwrap();
    std::os::unix::fs::symlink(
        dir.join("user/.ai/tools/shared/u.py"),
        links.join("user.py"),
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.join("outside/o.py"), links.join("out.py")).unwrap();
    std::os::unix::fs::symlink(dir.join("missing.py"), links.join("gone.py")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(tools.join("links/pipe.py"))
        .status()
        .unwrap();
    assert!(status.success());
    write(&dir.join("system/.ai/tools/sys/s.py"), b"s = 1\n");
    write(&dir.join("project/.ai/lockfiles/x.lock.yaml"), b"a: 1\n");
    // What a killed `sign` leaves: a temporary file beside its target, and an older build's
    // spare folder (never loaded).
    write(
        &tools.join("mixed/.a.py.ryechain-sign.4242.Xy12Ab.tmp"),
        b"x = 1\n",
    );
    write(&tools.join(".ryechain-sign.4242.123456/0.tmp"), b"x = 1\n");
}

#[test]
fn the_full_load_loads_what_the_plainest_system_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    every_kind_of_file(&dir);
    let files = loads_agree(&dir);
    let tools = dir.join("project/.ai/tools");
    let row = |path: PathBuf| {
        files
            .iter()
            .find(|r| r.0 == path)
            .unwrap_or_else(|| panic!("{} not loaded", path.display()))
            .2
            .clone()
    };
    // Near misses, as loaded: texts beside bytes that are not UTF-8 are intact.
    assert_eq!(row(tools.join("mixed/a.py")), "text \"x = 1\\n\"");
    assert_eq!(row(tools.join("mixed/c.py")), "text \"z = 3\\n\"");
    assert_eq!(row(tools.join("mixed/b.py")), "NotUtf8 { valid_up_to: 5 }");
    assert!(row(tools.join("sizes/huge.py")).starts_with("TooLarge"));
    assert!(row(tools.join("sizes/large.py")).starts_with("text \"# x"));
    assert!(row(tools.join("links/out.py")).starts_with("SymlinkEscape"));
    assert!(row(tools.join("links/gone.py")).starts_with("NotRegular"));
    assert!(row(tools.join("links/pipe.py")).starts_with("NotRegular"));
    let signs: Vec<_> = files
        .iter()
        .filter(|r| r.0.to_string_lossy().contains(".ryechain-sign."))
        .collect();
    assert!(signs.is_empty(), "{signs:?}");
    assert_eq!(
        files
            .iter()
            .filter(|r| r.0.starts_with(tools.join("big_folder")))
            .count(),
        700
    );
}

#[test]
fn folders_reached_through_symlinks_load_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    every_kind_of_file(&dir);
    let tools = dir.join("project/.ai/tools");
    // A folder reached twice (through its path and a link), one outside, a loop.
    std::os::unix::fs::symlink(tools.join("nest"), tools.join("again")).unwrap();
    std::os::unix::fs::symlink(dir.join("outside"), tools.join("outer")).unwrap();
    std::os::unix::fs::symlink(&tools, tools.join("nest/d0/loop")).unwrap();
    let files = loads_agree(&dir);
    assert!(
        files
            .iter()
            .any(|r| r.0 == tools.join("again/d3/sub/f1.yaml"))
    );
    assert!(
        files
            .iter()
            .any(|r| r.0 == tools.join("outer/o.py") && r.2.starts_with("SymlinkEscape"))
    );
}

/// The walk's words for what it meets: each regular file once (`sign`'s leftovers too: the
/// loader drops them), symlinks to files, a dangling symlink and a FIFO as entries of their own.
#[test]
fn the_walk_lists_every_regular_file_once_and_the_rest_in_its_words() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    every_kind_of_file(&dir);
    let tools = dir.join("project/.ai/tools");
    let entries = OsSystem.walk(&tools);
    let plain = |e: &&WalkEntry| !e.is_symlink && e.error.is_none() && e.not_regular.is_none();
    let mut paths: Vec<&Path> = entries
        .iter()
        .filter(plain)
        .map(|e| e.path.as_path())
        .collect();
    paths.sort();
    paths.dedup();
    // 700 + 90 + 4 + 2 + 2 regular files, and the two `sign` leftovers.
    assert_eq!(paths.len(), 800);
    assert_eq!(
        entries.iter().filter(plain).count(),
        800,
        "a file listed twice"
    );
    let mut others: Vec<(String, bool, Option<String>)> = entries
        .iter()
        .filter(|e| !plain(e))
        .map(|e| {
            (
                e.path.file_name().unwrap().to_string_lossy().into_owned(),
                e.is_symlink,
                e.not_regular.clone(),
            )
        })
        .collect();
    others.sort();
    assert_eq!(
        others,
        [
            (
                "gone.py".to_owned(),
                true,
                Some("a dangling symlink: its target does not exist".to_owned())
            ),
            ("in.py".to_owned(), true, None),
            ("out.py".to_owned(), true, None),
            ("pipe.py".to_owned(), false, Some("a FIFO".to_owned())),
            ("user.py".to_owned(), true, None),
        ]
    );
}

/// One generated file: a folder (of a few), a name, bytes (UTF-8 or not), and whether a symlink
/// to it sits beside the folders.
fn file() -> impl Strategy<Value = (u8, String, Vec<u8>, bool)> {
    (
        0u8..4,
        "[a-c]{1,3}\\.(py|yaml)",
        prop_oneof![
            "[ -~\n]{0,300}".prop_map(String::into_bytes),
            proptest::collection::vec(any::<u8>(), 0..200),
            (1usize..40).prop_map(|n| "# pad\n".repeat(n * 100).into_bytes()),
        ],
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn generated_trees_load_alike(files in proptest::collection::vec(file(), 1..40), dir_link in any::<bool>()) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let tools = dir.join("project/.ai/tools");
        for (i, (folder, name, bytes, link)) in files.iter().enumerate() {
            let path = tools.join(format!("f{folder}/{i}{name}"));
            write(&path, bytes);
            if *link {
                std::os::unix::fs::symlink(&path, tools.join(format!("link{i}.py"))).unwrap();
            }
        }
        if dir_link {
            std::os::unix::fs::symlink(tools.join("f0"), tools.join("linked")).unwrap();
        }
        std::fs::create_dir_all(dir.join("user/.ai/tools")).unwrap();
        loads_agree(&dir);
    }
}

/// The base load's walk of a few folders (`walk_small`, one thread) lists what the full walk lists,
/// in the same words: files, nested files, hidden ones, a name that is not UTF-8, symlinks in and
/// out, a dangling one, a FIFO, a symlink to a folder and a symlink loop.
#[test]
fn the_small_walk_lists_what_the_full_walk_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    every_kind_of_file(&dir);
    let tools = dir.join("project/.ai/tools");
    std::os::unix::fs::symlink(tools.join("nest/d1"), tools.join("links/folder")).unwrap();
    std::fs::create_dir_all(tools.join("loop/inner")).unwrap();
    std::os::unix::fs::symlink(tools.join("loop"), tools.join("loop/inner/back")).unwrap();
    let listed = |entries: Vec<WalkEntry>| {
        let mut rows: Vec<String> = entries
            .into_iter()
            .map(|e| {
                format!(
                    "{} link={} special={:?} error={:?}",
                    e.path.display(),
                    e.is_symlink,
                    e.not_regular,
                    e.error
                )
            })
            .collect();
        rows.sort();
        rows
    };
    let small = listed(OsSystem.walk_small(&tools));
    let full = listed(OsSystem.walk(&tools));
    assert_eq!(small, full);
    let has = |needle: &str| small.iter().any(|r| r.contains(needle));
    assert!(has("links/gone.py link=true special=Some("), "{small:#?}");
    assert!(has("links/pipe.py link=false special=Some(\"a FIFO\")"));
    assert!(has("links/folder/sub/f0.yaml link=false"));
    assert!(has("File system loop found"), "{small:#?}");
    assert!(small.len() > 800);
}
