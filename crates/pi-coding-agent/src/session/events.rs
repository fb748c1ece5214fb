//! What an AgentSession reports: the agent's events plus its own (retries, compaction, queue,
//! name, model and thinking-level changes, tree moves), each with the JSON line pi writes for
//! it where pi writes one. Every event passes through `AgentSession::emit`, the one point where
//! extensions and then the mode's listeners see it.

use pi_agent::AgentEvent;
use serde_json::{json, Value};

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionReason {
    Manual,
    Threshold,
    Overflow,
}

impl CompactionReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionReason::Manual => "manual",
            CompactionReason::Threshold => "threshold",
            CompactionReason::Overflow => "overflow",
        }
    }
}

/// One event of a session. Agent events are borrowed: listeners see them while the agent
/// waits, so nothing is copied on the streaming path.
#[derive(Debug, Clone)]
pub enum SessionEvent<'a> {
    Agent(&'a AgentEvent),
    AutoRetryStart {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        final_error: Option<String>,
    },
    CompactionStart {
        reason: CompactionReason,
    },
    CompactionEnd {
        reason: CompactionReason,
        /// The compaction result as pi serializes it, when there is one.
        result: Option<Value>,
        aborted: bool,
        will_retry: bool,
        error_message: Option<String>,
    },
    QueueUpdate {
        steering: Vec<String>,
        follow_up: Vec<String>,
    },
    SessionInfoChanged {
        name: String,
    },
    ThinkingLevelChanged {
        level: String,
        previous: String,
    },
    /// Another model was chosen (`set`) or cycled to (`cycle`). Not on the wire: extensions
    /// see it as `model_select`.
    ModelSelected {
        model: &'a pi_ai::Model,
        previous: Option<&'a pi_ai::Model>,
        source: &'static str,
    },
    /// The session moved to another point of its tree (`session_tree` for extensions; not on
    /// the wire). `summary_entry` is the branch summary written on the way, as its JSON object.
    TreeNavigated {
        new_leaf_id: Option<String>,
        old_leaf_id: Option<String>,
        summary_entry: Option<Value>,
    },
    /// The last event of a prompt: every retry, recovery, compaction and queued message done.
    AgentSettled {
        aborted: bool,
    },
    /// A summary request (compaction or branch summary) retrying a transient provider error.
    /// `source` is `compaction` or `branchSummary`; a compaction's `reason` goes with it.
    SummarizationRetry {
        event: crate::compaction::SummaryRetryEvent,
        source: &'static str,
        reason: Option<CompactionReason>,
    },
    /// A session entry appended outside the message flow (a retry's `context_edit`), as its
    /// JSON object.
    EntryAppended {
        entry: Value,
    },
}

impl SessionEvent<'_> {
    /// pi's JSON line for the event (no trailing newline); `None` for the events pi reports to
    /// extensions only.
    pub fn wire_json(&self) -> Option<String> {
        let value = match self {
            SessionEvent::Agent(event) => return Some(event.to_json()),
            SessionEvent::ModelSelected { .. } | SessionEvent::TreeNavigated { .. } => return None,
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => json!({
                "type": "auto_retry_start",
                "attempt": attempt,
                "maxAttempts": max_attempts,
                "delayMs": delay_ms,
                "errorMessage": error_message,
            }),
            SessionEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                let mut v = json!({"type": "auto_retry_end", "success": success, "attempt": attempt});
                if let Some(e) = final_error {
                    v["finalError"] = json!(e);
                }
                v
            }
            SessionEvent::CompactionStart { reason } => json!({"type": "compaction_start", "reason": reason.as_str()}),
            SessionEvent::CompactionEnd {
                reason,
                result,
                aborted,
                will_retry,
                error_message,
            } => {
                let mut v = json!({"type": "compaction_end", "reason": reason.as_str()});
                if let Some(r) = result {
                    v["result"] = r.clone();
                }
                v["aborted"] = json!(aborted);
                v["willRetry"] = json!(will_retry);
                if let Some(e) = error_message {
                    v["errorMessage"] = json!(e);
                }
                v
            }
            SessionEvent::QueueUpdate { steering, follow_up } => {
                json!({"type": "queue_update", "steering": steering, "followUp": follow_up})
            }
            SessionEvent::SessionInfoChanged { name } => json!({"type": "session_info_changed", "name": name}),
            SessionEvent::ThinkingLevelChanged { level, .. } => {
                json!({"type": "thinking_level_changed", "level": level})
            }
            SessionEvent::AgentSettled { aborted } => json!({"type": "agent_settled", "aborted": aborted}),
            SessionEvent::EntryAppended { entry } => json!({"type": "entry_appended", "entry": entry}),
            SessionEvent::SummarizationRetry { event, source, reason } => {
                summarization_retry_json(event, source, *reason)
            }
        };
        Some(value.to_string())
    }
}

/// pi 1.6's `summarization_retry_*` lines: the scheduled retry, the attempt that starts after
/// the wait (with the request's source), and the end of the retries.
fn summarization_retry_json(
    event: &crate::compaction::SummaryRetryEvent,
    source: &str,
    reason: Option<CompactionReason>,
) -> Value {
    use crate::compaction::SummaryRetryEvent as E;
    match event {
        E::Scheduled {
            attempt,
            max_attempts,
            delay_ms,
            error_message,
        } => json!({
            "type": "summarization_retry_scheduled",
            "attempt": attempt,
            "maxAttempts": max_attempts,
            "delayMs": delay_ms,
            "errorMessage": error_message,
        }),
        E::AttemptStart => {
            let mut v = json!({"type": "summarization_retry_attempt_start", "source": source});
            if let Some(reason) = reason {
                v["reason"] = json!(reason.as_str());
            }
            v
        }
        E::Finished => json!({"type": "summarization_retry_finished"}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_events_match_pi() {
        let start = SessionEvent::AutoRetryStart {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 2000,
            error_message: "500 boom".into(),
        };
        assert_eq!(
            start.wire_json().unwrap_or_default(),
            r#"{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"500 boom"}"#
        );
        let end = SessionEvent::AutoRetryEnd {
            success: false,
            attempt: 3,
            final_error: Some("500 boom".into()),
        };
        assert_eq!(
            end.wire_json().unwrap_or_default(),
            r#"{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"500 boom"}"#
        );
        let ok = SessionEvent::AutoRetryEnd {
            success: true,
            attempt: 1,
            final_error: None,
        };
        assert_eq!(
            ok.wire_json().unwrap_or_default(),
            r#"{"type":"auto_retry_end","success":true,"attempt":1}"#
        );
    }

    #[test]
    fn settled_and_appended_lines() {
        assert_eq!(
            SessionEvent::AgentSettled { aborted: false }
                .wire_json()
                .unwrap_or_default(),
            r#"{"type":"agent_settled","aborted":false}"#
        );
        let entry = json!({"type": "context_edit", "id": "a", "targetId": "b", "replacement": null});
        assert_eq!(
            SessionEvent::EntryAppended { entry }.wire_json().unwrap_or_default(),
            r#"{"type":"entry_appended","entry":{"type":"context_edit","id":"a","targetId":"b","replacement":null}}"#
        );
    }

    #[test]
    fn summarization_retries_have_pi_16s_lines() {
        use crate::compaction::SummaryRetryEvent as E;
        let line = |event, reason| {
            SessionEvent::SummarizationRetry {
                event,
                source: "compaction",
                reason,
            }
            .wire_json()
            .unwrap_or_default()
        };
        let scheduled = E::Scheduled {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 2000,
            error_message: "503".into(),
        };
        assert_eq!(
            line(scheduled, None),
            r#"{"type":"summarization_retry_scheduled","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503"}"#
        );
        assert_eq!(
            line(E::AttemptStart, Some(CompactionReason::Threshold)),
            r#"{"type":"summarization_retry_attempt_start","source":"compaction","reason":"threshold"}"#
        );
        assert_eq!(line(E::Finished, None), r#"{"type":"summarization_retry_finished"}"#);
    }

    #[test]
    fn compaction_end_omits_missing_fields() {
        let e = SessionEvent::CompactionEnd {
            reason: CompactionReason::Threshold,
            result: None,
            aborted: false,
            will_retry: false,
            error_message: Some("Auto-compaction failed: x".into()),
        };
        assert_eq!(
            e.wire_json().unwrap_or_default(),
            r#"{"type":"compaction_end","reason":"threshold","aborted":false,"willRetry":false,"errorMessage":"Auto-compaction failed: x"}"#
        );
    }
}
