//! The unified message model: content blocks, messages, usage, stop reasons, tools and context.
//!
//! Every type serializes to exactly the JSON the TypeScript pi writes (camelCase, same field
//! order, optional fields omitted). Fields this version does not know are kept in `extra` so a
//! read-modify-write never drops them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::json_number;

/// Unknown fields carried through a read-modify-write.
pub type Extra = Map<String, Value>;

/// Milliseconds since the Unix epoch, as JavaScript's `Date.now()`.
pub fn now_ms() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    pub thinking: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64 data, no `data:` prefix.
    pub data: String,
    pub mime_type: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Parsed JSON arguments (an object; a best-effort partial parse while streaming).
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One block of message content. Which kinds are allowed depends on the message role.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum Content {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "thinking")]
    Thinking(ThinkingContent),
    #[serde(rename = "image")]
    Image(ImageContent),
    #[serde(rename = "toolCall")]
    ToolCall(ToolCall),
}

impl Content {
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(TextContent {
            text: text.into(),
            ..Default::default()
        })
    }

    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            extra: Extra::new(),
        })
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// A user message's content: a plain string or a list of text and image blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<Content>),
}

impl Default for UserContent {
    fn default() -> Self {
        UserContent::Blocks(Vec::new())
    }
}

impl UserContent {
    /// All text joined with newlines (images ignored).
    pub fn text(&self) -> String {
        match self {
            UserContent::Text(s) => s.clone(),
            UserContent::Blocks(blocks) => join_text(blocks),
        }
    }

    /// The content as blocks (a plain string becomes one text block).
    pub fn to_blocks(&self) -> Vec<Content> {
        match self {
            UserContent::Text(s) => vec![Content::text(s.clone())],
            UserContent::Blocks(b) => b.clone(),
        }
    }
}

/// Concatenate the text blocks of a content list with `\n`.
pub fn join_text(blocks: &[Content]) -> String {
    let mut out = String::new();
    for t in blocks.iter().filter_map(Content::as_text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(t);
    }
    out
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    pub content: UserContent,
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    #[default]
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    /// Still streaming: only on the `message_start` of a reply in progress, never persisted.
    Pending,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Pending => "pending",
        }
    }
}

/// Cost in dollars, per usage bucket.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct UsageCost {
    #[serde(serialize_with = "json_number::serialize", default)]
    pub input: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub output: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub cache_read: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub cache_write: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub total: f64,
    /// Whether `total` is the provider's own bill (`false`: estimated from catalogue prices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
}

/// Token counts of one response. `input` excludes cached tokens; `output` includes reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
    /// Reasoning tokens (already counted in `output`), where the API reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    #[serde(default)]
    pub total_tokens: u64,
    #[serde(default)]
    pub cost: UsageCost,
    /// Anthropic: the part of `cache_write` written with the one-hour lifetime.
    #[serde(default, rename = "cacheWrite1h", skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    pub content: Vec<Content>,
    pub api: String,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    pub stop_reason: StopReason,
    pub timestamp: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The provider's own stop reason (`stop`, `tool_calls`, `end_turn`, `completed`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    /// How long the reply streamed, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The thinking level pi asked for (`off`, `low`, ... `max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl AssistantMessage {
    /// An empty message for `model`, stamped now.
    pub fn empty_for(model: &Model) -> Self {
        AssistantMessage {
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            timestamp: now_ms(),
            ..Default::default()
        }
    }

    /// Add one entry to the message's `diagnostics` list.
    pub fn push_diagnostic(&mut self, diagnostic: Value) {
        match &mut self.diagnostics {
            Some(Value::Array(list)) => list.push(diagnostic),
            other => *other = Some(Value::Array(vec![diagnostic])),
        }
    }

    /// The text blocks joined with newlines.
    pub fn text(&self) -> String {
        join_text(&self.content)
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|c| match c {
            Content::ToolCall(tc) => Some(tc),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub is_error: bool,
    /// How long the tool ran, in milliseconds (absent when it never ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A message the LLM sees.
///
/// Each variant holds its message behind an `Arc`: a transcript is cloned for every run (the
/// run's snapshot), for every request (the list handed to the provider) and shared with the
/// session's entries, and with shared messages those copies are pointers instead of the whole
/// history. Change one in place with [`Arc::make_mut`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role")]
pub enum Message {
    #[serde(rename = "user")]
    User(Arc<UserMessage>),
    #[serde(rename = "assistant")]
    Assistant(Arc<AssistantMessage>),
    #[serde(rename = "toolResult")]
    ToolResult(Arc<ToolResultMessage>),
}

impl From<UserMessage> for Message {
    fn from(m: UserMessage) -> Self {
        Message::User(Arc::new(m))
    }
}

impl From<AssistantMessage> for Message {
    fn from(m: AssistantMessage) -> Self {
        Message::Assistant(Arc::new(m))
    }
}

impl From<ToolResultMessage> for Message {
    fn from(m: ToolResultMessage) -> Self {
        Message::ToolResult(Arc::new(m))
    }
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Message::User(Arc::new(UserMessage {
            content: UserContent::Blocks(vec![Content::text(text)]),
            timestamp: now_ms(),
            extra: Extra::new(),
        }))
    }

    pub fn role(&self) -> &'static str {
        match self {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
        }
    }

    pub fn timestamp(&self) -> i64 {
        match self {
            Message::User(m) => m.timestamp,
            Message::Assistant(m) => m.timestamp,
            Message::ToolResult(m) => m.timestamp,
        }
    }
}

/// A tool the model may call: JSON-schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    /// pi's `constrainedSampling`: `{"type": "grammar", "variants": {"openai_lark": ...}}` lets
    /// APIs with grammar-constrained tools take the one string argument as raw text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<Value>,
}

/// Everything one LLM request is built from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
}

/// Reasoning effort, `off` to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    #[default]
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    /// Above `xhigh`; only models whose thinking map names it offer it.
    Max,
}

impl ThinkingLevel {
    pub const ALL: [ThinkingLevel; 7] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
        ThinkingLevel::Max,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

impl std::fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Price in dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    #[serde(serialize_with = "json_number::serialize", default)]
    pub input: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub output: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub cache_read: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub cache_write: f64,
    /// Prices that replace these once a request's input (cached tokens included) is above a
    /// threshold (long-context pricing); the highest threshold passed wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<CostTier>,
}

/// The prices of one long-context tier, in dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CostTier {
    pub input_tokens_above: u64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub input: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub output: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub cache_read: f64,
    #[serde(serialize_with = "json_number::serialize", default)]
    pub cache_write: f64,
}

/// What a model accepts as input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Text,
    Image,
}

/// A model: where it lives, which wire API it speaks, what it costs and can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    pub base_url: String,
    pub reasoning: bool,
    pub input: Vec<InputKind>,
    pub cost: ModelCost,
    pub context_window: u64,
    pub max_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Map<String, Value>>,
    /// API-specific compatibility flags (see each provider module for the fields it reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Value>,
    /// Per-level provider value; `null` removes a level, a missing `xhigh` means unsupported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<Map<String, Value>>,
    /// How long a prompt cache entry lives, per retention tier (pi 1.x `promptCache`); what
    /// cache warming schedules its refreshes by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
}

/// Prompt cache lifetimes in seconds: `short` for the default retention, `long` for
/// `cacheRetention: "long"`. A missing tier means the provider keeps no entry for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct PromptCache {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "json_number::serialize_opt"
    )]
    pub short: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "json_number::serialize_opt"
    )]
    pub long: Option<f64>,
}

impl Model {
    pub fn supports_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }

    /// Same provider and id (pi's `modelsAreEqual`).
    pub fn same_as(&self, other: &Model) -> bool {
        self.provider == other.provider && self.id == other.id
    }
}

/// Token budgets for budget-based thinking, overriding the defaults per level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingBudgets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimal: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub medium: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLDEN_ASSISTANT: &str = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"The user wants me to inspect hello.txt first.","thinkingSignature":"sig"},{"type":"text","text":"Let me read the file first.","textSignature":"{\"v\":1,\"id\":\"msg_mock0\"}"},{"type":"toolCall","id":"call_mock_0_0|fc_mock_0_0","name":"read","arguments":{"path":"hello.txt"}}],"api":"openai-responses","provider":"mock-responses","model":"mock-model","usage":{"input":1407,"output":16,"cacheRead":0,"cacheWrite":0,"totalTokens":1423,"cost":{"input":0.0014069999999999998,"output":0.000032,"cacheRead":0,"cacheWrite":0,"total":0.0014389999999999997}},"stopReason":"toolUse","timestamp":1796012490579,"responseId":"resp_mock0"}"#;

    #[test]
    fn assistant_message_round_trips_byte_for_byte() {
        let msg: Message = serde_json::from_str(GOLDEN_ASSISTANT).expect("parse");
        assert_eq!(serde_json::to_string(&msg).expect("serialize"), GOLDEN_ASSISTANT);
    }

    #[test]
    fn error_message_follows_response_id() {
        let line = r#"{"role":"assistant","content":[],"api":"anthropic-messages","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"aborted","timestamp":1,"responseId":"msg_mock0","errorMessage":"This operation was aborted"}"#;
        let msg: Message = serde_json::from_str(line).expect("parse");
        assert_eq!(serde_json::to_string(&msg).expect("serialize"), line);
    }

    #[test]
    fn unknown_fields_survive() {
        let line = r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x","future":1}],"isError":false,"timestamp":5,"newField":{"a":[1,2]}}"#;
        let msg: Message = serde_json::from_str(line).expect("parse");
        assert_eq!(serde_json::to_string(&msg).expect("serialize"), line);
    }

    #[test]
    fn user_content_accepts_string_and_blocks() {
        let a: Message = serde_json::from_str(r#"{"role":"user","content":"hi","timestamp":1}"#).expect("string");
        let b: Message = serde_json::from_str(
            r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"}],"timestamp":1}"#,
        )
        .expect("blocks");
        match (a, b) {
            (Message::User(a), Message::User(b)) => {
                assert_eq!(a.content.text(), "hi");
                assert_eq!(b.content.text(), "hi");
                assert_eq!(b.content.to_blocks().len(), 2);
            }
            _ => panic!("expected user messages"),
        }
    }

    #[test]
    fn costs_serialize_like_javascript() {
        let cost = UsageCost {
            input: 0.0,
            output: 2.0,
            cache_read: 0.5,
            cache_write: 0.000004,
            total: 0.1 + 0.2,
            total_from_provider: None,
        };
        assert_eq!(
            serde_json::to_string(&cost).expect("serialize"),
            r#"{"input":0,"output":2,"cacheRead":0.5,"cacheWrite":0.000004,"total":0.30000000000000004}"#
        );
    }
}
