//! L5 what the planner needs to know about the machine, as data: `Need` (a question the edge must
//! answer before planning can go on) and `Facts` (the answers so far). Planning is a pure function
//! of (database, request, facts); the edge loops "plan → answer the needs → plan again" until the
//! planner stops asking. Every question is deterministic, so the loop ends.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A question for the edge.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Need {
    /// Load every candidate file of this tool item id (`<space>/.ai/tools/<id><ext>` for every
    /// space and tool extension) into the database (lazy single-item loading).
    Item(String),
    /// Load `<space>/.ai/<rel>` of every space into the database (config files, lockfiles).
    SpaceFile(String),
    /// What is at this path (`PathFact`).
    Path(PathBuf),
    /// The text of a small file (the project's `.env`); `None` when missing or unreadable.
    Text(PathBuf),
    /// Run this argv (no shell, null stdin, 5 s limit); the first non-empty stdout line when it
    /// exits 0 (interpreter types `command` and `version_manager`, §5.4).
    Command(Vec<String>),
    /// The files a `verify_deps` walk finds (§6.6).
    Walk(DepWalk),
}

/// What kind of thing is at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathKind {
    Missing,
    File,
    Dir,
    /// A FIFO, socket, device...
    Other,
}

/// The answer to `Need::Path` (symlinks followed).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathFact {
    pub kind: PathKind,
    /// A regular file with an execute bit (always `false` for other kinds).
    pub executable: bool,
    /// The canonical path (`None` when missing).
    pub real: Option<PathBuf>,
}

impl PathFact {
    pub fn missing() -> PathFact {
        PathFact {
            kind: PathKind::Missing,
            executable: false,
            real: None,
        }
    }
}

/// A `verify_deps` walk (§6.6): files under `base` whose name ends with one of `extensions`
/// (exact, case-sensitive), pruning directories named in `exclude_dirs` at every depth, not
/// following symlinked directories.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DepWalk {
    pub base: PathBuf,
    pub recursive: bool,
    pub extensions: Vec<String>,
    pub exclude_dirs: Vec<String>,
}

/// One file a `verify_deps` walk found.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DepFile {
    /// The path as walked (under the canonical base).
    pub path: PathBuf,
    /// Its canonical path (`None` when it cannot be resolved, e.g. a dangling symlink).
    pub real: Option<PathBuf>,
    /// Its text, or why there is none (not UTF-8, too large, unreadable).
    pub text: Result<Arc<str>, String>,
}

/// The answer to `Need::Walk`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DepListing {
    /// The canonical base directory (`None` when it does not exist).
    pub real_base: Option<PathBuf>,
    /// Files in path order.
    pub files: Vec<DepFile>,
    /// Walk errors (permission denied...), as text.
    pub errors: Vec<String>,
}

pub use crate::analysis::lazy::Loaded;

/// Answers gathered so far. The edge fills it; the planner only reads it.
#[derive(Clone, Debug)]
pub struct Facts {
    /// The OS environment of the caller (read once at the edge).
    pub env: BTreeMap<String, String>,
    /// Tool ids whose candidate files are in the database.
    pub items: Loaded,
    /// Paths relative to `.ai/` probed in every space.
    pub space_files: Loaded,
    pub paths: HashMap<PathBuf, PathFact>,
    pub texts: HashMap<PathBuf, Option<Arc<str>>>,
    pub commands: HashMap<Vec<String>, Option<String>>,
    pub walks: HashMap<DepWalk, DepListing>,
}

impl Facts {
    /// Facts for a database that holds every file (nothing is loaded lazily).
    #[cfg(any(test, feature = "testing"))]
    pub fn complete(env: BTreeMap<String, String>) -> Facts {
        Facts::new(env, Loaded::All)
    }
    /// Facts for a lazily loaded database.
    pub fn lazy(env: BTreeMap<String, String>) -> Facts {
        Facts::new(env, Loaded::Some(BTreeSet::new()))
    }
    fn new(env: BTreeMap<String, String>, loaded: Loaded) -> Facts {
        Facts {
            env,
            items: loaded.clone(),
            space_files: loaded,
            paths: HashMap::new(),
            texts: HashMap::new(),
            commands: HashMap::new(),
            walks: HashMap::new(),
        }
    }
}

/// A read view of `Facts` that records every question it could not answer. Functions of the
/// planner take an `&Ask`; when one returns `None` the caller stops and returns `ask.needs()`.
pub struct Ask<'a> {
    facts: &'a Facts,
    needs: RefCell<BTreeSet<Need>>,
}

impl<'a> Ask<'a> {
    pub fn new(facts: &'a Facts) -> Ask<'a> {
        Ask {
            facts,
            needs: RefCell::default(),
        }
    }
    #[cfg(any(test, feature = "testing"))]
    pub fn facts(&self) -> &'a Facts {
        self.facts
    }
    pub fn env(&self) -> &'a BTreeMap<String, String> {
        &self.facts.env
    }
    fn want(&self, need: Need) {
        self.needs.borrow_mut().insert(need);
    }
    /// Whether anything was asked that is not known yet.
    #[cfg(any(test, feature = "testing"))]
    pub fn pending(&self) -> bool {
        !self.needs.borrow().is_empty()
    }
    /// The unanswered questions, in a stable order.
    pub fn needs(&self) -> Vec<Need> {
        self.needs.borrow().iter().cloned().collect()
    }
    pub fn path(&self, p: &Path) -> Option<&'a PathFact> {
        let hit = self.facts.paths.get(p);
        if hit.is_none() {
            self.want(Need::Path(p.to_path_buf()));
        }
        hit
    }
    /// `Some(true)` for an existing regular file (symlinks followed).
    pub fn is_file(&self, p: &Path) -> Option<bool> {
        self.path(p).map(|f| f.kind == PathKind::File)
    }
    pub fn text(&self, p: &Path) -> Option<Option<&'a Arc<str>>> {
        match self.facts.texts.get(p) {
            Some(t) => Some(t.as_ref()),
            None => {
                self.want(Need::Text(p.to_path_buf()));
                None
            }
        }
    }
    pub fn command(&self, argv: &[String]) -> Option<Option<&'a str>> {
        match self.facts.commands.get(argv) {
            Some(out) => Some(out.as_deref()),
            None => {
                self.want(Need::Command(argv.to_vec()));
                None
            }
        }
    }
    pub fn walk(&self, w: &DepWalk) -> Option<&'a DepListing> {
        let hit = self.facts.walks.get(w);
        if hit.is_none() {
            self.want(Need::Walk(w.clone()));
        }
        hit
    }
    /// `true` when the item's files are loaded; otherwise asks for them.
    pub fn item_loaded(&self, id: &str) -> bool {
        let ok = self.facts.items.contains(id);
        if !ok {
            self.want(Need::Item(id.to_owned()));
        }
        ok
    }
    /// `true` when `.ai/<rel>` of every space is loaded; otherwise asks for it.
    pub fn space_file_loaded(&self, rel: &str) -> bool {
        let ok = self.facts.space_files.contains(rel);
        if !ok {
            self.want(Need::SpaceFile(rel.to_owned()));
        }
        ok
    }
}
