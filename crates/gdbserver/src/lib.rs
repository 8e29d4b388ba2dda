//! `hindsight replay --gdbserver [HOST:]PORT` and `hindsight replay --gdb`: a replay served to
//! gdb over its remote protocol, with reverse execution (`bc`/`bs`), through the `gdbstub`
//! crate.
//!
//! Layering: gdbstub knows the protocol and nothing of the target; [`target`] plugs the
//! replay in through gdbstub's traits, on top of the engine (`hindsight_engine::remote`: the
//! session's surface for machine-level front ends); [`arch`] is hindsight's own x86-64 target
//! description; [`monitor`] runs hindsight's own commands through the command line's
//! interpreter, their text captured for gdb's console.
//!
//! One client at a time; a client that disconnects (or vanishes mid-command) leaves the replay
//! where it was, and the next one finds it there.

pub mod arch;
pub mod conn;
pub mod monitor;
pub mod target;

use std::io::Write as _;
use std::net::TcpListener;
use std::path::Path;

use anyhow::Context as _;
use gdbstub::conn::ConnectionExt;
use gdbstub::stub::run_blocking::{BlockingEventLoop, Event, WaitForStopReasonError};
use gdbstub::stub::{DisconnectReason, GdbStub, MultiThreadStopReason};
use hindsight_engine::Session;

pub use target::ReplayTarget;

/// Runs motions when gdbstub waits for a stop: synchronously (a replay's motion ends on its
/// own; gdb's interrupt is read afterwards).
enum ReplayLoop {}

impl BlockingEventLoop for ReplayLoop {
    type Target = ReplayTarget;
    type Connection = conn::GdbConnection;
    type StopReason = MultiThreadStopReason<u64>;

    fn wait_for_stop_reason(
        target: &mut ReplayTarget,
        conn: &mut conn::GdbConnection,
    ) -> Result<
        Event<Self::StopReason>,
        WaitForStopReasonError<target::TargetFailure, std::io::Error>,
    > {
        // gdb may have sent an interrupt (^C) right after the resume: nothing runs then.
        if let Ok(Some(byte)) = conn.peek() {
            if byte == 0x03 {
                let b = conn.read().map_err(WaitForStopReasonError::Connection)?;
                return Ok(Event::IncomingData(b));
            }
        }
        // gdb's ^C while the motion runs interrupts it at the next event.
        target.session.interrupter().forget();
        if let Some(w) = &target.watch {
            w.arm();
        }
        let (reason, failure) = target.run_motion();
        if let Some(w) = &target.watch {
            w.disarm();
        }
        if let MultiThreadStopReason::SignalWithThread {
            signal: gdbstub::common::Signal::SIGINT,
            ..
        } = reason
        {
            // The ^C that interrupted it is answered by this stop.
            conn.take_interrupt()
                .map_err(WaitForStopReasonError::Connection)?;
        }
        if let Some(why) = failure {
            // Said on gdb's console, then the stop: the session goes on.
            target.log(&why);
            conn.console(&format!("hindsight: {why}\n"))
                .map_err(WaitForStopReasonError::Connection)?;
        }
        target.refresh_tls();
        Ok(Event::TargetStopped(reason))
    }

    fn on_interrupt(
        target: &mut ReplayTarget,
    ) -> Result<Option<Self::StopReason>, target::TargetFailure> {
        // The replay is stopped between motions: report where it is.
        let tid = hindsight_engine::remote::selected_thread(&target.session)
            .unwrap_or(hindsight_engine::Tid(0));
        Ok(Some(target.reason(
            hindsight_engine::remote::RemoteStop::Interrupted(tid),
        )))
    }
}

/// Where to listen: `PORT`, `HOST:PORT` (127.0.0.1 unless told otherwise).
pub fn listen_address(spec: &str) -> String {
    if spec.contains(':') {
        spec.to_string()
    } else {
        format!("127.0.0.1:{spec}")
    }
}

/// Serves `session` to gdb clients on `listener`, one after the other, until `until` says to
/// stop (asked while no client is connected). gdb's `kill` starts the replay again rather
/// than ending the server.
pub fn serve_on(
    session: Session,
    listener: TcpListener,
    mut until: impl FnMut() -> bool,
) -> anyhow::Result<()> {
    let mut target = ReplayTarget::new(session);
    serve_target(&mut target, listener, &mut until)
}

/// [`serve_on`] for a target set up already.
fn serve_target(
    target: &mut ReplayTarget,
    listener: TcpListener,
    until: &mut dyn FnMut() -> bool,
) -> anyhow::Result<()> {
    // Polled, so that `until` is heard while no client is there.
    listener
        .set_nonblocking(true)
        .context("listening for gdb")?;
    loop {
        let (stream, peer) = match listener.accept() {
            Ok(client) => client,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if until() {
                    return Ok(());
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
                continue;
            }
            Err(e) => return Err(e).context("waiting for gdb"),
        };
        stream
            .set_nonblocking(false)
            .context("the connection to gdb")?;
        let _ = stream.set_nodelay(true);
        target.log(&format!("gdb connected from {peer}"));
        // The last client let the program exit: this one starts from the beginning again.
        if !hindsight_engine::remote::is_alive(&target.session) {
            if let Err(e) = hindsight_engine::remote::restart(&mut target.session) {
                eprintln!("hindsight: could not start the replay again: {e:#}");
            }
        }
        let killed = {
            let _doorman = Doorman::start(&listener, target.chatty);
            serve_client(target, &stream)
        };
        // Whatever the client left behind goes; the replay stays where it is.
        target.forget_client();
        if killed {
            target.log("gdb killed the program; the server ends");
            return Ok(());
        }
        if until() {
            return Ok(());
        }
    }
}

/// While a client is served, the others who connect are turned away at once (the replay
/// has one client at a time) rather than left waiting for answers that do not come.
struct Doorman {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Doorman {
    /// Watches `listener` (non-blocking) until dropped.
    fn start(listener: &TcpListener, chatty: bool) -> Doorman {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = listener.try_clone().ok().map(|door| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match door.accept() {
                        Ok((_turned_away, peer)) => {
                            if chatty {
                                eprintln!(
                                    "hindsight: turned away gdb from {peer}: another one is connected"
                                );
                            }
                        }
                        Err(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
                    }
                }
            })
        });
        Doorman { stop, thread }
    }
}

impl Drop for Doorman {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serves one client until it leaves; true if it killed the program. A packet gdbstub cannot
/// handle ends its session: the client gets an error reply and a new session goes on on the
/// same connection.
fn serve_client(target: &mut ReplayTarget, stream: &std::net::TcpStream) -> bool {
    loop {
        let Ok(copy) = stream.try_clone() else {
            return false;
        };
        target.refresh_tls();
        target.watch = Some(conn::InterruptWatch::start(
            stream,
            target.session.interrupter(),
        ));
        let stub = GdbStub::new(conn::GdbConnection::new(
            copy,
            target.tls.clone(),
            target.threads.clone(),
        ));
        match stub.run_blocking::<ReplayLoop>(target) {
            Ok(DisconnectReason::Kill) => return true,
            Ok(reason) => {
                target.log(&format!("gdb disconnected ({reason:?})"));
                return false;
            }
            Err(e) => {
                if !still_connected(stream) {
                    // A client that closed the connection (after `kill` or `quit`), or went
                    // away mid-command: the next one may come.
                    match e.into_connection_error() {
                        Some((e, _)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                            target.log("gdb disconnected");
                        }
                        Some((e, _)) => target.log(&format!("gdb went away ({e})")),
                        None => target.log("gdb went away"),
                    }
                    return false;
                }
                target.log(&format!("answered a request with an error: {e}"));
                let mut w = stream;
                if w.write_all(b"$E01#a6").is_err() {
                    return false;
                }
            }
        }
    }
}

/// Whether the peer is still there (no end of stream pending).
fn still_connected(stream: &std::net::TcpStream) -> bool {
    let mut b = [0u8; 1];
    if stream.set_nonblocking(true).is_err() {
        return false;
    }
    let r = stream.peek(&mut b);
    let _ = stream.set_nonblocking(false);
    match r {
        Ok(0) => false,
        Ok(_) => true,
        Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
    }
}

/// Runs hindsight commands before any client connects (`hindsight replay --gdbserver PORT
/// -ex CMD…`: to serve the replay from a breakpoint, an event or a bookmark). Their output
/// goes to stdout as on the command line; the first that fails stops the rest and is the
/// error. The breakpoints they set go afterwards: they would stop the program where gdb has
/// none (gdb plants its own).
pub fn prepare(session: &mut Session, scripts: &[hindsight_cli::Script]) -> anyhow::Result<()> {
    let mut console = hindsight_cli::Console::terminal();
    hindsight_cli::run_scripts(session, &mut console, scripts)?;
    let numbers: Vec<u32> = session
        .breakpoint_table()
        .iter()
        .map(|b| b.number)
        .collect();
    for n in numbers {
        session.delete_breakpoint(n)?;
    }
    Ok(())
}

/// What gdb is not shown of a trace of several processes: this server serves the replayed
/// process alone (gdb's multiprocess extensions are not offered), so say which.
fn one_process_note(session: &Session) {
    let pids = session.recorded_processes().unwrap_or_default();
    if pids.len() > 1 {
        eprint!(
            "hindsight: the trace has {} processes. {}",
            pids.len(),
            monitor::served_alone(session)
        );
    }
}

/// `--gdbserver [HOST:]PORT`.
pub fn serve(session: Session, spec: &str, program: &Path) -> anyhow::Result<u8> {
    one_process_note(&session);
    let addr = listen_address(spec);
    let listener = TcpListener::bind(&addr).with_context(|| format!("listening on {addr}"))?;
    let local = listener.local_addr().context("the listening address")?;
    eprintln!(
        "hindsight: serving the replay to gdb on {local}; connect with:\n  gdb -ex 'target remote {local}' {}",
        program.display()
    );
    let _ = std::io::stderr().flush();
    serve_on(session, listener, || false)?;
    Ok(0)
}

/// `--gdb`: serves on a free local port and runs gdb, connected, with the program's symbols;
/// returns gdb's exit status.
pub fn serve_with_gdb(session: Session, program: &Path) -> anyhow::Result<u8> {
    one_process_note(&session);
    let listener = TcpListener::bind("127.0.0.1:0").context("listening for gdb")?;
    let port = listener
        .local_addr()
        .context("the listening address")?
        .port();
    // gdb forgets what it read of the replay after `monitor` commands (one may move it).
    let script = std::env::temp_dir().join(format!("hindsight-gdb-{}.gdb", std::process::id()));
    std::fs::write(&script, target::GDB_REFRESH_HOOK)
        .with_context(|| format!("writing {}", script.display()))?;
    let gdb = std::process::Command::new("gdb")
        .arg("-q")
        .arg("-x")
        .arg(&script)
        .arg("-ex")
        .arg(format!("target extended-remote 127.0.0.1:{port}"))
        .arg(program)
        .spawn()
        .context("starting gdb (is it installed?)");
    let mut gdb = match gdb {
        Ok(gdb) => gdb,
        Err(e) => {
            let _ = std::fs::remove_file(&script);
            return Err(e);
        }
    };
    let pid = gdb.id() as i32;
    let gone = move || {
        // gdb may have been reaped already (the replay waits for any child): gone either way.
        let mut status = 0;
        // SAFETY: waitpid on our own child, without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        r != 0
    };
    let mut target = ReplayTarget::new(session);
    target.client_refreshes = true;
    // gdb has the terminal: the server keeps quiet.
    target.chatty = false;
    let served = serve_target(&mut target, listener, &mut { gone });
    let _ = std::fs::remove_file(&script);
    served?;
    let status = gdb.try_wait().ok().flatten().and_then(|s| s.code());
    Ok(status.unwrap_or(0) as u8)
}
