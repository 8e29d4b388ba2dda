//! Calling the program's functions from the command line (`call f(x)`, `print f(x)`).
//!
//! Live, the function runs in the program itself, as gdb runs it: the thread's registers are
//! saved, the arguments go into the x86-64 System V argument registers, a return address
//! pointing at the program's entry point (where a trap waits) is pushed below the red zone,
//! and every thread runs until the called function returns there; then the registers are
//! put back. In a replay the past must not change, so the call runs in a disposable forked
//! copy of the replayed process (rr's "diversion"), which is killed afterwards; its system
//! calls run for real, outside the recording.

use anyhow::{bail, Context as _};
use hindsight_ptrace::wait::{Stop, WaitEvent};
use hindsight_ptrace::{Regs, Tid};
use hindsight_symbols::expr::Expr;
use hindsight_symbols::types::Type;
use hindsight_symbols::value::{Shape, TypeHandle, Value};

use crate::context;
use crate::hook::{self, Reason, StepResume};
use crate::session::Session;

/// The integer argument registers of the System V ABI, in order.
const ARG_REGS: usize = 6;

/// Bytes left untouched below the stack pointer (the ABI's red zone, and then some).
const RED_ZONE: u64 = 256;

/// Calls the function `func` names with `args` (expressions without calls; `earlier`: the
/// results of the calls already made for the same expression, which they may name);
/// returns its value (`void` for none).
pub(crate) fn call(
    s: &mut Session,
    func: &Expr,
    args: &[Expr],
    earlier: &[Value],
) -> anyhow::Result<Value> {
    let eval = |s: &mut Session, e: &Expr| -> anyhow::Result<Value> {
        let mut history = s.history.clone();
        history.extend(earlier.iter().cloned());
        context::evaluate_with(s, e, &history)
    };
    let f = eval(s, func)?;
    let (addr, fty) = match f.ty.shape() {
        Shape::Function => (
            f.address()
                .context("Invalid data type for function to be called.")?,
            f.ty.clone(),
        ),
        Shape::Pointer(Some(p)) if p.shape() == Shape::Function => (f.raw_u64(), p),
        _ => bail!("Invalid data type for function to be called."),
    };
    let fty = fty.strip().unwrap_or(fty);
    let name = s
        .symbols
        .function_at(addr)
        .map(|f| f.name)
        .unwrap_or_else(|| format!("{addr:#x}"));
    let (ret, nparams) = match fty.get() {
        Type::Function { ret, params } => (ret.map(|r| fty.child(r)), Some(params.len())),
        // A function without debug information: its return type is not known.
        _ => bail!("'{name}' has unknown return type; cast the call to its declared return type"),
    };
    if let Some(n) = nparams {
        if args.len() < n {
            bail!("Too few arguments in function call.");
        }
    }
    if let Some(r) = &ret {
        if matches!(r.shape(), Shape::Struct(n) if n > 16) {
            bail!("Calls returning aggregates larger than 16 bytes are not supported.");
        }
    }
    if args.len() > ARG_REGS {
        bail!("Calls with more than {ARG_REGS} arguments are not supported.");
    }
    let mut words = Vec::new();
    for a in args {
        let v = eval(s, a)?;
        let w = match v.ty.shape() {
            Shape::Float(_) => bail!("Floating-point arguments are not supported in calls."),
            Shape::Struct(_) => bail!("Aggregate arguments are not supported in calls."),
            // Arrays and functions stand for their address, as in C.
            Shape::Array(..) | Shape::Function => v
                .address()
                .context("Only values in memory can be passed as arrays.")?,
            _ => v.as_u64().map_err(|e| anyhow::anyhow!("{e}"))?,
        };
        words.push(w);
    }
    let entry = s
        .symbols
        .entry_point()
        .context("The program has no entry point to return to.")?;
    let tid = s.tid()?;
    let saved = s.live()?.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (regs, ret_slot) = call_frame(&saved, addr, &words);
    let (result, fp) = if s.replay.is_some() {
        divert(s, tid, &regs, ret_slot, entry)?
    } else {
        in_place(s, tid, &saved, &regs, ret_slot, entry)?
    };
    let ret = ret.unwrap_or_else(TypeHandle::void);
    Ok(Value::from_bytes(
        ret.clone(),
        return_bytes(&ret, &result, fp),
    ))
}

/// The registers that start the call: arguments in rdi, rsi, rdx, rcx, r8, r9, no vector
/// arguments (rax = 0), a 16-byte aligned stack below the red zone with the return address
/// on top. Returns them and where the return address goes.
fn call_frame(saved: &Regs, addr: u64, args: &[u64]) -> (Regs, u64) {
    let mut r = *saved;
    let sp = (saved.0.rsp.wrapping_sub(RED_ZONE) & !0xf).wrapping_sub(8);
    r.0.rsp = sp;
    r.0.rip = addr;
    r.0.rax = 0;
    // Not in a system call any more: nothing to restart.
    r.0.orig_rax = u64::MAX;
    let slots = [
        &mut r.0.rdi,
        &mut r.0.rsi,
        &mut r.0.rdx,
        &mut r.0.rcx,
        &mut r.0.r8,
        &mut r.0.r9,
    ];
    for (slot, w) in slots.into_iter().zip(args) {
        *slot = *w;
    }
    (r, sp)
}

/// The call in the program itself; returns the registers at the return and xmm0's low half.
fn in_place(
    s: &mut Session,
    tid: Tid,
    saved: &Regs,
    regs: &Regs,
    ret_slot: u64,
    entry: u64,
) -> anyhow::Result<(Regs, u64)> {
    let inf = s.live_mut()?;
    inf.write_memory(ret_slot, &entry.to_le_bytes())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    inf.set_regs(tid, regs)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    inf.insert_site(entry).map_err(|e| anyhow::anyhow!("{e}"))?;
    let sr = StepResume {
        targets: vec![(entry, ret_slot)],
        tid,
    };
    // What happens during the call (threads starting, say) is not the user's business.
    let mut quiet = crate::observer::Quiet;
    let outcome = hook::resume_raw(s, &mut quiet, hindsight_control::Resume::Continue, Some(sr));
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        let _ = inf.remove_site(entry);
    }
    let (_, reason) = outcome?;
    if !matches!(reason, Some(Reason::StepResume)) {
        // gdb leaves the program where the call stopped, and says so.
        let name = s
            .symbols
            .function_at(regs.0.rip)
            .map(|f| f.name)
            .unwrap_or_else(|| "at 0x…".into());
        bail!(
            "The program being debugged stopped while in a function called from GDB.\n\
             Evaluation of the expression containing the function\n\
             ({name}) will be abandoned.\n\
             When the function is done executing, GDB will silently stop."
        );
    }
    let inf = s.live_mut()?;
    let after = inf.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    let fp = inf.fp_regs(tid).map(|f| f.xmm_low(0)).unwrap_or(0);
    inf.set_regs(tid, saved)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((after, fp))
}

/// The call in a forked copy of the replayed process, which is then killed.
fn divert(
    s: &mut Session,
    tid: Tid,
    regs: &Regs,
    ret_slot: u64,
    entry: u64,
) -> anyhow::Result<(Regs, u64)> {
    let copy = s
        .live_mut()?
        .fork_copy(tid)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let result = run_copy(copy, regs, ret_slot, entry);
    // The copy goes, whatever happened in it.
    let _ = copy.kill(copy.0, libc::SIGKILL);
    while let Ok(WaitEvent::Stopped(_)) = hindsight_ptrace::wait::wait_tid(copy) {
        let _ = copy.cont(0);
    }
    result
}

fn run_copy(copy: Tid, regs: &Regs, ret_slot: u64, entry: u64) -> anyhow::Result<(Regs, u64)> {
    let mem = hindsight_ptrace::memory::ProcessMemory::open(copy.0)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    mem.write(ret_slot, &entry.to_le_bytes())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // The return lands on a trap.
    mem.write(entry, &[0xcc])
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    copy.set_regs(regs).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut signal = 0;
    loop {
        copy.cont(signal).map_err(|e| anyhow::anyhow!("{e}"))?;
        signal = 0;
        match hindsight_ptrace::wait::wait_tid(copy).map_err(|e| anyhow::anyhow!("{e}"))? {
            WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)) => {
                let r = copy.regs().map_err(|e| anyhow::anyhow!("{e}"))?;
                if r.0.rip == entry + 1 {
                    let fp = copy.fp_regs().map(|f| f.xmm_low(0)).unwrap_or(0);
                    return Ok((r, fp));
                }
                bail!("The program being debugged stopped while in a function called from GDB.");
            }
            // The copy's first stop, and the recording's seccomp stops: its system calls
            // run for real.
            WaitEvent::Stopped(Stop::Signal(libc::SIGSTOP)) => {}
            WaitEvent::Stopped(Stop::Signal(sig)) => {
                let (name, desc) = crate::signals::signal_name(sig);
                bail!(
                    "The program being debugged was signaled while in a function called from GDB.\n\
                     GDB remains in the frame where the signal was received.\n\
                     ({name}, {desc})"
                );
            }
            WaitEvent::Stopped(_) => {}
            WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                bail!("The program being debugged exited while in a function called from GDB.")
            }
        }
    }
}

/// The returned value's bytes: rax (and rdx) for integers, pointers and small aggregates,
/// xmm0 for floating point, memory at rax for large aggregates.
fn return_bytes(ret: &TypeHandle, after: &Regs, xmm0: u64) -> Vec<u8> {
    let size = ret.size().unwrap_or(0) as usize;
    if matches!(ret.shape(), Shape::Void) {
        return Vec::new();
    }
    if ret.is_float() {
        return xmm0.to_le_bytes()[..size.min(8)].to_vec();
    }
    let mut b = after.0.rax.to_le_bytes().to_vec();
    b.extend_from_slice(&after.0.rdx.to_le_bytes());
    b.truncate(size.min(16));
    b
}
