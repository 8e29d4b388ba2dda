//! Where reverse steps stop: gdb's stepping rules run backwards, decided one instruction at a
//! time.
//!
//! gdb (13) steps backwards by undoing one instruction at a time and asking, at each
//! instruction it arrives at, whether the step is over (infrun.c's `process_event_stop_test`,
//! `handle_step_into_function_backward`, `finish_backward`). Its answers depend on details
//! that a coarser rule gets wrong: a step range is one *line-table entry* (not a whole line),
//! arriving at the start of an entry of the line being stepped does not stop, a function's
//! first instruction never ends a step (it goes on into the caller), and calls are run back
//! over with a breakpoint at the callee's start (which the user's breakpoints can interrupt).
//! [`Stepper`] is that state machine; the engine feeds it the instructions met going back and
//! carries out what it decides ([`Decision`]).
//!
//! Invariants: the stepper never looks at memory or time; an [`Insn`] says everything it
//! needs about one instruction instance. The user's breakpoints and watchpoints are checked by
//! the engine before an instruction is given to the stepper (they stop every motion).

/// gdb's frame id: the frame's canonical frame address and the start of its function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameId {
    /// Canonical frame address.
    pub cfa: u64,
    /// Start of the frame's function (0 when unknown).
    pub function: u64,
}

/// A line-table entry as gdb reads it: `[start, end)` of one row (rows of the same line are
/// separate entries), its line and whether it starts a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Address of the row.
    pub start: u64,
    /// Address of the next row (or the end of the sequence).
    pub end: u64,
    /// An id of the source file.
    pub file: u64,
    /// The line.
    pub line: u32,
    /// The row starts a statement.
    pub is_stmt: bool,
}

/// One instruction instance met going back: the state just before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    /// Its address.
    pub pc: u64,
    /// Its frame (None: it cannot be unwound).
    pub frame: Option<FrameId>,
    /// Its caller's frame.
    pub caller: Option<FrameId>,
    /// `[start, end)` of the function it is in, if known.
    pub function: Option<(u64, u64)>,
    /// The line-table entry covering pc (None: no line information).
    pub entry: Option<Entry>,
    /// Its function's first instruction has line information (gdb steps into such functions).
    pub function_has_lines: bool,
}

impl Insn {
    fn function_start(&self) -> u64 {
        self.function.map(|f| f.0).unwrap_or(0)
    }
}

/// Which reverse motion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    /// `reverse-step`: into functions called on the way (to their last line).
    Step,
    /// `reverse-next`: over them.
    Next,
    /// `reverse-stepi`: one instruction.
    Stepi,
    /// `reverse-nexti`: one instruction, calls run back over.
    Nexti,
    /// The last part of `reverse-finish`: from the function's first instruction, one
    /// instruction back (to the call).
    Finish,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The motion ends at this instruction.
    Stop,
    /// Go back one more instruction.
    Back,
    /// Run back (the user's breakpoints and watchpoints armed) to the latest arrival at `pc`
    /// (in `frame`, if given), then call [`Stepper::run_back_arrived`] there.
    RunBackTo {
        /// Where (a function's first instruction).
        pc: u64,
        /// In which frame (None: any).
        frame: Option<FrameId>,
    },
}

/// How calls met on the way are treated (gdb's `step_over_calls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OverCalls {
    /// `stepi`: stop in them.
    None,
    /// `step`: into those with line information.
    Undebuggable,
    /// `next`: over all.
    All,
}

/// The step range of `stepi`/`nexti` (gdb's `step_range_start == step_range_end == 1`).
const ONE_INSTRUCTION: (u64, u64) = (1, 1);

/// Frame ids compare equal only when both are known (gdb: invalid ids are never equal).
fn same(a: Option<FrameId>, b: Option<FrameId>) -> bool {
    matches!((a, b), (Some(x), Some(y)) if x == y)
}

/// The state of one reverse motion (gdb's stepping state of the thread).
#[derive(Debug, Clone)]
pub struct Stepper {
    over_calls: OverCalls,
    finishing: bool,
    /// `[start, end)`: stepping goes on while the pc is in it, in the step frame.
    range: (u64, u64),
    /// The frame being stepped.
    frame: Option<FrameId>,
    /// The line being stepped: (file, line); line 0: none.
    line: (u64, u32),
}

/// Why a reverse motion cannot start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CannotStep {
    /// No line information and no function bounds at the pc (gdb: "Cannot find bounds of
    /// current function").
    NoFunctionBounds,
}

impl Stepper {
    /// Starts `motion` at `now` (the selected thread's current instruction).
    ///
    /// A line step where there is no line information steps until the function is left, as
    /// gdb does ("Single stepping until exit from function …").
    pub fn new(motion: Motion, now: &Insn) -> Result<Stepper, CannotStep> {
        let over_calls = match motion {
            Motion::Stepi => OverCalls::None,
            Motion::Step | Motion::Finish => OverCalls::Undebuggable,
            Motion::Next | Motion::Nexti => OverCalls::All,
        };
        let line = now.entry.map(|e| (e.file, e.line)).unwrap_or((0, 0));
        let range = match motion {
            Motion::Stepi | Motion::Nexti | Motion::Finish => ONE_INSTRUCTION,
            Motion::Step | Motion::Next => match (now.entry, now.function) {
                (Some(e), _) => (e.start, e.end),
                (None, Some(f)) => f,
                (None, None) => return Err(CannotStep::NoFunctionBounds),
            },
        };
        Ok(Stepper {
            over_calls,
            finishing: motion == Motion::Finish,
            range,
            // reverse-finish steps from the call's breakpoint with no step frame of its own.
            frame: if motion == Motion::Finish {
                None
            } else {
                now.frame
            },
            line,
        })
    }

    /// Whether the motion is `reverse-finish`'s last step (the caller runs back to the
    /// function's start first, without the stepper).
    pub fn is_finish(&self) -> bool {
        self.finishing
    }

    /// The run back of a [`Decision::RunBackTo`] arrived at its target, at `at` (gdb's
    /// step-resume breakpoint was hit).
    pub fn run_back_arrived(&mut self, at: &Insn) -> Decision {
        if self.finishing {
            return Decision::Back;
        }
        if at.pc == at.function_start() {
            // Back at the callee's start: one more instruction is the call.
            return Decision::Back;
        }
        self.arrived(at)
    }

    /// Going back arrived at `at` (the instruction before the last one arrived at); the
    /// user's stops there have been checked.
    pub fn arrived(&mut self, at: &Insn) -> Decision {
        let pc = at.pc;
        let stepi = self.range == ONE_INSTRUCTION;
        // Still in the line being stepped, in its frame: at its start, stop (unless that is
        // the function's first instruction: then on into the caller).
        if !stepi && self.range.0 <= pc && pc < self.range.1 && same(at.frame, self.frame) {
            if pc == self.range.0 && pc != at.function_start() {
                return Decision::Stop;
            }
            return Decision::Back;
        }
        // Back into a function called from the frame being stepped (going back, the call
        // returned into it).
        let into_callee = !same(at.frame, self.frame) && same(at.caller, self.frame);
        if into_callee {
            let start = at.function_start();
            match self.over_calls {
                OverCalls::None => return Decision::Stop,
                OverCalls::All => {
                    if start != pc && start != 0 {
                        return Decision::RunBackTo {
                            pc: start,
                            frame: at.frame,
                        };
                    }
                    return Decision::Back;
                }
                OverCalls::Undebuggable => {
                    if start == 0 && at.entry.is_none() {
                        // A stub without a symbol (a PLT entry): through it.
                        return Decision::Back;
                    }
                    if at.function_has_lines {
                        // gdb's handle_step_into_function_backward: to the start of the
                        // entry being run back through in the callee.
                        return match at.entry {
                            Some(e) if e.start == pc => Decision::Stop,
                            Some(e) => {
                                self.range = (e.start, e.end);
                                Decision::Back
                            }
                            None => Decision::Stop,
                        };
                    }
                    if start != pc {
                        return Decision::RunBackTo {
                            pc: start,
                            frame: None,
                        };
                    }
                    return Decision::Back;
                }
            }
        }
        // Through stubs without a symbol or lines (PLT entries), as gdb steps back through
        // solib trampolines.
        if self.over_calls != OverCalls::None && at.function.is_none() && at.entry.is_none() {
            return Decision::Back;
        }
        if stepi {
            return Decision::Stop;
        }
        let Some(e) = at.entry else {
            // No line information: stop.
            return Decision::Stop;
        };
        let mut refresh = true;
        let mut line = (e.file, e.line);
        if pc == e.start && self.line != line {
            // The start of another line.
            if e.is_stmt {
                return Decision::Stop;
            }
            if same(at.frame, self.frame) {
                // Not a statement: keep stepping the same line.
                refresh = false;
            } else {
                line = (e.file, 0);
            }
        }
        // In the middle of a line (or at the start of an entry of the line being stepped):
        // step it to its start, in its frame.
        self.range = (e.start, e.end);
        if refresh {
            self.frame = at.frame;
            self.line = line;
        }
        Decision::Back
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: FrameId = FrameId {
        cfa: 0x7000,
        function: 0x100,
    };
    const CALLEE: FrameId = FrameId {
        cfa: 0x6f00,
        function: 0x400,
    };
    const OUTER: FrameId = FrameId {
        cfa: 0x7100,
        function: 0x900,
    };

    /// Line table of a small program: main at 0x100..0x200, callee at 0x400..0x440.
    const TABLE: [(u64, u32); 10] = [
        (0x100, 10), // main's prologue line
        (0x108, 11),
        (0x110, 12), // a call at 0x114, returning to 0x119
        (0x11c, 12), // the rest of line 12 (after the call)
        (0x120, 13),
        (0x130, 14),
        (0x400, 30), // callee's prologue line
        (0x408, 31),
        (0x420, 32), // the callee's last line: 0x420..0x440
        (0x440, 0),
    ];

    fn entry(pc: u64) -> Option<Entry> {
        let i = TABLE.iter().rposition(|&(a, _)| a <= pc)?;
        let (start, line) = TABLE[i];
        if line == 0 {
            return None;
        }
        let end = TABLE.get(i + 1).map(|r| r.0).unwrap_or(0x200);
        Some(Entry {
            start,
            end,
            file: 1,
            line,
            is_stmt: true,
        })
    }

    fn main_at(pc: u64) -> Insn {
        Insn {
            pc,
            frame: Some(MAIN),
            caller: Some(OUTER),
            function: Some((0x100, 0x200)),
            entry: entry(pc),
            function_has_lines: true,
        }
    }

    fn callee_at(pc: u64) -> Insn {
        Insn {
            pc,
            frame: Some(CALLEE),
            caller: Some(MAIN),
            function: Some((0x400, 0x440)),
            entry: entry(pc),
            function_has_lines: true,
        }
    }

    /// Runs a motion back over `path` (latest first); returns the index where it stops and
    /// the run-back requests on the way.
    fn run(motion: Motion, now: Insn, path: &[Insn]) -> (Option<usize>, Vec<u64>) {
        let mut s = Stepper::new(motion, &now).expect("starts");
        let mut run_backs = Vec::new();
        let mut i = 0;
        let mut after_run_back = false;
        while i < path.len() {
            let d = if after_run_back {
                after_run_back = false;
                s.run_back_arrived(&path[i])
            } else {
                s.arrived(&path[i])
            };
            match d {
                Decision::Stop => return (Some(i), run_backs),
                Decision::Back => i += 1,
                Decision::RunBackTo { pc, frame } => {
                    run_backs.push(pc);
                    // Skip to the arrival at pc in that frame.
                    i += path[i..]
                        .iter()
                        .position(|x| x.pc == pc && frame.is_none_or(|f| x.frame == Some(f)))
                        .expect("the run back arrives");
                    after_run_back = true;
                }
            }
        }
        (None, run_backs)
    }

    #[test]
    fn from_a_line_start_back_to_the_previous_entry_start() {
        // Line 13 ran 0x120..; line 12's second entry 0x11c..0x120 before it.
        let path = [main_at(0x11e), main_at(0x11c), main_at(0x119)];
        let (stop, _) = run(Motion::Next, main_at(0x120), &path);
        // gdb stops at the start of the entry, not of the whole line.
        assert_eq!(stop, Some(1));
    }

    #[test]
    fn from_the_middle_of_an_entry_back_to_its_start() {
        let path = [main_at(0x11c), main_at(0x119)];
        let (stop, _) = run(Motion::Next, main_at(0x11e), &path);
        assert_eq!(stop, Some(0));
    }

    #[test]
    fn the_start_of_an_entry_of_the_same_line_does_not_stop() {
        // A for loop's line in three entries (gcc -O0): `j = 0` at 0x1c2, `jmp cond` at
        // 0x1c9, the body (line 25) at 0x1cb, `j++; cond; jl body` at 0x1d8. From the body's
        // first line, back through the condition and both entries of line 24, whose starts
        // are line 24 again, to line 23's start.
        let table = [
            (0x1b5, 23),
            (0x1c2, 24),
            (0x1c9, 24),
            (0x1cb, 25),
            (0x1d8, 24),
        ];
        let at = |pc: u64| {
            let i = table.iter().rposition(|&(a, _)| a <= pc).expect("a row");
            let (start, line) = table[i];
            Insn {
                entry: Some(Entry {
                    start,
                    end: table.get(i + 1).map(|r| r.0).unwrap_or(0x206),
                    file: 1,
                    line,
                    is_stmt: true,
                }),
                ..main_at(pc)
            }
        };
        let path = [
            at(0x204),
            at(0x1dc),
            at(0x1c9),
            at(0x1c2),
            at(0x1bf),
            at(0x1b5),
        ];
        let (stop, _) = run(Motion::Next, at(0x1cb), &path);
        assert_eq!(stop, Some(5));
    }

    #[test]
    fn reverse_step_goes_into_the_callees_last_entry() {
        let path = [
            main_at(0x119),
            callee_at(0x43f),
            callee_at(0x430),
            callee_at(0x420),
            callee_at(0x418),
        ];
        let (stop, _) = run(Motion::Step, main_at(0x11c), &path);
        // 0x11c is the start of an entry of line 12, stepping line 12's second entry: the
        // return address 0x119 is mid-entry of line 12's first entry; on into the callee.
        assert_eq!(stop, Some(3));
    }

    #[test]
    fn a_functions_first_line_goes_back_to_the_callers_entry_start() {
        // From the callee's first line (after its prologue): back through the prologue and the
        // function's first instruction into the caller, to the start of the calling entry.
        let path = [
            callee_at(0x404),
            callee_at(0x400),
            main_at(0x114),
            main_at(0x110),
        ];
        let (stop, _) = run(Motion::Step, callee_at(0x408), &path);
        assert_eq!(stop, Some(3));
        // From inside the prologue the same.
        let (stop, _) = run(Motion::Step, callee_at(0x404), &path[1..]);
        assert_eq!(stop, Some(2));
    }

    #[test]
    fn nexti_runs_back_over_a_call_stepi_goes_into_it() {
        let path = [callee_at(0x43f), callee_at(0x400), main_at(0x114)];
        let (stop, backs) = run(Motion::Nexti, main_at(0x119), &path);
        assert_eq!(stop, Some(2));
        assert_eq!(backs, vec![0x400]);
        let (stop, _) = run(Motion::Stepi, main_at(0x119), &path);
        assert_eq!(stop, Some(0));
    }

    #[test]
    fn finish_stops_one_instruction_before_the_function_start() {
        let mut s = Stepper::new(Motion::Finish, &callee_at(0x400)).expect("starts");
        assert!(s.is_finish());
        assert_eq!(s.run_back_arrived(&callee_at(0x400)), Decision::Back);
        assert_eq!(s.arrived(&main_at(0x114)), Decision::Stop);
    }

    #[test]
    fn without_line_information_the_step_leaves_the_function() {
        let nolines = |pc| Insn {
            pc,
            frame: Some(CALLEE),
            caller: Some(MAIN),
            function: Some((0x400, 0x440)),
            entry: None,
            function_has_lines: false,
        };
        let path = [
            nolines(0x404),
            nolines(0x400),
            main_at(0x114),
            main_at(0x110),
        ];
        let (stop, _) = run(Motion::Next, nolines(0x408), &path);
        assert_eq!(stop, Some(3));
        let unknown = Insn {
            function: None,
            ..nolines(0x408)
        };
        assert_eq!(
            Stepper::new(Motion::Step, &unknown).err(),
            Some(CannotStep::NoFunctionBounds)
        );
    }
}
