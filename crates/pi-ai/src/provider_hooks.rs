//! Asynchronous observers of one provider call (pi's `transformHeaders`, `onPayload`,
//! `onResponse` and `onProviderStreamEvent`): an embedding application (pi's extensions) may
//! rewrite the request's headers and body, see the response status and headers before the
//! body is read, and see each parsed provider event before it is turned into stream events.
//!
//! [`crate::stream_simple`] runs the header hook before the provider builds its request, then
//! starts the provider inside a scope that [`crate::stream_driver::spawn_provider_with`]
//! carries into the provider's task. The HTTP and SSE layers consult that scope, so every wire
//! API gets the hooks without code of its own. Nothing is parsed or awaited for a hook the
//! application does not want.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::types::Model;

/// Which of the hooks an application wants for the next call; the others cost nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WantedHooks {
    pub headers: bool,
    pub payload: bool,
    pub response: bool,
    pub stream_events: bool,
}

impl WantedHooks {
    pub fn any(&self) -> bool {
        self.headers || self.payload || self.response || self.stream_events
    }
}

/// The hooks of one call. Every method is awaited where the call stands, so a slow hook slows
/// the request, never reorders it.
#[async_trait]
pub trait ProviderHooks: Send + Sync {
    /// What this application wants now (asked once per call, before anything is sent).
    fn wanted(&self) -> WantedHooks;

    /// The call's own headers (the model's and the options'; never the credentials the
    /// provider adds): returns the headers to send instead. `None` keeps them.
    async fn headers(&self, _model: &Model, _headers: &[(String, String)]) -> Option<Vec<(String, String)>> {
        None
    }

    /// The request body about to be sent; `Some` replaces it.
    async fn payload(&self, _model: &Model, _body: &Value) -> Option<Value> {
        None
    }

    /// A successful response's status and headers (lower-case names), before its body is read.
    async fn response(&self, _model: &Model, _status: u16, _headers: &[(String, String)]) {}

    /// One parsed provider event (an SSE `data:` object), before it becomes stream events.
    async fn stream_event(&self, _model: &Model, _data: &Value) {}
}

/// The hooks in force for the provider task being run, with the model they were asked for.
#[derive(Clone)]
pub(crate) struct CallHooks {
    pub hooks: Arc<dyn ProviderHooks>,
    pub wanted: WantedHooks,
    pub model: Arc<Model>,
}

tokio::task_local! {
    static CALL_HOOKS: CallHooks;
}

/// The hooks of the provider task running now, if it has any.
pub(crate) fn current() -> Option<CallHooks> {
    CALL_HOOKS.try_with(Clone::clone).ok()
}

/// Run `start` (which spawns the provider task) with `call` in scope, so the task inherits it.
pub(crate) fn with_call<R>(call: CallHooks, start: impl FnOnce() -> R) -> R {
    CALL_HOOKS.sync_scope(call, start)
}

/// Run `fut` with `call` in scope (inside the provider's own task).
pub(crate) async fn scoped<F: std::future::Future>(call: Option<CallHooks>, fut: F) -> F::Output {
    match call {
        Some(call) => CALL_HOOKS.scope(call, fut).await,
        None => fut.await,
    }
}

/// A request body after the payload hook: unchanged bytes unless the hook replaced it.
pub(crate) async fn rewrite_payload(call: &CallHooks, payload: Vec<u8>) -> Vec<u8> {
    if !call.wanted.payload {
        return payload;
    }
    let Ok(body) = serde_json::from_slice::<Value>(&payload) else {
        return payload;
    };
    match call.hooks.payload(&call.model, &body).await {
        Some(replaced) => serde_json::to_vec(&replaced).unwrap_or(payload),
        None => payload,
    }
}

/// Report a response's status and headers to the hook, if it wants them.
pub(crate) async fn report_response(call: &CallHooks, response: &reqwest::Response) {
    if !call.wanted.response {
        return;
    }
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    call.hooks
        .response(&call.model, response.status().as_u16(), &headers)
        .await;
}

/// Hand one SSE event's data to the hook, if it wants stream events and the data is JSON.
pub(crate) async fn report_stream_event(data: &str) {
    let Some(call) = current() else { return };
    if !call.wanted.stream_events {
        return;
    }
    if let Ok(value) = serde_json::from_str::<Value>(data) {
        call.hooks.stream_event(&call.model, &value).await;
    }
}
