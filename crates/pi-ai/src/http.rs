//! The process-wide HTTP client and the provider-layer retry of requests that fail before the
//! response stream starts.
//!
//! Retry rules follow the official SDKs the TypeScript pi uses: HTTP 408, 409, 429 and 5xx (529
//! included) and connection failures are retried `max_retries` times (default 0, as pi 1.6 sets
//! the SDKs: transient failures surface to the session's auto-retry) after a short
//! exponential backoff with jitter, or after the delay the server asks for in `retry-after-ms` /
//! `retry-after` when that is within `max_retry_delay_ms`. Other statuses are returned at once.
//! Nothing here emits events: retries are invisible to consumers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::Value;

use crate::options::StreamOptions;

/// Retries of a failed request when the caller does not say (`retry.provider.maxRetries`
/// unset): none, as in pi 1.6.
pub const DEFAULT_MAX_RETRIES: u32 = 0;
/// Longest server-requested delay honoured when the caller does not say.
pub const DEFAULT_MAX_RETRY_DELAY_MS: u64 = 60_000;
/// First backoff step; each retry doubles it.
const INITIAL_BACKOFF_MS: f64 = 500.0;
/// Backoff never grows past this.
const MAX_BACKOFF_MS: f64 = 8_000.0;

/// How long a response may go without a byte (headers or body) before it fails, as pi 1.6's
/// `httpIdleTimeoutMs` setting (5 minutes unless configured).
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 300_000;

/// The idle timeout in milliseconds (`0`: off): the settings' value at startup, and again
/// whenever `/settings` changes it.
static IDLE_TIMEOUT_MS: AtomicU64 = AtomicU64::new(DEFAULT_IDLE_TIMEOUT_MS);

/// Set the idle timeout of every later response (`0` turns it off). Requests already under
/// way keep the timeout they started with.
pub fn configure_idle_timeout(ms: u64) {
    IDLE_TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

/// The idle timeout in milliseconds new requests get (`0`: off).
pub fn idle_timeout_ms() -> u64 {
    IDLE_TIMEOUT_MS.load(Ordering::Relaxed)
}

/// The shared client for the current idle timeout. Built on first use; proxies come from
/// `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` (reqwest reads them).
///
/// reqwest fixes a client's read timeout when it is built, so each timeout in use has its
/// client, kept for the process (connections are pooled per client). Only the few values the
/// settings offer ever occur, so this stays a handful of clients at most.
pub fn client() -> &'static reqwest::Client {
    static CLIENTS: Mutex<Vec<(u64, &'static reqwest::Client)>> = Mutex::new(Vec::new());
    let ms = idle_timeout_ms();
    let mut clients = CLIENTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, client)) = clients.iter().find(|(m, _)| *m == ms) {
        return client;
    }
    let client: &'static reqwest::Client = Box::leak(Box::new(build_client(ms)));
    clients.push((ms, client));
    client
}

fn build_client(idle_ms: u64) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .user_agent(user_agent())
        .connect_timeout(Duration::from_secs(30))
        .tcp_nodelay(true);
    // A read timeout restarts with every byte received: a stream that stalls without
    // closing fails after this long, however long the whole reply takes.
    if idle_ms > 0 {
        builder = builder.read_timeout(Duration::from_millis(idle_ms));
    }
    builder
        .build()
        // Building only fails when the TLS backend cannot initialise; a default client
        // then still serves plain-HTTP endpoints (local servers) instead of aborting.
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// The `User-Agent` of every provider request: `pi/<version> (<platform>; <arch>)`, with the
/// platform and architecture named as Node names them (`linux`, `darwin`, `win32`; `x64`,
/// `arm64`). A model's or the caller's `User-Agent` header replaces it.
pub fn user_agent() -> &'static str {
    static UA: OnceLock<String> = OnceLock::new();
    UA.get_or_init(|| {
        let platform = match std::env::consts::OS {
            "macos" => "darwin",
            "windows" => "win32",
            other => other,
        };
        let arch = match std::env::consts::ARCH {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            "x86" => "ia32",
            other => other,
        };
        format!("pi/{} ({platform}; {arch})", env!("CARGO_PKG_VERSION"))
    })
}

/// How the SDK of an API words an HTTP error status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorBodyStyle {
    /// OpenAI style: the message comes from the body's `error` object (`429 Rate limited`).
    ErrorField,
    /// Anthropic style: the whole JSON body is the error (`429 {"type":"error",...}`).
    WholeBody,
}

/// Why a request produced no usable response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HttpError {
    /// The server answered with an error status (after retries, if it was retryable).
    #[error("{}", status_message(*.status, .body, ErrorBodyStyle::ErrorField))]
    Status {
        status: u16,
        /// The response body as text (may be empty).
        body: String,
    },
    /// The connection could not be made or broke before a response arrived. `reason` is the
    /// low-level cause pi 1.6 appends (`connect ECONNREFUSED 127.0.0.1:9`), when known.
    #[error("Connection error.{}", .reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Connection { detail: String, reason: Option<String> },
    /// No response within the request timeout.
    #[error("Request timed out.")]
    Timeout,
}

impl HttpError {
    /// The error text as pi 1.6 reports it for an SDK of the given style
    /// ([`provider_error_message`]).
    pub fn message(&self, style: ErrorBodyStyle) -> String {
        self.message_with_prefix(style, None)
    }

    /// [`Self::message`] with a provider label (`<prefix> (<status>): ...`).
    pub fn message_with_prefix(&self, style: ErrorBodyStyle, prefix: Option<&str>) -> String {
        match self {
            HttpError::Status { status, body } => provider_error_message(*status, body, style, prefix),
            other => other.to_string(),
        }
    }

    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// `<status> <message>` as the OpenAI and Anthropic SDKs build it from an error body.
pub fn status_message(status: u16, body: &str, style: ErrorBodyStyle) -> String {
    let msg = match serde_json::from_str::<Value>(body) {
        Ok(json) => {
            let error = match style {
                ErrorBodyStyle::ErrorField => json.get("error").cloned(),
                ErrorBodyStyle::WholeBody => Some(json),
            };
            match error {
                None | Some(Value::Null) => None,
                Some(err) => match err.get("message") {
                    Some(Value::String(m)) if !m.is_empty() => Some(m.clone()),
                    Some(m) if !m.is_null() && m.as_str() != Some("") => Some(m.to_string()),
                    _ => Some(err.to_string()),
                },
            }
        }
        Err(_) if body.is_empty() => None,
        Err(_) => Some(body.to_string()),
    };
    match msg {
        Some(m) => format!("{status} {m}"),
        None => format!("{status} status code (no body)"),
    }
}

/// pi's cap on the provider body quoted in an error text.
const MAX_ERROR_BODY_CHARS: usize = 4000;

/// The error text pi 1.6 shows for an error status: when the SDK's message leaves out the
/// body's `error` object, `<status>: <that object as JSON>` (prefixed `<prefix> (<status>):`
/// when a provider label is given); otherwise the SDK's own message (Anthropic's already
/// quotes the whole body).
pub fn provider_error_message(status: u16, body: &str, style: ErrorBodyStyle, prefix: Option<&str>) -> String {
    let quoted = match style {
        ErrorBodyStyle::WholeBody => None,
        ErrorBodyStyle::ErrorField => match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(mut json)) => match json.shift_remove("error") {
                Some(Value::Object(error)) if !error.is_empty() => Some(Value::Object(error).to_string()),
                _ => None,
            },
            _ => None,
        },
    };
    match (quoted, prefix) {
        (Some(body), Some(prefix)) => format!("{prefix} ({status}): {}", truncate_error_text(&body)),
        (Some(body), None) => format!("{status}: {}", truncate_error_text(&body)),
        (None, Some(prefix)) => format!("{prefix} ({status}): {}", status_message(status, body, style)),
        (None, None) => status_message(status, body, style),
    }
}

/// `text` cut to [`MAX_ERROR_BODY_CHARS`] characters, saying how much was left out.
fn truncate_error_text(text: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_ERROR_BODY_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_ERROR_BODY_CHARS).collect();
    format!("{kept}... [truncated {} chars]", total - MAX_ERROR_BODY_CHARS)
}

/// Whether a status is worth retrying (the SDKs' rule).
pub fn is_retryable_status(status: StatusCode, headers: &HeaderMap) -> bool {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// The delay a server asked for, from `retry-after-ms` or `retry-after` (seconds or an HTTP
/// date).
pub fn server_retry_delay(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    http_date_delay(value)
}

/// Seconds until an IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`), zero when in the past.
fn http_date_delay(value: &str) -> Option<Duration> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    if parts.len() != 6 || parts[5] != "GMT" {
        return None;
    }
    let day: i64 = parts[1].parse().ok()?;
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == parts[2])? as i64 + 1;
    let year: i64 = parts[3].parse().ok()?;
    let hms: Vec<i64> = parts[4].split(':').filter_map(|p| p.parse().ok()).collect();
    // Out-of-range fields are not a date (and would overflow the arithmetic below).
    if hms.len() != 3
        || !(1970..=9999).contains(&year)
        || !(1..=31).contains(&day)
        || !(0..24).contains(&hms[0])
        || !(0..60).contains(&hms[1])
        || !(0..=60).contains(&hms[2])
    {
        return None;
    }
    // Days from civil date (proleptic Gregorian), as in Howard Hinnant's algorithm.
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let target_ms = (days * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2]) * 1000;
    let wait = target_ms - crate::types::now_ms();
    Some(Duration::from_millis(u64::try_from(wait).unwrap_or(0)))
}

/// The default backoff before retry number `attempt` (0-based): 0.5 s, 1 s, 2 s ... capped at
/// 8 s, minus up to 25 % jitter.
pub fn backoff_delay(attempt: u32) -> Duration {
    let base = (INITIAL_BACKOFF_MS * 2f64.powi(attempt.min(16) as i32)).min(MAX_BACKOFF_MS);
    Duration::from_secs_f64(base * (1.0 - 0.25 * jitter_fraction()) / 1000.0)
}

/// A number in [0, 1) that differs between calls; good enough to spread retries.
fn jitter_fraction() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static STATE: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    let mut x = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) ^ nanos;
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// Retry limits of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub max_retry_delay: Duration,
    /// Time allowed until response headers arrive, per attempt.
    pub timeout: Option<Duration>,
}

impl RetryPolicy {
    pub fn from_options(options: &StreamOptions) -> Self {
        RetryPolicy {
            max_retries: options.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            max_retry_delay: Duration::from_millis(options.max_retry_delay_ms.unwrap_or(DEFAULT_MAX_RETRY_DELAY_MS)),
            timeout: options.timeout_ms.map(Duration::from_millis),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: DEFAULT_MAX_RETRIES,
            max_retry_delay: Duration::from_millis(DEFAULT_MAX_RETRY_DELAY_MS),
            timeout: None,
        }
    }
}

/// Send the request `build` makes, retrying per `policy`, and return the first successful
/// (2xx) response. `build` is called once per attempt. Cancellation is the caller's business:
/// drop this future (e.g. in a `select!` against the token) and the wait or request stops.
pub async fn send_with_retry(build: impl Fn() -> RequestBuilder, policy: RetryPolicy) -> Result<Response, HttpError> {
    send_with_retry_except(build, policy, &[]).await
}

/// [`send_with_retry`], except that the statuses in `no_retry` fail at once although they are
/// normally retried (a gateway timeout that the same input would meet again).
pub async fn send_with_retry_except(
    build: impl Fn() -> RequestBuilder,
    policy: RetryPolicy,
    no_retry: &[u16],
) -> Result<Response, HttpError> {
    send_attempts(build, policy, no_retry, true).await
}

/// [`send_with_retry_except`] as pi 1.6 retries its own `fetch` calls (the classifier APIs):
/// a connection that fails or closes without an answer is not retried, since `fetch`'s
/// error carries no status to judge it by; statuses and timeouts are.
pub async fn send_with_fetch_retry(
    build: impl Fn() -> RequestBuilder,
    policy: RetryPolicy,
    no_retry: &[u16],
) -> Result<Response, HttpError> {
    send_attempts(build, policy, no_retry, false).await
}

async fn send_attempts(
    build: impl Fn() -> RequestBuilder,
    policy: RetryPolicy,
    no_retry: &[u16],
    retry_connection_errors: bool,
) -> Result<Response, HttpError> {
    let mut attempt: u32 = 0;
    loop {
        let sent = match policy.timeout {
            Some(limit) => match tokio::time::timeout(limit, build().send()).await {
                Ok(r) => r,
                Err(_) => {
                    if attempt < policy.max_retries {
                        tokio::time::sleep(backoff_delay(attempt)).await;
                        attempt += 1;
                        continue;
                    }
                    return Err(HttpError::Timeout);
                }
            },
            None => build().send().await,
        };
        let response = match sent {
            Ok(r) => r,
            Err(err) => {
                if attempt < policy.max_retries && (retry_connection_errors || err.is_timeout()) {
                    tokio::time::sleep(backoff_delay(attempt)).await;
                    attempt += 1;
                    continue;
                }
                return Err(if err.is_timeout() {
                    HttpError::Timeout
                } else {
                    HttpError::Connection {
                        detail: error_chain(&err),
                        reason: connect_reason(&err),
                    }
                });
            }
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if attempt < policy.max_retries
            && !no_retry.contains(&status.as_u16())
            && is_retryable_status(status, response.headers())
        {
            let delay = match server_retry_delay(response.headers()) {
                Some(d) if d <= policy.max_retry_delay => Some(d),
                // The server wants longer than we may wait: report the error now.
                Some(_) => None,
                None => Some(backoff_delay(attempt)),
            };
            if let Some(delay) = delay {
                drop(response);
                tokio::time::sleep(delay).await;
                attempt += 1;
                continue;
            }
        }
        let body = response.text().await.unwrap_or_default();
        return Err(HttpError::Status {
            status: status.as_u16(),
            body,
        });
    }
}

/// Request headers checked once, reused by every attempt.
pub fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("Invalid header name: {name}"))?;
        let value =
            reqwest::header::HeaderValue::from_str(value).map_err(|_| format!("Invalid value for header {name}"))?;
        // Later entries override earlier ones, as with JavaScript header objects.
        map.insert(name, value);
    }
    Ok(map)
}

/// POST a JSON body with retries and return the successful response.
pub async fn post_json(
    url: &str,
    headers: HeaderMap,
    body: bytes::Bytes,
    policy: RetryPolicy,
) -> Result<Response, HttpError> {
    send_with_retry(
        || {
            client()
                .post(url)
                .headers(headers.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone())
        },
        policy,
    )
    .await
}

/// The error and its causes on one line (for diagnostics only).
/// Node's words for a refused or unreachable connection (`connect ECONNREFUSED host:port`),
/// from the innermost I/O error of `err`.
fn connect_reason(err: &reqwest::Error) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    let mut io_kind = None;
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            io_kind = Some(io.kind());
        }
        source = s.source();
    }
    let Some(io_kind) = io_kind else {
        // hyper's words for a connection closed before the reply: Node's undici says
        // "other side closed".
        let closed = error_chain(err).contains("connection closed before message completed");
        return closed.then(|| "other side closed (UND_ERR_SOCKET)".to_string());
    };
    let code = match io_kind {
        std::io::ErrorKind::ConnectionRefused => "ECONNREFUSED",
        std::io::ErrorKind::ConnectionReset => "ECONNRESET",
        std::io::ErrorKind::TimedOut => "ETIMEDOUT",
        _ => return None,
    };
    let url = err.url()?;
    let host = url.host_str()?;
    let port = url.port_or_known_default()?;
    Some(format!("connect {code} {host}:{port}"))
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn provider_errors_quote_the_error_object_as_pi_16_does() {
        let body =
            r#"{"error":{"message":"mock bad request","type":"invalid_request_error","param":null,"code":null}}"#;
        assert_eq!(
            provider_error_message(400, body, ErrorBodyStyle::ErrorField, None),
            r#"400: {"message":"mock bad request","type":"invalid_request_error","param":null,"code":null}"#
        );
        assert_eq!(
            provider_error_message(400, body, ErrorBodyStyle::ErrorField, Some("mock-responses API error")),
            r#"mock-responses API error (400): {"message":"mock bad request","type":"invalid_request_error","param":null,"code":null}"#
        );
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"mock bad request"}}"#;
        assert_eq!(
            provider_error_message(400, anthropic, ErrorBodyStyle::WholeBody, None),
            format!("400 {anthropic}")
        );
        // Without an error object the SDK's words stay.
        assert_eq!(
            provider_error_message(502, "Bad gateway", ErrorBodyStyle::ErrorField, None),
            "502 Bad gateway"
        );
        assert_eq!(
            provider_error_message(500, "", ErrorBodyStyle::ErrorField, Some("OpenAI API error")),
            "OpenAI API error (500): 500 status code (no body)"
        );
        let long = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(5000));
        let text = provider_error_message(400, &long, ErrorBodyStyle::ErrorField, None);
        assert!(
            text.ends_with("... [truncated 1014 chars]"),
            "{}",
            &text[text.len() - 40..]
        );
    }

    #[test]
    fn status_messages_follow_each_sdk() {
        let body = r#"{"error":{"message":"Rate limited","type":"rate_limit"}}"#;
        assert_eq!(
            status_message(429, body, ErrorBodyStyle::ErrorField),
            "429 Rate limited"
        );
        assert_eq!(
            status_message(429, body, ErrorBodyStyle::WholeBody),
            r#"429 {"error":{"message":"Rate limited","type":"rate_limit"}}"#
        );
        assert_eq!(
            status_message(400, r#"{"error":{"code":1}}"#, ErrorBodyStyle::ErrorField),
            r#"400 {"code":1}"#
        );
        assert_eq!(
            status_message(500, "", ErrorBodyStyle::ErrorField),
            "500 status code (no body)"
        );
        assert_eq!(
            status_message(502, "Bad gateway", ErrorBodyStyle::ErrorField),
            "502 Bad gateway"
        );
        assert_eq!(
            status_message(500, r#"{"detail":"x"}"#, ErrorBodyStyle::ErrorField),
            "500 status code (no body)"
        );
    }

    #[test]
    fn retryable_statuses() {
        let h = HeaderMap::new();
        for s in [408, 409, 429, 500, 502, 503, 529] {
            assert!(is_retryable_status(StatusCode::from_u16(s).expect("status"), &h), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(
                !is_retryable_status(StatusCode::from_u16(s).expect("status"), &h),
                "{s}"
            );
        }
        let mut no = HeaderMap::new();
        no.insert("x-should-retry", HeaderValue::from_static("false"));
        assert!(!is_retryable_status(StatusCode::TOO_MANY_REQUESTS, &no));
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(server_retry_delay(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(server_retry_delay(&h), Some(Duration::from_millis(150)));
        let mut past = HeaderMap::new();
        past.insert("retry-after", HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(server_retry_delay(&past), Some(Duration::ZERO));
        let mut huge = HeaderMap::new();
        huge.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 99 Oct 99999999999 07:28:00 GMT"),
        );
        assert_eq!(server_retry_delay(&huge), None);
        let mut junk = HeaderMap::new();
        junk.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(server_retry_delay(&junk), None);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let d0 = backoff_delay(0).as_millis();
        let d1 = backoff_delay(1).as_millis();
        let d9 = backoff_delay(9).as_millis();
        assert!((375..=500).contains(&d0), "{d0}");
        assert!((750..=1000).contains(&d1), "{d1}");
        assert!((6000..=8000).contains(&d9), "{d9}");
    }
}
