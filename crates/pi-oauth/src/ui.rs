//! What a flow shows the user and asks of them: the small interface a terminal prompt or the
//! `/login` screen implements.

use async_trait::async_trait;

use crate::OAuthError;

/// Something the user should see now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginEvent {
    /// Open `url` in a browser (the caller may open it); `instructions` say what follows.
    AuthUrl { url: String, instructions: String },
    /// Enter `user_code` at `verification_uri`.
    DeviceCode {
        user_code: String,
        verification_uri: String,
        interval_seconds: Option<u64>,
        expires_in_seconds: Option<u64>,
    },
    /// A step is under way.
    Progress(String),
}

/// One choice of a [`Prompt::Select`]. Texts are owned: an extension's sign-in asks its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectOption {
    pub id: String,
    pub label: String,
}

impl SelectOption {
    pub fn new(id: impl Into<String>, label: impl Into<String>) -> Self {
        SelectOption {
            id: id.into(),
            label: label.into(),
        }
    }
}

/// A question for the user; the answer is a string (a [`SelectOption::id`] for `Select`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// Pick a sign-in method; the first option is the default (browser).
    Select {
        /// Owned: a models.json Radius gateway's prompt names that provider.
        message: String,
        options: Vec<SelectOption>,
    },
    /// A line of text (e.g. a GitHub Enterprise domain, blank for none).
    Text { message: String, placeholder: String },
    /// The code or redirect URL the browser shows, pasted. Asked while the callback server
    /// waits: whichever answers first wins, and the other is dropped.
    ManualCode { message: String, placeholder: String },
}

/// The user's side of a sign-in.
#[async_trait]
pub trait LoginUi: Send + Sync {
    /// Show an event.
    fn notify(&self, event: LoginEvent);
    /// Ask; `Err(OAuthError::Cancelled)` when the user gives up. A `ManualCode` prompt may be
    /// dropped before it answers (the browser finished first), so it must not hold locks that
    /// outlive the future.
    async fn prompt(&self, prompt: Prompt) -> Result<String, OAuthError>;
}
