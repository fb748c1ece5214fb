//! The `openai-responses` API: OpenAI's Responses endpoint (`/responses`).
//!
//! Reasoning items are replayed from the thinking signature (the item JSON as received), text
//! blocks carry `{"v":1,"id":...}` signatures naming their message item, and tool-call ids are
//! `<call_id>|<item_id>`.

use serde_json::{json, Map, Value};

use crate::events::AssistantStream;
use crate::http::{self, ErrorBodyStyle, RetryPolicy};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::grammar_tools::{self, GrammarInputs, RawInput};
use crate::providers::json_tree::body_bytes;
use crate::providers::lenient::EventHead;
use crate::providers::openai_completions::max_tokens;
use crate::providers::{
    apply_payload_hook, cache_retention, compat_bool, compat_str, join_url, model_headers, post_bytes,
};
use crate::sse::SseStream;
use crate::stream_driver::{error_stream, spawn_provider_with, Emitter, ProviderError, OPENAI_ABORT_MESSAGES};
use crate::thinking::{effective_reasoning, level_mapping, mapped_effort, LevelMapping};
use crate::transform::short_hash;
use crate::types::{AssistantMessage, Content, Context, Message, Model, StopReason, ThinkingLevel, Tool};

#[path = "openai_responses_input.rs"]
mod input;

pub use input::convert_messages;

/// Providers whose tool-call ids are Responses ids (`call|item`) that can be replayed as such.
const RESPONSES_ID_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode"];
/// The same for Azure's Responses API, which also replays its own.
const AZURE_ID_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode", "azure"];

/// The API name of Azure OpenAI's Responses variant (see [`crate::providers::azure`]).
pub(crate) const AZURE_API: &str = "azure-openai-responses";

fn is_azure(model: &Model) -> bool {
    model.api == AZURE_API
}

/// Stream a response. `api_key` must already be resolved.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let retention = cache_retention(&options);
    let payload = match request_payload(model, context, &options) {
        Ok(p) => p,
        Err(e) => return error_stream(model, e),
    };
    let headers = build_headers(model, &options, &api_key, retention);
    let url = join_url(&model.base_url, "responses");
    let policy = RetryPolicy::from_options(&options);
    // pi 1.6 names the provider: `OpenAI API error (429): {...}`, `<provider> API error ...`.
    let label = if model.provider == "openai" {
        "OpenAI API error".to_string()
    } else {
        format!("{} API error", model.provider)
    };
    let describe: Describe =
        std::sync::Arc::new(move |e: &http::HttpError| e.message_with_prefix(ErrorBodyStyle::ErrorField, Some(&label)));
    let grammar = grammar_tools::inputs(model, &context.tools);
    spawn_run(model, &options, url, headers, payload, policy, describe, grammar)
}

/// How a provider words an HTTP failure.
pub(crate) type Describe = std::sync::Arc<dyn Fn(&http::HttpError) -> String + Send + Sync>;

/// Send `payload` and stream the Responses events that come back; `describe` words HTTP
/// failures; `grammar` names the custom tools the request declared.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_run(
    model: &Model,
    options: &StreamOptions,
    url: String,
    headers: Vec<(String, String)>,
    payload: Vec<u8>,
    policy: RetryPolicy,
    describe: Describe,
    grammar: GrammarInputs,
) -> AssistantStream {
    let owned_model = model.clone();
    spawn_provider_with(model, options.cancel.clone(), OPENAI_ABORT_MESSAGES, move |em| {
        Box::pin(async move { run(em, &owned_model, url, headers, payload, policy, describe, &grammar).await })
    })
}

/// The body `stream` sends for these arguments (after the `on_payload` hook).
pub fn request_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let body = build_body(model, context, options, cache_retention(options));
    apply_payload_hook(options, model, body)
}

/// The Responses compatibility switches this module reads (`model.compat` over defaults).
struct ResponsesCompat<'a> {
    /// `openai` (`session-id` + request id), `openai-nosession` (request id only) or
    /// `openrouter` (`x-session-id`).
    session_affinity_format: &'a str,
    /// `auto`, `enabled` or `disabled`.
    prompt_cache_key_mode: &'a str,
    supports_long_cache_retention: bool,
    supports_strict_mode: bool,
    supports_explicit_prompt_cache_mode: bool,
    supports_max_output_tokens: bool,
}

impl<'a> ResponsesCompat<'a> {
    fn of(model: &'a Model) -> Self {
        let openrouter = model.provider == "openrouter" || model.base_url.contains("openrouter.ai");
        ResponsesCompat {
            session_affinity_format: compat_str(model, "sessionAffinityFormat").unwrap_or(if openrouter {
                "openrouter"
            } else {
                "openai"
            }),
            prompt_cache_key_mode: compat_str(model, "promptCacheKeyMode").unwrap_or("auto"),
            supports_long_cache_retention: compat_bool(model, "supportsLongCacheRetention").unwrap_or(true),
            // Azure's endpoint takes `strict` unless told otherwise.
            supports_strict_mode: compat_bool(model, "supportsStrictMode").unwrap_or(is_azure(model)),
            supports_explicit_prompt_cache_mode: compat_bool(model, "supportsExplicitPromptCacheMode").unwrap_or(false),
            supports_max_output_tokens: compat_bool(model, "supportsMaxOutputTokens").unwrap_or(true),
        }
    }
}

/// The smallest `max_output_tokens` the endpoint accepts.
const MIN_OUTPUT_TOKENS: u64 = 16;

/// A ChatGPT sign-in token sent to OpenAI's API (anything but an `sk-` key): that endpoint
/// rejects the cache-retention, output-cap and temperature fields.
fn is_chatgpt_sign_in(model: &Model, api_key: Option<&str>) -> bool {
    model.provider == "openai"
        && model.base_url == "https://api.openai.com/v1"
        && api_key.is_some_and(|k| !k.starts_with("sk-"))
}

/// Request headers: bearer auth, the model's headers, session affinity, then the caller's.
pub fn build_headers(
    model: &Model,
    options: &StreamOptions,
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
        match ResponsesCompat::of(model).session_affinity_format {
            "openrouter" => headers.push(("x-session-id".to_string(), session.clone())),
            format => {
                if format == "openai" {
                    headers.push(("session-id".to_string(), session.clone()));
                }
                headers.push(("x-client-request-id".to_string(), session.clone()));
            }
        }
    }
    headers.extend(options.headers.iter().cloned());
    headers
}

/// The request body, field for field as the TypeScript pi sends it.
pub fn build_body(model: &Model, context: &Context, options: &StreamOptions, retention: CacheRetention) -> Value {
    let input = Value::Array(convert_messages(model, context));
    Value::Object(body_map(model, context, options, retention, input))
}

/// The serialized body `stream` sends. Without a payload hook (which edits a `Value`), the
/// input items are written from a tree that borrows the message text (see
/// [`crate::providers::json_tree`]).
pub fn request_payload(model: &Model, context: &Context, options: &StreamOptions) -> Result<Vec<u8>, String> {
    if options.on_payload.is_some() {
        return serde_json::to_vec(&request_body(model, context, options)).map_err(|e| e.to_string());
    }
    let body = body_map(model, context, options, cache_retention(options), Value::Null);
    let transformed = input::transform_for(model, context);
    let messages: Vec<&Message> = transformed.iter().map(|m| m.as_ref()).collect();
    let grammar = grammar_tools::inputs(model, &context.tools);
    let tree = input::input_tree(model, context.system_prompt.as_deref(), &messages, &grammar);
    body_bytes(&body, "input", &tree)
}

/// Every field of the body, with `input` (null for the caller to write).
fn body_map(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    retention: CacheRetention,
    input: Value,
) -> Map<String, Value> {
    let compat = ResponsesCompat::of(model);
    let sign_in = is_chatgpt_sign_in(model, options.api_key.as_deref());
    let azure = is_azure(model);
    let mut body = Map::new();
    let model_name = if azure {
        crate::providers::azure::deployment_name(model, &crate::env_keys::process_env)
    } else {
        model.id.clone()
    };
    body.insert("model".into(), json!(model_name));
    body.insert("input".into(), input);
    body.insert("stream".into(), json!(true));
    // Azure keys the cache by session whatever the retention, and has no retention fields.
    if (azure || retention != CacheRetention::None) && compat.prompt_cache_key_mode != "disabled" {
        if let Some(session) = &options.session_id {
            let key = match session.char_indices().nth(64) {
                Some((at, _)) => &session[..at],
                None => session.as_str(),
            };
            body.insert("prompt_cache_key".into(), json!(key));
        }
    }
    if !sign_in && !azure {
        let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
        if compat.supports_explicit_prompt_cache_mode {
            if retention == CacheRetention::None {
                body.insert("prompt_cache_options".into(), json!({"mode": "explicit"}));
            } else if long {
                body.insert("prompt_cache_options".into(), json!({"ttl": "30m"}));
            }
        } else if long {
            body.insert("prompt_cache_retention".into(), json!("24h"));
        }
    }
    body.insert("store".into(), json!(false));
    let max = max_tokens(model, context, options);
    if max > 0 && (compat.supports_max_output_tokens || azure) && !sign_in {
        body.insert("max_output_tokens".into(), json!(max.max(MIN_OUTPUT_TOKENS)));
    }
    if let (Some(t), false) = (options.temperature, sign_in) {
        body.insert("temperature".into(), crate::providers::js_number(t));
    }
    if !context.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(convert_tools(
                &context.tools,
                compat.supports_strict_mode,
                grammar_tools::supported(model),
            )),
        );
    }
    if model.reasoning {
        match effective_reasoning(model, options.reasoning) {
            Some(level) => {
                body.insert(
                    "reasoning".into(),
                    json!({"effort": mapped_effort(model, level), "summary": "auto"}),
                );
                body.insert("include".into(), json!(["reasoning.encrypted_content"]));
            }
            None if model.provider != "github-copilot" => match level_mapping(model, ThinkingLevel::Off) {
                LevelMapping::Removed => {}
                LevelMapping::Value(v) => {
                    body.insert("reasoning".into(), json!({"effort": v}));
                }
                LevelMapping::Absent => {
                    body.insert("reasoning".into(), json!({"effort": "none"}));
                }
            },
            None => {}
        }
        if model.provider == "xai" {
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
    }
    body
}

/// Tools in the Responses shape; `strict` only for endpoints that take it (and `false`:
/// strict schemas are opt-in per tool). With `grammar_tools`, a tool declaring a grammar is a
/// custom tool whose input is raw text.
pub fn convert_tools(tools: &[Tool], supports_strict_mode: bool, grammar_tools: bool) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            if let Some(grammar) = grammar_tools.then(|| grammar_tools::grammar_of(t)).flatten() {
                return grammar_tools::custom_tool(t, &grammar);
            }
            let mut tool = Map::new();
            tool.insert("type".into(), json!("function"));
            tool.insert("name".into(), json!(t.name));
            tool.insert("description".into(), json!(t.description));
            tool.insert("parameters".into(), t.parameters.clone());
            if supports_strict_mode {
                tool.insert("strict".into(), json!(false));
            }
            Value::Object(tool)
        })
        .collect()
}

/// Keep `[A-Za-z0-9_-]`, at most 64 characters, without trailing underscores.
fn normalize_id_part(part: &str) -> String {
    let s = crate::transform::sanitize_tool_call_id(part, 64);
    s.trim_end_matches('_').to_string()
}

fn normalize_tool_call_id(model: &Model, id: &str, source: &AssistantMessage) -> String {
    let providers = if is_azure(model) {
        AZURE_ID_PROVIDERS
    } else {
        RESPONSES_ID_PROVIDERS
    };
    if !providers.contains(&model.provider.as_str()) {
        return normalize_id_part(id);
    }
    let Some((call, item)) = id.split_once('|') else {
        return normalize_id_part(id);
    };
    // A third `|`-part, if any, is dropped as the JavaScript split-destructuring does.
    let item = item.split('|').next().unwrap_or(item);
    let call = normalize_id_part(call);
    let foreign = source.provider != model.provider || source.api != model.api;
    let mut item = if foreign {
        let hashed = format!("fc_{}", short_hash(item));
        hashed.chars().take(64).collect()
    } else {
        normalize_id_part(item)
    };
    if !item.starts_with("fc_") {
        item = normalize_id_part(&format!("fc_{item}"));
    }
    format!("{call}|{item}")
}

/// The `{"v":1,"id":...,"phase"?}` text signature: its id and phase.
fn parse_text_signature(signature: Option<&str>) -> Option<(String, Option<String>)> {
    let sig = signature.filter(|s| !s.is_empty())?;
    if sig.starts_with('{') {
        if let Ok(v) = serde_json::from_str::<Value>(sig) {
            if v.get("v") == Some(&json!(1)) {
                if let Some(id) = v.get("id").and_then(Value::as_str) {
                    let phase = v
                        .get("phase")
                        .and_then(Value::as_str)
                        .filter(|p| *p == "commentary" || *p == "final_answer")
                        .map(String::from);
                    return Some((id.to_string(), phase));
                }
            }
        }
    }
    Some((sig.to_string(), None))
}

/// Map a response status to a stop reason.
pub fn map_status(status: Option<&str>) -> StopReason {
    match status {
        Some("incomplete") => StopReason::Length,
        Some("failed" | "cancelled") => StopReason::Error,
        _ => StopReason::Stop,
    }
}

/// A value as JavaScript's template strings print it (`undefined` when absent).
fn js_text(v: Option<&Value>) -> String {
    match v {
        None => "undefined".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The output item being streamed and its content block.
enum Current {
    None,
    Reasoning {
        item: Value,
        index: usize,
    },
    Message {
        item: Value,
        index: usize,
    },
    Call {
        index: usize,
    },
    /// A custom (grammar) tool call: its raw input streams as text.
    Custom {
        index: usize,
        raw: RawInput,
    },
}

// The request's parts and how to read its reply, as `spawn_run` receives them.
#[allow(clippy::too_many_arguments)]
async fn run(
    em: &mut Emitter,
    model: &Model,
    url: String,
    headers: Vec<(String, String)>,
    payload: Vec<u8>,
    policy: RetryPolicy,
    describe: Describe,
    grammar: &GrammarInputs,
) -> Result<(), ProviderError> {
    let header_map = http::header_map(&headers)?;
    let response = post_bytes(&url, header_map, payload, policy, |e| describe(e)).await?;
    em.start().await?;

    let mut sse = SseStream::new(response.bytes_stream());
    let mut current = Current::None;
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
        // The per-token events need only their type and delta: they are read without a JSON
        // tree; every other event is read whole.
        let head = EventHead::parse(&event.data);
        let token_event = head.as_ref().is_some_and(|h| {
            h.error.is_none()
                && matches!(
                    h.kind.get(),
                    Some(
                        "response.output_text.delta"
                            | "response.refusal.delta"
                            | "response.reasoning_summary_text.delta"
                            | "response.reasoning_text.delta"
                            | "response.function_call_arguments.delta"
                            | "response.custom_tool_call_input.delta"
                    )
                )
        });
        let data: Value = if token_event {
            Value::Null
        } else {
            serde_json::from_str(&event.data).map_err(|e| format!("Could not parse stream message as JSON: {e}"))?
        };
        // The SDK treats any event carrying an `error` member as a failure, whatever its type.
        if let Some(error) = data.get("error").filter(|e| !e.is_null() && *e != &json!(false)) {
            return Err(crate::providers::openai_completions::stream_error_message(error).into());
        }
        // An SSE event named `error` is the SDK's error too, its payload the whole data.
        if event.event == "error" && !data.is_null() {
            return Err(crate::providers::openai_completions::stream_error_message(&data).into());
        }
        let (kind, token_delta) = match (&head, token_event) {
            (Some(h), true) => (h.kind.get().unwrap_or(""), h.delta.get().unwrap_or("")),
            _ => (data.get("type").and_then(Value::as_str).unwrap_or(""), ""),
        };
        match kind {
            "response.created" => {
                if let Some(id) = data.pointer("/response/id").and_then(Value::as_str) {
                    em.output.response_id = Some(id.to_string());
                }
            }
            "response.output_item.added" => {
                let item = data.get("item").cloned().unwrap_or(Value::Null);
                match item.get("type").and_then(Value::as_str) {
                    Some("reasoning") => {
                        let index = em.thinking_start(None).await?;
                        current = Current::Reasoning { item, index };
                    }
                    Some("message") => {
                        let index = em.text_start().await?;
                        current = Current::Message { item, index };
                    }
                    Some("function_call") => {
                        let id = format!("{}|{}", js_text(item.get("call_id")), js_text(item.get("id")));
                        let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                        let index = em.tool_call_start(&id, name).await?;
                        if let Some(args) = item.get("arguments").and_then(Value::as_str) {
                            em.set_tool_call_raw_args(index, args.to_string());
                        }
                        current = Current::Call { index };
                    }
                    Some("custom_tool_call") => {
                        let (index, raw) = start_custom_call(em, &item, grammar).await?;
                        current = Current::Custom { index, raw };
                    }
                    _ => {}
                }
            }
            "response.custom_tool_call_input.delta" => {
                if let Current::Custom { index, raw } = &mut current {
                    if let Some(piece) = raw.push(token_delta) {
                        em.tool_call_delta(*index, &piece).await?;
                    }
                }
            }
            "response.custom_tool_call_input.done" => {
                if let Current::Custom { index, raw } = &mut current {
                    if let Some(piece) = raw.close(data.get("input").and_then(Value::as_str)) {
                        em.tool_call_delta(*index, &piece).await?;
                    }
                }
            }
            "response.reasoning_summary_part.added" => {
                if let Current::Reasoning { item, .. } = &mut current {
                    push_array(item, "summary", data.get("part").cloned().unwrap_or(Value::Null));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_summary_part.done" => {
                if let Current::Reasoning { item, index } = &mut current {
                    let delta = if kind == "response.reasoning_summary_part.done" {
                        "\n\n"
                    } else {
                        token_delta
                    };
                    if append_last_text(item, "summary", "text", delta) {
                        let index = *index;
                        em.thinking_delta(index, delta).await?;
                    }
                }
            }
            "response.reasoning_text.delta" => {
                if let Current::Reasoning { index, .. } = &current {
                    let delta = token_delta;
                    em.thinking_delta(*index, delta).await?;
                }
            }
            "response.content_part.added" => {
                if let Current::Message { item, .. } = &mut current {
                    let part = data.get("part").cloned().unwrap_or(Value::Null);
                    if matches!(
                        part.get("type").and_then(Value::as_str),
                        Some("output_text" | "refusal")
                    ) {
                        push_array(item, "content", part);
                    }
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Current::Message { item, index } = &mut current {
                    let (part_type, field) = if kind == "response.output_text.delta" {
                        ("output_text", "text")
                    } else {
                        ("refusal", "refusal")
                    };
                    let last_type = item
                        .get("content")
                        .and_then(Value::as_array)
                        .and_then(|c| c.last())
                        .and_then(|p| p.get("type"))
                        .and_then(Value::as_str);
                    if last_type == Some(part_type) {
                        let delta = token_delta;
                        append_last_text(item, "content", field, delta);
                        let index = *index;
                        em.text_delta(index, delta).await?;
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                if let Current::Call { index } = current {
                    let delta = token_delta;
                    em.tool_call_delta(index, delta).await?;
                }
            }
            "response.function_call_arguments.done" => {
                if let Current::Call { index } = current {
                    let full = data.get("arguments").and_then(Value::as_str).unwrap_or("").to_string();
                    let previous = em.tool_call_raw_args(index).unwrap_or("").to_string();
                    if let Some(rest) = full.strip_prefix(previous.as_str()).filter(|r| !r.is_empty()) {
                        let rest = rest.to_string();
                        em.tool_call_delta(index, &rest).await?;
                    }
                    em.set_tool_call_raw_args(index, full);
                }
            }
            "response.output_item.done" => {
                let item = data.get("item").cloned().unwrap_or(Value::Null);
                let item_type = item.get("type").and_then(Value::as_str);
                match (item_type, std::mem::replace(&mut current, Current::None)) {
                    (Some("reasoning"), Current::Reasoning { index, .. }) => {
                        let joined = |key: &str| -> String {
                            item.get(key)
                                .and_then(Value::as_array)
                                .map(|parts| {
                                    parts
                                        .iter()
                                        .map(|p| p.get("text").and_then(Value::as_str).unwrap_or(""))
                                        .collect::<Vec<_>>()
                                        .join("\n\n")
                                })
                                .unwrap_or_default()
                        };
                        let summary = joined("summary");
                        let content = joined("content");
                        let signature = item.to_string();
                        if let Some(block) = em.thinking_block(index) {
                            if !summary.is_empty() {
                                block.thinking = summary;
                            } else if !content.is_empty() {
                                block.thinking = content;
                            }
                            block.thinking_signature = Some(signature);
                        }
                        em.thinking_end(index).await?;
                    }
                    (Some("message"), Current::Message { index, .. }) => {
                        let text: String = item
                            .get("content")
                            .and_then(Value::as_array)
                            .map(|parts| {
                                parts
                                    .iter()
                                    .map(|p| {
                                        let field = if p.get("type").and_then(Value::as_str) == Some("output_text") {
                                            "text"
                                        } else {
                                            "refusal"
                                        };
                                        p.get(field).and_then(Value::as_str).unwrap_or("")
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        let mut sig = Map::new();
                        sig.insert("v".into(), json!(1));
                        sig.insert("id".into(), item.get("id").cloned().unwrap_or(Value::Null));
                        if let Some(phase) = item.get("phase").filter(|p| !p.is_null()) {
                            sig.insert("phase".into(), phase.clone());
                        }
                        if let Some(block) = em.text_block(index) {
                            block.text = text;
                            block.text_signature = Some(Value::Object(sig).to_string());
                        }
                        em.text_end(index).await?;
                    }
                    (Some("function_call"), previous) => {
                        let index = match previous {
                            Current::Call { index } => index,
                            // A call that was never announced: add it now.
                            _ => {
                                let id = format!("{}|{}", js_text(item.get("call_id")), js_text(item.get("id")));
                                let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                                em.tool_call_start(&id, name).await?
                            }
                        };
                        let raw = em.tool_call_raw_args(index).unwrap_or("").to_string();
                        if raw.is_empty() {
                            let args = item.get("arguments").and_then(Value::as_str).unwrap_or("{}");
                            em.set_tool_call_raw_args(index, args.to_string());
                        }
                        em.tool_call_end(index).await?;
                    }
                    (Some("custom_tool_call"), previous) => {
                        let (index, mut raw) = match previous {
                            Current::Custom { index, raw } => (index, raw),
                            _ => start_custom_call(em, &item, grammar).await?,
                        };
                        if let Some(piece) = raw.close(item.get("input").and_then(Value::as_str)) {
                            em.tool_call_delta(index, &piece).await?;
                        }
                        em.set_tool_call_raw_args(index, raw.arguments());
                        em.tool_call_end(index).await?;
                    }
                    (_, previous) => current = previous,
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = data.get("response").cloned().unwrap_or(Value::Null);
                if let Some(id) = response.get("id").and_then(Value::as_str) {
                    em.output.response_id = Some(id.to_string());
                }
                if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
                    let n = |p: &str| usage.pointer(p).and_then(Value::as_u64).unwrap_or(0);
                    let cached = n("/input_tokens_details/cached_tokens");
                    em.output.usage.input = n("/input_tokens").saturating_sub(cached);
                    em.output.usage.output = n("/output_tokens");
                    em.output.usage.cache_read = cached;
                    em.output.usage.cache_write = 0;
                    em.output.usage.total_tokens = n("/total_tokens");
                    em.output.usage.reasoning = Some(n("/output_tokens_details/reasoning_tokens"));
                }
                crate::cost::calculate_cost(model, &mut em.output.usage);
                apply_service_tier(model, &mut em.output.usage, response.get("service_tier"));
                let status = response.get("status").and_then(Value::as_str);
                em.output.raw_stop_reason = status.map(str::to_string);
                em.output.stop_reason = map_status(status);
                // pi 1.6: only the output token limit makes an incomplete response a length
                // stop; any other reason (or none) is an error that says so.
                if status == Some("incomplete") {
                    let reason = response
                        .pointer("/incomplete_details/reason")
                        .and_then(Value::as_str)
                        .filter(|r| !r.is_empty());
                    match reason {
                        Some("max_output_tokens") => {}
                        Some(r) => return Err(format!("Response incomplete: {r}").into()),
                        None => return Err("Response incomplete without a provider reason".into()),
                    }
                }
                if em.output.stop_reason == StopReason::Stop
                    && em.output.content.iter().any(|c| matches!(c, Content::ToolCall(_)))
                {
                    em.output.stop_reason = StopReason::ToolUse;
                }
            }
            "error" => {
                return Err(format!(
                    "Error Code {}: {}",
                    js_text(data.get("code")),
                    js_text(data.get("message"))
                )
                .into());
            }
            "response.failed" => {
                let response = data.get("response");
                let error = response.and_then(|r| r.get("error")).filter(|e| e.is_object());
                let reason = response
                    .and_then(|r| r.pointer("/incomplete_details/reason"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let text = match (error, reason) {
                    (Some(e), _) => format!(
                        "{}: {}",
                        e.get("code")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .unwrap_or("unknown"),
                        e.get("message")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .unwrap_or("no message")
                    ),
                    (None, Some(r)) => format!("incomplete: {r}"),
                    (None, None) => "Unknown error (no error details in response)".to_string(),
                };
                return Err(text.into());
            }
            _ => {}
        }
    }
    // A stream cut short leaves its last item open, without an end event: the TypeScript pi
    // does the same, so JSON-mode consumers see identical event sequences.
    if matches!(em.output.stop_reason, StopReason::Error | StopReason::Aborted) {
        return Err("An unknown error occurred".into());
    }
    Ok(())
}

/// Announce a custom tool call; its input fills the argument the declaration names (`input`
/// for a tool the request did not declare as a grammar tool).
async fn start_custom_call(
    em: &mut Emitter,
    item: &Value,
    grammar: &GrammarInputs,
) -> Result<(usize, RawInput), ProviderError> {
    let id = format!("{}|{}", js_text(item.get("call_id")), js_text(item.get("id")));
    let name = item.get("name").and_then(Value::as_str).unwrap_or("");
    let property = grammar.get(name).cloned().unwrap_or_else(|| "input".to_string());
    let index = em.tool_call_start(&id, name).await?;
    let mut raw = RawInput::new(property);
    if let Some(piece) = item.get("input").and_then(Value::as_str).and_then(|i| raw.push(i)) {
        em.tool_call_delta(index, &piece).await?;
    }
    Ok((index, raw))
}

/// Flex is half price, priority double (2.5x for gpt-5.5).
fn apply_service_tier(model: &Model, usage: &mut crate::types::Usage, tier: Option<&Value>) {
    let factor = match tier.and_then(Value::as_str) {
        Some("flex") => 0.5,
        Some("priority") if model.id == "gpt-5.5" => 2.5,
        Some("priority") => 2.0,
        _ => return,
    };
    let c = &mut usage.cost;
    c.input *= factor;
    c.output *= factor;
    c.cache_read *= factor;
    c.cache_write *= factor;
    c.total = c.input + c.output + c.cache_read + c.cache_write;
}

fn push_array(item: &mut Value, key: &str, value: Value) {
    if let Some(obj) = item.as_object_mut() {
        let entry = obj.entry(key.to_string()).or_insert_with(|| json!([]));
        if !entry.is_array() {
            *entry = json!([]);
        }
        if let Some(a) = entry.as_array_mut() {
            a.push(value);
        }
    }
}

/// Append `delta` to `item[key][-1][field]`; false when there is no last part.
fn append_last_text(item: &mut Value, key: &str, field: &str, delta: &str) -> bool {
    let Some(last) = item
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .and_then(|a| a.last_mut())
    else {
        return false;
    };
    let Some(obj) = last.as_object_mut() else {
        return false;
    };
    let entry = obj.entry(field.to_string()).or_insert_with(|| json!(""));
    if !entry.is_string() {
        *entry = json!("");
    }
    // In place: the cost of a delta is the length of the delta.
    if let Value::String(text) = entry {
        text.push_str(delta);
    }
    true
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::types::{InputKind, ModelCost, ToolCall};

    fn model(provider: &str, reasoning: bool) -> Model {
        Model {
            id: "mock-thinker".into(),
            name: "t".into(),
            api: "openai-responses".into(),
            provider: provider.into(),
            base_url: "http://x/v1".into(),
            reasoning,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 128_000,
            max_tokens: 32_000,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    #[test]
    fn reasoning_off_sends_effort_none_unless_removed() {
        let mut m = model("openai", true);
        let ctx = Context::default();
        let b = build_body(&m, &ctx, &StreamOptions::default(), CacheRetention::Short);
        assert_eq!(b["reasoning"], json!({"effort": "none"}));
        assert!(b.get("include").is_none());
        m.thinking_level_map = json!({"off": null}).as_object().cloned();
        let b = build_body(&m, &ctx, &StreamOptions::default(), CacheRetention::Short);
        // Off is not offered, so the request is clamped up to the lowest level.
        assert!(b.get("reasoning").is_none());
        let opts = StreamOptions {
            reasoning: Some(ThinkingLevel::Off),
            ..Default::default()
        };
        let b = build_body(&m, &ctx, &opts, CacheRetention::Short);
        assert_eq!(b["reasoning"], json!({"effort": "minimal", "summary": "auto"}));
    }

    #[test]
    fn tool_call_ids_from_other_providers_are_hashed() {
        let m = model("openai", false);
        let source = AssistantMessage {
            provider: "github-copilot".into(),
            api: "openai-responses".into(),
            ..Default::default()
        };
        let id = normalize_tool_call_id(&m, "call_1|item+/=x", &source);
        assert_eq!(id, format!("call_1|fc_{}", short_hash("item+/=x")));
        let same = AssistantMessage {
            provider: "openai".into(),
            api: "openai-responses".into(),
            ..Default::default()
        };
        assert_eq!(normalize_tool_call_id(&m, "call_1|fc_9", &same), "call_1|fc_9");
        assert_eq!(normalize_tool_call_id(&m, "call_1|x9", &same), "call_1|fc_x9");
        let other = model("mock", false);
        assert_eq!(normalize_tool_call_id(&other, "a|b", &same), "a_b");
    }

    #[test]
    fn assistant_items_replay_reasoning_text_and_calls() {
        let m = model("mock", true);
        let ctx = Context {
            system_prompt: None,
            messages: vec![Message::Assistant(Arc::new(AssistantMessage {
                content: vec![
                    Content::Thinking(crate::types::ThinkingContent {
                        thinking: "t".into(),
                        thinking_signature: Some(r#"{"type":"reasoning","id":"rs_1","summary":[]}"#.into()),
                        ..Default::default()
                    }),
                    Content::Text(crate::types::TextContent {
                        text: "hi".into(),
                        text_signature: Some(r#"{"v":1,"id":"msg_1","phase":"final_answer"}"#.into()),
                        ..Default::default()
                    }),
                    Content::ToolCall(ToolCall {
                        id: "call_1|fc_1".into(),
                        name: "read".into(),
                        arguments: json!({"path": "a"}),
                        ..Default::default()
                    }),
                ],
                api: "openai-responses".into(),
                provider: "mock".into(),
                model: "mock-thinker".into(),
                stop_reason: StopReason::ToolUse,
                ..Default::default()
            }))],
            tools: vec![],
        };
        let items = convert_messages(&m, &ctx);
        assert_eq!(items[0], json!({"type":"reasoning","id":"rs_1","summary":[]}));
        assert_eq!(
            serde_json::to_string(&items[1]).expect("json"),
            r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]}],"status":"completed","id":"msg_1","phase":"final_answer"}"#
        );
        assert_eq!(
            serde_json::to_string(&items[2]).expect("json"),
            r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a\"}"}"#
        );
        // The orphaned call gets a synthetic result.
        assert_eq!(items[3]["type"], "function_call_output");
        assert_eq!(items[3]["output"], "No result provided");
    }
}
