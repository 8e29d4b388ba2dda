//! Which syscalls the agent buffers, and what each one writes into the program's memory.
//!
//! The set was chosen by what syscall-heavy programs make most (sqlite3, ls, find, git,
//! python, a read/write loop, threads on mutexes and condition variables): reads and writes
//! and their positioned and vectored forms, socket sends and receives without addresses or
//! control data, the file-status family, directory listings, polls, futex waits and wakes,
//! the clocks, the id getters, `getrandom` and file locks. What shapes the process (memory
//! map, threads, signal state, program) is never buffered: replay runs those for real.
//! Neither are calls that make or replace descriptors behind hindsight's back (`dup2`,
//! `fcntl(F_DUPFD)`), nor sockets' addresses and control messages.
//!
//! The memory effects here must be exactly those of `hindsight-syscalls` (the recorder's
//! table for traced calls): `crates/agent-host/tests/calls.rs` checks them against it.

/// Syscall numbers (x86-64) of the calls this module knows.
#[allow(missing_docs)]
pub mod nr {
    pub const READ: u64 = 0;
    pub const WRITE: u64 = 1;
    pub const CLOSE: u64 = 3;
    pub const STAT: u64 = 4;
    pub const FSTAT: u64 = 5;
    pub const LSTAT: u64 = 6;
    pub const POLL: u64 = 7;
    pub const LSEEK: u64 = 8;
    pub const PREAD64: u64 = 17;
    pub const PWRITE64: u64 = 18;
    pub const READV: u64 = 19;
    pub const WRITEV: u64 = 20;
    pub const ACCESS: u64 = 21;
    pub const GETPID: u64 = 39;
    pub const SENDTO: u64 = 44;
    pub const RECVFROM: u64 = 45;
    pub const SENDMSG: u64 = 46;
    pub const FCNTL: u64 = 72;
    pub const READLINK: u64 = 89;
    pub const GETTIMEOFDAY: u64 = 96;
    pub const GETUID: u64 = 102;
    pub const GETGID: u64 = 104;
    pub const GETEUID: u64 = 107;
    pub const GETEGID: u64 = 108;
    pub const GETPPID: u64 = 110;
    pub const GETTID: u64 = 186;
    pub const GETXATTR: u64 = 191;
    pub const LGETXATTR: u64 = 192;
    pub const FGETXATTR: u64 = 193;
    pub const TIME: u64 = 201;
    pub const FUTEX: u64 = 202;
    pub const GETDENTS64: u64 = 217;
    pub const CLOCK_GETTIME: u64 = 228;
    pub const EPOLL_WAIT: u64 = 232;
    pub const OPENAT: u64 = 257;
    pub const NEWFSTATAT: u64 = 262;
    pub const READLINKAT: u64 = 267;
    pub const FACCESSAT: u64 = 269;
    pub const GETRANDOM: u64 = 318;
    pub const STATX: u64 = 332;
    pub const FACCESSAT2: u64 = 439;
}

const STAT_LEN: u64 = 144;
const STATX_LEN: u64 = 256;
const TIMESPEC: u64 = 16;
const TIMEVAL: u64 = 16;
const POLLFD: u64 = 8;
const EPOLL_EVENT: u64 = 12;
const FLOCK: u64 = 32;
const IOVEC: u64 = 16;

/// The most iovecs of a vectored read the agent buffers (more: traced).
pub const MAX_IOVECS: u64 = 32;

/// A call the agent buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// How many of its arguments it reads (replay compares those with the recording).
    pub arity: usize,
    /// Whether it can block waiting for another thread or process (the desched event is
    /// armed around it).
    pub may_block: bool,
    /// A descriptor it writes to: writes to the recording's outputs stay traced.
    pub writes_fd: Option<u64>,
    /// At most how many bytes of the program's memory it writes.
    pub max_bytes: u64,
    /// At most how many separate ranges.
    pub max_ranges: usize,
}

/// Reads the program's memory (the iovec array of a vectored read).
pub trait Memory {
    /// The 8 bytes at `addr`, None when they cannot be read.
    fn u64_at(&self, addr: u64) -> Option<u64>;
}

fn call(arity: usize, may_block: bool, max_bytes: u64, max_ranges: usize) -> Option<Call> {
    Some(Call {
        arity,
        may_block,
        writes_fd: None,
        max_bytes,
        max_ranges,
    })
}

fn writer(arity: usize, may_block: bool, fd: u64) -> Option<Call> {
    Some(Call {
        arity,
        may_block,
        writes_fd: Some(fd),
        max_bytes: 0,
        max_ranges: 0,
    })
}

/// Whether syscall `nr` with `args` is one the agent buffers, and how (None: traced).
/// `mem` is read for a vectored read's iovec array (its lengths bound the record).
pub fn classify(nr: u64, a: &[u64; 6], mem: &dyn Memory) -> Option<Call> {
    use self::nr::*;
    let int = |v: u64| v as u32 as i32;
    match nr {
        READ => call(3, true, a[2], 1),
        PREAD64 => call(4, false, a[2], 1),
        GETDENTS64 => call(3, false, a[2], 1),
        READLINK => call(3, false, a[2], 1),
        READLINKAT => call(4, false, a[3], 1),
        GETRANDOM => call(3, false, a[1], 1),
        RECVFROM if a[4] == 0 => call(4, true, a[2], 1),
        GETXATTR | LGETXATTR | FGETXATTR => call(4, false, a[3], 1),
        READV => {
            let cnt = a[2];
            if cnt > MAX_IOVECS || a[1] == 0 {
                return None;
            }
            let mut total = 0u64;
            for i in 0..cnt {
                total = total.checked_add(mem.u64_at(a[1] + i * IOVEC + 8)?)?;
            }
            call(3, true, total, cnt as usize)
        }
        WRITE => writer(3, true, a[0]),
        PWRITE64 => writer(4, false, a[0]),
        WRITEV => writer(3, true, a[0]),
        SENDTO => writer(6, true, a[0]),
        SENDMSG => writer(3, true, a[0]),
        CLOSE => call(1, false, 0, 0),
        STAT | LSTAT | FSTAT => call(2, false, STAT_LEN, 1),
        NEWFSTATAT => call(4, false, STAT_LEN, 1),
        STATX => call(5, false, STATX_LEN, 1),
        LSEEK => call(3, false, 0, 0),
        ACCESS => call(2, false, 0, 0),
        FACCESSAT => call(3, false, 0, 0),
        FACCESSAT2 => call(4, false, 0, 0),
        // A FIFO's open waits for the other end.
        OPENAT => call(4, true, 0, 0),
        POLL => call(3, int(a[2]) != 0, (a[1] & 0xffff_ffff) * POLLFD, 1),
        EPOLL_WAIT => call(
            4,
            int(a[3]) != 0,
            (a[2] & 0xffff_ffff).saturating_mul(EPOLL_EVENT),
            1,
        ),
        FUTEX => match a[1] & 0x7f {
            // FUTEX_WAIT (uaddr, op, val, timeout), FUTEX_WAIT_BITSET (… , val3)
            0 => call(4, true, 0, 0),
            9 => call(6, true, 0, 0),
            // FUTEX_WAKE (uaddr, op, count), FUTEX_WAKE_BITSET
            1 => call(3, false, 0, 0),
            10 => call(6, false, 0, 0),
            _ => None,
        },
        FCNTL => match a[1] & 0xffff_ffff {
            // F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_SETLK, F_OFD_SETLK
            1..=4 | 6 | 37 => call(3, false, 0, 0),
            // F_SETLKW, F_OFD_SETLKW: wait for the lock
            7 | 38 => call(3, true, 0, 0),
            // F_GETLK, F_OFD_GETLK: a struct flock
            5 | 36 => call(3, false, FLOCK, 1),
            _ => None,
        },
        CLOCK_GETTIME => call(2, false, TIMESPEC, 1),
        GETTIMEOFDAY => call(2, false, TIMEVAL + 8, 2),
        TIME => call(1, false, 8, 1),
        GETPID | GETTID | GETPPID | GETUID | GETEUID | GETGID | GETEGID => call(0, false, 0, 0),
        _ => None,
    }
}

/// The ranges `(address, length)` of the program's memory that buffered call `nr` with
/// `args` wrote, given its raw `result`, into `out`; returns how many. None when they are
/// more than `out` holds or an iovec cannot be read (the caller then cannot buffer it).
pub fn writes(
    nr: u64,
    a: &[u64; 6],
    result: i64,
    mem: &dyn Memory,
    out: &mut [(u64, u64)],
) -> Option<usize> {
    use self::nr::*;
    let ok = !(-4095..=-1).contains(&result);
    let count = if ok && result > 0 { result as u64 } else { 0 };
    let mut n = 0;
    let mut put = |addr: u64, len: u64| -> Option<()> {
        if addr != 0 && len != 0 {
            *out.get_mut(n)? = (addr, len);
            n += 1;
        }
        Some(())
    };
    match nr {
        READ | PREAD64 | GETDENTS64 | READLINK => put(a[1], count.min(a[2]))?,
        READLINKAT => put(a[2], count.min(a[3]))?,
        GETRANDOM => put(a[0], count.min(a[1]))?,
        RECVFROM => put(a[1], count.min(a[2]))?,
        // A zero size asks for the value's length only: nothing written.
        GETXATTR | LGETXATTR | FGETXATTR if a[3] != 0 => put(a[2], count.min(a[3]))?,
        GETXATTR | LGETXATTR | FGETXATTR => {}
        READV => {
            let mut left = count;
            let cnt = a[2].min(MAX_IOVECS);
            for i in 0..cnt {
                if left == 0 {
                    break;
                }
                let base = mem.u64_at(a[1] + i * IOVEC)?;
                let len = mem.u64_at(a[1] + i * IOVEC + 8)?;
                let take = len.min(left);
                put(base, take)?;
                left -= take;
            }
        }
        STAT | LSTAT | FSTAT if ok => put(a[1], STAT_LEN)?,
        NEWFSTATAT if ok => put(a[2], STAT_LEN)?,
        STATX if ok => put(a[4], STATX_LEN)?,
        POLL if ok => put(a[0], (a[1] & 0xffff_ffff) * POLLFD)?,
        EPOLL_WAIT => put(a[1], count.min(a[2] & 0xffff_ffff) * EPOLL_EVENT)?,
        FCNTL if ok && matches!(a[1] & 0xffff_ffff, 5 | 36) => put(a[2], FLOCK)?,
        CLOCK_GETTIME if ok => put(a[1], TIMESPEC)?,
        GETTIMEOFDAY if ok => {
            put(a[0], TIMEVAL)?;
            put(a[1], 8)?;
        }
        TIME if ok => put(a[0], 8)?,
        _ => {}
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoMemory;
    impl Memory for NoMemory {
        fn u64_at(&self, _: u64) -> Option<u64> {
            None
        }
    }

    struct Iovecs(Vec<(u64, u64)>, u64);
    impl Memory for Iovecs {
        fn u64_at(&self, addr: u64) -> Option<u64> {
            let off = addr.checked_sub(self.1)?;
            let (i, half) = ((off / 16) as usize, off % 16);
            let e = self.0.get(i)?;
            Some(if half == 0 { e.0 } else { e.1 })
        }
    }

    #[test]
    fn a_read_writes_what_it_returned() {
        let mut out = [(0, 0); 4];
        let n = writes(
            nr::READ,
            &[3, 0x1000, 100, 0, 0, 0],
            40,
            &NoMemory,
            &mut out,
        );
        assert_eq!(n, Some(1));
        assert_eq!(out[0], (0x1000, 40));
        // A failed read writes nothing.
        assert_eq!(
            writes(
                nr::READ,
                &[3, 0x1000, 100, 0, 0, 0],
                -11,
                &NoMemory,
                &mut out
            ),
            Some(0)
        );
    }

    #[test]
    fn a_vectored_read_fills_its_iovecs_in_order() {
        let mem = Iovecs(vec![(0x1000, 4), (0, 0), (0x2000, 10)], 0x9000);
        let args = [3, 0x9000, 3, 0, 0, 0];
        let c = classify(nr::READV, &args, &mem).expect("buffered");
        assert_eq!((c.max_bytes, c.max_ranges), (14, 3));
        let mut out = [(0, 0); 4];
        let n = writes(nr::READV, &args, 9, &mem, &mut out).expect("readable");
        assert_eq!(&out[..n], &[(0x1000, 4), (0x2000, 5)]);
    }

    #[test]
    fn what_shapes_the_process_or_its_descriptors_is_not_buffered() {
        for nr in [
            9u64, 10, 11, 12, 13, 14, 15, 32, 33, 56, 57, 58, 59, 60, 231, 292,
        ] {
            assert!(classify(nr, &[0; 6], &NoMemory).is_none(), "syscall {nr}");
        }
        // fcntl(F_DUPFD) makes a descriptor.
        assert!(classify(nr::FCNTL, &[3, 0, 10, 0, 0, 0], &NoMemory).is_none());
        // recvfrom with an address buffer.
        assert!(classify(nr::RECVFROM, &[3, 0x10, 8, 0, 0x20, 0x30], &NoMemory).is_none());
    }
}
