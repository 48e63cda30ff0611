//! ryechain: the Rye OS executor chain as a declarative rule engine over an incremental fact database.

pub mod diagnostic;
pub mod model;
pub mod parse;
pub mod render;
