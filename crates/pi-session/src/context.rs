//! Rebuilding what the model sees from a branch of the tree (pi's `buildSessionContext`).

use pi_ai::ThinkingLevel;

use crate::entry::{Entry, EntryKind};
use crate::message::{self, AgentMessage};

/// The model recorded on a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub model_id: String,
}

/// The rebuilt context of a branch.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionContext {
    /// In order: stored messages, `custom` messages from `custom_message` entries,
    /// `branchSummary` and `compactionSummary` messages rebuilt from their entries.
    pub messages: Vec<AgentMessage>,
    /// The last `thinking_level_change` on the branch (`off` without one; an unknown level
    /// also reads as `off`).
    pub thinking_level: ThinkingLevel,
    /// The last `model_change` or assistant message on the branch.
    pub model: Option<ModelRef>,
}

/// The context for `path`, the entries from the root to the leaf in order.
///
/// Settings come from the whole path: the last thinking level change, the last model change
/// or assistant message. Messages: without a compaction every message-bearing entry in order;
/// with one, the summary of the last compaction on the path first, then the entries before it
/// from its `firstKeptEntryId` on, then everything after it.
pub fn build_context(path: &[&Entry]) -> SessionContext {
    let mut thinking_level = ThinkingLevel::Off;
    let mut model = None;
    let mut compaction_at = None;
    for (i, entry) in path.iter().enumerate() {
        match &entry.kind {
            EntryKind::ThinkingLevelChange {
                thinking_level: level, ..
            } => {
                thinking_level = ThinkingLevel::parse(level).unwrap_or_default();
            }
            EntryKind::ModelChange { provider, model_id, .. } => {
                model = Some(ModelRef {
                    provider: provider.clone(),
                    model_id: model_id.clone(),
                });
            }
            EntryKind::Message { message, .. } => {
                if let Some((provider, model_id)) = message.assistant_model() {
                    model = Some(ModelRef {
                        provider: provider.to_string(),
                        model_id: model_id.to_string(),
                    });
                }
            }
            EntryKind::Compaction { .. } => compaction_at = Some(i),
            _ => {}
        }
    }

    let mut messages = Vec::with_capacity(path.len());
    match compaction_at {
        None => path.iter().for_each(|e| push_message(e, &mut messages)),
        Some(at) => {
            if let EntryKind::Compaction {
                summary,
                tokens_before,
                first_kept_entry_id,
                ..
            } = &path[at].kind
            {
                messages.push(message::compaction_summary_message(
                    summary,
                    tokens_before,
                    &path[at].timestamp,
                ));
                let kept_from = path[..at].iter().position(|e| &e.id == first_kept_entry_id);
                if let Some(from) = kept_from {
                    path[from..at].iter().for_each(|e| push_message(e, &mut messages));
                }
            }
            path[at + 1..].iter().for_each(|e| push_message(e, &mut messages));
        }
    }
    SessionContext {
        messages,
        thinking_level,
        model,
    }
}

fn push_message(entry: &Entry, out: &mut Vec<AgentMessage>) {
    match &entry.kind {
        EntryKind::Message { message, .. } => out.push(message.clone()),
        EntryKind::CustomMessage {
            custom_type,
            content,
            display,
            details,
            ..
        } => out.push(message::custom_message(
            custom_type,
            content,
            *display,
            details.as_ref(),
            &entry.timestamp,
        )),
        EntryKind::BranchSummary { summary, from_id, .. } if !summary.is_empty() => {
            out.push(message::branch_summary_message(summary, from_id, &entry.timestamp));
        }
        _ => {}
    }
}
