//! What the program would see without the recorder: the few answers of the kernel that show
//! the recorder's own settings are made those of a program that is not recorded.
//!
//! - `prctl(PR_GET_TSC)`: the recorder makes `rdtsc` fault (`PR_TSC_SIGSEGV`) to record it;
//!   the program is told the mode it set itself (`PR_SET_TSC` is answered without running, so
//!   that rdtsc stays recorded), `PR_TSC_ENABLE` if it set none.
//! - `prctl(PR_GET_SECCOMP)`: the recorder's filter puts every program in filter mode; the
//!   program is told 0 unless it installed a filter of its own (the kernel counts filters in
//!   `/proc/PID/status`).
//!
//! The answer is changed in the program (register and memory) before the syscall's effects
//! are read, so the trace holds what the program saw.

use std::collections::HashMap;

use hindsight_ptrace::{ProcessMemory, Tid};

const PR_GET_SECCOMP: u64 = 21;
const PR_GET_TSC: u64 = 25;
const PR_SET_TSC: u64 = 26;
const PR_TSC_ENABLE: u32 = 1;

/// The settings the program made that the recorder keeps for itself.
#[derive(Debug, Default)]
pub struct Disguise {
    /// The TSC mode each process set (by pid; children inherit it).
    tsc: HashMap<i32, u32>,
}

impl Disguise {
    /// Syscall `nr` of thread `tid` of process `pid` returned `result`: the result the
    /// program sees (changed in its registers, and memory, if it had to be).
    pub fn at_exit(
        &mut self,
        mem: &ProcessMemory,
        pid: i32,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        result: i64,
    ) -> i64 {
        if nr != libc::SYS_prctl as u64 {
            return result;
        }
        let option = args[0] & 0xffff_ffff;
        match option {
            PR_GET_TSC if result == 0 => {
                let mode = self.tsc.get(&pid).copied().unwrap_or(PR_TSC_ENABLE);
                let _ = mem.write(args[1], &mode.to_ne_bytes());
                result
            }
            PR_GET_SECCOMP if result == 2 && own_filters(tid) == Some(0) => {
                set_result(tid, 0);
                0
            }
            _ => result,
        }
    }

    /// Syscall `nr` of process `pid` was answered with `-errno` without running.
    pub fn answered(&mut self, pid: i32, nr: u64, args: &[u64; 6], errno: i32) {
        if nr == libc::SYS_prctl as u64 && args[0] & 0xffff_ffff == PR_SET_TSC && errno == 0 {
            self.tsc.insert(pid, args[1] as u32);
        }
    }

    /// Process `child` was created by `parent`: it inherits its settings.
    pub fn fork(&mut self, parent: i32, child: i32) {
        if let Some(m) = self.tsc.get(&parent).copied() {
            self.tsc.insert(child, m);
        }
    }
}

/// The seccomp filters thread `tid` has beyond the recorder's one.
fn own_filters(tid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let n: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("Seccomp_filters:"))?
        .trim()
        .parse()
        .ok()?;
    Some(n.saturating_sub(1))
}

fn set_result(tid: i32, value: i64) {
    if let Ok(mut regs) = Tid(tid).regs() {
        regs.0.rax = value as u64;
        let _ = Tid(tid).set_regs(&regs);
    }
}
