//! L3 lockfiles (§10.7): the `<tool_id>@<version>.lock.json` format (reader with the reference's
//! error texts, writer byte-compatible with Python's `json.dumps(data, indent=2)`), lookup in
//! `.ai/lockfiles/` by read precedence, the check that runs before chain building, building a
//! lockfile from the database, and the staleness verdict lint reports for one lockfile file.
//!
//! Decisions (cite these):
//! - A lockfile only *detects* change; it never pins which files a chain uses (§10.7).
//! - Read precedence is project → user → first system bundle, and the first *existing* file wins
//!   even when it cannot be loaded (the reference's `_resolve_read_path` then `load`, errors
//!   swallowed): a broken project lockfile hides a good user one and reads as "no lockfile".
//! - The reader is the reference's plus type checks it lacks: `root.{tool_id,version,integrity}`
//!   must be strings, `resolved_chain` a list of objects (the reference crashes later on these, at
//!   execution, with a Python `TypeError`/`AttributeError`). Any such problem is an
//!   `Invalid lockfile structure: …` load error, so execution ignores the file and lint shows it.
//! - Version of a root tool: its `version` value as Python's `str()` would print it; absent ⇒
//!   `"0.0.0"` unless its parser is YAML (a YAML mapping always carries the key, `None` when
//!   missing, §10.7), an explicit `None`/`null` ⇒ no version ⇒ lockfile logic skipped.
//! - Entries for primitives resolved by key without a file are written with `integrity: null`,
//!   so the check skips them (the reference skips entries without integrity).

use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde_json::{Map, Value as Json};

use crate::db::{Db, FileContents, SourceFile};
use crate::model::{SpaceKind, Span, Value};
use crate::parse::ParserKind;
use crate::resolve::{chain, extractor_config, metadata, resolve, resolve_root};

use super::content_hash;
use crate::model::SpaceRel;
use crate::pyrepr::py_truthy;

/// The directory (relative to a space's `.ai/`) lockfiles live in.
pub use crate::place::{LOCKFILE_SUFFIX, LOCKFILES_DIR, is_lockfile_rel};
/// `lockfile_version` written by ryechain (any JSON value is accepted on read).
pub const LOCKFILE_VERSION: i64 = 1;
/// The version of a tool whose parser is not YAML and that declares none (§10.7).
pub const DEFAULT_VERSION: &str = "0.0.0";

/// The fields the reference requires at the top level, in the order it checks them.
const REQUIRED: [&str; 4] = ["lockfile_version", "generated_at", "root", "resolved_chain"];

/// `root` of a lockfile: the tool it locks and the hash of its file (tool rule, §10.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockRoot {
    pub tool_id: String,
    pub version: String,
    pub integrity: String,
}

/// A lockfile (§10.7). Values the reference stores untyped stay JSON values, so a file written by
/// the reference reads and writes back unchanged (minus unknown top-level fields, as there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lockfile {
    pub lockfile_version: Json,
    pub generated_at: Json,
    pub root: LockRoot,
    /// One object per chain element: `{item_id, space, tool_type, executor_id, integrity}`.
    pub resolved_chain: Vec<Map<String, Json>>,
    pub registry: Json,
    pub verified_deps: Json,
}

/// Why a lockfile could not be loaded: the reference's `LockfileError` text, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockfileError {
    pub message: String,
    /// Byte span in the lockfile text (the JSON error position, the malformed value), if known.
    pub span: Option<Span>,
}

impl std::fmt::Display for LockfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// `<tool_id>@<version>.lock.json` (ids with `/` make sub-directories).
pub fn lockfile_name(tool_id: &str, version: &str) -> String {
    format!("{tool_id}@{version}{LOCKFILE_SUFFIX}")
}

/// The path of a lockfile relative to a space's `.ai/`, built from header text and so checked:
/// the version must be a valid version string (semver, as `invalid-version` asks) and the whole
/// path must stay inside the space (`SpaceRel`). `Err` says why there is no lockfile.
pub fn lockfile_rel(tool_id: &str, version: &str) -> Result<SpaceRel, String> {
    if let Err(e) = semver::Version::parse(version) {
        return Err(format!(
            "{tool_id} has no lockfile: its version `{version}` is not a valid version string ({e})"
        ));
    }
    SpaceRel::new(format!(
        "{LOCKFILES_DIR}{}",
        lockfile_name(tool_id, version)
    ))
    .map_err(|e| format!("{tool_id} has no lockfile: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Reading and writing

fn structure(message: impl std::fmt::Display, span: Option<Span>) -> LockfileError {
    LockfileError {
        message: format!("Invalid lockfile structure: {message}"),
        span,
    }
}

/// Byte offset of serde_json's (1-based line, 1-based byte column) error position.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Load a lockfile from its text with the reference's errors (§10.7): invalid JSON ⇒
/// `Invalid JSON in lockfile: …`; a missing top-level field ⇒ `Missing required field: <f>`;
/// a malformed `root` (or, here, `resolved_chain`) ⇒ `Invalid lockfile structure: …`. Extra
/// fields are ignored.
pub fn parse_lockfile(text: &str) -> Result<Lockfile, LockfileError> {
    let data: Json = serde_json::from_str(text).map_err(|e| LockfileError {
        message: format!("Invalid JSON in lockfile: {e}"),
        span: Some(Span::empty(offset_of(text, e.line(), e.column()))),
    })?;
    // The reference tests `field in data`; for a non-object top level that is never true.
    let empty = Map::new();
    let obj = data.as_object().unwrap_or(&empty);
    for field in REQUIRED {
        if !obj.contains_key(field) {
            return Err(LockfileError {
                message: format!("Missing required field: {field}"),
                span: None,
            });
        }
    }
    let span_at = |path: &[Seg<'_>]| value_span(text, path);
    let root = &obj["root"];
    let Some(root_obj) = root.as_object() else {
        return Err(structure(
            format!("root must be an object, not {}", json_type(root)),
            span_at(&[Seg::Key("root")]),
        ));
    };
    let field = |name: &'static str| -> Result<String, LockfileError> {
        match root_obj.get(name) {
            // Python's KeyError prints the key in quotes.
            None => Err(structure(format!("'{name}'"), span_at(&[Seg::Key("root")]))),
            Some(Json::String(s)) => Ok(s.clone()),
            Some(other) => Err(structure(
                format!("root.{name} must be a string, not {}", json_type(other)),
                span_at(&[Seg::Key("root"), Seg::Key(name)]),
            )),
        }
    };
    let root = LockRoot {
        tool_id: field("tool_id")?,
        version: field("version")?,
        integrity: field("integrity")?,
    };
    let chain_value = &obj["resolved_chain"];
    let Some(list) = chain_value.as_array() else {
        return Err(structure(
            format!(
                "resolved_chain must be a list, not {}",
                json_type(chain_value)
            ),
            span_at(&[Seg::Key("resolved_chain")]),
        ));
    };
    let mut resolved_chain = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let Some(entry) = entry.as_object() else {
            return Err(structure(
                format!(
                    "resolved_chain[{i}] must be an object, not {}",
                    json_type(entry)
                ),
                span_at(&[Seg::Key("resolved_chain"), Seg::Index(i)]),
            ));
        };
        resolved_chain.push(entry.clone());
    }
    Ok(Lockfile {
        lockfile_version: obj["lockfile_version"].clone(),
        generated_at: obj["generated_at"].clone(),
        root,
        resolved_chain,
        registry: obj.get("registry").cloned().unwrap_or(Json::Null),
        verified_deps: obj.get("verified_deps").cloned().unwrap_or(Json::Null),
    })
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

impl Lockfile {
    /// The JSON document in the reference's key order.
    pub fn to_json(&self) -> Json {
        let mut root = Map::new();
        root.insert("tool_id".into(), Json::from(self.root.tool_id.as_str()));
        root.insert("version".into(), Json::from(self.root.version.as_str()));
        root.insert("integrity".into(), Json::from(self.root.integrity.as_str()));
        let mut doc = Map::new();
        doc.insert("lockfile_version".into(), self.lockfile_version.clone());
        doc.insert("generated_at".into(), self.generated_at.clone());
        doc.insert("root".into(), Json::Object(root));
        doc.insert(
            "resolved_chain".into(),
            Json::Array(
                self.resolved_chain
                    .iter()
                    .cloned()
                    .map(Json::Object)
                    .collect(),
            ),
        );
        doc.insert("registry".into(), self.registry.clone());
        doc.insert("verified_deps".into(), self.verified_deps.clone());
        Json::Object(doc)
    }

    /// The file text, as Python's `json.dumps(data, indent=2)` writes it: 2-space indentation,
    /// `": "` between key and value, non-ASCII (and DEL) escaped as `\uXXXX`, no final newline.
    pub fn to_text(&self) -> String {
        let pretty = serde_json::to_string_pretty(&self.to_json())
            .unwrap_or_else(|_| unreachable!("a JSON value always serializes"));
        super::canonical::ascii_escape(&pretty)
    }

    /// The file name this lockfile must have (`<tool_id>@<version>.lock.json`).
    pub fn file_name(&self) -> String {
        lockfile_name(&self.root.tool_id, &self.root.version)
    }
}

// ---------------------------------------------------------------------------------------------
// Spans of values in JSON text (serde_json keeps none)

/// One step of a path into a JSON document.
#[derive(Clone, Copy, Debug)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// The byte span of the value at `path` in valid JSON text; the last duplicate key wins, as in
/// serde_json and Python.
fn value_span(text: &str, path: &[Seg<'_>]) -> Option<Span> {
    let mut sc = Scanner {
        s: text.as_bytes(),
        pos: 0,
        text,
    };
    sc.ws();
    sc.find(path)
}

struct Scanner<'t> {
    s: &'t [u8],
    pos: usize,
    text: &'t str,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }
    /// Skip a string starting at `"`; returns its span including the quotes.
    fn string(&mut self) -> (usize, usize) {
        let start = self.pos;
        self.pos += 1;
        while let Some(b) = self.peek() {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'"' => break,
                _ => {}
            }
        }
        (start, self.pos.min(self.s.len()))
    }
    /// Consume the value at `pos`; return the span of the value `path` leads to inside it.
    fn find(&mut self, path: &[Seg<'_>]) -> Option<Span> {
        let start = self.pos;
        let mut found = None;
        match self.peek()? {
            b'{' => {
                self.pos += 1;
                loop {
                    self.ws();
                    match self.peek()? {
                        b'}' => {
                            self.pos += 1;
                            break;
                        }
                        b',' => {
                            self.pos += 1;
                            continue;
                        }
                        b'"' => {}
                        _ => return None,
                    }
                    let (ks, ke) = self.string();
                    let key: Option<String> = serde_json::from_str(&self.text[ks..ke]).ok();
                    self.ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.pos += 1;
                    self.ws();
                    match path.first() {
                        Some(Seg::Key(k)) if key.as_deref() == Some(*k) => {
                            found = self.find(&path[1..]);
                        }
                        _ => {
                            self.find(&[]);
                        }
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                let mut i = 0;
                loop {
                    self.ws();
                    match self.peek()? {
                        b']' => {
                            self.pos += 1;
                            break;
                        }
                        b',' => {
                            self.pos += 1;
                            i += 1;
                            continue;
                        }
                        _ => {}
                    }
                    match path.first() {
                        Some(Seg::Index(n)) if *n == i => found = self.find(&path[1..]),
                        _ => {
                            self.find(&[]);
                        }
                    }
                }
            }
            b'"' => {
                self.string();
            }
            _ => {
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.pos += 1;
                }
            }
        }
        if path.is_empty() {
            Some(Span::new(start, self.pos))
        } else {
            found
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The database side

/// The version a tool is locked under (§10.7): its `version` as Python's `str()` prints it;
/// absent ⇒ `"0.0.0"` unless the file's parser is YAML; `None`/`null` (or a list/map) ⇒ `None`
/// (lockfile logic skipped).
pub fn tool_version(db: &dyn Db, file: SourceFile) -> Option<String> {
    let meta = metadata(db, file);
    match meta.version() {
        Some(v) => py_str(&v.value),
        None => {
            let rel = file.rel(db);
            let ext = super::extension_of(rel);
            let is_yaml = extractor_config(db).parser_for(ext) == Some(ParserKind::Yaml);
            (!is_yaml).then(|| DEFAULT_VERSION.to_owned())
        }
    }
}

/// Python's `str()` of a scalar metadata value (`None` for null, lists and maps).
fn py_str(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_owned()),
        Value::Float(f) if f.0.is_finite() && f.0.fract() == 0.0 && f.0.abs() < 1e16 => {
            Some(format!("{:.1}", f.0))
        }
        Value::Float(f) => Some(f.0.to_string()),
        Value::Null | Value::List(_) | Value::Map(_) => None,
    }
}

/// Lockfile files by path relative to `.ai/`, each name mapped to the file that wins under read
/// precedence: project → user → the first system bundle (§10.7).
#[salsa::tracked(returns(ref))]
pub fn lockfile_index(db: &dyn Db) -> FxHashMap<Arc<str>, SourceFile> {
    let mut index = FxHashMap::default();
    let mut seen_system = false;
    for &root in db.workspace().roots(db) {
        if root.space(db).kind() == SpaceKind::System {
            if seen_system {
                continue;
            }
            seen_system = true;
        }
        for (rel, file) in root.entries_under(db, LOCKFILES_DIR) {
            if is_lockfile_rel(rel) {
                index.entry(rel.clone()).or_insert(file);
            }
        }
    }
    index
}

/// The lockfile file read for (tool id, version), if any exists.
pub fn find_lockfile(db: &dyn Db, tool_id: &str, version: &str) -> Option<SourceFile> {
    let rel = lockfile_rel(tool_id, version).ok()?;
    lockfile_index(db).get(rel.as_str()).copied()
}

/// The loaded lockfile of a file, or the reference's load error.
#[salsa::tracked(returns(ref))]
pub fn lockfile(db: &dyn Db, file: SourceFile) -> Result<Lockfile, LockfileError> {
    match file.contents(db) {
        FileContents::Text(text) => parse_lockfile(&text.as_str()),
        other => Err(LockfileError {
            message: format!(
                "Lockfile cannot be read: {}",
                other.problem().unwrap_or_default()
            ),
            span: None,
        }),
    }
}

/// The outcome of the lockfile check that runs before chain building (§10.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockCheck {
    /// No usable lockfile: the root is not found, has no version, no lockfile exists, or the
    /// lockfile read first cannot be loaded (errors swallowed, as in the reference).
    NoLockfile,
    /// A lockfile exists and every hash it records still matches.
    Ok { file: SourceFile },
    /// A recorded hash no longer matches, or a chain element is gone: execution fails with
    /// `message` (the reference's text) before any chain is built.
    Failed { file: SourceFile, message: String },
}

/// Where a check failure points in the lockfile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FailAt {
    RootIntegrity,
    EntryItem(usize),
    EntryIntegrity(usize),
}

/// Python's `str()` of a JSON value in a message.
fn json_str(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The reference's checks of a loaded lockfile against the current files: the root's hash, then
/// each `resolved_chain` entry with a truthy `item_id` and `integrity`, re-resolved by
/// (item_id, its stored space as the current space, default `project`).
fn verify(
    db: &dyn Db,
    item_id: &str,
    root_file: SourceFile,
    lock: &Lockfile,
) -> Result<(), (FailAt, String)> {
    let hash_is = |file: SourceFile, expected: &str| {
        content_hash(db, file)
            .as_ref()
            .is_ok_and(|h| h.as_ref() == expected)
    };
    if !hash_is(root_file, &lock.root.integrity) {
        return Err((
            FailAt::RootIntegrity,
            format!(
                "Lockfile integrity mismatch for {item_id}. Re-sign and delete stale lockfile."
            ),
        ));
    }
    for (i, entry) in lock.resolved_chain.iter().enumerate() {
        let (Some(id), Some(integrity)) = (entry.get("item_id"), entry.get("integrity")) else {
            continue;
        };
        if !py_truthy(id) || !py_truthy(integrity) {
            continue;
        }
        let space = entry
            .get("space")
            .map_or_else(|| "project".to_owned(), json_str);
        // The reference's `_resolve_tool_path`: `system…` ⇒ bundles only, `user` ⇒ user then
        // bundles, anything else ⇒ project, user, bundles.
        let from = if space.starts_with("system") {
            SpaceKind::System
        } else if space == "user" {
            SpaceKind::User
        } else {
            SpaceKind::Project
        };
        let id_text = json_str(id);
        let found = id
            .as_str()
            .and_then(|id| resolve(db, id, from).found.as_ref());
        let Some(found) = found else {
            return Err((
                FailAt::EntryItem(i),
                format!(
                    "Lockfile chain element not found: {id_text} (space: {space}). Delete stale lockfile."
                ),
            ));
        };
        if !integrity.as_str().is_some_and(|h| hash_is(found.file, h)) {
            return Err((
                FailAt::EntryIntegrity(i),
                format!(
                    "Lockfile integrity mismatch for chain element {id_text}. Re-sign and delete stale lockfile."
                ),
            ));
        }
    }
    Ok(())
}

/// The lockfile check of the execution path (§10.7), run before chain building: resolve `item_id`
/// from the project space, take its version, read `<id>@<version>.lock.json` by precedence, and
/// compare every hash it records with the current files.
pub fn check_lockfile(db: &dyn Db, item_id: &str) -> LockCheck {
    let Some(root) = &resolve_root(db, item_id).found else {
        return LockCheck::NoLockfile;
    };
    let Some(version) = tool_version(db, root.file) else {
        return LockCheck::NoLockfile;
    };
    let Some(file) = find_lockfile(db, item_id, &version) else {
        return LockCheck::NoLockfile;
    };
    let Ok(lock) = lockfile(db, file) else {
        return LockCheck::NoLockfile;
    };
    match verify(db, item_id, root.file, lock) {
        Ok(()) => LockCheck::Ok { file },
        Err((_, message)) => LockCheck::Failed { file, message },
    }
}

/// A new lockfile for `item_id` (resolved from the project space) as the reference creates one
/// after a successful run: `lockfile_version` 1, `root` with the tool's version and hash, one
/// `resolved_chain` entry per chain element. Refused when the tool is not found, has no version,
/// or its chain cannot run (the reference's chain-building texts). §4 validation is the caller's.
pub fn build_lockfile(db: &dyn Db, item_id: &str, generated_at: &str) -> Result<Lockfile, String> {
    let Some(root) = &resolve_root(db, item_id).found else {
        return Err(crate::message::tool_not_found(item_id));
    };
    let Some(version) = tool_version(db, root.file) else {
        return Err(format!(
            "{item_id} declares no version; a lockfile is named `<tool_id>@<version>.lock.json`, so add `version:` to it"
        ));
    };
    let ch = chain(db, root.file);
    if let Some(err) = ch.run_error(item_id) {
        return Err(err);
    }
    let hash_of = |file: SourceFile| {
        content_hash(db, file)
            .as_ref()
            .map(|h| h.to_string())
            .map_err(|e| format!("{}: {e}", file.path(db).display()))
    };
    let integrity = hash_of(root.file)?;
    let mut resolved_chain = Vec::with_capacity(ch.elements.len());
    for e in &ch.elements {
        let meta = e.file.map(|f| metadata(db, f).clone());
        let tool_type = meta
            .as_deref()
            .and_then(|m| m.tool_type())
            .map(|v| v.value.to_json())
            .filter(|v| !v.is_null())
            .or_else(|| e.primitive.then(|| Json::from("primitive")))
            .unwrap_or(Json::Null);
        let executor_id = meta
            .as_deref()
            .and_then(|m| m.executor_id())
            .map_or(Json::Null, |v| v.value.to_json());
        let integrity = match e.file {
            Some(f) => Json::from(hash_of(f)?),
            None => Json::Null,
        };
        let mut entry = Map::new();
        entry.insert("item_id".into(), Json::from(e.item_id.as_str()));
        entry.insert("space".into(), Json::from(e.space.label()));
        entry.insert("tool_type".into(), tool_type);
        entry.insert("executor_id".into(), executor_id);
        entry.insert("integrity".into(), integrity);
        resolved_chain.push(entry);
    }
    Ok(Lockfile {
        lockfile_version: Json::from(LOCKFILE_VERSION),
        generated_at: Json::from(generated_at),
        root: LockRoot {
            tool_id: item_id.to_owned(),
            version,
            integrity,
        },
        resolved_chain,
        registry: Json::Null,
        verified_deps: Json::Null,
    })
}

/// Why a lockfile file is stale, for lint (`stale-lockfile`): it cannot be loaded (the loader's
/// error), its name is not `root.tool_id@root.version.lock.json`, its root tool is gone, or the
/// execution check fails (the reference's texts). `None` for a sound lockfile and for files that
/// are not lockfiles. The span points at the offending `integrity` (or `item_id`, `tool_id`)
/// value when there is one.
pub fn stale_lockfile(db: &dyn Db, file: SourceFile) -> Option<(Option<Span>, String)> {
    let rel = file.rel(db);
    if !is_lockfile_rel(rel) {
        return None;
    }
    let lock = match lockfile(db, file) {
        Ok(lock) => lock,
        Err(e) => return Some((e.span, e.message.clone())),
    };
    let text = file.contents(db).text().unwrap_or_default();
    let at = |path: &[Seg<'_>]| value_span(&text, path);
    let expected = match lockfile_rel(&lock.root.tool_id, &lock.root.version) {
        Ok(expected) => expected,
        Err(e) => {
            return Some((
                at(&[Seg::Key("root"), Seg::Key("version")]),
                format!("{e}; this lockfile is never read. Delete stale lockfile."),
            ));
        }
    };
    if rel.as_ref() != expected.as_str() {
        return Some((
            at(&[Seg::Key("root"), Seg::Key("tool_id")]),
            format!(
                "Lockfile name does not match its root: it locks {}@{}, so it must be named `{}`; it is never read as `{}`",
                lock.root.tool_id,
                lock.root.version,
                lock.file_name(),
                &rel[LOCKFILES_DIR.len()..]
            ),
        ));
    }
    let item_id = lock.root.tool_id.as_str();
    let Some(root) = &resolve_root(db, item_id).found else {
        return Some((
            at(&[Seg::Key("root"), Seg::Key("tool_id")]),
            format!(
                "Lockfile root tool not found: {item_id} (space: project). Delete stale lockfile."
            ),
        ));
    };
    let (fail, message) = verify(db, item_id, root.file, lock).err()?;
    let span = match fail {
        FailAt::RootIntegrity => at(&[Seg::Key("root"), Seg::Key("integrity")]),
        FailAt::EntryItem(i) => at(&[
            Seg::Key("resolved_chain"),
            Seg::Index(i),
            Seg::Key("item_id"),
        ]),
        FailAt::EntryIntegrity(i) => at(&[
            Seg::Key("resolved_chain"),
            Seg::Index(i),
            Seg::Key("integrity"),
        ]),
    };
    Some((span, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Lockfile {
        let mut entry = Map::new();
        entry.insert("item_id".into(), Json::from("acme/x"));
        entry.insert("space".into(), Json::from("project"));
        entry.insert("tool_type".into(), Json::from("python"));
        entry.insert(
            "executor_id".into(),
            Json::from("rye/core/runtimes/python/script"),
        );
        entry.insert("integrity".into(), Json::from("ab".repeat(32)));
        Lockfile {
            lockfile_version: Json::from(LOCKFILE_VERSION),
            generated_at: Json::from("2023-11-14T22:13:20.000042+00:00"),
            root: LockRoot {
                tool_id: "acme/x".into(),
                version: "1.0.0".into(),
                integrity: "ab".repeat(32),
            },
            resolved_chain: vec![entry],
            registry: Json::Null,
            verified_deps: Json::Null,
        }
    }

    fn err(text: &str) -> String {
        parse_lockfile(text).unwrap_err().message
    }

    #[test]
    fn names() {
        assert_eq!(lockfile_name("acme/x", "1.0.0"), "acme/x@1.0.0.lock.json");
        assert_eq!(
            lockfile_rel("x", "0.0.0").unwrap().as_str(),
            "lockfiles/x@0.0.0.lock.json"
        );
        // §10.7 + DESIGN.md: a version is header text; it never moves the lockfile.
        let e = lockfile_rel("x", "1.0.0/../../../../tmp/x").unwrap_err();
        assert!(e.contains("is not a valid version string"), "{e}");
        assert!(lockfile_rel("x", "1.0").is_err());
        assert!(lockfile_rel("../x", "1.0.0").is_err());
        assert!(is_lockfile_rel("lockfiles/acme/x@1.0.0.lock.json"));
        assert!(!is_lockfile_rel("lockfiles/README.md"));
        assert!(!is_lockfile_rel("lockfiles/.lock.json"));
        assert!(!is_lockfile_rel("tools/x.lock.json"));
    }

    #[test]
    fn written_like_python_json_dumps_indent_2() {
        let text = sample().to_text();
        let expected = format!(
            r#"{{
  "lockfile_version": 1,
  "generated_at": "2023-11-14T22:13:20.000042+00:00",
  "root": {{
    "tool_id": "acme/x",
    "version": "1.0.0",
    "integrity": "{h}"
  }},
  "resolved_chain": [
    {{
      "item_id": "acme/x",
      "space": "project",
      "tool_type": "python",
      "executor_id": "rye/core/runtimes/python/script",
      "integrity": "{h}"
    }}
  ],
  "registry": null,
  "verified_deps": null
}}"#,
            h = "ab".repeat(32)
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn round_trip() {
        let lock = sample();
        assert_eq!(parse_lockfile(&lock.to_text()), Ok(lock.clone()));
        // Empty chain too.
        let mut empty = lock;
        empty.resolved_chain.clear();
        assert!(empty.to_text().contains("\"resolved_chain\": [],"));
        assert_eq!(parse_lockfile(&empty.to_text()), Ok(empty));
    }

    #[test]
    fn non_ascii_is_escaped_as_python_does() {
        let mut lock = sample();
        lock.root.version = "1.0.0-é😀\u{7f}".into();
        let text = lock.to_text();
        assert!(text.is_ascii());
        assert!(text.contains(r#""version": "1.0.0-\u00e9\ud83d\ude00\u007f""#));
        assert_eq!(
            parse_lockfile(&text).unwrap().root.version,
            "1.0.0-é😀\u{7f}"
        );
    }

    #[test]
    fn any_lockfile_version_and_extra_fields_accepted() {
        let text = r#"{"lockfile_version": "1.0", "generated_at": "t", "extra": [1],
            "root": {"tool_id": "x", "version": "1.0.0", "integrity": "h", "more": 1},
            "resolved_chain": []}"#;
        let lock = parse_lockfile(text).unwrap();
        assert_eq!(lock.lockfile_version, Json::from("1.0"));
        assert_eq!(lock.registry, Json::Null);
        assert_eq!(lock.verified_deps, Json::Null);
        assert!(!lock.to_text().contains("extra"));
    }

    #[test]
    fn invalid_json() {
        let e = parse_lockfile("{\n  \"lockfile_version\": 1,\n  oops\n}").unwrap_err();
        assert!(
            e.message.starts_with("Invalid JSON in lockfile: "),
            "{}",
            e.message
        );
        // The span is where serde_json stopped: the `o` of `oops` (line 3, column 3).
        assert_eq!(e.span, Some(Span::empty(29)));
        assert!(err("").starts_with("Invalid JSON in lockfile: "));
    }

    #[test]
    fn missing_required_fields_in_order() {
        assert_eq!(err("{}"), "Missing required field: lockfile_version");
        assert_eq!(
            err(r#"{"lockfile_version": 1}"#),
            "Missing required field: generated_at"
        );
        assert_eq!(
            err(r#"{"lockfile_version": 1, "generated_at": "t"}"#),
            "Missing required field: root"
        );
        assert_eq!(
            err(r#"{"lockfile_version": 1, "generated_at": "t", "root": {}}"#),
            "Missing required field: resolved_chain"
        );
        assert_eq!(err("[1, 2]"), "Missing required field: lockfile_version");
    }

    #[test]
    fn malformed_root_and_chain() {
        let doc = |root: &str, chain: &str| {
            format!(
                r#"{{"lockfile_version": 1, "generated_at": "t", "root": {root}, "resolved_chain": {chain}}}"#
            )
        };
        assert_eq!(
            err(&doc(r#"{"tool_id": "x", "version": "1"}"#, "[]")),
            "Invalid lockfile structure: 'integrity'"
        );
        assert_eq!(
            err(&doc("[]", "[]")),
            "Invalid lockfile structure: root must be an object, not a list"
        );
        assert_eq!(
            err(&doc(
                r#"{"tool_id": 3, "version": "1", "integrity": "h"}"#,
                "[]"
            )),
            "Invalid lockfile structure: root.tool_id must be a string, not a number"
        );
        let ok_root = r#"{"tool_id": "x", "version": "1", "integrity": "h"}"#;
        assert_eq!(
            err(&doc(ok_root, "{}")),
            "Invalid lockfile structure: resolved_chain must be a list, not an object"
        );
        let text = doc(ok_root, r#"[{}, "x"]"#);
        let e = parse_lockfile(&text).unwrap_err();
        assert_eq!(
            e.message,
            "Invalid lockfile structure: resolved_chain[1] must be an object, not a string"
        );
        assert_eq!(&text[e.span.unwrap().range()], "\"x\"");
    }

    #[test]
    fn value_spans() {
        let text = r#"{"a": {"b": [1, {"c": "x\"y"}], "b": {"c": true}}, "d": null}"#;
        let at = |p: &[Seg<'_>]| value_span(text, p).map(|s| &text[s.range()]);
        // The last duplicate key wins.
        assert_eq!(
            at(&[Seg::Key("a"), Seg::Key("b"), Seg::Key("c")]),
            Some("true")
        );
        assert_eq!(at(&[Seg::Key("d")]), Some("null"));
        assert_eq!(at(&[Seg::Key("zz")]), None);
        let text2 = r#"[1, {"c": "x\"y"}]"#;
        let s = value_span(text2, &[Seg::Index(1), Seg::Key("c")]).unwrap();
        assert_eq!(&text2[s.range()], r#""x\"y""#);
    }

    #[test]
    fn python_str_of_versions() {
        assert_eq!(
            py_str(&Value::Str("1.2.3".into())).as_deref(),
            Some("1.2.3")
        );
        assert_eq!(py_str(&Value::Int(2)).as_deref(), Some("2"));
        assert_eq!(
            py_str(&Value::Float(crate::model::F64(1.0))).as_deref(),
            Some("1.0")
        );
        assert_eq!(
            py_str(&Value::Float(crate::model::F64(1.5))).as_deref(),
            Some("1.5")
        );
        assert_eq!(py_str(&Value::Null), None);
    }

    #[test]
    fn truthiness() {
        assert!(!py_truthy(&Json::from("")));
        assert!(!py_truthy(&Json::Null));
        assert!(!py_truthy(&Json::from(0)));
        assert!(py_truthy(&Json::from("h")));
    }
}
