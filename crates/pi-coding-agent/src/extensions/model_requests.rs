//! `ctx.modelRegistry`'s calls that need pi: a model's request auth (`getApiKeyAndHeaders`),
//! a provider's key (`getApiKeyForProvider`), `refresh` (models.json read again) and
//! `complete` (one request through the session's stream function, with request-time auth).

use serde_json::{json, Value};

use std::sync::Arc;

use super::ExtensionSlot;
use crate::session::agent_session::lock;
use crate::session::AgentSession;

/// Answer one `models.*` request of the host.
pub async fn answer(slot: &Arc<ExtensionSlot>, session: &AgentSession, method: &str, params: &Value) -> Value {
    match method {
        "models.complete" => complete(slot, session, params).await,
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

/// `ctx.modelRegistry.complete(model, context, options)`: the final assistant message of one
/// request (pi-ai's `complete`); a failure is that message's `error` stop reason, as there.
async fn complete(slot: &Arc<ExtensionSlot>, session: &AgentSession, params: &Value) -> Value {
    let text = |key: &str| params["model"].get(key).and_then(Value::as_str).unwrap_or_default();
    let (provider, id) = (text("provider"), text("id"));
    let found = {
        let mut registry = lock(session.registry());
        registry
            .find(provider, id)
            .cloned()
            .map(|model| (registry.request_auth(&model), model))
    };
    let failed = |message: String| {
        json!({
            "role": "assistant", "content": [], "api": "", "provider": provider, "model": id,
            "usage": pi_ai::Usage::default(), "stopReason": "error", "errorMessage": message,
            "timestamp": pi_ai::now_ms(),
        })
    };
    let Some((auth, model)) = found else {
        return failed(format!("Model {provider}/{id} not found"));
    };
    let auth = match auth {
        Ok(auth) => auth,
        Err(error) => return failed(error),
    };
    let context: pi_ai::Context = match serde_json::from_value(params["context"].clone()) {
        Ok(context) => context,
        Err(e) => return failed(format!("Invalid context: {e}")),
    };
    let options = &params["options"];
    let stream_options = pi_ai::StreamOptions {
        api_key: auth.api_key,
        headers: auth.headers,
        max_tokens: options.get("maxTokens").and_then(Value::as_u64),
        temperature: options.get("temperature").and_then(Value::as_f64),
        session_id: options.get("sessionId").and_then(Value::as_str).map(str::to_string),
        cache_retention: options
            .get("cacheRetention")
            .and_then(Value::as_str)
            .and_then(pi_ai::CacheRetention::parse)
            .unwrap_or_default(),
        reasoning: options
            .get("reasoning")
            .and_then(Value::as_str)
            .and_then(pi_ai::ThinkingLevel::parse),
        ..Default::default()
    };
    let stream = super::providers::stream_fn(Arc::clone(slot))(&model, &context, stream_options);
    let message = stream.result().await;
    // An `AssistantMessage` is written without its role (the message enum adds it).
    let mut value = serde_json::to_value(&message).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut value {
        fields.insert("role".into(), Value::from("assistant"));
    }
    value
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
