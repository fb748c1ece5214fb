//! The APIs whose wire body pi 1.6 rewrites after its `onPayload` hook (Mistral) or whose endpoint
//! and auth are their own (Azure OpenAI Responses), against
//! what 1.6 sent and made of the reply: `tests/golden/wire-requests.json` comes from
//! `tests/golden/make-wire-requests.mjs`, which runs 1.6's own pi-ai against a recording server.
//! For each case the same reply goes through our provider; the request (path, headers, body byte
//! for byte), the event sequence and the final message must match, faults included (429, 500
//! without a body, a finish reason of `error`, a stream without one, a dropped connection).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

#[allow(dead_code)] // the scripted server serves several test binaries; this one uses a part
mod server;

use pi_ai::{
    stream_simple, AssistantMessageEvent, CacheRetention, Context, Message, Model, StreamOptions, ThinkingLevel,
    Transport,
};
use serde_json::{json, Value};
use server::{Ending, Reply, Server};
use std::sync::Arc;

/// Headers the HTTP stacks add on their own (Node's fetch and reqwest differ there).
const TRANSPORT_HEADERS: &[&str] = &[
    "host",
    "connection",
    "content-length",
    "accept-language",
    "sec-fetch-mode",
    "accept-encoding",
    "user-agent",
    "transfer-encoding",
];

/// The SDKs' own telemetry headers (OpenAI's `x-stainless-*`, Google's `x-goog-api-client`),
/// which our client does not send.
fn is_sdk_header(name: &str) -> bool {
    name.starts_with("x-stainless-") || name == "x-goog-api-client"
}

fn cases() -> Vec<Value> {
    let path = format!("{}/tests/golden/wire-requests.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("cases")).expect("json")
}

fn reply_of(case: &Value) -> Reply {
    let reply = &case["reply"];
    if let Some(status) = reply["status"].as_u64() {
        return Reply::status(status as u16, reply["body"].as_str().unwrap_or(""));
    }
    let chunks = reply["chunks"]
        .as_array()
        .expect("chunks")
        .iter()
        .map(|c| c.as_str().expect("chunk").to_string())
        .collect();
    let reply = Reply::sse(chunks);
    if reply_dropped(case) {
        reply.ending(Ending::Drop)
    } else {
        reply
    }
}

fn reply_dropped(case: &Value) -> bool {
    case["reply"]["drop"].as_bool() == Some(true)
}

fn options_of(case: &Value) -> StreamOptions {
    let o = &case["options"];
    StreamOptions {
        api_key: Some(o["apiKey"].as_str().unwrap_or("k").into()),
        reasoning: o["reasoning"].as_str().and_then(ThinkingLevel::parse),
        session_id: o["sessionId"].as_str().map(String::from),
        cache_retention: o["cacheRetention"]
            .as_str()
            .and_then(CacheRetention::parse)
            .unwrap_or_default(),
        temperature: o["temperature"].as_f64(),
        max_tokens: o["maxTokens"].as_u64(),
        max_retries: Some(0),
        transport: o["transport"].as_str().and_then(Transport::parse).unwrap_or_default(),
        ..Default::default()
    }
}

/// The headers a server sees, less the transport's own, sorted by name.
fn meaningful_headers(headers: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = headers
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .filter(|(k, _)| !TRANSPORT_HEADERS.contains(&k.as_str()) && !is_sdk_header(k))
        // Node's fetch asks for `*/*` when the SDK names nothing.
        .filter(|(k, v)| !(k == "accept" && v == "*/*"))
        .collect();
    out.sort();
    out
}

/// What 1.6 adds to the final message (`rawStopReason`, usage `reasoning`,
/// `cost.totalFromProvider`); and the run's timestamp.
fn comparable_message(mut msg: Value) -> Value {
    if let Some(m) = msg.as_object_mut() {
        for key in ["timestamp", "durationMs", "rawStopReason", "diagnostics"] {
            m.shift_remove(key);
        }
    }
    if let Some(usage) = msg.get_mut("usage").and_then(Value::as_object_mut) {
        usage.shift_remove("reasoning");
        if let Some(cost) = usage.get_mut("cost").and_then(Value::as_object_mut) {
            cost.shift_remove("totalFromProvider");
        }
    }
    msg
}

#[tokio::test]
async fn requests_and_replies_match_the_reference_1_6() {
    let cases = cases();
    assert!(cases.len() >= 14, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        let server = Server::start(vec![reply_of(case)]).await;
        // The scripted server answers under `/v1`; these base URLs hold no version.
        let mut model_json = case["model"].clone();
        let base = server.base_url.trim_end_matches("/v1");
        model_json["baseUrl"] = json!(format!("{base}{}", case["model"]["basePath"].as_str().unwrap_or("")));
        let model: Model = serde_json::from_value(model_json).expect("model");
        let context: Context = serde_json::from_value(case["context"].clone()).expect("context");
        let mut stream = stream_simple(&model, &context, options_of(case));
        let mut events = Vec::new();
        let mut last = None;
        while let Some(event) = stream.next_event().await {
            let wire: Value = serde_json::from_str(&event.to_delta_json()).expect("json");
            let mut summary = json!({"type": wire["type"]});
            for key in ["contentIndex", "delta"] {
                if let Some(v) = wire.get(key) {
                    summary[key] = v.clone();
                }
            }
            events.push(summary);
            match event {
                AssistantMessageEvent::Done { message, .. } => last = Some(message),
                AssistantMessageEvent::Error { error, .. } => last = Some(error),
                _ => {}
            }
        }
        let message = last.expect("a terminal event");

        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{name}: one request, no retries");
        let ours = &requests[0];
        let theirs = &case["request"];
        if ours.path != theirs["path"].as_str().unwrap_or_default() {
            failures.push(format!("{name}: path {} vs {}", ours.path, theirs["path"]));
        }
        let their_headers = meaningful_headers(
            theirs["headers"]
                .as_object()
                .expect("headers")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())),
        );
        let our_headers = meaningful_headers(ours.headers.clone());
        if our_headers != their_headers {
            failures.push(format!(
                "{name}: headers\n  ours:   {our_headers:?}\n  theirs: {their_headers:?}"
            ));
        }
        assert!(
            ours.header("user-agent").is_some_and(|ua| ua.starts_with("pi/")),
            "{name}: pi's user agent"
        );
        let (our_body, their_body) = (ours.body.to_string(), theirs["body"].to_string());
        if our_body != their_body {
            failures.push(format!("{name}: body\n  ours:   {our_body}\n  theirs: {their_body}"));
        }

        // Node reports a connection dropped mid-body in its own words; the shape must match.
        let dropped = reply_dropped(case);
        let their_events = case["events"].as_array().cloned().unwrap_or_default();
        let mut ours_message =
            comparable_message(serde_json::to_value(Message::Assistant(Arc::new(message))).expect("json"));
        let mut their_message = comparable_message(case["message"].clone());
        if dropped {
            assert_eq!(ours_message["stopReason"], "error", "{name}");
            for m in [&mut ours_message, &mut their_message] {
                for key in ["errorMessage", "content", "responseId"] {
                    m.as_object_mut().expect("message").shift_remove(key);
                }
            }
        } else if events != their_events {
            failures.push(format!(
                "{name}: events\n  ours:   {}\n  theirs: {}",
                Value::Array(events.clone()),
                Value::Array(their_events)
            ));
        }
        if ours_message != their_message {
            failures.push(format!(
                "{name}: message\n  ours:   {ours_message}\n  theirs: {their_message}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---- Mistral against the project's mock server (`pi_test_support`) ------------------------

mod mistral_on_the_mock {
    use pi_ai::{stream_simple, AssistantMessageEvent, Content, Context, Message, Model, StopReason, StreamOptions};
    use pi_test_support::{Api, Fault, MockServer, Script, Turn};
    use serde_json::json;

    fn model(server: &MockServer) -> Model {
        serde_json::from_value(json!({
            "id": "mock-model", "name": "Mock", "api": "mistral-conversations", "provider": "mock-mistral",
            "baseUrl": server.base_url_for(Api::Mistral), "reasoning": true, "input": ["text"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 128000, "maxTokens": 4096,
        }))
        .expect("model")
    }

    async fn run(server: &MockServer) -> (Vec<&'static str>, pi_ai::AssistantMessage) {
        let context = Context {
            system_prompt: Some("sys".into()),
            messages: vec![Message::user_text("hello")],
            tools: vec![],
        };
        let options = StreamOptions {
            api_key: Some("sk-test".into()),
            ..Default::default()
        };
        let mut stream = stream_simple(&model(server), &context, options);
        let mut names = Vec::new();
        let mut last = None;
        while let Some(event) = stream.next_event().await {
            names.push(event.type_name());
            match event {
                AssistantMessageEvent::Done { message, .. } => last = Some(message),
                AssistantMessageEvent::Error { error, .. } => last = Some(error),
                _ => {}
            }
        }
        (names, last.expect("terminal event"))
    }

    #[tokio::test]
    async fn thinking_text_and_tool_calls_stream_through() {
        let turn = Turn::text("Reading it.")
            .with_thinking("Plan first.")
            .with_tool_call("read", json!({"path": "notes/todo.md"}));
        let server = MockServer::start(Script::sequential(vec![turn])).await.expect("mock");
        let (names, message) = run(&server).await;
        assert_eq!(message.stop_reason, StopReason::ToolUse, "{:?}", message.error_message);
        assert_eq!(names.first(), Some(&"start"));
        assert_eq!(names.last(), Some(&"done"));
        match &message.content[..] {
            [Content::Thinking(t), Content::Text(x), Content::ToolCall(call)] => {
                assert_eq!(t.thinking, "Plan first.");
                assert_eq!(x.text, "Reading it.");
                assert_eq!(call.name, "read");
                assert_eq!(call.arguments, json!({"path": "notes/todo.md"}));
                assert_eq!(call.id.len(), 9, "{}", call.id);
            }
            other => panic!("unexpected content {other:?}"),
        }
        assert!(message.usage.output > 0);
        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].api, Some(Api::Mistral));
        assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
        assert_eq!(
            requests[0].body["prompt_mode"],
            serde_json::Value::Null,
            "thinking was not asked for"
        );
    }

    #[tokio::test]
    async fn http_faults_are_not_retried_and_name_mistral() {
        for (status, expected) in [
            (
                429,
                r#"Mistral API error (429): {"object":"error","message":"Rate limit exceeded""#,
            ),
            (
                500,
                r#"Mistral API error (500): {"object":"error","message":"Internal server error""#,
            ),
        ] {
            let server = MockServer::start(Script::sequential(vec![Turn::fault(Fault::status(status))]))
                .await
                .expect("mock");
            let (names, message) = run(&server).await;
            assert_eq!(names, ["error"]);
            let text = message.error_message.unwrap_or_default();
            assert!(text.starts_with(expected), "{text}");
            assert_eq!(server.requests().len(), 1, "{status} is not retried");
        }
    }

    #[tokio::test]
    async fn a_dropped_stream_and_an_error_finish_are_errors_that_keep_the_text() {
        let words = "alpha beta gamma delta";
        // role chunk, alpha, beta, then the connection drops.
        let dropped = Turn::text(words).with_fault(Fault::drop_after(3));
        let failed = Turn::text(words).with_fault(Fault::error_event_after(3));
        // Both requests carry the same conversation: a queue serves the turns in request order.
        let server = MockServer::start(Script::queue(vec![dropped, failed]))
            .await
            .expect("mock");
        let (_, message) = run(&server).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(message.text(), "alpha beta ");
        let (_, message) = run(&server).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(
            message.error_message.as_deref(),
            Some("Provider stopped with: error (server error)")
        );
        assert_eq!(message.text(), "alpha beta ");
    }
}
