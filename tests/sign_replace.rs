//! How `ryechain sign` replaces files, end to end with the built binary: each file keeps its
//! owner, group, mode and extended attributes; a file another process writes to during the
//! batch is reported as changed and keeps that write (paused at fixed points through the test
//! hook `RYECHAIN_TEST_SIGN_PAUSE`, a FIFO); a batch killed with SIGKILL at any point leaves every
//! target old or new, and only temporary files that lint never reads and the next `sign`
//! removes. Spec §10.2 (signing rewrites the file in place), §12.9 (batch signing).
#![allow(
    clippy::disallowed_methods,
    reason = "the test writes and reads temporary trees and runs the binary"
)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use ryechain::integrity::keys::fingerprint;
use ryechain::integrity::{ItemKind, SignatureFormat, Verdict, verify_text};

const PY_TOOL: &str = "#!/usr/bin/env python3\n\"\"\"A tool.\"\"\"\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\n__category__ = \"my\"\n__tool_description__ = \"Says hello\"\n\nprint(\"hello\")\n";

/// A temporary project and user space, and the binary run inside them.
struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    user: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (project, user) = (root.join("project"), root.join("user"));
        std::fs::create_dir_all(project.join(".ai/tools")).unwrap();
        std::fs::create_dir_all(&user).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        let env = Env {
            _tmp: tmp,
            root,
            project,
            user,
        };
        // The key made before any batch: a run killed early must not be one that makes it.
        let out = env.run(&["keys", "generate"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        env
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ryechain"));
        c.args(args)
            .current_dir(&self.project)
            .env("USER_SPACE", &self.user)
            .env("HOME", self.root.join("home"))
            .env("NO_COLOR", "1")
            .env_remove("RYE_SYSTEM_SPACE")
            .env_remove("RYE_SIGNING_KEY_DIR")
            .env_remove("RYECHAIN_TEST_SIGN_PAUSE");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// `n` tools `many/d{i % 7}/t{i}.py`.
    fn tools(&self, n: usize) -> Vec<PathBuf> {
        (0..n)
            .map(|i| {
                let p = self
                    .project
                    .join(format!(".ai/tools/many/d{}/t{i}.py", i % 7));
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, PY_TOOL).unwrap();
                p
            })
            .collect()
    }

    fn public_pem(&self) -> String {
        std::fs::read_to_string(self.user.join(".ai/config/keys/signing/public_key.pem")).unwrap()
    }
}

fn json_of(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Whether the file at `path` verifies as a Python tool with only `pem` trusted.
fn verifies(path: &Path, pem: &str) -> bool {
    let text = std::fs::read_to_string(path).unwrap();
    let fp = fingerprint(pem.as_bytes());
    let trusted = |f: &str| (f == fp).then(|| pem.to_owned());
    let format = SignatureFormat::hash_comment();
    matches!(
        verify_text(ItemKind::Tool, &format, &text, &trusted),
        Verdict::Verified { .. }
    )
}

/// Every leftover of `sign` below `dir` (a name with `.ryechain-sign.` in it).
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry
            .file_name()
            .to_string_lossy()
            .contains(".ryechain-sign.")
        {
            found.push(path);
        } else if entry.file_type().unwrap().is_dir() {
            found.extend(leftovers(&path));
        }
    }
    found
}

/// A batch (70 files: synced by file system) and a single item (synced file by file) keep each
/// file's owner and group (as root: another user's file stays theirs), its mode (set-id bits
/// too) and its extended attributes.
#[test]
#[allow(clippy::print_stderr, reason = "says which check is left out")]
fn signing_keeps_owner_group_mode_and_extended_attributes() {
    let env = Env::new();
    let mut paths = env.tools(70);
    let single = env.project.join(".ai/tools/one.py");
    std::fs::write(&single, PY_TOOL).unwrap();
    paths.push(single.clone());
    let root = rustix::process::geteuid().is_root();
    if !root {
        eprintln!("not root: the owner and group are not changed, so not checked");
    }
    let xattrs = rustix::fs::setxattr(
        &paths[0],
        "user.probe",
        b"1",
        rustix::fs::XattrFlags::empty(),
    );
    if let Err(e) = &xattrs {
        eprintln!("no user extended attributes here ({e}): not checked");
    }
    for (k, p) in [&paths[3], &single].into_iter().enumerate() {
        if root {
            std::os::unix::fs::chown(p, Some(4321 + k as u32), Some(4400)).unwrap();
        }
        // (After the change of owner, which clears set-id bits.)
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o2750)).unwrap();
        if xattrs.is_ok() {
            let value = format!("origin {k}");
            rustix::fs::setxattr(
                p,
                "user.origin",
                value.as_bytes(),
                rustix::fs::XattrFlags::empty(),
            )
            .unwrap();
        }
    }
    let out = env.run(&["sign", "many/**", "--json"]);
    assert_eq!(json_of(&out)["total"], 70);
    assert!(out.status.success(), "{}", json_of(&out));
    let out = env.run(&["sign", "one"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pem = env.public_pem();
    for p in &paths {
        assert!(verifies(p, &pem), "{}", p.display());
    }
    for (k, p) in [&paths[3], &single].into_iter().enumerate() {
        let meta = std::fs::metadata(p).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o2750, "{}", p.display());
        if root {
            assert_eq!((meta.uid(), meta.gid()), (4321 + k as u32, 4400));
        }
        if xattrs.is_ok() {
            let mut value = [0u8; 32];
            let n = rustix::fs::getxattr(p, "user.origin", &mut value[..]).unwrap();
            assert_eq!(&value[..n], format!("origin {k}").as_bytes());
        }
    }
    let meta = std::fs::metadata(&paths[4]).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o644);
    assert_eq!(
        (meta.uid(), meta.gid()),
        (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw()
        )
    );
}

/// A `sign` run paused by the test hook: each time it stops, `at` (where it is: `staged`, once
/// every new text is written, or the path it is about to rename over) is handed to `on_pause`
/// before it goes on. The run's output.
fn run_pausing(env: &Env, args: &[&str], mut on_pause: impl FnMut(&str, &mut Child)) -> Output {
    let fifo = env.root.join("pause");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let mut child = env
        .cmd(args)
        .env("RYECHAIN_TEST_SIGN_PAUSE", &fifo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let at_path = env.root.join("pause.at");
    let mut last = 0;
    loop {
        // The run holds the FIFO open for reading only while it waits (not blocking: the loop
        // also sees the run end).
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
        {
            Ok(writer) => {
                // (Opened again before the run let go of a pause already handled: skipped.)
                let said = std::fs::read_to_string(&at_path).unwrap();
                let (n, at) = said.split_once(' ').unwrap();
                let n: u64 = n.parse().unwrap();
                let seen = n <= last;
                if !seen {
                    last = n;
                    on_pause(at, &mut child);
                }
                drop(writer);
                if seen {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            Err(_) if child.try_wait().unwrap().is_some() => break,
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    }
    std::fs::remove_file(&fifo).unwrap();
    child.wait_with_output().unwrap()
}

use std::os::unix::fs::OpenOptionsExt as _;

/// Another process writes to two files of a batch: one after every new text is written (its
/// stamp moved before its rename: it is left as it is), one while the batch is about to rename
/// over it, after its last check (the write goes to the old file, which the rename takes out of
/// place: its text, with the write, is put back). Both are reported as changed since they were
/// read, keep the write and stay unsigned; the others are signed. Small batches and large ones
/// (synced file by file, and by file system).
#[test]
fn a_file_written_during_the_batch_is_reported_and_keeps_the_write() {
    for n in [5, 70] {
        let env = Env::new();
        let paths = env.tools(n);
        let (early, late) = (&paths[1], &paths[2]);
        let mut renames = 0;
        let out = run_pausing(&env, &["sign", "many/**", "--json"], |at, _| {
            let victim = match at {
                "staged" => Some(early),
                _ if Path::new(at) == late.as_path() => Some(late),
                _ => None,
            };
            renames += usize::from(at != "staged");
            if let Some(p) = victim {
                let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
                std::io::Write::write_all(&mut f, b"print(\"a write\")\n").unwrap();
            }
        });
        let v = json_of(&out);
        assert_eq!(out.status.code(), Some(1), "{v}");
        // The early one is not renamed over: one rename fewer.
        assert_eq!(renames, n - 1, "{v}");
        let mut failed: Vec<(String, String)> = v["failed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["item"].as_str().unwrap().to_owned(),
                    f["error"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        failed.sort();
        let changed = "the file changed since it was read; sign it again".to_owned();
        assert_eq!(
            failed,
            [
                ("many/d1/t1".to_owned(), changed.clone()),
                ("many/d2/t2".to_owned(), changed)
            ],
            "{v}"
        );
        let pem = env.public_pem();
        for (i, p) in paths.iter().enumerate() {
            if i == 1 || i == 2 {
                let text = std::fs::read_to_string(p).unwrap();
                assert_eq!(text, format!("{PY_TOOL}print(\"a write\")\n"));
            } else {
                assert!(verifies(p, &pem), "{}", p.display());
            }
        }
        assert!(
            leftovers(&env.project).is_empty(),
            "{:?}",
            leftovers(&env.project)
        );
    }
}

/// A small deterministic generator (xorshift) for the kill delays; the seed is printed.
struct Rng(u64);

impl Rng {
    fn next_unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Every target is either exactly what it held before the run (`before`) or signed and
/// verifying; nothing else is in its folders but leftovers of `sign`. The leftovers.
#[track_caller]
fn assert_old_or_new(env: &Env, paths: &[PathBuf], before: &[Vec<u8>], round: &str) -> usize {
    let pem = env.public_pem();
    for (p, old) in paths.iter().zip(before) {
        let now = std::fs::read(p).unwrap();
        assert!(
            now == *old || verifies(p, &pem),
            "{round}: {} is neither old nor new:\n{}",
            p.display(),
            String::from_utf8_lossy(&now)
        );
    }
    let tools = env.project.join(".ai/tools/many");
    let left = leftovers(&tools);
    let files: usize = (0..7)
        .map(|d| {
            std::fs::read_dir(tools.join(format!("d{d}")))
                .unwrap()
                .count()
        })
        .sum();
    assert_eq!(files, paths.len() + left.len(), "{round}: {left:?}");
    left.len()
}

/// `sign '*'` killed with SIGKILL at random points (after a full run's time, scaled by a
/// random fraction), and at two fixed ones (every new text written, none renamed; half the
/// files renamed): every target is old or new each time; what it leaves is only temporary
/// files, which `lint` does not read and the next `sign` removes.
#[test]
#[allow(
    clippy::print_stderr,
    reason = "the seed and what each round left, to repeat a failure"
)]
fn a_batch_killed_at_any_point_leaves_every_file_old_or_new() {
    let env = Env::new();
    let paths = env.tools(400);
    let snapshot = || -> Vec<Vec<u8>> { paths.iter().map(|p| std::fs::read(p).unwrap()).collect() };
    let started = std::time::Instant::now();
    let out = env.run(&["sign", "*"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let full = started.elapsed();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("kill delays from seed {seed}, a full run {full:?}");
    let mut rng = Rng(seed);
    let mut left_total = 0;
    for round in 0..8 {
        let before = snapshot();
        let mut child = env
            .cmd(&["sign", "*"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let delay = full.mul_f64(rng.next_unit() * 1.1);
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap();
        let left = assert_old_or_new(
            &env,
            &paths,
            &before,
            &format!("round {round} (killed after {delay:?})"),
        );
        eprintln!("round {round}: killed after {delay:?}, {left} temporary files left");
        left_total += left;
    }
    // Killed once every new text is written, and once half the files are renamed.
    for kill_at in [0, paths.len() / 2] {
        let before = snapshot();
        let inodes: Vec<u64> = paths
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().ino())
            .collect();
        let mut renames = 0;
        let out = run_pausing(&env, &["sign", "*"], |at, child| {
            renames += usize::from(at != "staged");
            if (kill_at == 0 && at == "staged") || (kill_at > 0 && renames == kill_at) {
                let _ = child.kill();
            }
        });
        assert!(!out.status.success());
        let left = assert_old_or_new(
            &env,
            &paths,
            &before,
            &format!("killed at rename {kill_at}"),
        );
        // (By inode: a file signed again within the second it was signed before gets the same
        // bytes.)
        let renamed = paths
            .iter()
            .zip(&inodes)
            .filter(|(p, ino)| std::fs::metadata(p).unwrap().ino() != **ino)
            .count();
        // (The renames let go before the kill may or may not have run.) Every file not renamed
        // has its temporary file beside it.
        assert!(
            renamed <= kill_at.saturating_sub(1),
            "killed at rename {kill_at}: {renamed}"
        );
        assert_eq!(left, paths.len() - renamed, "killed at rename {kill_at}");
        left_total += left;
    }
    assert!(left_total > 0);
    // Lint does not read the leftovers: nothing it says names them.
    let lint = env.run(&["lint", "--no-cache", "--format", "json"]);
    let said = String::from_utf8_lossy(&lint.stdout);
    assert!(!said.contains("ryechain-sign"), "{said}");
    let out = env.run(&["sign", "*"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pem = env.public_pem();
    for p in &paths {
        assert!(verifies(p, &pem), "{}", p.display());
    }
    assert!(
        leftovers(&env.project).is_empty(),
        "{:?}",
        leftovers(&env.project)
    );
}
