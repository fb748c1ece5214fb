//! The `google-generative-ai` API (Gemini REST, `streamGenerateContent?alt=sse`).
//!
//! Thought parts become thinking blocks, thought signatures are kept on text, thinking and
//! function calls and replayed only to the same model, tool results become `functionResponse`
//! parts (several merged into one user turn; Gemini 3 nests result images inside them), and
//! thinking is configured with `thinkingLevel` (Gemini 3, Gemma 4) or `thinkingBudget`.

use std::sync::atomic::{AtomicU64, Ordering};

use futures::{FutureExt, StreamExt};
use serde_json::{json, Map, Value};

use crate::cost::calculate_cost;
use crate::events::AssistantStream;
use crate::http::{self, HttpError, RetryPolicy};
use crate::options::StreamOptions;
use crate::providers::{apply_payload_hook, join_url, model_headers, post_body};
use crate::sse::SseStream;
use crate::stream_driver::{error_stream, spawn_provider, Emitter, ProviderError};
use crate::thinking::{clamp_thinking_level, effective_reasoning};
use crate::transform::{sanitize_surrogates, transform_messages};
use crate::types::{Content, Context, Message, Model, StopReason, ThinkingLevel, UserContent};

const ABORT_MESSAGE: &str = "Request was aborted";

/// Counter that makes generated tool-call ids unique within the process.
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

fn requires_tool_call_id(model_id: &str) -> bool {
    model_id.starts_with("claude-") || model_id.starts_with("gpt-oss-")
}

fn gemini_major_version(model_id: &str) -> Option<u32> {
    let id = model_id.to_ascii_lowercase();
    let rest = id.strip_prefix("gemini-live-").or_else(|| id.strip_prefix("gemini-"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Gemini 3 and non-Gemini models take images inside `functionResponse.parts`.
fn supports_multimodal_function_response(model_id: &str) -> bool {
    gemini_major_version(model_id).is_none_or(|v| v >= 3)
}

fn family(model_id: &str) -> Family {
    let id = model_id.to_ascii_lowercase();
    let after = |prefix: &str| -> Option<String> {
        let start = id.find(prefix)? + prefix.len();
        let rest = &id[start..];
        // Allow a minor version such as `3.1`.
        let rest = rest
            .strip_prefix('.')
            .map_or(rest, |r| r.trim_start_matches(|c: char| c.is_ascii_digit()));
        Some(rest.to_string())
    };
    if id.contains("gemma-4") || id.contains("gemma4") {
        return Family::Gemma4;
    }
    if let Some(rest) = after("gemini-3") {
        if rest.starts_with("-pro") {
            return Family::Gemini3Pro;
        }
        if rest.starts_with("-flash") {
            return Family::Gemini3Flash;
        }
    }
    Family::Other
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Gemini3Pro,
    Gemini3Flash,
    Gemma4,
    Other,
}

fn is_valid_signature(sig: &str) -> bool {
    !sig.is_empty()
        && sig.len().is_multiple_of(4)
        && sig.trim_end_matches('=').len() + 2 >= sig.len()
        && sig
            .trim_end_matches('=')
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '/')
}

fn replay_signature(same_model: bool, sig: Option<&String>) -> Option<String> {
    sig.filter(|s| same_model && is_valid_signature(s)).cloned()
}

fn thinking_config(model: &Model, options: &StreamOptions) -> Option<Value> {
    if !model.reasoning {
        return None;
    }
    let fam = family(&model.id);
    let Some(level) = effective_reasoning(model, options.reasoning) else {
        return Some(match fam {
            Family::Gemini3Pro => json!({"thinkingLevel": "LOW"}),
            Family::Gemini3Flash | Family::Gemma4 => json!({"thinkingLevel": "MINIMAL"}),
            Family::Other => json!({"thinkingBudget": 0}),
        });
    };
    let level = match clamp_thinking_level(model, level) {
        ThinkingLevel::Off | ThinkingLevel::Xhigh | ThinkingLevel::Max => ThinkingLevel::High,
        l => l,
    };
    let thinking_level = |l: ThinkingLevel| -> &'static str {
        match (fam, l) {
            (Family::Gemini3Pro, ThinkingLevel::Minimal | ThinkingLevel::Low) => "LOW",
            (Family::Gemini3Pro, _) => "HIGH",
            (Family::Gemma4, ThinkingLevel::Minimal | ThinkingLevel::Low) => "MINIMAL",
            (Family::Gemma4, _) => "HIGH",
            (_, ThinkingLevel::Minimal) => "MINIMAL",
            (_, ThinkingLevel::Low) => "LOW",
            (_, ThinkingLevel::Medium) => "MEDIUM",
            _ => "HIGH",
        }
    };
    Some(match fam {
        Family::Gemini3Pro | Family::Gemini3Flash | Family::Gemma4 => {
            json!({"includeThoughts": true, "thinkingLevel": thinking_level(level)})
        }
        Family::Other => json!({"includeThoughts": true, "thinkingBudget": budget(model, level, options)}),
    })
}

fn budget(model: &Model, level: ThinkingLevel, options: &StreamOptions) -> i64 {
    let b = &options.thinking_budgets;
    let custom = match level {
        ThinkingLevel::Minimal => b.minimal,
        ThinkingLevel::Low => b.low,
        ThinkingLevel::Medium => b.medium,
        _ => b.high,
    };
    if let Some(v) = custom {
        return i64::try_from(v).unwrap_or(i64::MAX);
    }
    let table: Option<[i64; 4]> = if model.id.contains("2.5-pro") {
        Some([128, 2048, 8192, 32768])
    } else if model.id.contains("2.5-flash-lite") {
        Some([512, 2048, 8192, 24576])
    } else if model.id.contains("2.5-flash") {
        Some([128, 2048, 8192, 24576])
    } else {
        None
    };
    let Some(t) = table else { return -1 };
    match level {
        ThinkingLevel::Minimal => t[0],
        ThinkingLevel::Low => t[1],
        ThinkingLevel::Medium => t[2],
        _ => t[3],
    }
}

fn convert_messages(model: &Model, context: &Context) -> Vec<Value> {
    let needs_id = requires_tool_call_id(&model.id);
    let normalize = |id: &str, _: &crate::types::AssistantMessage| -> String {
        if needs_id {
            id.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(64)
                .collect()
        } else {
            id.to_string()
        }
    };
    let transformed = transform_messages(&context.messages, model, &normalize);
    let mut contents: Vec<Value> = Vec::new();
    for msg in &transformed {
        match msg.as_ref() {
            Message::User(user) => {
                let parts: Vec<Value> = match &user.content {
                    UserContent::Text(t) => vec![json!({"text": sanitize_surrogates(t)})],
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            Content::Text(t) => Some(json!({"text": sanitize_surrogates(&t.text)})),
                            Content::Image(i) => Some(json!({"inlineData": {"mimeType": i.mime_type, "data": i.data}})),
                            _ => None,
                        })
                        .collect(),
                };
                if !parts.is_empty() {
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
            Message::Assistant(a) => {
                let same = a.provider == model.provider && a.model == model.id;
                let mut parts = Vec::new();
                for block in &a.content {
                    match block {
                        Content::Text(t) if !t.text.trim().is_empty() => {
                            let mut p = Map::new();
                            p.insert("text".into(), json!(sanitize_surrogates(&t.text)));
                            if let Some(sig) = replay_signature(same, t.text_signature.as_ref()) {
                                p.insert("thoughtSignature".into(), json!(sig));
                            }
                            parts.push(Value::Object(p));
                        }
                        Content::Thinking(t) if !t.thinking.trim().is_empty() => {
                            let mut p = Map::new();
                            if same {
                                p.insert("thought".into(), json!(true));
                            }
                            p.insert("text".into(), json!(sanitize_surrogates(&t.thinking)));
                            if let Some(sig) = replay_signature(same, t.thinking_signature.as_ref()) {
                                p.insert("thoughtSignature".into(), json!(sig));
                            }
                            parts.push(Value::Object(p));
                        }
                        Content::ToolCall(tc) => {
                            let mut call = Map::new();
                            call.insert("name".into(), json!(tc.name));
                            let args = if tc.arguments.is_object() {
                                tc.arguments.clone()
                            } else {
                                json!({})
                            };
                            call.insert("args".into(), args);
                            if needs_id {
                                call.insert("id".into(), json!(tc.id));
                            }
                            let mut p = Map::new();
                            p.insert("functionCall".into(), Value::Object(call));
                            if let Some(sig) = replay_signature(same, tc.thought_signature.as_ref()) {
                                p.insert("thoughtSignature".into(), json!(sig));
                            }
                            parts.push(Value::Object(p));
                        }
                        _ => {}
                    }
                }
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::ToolResult(r) => {
                let text: Vec<&str> = r.content.iter().filter_map(Content::as_text).collect();
                let text = text.join("\n");
                let images: Vec<Value> = if model.supports_images() {
                    r.content
                        .iter()
                        .filter_map(|c| match c {
                            Content::Image(i) => Some(json!({"inlineData": {"mimeType": i.mime_type, "data": i.data}})),
                            _ => None,
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let value = if !text.is_empty() {
                    sanitize_surrogates(&text).to_string()
                } else if !images.is_empty() {
                    "(see attached image)".to_string()
                } else {
                    String::new()
                };
                let nested = supports_multimodal_function_response(&model.id);
                let mut response = Map::new();
                response.insert("name".into(), json!(r.tool_name));
                response.insert(
                    "response".into(),
                    if r.is_error {
                        json!({"error": value})
                    } else {
                        json!({"output": value})
                    },
                );
                if !images.is_empty() && nested {
                    response.insert("parts".into(), Value::Array(images.clone()));
                }
                if needs_id {
                    response.insert("id".into(), json!(r.tool_call_id));
                }
                let part = json!({"functionResponse": response});
                let merged = contents.last_mut().and_then(|last| {
                    let is_user = last.get("role").and_then(Value::as_str) == Some("user");
                    let parts = last.get_mut("parts")?.as_array_mut()?;
                    (is_user && parts.iter().any(|p| p.get("functionResponse").is_some())).then_some(parts)
                });
                match merged {
                    Some(parts) => parts.push(part),
                    None => contents.push(json!({"role": "user", "parts": [part]})),
                }
                if !images.is_empty() && !nested {
                    let mut parts = vec![json!({"text": "Tool result image:"})];
                    parts.extend(images);
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
        }
    }
    contents
}

/// Schema keywords whose values map names to subschemas (their keys are names, not keywords).
const SCHEMA_NAME_MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
/// Keywords holding a subschema or a list of them (not literal data).
const SCHEMA_SUBSCHEMAS: [&str; 16] = [
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Gemini ignores `const` in `parametersJsonSchema` but honours `enum`: a string or number
/// `const` becomes a one-value `enum` (placed last), in every subschema.
fn rewrite_const_as_enum(schema: &Value, name_map: bool) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(|v| rewrite_const_as_enum(v, false)).collect()),
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let v = if name_map || SCHEMA_SUBSCHEMAS.contains(&key.as_str()) {
                    rewrite_const_as_enum(value, false)
                } else if SCHEMA_NAME_MAPS.contains(&key.as_str()) {
                    rewrite_const_as_enum(value, true)
                } else {
                    value.clone()
                };
                out.insert(key.clone(), v);
            }
            if !name_map && !out.contains_key("enum") {
                if let Some(c) = out.get("const").filter(|c| c.is_string() || c.is_number()).cloned() {
                    out.shift_remove("const");
                    out.insert("enum".into(), Value::Array(vec![c]));
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

pub(crate) fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(convert_messages(model, context)));
    if let Some(prompt) = context.system_prompt.as_deref() {
        body.insert(
            "systemInstruction".into(),
            // The genai SDK turns the prompt string into a user-role content.
            json!({"parts": [{"text": sanitize_surrogates(prompt)}], "role": "user"}),
        );
    }
    if !context.tools.is_empty() {
        let decls: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({"name": t.name, "description": t.description, "parametersJsonSchema": rewrite_const_as_enum(&t.parameters, false)})
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
    }
    let mut generation = Map::new();
    if let Some(t) = options.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    let max_tokens = crate::providers::output_cap::base_max_tokens(model, context, options.max_tokens);
    if max_tokens > 0 {
        generation.insert("maxOutputTokens".into(), json!(max_tokens));
    }
    if let Some(cfg) = thinking_config(model, options) {
        generation.insert("thinkingConfig".into(), cfg);
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Value::Object(body)
}

/// The genai SDK's wording of an HTTP error: the JSON error body itself (compact), or, for a
/// body that is not JSON, an error object built from the text and the status.
fn http_error_message(err: &HttpError) -> String {
    match err {
        HttpError::Status { status, body } => match serde_json::from_str::<Value>(body) {
            Ok(json) => json.to_string(),
            Err(_) => {
                let reason = reqwest::StatusCode::from_u16(*status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .unwrap_or("");
                json!({"error": {"message": body, "code": status, "status": reason}}).to_string()
            }
        },
        other => other.to_string(),
    }
}

/// An error object Gemini writes into a 200 stream. It has no `data:` prefix, so the SSE
/// decoder would skip it; the genai SDK recognises one when a whole read of the body is a JSON
/// object with an `error` whose `code` is an HTTP error status.
fn stream_error(chunk: &[u8]) -> Option<String> {
    let json: Value = serde_json::from_slice(chunk).ok()?;
    let error = json.get("error")?;
    let code = error.get("code").and_then(Value::as_u64)?;
    if !(400..600).contains(&code) {
        return None;
    }
    let status = match error.get("status") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "undefined".to_string(),
    };
    Some(format!("got status: {status}. {json}"))
}

/// The response body, with in-stream error objects turned into read errors. A body that broke
/// off reads as Node's `terminated`, which the session layer's auto-retry recognises.
fn body_stream(response: reqwest::Response) -> impl futures::Stream<Item = Result<bytes::Bytes, String>> + Unpin {
    response.bytes_stream().map(|read| match read {
        Ok(bytes) => match stream_error(&bytes) {
            Some(message) => Err(message),
            None => Ok(bytes),
        },
        Err(e) if e.is_timeout() => Err(crate::sse::IDLE_TIMEOUT_MESSAGE.to_string()),
        Err(_) => Err("terminated".to_string()),
    })
}

/// Stream a reply through the Gemini API.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let mut headers = vec![("x-goog-api-key".to_string(), api_key)];
    headers.extend(model_headers(model));
    headers.extend(options.headers.iter().cloned());
    let url = join_url(
        &model.base_url,
        &format!("models/{}:streamGenerateContent?alt=sse", model.id),
    );
    let body = apply_payload_hook(&options, model, build_body(model, context, &options));
    spawn_stream(model, &options, body, url, &headers)
}

/// Send a Gemini `body` to `url` with `headers` and stream the reply (shared with Vertex AI,
/// which differs in where it sends the request and how it authenticates).
pub(crate) fn spawn_stream(
    model: &Model,
    options: &StreamOptions,
    body: serde_json::Value,
    url: String,
    headers: &[(String, String)],
) -> AssistantStream {
    let headers = match http::header_map(headers) {
        Ok(h) => h,
        Err(e) => return error_stream(model, e),
    };
    let policy = RetryPolicy::from_options(options);
    let model_for_body = model.clone();
    spawn_provider(model, options.cancel.clone(), ABORT_MESSAGE, move |emitter| {
        async move {
            let response = post_body(&url, headers, body, policy, http_error_message).await?;
            emitter.start().await?;
            let mut sse = SseStream::new(body_stream(response));
            read_chunks(emitter, &mut sse, &model_for_body).await
        }
        .boxed()
    })
}

/// [`spawn_stream`] for a bearer token that must be fetched first (Vertex AI with application
/// default credentials): a failure to get it is the stream's error.
pub(crate) fn spawn_stream_authorized(
    model: &Model,
    options: &StreamOptions,
    body: serde_json::Value,
    url: String,
    headers: &[(String, String)],
    token: impl std::future::Future<Output = Result<String, String>> + Send + 'static,
) -> AssistantStream {
    let mut headers = match http::header_map(headers) {
        Ok(h) => h,
        Err(e) => return error_stream(model, e),
    };
    let policy = RetryPolicy::from_options(options);
    let model_for_body = model.clone();
    spawn_provider(model, options.cancel.clone(), ABORT_MESSAGE, move |emitter| {
        async move {
            let token = token.await.map_err(ProviderError::Message)?;
            let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| ProviderError::Message("the Google access token is not a valid header value".into()))?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
            let response = post_body(&url, headers, body, policy, http_error_message).await?;
            emitter.start().await?;
            let mut sse = SseStream::new(body_stream(response));
            read_chunks(emitter, &mut sse, &model_for_body).await
        }
        .boxed()
    })
}

/// Which block is open, by content index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Text(usize),
    Thinking(usize),
}

async fn close(em: &mut Emitter, open: &mut Option<Open>) -> Result<(), ProviderError> {
    match open.take() {
        Some(Open::Text(i)) => em.text_end(i).await,
        Some(Open::Thinking(i)) => em.thinking_end(i).await,
        None => Ok(()),
    }
}

fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::Length,
        _ => StopReason::Error,
    }
}

async fn read_chunks<S, E>(em: &mut Emitter, sse: &mut SseStream<S>, model: &Model) -> Result<(), ProviderError>
where
    S: futures::Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    E: crate::sse::TransportError,
{
    let mut open: Option<Open> = None;
    loop {
        let event = match sse.next_event().await {
            Ok(Some(e)) => e,
            Ok(None) => break,
            Err(e) => return Err(ProviderError::Message(e.to_string())),
        };
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| ProviderError::Message(format!("Could not parse Gemini stream chunk: {e}")))?;
        if let Some(err) = chunk.get("error") {
            return Err(ProviderError::Message(err.to_string()));
        }
        if em.output.response_id.is_none() {
            if let Some(id) = chunk.get("responseId").and_then(Value::as_str) {
                em.output.response_id = Some(id.to_string());
            }
        }
        let candidate = &chunk["candidates"][0];
        if let Some(parts) = candidate["content"]["parts"].as_array() {
            for part in parts {
                let signature = part
                    .get("thoughtSignature")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    let thinking = part.get("thought").and_then(Value::as_bool) == Some(true);
                    let index = match (open, thinking) {
                        (Some(Open::Thinking(i)), true) | (Some(Open::Text(i)), false) => i,
                        _ => {
                            close(em, &mut open).await?;
                            if thinking {
                                let i = em.thinking_start(None).await?;
                                open = Some(Open::Thinking(i));
                                i
                            } else {
                                let i = em.text_start().await?;
                                open = Some(Open::Text(i));
                                i
                            }
                        }
                    };
                    if thinking {
                        if let (Some(sig), Some(t)) = (signature, em.thinking_block(index)) {
                            t.thinking_signature = Some(sig.to_string());
                        }
                        em.thinking_delta(index, text).await?;
                    } else {
                        if let (Some(sig), Some(t)) = (signature, em.text_block(index)) {
                            t.text_signature = Some(sig.to_string());
                        }
                        em.text_delta(index, text).await?;
                    }
                }
                if let Some(call) = part.get("functionCall") {
                    close(em, &mut open).await?;
                    let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                    let provided = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
                    let duplicate = provided.is_some_and(|p| em.output.tool_calls().any(|t| t.id == p));
                    let id = match provided {
                        Some(p) if !duplicate => p.to_string(),
                        _ => {
                            let n = TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
                            format!("{name}_{}_{n}", crate::types::now_ms())
                        }
                    };
                    let args = call
                        .get("args")
                        .filter(|a| a.is_object())
                        .cloned()
                        .unwrap_or_else(|| json!({}));
                    let i = em.tool_call_start(&id, name).await?;
                    if let (Some(sig), Some(tc)) = (signature, em.tool_call(i)) {
                        tc.thought_signature = Some(sig.to_string());
                    }
                    em.tool_call_delta(i, &args.to_string()).await?;
                    em.tool_call_end(i).await?;
                }
            }
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            em.output.stop_reason = map_finish_reason(reason);
            em.output.raw_stop_reason = Some(reason.to_string());
            if em.output.tool_calls().next().is_some() {
                em.output.stop_reason = StopReason::ToolUse;
            }
        }
        if let Some(usage) = chunk.get("usageMetadata") {
            let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            let u = &mut em.output.usage;
            let cached = n("cachedContentTokenCount");
            u.input = n("promptTokenCount").saturating_sub(cached);
            u.output = n("candidatesTokenCount") + n("thoughtsTokenCount");
            u.cache_read = cached;
            u.cache_write = 0;
            u.total_tokens = n("totalTokenCount");
            calculate_cost(model, &mut em.output.usage);
        }
    }
    close(em, &mut open).await?;
    if matches!(em.output.stop_reason, StopReason::Error | StopReason::Aborted) {
        return Err(ProviderError::Message("An unknown error occurred".to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::types::{AssistantMessage, InputKind, ModelCost, ToolCall, ToolResultMessage, UserMessage};

    fn model(id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "google-generative-ai".into(),
            provider: "google".into(),
            base_url: "http://127.0.0.1:1/v1beta".into(),
            reasoning: true,
            input: vec![InputKind::Text, InputKind::Image],
            cost: ModelCost::default(),
            context_window: 1_000_000,
            max_tokens: 65_536,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    #[test]
    fn const_becomes_a_single_value_enum() {
        let schema = json!({
            "type": "object",
            "properties": {
                "const": {"type": "string", "const": "x", "description": "d"},
                "mode": {"anyOf": [{"const": 1}, {"const": true}]},
                "kept": {"const": "a", "enum": ["a", "b"]}
            },
            "examples": [{"const": "literal"}]
        });
        assert_eq!(
            rewrite_const_as_enum(&schema, false).to_string(),
            json!({
                "type": "object",
                "properties": {
                    "const": {"type": "string", "description": "d", "enum": ["x"]},
                    "mode": {"anyOf": [{"enum": [1]}, {"const": true}]},
                    "kept": {"const": "a", "enum": ["a", "b"]}
                },
                "examples": [{"const": "literal"}]
            })
            .to_string()
        );
    }

    #[test]
    fn families_are_recognised() {
        assert_eq!(family("gemini-3-pro-preview"), Family::Gemini3Pro);
        assert_eq!(family("gemini-3.1-pro-preview"), Family::Gemini3Pro);
        assert_eq!(family("gemini-3-flash-preview"), Family::Gemini3Flash);
        assert_eq!(family("gemma-4-27b"), Family::Gemma4);
        assert_eq!(family("gemini-2.5-pro"), Family::Other);
        assert_eq!(gemini_major_version("gemini-2.5-flash"), Some(2));
        assert!(!supports_multimodal_function_response("gemini-2.5-flash"));
        assert!(supports_multimodal_function_response("gemini-3-pro"));
    }

    #[test]
    fn thinking_config_per_family() {
        let on = StreamOptions {
            reasoning: Some(ThinkingLevel::Medium),
            ..Default::default()
        };
        let off = StreamOptions::default();
        assert_eq!(
            thinking_config(&model("gemini-2.5-pro"), &on),
            Some(json!({"includeThoughts": true, "thinkingBudget": 8192}))
        );
        assert_eq!(
            thinking_config(&model("gemini-2.5-pro"), &off),
            Some(json!({"thinkingBudget": 0}))
        );
        assert_eq!(
            thinking_config(&model("gemini-3-pro-preview"), &on),
            Some(json!({"includeThoughts": true, "thinkingLevel": "HIGH"}))
        );
        assert_eq!(
            thinking_config(&model("gemini-3-flash-preview"), &off),
            Some(json!({"thinkingLevel": "MINIMAL"}))
        );
        assert_eq!(
            thinking_config(&model("gemini-x"), &on),
            Some(json!({"includeThoughts": true, "thinkingBudget": -1}))
        );
    }

    #[test]
    fn tool_results_merge_and_signatures_replay_only_for_same_model() {
        let m = model("gemini-2.5-flash");
        let call = |id: &str| {
            Content::ToolCall(ToolCall {
                id: id.into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                thought_signature: Some("c2lnbmF0dXJl".into()),
                ..Default::default()
            })
        };
        let assistant = AssistantMessage {
            content: vec![call("1"), call("2")],
            api: m.api.clone(),
            provider: m.provider.clone(),
            model: m.id.clone(),
            stop_reason: StopReason::ToolUse,
            ..Default::default()
        };
        let result = |id: &str, err: bool| {
            Message::ToolResult(Arc::new(ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "read".into(),
                content: vec![Content::text("out")],
                is_error: err,
                ..Default::default()
            }))
        };
        let ctx = Context {
            system_prompt: Some("sys".into()),
            messages: vec![
                Message::User(Arc::new(UserMessage {
                    content: UserContent::Text("go".into()),
                    ..Default::default()
                })),
                Message::Assistant(Arc::new(assistant)),
                result("1", false),
                result("2", true),
            ],
            tools: vec![],
        };
        let body = build_body(&m, &ctx, &StreamOptions::default());
        let contents = body["contents"].as_array().expect("contents");
        assert_eq!(contents.len(), 3);
        assert_eq!(contents[1]["parts"][0]["thoughtSignature"], json!("c2lnbmF0dXJl"));
        assert_eq!(
            contents[2]["parts"][0]["functionResponse"]["response"],
            json!({"output": "out"})
        );
        assert_eq!(
            contents[2]["parts"][1]["functionResponse"]["response"],
            json!({"error": "out"})
        );
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "sys"}], "role": "user"})
        );
        let other = model("gemini-2.5-pro");
        let body = build_body(&other, &ctx, &StreamOptions::default());
        assert!(body["contents"][1]["parts"][0].get("thoughtSignature").is_none());
    }
}
