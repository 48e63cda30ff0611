//! L2 the salsa database: inputs (`SourceFile`, `SpaceRoot`, `Workspace`), the interned keys, and the
//! database trait every query takes. Inputs are written only by `Change::apply` (see `change.rs`).

pub mod change;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::model::{Space, SpaceKind};

pub use change::{Change, FileChange, Settings};

/// A file's text, shared: a range of a buffer that may hold the texts of many files, or, for a
/// large text that compresses well, its lz4 block. The bulk loader packs the files it reads into
/// buffers of about [`Text::PACK_BYTES`] (see [`Text::pack`]): one allocation per file wasted a
/// tenth of the texts on the allocator's size classes, and texts are kept for the whole run.
/// Compares, hashes and prints as its text.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Plain {
        buf: Arc<String>,
        start: usize,
        end: usize,
    },
    /// lz4 block of a text of `len` bytes.
    Compressed { block: Arc<[u8]>, len: usize },
}

impl Text {
    /// Texts are packed into buffers of about this size.
    pub const PACK_BYTES: usize = 1 << 20;

    /// From this size on, [`Text::pack`] holds a text compressed when that at least halves it.
    /// Tool files are a few KB; a text this large is generated or hostile (a module of constants,
    /// 20,000 brackets, a 7 MB file of filler) and is typically read twice (metadata, hash).
    pub const COMPRESS_BYTES: usize = 16 << 10;

    /// The text: borrowed, or expanded into a new string when held compressed (once per call:
    /// keep the result for the whole use).
    pub fn as_str(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::Plain { buf, start, end } => Cow::Borrowed(&buf[*start..*end]),
            Repr::Compressed { block, len } => Cow::Owned(expand(block, *len)),
        }
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Plain { start, end, .. } => end - start,
            Repr::Compressed { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the text is held compressed (see [`Text::COMPRESS_BYTES`]).
    pub fn is_compressed(&self) -> bool {
        matches!(self.0, Repr::Compressed { .. })
    }

    /// The text when it is not held compressed.
    pub fn plain(&self) -> Option<&str> {
        match &self.0 {
            Repr::Plain { buf, start, end } => Some(&buf[*start..*end]),
            Repr::Compressed { .. } => None,
        }
    }

    /// This text, expanded when held compressed: for a use that reads it many times.
    pub fn expanded(&self) -> Text {
        match &self.0 {
            Repr::Plain { .. } => self.clone(),
            Repr::Compressed { block, len } => Text::from(expand(block, *len)),
        }
    }

    /// The same texts, copied into shared buffers of about [`Text::PACK_BYTES`] each, in order.
    /// A text of [`Text::COMPRESS_BYTES`] or more is held compressed when that at least halves
    /// it; otherwise a text of [`Text::PACK_BYTES`] or more keeps a buffer of its own.
    pub fn pack<'a>(texts: impl IntoIterator<Item = &'a mut Text>) {
        let mut pending: Vec<&'a mut Text> = Vec::new();
        let mut bytes = 0;
        for text in texts {
            if text.len() >= Self::COMPRESS_BYTES && text.compress() {
                continue;
            }
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

    /// Hold this text compressed if that at least halves it; whether it is held so now.
    fn compress(&mut self) -> bool {
        if let Repr::Plain { buf, start, end } = &self.0 {
            let block = lz4_flex::block::compress(&buf.as_bytes()[*start..*end]);
            if block.len() * 2 > end - start {
                return false;
            }
            self.0 = Repr::Compressed {
                block: Arc::from(block),
                len: end - start,
            };
        }
        true
    }

    /// The text at `range` of a shared buffer, held in place (no copy); `None` when `range` does
    /// not lie on character boundaries inside it.
    pub fn in_shared(buf: &Arc<String>, range: std::ops::Range<usize>) -> Option<Text> {
        buf.get(range.clone())?;
        Some(Text(Repr::Plain {
            buf: buf.clone(),
            start: range.start,
            end: range.end,
        }))
    }

    fn pack_into_one(texts: Vec<&mut Text>, bytes: usize) {
        if texts.len() < 2 {
            return;
        }
        let mut buf = String::with_capacity(bytes);
        let mut ranges = Vec::with_capacity(texts.len());
        for text in &texts {
            let start = buf.len();
            buf.push_str(&text.as_str());
            ranges.push((start, buf.len()));
        }
        let buf = Arc::new(buf);
        for (text, (start, end)) in texts.into_iter().zip(ranges) {
            *text = Text(Repr::Plain {
                buf: buf.clone(),
                start,
                end,
            });
        }
    }
}

/// The text of an lz4 block [`Text::compress`] made from `len` bytes of UTF-8.
fn expand(block: &[u8], len: usize) -> String {
    match lz4_flex::block::decompress(block, len) {
        Ok(bytes) => String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        // Unreachable: the block was made here from valid text and is never written to.
        Err(_) => String::new(),
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        let end = s.len();
        Text(Repr::Plain {
            buf: Arc::new(s),
            start: 0,
            end,
        })
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text::from(s.to_owned())
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.as_str() == other.as_str()
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
        std::fmt::Debug::fmt(&*self.as_str(), f)
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
    /// The text (expanded if held compressed, see [`Text::as_str`]).
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            FileContents::Text(t) => Some(t.as_str()),
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

    /// The `entries` whose `rel` starts with `prefix`, in `rel` order: one run of the sorted
    /// list, found by binary search (a query that reads one folder of a space — extractors,
    /// trust store, lockfiles — does not scan every path after a file was added).
    pub fn entries_under<'db>(
        self,
        db: &'db dyn Db,
        prefix: &str,
    ) -> impl Iterator<Item = (&'db Arc<str>, SourceFile)> + 'db {
        let (rels, files) = (self.rels(db), self.files(db));
        let start = rels.partition_point(|r| r.as_ref() < prefix);
        let len = rels[start..].partition_point(|r| r.starts_with(prefix));
        rels[start..start + len]
            .iter()
            .zip(files[start..start + len].iter().copied())
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
/// The executed queries' keys while recording (`RootDb::enable_event_log`); `on` is read before
/// the lock is taken, so a run that does not record takes no lock per query (two threads
/// contending for it on every one of a lint's 270k query executions).
#[derive(Default)]
pub struct EventLogState {
    on: std::sync::atomic::AtomicBool,
    entries: Mutex<Option<Vec<(salsa::DatabaseKeyIndex, String)>>>,
}

pub type EventLog = Arc<EventLogState>;

#[salsa::db]
#[derive(Clone)]
pub struct RootDb {
    storage: salsa::Storage<Self>,
    workspace: Option<Workspace>,
    /// Set only for a database built to record ([`RootDb::with_event_log`]): salsa builds an
    /// event for every query it runs or validates only when a callback is installed (≈1% of a
    /// lint's instructions, for nothing when no test reads them).
    log: Option<EventLog>,
}

impl Default for RootDb {
    fn default() -> Self {
        RootDb::new()
    }
}

impl RootDb {
    pub fn new() -> Self {
        RootDb::build(salsa::Storage::new(None), None)
    }

    /// A database that can record which queries execute ([`RootDb::enable_event_log`]).
    pub fn with_event_log() -> Self {
        let log: EventLog = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && sink.on.load(std::sync::atomic::Ordering::Relaxed)
                && let Ok(mut guard) = sink.entries.lock()
                && let Some(entries) = guard.as_mut()
            {
                entries.push((database_key, format!("{database_key:?}")));
            }
        })));
        RootDb::build(storage, Some(log))
    }

    fn build(storage: salsa::Storage<Self>, log: Option<EventLog>) -> Self {
        let mut db = RootDb {
            storage,
            workspace: None,
            log,
        };
        let ws = Workspace::new(&db, Vec::new(), Settings::default());
        db.workspace = Some(ws);
        db
    }

    /// Start recording which queries execute (`take_executed` drains the record). `false`: the
    /// database was not built to record ([`RootDb::with_event_log`]) and records nothing.
    #[must_use]
    pub fn enable_event_log(&self) -> bool {
        let Some(log) = &self.log else {
            return false;
        };
        let Ok(mut guard) = log.entries.lock() else {
            return false;
        };
        guard.get_or_insert_with(Vec::new);
        log.on.store(true, std::sync::atomic::Ordering::Relaxed);
        true
    }

    /// The loaded file at `path`, if any: its space's root is a prefix of it, and the rest, its
    /// `rel`, is found by binary search in the root's sorted `rels` (no path index is kept: one
    /// was built for every load, 0.05 s of a 100k-tool lint on one thread, for the few lookups
    /// rendering findings and editor changes make). The first space in search order wins.
    pub fn file_at(&self, path: &std::path::Path) -> Option<SourceFile> {
        let ws = self.workspace?;
        ws.roots(self).iter().find_map(|&root| {
            let rest = path.strip_prefix(root.root(self).as_path()).ok()?;
            let mut rel = String::new();
            for part in rest.components() {
                let std::path::Component::Normal(part) = part else {
                    return None;
                };
                if !rel.is_empty() {
                    rel.push('/');
                }
                rel.push_str(part.to_str()?);
            }
            let i = root
                .rels(self)
                .binary_search_by(|r| r.as_ref().cmp(rel.as_str()))
                .ok()?;
            let file = *root.files(self).get(i)?;
            (file.path(self).as_path() == path).then_some(file)
        })
    }

    /// Paths of the loaded files below `dir` (a folder deleted on disk removes all of them). A
    /// file's path is its root's joined with its `rel` (as [`RootDb::file_at`] relies on): below a
    /// root, the files under `dir` are one run of the sorted `rels`, found by binary search (a scan
    /// of every path cost `--watch` 30 ms at 100k tools for each file an editor renamed away).
    pub fn paths_under(&self, dir: &std::path::Path) -> Vec<PathBuf> {
        let Some(ws) = self.workspace else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = Vec::new();
        'roots: for &root in ws.roots(self) {
            let base = root.root(self).as_path();
            let files = root.files(self);
            let range = if base.starts_with(dir) {
                0..files.len()
            } else if let Ok(rest) = dir.strip_prefix(base) {
                // As `file_at` spells a rel: plain UTF-8 components, `/` after each.
                let mut prefix = String::new();
                for part in rest.components() {
                    let std::path::Component::Normal(part) = part else {
                        continue 'roots;
                    };
                    let Some(part) = part.to_str() else {
                        continue 'roots;
                    };
                    prefix.push_str(part);
                    prefix.push('/');
                }
                let rels = root.rels(self);
                let start = rels.partition_point(|r| r.as_ref() < prefix.as_str());
                let len = rels[start..]
                    .iter()
                    .take_while(|r| r.starts_with(prefix.as_str()))
                    .count();
                start..start + len
            } else {
                continue;
            };
            paths.extend(
                files[range]
                    .iter()
                    .map(|f| f.path(self))
                    .filter(|p| p.starts_with(dir) && p.as_path() != dir)
                    .map(|p| p.as_ref().clone()),
            );
        }
        paths.sort();
        paths.dedup();
        paths
    }

    /// Query executions since the last call, as `query_name(Id(..))` strings.
    pub fn take_executed(&self) -> Vec<String> {
        self.take_executed_keys()
            .into_iter()
            .map(|(_, s)| s)
            .collect()
    }

    /// Query executions since the last call, with their keys (`testing::query_ran` finds a
    /// query in them by its function, as `ruff_db::testing` does).
    pub fn take_executed_keys(&self) -> Vec<(salsa::DatabaseKeyIndex, String)> {
        self.log
            .as_ref()
            .and_then(|log| log.entries.lock().ok())
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

#[cfg(test)]
mod tests {
    use super::Text;

    fn hash(t: &Text) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(t)
    }

    /// Text that does not compress: a little xorshift noise in printable ASCII.
    fn noise(len: usize) -> String {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b' ' + (x % 94) as u8)
            })
            .collect()
    }

    #[test]
    fn large_compressible_texts_are_held_compressed_and_read_back_whole() {
        let filler = "x = [1, 2, 3]  # filler é\n".repeat(Text::COMPRESS_BYTES / 8);
        let small = "__version__ = \"1.0.0\"\n".to_owned();
        let odd = noise(Text::COMPRESS_BYTES * 2);
        let mut texts: Vec<Text> = [&small, &filler, &small, &odd]
            .iter()
            .map(|s| Text::from(s.as_str()))
            .collect();
        let before: Vec<u64> = texts.iter().map(hash).collect();
        Text::pack(texts.iter_mut());
        assert!(texts[1].is_compressed(), "filler compresses well");
        assert!(
            !texts[3].is_compressed(),
            "noise does not halve: kept plain"
        );
        assert!(
            !texts[0].is_compressed() && !texts[2].is_compressed(),
            "small texts"
        );
        for (t, s) in texts.iter().zip([&small, &filler, &small, &odd]) {
            assert_eq!(t.as_str(), s.as_str());
            assert_eq!(t.len(), s.len());
            assert_eq!(*t, Text::from(s.as_str()), "equal across representations");
            assert_eq!(t.expanded().plain(), Some(s.as_str()));
        }
        let after: Vec<u64> = texts.iter().map(hash).collect();
        assert_eq!(before, after, "hashes as its text");
        assert_eq!(texts[1].plain(), None);
        assert_ne!(texts[1], Text::from(&filler[1..]));
    }

    #[test]
    fn texts_just_under_the_size_stay_plain() {
        let text = "a".repeat(Text::COMPRESS_BYTES - 1);
        let mut t = [Text::from(text.as_str()), Text::from("b")];
        Text::pack(t.iter_mut());
        assert!(!t[0].is_compressed());
        assert_eq!(t[0].plain(), Some(text.as_str()));
    }
}
