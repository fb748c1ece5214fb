//! The `ls` tool: one directory's entries, sorted, `/` after directories, dotfiles included.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::cancellable;
use crate::collate::compare_names;
use crate::paths::resolve_to_cwd;
use crate::truncate::{format_size, truncate_head, DEFAULT_MAX_BYTES, NO_LINE_LIMIT};

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
        let path = args.opt_string("path")?.filter(|p| !p.is_empty());
        let limit = args
            .opt_number("limit")?
            .map_or(DEFAULT_LIMIT, |l| if l.is_nan() || l < 0.0 { 0 } else { l as usize });
        let dir = resolve_to_cwd(path.as_deref().unwrap_or("."), &self.cwd);
        cancellable(&cancel, async move {
            let (entries, limit_reached) = tokio::task::spawn_blocking(move || list(&dir, limit))
                .await
                .map_err(|e| ToolError::new(e.to_string()))??;
            if entries.is_empty() {
                return Ok(ToolOutput::text("(empty directory)"));
            }
            let truncation = truncate_head(&entries.join("\n"), NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
            let mut output = truncation.content.clone();
            let mut details = Map::new();
            let mut notices = Vec::new();
            if limit_reached {
                notices.push(format!(
                    "{limit} entries limit reached. Use limit={} for more",
                    limit * 2
                ));
                details.insert("entryLimitReached".into(), json!(limit));
            }
            if truncation.truncated {
                notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
                details.insert("truncation".into(), truncation.to_value());
            }
            if !notices.is_empty() {
                output.push_str(&format!("\n\n[{}]", notices.join(". ")));
            }
            let mut out = ToolOutput::text(output);
            if !details.is_empty() {
                out.details = Some(Value::Object(details));
            }
            Ok(out)
        })
        .await
    }
}

pub(crate) fn tool(cwd: &Path) -> Arc<dyn AgentTool> {
    Arc::new(LsTool::new(cwd))
}
