//! Session statistics and context usage (RPC `get_session_stats`, the footer).

use pi_agent::AgentMessage;
use pi_ai::json_number;
use pi_ai::Message;
use pi_session::EntryKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// `get_session_stats` data, computed over every entry of the session.
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

/// One group of `/session`'s cost breakdown.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageCost {
    /// `provider/model`, or `Tools/summaries`.
    pub key: String,
    pub cost: f64,
    pub tokens: u64,
}

/// Token and cost totals while the entries are walked.
#[derive(Default)]
struct Totals {
    tokens: TokenStats,
    cost: f64,
}

impl Totals {
    fn add(&mut self, usage: &pi_ai::Usage) {
        self.tokens.input += usage.input;
        self.tokens.output += usage.output;
        self.tokens.cache_read += usage.cache_read;
        self.tokens.cache_write += usage.cache_write;
        self.cost += usage.cost.total;
    }

    /// A usage kept as JSON (a `usage` entry, a summary's `usage`, a tool result's nested
    /// calls); missing fields count as nothing.
    fn add_value(&mut self, usage: &Value) {
        let n = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        self.tokens.input += n("input");
        self.tokens.output += n("output");
        self.tokens.cache_read += n("cacheRead");
        self.tokens.cache_write += n("cacheWrite");
        self.cost += usage.pointer("/cost/total").and_then(Value::as_f64).unwrap_or(0.0);
    }
}

impl AgentSession {
    /// Counts and totals over every entry of the session file, compacted history included
    /// (pi 1.6 counts what was billed), plus the current context usage. Besides the replies,
    /// the totals hold what summaries, cache refreshes and tool results' own calls cost.
    pub fn session_stats(&self) -> SessionStats {
        let mut totals = Totals::default();
        let mut stats = self.with_store(|s| {
            let mut stats = SessionStats {
                session_file: s.session_file().map(|p| p.display().to_string()),
                session_id: s.session_id().to_string(),
                user_messages: 0,
                assistant_messages: 0,
                tool_calls: 0,
                tool_results: 0,
                total_messages: 0,
                tokens: TokenStats::default(),
                cost: 0.0,
                context_usage: None,
            };
            for entry in s.get_entries() {
                match &entry.kind {
                    EntryKind::Unknown { type_name, fields } if type_name == "usage" => {
                        if let Some(usage) = fields.get("usage") {
                            totals.add_value(usage);
                        }
                    }
                    EntryKind::Compaction { extra, .. } | EntryKind::BranchSummary { extra, .. } => {
                        if let Some(usage) = extra.get("usage") {
                            totals.add_value(usage);
                        }
                    }
                    EntryKind::Message { message, .. } => {
                        stats.total_messages += 1;
                        match message {
                            AgentMessage::Llm(Message::User(_)) => stats.user_messages += 1,
                            AgentMessage::Llm(Message::Assistant(a)) => {
                                stats.assistant_messages += 1;
                                stats.tool_calls += a.tool_calls().count() as u64;
                                totals.add(&a.usage);
                            }
                            AgentMessage::Llm(Message::ToolResult(r)) => {
                                stats.tool_results += 1;
                                if let Some(usage) = r.extra.get("usage") {
                                    totals.add_value(usage);
                                }
                            }
                            AgentMessage::Custom(_) => {}
                        }
                    }
                    _ => {}
                }
            }
            stats
        });
        let mut t = totals.tokens;
        t.total = t.input + t.output + t.cache_read + t.cache_write;
        stats.tokens = t;
        stats.cost = totals.cost;
        stats.context_usage = self.context_usage();
        stats
    }

    /// What each model cost over every entry of the file, most expensive first, as pi 1.6's
    /// `/session` lists it: replies under `provider/model` (the model that answered, when
    /// the provider routed the request), cache refreshes under theirs, and what tool results
    /// and summaries spent under `Tools/summaries`. Groups with no cost and no tokens are left out.
    pub fn usage_cost_breakdown(&self) -> Vec<UsageCost> {
        let mut groups: Vec<(String, Totals)> = Vec::new();
        let mut add = |key: String, f: &dyn Fn(&mut Totals)| match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, t)) => f(t),
            None => {
                let mut t = Totals::default();
                f(&mut t);
                groups.push((key, t));
            }
        };
        const TOOLS: &str = "Tools/summaries";
        self.with_store(|s| {
            for entry in s.get_entries() {
                match &entry.kind {
                    EntryKind::Message {
                        message: AgentMessage::Llm(Message::Assistant(a)),
                        ..
                    } => {
                        let model = a.response_model.as_deref().unwrap_or(&a.model);
                        add(format!("{}/{model}", a.provider), &|t| t.add(&a.usage));
                    }
                    EntryKind::Message {
                        message: AgentMessage::Llm(Message::ToolResult(r)),
                        ..
                    } => {
                        if let Some(usage) = r.extra.get("usage") {
                            add(TOOLS.into(), &|t| t.add_value(usage));
                        }
                    }
                    EntryKind::Unknown { type_name, fields } if type_name == "usage" => {
                        let text = |k: &str| fields.get(k).and_then(Value::as_str).unwrap_or("undefined");
                        if let Some(usage) = fields.get("usage") {
                            add(format!("{}/{}", text("provider"), text("model")), &|t| {
                                t.add_value(usage)
                            });
                        }
                    }
                    EntryKind::Compaction { extra, .. } | EntryKind::BranchSummary { extra, .. } => {
                        if let Some(usage) = extra.get("usage") {
                            add(TOOLS.into(), &|t| t.add_value(usage));
                        }
                    }
                    _ => {}
                }
            }
        });
        let mut out: Vec<UsageCost> = groups
            .into_iter()
            .map(|(key, t)| UsageCost {
                key,
                cost: t.cost,
                tokens: t.tokens.input + t.tokens.output + t.tokens.cache_read + t.tokens.cache_write,
            })
            .filter(|u| u.cost > 0.0 || u.tokens > 0)
            .collect();
        // Stable: equal costs keep the order they first appeared in.
        out.sort_by(|a, b| b.cost.total_cmp(&a.cost));
        out
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
