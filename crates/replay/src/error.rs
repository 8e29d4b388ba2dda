//! Errors of replay.

use thiserror::Error;

/// Why a replay could not start or go on.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// Reading the trace failed.
    #[error(transparent)]
    Trace(#[from] hindsight_trace::TraceError),
    /// Controlling the replaying process failed.
    #[error(transparent)]
    Control(#[from] hindsight_control::ControlError),
    /// A ptrace operation failed.
    #[error(transparent)]
    Ptrace(#[from] hindsight_ptrace::PtraceError),
    /// The instruction counter failed.
    #[error(transparent)]
    Ticks(#[from] hindsight_ticks::TicksError),
    /// The in-process agent failed.
    #[error(transparent)]
    Agent(#[from] hindsight_agent_host::AgentError),
    /// The trace cannot be replayed as asked (what and why, in words).
    #[error("{0}")]
    Unsupported(String),
}
