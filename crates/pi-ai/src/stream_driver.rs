//! The frame every provider runs in: a spawned task that builds the assistant message while it
//! emits events, turns every failure (HTTP error, dropped stream, bad data, cancellation) into a
//! final `error` event that keeps what had streamed, and never panics or returns an error to the
//! caller once started.
//!
//! A provider writes its body as `async fn(&mut Emitter, ...) -> Result<(), ProviderError>` and
//! starts it with [`spawn_provider`]. The body calls [`Emitter::start`] once the response is
//! there, then the `*_start` / `*_delta` / `*_end` methods; returning `Ok(())` ends the stream
//! with `done` (or `error` when the body set an error stop reason).

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::events::{event_channel, AssistantMessageEvent, AssistantStream, EventSender};
use crate::partial_json::parse_partial;
use crate::types::{AssistantMessage, Content, Model, StopReason, TextContent, ThinkingContent, ToolCall};

/// The error text of a cancelled request (the OpenAI provider's wording).
pub const ABORT_MESSAGE: &str = "Request was aborted";

/// How a provider body ended early.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// A failure to report; the text becomes the message's `errorMessage`.
    #[error("{0}")]
    Message(String),
    /// The call was cancelled.
    #[error("Request was aborted")]
    Aborted,
    /// The consumer dropped the stream; stop quietly.
    #[error("stream consumer went away")]
    ConsumerGone,
}

impl From<String> for ProviderError {
    fn from(s: String) -> Self {
        ProviderError::Message(s)
    }
}

impl From<&str> for ProviderError {
    fn from(s: &str) -> Self {
        ProviderError::Message(s.to_string())
    }
}

/// Builds the assistant message and emits the matching events.
#[derive(Debug)]
pub struct Emitter {
    tx: EventSender,
    /// The message so far. Bodies may set usage, stop reason, response id and such directly.
    pub output: AssistantMessage,
    /// Raw argument JSON of tool calls still streaming, by content index.
    pending_args: Vec<(usize, String)>,
    started: bool,
    /// Close every block with its `*_end` event before an abort's `error` event.
    end_blocks_on_abort: bool,
}

type Sent = Result<(), ProviderError>;

impl Emitter {
    pub fn new(model: &Model, tx: EventSender) -> Self {
        Emitter {
            tx,
            output: AssistantMessage::empty_for(model),
            pending_args: Vec::new(),
            started: false,
            end_blocks_on_abort: false,
        }
    }

    /// Ask for every content block to be closed (`text_end`, `thinking_end`, `toolcall_end`)
    /// before the `error` event of an abort, for APIs whose blocks stay open until the stream
    /// ends (the TypeScript pi's Chat Completions provider behaves so).
    pub fn set_end_blocks_on_abort(&mut self, yes: bool) {
        self.end_blocks_on_abort = yes;
    }

    /// Send the `*_end` event of every block, in content order.
    pub async fn end_all_blocks(&mut self) -> Sent {
        for index in 0..self.output.content.len() {
            match self.output.content[index] {
                Content::Text(_) => self.text_end(index).await?,
                Content::Thinking(_) => self.thinking_end(index).await?,
                Content::ToolCall(_) => self.tool_call_end(index).await?,
                Content::Image(_) => {}
            }
        }
        Ok(())
    }

    async fn send(&mut self, event: AssistantMessageEvent) -> Sent {
        if self.tx.send(event).await {
            Ok(())
        } else {
            Err(ProviderError::ConsumerGone)
        }
    }

    /// Whether `start` has been sent.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Emit `start` (once) with the message as it is now.
    pub async fn start(&mut self) -> Sent {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let partial = self.output.clone();
        self.send(AssistantMessageEvent::Start { partial }).await
    }

    /// Open a text block; returns its content index.
    pub async fn text_start(&mut self) -> Result<usize, ProviderError> {
        let index = self.output.content.len();
        self.output.content.push(Content::Text(TextContent::default()));
        self.send(AssistantMessageEvent::TextStart { content_index: index })
            .await?;
        Ok(index)
    }

    pub async fn text_delta(&mut self, index: usize, delta: &str) -> Sent {
        if let Some(Content::Text(t)) = self.output.content.get_mut(index) {
            t.text.push_str(delta);
        }
        self.send(AssistantMessageEvent::TextDelta {
            content_index: index,
            delta: delta.to_string(),
        })
        .await
    }

    /// Mutable access to a text block (to set its signature before `text_end`).
    pub fn text_block(&mut self, index: usize) -> Option<&mut TextContent> {
        match self.output.content.get_mut(index) {
            Some(Content::Text(t)) => Some(t),
            _ => None,
        }
    }

    pub async fn text_end(&mut self, index: usize) -> Sent {
        let content = match self.output.content.get(index) {
            Some(Content::Text(t)) => t.clone(),
            _ => return Ok(()),
        };
        self.send(AssistantMessageEvent::TextEnd {
            content_index: index,
            content,
        })
        .await
    }

    /// Open a thinking block; returns its content index.
    pub async fn thinking_start(&mut self, signature: Option<String>) -> Result<usize, ProviderError> {
        let index = self.output.content.len();
        self.output.content.push(Content::Thinking(ThinkingContent {
            thinking_signature: signature,
            ..Default::default()
        }));
        self.send(AssistantMessageEvent::ThinkingStart { content_index: index })
            .await?;
        Ok(index)
    }

    pub async fn thinking_delta(&mut self, index: usize, delta: &str) -> Sent {
        if let Some(Content::Thinking(t)) = self.output.content.get_mut(index) {
            t.thinking.push_str(delta);
        }
        self.send(AssistantMessageEvent::ThinkingDelta {
            content_index: index,
            delta: delta.to_string(),
        })
        .await
    }

    /// Mutable access to a thinking block (signature, redaction).
    pub fn thinking_block(&mut self, index: usize) -> Option<&mut ThinkingContent> {
        match self.output.content.get_mut(index) {
            Some(Content::Thinking(t)) => Some(t),
            _ => None,
        }
    }

    pub async fn thinking_end(&mut self, index: usize) -> Sent {
        let content = match self.output.content.get(index) {
            Some(Content::Thinking(t)) => t.clone(),
            _ => return Ok(()),
        };
        self.send(AssistantMessageEvent::ThinkingEnd {
            content_index: index,
            content,
        })
        .await
    }

    /// Open a tool call; returns its content index.
    pub async fn tool_call_start(&mut self, id: &str, name: &str) -> Result<usize, ProviderError> {
        let index = self.output.content.len();
        self.output.content.push(Content::ToolCall(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: serde_json::Value::Object(Default::default()),
            ..Default::default()
        }));
        self.pending_args.push((index, String::new()));
        self.send(AssistantMessageEvent::ToolCallStart {
            content_index: index,
            id: id.to_string(),
            name: name.to_string(),
        })
        .await?;
        Ok(index)
    }

    /// Append a fragment of a tool call's argument JSON. Arguments are parsed once, at the end.
    pub async fn tool_call_delta(&mut self, index: usize, delta: &str) -> Sent {
        if let Some((_, buf)) = self.pending_args.iter_mut().find(|(i, _)| *i == index) {
            buf.push_str(delta);
        }
        self.send(AssistantMessageEvent::ToolCallDelta {
            content_index: index,
            delta: delta.to_string(),
        })
        .await
    }

    /// Mutable access to a tool call (id or name arriving late, thought signatures).
    pub fn tool_call(&mut self, index: usize) -> Option<&mut ToolCall> {
        match self.output.content.get_mut(index) {
            Some(Content::ToolCall(t)) => Some(t),
            _ => None,
        }
    }

    /// The raw argument text received so far for a streaming tool call.
    pub fn tool_call_raw_args(&self, index: usize) -> Option<&str> {
        self.pending_args
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, s)| s.as_str())
    }

    /// Replace the raw arguments of a streaming tool call (APIs that send the full text at the end).
    pub fn set_tool_call_raw_args(&mut self, index: usize, raw: String) {
        if let Some((_, buf)) = self.pending_args.iter_mut().find(|(i, _)| *i == index) {
            *buf = raw;
        }
    }

    /// Close a tool call: its arguments are parsed (best effort) and `toolcall_end` is sent.
    pub async fn tool_call_end(&mut self, index: usize) -> Sent {
        self.settle_args(Some(index));
        let tool_call = match self.output.content.get(index) {
            Some(Content::ToolCall(t)) => t.clone(),
            _ => return Ok(()),
        };
        self.send(AssistantMessageEvent::ToolCallEnd {
            content_index: index,
            tool_call,
        })
        .await
    }

    /// Parse pending tool arguments into the message (one index, or all).
    fn settle_args(&mut self, only: Option<usize>) {
        let content = &mut self.output.content;
        self.pending_args.retain(|(index, raw)| {
            if only.is_some_and(|o| o != *index) {
                return true;
            }
            if let Some(Content::ToolCall(tc)) = content.get_mut(*index) {
                tc.arguments = parse_partial(raw);
            }
            false
        });
    }

    /// End the stream: `done`, or `error` when the body recorded an error stop reason.
    async fn finish_ok(mut self) {
        self.settle_args(None);
        let mut message = std::mem::take(&mut self.output);
        let event = match message.stop_reason {
            StopReason::Error | StopReason::Aborted => {
                if message.error_message.is_none() {
                    message.error_message = Some("Provider returned an error stop reason".to_string());
                }
                AssistantMessageEvent::Error {
                    reason: message.stop_reason,
                    error: message,
                }
            }
            reason => AssistantMessageEvent::Done { reason, message },
        };
        let _ = self.tx.send(event).await;
    }

    /// End the stream with an `error` event that keeps the partial content and usage.
    async fn finish_err(mut self, reason: StopReason, text: String) {
        if reason == StopReason::Aborted
            && self.started
            && self.end_blocks_on_abort
            && self.end_all_blocks().await.is_err()
        {
            return;
        }
        self.settle_args(None);
        let mut message = std::mem::take(&mut self.output);
        message.stop_reason = reason;
        message.error_message = Some(text);
        let _ = self
            .tx
            .send(AssistantMessageEvent::Error { reason, error: message })
            .await;
    }
}

/// The error texts of a cancelled call, which SDKs word differently before and after the
/// response started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortMessages {
    pub before_start: &'static str,
    pub after_start: &'static str,
}

/// The OpenAI SDK's wording: `Request was aborted.` while connecting or waiting to retry,
/// `Request was aborted` once streaming.
pub const OPENAI_ABORT_MESSAGES: AbortMessages = AbortMessages {
    before_start: "Request was aborted.",
    after_start: ABORT_MESSAGE,
};

/// Run `body` on the tokio runtime and return its event stream. Cancelling `cancel` stops the
/// body wherever it is (connecting, waiting to retry, reading) and ends the stream with an
/// `aborted` error carrying `abort_message`.
pub fn spawn_provider<F>(
    model: &Model,
    cancel: CancellationToken,
    abort_message: &'static str,
    body: F,
) -> AssistantStream
where
    F: for<'a> FnOnce(&'a mut Emitter) -> BoxFuture<'a, Result<(), ProviderError>> + Send + 'static,
{
    let messages = AbortMessages {
        before_start: abort_message,
        after_start: abort_message,
    };
    spawn_provider_with(model, cancel, messages, body)
}

/// [`spawn_provider`] with different abort texts before and after `start`.
pub fn spawn_provider_with<F>(
    model: &Model,
    cancel: CancellationToken,
    abort: AbortMessages,
    body: F,
) -> AssistantStream
where
    F: for<'a> FnOnce(&'a mut Emitter) -> BoxFuture<'a, Result<(), ProviderError>> + Send + 'static,
{
    let (tx, stream) = event_channel();
    let mut emitter = Emitter::new(model, tx);
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return error_stream(model, "pi-ai streaming needs a running tokio runtime".to_string());
    };
    // The caller's provider hooks (see `provider_hooks`) follow the call into its task.
    let call_hooks = crate::provider_hooks::current();
    handle.spawn(crate::provider_hooks::scoped(call_hooks, async move {
        let result = {
            let fut = body(&mut emitter);
            tokio::select! {
                biased;
                _ = cancel.cancelled() => Err(ProviderError::Aborted),
                r = fut => r,
            }
        };
        // A cancel that lands while the body finishes still counts as an abort, as in pi.
        let result = match result {
            Ok(()) if cancel.is_cancelled() => Err(ProviderError::Aborted),
            other => other,
        };
        match result {
            Ok(()) => emitter.finish_ok().await,
            Err(ProviderError::Aborted) => {
                let text = if emitter.is_started() {
                    abort.after_start
                } else {
                    abort.before_start
                };
                emitter.finish_err(StopReason::Aborted, text.to_string()).await
            }
            Err(ProviderError::Message(m)) => emitter.finish_err(StopReason::Error, m).await,
            Err(ProviderError::ConsumerGone) => {}
        }
    }));
    stream
}

/// A stream holding only an `error` event for `model` (failures before anything could start).
pub fn error_stream(model: &Model, message: String) -> AssistantStream {
    let mut error = AssistantMessage::empty_for(model);
    error.stop_reason = StopReason::Error;
    error.error_message = Some(message);
    AssistantStream::from_events(vec![AssistantMessageEvent::Error {
        reason: StopReason::Error,
        error,
    }])
}

/// A request that failed before the provider was reached, as pi 1.6's agent records an error
/// thrown there: one empty text block, zero usage.
pub fn failed_before_start(model: &Model, message: String) -> AssistantStream {
    let mut error = AssistantMessage::empty_for(model);
    error.content = vec![crate::types::Content::text("")];
    error.stop_reason = StopReason::Error;
    error.error_message = Some(message);
    AssistantStream::from_events(vec![AssistantMessageEvent::Error {
        reason: StopReason::Error,
        error,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ModelCost, Usage};

    fn model() -> Model {
        Model {
            id: "m".into(),
            name: "m".into(),
            api: "test-api".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec![],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    #[tokio::test]
    async fn body_errors_keep_partial_content_and_usage() {
        let stream = spawn_provider(&model(), CancellationToken::new(), ABORT_MESSAGE, |em| {
            Box::pin(async move {
                em.start().await?;
                let i = em.text_start().await?;
                em.text_delta(i, "partial").await?;
                let t = em.tool_call_start("c1", "read").await?;
                em.tool_call_delta(t, r#"{"path":"a"#).await?;
                em.output.usage = Usage {
                    input: 5,
                    ..Default::default()
                };
                Err(ProviderError::from("boom"))
            })
        });
        let msg = stream.result().await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(msg.error_message.as_deref(), Some("boom"));
        assert_eq!(msg.text(), "partial");
        assert_eq!(msg.usage.input, 5);
        assert_eq!(
            msg.tool_calls().next().map(|t| t.arguments.clone()),
            Some(serde_json::json!({"path": "a"}))
        );
    }

    #[tokio::test]
    async fn cancellation_interrupts_a_waiting_body() {
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        let stream = spawn_provider(&model(), cancel, ABORT_MESSAGE, |em| {
            Box::pin(async move {
                em.start().await?;
                let i = em.text_start().await?;
                em.text_delta(i, "so far").await?;
                c2.cancel();
                std::future::pending::<()>().await;
                Ok(())
            })
        });
        let msg = stream.result().await;
        assert_eq!(msg.stop_reason, StopReason::Aborted);
        assert_eq!(msg.error_message.as_deref(), Some("Request was aborted"));
        assert_eq!(msg.text(), "so far");
    }

    #[tokio::test]
    async fn error_stop_reason_from_the_body_becomes_an_error_event() {
        let stream = spawn_provider(&model(), CancellationToken::new(), ABORT_MESSAGE, |em| {
            Box::pin(async move {
                em.start().await?;
                em.output.stop_reason = StopReason::Error;
                em.output.error_message = Some("Provider finish_reason: content_filter".into());
                Ok(())
            })
        });
        let msg = stream.result().await;
        assert_eq!(msg.stop_reason, StopReason::Error);
        assert_eq!(
            msg.error_message.as_deref(),
            Some("Provider finish_reason: content_filter")
        );
    }
}
