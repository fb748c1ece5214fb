//! An MCP server's tool as one of the session's tools: the model calls it by its
//! `mcp__<server>__<tool>` name, the call goes through the normal tool pipeline (validation,
//! hooks, abort) and reaches the server, and the result comes back cut as pi cuts it.

use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use pi_ai::Content;
use pi_mcp::{CallOptions, ContentBlock, ConvertOptions, McpTool, Progress};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::server::McpServer;

pub struct McpAgentTool {
    name: String,
    label: String,
    description: String,
    parameters: Value,
    /// The tool's name on its server.
    tool: String,
    server: Arc<McpServer>,
    /// Whether resource links in results may point at `read_mcp_resource`.
    readable_resources: bool,
}

impl McpAgentTool {
    pub fn new(name: String, server: Arc<McpServer>, tool: &McpTool, readable_resources: bool) -> McpAgentTool {
        let server_name = server.name().to_string();
        McpAgentTool {
            name,
            label: pi_mcp::mcp_tool_label(&server_name, &tool.name),
            description: tool.model_description(&server_name),
            parameters: tool.input_schema.clone(),
            tool: tool.name.clone(),
            server,
            readable_resources,
        }
    }
}

/// Model content from the client's blocks.
pub fn to_content(blocks: Vec<ContentBlock>) -> Vec<Content> {
    blocks
        .into_iter()
        .map(|block| match block {
            ContentBlock::Text { text } => Content::text(text),
            ContentBlock::Image { data, mime_type } => Content::image(data, mime_type),
        })
        .collect()
}

#[async_trait]
impl AgentTool for McpAgentTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let server = self.server.name().to_string();
        let details = json!({"server": server, "tool": self.tool});
        let client = self
            .server
            .client_for_call(&cancel)
            .await
            .map_err(|message| ToolError {
                message,
                details: Some(details.clone()),
            })?;
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let update_details = details.clone();
        let options = CallOptions {
            cancel: Some(cancel),
            timeout: None,
            on_progress: Some(Arc::new(move |progress: &Progress| {
                on_update(ToolOutput {
                    content: vec![Content::text(progress.display_text())],
                    details: Some(update_details.clone()),
                    ..Default::default()
                })
            })),
        };
        let result = client
            .call_tool(&self.tool, Some(arguments), &options)
            .await
            .map_err(|e| ToolError {
                message: e.to_string(),
                details: Some(details),
            })?;
        let convert = ConvertOptions {
            readable_resources: self.readable_resources,
            ..ConvertOptions::default()
        };
        let output = pi_mcp::convert_tool_result(&server, &self.tool, &result, &convert);
        Ok(ToolOutput {
            content: to_content(output.content),
            details: Some(output.details),
            structured_content: Some(output.structured_content),
            is_error: output.is_error,
            terminate: false,
            usage: None,
        })
    }
}
