//! The stdio transport of the language server: `Content-Length` framing on stdin/stdout, with
//! JSON-RPC errors for what `lsp-server`'s own reader would die on (a body that is not JSON is
//! answered `-32700 Parse error`, a JSON value that is not a message `-32600 Invalid Request`),
//! so one bad frame never ends the session.

#![allow(
    clippy::disallowed_methods,
    reason = "the language server's edge: it owns stdin and stdout"
)]

use std::io::{self, BufRead, Write};
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};
use lsp_server::{Connection, Message};

/// Frames larger than this are refused (and the session ends: the stream cannot be resynced
/// without reading them). Large enough for a 50 MB buffer with JSON escapes.
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
    let reader = thread::Builder::new()
        .name("lsp-reader".to_owned())
        .spawn(move || read_loop(&mut io::stdin().lock(), &to_server, &errors))
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

/// One frame's body, `Ok(None)` at the end of the stream.
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            continue; // blank lines between frames
        }
        let (name, value) = header
            .split_once(':')
            .ok_or_else(|| io::Error::other(format!("malformed header line `{header}`")))?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| io::Error::other(format!("bad Content-Length `{}`", value.trim())))?;
            if n > MAX_FRAME {
                return Err(io::Error::other(format!(
                    "a frame of {n} bytes is over the {MAX_FRAME}-byte limit"
                )));
            }
            length = Some(n);
        }
    }
    let mut body = vec![0; length.unwrap_or(0)];
    input.read_exact(&mut body)?;
    Ok(Some(body))
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

/// Read frames until the end of input, an `exit` notification, or a stream that cannot be
/// resynced; then drop `to_server`, which the server takes as the end of the session.
fn read_loop(input: &mut impl BufRead, to_server: &Sender<Message>, errors: &Sender<Outgoing>) {
    loop {
        let body = match read_frame(input) {
            Ok(Some(body)) => body,
            Ok(None) => return,
            Err(e) => {
                let _ = errors.send(error_frame(
                    &serde_json::Value::Null,
                    -32700,
                    &format!("Parse error: {e}; closing the session"),
                ));
                return;
            }
        };
        let value: serde_json::Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
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

    fn frames(parts: &[&str]) -> Vec<u8> {
        parts
            .iter()
            .flat_map(|b| format!("Content-Length: {}\r\n\r\n{b}", b.len()).into_bytes())
            .collect()
    }

    #[test]
    fn bad_frames_get_errors_and_the_session_goes_on() {
        let input = frames(&[
            "{not json",
            r#"{"jsonrpc":"2.0","id":7,"params":3}"#,
            r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"exit"}"#,
            r#"{"jsonrpc":"2.0","method":"never-read"}"#,
        ]);
        let (to_server, from_reader) = unbounded();
        let (errors, raw) = unbounded();
        read_loop(&mut io::Cursor::new(input), &to_server, &errors);
        drop((to_server, errors));
        let errs: Vec<serde_json::Value> = raw
            .iter()
            .map(|Outgoing::Raw(s)| serde_json::from_str(&s).unwrap())
            .collect();
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0]["error"]["code"], -32700);
        assert_eq!(errs[0]["id"], serde_json::Value::Null);
        assert_eq!(errs[1]["error"]["code"], -32600);
        assert_eq!(errs[1]["id"], 7);
        let methods: Vec<String> = from_reader
            .iter()
            .map(|m| match m {
                Message::Notification(n) => n.method,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(methods, ["initialized", "exit"]);
    }

    #[test]
    fn headers_that_cannot_be_resynced_end_the_session() {
        let (to_server, from_reader) = unbounded();
        let (errors, raw) = unbounded();
        read_loop(
            &mut io::Cursor::new(b"Content-Length: lots\r\n\r\n{}".to_vec()),
            &to_server,
            &errors,
        );
        drop((to_server, errors));
        assert_eq!(raw.iter().count(), 1);
        assert_eq!(from_reader.iter().count(), 0);
    }
}
