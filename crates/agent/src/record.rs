//! The records of the syscall buffer: one per buffered call, written by the agent
//! (recording) or by hindsight (replay), read by the other side.
//!
//! A record is a whole number of 8-byte words, little-endian:
//!
//! ```text
//!   0  u32 size       bytes of the whole record
//!   4  u32 nr         syscall number
//!   8  u32 writes     how many memory writes follow
//!  12  u32 0
//!  16  u64 args[6]
//!  64  i64 result
//!  72  u64 check      checksum of the record with this field 0
//!  80  (u64 addr, u64 len) per write
//!      the bytes of each write, each padded with zeros to 8
//! ```
//!
//! The checksum is how a program that scribbles over the buffer is caught: hindsight
//! checks it when it drains a record, the agent when it replays one.

/// Bytes of a record before its writes.
pub const HEADER_LEN: usize = 80;
/// Bytes of one write's (address, length) pair.
pub const WRITE_LEN: usize = 16;
/// The most writes one record may have.
pub const MAX_WRITES: usize = 64;

const CHECK_AT: usize = 72;

/// `n` rounded up to a multiple of 8.
pub const fn pad8(n: usize) -> usize {
    (n + 7) & !7
}

fn put_u32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(buf: &mut [u8], at: usize, v: u64) {
    buf[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    u32::from_le_bytes(b)
}

fn get_u64(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

/// A 64-bit checksum of `data` (its length a multiple of 8): four independent lanes, so
/// that it runs at about the speed of memory.
pub fn checksum(data: &[u8]) -> u64 {
    const P: [u64; 4] = [
        0x9e37_79b9_7f4a_7c15,
        0xc2b2_ae3d_27d4_eb4f,
        0x1656_67b1_9e37_79f9,
        0x85eb_ca77_c2b2_ae63,
    ];
    let mut h = P;
    let mix = |h: u64, w: u64, p: u64| (h ^ w).wrapping_mul(p).rotate_left(29);
    let mut chunks = data.chunks_exact(32);
    for c in &mut chunks {
        for (i, lane) in h.iter_mut().enumerate() {
            *lane = mix(*lane, get_u64(c, i * 8), P[i]);
        }
    }
    for (i, w) in chunks.remainder().chunks_exact(8).enumerate() {
        h[i] = mix(h[i], get_u64(w, 0), P[i]);
    }
    let mut out = data.len() as u64;
    for (i, lane) in h.iter().enumerate() {
        out = mix(out, *lane, P[(i + 1) % 4]);
    }
    out ^ (out >> 31)
}

/// The size of a record with writes of these lengths.
pub fn size_for(lens: impl Iterator<Item = usize>) -> usize {
    let mut n = HEADER_LEN;
    for l in lens {
        n += WRITE_LEN + pad8(l);
    }
    n
}

/// Writes a record's header and write table into `buf` (at least [`size_for`] the `writes`'
/// lengths); the data of write k goes at [`data_offsets`]'s k-th offset. Returns the
/// record's size. The record is not valid until [`seal`] put its checksum in.
pub fn begin(
    buf: &mut [u8],
    nr: u64,
    args: &[u64; 6],
    result: i64,
    writes: &[(u64, u64)],
) -> usize {
    let size = size_for(writes.iter().map(|w| w.1 as usize));
    put_u32(buf, 0, size as u32);
    put_u32(buf, 4, nr as u32);
    put_u32(buf, 8, writes.len() as u32);
    put_u32(buf, 12, 0);
    for (i, a) in args.iter().enumerate() {
        put_u64(buf, 16 + i * 8, *a);
    }
    put_u64(buf, 64, result as u64);
    put_u64(buf, CHECK_AT, 0);
    let mut at = HEADER_LEN;
    for (addr, len) in writes {
        put_u64(buf, at, *addr);
        put_u64(buf, at + 8, *len);
        at += WRITE_LEN;
    }
    // Zero the padding of each write's data (the data itself is copied in by the caller).
    for (_, len) in writes {
        let len = *len as usize;
        for b in &mut buf[at + len..at + pad8(len)] {
            *b = 0;
        }
        at += pad8(len);
    }
    size
}

/// Where the data of each write starts, from the record's start (for `writes.len()` writes
/// of these lengths).
pub fn data_offset(writes: &[(u64, u64)], k: usize) -> usize {
    let mut at = HEADER_LEN + writes.len() * WRITE_LEN;
    for w in &writes[..k] {
        at += pad8(w.1 as usize);
    }
    at
}

/// Puts the checksum into a record whose bytes are all written (`buf` holds exactly the
/// record).
pub fn seal(buf: &mut [u8]) {
    put_u64(buf, CHECK_AT, 0);
    let c = checksum(buf);
    put_u64(buf, CHECK_AT, c);
}

/// Why a record cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bad {
    /// Its size is impossible (too small, not a multiple of 8, past the end).
    Size,
    /// Its writes do not fit in its size.
    Writes,
    /// Its checksum does not match its bytes.
    Check,
}

/// A record read from a buffer.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// The whole record.
    pub bytes: &'a [u8],
    /// Syscall number.
    pub nr: u64,
    /// Arguments.
    pub args: [u64; 6],
    /// Raw result.
    pub result: i64,
    /// How many writes.
    pub writes: usize,
}

impl<'a> Record<'a> {
    /// Reads the record at the start of `buf` (checked: its size, its writes, its checksum).
    pub fn parse(buf: &'a [u8]) -> Result<Record<'a>, Bad> {
        if buf.len() < HEADER_LEN {
            return Err(Bad::Size);
        }
        let size = get_u32(buf, 0) as usize;
        if size < HEADER_LEN || !size.is_multiple_of(8) || size > buf.len() {
            return Err(Bad::Size);
        }
        let bytes = &buf[..size];
        let writes = get_u32(bytes, 8) as usize;
        if writes > MAX_WRITES || HEADER_LEN + writes * WRITE_LEN > size {
            return Err(Bad::Writes);
        }
        let mut need = HEADER_LEN + writes * WRITE_LEN;
        for k in 0..writes {
            let len = get_u64(bytes, HEADER_LEN + k * WRITE_LEN + 8);
            if len > size as u64 {
                return Err(Bad::Writes);
            }
            need += pad8(len as usize);
        }
        if need != size {
            return Err(Bad::Writes);
        }
        let stored = get_u64(bytes, CHECK_AT);
        // The checksum is over the record with its own field zeroed: mix that field's
        // bytes out by recomputing over a copy-free view.
        if checksum_with_zero_check(bytes) != stored {
            return Err(Bad::Check);
        }
        let mut args = [0u64; 6];
        for (i, a) in args.iter_mut().enumerate() {
            *a = get_u64(bytes, 16 + i * 8);
        }
        Ok(Record {
            bytes,
            nr: u64::from(get_u32(bytes, 4)),
            args,
            result: get_u64(bytes, 64) as i64,
            writes,
        })
    }

    /// Write `k`: where, and the bytes.
    pub fn write(&self, k: usize) -> (u64, &'a [u8]) {
        let addr = get_u64(self.bytes, HEADER_LEN + k * WRITE_LEN);
        let len = get_u64(self.bytes, HEADER_LEN + k * WRITE_LEN + 8) as usize;
        let mut at = HEADER_LEN + self.writes * WRITE_LEN;
        for j in 0..k {
            at += pad8(get_u64(self.bytes, HEADER_LEN + j * WRITE_LEN + 8) as usize);
        }
        (addr, &self.bytes[at..at + len])
    }

    /// The record's size in bytes.
    pub fn size(&self) -> usize {
        self.bytes.len()
    }
}

/// [`checksum`] of a record as if its check field were 0 (without copying it).
fn checksum_with_zero_check(bytes: &[u8]) -> u64 {
    // The checksum works on 32-byte chunks; the check field is the second word of the
    // third chunk (bytes 64..96). Checksumming a small patched copy of that chunk and the
    // rest in place gives the same lanes.
    const P: [u64; 4] = [
        0x9e37_79b9_7f4a_7c15,
        0xc2b2_ae3d_27d4_eb4f,
        0x1656_67b1_9e37_79f9,
        0x85eb_ca77_c2b2_ae63,
    ];
    let mut h = P;
    let mix = |h: u64, w: u64, p: u64| (h ^ w).wrapping_mul(p).rotate_left(29);
    let word = |at: usize| {
        if at == CHECK_AT {
            0
        } else {
            get_u64(bytes, at)
        }
    };
    let full = bytes.len() / 32 * 32;
    let mut at = 0;
    while at < full {
        for (i, lane) in h.iter_mut().enumerate() {
            *lane = mix(*lane, word(at + i * 8), P[i]);
        }
        at += 32;
    }
    let mut i = 0;
    while at + 8 <= bytes.len() {
        h[i] = mix(h[i], word(at), P[i]);
        at += 8;
        i += 1;
    }
    let mut out = bytes.len() as u64;
    for (i, lane) in h.iter().enumerate() {
        out = mix(out, *lane, P[(i + 1) % 4]);
    }
    out ^ (out >> 31)
}

/// Encodes a whole record into `out` (hindsight, filling the buffer for replay). Returns its
/// size, or None when it does not fit in `out`.
pub fn encode(
    out: &mut [u8],
    nr: u64,
    args: &[u64; 6],
    result: i64,
    writes: &[(u64, &[u8])],
) -> Option<usize> {
    if writes.len() > MAX_WRITES {
        return None;
    }
    let size = size_for(writes.iter().map(|w| w.1.len()));
    if size > out.len() {
        return None;
    }
    let mut table = [(0u64, 0u64); MAX_WRITES];
    for (t, w) in table.iter_mut().zip(writes) {
        *t = (w.0, w.1.len() as u64);
    }
    let table = &table[..writes.len()];
    begin(out, nr, args, result, table);
    for (k, w) in writes.iter().enumerate() {
        let at = data_offset(table, k);
        out[at..at + w.1.len()].copy_from_slice(w.1);
    }
    seal(&mut out[..size]);
    Some(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_record_reads_back_what_was_written() {
        let mut buf = vec![0u8; 4096];
        let data = b"hello, world";
        let n = encode(
            &mut buf,
            0,
            &[3, 0x1000, 64, 0, 0, 0],
            12,
            &[(0x1000, data), (0x2000, &[1, 2, 3])],
        )
        .expect("fits");
        assert_eq!(n % 8, 0);
        let r = Record::parse(&buf).expect("valid");
        assert_eq!((r.nr, r.result, r.writes, r.size()), (0, 12, 2, n));
        assert_eq!(r.args, [3, 0x1000, 64, 0, 0, 0]);
        assert_eq!(r.write(0), (0x1000, &data[..]));
        assert_eq!(r.write(1), (0x2000, &[1u8, 2, 3][..]));
    }

    #[test]
    fn the_checksum_matches_a_sealed_record() {
        let mut buf = vec![0u8; 256];
        let n = encode(&mut buf, 1, &[1, 2, 3, 4, 5, 6], -9, &[(7, b"xyz")]).expect("fits");
        let mut copy = buf[..n].to_vec();
        copy[CHECK_AT..CHECK_AT + 8].fill(0);
        assert_eq!(checksum(&copy), get_u64(&buf, CHECK_AT));
    }

    proptest! {
        #[test]
        fn any_damaged_byte_is_caught(
            data in proptest::collection::vec(any::<u8>(), 0..300),
            at in any::<usize>(),
            flip in 1u8..=255,
        ) {
            let mut buf = vec![0u8; 1024];
            let n = encode(&mut buf, 0, &[3, 0x5000, 300, 0, 0, 0], data.len() as i64,
                           &[(0x5000, &data)]).expect("fits");
            let at = at % n;
            buf[at] ^= flip;
            prop_assert!(Record::parse(&buf[..n]).is_err());
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(r) = Record::parse(&bytes) {
                for k in 0..r.writes {
                    let _ = r.write(k);
                }
            }
        }
    }
}
