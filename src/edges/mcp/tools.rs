//! L6 the MCP tools ryechain lists, as data: each tool's name, description and input JSON Schema
//! (seed 003's `rye_execute` parameters, §12.1), under the seeds' names or the reference's
//! (§12.10, `--tool-names reference`).

use std::sync::Arc;

use clap::ValueEnum;
use rmcp::model::Tool;
use serde_json::{Value as Json, json};

/// Which names the server and its tools go by.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ToolNames {
    /// The seeds' names: server `ryechain`, tool `rye_execute`.
    #[default]
    Seed,
    /// The reference server's names: server `rye`, tool `execute` (so an agent configured for the
    /// reference keeps working; clients show them as `mcp__rye__execute`).
    Reference,
}

impl ToolNames {
    /// The server's name in `initialize`'s `serverInfo`.
    pub fn server_name(self) -> &'static str {
        match self {
            ToolNames::Seed => "ryechain",
            ToolNames::Reference => "rye",
        }
    }

    /// The name of the execute tool.
    pub fn execute(self) -> &'static str {
        match self {
            ToolNames::Seed => "rye_execute",
            ToolNames::Reference => "execute",
        }
    }
}

/// The item types of §12.1, in the order the schema lists them.
pub const ITEM_TYPES: [&str; 3] = ["directive", "tool", "knowledge"];

/// The arguments the execute tool's schema lists (seed 003's first six, §12.1).
pub const EXECUTE_ARGUMENTS: [&str; 6] = [
    "item_type",
    "item_id",
    "project_path",
    "parameters",
    "dry_run",
    "thread",
];

/// The input JSON Schema of the execute tool.
pub fn execute_schema() -> Json {
    json!({
        "type": "object",
        "properties": {
            "item_type": {
                "type": "string",
                "enum": ITEM_TYPES,
                "description": "The kind of item: directive, tool or knowledge (this version runs tools only)."
            },
            "item_id": {
                "type": "string",
                "description": "The item's id: its path below the type's folder of `.ai/`, without the extension (for example `rye/bash/bash`)."
            },
            "project_path": {
                "type": "string",
                "description": "The absolute path of the project directory (the one holding `.ai/`)."
            },
            "parameters": {
                "type": "object",
                "default": {},
                "description": "Parameters passed to the item (a tool receives them as JSON)."
            },
            "dry_run": {
                "type": "boolean",
                "default": false,
                "description": "Build and validate the tool's chain without verifying signatures or running anything."
            },
            "thread": {
                "type": "boolean",
                "default": false,
                "description": "Run the item in an LLM thread (needs an LLM provider; ryechain has none and answers an error)."
            }
        },
        "required": ["item_type", "item_id", "project_path"]
    })
}

/// The execute tool as `tools/list` gives it.
pub fn execute_tool(names: ToolNames) -> Tool {
    let schema = match execute_schema() {
        Json::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Tool::new(
        names.execute(),
        "Execute a Rye OS item and answer seed 003's JSON response. A tool runs through its \
         executor chain (every element resolved across the project, user and system spaces, its \
         signature verified, the chain validated); `dry_run` builds and validates the chain only. \
         A directive answers its body with `parameters` (or `parameters.inputs`) filled in, for \
         you to follow; a knowledge entry answers its metadata and body. Signatures are verified \
         before anything is read.",
        Arc::new(schema),
    )
}
