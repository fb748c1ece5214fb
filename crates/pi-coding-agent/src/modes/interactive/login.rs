//! `/login` and `/logout`: stored credentials in auth.json. An API key is asked for and saved
//! as `{type: "api_key", key}`; subscription (OAuth) providers are listed, but their browser
//! login cannot be completed by this build, which says so instead of pretending.

use pi_tui::components::SelectItem;

use super::commands::paths_for;
use super::dialogs::Dialog;
use super::effect::{blocking, notice, then, Ctx, Effect, Overlay, Picker};
use crate::config::auth::{AuthSource, Credential};

const SUBSCRIPTION: &str = "Use a subscription";
const API_KEY: &str = "Use an API key";

/// Subscription providers pi can log in to, with their display names.
pub const OAUTH_PROVIDERS: &[(&str, &str)] = &[
    ("anthropic", "Anthropic (Claude Pro/Max)"),
    ("github-copilot", "GitHub Copilot"),
    ("openai-codex", "ChatGPT Plus/Pro (Codex Subscription)"),
];

/// Providers whose only login is a subscription (never offered for an API key).
const OAUTH_ONLY: &[&str] = &["github-copilot", "openai-codex"];

/// A provider offered by the login and logout lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderOption {
    pub id: String,
    pub name: String,
    pub oauth: bool,
}

fn show(dialog: Dialog, picker: Picker) -> Vec<Effect> {
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        picker,
    })]
}

/// The providers the API-key login offers: every provider of a known model except the
/// subscription-only ones, sorted by name.
pub fn api_key_providers(providers: impl IntoIterator<Item = (String, String)>) -> Vec<ProviderOption> {
    let mut out: Vec<ProviderOption> = Vec::new();
    for (id, name) in providers {
        if OAUTH_ONLY.contains(&id.as_str()) || out.iter().any(|o| o.id == id) {
            continue;
        }
        out.push(ProviderOption { id, name, oauth: false });
    }
    out.sort_by_key(|o| o.name.to_lowercase());
    out
}

/// `/login`: first the kind of login.
pub fn open_login(cx: &Ctx<'_>) -> Vec<Effect> {
    let items = vec![SelectItem::new(SUBSCRIPTION), SelectItem::new(API_KEY)];
    let dialog = Dialog::choice("Select authentication method:", items, false, cx.theme.clone());
    show(dialog, Picker::LoginMethod)
}

fn status_of(reg: &crate::config::ModelRegistry, p: &ProviderOption) -> String {
    match reg.auth().get(&p.id) {
        Some(Credential::OAuth { .. }) if p.oauth => " ✓ configured".into(),
        Some(Credential::ApiKey { .. }) if !p.oauth => " ✓ configured".into(),
        Some(Credential::OAuth { .. }) => " • subscription configured".into(),
        Some(_) => " • API key configured".into(),
        None if p.oauth => " • unconfigured".into(),
        None => match reg.auth().auth_source(&p.id) {
            Some(AuthSource::Environment(name)) if !name.is_empty() => format!(" ✓ env: {name}"),
            Some(AuthSource::Environment(_)) => " ✓ env: API key".into(),
            Some(AuthSource::Runtime) => " ✓ runtime API key".into(),
            Some(AuthSource::Fallback) => " ✓ custom API key".into(),
            _ if reg.provider_has_auth(&p.id) => " ✓ key in models.json".into(),
            _ => " • unconfigured".into(),
        },
    }
}

fn open_providers(cx: &Ctx<'_>, oauth: bool) -> Vec<Effect> {
    let options: Vec<ProviderOption> = if oauth {
        OAUTH_PROVIDERS
            .iter()
            .map(|(id, name)| ProviderOption {
                id: id.to_string(),
                name: name.to_string(),
                oauth: true,
            })
            .collect()
    } else {
        let Ok(reg) = cx.session.registry().lock() else {
            return Vec::new();
        };
        api_key_providers(
            reg.all()
                .iter()
                .map(|m| (m.provider.clone(), reg.provider_display_name(&m.provider).to_string())),
        )
    };
    if options.is_empty() {
        return vec![notice(
            if oauth {
                "No subscription providers available."
            } else {
                "No API key providers available."
            },
            "dim",
        )];
    }
    let Ok(reg) = cx.session.registry().lock() else {
        return Vec::new();
    };
    let items = options
        .iter()
        .map(|p| {
            SelectItem::new(p.id.clone())
                .with_label(p.name.clone())
                .with_description(status_of(&reg, p).trim().to_string())
        })
        .collect();
    drop(reg);
    let dialog = Dialog::choice("Select provider to configure:", items, true, cx.theme.clone());
    show(dialog, Picker::LoginProvider { oauth, options })
}

/// `/logout`: every stored credential.
pub fn open_logout(cx: &Ctx<'_>) -> Vec<Effect> {
    let options: Vec<ProviderOption> = match cx.session.registry().lock() {
        Ok(reg) => {
            let auth = reg.auth();
            let mut v: Vec<ProviderOption> = auth
                .list()
                .into_iter()
                .filter_map(|id| {
                    let cred = auth.get(&id)?;
                    Some(ProviderOption {
                        name: reg.provider_display_name(&id).to_string(),
                        oauth: matches!(cred, Credential::OAuth { .. }),
                        id,
                    })
                })
                .collect();
            v.sort_by_key(|o| o.name.to_lowercase());
            v
        }
        Err(_) => return Vec::new(),
    };
    if options.is_empty() {
        return vec![notice(
            "No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.",
            "dim",
        )];
    }
    let items = options
        .iter()
        .map(|p| {
            SelectItem::new(p.id.clone())
                .with_label(p.name.clone())
                .with_description(if p.oauth { "subscription" } else { "API key" })
        })
        .collect();
    let dialog = Dialog::choice("Select provider to logout:", items, true, cx.theme.clone());
    show(dialog, Picker::Logout(options))
}

/// The login method was chosen.
pub fn method_chosen(cx: &Ctx<'_>, value: &str) -> Vec<Effect> {
    open_providers(cx, value == SUBSCRIPTION)
}

/// A provider was chosen for login.
pub fn provider_chosen(cx: &Ctx<'_>, oauth: bool, options: &[ProviderOption], value: &str) -> Vec<Effect> {
    let Some(p) = options.iter().find(|o| o.id == value).cloned() else {
        return Vec::new();
    };
    if oauth {
        return vec![notice(
            format!(
                "Login to {} failed: subscription (OAuth) login is not available in this build. Use /login with an API key instead.",
                p.name
            ),
            "error",
        )];
    }
    if p.id == "amazon-bedrock" {
        return vec![Effect::Info(
            "**Amazon Bedrock setup**\n\nBedrock signs requests with AWS credentials, not a single API key: \
             set an AWS profile (`AWS_PROFILE`), IAM keys (`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`), \
             a bearer token (`AWS_BEARER_TOKEN_BEDROCK`) or a role in the environment, then restart pi."
                .into(),
        )];
    }
    let dialog = Dialog::prompt(format!("Login to {}", p.name), "Enter API key:", "", cx.theme.clone());
    show(dialog, Picker::LoginKey(p))
}

/// Change the stored credentials and refresh the registry, then write auth.json with the
/// registry unlocked (its file lock may wait for another pi); on the blocking pool. The error,
/// if any.
fn change_auth(
    registry: &std::sync::Mutex<crate::config::ModelRegistry>,
    change: impl FnOnce(&mut crate::config::auth::AuthStorage) -> crate::config::auth::AuthWrite,
) -> Option<String> {
    let write = match registry.lock() {
        Ok(mut reg) => {
            let write = change(reg.auth_mut());
            reg.refresh();
            write
        }
        Err(_) => return Some("the model registry is unavailable".to_string()),
    };
    write.apply().err()
}

/// The API key was entered: saved on the blocking pool, then reported.
pub fn key_entered(cx: &Ctx<'_>, p: ProviderOption, key: &str) -> Vec<Effect> {
    let key = key.trim().to_string();
    if key.is_empty() {
        return vec![notice(
            format!("Failed to save API key for {}: API key cannot be empty.", p.name),
            "error",
        )];
    }
    let registry = cx.session.registry().clone();
    let path = paths_for(&cx.session).auth_path();
    vec![blocking(move || {
        let error = change_auth(&registry, |auth| auth.stage(&p.id, Some(Credential::api_key(&key))));
        then(move |cx| {
            let mut out = Vec::new();
            match error {
                Some(e) => out.push(notice(format!("Failed to save API key for {}: {e}", p.name), "error")),
                None => {
                    out.push(notice(
                        format!("Saved API key for {}. Credentials saved to {}", p.name, path.display()),
                        "dim",
                    ));
                    // Without a model yet, the provider's first model becomes the current one.
                    if cx.session.model().is_none() {
                        match cx.session.available_models().into_iter().find(|m| m.provider == p.id) {
                            Some(m) => out.push(super::commands::set_model(cx.session.clone(), m)),
                            None => out.push(notice(
                                format!("No models are available for {}. Use /model to select a model.", p.name),
                                "error",
                            )),
                        }
                    }
                }
            }
            out.push(Effect::RefreshFooter);
            out
        })
    })]
}

/// A credential was chosen for removal: removed on the blocking pool, then reported.
pub fn logout_chosen(cx: &Ctx<'_>, options: &[ProviderOption], value: &str) -> Vec<Effect> {
    let Some(p) = options.iter().find(|o| o.id == value).cloned() else {
        return Vec::new();
    };
    let registry = cx.session.registry().clone();
    vec![blocking(move || {
        let error = change_auth(&registry, |auth| auth.stage(&p.id, None));
        let text = match error {
            Some(e) => Err(format!("Logout failed: {e}")),
            None if p.oauth => Ok(format!("Logged out of {}", p.name)),
            None => Ok(format!(
                "Removed stored API key for {}. Environment variables and models.json config are unchanged.",
                p.name
            )),
        };
        then(move |_| {
            vec![
                match text {
                    Ok(t) => notice(t, "dim"),
                    Err(t) => notice(t, "error"),
                },
                Effect::RefreshFooter,
            ]
        })
    })]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_providers_skip_subscription_only_and_duplicates() {
        let v = api_key_providers(vec![
            ("openai".to_string(), "OpenAI".to_string()),
            ("github-copilot".to_string(), "GitHub Copilot".to_string()),
            ("anthropic".to_string(), "Anthropic".to_string()),
            ("openai".to_string(), "OpenAI".to_string()),
        ]);
        let ids: Vec<&str> = v.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["anthropic", "openai"]);
    }
}
