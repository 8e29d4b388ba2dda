//! Errors of execution control.

use thiserror::Error;

/// A failed control operation.
#[derive(Debug, Error)]
pub enum ControlError {
    /// The underlying ptrace operation failed.
    #[error(transparent)]
    Ptrace(#[from] hindsight_ptrace::PtraceError),
    /// The program is not running (never started, or already exited).
    #[error("The program is not being run.")]
    NotRunning,
    /// A thread number or id that does not exist.
    #[error("Invalid thread ID: {0}")]
    NoThread(String),
    /// A breakpoint or watchpoint could not be inserted.
    #[error("{0}")]
    Insert(String),
    /// The step-over protocol met an event it forbids (a tracer bug, reported, not hidden).
    #[error("step-over protocol: {0}")]
    Protocol(#[from] hindsight_breakpoints::stepover::ProtocolError),
}
