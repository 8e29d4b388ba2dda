//! The window onto a stopped thread that symbol interpretation needs.
//!
//! Implemented by the layers above (a live process through ptrace, later a replay). Keeping it a
//! trait keeps this crate free of any I/O of its own.

use thiserror::Error;

/// Why target state could not be read.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum AccessError {
    /// The address range is not mapped or not readable.
    #[error("Cannot access memory at address {0:#x}")]
    Memory(u64),
    /// The register is not available in this frame (not saved by the callee, say).
    #[error("register {0} is not available in this frame")]
    Register(u16),
}

/// Memory of the debugged process.
pub trait ReadMemory {
    /// Fills `buf` from `addr`; all or nothing.
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessError>;

    /// Reads a little-endian `u64` at `addr`.
    fn read_u64(&self, addr: u64) -> Result<u64, AccessError> {
        let mut b = [0u8; 8];
        self.read_memory(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }
}

/// x86-64 registers by DWARF number (0 = rax, 1 = rdx, 2 = rcx, 3 = rbx, 4 = rsi, 5 = rdi,
/// 6 = rbp, 7 = rsp, 8–15 = r8–r15, 16 = return address / rip), as one frame sees them.
///
/// `None` means "not known in this frame": a caller-saved register in an outer frame, for
/// example. Frame 0 has all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DwarfRegs(pub [Option<u64>; 17]);

impl DwarfRegs {
    /// DWARF number of rbp.
    pub const RBP: u16 = 6;
    /// DWARF number of rsp.
    pub const RSP: u16 = 7;
    /// DWARF number of the return address column (rip).
    pub const RIP: u16 = 16;

    /// The register with DWARF number `n`, if known.
    pub fn get(&self, n: u16) -> Option<u64> {
        self.0.get(n as usize).copied().flatten()
    }

    /// Sets the register with DWARF number `n` (ignored beyond 16).
    pub fn set(&mut self, n: u16, v: Option<u64>) {
        if let Some(slot) = self.0.get_mut(n as usize) {
            *slot = v;
        }
    }

    /// The program counter.
    pub fn pc(&self) -> Option<u64> {
        self.get(Self::RIP)
    }
}
