//! Reading the message types from JSON in one pass.
//!
//! serde's derive handles `#[serde(flatten)]` (our `extra` fields) and internally tagged enums
//! (`Content` by `type`, `Message` by `role`) by first copying the whole object into a
//! temporary tree and then reading the struct from that copy. Sessions hold thousands of
//! messages, so that copy was most of the cost of opening one. These visitors read each key
//! once: known keys into their fields, anything else into `extra`, and a tag that comes first
//! (as pi writes it) picks the variant without buffering. A tag written later still works,
//! through a slower buffered path.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::types::{
    AssistantMessage, Content, Extra, ImageContent, Message, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
    UserContent, UserMessage,
};

/// A map key, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl Key<'_> {
    fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// A field that must be present.
fn required<T, E: de::Error>(value: Option<T>, key: &'static str) -> Result<T, E> {
    value.ok_or_else(|| E::missing_field(key))
}

/// A field that may be absent (its default then).
fn defaulted<T: Default, E>(value: Option<T>, _key: &'static str) -> Result<T, E> {
    Ok(value.unwrap_or_default())
}

/// A visitor and `Deserialize` impl for a struct whose unknown keys go to `extra`.
/// Each field is `name: Type = "jsonKey" required|defaulted`.
macro_rules! struct_with_extra {
    ($ty:ident, $visitor:ident, $expecting:literal, [$($field:ident : $fty:ty = $key:literal $kind:ident),* $(,)?]) => {
        pub(crate) struct $visitor;

        impl<'de> Visitor<'de> for $visitor {
            type Value = $ty;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str($expecting)
            }

            #[allow(clippy::useless_conversion, reason = "`into` is the identity for most fields")]
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$ty, A::Error> {
                $(let mut $field: Option<$fty> = None;)*
                let mut extra = Extra::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    match key.0.as_ref() {
                        $($key => $field = Some(map.next_value()?),)*
                        _ => {
                            let value: Value = map.next_value()?;
                            extra.insert(key.into_string(), value);
                        }
                    }
                }
                Ok($ty {
                    // `into`: a field read through a wrapper (see [`Blocks`]) becomes its own type.
                    $($field: $kind::<_, A::Error>($field, $key)?.into(),)*
                    extra,
                })
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_map($visitor)
            }
        }
    };
}

struct_with_extra!(TextContent, TextVisitor, "a text block", [
    text: String = "text" required,
    text_signature: Option<String> = "textSignature" defaulted,
]);

struct_with_extra!(ThinkingContent, ThinkingVisitor, "a thinking block", [
    thinking: String = "thinking" required,
    thinking_signature: Option<String> = "thinkingSignature" defaulted,
    redacted: Option<bool> = "redacted" defaulted,
]);

struct_with_extra!(ImageContent, ImageVisitor, "an image block", [
    data: String = "data" required,
    mime_type: String = "mimeType" required,
]);

struct_with_extra!(ToolCall, ToolCallVisitor, "a tool call block", [
    id: String = "id" required,
    name: String = "name" required,
    arguments: Value = "arguments" required,
    thought_signature: Option<String> = "thoughtSignature" defaulted,
]);

struct_with_extra!(UserMessage, UserMessageVisitor, "a user message", [
    content: UserContent = "content" required,
    timestamp: i64 = "timestamp" required,
]);

struct_with_extra!(AssistantMessage, AssistantMessageVisitor, "an assistant message", [
    content: Blocks = "content" required,
    api: String = "api" required,
    provider: String = "provider" required,
    model: String = "model" required,
    usage: crate::types::Usage = "usage" required,
    stop_reason: crate::types::StopReason = "stopReason" required,
    timestamp: i64 = "timestamp" required,
    response_id: Option<String> = "responseId" defaulted,
    response_model: Option<String> = "responseModel" defaulted,
    diagnostics: Option<Value> = "diagnostics" defaulted,
    error_message: Option<String> = "errorMessage" defaulted,
    raw_stop_reason: Option<String> = "rawStopReason" defaulted,
    duration_ms: Option<u64> = "durationMs" defaulted,
    thinking_level: Option<String> = "thinkingLevel" defaulted,
]);

struct_with_extra!(ToolResultMessage, ToolResultVisitor, "a tool result message", [
    tool_call_id: String = "toolCallId" required,
    tool_name: String = "toolName" required,
    content: Blocks = "content" required,
    details: Option<Value> = "details" defaulted,
    is_error: bool = "isError" required,
    duration_ms: Option<u64> = "durationMs" defaulted,
    timestamp: i64 = "timestamp" required,
]);

/// A list of content blocks held at its exact length. serde's `Vec` reading gets no length
/// from JSON and grows by doubling from four, so a message of one or two blocks kept room for
/// four: in a long session that spare room was more memory than the texts themselves.
pub(crate) struct Blocks(Vec<Content>);

impl From<Blocks> for Vec<Content> {
    fn from(blocks: Blocks) -> Self {
        blocks.0
    }
}

impl<'de> Deserialize<'de> for Blocks {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BlocksVisitor;
        impl<'de> Visitor<'de> for BlocksVisitor {
            type Value = Blocks;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of content blocks")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Blocks, A::Error> {
                read_blocks(seq).map(Blocks)
            }
        }
        d.deserialize_seq(BlocksVisitor)
    }
}

/// The blocks of a JSON list, in a vector without spare room.
fn read_blocks<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Vec<Content>, A::Error> {
    let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
    while let Some(block) = seq.next_element::<Content>()? {
        blocks.push(block);
    }
    blocks.shrink_to_fit();
    Ok(blocks)
}

/// Reads an object tagged by `TAG`: when the tag is the first key the rest of the map goes
/// straight to the variant's visitor; otherwise the object is collected first.
trait Tagged: Sized {
    const TAG: &'static str;
    const VARIANTS: &'static [&'static str];
    const EXPECTING: &'static str;

    /// Read the variant `tag` from the rest of `map`.
    fn variant<'de, A: MapAccess<'de>>(tag: &str, map: A) -> Result<Self, A::Error>;

    /// Read the variant `tag` from collected fields (tag removed).
    fn from_fields(tag: &str, fields: Map<String, Value>) -> Result<Self, serde_json::Error>;
}

struct TaggedVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let Some(first) = map.next_key::<Key<'de>>()? else {
            return Err(de::Error::missing_field(T::TAG));
        };
        if first.0 == T::TAG {
            let tag: Key<'de> = map.next_value()?;
            return T::variant(&tag.0, map);
        }
        let mut fields = Map::new();
        let value: Value = map.next_value()?;
        fields.insert(first.into_string(), value);
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            fields.insert(k, v);
        }
        let tag = match fields.remove(T::TAG) {
            Some(Value::String(tag)) => tag,
            Some(other) => {
                return Err(de::Error::invalid_type(unexpected(&other), &"a string tag"));
            }
            None => return Err(de::Error::missing_field(T::TAG)),
        };
        T::from_fields(&tag, fields).map_err(de::Error::custom)
    }
}

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

impl Tagged for Content {
    const TAG: &'static str = "type";
    const VARIANTS: &'static [&'static str] = &["text", "thinking", "image", "toolCall"];
    const EXPECTING: &'static str = "a content block";

    fn variant<'de, A: MapAccess<'de>>(tag: &str, map: A) -> Result<Self, A::Error> {
        match tag {
            "text" => TextVisitor.visit_map(map).map(Content::Text),
            "thinking" => ThinkingVisitor.visit_map(map).map(Content::Thinking),
            "image" => ImageVisitor.visit_map(map).map(Content::Image),
            "toolCall" => ToolCallVisitor.visit_map(map).map(Content::ToolCall),
            other => Err(de::Error::unknown_variant(other, Self::VARIANTS)),
        }
    }

    fn from_fields(tag: &str, fields: Map<String, Value>) -> Result<Self, serde_json::Error> {
        let object = Value::Object(fields);
        match tag {
            "text" => serde_json::from_value(object).map(Content::Text),
            "thinking" => serde_json::from_value(object).map(Content::Thinking),
            "image" => serde_json::from_value(object).map(Content::Image),
            "toolCall" => serde_json::from_value(object).map(Content::ToolCall),
            other => Err(de::Error::unknown_variant(other, Self::VARIANTS)),
        }
    }
}

impl Tagged for Message {
    const TAG: &'static str = "role";
    const VARIANTS: &'static [&'static str] = &["user", "assistant", "toolResult"];
    const EXPECTING: &'static str = "a message";

    fn variant<'de, A: MapAccess<'de>>(tag: &str, map: A) -> Result<Self, A::Error> {
        match tag {
            "user" => UserMessageVisitor.visit_map(map).map(|m| Message::User(Arc::new(m))),
            "assistant" => AssistantMessageVisitor
                .visit_map(map)
                .map(|m| Message::Assistant(Arc::new(m))),
            "toolResult" => ToolResultVisitor
                .visit_map(map)
                .map(|m| Message::ToolResult(Arc::new(m))),
            other => Err(de::Error::unknown_variant(other, Self::VARIANTS)),
        }
    }

    fn from_fields(tag: &str, fields: Map<String, Value>) -> Result<Self, serde_json::Error> {
        let object = Value::Object(fields);
        match tag {
            "user" => serde_json::from_value(object).map(|m| Message::User(Arc::new(m))),
            "assistant" => serde_json::from_value(object).map(|m| Message::Assistant(Arc::new(m))),
            "toolResult" => serde_json::from_value(object).map(|m| Message::ToolResult(Arc::new(m))),
            other => Err(de::Error::unknown_variant(other, Self::VARIANTS)),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(TaggedVisitor::<Content>(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(TaggedVisitor::<Message>(std::marker::PhantomData))
    }
}

/// A plain string or a list of blocks.
impl<'de> Deserialize<'de> for UserContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = UserContent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_str<E>(self, v: &str) -> Result<UserContent, E> {
                Ok(UserContent::Text(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<UserContent, E> {
                Ok(UserContent::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<UserContent, A::Error> {
                read_blocks(seq).map(UserContent::Blocks)
            }
        }
        d.deserialize_any(ContentVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_land_in_extra_in_order() {
        let line = r#"{"type":"text","text":"hi","zeta":1,"alpha":{"b":2}}"#;
        let c: Content = serde_json::from_str(line).expect("parse");
        let Content::Text(t) = &c else { panic!("not text") };
        assert_eq!(t.text, "hi");
        assert_eq!(t.extra.keys().collect::<Vec<_>>(), ["zeta", "alpha"]);
        assert_eq!(serde_json::to_string(&c).expect("write"), line);
    }

    #[test]
    fn a_tag_after_other_keys_still_picks_the_variant() {
        let c: Content = serde_json::from_str(r#"{"text":"hi","type":"text"}"#).expect("parse");
        assert_eq!(c, Content::text("hi"));
        let m: Message = serde_json::from_str(r#"{"content":"x","timestamp":3,"role":"user"}"#).expect("parse");
        assert_eq!(m.role(), "user");
        assert_eq!(m.timestamp(), 3);
    }

    #[test]
    fn missing_required_fields_and_unknown_tags_are_errors() {
        let e = serde_json::from_str::<Content>(r#"{"type":"text"}"#).expect_err("no text");
        assert!(e.to_string().contains("missing field `text`"), "{e}");
        let e = serde_json::from_str::<Content>(r#"{"type":"video","url":"x"}"#).expect_err("tag");
        assert!(e.to_string().contains("unknown variant `video`"), "{e}");
        let e = serde_json::from_str::<Content>(r#"{"text":"x"}"#).expect_err("no tag");
        assert!(e.to_string().contains("missing field `type`"), "{e}");
        let e = serde_json::from_str::<Message>(r#"{"role":"assistant","content":[]}"#).expect_err("fields");
        assert!(e.to_string().contains("missing field"), "{e}");
        assert!(serde_json::from_str::<UserContent>("5").is_err());
    }

    #[test]
    fn optional_fields_default_and_accept_null() {
        let line = r#"{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"x"}],"details":null,"isError":false,"timestamp":1}"#;
        let Message::ToolResult(r) = serde_json::from_str::<Message>(line).expect("parse") else {
            panic!("not a tool result")
        };
        assert_eq!(r.details, None);
        assert!(r.extra.is_empty());
        let v: Value = serde_json::from_str(line).expect("value");
        let again: Message = serde_json::from_value(v).expect("from value");
        assert_eq!(again.role(), "toolResult");
    }

    #[test]
    fn content_lists_keep_no_spare_room() {
        let line = r#"{"role":"assistant","content":[{"type":"text","text":"a"}],"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}"#;
        let Message::Assistant(a) = serde_json::from_str::<Message>(line).expect("parse") else {
            panic!("not an assistant message")
        };
        assert_eq!((a.content.len(), a.content.capacity()), (1, 1));
        let user: UserContent =
            serde_json::from_str(r#"[{"type":"text","text":"a"},{"type":"text","text":"b"}]"#).expect("blocks");
        let UserContent::Blocks(blocks) = user else {
            panic!("not blocks")
        };
        assert_eq!((blocks.len(), blocks.capacity()), (2, 2));
    }

    #[test]
    fn escaped_keys_are_read() {
        let c: Content = serde_json::from_str(r#"{"\u0074ype":"text","te\u0078t":"hi"}"#).expect("parse");
        assert_eq!(c, Content::text("hi"));
    }
}
