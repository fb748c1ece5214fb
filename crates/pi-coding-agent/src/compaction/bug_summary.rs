//! The report `/bug` attaches when the transcript itself is not shared: the session's model
//! reads the recent conversation (and what the user said went wrong) and writes a Markdown
//! account for the developers, as pi 1.6's "Yes, generate a summary" does.

use pi_session::AgentMessage;
use tokio_util::sync::CancellationToken;

use super::serialize::serialize_conversation;
use super::summarize::{request_shaped, CallFailure, RequestShape, SummaryModel};
use super::tokens::estimate_tokens;

const SYSTEM_PROMPT: &str = "The user of pi, a coding agent, is filing a bug report about pi itself. You are given \
the transcript of their session. Write a report for the people who develop pi: what the user was trying to do and \
what went wrong.

Write only the report. Do not carry on the conversation and do not answer anything asked in it.";

const INSTRUCTIONS: &str = "Format the report as Markdown with these sections:

## What the user was doing
A short paragraph.

## What went wrong
The failure itself: wrong output, errors, hangs, failing tools, anything unexpected. Quote error messages and \
tool output exactly where the transcript has them.

## Steps to reproduce
A numbered list, as precise as the transcript allows.

## Relevant details
The tool calls involved, the files touched (by path), how the model behaved, and anything else that helps to \
reproduce or find the problem.

Leave out file contents, secrets and credentials; name files by path only. Be factual and brief.";

/// Output cap of the request (or the model's own limit when lower).
const MAX_OUTPUT_TOKENS: u64 = 4096;
/// Context window assumed for a model that does not state one.
const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// The newest messages whose estimated size fits `budget` tokens (at least one).
fn recent(messages: &[AgentMessage], budget: u64) -> &[AgentMessage] {
    let mut tokens = 0;
    let mut start = messages.len();
    while start > 0 {
        let next = estimate_tokens(&messages[start - 1]);
        if start < messages.len() && tokens + next > budget {
            break;
        }
        tokens += next;
        start -= 1;
    }
    &messages[start..]
}

/// The user text of the request: a note when older messages were left out, the conversation,
/// the user's own description, then the instructions.
pub fn bug_summary_prompt(messages: &[AgentMessage], hint: Option<&str>, context_window: u64) -> String {
    let window = if context_window > 0 {
        context_window
    } else {
        DEFAULT_CONTEXT_WINDOW
    };
    // Six tenths of the window leaves room for the instructions and the answer.
    let shown = recent(messages, window * 6 / 10);
    let mut parts = Vec::new();
    if shown.len() < messages.len() {
        parts.push(format!(
            "Note: only the last {} of {} messages are shown.",
            shown.len(),
            messages.len()
        ));
    }
    let conversation = serialize_conversation(&pi_session::convert_to_llm(shown));
    parts.push(format!("<conversation>\n{conversation}\n</conversation>"));
    if let Some(hint) = hint.map(str::trim).filter(|h| !h.is_empty()) {
        parts.push(format!("<user-report>\n{hint}\n</user-report>"));
    }
    parts.push(INSTRUCTIONS.to_string());
    parts.join("\n\n")
}

/// Ask `llm` for the report. `Err` holds what to tell the user (`None`: cancelled).
pub async fn generate_bug_summary(
    messages: &[AgentMessage],
    hint: Option<&str>,
    llm: &SummaryModel<'_>,
    session_id: String,
    cancel: &CancellationToken,
) -> Result<String, Option<String>> {
    let prompt = bug_summary_prompt(messages, hint, llm.model.context_window);
    let own_limit = llm.model.max_tokens;
    let shape = RequestShape {
        system_prompt: SYSTEM_PROMPT,
        max_tokens: Some(if own_limit > 0 {
            own_limit.min(MAX_OUTPUT_TOKENS)
        } else {
            MAX_OUTPUT_TOKENS
        }),
        session_id: Some(session_id),
    };
    match request_shaped(llm, &shape, prompt, None, cancel).await {
        Ok(answer) => {
            let text = answer.text.trim().to_string();
            if text.is_empty() {
                Err(Some("Bug report summary was empty".into()))
            } else {
                Ok(text)
            }
        }
        Err(CallFailure::Aborted) => Err(None),
        Err(failure) => Err(Some(failure.message("Bug report summary"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_holds_the_recent_conversation_and_the_description() {
        let messages: Vec<AgentMessage> = (0..4)
            .map(|i| AgentMessage::user_text(format!("message {i} {}", "x".repeat(600))))
            .collect();
        let all = bug_summary_prompt(&messages, Some("  it hangs \n"), 128_000);
        assert!(!all.starts_with("Note:"), "{all}");
        assert!(all.contains("message 0") && all.contains("message 3"), "{all}");
        assert!(all.contains("<user-report>\nit hangs\n</user-report>"), "{all}");
        assert!(all.ends_with(INSTRUCTIONS));
        // A window of 400 tokens leaves room (240) for the newest message only.
        let cut = bug_summary_prompt(&messages, None, 400);
        assert!(
            cut.starts_with("Note: only the last 1 of 4 messages are shown."),
            "{cut}"
        );
        assert!(!cut.contains("message 2") && cut.contains("message 3"), "{cut}");
        assert!(!cut.contains("<user-report>"), "{cut}");
        // A model without a stated window gets 128k.
        assert!(!bug_summary_prompt(&messages, Some(" "), 0).contains("Note:"));
    }
}
