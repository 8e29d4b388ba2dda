//! The Debug Adapter Protocol's wire format and the message types hindsight uses.
//!
//! Messages are JSON bodies behind a `Content-Length: N\r\n\r\n` header. Requests are read
//! generically (command name, `seq`, raw arguments) and each handler parses its own
//! arguments, so an unknown command or a client's extra fields never lose the request's
//! `seq`: every request gets a response. Outgoing messages are numbered here.
//!
//! The types are our own serde structs, only for what the adapter uses: the `dap` crate (the
//! one Rust crate for these types) has had no release since 2023, writes absent optional
//! fields as `null`, and cannot carry custom requests.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What reading a message can fail with.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The connection failed.
    #[error("reading the client's messages: {0}")]
    Io(#[from] std::io::Error),
    /// A header or body that is not the protocol's.
    #[error("a message that is not the Debug Adapter Protocol's: {0}")]
    Malformed(String),
}

/// Reads one message body; None at the end of the stream.
pub fn read_message(input: &mut impl BufRead) -> Result<Option<Vec<u8>>, WireError> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            // Blank lines between messages (a client that ends bodies with CRLF).
            continue;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| WireError::Malformed(format!("header line '{line}'")))?;
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| WireError::Malformed(format!("Content-Length '{}'", value.trim())))?;
            length = Some(n);
        }
    }
    let n = length.unwrap_or(0);
    if n > 64 << 20 {
        return Err(WireError::Malformed(format!("a body of {n} bytes")));
    }
    let mut body = vec![0u8; n];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

/// A request from the client.
#[derive(Debug, Clone, Deserialize)]
pub struct Request {
    /// Its sequence number (the response names it).
    pub seq: i64,
    /// Its command.
    pub command: String,
    /// Its arguments, parsed by the handler.
    #[serde(default)]
    pub arguments: Value,
}

impl Request {
    /// Parses a message body (a request; anything else is refused).
    pub fn parse(body: &[u8]) -> Result<Request, WireError> {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| WireError::Malformed(e.to_string()))?;
        if v.get("type").and_then(Value::as_str) != Some("request") {
            return Err(WireError::Malformed(format!(
                "a message of type {} (requests only)",
                v.get("type").unwrap_or(&Value::Null)
            )));
        }
        serde_json::from_value(v).map_err(|e| WireError::Malformed(e.to_string()))
    }

    /// The arguments as `T` (missing ones as `T`'s defaults).
    pub fn args<T: for<'de> Deserialize<'de> + Default>(&self) -> Result<T, String> {
        match &self.arguments {
            Value::Null => Ok(T::default()),
            v => serde_json::from_value(v.clone())
                .map_err(|e| format!("bad arguments for '{}': {e}", self.command)),
        }
    }
}

/// Writes numbered messages to the client.
pub struct Writer {
    out: Box<dyn Write + Send>,
    seq: i64,
}

impl Writer {
    /// Writes to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> Writer {
        Writer { out, seq: 0 }
    }

    fn send(&mut self, mut message: serde_json::Map<String, Value>) -> std::io::Result<()> {
        self.seq += 1;
        message.insert("seq".into(), Value::from(self.seq));
        let body = serde_json::to_vec(&Value::Object(message)).map_err(std::io::Error::other)?;
        write!(self.out, "Content-Length: {}\r\n\r\n", body.len())?;
        self.out.write_all(&body)?;
        self.out.flush()
    }

    /// The response to `request`: success with `body`, or failure with `error` as message.
    pub fn respond(
        &mut self,
        request: &Request,
        result: Result<Value, String>,
    ) -> std::io::Result<()> {
        let mut m = serde_json::Map::new();
        m.insert("type".into(), "response".into());
        m.insert("request_seq".into(), request.seq.into());
        m.insert("command".into(), request.command.clone().into());
        match result {
            Ok(body) => {
                m.insert("success".into(), true.into());
                if !body.is_null() {
                    m.insert("body".into(), body);
                }
            }
            Err(message) => {
                m.insert("success".into(), false.into());
                m.insert("message".into(), message.clone().into());
                // VS Code shows `body.error.format` to the user.
                m.insert(
                    "body".into(),
                    serde_json::json!({ "error": { "id": 1, "format": message, "showUser": true } }),
                );
            }
        }
        self.send(m)
    }

    /// An event.
    pub fn event(&mut self, event: &str, body: Value) -> std::io::Result<()> {
        let mut m = serde_json::Map::new();
        m.insert("type".into(), "event".into());
        m.insert("event".into(), event.into());
        if !body.is_null() {
            m.insert("body".into(), body);
        }
        self.send(m)
    }
}

/// A body as JSON (the types here cannot fail to serialize).
pub fn to_value(body: impl Serialize) -> Value {
    serde_json::to_value(body).unwrap_or(Value::Null)
}

/// `initialize`'s arguments (what the adapter uses of them).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InitializeArgs {
    /// Lines are 1-based (the default) or 0-based.
    pub lines_start_at1: Option<bool>,
    /// Columns are 1-based (the default) or 0-based.
    pub columns_start_at1: Option<bool>,
}

/// A source file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Source {
    /// Its short name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// One breakpoint of `setBreakpoints`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SourceBreakpoint {
    /// Its line.
    pub line: i64,
    /// Stop only when this holds.
    pub condition: Option<String>,
    /// Stop only at this hit (`3`, `>= 3`, `% 2`…).
    pub hit_condition: Option<String>,
    /// A logpoint: print this (`{expr}` interpolated) instead of stopping.
    pub log_message: Option<String>,
}

/// `setBreakpoints`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetBreakpointsArgs {
    /// The file.
    pub source: Source,
    /// Its breakpoints (all of them: the others go).
    pub breakpoints: Option<Vec<SourceBreakpoint>>,
    /// Older clients: only the lines.
    pub lines: Option<Vec<i64>>,
}

/// One breakpoint of `setFunctionBreakpoints`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FunctionBreakpoint {
    /// The function (any location gdb's `break` takes).
    pub name: String,
    /// Stop only when this holds.
    pub condition: Option<String>,
    /// Stop only at this hit.
    pub hit_condition: Option<String>,
}

/// `setFunctionBreakpoints`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetFunctionBreakpointsArgs {
    /// All function breakpoints (the others go).
    pub breakpoints: Vec<FunctionBreakpoint>,
}

/// `dataBreakpointInfo`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DataBreakpointInfoArgs {
    /// A container (its child `name`), or none (`name` is an expression).
    pub variables_reference: Option<i64>,
    /// The variable or expression.
    pub name: String,
    /// The frame it is evaluated in.
    pub frame_id: Option<i64>,
}

/// One data breakpoint.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DataBreakpoint {
    /// What `dataBreakpointInfo` returned.
    pub data_id: String,
    /// `read`, `write` or `readWrite`.
    pub access_type: Option<String>,
    /// Stop only when this holds.
    pub condition: Option<String>,
    /// Stop only at this hit.
    pub hit_condition: Option<String>,
}

/// `setDataBreakpoints`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetDataBreakpointsArgs {
    /// All data breakpoints (the others go).
    pub breakpoints: Vec<DataBreakpoint>,
}

/// A breakpoint as the adapter reports it.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Breakpoint {
    /// hindsight's number for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// Whether it could be set.
    pub verified: bool,
    /// Why not, or where.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Its file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// The line it is really on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<i64>,
    /// Its address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction_reference: Option<String>,
}

/// Arguments that name a thread (`continue`, `next`, `stepIn`, `stepOut`, `stepBack`,
/// `reverseContinue`, `pause`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ThreadArgs {
    /// The thread.
    pub thread_id: Option<i64>,
    /// `statement`, `line` or `instruction`.
    pub granularity: Option<String>,
}

/// `stackTrace`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StackTraceArgs {
    /// The thread.
    pub thread_id: i64,
    /// The first frame wanted.
    pub start_frame: Option<i64>,
    /// How many (0 or none: all).
    pub levels: Option<i64>,
}

/// A stack frame.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StackFrame {
    /// Its id (valid while the program is stopped here).
    pub id: i64,
    /// Its function.
    pub name: String,
    /// Its file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Its line (0 without one).
    pub line: i64,
    /// Its column.
    pub column: i64,
    /// Its pc.
    pub instruction_pointer_reference: String,
    /// `subtle` for frames without source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presentation_hint: Option<String>,
}

/// Arguments naming a frame (`scopes`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FrameArgs {
    /// The frame.
    pub frame_id: i64,
}

/// A scope of variables.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// `Locals`, `Arguments`, `Registers`.
    pub name: String,
    /// `locals`, `arguments`, `registers`.
    pub presentation_hint: String,
    /// Where its variables are.
    pub variables_reference: i64,
    /// Its variables are slow to get.
    pub expensive: bool,
}

/// `variables`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VariablesArgs {
    /// The container.
    pub variables_reference: i64,
    /// The first child wanted.
    pub start: Option<i64>,
    /// How many (0 or none: all).
    pub count: Option<i64>,
    /// `indexed` (array elements) or `named` (the rest); none: all.
    pub filter: Option<String>,
}

/// A variable.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its value as text.
    pub value: String,
    /// Its type.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
    /// Where its children are (0: none).
    pub variables_reference: i64,
    /// The expression that evaluates to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluate_name: Option<String>,
    /// How many indexed children it has (arrays).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_variables: Option<i64>,
}

/// `setVariable`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetVariableArgs {
    /// The container of the variable.
    pub variables_reference: i64,
    /// The variable's name there.
    pub name: String,
    /// The new value (an expression).
    pub value: String,
}

/// `evaluate`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EvaluateArgs {
    /// The expression (or, in the REPL, a hindsight command).
    pub expression: String,
    /// The frame to evaluate in (none: the selected one).
    pub frame_id: Option<i64>,
    /// `watch`, `repl`, `hover`, `clipboard`, `variables`.
    pub context: Option<String>,
}

/// `disconnect`'s and `terminate`'s arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DisconnectArgs {
    /// Restart afterwards (the client starts a new session).
    pub restart: Option<bool>,
}

/// The `hindsight/goto` custom request's arguments: exactly one of them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GotoPlaceArgs {
    /// A position as `when` prints it (`12:0x401136:3`).
    pub position: Option<String>,
    /// An event number.
    pub event: Option<u64>,
    /// A bookmark's name.
    pub bookmark: Option<String>,
    /// The start of the recording.
    pub start: Option<bool>,
}

/// The `hindsight/bookmark` custom request's arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BookmarkArgs {
    /// Its name (none: a number).
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_framed_by_their_length() {
        let first = r#"{"seq":1,"type":"request","command":"threads"}"#;
        let text = format!(
            "Content-Length: {}\r\n\r\n{first}Content-Length: 2\r\n\r\n{{}}",
            first.len()
        );
        let mut input = std::io::BufReader::new(text.as_bytes());
        let first = read_message(&mut input).expect("reads").expect("a message");
        let r = Request::parse(&first).expect("a request");
        assert_eq!((r.seq, r.command.as_str()), (1, "threads"));
        assert_eq!(r.arguments, Value::Null);
        let second = read_message(&mut input).expect("reads").expect("a message");
        assert!(Request::parse(&second).is_err(), "not a request");
        assert!(read_message(&mut input).expect("reads").is_none());
    }

    #[test]
    fn bad_headers_are_refused_not_guessed() {
        let mut input = std::io::BufReader::new("Content-Length: x\r\n\r\n".as_bytes());
        assert!(read_message(&mut input).is_err());
        let mut input = std::io::BufReader::new("garbage\r\n\r\n".as_bytes());
        assert!(read_message(&mut input).is_err());
    }

    #[test]
    fn responses_are_numbered_and_name_their_request() {
        #[derive(Clone, Default)]
        struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().expect("lock").extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let out = Shared::default();
        let mut w = Writer::new(Box::new(out.clone()));
        let req = Request::parse(br#"{"seq":7,"type":"request","command":"evaluate"}"#)
            .expect("a request");
        w.respond(&req, Err("No symbol \"y\" in current context.".into()))
            .expect("writes");
        w.event("stopped", serde_json::json!({"reason": "step"}))
            .expect("writes");
        let text = String::from_utf8(out.0.lock().expect("lock").clone()).expect("utf-8");
        let mut input = std::io::BufReader::new(text.as_bytes());
        let r: Value = serde_json::from_slice(&read_message(&mut input).expect("r").expect("m"))
            .expect("json");
        assert_eq!(r["seq"], 1);
        assert_eq!(r["request_seq"], 7);
        assert_eq!(r["success"], false);
        assert_eq!(r["message"], "No symbol \"y\" in current context.");
        let e: Value = serde_json::from_slice(&read_message(&mut input).expect("r").expect("m"))
            .expect("json");
        assert_eq!(
            (e["seq"].as_i64(), e["event"].as_str()),
            (Some(2), Some("stopped"))
        );
    }
}
