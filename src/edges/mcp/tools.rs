//! L6 the MCP tools ryechain lists, as data: each tool's name, description and input JSON Schema
//! (seed 003's `rye_execute` parameters, §12.1; `rye_search`'s, the reference's with the seed-era
//! `scope` and `space`, §12.7; `rye_load`'s, §12.8; `rye_sign`'s, §12.9), under the seeds' names or the reference's (§12.10,
//! `--tool-names reference`).

use std::sync::Arc;

use clap::ValueEnum;
use rmcp::model::Tool;
use serde_json::{Value as Json, json};

/// Which names the server and its tools go by.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ToolNames {
    /// The seeds' names: server `ryechain`, tools `rye_execute`, `rye_search`, `rye_load` and
    /// `rye_sign`.
    #[default]
    Seed,
    /// The reference server's names: server `rye`, tools `execute`, `search`, `load` and `sign` (so an agent
    /// configured for the reference keeps working; clients show them as `mcp__rye__execute`).
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

    /// The name of the search tool.
    pub fn search(self) -> &'static str {
        match self {
            ToolNames::Seed => "rye_search",
            ToolNames::Reference => "search",
        }
    }

    /// The name of the load tool.
    pub fn load(self) -> &'static str {
        match self {
            ToolNames::Seed => "rye_load",
            ToolNames::Reference => "load",
        }
    }

    /// The name of the sign tool.
    pub fn sign(self) -> &'static str {
        match self {
            ToolNames::Seed => "rye_sign",
            ToolNames::Reference => "sign",
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
                "description": "The kind of item: directive, tool or knowledge."
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
    tool(
        names.execute(),
        "Execute a Rye OS item and answer seed 003's JSON response. A tool runs through its \
         executor chain (every element resolved across the project, user and system spaces, its \
         signature verified, the chain validated); `dry_run` builds and validates the chain only. \
         A directive answers its body with `parameters` (or `parameters.inputs`) filled in, for \
         you to follow; a knowledge entry answers its metadata and body. Signatures are verified \
         before anything is read.",
        execute_schema(),
    )
}

/// The arguments the search tool's schema lists: the reference's (§12.7), then the seed-era
/// `scope` and `space` that stand for `item_type` and `source`.
pub const SEARCH_ARGUMENTS: [&str; 13] = [
    "item_type",
    "query",
    "project_path",
    "source",
    "limit",
    "offset",
    "sort_by",
    "fields",
    "filters",
    "fuzzy",
    "proximity",
    "scope",
    "space",
];

/// The input JSON Schema of the search tool.
pub fn search_schema() -> Json {
    let distance = |default: Option<u64>, what: &str| {
        let mut d = json!({"type": "integer", "minimum": 0, "description": what});
        if let Some(n) = default {
            d["default"] = json!(n);
        }
        d
    };
    json!({
        "type": "object",
        "properties": {
            "item_type": {
                "type": "string",
                "enum": ITEM_TYPES,
                "description": "The kind of item to search: directive, tool or knowledge (or give the seed-era `scope`)."
            },
            "query": {
                "type": "string",
                "description": "Keywords, all of which must match (case-insensitive substrings of the name, title, description, category or preview); `AND`, `OR`, `NOT` in capitals, (groups), \"exact phrases\", wild*cards matched per word; `*` lists every item. A query that does not parse is an error naming the column."
            },
            "project_path": {
                "type": "string",
                "description": "The absolute path of the project directory (the one holding `.ai/`)."
            },
            "source": {
                "type": "string",
                "enum": crate::facts::search::Source::NAMES,
                "default": "project",
                "description": "Which spaces to search (or give the seed-era `space`)."
            },
            "limit": {"type": "integer", "minimum": 0, "default": crate::facts::search::DEFAULT_LIMIT, "description": "How many results to return."},
            "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "How many results to skip (paging)."},
            "sort_by": {
                "type": "string",
                "enum": crate::facts::search::SortBy::NAMES,
                "default": "score",
                "description": "score (ties by space: project, user, system, then id), date (newest created_at first) or name."
            },
            "fields": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "A query per field that must match too, for example {\"category\": \"core\"}; fields: title, name, description, category, content, preview, id, source, type."
            },
            "filters": {
                "type": "object",
                "description": "Exact values of a result's fields or metadata: a value (case-insensitive), a list (any of), \"!x\" (not), \">=1.2.0\" (versions), date_from / date_to (created_at)."
            },
            "fuzzy": {
                "type": "object",
                "properties": {
                    "enabled": {"type": "boolean", "default": false},
                    "max_distance": distance(Some(2), "Levenshtein edits a term may be off a word.")
                },
                "description": "Match terms despite typos."
            },
            "proximity": {
                "type": "object",
                "properties": {
                    "enabled": {"type": "boolean", "default": false},
                    "max_distance": distance(Some(5), "Words every term may be from the first.")
                },
                "description": "Only items whose query terms are near each other."
            },
            "scope": {
                "type": "string",
                "description": "Seed-era: the item type and an optional namespace, for example `tool`, `tool.rye.core.*` or `rye.search.tool.rye.core.*` (dots become `/`; a trailing `*` matches everything under it)."
            },
            "space": {
                "type": "string",
                "enum": crate::facts::search::Source::NAMES,
                "default": "all",
                "description": "Seed-era name of `source`; its default is all."
            }
        },
        "required": ["query", "project_path"]
    })
}

/// The search tool as `tools/list` gives it.
pub fn search_tool(names: ToolNames) -> Tool {
    tool(
        names.search(),
        "Find directives, tools or knowledge entries by keyword before calling execute: the ids \
         you can pass to it, ranked by how well the name, title, description, category and \
         preview match (a score from 0 to 1), with each item's space, path, metadata and \
         signature verdict. Name the item type with `item_type` (or `scope`).",
        search_schema(),
    )
}

/// A tool as `tools/list` gives it, from its schema.
fn tool(name: &'static str, description: &'static str, schema: Json) -> Tool {
    let schema = match schema {
        Json::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Tool::new(name, description, Arc::new(schema))
}

/// The arguments the load tool's schema lists (§12.8).
pub const LOAD_ARGUMENTS: [&str; 5] = [
    "item_type",
    "item_id",
    "project_path",
    "source",
    "destination",
];

/// The input JSON Schema of the load tool.
pub fn load_schema() -> Json {
    json!({
        "type": "object",
        "properties": {
            "item_type": {
                "type": "string",
                "enum": ITEM_TYPES,
                "description": "The kind of item: directive, tool or knowledge."
            },
            "item_id": {
                "type": "string",
                "description": "The item's id: its path below the type's folder of `.ai/`, without the extension."
            },
            "project_path": {
                "type": "string",
                "description": "The absolute path of the project directory (the one holding `.ai/`)."
            },
            "source": {
                "type": "string",
                "enum": ["project", "user", "system"],
                "description": "The space to load from; without it, the first that holds the item (project, user, system)."
            },
            "destination": {
                "type": "string",
                "enum": ["project", "user"],
                "description": "Copy the item into this space, under the same category path (never over a file that is there)."
            }
        },
        "required": ["item_type", "item_id", "project_path"]
    })
}

/// The load tool as `tools/list` gives it.
pub fn load_tool(names: ToolNames) -> Tool {
    tool(
        names.load(),
        "Read an item's content and metadata (its signature verified first), or copy it into the \
         project or user space with `destination` to customise it (then sign the copy).",
        load_schema(),
    )
}

/// The arguments the sign tool's schema lists (§12.9).
pub const SIGN_ARGUMENTS: [&str; 4] = ["item_type", "item_id", "project_path", "source"];

/// The input JSON Schema of the sign tool.
pub fn sign_schema() -> Json {
    json!({
        "type": "object",
        "properties": {
            "item_type": {
                "type": "string",
                "enum": ITEM_TYPES,
                "description": "The kind of item: directive, tool or knowledge."
            },
            "item_id": {
                "type": "string",
                "description": "The item's id, or a glob with `*` and `?` (for example `acme/*`) to sign every match."
            },
            "project_path": {
                "type": "string",
                "description": "The absolute path of the project directory (the one holding `.ai/`)."
            },
            "source": {
                "type": "string",
                "enum": ["project", "user"],
                "default": "project",
                "description": "The space whose files are signed (system bundles are immutable)."
            }
        },
        "required": ["item_type", "item_id", "project_path"]
    })
}

/// The sign tool as `tools/list` gives it.
pub fn sign_tool(names: ToolNames) -> Tool {
    tool(
        names.sign(),
        "Validate and sign items with the person's signing key, as `ryechain sign` does: each \
         item's metadata (and a tool's chain) is checked first and a broken item is refused with \
         its issues; a signed tool's stale lockfiles are removed. Answers the signature, or per \
         item for a batch.",
        sign_schema(),
    )
}
