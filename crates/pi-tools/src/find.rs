//! The `find` tool: files and directories by glob, with fd's output format and pi's notices.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::search::{find_files, FindResult};
use crate::tool_support::{ensure_live, limit_arg, run_search, search_root, Notices};

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
    let mut notices = Notices::default();
    if result.limit_reached {
        notices.add(
            format!(
                "{limit} results limit reached. Use limit={} for more, or refine pattern",
                limit * 2
            ),
            "resultLimitReached",
            json!(limit),
        );
    }
    let output = notices.cap_bytes(&result.paths);
    notices.finish(output)
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
                "pattern": {"type": "string", "description": "Glob to match, taken relative to the searched directory (such as 'src/**/*.test.ts'); one without a '/', such as '*.rs', matches file names at any depth"},
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
        let root = search_root(&args, &self.cwd)?;
        let limit = limit_arg(&args, DEFAULT_LIMIT, 1)?;
        ensure_live(&cancel)?;
        let result = run_search(&cancel, move |flag| find_files(&pattern, &root, limit, flag)).await?;
        Ok(format_found(&result, limit))
    }
}

pub(crate) fn tool(cwd: &Path) -> Arc<dyn AgentTool> {
    Arc::new(FindTool::new(cwd))
}
