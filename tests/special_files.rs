//! Files under `.ai/tools/` that are not regular files (a FIFO, a socket, a dangling symlink):
//! the walk and the reader never block on them, `lint` reports each once as `unreadable-file`,
//! and resolution skips them as the single-item loader does (§1.7 "first regular file wins").
//! Every run that could hang on a regression runs under a timeout, so it fails instead.
#![cfg(unix)]
#![allow(
    clippy::disallowed_methods,
    reason = "the test makes FIFOs, sockets and symlinks on disk and runs the ryechain binary"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ryechain::analysis::chain_view::chain_of;
use ryechain::analysis::{Host, LintOptions, lint};
use ryechain::db::Settings;
use ryechain::load::{SpaceSource, load, load_item};
use ryechain::system::os::OsSystem;
use ryechain::system::{ReadResult, System};
use ryechain::testing::three_spaces;

const LIMIT: Duration = Duration::from_secs(60);

/// Run `f` on its own thread; panic if it does not finish within `LIMIT` (a blocked read).
fn within_limit<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("{what} did not finish within {LIMIT:?} (blocked on a FIFO?)"))
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A project whose tools dir holds a regular tool and three special files, each shadowing (by
/// extension order, `.py` before `.yaml`) a regular file of the same id. Returns (root, project).
/// The socket's listener is returned to keep it bound.
fn special_tree() -> (tempfile::TempDir, PathBuf, std::os::unix::net::UnixListener) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let project = dir.join("project");
    let tools = project.join(".ai/tools/acme");
    std::fs::create_dir_all(&tools).unwrap();
    let tool = "__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/primitives/subprocess\"\n";
    std::fs::write(tools.join("ok.py"), tool).unwrap();
    for name in ["pipe", "sock", "gone"] {
        let yaml =
            "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\n";
        std::fs::write(tools.join(format!("{name}.yaml")), yaml).unwrap();
    }
    mkfifo(&tools.join("pipe.py"));
    let listener = std::os::unix::net::UnixListener::bind(tools.join("sock.py")).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere.py"), tools.join("gone.py")).unwrap();
    // A tool whose executor id names the FIFO's id: it must resolve to `pipe.yaml`.
    let user = "__version__ = \"1.0.0\"\n__executor_id__ = \"acme/pipe\"\n";
    std::fs::write(tools.join("uses_pipe.py"), user).unwrap();
    (tmp, project, listener)
}

#[test]
fn the_reader_refuses_a_fifo_and_a_socket_without_blocking() {
    let (_tmp, project, _listener) = special_tree();
    let tools = project.join(".ai/tools/acme");
    for (name, what) in [("pipe.py", "a FIFO"), ("sock.py", "a socket")] {
        let path = tools.join(name);
        let got = within_limit("OsSystem::read", move || OsSystem.read(&path, 1 << 20));
        assert_eq!(
            got,
            ReadResult::Error(format!("not a regular file ({what})")),
            "{name}"
        );
    }
    // The walk lists them as not regular (never opened), the dangling symlink too.
    let walked = OsSystem.walk(&tools);
    let kind = |n: &str| {
        walked
            .iter()
            .find(|e| e.path.ends_with(n))
            .unwrap_or_else(|| panic!("{n} not walked: {walked:?}"))
            .not_regular
            .clone()
    };
    assert_eq!(kind("pipe.py").as_deref(), Some("a FIFO"));
    assert_eq!(kind("sock.py").as_deref(), Some("a socket"));
    assert!(kind("gone.py").unwrap().contains("dangling symlink"));
    assert_eq!(kind("ok.py"), None);
    assert!(walked.iter().all(|e| e.error.is_none()), "{walked:?}");
}

#[test]
fn lint_finishes_and_reports_each_special_file_once() {
    let (tmp, project, _listener) = special_tree();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .arg("lint")
        .arg(&project)
        .arg("--user-space")
        .arg(tmp.path().join("user"))
        .args(["--format", "json"])
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("`ryechain lint` hung on a special file");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    // unreadable-file is an error: exit 1.
    assert_eq!(status.code(), Some(1), "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let diags = json["diagnostics"].as_array().unwrap();
    // The tree is unsigned; the integrity family is not what this test is about.
    let mut seen: Vec<(String, String, String)> = diags
        .iter()
        .filter(|d| d["rule"] != "unsigned-item")
        .map(|d| {
            let path = d["path"].as_str().unwrap();
            let name = Path::new(path).file_name().unwrap().to_str().unwrap();
            (
                name.to_owned(),
                d["rule"].as_str().unwrap().to_owned(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    seen.sort();
    let names: Vec<(&str, &str)> = seen
        .iter()
        .map(|(n, r, _)| (n.as_str(), r.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("gone.py", "unreadable-file"),
            ("pipe.py", "unreadable-file"),
            ("sock.py", "unreadable-file"),
        ],
        "{out}"
    );
    for ((_, _, message), what) in seen
        .iter()
        .zip(["a dangling symlink", "a FIFO", "a socket"])
    {
        assert!(
            message.contains(&format!("not a regular file ({what}")),
            "{message}"
        );
    }
}

#[test]
fn resolution_skips_special_files_in_full_and_lazy_loads_alike() {
    let (tmp, project, _listener) = special_tree();
    let dir = tmp.path().canonicalize().unwrap();
    let specs = three_spaces(
        project.clone(),
        dir.join("user"),
        SpaceSource::Embedded,
        "ryechain",
    );
    let full_specs = specs.clone();
    let full = within_limit("full load", move || {
        let outcome = load(&OsSystem, &full_specs);
        let mut host = Host::new();
        host.apply(outcome.change);
        host
    });
    let fdb = full.snapshot();
    let tools = project.join(".ai/tools/acme");
    for id in [
        "acme/pipe",
        "acme/sock",
        "acme/gone",
        "acme/uses_pipe",
        "acme/ok",
    ] {
        let lazy_specs = specs.clone();
        let owned = id.to_owned();
        let lazy = within_limit("lazy load", move || {
            let (host, _, _) = load_item(&OsSystem, &lazy_specs, &owned, Settings::default());
            chain_of(&host.snapshot(), &owned)
        });
        let full_view = chain_of(&fdb, id);
        assert_eq!(lazy, full_view, "chain view of {id}");
        assert_eq!(
            ryechain::render::chain::dry_run(&lazy),
            ryechain::render::chain::dry_run(&full_view),
            "dry run of {id}"
        );
        assert!(full_view.found, "{id}");
    }
    // The special files lose to the regular `.yaml` of their id, also as an executor.
    for name in ["pipe", "sock", "gone"] {
        let view = chain_of(&fdb, &format!("acme/{name}"));
        assert_eq!(
            view.elements[0].path.as_deref(),
            Some(tools.join(format!("{name}.yaml")).as_path())
        );
    }
    let view = chain_of(&fdb, "acme/uses_pipe");
    assert_eq!(
        view.elements[1].path.as_deref(),
        Some(tools.join("pipe.yaml").as_path())
    );
    // Lint of the full load: one unreadable-file per special file, and the `.yaml` files are
    // not called ambiguous (the special file is no rival).
    let report = lint(&fdb, &LintOptions::default(), &|_| {});
    let mut found: Vec<(String, String)> = report
        .findings
        .iter()
        .filter(|f| &*f.rule != "unsigned-item")
        .map(|f| {
            let name = Path::new(&f.path).file_name().unwrap().to_str().unwrap();
            (name.to_owned(), f.rule.to_string())
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("gone.py".to_owned(), "unreadable-file".to_owned()),
            ("pipe.py".to_owned(), "unreadable-file".to_owned()),
            ("sock.py".to_owned(), "unreadable-file".to_owned()),
        ],
        "{:#?}",
        report.findings
    );
}

/// `walk_noting_links` lists every file `walk` lists, and the folders below the root it entered
/// through a symlink (a link to a folder inside the tree, one to a folder outside it, a link
/// inside a linked folder), never a plain folder or the root; a loop is a walk error, as in
/// `walk`.
#[test]
fn the_walk_notes_the_folders_it_entered_through_symlinks() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    let outside = tmp.path().join("outside");
    for dir in [root.join("a/b"), outside.join("deep")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(root.join("a/b/x.py"), "x = 1\n").unwrap();
    std::fs::write(outside.join("deep/y.py"), "y = 1\n").unwrap();
    std::os::unix::fs::symlink(root.join("a"), root.join("to_a")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("a/out")).unwrap();
    std::os::unix::fs::symlink(&root, outside.join("deep/loop")).unwrap();
    let sys = OsSystem;
    let (mut entries, links) = sys.walk_noting_links(&root);
    let mut links = links.expect("the OS walk knows its links");
    links.sort();
    assert_eq!(
        links,
        [root.join("a/out"), root.join("to_a"), root.join("to_a/out"),]
    );
    let mut plain = sys.walk(&root);
    let key = |e: &ryechain::system::WalkEntry| e.path.clone();
    entries.sort_by_key(key);
    plain.sort_by_key(key);
    assert_eq!(entries, plain);
    let files: Vec<&Path> = entries
        .iter()
        .filter(|e| e.error.is_none())
        .map(|e| e.path.as_path())
        .collect();
    assert_eq!(
        files,
        [
            root.join("a/b/x.py"),
            root.join("a/out/deep/y.py"),
            root.join("to_a/b/x.py"),
            root.join("to_a/out/deep/y.py"),
        ]
    );
    assert!(
        entries.iter().any(|e| e.error.is_some()),
        "the link back to the root is a loop: {entries:?}"
    );
}
