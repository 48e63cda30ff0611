//! L0 the vocabulary every layer speaks: spans, spaces and metadata values (`model`),
//! diagnostics and findings, what the build compiled in (`embedded`), the user-facing texts
//! (`message`), where a file sits (`place`), Python's spelling of values (`pyrepr`) and the
//! execution errors. No salsa, no I/O.

pub mod diagnostic;
pub mod embedded;
pub mod error;
pub mod message;
pub mod model;
pub mod place;
pub mod pyrepr;
