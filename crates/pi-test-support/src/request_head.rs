//! Reads what the mock needs to answer a request (the conversation's facts, the model, the
//! custom tools) straight from the body's bytes, borrowing them, without building the body's
//! JSON tree.
//!
//! Why: a resumed session's request is megabytes, and the client waits while the mock reads
//! it. Building a `Value` of every message cost the mock more time than the request's answer;
//! the tree is built later, only when a test asks for the recorded request. A body this
//! reader does not take (not an object, a field of an unexpected type, a duplicated key) is
//! read the old way, as a `Value`, so both give the same answer.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::conversation::{facts_of, Api, ConversationItem};
use crate::script::ConversationFacts;

/// What a request's answer depends on.
pub(crate) struct RequestHead {
    pub facts: ConversationFacts,
    /// The body's `model`, when it is a string.
    pub model: Option<String>,
    /// Names of the declared tools of type `custom` (grammar tools).
    pub custom_tools: Vec<String>,
}

/// The body's top-level fields that matter; the rest is skipped without being built.
#[derive(Deserialize)]
struct BodyHead<'a> {
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    messages: Option<Vec<ItemHead<'a>>>,
    #[serde(borrow, default)]
    input: Option<Vec<ItemHead<'a>>>,
    #[serde(borrow, default)]
    contents: Option<Vec<ItemHead<'a>>>,
    #[serde(borrow, default)]
    tools: Option<Vec<ToolHead<'a>>>,
}

/// One conversation item: its role and kind, its content left as unparsed JSON text.
#[derive(Deserialize)]
pub(crate) struct ItemHead<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parts: Option<&'a RawValue>,
}

impl ConversationItem for ItemHead<'_> {
    fn role(&self) -> Option<&str> {
        self.role.as_deref()
    }
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }
    fn field(&self, key: &str) -> Option<Cow<'_, Value>> {
        let raw = match key {
            "content" => self.content?,
            "parts" => self.parts?,
            _ => return None,
        };
        serde_json::from_str(raw.get()).ok().map(Cow::Owned)
    }
}

/// A declared tool. Responses names a custom tool at its top, Chat Completions inside `custom`.
#[derive(Deserialize)]
struct ToolHead<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    custom: Option<NameHead<'a>>,
}

#[derive(Deserialize)]
struct NameHead<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
}

/// The head of a request body, or `None` when the body must be read as a `Value` instead.
pub(crate) fn read(api: Api, body: &[u8]) -> Option<RequestHead> {
    let head: BodyHead<'_> = serde_json::from_slice(body).ok()?;
    let items = match api {
        Api::Openai | Api::Anthropic | Api::Mistral | Api::Bedrock => head.messages,
        Api::Responses => head.input,
        Api::Google => head.contents,
    }
    .unwrap_or_default();
    Some(RequestHead {
        facts: facts_of(api, &items),
        model: head.model.map(Cow::into_owned),
        custom_tools: head
            .tools
            .unwrap_or_default()
            .into_iter()
            .filter(|tool| tool.kind.as_deref() == Some("custom"))
            .filter_map(|tool| tool.name.or_else(|| tool.custom?.name).map(Cow::into_owned))
            .collect(),
    })
}

/// The same head read from a parsed body (the fallback, and what the tests compare with).
pub(crate) fn from_value(api: Api, body: &Value) -> RequestHead {
    RequestHead {
        facts: crate::conversation::facts(api, body),
        model: body.get("model").and_then(Value::as_str).map(str::to_owned),
        custom_tools: body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("custom"))
            .filter_map(|t| {
                t.get("name")
                    .or_else(|| t.pointer("/custom/name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn both(api: Api, body: &Value) -> (RequestHead, RequestHead) {
        let bytes = serde_json::to_vec(body).unwrap();
        let borrowed = read(api, &bytes).expect("the borrowed reader takes this body");
        (borrowed, from_value(api, body))
    }

    fn same(a: &RequestHead, b: &RequestHead) -> bool {
        a.facts.assistant_turns == b.facts.assistant_turns
            && a.facts.assistant_turns_since_user == b.facts.assistant_turns_since_user
            && a.facts.last_user == b.facts.last_user
            && a.model == b.model
            && a.custom_tools == b.custom_tools
    }

    #[test]
    fn borrowed_reading_matches_the_tree_for_every_api() {
        let cases = [
            (
                Api::Openai,
                json!({"model": "m", "messages": [
                    {"role": "system", "content": "s"},
                    {"role": "user", "content": "first \"quoted\" \\u00e9"},
                    {"role": "assistant", "content": null, "tool_calls": []},
                    {"role": "tool", "content": "r"},
                    {"role": "assistant", "content": "a"},
                    {"role": "user", "content": [{"type": "text", "text": "second"}, {"type": "image_url"}]},
                ], "tools": [{"type": "custom", "name": "codemode"}, {"type": "function", "function": {}},
                    {"type": "custom", "custom": {"name": "nested", "format": {}}}]}),
            ),
            (
                Api::Anthropic,
                json!({"messages": [
                    {"role": "user", "content": [{"type": "text", "text": "use a tool"}]},
                    {"role": "assistant", "content": []},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}]},
                ]}),
            ),
            (
                Api::Responses,
                json!({"model": "r", "input": [
                    {"role": "developer", "content": "sys"},
                    {"role": "user", "content": [{"type": "input_text", "text": "go"}]},
                    {"type": "reasoning", "id": "rs"},
                    {"type": "message", "role": "assistant", "content": []},
                    {"type": "function_call_output", "call_id": "c", "output": "x"},
                    {"type": "function_call", "call_id": "d"},
                ]}),
            ),
            (
                Api::Google,
                json!({"contents": [{"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
                    {"role": "model", "parts": []}, {"role": "user", "parts": [{"functionResponse": {}}]}]}),
            ),
            (
                Api::Bedrock,
                json!({"messages": [{"role": "user", "content": [{"text": "hi"}]},
                    {"role": "assistant", "content": [{"text": "x"}]},
                    {"role": "user", "content": [{"toolResult": {}}]}]}),
            ),
            (Api::Mistral, json!({"messages": []})),
        ];
        for (api, body) in &cases {
            let (borrowed, tree) = both(*api, body);
            assert!(same(&borrowed, &tree), "{api:?}: {body}");
        }
        let (head, _) = both(Api::Openai, &cases_last_user());
        assert_eq!(head.facts.last_user, "second");
        let (head, _) = both(Api::Openai, &cases[0].1);
        assert_eq!(head.custom_tools, ["codemode", "nested"]);
    }

    fn cases_last_user() -> Value {
        json!({"messages": [{"role": "user", "content": "first"}, {"role": "user", "content": [{"type": "text", "text": "second"}]}]})
    }

    #[test]
    fn bodies_it_does_not_take_fall_back_to_the_tree() {
        // Not an object, a conversation of the wrong type, a model that is not a string, a
        // duplicated key: each is left to the `Value` reader, which answers them as before.
        for body in [
            &b"[1, 2]"[..],
            br#"{"messages": "text"}"#,
            br#"{"model": 3, "messages": []}"#,
            br#"{"messages": [], "messages": []}"#,
            br#"{"messages": [1]}"#,
            b"not json",
        ] {
            assert!(read(Api::Openai, body).is_none(), "{}", String::from_utf8_lossy(body));
        }
    }
}
