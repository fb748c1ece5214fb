//! Rebuilding what the model sees from a branch of the tree (pi's `buildSessionContext`).

use std::collections::HashMap;

use pi_ai::ThinkingLevel;
use serde_json::Value;

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

/// The `context_edit` entries of a path: target id to its latest edit (`None`: left out of the
/// context; `Some(content)`: the content the model sees instead).
type Edits<'a> = HashMap<&'a str, Option<&'a Value>>;

/// The context for `path`, the entries from the root to the leaf in order.
///
/// Settings come from the whole path: the last thinking level change, the last model change
/// or assistant message. Messages: without a compaction every message-bearing entry in order;
/// with one, the compaction's system-message checkpoint (pi 1.6) and its summary first, then the
/// entries before it from its `firstKeptEntryId` on (system messages there give way to the
/// checkpoint), then everything after it. `context_edit` entries (pi 1.6) then leave their
/// targets out or replace their content; the latest edit of a target wins.
pub fn build_context(path: &[&Entry]) -> SessionContext {
    let mut thinking_level = ThinkingLevel::Off;
    let mut model = None;
    for entry in path {
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
            _ => {}
        }
    }

    let messages = project_context(path).into_iter().flat_map(|p| p.messages).collect();
    SessionContext {
        messages,
        thinking_level,
        model,
    }
}

/// One entry of the model's context with the messages it contributes (pi 1.6's session
/// projection): entries that carry no message (a model change, a plain `custom` entry, a
/// target left out by a `context_edit`) are listed with none, so a reader can tell which
/// entry each message came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectedEntry<'a> {
    pub entry: &'a Entry,
    pub messages: Vec<AgentMessage>,
}

/// The context of `path` entry by entry: the same messages as [`build_context`], in the same
/// order, each with the entry it came from.
pub fn project_context<'a>(path: &[&'a Entry]) -> Vec<ProjectedEntry<'a>> {
    let mut compaction_at = None;
    let mut edits: Edits<'_> = HashMap::new();
    for (i, entry) in path.iter().enumerate() {
        match &entry.kind {
            EntryKind::Unknown { type_name, fields } if type_name == "context_edit" => {
                if let Some(target) = fields.get("targetId").and_then(Value::as_str) {
                    edits.insert(target, fields.get("replacement").and_then(|r| r.get("content")));
                }
            }
            EntryKind::Compaction { .. } => compaction_at = Some(i),
            _ => {}
        }
    }
    project(path, compaction_at, &edits)
}

fn project<'a>(path: &[&'a Entry], compaction_at: Option<usize>, edits: &Edits<'_>) -> Vec<ProjectedEntry<'a>> {
    let one = |entry: &'a Entry, keep_system: bool| {
        let mut messages = Vec::new();
        push_message(entry, edits, keep_system, &mut messages);
        ProjectedEntry { entry, messages }
    };
    let Some(at) = compaction_at else {
        return path.iter().map(|e| one(e, true)).collect();
    };
    let mut out = Vec::with_capacity(path.len());
    if let EntryKind::Compaction {
        summary,
        tokens_before,
        first_kept_entry_id,
        extra,
        ..
    } = &path[at].kind
    {
        let checkpoint = extra
            .get("systemMessage")
            .and_then(|m| serde_json::from_value::<AgentMessage>(m.clone()).ok());
        let keep_system = checkpoint.is_none();
        let mut messages: Vec<AgentMessage> = checkpoint.into_iter().collect();
        messages.push(message::compaction_summary_message(
            summary,
            tokens_before,
            &path[at].timestamp,
        ));
        out.push(ProjectedEntry {
            entry: path[at],
            messages,
        });
        if let Some(from) = path[..at].iter().position(|e| &e.id == first_kept_entry_id) {
            for entry in &path[from..at] {
                let is_system = matches!(&entry.kind, EntryKind::Message { message, .. } if message.role() == "system");
                // A system message before the summary gives way to the checkpoint.
                if keep_system || !is_system {
                    // An older compaction kept in range adds nothing (no arm in push_message):
                    // only the newest one summarizes.
                    out.push(one(entry, keep_system));
                }
            }
        }
    }
    out.extend(path[at + 1..].iter().map(|e| one(e, true)));
    out
}

/// `message` with its content replaced (`content` of a user, assistant, tool result or custom
/// message); a shape that does not take the replacement stays as it was.
fn with_content(message: &AgentMessage, content: &Value) -> AgentMessage {
    let Ok(Value::Object(mut map)) = serde_json::to_value(message) else {
        return message.clone();
    };
    map.insert("content".into(), content.clone());
    AgentMessage::from_map(map).unwrap_or_else(|_| message.clone())
}

fn push_message(entry: &Entry, edits: &Edits<'_>, keep_system: bool, out: &mut Vec<AgentMessage>) {
    let edit = edits.get(entry.id.as_str());
    if let Some(None) = edit {
        return;
    }
    let replaced = |m: AgentMessage| match edit {
        Some(Some(content)) => with_content(&m, content),
        _ => m,
    };
    match &entry.kind {
        EntryKind::Message { message, .. } if !keep_system && message.role() == "system" => {}
        EntryKind::Message { message, .. } => out.push(replaced(AgentMessage::clone(message))),
        EntryKind::CustomMessage {
            custom_type,
            content,
            display,
            details,
            ..
        } => out.push(replaced(message::custom_message(
            custom_type,
            content,
            *display,
            details.as_deref(),
            &entry.timestamp,
        ))),
        EntryKind::BranchSummary { summary, from_id, .. } if !summary.is_empty() => {
            out.push(message::branch_summary_message(summary, from_id, &entry.timestamp));
        }
        _ => {}
    }
}
