//! Session statistics and context usage (RPC `get_session_stats`, the footer).

use pi_agent::AgentMessage;
use pi_ai::json_number;
use pi_ai::Message;
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

pub use crate::compaction::ContextUsage;

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

impl AgentSession {
    /// Counts and totals over the whole session file, plus the current context usage.
    pub fn session_stats(&self) -> SessionStats {
        // Counted over the context (after a compaction: the summary and the kept messages),
        // as pi does.
        let (session_file, session_id) = self.with_store(|s| {
            (
                s.session_file().map(|p| p.display().to_string()),
                s.session_id().to_string(),
            )
        });
        let stored = self.messages();
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

    /// How full the context window is (`None` without a model).
    pub fn context_usage(&self) -> Option<ContextUsage> {
        let window = self.model().map(|m| m.context_window);
        let branch: Vec<pi_session::Entry> = self.with_store(|s| s.get_branch(None).into_iter().cloned().collect());
        let refs: Vec<&pi_session::Entry> = branch.iter().collect();
        self.inner
            .agent
            .with_messages(|messages| crate::compaction::context_usage(window, &refs, messages))
    }
}
