//! The `bash` tool: runs a command through `exec_bash` and words the result as pi does.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use pi_ai::Content;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::args::{js_number, Args};
use crate::exec::{exec_bash, BashOptions, BashOutcome, BashProgress};
use crate::truncate::{format_size, TruncatedBy, DEFAULT_MAX_BYTES};
use crate::ToolsOptions;

/// Runs shell commands for the model.
pub struct BashTool {
    cwd: PathBuf,
    options: ToolsOptions,
}

impl BashTool {
    pub fn new(cwd: impl Into<PathBuf>, options: ToolsOptions) -> Self {
        BashTool {
            cwd: cwd.into(),
            options,
        }
    }

    /// The configured extra variables, then the session's `PI_*` ones as they are now.
    fn command_env(&self) -> Vec<(String, String)> {
        let mut env = self.options.env.clone();
        if let Some(session) = &self.options.session_env {
            env.extend(session.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
        }
        env
    }
}

fn progress_details(p: &crate::output::OutputSnapshot) -> Value {
    let mut d = Map::new();
    if p.truncation.truncated {
        d.insert("truncation".into(), p.truncation.to_value());
    }
    if let Some(path) = &p.full_output_path {
        d.insert("fullOutputPath".into(), json!(path.display().to_string()));
    }
    Value::Object(d)
}

/// The result text (output plus any truncation notice) and details of a finished command.
pub fn format_outcome(outcome: &BashOutcome, empty_text: &str) -> (String, Option<Value>) {
    let mut text = if outcome.output.is_empty() {
        empty_text.to_string()
    } else {
        outcome.output.clone()
    };
    if !outcome.truncation.truncated {
        return (text, None);
    }
    let t = &outcome.truncation;
    let path = outcome
        .full_output_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let start = t.total_lines - t.output_lines + 1;
    let end = t.total_lines;
    if t.last_line_partial {
        text.push_str(&format!(
            "\n\n[Showing last {} of line {end} (line is {}). Full output: {path}]",
            format_size(t.output_bytes),
            format_size(outcome.last_line_bytes)
        ));
    } else if t.truncated_by == Some(TruncatedBy::Lines) {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {}. Full output: {path}]",
            t.total_lines
        ));
    } else {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {} ({} limit). Full output: {path}]",
            t.total_lines,
            format_size(DEFAULT_MAX_BYTES)
        ));
    }
    let details = json!({ "truncation": t.to_value(), "fullOutputPath": path });
    (text, Some(details))
}

fn append_status(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_string()
    } else {
        format!("{text}\n\n{status}")
    }
}

#[async_trait]
impl AgentTool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        "Run a bash command in the working directory and get its combined stdout and stderr. \
         Only the last 2000 lines or 50KB of output come back, whichever is smaller; when output \
         is cut, the whole of it is kept in a temp file. A timeout in seconds is optional."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "The command line the shell runs"},
                "timeout": {"type": "number", "description": "Seconds before the command is killed (optional; no limit by default)"}
            }
        })
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(crate::prefer_schema_sampling())
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        if self.options.session_env.is_some() {
            vec!["The PI_* environment variables describe the current model and session.".to_string()]
        } else {
            Vec::new()
        }
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Run shell commands (ls, grep, find, tests, builds, ...)".to_string())
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let args = Args::new("bash", &arguments);
        let command = args.string("command")?;
        let timeout = args.opt_number("timeout")?;
        validate_timeout(timeout)?;
        let opts = BashOptions {
            shell_path: self.options.shell_path.clone(),
            command_prefix: self.options.command_prefix.clone(),
            timeout_secs: timeout,
            bin_dir: self.options.bin_dir.clone(),
            env: self.command_env(),
            unset: crate::SESSION_ENV_NAMES.iter().map(|n| n.to_string()).collect(),
            temp_file_prefix: None,
        };
        on_update(ToolOutput::default());
        let updates = on_update.clone();
        let mut progress = move |p: BashProgress| {
            updates(ToolOutput {
                content: vec![Content::text(p.snapshot.content.clone())],
                details: Some(progress_details(&p.snapshot)),
                structured_content: None,
                is_error: false,
                terminate: false,
                usage: None,
            });
        };
        let started = std::time::Instant::now();
        let outcome = exec_bash(&command, &self.cwd, &opts, cancel, Some(&mut progress))
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        if outcome.cancelled {
            let (text, _) = format_outcome(&outcome, "");
            return Err(ToolError::new(append_status(&text, "Command aborted")));
        }
        if outcome.timed_out {
            let (text, _) = format_outcome(&outcome, "");
            let secs = timeout.map(js_number).unwrap_or_default();
            return Err(ToolError::new(append_status(
                &text,
                &format!("Command timed out after {secs} seconds"),
            )));
        }
        let (text, details) = format_outcome(&outcome, "(no output)");
        let Some(code) = outcome.exit_code else {
            // Killed by a signal: there is no exit status to report.
            return Err(ToolError::new(append_status(
                &text,
                "Command terminated without an exit code",
            )));
        };
        let structured = structured_result(&outcome, code, started.elapsed()).await;
        // A non-zero exit is a result, not a failure of the tool: it still carries the output
        // for programmatic callers, and counts as an error for the model.
        let text = if code != 0 {
            append_status(&text, &format!("Command exited with code {code}"))
        } else {
            text
        };
        Ok(ToolOutput {
            content: vec![Content::text(text)],
            details,
            structured_content: Some(structured),
            is_error: code != 0,
            terminate: false,
            usage: None,
        })
    }
}

/// Most output bytes a programmatic caller gets (the first and last halves beyond that).
const STRUCTURED_OUTPUT_MAX_BYTES: u64 = 1024 * 1024;

/// The whole output (up to [`STRUCTURED_OUTPUT_MAX_BYTES`]) for `structuredContent`, and whether
/// it was cut.
async fn full_output(outcome: &BashOutcome) -> (String, bool) {
    let Some(path) = outcome.full_output_path.as_ref() else {
        return (outcome.output.clone(), false);
    };
    let Ok(bytes) = tokio::fs::read(path).await else {
        return (outcome.output.clone(), false);
    };
    let size = bytes.len();
    let max = STRUCTURED_OUTPUT_MAX_BYTES as usize;
    if size <= max {
        return (String::from_utf8_lossy(&bytes).into_owned(), false);
    }
    let head_len = max / 2;
    let tail_len = max - head_len;
    // Cut at character boundaries: an incomplete sequence at the end of the head is dropped, and
    // the tail skips leading continuation bytes.
    let mut head_end = head_len;
    while head_end > 0 && head_end < size && (bytes[head_end] & 0xc0) == 0x80 {
        head_end -= 1;
    }
    let mut tail_start = size - tail_len;
    while tail_start < size && (bytes[tail_start] & 0xc0) == 0x80 {
        tail_start += 1;
    }
    let omitted = size - head_len - tail_len;
    let text = format!(
        "{}\n\n[... {omitted} bytes omitted ...]\n\n{}",
        String::from_utf8_lossy(&bytes[..head_end]),
        String::from_utf8_lossy(&bytes[tail_start..])
    );
    (text, true)
}

/// `{output, truncated, full_output_path?, exit_code, wall_time_seconds}` for programmatic
/// callers; the wall time in tenths of a second.
async fn structured_result(outcome: &BashOutcome, code: i32, elapsed: std::time::Duration) -> Value {
    let (output, truncated) = full_output(outcome).await;
    let mut v = Map::new();
    v.insert("output".into(), json!(output));
    v.insert("truncated".into(), json!(truncated));
    if let (true, Some(path)) = (truncated, outcome.full_output_path.as_ref()) {
        v.insert("full_output_path".into(), json!(path.display().to_string()));
    }
    v.insert("exit_code".into(), json!(code));
    let tenths = (elapsed.as_secs_f64() * 10.0).round() / 10.0;
    let wall = if tenths.fract() == 0.0 {
        json!(tenths as i64)
    } else {
        json!(tenths)
    };
    v.insert("wall_time_seconds".into(), wall);
    Value::Object(v)
}

/// The longest timer the runtime can arm, in milliseconds (a signed 32-bit count).
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

/// A timeout must be a positive, finite number of seconds that fits the longest timer.
fn validate_timeout(timeout: Option<f64>) -> Result<(), ToolError> {
    let Some(t) = timeout else {
        return Ok(());
    };
    if !t.is_finite() || t <= 0.0 {
        return Err(ToolError::new("Invalid timeout: must be a finite number of seconds"));
    }
    if t * 1000.0 > MAX_TIMEOUT_MS {
        return Err(ToolError::new(format!(
            "Invalid timeout: maximum is {} seconds",
            MAX_TIMEOUT_MS / 1000.0
        )));
    }
    Ok(())
}

pub(crate) fn tool(cwd: &std::path::Path, options: &ToolsOptions) -> Arc<dyn AgentTool> {
    Arc::new(BashTool::new(cwd, options.clone()))
}
