//! Agent messages: the LLM's messages plus application-defined custom roles.
//!
//! The coding agent keeps messages in its transcript that the LLM never sees as such
//! (`bashExecution`, `custom`, `branchSummary`, `compactionSummary`). They are stored flat, exactly
//! as the TypeScript pi writes them (`{"role": "...", ...fields}`), and `convertToLlm` decides what
//! the model gets from them.

use pi_ai::{AssistantMessage, Message, ToolResultMessage, UserMessage};
use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A message with a role the LLM does not know; every field but `role` is kept as is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CustomMessage {
    pub role: String,
    /// The other fields, in their original order.
    pub fields: Map<String, Value>,
}

impl CustomMessage {
    pub fn new(role: impl Into<String>, fields: Map<String, Value>) -> Self {
        CustomMessage {
            role: role.into(),
            fields,
        }
    }

    /// The `timestamp` field when it is a number (ms since the epoch).
    pub fn timestamp(&self) -> Option<i64> {
        self.fields.get("timestamp").and_then(Value::as_i64)
    }
}

impl Serialize for CustomMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.fields.len() + 1))?;
        map.serialize_entry("role", &self.role)?;
        for (k, v) in &self.fields {
            if k != "role" {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// A transcript entry: an LLM message or a custom one.
// Most entries are LLM messages; boxing them would cost an allocation each for little gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    Llm(Message),
    Custom(CustomMessage),
}

impl AgentMessage {
    /// A user message holding one text block, stamped now.
    pub fn user_text(text: impl Into<String>) -> Self {
        AgentMessage::Llm(Message::user_text(text))
    }

    pub fn role(&self) -> &str {
        match self {
            AgentMessage::Llm(m) => m.role(),
            AgentMessage::Custom(c) => &c.role,
        }
    }

    pub fn as_llm(&self) -> Option<&Message> {
        match self {
            AgentMessage::Llm(m) => Some(m),
            AgentMessage::Custom(_) => None,
        }
    }

    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            AgentMessage::Llm(Message::Assistant(m)) => Some(m),
            _ => None,
        }
    }

    pub fn as_tool_result(&self) -> Option<&ToolResultMessage> {
        match self {
            AgentMessage::Llm(Message::ToolResult(m)) => Some(m),
            _ => None,
        }
    }

    pub fn as_custom(&self) -> Option<&CustomMessage> {
        match self {
            AgentMessage::Custom(c) => Some(c),
            AgentMessage::Llm(_) => None,
        }
    }

    pub fn timestamp(&self) -> Option<i64> {
        match self {
            AgentMessage::Llm(m) => Some(m.timestamp()),
            AgentMessage::Custom(c) => c.timestamp(),
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        AgentMessage::Llm(m)
    }
}

impl From<UserMessage> for AgentMessage {
    fn from(m: UserMessage) -> Self {
        AgentMessage::Llm(Message::User(m))
    }
}

impl From<AssistantMessage> for AgentMessage {
    fn from(m: AssistantMessage) -> Self {
        AgentMessage::Llm(Message::Assistant(m))
    }
}

impl From<ToolResultMessage> for AgentMessage {
    fn from(m: ToolResultMessage) -> Self {
        AgentMessage::Llm(Message::ToolResult(m))
    }
}

impl From<CustomMessage> for AgentMessage {
    fn from(m: CustomMessage) -> Self {
        AgentMessage::Custom(m)
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentMessage::Llm(m) => m.serialize(serializer),
            AgentMessage::Custom(c) => c.serialize(serializer),
        }
    }
}

/// The LLM roles decide by `role`: a malformed `user` message is an error, not a custom message,
/// so a damaged entry is reported instead of silently changing meaning.
impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Value::Object(mut map) = value else {
            return Err(D::Error::custom("a message must be a JSON object"));
        };
        let role = match map.get("role") {
            Some(Value::String(r)) => r.clone(),
            _ => return Err(D::Error::custom("a message needs a string `role`")),
        };
        match role.as_str() {
            "user" | "assistant" | "toolResult" => serde_json::from_value(Value::Object(map))
                .map(AgentMessage::Llm)
                .map_err(D::Error::custom),
            _ => {
                map.shift_remove("role");
                Ok(AgentMessage::Custom(CustomMessage { role, fields: map }))
            }
        }
    }
}

/// pi's default `convertToLlm`: keep the LLM messages, drop custom ones.
pub fn default_convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(|m| m.as_llm().cloned()).collect()
}

/// Serialize an assistant message as a `Message` (with `"role":"assistant"` first) without
/// cloning it: streaming snapshots are serialized once per event, so copies would add up.
pub(crate) fn assistant_json(message: &AssistantMessage) -> String {
    let body = serde_json::to_string(message).unwrap_or_else(|_| "{}".to_string());
    match body.strip_prefix('{') {
        Some(rest) if rest != "}" => format!("{{\"role\":\"assistant\",{rest}"),
        _ => "{\"role\":\"assistant\"}".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_roles_round_trip_flat() {
        let line = r#"{"role":"bashExecution","command":"ls","output":"a\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":5}"#;
        let m: AgentMessage = serde_json::from_str(line).expect("parse");
        assert_eq!(m.role(), "bashExecution");
        assert_eq!(m.timestamp(), Some(5));
        assert_eq!(serde_json::to_string(&m).expect("serialize"), line);
    }

    #[test]
    fn llm_roles_parse_as_messages() {
        let line = r#"{"role":"user","content":"hi","timestamp":1}"#;
        let m: AgentMessage = serde_json::from_str(line).expect("parse");
        assert!(matches!(m, AgentMessage::Llm(Message::User(_))));
        assert_eq!(serde_json::to_string(&m).expect("serialize"), line);
    }

    #[test]
    fn malformed_llm_message_is_an_error() {
        let err = serde_json::from_str::<AgentMessage>(r#"{"role":"assistant","content":5}"#);
        assert!(err.is_err());
        assert!(serde_json::from_str::<AgentMessage>(r#"{"content":[]}"#).is_err());
    }

    #[test]
    fn default_conversion_drops_custom_messages() {
        let custom: AgentMessage =
            serde_json::from_str(r#"{"role":"custom","customType":"x","content":"c","display":true,"timestamp":1}"#)
                .expect("parse");
        let msgs = vec![AgentMessage::user_text("a"), custom];
        let llm = default_convert_to_llm(&msgs);
        assert_eq!(llm.len(), 1);
        assert_eq!(llm[0].role(), "user");
    }

    #[test]
    fn assistant_json_puts_role_first() {
        let msg = AssistantMessage::default();
        let json = assistant_json(&msg);
        let expected = serde_json::to_string(&Message::Assistant(msg)).expect("serialize");
        assert_eq!(json, expected);
    }
}
