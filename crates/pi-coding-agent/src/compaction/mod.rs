//! Compaction and branch summarisation: what to summarise, the summary requests, and the
//! decision when to compact. Pure building blocks; the session applies the results.
//!
//! How a session uses it:
//! - after `agent_end` and before a prompt: [`check_compaction`] says whether to compact
//!   (threshold or overflow);
//! - to compact: [`prepare_compaction`] on the branch, then [`compact`], then append the
//!   [`CompactionResult`] as a `compaction` entry and rebuild the context;
//! - to navigate the tree with a summary: [`collect_entries_for_branch_summary`], then
//!   [`generate_branch_summary`], then append a `branch_summary` entry;
//! - for the footer and session stats: [`context_usage`].

mod branch;
mod bug_summary;
mod check;
mod file_ops;
mod prepare;
mod prompts;
mod serialize;
mod summarize;
mod tokens;
mod usage;

#[cfg(test)]
mod tests;

pub use branch::{
    branch_summary_prompt, collect_entries_for_branch_summary, generate_branch_summary, prepare_branch_entries,
    BranchEntries, BranchPreparation, BranchSummary, BranchSummaryError, BranchSummaryOptions, NO_CONTENT_SUMMARY,
};
pub use bug_summary::{bug_summary_prompt, generate_bug_summary};
pub use check::{
    check_compaction, compaction_error_message, compaction_failure_text, CompactionCheck, CompactionTrigger,
    OVERFLOW_RECOVERY_FAILED,
};
pub use file_ops::{FileLists, FileOps};
pub use prepare::{
    find_cut_point, find_turn_start_index, find_valid_cut_points, latest_compaction, prepare_compaction,
    prepare_manual_compaction, CompactionPreparation, CutPoint, NothingToCompact,
};
pub use prompts::{
    BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
};
pub use serialize::{serialize_conversation, truncate_for_summary, TOOL_RESULT_MAX_CHARS};
pub use summarize::{
    combine_usage, compact, generate_summary, generate_turn_prefix_summary, history_summary_prompt, turn_prefix_prompt,
    CompactionError, CompactionResult, SummaryModel, SummaryRetry, SummaryRetryEvent, SummaryRetryObserver,
    SummaryText,
};
pub use tokens::{
    assistant_usage, calculate_context_tokens, estimate_context_tokens, estimate_tokens, js_len, last_assistant_usage,
    should_compact, ContextEstimate, MessageView,
};
pub use usage::{context_usage, ContextUsage};
