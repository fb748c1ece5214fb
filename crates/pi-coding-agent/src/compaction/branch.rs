//! Summarising the branch the user leaves when navigating the session tree (pi's branch
//! summarisation for `navigateTree`).

use std::collections::HashSet;

use pi_session::{AgentMessage, Entry, EntryKind, SessionManager};
use tokio_util::sync::CancellationToken;

use super::file_ops::{FileLists, FileOps};
use super::prompts::{BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT};
use super::serialize::serialize_conversation;
use super::summarize::{request_summary, SummaryModel};
use super::tokens::estimate_tokens;

/// Context window assumed when the model states none.
const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// What pi stores as the summary when the branch holds nothing to summarise.
pub const NO_CONTENT_SUMMARY: &str = "No content to summarize";

/// The entries left behind by a navigation, and where the two paths meet.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BranchEntries {
    /// From just after the common ancestor to the old leaf, oldest first.
    pub entries: Vec<Entry>,
    /// The deepest entry on both the old leaf's and the target's path.
    pub common_ancestor_id: Option<String>,
}

/// The entries to summarise when moving from `old_leaf_id` to `target_id`: walk back from the
/// old leaf to (not including) the deepest common ancestor. Compactions on the way are kept;
/// their summaries become part of the text.
pub fn collect_entries_for_branch_summary(
    session: &SessionManager,
    old_leaf_id: Option<&str>,
    target_id: &str,
) -> BranchEntries {
    let Some(old_leaf) = old_leaf_id else {
        return BranchEntries::default();
    };
    let old_path: HashSet<&str> = session
        .get_branch(Some(old_leaf))
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    let common_ancestor_id = session
        .get_branch(Some(target_id))
        .iter()
        .rev()
        .find(|e| old_path.contains(e.id.as_str()))
        .map(|e| e.id.clone());

    let mut entries = Vec::new();
    let mut current = Some(old_leaf.to_string());
    // A damaged file could hold a parent cycle: never walk more entries than exist.
    let mut budget = session.get_entries().len();
    while let Some(id) = current {
        if Some(&id) == common_ancestor_id.as_ref() || budget == 0 {
            break;
        }
        budget -= 1;
        let Some(entry) = session.get_entry(&id) else {
            break;
        };
        entries.push(entry.clone());
        current = entry.parent_id.clone();
    }
    entries.reverse();
    BranchEntries {
        entries,
        common_ancestor_id,
    }
}

/// The messages of a branch that fit the budget, and the files it touched.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BranchPreparation {
    /// Oldest first.
    pub messages: Vec<AgentMessage>,
    pub file_ops: FileOps,
    pub total_tokens: u64,
}

/// The message an entry shows the summariser; tool results are left out (the call says
/// enough) and so are entries that carry no conversation.
fn message_for_branch(entry: &Entry) -> Option<AgentMessage> {
    match &entry.kind {
        EntryKind::Message { message, .. } if message.role() == "toolResult" => None,
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
        EntryKind::Compaction {
            summary, tokens_before, ..
        } => Some(pi_session::compaction_summary_message(
            summary,
            tokens_before,
            &entry.timestamp,
        )),
        _ => None,
    }
}

/// Pick the newest messages of `entries` (oldest first) that fit `token_budget` (0: no
/// limit). A compaction or branch summary that overflows is still taken while the total is
/// under 90% of the budget; the walk stops at the first message that does not fit.
///
/// File operations come from every earlier non-extension branch summary's details, and from
/// the tool calls of the messages walked.
pub fn prepare_branch_entries(entries: &[Entry], token_budget: u64) -> BranchPreparation {
    let mut file_ops = FileOps::default();
    for entry in entries {
        if let EntryKind::BranchSummary {
            details: Some(details),
            from_hook,
            ..
        } = &entry.kind
        {
            if *from_hook != Some(true) {
                file_ops.add_details(details);
            }
        }
    }

    let mut messages = Vec::new();
    let mut total_tokens = 0u64;
    for entry in entries.iter().rev() {
        let Some(message) = message_for_branch(entry) else {
            continue;
        };
        file_ops.add_from_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && total_tokens + tokens > token_budget {
            let is_summary = matches!(
                entry.kind,
                EntryKind::Compaction { .. } | EntryKind::BranchSummary { .. }
            );
            if is_summary && (total_tokens as f64) < token_budget as f64 * 0.9 {
                messages.push(message);
                total_tokens += tokens;
            }
            break;
        }
        messages.push(message);
        total_tokens += tokens;
    }
    messages.reverse();
    BranchPreparation {
        messages,
        file_ops,
        total_tokens,
    }
}

/// How to word the branch summary request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchSummaryOptions {
    /// Appended as `Additional focus: …`, or used instead of the prompt with `replace_instructions`.
    pub custom_instructions: Option<String>,
    pub replace_instructions: bool,
    /// `branchSummary.reserveTokens`: the budget is the context window less this.
    pub reserve_tokens: u64,
    /// The session's thinking level; the request reasons at it when the model can.
    pub thinking_level: pi_ai::ThinkingLevel,
}

/// A branch summary to store in a `branch_summary` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummary {
    pub summary: String,
    /// Stored as the entry's `details` (`{readFiles, modifiedFiles}`).
    pub details: FileLists,
    /// What the summary request cost; `None` when no request was made.
    pub usage: Option<pi_ai::Usage>,
}

impl BranchSummary {
    /// `details` as the JSON the session entry stores.
    pub fn details_value(&self) -> serde_json::Value {
        serde_json::to_value(&self.details).unwrap_or_default()
    }
}

/// Why no branch summary was made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BranchSummaryError {
    /// The cancel token fired; navigation is cancelled (`{cancelled: true, aborted: true}`).
    #[error("Branch summarization aborted")]
    Aborted,
    /// The model call failed; the text is pi 1.6's (`Branch summarization failed: …`).
    #[error("{0}")]
    Failed(String),
}

/// The user text of a branch summary request.
pub fn branch_summary_prompt(messages: &[AgentMessage], options: &BranchSummaryOptions) -> String {
    let conversation = serialize_conversation(&pi_session::convert_to_llm(messages));
    let custom = options.custom_instructions.as_deref().filter(|c| !c.is_empty());
    let instructions = match custom {
        Some(c) if options.replace_instructions => c.to_string(),
        Some(c) => format!("{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {c}"),
        None => BRANCH_SUMMARY_PROMPT.to_string(),
    };
    format!("<conversation>\n{conversation}\n</conversation>\n\n{instructions}")
}

/// Summarise the entries of an abandoned branch (oldest first).
///
/// With nothing to summarise the result is the text [`NO_CONTENT_SUMMARY`] with empty file
/// lists, without a model call; pi stores that as the summary. Otherwise the model's text
/// follows [`BRANCH_SUMMARY_PREAMBLE`] and precedes the file tags. The request may use the
/// model's whole output limit (as pi 1.6's summaries do).
pub async fn generate_branch_summary(
    entries: &[Entry],
    llm: &SummaryModel<'_>,
    options: &BranchSummaryOptions,
    cancel: &CancellationToken,
) -> Result<BranchSummary, BranchSummaryError> {
    let window = match llm.model.context_window {
        0 => DEFAULT_CONTEXT_WINDOW,
        w => w,
    };
    let budget = window.saturating_sub(options.reserve_tokens);
    let prepared = prepare_branch_entries(entries, budget);
    if prepared.messages.is_empty() {
        return Ok(BranchSummary {
            summary: NO_CONTENT_SUMMARY.to_string(),
            details: FileLists::default(),
            usage: None,
        });
    }
    let prompt = branch_summary_prompt(&prepared.messages, options);
    let level = options.thinking_level;
    let reasoning = (llm.model.reasoning && level != pi_ai::ThinkingLevel::Off).then_some(level);
    let answer = match request_summary(llm, prompt, reasoning, cancel).await {
        Ok(answer) => answer,
        Err(super::summarize::CallFailure::Aborted) => return Err(BranchSummaryError::Aborted),
        Err(failure) => return Err(BranchSummaryError::Failed(failure.message("Branch summarization"))),
    };
    let details = prepared.file_ops.to_lists();
    let summary = format!("{BRANCH_SUMMARY_PREAMBLE}{}{}", answer.text, details.to_tags());
    Ok(BranchSummary {
        summary,
        details,
        usage: Some(answer.usage),
    })
}
