//! The Codex WebSocket transport against the mock's WebSocket mode: one socket per session,
//! the second request of a session sent as a delta after `previous_response_id`, the fallback
//! to SSE (and staying there), failures after the start, Codex error events; and the frames
//! and upgrade headers compared with what the reference pi 1.6 sends to the same mock
//! (`tests/golden/codex-websocket.mjs`, run live when the reference is installed).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

use base64::Engine;
use pi_ai::{
    stream_simple, AssistantMessage, AssistantMessageEvent, Content, Context, Message, Model, StopReason,
    StreamOptions, ThinkingLevel, Tool, ToolResultMessage, Transport,
};
use pi_test_support::{Fault, MockServer, RecordedRequest, Script, Turn};
use serde_json::{json, Value};
use std::sync::Arc;

fn token() -> String {
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.sig",
        b64(json!({"alg": "none"})),
        b64(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-ws"}}))
    )
}

fn model(server: &MockServer) -> Model {
    serde_json::from_value(json!({
        "id": "gpt-c", "name": "gpt-c", "api": "openai-codex-responses", "provider": "openai-codex",
        "baseUrl": server.url(), "reasoning": true, "input": ["text", "image"],
        "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0},
        "contextWindow": 272000, "maxTokens": 128000,
    }))
    .expect("model")
}

fn options(session: &str, transport: Transport) -> StreamOptions {
    StreamOptions {
        api_key: Some(token()),
        session_id: Some(session.into()),
        transport,
        reasoning: Some(ThinkingLevel::High),
        max_retries: Some(0),
        ..Default::default()
    }
}

fn tools() -> Vec<Tool> {
    vec![Tool {
        name: "read".into(),
        description: "Read".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        constrained_sampling: None,
    }]
}

fn script() -> Script {
    Script::sequential(vec![Turn::tool_call("read", json!({"path": "a"})), Turn::text("done")])
}

async fn run(model: &Model, messages: &[Message], options: StreamOptions) -> AssistantMessage {
    let context = Context {
        system_prompt: Some("sys".into()),
        messages: messages.to_vec(),
        tools: tools(),
    };
    let mut stream = stream_simple(model, &context, options);
    let mut last = None;
    while let Some(event) = stream.next_event().await {
        match event {
            AssistantMessageEvent::Done { message, .. } => last = Some(message),
            AssistantMessageEvent::Error { error, .. } => last = Some(error),
            _ => {}
        }
    }
    last.expect("a final event")
}

/// The first request (a tool call) and the second (its result), as a session sends them.
async fn two_turns(model: &Model, session: &str, transport: Transport) -> (AssistantMessage, AssistantMessage) {
    let mut messages = vec![Message::user_text("read a")];
    let first = run(model, &messages, options(session, transport)).await;
    messages.push(Message::Assistant(Arc::new(first.clone())));
    for block in &first.content {
        if let Content::ToolCall(call) = block {
            messages.push(Message::ToolResult(Arc::new(ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: vec![Content::text("file")],
                details: None,
                is_error: false,
                duration_ms: None,
                timestamp: 2,
                extra: Default::default(),
            })));
        }
    }
    let second = run(model, &messages, options(session, transport)).await;
    (first, second)
}

fn frames(server: &MockServer) -> Vec<RecordedRequest> {
    server.requests().into_iter().filter(|r| r.method == "WS").collect()
}

#[tokio::test]
async fn a_session_keeps_one_socket_and_sends_the_second_request_as_a_delta() {
    let server = MockServer::start(script()).await.unwrap();
    let model = model(&server);
    let (first, second) = two_turns(&model, "sess-delta", Transport::Auto).await;
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    assert_eq!(second.stop_reason, StopReason::Stop, "{:?}", second.error_message);
    assert_eq!(second.response_id.as_deref(), Some("resp_mock1"));
    assert_eq!(server.websocket_connections(), 1);
    let frames = frames(&server);
    assert_eq!(frames.len(), 2, "{:?}", server.requests());
    assert_eq!(frames[0].path, "/codex/responses");
    assert_eq!(frames[0].body["type"], "response.create");
    assert!(frames[0].body.get("previous_response_id").is_none());
    assert_eq!(frames[1].body["previous_response_id"], "resp_mock0");
    let input = frames[1].body["input"].as_array().unwrap();
    assert_eq!(input.len(), 1, "only the tool result is new: {input:?}");
    assert_eq!(input[0]["type"], "function_call_output");
    let upgrade = &frames[0];
    assert_eq!(upgrade.header("openai-beta"), Some("responses_websockets=2026-02-06"));
    assert_eq!(upgrade.header("session-id"), Some("sess-delta"));
    assert_eq!(upgrade.header("x-client-request-id"), Some("sess-delta"));
    assert_eq!(upgrade.header("chatgpt-account-id"), Some("acct-ws"));
    assert_eq!(upgrade.header("originator"), Some("pi"));
    assert_eq!(
        upgrade.header("authorization"),
        Some(format!("Bearer {}", token()).as_str())
    );
    assert!(upgrade.header("accept").is_none());
}

#[tokio::test]
async fn plain_websocket_reuses_the_socket_but_sends_full_requests() {
    let server = MockServer::start(script()).await.unwrap();
    let (_, second) = two_turns(&model(&server), "sess-full", Transport::Websocket).await;
    assert_eq!(second.stop_reason, StopReason::Stop, "{:?}", second.error_message);
    assert_eq!(server.websocket_connections(), 1);
    let frames = frames(&server);
    assert!(frames[1].body.get("previous_response_id").is_none());
    assert_eq!(frames[1].body["input"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn sse_transport_never_opens_a_socket() {
    let server = MockServer::start(script()).await.unwrap();
    let (first, _) = two_turns(&model(&server), "sess-sse", Transport::Sse).await;
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(server.websocket_connections(), 0);
    assert!(server.requests().iter().all(|r| r.method == "POST"));
    assert!(first.diagnostics.is_none());
}

#[tokio::test]
async fn a_refused_socket_falls_back_to_sse_for_the_rest_of_the_session() {
    let server = MockServer::start(script()).await.unwrap();
    server.refuse_websockets(Some(500));
    let model = model(&server);
    let (first, second) = two_turns(&model, "sess-fallback", Transport::Auto).await;
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    assert_eq!(second.stop_reason, StopReason::Stop, "{:?}", second.error_message);
    let diagnostic = &first.diagnostics.as_ref().expect("diagnostics")[0];
    assert_eq!(diagnostic["type"], "provider_transport_failure");
    assert_eq!(diagnostic["details"]["fallbackTransport"], "sse");
    assert_eq!(diagnostic["details"]["phase"], "before_message_stream_start");
    assert_eq!(diagnostic["details"]["configuredTransport"], "auto");
    // The session stays on SSE: the second request does not try the socket again.
    assert!(second.diagnostics.is_none());
    server.refuse_websockets(None);
    let third = run(
        &model,
        &[Message::user_text("again")],
        options("sess-fallback", Transport::Auto),
    )
    .await;
    assert!(third.diagnostics.is_none());
    assert_eq!(server.websocket_connections(), 0);
    assert_eq!(server.requests().iter().filter(|r| r.method == "POST").count(), 3);
}

#[tokio::test]
async fn a_socket_that_drops_after_the_start_is_an_error_not_a_fallback() {
    let server = MockServer::start(Script::sequential(vec![
        Turn::text("one two three four five six").with_fault(Fault::drop_after(4))
    ]))
    .await
    .unwrap();
    let message = run(
        &model(&server),
        &[Message::user_text("hi")],
        options("sess-drop", Transport::Auto),
    )
    .await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.error_message.as_deref(), Some("WebSocket closed 1006"));
    let diagnostic = &message.diagnostics.as_ref().expect("diagnostics")[0];
    assert_eq!(diagnostic["details"]["phase"], "after_message_stream_start");
    assert!(diagnostic["details"].get("fallbackTransport").is_none());
    assert!(server.requests().iter().all(|r| r.method == "WS"));
}

#[tokio::test]
async fn a_codex_error_event_fails_the_request_without_falling_back() {
    let server = MockServer::start(Script::sequential(vec![
        Turn::text("hello").with_fault(Fault::error_event_after(0).message("Bad things"))
    ]))
    .await
    .unwrap();
    let message = run(
        &model(&server),
        &[Message::user_text("hi")],
        options("sess-err", Transport::Auto),
    )
    .await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.error_message.as_deref(), Some("Codex error: Bad things"));
    assert!(message.diagnostics.is_none());
    assert!(server.requests().iter().all(|r| r.method == "WS"));
}

/// Upgrade headers both sides send but that name the connection, not the request.
const CONNECTION_HEADERS: &[&str] = &[
    "host",
    "connection",
    "upgrade",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
    "user-agent",
    "accept-encoding",
    "accept-language",
    "sec-fetch-mode",
    "pragma",
    "cache-control",
];

fn comparable(request: &RecordedRequest) -> Value {
    let mut headers: Vec<(String, String)> = request
        .headers
        .iter()
        .filter(|(k, _)| !CONNECTION_HEADERS.contains(&k.as_str()))
        // Node's WebSocket asks for `*/*` on its own.
        .filter(|(k, v)| !(k == "accept" && v == "*/*"))
        .cloned()
        .collect();
    headers.sort();
    json!({"method": request.method, "path": request.path, "headers": headers, "body": request.body})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_and_headers_match_the_reference_1_6() {
    let Some(reference) = pi_test_support::reference_pi("sends Codex requests over a WebSocket") else {
        return;
    };
    for (transport, name) in [(Transport::Auto, "auto"), (Transport::Websocket, "websocket")] {
        let theirs = MockServer::start(script()).await.unwrap();
        let out = tempfile::NamedTempFile::new().unwrap();
        let script_path = format!("{}/tests/golden/codex-websocket.mjs", env!("CARGO_MANIFEST_DIR"));
        let status = tokio::process::Command::new(reference.node())
            .arg(script_path)
            .arg(theirs.url())
            .arg(name)
            .arg(out.path())
            .env("PI_REFERENCE_DIR", &reference.dir)
            .status()
            .await
            .expect("run node");
        assert!(status.success(), "codex-websocket.mjs failed");
        let reference_messages: Value = serde_json::from_str(&std::fs::read_to_string(out.path()).unwrap()).unwrap();
        assert_eq!(
            reference_messages["second"]["stopReason"], "stop",
            "{reference_messages}"
        );

        let ours = MockServer::start(script()).await.unwrap();
        let session = "sess-ws";
        pi_ai::providers::openai_codex::close_sessions(Some(session)).await;
        let (_, second) = two_turns(&model(&ours), session, transport).await;
        // Disposing the session closes its socket, as 1.6's `cleanupSessionResources` does.
        pi_ai::providers::openai_codex::close_sessions(Some(session)).await;
        assert_eq!(wait_for_closes(&ours, 1).await, wait_for_closes(&theirs, 1).await);
        assert_eq!(ours.websocket_closes(), vec![Some((1000, "debug_close".to_string()))]);
        assert_eq!(second.stop_reason, StopReason::Stop, "{:?}", second.error_message);

        let left: Vec<Value> = theirs.requests().iter().map(comparable).collect();
        let right: Vec<Value> = ours.requests().iter().map(comparable).collect();
        assert_eq!(
            serde_json::to_string_pretty(&right).unwrap(),
            serde_json::to_string_pretty(&left).unwrap(),
            "transport {name}: our requests (left) differ from 1.6's (right)"
        );
        assert_eq!(theirs.websocket_connections(), ours.websocket_connections());
    }
}

#[tokio::test]
async fn closing_a_session_closes_its_cached_socket_as_pi_1_6_does() {
    let server = MockServer::start(script()).await.unwrap();
    let model = model(&server);
    let (_, second) = two_turns(&model, "sess-close", Transport::Auto).await;
    assert_eq!(second.stop_reason, StopReason::Stop, "{:?}", second.error_message);
    // Another session's socket stays open.
    let other = run(
        &model,
        &[Message::user_text("hi")],
        options("sess-other", Transport::Auto),
    )
    .await;
    assert_ne!(other.stop_reason, StopReason::Error, "{:?}", other.error_message);
    assert!(server.websocket_closes().is_empty());

    pi_ai::providers::openai_codex::close_sessions(Some("sess-close")).await;
    let closes = wait_for_closes(&server, 1).await;
    assert_eq!(closes, vec![Some((1000, "debug_close".to_string()))]);

    // (Closing every session, `None`, would reach the sockets of tests running beside this one.)
    pi_ai::providers::openai_codex::close_sessions(Some("sess-other")).await;
    assert_eq!(wait_for_closes(&server, 2).await.len(), 2);
    // Nothing is left to close, and the next request of the session opens a new socket.
    let again = run(
        &model,
        &[Message::user_text("hi")],
        options("sess-close", Transport::Auto),
    )
    .await;
    assert_ne!(again.stop_reason, StopReason::Error, "{:?}", again.error_message);
    assert_eq!(server.websocket_connections(), 3);
    pi_ai::providers::openai_codex::close_sessions(Some("sess-close")).await;
}

async fn wait_for_closes(server: &MockServer, n: usize) -> Vec<Option<(u16, String)>> {
    for _ in 0..200 {
        let closes = server.websocket_closes();
        if closes.len() >= n {
            return closes;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    server.websocket_closes()
}
