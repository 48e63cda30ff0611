//! L5 what the edges ask: the analysis host and its one door (`analysis::Analysis`), and the
//! pure exec planner (`exec`). No I/O.

pub mod analysis;
pub mod exec;
