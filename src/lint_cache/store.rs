//! L6 the lint cache's file: its layout (magic, format, version, postcard payload, length and
//! xxh3-128 trailer), reading it back with every way it can be broken told apart, and replacing it
//! atomically (a temp file in the same directory, renamed over the old one).
//!
//! The checksum finds damage (a file cut short, bytes flipped on disk); it is not a seal:
//! whoever can write the cache file can write its checksum too, so a cryptographic hash would
//! buy nothing but time (SHA-256 over a 100k tree's 15 MB cache ran before the census could
//! start, on an unchanged tree's critical path).
#![allow(
    clippy::disallowed_methods,
    reason = "the edge that reads and writes the cache file"
)]

use std::io::Write;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3Default;

use super::{CacheBody, CacheData, CacheHead};

/// First bytes of every cache file.
const MAGIC: &[u8; 16] = b"ryechain-lintc\n\0";
/// Bumped whenever `CacheData`'s layout (or the file's) changes.
pub const FORMAT: u32 = 4;
/// Payload length (u64) and its xxh3-128 (little-endian).
const TRAILER: usize = 8 + 16;

/// What reading the cache file gave.
#[derive(Debug)]
pub enum Read {
    /// A whole, undamaged cache file of this version.
    Hit(Payload),
    /// No cache file (the first run, or `--no-cache` runs only).
    Missing,
    /// A file is there but cannot be used; the text says why (shown as a warning).
    Discarded(String),
}

fn header() -> Vec<u8> {
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    let mut h = Vec::with_capacity(MAGIC.len() + 6 + version.len());
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&FORMAT.to_le_bytes());
    h.extend_from_slice(&u16::try_from(version.len()).unwrap_or(0).to_le_bytes());
    h.extend_from_slice(version);
    h
}

/// A cache file's bytes whose header, length and checksum were checked: its payload decodes in
/// two steps ([`Payload::head`], then [`body`] of the rest).
#[derive(Debug)]
pub struct Payload {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl Payload {
    /// The head of the payload, and the bytes after it.
    pub fn head(&self) -> Result<(CacheHead, &[u8]), String> {
        postcard::take_from_bytes(&self.bytes[self.start..self.end])
            .map_err(|e| format!("it cannot be decoded: {e}"))
    }

    /// The whole payload at once (what a run decodes in two steps).
    pub fn data(&self) -> Result<CacheData, String> {
        let (head, rest) = self.head()?;
        Ok(CacheData::join(head, body(rest)?))
    }
}

/// The rest of the payload after [`Payload::head`]; all of it must decode.
pub fn body(rest: &[u8]) -> Result<CacheBody, String> {
    postcard::from_bytes(rest).map_err(|e| format!("it cannot be decoded: {e}"))
}

/// Check a cache file's header, length and checksum.
fn verify(bytes: Vec<u8>) -> Result<Payload, String> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err("it is not a ryechain lint cache".to_owned());
    }
    let rest = &bytes[MAGIC.len()..];
    let (Some(format), Some(vlen)) = (rest.get(..4), rest.get(4..6)) else {
        return Err("it is cut short".to_owned());
    };
    let format = u32::from_le_bytes(format.try_into().unwrap_or_default());
    let vlen = usize::from(u16::from_le_bytes(vlen.try_into().unwrap_or_default()));
    let Some(version) = rest.get(6..6 + vlen) else {
        return Err("it is cut short".to_owned());
    };
    let version = String::from_utf8_lossy(version);
    if format != FORMAT || version != env!("CARGO_PKG_VERSION") {
        return Err(format!(
            "it was written by ryechain {version} (cache format {format}); this is ryechain {} (format {FORMAT})",
            env!("CARGO_PKG_VERSION")
        ));
    }
    let body = &rest[6 + vlen..];
    if body.len() < TRAILER {
        return Err("it is cut short".to_owned());
    }
    let (payload, trailer) = body.split_at(body.len() - TRAILER);
    let len = u64::from_le_bytes(trailer[..8].try_into().unwrap_or_default());
    if len != payload.len() as u64 {
        return Err(format!(
            "it is cut short or padded ({} payload bytes, {len} expected)",
            payload.len()
        ));
    }
    if xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes() != trailer[8..] {
        return Err("its checksum does not match (the file is damaged)".to_owned());
    }
    let start = MAGIC.len() + 6 + vlen;
    let end = start + payload.len();
    Ok(Payload { bytes, start, end })
}

/// Read the cache file at `path`.
pub fn read(path: &Path) -> Read {
    match std::fs::read(path) {
        Ok(bytes) => match verify(bytes) {
            Ok(payload) => Read::Hit(payload),
            Err(why) => Read::Discarded(why),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Read::Missing,
        Err(e) => Read::Discarded(format!("it cannot be read: {e}")),
    }
}

/// Counts and hashes what goes through it.
struct Hashing<W: Write> {
    inner: W,
    hasher: Xxh3Default,
    len: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Encode `data` into `out`, streamed (the payload is never held whole in memory): postcard's
/// many small writes are buffered before they reach the hash and the file.
pub fn encode(data: &CacheData, mut out: impl Write) -> std::io::Result<()> {
    out.write_all(&header())?;
    let mut w = std::io::BufWriter::with_capacity(
        1 << 20,
        Hashing {
            inner: out,
            hasher: Xxh3Default::new(),
            len: 0,
        },
    );
    postcard::to_io(data, &mut w).map_err(std::io::Error::other)?;
    let Hashing {
        mut inner,
        hasher,
        len,
    } = w
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    inner.write_all(&len.to_le_bytes())?;
    inner.write_all(&hasher.digest128().to_le_bytes())?;
    inner.flush()
}

/// Replace the cache file at `path` with `data`: written to a temp file beside it, then renamed
/// over it, so a concurrent reader sees the old file or the new one, never a mix (and a run cut
/// short leaves at worst a temp file, or a truncated file the checksum refuses).
pub fn write(path: &Path, data: &CacheData) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = path
        .file_name()
        .map_or_else(|| "cache".into(), |n| n.to_string_lossy().into_owned());
    let tmp: PathBuf = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        encode(data, file)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
