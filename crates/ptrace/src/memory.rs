//! Memory of a traced process.
//!
//! Reads use `process_vm_readv` (one syscall for any length, no ptrace stop needed) and fall back
//! to `/proc/PID/mem` for pages the program cannot read itself (execute-only or PROT_NONE).
//! Writes go through `/proc/PID/mem`, which — unlike `process_vm_writev` — may write to
//! read-only text pages of a tracee: that is how int3s are planted.

use crate::error::PtraceError;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;

/// Access to one process's address space. Reopen (with [`ProcessMemory::open`]) after `execve`.
#[derive(Debug)]
pub struct ProcessMemory {
    pid: i32,
    mem: File,
}

impl ProcessMemory {
    /// Opens the memory of process `pid` (the caller must be its tracer).
    pub fn open(pid: i32) -> Result<Self, PtraceError> {
        let mem = OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/mem"))
            .map_err(|source| PtraceError::Sys {
                what: format!("opening the memory of process {pid}"),
                source,
            })?;
        Ok(ProcessMemory { pid, mem })
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Fills `buf` from `addr`: all of it, or an error naming the first unreadable address.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), PtraceError> {
        if buf.is_empty() {
            return Ok(());
        }
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let remote = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: `local` describes `buf`, which we own mutably for the call.
        let n = unsafe { libc::process_vm_readv(self.pid, &local, 1, &remote, 1, 0) };
        if n >= 0 && n as usize == buf.len() {
            return Ok(());
        }
        let done = if n > 0 { n as usize } else { 0 };
        self.read_slow(addr + done as u64, &mut buf[done..])
    }

    /// `/proc/PID/mem` fallback, which also reads pages without PROT_READ.
    fn read_slow(&self, addr: u64, buf: &mut [u8]) -> Result<(), PtraceError> {
        let mut done = 0;
        while done < buf.len() {
            match self.mem.read_at(&mut buf[done..], addr + done as u64) {
                Ok(0) | Err(_) => return Err(PtraceError::Memory(addr + done as u64)),
                Ok(n) => done += n,
            }
        }
        Ok(())
    }

    /// True when the address space this handle was opened on is gone: every thread of the
    /// process has left it (exited, or another thread's exec replaced it). The kernel then
    /// reads nothing at all from `/proc/PID/mem`, where an unmapped address is an error.
    pub fn is_gone(&self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.mem.read_at(&mut b, 0), Ok(0))
    }

    /// Reads a little-endian u64.
    pub fn read_u64(&self, addr: u64) -> Result<u64, PtraceError> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Writes `data` at `addr`, also into read-only pages (text).
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), PtraceError> {
        let mut done = 0;
        while done < data.len() {
            match self.mem.write_at(&data[done..], addr + done as u64) {
                Ok(0) | Err(_) => return Err(PtraceError::Memory(addr + done as u64)),
                Ok(n) => done += n,
            }
        }
        Ok(())
    }
}
