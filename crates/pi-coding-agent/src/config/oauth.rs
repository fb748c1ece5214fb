//! Account sign-in joined to auth.json: the token refresher [`AuthStorage`] calls, and the
//! login that `pi auth login` and the `/login` screen run ([`login_and_save`]).
//!
//! The flows themselves are `pi-oauth`'s. Their endpoints follow `PI_OAUTH_ORIGIN` (a local
//! authorization server) and the callback binds `PI_OAUTH_CALLBACK_HOST` /
//! `PI_OAUTH_CALLBACK_PORT`; see [`pi_oauth::Config::from_env`].

use std::future::Future;

use pi_oauth::{Config, LoginUi, OAuthError, Provider, RadiusGateway};
use serde_json::Value;

use super::auth::{AuthStorage, Credential, OAuthRefresher};
use super::paths::Paths;
use super::settings::{SettingsManager, SettingsScope};

/// Refreshes and reads the OAuth logins `pi-oauth` implements.
pub struct OAuthTokens {
    config: Config,
    /// models.json providers signing in to their own Radius gateway.
    gateways: Vec<(String, RadiusGateway)>,
}

impl OAuthTokens {
    pub fn from_env() -> OAuthTokens {
        OAuthTokens {
            config: Config::from_env(),
            gateways: Vec::new(),
        }
    }

    /// [`OAuthTokens::from_env`] that also knows the Radius gateways of `paths`' models.json.
    pub fn for_paths(paths: &Paths) -> OAuthTokens {
        OAuthTokens {
            config: Config::from_env(),
            gateways: radius_gateways(paths),
        }
    }
}

/// The models.json providers with `"oauth": "radius"`: id and gateway (the `baseUrl` without
/// its `/v1`, as pi 1.6 derives it). An unreadable models.json has none; its error is
/// reported where models are listed.
pub fn radius_gateways(paths: &Paths) -> Vec<(String, RadiusGateway)> {
    let builtin: std::collections::HashSet<&str> = pi_ai::models::get_providers().into_iter().collect();
    let is_builtin = |p: &str| builtin.contains(p);
    let Ok(Some(config)) = super::models_json::load(&paths.models_path(), &is_builtin) else {
        return Vec::new();
    };
    config
        .providers
        .into_iter()
        .filter(|(_, p)| p.oauth.as_deref() == Some("radius"))
        .filter_map(|(id, p)| {
            let base = p.base_url?;
            let url = base
                .strip_suffix("/v1/")
                .or_else(|| base.strip_suffix("/v1"))
                .unwrap_or(&base)
                .to_string();
            let name = p.name.unwrap_or_else(|| id.clone());
            Some((id, RadiusGateway { url, name }))
        })
        .collect()
}

/// The sign-in flow of `provider` and the configuration it runs with: a models.json Radius
/// gateway first (it may even take over the built-in `radius`), else a built-in flow.
fn account_flow(base: &Config, gateways: &[(String, RadiusGateway)], provider: &str) -> Option<(Provider, Config)> {
    if let Some((_, gateway)) = gateways.iter().find(|(id, _)| id == provider) {
        let mut config = base.clone();
        config.radius_gateway = Some(gateway.clone());
        return Some((Provider::Radius, config));
    }
    Provider::from_id(provider).map(|flow| (flow, base.clone()))
}

fn as_map(credential: &Credential) -> Option<pi_oauth::Credential> {
    match credential.to_value() {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Run `future` to completion on a runtime of its own, on a thread of its own: refreshes are
/// asked for by synchronous code that may itself sit on an async runtime's thread.
fn run_apart<T: Send>(future: impl Future<Output = T> + Send) -> Result<T, String> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map(|runtime| runtime.block_on(future))
                    .map_err(|e| e.to_string())
            })
            .join()
            .map_err(|_| "the token refresh stopped unexpectedly".to_string())?
    })
}

impl OAuthRefresher for OAuthTokens {
    fn knows(&self, provider: &str) -> bool {
        account_flow(&self.config, &self.gateways, provider).is_some()
    }

    fn refresh(&self, provider: &str, credential: &Credential) -> Result<Credential, String> {
        let (flow, config) = account_flow(&self.config, &self.gateways, provider)
            .ok_or_else(|| format!("{provider} has no account sign-in"))?;
        let stored = as_map(credential).ok_or("the stored credential is not an object")?;
        let fresh = run_apart(flow.refresh(&config, &stored))?
            .map_err(|e| format!("OAuth refresh failed for {provider}: {e}"))?;
        Ok(Credential::from_value(&Value::Object(fresh)))
    }

    fn api_key(&self, provider: &str, credential: &Credential) -> Option<String> {
        let (flow, _) = account_flow(&self.config, &self.gateways, provider)?;
        Some(flow.request_auth(&as_map(credential)?)?.api_key)
    }
}

/// auth.json of `paths` with the environment's keys and the OAuth refresher.
pub fn open_auth(paths: &Paths) -> AuthStorage {
    let tokens = OAuthTokens::for_paths(paths);
    // A models.json Radius gateway takes the Radius key of the environment, as Radius does.
    let gateway_ids: Vec<String> = tokens.gateways.iter().map(|(id, _)| id.clone()).collect();
    let mut auth = AuthStorage::open(paths.auth_path(), move |provider| {
        if gateway_ids.iter().any(|id| id == provider) {
            pi_ai::env_api_key("radius")
        } else {
            pi_ai::env_api_key(provider)
        }
    });
    auth.set_oauth_refresher(Box::new(tokens));
    auth
}

/// The providers with an account sign-in: id and display name.
pub fn login_providers() -> Vec<(&'static str, &'static str)> {
    Provider::ALL.iter().map(|p| (p.id(), p.name())).collect()
}

/// This installation's id: settings.json's global `deviceId`, created (a random UUID) and
/// saved the first time it is needed, as pi 1.6 does.
pub fn device_id(paths: &Paths) -> Option<String> {
    let mut settings = SettingsManager::load(paths);
    if let Some(id) = settings
        .global_settings()
        .get("deviceId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
    {
        return Some(id.to_string());
    }
    let id = uuid::Uuid::new_v4().to_string();
    settings.set(SettingsScope::Global, "deviceId", Some(Value::from(id.clone())));
    Some(id)
}

/// Why [`login_and_save`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("{0} has no account sign-in")]
    UnknownProvider(String),
    #[error("Login cancelled")]
    Cancelled,
    #[error("{0}")]
    Flow(OAuthError),
    #[error("Signed in, but the credential could not be saved: {0}")]
    Save(String),
}

/// Sign in to `provider` through `ui` and store the credential in `paths`' auth.json (merged
/// under its lock, mode 0600). Blocking file work runs off the async runtime.
pub async fn login_and_save(paths: &Paths, provider: &str, ui: &dyn LoginUi) -> Result<(), LoginError> {
    login_and_save_with(&Config::from_env(), paths, provider, ui).await
}

/// [`login_and_save`] with the endpoints and callback of `config`.
pub async fn login_and_save_with(
    config: &Config,
    paths: &Paths,
    provider: &str,
    ui: &dyn LoginUi,
) -> Result<(), LoginError> {
    let gateways = {
        let paths = paths.clone();
        tokio::task::spawn_blocking(move || radius_gateways(&paths))
            .await
            .unwrap_or_default()
    };
    let (flow, mut config) =
        account_flow(config, &gateways, provider).ok_or_else(|| LoginError::UnknownProvider(provider.to_string()))?;
    if flow == Provider::OpenAi && config.device_id.is_none() {
        let paths = paths.clone();
        config.device_id = tokio::task::spawn_blocking(move || device_id(&paths))
            .await
            .ok()
            .flatten();
    }
    let credential = match flow.login(&config, ui).await {
        Ok(c) => c,
        Err(OAuthError::Cancelled) => return Err(LoginError::Cancelled),
        Err(e) => return Err(LoginError::Flow(e)),
    };
    let path = paths.auth_path();
    // Saved under the provider signed in to: a models.json gateway keeps its own entry.
    let id = provider.to_string();
    let saved = tokio::task::spawn_blocking(move || {
        let mut auth = AuthStorage::open(path, |_| None);
        // Written as the flow made it: each flow orders the fields as pi 1.6 writes them
        // (the file is read back as a login like any other).
        auth.set(&id, Credential::Other(Value::Object(credential)));
        auth.drain_errors().into_iter().next()
    })
    .await
    .map_err(|e| LoginError::Save(e.to_string()))?;
    match saved {
        Some(e) => Err(LoginError::Save(e)),
        None => Ok(()),
    }
}
