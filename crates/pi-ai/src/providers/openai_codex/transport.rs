//! How a Codex request travels, as pi 1.6 chooses: over the session's WebSocket unless the
//! `transport` is `sse` or the session already fell back, the request as a `response.create`
//! frame (a delta after `previous_response_id` when the `auto`/`websocket-cached` socket is
//! reused); once more on `previous_response_not_found` or a connection limit hit before the
//! reply started; over SSE when the socket fails before the reply starts, with the failure
//! recorded in the message's `diagnostics`.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::sessions::{self, Acquired, Continuation, Entry};
use super::socket::{self, FrameEvents, Socket};
use crate::http::{self, RetryPolicy};
use crate::options::{StreamOptions, Transport};
use crate::providers::grammar_tools::GrammarInputs;
use crate::providers::openai_responses::stream::{self, Dialect, Failure, SseEvents};
use crate::providers::openai_responses::{convert_messages, Describe};
use crate::sse::SseStream;
use crate::stream_driver::{Emitter, ProviderError};
use crate::types::{Context, Message, Model};

const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 15_000;
const CONNECTION_LIMIT_REACHED: &str = "websocket_connection_limit_reached";
const PREVIOUS_RESPONSE_NOT_FOUND: &str = "previous_response_not_found";

/// One Codex request, everything decided before it is sent.
pub(crate) struct CodexRequest {
    pub sse_url: String,
    pub ws_url: String,
    pub sse_headers: Vec<(String, String)>,
    pub ws_headers: Vec<(String, String)>,
    pub body: Value,
    /// The prompt-cache session (none when caching is off): the socket and fallback key.
    pub session: Option<String>,
    pub account: String,
    pub transport: Transport,
    pub connect_timeout: Duration,
    pub idle_timeout: Option<Duration>,
    pub policy: RetryPolicy,
    pub describe: Describe,
    pub grammar: GrammarInputs,
}

impl CodexRequest {
    pub(crate) fn connect_timeout(options: &StreamOptions) -> Duration {
        Duration::from_millis(
            options
                .websocket_connect_timeout_ms
                .unwrap_or(DEFAULT_CONNECT_TIMEOUT_MS),
        )
    }
}

/// Stream the reply of `request` into `em`.
pub(crate) async fn run(em: &mut Emitter, model: &Model, mut request: CodexRequest) -> Result<(), ProviderError> {
    // The payload hook sees the body once, whichever transport carries it.
    if let Some(call) = crate::provider_hooks::current() {
        let bytes = serde_json::to_vec(&request.body).map_err(|e| ProviderError::Message(e.to_string()))?;
        let rewritten = crate::provider_hooks::rewrite_payload(&call, bytes).await;
        if let Ok(body) = serde_json::from_slice(&rewritten) {
            request.body = body;
        }
    }
    let fallen_back = request.session.as_deref().is_some_and(sessions::is_sse_only);
    if request.transport != Transport::Sse && !fallen_back {
        let mut retried_continuation = false;
        let mut retried_limit = false;
        loop {
            let failure = match over_websocket(em, model, &request).await {
                Ok(()) => return Ok(()),
                Err(failure) => failure,
            };
            let started = em.is_started();
            match &failure {
                Failure::Api { code: Some(code), .. }
                    if code == PREVIOUS_RESPONSE_NOT_FOUND && !retried_continuation =>
                {
                    retried_continuation = true;
                    continue;
                }
                Failure::Api { code: Some(code), .. }
                    if code == CONNECTION_LIMIT_REACHED && !started && !retried_limit =>
                {
                    retried_limit = true;
                    continue;
                }
                Failure::Transport(message) => {
                    record_transport_failure(em, &request, message, started);
                    if let Some(session) = &request.session {
                        sessions::mark_sse_only(session);
                    }
                    if started {
                        return Err(ProviderError::Message(message.clone()));
                    }
                    break;
                }
                // A connection limit hit twice before the reply started still falls back.
                Failure::Api {
                    code: Some(code),
                    message,
                } if code == CONNECTION_LIMIT_REACHED && !started => {
                    record_transport_failure(em, &request, message, started);
                    if let Some(session) = &request.session {
                        sessions::mark_sse_only(session);
                    }
                    break;
                }
                _ => return Err(failure.into_provider_error()),
            }
        }
    }
    over_sse(em, model, request).await
}

/// The SSE request (no hook: the body already passed it).
async fn over_sse(em: &mut Emitter, model: &Model, request: CodexRequest) -> Result<(), ProviderError> {
    let mut headers = http::header_map(&request.sse_headers)?;
    let payload = serde_json::to_vec(&request.body).map_err(|e| ProviderError::Message(e.to_string()))?;
    // As pi 1.6 on Node 22: the SSE body goes zstd-compressed (the socket's frames do not).
    headers.insert(
        reqwest::header::CONTENT_ENCODING,
        reqwest::header::HeaderValue::from_static("zstd"),
    );
    let payload = compress_body(&payload);
    let response = http::post_json(&request.sse_url, headers, payload.into(), request.policy)
        .await
        .map_err(|e| ProviderError::Message((request.describe)(&e)))?;
    if let Some(call) = crate::provider_hooks::current() {
        crate::provider_hooks::report_response(&call, &response).await;
    }
    if !em.is_started() {
        em.start().await?;
    }
    let mut events = SseEvents::new(SseStream::new(response.bytes_stream()));
    stream::read_events(em, model, &mut events, &request.grammar, Dialect::Codex)
        .await
        .map_err(Failure::into_provider_error)
}

/// The body as a zstd frame. pi 1.6 compresses at zstd's level 3; the pure-Rust encoder offers
/// its fastest level (about zstd's 1), which the server decodes the same way.
fn compress_body(json: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(json, ruzstd::encoding::CompressionLevel::Fastest)
}

/// One try over the WebSocket.
async fn over_websocket(em: &mut Emitter, model: &Model, request: &CodexRequest) -> Result<(), Failure> {
    let cached_context = matches!(request.transport, Transport::Auto | Transport::WebsocketCached);
    let acquired = match &request.session {
        Some(session) => sessions::acquire(session, &request.account),
        None => Acquired::Busy,
    };
    let (lease, mut entry) = match acquired {
        Acquired::Reused(lease, entry) => (Some(lease), entry),
        Acquired::Fresh(lease) => (Some(lease), Box::new(new_entry(open(request).await?))),
        // Uncached: a socket for this request only.
        Acquired::Busy => (None, Box::new(new_entry(open(request).await?))),
    };
    let frame_body = match (&entry.continuation, cached_context && lease.is_some()) {
        (Some(continuation), true) => match sessions::delta_body(&request.body, continuation) {
            Some(delta) => delta,
            None => {
                entry.continuation = None;
                request.body.clone()
            }
        },
        _ => request.body.clone(),
    };
    let mut frame = Map::new();
    frame.insert("type".into(), json!("response.create"));
    if let Value::Object(fields) = frame_body {
        frame.extend(fields);
    }
    let text = Value::Object(frame).to_string();
    use futures::SinkExt;
    if let Err(e) = entry
        .socket
        .send(tokio_tungstenite::tungstenite::Message::text(text))
        .await
    {
        return Err(Failure::Transport(e.to_string()));
    }
    let read = {
        let mut events = FrameEvents {
            socket: &mut entry.socket,
            idle: request.idle_timeout,
        };
        stream::read_events(em, model, &mut events, &request.grammar, Dialect::Codex).await
    };
    match read {
        Ok(()) => {
            entry.continuation = match (&em.output.response_id, cached_context) {
                (Some(id), true) => Some(Continuation {
                    body: request.body.clone(),
                    response_id: id.clone(),
                    response_items: reply_items(model, em),
                }),
                _ => None,
            };
            match lease {
                Some(lease) => lease.release(entry),
                None => sessions::close_quietly(entry.socket),
            }
            Ok(())
        }
        Err(failure) => {
            // The lease frees the slot as it drops; the socket goes with it.
            sessions::close_quietly(entry.socket);
            Err(failure)
        }
    }
}

fn new_entry(socket: Socket) -> Entry {
    let now = std::time::Instant::now();
    Entry {
        socket,
        created: now,
        released: now,
        continuation: None,
    }
}

async fn open(request: &CodexRequest) -> Result<Socket, Failure> {
    socket::connect(&request.ws_url, &request.ws_headers, request.connect_timeout)
        .await
        .map_err(Failure::Transport)
}

/// The reply as the next request replays it (its tool results are the next request's).
fn reply_items(model: &Model, em: &Emitter) -> Vec<Value> {
    let context = Context {
        system_prompt: None,
        messages: vec![Message::Assistant(std::sync::Arc::new(em.output.clone()))],
        tools: Vec::new(),
    };
    convert_messages(model, &context)
        .into_iter()
        .filter(|item| {
            !matches!(
                item.get("type").and_then(Value::as_str),
                Some("function_call_output" | "custom_tool_call_output")
            )
        })
        .collect()
}

/// pi 1.6's `provider_transport_failure` diagnostic on the message.
fn record_transport_failure(em: &mut Emitter, request: &CodexRequest, message: &str, started: bool) {
    let configured = match request.transport {
        Transport::Sse => "sse",
        Transport::Websocket => "websocket",
        Transport::WebsocketCached => "websocket-cached",
        Transport::Auto => "auto",
    };
    let mut details = Map::new();
    details.insert("configuredTransport".into(), json!(configured));
    if !started {
        details.insert("fallbackTransport".into(), json!("sse"));
    }
    details.insert("eventsEmitted".into(), json!(started));
    details.insert(
        "phase".into(),
        json!(if started {
            "after_message_stream_start"
        } else {
            "before_message_stream_start"
        }),
    );
    let bytes = serde_json::to_vec(&request.body).map(|b| b.len()).unwrap_or(0);
    details.insert("requestBytes".into(), json!(bytes));
    let name = if message.starts_with("WebSocket closed") {
        "WebSocketCloseError"
    } else {
        "Error"
    };
    let diagnostic = json!({
        "type": "provider_transport_failure",
        "timestamp": crate::now_ms(),
        "error": {"name": name, "message": message},
        "details": Value::Object(details),
    });
    em.output.push_diagnostic(diagnostic);
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    /// Bodies of every size come back whole through a zstd decoder, and repetitive JSON shrinks.
    #[test]
    fn compressed_bodies_decode_to_the_json() {
        let mut seed: u64 = 7;
        let mut random_text = String::new();
        for _ in 0..40_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            random_text.push(char::from(b'a' + (seed >> 59) as u8));
        }
        let repeated = serde_json::json!({"input": vec!["the same line of history"; 5_000]}).to_string();
        for body in [String::new(), "{}".to_string(), random_text, repeated.clone()] {
            let compressed = super::compress_body(body.as_bytes());
            let mut decoder = ruzstd::decoding::StreamingDecoder::new(compressed.as_slice()).expect("a zstd frame");
            let mut back = Vec::new();
            decoder.read_to_end(&mut back).expect("decodes");
            assert_eq!(back, body.as_bytes());
        }
        assert!(super::compress_body(repeated.as_bytes()).len() * 10 < repeated.len());
    }
}
