//! pi-oauth: signing in to LLM providers with an account (OAuth 2.0), as pi 1.6 does.
//!
//! Each provider's flow ([`Provider`]) runs against a [`LoginUi`] that shows what the user
//! must do (a URL to open, a device code to enter) and asks what only the user knows (a
//! method, a pasted redirect URL). A flow returns the credential as the JSON object pi keeps
//! in `auth.json` (`{"type":"oauth","refresh","access","expires",…}`), which
//! [`Provider::refresh`] renews and [`Provider::request_auth`] turns into what a request
//! carries. Storage, locking and the refresh-before-expiry rule belong to the caller.
//!
//! Every endpoint can be redirected to a local server ([`Config::origin`]), which is how the
//! flows are tested end to end against `pi-test-support`'s mock authorization server.
//!
//! Tokens never appear in an [`OAuthError`]: failures name the endpoint, the status and the
//! server's `error` code, not the response body.

mod anthropic;
mod callback;
mod config;
mod copilot;
mod device;
mod error;
mod http;
mod jwt;
mod kimi;
mod meta;
mod openai_chatgpt;
mod openai_codex;
mod openrouter;
pub mod pkce;
mod provider;
mod radius;
mod ui;
mod xai;

pub use callback::{parse_authorization_input, AuthorizationInput};
pub use config::{Config, RadiusGateway};
pub use copilot::copilot_base_url;
pub use error::OAuthError;
pub use jwt::decode_jwt_payload;
pub use openai_codex::account_id_from_token;
pub use provider::{Provider, RequestAuth};
pub use radius::{
    endpoint as radius_endpoint, gateway as radius_gateway_url, normalize_gateway_url,
    DEFAULT_GATEWAY as DEFAULT_RADIUS_GATEWAY,
};
pub use ui::{LoginEvent, LoginUi, Prompt, SelectOption};

/// An `auth.json` entry: `type`, `refresh`, `access`, `expires` (ms since the epoch) and the
/// provider's own fields.
pub type Credential = serde_json::Map<String, serde_json::Value>;

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Tokens are renewed when less than this remains (pi 1.6's rule).
pub const REFRESH_MARGIN_MS: i64 = 5 * 60 * 1000;

/// Whether `credential` must be refreshed now: it expires within `min_validity_ms` (at least
/// [`REFRESH_MARGIN_MS`]) or has no expiry.
pub fn needs_refresh(credential: &Credential, now_ms: i64, min_validity_ms: i64) -> bool {
    let expires = credential
        .get("expires")
        .and_then(|e| e.as_i64().or_else(|| e.as_f64().map(|f| f as i64)))
        .unwrap_or(0);
    now_ms.saturating_add(min_validity_ms.max(REFRESH_MARGIN_MS)) >= expires
}
