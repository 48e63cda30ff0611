//! L6 the HTTP client primitive's edge (§9.3): sends an `HttpPlan` with `ureq` (blocking, one
//! agent per run, so nothing stays open after it), retries connect and timeout errors with the
//! plan's backoff, and reads the response: the body up to the plan's cap (sync; the rest is never
//! read), or the server-sent events of the stream (stream). It decides nothing the core did not.
#![allow(
    clippy::disallowed_methods,
    reason = "the HTTP edge opens network connections, sleeps between attempts and reads the clock"
)]

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::time::{Duration, Instant};

use crate::exec::http::{HttpEnd, HttpOutcome, HttpPlan, HttpResponse, MAX_STREAM_EVENTS, Mode};

/// Why one attempt got no response, and whether another attempt may help.
struct Failure {
    message: String,
    /// Connect, resolve, timeout and connection errors (§9.3); not a server that speaks
    /// something other than HTTP, nor a bad request.
    retry: bool,
}

/// Send the plan: up to `max_attempts` attempts, sleeping the backoff between them.
pub fn send(plan: &HttpPlan) -> HttpOutcome {
    let start = Instant::now();
    let mut attempt = 0;
    loop {
        attempt += 1;
        match attempt_once(plan) {
            Ok(response) => {
                return HttpOutcome {
                    end: HttpEnd::Response(response),
                    attempts: attempt,
                    duration: start.elapsed(),
                };
            }
            Err(f) if f.retry && attempt < plan.max_attempts => {
                std::thread::sleep(plan.backoff.delay(attempt - 1));
            }
            Err(f) => {
                return HttpOutcome {
                    end: HttpEnd::Failed {
                        attempts: attempt,
                        last: f.message,
                    },
                    attempts: attempt,
                    duration: start.elapsed(),
                };
            }
        }
    }
}

fn agent(plan: &HttpPlan) -> ureq::Agent {
    let t = Some(plan.timeout);
    let builder = ureq::Agent::config_builder()
        // Every status is an answer (§9.3 maps it); redirects are answers too, as the
        // reference's client (which follows none) gave them.
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .user_agent(concat!("ryechain/", env!("CARGO_PKG_VERSION")))
        .accept_encoding("identity");
    let builder = match plan.mode {
        // The whole exchange, body included.
        Mode::Sync => builder.timeout_global(t),
        // A stream may last: the limit is on reaching the server, its answer's head, and each
        // wait for more of the stream.
        Mode::Stream => builder
            .timeout_resolve(t)
            .timeout_connect(t)
            .timeout_send_request(t)
            .timeout_send_body(t)
            .timeout_recv_response(t)
            .timeout_per_read(t),
    };
    builder.build().new_agent()
}

fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        d.as_secs().to_string()
    } else {
        d.as_secs_f64().to_string()
    }
}

/// A ureq error in words, and whether to retry it.
fn failure(plan: &HttpPlan, e: ureq::Error) -> Failure {
    let host = host_of(&plan.url);
    let (message, retry) = match e {
        ureq::Error::Timeout(_) => (
            format!(
                "timed out after {} seconds waiting for {host}",
                seconds(plan.timeout)
            ),
            true,
        ),
        ureq::Error::HostNotFound => (format!("host not found: `{host}` does not resolve"), true),
        ureq::Error::ConnectionFailed => (format!("could not connect to {host}"), true),
        ureq::Error::Io(io) => return io_failure(plan, &io),
        ureq::Error::Protocol(p) => (format!("{host} did not answer in HTTP/1.1 ({p})"), false),
        ureq::Error::LargeResponseHeader(n, max) => (
            format!("{host} sent a response head of more than {max} bytes ({n})"),
            false,
        ),
        ureq::Error::BadUri(u) => (format!("invalid url: {u}"), false),
        ureq::Error::Http(h) => (format!("invalid request: {h}"), false),
        other => (other.to_string(), false),
    };
    Failure { message, retry }
}

fn io_failure(plan: &HttpPlan, io: &std::io::Error) -> Failure {
    let host = host_of(&plan.url);
    // ureq's own errors travel inside io errors while the body is read.
    if let Some(inner) = io.get_ref().and_then(|e| e.downcast_ref::<ureq::Error>()) {
        if let ureq::Error::Timeout(_) = inner {
            return Failure {
                message: format!(
                    "timed out after {} seconds reading the answer of {host}",
                    seconds(plan.timeout)
                ),
                retry: true,
            };
        }
        if let ureq::Error::Protocol(p) = inner {
            return Failure {
                message: format!("{host} did not answer in HTTP/1.1 ({p})"),
                retry: false,
            };
        }
    }
    let message = match io.kind() {
        ErrorKind::ConnectionRefused => format!("connection refused by {host}"),
        ErrorKind::TimedOut | ErrorKind::WouldBlock => format!(
            "timed out after {} seconds waiting for {host}",
            seconds(plan.timeout)
        ),
        ErrorKind::UnexpectedEof => {
            format!("{host} closed the connection before the answer was complete")
        }
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe => {
            format!("{host} reset the connection ({io})")
        }
        _ => format!("connection error with {host}: {io}"),
    };
    Failure {
        message,
        retry: true,
    }
}

fn attempt_once(plan: &HttpPlan) -> Result<HttpResponse, Failure> {
    let agent = agent(plan);
    let mut builder = http::Request::builder()
        .method(plan.method.as_str())
        .uri(plan.url.as_str());
    for (k, v) in &plan.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    let sent = match &plan.body {
        Some(body) => builder
            .body(body.clone().into_bytes())
            .map_err(|e| Failure {
                message: format!("invalid request: {e}"),
                retry: false,
            })
            .and_then(|r| agent.run(r).map_err(|e| failure(plan, e))),
        None => builder
            .body(())
            .map_err(|e| Failure {
                message: format!("invalid request: {e}"),
                retry: false,
            })
            .and_then(|r| agent.run(r).map_err(|e| failure(plan, e))),
    };
    let response = sent?;
    let status = response.status();
    let mut headers: Vec<(String, String)> = Vec::new();
    for (name, value) in response.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match headers.iter_mut().find(|(k, _)| k == name.as_str()) {
            Some((_, v)) => {
                v.push_str(", ");
                v.push_str(&value);
            }
            None => headers.push((name.as_str().to_owned(), value)),
        }
    }
    let declared = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let reader = response.into_body().into_reader();
    let mut out = HttpResponse {
        status: status.as_u16(),
        reason: status.canonical_reason().unwrap_or("").to_owned(),
        headers,
        body: Vec::new(),
        events: Vec::new(),
        events_count: 0,
        truncated: None,
    };
    let cap = plan.output_cap as u64;
    // One byte past the cap tells a body that fits from one that does not; nothing beyond it is
    // read: the agent, and with it the connection, is dropped with the rest unread.
    let mut limited = reader.take(cap.saturating_add(1));
    match plan.mode {
        Mode::Sync => {
            limited
                .read_to_end(&mut out.body)
                .map_err(|e| io_failure(plan, &e))?;
            if out.body.len() as u64 > cap {
                out.body.truncate(plan.output_cap);
                out.truncated = Some(declared);
            }
        }
        Mode::Stream => {
            let mut lines = BufReader::new(limited);
            let mut line = Vec::new();
            let mut read: u64 = 0;
            loop {
                line.clear();
                let n = lines
                    .read_until(b'\n', &mut line)
                    .map_err(|e| io_failure(plan, &e))?;
                if n == 0 {
                    break;
                }
                read += n as u64;
                if read > cap {
                    out.truncated = Some(declared);
                    break;
                }
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end_matches(['\n', '\r']);
                if let Some(rest) = text.strip_prefix("data:") {
                    let event = rest.trim();
                    if !event.is_empty() {
                        out.events_count += 1;
                        if out.events.len() < MAX_STREAM_EVENTS {
                            out.events.push(event.to_owned());
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}
