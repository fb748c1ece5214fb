//! Session statistics and context usage (RPC `get_session_stats`, the footer).

use pi_agent::AgentMessage;
use pi_ai::json_number;
use pi_ai::{Content, Message, StopReason};
use serde::{Deserialize, Serialize};

use super::agent_session::AgentSession;

/// Token totals of `get_session_stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct TokenStats {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total: u64,
}

/// How full the context window is; `tokens`/`percent` are `null` when unknown (right after
/// a compaction, before the next reply).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    pub context_window: u64,
    #[serde(serialize_with = "json_number::serialize_opt")]
    pub percent: Option<f64>,
}

/// `get_session_stats` data, computed over the current context messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub tool_calls: u64,
    pub tool_results: u64,
    pub total_messages: u64,
    pub tokens: TokenStats,
    #[serde(serialize_with = "json_number::serialize")]
    pub cost: f64,
    /// Omitted without a model (no context window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
}

/// Rough token count of text: four characters a token, rounded up (pi's estimate).
fn chars_to_tokens(chars: usize) -> u64 {
    u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX)
}

/// Characters a message contributes to the context (images count 4,800).
fn message_chars(message: &AgentMessage) -> usize {
    let blocks = |content: &[Content]| -> usize {
        content
            .iter()
            .map(|c| match c {
                Content::Text(t) => t.text.len(),
                Content::Thinking(t) => t.thinking.len(),
                Content::Image(_) => 4800,
                Content::ToolCall(tc) => tc.name.len() + tc.arguments.to_string().len(),
            })
            .sum()
    };
    match message {
        AgentMessage::Llm(Message::User(u)) => blocks(&u.content.to_blocks()),
        AgentMessage::Llm(Message::Assistant(a)) => blocks(&a.content),
        AgentMessage::Llm(Message::ToolResult(r)) => blocks(&r.content),
        AgentMessage::Custom(c) => serde_json::to_string(&c.fields).map(|s| s.len()).unwrap_or(0),
    }
}

/// Context tokens: the last successful reply's usage plus an estimate of what came after it;
/// `None` when a compaction summary follows the last reply (the usage predates it).
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> Option<u64> {
    let last_reply = messages.iter().rposition(|m| {
        m.as_assistant()
            .is_some_and(|a| !matches!(a.stop_reason, StopReason::Error | StopReason::Aborted))
    });
    let Some(i) = last_reply else {
        let summarised = messages.iter().any(|m| m.role() == "compactionSummary");
        return (!summarised).then(|| messages.iter().map(|m| chars_to_tokens(message_chars(m))).sum());
    };
    let after = &messages[i + 1..];
    if after.iter().any(|m| m.role() == "compactionSummary") {
        return None;
    }
    let usage = messages[i].as_assistant().map(|a| a.usage)?;
    let base = if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    };
    Some(base + after.iter().map(|m| chars_to_tokens(message_chars(m))).sum::<u64>())
}

impl AgentSession {
    /// Counts and totals over the whole session file, plus the current context usage.
    pub fn session_stats(&self) -> SessionStats {
        let (session_file, session_id, stored) = self.with_store(|s| {
            let messages: Vec<AgentMessage> = s
                .get_entries()
                .iter()
                .filter_map(|e| e.message())
                .map(super::messages::from_stored)
                .collect();
            (
                s.session_file().map(|p| p.display().to_string()),
                s.session_id().to_string(),
                messages,
            )
        });
        let mut stats = SessionStats {
            session_file,
            session_id,
            user_messages: 0,
            assistant_messages: 0,
            tool_calls: 0,
            tool_results: 0,
            total_messages: stored.len() as u64,
            tokens: TokenStats::default(),
            cost: 0.0,
            context_usage: None,
        };
        for m in &stored {
            match m {
                AgentMessage::Llm(Message::User(_)) => stats.user_messages += 1,
                AgentMessage::Llm(Message::Assistant(a)) => {
                    stats.assistant_messages += 1;
                    stats.tool_calls += a.tool_calls().count() as u64;
                    stats.tokens.input += a.usage.input;
                    stats.tokens.output += a.usage.output;
                    stats.tokens.cache_read += a.usage.cache_read;
                    stats.tokens.cache_write += a.usage.cache_write;
                    stats.cost += a.usage.cost.total;
                }
                AgentMessage::Llm(Message::ToolResult(_)) => stats.tool_results += 1,
                AgentMessage::Custom(_) => {}
            }
        }
        let t = &mut stats.tokens;
        t.total = t.input + t.output + t.cache_read + t.cache_write;
        stats.context_usage = self.context_usage();
        stats
    }

    /// How full the context window is.
    pub fn context_usage(&self) -> Option<ContextUsage> {
        let model = self.model()?;
        let tokens = self.inner.agent.with_messages(estimate_context_tokens);
        #[allow(clippy::cast_precision_loss)]
        let percent = tokens.map(|t| t as f64 / model.context_window.max(1) as f64 * 100.0);
        Some(ContextUsage {
            tokens,
            context_window: model.context_window,
            percent,
        })
    }
}
