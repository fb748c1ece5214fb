//! The providers with an account sign-in, and the three things each does: log in, refresh,
//! and say what a request carries.

use serde_json::Value;

use crate::ui::LoginUi;
use crate::{
    anthropic, copilot, kimi, meta, openai_chatgpt, openai_codex, openrouter, radius, xai, Config, Credential,
    OAuthError,
};

/// A provider whose account sign-in this crate implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Anthropic,
    OpenAiCodex,
    GitHubCopilot,
    Xai,
    /// Sign in with ChatGPT for the `openai` provider (tokens for api.openai.com).
    OpenAi,
    KimiCoding,
    OpenRouter,
    Meta,
    Radius,
}

/// What a request made with an OAuth credential carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestAuth {
    pub api_key: String,
    /// A base URL the credential implies (Copilot's per-account endpoint).
    pub base_url: Option<String>,
}

impl Provider {
    pub const ALL: [Provider; 9] = [
        Provider::Anthropic,
        Provider::GitHubCopilot,
        Provider::KimiCoding,
        Provider::Meta,
        Provider::OpenAi,
        Provider::OpenAiCodex,
        Provider::OpenRouter,
        Provider::Radius,
        Provider::Xai,
    ];

    /// The provider of `id` (pi's provider id).
    pub fn from_id(id: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.id() == id)
    }

    pub fn id(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAiCodex => "openai-codex",
            Provider::GitHubCopilot => "github-copilot",
            Provider::Xai => "xai",
            Provider::OpenAi => "openai",
            Provider::KimiCoding => "kimi-coding",
            Provider::OpenRouter => "openrouter",
            Provider::Meta => "meta",
            Provider::Radius => "radius",
        }
    }

    /// The name a login list shows.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => anthropic::NAME,
            Provider::OpenAiCodex => openai_codex::NAME,
            Provider::GitHubCopilot => copilot::NAME,
            Provider::Xai => xai::NAME,
            Provider::OpenAi => openai_chatgpt::NAME,
            Provider::KimiCoding => kimi::NAME,
            Provider::OpenRouter => openrouter::NAME,
            Provider::Meta => meta::NAME,
            Provider::Radius => radius::NAME,
        }
    }

    /// Sign in; the credential to store.
    pub async fn login(self, config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
        match self {
            Provider::Anthropic => anthropic::login(config, ui).await,
            Provider::OpenAiCodex => openai_codex::login(config, ui).await,
            Provider::GitHubCopilot => copilot::login(config, ui).await,
            Provider::Xai => xai::login(config, ui).await,
            Provider::OpenAi => openai_chatgpt::login(config, ui).await,
            Provider::KimiCoding => kimi::login(config, ui).await,
            Provider::OpenRouter => openrouter::login(config, ui).await,
            Provider::Meta => meta::login(config, ui).await,
            Provider::Radius => radius::login(config, ui).await,
        }
    }

    /// A renewed credential from `stored`; fields the provider does not set are kept.
    pub async fn refresh(self, config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
        match self {
            Provider::Anthropic => anthropic::refresh(config, stored).await,
            Provider::OpenAiCodex => openai_codex::refresh(config, stored).await,
            Provider::GitHubCopilot => copilot::refresh(config, stored).await,
            Provider::Xai => xai::refresh(config, stored).await,
            Provider::OpenAi => openai_chatgpt::refresh(config, stored).await,
            Provider::KimiCoding => kimi::refresh(config, stored).await,
            // The key OpenRouter mints does not expire.
            Provider::OpenRouter => Ok(stored.clone()),
            Provider::Meta => meta::refresh(config, stored).await,
            Provider::Radius => radius::refresh(config, stored).await,
        }
    }

    /// The key (and base URL) a request with `credential` uses.
    pub fn request_auth(self, credential: &Credential) -> Option<RequestAuth> {
        let access = credential
            .get("access")
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())?;
        let base_url = match self {
            Provider::GitHubCopilot => Some(copilot::copilot_base_url(
                access,
                copilot::enterprise_domain(credential).as_deref(),
            )),
            _ => None,
        };
        Some(RequestAuth {
            api_key: access.to_string(),
            base_url,
        })
    }
}
