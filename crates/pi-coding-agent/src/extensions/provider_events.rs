//! The provider events of pi's extensions as [`ProviderHooks`]: `before_provider_headers`,
//! `before_provider_request`, `after_provider_response` and `provider_stream_event`. Each is
//! awaited where the request stands, and only the events some loaded extension handles are
//! asked of pi-ai, so without handlers a request costs nothing more.

use std::sync::Arc;

use async_trait::async_trait;
use pi_ai::{Model, ProviderHooks, WantedHooks};
use serde_json::{json, Map, Value};

use super::ExtensionSlot;

const HEADERS: &str = "before_provider_headers";
const REQUEST: &str = "before_provider_request";
const RESPONSE: &str = "after_provider_response";
const STREAM_EVENT: &str = "provider_stream_event";

/// The provider events, sent to the session's extension host.
pub struct ExtensionProviderHooks {
    slot: Arc<ExtensionSlot>,
}

impl ExtensionProviderHooks {
    pub fn new(slot: Arc<ExtensionSlot>) -> Self {
        ExtensionProviderHooks { slot }
    }

    /// Dispatch `event` and return its combined result (after reporting handler errors).
    async fn dispatch(&self, event: &str, payload: Value) -> Option<Value> {
        let runner = self.slot.runner()?;
        let dispatched = runner.dispatch(event, payload).await.map(|d| (d.result, d.errors));
        self.slot.settle(event, dispatched).await
    }
}

/// Headers as the event's object; names keep their case.
fn headers_object(headers: &[(String, String)]) -> Value {
    Value::Object(
        headers
            .iter()
            .map(|(name, value)| (name.clone(), Value::from(value.as_str())))
            .collect::<Map<String, Value>>(),
    )
}

/// The headers a handler left: `null` (or any non-string) deletes a header, as in pi.
fn headers_from(value: &Value) -> Option<Vec<(String, String)>> {
    let map = value.as_object()?;
    Some(
        map.iter()
            .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_string())))
            .collect(),
    )
}

#[async_trait]
impl ProviderHooks for ExtensionProviderHooks {
    fn wanted(&self) -> WantedHooks {
        let Some(runner) = self.slot.runner() else {
            return WantedHooks::default();
        };
        let registrations = runner.registrations();
        WantedHooks {
            headers: registrations.handles(HEADERS),
            payload: registrations.handles(REQUEST),
            response: registrations.handles(RESPONSE),
            stream_events: registrations.handles(STREAM_EVENT),
        }
    }

    async fn headers(&self, _model: &Model, headers: &[(String, String)]) -> Option<Vec<(String, String)>> {
        let result = self
            .dispatch(HEADERS, json!({ "headers": headers_object(headers) }))
            .await?;
        headers_from(result.get("headers")?)
    }

    async fn payload(&self, _model: &Model, body: &Value) -> Option<Value> {
        let result = self.dispatch(REQUEST, json!({ "payload": body })).await?;
        // `null` is "no handler replaced it"; any replacement (even `null`) comes as `payload`.
        result.as_object()?.get("payload").cloned()
    }

    async fn response(&self, _model: &Model, status: u16, headers: &[(String, String)]) {
        let payload = json!({ "status": status, "headers": headers_object(headers) });
        let _ = self.dispatch(RESPONSE, payload).await;
    }

    async fn stream_event(&self, model: &Model, data: &Value) {
        let payload = json!({
            "provider": model.provider,
            "api": model.api,
            "model": model.id,
            "data": data,
        });
        let _ = self.dispatch(STREAM_EVENT, payload).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_header_is_deleted_and_the_others_kept_in_order() {
        let left = json!({"x-a": "1", "x-gone": null, "X-B": "2"});
        assert_eq!(
            headers_from(&left),
            Some(vec![
                ("x-a".to_string(), "1".to_string()),
                ("X-B".to_string(), "2".to_string())
            ])
        );
        assert_eq!(headers_from(&json!(null)), None);
    }
}
