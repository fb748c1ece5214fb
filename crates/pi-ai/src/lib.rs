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
pub mod sse;
pub mod stream_driver;
pub mod thinking;
pub mod transform;
pub mod types;

pub use cost::calculate_cost;
pub use env_keys::env_api_key;
pub use events::{event_channel, AssistantMessageEvent, AssistantStream, EventSender, PartialMessage};
pub use models::{builtin_models, get_model, get_models, get_providers};
pub use options::{CacheRetention, PayloadHook, StreamFn, StreamOptions};
pub use overflow::is_context_overflow;
pub use types::*;

/// Stream a reply from `model` through the wire API it names.
pub fn stream_simple(model: &Model, _context: &Context, _options: StreamOptions) -> AssistantStream {
    let mut error = AssistantMessage::empty_for(model);
    error.stop_reason = StopReason::Error;
    error.error_message = Some(format!("No API provider registered for api: {}", model.api));
    AssistantStream::from_events(vec![AssistantMessageEvent::Error {
        reason: StopReason::Error,
        error,
    }])
}
