//! L6 the lint cache between CLI runs: what a whole-tree lint found, per file, with each file's
//! stamp and content hash and the ids its findings depend on, so that a second `ryechain lint`
//! of an unchanged tree only walks and stats the spaces, and one after an edit re-checks only
//! the changed files and those whose chains read their ids.
//!
//! Soundness, in short (each step is argued where it is taken):
//! - the key holds everything a finding can depend on besides the files: ryechain's version and
//!   build, the settings, the spaces and the working directory (paths are shown relative to it);
//! - a file is unchanged when its stamp (size, mtime, ctime, inode, device, mode) is the one of
//!   the run that cached it and that stamp was not taken while the file could still change
//!   ("racy": its ctime is too close to the start of that run); otherwise it is read and its
//!   content hash compared;
//! - a change to a config, extractor or trust-store file, or anything the partial
//!   re-check cannot vouch for (a cycle, a missing executor whose "did you mean" reads every
//!   id), falls back to a full run; the cache never decides a finding, it only replays one.
//!
//! [`lint`] takes these steps in order, each one a function; where they live:
//! - `key`: [`CacheKey`]; `store`: the file (header, checksums, atomic writes); `payload`: what
//!   the file holds, the head a replay reads apart from the body; `dir_table`: the census's
//!   directories, read in place;
//! - `trust`: when a stamp may stand for a file's contents, and which directories and files the
//!   next census may take on trust;
//! - `partial`: the re-check after an edit; `full`: the full run that builds a cache; `report`:
//!   the report from cached findings, by the spaces shown.
mod dir_table;
mod full;
mod key;
mod partial;
mod payload;
mod report;
pub mod store;
mod trust;

pub use dir_table::{DirRecord, DirTable, U32s};
pub use key::CacheKey;
pub use payload::{CacheBody, CacheHead, Summary};

use std::path::PathBuf;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, LintOptions, LintParts, LintReport, report_of};
use crate::db::{FileContents, Settings};
use crate::diagnostic::Finding;
use crate::integrity::lockfile::is_lockfile_rel;
use crate::load::{Census, CensusDir, CensusKind, KnownAt, SpaceSpec, census};
use crate::model::SpaceSet;
use crate::system::os::now_ns;
use crate::system::{FileStamp, KnownDir, SettledRecords, System};

use full::{full_run, without_cache};
use partial::{Partial, partial};
use report::{note_uses, report_from, shown_findings, uses_of};
use trust::{needs_read, next_dirs, settle_and_write};

/// Files whose change the cache cannot follow file by file (config, extractors, the trust
/// store): a full run. Lockfiles are followed: their findings record the ids they read
/// (`lazy::lockfile_chain_ids`).
fn is_global(rel: &str) -> bool {
    crate::analysis::live::is_global(rel) && !is_lockfile_rel(rel)
}

/// Owner of a graph-wide finding (executor cycles).
const GRAPH: u32 = u32::MAX;

/// One file the full load read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Index of its space in the specs.
    pub space: u32,
    /// Shared with the database's input while a run has one.
    pub rel: Arc<str>,
    /// How the census met it; `None` for a file of an embedded space (part of the build).
    pub kind: Option<CensusKind>,
    /// `content_hash` of what the load made of it.
    pub content: u128,
    /// Its stamp cannot be trusted (`FileStamp::settled_before`): read and hashed next time.
    pub racy: bool,
    /// A tool file (counted in the summary).
    pub tool: bool,
    /// Indices into `CacheData::ids`: the ids its findings depend on besides its own
    /// (`lazy::ChainIds`).
    pub deps: Vec<u32>,
    /// The executor id its chain stops at because it resolves nowhere (whose suggestions read
    /// every visible id).
    pub missing: Option<String>,
}

/// A whole cache: what a full run or a re-check leaves, and what a test may edit and write back.
/// In the file (`CacheData::encoded`) it is laid out as the replay of an unchanged tree reads it:
/// first a [`CacheHead`] (the census's directories, and the [`Summary`] a replay checks the
/// census against), then the findings, then the entries ([`CacheBody`]), decoded only when
/// something changed.
#[derive(Clone, Debug)]
pub struct CacheData {
    pub key: CacheKey,
    /// The census notices of the run (a missing `.ai/`, walk errors).
    pub notices: Vec<String>,
    /// The directories the census may take on trust next time (stamps outside the racy window).
    pub dirs: Vec<CensusDir>,
    pub ids: Vec<String>,
    pub entries: Vec<Entry>,
    /// Every finding in report order, with the index of the entry whose check produced it
    /// (`GRAPH` for graph-wide findings).
    pub findings: Vec<(u32, Finding)>,
    /// For each finding, the spaces whose lint shows it (`analysis::scope::Uses::of`, as
    /// `SpaceSet::bits`), set by [`note_uses`] before a write: a replay filters by `--space`
    /// without decoding the entries. Another length: not set (the entries decide).
    pub used_by: Vec<u8>,
}

/// How the report was obtained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum How {
    /// Nothing changed: the cached findings; `reread` files had to be read to be sure.
    Reused { reread: usize },
    /// `rechecked` files were checked again (the changed ones and those that depend on them).
    Partial {
        rechecked: usize,
        changed: usize,
        reread: usize,
    },
    /// Every file was checked; why.
    Full(String),
}

impl std::fmt::Display for How {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            How::Reused { reread } => write!(f, "reused ({reread} files re-read)"),
            How::Partial {
                rechecked,
                changed,
                reread,
            } => write!(
                f,
                "partial ({rechecked} files re-checked, {changed} changed, {reread} re-read)"
            ),
            How::Full(why) => write!(f, "full run ({why})"),
        }
    }
}

/// What a cached lint gives the command.
#[derive(Debug)]
pub struct Outcome {
    pub report: LintReport,
    /// The load's notices (as `load` would give them).
    pub notices: Vec<String>,
    /// Problems with the cache file (shown as warnings; the run went on without it).
    pub warnings: Vec<String>,
    pub how: How,
    /// Of the directories the census met that could be vouched for, how many were not read
    /// again (their stamps matched the cache's), how many there were, and how many files were
    /// settled by their stamps alone (`KnownDir::settled`); `None` for a full run.
    pub dirs_on_trust: Option<(usize, usize, usize)>,
    /// What the run is done with but has not freed (see [`Spent`]).
    pub spent: Spent,
}

/// Memory a run is done with and has not freed: the cache as read and decoded, the census.
/// Freeing a hundred thousand entries one by one, and the allocator handing their pages back,
/// was a tenth of the re-lint of an unchanged tree; dropping a `Spent` frees it all, and a
/// process about to exit may `std::mem::forget` it instead.
#[derive(Default)]
pub struct Spent(Vec<Box<dyn std::any::Any + Send>>);

impl std::fmt::Debug for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Spent({} parts)", self.0.len())
    }
}

impl Spent {
    fn keep<T: Send + 'static>(&mut self, t: T) {
        self.0.push(Box::new(t));
    }
}

/// A cached lint's inputs.
pub struct CachedLint<'a> {
    pub sys: &'a dyn System,
    pub specs: &'a [SpaceSpec],
    pub settings: Settings,
    pub opts: &'a LintOptions,
    pub key: CacheKey,
    /// The cache file.
    pub path: PathBuf,
    /// The spaces reported whole (`analysis::scope`); the cache holds every finding either way.
    pub shown: SpaceSet,
}

/// The hash the cache compares contents by: the text's bytes, or what the load recorded instead.
pub fn content_hash(c: &FileContents) -> u128 {
    match c {
        FileContents::Text(t) => xxhash_rust::xxh3::xxh3_128(t.as_str().as_bytes()),
        other => xxhash_rust::xxh3::xxh3_128_with_seed(format!("{other:?}").as_bytes(), 1),
    }
}

/// Lint with the cache at `lint.path`: replay it, re-check what changed, or run `full` (which
/// must call `analysis::lint_parts` with `deps`) and rebuild it. Each step goes on with the
/// cache or falls back to a full run (with a warning when the cache was damaged).
pub fn lint(lint: &CachedLint<'_>, full: &dyn Fn(Analysis<'_>) -> LintParts) -> Outcome {
    let run_start = now_ns();
    // 1. The file is a whole cache of this format and version (none: a full run).
    let payload = match open(lint) {
        Ok(payload) => payload,
        Err(damage) => return without_cache(lint, full, damage),
    };
    // 2. Its key is this run's: the version, build, settings, spaces and working directory.
    let (head, found) = match head_with_key(lint, &payload) {
        Ok(head) => head,
        Err(damage) => return without_cache(lint, full, damage),
    };
    // 3. The census stats the spaces, taking on trust the directories and files whose stamps the
    //    cache trusted, while the head's checksum is checked.
    let (findings, census) = match census_beside_check(lint, &payload, &head, found) {
        Ok(both) => both,
        Err(damage) => return without_cache(lint, full, Some(damage)),
    };
    // 4. The spaces are laid out as they were (the same missing `.ai/`, the same walk errors).
    if census.notices != head.notices {
        let why = "the spaces' layout changed".to_owned();
        return full_run(lint, full, Vec::new(), why);
    }
    // 5. An unchanged tree: the cached findings replayed, the entries not even decoded.
    if replays(&head, &census) {
        return match replayed(lint, &payload, &head, findings) {
            Ok(report) => reused(report, payload, census),
            Err(damage) => without_cache(lint, full, Some(damage)),
        };
    }
    // 6. Something changed: the changed files and those whose chains read their ids are checked
    //    again and the cache rewritten; what the re-check cannot vouch for is a full run.
    let data = match payload
        .body()
        .and_then(|bytes| store::body(&bytes))
        .and_then(|body| CacheData::join(head, findings, body))
    {
        Ok(data) => data,
        Err(damage) => return without_cache(lint, full, Some(damage)),
    };
    let mut spent = Spent::default();
    spent.keep(payload);
    recheck(lint, full, data, census, run_start, spent)
}

/// Step 1 of [`lint`]: the cache file, its header and length checked and its head read. `Err`:
/// no usable file, and the damage to warn about if there is some.
fn open(lint: &CachedLint<'_>) -> Result<store::Payload, Option<String>> {
    match store::read(&lint.path) {
        store::Read::Hit(payload) => Ok(payload),
        store::Read::Missing => Err(None),
        store::Read::Discarded(why) => Err(Some(why)),
    }
}

/// Step 2 of [`lint`]: the head, decoded in place, and the bytes of the findings after it, when
/// its key is the run's. Another build's or settings' cache is rebuilt without a word, a
/// damaged one with one (a head that does not decode is damage the checksum would find).
fn head_with_key<'p>(
    lint: &CachedLint<'_>,
    payload: &'p store::Payload,
) -> Result<(CacheHead<'p>, &'p [u8]), Option<String>> {
    let (head, found) = payload
        .head()
        .map_err(|why| Some(payload.check().err().unwrap_or(why)))?;
    if head.key != lint.key {
        return Err(payload.check().err());
    }
    Ok((head, found))
}

/// Step 3 of [`lint`]: the census walks (a `stat` per file) while the head's checksum is
/// checked and its findings decoded; what the census made of the head counts only once that
/// check passed (`Err`: it did not). A directory whose stamp matches the cache's is not read
/// again, only its names stamped, and a file whose stamp is the one the cache trusted is
/// settled without an entry. (The body is read, and its own checksum checked, only by a run
/// that needs the entries.)
fn census_beside_check(
    lint: &CachedLint<'_>,
    payload: &store::Payload,
    head: &CacheHead<'_>,
    found: &[u8],
) -> Result<(Vec<(u32, Finding)>, Census), String> {
    crate::memory::purge_freed_pages_as_usual();
    let (checked, census) = rayon::join(
        || {
            payload.check_head()?;
            store::findings(found)
        },
        || {
            let known = |space: u32, at: KnownAt<'_>, stamp: &FileStamp| {
                let i = head.dir(space, at)?;
                let d = head.dirs.raw(i)?;
                if d.stamp != *stamp {
                    return None;
                }
                Some(KnownDir {
                    names: std::str::from_utf8(d.names).ok()?,
                    settled: SettledRecords::new(d.settled)?,
                    token: u32::try_from(i).ok()?,
                })
            };
            census(lint.sys, lint.specs, &known)
        },
    );
    Ok((checked?, census))
}

/// Of the directories the census met that could be vouched for, how many it took on trust, how
/// many there were, and how many files it settled ([`Outcome::dirs_on_trust`]).
fn dirs_on_trust(census: &Census) -> Option<(usize, usize, usize)> {
    let on_trust = census.vouched.len();
    Some((on_trust, on_trust + census.dirs.len(), census.settled.len()))
}

/// Step 5 of [`lint`]: the report of an unchanged tree, from the head's counts and the cached
/// findings those `lint.shown` shows (by the head's `used_by`, or, in a cache written without
/// it, by the entries). `Err`: the body needed for that is damaged.
fn replayed(
    lint: &CachedLint<'_>,
    payload: &store::Payload,
    head: &CacheHead<'_>,
    findings: Vec<(u32, Finding)>,
) -> Result<LintReport, String> {
    let (findings, hidden) = if head.used_by.len() == findings.len() {
        shown_findings(findings, &head.used_by, lint.shown)
    } else {
        let body = store::body(&payload.body()?)?;
        let used_by = uses_of(lint, &findings, &body.entries, &body.ids);
        shown_findings(findings, &used_by, lint.shown)
    };
    let Summary { files, tools, .. } = head.summary;
    let mut report = report_of(
        findings,
        usize::try_from(files).unwrap_or(usize::MAX),
        usize::try_from(tools).unwrap_or(usize::MAX),
        0,
    );
    report.summary.hidden = hidden.count;
    report.summary.hidden_spaces = hidden.spaces;
    Ok(report)
}

/// The outcome of a replay: nothing to write, the cache as read and the census kept unfreed.
fn reused(report: LintReport, payload: store::Payload, census: Census) -> Outcome {
    let dirs_on_trust = dirs_on_trust(&census);
    let mut spent = Spent::default();
    spent.keep(payload);
    spent.keep((census.entries, census.settled, census.dirs));
    Outcome {
        report,
        notices: census.notices,
        warnings: Vec::new(),
        how: How::Reused { reread: 0 },
        dirs_on_trust,
        spent,
    }
}

/// Step 6 of [`lint`]: the census against the decoded cache and the re-check of what changed
/// ([`partial`]), then the cache with this run's directories written back when it changed and
/// the run had no internal error. Whatever `partial` cannot vouch for is a full run.
fn recheck(
    lint: &CachedLint<'_>,
    full: &dyn Fn(Analysis<'_>) -> LintParts,
    mut data: CacheData,
    census: Census,
    run_start: i64,
    mut spent: Spent,
) -> Outcome {
    let old_dirs = std::mem::take(&mut data.dirs);
    let Partial {
        how,
        mut data,
        write,
        internal_errors,
    } = match partial(lint, data, &census, run_start) {
        Ok(done) => done,
        Err(why) => return full_run(lint, full, Vec::new(), why),
    };
    let dirs_on_trust = dirs_on_trust(&census);
    note_uses(lint, &mut data);
    let (dirs, dirs_changed) = next_dirs(old_dirs, &census.vouched, census.dirs, run_start);
    data.dirs = dirs;
    let mut warnings = Vec::new();
    if (write || dirs_changed)
        && internal_errors == 0
        && let Err(e) = settle_and_write(&lint.path, &mut data)
    {
        warnings.push(cannot_write(lint, &e));
    }
    spent.keep((census.entries, census.settled));
    Outcome {
        report: report_from(lint, data, internal_errors, &mut spent),
        notices: census.notices,
        warnings,
        how,
        dirs_on_trust,
        spent,
    }
}

/// The warning of a cache that could not be written (the run's report stands).
fn cannot_write(lint: &CachedLint<'_>, e: &std::io::Error) -> String {
    format!(
        "the lint cache {} cannot be written: {e}",
        lint.path.display()
    )
}

/// Whether the census met exactly what the cache's head accounts for (`Summary`): every settled
/// file once, by its own entry's fingerprint, and every side entry as it was, with no directory
/// read again. Then the tree is unchanged and the cache needs no rewrite: what `partial` would
/// conclude (`How::Reused` with nothing to write), told without decoding the entries; any other
/// census goes through `partial`, which decodes them and says what changed.
fn replays(head: &CacheHead<'_>, census: &Census) -> bool {
    let s = &head.summary;
    if !s.whole
        || !census.dirs.is_empty()
        || census.vouched.len() != head.dirs.len()
        || census.settled.len() as u64 != s.settled
        || census.entries.len() != head.side.len()
    {
        return false;
    }
    let mut marks = vec![0u64; usize::try_from(s.files).unwrap_or(0).div_ceil(64)];
    for &token in &census.settled {
        let i = token as usize;
        let bit = 1u64 << (i % 64);
        match marks.get_mut(i / 64) {
            Some(word) if *word & bit == 0 => *word |= bit,
            _ => return false,
        }
    }
    if census.settled_digest != s.digest {
        return false;
    }
    let side: FxHashMap<(u32, &str), usize> = head
        .side
        .iter()
        .enumerate()
        .map(|(i, e)| ((e.space, e.rel.as_str()), i))
        .collect();
    let mut met = vec![false; head.side.len()];
    census.entries.iter().all(|e| {
        side.get(&(e.space, e.rel.as_str())).is_some_and(|&i| {
            let cached = &head.side[i];
            !std::mem::replace(&mut met[i], true)
                && !needs_read(cached.racy, Some(&cached.kind), &e.kind)
        })
    })
}
