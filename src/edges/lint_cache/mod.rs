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
pub mod store;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use crate::analysis::lazy::Loaded;
use crate::analysis::lazy::{file_chain_needs, lockfile_chain_ids};
use crate::analysis::live::lintable;
use crate::analysis::scope::{Hidden, Owner, Uses};
use crate::analysis::{
    Analysis, Checks, DepIds, Host, LintOptions, LintParts, LintReport, LintedFile, display_path,
    integrity_enabled, lint_chunk, par_chunks, report_of,
};
use crate::db::{Db, FileContents, RootDb, Settings, SourceFile};
use crate::diagnostic::{Finding, compare_findings};
use crate::integrity::lockfile::is_lockfile_rel;
use crate::load::{
    Census, CensusDir, CensusKind, ItemLoader, KnownAt, SpaceSource, SpaceSpec, census, load,
};
use crate::model::{SpaceKind, SpaceSet};
use crate::resolve::{
    VisibleIds, closest_ids, extractor_config, split_tool_rel, suggestions, tool_id, tool_id_ref,
};
use crate::system::os::now_ns;
use crate::system::{FileStamp, KnownDir, Settled, SettledRecords, System};

/// Files whose change the cache cannot follow file by file (config, extractors, the trust
/// store): a full run. Lockfiles are followed: their findings record the ids they read
/// (`lazy::lockfile_chain_ids`).
fn is_global(rel: &str) -> bool {
    crate::analysis::live::is_global(rel) && !is_lockfile_rel(rel)
}

/// Owner of a graph-wide finding (executor cycles).
const GRAPH: u32 = u32::MAX;

/// Everything besides the files that the findings depend on. A cache with another key is
/// rebuilt without a word.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheKey {
    pub version: String,
    /// The stamp of the running executable (a rebuilt ryechain is another build).
    pub build: Option<FileStamp>,
    pub settings: String,
    pub spaces: Vec<String>,
    pub cwd: String,
}

impl CacheKey {
    pub fn new(
        build: Option<FileStamp>,
        settings: &Settings,
        specs: &[SpaceSpec],
        cwd: Option<&Path>,
    ) -> CacheKey {
        CacheKey {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            build,
            settings: format!("{settings:?}"),
            spaces: specs.iter().map(|s| format!("{s:?}")).collect(),
            cwd: cwd.map(|p| p.display().to_string()).unwrap_or_default(),
        }
    }

    /// The cache file's name: one per spaces and working directory (settings and builds share
    /// it, the last run's wins).
    pub fn file_name(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for s in &self.spaces {
            h.update(s.as_bytes());
            h.update([0]);
        }
        h.update(self.cwd.as_bytes());
        let d = h.finalize();
        let tag: String = d.iter().take(10).map(|b| format!("{b:02x}")).collect();
        format!("lint-{tag}.bin")
    }
}

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

/// The start of the file's payload, read in place (its directory table is the file's bytes): it
/// is on the critical path of every cached run, before the census can start.
#[derive(Debug, Deserialize)]
pub struct CacheHead<'a> {
    pub key: CacheKey,
    pub notices: Vec<String>,
    /// Laid out so that each directory's subdirectories are the records
    /// `first_child..first_child + children`, sorted by name: the census asks about a
    /// subdirectory of a directory it took on trust by that directory's index and its name
    /// (`KnownAt::Child`), with no lookup by path.
    #[serde(borrow)]
    pub dirs: DirTable<'a>,
    /// The indices of `dirs` sorted by (space, rel): a directory met by its path
    /// (`KnownAt::Rel`).
    #[serde(borrow)]
    pub by_rel: U32s<'a>,
    pub summary: Summary,
    /// The entries on disk no directory record settles (symlinks, racy files, files of a
    /// directory that is listed every time), each as the census should meet it again.
    pub side: Vec<SideEntry>,
    /// [`CacheData::used_by`].
    pub used_by: Vec<u8>,
}

/// Bytes of a record of [`DirTable`]: where its rel, names and settled records are (u64, then
/// their lengths, u32 each), its space, first child and number of children (u32 each), its
/// stamp (size, mtime, ctime, inode, device: 8 bytes each; mode: 4), little-endian.
const DIR_RECORD: usize = 8 + 6 * 4 + 5 * 8 + 4;

/// [`CacheHead::dirs`]: fixed-size records and the text they point into, both the file's own
/// bytes. Nothing is decoded before the census asks for a record (a postcard table of a 100k
/// tree's 23k directories took 3.4 ms to decode, on one core, before the census could start),
/// and a record's strings are checked to be UTF-8 when it is taken whole ([`DirTable::get`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct DirTable<'a> {
    records: &'a [u8],
    text: &'a [u8],
}

/// A record of [`DirTable`] before its strings are checked.
struct RawDir<'a> {
    space: u32,
    rel: &'a [u8],
    names: &'a [u8],
    settled: &'a [u8],
    first_child: u32,
    children: u32,
    stamp: FileStamp,
}

/// Little-endian `N` bytes at `at` of `b` (which the caller sized).
fn le<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b.get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .unwrap_or([0; N])
}

impl<'a> DirTable<'a> {
    pub fn len(&self) -> usize {
        self.records.len() / DIR_RECORD
    }

    #[cfg(any(test, feature = "testing"))]
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Record `i`, its strings unchecked; `None` past the end or where it points past the text.
    fn raw(&self, i: usize) -> Option<RawDir<'a>> {
        let r = self
            .records
            .get(i.checked_mul(DIR_RECORD)?..)?
            .get(..DIR_RECORD)?;
        let u32_at = |at| u32::from_le_bytes(le(r, at));
        let u64_at = |at| u64::from_le_bytes(le(r, at));
        let mut at = usize::try_from(u64_at(0)).ok()?;
        let mut take = |len: u32| {
            let part = self.text.get(at..)?.get(..len as usize)?;
            at += len as usize;
            Some(part)
        };
        Some(RawDir {
            rel: take(u32_at(8))?,
            names: take(u32_at(12))?,
            settled: take(u32_at(16))?,
            space: u32_at(20),
            first_child: u32_at(24),
            children: u32_at(28),
            stamp: FileStamp {
                size: u64_at(32),
                mtime_ns: i64::from_le_bytes(le(r, 40)),
                ctime_ns: i64::from_le_bytes(le(r, 48)),
                ino: u64_at(56),
                dev: u64_at(64),
                mode: u32_at(72),
            },
        })
    }

    /// Record `i`; `None` past the end, or where it is damaged.
    pub fn get(&self, i: usize) -> Option<DirRecord<'a>> {
        let r = self.raw(i)?;
        Some(DirRecord {
            space: r.space,
            rel: std::str::from_utf8(r.rel).ok()?,
            stamp: r.stamp,
            names: std::str::from_utf8(r.names).ok()?,
            settled: r.settled,
            #[cfg(any(test, feature = "testing"))]
            first_child: r.first_child,
            #[cfg(any(test, feature = "testing"))]
            children: r.children,
        })
    }

    /// Every record (`None` for a damaged one).
    pub fn iter(&self) -> impl Iterator<Item = Option<DirRecord<'a>>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The table of `dirs` (in that order): records and text.
    fn build(dirs: &[DirOut<'_>]) -> (Vec<u8>, Vec<u8>) {
        let mut records = Vec::with_capacity(dirs.len() * DIR_RECORD);
        let mut text = Vec::new();
        for d in dirs {
            let settled = SettledRecords::pack(d.settled);
            let len = |b: &[u8]| u32::try_from(b.len()).unwrap_or(u32::MAX);
            records.extend_from_slice(&(text.len() as u64).to_le_bytes());
            for part in [d.rel.as_bytes(), d.names.as_bytes(), &settled] {
                records.extend_from_slice(&len(part).to_le_bytes());
            }
            for n in [d.space, d.first_child, d.children] {
                records.extend_from_slice(&n.to_le_bytes());
            }
            let st = d.stamp;
            records.extend_from_slice(&st.size.to_le_bytes());
            records.extend_from_slice(&st.mtime_ns.to_le_bytes());
            records.extend_from_slice(&st.ctime_ns.to_le_bytes());
            records.extend_from_slice(&st.ino.to_le_bytes());
            records.extend_from_slice(&st.dev.to_le_bytes());
            records.extend_from_slice(&st.mode.to_le_bytes());
            text.extend_from_slice(d.rel.as_bytes());
            text.extend_from_slice(d.names.as_bytes());
            text.extend_from_slice(&settled);
        }
        (records, text)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for DirTable<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (records, text): (&'de [u8], &'de [u8]) = Deserialize::deserialize(d)?;
        if !records.len().is_multiple_of(DIR_RECORD) {
            return Err(serde::de::Error::custom("a directory record is cut short"));
        }
        Ok(DirTable { records, text })
    }
}

/// Packed little-endian `u32`s read in place ([`CacheHead::by_rel`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct U32s<'a>(&'a [u8]);

impl U32s<'_> {
    pub fn len(&self) -> usize {
        self.0.len() / 4
    }

    #[cfg(any(test, feature = "testing"))]
    pub fn is_empty(&self) -> bool {
        self.0.len() < 4
    }

    pub fn get(&self, i: usize) -> Option<u32> {
        let b = self.0.get(i.checked_mul(4)?..)?.get(..4)?;
        Some(u32::from_le_bytes(b.try_into().ok()?))
    }

    fn pack(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for U32s<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bytes: &'de [u8] = Deserialize::deserialize(d)?;
        if !bytes.len().is_multiple_of(4) {
            return Err(serde::de::Error::custom("an index is cut short"));
        }
        Ok(U32s(bytes))
    }
}

/// The index `i` in `0..n` where `cmp(i)` is `Equal`, `cmp` ordered as a sorted slice's
/// `binary_search_by` expects.
fn search(n: usize, cmp: impl Fn(usize) -> std::cmp::Ordering) -> Option<usize> {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match cmp(mid) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

/// A directory's record ([`DirTable::get`]).
#[derive(Debug)]
pub struct DirRecord<'a> {
    pub space: u32,
    pub rel: &'a str,
    pub stamp: FileStamp,
    pub names: &'a str,
    /// Packed (`SettledRecords`).
    pub settled: &'a [u8],
    /// Its subdirectories' records (what the census reads from the table itself; the tests read
    /// it here).
    #[cfg(any(test, feature = "testing"))]
    pub first_child: u32,
    #[cfg(any(test, feature = "testing"))]
    pub children: u32,
}

/// A directory as the table is built from it ([`dir_layout`]).
struct DirOut<'a> {
    space: u32,
    rel: &'a str,
    stamp: &'a FileStamp,
    names: &'a str,
    settled: &'a [Settled],
    first_child: u32,
    children: u32,
}

/// Bytes written as postcard bytes (their length, then themselves).
struct Raw(Vec<u8>);

impl Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

/// The last component of a directory's `rel`: its name in its parent.
fn dir_name(rel: &str) -> &str {
    rel.rsplit_once('/').map_or(rel, |(_, name)| name)
}

/// `dirs` laid out as [`CacheHead::dirs`] (breadth first from the directories whose parent has
/// no record, each one's subdirectories together and sorted by name), and `by_rel`.
fn dir_layout(dirs: &[CensusDir]) -> (Vec<DirOut<'_>>, Vec<u32>) {
    let index: FxHashMap<(u32, &str), usize> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| ((d.space, d.rel.as_str()), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); dirs.len()];
    let mut order: Vec<usize> = Vec::with_capacity(dirs.len());
    for (i, d) in dirs.iter().enumerate() {
        // A parent's rel is shorter than its child's: no directory is its own ancestor.
        match d
            .rel
            .rsplit_once('/')
            .and_then(|(p, _)| index.get(&(d.space, p)))
        {
            Some(&p) if p != i => children[p].push(i),
            _ => order.push(i),
        }
    }
    order.sort_by(|&a, &b| (dirs[a].space, &dirs[a].rel).cmp(&(dirs[b].space, &dirs[b].rel)));
    let mut ranges: Vec<(u32, u32)> = Vec::with_capacity(dirs.len());
    let mut at = 0;
    while let Some(&i) = order.get(at) {
        let kids = &mut children[i];
        kids.sort_by(|&a, &b| dir_name(&dirs[a].rel).cmp(dir_name(&dirs[b].rel)));
        let first = u32::try_from(order.len()).unwrap_or(u32::MAX);
        ranges.push((first, u32::try_from(kids.len()).unwrap_or(u32::MAX)));
        order.extend(kids.iter());
        at += 1;
    }
    let mut by_rel: Vec<u32> = (0..order.len())
        .map(|p| u32::try_from(p).unwrap_or(u32::MAX))
        .collect();
    by_rel.sort_by(|&a, &b| {
        let (a, b) = (&dirs[order[a as usize]], &dirs[order[b as usize]]);
        (a.space, &a.rel).cmp(&(b.space, &b.rel))
    });
    let out = order
        .iter()
        .zip(ranges)
        .map(|(&i, (first_child, children))| {
            let d = &dirs[i];
            DirOut {
                space: d.space,
                rel: &d.rel,
                stamp: &d.stamp,
                names: &d.names,
                settled: &d.settled,
                first_child,
                children,
            }
        })
        .collect();
    (out, by_rel)
}

impl CacheHead<'_> {
    /// The record of directory `at` of space `space`, if the cache has one (its index).
    fn dir(&self, space: u32, at: KnownAt<'_>) -> Option<usize> {
        let i = match at {
            KnownAt::Rel(rel) => {
                let want = Some((space, rel.as_bytes()));
                let key = |k| {
                    let d = self.dirs.raw(self.by_rel.get(k)? as usize)?;
                    Some((d.space, d.rel))
                };
                self.by_rel
                    .get(search(self.by_rel.len(), |k| key(k).cmp(&want))?)?
                    as usize
            }
            KnownAt::Child { parent, name, nth } => {
                let p = self.dirs.raw(parent as usize)?;
                let first = p.first_child as usize;
                let n = (p.children as usize).min(self.dirs.len().saturating_sub(first));
                // A subdirectory's rel is its parent's, a `/` and its name (`dir_layout`).
                let cut = p.rel.len() + 1;
                let name = Some(name.as_bytes());
                let key = |k| self.dirs.raw(first + k).and_then(|d| d.rel.get(cut..));
                // Its place among the names (sorted, as the records are) is tried first: it is
                // the place whenever every subdirectory before it has a record.
                let nth = nth as usize;
                if nth < n && key(nth) == name {
                    first + nth
                } else {
                    first + search(n, |k| key(k).cmp(&name))?
                }
            }
        };
        (self.dirs.raw(i)?.space == space).then_some(i)
    }
}

/// What the replay of an unchanged tree checks the census against, so that it need not decode
/// the entries ([`replays`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Entries (files the report counts), and those that are tools.
    pub files: u64,
    pub tools: u64,
    /// The entries a directory record settles: how many, and the sum of
    /// `Settled::mix(index, fingerprint of the entry's stamp)` over them.
    pub settled: u64,
    pub digest: u128,
    /// The records name distinct entries with trusted stamps, and they and `side` cover every
    /// entry on disk. When not, a replay decodes the entries (and `partial` says what is wrong).
    pub whole: bool,
}

/// An entry of [`CacheHead::side`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideEntry {
    pub space: u32,
    pub rel: String,
    pub kind: CensusKind,
    pub racy: bool,
}

/// The rest of the payload, after the findings.
#[derive(Clone, Debug, Deserialize)]
pub struct CacheBody {
    pub ids: Vec<String>,
    pub entries: Vec<Entry>,
}

/// [`CacheHead`] as written.
#[derive(Serialize)]
struct HeadOut<'a> {
    key: &'a CacheKey,
    notices: &'a [String],
    /// [`DirTable`]: records, text.
    dirs: (Raw, Raw),
    by_rel: Raw,
    summary: Summary,
    side: Vec<SideEntry>,
    used_by: &'a [u8],
}

/// [`CacheBody`] as written.
#[derive(Serialize)]
struct BodyOut<'a> {
    ids: &'a [String],
    entries: &'a [Entry],
}

impl CacheData {
    fn join(
        head: CacheHead<'_>,
        findings: Vec<(u32, Finding)>,
        body: CacheBody,
    ) -> Result<CacheData, String> {
        let dirs = head.dirs.iter().map(|d| d.map(DirRecord::into_owned));
        Ok(CacheData {
            key: head.key,
            notices: head.notices,
            dirs: dirs
                .collect::<Option<_>>()
                .ok_or("a directory record cannot be decoded")?,
            ids: body.ids,
            entries: body.entries,
            findings,
            used_by: head.used_by,
        })
    }

    /// The file's payload: head, findings, body (`store::encode` writes the head and findings
    /// first, with their length before them; postcard writes each part after the one before,
    /// so each decodes from where the one before ended).
    #[allow(
        clippy::type_complexity,
        reason = "the three parts of the payload, named where they are built"
    )]
    fn encoded(&self) -> (HeadOut<'_>, &[(u32, Finding)], BodyOut<'_>) {
        let (summary, side) = self.summary();
        let (dirs, by_rel) = dir_layout(&self.dirs);
        let (records, text) = DirTable::build(&dirs);
        (
            HeadOut {
                key: &self.key,
                notices: &self.notices,
                dirs: (Raw(records), Raw(text)),
                by_rel: Raw(U32s::pack(&by_rel)),
                summary,
                side,
                used_by: &self.used_by,
            },
            &self.findings,
            BodyOut {
                ids: &self.ids,
                entries: &self.entries,
            },
        )
    }

    /// The [`Summary`] and side entries of the cache as it stands: the digest is taken of the
    /// entries' own stamps, so records that do not name their entries fail a replay's check.
    fn summary(&self) -> (Summary, Vec<SideEntry>) {
        let mut recorded = vec![false; self.entries.len()];
        let mut whole = true;
        for r in self.dirs.iter().flat_map(|d| &d.settled) {
            if r.token == Settled::NONE.token {
                continue;
            }
            match recorded.get_mut(r.token as usize) {
                Some(seen) if !*seen => *seen = true,
                _ => whole = false,
            }
        }
        let mut summary = Summary {
            files: self.entries.len() as u64,
            tools: self.entries.iter().filter(|e| e.tool).count() as u64,
            ..Summary::default()
        };
        let mut side = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            let Some(kind) = &e.kind else { continue };
            if !recorded[i] {
                side.push(SideEntry {
                    space: e.space,
                    rel: e.rel.to_string(),
                    kind: kind.clone(),
                    racy: e.racy,
                });
                continue;
            }
            match (kind, u32::try_from(i)) {
                (CensusKind::Plain(Some(stamp)), Ok(token)) if !e.racy => {
                    summary.settled += 1;
                    summary.digest = summary
                        .digest
                        .wrapping_add(Settled::mix(token, stamp.fingerprint()));
                }
                _ => whole = false,
            }
        }
        summary.whole = whole;
        (summary, side)
    }
}

impl DirRecord<'_> {
    fn into_owned(self) -> CensusDir {
        CensusDir {
            space: self.space,
            rel: self.rel.to_owned(),
            stamp: self.stamp,
            names: self.names.to_owned(),
            settled: SettledRecords::new(self.settled)
                .map(|r| r.iter().collect())
                .unwrap_or_default(),
        }
    }
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

fn stamp_of(kind: &CensusKind) -> Option<&FileStamp> {
    match kind {
        CensusKind::Plain(s) => s.as_ref(),
        CensusKind::Link(l) => l.1.as_ref(),
        CensusKind::NotRegular(_) | CensusKind::Error(_) => None,
    }
}

/// Whether a census entry's kind can stand for its contents: a stamp taken well after the file
/// last changed, or an entry the walk classifies by itself (a FIFO, a walk error).
fn trusted(kind: &CensusKind, run_start: i64) -> bool {
    match kind {
        CensusKind::Plain(_) | CensusKind::Link(_) => {
            stamp_of(kind).is_some_and(|s| s.settled_before(run_start))
        }
        CensusKind::NotRegular(_) | CensusKind::Error(_) => true,
    }
}

/// Whether a file the cache knows must be read to know it is unchanged: its cached stamp was not
/// trusted, the census meets it differently, or it has no stamp at all.
fn needs_read(racy: bool, cached: Option<&CensusKind>, kind: &CensusKind) -> bool {
    let unstamped = stamp_of(kind).is_none()
        && !matches!(kind, CensusKind::NotRegular(_) | CensusKind::Error(_));
    racy || cached != Some(kind) || unstamped
}

/// Lint with the cache at `lint.path`: replay it, re-check what changed, or run `full` (which
/// must call `analysis::lint_parts` with `deps`) and rebuild it.
pub fn lint(lint: &CachedLint<'_>, full: &dyn Fn(Analysis<'_>) -> LintParts) -> Outcome {
    let mut warnings = Vec::new();
    let mut spent = Spent::default();
    let run_start = now_ns();
    let payload = match store::read(&lint.path) {
        store::Read::Hit(payload) => payload,
        store::Read::Missing => return without_cache(lint, full, None),
        store::Read::Discarded(why) => return without_cache(lint, full, Some(why)),
    };
    let (head, found) = match payload.head() {
        Ok(head) => head,
        // A head that does not decode is damage the checksum would find.
        Err(why) => {
            return without_cache(lint, full, Some(payload.check().err().unwrap_or(why)));
        }
    };
    if head.key != lint.key {
        // Another build's or settings' cache is rebuilt without a word, a damaged one with one.
        return without_cache(lint, full, payload.check().err());
    }
    crate::memory::purge_freed_pages_as_usual();
    // The census walks (a `stat` per file) while the head's checksum is checked and its
    // findings decoded; what the census made of the head is used only once that check passed.
    // (The body is read, and its own checksum checked, only by a run that needs the entries.)
    // A directory whose stamp matches the cache's is not read again, only its names stamped.
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
    let findings = match checked {
        Ok(found) => found,
        Err(why) => return without_cache(lint, full, Some(why)),
    };
    if census.notices != head.notices {
        return full_run(
            lint,
            full,
            warnings,
            "the spaces' layout changed".to_owned(),
        );
    }
    let on_trust = census.vouched.len();
    let dirs_on_trust = Some((on_trust, on_trust + census.dirs.len(), census.settled.len()));
    if replays(&head, &census) {
        let Summary { files, tools, .. } = head.summary;
        let (findings, hidden) = if head.used_by.len() == findings.len() {
            shown_findings(findings, &head.used_by, lint.shown)
        } else {
            match payload.body().and_then(|bytes| store::body(&bytes)) {
                Ok(body) => {
                    let used_by = uses_of(lint, &findings, &body.entries, &body.ids);
                    shown_findings(findings, &used_by, lint.shown)
                }
                Err(why) => return without_cache(lint, full, Some(why)),
            }
        };
        let mut report = report_of(
            findings,
            usize::try_from(files).unwrap_or(usize::MAX),
            usize::try_from(tools).unwrap_or(usize::MAX),
            0,
        );
        report.summary.hidden = hidden.count;
        report.summary.hidden_spaces = hidden.spaces;
        spent.keep(payload);
        spent.keep((census.entries, census.settled, census.dirs));
        return Outcome {
            report,
            notices: census.notices,
            warnings,
            how: How::Reused { reread: 0 },
            dirs_on_trust,
            spent,
        };
    }
    let mut data = match payload.body().and_then(|bytes| store::body(&bytes)) {
        Ok(body) => match CacheData::join(head, findings, body) {
            Ok(data) => data,
            Err(why) => return without_cache(lint, full, Some(why)),
        },
        Err(why) => return without_cache(lint, full, Some(why)),
    };
    spent.keep(payload);
    let old_dirs = std::mem::take(&mut data.dirs);
    match partial(lint, data, &census, run_start) {
        Ok(Partial {
            how,
            mut data,
            write,
            internal_errors,
        }) => {
            note_uses(lint, &mut data);
            let (dirs, dirs_changed) = next_dirs(old_dirs, &census.vouched, census.dirs, run_start);
            let write = write || dirs_changed;
            data.dirs = dirs;
            if write
                && internal_errors == 0
                && let Err(e) = settle_and_write(&lint.path, &mut data)
            {
                warnings.push(format!(
                    "the lint cache {} cannot be written: {e}",
                    lint.path.display()
                ));
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
        Err(why) => full_run(lint, full, warnings, why),
    }
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

/// A full run in place of a cache that is missing or cannot be used; `damage`, when there is
/// some, is warned about.
fn without_cache(
    lint: &CachedLint<'_>,
    full: &dyn Fn(Analysis<'_>) -> LintParts,
    damage: Option<String>,
) -> Outcome {
    let warnings = damage
        .map(|why| {
            format!(
                "discarding the lint cache {}: {why}; it is rebuilt",
                lint.path.display()
            )
        })
        .into_iter()
        .collect();
    full_run(lint, full, warnings, "no usable cache".to_owned())
}

/// Load everything, check everything, cache it.
fn full_run(
    lint: &CachedLint<'_>,
    full: &dyn Fn(Analysis<'_>) -> LintParts,
    mut warnings: Vec<String>,
    why: String,
) -> Outcome {
    let run_start = now_ns();
    crate::memory::purge_freed_pages_soonest();
    let loaded = load(lint.sys, lint.specs);
    let mut host = Host::new();
    let mut change = loaded.change;
    change.settings = Some(lint.settings.clone());
    host.apply(change);
    let db = host.snapshot();
    let parts = full(crate::analysis::Analysis::new(&db));
    // A run that hit an internal error is not cached.
    if parts.files.iter().any(|f| f.panicked) {
        let mut parts = parts;
        let hidden = parts.hide_unused(&db, lint.shown);
        let mut report = parts.into_report();
        report.summary.hidden = hidden.count;
        report.summary.hidden_spaces = hidden.spaces;
        return Outcome {
            report,
            notices: loaded.notices,
            warnings,
            how: How::Full(why),
            dirs_on_trust: None,
            spent: Spent::default(),
        };
    }
    let rows = rows_of(lint, &db);
    // The files' texts and every memo go before the census is taken and the cache built. (The
    // census taken while they are freed, on the other thread, was no sooner: both use the two
    // cores.)
    drop((db, host));
    crate::memory::release_freed_memory();
    // Built on a pool thread: the memory just freed was mostly allocated by the pool's threads,
    // and an allocator with per-thread heaps (mimalloc) hands it out again there first, so the
    // cache does not raise the run's peak.
    let (data, written) = rayon::scope(|_| {
        // Stamped after the files were read: a file written since has a ctime past
        // `run_start`, so it is racy and read again next time.
        let census = census(lint.sys, lint.specs, &|_, _, _| None);
        let mut data = cache_data(lint, rows, parts);
        note_uses(lint, &mut data);
        attach_census(&mut data, lint.specs, census, run_start);
        let written = settle_and_write(&lint.path, &mut data);
        (data, written)
    });
    if let Err(e) = written {
        warnings.push(format!(
            "the lint cache {} cannot be written: {e}",
            lint.path.display()
        ));
    }
    let mut spent = Spent::default();
    Outcome {
        report: report_from(lint, data, 0, &mut spent),
        notices: loaded.notices,
        warnings,
        how: How::Full(why),
        dirs_on_trust: None,
        spent,
    }
}

/// Index of `file`'s space in `specs`.
fn space_index(db: &dyn Db, specs: &[SpaceSpec], file: SourceFile) -> Option<u32> {
    let space = file.space(db);
    specs
        .iter()
        .position(|s| &s.space == space)
        .and_then(|i| u32::try_from(i).ok())
}

/// Every file of `db`'s roots by (space index, rel).
fn files_of(db: &dyn Db, specs: &[SpaceSpec]) -> FxHashMap<(u32, String), SourceFile> {
    let mut out = FxHashMap::default();
    for root in db.workspace().roots(db) {
        for &f in root.files(db).iter() {
            if let Some(i) = space_index(db, specs, f) {
                out.insert((i, f.rel(db).to_string()), f);
            }
        }
    }
    out
}

/// Interns dependency ids.
#[derive(Default)]
struct Ids {
    ids: Vec<String>,
    index: FxHashMap<String, u32>,
}

impl Ids {
    fn from(ids: Vec<String>) -> Ids {
        let index = ids
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        Ids { ids, index }
    }
    fn intern(&mut self, id: &str) -> u32 {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        let i = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        self.ids.push(id.to_owned());
        self.index.insert(id.to_owned(), i);
        i
    }
}

/// A file's row of [`Rows`].
type Row = (u32, Arc<str>, u128, bool);

/// What the cache keeps of each file of a full run's database, by `SourceFile`: small, so it can
/// outlive the database (whose texts and memos are the run's peak).
struct Rows {
    /// (space index, rel, content hash, is a tool), in load order.
    rows: Vec<Row>,
    index: FxHashMap<SourceFile, u32>,
}

fn rows_of(lint: &CachedLint<'_>, db: &RootDb) -> Rows {
    // Sized once: built while the database is alive, at the run's peak (grown by doubling, the
    // two held up to twice their size).
    let total: usize = db
        .workspace()
        .roots(db)
        .iter()
        .map(|r| r.files(db).len())
        .sum();
    let mut files: Vec<SourceFile> = Vec::with_capacity(total);
    for root in db.workspace().roots(db) {
        files.extend(root.files(db).iter().copied());
    }
    // Each text hashed on the pool (214 MB at 100k tools: 50 ms on one thread).
    let rows: Vec<Option<Row>> = par_chunks(db, &files, &|db, part| {
        part.iter()
            .map(|&f| {
                let space = space_index(db, lint.specs, f)?;
                Some((
                    space,
                    f.rel(db).clone(),
                    content_hash(f.contents(db)),
                    tool_id_ref(db, f).is_some(),
                ))
            })
            .collect()
    });
    let mut index: FxHashMap<SourceFile, u32> =
        FxHashMap::with_capacity_and_hasher(total, Default::default());
    let mut kept = Vec::with_capacity(total);
    for (f, row) in files.into_iter().zip(rows) {
        if let Some(row) = row {
            index.insert(f, u32::try_from(kept.len()).unwrap_or(u32::MAX));
            kept.push(row);
        }
    }
    Rows { rows: kept, index }
}

/// The cache of a full run, without stamps (`attach_census` adds them).
fn cache_data(lint: &CachedLint<'_>, rows: Rows, parts: LintParts) -> CacheData {
    let mut entries: Vec<Entry> = rows
        .rows
        .into_iter()
        .map(|(space, rel, content, tool)| Entry {
            space,
            rel,
            kind: None,
            content,
            racy: false,
            tool,
            deps: Vec::new(),
            missing: None,
        })
        .collect();
    let mut findings = Vec::new();
    for lf in parts.files {
        let Some(&i) = rows.index.get(&lf.file) else {
            continue;
        };
        let entry = &mut entries[i as usize];
        if let Some(d) = lf.deps {
            entry.deps = parts
                .dep_lists
                .get(d.list as usize)
                .map(|l| l.to_vec())
                .unwrap_or_default();
            entry.missing = d.missing.map(String::from);
        }
        findings.extend(lf.findings.into_iter().map(|f| (i, f)));
    }
    findings.extend(parts.graph.into_iter().map(|f| (GRAPH, f)));
    findings.sort_by(|a, b| compare_findings(&a.1, &b.1));
    CacheData {
        key: lint.key.clone(),
        notices: Vec::new(),
        ids: parts.dep_ids,
        entries,
        dirs: Vec::new(),
        findings,
        used_by: Vec::new(),
    }
}

/// Give each on-disk entry of a full run its census kind. A file the census no longer finds
/// (deleted since it was read) gets no stamp, so it never matches the next census.
fn attach_census(data: &mut CacheData, specs: &[SpaceSpec], census: Census, run_start: i64) {
    let kinds: FxHashMap<(u32, &str), &CensusKind> = census
        .entries
        .iter()
        .map(|e| ((e.space, e.rel.as_str()), &e.kind))
        .collect();
    for e in &mut data.entries {
        if matches!(
            specs.get(e.space as usize).map(|s| &s.source),
            Some(SpaceSource::Dir(_))
        ) {
            let kind = kinds
                .get(&(e.space, &*e.rel))
                .map_or(CensusKind::Plain(None), |k| (*k).clone());
            e.racy = !trusted(&kind, run_start);
            e.kind = Some(kind);
        }
    }
    drop(kinds);
    data.notices = census.notices;
    data.dirs = next_dirs(Vec::new(), &census.vouched, census.dirs, run_start).0;
}

/// The directories the cache vouches for next time: those the census listed whose stamps are
/// old enough (the racy window of `trusted`: an entry added in the same clock tick as the
/// listing leaves the stamp as it was), and the records of `old` the census took on trust
/// (`vouched`: their indices). Also whether that differs from `old`.
fn next_dirs(
    old: Vec<CensusDir>,
    vouched: &[u32],
    listed: Vec<CensusDir>,
    run_start: i64,
) -> (Vec<CensusDir>, bool) {
    if listed.is_empty() && vouched.len() == old.len() {
        // Every directory vouched for, none gone: the same records (each is met once, from its
        // parent's record or by its path, so the count matches only when every one was met).
        return (old, false);
    }
    let mut old: Vec<Option<CensusDir>> = old.into_iter().map(Some).collect();
    let next = vouched
        .iter()
        .filter_map(|&t| old.get_mut(t as usize)?.take())
        .chain(
            listed
                .into_iter()
                .filter(|d| d.stamp.settled_before(run_start)),
        )
        .collect();
    (next, true)
}

/// Give every vouched directory of `data` its settled records (`KnownDir::settled`) from the
/// entries as they are now, then write the cache. A name's record: its entry's index and the
/// fingerprint of its stamp, when that entry is a plain file whose stamp is trusted.
fn settle_and_write(path: &Path, data: &mut CacheData) -> std::io::Result<()> {
    let index: FxHashMap<(u32, &str), (u32, u128)> = data
        .entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match &e.kind {
            Some(CensusKind::Plain(Some(s))) if !e.racy => Some((
                (e.space, &*e.rel),
                (u32::try_from(i).ok()?, s.fingerprint()),
            )),
            _ => None,
        })
        .collect();
    let mut key = String::new();
    for d in &mut data.dirs {
        d.settled.clear();
        let names = &d.names;
        for name in names.split_terminator('\0') {
            key.clear();
            key.push_str(&d.rel);
            key.push('/');
            key.push_str(name);
            d.settled.push(index.get(&(d.space, key.as_str())).map_or(
                Settled::NONE,
                |&(token, fingerprint)| Settled { token, fingerprint },
            ));
        }
        if d.settled.iter().all(|r| *r == Settled::NONE) {
            d.settled.clear();
        }
    }
    drop(index);
    store::write(path, data)
}

/// The report from cached findings (moved out of the cache), with what `lint.shown` leaves out.
fn report_from(
    lint: &CachedLint<'_>,
    mut data: CacheData,
    internal_errors: usize,
    spent: &mut Spent,
) -> LintReport {
    let files = data.entries.len();
    let tools = data.entries.iter().filter(|e| e.tool).count();
    let findings = std::mem::take(&mut data.findings);
    if data.used_by.len() != findings.len() {
        data.used_by = uses_of(lint, &findings, &data.entries, &data.ids);
    }
    let (findings, hidden) = shown_findings(findings, &data.used_by, lint.shown);
    spent.keep(data);
    let mut report = report_of(findings, files, tools, internal_errors);
    report.summary.hidden = hidden.count;
    report.summary.hidden_spaces = hidden.spaces;
    report
}

/// [`CacheData::used_by`] of a cache about to be written or reported.
fn note_uses(lint: &CachedLint<'_>, data: &mut CacheData) {
    data.used_by = uses_of(lint, &data.findings, &data.entries, &data.ids);
}

/// For each finding, the spaces whose lint shows it (`analysis::scope`): the entries are the
/// lint's files, each tool's recorded dependency ids what its chain reads.
fn uses_of(
    lint: &CachedLint<'_>,
    findings: &[(u32, Finding)],
    entries: &[Entry],
    ids: &[String],
) -> Vec<u8> {
    let kind = |space: u32| {
        lint.specs
            .get(space as usize)
            .map_or(SpaceKind::System, |s| s.space.kind())
    };
    let files: Vec<(SpaceKind, &str)> = entries.iter().map(|e| (kind(e.space), &*e.rel)).collect();
    let reads = |i: usize| {
        entries[i]
            .deps
            .iter()
            .filter_map(|&j| ids.get(j as usize).map(String::as_str))
            .collect::<Vec<&str>>()
    };
    let uses = Uses::new(&files, reads, SpaceSet::ALL);
    findings
        .iter()
        .map(|(owner, f)| {
            let owner = if *owner == GRAPH {
                Owner::Graph
            } else {
                Owner::File(*owner as usize)
            };
            uses.of(owner, f).bits()
        })
        .collect()
}

/// The findings `shown` shows, by each one's `used_by`, and what it left out.
fn shown_findings(
    findings: Vec<(u32, Finding)>,
    used_by: &[u8],
    shown: SpaceSet,
) -> (Vec<Finding>, Hidden) {
    let mut hidden = Hidden::default();
    let mut kept = Vec::with_capacity(findings.len());
    for ((_, f), &bits) in findings.into_iter().zip(used_by) {
        if SpaceSet::from_bits(bits).meets(shown) {
            kept.push(f);
        } else {
            hidden.add(&f);
        }
    }
    (kept, hidden)
}

/// What the census and the re-check made of the cache.
struct Partial {
    how: How,
    /// The cache after this run (its findings are the report's).
    data: CacheData,
    /// `data` differs from the file (stamps refreshed, files re-checked).
    write: bool,
    internal_errors: usize,
}

/// The census against the cache, then the re-check of what changed. `Err`: a full run is needed,
/// and why.
fn partial(
    lint: &CachedLint<'_>,
    mut data: CacheData,
    census: &Census,
    run_start: i64,
) -> Result<Partial, String> {
    let sys = lint.sys;
    let specs = lint.specs;
    // A settled file (its stamp is the one the cache trusted, `KnownDir::settled`) is seen and
    // unchanged. Its token is its entry's index, met once, and the fingerprints that matched
    // must be those entries' stamps' (their `Settled::mix` sums to the census's digest), or the
    // cache does not hang together (a full run).
    let mismatch = || Err("the cache's settled files do not match its entries".to_owned());
    let mut seen = vec![false; data.entries.len()];
    let mut digest = 0u128;
    for &token in &census.settled {
        let i = token as usize;
        let Some(e) = data.entries.get(i) else {
            return mismatch();
        };
        match &e.kind {
            Some(CensusKind::Plain(Some(s)))
                if !e.racy && !std::mem::replace(&mut seen[i], true) =>
            {
                digest = digest.wrapping_add(Settled::mix(token, s.fingerprint()));
            }
            _ => return mismatch(),
        }
    }
    if digest != census.settled_digest {
        return mismatch();
    }
    let by_key: FxHashMap<(u32, &str), u32> = data
        .entries
        .iter()
        .enumerate()
        .filter(|(i, e)| e.kind.is_some() && !seen[*i])
        .map(|(i, e)| ((e.space, &*e.rel), u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    // Census entries to read: new, or stamped differently, or cached with an untrusted stamp.
    let mut to_read: Vec<usize> = Vec::new();
    let mut met: FxHashSet<u32> = FxHashSet::default();
    // The cached entry of each census entry (a census entry is never a settled or embedded one).
    let mut cached_of: Vec<Option<u32>> = Vec::with_capacity(census.entries.len());
    for (ci, e) in census.entries.iter().enumerate() {
        let space = e.space;
        let found = by_key.get(&(space, e.rel.as_str())).copied();
        cached_of.push(found);
        match found {
            Some(i) => {
                met.insert(i);
                let cached = &data.entries[i as usize];
                if needs_read(cached.racy, cached.kind.as_ref(), &e.kind) {
                    to_read.push(ci);
                }
            }
            None => to_read.push(ci),
        }
    }
    let removed: Vec<u32> = by_key
        .values()
        .copied()
        .filter(|i| !met.contains(i))
        .collect();
    drop(by_key);
    if to_read.is_empty() && removed.is_empty() {
        return Ok(Partial {
            how: How::Reused { reread: 0 },
            data,
            write: false,
            internal_errors: 0,
        });
    }
    for &i in &removed {
        let rel = &data.entries[i as usize].rel;
        if is_global(rel) {
            return Err(format!(".ai/{rel} was removed"));
        }
    }

    // Read what may have changed through the single-item loader. Its base load holds the
    // extractors, config and trust store: a global file read again must hash as before.
    let (mut loader, base) = ItemLoader::new(sys, specs);
    let mut host = Host::new();
    let mut change = base.change;
    change.settings = Some(lint.settings.clone());
    host.apply(change);
    let global: Vec<String> = to_read
        .iter()
        .map(|&ci| &census.entries[ci].rel)
        .filter(|rel| is_global(rel))
        .cloned()
        .collect();
    let c = loader.probe_space_files(&global);
    host.apply(c);
    let cfg_has = |db: &RootDb, ext: &str| extractor_config(db).has_extension(ext);
    let mut probe_ids: Vec<String> = Vec::new();
    let mut probe_rels: Vec<String> = Vec::new();
    for &ci in &to_read {
        let e = &census.entries[ci];
        if matches!(e.kind, CensusKind::NotRegular(_) | CensusKind::Error(_)) {
            return Err(format!(".ai/{} is not a regular file any more", e.rel));
        }
        match split_tool_rel(&e.rel) {
            _ if is_global(&e.rel) => {}
            Some((id, ext)) if cfg_has(host.db(), ext) => probe_ids.push(id.to_owned()),
            _ => probe_rels.push(e.rel.clone()),
        }
    }
    let c = loader.probe_items(host.analysis(), &probe_ids);
    host.apply(c);
    let c = loader.probe_space_files(&probe_rels);
    host.apply(c);

    let files = files_of(host.db(), specs);
    // (census index, new content hash, cached entry) of each file read.
    let mut changed: Vec<usize> = Vec::new();
    let mut refreshed: Vec<(usize, u128)> = Vec::new();
    for &ci in &to_read {
        let e = &census.entries[ci];
        let space = e.space;
        let Some(&f) = files.get(&(space, e.rel.clone())) else {
            return Err(format!(".ai/{} vanished while it was read", e.rel));
        };
        let hash = content_hash(f.contents(host.db()));
        refreshed.push((ci, hash));
        match cached_of[ci] {
            Some(i) if data.entries[i as usize].content == hash => {}
            _ if is_global(&e.rel) => return Err(format!(".ai/{} changed", e.rel)),
            _ => changed.push(ci),
        }
    }
    let reread = to_read.len();
    let stamp_entry = |data: &mut CacheData, ci: usize, hash: u128| {
        let e = &census.entries[ci];
        if let Some(i) = cached_of[ci] {
            let entry = &mut data.entries[i as usize];
            entry.kind = Some(e.kind.clone());
            entry.content = hash;
            entry.racy = !trusted(&e.kind, run_start);
        }
    };
    if changed.is_empty() && removed.is_empty() {
        for &(ci, hash) in &refreshed {
            stamp_entry(&mut data, ci, hash);
        }
        return Ok(Partial {
            how: How::Reused { reread },
            data,
            write: true,
            internal_errors: 0,
        });
    }

    // The ids the change touches, and the files whose findings read one of them.
    let mut touched: FxHashSet<&str> = FxHashSet::default();
    let mut ids_added_or_removed = false;
    for &ci in &changed {
        let e = &census.entries[ci];
        if let Some((id, ext)) = split_tool_rel(&e.rel) {
            touched.insert(id);
            if cached_of[ci].is_none() && cfg_has(host.db(), ext) {
                ids_added_or_removed = true;
            }
        }
    }
    for &i in &removed {
        let e = &data.entries[i as usize];
        if let Some((id, _)) = split_tool_rel(&e.rel) {
            touched.insert(id);
        }
        ids_added_or_removed |= e.tool;
    }
    let touched_ix: FxHashSet<u32> = data
        .ids
        .iter()
        .enumerate()
        .filter(|(_, id)| touched.contains(id.as_str()))
        .map(|(i, _)| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    // (space, rel) of every file to check again: the changed ones the full lint checks, and the
    // files that depend on a touched id.
    let mut recheck: Vec<(u32, String)> = changed
        .iter()
        .map(|&ci| &census.entries[ci])
        .filter(|e| lintable(host.db(), &e.rel))
        .map(|e| (e.space, e.rel.clone()))
        .collect();
    let removed_set: FxHashSet<u32> = removed.iter().copied().collect();
    let mut in_recheck: FxHashSet<(u32, &str)> =
        recheck.iter().map(|(s, r)| (*s, r.as_str())).collect();
    let mut dependents: Vec<(u32, String)> = Vec::new();
    for (i, e) in data.entries.iter().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        // A tool depends on its own id too (shadowing, ambiguity): it is not stored.
        let own = e.tool && split_tool_rel(&e.rel).is_some_and(|(id, _)| touched.contains(id));
        if !removed_set.contains(&i)
            && (own || e.deps.iter().any(|d| touched_ix.contains(d)))
            && in_recheck.insert((e.space, &*e.rel))
        {
            dependents.push((e.space, e.rel.to_string()));
        }
    }
    drop(in_recheck);
    recheck.extend(dependents);
    let in_recheck: FxHashSet<(u32, &str)> =
        recheck.iter().map(|(s, r)| (*s, r.as_str())).collect();
    // A cycle through a file that changed or is checked again may have changed: the graph-wide
    // findings are recomputed by a full run. (Cycles whose members all stay untouched keep
    // their edges, so their findings stand.)
    let base = lint.opts.display_base.as_deref();
    let kind_of = |space: u32| specs.get(space as usize).map(|s| s.space.kind());
    let path_of = |space: u32, rel: &str| -> Option<PathBuf> {
        match &specs.get(space as usize)?.source {
            SpaceSource::Dir(b) => Some(b.join(".ai").join(rel)),
            SpaceSource::Embedded => None,
        }
    };
    let mut shown: FxHashSet<String> = FxHashSet::default();
    for (s, r) in &recheck {
        if let Some(p) = path_of(*s, r) {
            shown.insert(display_path(&p, base));
        }
    }
    for &i in &removed {
        let e = &data.entries[i as usize];
        if let Some(p) = path_of(e.space, &e.rel) {
            shown.insert(display_path(&p, base));
        }
    }
    for (owner, f) in &data.findings {
        let involved = shown.contains(&f.path)
            || f.notes
                .iter()
                .any(|n| n.path.as_ref().is_some_and(|p| shown.contains(p)));
        if *owner == GRAPH && involved {
            return Err("a changed file is part of an executor cycle".to_owned());
        }
    }

    // "Did you mean" for a missing executor searches every visible id: when ids come or go, a
    // finding that stays must suggest what it did (else a full run).
    let old_tools: Vec<(SpaceKind, &str)> = data
        .entries
        .iter()
        .filter(|e| e.tool)
        .filter_map(|e| Some((kind_of(e.space)?, split_tool_rel(&e.rel)?.0)))
        .collect();
    let mut new_tools: Vec<(SpaceKind, &str)> = data
        .entries
        .iter()
        .enumerate()
        .filter(|(i, e)| e.tool && !removed_set.contains(&u32::try_from(*i).unwrap_or(u32::MAX)))
        .filter_map(|(_, e)| Some((kind_of(e.space)?, split_tool_rel(&e.rel)?.0)))
        .collect();
    for &ci in &changed {
        let e = &census.entries[ci];
        let space = e.space;
        if let (Some(kind), Some((id, ext))) = (kind_of(space), split_tool_rel(&e.rel))
            && cached_of[ci].is_none()
            && cfg_has(host.db(), ext)
        {
            new_tools.push((kind, id));
        }
    }
    let primitives = &lint.settings.primitives;
    let visible = |tools: &[(SpaceKind, &str)], kind: SpaceKind| {
        let seen = kind.visible_kinds();
        VisibleIds::new(
            tools
                .iter()
                .filter(|(k, _)| seen.contains(k))
                .map(|(_, id)| *id)
                .chain(primitives.iter().map(String::as_str)),
        )
    };
    let mut new_visible: FxHashMap<SpaceKind, VisibleIds> = FxHashMap::default();
    if ids_added_or_removed {
        let mut old_visible: FxHashMap<SpaceKind, VisibleIds> = FxHashMap::default();
        for (i, e) in data.entries.iter().enumerate() {
            let (Some(missing), Some(kind)) = (&e.missing, kind_of(e.space)) else {
                continue;
            };
            if removed_set.contains(&u32::try_from(i).unwrap_or(u32::MAX))
                || in_recheck.contains(&(e.space, &*e.rel))
            {
                continue;
            }
            let old = old_visible
                .entry(kind)
                .or_insert_with(|| visible(&old_tools, kind));
            let before = closest_ids(old, missing);
            let new = new_visible
                .entry(kind)
                .or_insert_with(|| visible(&new_tools, kind));
            if closest_ids(new, missing) != before {
                return Err(format!(
                    "an added or removed tool changes the suggestions for the missing `{missing}`"
                ));
            }
        }
    }

    // Load what the re-checked files' chains read (the loader's argument: `chain_needs`).
    let rel_ids: Vec<String> = recheck
        .iter()
        .filter_map(|(_, r)| split_tool_rel(r).map(|(id, _)| id.to_owned()))
        .collect();
    let c = loader.probe_items(host.analysis(), &rel_ids);
    host.apply(c);
    // A lockfile checked again because a file of its chain changed was not read yet.
    let lock_rels: Vec<String> = recheck
        .iter()
        .filter(|(_, r)| is_lockfile_rel(r))
        .map(|(_, r)| r.clone())
        .collect();
    let c = loader.probe_space_files(&lock_rels);
    host.apply(c);
    let mut targets: Vec<SourceFile>;
    loop {
        let files = files_of(host.db(), specs);
        targets = Vec::with_capacity(recheck.len());
        for key in &recheck {
            match files.get(key) {
                Some(&f) => targets.push(f),
                None => return Err(format!(".ai/{} could not be loaded again", key.1)),
            }
        }
        let loaded = Loaded::Some(loader.probed_items().clone());
        let mut needs: Vec<String> = Vec::new();
        for &f in &targets {
            let wanted = if tool_id(host.db(), f).is_some() {
                file_chain_needs(host.db(), f, &loaded)
            } else if is_lockfile_rel(f.rel(host.db())) {
                // The ids whose files the lockfile's check resolves and hashes.
                lockfile_chain_ids(host.db(), f)
                    .ids
                    .into_iter()
                    .filter(|id| !loaded.contains(id))
                    .collect()
            } else {
                continue;
            };
            for n in wanted {
                if !needs.contains(&n) {
                    needs.push(n);
                }
            }
        }
        if needs.is_empty() {
            break;
        }
        let c = loader.probe_items(host.analysis(), &needs);
        host.apply(c);
    }
    // A re-checked file's suggestions come from the ids loaded here: they must be the ones of
    // every visible id. The ids every visible id suggests are loaded and the file checked again
    // once; if they still differ, a full run decides.
    let mut round = 0;
    let dep_table = DepIds::default();
    let (db, checked) = loop {
        let db = host.snapshot();
        let integrity = integrity_enabled(&db);
        let checked = par_chunks(&db, &targets, &|db, part| {
            lint_chunk(
                db,
                part,
                lint.opts,
                integrity,
                Some(&dep_table),
                Checks::OneShot,
            )
        });
        if checked.iter().any(LintedFile::cycle) {
            return Err("a re-checked file's chain runs into a cycle".to_owned());
        }
        let mut wanted: Vec<String> = Vec::new();
        for c in &checked {
            let space = space_index(&db, specs, c.file);
            let (Some(missing), Some(kind)) = (c.missing(), space.and_then(kind_of)) else {
                continue;
            };
            let all = new_visible
                .entry(kind)
                .or_insert_with(|| visible(&new_tools, kind));
            let want = closest_ids(all, missing);
            if suggestions(&db, missing, kind) != &want {
                wanted.extend(want.ids);
            }
        }
        if wanted.is_empty() {
            break (db, checked);
        }
        if round > 0 {
            return Err("the suggestions for a missing executor need every id".to_owned());
        }
        round += 1;
        drop(db);
        let c = loader.probe_items(host.analysis(), &wanted);
        host.apply(c);
        let files = files_of(host.db(), specs);
        targets = match recheck.iter().map(|k| files.get(k).copied()).collect() {
            Some(t) => t,
            None => return Err("a re-checked file could not be loaded again".to_owned()),
        };
    };
    let panicked = checked.iter().filter(|c| c.panicked).count();

    // The new cache: entries by (space, rel); the re-checked files' findings replace theirs.
    for &(ci, hash) in &refreshed {
        stamp_entry(&mut data, ci, hash);
    }
    let CacheData {
        key,
        notices,
        ids,
        entries,
        dirs: _,
        findings,
        used_by: _,
    } = data;
    let mut ids = Ids::from(ids);
    let (dep_ids, dep_lists) = dep_table.into_tables();
    let mut map: BTreeMap<(u32, String), (Entry, Vec<Finding>)> = BTreeMap::new();
    let mut owned: Vec<Vec<Finding>> = vec![Vec::new(); entries.len()];
    let mut graph: Vec<Finding> = Vec::new();
    for (owner, f) in findings {
        match owned.get_mut(owner as usize) {
            Some(v) => v.push(f),
            None => graph.push(f),
        }
    }
    for (i, (e, fs)) in entries.into_iter().zip(owned).enumerate() {
        if removed_set.contains(&u32::try_from(i).unwrap_or(u32::MAX)) {
            continue;
        }
        map.insert((e.space, e.rel.to_string()), (e, fs));
    }
    let hash_of: FxHashMap<usize, u128> = refreshed.iter().copied().collect();
    for &ci in &changed {
        let e = &census.entries[ci];
        let key = (e.space, e.rel.clone());
        map.entry(key.clone()).or_insert_with(|| {
            (
                Entry {
                    space: key.0,
                    rel: Arc::from(key.1.as_str()),
                    kind: Some(e.kind.clone()),
                    content: hash_of.get(&ci).copied().unwrap_or_default(),
                    racy: !trusted(&e.kind, run_start),
                    tool: false,
                    deps: Vec::new(),
                    missing: None,
                },
                Vec::new(),
            )
        });
    }
    for (key, lf) in recheck.iter().zip(checked) {
        if let Some((entry, fs)) = map.get_mut(key) {
            entry.tool = tool_id_ref(&db, lf.file).is_some();
            let (list, missing) = match lf.deps {
                Some(d) => (dep_lists.get(d.list as usize), d.missing),
                None => (None, None),
            };
            entry.deps = list
                .into_iter()
                .flat_map(|l| l.iter())
                .filter_map(|&d| dep_ids.get(d as usize))
                .map(|d| ids.intern(d))
                .collect();
            entry.missing = missing.map(String::from);
            *fs = lf.findings;
        }
    }
    let mut entries = Vec::with_capacity(map.len());
    let mut findings: Vec<(u32, Finding)> = Vec::new();
    for (_, (e, fs)) in map {
        let i = u32::try_from(entries.len()).unwrap_or(u32::MAX);
        findings.extend(fs.into_iter().map(|f| (i, f)));
        entries.push(e);
    }
    findings.extend(graph.into_iter().map(|f| (GRAPH, f)));
    findings.sort_by(|a, b| compare_findings(&a.1, &b.1));
    let new = CacheData {
        key,
        notices,
        ids: ids.ids,
        entries,
        // Set by the caller from this run's census.
        dirs: Vec::new(),
        findings,
        used_by: Vec::new(),
    };
    Ok(Partial {
        how: How::Partial {
            rechecked: recheck.len(),
            changed: changed.len() + removed.len(),
            reread,
        },
        data: new,
        write: true,
        internal_errors: panicked,
    })
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[derive(Deserialize)]
    struct Table<'a> {
        #[serde(borrow)]
        dirs: DirTable<'a>,
    }

    /// The directory table reads each record back as written, in place; a table whose records
    /// are cut short does not decode, and a record that points past the text (or whose strings
    /// are not UTF-8) is `None`, never a panic or a record read from the wrong bytes.
    #[test]
    fn directory_records_read_back_in_place_and_damage_is_refused() {
        let settled = [
            Settled {
                token: 7,
                fingerprint: u128::MAX - 3,
            },
            Settled::NONE,
        ];
        let stamp = FileStamp {
            size: u64::MAX,
            mtime_ns: -5,
            ctime_ns: i64::MAX,
            ino: 1 << 40,
            dev: 9,
            mode: 0o40755,
        };
        let out = |space, rel, names, settled, first_child, children| DirOut {
            space,
            rel,
            stamp: &stamp,
            names,
            settled,
            first_child,
            children,
        };
        let dirs = [
            out(1, "tools", "a\0b.py\0", &settled[..], 1, 1),
            out(0, "tools/a", "", &[][..], 0, 0),
            out(u32::MAX, "tools/é", "x.py\0", &settled[..1], 2, 0),
        ];
        let (records, text) = DirTable::build(&dirs);
        let bytes = postcard::to_allocvec(&((Raw(records.clone()), Raw(text.clone())),)).unwrap();
        let read: Table<'_> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(read.dirs.len(), 3);
        for (i, d) in dirs.iter().enumerate() {
            let r = read.dirs.get(i).unwrap();
            assert_eq!(
                (r.space, r.rel, r.names, r.first_child, r.children),
                (d.space, d.rel, d.names, d.first_child, d.children)
            );
            assert_eq!(r.stamp, stamp);
            let back: Vec<Settled> = SettledRecords::new(r.settled).unwrap().iter().collect();
            assert_eq!(back, d.settled);
        }
        assert!(read.dirs.get(3).is_none());
        assert_eq!(read.dirs.iter().count(), 3);
        // Records cut short: the table does not decode.
        let short = postcard::to_allocvec(&((
            Raw(records[..records.len() - 1].to_vec()),
            Raw(text.clone()),
        ),))
        .unwrap();
        assert!(postcard::from_bytes::<Table<'_>>(&short).is_err());
        // The text cut short: the last record points past it (the others read as before).
        let cut = DirTable {
            records: &records,
            text: &text[..text.len() - 1],
        };
        assert!(cut.get(2).is_none());
        assert_eq!(cut.get(0).unwrap().rel, "tools");
        // A record whose offset is past the text, and one whose rel is not UTF-8.
        let mut far = records.clone();
        far[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        let far = DirTable {
            records: &far,
            text: &text,
        };
        assert!(far.get(0).is_none() && far.get(1).is_some());
        let mut bad = text.clone();
        bad[0] = 0xff;
        let bad = DirTable {
            records: &records,
            text: &bad,
        };
        assert!(bad.get(0).is_none() && bad.raw(0).is_some());
    }

    fn dir(space: u32, rel: &str) -> CensusDir {
        CensusDir {
            space,
            rel: rel.to_owned(),
            stamp: FileStamp {
                size: rel.len() as u64,
                mtime_ns: 1,
                ctime_ns: 2,
                ino: 3,
                dev: 4,
                mode: 0o40755,
            },
            names: format!("{rel}-name\0"),
            settled: Vec::new(),
        }
    }

    #[test]
    fn every_directory_is_found_by_its_path_and_by_its_name_under_its_parent() {
        // Two spaces with the same paths; a directory whose parent has no record (`tools/x` is
        // missing: `tools/x/y` is found by path only); names that sort differently from paths.
        let rels = [
            (0, "tools"),
            (0, "tools/b"),
            (0, "tools/a"),
            (0, "tools/a/z"),
            (0, "tools/a/b-c"),
            (0, "tools/a/b"),
            (0, "tools/x/y"),
            (0, "knowledge"),
            (1, "tools"),
            (1, "tools/a"),
        ];
        let dirs: Vec<CensusDir> = rels.iter().map(|&(s, r)| dir(s, r)).collect();
        let data = CacheData {
            key: CacheKey::new(None, &Settings::default(), &[], None),
            notices: Vec::new(),
            dirs,
            ids: Vec::new(),
            entries: Vec::new(),
            findings: Vec::new(),
            used_by: Vec::new(),
        };
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("cache.bin");
        store::write(&path, &data).unwrap();
        let store::Read::Hit(payload) = store::read(&path) else {
            panic!("the cache was not read back");
        };
        payload.check().unwrap();
        let (head, _) = payload.head().unwrap();
        assert_eq!(head.dirs.len(), rels.len());
        for &(space, rel) in &rels {
            let i = head.dir(space, KnownAt::Rel(rel)).unwrap();
            let d = head.dirs.get(i).unwrap();
            assert_eq!((d.space, d.rel), (space, rel));
            assert_eq!(d.names, format!("{rel}-name\0"));
            if let Some((parent, name)) = rel.rsplit_once('/') {
                let Some(p) = head.dir(space, KnownAt::Rel(parent)) else {
                    assert_eq!(rel, "tools/x/y");
                    continue;
                };
                // Found whatever its hint: the right place, another sibling's (`b` beside
                // `b-c`), past the children, far out.
                for nth in (0..5).chain([u32::MAX]) {
                    let child = head.dir(
                        space,
                        KnownAt::Child {
                            parent: p as u32,
                            name,
                            nth,
                        },
                    );
                    assert_eq!(child, Some(i), "{rel} at {nth}");
                }
            }
        }
        // The hint is the place among the sorted names: `tools/a`'s are `b`, `b-c`, `z`.
        let a = head.dir(0, KnownAt::Rel("tools/a")).unwrap();
        let first = head.dirs.get(a).unwrap().first_child as usize;
        for (nth, name) in ["b", "b-c", "z"].into_iter().enumerate() {
            let rel = head.dirs.get(first + nth).unwrap().rel;
            assert_eq!(rel, format!("tools/a/{name}"));
        }
        // Near misses: an unknown name, a known name under another parent, the other space.
        let a = head.dir(0, KnownAt::Rel("tools/a")).unwrap() as u32;
        let b = head.dir(0, KnownAt::Rel("tools/b")).unwrap() as u32;
        assert_eq!(
            head.dir(
                0,
                KnownAt::Child {
                    parent: a,
                    name: "q",
                    nth: 0
                }
            ),
            None
        );
        assert_eq!(
            head.dir(
                0,
                KnownAt::Child {
                    parent: b,
                    name: "z",
                    nth: 0
                }
            ),
            None
        );
        assert_eq!(
            head.dir(
                1,
                KnownAt::Child {
                    parent: a,
                    name: "z",
                    nth: 2
                }
            ),
            None
        );
        assert_eq!(head.dir(1, KnownAt::Rel("knowledge")), None);
        assert_eq!(
            head.dir(
                0,
                KnownAt::Child {
                    parent: u32::MAX,
                    name: "a",
                    nth: 0
                }
            ),
            None
        );
        // And back: the records as they were, in the head's order.
        let again = payload.data().unwrap();
        let mut got: Vec<(u32, String)> = again
            .dirs
            .iter()
            .map(|d| (d.space, d.rel.clone()))
            .collect();
        got.sort();
        let mut want: Vec<(u32, String)> = rels.iter().map(|&(s, r)| (s, r.to_owned())).collect();
        want.sort();
        assert_eq!(got, want);
    }
}
