//! Starting a program under ptrace, stopped before its first instruction.

use crate::error::PtraceError;
use crate::thread::{pin_to_cpu, Tid};
use crate::wait::{wait_tid, Stop, WaitEvent};
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How to start the program.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// Disable address-space randomisation (as gdb does): the same addresses every run.
    pub disable_aslr: bool,
    /// Pin the program to this CPU (the tracer pins itself to the same one).
    pub cpu: Option<usize>,
    /// Stop the program at every syscall it makes (a seccomp filter returning
    /// `SECCOMP_RET_TRACE`, installed just before the exec): each one reports a
    /// [`Stop::Seccomp`] before it runs. For recording and replay.
    pub trap_syscalls: bool,
    /// Make `rdtsc`/`rdtscp` fault with SIGSEGV (`PR_SET_TSC`), so that their values can be
    /// recorded and replayed.
    pub trap_rdtsc: bool,
    /// The environment (NAME=value entries); None: hindsight's own.
    pub env: Option<Vec<std::ffi::OsString>>,
    /// The working directory; None: hindsight's own.
    pub cwd: Option<std::path::PathBuf>,
    /// argv[0] when it differs from the program's path (replay runs a copy of the program).
    pub argv0: Option<std::ffi::OsString>,
    /// With `trap_syscalls`: the instruction addresses (the pc after a `syscall`
    /// instruction) whose syscalls run without a stop (the in-process agent's). They share
    /// their upper 32 bits with the first (the filter compares those once); one that does
    /// not is left traced.
    pub untraced_ips: Vec<u64>,
}

/// The ptrace options every tracee gets. EXITKILL: the program dies with hindsight.
/// TRACECLONE: new threads are traced from their first instruction. TRACEFORK/VFORK: children
/// are caught so that the tracer can remove its int3s from their copy of memory before letting
/// them go. TRACEEXEC: an exec is reported as an event stop instead of a plain SIGTRAP.
/// TRACESECCOMP: a seccomp filter's `SECCOMP_RET_TRACE` becomes a `Stop::Seccomp` (without
/// a filter it never happens).
pub const OPTIONS: i32 = libc::PTRACE_O_EXITKILL
    | libc::PTRACE_O_TRACESECCOMP
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACEEXEC
    | libc::PTRACE_O_TRACESYSGOOD;

fn cstring(s: &OsStr, what: &str) -> Result<CString, PtraceError> {
    CString::new(s.as_bytes()).map_err(|_| PtraceError::Spawn {
        path: s.to_string_lossy().into_owned(),
        reason: format!("{what} contains a NUL byte"),
    })
}

/// The filter program: `SECCOMP_RET_TRACE` for every syscall, `SECCOMP_RET_ALLOW` for those
/// whose instruction pointer (the pc after the `syscall` instruction) is `untraced`.
fn seccomp_filter(untraced: &[u64]) -> Vec<libc::sock_filter> {
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jeq = |k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let trace = stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_TRACE);
    let Some(&first) = untraced.first() else {
        return vec![trace];
    };
    let high = (first >> 32) as u32;
    let lows: Vec<u32> = untraced
        .iter()
        .filter(|ip| (*ip >> 32) as u32 == high)
        .take(64)
        .map(|ip| *ip as u32)
        .collect();
    // struct seccomp_data: nr (0), arch (4), instruction_pointer (8), args (16…).
    let load = |at: u32| stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, at);
    let mut f = vec![load(8)];
    for (i, low) in lows.iter().enumerate() {
        let after = (lows.len() - 1 - i) as u8;
        // Equal: on to the upper half (past the other comparisons); else the next one, and
        // after the last, trace (past the upper half's load, comparison and allow).
        f.push(if after > 0 {
            jeq(*low, after, 0)
        } else {
            jeq(*low, 0, 3)
        });
    }
    f.extend([
        load(12),
        jeq(high, 0, 1),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
        trace,
    ]);
    f
}

/// Forks and executes `program` with `args` (argv[1..]) as a seized tracee and returns its tid,
/// stopped at the exec event: the new program is mapped (with its dynamic loader) and has not
/// executed a single instruction.
pub fn spawn(program: &Path, args: &[&OsStr], opts: &SpawnOptions) -> Result<Tid, PtraceError> {
    let path = cstring(program.as_os_str(), "the program's path")?;
    let argv0 = match &opts.argv0 {
        Some(a) => cstring(a, "argv[0]")?,
        None => path.clone(),
    };
    let mut argv: Vec<CString> = vec![argv0];
    for a in args {
        argv.push(cstring(a, "an argument")?);
    }
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let env: Option<Vec<CString>> = match &opts.env {
        Some(e) => Some(
            e.iter()
                .map(|v| cstring(v, "an environment entry"))
                .collect::<Result<_, _>>()?,
        ),
        None => None,
    };
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().flatten().map(|a| a.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    let cwd = match &opts.cwd {
        Some(c) => Some(cstring(c.as_os_str(), "the working directory")?),
        None => None,
    };
    // The seccomp filter: "trace every syscall", except those made from the one
    // instructions `untraced_ips` name. Built before the fork: the child may only make
    // async-signal-safe calls.
    let filter = seccomp_filter(&opts.untraced_ips);
    let fprog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };

    // `sync`: the child waits on it until it is seized, so its exec is seen. `err`: close-on-exec,
    // so the parent reads EOF on success and the child's errno when execve fails.
    let mut sync = [0i32; 2];
    let mut err = [0i32; 2];
    unsafe {
        if libc::pipe2(sync.as_mut_ptr(), libc::O_CLOEXEC) == -1
            || libc::pipe2(err.as_mut_ptr(), libc::O_CLOEXEC) == -1
        {
            return Err(PtraceError::last("creating pipes"));
        }
    }
    let pid = unsafe { libc::fork() };
    if pid == -1 {
        return Err(PtraceError::last("fork"));
    }
    if pid == 0 {
        // Child: only async-signal-safe calls from here to execve.
        unsafe {
            libc::close(sync[1]);
            libc::close(err[0]);
            // The program starts with the signal state it would have had without hindsight:
            // the Rust runtime ignores SIGPIPE in hindsight, and hindsight blocks SIGCHLD
            // (for its signalfd) once it has waited for a stop — both would be inherited
            // through exec, and a replay started after that would differ from the recording
            // (its signal frames hold the mask).
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            if opts.disable_aslr {
                libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong);
            }
            if let Some(cpu) = opts.cpu {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            let mut b = 0u8;
            libc::read(sync[0], (&mut b as *mut u8).cast(), 1);
            // From here on the tracer is attached: a SECCOMP_RET_TRACE without a tracer
            // would fail every syscall with ENOSYS instead of stopping.
            if let Some(c) = &cwd {
                if libc::chdir(c.as_ptr()) == -1 {
                    let e = *libc::__errno_location();
                    libc::write(err[1], (&e as *const i32).cast(), 4);
                    libc::_exit(127);
                }
            }
            if opts.trap_rdtsc {
                libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_SIGSEGV, 0, 0, 0);
            }
            if opts.trap_syscalls {
                libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
                if libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &fprog as *const libc::sock_fprog,
                ) == -1
                {
                    let e = *libc::__errno_location();
                    libc::write(err[1], (&e as *const i32).cast(), 4);
                    libc::_exit(127);
                }
            }
            if env.is_some() {
                libc::execve(path.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr());
            } else {
                libc::execv(path.as_ptr(), argv_ptrs.as_ptr());
            }
            let e = *libc::__errno_location();
            libc::write(err[1], (&e as *const i32).cast(), 4);
            libc::_exit(127);
        }
    }
    let tid = Tid(pid);
    unsafe {
        libc::close(sync[0]);
        libc::close(err[1]);
    }
    let seized = unsafe {
        libc::ptrace(
            libc::PTRACE_SEIZE,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            OPTIONS as usize as *mut libc::c_void,
        )
    };
    if seized == -1 {
        let e = PtraceError::last(format!("PTRACE_SEIZE of process {pid}"));
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
            libc::close(sync[1]);
            libc::close(err[0]);
        }
        return Err(e);
    }
    if let Some(cpu) = opts.cpu {
        pin_to_cpu(0, cpu)?;
    }
    unsafe {
        libc::write(sync[1], [1u8].as_ptr().cast(), 1);
        libc::close(sync[1]);
    }
    let result = loop {
        match wait_tid(tid)? {
            WaitEvent::Stopped(Stop::Exec) => break Ok(tid),
            WaitEvent::Stopped(_) => tid.cont(0)?,
            WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                let mut e = 0i32;
                let n = unsafe { libc::read(err[0], (&mut e as *mut i32).cast(), 4) };
                let reason = if n == 4 {
                    std::io::Error::from_raw_os_error(e).to_string()
                } else {
                    "the program exited before it started".to_string()
                };
                break Err(PtraceError::Spawn {
                    path: program.display().to_string(),
                    reason,
                });
            }
        }
    };
    unsafe { libc::close(err[0]) };
    result
}
