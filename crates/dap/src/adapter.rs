//! The adapter: DAP requests become engine calls, engine data becomes responses and events.
//!
//! Invariants:
//! - Requests are handled one at a time, in order; a motion runs inside its request's
//!   handling, and its stop is told (`stopped`, or `exited` and `terminated`) after the
//!   response. Only `pause` is answered while a motion runs (by the reader, see
//!   [`crate::serve`]).
//! - Frame ids and variable references name things as they are at one stop: every motion
//!   forgets them. Threads are named by their recorded tids in a replay (time travel starts the
//!   replay again, with new live tids; the client must keep seeing the same threads).
//! - Breakpoints, function breakpoints and data breakpoints are the engine's, under its
//!   numbers (which are the ids the client sees); the client's `set*Breakpoints` replaces all
//!   of one kind (of one file, for source breakpoints).
//! - A replay never changes: `setVariable` and assignments are refused with a message that
//!   says why; going past the program's end stops at its exit (the end of the history), from
//!   where the client can still go back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hindsight_cli::console::{Captured, Console};
use hindsight_engine::frames::FrameInfo;
use hindsight_engine::signals::signal_name;
use hindsight_engine::{
    LineStep, Notice, Observer, Place, Session, Stop, StopReason, Tid, WatchAccess,
};
use serde_json::{json, Value};

use crate::launch::{self, LaunchArgs};
use crate::output::Output;
use crate::protocol::{self, to_value, Request, Writer};

/// What a variables reference stands for.
#[derive(Debug, Clone)]
enum Ref {
    /// A frame's local variables.
    Locals(i64),
    /// A frame's parameters.
    Args(i64),
    /// A frame's registers.
    Registers(i64),
    /// The children of what `expression` evaluates to in a frame.
    Children { frame: i64, expression: String },
}

/// The adapter's side of a motion: threads and logpoints become events, periodic commands
/// run in the debug console's interpreter.
struct Events {
    writer: Arc<Mutex<Writer>>,
    console: Console,
    captured: Captured,
    /// Thread events wait for the motion's end (their tids are named then).
    threads: Vec<(&'static str, Tid)>,
}

impl Events {
    fn output(&self, category: &str, text: &str) {
        if let Ok(mut w) = self.writer.lock() {
            let _ = w.event("output", json!({ "category": category, "output": text }));
        }
    }
}

impl Observer for Events {
    fn notice(&mut self, notice: Notice) {
        match notice {
            Notice::NewThread { tid, .. } => self.threads.push(("started", tid)),
            Notice::ThreadExited { tid, .. } => self.threads.push(("exited", tid)),
            Notice::Dprintf { text, .. } => self.output("console", &text),
            Notice::DprintfError { error, .. } => self.output("stderr", &format!("{error}\n")),
            Notice::Exec { pid, path } => self.output(
                "console",
                &format!("process {pid} is executing new program: {path}\n"),
            ),
            Notice::SwitchedInferior { num, pid, program } => self.output(
                "console",
                &format!("[Switching to inferior {num} [process {pid}] ({program})]\n"),
            ),
            Notice::Detached { pid } => self.output(
                "console",
                &format!("[Detaching after fork from child process {pid}]\n"),
            ),
            Notice::SignalReceived { thread, signal } => {
                let (name, desc) = hindsight_engine::signals::signal_name(signal);
                let text = match thread {
                    Some((num, tname)) => {
                        format!("Thread {num} \"{tname}\" received signal {name}, {desc}.\n")
                    }
                    None => format!("Program received signal {name}, {desc}.\n"),
                };
                self.output("console", &text);
            }
            Notice::ProgramOutput { fd, data, .. } => self.output(
                if fd == 2 { "stderr" } else { "stdout" },
                &String::from_utf8_lossy(&data),
            ),
            Notice::Finishing { .. } | Notice::SteppingOutOf { .. } => {}
        }
    }

    fn run_commands(&mut self, session: &mut Session, commands: &[String]) {
        for c in commands {
            if let Err(e) = hindsight_cli::commands::execute(session, &mut self.console, c) {
                self.console.eprintln(&e.to_string());
            }
        }
        let text = self.captured.take();
        if !text.is_empty() {
            self.output("console", &text);
        }
    }
}

/// A hit condition as gdb's ignore count: `N` or `>= N` stop from the N-th hit on, `> N`
/// after the N-th.
fn ignore_count(hit: &str) -> Result<u32, String> {
    let h = hit.trim();
    let (n, skip) = if let Some(r) = h.strip_prefix(">=") {
        (r, 1)
    } else if let Some(r) = h.strip_prefix('>') {
        (r, 0)
    } else {
        (h, 1)
    };
    match n.trim().parse::<u32>() {
        Ok(n) if n >= skip => Ok(n - skip),
        _ => Err(format!(
            "hit condition \"{hit}\" not understood: give N or >= N (stop from the N-th hit on), or > N"
        )),
    }
}

/// A logpoint's message (`x is {x}`) as a dprintf format and its arguments.
fn logpoint_format(message: &str) -> (String, Vec<String>) {
    let mut format = String::new();
    let mut args = Vec::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                format.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                format.push('}');
            }
            '{' => {
                let mut expr = String::new();
                let mut depth = 0;
                for c in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    expr.push(c);
                }
                format.push_str("%V");
                args.push(expr.trim().to_string());
            }
            '%' => format.push_str("%%"),
            c => format.push(c),
        }
    }
    if !format.ends_with('\n') {
        format.push('\n');
    }
    (format, args)
}

/// The DAP server's state for one client.
pub struct Adapter {
    writer: Arc<Mutex<Writer>>,
    output: Arc<Output>,
    /// Where the reader finds the running session's interrupter (for `pause`).
    interrupter: Arc<Mutex<Option<hindsight_engine::Interrupter>>>,
    session: Option<Session>,
    launch: Option<LaunchArgs>,
    lines_at_1: bool,
    columns_at_1: bool,
    source_breakpoints: HashMap<String, Vec<u32>>,
    function_breakpoints: Vec<u32>,
    data_breakpoints: Vec<u32>,
    /// What `dataBreakpointInfo` found, by the data id it gave (the value says where and of
    /// which type).
    data_ids: HashMap<String, hindsight_symbols::value::Value>,
    /// Frame ids: (the thread as the client names it, frame index). Live tids may change
    /// while the program stays where it is (a debug console command such as `when` replays
    /// up to now again), so frames are kept by the client's tid.
    frames: HashMap<i64, (i64, usize)>,
    refs: HashMap<i64, Ref>,
    next_id: i64,
    events: Events,
    /// The client asked to end (`disconnect`) or the connection closed.
    pub done: bool,
    terminated: bool,
}

type Reply = Result<Value, String>;

/// What to do once a request's response is sent: the events it causes (a motion runs there,
/// so that its `stopped` comes after the response, as the protocol wants).
type After = Option<Box<dyn FnOnce(&mut Adapter)>>;

/// An error as the client's message.
fn msg(e: anyhow::Error) -> String {
    e.to_string()
}

impl Adapter {
    /// An adapter that answers on `writer`.
    pub fn new(
        writer: Arc<Mutex<Writer>>,
        output: Arc<Output>,
        interrupter: Arc<Mutex<Option<hindsight_engine::Interrupter>>>,
    ) -> Adapter {
        let (console, captured) = Console::capturing();
        Adapter {
            events: Events {
                writer: writer.clone(),
                console,
                captured,
                threads: Vec::new(),
            },
            writer,
            output,
            interrupter,
            session: None,
            launch: None,
            lines_at_1: true,
            columns_at_1: true,
            source_breakpoints: HashMap::new(),
            function_breakpoints: Vec::new(),
            data_breakpoints: Vec::new(),
            data_ids: HashMap::new(),
            frames: HashMap::new(),
            refs: HashMap::new(),
            next_id: 0,
            done: false,
            terminated: false,
        }
    }

    fn event(&self, event: &str, body: Value) {
        if let Ok(mut w) = self.writer.lock() {
            let _ = w.event(event, body);
        }
    }

    fn console(&self, text: &str) {
        let mut t = text.to_string();
        if !t.ends_with('\n') {
            t.push('\n');
        }
        self.event("output", json!({ "category": "console", "output": t }));
    }

    fn session(&mut self) -> Result<&mut Session, String> {
        self.session
            .as_mut()
            .ok_or_else(|| "No program: launch one first.".to_string())
    }

    /// Handles one request: its response, then the events it causes.
    pub fn handle(&mut self, req: &Request) {
        // A pause that came while nothing ran was for nothing; one that comes from now on is
        // for what this request runs (even if the client sends it before the motion begins).
        if let Some(s) = self.session.as_ref() {
            s.interrupter().forget();
        }
        let mut after: After = None;
        let reply = self.dispatch(req, &mut after);
        if let Ok(mut w) = self.writer.lock() {
            let _ = w.respond(req, reply);
        }
        if let Some(f) = after {
            f(self);
        }
    }

    fn dispatch(&mut self, req: &Request, after: &mut After) -> Reply {
        match req.command.as_str() {
            "initialize" => self.initialize(req),
            "launch" => {
                let r = self.launch(req);
                if r.is_ok() {
                    *after = Some(Box::new(|a| a.event("initialized", Value::Null)));
                }
                r
            }
            "attach" => Err("hindsight cannot attach to a running process: launch a program (mode \"live\" or \"record\") or replay a trace".into()),
            "configurationDone" => {
                *after = Some(Box::new(|a| a.start_running()));
                Ok(Value::Null)
            }
            "setBreakpoints" => self.set_breakpoints(req),
            "setFunctionBreakpoints" => self.set_function_breakpoints(req),
            "setExceptionBreakpoints" => Ok(json!({ "breakpoints": [] })),
            "dataBreakpointInfo" => self.data_breakpoint_info(req),
            "setDataBreakpoints" => self.set_data_breakpoints(req),
            "threads" => self.threads(),
            "stackTrace" => self.stack_trace(req),
            "scopes" => self.scopes(req),
            "variables" => self.variables(req),
            "setVariable" => self.set_variable(req),
            "evaluate" => self.evaluate(req, after),
            "continue" => self.motion(after, Motion::Continue),
            "next" => self.motion(after, Motion::step(req, LineStep::Next)),
            "stepIn" => self.motion(after, Motion::step(req, LineStep::Step)),
            "stepOut" => self.motion(after, Motion::Finish),
            "stepBack" => self.motion(after, Motion::back(req)),
            "reverseContinue" => self.motion(after, Motion::ReverseContinue),
            // Answered by the reader while a motion runs; here nothing runs.
            "pause" => Ok(Value::Null),
            "restart" => self.restart(after),
            "terminate" => {
                self.end_program();
                *after = Some(Box::new(|a| a.terminated()));
                Ok(Value::Null)
            }
            "disconnect" => {
                self.end_program();
                self.done = true;
                Ok(Value::Null)
            }
            "hindsight/when" => self.when(),
            "hindsight/goto" => self.goto(req, after),
            "hindsight/bookmark" => self.bookmark(req),
            "hindsight/bookmarks" => self.bookmarks(),
            other => Err(format!("hindsight's adapter does not handle '{other}'")),
        }
    }

    fn initialize(&mut self, req: &Request) -> Reply {
        let a: protocol::InitializeArgs = req.args()?;
        self.lines_at_1 = a.lines_start_at1.unwrap_or(true);
        self.columns_at_1 = a.columns_start_at1.unwrap_or(true);
        Ok(json!({
            "supportsConfigurationDoneRequest": true,
            "supportsFunctionBreakpoints": true,
            "supportsConditionalBreakpoints": true,
            "supportsHitConditionalBreakpoints": true,
            "supportsLogPoints": true,
            "supportsDataBreakpoints": true,
            "supportsEvaluateForHovers": true,
            "supportsStepBack": true,
            "supportsSetVariable": true,
            "supportsRestartRequest": true,
            "supportsTerminateRequest": true,
            "supportsSteppingGranularity": true,
            "supportsGotoTargetsRequest": false,
            "exceptionBreakpointFilters": [],
        }))
    }

    fn launch(&mut self, req: &Request) -> Reply {
        let args: LaunchArgs = req.args()?;
        let started = launch::start(&args).map_err(|e| format!("{e:#}"))?;
        self.output.drain();
        for n in &started.notes {
            self.console(n);
        }
        if let Ok(mut slot) = self.interrupter.lock() {
            *slot = Some(started.session.interrupter());
        }
        self.session = Some(started.session);
        self.launch = Some(args);
        Ok(Value::Null)
    }

    /// After `configurationDone` (or `restart`): runs to `main` or to the first stop.
    fn start_running(&mut self) {
        let stop_on_entry = self.launch.as_ref().is_some_and(|l| l.stop_on_entry);
        let Some(s) = self.session.as_mut() else {
            return;
        };
        if stop_on_entry {
            match s.add_breakpoint("main", None, true, None, None) {
                Ok(_) => self.run(Motion::Continue, Some("entry")),
                Err(e) => {
                    self.console(&format!("stopOnEntry: {e}"));
                    self.run(Motion::Continue, None);
                }
            }
        } else {
            self.run(Motion::Continue, None);
        }
    }

    fn restart(&mut self, after: &mut After) -> Reply {
        let s = self.session()?;
        if s.is_replay() {
            s.goto(&Place::Start).map_err(msg)?;
        } else {
            s.restart().map_err(msg)?;
        }
        self.forget_stop();
        *after = Some(Box::new(|a| a.start_running()));
        Ok(Value::Null)
    }

    fn end_program(&mut self) {
        if let Some(s) = self.session.as_mut() {
            s.kill();
        }
        self.forget_stop();
    }

    fn terminated(&mut self) {
        if !self.terminated {
            self.terminated = true;
            self.event("terminated", json!({}));
        }
    }

    // ---- threads, frames, variables --------------------------------------------------------

    /// The tid the client sees for a live thread.
    fn client_tid(&self, tid: Tid) -> i64 {
        match &self.session {
            Some(s) => hindsight_engine::remote::client_tid(s, tid) as i64,
            None => tid.0 as i64,
        }
    }

    /// The live thread of a tid the client knows.
    fn live_tid(&self, id: i64) -> Result<Tid, String> {
        let s = self.session.as_ref().ok_or("No program.")?;
        hindsight_engine::remote::live_tid(s, id as i32)
            .filter(|t| s.threads().iter().any(|x| x.tid == *t))
            .ok_or_else(|| format!("No thread {id}."))
    }

    fn threads(&mut self) -> Reply {
        let Some(s) = self.session.as_ref() else {
            return Ok(json!({ "threads": [] }));
        };
        let list: Vec<Value> = s
            .threads()
            .iter()
            .map(|t| {
                let name = s.thread_name(t.tid).unwrap_or_default();
                json!({
                    "id": hindsight_engine::remote::client_tid(s, t.tid),
                    "name": format!("Thread {} ({name})", t.num),
                })
            })
            .collect();
        Ok(json!({ "threads": list }))
    }

    fn line(&self, line: u32) -> i64 {
        if self.lines_at_1 {
            line as i64
        } else {
            line as i64 - 1
        }
    }

    fn column(&self) -> i64 {
        if self.columns_at_1 {
            1
        } else {
            0
        }
    }

    fn stack_trace(&mut self, req: &Request) -> Reply {
        let a: protocol::StackTraceArgs = req.args()?;
        let tid = self.live_tid(a.thread_id)?;
        let s = self.session.as_ref().ok_or("No program.")?;
        let frames = s
            .backtrace(tid, hindsight_engine::frames::MAX_FRAMES)
            .map_err(msg)?;
        let total = frames.len();
        let start = a.start_frame.unwrap_or(0).max(0) as usize;
        let levels = match a.levels {
            Some(n) if n > 0 => n as usize,
            _ => total,
        };
        let mut out = Vec::new();
        for f in frames.into_iter().skip(start).take(levels) {
            self.next_id += 1;
            let id = self.next_id;
            self.frames.insert(id, (a.thread_id, f.index));
            out.push(self.stack_frame(id, &f));
        }
        Ok(json!({ "stackFrames": out, "totalFrames": total }))
    }

    fn stack_frame(&self, id: i64, f: &FrameInfo) -> Value {
        let name = f
            .function
            .as_ref()
            .map(|func| func.name.clone())
            .unwrap_or_else(|| "??".into());
        let source = f.line.as_ref().map(|l| protocol::Source {
            name: l
                .file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .or(Some(l.name.clone())),
            path: Some(
                hindsight_symbols::lines::normalize(&l.file)
                    .display()
                    .to_string(),
            ),
        });
        let line = f.line.as_ref().map(|l| self.line(l.line)).unwrap_or(0);
        to_value(protocol::StackFrame {
            id,
            name,
            presentation_hint: source.is_none().then(|| "subtle".to_string()),
            source,
            line,
            column: if line > 0 { self.column() } else { 0 },
            instruction_pointer_reference: format!("{:#x}", f.pc),
        })
    }

    /// Selects frame `id` in the engine (expressions are evaluated there).
    fn select(&mut self, id: i64) -> Result<(), String> {
        let (thread, index) = *self.frames.get(&id).ok_or_else(|| {
            format!("No frame {id} (frames are valid while the program stays where it stopped).")
        })?;
        let tid = self.live_tid(thread)?;
        let s = self.session()?;
        s.select_thread(tid);
        s.select_frame(index);
        Ok(())
    }

    fn reference(&mut self, r: Ref) -> i64 {
        self.next_id += 1;
        self.refs.insert(self.next_id, r);
        self.next_id
    }

    fn scopes(&mut self, req: &Request) -> Reply {
        let a: protocol::FrameArgs = req.args()?;
        if !self.frames.contains_key(&a.frame_id) {
            return Err(format!("No frame {}.", a.frame_id));
        }
        let scopes = [
            ("Locals", "locals", Ref::Locals(a.frame_id)),
            ("Arguments", "arguments", Ref::Args(a.frame_id)),
            ("Registers", "registers", Ref::Registers(a.frame_id)),
        ];
        let list: Vec<Value> = scopes
            .into_iter()
            .map(|(name, hint, r)| {
                let expensive = matches!(r, Ref::Registers(_));
                to_value(protocol::Scope {
                    name: name.into(),
                    presentation_hint: hint.into(),
                    variables_reference: self.reference(r),
                    expensive,
                })
            })
            .collect();
        Ok(json!({ "scopes": list }))
    }

    fn variable(&mut self, frame: i64, v: &hindsight_engine::Variable) -> protocol::Variable {
        let reference = if v.has_children {
            self.reference(Ref::Children {
                frame,
                expression: v.expression.clone(),
            })
        } else {
            0
        };
        let indexed = match &v.value {
            Ok(val) => match val.ty.shape() {
                hindsight_symbols::value::Shape::Array(_, Some(n)) => {
                    Some(n.min(hindsight_engine::values::MAX_ELEMENTS) as i64)
                }
                _ => None,
            },
            Err(_) => None,
        };
        protocol::Variable {
            name: v.name.clone(),
            value: v.text.clone(),
            ty: (!v.type_name.is_empty()).then(|| v.type_name.clone()),
            variables_reference: reference,
            evaluate_name: (!v.expression.is_empty()).then(|| v.expression.clone()),
            indexed_variables: indexed,
        }
    }

    fn variables(&mut self, req: &Request) -> Reply {
        let a: protocol::VariablesArgs = req.args()?;
        let r = self
            .refs
            .get(&a.variables_reference)
            .cloned()
            .ok_or_else(|| format!("No variables reference {}.", a.variables_reference))?;
        let (frame, vars) = match r {
            Ref::Locals(f) => {
                self.select(f)?;
                (f, self.session()?.locals().map_err(msg)?)
            }
            Ref::Args(f) => {
                self.select(f)?;
                (f, self.session()?.frame_parameters().map_err(msg)?)
            }
            Ref::Registers(f) => {
                self.select(f)?;
                return self.registers();
            }
            Ref::Children { frame, expression } => {
                self.select(frame)?;
                (frame, self.session()?.children(&expression).map_err(msg)?)
            }
        };
        // Array elements are `indexed` children (the client pages through them); an array
        // has no `named` ones.
        let indexed = vars.first().is_some_and(|v| v.name.starts_with('['));
        if a.filter.as_deref() == Some("named") && indexed {
            return Ok(json!({ "variables": [] }));
        }
        let start = a.start.unwrap_or(0).max(0) as usize;
        let count = match a.count {
            Some(n) if n > 0 => n as usize,
            _ => vars.len(),
        };
        let list: Vec<Value> = vars
            .iter()
            .skip(start)
            .take(count)
            .map(|v| {
                let v = self.variable(frame, v);
                to_value(v)
            })
            .collect();
        Ok(json!({ "variables": list }))
    }

    /// The selected frame's registers (the innermost frame's for what unwinding does not
    /// recover).
    fn registers(&mut self) -> Reply {
        let s = self.session()?;
        let tid = s.tid().map_err(msg)?;
        let regs = s
            .live()
            .map_err(msg)?
            .regs(tid)
            .map_err(|e| e.to_string())?;
        let mut names: Vec<&str> = hindsight_ptrace::regs::GDB_ORDER.to_vec();
        names.extend(["fs_base", "gs_base"]);
        let list: Vec<Value> = names
            .into_iter()
            .filter_map(|n| {
                regs.by_name(n).map(|v| {
                    json!({ "name": n, "value": format!("{v:#x}"), "variablesReference": 0, "evaluateName": format!("${n}") })
                })
            })
            .collect();
        Ok(json!({ "variables": list }))
    }

    fn set_variable(&mut self, req: &Request) -> Reply {
        let a: protocol::SetVariableArgs = req.args()?;
        let r = self
            .refs
            .get(&a.variables_reference)
            .cloned()
            .ok_or_else(|| format!("No variables reference {}.", a.variables_reference))?;
        let (frame, expression) = match r {
            Ref::Locals(f) | Ref::Args(f) => (f, a.name.clone()),
            Ref::Children { frame, expression } => {
                let child = self
                    .session()?
                    .children(&expression)
                    .map_err(msg)?
                    .into_iter()
                    .find(|c| c.name == a.name)
                    .ok_or_else(|| format!("No member {} in {expression}.", a.name))?;
                if child.expression.is_empty() {
                    return Err(format!(
                        "{} of {expression} is shown by a formatter and no expression names it; change it from the debug console.",
                        a.name
                    ));
                }
                (frame, child.expression)
            }
            Ref::Registers(_) => {
                return Err("Registers cannot be set from here; use the debug console.".into())
            }
        };
        self.select(frame)?;
        let v = self.session()?.assign(&expression, &a.value).map_err(msg)?;
        let v = self.variable(frame, &v);
        Ok(json!({
            "value": v.value,
            "type": v.ty,
            "variablesReference": v.variables_reference,
        }))
    }

    // ---- evaluate ---------------------------------------------------------------------------

    fn evaluate(&mut self, req: &Request, after: &mut After) -> Reply {
        let a: protocol::EvaluateArgs = req.args()?;
        if let Some(f) = a.frame_id {
            self.select(f)?;
        }
        if a.context.as_deref() == Some("repl") && is_command(&a.expression) {
            // A lone word that names a variable here (`s`, `n`, `c`…) is that variable, not
            // the command it abbreviates: the console shows values, the toolbar steps.
            let word = a.expression.trim();
            let variable = word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && self
                    .session
                    .as_mut()
                    .is_some_and(|s| s.evaluate(word).is_ok());
            if !variable {
                return self.command(&a.expression, after);
            }
        }
        let frame = a.frame_id.unwrap_or(0);
        let s = self.session()?;
        let v = s.variable(&a.expression, &a.expression).map_err(msg)?;
        if let Err(e) = &v.value {
            return Err(e.clone());
        }
        let v = self.variable(frame, &v);
        // An expression without a frame names its children in the selected one.
        if v.variables_reference != 0 && a.frame_id.is_none() {
            let s = self.session.as_ref();
            let here = (
                s.and_then(|s| s.selected_thread())
                    .map(|t| self.client_tid(t))
                    .unwrap_or(0),
                s.map(|s| s.selected_frame_index()).unwrap_or(0),
            );
            self.frames.entry(0).or_insert(here);
        }
        Ok(json!({
            "result": v.value,
            "type": v.ty,
            "variablesReference": v.variables_reference,
        }))
    }

    /// A hindsight command typed in the debug console: its text is the result; if it moved
    /// the program, the client hears where it stopped.
    fn command(&mut self, line: &str, after: &mut After) -> Reply {
        let Adapter {
            session, events, ..
        } = self;
        let s = session.as_mut().ok_or("No program: launch one first.")?;
        let before = (hindsight_engine::remote::instant(s), s.last_stop().cloned());
        let r = hindsight_cli::commands::execute(s, &mut events.console, line);
        let mut text = events.captured.take();
        let moved = (hindsight_engine::remote::instant(s), s.last_stop().cloned()) != before;
        if moved {
            // The program gone without an end of its own (`kill`): the session ends.
            let stop = s
                .last_stop()
                .cloned()
                .filter(|stop| s.pid().is_some() || stop.ended());
            self.forget_stop();
            *after = Some(Box::new(move |a| match stop {
                Some(stop) => a.tell_stop(&stop, None),
                None => a.terminated(),
            }));
        }
        match r {
            Ok(()) => Ok(json!({ "result": text, "variablesReference": 0 })),
            Err(e) => {
                text.push_str(&e.to_string());
                Err(text)
            }
        }
    }

    // ---- breakpoints ------------------------------------------------------------------------

    fn set_breakpoints(&mut self, req: &Request) -> Reply {
        let a: protocol::SetBreakpointsArgs = req.args()?;
        let path = a
            .source
            .path
            .clone()
            .ok_or("setBreakpoints needs the source's path.")?;
        let wanted: Vec<protocol::SourceBreakpoint> = match (a.breakpoints, a.lines) {
            (Some(b), _) => b,
            (None, Some(lines)) => lines
                .into_iter()
                .map(|line| protocol::SourceBreakpoint {
                    line,
                    ..Default::default()
                })
                .collect(),
            (None, None) => Vec::new(),
        };
        let lines_at_1 = self.lines_at_1;
        let old = self.source_breakpoints.remove(&path).unwrap_or_default();
        let s = self.session()?;
        for n in old {
            let _ = s.delete_breakpoint(n);
        }
        let mut numbers = Vec::new();
        let mut out = Vec::new();
        for b in wanted {
            let line = if lines_at_1 { b.line } else { b.line + 1 };
            let location = format!("{path}:{line}");
            let r = add(
                s,
                &location,
                b.condition.as_deref(),
                b.hit_condition.as_deref(),
                b.log_message.as_deref(),
            );
            out.push(match r {
                Ok(nb) => {
                    numbers.push(nb.number);
                    let actual = nb.line.as_ref().map(|l| l.line as i64).unwrap_or(line);
                    protocol::Breakpoint {
                        id: Some(nb.number as i64),
                        verified: true,
                        source: Some(protocol::Source {
                            name: None,
                            path: Some(path.clone()),
                        }),
                        line: Some(if lines_at_1 { actual } else { actual - 1 }),
                        instruction_reference: nb.addresses.first().map(|a| format!("{a:#x}")),
                        message: None,
                    }
                }
                Err(e) => protocol::Breakpoint {
                    verified: false,
                    message: Some(e),
                    line: Some(b.line),
                    ..Default::default()
                },
            });
        }
        self.source_breakpoints.insert(path, numbers);
        Ok(json!({ "breakpoints": out }))
    }

    fn set_function_breakpoints(&mut self, req: &Request) -> Reply {
        let a: protocol::SetFunctionBreakpointsArgs = req.args()?;
        let old = std::mem::take(&mut self.function_breakpoints);
        let s = self.session()?;
        for n in old {
            let _ = s.delete_breakpoint(n);
        }
        let mut numbers = Vec::new();
        let mut out = Vec::new();
        for b in a.breakpoints {
            out.push(
                match add(
                    s,
                    &b.name,
                    b.condition.as_deref(),
                    b.hit_condition.as_deref(),
                    None,
                ) {
                    Ok(nb) => {
                        numbers.push(nb.number);
                        protocol::Breakpoint {
                            id: Some(nb.number as i64),
                            verified: true,
                            source: nb.line.as_ref().map(|l| protocol::Source {
                                name: None,
                                path: Some(l.file.display().to_string()),
                            }),
                            line: nb.line.as_ref().map(|l| l.line as i64),
                            instruction_reference: nb.addresses.first().map(|a| format!("{a:#x}")),
                            message: None,
                        }
                    }
                    Err(e) => protocol::Breakpoint {
                        verified: false,
                        message: Some(e),
                        ..Default::default()
                    },
                },
            );
        }
        self.function_breakpoints = numbers;
        Ok(json!({ "breakpoints": out }))
    }

    fn data_breakpoint_info(&mut self, req: &Request) -> Reply {
        let a: protocol::DataBreakpointInfoArgs = req.args()?;
        // The expression it names, evaluated in the frame it belongs to.
        let (frame, expression) = match a
            .variables_reference
            .and_then(|r| self.refs.get(&r).cloned())
        {
            Some(Ref::Locals(f) | Ref::Args(f)) => (Some(f), a.name.clone()),
            Some(Ref::Children { frame, expression }) => {
                self.select(frame)?;
                let child = self
                    .session()?
                    .children(&expression)
                    .map_err(msg)?
                    .into_iter()
                    .find(|c| c.name == a.name)
                    .ok_or_else(|| format!("No member {} in {expression}.", a.name))?;
                (Some(frame), child.expression)
            }
            Some(Ref::Registers(_)) => {
                return Ok(json!({ "dataId": null, "description": "Registers cannot be watched." }))
            }
            None => (a.frame_id, a.name.clone()),
        };
        if let Some(f) = frame {
            self.select(f)?;
        }
        let s = self.session()?;
        let v = s.evaluate(&expression).map_err(msg)?;
        let Some(addr) = v.address() else {
            return Ok(json!({
                "dataId": null,
                "description": format!("{expression} is not in memory: it cannot be watched."),
            }));
        };
        // Watched by address: the data stays watched when the frame is left.
        let id = format!("{addr:#x}:{}:{expression}", v.size());
        let size = v.size();
        self.data_ids.insert(id.clone(), v);
        Ok(json!({
            "dataId": id,
            "description": format!("{expression} ({size} bytes at {addr:#x})"),
            "accessTypes": ["write", "read", "readWrite"],
            "canPersist": false,
        }))
    }

    fn set_data_breakpoints(&mut self, req: &Request) -> Reply {
        let a: protocol::SetDataBreakpointsArgs = req.args()?;
        let old = std::mem::take(&mut self.data_breakpoints);
        let data_ids = &self.data_ids;
        let s = self
            .session
            .as_mut()
            .ok_or("No program: launch one first.")?;
        for n in old {
            let _ = s.delete_breakpoint(n);
        }
        let mut numbers = Vec::new();
        let mut out = Vec::new();
        for b in a.breakpoints {
            let access = match b.access_type.as_deref() {
                None | Some("write") => WatchAccess::Write,
                Some("read") => WatchAccess::Read,
                Some("readWrite") => WatchAccess::Access,
                Some(other) => {
                    out.push(protocol::Breakpoint {
                        verified: false,
                        message: Some(format!("unknown access type \"{other}\"")),
                        ..Default::default()
                    });
                    continue;
                }
            };
            let r = match data_ids.get(&b.data_id) {
                Some(v) => watch(
                    s,
                    &b.data_id,
                    v,
                    access,
                    b.condition.as_deref(),
                    b.hit_condition.as_deref(),
                ),
                None => Err(format!(
                    "data id \"{}\" is not one dataBreakpointInfo gave",
                    b.data_id
                )),
            };
            out.push(match r {
                Ok(n) => {
                    numbers.push(n);
                    protocol::Breakpoint {
                        id: Some(n as i64),
                        verified: true,
                        ..Default::default()
                    }
                }
                Err(e) => protocol::Breakpoint {
                    verified: false,
                    message: Some(e),
                    ..Default::default()
                },
            });
        }
        self.data_breakpoints = numbers;
        Ok(json!({ "breakpoints": out }))
    }

    // ---- motions ----------------------------------------------------------------------------

    /// Forgets what named things at the last stop.
    fn forget_stop(&mut self) {
        self.frames.clear();
        self.refs.clear();
    }

    fn motion(&mut self, after: &mut After, m: Motion) -> Reply {
        let s = self.session()?;
        if m.backward() && !s.is_replay() {
            return Err(hindsight_engine::motion::NEEDS_RECORDING.into());
        }
        if s.pid().is_none() && !m.backward() {
            return Err("The program is not being run.".into());
        }
        self.forget_stop();
        *after = Some(Box::new(move |a| a.run(m, None)));
        Ok(match m {
            Motion::Continue | Motion::ReverseContinue => json!({ "allThreadsContinued": true }),
            _ => Value::Null,
        })
    }

    /// Runs a motion and tells the client where it stopped.
    fn run(&mut self, m: Motion, reason: Option<&'static str>) {
        let Adapter {
            session, events, ..
        } = self;
        let Some(s) = session.as_mut() else { return };
        let r = match m {
            Motion::Continue => hindsight_engine::remote::forward(s, events, |s, o| s.resume(o)),
            Motion::Step(kind) => {
                hindsight_engine::remote::forward(s, events, |s, o| s.step_line(o, kind))
            }
            Motion::StepInstruction(over) => {
                hindsight_engine::remote::forward(s, events, |s, o| s.step_instruction(o, over))
            }
            Motion::Finish => hindsight_engine::remote::forward(s, events, |s, o| s.finish(o)),
            Motion::ReverseContinue => s.reverse_continue(&mut hindsight_engine::Quiet),
            Motion::ReverseStep(kind) => s.reverse_step_line(kind),
            Motion::ReverseInstruction(over) => s.reverse_step_instruction(over),
        };
        self.thread_events();
        match r {
            Ok(stop) => self.tell_stop(&stop, reason),
            Err(e) => {
                // A motion that failed (the replay diverged, a step it could not make): said
                // in the console; the program is wherever it is now.
                self.console(&format!("hindsight: {e}"));
                match self.session.as_ref().and_then(|s| s.selected_thread()) {
                    Some(t) => {
                        let id = self.client_tid(t);
                        self.output.drain();
                        self.event(
                            "stopped",
                            json!({ "reason": "exception", "description": "Error", "text": e.to_string(), "threadId": id, "allThreadsStopped": true }),
                        );
                    }
                    None => self.terminated(),
                }
            }
        }
    }

    /// Thread events of the motion that just ended.
    fn thread_events(&mut self) {
        let list = std::mem::take(&mut self.events.threads);
        for (reason, tid) in list {
            let id = self.client_tid(tid);
            self.event("thread", json!({ "reason": reason, "threadId": id }));
        }
    }

    /// Tells the client about a stop: `stopped` with its reason, or `exited` and
    /// `terminated`.
    fn tell_stop(&mut self, stop: &Stop, reason: Option<&'static str>) {
        self.output.drain();
        self.forget_stop();
        let (dap_reason, description, text, hit): (&str, String, Option<String>, Option<u32>) =
            match &stop.reason {
                StopReason::Exited { code } => {
                    self.event("exited", json!({ "exitCode": code }));
                    self.terminated();
                    return;
                }
                StopReason::Killed { signal } => {
                    let (name, desc) = signal_name(*signal);
                    self.console(&format!("Program terminated with signal {name}, {desc}."));
                    self.event("exited", json!({ "exitCode": 128 + signal }));
                    self.terminated();
                    return;
                }
                StopReason::Step => ("step", "Paused".into(), None, None),
                StopReason::Breakpoint { number, .. } => (
                    "breakpoint",
                    format!("Breakpoint {number}"),
                    None,
                    Some(*number),
                ),
                StopReason::ConditionError { number, error } => (
                    "breakpoint",
                    format!("Error in testing condition for breakpoint {number}"),
                    Some(error.clone()),
                    Some(*number),
                ),
                StopReason::Watchpoint {
                    number,
                    expr,
                    old,
                    new,
                    ..
                } => {
                    let s = self.session.as_ref();
                    let fmt = |v: &hindsight_symbols::value::Value| {
                        s.and_then(|s| s.format_value(v, None).ok())
                            .unwrap_or_default()
                    };
                    let text = match old {
                        Some(o) => format!("{expr}: {} -> {}", fmt(o), fmt(new)),
                        None => format!("{expr} = {}", fmt(new)),
                    };
                    (
                        "data breakpoint",
                        format!("Watchpoint {number}: {text}"),
                        Some(text),
                        Some(*number),
                    )
                }
                StopReason::Signal { signal } => {
                    let (name, desc) = signal_name(*signal);
                    (
                        "exception",
                        format!("Signal {name}, {desc}"),
                        Some(name),
                        None,
                    )
                }
                StopReason::EndOfHistory { why } => (
                    "step",
                    format!("No more reverse-execution history ({why})"),
                    None,
                    None,
                ),
                StopReason::StartOfHistory => (
                    "step",
                    "No more reverse-execution history (the start of the recording)".into(),
                    None,
                    None,
                ),
                StopReason::EventReached { event } => {
                    ("step", format!("Stopped at event {event}"), None, None)
                }
                StopReason::TickReached { ticks } => {
                    ("step", format!("Stopped at tick {ticks}"), None, None)
                }
                StopReason::Interrupted => ("pause", "Paused".into(), None, None),
            };
        if matches!(
            stop.reason,
            StopReason::EndOfHistory { .. } | StopReason::StartOfHistory
        ) {
            self.console(&description);
        }
        let Some(tid) = stop.thread else {
            return;
        };
        let id = self.client_tid(tid);
        let mut body = json!({
            "reason": reason.unwrap_or(dap_reason),
            "description": description,
            "threadId": id,
            "allThreadsStopped": true,
        });
        if let Some(t) = text {
            body["text"] = t.into();
        }
        if let Some(n) = hit {
            body["hitBreakpointIds"] = json!([n]);
        }
        self.event("stopped", body);
    }

    // ---- positions --------------------------------------------------------------------------

    fn when(&mut self) -> Reply {
        let p = self.session()?.position().map_err(msg)?;
        Ok(json!({ "event": p.event, "position": p.to_string() }))
    }

    fn goto(&mut self, req: &Request, after: &mut After) -> Reply {
        let a: protocol::GotoPlaceArgs = req.args()?;
        let place = match (&a.position, a.event, &a.bookmark, a.start) {
            (Some(p), None, None, None | Some(false)) => Place::Position(
                p.parse()
                    .map_err(|e: hindsight_timeline::TimelineError| e.to_string())?,
            ),
            (None, Some(e), None, None | Some(false)) => Place::Event(e),
            (None, None, Some(b), None | Some(false)) => Place::Bookmark(b.clone()),
            (None, None, None, Some(true)) => Place::Start,
            _ => {
                return Err("hindsight/goto takes one of: position, event, bookmark, start".into())
            }
        };
        let stop = self.session()?.goto(&place).map_err(msg)?;
        self.forget_stop();
        *after = Some(Box::new(move |a| a.tell_stop(&stop, Some("goto"))));
        let p = self.session()?.position().map_err(msg)?;
        Ok(json!({ "event": p.event, "position": p.to_string() }))
    }

    fn bookmark(&mut self, req: &Request) -> Reply {
        let a: protocol::BookmarkArgs = req.args()?;
        let (name, p) = self
            .session()?
            .bookmark(a.name.as_deref().unwrap_or(""))
            .map_err(msg)?;
        Ok(json!({ "name": name, "position": p.to_string() }))
    }

    fn bookmarks(&mut self) -> Reply {
        let list: Vec<Value> = self
            .session()?
            .bookmarks()
            .into_iter()
            .map(|(name, p)| json!({ "name": name, "position": p.to_string() }))
            .collect();
        Ok(json!({ "bookmarks": list }))
    }
}

/// A breakpoint (or, with a log message, a dprintf) at `location`.
fn add(
    s: &mut Session,
    location: &str,
    condition: Option<&str>,
    hit: Option<&str>,
    log: Option<&str>,
) -> Result<hindsight_engine::breakpoints::NewBreakpoint, String> {
    let condition = condition.map(str::trim).filter(|c| !c.is_empty());
    let ignore = hit
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(ignore_count)
        .transpose()?;
    let nb = match log {
        Some(message) => s.add_dprintf(location, None, condition, None, logpoint_format(message)),
        None => s.add_breakpoint(location, None, false, condition, None),
    }
    .map_err(msg)?;
    if let Some(n) = ignore {
        s.set_ignore_count(nb.number, n).map_err(msg)?;
    }
    Ok(nb)
}

/// A watchpoint on the value `dataBreakpointInfo` found (its data id is `ADDR:SIZE:EXPR`).
fn watch(
    s: &mut Session,
    data_id: &str,
    value: &hindsight_symbols::value::Value,
    access: WatchAccess,
    condition: Option<&str>,
    hit: Option<&str>,
) -> Result<u32, String> {
    let expr = data_id.splitn(3, ':').nth(2).unwrap_or(data_id);
    let condition = condition.map(str::trim).filter(|c| !c.is_empty());
    let n = s
        .add_watchpoint_on(expr, value, access, condition)
        .map_err(msg)?;
    if let Some(h) = hit.map(str::trim).filter(|h| !h.is_empty()) {
        s.set_ignore_count(n, ignore_count(h)?).map_err(msg)?;
    }
    Ok(n)
}

/// Whether a debug-console line is a hindsight command (else it is an expression).
fn is_command(line: &str) -> bool {
    hindsight_cli::commands::is_command(line)
}

/// A motion the client asked for.
#[derive(Debug, Clone, Copy)]
enum Motion {
    Continue,
    Step(LineStep),
    StepInstruction(bool),
    Finish,
    ReverseContinue,
    ReverseStep(LineStep),
    ReverseInstruction(bool),
}

impl Motion {
    fn instructions(req: &Request) -> bool {
        req.args::<protocol::ThreadArgs>()
            .ok()
            .and_then(|a| a.granularity)
            .as_deref()
            == Some("instruction")
    }

    fn step(req: &Request, kind: LineStep) -> Motion {
        if Motion::instructions(req) {
            Motion::StepInstruction(kind == LineStep::Next)
        } else {
            Motion::Step(kind)
        }
    }

    fn back(req: &Request) -> Motion {
        if Motion::instructions(req) {
            Motion::ReverseInstruction(true)
        } else {
            Motion::ReverseStep(LineStep::Next)
        }
    }

    fn backward(self) -> bool {
        matches!(
            self,
            Motion::ReverseContinue | Motion::ReverseStep(_) | Motion::ReverseInstruction(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_conditions_are_ignore_counts() {
        assert_eq!(ignore_count("3"), Ok(2));
        assert_eq!(ignore_count(">= 3"), Ok(2));
        assert_eq!(ignore_count("> 3"), Ok(3));
        assert!(
            ignore_count("== 3").is_err(),
            "only the 3rd hit: not an ignore count"
        );
        assert!(ignore_count("% 2").is_err());
        assert!(ignore_count("0").is_err());
    }

    #[test]
    fn logpoint_messages_become_dprintf_formats() {
        let (f, a) = logpoint_format("x is {x}, p->y is {p->y} (100%) {{literal}}");
        assert_eq!(f, "x is %V, p->y is %V (100%%) {literal}\n");
        assert_eq!(a, vec!["x".to_string(), "p->y".to_string()]);
    }
}
