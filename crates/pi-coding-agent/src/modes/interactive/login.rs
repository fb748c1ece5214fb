//! `/login` and `/logout`: stored credentials in auth.json. An API key is asked for and saved
//! as `{type: "api_key", key}`; subscription (OAuth) providers are listed, but their browser
//! login cannot be completed by this build, which says so instead of pretending.

use pi_tui::components::SelectItem;
use pi_tui::{OverlayOptions, Tui};

use super::app::{App, Picker};
use super::commands::paths_for;
use super::dialogs::Dialog;
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

fn show(app: &mut App, tui: &mut Tui, dialog: Dialog, picker: Picker) {
    let id = tui.show_overlay(Box::new(dialog), OverlayOptions::default());
    app.picker = Some((id, picker));
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
pub fn open_login(app: &mut App, tui: &mut Tui) {
    let items = vec![SelectItem::new(SUBSCRIPTION), SelectItem::new(API_KEY)];
    let dialog = Dialog::choice("Select authentication method:", items, false, app.theme.clone());
    show(app, tui, dialog, Picker::LoginMethod);
}

fn status_of(app: &App, p: &ProviderOption) -> String {
    let session = app.session();
    let Ok(reg) = session.registry().lock() else {
        return String::new();
    };
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

fn open_providers(app: &mut App, tui: &mut Tui, oauth: bool) {
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
        let session = app.session();
        let Ok(reg) = session.registry().lock() else { return };
        api_key_providers(
            reg.all()
                .iter()
                .map(|m| (m.provider.clone(), reg.provider_display_name(&m.provider).to_string())),
        )
    };
    if options.is_empty() {
        app.notice(
            if oauth {
                "No subscription providers available."
            } else {
                "No API key providers available."
            },
            "dim",
        );
        return;
    }
    let items = options
        .iter()
        .map(|p| {
            SelectItem::new(p.id.clone())
                .with_label(p.name.clone())
                .with_description(status_of(app, p).trim().to_string())
        })
        .collect();
    let dialog = Dialog::choice("Select provider to configure:", items, true, app.theme.clone());
    show(app, tui, dialog, Picker::LoginProvider { oauth, options });
}

/// `/logout`: every stored credential.
pub fn open_logout(app: &mut App, tui: &mut Tui) {
    let session = app.session();
    let options: Vec<ProviderOption> = match session.registry().lock() {
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
        Err(_) => return,
    };
    if options.is_empty() {
        app.notice(
            "No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.",
            "dim",
        );
        return;
    }
    let items = options
        .iter()
        .map(|p| {
            SelectItem::new(p.id.clone())
                .with_label(p.name.clone())
                .with_description(if p.oauth { "subscription" } else { "API key" })
        })
        .collect();
    let dialog = Dialog::choice("Select provider to logout:", items, true, app.theme.clone());
    show(app, tui, dialog, Picker::Logout(options));
}

/// The login method was chosen.
pub fn method_chosen(app: &mut App, tui: &mut Tui, value: &str) {
    open_providers(app, tui, value == SUBSCRIPTION);
}

/// A provider was chosen for login.
pub fn provider_chosen(app: &mut App, tui: &mut Tui, oauth: bool, options: &[ProviderOption], value: &str) {
    let Some(p) = options.iter().find(|o| o.id == value).cloned() else {
        return;
    };
    if oauth {
        app.notice(
            format!(
                "Login to {} failed: subscription (OAuth) login is not available in this build. Use /login with an API key instead.",
                p.name
            ),
            "error",
        );
        return;
    }
    if p.id == "amazon-bedrock" {
        app.info(
            "**Amazon Bedrock setup**\n\nBedrock signs requests with AWS credentials, not a single API key: \
             set an AWS profile (`AWS_PROFILE`), IAM keys (`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`), \
             a bearer token (`AWS_BEARER_TOKEN_BEDROCK`) or a role in the environment, then restart pi.",
        );
        return;
    }
    let dialog = Dialog::prompt(format!("Login to {}", p.name), "Enter API key:", "", app.theme.clone());
    show(app, tui, dialog, Picker::LoginKey(p));
}

/// The API key was entered.
pub fn key_entered(app: &mut App, p: &ProviderOption, key: &str) {
    let key = key.trim();
    if key.is_empty() {
        app.notice(
            format!("Failed to save API key for {}: API key cannot be empty.", p.name),
            "error",
        );
        return;
    }
    let session = app.session();
    let error = match session.registry().lock() {
        Ok(mut reg) => {
            reg.auth_mut().set(&p.id, Credential::api_key(key));
            let errors = reg.auth_mut().drain_errors();
            reg.refresh();
            errors.into_iter().next()
        }
        Err(_) => Some("the model registry is unavailable".to_string()),
    };
    match error {
        Some(e) => app.notice(format!("Failed to save API key for {}: {e}", p.name), "error"),
        None => {
            let path = paths_for(&session).auth_path();
            app.notice(
                format!("Saved API key for {}. Credentials saved to {}", p.name, path.display()),
                "dim",
            );
            // Without a model yet, the provider's first model becomes the current one.
            if session.model().is_none() {
                match session.available_models().into_iter().find(|m| m.provider == p.id) {
                    Some(m) => super::commands::spawn_set_model(session.clone(), m, app.tx.clone()),
                    None => app.notice(
                        format!("No models are available for {}. Use /model to select a model.", p.name),
                        "error",
                    ),
                }
            }
        }
    }
    app.refresh_footer();
}

/// A credential was chosen for removal.
pub fn logout_chosen(app: &mut App, options: &[ProviderOption], value: &str) {
    let Some(p) = options.iter().find(|o| o.id == value) else {
        return;
    };
    let session = app.session();
    let error = match session.registry().lock() {
        Ok(mut reg) => {
            reg.auth_mut().remove(&p.id);
            let errors = reg.auth_mut().drain_errors();
            reg.refresh();
            errors.into_iter().next()
        }
        Err(_) => Some("the model registry is unavailable".to_string()),
    };
    match error {
        Some(e) => app.notice(format!("Logout failed: {e}"), "error"),
        None if p.oauth => app.notice(format!("Logged out of {}", p.name), "dim"),
        None => app.notice(
            format!(
                "Removed stored API key for {}. Environment variables and models.json config are unchanged.",
                p.name
            ),
            "dim",
        ),
    }
    app.refresh_footer();
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
