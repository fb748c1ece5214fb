//! The `mistral-conversations` API: Mistral's native Chat Completions stream
//! (`POST <baseUrl>/v1/chat/completions`), body and headers as pi 1.6 sends them.
//!
//! It looks like OpenAI's Chat Completions but differs in the details that matter: snake_case
//! fields appended after the camelCase ones pi builds (so key order follows that), tool-call ids
//! of exactly nine letters and digits, thinking as typed content chunks, `prompt_mode` or
//! `reasoning_effort` for reasoning, `x-affinity` for prompt caching, no provider-level retries
//! and a timeout that covers the response headers only.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::events::AssistantStream;
use crate::http::{self, HttpError, RetryPolicy};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::{apply_payload_hook, cache_retention, model_headers, output_cap, post_body};
use crate::sse::{SseError, SseStream};
use crate::stream_driver::{error_stream, spawn_provider, Emitter, ProviderError, ABORT_MESSAGE};
use crate::thinking::clamp_thinking_level;
use crate::transform::{short_hash, transform_messages};
use crate::types::{AssistantMessage, Content, Context, Message, Model, StopReason, ThinkingLevel, Usage, UserContent};

/// Mistral accepts tool-call ids of exactly this many `[A-Za-z0-9]` characters.
const TOOL_CALL_ID_LENGTH: usize = 9;
/// Error bodies are cut to this many characters.
const MAX_ERROR_BODY_CHARS: usize = 4000;
/// Time allowed for the response headers when the caller sets no timeout.
const DEFAULT_HEADER_TIMEOUT_MS: u64 = 60_000;

/// Stream a reply. `api_key` must already be resolved.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let body = request_body(model, context, &options);
    let headers = match http::header_map(&request_headers(model, &options, &api_key)) {
        Ok(h) => h,
        Err(e) => return error_stream(model, e),
    };
    let url = endpoint(&model.base_url);
    let timeout_ms = options.timeout_ms.unwrap_or(DEFAULT_HEADER_TIMEOUT_MS);
    // pi calls Mistral with plain `fetch`: no retries at this layer.
    let policy = RetryPolicy {
        max_retries: 0,
        timeout: Some(std::time::Duration::from_millis(timeout_ms)),
        ..RetryPolicy::from_options(&options)
    };
    let owned_model = model.clone();
    spawn_provider(model, options.cancel.clone(), ABORT_MESSAGE, move |em| {
        Box::pin(async move {
            let response = post_body(&url, headers, body, policy, |e| describe_http_error(e, timeout_ms)).await?;
            read_stream(em, &owned_model, response).await
        })
    })
}

/// `<baseUrl>/v1/chat/completions` (the base URL holds no `/v1`).
fn endpoint(base_url: &str) -> String {
    format!("{}/v1/chat/completions", base_url.trim_end_matches('/'))
}

fn describe_http_error(error: &HttpError, timeout_ms: u64) -> String {
    match error {
        HttpError::Status { status, body } => {
            let body = body.trim();
            if body.is_empty() {
                let reason = reqwest::StatusCode::from_u16(*status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .map_or_else(|| format!("Request failed with status {status}"), str::to_string);
                format!("Mistral API error ({status}): {reason}")
            } else {
                format!(
                    "Mistral API error ({status}): {}",
                    truncate_chars(body, MAX_ERROR_BODY_CHARS)
                )
            }
        }
        HttpError::Timeout => format!("Mistral response headers timed out after {timeout_ms}ms"),
        HttpError::Connection { .. } => "fetch failed".to_string(),
    }
}

fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}... [truncated {} chars]", &text[..cut], text.chars().count() - max),
        None => text.to_string(),
    }
}

/// The request headers: identity, then the model's headers, then the caller's, then
/// `x-affinity` for prompt caching unless one of those set it. (`content-type` is added by the
/// HTTP layer.)
pub fn request_headers(model: &Model, options: &StreamOptions, api_key: &str) -> Vec<(String, String)> {
    let mut headers = vec![
        ("user-agent".to_string(), http::user_agent().to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
        ("authorization".to_string(), format!("Bearer {api_key}")),
    ];
    headers.extend(model_headers(model));
    headers.extend(options.headers.iter().cloned());
    let explicit_affinity = headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("x-affinity"));
    if let Some(session) = caching_session(options).filter(|_| !explicit_affinity) {
        headers.push(("x-affinity".to_string(), session.to_string()));
    }
    headers
}

/// The session id that keys prompt caching, unless caching is off.
fn caching_session(options: &StreamOptions) -> Option<&str> {
    options
        .session_id
        .as_deref()
        .filter(|s| !s.is_empty() && cache_retention(options) != CacheRetention::None)
}

/// The body `stream` sends (after the `on_payload` hook).
pub fn request_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let supports_images = model.supports_images();
    let normalizer = ToolCallIds::default();
    let normalize = |id: &str, _: &AssistantMessage| normalizer.normalize(id);
    let transformed = transform_messages(&context.messages, model, &normalize);

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("stream".into(), json!(true));
    let mut messages = Vec::with_capacity(transformed.len() + 1);
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &transformed {
        if let Some(m) = convert_message(message, supports_images) {
            messages.push(m);
        }
    }
    body.insert("messages".into(), Value::Array(messages));
    if !context.tools.is_empty() {
        let tools = context
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    // Strict schemas are opt-in per tool; none of ours asks for them.
                    "strict": false,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), crate::providers::js_number(t));
    }
    let max_tokens = output_cap::base_max_tokens(model, context, options.max_tokens);
    if max_tokens > 0 {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    let (effort, prompt_mode) = reasoning_fields(model, options.reasoning);
    if let Some(effort) = effort {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    if let Some(mode) = prompt_mode {
        body.insert("prompt_mode".into(), json!(mode));
    }
    if let Some(session) = caching_session(options) {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    apply_payload_hook(options, model, Value::Object(body))
}

/// `reasoning_effort` for models with a thinking-level map, `prompt_mode: "reasoning"` for other
/// reasoning models when thinking is on.
fn reasoning_fields(model: &Model, requested: Option<ThinkingLevel>) -> (Option<String>, Option<&'static str>) {
    let level = requested
        .map(|l| clamp_thinking_level(model, l))
        .filter(|l| *l != ThinkingLevel::Off);
    let map = model.thinking_level_map.as_ref().filter(|_| model.reasoning);
    match map {
        Some(map) => {
            let effort = match level {
                Some(level) => Some(
                    map.get(level.as_str())
                        .and_then(Value::as_str)
                        .unwrap_or("high")
                        .to_string(),
                ),
                None => map.get("off").and_then(Value::as_str).map(str::to_string),
            };
            (effort, None)
        }
        None => (None, (model.reasoning && level.is_some()).then_some("reasoning")),
    }
}

fn data_url(image: &crate::types::ImageContent) -> String {
    format!("data:{};base64,{}", image.mime_type, image.data)
}

fn convert_message(message: &Message, supports_images: bool) -> Option<Value> {
    match message {
        Message::User(user) => match &user.content {
            UserContent::Text(text) => Some(json!({"role": "user", "content": text})),
            UserContent::Blocks(blocks) => {
                let had_images = blocks.iter().any(|b| matches!(b, Content::Image(_)));
                let content: Vec<Value> = blocks
                    .iter()
                    .filter_map(|block| match block {
                        Content::Text(t) => Some(json!({"type": "text", "text": t.text})),
                        Content::Image(image) if supports_images => {
                            Some(json!({"type": "image_url", "image_url": data_url(image)}))
                        }
                        _ => None,
                    })
                    .collect();
                if !content.is_empty() {
                    Some(json!({"role": "user", "content": content}))
                } else if had_images && !supports_images {
                    Some(json!({"role": "user", "content": crate::transform::USER_IMAGE_PLACEHOLDER}))
                } else {
                    None
                }
            }
        },
        Message::Assistant(assistant) => {
            let mut parts = Vec::new();
            let mut calls = Vec::new();
            for block in &assistant.content {
                match block {
                    Content::Text(t) if !t.text.trim().is_empty() => {
                        parts.push(json!({"type": "text", "text": t.text}))
                    }
                    Content::Thinking(t) if !t.thinking.trim().is_empty() => parts.push(json!({
                        "type": "thinking",
                        "thinking": [{"type": "text", "text": t.thinking}],
                    })),
                    Content::ToolCall(call) => calls.push(json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": arguments_text(&call.arguments)},
                        "index": 0,
                    })),
                    _ => {}
                }
            }
            if parts.is_empty() && calls.is_empty() {
                return None;
            }
            let mut out = Map::new();
            out.insert("role".into(), json!("assistant"));
            out.insert("prefix".into(), json!(false));
            if !parts.is_empty() {
                out.insert("content".into(), Value::Array(parts));
            }
            if !calls.is_empty() {
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Some(Value::Object(out))
        }
        Message::ToolResult(result) => {
            let text = result
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            let has_images = result.content.iter().any(|c| matches!(c, Content::Image(_)));
            let mut content = vec![
                json!({"type": "text", "text": tool_result_text(&text, has_images, supports_images, result.is_error)}),
            ];
            if supports_images {
                for part in &result.content {
                    if let Content::Image(image) = part {
                        content.push(json!({"type": "image_url", "image_url": data_url(image)}));
                    }
                }
            }
            Some(json!({
                "role": "tool",
                "name": result.tool_name,
                "content": content,
                "tool_call_id": result.tool_call_id,
            }))
        }
    }
}

/// `JSON.stringify(arguments || {})`.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::Null | Value::Bool(false) => "{}".to_string(),
        Value::String(s) if s.is_empty() => "{}".to_string(),
        other => other.to_string(),
    }
}

fn tool_result_text(text: &str, has_images: bool, supports_images: bool, is_error: bool) -> String {
    let prefix = if is_error { "[tool error] " } else { "" };
    let trimmed = text.trim();
    if !trimmed.is_empty() {
        let suffix = if has_images && !supports_images {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        return format!("{prefix}{trimmed}{suffix}");
    }
    let body = match (has_images, supports_images) {
        (true, true) => "(see attached image)",
        (true, false) => crate::transform::USER_IMAGE_PLACEHOLDER,
        (false, _) => "(no tool output)",
    };
    format!("{prefix}{body}")
}

/// Tool-call ids from other models, mapped to nine-character ids without collisions.
#[derive(Default)]
struct ToolCallIds {
    forward: RefCell<HashMap<String, String>>,
    owners: RefCell<HashMap<String, String>>,
}

impl ToolCallIds {
    fn normalize(&self, id: &str) -> String {
        if let Some(known) = self.forward.borrow().get(id) {
            return known.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive_tool_call_id(id, attempt);
            let taken = self.owners.borrow().get(&candidate).is_some_and(|owner| owner != id);
            if !taken {
                self.forward.borrow_mut().insert(id.to_string(), candidate.clone());
                self.owners.borrow_mut().insert(candidate.clone(), id.to_string());
                return candidate;
            }
            attempt += 1;
        }
    }
}

/// An id of nine letters and digits: the id itself when it already is one, else a hash of it.
fn derive_tool_call_id(id: &str, attempt: u32) -> String {
    let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && normalized.chars().count() == TOOL_CALL_ID_LENGTH {
        return normalized;
    }
    let seed_base = if normalized.is_empty() { id } else { normalized.as_str() };
    let seed = if attempt == 0 {
        seed_base.to_string()
    } else {
        format!("{seed_base}:{attempt}")
    };
    short_hash(&seed)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(TOOL_CALL_ID_LENGTH)
        .collect()
}

/// A finish reason as a stop reason, with the error text of failures.
pub fn map_finish_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" => (StopReason::Stop, None),
        "length" | "model_length" => (StopReason::Length, None),
        "tool_calls" => (StopReason::ToolUse, None),
        // "server error" makes the failure retryable for the agent.
        "error" => (
            StopReason::Error,
            Some("Provider stopped with: error (server error)".to_string()),
        ),
        other => (StopReason::Error, Some(format!("Provider stopped with: {other}"))),
    }
}

/// Usage from a chunk: cached prompt tokens (under any of the spellings Mistral uses) are
/// reported as cache reads and left out of `input`.
pub fn parse_usage(raw: &Value, model: &Model) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let prompt = n(raw.get("prompt_tokens"));
    let nested = |outer: &str, inner: &str| raw.get(outer).and_then(|d| d.get(inner)).and_then(Value::as_u64);
    let cached = nested("promptTokensDetails", "cachedTokens")
        .or_else(|| nested("prompt_tokens_details", "cached_tokens"))
        .or_else(|| nested("promptTokenDetails", "cachedTokens"))
        .or_else(|| nested("prompt_token_details", "cached_tokens"))
        .or_else(|| raw.get("numCachedTokens").and_then(Value::as_u64))
        .or_else(|| raw.get("num_cached_tokens").and_then(Value::as_u64))
        .unwrap_or(0)
        .min(prompt);
    let input = prompt - cached;
    let output = n(raw.get("completion_tokens"));
    let total = match n(raw.get("total_tokens")) {
        0 => input + output + cached,
        t => t,
    };
    let mut usage = Usage {
        input,
        output,
        cache_read: cached,
        cache_write: 0,
        total_tokens: total,
        ..Default::default()
    };
    crate::cost::calculate_cost(model, &mut usage);
    usage
}

/// The open text or thinking block.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    Text(usize),
    Thinking(usize),
}

async fn close(em: &mut Emitter, open: Option<Open>) -> Result<(), ProviderError> {
    match open {
        Some(Open::Text(i)) => em.text_end(i).await,
        Some(Open::Thinking(i)) => em.thinking_end(i).await,
        None => Ok(()),
    }
}

async fn read_stream(em: &mut Emitter, model: &Model, response: reqwest::Response) -> Result<(), ProviderError> {
    em.start().await?;
    let mut sse = SseStream::new(response.bytes_stream());
    let mut open: Option<Open> = None;
    // Tool calls by stream index (or id), in the order they opened: (key, content index).
    let mut calls: Vec<(String, usize)> = Vec::new();
    let mut finished = false;
    loop {
        let event = match sse.next_event().await {
            Ok(Some(e)) => e,
            Ok(None) => break,
            Err(SseError::Transport(_)) => return Err("terminated".into()),
            Err(e) => return Err(e.to_string().into()),
        };
        let data = event.data.trim();
        if data.is_empty() {
            continue;
        }
        if data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| ProviderError::Message(e.to_string()))?;
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Err("Invalid Mistral streaming event".into());
        };
        if em.output.response_id.is_none() {
            if let Some(id) = chunk.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                em.output.response_id = Some(id.to_string());
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            em.output.usage = parse_usage(usage, model);
        }
        let Some(choice) = choices.first() else { continue };
        if let Some(reason) = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
        {
            finished = true;
            let (stop, message) = map_finish_reason(reason);
            em.output.stop_reason = stop;
            em.output.raw_stop_reason = Some(reason.to_string());
            if message.is_some() {
                em.output.error_message = message;
            }
        }
        let Some(delta) = choice.get("delta") else { continue };
        match delta.get("content") {
            Some(Value::String(text)) => open = append_text(em, open, text).await?,
            Some(Value::Array(items)) => {
                for item in items {
                    open = match item {
                        Value::String(text) => append_text(em, open, text).await?,
                        _ => match item.get("type").and_then(Value::as_str) {
                            Some("thinking") => {
                                let text: String = item
                                    .get("thinking")
                                    .and_then(Value::as_array)
                                    .into_iter()
                                    .flatten()
                                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                                    .collect();
                                append_thinking(em, open, &text).await?
                            }
                            Some("text") => {
                                let text = item.get("text").and_then(Value::as_str).unwrap_or("");
                                append_text(em, open, text).await?
                            }
                            _ => open,
                        },
                    };
                }
            }
            _ => {}
        }
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            close(em, open.take()).await?;
            let index = call.get("index").and_then(Value::as_u64);
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty() && *id != "null")
                .map_or_else(
                    || derive_tool_call_id(&format!("toolcall:{}", index.unwrap_or(0)), 0),
                    str::to_string,
                );
            let key = index.map_or_else(|| id.clone(), |i| format!("#{i}"));
            let function = call.get("function");
            let content_index = match calls.iter().find(|(k, _)| *k == key) {
                Some((_, i)) => *i,
                None => {
                    let name = function
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let i = em.tool_call_start(&id, name).await?;
                    calls.push((key, i));
                    i
                }
            };
            let args = match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(s)) => s.clone(),
                Some(v) if !v.is_null() => v.to_string(),
                _ => "{}".to_string(),
            };
            em.tool_call_delta(content_index, &args).await?;
        }
    }
    close(em, open).await?;
    for (_, index) in &calls {
        em.tool_call_end(*index).await?;
    }
    if !finished {
        return Err("Mistral stream ended without a finish reason".into());
    }
    Ok(())
}

async fn append_text(em: &mut Emitter, open: Option<Open>, text: &str) -> Result<Option<Open>, ProviderError> {
    // Empty deltas arrive around thinking and tool calls; a block opened for one would split
    // the thinking, which Mistral rejects on replay.
    if text.is_empty() {
        return Ok(open);
    }
    let index = match open {
        Some(Open::Text(i)) => i,
        other => {
            close(em, other).await?;
            em.text_start().await?
        }
    };
    em.text_delta(index, text).await?;
    Ok(Some(Open::Text(index)))
}

async fn append_thinking(em: &mut Emitter, open: Option<Open>, text: &str) -> Result<Option<Open>, ProviderError> {
    if text.is_empty() {
        return Ok(open);
    }
    let index = match open {
        Some(Open::Thinking(i)) => i,
        other => {
            close(em, other).await?;
            em.thinking_start(None).await?
        }
    };
    em.thinking_delta(index, text).await?;
    Ok(Some(Open::Thinking(index)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_ids_are_nine_alphanumerics_without_collisions() {
        assert_eq!(derive_tool_call_id("abcdefghi", 0), "abcdefghi");
        assert_eq!(derive_tool_call_id("abc-def_ghi", 0), "abcdefghi");
        let ids = ToolCallIds::default();
        let a = ids.normalize("toolu_01/abc+x");
        assert_eq!(a.len(), TOOL_CALL_ID_LENGTH);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(ids.normalize("toolu_01/abc+x"), a, "stable per id");
        // Two ids that reduce to the same nine characters get different ones.
        let b = ids.normalize("abc-defghi");
        let c = ids.normalize("abcdefghi");
        assert_ne!(b, c);
    }

    #[test]
    fn finish_reasons_and_error_texts() {
        assert_eq!(map_finish_reason("model_length").0, StopReason::Length);
        assert_eq!(map_finish_reason("tool_calls").0, StopReason::ToolUse);
        assert_eq!(
            map_finish_reason("error").1.as_deref(),
            Some("Provider stopped with: error (server error)")
        );
        let status = |status, body: &str| {
            describe_http_error(
                &HttpError::Status {
                    status,
                    body: body.into(),
                },
                60_000,
            )
        };
        assert_eq!(status(500, " "), "Mistral API error (500): Internal Server Error");
        assert_eq!(status(429, "{\"m\":1}\n"), "Mistral API error (429): {\"m\":1}");
        assert!(status(400, &"x".repeat(5000)).ends_with("... [truncated 1000 chars]"));
        assert_eq!(
            describe_http_error(&HttpError::Timeout, 60_000),
            "Mistral response headers timed out after 60000ms"
        );
    }
}
