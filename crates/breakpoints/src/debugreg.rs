//! x86 debug registers for watchpoints: DR0–DR3 hold addresses, DR7 enables them with an
//! access kind and a length, DR6 says which fired.
//!
//! A watched range is split into naturally aligned pieces of 1, 2, 4 or 8 bytes, one register
//! each. x86 has no read-only watch: read watchpoints use read/write (the tracer tells reads
//! from writes by comparing values).

use thiserror::Error;

use crate::table::WatchAccess;

/// A watch request that does not fit.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DebugRegError {
    /// Not enough free debug registers.
    #[error("Hardware watchpoints need {needed} debug registers but the CPU has 4 (software watchpoints are not supported yet).")]
    TooMany {
        /// Registers the enabled watchpoints need in all.
        needed: usize,
    },
    /// A zero-length range.
    #[error("Cannot watch an object of size 0.")]
    Empty,
}

/// One register's assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Index of the range (in the request) this piece belongs to.
    pub range: usize,
    /// Aligned address.
    pub addr: u64,
    /// 1, 2, 4 or 8.
    pub len: u8,
    /// Access kind.
    pub access: WatchAccess,
}

/// An assignment of ranges to DR0–DR3.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allocation {
    /// Per register.
    pub slots: [Option<Slot>; 4],
}

/// Splits `[addr, addr+len)` into naturally aligned 1/2/4/8-byte pieces.
pub fn split(addr: u64, len: u64) -> Vec<(u64, u8)> {
    let mut out = Vec::new();
    let mut a = addr;
    let end = addr + len;
    while a < end {
        let mut size = 8u64;
        while size > 1 && (!a.is_multiple_of(size) || a + size > end) {
            size /= 2;
        }
        out.push((a, size as u8));
        a += size;
    }
    out
}

/// Assigns every range (address, length, access) to debug registers, or says it cannot.
pub fn allocate(ranges: &[(u64, u64, WatchAccess)]) -> Result<Allocation, DebugRegError> {
    let mut pieces = Vec::new();
    for (i, &(addr, len, access)) in ranges.iter().enumerate() {
        if len == 0 {
            return Err(DebugRegError::Empty);
        }
        for (a, l) in split(addr, len) {
            pieces.push(Slot {
                range: i,
                addr: a,
                len: l,
                access,
            });
        }
    }
    if pieces.len() > 4 {
        return Err(DebugRegError::TooMany {
            needed: pieces.len(),
        });
    }
    let mut alloc = Allocation::default();
    for (i, p) in pieces.into_iter().enumerate() {
        alloc.slots[i] = Some(p);
    }
    Ok(alloc)
}

impl Allocation {
    /// DR0–DR3.
    pub fn addresses(&self) -> [u64; 4] {
        let mut a = [0u64; 4];
        for (i, s) in self.slots.iter().enumerate() {
            if let Some(s) = s {
                a[i] = s.addr;
            }
        }
        a
    }

    /// DR7: local enable bit, R/W bits (01 write, 11 read/write) and LEN bits per register.
    pub fn dr7(&self) -> u64 {
        let mut v = 0u64;
        for (i, s) in self.slots.iter().enumerate() {
            let Some(s) = s else { continue };
            let rw: u64 = match s.access {
                WatchAccess::Write => 0b01,
                WatchAccess::Read | WatchAccess::Access => 0b11,
            };
            let len: u64 = match s.len {
                1 => 0b00,
                2 => 0b01,
                8 => 0b10,
                _ => 0b11,
            };
            v |= 1 << (i * 2);
            v |= rw << (16 + i * 4);
            v |= len << (18 + i * 4);
        }
        v
    }

    /// The ranges (request indexes) whose registers fired, from DR6's low bits.
    pub fn fired(&self, dr6: u8) -> Vec<usize> {
        let mut out = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            if dr6 & (1 << i) != 0 {
                if let Some(s) = s {
                    if !out.contains(&s.range) {
                        out.push(s.range);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_into_aligned_pieces() {
        assert_eq!(split(0x1000, 4), vec![(0x1000, 4)]);
        assert_eq!(split(0x1000, 16), vec![(0x1000, 8), (0x1008, 8)]);
        assert_eq!(split(0x1002, 4), vec![(0x1002, 2), (0x1004, 2)]);
        assert_eq!(split(0x1001, 3), vec![(0x1001, 1), (0x1002, 2)]);
    }

    #[test]
    fn encodes_dr7() {
        let a = allocate(&[
            (0x1000, 4, WatchAccess::Write),
            (0x2000, 8, WatchAccess::Access),
        ])
        .unwrap();
        assert_eq!(a.addresses(), [0x1000, 0x2000, 0, 0]);
        // DR0: L0, RW=01, LEN=11; DR1: L1, RW=11, LEN=10.
        assert_eq!(
            a.dr7(),
            0b01 | 0b0100 | (0b01 << 16) | (0b11 << 18) | (0b11 << 20) | (0b10 << 22)
        );
        assert_eq!(a.fired(0b10), vec![1]);
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let r = allocate(&[
            (0x1000, 16, WatchAccess::Write),
            (0x2000, 16, WatchAccess::Write),
            (0x3000, 1, WatchAccess::Write),
        ]);
        assert_eq!(r, Err(DebugRegError::TooMany { needed: 5 }));
        assert!(r
            .unwrap_err()
            .to_string()
            .contains("need 5 debug registers"));
    }
}
