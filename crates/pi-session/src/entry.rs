//! The lines of a session file: the header and the nine entry types, with pi's field order.
//!
//! Reading is one pass over each line: the common fields (`type`, `id`, `parentId`,
//! `timestamp`) are taken out, a `message` payload parses straight into its typed form, and the
//! remaining fields of the other types are few and small. Fields this version does not know
//! stay in `extra` and an entry type it does not know stays whole in [`EntryKind::Unknown`],
//! so a file written back (migration, fork) keeps them.

use std::fmt;

use pi_ai::UserContent;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::message::AgentMessage;

/// The session format version this crate reads and writes.
pub const CURRENT_SESSION_VERSION: u64 = 3;

/// Line 1 of a session file. Not part of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionHeader {
    /// `None` in v1 files (no `version` field).
    pub version: Option<u64>,
    pub id: String,
    pub timestamp: String,
    pub cwd: String,
    pub parent_session: Option<String>,
    pub extra: Map<String, Value>,
}

impl SessionHeader {
    pub fn new(id: String, timestamp: String, cwd: String, parent_session: Option<String>) -> Self {
        SessionHeader {
            version: Some(CURRENT_SESSION_VERSION),
            id,
            timestamp,
            cwd,
            parent_session,
            extra: Map::new(),
        }
    }

    /// Parse a header line's object; `None` unless it is `type:"session"` with a string `id`.
    pub fn from_map(mut map: Map<String, Value>) -> Option<Self> {
        if map.get("type").and_then(Value::as_str) != Some("session") {
            return None;
        }
        let id = match map.remove("id") {
            Some(Value::String(id)) => id,
            _ => return None,
        };
        map.remove("type");
        let version = map.remove("version").and_then(|v| v.as_u64());
        let timestamp = take_string(&mut map, "timestamp").unwrap_or_default();
        let cwd = take_string(&mut map, "cwd").unwrap_or_default();
        let parent_session = take_string(&mut map, "parentSession");
        Some(SessionHeader {
            version,
            id,
            timestamp,
            cwd,
            parent_session,
            extra: map,
        })
    }
}

impl Serialize for SessionHeader {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", "session")?;
        if let Some(v) = self.version {
            m.serialize_entry("version", &v)?;
        }
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("timestamp", &self.timestamp)?;
        m.serialize_entry("cwd", &self.cwd)?;
        if let Some(p) = &self.parent_session {
            m.serialize_entry("parentSession", p)?;
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The fields of an entry that this version does not name, in the order read, written back
/// as they were. Most entries have none, so the map sits behind a pointer: an entry without
/// any pays one word for it, not a whole map (entries are most of a loaded session's memory).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extra(Option<Box<Map<String, Value>>>);

impl Extra {
    pub fn new() -> Self {
        Extra(None)
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_ref().and_then(|m| m.get(key))
    }

    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        self.0.get_or_insert_with(Box::default).insert(key, value)
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let map = self.0.as_mut()?;
        let removed = map.shift_remove(key);
        if map.is_empty() {
            self.0 = None;
        }
        removed
    }

    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|m| m.is_empty())
    }

    pub fn iter(&self) -> std::iter::Flatten<std::option::IntoIter<&Map<String, Value>>> {
        self.0.as_deref().into_iter().flatten()
    }

    /// The fields as a map (empty when there are none).
    pub fn to_map(&self) -> Map<String, Value> {
        self.0.as_deref().cloned().unwrap_or_default()
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() {
            Extra(None)
        } else {
            Extra(Some(Box::new(map)))
        }
    }
}

impl<'a> IntoIterator for &'a Extra {
    type Item = (&'a String, &'a Value);
    type IntoIter = std::iter::Flatten<std::option::IntoIter<&'a Map<String, Value>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// One node of the session tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// 8 hex characters (a full UUID after repeated collisions), unique in the file.
    pub id: String,
    /// `None` for a root.
    pub parent_id: Option<String>,
    /// ISO-8601 with milliseconds, as JavaScript's `toISOString`.
    pub timestamp: String,
    pub kind: EntryKind,
}

/// The type-specific part of an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    Message {
        /// Two words (an `Arc` or a boxed custom message), shared with the agent's transcript.
        message: AgentMessage,
        extra: Extra,
    },
    ThinkingLevelChange {
        thinking_level: String,
        extra: Extra,
    },
    ModelChange {
        provider: String,
        model_id: String,
        extra: Extra,
    },
    Compaction {
        summary: String,
        first_kept_entry_id: String,
        /// A number in every file pi writes; kept as read.
        tokens_before: Box<Value>,
        details: Option<Box<Value>>,
        from_hook: Option<bool>,
        extra: Extra,
    },
    BranchSummary {
        /// The id the branch came from, or the literal `"root"`.
        from_id: String,
        summary: String,
        details: Option<Box<Value>>,
        from_hook: Option<bool>,
        extra: Extra,
    },
    /// Extension state; never in the LLM context.
    Custom {
        custom_type: String,
        data: Option<Box<Value>>,
        extra: Extra,
    },
    /// An extension message that the LLM sees as a user message.
    CustomMessage {
        custom_type: String,
        content: UserContent,
        display: bool,
        details: Option<Box<Value>>,
        extra: Extra,
    },
    Label {
        target_id: String,
        /// `None` or empty clears the label.
        label: Option<String>,
        extra: Extra,
    },
    SessionInfo {
        name: Option<String>,
        extra: Extra,
    },
    /// A type this version does not know, or a known type whose fields did not parse: the
    /// whole object as read (including `type`, `id`, `parentId`, `timestamp`).
    Unknown {
        type_name: String,
        fields: Box<Map<String, Value>>,
    },
}

impl EntryKind {
    /// The `type` field.
    pub fn type_name(&self) -> &str {
        match self {
            EntryKind::Message { .. } => "message",
            EntryKind::ThinkingLevelChange { .. } => "thinking_level_change",
            EntryKind::ModelChange { .. } => "model_change",
            EntryKind::Compaction { .. } => "compaction",
            EntryKind::BranchSummary { .. } => "branch_summary",
            EntryKind::Custom { .. } => "custom",
            EntryKind::CustomMessage { .. } => "custom_message",
            EntryKind::Label { .. } => "label",
            EntryKind::SessionInfo { .. } => "session_info",
            EntryKind::Unknown { type_name, .. } => type_name,
        }
    }
}

impl Entry {
    pub fn type_name(&self) -> &str {
        self.kind.type_name()
    }

    /// The message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            EntryKind::Message { message, .. } => Some(message),
            _ => None,
        }
    }

    pub fn is_assistant_message(&self) -> bool {
        self.message().is_some_and(|m| m.role() == "assistant")
    }

    /// Parse one line. Errors say why the line is not an entry.
    ///
    /// The fast path parses a message straight into its typed form; a message whose shape
    /// that form rejects (a newer pi's stop reason, say) is read again leniently and kept as
    /// its JSON object, so the entry stays in the tree.
    pub fn from_json_line(line: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(line).or_else(|strict| {
            let mut de = serde_json::Deserializer::from_str(line);
            de.deserialize_map(EntryVisitor { lenient: true })
                .and_then(|e| de.end().map(|()| e))
                .map_err(|_| strict)
        })
    }

    /// [`from_json_line`](Self::from_json_line) for an already parsed object.
    pub fn from_value(value: Value) -> Result<Self, serde_json::Error> {
        value.deserialize_map(EntryVisitor { lenient: true })
    }

    /// The line pi would write for this entry (no trailing newline).
    pub fn to_json_line(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}

// ---------------------------------------------------------------------------------------------
// Writing: field order as pi creates each entry (custom and custom_message put their own
// fields before the common ones).

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        let common = |m: &mut S::SerializeMap| -> Result<(), S::Error> {
            m.serialize_entry("id", &self.id)?;
            m.serialize_entry("parentId", &self.parent_id)?;
            m.serialize_entry("timestamp", &self.timestamp)
        };
        fn extras<M: SerializeMap>(m: &mut M, extra: &Extra) -> Result<(), M::Error> {
            extra.iter().try_for_each(|(k, v)| m.serialize_entry(k, v))
        }
        fn opt<M: SerializeMap, T: Serialize>(m: &mut M, k: &str, v: &Option<T>) -> Result<(), M::Error> {
            match v {
                Some(v) => m.serialize_entry(k, v),
                None => Ok(()),
            }
        }
        /// A summary entry's `usage` (kept with the unnamed fields) goes before `fromHook`,
        /// where pi writes it; the other unnamed fields follow.
        fn usage_then_from_hook<M: SerializeMap>(
            m: &mut M,
            extra: &Extra,
            from_hook: &Option<bool>,
        ) -> Result<(), M::Error> {
            if let Some(usage) = extra.get("usage") {
                m.serialize_entry("usage", usage)?;
            }
            opt(m, "fromHook", from_hook)?;
            extra
                .iter()
                .filter(|(k, _)| k.as_str() != "usage")
                .try_for_each(|(k, v)| m.serialize_entry(k, v))
        }
        match &self.kind {
            EntryKind::Unknown { fields, .. } => {
                fields.iter().try_for_each(|(k, v)| m.serialize_entry(k, v))?;
                return m.end();
            }
            EntryKind::Custom {
                custom_type,
                data,
                extra,
            } => {
                m.serialize_entry("type", "custom")?;
                m.serialize_entry("customType", custom_type)?;
                opt(&mut m, "data", data)?;
                common(&mut m)?;
                extras(&mut m, extra)?;
                return m.end();
            }
            EntryKind::CustomMessage {
                custom_type,
                content,
                display,
                details,
                extra,
            } => {
                m.serialize_entry("type", "custom_message")?;
                m.serialize_entry("customType", custom_type)?;
                m.serialize_entry("content", content)?;
                m.serialize_entry("display", display)?;
                opt(&mut m, "details", details)?;
                common(&mut m)?;
                extras(&mut m, extra)?;
                return m.end();
            }
            _ => {}
        }
        m.serialize_entry("type", self.type_name())?;
        common(&mut m)?;
        match &self.kind {
            EntryKind::Message { message, extra } => {
                m.serialize_entry("message", message)?;
                extras(&mut m, extra)?;
            }
            EntryKind::ThinkingLevelChange { thinking_level, extra } => {
                m.serialize_entry("thinkingLevel", thinking_level)?;
                extras(&mut m, extra)?;
            }
            EntryKind::ModelChange {
                provider,
                model_id,
                extra,
            } => {
                m.serialize_entry("provider", provider)?;
                m.serialize_entry("modelId", model_id)?;
                extras(&mut m, extra)?;
            }
            EntryKind::Compaction {
                summary,
                first_kept_entry_id,
                tokens_before,
                details,
                from_hook,
                extra,
            } => {
                m.serialize_entry("summary", summary)?;
                m.serialize_entry("firstKeptEntryId", first_kept_entry_id)?;
                m.serialize_entry("tokensBefore", tokens_before)?;
                opt(&mut m, "details", details)?;
                usage_then_from_hook(&mut m, extra, from_hook)?;
            }
            EntryKind::BranchSummary {
                from_id,
                summary,
                details,
                from_hook,
                extra,
            } => {
                m.serialize_entry("fromId", from_id)?;
                m.serialize_entry("summary", summary)?;
                opt(&mut m, "details", details)?;
                usage_then_from_hook(&mut m, extra, from_hook)?;
            }
            EntryKind::Label {
                target_id,
                label,
                extra,
            } => {
                m.serialize_entry("targetId", target_id)?;
                opt(&mut m, "label", label)?;
                extras(&mut m, extra)?;
            }
            EntryKind::SessionInfo { name, extra } => {
                opt(&mut m, "name", name)?;
                extras(&mut m, extra)?;
            }
            EntryKind::Unknown { .. } | EntryKind::Custom { .. } | EntryKind::CustomMessage { .. } => {}
        }
        m.end()
    }
}

// ---------------------------------------------------------------------------------------------
// Reading.

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EntryVisitor { lenient: false })
    }
}

/// `lenient`: read a `message` payload with [`AgentMessage::from_map`] (never fails on its
/// shape) instead of the fast strict parse.
struct EntryVisitor {
    lenient: bool,
}

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = Entry;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a session entry object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
        let mut type_name: Option<String> = None;
        let mut id: Option<Value> = None;
        let mut parent_id: Option<Value> = None;
        let mut timestamp: Option<Value> = None;
        let mut message: Option<AgentMessage> = None;
        // Keys in the order read, so an unknown entry can be written back as it was.
        let mut order: Vec<String> = Vec::with_capacity(6);
        let mut rest = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" if type_name.is_none() => {
                    let v: Value = map.next_value()?;
                    match v {
                        Value::String(s) => type_name = Some(s),
                        _ => return Err(de::Error::custom("entry `type` is not a string")),
                    }
                }
                "id" => id = Some(map.next_value()?),
                "parentId" => parent_id = Some(map.next_value()?),
                "timestamp" => timestamp = Some(map.next_value()?),
                // pi writes `type` first, so the payload parses straight into its typed form.
                "message" if type_name.as_deref() == Some("message") && message.is_none() => {
                    if self.lenient {
                        match map.next_value::<Value>()? {
                            Value::Object(m) => match AgentMessage::from_map(m) {
                                Ok(m) => message = Some(m),
                                // No string `role`: not a message this version can hold; the
                                // entry is kept whole as an unknown one.
                                Err(m) => {
                                    rest.insert(key.clone(), Value::Object(m));
                                }
                            },
                            _ => return Err(de::Error::custom("entry `message` is not an object")),
                        }
                    } else {
                        message = Some(map.next_value()?);
                    }
                }
                _ => {
                    let v: Value = map.next_value()?;
                    rest.insert(key.clone(), v);
                }
            }
            order.push(key);
        }
        let type_name = type_name.ok_or_else(|| de::Error::missing_field("type"))?;
        if type_name == "session" {
            return Err(de::Error::custom("a second session header"));
        }
        let id_str = match &id {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(de::Error::custom("entry has no string `id`")),
        };
        let parent_str = match &parent_id {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let ts_str = match &timestamp {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        if type_name == "message" && message.is_none() {
            match rest.shift_remove("message") {
                Some(Value::Object(m)) => match AgentMessage::from_map(m) {
                    Ok(m) => message = Some(m),
                    Err(m) => {
                        rest.insert("message".into(), Value::Object(m));
                    }
                },
                Some(other) => {
                    rest.insert("message".into(), other);
                }
                None => {}
            }
        }
        let kind = match build_kind(&type_name, message, rest) {
            Ok(kind) => kind,
            Err((message, rest)) => {
                // Keep the whole object, in the order read.
                let mut fields = Map::new();
                let mut rest = rest;
                for key in order {
                    let v = match key.as_str() {
                        "type" => Some(Value::String(type_name.clone())),
                        "id" => id.take(),
                        "parentId" => parent_id.take(),
                        "timestamp" => timestamp.take(),
                        "message" if message.is_some() => message.as_ref().and_then(|m| serde_json::to_value(m).ok()),
                        _ => rest.remove(&key),
                    };
                    if let Some(v) = v {
                        fields.insert(key, v);
                    }
                }
                EntryKind::Unknown {
                    type_name,
                    fields: Box::new(fields),
                }
            }
        };
        Ok(Entry {
            id: id_str,
            parent_id: parent_str,
            timestamp: ts_str,
            kind,
        })
    }
}

type KindResult = Result<EntryKind, (Option<AgentMessage>, Map<String, Value>)>;

/// The typed kind for `type_name`, or everything back when the fields do not fit it.
#[allow(clippy::result_large_err, reason = "the error hands the fields back; rare")]
fn build_kind(type_name: &str, message: Option<AgentMessage>, rest: Map<String, Value>) -> KindResult {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ThinkingFields {
        thinking_level: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ModelFields {
        provider: String,
        model_id: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct CompactionFields {
        summary: String,
        first_kept_entry_id: String,
        tokens_before: Value,
        details: Option<Value>,
        from_hook: Option<bool>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct BranchSummaryFields {
        from_id: String,
        summary: String,
        details: Option<Value>,
        from_hook: Option<bool>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct CustomFields {
        custom_type: String,
        data: Option<Value>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct CustomMessageFields {
        custom_type: String,
        content: UserContent,
        display: bool,
        details: Option<Value>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct LabelFields {
        target_id: String,
        label: Option<String>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct SessionInfoFields {
        name: Option<String>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    fn parse<T: for<'a> Deserialize<'a>>(rest: &Map<String, Value>) -> Option<T> {
        // The fields of these entry types are few and small: a copy costs little.
        serde_json::from_value(Value::Object(rest.clone())).ok()
    }

    let kind = match type_name {
        "message" => {
            return match message {
                Some(message) => Ok(EntryKind::Message {
                    message,
                    extra: rest.into(),
                }),
                None => Err((None, rest)),
            }
        }
        "thinking_level_change" => parse::<ThinkingFields>(&rest).map(|f| EntryKind::ThinkingLevelChange {
            thinking_level: f.thinking_level,
            extra: f.extra.into(),
        }),
        "model_change" => parse::<ModelFields>(&rest).map(|f| EntryKind::ModelChange {
            provider: f.provider,
            model_id: f.model_id,
            extra: f.extra.into(),
        }),
        "compaction" => parse::<CompactionFields>(&rest).map(|f| EntryKind::Compaction {
            summary: f.summary,
            first_kept_entry_id: f.first_kept_entry_id,
            tokens_before: Box::new(f.tokens_before),
            details: f.details.map(Box::new),
            from_hook: f.from_hook,
            extra: f.extra.into(),
        }),
        "branch_summary" => parse::<BranchSummaryFields>(&rest).map(|f| EntryKind::BranchSummary {
            from_id: f.from_id,
            summary: f.summary,
            details: f.details.map(Box::new),
            from_hook: f.from_hook,
            extra: f.extra.into(),
        }),
        "custom" => parse::<CustomFields>(&rest).map(|f| EntryKind::Custom {
            custom_type: f.custom_type,
            data: f.data.map(Box::new),
            extra: f.extra.into(),
        }),
        "custom_message" => parse::<CustomMessageFields>(&rest).map(|f| EntryKind::CustomMessage {
            custom_type: f.custom_type,
            content: f.content,
            display: f.display,
            details: f.details.map(Box::new),
            extra: f.extra.into(),
        }),
        "label" => parse::<LabelFields>(&rest).map(|f| EntryKind::Label {
            target_id: f.target_id,
            label: f.label,
            extra: f.extra.into(),
        }),
        "session_info" => parse::<SessionInfoFields>(&rest).map(|f| EntryKind::SessionInfo {
            name: f.name,
            extra: f.extra.into(),
        }),
        _ => None,
    };
    kind.ok_or((message, rest))
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.remove(key) {
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            map.insert(key.to_string(), other);
            None
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(line: &str) -> Entry {
        let e = Entry::from_json_line(line).unwrap();
        assert_eq!(e.to_json_line().unwrap(), line);
        e
    }

    #[test]
    fn every_type_keeps_pis_field_order() {
        round_trip(
            r#"{"type":"compaction","id":"a","parentId":"b","timestamp":"t","summary":"s","firstKeptEntryId":"c","tokensBefore":12,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}"#,
        );
        round_trip(
            r#"{"type":"branch_summary","id":"a","parentId":null,"timestamp":"t","fromId":"root","summary":"s"}"#,
        );
        round_trip(r#"{"type":"label","id":"a","parentId":"b","timestamp":"t","targetId":"c","label":"x"}"#);
        round_trip(r#"{"type":"session_info","id":"a","parentId":"b","timestamp":"t","name":"n"}"#);
        round_trip(r#"{"type":"custom","customType":"k","id":"a","parentId":"b","timestamp":"t"}"#);
        round_trip(
            r#"{"type":"custom_message","customType":"k","content":[{"type":"text","text":"x"}],"display":false,"details":1,"id":"a","parentId":"b","timestamp":"t"}"#,
        );
    }

    #[test]
    fn a_known_type_with_fields_it_cannot_read_is_kept_whole() {
        let line = r#"{"id":"a","type":"model_change","parentId":"b","timestamp":"t","provider":7}"#;
        let e = round_trip(line);
        assert!(matches!(e.kind, EntryKind::Unknown { .. }));
        assert_eq!(e.type_name(), "model_change");
        assert_eq!(e.parent_id.as_deref(), Some("b"));
    }

    #[test]
    fn lines_that_are_no_entry_are_errors() {
        assert!(Entry::from_json_line(r#"{"type":"message","parentId":null}"#).is_err());
        assert!(Entry::from_json_line(r#"{"id":"a"}"#).is_err());
        assert!(Entry::from_json_line(r#"[1]"#).is_err());
        assert!(Entry::from_json_line(r#"{"type":"session","id":"x"}"#).is_err());
    }
}

#[cfg(test)]
mod lenient_tests {
    use super::*;

    #[test]
    fn a_message_of_a_newer_shape_stays_in_the_tree_as_json() {
        let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[],"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"refusal","timestamp":1}}"#;
        let e = Entry::from_json_line(line).unwrap();
        let m = e.message().unwrap();
        assert!(matches!(m, AgentMessage::Custom(_)));
        assert_eq!(m.assistant_model(), Some(("p", "m")));
        assert!(e.is_assistant_message());
        assert_eq!(e.to_json_line().unwrap(), line);
        // Role not first: read leniently, typed when it fits.
        let late_role = r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"content":"hi","timestamp":2,"role":"user"}}"#;
        let e = Entry::from_json_line(late_role).unwrap();
        assert!(matches!(e.message(), Some(AgentMessage::Llm(pi_ai::Message::User(_)))));
        // An unknown shape with `role` not first: written back in its key order.
        let late_unknown = r#"{"type":"message","id":"d","parentId":"a","timestamp":"t","message":{"content":5,"role":"user","timestamp":3}}"#;
        let e = Entry::from_json_line(late_unknown).unwrap();
        assert_eq!(e.message().map(AgentMessage::role), Some("user"));
        assert_eq!(e.to_json_line().unwrap(), late_unknown);
        // No string `role`: not a message, but the entry is kept whole.
        let roleless =
            r#"{"type":"message","id":"e","parentId":"a","timestamp":"t","message":{"content":"x","timestamp":4}}"#;
        let e = Entry::from_json_line(roleless).unwrap();
        assert!(e.message().is_none());
        assert_eq!(e.to_json_line().unwrap(), roleless);
        // Not an object: not an entry.
        assert!(
            Entry::from_json_line(r#"{"type":"message","id":"c","parentId":null,"timestamp":"t","message":"x"}"#)
                .is_err()
        );
    }
}

#[cfg(test)]
mod size {
    /// Entries are most of a loaded session's memory, one per line of the file: rare, large
    /// fields (summaries' details, unnamed fields) sit behind pointers so that the common
    /// message entry is small. A new field that grows every entry should be a choice.
    #[test]
    fn an_entry_stays_small() {
        assert!(
            std::mem::size_of::<super::Entry>() <= 152,
            "{}",
            std::mem::size_of::<super::Entry>()
        );
    }
}
