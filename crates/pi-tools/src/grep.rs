//! The `grep` tool: content search with rg's output format, limits and notices.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::cancellable;
use crate::search::{grep_search, GrepParams, GrepResult};
use crate::tool_support::{blocking, ensure_live, limit_arg, run_search, search_root, Notices};
use crate::truncate::{truncate_line, GREP_MAX_LINE_LENGTH};

const DEFAULT_LIMIT: usize = 100;

/// Searches file contents for the model.
pub struct GrepTool {
    cwd: PathBuf,
}

impl GrepTool {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        GrepTool { cwd: cwd.into() }
    }
}

fn split_lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .split('\n')
        .map(str::to_string)
        .collect()
}

/// Format matches as pi does: `path:N: text`, context lines `path-N- text`.
pub fn format_matches(
    result: &GrepResult,
    root: &Path,
    is_directory: bool,
    context: usize,
    limit: usize,
) -> ToolOutput {
    let format_path = |p: &Path| -> String {
        if is_directory {
            if let Ok(rel) = p.strip_prefix(root) {
                let rel = rel.to_string_lossy().replace('\\', "/");
                if !rel.is_empty() && !rel.starts_with("..") {
                    return rel;
                }
            }
        }
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut lines_truncated = false;
    let mut out: Vec<String> = Vec::new();
    let mut cache: HashMap<&Path, Vec<String>> = HashMap::new();
    for (path, line_number, line) in result.matches() {
        let rel = format_path(path);
        if context == 0 {
            let text = line.replace("\r\n", "\n").replace('\r', "");
            let text = text.strip_suffix('\n').unwrap_or(&text);
            let (t, cut) = truncate_line(text, GREP_MAX_LINE_LENGTH);
            lines_truncated |= cut;
            out.push(format!("{rel}:{line_number}: {t}"));
            continue;
        }
        let lines = cache
            .entry(path)
            .or_insert_with(|| std::fs::read(path).map(|b| split_lines(&b)).unwrap_or_default());
        if lines.is_empty() {
            out.push(format!("{rel}:{line_number}: (unable to read file)"));
            continue;
        }
        let n = line_number as usize;
        let start = n.saturating_sub(context).max(1);
        let end = (n + context).min(lines.len());
        for current in start..=end {
            let text = lines.get(current - 1).map_or("", String::as_str).replace('\r', "");
            let (t, cut) = truncate_line(&text, GREP_MAX_LINE_LENGTH);
            lines_truncated |= cut;
            if current == n {
                out.push(format!("{rel}:{current}: {t}"));
            } else {
                out.push(format!("{rel}-{current}- {t}"));
            }
        }
    }
    let mut notices = Notices::default();
    if result.limit_reached {
        notices.add(
            format!(
                "{limit} matches limit reached. Use limit={} for more, or refine pattern",
                limit * 2
            ),
            "matchLimitReached",
            json!(limit),
        );
    }
    let output = notices.cap_bytes(&out);
    if lines_truncated {
        notices.add(
            format!("Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"),
            "linesTruncated",
            json!(true),
        );
    }
    notices.finish(output)
}

#[async_trait]
impl AgentTool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        "Search inside files for a regex or literal string and get each matching line with its \
         file path and line number. Files ignored by .gitignore are skipped. At most 100 matches \
         or 50KB come back, whichever is smaller, and lines longer than 500 chars are cut."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression, or plain text with literal=true"},
                "path": {"type": "string", "description": "File or directory to search (the working directory when omitted)"},
                "glob": {"type": "string", "description": "Only search files matching this glob, taken relative to path (such as 'src/**/*.test.ts'); one without a '/', such as '*.rs', matches file names at any depth"},
                "ignoreCase": {"type": "boolean", "description": "Match regardless of case (false when omitted)"},
                "literal": {"type": "boolean", "description": "Take the pattern as plain text, not a regex (false when omitted)"},
                "context": {"type": "number", "description": "Lines to include before and after each match (0 when omitted)"},
                "limit": {"type": "number", "description": "Most matches to return (100 when omitted)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<String> {
        Some("Search file contents by pattern, skipping .gitignored files".to_string())
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let args = Args::new("grep", &arguments);
        let pattern = args.string("pattern")?;
        let root = search_root(&args, &self.cwd)?;
        let glob = args.opt_string("glob")?;
        let ignore_case = args.opt_bool("ignoreCase")?.unwrap_or(false);
        let literal = args.opt_bool("literal")?.unwrap_or(false);
        let context = args
            .opt_number("context")?
            .map_or(0, |c| if c > 0.0 { c as usize } else { 0 });
        let limit = limit_arg(&args, DEFAULT_LIMIT, 1)?;
        ensure_live(&cancel)?;
        let is_directory = match tokio::fs::metadata(&root).await {
            Ok(m) => m.is_dir(),
            Err(_) => {
                return Err(ToolError::new(format!("Path not found: {}", root.display())));
            }
        };
        let params = GrepParams {
            pattern,
            root: root.clone(),
            glob,
            ignore_case,
            literal,
            limit,
        };
        let result = run_search(&cancel, move |flag| grep_search(&params, flag)).await?;
        if result.files.is_empty() {
            return Ok(ToolOutput::text("No matches found"));
        }
        cancellable(
            &cancel,
            blocking(move || format_matches(&result, &root, is_directory, context, limit)),
        )
        .await
    }
}

pub(crate) fn tool(cwd: &Path) -> Arc<dyn AgentTool> {
    Arc::new(GrepTool::new(cwd))
}
