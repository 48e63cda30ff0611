//! L5 execution in the core (§12.3): turning salsa facts, caller parameters and facts about the
//! machine (gathered at the edge on demand) into a pure `ExecutionPlan`, and a finished process
//! into the seed-003 response. Nothing here spawns, reads files or reads the environment: what the
//! plan needs from the machine it asks for as `facts::Need`s, which the edge answers.

pub mod facts;
