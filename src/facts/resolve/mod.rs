//! L3 resolution facts: which files are tools, their item ids and metadata, per-space indexes,
//! three-tier executor resolution (§1.7) with shadowing, chains (§3) and the executor graph.

pub mod docs;
pub mod extractor;
pub mod graph;

use std::sync::Arc;

use crate::db::{Db, FileContents, ResolveKey, SourceFile, SpaceRoot, Workspace};
use crate::message;
use crate::model::{ExecutorRef, Metadata, ParseProblem, Space, SpaceKind, Span, item_id_problem};
use crate::place::Place;
pub use extractor::{ExtractorConfig, extractor_config};

pub use crate::config::DEFAULT_MAX_DEPTH;

const TOOLS_PREFIX: &str = "tools/";

/// Split `tools/a/b/c.py` into (`a/b/c`, `.py`). `None` for files outside `tools/` or without an
/// extension.
pub fn split_tool_rel(rel: &str) -> Option<(&str, &str)> {
    let rest = rel.strip_prefix(TOOLS_PREFIX)?;
    // `memrchr` over bytes (`/` and `.` are never inside a multi-byte character): `str::rfind`'s
    // char searcher cost ~500 instructions a call, and every chain element calls this.
    let name_start = memchr::memrchr(b'/', rest.as_bytes()).map_or(0, |i| i + 1);
    let dot = memchr::memrchr(b'.', &rest.as_bytes()[name_start..])? + name_start;
    if dot == name_start {
        return None; // a dot-file like `.gitkeep`
    }
    Some((&rest[..dot], &rest[dot..]))
}

/// The tool item id of a file, when its extension is a tool extension.
pub fn tool_id(db: &dyn Db, file: SourceFile) -> Option<String> {
    tool_id_ref(db, file).map(str::to_owned)
}

/// [`tool_id`], borrowed from the file's path (no allocation: asked of every file of a lint,
/// often only whether there is one).
pub fn tool_id_ref(db: &dyn Db, file: SourceFile) -> Option<&str> {
    let (id, ext) = split_tool_rel(file.rel(db))?;
    extractor_config(db).has_extension(ext).then_some(id)
}

/// Header facts plus problems, for one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The header, its spans relative to `header_start` (DESIGN.md invariant: an edit above the
    /// header leaves it equal, so nothing that reads only metadata re-runs).
    pub metadata: Arc<Metadata>,
    /// The byte offset the metadata's spans count from ([`header_base`]).
    pub header_start: u32,
    /// Absolute spans.
    pub problems: Vec<ParseProblem>,
}

/// Parse a file with the parser the extractor's map names for its extension (§1.6), falling back to
/// the built-in parser for the extension; no parser ⇒ empty metadata (§2.6).
#[salsa::tracked(returns(ref))]
pub fn parse_file(db: &dyn Db, file: SourceFile) -> Parsed {
    let empty = || Parsed {
        metadata: Arc::new(Metadata::default()),
        header_start: 0,
        problems: Vec::new(),
    };
    let FileContents::Text(text) = file.contents(db) else {
        return empty();
    };
    let rel = file.rel(db);
    let ext = rel.rfind('.').map_or("", |i| &rel[i..]);
    let Some(kind) = extractor_config(db).parser_for(ext) else {
        return empty();
    };
    let mut parsed = crate::parse::parse(kind, &text.as_str());
    let header_start = parsed.metadata.header_start();
    parsed.metadata.make_relative(header_start);
    Parsed {
        metadata: Arc::new(parsed.metadata),
        header_start,
        problems: parsed.problems,
    }
}

/// Where the header of `file` starts: add it to a span of [`metadata`] to point into the text.
/// Only what shows positions (diagnostics, the editor) reads it.
#[salsa::tracked(returns(copy))]
pub fn header_base(db: &dyn Db, file: SourceFile) -> u32 {
    parse_file(db, file).header_start
}

/// The metadata record alone, its spans relative to the header's start ([`header_base`]): edits
/// that leave the header's words unchanged (in the body, or above the header) backdate here, so
/// nothing downstream (resolution, chains, chain diagnostics) re-runs (DESIGN.md invariant).
#[salsa::tracked(returns(ref))]
pub fn metadata(db: &dyn Db, file: SourceFile) -> Arc<Metadata> {
    parse_file(db, file).metadata.clone()
}

/// Whether a file may be a resolution candidate: anything but `FileContents::NotRegular`. Its own
/// query so resolution depends on one bool per candidate, which backdates on body edits.
#[salsa::tracked(returns(copy))]
pub fn is_regular(db: &dyn Db, file: SourceFile) -> bool {
    !matches!(file.contents(db), FileContents::NotRegular(_))
}

/// What shows that a file without an executor is meant to run (DESIGN.md: otherwise it is a
/// library or data item, not a tool that forgot its executor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunSign {
    /// The code has an entry point (`__main__` block, `execute`, a shebang...).
    EntryPoint(crate::parse::EntryPoint),
    /// The header carries run configuration (`config` / `env_config`).
    RunConfig,
    /// A non-Python file declares a `tool_type`. Python modules of a package carry the same
    /// dunders as tools, so there only code counts.
    DeclaredToolType,
}

/// What a file is: for a file under `tools/`, what its extension and header make it; for any
/// other, its place (`crate::place::Place`). The one classification every reader asks (lint,
/// sign, verify, the lint cache, the language server); the loader, which runs before any query,
/// decides by `Place` alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A tool meant to run: it names an executor, or shows a sign of running.
    Tool,
    /// `tool_type: runtime`.
    Runtime,
    /// A registered primitive.
    Primitive,
    /// A tool file without an executor or a sign of running: a module other tools import.
    Library,
    /// A file under `tools/` whose extension no extractor parses (data, assets).
    Data,
    /// Not a tool: an extractor, a directive, knowledge, config, a trust document, a key
    /// approval, a lockfile or something else.
    At(Place),
}

impl FileKind {
    /// An item a signature covers.
    pub fn is_item(self) -> bool {
        match self {
            FileKind::Tool | FileKind::Runtime | FileKind::Primitive | FileKind::Library => true,
            FileKind::Data => false,
            FileKind::At(place) => place.is_item(),
        }
    }
}

/// The kind of a file as far as its path and the extractors tell (no header read): a file under
/// `tools/` (the extractors' folder too) whose extension no extractor parses is `Data`; any other
/// tool is `Tool` here (the header refines it in [`file_kind`]). What `verify` and `sign` list,
/// without parsing.
pub fn place_kind(db: &dyn Db, file: SourceFile) -> FileKind {
    let rel = file.rel(db);
    let place = Place::of(rel);
    if matches!(place, Place::Tool | Place::Extractor) {
        let parsed =
            split_tool_rel(rel).is_some_and(|(_, ext)| extractor_config(db).has_extension(ext));
        if !parsed {
            return FileKind::Data;
        }
    }
    match place {
        Place::Tool => FileKind::Tool,
        other => FileKind::At(other),
    }
}

/// What a file is, its header read for tools: runtime, primitive, library module or tool.
#[salsa::tracked(returns(copy))]
pub fn file_kind(db: &dyn Db, file: SourceFile) -> FileKind {
    let kind = place_kind(db, file);
    if kind != FileKind::Tool {
        return kind;
    }
    let id = split_tool_rel(file.rel(db)).map_or("", |(id, _)| id);
    if db
        .workspace()
        .settings(db)
        .primitives
        .iter()
        .any(|p| p == id)
    {
        return FileKind::Primitive;
    }
    let meta = metadata(db, file);
    if meta.tool_type_str() == Some("runtime") {
        FileKind::Runtime
    } else if matches!(meta.executor(), ExecutorRef::Terminal) && run_facts(db, file).sign.is_none()
    {
        FileKind::Library
    } else {
        FileKind::Tool
    }
}

/// Run facts of one file, for the `unknown-primitive` and `unrunnable-item` checks only (never
/// read by `metadata`, resolution or chains). Body edits that keep these facts backdate here, so
/// the chain diagnostics of a terminal element re-run only when the verdict could change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RunFacts {
    /// The file is text and its header parsed without problems.
    pub readable: bool,
    /// The first sign found, `None` for a library or data item.
    pub sign: Option<RunSign>,
}

#[salsa::tracked(returns(copy))]
pub fn run_facts(db: &dyn Db, file: SourceFile) -> RunFacts {
    let FileContents::Text(text) = file.contents(db) else {
        return RunFacts {
            readable: false,
            sign: None,
        };
    };
    let parsed = parse_file(db, file);
    let rel = file.rel(db);
    let ext = rel.rfind('.').map_or("", |i| &rel[i..]);
    let kind = extractor_config(db).parser_for(ext);
    let meta = &parsed.metadata;
    let package_marker = rel.rsplit('/').next() == Some("__init__.py");
    let present = |v: Option<&crate::model::Spanned<crate::model::Value>>| {
        v.is_some_and(|v| !matches!(v.value, crate::model::Value::Null))
    };
    let sign = if package_marker {
        None
    } else if let Some(e) = crate::parse::entry_point(kind, &text.as_str()) {
        Some(RunSign::EntryPoint(e))
    } else if present(meta.config()) || present(meta.env_config()) {
        Some(RunSign::RunConfig)
    } else if kind != Some(crate::parse::ParserKind::PythonAst) && present(meta.tool_type()) {
        Some(RunSign::DeclaredToolType)
    } else {
        None
    };
    RunFacts {
        readable: parsed.problems.is_empty(),
        sign,
    }
}

/// Tool files of one space by item id; each id lists its files with their extensions. Ids are
/// shared with [`VisibleIds`] and each extension is one allocation per space (100k ids are kept
/// for the whole run).
///
/// Two sorted, aligned vectors rather than a hash map of vectors: at 100k ids the map's table
/// and a vector per id cost more than the entries (this index is kept for the whole run).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpaceIndex {
    /// The id of each file, sorted (an id with two files appears twice, one allocation).
    ids: Vec<Arc<str>>,
    /// (extension, file), aligned with `ids`; an id's files in path order.
    files: Vec<(Arc<str>, SourceFile)>,
    /// The ids with more than one file, sorted (few or none): whether a file has a rival is
    /// asked of every tool, and a search of this list answers it without searching `ids`.
    shared: Vec<Arc<str>>,
}

impl SpaceIndex {
    /// Whether `id` has more than one file in this space.
    pub fn is_shared(&self, id: &str) -> bool {
        self.shared.binary_search_by(|s| s.as_ref().cmp(id)).is_ok()
    }
    pub fn candidates(&self, id: &str) -> &[(Arc<str>, SourceFile)] {
        let lo = self.ids.partition_point(|i| i.as_ref() < id);
        let len = self.ids[lo..].partition_point(|i| i.as_ref() == id);
        &self.files[lo..lo + len]
    }
    /// Every id with its files, in id order.
    fn by_id(&self) -> impl Iterator<Item = (&Arc<str>, &[(Arc<str>, SourceFile)])> {
        let mut at = 0;
        std::iter::from_fn(move || {
            let id = self.ids.get(at)?;
            // An id's entries are neighbours sharing one allocation (`space_index`): counted by
            // pointer, not found by a binary search comparing texts (most of the visible-id
            // list's build after a file was added, at 100k tools).
            let len = self.ids[at..]
                .iter()
                .take_while(|i| Arc::ptr_eq(i, id))
                .count();
            let group = (id, &self.files[at..at + len]);
            at += len;
            Some(group)
        })
    }
    /// The file that wins for `id` in this space under the extension order.
    pub fn first(&self, id: &str, cfg: &ExtractorConfig) -> Option<SourceFile> {
        self.ranked(id, cfg).next()
    }
    /// The regular file that wins for `id` in this space (§1.7 "first regular file wins"): what
    /// resolution uses, so a FIFO or a dangling symlink found by the walk is skipped as the lazy
    /// loader, which never loads them, skips it.
    pub fn first_regular(
        &self,
        db: &dyn Db,
        id: &str,
        cfg: &ExtractorConfig,
    ) -> Option<SourceFile> {
        self.ranked(id, cfg).find(|&f| is_regular(db, f))
    }
    /// Files of `id` with a tool extension, in extension order.
    pub fn ranked<'a>(
        &'a self,
        id: &str,
        cfg: &'a ExtractorConfig,
    ) -> impl Iterator<Item = SourceFile> + 'a {
        let cands = self.candidates(id);
        cfg.extensions.iter().flat_map(move |ext| {
            cands
                .iter()
                .filter(move |(e, _)| e.as_ref() == ext.as_ref())
                .map(|(_, f)| *f)
        })
    }
}

#[salsa::tracked(returns(ref))]
pub fn space_index(db: &dyn Db, root: SpaceRoot) -> SpaceIndex {
    let mut entries: Vec<(&str, Arc<str>, SourceFile)> = Vec::new();
    let mut exts: Vec<Arc<str>> = Vec::new();
    for (rel, file) in root.entries(db) {
        if let Some((id, ext)) = split_tool_rel(rel) {
            let ext = match exts.iter().find(|e| e.as_ref() == ext) {
                Some(e) => e.clone(),
                None => {
                    exts.push(Arc::from(ext));
                    exts[exts.len() - 1].clone()
                }
            };
            entries.push((id, ext, file));
        }
    }
    // Stable: an id's files stay in path order.
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let mut ids: Vec<Arc<str>> = Vec::with_capacity(entries.len());
    let mut files = Vec::with_capacity(entries.len());
    let mut shared: Vec<Arc<str>> = Vec::new();
    for (id, ext, file) in entries {
        let id = match ids.last() {
            Some(last) if last.as_ref() == id => {
                if shared.last() != Some(last) {
                    shared.push(last.clone());
                }
                last.clone()
            }
            _ => Arc::from(id),
        };
        ids.push(id);
        files.push((ext, file));
    }
    SpaceIndex { ids, files, shared }
}

/// A file found for an id, with the space it was found in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Candidate {
    pub file: SourceFile,
    pub space: Space,
}

/// The outcome of resolving an executor id from a kind of space (§1.7).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resolution {
    pub found: Option<Candidate>,
    /// Winners of lower-precedence visible spaces, hidden by `found` (trace `shadowed`, §11.2).
    pub shadowed: Vec<Candidate>,
    /// Matches in spaces the caller may not see (a user tool naming a project runtime).
    pub hidden: Vec<Candidate>,
}

/// Resolve an id in search order: outer loop spaces visible from `from`, inner loop extensions.
#[salsa::tracked(returns(ref))]
pub fn resolve_item(db: &dyn Db, key: ResolveKey) -> Resolution {
    let cfg = extractor_config(db);
    let id = key.id(db);
    let visible = key.from_kind(db).visible_kinds();
    let mut res = Resolution::default();
    for &root in db.workspace().roots(db) {
        let space = root.space(db);
        let Some(file) = space_index(db, root).first_regular(db, id, cfg) else {
            continue;
        };
        let cand = Candidate {
            file,
            space: space.clone(),
        };
        if !visible.contains(&space.kind()) {
            res.hidden.push(cand);
        } else if res.found.is_none() {
            res.found = Some(cand);
        } else {
            res.shadowed.push(cand);
        }
    }
    res
}

/// Convenience wrapper: intern the key and resolve.
pub fn resolve<'db>(db: &'db dyn Db, id: &str, from: SpaceKind) -> &'db Resolution {
    resolve_item(db, ResolveKey::new(db, id, from))
}

/// A kind of space as a query key (the interned argument of [`visible_ids_of`]).
#[salsa::interned(unsafe(no_lifetime), revisions = usize::MAX, debug)]
pub struct SpaceKindKey {
    pub kind: SpaceKind,
}

/// Every id an element of one kind of space can name: the tool ids of the spaces it may see
/// (§1.7) and the primitive ids. This is the list "did you mean" searches and an editor completes
/// from. Held as one part per space (and one of the primitives), each part shared by every kind
/// of space that sees it and rebuilt only when files are added to or removed from its space: a
/// tool added to a 100k-tool project rebuilds the project's part, not one merged list of every
/// space's ids. An id visible in two spaces is in two parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VisibleIds {
    parts: Vec<Arc<IdList>>,
}

/// One part of [`VisibleIds`]: distinct ids sorted by length in characters, then id, so a search
/// can skip ids whose length alone puts them too far away.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdList {
    by_len: Vec<(u32, Arc<str>)>,
    /// `class_counts` of each id of `by_len`, packed: the search's first filter reads these 16
    /// bytes instead of following each id's pointer to its text.
    classes: Vec<ClassCounts>,
}

impl IdList {
    /// The list of `by_len` entries (any order, repeats allowed).
    fn from_entries(mut by_len: Vec<(u32, Arc<str>)>) -> IdList {
        // Ordered by (length, id): a stable sort by length keeps each length's entries in the
        // order they came, and a stable sort of each length's entries by id finds the runs
        // already sorted (all of them, for ids that came in id order) instead of comparing
        // through two ids' pointers n log n times.
        by_len.sort_by_key(|e| e.0);
        for group in by_len.chunk_by_mut(|a, b| a.0 == b.0) {
            group.sort_by(|a, b| a.1.cmp(&b.1));
        }
        by_len.dedup();
        Self::of_sorted(by_len)
    }

    /// The list of `by_len` entries that are sorted by (length, id) and distinct.
    fn of_sorted(mut by_len: Vec<(u32, Arc<str>)>) -> IdList {
        debug_assert!(
            by_len.windows(2).all(|w| w[0] < w[1]),
            "sorted and distinct"
        );
        by_len.shrink_to_fit();
        let classes = by_len.iter().map(|(_, id)| class_counts(id)).collect();
        IdList { by_len, classes }
    }

    /// Ids whose length in characters lies in `lens`, with their class counts.
    fn with_len(
        &self,
        lens: std::ops::RangeInclusive<u32>,
    ) -> impl Iterator<Item = (&str, &ClassCounts)> {
        let lo = self.by_len.partition_point(|(l, _)| *l < *lens.start());
        let hi = self
            .by_len
            .partition_point(|(l, _)| *l <= *lens.end())
            .max(lo);
        self.by_len[lo..hi]
            .iter()
            .map(|(_, id)| id.as_ref())
            .zip(&self.classes[lo..hi])
    }
}

impl VisibleIds {
    /// The list of `ids` (any order, repeats allowed) as one part.
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a str>) -> VisibleIds {
        let list = IdList::from_entries(
            ids.into_iter()
                .map(|id| (char_len(id), Arc::from(id)))
                .collect(),
        );
        VisibleIds {
            parts: vec![Arc::new(list)],
        }
    }
    /// Every id of every part: an id visible in two spaces comes twice.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|p| p.by_len.iter().map(|(_, id)| id.as_ref()))
    }
    /// Ids whose length in characters lies in `lens`, with their class counts, part by part.
    fn with_len(
        &self,
        lens: std::ops::RangeInclusive<u32>,
    ) -> impl Iterator<Item = (&str, &ClassCounts)> {
        self.parts
            .iter()
            .flat_map(move |p| p.with_len(lens.clone()))
    }
}

/// How many characters of a string fall in each of 16 classes (a hash of the character),
/// saturating at 255.
type ClassCounts = [u8; 16];

fn class_counts(s: &str) -> ClassCounts {
    // Counted wide, saturated once at the end (the same as saturating each step).
    let mut wide = [0u32; 16];
    if s.is_ascii() {
        // (Most ids: a byte's class read from a table, not a character decoded and hashed.)
        for b in s.bytes() {
            wide[usize::from(ASCII_CLASS[usize::from(b & 0x7f)] & 15)] += 1;
        }
    } else {
        for c in s.chars() {
            wide[class_of(c) & 15] += 1;
        }
    }
    wide.map(|n| u8::try_from(n).unwrap_or(u8::MAX))
}

fn class_of(c: char) -> usize {
    (u32::from(c).wrapping_mul(0x9E37_79B9) >> 28) as usize
}

/// `class_of` each ASCII character.
const ASCII_CLASS: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = ((b as u32).wrapping_mul(0x9E37_79B9) >> 28) as u8;
        b += 1;
    }
    table
};

/// A lower bound of the edit distance of two strings from their class counts: an insertion or
/// deletion changes one count by one, a substitution two counts by one each, a swap none; so the
/// counts' total difference is at most twice the edits (saturation only narrows differences).
fn class_bound(a: &ClassCounts, b: &ClassCounts) -> usize {
    let apart: u32 = a
        .iter()
        .zip(b)
        .map(|(x, y)| u32::from(x.abs_diff(*y)))
        .sum();
    apart.div_ceil(2) as usize
}

/// The tool ids of one space (a part of [`VisibleIds`]): re-run only when files are added to or
/// removed from it, or the extensions change — never on an edit. Its index lists the ids in id
/// order, once each: a stable sort by length orders them, comparing no ids.
#[salsa::tracked(returns(clone))]
pub fn space_ids(db: &dyn Db, root: SpaceRoot) -> Arc<IdList> {
    let cfg = extractor_config(db);
    let index = space_index(db, root);
    let mut ids: Vec<(u32, Arc<str>)> = index
        .by_id()
        .filter(|(_, files)| files.iter().any(|(ext, _)| cfg.has_extension(ext)))
        .map(|(id, _)| (char_len(id), id.clone()))
        .collect();
    // Stable: each length's ids stay in id order, once each.
    ids.sort_by_key(|e| e.0);
    Arc::new(IdList::of_sorted(ids))
}

/// The primitive ids (a part of [`VisibleIds`]).
#[salsa::tracked(returns(clone))]
pub fn primitive_ids(db: &dyn Db) -> Arc<IdList> {
    let primitives = &db.workspace().settings(db).primitives;
    Arc::new(IdList::from_entries(
        primitives
            .iter()
            .map(|p| (char_len(p), Arc::from(p.as_str())))
            .collect(),
    ))
}

/// Computed once per kind of space (not per finding), from the parts of the spaces it sees.
#[salsa::tracked(returns(ref))]
pub fn visible_ids_of(db: &dyn Db, key: SpaceKindKey) -> VisibleIds {
    let visible = key.kind(db).visible_kinds();
    let mut parts: Vec<Arc<IdList>> = db
        .workspace()
        .roots(db)
        .iter()
        .filter(|root| visible.contains(&root.space(db).kind()))
        .map(|&root| space_ids(db, root))
        .collect();
    parts.push(primitive_ids(db));
    VisibleIds { parts }
}

/// The ids visible from a kind of space.
pub fn visible_ids(db: &dyn Db, kind: SpaceKind) -> &VisibleIds {
    visible_ids_of(db, SpaceKindKey::new(db, kind))
}

fn char_len(s: &str) -> u32 {
    u32::try_from(s.chars().count()).unwrap_or(u32::MAX)
}

/// At most this many ids are suggested for an id that resolves nowhere.
pub const MAX_SUGGESTIONS: usize = 3;
/// A lone suggestion at most this far away is certain enough to offer as a fix.
const CERTAIN_DISTANCE: usize = 2;

/// Ids close to one that does not resolve, best first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Suggested {
    pub ids: Vec<String>,
    /// Exactly one visible id lies within [`CERTAIN_DISTANCE`] edits: safe to apply as a fix.
    pub certain: bool,
}

/// The visible ids closest to `target` by edit distance (optimal string alignment, so a swap of
/// two neighbouring characters is one edit). Allowed distance grows with the length (a fifth,
/// between 1 and 4); ids whose length differs by more are never compared, and for ASCII ids a
/// letter-count bound skips most of the rest before the quadratic distance is computed.
pub fn closest_ids(ids: &VisibleIds, target: &str) -> Suggested {
    let len = char_len(target);
    let max = (len / 5).clamp(1, 4);
    let ascii = target.is_ascii();
    let mut want = [0i32; 128];
    if ascii {
        for b in target.bytes() {
            want[usize::from(b)] += 1;
        }
    }
    let classes = class_counts(target);
    let mut found: Vec<(usize, &str)> = Vec::new();
    // `want`'s letters not yet matched by the id being compared (restored after each).
    let mut avail = want;
    for (id, id_classes) in ids.with_len(len.saturating_sub(max)..=len.saturating_add(max)) {
        if class_bound(&classes, id_classes) > max as usize || id == target {
            continue;
        }
        // Each edit changes the letter counts by at most two. The counts differ by
        // len + id.len() - 2 * (letters in common), found in one pass over the id.
        if ascii && id.is_ascii() {
            let mut common = 0usize;
            for b in id.bytes() {
                let slot = &mut avail[usize::from(b)];
                if *slot > 0 {
                    *slot -= 1;
                    common += 1;
                }
            }
            for b in id.bytes() {
                avail[usize::from(b)] = want[usize::from(b)];
            }
            let apart = target.len() + id.len() - 2 * common;
            if apart.div_ceil(2) > max as usize {
                continue;
            }
        }
        let d = strsim::osa_distance(target, id);
        if d <= max as usize {
            found.push((d, id));
        }
    }
    found.sort_unstable();
    // (An id visible in two spaces is found in both parts.)
    found.dedup();
    let certain = found
        .iter()
        .take_while(|(d, _)| *d <= CERTAIN_DISTANCE)
        .count()
        == 1;
    Suggested {
        ids: found
            .into_iter()
            .take(MAX_SUGGESTIONS)
            .map(|(_, id)| id.to_owned())
            .collect(),
        certain,
    }
}

/// Suggestions for an id that does not resolve from a kind of space, computed once per (id, kind).
#[salsa::tracked(returns(ref))]
pub fn suggest_ids(db: &dyn Db, key: ResolveKey) -> Suggested {
    closest_ids(visible_ids(db, *key.from_kind(db)), key.id(db))
}

/// Convenience wrapper: intern the key and suggest.
pub fn suggestions<'db>(db: &'db dyn Db, id: &str, from: SpaceKind) -> &'db Suggested {
    suggest_ids(db, ResolveKey::new(db, id, from))
}

/// The file carrying a primitive id, if any, resolved from the space of the element that names
/// it like any item (DESIGN.md: a project or user copy wins, as in the reference, and is
/// verified; it stays terminal whatever it says).
fn primitive_file(db: &dyn Db, id: &str, from: SpaceKind) -> Option<Candidate> {
    resolve(db, id, from).found.clone()
}

/// The label of the first bundle (synthetic primitive elements live there, §3.6).
fn first_bundle(db: &dyn Db) -> Space {
    db.workspace()
        .roots(db)
        .iter()
        .map(|r| r.space(db))
        .find(|s| s.kind() == SpaceKind::System)
        .cloned()
        .unwrap_or(Space::System {
            order: 0,
            bundle: Arc::from("ryechain"),
        })
}

/// One chain element (§3.2 d).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    pub item_id: String,
    /// `None` for a primitive resolved by key without a file.
    pub file: Option<SourceFile>,
    /// The space label the element was found in (search order of §1.7).
    pub space: Space,
    /// The space its file really lives in (differs for a symlink into another space).
    pub origin: SpaceKind,
    pub primitive: bool,
    pub shadowed: Vec<Candidate>,
}

/// How a chain ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainEnd {
    /// The last element is a registered primitive.
    Primitive,
    /// The last element has no executor id but is not a primitive (`unknown-primitive`).
    Terminal,
    /// The last element names an id that resolves in no space it may see.
    Missing { executor_id: String, span: Span },
    /// The last element names a hostile id (absolute, `..`, empty segments).
    InvalidId {
        executor_id: String,
        span: Span,
        reason: &'static str,
    },
    /// The last element's executor field is neither a string nor None.
    WrongType {
        type_name: &'static str,
        span: Span,
        /// The value as written (JSON), for the message.
        shown: String,
    },
    /// The last element names a file already in the chain (index of that element).
    Cycle {
        executor_id: String,
        span: Span,
        repeats: usize,
    },
    /// One more element would exceed the maximum length.
    TooDeep {
        max: usize,
        executor_id: String,
        span: Span,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub elements: Vec<Element>,
    pub end: ChainEnd,
}

impl Chain {
    #[cfg(any(test, feature = "testing"))]
    pub fn ids(&self) -> Vec<String> {
        self.elements.iter().map(|e| e.item_id.clone()).collect()
    }

    /// The reference's chain-building error text (§3.2) for a chain rooted at `root`, or `None`
    /// when the chain builds (it ends at a primitive, or at a non-primitive terminal, which the
    /// dry run accepts and execution reports as `Unknown primitive`).
    pub fn build_error(&self, root: &str) -> Option<String> {
        Some(match &self.end {
            ChainEnd::Primitive | ChainEnd::Terminal => return None,
            ChainEnd::Missing { executor_id, .. } => message::executor_not_found(executor_id),
            ChainEnd::TooDeep { max, .. } => message::chain_too_deep(*max, root),
            ChainEnd::Cycle { executor_id, .. } => message::circular_dependency(executor_id),
            ChainEnd::InvalidId {
                executor_id,
                reason,
                ..
            } => {
                // The element that names it: the chain's last.
                let named_by = self.elements.last().map_or(root, |e| e.item_id.as_str());
                message::invalid_executor_id(executor_id, named_by, reason)
            }
            ChainEnd::WrongType {
                type_name, shown, ..
            } => {
                let named_by = self.elements.last().map_or(root, |e| e.item_id.as_str());
                message::invalid_executor_id(
                    shown,
                    named_by,
                    &message::executor_id_wrong_type(type_name),
                )
            }
        })
    }

    /// The error execution reports: a build error, or `Unknown primitive: <last>` (§3.4).
    pub fn run_error(&self, root: &str) -> Option<String> {
        if matches!(self.end, ChainEnd::Terminal) {
            let last = self.elements.last().map_or(root, |e| e.item_id.as_str());
            return Some(message::unknown_primitive(last));
        }
        self.build_error(root)
    }
}

/// The maximum chain length in force (CLI override, then config, then 10).
pub fn max_depth(db: &dyn Db) -> usize {
    max_depth_of(db, db.workspace())
}

/// [`max_depth`], keyed by the workspace input (an argument-free query interns its empty key on
/// every call: once per chain walk).
#[salsa::tracked(returns(copy))]
fn max_depth_of(db: &dyn Db, _ws: Workspace) -> usize {
    if let Some(d) = db.workspace().settings(db).max_depth {
        return d;
    }
    crate::config::lint_config(db)
        .max_depth
        .unwrap_or(DEFAULT_MAX_DEPTH)
}

fn is_primitive_id(db: &dyn Db, id: &str) -> bool {
    db.workspace()
        .settings(db)
        .primitives
        .iter()
        .any(|p| p == id)
}

fn element_for(db: &dyn Db, id: &str, cand: &Candidate, shadowed: Vec<Candidate>) -> Element {
    Element {
        item_id: id.to_owned(),
        file: Some(cand.file),
        space: cand.space.clone(),
        origin: cand.file.link_origin(db).unwrap_or(cand.space.kind()),
        primitive: is_primitive_id(db, id),
        shadowed,
    }
}

/// The chain starting at `file` (§3.2), walked iteratively inside this one query so a cycle is a
/// finding, never a salsa cycle. A root that is not a tool gets a one-element chain.
#[salsa::tracked(returns(ref))]
pub fn chain(db: &dyn Db, file: SourceFile) -> Chain {
    let mut chain = walk_chain(db, file);
    // A memoized chain stays for the whole run; drop the room left over.
    chain.elements.shrink_to_fit();
    chain
}

/// The walk behind [`chain`], not memoized: for a reader that is itself a query and needs the
/// chain only while it runs (`chain_diagnostics`, once per tool in a lint), so a whole-tree
/// lint does not keep every tool's chain alive; the reads are recorded on that query all the same.
pub fn walk_chain(db: &dyn Db, file: SourceFile) -> Chain {
    let space = file.space(db).clone();
    let root_id = tool_id_ref(db, file).unwrap_or_default();
    let max = max_depth(db);
    let root = element_for(db, root_id, &Candidate { file, space }, Vec::new());
    // Room for the usual chain (tool, runtime, primitive and one more) without growing.
    let mut elements = Vec::with_capacity(4);
    elements.push(root);
    let end = loop {
        let current = elements.last().expect("chain starts with its root");
        if current.primitive {
            // DESIGN.md: a primitive id terminates the chain whatever its file says.
            break ChainEnd::Primitive;
        }
        let Some(cur_file) = current.file else {
            break ChainEnd::Primitive;
        };
        let meta = metadata(db, cur_file);
        let (next, span) = match meta.executor() {
            ExecutorRef::Terminal => break ChainEnd::Terminal,
            ExecutorRef::WrongType(type_name, span) => {
                let shown = meta
                    .executor_id()
                    .map(|e| e.value.to_json().to_string())
                    .unwrap_or_default();
                break ChainEnd::WrongType {
                    type_name,
                    span,
                    shown,
                };
            }
            ExecutorRef::Id(next, span) => (next, span),
        };
        if let Some(reason) = item_id_problem(next) {
            break ChainEnd::InvalidId {
                executor_id: next.to_owned(),
                span,
                reason,
            };
        }
        // §3.2 a: the depth check comes before the cycle check.
        if elements.len() >= max {
            break ChainEnd::TooDeep {
                max,
                executor_id: next.to_owned(),
                span,
            };
        }
        let from = current.space.kind();
        if is_primitive_id(db, next) {
            let (file, space) = match primitive_file(db, next, from) {
                Some(c) => (Some(c.file), c.space),
                None => (None, first_bundle(db)),
            };
            elements.push(Element {
                item_id: next.to_owned(),
                file,
                origin: space.kind(),
                space,
                primitive: true,
                shadowed: Vec::new(),
            });
            break ChainEnd::Primitive;
        }
        let res = resolve(db, next, from);
        let Some(found) = &res.found else {
            break ChainEnd::Missing {
                executor_id: next.to_owned(),
                span,
            };
        };
        // A cycle is a file met twice (ARCHITECTURE.md: by file, not by id as the reference does).
        if let Some(repeats) = elements.iter().position(|e| e.file == Some(found.file)) {
            break ChainEnd::Cycle {
                executor_id: next.to_owned(),
                span,
                repeats,
            };
        }
        let el = element_for(db, next, found, res.shadowed.clone());
        elements.push(el);
    };
    Chain { elements, end }
}

/// The root tool for an item id, resolved from the project space (§1.7).
pub fn resolve_root<'db>(db: &'db dyn Db, id: &str) -> &'db Resolution {
    resolve(db, id, SpaceKind::Project)
}

/// How many tool files there are in every space (as many as `tool_files` lists): counted space
/// by space, so that a file added to one space counts that space's files again, not every file.
#[salsa::tracked(returns(copy))]
pub fn tool_count(db: &dyn Db) -> usize {
    db.workspace()
        .roots(db)
        .iter()
        .map(|&root| space_tool_count(db, root))
        .sum()
}

/// The tool files of one space, by its index (each file there has an id and an extension).
#[salsa::tracked(returns(copy))]
fn space_tool_count(db: &dyn Db, root: SpaceRoot) -> usize {
    let cfg = extractor_config(db);
    // The index shares one allocation per extension: each asked of the config once in a row.
    let mut last: Option<(&Arc<str>, bool)> = None;
    space_index(db, root)
        .files
        .iter()
        .filter(|(ext, _)| match last {
            Some((e, tool)) if Arc::ptr_eq(e, ext) => tool,
            _ => {
                let tool = cfg.has_extension(ext);
                last = Some((ext, tool));
                tool
            }
        })
        .count()
}

/// Every tool file in every space, in search order then path order.
#[salsa::tracked(returns(ref))]
pub fn tool_files(db: &dyn Db) -> Vec<SourceFile> {
    let cfg = extractor_config(db);
    let mut out = Vec::new();
    for &root in db.workspace().roots(db) {
        for (rel, file) in root.entries(db) {
            if let Some((_, ext)) = split_tool_rel(rel)
                && cfg.has_extension(ext)
            {
                out.push(file);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// However the entries come (sorted runs, as `visible_ids_of` gives them, or any
        /// order, with repeats and ids of one length), the list is the sorted, deduplicated one.
        #[test]
        fn visible_ids_are_sorted_by_length_then_id_and_unique(
            runs in proptest::collection::vec(
                proptest::collection::vec("[ab/é]{0,6}", 0..40),
                0..5,
            ),
            sort_runs in proptest::bool::ANY,
        ) {
            let mut entries: Vec<(u32, Arc<str>)> = Vec::new();
            for mut run in runs {
                if sort_runs {
                    run.sort();
                }
                entries.extend(run.iter().map(|id| (char_len(id), Arc::from(id.as_str()))));
            }
            let mut want = entries.clone();
            want.sort_unstable();
            want.dedup();
            let got = IdList::from_entries(entries);
            proptest::prop_assert_eq!(&got.by_len, &want);
            proptest::prop_assert_eq!(got.classes.len(), want.len());
        }
    }

    #[test]
    fn split_rel() {
        assert_eq!(
            split_tool_rel("tools/rye/bash/bash.py"),
            Some(("rye/bash/bash", ".py"))
        );
        assert_eq!(split_tool_rel("tools/a.tar.gz"), Some(("a.tar", ".gz")));
        assert_eq!(split_tool_rel("tools/x/.gitkeep"), None);
        assert_eq!(split_tool_rel("tools/x/noext"), None);
        assert_eq!(split_tool_rel("config/ryechain.yaml"), None);
        assert_eq!(split_tool_rel("tools/v1.2/run"), None);
        assert_eq!(split_tool_rel("tools/é.d/ü.py"), Some(("é.d/ü", ".py")));
        assert_eq!(split_tool_rel("tools/ü"), None);
    }

    /// `list` as parts of at most `part` ids each (repeats kept: an id visible in two spaces).
    fn parts(list: &[&str], part: usize) -> VisibleIds {
        let parts = list
            .chunks(part.max(1))
            .map(|chunk| {
                let mut by_len: Vec<(u32, Arc<str>)> =
                    chunk.iter().map(|s| (char_len(s), Arc::from(*s))).collect();
                by_len.sort_unstable();
                let classes = by_len.iter().map(|(_, id)| class_counts(id)).collect();
                Arc::new(IdList { by_len, classes })
            })
            .collect();
        VisibleIds { parts }
    }

    fn ids(list: &[&str]) -> VisibleIds {
        parts(list, list.len())
    }

    proptest::proptest! {
        /// The length and letter-count bounds only skip ids the distance would refuse; however
        /// the ids are split into parts (an id may be in several), each is suggested once.
        #[test]
        fn closest_ids_skip_only_ids_too_far(
            list in proptest::collection::vec("[ab/é]{0,9}", 0..24),
            part in 1usize..8,
            target in "[ab/é]{0,9}",
        ) {
            let visible = parts(&list.iter().map(String::as_str).collect::<Vec<_>>(), part);
            let max = (char_len(&target) / 5).clamp(1, 4) as usize;
            let mut want: Vec<(usize, String)> = list
                .iter()
                .filter(|id| **id != target)
                .map(|id| (strsim::osa_distance(&target, id), id.clone()))
                .filter(|(d, _)| *d <= max)
                .collect();
            want.sort_unstable();
            want.dedup();
            let certain = want.iter().take_while(|(d, _)| *d <= CERTAIN_DISTANCE).count() == 1;
            let want: Vec<String> = want.into_iter().take(MAX_SUGGESTIONS).map(|(_, id)| id).collect();
            let got = closest_ids(&visible, &target);
            proptest::prop_assert_eq!(got.ids, want);
            proptest::prop_assert_eq!(got.certain, certain);
        }
    }

    #[test]
    fn the_ascii_table_holds_each_characters_class() {
        for b in 0u8..128 {
            assert_eq!(
                usize::from(ASCII_CLASS[usize::from(b)]),
                class_of(char::from(b))
            );
        }
    }

    #[test]
    fn closest_ids_rank_by_distance_and_bound_the_list() {
        let visible = ids(&[
            "rye/core/runtimes/python/script",
            "rye/core/runtimes/python/function",
            "rye/core/runtimes/node/script",
            "rye/core/primitives/subprocess",
            "acme/x",
        ]);
        let s = closest_ids(&visible, "rye/core/runtimes/python/scirpt");
        assert_eq!(s.ids, ["rye/core/runtimes/python/script"]);
        assert!(s.certain);
        // Nothing close: no suggestion (not the least bad id).
        let s = closest_ids(&visible, "completely/different/thing");
        assert!(s.ids.is_empty() && !s.certain);
        // The id itself is never suggested; at most three, nearest first.
        let visible = ids(&["a/bcd1", "a/bcd2", "a/bcd3", "a/bcd4", "a/bcd", "a/bc"]);
        let s = closest_ids(&visible, "a/bcd");
        assert_eq!(s.ids, ["a/bc", "a/bcd1", "a/bcd2"]);
        assert!(!s.certain, "several ids within two edits: not certain");
        // Non-ASCII ids skip the letter-count bound but are still compared.
        let s = closest_ids(&ids(&["tools/café"]), "tools/cafe");
        assert_eq!(s.ids, ["tools/café"]);
    }
}
