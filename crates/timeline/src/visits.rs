//! Where `reverse-step` and `reverse-next` land, chosen from the statement starts that the
//! stepping thread reached before now.
//!
//! A forward `step`/`next` goes from the start of one line to the start of the next line
//! executed in the same frame (`step` also stops at the first line of a called function). The
//! reverse commands are their inverse: from the start of a line, back to the start of the line
//! executed before it in the same frame; from the middle of a line, back to its start;
//! `reverse-step` goes into a function called on the way, to the start of the last line it ran
//! (gdb: "typically a return statement"); at the first line of a function both go back to the
//! caller's line. Frames are told apart by their CFA (the stack grows down: a callee's CFA is
//! below its caller's).

/// The stepping thread reached the start of a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visit {
    /// The frame's canonical frame address.
    pub cfa: u64,
    /// The line: (an id of its file, its number).
    pub line: (u64, u32),
}

/// Where the thread is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Its frame's canonical frame address.
    pub cfa: u64,
    /// Its line: (an id of its file, its number).
    pub line: (u64, u32),
    /// It is at the first instruction of a statement (not in the middle of a line).
    pub at_statement_start: bool,
}

/// Which reverse line step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStep {
    /// `reverse-step`: into functions called on the way.
    Step,
    /// `reverse-next`: over them.
    Next,
}

/// The visit to go back to, or `None` when the visits do not reach back far enough (look
/// further back, or stop at the start of the recording).
///
/// `visits` are in time order and all happened before now. A target found at index 0 may
/// lie further back (its line may have started before the first visit): the caller knows
/// whether index 0 is the start of the recording.
pub fn target(visits: &[Visit], now: Now, kind: LineStep) -> Option<usize> {
    let mut i = visits.len();
    // The current line's earlier statement starts in this frame (now is in their segment).
    let mut segment_start = None;
    while i > 0 {
        let v = visits[i - 1];
        if v.cfa == now.cfa && v.line == now.line {
            segment_start = Some(i - 1);
            i -= 1;
        } else if v.cfa < now.cfa {
            // A function called from the current line, or from the previous one.
            match kind {
                LineStep::Next => i -= 1,
                LineStep::Step => return Some(run_start(visits, i - 1)),
            }
        } else {
            break;
        }
    }
    if !now.at_statement_start || segment_start.is_some() {
        // In the middle of the line: back to its start.
        return segment_start;
    }
    if i == 0 {
        return None;
    }
    // At the start of a line: the line before it, in this frame or (at a function's first
    // line) in the caller.
    Some(run_start(visits, i - 1))
}

/// The first visit of the run of consecutive visits of `visits[last]`'s line and frame that
/// ends at `last`, calls from it (deeper frames) skipped.
fn run_start(visits: &[Visit], last: usize) -> usize {
    let key = visits[last];
    let mut start = last;
    let mut i = last;
    while i > 0 {
        let v = visits[i - 1];
        if v.cfa == key.cfa && v.line == key.line {
            start = i - 1;
        } else if v.cfa >= key.cfa {
            break;
        }
        i -= 1;
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: u64 = 0x7000;
    const CALLEE: u64 = 0x6f00;
    const CALLER: u64 = 0x7100;

    fn v(cfa: u64, line: u32) -> Visit {
        Visit {
            cfa,
            line: (1, line),
        }
    }

    fn now(cfa: u64, line: u32, start: bool) -> Now {
        Now {
            cfa,
            line: (1, line),
            at_statement_start: start,
        }
    }

    #[test]
    fn from_a_line_start_back_to_the_previous_line() {
        let visits = [v(MAIN, 5), v(MAIN, 6)];
        assert_eq!(target(&visits, now(MAIN, 7, true), LineStep::Next), Some(1));
        assert_eq!(target(&visits, now(MAIN, 7, true), LineStep::Step), Some(1));
    }

    #[test]
    fn from_the_middle_of_a_line_back_to_its_start() {
        let visits = [v(MAIN, 5), v(MAIN, 6)];
        assert_eq!(
            target(&visits, now(MAIN, 6, false), LineStep::Next),
            Some(1)
        );
        // A second statement start of the same line (a loop's condition) is still mid-line.
        let visits = [v(MAIN, 5), v(MAIN, 6), v(MAIN, 6)];
        assert_eq!(target(&visits, now(MAIN, 6, true), LineStep::Next), Some(1));
    }

    #[test]
    fn next_steps_over_calls_step_goes_into_their_last_line() {
        // Line 6 called a function whose lines 20, 21 ran; now at line 7.
        let visits = [v(MAIN, 6), v(CALLEE, 20), v(CALLEE, 21), v(CALLEE, 21)];
        assert_eq!(target(&visits, now(MAIN, 7, true), LineStep::Next), Some(0));
        assert_eq!(target(&visits, now(MAIN, 7, true), LineStep::Step), Some(2));
    }

    #[test]
    fn first_line_of_a_function_goes_back_to_the_calling_line() {
        let visits = [v(CALLER, 10), v(CALLER, 11)];
        assert_eq!(target(&visits, now(MAIN, 3, true), LineStep::Next), Some(1));
        assert_eq!(target(&visits, now(MAIN, 3, true), LineStep::Step), Some(1));
    }

    #[test]
    fn recursion_is_told_apart_by_the_frame() {
        // The same line in a deeper instance of the function is a call, not this frame.
        let visits = [v(MAIN, 4), v(CALLEE, 4), v(CALLEE, 5)];
        assert_eq!(target(&visits, now(MAIN, 5, true), LineStep::Next), Some(0));
    }

    #[test]
    fn nothing_before_means_look_further_back() {
        assert_eq!(target(&[], now(MAIN, 5, true), LineStep::Next), None);
        assert_eq!(
            target(&[v(CALLEE, 9)], now(MAIN, 5, false), LineStep::Next),
            None
        );
    }
}
