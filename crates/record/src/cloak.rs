//! The agent's descriptors hidden from the program's listings of its descriptors.
//!
//! The in-process agent keeps one descriptor per thread (its desched event), numbered from
//! `DESCHED_FD_FLOOR` up, out of the way of the program's own. A program that lists
//! `/proc/self/fd` (or `/proc/PID/task/TID/fd`) to close what it inherited, to count its
//! descriptors, or to check that none leaked, must not see them, as rr hides its own. The
//! agent sends `getdents64` on a procfs directory to be traced, and at its exit the recorder
//! takes the agent's entries out of what the kernel wrote, before the trace is written: the
//! trace, and so the replay, holds the listing the program saw.
//!
//! Invariant: a listing with entries left keeps their order and bytes (only whole records are
//! removed); when the kernel's chunk held nothing but the agent's entries, the next chunk is
//! read in its place (through a duplicate of the program's descriptor, which shares its
//! position), so that 0 still means the end of the directory.

use hindsight_ptrace::ProcessMemory;

/// `getdents` (records `linux_dirent`: the name at 18) and `getdents64` (`linux_dirent64`:
/// the name at 19).
fn name_offset(nr: u64) -> Option<usize> {
    match nr as i64 {
        libc::SYS_getdents64 => Some(19),
        libc::SYS_getdents => Some(18),
        _ => None,
    }
}

/// The process whose descriptor directory descriptor `fd` of thread `tid` lists (it was
/// opened as `/proc/PID/fd` or `/proc/PID/task/TID/fd`; the number found there).
fn listed_owner(tid: i32, fd: u64) -> Option<i32> {
    let link = std::fs::read_link(format!("/proc/{tid}/fd/{fd}")).ok()?;
    let parts: Vec<_> = link.iter().filter_map(|p| p.to_str()).collect();
    match parts.as_slice() {
        ["/", "proc", who, "fd"] => who.parse().ok(),
        ["/", "proc", _, "task", who, "fd"] => who.parse().ok(),
        _ => None,
    }
}

/// Removes from `buf` (directory records of syscall `nr`) the records whose name is a
/// number that `hidden` says is the agent's; returns the bytes kept.
pub fn filter_records(nr: u64, buf: &mut Vec<u8>, hidden: &dyn Fn(i64) -> bool) -> usize {
    let Some(name_at) = name_offset(nr) else {
        return buf.len();
    };
    let mut out = Vec::with_capacity(buf.len());
    let mut at = 0;
    while at + name_at <= buf.len() {
        let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
        if reclen == 0 || at + reclen > buf.len() {
            // Not records as expected: keep the rest as the kernel wrote it.
            out.extend_from_slice(&buf[at..]);
            at = buf.len();
            break;
        }
        let rec = &buf[at..at + reclen];
        let name = &rec[name_at..];
        let name = &name[..name.iter().position(|b| *b == 0).unwrap_or(name.len())];
        let number = std::str::from_utf8(name)
            .ok()
            .and_then(|s| s.parse::<i64>().ok());
        if !number.is_some_and(hidden) {
            out.extend_from_slice(rec);
        }
        at += reclen;
    }
    out.extend_from_slice(&buf[at..]);
    *buf = out;
    buf.len()
}

/// At the exit of syscall `nr(args)` of thread `tid` that returned `result`: when it read a
/// descriptor directory of process `owner_of(listed pid)` with agent descriptors
/// (`agent_fds(process)`), the listing without them (written into the program and its
/// register). Returns the result the program sees.
pub fn at_exit(
    mem: &ProcessMemory,
    tid: i32,
    nr: u64,
    args: &[u64; 6],
    result: i64,
    agent_fds: &dyn Fn(i32) -> Vec<i64>,
) -> i64 {
    if result <= 0 || name_offset(nr).is_none() {
        return result;
    }
    let Some(listed) = listed_owner(tid, args[0]) else {
        return result;
    };
    let fds = agent_fds(listed);
    if fds.is_empty() {
        return result;
    }
    let hidden = |n: i64| fds.contains(&n);
    let mut buf = vec![0u8; result as usize];
    if mem.read(args[1], &mut buf).is_err() {
        return result;
    }
    let mut kept = filter_records(nr, &mut buf, &hidden);
    if kept == result as usize {
        return result;
    }
    if kept == 0 {
        // Only the agent's entries: the program gets the next chunk (or the end).
        kept = next_chunk(tid, nr, args, &hidden, &mut buf);
    }
    if mem.write(args[1], &buf[..kept]).is_err() {
        return result;
    }
    if let Ok(mut regs) = hindsight_ptrace::Tid(tid).regs() {
        regs.0.rax = kept as u64;
        let _ = hindsight_ptrace::Tid(tid).set_regs(&regs);
    }
    kept as i64
}

/// Reads the directory on through a duplicate of the program's descriptor until a chunk has
/// entries that are not hidden, or the end; returns the bytes kept in `buf`.
fn next_chunk(
    tid: i32,
    nr: u64,
    args: &[u64; 6],
    hidden: &dyn Fn(i64) -> bool,
    buf: &mut Vec<u8>,
) -> usize {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: plain syscalls; the descriptors they return are owned here.
    let dup = unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, tid, 0);
        if pidfd < 0 {
            return 0;
        }
        let dup = libc::syscall(libc::SYS_pidfd_getfd, pidfd as i32, args[0] as i32, 0);
        libc::close(pidfd as i32);
        if dup < 0 {
            return 0;
        }
        OwnedFd::from_raw_fd(dup as i32)
    };
    let len = (args[2] as usize).min(1 << 20);
    loop {
        buf.resize(len, 0);
        // SAFETY: the buffer is ours and `len` long.
        let n = unsafe { libc::syscall(nr as i64, dup.as_raw_fd(), buf.as_mut_ptr(), len) };
        if n <= 0 {
            buf.clear();
            return 0;
        }
        buf.truncate(n as usize);
        let kept = filter_records(nr, buf, hidden);
        if kept > 0 {
            return kept;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record64(name: &str) -> Vec<u8> {
        let reclen = (19 + name.len() + 1).div_ceil(8) * 8;
        let mut r = vec![0u8; reclen];
        r[16..18].copy_from_slice(&(reclen as u16).to_ne_bytes());
        r[19..19 + name.len()].copy_from_slice(name.as_bytes());
        r
    }

    #[test]
    fn only_the_hidden_numbers_go() {
        let mut buf: Vec<u8> = [".", "..", "0", "1000", "7", "1001"]
            .iter()
            .flat_map(|n| record64(n))
            .collect();
        let want: Vec<u8> = [".", "..", "0", "7"]
            .iter()
            .flat_map(|n| record64(n))
            .collect();
        let kept = filter_records(libc::SYS_getdents64 as u64, &mut buf, &|n| {
            n == 1000 || n == 1001
        });
        assert_eq!(kept, want.len());
        assert_eq!(buf, want);
    }

    #[test]
    fn damaged_records_are_kept_as_they_are() {
        let mut buf = record64("1000");
        buf.extend_from_slice(&[1, 2, 3]);
        let kept = filter_records(libc::SYS_getdents64 as u64, &mut buf, &|n| n == 1000);
        assert_eq!(buf, vec![1, 2, 3]);
        assert_eq!(kept, 3);
    }
}
