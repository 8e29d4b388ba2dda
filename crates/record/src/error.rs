//! Errors of recording.

use thiserror::Error;

/// Why a recording could not be made or went wrong.
#[derive(Debug, Error)]
pub enum RecordError {
    /// Tracing the program failed.
    #[error(transparent)]
    Ptrace(#[from] hindsight_ptrace::PtraceError),
    /// Writing the trace failed.
    #[error(transparent)]
    Trace(#[from] hindsight_trace::TraceError),
    /// The instruction counter could not be set up.
    #[error(transparent)]
    Ticks(#[from] hindsight_ticks::TicksError),
    /// The in-process agent could not be set up, or the program damaged it.
    #[error(transparent)]
    Agent(#[from] hindsight_agent_host::AgentError),
}
