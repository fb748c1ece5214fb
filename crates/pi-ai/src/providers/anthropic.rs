//! The `anthropic-messages` API: request body, headers and the Messages SSE grammar.
//!
//! Request rules: user text blocks with images, tool results grouped into one user turn,
//! thinking replayed with its signature (or as text when it has none), redacted thinking
//! replayed as `redacted_thinking`, `cache_control` on the system prompt, the last tool and the
//! last user block, `eager_input_streaming` on tools, adaptive or budget thinking, and an
//! explicit `thinking:{type:"disabled"}` when a reasoning model runs with thinking off.

use futures::FutureExt;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::cost::calculate_cost;
use crate::events::AssistantStream;
use crate::http::{self, ErrorBodyStyle, RetryPolicy};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::json_tree::body_bytes;
use crate::providers::output_cap::{base_max_tokens, fit_to_context};
use crate::providers::{apply_payload_hook, cache_retention, compat_bool, join_url, model_headers, post_bytes};
use crate::sse::{SseError, SseStream};
use crate::stream_driver::{error_stream, spawn_provider_with, AbortMessages, Emitter, ProviderError};
use crate::thinking::{adjust_max_tokens_for_thinking, effective_reasoning, level_mapping, LevelMapping};
use crate::transform::{sanitize_surrogates, transform_messages};
use crate::types::{Content, Context, Message, Model, StopReason, ThinkingLevel, Tool};

/// The Anthropic SDK's cancelled-request texts: its own while connecting, the fetch body's
/// once the stream is being read.
const ANTHROPIC_ABORT_MESSAGES: AbortMessages = AbortMessages {
    before_start: "Request was aborted.",
    after_start: "This operation was aborted",
};
const API_VERSION: &str = "2023-06-01";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const SERVER_SIDE_FALLBACK_BETA: &str = "server-side-fallback-2026-07-01";
/// Version of the CLI whose identity subscription (OAuth) tokens require.
const CLAUDE_CODE_VERSION: &str = "2.1.322";
const CLAUDE_CODE_IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";
/// Canonical casing of the CLI's tool names; subscription tokens expect these names.
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// Whether the model thinks adaptively (an effort instead of a token budget): the model's
/// `compat.forceAdaptiveThinking`, else known from its id (catalogue entries that predate the
/// flag).
fn uses_adaptive_thinking(model: &Model) -> bool {
    compat_bool(model, "forceAdaptiveThinking").unwrap_or_else(|| supports_adaptive_thinking(&model.id))
}

/// Models with adaptive thinking (effort instead of a token budget).
fn supports_adaptive_thinking(model_id: &str) -> bool {
    [
        "opus-4-6",
        "opus-4.6",
        "opus-4-7",
        "opus-4.7",
        "sonnet-4-6",
        "sonnet-4.6",
    ]
    .iter()
    .any(|m| model_id.contains(m))
}

fn compat_flag(model: &Model, name: &str) -> bool {
    compat_bool(model, name).unwrap_or(true)
}

fn is_oauth_token(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

fn to_claude_code_name(name: &str) -> String {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .map_or_else(|| name.to_string(), |t| (*t).to_string())
}

fn from_claude_code_name(name: &str, tools: &[Tool]) -> String {
    tools
        .iter()
        .find(|t| t.name.eq_ignore_ascii_case(name))
        .map_or_else(|| name.to_string(), |t| t.name.clone())
}

/// Anthropic accepts tool-use ids of `[a-zA-Z0-9_-]{1,64}`.
fn normalize_tool_call_id(id: &str) -> String {
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
}

/// How the thinking part of the request is configured.
#[derive(Debug, Clone, PartialEq)]
enum Thinking {
    /// Non-reasoning model: no `thinking` field.
    NotApplicable,
    Disabled,
    Adaptive {
        effort: String,
    },
    Budget {
        budget_tokens: u64,
    },
}

/// Everything the request body depends on besides the context.
#[derive(Debug, Clone)]
struct RequestPlan {
    max_tokens: u64,
    thinking: Thinking,
    cache_control: Option<Value>,
    oauth: bool,
    /// Unsigned thinking is replayed as thinking with an empty signature (`allowEmptySignature`).
    allow_empty_signature: bool,
}

fn plan_request(model: &Model, context: &Context, options: &StreamOptions, oauth: bool) -> RequestPlan {
    let mut max_tokens = base_max_tokens(model, context, options.max_tokens);
    let reasoning = effective_reasoning(model, options.reasoning);
    let thinking = match (model.reasoning, reasoning) {
        (false, _) => Thinking::NotApplicable,
        // A model whose `off` is mapped to null cannot turn thinking off: nothing is sent.
        (true, None) if level_mapping(model, ThinkingLevel::Off) == LevelMapping::Removed => Thinking::NotApplicable,
        (true, None) => Thinking::Disabled,
        (true, Some(level)) if uses_adaptive_thinking(model) => Thinking::Adaptive {
            effort: adaptive_effort(model, level),
        },
        (true, Some(level)) => {
            let (adjusted, budget) =
                adjust_max_tokens_for_thinking(max_tokens, model.max_tokens, level, &options.thinking_budgets);
            max_tokens = fit_to_context(model, context, adjusted);
            let budget = budget.min(max_tokens.saturating_sub(1024));
            Thinking::Budget {
                budget_tokens: if budget == 0 { 1024 } else { budget },
            }
        }
    };
    let cache_control = match cache_retention(options) {
        CacheRetention::None => None,
        CacheRetention::Long if compat_flag(model, "supportsLongCacheRetention") => {
            Some(json!({"type": "ephemeral", "ttl": "1h"}))
        }
        _ => Some(json!({"type": "ephemeral"})),
    };
    RequestPlan {
        max_tokens,
        thinking,
        cache_control,
        oauth,
        allow_empty_signature: compat_bool(model, "allowEmptySignature").unwrap_or(false),
    }
}

fn adaptive_effort(model: &Model, level: ThinkingLevel) -> String {
    if let LevelMapping::Value(v) = level_mapping(model, level) {
        return v.to_string();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_string()
}

/// The request body (before the payload hook).
fn build_body(model: &Model, context: &Context, options: &StreamOptions, plan: &RequestPlan) -> Value {
    let messages = convert_messages(&context.messages, model, plan);
    Value::Object(body_map(model, context, options, plan, Value::Array(messages)))
}

/// The serialized body. Without a payload hook (which edits a `Value`), the history is written
/// from a tree that borrows the message text (see [`crate::providers::json_tree`]).
fn request_payload(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    plan: &RequestPlan,
) -> Result<Vec<u8>, String> {
    if options.on_payload.is_some() {
        let body = apply_payload_hook(options, model, build_body(model, context, options, plan));
        return serde_json::to_vec(&body).map_err(|e| e.to_string());
    }
    let body = body_map(model, context, options, plan, Value::Null);
    let transformed = transform_messages(&context.messages, model, &|id, _| normalize_tool_call_id(id));
    let messages: Vec<&Message> = transformed.iter().map(|m| m.as_ref()).collect();
    let tree = message_tree(&messages, plan);
    body_bytes(&body, "messages", &tree)
}

/// Every field of the body, with `messages` (null for the caller to write).
fn body_map(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    plan: &RequestPlan,
    messages: Value,
) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), messages);
    body.insert("max_tokens".into(), json!(plan.max_tokens));
    body.insert("stream".into(), json!(true));
    let with_cache = |mut block: Map<String, Value>| {
        if let Some(cc) = &plan.cache_control {
            block.insert("cache_control".into(), cc.clone());
        }
        Value::Object(block)
    };
    let mut system = Vec::new();
    if plan.oauth {
        let mut b = Map::new();
        b.insert("type".into(), json!("text"));
        b.insert("text".into(), json!(CLAUDE_CODE_IDENTITY));
        system.push(with_cache(b));
    }
    if let Some(prompt) = context.system_prompt.as_deref() {
        let mut b = Map::new();
        b.insert("type".into(), json!("text"));
        b.insert("text".into(), json!(sanitize_surrogates(prompt)));
        system.push(with_cache(b));
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    let thinking_on = matches!(plan.thinking, Thinking::Adaptive { .. } | Thinking::Budget { .. });
    let takes_temperature = compat_bool(model, "supportsTemperature").unwrap_or(true);
    if let (Some(t), false, true) = (options.temperature, thinking_on, takes_temperature) {
        body.insert("temperature".into(), crate::providers::js_number(t));
    }
    if !context.tools.is_empty() {
        body.insert("tools".into(), Value::Array(convert_tools(&context.tools, model, plan)));
    }
    match &plan.thinking {
        Thinking::NotApplicable => {}
        Thinking::Disabled => {
            body.insert("thinking".into(), json!({"type": "disabled"}));
        }
        Thinking::Adaptive { effort } => {
            body.insert("thinking".into(), json!({"type": "adaptive", "display": "summarized"}));
            body.insert("output_config".into(), json!({"effort": effort}));
        }
        Thinking::Budget { budget_tokens } => {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget_tokens, "display": "summarized"}),
            );
        }
    }
    if let Some(user_id) = options
        .metadata
        .as_ref()
        .and_then(|m| m.get("user_id"))
        .and_then(Value::as_str)
    {
        body.insert("metadata".into(), json!({"user_id": user_id}));
    }
    body
}

fn convert_tools(tools: &[Tool], model: &Model, plan: &RequestPlan) -> Vec<Value> {
    let eager = compat_flag(model, "supportsEagerToolInputStreaming");
    let cache_control = plan
        .cache_control
        .as_ref()
        .filter(|_| compat_flag(model, "supportsCacheControlOnTools"));
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let mut t = Map::new();
            let name = if plan.oauth {
                to_claude_code_name(&tool.name)
            } else {
                tool.name.clone()
            };
            t.insert("name".into(), json!(name));
            t.insert("description".into(), json!(tool.description));
            if eager {
                t.insert("eager_input_streaming".into(), json!(true));
            }
            t.insert("input_schema".into(), input_schema(&tool.parameters));
            if let (Some(cc), true) = (cache_control, i == last) {
                t.insert("cache_control".into(), cc.clone());
            }
            Value::Object(t)
        })
        .collect()
}

/// A tool's `input_schema`: an object schema with its properties and required list, and the
/// root keywords the API accepts (`additionalProperties`, `$defs`, `definitions`); other root
/// keywords (`anyOf`, ...) are rejected by the API and left out.
fn input_schema(parameters: &Value) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert(
        "properties".into(),
        parameters.get("properties").cloned().unwrap_or_else(|| json!({})),
    );
    schema.insert(
        "required".into(),
        parameters.get("required").cloned().unwrap_or_else(|| json!([])),
    );
    for key in ["additionalProperties", "$defs", "definitions"] {
        if let Some(v) = parameters.get(key) {
            schema.insert(key.into(), v.clone());
        }
    }
    Value::Object(schema)
}

/// The `anthropic-beta` features: a configured `anthropic-beta` header (model or request)
/// replaces the list; otherwise those the request needs.
fn beta_features(model: &Model, context: &Context, options: &StreamOptions, plan: &RequestPlan) -> Vec<String> {
    let configured = model_headers(model)
        .into_iter()
        .chain(options.headers.iter().cloned())
        .rev()
        .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"));
    let mut features: Vec<String> = Vec::new();
    let mut add = |f: &str| {
        if !f.is_empty() && !features.iter().any(|x| x == f) {
            features.push(f.to_string());
        }
    };
    if let Some((_, value)) = configured {
        value.split(',').map(str::trim).for_each(&mut add);
        return features;
    }
    if plan.oauth {
        add("claude-code-20250219");
        add("oauth-2025-04-20");
    }
    if !context.tools.is_empty() && !compat_flag(model, "supportsEagerToolInputStreaming") {
        add(FINE_GRAINED_TOOL_STREAMING_BETA);
    }
    // Interleaved thinking only when the model thinks on a budget in this request.
    if matches!(plan.thinking, Thinking::Budget { .. }) {
        add(INTERLEAVED_THINKING_BETA);
    }
    let fallbacks = model
        .compat
        .as_ref()
        .and_then(|c| c.get("allowedFallbackModels"))
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if fallbacks {
        add(SERVER_SIDE_FALLBACK_BETA);
    }
    features
}

fn build_headers(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
    plan: &RequestPlan,
) -> Result<HeaderMap, String> {
    let oauth = is_oauth_token(api_key);
    let betas = beta_features(model, context, options, plan);
    let mut headers: Vec<(String, String)> = vec![
        ("accept".into(), "application/json".into()),
        ("anthropic-version".into(), API_VERSION.into()),
        ("anthropic-dangerous-direct-browser-access".into(), "true".into()),
    ];
    if model.provider == "github-copilot" {
        headers.push(("authorization".into(), format!("Bearer {api_key}")));
    } else if oauth {
        headers.push(("authorization".into(), format!("Bearer {api_key}")));
        headers.push(("user-agent".into(), format!("claude-cli/{CLAUDE_CODE_VERSION}")));
        headers.push(("x-app".into(), "cli".into()));
    } else if model.provider == "cloudflare-ai-gateway" {
        headers.push(("cf-aig-authorization".into(), format!("Bearer {api_key}")));
    } else {
        headers.push(("x-api-key".into(), api_key.to_string()));
    }
    if !oauth && model.provider != "github-copilot" {
        if let Some(session) = options
            .session_id
            .as_ref()
            .filter(|_| cache_retention(options) != CacheRetention::None)
        {
            let openrouter = model.provider == "openrouter" || model.base_url.contains("openrouter.ai");
            let format = crate::providers::compat_str(model, "sessionAffinityFormat").unwrap_or(if openrouter {
                "openrouter"
            } else {
                ""
            });
            if compat_bool(model, "sendSessionAffinityHeaders").unwrap_or(openrouter) {
                let name = if format == "openrouter" {
                    "x-session-id"
                } else {
                    "x-session-affinity"
                };
                headers.push((name.into(), session.clone()));
            }
        }
    }
    headers.extend(
        model_headers(model)
            .into_iter()
            .chain(options.headers.iter().cloned())
            .filter(|(name, _)| !name.eq_ignore_ascii_case("anthropic-beta")),
    );
    if !betas.is_empty() {
        headers.push(("anthropic-beta".into(), betas.join(",")));
    }
    http::header_map(&headers)
}

fn map_stop_reason(reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" => Ok(StopReason::Error),
        other => Err(ProviderError::Message(format!("Unhandled stop reason: {other}"))),
    }
}

/// Stream a reply through the Anthropic Messages API.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let plan = plan_request(
        model,
        context,
        &options,
        is_oauth_token(&api_key) && model.provider != "github-copilot",
    );
    let payload = match request_payload(model, context, &options, &plan) {
        Ok(p) => p,
        Err(e) => return error_stream(model, e),
    };
    let headers = match build_headers(model, context, &options, &api_key, &plan) {
        Ok(h) => h,
        Err(e) => return error_stream(model, e),
    };
    // The beta endpoint: features go in `anthropic-beta`.
    let url = join_url(&model.base_url, "v1/messages?beta=true");
    let policy = RetryPolicy::from_options(&options);
    let tools = context.tools.clone();
    let model_for_body = model.clone();
    let oauth = plan.oauth;
    spawn_provider_with(
        model,
        options.cancel.clone(),
        ANTHROPIC_ABORT_MESSAGES,
        move |emitter| {
            async move {
                let response =
                    post_bytes(&url, headers, payload, policy, |e| e.message(ErrorBodyStyle::WholeBody)).await?;
                let mut sse = SseStream::new(response.bytes_stream());
                read_events(emitter, &mut sse, &model_for_body, &tools, oauth).await
            }
            .boxed()
        },
    )
}

/// Per Anthropic content-block index: our content index.
#[derive(Debug, Default)]
struct BlockMap(Vec<(u64, usize)>);

impl BlockMap {
    fn get(&self, anthropic_index: u64) -> Option<usize> {
        self.0.iter().find(|(a, _)| *a == anthropic_index).map(|(_, i)| *i)
    }
}

/// A `content_block_delta`: text, thinking, tool-call JSON or a thinking signature for the
/// block at its index (unknown blocks and delta types are ignored).
async fn apply_delta(em: &mut Emitter, blocks: &BlockMap, d: &delta::BlockDelta<'_>) -> Result<(), ProviderError> {
    let Some(i) = d.index.0.and_then(|a| blocks.get(a)) else {
        return Ok(());
    };
    let Some(body) = &d.delta.0 else {
        return Ok(());
    };
    match body.kind.get().unwrap_or_default() {
        "text_delta" => em.text_delta(i, body.text.get().unwrap_or_default()).await?,
        "thinking_delta" => em.thinking_delta(i, body.thinking.get().unwrap_or_default()).await?,
        "input_json_delta" => {
            em.tool_call_delta(i, body.partial_json.get().unwrap_or_default())
                .await?
        }
        "signature_delta" => {
            if let Some(t) = em.thinking_block(i) {
                let sig = t.thinking_signature.get_or_insert_with(String::new);
                sig.push_str(body.signature.get().unwrap_or_default());
            }
        }
        _ => {}
    }
    Ok(())
}

async fn read_events<S, E>(
    em: &mut Emitter,
    sse: &mut SseStream<S>,
    model: &Model,
    tools: &[Tool],
    oauth: bool,
) -> Result<(), ProviderError>
where
    S: futures::Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    E: crate::sse::TransportError,
{
    let mut blocks = BlockMap::default();
    let mut saw_start = false;
    let mut saw_stop = false;
    // What Anthropic changed in the request before the model saw it (thinking blocks it
    // dropped, say): the last list reported wins, recorded as a diagnostic at the end.
    let mut transformations: Option<Vec<Value>> = None;
    loop {
        let event = match sse.next_event().await {
            Ok(Some(e)) => e,
            Ok(None) => break,
            // A body that broke off reads as Node's `terminated`, which the session layer's
            // auto-retry recognises as transient.
            Err(SseError::Transport(_)) => return Err(ProviderError::Message("terminated".to_string())),
            Err(e) => return Err(ProviderError::Message(e.to_string())),
        };
        if event.event == "error" {
            return Err(ProviderError::Message(event.data));
        }
        if !matches!(
            event.event.as_str(),
            "message_start"
                | "message_delta"
                | "message_stop"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
        ) {
            continue;
        }
        // The per-token event is read without a JSON tree.
        if event.event == "content_block_delta" {
            if let Some(d) = delta::parse(&event.data) {
                apply_delta(em, &blocks, &d).await?;
                continue;
            }
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            ProviderError::Message(format!(
                "Could not parse Anthropic SSE event {}: {e}; data={}",
                event.event, event.data
            ))
        })?;
        match data.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => {
                saw_start = true;
                let message = &data["message"];
                let usage = &message["usage"];
                let u = &mut em.output.usage;
                u.input = usage["input_tokens"].as_u64().unwrap_or(0);
                u.output = usage["output_tokens"].as_u64().unwrap_or(0);
                u.cache_read = usage["cache_read_input_tokens"].as_u64().unwrap_or(0);
                u.cache_write = usage["cache_creation_input_tokens"].as_u64().unwrap_or(0);
                u.cache_write_1h = Some(
                    usage["cache_creation"]["ephemeral_1h_input_tokens"]
                        .as_u64()
                        .unwrap_or(0),
                );
                u.total_tokens = u.input + u.output + u.cache_read + u.cache_write;
                calculate_cost(model, &mut em.output.usage);
                // pi 1.6's `message_start` shows the first usage and the response id.
                if let Some(id) = message.get("id").and_then(Value::as_str) {
                    em.output.response_id = Some(id.to_string());
                }
                if let Some(list) = message.get("input_transformations").and_then(Value::as_array) {
                    transformations = Some(list.clone());
                }
                em.start().await?;
            }
            "content_block_start" => {
                em.start().await?;
                let index = data["index"].as_u64().unwrap_or(0);
                let block = &data["content_block"];
                let ours = match block.get("type").and_then(Value::as_str).unwrap_or_default() {
                    "text" => Some(em.text_start().await?),
                    // No signature until a `signature_delta` arrives: `thinking_start` carries
                    // none, so a consumer rebuilding the message from events (and a reply cut
                    // off mid-thinking) agrees with ours; unsigned thinking replays as text.
                    "thinking" => Some(em.thinking_start(None).await?),
                    "redacted_thinking" => {
                        let signature = block.get("data").and_then(Value::as_str).map(str::to_string);
                        let i = em.thinking_start(signature).await?;
                        if let Some(t) = em.thinking_block(i) {
                            t.thinking = "[Reasoning redacted]".to_string();
                            t.redacted = Some(true);
                        }
                        Some(i)
                    }
                    "tool_use" => {
                        let raw_name = block.get("name").and_then(Value::as_str).unwrap_or_default();
                        let name = if oauth {
                            from_claude_code_name(raw_name, tools)
                        } else {
                            raw_name.to_string()
                        };
                        let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                        Some(em.tool_call_start(id, &name).await?)
                    }
                    _ => None,
                };
                if let Some(ours) = ours {
                    blocks.0.push((index, ours));
                }
            }
            "content_block_delta" => {
                let d = delta::BlockDelta::deserialize(&data).unwrap_or_default();
                apply_delta(em, &blocks, &d).await?;
            }
            "content_block_stop" => {
                let Some(i) = data["index"].as_u64().and_then(|a| blocks.get(a)) else {
                    continue;
                };
                match em.output.content.get(i) {
                    Some(Content::Text(_)) => em.text_end(i).await?,
                    Some(Content::Thinking(_)) => em.thinking_end(i).await?,
                    Some(Content::ToolCall(_)) => em.tool_call_end(i).await?,
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(list) = data.get("input_transformations").and_then(Value::as_array) {
                    transformations = Some(list.clone());
                }
                if let Some(reason) = data["delta"].get("stop_reason").and_then(Value::as_str) {
                    em.output.stop_reason = map_stop_reason(reason)?;
                    em.output.raw_stop_reason = Some(reason.to_string());
                }
                let usage = &data["usage"];
                let u = &mut em.output.usage;
                if let Some(v) = usage.get("input_tokens").and_then(Value::as_u64) {
                    u.input = v;
                }
                if let Some(v) = usage.get("output_tokens").and_then(Value::as_u64) {
                    u.output = v;
                }
                if let Some(v) = usage.get("cache_read_input_tokens").and_then(Value::as_u64) {
                    u.cache_read = v;
                }
                if let Some(v) = usage.get("cache_creation_input_tokens").and_then(Value::as_u64) {
                    u.cache_write = v;
                }
                u.total_tokens = u.input + u.output + u.cache_read + u.cache_write;
                calculate_cost(model, &mut em.output.usage);
            }
            "message_stop" => saw_stop = true,
            _ => {}
        }
    }
    if saw_start && !saw_stop {
        return Err(ProviderError::Message(
            "Anthropic stream ended before message_stop".to_string(),
        ));
    }
    if let Some(list) = transformations.filter(|l| !l.is_empty()) {
        em.output.push_diagnostic(transformations_diagnostic(&list));
    }
    em.start().await?;
    if matches!(em.output.stop_reason, StopReason::Error | StopReason::Aborted) {
        return Err(ProviderError::Message("An unknown error occurred".to_string()));
    }
    Ok(())
}

/// The `anthropic_input_transformations` diagnostic: each transformation's type, path and
/// reason (the fields pi 1.6 keeps).
fn transformations_diagnostic(list: &[Value]) -> Value {
    let kept: Vec<Value> = list
        .iter()
        .map(|t| {
            let mut out = Map::new();
            for key in ["type", "path", "reason"] {
                if let Some(v) = t.get(key).filter(|v| !v.is_null()) {
                    out.insert(key.to_string(), v.clone());
                }
            }
            Value::Object(out)
        })
        .collect();
    json!({
        "type": "anthropic_input_transformations",
        "timestamp": crate::now_ms(),
        "details": {"transformations": kept},
    })
}

#[path = "anthropic_delta.rs"]
mod delta;
#[path = "anthropic_messages.rs"]
mod messages;

use messages::{convert_messages, message_tree};

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
