//! Errors of the trace layer: each says what and where, in one line.

use std::path::PathBuf;
use thiserror::Error;

/// A trace could not be written or read.
#[derive(Debug, Error)]
pub enum TraceError {
    /// A file operation failed.
    #[error("{}: {what}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The directory to create exists already.
    #[error("{}: already exists (a trace is never overwritten)", .0.display())]
    Exists(PathBuf),
    /// Not a trace, or a damaged one.
    #[error("{}: {what}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        what: String,
    },
    /// Written by a newer hindsight.
    #[error("trace {} was written by a newer hindsight (format version {found}; this one reads up to {supported})", path.display())]
    TooNew {
        /// The trace.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// Ours.
        supported: u32,
    },
    /// Written by an older hindsight, in a format this one no longer reads.
    #[error("trace {} was written by an older hindsight (format version {found}; this one reads versions {supported} and later): record it again", path.display())]
    TooOld {
        /// The trace.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// The oldest version this one reads.
        supported: u32,
    },
    /// No such trace, or no trace at all.
    #[error("{0}")]
    NotFound(String),
}

impl TraceError {
    pub(crate) fn io(
        path: impl Into<PathBuf>,
        what: impl Into<String>,
        source: std::io::Error,
    ) -> Self {
        TraceError::Io {
            path: path.into(),
            what: what.into(),
            source,
        }
    }
}
