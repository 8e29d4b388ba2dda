//! Frames: how records reach the disk.
//!
//! A frame is a 32-byte header — magic, payload length, uncompressed length, record count,
//! index (in its file) of the first record it holds, crc32 of the payload, crc32 of the 28
//! header bytes before it — and a compressed payload holding the encoded records. A file is
//! a sequence of frames. The magic says how the payload is compressed: `HSFZ` zstd (what this
//! hindsight writes), `HSFR` lz4 (traces of format version 2, still read).
//!
//! Why zstd at level 1, measured on recorded event streams (the records of real programs as
//! the writer cut them, recompressed frame by frame, one core of a loaded 2-core machine):
//!
//! | stream                                   | raw      | lz4      | zstd 1   | zstd 3   |
//! |------------------------------------------|----------|----------|----------|----------|
//! | `sqlite3` query (database pages: hex)    | 17.2 MB  | 16.8 MB  | 9.3 MB   | 9.3 MB   |
//! | `python3 -c 'import json, sqlite3'`      | 1.82 MB  | 0.90 MB  | 0.72 MB  | 0.66 MB  |
//! | `ls -la /usr/bin`                        | 530 KB   | 120 KB   | 83 KB    | 78 KB    |
//!
//! zstd 1 compressed the sqlite3 stream in 140–180 ms (lz4: 60–70 ms, zstd 3: 420 ms) and
//! decompressed it in 30–40 ms (lz4: 10–15 ms): a replay reads the records of a 700 ms
//! recording 25 ms slower, while the stream shrinks by 45% (lz4 has no entropy coder: text
//! such as hex or paths barely shrinks). Levels above 1 gain little for 2–6× the time, negative
//! levels give back lz4's sizes, and larger frames (1–4 MiB) gained nothing. Each frame is
//! compressed on its own (no dictionary, no context carried over), so a frame still decodes
//! alone: a cut-off stream reads up to its last whole frame, and a replay checkpoint reopens
//! the file at any frame.
//!
//! Invariants:
//! - Every byte of a frame is covered by a checksum, so a damaged length can never pass for a
//!   cut-off frame: a frame is *truncated* only when the file really ends inside it (the
//!   recording stopped there); anything else that does not check out is *corruption*.
//! - No frame is larger than [`MAX_FRAME`], compressed or not: a larger declared length is
//!   corruption, never an allocation.
//! - A frame with a record count of 0 is a *continuation*: its bytes are the beginning of what
//!   the next frames hold (one record too large for a single frame is cut into several). The
//!   records of a chain of frames are the concatenation of their bytes, counted by the count of
//!   the chain's last frame; a chain is never longer than [`MAX_CHAIN`] bytes. Every frame of
//!   a chain carries the index of the chain's first record.
//! - A frame's first-record index is the count of the records before it in its file: a frame
//!   that was moved, repeated or left out is noticed by whoever counts ([`read_from`]'s
//!   `first`), even though each frame checks out on its own.

use std::io::Read as _;

/// The first bytes of a frame whose payload is zstd (what is written).
const MAGIC: &[u8; 4] = b"HSFZ";
/// The first bytes of a frame whose payload is lz4 (format version 2; read only).
const MAGIC_LZ4: &[u8; 4] = b"HSFR";
/// zstd's compression level for frames (see the module's header for the measurements).
pub const LEVEL: i32 = 1;
/// Size of a frame header.
pub const HEADER: usize = 32;
/// No frame is larger than this, compressed or not.
pub const MAX_FRAME: usize = 64 << 20;
/// The writer cuts what it writes into frames of at most this many uncompressed bytes (the
/// compressor may grow incompressible data a little: this leaves room under [`MAX_FRAME`]).
pub const CHUNK: usize = 32 << 20;
/// No chain of continued frames holds more than this many bytes (uncompressed).
pub const MAX_CHAIN: usize = 4 << 30;

/// Makes the frames holding `raw`, the encoding of `count` records (`count` ≥ 1) that come
/// after `first` records in their file: one frame, or a chain of continued frames when `raw`
/// is larger than [`CHUNK`].
pub fn encode(raw: &[u8], count: u32, first: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunks = raw.chunks(CHUNK).peekable();
    if chunks.peek().is_none() {
        encode_one(&mut out, &[], count, first);
    }
    while let Some(c) = chunks.next() {
        let last = chunks.peek().is_none();
        encode_one(&mut out, c, if last { count } else { 0 }, first);
    }
    out
}

/// Appends one frame holding `raw` to `out`.
fn encode_one(out: &mut Vec<u8>, raw: &[u8], count: u32, first: u64) {
    // zstd fails only when it cannot allocate its context: the frame is then lz4, which
    // every reader of this format reads too.
    let (magic, payload) = match zstd::bulk::compress(raw, LEVEL) {
        Ok(p) => (MAGIC, p),
        Err(_) => (MAGIC_LZ4, lz4_flex::compress(raw)),
    };
    let start = out.len();
    out.extend_from_slice(magic);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    let head_crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&head_crc.to_le_bytes());
    out.extend_from_slice(&payload);
}

/// What reading frames at some position gave.
#[derive(Debug)]
pub enum Read {
    /// Whole frames (one, or a chain): their records' bytes, the records' count, and how
    /// many bytes of the file they took. Their first record is the one that was expected.
    Frame(Vec<u8>, u32, u64),
    /// Nothing more: the file ends between frames.
    End,
    /// The file ends inside a frame.
    Truncated,
}

/// Why frames could not be read: a description (without position) and the offset, relative to
/// where reading started, of the frame at fault.
#[derive(Debug)]
pub enum FrameError {
    /// The bytes are not a valid frame.
    Corrupt {
        /// Offset of the bad frame from where reading started.
        at: u64,
        /// What is wrong ("checksum mismatch", ...).
        what: String,
    },
    /// Reading the file failed.
    Io(std::io::Error),
}

/// Reads as many bytes as there are, up to `buf.len()`; returns how many.
fn fill(r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn word(b: &[u8], i: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[i..i + 4]);
    u32::from_le_bytes(w)
}

/// One frame as read: its bytes, its count (0: continued), its first record's index, its
/// length in the file.
enum One {
    Frame(Vec<u8>, u32, u64, u64),
    End,
    Truncated,
}

fn read_one(r: &mut impl std::io::Read, at: u64) -> Result<One, FrameError> {
    let bad = |what: &str| FrameError::Corrupt {
        at,
        what: what.to_string(),
    };
    let mut head = [0u8; HEADER];
    let n = fill(r, &mut head).map_err(FrameError::Io)?;
    if n == 0 {
        return Ok(One::End);
    }
    if n < HEADER {
        return Ok(One::Truncated);
    }
    let zstd = match &head[..4] {
        m if m == MAGIC => true,
        m if m == MAGIC_LZ4 => false,
        _ => return Err(bad("not a frame (bad magic)")),
    };
    if crc32fast::hash(&head[..28]) != word(&head, 28) {
        return Err(bad("checksum mismatch in the frame header"));
    }
    let (len, raw_len, count, first, crc) = (
        word(&head, 4) as usize,
        word(&head, 8) as usize,
        word(&head, 12),
        u64::from(word(&head, 16)) | u64::from(word(&head, 20)) << 32,
        word(&head, 24),
    );
    if len > MAX_FRAME || raw_len > MAX_FRAME {
        return Err(bad(&format!(
            "frame lengths {len}/{raw_len} exceed the limit of {MAX_FRAME}"
        )));
    }
    let mut payload = Vec::new();
    let got = r
        .by_ref()
        .take(len as u64)
        .read_to_end(&mut payload)
        .map_err(FrameError::Io)?;
    if got < len {
        return Ok(One::Truncated);
    }
    if crc32fast::hash(&payload) != crc {
        return Err(bad("checksum mismatch"));
    }
    let raw = if zstd {
        // Bounded: more than the declared length is an error, not an allocation.
        zstd::bulk::decompress(&payload, raw_len)
            .map_err(|e| bad(&format!("cannot decompress (zstd): {e}")))?
    } else {
        lz4_flex::decompress(&payload, raw_len)
            .map_err(|e| bad(&format!("cannot decompress (lz4): {e}")))?
    };
    if raw.len() != raw_len {
        return Err(bad("decompressed length differs from the declared one"));
    }
    Ok(One::Frame(raw, count, first, (HEADER + len) as u64))
}

/// Reads the next frame (or chain of continued frames) from `r`, which must hold the records
/// from index `first` on; `at` is its offset in the file, for error messages only.
pub fn read_from(r: &mut impl std::io::Read, at: u64, first: u64) -> Result<Read, FrameError> {
    let mut raw: Vec<u8> = Vec::new();
    let mut taken = 0u64;
    loop {
        match read_one(r, at + taken)? {
            One::End if taken == 0 => return Ok(Read::End),
            // A chain cut off: the recording stopped while writing it.
            One::End | One::Truncated => return Ok(Read::Truncated),
            One::Frame(bytes, count, from, len) => {
                if from != first {
                    return Err(FrameError::Corrupt {
                        at: at + taken,
                        what: format!(
                            "a frame out of place: it holds the records from {from} on, {first} was expected"
                        ),
                    });
                }
                taken += len;
                if raw.is_empty() && count != 0 {
                    return Ok(Read::Frame(bytes, count, taken));
                }
                if raw.len() + bytes.len() > MAX_CHAIN {
                    return Err(FrameError::Corrupt {
                        at,
                        what: format!("chain of frames longer than {MAX_CHAIN} bytes"),
                    });
                }
                raw.extend_from_slice(&bytes);
                if count != 0 {
                    return Ok(Read::Frame(raw, count, taken));
                }
            }
        }
    }
}

/// Reads the frame (or chain) at the start of `data`.
pub fn decode(data: &[u8]) -> Result<Read, FrameError> {
    read_from(&mut &data[..], 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(raw: &[u8], count: u32) -> Vec<u8> {
        encode(raw, count, 0)
    }

    #[test]
    fn frames_round_trip() {
        let f = frame(b"some records", 3);
        match decode(&f) {
            Ok(Read::Frame(raw, 3, len)) => {
                assert_eq!(raw, b"some records");
                assert_eq!(len as usize, f.len());
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(decode(&[]), Ok(Read::End)));
        for cut in 1..f.len() {
            assert!(
                matches!(decode(&f[..cut]), Ok(Read::Truncated)),
                "cut {cut}"
            );
        }
    }

    /// A frame with right checksums around `payload`, declared as `raw_len` bytes.
    fn forged(magic: &[u8; 4], payload: &[u8], raw_len: u32) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(magic);
        f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        f.extend_from_slice(&raw_len.to_le_bytes());
        f.extend_from_slice(&1u32.to_le_bytes());
        f.extend_from_slice(&0u64.to_le_bytes());
        f.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        let c = crc32fast::hash(&f);
        f.extend_from_slice(&c.to_le_bytes());
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn a_valid_checksum_over_a_bad_payload_is_an_error() {
        // Checksums right, payload not the compression of its declared length.
        for magic in [MAGIC, MAGIC_LZ4] {
            let f = forged(magic, &[0xf0u8, 1, 2], 1000);
            assert!(matches!(decode(&f), Err(FrameError::Corrupt { at: 0, .. })));
        }
        // Valid zstd of more bytes than declared: refused, not decoded past the length.
        let big = zstd::bulk::compress(&[7u8; 5000], LEVEL).unwrap();
        match decode(&forged(MAGIC, &big, 1000)) {
            Err(FrameError::Corrupt { what, .. }) => assert!(what.contains("zstd"), "{what}"),
            other => panic!("{other:?}"),
        }
        // And of fewer.
        let small = zstd::bulk::compress(&[7u8; 10], LEVEL).unwrap();
        assert!(matches!(
            decode(&forged(MAGIC, &small, 1000)),
            Err(FrameError::Corrupt { .. })
        ));
    }

    #[test]
    fn lz4_frames_of_format_2_still_read() {
        let raw = b"records of an older trace, records of an older trace".to_vec();
        let f = forged(MAGIC_LZ4, &lz4_flex::compress(&raw), raw.len() as u32);
        match decode(&f) {
            Ok(Read::Frame(back, 1, len)) => {
                assert_eq!(back, raw);
                assert_eq!(len as usize, f.len());
            }
            other => panic!("{other:?}"),
        }
        // What is written now is zstd.
        assert_eq!(&frame(&raw, 1)[..4], MAGIC);
    }

    #[test]
    fn absurd_lengths_are_refused_before_any_allocation() {
        let mut f = Vec::new();
        f.extend_from_slice(MAGIC);
        f.extend_from_slice(&u32::MAX.to_le_bytes());
        f.extend_from_slice(&u32::MAX.to_le_bytes());
        f.extend_from_slice(&1u32.to_le_bytes());
        f.extend_from_slice(&0u64.to_le_bytes());
        f.extend_from_slice(&0u32.to_le_bytes());
        let c = crc32fast::hash(&f);
        f.extend_from_slice(&c.to_le_bytes());
        match decode(&f) {
            Err(FrameError::Corrupt { what, .. }) => assert!(what.contains("limit"), "{what}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_cut_off_chain_is_a_truncation() {
        let raw: Vec<u8> = (0..CHUNK + 100).map(|i| (i * 7 % 251) as u8).collect();
        let f = encode(&raw, 1, 0);
        match decode(&f) {
            Ok(Read::Frame(back, 1, len)) => {
                assert!(back == raw);
                assert_eq!(len as usize, f.len());
            }
            other => panic!("{other:?}"),
        }
        // Only the first (continued) frame: the chain is cut off.
        let first = HEADER + word(&f, 4) as usize;
        assert!(matches!(decode(&f[..first]), Ok(Read::Truncated)));
    }

    #[test]
    fn a_frame_out_of_place_is_an_error() {
        let mut f = encode(b"a", 1, 0);
        let second = f.len() as u64;
        f.extend_from_slice(&encode(b"b", 2, 1));
        let mut r = &f[..];
        assert!(matches!(read_from(&mut r, 0, 0), Ok(Read::Frame(_, 1, _))));
        assert!(matches!(
            read_from(&mut r, second, 1),
            Ok(Read::Frame(_, 2, _))
        ));
        // The second frame where the first was expected (the first one lost).
        let mut r = &f[second as usize..];
        match read_from(&mut r, second, 0) {
            Err(FrameError::Corrupt { at, what }) => {
                assert_eq!(at, second);
                assert!(what.contains("out of place"), "{what}");
            }
            other => panic!("{other:?}"),
        }
    }
}
