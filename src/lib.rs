//! ryechain: the Rye OS executor chain as a declarative rule engine over an incremental fact database.
//!
//! One folder per layer, lowest first (ARCHITECTURE.md, `tests/tidy.rs`): `base` (L0 vocabulary),
//! `system` (L1), `db` (L2 inputs), `facts` (L3 queries), `rules` (L4), `engine` (L5: analysis,
//! the exec planner), `edges` (L6: CLI, language server, runner, rendering, loading, caching). Each
//! module is also reachable at the crate root (`ryechain::model`, `crate::resolve`, …).

pub mod base;
pub mod db;
pub mod edges;
pub mod engine;
pub mod facts;
pub mod rules;
pub mod system;

pub use base::{diagnostic, embedded, error, message, model, place, pyrepr};
pub use edges::{cli, lint_cache, load, lsp, memory, render, runner};
pub use engine::{analysis, exec};
pub use facts::{config, integrity, parse, resolve};

/// Test support (string fixtures, tree writers); only with the `testing` feature.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub use edges::testing;
/// The synthetic tree generator (tests, benchmarks, `examples/gen_tree`); not part of the
/// product: only with the `testing` feature.
#[cfg(feature = "testing")]
pub use engine::synth;
