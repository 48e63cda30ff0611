//! L2 the salsa database: inputs (`SourceFile`, `SpaceRoot`, `Workspace`), the interned keys, and the
//! database trait every query takes. Inputs are written only by `Change::apply` (see `change.rs`).

pub mod change;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::model::{Space, SpaceKind};

pub use change::{Change, FileChange, RootSpec, Settings};

/// A file's text, shared: a range of a buffer that may hold the texts of many files. The bulk
/// loader packs the files it reads into buffers of about [`Text::PACK_BYTES`] (see
/// [`Text::pack`]): one allocation per file wasted a tenth of the texts on the allocator's size
/// classes, and texts are kept for the whole run. Compares, hashes and prints as its `str`.
#[derive(Clone)]
pub struct Text {
    buf: Arc<String>,
    start: usize,
    end: usize,
}

impl Text {
    /// Texts are packed into buffers of about this size.
    pub const PACK_BYTES: usize = 1 << 20;

    pub fn as_str(&self) -> &str {
        &self.buf[self.start..self.end]
    }

    /// The same texts, copied into shared buffers of about [`Text::PACK_BYTES`] each, in order.
    /// Texts of that size or more keep a buffer of their own.
    pub fn pack<'a>(texts: impl IntoIterator<Item = &'a mut Text>) {
        let mut pending: Vec<&'a mut Text> = Vec::new();
        let mut bytes = 0;
        for text in texts {
            if text.len() >= Self::PACK_BYTES {
                continue;
            }
            if bytes + text.len() > Self::PACK_BYTES {
                Self::pack_into_one(std::mem::take(&mut pending), bytes);
                bytes = 0;
            }
            bytes += text.len();
            pending.push(text);
        }
        Self::pack_into_one(pending, bytes);
    }

    fn pack_into_one(texts: Vec<&mut Text>, bytes: usize) {
        if texts.len() < 2 {
            return;
        }
        let mut buf = String::with_capacity(bytes);
        let mut ranges = Vec::with_capacity(texts.len());
        for text in &texts {
            let start = buf.len();
            buf.push_str(text.as_str());
            ranges.push((start, buf.len()));
        }
        let buf = Arc::new(buf);
        for (text, (start, end)) in texts.into_iter().zip(ranges) {
            *text = Text {
                buf: buf.clone(),
                start,
                end,
            };
        }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        let end = s.len();
        Text {
            buf: Arc::new(s),
            start: 0,
            end,
        }
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text::from(s.to_owned())
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// What the loader could make of a file. Problems are data, reported by `file_diagnostics`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FileContents {
    Text(Text),
    /// The bytes are not UTF-8; `valid_up_to` is the offset of the first bad byte.
    NotUtf8 {
        valid_up_to: usize,
    },
    /// Larger than the loader's limit; not read.
    TooLarge {
        size: u64,
        limit: u64,
    },
    /// The OS refused (permission, a vanished file, a symlink loop...).
    Unreadable(String),
    /// A symlink whose target lies outside every space root; not read.
    SymlinkEscape {
        target: String,
    },
    /// Not a regular file (a FIFO, a socket, a device, a dangling symlink): never opened, and
    /// never a resolution candidate (§1.7 "first regular file wins"). The text says what it is.
    NotRegular(String),
}

impl FileContents {
    pub fn text(&self) -> Option<&str> {
        match self {
            FileContents::Text(t) => Some(t),
            _ => None,
        }
    }

    /// Why the file has no text, in words that follow "cannot be read: " (`None` for text):
    /// `it is not valid UTF-8 (…)`, or the operating system's own reason.
    pub fn problem(&self) -> Option<String> {
        Some(match self {
            FileContents::Text(_) => return None,
            FileContents::NotUtf8 { valid_up_to } => {
                format!("it is not valid UTF-8 (first bad byte at offset {valid_up_to})")
            }
            FileContents::TooLarge { size, limit } => {
                format!("it is {size} bytes, over the {limit}-byte limit for tool files")
            }
            FileContents::Unreadable(msg) => msg.clone(),
            FileContents::SymlinkEscape { target } => {
                format!("it is a symlink out of every space (to {target})")
            }
            FileContents::NotRegular(what) => {
                format!(
                    "it is not a regular file ({what}); it is not read and no item resolves to it"
                )
            }
        })
    }
}

/// One file of a space, pushed in from the edge.
#[salsa::input(debug)]
pub struct SourceFile {
    /// Absolute path (or `<embedded:bundle>/...` for the embedded system space).
    #[returns(ref)]
    pub path: Arc<PathBuf>,
    /// Path relative to the space's `.ai/` directory, `/`-separated (`tools/rye/bash/bash.py`).
    #[returns(ref)]
    pub rel: Arc<str>,
    #[returns(ref)]
    pub space: Space,
    /// The space the file really lives in when it is a symlink into another space (else `None`).
    #[returns(copy)]
    pub link_origin: Option<SpaceKind>,
    #[returns(ref)]
    pub contents: FileContents,
}

/// One space: its base directory and the set of its files (adding/removing a file changes this set;
/// editing one does not).
#[salsa::input(debug)]
pub struct SpaceRoot {
    #[returns(ref)]
    pub space: Space,
    /// The `.ai` directory.
    #[returns(ref)]
    pub root: Arc<PathBuf>,
    /// Sorted by `rel`.
    #[returns(ref)]
    pub files: Arc<Vec<SourceFile>>,
    /// The `rel` of each of `files`, in the same order: queries that scan a space's paths (the
    /// index, the extractors, the trust store) read this one input instead of one field per file,
    /// so after an edit their memos are verified in O(1), not O(files).
    #[returns(ref)]
    pub rels: Arc<Vec<Arc<str>>>,
}

impl SpaceRoot {
    /// `(rel, file)` of every file of the space, in `rel` order, reading two inputs in all.
    pub fn entries(self, db: &dyn Db) -> impl Iterator<Item = (&Arc<str>, SourceFile)> + '_ {
        self.rels(db).iter().zip(self.files(db).iter().copied())
    }
}

/// The whole workspace: spaces in search order (project, user, bundles...) and the settings.
#[salsa::input(debug)]
pub struct Workspace {
    #[returns(ref)]
    pub roots: Vec<SpaceRoot>,
    #[returns(ref)]
    pub settings: Settings,
}

/// An executor id looked up from a kind of space (the key of `resolve_item`).
#[salsa::interned(unsafe(no_lifetime), revisions = usize::MAX, debug)]
pub struct ResolveKey {
    #[returns(ref)]
    pub id: String,
    pub from_kind: SpaceKind,
}

/// The database trait queries take.
#[salsa::db]
pub trait Db: salsa::Database {
    fn workspace(&self) -> Workspace;
}

/// Event log used by tests to assert which queries ran (CONVENTIONS habit 6).
pub type EventLog = Arc<Mutex<Option<Vec<String>>>>;

#[salsa::db]
#[derive(Clone)]
pub struct RootDb {
    storage: salsa::Storage<Self>,
    workspace: Option<Workspace>,
    /// Path → file, maintained by `Change::apply` (not a salsa input; never read by queries).
    pub(crate) files_by_path: Arc<FxHashMap<Arc<PathBuf>, SourceFile>>,
    log: EventLog,
}

impl Default for RootDb {
    fn default() -> Self {
        RootDb::new()
    }
}

impl RootDb {
    pub fn new() -> Self {
        let log: EventLog = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut guard) = sink.lock()
                && let Some(entries) = guard.as_mut()
            {
                entries.push(format!("{database_key:?}"));
            }
        })));
        let mut db = RootDb {
            storage,
            workspace: None,
            files_by_path: Arc::default(),
            log,
        };
        let ws = Workspace::new(&db, Vec::new(), Settings::default());
        db.workspace = Some(ws);
        db
    }

    /// Start recording which queries execute (`take_executed` drains the record).
    pub fn enable_event_log(&self) {
        if let Ok(mut guard) = self.log.lock() {
            guard.get_or_insert_with(Vec::new);
        }
    }

    /// The loaded file at `path`, if any.
    pub fn file_at(&self, path: &std::path::Path) -> Option<SourceFile> {
        self.files_by_path.get(&path.to_path_buf()).copied()
    }

    /// Paths of the loaded files below `dir` (a folder deleted on disk removes all of them).
    pub fn paths_under(&self, dir: &std::path::Path) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self
            .files_by_path
            .keys()
            .filter(|p| p.starts_with(dir) && p.as_path() != dir)
            .map(|p| p.as_ref().clone())
            .collect();
        paths.sort();
        paths
    }

    /// Query executions since the last call, as `query_name(Id(..))` strings.
    pub fn take_executed(&self) -> Vec<String> {
        self.log
            .lock()
            .ok()
            .and_then(|mut g| g.as_mut().map(std::mem::take))
            .unwrap_or_default()
    }
}

#[salsa::db]
impl salsa::Database for RootDb {}

#[salsa::db]
impl Db for RootDb {
    fn workspace(&self) -> Workspace {
        // Set in `new`; the handle never changes afterwards (only its fields do).
        self.workspace.expect("workspace is created in RootDb::new")
    }
}
