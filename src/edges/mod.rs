//! L6 the edges, the only code that touches the OS, prints or spawns: the commands (`cli`), the
//! language server (`lsp`), the MCP server (`mcp`), the process runner (`runner`), output formats
//! (`render`), the loader (`load`), the lint cache between runs (`lint_cache`), the allocator
//! policy (`memory`), and test support with the `testing` feature.

pub mod cli;
pub mod files;
pub mod lint_cache;
pub mod load;
pub mod lsp;
pub mod mcp;
pub mod memory;
pub mod render;
pub mod runner;
/// Test support (string fixtures, tree writers); only with the `testing` feature.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod testing;
