//! One running host process and the socket to it: spawning, the greeting, requests with ids
//! in both directions, notifications, the host's stdout/stderr, and noticing when it dies.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedReadHalf;
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot, watch};

use crate::error::{HostError, StartError};
use crate::handler::{HostHandler, OutputStream};
use crate::protocol::{Frame, Hello, ToolResult, WireError, PROTOCOL_VERSION};

/// How many of the host's last stderr lines a crash report carries.
const STDERR_TAIL_LINES: usize = 20;

/// Bytes written to the host but not yet taken by its socket. A host that leaves this much
/// unread is not reading at all: it is stopped rather than queued for without end.
const OUTGOING_LIMIT_BYTES: usize = 64 << 20;

/// Partial results of one tool call not yet taken by the session. Each replaces the last on
/// screen, so past this many the newest are dropped until the session catches up; the tool's
/// result always arrives.
pub const TOOL_UPDATE_QUEUE: usize = 256;

/// Events of one extension provider stream not yet taken by the session.
pub const PROVIDER_EVENT_QUEUE: usize = 4096;

type Pending = HashMap<u64, oneshot::Sender<Result<Value, WireError>>>;

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind; keep going.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// State shared by the connection and its reader, writer and watcher tasks.
struct Shared {
    pending: Mutex<Pending>,
    tool_updates: Mutex<HashMap<String, mpsc::Sender<ToolResult>>>,
    /// Where each running provider stream's `provider.event`s go, by stream id. A stream's
    /// deltas cannot be dropped as partial tool results can, and the frame reader must never
    /// wait: a stream that gets [`PROVIDER_EVENT_QUEUE`] events ahead of its reader loses its
    /// route and ends with an error.
    provider_events: Mutex<HashMap<u64, mpsc::Sender<Value>>>,
    stderr_tail: Mutex<VecDeque<String>>,
    /// Set once, when the host is gone, with the reason every later call gets.
    gone: watch::Sender<Option<HostError>>,
}

impl Shared {
    fn mark_gone(&self, error: HostError) {
        self.gone.send_if_modified(|gone| {
            if gone.is_some() {
                return false;
            }
            *gone = Some(error);
            true
        });
        // Dropping the waiters wakes every caller; they read the reason from `gone`.
        lock(&self.pending).clear();
        lock(&self.tool_updates).clear();
        lock(&self.provider_events).clear();
    }

    fn stderr_tail(&self) -> String {
        lock(&self.stderr_tail).iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// What starting a host needs.
pub struct SpawnSpec<'a> {
    pub node: &'a Path,
    pub main: &'a Path,
    pub cwd: &'a Path,
    /// Where Node 22+ keeps compiled code of every module it loads, the host's own included
    /// (`NODE_COMPILE_CACHE`; older Node ignores it).
    pub compile_cache: &'a Path,
    pub connect_timeout: Duration,
}

/// A live host. Dropping it kills the process.
pub struct HostConnection {
    shared: Arc<Shared>,
    outgoing: Outgoing,
    next_id: AtomicU64,
    kill: Mutex<Option<oneshot::Sender<()>>>,
    hello: Hello,
    // Holds the socket's private folder until the host is gone.
    _socket_dir: tempfile::TempDir,
}

/// Longest socket path every Unix takes (`sun_path` holds 104 bytes on macOS, 108 on Linux).
const MAX_SOCKET_PATH: usize = 100;

/// A private folder (mode 0700) for the host's socket: in `preferred` (the temporary folder),
/// or in `/tmp` when that folder is missing, unwritable or so deep that the socket's path
/// would be too long to bind, so a broken `TMPDIR` does not keep extensions from starting.
fn private_socket_folder(preferred: &Path) -> std::io::Result<tempfile::TempDir> {
    let make = |parent: &Path| tempfile::Builder::new().prefix("pi-ext-").tempdir_in(parent);
    let fits = |dir: &tempfile::TempDir| dir.path().join("host.sock").as_os_str().len() <= MAX_SOCKET_PATH;
    match make(preferred) {
        Ok(dir) if fits(&dir) => Ok(dir),
        // When /tmp fails too, the preferred folder's own outcome stands (its error is the
        // one to report).
        first => make(Path::new("/tmp")).or(first),
    }
}

impl HostConnection {
    /// Start the host and wait for its greeting.
    pub async fn spawn(spec: SpawnSpec<'_>, handler: Arc<dyn HostHandler>) -> Result<HostConnection, StartError> {
        let socket_dir = private_socket_folder(&std::env::temp_dir()).map_err(StartError::Socket)?;
        let socket_path: PathBuf = socket_dir.path().join("host.sock");
        let listener = UnixListener::bind(&socket_path).map_err(StartError::Socket)?;

        let mut child = tokio::process::Command::new(spec.node)
            .arg(spec.main)
            .env("PI_EXTENSION_HOST_SOCKET", &socket_path)
            .env("NODE_COMPILE_CACHE", spec.compile_cache)
            .current_dir(spec.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| StartError::Spawn {
                node: spec.node.to_path_buf(),
                source,
            })?;

        let (gone, _) = watch::channel(None);
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            tool_updates: Mutex::new(HashMap::new()),
            provider_events: Mutex::new(HashMap::new()),
            stderr_tail: Mutex::new(VecDeque::new()),
            gone,
        });

        let stdout = child
            .stdout
            .take()
            .map(|s| tokio::spawn(forward_output(s, OutputStream::Stdout, handler.clone(), None)));
        let stderr = child.stderr.take().map(|s| {
            tokio::spawn(forward_output(
                s,
                OutputStream::Stderr,
                handler.clone(),
                Some(shared.clone()),
            ))
        });
        let (kill_tx, kill_rx) = oneshot::channel();
        tokio::spawn(watch_exit(child, kill_rx, stdout, stderr, shared.clone()));

        let mut gone_rx = shared.gone.subscribe();
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted.map_err(StartError::Socket)?.0,
            _ = gone_rx.wait_for(Option::is_some) => {
                return Err(early_exit(&shared));
            }
            _ = tokio::time::sleep(spec.connect_timeout) => {
                let _ = kill_tx.send(());
                return Err(StartError::ConnectTimeout(spec.connect_timeout));
            }
        };
        let (read_half, mut write_half) = accepted.into_split();
        let mut reader = BufReader::new(read_half);

        // The first line is the greeting; check the version before anything else is said.
        let mut line = String::new();
        let greeting = tokio::select! {
            read = reader.read_line(&mut line) => read,
            _ = gone_rx.wait_for(Option::is_some) => return Err(early_exit(&shared)),
            _ = tokio::time::sleep(spec.connect_timeout) => {
                let _ = kill_tx.send(());
                return Err(StartError::ConnectTimeout(spec.connect_timeout));
            }
        };
        let hello = match greeting {
            Ok(n) if n > 0 => parse_hello(&line)?,
            _ => return Err(early_exit(&shared)),
        };
        if hello.protocol_version != PROTOCOL_VERSION {
            let _ = kill_tx.send(());
            return Err(StartError::ProtocolMismatch {
                expected: PROTOCOL_VERSION,
                found: hello.protocol_version,
            });
        }

        let (tx, mut outgoing_rx) = mpsc::unbounded_channel::<String>();
        let outgoing = Outgoing {
            tx,
            queued: Arc::new(AtomicUsize::new(0)),
        };
        let queued = Arc::clone(&outgoing.queued);
        tokio::spawn(async move {
            while let Some(mut line) = outgoing_rx.recv().await {
                let size = line.len();
                line.push('\n');
                let written = write_half.write_all(line.as_bytes()).await;
                queued.fetch_sub(size, Ordering::Relaxed);
                if written.is_err() {
                    break;
                }
            }
        });
        tokio::spawn(read_frames(reader, shared.clone(), outgoing.clone(), handler));

        Ok(HostConnection {
            shared,
            outgoing,
            next_id: AtomicU64::new(1),
            kill: Mutex::new(Some(kill_tx)),
            hello,
            _socket_dir: socket_dir,
        })
    }

    /// The host's greeting (its node version and pid).
    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// Why the host is gone, if it is.
    pub fn gone(&self) -> Option<HostError> {
        self.shared.gone.borrow().clone()
    }

    /// Send a notification (no answer).
    pub fn notify(&self, method: &str, params: Value) -> Result<(), HostError> {
        if let Some(error) = self.gone() {
            return Err(error);
        }
        let frame = Frame::Notification {
            method: method.to_string(),
            params,
        };
        self.write(method, frame.to_line())
    }

    /// Send a request and wait for its answer, at most `timeout` when given.
    pub async fn request(&self, method: &str, params: Value, timeout: Option<Duration>) -> Result<Value, HostError> {
        let (id, answer) = self.send_request(method, params)?;
        let outcome = match timeout {
            Some(after) => match tokio::time::timeout(after, answer).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    lock(&self.shared.pending).remove(&id);
                    return Err(HostError::Timeout {
                        method: method.to_string(),
                        after,
                    });
                }
            },
            None => answer.await,
        };
        self.finish(method, outcome)
    }

    /// Register a request and write it; the receiver yields its answer.
    pub fn send_request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<(u64, oneshot::Receiver<Result<Value, WireError>>), HostError> {
        if let Some(error) = self.gone() {
            return Err(error);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, tx);
        let frame = Frame::Request {
            id,
            method: method.to_string(),
            params,
        };
        if let Err(error) = self.write(method, frame.to_line()) {
            lock(&self.shared.pending).remove(&id);
            return Err(error);
        }
        Ok((id, rx))
    }

    /// Queue one line for the host. A host that stopped reading is stopped once its unread
    /// bytes pass the limit.
    fn write(&self, method: &str, line: String) -> Result<(), HostError> {
        match self.outgoing.send(line) {
            Ok(()) => Ok(()),
            Err(Unsent::Closed) => Err(self.gone().unwrap_or(HostError::NotRunning)),
            Err(Unsent::Full) => {
                let error = HostError::Hung {
                    method: method.to_string(),
                };
                self.kill(error.clone());
                Err(error)
            }
        }
    }

    /// Forget a request whose answer is no longer wanted.
    pub fn forget(&self, id: u64) {
        lock(&self.shared.pending).remove(&id);
    }

    /// Turn a received answer (or a dropped waiter) into the caller's result.
    pub fn finish(
        &self,
        method: &str,
        outcome: Result<Result<Value, WireError>, oneshot::error::RecvError>,
    ) -> Result<Value, HostError> {
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(HostError::Remote {
                method: method.to_string(),
                code: error.code,
                message: error.message,
            }),
            Err(_) => Err(self.gone().unwrap_or(HostError::NotRunning)),
        }
    }

    /// Route `provider.event` notifications of `stream_id` to `events` until
    /// [`Self::unroute_provider_events`].
    pub fn route_provider_events(&self, stream_id: u64, events: mpsc::Sender<Value>) {
        lock(&self.shared.provider_events).insert(stream_id, events);
    }

    pub fn unroute_provider_events(&self, stream_id: u64) {
        lock(&self.shared.provider_events).remove(&stream_id);
    }

    /// Route `tool.update` notifications for `call_id` to `updates` until [`Self::unroute`].
    pub fn route_updates(&self, call_id: &str, updates: mpsc::Sender<ToolResult>) {
        lock(&self.shared.tool_updates).insert(call_id.to_string(), updates);
    }

    pub fn unroute(&self, call_id: &str) {
        lock(&self.shared.tool_updates).remove(call_id);
    }

    /// Wait until the host is gone.
    pub async fn closed(&self) -> HostError {
        let mut gone = self.shared.gone.subscribe();
        let reason = match gone.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone(),
            Err(_) => None,
        };
        reason.unwrap_or(HostError::NotRunning)
    }

    /// Stop the process now; every waiting call fails with `reason`.
    pub fn kill(&self, reason: HostError) {
        self.shared.mark_gone(reason);
        if let Some(kill) = lock(&self.kill).take() {
            let _ = kill.send(());
        }
    }
}

impl Drop for HostConnection {
    fn drop(&mut self) {
        if let Some(kill) = lock(&self.kill).take() {
            let _ = kill.send(());
        }
    }
}

fn parse_hello(line: &str) -> Result<Hello, StartError> {
    match Frame::parse(line.trim_end()) {
        Ok(Frame::Notification { method, params }) if method == "hello" => {
            serde_json::from_value(params).map_err(|e| StartError::BadGreeting(e.to_string()))
        }
        Ok(other) => Err(StartError::BadGreeting(format!(
            "expected hello, got {}",
            other.to_line()
        ))),
        Err(error) => Err(StartError::BadGreeting(error)),
    }
}

fn early_exit(shared: &Shared) -> StartError {
    match shared.gone.borrow().clone() {
        Some(HostError::Exited { status, stderr }) => StartError::ExitedEarly { status, stderr },
        _ => StartError::ExitedEarly {
            status: "closed the connection".into(),
            stderr: shared.stderr_tail(),
        },
    }
}

/// Forward what the host prints as it arrives (an escape sequence without a newline, say, is
/// not held back until one comes); keep the last stderr lines for crash reports.
async fn forward_output(
    stream: impl AsyncRead + Unpin,
    which: OutputStream,
    handler: Arc<dyn HostHandler>,
    tail: Option<Arc<Shared>>,
) {
    let mut stream = stream;
    let mut buf = vec![0u8; 16 * 1024];
    // Bytes of a UTF-8 character split across two reads, and the current stderr line.
    let mut carry: Vec<u8> = Vec::new();
    let mut line = String::new();
    loop {
        let read = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        carry.extend_from_slice(&buf[..read]);
        let valid = match std::str::from_utf8(&carry) {
            Ok(text) => text.len(),
            // An incomplete character at the end waits for the next read.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => carry.len(),
        };
        let text = String::from_utf8_lossy(&carry[..valid]).into_owned();
        carry.drain(..valid);
        if text.is_empty() {
            continue;
        }
        if let Some(shared) = &tail {
            keep_tail(shared, &mut line, &text);
        }
        handler.output(which, &text);
    }
    if !carry.is_empty() {
        handler.output(which, &String::from_utf8_lossy(&carry));
    }
    if let Some(shared) = &tail {
        if !line.is_empty() {
            push_tail(shared, std::mem::take(&mut line));
        }
    }
}

fn keep_tail(shared: &Shared, line: &mut String, text: &str) {
    let mut rest = text;
    while let Some(end) = rest.find('\n') {
        line.push_str(&rest[..end]);
        push_tail(shared, std::mem::take(line));
        rest = &rest[end + 1..];
    }
    line.push_str(rest);
}

fn push_tail(shared: &Shared, line: String) {
    let mut tail = lock(&shared.stderr_tail);
    if tail.len() == STDERR_TAIL_LINES {
        tail.pop_front();
    }
    tail.push_back(line);
}

/// Wait for the process to end (or kill it on request), then report it gone with its status.
async fn watch_exit(
    mut child: tokio::process::Child,
    kill: oneshot::Receiver<()>,
    stdout: Option<tokio::task::JoinHandle<()>>,
    stderr: Option<tokio::task::JoinHandle<()>>,
    shared: Arc<Shared>,
) {
    let status = tokio::select! {
        status = child.wait() => status,
        _ = kill => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    // Let the output readers drain what the host printed last (bounded: a grandchild may hold
    // the pipes open).
    for task in [stdout, stderr].into_iter().flatten() {
        let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
    }
    let status = match status {
        Ok(status) => describe_status(status),
        Err(error) => format!("could not wait for it: {error}"),
    };
    shared.mark_gone(HostError::Exited {
        status,
        stderr: shared.stderr_tail(),
    });
}

fn describe_status(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "unknown status".into(),
    }
}

/// The writer task's queue, counted in bytes.
#[derive(Clone)]
struct Outgoing {
    tx: mpsc::UnboundedSender<String>,
    queued: Arc<AtomicUsize>,
}

enum Unsent {
    Closed,
    Full,
}

impl Outgoing {
    fn send(&self, line: String) -> Result<(), Unsent> {
        let size = line.len();
        if self.queued.fetch_add(size, Ordering::Relaxed) + size > OUTGOING_LIMIT_BYTES {
            self.queued.fetch_sub(size, Ordering::Relaxed);
            return Err(Unsent::Full);
        }
        self.tx.send(line).map_err(|_| {
            self.queued.fetch_sub(size, Ordering::Relaxed);
            Unsent::Closed
        })
    }
}

/// Read frames until the socket closes: answers go to their waiters, host requests to the
/// handler (each in its own task, so a dialog cannot hold up the rest), notifications in order.
async fn read_frames(
    reader: BufReader<OwnedReadHalf>,
    shared: Arc<Shared>,
    outgoing: Outgoing,
    handler: Arc<dyn HostHandler>,
) {
    let mut lines = reader.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let frame = match Frame::parse(&line) {
            Ok(frame) => frame,
            Err(error) => {
                handler.notification("protocolError", serde_json::json!({ "message": error }));
                continue;
            }
        };
        match frame {
            Frame::Response { id, outcome } => {
                if let Some(waiter) = lock(&shared.pending).remove(&id) {
                    let _ = waiter.send(outcome);
                }
            }
            Frame::Request { id, method, params } => {
                let handler = handler.clone();
                let outgoing = outgoing.clone();
                tokio::spawn(async move {
                    let outcome = handler.request(&method, params).await.map_err(|message| WireError {
                        code: "failed".into(),
                        message,
                        stack: None,
                    });
                    let _ = outgoing.send(Frame::Response { id, outcome }.to_line());
                });
            }
            Frame::Notification { method, params } => route_notification(&shared, &handler, &method, params),
        }
    }
    // The socket closed. The exit watcher reports the status; if the process lingers without
    // its connection it is of no use, so make sure it ends.
    let shared_for_kill = shared.clone();
    tokio::spawn(async move {
        let mut gone = shared_for_kill.gone.subscribe();
        if tokio::time::timeout(Duration::from_secs(2), gone.wait_for(Option::is_some))
            .await
            .is_err()
        {
            shared_for_kill.mark_gone(HostError::Exited {
                status: "closed the connection".into(),
                stderr: shared_for_kill.stderr_tail(),
            });
        }
    });
}

fn route_notification(shared: &Shared, handler: &Arc<dyn HostHandler>, method: &str, params: Value) {
    match method {
        "tool.update" => {
            let call_id = params.get("callId").and_then(Value::as_str).unwrap_or("");
            let partial = params
                .get("partialResult")
                .cloned()
                .and_then(|v| serde_json::from_value::<ToolResult>(v).ok());
            if let (Some(sender), Some(partial)) = (lock(&shared.tool_updates).get(call_id), partial) {
                // Never wait here: this task reads every frame, the answers included.
                let _ = sender.try_send(partial);
            }
        }
        "provider.event" => {
            let stream_id = params.get("streamId").and_then(Value::as_u64).unwrap_or(0);
            let mut routes = lock(&shared.provider_events);
            if let (Some(sender), Some(event)) = (routes.get(&stream_id), params.get("event")) {
                if let Err(mpsc::error::TrySendError::Full(_)) = sender.try_send(event.clone()) {
                    // Dropping the route closes the stream's queue: its reader ends it.
                    routes.remove(&stream_id);
                }
            }
        }
        "extensionError" => match serde_json::from_value(params) {
            Ok(error) => handler.extension_error(error),
            Err(error) => handler.notification(
                "protocolError",
                serde_json::json!({ "message": format!("unreadable extensionError: {error}") }),
            ),
        },
        _ => handler.notification(method, params),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_folder_falls_back_to_tmp_when_the_temporary_folder_is_unusable() {
        // A missing folder (a TMPDIR pointing nowhere).
        let missing = private_socket_folder(Path::new("/nonexistent/pi-ext-test")).unwrap();
        assert!(missing.path().starts_with("/tmp"), "{:?}", missing.path());
        // A folder so deep that the socket's path could not be bound.
        let base = tempfile::tempdir().unwrap();
        let deep = base.path().join("d".repeat(120));
        std::fs::create_dir(&deep).unwrap();
        let fallback = private_socket_folder(&deep).unwrap();
        assert!(fallback.path().starts_with("/tmp"), "{:?}", fallback.path());
        assert!(fallback.path().join("host.sock").as_os_str().len() <= MAX_SOCKET_PATH);
        // A usable folder is used as given.
        let usable = private_socket_folder(base.path()).unwrap();
        assert!(usable.path().starts_with(base.path()));
        std::os::unix::net::UnixListener::bind(usable.path().join("host.sock")).unwrap();
    }

    #[test]
    fn the_outgoing_queue_refuses_what_would_pass_its_byte_limit_and_counts_back() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let outgoing = Outgoing {
            tx,
            queued: Arc::new(AtomicUsize::new(0)),
        };
        assert!(outgoing.send("x".repeat(1024)).is_ok());
        assert_eq!(outgoing.queued.load(Ordering::Relaxed), 1024);
        // The host reads nothing: a line past the limit is refused, and nothing is counted for it.
        assert!(matches!(
            outgoing.send("y".repeat(OUTGOING_LIMIT_BYTES)),
            Err(Unsent::Full)
        ));
        assert_eq!(outgoing.queued.load(Ordering::Relaxed), 1024);
        assert_eq!(rx.try_recv().map(|l| l.len()).ok(), Some(1024));
        drop(rx);
        assert!(matches!(outgoing.send("z".into()), Err(Unsent::Closed)));
        assert_eq!(outgoing.queued.load(Ordering::Relaxed), 1024);
    }
}
