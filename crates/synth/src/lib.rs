//! ryechain-synth: deterministic synthetic tool trees for the tests, benchmarks and `gen_tree`
//! example of ryechain, and their writing to disk. A dev-only crate, never part of the product.
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
//!
//! The modules: `rng` (the generator's randomness), `model` (the in-memory tree and the model's
//! own lint, which the manifest is checked against), `vocab` (word lists and code snippets),
//! `render` (an item as file text), `build` (the tree builder) and `plant` (its planted problems),
//! `sign` (signing a tree), `disk` (writing one to disk, the only I/O).
// Empty without the `generator` feature (Cargo.toml says why).
#![cfg(feature = "generator")]

mod build;
mod disk;
mod model;
mod plant;
mod render;
mod rng;
mod sign;
#[cfg(test)]
mod tests;
mod vocab;

pub use disk::{TempTree, bench_tools, write_tree};
pub use sign::{SIGNED_AT, TRUST_DOC_DIR, TreeKey, sign};

use serde::{Deserialize, Serialize};

use crate::build::Gen;

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
