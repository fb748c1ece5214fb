//! pi-ai: every LLM wire protocol becomes one message model and one event stream.
//!
//! The entry point is [`stream_simple`]: given a model, a context and options it returns an
//! [`AssistantStream`] of [`AssistantMessageEvent`]s. Once called it never panics and never
//! fails: every problem arrives as an `Error` event whose message keeps what had streamed.

pub mod cost;
pub mod env_keys;
pub mod events;
pub mod faux;
pub mod http;
pub mod json_number;
pub mod models;
pub mod options;
pub mod overflow;
pub mod partial_json;
pub mod providers;
pub mod sse;
pub mod stream_driver;
pub mod thinking;
pub mod transform;
pub mod types;
mod types_de;

pub use cost::calculate_cost;
pub use env_keys::env_api_key;
pub use events::{event_channel, AssistantMessageEvent, AssistantStream, EventSender, PartialMessage};
pub use models::{builtin_models, get_model, get_models, get_providers};
pub use options::{CacheRetention, PayloadHook, StreamFn, StreamOptions};
pub use overflow::is_context_overflow;
pub use types::*;

/// Stream a reply from `model` through the wire API it names.
///
/// The API key comes from `options.api_key`; callers resolve it (auth file, environment) first.
/// Every failure, including an unknown API or a missing key, arrives as an `error` event.
pub fn stream_simple(model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
    type ProviderStream = fn(&Model, &Context, StreamOptions, String) -> AssistantStream;
    let provider: ProviderStream = match model.api.as_str() {
        "openai-completions" => providers::openai_completions::stream,
        "openai-responses" => providers::openai_responses::stream,
        "azure-openai-responses" => providers::azure::stream,
        "anthropic-messages" => providers::anthropic::stream,
        "google-generative-ai" => providers::google::stream,
        "mistral-conversations" => providers::mistral::stream,
        "google-vertex" => providers::vertex::stream,
        "pi-messages" => providers::pi_messages::stream,
        other => {
            return stream_driver::error_stream(model, format!("No API provider registered for api: {other}"));
        }
    };
    match resolve_api_key(model, &options) {
        Some(key) => provider(model, context, options, key),
        None => stream_driver::error_stream(model, format!("No API key for provider: {}", model.provider)),
    }
}

/// The key a call authenticates with: the option, else the provider's environment variable.
fn resolve_api_key(model: &Model, options: &StreamOptions) -> Option<String> {
    options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .or_else(|| env_keys::env_api_key(&model.provider))
}
