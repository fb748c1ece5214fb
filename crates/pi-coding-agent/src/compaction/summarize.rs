//! Asking the model for a compaction summary (and a split turn's prefix summary).

use pi_ai::{
    join_text, AssistantMessage, CacheRetention, Content, Context, Message, Model, StopReason, StreamFn, StreamOptions,
    ThinkingLevel, Usage, UserContent, UserMessage,
};
use pi_session::AgentMessage;
use serde::Serialize;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::config::settings::RetrySettings;
use crate::session::retry::{is_retryable_error, retry_delay_ms, MAX_AGENT_RETRY_DELAY_MS};

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
    /// How transient provider errors are retried, and who hears of the retries.
    pub retry: SummaryRetry<'a>,
}

/// The retry policy of summary requests (the session's `retry` settings, as pi 1.6 applies
/// them to every summary call) and the observer told of each retry.
#[derive(Clone, Copy, Default)]
pub struct SummaryRetry<'a> {
    /// `None`: the first answer stands.
    pub policy: Option<RetrySettings>,
    pub observer: Option<&'a dyn SummaryRetryObserver>,
}

/// What a summary call's retry loop reports (pi 1.6's `summarization_retry_*` events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryRetryEvent {
    /// A transient error; the next attempt starts after `delay_ms`.
    Scheduled {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    /// The wait is over and the retried request starts.
    AttemptStart,
    /// The loop ended (answer, final error, or cancelled wait) after at least one retry.
    Finished,
}

/// Hears a summary call's retries; the session turns them into events.
pub trait SummaryRetryObserver: Send + Sync {
    fn notify<'s>(&'s self, event: SummaryRetryEvent) -> Pin<Box<dyn Future<Output = ()> + Send + 's>>;
}

/// A summary the model wrote, and what its request cost.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryText {
    pub text: String,
    pub usage: Usage,
}

/// Add two usages (pi's `combineUsage`): the cost is the provider's only when both parts are.
pub fn combine_usage(first: &Usage, second: &Usage) -> Usage {
    let sum_opt =
        |a: Option<u64>, b: Option<u64>| (a.is_some() || b.is_some()).then(|| a.unwrap_or(0) + b.unwrap_or(0));
    Usage {
        input: first.input + second.input,
        output: first.output + second.output,
        cache_read: first.cache_read + second.cache_read,
        cache_write: first.cache_write + second.cache_write,
        reasoning: sum_opt(first.reasoning, second.reasoning),
        total_tokens: first.total_tokens + second.total_tokens,
        cost: pi_ai::UsageCost {
            input: first.cost.input + second.cost.input,
            output: first.cost.output + second.cost.output,
            cache_read: first.cost.cache_read + second.cost.cache_read,
            cache_write: first.cost.cache_write + second.cost.cache_write,
            total: first.cost.total + second.cost.total,
            total_from_provider: Some(
                first.cost.total_from_provider == Some(true) && second.cost.total_from_provider == Some(true),
            ),
        },
        cache_write_1h: sum_opt(first.cache_write_1h, second.cache_write_1h),
    }
}

/// A finished compaction, as pi puts it in `compaction_end.result` and the `compaction` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    /// The estimated size of the context after the compaction (set by the session).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_tokens_after: Option<u64>,
    /// What the summary requests cost (a `Usage` as JSON); an extension's compaction states
    /// its own, kept as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<serde_json::Value>,
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
    /// A summary request answered with a tool call; the text names the request
    /// (`Summarization attempted to call a tool`).
    #[error("{0}")]
    Refused(String),
}

/// Why a summarisation call gave no summary.
pub(crate) enum CallFailure {
    Aborted,
    /// The provider's error text, when it gave one.
    Error(Option<String>),
    /// The answer hit the output cap: a partial summary must not become a checkpoint.
    Truncated,
    /// The answer called a tool instead of writing the summary.
    ToolCall,
}

impl CallFailure {
    /// pi 1.6's text for a failed request labelled `label` (`Summarization`, `Turn prefix
    /// summarization`, `Branch summarization`).
    pub(crate) fn message(&self, label: &str) -> String {
        match self {
            CallFailure::Aborted => format!("{label} aborted"),
            CallFailure::Error(e) => format!("{label} failed: {}", e.as_deref().unwrap_or("Unknown error")),
            CallFailure::Truncated => format!("{label} failed: {SUMMARY_TRUNCATED}"),
            CallFailure::ToolCall => format!("{label} attempted to call a tool"),
        }
    }
}

/// Send one summarisation request: the system prompt and one user message, up to the
/// model's own output limit, with no prompt caching and a fresh routing id (one-off requests
/// should not write caches). Transient errors are retried as the policy says.
pub(crate) async fn request_summary(
    llm: &SummaryModel<'_>,
    prompt: String,
    reasoning: Option<ThinkingLevel>,
    cancel: &CancellationToken,
) -> Result<SummaryText, CallFailure> {
    let shape = RequestShape {
        system_prompt: SUMMARIZATION_SYSTEM_PROMPT,
        max_tokens: None,
        session_id: None,
    };
    request_shaped(llm, &shape, prompt, reasoning, cancel).await
}

/// What differs between one-off requests: the system prompt, an output cap (`None`: the
/// model's own limit) and the routing id (`None`: a fresh one).
pub(crate) struct RequestShape<'a> {
    pub system_prompt: &'a str,
    pub max_tokens: Option<u64>,
    pub session_id: Option<String>,
}

/// [`request_summary`] with its own system prompt, output cap and routing id.
pub(crate) async fn request_shaped(
    llm: &SummaryModel<'_>,
    shape: &RequestShape<'_>,
    prompt: String,
    reasoning: Option<ThinkingLevel>,
    cancel: &CancellationToken,
) -> Result<SummaryText, CallFailure> {
    let context = Context {
        system_prompt: Some(shape.system_prompt.to_string()),
        messages: vec![Message::User(Arc::new(UserMessage {
            content: UserContent::Blocks(vec![Content::text(prompt)]),
            timestamp: pi_ai::now_ms(),
            extra: Default::default(),
        }))],
        tools: Vec::new(),
    };
    let options = StreamOptions {
        reasoning,
        api_key: llm.api_key.clone(),
        headers: llm.headers.clone(),
        max_tokens: shape.max_tokens,
        session_id: Some(
            shape
                .session_id
                .clone()
                .unwrap_or_else(|| uuid::Uuid::now_v7().to_string()),
        ),
        cache_retention: CacheRetention::None,
        ..Default::default()
    };
    let response = answer_with_retries(llm, &context, options, cancel).await;
    match response.stop_reason {
        StopReason::Aborted => Err(CallFailure::Aborted),
        _ if cancel.is_cancelled() => Err(CallFailure::Aborted),
        StopReason::Error => Err(CallFailure::Error(response.error_message.filter(|m| !m.is_empty()))),
        StopReason::Length => Err(CallFailure::Truncated),
        _ if response.content.iter().any(|c| matches!(c, Content::ToolCall(_))) => Err(CallFailure::ToolCall),
        _ => Ok(SummaryText {
            text: join_text(&response.content),
            usage: response.usage,
        }),
    }
}

/// The answer to `context`, retrying transient errors with exponential backoff; a cancel
/// during a wait ends the loop as aborted. The observer hears each retry and, after any, the end.
async fn answer_with_retries(
    llm: &SummaryModel<'_>,
    context: &Context,
    options: StreamOptions,
    cancel: &CancellationToken,
) -> AssistantMessage {
    let max_attempts = llm.retry.policy.filter(|p| p.enabled).map_or(0, |p| p.max_retries);
    let base_delay_ms = llm.retry.policy.map_or(0, |p| p.base_delay_ms);
    let notify = |event| async move {
        if let Some(observer) = llm.retry.observer {
            observer.notify(event).await;
        }
    };
    let mut attempt = 0;
    loop {
        let mut call = options.clone();
        call.cancel = cancel.child_token();
        let mut response: AssistantMessage = (llm.stream_fn)(llm.model, context, call).result().await;
        let retryable = response.stop_reason == StopReason::Error
            && attempt < max_attempts
            && response.error_message.as_deref().is_some_and(is_retryable_error);
        if !retryable || cancel.is_cancelled() {
            if attempt > 0 {
                notify(SummaryRetryEvent::Finished).await;
            }
            return response;
        }
        attempt += 1;
        let delay_ms = retry_delay_ms(base_delay_ms, attempt).min(MAX_AGENT_RETRY_DELAY_MS);
        let error_message = response.error_message.clone().unwrap_or_default();
        notify(SummaryRetryEvent::Scheduled {
            attempt,
            max_attempts,
            delay_ms,
            error_message,
        })
        .await;
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(delay_ms)) => {}
            _ = cancel.cancelled() => {
                notify(SummaryRetryEvent::Finished).await;
                response.stop_reason = StopReason::Aborted;
                response.error_message = None;
                return response;
            }
        }
        notify(SummaryRetryEvent::AttemptStart).await;
    }
}

/// Why a summary that hit its output limit is refused (pi 1.6's wording after the label).
const SUMMARY_TRUNCATED: &str = "generation hit the token cap and the summary is incomplete";

/// A failed history request as the compaction error pi 1.6 reports.
fn history_failure(failure: CallFailure) -> CompactionError {
    match failure {
        CallFailure::Aborted => CompactionError::Cancelled,
        CallFailure::Error(e) => CompactionError::Summarization(e.unwrap_or_else(|| "Unknown error".to_string())),
        CallFailure::Truncated => CompactionError::Summarization(SUMMARY_TRUNCATED.to_string()),
        CallFailure::ToolCall => CompactionError::Refused(failure.message("Summarization")),
    }
}

/// A failed turn-prefix request as the compaction error pi 1.6 reports.
fn turn_prefix_failure(failure: CallFailure) -> CompactionError {
    match failure {
        CallFailure::Aborted => CompactionError::Cancelled,
        CallFailure::Error(e) => CompactionError::TurnPrefix(e.unwrap_or_else(|| "Unknown error".to_string())),
        CallFailure::Truncated => CompactionError::TurnPrefix(SUMMARY_TRUNCATED.to_string()),
        CallFailure::ToolCall => CompactionError::Refused(failure.message("Turn prefix summarization")),
    }
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

/// The user text of a turn-prefix summary request: the conversation and the instructions
/// under two headings (pi 1.6's layout for this request), with the user's focus if any.
pub fn turn_prefix_prompt(messages: &[AgentMessage], custom_instructions: Option<&str>) -> String {
    let conversation = serialize_conversation(&pi_session::convert_to_llm(messages));
    let mut text = format!("# Conversation\n{conversation}\n\n# Instructions\n{TURN_PREFIX_SUMMARIZATION_PROMPT}");
    if let Some(custom) = custom_instructions.filter(|c| !c.is_empty()) {
        text.push_str(&format!("\n\nAdditional focus: {custom}"));
    }
    text
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
) -> Result<SummaryText, CompactionError> {
    let prompt = history_summary_prompt(messages, previous_summary, custom_instructions);
    request_summary(llm, prompt, summary_reasoning(llm.model, thinking_level), cancel)
        .await
        .map_err(history_failure)
}

/// Summarise the early part of a split turn, up to the model's output limit.
pub async fn generate_turn_prefix_summary(
    messages: &[AgentMessage],
    llm: &SummaryModel<'_>,
    custom_instructions: Option<&str>,
    thinking_level: ThinkingLevel,
    cancel: &CancellationToken,
) -> Result<SummaryText, CompactionError> {
    let prompt = turn_prefix_prompt(messages, custom_instructions);
    request_summary(llm, prompt, summary_reasoning(llm.model, thinking_level), cancel)
        .await
        .map_err(turn_prefix_failure)
}

/// Summarise a prepared compaction. A split turn's two summaries are requested one after
/// the other (history first, as pi 1.6) and joined, and so are their usages; the file lists
/// are appended as tags and returned as `details`.
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
    let (mut summary, usage) = if p.is_split_turn && !p.turn_prefix_messages.is_empty() {
        // Nothing to summarise before the turn: the previous summary stands for the history.
        let (history, history_usage) = if p.messages_to_summarize.is_empty() {
            let text = p
                .previous_summary
                .clone()
                .unwrap_or_else(|| NO_PRIOR_HISTORY.to_string());
            (text, None)
        } else {
            let h = history().await?;
            (h.text, Some(h.usage))
        };
        let prefix = generate_turn_prefix_summary(
            &p.turn_prefix_messages,
            llm,
            custom_instructions,
            thinking_level,
            cancel,
        )
        .await?;
        let usage = match history_usage {
            Some(h) => combine_usage(&h, &prefix.usage),
            None => prefix.usage,
        };
        (merge_split_turn(&history, &prefix.text), usage)
    } else {
        let h = history().await?;
        (h.text, h.usage)
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
        estimated_tokens_after: None,
        usage: serde_json::to_value(usage).ok(),
        details,
    })
}
