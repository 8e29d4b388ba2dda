//! Errors of the symbol layer, in gdb's words where gdb has them.

use thiserror::Error;

/// A failed symbol query or load.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum SymbolsError {
    /// The file could not be read or is not ELF.
    #[error("{path}: {reason}")]
    Load {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// `break FILE:LINE` names a file the line tables do not know.
    #[error("No source file named {0}.")]
    NoSourceFile(String),
    /// `break FILE:LINE` beyond the last line with code.
    #[error("No line {line} in file \"{file}\".")]
    LineOutOfRange {
        /// The file as given.
        file: String,
        /// The line.
        line: u32,
    },
    /// A DWARF expression or location that cannot be evaluated here.
    #[error("{0}")]
    Location(String),
    /// Memory needed by a location expression is unreadable.
    #[error(transparent)]
    Access(#[from] crate::target::AccessError),
}
