//! Providers extensions register with an `oauth` block (pi 1.6's `login`, `refreshToken`,
//! `getApiKey`): at each request the stored login goes to the host, which refreshes it when
//! it expires within five minutes and derives the key; a refreshed login is stored before the
//! request is made.

use serde_json::Value;

use super::ExtensionSlot;
use crate::config::auth::Credential;
use crate::session::agent_session::lock;

/// The request key of `provider`'s stored login, refreshed by its extension when needed.
pub async fn request_key(slot: &ExtensionSlot, provider: &str) -> Result<String, String> {
    let session = slot.session().ok_or("no session is open")?;
    let runner = slot.runner().ok_or("the extension host is not running")?;
    let stored = lock(session.registry()).auth().get(provider);
    let credential = match stored {
        Some(credential @ Credential::OAuth { .. }) => credential.to_value(),
        _ => {
            return Err(format!(
                "No API key found for \"{provider}\". Log in with /login {provider}."
            ))
        }
    };
    let answer = runner
        .oauth_key(provider, credential)
        .await
        .map_err(|e| format!("OAuth refresh failed for {provider}: {e}"))?;
    if let Some(Value::Object(mut refreshed)) = answer.get("credential").cloned() {
        // Stored as pi 1.6 stores a login: `type` first, then what the extension returned.
        refreshed.remove("type");
        let mut entry = serde_json::Map::new();
        entry.insert("type".into(), Value::from("oauth"));
        entry.extend(refreshed);
        lock(session.registry())
            .auth_mut()
            .set(provider, Credential::from_value(&Value::Object(entry)));
    }
    answer
        .get("apiKey")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("OAuth provider {provider} gave no API key"))
}
