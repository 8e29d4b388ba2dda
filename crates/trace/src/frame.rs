//! Frames: how records reach the disk. A frame is a 20-byte header — magic `HSFR`, payload
//! length, uncompressed length, record count, crc32 of the payload — and an lz4 payload holding
//! `count` encoded records. A file is a sequence of frames; a frame cut off at the end of the
//! file is a truncation (the recording stopped there), anything else that does not check out is
//! corruption.

use crate::encode::DecodeError;

const MAGIC: &[u8; 4] = b"HSFR";
/// Size of a frame header.
pub const HEADER: usize = 20;
/// No frame is larger than this, compressed or not: a length beyond it is corruption, never an
/// allocation.
pub const MAX_FRAME: usize = 64 << 20;

/// Makes a frame of `count` records encoded in `raw`.
pub fn encode(raw: &[u8], count: u32) -> Vec<u8> {
    let payload = lz4_flex::compress(raw);
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// What reading a frame at some offset gave.
#[derive(Debug)]
pub enum Read {
    /// A whole frame: its records' bytes, their count, and the frame's total length.
    Frame(Vec<u8>, u32, usize),
    /// Nothing more.
    End,
    /// The file ends inside the frame.
    Truncated,
}

fn word(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Reads the frame at the start of `data`.
pub fn decode(data: &[u8]) -> Result<Read, DecodeError> {
    if data.is_empty() {
        return Ok(Read::End);
    }
    if data.len() < HEADER {
        return Ok(Read::Truncated);
    }
    if &data[..4] != MAGIC {
        return Err(DecodeError("not a frame (bad magic)".into()));
    }
    let (len, raw_len, count, crc) = (
        word(data, 4) as usize,
        word(data, 8) as usize,
        word(data, 12),
        word(data, 16),
    );
    if len > MAX_FRAME || raw_len > MAX_FRAME {
        return Err(DecodeError(format!("frame length {len}/{raw_len} is absurd")));
    }
    if data.len() < HEADER + len {
        return Ok(Read::Truncated);
    }
    let payload = &data[HEADER..HEADER + len];
    if crc32fast::hash(payload) != crc {
        return Err(DecodeError("checksum mismatch".into()));
    }
    let raw = lz4_flex::decompress(payload, raw_len)
        .map_err(|e| DecodeError(format!("cannot decompress: {e}")))?;
    if raw.len() != raw_len {
        return Err(DecodeError("decompressed length differs".into()));
    }
    Ok(Read::Frame(raw, count, HEADER + len))
}
