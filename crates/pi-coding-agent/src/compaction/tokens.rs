//! Token estimates of messages and contexts, and the threshold that triggers compaction.
//!
//! The estimate is pi's: characters / 4 rounded up, counting characters as JavaScript does
//! (UTF-16 units), so both implementations cut a session at the same place.

use pi_ai::{AssistantMessage, Content, Message, StopReason, Usage, UserContent};
use serde_json::Value;

use crate::config::settings::CompactionSettings;

/// Characters an image counts as (1200 tokens).
const IMAGE_CHARS: usize = 4800;

/// A message as the estimator needs to see it: the typed LLM form, or a custom role's fields.
pub trait MessageView {
    fn llm(&self) -> Option<&Message>;
    fn role(&self) -> &str;
    /// A field of a custom-role message.
    fn field(&self, name: &str) -> Option<&Value>;
}

impl MessageView for pi_agent::AgentMessage {
    fn llm(&self) -> Option<&Message> {
        self.as_llm()
    }
    fn role(&self) -> &str {
        pi_agent::AgentMessage::role(self)
    }
    fn field(&self, name: &str) -> Option<&Value> {
        pi_agent::AgentMessage::field(self, name)
    }
}

/// JavaScript's `string.length`: UTF-16 code units.
pub fn js_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

fn tokens_for(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// The estimated tokens of one message (pi's `estimateTokens`).
///
/// user: text; assistant: text, thinking, tool names and JSON arguments; toolResult and
/// custom: text plus 4800 characters per image; bashExecution: command and output;
/// summaries: the summary. Anything else counts 0.
pub fn estimate_tokens<M: MessageView + ?Sized>(message: &M) -> u64 {
    if let Some(m) = message.llm() {
        return tokens_for(match m {
            Message::User(u) => user_content_chars(&u.content),
            Message::Assistant(a) => assistant_chars(&a.content),
            Message::ToolResult(r) => blocks_chars(&r.content, true),
        });
    }
    let str_field = |k: &str| message.field(k).and_then(Value::as_str).map_or(0, js_len);
    tokens_for(match message.role() {
        "custom" | "toolResult" => message.field("content").map_or(0, |c| json_content_chars(c, true)),
        "user" => message.field("content").map_or(0, |c| json_content_chars(c, false)),
        "assistant" => message.field("content").map_or(0, json_assistant_chars),
        "bashExecution" => str_field("command") + str_field("output"),
        "branchSummary" | "compactionSummary" => str_field("summary"),
        // pi 1.6's transcript system message: its text, section texts and declared tools.
        "system" => {
            let content = message.field("content").map_or(0, |c| json_content_chars(c, false));
            let sections = match message.field("sections") {
                Some(Value::Object(m)) => m.values().filter_map(Value::as_str).map(js_len).sum(),
                _ => 0,
            };
            let tools = message.field("toolsAdded").map_or(0, json_len);
            content + sections + tools
        }
        _ => 0,
    })
}

fn user_content_chars(content: &UserContent) -> usize {
    match content {
        UserContent::Text(s) => js_len(s),
        UserContent::Blocks(blocks) => blocks_chars(blocks, false),
    }
}

fn blocks_chars(blocks: &[Content], images: bool) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            Content::Text(t) => js_len(&t.text),
            Content::Image(_) if images => IMAGE_CHARS,
            _ => 0,
        })
        .sum()
}

fn assistant_chars(blocks: &[Content]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            Content::Text(t) => js_len(&t.text),
            Content::Thinking(t) => js_len(&t.thinking),
            Content::ToolCall(c) => js_len(&c.name) + json_len(&c.arguments),
            Content::Image(_) => 0,
        })
        .sum()
}

/// `JSON.stringify(value).length`.
fn json_len(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |s| js_len(&s))
}

/// Content kept as JSON (a custom message, or an LLM message this version could not type).
fn json_content_chars(content: &Value, images: bool) -> usize {
    match content {
        Value::String(s) => js_len(s),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b.get("text").and_then(Value::as_str).map_or(0, js_len),
                Some("image") if images => IMAGE_CHARS,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

fn json_assistant_chars(content: &Value) -> usize {
    let Value::Array(blocks) = content else {
        return 0;
    };
    let s = |b: &Value, k: &str| b.get(k).and_then(Value::as_str).map_or(0, js_len);
    blocks
        .iter()
        .map(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => s(b, "text"),
            Some("thinking") => s(b, "thinking"),
            Some("toolCall") => s(b, "name") + b.get("arguments").map_or(0, json_len),
            _ => 0,
        })
        .sum()
}

/// Context tokens from a reply's usage: `totalTokens`, or the sum of the buckets when it is 0.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

/// The usage of an assistant reply that has a valid one (not aborted, not an error).
pub fn assistant_usage(message: &AssistantMessage) -> Option<&Usage> {
    match message.stop_reason {
        StopReason::Aborted | StopReason::Error => None,
        _ => Some(&message.usage),
    }
}

fn message_usage<M: MessageView + ?Sized>(message: &M) -> Option<&Usage> {
    match message.llm() {
        Some(Message::Assistant(a)) => assistant_usage(a),
        _ => None,
    }
}

/// The usage of the last assistant message with a valid one, among session entries.
pub fn last_assistant_usage<'a>(entries: &[&'a pi_session::Entry]) -> Option<&'a Usage> {
    entries.iter().rev().find_map(|e| e.message().and_then(message_usage))
}

/// An estimate of a context's size (pi's `estimateContextTokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextEstimate {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// Context tokens of the last assistant reply with a valid usage (0 without one).
    pub usage_tokens: u64,
    /// Estimated tokens of the messages after that reply (all messages without one).
    pub trailing_tokens: u64,
    /// Index of that reply.
    pub last_usage_index: Option<usize>,
}

/// The context's tokens: the last valid usage as the provider reported it, plus chars/4
/// estimates of the messages after it (or of every message when there is no usage).
pub fn estimate_context_tokens<M: MessageView>(messages: &[M]) -> ContextEstimate {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| message_usage(m).map(|u| (i, u)));
    match last {
        None => {
            let estimated = messages.iter().map(estimate_tokens).sum();
            ContextEstimate {
                tokens: estimated,
                usage_tokens: 0,
                trailing_tokens: estimated,
                last_usage_index: None,
            }
        }
        Some((index, usage)) => {
            let usage_tokens = calculate_context_tokens(usage);
            let trailing_tokens = messages[index + 1..].iter().map(estimate_tokens).sum();
            ContextEstimate {
                tokens: usage_tokens + trailing_tokens,
                usage_tokens,
                trailing_tokens,
                last_usage_index: Some(index),
            }
        }
    }
}

/// Whether a context this large should be compacted: enabled, and over the window less the
/// reserve.
pub fn should_compact(context_tokens: u64, context_window: u64, settings: &CompactionSettings) -> bool {
    settings.enabled && (context_tokens as i128) > (context_window as i128) - (settings.reserve_tokens as i128)
}
