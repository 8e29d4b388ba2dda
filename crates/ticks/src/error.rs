//! Errors of the instruction counter.

/// Why the counter could not do something.
#[derive(Debug, thiserror::Error)]
pub enum TicksError {
    /// The file is not an ELF file we can read.
    #[error("cannot read the module's ELF file: {0}")]
    Elf(String),
    /// One module cannot be patched: its code runs uncounted (not an error of the process).
    #[error("{0}")]
    Unpatchable(String),
    /// The counter cannot be set up in the process.
    #[error("cannot set up the instruction counter: {0}")]
    Setup(String),
    /// A ptrace operation failed.
    #[error(transparent)]
    Ptrace(#[from] hindsight_ptrace::PtraceError),
}
