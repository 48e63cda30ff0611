//! L3 the facts of a workspace, as salsa queries over the inputs: parsed headers (`parse`),
//! resolution, chains and the executor graph (`resolve`), the merged config (`config`), and
//! signatures, the trust store and lockfiles (`integrity`). Pure.

pub mod config;
pub mod integrity;
pub mod parse;
pub mod resolve;
pub mod search;
