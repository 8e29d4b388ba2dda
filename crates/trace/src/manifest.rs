//! The manifest: the list of every file of a trace with its size and checksum, and how the
//! recording ended. It is the second frame of the `header` file, which the writer replaces
//! whole (written under another name, then renamed) whenever the list changes: at the start,
//! after each copied file, about once a second while events are written, and at the end.
//!
//! Invariants:
//! - A file copy is listed before any event can name it, with its final size and sum.
//! - A growing file (an event stream, the process journal) is listed with the size and sum of
//!   what had reached the disk when the manifest was written: while [`Ending::Recording`],
//!   the file may have grown since (the recorder was killed after that), never shrunk; once
//!   the recording has ended, it is exactly as listed.

use std::path::PathBuf;

use crate::checksum::Sum;
use crate::event::{FileId, Summary};

/// How the recording ended, as far as the trace knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It has not ended: still being recorded, or cut off (the recorder was killed).
    Recording,
    /// The program ended and everything was written.
    Finished(Summary),
    /// The recorder stopped early, for this reason; everything before was written.
    Abandoned(String),
}

/// One file of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// `processes`: the journal of processes, execs and ends.
    Processes,
    /// `events/<pid>`: the events of a process.
    Events(i32),
    /// `files/<name>`: the copy of a file the program mapped (`name` is `<id>-<basename>`).
    Copy(FileId, String),
    /// `links`: the order of every process's events and the messages between processes
    /// (see [`crate::links`]; traces recorded before it existed have none).
    Links,
}

impl Part {
    /// Its path, relative to the trace directory.
    pub fn path(&self) -> PathBuf {
        match self {
            Part::Processes => PathBuf::from("processes"),
            Part::Events(pid) => PathBuf::from("events").join(pid.to_string()),
            Part::Copy(_, name) => PathBuf::from("files").join(name),
            Part::Links => PathBuf::from("links"),
        }
    }
}

/// A file as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Which file.
    pub part: Part,
    /// Its size and checksum (for a growing file: of the prefix that had been written).
    pub sum: Sum,
    /// How many records that prefix holds (0 for a file copy).
    pub records: u64,
}

/// Every file of a trace, and how the recording ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// How the recording ended.
    pub ending: Ending,
    /// The files.
    pub parts: Vec<Listed>,
}

impl Manifest {
    /// True once the recording has ended (files are exactly as listed).
    pub fn is_final(&self) -> bool {
        !matches!(self.ending, Ending::Recording)
    }

    /// The listing of `part`.
    pub fn find(&self, part: &Part) -> Option<&Listed> {
        self.parts.iter().find(|l| &l.part == part)
    }
}
