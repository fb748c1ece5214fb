//! Context-overflow detection: did a reply fail, or come back truncated, because the prompt no
//! longer fits the model's context window?

use std::sync::OnceLock;

use regex::RegexSet;

use crate::types::{AssistantMessage, StopReason};

/// Error texts providers use for an oversized prompt (matched case-insensitively), with an
/// example of each.
pub const OVERFLOW_PATTERNS: &[&str] = &[
    // Anthropic: "prompt is too long: 213462 tokens > 200000 maximum"
    r"prompt is too long",
    // Anthropic, HTTP 413: {"error":{"type":"request_too_large",...}}
    r"request_too_large",
    // Amazon Bedrock
    r"input is too long for requested model",
    // OpenAI: "Your input exceeds the context window of this model"
    r"exceeds the context window",
    // Google: "The input token count (1196265) exceeds the maximum number of tokens allowed"
    r"input token count.*exceeds the maximum",
    // xAI: "This model's maximum prompt length is 131072 but the request contains 537812 tokens"
    r"maximum prompt length is [0-9]+",
    // Groq: "Please reduce the length of the messages or completion"
    r"reduce the length of the messages",
    // OpenRouter: "This endpoint's maximum context length is X tokens. However, ..."
    r"maximum context length is [0-9]+ tokens",
    // GitHub Copilot: "prompt token count of X exceeds the limit of Y"
    r"exceeds the limit of [0-9]+",
    // llama.cpp: "the request exceeds the available context size, try increasing it"
    r"exceeds the available context size",
    // LM Studio: "tokens to keep from the initial prompt is greater than the context length"
    r"greater than the context length",
    // MiniMax: "invalid params, context window exceeds limit"
    r"context window exceeds limit",
    // Kimi For Coding: "Your request exceeded model token limit: X (requested: Y)"
    r"exceeded model token limit",
    // Mistral: "Prompt contains X tokens ... too large for model with Y maximum context length"
    r"too large for model with [0-9]+ maximum context length",
    // z.ai, a finish reason surfaced as error text
    r"model_context_window_exceeded",
    // Ollama: "prompt too long; exceeded max context length by X tokens"
    r"prompt too long; exceeded (?:max )?context length",
    // Generic
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    // Cerebras: "400 status code (no body)" or 413
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
];

/// Errors that may mention tokens but are not overflow: throttling and rate limits (Bedrock's
/// "ThrottlingException: Too many tokens, please wait" would otherwise match "too many tokens").
pub const NON_OVERFLOW_PATTERNS: &[&str] = &[
    r"^(?:Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
];

fn case_insensitive_set(patterns: &[&str]) -> RegexSet {
    // The patterns are constants covered by the tests below.
    #[allow(clippy::expect_used)]
    regex::RegexSetBuilder::new(patterns)
        .case_insensitive(true)
        .build()
        .expect("overflow patterns compile")
}

fn overflow_set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| case_insensitive_set(OVERFLOW_PATTERNS))
}

fn non_overflow_set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| case_insensitive_set(NON_OVERFLOW_PATTERNS))
}

/// True when `error_message` reads as a context overflow and not as throttling.
pub fn is_overflow_error_text(error_message: &str) -> bool {
    !non_overflow_set().is_match(error_message) && overflow_set().is_match(error_message)
}

/// Whether `message` shows the context window was exceeded (pi's `isContextOverflow`):
///
/// 1. an `error` reply whose text matches an overflow pattern and no throttling pattern;
/// 2. silent overflow (z.ai): a `stop` reply whose input plus cache-read tokens exceed
///    `context_window`;
/// 3. truncation (Xiaomi MiMo): a `length` reply with no output whose input plus cache-read
///    tokens fill at least 99% of `context_window`.
///
/// The last two need a context window; `None` or `Some(0)` skips them.
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    if message.stop_reason == StopReason::Error {
        if let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) {
            if is_overflow_error_text(text) {
                return true;
            }
        }
    }
    let Some(window) = context_window.filter(|w| *w > 0) else {
        return false;
    };
    let prompt_tokens = message.usage.input.saturating_add(message.usage.cache_read);
    match message.stop_reason {
        StopReason::Stop => prompt_tokens > window,
        // Compared as pi does, in floating point: 0.99 x window need not be an integer.
        StopReason::Length => message.usage.output == 0 && prompt_tokens as f64 >= window as f64 * 0.99,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Usage;

    fn error(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.to_string()),
            ..Default::default()
        }
    }

    fn finished(reason: StopReason, input: u64, cache_read: u64, output: u64) -> AssistantMessage {
        AssistantMessage {
            stop_reason: reason,
            usage: Usage {
                input,
                cache_read,
                output,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn provider_error_texts_are_overflow() {
        let texts = [
            "prompt is too long: 213462 tokens > 200000 maximum",
            r#"413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
            "ValidationException: Input is too long for requested model.",
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
            "Please reduce the length of the messages or completion.",
            "This endpoint's maximum context length is 128000 tokens. However, you requested about 200000 tokens",
            "prompt token count of 140000 exceeds the limit of 128000",
            "the request exceeds the available context size, try increasing it",
            "The number of tokens to keep from the initial prompt is greater than the context length",
            "invalid params, context window exceeds limit (2013)",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
            "model_context_window_exceeded",
            "prompt too long; exceeded max context length by 1200 tokens",
            "prompt too long; exceeded context length by 12 tokens",
            "error: context_length_exceeded",
            "Context length exceeded",
            "Too many tokens in request",
            "Token limit exceeded for this model",
            "400 status code (no body)",
            "413 (no body)",
            // pi excludes Bedrock throttling only in its reformatted "Throttling error:" form.
            "ThrottlingException: Too many tokens, please wait before trying again.",
            "PROMPT IS TOO LONG",
        ];
        for text in texts {
            assert!(is_context_overflow(&error(text), None), "{text}");
        }
    }

    #[test]
    fn other_errors_are_not_overflow() {
        let texts = [
            "Throttling error: Too many tokens, please wait before trying again.",
            "Service unavailable: too many tokens in flight",
            "Rate limit reached: too many tokens per minute",
            "429 Too Many Requests: too many tokens",
            "500 Internal server error",
            "Connection error.",
            "error 400 status code (no body)",
            "maximum prompt length is unknown",
            "",
        ];
        for text in texts {
            assert!(!is_context_overflow(&error(text), Some(1000)), "{text}");
        }
    }

    #[test]
    fn overflow_text_needs_an_error_stop() {
        let mut msg = error("prompt is too long");
        msg.stop_reason = StopReason::Stop;
        assert!(!is_context_overflow(&msg, None));
        msg.stop_reason = StopReason::Aborted;
        assert!(!is_context_overflow(&msg, None));
        let mut msg = error("x");
        msg.error_message = None;
        assert!(!is_context_overflow(&msg, Some(10)));
    }

    #[test]
    fn silent_overflow_on_stop() {
        assert!(is_context_overflow(
            &finished(StopReason::Stop, 900, 101, 5),
            Some(1000)
        ));
        assert!(!is_context_overflow(
            &finished(StopReason::Stop, 900, 100, 5),
            Some(1000)
        ));
        assert!(!is_context_overflow(&finished(StopReason::Stop, 5000, 0, 5), None));
        assert!(!is_context_overflow(&finished(StopReason::Stop, 5000, 0, 5), Some(0)));
        assert!(!is_context_overflow(
            &finished(StopReason::ToolUse, 5000, 0, 5),
            Some(1000)
        ));
    }

    #[test]
    fn truncated_length_reply_with_no_output() {
        assert!(is_context_overflow(
            &finished(StopReason::Length, 980, 10, 0),
            Some(1000)
        ));
        assert!(!is_context_overflow(
            &finished(StopReason::Length, 980, 9, 0),
            Some(1000)
        ));
        assert!(!is_context_overflow(
            &finished(StopReason::Length, 1000, 0, 1),
            Some(1000)
        ));
        assert!(!is_context_overflow(&finished(StopReason::Length, 1000, 0, 0), None));
        // 0.99 x 131 = 129.69: 130 fills it, 129 does not.
        assert!(is_context_overflow(&finished(StopReason::Length, 130, 0, 0), Some(131)));
        assert!(!is_context_overflow(
            &finished(StopReason::Length, 129, 0, 0),
            Some(131)
        ));
    }
}
