//! Layer 5: recording. Runs a program under ptrace with a seccomp filter that stops it at
//! every syscall, `PR_SET_TSC` so that `rdtsc` faults, and the vDSO hidden, and writes every
//! input the program does not determine itself into a trace (`hindsight-trace`): syscall
//! results and the memory they wrote, TSC values, signals and where they landed, thread
//! switches, child processes and the files they mapped.

mod agent;
mod channels;
mod cloak;
pub mod disguise;
pub mod error;
pub mod point;
pub mod recorder;
pub mod settle;
pub mod shared;
pub mod stop;
pub mod vsyscall;

pub use error::RecordError;
pub use recorder::{record, Outcome, RecordOptions};
