//! The MCP server's warm projects (`mcp::warm`): a project loaded once and watched, then changed
//! on disk between calls — a description edited, a tool added, one removed, a folder of tools
//! made, one renamed, a space's `.ai/` made — each seen by the very next search, with only what
//! changed read again.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests write a temporary project and change it on disk"
)]

use std::path::{Path, PathBuf};

use ryechain::edges::mcp::warm::{Refresh, Warm, WarmProjects};
use ryechain::facts::search::{SearchRequest, Source};
use ryechain::integrity::ItemKind;
use ryechain::load::{SpaceSource, SpaceSpec};
use ryechain::model::Space;
use ryechain::system::os::OsSystem;

fn tool_text(description: &str) -> String {
    format!(
        "__version__=\"1.0.0\"\n__tool_type__=\"bash\"\n__executor_id__=\"rye/core/runtimes/bash/bash\"\n__category__=\"acme\"\n__tool_description__=\"{description}\"\necho '{{}}'\n"
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn specs(project: &Path, user: &Path) -> Vec<SpaceSpec> {
    vec![
        SpaceSpec {
            space: Space::Project,
            source: SpaceSource::Dir(project.to_path_buf()),
        },
        SpaceSpec {
            space: Space::User,
            source: SpaceSource::Dir(user.to_path_buf()),
        },
        // ryechain's own bundle: its extractors make `.sh` files tools.
        SpaceSpec {
            space: Space::System {
                order: 0,
                bundle: "ryechain".into(),
            },
            source: SpaceSource::Embedded,
        },
    ]
}

/// The ids a refreshed search for `query` finds in every space, sorted.
fn found(warm: &mut Warm, query: &str) -> Vec<String> {
    warm.refresh();
    let req = SearchRequest {
        source: Source::All,
        limit: 1000,
        ..SearchRequest::new(ItemKind::Tool, query)
    };
    let (a, index) = warm.search_view();
    let mut ids: Vec<String> = a
        .search_in(index, &req)
        .expect("the query parses")
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect();
    ids.sort();
    ids
}

struct Project {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    user: PathBuf,
}

impl Project {
    fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dir = root.join("p");
        let user = root.join("home");
        write(
            &dir.join(".ai/tools/acme/greet.sh"),
            &tool_text("Greet a person"),
        );
        write(
            &dir.join(".ai/tools/acme/sync.sh"),
            &tool_text("Sync the logs"),
        );
        std::fs::create_dir_all(&user).unwrap();
        Project {
            _tmp: tmp,
            dir,
            user,
        }
    }

    fn tools(&self) -> PathBuf {
        self.dir.join(".ai/tools/acme")
    }

    fn open(&self) -> Warm {
        Warm::open(&OsSystem, specs(&self.dir, &self.user))
    }
}

#[test]
fn edits_additions_and_removals_on_disk_are_seen_by_the_next_call() {
    let p = Project::new();
    let mut warm = p.open();
    assert_eq!(found(&mut warm, "greet"), ["acme/greet"]);
    assert_eq!(warm.last_refresh(), Refresh::Unchanged);
    assert_eq!(found(&mut warm, "greet"), ["acme/greet"]);
    assert_eq!(
        warm.last_refresh(),
        Refresh::Unchanged,
        "nothing changed: nothing read"
    );

    // An edit.
    write(&p.tools().join("greet.sh"), &tool_text("Welcome a visitor"));
    assert_eq!(found(&mut warm, "visitor"), ["acme/greet"]);
    assert_eq!(warm.last_refresh(), Refresh::Reloaded(1));
    assert!(found(&mut warm, "person").is_empty());

    // An addition, and a removal.
    write(
        &p.tools().join("deploy.sh"),
        &tool_text("Deploy the visitor portal"),
    );
    assert_eq!(found(&mut warm, "visitor"), ["acme/deploy", "acme/greet"]);
    std::fs::remove_file(p.tools().join("greet.sh")).unwrap();
    assert_eq!(found(&mut warm, "visitor"), ["acme/deploy"]);

    // A folder of tools made at once, then renamed.
    let made = p.dir.join(".ai/tools/fresh");
    write(&made.join("a.sh"), &tool_text("Zebra crossing"));
    write(&made.join("deep/b.sh"), &tool_text("Zebra stripes"));
    assert_eq!(found(&mut warm, "zebra"), ["fresh/a", "fresh/deep/b"]);
    std::fs::rename(&made, p.dir.join(".ai/tools/moved")).unwrap();
    assert_eq!(found(&mut warm, "zebra"), ["moved/a", "moved/deep/b"]);

    // A file replaced by a rename over it (as editors save).
    let staged = p.dir.join(".ai/tools/acme/.sync.sh.tmp");
    write(&staged, &tool_text("Sync the archive"));
    std::fs::rename(&staged, p.tools().join("sync.sh")).unwrap();
    assert_eq!(found(&mut warm, "archive"), ["acme/sync"]);
    assert!(matches!(warm.last_refresh(), Refresh::Reloaded(_)));
}

#[test]
fn a_space_made_after_the_first_call_is_loaded() {
    let p = Project::new();
    let mut warm = p.open();
    assert!(found(&mut warm, "mine").is_empty());
    write(
        &p.user.join(".ai/tools/me/mine.sh"),
        &tool_text("Mine only"),
    );
    assert_eq!(found(&mut warm, "mine"), ["me/mine"]);
    assert_eq!(warm.last_refresh(), Refresh::Loaded);
    write(
        &p.user.join(".ai/tools/me/other.sh"),
        &tool_text("Mine too"),
    );
    assert_eq!(found(&mut warm, "mine"), ["me/mine", "me/other"]);
    assert_eq!(warm.last_refresh(), Refresh::Reloaded(1));
}

#[test]
fn projects_are_kept_warm_and_reopened_when_their_spaces_change() {
    let (a, b) = (Project::new(), Project::new());
    write(&b.tools().join("only_b.sh"), &tool_text("Only in b"));
    let mut projects = WarmProjects::default();
    let search = |w: &mut Warm| {
        let req = SearchRequest::new(ItemKind::Tool, "only");
        let (a, index) = w.search_view();
        a.search_in(index, &req).unwrap().total
    };
    let w = projects.get(&OsSystem, &a.dir, specs(&a.dir, &a.user));
    assert_eq!(search(w), 0);
    let w = projects.get(&OsSystem, &b.dir, specs(&b.dir, &b.user));
    assert_eq!(search(w), 1);
    let w = projects.get(&OsSystem, &a.dir, specs(&a.dir, &a.user));
    assert_eq!(w.last_refresh(), Refresh::Unchanged, "a was kept");
    // The same project with other spaces (b's user space) is opened again.
    let w = projects.get(&OsSystem, &a.dir, specs(&a.dir, &b.user));
    assert_eq!(w.last_refresh(), Refresh::Loaded);
}

/// The watcher reports every file opened (inotify's `IN_OPEN`, which notify always asks for), so
/// reading a tree larger than its queue while the machine is busy overflows it — the server's
/// own load of a 100k tree did, and every next call loaded the tree again. Now an overflow costs
/// a stamp census of the tree (no file opened), which finds what changed since the last barrier
/// the events vouched for: an edit, a file made in a known folder, a folder made, a removal, and
/// nothing else. (The kernel overflows the queue only under load, so the test takes the queue as
/// overflowed.)
#[test]
fn an_overflowed_watcher_queue_costs_a_stamp_census_not_a_reload() {
    let p = Project::new();
    let bulk = p.dir.join(".ai/tools/bulk");
    let files = 600;
    let mut made = Vec::with_capacity(files);
    for i in 0..files {
        let path = bulk.join(format!("d{:02}/t{i}.sh", i / 100));
        write(&path, &tool_text("Bulk item"));
        made.push(path);
    }
    let mut warm = p.open();
    assert_eq!(found(&mut warm, "greet"), ["acme/greet"]);
    // Stamps within `FileStamp::RACY_NS` (2 s) of the last vouched barrier count as changed:
    // let the tree age past it, and vouch for it with one call.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(found(&mut warm, "greet"), ["acme/greet"]);
    warm.refresh_as_if_overflowed();
    assert_eq!(warm.last_refresh(), Refresh::Census(0), "nothing changed");

    write(&p.tools().join("greet.sh"), &tool_text("Welcome a visitor"));
    write(&bulk.join("d00/new.sh"), &tool_text("Freshly made"));
    write(&bulk.join("fresh/deep/x.sh"), &tool_text("Freshly deep"));
    std::fs::remove_file(&made[1]).unwrap();
    warm.refresh_as_if_overflowed();
    // The events read name these too; the census alone finds them as well: edited greet.sh,
    // new.sh, the folder fresh/ (walked), the removed file (and its folder, whose stamp moved).
    assert!(
        matches!(warm.last_refresh(), Refresh::Census(n) if (4..=8).contains(&n)),
        "{:?}",
        warm.last_refresh()
    );
    assert_eq!(found(&mut warm, "visitor"), ["acme/greet"]);
    assert_eq!(
        found(&mut warm, "freshly"),
        ["bulk/d00/new", "bulk/fresh/deep/x"]
    );
    assert_eq!(
        found(&mut warm, "bulk").len(),
        files - 1,
        "one of the bulk items removed"
    );
    assert!(found(&mut warm, "person").is_empty());
}
