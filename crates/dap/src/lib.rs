//! `hindsight dap`: the Debug Adapter Protocol, so that editors (VS Code, nvim-dap, Helix,
//! Emacs' dape…) debug a recording forwards and backwards (`supportsStepBack`), or a live
//! program, through the engine.
//!
//! Layering: [`protocol`] is the wire format and message types, knowing nothing of the
//! debugger; [`adapter`] turns requests into engine calls and engine data into responses and
//! events; [`launch`] starts the session a launch configuration names; [`output`] turns the
//! program's output into `output` events. The debug console runs hindsight's own commands
//! through the command line's interpreter, its text captured (no front end reads another's
//! text: the console's text goes to the user as it is).
//!
//! Invariants: over stdio, fd 1 is the protocol's alone (see [`output`]); requests are
//! handled in order on one thread, except `pause`, which the reading thread answers at once
//! by interrupting the running motion; a client that disconnects ends its program.

pub mod adapter;
pub mod launch;
pub mod output;
pub mod protocol;

use std::io::{BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{mpsc, Arc, Mutex};

use anyhow::Context as _;

use crate::adapter::Adapter;
use crate::output::Output;
use crate::protocol::{Request, Writer};

/// Blocks SIGCHLD in the calling thread: hindsight reads it through a signalfd, which sees a
/// signal only while every thread blocks it (a helper thread that did not would swallow it,
/// and every stop of the program would wait for a timeout).
pub(crate) fn block_sigchld() {
    // SAFETY: plain signal-mask calls on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Serves the client on stdin/stdout until it disconnects; returns the exit status.
pub fn run_stdio() -> anyhow::Result<u8> {
    block_sigchld();
    let saved = output::take_stdio()?;
    let writer = Arc::new(Mutex::new(Writer::new(Box::new(saved.output))));
    let output = Arc::new(Output::redirect(writer.clone())?);
    serve(Box::new(saved.input), writer, output)?;
    Ok(0)
}

/// Serves clients on 127.0.0.1:`port` (0: any free port), one after the other; the address
/// is said on stderr before the first. Returns when `until` says so between two clients.
pub fn run_tcp(port: u16, mut until: impl FnMut() -> bool) -> anyhow::Result<u8> {
    block_sigchld();
    let listener = TcpListener::bind(("127.0.0.1", port))
        .with_context(|| format!("listening on port {port}"))?;
    let local = listener.local_addr().context("the listening address")?;
    eprintln!("hindsight: Debug Adapter Protocol on {local}");
    let _ = std::io::stderr().flush();
    let writer = Arc::new(Mutex::new(Writer::new(Box::new(std::io::sink()))));
    let output = Arc::new(Output::redirect(writer.clone())?);
    loop {
        let (stream, _) = listener.accept().context("waiting for a client")?;
        let _ = stream.set_nodelay(true);
        let out = stream.try_clone().context("the client's connection")?;
        if let Ok(mut w) = writer.lock() {
            *w = Writer::new(Box::new(out));
        }
        serve(Box::new(stream), writer.clone(), output.clone())?;
        if let Ok(mut w) = writer.lock() {
            *w = Writer::new(Box::new(std::io::sink()));
        }
        if until() {
            return Ok(0);
        }
    }
}

/// Serves one client: a thread reads its requests (answering `pause` at once), this one
/// handles them in order.
pub fn serve(
    input: Box<dyn Read + Send>,
    writer: Arc<Mutex<Writer>>,
    output: Arc<Output>,
) -> anyhow::Result<()> {
    let interrupter: Arc<Mutex<Option<hindsight_engine::Interrupter>>> = Default::default();
    let (tx, rx) = mpsc::channel::<Request>();
    let reader = {
        let (writer, interrupter) = (writer.clone(), interrupter.clone());
        std::thread::Builder::new()
            .name("dap-reader".into())
            .spawn(move || read_requests(input, tx, writer, interrupter))
            .context("starting the reader")?
    };
    let mut adapter = Adapter::new(writer, output, interrupter);
    for req in rx {
        adapter.handle(&req);
        if adapter.done {
            break;
        }
    }
    // The client left (or disconnected): its program goes with it.
    drop(adapter);
    drop(reader);
    Ok(())
}

/// Reads requests until the end of the stream. `pause` is answered here, while the handling
/// thread may be running a motion; `disconnect` and `terminate` interrupt a running motion
/// too, then wait for their turn.
fn read_requests(
    input: Box<dyn Read + Send>,
    tx: mpsc::Sender<Request>,
    writer: Arc<Mutex<Writer>>,
    interrupter: Arc<Mutex<Option<hindsight_engine::Interrupter>>>,
) {
    block_sigchld();
    let mut input = BufReader::new(input);
    let interrupt = || {
        if let Ok(i) = interrupter.lock() {
            if let Some(i) = i.as_ref() {
                i.interrupt();
            }
        }
    };
    loop {
        let body = match protocol::read_message(&mut input) {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => {
                if let Ok(mut w) = writer.lock() {
                    let _ = w.event(
                        "output",
                        serde_json::json!({ "category": "stderr", "output": format!("hindsight: {e}\n") }),
                    );
                }
                if matches!(e, protocol::WireError::Io(_)) {
                    break;
                }
                continue;
            }
        };
        let req = match Request::parse(&body) {
            Ok(r) => r,
            Err(e) => {
                if let Ok(mut w) = writer.lock() {
                    let _ = w.event(
                        "output",
                        serde_json::json!({ "category": "stderr", "output": format!("hindsight: {e}\n") }),
                    );
                }
                continue;
            }
        };
        match req.command.as_str() {
            "pause" => {
                interrupt();
                if let Ok(mut w) = writer.lock() {
                    let _ = w.respond(&req, Ok(serde_json::Value::Null));
                }
                continue;
            }
            "disconnect" | "terminate" => interrupt(),
            _ => {}
        }
        if tx.send(req).is_err() {
            break;
        }
    }
    // The end of the stream: the client is gone; whatever runs stops.
    interrupt();
    let _ = tx.send(Request {
        seq: 0,
        command: "disconnect".into(),
        arguments: serde_json::Value::Null,
    });
}
