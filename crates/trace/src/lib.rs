//! Layer 4: the recording on disk.
//!
//! A trace is a directory, readable by its owner only: `header` (magic and format version in
//! plain bytes, so that another version is refused before anything else is decoded, then the
//! encoded [`Header`] and the [`manifest::Manifest`]: every other file with its size and
//! checksum, and how the recording ended), `processes` (the processes, their execs and ends),
//! `events/<pid>` (each process's [`Event`]s), `links` (the order of all events and the
//! messages between processes, [`links`]) and `files/<id>-<name>` (copies of the files the
//! program mapped, shared between traces when they are the same: [`store`]). Streams are
//! sequences of checksummed zstd frames ([`frame`]), so a
//! recording cut off by a crash still reads up to its last whole frame; whatever else does
//! not match the manifest is an error naming the file.

pub mod checksum;
pub mod copies;
pub mod encode;
pub mod error;
pub mod event;
pub mod frame;
pub mod links;
pub mod manifest;
pub mod reader;
pub mod store;
pub mod writer;

pub use copies::Store;
pub use error::TraceError;
pub use event::*;
pub use links::{Batch, Channel, ChannelKind, Direction, Link, Links, Transfer};
pub use manifest::{Ending, Listed, Manifest, Part};
pub use reader::{read_header, Checked, EventStream, Sizes, TraceReader};
pub use store::{default_root, list, new_trace_path, resolve, set_latest};
pub use writer::TraceWriter;

/// The version of the format this hindsight writes (3: frames compressed with zstd; 2: every
/// file listed with its checksum in the header, frames numbered, asynchronous positions with
/// their tick counts, frames in lz4).
pub const FORMAT_VERSION: u32 = 3;

/// The oldest version this hindsight reads (2 differs from 3 only in its frames' compression,
/// which each frame's magic names).
pub const OLDEST_FORMAT_VERSION: u32 = 2;

/// The first bytes of a trace's `header` file.
pub const MAGIC: &[u8; 16] = b"HINDSIGHT-TRACE\n";
