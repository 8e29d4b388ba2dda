//! What the agent and hindsight agree on: where the agent lives, the layout of its shared
//! state ([`Globals`]), the names of the addresses hindsight needs, and the codes of the
//! agent's reports.
//!
//! Every process gets the agent at [`BASE`], the same address in recording and replay: far
//! from where the kernel puts a program's mappings (they grow down from just below the
//! stack, 6 TiB above), and inside the application ranges of the sanitizers' fixed memory
//! maps (ThreadSanitizer, MemorySanitizer and AddressSanitizer all leave
//! 0x7a00_0000_0000–0x7fff_ffff_ffff to the program). The image is loaded there whole
//! (code, then its data: [`Globals`], the buffer and the agent's stack in its `.bss`).

/// Version of the agent's protocol (layout, record format, behaviour). A trace recorded
/// with one version replays only with the same one.
pub const VERSION: u64 = 2;

/// Where the image is loaded.
pub const BASE: u64 = 0x7a00_0000_0000;

/// The most address space the image may take (hindsight refuses a bigger one).
pub const MAX_SPAN: u64 = 8 << 20;

/// Bytes of the syscall buffer.
pub const BUFFER_SIZE: usize = 1 << 20;

/// Bytes of the agent's own stack.
pub const STACK_SIZE: usize = 64 << 10;

/// Descriptors below this number have an entry in [`Globals::fd_state`].
pub const FD_TABLE: usize = 4096;

/// How many shared file mappings the agent tells apart (beyond, every write is traced).
pub const MAX_SHARED_FILES: usize = 8;

/// [`Globals::magic`]: "hsAGENT1".
pub const MAGIC: u64 = u64::from_le_bytes(*b"hsAGENT1");

/// [`Globals::mode`]: not set up (every call falls back to a traced syscall).
pub const MODE_OFF: u64 = 0;
/// [`Globals::mode`]: recording.
pub const MODE_RECORD: u64 = 1;
/// [`Globals::mode`]: replaying.
pub const MODE_REPLAY: u64 = 2;

/// [`Globals::phase`]: not inside a buffered call, or preparing one (nothing done yet).
pub const PHASE_IDLE: u64 = 0;
/// [`Globals::phase`]: the buffered call's untraced syscall is (about to be) under way.
pub const PHASE_SYSCALL: u64 = 1;
/// [`Globals::phase`]: the call returned; its record is being written.
pub const PHASE_COMMIT: u64 = 2;

/// [`Globals::fd_state`]: not known yet (the agent looks at the descriptor on its first
/// write).
pub const FD_UNKNOWN: u8 = 0;
/// [`Globals::fd_state`]: not one of the recording's outputs: writes to it are buffered.
pub const FD_PLAIN: u8 = 1;
/// [`Globals::fd_state`]: the recording's stdout or stderr (a terminal, a file, a pipe):
/// writes to it stay traced, so that replay shows them in the order they were made.
pub const FD_OUTPUT: u8 = 2;

/// [`Globals::outputs`]' `how`: every descriptor of the file is the output (a terminal,
/// a pipe, a regular file: what a program writes there, through any descriptor, is what
/// the user sees, e.g. a write to `/dev/stderr` opened anew).
pub const OUTPUT_ANY: u64 = 0;
/// [`Globals::outputs`]' `how`: only descriptors of the same open file as hindsight's own
/// stdout or stderr (a character device that is not a terminal, e.g. `/dev/null`: a
/// program's own `open("/dev/null")` is not the recording's output, and its writes are
/// buffered).
pub const OUTPUT_SAME_OPEN_FILE: u64 = 1;

/// The signal the desched event sends (rr's "desched" signal): it interrupts a buffered
/// call that blocks so that hindsight can let another thread run. SIGSTKFLT: no program
/// uses it (its name is from the x87 era), and hindsight never delivers it (it tells its
/// own signal from a program's by its `si_code` and `si_fd`).
pub const DESCHED_SIGNAL: i32 = 16;

/// The agent's desched descriptors are moved to this number or above, out of the way of
/// the program's own descriptors.
pub const DESCHED_FD_FLOOR: i64 = 1000;

/// The syscall number of the agent's reports to hindsight (not a Linux syscall: ENOSYS if
/// ever run). The report's kind is in [`Globals::report`].
pub const REPORT_NR: u64 = 0x6873_4147;

/// [`Globals::report`]: the agent's state was overwritten (`report_a`: the address).
pub const REPORT_CORRUPT: u64 = 1;
/// [`Globals::report`]: replay: the program's syscall is not the recorded one
/// (`report_a`: the record's offset in the buffer).
pub const REPORT_MISMATCH: u64 = 2;

/// The registers of the program at its syscall, saved by the agent's entry and put back
/// when it returns (the agent sets rax, rcx and r11 for a handled call).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Frame {
    /// rax: the syscall number, then the result.
    pub rax: u64,
    /// rbx.
    pub rbx: u64,
    /// rcx: set by the agent: 0 when it handled the call, 1 to have the stub execute it.
    pub rcx: u64,
    /// rdx: third argument.
    pub rdx: u64,
    /// rsi: second argument.
    pub rsi: u64,
    /// rdi: first argument.
    pub rdi: u64,
    /// rbp.
    pub rbp: u64,
    /// r8: fifth argument.
    pub r8: u64,
    /// r9: sixth argument.
    pub r9: u64,
    /// r10: fourth argument.
    pub r10: u64,
    /// r11: set by the agent (the flags) for a handled call.
    pub r11: u64,
    /// r12.
    pub r12: u64,
    /// r13.
    pub r13: u64,
    /// r14.
    pub r14: u64,
    /// r15.
    pub r15: u64,
    /// The flags.
    pub rflags: u64,
}

impl Frame {
    /// The syscall's six arguments.
    pub fn args(&self) -> [u64; 6] {
        [self.rdi, self.rsi, self.rdx, self.r10, self.r8, self.r9]
    }
}

/// The agent's state that hindsight reads and writes (one per process: one thread runs at
/// a time, and between two ptrace stops the buffer belongs to it).
#[repr(C)]
pub struct Globals {
    /// [`MAGIC`] (checked by the agent at every call and by hindsight at every drain).
    pub magic: u64,
    /// [`VERSION`].
    pub version: u64,
    /// [`MODE_RECORD`], [`MODE_REPLAY`] or [`MODE_OFF`] (set by hindsight).
    pub mode: u64,
    /// Bytes of records in the buffer: committed by the agent (recording), loaded by
    /// hindsight (replay).
    pub used: u64,
    /// Replay: bytes of records the agent has consumed.
    pub consumed: u64,
    /// Where the agent is in a buffered call (`PHASE_*`).
    pub phase: u64,
    /// The stack pointer at the agent's entry: it points at the return address into the
    /// stub (valid while a call is under way).
    pub saved_sp: u64,
    /// Recording: the running thread's desched descriptor (-1: none yet, -2: perf events
    /// are not available). Written by hindsight at each thread switch, read back at stops.
    pub desched_fd: i64,
    /// Recording: a desched descriptor that no thread uses any more (its thread exited, or a
    /// forked child inherited it), which the agent closes at its next call; -1: none.
    pub stale_fd: i64,
    /// Recording: the running thread's id (written by hindsight).
    pub tid: i64,
    /// Recording: how many other threads the process has (written by hindsight). With
    /// none, a call that blocks starves no one and the desched event is not armed.
    pub others: u64,
    /// Recording: (st_dev, st_ino, how) of the recording's stdout and stderr ((0, 0, _):
    /// none); `how` is [`OUTPUT_ANY`] or [`OUTPUT_SAME_OPEN_FILE`].
    pub outputs: [[u64; 3]; 2],
    /// Recording: hindsight's process id: an output of kind [`OUTPUT_SAME_OPEN_FILE`] is
    /// descriptor 1 (stdout) or 2 (stderr) of this process, compared with `kcmp`.
    pub recorder_pid: u64,
    /// Recording: (st_dev, st_ino) of files the process maps shared: a write to one changes
    /// the program's memory, which hindsight sees only at a stop, so those writes stay
    /// traced.
    pub shared_files: [[u64; 2]; MAX_SHARED_FILES],
    /// How many of `shared_files` are set; more than [`MAX_SHARED_FILES`]: every write stays
    /// traced.
    pub shared_count: u64,
    /// The kind of the agent's last report (`REPORT_*`), 0: none.
    pub report: u64,
    /// The report's detail.
    pub report_a: u64,
    /// Recording: calls the agent buffered (a running count, for statistics).
    pub buffered: u64,
    /// Recording: calls the agent sent back to be traced (a running count).
    pub fell_back: u64,
    /// The program's rcx at the last call the agent sent back to be traced (the frame's
    /// rcx then tells the stub to make the call): replay puts a thread stopped at such a
    /// call back at its stub's entry as it stood there.
    pub fallback_rcx: u64,
    /// The program's registers during a call.
    pub frame: Frame,
    /// The program's xmm0–xmm15 during a call (the agent's code may use SSE).
    pub xmm: [[u64; 2]; 16],
    /// Recording: what each descriptor below [`FD_TABLE`] is (`FD_*`).
    pub fd_state: [u8; FD_TABLE],
}

impl Globals {
    /// All zeros (the state of the image's `.bss` before hindsight sets it up).
    pub const fn zeroed() -> Globals {
        Globals {
            magic: 0,
            version: 0,
            mode: MODE_OFF,
            used: 0,
            consumed: 0,
            phase: PHASE_IDLE,
            saved_sp: 0,
            desched_fd: 0,
            stale_fd: 0,
            tid: 0,
            others: 0,
            outputs: [[0; 3]; 2],
            recorder_pid: 0,
            shared_files: [[0; 2]; MAX_SHARED_FILES],
            shared_count: 0,
            report: 0,
            report_a: 0,
            buffered: 0,
            fell_back: 0,
            fallback_rcx: 0,
            frame: Frame {
                rax: 0,
                rbx: 0,
                rcx: 0,
                rdx: 0,
                rsi: 0,
                rdi: 0,
                rbp: 0,
                r8: 0,
                r9: 0,
                r10: 0,
                r11: 0,
                r12: 0,
                r13: 0,
                r14: 0,
                r15: 0,
                rflags: 0,
            },
            xmm: [[0; 2]; 16],
            fd_state: [FD_UNKNOWN; FD_TABLE],
        }
    }
}

/// Byte offsets of the fields hindsight reads and writes, from the start of [`Globals`].
pub mod offsets {
    use super::Globals;
    use core::mem::offset_of;

    /// [`Globals::magic`].
    pub const MAGIC: usize = offset_of!(Globals, magic);
    /// [`Globals::mode`].
    pub const MODE: usize = offset_of!(Globals, mode);
    /// [`Globals::used`].
    pub const USED: usize = offset_of!(Globals, used);
    /// [`Globals::consumed`].
    pub const CONSUMED: usize = offset_of!(Globals, consumed);
    /// [`Globals::phase`].
    pub const PHASE: usize = offset_of!(Globals, phase);
    /// [`Globals::saved_sp`].
    pub const SAVED_SP: usize = offset_of!(Globals, saved_sp);
    /// [`Globals::desched_fd`].
    pub const DESCHED_FD: usize = offset_of!(Globals, desched_fd);
    /// [`Globals::stale_fd`].
    pub const STALE_FD: usize = offset_of!(Globals, stale_fd);
    /// [`Globals::tid`].
    pub const TID: usize = offset_of!(Globals, tid);
    /// [`Globals::others`].
    pub const OTHERS: usize = offset_of!(Globals, others);
    /// [`Globals::outputs`].
    pub const OUTPUTS: usize = offset_of!(Globals, outputs);
    /// [`Globals::recorder_pid`].
    pub const RECORDER_PID: usize = offset_of!(Globals, recorder_pid);
    /// [`Globals::shared_files`].
    pub const SHARED_FILES: usize = offset_of!(Globals, shared_files);
    /// [`Globals::shared_count`].
    pub const SHARED_COUNT: usize = offset_of!(Globals, shared_count);
    /// [`Globals::report`].
    pub const REPORT: usize = offset_of!(Globals, report);
    /// [`Globals::report_a`].
    pub const REPORT_A: usize = offset_of!(Globals, report_a);
    /// [`Globals::buffered`].
    pub const BUFFERED: usize = offset_of!(Globals, buffered);
    /// [`Globals::fell_back`].
    pub const FELL_BACK: usize = offset_of!(Globals, fell_back);
    /// [`Globals::fallback_rcx`].
    pub const FALLBACK_RCX: usize = offset_of!(Globals, fallback_rcx);
    /// [`Globals::frame`].
    pub const FRAME: usize = offset_of!(Globals, frame);
    /// [`Globals::xmm`].
    pub const XMM: usize = offset_of!(Globals, xmm);
    /// [`Globals::fd_state`].
    pub const FD_STATE: usize = offset_of!(Globals, fd_state);
    /// Bytes of the header hindsight reads at a stop (everything before the descriptor
    /// table).
    pub const HEADER: usize = FD_STATE;
}

/// Names of the image's exported symbols that hindsight needs (their addresses).
pub mod symbols {
    /// The entry the stubs call (a `call` from the stub, the program's stack 128 bytes
    /// below its red zone).
    pub const ENTRY: &str = "hs_agent_entry";
    /// The start of the agent's way back to the stub when it is off (just before the
    /// entry): from there to [`BODY`] the return address is at the stack pointer.
    pub const OFF: &str = "hs_agent_off";
    /// The first instruction after the entry saved the stack pointer (before it, from
    /// [`OFF`] on, the return address is at the stack pointer).
    pub const BODY: &str = "hs_agent_body";
    /// The agent's last instruction, its `ret` to the stub.
    pub const RETURN: &str = "hs_agent_return";
    /// The one syscall instruction the seccomp filter lets through.
    pub const UNTRACED: &str = "hs_untraced_syscall_insn";
    /// The report syscall instruction.
    pub const REPORT: &str = "hs_report_insn";
    /// A second untraced syscall instruction, which the agent never runs itself: when a
    /// buffered call blocks, hindsight moves the thread there (the kernel restarts the call
    /// from it), so that once the call returns the thread goes on to
    /// [`BLOCKED_DONE`] and stops, before it touches any of the agent's memory, which other
    /// threads use meanwhile.
    pub const BLOCKED: &str = "hs_blocked_syscall_insn";
    /// The traced syscall (number [`super::REPORT_NR`], the blocked call's result in rdi)
    /// right after [`BLOCKED`].
    pub const BLOCKED_DONE: &str = "hs_blocked_done_insn";
    /// [`super::Globals`].
    pub const GLOBALS: &str = "hs_globals";
    /// The syscall buffer.
    pub const BUFFER: &str = "hs_buffer";
}

/// Length of a `syscall` instruction: the pc after it is its address + this (what the
/// seccomp filter sees as the instruction pointer).
pub const SYSCALL_LEN: u64 = 2;

/// The stub a patched syscall site jumps to (see `hindsight-ticks`), byte for byte after
/// its `call`: hindsight finds the stub's fallback syscall from the return address.
pub mod stub {
    /// `lea rsp, [rsp - 128]` (skips the red zone), then the call.
    pub const RED_ZONE: u64 = 128;
    /// From the return address: `lea rsp, [rsp + 128]` (8 bytes), `jrcxz` (2 bytes), then
    /// the fallback `syscall`.
    pub const FALLBACK_FROM_RETURN: u64 = 10;
    /// From the return address to the end of the fallback `syscall` (the stub's
    /// continuation).
    pub const CONTINUE_FROM_RETURN: u64 = 12;
}

/// Whether a raw syscall result is one of the kernel's "interrupted, restart me" codes
/// (-ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK) or -EINTR.
pub fn interrupted(result: i64) -> bool {
    matches!(result, -4 | -512 | -513 | -514 | -516)
}
