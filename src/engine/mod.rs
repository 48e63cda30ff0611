//! L5 what the edges ask: the analysis host and its one door (`analysis::Analysis`), and the
//! pure exec planner (`exec`); the synthetic tree generator with the `testing` feature. No I/O.

pub mod analysis;
pub mod exec;
/// The synthetic tree generator (tests, benchmarks, `examples/gen_tree`); not part of the
/// product: only with the `testing` feature.
#[cfg(feature = "testing")]
pub mod synth;
