//! Whether a finished reply calls for a compaction (pi's `_checkCompaction` decision, without
//! the side effects, which belong to the session).

use pi_ai::{is_context_overflow, AssistantMessage, Model, StopReason};
use pi_session::Entry;

use super::summarize::CompactionError;
use super::tokens::{calculate_context_tokens, estimate_context_tokens, should_compact};
use crate::config::settings::CompactionSettings;
use crate::session::CompactionReason;

/// The error a second overflow in one prompt reports (in `compaction_end.errorMessage`).
pub const OVERFLOW_RECOVERY_FAILED: &str = "Context overflow recovery failed after one compact-and-retry attempt. \
Try reducing context or switching to a larger-context model.";

/// What the session should do after a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionTrigger {
    /// The context overflowed: drop the error reply from the agent's messages, compact with
    /// reason `overflow`, then continue the agent (once per user prompt).
    Overflow,
    /// The context overflowed again after the one recovery attempt: emit `compaction_end`
    /// (reason `overflow`, no result, not aborted, no retry) with
    /// [`OVERFLOW_RECOVERY_FAILED`], and stop.
    OverflowRecoveryFailed,
    /// The context passed the threshold: compact with reason `threshold`, no retry.
    Threshold,
}

/// What the decision looks at besides the reply.
pub struct CompactionCheck<'a> {
    pub settings: &'a CompactionSettings,
    /// The session's current model.
    pub model: Option<&'a Model>,
    /// The current branch's latest compaction entry, if any (see
    /// [`super::prepare::latest_compaction`]).
    pub latest_compaction: Option<&'a Entry>,
    /// The agent's current messages (for estimating after an error reply).
    pub messages: &'a [pi_agent::AgentMessage],
    /// Whether this user prompt already had its overflow recovery.
    pub overflow_recovery_attempted: bool,
}

/// The trigger for `assistant`, if any.
///
/// `skip_aborted`: true after `agent_end` (an aborted reply never triggers), false for the
/// check before a new prompt. Nothing triggers when compaction is disabled, or when the reply
/// is not newer than the branch's latest compaction. An overflow counts only when the reply
/// came from the current model. For the threshold, an error reply is measured as the last
/// valid usage plus estimates of the messages after it (nothing when that usage is older
/// than the latest compaction, or there is none).
pub fn check_compaction(
    assistant: &AssistantMessage,
    skip_aborted: bool,
    check: &CompactionCheck<'_>,
) -> Option<CompactionTrigger> {
    if !check.settings.enabled || (skip_aborted && assistant.stop_reason == StopReason::Aborted) {
        return None;
    }
    let context_window = check.model.map_or(0, |m| m.context_window);
    let same_model = check
        .model
        .is_some_and(|m| m.provider == assistant.provider && m.id == assistant.model);
    let compaction_ms = check
        .latest_compaction
        .map(|e| pi_session::ids::iso_to_ms(&e.timestamp));
    // An unparsable timestamp is NaN to pi: every comparison with it is false.
    let before_compaction = |ts: i64| matches!(compaction_ms, Some(Some(c)) if ts <= c);
    if before_compaction(assistant.timestamp) {
        return None;
    }
    if same_model && is_context_overflow(assistant, Some(context_window)) {
        return Some(if check.overflow_recovery_attempted {
            CompactionTrigger::OverflowRecoveryFailed
        } else {
            CompactionTrigger::Overflow
        });
    }
    let context_tokens = if assistant.stop_reason == StopReason::Error {
        let estimate = estimate_context_tokens(check.messages);
        let index = estimate.last_usage_index?;
        if let Some(usage_msg) = check.messages[index].as_assistant() {
            if before_compaction(usage_msg.timestamp) {
                return None;
            }
        }
        estimate.tokens
    } else {
        calculate_context_tokens(&assistant.usage)
    };
    should_compact(context_tokens, context_window, check.settings).then_some(CompactionTrigger::Threshold)
}

/// The `errorMessage` of a failed compaction's `compaction_end`: `Compaction failed: …`
/// (manual), `Auto-compaction failed: …` (threshold), `Context overflow recovery failed: …`
/// (overflow). `None` for a cancelled one, which is reported as `aborted: true` instead.
pub fn compaction_error_message(reason: CompactionReason, error: &CompactionError) -> Option<String> {
    if *error == CompactionError::Cancelled {
        return None;
    }
    Some(compaction_failure_text(reason, &error.to_string()))
}

/// [`compaction_error_message`] for any failure text (no model, no API key, ...).
pub fn compaction_failure_text(reason: CompactionReason, message: &str) -> String {
    match reason {
        CompactionReason::Manual => format!("Compaction failed: {message}"),
        CompactionReason::Threshold => format!("Auto-compaction failed: {message}"),
        CompactionReason::Overflow => format!("Context overflow recovery failed: {message}"),
    }
}
