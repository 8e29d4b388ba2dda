//! The debugger itself, beneath every front end (DESIGN.md, layer 8): a [`Session`] holds a
//! program — live (`hindsight debug`) or replayed from a recording — with its symbols, the
//! user's breakpoints, watchpoints and debugger events, and the time-travel state; its calls
//! move the program forward and backward and answer questions about threads, frames,
//! positions and values.
//!
//! Invariants:
//! - Nothing here prints. Every answer is data: a motion returns the [`Stop`] it ended with,
//!   a query its values, a failure an error whose text is gdb's one-line message. What
//!   happens on the way and is not the end of a motion (threads, a dprintf's text, an exec)
//!   goes to the front end's [`Observer`] as it happens.
//! - Calls go only downward (control, replay, symbols, breakpoints, timeline, trace). The
//!   front ends — the command line, the gdb remote protocol server, the Debug Adapter
//!   Protocol server — are siblings above, none reading another's text.
//!
//! Modules: [`session`] (the session and its program), [`motion`] (every way to move, forward
//! and backward), [`stop`] (stops as data), [`observer`] (what a front end hears during a
//! motion), [`breakpoints`], [`frames`], [`values`], [`signals`], [`remote`] (the surface of
//! machine-level front ends: registers, memory, breakpoints by address), [`messages`] (the
//! other recorded processes at the consistent state around a stop), [`inferiors`] (the
//! processes of a replayed tree as gdb's inferiors, placed at that state). Internal: `hook`
//! (what stops a running program), `stepping` (line and instruction steps), `travel` (scans
//! and seeks through a replay: reverse motions, positions, checkpoints), `context` (the
//! expression evaluator's view of the process), `printf`, `linkmap`, `tls`.

pub mod breakpoints;
mod call;
mod context;
pub mod frames;
mod hook;
pub mod inferiors;
mod linkmap;
pub mod messages;
pub mod motion;
pub mod observer;
mod printf;
pub mod remote;
pub mod session;
pub mod signals;
mod stepping;
pub mod stop;
mod tls;
mod travel;
pub mod values;

pub use hindsight_breakpoints::table::{BreakpointKind, WatchAccess};
pub use hindsight_control::{StepOverMode, ThreadInfo};
pub use hindsight_ptrace::Tid;
pub use hindsight_timeline::Position;
pub use motion::{LineStep, Place};
pub use observer::{Notice, Observer, Quiet};
pub use session::{Interrupter, Session};
pub use stop::{Stop, StopReason};
pub use values::Variable;

/// A motion stopped because the user interrupted it; `tid` is the thread that was about to
/// run (the session turns this into a [`Stop`] where the replay stands).
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub(crate) struct Interrupted {
    pub(crate) tid: Option<Tid>,
}
