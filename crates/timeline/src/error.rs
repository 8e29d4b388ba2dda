//! Errors of the timeline crate.

/// What went wrong with a position or a debugger event.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum TimelineError {
    /// A position that does not parse.
    #[error("malformed position '{0}': expected EVENT:PC:INSTANCE, as 'when' prints it (e.g. 12:0x401136:3)")]
    Malformed(String),
    /// A debugger event that does not exist.
    #[error("no debugger event {0}")]
    NoSuchEvent(u32),
}
