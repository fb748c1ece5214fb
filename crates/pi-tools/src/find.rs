//! The `find` tool: files and directories by glob, with fd's output format and pi's notices.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::aborted;
use crate::args::Args;
use crate::grep::run_blocking;
use crate::paths::resolve_to_cwd;
use crate::search::{find_files, FindResult};
use crate::truncate::{format_size, truncate_head, DEFAULT_MAX_BYTES, NO_LINE_LIMIT};

const DEFAULT_LIMIT: usize = 1000;

/// Finds files by name for the model.
pub struct FindTool {
    cwd: PathBuf,
}

impl FindTool {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        FindTool { cwd: cwd.into() }
    }
}

/// Word a find result as pi does.
pub fn format_found(result: &FindResult, limit: usize) -> ToolOutput {
    if result.paths.is_empty() {
        return ToolOutput::text("No files found matching pattern");
    }
    let truncation = truncate_head(&result.paths.join("\n"), NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
    let mut output = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if result.limit_reached {
        notices.push(format!(
            "{limit} results limit reached. Use limit={} for more, or refine pattern",
            limit * 2
        ));
        details.insert("resultLimitReached".into(), json!(limit));
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
    out
}

#[async_trait]
impl AgentTool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn description(&self) -> &str {
        "Find files by glob pattern and get their paths relative to the searched directory. \
         Files ignored by .gitignore are skipped. At most 1000 results or 50KB come back, \
         whichever is smaller."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Glob to match, such as '*.rs', '**/*.json' or 'src/**/*.test.ts'"},
                "path": {"type": "string", "description": "Directory to search (the working directory when omitted)"},
                "limit": {"type": "number", "description": "Most results to return (1000 when omitted)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<String> {
        Some("Find files by glob pattern, skipping .gitignored files".to_string())
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let args = Args::new("find", &arguments);
        let pattern = args.string("pattern")?;
        let path = args.opt_string("path")?.filter(|p| !p.is_empty());
        let limit = args
            .opt_number("limit")?
            .map_or(DEFAULT_LIMIT, |l| if l >= 1.0 { l as usize } else { 1 });
        let root = resolve_to_cwd(path.as_deref().unwrap_or("."), &self.cwd);
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        let result = run_blocking(&cancel, move |flag| find_files(&pattern, &root, limit, flag))
            .await?
            .map_err(ToolError::new)?;
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        Ok(format_found(&result, limit))
    }
}

pub(crate) fn tool(cwd: &Path) -> Arc<dyn AgentTool> {
    Arc::new(FindTool::new(cwd))
}
