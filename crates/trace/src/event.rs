//! What a trace holds: events, the header, processes and the summary.

/// The kernel's `user_regs_struct`, 27 words in its order (r15 … gs).
pub type RegWords = [u64; 27];
/// Index of a file copied into the trace.
pub type FileId = u32;

/// Bytes the kernel (or the recorder's emulation) wrote into the program's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemWrite {
    /// Where.
    pub addr: u64,
    /// What.
    pub data: Vec<u8>,
}

/// Where an asynchronous stop happened in code that makes no syscall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsyncPoint {
    /// Every general register.
    pub regs: RegWords,
    /// A digest of the top of the stack.
    pub stack_digest: u64,
    /// The top of the stack itself (up to 256 bytes from the stack pointer): replay finds
    /// loop counters in it to approach the position quickly.
    pub stack: Vec<u8>,
    /// The thread's CPU time (ns) since its previous event.
    pub cpu_ns: u64,
    /// The thread's tick count there (see `hindsight-ticks`): the position is the instant its
    /// counter reached this count, exactly. None where the code ran uncounted: the position
    /// is then the first execution of the pc with these registers and stack top.
    pub ticks: Option<u64>,
}

/// Where a signal was delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignalPoint {
    /// Raised by the instruction at the pc (a fault): it recurs by itself in replay.
    Synchronous,
    /// Delivered before the thread executed an instruction since its previous event.
    AtStop,
    /// In the middle of user code.
    Async(Box<AsyncPoint>),
}

/// A file mapping's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappedFile {
    /// The copy in the trace.
    pub file: FileId,
    /// Offset of the mapping in the file.
    pub offset: u64,
    /// The same for every mapping of one file (device and inode) in the recording, whatever
    /// its copy: the id of that file's first copy. Replay backs the shared mappings of one
    /// file with one memory file, so that they alias as they did.
    pub identity: FileId,
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitStatus {
    /// exit(code).
    Exited(i32),
    /// Killed by this signal.
    Killed(i32),
}

/// One recorded occurrence in a process (tids are the recorded ones). The events of a
/// process are in the order its threads ran: event k of thread T means "T runs from where it
/// is until this point".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A syscall that returned before any other thread of the process ran.
    Syscall {
        /// Thread.
        tid: i32,
        /// Syscall number.
        nr: u64,
        /// Arguments.
        args: [u64; 6],
        /// Raw result (negative errno on failure).
        result: i64,
        /// Memory it wrote.
        writes: Vec<MemWrite>,
        /// For a file mapping: the file.
        mapped: Option<MappedFile>,
    },
    /// A syscall entered; other threads ran before it returned.
    SyscallEntry {
        /// Thread.
        tid: i32,
        /// Syscall number.
        nr: u64,
        /// Arguments.
        args: [u64; 6],
    },
    /// The return of a syscall announced by `SyscallEntry`.
    SyscallExit {
        /// Thread.
        tid: i32,
        /// Syscall number.
        nr: u64,
        /// Raw result.
        result: i64,
        /// Memory it wrote.
        writes: Vec<MemWrite>,
        /// For a file mapping: the file.
        mapped: Option<MappedFile>,
    },
    /// An rdtsc (aux: None) or rdtscp (aux: Some(TSC_AUX)) at `pc`, with its value.
    Rdtsc {
        /// Thread.
        tid: i32,
        /// Address of the instruction.
        pc: u64,
        /// The value returned.
        tsc: u64,
        /// TSC_AUX for rdtscp.
        aux: Option<u32>,
    },
    /// A signal delivered to the thread.
    Signal {
        /// Thread.
        tid: i32,
        /// Signal number.
        signo: i32,
        /// The kernel's 128-byte siginfo_t.
        siginfo: Vec<u8>,
        /// Where.
        point: SignalPoint,
    },
    /// The thread was preempted at `point` so that another could run.
    Preempt {
        /// Thread.
        tid: i32,
        /// Where.
        point: AsyncPoint,
    },
    /// The process executed a new program.
    Exec {
        /// Thread that executed it.
        tid: i32,
        /// The program's path.
        path: Vec<u8>,
        /// Its copy in the trace.
        file: FileId,
    },
    /// A thread of the process exited.
    ThreadExit {
        /// Thread.
        tid: i32,
    },
    /// The process ended.
    ProcessExit {
        /// How.
        status: ExitStatus,
    },
    /// Output written to the terminal (what stdout or stderr was when recording started) by
    /// this process or a descendant: shown again by replay.
    Output {
        /// Recorded pid of the writer.
        pid: i32,
        /// 1: stdout, 2: stderr.
        fd: i32,
        /// The bytes.
        data: Vec<u8>,
    },
    /// Memory the kernel wrote outside any syscall (the random bytes of a new program).
    KernelWrite {
        /// What and where.
        writes: Vec<MemWrite>,
    },
    /// Syscalls that thread `tid` made through the in-process agent, without a stop each
    /// (`hindsight-agent`): all it made since its previous event, up to its next one. Replay
    /// hands them to the agent before the thread runs, and the agent answers the thread's
    /// calls from them in order.
    Buffered {
        /// Thread.
        tid: i32,
        /// The calls, in the order they were made.
        calls: Vec<BufferedCall>,
    },
}

/// One syscall that the in-process agent ran and logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferedCall {
    /// Syscall number.
    pub nr: u64,
    /// Arguments.
    pub args: [u64; 6],
    /// Raw result (negative errno on failure).
    pub result: i64,
    /// Memory it wrote.
    pub writes: Vec<MemWrite>,
}

impl Event {
    /// The thread that runs up to this event. None for the events that no thread runs to:
    /// `ProcessExit`, `Output` and `KernelWrite` (process-wide), `ThreadExit` (the thread is
    /// gone; replay handles it without running anything) and `Buffered` (replay hands the
    /// calls to the agent before the thread runs to its next event).
    pub fn tid(&self) -> Option<i32> {
        match self {
            Event::Syscall { tid, .. }
            | Event::SyscallEntry { tid, .. }
            | Event::SyscallExit { tid, .. }
            | Event::Rdtsc { tid, .. }
            | Event::Signal { tid, .. }
            | Event::Preempt { tid, .. }
            | Event::Exec { tid, .. } => Some(*tid),
            Event::ThreadExit { .. }
            | Event::ProcessExit { .. }
            | Event::Output { .. }
            | Event::KernelWrite { .. }
            | Event::Buffered { .. } => None,
        }
    }

    /// A short name of the event's kind.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Event::Syscall { .. } => "syscall",
            Event::SyscallEntry { .. } => "syscall entry",
            Event::SyscallExit { .. } => "syscall exit",
            Event::Rdtsc { .. } => "rdtsc",
            Event::Signal { .. } => "signal",
            Event::Preempt { .. } => "preemption",
            Event::Exec { .. } => "exec",
            Event::ThreadExit { .. } => "thread exit",
            Event::ProcessExit { .. } => "process exit",
            Event::Output { .. } => "output",
            Event::KernelWrite { .. } => "kernel write",
            Event::Buffered { .. } => "buffered syscalls",
        }
    }
}

/// The trace's header, written when recording starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// [`crate::FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// Version of hindsight that wrote it.
    pub hindsight_version: String,
    /// Absolute path of the recorded executable, as it was.
    pub program: Vec<u8>,
    /// Its copy in the trace.
    pub executable: FileId,
    /// argv, argv[0] included.
    pub args: Vec<Vec<u8>>,
    /// Environment, `NAME=value`.
    pub env: Vec<Vec<u8>>,
    /// Working directory.
    pub cwd: Vec<u8>,
    /// Unix seconds.
    pub start_time: u64,
    /// The clock that counts progress between events ("none").
    pub clock: String,
}

/// One process of the recording (the first one is the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Recorded pid.
    pub pid: i32,
    /// Recorded pid of its parent (None for the root).
    pub parent: Option<i32>,
    /// Index, in the parent's stream, of the event of the syscall that created it.
    pub fork_event: Option<u64>,
    /// Program it runs (the last one, after execs).
    pub program: Vec<u8>,
    /// Its argv.
    pub args: Vec<Vec<u8>>,
}

/// Written when the recording ends normally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// How the root process ended.
    pub exit: ExitStatus,
    /// Wall time of the recording.
    pub duration_ns: u64,
    /// Events, all processes together.
    pub events: u64,
    /// Threads (processes included).
    pub threads: u32,
    /// Processes.
    pub processes: u32,
}
