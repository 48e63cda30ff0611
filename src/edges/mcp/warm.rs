//! L6 the MCP server's warm projects: per project, its spaces loaded once into a `Host` and kept
//! in step with the disk by a `notify` watcher, so a `rye_search` call reads memos instead of the
//! tree. Before each call every change made on disk before it is applied (the watcher's events
//! up to a barrier, each file re-read and re-classified by `load::Reloader`, as `lint --watch`
//! does); what the watcher cannot vouch for (its queue overflowed, it failed, it is silent) is
//! answered by loading the spaces afresh.
//!
//! The barrier: the watcher also watches a private folder in the temporary directory; opening
//! the file there queues an event behind every change the kernel has already queued (one inotify
//! queue), so once that event arrives, everything before the call has arrived too.

#![allow(
    clippy::disallowed_methods,
    reason = "the barrier is a file of the server's own, in a private temporary folder"
)]

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, EventKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};

use crate::analysis::{Analysis, Host};
use crate::db::FileChange;
use crate::facts::search::SearchIndex;
use crate::load::{Reloader, SpaceSource, SpaceSpec, load};
use crate::system::System;
use crate::system::os::now_ns;

/// How long a refresh waits for the watcher to hand the barrier's event on.
const BARRIER_PATIENCE: Duration = Duration::from_secs(2);

/// Projects kept warm at once (the least recently used goes first).
pub const WARM_PROJECTS: usize = 4;

/// One project's spaces, loaded and watched.
pub struct Warm {
    sys: &'static dyn System,
    specs: Vec<SpaceSpec>,
    host: Host,
    /// What searches scan, built at the first search and patched with each change after.
    index: Option<SearchIndex>,
    reloader: Reloader<'static>,
    /// `None`: the spaces could not be watched; every call loads them afresh.
    watch: Option<Watch>,
    /// The `.ai` folders of on-disk spaces that did not exist when the watch began: one made
    /// since is a new space to load.
    absent: Vec<PathBuf>,
    /// What the person should know (the load's notices, a watch that failed), each said once.
    notices: Vec<String>,
    /// How the last refresh went, for the benchmarks and the tests.
    last: Refresh,
}

/// What a refresh did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refresh {
    /// Nothing had changed.
    #[default]
    Unchanged,
    /// This many paths were re-read.
    Reloaded(usize),
    /// The watcher's queue had overflowed: a stamp census of the tree (no file opened) found this
    /// many paths to re-read, with the events read.
    Census(usize),
    /// The spaces were loaded afresh.
    Loaded,
}

struct Watch {
    watcher: RecommendedWatcher,
    events: Receiver<notify::Result<notify::Event>>,
    /// The private folder and the file whose opening is the barrier.
    folder: PathBuf,
    barrier: PathBuf,
    /// Barrier openings whose event a refresh gave up waiting for: so many barrier events are
    /// stale when they arrive.
    stale: usize,
    /// The time (ns since the epoch, as stamps count) up to which the events read so far vouch
    /// for every change: the watch's start, then the opening of the last barrier that came back.
    vouched_ns: i64,
}

/// Why the watcher's events cannot be taken as they are.
enum Trouble {
    /// The queue overflowed (ryechain's own reads of the tree are enough: inotify reports every
    /// file opened): the events read, and the time since which a change may have been missed,
    /// which a stamp census finds ([`changed_since`]).
    Overflow { paths: Vec<PathBuf>, since_ns: i64 },
    /// The watcher failed or did not answer: the spaces are read again.
    Other(String),
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.watcher.unwatch(&self.folder);
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

impl Watch {
    /// Watch `dirs` (recursively) and a private barrier folder, with one watcher.
    fn start(dirs: &[PathBuf]) -> Result<Watch, String> {
        let (tx, events) = std::sync::mpsc::channel();
        let watcher = notify::recommended_watcher(move |e| {
            let _ = tx.send(e);
        })
        .map_err(|e| format!("cannot watch for changes: {e}"))?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let folder =
            std::env::temp_dir().join(format!(".ryechain-mcp.{}.{stamp}", std::process::id()));
        let made = {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new().mode(0o700).create(&folder)
        };
        made.map_err(|e| format!("cannot make {}: {e}", folder.display()))?;
        let barrier = folder.join("barrier");
        // Dropped on an early return: the folder goes with it.
        let mut watch = Watch {
            watcher,
            events,
            folder,
            barrier,
            stale: 0,
            vouched_ns: now_ns(),
        };
        std::fs::File::create(&watch.barrier)
            .map_err(|e| format!("cannot make {}: {e}", watch.barrier.display()))?;
        watch
            .watcher
            .watch(&watch.folder, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch {}: {e}", watch.folder.display()))?;
        for d in dirs {
            watch
                .watcher
                .watch(d, RecursiveMode::Recursive)
                .map_err(|e| format!("cannot watch {}: {e}", d.display()))?;
        }
        Ok(watch)
    }

    /// The paths changed before now, each once; `Err` when the watcher cannot vouch for them
    /// (its queue overflowed, it reported an error, or the barrier did not come back in time).
    /// `overflowed`: take the queue as overflowed whatever it says (the tests' way to reach the
    /// census, as the kernel overflows it only under load).
    fn changes(&mut self, sys: &dyn System, overflowed: bool) -> Result<Vec<PathBuf>, Trouble> {
        let opened_ns = now_ns();
        std::fs::File::open(&self.barrier)
            .map_err(|e| Trouble::Other(format!("cannot open {}: {e}", self.barrier.display())))?;
        let deadline = Instant::now() + BARRIER_PATIENCE;
        let mut paths = Vec::new();
        let mut trouble = None;
        let mut overflowed = overflowed;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = match self.events.recv_timeout(left) {
                Ok(Ok(event)) => event,
                Ok(Err(e)) => {
                    trouble = Some(format!("the file watcher reported: {e}"));
                    continue;
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.stale += 1;
                    return Err(Trouble::Other(
                        "the file watcher did not answer in time".to_owned(),
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Trouble::Other("the file watcher stopped".to_owned()));
                }
            };
            if event.need_rescan() {
                overflowed = true;
                continue;
            }
            if event.paths.iter().any(|p| p.starts_with(&self.folder)) {
                if matches!(event.kind, EventKind::Access(AccessKind::Open(_))) {
                    if self.stale == 0 {
                        break;
                    }
                    self.stale -= 1;
                }
                continue;
            }
            paths.extend(crate::load::watched_paths(&event, sys));
        }
        if let Some(why) = trouble {
            return Err(Trouble::Other(why));
        }
        paths.sort();
        paths.dedup();
        let since_ns = std::mem::replace(&mut self.vouched_ns, opened_ns);
        if overflowed {
            return Err(Trouble::Overflow { paths, since_ns });
        }
        Ok(paths)
    }
}

/// The paths below the `.ai` folders `roots` that may have changed since `since_ns`, found by
/// `stat` alone (no file is opened: the watcher would report each opening, and a census of a
/// large tree would overflow its queue again): every file of the database whose stamp is not
/// older (less [`FileStamp::RACY_NS`], for coarse file-system clocks), or that is gone, and in
/// every folder whose stamp is not older, the entries the database does not hold (a file or a
/// folder made since, which the reload reads or walks).
fn changed_since(
    sys: &dyn System,
    a: Analysis<'_>,
    roots: &[PathBuf],
    since_ns: i64,
) -> Vec<PathBuf> {
    use rustc_hash::FxHashSet;
    let since = since_ns.saturating_sub(crate::system::FileStamp::RACY_NS);
    let recent = |path: &Path| {
        sys.stamp(path)
            .map(|st| st.ctime_ns >= since || st.mtime_ns >= since)
    };
    let mut out = Vec::new();
    let mut dirs: FxHashSet<PathBuf> = roots.iter().cloned().collect();
    let mut known: FxHashSet<PathBuf> = FxHashSet::default();
    for root in roots {
        for file in a.paths_under(root) {
            let mut dir = file.parent();
            while let Some(d) = dir {
                if !d.starts_with(root) || !dirs.insert(d.to_path_buf()) {
                    break;
                }
                dir = d.parent();
            }
            if recent(&file) != Some(false) {
                out.push(file.clone());
            }
            known.insert(file);
        }
    }
    for dir in &dirs {
        if recent(dir) != Some(true) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            out.push(dir.clone());
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !known.contains(&path) && !dirs.contains(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The `.ai` folders of the on-disk spaces.
fn ai_dirs(specs: &[SpaceSpec]) -> Vec<PathBuf> {
    specs
        .iter()
        .filter_map(|s| match &s.source {
            SpaceSource::Dir(base) => Some(base.join(".ai")),
            SpaceSource::Embedded => None,
        })
        .collect()
}

impl Warm {
    /// Watch the spaces, then load them (a change made while they load is among the events the
    /// first refresh reads).
    pub fn open(sys: &'static dyn System, specs: Vec<SpaceSpec>) -> Warm {
        let (present, absent): (Vec<PathBuf>, Vec<PathBuf>) =
            ai_dirs(&specs).into_iter().partition(|d| sys.is_dir(d));
        let mut notices = Vec::new();
        let watch = match Watch::start(&present) {
            Ok(w) => Some(w),
            Err(why) => {
                notices.push(format!(
                    "{why}; each search loads the spaces afresh (slower on a large tree)"
                ));
                None
            }
        };
        let (host, reloader, loaded) = Warm::load(sys, &specs);
        notices.extend(loaded);
        let mut warm = Warm {
            sys,
            specs,
            host,
            index: None,
            reloader,
            watch,
            absent,
            notices,
            last: Refresh::Loaded,
        };
        warm.refresh();
        warm.last = Refresh::Loaded;
        warm
    }

    fn load(
        sys: &'static dyn System,
        specs: &[SpaceSpec],
    ) -> (Host, Reloader<'static>, Vec<String>) {
        let outcome = load(sys, specs);
        let mut host = Host::new();
        let mut change = outcome.change;
        change.settings = Some(crate::db::Settings::default());
        host.apply(change);
        let mut reloader = Reloader::new(sys, specs);
        reloader.note_links(&outcome.links);
        (host, reloader, outcome.notices)
    }

    /// The notices not yet shown (each is handed out once).
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// What the last refresh did.
    #[cfg(any(test, feature = "testing"))]
    pub fn last_refresh(&self) -> Refresh {
        self.last
    }

    /// Bring the database in line with the disk as it was when this call began.
    pub fn refresh(&mut self) {
        self.refresh_after(false);
    }

    /// [`Warm::refresh`] as it goes when the watcher's queue overflowed: a stamp census of the
    /// tree finds what the events may have missed (the kernel overflows it only under load, which
    /// a test cannot bring about at will).
    #[cfg(any(test, feature = "testing"))]
    pub fn refresh_as_if_overflowed(&mut self) {
        self.refresh_after(true);
    }

    fn refresh_after(&mut self, overflowed: bool) {
        let sys = self.sys;
        if self.absent.iter().any(|d| sys.is_dir(d)) {
            // A space's `.ai/` made since: watch and load it all again.
            *self = Warm::open(sys, std::mem::take(&mut self.specs));
            return;
        }
        let changed = match &mut self.watch {
            Some(watch) => watch.changes(sys, overflowed),
            None => Err(Trouble::Other(String::new())),
        };
        let mut census = false;
        let changed = match changed {
            Err(Trouble::Overflow {
                mut paths,
                since_ns,
            }) => {
                let roots: Vec<PathBuf> = ai_dirs(&self.specs)
                    .into_iter()
                    .filter(|d| sys.is_dir(d))
                    .collect();
                paths.extend(changed_since(sys, self.host.analysis(), &roots, since_ns));
                paths.sort();
                paths.dedup();
                census = true;
                Ok(paths)
            }
            Err(Trouble::Other(why)) => Err(why),
            Ok(paths) => Ok(paths),
        };
        match changed {
            Ok(paths) if paths.is_empty() && !census => self.last = Refresh::Unchanged,
            Ok(paths) => {
                let a = self.host.analysis();
                let change = self.reloader.reload(&paths, &|dir| a.paths_under(dir));
                let touched: Vec<PathBuf> = change
                    .files
                    .iter()
                    .map(|f| match f {
                        FileChange::Write(spec) => spec.path.clone(),
                        FileChange::Remove(path) => path.clone(),
                    })
                    .collect();
                if !change.files.is_empty() {
                    self.host.apply(change);
                    if let Some(index) = &mut self.index {
                        self.host.analysis().refresh_search_index(index, &touched);
                    }
                }
                self.last = if census {
                    Refresh::Census(paths.len())
                } else {
                    Refresh::Reloaded(paths.len())
                };
            }
            Err(why) => {
                if !why.is_empty() {
                    self.notices
                        .push(format!("{why}; the spaces are read again"));
                }
                let (host, reloader, loaded) = Warm::load(sys, &self.specs);
                self.host = host;
                self.index = None;
                self.reloader = reloader;
                self.notices.extend(loaded);
                self.last = Refresh::Loaded;
            }
        }
    }

    /// The view of the database as the last refresh left it, and the search index (built at the
    /// first search).
    pub fn search_view(&mut self) -> (Analysis<'_>, &SearchIndex) {
        let host = &self.host;
        let index = self
            .index
            .get_or_insert_with(|| host.analysis().search_index());
        (host.analysis(), index)
    }
}

/// The warm projects of a server, the most recently used first.
#[derive(Default)]
pub struct WarmProjects {
    projects: Vec<(PathBuf, Warm)>,
}

impl WarmProjects {
    /// The warm state of `project` with `specs`, refreshed: opened (loaded and watched) on its
    /// first call or when its spaces changed, else brought in line with the disk.
    pub fn get(
        &mut self,
        sys: &'static dyn System,
        project: &Path,
        specs: Vec<SpaceSpec>,
    ) -> &mut Warm {
        match self.projects.iter().position(|(p, _)| p == project) {
            Some(i) if self.projects[i].1.specs == specs => {
                let entry = self.projects.remove(i);
                self.projects.insert(0, entry);
                self.projects[0].1.refresh();
            }
            found => {
                if let Some(i) = found {
                    self.projects.remove(i);
                }
                self.projects.truncate(WARM_PROJECTS - 1);
                self.projects
                    .insert(0, (project.to_path_buf(), Warm::open(sys, specs)));
            }
        }
        &mut self.projects[0].1
    }
}
