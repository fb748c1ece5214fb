//! Provider streams that run in the host: a model whose `api` an extension registered with
//! `streamSimple` is streamed by `provider.stream`, its events arriving as `provider.event`
//! notifications and turned back into pi-ai's [`AssistantMessageEvent`]s here. Cancelling the
//! call's token sends `provider.cancel`, which aborts the signal the JS stream was given.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pi_ai::{
    event_channel, AssistantMessage, AssistantMessageEvent, AssistantStream, Context, EventSender, Model, StopReason,
    StreamOptions,
};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use crate::runner::{CancelNotice, ExtensionRunner};

/// Stream ids are unique within the process, so a late event of an ended stream is dropped.
static NEXT_STREAM_ID: AtomicU64 = AtomicU64::new(1);

/// The options a JS `streamSimple` reads (pi-ai's `SimpleStreamOptions` without functions).
fn wire_options(options: &StreamOptions) -> Value {
    let mut out = Map::new();
    if let Some(key) = &options.api_key {
        out.insert("apiKey".into(), json!(key));
    }
    if !options.headers.is_empty() {
        let headers: Map<String, Value> = options
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), json!(value)))
            .collect();
        out.insert("headers".into(), Value::Object(headers));
    }
    if let Some(session_id) = &options.session_id {
        out.insert("sessionId".into(), json!(session_id));
    }
    if let Some(level) = options.reasoning.filter(|l| *l != pi_ai::ThinkingLevel::Off) {
        out.insert("reasoning".into(), json!(level));
    }
    if let Some(max_tokens) = options.max_tokens {
        out.insert("maxTokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        out.insert("temperature".into(), json!(temperature));
    }
    if let Some(timeout) = options.timeout_ms {
        out.insert("timeoutMs".into(), json!(timeout));
    }
    Value::Object(out)
}

/// One `provider.event` as pi-ai's event; `None` for a line that is not one.
pub fn decode_event(event: &Value) -> Option<AssistantMessageEvent> {
    let index = || event.get("contentIndex").and_then(Value::as_u64).map(|i| i as usize);
    let text = |key: &str| event.get(key).and_then(Value::as_str).map(str::to_string);
    let field = |key: &str| event.get(key).cloned();
    let reason = || serde_json::from_value::<StopReason>(event.get("reason")?.clone()).ok();
    Some(match event.get("type")?.as_str()? {
        "start" => AssistantMessageEvent::Start {
            partial: serde_json::from_value(field("partial")?).ok()?,
        },
        "text_start" => AssistantMessageEvent::TextStart {
            content_index: index()?,
        },
        "text_delta" => AssistantMessageEvent::TextDelta {
            content_index: index()?,
            delta: text("delta")?,
        },
        "text_end" => AssistantMessageEvent::TextEnd {
            content_index: index()?,
            content: serde_json::from_value(field("block")?).ok()?,
        },
        "thinking_start" => AssistantMessageEvent::ThinkingStart {
            content_index: index()?,
        },
        "thinking_delta" => AssistantMessageEvent::ThinkingDelta {
            content_index: index()?,
            delta: text("delta")?,
        },
        "thinking_end" => AssistantMessageEvent::ThinkingEnd {
            content_index: index()?,
            content: serde_json::from_value(field("block")?).ok()?,
        },
        "toolcall_start" => AssistantMessageEvent::ToolCallStart {
            content_index: index()?,
            id: text("id")?,
            name: text("name")?,
        },
        "toolcall_delta" => AssistantMessageEvent::ToolCallDelta {
            content_index: index()?,
            delta: text("delta")?,
        },
        "toolcall_end" => AssistantMessageEvent::ToolCallEnd {
            content_index: index()?,
            tool_call: serde_json::from_value(field("toolCall")?).ok()?,
        },
        "done" => AssistantMessageEvent::Done {
            reason: reason()?,
            message: serde_json::from_value(field("message")?).ok()?,
        },
        "error" => AssistantMessageEvent::Error {
            reason: reason().unwrap_or(StopReason::Error),
            error: serde_json::from_value(field("error")?).ok()?,
        },
        _ => return None,
    })
}

/// The error that ends a stream the provider did not end itself.
fn failure(model: &Model, reason: StopReason, message: String) -> AssistantMessageEvent {
    let mut error = AssistantMessage::empty_for(model);
    error.stop_reason = reason;
    error.error_message = Some(message);
    AssistantMessageEvent::Error { reason, error }
}

impl ExtensionRunner {
    /// Stream `model` through the `streamSimple` an extension registered for its `api`. Like
    /// every pi-ai stream it never fails: a host that is gone, a provider that throws or a
    /// stream that stops without `done` ends with an `error` event.
    pub fn stream_provider(
        self: &Arc<Self>,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantStream {
        let (tx, stream) = event_channel();
        let runner = Arc::clone(self);
        let model = model.clone();
        let params = json!({
            "model": model,
            "context": context,
            "options": wire_options(&options),
        });
        tokio::spawn(async move { runner.pump(model, params, options, tx).await });
        stream
    }

    async fn pump(&self, model: Model, mut params: Value, options: StreamOptions, mut tx: EventSender) {
        let host = match self.current() {
            Ok(host) => host,
            Err(error) => {
                let _ = tx.send(failure(&model, StopReason::Error, error.to_string())).await;
                return;
            }
        };
        let stream_id = NEXT_STREAM_ID.fetch_add(1, Ordering::Relaxed);
        params["streamId"] = json!(stream_id);
        let (events_tx, mut events) = mpsc::channel(crate::connection::PROVIDER_EVENT_QUEUE);
        host.route_provider_events(stream_id, events_tx);
        let cancel = options.cancel.clone();
        let notice = CancelNotice::provider_stream(stream_id);
        let answer = self.ask(&host, "provider.stream", params, None, Some((&cancel, notice)));
        tokio::pin!(answer);
        let mut ended = false;
        let mut consumer_gone = false;
        let (mut closed, mut overflowed) = (false, false);
        let outcome = loop {
            tokio::select! {
                biased;
                next = events.recv(), if !closed => {
                    let Some(event) = next else {
                        // The route was dropped: the host is gone, or the stream ran too far
                        // ahead of its reader.
                        closed = true;
                        overflowed = host.gone().is_none();
                        if overflowed {
                            cancel.cancel();
                        }
                        continue;
                    };
                    let Some(event) = decode_event(&event) else { continue };
                    ended |= event.is_terminal();
                    if !consumer_gone && !tx.send(event).await {
                        // Nobody reads any more: stop the JS stream too.
                        consumer_gone = true;
                        cancel.cancel();
                    }
                }
                outcome = &mut answer => break outcome,
            }
        };
        // The events were routed before the answer that follows them; take what is left.
        while let Ok(event) = events.try_recv() {
            let Some(event) = decode_event(&event) else { continue };
            ended |= event.is_terminal();
            if !consumer_gone {
                consumer_gone = !tx.send(event).await;
            }
        }
        host.unroute_provider_events(stream_id);
        if ended || consumer_gone {
            return;
        }
        let end = match outcome {
            _ if overflowed => failure(
                &model,
                StopReason::Error,
                format!(
                    "The extension provider sent more than {} events ahead of pi and was stopped",
                    crate::connection::PROVIDER_EVENT_QUEUE
                ),
            ),
            Ok(_) if cancel.is_cancelled() => failure(&model, StopReason::Aborted, "Request was aborted".into()),
            Ok(_) => failure(
                &model,
                StopReason::Error,
                "The provider stream ended without a result".into(),
            ),
            Err(_) if cancel.is_cancelled() => failure(&model, StopReason::Aborted, "Request was aborted".into()),
            Err(error) => failure(&model, StopReason::Error, error.to_string()),
        };
        let _ = tx.send(end).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_events_become_pi_ai_events() {
        let delta = decode_event(&json!({"type": "text_delta", "contentIndex": 0, "delta": "hi"}));
        assert_eq!(
            delta,
            Some(AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: "hi".into()
            })
        );
        let start = decode_event(&json!({"type": "toolcall_start", "contentIndex": 1, "id": "c1", "name": "read"}));
        assert!(
            matches!(start, Some(AssistantMessageEvent::ToolCallStart { content_index: 1, ref name, .. }) if name == "read")
        );
        assert_eq!(decode_event(&json!({"type": "text_delta"})), None);
        assert_eq!(decode_event(&json!({"type": "something_else"})), None);
    }

    #[test]
    fn options_carry_what_a_js_provider_reads() {
        let options = StreamOptions {
            api_key: Some("k".into()),
            session_id: Some("s".into()),
            headers: vec![("x-a".into(), "1".into())],
            ..Default::default()
        };
        let wire = wire_options(&options);
        assert_eq!(wire, json!({"apiKey": "k", "sessionId": "s", "headers": {"x-a": "1"}}));
    }
}
