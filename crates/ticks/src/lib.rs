pub mod code;
pub mod counter;
pub mod error;
pub mod scan;
pub use error::TicksError;
pub mod assemble;
pub mod flags;
pub mod plan;

/// The trace header's name for the clock this crate counts (its tick definition and
/// patching): a trace recorded with another one is replayed without it.
pub const CLOCK: &str = "ticks-1";
