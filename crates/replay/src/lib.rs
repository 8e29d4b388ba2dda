//! Layer 6: replay. Re-executes a recorded process with the recorded inputs and no external
//! effect, through the same execution control as a live session (`hindsight-control`), so
//! that breakpoints, stepping, watchpoints and every inspection command work on a replay.

pub mod approach;
pub mod checkpoint;
pub mod copies;
pub mod divergence;
pub mod error;
pub mod gate;
pub mod memfiles;
pub mod replayer;

pub use checkpoint::Checkpoint;
pub use divergence::Divergence;
pub use error::ReplayError;
pub use replayer::{HeldOutput, ReplayOptions, ReplayStop, Replayer, Silent};

/// Whether `pc` is in hindsight's in-process agent (its stubs and code, at the fixed address
/// the agent is loaded at in recording and replay alike): no instruction of the program.
pub(crate) fn is_agent_code(pc: u64) -> bool {
    use hindsight_agent::abi::{BASE, MAX_SPAN};
    (BASE..BASE + MAX_SPAN).contains(&pc)
}
