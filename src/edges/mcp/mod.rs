//! L6 `ryechain mcp`: the MCP server on stdin/stdout (the official Rust SDK, `rmcp`), through
//! which an agent calls `rye_execute`, `rye_search`, `rye_load` and `rye_sign` (§12). It owns the
//! protocol edge only: the runtime, the transport and the process-wide setup; the handler is
//! `server`, the tools' names and schemas `tools`, the reading of a call's arguments `args`,
//! `search` and `items`, the projects kept
//! loaded for searches `warm`; `--http` serves the same handler over streamable HTTP (`http`).
//! Stdout carries protocol messages only; notices go to stderr.

pub mod args;
pub mod http;
pub mod items;
pub mod search;
pub mod server;
pub mod tools;
pub mod warm;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use rmcp::ServiceExt as _;
use rmcp::service::{QuitReason, ServerInitializeError};

pub use server::{Server, SignCall, SignItems, Spaces};
pub use tools::ToolNames;

use crate::load::SpaceSource;
use crate::model::Space;
use crate::system::System;

#[derive(clap::Args, Debug)]
pub struct McpArgs {
    /// The project a call that names no `project_path` runs in (found upwards, as for `lint`).
    /// Calls name one: seed 003 requires it.
    pub path: Option<PathBuf>,
    /// The names the server and its tools go by: `seed` (server `ryechain`, tools `rye_execute`,
    /// `rye_search`, `rye_load`, `rye_sign`) or `reference` (server `rye`, tools `execute`,
    /// `search`, `load`, `sign`, as the reference's server names them).
    #[arg(long, value_enum, default_value = "seed")]
    pub tool_names: ToolNames,
    /// Serve MCP's streamable HTTP transport at ADDR (`127.0.0.1:8765`; port 0 picks a free one)
    /// instead of stdio, at the path `/mcp`. Every request must carry `Authorization: Bearer
    /// <token>`: the token is read from RYECHAIN_MCP_TOKEN or --token-file, never the command
    /// line. The address bound is printed to stderr; SIGTERM or ctrl-c stops the server.
    #[arg(long, value_name = "ADDR", value_parser = http::parse_address)]
    pub http: Option<SocketAddr>,
    /// The file holding the --http bearer token (readable by its owner only; a trailing newline
    /// is dropped). Without it the token is RYECHAIN_MCP_TOKEN's value.
    #[arg(long, value_name = "PATH", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// Let --http bind an address other than loopback, which other machines may reach (the
    /// bearer token still guards every request).
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// A host name clients reach the --http server by, besides localhost and the bound address:
    /// requests whose Host (or browser Origin) names another are refused, against DNS
    /// rebinding. Repeatable.
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allow_host: Vec<String>,
    /// Do not run tools in cgroups of their own (Linux): what a tool leaves behind is then ended
    /// through its process group and as orphans re-parented to the call's worker only.
    #[arg(long)]
    pub no_cgroup: bool,
}

/// Serve MCP on stdin/stdout until the client closes stdin, or with `--http` over HTTP until
/// SIGTERM or ctrl-c; exit status 0 then. `spaces` builds a project's spaces under the command
/// line's flags, `sign` signs as `ryechain sign` does; `sys` is the machine the calls read.
pub fn serve(
    args: &McpArgs,
    sys: &'static dyn System,
    spaces: Spaces,
    sign: SignItems,
) -> anyhow::Result<u8> {
    // The token first: a server that could not guard itself starts nothing.
    let token = match args.http {
        Some(_) => Some(
            http::read_token(args.token_file.as_deref(), sys.env_var(http::TOKEN_ENV))
                .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    if let Some(addr) = args.http {
        http::check_address(addr, args.allow_remote).map_err(anyhow::Error::msg)?;
    }
    let mut notices = Vec::new();
    let default_project = match &args.path {
        None => None,
        Some(path) => {
            let (specs, found) = spaces(path)?;
            notices = found;
            specs.into_iter().find_map(|s| match (s.space, s.source) {
                (Space::Project, SpaceSource::Dir(dir)) => Some(dir),
                _ => None,
            })
        }
    };
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        // The server's own secret is no tool's business.
        .filter(|(k, _)| k != http::TOKEN_ENV)
        .collect();
    let server = Server::new(args.tool_names, sys, spaces, sign, default_project, env);
    server.show_notices(&notices);
    let launcher = server.launcher();
    // Every process a call starts runs in a worker of the call's own (`runner::worker`), which
    // adopts and ends what its tools leave behind, one run at a time, as `exec` does. The server
    // adopts too, for what a worker killed by a signal leaves: its only children are its workers
    // (neither rmcp's transports nor tokio nor hyper spawns any), so any other child is such a
    // stray, and is ended when the worker's end is seen (`contain::sweep_strays`).
    crate::runner::adopt_orphans();
    crate::runner::use_cgroups(!args.no_cgroup);
    if let (Some(addr), Some(token)) = (args.http, token) {
        let options = http::HttpOptions {
            addr,
            token,
            allow_remote: args.allow_remote,
            allow_host: args.allow_host.clone(),
        };
        let served = http::serve(server, options);
        launcher.close();
        return served;
    }
    // One thread for the protocol; its I/O driver reads the pipes, its timers serve rmcp's.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    // When stdin closes, rmcp lets running calls answer for up to 5 s, then cancels them (their
    // workers end their tools). Dropping the runtime at the end waits for a call still running
    // on the blocking pool, so the server exits once its calls' processes are gone.
    let served = runtime.block_on(async move {
        let running = match server.serve(rmcp::transport::stdio_pipes()).await {
            Ok(running) => running,
            // Input ended before `initialize`: nothing was asked.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(0),
            Err(e) => anyhow::bail!("the MCP session did not start: {e}"),
        };
        match running.waiting().await {
            Ok(QuitReason::JoinError(e)) | Err(e) => {
                anyhow::bail!("the MCP server stopped: {e}")
            }
            // The client closed stdin (or the session was cancelled).
            Ok(_) => Ok(0),
        }
    });
    drop(runtime);
    // The calls are over; the worker kept started for the next one ends too.
    launcher.close();
    served
}
