//! The Codex backend's WebSocket transport: an upgrade on the Responses route, then one
//! `response.create` frame per request, each answered with the Responses events as text
//! frames. The connection remembers its last reply, so a request that names it in
//! `previous_response_id` sends only its new input (an unknown id gets Codex's
//! `previous_response_not_found` error event). Each frame is recorded as a request with method
//! `WS`, the upgrade's path and headers, and the frame as its body. Faults: an HTTP fault
//! becomes an `error` frame with that status; `drop` cuts the TCP connection; `truncate`
//! closes the socket normally before the final events; `error_event` sends an `error` frame.

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::conversation::{self, Api};
use crate::http::{Conn, HttpRequest};
use crate::plan::Plan;
use crate::script::{Fault, FaultKind};
use crate::server::{choose_turn, now, push_record, Body, RecordedRequest, Shared};
use crate::wire;

/// A `GET` asking to switch to WebSocket.
pub(crate) fn is_upgrade(request: &HttpRequest) -> bool {
    request.method == "GET"
        && request
            .header("upgrade")
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// What the connection remembers of its last reply.
struct Last {
    response_id: String,
    /// The whole conversation so far: every input and a stand-in item per reply.
    conversation: Vec<Value>,
}

/// Accept the upgrade (or refuse it as told) and answer frames until the client leaves.
pub(crate) async fn serve(mut conn: Conn, shared: &Shared, upgrade: HttpRequest) {
    let refusal = shared.state().refuse_websockets;
    let key = upgrade.header("sec-websocket-key").map(str::to_owned);
    let (Some(key), None) = (key, refusal) else {
        let status = refusal.unwrap_or(400);
        let body = json!({"error": {"message": "websocket refused"}}).to_string();
        let _ = conn
            .write_response(
                status,
                &[("content-type", "application/json".to_owned())],
                body.as_bytes(),
            )
            .await;
        return;
    };
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        derive_accept_key(key.as_bytes())
    );
    if conn.write_raw(answer.as_bytes()).await.is_err() {
        return;
    }
    shared.state().websocket_connections += 1;
    let (stream, _leftover) = conn.into_parts();
    let mut socket = WebSocketStream::from_raw_socket(stream, Role::Server, None).await;
    let mut last: Option<Last> = None;
    while let Some(Ok(message)) = socket.next().await {
        let text = match message {
            Message::Text(t) => t.as_str().to_owned(),
            Message::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
            Message::Close(frame) => {
                let frame = frame.map(|f| (u16::from(f.code), f.reason.as_str().to_owned()));
                shared.state().websocket_closes.push(frame);
                return;
            }
            _ => continue,
        };
        match answer_frame(&mut socket, shared, &upgrade, &text, &mut last).await {
            Ok(true) => {}
            _ => return,
        }
    }
}

/// Answer one frame. `Ok(false)`: the connection is finished.
async fn answer_frame(
    socket: &mut WebSocketStream<TcpStream>,
    shared: &Shared,
    upgrade: &HttpRequest,
    text: &str,
    last: &mut Option<Last>,
) -> Result<bool, tokio_tungstenite::tungstenite::Error> {
    let frame: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let mut record = RecordedRequest {
        seq: 0,
        time: now(),
        method: "WS".to_owned(),
        path: upgrade.target.clone(),
        api: Some(Api::Responses),
        headers: upgrade.headers.clone(),
        body_bytes: text.len(),
        body: Value::Null,
        turn_index: None,
        turn: None,
        fault: None,
    };
    if frame.get("type").and_then(Value::as_str) != Some("response.create") {
        push_record(shared, record, Body::Parsed(frame.clone())).await;
        send_json(
            socket,
            &codex_error(400, "invalid_request_error", "expected a response.create frame"),
        )
        .await?;
        return Ok(true);
    }
    let input = frame
        .get("input")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut conversation = match frame.get("previous_response_id").and_then(Value::as_str) {
        None => Vec::new(),
        Some(id) => match last.as_ref().filter(|l| l.response_id == id) {
            Some(l) => l.conversation.clone(),
            None => {
                push_record(shared, record, Body::Parsed(frame.clone())).await;
                let message = format!("Previous response with id '{id}' not found.");
                send_json(socket, &codex_error(400, "previous_response_not_found", &message)).await?;
                return Ok(true);
            }
        },
    };
    conversation.extend(input);
    let facts = conversation::facts(Api::Responses, &json!({ "input": conversation }));
    let (turn, index, fault) = choose_turn(shared, &facts);
    record.turn_index = Some(index);
    record.turn = Some(turn.clone());
    record.fault = fault.clone();
    push_record(shared, record, Body::Parsed(frame.clone())).await;

    if let Some(Fault {
        kind: FaultKind::Http { status, message, .. },
        ..
    }) = &fault
    {
        let body = wire::error_body(Api::Responses, *status, message.as_deref());
        let code = body
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or("server_error")
            .to_owned();
        let text = body
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("error")
            .to_owned();
        send_json(socket, &codex_error(*status, &code, &text)).await?;
        return Ok(true);
    }

    let model = frame.get("model").and_then(Value::as_str).unwrap_or("mock-model");
    let mut plan = Plan::new(&turn, index, model, text.len());
    plan.custom_tools = frame
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("custom"))
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let events: Vec<String> = wire::stream_events(Api::Responses, &plan)
        .iter()
        .filter_map(|e| sse_data(e))
        .collect();
    let stop_at = fault.as_ref().and_then(|f| match &f.kind {
        FaultKind::Drop { after_events }
        | FaultKind::Truncate { after_events }
        | FaultKind::ErrorEvent { after_events, .. } => {
            Some(after_events.unwrap_or(events.len() / 2).min(events.len()))
        }
        FaultKind::Http { .. } => None,
    });
    let delay = turn.delay_ms.filter(|ms| *ms > 0).map(std::time::Duration::from_millis);
    for (i, event) in events.iter().enumerate() {
        if Some(i) == stop_at {
            break;
        }
        if let (Some(delay), true) = (delay, i > 0) {
            tokio::time::sleep(delay).await;
        }
        socket.send(Message::text(event.clone())).await?;
    }
    match fault.map(|f| f.kind) {
        // The TCP connection ends without a close frame.
        Some(FaultKind::Drop { .. }) => Ok(false),
        Some(FaultKind::Truncate { .. }) => {
            let close = CloseFrame {
                code: CloseCode::Normal,
                reason: "".into(),
            };
            socket.send(Message::Close(Some(close))).await?;
            Ok(false)
        }
        Some(FaultKind::ErrorEvent {
            message, error_type, ..
        }) => {
            let code = error_type.unwrap_or_else(|| "server_error".to_owned());
            let message =
                message.unwrap_or_else(|| "The server had an error while processing your request.".to_owned());
            send_json(socket, &codex_error(500, &code, &message)).await?;
            Ok(true)
        }
        _ => {
            let mut conversation = conversation;
            conversation.push(json!({"type": "message", "role": "assistant", "content": []}));
            *last = Some(Last {
                response_id: format!("resp_mock{index}"),
                conversation,
            });
            Ok(true)
        }
    }
}

/// The JSON of an SSE event's `data:` line.
fn sse_data(event: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(event).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("data: ").or_else(|| line.strip_prefix("data:")))
        .map(str::to_owned)
}

/// An `error` event as the Codex backend sends it over a WebSocket.
fn codex_error(status: u16, code: &str, message: &str) -> Value {
    json!({
        "type": "error",
        "status": status,
        "error": {"type": "invalid_request_error", "code": code, "message": message, "param": null},
    })
}

async fn send_json(
    socket: &mut WebSocketStream<TcpStream>,
    value: &Value,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    socket.send(Message::text(value.to_string())).await
}
