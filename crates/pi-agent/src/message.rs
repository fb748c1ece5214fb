//! Agent messages: the LLM's messages plus application-defined custom roles.
//!
//! The coding agent keeps messages in its transcript that the LLM never sees as such
//! (`bashExecution`, `custom`, `branchSummary`, `compactionSummary`). They are stored flat, exactly
//! as the TypeScript pi writes them (`{"role": "...", ...fields}`), and `convertToLlm` decides what
//! the model gets from them. An LLM-role message whose shape this version does not understand (a
//! newer pi's stop reason, say) can be kept as a custom message so it is written back unchanged.

use pi_ai::{AssistantMessage, Message, ToolResultMessage, UserMessage};
use serde::de::value::MapAccessDeserializer;
use serde::de::{Error as _, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A message with a role the LLM does not know (or an LLM role in a shape this version cannot
/// type); every field is kept as is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CustomMessage {
    pub role: String,
    /// The other fields, in their original order. A `role` key here only marks where `role` is
    /// written (a message read with `role` not first keeps its key order); its value is ignored.
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
    #[inline]
    pub fn timestamp(&self) -> Option<i64> {
        self.fields.get("timestamp").and_then(Value::as_i64)
    }

    /// A field other than `role`.
    #[inline]
    pub fn field(&self, name: &str) -> Option<&Value> {
        if name == "role" {
            return None;
        }
        self.fields.get(name)
    }

    /// A string field, or `""`.
    #[inline]
    pub fn str_field(&self, name: &str) -> &str {
        self.field(name).and_then(Value::as_str).unwrap_or("")
    }
}

impl Serialize for CustomMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let placed = self.fields.contains_key("role");
        let len = self.fields.len() + usize::from(!placed);
        let mut map = serializer.serialize_map(Some(len))?;
        if !placed {
            map.serialize_entry("role", &self.role)?;
        }
        for (k, v) in &self.fields {
            if k == "role" {
                map.serialize_entry("role", &self.role)?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// A transcript entry: an LLM message or a custom one.
///
/// Two words: an LLM message is an `Arc` already, and the rarer custom message is boxed, so a
/// long transcript's vectors (the agent's, a session entry's) cost little beyond the messages.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    Llm(Message),
    Custom(Box<CustomMessage>),
}

impl AgentMessage {
    /// The lenient reading of a message object: an LLM role parses into its typed form when it
    /// can; any other role, or a shape the typed form rejects, stays a [`CustomMessage`] that is
    /// written back as it was read. An object without a string `role` is handed back.
    pub fn from_map(mut map: Map<String, Value>) -> Result<Self, Map<String, Value>> {
        let role = match map.get("role") {
            Some(Value::String(r)) => r.clone(),
            _ => return Err(map),
        };
        if matches!(role.as_str(), "user" | "assistant" | "toolResult") {
            if let Ok(m) = Message::deserialize(&Value::Object(map.clone())) {
                return Ok(AgentMessage::Llm(m));
            }
        }
        // `role` first (as pi writes it) needs no marker; elsewhere its key stays in place.
        if map.keys().next().is_some_and(|k| k == "role") {
            map.shift_remove("role");
        }
        Ok(AgentMessage::Custom(Box::new(CustomMessage { role, fields: map })))
    }

    /// A user message holding one text block, stamped now.
    pub fn user_text(text: impl Into<String>) -> Self {
        AgentMessage::Llm(Message::user_text(text))
    }

    #[inline]
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::Llm(m) => m.role(),
            AgentMessage::Custom(c) => &c.role,
        }
    }

    #[inline]
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

    #[inline]
    pub fn as_custom(&self) -> Option<&CustomMessage> {
        match self {
            AgentMessage::Custom(c) => Some(c),
            AgentMessage::Llm(_) => None,
        }
    }

    /// Epoch milliseconds of the message, where it has a numeric one.
    #[inline]
    pub fn timestamp(&self) -> Option<i64> {
        match self {
            AgentMessage::Llm(m) => Some(m.timestamp()),
            AgentMessage::Custom(c) => c.timestamp(),
        }
    }

    /// A field (other than `role`) of a custom-role message; `None` for a typed LLM message.
    #[inline]
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.as_custom().and_then(|c| c.field(name))
    }

    /// `(provider, model)` of an assistant message, typed or kept as read.
    #[inline]
    pub fn assistant_model(&self) -> Option<(&str, &str)> {
        match self {
            AgentMessage::Llm(Message::Assistant(a)) => Some((&a.provider, &a.model)),
            AgentMessage::Custom(c) if c.role == "assistant" => Some((c.str_field("provider"), c.str_field("model"))),
            _ => None,
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
        AgentMessage::Llm(Message::User(Arc::new(m)))
    }
}

impl From<AssistantMessage> for AgentMessage {
    fn from(m: AssistantMessage) -> Self {
        AgentMessage::Llm(Message::Assistant(Arc::new(m)))
    }
}

impl From<ToolResultMessage> for AgentMessage {
    fn from(m: ToolResultMessage) -> Self {
        AgentMessage::Llm(Message::ToolResult(Arc::new(m)))
    }
}

impl From<CustomMessage> for AgentMessage {
    fn from(m: CustomMessage) -> Self {
        AgentMessage::Custom(Box::new(m))
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

/// Strict and fast: with `role` as the first field (as pi writes it) an LLM message parses
/// straight into its typed form, and a shape that form rejects is an error, so a damaged entry
/// is reported instead of silently changing meaning. With `role` elsewhere the object is read
/// with [`AgentMessage::from_map`]. A message needs a string `role`.
impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AgentMessageVisitor)
    }
}

struct AgentMessageVisitor;

impl<'de> Visitor<'de> for AgentMessageVisitor {
    type Value = AgentMessage;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AgentMessage, A::Error> {
        let mut fields = Map::new();
        if let Some(key) = map.next_key::<String>()? {
            if key == "role" {
                let role = match map.next_value::<Value>()? {
                    Value::String(r) => r,
                    _ => return Err(A::Error::custom("a message needs a string `role`")),
                };
                let rest = MapAccessDeserializer::new(map);
                return Ok(match role.as_str() {
                    "user" => AgentMessage::Llm(Message::User(Deserialize::deserialize(rest)?)),
                    "assistant" => AgentMessage::Llm(Message::Assistant(Deserialize::deserialize(rest)?)),
                    "toolResult" => AgentMessage::Llm(Message::ToolResult(Deserialize::deserialize(rest)?)),
                    _ => AgentMessage::Custom(Box::new(CustomMessage {
                        role,
                        fields: Map::<String, Value>::deserialize(rest)?,
                    })),
                });
            }
            let v = map.next_value()?;
            fields.insert(key, v);
        }
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            fields.insert(k, v);
        }
        AgentMessage::from_map(fields).map_err(|_| A::Error::custom("a message needs a string `role`"))
    }
}

/// pi's default `convertToLlm`: keep the LLM messages, drop custom ones.
pub fn default_convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(|m| m.as_llm().cloned()).collect()
}

pub(crate) use pi_ai::events::assistant_json;

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
    fn an_llm_role_of_an_unknown_shape_is_kept_as_read() {
        let first =
            r#"{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"refusal","timestamp":1}"#;
        let map: Map<String, Value> = serde_json::from_str(first).expect("object");
        let m = AgentMessage::from_map(map).expect("has a role");
        assert!(m.as_custom().is_some());
        assert_eq!(m.assistant_model(), Some(("p", "m")));
        assert_eq!(m.field("stopReason"), Some(&Value::from("refusal")));
        assert_eq!(serde_json::to_string(&m).expect("serialize"), first);
        // `role` not first: the lenient reading, and written back in the same key order.
        let late = r#"{"content":5,"role":"user","timestamp":2}"#;
        let m: AgentMessage = serde_json::from_str(late).expect("lenient");
        assert_eq!(m.role(), "user");
        assert_eq!(m.field("role"), None);
        assert_eq!(serde_json::to_string(&m).expect("serialize"), late);
        let typed: AgentMessage =
            serde_json::from_str(r#"{"content":"hi","role":"user","timestamp":2}"#).expect("parse");
        assert!(matches!(typed, AgentMessage::Llm(Message::User(_))));
        assert!(AgentMessage::from_map(Map::new()).is_err());
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
        let expected = serde_json::to_string(&Message::Assistant(Arc::new(msg))).expect("serialize");
        assert_eq!(json, expected);
    }
}
