//! L6 the lint cache's payload as laid out in the file (`store` writes and checks it): the head
//! a replay of an unchanged tree reads (the key, the directory table, the [`Summary`] the census
//! is checked against), then the findings, then the body (the entries), decoded only when
//! something changed.

use serde::{Deserialize, Serialize};

use crate::diagnostic::Finding;
use crate::load::{CensusKind, KnownAt};
use crate::system::Settled;

use super::dir_table::{Raw, dir_layout};
use super::{CacheData, CacheKey, DirRecord, DirTable, Entry, U32s};

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
pub(super) struct HeadOut<'a> {
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
pub(super) struct BodyOut<'a> {
    ids: &'a [String],
    entries: &'a [Entry],
}

impl CacheData {
    pub(super) fn join(
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
    pub(super) fn encoded(&self) -> (HeadOut<'_>, &[(u32, Finding)], BodyOut<'_>) {
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

impl CacheHead<'_> {
    /// The record of directory `at` of space `space`, if the cache has one (its index).
    pub(super) fn dir(&self, space: u32, at: KnownAt<'_>) -> Option<usize> {
        self.dirs.find(&self.by_rel, space, at)
    }
}
