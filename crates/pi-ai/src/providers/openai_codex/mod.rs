//! The `openai-codex-responses` API: the Responses stream of ChatGPT's Codex backend
//! (`<base>/codex/responses`), used with a ChatGPT sign-in. The input items and the stream are
//! those of [`super::openai_responses`]; this module owns what differs: the endpoint, the
//! account header read from the token, the `originator`, and a body that always asks for
//! encrypted reasoning, low verbosity and parallel tool calls.
//!
//! The reply comes over a WebSocket or SSE ([`transport`]); `socket` opens the WebSocket and
//! reads its frames, `sessions` keeps a session's socket between requests.

mod sessions;
mod socket;
mod transport;

use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::{json, Map, Value};

use crate::events::AssistantStream;
use crate::http::{self, RetryPolicy};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::grammar_tools;
use crate::providers::openai_completions::max_tokens;
use crate::providers::openai_responses::{convert_messages, convert_tools, Describe};
use crate::providers::{apply_payload_hook, cache_retention, compat_bool, model_headers};
use crate::stream_driver::{error_stream, spawn_provider, ABORT_MESSAGE};

use crate::thinking::{effective_reasoning, level_mapping, mapped_effort, LevelMapping};
use crate::types::{Context, Model, ThinkingLevel};
pub use sessions::close_sessions;

const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
const MIN_OUTPUT_TOKENS: u64 = 16;
const JWT_CLAIM_PATH: &str = "https://api.openai.com/auth";

/// `<base>/codex/responses`, whether the base already ends in `/codex` or names the endpoint.
pub fn endpoint(base_url: &str) -> String {
    let raw = if base_url.trim().is_empty() {
        DEFAULT_BASE_URL
    } else {
        base_url
    };
    let base = raw.trim_end_matches('/');
    if base.ends_with("/codex/responses") {
        base.to_string()
    } else if base.ends_with("/codex") {
        format!("{base}/responses")
    } else {
        format!("{base}/codex/responses")
    }
}

/// The WebSocket URL of the endpoint: `<base>/codex/responses` with `ws:`/`wss:`.
pub fn websocket_endpoint(base_url: &str) -> String {
    let http = endpoint(base_url);
    if let Some(rest) = http.strip_prefix("https:") {
        format!("wss:{rest}")
    } else if let Some(rest) = http.strip_prefix("http:") {
        format!("ws:{rest}")
    } else {
        http
    }
}

/// The ChatGPT account id in a sign-in token's `https://api.openai.com/auth` claim.
pub fn account_id(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .or_else(|_| URL_SAFE.decode(payload))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    let id = claims.get(JWT_CLAIM_PATH)?.get("chatgpt_account_id")?.as_str()?;
    (!id.is_empty()).then(|| id.to_string())
}

/// The session id as the prompt cache key (at most 64 characters), unless caching is off.
fn cache_key(options: &StreamOptions) -> Option<&str> {
    if cache_retention(options) == CacheRetention::None {
        return None;
    }
    let session = options.session_id.as_deref()?;
    Some(match session.char_indices().nth(64) {
        Some((at, _)) => &session[..at],
        None => session,
    })
}

/// The request body, field for field as pi 1.6 sends it.
pub fn request_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(true));
    body.insert("input".into(), Value::Array(convert_messages(model, context)));
    body.insert("text".into(), json!({"verbosity": "low"}));
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(key) = cache_key(options) {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    body.insert("tool_choice".into(), json!("auto"));
    body.insert("parallel_tool_calls".into(), json!(true));
    let max = max_tokens(model, context, options);
    if max > 0 && compat_bool(model, "supportsMaxOutputTokens").unwrap_or(true) {
        body.insert("max_output_tokens".into(), json!(max.max(MIN_OUTPUT_TOKENS)));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), crate::providers::js_number(t));
    }
    if !context.tools.is_empty() {
        // pi 1.6 writes its unset strictness as `strict: null`.
        let tools = convert_tools(&context.tools, false, grammar_tools::supported(model))
            .into_iter()
            .map(|mut tool| {
                // Custom (grammar) tools have no strictness.
                if let Some(t) = tool
                    .as_object_mut()
                    .filter(|t| t.get("type") == Some(&json!("function")))
                {
                    t.insert("strict".into(), Value::Null);
                }
                tool
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning {
        let effort = match effective_reasoning(model, options.reasoning) {
            Some(level) => Some(mapped_effort(model, level)),
            None => match level_mapping(model, ThinkingLevel::Off) {
                LevelMapping::Removed => None,
                LevelMapping::Value(v) => Some(v.to_string()),
                LevelMapping::Absent => Some("none".to_string()),
            },
        };
        if let Some(effort) = effort {
            body.insert("reasoning".into(), json!({"effort": effort, "summary": "auto"}));
        }
    }
    apply_payload_hook(options, model, Value::Object(body))
}

/// The headers both transports share: `originator` and the user agent first (a model's or the
/// caller's headers may replace them), then the bearer token and the account.
fn base_headers(model: &Model, options: &StreamOptions, token: &str, account: &str) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = vec![
        ("originator".into(), "pi".into()),
        ("user-agent".into(), http::user_agent().to_string()),
    ];
    for (k, v) in model_headers(model).into_iter().chain(options.headers.iter().cloned()) {
        set_header(&mut headers, &k, v);
    }
    set_header(&mut headers, "authorization", format!("Bearer {token}"));
    set_header(&mut headers, "chatgpt-account-id", account.to_string());
    headers
}

fn set_header(headers: &mut Vec<(String, String)>, name: &str, value: String) {
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    headers.push((name.to_string(), value));
}

/// The SSE request's headers: the shared ones, then the SSE and session headers (the HTTP
/// layer adds `content-type`).
pub fn request_headers(model: &Model, options: &StreamOptions, token: &str, account: &str) -> Vec<(String, String)> {
    let mut headers = base_headers(model, options, token, account);
    set_header(&mut headers, "openai-beta", "responses=experimental".into());
    set_header(&mut headers, "accept", "text/event-stream".into());
    if let Some(session) = cache_key(options) {
        set_header(&mut headers, "session-id", session.to_string());
        set_header(&mut headers, "x-client-request-id", session.to_string());
    }
    headers
}

/// The WebSocket upgrade's headers: the shared ones, the WebSocket beta, and a request id
/// (the session, or a fresh id when caching is off) as the session headers.
pub fn websocket_headers(model: &Model, options: &StreamOptions, token: &str, account: &str) -> Vec<(String, String)> {
    let mut headers = base_headers(model, options, token, account);
    headers.retain(|(k, _)| {
        !["accept", "content-type", "openai-beta"]
            .iter()
            .any(|n| k.eq_ignore_ascii_case(n))
    });
    let request_id = cache_key(options)
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    set_header(&mut headers, "openai-beta", "responses_websockets=2026-02-06".into());
    set_header(&mut headers, "x-client-request-id", request_id.clone());
    set_header(&mut headers, "session-id", request_id);
    headers
}

/// Stream a response. `api_key` is the ChatGPT sign-in's access token.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let Some(account) = account_id(&api_key) else {
        return error_stream(model, "Failed to extract accountId from token".to_string());
    };
    if let Err(e) = grammar_tools::check(model, &context.tools) {
        return error_stream(model, e);
    }
    let request = transport::CodexRequest {
        sse_url: endpoint(&model.base_url),
        ws_url: websocket_endpoint(&model.base_url),
        sse_headers: request_headers(model, &options, &api_key, &account),
        ws_headers: websocket_headers(model, &options, &api_key, &account),
        body: request_body(model, context, &options),
        session: cache_key(&options).map(str::to_string),
        account,
        transport: options.transport,
        connect_timeout: transport::CodexRequest::connect_timeout(&options),
        idle_timeout: options
            .timeout_ms
            .filter(|ms| *ms > 0)
            .map(std::time::Duration::from_millis),
        policy: RetryPolicy::from_options(&options),
        describe: std::sync::Arc::new(describe_http_error) as Describe,
        grammar: grammar_tools::inputs(model, &context.tools),
    };
    let owned_model = model.clone();
    spawn_provider(model, options.cancel.clone(), ABORT_MESSAGE, move |em| {
        Box::pin(async move { transport::run(em, &owned_model, request).await })
    })
}

/// An HTTP failure in pi 1.6's words: the server's `error.message`, or for a usage or rate
/// limit a sentence naming the plan and when it resets.
pub fn describe_http_error(error: &http::HttpError) -> String {
    let http::HttpError::Status { status, body } = error else {
        return error.to_string();
    };
    let raw = if body.is_empty() {
        "Request failed".to_string()
    } else {
        body.clone()
    };
    let Some(err) = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").cloned())
    else {
        return raw;
    };
    if err.is_null() || err == Value::Bool(false) {
        return raw;
    }
    let code = ["code", "type"]
        .iter()
        .find_map(|k| err.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    let limited = ["usage_limit_reached", "usage_not_included", "rate_limit_exceeded"]
        .iter()
        .any(|c| code.contains(c));
    let friendly = (limited || *status == 429).then(|| {
        let plan = err
            .get("plan_type")
            .and_then(Value::as_str)
            .map(|p| format!(" ({} plan)", p.to_lowercase()))
            .unwrap_or_default();
        let when = err.get("resets_at").and_then(Value::as_f64).map(|at| {
            let mins = ((at * 1000.0 - crate::now_ms() as f64) / 60_000.0).round().max(0.0);
            format!(" Try again in ~{mins} min.")
        });
        format!(
            "You have hit your ChatGPT usage limit{plan}.{}",
            when.unwrap_or_default()
        )
        .trim()
        .to_string()
    });
    friendly
        .or_else(|| {
            err.get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_string)
        })
        .unwrap_or(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_and_account_ids() {
        assert_eq!(endpoint(""), "https://chatgpt.com/backend-api/codex/responses");
        assert_eq!(endpoint("http://h/x/"), "http://h/x/codex/responses");
        assert_eq!(endpoint("http://h/codex"), "http://h/codex/responses");
        assert_eq!(endpoint("http://h/codex/responses"), "http://h/codex/responses");
        assert_eq!(websocket_endpoint(""), "wss://chatgpt.com/backend-api/codex/responses");
        assert_eq!(websocket_endpoint("http://h:1/x"), "ws://h:1/x/codex/responses");
        let payload = URL_SAFE_NO_PAD.encode(br#"{"https://api.openai.com/auth":{"chatgpt_account_id":"acc-9"}}"#);
        assert_eq!(account_id(&format!("h.{payload}.s")).as_deref(), Some("acc-9"));
        assert_eq!(account_id("sk-plain"), None);
    }
}
