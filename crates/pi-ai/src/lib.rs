//! pi-ai: every LLM wire protocol becomes one message model and one event stream.
//!
//! The entry point is [`stream_simple`]: given a model, a context and options it returns an
//! [`AssistantStream`] of [`AssistantMessageEvent`]s. Once called it never panics and never
//! fails: every problem arrives as an `Error` event whose message keeps what had streamed.

pub mod cache_warming;
pub mod classify;
pub mod cost;
pub mod env_keys;
pub mod events;
pub mod faux;
pub mod http;
pub mod identity;
pub mod images;
pub mod js_json;
pub mod json_number;
pub mod models;
pub mod options;
pub mod overflow;
pub mod partial_json;
pub mod provider_hooks;
pub mod providers;
pub mod sse;
pub mod stream_driver;
pub mod task_models;
pub mod thinking;
pub mod transform;
pub mod types;
mod types_de;

pub use cost::calculate_cost;
pub use env_keys::env_api_key;
pub use events::{event_channel, AssistantMessageEvent, AssistantStream, EventSender, PartialMessage};
pub use models::{builtin_models, get_model, get_models, get_providers};
pub use options::{CacheRetention, PayloadHook, StreamFn, StreamOptions, Transport};
pub use overflow::is_context_overflow;
pub use provider_hooks::{ProviderHooks, WantedHooks};
pub use types::*;

/// Stream a reply from `model` through the wire API it names.
///
/// The API key comes from `options.api_key`; callers resolve it (auth file, environment) first.
/// Every failure, including an unknown API or a missing key, arrives as an `error` event.
pub fn stream_simple(model: &Model, context: &Context, mut options: StreamOptions) -> AssistantStream {
    if let Some(message) = &options.invalid_setting {
        return stream_driver::failed_before_start(model, message.clone());
    }
    // As pi 1.6: OpenCode routes a conversation by its session (the caller's headers win).
    if let Some(session) = options.session_id.clone().filter(|_| identity::is_opencode(model)) {
        options.headers.insert(0, ("x-opencode-session".to_string(), session));
    }
    type ProviderStream = fn(&Model, &Context, StreamOptions, String) -> AssistantStream;
    let provider: ProviderStream = match model.api.as_str() {
        "openai-completions" => providers::openai_completions::stream,
        "openai-responses" => providers::openai_responses::stream,
        "azure-openai-responses" => providers::azure::stream,
        "openai-codex-responses" => providers::openai_codex::stream,
        "anthropic-messages" => providers::anthropic::stream,
        "google-generative-ai" => providers::google::stream,
        "mistral-conversations" => providers::mistral::stream,
        "google-vertex" => providers::vertex::stream,
        "pi-messages" => providers::pi_messages::stream,
        "bedrock-converse-stream" => providers::bedrock::stream,
        other => {
            return stream_driver::error_stream(model, format!("No API provider registered for api: {other}"));
        }
    };
    let Some(key) = resolve_api_key(model, &options) else {
        return stream_driver::error_stream(model, format!("No API key for provider: {}", model.provider));
    };
    // A Copilot token names the endpoint of its account, and Cloudflare's URLs name the
    // account (and gateway) from the environment: pi 1.6 fills both in per request.
    let resolved;
    let base_url = providers::copilot_base_url(model, &key).or_else(|| {
        let filled = env_keys::fill_cloudflare_ids(&model.base_url, &env_keys::process_env);
        (filled != model.base_url).then_some(filled)
    });
    let model = match base_url {
        Some(base_url) => {
            resolved = Model {
                base_url,
                ..model.clone()
            };
            &resolved
        }
        None => model,
    };
    match options.provider_hooks.clone() {
        Some(hooks) if hooks.wanted().any() => hooked_stream(provider, hooks, model, context, options, key),
        _ => provider(model, context, options, key),
    }
}

/// A provider call with hooks: the header hook is awaited before the provider builds its
/// request, and the provider's task runs with the other hooks in scope. Its events are passed
/// on unchanged.
fn hooked_stream(
    provider: fn(&Model, &Context, StreamOptions, String) -> AssistantStream,
    hooks: std::sync::Arc<dyn ProviderHooks>,
    model: &Model,
    context: &Context,
    mut options: StreamOptions,
    key: String,
) -> AssistantStream {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return stream_driver::error_stream(model, "pi-ai streaming needs a running tokio runtime".to_string());
    };
    let wanted = hooks.wanted();
    let mut model = model.clone();
    let context = context.clone();
    let (mut tx, stream) = event_channel();
    handle.spawn(async move {
        if wanted.headers {
            // The hook sees the model's headers and the call's as one list; what it returns
            // is all that is sent of them.
            let mut own: Vec<(String, String)> = model
                .headers
                .iter()
                .flatten()
                .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_string())))
                .collect();
            own.retain(|(name, _)| !options.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)));
            own.extend(options.headers.iter().cloned());
            if let Some(replaced) = hooks.headers(&model, &own).await {
                model.headers = None;
                options.headers = replaced;
            }
        }
        let call = provider_hooks::CallHooks {
            hooks,
            wanted,
            model: std::sync::Arc::new(model.clone()),
        };
        let mut inner = provider_hooks::with_call(call, || provider(&model, &context, options, key));
        while let Some(event) = inner.next_event().await {
            if !tx.send(event).await {
                break;
            }
        }
    });
    stream
}

/// The key a call authenticates with: the option, else the provider's environment variable.
fn resolve_api_key(model: &Model, options: &StreamOptions) -> Option<String> {
    options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .or_else(|| env_keys::env_api_key(&model.provider))
}
