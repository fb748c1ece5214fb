//! pi 1.6 warns when the current model is Anthropic's and is reached through a Claude
//! subscription (an OAuth login, or a subscription token as the key): such use is billed as
//! extra usage. It checks at startup, after a model switch (`/model`, the picker, cycling)
//! and after a sign-in, and warns once a run (`App::check_subscription`).
//! `warnings.anthropicExtraUsage: false` turns the warning off.

use pi_coding_agent::session::AgentSession;

/// The warning, as pi 1.6 words it (it points at the setting that silences it).
const WARNING: &str = "Anthropic subscription auth is active. Third-party harness usage draws from extra usage and is billed per token, not your Claude plan limits. Manage extra usage at https://claude.ai/settings/usage. Disable this warning in /settings.";

/// The warning for `session`'s model, when it applies.
pub fn warning(session: &AgentSession) -> Option<String> {
    let model = session.model()?;
    let enabled = session
        .settings()
        .lock()
        .is_ok_and(|s| s.warning_enabled("anthropicExtraUsage"));
    if !enabled || model.provider != "anthropic" {
        return None;
    }
    let mut registry = session.registry().lock().ok()?;
    let oauth = registry.provider_uses_oauth("anthropic");
    // Only a stored key is resolved here: an OAuth login is recognised without its token.
    let key = if oauth {
        None
    } else {
        registry.auth_mut().api_key("anthropic", true)
    };
    applies(&model.provider, enabled, oauth, key.as_deref()).then(|| WARNING.to_string())
}

/// Whether to warn: Anthropic, the warning on, and an OAuth login or a subscription token.
fn applies(provider: &str, enabled: bool, oauth: bool, key: Option<&str>) -> bool {
    enabled && provider == "anthropic" && (oauth || key.is_some_and(|k| k.starts_with("sk-ant-oat")))
}

#[cfg(test)]
mod tests {
    use super::applies;

    #[test]
    fn only_an_anthropic_subscription_with_the_warning_on_is_reported() {
        assert!(applies("anthropic", true, true, None));
        assert!(applies("anthropic", true, false, Some("sk-ant-oat01-abc")));
        assert!(!applies("anthropic", true, false, Some("sk-ant-api03-abc")));
        assert!(!applies("anthropic", true, false, None));
        assert!(!applies("anthropic", false, true, None));
        assert!(!applies("openai", true, true, Some("sk-ant-oat01-abc")));
    }
}
