//! The code that runs inside the recorded or replayed process (compiled into the image only).
//!
//! A stub of a patched syscall site calls [`hs_agent_entry`] (assembly below) with the
//! program's registers as they were at its `syscall` instruction. The entry saves them into
//! [`Globals::frame`] (and xmm0–xmm15: the Rust code may use SSE), switches to the agent's own
//! stack (so that the program's stack holds the same bytes in recording and replay), runs
//! [`handle`], and puts the registers back as `handle` left them in the frame.
//!
//! Nothing here may fault on the program's behalf after a buffered call ran: the memory it
//! copies was just written (recording) or is where the recording wrote (replay).

use core::arch::global_asm;
use core::mem::offset_of;
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};
use core::sync::atomic::{compiler_fence, Ordering};

use crate::abi::*;
use crate::calls::{self, nr};
use crate::record;

/// The state shared with hindsight.
#[no_mangle]
pub static mut hs_globals: Globals = Globals::zeroed();

/// The syscall buffer.
#[no_mangle]
pub static mut hs_buffer: [u8; BUFFER_SIZE] = [0; BUFFER_SIZE];

#[repr(C, align(16))]
struct Stack([u8; STACK_SIZE]);

/// The agent's own stack.
static mut HS_STACK: Stack = Stack([0; STACK_SIZE]);

global_asm!(
    // The agent is off (MODE_OFF): the call goes back to its stub to be traced, and nothing
    // of the agent's state is touched. rcx is free (the syscall clobbers it), and neither
    // `mov` nor `jmp` changes the flags.
    ".globl hs_agent_off",
    "hs_agent_off:",
    "mov ecx, 1",
    "jmp hs_agent_return",
    ".globl hs_agent_entry",
    ".type hs_agent_entry,@function",
    "hs_agent_entry:",
    // rsp points at the return address into the stub; the program's flags are intact.
    // The mode is read before anything is saved: processes that share the agent's memory
    // without being threads of one process (clone(CLONE_VM) without CLONE_THREAD) run at
    // the same time, and the recorder switches the agent off for them.
    "mov rcx, [rip + {g} + {mode}]",
    "jrcxz hs_agent_off",
    "mov [rip + {g} + {sp}], rsp",
    // From here on the saved stack pointer holds the return address's place.
    ".globl hs_agent_body",
    "hs_agent_body:",
    "lea rsp, [rip + {stack} + {stack_size}]",
    "mov [rip + {g} + {f} + 0], rax",
    "mov [rip + {g} + {f} + 8], rbx",
    "mov [rip + {g} + {f} + 16], rcx",
    "mov [rip + {g} + {f} + 24], rdx",
    "mov [rip + {g} + {f} + 32], rsi",
    "mov [rip + {g} + {f} + 40], rdi",
    "mov [rip + {g} + {f} + 48], rbp",
    "mov [rip + {g} + {f} + 56], r8",
    "mov [rip + {g} + {f} + 64], r9",
    "mov [rip + {g} + {f} + 72], r10",
    "mov [rip + {g} + {f} + 80], r11",
    "mov [rip + {g} + {f} + 88], r12",
    "mov [rip + {g} + {f} + 96], r13",
    "mov [rip + {g} + {f} + 104], r14",
    "mov [rip + {g} + {f} + 112], r15",
    "pushfq",
    "pop rax",
    // A debugger single-stepping into the agent leaves the trap flag in what pushfq saw:
    // the program's flags never have it (the popfq below would trap after the return).
    "btr rax, 8",
    "mov [rip + {g} + {f} + 120], rax",
    "movdqu [rip + {g} + {x} + 0], xmm0",
    "movdqu [rip + {g} + {x} + 16], xmm1",
    "movdqu [rip + {g} + {x} + 32], xmm2",
    "movdqu [rip + {g} + {x} + 48], xmm3",
    "movdqu [rip + {g} + {x} + 64], xmm4",
    "movdqu [rip + {g} + {x} + 80], xmm5",
    "movdqu [rip + {g} + {x} + 96], xmm6",
    "movdqu [rip + {g} + {x} + 112], xmm7",
    "movdqu [rip + {g} + {x} + 128], xmm8",
    "movdqu [rip + {g} + {x} + 144], xmm9",
    "movdqu [rip + {g} + {x} + 160], xmm10",
    "movdqu [rip + {g} + {x} + 176], xmm11",
    "movdqu [rip + {g} + {x} + 192], xmm12",
    "movdqu [rip + {g} + {x} + 208], xmm13",
    "movdqu [rip + {g} + {x} + 224], xmm14",
    "movdqu [rip + {g} + {x} + 240], xmm15",
    // The C ABI wants the direction flag clear (the program's comes back with popfq).
    "cld",
    "call {handle}",
    "movdqu xmm0, [rip + {g} + {x} + 0]",
    "movdqu xmm1, [rip + {g} + {x} + 16]",
    "movdqu xmm2, [rip + {g} + {x} + 32]",
    "movdqu xmm3, [rip + {g} + {x} + 48]",
    "movdqu xmm4, [rip + {g} + {x} + 64]",
    "movdqu xmm5, [rip + {g} + {x} + 80]",
    "movdqu xmm6, [rip + {g} + {x} + 96]",
    "movdqu xmm7, [rip + {g} + {x} + 112]",
    "movdqu xmm8, [rip + {g} + {x} + 128]",
    "movdqu xmm9, [rip + {g} + {x} + 144]",
    "movdqu xmm10, [rip + {g} + {x} + 160]",
    "movdqu xmm11, [rip + {g} + {x} + 176]",
    "movdqu xmm12, [rip + {g} + {x} + 192]",
    "movdqu xmm13, [rip + {g} + {x} + 208]",
    "movdqu xmm14, [rip + {g} + {x} + 224]",
    "movdqu xmm15, [rip + {g} + {x} + 240]",
    "push qword ptr [rip + {g} + {f} + 120]",
    "popfq",
    "mov rax, [rip + {g} + {f} + 0]",
    "mov rbx, [rip + {g} + {f} + 8]",
    "mov rcx, [rip + {g} + {f} + 16]",
    "mov rdx, [rip + {g} + {f} + 24]",
    "mov rsi, [rip + {g} + {f} + 32]",
    "mov rdi, [rip + {g} + {f} + 40]",
    "mov rbp, [rip + {g} + {f} + 48]",
    "mov r8, [rip + {g} + {f} + 56]",
    "mov r9, [rip + {g} + {f} + 64]",
    "mov r10, [rip + {g} + {f} + 72]",
    "mov r11, [rip + {g} + {f} + 80]",
    "mov r12, [rip + {g} + {f} + 88]",
    "mov r13, [rip + {g} + {f} + 96]",
    "mov r14, [rip + {g} + {f} + 104]",
    "mov r15, [rip + {g} + {f} + 112]",
    "mov rsp, [rip + {g} + {sp}]",
    ".globl hs_agent_return",
    "hs_agent_return:",
    "ret",
    ".size hs_agent_entry, . - hs_agent_entry",
    //
    // extern "C" fn(nr, a0, a1, a2, a3, a4, a5) -> i64: the untraced syscall.
    ".globl hs_untraced_syscall",
    ".type hs_untraced_syscall,@function",
    "hs_untraced_syscall:",
    "mov rax, rdi",
    "mov rdi, rsi",
    "mov rsi, rdx",
    "mov rdx, rcx",
    "mov r10, r8",
    "mov r8, r9",
    "mov r9, [rsp + 8]",
    ".globl hs_untraced_syscall_insn",
    "hs_untraced_syscall_insn:",
    "syscall",
    "ret",
    ".size hs_untraced_syscall, . - hs_untraced_syscall",
    //
    // extern "C" fn(): a traced syscall that hindsight recognises by its address.
    ".globl hs_report",
    ".type hs_report,@function",
    "hs_report:",
    "mov rax, {report_nr}",
    ".globl hs_report_insn",
    "hs_report_insn:",
    "syscall",
    "ret",
    ".size hs_report, . - hs_report",
    //
    // A buffered call that blocked, moved here by hindsight (see abi::symbols::BLOCKED): its
    // result goes to rdi, and the thread stops at the traced syscall. It never comes back.
    ".globl hs_blocked_syscall_insn",
    "hs_blocked_syscall_insn:",
    "syscall",
    "mov rdi, rax",
    "mov eax, {report_nr}",
    ".globl hs_blocked_done_insn",
    "hs_blocked_done_insn:",
    "syscall",
    "ud2",
    g = sym hs_globals,
    sp = const offset_of!(Globals, saved_sp),
    mode = const offset_of!(Globals, mode),
    f = const offset_of!(Globals, frame),
    x = const offset_of!(Globals, xmm),
    stack = sym HS_STACK,
    stack_size = const STACK_SIZE,
    handle = sym handle,
    report_nr = const REPORT_NR,
);

extern "C" {
    fn hs_untraced_syscall(nr: u64, a0: u64, a1: u64, a2: u64, a3: u64, a4: u64, a5: u64) -> i64;
    fn hs_report();
}

fn untraced(nr: u64, a: &[u64; 6]) -> i64 {
    // SAFETY: a raw syscall; its memory arguments are the program's own or the agent's.
    unsafe { hs_untraced_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) }
}

fn globals() -> *mut Globals {
    addr_of_mut!(hs_globals)
}

/// Reads a field of the globals that hindsight may have changed while the thread was
/// stopped.
macro_rules! get {
    ($field:ident) => {
        // SAFETY: the globals live for the process; one thread runs the agent at a time.
        unsafe { read_volatile(addr_of!((*globals()).$field)) }
    };
}

/// Writes a field of the globals that hindsight reads at a stop.
macro_rules! set {
    ($field:ident, $v:expr) => {{
        let v = $v;
        // SAFETY: as for `get!`.
        unsafe { write_volatile(addr_of_mut!((*globals()).$field), v) };
        compiler_fence(Ordering::SeqCst);
    }};
}

/// The program's memory, read in place (a bad address faults: hindsight then sends the
/// call back to be traced, nothing having been done).
struct ProgramMemory;

impl calls::Memory for ProgramMemory {
    fn u64_at(&self, addr: u64) -> Option<u64> {
        // SAFETY: see the type's documentation.
        Some(unsafe { (addr as *const u64).read_unaligned() })
    }
}

/// Memory that reads as zeros (replay only needs a call's arity).
struct Zeros;

impl calls::Memory for Zeros {
    fn u64_at(&self, _: u64) -> Option<u64> {
        Some(0)
    }
}

/// Called by the entry with the program's registers in the frame.
extern "C" fn handle() {
    if get!(magic) != MAGIC || get!(version) != VERSION {
        report(REPORT_CORRUPT, globals() as u64);
        return fall_back();
    }
    match get!(mode) {
        MODE_RECORD => record_call(),
        MODE_REPLAY => replay_call(),
        _ => fall_back(),
    }
}

fn frame() -> Frame {
    get!(frame)
}

/// The call is the stub's to execute (traced), the registers as they were.
fn fall_back() {
    // SAFETY: one thread in the agent at a time.
    unsafe {
        (*globals()).fallback_rcx = (*globals()).frame.rcx;
        (*globals()).frame.rcx = 1;
    }
    let n = get!(fell_back);
    set!(fell_back, n.wrapping_add(1));
}

/// The call is answered: `result` in rax, rcx = 0, r11 = the flags.
fn answer(result: i64) {
    let g = globals();
    // SAFETY: one thread in the agent at a time.
    unsafe {
        (*g).frame.rax = result as u64;
        (*g).frame.rcx = 0;
        (*g).frame.r11 = (*g).frame.rflags;
    }
}

fn report(kind: u64, detail: u64) {
    set!(report_a, detail);
    set!(report, kind);
    // SAFETY: a syscall that hindsight stops at.
    unsafe { hs_report() };
}

/// Whether writes to `fd` may be buffered: not when it is one of the recording's outputs.
fn plain_fd(fd: u64) -> bool {
    let g = globals();
    let slot = (fd as usize) < FD_TABLE;
    if slot {
        // SAFETY: in bounds; one thread in the agent at a time.
        match unsafe { (*g).fd_state[fd as usize] } {
            FD_PLAIN => return true,
            FD_OUTPUT => return false,
            _ => {}
        }
    }
    let mut st = [0u64; 18];
    if untraced(nr::FSTAT, &[fd, st.as_mut_ptr() as u64, 0, 0, 0, 0]) < 0 {
        // The write will fail the same way: buffer its error, remember nothing.
        return true;
    }
    let same = |o: &[u64]| (o[0] | o[1]) != 0 && o[0] == st[0] && o[1] == st[1];
    let outputs = get!(outputs);
    let shared = get!(shared_files);
    let count = get!(shared_count) as usize;
    let output = shared.iter().take(count).any(|o| same(o))
        || outputs.iter().enumerate().any(|(i, o)| {
            same(o) && (o[2] != OUTPUT_SAME_OPEN_FILE || same_open_file(fd, i as u64 + 1))
        });
    if slot {
        // SAFETY: as above.
        unsafe { (*g).fd_state[fd as usize] = if output { FD_OUTPUT } else { FD_PLAIN } };
    }
    !output
}

/// Whether `fd` is a pipe, a FIFO or a socket (an error: no).
fn is_channel(fd: u64) -> bool {
    const S_IFMT: u64 = 0o170000;
    const S_IFIFO: u64 = 0o010000;
    const S_IFSOCK: u64 = 0o140000;
    let mut st = [0u64; 18];
    if untraced(nr::FSTAT, &[fd, st.as_mut_ptr() as u64, 0, 0, 0, 0]) < 0 {
        return false;
    }
    // st_mode: the low half of the fourth word (after st_dev, st_ino, st_nlink).
    let kind = st[3] & S_IFMT;
    kind == S_IFIFO || kind == S_IFSOCK
}

/// Whether the program's `fd` is the same open file as descriptor `theirs` of hindsight's
/// process (`kcmp`); when it cannot tell (a seccomp filter of the program's refused it,
/// hindsight is gone), it says yes: the write then stays traced, as an output's would.
fn same_open_file(fd: u64, theirs: u64) -> bool {
    let me = untraced(nr::GETPID, &[0; 6]);
    let them = get!(recorder_pid);
    // 0: the same; 1, 2, 3: not (ordered or not); negative: an error.
    let r = untraced(KCMP, &[me as u64, them, KCMP_FILE, fd, theirs, 0]);
    r <= 0
}

/// Whether descriptor `fd` is of a procfs file (`fstatfs`; an error says no: the call
/// fails the same way buffered).
fn on_procfs(fd: u64) -> bool {
    const PROC_SUPER_MAGIC: u64 = 0x9fa0;
    // struct statfs: 120 bytes, f_type first.
    let mut st = [0u64; 15];
    untraced(FSTATFS, &[fd, st.as_mut_ptr() as u64, 0, 0, 0, 0]) == 0 && st[0] == PROC_SUPER_MAGIC
}

const FSTATFS: u64 = 138;
const KCMP: u64 = 312;
const KCMP_FILE: u64 = 0;
const IOCTL: u64 = 16;
const FCNTL: u64 = 72;
const PERF_EVENT_OPEN: u64 = 298;
const PERF_EVENT_IOC_DISABLE: u64 = 0x2401;
/// Enables the event for this many overflows (the argument), then it disables itself.
const PERF_EVENT_IOC_REFRESH: u64 = 0x2402;

/// `struct perf_event_attr`, its first version (64 bytes).
#[repr(C)]
struct PerfAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// The running thread's desched descriptor, opened on first use: a software
/// context-switch counter that sends [`DESCHED_SIGNAL`] to the thread at its next switch
/// once enabled. None when perf events are not available.
fn desched_fd() -> Option<u64> {
    let fd = get!(desched_fd);
    if fd >= 0 {
        return Some(fd as u64);
    }
    if fd == -2 {
        return None;
    }
    let attr = PerfAttr {
        kind: 1,   // PERF_TYPE_SOFTWARE
        size: 64,  // PERF_ATTR_SIZE_VER0
        config: 3, // PERF_COUNT_SW_CONTEXT_SWITCHES
        sample_period: 1,
        sample_type: 0,
        read_format: 0,
        flags: 1, // disabled
        wakeup_events: 0,
        bp_type: 0,
        config1: 0,
    };
    // perf_event_open(attr, this thread, any cpu, no group, PERF_FLAG_FD_CLOEXEC)
    let first = untraced(
        PERF_EVENT_OPEN,
        &[addr_of!(attr) as u64, 0, u64::MAX, u64::MAX, 8, 0],
    );
    if first < 0 {
        set!(desched_fd, -2);
        return None;
    }
    let first = first as u64;
    // F_DUPFD_CLOEXEC at or above the floor.
    let mut fd = untraced(FCNTL, &[first, 1030, DESCHED_FD_FLOOR as u64, 0, 0, 0]);
    if fd >= 0 {
        untraced(nr::CLOSE, &[first, 0, 0, 0, 0, 0]);
    } else {
        fd = first as i64;
    }
    let fd = fd as u64;
    // struct f_owner_ex { F_OWNER_TID, tid }
    let owner: [i32; 2] = [0, get!(tid) as i32];
    let ok = untraced(FCNTL, &[fd, 4, 0o20000, 0, 0, 0]) >= 0 // F_SETFL O_ASYNC
        && untraced(FCNTL, &[fd, 15, owner.as_ptr() as u64, 0, 0, 0]) >= 0 // F_SETOWN_EX
        && untraced(FCNTL, &[fd, 10, DESCHED_SIGNAL as u64, 0, 0, 0]) >= 0; // F_SETSIG
    if !ok {
        untraced(nr::CLOSE, &[fd, 0, 0, 0, 0, 0]);
        set!(desched_fd, -2);
        return None;
    }
    set!(desched_fd, fd as i64);
    Some(fd)
}

fn record_call() {
    // A desched descriptor of a thread that is gone (or that a forked child inherited).
    let stale = get!(stale_fd);
    if stale >= 0 {
        untraced(nr::CLOSE, &[stale as u64, 0, 0, 0, 0, 0]);
        set!(stale_fd, -1);
    }
    let f = frame();
    let (nr, args) = (f.rax, f.args());
    let Some(call) = calls::classify(nr, &args, &ProgramMemory) else {
        return fall_back();
    };
    if let Some(fd) = call.writes_fd {
        if get!(shared_count) as usize > MAX_SHARED_FILES || !plain_fd(fd) {
            return fall_back();
        }
    }
    // A listing of a process's descriptors (/proc/PID/fd) would show the agent's own:
    // hindsight takes them out at the traced call's exit.
    if nr == nr::GETDENTS64 && on_procfs(args[0]) {
        return fall_back();
    }
    // A descriptor at the desched floor may be one of the agent's: hindsight sees it closed.
    if nr == nr::CLOSE && args[0] as i64 >= DESCHED_FD_FLOOR {
        return fall_back();
    }
    // A channel between processes (a pipe, a FIFO, a socket) is closed traced: hindsight
    // tells which channel a buffered read or write went through when it drains the buffer,
    // by the descriptor, which must still name it then.
    if nr == nr::CLOSE && is_channel(args[0]) {
        return fall_back();
    }
    if call.max_ranges > record::MAX_WRITES {
        return fall_back();
    }
    let need = record::HEADER_LEN as u64
        + (call.max_ranges as u64) * (record::WRITE_LEN as u64 + 8)
        + call.max_bytes;
    let used = get!(used);
    if used > BUFFER_SIZE as u64 || need > BUFFER_SIZE as u64 - used {
        return fall_back();
    }
    let armed = call.may_block && get!(others) > 0;
    let fd = if armed {
        match desched_fd() {
            Some(fd) => {
                // One overflow, then the event disables itself: the switch into the ptrace
                // stop of its own signal would otherwise count again and send a second
                // desched signal, one more stop for every call that blocks.
                if untraced(IOCTL, &[fd, PERF_EVENT_IOC_REFRESH, 1, 0, 0, 0]) != 0 {
                    return fall_back();
                }
                Some(fd)
            }
            None => return fall_back(),
        }
    } else {
        None
    };
    set!(phase, PHASE_SYSCALL);
    let result = untraced(nr, &args);
    set!(phase, PHASE_COMMIT);
    if let Some(fd) = fd {
        untraced(IOCTL, &[fd, PERF_EVENT_IOC_DISABLE, 0, 0, 0, 0]);
    }
    if matches!(result, -514..=-512 | -516) {
        // Interrupted and to be restarted (hindsight normally sends such a call back to
        // be traced before it gets here): nothing was done, the stub runs it again.
        set!(phase, PHASE_IDLE);
        return fall_back();
    }
    let mut ranges = [(0u64, 0u64); record::MAX_WRITES];
    let n = match calls::writes(nr, &args, result, &ProgramMemory, &mut ranges) {
        Some(n) => n,
        None => {
            report(REPORT_CORRUPT, 0);
            0
        }
    };
    let ranges = &ranges[..n];
    // hindsight may have drained the buffer while the call ran: the record goes where the
    // buffer ends now.
    let used = get!(used) as usize;
    let size = record::size_for(ranges.iter().map(|r| r.1 as usize));
    if used > BUFFER_SIZE || size > BUFFER_SIZE - used {
        report(REPORT_CORRUPT, used as u64);
    } else {
        // SAFETY: [used, used + size) is inside the buffer; the program's ranges were just
        // written by the kernel.
        unsafe {
            let buf = &mut *addr_of_mut!(hs_buffer);
            let rec = &mut buf[used..used + size];
            record::begin(rec, nr, &args, result, ranges);
            for (k, r) in ranges.iter().enumerate() {
                let at = record::data_offset(ranges, k);
                core::ptr::copy_nonoverlapping(
                    r.0 as *const u8,
                    rec[at..].as_mut_ptr(),
                    r.1 as usize,
                );
            }
            record::seal(rec);
        }
        set!(used, (used + size) as u64);
        let b = get!(buffered);
        set!(buffered, b.wrapping_add(1));
    }
    if nr == nr::CLOSE && result == 0 && (args[0] as usize) < FD_TABLE {
        // SAFETY: in bounds.
        unsafe { (*globals()).fd_state[args[0] as usize] = FD_UNKNOWN };
    }
    set!(phase, PHASE_IDLE);
    answer(result);
}

fn replay_call() {
    let used = get!(used) as usize;
    let consumed = get!(consumed) as usize;
    if consumed >= used {
        return fall_back();
    }
    if used > BUFFER_SIZE {
        report(REPORT_CORRUPT, globals() as u64);
        return fall_back();
    }
    // SAFETY: [consumed, used) is inside the buffer.
    let buf = unsafe { &*addr_of!(hs_buffer) };
    let rec = match record::Record::parse(&buf[consumed..used]) {
        Ok(r) => r,
        Err(_) => {
            report(REPORT_CORRUPT, buf[consumed..].as_ptr() as u64);
            return fall_back();
        }
    };
    let f = frame();
    let (nr, args) = (f.rax, f.args());
    let same = rec.nr == nr
        && calls::classify(nr, &args, &Zeros)
            .is_some_and(|c| rec.args[..c.arity] == args[..c.arity]);
    if !same {
        report(REPORT_MISMATCH, consumed as u64);
        return fall_back();
    }
    for k in 0..rec.writes {
        let (addr, data) = rec.write(k);
        // SAFETY: the recorded call wrote there (same arguments, same memory map).
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
    }
    set!(consumed, (consumed + rec.size()) as u64);
    answer(rec.result);
}

/// The compiler's memory primitives: the agent links no C library. `rep movsb`/`stosb`
/// keep them short and free of vector registers.
///
/// # Safety
/// As C's `memcpy`.
#[no_mangle]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    core::arch::asm!(
        "rep movsb",
        inout("rcx") n => _,
        inout("rdi") dst => _,
        inout("rsi") src => _,
        options(nostack, preserves_flags)
    );
    dst
}

/// As C's `memmove`.
///
/// # Safety
/// As C's `memmove`.
#[no_mangle]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize) <= (src as usize) || (dst as usize) >= (src as usize) + n {
        return memcpy(dst, src, n);
    }
    // Overlapping, destination above: copy backwards.
    core::arch::asm!(
        "std",
        "rep movsb",
        "cld",
        inout("rcx") n => _,
        inout("rdi") dst.add(n - 1) => _,
        inout("rsi") src.add(n - 1) => _,
        options(nostack)
    );
    dst
}

/// As C's `memset`.
///
/// # Safety
/// As C's `memset`.
#[no_mangle]
pub unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    core::arch::asm!(
        "rep stosb",
        inout("rcx") n => _,
        inout("rdi") dst => _,
        in("al") c as u8,
        options(nostack, preserves_flags)
    );
    dst
}

/// As C's `memcmp`.
///
/// # Safety
/// As C's `memcmp`.
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // Volatile reads: the compiler must not turn this loop into a call of itself.
    for i in 0..n {
        let (x, y) = (read_volatile(a.add(i)), read_volatile(b.add(i)));
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    0
}

/// `bcmp`, which the compiler may call for equality tests.
///
/// # Safety
/// As C's `memcmp`.
#[no_mangle]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    memcmp(a, b, n)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // A bug of the agent's: hindsight stops at the report and says so.
    loop {
        report(REPORT_CORRUPT, 0);
    }
}

/// The precompiled `core` refers to the unwinder's personality routine from its unwind
/// tables; the agent never unwinds (panics abort), so nothing ever calls it.
#[no_mangle]
extern "C" fn rust_eh_personality() {}
