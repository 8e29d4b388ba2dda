//! Time in a replay: positions that name one instruction instance, the debugger-event engine
//! (RDB's taxonomy), and where reverse steps stop (gdb's stepping rules, backwards).
//!
//! This crate holds the parts of time travel that are pure logic — no process, no trace — so
//! that they can be tested on their own; the front end drives the replay with them (forward
//! scans from a checkpoint, then a seek to the instant they chose).
//!
//! Time here is counted in recorded events and, where the trace has them, in the running
//! thread's ticks (the instruction counter): between two events only one thread runs and what
//! it does is determined, so "the k-th arrival at pc after event e, ticks t" names one
//! instruction instance exactly.

pub mod engine;
pub mod error;
pub mod position;
pub mod stepper;
pub mod thinning;

pub use engine::{Action, DebuggerEvent, Engine, EventId, Life, Moment, Spec};
pub use error::TimelineError;
pub use position::Position;
