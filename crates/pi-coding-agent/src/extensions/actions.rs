//! The `pi.*` actions of extensions that change the session, applied in the order the host
//! sent them: custom entries, the session name, labels, active tools, the thinking level, the
//! model, and messages sent into the conversation (`pi.sendMessage`, `pi.sendUserMessage`)
//! with pi 1.6's delivery rules.

use std::sync::Arc;

use pi_agent::AgentMessage;
use pi_ai::{Content, ImageContent, ThinkingLevel, UserContent};
use serde_json::{Map, Value};

use super::ExtensionSlot;
use crate::session::{AgentSession, StreamingBehavior};

/// The path pi names in errors that belong to the runtime rather than one extension.
const RUNTIME_PATH: &str = "<runtime>";

/// Apply one fire-and-forget session action.
pub async fn apply(slot: &Arc<ExtensionSlot>, session: &AgentSession, method: &str, params: &Value) {
    match method {
        "pi.appendEntry" => {
            let custom_type = params.get("customType").and_then(Value::as_str).unwrap_or_default();
            let data = params.get("data").filter(|d| !d.is_null()).cloned();
            // A failed write shows as the session's persist error at exit.
            let entry = session.with_store(|s| {
                let id = s.append_custom(custom_type, data).ok()?;
                s.get_entry(&id).and_then(|e| serde_json::to_value(e).ok())
            });
            // Announced as pi does (the terminal UI draws it with its entry renderer).
            if let Some(entry) = entry {
                session
                    .emit(crate::session::SessionEvent::EntryAppended { entry })
                    .await;
            }
        }
        "pi.setSessionName" => {
            if let Some(name) = params.get("name").and_then(Value::as_str) {
                // As above: a failed write is the session's persist error.
                let _ = session.set_session_name(name).await;
            }
        }
        "pi.setLabel" => {
            if let Some(entry_id) = params.get("entryId").and_then(Value::as_str) {
                let label = params.get("label").and_then(Value::as_str);
                let _ = session.with_store(|s| s.append_label(entry_id, label));
            }
        }
        "pi.setActiveTools" => {
            let names: Vec<String> = params
                .get("names")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default();
            session.tool_registry().set_active(&names);
        }
        "pi.setThinkingLevel" => {
            if let Some(level) = params
                .get("level")
                .and_then(Value::as_str)
                .and_then(ThinkingLevel::parse)
            {
                session.set_thinking_level(level).await;
            }
        }
        "registrations.changed" => {
            let Some(runner) = slot.runner() else { return };
            match runner.refresh_registrations().await {
                Ok(_) => {
                    // Tools registered after load join the session at once (as in pi 1.6), so
                    // a `setActiveTools` that follows can name them.
                    let registry = session.tool_registry();
                    for (tool, meta) in pi_extensions::extension_tools(&runner) {
                        if registry.get(tool.name()).is_none() {
                            registry.register(tool, meta);
                        }
                    }
                    super::providers::apply(slot, session).await;
                }
                Err(error) => slot.host_failed("registrations", &error).await,
            }
        }
        "pi.sendMessage" => send_message(session, params).await,
        "pi.sendUserMessage" => send_user_message(slot, session, params).await,
        _ => {}
    }
}

/// `pi.setModel`: `true` when the session switched to the model (it has credentials).
pub async fn set_model(session: &AgentSession, params: &Value) -> bool {
    let model = params.get("model");
    let provider = model.and_then(|m| m.get("provider")).and_then(Value::as_str);
    let id = model.and_then(|m| m.get("id")).and_then(Value::as_str);
    let (Some(provider), Some(id)) = (provider, id) else {
        return false;
    };
    let Some(found) = session.find_model(provider, id) else {
        return false;
    };
    session.set_model(found).await.is_ok()
}

/// A `sendMessage` message as the custom message pi records: `role:"custom"`, its
/// `customType`, `content`, `display` and `details`, stamped now.
fn custom_message(message: &Value) -> Option<AgentMessage> {
    let Value::Object(given) = message else { return None };
    let mut fields = Map::new();
    fields.insert("role".into(), Value::from("custom"));
    for key in ["customType", "content", "display", "details"] {
        if let Some(value) = given.get(key) {
            fields.insert(key.into(), value.clone());
        }
    }
    if !fields.contains_key("display") {
        fields.insert("display".into(), Value::Bool(true));
    }
    fields.insert("timestamp".into(), Value::from(pi_ai::now_ms()));
    AgentMessage::from_map(fields).ok()
}

/// pi 1.6's delivery of `pi.sendMessage` (extensions-1.6.md §2.1).
async fn send_message(session: &AgentSession, params: &Value) {
    deliver_message(session, params, false).await;
}

/// A replaced session's `ctx.sendMessage`: delivered as `pi.sendMessage`, but a run it starts
/// is waited for.
pub async fn send_message_and_wait(session: &AgentSession, params: &Value) {
    deliver_message(session, params, true).await;
}

async fn deliver_message(session: &AgentSession, params: &Value, wait: bool) {
    let Some(message) = params.get("message").and_then(custom_message) else {
        return;
    };
    let options = params.get("options");
    let deliver_as = options.and_then(|o| o.get("deliverAs")).and_then(Value::as_str);
    let trigger_turn = options.and_then(|o| o.get("triggerTurn")).and_then(Value::as_bool);
    if deliver_as == Some("nextTurn") {
        session.queue_for_next_turn(message);
        return;
    }
    if session.is_streaming() {
        match (trigger_turn, deliver_as) {
            // Held until the run ends, never between a tool call and its result.
            (Some(false), _) => session.hold_until_run_ends(message),
            (_, Some("followUp")) => session.agent().follow_up(message),
            _ => session.agent().steer(message),
        }
        return;
    }
    if trigger_turn == Some(true) && wait {
        // Its failures are the run's events, as for any prompt.
        let _ = session.prompt_custom(message).await;
    } else if trigger_turn == Some(true) {
        // A run of its own; the action queue goes on meanwhile.
        let session = session.clone();
        tokio::spawn(async move {
            // Its failures are the run's events, as for any prompt.
            let _ = session.prompt_custom(message).await;
        });
    } else {
        session.record_outside_run(message.clone());
        // As pi: the appended message is announced, so the screen shows it at once.
        let start = pi_agent::AgentEvent::MessageStart {
            message: message.clone(),
        };
        session.emit(crate::session::SessionEvent::Agent(&start)).await;
        let end = pi_agent::AgentEvent::MessageEnd { message };
        session.emit(crate::session::SessionEvent::Agent(&end)).await;
    }
}

/// The text and images of `sendUserMessage` content (a string or content blocks).
fn user_content(content: Option<&Value>) -> (String, Vec<ImageContent>) {
    let Some(content) = content else {
        return (String::new(), Vec::new());
    };
    match serde_json::from_value::<UserContent>(content.clone()) {
        Ok(UserContent::Text(text)) => (text, Vec::new()),
        Ok(UserContent::Blocks(blocks)) => {
            let mut text = Vec::new();
            let mut images = Vec::new();
            for block in blocks {
                match block {
                    Content::Text(t) => text.push(t.text),
                    Content::Image(i) => images.push(i),
                    _ => {}
                }
            }
            (text.join("\n"), images)
        }
        Err(_) => (String::new(), Vec::new()),
    }
}

/// How a user message sent during a run is queued: its `options.deliverAs` (`steer` or
/// `followUp`); `None` when it names neither (pi refuses the message as busy).
fn queue_behavior(params: &Value) -> Option<StreamingBehavior> {
    match params.get("options")?.get("deliverAs")?.as_str()? {
        "steer" => Some(StreamingBehavior::Steer),
        "followUp" => Some(StreamingBehavior::FollowUp),
        _ => None,
    }
}

/// `pi.sendUserMessage`: a prompt while idle, queued with `deliverAs` during a run, else the
/// error pi reports as the runtime's.
async fn send_user_message(slot: &Arc<ExtensionSlot>, session: &AgentSession, params: &Value) {
    let (text, images) = user_content(params.get("content"));
    if session.is_streaming() {
        let behavior = match queue_behavior(params) {
            Some(behavior) => behavior,
            None => {
                let error = crate::session::PromptError::Busy.to_string();
                slot.ui()
                    .report_extension_error(RUNTIME_PATH, "send_user_message", &error)
                    .await;
                return;
            }
        };
        if let Err(error) = session.enqueue(behavior, text, images).await {
            slot.ui()
                .report_extension_error(RUNTIME_PATH, "send_user_message", &error.to_string())
                .await;
        }
        return;
    }
    let session = session.clone();
    let slot = Arc::clone(slot);
    tokio::spawn(async move {
        if let Err(error) = session.prompt(&text, images).await {
            slot.ui()
                .report_extension_error(RUNTIME_PATH, "send_user_message", &error.to_string())
                .await;
        }
    });
}

/// A replaced session's `ctx.sendUserMessage`: a prompt while idle, waited for (pi 1.6
/// awaits the run); queued with `deliverAs` during a run. A prompt that cannot start is an
/// error for the caller.
pub async fn send_user_message_and_wait(session: &AgentSession, params: &Value) -> Result<(), String> {
    let (text, images) = user_content(params.get("content"));
    if session.is_streaming() {
        let Some(behavior) = queue_behavior(params) else {
            return Err(crate::session::PromptError::Busy.to_string());
        };
        return session.enqueue(behavior, text, images).await.map_err(|e| e.to_string());
    }
    session.prompt(&text, images).await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sent_message_is_a_displayed_custom_message() {
        let message = custom_message(&json!({"customType": "note", "content": "hi", "extra": 1}));
        let Some(AgentMessage::Custom(custom)) = message else {
            panic!("not a custom message: {message:?}");
        };
        assert_eq!(custom.role, "custom");
        assert_eq!(custom.fields.get("display"), Some(&json!(true)));
        assert_eq!(custom.fields.get("content"), Some(&json!("hi")));
        assert!(!custom.fields.contains_key("extra"));
    }

    #[test]
    fn user_content_splits_text_and_images() {
        let (text, images) = user_content(Some(&json!([
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "b"}
        ])));
        assert_eq!(text, "a\nb");
        assert_eq!(images.len(), 1);
        assert_eq!(user_content(Some(&json!("plain"))).0, "plain");
    }
}
