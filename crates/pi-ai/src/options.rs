//! Options of one streaming call, and the function type every provider (and test fake) fits.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::events::AssistantStream;
use crate::provider_hooks::ProviderHooks;
use crate::types::{Context, Model, ThinkingBudgets, ThinkingLevel};

/// How long the provider should keep the prompt cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheRetention {
    None,
    #[default]
    Short,
    Long,
}

impl CacheRetention {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(Self::None),
            "short" => Some(Self::Short),
            "long" => Some(Self::Long),
            _ => None,
        }
    }
}

/// How a provider that can stream over a WebSocket connects (pi's `transport` setting; only
/// the Codex backend has a WebSocket today). `Auto` and `WebsocketCached` send later requests of
/// a session as a delta over the same connection; every WebSocket mode falls back to SSE when
/// the socket fails before the reply starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    Sse,
    Websocket,
    WebsocketCached,
    #[default]
    Auto,
}

impl Transport {
    /// pi's names: `sse`, `websocket`, `websocket-cached`, `auto`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sse" => Some(Self::Sse),
            "websocket" => Some(Self::Websocket),
            "websocket-cached" => Some(Self::WebsocketCached),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }
}

/// May replace the request body just before it is sent (`None` keeps it).
pub type PayloadHook = Arc<dyn Fn(&Value, &Model) -> Option<Value> + Send + Sync>;

/// Options of one call (pi's `SimpleStreamOptions`).
#[derive(Clone, Default)]
pub struct StreamOptions {
    pub temperature: Option<f64>,
    /// Output token cap; `None` means `min(model.maxTokens, 32000)` (omitted when that is 0).
    pub max_tokens: Option<u64>,
    /// Reasoning level; `None` or `Off` disables thinking.
    pub reasoning: Option<ThinkingLevel>,
    pub thinking_budgets: ThinkingBudgets,
    pub api_key: Option<String>,
    /// Extra request headers, applied after the model's own.
    pub headers: Vec<(String, String)>,
    /// Session id: the prompt-cache key where the API has one.
    pub session_id: Option<String>,
    pub cache_retention: CacheRetention,
    /// Cancelling ends the stream with an `aborted` error event.
    pub cancel: CancellationToken,
    pub on_payload: Option<PayloadHook>,
    /// Asynchronous hooks around the request (headers, body, response, provider events).
    pub provider_hooks: Option<Arc<dyn ProviderHooks>>,
    /// Retries of an HTTP error before the stream starts (provider layer); default 2.
    pub max_retries: Option<u32>,
    /// Longest server-requested retry delay that is honoured; default 60 000 ms.
    pub max_retry_delay_ms: Option<u64>,
    /// Request timeout, if any (also the longest silence of a WebSocket reply).
    pub timeout_ms: Option<u64>,
    /// SSE or WebSocket, where a provider offers both.
    pub transport: Transport,
    /// How long opening a WebSocket may take; default 15 000 ms, 0 waits as long as it takes.
    pub websocket_connect_timeout_ms: Option<u64>,
    /// Provider metadata (Anthropic reads `user_id`).
    pub metadata: Option<Value>,
    /// A setting the request options are built from could not be read (pi 1.6's
    /// `Invalid websocketConnectTimeoutMs setting: …`): every request fails with this message
    /// before anything is sent, as 1.6's request options throw it.
    pub invalid_setting: Option<String>,
}

impl std::fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamOptions")
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("reasoning", &self.reasoning)
            .field("session_id", &self.session_id)
            .field("cache_retention", &self.cache_retention)
            .field("has_api_key", &self.api_key.is_some())
            .finish_non_exhaustive()
    }
}

/// A streaming call: pi's `streamSimple`. Implemented by [`crate::stream_simple`] and by fakes.
pub type StreamFn = Arc<dyn Fn(&Model, &Context, StreamOptions) -> AssistantStream + Send + Sync>;
