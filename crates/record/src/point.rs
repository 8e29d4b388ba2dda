//! Asynchronous positions: where a thread was stopped in code that makes no syscall (a
//! preemption, an asynchronous signal), named without an instruction counter.
//!
//! DESIGN.md ("Time"): the position is the full register set, a digest of the top of the
//! stack and the thread's CPU time since its previous event. Replay stops at the first
//! execution of the pc whose registers and stack digest match. Two executions that match are
//! indistinguishable to the program's registers and the top of its stack; replay checks the
//! following events against the recording, so a wrong match cannot pass unnoticed.

use hindsight_ptrace::{ProcessMemory, Regs};
use hindsight_trace::AsyncPoint;

/// Bytes of stack (from the stack pointer up) that the digest covers.
pub const DIGEST_BYTES: usize = 1024;
/// Index of orig_rax in the register words: not part of the program's state in user mode.
const ORIG_RAX: usize = 15;
/// Index of eflags: its trap and resume flags belong to the debugger, not the program.
const EFLAGS: usize = 18;
const EFLAGS_DEBUG_BITS: u64 = 0x100 | 0x10000;
/// Index of r11: a `syscall` instruction saves the flags there, the trap flag too when a
/// debugger stepped it (over a breakpoint planted on it, say).
const R11: usize = 6;

/// FNV-1a over the top of the stack (less when the stack ends sooner).
pub fn stack_digest(mem: &ProcessMemory, sp: u64) -> u64 {
    stack_digest_with(|addr, buf| mem.read(addr, buf).is_ok(), sp)
}

/// [`stack_digest`] through any reader of program memory (`read` fills the buffer or fails).
pub fn stack_digest_with(read: impl Fn(u64, &mut [u8]) -> bool, sp: u64) -> u64 {
    let mut buf = [0u8; DIGEST_BYTES];
    let mut len = DIGEST_BYTES;
    while len > 0 && !read(sp, &mut buf[..len]) {
        len /= 2;
    }
    buf[..len].iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The CPU time (ns) thread `tid` of `pid` has used, from /proc (0 if unreadable).
pub fn thread_cpu_ns(pid: i32, tid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The top of the stack (up to [`DIGEST_BYTES`] bytes; less when the stack ends sooner).
pub fn stack_top_with(read: impl Fn(u64, &mut [u8]) -> bool, sp: u64) -> Vec<u8> {
    let mut buf = vec![0u8; DIGEST_BYTES];
    let mut len = DIGEST_BYTES;
    while len > 0 && !read(sp, &mut buf[..len]) {
        len /= 2;
    }
    buf.truncate(len);
    buf
}

/// The position of a thread stopped with `regs`, after `ticks` ticks if it is counted.
pub fn capture(mem: &ProcessMemory, regs: &Regs, cpu_ns: u64, ticks: Option<u64>) -> AsyncPoint {
    AsyncPoint {
        regs: regs.to_words(),
        stack_digest: stack_digest(mem, regs.sp()),
        stack: stack_top_with(|a, b| mem.read(a, b).is_ok(), regs.sp()),
        cpu_ns,
        ticks,
    }
}

/// True when a thread stopped with `regs` is at `point`; `read` reads program memory. The
/// top of the stack is compared with the recorded bytes, except the words of signal frames
/// that hold the thread's last trap (see [`frame_noise`]); without recorded bytes, by the
/// digest.
pub fn matches(point: &AsyncPoint, regs: &Regs, read: impl Fn(u64, &mut [u8]) -> bool) -> bool {
    if !same_registers(&point.regs, &regs.to_words()) {
        return false;
    }
    if point.stack.is_empty() {
        return stack_digest_with(read, regs.sp()) == point.stack_digest;
    }
    let mut now = vec![0u8; point.stack.len()];
    if !read(regs.sp(), &mut now) {
        return false;
    }
    let noise = frame_noise(&point.stack, |a, b| read(a, b));
    now.chunks(8)
        .zip(point.stack.chunks(8))
        .enumerate()
        .all(|(k, (x, y))| x == y || noise.contains(&k))
}

/// The code of the x86-64 signal return trampoline (`mov $15, %rax; syscall`), which a
/// signal frame's first word points to.
const RESTORER: [u8; 9] = [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];

/// Word offsets, from a signal frame's first word, of the saved `err`, `trapno` and `cr2`:
/// the ucontext (flags, link, 24-byte stack) starts at word 1, its registers at word 6.
const FRAME_NOISE: [usize; 3] = [6 + 19, 6 + 20, 6 + 22];

/// The indices of the words of `stack` (a top of stack, from rsp up) that a replay cannot
/// reproduce: in each signal frame found there (a word pointing at the signal return
/// trampoline, read through `read`), the kernel saves the thread's last trap number, error
/// code and fault address — and replay's own traps (breakpoints, single steps) change them.
/// For an asynchronous signal they mean nothing to the program.
pub fn frame_noise(stack: &[u8], read: impl Fn(u64, &mut [u8]) -> bool) -> Vec<usize> {
    let mut noise = Vec::new();
    for (k, w) in stack.chunks_exact(8).enumerate() {
        let addr = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        if addr < 0x1000 {
            continue;
        }
        let mut code = [0u8; 9];
        if read(addr, &mut code) && code == RESTORER {
            noise.extend(FRAME_NOISE.iter().map(|o| k + o));
        }
    }
    noise
}

/// Register equality as the program sees it (orig_rax and the debug flags ignored, in the
/// flags and in the copy a syscall leaves in r11).
pub fn same_registers(a: &[u64; 27], b: &[u64; 27]) -> bool {
    a.iter()
        .zip(b.iter())
        .enumerate()
        .all(|(i, (x, y))| match i {
            ORIG_RAX => true,
            EFLAGS | R11 => (x | EFLAGS_DEBUG_BITS) == (y | EFLAGS_DEBUG_BITS),
            _ => x == y,
        })
}
