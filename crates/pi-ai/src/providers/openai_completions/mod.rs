//! The `openai-completions` API: OpenAI Chat Completions and the many servers that copy it.
//!
//! Differences between those servers are described by `model.compat` (see [`Compat`]); fields
//! left out are detected from the provider name and base URL.

mod chunk;
mod compat;
mod messages;
mod reasoning_details;
mod request;

use std::collections::HashMap;

use serde_json::{json, Value};

pub use compat::Compat;
pub use request::{build_body, build_headers, convert_messages, convert_tools, max_tokens, request_payload};

use crate::events::AssistantStream;
use crate::http::{self, ErrorBodyStyle, RetryPolicy};
use crate::options::StreamOptions;
use crate::providers::grammar_tools::{self, GrammarInputs, RawInput};
use crate::providers::{apply_payload_hook, cache_retention, join_url, post_bytes};
use crate::sse::SseStream;
use crate::stream_driver::{error_stream, spawn_provider_with, Emitter, ProviderError, OPENAI_ABORT_MESSAGES};
use crate::types::{Context, Model, StopReason, Usage};

/// Stream a chat completion. `api_key` must already be resolved.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let compat = Compat::for_model(model);
    let retention = cache_retention(&options);
    let payload = match request_payload(model, context, &options) {
        Ok(p) => p,
        Err(e) => return error_stream(model, e),
    };
    let headers = build_headers(model, &options, &compat, &api_key, retention);
    let url = join_url(&model.base_url, "chat/completions");
    let policy = RetryPolicy::from_options(&options);
    let owned_model = model.clone();
    let grammar = grammar_tools::inputs(model, &context.tools);
    spawn_provider_with(model, options.cancel.clone(), OPENAI_ABORT_MESSAGES, move |em| {
        Box::pin(async move { run(em, &owned_model, url, headers, payload, policy, &grammar).await })
    })
}

/// The body `stream` sends for these arguments (after the `on_payload` hook).
pub fn request_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let compat = Compat::for_model(model);
    let body = build_body(model, context, options, &compat, cache_retention(options));
    apply_payload_hook(options, model, body)
}

/// Map a `finish_reason` to a stop reason and, for failures, an error text.
pub fn map_finish_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "function_call" | "tool_calls" => (StopReason::ToolUse, None),
        other => (StopReason::Error, Some(format!("Provider finish_reason: {other}"))),
    }
}

/// Usage from a chunk: `input` excludes cached tokens; `output` includes reasoning.
pub fn parse_usage(raw: &Value, model: &Model) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let prompt = n(raw.get("prompt_tokens"));
    let details = raw.get("prompt_tokens_details");
    // pi 1.6: `cached_tokens` is what was read from the cache (OpenAI and OpenRouter say so;
    // DeepSeek reports `prompt_cache_hit_tokens`, Kimi a top-level `cached_tokens`); writes
    // are not taken out of it.
    let cache_read = details
        .and_then(|d| d.get("cached_tokens"))
        .filter(|v| !v.is_null())
        .or_else(|| raw.get("prompt_cache_hit_tokens").filter(|v| !v.is_null()))
        .or_else(|| raw.get("cached_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let cache_write = n(details.and_then(|d| d.get("cache_write_tokens")));
    let input = prompt.saturating_sub(cache_read).saturating_sub(cache_write);
    let output = n(raw.get("completion_tokens"));
    let reasoning = n(raw
        .get("completion_tokens_details")
        .and_then(|d| d.get("reasoning_tokens")));
    let mut usage = Usage {
        input,
        output,
        cache_read,
        cache_write,
        reasoning: Some(reasoning),
        total_tokens: input + output + cache_read + cache_write,
        ..Default::default()
    };
    crate::cost::calculate_cost(model, &mut usage);
    usage
}

/// The text of an error object inside a stream, as the OpenAI SDK words it.
pub(crate) fn stream_error_message(error: &Value) -> String {
    match error.get("message") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(m) if !m.is_null() && m != &json!("") => m.to_string(),
        _ => error.to_string(),
    }
}

/// A tool call being streamed: where it sits and how the server identifies it. A `custom`
/// call (a grammar tool's) streams raw input, written into its JSON arguments as it comes.
struct StreamingCall {
    content_index: usize,
    stream_index: Option<u64>,
    raw: Option<RawInput>,
}

async fn run(
    em: &mut Emitter,
    model: &Model,
    url: String,
    headers: Vec<(String, String)>,
    payload: Vec<u8>,
    policy: RetryPolicy,
    grammar: &GrammarInputs,
) -> Result<(), ProviderError> {
    let header_map = http::header_map(&headers)?;
    let response = post_bytes(&url, header_map, payload, policy, |e| {
        e.message(ErrorBodyStyle::ErrorField)
    })
    .await?;
    em.start().await?;
    em.set_end_blocks_on_abort(true);

    let mut sse = SseStream::new(response.bytes_stream());
    let mut text_index: Option<usize> = None;
    let mut thinking_index: Option<usize> = None;
    let mut calls: Vec<StreamingCall> = Vec::new();
    let mut calls_by_id: HashMap<String, usize> = HashMap::new();
    let mut streamed_details: Option<Vec<Value>> = None;

    loop {
        let event = match sse.next_event().await {
            Ok(Some(e)) => e,
            Ok(None) => break,
            Err(crate::sse::SseError::Transport(_)) => return Err("terminated".into()),
            Err(e) => return Err(e.to_string().into()),
        };
        if event.data.starts_with("[DONE]") {
            break;
        }
        let chunk = match chunk::parse(&event.data)? {
            chunk::Parsed::Chunk(c) => c,
            chunk::Parsed::NotAnObject => continue,
        };
        if let Some(error) = chunk.error.as_ref().filter(|e| *e != &json!(false)) {
            return Err(stream_error_message(error).into());
        }
        if em.output.response_id.is_none() {
            if let Some(id) = chunk.id.non_empty() {
                em.output.response_id = Some(id.to_string());
            }
        }
        if let Some(m) = chunk.model.non_empty() {
            if m != model.id && em.output.response_model.is_none() {
                em.output.response_model = Some(m.to_string());
            }
        }
        let chunk_usage = chunk.usage.as_ref().filter(|u| u.is_object());
        if let Some(u) = chunk_usage {
            em.output.usage = parse_usage(u, model);
        }
        let Some(choice) = &chunk.choices.0 else {
            continue;
        };
        if chunk_usage.is_none() {
            if let Some(u) = choice.usage.as_ref().filter(|u| u.is_object()) {
                em.output.usage = parse_usage(u, model);
            }
        }
        if let Some(reason) = choice.finish_reason.get() {
            let (stop, message) = map_finish_reason(reason);
            em.output.stop_reason = stop;
            em.output.raw_stop_reason = Some(reason.to_string());
            if message.is_some() {
                em.output.error_message = message;
            }
        }
        let Some(delta) = &choice.delta.0 else {
            continue;
        };
        // Reasoning before content: a proxy that puts both in one delta still gets the
        // thinking block first.
        if let Some((field, text)) = delta.reasoning() {
            let index = match thinking_index {
                Some(i) => i,
                None => {
                    let i = em.thinking_start(Some(field.to_string())).await?;
                    thinking_index = Some(i);
                    i
                }
            };
            em.thinking_delta(index, text).await?;
        }
        if let Some(details) = delta.reasoning_details.as_ref().and_then(Value::as_array) {
            for detail in details.iter().filter(|d| reasoning_details::is_reasoning_detail(d)) {
                if thinking_index.is_none() {
                    thinking_index = Some(em.thinking_start(Some(String::new())).await?);
                }
                reasoning_details::append(streamed_details.get_or_insert_with(Vec::new), detail);
            }
        }
        if let Some(text) = delta.content.non_empty() {
            let index = match text_index {
                Some(i) => i,
                None => {
                    let i = em.text_start().await?;
                    text_index = Some(i);
                    i
                }
            };
            em.text_delta(index, text).await?;
        }
        if let Some(tool_calls) = delta.tool_calls.as_ref().and_then(Value::as_array) {
            for tc in tool_calls {
                let stream_index = tc.get("index").and_then(Value::as_u64);
                let id = tc.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
                let function = tc.get("function");
                let custom = tc.get("custom").filter(|_| function.is_none());
                let name = function
                    .or(custom)
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let existing = stream_index
                    .and_then(|si| calls.iter().find(|c| c.stream_index == Some(si)))
                    .map(|c| c.content_index)
                    .or_else(|| id.and_then(|id| calls_by_id.get(id).copied()));
                let index = match existing {
                    Some(i) => i,
                    None => {
                        let i = em.tool_call_start(id.unwrap_or(""), name.unwrap_or("")).await?;
                        calls.push(StreamingCall {
                            content_index: i,
                            stream_index,
                            raw: None,
                        });
                        i
                    }
                };
                let block_name = em.tool_call(index).map(|b| b.name.clone()).unwrap_or_default();
                let mut raw_delta = None;
                if let Some(call) = calls.iter_mut().find(|c| c.content_index == index) {
                    if call.stream_index.is_none() {
                        call.stream_index = stream_index;
                    }
                    if let Some(custom) = custom {
                        // The input fills the argument the grammar tool declares (`input` for
                        // a tool the request did not declare as one).
                        let raw = call.raw.get_or_insert_with(|| {
                            let called = name.unwrap_or(&block_name);
                            RawInput::new(grammar.get(called).cloned().unwrap_or_else(|| "input".into()))
                        });
                        let input = custom.get("input").and_then(Value::as_str).unwrap_or("");
                        raw_delta = Some(raw.push(input).unwrap_or_default());
                    }
                }
                if let Some(id) = id {
                    calls_by_id.insert(id.to_string(), index);
                }
                if let Some(block) = em.tool_call(index) {
                    if block.id.is_empty() {
                        if let Some(id) = id {
                            block.id = id.to_string();
                        }
                    }
                    if block.name.is_empty() {
                        if let Some(name) = name {
                            block.name = name.to_string();
                        }
                    }
                }
                let args = function
                    .and_then(|f| f.get("arguments"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                em.tool_call_delta(index, raw_delta.as_deref().unwrap_or(args)).await?;
            }
        }
    }

    // The details are replay data, not deltas: the thinking block carries them as a whole.
    if let (Some(details), Some(index)) = (streamed_details, thinking_index) {
        if let Some(block) = em.thinking_block(index) {
            block.thinking_signature = Some(Value::from(details).to_string());
        }
    }
    // Raw inputs end with the stream: their JSON arguments are closed.
    for call in &mut calls {
        if let Some(raw) = call.raw.as_mut() {
            if let Some(piece) = raw.close(None) {
                em.tool_call_delta(call.content_index, &piece).await?;
            }
            em.set_tool_call_raw_args(call.content_index, raw.arguments());
        }
    }
    // Blocks close in content order once the stream is over, as in pi.
    em.end_all_blocks().await
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::types::{InputKind, ModelCost};

    pub(crate) fn model(provider: &str, base_url: &str, reasoning: bool) -> Model {
        Model {
            id: "mock-model".into(),
            name: "mock".into(),
            api: "openai-completions".into(),
            provider: provider.into(),
            base_url: base_url.into(),
            reasoning,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 128_000,
            max_tokens: 16_384,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    #[test]
    fn usage_excludes_cached_tokens() {
        let m = model("p", "http://x/v1", false);
        let u = parse_usage(
            &json!({"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 40}}),
            &m,
        );
        assert_eq!((u.input, u.output, u.cache_read, u.total_tokens), (60, 7, 40, 107));
        // Cache writes are not taken out of the cached (read) tokens.
        let u = parse_usage(
            &json!({"prompt_tokens": 100, "completion_tokens": 7,
                    "prompt_tokens_details": {"cached_tokens": 40, "cache_write_tokens": 10}}),
            &m,
        );
        assert_eq!(
            (u.input, u.cache_read, u.cache_write, u.total_tokens),
            (50, 40, 10, 107)
        );
    }

    #[test]
    fn finish_reasons() {
        assert_eq!(map_finish_reason("tool_calls").0, StopReason::ToolUse);
        assert_eq!(map_finish_reason("length").0, StopReason::Length);
        assert_eq!(
            map_finish_reason("content_filter"),
            (StopReason::Error, Some("Provider finish_reason: content_filter".into()))
        );
    }
}
