//! hindsight's in-process agent (DESIGN.md, "In-process agent"): a small freestanding
//! library that hindsight maps into every recorded (and replayed) process, and that runs
//! the program's common syscalls without a ptrace stop each ("syscall buffering", rr's
//! syscallbuf).
//!
//! How a syscall reaches the agent: the instruction counter (`hindsight-ticks`) patches the
//! program's code when it is mapped, and it sends every `syscall` instruction it can patch
//! to a stub that calls [`abi::Symbols::entry`]. The agent either answers the call itself
//! ("handled": the result in rax) or asks the stub to execute the original `syscall` in
//! place ("fallback", a traced syscall as without the agent). Patching the syscall
//! instructions, rather than interposing libc's functions, reaches every syscall the
//! program makes through its libraries: glibc's own internal calls (`stat` through
//! `fstatat`, stdio's `write`, `readdir`'s `getdents64`) and the futex calls that its
//! mutexes and condition variables inline, which no symbol interposition can see.
//!
//! Recording: a buffered call runs from the agent's one *untraced* syscall instruction, the
//! only one that hindsight's seccomp filter lets through without a stop; its result and the
//! memory it wrote go into a per-process buffer ([`record`]) that hindsight drains at the
//! process's next ptrace stop (one thread runs at a time, so the buffer belongs to the
//! thread that runs). Replay: the agent takes each call's result from the buffer, which
//! hindsight fills from the trace before the thread runs, checks the call's number and
//! arguments against the recorded ones, and writes the recorded memory.
//!
//! Invariants the agent keeps (hindsight relies on them):
//! - It returns to the program with every register the program had, except rax (the result),
//!   rcx and r11 (which a `syscall` instruction clobbers: the agent leaves rcx = 0 and
//!   r11 = the flags, in recording and replay alike); flags, vector registers and the
//!   program's stack below its red zone are untouched (it runs on its own stack).
//! - It never touches GS (the counter page of `hindsight-ticks`) nor FS (the program's
//!   thread pointer), calls nothing of the program's, allocates nothing.
//! - Its code is not counted (it lives in anonymous memory that the counter does not
//!   patch): ticks stand still while it runs, so its recording path (real syscalls) and its
//!   replay path (results from the buffer) differ without moving any position.

#![cfg_attr(not(test), no_std)]
#![warn(missing_docs)]

pub mod abi;
pub mod calls;
pub mod record;

#[cfg(feature = "image")]
mod runtime;
