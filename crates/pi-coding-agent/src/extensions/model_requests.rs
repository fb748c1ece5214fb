//! `ctx.modelRegistry`'s calls that need pi: a model's request auth (`getApiKeyAndHeaders`),
//! a provider's key and auth (`getApiKeyForProvider`, `getProviderAuth`), `refresh`
//! (models.json read again) and `stream` / `complete` (one request through the session's
//! stream function, with request-time auth; its events go back to the host as `models.event`
//! when asked for, and `models.cancel` stops it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::ExtensionSlot;
use crate::session::agent_session::lock;
use crate::session::AgentSession;

/// Answer one `models.*` request of the host.
pub async fn answer(slot: &Arc<ExtensionSlot>, session: &AgentSession, method: &str, params: &Value) -> Value {
    // A provider registered with an `oauth` block: its key is what the extension derives from
    // the stored login (refreshed first when it expires).
    let provider = match method {
        "models.requestAuth" => params["model"].get("provider").and_then(Value::as_str),
        _ => params.get("provider").and_then(Value::as_str),
    };
    if let Some(provider) = provider.filter(|p| slot.has_oauth_provider(p)) {
        let key = super::oauth::request_key(slot, provider).await;
        match (method, key) {
            ("models.requestAuth", Ok(key)) => return json!({ "ok": true, "apiKey": key }),
            ("models.requestAuth", Err(error)) => return json!({ "ok": false, "error": error }),
            ("models.apiKeyForProvider", key) => return key.map(Value::from).unwrap_or(Value::Null),
            ("models.providerAuth", Ok(key)) => return json!({ "auth": { "apiKey": key }, "source": "OAuth" }),
            ("models.providerAuth", Err(_)) => return Value::Null,
            _ => {}
        }
    }
    match method {
        "models.requestAuth" => request_auth(session, params),
        "models.providerAuth" => {
            let provider = params.get("provider").and_then(Value::as_str).unwrap_or_default();
            provider_auth(session, provider)
        }
        "models.apiKeyForProvider" => {
            let provider = params.get("provider").and_then(Value::as_str).unwrap_or_default();
            lock(session.registry())
                .api_key_for_provider(provider)
                .map(Value::from)
                .unwrap_or(Value::Null)
        }
        "models.refresh" => {
            // models.json and auth.json read again (extension providers stay), as pi 1.6's
            // refresh sees a key stored meanwhile; the host's list follows.
            {
                let mut registry = lock(session.registry());
                registry.auth_mut().reload();
                registry.refresh();
            }
            super::providers::apply(slot, session).await;
            json!({})
        }
        _ => Value::Null,
    }
}

/// The model requests of the host running now, by its stream id.
#[derive(Default)]
pub struct Running(Mutex<HashMap<u64, CancellationToken>>);

impl Running {
    fn start(&self, id: u64) -> CancellationToken {
        let token = CancellationToken::new();
        lock(&self.0).insert(id, token.clone());
        token
    }

    fn finish(&self, id: u64) {
        lock(&self.0).remove(&id);
    }

    /// `models.cancel {streamId}`: the request ends as aborted.
    pub fn cancel(&self, params: &Value) {
        let id = params.get("streamId").and_then(Value::as_u64);
        if let Some(token) = id.and_then(|id| lock(&self.0).get(&id).cloned()) {
            token.cancel();
        }
    }
}

/// `ctx.modelRegistry.stream` / `complete(model, context, options)`: one request, answered
/// with its final assistant message (pi-ai's `complete`; a failure is that message's `error`
/// stop reason, as there). With `streamId`, `models.cancel` for that id aborts it, and with
/// `events: true` every event goes to the host first as `models.event {streamId, event}`, in
/// pi-ai's shape (the partial message included).
pub async fn complete(slot: &Arc<ExtensionSlot>, session: &AgentSession, params: &Value, running: &Running) -> Value {
    let id = params.get("streamId").and_then(Value::as_u64);
    let cancel = match id {
        Some(id) => running.start(id),
        None => CancellationToken::new(),
    };
    let events = params.get("events").and_then(Value::as_bool).unwrap_or(false);
    let sink = match (id, slot.runner()) {
        (Some(id), Some(runner)) if events => Some((id, runner)),
        _ => None,
    };
    let message = run_request(slot, session, params, cancel, sink).await;
    if let Some(id) = id {
        running.finish(id);
    }
    message
}

async fn run_request(
    slot: &Arc<ExtensionSlot>,
    session: &AgentSession,
    params: &Value,
    cancel: CancellationToken,
    sink: Option<(u64, Arc<pi_extensions::ExtensionRunner>)>,
) -> Value {
    let text = |key: &str| params["model"].get(key).and_then(Value::as_str).unwrap_or_default();
    let (provider, id) = (text("provider"), text("id"));
    let found = {
        let mut registry = lock(session.registry());
        registry
            .find(provider, id)
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
        cancel,
        ..Default::default()
    };
    let started = std::time::Instant::now();
    // pi-ai's final message carries how long the request took, as the agent loop's does.
    let finished = |mut message: pi_ai::AssistantMessage| {
        if message.duration_ms.is_none() {
            message.duration_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        }
        message_json(&message)
    };
    // The URL gets the ids a stored login holds (Cloudflare's account id), as the session's
    // requests do.
    let stream = crate::config::model_registry::ModelRegistry::with_endpoints(
        Arc::clone(session.registry()),
        super::providers::stream_fn(Arc::clone(slot)),
    );
    let mut stream = stream(&model, &context, stream_options);
    let mut partial = pi_ai::PartialMessage::new();
    while let Some(event) = stream.next_event().await {
        if let Some((stream_id, runner)) = &sink {
            partial.apply(&event);
            // A host that is gone gets no events; the answer below fails for it anyway.
            let _ = runner.notify(
                "models.event",
                json!({ "streamId": stream_id, "event": event_json(&event, &mut partial) }),
            );
        }
        match event {
            pi_ai::AssistantMessageEvent::Done { message, .. } => return finished(message),
            pi_ai::AssistantMessageEvent::Error { error, .. } => return finished(error),
            _ => {}
        }
    }
    failed("Stream ended without a final event".to_string())
}

/// An event as pi-ai's JavaScript stream gives it: the delta fields, and the message so far
/// (`partial`) on every event before the last.
fn event_json(event: &pi_ai::AssistantMessageEvent, partial: &mut pi_ai::PartialMessage) -> Value {
    let mut value: Value = serde_json::from_str(&event.to_delta_json()).unwrap_or(Value::Null);
    if !event.is_terminal() {
        if let Value::Object(fields) = &mut value {
            let message = serde_json::from_str(&partial.to_json()).unwrap_or(Value::Null);
            fields.insert("partial".into(), message);
        }
    }
    value
}

/// An `AssistantMessage` as pi writes it (the message enum adds the role, so it is added here).
fn message_json(message: &pi_ai::AssistantMessage) -> Value {
    serde_json::from_str(&pi_ai::events::assistant_json(message)).unwrap_or(Value::Null)
}

/// `ctx.modelRegistry.getProviderAuth(provider)`: `{auth: {apiKey}, source}` as pi 1.6 resolves
/// it (an OAuth login refreshed first), or `null` when the provider has no auth.
fn provider_auth(session: &AgentSession, provider: &str) -> Value {
    use crate::config::auth::AuthSource;
    let mut registry = lock(session.registry());
    let source = match registry.auth().auth_source(provider) {
        Some(AuthSource::Stored) if registry.provider_uses_oauth(provider) => "OAuth".to_string(),
        Some(AuthSource::Stored) => "stored credential".to_string(),
        Some(AuthSource::Runtime) => "runtime API key".to_string(),
        Some(AuthSource::Environment(name)) if !name.is_empty() => name,
        _ => "configured API key".to_string(),
    };
    match registry.api_key_for_provider(provider) {
        Some(key) => json!({ "auth": { "apiKey": key }, "source": source }),
        None => Value::Null,
    }
}

/// pi 1.6's `ResolvedRequestAuth`: `{ok: true, apiKey?, headers?}` or `{ok: false, error}`.
fn request_auth(session: &AgentSession, params: &Value) -> Value {
    let text = |key: &str| params["model"].get(key).and_then(Value::as_str).unwrap_or_default();
    let (provider, id) = (text("provider"), text("id"));
    let mut registry = lock(session.registry());
    let Some(model) = registry.find(provider, id) else {
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
