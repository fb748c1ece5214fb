//! The one error type of the sign-in flows and token refreshes.

/// What went wrong; the text never contains a token.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// The user cancelled (Ctrl+C, Escape, a closed prompt).
    #[error("Login cancelled")]
    Cancelled,
    /// The OAuth `state` that came back is not the one sent.
    #[error("OAuth state mismatch")]
    StateMismatch,
    /// Neither the callback nor the pasted input carried a code.
    #[error("Missing authorization code")]
    MissingCode,
    /// The provider refused or failed a request: endpoint, status and the server's error code.
    #[error("{what} failed ({status}){detail}")]
    Http {
        what: String,
        status: u16,
        /// `": <error code>: <description>"` from the body, or empty.
        detail: String,
    },
    /// A connection problem before any answer.
    #[error("{what} failed: {message}")]
    Network { what: String, message: String },
    /// An answer that lacks what the flow needs.
    #[error("{0}")]
    Invalid(String),
    /// The device code expired before the user approved it.
    #[error("{0}")]
    Timeout(String),
    /// The loopback callback server could not start.
    #[error("OAuth callback server: {0}")]
    Callback(String),
    /// A provider id this crate has no flow for.
    #[error("{0} has no account sign-in")]
    UnknownProvider(String),
}
