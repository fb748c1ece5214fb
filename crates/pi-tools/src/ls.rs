//! The `ls` tool: one directory's entries, sorted, `/` after directories, dotfiles included.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::cancellable;
use crate::collate::compare_names;
use crate::tool_support::{blocking, limit_arg, search_root, Notices};

const DEFAULT_LIMIT: usize = 500;

/// Lists directories for the model.
pub struct LsTool {
    cwd: PathBuf,
}

impl LsTool {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        LsTool { cwd: cwd.into() }
    }
}

/// Entries of `dir` with `/` after directories (following symlinks), unreadable ones skipped.
fn list(dir: &Path, limit: usize) -> Result<(Vec<String>, bool), ToolError> {
    if std::fs::symlink_metadata(dir).is_err() && std::fs::metadata(dir).is_err() {
        return Err(ToolError::new(format!("Path not found: {}", dir.display())));
    }
    let meta = std::fs::metadata(dir).map_err(|_| ToolError::new(format!("Path not found: {}", dir.display())))?;
    if !meta.is_dir() {
        return Err(ToolError::new(format!("Not a directory: {}", dir.display())));
    }
    let read = std::fs::read_dir(dir).map_err(|e| {
        ToolError::new(format!(
            "Cannot read directory: {}",
            crate::os_error::with_path(&e, "scandir", dir)
        ))
    })?;
    let mut names: Vec<String> = read
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort_by(|a, b| compare_names(a, b));
    let mut out = Vec::new();
    let mut limit_reached = false;
    for name in names {
        if out.len() >= limit {
            limit_reached = true;
            break;
        }
        let Ok(m) = std::fs::metadata(dir.join(&name)) else {
            continue;
        };
        out.push(if m.is_dir() { format!("{name}/") } else { name });
    }
    Ok((out, limit_reached))
}

#[async_trait]
impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        "List what a directory contains, dotfiles included, in alphabetical order with a '/' \
         after each directory name. At most 500 entries or 50KB are returned, whichever is smaller."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (the working directory when omitted)"},
                "limit": {"type": "number", "description": "Most entries to return (500 when omitted)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<String> {
        Some("List the entries of a directory".to_string())
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let args = Args::new("ls", &arguments);
        let dir = search_root(&args, &self.cwd)?;
        let limit = limit_arg(&args, DEFAULT_LIMIT, 1)?;
        cancellable(&cancel, async move {
            let (entries, limit_reached) = blocking(move || list(&dir, limit)).await??;
            if entries.is_empty() {
                return Ok(ToolOutput::text("(empty directory)"));
            }
            let mut notices = Notices::default();
            if limit_reached {
                notices.add(
                    format!("{limit} entries limit reached. Use limit={} for more", limit * 2),
                    "entryLimitReached",
                    json!(limit),
                );
            }
            let output = notices.cap_bytes(&entries);
            Ok(notices.finish(output))
        })
        .await
    }
}

pub(crate) fn tool(cwd: &Path) -> Arc<dyn AgentTool> {
    Arc::new(LsTool::new(cwd))
}
