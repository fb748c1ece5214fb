//! `<agentDir>/mcp-auth.json`: one OAuth state per server (discovery, client, tokens, the pending
//! `state` and PKCE verifier), keyed by `mcp__<namespace>|<server URL>` as pi 1.6 keys it. The
//! file is written with mode 0600 under a `mcp-auth.json.lock` directory lock (the lock pi 1.6's
//! lockfile library takes), so a TypeScript pi and this one can share it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::OAuthError;
use crate::naming::mcp_namespace;

/// The access and refresh tokens of a grant, as the token endpoint returned them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    #[serde(default = "bearer")]
    pub token_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
}

fn bearer() -> String {
    "Bearer".into()
}

/// Where the authorization server was found, cached so a refresh needs no discovery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryState {
    pub authorization_server_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_server_metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_metadata_url: Option<String>,
}

/// One server's stored OAuth state. Fields pi does not know are kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<DiscoveryState>,
    /// The registration answer (or the configured client): `client_id`, `client_secret?`, `redirect_uris`, ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_information: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// Milliseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_expire_at: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_verifier: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ServerState {
    pub fn access_token(&self) -> Option<&str> {
        self.tokens.as_ref().map(|t| t.access_token.as_str())
    }

    pub fn refresh_token(&self) -> Option<&str> {
        self.tokens.as_ref().and_then(|t| t.refresh_token.as_deref())
    }

    /// Store new tokens and when they expire.
    pub fn set_tokens(&mut self, tokens: Tokens) {
        self.tokens_expire_at = tokens.expires_in.map(|seconds| now_ms() + seconds * 1000.0);
        self.tokens = Some(tokens);
    }

    pub fn clear_tokens(&mut self) {
        self.tokens = None;
        self.tokens_expire_at = None;
    }

    /// The redirect URIs the stored client was registered with.
    pub fn registered_redirect_uris(&self) -> Vec<String> {
        self.client_information
            .as_ref()
            .and_then(|c| c.get("redirect_uris"))
            .and_then(Value::as_array)
            .map(|uris| uris.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    }
}

pub(crate) fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64)
}

/// `url` as WHATWG URL parsing writes it (`https://x.example` → `https://x.example/`).
pub fn normalize_url(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(|_| url.to_string(), |u| u.to_string())
}

/// The store key of a server and the legacy key older versions used (the URL alone).
pub fn store_keys(server: &str, url: &str) -> (String, String) {
    let legacy = normalize_url(url);
    (format!("{}|{legacy}", mcp_namespace(server)), legacy)
}

/// The credential file.
#[derive(Debug, Clone)]
pub struct AuthFile {
    path: PathBuf,
}

/// A directory lock `<path>.lock`, as the Node lockfile library makes it; taken over when stale.
pub(crate) struct DirLock {
    dir: PathBuf,
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

impl DirLock {
    /// One attempt: `Ok(None)` when another holder has it and it is not stale.
    pub(crate) fn try_take(path: &Path, stale: Duration) -> std::io::Result<Option<DirLock>> {
        let dir = PathBuf::from(format!("{}.lock", path.display()));
        match std::fs::create_dir(&dir) {
            Ok(()) => Ok(Some(DirLock { dir })),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let age = std::fs::metadata(&dir)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok());
                if age.is_some_and(|age| age > stale) {
                    let _ = std::fs::remove_dir(&dir);
                    return match std::fs::create_dir(&dir) {
                        Ok(()) => Ok(Some(DirLock { dir })),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
                        Err(e) => Err(e),
                    };
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

const FILE_LOCK_STALE: Duration = Duration::from_secs(10);
const FILE_LOCK_ATTEMPTS: u32 = 10;

fn io_error(path: &Path, error: impl std::fmt::Display) -> OAuthError {
    OAuthError::Store(format!("{}: {error}", path.display()))
}

impl AuthFile {
    pub fn in_agent_dir(agent_dir: &Path) -> Self {
        Self {
            path: agent_dir.join("mcp-auth.json"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read, change and write the whole file under its lock. `update` returns whether to write.
    fn with_states<T>(&self, update: impl FnOnce(&mut Map<String, Value>) -> (T, bool)) -> Result<T, OAuthError> {
        if let Some(parent) = self.path.parent() {
            create_private_dir(parent).map_err(|e| io_error(parent, e))?;
        }
        let mut lock = None;
        for attempt in 0..FILE_LOCK_ATTEMPTS {
            lock = DirLock::try_take(&self.path, FILE_LOCK_STALE).map_err(|e| io_error(&self.path, e))?;
            if lock.is_some() || attempt + 1 == FILE_LOCK_ATTEMPTS {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let Some(_lock) = lock else {
            return Err(io_error(&self.path, "the file is locked by another process"));
        };
        let mut states = match std::fs::read_to_string(&self.path) {
            Ok(text) if text.trim().is_empty() => Map::new(),
            Ok(text) => match serde_json::from_str::<Value>(text.strip_prefix('\u{feff}').unwrap_or(&text)) {
                Ok(Value::Object(map)) => map,
                Ok(_) => Map::new(),
                Err(e) => return Err(io_error(&self.path, e)),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
            Err(e) => return Err(io_error(&self.path, e)),
        };
        let (result, write) = update(&mut states);
        if write {
            let mut text = serde_json::to_string_pretty(&Value::Object(states)).map_err(|e| io_error(&self.path, e))?;
            text.push('\n');
            write_private(&self.path, text.as_bytes()).map_err(|e| io_error(&self.path, e))?;
        }
        Ok(result)
    }

    /// The state of a server, taking over a legacy URL-only entry. Unreadable entries count as none.
    pub fn load(&self, server: &str, url: &str) -> Result<Option<ServerState>, OAuthError> {
        let (key, legacy) = store_keys(server, url);
        self.with_states(|states| {
            let mut write = false;
            if !states.contains_key(&key) {
                if let Some(old) = states.shift_remove(&legacy) {
                    states.insert(key.clone(), old);
                    write = true;
                }
            }
            let state = states
                .get(&key)
                .and_then(|v| serde_json::from_value::<ServerState>(v.clone()).ok());
            (state, write)
        })
    }

    /// The stored tokens without taking over legacy state (to notice sign-ins made elsewhere).
    pub fn tokens(&self, server: &str, url: &str) -> Option<Tokens> {
        let (key, legacy) = store_keys(server, url);
        self.with_states(|states| {
            let value = states.get(&key).or_else(|| states.get(&legacy)).cloned();
            (value, false)
        })
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_value::<ServerState>(v).ok())
        .and_then(|s| s.tokens)
    }

    pub fn save(&self, server: &str, url: &str, state: &ServerState) -> Result<(), OAuthError> {
        let (key, _) = store_keys(server, url);
        let value = serde_json::to_value(state).map_err(|e| io_error(&self.path, e))?;
        self.with_states(|states| {
            states.insert(key, value);
            ((), true)
        })
    }

    /// Delete the server's entry (or its legacy one); returns whether there was one.
    pub fn remove(&self, server: &str, url: &str) -> Result<bool, OAuthError> {
        if !self.path.exists() {
            return Ok(false);
        }
        let (key, legacy) = store_keys(server, url);
        self.with_states(|states| {
            let removed = states.shift_remove(&key).is_some() || states.shift_remove(&legacy).is_some();
            (removed, removed)
        })
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Write through a temporary file renamed into place, so a crash never leaves half a file.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = PathBuf::from(format!("{}.tmp-{}", path.display(), std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_round_trip_keyed_by_namespace_and_url_with_mode_0600() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = AuthFile::in_agent_dir(dir.path());
        let mut state = ServerState {
            server_url: Some("https://x.example/mcp".into()),
            ..ServerState::default()
        };
        state.set_tokens(Tokens {
            access_token: "at".into(),
            token_type: "Bearer".into(),
            expires_in: Some(60.0),
            scope: Some("read".into()),
            refresh_token: Some("rt".into()),
            id_token: None,
        });
        file.save("my-web", "https://x.example/mcp", &state).expect("save");
        let text = std::fs::read_to_string(file.path()).expect("read");
        let value: Value = serde_json::from_str(&text).expect("json");
        let entry = &value["mcp__my_web|https://x.example/mcp"];
        assert_eq!(entry["tokens"]["refresh_token"], "rt");
        assert_eq!(entry["serverUrl"], "https://x.example/mcp");
        assert!(entry["tokensExpireAt"].as_f64().is_some_and(|t| t > now_ms()));
        assert!(text.ends_with("}\n"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(file.path()).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        assert_eq!(file.load("my-web", "https://x.example/mcp").expect("load"), Some(state));
        assert!(!dir.path().join("mcp-auth.json.lock").exists(), "lock released");
    }

    #[test]
    fn a_legacy_url_key_is_taken_over_and_unknown_fields_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = AuthFile::in_agent_dir(dir.path());
        let legacy =
            json!({"https://old.example/": {"tokens": {"access_token": "a", "token_type": "Bearer"}, "future": 1}});
        std::fs::write(file.path(), legacy.to_string()).expect("write");
        let state = file.load("old", "https://old.example").expect("load").expect("state");
        assert_eq!(state.access_token(), Some("a"));
        assert_eq!(state.extra.get("future"), Some(&json!(1)));
        let value: Value = serde_json::from_str(&std::fs::read_to_string(file.path()).expect("read")).expect("json");
        assert!(value.get("https://old.example/").is_none());
        assert!(value.get("mcp__old|https://old.example/").is_some());
        assert!(file.remove("old", "https://old.example").expect("remove"));
        assert!(!file.remove("old", "https://old.example").expect("remove"));
    }

    #[test]
    fn a_stale_lock_is_taken_over_and_a_fresh_one_waits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("x");
        let held = DirLock::try_take(&target, Duration::from_secs(10))
            .expect("io")
            .expect("taken");
        assert!(DirLock::try_take(&target, Duration::from_secs(10))
            .expect("io")
            .is_none());
        assert!(
            DirLock::try_take(&target, Duration::ZERO).expect("io").is_some(),
            "stale"
        );
        drop(held);
    }
}
