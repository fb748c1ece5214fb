//! The Chat Completions request: headers, body, messages and tools as the TypeScript pi sends
//! them.

use serde_json::{json, Map, Value};

use super::Compat;
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::model_headers;
use crate::thinking::{effective_reasoning, level_mapping, mapped_effort, LevelMapping};
use crate::transform::{sanitize_surrogates, transform_messages};
use crate::types::{Content, Context, Message, Model, ThinkingLevel, Tool, ToolResultMessage, UserContent};

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
        body.insert("temperature".into(), crate::providers::js_number(t));
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
    let messages: Vec<&Message> = messages.iter().map(|m| m.as_ref()).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::openai_completions::tests::model;

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
    fn temperature_is_written_as_javascript_does() {
        let m = model("p", "http://x/v1", false);
        let c = Compat::for_model(&m);
        for (t, text) in [(1.0, "1"), (0.7, "0.7"), (0.0, "0")] {
            let opts = StreamOptions {
                temperature: Some(t),
                ..Default::default()
            };
            let b = build_body(&m, &Context::default(), &opts, &c, CacheRetention::Short);
            assert_eq!(b["temperature"].to_string(), text);
        }
    }
}
