//! The tool interface the loop executes: schema, execution mode, and the async `execute`.

use std::sync::Arc;

use async_trait::async_trait;
use pi_ai::{Content, Tool};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Whether a tool may run alongside others in the same batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    #[default]
    Parallel,
    /// Any sequential tool in a batch makes the whole batch sequential.
    Sequential,
}

/// What a tool produced: content the model sees, details for the UI and the session file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    pub content: Vec<Content>,
    pub details: Option<Value>,
    /// A machine-readable result for programmatic callers; it travels on
    /// `tool_execution_end`, never to the model or into the session.
    pub structured_content: Option<Value>,
    /// A returned result that still counts as a failure (a command that exited non-zero).
    pub is_error: bool,
    /// Ask the loop to end the run after this batch (honoured only if every result asks).
    pub terminate: bool,
    /// What the tool spent on model calls of its own (a codemode script's `models.*`): it
    /// goes on the result message, so the session's totals include it (pi 1.6).
    pub usage: Option<pi_ai::Usage>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::text(text)],
            ..Default::default()
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// The sum of two usages, as pi 1.6 adds up what a tool and the calls it made spent: counts
/// and costs added, the optional splits kept when either side has them, and the total
/// counted as the provider's own only when both are.
pub fn combine_usage(first: &pi_ai::Usage, second: &pi_ai::Usage) -> pi_ai::Usage {
    let either = |a: Option<u64>, b: Option<u64>| (a.is_some() || b.is_some()).then(|| a.unwrap_or(0) + b.unwrap_or(0));
    let (a, b) = (&first.cost, &second.cost);
    pi_ai::Usage {
        input: first.input + second.input,
        output: first.output + second.output,
        cache_read: first.cache_read + second.cache_read,
        cache_write: first.cache_write + second.cache_write,
        reasoning: either(first.reasoning, second.reasoning),
        total_tokens: first.total_tokens + second.total_tokens,
        cost: pi_ai::UsageCost {
            input: a.input + b.input,
            output: a.output + b.output,
            cache_read: a.cache_read + b.cache_read,
            cache_write: a.cache_write + b.cache_write,
            total: a.total + b.total,
            total_from_provider: Some(a.total_from_provider == Some(true) && b.total_from_provider == Some(true)),
        },
        cache_write_1h: either(first.cache_write_1h, second.cache_write_1h),
    }
}

/// A failed execution. The model sees `message` as an error tool result; nothing panics.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub message: String,
    pub details: Option<Value>,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            details: None,
        }
    }
}

/// Receives partial results while a tool runs (becomes `tool_execution_update`).
pub type ToolUpdateFn = Arc<dyn Fn(ToolOutput) + Send + Sync>;

/// A tool the agent can call.
#[async_trait]
pub trait AgentTool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// A human label for UIs.
    fn label(&self) -> &str {
        self.name()
    }
    /// The description sent to the model.
    fn description(&self) -> &str;
    /// JSON schema of the arguments.
    fn parameters(&self) -> Value;
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    /// One line for the system prompt's tool list (`None`: not listed).
    fn prompt_snippet(&self) -> Option<String> {
        None
    }
    /// Guideline bullets the system prompt adds while this tool is active.
    fn prompt_guidelines(&self) -> Vec<String> {
        Vec::new()
    }
    /// pi's `constrainedSampling` declaration (`{"type": "json_schema", "strict": "prefer"}`
    /// for the built-in file and shell tools): how far a provider may hold the arguments to the
    /// schema. `None` declares nothing.
    fn constrained_sampling(&self) -> Option<Value> {
        None
    }
    /// Whether the tool calls other tools while it runs (codemode): its execution then gets
    /// the run's tool pipeline through [`crate::nested::NestedPipeline::current`].
    fn runs_nested_tools(&self) -> bool {
        false
    }
    /// Rewrite raw arguments before validation (e.g. fold a legacy shape into the current one).
    fn prepare_arguments(&self, arguments: Value) -> Value {
        arguments
    }
    /// Run the tool. `cancel` fires on abort; `on_update` streams partial output.
    async fn execute(
        &self,
        tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError>;

    /// The tool as the LLM sees it.
    fn spec(&self) -> Tool {
        Tool {
            name: self.name().to_string(),
            description: self.description().to_string(),
            parameters: self.parameters(),
            constrained_sampling: self.constrained_sampling(),
        }
    }
}
