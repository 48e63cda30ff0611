//! L6 the loader edge: walks each space's `.ai/` item, trust-store and lockfile dirs and reads `.ai/config/ryechain.yaml` through
//! a `System`, classifies symlinks by the space they really point into, and builds the `Change`
//! that feeds the database. Problems become file contents (diagnosed later) or notices.
//! `ItemLoader` is the lazy variant for single-item commands: a small base load, then only the
//! candidate files of the items a chain needs.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::lazy::Loaded;
use crate::analysis::{Analysis, Host};
use crate::db::change::{FileSpec, RootSpec};
use crate::db::{Change, FileChange, FileContents, Settings, Text};
use crate::model::{Space, SpaceKind, item_id_problem};
use crate::resolve::extractor_config;
use crate::rules::embedded_system_files;
use crate::system::{
    FileStamp, KnownDir, MetDir, ReadInto, ReadResult, Settled, System, WalkEntry,
};

/// Tool files above this size are not read (reported by `unreadable-file`).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Where a space's files come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpaceSource {
    /// A directory that contains `.ai/`.
    Dir(PathBuf),
    /// ryechain's own bundle, compiled into the binary.
    Embedded,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceSpec {
    pub space: Space,
    pub source: SpaceSource,
}

#[derive(Debug, Default)]
pub struct LoadOutcome {
    pub change: Change,
    /// Things the user should know that are not about one file (a missing `.ai/`, a walk error).
    pub notices: Vec<String>,
    /// The symlinks the walks met (to files and to folders), as walked paths: a watcher reports
    /// a change at a link's target, and the link must be read again (`Reloader::note_links`).
    pub links: Vec<PathBuf>,
}

/// The path prefix of embedded files, shown in diagnostics.
pub fn embedded_root(bundle: &str) -> PathBuf {
    PathBuf::from(format!("{}{bundle}>", crate::model::EMBEDDED_PATH_PREFIX))
}

/// `path` relative to `ai`, `/`-separated; `None` when it is not below `ai` or not UTF-8.
fn rel_of(ai: &Path, path: &Path) -> Option<String> {
    // Walked paths are `ai` joined with plain names: their bytes after `ai/` are the answer
    // (a `memcmp` and a UTF-8 check, against splitting both paths into components per file).
    // Anything unusual takes the component route.
    let bytes = path.as_os_str().as_encoded_bytes();
    let prefix = ai.as_os_str().as_encoded_bytes();
    if std::path::MAIN_SEPARATOR == '/'
        && let Some(rest) = bytes
            .strip_prefix(prefix)
            .and_then(|r| r.strip_prefix(b"/"))
        && !rest.is_empty()
        && !prefix.ends_with(b"/")
        && rest
            .split(|&b| b == b'/')
            .all(|seg| !seg.is_empty() && seg != b"." && seg != b"..")
    {
        return std::str::from_utf8(rest).ok().map(str::to_owned);
    }
    rel_of_components(ai, path)
}

fn rel_of_components(ai: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(ai).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Files read (and their texts packed) per job of the bulk load.
const PACK_FILES: usize = 512;

fn contents_of(read: ReadResult) -> FileContents {
    match read {
        ReadResult::Bytes(bytes) => match String::from_utf8(bytes) {
            Ok(s) => FileContents::Text(s.into()),
            Err(e) => FileContents::NotUtf8 {
                valid_up_to: e.utf8_error().valid_up_to(),
            },
        },
        ReadResult::TooLarge(size) => FileContents::TooLarge {
            size,
            limit: MAX_FILE_BYTES,
        },
        ReadResult::Error(msg) => FileContents::Unreadable(msg),
    }
}

/// Load every space. Never fails: what cannot be read is recorded.
pub fn load(sys: &dyn System, spaces: &[SpaceSpec]) -> LoadOutcome {
    load_walking(sys, spaces, &|_| (WALKED_DIRS.to_vec(), WalkSize::Large))
}

/// Load, of the on-disk space of kind `kind`, the files under `dir` (relative to `.ai/`) beside
/// the base load (`BASE_DIRS`, config files); of every other on-disk space the base load only;
/// embedded spaces in full. What `sign` of one space's items reads: their files, the
/// extractors (parsers, signature formats, validation schemas) and the trust store.
pub fn load_space_dir(
    sys: &dyn System,
    spaces: &[SpaceSpec],
    kind: SpaceKind,
    dir: &str,
) -> LoadOutcome {
    let dirs_of = |spec: &SpaceSpec| {
        if spec.space.kind() == kind {
            (dirs_with(dir, &BASE_DIRS), WalkSize::Large)
        } else {
            (BASE_DIRS.to_vec(), WalkSize::Small)
        }
    };
    load_walking(sys, spaces, &dirs_of)
}

/// `dir` and those of `base` not at or under it (a folder walked twice would load its files
/// twice).
fn dirs_with<'a>(dir: &'a str, base: &[&'a str]) -> Vec<&'a str> {
    let under = |d: &str| d == dir || d.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
    std::iter::once(dir)
        .chain(base.iter().copied().filter(|d| !under(d)))
        .collect()
}

/// Canonical `.ai` roots of every on-disk space, to tell which space a symlink points into.
fn real_roots(sys: &dyn System, spaces: &[SpaceSpec]) -> Vec<(PathBuf, SpaceKind)> {
    let mut real_roots = Vec::new();
    for spec in spaces {
        if let SpaceSource::Dir(base) = &spec.source
            && let Ok(real) = sys.canonicalize(&base.join(".ai"))
        {
            real_roots.push((real, spec.space.kind()));
        }
    }
    real_roots
}

/// How many files a walk expects: a whole space (walked in parallel) or a few base directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WalkSize {
    Large,
    Small,
}

/// The folders (relative to `.ai/`) of an on-disk space a load walks, and how many files it
/// expects there.
type DirsOf<'d> = dyn Fn(&SpaceSpec) -> (Vec<&'d str>, WalkSize) + 'd;

/// Load the embedded spaces in full and, of every on-disk space, the config files and the files
/// under its `dirs_of` folders.
fn load_walking(sys: &dyn System, spaces: &[SpaceSpec], dirs_of: &DirsOf<'_>) -> LoadOutcome {
    let mut out = LoadOutcome::default();
    let real_roots = real_roots(sys, spaces);
    let mut roots = Vec::with_capacity(spaces.len());
    for spec in spaces {
        let root = match &spec.source {
            SpaceSource::Embedded => load_embedded(&spec.space),
            SpaceSource::Dir(base) => {
                let (dirs, size) = dirs_of(spec);
                load_dir(sys, &spec.space, base, &dirs, size, &real_roots, &mut out)
            }
        };
        roots.push(root);
    }
    out.change = Change {
        roots: Some(roots),
        ..Change::default()
    };
    out
}

/// Directories of a space's `.ai/` the loader walks: items of every kind (§1, §10), the
/// trust-store layouts (§10.4), the person's approvals of project keys and lockfiles (§10.7).
pub const WALKED_DIRS: [&str; 7] = [
    "tools",
    "directives",
    "knowledge",
    "config/keys/trusted",
    "config/keys/approved",
    "trusted_keys",
    "lockfiles",
];

/// Whether a path relative to `.ai/` is one the loader reads (walked dirs and config files).
fn is_loaded_rel(rel: &str) -> bool {
    WALKED_DIRS
        .iter()
        .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
        || crate::config::CONFIG_RELS.contains(&rel)
}

fn load_embedded(space: &Space) -> RootSpec {
    let bundle = match space {
        Space::System { bundle, .. } => bundle.to_string(),
        other => other.label(),
    };
    let root = embedded_root(&bundle).join(".ai");
    let files = embedded_system_files()
        .iter()
        .filter_map(|(rel, bytes)| {
            let rel = rel.strip_prefix(".ai/")?;
            is_loaded_rel(rel).then(|| FileSpec {
                space: space.clone(),
                path: root.join(rel),
                rel: rel.to_owned(),
                contents: contents_of(ReadResult::Bytes(bytes.to_vec())),
                link_origin: None,
            })
        })
        .collect();
    RootSpec {
        space: space.clone(),
        root,
        files,
    }
}

fn load_dir(
    sys: &dyn System,
    space: &Space,
    base: &Path,
    dirs: &[&str],
    size: WalkSize,
    real_roots: &[(PathBuf, SpaceKind)],
    out: &mut LoadOutcome,
) -> RootSpec {
    let ai = base.join(".ai");
    let mut root = RootSpec {
        space: space.clone(),
        root: ai.clone(),
        files: Vec::new(),
    };
    if !sys.is_dir(&ai) {
        out.notices.push(format!(
            "the {} space has no `.ai/` directory at {}",
            space.label(),
            ai.display()
        ));
        return root;
    }
    let classify = Classifier {
        sys,
        space,
        real_roots,
    };
    let SpaceWalk { entries, links } = space_entries(sys, &ai, dirs, size);
    out.links.extend(
        entries
            .iter()
            .filter(|e| e.is_symlink)
            .map(|e| e.path.clone()),
    );
    if let Some(l) = &links {
        out.links.extend(l.linked.iter().cloned());
    }
    // A walked folder that is itself a link (the walk is not told).
    out.links.extend(
        dirs.iter()
            .map(|d| ai.join(d))
            .filter(|p| sys.is_symlink(p)),
    );
    let real_dirs = RealDirs {
        sys,
        ai: &ai,
        links,
        cache: Mutex::default(),
    };
    let real_parent = |dir: &Path| real_dirs.of(dir);
    // The last folder's real path, per chunk: the entries come in path order, a folder's files
    // one after another, so most files skip the shared cache (a lock and a hash of the path).
    type LastDir = Option<(PathBuf, Option<PathBuf>)>;
    let read_entry = |entry: &WalkEntry, buf: &mut Vec<u8>, last: &mut LastDir| -> ReadFile {
        if let Some(err) = &entry.error {
            // A walk error at a file path with a tool extension becomes that file's problem.
            let rel = rel_of(&ai, &entry.path).filter(|r| r.contains('.') && !r.ends_with('/'));
            return match rel {
                Some(rel) if !sys.is_dir(&entry.path) => Ok((
                    FileSpec {
                        space: space.clone(),
                        path: entry.path.clone(),
                        rel,
                        contents: FileContents::Unreadable(err.clone()),
                        link_origin: None,
                    },
                    None,
                )),
                _ => Err((
                    entry.path.clone(),
                    format!("{}: {err}", entry.path.display()),
                )),
            };
        }
        let Some(rel) = rel_of(&ai, &entry.path) else {
            return Err((
                entry.path.clone(),
                format!(
                    "{}: not valid UTF-8 in its path; skipped",
                    entry.path.display()
                ),
            ));
        };
        if let Some(what) = &entry.not_regular {
            // Never opened (a FIFO would block the walk); `unreadable-file` reports it and
            // resolution skips it, as the single-item loader never loads it (§1.7).
            return Ok((
                FileSpec {
                    space: space.clone(),
                    path: entry.path.clone(),
                    rel,
                    contents: FileContents::NotRegular(what.clone()),
                    link_origin: None,
                },
                None,
            ));
        }
        let real = if entry.is_symlink {
            sys.canonicalize(&entry.path).ok()
        } else {
            entry.path.parent().and_then(|dir| {
                let real_dir = match last {
                    Some((at, real)) if *at == dir => real.as_ref(),
                    _ => last
                        .insert((dir.to_path_buf(), real_parent(dir)))
                        .1
                        .as_ref(),
                };
                Some(real_dir?.join(entry.path.file_name()?))
            })
        };
        // A plain entry of the walk is a regular file (special files were set aside above).
        let walked = !entry.is_symlink;
        Ok(classify.read_with(&entry.path, rel, real.as_deref(), walked, Some(buf)))
    };
    // Small walks (the base load of a single item) are not worth the thread pool.
    // A few hundred files at a time, on the thread that reads them: the small ones are read into
    // one buffer their texts then share (no allocation per file, no copy); the rest are packed
    // after the reads (see `Text::pack`).
    let read_packed = |chunk: &[WalkEntry]| {
        // Room for a chunk of typical files (a few KB each) without growing: untouched room costs
        // address space, not memory.
        let mut buf: Vec<u8> = Vec::with_capacity(4 * Text::PACK_BYTES);
        let mut last = None;
        let read: Vec<_> = chunk
            .iter()
            .map(|e| read_entry(e, &mut buf, &mut last))
            .collect();
        finish_buffer(buf, read)
    };
    let loaded: Vec<LoadedFile> = if entries.len() < PARALLEL_MIN_FILES {
        read_packed(&entries)
    } else {
        entries
            .par_chunks(PACK_FILES)
            .flat_map_iter(read_packed)
            .collect()
    };
    // Notices in the order of their paths; files by `rel`, the order the database keeps them in
    // (`Change::apply` then finds them sorted).
    let mut found: Vec<(Vec<u8>, String)> = Vec::new();
    root.files.reserve(loaded.len());
    for r in loaded {
        match r {
            Ok(f) => root.files.push(f),
            Err((path, msg)) => found.push((path_order_key(&path), msg)),
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    out.notices.extend(found.into_iter().map(|(_, msg)| msg));
    root.files.par_sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    root
}

/// A file's spec as the load made it, or a notice with the path it is about.
type LoadedFile = Result<FileSpec, (PathBuf, String)>;

/// [`LoadedFile`] before its buffer is done: with the range of its text in the buffer, if there.
type ReadFile = Result<(FileSpec, Option<Range<usize>>), (PathBuf, String)>;

/// Takes the bytes at `range` of a shared buffer out of its text: they become spaces, where they
/// are. A buffer with files' ranges in it only ever grows (blanking keeps every other range where
/// it was, and its text; no range is ever cut off the end).
fn blank(buf: &mut [u8], range: Range<usize>) {
    if let Some(bytes) = buf.get_mut(range) {
        bytes.fill(b' ');
    }
}

/// The specs of the files read into one buffer (`read`: each file's spec, with its range in
/// `buf` when its text is there), their texts made once the buffer is done.
fn finish_buffer(buf: Vec<u8>, mut read: Vec<ReadFile>) -> Vec<LoadedFile> {
    // The texts read on their own (the shared ones are still placeholders here).
    Text::pack(read.iter_mut().filter_map(|r| match r {
        Ok((
            FileSpec {
                contents: FileContents::Text(t),
                ..
            },
            None,
        )) => Some(t),
        _ => None,
    }));
    let shared = Arc::new(buffer_text(buf));
    read.into_iter()
        .map(|r| {
            r.map(|(mut spec, range)| {
                if let Some(range) = range {
                    spec.contents = match Text::in_shared(&shared, range) {
                        Some(t) => FileContents::Text(t),
                        // Unreachable: each range holds text checked as UTF-8 on its own.
                        None => FileContents::Unreadable("misread into a shared buffer".to_owned()),
                    };
                }
                spec
            })
        })
        .collect()
}

/// A buffer of texts as one string. Each text was checked as UTF-8 before its range was kept
/// (bytes that were not are blanked, [`blank`]), so the whole is UTF-8; it is checked again here
/// with SIMD (`String::from_utf8` checked a chunk's 1 MB a word at a time, 1% of a lint), and
/// anything that is not UTF-8 all the same is replaced, byte for byte (every kept range stays
/// where it was), rather than trusted.
fn buffer_text(mut buf: Vec<u8>) -> String {
    if simdutf8::basic::from_utf8(&buf).is_ok() {
        // SAFETY: `buf` was just checked to be UTF-8 as a whole.
        return unsafe { String::from_utf8_unchecked(buf) };
    }
    let mut at = 0;
    while let Err(e) = std::str::from_utf8(&buf[at..]) {
        let bad = at + e.valid_up_to();
        let end = e.error_len().map_or(buf.len(), |n| bad + n);
        buf[bad..end].fill(b'?');
        at = end;
    }
    // Each bad sequence was replaced by ASCII: UTF-8 now (checked once more).
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Canonical paths of the directories of one space's walk, each resolved once from its parent's
/// (`System::canonicalize_child`): resolving each from the root repeated the `readlink` of every
/// component, two thousand system calls per hundred files.
struct RealDirs<'a> {
    sys: &'a dyn System,
    ai: &'a Path,
    /// What the walk told of symlinks, when it did: a directory strictly below one of its roots
    /// that it did not enter through a symlink is its parent's real path and its name, with no
    /// `lstat` (23k of them at 100k tools).
    links: Option<WalkLinks>,
    cache: Mutex<FxHashMap<PathBuf, Option<PathBuf>>>,
}

impl RealDirs<'_> {
    fn of(&self, dir: &Path) -> Option<PathBuf> {
        if let Some(hit) = self.cache.lock().ok().and_then(|c| c.get(dir).cloned()) {
            return hit;
        }
        let real = match dir.parent() {
            Some(parent) if dir != self.ai && dir.starts_with(self.ai) => {
                self.of(parent)
                    .and_then(|p| match (&self.links, dir.file_name()) {
                        (Some(links), Some(name)) if links.plain(dir) => Some(p.join(name)),
                        _ => self.sys.canonicalize_child(&p, dir).ok(),
                    })
            }
            _ => self.sys.canonicalize(dir).ok(),
        };
        if let Ok(mut c) = self.cache.lock() {
            c.insert(dir.to_path_buf(), real.clone());
        }
        real
    }
}

/// The walk of one space's `.ai/` (`dirs` and the config files): what the full load reads and
/// what the lint cache's census stamps, in path order.
struct SpaceWalk {
    entries: Vec<WalkEntry>,
    links: Option<WalkLinks>,
}

fn space_entries(sys: &dyn System, ai: &Path, dirs: &[&str], size: WalkSize) -> SpaceWalk {
    let mut entries: Vec<WalkEntry> = Vec::new();
    let mut links = Some(WalkLinks::default());
    for dir in dirs {
        let dir = ai.join(dir);
        if !sys.is_dir(&dir) {
            continue;
        }
        let (walked, linked) = match size {
            WalkSize::Large => sys.walk_noting_links(&dir),
            WalkSize::Small => (sys.walk_small(&dir), None),
        };
        entries.extend(walked);
        links = links.zip(linked).map(|(mut l, linked)| {
            l.linked.extend(linked);
            l.roots.push(dir);
            l
        });
    }
    for name in crate::config::CONFIG_RELS {
        let p = ai.join(name);
        if sys.is_file(&p) {
            entries.push(WalkEntry {
                path: p,
                is_symlink: false,
                error: None,
                not_regular: None,
            });
        }
    }
    // `sign`'s temporary files, left by a run that was killed, are never items.
    entries.retain(|e| !crate::system::is_sign_leftover(&e.path));
    entries.sort_by_cached_key(|e| path_order_key(&e.path));
    SpaceWalk { entries, links }
}

/// The roots of a space's walks and the directories below them the walks entered through a
/// symlink.
#[derive(Default)]
struct WalkLinks {
    roots: Vec<PathBuf>,
    linked: FxHashSet<PathBuf>,
}

impl WalkLinks {
    /// `dir` lies strictly below a walk's root and was not entered through a symlink.
    fn plain(&self, dir: &Path) -> bool {
        self.roots.iter().any(|r| dir != r && dir.starts_with(r)) && !self.linked.contains(dir)
    }
}

/// How a file of the census was met: enough to tell, without reading it, that the full load
/// would read the same thing as last time.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CensusKind {
    /// A regular file listed by the walk, with its stamp (`None`: it could not be stat'ed).
    Plain(Option<FileStamp>),
    /// A symlink, with its canonical target (which decides its space) and the target's stamp.
    Link(Box<(Option<String>, Option<FileStamp>)>),
    /// A FIFO, device, dangling symlink... (recorded, never read).
    NotRegular(String),
    /// A walk error at a file path.
    Error(String),
}

/// One file the full load would read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CensusEntry {
    /// Index of the space in the specs given to `census`.
    pub space: u32,
    /// Path relative to the space's `.ai/` (100k of these are alive at once: no full path).
    pub rel: String,
    pub kind: CensusKind,
}

/// The files of every on-disk space the full load would read, without reading them: the lint
/// cache compares it with the census of the run it cached. Embedded spaces are not listed (they
/// are part of the binary).
#[derive(Debug, Default)]
pub struct Census {
    pub entries: Vec<CensusEntry>,
    /// What the load would report besides files (a missing `.ai/`, walk errors).
    pub notices: Vec<String>,
    /// The directories listed whose entries were all regular files and directories
    /// (`System::walk_stamped`): what the next census may take on trust.
    pub dirs: Vec<CensusDir>,
    /// The tokens of the directories taken on trust (`KnownDir::token`), not listed.
    pub vouched: Vec<u32>,
    /// The token of every settled file (`KnownDir::settled`): a file
    /// whose stamp is the one the earlier census vouched for, given no entry.
    pub settled: Vec<u32>,
    /// The wrapping sum of `Settled::mix` over the settled files (`WalkStamped::settled_digest`).
    pub settled_digest: u128,
}

/// A directory of a census, as `DirListing` with its path relative to the space's `.ai/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CensusDir {
    pub space: u32,
    pub rel: String,
    pub stamp: FileStamp,
    /// Each name followed by a `\0`.
    pub names: String,
    /// Empty in a census; in the lint cache, one record per name of `names` (or none): the
    /// files whose stamps it trusts (`KnownDir::settled`).
    pub settled: Vec<Settled>,
}

/// What an earlier census vouches for in directory `rel` of space `space` when it had `stamp`
/// (`System::walk_stamped`'s `known`).
pub type KnownDirs<'a> = dyn Fn(u32, KnownAt<'_>, &FileStamp) -> Option<KnownDir<'a>> + Sync + 'a;

/// Where a census met a directory it asks `KnownDirs` about (in space `space`).
#[derive(Clone, Copy, Debug)]
pub enum KnownAt<'p> {
    /// By its path relative to the space's `.ai/`.
    Rel(&'p str),
    /// By its name in a directory vouched for with token `parent`, `nth` of its subdirectories
    /// in the order of its names (`MetDir::Child`).
    Child {
        parent: u32,
        name: &'p str,
        nth: u32,
    },
}

/// Walk every on-disk space as `load` does and stamp each file instead of reading it. The walk
/// and the classification of entries are `load_dir`'s; a regular file's real path is not
/// resolved (a file reached through a retargeted directory symlink is another inode, so its
/// stamp differs), a symlink's is.
/// `known`: directories an earlier census listed and vouches for (see `KnownDirs`).
pub fn census(sys: &dyn System, spaces: &[SpaceSpec], known: &KnownDirs<'_>) -> Census {
    let per_space: Vec<Census> = spaces
        .par_iter()
        .enumerate()
        .map(|(i, spec)| space_census(sys, u32::try_from(i).unwrap_or(u32::MAX), spec, known))
        .collect();
    let mut out = Census::default();
    for c in per_space {
        out.entries.extend(c.entries);
        out.notices.extend(c.notices);
        out.dirs.extend(c.dirs);
        out.vouched.extend(c.vouched);
        out.settled.extend(c.settled);
        out.settled_digest = out.settled_digest.wrapping_add(c.settled_digest);
    }
    out
}

/// The census of one space (`census`).
fn space_census(sys: &dyn System, i: u32, spec: &SpaceSpec, known: &KnownDirs<'_>) -> Census {
    let mut out = Census::default();
    let SpaceSource::Dir(base) = &spec.source else {
        return out;
    };
    let ai = base.join(".ai");
    if !sys.is_dir(&ai) {
        out.notices.push(format!(
            "the {} space has no `.ai/` directory at {}",
            spec.space.label(),
            ai.display()
        ));
        return out;
    }
    // `space_entries`, stamped as it walks.
    let mut entries: Vec<(WalkEntry, Option<FileStamp>)> = Vec::new();
    let vouched = |met: MetDir<'_>, stamp: &FileStamp| match met {
        MetDir::Path(path) => rel_of(&ai, path).and_then(|rel| known(i, KnownAt::Rel(&rel), stamp)),
        MetDir::Child { parent, name, nth } => {
            known(i, KnownAt::Child { parent, name, nth }, stamp)
        }
    };
    for dir in WALKED_DIRS {
        let dir = ai.join(dir);
        if sys.is_dir(&dir) {
            let walked = sys.walk_stamped(&dir, &vouched);
            entries.extend(walked.entries);
            out.settled.extend(walked.settled);
            out.settled_digest = out.settled_digest.wrapping_add(walked.settled_digest);
            out.vouched.extend(walked.vouched);
            out.dirs.extend(walked.listings.into_iter().filter_map(|d| {
                Some(CensusDir {
                    space: i,
                    rel: rel_of(&ai, &d.path)?,
                    stamp: d.stamp,
                    names: d.names,
                    settled: Vec::new(),
                })
            }));
        }
    }
    for name in crate::config::CONFIG_RELS {
        let p = ai.join(name);
        if sys.is_file(&p) {
            let stamp = sys.stamp(&p);
            let entry = WalkEntry {
                path: p,
                is_symlink: false,
                error: None,
                not_regular: None,
            };
            entries.push((entry, stamp));
        }
    }
    entries.sort_by_cached_key(|(e, _)| path_order_key(&e.path));
    for (e, stamp) in entries {
        let rel = rel_of(&ai, &e.path);
        if let Some(err) = &e.error {
            match rel.filter(|r| r.contains('.') && !r.ends_with('/')) {
                Some(rel) if !sys.is_dir(&e.path) => out.entries.push(CensusEntry {
                    space: i,
                    kind: CensusKind::Error(err.clone()),
                    rel,
                }),
                _ => out.notices.push(format!("{}: {err}", e.path.display())),
            }
            continue;
        }
        let Some(rel) = rel else {
            out.notices.push(format!(
                "{}: not valid UTF-8 in its path; skipped",
                e.path.display()
            ));
            continue;
        };
        let kind = if let Some(what) = &e.not_regular {
            CensusKind::NotRegular(what.clone())
        } else if e.is_symlink {
            let real = sys
                .canonicalize(&e.path)
                .ok()
                .map(|p| p.display().to_string());
            CensusKind::Link(Box::new((real, stamp)))
        } else {
            CensusKind::Plain(stamp)
        };
        out.entries.push(CensusEntry {
            space: i,
            rel,
            kind,
        });
    }
    out
}

/// A key whose byte order is the order of `Path::cmp` (component by component) for the walk's
/// paths: the path's bytes with each separator turned into a zero byte, which ranks below every
/// byte a path can hold. Comparing keys is a `memcmp`; comparing paths splits both into
/// components at each of the sort's comparisons (the largest serial step of loading a 100k-file
/// space). Walked paths are normal (no `.`, no doubled separators), where the two orders agree.
fn path_order_key(path: &Path) -> Vec<u8> {
    let sep = |c: u8| c.is_ascii() && std::path::is_separator(char::from(c));
    path.as_os_str()
        .as_encoded_bytes()
        .iter()
        .map(|&c| if sep(c) { 0 } else { c })
        .collect()
}

/// Below this many files a space is read on the calling thread.
const PARALLEL_MIN_FILES: usize = 64;

/// `path.starts_with(root)` for canonical paths (no `.`, `..`, doubled or trailing separators),
/// comparing bytes: `Path::starts_with` splits both into components, which was 2.5% of a cold
/// lint (every file against every space's root).
fn within(path: &Path, root: &Path) -> bool {
    let (p, r) = (
        path.as_os_str().as_encoded_bytes(),
        root.as_os_str().as_encoded_bytes(),
    );
    let sep = |c: u8| c.is_ascii() && std::path::is_separator(char::from(c));
    p.starts_with(r) && (p.len() == r.len() || r.last().is_some_and(|&c| sep(c)) || sep(p[r.len()]))
}

/// Reads one file of a space and classifies it by the space its real path lies in (shared by the
/// full walk and the single-item probes, so both see a file the same way).
struct Classifier<'a> {
    sys: &'a dyn System,
    space: &'a Space,
    real_roots: &'a [(PathBuf, SpaceKind)],
}

impl Classifier<'_> {
    /// `real` is the file's canonical path (`None` when it cannot be resolved). A file whose real
    /// path lies in no space is not read (`SymlinkEscape`); one in another space is read and
    /// carries that space as `link_origin`. `walked`: the walk listed `path` as a regular file.
    fn read(&self, path: &Path, rel: String, real: Option<&Path>, walked: bool) -> FileSpec {
        self.read_with(path, rel, real, walked, None).0
    }

    /// `read`; with `buf`, a walked file under [`Text::COMPRESS_BYTES`] is read into `buf` and
    /// its range there returned instead of its text (its contents are left empty: the caller
    /// makes the texts once the buffer is full, see `load_dir`).
    fn read_with(
        &self,
        path: &Path,
        rel: String,
        real: Option<&Path>,
        walked: bool,
        buf: Option<&mut Vec<u8>>,
    ) -> (FileSpec, Option<std::ops::Range<usize>>) {
        let mut range = None;
        let owner = real.and_then(|r| {
            self.real_roots
                .iter()
                .filter(|(root, _)| within(r, root))
                .max_by_key(|(root, _)| root.as_os_str().len())
        });
        let (contents, link_origin) = match (owner, real) {
            (None, Some(real)) => (
                FileContents::SymlinkEscape {
                    target: real.display().to_string(),
                },
                None,
            ),
            (None, None) => (
                FileContents::Unreadable("the file's real path cannot be resolved".to_owned()),
                None,
            ),
            (Some((_, kind)), _) => {
                let origin = (*kind != self.space.kind()).then_some(*kind);
                let contents = match (walked, buf) {
                    (true, Some(buf)) => match self.sys.read_walked_into(
                        path,
                        MAX_FILE_BYTES,
                        Text::COMPRESS_BYTES as u64,
                        buf,
                    ) {
                        ReadInto::Appended(r) => {
                            match buf.get(r.clone()).map(simdutf8::compat::from_utf8) {
                                Some(Ok(_)) => {
                                    range = Some(r);
                                    // Replaced by the text once the buffer is done.
                                    FileContents::Unreadable(String::new())
                                }
                                Some(Err(e)) => {
                                    // Out of the buffer's text, in place.
                                    blank(buf, r);
                                    FileContents::NotUtf8 {
                                        valid_up_to: e.valid_up_to(),
                                    }
                                }
                                None => FileContents::Unreadable(
                                    "misread into a shared buffer".to_owned(),
                                ),
                            }
                        }
                        ReadInto::Read(read) => contents_of(read),
                    },
                    (true, None) => contents_of(self.sys.read_walked(path, MAX_FILE_BYTES)),
                    (false, _) => contents_of(self.sys.read(path, MAX_FILE_BYTES)),
                };
                (contents, origin)
            }
        };
        let spec = FileSpec {
            space: self.space.clone(),
            path: path.to_path_buf(),
            rel,
            contents,
            link_origin,
        };
        (spec, range)
    }
}

/// Directories of a space's `.ai/` the base load of a single item walks (relative to `.ai/`): the
/// extractors (they define the tool extensions and parsers, §1.5, §1.6) and the trust-store
/// layouts (§10.4). Config files (`config::CONFIG_RELS`) are read too.
pub const BASE_DIRS: [&str; 4] = [
    "tools/rye/core/extractors",
    "config/keys/trusted",
    "config/keys/approved",
    "trusted_keys",
];

/// The loader of single-item commands (`chain ITEM`, `verify ITEM…`, `exec ITEM`): a base load
/// (`ItemLoader::new`), then only the candidate files of the items asked for (§1.7) and the space
/// files asked for (lockfiles, `config/<path>`), fed into the same database inputs a full load
/// feeds. See `analysis::lazy::chain_needs` for why the chain is then the one of a full load.
pub struct ItemLoader<'s> {
    sys: &'s dyn System,
    #[cfg(any(test, feature = "testing"))]
    specs: Vec<SpaceSpec>,
    real_roots: Vec<(PathBuf, SpaceKind)>,
    /// `.ai` dirs of the on-disk spaces that have one, in search order, with their space.
    dirs: Vec<(Space, PathBuf)>,
    probed_items: BTreeSet<String>,
    probed_space_files: BTreeSet<String>,
    /// Every path already in the database (base load and probes), never read twice.
    loaded: FxHashSet<PathBuf>,
}

impl<'s> ItemLoader<'s> {
    /// The base load: embedded bundles in full; of every on-disk space the extractors, the config
    /// files and the trust-store documents (`BASE_DIRS`).
    pub fn new(sys: &'s dyn System, specs: &[SpaceSpec]) -> (ItemLoader<'s>, LoadOutcome) {
        let outcome = load_walking(sys, specs, &|_| (BASE_DIRS.to_vec(), WalkSize::Small));
        let mut loaded = FxHashSet::default();
        for root in outcome.change.roots.iter().flatten() {
            loaded.extend(root.files.iter().map(|f| f.path.clone()));
        }
        let dirs = specs
            .iter()
            .filter_map(|s| match &s.source {
                SpaceSource::Dir(base) => Some((s.space.clone(), base.join(".ai"))),
                SpaceSource::Embedded => None,
            })
            .filter(|(_, ai)| sys.is_dir(ai))
            .collect();
        let loader = ItemLoader {
            sys,
            #[cfg(any(test, feature = "testing"))]
            specs: specs.to_vec(),
            real_roots: real_roots(sys, specs),
            dirs,
            probed_items: BTreeSet::new(),
            probed_space_files: BTreeSet::new(),
            loaded,
        };
        (loader, outcome)
    }

    /// The spaces this loader serves.
    #[cfg(any(test, feature = "testing"))]
    pub fn specs(&self) -> &[SpaceSpec] {
        &self.specs
    }

    /// Tool ids whose candidate files are in the database (`Facts.items`).
    pub fn probed_items(&self) -> &BTreeSet<String> {
        &self.probed_items
    }

    /// Paths relative to `.ai/` probed in every space (`Facts.space_files`).
    #[cfg(any(test, feature = "testing"))]
    pub fn probed_space_files(&self) -> &BTreeSet<String> {
        &self.probed_space_files
    }

    /// Number of files in the database so far (base load and probes).
    #[cfg(any(test, feature = "testing"))]
    pub fn loaded_files(&self) -> usize {
        self.loaded.len()
    }

    /// Load the candidate files of `ids` (§1.7: for every space in search order, for every tool
    /// extension of the extractors, `<space>/.ai/tools/<id><ext>`). Hostile ids and extensions
    /// are never turned into paths; every id is marked probed, found or not.
    pub fn probe_items(&mut self, a: Analysis<'_>, ids: &[String]) -> Change {
        let cfg = extractor_config(a.db());
        // An extension that could leave `tools/` (or that the index can never match) is not probed.
        let exts: Vec<&str> = cfg
            .extensions
            .iter()
            .map(AsRef::as_ref)
            .filter(|e: &&str| !e.contains(['/', '\\', '\0']))
            .collect();
        let mut rels = Vec::new();
        for id in ids {
            if !self.probed_items.insert(id.clone()) || item_id_problem(id).is_some() {
                continue;
            }
            rels.extend(exts.iter().map(|ext| format!("tools/{id}{ext}")));
        }
        self.probe_rels(&rels)
    }

    /// Load `.ai/<rel>` of every space (lockfiles, `config/<path>` files). Hostile rels are
    /// refused (marked probed, nothing read).
    pub fn probe_space_files(&mut self, rels: &[String]) -> Change {
        let mut todo = Vec::new();
        for rel in rels {
            if self.probed_space_files.insert(rel.clone()) && item_id_problem(rel).is_none() {
                todo.push(rel.clone());
            }
        }
        self.probe_rels(&todo)
    }

    /// Read the regular files (symlinks followed and classified as the full load does) at
    /// `<ai>/<rel>` of every on-disk space; FIFOs, devices and directories are not read.
    fn probe_rels(&mut self, rels: &[String]) -> Change {
        let mut change = Change::default();
        for (space, ai) in &self.dirs {
            let classify = Classifier {
                sys: self.sys,
                space,
                real_roots: &self.real_roots,
            };
            for rel in rels {
                let path = ai.join(rel);
                if self.loaded.contains(&path) || !self.sys.is_file(&path) {
                    continue;
                }
                // The canonical path of a regular file is its canonical parent plus its name; of
                // a symlink, its target's: one call classifies both, as `load_dir` does.
                let real = self.sys.canonicalize(&path).ok();
                let spec = classify.read(&path, rel.clone(), real.as_deref(), false);
                self.loaded.insert(path);
                change.files.push(FileChange::Write(spec));
            }
        }
        change
    }
}

/// Load what the chains of `item_ids` need and nothing else: the base load, then rounds of
/// `chain_needs` → `probe_items` until no chain asks for more. The host has `settings`.
pub fn load_items<'s>(
    sys: &'s dyn System,
    specs: &[SpaceSpec],
    item_ids: &[String],
    settings: Settings,
) -> (Host, ItemLoader<'s>, Vec<String>) {
    let (mut loader, outcome) = ItemLoader::new(sys, specs);
    let mut host = Host::new();
    let mut change = outcome.change;
    change.settings = Some(settings);
    host.apply(change);
    // Ends: every round probes at least one new id, and a round asks only for ids the finite
    // set of loaded files names.
    loop {
        let loaded = Loaded::Some(loader.probed_items().clone());
        let mut needs: Vec<String> = Vec::new();
        for id in item_ids {
            for need in host.analysis().item_chain_needs(id, &loaded) {
                if !needs.contains(&need) {
                    needs.push(need);
                }
            }
        }
        if needs.is_empty() {
            break;
        }
        let change = loader.probe_items(host.analysis(), &needs);
        host.apply(change);
    }
    (host, loader, outcome.notices)
}

/// `load_items` for one item.
#[cfg(any(test, feature = "testing"))]
pub fn load_item<'s>(
    sys: &'s dyn System,
    specs: &[SpaceSpec],
    item_id: &str,
    settings: Settings,
) -> (Host, ItemLoader<'s>, Vec<String>) {
    load_items(sys, specs, &[item_id.to_owned()], settings)
}

/// Re-reads files of the spaces a long-lived process set up (`lsp`, `lint --watch`) after they
/// changed on disk, and turns editor buffers into the same inputs: a path is placed in the space
/// whose `.ai/` holds it (the innermost, when spaces nest), and only paths the full load would
/// read are accepted.
pub struct Reloader<'s> {
    sys: &'s dyn System,
    /// Each on-disk space with its `.ai` dir as given and as canonicalized (when it exists).
    dirs: Vec<(Space, PathBuf, Option<PathBuf>)>,
    real_roots: Vec<(PathBuf, SpaceKind)>,
    links: Links,
}

/// The symlinks of the spaces (to files and to folders) with the real path each points at: a
/// watcher reports a change at the target's own path, and each link to it is read again.
#[derive(Default)]
struct Links(Vec<(PathBuf, PathBuf)>);

impl Links {
    /// Note what `path` is now: a symlink (to where), or not one.
    fn update(&mut self, sys: &dyn System, path: &Path) {
        self.0.retain(|(link, _)| link != path);
        if sys.is_symlink(path)
            && let Ok(real) = sys.canonicalize(path)
        {
            self.0.push((path.to_path_buf(), real));
        }
    }

    /// The links whose target is one of `changed`, lies below one, or holds one (a linked
    /// folder), not already among `changed`.
    fn reaching(&self, sys: &dyn System, changed: &[PathBuf]) -> Vec<PathBuf> {
        if self.0.is_empty() {
            return Vec::new();
        }
        let real: Vec<PathBuf> = changed
            .iter()
            .filter_map(|p| {
                // A removed file has no real path of its own: its folder's, and its name.
                let parent = sys.canonicalize(p.parent()?).ok()?;
                Some(parent.join(p.file_name()?))
            })
            .collect();
        self.0
            .iter()
            .filter(|(link, target)| {
                !changed.contains(link)
                    && real
                        .iter()
                        .any(|c| target == c || target.starts_with(c) || c.starts_with(target))
            })
            .map(|(link, _)| link.clone())
            .collect()
    }
}

impl<'s> Reloader<'s> {
    pub fn new(sys: &'s dyn System, specs: &[SpaceSpec]) -> Reloader<'s> {
        let dirs = specs
            .iter()
            .filter_map(|s| match &s.source {
                SpaceSource::Dir(base) => {
                    let ai = base.join(".ai");
                    let real = sys.canonicalize(&ai).ok();
                    Some((s.space.clone(), ai, real))
                }
                SpaceSource::Embedded => None,
            })
            .collect();
        Reloader {
            sys,
            dirs,
            real_roots: real_roots(sys, specs),
            links: Links::default(),
        }
    }

    /// Keep the symlinks a load met (`LoadOutcome::links`), each with its target, to read them
    /// again when their target changes; the links made later are noted as `reload` meets them.
    pub fn note_links(&mut self, links: &[PathBuf]) {
        for link in links {
            self.links.update(self.sys, link);
        }
    }

    /// The `.ai` directories watched, as given.
    pub fn ai_dirs(&self) -> impl Iterator<Item = &Path> {
        self.dirs.iter().map(|(_, ai, _)| ai.as_path())
    }

    /// The space, the path as the database knows it, and the path relative to `.ai/` of `path`
    /// (given as loaded or canonical), when it lies in a space and is a file the loader reads.
    pub fn locate(&self, path: &Path) -> Option<(Space, PathBuf, String)> {
        let mut best: Option<(usize, Space, PathBuf, String)> = None;
        for (space, ai, real) in &self.dirs {
            for base in std::iter::once(ai).chain(real) {
                let Some(rel) = rel_of(base, path) else {
                    continue;
                };
                let depth = base.components().count();
                if best.as_ref().is_none_or(|(d, ..)| depth > *d) {
                    best = Some((depth, space.clone(), ai.join(&rel), rel));
                }
            }
        }
        best.and_then(|(_, space, path, rel)| {
            (is_loaded_rel(&rel) && !rel.is_empty()).then_some((space, path, rel))
        })
    }

    /// The inputs for an editor buffer at `path` (text the editor holds, not the disk's): `None`
    /// when the path is not a file of a space. A buffer over the loader's size limit is recorded
    /// as too large, as the disk file would be.
    pub fn buffer(&self, path: &Path, text: &str) -> Option<FileSpec> {
        let (space, path, rel) = self.locate(path)?;
        let size = text.len() as u64;
        let contents = if size > MAX_FILE_BYTES {
            FileContents::TooLarge {
                size,
                limit: MAX_FILE_BYTES,
            }
        } else {
            FileContents::Text(text.into())
        };
        Some(FileSpec {
            space,
            path,
            rel,
            contents,
            link_origin: None,
        })
    }

    /// The changes that bring the database in line with the disk at `paths` (files or
    /// directories, created, changed or deleted) and at every symlink whose target is one of
    /// them (a watcher reports only the target): a file is read and classified as the full load
    /// does, a directory is walked, and what no longer exists is removed. `known_under(dir)`
    /// lists the database's paths below a directory (a deleted folder removes all of them).
    /// Every path given and every file read is noted as a symlink or not: a folder made with a
    /// link inside may be reported alone, before the watcher sees into it.
    pub fn reload(
        &mut self,
        paths: &[PathBuf],
        known_under: &dyn Fn(&Path) -> Vec<PathBuf>,
    ) -> Change {
        for p in paths {
            self.links.update(self.sys, p);
        }
        let linked = self.links.reaching(self.sys, paths);
        let change = if linked.is_empty() {
            self.reread(paths, known_under)
        } else {
            let mut all = paths.to_vec();
            all.extend(linked);
            self.reread(&all, known_under)
        };
        let given: FxHashSet<&PathBuf> = paths.iter().collect();
        for fc in &change.files {
            let p = match fc {
                FileChange::Write(spec) => &spec.path,
                FileChange::Remove(p) => p,
            };
            if !given.contains(p) {
                self.links.update(self.sys, p);
            }
        }
        change
    }

    /// `reload` of exactly `paths`.
    fn reread(&self, paths: &[PathBuf], known_under: &dyn Fn(&Path) -> Vec<PathBuf>) -> Change {
        let mut change = Change::default();
        let mut seen = FxHashSet::default();
        for given in paths {
            let Some((space, path, _)) = self.locate(given).or_else(|| self.locate_dir(given))
            else {
                continue;
            };
            if self.sys.is_dir(&path) {
                let on_disk: Vec<WalkEntry> = self.sys.walk(&path);
                let present: FxHashSet<&Path> = on_disk.iter().map(|e| e.path.as_path()).collect();
                for gone in known_under(&path) {
                    if !present.contains(gone.as_path()) && seen.insert(gone.clone()) {
                        change.files.push(FileChange::Remove(gone));
                    }
                }
                for entry in &on_disk {
                    if entry.error.is_none() && seen.insert(entry.path.clone()) {
                        self.push_file(&mut change, &space, &entry.path);
                    }
                }
                continue;
            }
            if !seen.insert(path.clone()) {
                continue;
            }
            if self.sys.is_file(&path)
                || self.sys.is_symlink(&path)
                || self.sys.canonicalize(&path).is_ok()
            {
                self.push_file(&mut change, &space, &path);
            } else {
                // Gone: the file itself, or a whole folder (its files are removed one by one).
                let below = known_under(&path);
                if below.is_empty() {
                    change.files.push(FileChange::Remove(path));
                }
                for gone in below {
                    if seen.insert(gone.clone()) {
                        change.files.push(FileChange::Remove(gone));
                    }
                }
            }
        }
        change
    }

    /// A directory path inside a space (`tools/acme`), which `locate` refuses as a file.
    fn locate_dir(&self, path: &Path) -> Option<(Space, PathBuf, String)> {
        for (space, ai, real) in &self.dirs {
            for base in std::iter::once(ai).chain(real) {
                if let Some(rel) = rel_of(base, path) {
                    return Some((space.clone(), ai.join(&rel), rel));
                }
            }
        }
        None
    }

    fn push_file(&self, change: &mut Change, space: &Space, path: &Path) {
        let Some((_, path, rel)) = self.locate(path) else {
            return;
        };
        if crate::system::is_sign_leftover(&path) {
            return;
        }
        if !self.sys.is_file(&path)
            && let Err(e) = self.sys.canonicalize(&path)
        {
            // A link whose target is gone is recorded as the walk records it (§1.7), not dropped.
            change.files.push(if self.sys.is_symlink(&path) {
                FileChange::Write(FileSpec {
                    space: space.clone(),
                    path,
                    rel,
                    contents: FileContents::NotRegular(crate::system::unfollowable(&e)),
                    link_origin: None,
                })
            } else {
                FileChange::Remove(path)
            });
            return;
        }
        let classify = Classifier {
            sys: self.sys,
            space,
            real_roots: &self.real_roots,
        };
        let real = self.sys.canonicalize(&path).ok();
        // Not from a walk: the path is checked before it is read (it may be a FIFO by now).
        change.files.push(FileChange::Write(classify.read(
            &path,
            rel,
            real.as_deref(),
            false,
        )));
    }
}

/// The paths a file watcher's event asks to re-read (`--watch`, the MCP server's warm state): writes, creations, removals and renames of files; a
/// directory only when it was created or moved in (its files may come without events of their
/// own). Opens, reads and metadata changes ask nothing.
pub fn watched_paths(event: &notify::Event, sys: &dyn System) -> Vec<PathBuf> {
    use notify::event::{AccessKind, AccessMode, CreateKind, EventKind, ModifyKind};
    let dir_ok = match event.kind {
        EventKind::Create(CreateKind::Folder | CreateKind::Any)
        | EventKind::Modify(ModifyKind::Name(_))
        | EventKind::Remove(_) => true,
        EventKind::Create(_)
        | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any | ModifyKind::Other)
        | EventKind::Access(AccessKind::Close(AccessMode::Write))
        | EventKind::Any
        | EventKind::Other => false,
        EventKind::Modify(ModifyKind::Metadata(_)) | EventKind::Access(_) => return Vec::new(),
    };
    event
        .paths
        .iter()
        .filter(|p| dir_ok || !sys.is_dir(p))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A space load walks its kind's folder and the base folders not inside it (the
    /// extractors are under `tools/`: walked twice, each would be loaded twice).
    #[test]
    fn a_space_load_walks_each_folder_once() {
        assert_eq!(
            dirs_with("tools", &BASE_DIRS),
            [
                "tools",
                "config/keys/trusted",
                "config/keys/approved",
                "trusted_keys"
            ]
        );
        assert_eq!(
            dirs_with("directives", &BASE_DIRS),
            [
                "directives",
                "tools/rye/core/extractors",
                "config/keys/trusted",
                "config/keys/approved",
                "trusted_keys"
            ]
        );
        assert_eq!(
            dirs_with("tool", &["tools/x", "tool/y"]),
            ["tool", "tools/x"]
        );
    }

    #[test]
    fn within_is_starts_with_for_canonical_paths() {
        let cases = [
            ("/a/b/c.py", "/a/b", true),
            ("/a/b", "/a/b", true),
            ("/a/bc/d.py", "/a/b", false),
            ("/a/b.py", "/a/b", false),
            ("/a", "/a/b", false),
            ("/a/b/c", "/", true),
            ("/x/.ai/tools/t.py", "/x/.ai", true),
            ("/x/.aix/t.py", "/x/.ai", false),
        ];
        for (path, root, expected) in cases {
            let (p, r) = (Path::new(path), Path::new(root));
            assert_eq!(within(p, r), expected, "{path} within {root}");
            assert_eq!(within(p, r), p.starts_with(r), "{path} within {root}");
        }
    }

    #[test]
    fn rel_of_agrees_with_the_component_route() {
        let cases = [
            ("/t/.ai", "/t/.ai/tools/a/b.py"),
            ("/t/.ai", "/t/.ai/tools/a//b.py"),
            ("/t/.ai", "/t/.ai/tools/./b.py"),
            ("/t/.ai", "/t/.ai/tools/../b.py"),
            ("/t/.ai/", "/t/.ai/tools/b.py"),
            ("/t/.ai", "/t/.ai"),
            ("/t/.ai", "/t/.aix/b.py"),
            ("/t/.ai", "/u/.ai/b.py"),
            ("/t/./.ai", "/t/./.ai/tools/b.py"),
            ("/t/.ai", "/t/.ai/tools/é ü/b.py"),
            ("/t/.ai", "/t/.ai/tools/b.py/"),
        ];
        for (ai, path) in cases {
            assert_eq!(
                rel_of(Path::new(ai), Path::new(path)),
                rel_of_components(Path::new(ai), Path::new(path)),
                "{ai} {path}"
            );
        }
        use std::os::unix::ffi::OsStrExt;
        let bad = Path::new(std::ffi::OsStr::from_bytes(b"/t/.ai/tools/\xff.py"));
        assert_eq!(rel_of(Path::new("/t/.ai"), bad), None);
    }

    #[test]
    fn path_order_key_sorts_as_paths_do() {
        let mut paths: Vec<PathBuf> = [
            "/t/.ai/tools/a/b.py",
            "/t/.ai/tools/a.b/c.py",
            "/t/.ai/tools/a-b/c.py",
            "/t/.ai/tools/a/b/c.py",
            "/t/.ai/tools/a",
            "/t/.ai/tools/ab.py",
            "/t/.ai/tools/a b/c.py",
            "/t/.ai/tools/é/x.py",
            "/t/.ai/tools/z.py",
            "/t/.ai/tools/A/x.py",
            "/t/.ai/tools_x/y.py",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let mut by_path = paths.clone();
        by_path.sort();
        paths.sort_by_cached_key(|p| path_order_key(p));
        assert_eq!(paths, by_path);
    }

    /// Bytes that are not UTF-8 in a buffer of texts are replaced one for one: the ranges of
    /// the texts around them still hold those texts.
    #[test]
    fn a_buffer_with_bad_bytes_keeps_its_texts_in_place() {
        let buf = b"abc\xff\xfe def\xe2\x82 \xc3\xa9t\xe2".to_vec();
        let text = buffer_text(buf.clone());
        assert_eq!(text.len(), buf.len());
        assert_eq!(&text[..3], "abc");
        assert_eq!(&text[3..5], "??");
        assert_eq!(&text[5..9], " def");
        assert_eq!(&text[11..14], " \u{e9}");
        assert_eq!(text.as_bytes()[15], b'?');
        assert_eq!(buffer_text(b"ok \xc3\xa9".to_vec()), "ok \u{e9}");
    }

    /// Files read one after another into one buffer (the full load's chunks): a file that is not
    /// UTF-8 with an empty file right after it, at the end of the buffer, and texts and a file
    /// whose real path lies in no space (`out.py`: the space is `in/`) around them. The bytes
    /// not kept are blanked in place, so every other range still holds its text.
    #[test]
    #[allow(
        clippy::disallowed_methods,
        reason = "the test writes the files it reads"
    )]
    fn a_bad_file_in_a_shared_buffer_leaves_the_other_ranges_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let tools = tmp.path().canonicalize().unwrap().join(".ai/tools");
        std::fs::create_dir_all(tools.join("in")).unwrap();
        let real_roots = [(tools.join("in"), SpaceKind::Project)];
        let classify = Classifier {
            sys: &crate::system::os::OsSystem,
            space: &Space::Project,
            real_roots: &real_roots,
        };
        let cases: [&[(&str, &[u8])]; 3] = [
            &[("in/bad.py", b"x = '\xff'\n"), ("in/empty.py", b"")],
            &[
                ("in/a.py", b"a = 1\n"),
                ("in/bad.py", b"\xc3"),
                ("in/empty.py", b""),
            ],
            &[
                ("in/bad.py", b"\xe2\x82"),
                ("in/empty.py", b""),
                ("in/b.py", b"b = '\xc3\xa9'\n"),
                ("out.py", b"o = 1\n"),
                ("in/c.py", b"c = 3\n"),
                ("in/also_bad.py", b"\xff"),
                ("in/empty2.py", b""),
                ("in/empty3.py", b""),
            ],
        ];
        for files in cases {
            let mut buf = Vec::new();
            let read: Vec<ReadFile> = files
                .iter()
                .map(|(name, bytes)| {
                    let path = tools.join(name);
                    std::fs::write(&path, bytes).unwrap();
                    let rel = format!("tools/{name}");
                    Ok(classify.read_with(&path, rel, Some(&path), true, Some(&mut buf)))
                })
                .collect();
            let got: Vec<(String, String)> = finish_buffer(buf, read)
                .into_iter()
                .map(|r| {
                    let f = r.expect("a file");
                    let contents = match &f.contents {
                        FileContents::Text(t) => format!("text {:?}", t.as_str()),
                        other => format!("{other:?}"),
                    };
                    (f.rel, contents)
                })
                .collect();
            let want: Vec<(String, String)> = files
                .iter()
                .map(|(name, bytes)| {
                    let contents = match std::str::from_utf8(bytes) {
                        _ if !name.starts_with("in/") => format!(
                            "{:?}",
                            FileContents::SymlinkEscape {
                                target: tools.join(name).display().to_string(),
                            }
                        ),
                        Ok(text) => format!("text {text:?}"),
                        Err(e) => format!(
                            "{:?}",
                            FileContents::NotUtf8 {
                                valid_up_to: e.valid_up_to(),
                            }
                        ),
                    };
                    (format!("tools/{name}"), contents)
                })
                .collect();
            assert_eq!(got, want);
        }
    }
}
