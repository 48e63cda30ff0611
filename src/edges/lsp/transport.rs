//! The stdio transport of the language server: `Content-Length` framing on stdin/stdout, with
//! JSON-RPC errors for what `lsp-server`'s own reader would die on (a body that is not JSON is
//! answered `-32700 Parse error`, a JSON value that is not a message `-32600 Invalid Request`,
//! and a framing fault — a `Content-Length` a few bytes off, noise between frames — is answered
//! `-32700` and read past up to the next header), so one bad frame never ends the session.

#![allow(
    clippy::disallowed_methods,
    reason = "the language server's edge: it owns stdin and stdout"
)]

use std::io::{self, Write};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};
use lsp_server::{Connection, Message};

/// Frames larger than this are refused (their bytes are skipped up to the next header). Large
/// enough for a 50 MB buffer with JSON escapes.
const MAX_FRAME: usize = 256 * 1024 * 1024;

/// The reader and writer threads; `join` after the connection is dropped.
pub struct IoThreads {
    reader: thread::JoinHandle<()>,
    writer: thread::JoinHandle<()>,
}

impl IoThreads {
    pub fn join(self) {
        let _ = self.reader.join();
        let _ = self.writer.join();
    }
}

/// A connection over this process's stdin and stdout.
pub fn stdio() -> (Connection, IoThreads) {
    let (to_writer, from_server) = unbounded::<Outgoing>();
    let (to_server, from_reader) = bounded::<Message>(0);
    let errors = to_writer.clone();
    let (chunks, from_stdin) = unbounded::<Vec<u8>>();
    // Stdin is read on a thread of its own, so that the framer can wait for a body's last bytes
    // with a deadline (a length a few bytes too large must not stop the session).
    thread::Builder::new()
        .name("lsp-stdin".to_owned())
        .spawn(move || read_chunks(&mut io::stdin().lock(), &chunks))
        .expect("spawning a thread at start-up");
    let reader = thread::Builder::new()
        .name("lsp-reader".to_owned())
        .spawn(move || read_loop(&mut Framer::new(from_stdin), &to_server, &errors))
        .expect("spawning a thread at start-up");
    let (messages, from_messages) = unbounded::<Message>();
    // Server messages reach the writer through their own channel (the `Connection` type wants a
    // `Sender<Message>`), forwarded into the writer's.
    let forward = to_writer;
    let writer = thread::Builder::new()
        .name("lsp-writer".to_owned())
        .spawn(move || write_loop(&from_messages, from_server, forward))
        .expect("spawning a thread at start-up");
    (
        Connection {
            sender: messages,
            receiver: from_reader,
        },
        IoThreads { reader, writer },
    )
}

/// What the writer sends: a server message, or a raw error frame from the reader.
enum Outgoing {
    Raw(String),
}

fn write_loop(messages: &Receiver<Message>, raw: Receiver<Outgoing>, keep: Sender<Outgoing>) {
    // `keep` holds the raw channel open while the reader runs; dropped when messages end.
    let _keep = keep;
    let mut out = io::stdout();
    loop {
        crossbeam_channel::select! {
            recv(messages) -> msg => match msg {
                Ok(msg) => {
                    let mut lock = out.lock();
                    if msg.write(&mut lock).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            recv(raw) -> frame => {
                if let Ok(Outgoing::Raw(body)) = frame {
                    let mut lock = out.lock();
                    let ok = write!(lock, "Content-Length: {}\r\n\r\n{body}", body.len())
                        .and_then(|()| lock.flush());
                    if ok.is_err() {
                        return;
                    }
                }
            }
        }
        let _ = out.flush();
    }
}

/// How long a body that is already complete JSON waits for the bytes its `Content-Length` still
/// promises before it is taken as it is (a length a few bytes too large, nothing following).
const QUIET: Duration = Duration::from_millis(300);

/// Header blocks longer than this are not headers: skipped as noise up to the next header.
const MAX_HEADER: usize = 8 * 1024;

/// What the client sent, as frames: `Content-Length` framing that resynchronises on the next
/// `Content-Length` header after any framing fault (a length a few bytes off either way, noise
/// between frames, a bad or oversized length), so one bad frame never stops the session.
struct Framer {
    buf: Vec<u8>,
    chunks: Receiver<Vec<u8>>,
    ended: bool,
}

/// The next thing a [`Framer`] read.
enum Frame {
    /// A body, parsed (once: a frame may be a 50 MB document).
    Json(serde_json::Value),
    /// A body that is not JSON, or a framing fault already resynchronised past; the session
    /// goes on.
    Fault(String),
}

impl Frame {
    fn parse(body: &[u8]) -> Frame {
        match serde_json::from_slice(body) {
            Ok(value) => Frame::Json(value),
            Err(e) => Frame::Fault(e.to_string()),
        }
    }
}

/// The offset of the first `Content-Length` (any case) in `bytes`.
fn header_at(bytes: &[u8]) -> Option<usize> {
    const NAME: &[u8] = b"content-length";
    bytes
        .windows(NAME.len())
        .position(|w| w.eq_ignore_ascii_case(NAME))
}

/// The first JSON value of `bytes` and where it ends, when what follows it is the start of a
/// `Content-Length` header (all of it, or as much as fits).
fn message_then_header(bytes: &[u8]) -> Option<(serde_json::Value, usize)> {
    const NAME: &[u8] = b"content-length";
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter();
    let value = values.next()?.ok()?;
    let end = values.byte_offset();
    let rest = bytes[end..].trim_ascii_start();
    let n = rest.len().min(NAME.len());
    (n > 0 && rest[..n].eq_ignore_ascii_case(&NAME[..n])).then_some((value, end))
}

/// Whether `bytes` is one JSON value (with surrounding whitespace).
fn is_json(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
}

impl Framer {
    fn new(chunks: Receiver<Vec<u8>>) -> Framer {
        Framer {
            buf: Vec::new(),
            chunks,
            ended: false,
        }
    }

    /// Wait for more bytes (at most `wait`, or until the input ends); whether any came.
    fn more(&mut self, wait: Option<Duration>) -> bool {
        if self.ended {
            return false;
        }
        let got = match wait {
            None => self.chunks.recv().ok(),
            Some(t) => match self.chunks.recv_timeout(t) {
                Ok(bytes) => Some(bytes),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => return false,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => None,
            },
        };
        match got {
            Some(bytes) => {
                self.buf.extend_from_slice(&bytes);
                true
            }
            None => {
                self.ended = true;
                false
            }
        }
    }

    /// Take bytes already sent, without waiting; whether any came.
    fn try_more(&mut self) -> bool {
        match self.chunks.try_recv() {
            Ok(bytes) => {
                self.buf.extend_from_slice(&bytes);
                true
            }
            Err(crossbeam_channel::TryRecvError::Empty) => false,
            Err(crossbeam_channel::TryRecvError::Disconnected) => {
                self.ended = true;
                false
            }
        }
    }

    /// The next frame, `None` at the end of input.
    fn next(&mut self) -> Option<Frame> {
        // The start of the next header, skipping (and reporting) anything before it.
        let start = loop {
            if let Some(at) = header_at(&self.buf) {
                break at;
            }
            let noise = self.buf.iter().any(|b| !b.is_ascii_whitespace());
            // Keep a tail that may be the start of a header cut in two.
            let keep = self.buf.len().min(13);
            self.buf.drain(..self.buf.len() - keep);
            if !self.more(None) {
                return noise.then(|| Frame::Fault("bytes outside any frame".to_owned()));
            }
        };
        if self.buf[..start].iter().any(|b| !b.is_ascii_whitespace()) {
            self.buf.drain(..start);
            return Some(Frame::Fault(
                "bytes outside any frame were skipped up to the next header".to_owned(),
            ));
        }
        self.buf.drain(..start);
        // The end of the header block.
        let (headers_end, body_start) = loop {
            let crlf = self.buf.windows(4).position(|w| w == b"\r\n\r\n");
            let lf = self.buf.windows(2).position(|w| w == b"\n\n");
            match (crlf, lf) {
                (Some(a), Some(b)) if b + 1 < a => break (b, b + 2),
                (Some(a), _) => break (a, a + 4),
                (None, Some(b)) => break (b, b + 2),
                (None, None) if self.buf.len() > MAX_HEADER => {
                    self.buf.drain(..1);
                    return Some(Frame::Fault("a header block without an end".to_owned()));
                }
                (None, None) => {
                    if !self.more(None) {
                        return None;
                    }
                }
            }
        };
        let length = match content_length(&self.buf[..headers_end]) {
            Ok(n) => n,
            Err(e) => {
                self.buf.drain(..body_start);
                return Some(Frame::Fault(e));
            }
        };
        // The body: `length` bytes, unless the length is off and the bytes say so. Each byte is
        // searched for a header once, and the JSON check runs only when the input pauses on a
        // `}` (a 50 MB body arrives in 800 chunks).
        let mut scanned: usize = 0;
        loop {
            let have = &self.buf[body_start..];
            if have.len() >= length {
                let frame = match serde_json::from_slice(&have[..length]) {
                    Ok(value) => {
                        self.buf.drain(..body_start + length);
                        Frame::Json(value)
                    }
                    // A length too large swallowed the start of the next frame: one message,
                    // then (part of) a header.
                    Err(_) if let Some((value, end)) = message_then_header(&have[..length]) => {
                        self.buf.drain(..body_start + end);
                        Frame::Json(value)
                    }
                    Err(e) => match header_at(&have[..length]) {
                        Some(cut) => {
                            let frame = Frame::parse(&have[..cut]);
                            self.buf.drain(..body_start + cut);
                            frame
                        }
                        None => {
                            self.buf.drain(..body_start + length);
                            Frame::Fault(e.to_string())
                        }
                    },
                };
                return Some(frame);
            }
            let from = scanned.saturating_sub(13);
            if let Some(next) = header_at(&have[from..]).map(|at| from + at) {
                let frame = Frame::parse(&have[..next]);
                self.buf.drain(..body_start + next);
                return Some(frame);
            }
            scanned = have.len();
            if self.try_more() {
                continue;
            }
            // A complete message whose length promises more: wait a little, then take it.
            let have = &self.buf[body_start..];
            let ends_an_object = have.trim_ascii_end().last() == Some(&b'}');
            let wait = (ends_an_object && is_json(have)).then_some(QUIET);
            if !self.more(wait) {
                if self.ended && !is_json(&self.buf[body_start..]) {
                    return None;
                }
                let frame = Frame::parse(&self.buf[body_start..]);
                self.buf.clear();
                return Some(frame);
            }
        }
    }
}

/// The `Content-Length` of a header block (`Err` says why it has none).
fn content_length(headers: &[u8]) -> Result<usize, String> {
    let text = String::from_utf8_lossy(headers);
    for line in text.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| format!("bad Content-Length `{}`", value.trim()))?;
            if n > MAX_FRAME {
                return Err(format!(
                    "a frame of {n} bytes is over the {MAX_FRAME}-byte limit; it is skipped"
                ));
            }
            return Ok(n);
        }
    }
    Err("a header block without Content-Length".to_owned())
}

/// Read stdin in chunks as they come, until it ends (the framer's source).
fn read_chunks(input: &mut impl io::Read, to: &Sender<Vec<u8>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match input.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
        }
    }
}

fn error_frame(id: &serde_json::Value, code: i32, message: &str) -> Outgoing {
    Outgoing::Raw(
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message},
        })
        .to_string(),
    )
}

/// Read frames until the end of input or an `exit` notification; then drop `to_server`, which
/// the server takes as the end of the session. A framing fault is answered with a `-32700`
/// error and reading goes on from the next header.
fn read_loop(framer: &mut Framer, to_server: &Sender<Message>, errors: &Sender<Outgoing>) {
    while let Some(frame) = framer.next() {
        let value = match frame {
            Frame::Json(value) => value,
            Frame::Fault(e) => {
                let _ = errors.send(error_frame(
                    &serde_json::Value::Null,
                    -32700,
                    &format!("Parse error: {e}"),
                ));
                continue;
            }
        };
        let id = value
            .get("id")
            .cloned()
            .filter(|id| id.is_string() || id.is_number())
            .unwrap_or(serde_json::Value::Null);
        let msg: Message = match serde_json::from_value(value) {
            Ok(m) => m,
            Err(e) => {
                let _ = errors.send(error_frame(&id, -32600, &format!("Invalid Request: {e}")));
                continue;
            }
        };
        let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
        if to_server.send(msg).is_err() || exit {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str, length: usize) -> String {
        format!("Content-Length: {length}\r\n\r\n{body}")
    }

    fn frames(parts: &[&str]) -> String {
        parts.iter().map(|b| frame(b, b.len())).collect()
    }

    /// Run the reader over `input` sent in `chunk`-byte pieces (the input then ends); the
    /// error frames sent and the methods (or ids) that reached the server.
    fn run(input: &str, chunk: usize) -> (Vec<serde_json::Value>, Vec<String>) {
        let (chunks, from_stdin) = unbounded();
        for piece in input.as_bytes().chunks(chunk.max(1)) {
            chunks.send(piece.to_vec()).unwrap();
        }
        drop(chunks);
        let (to_server, from_reader) = unbounded();
        let (errors, raw) = unbounded();
        read_loop(&mut Framer::new(from_stdin), &to_server, &errors);
        drop((to_server, errors));
        let errs = raw
            .iter()
            .map(|Outgoing::Raw(s)| serde_json::from_str(&s).unwrap())
            .collect();
        let got = from_reader
            .iter()
            .map(|m| match m {
                Message::Notification(n) => n.method,
                Message::Request(r) => format!("request {}", r.id),
                Message::Response(r) => format!("response {}", r.id),
            })
            .collect();
        (errs, got)
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
    const PING: &str = r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#;
    const EXIT: &str = r#"{"jsonrpc":"2.0","method":"exit"}"#;

    #[test]
    fn bad_frames_get_errors_and_the_session_goes_on() {
        let input = frames(&[
            "{not json",
            r#"{"jsonrpc":"2.0","id":7,"params":3}"#,
            INIT,
            EXIT,
            r#"{"jsonrpc":"2.0","method":"never-read"}"#,
        ]);
        for chunk in [1, 7, 4096] {
            let (errs, got) = run(&input, chunk);
            assert_eq!(errs.len(), 2, "{errs:?}");
            assert_eq!(errs[0]["error"]["code"], -32700);
            assert_eq!(errs[0]["id"], serde_json::Value::Null);
            assert_eq!(errs[1]["error"]["code"], -32600);
            assert_eq!(errs[1]["id"], 7);
            assert_eq!(got, ["initialized", "exit"], "chunks of {chunk}");
        }
    }

    /// A `Content-Length` a few bytes off, either way, costs that frame at most; the frames
    /// after it are read (the server used to stop answering for ever).
    #[test]
    fn a_length_a_few_bytes_off_resynchronises_on_the_next_header() {
        for off in [-5i64, -1, 1, 3, 40] {
            let len = usize::try_from(INIT.len() as i64 + off).unwrap();
            let input = format!(
                "{}{}{}",
                frame(INIT, len),
                frame(PING, PING.len()),
                frame(EXIT, EXIT.len())
            );
            for chunk in [1, 5, 4096] {
                let (errs, got) = run(&input, chunk);
                assert!(
                    got.ends_with(&["request 3".to_owned(), "exit".to_owned()]),
                    "off by {off}, chunks of {chunk}: {got:?} {errs:?}"
                );
                if off > 0 {
                    // Too long: the message itself is still read.
                    assert_eq!(got[0], "initialized", "off by {off}");
                } else {
                    assert_eq!(errs[0]["error"]["code"], -32700, "off by {off}");
                }
            }
        }
    }

    /// The last message with a length too large and nothing after it: answered after a short
    /// wait instead of never.
    #[test]
    fn a_last_message_with_a_length_too_large_is_taken_after_a_short_wait() {
        let (chunks, from_stdin) = unbounded();
        chunks
            .send(frame(PING, PING.len() + 3).into_bytes())
            .unwrap();
        let (to_server, from_reader) = unbounded();
        let (errors, _raw) = unbounded();
        let reader =
            thread::spawn(move || read_loop(&mut Framer::new(from_stdin), &to_server, &errors));
        let got = from_reader
            .recv_timeout(Duration::from_secs(10))
            .expect("the request arrives though its length promised more");
        assert!(matches!(got, Message::Request(r) if r.method == "shutdown"));
        drop(chunks);
        reader.join().unwrap();
    }

    #[test]
    fn noise_and_bad_lengths_are_skipped_up_to_the_next_header() {
        let input = format!(
            "garbage\r\n{}Content-Length: lots\r\n\r\n{{}}Content-Length: 999999999999\r\n\r\n{}",
            frame(INIT, INIT.len()),
            frame(EXIT, EXIT.len())
        );
        let (errs, got) = run(&input, 3);
        assert_eq!(got, ["initialized", "exit"], "{errs:?}");
        assert!(errs.len() >= 3, "{errs:?}");
        assert!(errs.iter().all(|e| e["error"]["code"] == -32700));
    }
}
