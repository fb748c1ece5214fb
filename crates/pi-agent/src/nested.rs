//! Tool calls made by a running tool (codemode's scripts): while a tool that asks for it
//! ([`AgentTool::runs_nested_tools`]) executes, [`NestedPipeline::current`] gives it the run's
//! tool pipeline, so each nested call is validated, passes the `before_tool_call` and
//! `after_tool_call` hooks and honours the abort exactly like a call of the model. Each nested
//! call is reported as pi 1.6 reports it: `tool_execution_start/update/end` carrying
//! `parentToolCallId` (emitted by the batch, in order with the run's other events), and a
//! record of the calls that becomes `nestedCalls` on the running call's result message.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use pi_ai::{AssistantMessage, ToolCall};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{Emitter, LoopConfig, ABORT_GRACE};
use crate::batch::{error_output, finalize, prepare_tool, Preparation, OPERATION_ABORTED};
use crate::context::AgentContext;
use crate::event::{lock, AgentEvent};
use crate::nested_record::NestedRecorder;
use crate::tool::{AgentTool, ToolOutput, ToolUpdateFn};

tokio::task_local! {
    static PIPELINE: Arc<NestedPipeline>;
}

/// What the batch lends a tool's execution to build the pipeline from.
#[derive(Clone, Copy)]
pub(crate) struct PipelineParts<'a> {
    pub context: &'a AgentContext,
    pub assistant: &'a AssistantMessage,
    pub config: &'a LoopConfig,
}

/// The run's tool pipeline as a running tool sees it.
pub struct NestedPipeline {
    /// The run's context without its transcript: hooks see the prompt and the tools, and a
    /// nested call does not copy the whole history.
    context: AgentContext,
    assistant: AssistantMessage,
    config: LoopConfig,
    /// The call whose execution this pipeline serves (`parentToolCallId` of every nested call).
    parent_id: String,
    /// The nested calls' events, emitted by the batch in the run's event order.
    events: mpsc::Sender<Forwarded>,
    record: Mutex<NestedRecorder>,
}

/// The result of one nested call.
#[derive(Debug, Clone)]
pub struct NestedOutcome {
    pub tool_call: ToolCall,
    pub result: ToolOutput,
    pub is_error: bool,
    /// How long the tool ran; `None` when it never ran (invalid arguments, blocked).
    pub duration_ms: Option<u64>,
}

/// A nested call's event on its way to the run's listeners; `ack` is answered once they saw
/// it, so a call starts only after its `tool_execution_start` was delivered (as in pi 1.6).
pub(crate) struct Forwarded {
    event: AgentEvent,
    ack: Option<oneshot::Sender<()>>,
}

impl Forwarded {
    pub(crate) async fn emit(self, emitter: &Emitter<'_>) {
        emitter.emit(self.event).await;
        if let Some(ack) = self.ack {
            // The nested call may have been dropped meanwhile; nothing waits then.
            let _ = ack.send(());
        }
    }
}

/// The pipeline of one tool execution, when the tool runs nested tools, and the receiving end
/// of its calls' events.
pub(crate) struct NestedScope {
    pipeline: Option<Arc<NestedPipeline>>,
    events: Option<mpsc::Receiver<Forwarded>>,
}

/// Events of one tool's nested calls waiting for the batch to emit them. Starts and ends are
/// waited for, so only progress updates can fill it.
const NESTED_EVENT_QUEUE: usize = 1024;

impl NestedScope {
    pub(crate) fn new(tool: &Arc<dyn AgentTool>, call: &ToolCall, parts: PipelineParts<'_>) -> NestedScope {
        if !tool.runs_nested_tools() {
            return NestedScope {
                pipeline: None,
                events: None,
            };
        }
        let (sender, receiver) = mpsc::channel(NESTED_EVENT_QUEUE);
        let pipeline = Arc::new(NestedPipeline {
            context: AgentContext {
                system_prompt: parts.context.system_prompt.clone(),
                messages: Vec::new(),
                tools: parts.context.tools.clone(),
            },
            assistant: parts.assistant.clone(),
            config: parts.config.clone(),
            parent_id: call.id.clone(),
            events: sender,
            record: Mutex::new(NestedRecorder::default()),
        });
        NestedScope {
            pipeline: Some(pipeline),
            events: Some(receiver),
        }
    }

    /// `fut` (the tool's execution) with the pipeline available to it.
    pub(crate) fn wrap<F: Future>(&self, fut: F) -> impl Future<Output = F::Output> {
        let pipeline = self.pipeline.clone();
        async move {
            match pipeline {
                Some(pipeline) => PIPELINE.scope(pipeline, fut).await,
                None => fut.await,
            }
        }
    }

    /// The next event of a nested call; never ready for a tool without nested calls.
    pub(crate) async fn next_event(&mut self) -> Option<Forwarded> {
        match self.events.as_mut() {
            Some(events) => events.recv().await,
            None => std::future::pending().await,
        }
    }

    /// An event still waiting once the tool finished.
    pub(crate) fn pending_event(&mut self) -> Option<Forwarded> {
        self.events.as_mut()?.try_recv().ok()
    }

    /// The record of the calls made (`nestedCalls` of the result message), if any was made.
    pub(crate) fn take_record(&self) -> Option<Value> {
        let pipeline = self.pipeline.as_ref()?;
        let record = lock(&pipeline.record).snapshot();
        record
    }

    /// What the calls made spent on model calls of their own, summed.
    pub(crate) fn nested_usage(&self) -> Option<pi_ai::Usage> {
        let pipeline = self.pipeline.as_ref()?;
        let usage = lock(&pipeline.record).usage();
        usage
    }
}

impl NestedPipeline {
    /// The pipeline of the tool execution this task is running, if it asked for one.
    pub fn current() -> Option<Arc<NestedPipeline>> {
        PIPELINE.try_with(Arc::clone).ok()
    }

    /// Hand `event` to the run's listeners and wait until they saw it.
    async fn deliver(&self, event: AgentEvent) {
        let (ack, delivered) = oneshot::channel();
        if self.events.send(Forwarded { event, ack: Some(ack) }).await.is_ok() {
            // An error means the execution ended and the event was dropped with it.
            let _ = delivered.await;
        }
    }

    /// Run `tool` for `call` through validation, the hooks and the abort grace, reporting it
    /// as a call of the running tool (`tool_execution_*` with `parentToolCallId`).
    pub async fn run(
        &self,
        tool: Arc<dyn AgentTool>,
        call: ToolCall,
        cancel: &CancellationToken,
        on_update: ToolUpdateFn,
    ) -> NestedOutcome {
        let recorded = lock(&self.record).start(&call);
        let parent = Some(self.parent_id.clone());
        self.deliver(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
            parent_tool_call_id: parent.clone(),
        })
        .await;
        let outcome = self.execute(tool, call, cancel, on_update).await;
        {
            let mut record = lock(&self.record);
            record.finish(recorded, outcome.is_error, &outcome.result);
            if let Some(usage) = &outcome.result.usage {
                record.add_usage(usage);
            }
        }
        self.deliver(AgentEvent::ToolExecutionEnd {
            tool_call_id: outcome.tool_call.id.clone(),
            tool_name: outcome.tool_call.name.clone(),
            result: outcome.result.clone(),
            is_error: outcome.is_error,
            duration_ms: outcome.duration_ms,
            parent_tool_call_id: parent,
        })
        .await;
        outcome
    }

    async fn execute(
        &self,
        tool: Arc<dyn AgentTool>,
        call: ToolCall,
        cancel: &CancellationToken,
        on_update: ToolUpdateFn,
    ) -> NestedOutcome {
        let parent = Some(self.parent_id.as_str());
        let prepared = prepare_tool(
            &tool,
            &call,
            &self.context,
            &self.assistant,
            &self.config,
            cancel,
            parent,
        )
        .await;
        let (tool, args) = match prepared {
            Preparation::Immediate(result) => {
                return NestedOutcome {
                    tool_call: call,
                    result: *result,
                    is_error: true,
                    duration_ms: None,
                }
            }
            Preparation::Prepared { tool, args } => (tool, args),
        };
        let updates = self.events.clone();
        let (id, name, arguments, parent_id) = (
            call.id.clone(),
            call.name.clone(),
            call.arguments.clone(),
            self.parent_id.clone(),
        );
        let forward: ToolUpdateFn = Arc::new(move |partial: ToolOutput| {
            on_update(partial.clone());
            // Progress is not waited for: a tool reports it from synchronous code. Past the
            // queue's bound an update is dropped; the next one, or the result, supersedes it.
            let _ = updates.try_send(Forwarded {
                event: AgentEvent::ToolExecutionUpdate {
                    tool_call_id: id.clone(),
                    tool_name: name.clone(),
                    args: arguments.clone(),
                    partial_result: partial,
                    parent_tool_call_id: Some(parent_id.clone()),
                },
                ack: None,
            });
        });
        let started = std::time::Instant::now();
        let run = AssertUnwindSafe(tool.execute(&call.id, args.clone(), cancel.child_token(), forward)).catch_unwind();
        tokio::pin!(run);
        let outcome = tokio::select! {
            biased;
            out = &mut run => Some(out),
            _ = cancel.cancelled() => {
                tokio::time::timeout_at(Instant::now() + ABORT_GRACE, &mut run).await.ok()
            }
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (result, is_error) = match outcome {
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
            Some(Err(_)) => (error_output(format!("Tool {} failed", call.name)), true),
            None => (error_output(OPERATION_ABORTED), true),
        };
        let finalized = finalize(
            &call,
            &args,
            result,
            is_error,
            &self.context,
            &self.assistant,
            &self.config,
            cancel,
            parent,
        )
        .await;
        NestedOutcome {
            tool_call: finalized.tool_call,
            result: finalized.result,
            is_error: finalized.is_error,
            duration_ms: Some(duration_ms),
        }
    }
}

/// A nested call of `name` with `arguments` under `id`.
pub fn nested_call(id: String, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id,
        name: name.to_string(),
        arguments,
        thought_signature: None,
        extra: Default::default(),
    }
}
