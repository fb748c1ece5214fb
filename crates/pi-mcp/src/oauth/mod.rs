//! OAuth for remote MCP servers, as pi 1.6 does it: discovery (RFC 9728, RFC 8414), the client
//! (configured, pi's Client ID Metadata Document, or RFC 7591 registration), PKCE S256 with a
//! loopback callback, tokens in `<agentDir>/mcp-auth.json`, and refreshes before expiry and
//! after a 401. Connections only refresh ([`OAuthSession`]); signing in is [`sign_in`], which
//! `pi mcp login` and the terminal UI run.

mod browser;
mod callback;
mod discovery;
mod flow;
mod grant;
mod http;
mod session;
mod settings;
mod sign_in;
mod store;

pub use browser::{open as open_browser, opener};
pub use callback::AuthorizationResponse;
pub use discovery::{parse_www_authenticate, Challenge};
pub use grant::OAuthTarget;
pub use http::OAuthHttp;
pub use session::{refreshes_settled, OAuthSession};
pub use settings::OAuthSettings;
pub use sign_in::{sign_in, SignInEvent, SignInEvents, SignInOptions, SignedIn};
pub use store::{normalize_url, store_keys, AuthFile, ServerState, Tokens};

/// Why an OAuth step failed. Messages are the ones pi shows after `Sign-in … failed: `.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OAuthError {
    /// The user or the caller cancelled (or the sign-in timed out).
    #[error("Sign-in cancelled")]
    Cancelled,
    /// The authorization server answered a token request with an OAuth error.
    #[error("{description}")]
    Grant { code: String, description: String },
    /// `mcp-auth.json` could not be read or written.
    #[error("{0}")]
    Store(String),
    #[error("{0}")]
    Failed(String),
}
