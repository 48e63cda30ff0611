//! L6 the lint cache's file: its layout (magic, format, version, head length, postcard payload,
//! a trailer of its length and the xxh3-128 of its head and of its body), reading it back with
//! every way it can be broken told apart, and replacing it atomically (a temp file in the same
//! directory, renamed over the old one).
//!
//! The head and the body have a checksum each: a replay of an unchanged tree uses only the head
//! (the census's directories, the findings) and checks only it, never reading the body (two
//! thirds of the file). The checksums find damage (a file cut short, bytes flipped on disk)
//! in what a run uses, before it uses it; they are not a seal:
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
use crate::diagnostic::Finding;

/// First bytes of every cache file.
const MAGIC: &[u8; 16] = b"ryechain-lintc\n\0";
/// Bumped whenever `CacheData`'s layout (or the file's) changes.
pub const FORMAT: u32 = 7;
/// Payload length (u64), the xxh3-128 of the head and that of the body (little-endian).
const TRAILER: usize = 8 + 16 + 16;

/// What a checksum that does not match says.
const DAMAGED: &str = "its checksum does not match (the file is damaged)";

/// What reading the cache file gave.
#[derive(Debug)]
pub enum Read {
    /// A whole cache file of this version, its head read (the checksum: [`Payload::check`]).
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

/// An open cache file whose header and length were checked and whose head was read: the file is
/// the header, the head's length (u64), the payload and the trailer. The payload is the head
/// ([`CacheHead`], then the findings: [`Payload::head`], [`findings`]) and the body
/// ([`Payload::body`]). A run decodes the head first (the census needs it) and checks its
/// checksum beside the census; only a run that needs the entries reads the body (and checks
/// its own). The open file is the one read, whatever replaces it meanwhile.
#[derive(Debug)]
pub struct Payload {
    file: std::fs::File,
    head: Vec<u8>,
    /// Where the body starts and ends in the file.
    body: std::ops::Range<u64>,
    /// The trailer's checksums: of the head, of the body.
    head_sum: [u8; 16],
    body_sum: [u8; 16],
}

/// How much of the body is read at a time to check the checksum.
const CHUNK: usize = 1 << 20;

impl Payload {
    /// The head of the payload, read in place (it borrows the payload's bytes), and the bytes
    /// of the findings after it. Nothing in them may be trusted before [`Payload::check_head`]
    /// passed.
    pub fn head(&self) -> Result<(CacheHead<'_>, &[u8]), String> {
        postcard::take_from_bytes(&self.head).map_err(|e| format!("it cannot be decoded: {e}"))
    }

    /// Read the body, `chunk` by `chunk` (each slice handed to `each`), and check its checksum.
    fn read_body(&self, chunk: usize, each: &mut dyn FnMut(&[u8])) -> Result<(), String> {
        use std::io::{Read as _, Seek};
        let cannot = |e: std::io::Error| format!("it cannot be read: {e}");
        let mut h = Xxh3Default::new();
        (&self.file)
            .seek(std::io::SeekFrom::Start(self.body.start))
            .map_err(cannot)?;
        let mut left = self.body.end - self.body.start;
        let mut buf = vec![0u8; usize::try_from(left).unwrap_or(chunk).min(chunk)];
        while left > 0 {
            let n = usize::try_from(left).unwrap_or(buf.len()).min(buf.len());
            (&self.file).read_exact(&mut buf[..n]).map_err(cannot)?;
            h.update(&buf[..n]);
            each(&buf[..n]);
            left -= n as u64;
        }
        if h.digest128().to_le_bytes() != self.body_sum {
            return Err(DAMAGED.to_owned());
        }
        Ok(())
    }

    /// Whether the head (and the findings in it) is the one its checksum was taken of.
    pub fn check_head(&self) -> Result<(), String> {
        if xxhash_rust::xxh3::xxh3_128(&self.head).to_le_bytes() != self.head_sum {
            return Err(DAMAGED.to_owned());
        }
        Ok(())
    }

    /// Whether the whole payload is the one its checksums were taken of.
    pub fn check(&self) -> Result<(), String> {
        self.check_head()?;
        self.read_body(CHUNK, &mut |_| {})
    }

    /// The body's bytes, its checksum checked.
    pub fn body(&self) -> Result<Vec<u8>, String> {
        let len = usize::try_from(self.body.end - self.body.start)
            .map_err(|_| "it is too large".to_owned())?;
        let mut bytes = Vec::with_capacity(len);
        self.read_body(len.max(1), &mut |part| bytes.extend_from_slice(part))?;
        Ok(bytes)
    }

    /// The whole payload at once, checked (what a run decodes in steps).
    #[cfg(any(test, feature = "testing"))]
    pub fn data(&self) -> Result<CacheData, String> {
        self.check_head()?;
        let bytes = self.body()?;
        let (head, rest) = self.head()?;
        let found = findings(rest)?;
        CacheData::join(head, found, body(&bytes)?)
    }
}

/// The findings after [`Payload::head`] (they end the head).
pub fn findings(rest: &[u8]) -> Result<Vec<(u32, Finding)>, String> {
    match postcard::take_from_bytes(rest) {
        Ok((found, [])) => Ok(found),
        Ok(_) => Err("its head is longer than it says".to_owned()),
        Err(e) => Err(format!("it cannot be decoded: {e}")),
    }
}

/// The body ([`Payload::body`]); all of it must decode.
pub fn body(bytes: &[u8]) -> Result<CacheBody, String> {
    postcard::from_bytes(bytes).map_err(|e| format!("it cannot be decoded: {e}"))
}

/// Open the cache file, check its header and length, and read its head.
fn open(file: std::fs::File) -> Result<Payload, String> {
    use std::io::{Read as _, Seek};
    let cannot = |e: std::io::Error| format!("it cannot be read: {e}");
    let size = file.metadata().map_err(cannot)?.len();
    let mut start = vec![0u8; usize::try_from(size.min(512)).unwrap_or(512)];
    (&file).read_exact(&mut start).map_err(cannot)?;
    if start.len() < MAGIC.len() || &start[..MAGIC.len()] != MAGIC {
        return Err("it is not a ryechain lint cache".to_owned());
    }
    let rest = &start[MAGIC.len()..];
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
    let Some(head_len) = rest.get(6 + vlen..6 + vlen + 8) else {
        return Err("it is cut short".to_owned());
    };
    let head_len = u64::from_le_bytes(head_len.try_into().unwrap_or_default());
    let payload_start = (MAGIC.len() + 6 + vlen + 8) as u64;
    let Some(payload_len) = size.checked_sub(payload_start + TRAILER as u64) else {
        return Err("it is cut short".to_owned());
    };
    let mut trailer = [0u8; TRAILER];
    (&file)
        .seek(std::io::SeekFrom::Start(payload_start + payload_len))
        .and_then(|_| (&file).read_exact(&mut trailer))
        .map_err(cannot)?;
    let len = u64::from_le_bytes(trailer[..8].try_into().unwrap_or_default());
    if len != payload_len {
        return Err(format!(
            "it is cut short or padded ({payload_len} payload bytes, {len} expected)"
        ));
    }
    if head_len > payload_len {
        return Err("its head is longer than the file".to_owned());
    }
    let mut head = vec![0u8; usize::try_from(head_len).map_err(|_| "it is too large".to_owned())?];
    read_at(&file, &mut head, payload_start).map_err(cannot)?;
    let mut head_sum = [0u8; 16];
    head_sum.copy_from_slice(&trailer[8..24]);
    let mut body_sum = [0u8; 16];
    body_sum.copy_from_slice(&trailer[24..]);
    Ok(Payload {
        file,
        head,
        body: payload_start + head_len..payload_start + payload_len,
        head_sum,
        body_sum,
    })
}

/// Fill `buf` from `file` at `offset`: in two halves on two threads where the file can be read
/// at an offset, which halves the time an unchanged tree's replay waits for its head (most of
/// it the faults of the fresh buffer's pages, then the copy, a few MB).
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        let (a, b) = buf.split_at_mut(buf.len() / 2);
        let at_b = offset + a.len() as u64;
        let (ra, rb) = rayon::join(
            || file.read_exact_at(a, offset),
            || file.read_exact_at(b, at_b),
        );
        ra.and(rb)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read as _, Seek};
        (&*file).seek(std::io::SeekFrom::Start(offset))?;
        (&*file).read_exact(buf)
    }
}

/// Read the cache file at `path` (its head; [`Payload::body`] reads the rest).
pub fn read(path: &Path) -> Read {
    // Non-blocking, so that a FIFO (or a device) at the cache's path cannot hang the lint on
    // its open; anything but a regular file is discarded before a byte is read.
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    match opts.open(path) {
        Ok(file) if !file.metadata().is_ok_and(|m| m.is_file()) => {
            Read::Discarded("it is not a regular file".to_owned())
        }
        Ok(file) => match open(file) {
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

/// Encode `data` into `out`: the head and findings (encoded first, their length goes before
/// them), then the body streamed (never held whole in memory; postcard's many small writes are
/// buffered before they reach the hash and the file).
pub fn encode(data: &CacheData, mut out: impl Write) -> std::io::Result<()> {
    let (head, findings, body) = data.encoded();
    let head = postcard::to_allocvec(&(head, findings)).map_err(std::io::Error::other)?;
    let head_sum = xxhash_rust::xxh3::xxh3_128(&head);
    out.write_all(&header())?;
    out.write_all(&(head.len() as u64).to_le_bytes())?;
    out.write_all(&head)?;
    let head_len = head.len() as u64;
    drop(head);
    let mut w = std::io::BufWriter::with_capacity(
        1 << 20,
        Hashing {
            inner: out,
            hasher: Xxh3Default::new(),
            len: 0,
        },
    );
    postcard::to_io(&body, &mut w).map_err(std::io::Error::other)?;
    let Hashing {
        mut inner,
        hasher,
        len,
    } = w
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    inner.write_all(&(head_len + len).to_le_bytes())?;
    inner.write_all(&head_sum.to_le_bytes())?;
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
