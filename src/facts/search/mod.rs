//! L3 search (§12.7): which files of which spaces are the items of a kind, what a query reads of
//! each (its weighted fields lowercased: the query `search_doc`, memoized per file so a warm
//! database answers from memos and an edit recomputes one file's), the weights the extractors
//! give (`search_fields`, §2.7), and the ranking: match, fields, proximity, filters, score
//! (matched weights over all weights), sort, page. Pure; the query language is `query`.

pub mod query;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::path::PathBuf;

use serde_json::{Map, Value as Json};

use std::sync::Arc;

use crate::db::{Db, SourceFile, SpaceRoot};
use crate::integrity::{ItemKind, KindKey};
use crate::model::{SpaceKind, Spanned, Value};
use crate::place::{EXTRACTORS_DIR, Place};

pub use query::{IdGlob, Query, QueryError};

/// The fields a query is scored on and their weights when no extractor gives `search_fields`:
/// the reference's (§2.7), which ryechain's bundled extractors also declare.
pub const DEFAULT_WEIGHTS: [(&str, f64); 5] = [
    ("title", 3.0),
    ("name", 3.0),
    ("description", 2.0),
    ("category", 1.5),
    ("content", 1.0),
];

/// How many characters of an item `preview` shows (and the `content` field searches).
pub const PREVIEW_CHARS: usize = 200;

/// The results a search answers when the call names no `limit`.
pub const DEFAULT_LIMIT: usize = 10;

/// Which spaces a search looks in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Project,
    User,
    System,
    All,
}

impl Source {
    pub const NAMES: [&'static str; 4] = ["project", "user", "system", "all"];

    pub fn from_name(name: &str) -> Option<Source> {
        Some(match name {
            "project" => Source::Project,
            "user" => Source::User,
            "system" => Source::System,
            "all" => Source::All,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Source::Project => "project",
            Source::User => "user",
            Source::System => "system",
            Source::All => "all",
        }
    }

    fn admits(self, kind: SpaceKind) -> bool {
        match self {
            Source::All => true,
            Source::Project => kind == SpaceKind::Project,
            Source::User => kind == SpaceKind::User,
            Source::System => kind == SpaceKind::System,
        }
    }
}

/// The order of the results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    /// Highest score first; ties by space (project, user, system) then id.
    #[default]
    Score,
    /// Newest `created_at` (or `updated_at`) first; items without a date last.
    Date,
    /// By name, case-insensitively; ties by space then id.
    Name,
}

impl SortBy {
    pub const NAMES: [&'static str; 3] = ["score", "date", "name"];

    pub fn from_name(name: &str) -> Option<SortBy> {
        Some(match name {
            "score" => SortBy::Score,
            "date" => SortBy::Date,
            "name" => SortBy::Name,
            _ => return None,
        })
    }
}

/// One search, as the MCP tool and the command line ask it.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchRequest {
    pub kind: ItemKind,
    pub query: String,
    pub source: Source,
    /// Only items whose id matches this fnmatch pattern (the seed-era `scope`'s namespace).
    pub id_glob: Option<String>,
    pub limit: usize,
    pub offset: usize,
    pub sort_by: SortBy,
    /// A query per field, each of which must match (`{"category": "core"}`), in the order given.
    pub fields: Vec<(String, String)>,
    /// Exact-value filters on the result's fields or its metadata (the reference's
    /// `FilterMatcher`: lists, `!x`, version comparisons `>=1.2`, `date_from`/`date_to`).
    pub filters: Vec<(String, Json)>,
    /// How many edits a term may be off a word (0: off).
    pub fuzzy: usize,
    /// Every term within this many words of the first (`None`: off).
    pub proximity: Option<usize>,
}

impl SearchRequest {
    /// A search of `kind` for `query` in the project, with the reference's defaults.
    pub fn new(kind: ItemKind, query: &str) -> SearchRequest {
        SearchRequest {
            kind,
            query: query.to_owned(),
            source: Source::Project,
            id_glob: None,
            limit: DEFAULT_LIMIT,
            offset: 0,
            sort_by: SortBy::Score,
            fields: Vec::new(),
            filters: Vec::new(),
            fuzzy: 0,
            proximity: None,
        }
    }
}

/// Why a search cannot run: a query that does not parse, or a field no item has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// `field`: `None` for the query itself, else the `fields` entry whose query broke.
    Query {
        field: Option<String>,
        error: QueryError,
    },
    UnknownField(String),
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::Query { field: None, error } => write!(f, "Invalid query: {error}"),
            SearchError::Query {
                field: Some(name),
                error,
            } => write!(f, "Invalid query for field `{name}`: {error}"),
            SearchError::UnknownField(name) => write!(
                f,
                "Unknown field `{name}` in `fields`; the fields are {}",
                FieldRef::NAMES.join(", ")
            ),
        }
    }
}

/// An item's searchable fields as written: what a result shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ItemFields {
    pub name: String,
    pub title: String,
    pub description: String,
    pub category: String,
    /// The first [`PREVIEW_CHARS`] characters: of the file without its signature line (tools,
    /// directives), of the body (knowledge).
    pub preview: String,
    /// The rest of what the item declares (version, tool type, executor, a knowledge entry's
    /// frontmatter keys, a directive's `metadata/*`).
    pub metadata: Map<String, Json>,
}

/// One result.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    pub file: SourceFile,
    pub kind: ItemKind,
    pub id: String,
    pub space: SpaceKind,
    pub path: PathBuf,
    /// 0–1, four decimals.
    pub score: f64,
    pub fields: ItemFields,
}

/// A page of results and how many matched in all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchAnswer {
    pub total: usize,
    pub hits: Vec<SearchHit>,
}

// ---- what a query reads of an item ------------------------------------------------------------

/// The fields a query reads, lowercased, joined by spaces in weight order (title, name,
/// description, category, content; empty ones left out, as the reference joins them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchDoc {
    hay: Box<str>,
    /// The byte range of each field of [`DEFAULT_WEIGHTS`] in `hay`.
    spans: [(u32, u32); 5],
}

impl SearchDoc {
    fn of(f: &ItemFields) -> SearchDoc {
        let parts = [&f.title, &f.name, &f.description, &f.category, &f.preview];
        let mut hay = String::new();
        let mut spans = [(0u32, 0u32); 5];
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            if !hay.is_empty() {
                hay.push(' ');
            }
            let start = hay.len();
            hay.push_str(&part.to_lowercase());
            spans[i] = (to_u32(start), to_u32(hay.len()));
        }
        SearchDoc {
            hay: hay.into_boxed_str(),
            spans,
        }
    }

    /// Every field, lowercased, as one text.
    pub fn text(&self) -> &str {
        &self.hay
    }

    /// One field of [`DEFAULT_WEIGHTS`] by its index, lowercased.
    fn field(&self, i: usize) -> &str {
        let (s, e) = self.spans[i];
        &self.hay[s as usize..e as usize]
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// What a query reads of an item file (`None`: not an item, or no text).
#[salsa::tracked]
pub fn search_doc(db: &dyn Db, file: SourceFile) -> Option<Arc<SearchDoc>> {
    item_fields(db, file)
        .as_ref()
        .map(|f| Arc::new(SearchDoc::of(f)))
}

/// The file name without folders and extension.
fn stem(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

/// The first [`PREVIEW_CHARS`] characters of `text`.
fn preview(text: &str) -> String {
    text.chars().take(PREVIEW_CHARS).collect()
}

/// The text without its signature line (and that line's break).
fn unsigned_text<'t>(db: &dyn Db, file: SourceFile, text: &'t str) -> Cow<'t, str> {
    let Some(span) = crate::integrity::signature_line(db, file).span() else {
        return Cow::Borrowed(text);
    };
    let (start, mut end) = (span.start as usize, (span.end as usize).min(text.len()));
    let rest = &text.as_bytes()[end..];
    if rest.starts_with(b"\r\n") {
        end += 2;
    } else if rest.starts_with(b"\n") || rest.starts_with(b"\r") {
        end += 1;
    }
    match (text.get(..start), text.get(end..)) {
        (Some(a), Some(b)) => Cow::Owned(format!("{a}{b}")),
        _ => Cow::Borrowed(text),
    }
}

fn json_str(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Null => None,
        other => Some(other.to_string()),
    }
}

/// An item file's fields as written (`None`: not an item, or no text).
pub fn item_fields(db: &dyn Db, file: SourceFile) -> Option<ItemFields> {
    let rel = file.rel(db);
    let kind = ItemKind::of_rel(rel)?;
    let text = file.contents(db).text()?;
    let stem = stem(rel).to_owned();
    let mut f = ItemFields::default();
    match kind {
        ItemKind::Tool => {
            let meta = crate::resolve::metadata(db, file);
            let str_of = |v: Option<&Spanned<Value>>| {
                v.and_then(|v| v.value.as_str()).unwrap_or("").to_owned()
            };
            f.description = str_of(meta.tool_description());
            f.category = str_of(meta.category());
            for (key, v) in [
                ("version", meta.version()),
                ("category", meta.category()),
                ("tool_type", meta.tool_type()),
                ("executor_id", meta.executor_id()),
            ] {
                if let Some(v) = v {
                    f.metadata.insert(key.to_owned(), v.value.to_json());
                }
            }
            f.name = stem;
            f.preview = preview(&unsigned_text(db, file, &text));
        }
        ItemKind::Directive => {
            f.name = stem;
            if let Some(Ok(d)) = crate::resolve::docs::directive_doc(db, file) {
                if let Some(name) = d.name.as_ref().filter(|n| !n.value.is_empty()) {
                    f.name = name.value.clone();
                }
                f.description = d.description.clone().unwrap_or_default();
                f.category = d.category.clone().unwrap_or_default();
                if let Some(v) = &d.version {
                    f.metadata
                        .insert("version".to_owned(), Json::String(v.value.clone()));
                }
                if let Some(c) = &d.category {
                    f.metadata
                        .insert("category".to_owned(), Json::String(c.clone()));
                }
                for (k, v) in &d.metadata {
                    f.metadata.insert(k.clone(), Json::String(v.clone()));
                }
            }
            f.preview = preview(&unsigned_text(db, file, &text));
        }
        ItemKind::Knowledge => {
            f.name = stem;
            match crate::resolve::docs::knowledge_doc(db, file) {
                Some(Ok(k)) => {
                    let get = |key: &str| k.metadata.get(key).and_then(json_str);
                    if let Some(name) = get("name").filter(|n| !n.is_empty()) {
                        f.name = name;
                    }
                    f.title = get("title").unwrap_or_default();
                    f.description = get("description").unwrap_or_default();
                    f.category = get("category").unwrap_or_default();
                    for (key, v) in &k.metadata {
                        if !matches!(key.as_str(), "name" | "title" | "description") {
                            f.metadata.insert(key.clone(), v.clone());
                        }
                    }
                    f.preview = preview(&k.body);
                }
                _ => f.preview = preview(&unsigned_text(db, file, &text)),
            }
        }
    }
    if f.title.is_empty() {
        f.title = f.name.clone();
    }
    Some(f)
}

/// The field weights of an item kind: the `search_fields` of its extractor (the first YAML
/// extractor for the kind that declares them: project, user, then system), else
/// [`DEFAULT_WEIGHTS`].
#[salsa::tracked(returns(ref))]
pub fn search_weights(db: &dyn Db, key: KindKey) -> Vec<(String, f64)> {
    let wanted = key.kind(db).name();
    for root in db.workspace().roots(db) {
        for (rel, file) in root.entries_under(db, EXTRACTORS_DIR) {
            if rel.ends_with(".py")
                || crate::resolve::extractor::extractor_item_type(rel) != Some(wanted)
            {
                continue;
            }
            let Some(fields) = crate::resolve::extractor::extractor_yaml(db, file)
                .as_ref()
                .and_then(|doc| doc.get("search_fields"))
                .and_then(|f| f.as_mapping())
            else {
                continue;
            };
            let weights: Vec<(String, f64)> = fields
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.as_f64()?)))
                .filter(|(_, w)| w.is_finite() && *w >= 0.0)
                .collect();
            if !weights.is_empty() {
                return weights;
            }
        }
    }
    DEFAULT_WEIGHTS
        .iter()
        .map(|(k, w)| ((*k).to_owned(), *w))
        .collect()
}

// ---- the items of a kind ----------------------------------------------------------------------

/// One item of a space and what a query reads of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedItem {
    pub file: SourceFile,
    pub kind: ItemKind,
    /// The file's path relative to `.ai/` (the input's own), and where the id ends in it.
    rel: Arc<str>,
    id_end: u32,
    doc: Arc<SearchDoc>,
}

impl IndexedItem {
    /// The item id: the path below the kind's folder, without the extension.
    pub fn id(&self) -> &str {
        &self.rel[self.kind.dir().len()..self.id_end as usize]
    }
}

/// The item id of the file at `rel` and its kind (`None`: not an item). Tools need a tool
/// extension; file names starting with `_` (`__init__.py`) are not items, as in the reference.
fn item_id<'r>(rel: &'r str, cfg: &crate::resolve::ExtractorConfig) -> Option<(ItemKind, &'r str)> {
    let name_start = memchr::memrchr(b'/', rel.as_bytes()).map_or(0, |i| i + 1);
    if rel.as_bytes().get(name_start) == Some(&b'_') {
        return None;
    }
    match Place::of(rel) {
        Place::Tool | Place::Extractor => {
            let (id, ext) = crate::resolve::split_tool_rel(rel)?;
            cfg.has_extension(ext).then_some((ItemKind::Tool, id))
        }
        place @ (Place::Directive | Place::Knowledge) => {
            let kind = if place == Place::Directive {
                ItemKind::Directive
            } else {
                ItemKind::Knowledge
            };
            let id = rel.strip_prefix(kind.dir())?.strip_suffix(".md")?;
            (!id.is_empty()).then_some((kind, id))
        }
        _ => None,
    }
}

/// An item file found in a space, before its search document is read.
#[derive(Clone, Debug)]
pub struct ItemFile {
    /// The index of its space among the workspace's roots.
    space: usize,
    pub file: SourceFile,
    kind: ItemKind,
    rel: Arc<str>,
    id_end: u32,
}

/// Every item of every space with its search document: what a search scans, kept by a
/// long-lived caller between searches and brought up to date with the files a change touched
/// ([`SearchIndex::refresh`]), so a warm search reads no query per item and an edit costs the
/// edited file's document, not a check of every file's memo.
#[derive(Clone, Debug, Default)]
pub struct SearchIndex {
    spaces: Vec<IndexedSpace>,
}

#[derive(Clone, Debug)]
struct IndexedSpace {
    root: SpaceRoot,
    /// The space's `.ai` folder.
    ai: Arc<PathBuf>,
    kind: SpaceKind,
    /// Its place in search order (project 0, user 1, bundles after).
    rank: u32,
    /// By `rel`: each kind's items are one run (directives, knowledge, tools).
    items: Vec<IndexedItem>,
}

/// The item files below `prefix` (relative to `.ai/`) of `root` that are `prefix` itself or
/// lie in the folder it names (`None`: every item file).
fn root_item_files(
    db: &dyn Db,
    space: usize,
    root: SpaceRoot,
    prefix: Option<&str>,
    out: &mut Vec<ItemFile>,
) {
    let cfg = crate::resolve::extractor_config(db);
    let dirs = [ItemKind::Directive, ItemKind::Knowledge, ItemKind::Tool];
    let scan: Vec<&str> = match prefix {
        None => dirs.iter().map(|k| k.dir()).collect(),
        Some(p) => vec![p],
    };
    for under in scan {
        for (rel, file) in root.entries_under(db, under) {
            if let Some(p) = prefix
                && rel.len() > p.len()
                && rel.as_bytes()[p.len()] != b'/'
            {
                continue;
            }
            let Some((kind, id)) = item_id(rel, cfg) else {
                continue;
            };
            out.push(ItemFile {
                space,
                file,
                kind,
                id_end: to_u32(kind.dir().len() + id.len()),
                rel: Arc::clone(rel),
            });
        }
    }
}

impl SearchIndex {
    /// Every item file of every space, for [`SearchIndex::build`] (whose documents the caller
    /// may compute in parallel: `search_doc` of each).
    pub fn item_files(db: &dyn Db) -> Vec<ItemFile> {
        let mut out = Vec::new();
        for (i, root) in db.workspace().roots(db).iter().enumerate() {
            root_item_files(db, i, *root, None, &mut out);
        }
        out
    }

    /// The index of `files` (from [`SearchIndex::item_files`]) with their documents, in order
    /// (`None`: the file has no text; it is left out, as the reference skips what it cannot
    /// read).
    pub fn build(db: &dyn Db, files: Vec<ItemFile>, docs: Vec<Option<Arc<SearchDoc>>>) -> Self {
        let mut spaces: Vec<IndexedSpace> = db
            .workspace()
            .roots(db)
            .iter()
            .map(|root| {
                let space = root.space(db);
                IndexedSpace {
                    root: *root,
                    ai: Arc::clone(root.root(db)),
                    kind: space.kind(),
                    rank: space.search_rank(),
                    items: Vec::new(),
                }
            })
            .collect();
        for (f, doc) in files.into_iter().zip(docs) {
            let Some(doc) = doc else { continue };
            if let Some(space) = spaces.get_mut(f.space) {
                space.items.push(IndexedItem {
                    file: f.file,
                    kind: f.kind,
                    rel: f.rel,
                    id_end: f.id_end,
                    doc,
                });
            }
        }
        SearchIndex { spaces }
    }

    /// Bring the index up to date after a change that wrote or removed `paths` (files, or
    /// folders whose files all went): each one's items dropped and read again. `false` when the
    /// index must be built again instead: the spaces are not those it was built from, or an
    /// extractor changed (which files are tools, how their headers and signatures read).
    pub fn refresh(&mut self, db: &dyn Db, paths: &[PathBuf]) -> bool {
        /// More paths than this (a checkout) are cheaper read all again than patched in one by one.
        const PATCH_AT_MOST: usize = 512;
        if paths.len() > PATCH_AT_MOST {
            return false;
        }
        let roots = db.workspace().roots(db);
        if roots.len() != self.spaces.len()
            || roots.iter().zip(&self.spaces).any(|(r, s)| *r != s.root)
        {
            return false;
        }
        for path in paths {
            let Some((i, rel)) = self.spaces.iter().enumerate().find_map(|(i, s)| {
                let rest = path.strip_prefix(s.ai.as_path()).ok()?;
                let parts: Option<Vec<&str>> =
                    rest.components().map(|c| c.as_os_str().to_str()).collect();
                Some((i, parts?.join("/")))
            }) else {
                continue;
            };
            if rel.is_empty() || rel.starts_with(EXTRACTORS_DIR.trim_end_matches('/')) {
                return false;
            }
            let space = &mut self.spaces[i];
            // Out: the item at `rel`, and every item below it when it names a folder (one run of
            // the sorted list).
            if let Ok(k) = space
                .items
                .binary_search_by(|item| item.rel.as_ref().cmp(rel.as_str()))
            {
                space.items.remove(k);
            }
            let below = format!("{rel}/");
            let start = space
                .items
                .partition_point(|item| item.rel.as_ref() < below.as_str());
            let run = space.items[start..].partition_point(|item| item.rel.starts_with(&below));
            space.items.drain(start..start + run);
            // In: what the database now holds there.
            let mut found = Vec::new();
            root_item_files(db, i, space.root, Some(&rel), &mut found);
            for f in found {
                let Some(doc) = search_doc(db, f.file) else {
                    continue;
                };
                let at = space
                    .items
                    .partition_point(|item| item.rel.as_ref() < f.rel.as_ref());
                space.items.insert(
                    at,
                    IndexedItem {
                        file: f.file,
                        kind: f.kind,
                        rel: f.rel,
                        id_end: f.id_end,
                        doc: Arc::clone(doc),
                    },
                );
            }
        }
        true
    }

    /// How many items the index holds.
    pub fn len(&self) -> usize {
        self.spaces.iter().map(|s| s.items.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An item of the searched kind, in an admitted space.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'db> {
    pub item: &'db IndexedItem,
    /// The space's place in search order (project 0, user 1, bundles after).
    pub rank: u32,
}

impl Candidate<'_> {
    pub fn file(&self) -> SourceFile {
        self.item.file
    }
    pub fn id(&self) -> &str {
        self.item.id()
    }
}

/// The items a search looks at: every item of the kind in every admitted space, in search
/// order, those whose id the request's pattern passes.
pub fn candidates<'i>(index: &'i SearchIndex, req: &SearchRequest) -> Vec<Candidate<'i>> {
    let glob = req.id_glob.as_deref().map(IdGlob::new);
    let dir = req.kind.dir();
    let mut out = Vec::new();
    for space in &index.spaces {
        if !req.source.admits(space.kind) {
            continue;
        }
        let items = &space.items;
        let start = items.partition_point(|i| i.rel.as_ref() < dir);
        let len = items[start..].partition_point(|i| i.rel.starts_with(dir));
        for item in &items[start..start + len] {
            if glob.as_ref().is_some_and(|g| !g.matches(item.id())) {
                continue;
            }
            out.push(Candidate {
                item,
                rank: space.rank,
            });
        }
    }
    out
}

// ---- matching and scoring ---------------------------------------------------------------------

/// A field a `fields` query or a weight names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FieldRef {
    /// One of [`DEFAULT_WEIGHTS`], by index.
    Doc(usize),
    Id,
    Source,
    Type,
    /// A weight for a field no result has (its text is empty, as the reference reads it).
    Missing,
}

impl FieldRef {
    const NAMES: [&'static str; 9] = [
        "title",
        "name",
        "description",
        "category",
        "content",
        "preview",
        "id",
        "source",
        "type",
    ];

    fn of(name: &str) -> Option<FieldRef> {
        if let Some(i) = DEFAULT_WEIGHTS.iter().position(|(n, _)| *n == name) {
            return Some(FieldRef::Doc(i));
        }
        Some(match name {
            "preview" => FieldRef::Doc(4),
            "id" => FieldRef::Id,
            "source" => FieldRef::Source,
            "type" => FieldRef::Type,
            _ => return None,
        })
    }
}

/// A request compiled: its queries parsed, its weights read.
pub struct Compiled {
    query: Query,
    /// Whether the request names no query and no field queries (every item scores 1).
    unscored: bool,
    fields: Vec<(FieldRef, Query, f64)>,
    weights: Vec<(FieldRef, f64)>,
    total_weight: f64,
    proximity: Option<(Vec<String>, usize)>,
    kind: ItemKind,
}

impl Compiled {
    pub fn new(db: &dyn Db, req: &SearchRequest) -> Result<Compiled, SearchError> {
        Compiled::with_weights(req, search_weights(db, KindKey::new(db, req.kind)))
    }

    /// The request compiled with these field weights.
    fn with_weights(req: &SearchRequest, named: &[(String, f64)]) -> Result<Compiled, SearchError> {
        let query = Query::parse(&req.query, req.fuzzy)
            .map_err(|error| SearchError::Query { field: None, error })?;
        let weights: Vec<(FieldRef, f64)> = named
            .iter()
            .map(|(name, w)| (FieldRef::of(name).unwrap_or(FieldRef::Missing), *w))
            .collect();
        let weight_of = |name: &str| {
            named
                .iter()
                .find(|(n, _)| n == name)
                .map_or(1.0, |(_, w)| *w)
        };
        let mut fields = Vec::new();
        for (name, text) in &req.fields {
            let field =
                FieldRef::of(name).ok_or_else(|| SearchError::UnknownField(name.clone()))?;
            let q = Query::parse(text, req.fuzzy).map_err(|error| SearchError::Query {
                field: Some(name.clone()),
                error,
            })?;
            fields.push((field, q, weight_of(name)));
        }
        let proximity = req
            .proximity
            .map(|max| (query.terms(), max))
            .filter(|(terms, _)| terms.len() >= 2);
        Ok(Compiled {
            unscored: req.query.is_empty() && req.fields.is_empty(),
            total_weight: weights.iter().map(|(_, w)| w).sum(),
            query,
            fields,
            weights,
            proximity,
            kind: req.kind,
        })
    }

    fn value<'a>(&self, doc: &'a SearchDoc, c: &Candidate<'_>, f: FieldRef) -> Cow<'a, str> {
        match f {
            FieldRef::Doc(i) => Cow::Borrowed(doc.field(i)),
            FieldRef::Id => Cow::Owned(c.id().to_lowercase()),
            FieldRef::Source => Cow::Borrowed(space_name(c.rank)),
            FieldRef::Type => Cow::Borrowed(self.kind.name()),
            FieldRef::Missing => Cow::Borrowed(""),
        }
    }

    /// The candidate's score in ten-thousandths when it matches the query, every field query and
    /// the proximity condition (filters apart).
    pub fn score(&self, doc: &SearchDoc, c: &Candidate<'_>) -> Option<u32> {
        if !self.query.matches(doc.text()) {
            return None;
        }
        for (f, q, _) in &self.fields {
            if !q.matches(&self.value(doc, c, *f)) {
                return None;
            }
        }
        if let Some((terms, max)) = &self.proximity
            && !query::proximity_match(doc.text(), terms, *max)
        {
            return None;
        }
        if self.unscored {
            return Some(10_000);
        }
        let mut got = 0.0;
        for (f, w) in &self.weights {
            if self.query.matches(&self.value(doc, c, *f)) {
                got += w;
            }
        }
        let mut all = self.total_weight;
        for (_, _, w) in &self.fields {
            got += w;
            all += w;
        }
        let score = if all > 0.0 { (got / all).min(1.0) } else { 0.0 };
        Some((score * 10_000.0).round() as u32)
    }
}

/// The space a rank stands for (project 0, user 1, system after).
fn space_name(rank: u32) -> &'static str {
    match rank {
        0 => "project",
        1 => "user",
        _ => "system",
    }
}

/// The scores of `cands`, in order (`None`: no match).
pub fn score_all(compiled: &Compiled, cands: &[Candidate<'_>]) -> Vec<Option<u32>> {
    cands
        .iter()
        .map(|c| compiled.score(&c.item.doc, c))
        .collect()
}

// ---- filters ----------------------------------------------------------------------------------

/// A result's value for a filter: the result's own field, else (absent or empty) its metadata's.
fn filter_value(
    db: &dyn Db,
    c: &Candidate<'_>,
    kind: ItemKind,
    f: &ItemFields,
    name: &str,
) -> Option<Json> {
    let own = match name {
        "id" => Some(c.id().to_owned()),
        "name" => Some(f.name.clone()),
        "title" => Some(f.title.clone()),
        "description" => Some(f.description.clone()),
        "category" => Some(f.category.clone()),
        "preview" | "content" => Some(f.preview.clone()),
        "source" => Some(space_name(c.rank).to_owned()),
        "type" => Some(kind.name().to_owned()),
        "path" => Some(c.file().path(db).display().to_string()),
        "signed" => {
            return Some(Json::Bool(
                crate::integrity::signature_status(db, c.file()).passed(),
            ));
        }
        _ => None,
    };
    match own.filter(|s| !s.is_empty()) {
        Some(s) => Some(Json::String(s)),
        None => f.metadata.get(name).filter(|v| !v.is_null()).cloned(),
    }
}

/// `str()` of a value as the reference's filters compare it.
fn text_of(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A version as numbers, padded to three (`None`: a part is not a number).
fn version_parts(v: &str) -> Option<Vec<u64>> {
    let mut parts: Vec<u64> = v
        .trim()
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    while parts.len() < 3 {
        parts.push(0);
    }
    Some(parts)
}

/// The reference's version comparison: numbers part by part; what does not parse compares equal.
fn compare_versions(a: &str, b: &str) -> Ordering {
    match (version_parts(a), version_parts(b)) {
        (Some(a), Some(b)) => a.iter().zip(&b).map(|(x, y)| x.cmp(y)).find(|o| o.is_ne()),
        _ => None,
    }
    .unwrap_or(Ordering::Equal)
}

/// An ISO date as comparable numbers (year, month, day, hour, minute, second), the zone left
/// out (`None`: not a date).
fn date_parts(s: &str) -> Option<[u32; 6]> {
    let s = s.trim();
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<u32>().ok();
    let mut out = [num(0..4)?, num(5..7)?, num(8..10)?, 0, 0, 0];
    if s.len() > 10 {
        out[3] = num(11..13)?;
        out[4] = num(14..16)?;
        out[5] = num(17..19).unwrap_or(0);
    }
    Some(out)
}

/// The item's date: `created_at`, else `updated_at` (metadata).
fn date_of(f: &ItemFields) -> Option<String> {
    ["created_at", "updated_at"]
        .iter()
        .find_map(|k| f.metadata.get(*k).and_then(json_str))
        .filter(|s| !s.is_empty())
}

/// Whether a result passes one filter (the reference's `FilterMatcher._match_filter`).
fn passes(
    db: &dyn Db,
    c: &Candidate<'_>,
    kind: ItemKind,
    f: &ItemFields,
    name: &str,
    want: &Json,
) -> bool {
    if name == "date_from" || name == "date_to" {
        // No date, or one that does not read as a date: the reference lets it pass.
        let (Some(have), Some(bound)) = (
            date_of(f).as_deref().and_then(date_parts),
            want.as_str().and_then(date_parts),
        ) else {
            return true;
        };
        return if name == "date_from" {
            have >= bound
        } else {
            have <= bound
        };
    }
    let Some(have) = filter_value(db, c, kind, f, name) else {
        return false;
    };
    match want {
        Json::Array(options) => match &have {
            Json::Array(list) => options.iter().any(|o| list.contains(o)),
            single => options.contains(single),
        },
        Json::String(w) => {
            if let Some(not) = w.strip_prefix('!') {
                return match &have {
                    Json::Array(list) => !list.iter().any(|v| text_of(v) == not),
                    v => text_of(v) != not,
                };
            }
            for (op, pass) in [
                (">=", &[Ordering::Greater, Ordering::Equal][..]),
                ("<=", &[Ordering::Less, Ordering::Equal][..]),
                (">", &[Ordering::Greater][..]),
                ("<", &[Ordering::Less][..]),
            ] {
                if let Some(v) = w.strip_prefix(op) {
                    return pass.contains(&compare_versions(&text_of(&have), v));
                }
            }
            match &have {
                Json::Array(list) => list.iter().any(|v| text_of(v) == *w),
                v => text_of(v).to_lowercase() == w.to_lowercase(),
            }
        }
        other => have == *other,
    }
}

// ---- the answer -------------------------------------------------------------------------------

struct Matched<'db> {
    c: Candidate<'db>,
    score: u32,
    /// The fields as written, when filters or the date order needed them.
    fields: Option<Box<ItemFields>>,
    /// The date, for the date order.
    date: Option<Box<str>>,
}

/// Filter, sort and page the matched candidates (`scores` in the order of `cands`).
pub fn answer(
    db: &dyn Db,
    req: &SearchRequest,
    cands: &[Candidate<'_>],
    scores: &[Option<u32>],
) -> SearchAnswer {
    let mut matched: Vec<Matched<'_>> =
        Vec::with_capacity(scores.iter().filter(|s| s.is_some()).count());
    matched.extend(cands.iter().zip(scores).filter_map(|(c, s)| {
        s.map(|score| Matched {
            c: *c,
            score,
            fields: None,
            date: None,
        })
    }));
    let needs_fields = !req.filters.is_empty() || req.sort_by == SortBy::Date;
    if needs_fields {
        for m in &mut matched {
            m.fields = item_fields(db, m.c.file()).map(Box::new);
            m.date = m
                .fields
                .as_deref()
                .and_then(date_of)
                .map(String::into_boxed_str);
        }
    }
    if !req.filters.is_empty() {
        matched.retain(|m| {
            m.fields.as_ref().is_some_and(|f| {
                req.filters
                    .iter()
                    .all(|(name, want)| passes(db, &m.c, req.kind, f, name, want))
            })
        });
    }
    let total = matched.len();
    let end = req.offset.saturating_add(req.limit).min(total);
    if req.offset >= end {
        return SearchAnswer {
            total,
            hits: Vec::new(),
        };
    }
    let ties = |a: &Matched<'_>, b: &Matched<'_>| {
        a.c.rank
            .cmp(&b.c.rank)
            .then_with(|| a.c.id().cmp(b.c.id()))
            .then_with(|| a.c.item.rel.cmp(&b.c.item.rel))
    };
    let order = |a: &Matched<'_>, b: &Matched<'_>| match req.sort_by {
        SortBy::Score => b.score.cmp(&a.score).then_with(|| ties(a, b)),
        SortBy::Name => {
            a.c.item
                .doc
                .field(1)
                .cmp(b.c.item.doc.field(1))
                .then_with(|| ties(a, b))
        }
        SortBy::Date => match (&a.date, &b.date) {
            (Some(x), Some(y)) => y.cmp(x),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
        .then_with(|| ties(a, b)),
    };
    // Only the page needs sorting: the ones before its end are selected first.
    if end < total {
        matched.select_nth_unstable_by(end - 1, order);
        matched.truncate(end);
    }
    matched.sort_unstable_by(order);
    let hits = matched
        .into_iter()
        .skip(req.offset)
        .map(|m| {
            let c = m.c;
            SearchHit {
                file: c.file(),
                kind: req.kind,
                id: c.id().to_owned(),
                space: c.file().space(db).kind(),
                path: c.file().path(db).as_ref().clone(),
                score: f64::from(m.score) / 10_000.0,
                fields: m
                    .fields
                    .map(|f| *f)
                    .or_else(|| item_fields(db, c.file()))
                    .unwrap_or_default(),
            }
        })
        .collect();
    SearchAnswer { total, hits }
}

/// The seed-era `scope` (`tool`, `tool.rye.core.*`, `rye.search.directive.*`): the item kind
/// and the id pattern of its namespace (dots become `/`; `None`: every item of the kind).
pub fn parse_scope(scope: &str) -> Result<(ItemKind, Option<String>), String> {
    let rest = scope.strip_prefix("rye.search.").unwrap_or(scope);
    let (kind, ns) = match rest.split_once('.') {
        Some((k, ns)) => (k, Some(ns)),
        None => (rest, None),
    };
    let Some(kind) = ItemKind::from_name(kind) else {
        return Err(format!(
            "Invalid scope `{scope}`: it names no item type; write `<type>` or `<type>.<namespace>.*` (or `rye.search.<type>.*`) with a type of directive, tool, knowledge, for example `tool.rye.core.*`"
        ));
    };
    let glob = match ns {
        None | Some("*") => None,
        Some("") => {
            return Err(format!(
                "Invalid scope `{scope}`: the namespace after `{}.` is empty",
                kind.name()
            ));
        }
        Some(ns) => {
            let path = ns.replace('.', "/");
            // `rye.core.*` and `rye.core*` both mean everything under `rye/core`.
            Some(match path.strip_suffix("/*") {
                Some(prefix) => format!("{prefix}/*"),
                None => path,
            })
        }
    };
    Ok((kind, glob))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_name_a_kind_and_a_namespace() {
        assert_eq!(parse_scope("tool"), Ok((ItemKind::Tool, None)));
        assert_eq!(
            parse_scope("tool.rye.core.*"),
            Ok((ItemKind::Tool, Some("rye/core/*".to_owned())))
        );
        assert_eq!(
            parse_scope("rye.search.tool.rye.core.*"),
            Ok((ItemKind::Tool, Some("rye/core/*".to_owned())))
        );
        assert_eq!(
            parse_scope("rye.search.directive.*"),
            Ok((ItemKind::Directive, None))
        );
        assert_eq!(
            parse_scope("knowledge.acme.notes"),
            Ok((ItemKind::Knowledge, Some("acme/notes".to_owned())))
        );
        assert!(
            parse_scope("rye.search.*")
                .unwrap_err()
                .contains("names no item type")
        );
        assert!(parse_scope("prompt").is_err());
        assert!(parse_scope("tool.").is_err());
    }

    #[test]
    fn versions_compare_by_parts() {
        assert_eq!(compare_versions("1.10.0", "1.9"), Ordering::Greater);
        assert_eq!(compare_versions("1.0", "1.0.0"), Ordering::Equal);
        assert_eq!(compare_versions("x", "1.0.0"), Ordering::Equal);
        assert_eq!(
            date_parts("2026-02-18T00:00:00Z"),
            Some([2026, 2, 18, 0, 0, 0])
        );
        assert_eq!(date_parts("2026-02-18"), Some([2026, 2, 18, 0, 0, 0]));
        assert_eq!(date_parts("soon"), None);
    }

    #[test]
    fn a_document_joins_its_fields_in_weight_order() {
        let doc = SearchDoc::of(&ItemFields {
            name: "Greet".into(),
            title: "Greet".into(),
            description: String::new(),
            category: "Acme".into(),
            preview: "echo Hi".into(),
            metadata: Map::new(),
        });
        assert_eq!(doc.text(), "greet greet acme echo hi");
        assert_eq!(doc.field(0), "greet");
        assert_eq!(doc.field(2), "");
        assert_eq!(doc.field(3), "acme");
        assert_eq!(doc.field(4), "echo hi");
    }
}
