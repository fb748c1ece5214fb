//! Moving around the session tree (`/tree`): pick another entry as the leaf, optionally
//! leaving a summary of the branch being left behind.

use pi_agent::AgentMessage;
use pi_ai::Message;
use pi_session::EntryKind;
use tokio_util::sync::CancellationToken;

use super::agent_session::{lock, AgentSession, PromptError};
use super::events::SessionEvent;
use super::extensions::ExtensionSummary;
use super::summary_retry::SummaryRetryReporter;
use crate::compaction::{
    collect_entries_for_branch_summary, generate_branch_summary, BranchSummaryError, BranchSummaryOptions,
};

/// How to navigate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NavigateOptions {
    /// Summarise the branch being left.
    pub summarize: bool,
    pub custom_instructions: Option<String>,
    /// The custom instructions replace the summary prompt instead of adding to it.
    pub replace_instructions: bool,
    /// A label for the new position (on the summary entry, else on the target).
    pub label: Option<String>,
}

/// What the navigation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NavigateOutcome {
    /// Text to put back into the editor (when the target was a user or custom message).
    pub editor_text: Option<String>,
    /// The summary was aborted; nothing changed.
    pub cancelled: bool,
    pub summary_entry_id: Option<String>,
}

impl AgentSession {
    /// Make `target_id` the current position. A user message target moves to its parent and
    /// returns its text for editing, as pi does.
    pub async fn navigate_tree(
        &self,
        target_id: &str,
        options: NavigateOptions,
        cancel: CancellationToken,
    ) -> Result<NavigateOutcome, PromptError> {
        let (old_leaf, new_leaf, editor_text, branch) = self.with_store(|s| {
            let old_leaf = s.get_leaf_id().map(str::to_string);
            let entry = s
                .get_entry(target_id)
                .ok_or_else(|| PromptError::EntryNotFound(target_id.to_string()))?;
            let (new_leaf, text) = match &entry.kind {
                EntryKind::Message { .. } => match entry.message() {
                    Some(AgentMessage::Llm(Message::User(u))) => (entry.parent_id.clone(), Some(u.content.text())),
                    _ => (Some(entry.id.clone()), None),
                },
                EntryKind::CustomMessage { content, .. } => (entry.parent_id.clone(), Some(content.text())),
                _ => (Some(entry.id.clone()), None),
            };
            let branch = options
                .summarize
                .then(|| collect_entries_for_branch_summary(s, old_leaf.as_deref(), target_id));
            Ok::<_, PromptError>((old_leaf, new_leaf, text, branch))
        })?;
        if old_leaf.as_deref() == Some(target_id) {
            return Ok(NavigateOutcome::default());
        }
        let mut options = options;
        // An extension may stop the move, write the summary itself, or change its instructions.
        // The summary to write: its text, details, usage, and whether an extension wrote it.
        let mut summary: Option<(ExtensionSummary, bool)> = None;
        let extensions = self.extensions();
        if extensions.handles("session_before_tree") {
            let entries: Vec<&pi_session::Entry> = branch.iter().flat_map(|b| b.entries.iter()).collect();
            let payload = serde_json::json!({
                "preparation": {
                    "targetId": target_id,
                    "oldLeafId": old_leaf,
                    "commonAncestorId": branch.as_ref().and_then(|b| b.common_ancestor_id.clone()),
                    "entriesToSummarize": entries,
                    "userWantsSummary": options.summarize,
                    "customInstructions": options.custom_instructions,
                    "replaceInstructions": options.replace_instructions,
                    "label": options.label,
                },
            });
            let decision = extensions.before_tree(payload).await;
            if decision.cancel {
                return Ok(NavigateOutcome {
                    cancelled: true,
                    ..Default::default()
                });
            }
            if let Some(instructions) = decision.custom_instructions {
                options.custom_instructions = Some(instructions);
            }
            if let Some(replace) = decision.replace_instructions {
                options.replace_instructions = replace;
            }
            if let Some(label) = decision.label {
                options.label = Some(label);
            }
            // pi 1.6 takes an extension's summary only when the move asked for one.
            summary = decision.summary.filter(|_| options.summarize).map(|s| (s, true));
        }
        if let Some(branch) = branch.filter(|b| summary.is_none() && !b.entries.is_empty()) {
            let Some(model) = self.model() else {
                return Err(PromptError::NoSummaryModel);
            };
            let api_key = self.summary_api_key(&model).await;
            let stream_fn = self.inner.agent.stream_fn();
            let reporter = SummaryRetryReporter {
                session: self,
                source: "branchSummary",
                reason: None,
            };
            let llm = self.summary_model(&stream_fn, &model, api_key, Some(&reporter));
            let reserve_tokens = lock(self.settings()).branch_summary().reserve_tokens;
            let summary_options = BranchSummaryOptions {
                custom_instructions: options.custom_instructions.clone(),
                replace_instructions: options.replace_instructions,
                reserve_tokens,
                thinking_level: self.thinking_level(),
            };
            match generate_branch_summary(&branch.entries, &llm, &summary_options, &cancel).await {
                Ok(s) => {
                    let written = ExtensionSummary {
                        details: Some(s.details_value()),
                        usage: s.usage.and_then(|u| serde_json::to_value(u).ok()),
                        summary: s.summary,
                    };
                    summary = Some((written, false));
                }
                Err(BranchSummaryError::Aborted) => {
                    return Ok(NavigateOutcome {
                        cancelled: true,
                        ..Default::default()
                    })
                }
                Err(BranchSummaryError::Failed(e)) => return Err(PromptError::Summary(e)),
            }
        }
        let summary_entry_id = self.with_store(|s| -> Result<Option<String>, PromptError> {
            let err = PromptError::from;
            match &summary {
                Some((written, from_hook)) => {
                    let id = s
                        .append_branch_summary(
                            new_leaf.as_deref(),
                            &written.summary,
                            written.details.clone(),
                            Some(*from_hook),
                            written.usage.clone(),
                        )
                        .map_err(err)?;
                    if let Some(label) = &options.label {
                        s.append_label(&id, Some(label)).map_err(err)?;
                    }
                    Ok(Some(id))
                }
                None => {
                    match &new_leaf {
                        Some(id) => s.branch(id).map_err(err)?,
                        None => s.reset_leaf(),
                    }
                    if let Some(label) = &options.label {
                        s.append_label(target_id, Some(label)).map_err(err)?;
                    }
                    Ok(None)
                }
            }
        })?;
        let (context, summary_entry) = self.with_store(|s| {
            let entry = summary_entry_id
                .as_deref()
                .and_then(|id| s.get_entry(id))
                .and_then(|e| serde_json::to_value(e).ok());
            (s.build_context(), entry)
        });
        self.agent().replace_messages(context.messages);
        let new_leaf_id = self.with_store(|s| s.get_leaf_id().map(str::to_string));
        self.emit(SessionEvent::TreeNavigated {
            new_leaf_id,
            old_leaf_id: old_leaf,
            summary_entry,
        })
        .await;
        Ok(NavigateOutcome {
            editor_text,
            cancelled: false,
            summary_entry_id,
        })
    }
}
