//! The `write` tool: create or overwrite a file, making parent folders, inside the mutation queue.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::os_error;
use crate::paths::resolve_to_cwd;
use crate::tool_support::mutate_file;

/// Writes files for the model.
pub struct WriteTool {
    cwd: PathBuf,
}

impl WriteTool {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        WriteTool { cwd: cwd.into() }
    }
}

async fn write_file(abs: &Path, path: &str, content: &str) -> Result<ToolOutput, ToolError> {
    if let Some(parent) = abs.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| ToolError::new(os_error::with_path(&e, "mkdir", parent)))?;
    }
    tokio::fs::write(abs, content)
        .await
        .map_err(|e| ToolError::new(os_error::with_path(&e, "open", abs)))?;
    Ok(ToolOutput::text(format!("Successfully wrote to {path}")))
}

#[async_trait]
impl AgentTool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        "Write a file with the given content, replacing it if it exists and creating it (and any \
         missing parent folders) if it does not."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {
                "path": {"type": "string", "description": "File to write, relative to the working directory or absolute"},
                "content": {"type": "string", "description": "The complete new content of the file"}
            }
        })
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(crate::prefer_schema_sampling())
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Create a file or replace its whole content".to_string())
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        vec!["Keep write for new files and full rewrites.".to_string()]
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let args = Args::new("write", &arguments);
        let path = args.string("path")?;
        let content = args.string("content")?;
        let abs = resolve_to_cwd(&path, &self.cwd);
        mutate_file(&abs, &cancel, write_file(&abs, &path, &content)).await
    }
}

pub(crate) fn tool(cwd: &Path) -> Arc<dyn AgentTool> {
    Arc::new(WriteTool::new(cwd))
}
