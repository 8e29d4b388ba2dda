//! What x86-64 Linux syscalls do to a process, for record and replay.
//!
//! The recorder stops the program at every syscall. At syscall entry it asks
//! [`classify`] what replay will do with the call (emulate it, execute it for
//! real, or deny it); at syscall exit it asks [`writes`] which ranges of the
//! program's memory the kernel wrote, reads them and stores them. Replay then
//! skips emulated syscalls and puts the recorded bytes and result back.
//!
//! The crate never guesses: a syscall, or an `ioctl`/`fcntl`/`prctl`/… request,
//! whose memory effects are not modeled here is reported as
//! [`SyscallError::Unknown`], naming it.
//!
//! Conventions used throughout:
//! * `args` are the six raw argument registers (`rdi, rsi, rdx, r10, r8, r9`).
//! * `result` is the raw `rax` at syscall exit; `-4095..=-1` is a negative
//!   errno ([`is_error`]). Failed syscalls write nothing, except where the
//!   kernel writes on failure too (e.g. `nanosleep`'s remaining time when
//!   interrupted, see [`is_interrupted`]).
//! * Ranges are capped by the lengths the program passed and are never
//!   larger than what the kernel could have written. Where the kernel writes a
//!   few scattered fields of a structure (e.g. `revents` of each `pollfd`), the
//!   whole structure is reported: the bytes in between are unchanged, so
//!   storing and restoring them is harmless.
//! * Null pointers are never reported.
//!
//! Coverage: every syscall of the x86-64 table is either modeled or refused
//! by name. `ptrace` is [`SyscallError::Refused`]: it must not run at all.
//! Not modeled (an [`SyscallError::Unknown`] saying why; a recorder may let
//! such a call run and keep it if the kernel refused it, as a failed call
//! writes nothing): `modify_ldt`'s unknown functions,
//! `set_thread_area`/`get_thread_area`, `iopl`/`ioperm`, `uselib`,
//! `vmsplice`, `process_madvise`, `bpf`, `userfaultfd`, `uretprobe`/`uprobe`, and unknown requests of the
//! multiplexers (`ioctl`, `fcntl`, `prctl`, `arch_prctl`, `futex`, `keyctl`,
//! `syslog`, `quotactl`, `sysfs`, `seccomp`, `msgctl`/`shmctl`/`semctl`). An
//! `ioctl` request that is not in the table but encodes its direction and size
//! (`_IOR`/`_IOWR`: the kernel writes that many bytes at the argument; `_IOW`:
//! it writes nothing) is modeled from those bits, except the requests known to
//! write more than their size says. Linux AIO and `io_uring` are denied with
//! `ENOSYS`, so that programs fall back to plain syscalls.
//! `process_vm_writev` is modeled as writes in the caller: valid only when its target
//! process is the caller itself, which [`writes_into`] lets a recorder check.
//! Syscalls the kernel no longer implements (`_sysctl`, `create_module`, …)
//! are accepted only when they return `-ENOSYS`.

#![warn(missing_docs)]

mod rules;
mod table;

use thiserror::Error;

/// Name of an x86-64 syscall number (`0` → `"read"`, `257` → `"openat"`, …).
///
/// Covers the complete x86-64 table of the kernel's `syscall_64.tbl`
/// (numbers `0..=470`, with the unassigned gap `337..=423`); `None` for
/// numbers that are not x86-64 syscalls (including the x32-only `512..`).
pub fn name(nr: u64) -> Option<&'static str> {
    if nr > table::MAX_NR {
        return None;
    }
    let n = table::NAMES[nr as usize];
    (!n.is_empty()).then_some(n)
}

/// Number of a syscall by name (inverse of [`name`]); `None` for unknown names.
pub fn number(name: &str) -> Option<u64> {
    if name.is_empty() {
        return None;
    }
    table::NAMES
        .iter()
        .position(|n| *n == name)
        .map(|nr| nr as u64)
}

/// Whether a raw syscall result (`rax`) is a negative errno (`-4095..=-1`).
pub fn is_error(result: i64) -> bool {
    (-4095..=-1).contains(&result)
}

/// Whether a raw syscall result means "interrupted by a signal": `-EINTR`, or
/// one of the kernel-internal restart codes a tracer can see at syscall exit
/// (`-ERESTARTSYS` 512, `-ERESTARTNOINTR` 513, `-ERESTARTNOHAND` 514,
/// `-ERESTART_RESTARTBLOCK` 516).
pub fn is_interrupted(result: i64) -> bool {
    matches!(result, -4 | -512 | -513 | -514 | -516)
}

/// What replay does with a syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Replay {
    /// Skipped; the recorded result and memory writes are applied instead.
    Emulate,
    /// Executed for real (it changes the process: memory map, threads, signal
    /// state, program), then checked/fixed up by replay.
    Execute,
    /// Refused during recording AND replay: this errno (positive, e.g.
    /// `libc::ENOSYS`) is returned to the program without running the call
    /// (`Deny(0)`: success, for a setting the recorder keeps for itself).
    Deny(i32),
}

/// Why a syscall could not be classified or its writes computed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SyscallError {
    /// The syscall, or a request of a multiplexing syscall, is not known or
    /// not supported; the message names it, e.g. `syscall 999 (unknown
    /// number)` or `ioctl request 0xc0186201 on syscall ioctl (unknown)`.
    #[error("{0}")]
    Unknown(String),
    /// A syscall that must not run while the program is recorded (`ptrace`: the recorder is
    /// already its tracer); the message says why.
    #[error("{0}")]
    Refused(String),
    /// Reading an indirect structure from the program's memory failed, e.g.
    /// `reading the iovec array of readv at 0x7ffc1000: Bad address`.
    #[error("{0}")]
    Memory(String),
}

/// Reads the stopped program's memory (the recorder implements it with
/// `process_vm_readv`).
pub trait Memory {
    /// Fills `buf` with the program's bytes at `addr..addr + buf.len()`; fails
    /// if any of them cannot be read.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), std::io::Error>;
}

/// One range of the program's memory that a syscall wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Written {
    /// Start address in the program.
    pub addr: u64,
    /// Length in bytes (never 0).
    pub len: usize,
}

/// Classifies syscall `nr` with its arguments (at syscall entry).
///
/// [`Replay::Execute`] for the syscalls that shape the process (memory map,
/// threads, signal state, program, `arch_prctl`, the process-shaping `prctl`
/// options, `personality`, `seccomp` filters, protection keys, shadow stacks);
/// [`Replay::Deny`] for `rseq` (`ENOSYS`, so that glibc does not register a
/// kernel-written per-CPU area); [`Replay::Emulate`] for every other syscall
/// (and request) whose memory effects [`writes`] models; an error naming the
/// syscall or request otherwise.
///
/// `restart_syscall` is refused here because its effects are those of the
/// interrupted syscall it resumes (`nanosleep`, `clock_nanosleep`, `poll`,
/// `futex`, …, whichever last returned `-ERESTART_RESTARTBLOCK` in that
/// thread): a recorder should classify it, and compute its [`writes`], as
/// that syscall with its original arguments.
pub fn classify(nr: u64, args: &[u64; 6]) -> Result<Replay, SyscallError> {
    rules::rule(nr, args).map(|r| r.class)
}

/// The ranges syscall `nr` wrote in the calling process, given its arguments
/// and raw `result` (`rax` at syscall exit).
///
/// Indirect structures (iovec arrays, `msghdr`, the length word behind a
/// `socklen_t *`, …) are read through `mem`, as they are at syscall exit.
/// Failed calls (see [`is_error`]) write nothing except where the kernel
/// writes on failure too. Syscalls that replay executes report what the kernel
/// writes in the caller (e.g. the old action of `rt_sigaction`, the parent's
/// tid word of `clone`), which replay may use to check or fix up its re-run;
/// `mmap` and friends write nothing. Errors like [`classify`] for unknown
/// syscalls and requests.
///
/// Value-result socket address lengths (`accept`, `getsockname`, `recvfrom`,
/// `recvmsg`'s `msg_namelen`, …) are read back as the kernel left them: the
/// full address length, which is larger than what was copied only if the
/// program's buffer was too small for the address (the address is then
/// reported up to that full length, at most 128 bytes; the bytes past the
/// program's buffer are unchanged by the kernel). [`writes_with_entry`] with
/// an [`entry_state`] taken at syscall entry is exact in that case too.
pub fn writes(
    nr: u64,
    args: &[u64; 6],
    result: i64,
    mem: &dyn Memory,
) -> Result<Vec<Written>, SyscallError> {
    compute(nr, args, result, mem, None)
}

/// Like [`writes`], but with the [`EntryState`] taken at this syscall's entry,
/// so that returned socket addresses are capped by the caller's original
/// buffer length exactly as the kernel caps them.
pub fn writes_with_entry(
    nr: u64,
    args: &[u64; 6],
    result: i64,
    mem: &dyn Memory,
    entry: &EntryState,
) -> Result<Vec<Written>, SyscallError> {
    compute(nr, args, result, mem, Some(entry))
}

fn compute(
    nr: u64,
    args: &[u64; 6],
    result: i64,
    mem: &dyn Memory,
    entry: Option<&EntryState>,
) -> Result<Vec<Written>, SyscallError> {
    let rule = rules::rule(nr, args)?;
    let mut out = rules::Out::new(rule.name, result, mem, entry);
    (rule.effect)(&mut out)?;
    Ok(out.finish())
}

/// The process whose memory syscall `nr` writes when that may be another process than the
/// caller's: `process_vm_writev`'s `pid` (its [`writes`] are computed as if it were the
/// caller, true only when it is). `None` for every other syscall.
pub fn writes_into(nr: u64, args: &[u64; 6]) -> Option<i32> {
    (name(nr) == Some("process_vm_writev")).then_some(args[0] as i32)
}

/// Value-result lengths a syscall reads from memory and then overwrites
/// (e.g. the `socklen_t` behind `accept`'s `addrlen`, `recvmsg`'s
/// `msg_namelen`), captured at syscall entry by [`entry_state`] and used by
/// [`writes_with_entry`]. Empty for syscalls without such words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryState {
    /// (address of the length word, its value at entry)
    lens: Vec<(u64, u32)>,
}

impl EntryState {
    /// The value the length word at `addr` had at entry, if captured.
    pub fn len_at(&self, addr: u64) -> Option<u32> {
        self.lens.iter().find(|(a, _)| *a == addr).map(|(_, l)| *l)
    }

    /// Whether nothing was captured.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }
}

/// Captures, at syscall entry, the value-result lengths that syscall `nr`
/// will overwrite (`accept`, `accept4`, `getsockname`, `getpeername`,
/// `recvfrom`, `recvmsg`, `recvmmsg`). Never fails: words that cannot be read
/// are left out (the kernel will then fail the call with `EFAULT` too).
/// Cheap and empty for all other syscalls.
pub fn entry_state(nr: u64, args: &[u64; 6], mem: &dyn Memory) -> EntryState {
    rules::entry_state(nr, args, mem)
}
