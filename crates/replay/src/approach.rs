//! Approaching an asynchronous position quickly.
//!
//! A recorded preemption or signal in code without syscalls is found by trying each execution
//! of its pc (a breakpoint hit, microseconds each) until the registers and stack match. A
//! tight loop runs millions of times in a few milliseconds, so most of the way is covered
//! running freely instead: the thread is stopped now and then (by CPU time) and its state
//! compared with the recorded one. Loops carry a counter — in a register, or on the stack at
//! -O0 — that moves steadily towards its recorded value; two samples give its speed, hence
//! the CPU time still to run. The approach stops short of that estimate each time (never past
//! the position: there is no way back yet) until the rest is small enough for breakpoint hits.
//! Without such a counter, the recorded CPU time alone is used, with a wide margin.

/// The general registers that can hold a counter (rip, flags, segments and orig_rax excluded):
/// r15 … rdi, the first 15 words of `user_regs_struct`.
const GPRS: usize = 15;
/// Index of rsp in `user_regs_struct`.
const RSP: usize = 19;
/// Index of rip in `user_regs_struct`.
const RIP: usize = 16;

/// One look at the thread on its way.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Its CPU time (ns).
    pub cpu: u64,
    /// Its state: the general registers, then the stack words from rsp up.
    pub words: Vec<u64>,
    /// Its stack pointer (stack words compare only at the same one).
    pub rsp: u64,
    /// Its pc (registers compare only at the same one: elsewhere in a loop they hold other
    /// things).
    pub pc: u64,
}

impl Sample {
    /// A sample from registers (kernel order) and the top of the stack.
    pub fn new(cpu: u64, regs: &[u64; 27], stack: &[u8]) -> Sample {
        Sample {
            cpu,
            words: state_words(regs, stack),
            rsp: regs[RSP],
            pc: regs[RIP],
        }
    }
}

/// The comparable words of a state.
pub fn state_words(regs: &[u64; 27], stack: &[u8]) -> Vec<u64> {
    let mut w: Vec<u64> = regs[..GPRS].to_vec();
    w.extend(
        stack
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
    );
    w
}

/// Counters move by small steps: a word that jumps by more is not one (a pointer, a hash).
const MAX_DELTA: i128 = 1 << 40;

/// CPU time (ns) still to run from `b` to the target, estimated from the counters that moved
/// between samples `a` and `b` towards their target values at a steady pace. The smallest
/// estimate is taken (running short costs breakpoint hits; running past cannot be undone).
/// None when no word behaves like a counter.
pub fn remaining(a: &Sample, b: &Sample, target: &Sample) -> Option<f64> {
    if b.cpu <= a.cpu {
        return None;
    }
    // Memory words keep their meaning anywhere in a loop, at the same stack pointer;
    // registers only at the same pc.
    let stack_ok = a.rsp == b.rsp && b.rsp == target.rsp;
    let regs_ok = a.pc == b.pc && b.pc == target.pc;
    let n = a.words.len().min(b.words.len()).min(target.words.len());
    let dt = (b.cpu - a.cpu) as f64;
    let mut best: Option<f64> = None;
    for k in 0..n {
        if (k < GPRS && !regs_ok) || (k >= GPRS && !stack_ok) {
            continue;
        }
        let (x, y, t) = (
            a.words[k] as i64 as i128,
            b.words[k] as i64 as i128,
            target.words[k] as i64 as i128,
        );
        let moved = y - x;
        let left = t - y;
        if moved == 0 || moved.abs() > MAX_DELTA || left.abs() > MAX_DELTA * 16 {
            continue;
        }
        // Moving towards the target (or already there).
        if left != 0 && left.signum() != moved.signum() {
            continue;
        }
        let est = left as f64 / moved as f64 * dt;
        best = Some(best.map_or(est, |b: f64| b.min(est)));
    }
    best
}

/// True when a counter went past its target value between samples `a` and `b`: the thread ran
/// beyond the position (which cannot be undone without checkpoints).
pub fn went_past(a: &Sample, b: &Sample, target: &Sample) -> bool {
    let stack_ok = a.rsp == b.rsp && b.rsp == target.rsp;
    let n = a.words.len().min(b.words.len()).min(target.words.len());
    (GPRS..n).any(|k| {
        if !stack_ok {
            return false;
        }
        let (x, y, t) = (
            a.words[k] as i64 as i128,
            b.words[k] as i64 as i128,
            target.words[k] as i64 as i128,
        );
        (y - x).abs() <= MAX_DELTA && ((x < t && t < y) || (y < t && t < x))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(cpu: u64, rax: u64, stack_counter: u64) -> Sample {
        let mut regs = [0u64; 27];
        regs[RIP] = 0x401000;
        regs[10] = rax;
        regs[RSP] = 0x7fff_0000;
        let mut stack = vec![0u8; 32];
        stack[8..16].copy_from_slice(&stack_counter.to_le_bytes());
        Sample::new(cpu, &regs, &stack)
    }

    #[test]
    fn a_register_counter_gives_the_time_left() {
        let a = sample(1_000_000, 1000, 5);
        let b = sample(2_000_000, 2000, 5);
        let t = sample(0, 5000, 5);
        let r = remaining(&a, &b, &t).unwrap();
        assert!((r - 3_000_000.0).abs() < 1.0, "{r}");
    }

    #[test]
    fn a_stack_counter_counts_too_and_the_nearest_wins() {
        let a = sample(0, 7, 100);
        let b = sample(1000, 7, 200);
        let t = sample(0, 7, 250);
        assert_eq!(remaining(&a, &b, &t), Some(500.0));
        // A register counter that is further behind does not push the estimate past.
        let a = sample(0, 0, 100);
        let b = sample(1000, 10, 200);
        let t = sample(0, 1000, 250);
        assert_eq!(remaining(&a, &b, &t), Some(500.0));
    }

    #[test]
    fn words_moving_away_or_jumping_are_no_counters() {
        let a = sample(0, 100, 0);
        let b = sample(1000, 50, 0);
        let t = sample(0, 500, 0);
        assert_eq!(remaining(&a, &b, &t), None);
        let a = sample(0, 0x5555_0000_0000, 0);
        let b = sample(1000, 0x7fff_0000_0000, 0);
        let t = sample(0, 0x7fff_0000_1000, 0);
        assert_eq!(remaining(&a, &b, &t), None);
    }

    #[test]
    fn a_stack_counter_past_its_target_is_seen() {
        let a = sample(0, 0, 100);
        let b = sample(1000, 0, 300);
        assert!(went_past(&a, &b, &sample(0, 0, 250)));
        assert!(!went_past(&a, &b, &sample(0, 0, 350)));
    }

    #[test]
    fn registers_are_ignored_at_another_pc() {
        let a = sample(0, 1000, 0);
        let mut b = sample(1000, 2000, 0);
        b.pc += 4;
        let t = sample(0, 5000, 0);
        assert_eq!(remaining(&a, &b, &t), None);
    }

    #[test]
    fn stack_words_are_ignored_when_the_stack_pointer_differs() {
        let a = sample(0, 7, 100);
        let mut b = sample(1000, 7, 200);
        b.rsp += 16;
        let t = sample(0, 7, 250);
        assert_eq!(remaining(&a, &b, &t), None);
    }
}
