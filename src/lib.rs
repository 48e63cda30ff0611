//! ryechain: the Rye OS executor chain as a declarative rule engine over an incremental fact database.
//!
//! One folder per layer, lowest first (ARCHITECTURE.md, `tests/tidy.rs`): `base` (L0 vocabulary),
//! `system` (L1), `db` (L2 inputs), `facts` (L3 queries), `rules` (L4), `engine` (L5: analysis,
//! the exec planner), `edges` (L6: CLI, language server, runner, rendering, loading, caching).
//!
//! Every layer is private to the crate; what this file exports below is the API: the command line
//! ([`main`]), the analysis host and its read-only view ([`Host`], [`Analysis`], [`Snapshot`]), the
//! loader that feeds it ([`load()`]), and the plain data they answer in. The tests, benchmarks,
//! fuzz targets and the synthetic-tree generator (`crates/synth`) build with the `testing`
//! feature, which opens the layers (and the root aliases `ryechain::resolve`, `crate::model`, …)
//! to them; an installed binary is built without it.

/// `use` re-exports private to the crate, opened (`pub`) to tests, benchmarks and fuzz targets
/// under the `testing` feature.
macro_rules! internal {
    ($(use $($path:ident)::+ :: { $($leaf:ident),+ $(,)? };)*) => {$(
        #[cfg(feature = "testing")] pub use $($path)::+::{$($leaf),+};
        #[cfg(not(feature = "testing"))] #[allow(unused_imports)] pub(crate) use $($path)::+::{$($leaf),+};
    )*};
}

// The layers: private to the crate, opened to the tests by the `testing` feature. Written out
// (not through a macro) so that rustfmt, which follows `mod` items only, formats every file.
#[cfg(feature = "testing")]
pub mod base;
#[cfg(not(feature = "testing"))]
pub(crate) mod base;
#[cfg(feature = "testing")]
pub mod db;
#[cfg(not(feature = "testing"))]
pub(crate) mod db;
#[cfg(feature = "testing")]
pub mod edges;
#[cfg(not(feature = "testing"))]
pub(crate) mod edges;
#[cfg(feature = "testing")]
pub mod engine;
#[cfg(not(feature = "testing"))]
pub(crate) mod engine;
#[cfg(feature = "testing")]
pub mod facts;
#[cfg(not(feature = "testing"))]
pub(crate) mod facts;
#[cfg(feature = "testing")]
pub mod rules;
#[cfg(not(feature = "testing"))]
pub(crate) mod rules;
#[cfg(feature = "testing")]
pub mod system;
#[cfg(not(feature = "testing"))]
pub(crate) mod system;

// Each module of a layer, also at the crate root (`crate::resolve`, and for tests
// `ryechain::resolve`).
internal! {
    use base::{diagnostic, embedded, error, message, model, place, pyrepr};
    use edges::{cli, lint_cache, load, lsp, memory, render, runner};
    use engine::{analysis, exec};
    use facts::{config, integrity, parse, resolve};
}

/// Test support (string fixtures, tree writers); only with the `testing` feature.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub use edges::testing;

// The API.
pub use base::diagnostic::{Diagnostic, Severity, Summary};
/// The reference's library helpers, not on the executor path (§10.6, §14.51, §14.53): the
/// canonical-JSON integrity hashes of a tool, directive and knowledge item, and the error classes
/// of a tool's execution.
pub use base::error::ExecutionError;
pub use base::model::{Space, SpaceKind};
pub use db::Settings;
pub use edges::cli::main;
pub use edges::load::{SpaceSource, SpaceSpec, load};
pub use engine::analysis::{Analysis, Host, Snapshot};
pub use facts::integrity::canonical::{
    canonical_hash, canonical_json, directive_integrity, knowledge_integrity, tool_integrity,
};
