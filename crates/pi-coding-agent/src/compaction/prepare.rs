//! Choosing what a compaction summarises and what it keeps (pi's `findCutPoint` and
//! `prepareCompaction`).

use pi_session::{AgentMessage, Entry, EntryKind};

use super::file_ops::FileOps;
use super::tokens::{estimate_context_tokens, estimate_tokens};
use crate::config::settings::CompactionSettings;

/// Where a branch is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// The first entry kept in the context.
    pub first_kept_entry_index: usize,
    /// When the cut falls inside a turn: the entry that started that turn.
    pub turn_start_index: Option<usize>,
    /// The cut entry is not a user message and a turn start was found before it.
    pub is_split_turn: bool,
}

/// Everything [`compact`](super::compact) needs, computed from the branch alone.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPreparation {
    /// The id of the first entry kept after the summary.
    pub first_kept_entry_id: String,
    /// The history that the summary replaces (before the turn start when the turn is split).
    pub messages_to_summarize: Vec<AgentMessage>,
    /// The early part of a split turn, summarised on its own.
    pub turn_prefix_messages: Vec<AgentMessage>,
    pub is_split_turn: bool,
    /// Estimated tokens of the whole rebuilt context before compaction.
    pub tokens_before: u64,
    /// The summary of the previous compaction on the branch, to be updated.
    pub previous_summary: Option<String>,
    /// Files touched in the summarised range, plus those of the previous compaction.
    pub file_ops: FileOps,
    pub settings: CompactionSettings,
}

/// Messages with these roles, and `branch_summary` / `custom_message` entries, may start the
/// kept part. A tool result never does: it must follow its call.
fn is_valid_cut_point(entry: &Entry) -> bool {
    match &entry.kind {
        EntryKind::Message { message, .. } => matches!(
            message.role(),
            "user" | "assistant" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary"
        ),
        EntryKind::BranchSummary { .. } | EntryKind::CustomMessage { .. } => true,
        _ => false,
    }
}

/// The indices in `start..end` where the kept part may begin.
pub fn find_valid_cut_points(entries: &[&Entry], start: usize, end: usize) -> Vec<usize> {
    (start..end.min(entries.len()))
        .filter(|&i| is_valid_cut_point(entries[i]))
        .collect()
}

/// The entry that starts the turn holding `index`: the nearest user or bashExecution message,
/// or `branch_summary` / `custom_message` entry, at or before it (not before `start`).
pub fn find_turn_start_index(entries: &[&Entry], index: usize, start: usize) -> Option<usize> {
    (start..=index.min(entries.len().checked_sub(1)?))
        .rev()
        .find(|&i| match &entries[i].kind {
            EntryKind::BranchSummary { .. } | EntryKind::CustomMessage { .. } => true,
            EntryKind::Message { message, .. } => matches!(message.role(), "user" | "bashExecution"),
            _ => false,
        })
}

/// Where to cut `entries[start..end]` so that about `keep_recent_tokens` stay.
///
/// Walk back from the newest message summing estimates; once the sum reaches the budget, cut
/// at the first valid cut point at or after that message. Then move the cut back over the
/// non-message entries right before it (model or thinking changes, labels, ...), stopping at a
/// compaction or a message. Without any valid cut point everything from `start` is kept.
pub fn find_cut_point(entries: &[&Entry], start: usize, end: usize, keep_recent_tokens: u64) -> CutPoint {
    let end = end.min(entries.len());
    let edits = context_edits(entries);
    let omitted = |e: &Entry| edits.get(e.id.as_str()).is_some_and(|replaced| !replaced);
    // A reply a `context_edit` left out is not in the context: no cut there, no tokens.
    let cut_points: Vec<usize> = find_valid_cut_points(entries, start, end)
        .into_iter()
        .filter(|&i| !omitted(entries[i]))
        .collect();
    let Some(&first) = cut_points.first() else {
        return CutPoint {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };

    let mut cut = first;
    let mut accumulated = 0u64;
    let mut exceeded = false;
    for i in (start..end).rev() {
        let Some(message) = entries[i].message().filter(|_| !omitted(entries[i])) else {
            continue;
        };
        accumulated += estimate_tokens(message);
        if accumulated >= keep_recent_tokens {
            exceeded = true;
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut = c;
            }
            break;
        }
    }

    // pi 1.6: when all that follows the cut is a failed attempt left out of the context (an
    // overflow's reply), the attempt is not kept: the cut moves past the prompt, which then
    // gets summarised even when it is the session's only message.
    if exceeded {
        let suffix = &entries[(cut + 1).min(end)..end];
        let visible = |e: &Entry| {
            matches!(
                e.kind,
                EntryKind::Message { .. }
                    | EntryKind::CustomMessage { .. }
                    | EntryKind::BranchSummary { .. }
                    | EntryKind::Compaction { .. }
            )
        };
        let left_out = |e: &Entry| visible(e) && omitted(e);
        let replaced_elsewhere = suffix.iter().any(|e| match &e.kind {
            EntryKind::Unknown { type_name, fields } if type_name == "context_edit" => {
                let replaces = fields.get("replacement").is_some_and(|r| !r.is_null());
                let target = fields.get("targetId").and_then(serde_json::Value::as_str);
                replaces && !suffix.iter().any(|t| Some(t.id.as_str()) == target && left_out(t))
            }
            _ => false,
        });
        let omitted_attempt = suffix
            .iter()
            .any(|e| left_out(e) && e.message().is_some_and(|m| m.role() == "assistant"));
        let only_left_out = suffix
            .iter()
            .all(|e| !matches!(e.kind, EntryKind::Compaction { .. }) && (!visible(e) || left_out(e)));
        if !replaced_elsewhere && omitted_attempt && only_left_out {
            cut += 1;
        }
    }

    while cut > start {
        match entries[cut - 1].kind {
            EntryKind::Compaction { .. } => break,
            EntryKind::Message { .. } if !omitted(entries[cut - 1]) => break,
            _ => cut -= 1,
        }
    }

    let is_user = entries[cut].message().is_some_and(|m| m.role() == "user") && !omitted(entries[cut]);
    let turn_start_index = if is_user {
        None
    } else {
        find_turn_start_index(entries, cut, start)
    };
    CutPoint {
        first_kept_entry_index: cut,
        turn_start_index,
        is_split_turn: turn_start_index.is_some(),
    }
}

/// The targets of the `context_edit` entries among `entries`, each with whether its latest
/// edit replaces its content (`false`: left out of the context).
fn context_edits<'a>(entries: &[&'a Entry]) -> std::collections::HashMap<&'a str, bool> {
    let mut out = std::collections::HashMap::new();
    for e in entries {
        if let EntryKind::Unknown { type_name, fields } = &e.kind {
            if type_name == "context_edit" {
                if let Some(target) = fields.get("targetId").and_then(serde_json::Value::as_str) {
                    out.insert(target, fields.get("replacement").is_some_and(|r| !r.is_null()));
                }
            }
        }
    }
    out
}

/// The message an entry contributes to the summarised text; compactions contribute none
/// (their summary goes in as the previous summary).
fn message_for_compaction(entry: &Entry) -> Option<AgentMessage> {
    match &entry.kind {
        // A system message is prompt state, not conversation: nothing to summarise.
        EntryKind::Message { message, .. } if message.role() == "system" => None,
        EntryKind::Message { message, .. } => Some(AgentMessage::clone(message)),
        EntryKind::CustomMessage {
            custom_type,
            content,
            display,
            details,
            ..
        } => Some(pi_session::custom_message(
            custom_type,
            content,
            *display,
            details.as_deref(),
            &entry.timestamp,
        )),
        EntryKind::BranchSummary { summary, from_id, .. } => {
            Some(pi_session::branch_summary_message(summary, from_id, &entry.timestamp))
        }
        _ => None,
    }
}

/// Why a manual compaction has nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NothingToCompact {
    /// The branch ends in a compaction.
    #[error("Already compacted")]
    AlreadyCompacted,
    #[error("Nothing to compact (session too small)")]
    TooSmall,
}

/// [`prepare_compaction`] with the reason pi gives a manual compaction when there is nothing
/// to prepare.
pub fn prepare_manual_compaction(
    path: &[&Entry],
    settings: &CompactionSettings,
) -> Result<CompactionPreparation, NothingToCompact> {
    prepare_compaction(path, settings).ok_or_else(|| {
        if path
            .last()
            .is_some_and(|e| matches!(e.kind, EntryKind::Compaction { .. }))
        {
            NothingToCompact::AlreadyCompacted
        } else {
            NothingToCompact::TooSmall
        }
    })
}

/// The latest compaction entry on a branch, if any.
pub fn latest_compaction<'a>(path: &[&'a Entry]) -> Option<&'a Entry> {
    path.iter()
        .rev()
        .copied()
        .find(|e| matches!(e.kind, EntryKind::Compaction { .. }))
}

/// What a compaction of `path` (root to leaf) would summarise and keep; `None` when the branch
/// ends in a compaction, has no entry to keep, or nothing precedes the kept range.
///
/// Repeated compaction starts the summarised range at the previous compaction's
/// `firstKeptEntryId` (right after that compaction when the id is not on the path), so the
/// messages it kept are summarised now, and its summary is updated rather than repeated.
pub fn prepare_compaction(path: &[&Entry], settings: &CompactionSettings) -> Option<CompactionPreparation> {
    if path
        .last()
        .is_some_and(|e| matches!(e.kind, EntryKind::Compaction { .. }))
    {
        return None;
    }
    let prev_index = path
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction { .. }));
    let mut previous_summary = None;
    let mut boundary_start = 0;
    let mut file_ops = FileOps::default();
    if let Some(pi) = prev_index {
        if let EntryKind::Compaction {
            summary,
            first_kept_entry_id,
            details,
            from_hook,
            ..
        } = &path[pi].kind
        {
            previous_summary = Some(summary.clone());
            boundary_start = path.iter().position(|e| &e.id == first_kept_entry_id).unwrap_or(pi + 1);
            // Extension-written details have no known shape.
            if *from_hook != Some(true) {
                if let Some(d) = details {
                    file_ops.add_details(d);
                }
            }
        }
    }

    let tokens_before = estimate_context_tokens(&pi_session::build_context(path).messages).tokens;
    let cut = find_cut_point(path, boundary_start, path.len(), settings.keep_recent_tokens);
    let first_kept = path.get(cut.first_kept_entry_index)?;
    if first_kept.id.is_empty() {
        return None;
    }

    let turn_start = cut.turn_start_index.filter(|_| cut.is_split_turn);
    let history_end = turn_start.unwrap_or(cut.first_kept_entry_index);
    // What a `context_edit` left out of the context is not summarised either.
    let edits = context_edits(path);
    let collect = |range: std::ops::Range<usize>| -> Vec<AgentMessage> {
        path.get(range)
            .into_iter()
            .flatten()
            .filter(|e| edits.get(e.id.as_str()).is_none_or(|replaced| *replaced))
            .filter_map(|e| message_for_compaction(e))
            .collect()
    };
    let messages_to_summarize = collect(boundary_start..history_end);
    let turn_prefix_messages = match turn_start {
        Some(ts) => collect(ts..cut.first_kept_entry_index),
        None => Vec::new(),
    };
    // pi 1.6: with nothing before the kept range there is nothing to compact.
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return None;
    }
    for m in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_from_message(m);
    }

    Some(CompactionPreparation {
        first_kept_entry_id: first_kept.id.clone(),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
        settings: *settings,
    })
}
