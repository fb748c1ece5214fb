//! The prompt pipeline's extension points ([`SessionExtensions`]) answered by the extension
//! host: commands, `input` and `before_agent_start`.

use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::AgentMessage;
use pi_extensions::protocol::ExtensionError;
use pi_extensions::InputOutcome;
use serde_json::{json, Map, Value};

use super::observe::EventObserver;
use super::ExtensionSlot;
use crate::session::boundary::BoundaryResult;
use crate::session::events::SessionEvent;
use crate::session::extensions::{
    BeforeAgentStart, CompactDecision, ExtensionSummary, InputAction, SessionExtensions, TreeDecision, UserBashDecision,
};

/// The session's view of the loaded extensions.
pub struct ExtensionBridge {
    slot: Arc<ExtensionSlot>,
    observer: EventObserver,
}

impl ExtensionBridge {
    pub fn new(slot: Arc<ExtensionSlot>) -> Self {
        ExtensionBridge {
            slot,
            observer: EventObserver::default(),
        }
    }
}

/// A message an extension returned from `before_agent_start`, as pi records it: a `custom`
/// message stamped now unless the extension gave its own role and time.
fn custom_message(value: Value) -> Option<AgentMessage> {
    let Value::Object(fields) = value else { return None };
    let mut map = Map::new();
    map.insert(
        "role".into(),
        fields.get("role").cloned().unwrap_or_else(|| json!("custom")),
    );
    for (key, field) in fields {
        if key != "role" {
            map.insert(key, field);
        }
    }
    if !map.contains_key("display") {
        map.insert("display".into(), Value::Bool(true));
    }
    if !map.contains_key("timestamp") {
        map.insert("timestamp".into(), json!(pi_ai::now_ms()));
    }
    AgentMessage::from_map(map).ok()
}

#[async_trait]
impl SessionExtensions for ExtensionBridge {
    async fn run_command(&self, name: &str, args: &str) -> Option<Result<(), String>> {
        let runner = self.slot.runner()?;
        // By the name it is run by: `name:2` for the second of a name several extensions
        // register (the name alone then runs none of them, as in pi 1.6).
        if !runner.registrations().command_invocations().iter().any(|n| n == name) {
            return None;
        }
        self.observer.sync_entries(&self.slot, &runner);
        match runner.run_command(name, args).await {
            Ok(result) if !result.found => None,
            Ok(result) => {
                // pi reports a throwing command like any extension error and goes on.
                self.slot.report(result.error.into_iter().collect()).await;
                Some(Ok(()))
            }
            Err(error) => {
                self.slot.host_failed("command", &error).await;
                Some(Ok(()))
            }
        }
    }

    async fn on_input(&self, text: &str) -> InputAction {
        let Some(runner) = self.slot.runner() else {
            return InputAction::Continue;
        };
        // Print and JSON prompts count as typed ones, as in pi.
        let emitted = runner.emit_input(text, None, "interactive", None).await;
        // Actions the handlers took (`pi.setActiveTools`, ...) were queued before the answer
        // came; let the queue apply them before the prompt goes on, as pi applies them at once.
        tokio::task::yield_now().await;
        match self.slot.settle("input", emitted).await {
            Some(InputOutcome::Transform { text, .. }) => InputAction::Transform(text),
            Some(InputOutcome::Handled) => InputAction::Handled,
            Some(InputOutcome::Continue) | None => InputAction::Continue,
        }
    }

    async fn before_agent_start(&self, prompt: &str, system_prompt: &str, options: &Value) -> BeforeAgentStart {
        let Some(runner) = self.slot.runner() else {
            return BeforeAgentStart::default();
        };
        if !runner.registrations().handles("before_agent_start") {
            return BeforeAgentStart::default();
        }
        let payload = json!({
            "messageType": "user",
            "prompt": prompt,
            "systemPrompt": system_prompt,
            "systemPromptOptions": options,
        });
        let emitted = runner.emit_before_agent_start(payload).await;
        tokio::task::yield_now().await;
        let Some(outcome) = self.slot.settle("before_agent_start", emitted).await else {
            return BeforeAgentStart::default();
        };
        BeforeAgentStart {
            messages: outcome.messages.into_iter().filter_map(custom_message).collect(),
            system_prompt: outcome.system_prompt,
            options: outcome.system_prompt_options,
        }
    }

    async fn observe(&self, event: &SessionEvent<'_>) {
        self.observer.observe(&self.slot, event).await;
    }

    fn handles(&self, event: &str) -> bool {
        self.slot.runner().is_some_and(|r| r.registrations().handles(event))
    }

    fn sync_mirror(&self) {
        if let Some(runner) = self.slot.runner() {
            self.observer.sync_entries(&self.slot, &runner);
        }
    }

    async fn user_bash(&self, command: &str, exclude_from_context: bool, cwd: &str) -> UserBashDecision {
        let Some(runner) = self.slot.runner() else {
            return UserBashDecision::Run;
        };
        if !runner.registrations().handles("user_bash") {
            return UserBashDecision::Run;
        }
        let payload = json!({ "command": command, "excludeFromContext": exclude_from_context, "cwd": cwd });
        // pi fails closed here: a handler that throws stops the command.
        let (result, errors) = match runner.dispatch("user_bash", payload).await {
            Ok(dispatched) => (dispatched.result, dispatched.errors),
            Err(error) => {
                self.slot.host_failed("user_bash", &error).await;
                return UserBashDecision::Run;
            }
        };
        self.slot.report(errors).await;
        user_bash_decision(&result)
    }

    async fn before_tree(&self, payload: Value) -> TreeDecision {
        let Some(runner) = self.slot.runner() else {
            return TreeDecision::default();
        };
        let emitted = runner.emit_session_before("session_before_tree", payload).await;
        let Some(outcome) = self.slot.settle("session_before_tree", emitted).await else {
            return TreeDecision::default();
        };
        let result = &outcome.result;
        let text = |key: &str| result.get(key).and_then(Value::as_str).map(str::to_string);
        TreeDecision {
            cancel: outcome.cancel,
            summary: result.get("summary").and_then(|s| {
                let field = |key: &str| s.get(key).filter(|v| !v.is_null()).cloned();
                Some(ExtensionSummary {
                    summary: s.get("summary").and_then(Value::as_str)?.to_string(),
                    details: field("details"),
                    usage: field("usage"),
                })
            }),
            custom_instructions: text("customInstructions"),
            replace_instructions: result.get("replaceInstructions").and_then(Value::as_bool),
            label: text("label"),
        }
    }

    async fn before_compact(&self, payload: Value) -> CompactDecision {
        let Some(runner) = self.slot.runner() else {
            return CompactDecision::Proceed;
        };
        let emitted = runner.emit_session_before("session_before_compact", payload).await;
        let Some(outcome) = self.slot.settle("session_before_compact", emitted).await else {
            return CompactDecision::Proceed;
        };
        if outcome.cancel {
            return CompactDecision::Cancel;
        }
        let Some(given) = outcome.result.get("compaction").filter(|c| c.is_object()) else {
            return CompactDecision::Proceed;
        };
        let text = |key: &str| given.get(key).and_then(Value::as_str).map(str::to_string);
        match (text("summary"), text("firstKeptEntryId")) {
            (Some(summary), Some(first_kept_entry_id)) => CompactDecision::Use {
                summary,
                first_kept_entry_id,
                tokens_before: given.get("tokensBefore").and_then(Value::as_u64),
                details: given.get("details").filter(|d| !d.is_null()).cloned(),
                usage: given.get("usage").filter(|u| !u.is_null()).cloned(),
            },
            _ => CompactDecision::Proceed,
        }
    }

    async fn boundary(&self, event: &str, payload: Value) -> Option<BoundaryResult> {
        let runner = self.slot.runner()?;
        let dispatched = runner.dispatch(event, payload).await.map(|d| (d.result, d.errors));
        self.slot.apply_pending_actions().await;
        let result = self.slot.settle(event, dispatched).await?;
        BoundaryResult::from_result(&result)
    }

    async fn cache_warming_decision(&self, payload: Value) -> Option<bool> {
        const EVENT: &str = "cache_warming_decision";
        let runner = self.slot.runner()?;
        if !runner.registrations().handles(EVENT) {
            return None;
        }
        let dispatched = runner.dispatch(EVENT, payload).await.map(|d| (d.result, d.errors));
        // The last handler that returned an action wins (combined by the host).
        match self.slot.settle(EVENT, dispatched).await?.get("action")?.as_str()? {
            "warm" => Some(true),
            "stop" => Some(false),
            _ => None,
        }
    }

    async fn report_boundary_error(&self, event: &str, message: String) {
        self.slot
            .report(vec![ExtensionError {
                extension_path: "<boundary>".to_string(),
                event: event.to_string(),
                error: message,
                stack: None,
            }])
            .await;
    }
}

/// The host's combined `user_bash` answer: nothing (run), `{result}`, `{abort, error}` (a
/// handler threw or answered badly: pi fails closed), or `{operations}`. Operations objects
/// carry functions, which cannot cross to pi: the command is refused rather than run somewhere
/// the extension did not mean.
fn user_bash_decision(result: &Value) -> UserBashDecision {
    if result.is_null() {
        return UserBashDecision::Run;
    }
    if result.get("abort").and_then(Value::as_bool) == Some(true) {
        let error = result
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("user_bash handler failed");
        return UserBashDecision::Abort(error.to_string());
    }
    if let Some(given) = result.get("result") {
        return match serde_json::from_value::<crate::session::user_bash::BashResult>(given.clone()) {
            Ok(bash) => UserBashDecision::Result(bash),
            Err(e) => UserBashDecision::Abort(format!("Invalid user_bash handler result: {e}")),
        };
    }
    if result.get("operations").is_some() {
        return UserBashDecision::Abort(
            "user_bash handler returned operations, which this build cannot run: the command was not run".into(),
        );
    }
    UserBashDecision::Abort("Invalid user_bash handler result: return either operations or result".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_bash_answers_are_read_as_pi_reads_them() {
        assert_eq!(user_bash_decision(&Value::Null), UserBashDecision::Run);
        let given = json!({"result": {"output": "faked", "exitCode": 0, "cancelled": false, "truncated": false}});
        let UserBashDecision::Result(bash) = user_bash_decision(&given) else {
            panic!("not a result");
        };
        assert_eq!(bash.output, "faked");
        assert!(matches!(
            user_bash_decision(&json!({"abort": true, "error": "boom"})),
            UserBashDecision::Abort(m) if m == "boom"
        ));
        assert!(matches!(
            user_bash_decision(&json!({"operations": true, "extensionPath": "x"})),
            UserBashDecision::Abort(_)
        ));
    }

    #[test]
    fn a_returned_message_becomes_a_custom_message() {
        let message = custom_message(json!({"customType": "note", "content": "hi"}));
        let Some(AgentMessage::Custom(custom)) = message else {
            panic!("not a custom message: {message:?}");
        };
        assert_eq!(custom.role, "custom");
        assert_eq!(custom.fields.get("customType"), Some(&json!("note")));
        assert!(custom.fields.contains_key("timestamp"));
        assert_eq!(custom_message(json!("text")), None);
    }
}
