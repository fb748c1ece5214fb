//! The `pi-messages` API (the Radius gateway's protocol, open to any backend): pi's own
//! conversation goes out as one `POST <baseUrl>/messages` of `{model, context, options}`, and
//! pi's own assistant-message events come back as SSE, ending in `done` or `error`.
//!
//! The context is sent as pi 1.6 writes it: the system prompt and the tool declarations as a
//! leading `system` message (`toolsAdded`), then the messages unchanged. Events are checked
//! before they touch the message: a content index must name the next block (for a start) or an
//! existing one. A failure that is not the backend's own `error` event drops what had streamed,
//! as pi does.

use serde_json::{json, Map, Value};

use crate::events::AssistantStream;
use crate::http::{self, HttpError, RetryPolicy};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::{apply_payload_hook, model_headers, post_body};
use crate::sse::{SseError, SseStream};
use crate::stream_driver::{spawn_provider, Emitter, ProviderError, ABORT_MESSAGE};
use crate::types::{Context, Model, StopReason, Usage};

/// Stream a reply. `api_key` must already be resolved.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let body = request_body(model, context, &options);
    let url = format!("{}/messages", model.base_url.trim_end_matches('/'));
    let mut headers = vec![
        ("user-agent".to_string(), http::user_agent().to_string()),
        ("authorization".to_string(), format!("Bearer {api_key}")),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    headers.extend(model_headers(model));
    headers.extend(options.headers.iter().cloned());
    let headers = match http::header_map(&headers) {
        Ok(h) => h,
        Err(e) => return crate::stream_driver::error_stream(model, e),
    };
    // pi sends this with plain `fetch`: no retries at this layer.
    let policy = RetryPolicy {
        max_retries: 0,
        ..RetryPolicy::from_options(&options)
    };
    let owned_model = model.clone();
    spawn_provider(model, options.cancel.clone(), ABORT_MESSAGE, move |em| {
        Box::pin(async move {
            let result = match post_body(&url, headers, body, policy, describe_http_error).await {
                Ok(response) => read_stream(em, &owned_model, response).await,
                Err(e) => Err(e),
            };
            if let Err(ProviderError::Message(_)) = &result {
                // The backend did not end the turn itself: nothing of it is kept.
                em.output.content.clear();
                em.output.usage = Usage::default();
                em.output.response_id = None;
            }
            result
        })
    })
}

/// `<status> <reason>: <error.message or the body>[ (<error.code>)]`.
fn describe_http_error(error: &HttpError) -> String {
    let HttpError::Status { status, body } = error else {
        return match error {
            HttpError::Connection { .. } => "fetch failed".to_string(),
            other => other.to_string(),
        };
    };
    let reason = reqwest::StatusCode::from_u16(*status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let error_object = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").cloned())
        .filter(Value::is_object);
    let field = |name: &str| {
        error_object
            .as_ref()
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let message = field("message").unwrap_or_else(|| body.clone());
    let code = field("code").map(|c| format!(" ({c})")).unwrap_or_default();
    format!("{status} {reason}: {message}{code}")
}

/// The body `stream` sends (after the `on_payload` hook).
pub fn request_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut messages = Vec::with_capacity(context.messages.len() + 1);
    if context.system_prompt.is_some() || !context.tools.is_empty() {
        let mut system = Map::new();
        system.insert("role".into(), json!("system"));
        system.insert("content".into(), json!(context.system_prompt.as_deref().unwrap_or("")));
        if !context.tools.is_empty() {
            system.insert("toolsAdded".into(), json!(context.tools));
        }
        system.insert("timestamp".into(), json!(0));
        messages.push(Value::Object(system));
    }
    for message in &context.messages {
        messages.push(serde_json::to_value(message).unwrap_or(Value::Null));
    }
    let mut opts = Map::new();
    if let Some(t) = options.temperature {
        opts.insert("temperature".into(), crate::providers::js_number(t));
    }
    if let Some(max) = options.max_tokens {
        opts.insert("maxTokens".into(), json!(max));
    }
    if let Some(level) = options.reasoning {
        opts.insert("reasoning".into(), json!(level.as_str()));
    }
    if let Some(retention) = cache_retention(options) {
        opts.insert("cacheRetention".into(), json!(retention));
    }
    if let Some(session) = &options.session_id {
        opts.insert("sessionId".into(), json!(session));
    }
    let body = json!({"model": model.id, "context": {"messages": messages}, "options": opts});
    apply_payload_hook(options, model, body)
}

/// The retention the caller chose. The default (`short`) is left to the backend, unless
/// `PI_CACHE_RETENTION=long` asks for long.
fn cache_retention(options: &StreamOptions) -> Option<&'static str> {
    match options.cache_retention {
        CacheRetention::None => Some("none"),
        CacheRetention::Long => Some("long"),
        CacheRetention::Short => std::env::var("PI_CACHE_RETENTION")
            .is_ok_and(|v| v == "long")
            .then_some("long"),
    }
}

fn invalid_index(event: &Value, kind: &str) -> ProviderError {
    let index = event.get("contentIndex").cloned().unwrap_or(Value::Null);
    ProviderError::Message(format!("Invalid contentIndex {index} in pi-messages {kind} event"))
}

/// The event's content index, checked against the message: a start must name the next block,
/// anything else an existing one.
fn checked_index(em: &Emitter, event: &Value, kind: &str) -> Result<Option<usize>, ProviderError> {
    let Some(raw) = event.get("contentIndex") else {
        return Ok(None);
    };
    let len = em.output.content.len();
    let index = raw
        .as_u64()
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| invalid_index(event, kind))?;
    let valid = if kind.ends_with("_start") {
        index == len
    } else {
        index < len
    };
    if valid {
        Ok(Some(index))
    } else {
        Err(invalid_index(event, kind))
    }
}

fn text_of(event: &Value, key: &str) -> Option<String> {
    event.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Copy the end state of a turn (`done` or `error`) onto the message.
fn finish(em: &mut Emitter, event: &Value) -> Result<(), ProviderError> {
    let reason: StopReason =
        serde_json::from_value(event.get("reason").cloned().unwrap_or(Value::Null)).unwrap_or(StopReason::Error);
    em.output.stop_reason = reason;
    if let Some(usage) = event.get("usage") {
        em.output.usage = serde_json::from_value(usage.clone()).unwrap_or_default();
    }
    em.output.response_id = text_of(event, "responseId");
    if let Some(m) = text_of(event, "responseModel") {
        em.output.response_model = Some(m);
    }
    if let Some(message) = text_of(event, "errorMessage") {
        em.output.error_message = Some(message);
    }
    Ok(())
}

async fn read_stream(em: &mut Emitter, model: &Model, response: reqwest::Response) -> Result<(), ProviderError> {
    let mut sse = SseStream::new(response.bytes_stream());
    loop {
        let raw = match sse.next_event().await {
            Ok(Some(e)) => e,
            Ok(None) => break,
            Err(SseError::Transport(_)) => return Err("terminated".into()),
            Err(e) => return Err(e.to_string().into()),
        };
        let data = raw.data.trim();
        if data.is_empty() || data == "[DONE]" {
            continue;
        }
        let event: Value = serde_json::from_str(data).map_err(|e| ProviderError::Message(e.to_string()))?;
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let index = checked_index(em, &event, &kind)?;
        match (kind.as_str(), index) {
            ("done" | "error", _) => return finish(em, &event),
            ("start", _) => em.start().await?,
            ("text_start", Some(_)) => {
                em.text_start().await?;
            }
            ("text_delta", Some(i)) => em.text_delta(i, &text_of(&event, "delta").unwrap_or_default()).await?,
            ("text_end", Some(i)) => {
                if let Some(block) = em.text_block(i) {
                    if let Some(text) = text_of(&event, "content") {
                        block.text = text;
                    }
                    block.text_signature = text_of(&event, "contentSignature");
                }
                em.text_end(i).await?;
            }
            ("thinking_start", Some(_)) => {
                em.thinking_start(None).await?;
            }
            ("thinking_delta", Some(i)) => {
                em.thinking_delta(i, &text_of(&event, "delta").unwrap_or_default())
                    .await?;
            }
            ("thinking_end", Some(i)) => {
                if let Some(block) = em.thinking_block(i) {
                    if let Some(text) = text_of(&event, "content") {
                        block.thinking = text;
                    }
                    block.thinking_signature = text_of(&event, "contentSignature");
                    block.redacted = event.get("redacted").and_then(Value::as_bool);
                }
                em.thinking_end(i).await?;
            }
            ("toolcall_start", Some(_)) => {
                let id = text_of(&event, "id").unwrap_or_default();
                let name = text_of(&event, "toolName").unwrap_or_default();
                em.tool_call_start(&id, &name).await?;
            }
            ("toolcall_delta", Some(i)) => {
                em.tool_call_delta(i, &text_of(&event, "delta").unwrap_or_default())
                    .await?;
            }
            ("toolcall_end", Some(i)) => {
                if let Some(call) = event.get("toolCall") {
                    if let Some(args) = call.get("arguments") {
                        em.set_tool_call_raw_args(i, args.to_string());
                    }
                    if let Some(block) = em.tool_call(i) {
                        if let Some(id) = text_of(call, "id") {
                            block.id = id;
                        }
                        if let Some(name) = text_of(call, "name") {
                            block.name = name;
                        }
                        if let Some(sig) = text_of(call, "thoughtSignature") {
                            block.thought_signature = Some(sig);
                        }
                    }
                }
                em.tool_call_end(i).await?;
            }
            // Events of a block that is not of that kind, or unknown events, change nothing.
            _ => {}
        }
    }
    Err(format!("{} stream ended without a terminal event", model.provider).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_errors_carry_the_error_message_and_code() {
        let status = |status, body: &str| {
            describe_http_error(&HttpError::Status {
                status,
                body: body.into(),
            })
        };
        assert_eq!(
            status(429, r#"{"error":{"message":"slow down","code":"rate_limited"}}"#),
            "429 Too Many Requests: slow down (rate_limited)"
        );
        assert_eq!(status(500, "oops"), "500 Internal Server Error: oops");
    }
}
