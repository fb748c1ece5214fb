//! The `openai-completions` API: OpenAI Chat Completions and the many servers that copy it.
//!
//! Differences between those servers are described by `model.compat` (see [`Compat`]); fields
//! left out are detected from the provider name and base URL.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::events::AssistantStream;
use crate::http::{self, ErrorBodyStyle, RetryPolicy};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::{apply_payload_hook, cache_retention, compat_bool, compat_str, join_url, model_headers};
use crate::sse::SseStream;
use crate::stream_driver::{spawn_provider, Emitter, ProviderError, ABORT_MESSAGE};
use crate::thinking::{effective_reasoning, level_mapping, mapped_effort, LevelMapping};
use crate::transform::{sanitize_surrogates, transform_messages};
use crate::types::{
    Content, Context, Message, Model, StopReason, ThinkingLevel, Tool, ToolResultMessage, Usage, UserContent,
};

/// Compatibility switches of an OpenAI-compatible server, resolved from `model.compat` over
/// the detected defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Compat {
    pub supports_store: bool,
    pub supports_developer_role: bool,
    pub supports_reasoning_effort: bool,
    pub supports_usage_in_streaming: bool,
    /// `max_completion_tokens` or `max_tokens`.
    pub max_tokens_field: String,
    pub requires_tool_result_name: bool,
    pub requires_assistant_after_tool_result: bool,
    pub requires_thinking_as_text: bool,
    pub requires_reasoning_content_on_assistant_messages: bool,
    /// `openai`, `zai`, `qwen`, `qwen-chat-template`, `openrouter` or `deepseek`.
    pub thinking_format: String,
    pub open_router_routing: Option<Value>,
    pub vercel_gateway_routing: Option<Value>,
    pub zai_tool_stream: bool,
    pub supports_strict_mode: bool,
    /// `anthropic` marks cache breakpoints the Anthropic way.
    pub cache_control_format: Option<String>,
    pub send_session_affinity_headers: bool,
    pub supports_long_cache_retention: bool,
}

impl Compat {
    /// Defaults detected from the provider name and base URL.
    pub fn detect(model: &Model) -> Compat {
        let provider = model.provider.as_str();
        let url = model.base_url.as_str();
        let is_zai = provider == "zai" || url.contains("api.z.ai");
        let is_moonshot = provider == "moonshotai" || provider == "moonshotai-cn" || url.contains("api.moonshot.");
        let is_cf_workers = provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
        let is_cf_gateway = provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
        let is_grok = provider == "xai" || url.contains("api.x.ai");
        let is_deepseek = provider == "deepseek" || url.contains("deepseek.com");
        let non_standard = provider == "cerebras"
            || url.contains("cerebras.ai")
            || is_grok
            || url.contains("chutes.ai")
            || url.contains("deepseek.com")
            || is_zai
            || is_moonshot
            || provider == "opencode"
            || url.contains("opencode.ai")
            || is_cf_workers
            || is_cf_gateway;
        let use_max_tokens = url.contains("chutes.ai") || is_moonshot || is_cf_gateway;
        let thinking_format = if is_deepseek {
            "deepseek"
        } else if is_zai {
            "zai"
        } else if provider == "openrouter" || url.contains("openrouter.ai") {
            "openrouter"
        } else {
            "openai"
        };
        Compat {
            supports_store: !non_standard,
            supports_developer_role: !non_standard,
            supports_reasoning_effort: !is_grok && !is_zai && !is_moonshot && !is_cf_gateway,
            supports_usage_in_streaming: true,
            max_tokens_field: if use_max_tokens {
                "max_tokens"
            } else {
                "max_completion_tokens"
            }
            .to_string(),
            requires_tool_result_name: false,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: false,
            requires_reasoning_content_on_assistant_messages: is_deepseek,
            thinking_format: thinking_format.to_string(),
            open_router_routing: None,
            vercel_gateway_routing: None,
            zai_tool_stream: false,
            supports_strict_mode: !is_moonshot && !is_cf_gateway,
            cache_control_format: (provider == "openrouter" && model.id.starts_with("anthropic/"))
                .then(|| "anthropic".to_string()),
            send_session_affinity_headers: false,
            supports_long_cache_retention: !(is_cf_workers || is_cf_gateway),
        }
    }

    /// `model.compat` over the detected defaults.
    pub fn for_model(model: &Model) -> Compat {
        let d = Compat::detect(model);
        let b = |key: &str, default: bool| compat_bool(model, key).unwrap_or(default);
        let object = |key: &str| {
            model
                .compat
                .as_ref()
                .and_then(|c| c.get(key))
                .filter(|v| v.is_object())
                .cloned()
        };
        Compat {
            supports_store: b("supportsStore", d.supports_store),
            supports_developer_role: b("supportsDeveloperRole", d.supports_developer_role),
            supports_reasoning_effort: b("supportsReasoningEffort", d.supports_reasoning_effort),
            supports_usage_in_streaming: b("supportsUsageInStreaming", d.supports_usage_in_streaming),
            max_tokens_field: compat_str(model, "maxTokensField")
                .map(String::from)
                .unwrap_or(d.max_tokens_field),
            requires_tool_result_name: b("requiresToolResultName", d.requires_tool_result_name),
            requires_assistant_after_tool_result: b(
                "requiresAssistantAfterToolResult",
                d.requires_assistant_after_tool_result,
            ),
            requires_thinking_as_text: b("requiresThinkingAsText", d.requires_thinking_as_text),
            requires_reasoning_content_on_assistant_messages: b(
                "requiresReasoningContentOnAssistantMessages",
                d.requires_reasoning_content_on_assistant_messages,
            ),
            thinking_format: compat_str(model, "thinkingFormat")
                .map(String::from)
                .unwrap_or(d.thinking_format),
            open_router_routing: object("openRouterRouting"),
            vercel_gateway_routing: object("vercelGatewayRouting"),
            zai_tool_stream: b("zaiToolStream", d.zai_tool_stream),
            supports_strict_mode: b("supportsStrictMode", d.supports_strict_mode),
            cache_control_format: compat_str(model, "cacheControlFormat")
                .map(String::from)
                .or(d.cache_control_format),
            send_session_affinity_headers: b("sendSessionAffinityHeaders", d.send_session_affinity_headers),
            supports_long_cache_retention: b("supportsLongCacheRetention", d.supports_long_cache_retention),
        }
    }
}

/// Stream a chat completion. `api_key` must already be resolved.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let compat = Compat::for_model(model);
    let retention = cache_retention(&options);
    let body = build_body(model, context, &options, &compat, retention);
    let body = apply_payload_hook(&options, model, body);
    let headers = build_headers(model, &options, &compat, &api_key, retention);
    let url = join_url(&model.base_url, "chat/completions");
    let policy = RetryPolicy::from_options(&options);
    let owned_model = model.clone();
    spawn_provider(model, options.cancel.clone(), ABORT_MESSAGE, move |em| {
        Box::pin(async move { run(em, &owned_model, url, headers, body, policy).await })
    })
}

/// Request headers: bearer auth, the model's headers, session affinity, then the caller's.
pub fn build_headers(
    model: &Model,
    options: &StreamOptions,
    compat: &Compat,
    api_key: &str,
    retention: CacheRetention,
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("accept".to_string(), "application/json".to_string()),
        ("authorization".to_string(), format!("Bearer {api_key}")),
    ];
    headers.extend(model_headers(model));
    if let Some(session) = options
        .session_id
        .as_ref()
        .filter(|_| retention != CacheRetention::None)
    {
        if compat.send_session_affinity_headers {
            for name in ["session_id", "x-client-request-id", "x-session-affinity"] {
                headers.push((name.to_string(), session.clone()));
            }
        }
    }
    headers.extend(options.headers.iter().cloned());
    headers
}

/// The request body, field for field as the TypeScript pi sends it.
pub fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &Compat,
    retention: CacheRetention,
) -> Value {
    let mut messages = convert_messages(model, context, compat);
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Null); // placed here; filled below
    body.insert("stream".into(), json!(true));
    let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    if (model.base_url.contains("api.openai.com") && retention != CacheRetention::None) || long {
        if let Some(session) = &options.session_id {
            body.insert("prompt_cache_key".into(), json!(session));
        }
    }
    if long {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }
    if let Some(max) = max_tokens(model, options).filter(|m| *m > 0) {
        body.insert(compat.max_tokens_field.clone(), json!(max));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    let mut tools = if !context.tools.is_empty() {
        if compat.zai_tool_stream {
            body.insert("tools".into(), Value::Null);
            body.insert("tool_stream".into(), json!(true));
        }
        Some(convert_tools(&context.tools, compat))
    } else if has_tool_history(&context.messages) {
        Some(Vec::new())
    } else {
        None
    };
    if compat.cache_control_format.as_deref() == Some("anthropic") && retention != CacheRetention::None {
        let mut cc = json!({"type": "ephemeral"});
        if retention == CacheRetention::Long && compat.supports_long_cache_retention {
            cc["ttl"] = json!("1h");
        }
        apply_anthropic_cache_control(&mut messages, tools.as_mut(), &cc);
    }
    body.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = tools {
        body.insert("tools".into(), Value::Array(tools));
    }

    let effort = effective_reasoning(model, options.reasoning);
    add_reasoning(&mut body, model, compat, effort);

    if model.base_url.contains("openrouter.ai") {
        if let Some(routing) = &compat.open_router_routing {
            body.insert("provider".into(), routing.clone());
        }
    }
    if model.base_url.contains("ai-gateway.vercel.sh") {
        if let Some(routing) = &compat.vercel_gateway_routing {
            let mut gateway = Map::new();
            for key in ["only", "order"] {
                if let Some(v) = routing.get(key).filter(|v| !v.is_null()) {
                    gateway.insert(key.into(), v.clone());
                }
            }
            if !gateway.is_empty() {
                body.insert("providerOptions".into(), json!({"gateway": gateway}));
            }
        }
    }
    Value::Object(body)
}

/// The output cap: the option, else `min(model.maxTokens, 32000)`; `None` when the model
/// declares no limit.
pub fn max_tokens(model: &Model, options: &StreamOptions) -> Option<u64> {
    options
        .max_tokens
        .or_else(|| (model.max_tokens > 0).then(|| model.max_tokens.min(32_000)))
}

fn add_reasoning(body: &mut Map<String, Value>, model: &Model, compat: &Compat, effort: Option<ThinkingLevel>) {
    if !model.reasoning {
        return;
    }
    match compat.thinking_format.as_str() {
        "zai" | "qwen" => {
            body.insert("enable_thinking".into(), json!(effort.is_some()));
        }
        "qwen-chat-template" => {
            body.insert(
                "chat_template_kwargs".into(),
                json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
            );
        }
        "deepseek" => {
            let kind = if effort.is_some() { "enabled" } else { "disabled" };
            body.insert("thinking".into(), json!({"type": kind}));
            if let Some(level) = effort {
                body.insert("reasoning_effort".into(), json!(mapped_effort(model, level)));
            }
        }
        "openrouter" => match effort {
            Some(level) => {
                body.insert("reasoning".into(), json!({"effort": mapped_effort(model, level)}));
            }
            None => match level_mapping(model, ThinkingLevel::Off) {
                LevelMapping::Removed => {}
                LevelMapping::Value(v) => {
                    body.insert("reasoning".into(), json!({"effort": v}));
                }
                LevelMapping::Absent => {
                    body.insert("reasoning".into(), json!({"effort": "none"}));
                }
            },
        },
        _ if compat.supports_reasoning_effort => match effort {
            Some(level) => {
                body.insert("reasoning_effort".into(), json!(mapped_effort(model, level)));
            }
            None => {
                if let LevelMapping::Value(v) = level_mapping(model, ThinkingLevel::Off) {
                    body.insert("reasoning_effort".into(), json!(v));
                }
            }
        },
        _ => {}
    }
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        Message::User(_) => false,
    })
}

/// Tools in the Chat Completions shape.
pub fn convert_tools(tools: &[Tool], compat: &Compat) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            let mut function = Map::new();
            function.insert("name".into(), json!(tool.name));
            function.insert("description".into(), json!(tool.description));
            function.insert("parameters".into(), tool.parameters.clone());
            if compat.supports_strict_mode {
                function.insert("strict".into(), json!(false));
            }
            json!({"type": "function", "function": function})
        })
        .collect()
}

/// Tool-call ids this API accepts: Responses-style `call|item` ids keep the call part (40
/// safe characters at most); OpenAI's own limit is 40.
fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    if let Some((call, _)) = id.split_once('|') {
        return crate::transform::sanitize_tool_call_id(call, 40);
    }
    if model.provider == "openai" && id.chars().count() > 40 {
        return id.chars().take(40).collect();
    }
    id.to_string()
}

/// Messages in the Chat Completions shape (system prompt first).
pub fn convert_messages(model: &Model, context: &Context, compat: &Compat) -> Vec<Value> {
    let normalize = |id: &str, _: &crate::types::AssistantMessage| normalize_tool_call_id(model, id);
    let messages = transform_messages(&context.messages, model, &normalize);
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = &context.system_prompt {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": sanitize_surrogates(system)}));
    }
    let mut last_role: Option<&str> = None;
    let mut i = 0;
    while i < messages.len() {
        let msg = &messages[i];
        if compat.requires_assistant_after_tool_result && last_role == Some("toolResult") {
            if let Message::User(_) = msg {
                out.push(json!({"role": "assistant", "content": "I have processed the tool results."}));
            }
        }
        match msg {
            Message::User(user) => {
                match &user.content {
                    UserContent::Text(s) => out.push(json!({"role": "user", "content": sanitize_surrogates(s)})),
                    UserContent::Blocks(blocks) => {
                        let parts: Vec<Value> = blocks.iter().filter_map(user_part).collect();
                        if parts.is_empty() {
                            i += 1;
                            continue;
                        }
                        out.push(json!({"role": "user", "content": parts}));
                    }
                }
                last_role = Some("user");
            }
            Message::Assistant(a) => {
                if let Some(v) = convert_assistant(model, compat, a) {
                    out.push(v);
                }
                last_role = Some("assistant");
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                let mut j = i;
                while let Some(Message::ToolResult(result)) = messages.get(j) {
                    out.push(tool_message(result, compat));
                    if model.supports_images() {
                        images.extend(result.content.iter().filter_map(|c| match c {
                            Content::Image(img) => Some(image_url(&img.mime_type, &img.data)),
                            _ => None,
                        }));
                    }
                    j += 1;
                }
                i = j;
                if images.is_empty() {
                    last_role = Some("toolResult");
                } else {
                    if compat.requires_assistant_after_tool_result {
                        out.push(json!({"role": "assistant", "content": "I have processed the tool results."}));
                    }
                    let mut parts = vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
                    parts.extend(images);
                    out.push(json!({"role": "user", "content": parts}));
                    last_role = Some("user");
                }
                continue;
            }
        }
        i += 1;
    }
    out
}

fn image_url(mime: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
}

fn user_part(block: &Content) -> Option<Value> {
    match block {
        Content::Text(t) => Some(json!({"type": "text", "text": sanitize_surrogates(&t.text)})),
        Content::Image(img) => Some(image_url(&img.mime_type, &img.data)),
        _ => None,
    }
}

fn tool_message(result: &ToolResultMessage, compat: &Compat) -> Value {
    let text = crate::types::join_text(&result.content);
    let content = if text.is_empty() {
        "(see attached image)".to_string()
    } else {
        text
    };
    let mut m = Map::new();
    m.insert("role".into(), json!("tool"));
    m.insert("content".into(), json!(sanitize_surrogates(&content)));
    m.insert("tool_call_id".into(), json!(result.tool_call_id));
    if compat.requires_tool_result_name && !result.tool_name.is_empty() {
        m.insert("name".into(), json!(result.tool_name));
    }
    Value::Object(m)
}

fn convert_assistant(model: &Model, compat: &Compat, a: &crate::types::AssistantMessage) -> Option<Value> {
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert(
        "content".into(),
        if compat.requires_assistant_after_tool_result {
            json!("")
        } else {
            Value::Null
        },
    );
    let text_parts: Vec<&str> = a
        .content
        .iter()
        .filter_map(Content::as_text)
        .filter(|t| !t.trim().is_empty())
        .collect();
    let text: String = text_parts.concat();
    let thinking: Vec<&crate::types::ThinkingContent> = a
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Thinking(t) if !t.thinking.trim().is_empty() => Some(t),
            _ => None,
        })
        .collect();
    if !thinking.is_empty() {
        if compat.requires_thinking_as_text {
            let joined: Vec<&str> = thinking.iter().map(|t| sanitize_surrogates(&t.thinking)).collect();
            let mut parts = vec![json!({"type": "text", "text": joined.join("\n\n")})];
            parts.extend(
                text_parts
                    .iter()
                    .map(|t| json!({"type": "text", "text": sanitize_surrogates(t)})),
            );
            m.insert("content".into(), Value::Array(parts));
        } else {
            if !text.is_empty() {
                m.insert("content".into(), json!(sanitize_surrogates(&text)));
            }
            if let Some(field) = thinking[0].thinking_signature.as_deref().filter(|s| !s.is_empty()) {
                let joined: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
                m.insert(field.to_string(), json!(joined.join("\n")));
            }
        }
    } else if !text.is_empty() {
        m.insert("content".into(), json!(sanitize_surrogates(&text)));
    }
    let calls: Vec<&crate::types::ToolCall> = a.tool_calls().collect();
    if !calls.is_empty() {
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(|tc| {
                json!({
                    "id": tc.id,
                    "type": "function",
                    "function": {"name": tc.name, "arguments": tc.arguments.to_string()},
                })
            })
            .collect();
        m.insert("tool_calls".into(), Value::Array(tool_calls));
        let details: Vec<Value> = calls
            .iter()
            .filter_map(|tc| tc.thought_signature.as_deref())
            .filter_map(|s| serde_json::from_str::<Value>(s).ok())
            .filter(|v| !v.is_null() && v != &json!(false))
            .collect();
        if !details.is_empty() {
            m.insert("reasoning_details".into(), Value::Array(details));
        }
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && !m.contains_key("reasoning_content")
    {
        m.insert("reasoning_content".into(), json!(""));
    }
    let has_content = match m.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    if !has_content && !m.contains_key("tool_calls") {
        return None;
    }
    Some(Value::Object(m))
}

fn apply_anthropic_cache_control(messages: &mut [Value], tools: Option<&mut Vec<Value>>, cc: &Value) {
    if let Some(sys) = messages
        .iter_mut()
        .find(|m| matches!(m["role"].as_str(), Some("system" | "developer")))
    {
        mark_text(sys, cc);
    }
    if let Some(last) = tools.and_then(|t| t.last_mut()) {
        last["cache_control"] = cc.clone();
    }
    for m in messages.iter_mut().rev() {
        if matches!(m["role"].as_str(), Some("user" | "assistant")) && mark_text(m, cc) {
            break;
        }
    }
}

/// Put `cc` on the last text part of a message (a string content becomes one text part).
fn mark_text(message: &mut Value, cc: &Value) -> bool {
    match message.get_mut("content") {
        Some(Value::String(s)) if !s.is_empty() => {
            let text = std::mem::take(s);
            message["content"] = json!([{"type": "text", "text": text, "cache_control": cc}]);
            true
        }
        Some(Value::Array(parts)) => {
            if let Some(part) = parts.iter_mut().rev().find(|p| p["type"] == "text") {
                part["cache_control"] = cc.clone();
                true
            } else {
                false
            }
        }
        _ => false,
    }
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
    let reported_cached = details
        .and_then(|d| d.get("cached_tokens"))
        .filter(|v| !v.is_null())
        .or_else(|| raw.get("prompt_cache_hit_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let cache_write = n(details.and_then(|d| d.get("cache_write_tokens")));
    let cache_read = if cache_write > 0 {
        reported_cached.saturating_sub(cache_write)
    } else {
        reported_cached
    };
    let input = prompt.saturating_sub(cache_read).saturating_sub(cache_write);
    let output = n(raw.get("completion_tokens"));
    let mut usage = Usage {
        input,
        output,
        cache_read,
        cache_write,
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

/// A tool call being streamed: where it sits and how the server identifies it.
struct StreamingCall {
    content_index: usize,
    stream_index: Option<u64>,
}

async fn run(
    em: &mut Emitter,
    model: &Model,
    url: String,
    headers: Vec<(String, String)>,
    body: Value,
    policy: RetryPolicy,
) -> Result<(), ProviderError> {
    let header_map = http::header_map(&headers)?;
    let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
    let response = http::post_json(&url, header_map, body.into(), policy)
        .await
        .map_err(|e| e.message(ErrorBodyStyle::ErrorField))?;
    em.start().await?;

    let mut sse = SseStream::new(response.bytes_stream());
    let mut text_index: Option<usize> = None;
    let mut thinking_index: Option<usize> = None;
    let mut calls: Vec<StreamingCall> = Vec::new();
    let mut calls_by_id: HashMap<String, usize> = HashMap::new();

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
        let chunk: Value =
            serde_json::from_str(&event.data).map_err(|e| format!("Could not parse stream message as JSON: {e}"))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null() && *e != &json!(false)) {
            return Err(stream_error_message(error).into());
        }
        if !chunk.is_object() {
            continue;
        }
        if em.output.response_id.is_none() {
            if let Some(id) = chunk.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                em.output.response_id = Some(id.to_string());
            }
        }
        if let Some(m) = chunk.get("model").and_then(Value::as_str) {
            if !m.is_empty() && m != model.id && em.output.response_model.is_none() {
                em.output.response_model = Some(m.to_string());
            }
        }
        let chunk_usage = chunk.get("usage").filter(|u| u.is_object());
        if let Some(u) = chunk_usage {
            em.output.usage = parse_usage(u, model);
        }
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else {
            continue;
        };
        if chunk_usage.is_none() {
            if let Some(u) = choice.get("usage").filter(|u| u.is_object()) {
                em.output.usage = parse_usage(u, model);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            let (stop, message) = map_finish_reason(reason);
            em.output.stop_reason = stop;
            if message.is_some() {
                em.output.error_message = message;
            }
        }
        let Some(delta) = choice.get("delta").filter(|d| d.is_object()) else {
            continue;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
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
        let reasoning = ["reasoning_content", "reasoning", "reasoning_text"]
            .into_iter()
            .find_map(|f| {
                delta
                    .get(f)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(|s| (f, s))
            });
        if let Some((field, text)) = reasoning {
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
        if let Some(tool_calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for tc in tool_calls {
                let stream_index = tc.get("index").and_then(Value::as_u64);
                let id = tc.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
                let function = tc.get("function");
                let name = function
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
                        });
                        i
                    }
                };
                if let Some(call) = calls.iter_mut().find(|c| c.content_index == index) {
                    if call.stream_index.is_none() {
                        call.stream_index = stream_index;
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
                em.tool_call_delta(index, args).await?;
            }
        }
        if let Some(details) = delta.get("reasoning_details").and_then(Value::as_array) {
            for detail in details {
                if detail.get("type").and_then(Value::as_str) != Some("reasoning.encrypted") {
                    continue;
                }
                let (Some(id), Some(_)) = (
                    detail.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()),
                    detail.get("data").filter(|d| d.as_str().is_some_and(|s| !s.is_empty())),
                ) else {
                    continue;
                };
                let signature = detail.to_string();
                for i in calls.iter().map(|c| c.content_index) {
                    if let Some(block) = em.tool_call(i) {
                        if block.id == id {
                            block.thought_signature = Some(signature.clone());
                            break;
                        }
                    }
                }
            }
        }
    }

    // Blocks close in content order once the stream is over, as in pi.
    for index in 0..em.output.content.len() {
        match em.output.content[index] {
            Content::Text(_) => em.text_end(index).await?,
            Content::Thinking(_) => em.thinking_end(index).await?,
            Content::ToolCall(_) => em.tool_call_end(index).await?,
            Content::Image(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
        }
    }

    #[test]
    fn compat_detection_and_overrides() {
        let c = Compat::for_model(&model("cerebras", "https://api.cerebras.ai/v1", true));
        assert!(!c.supports_store && !c.supports_developer_role);
        let c = Compat::for_model(&model("zai", "https://api.z.ai/api/coding/paas/v4", true));
        assert_eq!(c.thinking_format, "zai");
        assert!(!c.supports_reasoning_effort);
        let mut m = model("custom", "http://localhost/v1", true);
        m.compat = Some(json!({"supportsStore": false, "maxTokensField": "max_tokens", "thinkingFormat": "qwen"}));
        let c = Compat::for_model(&m);
        assert!(!c.supports_store);
        assert_eq!(c.max_tokens_field, "max_tokens");
        assert_eq!(c.thinking_format, "qwen");
        assert!(c.supports_developer_role);
    }

    #[test]
    fn reasoning_formats() {
        let opts = |level| StreamOptions {
            reasoning: Some(level),
            ..Default::default()
        };
        let ctx = Context::default();
        let mut m = model("p", "http://x/v1", true);
        let c = Compat::for_model(&m);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::High), &c, CacheRetention::Short);
        assert_eq!(b["reasoning_effort"], "high");
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Off), &c, CacheRetention::Short);
        assert!(b.get("reasoning_effort").is_none());
        m.thinking_level_map = json!({"off": "minimal", "high": "max"}).as_object().cloned();
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::High), &c, CacheRetention::Short);
        assert_eq!(b["reasoning_effort"], "max");
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Off), &c, CacheRetention::Short);
        assert_eq!(b["reasoning_effort"], "minimal");

        m.thinking_level_map = None;
        m.compat = Some(json!({"thinkingFormat": "qwen-chat-template"}));
        let c = Compat::for_model(&m);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Low), &c, CacheRetention::Short);
        assert_eq!(
            b["chat_template_kwargs"],
            json!({"enable_thinking": true, "preserve_thinking": true})
        );
        m.compat = Some(json!({"thinkingFormat": "openrouter"}));
        let c = Compat::for_model(&m);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Off), &c, CacheRetention::Short);
        assert_eq!(b["reasoning"], json!({"effort": "none"}));
        m.compat = Some(json!({"thinkingFormat": "deepseek"}));
        let c = Compat::for_model(&m);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Medium), &c, CacheRetention::Short);
        assert_eq!(b["thinking"], json!({"type": "enabled"}));
        assert_eq!(b["reasoning_effort"], "medium");
    }

    #[test]
    fn max_tokens_defaults_and_field() {
        let mut m = model("p", "http://x/v1", false);
        m.max_tokens = 64_000;
        assert_eq!(max_tokens(&m, &StreamOptions::default()), Some(32_000));
        m.max_tokens = 0;
        assert_eq!(max_tokens(&m, &StreamOptions::default()), None);
        let c = Compat::for_model(&m);
        let b = build_body(
            &m,
            &Context::default(),
            &StreamOptions::default(),
            &c,
            CacheRetention::Short,
        );
        assert!(b.get("max_completion_tokens").is_none());
    }

    #[test]
    fn usage_excludes_cached_tokens() {
        let m = model("p", "http://x/v1", false);
        let u = parse_usage(
            &json!({"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 40}}),
            &m,
        );
        assert_eq!((u.input, u.output, u.cache_read, u.total_tokens), (60, 7, 40, 107));
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
