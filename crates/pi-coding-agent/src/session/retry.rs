//! Session-level auto-retry: which errors are worth another attempt, and how long to wait.

use std::sync::OnceLock;

use regex::Regex;

/// Error texts that mean "try again later" (pi 1.6's classification). Context overflow is
/// excluded by the caller, which checks it first. Status codes and socket error codes count
/// only as whole tokens (a request id or byte count that contains `500` does not).
const RETRYABLE: &[&str] = &[
    // Provider load and throttling.
    "overloaded",
    "server_busy",
    "servers are currently busy",
    "currently experiencing high demand",
    "model is at capacity",
    "rate.?limit",
    "too many requests",
    "(?:^|[^a-z0-9])(?:429|500|502|503|504|520|524)(?:$|[^a-z0-9])",
    "service.?(?:is.?)?(?:temporarily.?)?unavailable",
    "server.?error",
    "internal.?error",
    // Gateways relaying an upstream failure.
    "provider.?returned.?(?:an.?)?error",
    "exceeded request buffer limit while retrying upstream",
    "unable to forward upstream",
    "upstream.?request.?failed",
    "upstream_stream_read_error",
    "stream was interrupted",
    "http/?2 stream failed",
    // Network and transport failures.
    "network.?error",
    "connection.?error",
    "connection.?refused",
    "connection.?lost",
    "connection.?closed",
    "other side closed",
    "fetch failed",
    r"request to \S+ failed, reason:",
    "getaddrinfo",
    "(?:^|[^a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?:$|[^a-z0-9_])",
    "connection reset by peer",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "socket connection was closed",
    "timed? out",
    "timeout",
    "terminated",
    "websocket.?closed",
    "websocket.?error",
    "websocket.?connection.?limit.?reached",
    // Streams that ended early.
    "ended without",
    "stream ended before message_stop",
    "stream ended before a terminal response event",
    "http2 request did not get a response",
    "stream disconnected before completion",
    "cut short after the reply had begun",
    "pending stream has been canceled",
    "retry delay",
    // Providers asking for a retry in words.
    "you can retry your request",
    "try your request again",
    "please retry your request",
    "ResourceExhausted",
    "subscription_sharing_usage_unavailable",
    "subscription_sharing_user_unavailable",
];

/// Limits that look transient but reset after hours or need the user (quota, billing,
/// subscription usage): never retried, even when a retryable text also matches.
const NOT_RETRYABLE: &[&str] = &[
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota",
    "out of budget",
    "quota exceeded",
    "billing",
    "subscription_sharing_usage_limit_exceeded",
    "subscription_sharing_workplace_individual_usage_limit_exceeded",
    r#""code"\s*:\s*"?1308(?:$|[^0-9])"#,
];

fn alternation(patterns: &[&str]) -> Option<Regex> {
    Regex::new(&format!("(?i){}", patterns.join("|"))).ok()
}

fn retryable_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| alternation(RETRYABLE)).as_ref()
}

fn not_retryable_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| alternation(NOT_RETRYABLE)).as_ref()
}

/// Whether an assistant error message is transient.
pub fn is_retryable_error(error_message: &str) -> bool {
    if error_message.is_empty() || not_retryable_regex().is_none_or(|re| re.is_match(error_message)) {
        return false;
    }
    retryable_regex().is_some_and(|re| re.is_match(error_message))
}

/// pi 1.6's default cap on the agent's retry backoff (`retry.maxAgentDelayMs`); summary
/// requests share it.
pub const MAX_AGENT_RETRY_DELAY_MS: u64 = 60_000;

/// Delay before attempt `attempt` (1-based): `base × 2^(attempt-1)`.
pub fn retry_delay_ms(base_delay_ms: u64, attempt: u32) -> u64 {
    base_delay_ms.saturating_mul(1u64 << attempt.saturating_sub(1).min(32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_compiles() {
        assert!(retryable_regex().is_some());
        assert!(not_retryable_regex().is_some());
    }

    #[test]
    fn transient_errors_are_retryable() {
        for msg in [
            "500 Internal Server Error",
            "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}",
            "Connection error.",
            "Rate limit reached",
            "request timed out",
            "terminated",
            r#"429: {"message":"mock rate limited","type":"rate_limit_error"}"#,
            r#"500: {"message":"mock server error"}"#,
            "Connection error.: connect ECONNREFUSED 127.0.0.1:9",
            "mock-responses API error (503): {}",
            "read ECONNRESET",
            "The service is temporarily unavailable",
        ] {
            assert!(is_retryable_error(msg), "{msg}");
        }
    }

    #[test]
    fn client_errors_are_not() {
        for msg in [
            "400 invalid request: bad field",
            "401 Unauthorized",
            "Request was aborted",
            "request id req_5001234 failed validation",
            r#"429: {"type":"insufficient_quota"}"#,
            r#"429: {"code":"1308","message":"limit"}"#,
            "",
        ] {
            assert!(!is_retryable_error(msg), "{msg}");
        }
    }

    #[test]
    fn delays_double() {
        assert_eq!(retry_delay_ms(2000, 1), 2000);
        assert_eq!(retry_delay_ms(2000, 2), 4000);
        assert_eq!(retry_delay_ms(2000, 3), 8000);
    }
}
