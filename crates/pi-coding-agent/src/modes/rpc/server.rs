//! The RPC loop: read command lines, run each against the backend (overlapping), write
//! responses and events through one ordered output, and shut down cleanly at EOF.

use std::any::Any;
use std::future::Future;
use std::io;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;

use super::backend::{RpcBackend, RpcError, RpcResult};
use super::extension_ui::ExtensionUi;
use super::framing::LineReader;
use super::protocol::{parse_line, CommandError, Envelope, Incoming, RpcCommand, RpcResponse};
use super::types::{
    CommandList, ExportedPath, ForkMessages, LastAssistantText, ModelList, PromptRequest, ThinkingLevelResult,
};
use crate::modes::output::{LineOutput, LineWriter};

/// One RPC session over a pair of byte streams (stdin/stdout in `pi --mode rpc`).
///
/// Build it first, hand [`output`](Self::output) (the event sink) and
/// [`extension_ui`](Self::extension_ui) to the runtime, then [`run`](Self::run) it.
pub struct RpcServer {
    output: LineOutput,
    writer: LineWriter,
    ui: ExtensionUi,
}

type Pending = Pin<Box<dyn Future<Output = Option<RpcResponse>> + Send>>;

impl RpcServer {
    /// Start the output writer over `sink`.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(sink: W) -> Self {
        let (output, writer) = LineWriter::spawn(sink);
        let ui = ExtensionUi::new(output.clone());
        Self { output, writer, ui }
    }

    /// The sink for events (serialized `AgentSessionEvent`s, one JSON object each, the same
    /// lines JSON mode prints). Records share one queue with responses, so an event sent
    /// before a backend call returns is written before that call's response.
    pub fn output(&self) -> LineOutput {
        self.output.clone()
    }

    /// The UI context for extensions (`ctx.ui` with `hasUI === true`).
    pub fn extension_ui(&self) -> ExtensionUi {
        self.ui.clone()
    }

    /// Copy events from a channel into the output. Ordering against responses is only as good
    /// as the forwarding task's progress; prefer sending through [`output`](Self::output).
    pub fn forward_events(&self, mut events: mpsc::Receiver<String>) -> JoinHandle<()> {
        let output = self.output.clone();
        tokio::spawn(async move {
            while let Some(line) = events.recv().await {
                if !output.send_line(line).await {
                    break;
                }
            }
        })
    }

    /// Serve until `input` ends (or an extension asks for shutdown): every owed response is
    /// written, then [`RpcBackend::shutdown`] runs, then the output is flushed and closed.
    ///
    /// Lines are handled in arrival order up to their first await, so a `get_state` sent after
    /// `set_thinking_level` sees the new level, while a slow command (bash, compact, a prompt's
    /// preflight) does not hold up the ones behind it. A prompt that already answered may still
    /// be running at EOF; it keeps running while `shutdown` runs and is aborted once it returns.
    pub async fn run<B: RpcBackend, R: AsyncRead + Unpin>(self, backend: Arc<B>, input: R) -> io::Result<()> {
        let mut reader = LineReader::new(input);
        let mut in_flight: FuturesUnordered<Flight> = FuturesUnordered::new();
        let owed = Owed::default();
        let mut input_open = true;
        let mut read_error: Option<io::Error> = None;
        loop {
            if !input_open && owed.is_zero() {
                break;
            }
            tokio::select! {
                line = reader.next_line(), if input_open => match line {
                    Ok(Some(line)) => {
                        if let Some(response) = self.accept(&backend, &line, &mut in_flight, &owed).await {
                            self.output.send(&response).await;
                            owed.done();
                        }
                        if backend.shutdown_requested() {
                            input_open = false;
                        }
                    }
                    Ok(None) => input_open = false,
                    // A record past the size limit was skipped: say so, and read on.
                    Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                        let response = RpcResponse::err(None, Some(Value::String("parse".into())), e.to_string());
                        self.output.send(&response).await;
                    }
                    Err(e) => {
                        read_error = Some(e);
                        input_open = false;
                    }
                },
                Some(response) = in_flight.next() => {
                    if let Some(response) = response {
                        self.output.send(&response).await;
                        owed.done();
                    }
                    if backend.shutdown_requested() {
                        input_open = false;
                    }
                }
                // A prompt answered from inside its still-running future.
                () = owed.changed.notified(), if !input_open => {}
                // `ctx.shutdown()` while no command is answered: stop reading now.
                () = backend.shutdown_wanted(), if input_open && owed.is_zero() => input_open = false,
            }
        }
        if backend.shutdown_requested() {
            // As pi: a requested shutdown lets the active run settle first (a prompt's
            // command finishes when its run, retries included, has settled).
            while let Some(response) = in_flight.next().await {
                if let Some(response) = response {
                    self.output.send(&response).await;
                }
            }
        }
        // Keep polling what still runs (a prompt's run winding down on abort) while the
        // backend disposes of itself.
        let shutdown = backend.shutdown();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                Some(response) = in_flight.next() => {
                    if let Some(response) = response {
                        self.output.send(&response).await;
                    }
                }
            }
        }
        drop(in_flight);
        let written = self.writer.close().await;
        match read_error {
            Some(e) => Err(e),
            None => written,
        }
    }

    /// Parse one line and start its command. A response that is ready at once comes back
    /// directly (and is owed); otherwise the command joins `in_flight`.
    async fn accept<B: RpcBackend>(
        &self,
        backend: &Arc<B>,
        line: &str,
        in_flight: &mut FuturesUnordered<Flight>,
        owed: &Owed,
    ) -> Option<RpcResponse> {
        let envelope = match parse_line(line) {
            Incoming::Malformed(response) => {
                owed.add();
                return Some(response);
            }
            Incoming::UiResponse(answer) => {
                self.ui.resolve(answer);
                return None;
            }
            Incoming::Command(envelope) => envelope,
        };
        owed.add();
        let preflight = Preflight {
            inner: Some(PreflightInner {
                answered: Arc::default(),
                id: envelope.id.clone(),
                output: self.output.clone(),
                owed: owed.clone(),
            }),
        };
        // A panicking backend call answers like a thrown exception in pi: an error response
        // with the id and command. The server itself lives on.
        let guard = preflight.share();
        let (id, type_value) = (envelope.id.clone(), envelope.type_value.clone());
        let work = AssertUnwindSafe(handle(Arc::clone(backend), envelope, preflight))
            .catch_unwind()
            .map(move |outcome| match outcome {
                Ok(response) => response,
                Err(payload) => guard
                    .claim()
                    .then(|| RpcResponse::err(id, type_value, panic_text(payload.as_ref()))),
            });
        let mut pending: Pending = Box::pin(work);
        // Run the command up to its first real wait before reading the next line, as pi's
        // event loop does; then let it go on as its own task. `None` means its preflight
        // answered already.
        match futures::poll!(pending.as_mut()) {
            Poll::Ready(response) => response,
            Poll::Pending => {
                in_flight.push(Flight(tokio::spawn(pending)));
                None
            }
        }
    }
}

/// A command running as its own task; dropping it aborts the task.
struct Flight(JoinHandle<Option<RpcResponse>>);

impl Future for Flight {
    type Output = Option<RpcResponse>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // A join error is only possible after an abort, i.e. after shutdown.
        Pin::new(&mut self.0).poll(cx).map(Result::ok).map(Option::flatten)
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "command failed".to_string()
    }
}

/// Responses the client is still owed; the loop may end only at zero.
#[derive(Clone, Default)]
struct Owed {
    count: Arc<AtomicUsize>,
    changed: Arc<Notify>,
}

impl Owed {
    fn add(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    fn done(&self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
        self.changed.notify_one();
    }

    fn is_zero(&self) -> bool {
        self.count.load(Ordering::SeqCst) == 0
    }
}

/// What became of a prompt, steer or follow-up (pi 1.6's `data.disposition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// A run started (wait for `agent_settled`).
    Started,
    /// It waits in a queue of the running agent.
    Queued,
    /// An extension consumed it; no run follows.
    Handled,
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Started => "started",
            Disposition::Queued => "queued",
            Disposition::Handled => "handled",
        }
    }

    fn data(self) -> Value {
        serde_json::json!({ "disposition": self.as_str() })
    }
}

/// The end of a prompt's preflight: [`succeed`](Self::succeed) writes the `prompt` success
/// response at once, so it precedes every event the run emits afterwards.
pub struct Preflight {
    inner: Option<PreflightInner>,
}

#[derive(Clone)]
struct PreflightInner {
    /// Set by whoever answers first: this handle or the command's completion.
    answered: Arc<AtomicBool>,
    id: Option<Value>,
    output: LineOutput,
    owed: Owed,
}

impl Preflight {
    /// A preflight nobody listens to (prompts outside RPC mode).
    pub fn none() -> Self {
        Self { inner: None }
    }

    /// Preflight passed and the run started: answer `success:true` with
    /// `data.disposition:"started"` now. Later calls, and the prompt future's completion,
    /// write nothing more.
    pub async fn succeed(&self) {
        self.succeed_with(Disposition::Started).await;
    }

    /// Preflight passed: answer `success:true` with what became of the prompt.
    pub async fn succeed_with(&self, disposition: Disposition) {
        let Some(inner) = &self.inner else { return };
        if inner.answered.swap(true, Ordering::SeqCst) {
            return;
        }
        let response = RpcResponse {
            data: Some(disposition.data()),
            ..RpcResponse::ok(inner.id.clone(), "prompt")
        };
        inner.output.send(&response).await;
        inner.owed.done();
    }

    /// `bash_execution_update {id?, delta}` lines for a `bash` command's output chunks (a
    /// full output queue drops a chunk rather than stall the command; the response holds
    /// the whole output).
    fn bash_updates(&self) -> super::backend::BashDeltaFn {
        let target = self.inner.as_ref().map(|i| (i.output.clone(), i.id.clone()));
        Box::new(move |delta: &str| {
            let Some((output, id)) = &target else { return };
            let mut line = serde_json::Map::new();
            line.insert("type".into(), Value::from("bash_execution_update"));
            if let Some(id) = id {
                line.insert("id".into(), id.clone());
            }
            line.insert("delta".into(), Value::from(delta));
            output.try_send_line(Value::Object(line).to_string());
        })
    }

    fn share(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }

    /// Claim the answer for the command's completion; false if preflight already answered.
    fn claim(&self) -> bool {
        self.inner
            .as_ref()
            .is_none_or(|inner| !inner.answered.swap(true, Ordering::SeqCst))
    }
}

/// The response to one parsed command, or `None` when its preflight already answered.
async fn handle<B: RpcBackend + ?Sized>(
    backend: Arc<B>,
    envelope: Envelope,
    preflight: Preflight,
) -> Option<RpcResponse> {
    let Envelope {
        id,
        type_value,
        command,
    } = envelope;
    let command = match command {
        Ok(command) => command,
        Err(CommandError::Unknown(text)) => return Some(RpcResponse::unknown(id, type_value, &text)),
        Err(CommandError::Invalid(message)) => return Some(RpcResponse::err(id, type_value, message)),
    };
    let name = command.type_name();
    let result = match command {
        RpcCommand::Prompt {
            message,
            images,
            streaming_behavior,
        } => {
            let request = PromptRequest {
                message,
                images,
                streaming_behavior,
            };
            // Answered here only when preflight did not answer: nothing started (an extension
            // command or input handler took the text).
            backend
                .prompt(request, preflight.share())
                .await
                .map(|()| Some(Disposition::Handled.data()))
        }
        RpcCommand::Bash { command } => {
            let on_delta = preflight.bash_updates();
            backend.bash(command, on_delta).await.and_then(data)
        }
        other => execute(&*backend, other).await,
    };
    if !preflight.claim() {
        // pi reports failures after preflight only through events.
        return None;
    }
    Some(match result {
        Ok(None) => RpcResponse::ok(id, name),
        Ok(Some(data)) => RpcResponse {
            data: Some(data),
            ..RpcResponse::ok(id, name)
        },
        Err(e) => RpcResponse::err(id, Some(Value::String(name.into())), e.to_string()),
    })
}

fn data<T: serde::Serialize>(value: T) -> RpcResult<Option<Value>> {
    serde_json::to_value(value)
        .map(Some)
        .map_err(|e| RpcError::new(e.to_string()))
}

/// Run one command; `Ok(None)` is a success without `data`.
async fn execute<B: RpcBackend + ?Sized>(b: &B, command: RpcCommand) -> RpcResult<Option<Value>> {
    match command {
        // Dispatched by `handle`, which owns the preflight.
        RpcCommand::Prompt { .. } => Err(RpcError::new("prompt needs a preflight")),
        RpcCommand::Steer { message, images } => {
            b.steer(message, images).await?;
            Ok(Some(Disposition::Queued.data()))
        }
        RpcCommand::FollowUp { message, images } => {
            b.follow_up(message, images).await?;
            Ok(Some(Disposition::Queued.data()))
        }
        RpcCommand::Abort => b.abort().await.map(|()| None),
        RpcCommand::NewSession { parent_session } => data(b.new_session(parent_session).await?),
        RpcCommand::GetState => data(b.state().await?),
        RpcCommand::SetModel { provider, model_id } => {
            let models = b.available_models().await?;
            let Some(model) = models.into_iter().find(|m| m.provider == provider && m.id == model_id) else {
                return Err(RpcError::new(format!("Model not found: {provider}/{model_id}")));
            };
            b.set_model(model.clone()).await?;
            data(model)
        }
        // `null` data when there is nothing to cycle.
        RpcCommand::CycleModel => data(b.cycle_model().await?),
        RpcCommand::GetAvailableModels => data(ModelList {
            models: b.available_models().await?,
        }),
        RpcCommand::SetThinkingLevel { level } => b.set_thinking_level(level).await.map(|()| None),
        RpcCommand::CycleThinkingLevel => data(
            b.cycle_thinking_level()
                .await?
                .map(|level| ThinkingLevelResult { level }),
        ),
        RpcCommand::SetSteeringMode { mode } => b.set_steering_mode(mode).await.map(|()| None),
        RpcCommand::SetFollowUpMode { mode } => b.set_follow_up_mode(mode).await.map(|()| None),
        RpcCommand::Compact { custom_instructions } => data(b.compact(custom_instructions).await?),
        RpcCommand::SetAutoCompaction { enabled } => b.set_auto_compaction(enabled).await.map(|()| None),
        RpcCommand::SetAutoRetry { enabled } => b.set_auto_retry(enabled).await.map(|()| None),
        RpcCommand::AbortRetry => b.abort_retry().await.map(|()| None),
        RpcCommand::Bash { .. } => Err(RpcError::new("bash is dispatched with its output updates")),
        RpcCommand::AbortBash => b.abort_bash().await.map(|()| None),
        RpcCommand::GetSessionStats => data(b.session_stats().await?),
        RpcCommand::ExportHtml { output_path } => data(ExportedPath {
            path: b.export_html(output_path).await?,
        }),
        RpcCommand::SwitchSession { session_path } => data(b.switch_session(session_path).await?),
        RpcCommand::Fork { entry_id } => data(b.fork(entry_id).await?),
        RpcCommand::Clone => data(b.clone_session().await?),
        RpcCommand::GetForkMessages => data(ForkMessages {
            messages: b.fork_messages().await?,
        }),
        RpcCommand::GetLastAssistantText => data(LastAssistantText {
            text: b.last_assistant_text().await?,
        }),
        RpcCommand::SetSessionName { name } => {
            let name = js_trim(&name);
            if name.is_empty() {
                return Err(RpcError::new("Session name cannot be empty"));
            }
            b.set_session_name(name.to_string()).await.map(|()| None)
        }
        // Moved into the response, not serialized a second time: the transcript is the one
        // large answer of the protocol.
        RpcCommand::GetMessages => {
            let mut answer = serde_json::Map::new();
            answer.insert("messages".into(), Value::Array(b.messages().await?));
            Ok(Some(Value::Object(answer)))
        }
        RpcCommand::GetCommands => data(CommandList {
            commands: b.commands().await?,
        }),
        RpcCommand::ClearQueue => {
            let (steering, follow_up) = b.clear_queue().await?;
            Ok(Some(serde_json::json!({"steering": steering, "followUp": follow_up})))
        }
        RpcCommand::GetAvailableThinkingLevels => {
            let levels: Vec<&str> = b
                .available_thinking_levels()
                .await?
                .into_iter()
                .map(pi_ai::ThinkingLevel::as_str)
                .collect();
            Ok(Some(serde_json::json!({ "levels": levels })))
        }
        RpcCommand::GetEntries { since } => {
            let (entries, leaf_id) = b.entries(since).await?;
            Ok(Some(serde_json::json!({"entries": entries, "leafId": leaf_id})))
        }
        RpcCommand::GetTree => {
            let (tree, leaf_id) = b.tree().await?;
            Ok(Some(serde_json::json!({"tree": tree, "leafId": leaf_id})))
        }
    }
}

/// JavaScript's `String.prototype.trim`: Unicode white space plus the BOM.
fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}
