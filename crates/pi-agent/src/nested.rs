//! Tool calls made by a running tool (codemode's scripts): while a tool that asks for it
//! ([`AgentTool::runs_nested_tools`]) executes, [`NestedPipeline::current`] gives it the run's
//! tool pipeline, so each nested call is validated, passes the `before_tool_call` and
//! `after_tool_call` hooks and honours the abort exactly like a call of the model.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use pi_ai::{AssistantMessage, ToolCall};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{LoopConfig, ABORT_GRACE};
use crate::batch::{error_output, finalize, prepare_tool, Preparation, OPERATION_ABORTED};
use crate::context::AgentContext;
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
}

/// The result of one nested call.
#[derive(Debug, Clone)]
pub struct NestedOutcome {
    pub tool_call: ToolCall,
    pub result: ToolOutput,
    pub is_error: bool,
}

/// Run `fut` (the execution of `tool`) with the pipeline available when the tool asks for it.
pub(crate) async fn scoped<F: Future>(
    tool: &Arc<dyn AgentTool>,
    _call: &ToolCall,
    parts: PipelineParts<'_>,
    fut: F,
) -> F::Output {
    if !tool.runs_nested_tools() {
        return fut.await;
    }
    let pipeline = Arc::new(NestedPipeline {
        context: AgentContext {
            system_prompt: parts.context.system_prompt.clone(),
            messages: Vec::new(),
            tools: parts.context.tools.clone(),
        },
        assistant: parts.assistant.clone(),
        config: parts.config.clone(),
    });
    PIPELINE.scope(pipeline, fut).await
}

impl NestedPipeline {
    /// The pipeline of the tool execution this task is running, if it asked for one.
    pub fn current() -> Option<Arc<NestedPipeline>> {
        PIPELINE.try_with(Arc::clone).ok()
    }

    /// Run `tool` for `call` through validation, the hooks and the abort grace.
    pub async fn run(
        &self,
        tool: Arc<dyn AgentTool>,
        call: ToolCall,
        cancel: &CancellationToken,
        on_update: ToolUpdateFn,
    ) -> NestedOutcome {
        let (tool, args) = match prepare_tool(&tool, &call, &self.context, &self.assistant, &self.config, cancel).await
        {
            Preparation::Immediate(result) => {
                return NestedOutcome {
                    tool_call: call,
                    result,
                    is_error: true,
                }
            }
            Preparation::Prepared { tool, args } => (tool, args),
        };
        let run =
            AssertUnwindSafe(tool.execute(&call.id, args.clone(), cancel.child_token(), on_update)).catch_unwind();
        tokio::pin!(run);
        let outcome = tokio::select! {
            biased;
            out = &mut run => Some(out),
            _ = cancel.cancelled() => {
                tokio::time::timeout_at(Instant::now() + ABORT_GRACE, &mut run).await.ok()
            }
        };
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
        )
        .await;
        NestedOutcome {
            tool_call: finalized.tool_call,
            result: finalized.result,
            is_error: finalized.is_error,
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
