//! L6 `ryechain init` (a project: `.ai/` with a config) and `ryechain new tool ID` (a tool file
//! from a template of one of the bundled runtimes, ready to lint, sign and run), as `cargo new`.
#![allow(
    clippy::disallowed_methods,
    reason = "the scaffolding edge makes folders and writes new files"
)]

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::{Subcommand, ValueEnum};

use super::{Context, absolute};

/// What `ryechain new` makes.
#[derive(Subcommand, Debug)]
pub enum NewCommand {
    /// A tool: `<project>/.ai/tools/<ID>.<ext>`, run by a bundled runtime.
    Tool {
        /// The tool's item id (`acme/greet`).
        id: String,
        /// The runtime that runs it.
        #[arg(long, value_enum, default_value = "python")]
        runtime: RuntimeArg,
        /// A folder in the project (the project is found upwards from it).
        #[arg(default_value = ".")]
        path: PathBuf,
    },
}

/// The bundled runtimes a new tool can name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum RuntimeArg {
    /// `rye/core/runtimes/python/script`: a script reading its parameters on stdin.
    Python,
    /// `rye/core/runtimes/python/function`: a module with `execute(params, project_path)`.
    Function,
    /// `rye/core/runtimes/node/node`: a JavaScript module reading its parameters on stdin.
    Node,
    /// `rye/core/runtimes/bash/bash`: a shell script reading its parameters on stdin.
    Bash,
}

impl RuntimeArg {
    fn extension(self) -> &'static str {
        match self {
            RuntimeArg::Python | RuntimeArg::Function => "py",
            RuntimeArg::Node => "mjs",
            RuntimeArg::Bash => "sh",
        }
    }

    /// The tool's text: a header naming the runtime, and a body that echoes its parameters.
    fn template(self, id: &str) -> String {
        let category = id.rsplit_once('/').map_or("", |(dir, _)| dir);
        match self {
            RuntimeArg::Python => format!(
                r#""""{id}: a Python script run by the python/script runtime.

The runtime starts the script with the parameters as JSON on stdin; the JSON it prints comes back
as the result's `data`.
"""

__version__ = "0.1.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "{category}"
__tool_description__ = "Describe what {id} does"

import json
import sys


def main() -> None:
    params = json.loads(sys.stdin.read() or "{{}}")
    print(json.dumps({{"ok": True, "params": params}}))


if __name__ == "__main__":
    main()
"#
            ),
            RuntimeArg::Function => format!(
                r#""""{id}: a Python function run by the python/function runtime.

The runtime imports this file and calls `execute(params, project_path)`; the returned value comes
back as the result's `data`.
"""

__version__ = "0.1.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "{category}"
__tool_description__ = "Describe what {id} does"


def execute(params, project_path):
    return {{"ok": True, "params": params}}
"#
            ),
            RuntimeArg::Node => format!(
                r#"// {id}: a JavaScript module run by the node/node runtime, with the parameters as JSON on
// stdin; the JSON it prints comes back as the result's `data`.
export const __version__ = "0.1.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "{category}";
export const __tool_description__ = "Describe what {id} does";

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {{
  const params = input ? JSON.parse(input) : {{}};
  console.log(JSON.stringify({{ ok: true, params }}));
}});
"#
            ),
            RuntimeArg::Bash => format!(
                r#"# {id}: a shell script run by the bash/bash runtime (`/bin/bash <this file> <project>`), with
# the parameters as JSON on stdin; the JSON it prints comes back as the result's `data`.
__version__="0.1.0"
__tool_type__="bash"
__executor_id__="rye/core/runtimes/bash/bash"
__category__="{category}"
__tool_description__="Describe what {id} does"

params=$(cat)
printf '{{"ok": true, "params": %s}}\n' "${{params:-{{\}}}}"
"#
            ),
        }
    }
}

/// The config `init` writes: every setting at its default, as comments to edit.
const CONFIG: &str = "\
# ryechain's settings for this project (merged over the user's and the system's).
lint:
  select: [ALL]            # rule ids or families
  ignore: []
  # severity: {ambiguous-item: error}
# chain:
#   max_depth: 10
";

/// `ryechain init [PATH]`: make `PATH/.ai/` with `tools/` and a config.
pub fn init(ctx: &Context<'_>, path: &Path) -> anyhow::Result<u8> {
    let dir = absolute(ctx.sys, path)?;
    let ai = dir.join(".ai");
    if ctx.sys.is_dir(&ai) {
        bail!("{} is already a project (it has `.ai/`)", dir.display());
    }
    std::fs::create_dir_all(ai.join("tools"))
        .with_context(|| format!("cannot create {}", ai.join("tools").display()))?;
    std::fs::create_dir_all(ai.join("config"))
        .with_context(|| format!("cannot create {}", ai.join("config").display()))?;
    let config = ai.join("config/ryechain.yaml");
    std::fs::write(&config, CONFIG)
        .with_context(|| format!("cannot write {}", config.display()))?;
    outln!("created {}", ai.display());
    outln!("  {}", config.display());
    outln!(
        "next: `ryechain new tool acme/hello`, then `ryechain sign acme/hello` and `ryechain exec acme/hello`"
    );
    Ok(0)
}

/// `ryechain new tool ID`: write the tool's file from its runtime's template.
pub fn new(ctx: &Context<'_>, cmd: NewCommand) -> anyhow::Result<u8> {
    let NewCommand::Tool { id, runtime, path } = cmd;
    if let Some(reason) = crate::model::item_id_problem(&id) {
        bail!(crate::message::invalid_item_id(&id, reason));
    }
    let project = ctx
        .project_root(&path)
        .map_err(|e| anyhow::anyhow!("{e:#}; `ryechain init` makes a project here"))?;
    let rel = crate::model::SpaceRel::new(format!("tools/{id}.{}", runtime.extension()))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let file = project.join(".ai").join(rel.as_str());
    // Any file of that id (whatever its extension) is the tool already: a second one would make
    // the id ambiguous.
    let stem = id.rsplit('/').next().unwrap_or(&id);
    if let Some(dir) = file.parent()
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.rsplit_once('.').is_some_and(|(s, _)| s == stem) {
                bail!("{id} already exists: {}", entry.path().display());
            }
        }
    }
    let written = crate::system::space_write::write_in_space(
        &project.join(".ai"),
        &rel,
        runtime.template(&id).as_bytes(),
        0o644,
    )?;
    outln!("created {}", written.display());
    outln!("next: `ryechain sign {id}` and `ryechain exec {id}`");
    Ok(0)
}
