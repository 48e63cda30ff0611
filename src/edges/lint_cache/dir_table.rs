//! L6 the lint cache's directory table: the census's directories as fixed-size records and the
//! text they point into, read in place from the cache file's bytes, and found by path or by name
//! under their parent without decoding anything.
//!
//! Layout. The table is two byte strings of the payload (postcard writes each as its length, then
//! itself): `records`, one [`DIR_RECORD`]-byte record per directory, and `text`, the strings the
//! records point into. A record holds, little-endian: the offset of its strings in `text` (u64);
//! the lengths of its rel, its names (each followed by `\0`) and its packed `Settled` records
//! (u32 each, the strings in that order from the offset); its space, first child and number of
//! children (u32 each); its stamp (size, mtime, ctime, inode, device: 8 bytes each; mode: 4).
//! (The settled records are packed by `system::SettledRecords`, beside the walker that reads
//! them.)
//! The records are laid out breadth first ([`dir_layout`]): a directory's subdirectories are the
//! records `first_child..first_child + children`, sorted by name, so the census asks about a
//! subdirectory by its parent's index and its name (`KnownAt::Child`); `by_rel` ([`U32s`]) is the
//! records' indices sorted by (space, rel), for a directory met by its path (`KnownAt::Rel`).
//!
//! Why by hand: the table is on the critical path of every cached run, before the census can
//! start. Decoded by postcard into a list, a 100k-tool tree's 23k directories took 3.4 ms on one
//! core before the census could begin; read in place, nothing is decoded until the census asks for
//! a record, and a record's strings are checked to be UTF-8 only when it is taken whole
//! ([`DirTable::get`]). Measured when it was made, the replay of an unchanged tree took a median
//! of 92.5 ms with the postcard table and 88.2 ms with this one (30 alternating runs): about 5%.
//! Every read is bounds-checked: a damaged table gives `None` or a decoding error, never a panic
//! (the file's checksum is checked beside the census, before anything read here is used).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::load::{CensusDir, KnownAt};
use crate::system::{FileStamp, Settled, SettledRecords};

/// Bytes of a record of [`DirTable`]: where its rel, names and settled records are (u64, then
/// their lengths, u32 each), its space, first child and number of children (u32 each), its
/// stamp (size, mtime, ctime, inode, device: 8 bytes each; mode: 4), little-endian.
pub const DIR_RECORD: usize = 8 + 6 * 4 + 5 * 8 + 4;

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
pub(super) struct RawDir<'a> {
    pub space: u32,
    pub rel: &'a [u8],
    pub names: &'a [u8],
    pub settled: &'a [u8],
    pub first_child: u32,
    pub children: u32,
    pub stamp: FileStamp,
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
    pub(super) fn raw(&self, i: usize) -> Option<RawDir<'a>> {
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
    pub(super) fn build(dirs: &[DirOut<'_>]) -> (Vec<u8>, Vec<u8>) {
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

    pub(super) fn pack(values: &[u32]) -> Vec<u8> {
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
pub(super) struct DirOut<'a> {
    space: u32,
    rel: &'a str,
    stamp: &'a FileStamp,
    names: &'a str,
    settled: &'a [Settled],
    first_child: u32,
    children: u32,
}

/// Bytes written as postcard bytes (their length, then themselves).
pub(super) struct Raw(pub Vec<u8>);

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
pub(super) fn dir_layout(dirs: &[CensusDir]) -> (Vec<DirOut<'_>>, Vec<u32>) {
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

impl DirTable<'_> {
    /// The record of directory `at` of space `space`, if the table has one (its index); `by_rel`
    /// is the table's index by path.
    pub(super) fn find(&self, by_rel: &U32s<'_>, space: u32, at: KnownAt<'_>) -> Option<usize> {
        let i = match at {
            KnownAt::Rel(rel) => {
                let want = Some((space, rel.as_bytes()));
                let key = |k| {
                    let d = self.raw(by_rel.get(k)? as usize)?;
                    Some((d.space, d.rel))
                };
                by_rel.get(search(by_rel.len(), |k| key(k).cmp(&want))?)? as usize
            }
            KnownAt::Child { parent, name, nth } => {
                let p = self.raw(parent as usize)?;
                let first = p.first_child as usize;
                let n = (p.children as usize).min(self.len().saturating_sub(first));
                // A subdirectory's rel is its parent's, a `/` and its name (`dir_layout`).
                let cut = p.rel.len() + 1;
                let name = Some(name.as_bytes());
                let key = |k| self.raw(first + k).and_then(|d| d.rel.get(cut..));
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
        (self.raw(i)?.space == space).then_some(i)
    }
}

impl DirRecord<'_> {
    pub(super) fn into_owned(self) -> CensusDir {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Settings;
    use crate::lint_cache::{CacheData, CacheKey, store};

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

    /// Packed indices read back as written; bytes that are not a whole number of them do not
    /// decode, and an index past the end is `None`.
    #[test]
    fn packed_indices_read_back_and_bad_lengths_are_refused() {
        let values = [0, 1, u32::MAX, 70_000];
        let bytes = postcard::to_allocvec(&Raw(U32s::pack(&values))).unwrap();
        let read: U32s<'_> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(read.len(), values.len());
        for (i, v) in values.iter().enumerate() {
            assert_eq!(read.get(i), Some(*v));
        }
        assert_eq!(read.get(values.len()), None);
        assert_eq!(read.get(usize::MAX), None);
        for len in [1, 2, 3, 5, 15] {
            let bytes = postcard::to_allocvec(&Raw(vec![7; len])).unwrap();
            assert!(
                postcard::from_bytes::<U32s<'_>>(&bytes).is_err(),
                "{len} bytes"
            );
        }
        let empty = postcard::to_allocvec(&Raw(Vec::new())).unwrap();
        let empty: U32s<'_> = postcard::from_bytes(&empty).unwrap();
        assert!(empty.is_empty() && empty.get(0).is_none());
    }

    /// A table cut short anywhere, or with any one byte of its records changed, decodes to an
    /// error or to records that are each `Some` or `None`: never a panic, and never a lookup
    /// that does.
    #[test]
    fn a_damaged_table_is_an_error_or_none_never_a_panic() {
        let dirs: Vec<CensusDir> = ["tools", "tools/a", "tools/a/b", "tools/c"]
            .iter()
            .map(|r| dir(0, r))
            .collect();
        let (out, by_rel) = dir_layout(&dirs);
        let (records, text) = DirTable::build(&out);
        let table = || (Raw(records.clone()), Raw(text.clone()));
        let bytes = postcard::to_allocvec(&(table(), Raw(U32s::pack(&by_rel)))).unwrap();
        let whole: Both<'_> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(
            look(&whole),
            [
                Some("tools"),
                Some("tools/a"),
                Some("tools/c"),
                Some("tools/a/b")
            ]
        );
        for cut in 0..bytes.len() {
            if let Ok(t) = postcard::from_bytes::<Both<'_>>(&bytes[..cut]) {
                look(&t);
            }
        }
        for at in 0..records.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut damaged = records.clone();
                damaged[at] ^= flip;
                let t = DirTable {
                    records: &damaged,
                    text: &text,
                };
                for i in 0..t.len() {
                    let _ = t.get(i);
                }
                let by_rel = U32s::pack(&by_rel);
                let _ = t.find(&U32s(&by_rel), 0, KnownAt::Rel("tools/a/b"));
            }
        }
    }

    #[derive(Deserialize)]
    struct Both<'a>(#[serde(borrow)] DirTable<'a>, #[serde(borrow)] U32s<'a>);

    /// Every record's rel of `t`, after a few lookups (which must not panic).
    fn look<'a>(t: &Both<'a>) -> Vec<Option<&'a str>> {
        let rows: Vec<Option<&str>> = t.0.iter().map(|d| d.map(|d| d.rel)).collect();
        for at in [
            KnownAt::Rel("tools/a"),
            KnownAt::Child {
                parent: 0,
                name: "a",
                nth: 0,
            },
            KnownAt::Child {
                parent: 1,
                name: "b",
                nth: 9,
            },
        ] {
            let _ = t.0.find(&t.1, 0, at);
        }
        rows
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
