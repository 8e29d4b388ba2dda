//! Errors of the ptrace layer.

use thiserror::Error;

/// A failed operation on a traced process.
#[derive(Debug, Error)]
pub enum PtraceError {
    /// A system call failed; `what` says which operation, on what.
    #[error("{what}: {source}")]
    Sys {
        /// The operation, in words ("PTRACE_CONT of thread 1234").
        what: String,
        /// The kernel's error.
        source: std::io::Error,
    },
    /// The program could not be started.
    #[error("{path}: {reason}")]
    Spawn {
        /// The program's path as given.
        path: String,
        /// Why, in words.
        reason: String,
    },
    /// Memory could not be read or written.
    #[error("Cannot access memory at address {0:#x}")]
    Memory(u64),
}

impl PtraceError {
    /// Wraps the current `errno` with a description of the operation that failed.
    pub fn last(what: impl Into<String>) -> Self {
        PtraceError::Sys {
            what: what.into(),
            source: std::io::Error::last_os_error(),
        }
    }

    /// True when the thread is gone (ESRCH): it exited or was killed meanwhile.
    /// The OS error number behind this error, if there is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            PtraceError::Sys { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// True when the thread no longer exists (ESRCH).
    pub fn is_gone(&self) -> bool {
        matches!(self, PtraceError::Sys { source, .. } if source.raw_os_error() == Some(libc::ESRCH))
    }
}
