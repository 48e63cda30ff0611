//! L6 when the cache may take a stamp for a file's contents: which census entries must be read
//! again, which directories the next run may take on trust, and the settled records that let
//! the census skip a file whose stamp is the one the cache trusted.

use std::path::Path;

use rustc_hash::FxHashMap;

use crate::load::{CensusDir, CensusKind};
use crate::system::{FileStamp, Settled};

use super::CacheData;
use super::store;

pub(super) fn stamp_of(kind: &CensusKind) -> Option<&FileStamp> {
    match kind {
        CensusKind::Plain(s) => s.as_ref(),
        CensusKind::Link(l) => l.1.as_ref(),
        CensusKind::NotRegular(_) | CensusKind::Error(_) => None,
    }
}

/// Whether a census entry's kind can stand for its contents: a stamp taken well after the file
/// last changed, or an entry the walk classifies by itself (a FIFO, a walk error).
pub(super) fn trusted(kind: &CensusKind, run_start: i64) -> bool {
    match kind {
        CensusKind::Plain(_) | CensusKind::Link(_) => {
            stamp_of(kind).is_some_and(|s| s.settled_before(run_start))
        }
        CensusKind::NotRegular(_) | CensusKind::Error(_) => true,
    }
}

/// Whether a file the cache knows must be read to know it is unchanged: its cached stamp was not
/// trusted, the census meets it differently, or it has no stamp at all.
pub(super) fn needs_read(racy: bool, cached: Option<&CensusKind>, kind: &CensusKind) -> bool {
    let unstamped = stamp_of(kind).is_none()
        && !matches!(kind, CensusKind::NotRegular(_) | CensusKind::Error(_));
    racy || cached != Some(kind) || unstamped
}

/// The directories the cache vouches for next time: those the census listed whose stamps are
/// old enough (the racy window of `trusted`: an entry added in the same clock tick as the
/// listing leaves the stamp as it was), and the records of `old` the census took on trust
/// (`vouched`: their indices). Also whether that differs from `old`.
pub(super) fn next_dirs(
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
pub(super) fn settle_and_write(path: &Path, data: &mut CacheData) -> std::io::Result<()> {
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
