//! L5 what one execution of a tool answers (§12.3), as plain data: the item, its chain, how it
//! ended (refused before anything ran, or the primitive's result), warnings and the trace (§11.2).
//! `render::exec` writes it as seed 003's JSON response; the planner never builds JSON.

use std::path::PathBuf;

use serde_json::Value as Json;

/// The answer to one `rye_execute` of a tool.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub item_id: String,
    /// Chain item ids, tool first (empty when the chain was not built).
    pub chain: Vec<String>,
    pub end: End,
    /// Warnings the run carries (validation warnings, unsigned CONFIG_RESOLVE files, the
    /// primitive's own).
    pub warnings: Vec<String>,
    /// Trace events (`None` when no trace was asked for).
    pub trace: Option<Vec<TraceEvent>>,
    /// What the caller may have meant (a refused id's nearest neighbour), when the edge looked.
    pub hint: Option<String>,
}

/// How the call ended.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// Refused before anything ran, with the reference's words (§12.3's error response).
    Refused { error: String },
    /// The primitive ran (§9.2).
    Ran {
        success: bool,
        error: Option<String>,
        /// The tool's output (its JSON, or its text).
        data: Json,
        /// A lockfile was found and checked before the run.
        lockfile_used: bool,
        /// A lockfile was written after it (the edge writes it, and says so here).
        lockfile_created: bool,
    },
}

/// One trace event (§11.2).
#[derive(Clone, Debug, PartialEq)]
pub enum TraceEvent {
    /// A chain element resolved, with the lower-precedence candidates it hides (path, space).
    /// A primitive resolved by key has no path.
    Resolve {
        item_id: String,
        path: Option<PathBuf>,
        space: String,
        shadowed: Vec<(PathBuf, String)>,
    },
    /// A file verified: a chain element (with its id) or a verify_deps file (without).
    VerifyIntegrity {
        item_id: Option<String>,
        path: PathBuf,
        verified: bool,
        /// The execution policy accepts the verdict.
        accepted: bool,
        key_fp: Option<String>,
    },
    /// An element's `env_config` contributed these keys.
    ResolveEnv {
        contributed_by: String,
        keys: Vec<String>,
    },
}

impl Response {
    /// A refusal before anything ran.
    pub fn refused(
        item_id: impl Into<String>,
        error: impl Into<String>,
        chain: Vec<String>,
        trace: Option<Vec<TraceEvent>>,
    ) -> Response {
        Response {
            item_id: item_id.into(),
            chain,
            end: End::Refused {
                error: error.into(),
            },
            warnings: Vec::new(),
            trace,
            hint: None,
        }
    }

    pub fn success(&self) -> bool {
        matches!(self.end, End::Ran { success: true, .. })
    }
}
