//! The conversation as plain text for a summariser, so the model reads it instead of
//! continuing it.

use std::fmt::Write as _;

use pi_ai::{Content, Message, UserContent};
use serde_json::Value;

use super::tokens::js_len;

/// Longest tool result text kept, in JavaScript characters.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The first `max` JavaScript characters of `text` and a marker with the count of the rest.
pub fn truncate_for_summary(text: &str, max: usize) -> String {
    let total = js_len(text);
    if total <= max {
        return text.to_string();
    }
    // Cut on a character boundary at or before `max` UTF-16 units.
    let mut units = 0;
    let mut cut = text.len();
    for (i, c) in text.char_indices() {
        if units + c.len_utf16() > max {
            cut = i;
            break;
        }
        units += c.len_utf16();
    }
    format!("{}\n\n[... {} more characters truncated]", &text[..cut], total - max)
}

/// Serialise LLM messages (custom roles already converted) as `[User]: …`,
/// `[Assistant thinking]: …`, `[Assistant]: …`, `[Assistant tool calls]: name(k=<json>, …); …`
/// and `[Tool result]: …` parts joined by blank lines. Tool results are cut at
/// [`TOOL_RESULT_MAX_CHARS`].
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::User(u) => {
                let text = match &u.content {
                    UserContent::Text(s) => s.clone(),
                    UserContent::Blocks(blocks) => concat_text(blocks),
                };
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(a) => {
                let mut texts = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        Content::Text(t) => texts.push(t.text.as_str()),
                        Content::Thinking(t) => thinking.push(t.thinking.as_str()),
                        Content::ToolCall(c) => calls.push(format!("{}({})", c.name, format_args(&c.arguments))),
                        Content::Image(_) => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !texts.is_empty() {
                    parts.push(format!("[Assistant]: {}", texts.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(r) => {
                let text = concat_text(&r.content);
                if !text.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
        }
    }
    parts.join("\n\n")
}

/// Text blocks concatenated without a separator.
fn concat_text(blocks: &[Content]) -> String {
    blocks.iter().filter_map(Content::as_text).collect()
}

/// `k=<json>, …` for an arguments object; nothing for anything else.
fn format_args(arguments: &Value) -> String {
    let mut out = String::new();
    if let Value::Object(map) = arguments {
        for (i, (k, v)) in map.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let json = serde_json::to_string(v).unwrap_or_default();
            let _ = write!(out, "{k}={json}");
        }
    }
    out
}
