//! `auth.json`: stored credentials per provider, and the order in which an API key is found.
//!
//! The file maps a provider id to `{"type":"api_key","key":…}` or
//! `{"type":"oauth","refresh","access","expires",…}`. It is written with mode 0600 in a 0700
//! folder, under a lock, by merging the one changed provider into the file's current
//! content, so entries (and fields) this version does not know survive.
//!
//! Key order for a provider: the runtime `--api-key`, an auth.json `api_key` (resolved, see
//! [`resolve_config_value`]), an auth.json OAuth token (refreshed under the lock when
//! expired), the provider's environment variable, then the caller's fallback (models.json).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value};

use super::locked_file::{self, LockOptions};

/// Looks up an environment variable (injectable for tests).
pub type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;
/// Names the environment variables that hold a provider's key.
pub type EnvKeyNames = dyn Fn(&str) -> Vec<String> + Send + Sync;

/// A stored credential.
#[derive(Debug, Clone, PartialEq)]
pub enum Credential {
    /// `key` may be a literal, an environment variable name, or `!command`.
    ApiKey { key: String, extra: Map<String, Value> },
    /// An OAuth login; `expires` is milliseconds since the epoch. `extra` keeps the other
    /// fields (e.g. account ids) exactly as stored.
    OAuth {
        refresh: String,
        access: String,
        expires: i64,
        extra: Map<String, Value>,
    },
    /// An entry of a kind this version does not know; kept as it is.
    Other(Value),
}

impl Credential {
    pub fn from_value(v: &Value) -> Credential {
        let Some(obj) = v.as_object() else {
            return Credential::Other(v.clone());
        };
        let rest = |skip: &[&str]| -> Map<String, Value> {
            obj.iter()
                .filter(|(k, _)| !skip.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        match obj.get("type").and_then(Value::as_str) {
            Some("api_key") => match obj.get("key").and_then(Value::as_str) {
                Some(key) => Credential::ApiKey {
                    key: key.to_string(),
                    extra: rest(&["type", "key"]),
                },
                None => Credential::Other(v.clone()),
            },
            Some("oauth") => Credential::OAuth {
                refresh: obj
                    .get("refresh")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                access: obj
                    .get("access")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                expires: obj
                    .get("expires")
                    .and_then(|e| e.as_i64().or_else(|| e.as_f64().map(|f| f as i64)))
                    .unwrap_or(0),
                extra: rest(&["type", "refresh", "access", "expires"]),
            },
            _ => Credential::Other(v.clone()),
        }
    }

    /// The JSON shape pi writes (`type` first).
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        match self {
            Credential::ApiKey { key, extra } => {
                out.insert("type".into(), "api_key".into());
                out.insert("key".into(), key.clone().into());
                out.extend(extra.clone());
            }
            Credential::OAuth {
                refresh,
                access,
                expires,
                extra,
            } => {
                out.insert("type".into(), "oauth".into());
                out.insert("refresh".into(), refresh.clone().into());
                out.insert("access".into(), access.clone().into());
                out.insert("expires".into(), (*expires).into());
                out.extend(extra.clone());
            }
            Credential::Other(v) => return v.clone(),
        }
        Value::Object(out)
    }

    pub fn api_key(key: impl Into<String>) -> Credential {
        Credential::ApiKey {
            key: key.into(),
            extra: Map::new(),
        }
    }
}

/// Errors of auth storage.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("Failed to parse auth.json: {0}")]
    Parse(String),
    #[error("{0}")]
    Refresh(String),
}

/// Refreshes an expired OAuth credential (provided by the OAuth layer).
pub trait OAuthRefresher: Send + Sync {
    /// Whether `provider` is an OAuth provider this refresher knows.
    fn knows(&self, provider: &str) -> bool;
    /// A fresh credential for `provider` from the expired one.
    fn refresh(&self, provider: &str, credential: &Credential) -> Result<Credential, String>;
    /// The API key an OAuth credential yields (usually the access token).
    fn api_key(&self, _provider: &str, credential: &Credential) -> Option<String> {
        match credential {
            Credential::OAuth { access, .. } => Some(access.clone()),
            _ => None,
        }
    }
}

/// Where a provider's auth comes from (for status displays; never the secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthSource {
    Stored,
    Runtime,
    Environment(String),
    Fallback,
}

/// Where a configured value's `$NAME` references are looked up (any lifetime, unlike
/// [`EnvLookup`], so a provider's scoped variables can sit in front of the process's).
pub type ValueEnv<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// Credentials of one agent dir.
pub struct AuthStorage {
    path: Option<PathBuf>,
    data: Map<String, Value>,
    runtime: HashMap<String, String>,
    load_error: Option<String>,
    errors: Vec<String>,
    env: Box<EnvLookup>,
    env_key: Box<EnvLookup>,
    env_key_names: Box<EnvKeyNames>,
    fallback: Option<Box<EnvLookup>>,
    refresher: Option<Box<dyn OAuthRefresher>>,
    now_ms: Box<dyn Fn() -> i64 + Send + Sync>,
}

impl std::fmt::Debug for AuthStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthStorage")
            .field("path", &self.path)
            .field("providers", &self.data.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// A change to auth.json made in memory and not yet written ([`AuthStorage::stage`]).
#[must_use = "the file is written only by `apply`"]
pub struct AuthWrite {
    /// `None`: nothing to write (no file, or a file that did not load and must not be replaced).
    path: Option<std::path::PathBuf>,
    provider: String,
    value: Option<Value>,
}

impl AuthWrite {
    /// Merge the change into the file as it is now, under its lock.
    pub fn apply(self) -> Result<(), String> {
        let Some(path) = self.path else { return Ok(()) };
        locked_file::update::<_, AuthError>(&path, auth_lock_options(), |current| {
            let mut data = parse_auth(current).map_err(AuthError::Parse)?;
            match &self.value {
                Some(v) => data.insert(self.provider.clone(), v.clone()),
                None => data.remove(&self.provider),
            };
            Ok((Some(to_pretty(&data)), ()))
        })
        .map_err(|e| e.to_string())
    }
}

impl AuthStorage {
    /// Read `path` (a missing file is empty; it is not created until a credential is saved).
    /// `env_api_key(provider)` gives the provider's key from the environment (pi-ai's
    /// `env_api_key`).
    pub fn open(path: PathBuf, env_api_key: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        let mut storage = Self::with_parts(Some(path), Box::new(env_api_key));
        storage.reload();
        storage
    }

    /// Credentials that live only in memory.
    pub fn in_memory(
        data: Map<String, Value>,
        env_api_key: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        let mut storage = Self::with_parts(None, Box::new(env_api_key));
        storage.data = data;
        storage
    }

    fn with_parts(path: Option<PathBuf>, env_key: Box<EnvLookup>) -> Self {
        AuthStorage {
            path,
            data: Map::new(),
            runtime: HashMap::new(),
            load_error: None,
            errors: Vec::new(),
            env: Box::new(|name| std::env::var(name).ok()),
            env_key,
            // A built-in provider's key variables, highest priority first: the one set names
            // where its key comes from.
            env_key_names: Box::new(|provider| {
                pi_ai::env_keys::api_key_env_vars(provider)
                    .into_iter()
                    .flatten()
                    .map(|name| (*name).to_string())
                    .collect()
            }),
            fallback: None,
            refresher: None,
            now_ms: Box::new(pi_ai::now_ms),
        }
    }

    /// Replace the environment used to resolve `ENV_NAME` values (tests).
    pub fn set_env(&mut self, env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) {
        self.env = Box::new(env);
    }
    /// The environment used to resolve `ENV_NAME` values.
    pub fn env(&self) -> &EnvLookup {
        &*self.env
    }
    /// The names of a provider's key variables, for [`AuthStorage::auth_source`].
    pub fn set_env_key_names(&mut self, names: impl Fn(&str) -> Vec<String> + Send + Sync + 'static) {
        self.env_key_names = Box::new(names);
    }
    /// The last resort for a key (models.json `apiKey`).
    pub fn set_fallback(&mut self, fallback: impl Fn(&str) -> Option<String> + Send + Sync + 'static) {
        self.fallback = Some(Box::new(fallback));
    }
    pub fn set_oauth_refresher(&mut self, refresher: Box<dyn OAuthRefresher>) {
        self.refresher = Some(refresher);
    }
    /// Replace the clock (tests).
    pub fn set_clock(&mut self, now_ms: impl Fn() -> i64 + Send + Sync + 'static) {
        self.now_ms = Box::new(now_ms);
    }

    /// Re-read the file. A file that does not parse leaves the credentials empty, is reported
    /// once, and is never overwritten.
    pub fn reload(&mut self) {
        let Some(path) = self.path.clone() else { return };
        match locked_file::read_locked(&path) {
            Ok(content) => match parse_auth(content.as_deref()) {
                Ok(data) => {
                    self.data = data;
                    self.load_error = None;
                }
                Err(e) => {
                    self.errors.push(e.clone());
                    self.load_error = Some(e);
                }
            },
            Err(e) => {
                let message = e.to_string();
                self.errors.push(message.clone());
                self.load_error = Some(message);
            }
        }
    }

    /// Errors collected so far.
    pub fn drain_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.errors)
    }

    /// `--api-key`: used for this process only, never written.
    pub fn set_runtime_api_key(&mut self, provider: &str, key: &str) {
        self.runtime.insert(provider.to_string(), key.to_string());
    }
    pub fn remove_runtime_api_key(&mut self, provider: &str) {
        self.runtime.remove(provider);
    }

    pub fn get(&self, provider: &str) -> Option<Credential> {
        self.data.get(provider).map(Credential::from_value)
    }
    /// Providers with a stored credential, in file order.
    pub fn list(&self) -> Vec<String> {
        self.data.keys().cloned().collect()
    }
    pub fn has(&self, provider: &str) -> bool {
        self.data.contains_key(provider)
    }

    /// Store a credential (merged into the current file under the lock).
    pub fn set(&mut self, provider: &str, credential: Credential) {
        let write = self.stage(provider, Some(credential));
        self.record(write.apply());
    }

    /// Remove a credential (`/logout`).
    pub fn remove(&mut self, provider: &str) {
        let write = self.stage(provider, None);
        self.record(write.apply());
    }

    /// Change the credential in memory now and return the file write, to be applied once the
    /// lock this storage sits behind is released (the write takes auth.json's file lock, which
    /// may wait for another pi process).
    pub fn stage(&mut self, provider: &str, credential: Option<Credential>) -> AuthWrite {
        let value = credential.map(|c| c.to_value());
        match &value {
            Some(v) => self.data.insert(provider.to_string(), v.clone()),
            None => self.data.remove(provider),
        };
        AuthWrite {
            path: self.path.clone().filter(|_| self.load_error.is_none()),
            provider: provider.to_string(),
            value,
        }
    }

    /// Keep the error of an applied write for [`Self::drain_errors`].
    pub fn record(&mut self, result: Result<(), String>) {
        if let Err(e) = result {
            self.errors.push(e);
        }
    }

    /// Whether any auth is configured for `provider`, without running commands or refreshing.
    pub fn has_auth(&self, provider: &str) -> bool {
        if !self.has_endpoint_ids(provider) {
            return false;
        }
        self.runtime.contains_key(provider)
            || self.data.get(provider).is_some_and(|v| !v.is_null())
            || (self.env_key)(provider).is_some()
            || self.fallback.as_ref().is_some_and(|f| f(provider).is_some())
    }

    /// Where `provider`'s auth would come from.
    pub fn auth_source(&self, provider: &str) -> Option<AuthSource> {
        if self.data.contains_key(provider) {
            return Some(AuthSource::Stored);
        }
        if self.runtime.contains_key(provider) {
            return Some(AuthSource::Runtime);
        }
        // The first of the provider's variables that is set names the source (Anthropic's key
        // is its third name, after the token ones).
        if let Some(name) = (self.env_key_names)(provider)
            .into_iter()
            .find(|name| (self.env)(name).is_some_and(|v| !v.is_empty()))
        {
            return Some(AuthSource::Environment(name));
        }
        if (self.env_key)(provider).is_some() {
            return Some(AuthSource::Environment(String::new()));
        }
        if self.fallback.as_ref().is_some_and(|f| f(provider).is_some()) {
            return Some(AuthSource::Fallback);
        }
        None
    }

    /// Whether the ids `provider`'s endpoint is named by are set: in its stored entry's `env`
    /// or the environment. Cloudflare's key alone does not configure it (pi 1.6 resolves no
    /// credential without the account id, and for its AI Gateway the gateway id).
    fn has_endpoint_ids(&self, provider: &str) -> bool {
        let needed: &[&str] = match provider {
            "cloudflare-workers-ai" => &["CLOUDFLARE_ACCOUNT_ID"],
            "cloudflare-ai-gateway" => &["CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"],
            _ => return true,
        };
        let scoped = self.provider_env(provider);
        needed.iter().all(|name| {
            let stored = scoped.get(*name).and_then(Value::as_str).map(str::to_string);
            stored.or_else(|| (self.env)(name)).is_some_and(|v| !v.is_empty())
        })
    }

    /// The `env` map of `provider`'s stored API-key entry (pi 1.6): variables that win over
    /// the process environment for that provider only.
    pub fn provider_env(&self, provider: &str) -> Map<String, Value> {
        let entry = self.data.get(provider);
        if entry.and_then(|e| e.get("type")).and_then(Value::as_str) != Some("api_key") {
            return Map::new();
        }
        match entry.and_then(|e| e.get("env")) {
            Some(Value::Object(env)) => env.clone(),
            _ => Map::new(),
        }
    }

    /// The API key for `provider` in pi 1.6's order: a runtime key, the stored credential
    /// (its `key`, else a key variable set in its `env`), the models.json key when
    /// `include_fallback`, then the environment.
    pub fn api_key(&mut self, provider: &str, include_fallback: bool) -> Option<String> {
        if !self.has_endpoint_ids(provider) {
            return None;
        }
        if let Some(key) = self.runtime.get(provider) {
            return Some(key.clone());
        }
        let scoped = self.provider_env(provider);
        match self.get(provider) {
            Some(Credential::ApiKey { key, .. }) => {
                let env = |name: &str| {
                    scoped
                        .get(name)
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .or_else(|| (self.env)(name))
                };
                return resolve_config_value(&key, &env);
            }
            Some(cred @ Credential::OAuth { .. }) => return self.oauth_key(provider, cred),
            _ => {}
        }
        let from_scoped = (self.env_key_names)(provider).into_iter().find_map(|name| {
            scoped
                .get(&name)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        });
        if from_scoped.is_some() {
            return from_scoped;
        }
        if include_fallback {
            if let Some(key) = self.fallback.as_ref().and_then(|f| f(provider)) {
                return Some(key);
            }
        }
        (self.env_key)(provider)
    }

    fn oauth_key(&mut self, provider: &str, cred: Credential) -> Option<String> {
        match self.oauth_token(provider, &cred, 0) {
            Ok(key) => key,
            Err(e) => {
                self.errors.push(e);
                None
            }
        }
    }

    /// The access token of `provider`'s stored OAuth login, refreshed first when less than
    /// `min_validity_ms` (at least [`OAUTH_REFRESH_MARGIN_MS`]) remains. `Ok(None)`: no OAuth
    /// login, or no refresher knows the provider. A refresh that fails is an error unless
    /// another process refreshed meanwhile.
    pub fn oauth_access_token(&mut self, provider: &str, min_validity_ms: i64) -> Result<Option<String>, String> {
        match self.get(provider) {
            Some(cred @ Credential::OAuth { .. }) => self.oauth_token(provider, &cred, min_validity_ms),
            _ => Ok(None),
        }
    }

    fn oauth_token(
        &mut self,
        provider: &str,
        cred: &Credential,
        min_validity_ms: i64,
    ) -> Result<Option<String>, String> {
        let Some(refresher) = self.refresher.as_ref().filter(|r| r.knows(provider)) else {
            return Ok(None);
        };
        let margin = min_validity_ms.max(OAUTH_REFRESH_MARGIN_MS);
        if !expires_within(cred, (self.now_ms)(), margin) {
            return Ok(refresher.api_key(provider, cred));
        }
        match self.refresh_locked(provider, margin) {
            Ok(key) => Ok(key),
            Err(e) => {
                // Another process may have refreshed it meanwhile.
                self.reload();
                let now = (self.now_ms)();
                match self.get(provider) {
                    Some(c @ Credential::OAuth { .. }) if !expires_within(&c, now, margin) => {
                        Ok(self.refresher.as_ref().and_then(|r| r.api_key(provider, &c)))
                    }
                    _ => Err(e.to_string()),
                }
            }
        }
    }

    /// Refresh under the file lock: re-read first, so a token another process refreshed is
    /// used instead of refreshing twice (refresh tokens are single-use at most providers:
    /// refreshing twice would lose the login).
    fn refresh_locked(&mut self, provider: &str, margin: i64) -> Result<Option<String>, AuthError> {
        let Some(refresher) = self.refresher.as_ref() else {
            return Ok(None);
        };
        let now = (self.now_ms)();
        let Some(path) = self.path.clone() else {
            let Some(cred) = self.get(provider) else {
                return Ok(None);
            };
            let fresh = refresher.refresh(provider, &cred).map_err(AuthError::Refresh)?;
            let key = refresher.api_key(provider, &fresh);
            self.data.insert(provider.to_string(), fresh.to_value());
            return Ok(key);
        };
        let (data, key) = locked_file::update::<_, AuthError>(&path, auth_lock_options(), |current| {
            let mut data = parse_auth(current).map_err(AuthError::Parse)?;
            let cred = match data.get(provider).map(Credential::from_value) {
                Some(c @ Credential::OAuth { .. }) => c,
                _ => return Ok((None, (data, None))),
            };
            if !expires_within(&cred, now, margin) {
                let key = refresher.api_key(provider, &cred);
                return Ok((None, (data, key)));
            }
            let fresh = refresher.refresh(provider, &cred).map_err(AuthError::Refresh)?;
            let key = refresher.api_key(provider, &fresh);
            data.insert(provider.to_string(), fresh.to_value());
            Ok((Some(to_pretty(&data)), (data, key)))
        })?;
        self.data = data;
        self.load_error = None;
        Ok(key)
    }
}

/// An OAuth token is renewed when less than this remains (pi 1.6: five minutes).
pub const OAUTH_REFRESH_MARGIN_MS: i64 = 5 * 60 * 1000;

fn expires_within(cred: &Credential, now: i64, margin: i64) -> bool {
    match cred {
        Credential::OAuth { expires, .. } => now.saturating_add(margin) >= *expires,
        _ => false,
    }
}

/// Move legacy credentials into a new auth.json: `<agent>/oauth.json` (renamed to
/// `oauth.json.migrated`) and the `apiKeys` object of settings.json (removed from it). Does
/// nothing when auth.json already exists. Returns the providers moved, for the notice
/// `Migrated credentials to auth.json: …`. Unreadable legacy files are left alone.
pub fn migrate_legacy_credentials(agent_dir: &std::path::Path) -> Vec<String> {
    let auth_path = agent_dir.join("auth.json");
    if auth_path.exists() {
        return Vec::new();
    }
    let mut migrated = Map::new();
    let mut providers = Vec::new();
    let oauth_path = agent_dir.join("oauth.json");
    if let Ok(Value::Object(oauth)) = std::fs::read_to_string(&oauth_path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
    {
        for (provider, cred) in oauth {
            let mut entry = Map::new();
            entry.insert("type".into(), "oauth".into());
            if let Value::Object(fields) = cred {
                entry.extend(fields);
            }
            migrated.insert(provider.clone(), Value::Object(entry));
            providers.push(provider);
        }
        let _ = std::fs::rename(&oauth_path, agent_dir.join("oauth.json.migrated"));
    }
    let settings_path = agent_dir.join("settings.json");
    let _ = settings_path.exists()
        && locked_file::update::<_, std::io::Error>(&settings_path, LockOptions::default(), |current| {
            let Some(Ok(Value::Object(mut settings))) = current.map(serde_json::from_str::<Value>) else {
                return Ok((None, ()));
            };
            let Some(Value::Object(keys)) = settings.remove("apiKeys") else {
                return Ok((None, ()));
            };
            for (provider, key) in keys {
                if let (false, Value::String(key)) = (migrated.contains_key(&provider), key) {
                    migrated.insert(provider.clone(), Credential::api_key(key).to_value());
                    providers.push(provider);
                }
            }
            Ok((Some(to_pretty(&settings)), ()))
        })
        .is_ok();
    if !migrated.is_empty() {
        let written = locked_file::update::<_, std::io::Error>(&auth_path, auth_lock_options(), |_| {
            Ok((Some(to_pretty(&migrated)), ()))
        });
        if written.is_err() {
            return Vec::new();
        }
    }
    providers
}

fn auth_lock_options() -> LockOptions {
    LockOptions {
        file_mode: Some(0o600),
        dir_mode: Some(0o700),
    }
}

fn to_pretty(map: &Map<String, Value>) -> String {
    serde_json::to_string_pretty(map).unwrap_or_else(|_| "{}".to_string())
}

fn parse_auth(content: Option<&str>) -> Result<Map<String, Value>, String> {
    match content {
        None => Ok(Map::new()),
        Some(text) if text.trim().is_empty() => Ok(Map::new()),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err("auth.json must be a JSON object".to_string()),
            Err(e) => Err(format!("Failed to parse auth.json: {e}")),
        },
    }
}

static COMMAND_CACHE: Mutex<Option<HashMap<String, Option<String>>>> = Mutex::new(None);

/// Resolve a configured value as pi 1.6 does: `!command` runs the command with `sh -c`
/// (stdout trimmed, 10 s timeout, empty or failing → `None`; cached for the process
/// lifetime); anything else is a literal in which `$NAME` and `${NAME}` are replaced by
/// environment variables (`None` when one is unset or empty), `$$` is `$` and `$!` is `!`.
pub fn resolve_config_value(config: &str, env: &ValueEnv<'_>) -> Option<String> {
    if let Some(command) = config.strip_prefix('!') {
        if let Ok(mut guard) = COMMAND_CACHE.lock() {
            if let Some(hit) = guard.get_or_insert_with(HashMap::new).get(config) {
                return hit.clone();
            }
        }
        let value = run_command(command);
        if let Ok(mut guard) = COMMAND_CACHE.lock() {
            guard
                .get_or_insert_with(HashMap::new)
                .insert(config.to_string(), value.clone());
        }
        return value;
    }
    resolve_config_value_uncached(config, env)
}

/// Like [`resolve_config_value`] but runs a `!command` every time (models.json values are
/// resolved per request).
pub fn resolve_config_value_uncached(config: &str, env: &ValueEnv<'_>) -> Option<String> {
    if let Some(cmd) = config.strip_prefix('!') {
        return run_command(cmd);
    }
    let mut out = String::new();
    for part in template_parts(config) {
        match part {
            TemplatePart::Literal(text) => out.push_str(text),
            TemplatePart::Env(name) => match env(name) {
                Some(v) if !v.is_empty() => out.push_str(&v),
                _ => return None,
            },
        }
    }
    Some(out)
}

/// A piece of a configured value: literal text or an environment variable reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TemplatePart<'a> {
    Literal(&'a str),
    Env(&'a str),
}

fn env_name_len(s: &str) -> usize {
    let mut chars = s.char_indices();
    match chars.next() {
        Some((_, c)) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return 0,
    }
    chars
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(s.len(), |(i, _)| i)
}

/// Split a non-command value into literals and `$NAME` / `${NAME}` references (`$$` and `$!`
/// are the escaped characters; a `$` that starts neither stays as it is).
fn template_parts(config: &str) -> Vec<TemplatePart<'_>> {
    let mut parts = Vec::new();
    let mut rest = config;
    while let Some(at) = rest.find('$') {
        if at > 0 {
            parts.push(TemplatePart::Literal(&rest[..at]));
        }
        let after = &rest[at + 1..];
        if after.starts_with('$') || after.starts_with('!') {
            parts.push(TemplatePart::Literal(&after[..1]));
            rest = &after[1..];
        } else if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) if env_name_len(&braced[..end]) == end && end > 0 => {
                    parts.push(TemplatePart::Env(&braced[..end]));
                    rest = &braced[end + 1..];
                }
                Some(end) => {
                    // Not a variable name: the text stays literal, braces included.
                    parts.push(TemplatePart::Literal(&rest[at..at + end + 3]));
                    rest = &braced[end + 1..];
                }
                None => {
                    parts.push(TemplatePart::Literal("$"));
                    rest = after;
                }
            }
        } else {
            let len = env_name_len(after);
            if len > 0 {
                parts.push(TemplatePart::Env(&after[..len]));
                rest = &after[len..];
            } else {
                parts.push(TemplatePart::Literal("$"));
                rest = after;
            }
        }
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Literal(rest));
    }
    parts
}

/// The environment variables a configured value reads, in order (none for a command).
pub fn config_value_env_names(config: &str) -> Vec<&str> {
    if config.starts_with('!') {
        return Vec::new();
    }
    let mut names: Vec<&str> = Vec::new();
    for part in template_parts(config) {
        if let TemplatePart::Env(name) = part {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// Resolve or fail with pi's message (`Failed to resolve <what> from shell command: <cmd>`).
pub fn resolve_config_value_or_err(config: &str, what: &str, env: &ValueEnv<'_>) -> Result<String, String> {
    match resolve_config_value_uncached(config, env) {
        Some(v) => Ok(v),
        None => match config.strip_prefix('!') {
            Some(cmd) => Err(format!("Failed to resolve {what} from shell command: {cmd}")),
            None => {
                let missing: Vec<&str> = config_value_env_names(config)
                    .into_iter()
                    .filter(|n| env(n).is_none_or(|v| v.is_empty()))
                    .collect();
                match missing.as_slice() {
                    [] => Err(format!("Failed to resolve {what}")),
                    [one] => Err(format!("Failed to resolve {what} from environment variable: {one}")),
                    many => Err(format!(
                        "Failed to resolve {what} from environment variables: {}",
                        many.join(", ")
                    )),
                }
            }
        },
    }
}

/// Forget cached command results (tests, `/reload`).
pub fn clear_config_value_cache() {
    if let Ok(mut guard) = COMMAND_CACHE.lock() {
        *guard = None;
    }
}

const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

fn run_command(command: &str) -> Option<String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
        out
    });
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > COMMAND_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return None,
        }
    };
    let out = reader.join().ok()?;
    if !status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn config_values_resolve() {
        let env = |n: &str| (n == "MY_KEY").then(|| "from-env".to_string());
        // pi 1.6: a plain string is a literal, even when it names a variable.
        assert_eq!(resolve_config_value("MY_KEY", &env).as_deref(), Some("MY_KEY"));
        assert_eq!(resolve_config_value("$MY_KEY", &env).as_deref(), Some("from-env"));
        assert_eq!(
            resolve_config_value("Bearer ${MY_KEY}-x", &env).as_deref(),
            Some("Bearer from-env-x")
        );
        assert_eq!(resolve_config_value("a$$b$!c", &env).as_deref(), Some("a$b!c"));
        assert_eq!(
            resolve_config_value("cost $5 ${not a name}", &env).as_deref(),
            Some("cost $5 ${not a name}")
        );
        assert_eq!(resolve_config_value("$MISSING", &env), None);
        assert_eq!(
            resolve_config_value_or_err("$MISSING-${OTHER}", "API key for provider \"p\"", &env),
            Err("Failed to resolve API key for provider \"p\" from environment variables: MISSING, OTHER".to_string())
        );
        assert_eq!(
            resolve_config_value_or_err("$MISSING", "API key for provider \"p\"", &env),
            Err("Failed to resolve API key for provider \"p\" from environment variable: MISSING".to_string())
        );
        assert_eq!(
            resolve_config_value("literal-key", &env).as_deref(),
            Some("literal-key")
        );
        assert_eq!(
            resolve_config_value("!printf ' cmd-key \\n'", &env).as_deref(),
            Some("cmd-key")
        );
        assert_eq!(resolve_config_value("!exit 3", &env), None);
        assert_eq!(
            resolve_config_value_or_err("!false", "API key for provider \"p\"", &env),
            Err("Failed to resolve API key for provider \"p\" from shell command: false".to_string())
        );
    }

    #[test]
    fn api_key_entries_carry_provider_scoped_env() {
        let data = match json!({
            "p": {"type": "api_key", "key": "$TOKEN", "env": {"TOKEN": "scoped"}},
            "q": {"type": "api_key", "env": {"Q_API_KEY": "from-entry"}},
            "r": {"type": "api_key", "key": "$TOKEN"}
        }) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let mut auth = AuthStorage::in_memory(data, |p| (p == "s").then(|| "env-s".to_string()));
        auth.set_env(|n| (n == "TOKEN").then(|| "process".to_string()));
        auth.set_env_key_names(|p| if p == "q" { vec!["Q_API_KEY".into()] } else { Vec::new() });
        assert_eq!(auth.api_key("p", true).as_deref(), Some("scoped"));
        assert_eq!(auth.api_key("q", true).as_deref(), Some("from-entry"));
        assert_eq!(auth.api_key("r", true).as_deref(), Some("process"));
        assert!(auth.provider_env("r").is_empty());
        // pi 1.6: a models.json key comes before the environment.
        auth.set_fallback(|p| (p == "s").then(|| "models-json".to_string()));
        assert_eq!(auth.api_key("s", true).as_deref(), Some("models-json"));
        assert_eq!(auth.api_key("s", false).as_deref(), Some("env-s"));
    }

    #[test]
    fn a_cloudflare_key_needs_the_account_id_and_the_gateway_its_gateway_id() {
        let data = match json!({
            "cloudflare-workers-ai": {"type": "api_key", "key": "cf", "env": {"CLOUDFLARE_ACCOUNT_ID": "stored-acc"}},
        }) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let mut auth = AuthStorage::in_memory(data, |p| p.starts_with("cloudflare").then(|| "env-cf".to_string()));
        auth.set_env(no_env);
        // The stored entry names the account; the gateway's ids are nowhere.
        assert!(auth.has_auth("cloudflare-workers-ai"));
        assert_eq!(auth.api_key("cloudflare-workers-ai", true).as_deref(), Some("cf"));
        assert!(!auth.has_auth("cloudflare-ai-gateway"));
        assert_eq!(auth.api_key("cloudflare-ai-gateway", true), None);
        auth.set_env(|n| (n == "CLOUDFLARE_ACCOUNT_ID").then(|| "acc".to_string()));
        assert!(
            !auth.has_auth("cloudflare-ai-gateway"),
            "the gateway id is still missing"
        );
        auth.set_env(|n| n.starts_with("CLOUDFLARE_").then(|| "id".to_string()));
        assert_eq!(auth.api_key("cloudflare-ai-gateway", true).as_deref(), Some("env-cf"));
        // An empty id counts as unset.
        auth.set_env(|n| n.starts_with("CLOUDFLARE_").then(String::new));
        assert!(!auth.has_auth("cloudflare-ai-gateway"));
    }

    #[test]
    fn key_order() {
        let data = match json!({"a": {"type": "api_key", "key": "stored"}}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let mut auth = AuthStorage::in_memory(data, |p| (p == "a" || p == "b").then(|| format!("env-{p}")));
        auth.set_env(no_env);
        auth.set_fallback(|p| (p == "c").then(|| "fallback".to_string()));
        assert_eq!(auth.api_key("a", true).as_deref(), Some("stored"));
        auth.set_runtime_api_key("a", "runtime");
        assert_eq!(auth.api_key("a", true).as_deref(), Some("runtime"));
        assert_eq!(auth.api_key("b", true).as_deref(), Some("env-b"));
        assert_eq!(auth.api_key("c", true).as_deref(), Some("fallback"));
        assert_eq!(auth.api_key("c", false), None);
        assert!(auth.has_auth("c"));
        assert!(!auth.has_auth("d"));
    }

    #[test]
    fn legacy_credentials_move_into_auth_json() {
        let dir = tempfile::tempdir().expect("tmp");
        let agent = dir.path();
        std::fs::write(
            agent.join("oauth.json"),
            r#"{"anthropic": {"refresh": "r", "access": "a", "expires": 1}}"#,
        )
        .expect("w");
        std::fs::write(
            agent.join("settings.json"),
            r#"{"theme": "dark", "apiKeys": {"anthropic": "ignored", "openai": "sk-o"}}"#,
        )
        .expect("w");
        let moved = migrate_legacy_credentials(agent);
        assert_eq!(moved, vec!["anthropic".to_string(), "openai".to_string()]);
        let auth: Value =
            serde_json::from_str(&std::fs::read_to_string(agent.join("auth.json")).expect("r")).expect("j");
        assert_eq!(
            auth,
            json!({"anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}, "openai": {"type": "api_key", "key": "sk-o"}})
        );
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(agent.join("settings.json")).expect("r")).expect("j");
        assert_eq!(settings, json!({"theme": "dark"}));
        assert!(agent.join("oauth.json.migrated").exists());
        assert!(migrate_legacy_credentials(agent).is_empty());
    }

    #[test]
    fn credential_round_trip_keeps_extra_fields() {
        let v = json!({"type": "oauth", "refresh": "r", "access": "a", "expires": 5, "accountId": "x"});
        assert_eq!(Credential::from_value(&v).to_value(), v);
        let odd = json!({"type": "future", "thing": 1});
        assert_eq!(Credential::from_value(&odd).to_value(), odd);
    }

    #[test]
    fn a_staged_change_is_in_memory_at_once_and_on_disk_only_when_applied() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("auth.json");
        std::fs::write(&path, r#"{"openai": {"type": "api_key", "key": "sk-o"}}"#).expect("w");
        let mut auth = AuthStorage::open(path.clone(), |_| None);
        let write = auth.stage("anthropic", Some(Credential::api_key("sk-a")));
        assert!(auth.has("anthropic"));
        assert!(!std::fs::read_to_string(&path).expect("r").contains("sk-a"));
        // Another process changed the file meanwhile: the write merges into it.
        std::fs::write(
            &path,
            r#"{"openai": {"type": "api_key", "key": "sk-o"}, "xai": {"type": "api_key", "key": "sk-x"}}"#,
        )
        .expect("w");
        write.apply().expect("apply");
        let on_disk: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("r")).expect("json");
        assert_eq!(on_disk["anthropic"]["key"], "sk-a");
        assert_eq!(on_disk["xai"]["key"], "sk-x");
        let removal = auth.stage("openai", None);
        assert!(!auth.has("openai"));
        removal.apply().expect("apply");
        let on_disk: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("r")).expect("json");
        assert!(on_disk.get("openai").is_none());
    }
}
