//! L6 the arguments of one execute call (§12.1) read from the client's JSON: names, types,
//! defaults and the project directory checked by hand, each problem answered as a sentence the
//! agent can act on (never a panic, never a protocol error). The sentences are shared with the
//! search call's reader (`search`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

use super::tools::EXECUTE_ARGUMENTS;
use crate::system::System;

/// Seed 003's arguments that only a threaded call takes (§12.1): named, they ask for a thread.
const THREAD_ONLY: [&str; 3] = ["async", "model", "limit_overrides"];

/// One execute call's arguments, types checked and defaults applied.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecuteArgs {
    /// As given: an unknown type is answered by the caller in §12.1's words.
    pub item_type: String,
    pub item_id: String,
    /// `None` when the call names none (the server's default project may stand in).
    pub project_path: Option<String>,
    pub parameters: Map<String, Json>,
    pub dry_run: bool,
    /// The first argument that asks for an LLM thread (`thread: true`, `async: true`, `model`,
    /// `limit_overrides`), if any.
    pub threaded: Option<&'static str>,
}

/// How a JSON value's type is named in a message ("must be a string, not a number").
fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// What a required argument is, for the message that says it is missing.
fn what(name: &str) -> &'static str {
    match name {
        "item_type" => "one of directive, tool, knowledge",
        "item_id" => "the item's id, such as `rye/bash/bash`",
        "query" => "keywords to search for; `*` lists every item",
        _ => "the absolute path of the project directory, the one holding `.ai/`",
    }
}

pub(super) fn missing(name: &str) -> String {
    format!("Missing required argument `{name}` ({})", what(name))
}

pub(super) fn mistyped(name: &str, wanted: &str, got: &Json) -> String {
    format!("Argument `{name}` must be {wanted}, not {}", kind(got))
}

/// A required string argument.
pub(super) fn required_str(args: &Map<String, Json>, name: &str) -> Result<String, String> {
    match args.get(name) {
        None => Err(missing(name)),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(other) => Err(mistyped(name, "a string", other)),
    }
}

/// An optional boolean argument (absent or null: `false`).
pub(super) fn flag(args: &Map<String, Json>, name: &str) -> Result<bool, String> {
    match args.get(name) {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Bool(b)) => Ok(*b),
        Some(other) => Err(mistyped(name, "a boolean", other)),
    }
}

/// Read the arguments of an execute call. Unknown names are refused (a misspelt `dry_run` must
/// not run the tool for real), with the nearest known name.
pub fn read(arguments: Option<&Map<String, Json>>) -> Result<ExecuteArgs, String> {
    let empty = Map::new();
    let args = arguments.unwrap_or(&empty);
    let known = || EXECUTE_ARGUMENTS.iter().chain(&THREAD_ONLY).copied();
    if let Some(name) = args.keys().find(|k| !known().any(|n| n == k.as_str())) {
        let meant = crate::message::nearest(name, known())
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        return Err(format!(
            "Unknown argument `{name}`{meant}; the arguments are {}",
            EXECUTE_ARGUMENTS.join(", ")
        ));
    }
    let item_type = required_str(args, "item_type")?;
    let item_id = required_str(args, "item_id")?;
    let project_path = match args.get("project_path") {
        None => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(other) => return Err(mistyped("project_path", "a string", other)),
    };
    let parameters = match args.get("parameters") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(map)) => map.clone(),
        Some(other) => return Err(mistyped("parameters", "an object", other)),
    };
    let dry_run = flag(args, "dry_run")?;
    let threaded = if flag(args, "thread")? {
        Some("thread")
    } else if flag(args, "async")? {
        Some("async")
    } else {
        ["model", "limit_overrides"]
            .into_iter()
            .find(|n| args.get(*n).is_some_and(|v| !v.is_null()))
    };
    Ok(ExecuteArgs {
        item_type,
        item_id,
        project_path,
        parameters,
        dry_run,
        threaded,
    })
}

/// The project directory of a call: `project_path`, which must be absolute and hold `.ai/`
/// (§12.1; the reference reads `<project_path>/.ai` and nothing above it), else the server's
/// default project (`ryechain mcp PATH`).
pub fn project_dir(
    sys: &dyn System,
    given: Option<&str>,
    default: Option<&Path>,
) -> Result<PathBuf, String> {
    let raw = match (given, default) {
        (Some(raw), _) => raw,
        (None, Some(dir)) => return Ok(dir.to_path_buf()),
        (None, None) => return Err(missing("project_path")),
    };
    let path = Path::new(raw);
    if raw.is_empty() {
        return Err(format!(
            "Argument `project_path` is empty; give {}",
            what("project_path")
        ));
    }
    if !path.is_absolute() {
        return Err(format!(
            "Argument `project_path` must be an absolute path, not `{raw}`; give {}",
            what("project_path")
        ));
    }
    if !sys.is_dir(path) {
        return Err(if sys.is_file(path) {
            format!("Argument `project_path` {raw} is a file, not the project directory")
        } else {
            format!("Argument `project_path` {raw} does not exist")
        });
    }
    if !sys.is_dir(&path.join(".ai")) {
        return Err(format!(
            "Argument `project_path` {raw} has no `.ai/` directory, so it is no Rye project (`ryechain init` makes one)"
        ));
    }
    Ok(path.to_path_buf())
}

/// The answer to a call that asks for an LLM thread (`arg`: the argument that asked).
pub fn thread_refusal(arg: &str) -> String {
    let why =
        "needs an LLM provider to run the thread, and ryechain has none: it does not run threads";
    if arg == "thread" {
        format!(
            "Threaded execution (`thread: true`) {why}. Call again without `thread` to run the item here."
        )
    } else {
        format!(
            "`{arg}` applies only to threaded execution (`thread: true`), which {why}. Call again without `{arg}`."
        )
    }
}
