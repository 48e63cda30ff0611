//! L5 the MCP server config a tool of the `mcp/stdio` and `mcp/http` runtimes names (§13): its
//! format (`tool_type: mcp_server`, `config.transport` stdio or http), the checks of every path in
//! it (inside its space: no `..`, no absolute path out, no symlink out), and the planner's stage
//! that checks and verifies it, like a chain element, before anything is spawned. Pure: the file's
//! place and text come as facts; `ryechain mcp-call` (the edge) parses the same way.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value as Json};

use crate::analysis::Analysis;
use crate::analysis::verify::{ExtraFile, Policy};
use crate::exec::facts::{Ask, PathKind};
use crate::exec::response::TraceEvent;
use crate::integrity::ItemKind;

/// The merged-config key naming the server config file (§13: templated, e.g.
/// `{project_path}/.ai/tools/mcp/servers/x.yaml`).
pub const SERVER_CONFIG_PATH: &str = "server_config_path";
/// The merged-config key naming the server config's item id (`mcp/servers/x`).
pub const SERVER: &str = "server";

/// Largest server config read (it is a small YAML file).
pub const MAX_CONFIG_BYTES: usize = 1024 * 1024;

/// How a server is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to the server's base environment (the MCP SDKs' default: HOME, LOGNAME, PATH,
        /// SHELL, TERM, USER).
        env: BTreeMap<String, String>,
        /// Relative to the root of the space the config lives in, checked lexically here and
        /// for symlinks at the edge; `None`: the project directory.
        cwd: Option<String>,
    },
    /// Streamable HTTP at `url`, with these headers on every request.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// A parsed server config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    pub transport: Transport,
    /// The config's own `timeout` (the upstream's, seconds), which bounds the call too.
    pub timeout: Option<Duration>,
}

/// A scalar as text (numbers and booleans as YAML writes them); other values are refused.
fn scalar(v: &Json, what: &str) -> Result<String, String> {
    match v {
        Json::String(s) => Ok(s.clone()),
        Json::Number(n) => Ok(n.to_string()),
        Json::Bool(b) => Ok(b.to_string()),
        other => Err(format!(
            "{what} must be a string, not {}",
            crate::message::json_type(other)
        )),
    }
}

fn string_map(v: Option<&Json>, what: &str) -> Result<BTreeMap<String, String>, String> {
    match v {
        None | Some(Json::Null) => Ok(BTreeMap::new()),
        Some(Json::Object(m)) => m
            .iter()
            .map(|(k, v)| Ok((k.clone(), scalar(v, &format!("`{what}.{k}`"))?)))
            .collect(),
        Some(other) => Err(format!(
            "`{what}` must be a mapping, not {}",
            crate::message::json_type(other)
        )),
    }
}

/// `${VAR}` / `${VAR:-default}` in every string of the config, from `env` (the upstream's
/// `connect.py` expands them the same way, from the caller's environment and `.env`).
fn expand(v: &Json, env: &BTreeMap<String, String>) -> Json {
    match v {
        Json::String(s) => Json::String(crate::exec::template::expand_env(s, env)),
        Json::Array(items) => Json::Array(items.iter().map(|i| expand(i, env)).collect()),
        Json::Object(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), expand(v, env)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

/// Parse a server config's text (its signature line is a YAML comment). `env` fills `${VAR}`
/// (the planner passes an empty map: it checks the shape, not the values).
pub fn parse(text: &str, env: &BTreeMap<String, String>) -> Result<ServerConfig, String> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(format!(
            "the server config is larger than {MAX_CONFIG_BYTES} bytes"
        ));
    }
    let doc: Json =
        serde_yaml::from_str(text).map_err(|e| format!("the server config is not YAML: {e}"))?;
    let Json::Object(top) = doc else {
        return Err(format!(
            "the server config must be a YAML mapping, not {}",
            crate::message::json_type(&doc)
        ));
    };
    match top.get("tool_type") {
        Some(Json::String(t)) if t == "mcp_server" => {}
        Some(other) => {
            let shown = other
                .as_str()
                .map_or_else(|| other.to_string(), str::to_owned);
            return Err(format!(
                "the server config's `tool_type` is `{shown}`; an MCP server config says `tool_type: mcp_server`"
            ));
        }
        None => {
            return Err(
                "the server config has no `tool_type`; an MCP server config says `tool_type: mcp_server`"
                    .to_owned(),
            );
        }
    }
    let config = match top.get("config") {
        Some(Json::Object(c)) => expand(&Json::Object(c.clone()), env),
        Some(other) => {
            return Err(format!(
                "the server config's `config` must be a mapping, not {}",
                crate::message::json_type(other)
            ));
        }
        None => return Err("the server config has no `config` mapping".to_owned()),
    };
    let Json::Object(config) = config else {
        unreachable!("expand keeps a mapping a mapping")
    };
    let timeout = match config.get("timeout") {
        None | Some(Json::Null) => None,
        Some(Json::Number(n)) => match n.as_f64() {
            Some(s) if s.is_finite() && s > 0.0 && s <= 1e9 => Some(Duration::from_secs_f64(s)),
            _ => {
                return Err(format!(
                    "`config.timeout` must be a positive number of seconds, not {n}"
                ));
            }
        },
        Some(other) => {
            return Err(format!(
                "`config.timeout` must be a number of seconds, not {}",
                crate::message::json_type(other)
            ));
        }
    };
    // The upstream's default transport is http.
    let transport = match config.get("transport") {
        None | Some(Json::Null) => "http".to_owned(),
        Some(Json::String(t)) => t.clone(),
        Some(other) => {
            return Err(format!(
                "`config.transport` must be `stdio` or `http`, not {}",
                crate::message::json_type(other)
            ));
        }
    };
    let transport = match transport.as_str() {
        "stdio" => {
            let command = match config.get("command") {
                Some(Json::String(c)) if !c.trim().is_empty() => c.clone(),
                Some(Json::String(_)) | None | Some(Json::Null) => {
                    return Err("a stdio server config needs `config.command`".to_owned());
                }
                Some(other) => {
                    return Err(format!(
                        "`config.command` must be a string, not {}",
                        crate::message::json_type(other)
                    ));
                }
            };
            let args = match config.get("args") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, a)| scalar(a, &format!("`config.args[{i}]`")))
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(format!(
                        "`config.args` must be a list, not {}",
                        crate::message::json_type(other)
                    ));
                }
            };
            let env = string_map(config.get("env"), "config.env")?;
            let cwd = match config.get("cwd") {
                None | Some(Json::Null) => None,
                Some(Json::String(s)) if s.is_empty() => None,
                Some(Json::String(s)) => {
                    relative_inside(s).map_err(|why| format!("`config.cwd` {why}"))?;
                    Some(s.clone())
                }
                Some(other) => {
                    return Err(format!(
                        "`config.cwd` must be a string, not {}",
                        crate::message::json_type(other)
                    ));
                }
            };
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        "http" => {
            let url = match config.get("url") {
                Some(Json::String(u)) if !u.trim().is_empty() => u.trim().to_owned(),
                Some(Json::String(_)) | None | Some(Json::Null) => {
                    return Err("an http server config needs `config.url`".to_owned());
                }
                Some(other) => {
                    return Err(format!(
                        "`config.url` must be a string, not {}",
                        crate::message::json_type(other)
                    ));
                }
            };
            // An unexpanded `${VAR}` leaves the scheme in place, so the planner's check (empty
            // env) holds too.
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "`config.url` must be an http:// or https:// URL, not `{url}`"
                ));
            }
            let headers = string_map(config.get("headers"), "config.headers")?;
            Transport::Http { url, headers }
        }
        other => {
            return Err(format!(
                "`config.transport` must be `stdio` or `http`, not `{other}`"
            ));
        }
    };
    Ok(ServerConfig { transport, timeout })
}

/// A relative path that stays where it starts: no `..`, no absolute path, no empty or `.`-only
/// trick (`a/./b` is fine, `a/../b` is not). `Err` says why, as the end of a sentence.
pub fn relative_inside(p: &str) -> Result<(), String> {
    if p.starts_with('/') || Path::new(p).is_absolute() {
        return Err(format!(
            "`{p}` is an absolute path; it must be relative to its space and stay inside it"
        ));
    }
    if p.contains('\0') {
        return Err("contains a NUL byte".to_owned());
    }
    if Path::new(p)
        .components()
        .any(|c| matches!(c, Component::ParentDir))
    {
        return Err(format!("`{p}` leaves its space with `..`"));
    }
    Ok(())
}

/// The spaces a server config may live in: (name, root directory).
pub fn space_roots<'a>(
    project: &'a Path,
    user: Option<&'a Path>,
    system: Option<&'a Path>,
) -> Vec<(&'static str, &'a Path)> {
    let mut out = vec![("project", project)];
    out.extend(user.map(|u| ("user", u)));
    out.extend(system.map(|s| ("system", s)));
    out
}

/// Where a server config path points, checked lexically: an absolute path, without `.` or `..`
/// components, to a `.yaml`/`.yml` file under `<root>/.ai/tools/` of one of `roots`. Answers the
/// space's root and the item id (`mcp/servers/x`).
pub fn place<'a>(path: &str, roots: &[(&'static str, &'a Path)]) -> Result<Placed<'a>, String> {
    let shown = path;
    if !path.starts_with('/') {
        return Err(format!(
            "The server config path `{shown}` must be an absolute path inside a space (`{{project_path}}/.ai/tools/...`)"
        ));
    }
    if path.split('/').any(|seg| seg == ".." || seg == ".") || path.contains('\0') {
        return Err(format!(
            "The server config path `{shown}` leaves its space: it has `.` or `..` components"
        ));
    }
    let p = Path::new(path);
    let ext_ok = p
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e == "yaml" || e == "yml");
    for (space, root) in roots {
        let tools = root.join(".ai").join("tools");
        if let Ok(rel) = p.strip_prefix(&tools) {
            if !ext_ok {
                return Err(format!(
                    "The server config `{shown}` must be a `.yaml` or `.yml` file"
                ));
            }
            let rel = rel.to_string_lossy();
            let id = rel
                .strip_suffix(".yaml")
                .or_else(|| rel.strip_suffix(".yml"))
                .unwrap_or(&rel)
                .to_owned();
            return Ok(Placed {
                space,
                root,
                id,
                path: p.to_path_buf(),
            });
        }
    }
    let spaces = roots
        .iter()
        .map(|(n, r)| format!("{n} ({})", r.join(".ai/tools").display()))
        .collect::<Vec<_>>()
        .join(", ");
    Err(format!(
        "The server config path `{shown}` is outside every space's tools: it must be under {spaces}"
    ))
}

/// A server config path placed in a space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed<'a> {
    pub space: &'static str,
    pub root: &'a Path,
    /// The item id the path names (`mcp/servers/x`).
    pub id: String,
    pub path: PathBuf,
}

/// What the planner's stage found: the trace of the server config's verification.
pub struct Checked {
    pub trace: Vec<TraceEvent>,
}

/// What the stage reads of the plan.
pub struct Input<'a> {
    pub config: &'a Map<String, Json>,
    pub item_id: &'a str,
    pub project: &'a Path,
    pub user: Option<&'a Path>,
    pub system: Option<&'a Path>,
    pub policy: &'a Policy,
}

/// The planner's stage for a chain whose config names a server config (§13): the path placed in
/// a space (lexically, then for symlinks: the real file must be under the real `<root>/.ai/`),
/// `server` agreeing with it, the file verified under the execution policy like a chain element,
/// and its shape parsed. `None`: facts are missing (the caller returns `ask.needs()`);
/// `Some(Err)`: refuse with this text. A config without `server_config_path` passes.
pub fn check(a: Analysis<'_>, input: &Input<'_>, ask: &Ask<'_>) -> Option<Result<Checked, String>> {
    let Some(value) = input.config.get(SERVER_CONFIG_PATH) else {
        return Some(Ok(Checked { trace: Vec::new() }));
    };
    let path = match value {
        Json::String(s) if !s.trim().is_empty() => s.as_str(),
        other => {
            return Some(Err(format!(
                "The tool's `{SERVER_CONFIG_PATH}` must name the server config file, not {}",
                match other {
                    Json::String(_) => "an empty string",
                    o => crate::message::json_type(o),
                }
            )));
        }
    };
    let roots = space_roots(input.project, input.user, input.system);
    let placed = match place(path, &roots) {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    if let Some(Json::String(server)) = input.config.get(SERVER)
        && !server.is_empty()
        && *server != placed.id
    {
        return Some(Err(format!(
            "The tool names the server `{server}` but its `{SERVER_CONFIG_PATH}` is the file of `{}` ({path}); make them agree",
            placed.id
        )));
    }
    // Symlinks: the real file must stay in the real `.ai/` of its space.
    let ai = placed.root.join(".ai");
    let (file_fact, ai_fact) = (ask.path(&placed.path), ask.path(&ai));
    let (file_fact, ai_fact) = (file_fact?, ai_fact?);
    match (file_fact.kind, &file_fact.real, &ai_fact.real) {
        (PathKind::Missing, _, _) => {
            return Some(Err(format!("The server config {path} does not exist")));
        }
        (PathKind::File, Some(real), Some(real_ai)) => {
            if !real.starts_with(real_ai) {
                return Some(Err(format!(
                    "The server config {path} is a symlink out of its space (to {})",
                    real.display()
                )));
            }
        }
        _ => {
            return Some(Err(format!(
                "The server config {path} is not a regular file"
            )));
        }
    }
    let text = match ask.text(&placed.path)? {
        Some(t) => Arc::clone(t),
        None => {
            return Some(Err(format!(
                "The server config {path} cannot be read (not UTF-8, or larger than the limit)"
            )));
        }
    };
    let extra = ExtraFile {
        path: placed.path.clone(),
        kind: ItemKind::Tool,
        text: Arc::clone(&text),
    };
    let Some(v) = a.verify_chain(input.item_id, std::slice::from_ref(&extra)) else {
        return Some(Err(crate::message::tool_not_found(input.item_id)));
    };
    let Some(f) = v.files.last() else {
        return Some(Err(crate::message::tool_not_found(input.item_id)));
    };
    let trace = vec![TraceEvent::VerifyIntegrity {
        item_id: Some(placed.id.clone()),
        path: f.path.clone(),
        verified: f.verdict.passed(),
        accepted: input.policy.accepts(&f.verdict),
        key_fp: f.verdict.key_fp().map(str::to_owned),
    }];
    if !input.policy.accepts(&f.verdict) {
        return Some(Err(f.error.clone().unwrap_or_else(|| {
            format!("The server config {path} failed verification")
        })));
    }
    if let Err(e) = parse(&text, &BTreeMap::new()) {
        return Some(Err(format!("The server config {path} is invalid: {e}")));
    }
    Some(Ok(Checked { trace }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> BTreeMap<String, String> {
        BTreeMap::from([("TOKEN".to_owned(), "s3cret".to_owned())])
    }

    #[test]
    fn stdio_and_http_configs_parse_with_variables_filled() {
        let c = parse(
            "# rye:signed:x\ntool_type: mcp_server\nconfig:\n  transport: stdio\n  command: python3\n  args: [server.py, 3]\n  env: {KEY: \"${TOKEN}\", N: 1}\n  cwd: servers\n  timeout: 5\n",
            &env(),
        )
        .unwrap();
        assert_eq!(
            c.transport,
            Transport::Stdio {
                command: "python3".into(),
                args: vec!["server.py".into(), "3".into()],
                env: BTreeMap::from([("KEY".into(), "s3cret".into()), ("N".into(), "1".into())]),
                cwd: Some("servers".into()),
            }
        );
        assert_eq!(c.timeout, Some(Duration::from_secs(5)));
        let c = parse(
            "tool_type: mcp_server\nconfig:\n  url: http://127.0.0.1:1/mcp\n  headers: {Authorization: \"Bearer ${TOKEN}\"}\n",
            &env(),
        )
        .unwrap();
        assert_eq!(
            c.transport,
            Transport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: BTreeMap::from([("Authorization".into(), "Bearer s3cret".into())]),
            }
        );
    }

    #[test]
    fn bad_configs_say_what_is_wrong() {
        for (text, want) in [
            ("[1]", "must be a YAML mapping"),
            ("tool_type: runtime\nconfig: {}", "`tool_type` is `runtime`"),
            ("config: {}", "has no `tool_type`"),
            ("tool_type: mcp_server", "no `config` mapping"),
            (
                "tool_type: mcp_server\nconfig: {transport: ftp}",
                "must be `stdio` or `http`, not `ftp`",
            ),
            (
                "tool_type: mcp_server\nconfig: {transport: stdio}",
                "needs `config.command`",
            ),
            ("tool_type: mcp_server\nconfig: {}", "needs `config.url`"),
            (
                "tool_type: mcp_server\nconfig: {url: file:///etc/passwd}",
                "http:// or https://",
            ),
            (
                "tool_type: mcp_server\nconfig: {transport: stdio, command: x, cwd: ../up}",
                "leaves its space with `..`",
            ),
            (
                "tool_type: mcp_server\nconfig: {transport: stdio, command: x, cwd: /tmp}",
                "is an absolute path",
            ),
            (
                "tool_type: mcp_server\nconfig: {transport: stdio, command: x, args: [[1]]}",
                "`config.args[0]` must be a string",
            ),
            (
                "tool_type: mcp_server\nconfig: {url: 'http://h', timeout: -1}",
                "positive number",
            ),
            ("tool_type: mcp_server\nconfig: [", "not YAML"),
        ] {
            let e = parse(text, &env()).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn config_paths_stay_inside_a_space_tools() {
        let project = Path::new("/p");
        let user = Path::new("/home/u");
        let roots = space_roots(project, Some(user), None);
        let ok = place("/p/.ai/tools/mcp/servers/x.yaml", &roots).unwrap();
        assert_eq!((ok.space, ok.id.as_str()), ("project", "mcp/servers/x"));
        let ok = place("/home/u/.ai/tools/mcp/servers/y.yml", &roots).unwrap();
        assert_eq!((ok.space, ok.id.as_str()), ("user", "mcp/servers/y"));
        for (path, want) in [
            ("/p/.ai/tools/../../etc/x.yaml", "`.` or `..`"),
            ("/p/.ai/tools/./x.yaml", "`.` or `..`"),
            ("relative/x.yaml", "absolute path"),
            ("/etc/x.yaml", "outside every space's tools"),
            ("/p/.ai/config/x.yaml", "outside every space's tools"),
            ("/p/.ai/tools/mcp/x.sh", "`.yaml` or `.yml`"),
        ] {
            let e = place(path, &roots).unwrap_err();
            assert!(e.contains(want), "{path}: {e}");
        }
    }
}
