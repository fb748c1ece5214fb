//! Tests of the compaction rules, with entries built by hand and a faux model that records
//! what it was asked.

mod llm;
mod pure;

use pi_ai::{
    AssistantMessage, Content, Message, StopReason, ToolCall, ToolResultMessage, Usage, UserContent, UserMessage,
};
use pi_session::{AgentMessage, Entry, EntryKind};
use serde_json::{json, Map, Value};
use std::sync::Arc;

use crate::config::settings::CompactionSettings;

pub(super) fn settings(keep_recent_tokens: u64) -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 16384,
        keep_recent_tokens,
    }
}

/// `n` characters of text.
pub(super) fn text(n: usize) -> String {
    "x".repeat(n)
}

pub(super) fn user_msg(t: &str) -> Message {
    Message::User(Arc::new(UserMessage {
        content: UserContent::Text(t.to_string()),
        timestamp: 1,
        extra: Map::new(),
    }))
}

pub(super) fn assistant_msg(content: Vec<Content>) -> AssistantMessage {
    AssistantMessage {
        content,
        api: "faux".into(),
        provider: "faux".into(),
        model: "faux-1".into(),
        stop_reason: StopReason::Stop,
        timestamp: 2,
        ..Default::default()
    }
}

pub(super) fn tool_call(name: &str, args: Value) -> Content {
    Content::ToolCall(ToolCall {
        id: format!("call_{name}"),
        name: name.to_string(),
        arguments: args,
        thought_signature: None,
        extra: Map::new(),
    })
}

pub(super) fn tool_result_msg(t: &str) -> Message {
    Message::ToolResult(Arc::new(ToolResultMessage {
        tool_call_id: "call".into(),
        tool_name: "read".into(),
        content: vec![Content::text(t)],
        details: None,
        is_error: false,
        duration_ms: None,
        timestamp: 3,
        extra: Map::new(),
    }))
}

pub(super) fn usage(total: u64) -> Usage {
    Usage {
        input: total,
        total_tokens: total,
        ..Default::default()
    }
}

/// A chain of entries, each the child of the previous one, with ids `e0`, `e1`, ...
#[derive(Default)]
pub(super) struct Chain {
    pub entries: Vec<Entry>,
    /// Replies end in an error, so their usage is not used and contexts are estimated.
    pub errors: bool,
}

impl Chain {
    pub fn without_usage() -> Self {
        Chain {
            errors: true,
            ..Default::default()
        }
    }

    pub fn push(&mut self, kind: EntryKind) -> String {
        let id = format!("e{}", self.entries.len());
        let parent_id = self.entries.last().map(|e| e.id.clone());
        self.entries.push(Entry {
            id: id.clone(),
            parent_id,
            timestamp: "2026-01-01T00:00:00.000Z".into(),
            kind,
        });
        id
    }

    pub fn message(&mut self, m: impl Into<AgentMessage>) -> String {
        self.push(EntryKind::Message {
            message: m.into(),
            extra: Default::default(),
        })
    }

    pub fn user(&mut self, t: &str) -> String {
        self.message(user_msg(t))
    }

    pub fn assistant(&mut self, content: Vec<Content>) -> String {
        let mut a = assistant_msg(content);
        if self.errors {
            a.stop_reason = StopReason::Error;
        }
        self.message(Message::Assistant(Arc::new(a)))
    }

    pub fn assistant_text(&mut self, t: &str) -> String {
        self.assistant(vec![Content::text(t)])
    }

    pub fn tool_result(&mut self, t: &str) -> String {
        self.message(tool_result_msg(t))
    }

    pub fn model_change(&mut self) -> String {
        self.push(EntryKind::ModelChange {
            provider: "faux".into(),
            model_id: "faux-1".into(),
            extra: Default::default(),
        })
    }

    pub fn compaction(&mut self, summary: &str, first_kept: &str, details: Option<Value>, from_hook: bool) -> String {
        self.push(EntryKind::Compaction {
            summary: summary.into(),
            first_kept_entry_id: first_kept.into(),
            tokens_before: Box::new(json!(1000)),
            details: details.map(Box::new),
            from_hook: Some(from_hook),
            extra: Default::default(),
        })
    }

    pub fn branch_summary(&mut self, summary: &str, details: Option<Value>, from_hook: bool) -> String {
        self.push(EntryKind::BranchSummary {
            from_id: "root".into(),
            summary: summary.into(),
            details: details.map(Box::new),
            from_hook: Some(from_hook),
            extra: Default::default(),
        })
    }

    pub fn path(&self) -> Vec<&Entry> {
        self.entries.iter().collect()
    }
}

/// The text of a user message of the session form.
pub(super) fn message_text(m: &AgentMessage) -> String {
    match m.as_llm() {
        Some(Message::User(u)) => u.content.text(),
        Some(Message::Assistant(a)) => a.text(),
        Some(Message::ToolResult(r)) => pi_ai::join_text(&r.content),
        None => m.field("summary").and_then(Value::as_str).unwrap_or("").to_string(),
    }
}
