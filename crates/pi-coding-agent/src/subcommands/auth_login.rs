//! `pi auth login` (sign in with an account, see `auth_oauth`, or store an API key typed on
//! the terminal) and `pi auth logout` (forget a stored credential). Account providers whose
//! sign-in this build lacks are told so instead of failing half-way.

use std::io::{IsTerminal, Write};

use crate::cli::console::Console;
use crate::config::auth::{AuthStorage, Credential};
use crate::config::paths::Paths;

const LOGIN_USAGE: &str = "pi auth login <provider> [--api-key] [--no-browser]";

/// Providers that pi 1.6 signs in to with an account.
const ACCOUNT_PROVIDERS: &[&str] = &[
    "anthropic",
    "github-copilot",
    "openai-codex",
    "openai",
    "xai",
    "openrouter",
    "kimi-coding",
    "meta",
    "radius",
];

/// Providers whose credentials come from their own tooling (profiles, gcloud), not a key.
const AMBIENT_PROVIDERS: &[&str] = &["amazon-bedrock", "google-vertex"];

#[derive(Debug, PartialEq, Eq)]
struct LoginRequest {
    provider: String,
    api_key: bool,
    browser: bool,
}

fn parse_login(args: &[String]) -> Result<LoginRequest, String> {
    let usage = || format!("Usage: {LOGIN_USAGE}");
    let mut request = LoginRequest {
        provider: String::new(),
        api_key: false,
        browser: true,
    };
    for arg in args {
        match arg.as_str() {
            "--api-key" => request.api_key = true,
            "--no-browser" => request.browser = false,
            _ if arg.starts_with('-') || !request.provider.is_empty() => return Err(usage()),
            _ => request.provider = arg.clone(),
        }
    }
    if request.provider.is_empty() {
        return Err(usage());
    }
    if request.api_key && !request.browser {
        return Err("--no-browser only applies to account sign-in; omit it with --api-key.".into());
    }
    Ok(request)
}

/// What a key login asks besides the key, as pi 1.6's Cloudflare logins: the key's prompt,
/// then each variable kept in the entry's `env` with its prompt (Cloudflare's URLs name the
/// account, and for the AI Gateway the gateway).
fn key_login_prompts(provider: &str, name: &str) -> (String, &'static [(&'static str, &'static str)]) {
    const ACCOUNT: (&str, &str) = ("CLOUDFLARE_ACCOUNT_ID", "Enter Cloudflare account ID: ");
    const GATEWAY: (&str, &str) = ("CLOUDFLARE_GATEWAY_ID", "Enter Cloudflare AI Gateway ID: ");
    match provider {
        "cloudflare-workers-ai" => ("Enter Cloudflare API key: ".into(), &[ACCOUNT]),
        "cloudflare-ai-gateway" => ("Enter Cloudflare API key: ".into(), &[ACCOUNT, GATEWAY]),
        _ => (format!("Enter {name} API key: "), &[]),
    }
}

/// Read an echoed line from the terminal; `None` at end of input.
fn read_line(prompt: &str) -> std::io::Result<Option<String>> {
    let mut out = std::io::stdout();
    write!(out, "{prompt}")?;
    out.flush()?;
    let mut line = String::new();
    if std::io::stdin().read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim().to_string()))
}

/// Whether pi can store an API key for the built-in `provider`.
fn has_key_login(provider: &str) -> bool {
    pi_ai::env_keys::api_key_env_vars(provider).is_some() && !AMBIENT_PROVIDERS.contains(&provider)
}

fn display_name(provider: &str) -> &str {
    crate::config::provider_names::builtin_provider_name(provider).unwrap_or(provider)
}

/// Read a line from the terminal without echoing it.
fn read_secret(prompt: &str) -> std::io::Result<Option<String>> {
    use crossterm::event::{read, Event, KeyCode, KeyEventKind, KeyModifiers};
    let mut out = std::io::stdout();
    // Raw mode first: a key typed as soon as the prompt shows is then neither echoed nor lost
    // (switching modes after the prompt raced with a fast typist and flushed the typed line).
    crossterm::terminal::enable_raw_mode()?;
    if let Err(e) = write!(out, "{prompt}").and_then(|()| out.flush()) {
        let _ = crossterm::terminal::disable_raw_mode();
        return Err(e);
    }
    let mut secret = String::new();
    let result = loop {
        let event = match read() {
            Ok(e) => e,
            Err(e) => break Err(e),
        };
        let Event::Key(key) = event else { continue };
        if key.kind == KeyEventKind::Release {
            continue;
        }
        match key.code {
            KeyCode::Enter => break Ok(Some(secret.trim().to_string())),
            KeyCode::Esc => break Ok(None),
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => break Ok(None),
            KeyCode::Backspace => {
                secret.pop();
            }
            KeyCode::Char(c) => secret.push(c),
            _ => {}
        }
    };
    let _ = crossterm::terminal::disable_raw_mode();
    writeln!(out)?;
    result
}

/// `pi auth login <provider> [--api-key] [--no-browser]`.
pub fn login(args: &[String], paths: &Paths, console: &Console) -> i32 {
    // As pi 1.6: the HTTP settings are read first (the project's are not trusted here), and an
    // unreadable idle timeout stops the command before anything else.
    let mut settings = crate::config::settings::SettingsManager::load(paths);
    settings.ignore_project();
    if let Err(e) = settings.http_idle_timeout_setting() {
        console.error(&e);
        return 1;
    }
    let request = match parse_login(args) {
        Ok(r) => r,
        Err(e) => {
            console.bare_error(&e);
            return 1;
        }
    };
    // models.json providers with their own Radius gateway sign in like the built-in one.
    let gateways = crate::config::oauth::radius_gateways(paths);
    let mut providers: Vec<&str> = pi_ai::models::get_providers()
        .into_iter()
        .filter(|p| has_key_login(p) || ACCOUNT_PROVIDERS.contains(p) || AMBIENT_PROVIDERS.contains(p))
        .chain(gateways.iter().map(|(id, _)| id.as_str()))
        .collect();
    providers.sort_unstable();
    providers.dedup();
    let lower = request.provider.to_lowercase();
    let Some(provider) = providers.iter().copied().find(|p| p.to_lowercase() == lower) else {
        console.bare_error(&format!("Unknown provider \"{}\".", request.provider.escape_debug()));
        console.bare_error(&format!("Providers: {}", providers.join(", ")));
        return 1;
    };
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        console.bare_error(&format!("\"{LOGIN_USAGE}\" requires an interactive terminal"));
        return 1;
    }
    let gateway = gateways.iter().find(|(id, _)| id == provider).map(|(_, g)| g);
    let name = gateway.map_or_else(|| display_name(provider), |g| g.name.as_str());
    let account = gateway.is_some() || ACCOUNT_PROVIDERS.contains(&provider);
    // A gateway of models.json also takes a Radius API key, asked for as Radius's is.
    let key_login = gateway.is_some() || has_key_login(provider);
    if account && !request.api_key && (gateway.is_some() || pi_oauth::Provider::from_id(provider).is_some()) {
        return super::auth_oauth::login(provider, name, request.browser, paths, console);
    }
    if account && !request.api_key {
        let hint = if key_login {
            format!(" Use \"pi auth login {provider} --api-key\" to store an API key instead.")
        } else {
            String::new()
        };
        console.bare_error(&format!(
            "Signing in to {name} with an account is not available in this build.{hint}"
        ));
        return 1;
    }
    if !key_login {
        console.bare_error(&if account {
            format!("{name} has no API key login. Omit --api-key to sign in.")
        } else {
            format!("{name} is configured outside pi (ambient credentials).")
        });
        return 1;
    }
    let (key_prompt, env_prompts) = key_login_prompts(provider, if gateway.is_some() { "Radius" } else { name });
    let key = match read_secret(&key_prompt) {
        Ok(Some(k)) if !k.is_empty() => k,
        Ok(_) => {
            console.bare_error("Login cancelled.");
            return 1;
        }
        Err(e) => {
            console.bare_error(&format!("Failed to log in to {name}: {e}"));
            return 1;
        }
    };
    let mut env = serde_json::Map::new();
    for (var, prompt) in env_prompts {
        match read_line(prompt) {
            Ok(Some(value)) => {
                env.insert((*var).to_string(), serde_json::Value::String(value));
            }
            Ok(None) => {
                console.bare_error("Login cancelled.");
                return 1;
            }
            Err(e) => {
                console.bare_error(&format!("Failed to log in to {name}: {e}"));
                return 1;
            }
        }
    }
    let mut credential = Credential::api_key(key);
    if let (false, Credential::ApiKey { extra, .. }) = (env.is_empty(), &mut credential) {
        extra.insert("env".into(), serde_json::Value::Object(env));
    }
    let mut auth = AuthStorage::open(paths.auth_path(), |_| None);
    auth.set(provider, credential);
    if let Some(e) = auth.drain_errors().into_iter().next() {
        console.bare_error(&format!("Failed to log in to {name}: {e}"));
        return 1;
    }
    println!(
        "Saved API key for {name}. Credentials saved to {}",
        paths.auth_path().display()
    );
    super::auth_oauth::refresh_catalog_after_login(paths, provider, name, |line| println!("{line}"));
    0
}

/// `pi auth logout <provider>`.
pub fn logout(args: &[String], paths: &Paths, console: &Console) -> i32 {
    let [provider_ref] = args else {
        console.bare_error("Usage: pi auth logout <provider>");
        return 1;
    };
    if provider_ref.starts_with('-') {
        console.bare_error("Usage: pi auth logout <provider>");
        return 1;
    }
    let registry = super::auth::open_registry(paths);
    let lower = provider_ref.to_lowercase();
    let known = registry
        .all()
        .iter()
        .map(|m| m.provider.clone())
        .chain(pi_ai::models::get_providers().into_iter().map(str::to_string))
        .find(|p| p.to_lowercase() == lower);
    let mut auth = AuthStorage::open(paths.auth_path(), |_| None);
    let stored = auth.list();
    let id = known.clone().unwrap_or_else(|| provider_ref.clone());
    let credential = stored.iter().find(|p| **p == id).and_then(|p| auth.get(p));
    if known.is_none() && credential.is_none() {
        let mut ids = stored.clone();
        ids.sort();
        console.bare_error(&format!("Unknown provider \"{}\".", provider_ref.escape_debug()));
        let list = if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        };
        console.bare_error(&format!("Stored credentials: {list}"));
        return 1;
    }
    let name = registry.provider_display_name(&id).to_string();
    let Some(credential) = credential else {
        println!("No stored credentials for {name}. Environment variables and models.json config are unchanged.");
        return 0;
    };
    auth.remove(&id);
    if let Some(e) = auth.drain_errors().into_iter().next() {
        console.bare_error(&format!("Logout failed: {e}"));
        return 1;
    }
    if matches!(credential, Credential::OAuth { .. }) {
        println!("Logged out of {name}.");
    } else {
        println!("Removed stored API key for {name}. Environment variables and models.json config are unchanged.");
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn login_arguments() {
        assert_eq!(
            parse_login(&argv(&["openai", "--api-key"])),
            Ok(LoginRequest {
                provider: "openai".into(),
                api_key: true,
                browser: true
            })
        );
        let usage = Err(format!("Usage: {LOGIN_USAGE}"));
        assert_eq!(parse_login(&argv(&[])), usage);
        assert_eq!(parse_login(&argv(&["a", "b"])), usage);
        assert_eq!(parse_login(&argv(&["a", "--bogus"])), usage);
        assert_eq!(
            parse_login(&argv(&["a", "--api-key", "--no-browser"])),
            Err("--no-browser only applies to account sign-in; omit it with --api-key.".into())
        );
    }

    #[test]
    fn which_providers_take_a_key() {
        assert!(has_key_login("openai"));
        assert!(has_key_login("groq"));
        assert!(!has_key_login("amazon-bedrock"));
        assert!(!has_key_login("openai-codex"));
    }
}
