//! Moving messages between the agent's transcript and the session store, and what the LLM sees
//! of pi's own message roles.

use pi_agent::{AgentMessage, CustomMessage};
use pi_ai::Message;
use serde_json::Value;

/// The session store's form of an agent message.
pub fn to_stored(message: &AgentMessage) -> pi_session::AgentMessage {
    match message {
        AgentMessage::Llm(m) => pi_session::AgentMessage::Llm(m.clone()),
        AgentMessage::Custom(c) => {
            let mut map = serde_json::Map::with_capacity(c.fields.len() + 1);
            map.insert("role".into(), Value::String(c.role.clone()));
            map.extend(
                c.fields
                    .iter()
                    .filter(|(k, _)| *k != "role")
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
            pi_session::AgentMessage::Custom(map)
        }
    }
}

/// The agent's form of a stored message.
pub fn from_stored(message: &pi_session::AgentMessage) -> AgentMessage {
    match message {
        pi_session::AgentMessage::Llm(m) => AgentMessage::Llm(m.clone()),
        pi_session::AgentMessage::Custom(map) => {
            let role = map.get("role").and_then(Value::as_str).unwrap_or_default().to_string();
            let mut fields = map.clone();
            fields.remove("role");
            AgentMessage::Custom(CustomMessage::new(role, fields))
        }
    }
}

/// What the LLM sees: its own roles as they are, pi's roles (bash executions, summaries,
/// extension messages) as user messages, as the session format defines.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    let stored: Vec<pi_session::AgentMessage> = messages.iter().map(to_stored).collect();
    pi_session::convert_to_llm(&stored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn custom_messages_round_trip_through_the_store_form() {
        let original: AgentMessage = serde_json::from_value(json!({
            "role": "bashExecution", "command": "ls", "output": "a\n", "exitCode": 0,
            "cancelled": false, "truncated": false, "timestamp": 5
        }))
        .expect("parse");
        let stored = to_stored(&original);
        assert_eq!(
            serde_json::to_value(&stored).expect("json"),
            serde_json::to_value(&original).expect("json")
        );
        assert_eq!(from_stored(&stored), original);
    }

    #[test]
    fn bash_executions_reach_the_llm_as_user_text() {
        let bash: AgentMessage = serde_json::from_value(json!({
            "role": "bashExecution", "command": "echo hi", "output": "hi\n", "exitCode": 0,
            "cancelled": false, "truncated": false, "timestamp": 5
        }))
        .expect("parse");
        let llm = convert_to_llm(&[bash]);
        assert_eq!(llm.len(), 1);
        assert_eq!(llm[0].role(), "user");
    }
}
