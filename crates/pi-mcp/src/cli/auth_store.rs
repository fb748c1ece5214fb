//! Provider login tokens in `<agentDir>/auth.json`, read (never written) for `auth.provider`
//! servers. MCP sign-ins live in `mcp-auth.json` (`crate::oauth`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::client::ProviderTokens;

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
