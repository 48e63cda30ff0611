//! Rendering one item as file text: Python tools, YAML tools and runtimes.

use crate::model::Family;
use crate::rng::Rng;
use crate::vocab::{
    COMMANDS, HOSTS, MCP_SERVERS, MCP_TOOLS, SCHEMA_PARAMS, SENTENCES, SNIPPETS, Snippet,
};

/// Quote a YAML scalar (double-quoted style).
fn q(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn title_case(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn folder_of(id: &str) -> &str {
    id.rsplit_once('/').map_or("", |(f, _)| f)
}

pub(crate) fn name_of(id: &str) -> &str {
    id.rsplit_once('/').map_or(id, |(_, n)| n)
}

/// `(verb, noun)` of a `verb_noun` tool name; the noun made a Python identifier fragment.
fn verb_noun(id: &str) -> (String, String) {
    let name = name_of(id);
    let (verb, noun) = name.split_once('_').unwrap_or(("run", name));
    let noun: String = noun
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    (
        verb.to_owned(),
        if noun.is_empty() {
            "items".to_owned()
        } else {
            noun
        },
    )
}

fn domain_of(id: &str) -> &str {
    id.split('/').nth(1).unwrap_or("core")
}

fn description(id: &str) -> String {
    let (verb, noun) = verb_noun(id);
    format!(
        "{} {} for {}",
        title_case(&verb),
        noun.replace('_', " "),
        folder_of(id)
    )
}

pub(crate) fn semver(rng: &mut Rng) -> String {
    let major = [0, 1, 1, 1, 2, 2, 3][rng.below(7)];
    format!("{}.{}.{}", major, rng.below(13), rng.below(21))
}

/// How a Python tool's executor line is written.
#[derive(Clone, Copy)]
pub(crate) enum PyExec<'a> {
    Id(&'a str),
    /// `__executor_id__ = None`.
    None,
    /// No `__executor_id__` line at all.
    Omit,
}

pub(crate) struct PySpec<'a> {
    pub(crate) id: &'a str,
    pub(crate) tool_type: &'a str,
    pub(crate) version: Option<&'a str>,
    pub(crate) exec: PyExec<'a>,
    pub(crate) outputs: &'a [String],
    /// Put an unclosed bracket in a body line (the header stays valid).
    pub(crate) syntax_error: bool,
    pub(crate) note: Option<&'a str>,
}

pub(crate) fn render_python(rng: &mut Rng, spec: &PySpec) -> String {
    let (verb, noun) = verb_noun(spec.id);
    let noun_h = noun.replace('_', " ");
    let domain = domain_of(spec.id);
    let env_prefix: String = domain
        .to_ascii_uppercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let fill = |s: &str| {
        s.replace("@NOUN@", &noun)
            .replace("@NOUN_H@", &noun_h)
            .replace("@DOMAIN@", domain)
            .replace("@ENV@", &env_prefix)
    };
    let is_lib = spec.tool_type == "python_lib";
    let budget = rng.range(1100, 3900);

    // Helper functions, chosen without replacement until the size budget is reached.
    let mut order: Vec<usize> = (0..SNIPPETS.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut chosen: Vec<&Snippet> = Vec::new();
    let mut size = if is_lib { 700 } else { 1500 };
    for &i in &order {
        let s = &SNIPPETS[i];
        let cost = s.text.len() + s.use_line.map_or(0, str::len) + 30;
        if size + cost > budget && !(is_lib && chosen.is_empty()) {
            continue;
        }
        size += cost;
        chosen.push(s);
        if chosen.len() >= 5 {
            break;
        }
    }
    // The estimate is rough: drop helpers until the file fits in 4 KB. Every attempt replays the
    // same random stream, so the result depends only on the seed.
    loop {
        let mut attempt = rng.clone();
        let out = compose_python(
            &mut attempt,
            spec,
            &chosen,
            budget,
            &fill,
            (&verb, &noun, &noun_h, domain),
        );
        if out.len() <= MAX_PYTHON_BYTES || chosen.len() <= usize::from(is_lib) {
            *rng = attempt;
            return out;
        }
        chosen.pop();
    }
}

/// Python tool files stay below this size (4 KB).
const MAX_PYTHON_BYTES: usize = 4000;

fn compose_python(
    rng: &mut Rng,
    spec: &PySpec,
    chosen: &[&Snippet],
    budget: usize,
    fill: &dyn Fn(&str) -> String,
    (verb, noun, noun_h, domain): (&str, &str, &str, &str),
) -> String {
    let is_lib = spec.tool_type == "python_lib";
    let mut imports: Vec<&str> = vec![
        "import json",
        "import logging",
        "import sys",
        "from pathlib import Path",
    ];
    if !is_lib {
        imports.push("import argparse");
    }
    for s in chosen {
        imports.extend_from_slice(s.imports);
    }
    imports.sort_by_key(|l| (l.starts_with("from "), l.to_ascii_lowercase()));
    imports.dedup();

    let mut out = String::with_capacity(budget + 512);
    if let Some(note) = spec.note {
        out.push_str(&format!("# synth: {note}\n"));
    }
    // Module docstring.
    let title = if is_lib {
        format!(
            "Shared helpers for the {} tools",
            folder_of(folder_of(spec.id))
        )
    } else {
        format!("{} {}", title_case(verb), noun_h)
    };
    out.push_str(&format!("\"\"\"{title}.\n"));
    let sentences = rng.range(1, 4);
    let mut para = String::new();
    for _ in 0..sentences {
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(&fill(rng.word(&SENTENCES)));
    }
    out.push('\n');
    out.push_str(&wrap(&para, 92));
    out.push_str("\"\"\"\n\n");

    let header = {
        let mut h = String::new();
        if let Some(v) = spec.version {
            h.push_str(&format!("__version__ = \"{v}\"\n"));
        }
        match spec.exec {
            PyExec::Id(e) => h.push_str(&format!("__executor_id__ = \"{e}\"\n")),
            PyExec::None => h.push_str("__executor_id__ = None\n"),
            PyExec::Omit => {}
        }
        h.push_str(&format!("__tool_type__ = \"{}\"\n", spec.tool_type));
        h.push_str(&format!("__category__ = \"{}\"\n", folder_of(spec.id)));
        h.push_str(&format!(
            "__tool_description__ = \"{}\"\n",
            description(spec.id)
        ));
        h
    };
    let import_block = imports.join("\n") + "\n";
    if rng.percent(50) {
        out.push_str(&import_block);
        out.push('\n');
        out.push_str(&header);
    } else {
        out.push_str(&header);
        out.push('\n');
        out.push_str(&import_block);
    }

    if !is_lib && rng.percent(70) {
        let n = rng.range(1, 4);
        let mut params: Vec<usize> = (0..SCHEMA_PARAMS.len()).collect();
        for i in (1..params.len()).rev() {
            params.swap(i, rng.below(i + 1));
        }
        out.push_str("\nCONFIG_SCHEMA = {\n    \"type\": \"object\",\n    \"properties\": {\n");
        for &p in &params[..n] {
            let (name, schema) = SCHEMA_PARAMS[p];
            out.push_str(&format!("        \"{name}\": {schema},\n"));
        }
        out.push_str("    },\n}\n");
    }
    if !spec.outputs.is_empty() {
        let list: Vec<String> = spec.outputs.iter().map(|o| format!("\"{o}\"")).collect();
        out.push_str(&format!("\nOUTPUTS = [{}]\n", list.join(", ")));
    }
    if !is_lib && rng.percent(12) {
        let mode = if rng.percent(70) {
            "deep_merge"
        } else {
            "first_match"
        };
        out.push_str(&format!(
            "\nCONFIG_RESOLVE = {{\"path\": \"{domain}/{verb}.yaml\", \"mode\": \"{mode}\"}}\n"
        ));
    }
    out.push_str(&format!("\nlog = logging.getLogger(\"{}\")\n", spec.id));

    for s in chosen {
        out.push_str("\n\n");
        out.push_str(&fill(s.text));
    }
    if is_lib {
        return out;
    }

    // execute(): the function runtime's entry point, also called by main().
    out.push_str("\n\ndef execute(params: dict, project_path: str) -> dict:\n");
    out.push_str("    \"\"\"Run the tool; used by the function runtime and by main().\"\"\"\n");
    out.push_str("    root = Path(project_path)\n");
    out.push_str(&format!(
        "    limit = int(params.get(\"limit\", {}))\n",
        [10, 50, 100, 250, 1000][rng.below(5)]
    ));
    out.push_str("    dry_run = bool(params.get(\"dry_run\", False))\n");
    out.push_str(&format!(
        "    log.info(\"{verb} {noun_h} under %s (limit=%d, dry_run=%s)\", root, limit, dry_run)\n"
    ));
    if spec.syntax_error {
        // The list is never closed; the dict's `}` arrives first. Parsers recover right after
        // it, so this is one syntax error rather than a cascade to the end of the file.
        out.push_str(&format!(
            "    summary = {{\"{noun}\": limit, \"flags\": [\"dry_run\"}}\n"
        ));
    }
    out.push_str(&format!(
        "    result = {{\"success\": True, \"action\": \"{verb}\", \"target\": \"{noun}\", \"limit\": limit, \"dry_run\": dry_run}}\n"
    ));
    for s in chosen {
        if let Some(line) = s.use_line {
            out.push_str("    ");
            out.push_str(&fill(line));
            out.push('\n');
        }
    }
    if !spec.outputs.is_empty() {
        for o in spec.outputs {
            out.push_str(&format!("    result[\"{o}\"] = params.get(\"{o}\")\n"));
        }
    }
    out.push_str("    return result\n");
    out.push_str(
        r#"

def main() -> None:
    parser = argparse.ArgumentParser(description=__tool_description__)
    parser.add_argument("--project-path", default=".")
    args = parser.parse_args()
    params = json.loads(sys.stdin.read() or "{}")
    try:
        result = execute(params, args.project_path)
    except Exception as exc:  # reported as JSON so the executor can surface it
        result = {"success": False, "error": str(exc)}
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
"#,
    );
    out
}

/// Greedy word wrap (docstrings).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split(' ') {
        if line > 0 && line + 1 + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out.push('\n');
    out
}

/// What a YAML tool's config looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum YamlKind {
    Command,
    Http,
    Mcp,
    Graph,
    McpServer,
}

pub(crate) struct YamlSpec<'a> {
    pub(crate) id: &'a str,
    pub(crate) kind: YamlKind,
    pub(crate) version: Option<&'a str>,
    /// `None` writes `executor_id: null`.
    pub(crate) executor: Option<&'a str>,
    pub(crate) outputs: &'a [String],
    /// Tool ids a graph's nodes call (data only).
    pub(crate) graph_targets: &'a [String],
    /// Leave a flow sequence unclosed so the document does not parse.
    pub(crate) malformed: bool,
    pub(crate) note: Option<&'a str>,
}

pub(crate) fn render_yaml_tool(rng: &mut Rng, spec: &YamlSpec) -> String {
    let mut out = String::with_capacity(900);
    if let Some(note) = spec.note {
        out.push_str(&format!("# synth: {note}\n"));
    }
    let desc = if spec.kind == YamlKind::McpServer {
        format!(
            "MCP server {} for the {} tools",
            name_of(spec.id),
            folder_of(folder_of(folder_of(spec.id)))
        )
    } else {
        description(spec.id)
    };
    out.push_str(&format!("# {desc}\n"));
    if let Some(v) = spec.version {
        out.push_str(&format!("version: {}\n", q(v)));
    }
    let tool_type = match spec.kind {
        YamlKind::Command => "yaml",
        YamlKind::Http => "http",
        YamlKind::Mcp => "mcp",
        YamlKind::Graph => "graph",
        YamlKind::McpServer => "mcp_server",
    };
    out.push_str(&format!("tool_type: {tool_type}\n"));
    match spec.executor {
        Some(e) => out.push_str(&format!("executor_id: {}\n", q(e))),
        None => out.push_str("executor_id: null\n"),
    }
    out.push_str(&format!("category: {}\n", q(folder_of(spec.id))));
    out.push_str(&format!("description: {}\n", q(&desc)));
    if !spec.outputs.is_empty() {
        out.push_str(&format!("outputs: [{}]\n", spec.outputs.join(", ")));
    }
    out.push_str("\nconfig:\n");
    match spec.kind {
        YamlKind::Command => {
            let (program, args) = COMMANDS[rng.below(COMMANDS.len())];
            out.push_str(&format!("  command: {}\n", q(program)));
            if spec.malformed {
                let list: Vec<String> = args.iter().map(|a| q(a)).collect();
                out.push_str(&format!("  args: [{}\n", list.join(", ")));
            } else {
                out.push_str("  args:\n");
                for a in args {
                    out.push_str(&format!("    - {}\n", q(a)));
                }
            }
            out.push_str(&format!(
                "  timeout: {}\n",
                [60, 120, 300, 900][rng.below(4)]
            ));
            let params: Vec<&str> = args
                .iter()
                .flat_map(|a| {
                    a.split('{')
                        .skip(1)
                        .filter_map(|p| p.split_once('}').map(|(n, _)| n))
                })
                .collect();
            out.push_str("\nconfig_schema:\n  type: object\n  properties:\n");
            for p in &params {
                out.push_str(&format!("    {p}:\n      type: string\n"));
            }
            out.push_str(&format!("  required: [{}]\n", params[0]));
        }
        YamlKind::Http => {
            let (verb, noun) = verb_noun(spec.id);
            let method = if matches!(
                verb.as_str(),
                "fetch" | "check" | "download" | "collect" | "diff"
            ) {
                "GET"
            } else {
                "POST"
            };
            let env = domain_of(spec.id).to_ascii_uppercase().replace('-', "_");
            out.push_str(&format!("  method: {method}\n"));
            out.push_str(&format!(
                "  url: {}\n",
                q(&format!("https://{}/v2/{noun}", rng.pick(&HOSTS)))
            ));
            out.push_str("  headers:\n    Accept: \"application/json\"\n");
            out.push_str(&format!(
                "  auth:\n    type: bearer\n    token: {}\n",
                q(&format!("${{{env}_API_TOKEN}}"))
            ));
            if method == "POST" {
                out.push_str("  body:\n    since: \"{since}\"\n    dry_run: \"{dry_run}\"\n");
            }
            out.push_str(&format!("  timeout: {}\n", [10, 30, 60][rng.below(3)]));
            out.push_str("  retry:\n    max_attempts: 3\n    backoff: exponential\n");
        }
        YamlKind::Mcp => {
            let server = rng.pick(&MCP_SERVERS);
            out.push_str(&format!(
                "  server: {}\n",
                q(&format!("mcp/servers/{server}"))
            ));
            out.push_str(&format!(
                "  server_config_path: {}\n",
                q(&format!(
                    "{{project_path}}/.ai/tools/mcp/servers/{server}.yaml"
                ))
            ));
            out.push_str(&format!("  tool_name: {}\n", q(rng.word(&MCP_TOOLS))));
            out.push_str(&format!("  timeout: {}\n", [30, 45, 60][rng.below(3)]));
        }
        YamlKind::Graph => {
            // A graph with nothing to call is just its return node (a node without an action
            // would be `graph-node-without-action`).
            let start = if spec.graph_targets.is_empty() {
                "done"
            } else {
                "step_1"
            };
            out.push_str(&format!("  start: {start}\n  nodes:\n"));
            let n = spec.graph_targets.len().max(1);
            for (i, target) in spec.graph_targets.iter().enumerate() {
                out.push_str(&format!(
                    "    step_{}:\n      action:\n        item_type: tool\n",
                    i + 1
                ));
                out.push_str(&format!("        item_id: {}\n", q(target)));
                out.push_str(&format!(
                    "        params:\n          limit: {}\n",
                    [10, 100, 500][rng.below(3)]
                ));
                let next = if i + 1 < spec.graph_targets.len() {
                    format!("step_{}", i + 2)
                } else {
                    "done".to_owned()
                };
                out.push_str(&format!("      next: {next}\n"));
            }
            out.push_str("    done:\n      type: return\n");
            out.push_str(&format!("  max_steps: {}\n", n * 4));
        }
        YamlKind::McpServer => {
            let server = name_of(spec.id);
            let env = server.to_ascii_uppercase().replace('-', "_");
            if rng.percent(60) {
                out.push_str("  transport: stdio\n  command: npx\n");
                out.push_str(&format!(
                    "  args: [\"-y\", {}]\n",
                    q(&format!("@acme/mcp-server-{server}"))
                ));
                out.push_str(&format!(
                    "  env:\n    {env}_TOKEN: {}\n",
                    q(&format!("${{{env}_TOKEN}}"))
                ));
            } else {
                out.push_str("  transport: http\n");
                out.push_str(&format!(
                    "  url: {}\n",
                    q(&format!("https://mcp.{server}.example.com/mcp"))
                ));
                out.push_str(&format!(
                    "  headers:\n    Authorization: {}\n",
                    q(&format!("Bearer ${{{env}_TOKEN}}"))
                ));
            }
        }
    }
    out
}

pub(crate) struct RuntimeSpec<'a> {
    pub(crate) id: &'a str,
    pub(crate) family: Family,
    pub(crate) version: &'a str,
    /// `None` writes `executor_id: null`.
    pub(crate) executor: Option<&'a str>,
    pub(crate) inputs: &'a [String],
    pub(crate) constraints: &'a [(String, String)],
    pub(crate) note: Option<&'a str>,
}

pub(crate) fn render_runtime(rng: &mut Rng, spec: &RuntimeSpec) -> String {
    let mut out = String::with_capacity(800);
    if let Some(note) = spec.note {
        out.push_str(&format!("# synth: {note}\n"));
    }
    let variant = name_of(spec.id);
    let what = match spec.family {
        Family::Python => "Python",
        Family::Mcp => "MCP",
        Family::Graph => "State graph",
        Family::Node => "Node",
        Family::Bash => "Bash",
    };
    let parent = spec.executor.unwrap_or("the subprocess primitive");
    out.push_str(&format!(
        "# {what} runtime `{variant}`, layered on {parent}\n"
    ));
    out.push_str(&format!("version: {}\n", q(spec.version)));
    out.push_str("tool_type: runtime\n");
    match spec.executor {
        Some(e) => out.push_str(&format!("executor_id: {e}\n")),
        None => out.push_str("executor_id: null\n"),
    }
    out.push_str(&format!("category: {}\n", q(folder_of(spec.id))));
    out.push_str(&format!(
        "description: {}\n",
        q(&format!(
            "{what} runtime ({variant}) for {}",
            folder_of(spec.id)
        ))
    ));
    out.push_str("\nenv_config:\n");
    if spec.family == Family::Python && rng.percent(30) {
        let binary = ["python3.11", "python3.12", "python3.13", "python3"][rng.below(4)];
        out.push_str("  interpreter:\n    type: local_binary\n");
        out.push_str(&format!(
            "    binary: {binary}\n    candidates: [python3]\n"
        ));
        out.push_str("    search_paths: [\".venv/bin\", \".venv/Scripts\"]\n    var: RYE_PYTHON\n    fallback: python3\n");
    }
    out.push_str("  env:\n");
    let envs: &[(&str, &str)] = match spec.family {
        Family::Python => &[
            ("PYTHONDONTWRITEBYTECODE", "1"),
            ("PYTHONWARNINGS", "ignore::DeprecationWarning"),
            ("UV_CACHE_DIR", "${HOME}/.cache/uv"),
            ("OTEL_SERVICE_NAME", "rye-tools"),
            ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
            ("PYTHONHASHSEED", "0"),
        ],
        Family::Mcp => &[
            ("MCP_LOG_LEVEL", "warning"),
            ("MCP_REQUEST_TIMEOUT", "30"),
            ("HTTPS_PROXY", "${HTTPS_PROXY:-}"),
        ],
        Family::Graph => &[
            ("GRAPH_CHECKPOINT_DIR", "${HOME}/.cache/rye/graphs"),
            ("GRAPH_MAX_PARALLEL", "4"),
        ],
        Family::Node | Family::Bash => &[("LANG", "C.UTF-8")],
    };
    let first = rng.below(envs.len());
    let count = rng.range(1, envs.len().min(3));
    for k in 0..count {
        let (name, value) = envs[(first + k) % envs.len()];
        out.push_str(&format!("    {name}: {}\n", q(value)));
    }
    out.push_str("\nconfig:\n");
    out.push_str(&format!(
        "  timeout: {}\n",
        [60, 120, 240, 300, 600][rng.below(5)]
    ));
    if !spec.inputs.is_empty() {
        out.push_str(&format!("\ninputs: [{}]\n", spec.inputs.join(", ")));
    }
    if !spec.constraints.is_empty() {
        out.push_str("\nchild_constraints:\n");
        for (child, min) in spec.constraints {
            out.push_str(&format!("  {}:\n    min_version: {}\n", q(child), q(min)));
        }
    }
    out
}
