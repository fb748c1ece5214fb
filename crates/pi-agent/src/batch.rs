//! One batch of tool calls: lookup, argument preparation and validation, the before/after hooks,
//! execution with progress updates, and the result messages, sequential or concurrent.
//!
//! Parallel batches: every call is prepared in source order first (`tool_execution_start`; a call
//! that cannot run ends at once), then the prepared calls run together within the loop's future;
//! each one's `tool_execution_end` comes as it finishes, and the tool-result messages follow in
//! source order once all are done. One sequential tool (or the global option) makes the whole
//! batch run one call at a time.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use pi_ai::{now_ms, AssistantMessage, Content, Message, ToolCall, ToolResultMessage};
use serde_json::{json, Value};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{within_grace, Emitter, LoopConfig, ABORT_GRACE};
use crate::context::AgentContext;
use crate::event::{lock, AgentEvent};
use crate::hooks::ToolCallContext;
use crate::message::AgentMessage;
use crate::tool::{AgentTool, ExecutionMode, ToolOutput, ToolUpdateFn};
use crate::validation::validate_tool_arguments;

/// Text of a tool call cut off by an abort.
pub const OPERATION_ABORTED: &str = "Operation aborted";

/// How the calls of one assistant message run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolExecution {
    /// Together (pi's default), unless a called tool asks for sequential execution.
    #[default]
    Parallel,
    /// One after another, always.
    Sequential,
}

/// The result messages of a batch and whether it ends the run.
pub(crate) struct BatchOutcome {
    pub messages: Vec<ToolResultMessage>,
    /// Every result asked to terminate.
    pub terminate: bool,
}

pub(crate) struct Finalized {
    pub(crate) tool_call: ToolCall,
    pub(crate) result: ToolOutput,
    pub(crate) is_error: bool,
    /// How long `execute` ran; `None` for a call that never ran.
    duration_ms: Option<u64>,
    /// The record of the calls the tool made while it ran (`nestedCalls` on its result message).
    nested_calls: Option<Value>,
    /// What those calls spent on model calls, added to the result message's `usage`.
    nested_usage: Option<pi_ai::Usage>,
}

pub(crate) enum Preparation {
    /// The call does not run; this is its error result (boxed: a result is much larger than
    /// the other variant).
    Immediate(Box<ToolOutput>),
    Prepared {
        tool: Arc<dyn AgentTool>,
        args: Value,
    },
}

/// pi's error result: one text block and empty details.
pub(crate) fn error_output(message: impl Into<String>) -> ToolOutput {
    ToolOutput {
        content: vec![Content::text(message)],
        details: Some(json!({})),
        structured_content: None,
        is_error: false,
        terminate: false,
        usage: None,
    }
}

pub(crate) async fn execute_tool_calls(
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &LoopConfig,
    emitter: &Emitter<'_>,
    cancel: &CancellationToken,
) -> BatchOutcome {
    let calls: Vec<&ToolCall> = assistant.tool_calls().collect();
    let any_sequential = calls.iter().any(|c| {
        context
            .tool(&c.name)
            .is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
    });
    let done = if config.tool_execution == ToolExecution::Sequential || any_sequential {
        run_sequential(&calls, context, assistant, config, emitter, cancel).await
    } else {
        run_parallel(&calls, context, assistant, config, emitter, cancel).await
    };
    let terminate = !done.is_empty() && done.iter().all(|(terminate, _)| *terminate);
    BatchOutcome {
        messages: done.into_iter().map(|(_, message)| message).collect(),
        terminate,
    }
}

/// The error result of every call of a reply cut off at the output token limit: no call
/// runs, since any of them may carry truncated arguments (pi 1.6). Each still gets its
/// start, end and result message, one after another, and the run goes on so the model can
/// call again.
pub(crate) async fn fail_truncated_calls(assistant: &AssistantMessage, emitter: &Emitter<'_>) -> BatchOutcome {
    let mut messages = Vec::new();
    for call in assistant.tool_calls() {
        emit_start(call, emitter).await;
        let finalized = Finalized {
            tool_call: call.clone(),
            result: error_output(format!(
                "Tool call \"{}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.",
                call.name
            )),
            is_error: true,
            duration_ms: None,
            nested_calls: None,
            nested_usage: None,
        };
        emit_end(&finalized, emitter).await;
        messages.push(emit_result_message(finalized, emitter).await);
    }
    BatchOutcome {
        messages,
        terminate: false,
    }
}

async fn run_sequential(
    calls: &[&ToolCall],
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &LoopConfig,
    emitter: &Emitter<'_>,
    cancel: &CancellationToken,
) -> Vec<(bool, ToolResultMessage)> {
    let mut done = Vec::with_capacity(calls.len());
    for call in calls {
        emit_start(call, emitter).await;
        let finalized = match prepare(call, context, assistant, config, cancel).await {
            Preparation::Immediate(result) => Finalized {
                tool_call: (*call).clone(),
                result: *result,
                is_error: true,
                duration_ms: None,
                nested_calls: None,
                nested_usage: None,
            },
            Preparation::Prepared { tool, args } => {
                let executed = execute(
                    &tool,
                    call,
                    args.clone(),
                    crate::nested::PipelineParts {
                        context,
                        assistant,
                        config,
                    },
                    emitter,
                    cancel,
                )
                .await;
                finalize_executed(call, &args, executed, context, assistant, config, cancel).await
            }
        };
        emit_end(&finalized, emitter).await;
        let terminate = finalized.result.terminate;
        done.push((terminate, emit_result_message(finalized, emitter).await));
    }
    done
}

async fn run_parallel(
    calls: &[&ToolCall],
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &LoopConfig,
    emitter: &Emitter<'_>,
    cancel: &CancellationToken,
) -> Vec<(bool, ToolResultMessage)> {
    let mut slots: Vec<Option<Finalized>> = calls.iter().map(|_| None).collect();
    let mut prepared = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        emit_start(call, emitter).await;
        match prepare(call, context, assistant, config, cancel).await {
            Preparation::Immediate(result) => {
                let finalized = Finalized {
                    tool_call: (*call).clone(),
                    result: *result,
                    is_error: true,
                    duration_ms: None,
                    nested_calls: None,
                    nested_usage: None,
                };
                emit_end(&finalized, emitter).await;
                slots[index] = Some(finalized);
            }
            Preparation::Prepared { tool, args } => prepared.push((index, *call, tool, args)),
        }
    }

    let mut running: FuturesUnordered<_> = prepared
        .into_iter()
        .map(|(index, call, tool, args)| async move {
            let executed = execute(
                &tool,
                call,
                args.clone(),
                crate::nested::PipelineParts {
                    context,
                    assistant,
                    config,
                },
                emitter,
                cancel,
            )
            .await;
            let finalized = finalize_executed(call, &args, executed, context, assistant, config, cancel).await;
            emit_end(&finalized, emitter).await;
            (index, finalized)
        })
        .collect();
    while let Some((index, finalized)) = running.next().await {
        slots[index] = Some(finalized);
    }

    let mut done = Vec::with_capacity(slots.len());
    for finalized in slots.into_iter().flatten() {
        let terminate = finalized.result.terminate;
        done.push((terminate, emit_result_message(finalized, emitter).await));
    }
    done
}

async fn prepare(
    call: &ToolCall,
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &LoopConfig,
    cancel: &CancellationToken,
) -> Preparation {
    let Some(tool) = context.tool(&call.name) else {
        return Preparation::Immediate(Box::new(error_output(format!("Tool {} not found", call.name))));
    };
    prepare_tool(tool, call, context, assistant, config, cancel, None).await
}

/// Arguments prepared and validated, then the `before_tool_call` hooks: the call as it will run,
/// or its error result.
pub(crate) async fn prepare_tool(
    tool: &Arc<dyn AgentTool>,
    call: &ToolCall,
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &LoopConfig,
    cancel: &CancellationToken,
    parent_tool_call_id: Option<&str>,
) -> Preparation {
    let prepared_args = tool.prepare_arguments(call.arguments.clone());
    let args = match validate_tool_arguments(&call.name, &tool.parameters(), &prepared_args) {
        Ok(args) => args,
        Err(message) => return Preparation::Immediate(Box::new(error_output(message))),
    };
    let view = ToolCallContext {
        assistant_message: assistant,
        tool_call: call,
        args: &args,
        context,
        parent_tool_call_id,
    };
    let mut deadline = None;
    let before = within_grace(config.hooks.before_tool_call(view, cancel), cancel, &mut deadline).await;
    match before {
        None => Preparation::Immediate(Box::new(error_output(OPERATION_ABORTED))),
        Some(Err(e)) => Preparation::Immediate(Box::new(error_output(e.0))),
        Some(Ok(Some(b))) if b.block => Preparation::Immediate(Box::new(error_output(
            b.reason.unwrap_or_else(|| "Tool execution was blocked".to_string()),
        ))),
        Some(Ok(Some(b))) => Preparation::Prepared {
            tool: tool.clone(),
            args: b.args.unwrap_or(args),
        },
        Some(Ok(None)) => Preparation::Prepared {
            tool: tool.clone(),
            args,
        },
    }
}

/// Progress reports waiting to become `tool_execution_update` events. Bounded: when a tool
/// reports faster than events are consumed, the newest report replaces the last waiting one
/// (reports are cumulative, so nothing the consumer needs is lost).
#[derive(Default)]
struct UpdateQueue {
    items: Mutex<VecDeque<ToolOutput>>,
    notify: Notify,
}

const UPDATE_QUEUE_DEPTH: usize = 16;

impl UpdateQueue {
    fn push(&self, update: ToolOutput) {
        {
            let mut items = lock(&self.items);
            if items.len() >= UPDATE_QUEUE_DEPTH {
                items.pop_back();
            }
            items.push_back(update);
        }
        self.notify.notify_one();
    }

    fn pop(&self) -> Option<ToolOutput> {
        lock(&self.items).pop_front()
    }
}

async fn flush_updates(queue: &UpdateQueue, call: &ToolCall, emitter: &Emitter<'_>) {
    while let Some(partial_result) = queue.pop() {
        emitter
            .emit(AgentEvent::ToolExecutionUpdate {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: call.arguments.clone(),
                partial_result,
                parent_tool_call_id: None,
            })
            .await;
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// Run the tool, turning its progress and the events of the calls it makes into events.
/// Failures (errors, panics, an abort the tool ignores) become error results.
async fn execute(
    tool: &Arc<dyn AgentTool>,
    call: &ToolCall,
    args: Value,
    nested: crate::nested::PipelineParts<'_>,
    emitter: &Emitter<'_>,
    cancel: &CancellationToken,
) -> Executed {
    let started = std::time::Instant::now();
    let queue = Arc::new(UpdateQueue::default());
    let reporter = queue.clone();
    let on_update: ToolUpdateFn = Arc::new(move |update| reporter.push(update));
    let mut scope = crate::nested::NestedScope::new(tool, call, nested);
    let run =
        AssertUnwindSafe(scope.wrap(tool.execute(&call.id, args, cancel.child_token(), on_update))).catch_unwind();
    tokio::pin!(run);

    let mut deadline: Option<Instant> = None;
    let outcome = loop {
        tokio::select! {
            biased;
            out = &mut run => break Some(out),
            Some(forwarded) = scope.next_event() => forwarded.emit(emitter).await,
            _ = queue.notify.notified() => flush_updates(&queue, call, emitter).await,
            _ = cancel.cancelled(), if deadline.is_none() => deadline = Some(Instant::now() + ABORT_GRACE),
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => break None,
        }
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    flush_updates(&queue, call, emitter).await;
    while let Some(forwarded) = scope.pending_event() {
        forwarded.emit(emitter).await;
    }
    let nested_calls = scope.take_record();
    let nested_usage = scope.nested_usage();

    let (output, is_error) = match outcome {
        Some(Ok(Ok(output))) => {
            let failed = output.is_error;
            (output, failed)
        }
        Some(Ok(Err(error))) => {
            let mut output = error_output(error.message);
            if error.details.is_some() {
                output.details = error.details;
            }
            (output, true)
        }
        Some(Err(panic)) => (
            error_output(format!("Tool {} failed: {}", call.name, panic_text(panic.as_ref()))),
            true,
        ),
        None => (error_output(OPERATION_ABORTED), true),
    };
    Executed {
        output,
        is_error,
        duration_ms,
        nested_calls,
        nested_usage,
    }
}

/// What one execution of a tool gave.
struct Executed {
    output: ToolOutput,
    is_error: bool,
    /// How long the tool ran, in milliseconds.
    duration_ms: u64,
    nested_calls: Option<Value>,
    nested_usage: Option<pi_ai::Usage>,
}

/// [`finalize`] a call of this run's batch that ran: its result, timing and nested calls.
async fn finalize_executed(
    call: &ToolCall,
    args: &Value,
    executed: Executed,
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &LoopConfig,
    cancel: &CancellationToken,
) -> Finalized {
    let mut finalized = finalize(
        call,
        args,
        executed.output,
        executed.is_error,
        context,
        assistant,
        config,
        cancel,
        None,
    )
    .await;
    finalized.duration_ms = Some(executed.duration_ms);
    finalized.nested_calls = executed.nested_calls;
    finalized.nested_usage = executed.nested_usage;
    finalized
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn finalize(
    call: &ToolCall,
    args: &Value,
    mut result: ToolOutput,
    mut is_error: bool,
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &LoopConfig,
    cancel: &CancellationToken,
    parent_tool_call_id: Option<&str>,
) -> Finalized {
    let view = ToolCallContext {
        assistant_message: assistant,
        tool_call: call,
        args,
        context,
        parent_tool_call_id,
    };
    let mut deadline = None;
    let after = within_grace(
        config.hooks.after_tool_call(view, &result, is_error, cancel),
        cancel,
        &mut deadline,
    )
    .await;
    match after {
        Some(Ok(Some(change))) => {
            if let Some(content) = change.content {
                result.content = content;
            }
            if let Some(details) = change.details {
                result.details = Some(details);
            }
            if let Some(terminate) = change.terminate {
                result.terminate = terminate;
            }
            if let Some(flag) = change.is_error {
                is_error = flag;
            }
        }
        Some(Ok(None)) => {}
        Some(Err(e)) => {
            result = error_output(e.0);
            is_error = true;
        }
        None => {
            result = error_output(OPERATION_ABORTED);
            is_error = true;
        }
    }
    Finalized {
        tool_call: call.clone(),
        result,
        is_error,
        duration_ms: None,
        nested_calls: None,
        nested_usage: None,
    }
}

async fn emit_start(call: &ToolCall, emitter: &Emitter<'_>) {
    emitter
        .emit(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
            parent_tool_call_id: None,
        })
        .await;
}

async fn emit_end(finalized: &Finalized, emitter: &Emitter<'_>) {
    emitter
        .emit(AgentEvent::ToolExecutionEnd {
            tool_call_id: finalized.tool_call.id.clone(),
            tool_name: finalized.tool_call.name.clone(),
            result: finalized.result.clone(),
            is_error: finalized.is_error,
            duration_ms: finalized.duration_ms,
            parent_tool_call_id: None,
        })
        .await;
}

/// Report the call's result message and return it.
async fn emit_result_message(finalized: Finalized, emitter: &Emitter<'_>) -> ToolResultMessage {
    let mut extra = pi_ai::Extra::new();
    // What the tool and the calls it made spent on models (pi 1.6's `usage` on the result
    // message, which the session's totals count).
    let usage = match (finalized.result.usage, finalized.nested_usage) {
        (Some(own), Some(nested)) => Some(crate::tool::combine_usage(&own, &nested)),
        (own, nested) => own.or(nested),
    };
    if let Some(usage) = usage.and_then(|u| serde_json::to_value(u).ok()) {
        extra.insert("usage".to_string(), usage);
    }
    if let Some(nested) = finalized.nested_calls {
        extra.insert("nestedCalls".to_string(), nested);
    }
    let message = ToolResultMessage {
        tool_call_id: finalized.tool_call.id,
        tool_name: finalized.tool_call.name,
        content: finalized.result.content,
        details: finalized.result.details,
        is_error: finalized.is_error,
        duration_ms: finalized.duration_ms,
        timestamp: now_ms(),
        extra,
    };
    emitter
        .emit(AgentEvent::MessageStart {
            message: message.clone().into(),
        })
        .await;
    match emitter.end_message(message.clone().into()).await {
        AgentMessage::Llm(Message::ToolResult(ended)) => Arc::unwrap_or_clone(ended),
        _ => message,
    }
}
