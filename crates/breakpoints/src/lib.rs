//! Layer 3 of hindsight: breakpoint logic with no I/O of its own.
//!
//! - [`stepover`]: the step-over protocol as a pure state machine that the tracer drives and
//!   a model checker explores (seed 000): `Naive` (refuted), `NoSwitch` and `Displaced`.
//! - [`model`]: that model checker — an exhaustive explorer of seed 000's abstract machine
//!   with all-stop, several threads at the breakpoint, and hits that do not stop.
//! - [`displaced`]: plans for executing a breakpoint's original instruction elsewhere, so the
//!   trap never leaves memory.
//! - [`gate`]: state gates — a jump to code that compares the thread's registers and stack
//!   with wanted values inside the program and traps only on a match (replay's way to an
//!   asynchronous position without an instruction counter).
//! - [`table`]: user breakpoints and watchpoints as gdb numbers them; conditions, ignore
//!   counts, hit counts; the sites that hold an int3 (shared, with internal owners) and the
//!   writes that keep memory in step; and seed 004's zombie test.
//! - [`debugreg`]: x86 debug registers: splitting watched ranges, allocating free registers,
//!   DR7 encoding, DR6 decoding.

pub mod debugreg;
pub mod displaced;
pub mod gate;
pub mod model;
pub mod stepover;
pub mod table;
