//! The loop: turns of LLM replies and tool batches, steering and follow-ups, as events.
//!
//! Outer loop: follow-ups. Inner loop, while the last reply called tools or messages are pending:
//! `turn_start` (not for the first turn), declare tool changes, inject pending messages, stream the reply, stop on an
//! error or abort, run the tool batch, `turn_end`, `prepare_next_turn`, `should_stop_after_turn`,
//! poll steering. When the inner loop ends, poll follow-ups; with none, `agent_end`.
//!
//! The loop runs inside the caller's future: no task is spawned, so nothing outlives the run.
//! Tool batches run concurrently within the same future.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, Context, Message, Model, PartialMessage, StopReason, StreamFn,
    StreamOptions, ThinkingLevel,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::batch::{execute_tool_calls, fail_truncated_calls, ToolExecution};
use crate::context::AgentContext;
use crate::event::{lock, AgentEvent, StreamingMessage};
use crate::hooks::{AgentHooks, HookError, NoHooks, TurnContext};
use crate::message::AgentMessage;

/// Returns what a queue delivers on one poll.
pub type QueuePoll = Arc<dyn Fn() -> Vec<AgentMessage> + Send + Sync>;

/// How long a provider stream, tool or hook may take to wind down after an abort before the
/// loop stops waiting for it and drops it. They all see the cancellation at once and normally
/// end well within this; the limit only guards against one that ignores it.
pub const ABORT_GRACE: Duration = Duration::from_secs(3);

/// The text of an assistant message cut short by an abort.
pub const ABORTED_REQUEST: &str = "Request was aborted";

/// Everything a run needs besides the context.
#[derive(Clone)]
pub struct LoopConfig {
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    /// pi's `streamSimple`, or a fake.
    pub stream_fn: StreamFn,
    /// Base options of every call (session id, budgets, headers, payload hook, retries, a
    /// fallback API key). The loop sets `reasoning`, `api_key` and `cancel`.
    pub stream_options: StreamOptions,
    pub tool_execution: ToolExecution,
    pub hooks: Arc<dyn AgentHooks>,
    pub steering: Option<QueuePoll>,
    pub follow_up: Option<QueuePoll>,
}

impl LoopConfig {
    pub fn new(model: Model, stream_fn: StreamFn) -> Self {
        LoopConfig {
            model,
            thinking_level: ThinkingLevel::Off,
            stream_fn,
            stream_options: StreamOptions::default(),
            tool_execution: ToolExecution::Parallel,
            hooks: Arc::new(NoHooks),
            steering: None,
            follow_up: None,
        }
    }
}

impl std::fmt::Debug for LoopConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopConfig")
            .field("model", &self.model.id)
            .field("thinking_level", &self.thinking_level)
            .field("tool_execution", &self.tool_execution)
            .finish_non_exhaustive()
    }
}

/// Where a run's events go. The loop awaits each call before it goes on, so a slow consumer
/// slows the run instead of piling events up.
#[async_trait]
pub trait EventSink: Send + Sync {
    async fn emit(&self, event: AgentEvent);
}

/// Puts events in one order even when concurrent tools report at once: one event is fully
/// delivered before the next begins.
pub(crate) struct Emitter<'a> {
    sink: &'a dyn EventSink,
    hooks: Arc<dyn AgentHooks>,
    order: tokio::sync::Mutex<()>,
}

impl<'a> Emitter<'a> {
    pub(crate) fn new(sink: &'a dyn EventSink, hooks: Arc<dyn AgentHooks>) -> Self {
        Emitter {
            sink,
            hooks,
            order: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) async fn emit(&self, event: AgentEvent) {
        let _turn = self.order.lock().await;
        self.sink.emit(event).await;
    }

    /// Report `message_end` for `message` and return the message as it ends: the hooks may
    /// replace it first (with one of the same role; a failed hook keeps it), and the event,
    /// the transcript and the next request all carry the replacement.
    pub(crate) async fn end_message(&self, message: AgentMessage) -> AgentMessage {
        let message = match self.hooks.message_end(&message).await {
            Ok(Some(replaced)) if replaced.role() == message.role() => replaced,
            _ => message,
        };
        self.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        })
        .await;
        message
    }

    /// [`Self::end_message`] for an assistant message.
    pub(crate) async fn end_assistant(&self, message: AssistantMessage) -> AssistantMessage {
        match self.end_message(message.clone().into()).await {
            AgentMessage::Llm(Message::Assistant(ended)) => Arc::unwrap_or_clone(ended),
            _ => message,
        }
    }
}

/// Await `fut`; once `cancel` fires, give it [`ABORT_GRACE`] more (counted from the first time
/// this `deadline` saw the cancellation) and return `None` if it is still not done.
pub(crate) async fn within_grace<F: Future>(
    fut: F,
    cancel: &CancellationToken,
    deadline: &mut Option<Instant>,
) -> Option<F::Output> {
    tokio::pin!(fut);
    if deadline.is_none() {
        tokio::select! {
            biased;
            out = &mut fut => return Some(out),
            _ = cancel.cancelled() => *deadline = Some(Instant::now() + ABORT_GRACE),
        }
    }
    let until = deadline.unwrap_or_else(Instant::now);
    tokio::select! {
        biased;
        out = &mut fut => Some(out),
        _ = tokio::time::sleep_until(until) => None,
    }
}

/// Run with new prompt messages: they are added to the context and reported first.
/// Returns every message the run added; `Err` when a hook failed (the caller reports it).
pub async fn run_agent_loop(
    prompts: Vec<AgentMessage>,
    mut context: AgentContext,
    config: &LoopConfig,
    sink: &dyn EventSink,
    cancel: &CancellationToken,
) -> Result<Vec<AgentMessage>, HookError> {
    let emitter = Emitter::new(sink, Arc::clone(&config.hooks));
    emitter.emit(AgentEvent::AgentStart).await;
    emitter.emit(AgentEvent::TurnStart).await;
    let mut started = Vec::with_capacity(prompts.len());
    for prompt in prompts {
        emitter
            .emit(AgentEvent::MessageStart {
                message: prompt.clone(),
            })
            .await;
        started.push(emitter.end_message(prompt).await);
    }
    context.messages.extend(started.iter().cloned());
    run_turns(context, started, config, &emitter, cancel).await
}

/// Run from the context as it is (its last message should be a user or tool result message).
pub async fn run_agent_loop_continue(
    context: AgentContext,
    config: &LoopConfig,
    sink: &dyn EventSink,
    cancel: &CancellationToken,
) -> Result<Vec<AgentMessage>, HookError> {
    let emitter = Emitter::new(sink, Arc::clone(&config.hooks));
    emitter.emit(AgentEvent::AgentStart).await;
    emitter.emit(AgentEvent::TurnStart).await;
    run_turns(context, Vec::new(), config, &emitter, cancel).await
}

fn poll(queue: &Option<QueuePoll>, cancel: &CancellationToken) -> Vec<AgentMessage> {
    // After an abort, queued messages stay queued for the caller to decide on.
    if cancel.is_cancelled() {
        return Vec::new();
    }
    queue.as_ref().map(|q| q()).unwrap_or_default()
}

async fn run_turns(
    mut context: AgentContext,
    mut new_messages: Vec<AgentMessage>,
    config: &LoopConfig,
    emitter: &Emitter<'_>,
    cancel: &CancellationToken,
) -> Result<Vec<AgentMessage>, HookError> {
    let mut turn = config.clone();
    let mut first_turn = true;
    let mut pending = poll(&turn.steering, cancel);

    loop {
        let mut has_more_tool_calls = true;
        while has_more_tool_calls || !pending.is_empty() {
            if first_turn {
                first_turn = false;
            } else {
                emitter.emit(AgentEvent::TurnStart).await;
            }
            // Tools added or removed since the transcript last declared them are declared
            // before the request, ahead of the pending messages (pi 1.6's declareToolChanges).
            if let Some(declared) = turn.hooks.declare_changes(&context).await {
                pending.insert(0, declared);
            }
            for message in pending.drain(..) {
                emitter
                    .emit(AgentEvent::MessageStart {
                        message: message.clone(),
                    })
                    .await;
                let message = emitter.end_message(message).await;
                context.messages.push(message.clone());
                new_messages.push(message);
            }

            let message = stream_assistant_response(&context, &turn, emitter, cancel).await?;
            context.messages.push(message.clone().into());
            new_messages.push(message.clone().into());

            if matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
                emitter
                    .emit(AgentEvent::TurnEnd {
                        message,
                        tool_results: Vec::new(),
                    })
                    .await;
                emitter
                    .emit(AgentEvent::AgentEnd {
                        messages: new_messages.clone(),
                        will_retry: false,
                    })
                    .await;
                return Ok(new_messages);
            }

            let mut tool_results = Vec::new();
            has_more_tool_calls = false;
            if message.tool_calls().next().is_some() {
                let batch = if message.stop_reason == StopReason::Length {
                    fail_truncated_calls(&message, emitter).await
                } else {
                    execute_tool_calls(&context, &message, &turn, emitter, cancel).await
                };
                has_more_tool_calls = !batch.terminate;
                tool_results = batch.messages;
                for result in &tool_results {
                    context.messages.push(result.clone().into());
                    new_messages.push(result.clone().into());
                }
            }

            emitter
                .emit(AgentEvent::TurnEnd {
                    message: message.clone(),
                    tool_results: tool_results.clone(),
                })
                .await;

            let turn_view = TurnContext {
                message: &message,
                tool_results: &tool_results,
                context: &context,
                new_messages: &new_messages,
            };
            let next = turn.hooks.prepare_next_turn(turn_view).await?;
            let stop = turn.hooks.should_stop_after_turn(turn_view).await?;
            let more = turn.hooks.continue_after_turn(turn_view).await?;
            if more && !stop && !cancel.is_cancelled() {
                has_more_tool_calls = true;
            }
            if let Some(next) = next {
                apply_next_turn(next, &mut turn, &mut context);
            }
            if stop {
                emitter
                    .emit(AgentEvent::AgentEnd {
                        messages: new_messages.clone(),
                        will_retry: false,
                    })
                    .await;
                return Ok(new_messages);
            }
            pending = poll(&turn.steering, cancel);
        }

        let follow_ups = poll(&turn.follow_up, cancel);
        if follow_ups.is_empty() {
            break;
        }
        pending = follow_ups;
    }

    emitter
        .emit(AgentEvent::AgentEnd {
            messages: new_messages.clone(),
            will_retry: false,
        })
        .await;
    Ok(new_messages)
}

fn apply_next_turn(next: crate::hooks::NextTurn, turn: &mut LoopConfig, context: &mut AgentContext) {
    if let Some(model) = next.model {
        turn.model = model;
    }
    if let Some(level) = next.thinking_level {
        turn.thinking_level = level;
    }
    if let Some(prompt) = next.system_prompt {
        context.system_prompt = prompt;
    }
    if let Some(messages) = next.messages {
        context.messages = messages;
    }
    if let Some(tools) = next.tools {
        context.tools = tools;
    }
}

/// An assistant message that ends a turn without content.
fn failed_message(model: &Model, reason: StopReason, text: &str) -> AssistantMessage {
    let mut message = AssistantMessage::empty_for(model);
    message.stop_reason = reason;
    message.error_message = Some(text.to_string());
    message
}

/// One LLM call: hooks, stream, and the assistant's message events. Returns the final message.
async fn stream_assistant_response(
    context: &AgentContext,
    turn: &LoopConfig,
    emitter: &Emitter<'_>,
    cancel: &CancellationToken,
) -> Result<AssistantMessage, HookError> {
    if cancel.is_cancelled() {
        // Aborted between turns: end the way a provider ends an aborted request, without one.
        let mut message = failed_message(&turn.model, StopReason::Aborted, ABORTED_REQUEST);
        message.thinking_level = Some(turn.thinking_level.as_str().to_string());
        emitter
            .emit(AgentEvent::MessageStart {
                message: message.clone().into(),
            })
            .await;
        return Ok(emitter.end_assistant(message).await);
    }

    let hooks = &turn.hooks;
    let mut deadline = None;
    let aborted = || HookError::new(ABORTED_REQUEST);
    let transformed = within_grace(
        hooks.transform_context(&context.messages, cancel),
        cancel,
        &mut deadline,
    )
    .await
    .ok_or_else(aborted)??;
    let messages = transformed.as_deref().unwrap_or(&context.messages);
    let llm_messages = within_grace(hooks.convert_to_llm(messages), cancel, &mut deadline)
        .await
        .ok_or_else(aborted)??;
    let api_key = within_grace(hooks.get_api_key(&turn.model.provider), cancel, &mut deadline)
        .await
        .ok_or_else(aborted)??
        .or_else(|| turn.stream_options.api_key.clone());
    let extra_headers = within_grace(hooks.request_headers(&turn.model), cancel, &mut deadline)
        .await
        .ok_or_else(aborted)??;

    let llm_context = Context {
        system_prompt: Some(context.system_prompt.clone()).filter(|s| !s.is_empty()),
        messages: llm_messages,
        tools: context.tool_specs(),
    };
    let mut options = turn.stream_options.clone();
    options.api_key = api_key;
    options.headers.extend(extra_headers);
    options.reasoning = Some(turn.thinking_level).filter(|l| *l != ThinkingLevel::Off);
    options.cancel = cancel.child_token();
    let stream_started = std::time::Instant::now();
    let mut stream = (turn.stream_fn)(&turn.model, &llm_context, options);

    let partial = Arc::new(Mutex::new(PartialMessage::new()));
    let mut started = false;
    let final_message = loop {
        let Some(next) = within_grace(stream.next_event(), cancel, &mut deadline).await else {
            // The provider ignored the abort; end with what streamed so far.
            let mut message = lock(&partial).snapshot().clone();
            if !started {
                message = AssistantMessage::empty_for(&turn.model);
            }
            message.stop_reason = StopReason::Aborted;
            message.error_message = Some(ABORTED_REQUEST.to_string());
            break message;
        };
        let Some(event) = next else {
            let mut message = lock(&partial).snapshot().clone();
            if !started {
                message = AssistantMessage::empty_for(&turn.model);
            }
            message.stop_reason = StopReason::Error;
            message.error_message = Some("Stream ended without a final event".to_string());
            break message;
        };
        match event {
            AssistantMessageEvent::Start { partial: mut start } => {
                // A reply in progress says so until its final message replaces it.
                start.stop_reason = StopReason::Pending;
                lock(&partial).apply(&AssistantMessageEvent::Start { partial: start.clone() });
                started = true;
                emitter.emit(AgentEvent::MessageStart { message: start.into() }).await;
            }
            AssistantMessageEvent::Done { message, .. } | AssistantMessageEvent::Error { error: message, .. } => {
                break message;
            }
            other => {
                lock(&partial).apply(&other);
                // pi ignores block events that arrive before `start`.
                if started {
                    emitter
                        .emit(AgentEvent::MessageUpdate {
                            assistant_message_event: other,
                            message: StreamingMessage::live(partial.clone()),
                        })
                        .await;
                }
            }
        }
    };

    let mut final_message = final_message;
    // As pi: the stream's duration (unless the provider set one) and the level asked for.
    if final_message.duration_ms.is_none() {
        final_message.duration_ms = Some(u64::try_from(stream_started.elapsed().as_millis()).unwrap_or(u64::MAX));
    }
    final_message.thinking_level = Some(turn.thinking_level.as_str().to_string());
    if !started {
        emitter
            .emit(AgentEvent::MessageStart {
                message: final_message.clone().into(),
            })
            .await;
    }
    Ok(emitter.end_assistant(final_message).await)
}
