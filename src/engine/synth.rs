//! Deterministic synthetic tool trees for tests and benchmarks (pure; the gen_tree example writes them).
//!
//! [`generate`] builds three spaces under one output directory `OUT`, as relative `/`-separated
//! paths: `project/.ai/tools/…`, `user/.ai/tools/…` and `system/.ai/tools/…`. The tree is meant to
//! be linted with `ryechain lint OUT/project --user-space OUT/user --system-space OUT/system`; the
//! generated system space replaces the embedded bundle, so it carries its own tool extractor,
//! runtimes and primitive files (copied from the repo's `.ai/`).
//!
//! What the tree looks like:
//! - tools in nested category folders (2–4 levels), about 70 % Python (1–4 KB, header, imports,
//!   helper functions, `execute()` and `main()`) and 30 % YAML (commands, HTTP calls, MCP tools,
//!   state graphs), spread project 50 % / user 30 % / system 20 %;
//! - runtimes in all three spaces: system wrappers of the shipped runtimes, user runtimes wrapping
//!   system ones, project runtimes wrapping user ones, so chains have 2 to 10 elements;
//! - shadowed ids: project tools and runtimes reusing user ids, user ones reusing system ids;
//! - a planted fraction of problems (below), listed in the [`Manifest`]. Every other file is clean:
//!   it must produce no finding at all, not even a warning.
//!
//! Planting starts at 200 tools: about 0.75 % of the tools carry a planted problem, spread evenly
//! over the rules (at least one of each, and at least one of each variant). Smaller trees are
//! entirely clean. The rule semantics the manifest assumes (the linter implements them):
//! - `missing-executor`: the executor id resolves to no file in the spaces the file may see
//!   (project: all three, user: user and system, system: system) and is not a primitive id.
//!   Variants: a typo, and a user tool naming a runtime that exists only in the project space.
//! - `executor-cycle`: one finding per cycle (`A→B→A` or `A→A`), at the member whose path sorts
//!   first, `members` = every member path, sorted. Tools upstream of a cycle are clean.
//! - `chain-too-deep`: every file whose chain (tool … primitive, inclusive) has more than
//!   [`MAX_CHAIN_ELEMENTS`] elements; planted as 11–14 stacked wrapper runtimes plus a tool.
//! - `unknown-primitive`: no executor id, a tool type outside [`TERMINAL_TOOL_TYPES`], not a primitive
//!   id. Tools using such a file as their runtime are clean. Suppressed for unparseable files.
//! - `unparseable-metadata`: a Python syntax error in a body line (the header is valid), or a YAML
//!   file that does not parse at all (used by nothing).
//! - `ambiguous-item`: `x.py` and `x.yaml` in one space; reported at the `.yaml` (the loser).
//! - `invalid-item-id`: an executor id with `..`, a leading `/` or an empty segment.
//! - `invalid-version`: a version that is not `MAJOR.MINOR.PATCH` (`1.2`, `v1.0.0`, `latest`).
//! - `unsatisfied-inputs`: a runtime declares `inputs`, a tool using it declares `outputs` that miss
//!   one; reported at the tool (tools declaring no outputs are clean).
//! - `version-constraint-violation` / `unversioned-constrained-child`: a runtime's
//!   `child_constraints` name a tool whose version is below `min_version` / that has no version;
//!   reported at the tool.
//! - `upward-space-dependency`: a user tool whose runtime is a user-space symlink to a project file.
//! - `system-delegates-to-mutable`: a system tool whose runtime is a system-space symlink to a user
//!   file. §4.5: that edge is also an upward space dependency, so the manifest lists both rules
//!   at the tool, as the reference reports both.
//!
//! Same options ⇒ byte-identical output: the only randomness is a splitmix64 generator seeded with
//! [`GenOptions::seed`], and nothing iterates a hash map into the output.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use crate::model::item_id_problem;

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GenOptions {
    /// Number of tool files (everything that is not a runtime, a primitive or an extractor).
    pub tools: usize,
    pub seed: u64,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            tools: 1000,
            seed: 0,
        }
    }
}

/// A generated tree: files and symlinks relative to the output directory, and what was planted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedTree {
    /// Regular files, sorted by path.
    pub files: Vec<GenFile>,
    /// Symlinks, sorted by path. Their targets are generated files.
    pub symlinks: Vec<GenSymlink>,
    pub manifest: Manifest,
}

/// One regular file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenFile {
    /// Relative to the output directory, `/`-separated.
    pub path: String,
    pub contents: String,
}

/// One symlink to a file of another space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenSymlink {
    /// Relative to the output directory, `/`-separated.
    pub path: String,
    /// Relative to the link's directory (`../../…/project/.ai/tools/…`).
    pub target: String,
}

/// What a linter must report for the tree (written as `OUT/manifest.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub seed: u64,
    /// Number of tool files (runtimes, primitives and extractors are not tools).
    pub tools: usize,
    /// Number of regular files (symlinks and the manifest not included).
    pub files: usize,
    /// Every expected finding, sorted by rule then path.
    pub planted: Vec<Planted>,
    /// Tool files that appear in no planted finding (as `path` or in `members`).
    pub clean_tools: usize,
    /// Fingerprint of the throwaway key every item is signed with ([`sign`]); `None`: unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
}

/// One expected finding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Planted {
    /// Rule id, one of [`PLANTED_RULES`].
    pub rule: String,
    /// The file the finding is reported at, relative to the output directory.
    pub path: String,
    /// The item id of that file.
    pub item_id: String,
    /// For `executor-cycle`: every member path, sorted. Empty otherwise.
    pub members: Vec<String>,
}

/// Rule ids the generator plants.
pub mod rule {
    pub const MISSING_EXECUTOR: &str = "missing-executor";
    pub const EXECUTOR_CYCLE: &str = "executor-cycle";
    pub const CHAIN_TOO_DEEP: &str = "chain-too-deep";
    pub const UNKNOWN_PRIMITIVE: &str = "unknown-primitive";
    pub const UNPARSEABLE_METADATA: &str = "unparseable-metadata";
    pub const AMBIGUOUS_ITEM: &str = "ambiguous-item";
    pub const INVALID_ITEM_ID: &str = "invalid-item-id";
    pub const INVALID_VERSION: &str = "invalid-version";
    pub const UNSATISFIED_INPUTS: &str = "unsatisfied-inputs";
    pub const VERSION_CONSTRAINT_VIOLATION: &str = "version-constraint-violation";
    pub const UNVERSIONED_CONSTRAINED_CHILD: &str = "unversioned-constrained-child";
    pub const UPWARD_SPACE_DEPENDENCY: &str = "upward-space-dependency";
    pub const SYSTEM_DELEGATES_TO_MUTABLE: &str = "system-delegates-to-mutable";
}

/// Every rule the generator plants, in planting order.
pub const PLANTED_RULES: [&str; 13] = [
    rule::MISSING_EXECUTOR,
    rule::EXECUTOR_CYCLE,
    rule::CHAIN_TOO_DEEP,
    rule::UNKNOWN_PRIMITIVE,
    rule::UNPARSEABLE_METADATA,
    rule::AMBIGUOUS_ITEM,
    rule::INVALID_ITEM_ID,
    rule::INVALID_VERSION,
    rule::UNSATISFIED_INPUTS,
    rule::VERSION_CONSTRAINT_VIOLATION,
    rule::UNVERSIONED_CONSTRAINED_CHILD,
    rule::UPWARD_SPACE_DEPENDENCY,
    rule::SYSTEM_DELEGATES_TO_MUTABLE,
];

/// Ids that terminate a chain without needing a file (DESIGN.md primitive map).
#[rustfmt::skip]
pub const PRIMITIVE_IDS: [&str; 3] = [
    "rye/core/primitives/subprocess", "rye/core/primitives/execute",
    "rye/core/primitives/http_client",
];

/// Tool types that may legitimately have no executor (data, not runnable tools).
#[rustfmt::skip]
pub const TERMINAL_TOOL_TYPES: [&str; 6] = [
    "extractor", "parser", "primitive", "library", "python_lib", "mcp_server",
];

/// A chain with more elements than this (tool to primitive, inclusive) is too deep (§3.2).
pub const MAX_CHAIN_ELEMENTS: usize = 10;

/// Build the tree for `opts`. Pure and deterministic.
pub fn generate(opts: &GenOptions) -> GeneratedTree {
    Gen::build(opts).finish()
}

// ---------------------------------------------------------------------------------------------
// Randomness

/// splitmix64: tiny, fast, and stable across platforms and crate versions.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `percent / 100`.
    fn percent(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    /// A word from a word list.
    fn word(&mut self, xs: &[&'static str]) -> &'static str {
        xs[self.below(xs.len())]
    }
    /// Index chosen with the given weights (not all zero).
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut roll = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if roll < *w {
                return i;
            }
            roll -= w;
        }
        weights.len() - 1
    }
    /// A child generator, so one file's rendering does not shift every later choice.
    fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }
}

// ---------------------------------------------------------------------------------------------
// The in-memory model

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Sp {
    Project = 0,
    User = 1,
    System = 2,
}

impl Sp {
    fn dir(self) -> &'static str {
        match self {
            Sp::Project => "project",
            Sp::User => "user",
            Sp::System => "system",
        }
    }
    /// Spaces an element of this space resolves executors in, in search order (§1.7).
    fn visible(self) -> &'static [Sp] {
        match self {
            Sp::Project => &[Sp::Project, Sp::User, Sp::System],
            Sp::User => &[Sp::User, Sp::System],
            Sp::System => &[Sp::System],
        }
    }
    fn precedence(self) -> u8 {
        match self {
            Sp::Project => 3,
            Sp::User => 2,
            Sp::System => 1,
        }
    }
}

/// Extensions in resolution order: `x.py` beats `x.yaml` in one space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ext {
    Py = 0,
    Yaml = 1,
}

impl Ext {
    fn as_str(self) -> &'static str {
        match self {
            Ext::Py => "py",
            Ext::Yaml => "yaml",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Tool,
    Runtime,
    /// Primitive and extractor files of the system bundle.
    Infra,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Family {
    Python,
    Mcp,
    Graph,
    Node,
    Bash,
}

impl Family {
    fn dir(self) -> &'static str {
        match self {
            Family::Python => "python",
            Family::Mcp => "mcp",
            Family::Graph => "state-graph",
            Family::Node => "node",
            Family::Bash => "bash",
        }
    }
}

/// One file of the tree and the metadata its text declares.
#[derive(Clone, Debug)]
struct Item {
    space: Sp,
    id: String,
    ext: Ext,
    role: Role,
    family: Option<Family>,
    tool_type: String,
    executor: Option<String>,
    version: Option<String>,
    inputs: Vec<String>,
    outputs: Vec<String>,
    /// `child_constraints`: (child id, min_version).
    constraints: Vec<(String, String)>,
    /// The text does not parse (planted `unparseable-metadata`).
    unparseable: bool,
    /// This file is a symlink to `items[link]` (its metadata is the target's).
    link: Option<usize>,
    /// Clean and free for other clean files to use as their executor.
    usable: bool,
    contents: String,
}

impl Item {
    fn new(space: Sp, id: String, ext: Ext, role: Role) -> Self {
        Item {
            space,
            id,
            ext,
            role,
            family: None,
            tool_type: String::new(),
            executor: None,
            version: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
            constraints: Vec::new(),
            unparseable: false,
            link: None,
            usable: false,
            contents: String::new(),
        }
    }
    fn path(&self) -> String {
        format!(
            "{}/.ai/tools/{}.{}",
            self.space.dir(),
            self.id,
            self.ext.as_str()
        )
    }
}

/// Where a chain walk ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChainEnd {
    /// Reached a primitive (or a legitimately terminal file); the element count.
    Ok(usize),
    Missing,
    Cycle,
    /// Unparseable file, invalid id, or a terminal that is not a primitive.
    Broken,
}

/// Files per id: `[space][ext]`.
type Slots = [[Option<usize>; 2]; 3];

fn is_primitive(id: &str) -> bool {
    PRIMITIVE_IDS.contains(&id)
}

fn is_terminal_type(tool_type: &str) -> bool {
    TERMINAL_TOOL_TYPES.contains(&tool_type)
}

/// Strict `MAJOR.MINOR.PATCH` (the shape every clean file uses).
fn is_plain_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
}

struct Model {
    items: Vec<Item>,
    index: FxHashMap<String, Slots>,
}

impl Model {
    fn add(&mut self, item: Item) -> usize {
        let i = self.items.len();
        let slots = self.index.entry(item.id.clone()).or_default();
        let slot = &mut slots[item.space as usize][item.ext as usize];
        debug_assert!(slot.is_none(), "duplicate file {}", item.path());
        *slot = Some(i);
        self.items.push(item);
        i
    }
    /// The item whose text this file has (its symlink target, or itself).
    fn meta(&self, i: usize) -> &Item {
        let item = &self.items[i];
        item.link.map_or(item, |t| &self.items[t])
    }
    /// The space the file really lives in (a symlink's target space).
    fn real_space(&self, i: usize) -> Sp {
        self.meta(i).space
    }
    /// Resolve `id` as an element of space `from` would (§1.7).
    fn resolve(&self, id: &str, from: Sp) -> Option<usize> {
        let slots = self.index.get(id)?;
        from.visible()
            .iter()
            .find_map(|sp| slots[*sp as usize].iter().flatten().next().copied())
    }
    fn in_space(&self, id: &str, sp: Sp) -> bool {
        self.index
            .get(id)
            .is_some_and(|s| s[sp as usize].iter().any(Option::is_some))
    }
    /// Walk the chain from file `start`.
    fn chain(&self, start: usize) -> ChainEnd {
        let mut seen = vec![start];
        let mut cur = start;
        loop {
            let meta = self.meta(cur);
            if meta.unparseable {
                return ChainEnd::Broken;
            }
            let Some(exec) = meta.executor.as_deref() else {
                let terminal =
                    is_primitive(&self.items[cur].id) || is_terminal_type(&meta.tool_type);
                return if terminal {
                    ChainEnd::Ok(seen.len())
                } else {
                    ChainEnd::Broken
                };
            };
            if is_primitive(exec) {
                return ChainEnd::Ok(seen.len() + 1);
            }
            if item_id_problem(exec).is_some() {
                return ChainEnd::Broken;
            }
            let Some(next) = self.resolve(exec, self.real_space(cur)) else {
                return ChainEnd::Missing;
            };
            if seen.contains(&next) {
                return ChainEnd::Cycle;
            }
            seen.push(next);
            cur = next;
        }
    }

    /// Every finding the rule semantics of the module docs give for this model, derived from the
    /// files alone (not from what was meant to be planted). The manifest must agree exactly;
    /// `finish` checks it in debug builds and the tests check it at several sizes.
    fn findings(&self) -> Vec<Planted> {
        let m = self;
        let mut out = Vec::new();
        let at = |rule: &str, i: usize| Planted {
            rule: rule.to_owned(),
            path: m.items[i].path(),
            item_id: m.items[i].id.clone(),
            members: Vec::new(),
        };
        for i in 0..m.items.len() {
            let item = &m.items[i];
            let meta = m.meta(i);
            if meta.unparseable {
                out.push(at(rule::UNPARSEABLE_METADATA, i));
                continue;
            }
            if meta.version.as_deref().is_some_and(|v| !is_plain_semver(v)) {
                out.push(at(rule::INVALID_VERSION, i));
            }
            if item.ext == Ext::Yaml
                && m.index[&item.id][item.space as usize][Ext::Py as usize].is_some()
            {
                out.push(at(rule::AMBIGUOUS_ITEM, i));
            }
            let Some(exec) = meta.executor.as_deref() else {
                if !is_terminal_type(&meta.tool_type) && !is_primitive(&item.id) {
                    out.push(at(rule::UNKNOWN_PRIMITIVE, i));
                }
                continue;
            };
            if is_primitive(exec) {
                continue;
            }
            if item_id_problem(exec).is_some() {
                out.push(at(rule::INVALID_ITEM_ID, i));
                continue;
            }
            let Some(parent) = m.resolve(exec, m.real_space(i)) else {
                out.push(at(rule::MISSING_EXECUTOR, i));
                continue;
            };
            let (child_sp, parent_sp) = (m.real_space(i), m.real_space(parent));
            if child_sp.precedence() < parent_sp.precedence() {
                // §4.5: a system → mutable edge is also an upward dependency; both are reported.
                if child_sp == Sp::System {
                    out.push(at(rule::SYSTEM_DELEGATES_TO_MUTABLE, i));
                }
                out.push(at(rule::UPWARD_SPACE_DEPENDENCY, i));
            }
            let pm = m.meta(parent);
            if !meta.outputs.is_empty() && pm.inputs.iter().any(|x| !meta.outputs.contains(x)) {
                out.push(at(rule::UNSATISFIED_INPUTS, i));
            }
            if let Some((_, min)) = pm.constraints.iter().find(|(c, _)| *c == item.id) {
                match meta.version.as_deref() {
                    None => out.push(at(rule::UNVERSIONED_CONSTRAINED_CHILD, i)),
                    Some(v) => {
                        let parse = |s: &str| semver::Version::parse(s).ok();
                        if parse(v).zip(parse(min)).is_some_and(|(v, min)| v < min) {
                            out.push(at(rule::VERSION_CONSTRAINT_VIOLATION, i));
                        }
                    }
                }
            }
            if let ChainEnd::Ok(n) = m.chain(i)
                && n > MAX_CHAIN_ELEMENTS
            {
                out.push(at(rule::CHAIN_TOO_DEEP, i));
            }
        }
        // Cycles: follow executor edges from every file; each cycle once.
        let next = |i: usize| -> Option<usize> {
            let meta = m.meta(i);
            let exec = meta.executor.as_deref()?;
            if meta.unparseable || is_primitive(exec) || item_id_problem(exec).is_some() {
                return None;
            }
            m.resolve(exec, m.real_space(i))
        };
        let mut cycles: BTreeMap<Vec<String>, String> = BTreeMap::new();
        for start in 0..m.items.len() {
            let mut path = vec![start];
            let mut cur = start;
            while let Some(n) = next(cur) {
                if let Some(pos) = path.iter().position(|&p| p == n) {
                    let mut members: Vec<(String, String)> = path[pos..]
                        .iter()
                        .map(|&x| (m.items[x].path(), m.items[x].id.clone()))
                        .collect();
                    members.sort();
                    let first_id = members[0].1.clone();
                    cycles.insert(members.into_iter().map(|p| p.0).collect(), first_id);
                    break;
                }
                path.push(n);
                cur = n;
            }
        }
        for (members, item_id) in cycles {
            out.push(Planted {
                rule: rule::EXECUTOR_CYCLE.to_owned(),
                path: members[0].clone(),
                item_id,
                members,
            });
        }
        out.sort();
        out
    }

    /// Element count of the chain an element of `from` gets for executor `id` (`None` if broken).
    fn len_via(&self, id: &str, from: Sp) -> Option<usize> {
        if is_primitive(id) {
            return Some(1);
        }
        match self.chain(self.resolve(id, from)?) {
            ChainEnd::Ok(n) => Some(n),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary

const PROJECT_ROOTS: [&str; 4] = ["acme", "platform", "billing", "growth"];
const USER_ROOTS: [&str; 4] = ["personal", "lab", "team", "scratch"];
#[rustfmt::skip]
const DOMAINS: [&str; 30] = [
    "data", "etl", "reports", "git", "deploy", "k8s", "aws", "gcp", "payments", "search", "auth",
    "cache", "logs", "metrics", "alerts", "docs", "release", "backup", "ml", "web", "db",
    "security", "notify", "infra", "ci", "assets", "i18n", "crm", "support", "analytics",
];
#[rustfmt::skip]
const SUBAREAS: [&str; 18] = [
    "ingest", "export", "sync", "audit", "validate", "migrate", "scan", "index", "cleanup",
    "imports", "monitor", "rollout", "snapshot", "quality", "schedule", "archive", "transform",
    "inventory",
];
const LEAVES: [&str; 10] = [
    "daily", "batch", "stream", "legacy", "v2", "internal", "staging", "prod", "nightly", "adhoc",
];
#[rustfmt::skip]
const VERBS: [&str; 30] = [
    "fetch", "sync", "export", "import", "validate", "render", "summarize", "rotate", "prune",
    "scan", "compare", "publish", "backfill", "reindex", "snapshot", "notify", "check", "merge",
    "split", "tag", "archive", "resolve", "collect", "diff", "lint", "build", "upload", "download",
    "audit", "estimate",
];
#[rustfmt::skip]
const NOUNS: [&str; 35] = [
    "invoices", "orders", "users", "events", "metrics", "logs", "tickets", "releases", "commits",
    "images", "secrets", "certs", "buckets", "tables", "schemas", "dashboards", "alerts", "pages",
    "translations", "sessions", "payments", "refunds", "contracts", "leads", "builds", "artifacts",
    "queues", "indexes", "snapshots", "backups", "changelog", "deps", "licenses", "sitemaps",
    "feeds",
];
#[rustfmt::skip]
const PY_VARIANTS: [&str; 20] = [
    "uv", "pinned", "isolated", "traced", "profiled", "debug", "slim", "py311", "py312", "py313",
    "conda", "poetry", "pdm", "hatch", "sandboxed", "gpu", "cached", "offline", "locked",
    "vendored",
];
#[rustfmt::skip]
const MCP_VARIANTS: [&str; 6] = [
    "stdio-pooled", "http-retry", "stdio-sandboxed", "http-auth", "stdio-verbose", "http-proxy",
];
#[rustfmt::skip]
const GRAPH_VARIANTS: [&str; 5] = [
    "checkpointed", "parallel", "resumable", "dry-run", "audited",
];
#[rustfmt::skip]
const MCP_SERVERS: [&str; 14] = [
    "github", "gitlab", "linear", "jira", "slack", "notion", "sentry", "postgres", "filesystem",
    "context7", "stripe", "figma", "datadog", "pagerduty",
];
#[rustfmt::skip]
const MCP_TOOLS: [&str; 10] = [
    "list_issues", "create_issue", "search", "get_page", "query", "list_events", "post_message",
    "get_file", "list_alerts", "summarize_thread",
];
#[rustfmt::skip]
const HOSTS: [&str; 6] = [
    "api.example.com", "billing.internal", "hooks.acme.dev", "metrics.acme.dev", "cms.example.org",
    "id.acme.dev",
];
const IO_SETS: [[&str; 3]; 5] = [
    ["rows", "columns", "title"],
    ["records", "schema", "source"],
    ["report", "recipients", "subject"],
    ["artifact", "checksum", "manifest"],
    ["findings", "severity", "baseline"],
];

/// A YAML command tool: program and argv template.
const COMMANDS: [(&str, &[&str]); 10] = [
    ("git", &["log", "--oneline", "--no-merges", "{since}..HEAD"]),
    ("rsync", &["-az", "--delete", "{source}/", "{destination}/"]),
    (
        "kubectl",
        &[
            "rollout",
            "status",
            "deployment/{service}",
            "--namespace",
            "{namespace}",
        ],
    ),
    ("terraform", &["plan", "-input=false", "-out={plan_file}"]),
    (
        "pg_dump",
        &["--format=custom", "--file={output}", "{database_url}"],
    ),
    ("aws", &["s3", "sync", "{source}", "s3://{bucket}/{prefix}"]),
    ("docker", &["build", "--tag", "{image}:{tag}", "{context}"]),
    ("make", &["-C", "{directory}", "{target}"]),
    (
        "gcloud",
        &["run", "deploy", "{service}", "--region", "{region}"],
    ),
    ("jq", &["--raw-output", "{filter}", "{input}"]),
];

const SENTENCES: [&str; 10] = [
    "Reads @NOUN_H@ from the @DOMAIN@ store and writes a summary the next step can consume.",
    "Parameters arrive as JSON on stdin; the result is printed as one JSON object.",
    "Safe to re-run: records that were already processed are skipped.",
    "Set `dry_run` to see what would change without touching anything.",
    "Owned by the @DOMAIN@ team; ask them before changing the output format.",
    "Uses the project's virtualenv when one exists.",
    "Large inputs are processed in batches so memory stays flat.",
    "Failures are reported as `{\"success\": false, \"error\": ...}` instead of a traceback.",
    "Timestamps are UTC and ISO-8601 throughout.",
    "The limit parameter caps how many @NOUN_H@ are touched in one run.",
];

/// A helper function for Python tool bodies: imports it needs, its text, and an optional line
/// `execute()` uses it with. `@NOUN@` is a Python identifier fragment.
struct Snippet {
    imports: &'static [&'static str],
    text: &'static str,
    use_line: Option<&'static str>,
}

const SNIPPETS: [Snippet; 12] = [
    Snippet {
        imports: &["import json", "from pathlib import Path"],
        text: r#"def load_@NOUN@(path: Path) -> list:
    """Read one JSON object per line, skipping blank lines."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{line_no}: {exc}") from exc
    return records
"#,
        use_line: Some(
            r#"source = root / params.get("source", "data/@NOUN@.jsonl")
    if source.exists():
        result["count"] = len(load_@NOUN@(source)[:limit])"#,
        ),
    },
    Snippet {
        imports: &["from datetime import datetime, timedelta, timezone"],
        text: r#"def recent_@NOUN@(records: list, days: int) -> list:
    """Keep the records updated within the last `days` days."""
    cutoff = datetime.now(timezone.utc) - timedelta(days=days)
    kept = []
    for record in records:
        stamp = datetime.fromisoformat(record.get("updated_at", "1970-01-01T00:00:00+00:00"))
        if stamp >= cutoff:
            kept.append(record)
    return kept
"#,
        use_line: Some(r#"result["window_days"] = int(params.get("days", 7))"#),
    },
    Snippet {
        imports: &["from collections import defaultdict"],
        text: r#"def group_@NOUN@_by(records: list, key: str) -> dict:
    """Count records per value of `key`."""
    groups = defaultdict(list)
    for record in records:
        groups[record.get(key, "unknown")].append(record)
    return {name: len(items) for name, items in sorted(groups.items())}
"#,
        use_line: Some(
            r#"result["groups"] = group_@NOUN@_by(params.get("records", []), params.get("group_by", "status"))"#,
        ),
    },
    Snippet {
        imports: &["import subprocess", "from pathlib import Path"],
        text: r#"def run(cmd: list, cwd: Path) -> str:
    """Run a command and return its stdout; raise with its stderr on failure."""
    log.debug("running %s", " ".join(cmd))
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout
"#,
        use_line: Some(
            r#"if params.get("git_rev"):
        result["rev"] = run(["git", "rev-parse", params["git_rev"]], root).strip()"#,
        ),
    },
    Snippet {
        imports: &[
            "import json",
            "import urllib.parse",
            "import urllib.request",
        ],
        text: r#"def fetch_@NOUN@(base_url: str, token: str, page_size: int = 100) -> list:
    """Page through the API until an empty page comes back."""
    items, page = [], 1
    while True:
        query = urllib.parse.urlencode({"page": page, "per_page": page_size})
        request = urllib.request.Request(
            f"{base_url}/@NOUN@?{query}",
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            batch = json.load(response)
        if not batch:
            return items
        items.extend(batch)
        page += 1
"#,
        use_line: None,
    },
    Snippet {
        imports: &["import hashlib", "from pathlib import Path"],
        text: r#"def checksum(path: Path, chunk_size: int = 1 << 16) -> str:
    """SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()
"#,
        use_line: Some(
            r#"if params.get("verify"):
        result["checksum"] = checksum(root / params["verify"])"#,
        ),
    },
    Snippet {
        imports: &["import csv", "from pathlib import Path"],
        text: r#"def write_@NOUN@_csv(rows: list, target: Path) -> int:
    """Write dict rows to CSV with a stable, sorted header."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fields = sorted({key for row in rows for key in row})
    with open(target, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)
"#,
        use_line: Some(
            r#"if not dry_run and params.get("rows"):
        result["written"] = write_@NOUN@_csv(params["rows"], root / "out" / "@NOUN@.csv")"#,
        ),
    },
    Snippet {
        imports: &["import functools", "import time"],
        text: r#"def with_retries(attempts: int = 3, delay: float = 0.5):
    """Retry the decorated call on OSError with exponential backoff."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for attempt in range(1, attempts + 1):
                try:
                    return fn(*args, **kwargs)
                except OSError:
                    if attempt == attempts:
                        raise
                    time.sleep(delay * 2 ** (attempt - 1))

        return wrapper

    return decorate
"#,
        use_line: None,
    },
    Snippet {
        imports: &["from dataclasses import dataclass, field"],
        text: r#"@dataclass
class RunSummary:
    total: int = 0
    failed: int = 0
    skipped: int = 0
    notes: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"total": self.total, "failed": self.failed, "skipped": self.skipped, "notes": self.notes}
"#,
        use_line: Some(r#"result["summary"] = RunSummary(total=limit).as_dict()"#),
    },
    Snippet {
        imports: &["from pathlib import Path"],
        text: r#"def find_@NOUN@_files(root: Path, patterns: list) -> list:
    """Files under `root` matching any pattern, outside .git, sorted."""
    found = []
    for pattern in patterns:
        found.extend(p for p in root.rglob(pattern) if p.is_file() and ".git" not in p.parts)
    return sorted(set(found))
"#,
        use_line: Some(
            r#"result["files"] = [str(p) for p in find_@NOUN@_files(root, params.get("patterns", ["*.json"]))][:limit]"#,
        ),
    },
    Snippet {
        imports: &["import os"],
        text: r#"def settings() -> dict:
    """Connection settings from the environment."""
    return {
        "endpoint": os.environ.get("@ENV@_ENDPOINT", "http://localhost:8080"),
        "token": os.environ.get("@ENV@_TOKEN", ""),
        "dry_run": os.environ.get("@ENV@_DRY_RUN", "0") == "1",
    }
"#,
        use_line: Some(r#"result["endpoint"] = settings()["endpoint"]"#),
    },
    Snippet {
        imports: &["import re"],
        text: r#"LINE = re.compile(r"^(?P<ts>\S+) (?P<level>[A-Z]+) (?P<msg>.*)$")


def parse_@NOUN@_log(text: str) -> list:
    """Structured entries from `<timestamp> <LEVEL> <message>` lines."""
    entries = []
    for raw in text.splitlines():
        match = LINE.match(raw)
        if match:
            entries.append(match.groupdict())
    return entries
"#,
        use_line: Some(r#"result["entries"] = len(parse_@NOUN@_log(params.get("log_text", "")))"#),
    },
];

const SCHEMA_PARAMS: [(&str, &str); 10] = [
    ("limit", r#"{"type": "integer", "default": 100}"#),
    ("dry_run", r#"{"type": "boolean", "default": False}"#),
    (
        "since",
        r#"{"type": "string", "description": "ISO date or git revision"}"#,
    ),
    ("target", r#"{"type": "string"}"#),
    (
        "region",
        r#"{"type": "string", "enum": ["eu-west-1", "us-east-1", "ap-southeast-2"]}"#,
    ),
    (
        "batch_size",
        r#"{"type": "integer", "minimum": 1, "default": 500}"#,
    ),
    (
        "patterns",
        r#"{"type": "array", "items": {"type": "string"}}"#,
    ),
    ("days", r#"{"type": "integer", "default": 7}"#),
    (
        "source",
        r#"{"type": "string", "description": "Input file, relative to the project"}"#,
    ),
    (
        "verify",
        r#"{"type": "string", "description": "File whose checksum is reported"}"#,
    ),
];

// ---------------------------------------------------------------------------------------------
// Rendering

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

fn name_of(id: &str) -> &str {
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

fn semver(rng: &mut Rng) -> String {
    let major = [0, 1, 1, 1, 2, 2, 3][rng.below(7)];
    format!("{}.{}.{}", major, rng.below(13), rng.below(21))
}

/// How a Python tool's executor line is written.
#[derive(Clone, Copy)]
enum PyExec<'a> {
    Id(&'a str),
    /// `__executor_id__ = None`.
    None,
    /// No `__executor_id__` line at all.
    Omit,
}

struct PySpec<'a> {
    id: &'a str,
    tool_type: &'a str,
    version: Option<&'a str>,
    exec: PyExec<'a>,
    outputs: &'a [String],
    /// Put an unclosed bracket in a body line (the header stays valid).
    syntax_error: bool,
    note: Option<&'a str>,
}

fn render_python(rng: &mut Rng, spec: &PySpec) -> String {
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
enum YamlKind {
    Command,
    Http,
    Mcp,
    Graph,
    McpServer,
}

struct YamlSpec<'a> {
    id: &'a str,
    kind: YamlKind,
    version: Option<&'a str>,
    /// `None` writes `executor_id: null`.
    executor: Option<&'a str>,
    outputs: &'a [String],
    /// Tool ids a graph's nodes call (data only).
    graph_targets: &'a [String],
    /// Leave a flow sequence unclosed so the document does not parse.
    malformed: bool,
    note: Option<&'a str>,
}

fn render_yaml_tool(rng: &mut Rng, spec: &YamlSpec) -> String {
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

struct RuntimeSpec<'a> {
    id: &'a str,
    family: Family,
    version: &'a str,
    /// `None` writes `executor_id: null`.
    executor: Option<&'a str>,
    inputs: &'a [String],
    constraints: &'a [(String, String)],
    note: Option<&'a str>,
}

fn render_runtime(rng: &mut Rng, spec: &RuntimeSpec) -> String {
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

// ---------------------------------------------------------------------------------------------
// The generator

/// The shipped system bundle, copied into every generated system space.
const BUNDLE: [(&str, &str, &str, Option<Family>); 17] = [
    (
        "rye/core/extractors/tool/tool_extractor",
        "extractor",
        include_str!("../../.ai/tools/rye/core/extractors/tool/tool_extractor.yaml"),
        None,
    ),
    (
        "rye/core/primitives/subprocess",
        "primitive",
        include_str!("../../.ai/tools/rye/core/primitives/subprocess.yaml"),
        None,
    ),
    (
        "rye/core/primitives/execute",
        "primitive",
        include_str!("../../.ai/tools/rye/core/primitives/execute.yaml"),
        None,
    ),
    (
        "rye/core/primitives/http_client",
        "primitive",
        include_str!("../../.ai/tools/rye/core/primitives/http_client.yaml"),
        None,
    ),
    (
        "rye/core/runtimes/python/script",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/python/script.yaml"),
        Some(Family::Python),
    ),
    (
        "rye/core/runtimes/python/function",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/python/function.yaml"),
        Some(Family::Python),
    ),
    (
        "rye/core/runtimes/node/node",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/node/node.yaml"),
        Some(Family::Node),
    ),
    (
        "rye/core/runtimes/bash/bash",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/bash/bash.yaml"),
        Some(Family::Bash),
    ),
    (
        "rye/core/runtimes/mcp/stdio",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/mcp/stdio.yaml"),
        Some(Family::Mcp),
    ),
    (
        "rye/core/runtimes/mcp/http",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/mcp/http.yaml"),
        Some(Family::Mcp),
    ),
    (
        "rye/core/runtimes/state-graph/runtime",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/state-graph/runtime.yaml"),
        Some(Family::Graph),
    ),
    (
        "rye/core/runtimes/python_script_runtime",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/python_script_runtime.yaml"),
        Some(Family::Python),
    ),
    (
        "rye/core/runtimes/python_function_runtime",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/python_function_runtime.yaml"),
        Some(Family::Python),
    ),
    (
        "rye/core/runtimes/node_runtime",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/node_runtime.yaml"),
        Some(Family::Node),
    ),
    (
        "rye/core/runtimes/bash_runtime",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/bash_runtime.yaml"),
        Some(Family::Bash),
    ),
    (
        "rye/core/runtimes/mcp_stdio_runtime",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/mcp_stdio_runtime.yaml"),
        Some(Family::Mcp),
    ),
    (
        "rye/core/runtimes/mcp_http_runtime",
        "runtime",
        include_str!("../../.ai/tools/rye/core/runtimes/mcp_http_runtime.yaml"),
        Some(Family::Mcp),
    ),
];

/// The shipped python/script runtime: never shadowed, so every space resolves it to the system file.
const BASE_SCRIPT: &str = "rye/core/runtimes/python/script";
const BASE_FUNCTION: &str = "rye/core/runtimes/python/function";

struct Gen {
    seed: u64,
    target: usize,
    rng: Rng,
    model: Model,
    /// Every id used in any space, plus reserved typo ids.
    taken: FxHashSet<String>,
    planted: Vec<Planted>,
    /// Runtimes a clean file of a space may name, with their element counts, per family.
    candidates: FxHashMap<(Sp, Family), Vec<(String, usize)>>,
    /// Clean fill tools per space that a higher space may shadow.
    shadowable: [Vec<usize>; 3],
    /// Ids of tools, for graph nodes to call.
    tool_ids: Vec<String>,
    tools: usize,
}

impl Gen {
    fn build(opts: &GenOptions) -> Gen {
        let mut g = Gen {
            seed: opts.seed,
            target: opts.tools,
            rng: Rng::new(opts.seed ^ 0x7279_6563_6861_696E),
            model: Model {
                items: Vec::new(),
                index: FxHashMap::default(),
            },
            taken: FxHashSet::default(),
            planted: Vec::new(),
            candidates: FxHashMap::default(),
            shadowable: [Vec::new(), Vec::new(), Vec::new()],
            tool_ids: Vec::new(),
            tools: 0,
        };
        g.system_bundle();
        g.runtimes();
        g.plants();
        g.fill();
        g
    }

    fn add(&mut self, item: Item) -> usize {
        self.taken.insert(item.id.clone());
        if item.role == Role::Tool {
            self.tools += 1;
            self.tool_ids.push(item.id.clone());
        }
        self.model.add(item)
    }

    fn plant(&mut self, rule: &str, at: usize) {
        let item = &self.model.items[at];
        self.planted.push(Planted {
            rule: rule.to_owned(),
            path: item.path(),
            item_id: item.id.clone(),
            members: Vec::new(),
        });
    }

    fn unique(&self, base: String, sep: char) -> String {
        if !self.taken.contains(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}{sep}{n}"))
            .find(|c| !self.taken.contains(c))
            .unwrap_or(base)
    }

    fn root(&mut self, space: Sp) -> &'static str {
        match space {
            Sp::Project => PROJECT_ROOTS[self.rng.below(PROJECT_ROOTS.len())],
            Sp::User => USER_ROOTS[self.rng.below(USER_ROOTS.len())],
            Sp::System => "rye",
        }
    }

    /// A new tool id `<root>/<domain>[/<sub>[/<leaf>]]/<verb>_<noun>`.
    fn fresh_tool_id(&mut self, space: Sp) -> String {
        let root = self.root(space);
        let mut id = format!("{root}/{}", self.rng.pick(&DOMAINS));
        let depth = [2, 3, 3, 3, 3, 4, 4, 2, 2, 3][self.rng.below(10)];
        if depth >= 3 {
            id.push('/');
            id.push_str(self.rng.word(&SUBAREAS));
        }
        if depth >= 4 {
            id.push('/');
            id.push_str(self.rng.word(&LEAVES));
        }
        let name = format!("{}_{}", self.rng.pick(&VERBS), self.rng.pick(&NOUNS));
        self.unique(format!("{id}/{name}"), '_')
    }

    /// A new runtime id for a wrapper of `family` in `space`.
    fn fresh_runtime_id(&mut self, space: Sp, family: Family) -> String {
        let variant = match family {
            Family::Mcp => *self.rng.pick(&MCP_VARIANTS),
            Family::Graph => *self.rng.pick(&GRAPH_VARIANTS),
            _ => *self.rng.pick(&PY_VARIANTS),
        };
        let base = match space {
            Sp::System => format!("rye/core/runtimes/{}/{variant}", family.dir()),
            Sp::User => format!("{}/runtimes/{}-{variant}", self.root(space), family.dir()),
            Sp::Project => {
                let root = self.root(space);
                if self.rng.percent(50) {
                    format!("{root}/runtimes/{}-{variant}", family.dir())
                } else {
                    format!(
                        "{root}/{}/runtimes/{}-{variant}",
                        self.rng.pick(&DOMAINS),
                        family.dir()
                    )
                }
            }
        };
        self.unique(base, '-')
    }

    fn system_bundle(&mut self) {
        for (id, tool_type, text, family) in BUNDLE {
            let role = if tool_type == "runtime" {
                Role::Runtime
            } else {
                Role::Infra
            };
            let mut item = Item::new(Sp::System, id.to_owned(), Ext::Yaml, role);
            item.family = family;
            item.tool_type = tool_type.to_owned();
            item.version = Some("1.0.0".to_owned());
            item.executor = (role == Role::Runtime).then(|| PRIMITIVE_IDS[0].to_owned());
            item.usable = role == Role::Runtime;
            item.contents = text.to_owned();
            self.add(item);
        }
    }

    /// Usable runtimes of `family` an element of `space` can name, deduplicated by id, with the
    /// element count of the chain it resolves to.
    fn visible_runtimes(&self, space: Sp, family: Family, max_len: usize) -> Vec<(String, usize)> {
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        let mut out = Vec::new();
        for item in &self.model.items {
            if item.role != Role::Runtime
                || item.family != Some(family)
                || !item.usable
                || !seen.insert(&item.id)
            {
                continue;
            }
            let Some(r) = self.model.resolve(&item.id, space) else {
                continue;
            };
            if !self.model.items[r].usable {
                continue;
            }
            if let Some(len) = self
                .model
                .len_via(&item.id, space)
                .filter(|l| *l <= max_len)
            {
                out.push((item.id.clone(), len));
            }
        }
        out
    }

    fn pick_family(&mut self) -> Family {
        [Family::Python, Family::Mcp, Family::Graph][self.rng.weighted(&[70, 18, 12])]
    }

    /// A usable runtime wrapping another one visible from `space` whose chain has at most
    /// `max_parent_len` elements.
    /// The first wrappers of a space (`stack`) are Python and take the deepest parent, so every
    /// tree has chains of every length up to the maximum.
    fn wrapper(&mut self, space: Sp, max_parent_len: usize, stack: bool) {
        let family = if stack {
            Family::Python
        } else {
            self.pick_family()
        };
        let parents = self.visible_runtimes(space, family, max_parent_len);
        if parents.is_empty() {
            return;
        }
        let (parent, _) = if stack || self.rng.percent(30) {
            let best = parents.iter().map(|p| p.1).max().unwrap_or(0);
            let deepest: Vec<&(String, usize)> = parents.iter().filter(|p| p.1 == best).collect();
            (*self.rng.pick(&deepest)).clone()
        } else {
            self.rng.pick(&parents).clone()
        };
        let id = self.fresh_runtime_id(space, family);
        self.new_runtime(
            space,
            id,
            family,
            Some(parent),
            Vec::new(),
            Vec::new(),
            None,
            true,
        );
    }

    /// A copy of a generated runtime of `from` in the higher space `into`, same id and parent.
    fn shadow_runtime(&mut self, from: Sp, into: Sp, max_len: usize) {
        let pool: Vec<usize> = (0..self.model.items.len())
            .filter(|&i| {
                let it = &self.model.items[i];
                it.space == from
                    && it.role == Role::Runtime
                    && it.usable
                    && it.link.is_none()
                    && !BUNDLE.iter().any(|b| b.0 == it.id)
                    && !self.model.in_space(&it.id, into)
            })
            .collect();
        if pool.is_empty() {
            return;
        }
        let orig = *self.rng.pick(&pool);
        let (id, family, parent) = {
            let it = &self.model.items[orig];
            (
                it.id.clone(),
                it.family.unwrap_or(Family::Python),
                it.executor.clone().unwrap_or_default(),
            )
        };
        match self.model.len_via(&parent, into) {
            Some(len) if len < max_len => {}
            _ => return,
        }
        self.new_runtime(
            into,
            id,
            family,
            Some(parent),
            Vec::new(),
            Vec::new(),
            None,
            true,
        );
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "a private constructor mirroring the runtime's fields"
    )]
    fn new_runtime(
        &mut self,
        space: Sp,
        id: String,
        family: Family,
        executor: Option<String>,
        inputs: Vec<String>,
        constraints: Vec<(String, String)>,
        note: Option<&str>,
        usable: bool,
    ) -> usize {
        let version = semver(&mut self.rng);
        let mut rng = self.rng.fork();
        let contents = render_runtime(
            &mut rng,
            &RuntimeSpec {
                id: &id,
                family,
                version: &version,
                executor: executor.as_deref(),
                inputs: &inputs,
                constraints: &constraints,
                note,
            },
        );
        let mut item = Item::new(space, id, Ext::Yaml, Role::Runtime);
        item.family = Some(family);
        item.tool_type = "runtime".to_owned();
        item.executor = executor;
        item.version = Some(version);
        item.inputs = inputs;
        item.constraints = constraints;
        item.usable = usable;
        item.contents = contents;
        self.add(item)
    }

    fn runtimes(&mut self) {
        let n = self.target;
        let (ns, nu, np) = (3 + n / 600, 2 + n / 400, 2 + n / 400);
        for i in 0..ns {
            self.wrapper(Sp::System, 4, i < 3);
        }
        for _ in 0..1 + ns / 8 {
            self.shadow_runtime(Sp::System, Sp::User, 7);
        }
        for i in 0..nu {
            self.wrapper(Sp::User, 6, i < 2);
        }
        for _ in 0..1 + nu / 8 {
            self.shadow_runtime(Sp::User, Sp::Project, 9);
        }
        for i in 0..np {
            self.wrapper(Sp::Project, 8, i < 2);
        }
        // Tools name runtimes whose chain has at most 9 elements, so theirs has at most 10.
        for space in [Sp::Project, Sp::User, Sp::System] {
            for family in [Family::Python, Family::Mcp, Family::Graph] {
                let list = self.visible_runtimes(space, family, MAX_CHAIN_ELEMENTS - 1);
                self.candidates.insert((space, family), list);
            }
        }
    }

    /// A clean executor for a tool of `space` and `family`.
    fn pick_exec(&mut self, space: Sp, family: Family) -> String {
        let list = &self.candidates[&(space, family)];
        list[self.rng.below(list.len())].0.clone()
    }

    fn version_for_clean(&mut self) -> Option<String> {
        Some(semver(&mut self.rng))
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "a private constructor mirroring the tool's fields"
    )]
    fn new_py_tool(
        &mut self,
        space: Sp,
        id: String,
        exec: PyExec,
        version: Option<String>,
        outputs: Vec<String>,
        syntax_error: bool,
        note: Option<&str>,
    ) -> usize {
        let mut rng = self.rng.fork();
        let contents = render_python(
            &mut rng,
            &PySpec {
                id: &id,
                tool_type: "python",
                version: version.as_deref(),
                exec,
                outputs: &outputs,
                syntax_error,
                note,
            },
        );
        let mut item = Item::new(space, id, Ext::Py, Role::Tool);
        item.tool_type = "python".to_owned();
        item.executor = match exec {
            PyExec::Id(e) => Some(e.to_owned()),
            PyExec::None | PyExec::Omit => None,
        };
        item.version = version;
        item.outputs = outputs;
        item.unparseable = syntax_error;
        item.contents = contents;
        self.add(item)
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "a private constructor mirroring the tool's fields"
    )]
    fn new_yaml_tool(
        &mut self,
        space: Sp,
        id: String,
        kind: YamlKind,
        executor: Option<String>,
        version: Option<String>,
        outputs: Vec<String>,
        malformed: bool,
        note: Option<&str>,
    ) -> usize {
        let graph_targets: Vec<String> = if kind == YamlKind::Graph && !self.tool_ids.is_empty() {
            (0..self.rng.range(1, 4))
                .map(|_| self.tool_ids[self.rng.below(self.tool_ids.len())].clone())
                .collect()
        } else {
            Vec::new()
        };
        let mut rng = self.rng.fork();
        let contents = render_yaml_tool(
            &mut rng,
            &YamlSpec {
                id: &id,
                kind,
                version: version.as_deref(),
                executor: executor.as_deref(),
                outputs: &outputs,
                graph_targets: &graph_targets,
                malformed,
                note,
            },
        );
        let mut item = Item::new(space, id, Ext::Yaml, Role::Tool);
        item.tool_type = match kind {
            YamlKind::Command => "yaml",
            YamlKind::Http => "http",
            YamlKind::Mcp => "mcp",
            YamlKind::Graph => "graph",
            YamlKind::McpServer => "mcp_server",
        }
        .to_owned();
        item.executor = executor;
        item.version = version;
        item.outputs = outputs;
        item.unparseable = malformed;
        item.contents = contents;
        self.add(item)
    }

    /// A clean Python tool of `space` using `executor`.
    fn clean_py(&mut self, space: Sp, executor: &str) -> usize {
        let id = self.fresh_tool_id(space);
        let version = self.version_for_clean();
        self.new_py_tool(
            space,
            id,
            PyExec::Id(executor),
            version,
            Vec::new(),
            false,
            None,
        )
    }

    fn random_space(&mut self) -> Sp {
        [Sp::Project, Sp::User, Sp::System][self.rng.weighted(&[50, 30, 20])]
    }

    fn mutable_space(&mut self) -> Sp {
        if self.rng.percent(60) {
            Sp::Project
        } else {
            Sp::User
        }
    }

    // -----------------------------------------------------------------------------------------
    // Planted problems

    fn plants(&mut self) {
        if self.target < 200 {
            return;
        }
        // ~0.75 % of the tools overall, spread evenly over the rules.
        let per_rule =
            ((self.target as f64 * 0.0075 / PLANTED_RULES.len() as f64).round() as usize).max(1);
        for i in 0..per_rule.max(2) {
            self.plant_missing_executor(i);
        }
        for i in 0..per_rule.max(2) {
            self.plant_cycle(i);
        }
        for _ in 0..per_rule {
            self.plant_too_deep();
        }
        for i in 0..per_rule.max(2) {
            self.plant_unknown_primitive(i);
        }
        for i in 0..per_rule.max(2) {
            self.plant_unparseable(i);
        }
        for _ in 0..per_rule {
            self.plant_ambiguous();
        }
        for i in 0..per_rule.max(3) {
            self.plant_invalid_id(i);
        }
        for i in 0..per_rule.max(3) {
            self.plant_invalid_version(i);
        }
        for _ in 0..per_rule {
            self.plant_unsatisfied_inputs();
        }
        for _ in 0..per_rule {
            self.plant_constraint(true);
        }
        for _ in 0..per_rule {
            self.plant_constraint(false);
        }
        for _ in 0..per_rule {
            self.plant_upward();
        }
        for _ in 0..per_rule {
            self.plant_system_delegates();
        }
    }

    /// A near miss of `id` (one edit in its last segment) that names no file anywhere.
    fn typo_of(&mut self, id: &str) -> String {
        let (folder, name) = id.rsplit_once('/').unwrap_or(("", id));
        let chars: Vec<char> = name.chars().collect();
        for _ in 0..64 {
            let mut c = chars.clone();
            let at = self.rng.below(c.len());
            match self.rng.below(3) {
                0 if at + 1 < c.len() => c.swap(at, at + 1),
                1 if c.len() > 2 => {
                    c.remove(at);
                }
                _ => c.insert(at, c[at]),
            }
            let name: String = c.into_iter().collect();
            let cand = if folder.is_empty() {
                name
            } else {
                format!("{folder}/{name}")
            };
            if cand != id
                && !self.taken.contains(&cand)
                && !is_primitive(&cand)
                && item_id_problem(&cand).is_none()
            {
                return cand;
            }
        }
        self.unique(format!("{id}-old"), '-')
    }

    fn plant_missing_executor(&mut self, i: usize) {
        if i.is_multiple_of(2) {
            // A typo of a runtime the tool could see.
            let space = self.random_space();
            let real = self.pick_exec(space, Family::Python);
            let typo = self.typo_of(&real);
            self.taken.insert(typo.clone());
            let id = self.fresh_tool_id(space);
            let version = self.version_for_clean();
            let note = format!("planted missing-executor (typo of {real})");
            let at = if self.rng.percent(70) {
                self.new_py_tool(
                    space,
                    id,
                    PyExec::Id(&typo),
                    version,
                    Vec::new(),
                    false,
                    Some(&note),
                )
            } else {
                self.new_yaml_tool(
                    space,
                    id,
                    YamlKind::Command,
                    Some(typo),
                    version,
                    Vec::new(),
                    false,
                    Some(&note),
                )
            };
            self.plant(rule::MISSING_EXECUTOR, at);
        } else {
            // A user tool naming a runtime that exists only in the project space.
            let hidden: Vec<String> = self
                .model
                .items
                .iter()
                .filter(|it| {
                    it.space == Sp::Project
                        && it.role == Role::Runtime
                        && it.usable
                        && !self.model.in_space(&it.id, Sp::User)
                        && !self.model.in_space(&it.id, Sp::System)
                })
                .map(|it| it.id.clone())
                .collect();
            let Some(runtime) =
                (!hidden.is_empty()).then(|| hidden[self.rng.below(hidden.len())].clone())
            else {
                return self.plant_missing_executor(i + 1);
            };
            let id = self.fresh_tool_id(Sp::User);
            let version = self.version_for_clean();
            let note =
                format!("planted missing-executor ({runtime} exists only in the project space)");
            let at = self.new_py_tool(
                Sp::User,
                id,
                PyExec::Id(&runtime),
                version,
                Vec::new(),
                false,
                Some(&note),
            );
            self.plant(rule::MISSING_EXECUTOR, at);
        }
    }

    fn plant_cycle(&mut self, i: usize) {
        let space = self.mutable_space();
        let members: Vec<usize> = if i.is_multiple_of(2) {
            // Two runtimes naming each other.
            let a = self.fresh_runtime_id(space, Family::Python);
            self.taken.insert(a.clone());
            let b = self.fresh_runtime_id(space, Family::Python);
            self.taken.insert(b.clone());
            let note = "planted executor-cycle (two runtimes)";
            let ia = self.new_runtime(
                space,
                a.clone(),
                Family::Python,
                Some(b.clone()),
                Vec::new(),
                Vec::new(),
                Some(note),
                false,
            );
            let ib = self.new_runtime(
                space,
                b,
                Family::Python,
                Some(a.clone()),
                Vec::new(),
                Vec::new(),
                Some(note),
                false,
            );
            if self.rng.percent(50) {
                // Upstream of the cycle: clean by definition.
                self.clean_py(space, &a);
            }
            vec![ia, ib]
        } else {
            // A tool naming itself.
            let id = self.fresh_tool_id(space);
            let version = self.version_for_clean();
            let own = id.clone();
            vec![self.new_py_tool(
                space,
                id,
                PyExec::Id(&own),
                version,
                Vec::new(),
                false,
                Some("planted executor-cycle (self-loop)"),
            )]
        };
        let mut paths: Vec<(String, String)> = members
            .iter()
            .map(|&m| (self.model.items[m].path(), self.model.items[m].id.clone()))
            .collect();
        paths.sort();
        self.planted.push(Planted {
            rule: rule::EXECUTOR_CYCLE.to_owned(),
            path: paths[0].0.clone(),
            item_id: paths[0].1.clone(),
            members: paths.into_iter().map(|p| p.0).collect(),
        });
    }

    /// 11–14 stacked wrappers (system, then user, then project) plus a project tool on top.
    fn plant_too_deep(&mut self) {
        let tag = loop {
            let t = format!("compat-{:04x}", self.rng.below(0x10000));
            if !self.taken.iter().any(|id| id.contains(&t)) {
                break t;
            }
        };
        let layers = self.rng.range(11, 14);
        let (user_root, project_root) = (self.root(Sp::User), self.root(Sp::Project));
        let mut below = BASE_SCRIPT.to_owned();
        let mut flagged = Vec::new();
        for k in 1..=layers {
            let (space, root) = match k {
                1..=4 => (Sp::System, "rye"),
                5..=8 => (Sp::User, user_root),
                _ => (Sp::Project, project_root),
            };
            let id = format!("{root}/legacy/{tag}/layer-{k:02}");
            // Layer k has k + 2 elements (layer, k - 1 layers, python/script, subprocess).
            let deep = k + 2 > MAX_CHAIN_ELEMENTS;
            let note = deep.then_some("planted chain-too-deep (wrapper stack)");
            let at = self.new_runtime(
                space,
                id.clone(),
                Family::Python,
                Some(below),
                Vec::new(),
                Vec::new(),
                note,
                false,
            );
            if deep {
                flagged.push(at);
            }
            below = id;
        }
        let id = self.fresh_tool_id(Sp::Project);
        let version = self.version_for_clean();
        let at = self.new_py_tool(
            Sp::Project,
            id,
            PyExec::Id(&below),
            version,
            Vec::new(),
            false,
            Some("planted chain-too-deep (tool on the stack)"),
        );
        flagged.push(at);
        for at in flagged {
            self.plant(rule::CHAIN_TOO_DEEP, at);
        }
    }

    fn plant_unknown_primitive(&mut self, i: usize) {
        if i.is_multiple_of(2) {
            // A Python tool that forgot `__executor_id__`.
            let space = self.random_space();
            let id = self.fresh_tool_id(space);
            let version = self.version_for_clean();
            let at = self.new_py_tool(
                space,
                id,
                PyExec::Omit,
                version,
                Vec::new(),
                false,
                Some("planted unknown-primitive (no __executor_id__)"),
            );
            self.plant(rule::UNKNOWN_PRIMITIVE, at);
        } else {
            // A runtime with `executor_id: null`, used by clean tools.
            let space = self.mutable_space();
            let id = self.fresh_runtime_id(space, Family::Python);
            let at = self.new_runtime(
                space,
                id.clone(),
                Family::Python,
                None,
                Vec::new(),
                Vec::new(),
                Some("planted unknown-primitive (runtime without executor)"),
                false,
            );
            self.plant(rule::UNKNOWN_PRIMITIVE, at);
            for _ in 0..self.rng.range(1, 2) {
                self.clean_py(space, &id);
            }
        }
    }

    fn plant_unparseable(&mut self, i: usize) {
        let space = self.random_space();
        let id = self.fresh_tool_id(space);
        let version = self.version_for_clean();
        let at = if i.is_multiple_of(2) {
            let exec = self.pick_exec(space, Family::Python);
            self.new_py_tool(
                space,
                id,
                PyExec::Id(&exec),
                version,
                Vec::new(),
                true,
                Some("planted unparseable-metadata (syntax error in a body line)"),
            )
        } else {
            let exec = PRIMITIVE_IDS[0].to_owned();
            self.new_yaml_tool(
                space,
                id,
                YamlKind::Command,
                Some(exec),
                version,
                Vec::new(),
                true,
                Some("planted unparseable-metadata (malformed YAML)"),
            )
        };
        self.plant(rule::UNPARSEABLE_METADATA, at);
    }

    fn plant_ambiguous(&mut self) {
        let space = self.random_space();
        let id = self.fresh_tool_id(space);
        let exec = self.pick_exec(space, Family::Python);
        let version = self.version_for_clean();
        self.new_py_tool(
            space,
            id.clone(),
            PyExec::Id(&exec),
            version,
            Vec::new(),
            false,
            None,
        );
        let version = self.version_for_clean();
        let at = self.new_yaml_tool(
            space,
            id,
            YamlKind::Command,
            Some(PRIMITIVE_IDS[0].to_owned()),
            version,
            Vec::new(),
            false,
            Some("planted ambiguous-item (a .py of the same id wins)"),
        );
        self.plant(rule::AMBIGUOUS_ITEM, at);
    }

    fn plant_invalid_id(&mut self, i: usize) {
        let space = self.random_space();
        let real = self.pick_exec(space, Family::Python);
        let bad = match i % 3 {
            0 => format!("../{}/runtimes/python", self.rng.pick(&DOMAINS)),
            1 => format!("/opt/rye/{}", real),
            _ => real.replacen('/', "//", 1),
        };
        let id = self.fresh_tool_id(space);
        let version = self.version_for_clean();
        let note = "planted invalid-item-id";
        let at = if self.rng.percent(70) {
            self.new_py_tool(
                space,
                id,
                PyExec::Id(&bad),
                version,
                Vec::new(),
                false,
                Some(note),
            )
        } else {
            self.new_yaml_tool(
                space,
                id,
                YamlKind::Command,
                Some(bad),
                version,
                Vec::new(),
                false,
                Some(note),
            )
        };
        self.plant(rule::INVALID_ITEM_ID, at);
    }

    fn plant_invalid_version(&mut self, i: usize) {
        let space = self.random_space();
        let version = match i % 3 {
            0 => format!("{}.{}", self.rng.range(0, 3), self.rng.below(10)),
            1 => format!("v{}", semver(&mut self.rng)),
            _ => ["latest", "dev", "unstable"][self.rng.below(3)].to_owned(),
        };
        let id = self.fresh_tool_id(space);
        let note = "planted invalid-version";
        let at = if self.rng.percent(70) {
            let exec = self.pick_exec(space, Family::Python);
            self.new_py_tool(
                space,
                id,
                PyExec::Id(&exec),
                Some(version),
                Vec::new(),
                false,
                Some(note),
            )
        } else {
            let exec = PRIMITIVE_IDS[0].to_owned();
            self.new_yaml_tool(
                space,
                id,
                YamlKind::Command,
                Some(exec),
                Some(version),
                Vec::new(),
                false,
                Some(note),
            )
        };
        self.plant(rule::INVALID_VERSION, at);
    }

    fn plant_unsatisfied_inputs(&mut self) {
        let space = self.mutable_space();
        let set = IO_SETS[self.rng.below(IO_SETS.len())];
        let n = self.rng.range(2, 3);
        let inputs: Vec<String> = set[..n].iter().map(|s| (*s).to_owned()).collect();
        let rid = self.fresh_runtime_id(space, Family::Python);
        self.new_runtime(
            space,
            rid.clone(),
            Family::Python,
            Some(BASE_FUNCTION.to_owned()),
            inputs.clone(),
            Vec::new(),
            None,
            false,
        );
        // The planted tool provides all but the last input.
        let id = self.fresh_tool_id(space);
        let version = self.version_for_clean();
        let outputs = inputs[..n - 1].to_vec();
        let at = self.new_py_tool(
            space,
            id,
            PyExec::Id(&rid),
            version,
            outputs,
            false,
            Some("planted unsatisfied-inputs"),
        );
        self.plant(rule::UNSATISFIED_INPUTS, at);
        // Clean siblings: no outputs declared at all, and every input covered.
        self.clean_py(space, &rid);
        if self.rng.percent(50) {
            let id = self.fresh_tool_id(space);
            let version = self.version_for_clean();
            self.new_py_tool(space, id, PyExec::Id(&rid), version, inputs, false, None);
        }
    }

    /// `violation`: a 1.x tool under `min_version: 2.0.0`-ish; else a tool with no version.
    fn plant_constraint(&mut self, violation: bool) {
        let space = self.mutable_space();
        let bad = self.fresh_tool_id(space);
        self.taken.insert(bad.clone());
        let good = self.fresh_tool_id(space);
        self.taken.insert(good.clone());
        let major = self.rng.range(2, 3);
        let min = format!("{major}.0.0");
        let constraints = vec![(bad.clone(), min.clone()), (good.clone(), min)];
        let rid = self.fresh_runtime_id(space, Family::Python);
        self.new_runtime(
            space,
            rid.clone(),
            Family::Python,
            Some(BASE_SCRIPT.to_owned()),
            Vec::new(),
            constraints,
            None,
            false,
        );
        let (rule, version, note) = if violation {
            let v = format!(
                "{}.{}.{}",
                major - 1,
                self.rng.below(10),
                self.rng.below(10)
            );
            (
                rule::VERSION_CONSTRAINT_VIOLATION,
                Some(v),
                "planted version-constraint-violation",
            )
        } else {
            (
                rule::UNVERSIONED_CONSTRAINED_CHILD,
                None,
                "planted unversioned-constrained-child",
            )
        };
        let at = self.new_py_tool(
            space,
            bad,
            PyExec::Id(&rid),
            version,
            Vec::new(),
            false,
            Some(note),
        );
        self.plant(rule, at);
        let v = format!("{major}.{}.{}", self.rng.below(10), self.rng.below(10));
        self.new_py_tool(
            space,
            good,
            PyExec::Id(&rid),
            Some(v),
            Vec::new(),
            false,
            None,
        );
    }

    /// The relative target of a symlink at `link` pointing to `target` (both relative to OUT).
    fn link_target(link: &str, target: &str) -> String {
        let ups = link.matches('/').count();
        format!("{}{target}", "../".repeat(ups))
    }

    /// A symlink item in `space` with id `id` pointing to item `target`.
    fn new_link(&mut self, space: Sp, id: String, target: usize) -> usize {
        let mut item = Item::new(space, id, Ext::Yaml, Role::Runtime);
        item.family = self.model.items[target].family;
        item.link = Some(target);
        self.add(item)
    }

    fn plant_upward(&mut self) {
        let pid = self.fresh_runtime_id(Sp::Project, Family::Python);
        let p = self.new_runtime(
            Sp::Project,
            pid,
            Family::Python,
            Some(BASE_SCRIPT.to_owned()),
            Vec::new(),
            Vec::new(),
            None,
            false,
        );
        let lid = {
            let root = self.root(Sp::User);
            let name = name_of(&self.model.items[p].id).to_owned();
            self.unique(format!("{root}/linked/runtimes/{name}"), '-')
        };
        self.new_link(Sp::User, lid.clone(), p);
        let id = self.fresh_tool_id(Sp::User);
        let version = self.version_for_clean();
        let at = self.new_py_tool(
            Sp::User,
            id,
            PyExec::Id(&lid),
            version,
            Vec::new(),
            false,
            Some("planted upward-space-dependency (runtime is a symlink into the project space)"),
        );
        self.plant(rule::UPWARD_SPACE_DEPENDENCY, at);
    }

    fn plant_system_delegates(&mut self) {
        let uid = self.fresh_runtime_id(Sp::User, Family::Python);
        let u = self.new_runtime(
            Sp::User,
            uid,
            Family::Python,
            Some(BASE_SCRIPT.to_owned()),
            Vec::new(),
            Vec::new(),
            None,
            false,
        );
        let mid = {
            let name = name_of(&self.model.items[u].id).to_owned();
            self.unique(format!("rye/vendor/runtimes/{name}"), '-')
        };
        self.new_link(Sp::System, mid.clone(), u);
        let id = self.fresh_tool_id(Sp::System);
        let version = self.version_for_clean();
        let at = self.new_py_tool(
            Sp::System,
            id,
            PyExec::Id(&mid),
            version,
            Vec::new(),
            false,
            Some("planted system-delegates-to-mutable (runtime is a symlink into the user space)"),
        );
        self.plant(rule::SYSTEM_DELEGATES_TO_MUTABLE, at);
        // §4.5: the same edge is also an upward space dependency; the reference reports both.
        self.plant(rule::UPWARD_SPACE_DEPENDENCY, at);
    }

    // -----------------------------------------------------------------------------------------
    // Clean tools

    fn fill(&mut self) {
        let remaining = self.target.saturating_sub(self.tools);
        let system = remaining * 20 / 100;
        let user = remaining * 30 / 100;
        let project = remaining - system - user;
        for (space, n) in [
            (Sp::System, system),
            (Sp::User, user),
            (Sp::Project, project),
        ] {
            for _ in 0..n {
                self.fill_tool(space);
            }
        }
    }

    fn fill_tool(&mut self, space: Sp) {
        let roll = self.rng.below(100);
        // A data file with no executor (library module or MCP server config).
        if roll < 3 {
            let at = self.terminal_tool(space);
            self.shadowable[space as usize].push(at);
            return;
        }
        // Shadow a clean tool of the next lower space.
        if roll < 7 {
            let lower = match space {
                Sp::Project => Some(Sp::User),
                Sp::User => Some(Sp::System),
                Sp::System => None,
            };
            if let Some(lower) = lower {
                let pool = &self.shadowable[lower as usize];
                if !pool.is_empty() {
                    let orig = pool[self.rng.below(pool.len())];
                    let (id, ext) = (
                        self.model.items[orig].id.clone(),
                        self.model.items[orig].ext,
                    );
                    if !self.model.in_space(&id, space) && self.model.items[orig].executor.is_some()
                    {
                        self.regular_tool(space, id, ext);
                        return;
                    }
                }
            }
        }
        let id = self.fresh_tool_id(space);
        let ext = if self.rng.percent(70) {
            Ext::Py
        } else {
            Ext::Yaml
        };
        let at = self.regular_tool(space, id, ext);
        self.shadowable[space as usize].push(at);
    }

    fn regular_tool(&mut self, space: Sp, id: String, ext: Ext) -> usize {
        let version = self.version_for_clean();
        let outputs: Vec<String> = if self.rng.percent(8) {
            vec![["report", "summary", "artifact"][self.rng.below(3)].to_owned()]
        } else {
            Vec::new()
        };
        match ext {
            Ext::Py => {
                let exec = self.pick_exec(space, Family::Python);
                self.new_py_tool(space, id, PyExec::Id(&exec), version, outputs, false, None)
            }
            Ext::Yaml => {
                let kind = [
                    YamlKind::Command,
                    YamlKind::Http,
                    YamlKind::Mcp,
                    YamlKind::Graph,
                ][self.rng.weighted(&[35, 20, 25, 20])];
                let exec = match kind {
                    YamlKind::Command => {
                        PRIMITIVE_IDS[if self.rng.percent(85) { 0 } else { 1 }].to_owned()
                    }
                    YamlKind::Http => PRIMITIVE_IDS[2].to_owned(),
                    YamlKind::Mcp => self.pick_exec(space, Family::Mcp),
                    _ => self.pick_exec(space, Family::Graph),
                };
                self.new_yaml_tool(space, id, kind, Some(exec), version, outputs, false, None)
            }
        }
    }

    /// A Python library module or an MCP server config: tool types that need no executor.
    fn terminal_tool(&mut self, space: Sp) -> usize {
        let root = self.root(space);
        let version = self.version_for_clean();
        if self.rng.percent(50) {
            let base = format!(
                "{root}/{}/lib/{}_utils",
                self.rng.pick(&DOMAINS),
                self.rng.pick(&NOUNS)
            );
            let id = self.unique(base, '_');
            let mut rng = self.rng.fork();
            let contents = render_python(
                &mut rng,
                &PySpec {
                    id: &id,
                    tool_type: "python_lib",
                    version: version.as_deref(),
                    exec: PyExec::None,
                    outputs: &[],
                    syntax_error: false,
                    note: None,
                },
            );
            let mut item = Item::new(space, id, Ext::Py, Role::Tool);
            item.tool_type = "python_lib".to_owned();
            item.version = version;
            item.contents = contents;
            self.add(item)
        } else {
            let base = format!("{root}/mcp/servers/{}", self.rng.pick(&MCP_SERVERS));
            let id = self.unique(base, '-');
            self.new_yaml_tool(
                space,
                id,
                YamlKind::McpServer,
                None,
                version,
                Vec::new(),
                false,
                None,
            )
        }
    }

    // -----------------------------------------------------------------------------------------
    // Output

    fn finish(mut self) -> GeneratedTree {
        let mut planted = std::mem::take(&mut self.planted);
        planted.sort();
        debug_assert_eq!(
            planted,
            self.model.findings(),
            "planted findings disagree with the model (seed {})",
            self.seed
        );
        let flagged: FxHashSet<&str> = planted
            .iter()
            .flat_map(|p| {
                std::iter::once(p.path.as_str()).chain(p.members.iter().map(String::as_str))
            })
            .collect();
        let clean_tools = self
            .model
            .items
            .iter()
            .filter(|it| it.role == Role::Tool && !flagged.contains(it.path().as_str()))
            .count();
        let paths: Vec<String> = self.model.items.iter().map(Item::path).collect();
        let mut files = Vec::new();
        let mut symlinks = Vec::new();
        for (item, path) in self.model.items.iter_mut().zip(&paths) {
            match item.link {
                Some(t) => symlinks.push(GenSymlink {
                    path: path.clone(),
                    target: Gen::link_target(path, &paths[t]),
                }),
                // Moved, not cloned: the model is dropped here and large trees hold hundreds of MB.
                None => files.push(GenFile {
                    path: path.clone(),
                    contents: std::mem::take(&mut item.contents),
                }),
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        symlinks.sort_by(|a, b| a.path.cmp(&b.path));
        let manifest = Manifest {
            seed: self.seed,
            tools: self.tools,
            files: files.len(),
            planted,
            clean_tools,
            signed_by: None,
        };
        GeneratedTree {
            files,
            symlinks,
            manifest,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Signing

/// Where [`sign`] trusts its key: the seed-era trust document of the generated user space.
pub const TRUST_DOC_DIR: &str = "user/.ai/config/keys/trusted";

/// The time written into every signature line of a signed tree (2026-01-01T00:00:00Z), so the
/// same options still give byte-identical trees.
pub const SIGNED_AT: i64 = 1_767_225_600;

/// The throwaway key a tree was signed with (PEM texts as `ryechain keys generate` writes them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeKey {
    pub private_pem: String,
    pub public_pem: String,
    pub fingerprint: String,
}

/// Sign every item of a generated tree in place with a throwaway Ed25519 key derived from the
/// tree's seed, and trust that key in the generated user space (`TRUST_DOC_DIR/<fp>.toml`, a new
/// file of the tree). Signing is the library's own (`integrity::sign_text`) with the signature
/// format the tree's extractors configure, so `ryechain lint` with the integrity family on reports
/// exactly the manifest's planted findings. Symlinks are covered by their targets. Pure and
/// deterministic (the key comes from the seed, the time is [`SIGNED_AT`]); items are signed in
/// parallel. The key is for benchmarks and tests only: anyone can derive it from the seed.
pub fn sign(tree: &mut GeneratedTree) -> Result<TreeKey, crate::integrity::keys::KeyError> {
    use rayon::prelude::*;

    use crate::integrity::keys::{fingerprint, key_pair_from_seed, signing_key_from_pem};
    use crate::integrity::timefmt::signature_timestamp;
    use crate::integrity::trust::trust_doc_toml;
    use crate::integrity::{ItemKind, sign_text};

    let mut rng = Rng::new(tree.manifest.seed ^ 0x7369_676E_5F6B_6579); // "sign_key"
    let mut seed = [0u8; 32];
    for chunk in seed.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let pem = key_pair_from_seed(&seed)?;
    let key = signing_key_from_pem(&pem.private_pem)?;
    let fp = fingerprint(pem.public_pem.as_bytes());
    let formats = SignatureFormatsOf::read(tree);
    let timestamp = signature_timestamp(SIGNED_AT);
    tree.files.par_iter_mut().for_each(|f| {
        let Some((_, rel)) = f.path.split_once("/.ai/") else {
            return;
        };
        let Some(kind @ ItemKind::Tool) = ItemKind::of_rel(rel) else {
            return;
        };
        let fmt = formats.get(kind, rel);
        // Only a directive without XML fails to sign; a tree holds tools only.
        if let Ok((signed, _)) = sign_text(kind, &fmt, &f.contents, &key, &fp, timestamp.clone()) {
            f.contents = signed;
        }
    });
    let doc = GenFile {
        path: format!("{TRUST_DOC_DIR}/{fp}.toml"),
        contents: trust_doc_toml(&pem.public_pem, "gen_tree (throwaway benchmark key)"),
    };
    let at = tree.files.partition_point(|f| f.path < doc.path);
    tree.files.insert(at, doc);
    tree.manifest.files = tree.files.len();
    tree.manifest.signed_by = Some(fp.clone());
    Ok(TreeKey {
        private_pem: pem.private_pem,
        public_pem: pem.public_pem,
        fingerprint: fp,
    })
}

/// The signature formats the tree's own extractors configure, read through the same query
/// `ryechain sign` uses (a database holding only the extractor files).
struct SignatureFormatsOf(crate::integrity::SignatureFormats);

impl SignatureFormatsOf {
    fn read(tree: &GeneratedTree) -> Self {
        use std::path::PathBuf;
        use std::sync::Arc;

        use crate::db::change::{FileSpec, RootSpec};
        use crate::db::{Change, FileContents};
        use crate::integrity::{ItemKind, formats_of};
        use crate::model::Space;
        use crate::resolve::extractor::EXTRACTORS_DIR;

        let spaces = [
            ("project", Space::Project),
            ("user", Space::User),
            (
                "system",
                Space::System {
                    order: 0,
                    bundle: Arc::from("gen"),
                },
            ),
        ];
        let roots = spaces
            .into_iter()
            .map(|(dir, space)| {
                let base = PathBuf::from("/gen").join(dir).join(".ai");
                let files = tree
                    .files
                    .iter()
                    .filter_map(|f| {
                        let rel = f.path.strip_prefix(dir)?.strip_prefix("/.ai/")?;
                        rel.starts_with(EXTRACTORS_DIR).then(|| FileSpec {
                            space: space.clone(),
                            path: base.join(rel),
                            rel: rel.to_owned(),
                            contents: FileContents::Text(f.contents.as_str().into()),
                            link_origin: None,
                        })
                    })
                    .collect();
                RootSpec {
                    space,
                    root: base,
                    files,
                }
            })
            .collect();
        let mut host = crate::analysis::Host::new();
        host.apply(Change {
            roots: Some(roots),
            ..Change::default()
        });
        let db = host.snapshot();
        SignatureFormatsOf(formats_of(&db, ItemKind::Tool).clone())
    }

    fn get(
        &self,
        kind: crate::integrity::ItemKind,
        rel: &str,
    ) -> crate::integrity::SignatureFormat {
        self.0.get(kind, crate::integrity::extension_of(rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_for(tools: usize, seed: u64) -> GeneratedTree {
        generate(&GenOptions { tools, seed })
    }

    #[test]
    fn same_seed_is_byte_identical() {
        let a = tree_for(600, 42);
        let b = tree_for(600, 42);
        assert_eq!(a, b);
        let json = |t: &GeneratedTree| serde_json::to_string(&t.manifest).unwrap();
        assert_eq!(json(&a), json(&b));
    }

    #[test]
    fn signing_is_deterministic_and_touches_every_item() {
        let mut a = tree_for(300, 5);
        let unsigned = a.clone();
        let mut b = tree_for(300, 5);
        let ka = sign(&mut a).unwrap();
        let kb = sign(&mut b).unwrap();
        assert_eq!(ka, kb);
        assert_eq!(a, b);
        assert_eq!(a.files.len(), unsigned.files.len() + 1);
        let line = format!(":{}", ka.fingerprint);
        for f in &a.files {
            if f.path.contains("/.ai/tools/") {
                let first = f
                    .contents
                    .lines()
                    .find(|l| !l.starts_with("#!"))
                    .unwrap_or("");
                assert!(
                    first.starts_with("# rye:signed:") && first.ends_with(&line),
                    "{}: {first}",
                    f.path
                );
            }
        }
    }

    #[test]
    fn different_seeds_differ() {
        let a = tree_for(300, 1);
        let b = tree_for(300, 2);
        assert_ne!(a.files, b.files);
        assert_ne!(a.manifest.planted, b.manifest.planted);
    }

    #[test]
    fn tool_count_is_honoured() {
        for n in [0, 50, 200, 1000, 5000] {
            let m = tree_for(n, 9).manifest;
            let slack = (n as f64 * 0.03).ceil() as usize;
            assert!(
                m.tools.abs_diff(n) <= slack,
                "asked for {n} tools, got {}",
                m.tools
            );
            assert!(m.clean_tools <= m.tools);
        }
    }

    #[test]
    fn every_planted_kind_is_present_at_500_tools() {
        let m = tree_for(500, 3).manifest;
        for rule in PLANTED_RULES {
            assert!(
                m.planted.iter().any(|p| p.rule == rule),
                "no {rule} planted"
            );
        }
        // Both cycle shapes.
        let cycles: Vec<&Planted> = m
            .planted
            .iter()
            .filter(|p| p.rule == rule::EXECUTOR_CYCLE)
            .collect();
        assert!(
            cycles.iter().any(|p| p.members.len() == 1)
                && cycles.iter().any(|p| p.members.len() == 2)
        );
        // Planted findings are a small fraction.
        let planted_tools = m.tools - m.clean_tools;
        assert!(
            planted_tools * 100 <= m.tools * 12,
            "{planted_tools} of {} tools planted",
            m.tools
        );
    }

    #[test]
    fn small_trees_are_clean() {
        let t = tree_for(150, 5);
        assert!(t.manifest.planted.is_empty());
        assert_eq!(t.manifest.clean_tools, t.manifest.tools);
        assert!(t.symlinks.is_empty());
    }

    #[test]
    fn paths_are_relative_unique_and_contained() {
        let t = tree_for(800, 11);
        let mut seen = FxHashSet::default();
        let all = t
            .files
            .iter()
            .map(|f| f.path.as_str())
            .chain(t.symlinks.iter().map(|s| s.path.as_str()));
        for p in all {
            assert!(seen.insert(p.to_owned()), "duplicate path {p}");
            assert!(
                !p.starts_with('/') && !p.contains('\\'),
                "{p} is not relative"
            );
            assert!(
                p.split('/')
                    .all(|seg| !seg.is_empty() && seg != ".." && seg != "."),
                "{p} has a bad segment"
            );
            assert!(
                ["project/.ai/tools/", "user/.ai/tools/", "system/.ai/tools/"]
                    .iter()
                    .any(|r| p.starts_with(r)),
                "{p}"
            );
        }
        // Symlink targets, joined to the link's directory, land on a generated file.
        let files: FxHashSet<&str> = t.files.iter().map(|f| f.path.as_str()).collect();
        for s in &t.symlinks {
            let mut parts: Vec<&str> = s.path.split('/').collect();
            parts.pop();
            for seg in s.target.split('/') {
                if seg == ".." {
                    assert!(parts.pop().is_some(), "{} escapes OUT", s.target);
                } else {
                    parts.push(seg);
                }
            }
            assert!(
                files.contains(parts.join("/").as_str()),
                "{} -> {} dangles",
                s.path,
                s.target
            );
        }
        for p in &t.manifest.planted {
            assert!(
                seen.contains(&p.path),
                "planted path {} is not generated",
                p.path
            );
            assert!(p.members.iter().all(|m| seen.contains(m)));
        }
    }

    #[test]
    fn manifest_matches_an_independent_model_lint() {
        for (tools, seed) in [(500, 3), (1200, 17), (3000, 99)] {
            let g = Gen::build(&GenOptions { tools, seed });
            let expected = g.model.findings();
            let manifest = g.finish().manifest;
            assert_eq!(manifest.planted, expected, "tools={tools} seed={seed}");
        }
    }

    #[test]
    fn chains_span_two_to_ten_elements() {
        let g = Gen::build(&GenOptions {
            tools: 3000,
            seed: 5,
        });
        let mut lengths = std::collections::BTreeSet::new();
        for (i, item) in g.model.items.iter().enumerate() {
            if item.role == Role::Tool
                && let ChainEnd::Ok(n) = g.model.chain(i)
                && n <= MAX_CHAIN_ELEMENTS
            {
                lengths.insert(n);
            }
        }
        assert!(
            lengths.contains(&2) && lengths.contains(&MAX_CHAIN_ELEMENTS),
            "{lengths:?}"
        );
        // Shadowing is present in both directions.
        let shadow = |hi: Sp, lo: Sp| {
            g.model.index.values().any(|s| {
                s[hi as usize].iter().any(Option::is_some)
                    && s[lo as usize].iter().any(Option::is_some)
            })
        };
        assert!(shadow(Sp::Project, Sp::User) && shadow(Sp::User, Sp::System));
    }

    /// Top-level `NAME = "value"` / `NAME = None` lines of a Python header.
    fn py_header(text: &str, name: &str) -> Option<Option<String>> {
        let prefix = format!("{name} = ");
        text.lines().find_map(|l| l.strip_prefix(&prefix)).map(|v| {
            v.strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned)
        })
    }

    #[test]
    fn rendered_files_parse_and_agree_with_the_model() {
        let g = Gen::build(&GenOptions {
            tools: 600,
            seed: 21,
        });
        let mut py_sizes = Vec::new();
        for item in g.model.items.iter().filter(|it| it.link.is_none()) {
            let text = &item.contents;
            match item.ext {
                Ext::Py => {
                    let parsed = ruff_python_parser::parse_module(text);
                    assert_eq!(
                        parsed.is_err(),
                        item.unparseable,
                        "{}:\n{text}",
                        item.path()
                    );
                    assert_eq!(
                        py_header(text, "__version__"),
                        item.version.clone().map(Some),
                        "{}",
                        item.path()
                    );
                    let exec = py_header(text, "__executor_id__");
                    if item.tool_type == "python_lib" {
                        assert_eq!(exec, Some(None));
                    } else {
                        assert_eq!(exec.flatten(), item.executor, "{}", item.path());
                    }
                    assert_eq!(
                        py_header(text, "__tool_type__").flatten().as_deref(),
                        Some(item.tool_type.as_str())
                    );
                    if item.role == Role::Tool && item.tool_type == "python" {
                        py_sizes.push(text.len());
                    }
                }
                Ext::Yaml => {
                    let parsed = serde_yaml::from_str::<serde_yaml::Value>(text);
                    if item.unparseable {
                        assert!(parsed.is_err(), "{} should not parse", item.path());
                        continue;
                    }
                    let doc = parsed.unwrap_or_else(|e| panic!("{}: {e}\n{text}", item.path()));
                    let s = |k: &str| doc.get(k).and_then(|v| v.as_str()).map(str::to_owned);
                    assert_eq!(s("executor_id"), item.executor, "{}", item.path());
                    assert_eq!(s("version"), item.version, "{}", item.path());
                    assert_eq!(
                        s("tool_type").as_deref(),
                        Some(item.tool_type.as_str()),
                        "{}",
                        item.path()
                    );
                    let list = |k: &str| -> Vec<String> {
                        doc.get(k)
                            .and_then(|v| v.as_sequence())
                            .map_or_else(Vec::new, |xs| {
                                xs.iter()
                                    .filter_map(|x| x.as_str().map(str::to_owned))
                                    .collect()
                            })
                    };
                    assert_eq!(list("inputs"), item.inputs);
                    assert_eq!(list("outputs"), item.outputs);
                    let constraints: Vec<(String, String)> = doc
                        .get("child_constraints")
                        .and_then(|v| v.as_mapping())
                        .map(|m| {
                            m.iter()
                                .map(|(k, v)| {
                                    (
                                        k.as_str().unwrap().to_owned(),
                                        v["min_version"].as_str().unwrap().to_owned(),
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    assert_eq!(constraints, item.constraints);
                }
            }
        }
        let (min, max) = (
            py_sizes.iter().min().copied().unwrap(),
            py_sizes.iter().max().copied().unwrap(),
        );
        assert!(min >= 1000 && max <= 4096, "python tool sizes {min}..{max}");
        // Python OUTPUTS lines agree too.
        for item in g
            .model
            .items
            .iter()
            .filter(|it| it.ext == Ext::Py && !it.outputs.is_empty())
        {
            let list: Vec<String> = item.outputs.iter().map(|o| format!("\"{o}\"")).collect();
            assert!(
                item.contents
                    .contains(&format!("\nOUTPUTS = [{}]\n", list.join(", "))),
                "{}",
                item.path()
            );
        }
    }

    #[test]
    fn bundle_copies_are_the_shipped_files() {
        let t = tree_for(10, 0);
        let extractor = t
            .files
            .iter()
            .find(|f| f.path == "system/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml")
            .unwrap();
        assert!(extractor.contents.starts_with("# ryechain system bundle:"));
        for p in PRIMITIVE_IDS {
            assert!(
                t.files
                    .iter()
                    .any(|f| f.path == format!("system/.ai/tools/{p}.yaml")),
                "{p}"
            );
        }
    }

    #[test]
    fn splitmix64_reference_values() {
        // First outputs for seed 1234567 (Vigna's reference implementation).
        let mut r = Rng::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
    }
}
