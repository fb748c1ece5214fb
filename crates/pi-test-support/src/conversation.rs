//! Reading a request body: which API it speaks, the last user text, and how many assistant
//! turns the conversation already holds (the facts a script chooses its reply by).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::script::ConversationFacts;

/// The wire API of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// OpenAI Chat Completions, `POST /v1/chat/completions`.
    Openai,
    /// Anthropic Messages, `POST /v1/messages`.
    Anthropic,
    /// OpenAI Responses, `POST /v1/responses`.
    Responses,
    /// Google Generative AI, `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`.
    Google,
    /// Mistral's chat stream, `POST /mistral/v1/chat/completions` (the `/mistral` prefix tells
    /// it from OpenAI's, which has the same path).
    Mistral,
    /// Amazon Bedrock's ConverseStream, `POST /model/{modelId}/converse-stream`.
    Bedrock,
}

impl Api {
    /// The API a request path belongs to.
    pub fn from_path(path: &str) -> Option<Api> {
        let path = path.split('?').next().unwrap_or(path);
        if path.starts_with("/mistral/") && path.ends_with("/chat/completions") {
            Some(Api::Mistral)
        } else if path.ends_with("/chat/completions") {
            Some(Api::Openai)
        } else if path.ends_with("/messages") {
            Some(Api::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else if path.contains("/models/") && path.ends_with(":streamGenerateContent") {
            Some(Api::Google)
        } else if path.starts_with("/model/") && path.ends_with("/converse-stream") {
            Some(Api::Bedrock)
        } else {
            None
        }
    }

    /// The name used in the request log (`"openai"`, `"anthropic"`, `"responses"`, `"google"`,
    /// `"mistral"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Openai => "openai",
            Api::Anthropic => "anthropic",
            Api::Responses => "responses",
            Api::Google => "google",
            Api::Mistral => "mistral",
            Api::Bedrock => "bedrock",
        }
    }
}

/// One item of a request's conversation (a message, a Responses item, a Gemini content), as
/// much of it as turn selection reads. Implemented by a parsed `Value` and by the borrowed
/// [`request_head::ItemHead`](crate::request_head::ItemHead), so both readers share the rules
/// below.
pub(crate) trait ConversationItem {
    fn role(&self) -> Option<&str>;
    /// The item's `type` (Responses items).
    fn kind(&self) -> Option<&str>;
    /// A field holding the item's content: `content`, or Gemini's `parts`.
    fn field(&self, key: &str) -> Option<Cow<'_, Value>>;
}

impl ConversationItem for Value {
    fn role(&self) -> Option<&str> {
        self.get("role").and_then(Value::as_str)
    }
    fn kind(&self) -> Option<&str> {
        self.get("type").and_then(Value::as_str)
    }
    fn field(&self, key: &str) -> Option<Cow<'_, Value>> {
        self.get(key).map(Cow::Borrowed)
    }
}

/// What an item is for turn selection.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// Part of a model reply.
    Assistant,
    /// A user item: it is user text if [`user_text`] finds text in it.
    User,
    Other,
}

fn role_of(api: Api, item: &impl ConversationItem) -> Role {
    match api {
        Api::Responses => {
            let is_output = matches!(item.kind(), Some("reasoning" | "function_call" | "custom_tool_call"))
                || item.role() == Some("assistant");
            if is_output {
                Role::Assistant
            } else if item.role() == Some("user") {
                Role::User
            } else {
                Role::Other
            }
        }
        Api::Google => match item.role() {
            Some("model") => Role::Assistant,
            Some("user") => Role::User,
            _ => Role::Other,
        },
        Api::Openai | Api::Anthropic | Api::Mistral | Api::Bedrock => match item.role() {
            Some("assistant") => Role::Assistant,
            Some("user") => Role::User,
            _ => Role::Other,
        },
    }
}

/// Text of a content value: a string, or the text parts of an array joined by newlines.
fn content_text(content: &Value, text_types: &[&str]) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| {
                    p.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| text_types.contains(&t))
                })
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// The text of a user item, `None` when it holds none (a tool result sent as a user message).
fn user_text(api: Api, item: &impl ConversationItem) -> Option<String> {
    // Bedrock blocks and Gemini parts are keyed by kind: `{"text": ...}`, `{"toolResult": ...}`.
    let keyed_texts = |list: Option<Cow<'_, Value>>| {
        let list = list?;
        let texts: Vec<&str> = list
            .as_array()?
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n"))
    };
    match api {
        Api::Openai | Api::Anthropic | Api::Mistral => content_text(&*item.field("content")?, &["text"]),
        Api::Responses => content_text(&*item.field("content")?, &["input_text"]),
        Api::Bedrock => keyed_texts(item.field("content")),
        Api::Google => keyed_texts(item.field("parts")),
    }
}

/// The facts of a conversation given as its items in order.
pub(crate) fn facts_of<I: ConversationItem>(api: Api, items: &[I]) -> ConversationFacts {
    // Reasoning, message and function calls of one Responses reply are separate items: a run
    // of them is one assistant turn. Every other API has one item per reply.
    let merge_runs = api == Api::Responses;
    let roles: Vec<Role> = items.iter().map(|item| role_of(api, item)).collect();
    let is_turn = |i: usize| roles[i] == Role::Assistant && !(merge_runs && i > 0 && roles[i - 1] == Role::Assistant);
    let assistant_turns = (0..roles.len()).filter(|&i| is_turn(i)).count();
    // Only the last user item with text matters, so texts are read from the end.
    let last_user = (0..roles.len())
        .rev()
        .filter(|&i| roles[i] == Role::User)
        .find_map(|i| user_text(api, &items[i]).map(|text| (i, text)));
    match last_user {
        Some((at, text)) => ConversationFacts {
            assistant_turns,
            assistant_turns_since_user: (at..roles.len()).filter(|&i| is_turn(i)).count(),
            last_user: text,
        },
        None => ConversationFacts {
            assistant_turns,
            assistant_turns_since_user: assistant_turns,
            last_user: String::new(),
        },
    }
}

/// The key holding an API's conversation.
pub(crate) fn conversation_key(api: Api) -> &'static str {
    match api {
        Api::Openai | Api::Anthropic | Api::Mistral | Api::Bedrock => "messages",
        Api::Responses => "input",
        Api::Google => "contents",
    }
}

/// The facts a script needs about a request's conversation.
pub(crate) fn facts(api: Api, body: &Value) -> ConversationFacts {
    let items = body
        .get(conversation_key(api))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    facts_of(api, items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn routes() {
        assert_eq!(Api::from_path("/v1/chat/completions"), Some(Api::Openai));
        assert_eq!(Api::from_path("/v1/messages"), Some(Api::Anthropic));
        assert_eq!(Api::from_path("/v1/responses"), Some(Api::Responses));
        assert_eq!(
            Api::from_path("/v1beta/models/mock-model:streamGenerateContent?alt=sse"),
            Some(Api::Google)
        );
        assert_eq!(Api::from_path("/mistral/v1/chat/completions"), Some(Api::Mistral));
        assert_eq!(Api::from_path("/model/a%3A0/converse-stream"), Some(Api::Bedrock));
        assert_eq!(Api::from_path("/v1/other"), None);
    }

    #[test]
    fn anthropic_tool_results_are_not_user_text() {
        let body = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "use a tool"}]},
            {"role": "assistant", "content": []},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}]},
        ]});
        let f = facts(Api::Anthropic, &body);
        assert_eq!(
            (f.last_user.as_str(), f.assistant_turns, f.assistant_turns_since_user),
            ("use a tool", 1, 1)
        );
    }

    #[test]
    fn responses_items_of_one_reply_count_once() {
        let body = json!({"input": [
            {"role": "developer", "content": "sys"},
            {"role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {"type": "reasoning", "id": "rs"},
            {"type": "message", "role": "assistant", "content": []},
            {"type": "function_call", "call_id": "c"},
            {"type": "function_call_output", "call_id": "c", "output": "x"},
            {"type": "function_call", "call_id": "d"},
            {"type": "function_call_output", "call_id": "d", "output": "x"},
        ]});
        let f = facts(Api::Responses, &body);
        assert_eq!(
            (f.last_user.as_str(), f.assistant_turns, f.assistant_turns_since_user),
            ("go", 2, 2)
        );
    }

    #[test]
    fn openai_string_content_and_google_parts() {
        let f = facts(
            Api::Openai,
            &json!({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}]}),
        );
        assert_eq!((f.last_user.as_str(), f.assistant_turns), ("hello", 0));
        let f = facts(
            Api::Google,
            &json!({"contents": [{"role": "user", "parts": [{"text": "a"}]}, {"role": "model", "parts": []},
                {"role": "user", "parts": [{"functionResponse": {}}]}]}),
        );
        assert_eq!(
            (f.last_user.as_str(), f.assistant_turns, f.assistant_turns_since_user),
            ("a", 1, 1)
        );
    }
}
