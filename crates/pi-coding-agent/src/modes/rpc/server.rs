//! The RPC loop: read command lines, run each against the backend (overlapping), write
//! responses and events through one ordered output, and shut down cleanly at EOF.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::backend::{RpcBackend, RpcError, RpcResult};
use super::extension_ui::ExtensionUi;
use super::framing::{LineReader, OutputWriter, RpcOutput};
use super::protocol::{parse_line, CommandError, Envelope, Incoming, RpcCommand, RpcResponse};
use super::types::{
    CommandList, ExportedPath, ForkMessages, LastAssistantText, MessageList, ModelList, PromptRequest,
    ThinkingLevelResult,
};

/// One RPC session over a pair of byte streams (stdin/stdout in `pi --mode rpc`).
///
/// Build it first, hand [`output`](Self::output) (the event sink) and
/// [`extension_ui`](Self::extension_ui) to the runtime, then [`run`](Self::run) it.
pub struct RpcServer {
    output: RpcOutput,
    writer: OutputWriter,
    ui: ExtensionUi,
}

type Pending = Pin<Box<dyn Future<Output = RpcResponse> + Send>>;

impl RpcServer {
    /// Start the output writer over `sink`.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(sink: W) -> Self {
        let (output, writer) = OutputWriter::spawn(sink);
        let ui = ExtensionUi::new(output.clone());
        Self { output, writer, ui }
    }

    /// The sink for events (serialized `AgentSessionEvent`s, one JSON object each, the same
    /// lines JSON mode prints). Records share one queue with responses, so an event sent
    /// before a backend call returns is written before that call's response.
    pub fn output(&self) -> RpcOutput {
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
    /// preflight) does not hold up the ones behind it.
    pub async fn run<B: RpcBackend, R: AsyncRead + Unpin>(self, backend: Arc<B>, input: R) -> io::Result<()> {
        let mut reader = LineReader::new(input);
        let mut in_flight: FuturesUnordered<Pending> = FuturesUnordered::new();
        let mut input_open = true;
        let mut read_error: Option<io::Error> = None;
        while input_open || !in_flight.is_empty() {
            tokio::select! {
                line = reader.next_line(), if input_open => match line {
                    Ok(Some(line)) => {
                        if let Some(response) = self.accept(&backend, &line, &mut in_flight).await {
                            self.output.send(&response).await;
                            if backend.shutdown_requested() {
                                input_open = false;
                            }
                        }
                    }
                    Ok(None) => input_open = false,
                    Err(e) => {
                        read_error = Some(e);
                        input_open = false;
                    }
                },
                Some(response) = in_flight.next() => {
                    self.output.send(&response).await;
                    if backend.shutdown_requested() {
                        input_open = false;
                    }
                }
            }
        }
        backend.shutdown().await;
        let written = self.writer.close().await;
        match read_error {
            Some(e) => Err(e),
            None => written,
        }
    }

    /// Parse one line and start its command. A response that is ready at once comes back
    /// directly; otherwise the command joins `in_flight`.
    async fn accept<B: RpcBackend>(
        &self,
        backend: &Arc<B>,
        line: &str,
        in_flight: &mut FuturesUnordered<Pending>,
    ) -> Option<RpcResponse> {
        let envelope = match parse_line(line) {
            Incoming::Malformed(response) => return Some(response),
            Incoming::UiResponse(answer) => {
                self.ui.resolve(answer);
                return None;
            }
            Incoming::Command(envelope) => envelope,
        };
        let mut pending: Pending = Box::pin(handle(Arc::clone(backend), envelope));
        // Run the command up to its first real wait before reading the next line, as pi's
        // event loop does.
        match futures::poll!(pending.as_mut()) {
            Poll::Ready(response) => Some(response),
            Poll::Pending => {
                in_flight.push(pending);
                None
            }
        }
    }
}

/// The response to one parsed command.
pub async fn handle<B: RpcBackend + ?Sized>(backend: Arc<B>, envelope: Envelope) -> RpcResponse {
    let Envelope {
        id,
        type_value,
        command,
    } = envelope;
    let command = match command {
        Ok(command) => command,
        Err(CommandError::Unknown(text)) => return RpcResponse::unknown(type_value, &text),
        Err(CommandError::Invalid(message)) => return RpcResponse::err(id, type_value, message),
    };
    let name = command.type_name();
    match execute(&*backend, command).await {
        Ok(None) => RpcResponse::ok(id, name),
        Ok(Some(data)) => RpcResponse {
            data: Some(data),
            ..RpcResponse::ok(id, name)
        },
        Err(e) => RpcResponse::err(id, Some(Value::String(name.into())), e.0),
    }
}

fn data<T: serde::Serialize>(value: T) -> RpcResult<Option<Value>> {
    serde_json::to_value(value)
        .map(Some)
        .map_err(|e| RpcError::new(e.to_string()))
}

/// Run one command; `Ok(None)` is a success without `data`.
async fn execute<B: RpcBackend + ?Sized>(b: &B, command: RpcCommand) -> RpcResult<Option<Value>> {
    match command {
        RpcCommand::Prompt {
            message,
            images,
            streaming_behavior,
        } => {
            b.prompt(PromptRequest {
                message,
                images,
                streaming_behavior,
            })
            .await?;
            Ok(None)
        }
        RpcCommand::Steer { message, images } => b.steer(message, images).await.map(|()| None),
        RpcCommand::FollowUp { message, images } => b.follow_up(message, images).await.map(|()| None),
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
        RpcCommand::Bash { command } => data(b.bash(command).await?),
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
        RpcCommand::GetMessages => data(MessageList {
            messages: b.messages().await?,
        }),
        RpcCommand::GetCommands => data(CommandList {
            commands: b.commands().await?,
        }),
    }
}

/// JavaScript's `String.prototype.trim`: Unicode white space plus the BOM.
fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}
