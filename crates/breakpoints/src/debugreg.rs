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
    #[error(
        "Hardware watchpoints need {needed} debug registers but {} (software watchpoints are not supported yet).",
        match free {
            4 => "the CPU has 4".to_string(),
            1 => "only 1 is free".to_string(),
            _ => format!("only {free} are free"),
        }
    )]
    TooMany {
        /// Registers the requested ranges need in all.
        needed: usize,
        /// Registers that were free.
        free: usize,
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

/// Splits `[addr, addr+len)` into naturally aligned 1/2/4/8-byte pieces, largest first
/// (a range running past the end of the address space stops there).
pub fn split(addr: u64, len: u64) -> Vec<(u64, u8)> {
    let mut out = Vec::new();
    let mut a = addr;
    let end = addr.saturating_add(len);
    while a < end {
        let mut size = 8u64;
        while size > 1 && (!a.is_multiple_of(size) || size > end - a) {
            size /= 2;
        }
        out.push((a, size as u8));
        a += size;
    }
    out
}

/// Assigns every range (address, length, access) to DR0–DR3, all free, or says it cannot.
pub fn allocate(ranges: &[(u64, u64, WatchAccess)]) -> Result<Allocation, DebugRegError> {
    allocate_in([true; 4], ranges)
}

/// Assigns every range (address, length, access) to the debug registers marked `free`, or
/// says it cannot; the others stay `None` in the result.
pub fn allocate_in(
    free: [bool; 4],
    ranges: &[(u64, u64, WatchAccess)],
) -> Result<Allocation, DebugRegError> {
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
    let slots: Vec<usize> = (0..4).filter(|&i| free[i]).collect();
    if pieces.len() > slots.len() {
        return Err(DebugRegError::TooMany {
            needed: pieces.len(),
            free: slots.len(),
        });
    }
    let mut alloc = Allocation::default();
    for (slot, p) in slots.into_iter().zip(pieces) {
        alloc.slots[slot] = Some(p);
    }
    Ok(alloc)
}

/// DR6's B0–B3 bits: which registers' conditions were met.
pub fn dr6_hits(dr6: u64) -> u8 {
    (dr6 & 0xf) as u8
}

/// DR6's BS bit: the trap was a single-step.
pub fn dr6_single_step(dr6: u64) -> bool {
    dr6 & (1 << 14) != 0
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
        assert_eq!(r, Err(DebugRegError::TooMany { needed: 5, free: 4 }));
        assert_eq!(
            r.unwrap_err().to_string(),
            "Hardware watchpoints need 5 debug registers but the CPU has 4 (software watchpoints are not supported yet)."
        );
        assert_eq!(
            allocate(&[(0x1000, 0, WatchAccess::Write)]),
            Err(DebugRegError::Empty)
        );
    }

    #[test]
    fn allocates_only_free_registers() {
        // DR0 and DR2 are taken: a 16-byte range gets DR1 and DR3.
        let a = allocate_in(
            [false, true, false, true],
            &[(0x2000, 16, WatchAccess::Write)],
        )
        .unwrap();
        assert_eq!(a.addresses(), [0, 0x2000, 0, 0x2008]);
        assert_eq!(a.slots[0], None);
        // L1 and L3 only.
        assert_eq!(a.dr7() & 0xff, 0b0100_0100);
        assert_eq!(a.fired(0b1000), vec![0]);
        let e = allocate_in(
            [false, false, false, true],
            &[(0x2001, 4, WatchAccess::Read)],
        )
        .unwrap_err();
        assert_eq!(e, DebugRegError::TooMany { needed: 3, free: 1 });
        assert_eq!(
            e.to_string(),
            "Hardware watchpoints need 3 debug registers but only 1 is free (software watchpoints are not supported yet)."
        );
    }

    #[test]
    fn read_watches_use_read_write_and_lengths_encode() {
        let a = allocate(&[
            (0x10, 1, WatchAccess::Read),
            (0x12, 2, WatchAccess::Write),
            (0x18, 8, WatchAccess::Access),
            (0x24, 4, WatchAccess::Write),
        ])
        .unwrap();
        let field = |i: usize| (a.dr7() >> (16 + 4 * i)) & 0xf;
        // (LEN << 2) | RW: 1 byte read/write, 2 bytes write, 8 bytes read/write, 4 bytes write.
        assert_eq!(
            [field(0), field(1), field(2), field(3)],
            [0b0011, 0b0101, 0b1011, 0b1101]
        );
        assert_eq!(a.dr7() & 0xff, 0b0101_0101);
        assert_eq!(a.fired(0b0110), vec![1, 2]);
    }

    #[test]
    fn dr6_bits() {
        assert_eq!(dr6_hits(0xffff_0ff2), 0b0010);
        assert!(dr6_single_step(0xffff_4ff0));
        assert!(!dr6_single_step(0xffff_0ff1));
    }

    #[test]
    fn split_survives_the_end_of_the_address_space() {
        assert_eq!(split(u64::MAX - 1, 16), vec![(u64::MAX - 1, 1)]);
        assert!(split(0x1000, 0).is_empty());
    }
}
