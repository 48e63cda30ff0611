//! L5 execution in the core (§12.3): turning salsa facts, caller parameters and facts about the
//! machine (gathered at the edge on demand) into a pure `ExecutionPlan`, and a finished process
//! into the seed-003 response. Nothing here spawns, reads files or reads the environment: what the
//! plan needs from the machine it asks for as `facts::Need`s, which the edge answers. The answer is
//! data (`response::Response`); `render::exec` writes it as JSON.

pub mod anchor;
pub mod config_resolve;
pub mod document;
pub mod env;
pub mod facts;
pub mod graph;
pub mod http;
pub mod load;
pub mod mcp_server;
pub mod outcome;
pub mod plan;
pub mod response;
pub mod template;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Default cap on each of stdout and stderr kept from a tool (bytes).
pub const DEFAULT_OUTPUT_CAP: usize = 8 * 1024 * 1024;

/// Default timeout of the subprocess primitive (§9.1: 300 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Everything the runner needs to spawn a tool, computed in the core. The runner adds nothing:
/// no shell, no inherited environment, no inherited stdin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionPlan {
    /// The program (`command` after templating). Without a `/` it is looked up in the `PATH` of
    /// `env` (or a default path when `env` has none, §9.1.10).
    pub program: String,
    pub args: Vec<String>,
    /// The complete process environment (the child gets exactly this).
    pub env: BTreeMap<String, String>,
    /// Working directory; `None` inherits the caller's.
    pub cwd: Option<PathBuf>,
    /// Bytes written to the child's stdin, then closed; `None` gives the child a null stdin (never
    /// the caller's).
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// Bytes kept of each of stdout and stderr; the rest is read and dropped.
    pub output_cap: usize,
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExitKind {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal (not by us).
    Signal(i32),
    /// It ran past the plan's timeout; its whole process group was killed.
    TimedOut,
    /// The program was not found (neither as a path nor on `PATH`).
    NotFound,
    /// The working directory does not exist or is not a directory.
    BadCwd,
    /// Spawning failed for another reason (permission denied, exec format error...).
    SpawnFailed(String),
    /// The caller cancelled the run (an MCP client's `notifications/cancelled`, or the client
    /// went away); everything the tool started was killed.
    Cancelled,
}

/// What the runner observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessOutcome {
    pub exit: ExitKind,
    /// At most `output_cap` bytes of stdout (what was captured so far on a timeout).
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Total bytes the process wrote to each stream (more than kept when capped).
    pub stdout_total: u64,
    pub stderr_total: u64,
    pub duration: Duration,
}
