//! `pi auth print-api-key`, `print-bearer-token` and `check`: a provider's credential resolved
//! exactly as a request would resolve it (runtime key, auth.json, environment, models.json
//! `apiKey` with `$VAR` and `!command`), printed for another program or judged for readiness.

use pi_ai::Model;

use super::auth::{Command, Kind};
use crate::cli::console::Console;
use crate::cli::Args;
use crate::config::auth::Credential;
use crate::config::model_reference::{resolve_model_reference, Reference};
use crate::config::model_resolver::{resolve_cli_model, DEFAULT_MODEL_PER_PROVIDER};
use crate::config::paths::Paths;
use crate::config::ModelRegistry;

/// `--provider` and `--model` of an auth command, trimmed; `Err` with the message.
fn target(args: &Args, kind: Kind) -> Result<(Option<String>, Option<String>), String> {
    let clean = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let (provider, model) = (clean(&args.provider), clean(&args.model));
    if args.api_key.is_some() || !args.messages.is_empty() || !args.file_args.is_empty() {
        return Err("Auth commands only accept --provider and --model".into());
    }
    if provider.is_none() && model.is_none() {
        return Err(match kind {
            Kind::Check => "Auth checks require --provider <provider> or --model <model>".into(),
            _ => "Credential printing requires --provider <provider> or --model <model>".into(),
        });
    }
    Ok((provider, model))
}

/// The provider id as the registry spells it, if it knows the provider.
fn known_provider(registry: &ModelRegistry, name: &str) -> Option<String> {
    let lower = name.to_lowercase();
    registry
        .all()
        .iter()
        .map(|m| m.provider.as_str())
        .chain(pi_ai::models::get_providers())
        .find(|p| p.to_lowercase() == lower)
        .map(str::to_string)
}

fn is_oauth(registry: &ModelRegistry, provider: &str) -> bool {
    matches!(registry.auth().get(provider), Some(Credential::OAuth { .. }))
}

/// The credential a request to `model` (or to the provider) would carry: the API key, or a
/// bearer token from an `Authorization` header.
fn resolve_credential(registry: &mut ModelRegistry, provider: &str, model: Option<&Model>) -> Option<String> {
    let first_model = || registry.all().iter().find(|m| m.provider == provider).cloned();
    let model = model.cloned().or_else(first_model);
    if let Some(model) = model {
        if let Ok(auth) = registry.request_auth(&model) {
            if let Some(key) = auth.api_key.filter(|k| !k.is_empty()) {
                return Some(key);
            }
            let bearer = auth
                .headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("authorization"));
            if let Some((_, value)) = bearer {
                let mut parts = value.splitn(2, char::is_whitespace);
                if parts.next().is_some_and(|s| s.eq_ignore_ascii_case("bearer")) {
                    return parts
                        .next()
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_string);
                }
            }
            return None;
        }
    }
    registry.api_key_for_provider(provider).filter(|k| !k.is_empty())
}

/// A bearer token needs this much lifetime left unless `--min-expiry` says otherwise.
const DEFAULT_MIN_EXPIRY_MS: u64 = 30 * 60_000;

/// The stored OAuth access token when it stays valid for `min_expiry_ms` (after a refresh,
/// or for a provider no refresher knows, so nothing could renew it).
fn fresh_access_token(registry: &ModelRegistry, provider: &str, min_expiry_ms: Option<u64>) -> Option<String> {
    let Some(Credential::OAuth { access, expires, .. }) = registry.auth().get(provider) else {
        return None;
    };
    let min = i64::try_from(min_expiry_ms.unwrap_or(DEFAULT_MIN_EXPIRY_MS)).unwrap_or(i64::MAX);
    let now = chrono::Utc::now().timestamp_millis();
    (expires.saturating_sub(now) >= min && !access.is_empty()).then_some(access)
}

/// print-api-key / print-bearer-token: the one credential, or the message.
fn credential_for_print(command: &Command, args: &Args, registry: &mut ModelRegistry) -> Result<String, String> {
    let (cli_provider, cli_model) = target(args, command.kind)?;
    let stored = registry.auth().list();
    let mut providers: Vec<(String, Option<Model>)> = Vec::new();
    if let Some(p) = &cli_provider {
        let provider = known_provider(registry, p)
            .ok_or_else(|| format!("Unknown provider \"{p}\". Use --list-models to see available providers."))?;
        let model = match &cli_model {
            Some(m) => {
                let resolved = resolve_cli_model(
                    Some(&provider),
                    Some(m),
                    registry.all(),
                    DEFAULT_MODEL_PER_PROVIDER,
                    &|p| registry.provider_has_auth(p),
                    false,
                    None,
                );
                if let Some(e) = resolved.error {
                    return Err(e);
                }
                Some(resolved.model.ok_or("Unable to resolve the requested provider/model")?)
            }
            None => None,
        };
        providers.push((provider, model));
    } else if let Some(m) = &cli_model {
        // Only providers with a stored credential are searched, as in pi.
        for provider in &stored {
            if let Reference::Resolved { model, .. } =
                resolve_model_reference(m, Some(provider), registry.all(), &|_| true)
            {
                providers.push((provider.clone(), Some(*model)));
            }
        }
        if providers.is_empty() {
            return Err(format!(
                "Model \"{m}\" not found. Use --list-models to see available models."
            ));
        }
    }
    let mut found: Vec<(String, String)> = Vec::new();
    for (provider, model) in &providers {
        let oauth = is_oauth(registry, provider);
        if (command.kind == Kind::ApiKey) == oauth {
            continue;
        }
        let refreshed = if oauth && command.kind == Kind::BearerToken {
            let min = i64::try_from(command.min_expiry_ms.unwrap_or(DEFAULT_MIN_EXPIRY_MS)).unwrap_or(i64::MAX);
            registry.auth_mut().oauth_access_token(provider, min)?
        } else {
            None
        };
        let value = match refreshed {
            // Refreshed when it had less than the minimum left; it must have it now.
            Some(_) => Some(
                fresh_access_token(registry, provider, command.min_expiry_ms)
                    .ok_or_else(|| format!("OAuth refresh returned a token that expires too soon for {provider}"))?,
            ),
            None => resolve_credential(registry, provider, model.as_ref())
                .or_else(|| fresh_access_token(registry, provider, command.min_expiry_ms)),
        };
        if let Some(value) = value {
            found.push((provider.clone(), value));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0).1),
        0 => {
            let first = providers.first().map(|(p, _)| p.as_str()).unwrap_or_default();
            let oauth = is_oauth(registry, first);
            Err(match command.kind {
                Kind::ApiKey if cli_provider.is_some() && oauth => {
                    format!("Provider \"{first}\" is configured with OAuth, not an API key")
                }
                Kind::BearerToken if cli_provider.is_some() && !oauth => {
                    format!("Provider \"{first}\" is not configured with an OAuth bearer token")
                }
                Kind::ApiKey => "No usable API key is configured".into(),
                _ => "No usable OAuth bearer token is configured".into(),
            })
        }
        _ => {
            let names: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
            Err(format!(
                "Multiple configured providers matched ({}). Specify --provider.",
                names.join(", ")
            ))
        }
    }
}

/// The outcome of `auth check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub status: &'static str,
    pub provider: String,
    /// `authType` when ready, else `reason`.
    pub detail: (&'static str, &'static str),
}

impl Check {
    fn not_ready(provider: String, reason: &'static str) -> Check {
        Check {
            status: "not_ready",
            provider,
            detail: ("reason", reason),
        }
    }

    fn invalid(provider: String) -> Check {
        Check {
            status: "invalid",
            provider,
            detail: ("reason", "invalid_state"),
        }
    }

    fn exit_code(&self) -> i32 {
        match self.status {
            "ready" => 0,
            "not_ready" => 1,
            _ => 2,
        }
    }

    fn json(&self, credential: Option<&str>) -> String {
        let mut object = serde_json::Map::new();
        object.insert("status".into(), self.status.into());
        object.insert("provider".into(), self.provider.clone().into());
        object.insert(self.detail.0.into(), self.detail.1.into());
        if let Some(c) = credential {
            object.insert("credentials".into(), c.into());
        }
        serde_json::Value::Object(object).to_string()
    }
}

/// `auth check`: whether the provider (or the model's provider) has usable credentials.
fn check(
    command: &Command,
    provider: Option<String>,
    model: Option<String>,
    registry: &mut ModelRegistry,
) -> (Check, Option<String>) {
    let requested = provider.clone().or_else(|| model.clone()).unwrap_or_default();
    let mut provider = provider;
    if let Some(m) = &model {
        let resolved = resolve_cli_model(
            provider.as_deref(),
            Some(m),
            registry.all(),
            DEFAULT_MODEL_PER_PROVIDER,
            &|p| registry.provider_has_auth(p),
            false,
            None,
        );
        match resolved.model {
            Some(found) if resolved.error.is_none() => provider = Some(found.provider),
            _ => return (Check::invalid(requested), None),
        }
    }
    let Some(provider) = provider else {
        return (Check::invalid(requested), None);
    };
    if registry.error().is_some() {
        return (Check::invalid(provider), None);
    }
    let Some(provider) = known_provider(registry, &provider) else {
        return (Check::not_ready(provider, "provider_not_found"), None);
    };
    if !registry.provider_has_auth(&provider) {
        return (Check::not_ready(provider, "credentials_not_configured"), None);
    }
    // Resolving runs `!command` keys and refreshes OAuth tokens; --no-refresh only looks.
    let credential = if command.no_refresh {
        match registry.auth().get(&provider) {
            Some(Credential::OAuth { access, .. }) => Some(access),
            _ => resolve_credential(registry, &provider, None),
        }
    } else {
        let credential = resolve_credential(registry, &provider, None);
        if credential.is_none() {
            return (Check::not_ready(provider, "credentials_not_configured"), None);
        }
        credential
    };
    let auth_type = if is_oauth(registry, &provider) {
        "oauth"
    } else {
        "api_key"
    };
    let ready = Check {
        status: "ready",
        provider: provider.clone(),
        detail: ("authType", auth_type),
    };
    if command.credentials {
        return match credential {
            Some(c) => (ready, Some(c)),
            None => (Check::not_ready(provider, "credential_not_available"), None),
        };
    }
    (ready, None)
}

/// Run a credential command; returns the exit code.
pub fn run(command: &Command, args: &Args, paths: &Paths, console: &Console) -> i32 {
    // The printing commands open the whole model runtime at once; `check` opens only the
    // credential store, once it has a target (as pi 1.6 does).
    if command.kind != Kind::Check {
        crate::config::agent_files::ensure_runtime_files(paths);
    }
    let mut registry = super::auth::open_registry(paths);
    if !args.diagnostics.is_empty() {
        let all: Vec<&str> = args.diagnostics.iter().map(|d| d.message.as_str()).collect();
        console.error(&all.join("\n"));
        return if command.kind == Kind::Check { 2 } else { 1 };
    }
    if command.kind != Kind::Check {
        return match credential_for_print(command, args, &mut registry) {
            Ok(value) => {
                println!("{value}");
                0
            }
            Err(e) => {
                console.error(&e);
                1
            }
        };
    }
    let (provider, model) = match target(args, Kind::Check) {
        Ok(t) => t,
        Err(e) => {
            console.error(&e);
            return 2;
        }
    };
    crate::config::agent_files::ensure_auth_file(paths);
    let (result, credential) = check(command, provider, model, &mut registry);
    if command.json {
        println!("{}", result.json(credential.as_deref()));
    } else {
        println!("{}", credential.as_deref().unwrap_or(result.status));
    }
    result.exit_code()
}
