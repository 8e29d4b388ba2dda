//! Seed 000's model checking, on the real step-over state machine.

use hindsight_breakpoints::model::check;
use hindsight_breakpoints::stepover::Strategy;

#[test]
fn noswitch_keeps_one_action_per_execution_with_two_threads() {
    let r = check(Strategy::NoSwitch, 2, false);
    println!("NoSwitch, 2 threads: {} states", r.states);
    assert!(r.counterexample.is_none(), "{:#?}", r.counterexample);
    assert!(
        r.states > 100,
        "the exploration must be real: {} states",
        r.states
    );
}

#[test]
fn noswitch_keeps_one_action_per_execution_with_three_threads() {
    let r = check(Strategy::NoSwitch, 3, false);
    println!("NoSwitch, 3 threads: {} states", r.states);
    assert!(r.counterexample.is_none(), "{:#?}", r.counterexample);
}

#[test]
fn displaced_keeps_one_action_per_execution() {
    for n in [2, 3] {
        let r = check(Strategy::Displaced, n, true);
        println!("Displaced, {n} threads: {} states", r.states);
        assert!(r.counterexample.is_none(), "{:#?}", r.counterexample);
        // An instruction that cannot be relocated falls back to NoSwitch: still correct.
        let r = check(Strategy::Displaced, n, false);
        assert!(r.counterexample.is_none(), "{:#?}", r.counterexample);
    }
}

#[test]
fn naive_protocol_counterexample_is_found() {
    let r = check(Strategy::Naive, 2, false);
    let trace = r.counterexample.expect("the naive protocol must be caught");
    println!(
        "Naive, 2 threads: counterexample after {} states:",
        r.states
    );
    for step in &trace {
        println!("  {step}");
    }
    // The seed's scenario: one thread traps, and while it steps over the lifted trap the
    // other executes Break unseen and comes back Outside with no breakpoint action.
    assert!(
        trace.iter().any(|s| s.contains("traps at Break")),
        "{trace:#?}"
    );
    assert!(
        trace
            .iter()
            .any(|s| s.contains("executes Break (not planted)") && !s.contains("single-step")),
        "{trace:#?}"
    );
    let last = trace.last().unwrap();
    assert!(
        last.contains("successful executions of Break but"),
        "{last}"
    );
}
