//! The auxiliary vector that the kernel puts on a new program's stack, and the one edit that
//! recording needs: hiding the vDSO.
//!
//! The vDSO's time functions (`clock_gettime`, `gettimeofday`, `time`, `getcpu`) read kernel
//! data without a syscall, so a recorder that sees only syscalls would miss their results.
//! glibc, musl and Rust's std find the vDSO through `AT_SYSINFO_EHDR` only; turning that entry
//! into `AT_IGNORE` before the program's first instruction makes them fall back to real
//! syscalls, which are recorded like any other. The vDSO stays mapped, unused.

use crate::error::PtraceError;
use crate::memory::ProcessMemory;

const AT_NULL: u64 = 0;
const AT_IGNORE: u64 = 1;
const AT_SYSINFO_EHDR: u64 = 33;
/// More entries than any kernel writes: a corrupt stack cannot make us loop long.
const MAX_WORDS: u64 = 1 << 20;

/// Address of the first auxv entry of a program stopped at its exec (stack pointer `sp`,
/// pointing at argc).
fn auxv_start(mem: &ProcessMemory, sp: u64) -> Result<Option<u64>, PtraceError> {
    let argc = mem.read_u64(sp)?;
    // argv[argc] is NULL; the environment follows, then its NULL.
    let mut p = sp + 8 * (argc + 2);
    let mut n = 0;
    while mem.read_u64(p)? != 0 {
        p += 8;
        n += 1;
        if n > MAX_WORDS {
            return Ok(None);
        }
    }
    Ok(Some(p + 8))
}

/// The value of auxv entry `key` (e.g. 25, `AT_RANDOM`) of a program stopped at its exec.
pub fn entry(mem: &ProcessMemory, sp: u64, key: u64) -> Result<Option<u64>, PtraceError> {
    let Some(mut p) = auxv_start(mem, sp)? else {
        return Ok(None);
    };
    for _ in 0..MAX_WORDS {
        let k = mem.read_u64(p)?;
        if k == AT_NULL {
            break;
        }
        if k == key {
            return Ok(Some(mem.read_u64(p + 8)?));
        }
        p += 16;
    }
    Ok(None)
}

/// `AT_RANDOM`: the address of 16 random bytes the kernel gave the program (glibc's stack
/// protector and pointer guard come from them).
pub const AT_RANDOM: u64 = 25;

/// Hides the vDSO from a program stopped at its exec (stack pointer `sp`). Returns true when
/// an entry was changed.
pub fn hide_vdso(mem: &ProcessMemory, sp: u64) -> Result<bool, PtraceError> {
    let Some(mut p) = auxv_start(mem, sp)? else {
        return Ok(false);
    };
    let mut changed = false;
    for _ in 0..MAX_WORDS {
        let key = mem.read_u64(p)?;
        if key == AT_NULL {
            break;
        }
        if key == AT_SYSINFO_EHDR {
            mem.write(p, &AT_IGNORE.to_le_bytes())?;
            changed = true;
        }
        p += 16;
    }
    Ok(changed)
}
