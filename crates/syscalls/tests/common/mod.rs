//! A fake program memory for the tests.

use hindsight_syscalls::Memory;
use std::io;

/// One contiguous region of fake program memory starting at `base`.
pub struct FakeMem {
    pub base: u64,
    pub bytes: Vec<u8>,
}

impl FakeMem {
    pub fn new(base: u64, len: usize) -> Self {
        FakeMem {
            base,
            bytes: vec![0; len],
        }
    }

    pub fn set(&mut self, addr: u64, data: &[u8]) {
        let off = (addr - self.base) as usize;
        self.bytes[off..off + data.len()].copy_from_slice(data);
    }

    pub fn set_u32(&mut self, addr: u64, v: u32) {
        self.set(addr, &v.to_ne_bytes());
    }

    pub fn set_u64(&mut self, addr: u64, v: u64) {
        self.set(addr, &v.to_ne_bytes());
    }

    /// Writes an iovec array at `addr`.
    pub fn set_iovecs(&mut self, addr: u64, iov: &[(u64, u64)]) {
        for (i, (base, len)) in iov.iter().enumerate() {
            self.set_u64(addr + 16 * i as u64, *base);
            self.set_u64(addr + 16 * i as u64 + 8, *len);
        }
    }
}

impl Memory for FakeMem {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), io::Error> {
        let end = addr.checked_add(buf.len() as u64);
        match end {
            Some(end) if addr >= self.base && end <= self.base + self.bytes.len() as u64 => {
                let off = (addr - self.base) as usize;
                buf.copy_from_slice(&self.bytes[off..off + buf.len()]);
                Ok(())
            }
            _ => Err(io::Error::from_raw_os_error(libc::EFAULT)),
        }
    }
}

/// Memory that must not be read.
pub struct NoMem;

impl Memory for NoMem {
    fn read(&self, addr: u64, _buf: &mut [u8]) -> Result<(), io::Error> {
        panic!("unexpected read at {addr:#x}")
    }
}
