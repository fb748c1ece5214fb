//! `ctx.modelRegistry`'s calls that need pi: a model's request auth (`getApiKeyAndHeaders`),
//! a provider's key (`getApiKeyForProvider`) and `refresh` (models.json read again).

use serde_json::{json, Value};

use super::ExtensionSlot;
use crate::session::agent_session::lock;
use crate::session::AgentSession;

/// Answer one `models.*` request of the host.
pub async fn answer(slot: &ExtensionSlot, session: &AgentSession, method: &str, params: &Value) -> Value {
    match method {
        "models.requestAuth" => request_auth(session, params),
        "models.apiKeyForProvider" => {
            let provider = params.get("provider").and_then(Value::as_str).unwrap_or_default();
            lock(session.registry())
                .api_key_for_provider(provider)
                .map(Value::from)
                .unwrap_or(Value::Null)
        }
        "models.refresh" => {
            // models.json read again (extension providers stay); the host's list follows.
            lock(session.registry()).refresh();
            super::providers::apply(slot, session).await;
            json!({})
        }
        _ => Value::Null,
    }
}

/// pi 1.6's `ResolvedRequestAuth`: `{ok: true, apiKey?, headers?}` or `{ok: false, error}`.
fn request_auth(session: &AgentSession, params: &Value) -> Value {
    let text = |key: &str| params["model"].get(key).and_then(Value::as_str).unwrap_or_default();
    let (provider, id) = (text("provider"), text("id"));
    let mut registry = lock(session.registry());
    let Some(model) = registry.find(provider, id).cloned() else {
        return json!({ "ok": false, "error": format!("Model {provider}/{id} not found") });
    };
    match registry.request_auth(&model) {
        Ok(auth) => {
            let mut out = json!({ "ok": true });
            if let Some(key) = auth.api_key {
                out["apiKey"] = json!(key);
            }
            if !auth.headers.is_empty() {
                let headers: serde_json::Map<String, Value> =
                    auth.headers.into_iter().map(|(k, v)| (k, Value::from(v))).collect();
                out["headers"] = Value::Object(headers);
            }
            out
        }
        Err(error) => json!({ "ok": false, "error": error }),
    }
}
