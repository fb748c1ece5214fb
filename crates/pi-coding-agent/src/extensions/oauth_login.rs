//! Signing in to a provider an extension registered with an `oauth` block, as pi 1.6's
//! `/login` does: the host runs the extension's `login` (`provider.oauthLogin`), whose
//! callbacks come back as `oauth.notify` (a URL, a device code, progress) and `oauth.prompt`
//! (a question) and go to the sign-in screen's [`LoginUi`]; the login it returns is stored in
//! auth.json as pi stores it (`type: "oauth"` and what the extension returned).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pi_oauth::{LoginEvent, LoginUi, OAuthError, Prompt, SelectOption};
use serde_json::{json, Value};

use super::ExtensionSlot;
use crate::config::auth::Credential;
use crate::config::oauth::LoginError;
use crate::session::agent_session::lock;

/// The screens of the sign-ins under way, by the id the host's callbacks name.
#[derive(Default)]
pub struct Logins(Mutex<HashMap<u64, Arc<dyn LoginUi>>>);

static NEXT_LOGIN: AtomicU64 = AtomicU64::new(1);

/// Takes the login's screen off the list when the sign-in ends, and tells the host to stop
/// the extension's `login` when it ends early (cancelled: the future was dropped).
struct Running<'a> {
    slot: &'a ExtensionSlot,
    id: u64,
    finished: bool,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        lock(&self.slot.logins.0).remove(&self.id);
        if !self.finished {
            if let Some(runner) = self.slot.runner() {
                // A host that is gone has nothing left to stop.
                let _ = runner.notify("provider.oauthCancel", json!({ "loginId": self.id }));
            }
        }
    }
}

/// Sign in to `provider` through its extension, showing the flow on `ui`, and store the login.
pub async fn login(slot: Arc<ExtensionSlot>, provider: String, ui: Arc<dyn LoginUi>) -> Result<(), LoginError> {
    if !slot.has_oauth_provider(&provider) {
        return Err(LoginError::UnknownProvider(provider));
    }
    let runner = slot
        .runner()
        .ok_or_else(|| LoginError::Flow(OAuthError::Invalid("the extension host is not running".into())))?;
    let id = NEXT_LOGIN.fetch_add(1, Ordering::Relaxed);
    lock(&slot.logins.0).insert(id, ui);
    let mut running = Running {
        slot: &slot,
        id,
        finished: false,
    };
    let answer = runner.oauth_login(&provider, id).await;
    running.finished = true;
    let answer = answer.map_err(|e| {
        let message = e.to_string();
        if message.contains("Login cancelled") {
            LoginError::Cancelled
        } else {
            LoginError::Flow(OAuthError::Invalid(message))
        }
    })?;
    let credential = stored_form(answer.get("credential")).ok_or_else(|| {
        LoginError::Flow(OAuthError::Invalid(format!(
            "{provider}: login returned no credentials"
        )))
    })?;
    let session = slot
        .session()
        .ok_or_else(|| LoginError::Save("no session is open".into()))?;
    // Written once the registry's lock is let go: the write waits for auth.json's own lock.
    let write = lock(session.registry())
        .auth_mut()
        .stage(&provider, Some(Credential::from_value(&credential)));
    tokio::task::spawn_blocking(move || write.apply())
        .await
        .map_err(|e| LoginError::Save(e.to_string()))?
        .map_err(LoginError::Save)
}

/// pi's stored login: `type` first, then the fields the extension returned.
fn stored_form(credential: Option<&Value>) -> Option<Value> {
    let Some(Value::Object(fields)) = credential else {
        return None;
    };
    let mut entry = serde_json::Map::new();
    entry.insert("type".into(), Value::from("oauth"));
    entry.extend(
        fields
            .iter()
            .filter(|(k, _)| *k != "type")
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    Some(Value::Object(entry))
}

fn screen(slot: &ExtensionSlot, params: &Value) -> Option<Arc<dyn LoginUi>> {
    let id = params.get("loginId").and_then(Value::as_u64)?;
    lock(&slot.logins.0).get(&id).cloned()
}

/// `oauth.notify {loginId, event}`: show what the extension's `login` reported.
pub fn notify(slot: &ExtensionSlot, params: &Value) {
    let Some(ui) = screen(slot, params) else { return };
    let event = &params["event"];
    let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let shown = match event.get("type").and_then(Value::as_str) {
        Some("auth_url") => LoginEvent::AuthUrl {
            url: text("url"),
            instructions: text("instructions"),
        },
        Some("device_code") => LoginEvent::DeviceCode {
            user_code: text("userCode"),
            verification_uri: text("verificationUri"),
            interval_seconds: event.get("interval").and_then(Value::as_u64),
            expires_in_seconds: event.get("expiresIn").and_then(Value::as_u64),
        },
        Some("progress") => LoginEvent::Progress(text("message")),
        _ => return,
    };
    ui.notify(shown);
}

/// `oauth.prompt {loginId, prompt}`: ask on the sign-in screen; the answer, or null when the
/// user gave up (the extension's `login` then fails as cancelled).
pub async fn prompt(slot: &ExtensionSlot, params: &Value) -> Value {
    let Some(ui) = screen(slot, params) else {
        return Value::Null;
    };
    let prompt = &params["prompt"];
    let text = |key: &str| prompt.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let asked = match text("type").as_str() {
        "manual_code" => Prompt::ManualCode {
            message: text("message"),
            placeholder: String::new(),
        },
        "select" => Prompt::Select {
            message: text("message"),
            options: prompt
                .get("options")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|o| {
                    let field = |key: &str| o.get(key).and_then(Value::as_str).unwrap_or_default();
                    SelectOption::new(field("id"), field("label"))
                })
                .collect(),
        },
        _ => Prompt::Text {
            message: text("message"),
            placeholder: text("placeholder"),
        },
    };
    match ui.prompt(asked).await {
        Ok(answer) => Value::String(answer),
        Err(_) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_is_stored_with_its_type_first() {
        let stored = stored_form(Some(&json!({"refresh": "r", "type": "x", "access": "a", "expires": 5}))).unwrap();
        let keys: Vec<&String> = stored.as_object().unwrap().keys().collect();
        assert_eq!(keys[0], "type");
        assert_eq!(stored["type"], "oauth");
        assert_eq!(stored["access"], "a");
        assert!(stored_form(Some(&json!("token"))).is_none());
        assert!(stored_form(None).is_none());
    }
}
