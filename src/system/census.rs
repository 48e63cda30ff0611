//! L1 the census walk's contract (`System::walk_stamped`): a walk that stamps every file, lists
//! the directories it read (`DirListing`), and may take a directory or a file on trust when an
//! earlier census vouches for its stamp (`KnownDir`, `Settled` records, read in place from the
//! bytes the lint cache keeps). It lives with the walk because the OS walker reads these records
//! while it walks; the lint cache (L6) only fills and keeps them.

use std::path::{Path, PathBuf};

use super::{FileStamp, WalkEntry};

/// A directory as a census listed it: its stamp, and the names of its entries in byte order,
/// each followed by a `\0` (one allocation per directory). Only for directories whose entries were all regular
/// files and directories with UTF-8 names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirListing {
    pub path: PathBuf,
    pub stamp: FileStamp,
    pub names: String,
}

/// What an earlier census vouches for in a directory whose stamp is unchanged. Adding, removing
/// or renaming an entry changes a directory's `mtime` and `ctime`, so an unchanged stamp means
/// the same names (the lint cache only vouches for stamps older than its run's racy window).
#[derive(Clone, Copy, Debug)]
pub struct KnownDir<'a> {
    /// The names (as in [`DirListing::names`]).
    pub names: &'a str,
    /// Empty, or one record per name: a regular file whose stamp the earlier run trusted, by
    /// that stamp's fingerprint and a token of the caller's. A name stamped with the same
    /// fingerprint again is *settled*: the walk gives its token ([`WalkStamped::settled`])
    /// instead of an entry.
    pub settled: SettledRecords<'a>,
    /// The caller's token for the directory: the walk names it back when it asks about the
    /// directory's subdirectories ([`MetDir::Child`]) and when it took it on trust
    /// ([`WalkStamped::vouched`]).
    pub token: u32,
}

/// Where a census walk met a directory it asks `known` about.
#[derive(Clone, Copy, Debug)]
pub enum MetDir<'p> {
    /// By its path: the walk's root, or a directory below one the walk read.
    Path(&'p Path),
    /// By its name in the directory `known` vouched for with this token, and its place among
    /// that directory's subdirectories in the order of its names (a hint: names are listed
    /// sorted, as the caller keeps subdirectories, so the one at that place is likely it).
    Child {
        parent: u32,
        name: &'p str,
        nth: u32,
    },
}

/// A name's record in [`KnownDir::settled`]; `token` is [`Settled::NONE`] for a name that has
/// none (a directory, a file whose stamp was not trusted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Settled {
    pub token: u32,
    pub fingerprint: u128,
}

impl Settled {
    pub const NONE: Settled = Settled {
        token: u32::MAX,
        fingerprint: 0,
    };
    /// Bytes of a packed record ([`SettledRecords`]).
    pub const PACKED: usize = 4 + 16;

    /// What a settled name adds to [`WalkStamped::settled_digest`]: a 128-bit hash of its token
    /// and the fingerprint that matched, summed so that the order names are met in does not
    /// matter. The caller checks the sum against its own records' instead of keeping every
    /// fingerprint the walk matched.
    pub fn mix(token: u32, fingerprint: u128) -> u128 {
        xxhash_rust::xxh3::xxh3_128_with_seed(&fingerprint.to_le_bytes(), u64::from(token))
    }
}

/// [`Settled`] records packed as the lint cache stores them (each its token and fingerprint,
/// little-endian, [`Settled::PACKED`] bytes), read in place: a cache's hundred thousand records
/// are walked by the census without being decoded into a list first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SettledRecords<'a>(&'a [u8]);

impl<'a> SettledRecords<'a> {
    /// `None` unless `bytes` is a whole number of records.
    pub fn new(bytes: &'a [u8]) -> Option<SettledRecords<'a>> {
        bytes
            .len()
            .is_multiple_of(Settled::PACKED)
            .then_some(SettledRecords(bytes))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.0.len() / Settled::PACKED
    }

    pub fn iter(&self) -> impl Iterator<Item = Settled> + 'a {
        self.0.chunks_exact(Settled::PACKED).map(|r| {
            let (token, fingerprint) = r.split_at(4);
            Settled {
                token: u32::from_le_bytes(token.try_into().unwrap_or_default()),
                fingerprint: u128::from_le_bytes(fingerprint.try_into().unwrap_or_default()),
            }
        })
    }

    /// `records` packed (what [`SettledRecords::new`] reads).
    pub fn pack(records: &[Settled]) -> Vec<u8> {
        let mut out = Vec::with_capacity(records.len() * Settled::PACKED);
        for r in records {
            out.extend_from_slice(&r.token.to_le_bytes());
            out.extend_from_slice(&r.fingerprint.to_le_bytes());
        }
        out
    }
}

/// What an earlier census vouches for in a directory at the stamp given (`walk_stamped`).
pub type Known<'a> = dyn Fn(MetDir<'_>, &FileStamp) -> Option<KnownDir<'a>> + Sync + 'a;

/// `System::walk_stamped`'s result.
#[derive(Debug, Default)]
pub struct WalkStamped {
    /// The stamped entries (those of settled names left out).
    pub entries: Vec<(WalkEntry, Option<FileStamp>)>,
    /// The directories listed.
    pub listings: Vec<DirListing>,
    /// The tokens of the directories taken on trust (`KnownDir::token`).
    pub vouched: Vec<u32>,
    /// Each settled name's token.
    pub settled: Vec<u32>,
    /// The wrapping sum of [`Settled::mix`] of each settled name's token and the fingerprint
    /// that matched.
    pub settled_digest: u128,
}
