//! User shell commands (`!cmd`, `!!cmd`, RPC `bash`): run in the session's folder and recorded
//! as `bashExecution` messages (kept out of the LLM context with `!!`).

use pi_agent::{AgentMessage, CustomMessage};
use pi_session::SessionManager;
use pi_tools::exec::{exec_bash, BashOptions, BashProgress};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::agent_session::{lock, AgentSession, PromptError};
use super::extensions::UserBashDecision;

/// `bash` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashResult {
    /// stdout and stderr combined, sanitized, perhaps truncated.
    pub output: String,
    /// Omitted when the process was killed or cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

impl AgentSession {
    /// Run `command`; `on_chunk` receives output as it arrives. The execution is added to the
    /// transcript and the session file now, or after the current run when one is active.
    pub async fn execute_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        cancel: CancellationToken,
        mut on_chunk: Option<&mut (dyn FnMut(&str) + Send)>,
    ) -> Result<BashResult, PromptError> {
        let extensions = self.extensions();
        let cwd = self.cwd().display().to_string();
        match extensions.user_bash(command, exclude_from_context, &cwd).await {
            UserBashDecision::Run => {}
            UserBashDecision::Abort(message) => return Err(PromptError::Bash(message)),
            UserBashDecision::Result(result) => {
                self.record_user_bash(command, &result, exclude_from_context);
                return Ok(result);
            }
        }
        let options = {
            let settings = lock(&self.inner.settings);
            BashOptions {
                shell_path: settings.shell_path().map(Into::into),
                command_prefix: settings.shell_command_prefix().map(str::to_string),
                ..Default::default()
            }
        };
        let mut forward = |p: BashProgress| {
            if let Some(f) = on_chunk.as_mut() {
                f(&p.new_text);
            }
        };
        let outcome = exec_bash(command, self.cwd(), &options, cancel, Some(&mut forward))
            .await
            .map_err(|e| PromptError::Bash(e.to_string()))?;
        let result = BashResult {
            output: outcome.output,
            exit_code: outcome.exit_code,
            cancelled: outcome.cancelled,
            truncated: outcome.truncated,
            full_output_path: outcome.full_output_path.map(|p| p.display().to_string()),
        };
        self.record_user_bash(command, &result, exclude_from_context);
        Ok(result)
    }

    /// Add the execution to the transcript now, or after the current run when one is active.
    fn record_user_bash(&self, command: &str, result: &BashResult, exclude_from_context: bool) {
        let message = bash_execution_message(command, result, exclude_from_context);
        if self.is_streaming() {
            lock(&self.inner.held_messages).push(message);
        } else {
            self.record_outside_run(message);
        }
    }

    /// Add a message outside a run: to the transcript and the session file (a custom message
    /// an extension sent as a `custom_message` entry, as pi records it).
    pub(crate) fn record_outside_run(&self, message: AgentMessage) {
        self.inner.agent.append_message(message.clone());
        let result = self.with_store(|s| append_recorded(s, &message));
        if let Err(e) = result {
            lock(&self.inner.persist_error).get_or_insert(e.to_string());
        }
    }

    /// Record user commands that finished while a run was active.
    pub(crate) fn flush_held_messages(&self) {
        let pending = std::mem::take(&mut *lock(&self.inner.held_messages));
        for message in pending {
            self.record_outside_run(message);
        }
    }
}

fn bash_execution_message(command: &str, result: &BashResult, exclude_from_context: bool) -> AgentMessage {
    let mut fields = Map::new();
    fields.insert("command".into(), json!(command));
    fields.insert("output".into(), json!(result.output));
    fields.insert("exitCode".into(), result.exit_code.map_or(Value::Null, |c| json!(c)));
    fields.insert("cancelled".into(), json!(result.cancelled));
    fields.insert("truncated".into(), json!(result.truncated));
    if let Some(p) = &result.full_output_path {
        fields.insert("fullOutputPath".into(), json!(p));
    }
    fields.insert("timestamp".into(), json!(pi_ai::now_ms()));
    if exclude_from_context {
        fields.insert("excludeFromContext".into(), json!(true));
    }
    AgentMessage::from(CustomMessage::new("bashExecution", fields))
}

/// Write `message` to `store` as pi records a message added outside a run: an extension's
/// custom message as a `custom_message` entry, anything else as a `message` entry.
pub(crate) fn append_recorded(store: &mut SessionManager, message: &AgentMessage) -> pi_session::Result<String> {
    match message {
        AgentMessage::Custom(custom) if custom.role == "custom" => {
            let field = |key: &str| custom.fields.get(key).cloned();
            let content = field("content")
                .and_then(|c| serde_json::from_value(c).ok())
                .unwrap_or_default();
            let custom_type = custom
                .fields
                .get("customType")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let display = custom.fields.get("display").and_then(Value::as_bool).unwrap_or(true);
            store.append_custom_message(custom_type, content, display, field("details").filter(|d| !d.is_null()))
        }
        _ => store.append_message(message.clone()),
    }
}
