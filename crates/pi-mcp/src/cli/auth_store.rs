//! The credential files `pi mcp` touches without a session: provider login tokens in
//! `<agentDir>/auth.json` (read only, for `auth.provider` servers) and stored MCP sign-ins in
//! `<agentDir>/mcp-auth.json` (entries deleted by logout).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::client::ProviderTokens;
use crate::naming::mcp_namespace;

fn read_object(path: &Path) -> Option<Map<String, Value>> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text)) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// A provider's current token from `auth.json`: an API key, or an OAuth access token that has not
/// expired (refreshing is the session's job; without a token the server reports that sign-in is needed).
pub(crate) fn provider_token(agent_dir: &Path, provider: &str) -> Option<String> {
    let auth = read_object(&agent_dir.join("auth.json"))?;
    let entry = auth.get(provider)?.as_object()?;
    match entry.get("type").and_then(Value::as_str) {
        Some("api_key") => entry.get("key").and_then(Value::as_str).map(str::to_string),
        Some("oauth") => {
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as f64)
                .unwrap_or(0.0);
            let fresh = entry.get("expires").and_then(Value::as_f64).is_none_or(|e| e > now_ms);
            fresh
                .then(|| entry.get("access").and_then(Value::as_str).map(str::to_string))
                .flatten()
        }
        _ => None,
    }
}

pub fn provider_tokens_from(agent_dir: &Path) -> ProviderTokens {
    let dir: PathBuf = agent_dir.to_path_buf();
    Arc::new(move |provider: &str| provider_token(&dir, provider))
}

/// Delete the stored sign-in of a server (keyed by namespace and URL, or by URL alone as older
/// versions stored it). Returns whether there was one.
pub(crate) fn remove_sign_in(agent_dir: &Path, server: &str, url: &str) -> std::io::Result<bool> {
    let path = agent_dir.join("mcp-auth.json");
    let Some(mut states) = read_object(&path) else {
        return Ok(false);
    };
    let normalized = reqwest::Url::parse(url)
        .map(|u| u.to_string())
        .unwrap_or_else(|_| url.to_string());
    let key = format!("{}|{normalized}", mcp_namespace(server));
    let stored = if states.contains_key(&key) { key } else { normalized };
    if states.shift_remove(&stored).is_none() {
        return Ok(false);
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(states)).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(&path, text)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn logout_removes_namespaced_or_legacy_entries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mcp-auth.json");
        let states =
            json!({"mcp__my_web|https://x.example/mcp": {"tokens": {}}, "https://old.example/": {}, "other": 1});
        std::fs::write(&path, states.to_string()).expect("write");
        assert!(remove_sign_in(dir.path(), "my-web", "https://x.example/mcp").expect("io"));
        assert!(!remove_sign_in(dir.path(), "my-web", "https://x.example/mcp").expect("io"));
        assert!(remove_sign_in(dir.path(), "old", "https://old.example").expect("io"));
        let left: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert_eq!(left, json!({"other": 1}));
    }

    #[test]
    fn provider_tokens_come_from_auth_json() {
        let dir = tempfile::tempdir().expect("tempdir");
        let auth =
            json!({"k": {"type": "api_key", "key": "sk-1"}, "o": {"type": "oauth", "access": "at", "expires": 1}});
        std::fs::write(dir.path().join("auth.json"), auth.to_string()).expect("write");
        assert_eq!(provider_token(dir.path(), "k").as_deref(), Some("sk-1"));
        assert_eq!(provider_token(dir.path(), "o"), None, "expired");
        assert_eq!(provider_token(dir.path(), "none"), None);
    }
}
