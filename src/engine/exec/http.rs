//! L5 the HTTP client primitive in the core (§9.3): a chain ending at
//! `rye/core/primitives/http_client` becomes an `HttpPlan` (method, url, headers, JSON body, auth,
//! timeout, retry, sync or SSE stream mode), and what the edge observed (`HttpOutcome`) becomes
//! the tool result `{success, data: {status_code, body, headers}, error}`. Pure: the environment
//! comes in as a value, nothing is sent here (`runner::http` sends it).
//!
//! Templating (ARCHITECTURE.md "HTTP client primitive"): the url, the header values and the
//! auth token or key are templated from the chain's own text — `${VAR}` / `${VAR:-d}` from the
//! chain's resolved env (never shell-quoted), then `{name}`: in the url with Python
//! `str.format` semantics (`{{`/`}}`, a missing name is an error), in header values and auth as
//! §8.3 pass 2 (unknown names stay). Inserted values are data: never scanned again.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value as Json};

use super::outcome::ToolResult;
use super::response::{Response, TraceEvent};
use super::template::{EnvPiece, env_pieces, env_value, fill_names, py_json_dumps, py_str};
use crate::pyrepr::{py_repr, py_truthy};

/// The primitive's id (§9.3).
pub const HTTP_CLIENT_ID: &str = "rye/core/primitives/http_client";

/// Default timeout of a request (§9.3: 30 s).
pub const DEFAULT_HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// Events kept in a stream's answer (the reference's `ReturnSink(max_size=10000)`); later events
/// are counted, not kept.
pub const MAX_STREAM_EVENTS: usize = 10_000;

/// The methods the primitive sends.
const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// Methods that carry the JSON body (§9.3).
const BODY_METHODS: &[&str] = &["POST", "PUT", "PATCH"];

/// What the header value of a redacted secret reads in a dry run.
pub const REDACTED: &str = "<redacted>";

/// How the response is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The whole body, as JSON when it parses, else as text.
    Sync,
    /// Server-sent events: each `data:` line with a non-empty remainder is an event.
    Stream,
}

/// The wait between attempts (§9.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    /// `2**attempt` seconds after the failed attempt `attempt` (0-based): 1 s, 2 s, 4 s…
    Exponential,
    /// 1 s between attempts.
    Linear,
}

impl Backoff {
    /// The sleep after the failed attempt `attempt` (0-based), before the next one.
    pub fn delay(self, attempt: u32) -> Duration {
        match self {
            Backoff::Exponential => Duration::from_secs(1u64 << attempt.min(20)),
            Backoff::Linear => Duration::from_secs(1),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Backoff::Exponential => "exponential",
            Backoff::Linear => "linear",
        }
    }
}

/// One HTTP request, fully decided in the core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpPlan {
    /// Upper-cased, one of `METHODS`.
    pub method: String,
    /// `http://` or `https://`, templated.
    pub url: String,
    /// Header names and values in the order configured (auth last), values templated.
    pub headers: Vec<(String, String)>,
    /// The JSON text sent (Python's `json.dumps`), only for POST/PUT/PATCH with a truthy body.
    pub body: Option<String>,
    /// Sync: the whole request, body included. Stream: connecting, the response head, and the
    /// longest wait for the next bytes of the stream.
    pub timeout: Duration,
    /// At least 1.
    pub max_attempts: u32,
    pub backoff: Backoff,
    pub mode: Mode,
    /// Bytes of the response body kept (sync), or of the stream read (stream): the rest is never
    /// read.
    pub output_cap: usize,
    /// Headers whose values are secrets (auth's), shown as `REDACTED` by a dry run.
    pub secret_headers: Vec<String>,
}

impl HttpPlan {
    /// The headers as a dry run shows them: auth's secrets redacted.
    pub fn shown_headers(&self) -> Vec<(String, String)> {
        self.headers
            .iter()
            .map(|(k, v)| {
                let secret = self
                    .secret_headers
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(k));
                let shown = if !secret {
                    v.clone()
                } else if let Some(("Bearer", _)) = v.split_once(' ') {
                    format!("Bearer {REDACTED}")
                } else {
                    REDACTED.to_owned()
                };
                (k.clone(), shown)
            })
            .collect()
    }

    /// The backoff's name (`exponential` or `linear`).
    pub fn backoff_name(&self) -> &'static str {
        self.backoff.name()
    }
}

/// What the HTTP planning reads.
pub struct HttpInput<'a> {
    /// Each chain element's `config`, tool first, as written (untemplated).
    pub element_configs: &'a [&'a Json],
    /// The config after §8.2–8.3 (`build_config`): the names `{…}` can refer to, and `method`,
    /// `body`, `timeout`, `retry` as templated.
    pub config: &'a Map<String, Json>,
    /// The caller's parameters (`mode` is read from them first, §9.3).
    pub params: &'a Map<String, Json>,
    /// The chain's resolved environment (`${VAR}`).
    pub env: &'a BTreeMap<String, String>,
    /// `--timeout`: replaces the configured one.
    pub timeout: Option<Duration>,
    pub output_cap: usize,
}

/// The plan, and what the caller should know (an auth secret that resolved to nothing).
pub fn plan_http(input: &HttpInput<'_>) -> Result<(HttpPlan, Vec<String>), String> {
    let mut raw = Map::new();
    for element in input.element_configs.iter().rev() {
        if let Json::Object(m) = element {
            for (k, v) in m {
                raw.insert(k.clone(), v.clone());
            }
        }
    }
    let names: Vec<(String, String)> = input
        .config
        .iter()
        .filter(|(k, _)| k.as_str() != "env")
        .map(|(k, v)| (k.clone(), py_str(v)))
        .collect();
    let vars: Vec<(&str, &str)> = names
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let lenient = |text: &str| lenient_template(text, input.env, &vars);
    let mut warnings = Vec::new();

    // Mode: the caller's `mode` first, then the chain's (the reference read `{**config, **params}`).
    let mode = match input
        .params
        .get("mode")
        .or_else(|| input.config.get("mode"))
    {
        None | Some(Json::Null) => Mode::Sync,
        Some(Json::String(m)) if m == "sync" => Mode::Sync,
        Some(Json::String(m)) if m == "stream" => Mode::Stream,
        Some(other) => {
            return Err(format!(
                "Unknown mode: {}. Must be 'sync' or 'stream'",
                py_str(other)
            ));
        }
    };

    let method = match input.config.get("method") {
        None | Some(Json::Null) => "GET".to_owned(),
        Some(Json::String(m)) => m.trim().to_ascii_uppercase(),
        Some(other) => {
            return Err(format!(
                "The configured `method` must be a string, not {}",
                py_repr(other)
            ));
        }
    };
    if !METHODS.contains(&method.as_str()) {
        return Err(format!(
            "The configured `method` `{method}` is not one the http_client primitive sends ({})",
            METHODS.join(", ")
        ));
    }

    let url = match raw.get("url") {
        Some(Json::String(u)) if !u.trim().is_empty() => u.clone(),
        None | Some(Json::Null) | Some(Json::String(_)) => {
            return Err("Unexpected error: url is required in config".to_owned());
        }
        Some(other) => {
            return Err(format!(
                "The configured `url` must be a string, not {}",
                py_repr(other)
            ));
        }
    };
    let url = format_template(&url, input.env, input.config).map_err(|e| format!("url: {e}"))?;
    let url = url.trim().to_owned();
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"));
    if rest.is_none_or(|r| r.is_empty() || r.starts_with('/')) {
        return Err(format!(
            "url: `{url}` is not an http:// or https:// URL with a host"
        ));
    }
    if url.chars().any(char::is_control) || url.contains(' ') {
        return Err(format!(
            "url: `{}` contains spaces or control characters (percent-encode them)",
            url.escape_debug()
        ));
    }

    let mut headers = Vec::new();
    match raw.get("headers") {
        None | Some(Json::Null) => {}
        Some(Json::Object(m)) => {
            for (k, v) in m {
                let text = match v {
                    Json::String(s) => s.clone(),
                    other => py_str(other),
                };
                headers.push((k.clone(), lenient(&text)));
            }
        }
        Some(other) => {
            return Err(format!(
                "The configured `headers` must be a mapping, not {}",
                py_repr(other)
            ));
        }
    }

    let mut secret_headers = Vec::new();
    match raw.get("auth") {
        None | Some(Json::Null) => {}
        Some(Json::Object(auth)) if auth.is_empty() => {}
        Some(Json::Object(auth)) => {
            let field = |name: &str| match auth.get(name) {
                None | Some(Json::Null) => String::new(),
                Some(Json::String(s)) => lenient(s),
                Some(other) => py_str(other),
            };
            let kind = field("type");
            let (header, value, what) = match kind.as_str() {
                "bearer" => {
                    let token = field("token");
                    ("Authorization".to_owned(), format!("Bearer {token}"), token)
                }
                "api_key" => {
                    let header = match field("header") {
                        h if h.is_empty() => "X-API-Key".to_owned(),
                        h => h,
                    };
                    let key = field("key");
                    (header, key.clone(), key)
                }
                other => {
                    return Err(format!(
                        "The configured `auth.type` must be `bearer` or `api_key`, not `{other}`"
                    ));
                }
            };
            if what.trim().is_empty() {
                warnings.push(format!(
                    "the {kind} auth's {} is empty (is its environment variable set?)",
                    if kind == "bearer" { "token" } else { "key" }
                ));
            }
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&header));
            secret_headers.push(header.clone());
            headers.push((header, value));
        }
        Some(other) => {
            return Err(format!(
                "The configured `auth` must be a mapping, not {}",
                py_repr(other)
            ));
        }
    }
    for (k, v) in &headers {
        if k.is_empty() || !k.bytes().all(is_token_byte) {
            return Err(format!(
                "header name `{}` is not a valid HTTP header name",
                k.escape_debug()
            ));
        }
        if v.chars().any(|c| c.is_control() && c != '\t') {
            return Err(format!(
                "the value of header `{k}` contains a line break or control character"
            ));
        }
    }

    let body = match input.config.get("body") {
        Some(b) if py_truthy(b) && BODY_METHODS.contains(&method.as_str()) => {
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
            }
            Some(py_json_dumps(b))
        }
        _ => None,
    };

    let timeout = match input.timeout {
        Some(t) => t,
        None => match input.config.get("timeout") {
            None | Some(Json::Null) => DEFAULT_HTTP_TIMEOUT,
            Some(Json::Number(n)) => match n.as_f64() {
                Some(s) if s.is_finite() && s > 0.0 && s <= 1e9 => Duration::from_secs_f64(s),
                _ => {
                    return Err(format!(
                        "The configured `timeout` must be a positive number of seconds, not {n}"
                    ));
                }
            },
            Some(other) => {
                return Err(format!(
                    "The configured `timeout` must be a number of seconds, not {}",
                    py_repr(other)
                ));
            }
        },
    };

    let (max_attempts, backoff) = match input.config.get("retry") {
        None | Some(Json::Null) => (1, Backoff::Exponential),
        Some(Json::Object(r)) => {
            let attempts = match r.get("max_attempts") {
                None | Some(Json::Null) => 1,
                Some(Json::Number(n)) => match n.as_u64() {
                    Some(a @ 1..=100) => a as u32,
                    _ => {
                        return Err(format!(
                            "The configured `retry.max_attempts` must be a whole number from 1 to 100, not {n}"
                        ));
                    }
                },
                Some(other) => {
                    return Err(format!(
                        "The configured `retry.max_attempts` must be a number, not {}",
                        py_repr(other)
                    ));
                }
            };
            let backoff = match r.get("backoff") {
                None | Some(Json::Null) => Backoff::Exponential,
                Some(Json::String(b)) if b == "exponential" => Backoff::Exponential,
                Some(Json::String(b)) if b == "linear" => Backoff::Linear,
                Some(other) => {
                    return Err(format!(
                        "The configured `retry.backoff` must be `exponential` or `linear`, not {}",
                        py_repr(other)
                    ));
                }
            };
            (attempts, backoff)
        }
        Some(other) => {
            return Err(format!(
                "The configured `retry` must be a mapping, not {}",
                py_repr(other)
            ));
        }
    };

    Ok((
        HttpPlan {
            method,
            url,
            headers,
            body,
            timeout,
            max_attempts,
            backoff,
            mode,
            output_cap: input.output_cap,
            secret_headers,
        },
        warnings,
    ))
}

/// RFC 9110 token characters (header names).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `${VAR}` from `env` (never quoted), then `{name}` from `vars` in the text between them
/// (unknown names stay, §8.3 pass 2); inserted values are not scanned again.
fn lenient_template(text: &str, env: &BTreeMap<String, String>, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    for piece in env_pieces(text) {
        match piece {
            EnvPiece::Lit(s) => out.push_str(&fill_names(s, vars)),
            EnvPiece::Var { name, default } => out.push_str(&env_value(env, name, default)),
        }
    }
    out
}

/// `${VAR}` from `env`, then Python's `str.format(**names)` on the text between them (§9.3):
/// `{{` and `}}` are literal braces, `{name}` is `str(names[name])`, a missing name, a single
/// brace, a conversion or a format spec is an error saying so. Inserted values are final.
pub fn format_template(
    text: &str,
    env: &BTreeMap<String, String>,
    names: &Map<String, Json>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    for piece in env_pieces(text) {
        match piece {
            EnvPiece::Var { name, default } => out.push_str(&env_value(env, name, default)),
            EnvPiece::Lit(s) => py_format(s, names, &mut out)?,
        }
    }
    Ok(out)
}

fn py_format(text: &str, names: &Map<String, Json>, out: &mut String) -> Result<(), String> {
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|&(_, n)| n) == Some('{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek().map(|&(_, n)| n) == Some('}') => {
                chars.next();
                out.push('}');
            }
            '}' => {
                return Err(format!(
                    "a single `}}` in `{text}` (write `}}}}` for a literal brace)"
                ));
            }
            '{' => {
                let inner_start = at + 1;
                let Some(close) = text[inner_start..].find('}') else {
                    return Err(format!(
                        "a `{{` that is never closed in `{text}` (write `{{{{` for a literal brace)"
                    ));
                };
                let field = &text[inner_start..inner_start + close];
                while chars.peek().is_some_and(|&(i, _)| i <= inner_start + close) {
                    chars.next();
                }
                if field.is_empty() || !field.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    return Err(format!(
                        "the field `{{{field}}}` is not a plain name: name a parameter alone, as `{{name}}` (write `{{{{` and `}}}}` for literal braces)"
                    ));
                }
                match names.get(field) {
                    Some(v) => out.push_str(&py_str(v)),
                    None => {
                        return Err(format!(
                            "`{{{field}}}` names no parameter or config value `{field}` (write `{{{{` and `}}}}` for literal braces)"
                        ));
                    }
                }
            }
            c => out.push(c),
        }
    }
    Ok(())
}

/// A response as the edge read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    /// The status's reason phrase (`Not Found`), empty when the code has none.
    pub reason: String,
    /// Lower-cased names, repeated headers joined with `, ` (as `dict(httpx.Headers)`).
    pub headers: Vec<(String, String)>,
    /// Sync: at most `output_cap` bytes of the body. Stream: empty.
    pub body: Vec<u8>,
    /// Stream: the events kept (at most `MAX_STREAM_EVENTS`).
    pub events: Vec<String>,
    /// Stream: every event seen.
    pub events_count: u64,
    /// The body (sync) or the stream went past `output_cap`: the rest was not read. With the
    /// length the server declared, when it did.
    pub truncated: Option<Option<u64>>,
}

/// How the request ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HttpEnd {
    /// A response came (any status).
    Response(HttpResponse),
    /// No response: the last attempt's error, after `attempts` attempts (fewer than planned when
    /// the error is not one that a retry may cure).
    Failed { attempts: u32, last: String },
}

/// What the edge observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpOutcome {
    pub end: HttpEnd,
    /// Attempts made (1 when the first answered).
    pub attempts: u32,
    pub duration: Duration,
}

/// Map what happened into the tool result (§9.3): `data` is `{status_code, body, headers}`
/// (`stream_events_count` added in stream mode, `truncated` when the cap cut the body); success
/// is `200 <= status < 400` with the whole body read.
pub fn http_result(plan: &HttpPlan, outcome: &HttpOutcome) -> ToolResult {
    let r = match &outcome.end {
        HttpEnd::Failed { attempts, last } => {
            let mut data = Map::new();
            data.insert("status_code".into(), Json::from(0));
            data.insert("body".into(), Json::Null);
            data.insert("headers".into(), Json::Object(Map::new()));
            return ToolResult {
                success: false,
                data: Json::Object(data),
                error: Some(format!("Request failed after {attempts} attempts: {last}")),
                warnings: Vec::new(),
            };
        }
        HttpEnd::Response(r) => r,
    };
    let mut data = Map::new();
    data.insert("status_code".into(), Json::from(r.status));
    let body = match plan.mode {
        Mode::Stream => Json::Array(r.events.iter().cloned().map(Json::String).collect()),
        Mode::Sync => {
            let text = String::from_utf8_lossy(&r.body);
            match (&r.truncated, serde_json::from_slice::<Json>(&r.body)) {
                (None, Ok(v)) => v,
                _ => Json::String(text.into_owned()),
            }
        }
    };
    data.insert("body".into(), body);
    let headers: Map<String, Json> = r
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), Json::String(v.clone())))
        .collect();
    data.insert("headers".into(), Json::Object(headers));
    if plan.mode == Mode::Stream {
        data.insert("stream_events_count".into(), Json::from(r.events_count));
    }
    let mut warnings = Vec::new();
    if plan.mode == Mode::Stream && r.events_count > r.events.len() as u64 {
        warnings.push(format!(
            "the stream sent {} events: kept the first {}",
            r.events_count,
            r.events.len()
        ));
    }
    let status_ok = (200..400).contains(&r.status);
    let mut error = (!status_ok).then(|| match r.reason.as_str() {
        "" => format!("HTTP {}", r.status),
        reason => format!("HTTP {}: {reason}", r.status),
    });
    if let Some(declared) = &r.truncated {
        let what = match plan.mode {
            Mode::Sync => "response body",
            Mode::Stream => "event stream",
        };
        let of = declared.map_or(String::new(), |n| format!(" of {n}"));
        let kept = match plan.mode {
            Mode::Sync => r.body.len(),
            Mode::Stream => plan.output_cap,
        };
        let mut t = Map::new();
        t.insert("body".into(), declared.map_or(Json::Null, Json::from));
        t.insert("kept".into(), Json::from(kept));
        data.insert("truncated".into(), Json::Object(t));
        error.get_or_insert_with(|| {
            format!(
                "The {what} is larger than the output cap of {} bytes: kept the first {kept}{of} bytes and read no further (raise the cap with --max-output)",
                plan.output_cap
            )
        });
    }
    ToolResult {
        success: error.is_none(),
        data: Json::Object(data),
        error,
        warnings,
    }
}

/// An HTTP plan ready to send, with what the response needs afterwards (as `plan::Prepared`).
#[derive(Clone, Debug)]
pub struct HttpPrepared {
    pub plan: HttpPlan,
    /// Chain item ids, tool first.
    pub chain: Vec<String>,
    pub trace: Option<Vec<TraceEvent>>,
    pub warnings: Vec<String>,
    pub lockfile_used: bool,
    pub lockfile_due: Option<(crate::model::SpaceRel, String)>,
    /// A dry run (§12.4): the chain as `Step::DryRun` gives it; nothing is sent, the edge shows
    /// the request.
    pub dry_run: Option<Box<crate::analysis::chain_view::ChainView>>,
}

/// The response after the request (§12.3, §9.3), as `plan::finish` for a process.
pub fn finish_http(item_id: &str, prepared: &HttpPrepared, outcome: &HttpOutcome) -> Response {
    let result = http_result(&prepared.plan, outcome);
    super::plan::ran(
        item_id,
        &prepared.chain,
        &prepared.warnings,
        &prepared.trace,
        prepared.lockfile_used,
        result,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn object(v: Json) -> Map<String, Json> {
        match v {
            Json::Object(m) => m,
            _ => Map::new(),
        }
    }

    /// Plans a one-element chain (the tool's config) with `config` as the built config's extra
    /// names and `params` as the caller's.
    fn plan_of(
        tool: Json,
        names: Json,
        params: Json,
        e: &[(&str, &str)],
    ) -> Result<HttpPlan, String> {
        let mut config = object(tool.clone());
        config.extend(object(names));
        let params = object(params);
        let env = env(e);
        let configs = [&tool];
        plan_http(&HttpInput {
            element_configs: &configs,
            config: &config,
            params: &params,
            env: &env,
            timeout: None,
            output_cap: 1024,
        })
        .map(|(p, _)| p)
    }

    #[test]
    fn s9_3_url_takes_env_then_str_format_with_escapes() {
        let p = plan_of(
            json!({"url": "${BASE:-http://x}/a/{id}?q={{lit}}&n={n}"}),
            json!({"id": 7, "n": true}),
            json!({}),
            &[("BASE", "http://h:1")],
        )
        .unwrap();
        assert_eq!(p.url, "http://h:1/a/7?q={lit}&n=True");
        assert_eq!(p.method, "GET");
        assert_eq!(p.timeout, DEFAULT_HTTP_TIMEOUT);
        assert_eq!((p.max_attempts, p.backoff), (1, Backoff::Exponential));
        let d = plan_of(
            json!({"url": "${BASE:-http://x}/"}),
            json!({}),
            json!({}),
            &[],
        )
        .unwrap();
        assert_eq!(d.url, "http://x/", "the default of an unset variable");
    }

    #[test]
    fn s9_3_url_errors_name_the_field() {
        let err = |url: &str| plan_of(json!({"url": url}), json!({}), json!({}), &[]).unwrap_err();
        assert!(err("http://h/{city}").starts_with("url: `{city}` names no parameter"));
        assert!(err("http://h/}").contains("single `}`"));
        assert!(err("http://h/{x").contains("never closed"));
        assert!(err("http://h/{x:>3}").contains("not a plain name"));
        assert!(err("http://h/{}").contains("not a plain name"));
        assert_eq!(
            plan_of(json!({}), json!({}), json!({}), &[]).unwrap_err(),
            "Unexpected error: url is required in config"
        );
        assert!(err("ftp://h/").contains("not an http:// or https:// URL"));
        assert!(err("http:///path").contains("with a host"));
    }

    #[test]
    fn inserted_values_are_never_templated_again() {
        let p = plan_of(
            json!({"url": "http://h/{q}/${V}", "headers": {"X-A": "${V} {q}"}}),
            json!({"q": "{secret}"}),
            json!({}),
            &[("V", "{q}$(x)")],
        )
        .unwrap();
        assert_eq!(p.url, "http://h/{secret}/{q}$(x)");
        assert_eq!(
            p.headers,
            vec![("X-A".to_owned(), "{q}$(x) {secret}".to_owned())]
        );
    }

    #[test]
    fn s9_3_auth_headers_and_their_redaction() {
        let p = plan_of(
            json!({"url": "http://h/", "headers": {"authorization": "old"},
                   "auth": {"type": "bearer", "token": "${T}"}}),
            json!({}),
            json!({}),
            &[("T", "tok")],
        )
        .unwrap();
        assert_eq!(
            p.headers,
            vec![("Authorization".to_owned(), "Bearer tok".to_owned())]
        );
        assert_eq!(
            p.shown_headers(),
            vec![("Authorization".to_owned(), format!("Bearer {REDACTED}"))]
        );
        let k = plan_of(
            json!({"url": "http://h/", "auth": {"type": "api_key", "key": "${K}", "header": "X-Key"}}),
            json!({}),
            json!({}),
            &[("K", "kk")],
        )
        .unwrap();
        assert_eq!(k.headers, vec![("X-Key".to_owned(), "kk".to_owned())]);
        assert_eq!(k.shown_headers()[0].1, REDACTED);
        let default = plan_of(
            json!({"url": "http://h/", "auth": {"type": "api_key", "key": "kk"}}),
            json!({}),
            json!({}),
            &[],
        )
        .unwrap();
        assert_eq!(default.headers[0].0, "X-API-Key");
        let bad = plan_of(
            json!({"url": "http://h/", "auth": {"type": "basic"}}),
            json!({}),
            json!({}),
            &[],
        );
        assert!(bad.unwrap_err().contains("`bearer` or `api_key`"));
    }

    #[test]
    fn s9_3_body_only_for_post_put_patch_and_as_python_json() {
        for (method, sent) in [
            ("post", true),
            ("PUT", true),
            ("patch", true),
            ("get", false),
            ("delete", false),
        ] {
            let p = plan_of(
                json!({"url": "http://h/", "method": method, "body": {"a": "é", "b": [1, 2]}}),
                json!({}),
                json!({}),
                &[],
            )
            .unwrap();
            assert_eq!(p.method, method.to_ascii_uppercase());
            assert_eq!(p.body.is_some(), sent, "{method}");
            if sent {
                assert_eq!(p.body.as_deref(), Some(r#"{"a": "\u00e9", "b": [1, 2]}"#));
                assert!(
                    p.headers
                        .contains(&("Content-Type".to_owned(), "application/json".to_owned()))
                );
            }
        }
        let empty = plan_of(
            json!({"url": "http://h/", "method": "POST", "body": {}}),
            json!({}),
            json!({}),
            &[],
        )
        .unwrap();
        assert_eq!(empty.body, None, "an empty body is not truthy");
    }

    #[test]
    fn s9_3_mode_retry_timeout_and_method_are_checked() {
        let base = json!({"url": "http://h/"});
        let mode = |m: Json| plan_of(base.clone(), json!({}), json!({"mode": m}), &[]);
        assert_eq!(mode(json!("stream")).unwrap().mode, Mode::Stream);
        assert_eq!(mode(json!("sync")).unwrap().mode, Mode::Sync);
        assert_eq!(
            mode(json!("batch")).unwrap_err(),
            "Unknown mode: batch. Must be 'sync' or 'stream'"
        );
        let with = |extra: Json| {
            let mut tool = object(base.clone());
            tool.extend(object(extra));
            plan_of(Json::Object(tool), json!({}), json!({}), &[])
        };
        let r = with(json!({"retry": {"max_attempts": 3, "backoff": "linear"}, "timeout": 2.5}))
            .unwrap();
        assert_eq!((r.max_attempts, r.backoff), (3, Backoff::Linear));
        assert_eq!(r.timeout, Duration::from_millis(2500));
        assert!(with(json!({"retry": {"max_attempts": 0}})).is_err());
        assert!(with(json!({"retry": {"backoff": "random"}})).is_err());
        assert!(with(json!({"timeout": -1})).is_err());
        assert!(
            with(json!({"method": "BREW"}))
                .unwrap_err()
                .contains("BREW")
        );
        assert!(
            with(json!({"headers": {"X-A": "a\r\nX-B: b"}}))
                .unwrap_err()
                .contains("line break")
        );
        assert!(
            with(json!({"headers": {"bad name": "x"}}))
                .unwrap_err()
                .contains("header name")
        );
    }

    #[test]
    fn backoff_is_the_specs() {
        assert_eq!(Backoff::Exponential.delay(0), Duration::from_secs(1));
        assert_eq!(Backoff::Exponential.delay(2), Duration::from_secs(4));
        assert_eq!(Backoff::Linear.delay(5), Duration::from_secs(1));
    }

    fn response(status: u16, reason: &str, body: &[u8]) -> HttpOutcome {
        HttpOutcome {
            end: HttpEnd::Response(HttpResponse {
                status,
                reason: reason.to_owned(),
                headers: vec![("content-type".into(), "x".into())],
                body: body.to_vec(),
                events: Vec::new(),
                events_count: 0,
                truncated: None,
            }),
            attempts: 1,
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn s9_3_results_map_status_body_and_failures() {
        let plan = plan_of(json!({"url": "http://h/"}), json!({}), json!({}), &[]).unwrap();
        let ok = http_result(&plan, &response(200, "OK", br#"{"a": 1}"#));
        assert!(ok.success);
        assert_eq!(
            ok.data,
            json!({"status_code": 200, "body": {"a": 1}, "headers": {"content-type": "x"}})
        );
        let text = http_result(&plan, &response(302, "Found", b"moved"));
        assert!(text.success, "a redirect is an answer");
        assert_eq!(text.data["body"], "moved");
        let nf = http_result(&plan, &response(404, "Not Found", b""));
        assert_eq!(nf.error.as_deref(), Some("HTTP 404: Not Found"));
        assert_eq!(nf.data["body"], "");
        let failed = http_result(
            &plan,
            &HttpOutcome {
                end: HttpEnd::Failed {
                    attempts: 3,
                    last: "boom".into(),
                },
                attempts: 3,
                duration: Duration::ZERO,
            },
        );
        assert_eq!(
            failed.error.as_deref(),
            Some("Request failed after 3 attempts: boom")
        );
        assert_eq!(
            failed.data,
            json!({"status_code": 0, "body": null, "headers": {}})
        );
        let mut cut = response(200, "OK", b"{\"a\": ");
        if let HttpEnd::Response(r) = &mut cut.end {
            r.truncated = Some(Some(10));
        }
        let cut = http_result(&plan, &cut);
        assert!(!cut.success);
        assert_eq!(
            cut.data["body"], "{\"a\": ",
            "a cut body is text, never parsed"
        );
        assert!(cut.error.unwrap().contains("output cap of 1024 bytes"));
    }
}
