//! Extension tools as agent tools: [`ExtensionTool`] runs a tool registered in the host through
//! the runner, so the session adds it to its `ToolRegistry` like any other tool.

use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ExecutionMode, Exposure, ToolError, ToolMeta, ToolOutput, ToolSource, ToolUpdateFn};
use pi_ai::Content;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::{ToolInfo, ToolResult};
use crate::runner::{ExtensionRunner, ToolCall};

/// One extension tool, callable from the agent loop.
pub struct ExtensionTool {
    runner: Arc<ExtensionRunner>,
    info: ToolInfo,
    owner: String,
}

impl ExtensionTool {
    pub fn new(runner: Arc<ExtensionRunner>, info: ToolInfo, owner: impl Into<String>) -> ExtensionTool {
        ExtensionTool {
            runner,
            info,
            owner: owner.into(),
        }
    }

    /// The registry metadata pi derives from the definition (exposure, `defaultActive`).
    pub fn meta(&self) -> ToolMeta {
        ToolMeta::of(self, ToolSource::Extension(self.owner.clone()))
            .exposure(
                self.info
                    .exposure
                    .as_deref()
                    .and_then(Exposure::parse)
                    .unwrap_or_default(),
            )
            .default_active(self.info.default_active != Some(false))
    }
}

/// Every tool the runner's extensions registered (the first owner of a name wins), with its
/// registry metadata.
pub fn extension_tools(runner: &Arc<ExtensionRunner>) -> Vec<(Arc<dyn AgentTool>, ToolMeta)> {
    runner
        .registrations()
        .tools()
        .into_iter()
        .map(|(ext, info)| {
            let tool = ExtensionTool::new(runner.clone(), info.clone(), ext.path.clone());
            let meta = tool.meta();
            (Arc::new(tool) as Arc<dyn AgentTool>, meta)
        })
        .collect()
}

fn content_of(values: &[Value]) -> Vec<Content> {
    values
        .iter()
        .filter_map(|v| serde_json::from_value::<Content>(v.clone()).ok())
        .collect()
}

fn output_of(result: &ToolResult) -> ToolOutput {
    ToolOutput {
        content: content_of(&result.content),
        details: (!result.details.is_null()).then(|| result.details.clone()),
        terminate: result.terminate.unwrap_or(false),
        ..Default::default()
    }
}

fn text_of(values: &[Value]) -> String {
    values
        .iter()
        .filter_map(|v| v.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

#[async_trait]
impl AgentTool for ExtensionTool {
    fn name(&self) -> &str {
        &self.info.name
    }

    fn label(&self) -> &str {
        self.info.label.as_deref().unwrap_or(&self.info.name)
    }

    fn description(&self) -> &str {
        self.info.description.as_deref().unwrap_or_default()
    }

    fn parameters(&self) -> Value {
        self.info.parameters.clone()
    }

    fn execution_mode(&self) -> ExecutionMode {
        match self.info.execution_mode.as_deref() {
            Some("sequential") => ExecutionMode::Sequential,
            _ => ExecutionMode::Parallel,
        }
    }

    fn prompt_snippet(&self) -> Option<String> {
        self.info
            .prompt_snippet
            .as_ref()
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        match &self.info.prompt_guidelines {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            Some(Value::String(one)) => vec![one.clone()],
            _ => Vec::new(),
        }
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let (updates, mut partials) = tokio::sync::mpsc::channel(crate::connection::TOOL_UPDATE_QUEUE);
        let call = ToolCall {
            call_id: tool_call_id.to_string(),
            name: self.info.name.clone(),
            params: arguments,
        };
        let running = self.runner.call_tool(call, Some(updates), &cancel);
        tokio::pin!(running);
        let result = loop {
            tokio::select! {
                result = &mut running => break result,
                Some(partial) = partials.recv() => on_update(output_of(&partial)),
            }
        };
        // Updates sent just before the result still count.
        while let Ok(partial) = partials.try_recv() {
            on_update(output_of(&partial));
        }
        match result {
            Ok(result) if result.is_error => Err(ToolError {
                message: text_of(&result.content),
                details: (!result.details.is_null() && result.details != Value::Object(Default::default()))
                    .then(|| result.details.clone()),
            }),
            Ok(result) => Ok(output_of(&result)),
            Err(error) => Err(ToolError::new(format!(
                "Extension tool \"{}\" failed: {error}",
                self.info.name
            ))),
        }
    }
}
