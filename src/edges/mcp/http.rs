//! L6 `ryechain mcp --http ADDR`: the MCP server's handler (`server`, the very one stdio serves)
//! over MCP's streamable HTTP transport — rmcp's tower service (`StreamableHttpService`, with its
//! sessions, Host and Origin checks) under hyper's HTTP/1.1 server, at the one endpoint `/mcp`.
//! This module owns what stands in front of it: the bearer token every request must carry (read
//! from `RYECHAIN_MCP_TOKEN` or `--token-file`, never the command line, compared in constant
//! time), the refusal of an address other than loopback without `--allow-remote`, the Host and
//! Origin allow-lists (DNS rebinding), and the shutdown on SIGTERM or ctrl-c, which ends every
//! tool still running (the sessions' cancellation cancels each call, whose worker kills its
//! tool; `runner::end_all_tools` for any process started in the server itself). Stdout stays empty; the bound address and
//! notices go to stderr.
#![allow(
    clippy::disallowed_methods,
    reason = "the HTTP edge reads its token file and checks who may read it"
)]

use std::convert::Infallible;
use std::io::{Read as _, Write as _};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use super::Server;

/// The environment variable that holds the bearer token (when `--token-file` names no file).
pub const TOKEN_ENV: &str = "RYECHAIN_MCP_TOKEN";

/// The one path the transport is served at.
pub const ENDPOINT: &str = "/mcp";

/// The largest token file read (a token is one short line).
const TOKEN_FILE_LIMIT: u64 = 4096;

/// The largest request body accepted: above the 10 MB `parameters` object stdio takes, so both
/// transports answer the same call alike.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How long a shutdown waits for open connections to finish their answers.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The bearer token, kept as its SHA-256 digest: a presented token is hashed and the digests
/// compared in constant time, so neither the token's bytes nor its length show in the timing.
#[derive(Clone)]
pub struct Token {
    digest: [u8; 32],
}

impl Token {
    /// The token in `text` (from `source`, named in errors), less trailing line breaks. Refused:
    /// an empty token, and one with a character an `Authorization` header cannot carry in a
    /// bearer token (a space, a control character, anything not ASCII).
    pub fn new(text: &str, source: &str) -> Result<Token, String> {
        let token = text.trim_end_matches(['\n', '\r']);
        if token.is_empty() {
            return Err(format!("the bearer token in {source} is empty"));
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "the bearer token in {source} holds a space, a control character or a non-ASCII character; an HTTP header cannot carry it (use letters, digits and -._~+/=, e.g. `openssl rand -hex 32`)"
            ));
        }
        Ok(Token {
            digest: Sha256::digest(token.as_bytes()).into(),
        })
    }

    /// Whether `presented` is the token.
    pub fn admits(&self, presented: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented).into();
        digest.ct_eq(&self.digest).into()
    }
}

/// The token `ryechain mcp --http` is started with: the file `token_file` when given, else the
/// environment variable `TOKEN_ENV` (its value `from_env`). A token file must be readable by its
/// owner only, as ssh asks of a private key.
pub fn read_token(token_file: Option<&Path>, from_env: Option<String>) -> Result<Token, String> {
    if let Some(path) = token_file {
        let shown = path.display();
        let file = std::fs::File::open(path)
            .map_err(|e| format!("cannot read --token-file {shown}: {e}"))?;
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot read --token-file {shown}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("--token-file {shown} is not a file"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(format!(
                    "--token-file {shown} may be read or written by others (mode {mode:03o}); make it its owner's alone: chmod 600 {shown}"
                ));
            }
        }
        let mut text = String::new();
        file.take(TOKEN_FILE_LIMIT + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read --token-file {shown}: {e}"))?;
        if text.len() as u64 > TOKEN_FILE_LIMIT {
            return Err(format!(
                "--token-file {shown} is longer than {TOKEN_FILE_LIMIT} bytes; it should hold the token alone"
            ));
        }
        return Token::new(&text, &format!("--token-file {shown}"));
    }
    match from_env {
        Some(text) => Token::new(&text, TOKEN_ENV),
        None => Err(format!(
            "--http needs a bearer token, which clients then send as `Authorization: Bearer <token>`: set {TOKEN_ENV}, or name a file holding it with --token-file PATH (the command line never carries it)"
        )),
    }
}

/// `ADDR` of `--http`: `IP:PORT` (`127.0.0.1:8765`, `[::1]:8765`; port 0 picks a free one), or
/// `localhost:PORT` for 127.0.0.1.
pub fn parse_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(format!(
        "`{text}` is no IP:PORT address (such as 127.0.0.1:8765, [::1]:8765 or localhost:8765)"
    ))
}

/// Refuse an address other than loopback unless `allow_remote`.
pub fn check_address(addr: SocketAddr, allow_remote: bool) -> Result<(), String> {
    if addr.ip().to_canonical().is_loopback() || allow_remote {
        return Ok(());
    }
    Err(format!(
        "--http {addr} is not a loopback address, so other machines could reach the server; bind 127.0.0.1 (or [::1]), or pass --allow-remote to serve {addr} anyway (the bearer token still guards every request; name the host names clients use with --allow-host)"
    ))
}

/// The `Host` values accepted (any port): the loopback names, the bound address unless it is
/// the unspecified one (0.0.0.0, [::]), and the `extra` names of `--allow-host`.
pub fn allowed_hosts(bound: SocketAddr, extra: &[String]) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(str::to_owned).into();
    let ip = bound.ip().to_canonical();
    if !ip.is_unspecified() {
        hosts.push(ip.to_string());
    }
    for name in extra {
        hosts.push(name.trim().trim_matches(['[', ']']).to_ascii_lowercase());
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

/// The browser origins accepted: `http` and `https` on any port of an accepted host. A request
/// without an `Origin` header (any client but a browser) is not affected.
pub fn allowed_origins(hosts: &[String]) -> Vec<String> {
    let mut origins = Vec::new();
    for host in hosts {
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        origins.push(format!("http://{host}:*"));
        origins.push(format!("https://{host}:*"));
    }
    origins
}

/// Why a request was refused before it reached the transport.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No `Authorization` header.
    Missing,
    /// An `Authorization` header that is not the bearer token.
    Invalid,
}

/// Whether the request's headers carry exactly one `Authorization: Bearer <token>` with the
/// token (the scheme's name in any case, RFC 9110 §11.1).
pub fn authorize(headers: &HeaderMap, token: &Token) -> Result<(), Refusal> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Refusal::Missing);
    };
    if values.next().is_some() {
        return Err(Refusal::Invalid);
    }
    let value = value.as_bytes();
    let Some(space) = value.iter().position(|&b| b == b' ') else {
        return Err(Refusal::Invalid);
    };
    let (scheme, rest) = value.split_at(space);
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return Err(Refusal::Invalid);
    }
    let presented = rest.trim_ascii();
    if token.admits(presented) {
        Ok(())
    } else {
        Err(Refusal::Invalid)
    }
}

type Body = BoxBody<Bytes, Infallible>;

/// A plain-text answer with `status`.
fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// 401 with the challenge RFC 6750 §3 describes.
fn unauthorized(refusal: &Refusal) -> Response<Body> {
    let (challenge, text) = match refusal {
        Refusal::Missing => (
            r#"Bearer realm="ryechain""#,
            "Unauthorized: send the server's token as `Authorization: Bearer <token>`",
        ),
        Refusal::Invalid => (
            r#"Bearer realm="ryechain", error="invalid_token""#,
            "Unauthorized: the bearer token is not this server's",
        ),
    };
    let mut response = plain(StatusCode::UNAUTHORIZED, text);
    response
        .headers_mut()
        .insert(WWW_AUTHENTICATE, http::HeaderValue::from_static(challenge));
    response
}

/// What `serve` needs besides the handler.
pub struct HttpOptions {
    pub addr: SocketAddr,
    pub token: Token,
    pub allow_remote: bool,
    /// `--allow-host` names.
    pub allow_host: Vec<String>,
}

/// Serve `server` over streamable HTTP at `options.addr` until SIGTERM or ctrl-c; exit status 0
/// then. Prints `listening on http://ADDR/mcp` (the address bound) to stderr once it accepts.
pub fn serve(server: Server, options: HttpOptions) -> anyhow::Result<u8> {
    check_address(options.addr, options.allow_remote).map_err(anyhow::Error::msg)?;
    // One thread for the protocol and the connections; the calls run on its blocking pool.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let served = runtime.block_on(run(server, options));
    // Dropping the runtime waits for the calls still on the blocking pool, whose tools
    // `end_all_tools` has ended: nothing of them outlives the server.
    drop(runtime);
    served
}

async fn run(server: Server, options: HttpOptions) -> anyhow::Result<u8> {
    use tokio::signal::unix::{SignalKind, signal};
    // Listening for the signals before the address is announced: one sent as soon as it is
    // read is handled.
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", options.addr))?;
    let bound = listener.local_addr()?;
    let hosts = allowed_hosts(bound, &options.allow_host);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.iter().cloned())
        .with_allowed_origins(allowed_origins(&hosts))
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY);
    let stopping = config.cancellation_token.clone();
    let server = Arc::new(server);
    // One handler for every session: they share the warm projects and take turns at running
    // tools, as the stdio server's one session does.
    let mcp: StreamableHttpService<Arc<Server>, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(Arc::clone(&server)), Arc::default(), config);
    let token = Arc::new(options.token);
    {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "listening on http://{bound}{ENDPOINT}");
    }
    let graceful = GracefulShutdown::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors, a connection reset before it was taken: the next
                // one may do.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
        };
        let mcp = mcp.clone();
        let token = Arc::clone(&token);
        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
            let mut mcp = mcp.clone();
            let token = Arc::clone(&token);
            async move { Ok::<_, Infallible>(answer(&mut mcp, &token, req).await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A connection that breaks off is that client's concern, not the server's.
            let _ = connection.await;
        });
    }
    drop(listener);
    // The sessions end (their event streams close), which cancels every call: its worker kills
    // its tool. Nothing started in this process itself may outlive it either, and no other
    // starts; connections get a moment to send the answers under way.
    stopping.cancel();
    crate::runner::end_all_tools();
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    Ok(0)
}

/// One request: refused without the token (401) or off the endpoint (404), else the transport's.
async fn answer(
    mcp: &mut StreamableHttpService<Arc<Server>, LocalSessionManager>,
    token: &Token,
    req: Request<Incoming>,
) -> Response<Body> {
    if let Err(refusal) = authorize(req.headers(), token) {
        return unauthorized(&refusal);
    }
    if req.uri().path() != ENDPOINT {
        return plain(
            StatusCode::NOT_FOUND,
            &format!("Not Found: the MCP endpoint is {ENDPOINT}"),
        );
    }
    let delete = req.method() == http::Method::DELETE;
    let mut response = match tower_service::Service::call(mcp, req).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    // rmcp answers a session's end with 202 and no body; the official SDKs' servers answer
    // 200 and their clients expect 200 or 204 (the Python one logs a warning otherwise).
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(AUTHORIZATION, http::HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn only_the_bearer_token_is_admitted() {
        let token = Token::new("s3cret-token\n", "test").unwrap();
        assert_eq!(
            authorize(&headers(&["Bearer s3cret-token"]), &token),
            Ok(())
        );
        assert_eq!(
            authorize(&headers(&["bearer s3cret-token"]), &token),
            Ok(())
        );
        assert_eq!(
            authorize(&headers(&["Bearer  s3cret-token "]), &token),
            Ok(())
        );
        assert_eq!(authorize(&headers(&[]), &token), Err(Refusal::Missing));
        for wrong in [
            "Bearer s3cret-toke",
            "Bearer s3cret-token2",
            "Bearer",
            "Bearer ",
            "Basic s3cret-token",
            "s3cret-token",
            "Bearers3cret-token",
        ] {
            assert_eq!(
                authorize(&headers(&[wrong]), &token),
                Err(Refusal::Invalid),
                "{wrong}"
            );
        }
        // Two headers, one right: refused (which one a proxy would pass on is unknown).
        assert_eq!(
            authorize(&headers(&["Bearer s3cret-token", "Bearer x"]), &token),
            Err(Refusal::Invalid)
        );
    }

    #[test]
    fn a_token_is_one_visible_ascii_word() {
        assert!(Token::new("abc\r\n", "t").unwrap().admits(b"abc"));
        assert_eq!(
            Token::new("\n", "RYECHAIN_MCP_TOKEN").err().unwrap(),
            "the bearer token in RYECHAIN_MCP_TOKEN is empty"
        );
        for bad in ["two words", "tab\there", "caf\u{e9}", "nul\0"] {
            assert!(
                Token::new(bad, "t")
                    .err()
                    .unwrap()
                    .contains("cannot carry it"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn addresses_other_than_loopback_need_allow_remote() {
        let at = |s: &str| parse_address(s).unwrap();
        assert_eq!(at("localhost:0"), at("127.0.0.1:0"));
        assert!(parse_address("localhost").is_err());
        assert!(parse_address("example.com:80").is_err());
        for ok in [
            "127.0.0.1:0",
            "127.1.2.3:80",
            "[::1]:0",
            "[::ffff:127.0.0.1]:0",
        ] {
            assert_eq!(check_address(at(ok), false), Ok(()), "{ok}");
        }
        for remote in ["0.0.0.0:8765", "192.0.2.7:80", "[::]:0"] {
            let err = check_address(at(remote), false).unwrap_err();
            assert!(err.contains("--allow-remote"), "{err}");
            assert_eq!(check_address(at(remote), true), Ok(()));
        }
    }

    #[test]
    fn hosts_and_origins_are_loopback_the_bound_address_and_the_named() {
        let hosts = allowed_hosts(parse_address("0.0.0.0:1").unwrap(), &["MCP.example".into()]);
        assert_eq!(hosts, ["127.0.0.1", "::1", "localhost", "mcp.example"]);
        let hosts = allowed_hosts(parse_address("127.0.0.2:1").unwrap(), &[]);
        assert_eq!(hosts, ["127.0.0.1", "127.0.0.2", "::1", "localhost"]);
        let origins = allowed_origins(&["::1".to_owned(), "localhost".to_owned()]);
        assert_eq!(
            origins,
            [
                "http://[::1]:*",
                "https://[::1]:*",
                "http://localhost:*",
                "https://localhost:*"
            ]
        );
    }
}
