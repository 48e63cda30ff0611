//! L6 `ryechain mcp-call`, the internal command the `mcp/stdio` and `mcp/http` runtimes run (§13,
//! issue 33; hidden: dispatched before the command line is parsed, so no help, completion or man
//! page shows it): it reads the server config the planner checked and verified
//! (`exec::mcp_server`), checks its paths again where it reads them (no symlink out of the space),
//! calls one tool with rmcp's client — a child process on stdio, in a process group of its own
//! that dies with this process and is killed after the call, or streamable HTTP — and prints one
//! JSON answer for the subprocess mapping (§9.2): the tool's result (exit 0), or `{success:
//! false, error}` (exit 1).
#![allow(
    clippy::disallowed_methods,
    reason = "the MCP client edge reads the server config, the environment and its stdin, and \
              starts the stdio server"
)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Map, Value as Json, json};

use crate::exec::mcp_server::{self, ServerConfig, Transport};

/// The command's name (the first argument).
pub const ARG: &str = "mcp-call";

/// The call's time limit when the runtime gives none (§13: 60 s).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most of the caller's parameters read from stdin.
const MAX_PARAMS: u64 = 64 * 1024 * 1024;
/// How much of the stdio server's stderr is kept (its last bytes), to say why it failed.
const STDERR_TAIL: usize = 4096;
/// How long a server that answered gets to exit once its stdin is closed, before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// What the runtime passes (its `args`).
#[derive(Debug, Default)]
struct Args {
    transport: Option<String>,
    server_config: Option<String>,
    server: Option<String>,
    tool: Option<String>,
    project: Option<PathBuf>,
    user: Option<PathBuf>,
    system: Option<PathBuf>,
    timeout: Option<Duration>,
}

/// A value the planner left as its placeholder (`{server}` when the tool gives no `server`), or
/// an empty one, is not given.
fn given(v: String) -> Option<String> {
    let t = v.trim();
    let placeholder = t.starts_with('{') && t.ends_with('}') && !t[1..t.len() - 1].contains('{');
    (!t.is_empty() && !placeholder).then_some(v)
}

fn read_args(argv: &[OsString]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let flag = flag.to_string_lossy();
        let value = it
            .next()
            .ok_or_else(|| format!("`{flag}` needs a value"))?
            .clone()
            .into_string()
            .map_err(|_| format!("the value of `{flag}` is not UTF-8"))?;
        match flag.as_ref() {
            "--transport" => a.transport = given(value),
            "--server-config" => a.server_config = given(value),
            "--server" => a.server = given(value),
            "--tool" => a.tool = given(value),
            "--project-path" => a.project = given(value).map(PathBuf::from),
            "--user-space" => a.user = given(value).map(PathBuf::from),
            "--system-space" => a.system = given(value).map(PathBuf::from),
            "--timeout" => {
                a.timeout = match given(value) {
                    None => None,
                    Some(v) => match v.trim().parse::<f64>() {
                        Ok(s) if s.is_finite() && s > 0.0 && s <= 1e9 => {
                            Some(Duration::from_secs_f64(s))
                        }
                        _ => return Err(format!("`--timeout` must be seconds, not `{v}`")),
                    },
                }
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(a)
}

/// The answer printed on stdout.
struct Answer {
    json: Json,
    ok: bool,
}

fn failure(error: impl Into<String>, extra: Map<String, Json>) -> Answer {
    let mut m = Map::new();
    m.insert("success".into(), Json::Bool(false));
    m.insert("error".into(), Json::String(error.into()));
    m.extend(extra);
    Answer {
        json: Json::Object(m),
        ok: false,
    }
}

fn fail(error: impl Into<String>) -> Answer {
    failure(error, Map::new())
}

/// Run the command: `argv` are the arguments after `mcp-call`. Exit 0 when the tool answered,
/// 1 when it (or the call) failed; the answer is on stdout either way.
pub fn main(argv: &[OsString]) -> u8 {
    let answer = run(argv);
    let mut text = answer.json.to_string();
    text.push('\n');
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    u8::from(!answer.ok)
}

fn run(argv: &[OsString]) -> Answer {
    let started = Instant::now();
    let args = match read_args(argv) {
        Ok(a) => a,
        Err(e) => return fail(format!("mcp-call: {e}")),
    };
    let Some(tool) = args.tool.clone() else {
        return fail("The tool's config names no MCP tool: it needs `tool_name`");
    };
    let Some(project) = args.project.clone() else {
        return fail("mcp-call: `--project-path` is required");
    };
    let Some(config_path) = args.server_config.clone() else {
        return fail(
            "The tool's config names no MCP server config: it needs `server_config_path` (e.g. `{project_path}/.ai/tools/mcp/servers/x.yaml`)",
        );
    };
    let roots = mcp_server::space_roots(&project, args.user.as_deref(), args.system.as_deref());
    let placed = match mcp_server::place(&config_path, &roots) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    if let Some(server) = &args.server
        && *server != placed.id
    {
        return fail(format!(
            "The tool names the server `{server}` but its server config is the file of `{}` ({config_path})",
            placed.id
        ));
    }
    let text = match read_inside(&placed.path, &placed.root.join(".ai")) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let config = match mcp_server::parse(&text, &env) {
        Ok(c) => c,
        Err(e) => return fail(format!("The server config {config_path} is invalid: {e}")),
    };
    if let Some(want) = &args.transport
        && want != config.transport.name()
    {
        return fail(format!(
            "The tool runs through the MCP {want} runtime but its server config {config_path} says `transport: {}`; use the rye/core/runtimes/mcp/{} runtime",
            config.transport.name(),
            config.transport.name()
        ));
    }
    let params = match read_params() {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    // The runner kills this process at the runtime's timeout; answer a little before it, so the
    // person reads what did not answer rather than "timed out".
    let limit = args.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let limit = config.timeout.map_or(limit, |t| t.min(limit));
    let margin = (limit / 10).min(Duration::from_secs(2));
    let deadline = started + limit.saturating_sub(margin);
    let cwd = match &config.transport {
        Transport::Stdio { cwd: Some(rel), .. } => {
            match dir_inside(&placed.root.join(rel), placed.root) {
                Ok(d) => d,
                Err(e) => return fail(format!("`config.cwd` of {config_path}: {e}")),
            }
        }
        _ => project.clone(),
    };
    let call = Call {
        server: placed.id.clone(),
        tool,
        params,
        deadline,
        limit: limit.saturating_sub(margin),
        cwd,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(format!("mcp-call: cannot start its runtime: {e}")),
    };
    runtime.block_on(call.run(config))
}

/// The server config's text, read where the planner checked it: the real file must still be
/// under the real `.ai/` of its space (a symlink swapped in since is refused).
fn read_inside(path: &Path, ai: &Path) -> Result<String, String> {
    let shown = path.display();
    let real = std::fs::canonicalize(path)
        .map_err(|e| format!("The server config {shown} cannot be read: {e}"))?;
    let real_ai = std::fs::canonicalize(ai)
        .map_err(|e| format!("The space of {shown} cannot be read: {e}"))?;
    if !real.starts_with(&real_ai) {
        return Err(format!(
            "The server config {shown} is a symlink out of its space (to {})",
            real.display()
        ));
    }
    let file = std::fs::File::open(&real)
        .map_err(|e| format!("The server config {shown} cannot be read: {e}"))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(format!("The server config {shown} is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(mcp_server::MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("The server config {shown} cannot be read: {e}"))?;
    if bytes.len() > mcp_server::MAX_CONFIG_BYTES {
        return Err(format!(
            "The server config {shown} is larger than {} bytes",
            mcp_server::MAX_CONFIG_BYTES
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("The server config {shown} is not UTF-8"))
}

/// A working directory inside `root` (the root of the server config's space): it must exist
/// and its real path stay under the real root (no symlink out).
fn dir_inside(dir: &Path, root: &Path) -> Result<PathBuf, String> {
    let real =
        std::fs::canonicalize(dir).map_err(|e| format!("{} cannot be used: {e}", dir.display()))?;
    let real_root = std::fs::canonicalize(root)
        .map_err(|e| format!("{} cannot be used: {e}", root.display()))?;
    if !real.starts_with(&real_root) {
        return Err(format!(
            "{} is a symlink out of its space (to {})",
            dir.display(),
            real.display()
        ));
    }
    if !real.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    Ok(real)
}

/// The caller's parameters: stdin as a JSON object (empty: none).
fn read_params() -> Result<Map<String, Json>, String> {
    let mut text = String::new();
    std::io::stdin()
        .lock()
        .take(MAX_PARAMS + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("mcp-call: the parameters on stdin cannot be read: {e}"))?;
    if text.len() as u64 > MAX_PARAMS {
        return Err(format!(
            "mcp-call: the parameters are larger than {MAX_PARAMS} bytes"
        ));
    }
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Json>(&text) {
        Ok(Json::Object(m)) => Ok(m),
        Ok(other) => Err(format!(
            "mcp-call: the parameters must be a JSON object, not {other}"
        )),
        Err(e) => Err(format!("mcp-call: the parameters are not JSON: {e}")),
    }
}

/// One tool call.
struct Call {
    server: String,
    tool: String,
    params: Map<String, Json>,
    deadline: Instant,
    /// The whole call's limit (for the messages).
    limit: Duration,
    /// The stdio server's working directory.
    cwd: PathBuf,
}

/// The environment a stdio server starts with before its config's `env`: the MCP SDKs' default
/// (the Python and TypeScript SDKs pass only these), so the caller's secrets do not reach it.
const BASE_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The last bytes a stdio server wrote on stderr.
#[derive(Clone, Default)]
struct Tail(Arc<Mutex<Vec<u8>>>);

impl Tail {
    fn push(&self, bytes: &[u8]) {
        if let Ok(mut t) = self.0.lock() {
            t.extend_from_slice(bytes);
            if t.len() > STDERR_TAIL {
                let cut = t.len() - STDERR_TAIL;
                t.drain(..cut);
            }
        }
    }
    fn text(&self) -> Option<String> {
        let t = self.0.lock().ok()?;
        let s = String::from_utf8_lossy(&t).trim().to_owned();
        (!s.is_empty()).then_some(s)
    }
}

/// Kills the stdio server's process group when the call ends, however it ends.
struct Group(Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take().and_then(|p| i32::try_from(p).ok()) {
            crate::edges::runner::kill_group(pgid);
        }
    }
}

type Client = RunningService<RoleClient, ClientConfig>;

impl Call {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    fn secs(&self) -> String {
        let d = self.limit;
        if d.subsec_millis() == 0 {
            format!("{} s", d.as_secs())
        } else {
            format!("{:.1} s", d.as_secs_f64())
        }
    }

    fn info() -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("ryechain", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn run(self, config: ServerConfig) -> Answer {
        match config.transport {
            Transport::Stdio {
                command, args, env, ..
            } => self.stdio(&command, &args, &env).await,
            Transport::Http { url, headers } => self.http(&url, &headers).await,
        }
    }

    async fn stdio(
        &self,
        command: &str,
        args: &[String],
        config_env: &BTreeMap<String, String>,
    ) -> Answer {
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args)
            .env_clear()
            .current_dir(&self.cwd)
            .process_group(0)
            .kill_on_drop(true);
        for name in BASE_ENV {
            if let Some(v) = std::env::var_os(name) {
                cmd.env(name, v);
            }
        }
        cmd.envs(config_env);
        // The server dies with this process: the runner kills `mcp-call`'s group on a timeout or
        // a cancel, and the server's group is another. This runtime has one thread, the one that
        // forks, so the parent-death signal is tied to the process's life.
        let parent = std::process::id();
        // SAFETY: `pre_exec` is unsafe because the closure runs in the forked child before
        // exec, where only async-signal-safe calls are sound; it makes only raw system calls
        // (prctl, getppid, through rustix, which neither allocates nor locks) and _exit, and
        // touches no state but the copied `parent` id.
        unsafe {
            cmd.pre_exec(move || {
                #[cfg(target_os = "linux")]
                {
                    let _ = rustix::process::set_parent_process_death_signal(Some(
                        rustix::process::Signal::KILL,
                    ));
                    if rustix::process::getppid().map(|p| p.as_raw_nonzero().get().cast_unsigned())
                        != Some(parent)
                    {
                        libc::_exit(1);
                    }
                }
                let _ = parent;
                Ok(())
            });
        }
        let spawned = rmcp::transport::TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::piped())
            .spawn();
        let (transport, stderr) = match spawned {
            Ok(t) => t,
            Err(e) => {
                return fail(format!(
                    "The MCP server `{}` could not be started: `{command}`: {e}",
                    self.server
                ));
            }
        };
        let pid = transport.id();
        let group = Group(pid);
        let tail = Tail::default();
        let drained = stderr.map(|mut stderr| {
            let tail = tail.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    tail.push(&buf[..n]);
                }
            })
        });
        let outcome = self.session(Self::info().serve(transport), pid).await;
        // The server and everything it started end here, however the call went.
        drop(group);
        match outcome {
            Ok(answer) => answer,
            Err(what) => {
                // Its stderr to the end (the group is dead, so the pipe closes), for a stable text.
                if let Some(drained) = drained {
                    let _ = tokio::time::timeout(Duration::from_secs(1), drained).await;
                }
                let mut extra = Map::new();
                let what = match tail.text() {
                    Some(t) => {
                        let said = format!("{what}; its stderr ended with: {}", last_line(&t));
                        extra.insert("server_stderr".into(), Json::String(t));
                        said
                    }
                    None => what,
                };
                self.failed(what, extra)
            }
        }
    }

    async fn http(&self, url: &str, headers: &BTreeMap<String, String>) -> Answer {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        // reqwest is built without a crypto provider of its own: rustls on ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut custom = HashMap::new();
        for (k, v) in headers {
            let name = match http::HeaderName::from_bytes(k.as_bytes()) {
                Ok(n) => n,
                Err(_) => return fail(format!("`config.headers`: `{k}` is not a header name")),
            };
            let value = match http::HeaderValue::from_str(v) {
                Ok(v) => v,
                Err(_) => {
                    return fail(format!("`config.headers.{k}` is not a valid header value"));
                }
            };
            custom.insert(name, value);
        }
        let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
        let transport = StreamableHttpClientTransport::from_config(config);
        match self.session(Self::info().serve(transport), None).await {
            Ok(answer) => answer,
            Err(what) => self.failed(format!("{what} ({url})"), Map::new()),
        }
    }

    /// A failure naming the server and the tool.
    fn failed(&self, error: String, mut extra: Map<String, Json>) -> Answer {
        extra.insert("server".into(), Json::String(self.server.clone()));
        extra.insert("tool".into(), Json::String(self.tool.clone()));
        failure(error, extra)
    }

    /// How a stdio server that broke the connection ended, when it has exited (within a moment):
    /// its exit, not the transport's error, is the stable account of a crash.
    async fn crashed(pid: Option<u32>) -> Option<String> {
        pid?;
        tokio::time::timeout(Duration::from_secs(1), exited(pid))
            .await
            .ok()
    }

    /// Initialize, call the tool, close; each step within what is left of the time limit, and
    /// ended as soon as the stdio server (`pid`) exits: a crashed server's own child may hold its
    /// stdout open, so the pipe alone would not say so. `Err`: what failed.
    async fn session<E: std::fmt::Display>(
        &self,
        connect: impl std::future::Future<Output = Result<Client, E>>,
        pid: Option<u32>,
    ) -> Result<Answer, String> {
        let server = &self.server;
        let tool = &self.tool;
        let connect = tokio::time::timeout(self.left(), connect);
        let client = tokio::select! {
            biased;
            r = connect => match r {
                Err(_) => {
                    return Err(format!(
                        "The MCP server `{server}` did not answer `initialize` within {}",
                        self.secs()
                    ));
                }
                Ok(Err(e)) => {
                    return Err(match Self::crashed(pid).await {
                        Some(why) => format!("The MCP server `{server}` {why} during `initialize`"),
                        None => format!("The MCP server `{server}` failed during `initialize`: {e}"),
                    });
                }
                Ok(Ok(c)) => c,
            },
            why = exited(pid) => {
                return Err(format!("The MCP server `{server}` {why} during `initialize`"));
            }
        };
        let mut request = CallToolRequestParams::new(tool.clone());
        request.arguments = Some(self.params.clone());
        let call = tokio::time::timeout(self.left(), client.call_tool(request));
        let result = tokio::select! {
            biased;
            r = call => match r {
                Err(_) => {
                    return Err(format!(
                        "The MCP server `{server}` did not answer the call of `{tool}` within {}",
                        self.secs()
                    ));
                }
                Ok(Err(rmcp::ServiceError::McpError(e))) => {
                    return Err(format!(
                        "The MCP server `{server}` refused the call of `{tool}`: {} (code {})",
                        e.message, e.code.0
                    ));
                }
                Ok(Err(e)) => {
                    return Err(match Self::crashed(pid).await {
                        Some(why) => format!(
                            "The MCP server `{server}` {why} during the call of `{tool}`"
                        ),
                        None => format!(
                            "The MCP server `{server}` failed during the call of `{tool}` (it closed the connection): {e}"
                        ),
                    });
                }
                Ok(Ok(r)) => r,
            },
            why = exited(pid) => {
                return Err(format!(
                    "The MCP server `{server}` {why} during the call of `{tool}`"
                ));
            }
        };
        // A server that answered gets a moment to exit on its own (stdio: its stdin closed).
        let _ = tokio::time::timeout(self.left().min(SHUTDOWN_GRACE), client.cancel()).await;
        Ok(answer(server, tool, result))
    }
}

/// Resolves with "exited" when process `pid` has exited (`None`: never). The process is left
/// for its owner to reap (`WNOWAIT`); one already reaped (`ECHILD`) has exited too. Its exit
/// status is not told: whether tokio reaps it first is a race, and the answer must not depend
/// on it (the end of its stderr says why it went).
async fn exited(pid: Option<u32>) -> String {
    use rustix::process::{Pid, WaitId, WaitIdOptions};
    let Some(pid) = pid else {
        return std::future::pending().await;
    };
    // A pid no process can have (0, past `i32`) is no child of ours: `None`, exited.
    let pid = i32::try_from(pid)
        .ok()
        .filter(|&p| p > 0)
        .and_then(Pid::from_raw);
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        // `Ok(None)`: still running; an error (`ECHILD`: reaped already) counts as exited.
        let state = pid.map(|pid| rustix::process::waitid(WaitId::Pid(pid), options));
        if !matches!(state, Some(Ok(None))) {
            return "exited".to_owned();
        }
    }
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(text)
        .trim()
}

/// The text of a result's text blocks, joined by newlines.
fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// The tool's result as the tool's answer: its structured content when it has one, else the
/// text of a single text block, else the content list; an MCP tool error (`isError`) is a failure
/// with its text as the error.
fn answer(server: &str, tool: &str, result: CallToolResult) -> Answer {
    let content = serde_json::to_value(&result.content).unwrap_or(Json::Null);
    if result.is_error == Some(true) {
        let text = texts(&result).join("\n");
        let error = if text.trim().is_empty() {
            format!("The MCP tool `{tool}` of `{server}` reported an error")
        } else {
            text
        };
        let mut extra = Map::new();
        extra.insert("server".into(), json!(server));
        extra.insert("tool".into(), json!(tool));
        extra.insert("content".into(), content);
        return failure(error, extra);
    }
    let data = match result.structured_content {
        Some(v) => v,
        None => match texts(&result).as_slice() {
            [one] if result.content.len() == 1 => Json::String(one.clone()),
            _ => content,
        },
    };
    Answer {
        json: data,
        ok: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn placeholders_and_empty_values_are_not_given() {
        let a = read_args(&os(&[
            "--server",
            "{server}",
            "--tool",
            "t",
            "--user-space",
            "",
            "--timeout",
            "2.5",
        ]))
        .unwrap();
        assert_eq!(a.server, None);
        assert_eq!(a.tool.as_deref(), Some("t"));
        assert_eq!(a.user, None);
        assert_eq!(a.timeout, Some(Duration::from_millis(2500)));
        assert!(
            read_args(&os(&["--tool"]))
                .unwrap_err()
                .contains("needs a value")
        );
        assert!(
            read_args(&os(&["--nope", "x"]))
                .unwrap_err()
                .contains("unknown")
        );
        assert!(
            read_args(&os(&["--timeout", "-1"]))
                .unwrap_err()
                .contains("seconds")
        );
    }

    #[test]
    fn results_become_the_tools_answer() {
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\"n\": 2}"}],
            "structuredContent": {"n": 2}
        }))
        .unwrap();
        let a = answer("s", "t", r);
        assert!(a.ok);
        assert_eq!(a.json, json!({"n": 2}));
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "hello"}]
        }))
        .unwrap();
        assert_eq!(answer("s", "t", r).json, json!("hello"));
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
        }))
        .unwrap();
        assert_eq!(
            answer("s", "t", r).json,
            json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
        );
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "no such issue"}], "isError": true
        }))
        .unwrap();
        let a = answer("s", "t", r);
        assert!(!a.ok);
        assert_eq!(a.json["success"], false);
        assert_eq!(a.json["error"], "no such issue");
    }
}
