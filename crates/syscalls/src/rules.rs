//! Per-syscall knowledge: the replay class and the memory each syscall writes.
//!
//! [`rule`] is the single source of truth for both [`crate::classify`] and
//! [`crate::writes`]: a syscall (or request) absent from it is unknown to both.
//! Struct sizes are those of the x86-64 kernel ABI.

use crate::{is_error, is_interrupted, EntryState, Memory, Replay, SyscallError, Written};

/// Computes the written ranges once the result is known.
pub(crate) type Effect = Box<dyn Fn(&mut Out<'_>) -> Result<(), SyscallError>>;

/// What is known about one syscall invocation at entry.
pub(crate) struct Rule {
    /// The syscall's name.
    pub name: &'static str,
    /// What replay does with it.
    pub class: Replay,
    /// Its memory writes, evaluated at exit.
    pub effect: Effect,
}

/// Collects the written ranges of one syscall at exit.
pub(crate) struct Out<'m> {
    name: &'static str,
    result: i64,
    mem: &'m dyn Memory,
    entry: Option<&'m EntryState>,
    list: Vec<Written>,
}

// errno values used below (positive).
const ENOSYS: i64 = 38;
const EFAULT: i64 = 14;
const EINVAL: i64 = 22;
const ERANGE: i64 = 34;
const E2BIG: i64 = 7;
const EOVERFLOW: i64 = 75;
const EOPNOTSUPP: i64 = 95;

// x86-64 kernel structure sizes.
const STAT: u64 = 144;
const STATX: u64 = 256;
const STATFS: u64 = 120;
const TIMESPEC: u64 = 16;
const TIMEVAL: u64 = 16;
const ITIMERSPEC: u64 = 32;
const ITIMERVAL: u64 = 32;
const RUSAGE: u64 = 144;
const SIGINFO: u64 = 128;
const KSIGACTION: u64 = 32;
const SIGSET: u64 = 8;
const STACK_T: u64 = 24;
const UTSNAME: u64 = 390;
const SYSINFO: u64 = 112;
const TMS: u64 = 32;
const RLIMIT: u64 = 16;
const TIMEX: u64 = 208;
const POLLFD: u64 = 8;
const EPOLL_EVENT: u64 = 12;
const IOVEC: u64 = 16;
const MSGHDR: u64 = 56;
const MMSGHDR: u64 = 64;
const SOCKADDR_MAX: u64 = 128;
const FLOCK: u64 = 32;
const MQ_ATTR: u64 = 64;
const UIO_MAXIOV: u64 = 1024;
const MAX_HANDLE_SZ: u64 = 128;

impl<'m> Out<'m> {
    pub(crate) fn new(
        name: &'static str,
        result: i64,
        mem: &'m dyn Memory,
        entry: Option<&'m EntryState>,
    ) -> Self {
        Out {
            name,
            result,
            mem,
            entry,
            list: Vec::new(),
        }
    }

    pub(crate) fn finish(self) -> Vec<Written> {
        self.list
    }

    /// The syscall succeeded.
    fn ok(&self) -> bool {
        !is_error(self.result)
    }

    /// The result as a byte/element count (0 on failure).
    fn count(&self) -> u64 {
        if self.ok() && self.result > 0 {
            self.result as u64
        } else {
            0
        }
    }

    /// The syscall failed with exactly `errno`.
    fn failed_with(&self, errno: i64) -> bool {
        self.result == -errno
    }

    /// Records `len` bytes at `addr` (nothing for a null pointer or length 0).
    fn put(&mut self, addr: u64, len: u64) {
        if addr != 0 && len != 0 {
            self.list.push(Written {
                addr,
                len: len as usize,
            });
        }
    }

    /// `len` bytes at `addr` if the syscall succeeded.
    fn fixed(&mut self, addr: u64, len: u64) {
        if self.ok() {
            self.put(addr, len);
        }
    }

    /// `min(result, cap)` bytes at `addr` if the syscall succeeded.
    fn counted(&mut self, addr: u64, cap: u64) {
        let n = self.count().min(cap);
        self.put(addr, n);
    }

    fn read(&self, addr: u64, buf: &mut [u8], what: &str) -> Result<(), SyscallError> {
        self.mem.read(addr, buf).map_err(|e| {
            SyscallError::Memory(format!("reading {what} of {} at {addr:#x}: {e}", self.name))
        })
    }

    fn u32_at(&self, addr: u64, what: &str) -> Result<u32, SyscallError> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b, what)?;
        Ok(u32::from_ne_bytes(b))
    }

    /// Walks `cnt` iovecs at `iov`, recording `total` bytes spread over them.
    fn iovecs(&mut self, iov: u64, cnt: u64, total: u64) -> Result<(), SyscallError> {
        if total == 0 || iov == 0 || cnt == 0 {
            return Ok(());
        }
        let cnt = cnt.min(UIO_MAXIOV) as usize;
        let mut raw = vec![0u8; cnt * IOVEC as usize];
        self.read(iov, &mut raw, "the iovec array")?;
        let mut left = total;
        for e in raw.chunks_exact(IOVEC as usize) {
            if left == 0 {
                break;
            }
            let base = u64::from_ne_bytes(e[0..8].try_into().expect("8 bytes"));
            let len = u64::from_ne_bytes(e[8..16].try_into().expect("8 bytes"));
            let take = len.min(left);
            self.put(base, take);
            left -= take;
        }
        Ok(())
    }

    /// A socket address returned through `addr` with its value-result length
    /// word at `lenp` (as the kernel's `move_addr_to_user` writes them).
    fn sockaddr(&mut self, addr: u64, lenp: u64) -> Result<(), SyscallError> {
        if lenp == 0 {
            return Ok(());
        }
        // The full length goes back even when there is no buffer (a null address with a
        // length of 0 asks for the length alone).
        let klen = u64::from(self.u32_at(lenp, "the address length")?);
        self.put(lenp, 4);
        let len = klen.min(self.original_len(lenp));
        self.put(addr, len);
        Ok(())
    }

    /// The caller's buffer length stored at `lenp` before the syscall (from
    /// the entry snapshot), or the largest address the kernel copies.
    fn original_len(&self, lenp: u64) -> u64 {
        self.entry
            .and_then(|e| e.len_at(lenp))
            .map_or(SOCKADDR_MAX, |l| u64::from(l).min(SOCKADDR_MAX))
    }

    /// What `recvmsg` writes through the `msghdr` at `hdr` after receiving
    /// `datalen` bytes.
    fn msghdr(&mut self, hdr: u64, datalen: u64) -> Result<(), SyscallError> {
        if hdr == 0 {
            return Ok(());
        }
        let mut raw = [0u8; MSGHDR as usize];
        self.read(hdr, &mut raw, "the msghdr")?;
        let word = |o: usize| u64::from_ne_bytes(raw[o..o + 8].try_into().expect("8 bytes"));
        let name = word(0);
        let namelen = u64::from(u32::from_ne_bytes(raw[8..12].try_into().expect("4")));
        let (iov, iovlen) = (word(16), word(24));
        let (control, controllen) = (word(32), word(40));
        if name != 0 {
            self.put(hdr + 8, 4);
            self.put(name, namelen.min(self.original_len(hdr + 8)));
        }
        self.iovecs(iov, iovlen, datalen)?;
        self.put(hdr + 40, 8);
        self.put(control, controllen);
        self.put(hdr + 48, 4);
        Ok(())
    }

    /// `recvmmsg`: each received `mmsghdr` (its `msg_len` and its message).
    fn recv_mmsg(&mut self, vec: u64, vlen: u64) -> Result<(), SyscallError> {
        let n = self.count().min(vlen).min(UIO_MAXIOV);
        for i in 0..n {
            let e = vec + i * MMSGHDR;
            let len = u64::from(self.u32_at(e + 56, "msg_len of an mmsghdr")?);
            self.put(e + 56, 4);
            self.msghdr(e, len)?;
        }
        Ok(())
    }

    /// `select`/`pselect6`: the three fd sets on success, and the remaining
    /// time the kernel stores into a non-null timeout on return.
    fn select(&mut self, a: &[u64; 6]) {
        let n = a[0] as i32;
        if self.ok() && n > 0 {
            let bytes = (n as u64).div_ceil(64) * 8;
            self.put(a[1], bytes);
            self.put(a[2], bytes);
            self.put(a[3], bytes);
        }
        if !self.failed_with(EFAULT) {
            self.put(a[4], TIMESPEC);
        }
    }

    /// Fails unless the syscall returned `-ENOSYS` (for syscalls the kernel
    /// no longer implements).
    fn enosys_only(&self) -> Result<(), SyscallError> {
        if self.failed_with(ENOSYS) {
            Ok(())
        } else {
            Err(SyscallError::Unknown(format!(
                "syscall {} returned {} but only its -ENOSYS (not implemented) result is modeled",
                self.name, self.result
            )))
        }
    }
}

fn nothing() -> Effect {
    Box::new(|_| Ok(()))
}

fn unsupported(name: &str, nr: u64, why: &str) -> SyscallError {
    SyscallError::Unknown(format!("syscall {name} ({nr}) is not supported: {why}"))
}

fn unknown_request(what: &str, value: u64, name: &str) -> SyscallError {
    SyscallError::Unknown(format!("{what} {value:#x} on syscall {name} (unknown)"))
}

/// Builds an [`Effect`] from a closure body using `?`.
macro_rules! eff {
    (|$o:ident| $body:block) => {
        Box::new(move |$o: &mut Out<'_>| -> Result<(), SyscallError> {
            $body;
            #[allow(unreachable_code)]
            Ok(())
        }) as Effect
    };
}

/// Syscall numbers from here up to the x32 ABI's (0x40000000) are not syscalls on x86-64 (the
/// native table ends in the hundreds, well below).
const NO_SYSCALL_FROM: u64 = 1024;
/// x32 syscalls (the number with bit 30 set), which a 64-bit program can make on kernels
/// built with x32: not recorded.
const X32_FROM: u64 = 0x4000_0000;

/// The rule for syscall `nr` with arguments `args`.
pub(crate) fn rule(nr: u64, args: &[u64; 6]) -> Result<Rule, SyscallError> {
    // A number no kernel has (negative, or past the syscall table's range): the kernel answers
    // ENOSYS and does nothing, so the program gets exactly that (test suites probe with
    // `syscall(-1)`).
    if nr as i64 <= -1 || (NO_SYSCALL_FROM..X32_FROM).contains(&nr) {
        return Ok(Rule {
            name: "(no syscall)",
            class: Replay::Deny(libc::ENOSYS),
            effect: nothing(),
        });
    }
    let Some(name) = crate::name(nr) else {
        return Err(SyscallError::Unknown(format!(
            "syscall {nr} (unknown number)"
        )));
    };
    let a = *args;
    use Replay::{Deny, Emulate as Emu, Execute as Exec};
    let (class, effect): (Replay, Effect) = match name {
        // ---- plain reads into a buffer: min(result, count) bytes ----
        "read" | "pread64" => (Emu, eff!(|o| { o.counted(a[1], a[2]) })),
        "getdents" | "getdents64" => (Emu, eff!(|o| { o.counted(a[1], a[2]) })),
        "readlink" => (Emu, eff!(|o| { o.counted(a[1], a[2]) })),
        "readlinkat" => (Emu, eff!(|o| { o.counted(a[2], a[3]) })),
        "getcwd" => (Emu, eff!(|o| { o.counted(a[0], a[1]) })),
        "getrandom" => (Emu, eff!(|o| { o.counted(a[0], a[1]) })),
        "sched_getaffinity" => (Emu, eff!(|o| { o.counted(a[2], a[1]) })),
        "getxattr" | "lgetxattr" | "fgetxattr" => (
            Emu,
            eff!(|o| {
                if a[3] != 0 {
                    o.counted(a[2], a[3]);
                }
            }),
        ),
        "listxattr" | "llistxattr" | "flistxattr" => (
            Emu,
            eff!(|o| {
                if a[2] != 0 {
                    o.counted(a[1], a[2]);
                }
            }),
        ),
        "listxattrat" => (
            Emu,
            eff!(|o| {
                if a[4] != 0 {
                    o.counted(a[3], a[4]);
                }
            }),
        ),
        "getxattrat" => (
            Emu,
            eff!(|o| {
                if o.count() > 0 && a[4] != 0 {
                    let mut raw = [0u8; 12];
                    o.read(a[4], &mut raw, "struct xattr_args")?;
                    let value = u64::from_ne_bytes(raw[0..8].try_into().expect("8"));
                    let size = u32::from_ne_bytes(raw[8..12].try_into().expect("4"));
                    o.counted(value, u64::from(size));
                }
            }),
        ),

        // ---- vectored reads ----
        "readv" | "preadv" | "preadv2" | "process_vm_readv" => (
            Emu,
            eff!(|o| {
                let n = o.count();
                o.iovecs(a[1], a[2], n)?;
            }),
        ),

        // ---- fixed-size results ----
        "stat" | "fstat" | "lstat" => (Emu, eff!(|o| { o.fixed(a[1], STAT) })),
        "newfstatat" => (Emu, eff!(|o| { o.fixed(a[2], STAT) })),
        "statx" => (Emu, eff!(|o| { o.fixed(a[4], STATX) })),
        "statfs" | "fstatfs" => (Emu, eff!(|o| { o.fixed(a[1], STATFS) })),
        "ustat" => (Emu, eff!(|o| { o.fixed(a[1], 32) })),
        "uname" => (Emu, eff!(|o| { o.fixed(a[0], UTSNAME) })),
        "sysinfo" => (Emu, eff!(|o| { o.fixed(a[0], SYSINFO) })),
        "times" => (Emu, eff!(|o| { o.fixed(a[0], TMS) })),
        "time" => (Emu, eff!(|o| { o.fixed(a[0], 8) })),
        "gettimeofday" => (
            Emu,
            eff!(|o| {
                o.fixed(a[0], TIMEVAL);
                o.fixed(a[1], 8);
            }),
        ),
        "clock_gettime" | "clock_getres" => (Emu, eff!(|o| { o.fixed(a[1], TIMESPEC) })),
        "sched_rr_get_interval" => (Emu, eff!(|o| { o.fixed(a[1], TIMESPEC) })),
        "adjtimex" => (Emu, eff!(|o| { o.fixed(a[0], TIMEX) })),
        "clock_adjtime" => (Emu, eff!(|o| { o.fixed(a[1], TIMEX) })),
        "getrlimit" => (Emu, eff!(|o| { o.fixed(a[1], RLIMIT) })),
        // Limits on the process's own memory (stack, address space, data) shape it: a new
        // one is set in replay too (the stack grows, and overflows, as it did).
        "prlimit64" if a[0] == 0 && a[2] != 0 && matches!(a[1], 2 | 3 | 9) => {
            (Exec, eff!(|o| { o.fixed(a[3], RLIMIT) }))
        }
        "setrlimit" if matches!(a[0], 2 | 3 | 9) => (Exec, nothing()),
        "prlimit64" => (Emu, eff!(|o| { o.fixed(a[3], RLIMIT) })),
        "getrusage" => (Emu, eff!(|o| { o.fixed(a[1], RUSAGE) })),
        "getitimer" => (Emu, eff!(|o| { o.fixed(a[1], ITIMERVAL) })),
        "setitimer" => (Emu, eff!(|o| { o.fixed(a[2], ITIMERVAL) })),
        "timer_gettime" | "timerfd_gettime" => (Emu, eff!(|o| { o.fixed(a[1], ITIMERSPEC) })),
        "timer_settime" | "timerfd_settime" => (Emu, eff!(|o| { o.fixed(a[3], ITIMERSPEC) })),
        "timer_create" => (Emu, eff!(|o| { o.fixed(a[2], 4) })),
        "pipe" | "pipe2" => (Emu, eff!(|o| { o.fixed(a[0], 8) })),
        "socketpair" => (Emu, eff!(|o| { o.fixed(a[3], 8) })),
        "getresuid" | "getresgid" => (
            Emu,
            eff!(|o| {
                o.fixed(a[0], 4);
                o.fixed(a[1], 4);
                o.fixed(a[2], 4);
            }),
        ),
        "getgroups" => (
            Emu,
            eff!(|o| {
                if a[0] != 0 {
                    let n = o.count().min(a[0] & 0xffff_ffff);
                    o.put(a[1], n * 4);
                }
            }),
        ),
        "sched_getparam" => (Emu, eff!(|o| { o.fixed(a[1], 4) })),
        "sched_getattr" => (Emu, eff!(|o| { o.fixed(a[1], a[2] & 0xffff_ffff) })),
        "getcpu" => (
            Emu,
            eff!(|o| {
                o.fixed(a[0], 4);
                o.fixed(a[1], 4);
            }),
        ),
        "get_robust_list" => (
            Emu,
            eff!(|o| {
                o.fixed(a[1], 8);
                o.fixed(a[2], 8);
            }),
        ),
        "rt_sigpending" => (Emu, eff!(|o| { o.fixed(a[0], a[1].min(SIGSET)) })),
        "mincore" => (
            Emu,
            eff!(|o| {
                let pages = a[1].div_ceil(4096);
                o.fixed(a[2], pages);
            }),
        ),
        "get_mempolicy" => (
            Emu,
            eff!(|o| {
                o.fixed(a[0], 4);
                if a[2] != 0 {
                    let bytes = (a[2] - 1).div_ceil(64) * 8;
                    o.fixed(a[1], bytes);
                }
            }),
        ),
        "move_pages" => (Emu, eff!(|o| { o.fixed(a[4], (a[1] & 0xffff_ffff) * 4) })),
        "mq_getsetattr" => (Emu, eff!(|o| { o.fixed(a[2], MQ_ATTR) })),
        "cachestat" => (Emu, eff!(|o| { o.fixed(a[2], 40) })),
        "file_getattr" => (Emu, eff!(|o| { o.fixed(a[2], a[3]) })),
        "statmount" => (Emu, eff!(|o| { o.fixed(a[1], a[2]) })),
        "listmount" | "listns" => (
            Emu,
            eff!(|o| {
                let n = o.count().min(a[2]);
                o.put(a[1], n * 8);
            }),
        ),
        "capget" => (
            Emu,
            eff!(|o| {
                // The kernel stores its preferred version into the header on a
                // version mismatch; on success the word is unchanged.
                if o.ok() || o.failed_with(EINVAL) {
                    o.put(a[0], 4);
                }
                if o.ok() && a[0] != 0 && a[1] != 0 {
                    let structs = match o.u32_at(a[0], "the capability header")? {
                        0x1998_0330 => 1,
                        0x2007_1026 | 0x2008_0522 => 2,
                        _ => 0,
                    };
                    o.put(a[1], structs * 12);
                }
            }),
        ),
        "name_to_handle_at" => (
            Emu,
            eff!(|o| {
                if o.ok() || o.failed_with(EOVERFLOW) {
                    let bytes = if o.ok() && a[2] != 0 {
                        u64::from(o.u32_at(a[2], "the file_handle")?).min(MAX_HANDLE_SZ)
                    } else {
                        0
                    };
                    o.put(a[2], 8 + bytes);
                    // AT_HANDLE_MNT_ID_UNIQUE (1): a u64 mount id.
                    o.put(a[3], if a[4] & 1 != 0 { 8 } else { 4 });
                }
            }),
        ),
        "lsm_get_self_attr" => (
            Emu,
            eff!(|o| {
                if o.ok() || o.failed_with(E2BIG) || o.failed_with(EOPNOTSUPP) {
                    o.put(a[2], 4);
                }
                if o.ok() && a[2] != 0 {
                    let total = o.u32_at(a[2], "the attribute size")?;
                    o.put(a[1], u64::from(total));
                }
            }),
        ),
        "lsm_list_modules" => (
            Emu,
            eff!(|o| {
                if o.ok() || o.failed_with(E2BIG) {
                    o.put(a[1], 4);
                }
                let n = o.count();
                o.put(a[0], n * 8);
            }),
        ),

        // ---- waiting ----
        "wait4" => (
            Emu,
            eff!(|o| {
                if o.result > 0 {
                    o.put(a[1], 4);
                    o.put(a[3], RUSAGE);
                }
            }),
        ),
        // IPT_SO_SET_REPLACE, IP6T_SO_SET_REPLACE: the kernel hands back the old table's
        // counters through the pointer of struct ipt_replace (num_counters at 84, counters
        // at 88), 16 bytes each. Every other option only reads.
        "setsockopt" if a[2] & 0xffff_ffff == 64 && matches!(a[1] & 0xffff_ffff, 0 | 41) => (
            Emu,
            eff!(|o| {
                if o.ok() {
                    let n = u64::from(o.u32_at(a[3] + 84, "struct ipt_replace")?);
                    let mut p = [0u8; 8];
                    o.read(a[3] + 88, &mut p, "struct ipt_replace")?;
                    o.put(u64::from_ne_bytes(p), n * 16);
                }
            }),
        ),
        "setsockopt" => (Emu, nothing()),
        "waitid" => (
            Emu,
            eff!(|o| {
                o.fixed(a[2], SIGINFO);
                o.fixed(a[4], RUSAGE);
                // Even when it fails the kernel fills in the siginfo's first six fields
                // (si_signo … si_status: zeros), unless the buffer was bad.
                if !o.ok() && !o.failed_with(EFAULT) {
                    o.put(a[2], 28);
                }
            }),
        ),
        "rt_sigtimedwait" => (
            Emu,
            eff!(|o| {
                if o.result > 0 {
                    o.put(a[1], SIGINFO);
                }
            }),
        ),
        "nanosleep" => (
            Emu,
            eff!(|o| {
                if is_interrupted(o.result) {
                    o.put(a[1], TIMESPEC);
                }
            }),
        ),
        "clock_nanosleep" => (
            Emu,
            eff!(|o| {
                // TIMER_ABSTIME (1): no remaining time is stored.
                if is_interrupted(o.result) && a[1] & 1 == 0 {
                    o.put(a[3], TIMESPEC);
                }
            }),
        ),
        "poll" | "ppoll" => (
            Emu,
            eff!(|o| {
                if o.ok() || is_interrupted(o.result) {
                    o.put(a[0], (a[1] & 0xffff_ffff) * POLLFD);
                }
                if name == "ppoll" && !o.failed_with(EFAULT) {
                    o.put(a[2], TIMESPEC);
                }
            }),
        ),
        "select" | "pselect6" => (Emu, eff!(|o| { o.select(&a) })),
        "epoll_wait" | "epoll_pwait" | "epoll_pwait2" => (
            Emu,
            eff!(|o| {
                let n = o.count().min(a[2] & 0xffff_ffff);
                o.put(a[1], n * EPOLL_EVENT);
            }),
        ),
        "futex" => futex_rule(&a, name, nr)?,

        // ---- sockets ----
        // accept leaves the length alone without an address buffer; getsockname and
        // getpeername write it back always.
        "accept" | "accept4" | "getsockname" | "getpeername" => (
            Emu,
            eff!(|o| {
                if o.ok() && (a[1] != 0 || matches!(name, "getsockname" | "getpeername")) {
                    o.sockaddr(a[1], a[2])?;
                }
            }),
        ),
        "recvfrom" => (
            Emu,
            eff!(|o| {
                o.counted(a[1], a[2]);
                if o.ok() {
                    o.sockaddr(a[4], a[5])?;
                }
            }),
        ),
        "recvmsg" => (
            Emu,
            eff!(|o| {
                if o.ok() {
                    let n = o.count();
                    o.msghdr(a[1], n)?;
                }
            }),
        ),
        "recvmmsg" => (
            Emu,
            eff!(|o| {
                o.recv_mmsg(a[1], a[2] & 0xffff_ffff)?;
                if o.result > 0 {
                    o.put(a[4], TIMESPEC);
                }
            }),
        ),
        "sendmmsg" => (
            Emu,
            eff!(|o| {
                let n = o.count().min(a[2] & 0xffff_ffff).min(UIO_MAXIOV);
                for i in 0..n {
                    o.put(a[1] + i * MMSGHDR + 56, 4);
                }
            }),
        ),
        "getsockopt" => {
            // TCP_ZEROCOPY_RECEIVE maps pages into the caller.
            if a[1] as i32 == 6 && a[2] as i32 == 35 {
                return Err(SyscallError::Unknown(
                    "getsockopt option IPPROTO_TCP/TCP_ZEROCOPY_RECEIVE (35) is not supported: it maps memory into the caller".into(),
                ));
            }
            (
                Emu,
                eff!(|o| {
                    if o.ok() && a[3] != 0 && a[4] != 0 {
                        let len = o.u32_at(a[4], "the option length")?;
                        o.put(a[4], 4);
                        o.put(a[3], u64::from(len));
                    } else if o.failed_with(ERANGE) {
                        o.put(a[4], 4);
                    }
                }),
            )
        }

        // ---- offsets written back ----
        "sendfile" => (Emu, eff!(|o| { o.fixed(a[2], 8) })),
        "splice" | "copy_file_range" => (
            Emu,
            eff!(|o| {
                o.fixed(a[1], 8);
                o.fixed(a[3], 8);
            }),
        ),

        // ---- message queues, System V IPC ----
        "mq_timedreceive" => (
            Emu,
            eff!(|o| {
                o.counted(a[1], a[2]);
                o.fixed(a[3], 4);
            }),
        ),
        "msgrcv" => (
            Emu,
            eff!(|o| {
                if o.ok() {
                    let n = o.count().min(a[2]);
                    o.put(a[1], 8 + n);
                }
            }),
        ),
        "msgctl" => ipc_ctl_rule(name, a[1], a[2], &MSGCTL)?,
        "shmctl" => ipc_ctl_rule(name, a[1], a[2], &SHMCTL)?,
        // GETALL: one unsigned short per semaphore of the set.
        "semctl" if a[2] & 0xffff_ffff & !0x100 == 13 => (
            Emu,
            eff!(|o| {
                if o.ok() {
                    o.put(a[3], 2 * semaphores(a[0])?);
                }
            }),
        ),
        "semctl" => ipc_ctl_rule(name, a[2], a[3], &SEMCTL)?,
        // Attaching and detaching a segment shape the memory map: replay maps (and unmaps)
        // the segment's memory as a shared file mapping of it.
        "shmat" | "shmdt" => (Exec, nothing()),

        // ---- multiplexers ----
        "ioctl" => (Emu, ioctl_rule(a[1] & 0xffff_ffff, a[2])?),
        "fcntl" => (Emu, fcntl_rule(a[1] & 0xffff_ffff, a[2])?),
        "prctl" => prctl_rule(&a)?,
        "arch_prctl" => (Exec, arch_prctl_rule(a[0], a[1])?),
        "keyctl" => (Emu, keyctl_rule(&a)?),
        "syslog" => match a[0] as i32 {
            2..=4 => (Emu, eff!(|o| { o.counted(a[1], a[2] & 0xffff_ffff) })),
            0 | 1 | 5..=10 => (Emu, nothing()),
            _ => return Err(unknown_request("syslog action", a[0], name)),
        },
        "quotactl" => (Emu, quotactl_rule(a[0], a[3], name)?),
        "quotactl_fd" => (Emu, quotactl_rule(a[1], a[3], name)?),
        "sysfs" => match a[0] {
            1 | 3 => (Emu, nothing()),
            // The name of file system type a[1]: a string of at most 16 bytes (the kernel's
            // longest names are shorter), its length seen in what was written.
            2 => (
                Emu,
                eff!(|o| {
                    if o.ok() {
                        let mut b = [0u8; 256];
                        o.read(a[2], &mut b[..1], "the file system name")?;
                        let mut n = 1;
                        while n < b.len() && b[n - 1] != 0 {
                            o.read(a[2] + n as u64, &mut b[n..n + 1], "the file system name")?;
                            n += 1;
                        }
                        o.put(a[2], n as u64);
                    }
                }),
            ),
            _ => return Err(unknown_request("sysfs option", a[0], name)),
        },
        "seccomp" => match a[0] {
            // SET_MODE_STRICT, SET_MODE_FILTER: change what the process may do.
            0 | 1 => (Exec, nothing()),
            // GET_ACTION_AVAIL
            2 => (Emu, nothing()),
            // GET_NOTIF_SIZES: struct seccomp_notif_sizes (3 × u16).
            3 => (Emu, eff!(|o| { o.fixed(a[2], 6) })),
            _ => return Err(unknown_request("seccomp operation", a[0], name)),
        },

        // ---- executed for real: they shape the process ----
        "mmap" | "munmap" | "mprotect" | "mremap" | "brk" | "madvise" | "remap_file_pages"
        | "pkey_mprotect" | "pkey_alloc" | "pkey_free" | "map_shadow_stack" | "mseal" => {
            (Exec, nothing())
        }
        // Locked pages are not dropped by madvise(MADV_DONTNEED) (it fails on them).
        "mlock" | "munlock" | "mlockall" | "munlockall" | "mlock2" => (Exec, nothing()),
        "fork" | "vfork" | "execve" | "execveat" | "exit" | "exit_group" => (Exec, nothing()),
        "set_tid_address" | "set_robust_list" | "rt_sigreturn" | "personality" => (Exec, nothing()),
        "rt_sigaction" => (Exec, eff!(|o| { o.fixed(a[2], KSIGACTION) })),
        "rt_sigprocmask" => (Exec, eff!(|o| { o.fixed(a[2], a[3].min(SIGSET)) })),
        "sigaltstack" => (Exec, eff!(|o| { o.fixed(a[1], STACK_T) })),
        "clone" => (
            Exec,
            eff!(|o| {
                const CLONE_PIDFD: u64 = 0x1000;
                const CLONE_PARENT_SETTID: u64 = 0x0010_0000;
                const CLONE_CHILD_SETTID: u64 = 0x0100_0000;
                if o.result > 0 && a[0] & (CLONE_PARENT_SETTID | CLONE_PIDFD) != 0 {
                    o.put(a[2], 4);
                }
                if o.result == 0 && a[0] & CLONE_CHILD_SETTID != 0 {
                    o.put(a[3], 4);
                }
            }),
        ),
        "clone3" => (
            Exec,
            eff!(|o| {
                if o.result >= 0 && !is_error(o.result) && a[0] != 0 {
                    let mut raw = [0u8; 32];
                    o.read(a[0], &mut raw, "struct clone_args")?;
                    let word =
                        |i: usize| u64::from_ne_bytes(raw[i * 8..i * 8 + 8].try_into().expect("8"));
                    let (flags, pidfd, child_tid, parent_tid) =
                        (word(0), word(1), word(2), word(3));
                    if o.result > 0 {
                        if flags & 0x0010_0000 != 0 {
                            o.put(parent_tid, 4);
                        }
                        if flags & 0x1000 != 0 {
                            o.put(pidfd, 4);
                        }
                    } else if flags & 0x0100_0000 != 0 {
                        o.put(child_tid, 4);
                    }
                }
            }),
        ),

        // ---- refused during recording and replay ----
        "rseq" => (Deny(libc::ENOSYS), nothing()),

        // ---- syscalls the kernel no longer implements ----
        "_sysctl" | "create_module" | "get_kernel_syms" | "query_module" | "nfsservctl"
        | "getpmsg" | "putpmsg" | "afs_syscall" | "tuxcall" | "security" | "vserver"
        | "epoll_ctl_old" | "epoll_wait_old" | "lookup_dcookie" => {
            (Emu, eff!(|o| { o.enosys_only()? }))
        }

        // ---- write nothing into the caller's memory ----
        "write"
        | "pwrite64"
        | "writev"
        | "pwritev"
        | "pwritev2"
        | "open"
        | "openat"
        | "openat2"
        | "creat"
        | "close"
        | "close_range"
        | "lseek"
        | "access"
        | "faccessat"
        | "faccessat2"
        | "dup"
        | "dup2"
        | "dup3"
        | "sched_yield"
        | "msync"
        | "pause"
        | "alarm"
        | "getpid"
        | "gettid"
        | "getppid"
        | "getuid"
        | "geteuid"
        | "getgid"
        | "getegid"
        | "getpgrp"
        | "getpgid"
        | "getsid"
        | "setsid"
        | "setpgid"
        | "setuid"
        | "setgid"
        | "setreuid"
        | "setregid"
        | "setresuid"
        | "setresgid"
        | "setfsuid"
        | "setfsgid"
        | "setgroups"
        | "capset"
        | "socket"
        | "connect"
        | "bind"
        | "listen"
        | "shutdown"
        | "sendto"
        | "sendmsg"
        | "kill"
        | "tkill"
        | "tgkill"
        | "rt_sigqueueinfo"
        | "rt_tgsigqueueinfo"
        | "rt_sigsuspend"
        | "pidfd_send_signal"
        | "pidfd_open"
        | "pidfd_getfd"
        | "flock"
        | "fsync"
        | "fdatasync"
        | "syncfs"
        | "sync"
        | "sync_file_range"
        | "truncate"
        | "ftruncate"
        | "fallocate"
        | "fadvise64"
        | "readahead"
        | "chdir"
        | "fchdir"
        | "chroot"
        | "pivot_root"
        | "rename"
        | "renameat"
        | "renameat2"
        | "mkdir"
        | "mkdirat"
        | "rmdir"
        | "link"
        | "linkat"
        | "unlink"
        | "unlinkat"
        | "symlink"
        | "symlinkat"
        | "mknod"
        | "mknodat"
        | "chmod"
        | "fchmod"
        | "fchmodat"
        | "fchmodat2"
        | "chown"
        | "fchown"
        | "lchown"
        | "fchownat"
        | "umask"
        | "utime"
        | "utimes"
        | "futimesat"
        | "utimensat"
        | "setxattr"
        | "lsetxattr"
        | "fsetxattr"
        | "setxattrat"
        | "removexattr"
        | "lremovexattr"
        | "fremovexattr"
        | "removexattrat"
        | "file_setattr"
        | "getpriority"
        | "setpriority"
        | "sched_setparam"
        | "sched_setscheduler"
        | "sched_getscheduler"
        | "sched_get_priority_max"
        | "sched_get_priority_min"
        | "sched_setaffinity"
        | "sched_setattr"
        | "ioprio_set"
        | "ioprio_get"
        | "mbind"
        | "set_mempolicy"
        | "set_mempolicy_home_node"
        | "migrate_pages"
        | "process_mrelease"
        | "membarrier"
        | "setrlimit"
        | "settimeofday"
        | "clock_settime"
        | "timer_getoverrun"
        | "timer_delete"
        | "timerfd_create"
        | "eventfd"
        | "eventfd2"
        | "signalfd"
        | "signalfd4"
        | "epoll_create"
        | "epoll_create1"
        | "epoll_ctl"
        | "inotify_init"
        | "inotify_init1"
        | "inotify_add_watch"
        | "inotify_rm_watch"
        | "fanotify_init"
        | "fanotify_mark"
        | "memfd_create"
        | "memfd_secret"
        | "tee"
        | "mq_open"
        | "mq_unlink"
        | "mq_timedsend"
        | "mq_notify"
        | "msgget"
        | "msgsnd"
        | "semget"
        | "semop"
        | "semtimedop"
        | "shmget"
        | "futex_wake"
        | "futex_wait"
        | "futex_requeue"
        | "futex_waitv"
        | "unshare"
        | "setns"
        | "kcmp"
        | "acct"
        | "mount"
        | "umount2"
        | "open_tree"
        | "open_tree_attr"
        | "move_mount"
        | "fsopen"
        | "fsconfig"
        | "fsmount"
        | "fspick"
        | "mount_setattr"
        | "swapon"
        | "swapoff"
        | "reboot"
        | "sethostname"
        | "setdomainname"
        | "vhangup"
        | "init_module"
        | "finit_module"
        | "delete_module"
        | "kexec_load"
        | "kexec_file_load"
        | "add_key"
        | "request_key"
        | "landlock_create_ruleset"
        | "landlock_add_rule"
        | "landlock_restrict_self"
        | "lsm_set_self_attr"
        | "open_by_handle_at" => (Emu, nothing()),

        // ---- known, but recording them is not supported ----
        "ptrace" => {
            return Err(SyscallError::Refused(format!(
                "syscall {name} ({nr}) is not supported: the program is traced by the recorder, \
                 and cannot trace another process"
            )))
        }
        // The kernel resumes a sleep interrupted by a signal (nanosleep, clock_nanosleep,
        // poll, futex with a timeout): its result is recorded; what it writes (a remaining
        // time, only if interrupted again) is not.
        "restart_syscall" => (Emu, nothing()),
        // Linux AIO and io_uring complete asynchronously into kernel-written rings: refused
        // with ENOSYS (as rr does), so that programs that probe them fall back to plain
        // syscalls.
        "io_setup" | "io_destroy" | "io_getevents" | "io_submit" | "io_cancel"
        | "io_pgetevents" | "io_uring_setup" | "io_uring_enter" | "io_uring_register" => {
            (Deny(libc::ENOSYS), nothing())
        }
        // modify_ldt: reading the LDT (0) or the default one (2) copies up to `bytecount`
        // bytes out; writing an entry (1, 0x11) shapes the process: run again in replay, so
        // that its segment selectors mean what they meant.
        "modify_ldt" => match a[0] & 0xffff_ffff {
            0 | 2 => (Emu, eff!(|o| { o.counted(a[1], a[2]) })),
            1 | 0x11 => (Exec, nothing()),
            func => return Err(unknown_request("modify_ldt function", func, name)),
        },
        "set_thread_area" | "get_thread_area" => {
            return Err(unsupported(
                name,
                nr,
                "segment descriptor tables are not supported",
            ))
        }
        "iopl" | "ioperm" => return Err(unsupported(name, nr, "I/O port access is not supported")),
        "uselib" => return Err(unsupported(name, nr, "it maps a library (obsolete)")),
        "vmsplice" => {
            return Err(unsupported(
                name,
                nr,
                "it may write the caller's memory depending on the pipe end",
            ))
        }
        "process_madvise" => {
            return Err(unsupported(
                name,
                nr,
                "it may discard pages of the calling process (e.g. through a pidfd for itself)",
            ))
        }
        // The bytes land in process `pid` (a[0]), spread over its iovecs (a[3], a[4]) as far
        // as the result says: these writes are the caller's only when it writes to itself,
        // which the recorder checks ([`crate::writes_into`]).
        "process_vm_writev" => (
            Emu,
            eff!(|o| {
                let n = o.count();
                o.iovecs(a[3], a[4], n)?;
            }),
        ),
        // A counter's descriptor: its values come through read (recorded as any read) and
        // its ring buffer only through mmap, which a recorder refuses for anything but a
        // regular file. With a wrong `size` the kernel writes the size it expects back into
        // the attributes (E2BIG).
        "perf_event_open" => (
            Emu,
            eff!(|o| {
                if o.failed_with(E2BIG) {
                    o.put(a[0] + 4, 4);
                }
            }),
        ),
        "bpf" => {
            return Err(unsupported(
                name,
                nr,
                "the memory effects of bpf commands are not supported",
            ))
        }
        "userfaultfd" => {
            return Err(unsupported(
                name,
                nr,
                "userfaultfd resolves faults from user space",
            ))
        }
        "uretprobe" | "uprobe" => {
            return Err(unsupported(
                name,
                nr,
                "only kernel-installed uprobe trampolines call it",
            ))
        }
        _ => {
            return Err(SyscallError::Unknown(format!(
                "syscall {name} ({nr}): its effects are not modeled"
            )))
        }
    };
    Ok(Rule {
        name,
        class,
        effect,
    })
}

fn futex_rule(
    a: &[u64; 6],
    name: &'static str,
    _nr: u64,
) -> Result<(Replay, Effect), SyscallError> {
    let (uaddr, uaddr2) = (a[0], a[4]);
    // FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256) do not change effects.
    let op = a[1] & 0xffff_ffff & !(128 | 256);
    // For the PI operations the kernel may update the futex word (owner tid,
    // FUTEX_WAITERS) even when the call fails, so the word is reported unless
    // the address was bad or the operation unavailable.
    let pi_word = move |o: &mut Out<'_>, addr: u64| {
        if !o.failed_with(EFAULT) && !o.failed_with(ENOSYS) {
            o.put(addr, 4);
        }
    };
    let effect = match op {
        // WAIT, WAKE, REQUEUE, CMP_REQUEUE, WAIT_BITSET, WAKE_BITSET
        0 | 1 | 3 | 4 | 9 | 10 => nothing(),
        // WAKE_OP: the operation is applied to *uaddr2.
        5 => eff!(|o| { o.fixed(uaddr2, 4) }),
        // LOCK_PI, UNLOCK_PI, TRYLOCK_PI, LOCK_PI2
        6 | 7 | 8 | 13 => eff!(|o| { pi_word(o, uaddr) }),
        // WAIT_REQUEUE_PI, CMP_REQUEUE_PI: may take the PI lock at uaddr2.
        11 | 12 => eff!(|o| { pi_word(o, uaddr2) }),
        _ => return Err(unknown_request("futex operation", op, name)),
    };
    Ok((Replay::Emulate, effect))
}

/// What an ioctl request writes through its argument pointer.
enum Io {
    Nothing,
    Fixed(u64),
    Ifconf,
    Fiemap,
    Brctl,
}

fn ioctl_rule(req: u64, arg: u64) -> Result<Effect, SyscallError> {
    let io = match req {
        // termios and tty control: setters and actions
        0x5402..=0x5404 // TCSETS, TCSETSW, TCSETSF
        | 0x5406..=0x5408 // TCSETA, TCSETAW, TCSETAF
        | 0x5409..=0x540E // TCSBRK, TCXONC, TCFLSH, TIOCEXCL, TIOCNXCL, TIOCSCTTY
        | 0x5410 // TIOCSPGRP
        | 0x5412 // TIOCSTI
        | 0x5414 // TIOCSWINSZ
        | 0x5416..=0x5418 // TIOCMBIS, TIOCMBIC, TIOCMSET
        | 0x541A // TIOCSSOFTCAR
        | 0x541D // TIOCCONS
        | 0x5420..=0x5423 // TIOCPKT, FIONBIO, TIOCNOTTY, TIOCSETD
        | 0x5425 // TCSBRKP
        | 0x5427 | 0x5428 // TIOCSBRK, TIOCCBRK
        | 0x402C_542B..=0x402C_542D // TCSETS2, TCSETSW2, TCSETSF2
        | 0x4004_5431 // TIOCSPTLCK
        | 0x4004_5436 // TIOCSIG
        | 0x5437 // TIOCVHANGUP
        | 0x5441 // TIOCGPTPEER (returns a descriptor)
        | 0x5450..=0x5452 // FIONCLEX, FIOCLEX, FIOASYNC
        | 0x5457 // TIOCSLCKTRMIOS
        | 0x8901 | 0x8902 // FIOSETOWN, SIOCSPGRP
        | 0x4008_6602 // FS_IOC_SETFLAGS
        | 0x4004_9409 // FICLONE
        | 0x4020_940D // FICLONERANGE
        => Io::Nothing,
        0x5401 | 0x5456 => Io::Fixed(36), // TCGETS, TIOCGLCKTRMIOS: kernel struct termios
        0x5405 => Io::Fixed(17),          // TCGETA: struct termio (17 bytes written)
        0x802C_542A => Io::Fixed(44),     // TCGETS2: struct termios2
        0x5413 => Io::Fixed(8),           // TIOCGWINSZ: struct winsize
        0x540F // TIOCGPGRP
        | 0x5411 // TIOCOUTQ
        | 0x5415 // TIOCMGET
        | 0x5419 // TIOCGSOFTCAR
        | 0x541B // FIONREAD
        | 0x5424 // TIOCGETD
        | 0x5429 // TIOCGSID
        | 0x8004_5430 // TIOCGPTN
        | 0x8004_5432 // TIOCGDEV
        | 0x8004_5438 // TIOCGPKT
        | 0x8004_5439 // TIOCGPTLCK
        | 0x8004_5440 // TIOCGEXCL
        | 0x8903 | 0x8904 | 0x8905 // FIOGETOWN, SIOCGPGRP, SIOCATMARK
        | 0x8008_6601 // FS_IOC_GETFLAGS (the kernel stores an int)
        | 0x8008_7601 // FS_IOC_GETVERSION (the kernel stores an int)
        | 0x2 // FIGETBSZ
        | 0x1268 // BLKSSZGET
        | 0x8004_5200 // RNDGETENTCNT
        => Io::Fixed(4),
        0x5459 // TIOCSERGETLSR
        | 0x5600 // VT_OPENQRY
        | 0x4B44 // KDGKBMODE
        => Io::Fixed(4),
        0x545D => Io::Fixed(80), // TIOCGICOUNT: struct serial_icounter_struct
        // TUNSETIFF and TUNGETIFF copy the whole struct ifreq back, whatever their numbers
        // say (_IOW/_IOR of an int).
        0x4004_54CA | 0x8004_54D2 => Io::Fixed(40),
        0x5603 => Io::Fixed(6),  // VT_GETSTATE: struct vt_stat
        // Interface, route and bridge setters: the kernel only reads.
        0x890B | 0x890C // SIOCADDRT, SIOCDELRT
        | 0x8914 | 0x8916 | 0x8918 | 0x891A | 0x891C | 0x891E | 0x8922 | 0x8924 // SIOCSIF*
        | 0x89A0..=0x89A3 // SIOCBRADDBR, SIOCBRDELBR, SIOCBRADDIF, SIOCBRDELIF
        => Io::Nothing,
        0x5460 // FIOQSIZE
        | 0x1260 // BLKGETSIZE
        | 0x8008_1272 // BLKGETSIZE64
        => Io::Fixed(8),
        0x8906 | 0x8907 => Io::Fixed(16), // SIOCGSTAMP_OLD, SIOCGSTAMPNS_OLD
        // SIOCGIF{NAME,FLAGS,ADDR,DSTADDR,BRDADDR,NETMASK,METRIC,MTU,HWADDR,INDEX,TXQLEN}:
        // the whole struct ifreq is copied back.
        0x8910 | 0x8913 | 0x8915 | 0x8917 | 0x8919 | 0x891B | 0x891D | 0x8921 | 0x8927
        | 0x8933 | 0x8942 => Io::Fixed(40),
        0x8912 => Io::Ifconf, // SIOCGIFCONF
        0x8940 | 0x8941 => Io::Brctl, // SIOCGIFBR, SIOCSIFBR: the old bridge commands
        // perf events: ENABLE, DISABLE, REFRESH, RESET, SET_OUTPUT (`_IO`, no argument
        // written); the others encode their direction and size, except QUERY_BPF (below).
        0x2400..=0x2403 | 0x2405 => Io::Nothing,
        0xC020_660B => Io::Fiemap, // FS_IOC_FIEMAP
        // Requests whose size field understates what the kernel writes (buffers it points
        // to): never modeled from their bits.
        0xC018_6201 // BINDER_WRITE_READ
        | 0xC008_240A // PERF_EVENT_IOC_QUERY_BPF (an array of ids after the struct)
        => return Err(unknown_request("ioctl request", req, "ioctl")),
        _ => match ioc_bits(req) {
            Some(io) => io,
            None => return Err(unknown_request("ioctl request", req, "ioctl")),
        },
    };
    Ok(match io {
        Io::Nothing => nothing(),
        Io::Fixed(len) => eff!(|o| { o.fixed(arg, len) }),
        Io::Ifconf => eff!(|o| {
            if o.ok() && arg != 0 {
                let len = o.u32_at(arg, "struct ifconf")?;
                let mut b = [0u8; 8];
                o.read(arg + 8, &mut b, "struct ifconf")?;
                o.put(arg, 4);
                o.put(u64::from_ne_bytes(b), u64::from(len));
            }
        }),
        // `unsigned long args[3]`: only BRCTL_GET_BRIDGES (1) writes: as many ints at
        // `args[1]` as it returns (at most `args[2]`); the rest only read.
        Io::Brctl => eff!(|o| {
            if o.ok() && arg != 0 {
                let mut raw = [0u8; 24];
                o.read(arg, &mut raw, "the bridge command's arguments")?;
                let word =
                    |i: usize| u64::from_ne_bytes(raw[i * 8..i * 8 + 8].try_into().expect("8"));
                if word(0) == 1 {
                    o.put(word(1), o.count().min(word(2)) * 4);
                }
            }
        }),
        // struct fiemap (32 bytes), then fm_mapped_extents (at 20) extents of 56 bytes
        // (none are written when fm_extent_count is 0: only the count).
        Io::Fiemap => eff!(|o| {
            if o.ok() && arg != 0 {
                let wanted = u64::from(o.u32_at(arg + 24, "struct fiemap")?);
                let mapped = u64::from(o.u32_at(arg + 20, "struct fiemap")?);
                o.put(arg, 32);
                if wanted > 0 {
                    o.put(arg + 32, mapped.min(wanted) * 56);
                }
            }
        }),
    })
}

/// What an ioctl request's own encoding says it writes (`_IOC(dir, type, nr, size)`): with
/// `_IOC_READ` (the program reads: the kernel writes), `size` bytes at the argument; with
/// `_IOC_WRITE` alone, nothing. Requests without a direction or a size (the old ones, such
/// as the tty requests `0x54xx`, encode neither) say nothing.
fn ioc_bits(req: u64) -> Option<Io> {
    const IOC_WRITE: u64 = 1;
    const IOC_READ: u64 = 2;
    if req > u64::from(u32::MAX) {
        return None;
    }
    let dir = (req >> 30) & 3;
    let size = (req >> 16) & 0x3fff;
    if size == 0 {
        return None;
    }
    match dir {
        IOC_WRITE => Some(Io::Nothing),
        d if d & IOC_READ != 0 => Some(Io::Fixed(size)),
        _ => None,
    }
}

fn fcntl_rule(cmd: u64, arg: u64) -> Result<Effect, SyscallError> {
    Ok(match cmd {
        // F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_SETLK, F_SETLKW, F_SETOWN,
        // F_GETOWN, F_SETSIG, F_GETSIG, F_SETOWN_EX, F_OFD_SETLK, F_OFD_SETLKW
        0..=4 | 6..=11 | 15 | 37 | 38 => nothing(),
        // F_SETLEASE, F_GETLEASE, F_NOTIFY, F_DUPFD_QUERY, F_CREATED_QUERY, F_CANCELLK,
        // F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS
        1024..=1034 => nothing(),
        // F_SET_RW_HINT, F_SET_FILE_RW_HINT
        1036 | 1038 => nothing(),
        // F_GETLK, F_OFD_GETLK: struct flock
        5 | 36 => eff!(|o| { o.fixed(arg, FLOCK) }),
        // F_GETOWN_EX: struct f_owner_ex; F_GETOWNER_UIDS: two uid_t
        16 | 17 => eff!(|o| { o.fixed(arg, 8) }),
        // F_GET_RW_HINT, F_GET_FILE_RW_HINT: u64
        1035 | 1037 => eff!(|o| { o.fixed(arg, 8) }),
        _ => return Err(unknown_request("fcntl command", cmd, "fcntl")),
    })
}

fn prctl_rule(a: &[u64; 6]) -> Result<(Replay, Effect), SyscallError> {
    use Replay::{Emulate as Emu, Execute as Exec};
    let (arg2, arg3, arg5) = (a[1], a[2], a[4]);
    let option = a[0] & 0xffff_ffff;
    Ok(match option {
        // PR_SET_NAME, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS, PR_SET_SYSCALL_USER_DISPATCH,
        // PR_SET_MDWE, PR_SET_VMA: shape the process.
        15 | 22 | 38 | 59 | 65 | 0x5356_4d41 => (Exec, nothing()),
        // PR_SET_TSC: answered without running (success), so that rdtsc stays recorded.
        26 => (Replay::Deny(0), nothing()),
        // PR_SET_MM: PR_SET_MM_MAP_SIZE (14) only reports a size.
        35 if arg2 == 14 => (Emu, eff!(|o| { o.fixed(arg3, 4) })),
        35 => (Exec, nothing()),
        // PR_GET_PDEATHSIG, PR_GET_TSC, PR_GET_CHILD_SUBREAPER: an int at arg2
        2 | 25 | 37 => (Emu, eff!(|o| { o.fixed(arg2, 4) })),
        // PR_GET_NAME: 16 bytes
        16 => (Emu, eff!(|o| { o.fixed(arg2, 16) })),
        // PR_GET_TID_ADDRESS: a pointer
        40 => (Emu, eff!(|o| { o.fixed(arg2, 8) })),
        // PR_GET_AUXV: min(size, auxv size) bytes; returns the auxv size
        0x4155_5856 => (Emu, eff!(|o| { o.counted(arg2, arg3) })),
        // PR_SCHED_CORE: PR_SCHED_CORE_GET stores a u64 cookie at arg5
        62 => match arg2 {
            0 => (Emu, eff!(|o| { o.fixed(arg5, 8) })),
            1..=3 => (Emu, nothing()),
            _ => {
                return Err(unknown_request(
                    "prctl PR_SCHED_CORE command",
                    arg2,
                    "prctl",
                ))
            }
        },
        // PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_GET_KEEPCAPS,
        // PR_SET_KEEPCAPS, PR_GET_TIMING, PR_SET_TIMING, PR_GET_SECCOMP,
        // PR_CAPBSET_READ, PR_CAPBSET_DROP, PR_GET_SECUREBITS, PR_SET_SECUREBITS,
        // PR_SET_TIMERSLACK, PR_GET_TIMERSLACK, PR_TASK_PERF_EVENTS_{DISABLE,ENABLE},
        // PR_MCE_KILL, PR_MCE_KILL_GET, PR_SET_CHILD_SUBREAPER, PR_GET_NO_NEW_PRIVS,
        // PR_SET_THP_DISABLE, PR_GET_THP_DISABLE, PR_CAP_AMBIENT,
        // PR_{GET,SET}_SPECULATION_CTRL, PR_{SET,GET}_IO_FLUSHER, PR_GET_MDWE,
        // PR_{SET,GET}_MEMORY_MERGE, PR_SET_PTRACER: return values only.
        1
        | 3
        | 4
        | 7
        | 8
        | 13
        | 14
        | 21
        | 23
        | 24
        | 27..=34
        | 36
        | 39
        | 41
        | 42
        | 47
        | 52
        | 53
        | 57
        | 58
        | 66..=68
        | 0x5961_6d61 => (Emu, nothing()),
        _ => return Err(unknown_request("prctl option", option, "prctl")),
    })
}

fn arch_prctl_rule(code: u64, addr: u64) -> Result<Effect, SyscallError> {
    Ok(match code {
        // ARCH_SET_GS, ARCH_SET_FS, ARCH_GET_CPUID, ARCH_SET_CPUID,
        // ARCH_REQ_XCOMP_PERM, ARCH_REQ_XCOMP_GUEST_PERM, ARCH_MAP_VDSO_{X32,32,64},
        // ARCH_ENABLE_TAGGED_ADDR, ARCH_FORCE_TAGGED_SVA,
        // ARCH_SHSTK_{ENABLE,DISABLE,LOCK,UNLOCK}
        0x1001
        | 0x1002
        | 0x1011
        | 0x1012
        | 0x1023
        | 0x1025
        | 0x2001..=0x2003
        | 0x4002
        | 0x4004
        | 0x5001..=0x5004 => nothing(),
        // ARCH_GET_FS, ARCH_GET_GS, ARCH_GET_XCOMP_SUPP, ARCH_GET_XCOMP_PERM,
        // ARCH_GET_XCOMP_GUEST_PERM, ARCH_GET_UNTAG_MASK, ARCH_GET_MAX_TAG_BITS,
        // ARCH_SHSTK_STATUS: an unsigned long at addr
        0x1003 | 0x1004 | 0x1021 | 0x1022 | 0x1024 | 0x4001 | 0x4003 | 0x5005 => {
            eff!(|o| { o.fixed(addr, 8) })
        }
        _ => return Err(unknown_request("arch_prctl code", code, "arch_prctl")),
    })
}

fn keyctl_rule(a: &[u64; 6]) -> Result<Effect, SyscallError> {
    let (buf, len) = (a[2], a[3]);
    Ok(match a[0] & 0xffff_ffff {
        0..=5 | 7..=10 | 12..=16 | 18..=22 | 29 | 30 | 32 => nothing(),
        // KEYCTL_DESCRIBE, KEYCTL_READ, KEYCTL_GET_SECURITY, KEYCTL_DH_COMPUTE:
        // (buffer, buflen) in arg3/arg4, result = full length
        6 | 11 | 17 | 23 => eff!(|o| { o.counted(buf, len) }),
        // KEYCTL_CAPABILITIES: (buffer, buflen) in arg2/arg3
        31 => {
            let (buf, len) = (a[1], a[2]);
            eff!(|o| { o.counted(buf, len) })
        }
        op => return Err(unknown_request("keyctl operation", op, "keyctl")),
    })
}

fn quotactl_rule(cmd: u64, addr: u64, name: &str) -> Result<Effect, SyscallError> {
    let sub = (cmd & 0xffff_ffff) >> 8;
    Ok(match sub {
        // Q_SYNC, Q_QUOTAON, Q_QUOTAOFF, Q_SETINFO, Q_SETQUOTA
        0x0080_0001..=0x0080_0003 | 0x0080_0006 | 0x0080_0008 => nothing(),
        0x0080_0004 => eff!(|o| { o.fixed(addr, 4) }), // Q_GETFMT
        0x0080_0005 => eff!(|o| { o.fixed(addr, 24) }), // Q_GETINFO: if_dqinfo
        0x0080_0007 | 0x0080_0009 => eff!(|o| { o.fixed(addr, 72) }), // Q_GETQUOTA, Q_GETNEXTQUOTA
        _ => return Err(unknown_request("quotactl command", sub, name)),
    })
}

/// A System V `*ctl` command table: (commands writing nothing, (commands, size)…).
struct IpcCtl {
    nothing: &'static [u64],
    sized: &'static [(&'static [u64], u64)],
}

/// msgctl: IPC_RMID, IPC_SET; IPC_STAT/MSG_STAT/MSG_STAT_ANY → msqid64_ds;
/// IPC_INFO/MSG_INFO → struct msginfo.
const MSGCTL: IpcCtl = IpcCtl {
    nothing: &[0, 1],
    sized: &[(&[2, 11, 13], 120), (&[3, 12], 32)],
};
/// shmctl: IPC_RMID, IPC_SET, SHM_LOCK, SHM_UNLOCK; IPC_STAT/SHM_STAT/SHM_STAT_ANY →
/// shmid64_ds; IPC_INFO → shminfo64; SHM_INFO → struct shm_info.
const SHMCTL: IpcCtl = IpcCtl {
    nothing: &[0, 1, 11, 12],
    sized: &[(&[2, 13, 15], 112), (&[3], 72), (&[14], 48)],
};
/// semctl: IPC_RMID, IPC_SET, GETPID, GETVAL, GETNCNT, GETZCNT, SETVAL, SETALL;
/// IPC_STAT/SEM_STAT/SEM_STAT_ANY → semid64_ds; IPC_INFO/SEM_INFO → struct seminfo.
/// (GETALL writes one u16 per semaphore, a count the arguments do not give.)
const SEMCTL: IpcCtl = IpcCtl {
    nothing: &[0, 1, 11, 12, 14, 15, 16, 17],
    sized: &[(&[2, 18, 20], 104), (&[3, 19], 40)],
};

/// The number of semaphores of set `semid`, asked of the kernel (the recorder is in the
/// program's IPC namespace unless the program made its own).
fn semaphores(semid: u64) -> Result<u64, SyscallError> {
    // SAFETY: semid_ds is plain data; IPC_STAT fills it or fails.
    let mut ds: libc::semid_ds = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::semctl(
            semid as i32,
            0,
            libc::IPC_STAT,
            &mut ds as *mut libc::semid_ds,
        )
    };
    if r != 0 {
        return Err(SyscallError::Unknown(format!(
            "semctl GETALL of semaphore set {semid}: its size cannot be known ({})",
            std::io::Error::last_os_error()
        )));
    }
    Ok(ds.sem_nsems as u64)
}

fn ipc_ctl_rule(
    name: &'static str,
    cmd: u64,
    buf: u64,
    table: &IpcCtl,
) -> Result<(Replay, Effect), SyscallError> {
    // IPC_64 (0x100) is accepted by some libcs' conventions; strip it.
    let c = cmd & 0xffff_ffff & !0x100;
    if table.nothing.contains(&c) {
        return Ok((Replay::Emulate, nothing()));
    }
    for (cmds, size) in table.sized {
        if cmds.contains(&c) {
            let size = *size;
            return Ok((Replay::Emulate, eff!(|o| { o.fixed(buf, size) })));
        }
    }
    Err(unknown_request("command", c, name))
}

/// Reads the value-result lengths of syscall `nr` at entry (see
/// [`crate::entry_state`]); unreadable words are skipped.
pub(crate) fn entry_state(nr: u64, a: &[u64; 6], mem: &dyn Memory) -> EntryState {
    let mut st = EntryState::default();
    let mut take = |addr: u64| {
        if addr != 0 {
            let mut b = [0u8; 4];
            if mem.read(addr, &mut b).is_ok() {
                st.lens.push((addr, u32::from_ne_bytes(b)));
            }
        }
    };
    match crate::name(nr) {
        Some("accept" | "accept4" | "getsockname" | "getpeername") if a[1] != 0 => take(a[2]),
        Some("recvfrom") if a[4] != 0 => take(a[5]),
        Some("recvmsg") => {
            let mut name = [0u8; 8];
            if a[1] != 0 && mem.read(a[1], &mut name).is_ok() && name != [0; 8] {
                take(a[1] + 8);
            }
        }
        Some("recvmmsg") => {
            let n = (a[2] & 0xffff_ffff).min(UIO_MAXIOV);
            for i in 0..n {
                let hdr = a[1] + i * MMSGHDR;
                let mut name = [0u8; 8];
                if a[1] != 0 && mem.read(hdr, &mut name).is_ok() && name != [0; 8] {
                    take(hdr + 8);
                }
            }
        }
        _ => {}
    }
    st
}
