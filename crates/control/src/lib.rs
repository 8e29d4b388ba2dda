//! Execution control of a live process, all-stop: when one thread stops, every thread stops;
//! when the user resumes, every thread runs.
//!
//! This is the driver of layer 3: it executes what `hindsight-breakpoints` decides (the
//! step-over protocol, displaced-stepping plans, zombie classification) with the calls of
//! `hindsight-ptrace`. It knows no symbols and no user commands: whether a breakpoint hit stops
//! the program is asked of a [`StopHook`] that the front end implements (conditions, ignore
//! counts, step-resume traps).
//!
//! Invariants:
//! - Between two calls of [`Inferior::resume`], every known thread is stopped under ptrace.
//! - A site's original byte is restored *before* the site is dropped (seed 004), so a trap at an
//!   address that has no site is a zombie exactly when memory no longer holds an int3 there.
//! - Stops collected while stopping the other threads are queued, never lost, and handled before
//!   any new event on the next resume.

pub mod codemap;
pub mod error;
pub mod event;
pub mod inferior;
pub mod resume;
pub mod sites;
mod threads;

pub use codemap::CodeMap;
pub use error::ControlError;
pub use event::{stops_by_default, Notification, StopEvent, StopHook};
pub use inferior::{DebugRegs, Inferior, StepOverMode, StepOverStats, ThreadInfo};
pub use resume::{saved_register_in_handler_frame, Resume};
pub use sites::SiteTable;
