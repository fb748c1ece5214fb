//! One script in a QuickJS VM on a thread of its own. The VM has the language's built-ins and
//! nothing else: no module loader, no file, network, process or timer functions. Its only ways
//! out are the four host functions the prelude wraps; tool calls leave as [`Request`]s and
//! come back as [`Reply`]s. The heap is capped, a deadline and an abort interrupt running
//! JavaScript, and a script that waits while nothing can settle its promise ends at once.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Function, Object, Runtime, Value};

const PRELUDE: &str = include_str!("prelude.js");
/// The file name error stacks give the script.
pub const SCRIPT_FILE: &str = "codemode.js";
/// What comes before the script on its first line (28 characters, as pi 1.6's opening).
const SCRIPT_OPENING: &str = "(async (              ) => {";
const PRELUDE_FILE: &str = "codemode-prelude.js";
/// The VM's heap limit.
pub const MEMORY_LIMIT_BYTES: usize = 256 * 1024 * 1024;
/// The native stack QuickJS may use before deep recursion throws a (catchable) RangeError; the
/// thread gets more than that.
const JS_STACK_BYTES: usize = 4 * 1024 * 1024;
const THREAD_STACK_BYTES: usize = 16 * 1024 * 1024;

/// What the script asks of the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `tools.<name>(args)`; `args` is JSON text (`None` for `undefined`).
    Call {
        id: u64,
        name: String,
        args: Option<String>,
    },
    /// A discovery global (`searchTools`, ...) with its arguments as a JSON array.
    Global {
        id: u64,
        name: String,
        args: Option<String>,
    },
}

/// The host's answer to a request, or a nudge to look at the stop flag.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `payload`: the value as JSON text (`None`: `undefined`) or the error message.
    Settle {
        id: u64,
        ok: bool,
        payload: Option<String>,
    },
    Wake,
}

/// One output item, in the order the script made them.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputItem {
    Text { text: String, console: bool },
    Image { data: String, mime_type: String },
}

/// Why a script did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptError {
    /// Thrown in the script: its `Name: message` and stack frames.
    Thrown {
        text: String,
    },
    Timeout(String),
    Aborted(String),
    Sandbox(String),
}

/// How a script ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Completed {
        /// The returned value as text (`None`: nothing returned).
        value: Option<String>,
        /// Store writes in order: `(key, Some(json))` sets, `(key, None)` deletes.
        writes: Vec<(String, Option<String>)>,
    },
    Failed(ScriptError),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScriptResult {
    pub output: Vec<OutputItem>,
    pub ending: Ending,
}

/// What the sandbox needs to start a script.
#[derive(Debug, Clone)]
pub struct ScriptSpec {
    pub code: String,
    /// `[{name, id, description}]` of the callable tools.
    pub tools_json: String,
    /// Names of the global helper functions answered by the host.
    pub globals: Vec<String>,
    /// The store as `{key: json text}`.
    pub store_json: String,
    pub deadline: Option<Instant>,
    /// The script's whole timeout, for the message when it passes.
    pub timeout_ms: Option<u64>,
    pub memory_limit: usize,
}

/// Shared between the host and the VM thread: set to stop the script.
#[derive(Debug, Default)]
pub struct StopFlag(AtomicBool);

impl StopFlag {
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

#[derive(Default)]
struct State {
    output: Vec<OutputItem>,
    /// Requests sent and not yet answered.
    outstanding: usize,
    ending: Option<Ending>,
    /// Requests could not be sent: the host is gone.
    host_gone: bool,
}

/// Start the script on a new thread. Requests go to `requests`; the result arrives once on
/// the returned channel. `on_exit` runs on the thread when the VM is gone (a worker slot's
/// release).
pub fn spawn(
    spec: ScriptSpec,
    requests: tokio::sync::mpsc::Sender<Request>,
    replies: mpsc::Receiver<Reply>,
    stop: Arc<StopFlag>,
    on_exit: Box<dyn FnOnce() + Send>,
) -> std::io::Result<tokio::sync::oneshot::Receiver<ScriptResult>> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("codemode".to_string())
        .stack_size(THREAD_STACK_BYTES)
        .spawn(move || {
            let result = run(spec, requests, replies, stop);
            on_exit();
            let _ = sender.send(result);
        })?;
    Ok(receiver)
}

fn sandbox_failure(message: impl Into<String>) -> ScriptResult {
    ScriptResult {
        output: Vec::new(),
        ending: Ending::Failed(ScriptError::Sandbox(message.into())),
    }
}

fn timeout_text(spec: &ScriptSpec) -> String {
    match spec.timeout_ms {
        Some(ms) => format!("Execution timed out after {ms} ms"),
        None => "Execution timed out".to_string(),
    }
}

const ABORT_TEXT: &str = "The operation was aborted";

/// Run the script to its end on this thread.
pub fn run(
    spec: ScriptSpec,
    requests: tokio::sync::mpsc::Sender<Request>,
    replies: mpsc::Receiver<Reply>,
    stop: Arc<StopFlag>,
) -> ScriptResult {
    let runtime = match Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return sandbox_failure(e.to_string()),
    };
    runtime.set_memory_limit(spec.memory_limit);
    runtime.set_max_stack_size(JS_STACK_BYTES);
    let deadline = spec.deadline;
    let interrupt_stop = Arc::clone(&stop);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        interrupt_stop.is_stopped() || deadline.is_some_and(|d| Instant::now() >= d)
    })));
    let context = match Context::full(&runtime) {
        Ok(context) => context,
        Err(e) => return sandbox_failure(e.to_string()),
    };
    let state = Rc::new(RefCell::new(State::default()));
    let outcome = context.with(|ctx| drive(&ctx, &spec, &requests, &replies, &stop, &state));
    let interrupted = || {
        if stop.is_stopped() {
            Some(ScriptError::Aborted(ABORT_TEXT.to_string()))
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            Some(ScriptError::Timeout(timeout_text(&spec)))
        } else {
            None
        }
    };
    let mut state = state.take();
    let ending = match (state.ending.take(), outcome) {
        // A script that failed after the abort failed because of it (its running calls were
        // cancelled and rejected), so it reads as aborted.
        (Some(Ending::Failed(_)), _) if stop.is_stopped() => Ending::Failed(ScriptError::Aborted(ABORT_TEXT.to_string())),
        // A script that finished keeps its ending even if the deadline passed afterwards.
        (Some(ending), _) => ending,
        (None, Err(DriveError::Thrown(text))) => match interrupted() {
            Some(error) => Ending::Failed(error),
            None => Ending::Failed(ScriptError::Thrown { text }),
        },
        (None, Err(DriveError::Sandbox(text))) => Ending::Failed(ScriptError::Sandbox(text)),
        (None, Err(DriveError::Stalled)) => Ending::Failed(ScriptError::Thrown {
            text: "Error: the script is waiting for a promise that nothing can settle (no tool call is running and there are no timers)".to_string(),
        }),
        (None, Ok(())) => Ending::Failed(interrupted().unwrap_or_else(|| {
            ScriptError::Sandbox("the script ended without a result".to_string())
        })),
    };
    ScriptResult {
        output: state.output,
        ending,
    }
}

enum DriveError {
    /// The VM threw outside the script's own promise (syntax error, interrupt, out of memory).
    Thrown(String),
    Sandbox(String),
    Stalled,
}

/// The text of a pending exception: `Name: message` and its stack.
fn exception_text(ctx: &Ctx<'_>) -> String {
    let value = ctx.catch();
    if let Some(object) = value.as_object() {
        let name: Option<String> = object.get("name").ok();
        let message: Option<String> = object.get("message").ok();
        let stack: Option<String> = object.get("stack").ok();
        let head = match (name, message) {
            (Some(name), Some(message)) if !message.is_empty() => format!("{name}: {message}"),
            (Some(name), _) => name,
            (None, Some(message)) => message,
            (None, None) => "Error".to_string(),
        };
        let frames: Vec<&str> = stack
            .as_deref()
            .unwrap_or_default()
            .lines()
            .filter(|line| !line.trim().is_empty() && !line.contains(PRELUDE_FILE))
            .collect();
        if frames.is_empty() {
            return head;
        }
        return format!("{head}\n{}", frames.join("\n"));
    }
    if let Some(text) = value.as_string().and_then(|s| s.to_string().ok()) {
        return text;
    }
    "Error: the script failed".to_string()
}

fn js_error(ctx: &Ctx<'_>, error: rquickjs::Error) -> DriveError {
    match error {
        rquickjs::Error::Exception => DriveError::Thrown(exception_text(ctx)),
        other => DriveError::Sandbox(other.to_string()),
    }
}

fn host_functions<'js>(
    ctx: &Ctx<'js>,
    requests: &tokio::sync::mpsc::Sender<Request>,
    state: &Rc<RefCell<State>>,
) -> rquickjs::Result<Object<'js>> {
    let host = Object::new(ctx.clone())?;
    let (tx, st) = (requests.clone(), Rc::clone(state));
    host.set(
        "call",
        Function::new(ctx.clone(), move |id: f64, name: String, args: Option<String>| {
            let request = Request::Call {
                id: id as u64,
                name,
                args,
            };
            send(&tx, &st, request);
        })?,
    )?;
    let (tx, st) = (requests.clone(), Rc::clone(state));
    host.set(
        "global",
        Function::new(ctx.clone(), move |id: f64, name: String, args: Option<String>| {
            let request = Request::Global {
                id: id as u64,
                name,
                args,
            };
            send(&tx, &st, request);
        })?,
    )?;
    let st = Rc::clone(state);
    host.set(
        "output",
        Function::new(ctx.clone(), move |kind: String, data: String, mime: Option<String>| {
            let item = match kind.as_str() {
                "image" => OutputItem::Image {
                    data,
                    mime_type: mime.unwrap_or_default(),
                },
                other => OutputItem::Text {
                    text: data,
                    console: other == "console",
                },
            };
            st.borrow_mut().output.push(item);
        })?,
    )?;
    let st = Rc::clone(state);
    host.set(
        "done",
        Function::new(
            ctx.clone(),
            move |ok: bool, payload: Option<String>, writes: Option<String>| {
                let ending = if ok {
                    Ending::Completed {
                        value: payload,
                        writes: parse_writes(writes.as_deref()),
                    }
                } else {
                    Ending::Failed(ScriptError::Thrown {
                        text: thrown_text(payload.as_deref()),
                    })
                };
                let mut st = st.borrow_mut();
                if st.ending.is_none() {
                    st.ending = Some(ending);
                }
            },
        )?,
    )?;
    Ok(host)
}

fn send(tx: &tokio::sync::mpsc::Sender<Request>, state: &Rc<RefCell<State>>, request: Request) {
    let mut state = state.borrow_mut();
    // This is the script's own thread: a script that calls faster than pi runs the calls
    // waits here once the queue is full, so its requests never pile up without bound.
    if tx.blocking_send(request).is_ok() {
        state.outstanding += 1;
    } else {
        state.host_gone = true;
    }
}

/// `[[key, json], [key]]` from the prelude.
fn parse_writes(json: Option<&str>) -> Vec<(String, Option<String>)> {
    let Some(Ok(serde_json::Value::Array(list))) = json.map(serde_json::from_str::<serde_json::Value>) else {
        return Vec::new();
    };
    list.into_iter()
        .filter_map(|pair| {
            let pair = pair.as_array()?.clone();
            let key = pair.first()?.as_str()?.to_string();
            Some((key, pair.get(1).and_then(|v| v.as_str()).map(str::to_string)))
        })
        .collect()
}

/// The error text from the prelude's `{name, message, stack}` JSON.
fn thrown_text(json: Option<&str>) -> String {
    let value: serde_json::Value = json
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or(serde_json::Value::Null);
    if let Some(stack) = value.get("stack").and_then(|s| s.as_str()) {
        return stack.to_string();
    }
    let name = value.get("name").and_then(|s| s.as_str()).unwrap_or("Error");
    match value.get("message").and_then(|s| s.as_str()) {
        Some(message) => format!("{name}: {message}"),
        None => name.to_string(),
    }
}

fn drive(
    ctx: &Ctx<'_>,
    spec: &ScriptSpec,
    requests: &tokio::sync::mpsc::Sender<Request>,
    replies: &mpsc::Receiver<Reply>,
    stop: &StopFlag,
    state: &Rc<RefCell<State>>,
) -> Result<(), DriveError> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.filename = Some(PRELUDE_FILE.to_string());
    let prelude: Function = ctx.eval_with_options(PRELUDE, options).map_err(|e| js_error(ctx, e))?;
    let host = host_functions(ctx, requests, state).map_err(|e| js_error(ctx, e))?;
    let globals = serde_json::to_string(&spec.globals).unwrap_or_else(|_| "[]".to_string());
    let api: Object = prelude
        .call((host, spec.tools_json.as_str(), globals, spec.store_json.as_str()))
        .map_err(|e| js_error(ctx, e))?;
    let settle: Function = api.get("settle").map_err(|e| js_error(ctx, e))?;
    let run: Function = api.get("run").map_err(|e| js_error(ctx, e))?;

    // The script is the body of an async arrow function; its first line stays line 1, and
    // the opening is as long as pi 1.6's (`(async (tools, console) => {`), so the columns in
    // error positions on that line are the same. The globals are not shadowed here.
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.filename = Some(SCRIPT_FILE.to_string());
    let main: Function = ctx
        .eval_with_options(format!("{SCRIPT_OPENING}{}\n}})", spec.code), options)
        .map_err(|e| js_error(ctx, e))?;
    run.call::<_, ()>((main,)).map_err(|e| js_error(ctx, e))?;

    loop {
        while ctx.execute_pending_job() {
            if stop.is_stopped() || spec.deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(());
            }
        }
        if ctx.has_exception() {
            return Err(DriveError::Thrown(exception_text(ctx)));
        }
        let (ended, outstanding, host_gone) = {
            let state = state.borrow();
            (state.ending.is_some(), state.outstanding, state.host_gone)
        };
        if ended || stop.is_stopped() {
            return Ok(());
        }
        if host_gone {
            return Err(DriveError::Sandbox("the host stopped answering".to_string()));
        }
        if outstanding == 0 {
            return Err(DriveError::Stalled);
        }
        let reply = match spec.deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(());
                }
                match replies.recv_timeout(left.min(Duration::from_secs(1))) {
                    Ok(reply) => reply,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        return Err(DriveError::Sandbox("the host stopped answering".to_string()))
                    }
                }
            }
            None => match replies.recv() {
                Ok(reply) => reply,
                Err(_) => return Err(DriveError::Sandbox("the host stopped answering".to_string())),
            },
        };
        if let Reply::Settle { id, ok, payload } = reply {
            state.borrow_mut().outstanding -= 1;
            let payload: Value = match payload {
                Some(text) => rquickjs::String::from_str(ctx.clone(), &text)
                    .map_err(|e| js_error(ctx, e))?
                    .into_value(),
                None => Value::new_undefined(ctx.clone()),
            };
            settle
                .call::<_, ()>((id as f64, ok, payload))
                .map_err(|e| js_error(ctx, e))?;
        }
    }
}
