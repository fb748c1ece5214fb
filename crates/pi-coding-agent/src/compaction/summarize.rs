//! Asking the model for a compaction summary (and a split turn's prefix summary).

use pi_ai::{
    join_text, AssistantMessage, Content, Context, Message, Model, StopReason, StreamFn, StreamOptions, ThinkingLevel,
    UserContent, UserMessage,
};
use pi_session::AgentMessage;
use serde::Serialize;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::file_ops::FileLists;
use super::prepare::CompactionPreparation;
use super::prompts::{
    merge_split_turn, NO_PRIOR_HISTORY, SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
};
use super::serialize::serialize_conversation;

/// The model a summary is asked of, and how to reach it.
#[derive(Clone)]
pub struct SummaryModel<'a> {
    pub stream_fn: &'a StreamFn,
    pub model: &'a Model,
    pub api_key: Option<String>,
    /// Extra request headers (from models.json or auth).
    pub headers: Vec<(String, String)>,
}

/// A finished compaction, as pi puts it in `compaction_end.result` and the `compaction` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    pub details: FileLists,
}

impl CompactionResult {
    /// `details` as the JSON the session entry stores.
    pub fn details_value(&self) -> serde_json::Value {
        serde_json::to_value(&self.details).unwrap_or_default()
    }
}

/// Why a compaction produced no summary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    /// The cancel token fired (or the provider reported the call aborted).
    #[error("Compaction cancelled")]
    Cancelled,
    #[error("Summarization failed: {0}")]
    Summarization(String),
    #[error("Turn prefix summarization failed: {0}")]
    TurnPrefix(String),
}

/// One summarisation call's outcome.
pub(crate) enum CallOutcome {
    Text(String),
    Aborted,
    /// The provider's error text, when it gave one.
    Error(Option<String>),
}

/// Send one summarisation request: the system prompt and one user message. `max_tokens`
/// `None` leaves the model's own output limit.
pub(crate) async fn request_summary(
    llm: &SummaryModel<'_>,
    prompt: String,
    max_tokens: Option<u64>,
    reasoning: Option<ThinkingLevel>,
    cancel: &CancellationToken,
) -> CallOutcome {
    let context = Context {
        system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.to_string()),
        messages: vec![Message::User(Arc::new(UserMessage {
            content: UserContent::Blocks(vec![Content::text(prompt)]),
            timestamp: pi_ai::now_ms(),
            extra: Default::default(),
        }))],
        tools: Vec::new(),
    };
    let options = StreamOptions {
        max_tokens,
        reasoning,
        api_key: llm.api_key.clone(),
        headers: llm.headers.clone(),
        cancel: cancel.child_token(),
        ..Default::default()
    };
    let response: AssistantMessage = (llm.stream_fn)(llm.model, &context, options).result().await;
    match response.stop_reason {
        StopReason::Aborted => CallOutcome::Aborted,
        _ if cancel.is_cancelled() => CallOutcome::Aborted,
        StopReason::Error => CallOutcome::Error(response.error_message.filter(|m| !m.is_empty())),
        // A summary cut at the cap is partial: it must not become the session's checkpoint.
        StopReason::Length => CallOutcome::Error(Some(SUMMARY_TRUNCATED.to_string())),
        _ => CallOutcome::Text(join_text(&response.content)),
    }
}

/// Why a summary that hit its output limit is refused (pi 1.6's wording after the label).
const SUMMARY_TRUNCATED: &str = "generation hit the token cap and the summary is incomplete";

fn unknown() -> String {
    "Unknown error".to_string()
}

/// The reasoning level of a summary call: the session's level when the model reasons and the
/// level is not off.
fn summary_reasoning(model: &Model, thinking_level: ThinkingLevel) -> Option<ThinkingLevel> {
    (model.reasoning && thinking_level != ThinkingLevel::Off).then_some(thinking_level)
}

/// The user text of a history summary request.
pub fn history_summary_prompt(
    messages: &[AgentMessage],
    previous_summary: Option<&str>,
    custom_instructions: Option<&str>,
) -> String {
    let conversation = serialize_conversation(&pi_session::convert_to_llm(messages));
    let mut text = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(prev) = previous_summary {
        text.push_str(&format!("<previous-summary>\n{prev}\n</previous-summary>\n\n"));
    }
    text.push_str(if previous_summary.is_some() {
        UPDATE_SUMMARIZATION_PROMPT
    } else {
        SUMMARIZATION_PROMPT
    });
    if let Some(custom) = custom_instructions.filter(|c| !c.is_empty()) {
        text.push_str(&format!("\n\nAdditional focus: {custom}"));
    }
    text
}

/// The user text of a turn-prefix summary request.
pub fn turn_prefix_prompt(messages: &[AgentMessage]) -> String {
    let conversation = serialize_conversation(&pi_session::convert_to_llm(messages));
    format!("<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}")
}

/// Summarise the history part of a compaction, up to the model's output limit (pi 1.6: the
/// reserve only decides when to compact).
pub async fn generate_summary(
    messages: &[AgentMessage],
    llm: &SummaryModel<'_>,
    custom_instructions: Option<&str>,
    previous_summary: Option<&str>,
    thinking_level: ThinkingLevel,
    cancel: &CancellationToken,
) -> Result<String, CompactionError> {
    let prompt = history_summary_prompt(messages, previous_summary, custom_instructions);
    match request_summary(llm, prompt, None, summary_reasoning(llm.model, thinking_level), cancel).await {
        CallOutcome::Text(t) => Ok(t),
        CallOutcome::Aborted => Err(CompactionError::Cancelled),
        CallOutcome::Error(e) => Err(CompactionError::Summarization(e.unwrap_or_else(unknown))),
    }
}

/// Summarise the early part of a split turn, up to the model's output limit.
pub async fn generate_turn_prefix_summary(
    messages: &[AgentMessage],
    llm: &SummaryModel<'_>,
    thinking_level: ThinkingLevel,
    cancel: &CancellationToken,
) -> Result<String, CompactionError> {
    let prompt = turn_prefix_prompt(messages);
    match request_summary(llm, prompt, None, summary_reasoning(llm.model, thinking_level), cancel).await {
        CallOutcome::Text(t) => Ok(t),
        CallOutcome::Aborted => Err(CompactionError::Cancelled),
        CallOutcome::Error(e) => Err(CompactionError::TurnPrefix(e.unwrap_or_else(unknown))),
    }
}

/// Summarise a prepared compaction. A split turn's two summaries are requested one after
/// the other (history first, as pi 1.6) and joined; the file lists are appended as tags and
/// returned as `details`.
pub async fn compact(
    preparation: &CompactionPreparation,
    llm: &SummaryModel<'_>,
    custom_instructions: Option<&str>,
    thinking_level: ThinkingLevel,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let p = preparation;
    let history = || {
        generate_summary(
            &p.messages_to_summarize,
            llm,
            custom_instructions,
            p.previous_summary.as_deref(),
            thinking_level,
            cancel,
        )
    };
    let mut summary = if p.is_split_turn && !p.turn_prefix_messages.is_empty() {
        // Nothing to summarise before the turn: the previous summary stands for the history.
        let history = if p.messages_to_summarize.is_empty() {
            p.previous_summary
                .clone()
                .unwrap_or_else(|| NO_PRIOR_HISTORY.to_string())
        } else {
            history().await?
        };
        let prefix = generate_turn_prefix_summary(&p.turn_prefix_messages, llm, thinking_level, cancel).await?;
        merge_split_turn(&history, &prefix)
    } else {
        history().await?
    };
    if cancel.is_cancelled() {
        return Err(CompactionError::Cancelled);
    }
    let details = p.file_ops.to_lists();
    summary.push_str(&details.to_tags());
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: p.first_kept_entry_id.clone(),
        tokens_before: p.tokens_before,
        details,
    })
}
