//! Layer 4: the recording on disk.
//!
//! A trace is a directory: `header` (magic and format version in plain bytes, so that a newer
//! version is refused before anything else is decoded, then the encoded [`Header`]),
//! `processes` (the processes, their execs and ends), `events/<pid>` (each process's
//! [`Event`]s), `files/<id>-<name>` (copies of the files the program mapped), `summary` (only
//! when the recording ended normally) and `incomplete` (while recording, and after a recording
//! that was cut short, with the reason). Streams are sequences of checksummed lz4 frames
//! ([`frame`]), so a recording cut off by a crash still reads up to its last whole frame.

pub mod encode;
pub mod error;
pub mod event;
pub mod frame;
pub mod reader;
pub mod store;
pub mod writer;

pub use error::TraceError;
pub use event::*;
pub use reader::{read_header, EventStream, TraceReader};
pub use store::{default_root, list, new_trace_path, resolve, set_latest};
pub use writer::TraceWriter;

/// The version of the format this hindsight writes (and the newest it reads).
pub const FORMAT_VERSION: u32 = 2;

/// The first bytes of a trace's `header` file.
pub const MAGIC: &[u8; 16] = b"HINDSIGHT-TRACE\n";
