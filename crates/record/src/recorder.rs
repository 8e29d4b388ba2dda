//! The recorder: runs the program under ptrace and a "trace every syscall" seccomp filter and
//! writes down everything it does not determine itself.
//!
//! Scheduling (DESIGN.md, "Recording"): in each process at most one thread executes user code
//! at a time (its *current* thread); the others are stopped, or inside a syscall. The events of
//! a process are appended in the order its threads run, so that replay, which runs exactly
//! one thread at a time, follows them: event k of thread T means "T runs from where it is
//! until this point". Consequences that the code keeps:
//! - A thread's event is appended only when that thread is the one that runs (a syscall that
//!   returned while another thread ran waits, with its results, until its thread is chosen).
//! - Before another thread is chosen, a thread that is inside a syscall gets its
//!   `SyscallEntry` written: replay must know that it stopped there.
//! - A current thread that runs for longer than its time slice while others are ready is
//!   interrupted and its position recorded (`Preempt`); replay stops it at the same position.
//!   Finding such a position again costs replay far more than a syscall does (no instruction
//!   counter), so slices are long, and a thread preempted again without making a syscall in
//!   between gets a slice twice as long: a busy thread is rarely interrupted for one that spins.
//!
//! Processes (fork, vfork, clone without CLONE_THREAD) are recorded side by side, each in its
//! own event stream; they share no memory (a vfork child borrows its parent's, while the parent
//! is blocked), so each one's order is enough.
//!
//! Kernel surprises handled here:
//! - A new thread's (or process's) first stop and its creator's clone/fork event come in either
//!   order.
//! - A `PTRACE_INTERRUPT` that lands while the thread stops for another reason is still owed:
//!   the thread reports an event stop later, anywhere. Such a stop is a valid preemption point,
//!   or nothing at all.
//! - After an exec by a thread that was not the leader, that thread reports with the process
//!   id, and the other threads vanish without a word.
//! - A syscall interrupted by a signal reports its exit (with -EINTR or -ERESTART…) before the
//!   signal-delivery stop.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hindsight_ptrace::tsc;
use hindsight_ptrace::{ProcessMemory, Stop, Tid, WaitEvent};
use hindsight_syscalls::Replay;
use hindsight_trace::{
    AsyncPoint, ChannelKind, Direction, Event, ExitStatus, Header, MappedFile, MemWrite,
    ProcessInfo, SignalPoint, Summary, TraceWriter,
};

use crate::agent;
use crate::channels::{Channels, Pending};
use crate::cloak;
use crate::disguise::Disguise;
use crate::error::RecordError;
use crate::point;
use crate::settle::{self, Settled};
use crate::shared::SharedMemory;
use agent_stops::Unblock;
use hindsight_agent_host::Agent;
use hindsight_ticks::counter::{AgentCode, Counter};

/// What to record and where.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The program (a path; resolved by the caller).
    pub program: PathBuf,
    /// argv[0], as the user typed the program.
    pub argv0: OsString,
    /// argv[1..].
    pub args: Vec<OsString>,
    /// The trace directory to create (must not exist).
    pub trace_dir: PathBuf,
    /// The store of copies shared between traces (see `hindsight_trace::copies`); None: the
    /// trace gets its own copies of the mapped files.
    pub shared_copies: Option<PathBuf>,
    /// Pin hindsight and the program to one CPU.
    pub pin: bool,
    /// How long a thread runs without a syscall before another ready thread gets its turn.
    pub time_slice: Duration,
    /// rr's chaos mode: random time slices and a random ready thread at each turn, so that
    /// orders that are rare in a normal run show up in recordings (the replay is as exact).
    pub chaos: bool,
}

/// How a recording ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The trace directory.
    pub trace: PathBuf,
    /// How the recorded program ended.
    pub exit: ExitStatus,
    /// Why the recording was cut short (the trace is incomplete, replayable up to there).
    pub incomplete: Option<String>,
}

/// How long a thread may sit in a syscall that is not known to block before the others run.
const SYSCALL_PATIENCE: Duration = Duration::from_millis(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Stopped, waiting for its turn.
    Ready,
    /// The process's current thread, executing user code.
    User,
    /// Inside a syscall (resumed with PTRACE_SYSCALL towards its exit).
    InSyscall,
    /// Executing exit/exit_group.
    Exiting,
    /// In a group stop (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU), held there with PTRACE_LISTEN
    /// as it would stand untraced, until a SIGCONT wakes it.
    GroupStop,
}

#[derive(Debug)]
struct InSyscall {
    nr: u64,
    args: [u64; 6],
    entered: Instant,
    entry_written: bool,
    /// Index of this syscall's first event in the process's stream (for fork_event).
    event_index: u64,
    /// A child process created by this syscall, registered when the syscall's event is written.
    child: Option<ProcessInfo>,
    /// The exec this syscall performed: (path, copy).
    exec: Option<(Vec<u8>, u32)>,
    /// The process's turn count when it was entered (see `Process::turns`).
    turns_at_entry: u64,
    /// Index of its `SyscallEntry` event, once written (sends are known to happen from
    /// there on).
    entry_index: Option<u64>,
    /// The child it created sharing this process's memory (vfork): this syscall returns
    /// when that child executes a program or ends.
    vforked: Option<i32>,
}

#[derive(Debug)]
struct Thread {
    tid: i32,
    state: State,
    /// The syscall (number, arguments) that last returned -ERESTART_RESTARTBLOCK: the
    /// kernel's restart_syscall resumes it, with its memory effects.
    restart_block: Option<(u64, [u64; 6])>,
    /// Events to write when the thread is next chosen to run, with the transfers between
    /// processes that name them.
    pending: Vec<(Event, Vec<Pending>)>,
    /// A signal to deliver when it next resumes (already written as an event).
    signal: i32,
    /// A signal that arrived while it was not the current thread: written and delivered when
    /// it is chosen.
    deferred_signal: Option<(i32, Vec<u8>)>,
    syscall: Option<InSyscall>,
    /// Registers when it last resumed user code: a signal stop with the same registers came
    /// before any instruction ran.
    resumed_with: Option<[u64; 27]>,
    /// CPU time at its previous event.
    cpu_ns: u64,
    /// We interrupted it to preempt it.
    interrupted: bool,
    /// Its time slice: doubled at each preemption, reset by a syscall.
    slice: Duration,
    /// Threads it created whose birth (its clone's return) is not in the trace yet: they
    /// join the ready queue only once it is, else a replay would meet their first event
    /// before the clone that makes them (a clone slower than the syscall patience lets
    /// other threads run while it is inside).
    unborn: Vec<i32>,
    /// Its dealings with the in-process agent.
    agent: AgentThread,
}

/// What the recorder keeps of a thread's dealings with the in-process agent.
#[derive(Debug, Default)]
struct AgentThread {
    /// Its desched descriptor in the program (-1: none yet, -2: not available).
    desched_fd: i64,
    /// The recorder's duplicate of it (to disarm the event of a call taken out of the agent).
    desched_dup: Option<std::os::fd::OwnedFd>,
    /// Signals that arrived while it was inside the agent, delivered once it is out.
    deferred: Vec<(i32, libc::siginfo_t)>,
    /// A preemption that waits for it to leave the agent.
    preempt: bool,
    /// Its exit trap (DR0 at the agent's return) is armed.
    exit_trap: bool,
    /// Signals sent to it again, and the siginfo each had (put back at its delivery).
    requeued: Vec<(i32, libc::siginfo_t)>,
    /// A buffered call of its that blocked (an `agent::Place::Interrupted`): the thread
    /// waits in the agent's second untraced syscall, restarted there, while others run,
    /// and stops at the traced syscall after it, to be taken out of the agent (see
    /// `agent_stops`).
    blocked: Option<agent::Place>,
}

impl Thread {
    /// The syscall it is inside whose `SyscallEntry` is not written yet (it entered it while
    /// being the current thread, and no other thread has run since).
    fn unannounced_syscall(&self) -> Option<&InSyscall> {
        self.syscall
            .as_ref()
            .filter(|s| self.state == State::InSyscall && !s.entry_written)
    }

    fn new(tid: i32, state: State) -> Thread {
        Thread {
            tid,
            restart_block: None,
            state,
            pending: Vec::new(),
            signal: 0,
            deferred_signal: None,
            syscall: None,
            resumed_with: None,
            cpu_ns: 0,
            interrupted: false,
            slice: Duration::ZERO,
            unborn: Vec::new(),
            agent: AgentThread {
                desched_fd: -1,
                ..Default::default()
            },
        }
    }
}

struct Process {
    pid: i32,
    mem: ProcessMemory,
    threads: Vec<Thread>,
    ready: VecDeque<i32>,
    current: Option<i32>,
    /// When the current thread started its turn.
    since: Instant,
    /// How long the current thread's turn may last (chaos mode draws it; else its slice).
    turn: Option<Duration>,
    /// Its shared mappings, whose changes are written down before its threads run.
    shared: SharedMemory,
    /// How many times user code started running in another thread than before, and the
    /// thread that ran last: a sched_yield is satisfied once the count moved.
    turns: u64,
    last_runner: Option<i32>,
    /// Threads back from a sched_yield that nobody has answered yet, waiting for another
    /// thread that is inside its own sched_yield to run first (see `on_syscall_exit`).
    yield_waiters: Vec<i32>,
    /// The instruction counter (None: the program runs uncounted).
    counter: Option<Counter>,
    /// The in-process agent (None: every syscall is traced).
    agent: Option<Agent>,
    /// The thread the agent was last told runs (see [`Agent::set_thread`]).
    agent_runner: Option<i32>,
    /// Desched descriptors that no thread uses any more (of exited threads, or inherited
    /// from a parent), for the agent to close one at a time.
    agent_stale: Vec<i64>,
    /// It installed a seccomp filter of its own (inherited by its children, kept across
    /// exec): the agent is off, since the filter judges the agent's own syscalls too (a
    /// filter that allows only read and write kills the process at the agent's fstat).
    own_seccomp: bool,
    /// A thread of it called exit_group: every thread is on its way out, and no other one
    /// gets a turn (replay ends the process at that call; nothing of theirs may follow it).
    exiting: bool,
}

impl Process {
    fn thread(&mut self, tid: i32) -> Option<&mut Thread> {
        self.threads.iter_mut().find(|t| t.tid == tid)
    }
}

/// Whether `target` (a pid or tid, as the program named it) is a thread of process `pid`.
fn same_process(pid: i32, target: i32) -> bool {
    if target == pid {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{target}/status")).is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse::<i32>().ok())
            == Some(pid)
    })
}

/// The file of the System V shared memory segment attached at `addr` in `pid` (its link under
/// `/proc/PID/map_files`) and the length of its mapping there.
fn segment_file(pid: i32, addr: u64) -> Option<(PathBuf, u64)> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    let end = maps.lines().find_map(|l| {
        let range = l.split_whitespace().next()?;
        let (start, end) = range.split_once('-')?;
        (u64::from_str_radix(start, 16).ok()? == addr)
            .then(|| u64::from_str_radix(end, 16).ok())
            .flatten()
    })?;
    let path = PathBuf::from(format!("/proc/{pid}/map_files/{addr:x}-{end:x}"));
    std::fs::metadata(&path)
        .is_ok_and(|m| m.is_file())
        .then_some((path, end - addr))
}

/// The file under a mapping made with `flags` of descriptor `fd` at `offset`, opened for
/// reading its bytes (None for anonymous memory, or when it cannot be opened).
fn shared_file(pid: i32, flags: u64, fd: i32, offset: u64) -> Option<crate::shared::Backing> {
    if flags & libc::MAP_ANONYMOUS as u64 != 0 {
        return None;
    }
    let file = std::fs::File::open(format!("/proc/{pid}/fd/{fd}")).ok()?;
    file.metadata()
        .ok()?
        .is_file()
        .then_some(crate::shared::Backing { file, offset })
}

/// A file the program's stdout or stderr was when recording started: writes to it are
/// output that replay shows again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileKey {
    dev: u64,
    ino: u64,
}

fn file_key(path: impl AsRef<Path>) -> Option<FileKey> {
    let m = std::fs::metadata(path).ok()?;
    Some(FileKey {
        dev: m.dev(),
        ino: m.ino(),
    })
}

/// One of the recording's outputs: hindsight's own stdout (`fd` 1) or stderr (2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OutputFile {
    key: FileKey,
    /// Hindsight's descriptor of it.
    fd: i32,
    /// A character device that is not a terminal (`/dev/null`): only descriptors of
    /// hindsight's own open file are the output, not a program's own `open` of the
    /// device (whose writes nobody sees, and which the agent then buffers). For anything
    /// else every descriptor of the file counts (a `/dev/stderr` opened anew is the output).
    same_open_file: bool,
}

impl OutputFile {
    /// Hindsight's descriptor `fd` as an output (None: it is not open).
    fn of(fd: i32) -> Option<OutputFile> {
        let m = std::fs::metadata(format!("/proc/self/fd/{fd}")).ok()?;
        // SAFETY: isatty only looks at the descriptor.
        let tty = unsafe { libc::isatty(fd) } == 1;
        Some(OutputFile {
            key: FileKey {
                dev: m.dev(),
                ino: m.ino(),
            },
            fd,
            same_open_file: m.file_type().is_char_device() && !tty,
        })
    }

    /// Whether descriptor `fd` of thread `tid` is this output.
    fn is(&self, tid: i32, fd: i32) -> bool {
        if file_key(format!("/proc/{tid}/fd/{fd}")) != Some(self.key) {
            return false;
        }
        if !self.same_open_file {
            return true;
        }
        // SAFETY: kcmp only compares; 0 means the same open file. When it cannot tell
        // (an error), the write counts as output, as it did before.
        let r = unsafe {
            libc::syscall(
                libc::SYS_kcmp,
                std::process::id() as libc::pid_t,
                tid,
                0, // KCMP_FILE
                self.fd as libc::c_ulong,
                fd as libc::c_ulong,
            )
        };
        r <= 0
    }

    /// What the agent is told of it.
    fn for_agent(&self) -> hindsight_agent_host::Output {
        hindsight_agent_host::Output {
            dev: self.key.dev,
            ino: self.key.ino,
            same_open_file: self.same_open_file,
        }
    }
}

struct Recorder {
    writer: TraceWriter,
    procs: HashMap<i32, Process>,
    /// tid → pid of its process.
    owner: HashMap<i32, i32>,
    /// Processes' parents (for echoing a child's output in its ancestors' streams).
    parents: HashMap<i32, i32>,
    /// First stops that came before their creator's clone/fork event.
    early: HashSet<i32>,
    root: i32,
    root_exit: Option<ExitStatus>,
    outputs: [Option<OutputFile>; 2],
    /// Each mapped file's identity in the trace (see `MappedFile::identity`).
    identities: HashMap<FileKey, hindsight_trace::FileId>,
    threads_seen: u32,
    processes_seen: u32,
    events: u64,
    failure: Option<String>,
    slice: Duration,
    timer_armed: bool,
    /// Random choices of chaos mode (None: a normal recording).
    chaos: Option<fastrand::Rng>,
    /// The answers that would show the recorder, made those of an unrecorded program.
    disguise: Disguise,
    /// Pipes, FIFOs and sockets between processes, and what went through them.
    channels: Channels,
    /// Children created by vfork whose parent waits for their exec or end: child → parent.
    vforks: HashMap<i32, i32>,
    /// The thread whose write to the terminal outputs is under way (entered, its exit not
    /// handled yet), and the threads waiting at their own such write's entry, in order: one
    /// at a time, so that the order the recorder writes the `Output` events down is the
    /// order the writes reached the terminal (processes writing at once otherwise replay
    /// their lines in another order).
    output_writer: Option<i32>,
    output_waiters: VecDeque<(i32, i32)>,
    /// A recording being ended by a signal to the recorder (see [`ending`]).
    ending: Option<ending::Ending>,
}

/// Records `opts.program` into a new trace. The program's stdin, stdout and stderr are
/// hindsight's. Returns when the program (and every process it created) has ended.
pub fn record(opts: &RecordOptions) -> Result<Outcome, RecordError> {
    let started = Instant::now();
    crate::stop::install();
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut argv: Vec<Vec<u8>> = vec![opts.argv0.as_bytes().to_vec()];
    argv.extend(opts.args.iter().map(|a| a.as_bytes().to_vec()));
    let header = Header {
        format_version: hindsight_trace::FORMAT_VERSION,
        hindsight_version: env!("CARGO_PKG_VERSION").to_string(),
        program: opts.program.as_os_str().as_bytes().to_vec(),
        executable: 0,
        args: argv.clone(),
        env: std::env::vars_os()
            .map(|(k, v)| {
                let mut e = k.as_bytes().to_vec();
                e.push(b'=');
                e.extend_from_slice(v.as_bytes());
                e
            })
            .collect(),
        cwd: cwd.as_os_str().as_bytes().to_vec(),
        start_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        clock: match (ticks_enabled(), agent_enabled()) {
            (true, true) => format!(
                "{} {}",
                hindsight_ticks::CLOCK,
                hindsight_agent_host::clock_word()
            ),
            (true, false) => hindsight_ticks::CLOCK.to_string(),
            _ => "none".to_string(),
        },
    };
    let writer = TraceWriter::create_sharing(
        &opts.trace_dir,
        header,
        &opts.program,
        opts.shared_copies.as_deref(),
    )?;
    let outputs = [OutputFile::of(1), OutputFile::of(2)];

    let spawn = hindsight_ptrace::SpawnOptions {
        disable_aslr: true,
        cpu: opts.pin.then(hindsight_ptrace::thread::current_cpu),
        trap_syscalls: true,
        trap_rdtsc: true,
        argv0: Some(opts.argv0.clone()),
        untraced_ips: match agent_enabled() {
            true => hindsight_agent_host::image::image()?.addrs.untraced_ips(),
            false => Vec::new(),
        },
        ..Default::default()
    };
    let args: Vec<&std::ffi::OsStr> = opts.args.iter().map(|a| a.as_os_str()).collect();
    let tid = match hindsight_ptrace::spawn(&opts.program, &args, &spawn) {
        Ok(t) => t,
        Err(e) => {
            let _ = writer.abandon(&e.to_string());
            let _ = std::fs::remove_dir_all(&opts.trace_dir);
            return Err(e.into());
        }
    };
    let pid = tid.0;
    let mem = ProcessMemory::open(pid)?;
    let sp = tid.regs()?.sp();
    hindsight_ptrace::auxv::hide_vdso(&mem, sp)?;
    let random = at_random(&mem, sp);
    let agent = load_agent(tid, &mem, outputs)?;
    let counter = install_counter(tid, &mem, agent.as_ref())?;
    install_alarm_handler();

    let mut rec = Recorder {
        writer,
        procs: HashMap::new(),
        owner: HashMap::new(),
        parents: HashMap::new(),
        early: HashSet::new(),
        root: pid,
        root_exit: None,
        outputs,
        identities: HashMap::new(),
        threads_seen: 1,
        processes_seen: 1,
        events: 0,
        failure: None,
        slice: opts.time_slice,
        timer_armed: false,
        chaos: opts.chaos.then(fastrand::Rng::new),
        disguise: Disguise::default(),
        channels: Channels::default(),
        vforks: HashMap::new(),
        output_writer: None,
        output_waiters: VecDeque::new(),
        ending: None,
    };
    rec.writer.add_process(ProcessInfo {
        pid,
        parent: None,
        fork_event: None,
        program: opts.program.as_os_str().as_bytes().to_vec(),
        args: argv,
    })?;
    let mut main = Thread::new(pid, State::Ready);
    main.cpu_ns = point::thread_cpu_ns(pid, pid);
    rec.procs.insert(
        pid,
        Process {
            pid,
            mem,
            threads: vec![main],
            ready: VecDeque::from([pid]),
            current: None,
            since: Instant::now(),
            turn: None,
            shared: SharedMemory::default(),
            turns: 0,
            last_runner: None,
            yield_waiters: Vec::new(),
            counter,
            agent,
            agent_runner: None,
            agent_stale: Vec::new(),
            own_seccomp: false,
            exiting: false,
        },
    );
    rec.owner.insert(pid, pid);
    rec.append(pid, &Event::KernelWrite { writes: random })?;

    let result = rec.run();
    set_timer(None);
    let exit = rec
        .root_exit
        .clone()
        .unwrap_or(ExitStatus::Killed(libc::SIGKILL));
    let failure = match result {
        Ok(()) => rec.failure.take(),
        Err(e) => Some(e.to_string()),
    };
    if let Some(reason) = failure {
        rec.kill_all();
        let trace = rec.writer.abandon(&reason)?;
        return Ok(Outcome {
            trace,
            exit,
            incomplete: Some(reason),
        });
    }
    let summary = Summary {
        exit: exit.clone(),
        duration_ns: started.elapsed().as_nanos() as u64,
        events: rec.events,
        threads: rec.threads_seen,
        processes: rec.processes_seen,
    };
    let trace = rec.writer.finish(&summary)?;
    Ok(Outcome {
        trace,
        exit,
        incomplete: None,
    })
}

/// The instruction counter for a program stopped before its first instruction, unless
/// `HINDSIGHT_NO_TICKS` is set (for hindsight's developers: the old way of finding
/// asynchronous positions, without ticks).
fn install_counter(
    tid: Tid,
    mem: &ProcessMemory,
    agent: Option<&Agent>,
) -> Result<Option<Counter>, RecordError> {
    if !ticks_enabled() {
        return Ok(None);
    }
    let agent = agent.map(|a| AgentCode {
        entry: a.addrs.entry,
        code: a.addrs.code,
    });
    Ok(Some(Counter::install(tid, tid.0, mem, agent)?))
}

fn ticks_enabled() -> bool {
    std::env::var_os("HINDSIGHT_NO_TICKS").is_none()
}

/// Whether the program's syscalls go through the in-process agent: it needs the counter's
/// patching (which sends `syscall` instructions to it); `HINDSIGHT_NO_AGENT` turns it off.
fn agent_enabled() -> bool {
    ticks_enabled() && !hindsight_agent_host::disabled_by_env()
}

/// The in-process agent for a program stopped before its first instruction (before the
/// counter patches its code, which calls the agent).
fn load_agent(
    tid: Tid,
    mem: &ProcessMemory,
    outputs: [Option<OutputFile>; 2],
) -> Result<Option<Agent>, RecordError> {
    if !agent_enabled() {
        return Ok(None);
    }
    let outputs = outputs.map(|o| o.map(|o| o.for_agent()));
    Ok(Some(hindsight_agent_host::load(
        tid,
        mem,
        hindsight_agent_host::Mode::Record { outputs },
    )?))
}

extern "C" fn on_alarm(_: libc::c_int) {}

/// Whether an event stop with signal `sig` is a group stop (PTRACE_SEIZE reports one with
/// the stopping signal; other event stops, PTRACE_INTERRUPT's, with SIGTRAP).
fn is_group_stop(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// Whether syscall `name(args)`, which returned `result`, put the thread under a seccomp
/// filter or strict mode of the program's own.
fn installs_seccomp(name: &str, args: &[u64; 6], result: i64) -> bool {
    const PR_SET_SECCOMP: u64 = 22;
    const SECCOMP_SET_MODE_STRICT: u64 = 0;
    const SECCOMP_SET_MODE_FILTER: u64 = 1;
    match name {
        "seccomp" => {
            matches!(args[0], SECCOMP_SET_MODE_STRICT | SECCOMP_SET_MODE_FILTER) && result >= 0
        }
        "prctl" => args[0] & 0xffff_ffff == PR_SET_SECCOMP && result == 0,
        _ => false,
    }
}

/// Whether a thread stopped with `regs` is at the end of a syscall that the kernel restarts
/// when the thread resumes (its result a restart code: -ERESTARTSYS … -ERESTART_RESTARTBLOCK).
fn restarts(regs: &hindsight_ptrace::Regs) -> bool {
    regs.0.orig_rax != u64::MAX && (-516..=-512).contains(&(regs.0.rax as i64))
}

/// SIGALRM interrupts the recorder's wait (no SA_RESTART): that is how time slices end.
fn install_alarm_handler() {
    // SAFETY: an empty handler is async-signal-safe; the struct is fully initialised.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_alarm as *const () as usize;
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGALRM, &sa, std::ptr::null_mut());
    }
}

/// Arms (periodic) or disarms the recorder's timer.
fn set_timer(period: Option<Duration>) {
    let tv = |d: Duration| libc::timeval {
        tv_sec: d.as_secs() as libc::time_t,
        tv_usec: d.subsec_micros() as libc::suseconds_t,
    };
    let d = period.unwrap_or(Duration::ZERO);
    let it = libc::itimerval {
        it_interval: tv(d),
        it_value: tv(d),
    };
    // SAFETY: plain syscall with a valid struct.
    unsafe {
        libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut());
    }
}

/// Syscalls that may wait for another thread or process: when they are entered and another
/// thread is ready, that one runs at once.
fn may_block(nr: u64, args: &[u64; 6]) -> bool {
    let name = hindsight_syscalls::name(nr).unwrap_or("");
    match name {
        "futex" => {
            let op = (args[1] & 0x7f) as i32;
            !matches!(
                op,
                libc::FUTEX_WAKE
                    | libc::FUTEX_WAKE_OP
                    | libc::FUTEX_REQUEUE
                    | libc::FUTEX_CMP_REQUEUE
            )
        }
        "read" | "readv" | "recvfrom" | "recvmsg" | "wait4" | "waitid" | "poll" | "ppoll"
        | "select" | "pselect6" | "epoll_wait" | "epoll_pwait" | "epoll_pwait2" | "nanosleep"
        | "clock_nanosleep" | "accept" | "accept4" | "pause" | "rt_sigsuspend"
        | "rt_sigtimedwait" | "connect" | "sendto" | "sendmsg" | "write" | "writev" | "vfork"
        | "msgrcv" | "semop" | "flock" | "sched_yield" | "openat" | "open" => true,
        _ => false,
    }
}

struct MemReader<'a>(&'a ProcessMemory);

impl hindsight_syscalls::Memory for MemReader<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), std::io::Error> {
        self.0
            .read(addr, buf)
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
}

fn siginfo_bytes(si: &libc::siginfo_t) -> Vec<u8> {
    // SAFETY: siginfo_t is plain old data of 128 bytes.
    unsafe { std::slice::from_raw_parts((si as *const libc::siginfo_t).cast::<u8>(), 128).to_vec() }
}

/// Signals that an instruction raises (they recur by themselves in replay) when the kernel
/// sent them (si_code > 0).
fn is_synchronous(sig: i32, si_code: i32) -> bool {
    const SYS_SECCOMP: i32 = 1;
    (matches!(
        sig,
        libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE | libc::SIGTRAP
    ) && si_code > 0)
        // A seccomp filter's SECCOMP_RET_TRAP: raised by the syscall instruction itself, and
        // again in replay, where the program's filter is installed for real.
        || (sig == libc::SIGSYS && si_code == SYS_SECCOMP)
}

mod agent_stops;
mod ending;

impl Recorder {
    fn run(&mut self) -> Result<(), RecordError> {
        loop {
            if let Some(sig) = crate::stop::requested() {
                if self.failure.is_none() && self.ending.is_none() {
                    self.begin_ending(sig);
                }
            }
            if self.ending_finished() {
                if let Some(e) = &self.ending {
                    self.failure = Some(crate::stop::reason(e.signal));
                }
            }
            if self.procs.is_empty() || self.failure.is_some() {
                return Ok(());
            }
            if let Err(e) = self.schedule_all() {
                if !self.vanishing(&e) {
                    return Err(e);
                }
            }
            if self.failure.is_some() {
                return Ok(());
            }
            self.update_timer();
            match hindsight_ptrace::wait_any_interruptible() {
                Ok(Some((tid, ev))) => {
                    if let Err(e) = self.handle(tid.0, ev) {
                        if !self.vanishing(&e) {
                            return Err(e);
                        }
                    }
                }
                Ok(None) => self.deadlines()?,
                Err(e) if e.raw_os_error() == Some(libc::ECHILD) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// True when `e` is a memory access that failed because a process's address space went
    /// away under it (a fatal signal killing its threads, another thread's exec): no error of
    /// the recording, the threads' ends arrive as wait events (rr's fatal_sigsegv_thread,
    /// futex_exit_race, unexpected_exit_execve).
    /// The trace's copy of the file at `path`, mapped from `offset`, with the identity that
    /// tells which copies are one file (for mappings that must alias in replay). The error
    /// is the recording's one-line reason.
    fn mapped_file(&mut self, path: &Path, offset: u64) -> Result<MappedFile, String> {
        let file = self.writer.add_file(path).map_err(|e| e.to_string())?;
        let identity = match file_key(path) {
            Some(k) => *self.identities.entry(k).or_insert(file),
            None => file,
        };
        Ok(MappedFile {
            file,
            offset,
            identity,
        })
    }

    fn vanishing(&self, e: &RecordError) -> bool {
        use hindsight_ptrace::PtraceError::Memory;
        let memory = matches!(
            e,
            RecordError::Ptrace(Memory(_))
                | RecordError::Ticks(hindsight_ticks::TicksError::Ptrace(Memory(_)))
        );
        memory && self.procs.values().any(|p| p.mem.is_gone())
    }

    /// A periodic timer runs while some process has a ready thread waiting behind a running
    /// or syscall-bound one.
    fn update_timer(&mut self) {
        if self.ending.is_some() {
            return;
        }
        let needed = self.procs.values().any(|p| !p.ready.is_empty());
        if needed != self.timer_armed {
            let period = if self.chaos.is_some() { 100 } else { 500 };
            set_timer(needed.then_some(Duration::from_micros(period)));
            self.timer_armed = needed;
        }
    }

    /// Time slices and syscall patience that ran out.
    fn deadlines(&mut self) -> Result<(), RecordError> {
        if self.ending.is_some() {
            return Ok(());
        }
        let now = Instant::now();
        let slice = self.slice;
        let mut to_interrupt = Vec::new();
        let mut to_switch = Vec::new();
        for p in self.procs.values_mut() {
            if p.ready.is_empty() {
                continue;
            }
            match p.current {
                Some(cur) => {
                    let since = p.since;
                    let turn = p.turn;
                    if let Some(t) = p.thread(cur) {
                        if now.duration_since(since) >= turn.unwrap_or(t.slice.max(slice))
                            && t.state == State::User
                            && !t.interrupted
                        {
                            t.interrupted = true;
                            to_interrupt.push(cur);
                        }
                    }
                }
                None => {
                    if p.threads.iter().any(|t| {
                        t.unannounced_syscall()
                            .is_some_and(|s| now.duration_since(s.entered) >= SYSCALL_PATIENCE)
                    }) {
                        to_switch.push(p.pid);
                    }
                }
            }
        }
        for tid in to_interrupt {
            let _ = Tid(tid).interrupt();
        }
        for pid in to_switch {
            self.write_entries(pid)?;
        }
        Ok(())
    }

    /// Writes the `SyscallEntry` of every thread of `pid` that is inside a syscall and has
    /// not had it written: after this, other threads may be chosen.
    fn write_entries(&mut self, pid: i32) -> Result<(), RecordError> {
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        let mut entries = Vec::new();
        let mut children = Vec::new();
        for t in p.threads.iter_mut() {
            if let Some(s) = t.syscall.as_mut() {
                if !s.entry_written {
                    s.entry_written = true;
                    entries.push((
                        t.tid,
                        Event::SyscallEntry {
                            tid: t.tid,
                            nr: s.nr,
                            args: s.args,
                        },
                    ));
                    if let Some(c) = s.child.take() {
                        children.push(c);
                    }
                }
            }
        }
        for (tid, e) in entries {
            let index = self.append(pid, &e)?;
            if let Some(s) = self
                .procs
                .get_mut(&pid)
                .and_then(|p| p.thread(tid))
                .and_then(|t| t.syscall.as_mut())
            {
                s.entry_index = Some(index);
            }
        }
        for c in children {
            self.writer.add_process(c)?;
        }
        Ok(())
    }

    fn append(&mut self, pid: i32, event: &Event) -> Result<u64, RecordError> {
        self.events += 1;
        Ok(self.writer.append(pid, event)?)
    }

    /// Appends an event and the transfers between processes that it is where of.
    fn append_with(
        &mut self,
        pid: i32,
        event: &Event,
        transfers: &[Pending],
    ) -> Result<u64, RecordError> {
        let index = self.append(pid, event)?;
        for t in transfers {
            self.writer.transfer(t.at(pid, index))?;
        }
        Ok(index)
    }

    /// Gives every process without a current thread one, if it can.
    fn schedule_all(&mut self) -> Result<(), RecordError> {
        let pids: Vec<i32> = self.procs.keys().copied().collect();
        for pid in pids {
            self.schedule(pid)?;
        }
        Ok(())
    }

    fn schedule(&mut self, pid: i32) -> Result<(), RecordError> {
        if self.ending.is_some() {
            // No new turns while ending.
            return Ok(());
        }
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        if p.current.is_some() || p.ready.is_empty() || p.exiting {
            return Ok(());
        }
        // A thread that just entered a syscall keeps the process for a moment: most syscalls
        // return at once, and one event is cheaper than two.
        if p.threads.iter().any(|t| t.unannounced_syscall().is_some()) {
            return Ok(());
        }
        let pick = match self.chaos.as_mut() {
            Some(rng) => rng.usize(..p.ready.len()),
            None => 0,
        };
        let Some(tid) = p.ready.remove(pick) else {
            return Ok(());
        };
        let Some(t) = p.thread(tid) else {
            return Ok(());
        };
        let pending = std::mem::take(&mut t.pending);
        let deferred = t.deferred_signal.take();
        let born = std::mem::take(&mut t.unborn);
        for (e, links) in &pending {
            self.append_with(pid, e, links)?;
        }
        if let Some(p) = self.procs.get_mut(&pid) {
            p.ready.extend(born);
        }
        if let Some((sig, info)) = deferred {
            self.append(
                pid,
                &Event::Signal {
                    tid,
                    signo: sig,
                    siginfo: info,
                    point: SignalPoint::AtStop,
                },
            )?;
            if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
                t.signal = sig;
            }
        }
        self.run_user(pid, tid)
    }

    /// Makes `tid` the current thread of `pid` and lets it execute user code.
    fn run_user(&mut self, pid: i32, tid: i32) -> Result<(), RecordError> {
        if self.park(tid) {
            return Ok(());
        }
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        if !p.shared.is_empty() {
            // What other processes (or syscalls) changed in shared memory meanwhile.
            let writes = p.shared.changes(&p.mem);
            if !writes.is_empty() {
                self.append(pid, &Event::KernelWrite { writes })?;
            }
        }
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        p.current = Some(tid);
        p.since = Instant::now();
        // Chaos: anything from a tenth of a millisecond to forty (log-uniform), now and then
        // a long one that starves the others.
        p.turn = self.chaos.as_mut().map(|rng| {
            let us = if rng.u8(..16) == 0 {
                200_000
            } else {
                (100.0 * 400f64.powf(rng.f64())) as u64
            };
            Duration::from_micros(us)
        });
        if p.last_runner != Some(tid) {
            p.turns += 1;
            p.last_runner = Some(tid);
            // Another thread runs: threads waiting at a sched_yield get their turn after it.
            let waiters = std::mem::take(&mut p.yield_waiters);
            p.ready.extend(waiters);
        }
        if let Some(c) = p.counter.as_mut() {
            c.run(&p.mem, tid)?;
        }
        if let Some(a) = p.agent {
            if p.agent_runner != Some(tid) {
                let others = p.threads.len().saturating_sub(1) as u64;
                let fd = p.thread(tid).map(|t| t.agent.desched_fd).unwrap_or(-1);
                a.set_thread(&p.mem, tid, fd, others)?;
                p.agent_runner = Some(tid);
            }
        }
        let Some(t) = p.thread(tid) else {
            return Ok(());
        };
        t.state = State::User;
        t.resumed_with = Tid(tid).regs().ok().map(|r| r.to_words());
        let sig = std::mem::take(&mut t.signal);
        match Tid(tid).cont(sig) {
            Err(e) if e.is_gone() => Ok(()),
            r => Ok(r?),
        }
    }

    fn handle(&mut self, tid: i32, ev: WaitEvent) -> Result<(), RecordError> {
        let Some(&pid) = self.owner.get(&tid) else {
            if let WaitEvent::Stopped(_) = ev {
                // A thread or process whose creator's event has not been handled yet.
                self.early.insert(tid);
            }
            return Ok(());
        };
        match ev {
            WaitEvent::Exited(code) => self.on_gone(pid, tid, ExitStatus::Exited(code)),
            WaitEvent::Killed(sig) => self.on_gone(pid, tid, ExitStatus::Killed(sig)),
            WaitEvent::Stopped(stop) => match stop {
                Stop::Seccomp => self.on_syscall_entry(pid, tid),
                Stop::Syscall => self.on_syscall_exit(pid, tid),
                Stop::Clone | Stop::Fork | Stop::Vfork => self.on_new_task(pid, tid, stop),
                Stop::Exec => self.on_exec(pid, tid),
                Stop::Signal(sig) => self.on_signal(pid, tid, sig),
                Stop::EventStop(sig) => self.on_event_stop(pid, tid, sig),
                Stop::Exiting => {
                    let _ = Tid(tid).cont(0);
                    Ok(())
                }
            },
        }
    }

    fn state(&mut self, pid: i32, tid: i32) -> Option<State> {
        self.procs
            .get_mut(&pid)
            .and_then(|p| p.thread(tid))
            .map(|t| t.state)
    }

    fn on_syscall_entry(&mut self, pid: i32, tid: i32) -> Result<(), RecordError> {
        if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
            t.slice = Duration::ZERO;
        }
        let mut regs = Tid(tid).regs()?;
        if self.blocked_in_agent(pid, tid) {
            // Its blocked call returned (the agent's traced syscall after it).
            return self.agent_unblock(pid, tid, Unblock::Returned(regs.0.rdi as i64));
        }
        if !self.agent_at_syscall(pid, tid, &regs)? {
            return Ok(());
        }
        let nr = regs.0.orig_rax;
        let args = regs.syscall_args();
        if let Some(why) = self.compat_syscall(pid, &regs) {
            self.failure = Some(why);
            return Ok(());
        }
        if crate::vsyscall::is_vsyscall(&regs) {
            return self.on_vsyscall(pid, tid, regs);
        }
        if let Some(a) = self.procs.get(&pid).and_then(|p| p.agent) {
            let name = hindsight_syscalls::name(nr).unwrap_or("");
            if agent::touches_agent(&a, name, &args) {
                self.failure = Some(format!(
                    "the program's {} would change hindsight's agent memory at {:#x}-{:#x}: \
                     the recording stops here",
                    crate::agent::describe(nr, &args),
                    a.addrs.range.0,
                    a.addrs.range.1
                ));
                return Ok(());
            }
        }
        let class = match hindsight_syscalls::classify(nr, &args) {
            Ok(c) => c,
            // A request whose effects are not known runs: most are ones the kernel refuses
            // (no effect but their error), and its result decides at its exit.
            Err(hindsight_syscalls::SyscallError::Unknown(_)) => Replay::Emulate,
            Err(e) => {
                self.failure = Some(format!("unsupported syscall: {e}"));
                return Ok(());
            }
        };
        if let Replay::Deny(errno) = class {
            self.disguise.answered(pid, nr, &args, errno);
            regs.0.orig_rax = u64::MAX;
            regs.0.rax = (-(errno as i64)) as u64;
            Tid(tid).set_regs(&regs)?;
            self.append(
                pid,
                &Event::Syscall {
                    tid,
                    nr,
                    args,
                    result: -(errno as i64),
                    writes: Vec::new(),
                    mapped: None,
                },
            )?;
            return self.run_user(pid, tid);
        }
        let name = hindsight_syscalls::name(nr).unwrap_or("");
        if matches!(name, "exit" | "exit_group") {
            self.append(
                pid,
                &Event::Syscall {
                    tid,
                    nr,
                    args,
                    result: 0,
                    writes: Vec::new(),
                    mapped: None,
                },
            )?;
            if let Some(p) = self.procs.get_mut(&pid) {
                // A thread that exits keeps the turn until it is gone: the kernel clears its
                // clear-tid word (and wakes its joiner) late in its exit, and another thread
                // running meanwhile could see that word either way — replay, which runs the
                // exit to its end first, always sees it cleared. The leader is only reported
                // gone with the whole process, and exit_group ends every thread.
                let holds_turn = name == "exit" && tid != pid;
                if p.current == Some(tid) && !holds_turn {
                    p.current = None;
                }
                if let Some(t) = p.thread(tid) {
                    t.state = State::Exiting;
                }
                p.exiting |= name == "exit_group";
            }
            self.writer.flush()?;
            let _ = Tid(tid).cont(0);
            return Ok(());
        }
        let to_outputs = self.writes_to_outputs(tid, nr, &args);
        if to_outputs {
            match self.output_writer {
                // Parked at its entry (it keeps its process's turn) until that write is done.
                Some(w) if w != tid && self.owner.contains_key(&w) => {
                    self.output_waiters.push_back((pid, tid));
                    return Ok(());
                }
                _ => self.output_writer = Some(tid),
            }
        }
        self.enter_syscall(pid, tid, nr, args, to_outputs)?;
        match Tid(tid).syscall(0) {
            Err(e) if e.is_gone() => Ok(()),
            r => Ok(r?),
        }
    }

    /// Thread `tid` of `pid` is inside syscall `nr` with `args` (made traced, or a call of
    /// the agent's that blocked, see `agent_stops`): it gives up the process's turn, and its
    /// `SyscallEntry` is written at once when the call may block while others wait.
    fn enter_syscall(
        &mut self,
        pid: i32,
        tid: i32,
        nr: u64,
        args: [u64; 6],
        to_outputs: bool,
    ) -> Result<(), RecordError> {
        let event_index = self.writer.event_count(pid);
        let blocking = may_block(nr, &args) && !to_outputs;
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        if p.current == Some(tid) {
            p.current = None;
        }
        let others_ready = !p.ready.is_empty();
        let turns_at_entry = p.turns;
        if let Some(t) = p.thread(tid) {
            t.state = State::InSyscall;
            t.syscall = Some(InSyscall {
                nr,
                args,
                entered: Instant::now(),
                entry_written: false,
                event_index,
                child: None,
                exec: None,
                turns_at_entry,
                entry_index: None,
                vforked: None,
            });
        }
        if blocking && others_ready {
            self.write_entries(pid)?;
        }
        Ok(())
    }

    fn on_syscall_exit(&mut self, pid: i32, tid: i32) -> Result<(), RecordError> {
        self.syscall_exit(pid, tid)?;
        self.output_done(tid)
    }

    /// Thread `tid`'s write to the outputs is over (or it is gone): the next waiting one
    /// enters its write.
    fn output_done(&mut self, tid: i32) -> Result<(), RecordError> {
        if self.output_writer != Some(tid) || self.ending.is_some() {
            return Ok(());
        }
        self.output_writer = None;
        while let Some((pid, next)) = self.output_waiters.pop_front() {
            if self.owner.get(&next) == Some(&pid) {
                return self.on_syscall_entry(pid, next);
            }
        }
        Ok(())
    }

    fn syscall_exit(&mut self, pid: i32, tid: i32) -> Result<(), RecordError> {
        let regs = Tid(tid).regs()?;
        let agent_fds = match regs.0.orig_rax as i64 {
            libc::SYS_getdents64 | libc::SYS_getdents => self.agent_fds(),
            _ => HashMap::new(),
        };
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        let Some(t) = p.thread(tid) else {
            return Ok(());
        };
        let Some(s) = t.syscall.take() else {
            // Not a syscall we sent towards its exit (a stray stop): go on.
            let _ = Tid(tid).cont(0);
            return Ok(());
        };
        let result = regs.0.rax as i64;
        if self.ending.is_some() && (-516..=-512).contains(&result) {
            // Cut by the ending's own interrupt (-ERESTART…): the program never sees this
            // result, the trace ends inside the call.
            self.park(tid);
            return Ok(());
        }
        let name = hindsight_syscalls::name(s.nr).unwrap_or("");
        // restart_syscall resumes the call that returned -ERESTART_RESTARTBLOCK (a poll or
        // nanosleep interrupted by a signal without handler) and writes what it writes.
        let (effects_nr, effects_args) = match name {
            "restart_syscall" => t.restart_block.take().unwrap_or((s.nr, s.args)),
            _ => (s.nr, s.args),
        };
        if result == -516 {
            t.restart_block = Some((effects_nr, effects_args));
        }
        if installs_seccomp(name, &s.args, result) {
            p.own_seccomp = true;
            if let Some(a) = p.agent {
                a.switch_off(&p.mem)?;
            }
        }
        let mem = &p.mem;
        let result = self
            .disguise
            .at_exit(mem, pid, tid, effects_nr, &effects_args, result);
        let result = cloak::at_exit(mem, tid, effects_nr, &effects_args, result, &|listed| {
            agent_fds.get(&listed).cloned().unwrap_or_default()
        });
        let mut writes = Vec::new();
        let mut mapped = None;
        let mut failure = None;
        match hindsight_syscalls::writes(effects_nr, &effects_args, result, &MemReader(mem)) {
            Ok(ranges) => {
                for w in ranges {
                    let mut data = vec![0u8; w.len];
                    if mem.read(w.addr, &mut data).is_ok() {
                        writes.push(MemWrite { addr: w.addr, data });
                    }
                }
            }
            // An unknown request that failed: the kernel refused it, nothing was written.
            Err(hindsight_syscalls::SyscallError::Unknown(_))
                if hindsight_syscalls::is_error(result) => {}
            Err(hindsight_syscalls::SyscallError::Unknown(e)) => {
                failure = Some(format!(
                    "unsupported syscall: {e} (the call succeeded: the recording cannot go on)"
                ))
            }
            Err(e) => failure = Some(format!("unsupported syscall: {e}")),
        }
        if let Some(target) = hindsight_syscalls::writes_into(effects_nr, &effects_args) {
            if !hindsight_syscalls::is_error(result) && !same_process(pid, target) {
                failure = Some(format!(
                    "unsupported syscall: {name} wrote into another process ({target}), whose \
                     memory the recording does not follow"
                ));
            }
        }
        if matches!(name, "clone" | "clone3") && !hindsight_syscalls::is_error(result) {
            writes.extend(clone_tid_writes(mem, &s.args, name == "clone3"));
        }
        if matches!(name, "mmap") && !hindsight_syscalls::is_error(result) {
            let flags = s.args[3];
            if flags & libc::MAP_ANONYMOUS as u64 == 0 {
                let fd = s.args[4] as i32;
                let fd_path = std::path::PathBuf::from(format!("/proc/{tid}/fd/{fd}"));
                let is_file = |p: &Path| std::fs::metadata(p).map(|m| m.is_file()).unwrap_or(false);
                let target = std::fs::read_link(&fd_path).ok().map(|path| {
                    // A file unlinked since it was opened ("… (deleted)") is still read
                    // through the program's descriptor.
                    if !is_file(&path) && is_file(&fd_path) {
                        fd_path.clone()
                    } else {
                        path
                    }
                });
                match target {
                    Some(path) if path == Path::new("/dev/zero") => {}
                    Some(path)
                        if std::fs::metadata(&path)
                            .map(|m| m.is_file())
                            .unwrap_or(false) =>
                    {
                        match self.mapped_file(&path, s.args[5]) {
                            Ok(m) => mapped = Some(m),
                            Err(e) => failure = Some(e),
                        }
                    }
                    other => {
                        failure =
                            Some(format!(
                            "unsupported syscall: mmap of {} (only regular files can be recorded)",
                            other.map(|p| p.display().to_string()).unwrap_or(format!("fd {fd}"))
                        ))
                    }
                }
            }
        }
        if name == "shmat" && !hindsight_syscalls::is_error(result) {
            // The segment is a file of the kernel's own (its name in /proc/PID/maps is
            // "/SYSV…"), read through the mapping's link: recorded as a shared mapping of it,
            // so that two attachments of one segment alias in replay as they did.
            match segment_file(pid, result as u64) {
                Some((path, _)) => match self.mapped_file(&path, 0) {
                    Ok(m) => mapped = Some(m),
                    Err(e) => failure = Some(e),
                },
                None => {
                    failure = Some(format!(
                        "unsupported syscall: shmat: the segment attached at {result:#x} cannot \
                         be read"
                    ))
                }
            }
        }
        if let Some(f) = failure {
            self.failure = Some(f);
            return Ok(());
        }
        if !hindsight_syscalls::is_error(result) {
            self.follow_shared(pid, name, &s.args, result as u64);
            self.agent_after_fds(pid, name, &s.args);
        }
        let outputs = self.output_of(pid, tid, s.nr, &s.args, result);
        if let Some(p) = self.procs.get(&pid) {
            if let Some(c) = p.counter.as_ref() {
                if shares_memory_with_child(name, &s.args, &p.mem) {
                    c.restore_word(&p.mem)?;
                }
            }
        }
        if s.exec.is_some() {
            // The new program, before its first instruction: its counter and patched code.
            let (agent, counter) = match self.procs.get(&pid) {
                Some(p) => {
                    let agent = load_agent(Tid(tid), &p.mem, self.outputs)?;
                    // Loaded all the same (replay loads it at the same place), but off.
                    if let Some(a) = agent.filter(|_| p.own_seccomp) {
                        a.switch_off(&p.mem)?;
                    }
                    let counter = install_counter(Tid(tid), &p.mem, agent.as_ref())?;
                    (agent, counter)
                }
                None => (None, None),
            };
            if let Some(p) = self.procs.get_mut(&pid) {
                p.counter = counter;
                p.agent = agent;
                p.agent_runner = None;
                for t in p.threads.iter_mut() {
                    // Its descriptors closed on exec (close-on-exec).
                    t.agent = AgentThread {
                        desched_fd: -1,
                        ..Default::default()
                    };
                }
            }
        } else if !hindsight_syscalls::is_error(result) {
            self.follow_code(pid, tid, name, &s.args, result as u64)?;
        }
        let event = if let Some((path, file)) = s.exec.clone() {
            Event::Exec { tid, path, file }
        } else if s.entry_written {
            Event::SyscallExit {
                tid,
                nr: s.nr,
                result,
                writes,
                mapped,
            }
        } else {
            Event::Syscall {
                tid,
                nr: s.nr,
                args: s.args,
                result,
                writes,
                mapped,
            }
        };
        let links = self.links_of(pid, &s, effects_nr, &effects_args, result)?;
        let cpu = point::thread_cpu_ns(pid, tid);
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        let runs_now = !s.entry_written && p.current.is_none();
        if runs_now {
            let child = s.child;
            self.append_with(pid, &event, &links)?;
            let (pending, born) = self
                .procs
                .get_mut(&pid)
                .and_then(|p| p.thread(tid))
                .map(|t| {
                    (
                        std::mem::take(&mut t.pending),
                        std::mem::take(&mut t.unborn),
                    )
                })
                .unwrap_or_default();
            for (e, links) in &pending {
                self.append_with(pid, e, links)?;
            }
            if let Some(p) = self.procs.get_mut(&pid) {
                p.ready.extend(born);
            }
            for (owner, e) in outputs {
                self.append(owner, &e)?;
            }
            if let Some(c) = child {
                self.writer.add_process(c)?;
            }
            if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
                t.cpu_ns = cpu;
            }
            // sched_yield gives the process to the next ready thread (programs count on it
            // to let another thread run, as the kernel would); replay follows the events.
            // It is answered once another thread ran since it was entered. If none did and
            // none is ready but one is inside its own sched_yield, this thread waits for
            // that one to run first: two threads yielding to each other take turns.
            if name == "sched_yield" {
                if let Some(p) = self.procs.get_mut(&pid) {
                    let answered = p.turns != s.turns_at_entry;
                    let peer_yielding = p.threads.iter().any(|t| {
                        t.tid != tid
                            && t.state == State::InSyscall
                            && t.syscall
                                .as_ref()
                                .is_some_and(|c| c.nr == libc::SYS_sched_yield as u64)
                    });
                    if !answered && (!p.ready.is_empty() || peer_yielding) {
                        p.current = None;
                        if p.ready.is_empty() {
                            p.yield_waiters.push(tid);
                        } else {
                            p.ready.push_back(tid);
                        }
                        if let Some(t) = p.thread(tid) {
                            t.state = State::Ready;
                        }
                        return self.schedule(pid);
                    }
                }
            }
            self.run_user(pid, tid)
        } else {
            // Its turn comes later. Its output is written now, in every stream that shows it:
            // replay shows output in the order it reached the terminal (an `Output` belongs
            // to no thread, so it may come before its thread's turn).
            let Some(t) = p.thread(tid) else {
                return Ok(());
            };
            t.state = State::Ready;
            t.cpu_ns = cpu;
            t.pending.push((event, links));
            p.ready.push_back(tid);
            for (owner, e) in outputs {
                self.append(owner, &e)?;
            }
            Ok(())
        }
    }

    /// Output events for a write to the terminal (or whatever stdout/stderr were when the
    /// recording started): one in this process's stream and one in each ancestor's, so
    /// that replaying any of them shows it.
    /// A call into the vsyscall page, at its seccomp stop: performed here and skipped (see
    /// `vsyscall`), written down like a syscall that returned at once.
    fn on_vsyscall(
        &mut self,
        pid: i32,
        tid: i32,
        mut regs: hindsight_ptrace::Regs,
    ) -> Result<(), RecordError> {
        let nr = regs.0.orig_rax;
        let args = regs.syscall_args();
        let Some(p) = self.procs.get(&pid) else {
            return Ok(());
        };
        let Some((result, writes)) = crate::vsyscall::perform(&p.mem, &regs) else {
            self.failure = Some(format!(
                "unsupported syscall: a call into the vsyscall page at {:#x}",
                regs.pc()
            ));
            return Ok(());
        };
        regs.0.orig_rax = u64::MAX;
        regs.0.rax = result as u64;
        Tid(tid).set_regs(&regs)?;
        self.append(
            pid,
            &Event::Syscall {
                tid,
                nr,
                args,
                result,
                writes,
                mapped: None,
            },
        )?;
        self.run_user(pid, tid)
    }

    /// A 32-bit syscall (`int $0x80` in a 64-bit program) has numbers and arguments of
    /// another table: it is refused by name rather than recorded as the x86-64 syscall of
    /// the same number.
    fn compat_syscall(&self, pid: i32, regs: &hindsight_ptrace::Regs) -> Option<String> {
        let p = self.procs.get(&pid)?;
        let mut insn = [0u8; 2];
        p.mem.read(regs.pc().wrapping_sub(2), &mut insn).ok()?;
        (insn == [0xcd, 0x80]).then(|| {
            format!(
                "unsupported syscall: a 32-bit syscall (int $0x80, number {}) in a 64-bit \
                 program",
                regs.0.orig_rax
            )
        })
    }

    /// Whether syscall `nr` writes to the terminal outputs (what stdout or stderr was when
    /// recording started). Such a write keeps its turn (unless it takes longer than the
    /// syscall patience): two threads writing there at once would reach the terminal in an
    /// order the recorder cannot see, and replay shows output in the recorded order.
    fn writes_to_outputs(&self, tid: i32, nr: u64, args: &[u64; 6]) -> bool {
        matches!(
            hindsight_syscalls::name(nr),
            Some("write" | "writev" | "pwrite64" | "pwritev" | "pwritev2")
        ) && self
            .outputs
            .iter()
            .flatten()
            .any(|o| o.is(tid, args[0] as i32))
    }

    /// The `Output` events of a write to the terminal outputs (in the writer's stream and its
    /// ancestors'). Descriptors are looked up through the thread (`/proc/TID`): once the leader has
    /// exited, `/proc/PID/fd` is empty while the other threads go on (rr's
    /// clone_immediate_exit).
    fn output_of(
        &self,
        pid: i32,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        result: i64,
    ) -> Vec<(i32, Event)> {
        let name = hindsight_syscalls::name(nr).unwrap_or("");
        if result <= 0 || !matches!(name, "write" | "writev") {
            return Vec::new();
        }
        let fd = args[0] as i32;
        let Some(which) = self
            .outputs
            .iter()
            .flatten()
            .find(|o| o.is(tid, fd))
            .map(|o| o.fd)
        else {
            return Vec::new();
        };
        let Some(p) = self.procs.get(&pid) else {
            return Vec::new();
        };
        let data = match name {
            "write" => {
                let mut d = vec![0u8; result as usize];
                if p.mem.read(args[1], &mut d).is_err() {
                    return Vec::new();
                }
                d
            }
            _ => read_iovecs(&p.mem, args[1], args[2], result as usize),
        };
        let mut out = Vec::new();
        let mut owner = Some(pid);
        while let Some(o) = owner {
            out.push((
                o,
                Event::Output {
                    pid,
                    fd: which,
                    data: data.clone(),
                },
            ));
            owner = self.parents.get(&o).copied();
        }
        out
    }

    /// The transfers between processes that syscall `s` of `pid`, which returned `result`,
    /// made (its effects are those of `nr`, `args`: a restarted call's): data through pipes,
    /// FIFOs and sockets, a child's end seen by a wait, a vfork child's release seen by its
    /// parent, an exec that releases a vfork parent.
    fn links_of(
        &mut self,
        pid: i32,
        s: &InSyscall,
        nr: u64,
        args: &[u64; 6],
        result: i64,
    ) -> Result<Vec<Pending>, RecordError> {
        let name = hindsight_syscalls::name(nr).unwrap_or("");
        let mut links =
            self.channels
                .transfers(&mut self.writer, pid, name, args, result, s.entry_index)?;
        if let Some(child) = self.waited_child(pid, name, args, result) {
            links.push(self.channels.one_shot(
                &mut self.writer,
                ChannelKind::Exit,
                &format!("exit of {child}"),
                Direction::Receive,
            )?);
        }
        if let Some(child) = s.vforked.filter(|_| !hindsight_syscalls::is_error(result)) {
            links.push(self.channels.one_shot(
                &mut self.writer,
                ChannelKind::VforkDone,
                &format!("release of vfork parent by {child}"),
                Direction::Receive,
            )?);
        }
        if s.exec.is_some() {
            links.extend(self.vfork_release(pid)?);
        }
        Ok(links)
    }

    /// The send that releases `pid`'s vfork parent, if it is still waiting (at `pid`'s exec
    /// or end).
    fn vfork_release(&mut self, pid: i32) -> Result<Option<Pending>, RecordError> {
        if self.vforks.remove(&pid).is_none() {
            return Ok(None);
        }
        Ok(Some(self.channels.one_shot(
            &mut self.writer,
            ChannelKind::VforkDone,
            &format!("release of vfork parent by {pid}"),
            Direction::Send,
        )?))
    }

    /// The agent's descriptors of every process, by the id of each of its threads (what
    /// a listing of `/proc/ID/fd` must not show).
    fn agent_fds(&self) -> HashMap<i32, Vec<i64>> {
        let mut by_tid = HashMap::new();
        for p in self.procs.values() {
            let Some(a) = p.agent else { continue };
            let mut fds: Vec<i64> = p
                .threads
                .iter()
                .map(|t| t.agent.desched_fd)
                .chain(p.agent_stale.iter().copied())
                .chain(a.state(&p.mem).ok().map(|s| s.desched_fd))
                .filter(|fd| *fd >= hindsight_agent::abi::DESCHED_FD_FLOOR)
                .collect();
            fds.sort_unstable();
            fds.dedup();
            if fds.is_empty() {
                continue;
            }
            for t in &p.threads {
                by_tid.insert(t.tid, fds.clone());
            }
            by_tid.insert(p.pid, fds);
        }
        by_tid
    }

    /// The recorded child whose end a wait4 or waitid of `pid` reported (not a stop or a
    /// continue, which end nothing).
    fn waited_child(&self, pid: i32, name: &str, args: &[u64; 6], result: i64) -> Option<i32> {
        let p = self.procs.get(&pid)?;
        let child = match name {
            "wait4" if result > 0 => {
                let status = match args[1] {
                    0 => None,
                    addr => p.mem.read_u64(addr).ok().map(|v| v as u32 as i32),
                };
                // Without WUNTRACED and WCONTINUED only ends are reported.
                let ends_only = args[2] & (libc::WUNTRACED | libc::WCONTINUED) as u64 == 0;
                let ended = status.is_none_or(|st| libc::WIFEXITED(st) || libc::WIFSIGNALED(st));
                (ends_only || ended).then_some(result as i32)?
            }
            "waitid" if result == 0 && args[2] != 0 => {
                // siginfo_t: si_code at 8, si_pid at 16.
                let code = p.mem.read_u64(args[2] + 8).ok()? as u32 as i32;
                let child = p.mem.read_u64(args[2] + 16).ok()? as u32 as i32;
                let ended = matches!(code, libc::CLD_EXITED | libc::CLD_KILLED | libc::CLD_DUMPED);
                (ended && child > 0).then_some(child)?
            }
            _ => return None,
        };
        Some(child)
    }

    fn on_new_task(&mut self, pid: i32, tid: i32, stop: Stop) -> Result<(), RecordError> {
        let child = Tid(tid).event_msg()? as i32;
        let is_thread = stop == Stop::Clone && Tid(child).tgid() == Some(pid);
        // The child's first stop, unless it came already.
        if !self.early.remove(&child) {
            match hindsight_ptrace::wait_tid(Tid(child))? {
                WaitEvent::Stopped(_) => {}
                _ => {
                    let _ = Tid(tid).syscall(0);
                    return Ok(());
                }
            }
        }
        let mut t = Thread::new(child, State::Ready);
        t.cpu_ns = point::thread_cpu_ns(if is_thread { pid } else { child }, child);
        if is_thread {
            self.threads_seen += 1;
            self.owner.insert(child, pid);
            if let Some(p) = self.procs.get_mut(&pid) {
                p.threads.push(t);
                match p.thread(tid) {
                    Some(creator) => creator.unborn.push(child),
                    None => p.ready.push_back(child),
                }
                // The agent learns of the new count of threads at the next switch.
                p.agent_runner = None;
            }
        } else {
            self.threads_seen += 1;
            self.processes_seen += 1;
            let mem = ProcessMemory::open(child)?;
            // The child has a copy of its parent's counter and patched code.
            let counter = self
                .procs
                .get(&pid)
                .and_then(|p| p.counter.as_ref())
                .map(|c| c.for_child(child, &mem));
            // The child shares its parent's shared mappings (same addresses).
            let shared = self
                .procs
                .get(&pid)
                .map(|p| p.shared.clone())
                .unwrap_or_default();
            // The child has a copy of the agent; the desched descriptors it inherited are
            // its parent's threads' (their events count those threads): the agent closes
            // them, and the child's threads open their own. A vfork child shares its
            // parent's memory (the parent tells the agent its thread again when it runs).
            let vfork = stop == Stop::Vfork;
            let own_seccomp = self.procs.get(&pid).is_some_and(|p| p.own_seccomp);
            // A child that shares its parent's memory and runs beside it (clone(CLONE_VM)
            // without CLONE_VFORK) shares the agent's one buffer, frame and stack too: the
            // agent is switched off for both (every call traced). Replay needs nothing: it
            // replays each process alone, and an agent with no buffered calls to answer
            // sends every call back to be traced.
            let shares_vm = !vfork
                && self.procs.get_mut(&pid).is_some_and(|p| {
                    let mem = &p.mem;
                    p.threads.iter().find(|t| t.tid == tid).is_some_and(|t| {
                        t.syscall.as_ref().is_some_and(|s| {
                            let name = hindsight_syscalls::name(s.nr).unwrap_or("");
                            shares_memory_with_child(name, &s.args, mem)
                        })
                    })
                });
            let (agent, agent_stale) = match self.procs.get_mut(&pid) {
                Some(p) => {
                    if vfork {
                        p.agent_runner = None;
                    }
                    if let Some(a) = p.agent.filter(|_| shares_vm) {
                        a.switch_off(&p.mem)?;
                    }
                    let fds = if vfork {
                        Vec::new()
                    } else {
                        p.threads
                            .iter()
                            .map(|t| t.agent.desched_fd)
                            .filter(|fd| *fd >= 0)
                            .chain(p.agent_stale.iter().copied())
                            .collect()
                    };
                    (p.agent, fds)
                }
                None => (None, Vec::new()),
            };
            self.owner.insert(child, child);
            self.parents.insert(child, pid);
            self.disguise.fork(pid, child);
            let (program, args) = process_identity(child);
            if let Some(s) = self
                .procs
                .get_mut(&pid)
                .and_then(|p| p.thread(tid))
                .and_then(|t| t.syscall.as_mut())
            {
                s.child = Some(ProcessInfo {
                    pid: child,
                    parent: Some(pid),
                    fork_event: Some(s.event_index),
                    program,
                    args,
                });
                if stop == Stop::Vfork {
                    s.vforked = Some(child);
                    self.vforks.insert(child, pid);
                }
            }
            self.procs.insert(
                child,
                Process {
                    pid: child,
                    mem,
                    threads: vec![t],
                    ready: VecDeque::from([child]),
                    current: None,
                    since: Instant::now(),
                    turn: None,
                    shared,
                    turns: 0,
                    last_runner: None,
                    yield_waiters: Vec::new(),
                    counter,
                    agent,
                    agent_runner: None,
                    agent_stale,
                    own_seccomp,
                    exiting: false,
                },
            );
        }
        match Tid(tid).syscall(0) {
            Err(e) if e.is_gone() => Ok(()),
            r => Ok(r?),
        }
    }

    fn on_exec(&mut self, pid: i32, tid: i32) -> Result<(), RecordError> {
        // The exec'ing thread now has the process id; the others are gone.
        let former = Tid(tid).event_msg().map(|m| m as i32).unwrap_or(tid);
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        let mut t = match p.threads.iter().position(|t| t.tid == former) {
            Some(i) => p.threads.remove(i),
            None => Thread::new(pid, State::InSyscall),
        };
        for gone in p.threads.drain(..) {
            self.owner.remove(&gone.tid);
        }
        t.tid = pid;
        p.threads.push(t);
        p.ready.retain(|r| *r == pid);
        p.current = None;
        p.mem = ProcessMemory::open(pid)?;
        self.owner.insert(pid, pid);
        let regs = Tid(pid).regs()?;
        hindsight_ptrace::auxv::hide_vdso(&p.mem, regs.sp())?;
        let random = at_random(&p.mem, regs.sp());
        if let Some(t) = p.thread(pid) {
            // Written right after the exec's own event, before the new program runs.
            t.pending
                .push((Event::KernelWrite { writes: random }, Vec::new()));
        }
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        // A program run from a descriptor (fexecve of a memfd, of a file since deleted, or
        // of one whose path means another file in this namespace) is copied through the
        // process's own link to it.
        let is_file = std::fs::metadata(&exe).is_ok_and(|m| m.is_file());
        let file = if is_file {
            self.writer.add_file(&exe)?
        } else {
            self.writer
                .add_file(Path::new(&format!("/proc/{pid}/exe")))?
        };
        let (program, args) = process_identity(pid);
        self.writer.note_exec(pid, &program, args)?;
        if let Some(s) = self
            .procs
            .get_mut(&pid)
            .and_then(|p| p.thread(pid))
            .and_then(|t| t.syscall.as_mut())
        {
            s.exec = Some((exe.as_os_str().as_bytes().to_vec(), file));
        }
        match Tid(pid).syscall(0) {
            Err(e) if e.is_gone() => Ok(()),
            r => Ok(r?),
        }
    }

    fn on_signal(&mut self, pid: i32, tid: i32, sig: i32) -> Result<(), RecordError> {
        self.restore_requeued(pid, tid, sig)?;
        let si = Tid(tid).siginfo()?;
        if sig == libc::SIGTRAP
            && self.state(pid, tid) != Some(State::User)
            && Tid(tid)
                .regs()
                .is_ok_and(|r| agent::hit_exit_trap(Tid(tid), &si, r.pc()))
        {
            // An agent's exit trap whose SIGTRAP is reported after the thread left user code
            // (the trap was taken away at that stop): not the program's.
            if self.state(pid, tid) == Some(State::InSyscall) {
                let _ = Tid(tid).syscall(0);
            } else {
                let _ = Tid(tid).cont(0);
            }
            return Ok(());
        }
        if self.blocked_in_agent(pid, tid) {
            return self.agent_blocked_signal(pid, tid, sig, &si);
        }
        let state = self.state(pid, tid);
        if state == Some(State::User) && !self.agent_at_signal(pid, tid, sig, &si)? {
            return Ok(());
        }
        if state != Some(State::User) && self.stray_desched(pid, tid, sig, &si) {
            if state == Some(State::InSyscall) {
                let _ = Tid(tid).syscall(0);
            } else if state == Some(State::Exiting) {
                let _ = Tid(tid).cont(0);
            }
            return Ok(());
        }
        if state != Some(State::User) {
            // It arrived while the thread was not executing user code (at a syscall's end):
            // written and delivered when the thread runs next.
            if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
                t.deferred_signal = Some((sig, siginfo_bytes(&si)));
                if t.state == State::InSyscall {
                    // PTRACE_SYSCALL towards the exit again.
                    let _ = Tid(tid).syscall(0);
                }
            }
            return Ok(());
        }
        let mut regs = Tid(tid).regs()?;
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        if sig == libc::SIGSEGV && si.si_code == 0x80 {
            if let Some(read) = tsc::tsc_read_at(&p.mem, regs.pc()) {
                let (value, aux) = tsc::read_host(read);
                let pc = regs.pc();
                tsc::complete(&mut regs, read, value, aux);
                Tid(tid).set_regs(&regs)?;
                self.append(
                    pid,
                    &Event::Rdtsc {
                        tid,
                        pc,
                        tsc: value,
                        aux: (read == tsc::TscRead::Rdtscp).then_some(aux),
                    },
                )?;
                return self.run_user(pid, tid);
            }
        }
        let words = regs.to_words();
        let t = p.thread(tid);
        let resumed_with = t.as_ref().and_then(|t| t.resumed_with);
        let point = if is_synchronous(sig, si.si_code) {
            SignalPoint::Synchronous
        } else if resumed_with.is_some_and(|r| point::same_registers(&r, &words)) {
            SignalPoint::AtStop
        } else {
            match self.async_point(pid, tid)? {
                Ok(point) => {
                    // The thread now stops at a step's trap (or where the signal stopped it):
                    // the signal goes in with its own siginfo.
                    Tid(tid).set_siginfo(&si)?;
                    SignalPoint::Async(Box::new(point))
                }
                Err(ev) => return self.handle(tid, ev),
            }
        };
        self.deliver(pid, tid, sig, &si, point)
    }

    /// Writes signal `sig` down at `point` and delivers it when the thread resumes (it is
    /// stopped at a signal-delivery stop, with `si` as its siginfo).
    fn deliver(
        &mut self,
        pid: i32,
        tid: i32,
        sig: i32,
        si: &libc::siginfo_t,
        point: SignalPoint,
    ) -> Result<(), RecordError> {
        self.append(
            pid,
            &Event::Signal {
                tid,
                signo: sig,
                siginfo: siginfo_bytes(si),
                point,
            },
        )?;
        if matches!(
            sig,
            libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE | libc::SIGABRT
        ) {
            // The program may die of it: what is recorded so far must be on disk.
            self.writer.flush()?;
        }
        let cpu = point::thread_cpu_ns(pid, tid);
        if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
            t.signal = sig;
            t.cpu_ns = cpu;
        }
        self.run_user(pid, tid)
    }

    /// Where an asynchronous event (a signal, a preemption) of `tid`, stopped in the middle
    /// of user code, lands, and that position: a few instructions on, where replay can tell
    /// the iteration apart even without ticks ([`settle`]), at an instruction of the program
    /// (not in the middle of the counter's machinery), named by the thread's tick count, pc
    /// and registers. Err: the thread ended on the way (its wait event).
    fn async_point(
        &mut self,
        pid: i32,
        tid: i32,
    ) -> Result<Result<AsyncPoint, WaitEvent>, RecordError> {
        let Some(p) = self.procs.get_mut(&pid) else {
            return Err(RecordError::Ptrace(hindsight_ptrace::PtraceError::Memory(
                0,
            )));
        };
        let view = p.counter.as_ref().map(|c| c.view().clone());
        let agent_stub_entry = |pc: u64| {
            view.as_ref()
                .and_then(|v| v.agent_stub(pc))
                .is_some_and(|s| s.entry == pc)
        };
        if let Settled::Gone(ev) = settle::settle(pid, Tid(tid), &p.mem, &agent_stub_entry)? {
            return Ok(Err(ev));
        }
        let mut ticks = None;
        if let Some(c) = p.counter.as_mut() {
            if let Some(ev) = c.step_to_boundary(pid, Tid(tid))? {
                return Ok(Err(ev));
            }
            ticks = Some(c.ticks(&p.mem, tid)?);
        }
        let regs = Tid(tid).regs()?;
        let cpu = point::thread_cpu_ns(pid, tid);
        let before = p.thread(tid).map(|t| t.cpu_ns).unwrap_or(0);
        Ok(Ok(point::capture(
            &p.mem,
            &regs,
            cpu.saturating_sub(before),
            ticks,
        )))
    }

    /// Gives the process to another ready thread, `tid` stopped at `point`.
    fn preempt(&mut self, pid: i32, tid: i32, point: AsyncPoint) -> Result<(), RecordError> {
        let base_slice = self.slice;
        let counted = point.ticks.is_some();
        let cpu = point::thread_cpu_ns(pid, tid);
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        if p.ready.is_empty() {
            // Nobody to give the turn to any more.
            return self.run_user(pid, tid);
        }
        let Some(t) = p.thread(tid) else {
            return Ok(());
        };
        t.cpu_ns = cpu;
        t.state = State::Ready;
        // Finding an uncounted position again costs replay far more than a syscall: a
        // thread preempted there again without a syscall gets a longer slice.
        if !counted {
            t.slice = (t.slice.max(base_slice) * 2).min(Duration::from_secs(2));
        }
        p.current = None;
        p.ready.push_back(tid);
        self.append(pid, &Event::Preempt { tid, point })?;
        Ok(())
    }

    fn on_event_stop(&mut self, pid: i32, tid: i32, sig: i32) -> Result<(), RecordError> {
        if self.ending.is_some() {
            return self.ending_event_stop(pid, tid);
        }
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        let others_ready = !p.ready.is_empty();
        let Some(t) = p.thread(tid) else {
            return Ok(());
        };
        t.interrupted = false;
        let state = t.state;
        if is_group_stop(sig) {
            return self.on_group_stop(pid, tid);
        }
        if state == State::GroupStop {
            // Woken from its group stop (SIGCONT): it runs on from where it stopped when it
            // gets its turn again (the SIGCONT's delivery, if any, comes then).
            t.state = State::Ready;
            if let Some(p) = self.procs.get_mut(&pid) {
                p.ready.push_back(tid);
            }
            return self.schedule(pid);
        }
        if state == State::User && others_ready && !self.agent_at_interrupt(pid, tid)? {
            return Ok(());
        }
        match state {
            // Stopped right after a syscall that ended with a restart code (the stop
            // interrupted it): the kernel restarts the call as the thread goes on. It is not
            // preempted there: a step towards a position would enter the restarted call
            // unseen. It goes on into the call, whose syscall stop comes at once.
            State::User if others_ready && restarts(&Tid(tid).regs()?) => {
                let _ = Tid(tid).cont(0);
                Ok(())
            }
            State::User if others_ready => match self.async_point(pid, tid)? {
                Ok(point) => self.preempt(pid, tid, point),
                Err(ev) => self.handle(tid, ev),
            },
            State::User => {
                // Nobody to give the turn to: the stop is invisible to the program.
                let _ = Tid(tid).cont(0);
                Ok(())
            }
            // A call blocked in the agent goes on there (PTRACE_SYSCALL would stop it at
            // the restarted call's entry).
            State::InSyscall if self.blocked_in_agent(pid, tid) => {
                let _ = Tid(tid).cont(0);
                Ok(())
            }
            State::InSyscall => {
                let _ = Tid(tid).syscall(0);
                Ok(())
            }
            // Ready threads are stopped already (and a stopped one is woken above); an
            // exiting one goes on dying.
            State::Ready | State::GroupStop => Ok(()),
            State::Exiting => {
                let _ = Tid(tid).cont(0);
                Ok(())
            }
        }
    }

    /// Thread `tid` entered a group stop (a stop signal's default action, delivered at its
    /// signal stop): it stays stopped, as untraced, and gives up its turn. Nothing is
    /// written: to the program a stop is time passing, and replay does not stop it.
    fn on_group_stop(&mut self, pid: i32, tid: i32) -> Result<(), RecordError> {
        if let Some(p) = self.procs.get_mut(&pid) {
            if p.current == Some(tid) {
                p.current = None;
            }
            // One stopped inside a syscall stays there: woken, it goes on towards the
            // syscall's exit.
            if let Some(t) = p.thread(tid).filter(|t| t.state != State::InSyscall) {
                t.state = State::GroupStop;
            }
        }
        match Tid(tid).listen() {
            Err(e) if e.is_gone() => {}
            r => r?,
        }
        self.schedule(pid)
    }

    fn on_gone(&mut self, pid: i32, tid: i32, status: ExitStatus) -> Result<(), RecordError> {
        self.owner.remove(&tid);
        self.park(tid);
        self.output_done(tid)?;
        if tid == pid {
            // The leader is reported last: the process is over.
            if let Some(p) = self.procs.remove(&pid) {
                for t in &p.threads {
                    self.owner.remove(&t.tid);
                }
            }
            // Its end is a message to whoever waits for it (and lets a vfork parent go on).
            let mut links = vec![self.channels.one_shot(
                &mut self.writer,
                ChannelKind::Exit,
                &format!("exit of {pid}"),
                Direction::Send,
            )?];
            links.extend(self.vfork_release(pid)?);
            self.append_with(
                pid,
                &Event::ProcessExit {
                    status: status.clone(),
                },
                &links,
            )?;
            self.writer.note_process_end(pid, status.clone())?;
            self.writer.flush()?;
            if pid == self.root {
                self.root_exit = Some(status);
                self.kill_leftovers();
            }
            return Ok(());
        }
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        // (A thread that dies inside its clone leaves its children to run.)
        let orphans: Vec<i32> = p
            .thread(tid)
            .map(|t| std::mem::take(&mut t.unborn))
            .unwrap_or_default();
        if let Some(t) = p.thread(tid) {
            if t.agent.desched_fd >= 0 {
                let fd = t.agent.desched_fd;
                p.agent_stale.push(fd);
            }
        }
        p.agent_runner = None;
        p.threads.retain(|t| t.tid != tid);
        p.ready.retain(|t| *t != tid);
        p.ready.extend(orphans);
        if p.current == Some(tid) {
            p.current = None;
        }
        self.append(pid, &Event::ThreadExit { tid })?;
        Ok(())
    }

    /// Patches code that a successful syscall made executable, forgets code it unmapped.
    fn follow_code(
        &mut self,
        pid: i32,
        tid: i32,
        name: &str,
        args: &[u64; 6],
        result: u64,
    ) -> Result<(), RecordError> {
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        let Some(c) = p.counter.as_mut() else {
            return Ok(());
        };
        if hindsight_ticks::counter::changes_code(name, args, result, c) {
            c.patch_new(Tid(tid), &p.mem)?;
        }
        Ok(())
    }

    /// Keeps the list of `pid`'s shared mappings up to date after a successful syscall.
    fn follow_shared(&mut self, pid: i32, name: &str, args: &[u64; 6], result: u64) {
        let Some(p) = self.procs.get_mut(&pid) else {
            return;
        };
        match name {
            "mmap"
                if args[3] & libc::MAP_SHARED as u64 != 0
                    && !p.shared.add(
                        &p.mem,
                        result,
                        args[1],
                        shared_file(pid, args[3], args[4] as i32, args[5]),
                    ) =>
            {
                eprintln!(
                    "hindsight: a shared mapping of {} bytes at {result:#x} is not followed \
                     (over {} MiB): what other processes write into it will not replay",
                    args[1],
                    crate::shared::LIMIT >> 20
                );
            }
            // A private mapping of a file that reaches past its end (images excepted: the
            // loader's reservations do, and their files do not grow).
            "mmap"
                if args[3] & 0x03 == libc::MAP_PRIVATE as u64
                    && args[3] & libc::MAP_DENYWRITE as u64 == 0 =>
            {
                if let Some(b) = shared_file(pid, args[3], args[4] as i32, args[5]) {
                    p.shared.add_private(result, args[1], b);
                }
            }
            "shmat" => {
                let backing = segment_file(pid, result).and_then(|(path, len)| {
                    let file = std::fs::File::open(path).ok()?;
                    Some((crate::shared::Backing { file, offset: 0 }, len))
                });
                let len = backing.as_ref().map_or(0, |(_, len)| *len);
                if !p.shared.add(&p.mem, result, len, backing.map(|(b, _)| b)) {
                    eprintln!(
                        "hindsight: a shared memory segment of {len} bytes at {result:#x} is not \
                         followed (over {} MiB): what other processes write into it will not \
                         replay",
                        crate::shared::LIMIT >> 20
                    );
                }
            }
            // The attachment's pages go (a followed mapping starts at the address).
            "shmdt" => p.shared.forget(args[0], 1),
            "munmap" => p.shared.forget(args[0], args[1]),
            // A followed mapping moved or resized is followed where it is now.
            "mremap" if !p.shared.moved(args[0], args[1], result, args[2]) => {
                eprintln!(
                    "hindsight: a shared mapping remapped to {} bytes at {result:#x} is not \
                     followed any more: what other processes write into it will not replay",
                    args[2]
                );
            }
            // MADV_DONTNEED, MADV_FREE, MADV_DONTNEED_LOCKED: replay maps shared memory
            // privately, where these drop the bytes.
            "madvise" if matches!(args[2], 4 | 8 | 24) => p.shared.dropped(args[0], args[1]),
            _ => {}
        }
        if name == "mmap"
            && args[3] & libc::MAP_SHARED as u64 != 0
            && args[3] & libc::MAP_ANONYMOUS as u64 == 0
        {
            if let (Some(a), Some(k)) = (
                p.agent,
                file_key(format!("/proc/{pid}/fd/{}", args[4] as i32)),
            ) {
                let _ = a.add_shared_file(&p.mem, k.dev, k.ino);
            }
        }
    }

    /// The recorded program has ended: the processes it left behind (daemons, orphans) would
    /// keep the recording open forever. As rr does, they are killed; their deaths are recorded
    /// as they come.
    fn kill_leftovers(&self) {
        for pid in self.procs.keys() {
            // SAFETY: plain kill of our own tracees.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
    }

    fn kill_all(&mut self) {
        for pid in self.procs.keys() {
            // SAFETY: plain kill of our own tracees.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        while let Ok((_, _)) = hindsight_ptrace::wait_any() {}
        self.procs.clear();
    }
}

/// Whether syscall `name(args)` makes a child process that shares the caller's memory (vfork,
/// clone with CLONE_VM but not CLONE_THREAD).
fn shares_memory_with_child(name: &str, args: &[u64; 6], mem: &ProcessMemory) -> bool {
    let vm = libc::CLONE_VM as u64;
    let thread = libc::CLONE_THREAD as u64;
    let flags = match name {
        "vfork" => return true,
        "clone" => args[0],
        "clone3" => mem.read_u64(args[0]).unwrap_or(0),
        _ => return false,
    };
    flags & vm != 0 && flags & thread == 0
}

/// What the kernel wrote for CLONE_PARENT_SETTID / CLONE_CHILD_SETTID (the child's tid): replay
/// runs clone for real, gets another tid, and writes these back.
fn clone_tid_writes(mem: &ProcessMemory, args: &[u64; 6], clone3: bool) -> Vec<MemWrite> {
    let (flags, parent_tid, child_tid) = if clone3 {
        let mut ca = [0u8; 32];
        if mem.read(args[0], &mut ca).is_err() {
            return Vec::new();
        }
        let word = |i: usize| u64::from_le_bytes(ca[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        (word(0), word(3), word(2))
    } else {
        (args[0], args[2], args[3])
    };
    let mut out = Vec::new();
    let mut grab = |addr: u64| {
        let mut d = vec![0u8; 4];
        if addr != 0 && mem.read(addr, &mut d).is_ok() {
            out.push(MemWrite { addr, data: d });
        }
    };
    if flags & libc::CLONE_PARENT_SETTID as u64 != 0 {
        grab(parent_tid);
    }
    if flags & libc::CLONE_CHILD_SETTID as u64 != 0 && flags & libc::CLONE_VM as u64 != 0 {
        grab(child_tid);
    }
    out
}

/// Up to `len` bytes gathered from an iovec array.
fn read_iovecs(mem: &ProcessMemory, iov: u64, count: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..count.min(1024) {
        if out.len() >= len {
            break;
        }
        let Ok(base) = mem.read_u64(iov + i * 16) else {
            break;
        };
        let Ok(n) = mem.read_u64(iov + i * 16 + 8) else {
            break;
        };
        let take = (n as usize).min(len - out.len());
        let mut d = vec![0u8; take];
        if mem.read(base, &mut d).is_err() {
            break;
        }
        out.extend_from_slice(&d);
    }
    out
}

/// The 16 random bytes the kernel gave a new program (AT_RANDOM): glibc's stack protector
/// canary and pointer guard are made of them, so replay must see the same ones.
fn at_random(mem: &ProcessMemory, sp: u64) -> Vec<MemWrite> {
    let Ok(Some(addr)) = hindsight_ptrace::auxv::entry(mem, sp, hindsight_ptrace::auxv::AT_RANDOM)
    else {
        return Vec::new();
    };
    let mut data = vec![0u8; 16];
    if mem.read(addr, &mut data).is_err() {
        return Vec::new();
    }
    vec![MemWrite { addr, data }]
}

/// The program and argv of a process, from /proc.
fn process_identity(pid: i32) -> (Vec<u8>, Vec<Vec<u8>>) {
    let program = std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .unwrap_or_default();
    let args = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| {
            c.split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| a.to_vec())
                .collect()
        })
        .unwrap_or_default();
    (program, args)
}
