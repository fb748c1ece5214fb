//! Compaction inside a session: the manual `/compact`, the threshold check after a run, and the
//! overflow path (compact, then continue once).

use std::sync::atomic::Ordering;
use std::time::Duration;

use pi_ai::{AssistantMessage, StopReason};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::agent_session::{lock, AgentSession, PromptError};
use super::events::{CompactionReason, SessionEvent};
use super::extensions::CompactDecision;
use super::summary_retry::SummaryRetryReporter;
use crate::compaction::{
    check_compaction, compact, compaction_error_message, compaction_failure_text, estimate_tokens, latest_compaction,
    prepare_compaction, prepare_manual_compaction, CompactionCheck, CompactionError, CompactionResult,
    CompactionTrigger, OVERFLOW_RECOVERY_FAILED,
};

/// How long pi waits after a compaction before it continues the agent.
const CONTINUE_DELAY: Duration = Duration::from_millis(100);

impl AgentSession {
    fn branch_entries(&self) -> Vec<pi_session::Entry> {
        self.with_store(|s| s.get_branch(None).into_iter().cloned().collect())
    }

    /// Summarise with the current model; appends the compaction entry and rebuilds the
    /// transcript from the session on success.
    async fn run_compaction(
        &self,
        reason: CompactionReason,
        custom_instructions: Option<&str>,
    ) -> Result<CompactionResult, CompactionError> {
        let model = self
            .model()
            .ok_or_else(|| CompactionError::Summarization("No model selected".into()))?;
        let api_key = self.summary_api_key(&model).await;
        let settings = lock(self.settings()).compaction();
        let branch = self.branch_entries();
        let refs: Vec<&pi_session::Entry> = branch.iter().collect();
        let preparation = match reason {
            CompactionReason::Manual => prepare_manual_compaction(&refs, &settings)
                .map_err(|e| CompactionError::Summarization(e.to_string()))?,
            _ => prepare_compaction(&refs, &settings)
                .ok_or_else(|| CompactionError::Summarization("Nothing to compact (session too small)".into()))?,
        };
        let extensions = self.extensions();
        let decision = if extensions.handles("session_before_compact") {
            let payload = before_compact_payload(&preparation, &branch, custom_instructions, reason);
            extensions.before_compact(payload).await
        } else {
            CompactDecision::Proceed
        };
        let (result, details, from_extension) = match decision {
            CompactDecision::Cancel => return Err(CompactionError::Cancelled),
            CompactDecision::Use {
                summary,
                first_kept_entry_id,
                tokens_before,
                details,
                usage,
            } => (
                CompactionResult {
                    summary,
                    first_kept_entry_id,
                    tokens_before: tokens_before.unwrap_or(preparation.tokens_before),
                    estimated_tokens_after: None,
                    usage,
                    details: Default::default(),
                },
                details,
                true,
            ),
            CompactDecision::Proceed => {
                let stream_fn = self.inner.agent.stream_fn();
                let reporter = SummaryRetryReporter {
                    session: self,
                    source: "compaction",
                    reason: Some(reason),
                };
                let llm = self.summary_model(&stream_fn, &model, api_key, Some(&reporter));
                let cancel = CancellationToken::new();
                *lock(&self.inner.compaction_cancel) = Some(cancel.clone());
                let result = compact(&preparation, &llm, custom_instructions, self.thinking_level(), &cancel).await;
                lock(&self.inner.compaction_cancel).take();
                let result = result?;
                let details = Some(result.details_value());
                (result, details, false)
            }
        };
        // pi 1.6 checkpoints the prompt and tools the transcript declares, so the request
        // after the compaction does not declare them all again.
        let checkpoint = self
            .inner
            .agent
            .with_messages(super::system_message::compaction_checkpoint);
        let stored = self.with_store(|s| {
            s.append_compaction(
                &result.summary,
                &result.first_kept_entry_id,
                result.tokens_before,
                details,
                Some(from_extension),
                result.usage.clone(),
                checkpoint,
            )
            .map(|_| s.build_context())
        });
        let mut result = result;
        match stored {
            Ok(context) => {
                let messages = context.messages;
                result.estimated_tokens_after = Some(messages.iter().map(estimate_tokens).sum());
                self.inner.agent.replace_messages(messages);
            }
            Err(e) => return Err(CompactionError::Summarization(e.to_string())),
        }
        Ok(result)
    }

    /// `/compact [instructions]`: stop the run, summarise, report the result.
    pub async fn compact(
        &self,
        custom_instructions: Option<&str>,
    ) -> Result<crate::modes::rpc::types::CompactionResult, PromptError> {
        self.abort();
        self.inner.agent.wait_for_idle().await;
        // As pi 1.6: the stopped run settles (as aborted) before the compaction starts.
        self.inner.run.wait_settled().await;
        self.emit(SessionEvent::CompactionStart {
            reason: CompactionReason::Manual,
        })
        .await;
        self.inner.compacting.store(true, Ordering::SeqCst);
        let outcome = self.run_compaction(CompactionReason::Manual, custom_instructions).await;
        self.inner.compacting.store(false, Ordering::SeqCst);
        match outcome {
            Ok(result) => {
                let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                self.emit(SessionEvent::CompactionEnd {
                    reason: CompactionReason::Manual,
                    result: Some(value.clone()),
                    aborted: false,
                    will_retry: false,
                    error_message: None,
                })
                .await;
                serde_json::from_value(value).map_err(|e| PromptError::Summary(e.to_string()))
            }
            Err(e) => {
                let aborted = e == CompactionError::Cancelled;
                let message = match &e {
                    CompactionError::Summarization(m) if !m.starts_with("Summarization failed") => m.clone(),
                    other => other.to_string(),
                };
                self.emit(SessionEvent::CompactionEnd {
                    reason: CompactionReason::Manual,
                    result: None,
                    aborted,
                    will_retry: false,
                    error_message: (!aborted).then(|| compaction_failure_text(CompactionReason::Manual, &message)),
                })
                .await;
                Err(PromptError::Summary(message))
            }
        }
    }

    /// Whether a compaction is running.
    pub fn is_compacting(&self) -> bool {
        self.inner.compacting.load(Ordering::SeqCst)
    }

    /// Stop a running compaction.
    pub fn abort_compaction(&self) {
        if let Some(cancel) = lock(&self.inner.compaction_cancel).take() {
            cancel.cancel();
        }
    }

    /// After a run (or before a prompt): compact when the context passed the threshold, or
    /// recover from an overflow once by compacting and continuing.
    pub(crate) async fn compact_if_needed(&self, after_run: bool) {
        loop {
            let Some(last) = self.last_assistant_any() else { return };
            let trigger = {
                let settings = lock(self.settings()).compaction();
                let model = self.model();
                // Only the latest compaction matters here: copy that entry, not the branch.
                let latest = self.with_store(|s| latest_compaction(&s.get_branch(None)).cloned());
                let attempted = self.inner.overflow_recovery_attempted.load(Ordering::SeqCst);
                self.inner.agent.with_messages(|messages| {
                    check_compaction(
                        &last,
                        after_run,
                        &CompactionCheck {
                            settings: &settings,
                            model: model.as_ref(),
                            latest_compaction: latest.as_ref(),
                            messages,
                            overflow_recovery_attempted: attempted,
                        },
                    )
                })
            };
            match trigger {
                None => return,
                Some(CompactionTrigger::OverflowRecoveryFailed) => {
                    self.emit(SessionEvent::CompactionEnd {
                        reason: CompactionReason::Overflow,
                        result: None,
                        aborted: false,
                        will_retry: false,
                        error_message: Some(OVERFLOW_RECOVERY_FAILED.to_string()),
                    })
                    .await;
                    return;
                }
                Some(CompactionTrigger::Threshold) => {
                    self.auto_compact(CompactionReason::Threshold).await;
                    return;
                }
                Some(CompactionTrigger::Overflow) => {
                    self.inner.overflow_recovery_attempted.store(true, Ordering::SeqCst);
                    // As pi 1.6, the failed attempt is left out for good (a `context_edit`)
                    // before the compaction, which then summarises the prompt it answered.
                    if self
                        .inner
                        .agent
                        .messages()
                        .last()
                        .and_then(|m| m.as_assistant())
                        .is_some_and(|a| a.stop_reason == StopReason::Error)
                    {
                        self.omit_failed_reply().await;
                    }
                    if !self.auto_compact(CompactionReason::Overflow).await {
                        return;
                    }
                    tokio::time::sleep(CONTINUE_DELAY).await;
                    if self.inner.agent.continue_run().await.is_err() {
                        return;
                    }
                    // The continued run may overflow again: check once more.
                }
            }
        }
    }

    /// Automatic compaction with events; true when it succeeded.
    async fn auto_compact(&self, reason: CompactionReason) -> bool {
        self.emit(SessionEvent::CompactionStart { reason }).await;
        self.inner.compacting.store(true, Ordering::SeqCst);
        let outcome = self.run_compaction(reason, None).await;
        self.inner.compacting.store(false, Ordering::SeqCst);
        let will_retry = reason == CompactionReason::Overflow;
        match outcome {
            Ok(result) => {
                self.emit(SessionEvent::CompactionEnd {
                    reason,
                    result: serde_json::to_value(&result).ok(),
                    aborted: false,
                    will_retry,
                    error_message: None,
                })
                .await;
                true
            }
            Err(e) => {
                self.emit(SessionEvent::CompactionEnd {
                    reason,
                    result: None,
                    aborted: e == CompactionError::Cancelled,
                    will_retry: false,
                    error_message: compaction_error_message(reason, &e),
                })
                .await;
                false
            }
        }
    }

    /// The last assistant message of the transcript, whatever its stop reason.
    fn last_assistant_any(&self) -> Option<AssistantMessage> {
        self.inner
            .agent
            .with_messages(|m| m.iter().rev().find_map(|m| m.as_assistant()).cloned())
    }
}

/// pi's `session_before_compact` event: what would be summarised, the branch, the instructions
/// and why (built only when an extension handles it: it is as large as the branch).
fn before_compact_payload(
    preparation: &crate::compaction::CompactionPreparation,
    branch: &[pi_session::Entry],
    custom_instructions: Option<&str>,
    reason: CompactionReason,
) -> Value {
    serde_json::json!({
        "preparation": {
            "firstKeptEntryId": preparation.first_kept_entry_id,
            "messagesToSummarize": preparation.messages_to_summarize,
            "turnPrefixMessages": preparation.turn_prefix_messages,
            "isSplitTurn": preparation.is_split_turn,
            "tokensBefore": preparation.tokens_before,
            "previousSummary": preparation.previous_summary,
        },
        "branchEntries": branch,
        "customInstructions": custom_instructions,
        "reason": reason.as_str(),
        "willRetry": reason == CompactionReason::Overflow,
    })
}
