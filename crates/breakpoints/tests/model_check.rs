//! Seed 000's model checking, on the real step-over state machine.

use std::time::Instant;

use hindsight_breakpoints::model::{check, check_config, Config, Report};
use hindsight_breakpoints::stepover::Strategy;

fn run(strategy: Strategy, threads: usize, displaceable: bool) -> Report {
    let t = Instant::now();
    let r = check(strategy, threads, displaceable);
    println!(
        "{strategy:?}, {threads} threads, displaceable={displaceable}: {} states in {:.1?}; {:?}",
        r.states,
        t.elapsed(),
        r.coverage
    );
    r
}

fn assert_correct(r: &Report) {
    if let Some(trace) = &r.counterexample {
        panic!("counterexample:\n  {}", trace.join("\n  "));
    }
    assert!(
        r.states > 1000,
        "the exploration must be real: {} states",
        r.states
    );
}

#[test]
fn noswitch_keeps_one_action_per_execution_with_two_threads() {
    assert_correct(&run(Strategy::NoSwitch, 2, false));
}

#[test]
fn noswitch_keeps_one_action_per_execution_with_three_threads() {
    let r3 = run(Strategy::NoSwitch, 3, false);
    assert_correct(&r3);
    assert!(r3.states > run(Strategy::NoSwitch, 2, false).states);
    // The hard cases were met: several threads in the breakpoint at one resume (stepped one
    // after another), and threads stopped at the site before executing the trap.
    assert!(r3.coverage.resumes_with_several_in_break > 0);
    assert!(r3.coverage.resumes_with_untrapped_at_site > 0);
    assert!(r3.coverage.inline_steps > 0);
}

#[test]
fn displaced_keeps_one_action_per_execution_with_two_threads() {
    assert_correct(&run(Strategy::Displaced, 2, true));
    // An instruction that cannot be relocated falls back to NoSwitch: still correct.
    assert_correct(&run(Strategy::Displaced, 2, false));
}

#[test]
fn displaced_keeps_one_action_per_execution_with_three_threads() {
    let r = run(Strategy::Displaced, 3, true);
    assert_correct(&r);
    assert!(r.coverage.displaced_steps > 0 && r.coverage.resumes_with_several_in_break > 0);
    assert_correct(&run(Strategy::Displaced, 3, false));
}

/// Checks that `trace` is seed 000's scenario: thread 0 traps and is single-stepped over the
/// lifted trap while thread 1 runs; thread 1 executes Break unseen and comes back Outside with
/// no breakpoint action. `lift` is the protocol's answer that lifts the trap.
fn assert_seed_scenario(trace: &[String], lift: &str) {
    for step in trace {
        println!("  {step}");
    }
    let pos = |pred: &dyn Fn(&str) -> bool| trace.iter().position(|s| pred(s));
    let trap = pos(&|s| s.starts_with("thread 0 traps at Break")).expect("thread 0 traps");
    let lifted = pos(&|s| s.contains(lift)).expect("the naive step-over lifts the trap");
    let unseen = pos(&|s| s.starts_with("thread 1 executes Break (trap lifted)"))
        .expect("thread 1 passes Break unseen");
    let done = pos(&|s| s.starts_with("thread 0") && s.contains("single-step completes"));
    assert!(trap <= lifted && lifted < unseen, "{trace:#?}");
    // Thread 0 is still stepping when thread 1 runs through.
    assert!(done.is_none_or(|d| d > unseen), "{trace:#?}");
    let last = trace.last().expect("a trace has a last step");
    assert!(
        last.contains("thread 1 is Outside after 1 successful executions of Break but 0"),
        "{last}"
    );
    // The breakpoint never saw thread 1.
    assert!(!trace.iter().any(|s| s.starts_with("thread 1 traps")));
}

#[test]
fn naive_protocol_counterexample_is_found() {
    // Every trap stops the program, as in the seed.
    let cfg = Config {
        pass_on: false,
        interrupts: false,
        ..Config::new(Strategy::Naive, 2, false)
    };
    let r = check_config(&cfg);
    let trace = r.counterexample.expect("the naive protocol must be caught");
    println!(
        "Naive, 2 threads, all-stop: counterexample after {} states:",
        r.states
    );
    assert_seed_scenario(
        &trace,
        "Lift(4096), SingleStep(Tid(0)), ResumeAllExcept(Tid(0))",
    );
    assert!(trace
        .iter()
        .any(|s| s.starts_with("every thread is stopped; the debugger resumes")));

    // With hits that do not stop, the same thing happens sooner: nobody else was stopped.
    let r = run(Strategy::Naive, 2, false);
    let trace = r.counterexample.expect("the naive protocol must be caught");
    println!(
        "Naive, 2 threads: counterexample after {} states:",
        r.states
    );
    assert_seed_scenario(&trace, "Lift(4096), SingleStep(Tid(0))");
}
