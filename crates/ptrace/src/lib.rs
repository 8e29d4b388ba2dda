//! Layer 1 of hindsight: Linux processes and threads under ptrace.
//!
//! This crate is the only place that makes ptrace calls. It knows nothing of breakpoints or
//! symbols: it spawns a traced program, reports why threads stopped, and reads and writes their
//! registers and memory. Every call here is a kernel round trip, so callers batch where they can.
//!
//! Kernel facts this crate relies on (and that surprise people):
//! - Tracees are attached with `PTRACE_SEIZE`, never `PTRACE_TRACEME`: only seized tracees can be
//!   stopped with `PTRACE_INTERRUPT`, which stops a thread without sending it a signal (a SIGSTOP
//!   would be visible to the program and could be swallowed by a group stop).
//! - Threads created with `PTRACE_O_TRACECLONE` are seized automatically and start with a
//!   `PTRACE_EVENT_STOP`; their creation is also reported on the parent as `PTRACE_EVENT_CLONE`.
//!   The two notifications arrive in either order.
//! - `PTRACE_O_EXITKILL` makes the kernel SIGKILL every tracee when the tracer exits, however it
//!   exits: the program never outlives hindsight.
//! - `/proc/PID/mem` must be reopened after `execve`: an open descriptor keeps the old address space.

pub mod auxv;
pub mod error;
pub mod inject;
pub mod memory;
pub mod regs;
pub mod spawn;
pub mod thread;
pub mod tsc;
pub mod wait;

pub use error::PtraceError;
pub use memory::ProcessMemory;
pub use regs::{FpRegs, Regs};
pub use spawn::{spawn, SpawnOptions};
pub use thread::Tid;
pub use wait::{wait_any, wait_any_interruptible, wait_tid, Stop, WaitEvent};
