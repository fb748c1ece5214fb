//! Reading a request body: which API it speaks, the last user text, and how many assistant
//! turns the conversation already holds (the facts a script chooses its reply by).

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

/// One entry of a conversation, reduced to what turn selection needs.
#[derive(Debug, PartialEq)]
enum Entry {
    User(String),
    Assistant,
    Other,
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

fn entries(api: Api, body: &Value) -> Vec<Entry> {
    // Borrowed: a resumed session's request is megabytes, and the mock answers after this.
    let list = |key: &str| body.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    match api {
        Api::Openai | Api::Anthropic | Api::Mistral => list("messages")
            .iter()
            .map(|m| match m.get("role").and_then(Value::as_str) {
                Some("assistant") => Entry::Assistant,
                Some("user") => match m.get("content").and_then(|c| content_text(c, &["text"])) {
                    Some(text) => Entry::User(text),
                    None => Entry::Other,
                },
                _ => Entry::Other,
            })
            .collect(),
        Api::Responses => {
            let mut out: Vec<Entry> = Vec::new();
            for item in list("input") {
                let kind = item.get("type").and_then(Value::as_str);
                let role = item.get("role").and_then(Value::as_str);
                let is_output = matches!(kind, Some("reasoning" | "function_call" | "custom_tool_call"))
                    || role == Some("assistant");
                if is_output {
                    // Reasoning, message and function calls of one reply are separate items.
                    if out.last() != Some(&Entry::Assistant) {
                        out.push(Entry::Assistant);
                    }
                } else if role == Some("user") {
                    match item.get("content").and_then(|c| content_text(c, &["input_text"])) {
                        Some(text) => out.push(Entry::User(text)),
                        None => out.push(Entry::Other),
                    }
                } else {
                    out.push(Entry::Other);
                }
            }
            out
        }
        Api::Bedrock => list("messages")
            .iter()
            .map(|m| match m.get("role").and_then(Value::as_str) {
                Some("assistant") => Entry::Assistant,
                Some("user") => {
                    // Bedrock blocks are keyed by kind: `{"text": ...}`, `{"toolResult": ...}`.
                    let texts: Vec<&str> = m
                        .get("content")
                        .and_then(Value::as_array)
                        .map(|blocks| {
                            blocks
                                .iter()
                                .filter_map(|b| b.get("text").and_then(Value::as_str))
                                .collect()
                        })
                        .unwrap_or_default();
                    if texts.is_empty() {
                        Entry::Other
                    } else {
                        Entry::User(texts.join("\n"))
                    }
                }
                _ => Entry::Other,
            })
            .collect(),
        Api::Google => list("contents")
            .iter()
            .map(|c| match c.get("role").and_then(Value::as_str) {
                Some("model") => Entry::Assistant,
                Some("user") => {
                    let texts: Vec<&str> = c
                        .get("parts")
                        .and_then(Value::as_array)
                        .map(|parts| {
                            parts
                                .iter()
                                .filter_map(|p| p.get("text").and_then(Value::as_str))
                                .collect()
                        })
                        .unwrap_or_default();
                    if texts.is_empty() {
                        Entry::Other
                    } else {
                        Entry::User(texts.join("\n"))
                    }
                }
                _ => Entry::Other,
            })
            .collect(),
    }
}

/// The facts a script needs about a request's conversation.
pub(crate) fn facts(api: Api, body: &Value) -> ConversationFacts {
    let entries = entries(api, body);
    let assistant_turns = entries.iter().filter(|e| **e == Entry::Assistant).count();
    let last_user_at = entries.iter().rposition(|e| matches!(e, Entry::User(_)));
    let (last_user, since) = match last_user_at {
        Some(i) => {
            let text = match &entries[i] {
                Entry::User(t) => t.clone(),
                _ => String::new(),
            };
            (text, entries[i..].iter().filter(|e| **e == Entry::Assistant).count())
        }
        None => (String::new(), assistant_turns),
    };
    ConversationFacts {
        assistant_turns,
        assistant_turns_since_user: since,
        last_user,
    }
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
