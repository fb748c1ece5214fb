//! The `codemode` tool in a session: its declaration (description, `code` parameter, prompt
//! snippet and guideline), and a call: wait for the MCP servers the script may reach, run it
//! through `pi-codemode` with the session as host, and turn the result into a tool result.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use pi_agent::{AgentTool, NestedPipeline, ToolError, ToolOutput, ToolRegistry, ToolUpdateFn};
use pi_ai::Content;
use pi_codemode::{Block, Limits};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::host::SessionHost;
use crate::mcp::McpRuntime;
use crate::session::agent_session::Inner;

pub struct CodemodeTool {
    description: String,
    registry: Weak<ToolRegistry>,
    session: Weak<Inner>,
    mcp: Option<Arc<McpRuntime>>,
}

impl CodemodeTool {
    pub(crate) fn new(
        description: String,
        registry: &Arc<ToolRegistry>,
        session: Weak<Inner>,
        mcp: Option<Arc<McpRuntime>>,
    ) -> CodemodeTool {
        CodemodeTool {
            description,
            registry: Arc::downgrade(registry),
            session,
            mcp,
        }
    }
}

/// Discovery globals can name any tool, so a script using one waits for every server.
const DISCOVERY_GLOBALS: [&str; 4] = ["searchTools", "describeNamespace", "describeTool", "ALL_TOOLS"];

/// Whether the script may reach MCP tools: it names an MCP namespace or looks tools up.
fn reaches_mcp(code: &str) -> bool {
    code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word.starts_with("mcp__") || DISCOVERY_GLOBALS.contains(&word))
}

fn to_content(blocks: Vec<Block>) -> Vec<Content> {
    blocks
        .into_iter()
        .map(|block| match block {
            Block::Text(text) => Content::text(text),
            Block::Image { data, mime_type } => Content::image(data, mime_type),
        })
        .collect()
}

#[async_trait]
impl AgentTool for CodemodeTool {
    fn name(&self) -> &str {
        pi_codemode::TOOL_NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"code": {"type": "string", "description": pi_codemode::description::CODE_DESCRIPTION}},
            "required": ["code"]
        })
    }

    fn prompt_snippet(&self) -> Option<String> {
        Some(pi_codemode::description::PROMPT_SNIPPET.to_string())
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        vec![pi_codemode::description::PROMPT_GUIDELINE.to_string()]
    }

    fn runs_nested_tools(&self) -> bool {
        true
    }

    /// APIs with grammar-constrained custom tools take the script as raw text.
    fn constrained_sampling(&self) -> Option<Value> {
        Some(json!({"type": "grammar", "variants": {"openai_lark": pi_codemode::SOURCE_GRAMMAR}}))
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let code = arguments
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let Some(registry) = self.registry.upgrade() else {
            return Err(ToolError::new("The session's tools are gone."));
        };
        if let Some(mcp) = self.mcp.as_ref().filter(|_| reaches_mcp(&code)) {
            tokio::select! {
                _ = mcp.wait_for_all() => {}
                _ = cancel.cancelled() => {}
            }
        }
        let host = Arc::new(SessionHost {
            registry,
            session: self.session.clone(),
            mcp: self.mcp.clone(),
            pipeline: NestedPipeline::current(),
        });
        let updates: pi_codemode::UpdateFn = Arc::new(move |details: Value| {
            on_update(ToolOutput {
                content: Vec::new(),
                details: Some(details),
                ..Default::default()
            })
        });
        let result = pi_codemode::execute(host, tool_call_id, &code, cancel, updates, Limits::default())
            .await
            .map_err(|e| ToolError::new(e.0))?;
        Ok(ToolOutput {
            content: to_content(result.content),
            details: Some(result.details),
            structured_content: None,
            is_error: result.is_error,
            terminate: false,
            // The script's model calls cost: on the result, so the session totals count it.
            usage: result.usage.and_then(|u| serde_json::from_value(u).ok()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_naming_mcp_tools_or_looking_tools_up_wait_for_the_servers() {
        assert!(reaches_mcp("await tools.mcp__demo__echo({})"));
        assert!(reaches_mcp("const t = await searchTools('x')"));
        assert!(!reaches_mcp("await tools.read({path: 'a'})"));
    }
}
