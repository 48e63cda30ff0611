//! ryechain: the Rye OS executor chain as a declarative rule engine over an incremental fact database.

pub mod analysis;
pub mod cli;
pub mod config;
pub mod db;
pub mod diagnostic;
pub mod embedded;
pub mod error;
pub mod exec;
pub mod integrity;
pub mod lint_cache;
pub mod load;
pub mod lsp;
pub mod memory;
pub mod message;
pub mod model;
pub mod parse;
pub mod place;
pub mod pyrepr;
pub mod render;
pub mod resolve;
pub mod rules;
pub mod runner;
/// The synthetic tree generator (tests, benchmarks, `examples/gen_tree`); not part of the
/// product: only with the `testing` feature.
#[cfg(feature = "testing")]
pub mod synth;
pub mod system;
/// Test support (string fixtures, tree writers); only with the `testing` feature.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod testing;
