//! The Chat Completions request: headers, body, messages and tools as the TypeScript pi sends
//! them.

use serde_json::{json, Map, Value};

use super::messages::{each_message, message_tree, messages_size_estimate, transform_for};
use super::Compat;
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::json_tree::{write_body, Json, Produced};
use crate::providers::model_headers;
use crate::thinking::{budget_for_level, effective_reasoning, level_mapping, mapped_effort, LevelMapping};
use crate::types::{Context, Message, Model, ThinkingLevel, Tool};

/// Request headers: bearer auth (Cloudflare's AI Gateway's own header there), the model's
/// headers, session affinity, then the caller's.
pub fn build_headers(
    model: &Model,
    options: &StreamOptions,
    compat: &Compat,
    api_key: &str,
    retention: CacheRetention,
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("accept".to_string(), "application/json".to_string()),
        crate::providers::bearer_header(model, api_key),
    ];
    headers.extend(model_headers(model));
    if let Some(session) = options
        .session_id
        .as_ref()
        .filter(|_| retention != CacheRetention::None)
    {
        if compat.send_session_affinity_headers {
            let names: &[&str] = match compat.session_affinity_format.as_str() {
                "openrouter" => &["x-session-id"],
                "openai" => &["session_id", "x-client-request-id", "x-session-affinity"],
                _ => &["x-client-request-id", "x-session-affinity"],
            };
            for name in names {
                headers.push(((*name).to_string(), session.clone()));
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
    let messages = convert_messages(model, context, compat);
    Value::Object(body_map(model, context, options, compat, retention, Some(messages)))
}

/// Whether the messages get Anthropic-style `cache_control` marks (OpenRouter and the like).
fn marks_cache_control(compat: &Compat, retention: CacheRetention) -> bool {
    compat.cache_control_format.as_deref() == Some("anthropic") && retention != CacheRetention::None
}

/// The serialized body `stream` sends. Without a payload hook or cache-control marks (both
/// edit the body as a `Value`), the history is written from a tree that borrows its text
/// instead of being copied into a `Value` first: the same bytes for much less work.
pub fn request_payload(model: &Model, context: &Context, options: &StreamOptions) -> Result<Vec<u8>, String> {
    crate::providers::grammar_tools::check(model, &context.tools)?;
    let compat = Compat::for_model(model);
    let retention = crate::providers::cache_retention(options);
    if options.on_payload.is_some() || marks_cache_control(&compat, retention) {
        return serde_json::to_vec(&super::request_body(model, context, options)).map_err(|e| e.to_string());
    }
    let body = body_map(model, context, options, &compat, retention, None);
    let transformed = transform_for(model, context);
    let messages: Vec<&Message> = transformed.iter().map(|m| m.as_ref()).collect();
    let system = context.system_prompt.as_deref();
    // Each message is made as it is written and dropped after: the request of a long history
    // never holds the history as a tree beside its bytes.
    let grammar = crate::providers::grammar_tools::inputs(model, &context.tools);
    let produced = Produced::new(|emit| each_message(model, system, &messages, &compat, &grammar, emit));
    write_body(&body, "messages", &produced, messages_size_estimate(system, &messages))
}

/// Every field of the body; `messages` holds `messages`, or stays null for the caller to write
/// when `None` (never with cache-control marks, which edit the messages).
fn body_map(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &Compat,
    retention: CacheRetention,
    messages: Option<Vec<Value>>,
) -> Map<String, Value> {
    let mut messages = messages;
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Null); // placed here; filled below
    body.insert("stream".into(), json!(true));
    let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    let cache_key = match compat.prompt_cache_key_mode.as_str() {
        "enabled" => true,
        "auto" => model.base_url.contains("api.openai.com") || long,
        _ => false,
    };
    if cache_key && retention != CacheRetention::None {
        if let Some(session) = &options.session_id {
            body.insert("prompt_cache_key".into(), json!(clamp_prompt_cache_key(session)));
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
    let max = max_tokens(model, context, options);
    if max > 0 {
        body.insert(compat.max_tokens_field.clone(), json!(max));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), crate::providers::js_number(t));
    }
    let mut tools = if !context.tools.is_empty() {
        Some(convert_tools(&context.tools, compat))
    } else if compat.requires_tools_with_tool_history && has_tool_history(&context.messages) {
        Some(Vec::new())
    } else {
        None
    };
    if marks_cache_control(compat, retention) {
        let mut cc = json!({"type": "ephemeral"});
        if retention == CacheRetention::Long && compat.supports_long_cache_retention {
            cc["ttl"] = json!("1h");
        }
        if let Some(messages) = messages.as_mut() {
            apply_anthropic_cache_control(messages, tools.as_mut(), &cc);
        }
    }
    if let Some(messages) = messages {
        body.insert("messages".into(), Value::Array(messages));
    }
    if let Some(tools) = tools {
        let offered = !tools.is_empty();
        body.insert("tools".into(), Value::Array(tools));
        if offered && compat.zai_tool_stream {
            body.insert("tool_stream".into(), json!(true));
        }
    }
    if let Some(priority) = &compat.vllm_priority {
        body.insert("priority".into(), priority.clone());
    }

    let effort = effective_reasoning(model, options.reasoning);
    let budget = thinking_budget(model, options, effort, max);
    add_reasoning(&mut body, model, compat, effort, budget);
    if let (Some(field), Some(budget)) = (&compat.thinking_token_budget_field, budget) {
        body.insert(field.clone(), json!(budget));
    }

    if let Some(routing) = &compat.open_router_routing {
        body.insert("provider".into(), routing.clone());
    }
    if let Some(routing) = &compat.vercel_gateway_routing {
        let mut gateway = Map::new();
        for key in ["only", "order"] {
            if let Some(v) = routing.get(key).filter(|v| is_truthy(v)) {
                gateway.insert(key.into(), v.clone());
            }
        }
        if !gateway.is_empty() {
            body.insert("providerOptions".into(), json!({"gateway": gateway}));
        }
    }
    body
}

/// Whether a JSON value counts as set the way JavaScript's truthiness sees it.
fn is_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        _ => true,
    }
}

/// OpenAI accepts prompt cache keys of at most 64 characters.
fn clamp_prompt_cache_key(key: &str) -> &str {
    match key.char_indices().nth(64) {
        Some((at, _)) => &key[..at],
        None => key,
    }
}

/// The output cap: the option, else the model's limit, fitted into the context window;
/// 0 (not sent) when the model declares no limit and the caller sets none.
pub fn max_tokens(model: &Model, context: &Context, options: &StreamOptions) -> u64 {
    crate::providers::output_cap::base_max_tokens(model, context, options.max_tokens)
}

/// The thinking budget of a level, leaving room for the answer under the output cap.
fn thinking_budget(model: &Model, options: &StreamOptions, effort: Option<ThinkingLevel>, max: u64) -> Option<u64> {
    let level = effort.filter(|_| model.reasoning)?;
    let budget = budget_for_level(level, &options.thinking_budgets);
    let ceiling = if max > 0 { max } else { model.max_tokens };
    let budget = budget.min(ceiling.saturating_sub(1024));
    (budget > 0).then_some(budget)
}

/// A map entry for `level`, or the level's own name when the map has none (`None` when it
/// maps to something that is not a string).
fn effort_value(model: &Model, level: ThinkingLevel) -> Option<String> {
    match model.thinking_level_map.as_ref().and_then(|m| m.get(level.as_str())) {
        None => Some(level.as_str().to_string()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    }
}

/// `thinkingLevelMap[level] ?? level`: a null entry falls back to the level's name.
fn effort_or_name(model: &Model, level: ThinkingLevel) -> String {
    mapped_effort(model, level)
}

fn add_reasoning(
    body: &mut Map<String, Value>,
    model: &Model,
    compat: &Compat,
    effort: Option<ThinkingLevel>,
    budget: Option<u64>,
) {
    if !model.reasoning {
        return;
    }
    let off_mapping = level_mapping(model, ThinkingLevel::Off);
    match compat.thinking_format.as_str() {
        "zai" => {
            let thinking = match effort {
                Some(_) => json!({"type": "enabled", "clear_thinking": false}),
                None => json!({"type": "disabled"}),
            };
            body.insert("thinking".into(), thinking);
            if let Some(v) = effort
                .filter(|_| compat.supports_reasoning_effort)
                .and_then(|l| effort_value(model, l))
            {
                body.insert("reasoning_effort".into(), json!(v));
            }
        }
        "qwen" => {
            body.insert("enable_thinking".into(), json!(effort.is_some()));
            if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                body.insert("reasoning_effort".into(), json!(effort_or_name(model, level)));
            }
        }
        "qwen-chat-template" => {
            body.insert(
                "chat_template_kwargs".into(),
                json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
            );
        }
        "chat-template" => {
            if let Some(values) = chat_template_values(model, effort, compat.chat_template_kwargs.as_ref(), budget) {
                body.insert("chat_template_kwargs".into(), Value::Object(values));
            }
        }
        "baseten" => {
            if let Some(values) = chat_template_values(model, effort, compat.chat_template_args.as_ref(), budget) {
                body.insert("chat_template_args".into(), Value::Object(values));
            }
            if compat.supports_reasoning_effort {
                let value = match effort {
                    Some(level) => effort_value(model, level),
                    None => match off_mapping {
                        LevelMapping::Value(v) => Some(v.to_string()),
                        _ => None,
                    },
                };
                if let Some(v) = value {
                    body.insert("reasoning_effort".into(), json!(v));
                }
            }
        }
        "deepseek" => {
            if effort.is_some() {
                body.insert("thinking".into(), json!({"type": "enabled"}));
            } else if off_mapping != LevelMapping::Removed {
                body.insert("thinking".into(), json!({"type": "disabled"}));
            }
            if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                body.insert("reasoning_effort".into(), json!(effort_or_name(model, level)));
            }
        }
        "openrouter" => match effort {
            Some(level) => {
                body.insert("reasoning".into(), json!({"effort": effort_or_name(model, level)}));
            }
            None => match off_mapping {
                LevelMapping::Removed => {}
                LevelMapping::Value(v) => {
                    body.insert("reasoning".into(), json!({"effort": v}));
                }
                LevelMapping::Absent => {
                    body.insert("reasoning".into(), json!({"effort": "none"}));
                }
            },
        },
        "ant-ling" => {
            if let Some(level) = effort {
                if let LevelMapping::Value(v) = level_mapping(model, level) {
                    body.insert("reasoning".into(), json!({"effort": v}));
                }
            }
        }
        "together" => {
            body.insert("reasoning".into(), json!({"enabled": effort.is_some()}));
            if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                body.insert("reasoning_effort".into(), json!(effort_or_name(model, level)));
            }
        }
        "string-thinking" => match effort {
            Some(level) => {
                body.insert("thinking".into(), json!(effort_or_name(model, level)));
            }
            None => match off_mapping {
                LevelMapping::Removed => {}
                LevelMapping::Value(v) => {
                    body.insert("thinking".into(), json!(v));
                }
                LevelMapping::Absent => {
                    body.insert("thinking".into(), json!("none"));
                }
            },
        },
        _ if compat.supports_reasoning_effort => match effort {
            Some(level) => {
                body.insert("reasoning_effort".into(), json!(effort_or_name(model, level)));
            }
            None => {
                if let LevelMapping::Value(v) = off_mapping {
                    body.insert("reasoning_effort".into(), json!(v));
                }
            }
        },
        _ => {}
    }
}

/// `chat_template_kwargs` / `chat_template_args` from their template: plain values as they
/// are; `{$var: "thinking.enabled"}` and `{$var: "thinking.budget"}` filled in; any other
/// object is the mapped effort (left out when `omitWhenOff` and thinking is off).
fn chat_template_values(
    model: &Model,
    effort: Option<ThinkingLevel>,
    template: Option<&Map<String, Value>>,
    budget: Option<u64>,
) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    for (key, value) in template? {
        let resolved = match value {
            Value::Object(spec) => {
                if effort.is_none() && spec.get("omitWhenOff").is_some_and(is_truthy) {
                    None
                } else {
                    match spec.get("$var").and_then(Value::as_str) {
                        Some("thinking.enabled") => Some(json!(effort.is_some())),
                        Some("thinking.budget") => budget.map(|b| json!(b)),
                        _ => {
                            let mapping = level_mapping(model, effort.unwrap_or(ThinkingLevel::Off));
                            match (mapping, effort) {
                                (LevelMapping::Value(v), _) => Some(json!(v)),
                                (LevelMapping::Absent, Some(level)) => Some(json!(level.as_str())),
                                _ => None,
                            }
                        }
                    }
                }
            }
            other => Some(other.clone()),
        };
        if let Some(v) = resolved {
            out.insert(key.clone(), v);
        }
    }
    (!out.is_empty()).then_some(out)
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        Message::User(_) => false,
    })
}

/// Tools in the Chat Completions shape. `strict` is sent only to servers that take it, and
/// then as `false`: strict schemas are opt-in per tool. A grammar tool goes as a `custom`
/// tool to servers that take those.
pub fn convert_tools(tools: &[Tool], compat: &Compat) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            let grammar = compat
                .supports_openai_grammar_tools
                .then(|| crate::providers::grammar_tools::grammar_of(tool))
                .flatten();
            if let Some(grammar) = grammar {
                return json!({"type": "custom", "custom": {
                    "name": tool.name,
                    "description": tool.description,
                    "format": {"type": "grammar", "grammar": {"syntax": grammar.syntax, "definition": grammar.definition}},
                }});
            }
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

/// Messages in the Chat Completions shape (system prompt first).
pub fn convert_messages(model: &Model, context: &Context, compat: &Compat) -> Vec<Value> {
    let transformed = transform_for(model, context);
    let messages: Vec<&Message> = transformed.iter().map(|m| m.as_ref()).collect();
    let grammar = crate::providers::grammar_tools::inputs(model, &context.tools);
    message_tree(model, context.system_prompt.as_deref(), &messages, compat, &grammar)
        .iter()
        .map(Json::to_value)
        .collect()
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
    use std::sync::Arc;

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
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Off), &c, CacheRetention::Short);
        assert_eq!(b["thinking"], json!({"type": "disabled"}));

        m.compat = Some(json!({"thinkingFormat": "zai", "supportsReasoningEffort": false}));
        let c = Compat::for_model(&m);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::High), &c, CacheRetention::Short);
        assert_eq!(b["thinking"], json!({"type": "enabled", "clear_thinking": false}));
        assert!(b.get("reasoning_effort").is_none() && b.get("enable_thinking").is_none());
        m.compat = Some(json!({"thinkingFormat": "together"}));
        let c = Compat::for_model(&m);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Low), &c, CacheRetention::Short);
        assert_eq!(
            (b["reasoning"].clone(), b["reasoning_effort"].clone()),
            (json!({"enabled": true}), json!("low"))
        );
        m.compat = Some(json!({"thinkingFormat": "string-thinking"}));
        let c = Compat::for_model(&m);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Off), &c, CacheRetention::Short);
        assert_eq!(b["thinking"], "none");
        m.compat = Some(json!({
            "thinkingFormat": "chat-template",
            "supportsThinkingTokenBudget": true,
            "chatTemplateKwargs": {
                "enable_thinking": {"$var": "thinking.enabled"},
                "budget": {"$var": "thinking.budget", "omitWhenOff": true},
                "effort": {},
                "fixed": 3
            }
        }));
        let c = Compat::for_model(&m);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Medium), &c, CacheRetention::Short);
        assert_eq!(
            b["chat_template_kwargs"],
            json!({"enable_thinking": true, "budget": 8192, "effort": "medium", "fixed": 3})
        );
        assert_eq!(b["thinking_token_budget"], 8192);
        let b = build_body(&m, &ctx, &opts(ThinkingLevel::Off), &c, CacheRetention::Short);
        assert_eq!(b["chat_template_kwargs"], json!({"enable_thinking": false, "fixed": 3}));
        assert!(b.get("thinking_token_budget").is_none());
    }

    #[test]
    fn tools_and_session_affinity_follow_compat() {
        use crate::types::{AssistantMessage, Content, StopReason, ToolCall};
        let tool = Tool {
            constrained_sampling: None,
            name: "read".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        };
        let m = model("p", "http://x/v1", false);
        let c = Compat::for_model(&m);
        assert_eq!(
            convert_tools(std::slice::from_ref(&tool), &c)[0]["function"].get("strict"),
            None
        );
        let mut strict = m.clone();
        strict.compat = Some(json!({"supportsStrictMode": true}));
        let c = Compat::for_model(&strict);
        assert_eq!(convert_tools(&[tool], &c)[0]["function"]["strict"], false);

        // History with a tool call but no tools offered: no `tools` unless compat asks for it.
        let ctx = Context {
            messages: vec![Message::Assistant(Arc::new(AssistantMessage {
                content: vec![Content::ToolCall(ToolCall {
                    id: "c".into(),
                    name: "read".into(),
                    ..Default::default()
                })],
                stop_reason: StopReason::ToolUse,
                ..Default::default()
            }))],
            ..Default::default()
        };
        let c = Compat::for_model(&m);
        assert!(
            build_body(&m, &ctx, &StreamOptions::default(), &c, CacheRetention::Short)
                .get("tools")
                .is_none()
        );
        let mut needs = m.clone();
        needs.compat = Some(json!({"requiresToolsWithToolHistory": true}));
        let c = Compat::for_model(&needs);
        assert_eq!(
            build_body(&needs, &ctx, &StreamOptions::default(), &c, CacheRetention::Short)["tools"],
            json!([])
        );

        let opts = StreamOptions {
            session_id: Some("s1".into()),
            ..Default::default()
        };
        let names = |m: &Model| -> Vec<String> {
            build_headers(m, &opts, &Compat::for_model(m), "k", CacheRetention::Short)
                .into_iter()
                .map(|(n, _)| n)
                .skip(2)
                .collect()
        };
        assert!(names(&m).is_empty());
        assert_eq!(
            names(&model("openrouter", "https://openrouter.ai/api/v1", false)),
            ["x-session-id"]
        );
        let mut affinity = m.clone();
        affinity.compat = Some(json!({"sendSessionAffinityHeaders": true}));
        assert_eq!(
            names(&affinity),
            ["session_id", "x-client-request-id", "x-session-affinity"]
        );
        affinity.compat =
            Some(json!({"sendSessionAffinityHeaders": true, "sessionAffinityFormat": "openai-nosession"}));
        assert_eq!(names(&affinity), ["x-client-request-id", "x-session-affinity"]);
    }

    #[test]
    fn max_tokens_defaults_and_field() {
        let mut m = model("p", "http://x/v1", false);
        m.max_tokens = 64_000;
        let empty = Context::default();
        // No fixed 32000 cap any more: the model's limit, fitted to the window.
        assert_eq!(max_tokens(&m, &empty, &StreamOptions::default()), 64_000);
        m.max_tokens = 200_000;
        assert_eq!(max_tokens(&m, &empty, &StreamOptions::default()), 128_000 - 4096);
        m.max_tokens = 0;
        assert_eq!(max_tokens(&m, &empty, &StreamOptions::default()), 0);
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

    /// A conversation that exercises every branch of the message conversion.
    fn rich_context() -> Context {
        use crate::types::{
            AssistantMessage, Content, Extra, StopReason, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
            UserContent, UserMessage,
        };
        let assistant = |content: Vec<Content>, provider: &str| {
            Message::Assistant(Arc::new(AssistantMessage {
                content,
                api: "openai-completions".into(),
                provider: provider.into(),
                model: "mock-model".into(),
                stop_reason: StopReason::ToolUse,
                ..Default::default()
            }))
        };
        let call = |id: &str, signature: Option<&str>| {
            Content::ToolCall(ToolCall {
                id: id.into(),
                name: "read".into(),
                arguments: json!({"path": "a \"b\".txt"}),
                thought_signature: signature.map(str::to_string),
                extra: Extra::new(),
            })
        };
        let result = |id: &str, content: Vec<Content>| {
            Message::ToolResult(Arc::new(ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "read".into(),
                content,
                details: None,
                is_error: false,
                duration_ms: None,
                timestamp: 1,
                extra: Extra::new(),
            }))
        };
        Context {
            system_prompt: Some("You are \"pi\".\nBe brief.".into()),
            messages: vec![
                Message::user_text("hello\twith \u{e9}scapes"),
                Message::User(Arc::new(UserMessage {
                    content: UserContent::Blocks(vec![Content::text("look"), Content::image("aGk=", "image/png")]),
                    timestamp: 2,
                    extra: Extra::new(),
                })),
                assistant(
                    vec![
                        Content::Thinking(ThinkingContent {
                            thinking: "pondering".into(),
                            thinking_signature: Some("reasoning_content".into()),
                            ..Default::default()
                        }),
                        Content::Text(TextContent {
                            text: "I will read.".into(),
                            ..Default::default()
                        }),
                        call(
                            "call|item1",
                            Some(r#"{"type":"reasoning.encrypted","id":"call","data":"x"}"#),
                        ),
                        call("c2", None),
                    ],
                    "p",
                ),
                result("call|item1", vec![Content::text("file text")]),
                result("c2", vec![Content::image("aGk=", "image/png")]),
                Message::User(Arc::new(UserMessage {
                    content: UserContent::Text("next".into()),
                    timestamp: 3,
                    extra: Extra::new(),
                })),
                assistant(vec![Content::text("from elsewhere"), call("c3", None)], "other"),
            ],
            tools: vec![Tool {
                constrained_sampling: None,
                name: "read".into(),
                description: "Read a file".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
        }
    }

    #[test]
    fn the_borrowed_payload_is_byte_for_byte_the_value_body() {
        let ctx = rich_context();
        let compats = [
            json!({}),
            json!({"requiresAssistantAfterToolResult": true, "requiresToolResultName": true}),
            json!({"requiresThinkingAsText": true, "supportsDeveloperRole": true}),
            json!({"requiresReasoningContentOnAssistantMessages": true, "zaiToolStream": true}),
        ];
        for (k, compat) in compats.into_iter().enumerate() {
            for reasoning in [false, true] {
                let mut m = model("p", "http://x/v1", reasoning);
                m.input = vec![crate::types::InputKind::Text, crate::types::InputKind::Image];
                m.compat = Some(compat.clone());
                let opts = StreamOptions {
                    session_id: Some("s".into()),
                    temperature: Some(0.5),
                    ..Default::default()
                };
                let value = super::super::request_body(&m, &ctx, &opts);
                let bytes = request_payload(&m, &ctx, &opts).expect("payload");
                assert_eq!(
                    String::from_utf8(bytes).expect("utf-8"),
                    serde_json::to_string(&value).expect("value"),
                    "compat {k}, reasoning {reasoning}"
                );
            }
        }
    }
}
