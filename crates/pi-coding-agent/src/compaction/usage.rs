//! How full the context is, for the footer and session stats (pi's `getContextUsage`).

use pi_ai::{Message, StopReason};
use pi_session::{Entry, EntryKind};
use serde::Serialize;

use super::tokens::{calculate_context_tokens, estimate_context_tokens, estimate_tokens};

/// The context's size against the model's window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    /// `None` (JSON `null`) right after a compaction, until a reply reports a usage.
    pub tokens: Option<u64>,
    pub context_window: u64,
    /// `tokens / context_window × 100`.
    #[serde(serialize_with = "pi_ai::json_number::serialize_opt")]
    pub percent: Option<f64>,
}

/// The usage for the agent's `messages` on `branch`; `None` without a model or a window.
///
/// After a compaction the last usage measured the old, larger context, so until an assistant
/// reply after the compaction reports a non-zero usage the size is unknown.
pub fn context_usage(
    context_window: Option<u64>,
    branch: &[&Entry],
    messages: &[pi_agent::AgentMessage],
) -> Option<ContextUsage> {
    let context_window = context_window.filter(|w| *w > 0)?;
    if let Some(at) = branch
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction { .. }))
    {
        // The newest assistant after the compaction that did not fail decides.
        let newest_valid = branch[at + 1..]
            .iter()
            .rev()
            .find_map(|e| match e.message()?.as_llm()? {
                Message::Assistant(a) if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error) => Some(a),
                _ => None,
            });
        if newest_valid.is_none_or(|a| calculate_context_tokens(&a.usage) == 0) {
            return Some(ContextUsage {
                tokens: None,
                context_window,
                percent: None,
            });
        }
    }
    let estimate = estimate_context_tokens(messages);
    let tokens = if estimate.last_usage_index.is_some() {
        estimate.tokens
    } else {
        // No reply has measured the context: the system messages count once, as the one
        // system message they add up to (pi's projected estimate).
        let head = crate::session::system_message::current_head(messages).map_or(0, |m| estimate_tokens(&m));
        head + messages
            .iter()
            .filter(|m| !crate::session::system_message::is_system(m))
            .map(estimate_tokens)
            .sum::<u64>()
    };
    Some(ContextUsage {
        tokens: Some(tokens),
        context_window,
        percent: Some(tokens as f64 / context_window as f64 * 100.0),
    })
}
