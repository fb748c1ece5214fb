//! Session-level auto-retry: which errors are worth another attempt, and how long to wait.

use std::sync::OnceLock;

use regex::Regex;

/// Error texts that mean "try again later" (pi 0.73's list). Context overflow is excluded by
/// the caller, which checks it first.
const RETRYABLE: &str = r"(?i)overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|http2 request did not get a response|timed? out|timeout|terminated|retry delay";

fn retryable_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(RETRYABLE).ok()).as_ref()
}

/// Whether an assistant error message is transient.
pub fn is_retryable_error(error_message: &str) -> bool {
    retryable_regex().is_some_and(|re| re.is_match(error_message))
}

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
