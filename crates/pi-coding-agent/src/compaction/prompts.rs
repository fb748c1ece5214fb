//! The summariser's instructions. The section headings are a contract: summaries are stored
//! in sessions that both implementations read and extend.

/// System prompt of every summarisation call.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "You summarize conversations between a user and an AI coding assistant. \
Read the conversation you are given and write a structured summary in exactly the requested format.

Do NOT continue the conversation and do NOT answer any question it contains. Output ONLY the summary.";

/// The first summary of a session.
pub const SUMMARIZATION_PROMPT: &str = "The text above is a conversation to summarize. Write a structured context checkpoint summary from which another LLM can carry on the work.

Use exactly this format:

## Goal
[What the user wants to achieve; list several goals if the session has several tasks.]

## Constraints & Preferences
- [Constraints, preferences or requirements the user stated]
- [Or \"(none)\" if there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work under way]

### Blocked
- [What prevents progress, if anything]

## Key Decisions
- **[Decision]**: [Short reason]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples or references needed to continue]
- [Or \"(none)\" if there are none]

Keep every section short. Keep file paths, function names and error messages exactly as written.";

/// A summary that folds new messages into the previous one.
pub const UPDATE_SUMMARIZATION_PROMPT: &str = "The text above is the NEW part of a conversation to summarize. Merge it into the existing context checkpoint summary given in the <previous-summary> tags.

Rules:
- KEEP everything in the previous summary that still holds
- ADD the new progress, decisions and context
- MOVE items from \"In Progress\" to \"Done\" once they are finished
- UPDATE \"Next Steps\" to match what was achieved
- KEEP file paths, function names and error messages exactly as written
- You may drop what is no longer relevant

Use exactly this format:

## Goal
[The previous goals, plus new ones if the task grew]

## Constraints & Preferences
- [The previous ones, plus any new ones]

## Progress
### Done
- [x] [Items done before AND items finished since]

### In Progress
- [ ] [Current work, brought up to date]

### Blocked
- [Current blockers; remove resolved ones]

## Key Decisions
- **[Decision]**: [Short reason] (keep the previous ones, add new ones)

## Next Steps
1. [Brought up to date]

## Critical Context
- [Keep what matters, add what is new]

Keep every section short. Keep file paths, function names and error messages exactly as written.";

/// The early part of a turn cut in two; its later part stays in the context.
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str = "The text above is the conversation to summarize: the BEGINNING of a turn too large to keep whole. The END of that turn (the recent work) stays in the context.

Summarize the beginning so that the kept end makes sense:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions taken and work done in this beginning]

## Context for Suffix
- [What is needed to understand the kept recent work]

Be brief. Keep only what the kept end needs.";

/// A branch the user navigated away from.
pub const BRANCH_SUMMARY_PROMPT: &str = "The text above is a conversation to summarize: a branch of the session the user is leaving. Write a structured summary of it to serve as context when the user comes back to this point.

Use exactly this format:

## Goal
[What the user was trying to achieve in this branch]

## Constraints & Preferences
- [Constraints, preferences or requirements stated]
- [Or \"(none)\" if there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work started and not finished]

### Blocked
- [What prevented progress, if anything]

## Key Decisions
- **[Decision]**: [Short reason]

## Next Steps
1. [What should happen next to continue this work]

Keep every section short. Keep file paths, function names and error messages exactly as written.";

/// Put before a branch summary's text (wording as stored by pi).
pub const BRANCH_SUMMARY_PREAMBLE: &str =
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// The split-turn join between the history summary and the turn-prefix summary.
pub fn merge_split_turn(history: &str, turn_prefix: &str) -> String {
    format!("{history}\n\n---\n\n**Turn Context (split turn):**\n\n{turn_prefix}")
}

/// The history part of a split-turn summary when there is no earlier history.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";
