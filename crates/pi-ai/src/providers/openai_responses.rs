//! The `openai-responses` API: OpenAI's Responses endpoint (`/responses`).
//!
//! Reasoning items are replayed from the thinking signature (the item JSON as received), text
//! blocks carry `{"v":1,"id":...}` signatures naming their message item, and tool-call ids are
//! `<call_id>|<item_id>`.

use serde_json::{json, Map, Value};

use crate::events::AssistantStream;
use crate::http::{self, ErrorBodyStyle, RetryPolicy};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::grammar_tools::{self, GrammarInputs};
use crate::providers::json_tree::body_bytes;
use crate::providers::openai_completions::max_tokens;
use crate::providers::{
    apply_payload_hook, cache_retention, compat_bool, compat_str, join_url, model_headers, post_bytes,
};
use crate::sse::SseStream;
use crate::stream_driver::{error_stream, spawn_provider_with, Emitter, ProviderError, OPENAI_ABORT_MESSAGES};
use crate::thinking::{effective_reasoning, level_mapping, mapped_effort, LevelMapping};
use crate::transform::short_hash;
use crate::types::{AssistantMessage, Context, Message, Model, StopReason, ThinkingLevel, Tool};

#[path = "openai_responses_input.rs"]
mod input;
#[path = "openai_responses_stream.rs"]
pub(crate) mod stream;

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

/// Request headers: bearer auth (Cloudflare's AI Gateway's own header there), the model's
/// headers, session affinity, then the caller's.
pub fn build_headers(
    model: &Model,
    options: &StreamOptions,
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
    grammar_tools::check(model, &context.tools)?;
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

/// Send `payload` and stream the Responses events that come back.
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
    let mut events = stream::SseEvents::new(SseStream::new(response.bytes_stream()));
    stream::read_events(em, model, &mut events, grammar, stream::Dialect::Responses)
        .await
        .map_err(stream::Failure::into_provider_error)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::types::{Content, InputKind, ModelCost, ToolCall};

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
