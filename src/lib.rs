//! ryechain: the Rye OS executor chain as a declarative rule engine over an incremental fact database.

pub mod analysis;
pub mod cli;
pub mod config;
pub mod db;
pub mod diagnostic;
pub mod error;
pub mod exec;
pub mod integrity;
pub mod load;
pub mod model;
pub mod parse;
pub mod render;
pub mod resolve;
pub mod rules;
pub mod synth;
pub mod system;
#[doc(hidden)]
pub mod testing;
