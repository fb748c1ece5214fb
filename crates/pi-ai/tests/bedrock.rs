//! Amazon Bedrock's ConverseStream against what pi 1.6 sent and made of the reply:
//! `tests/golden/bedrock-requests.json` comes from `tests/golden/make-bedrock-requests.mjs`,
//! which runs 1.6's pi-ai (the AWS SDK underneath) against a recording server answering in the
//! binary event-stream framing. For each case the same frames go through our provider; path,
//! headers, body (byte for byte), the number of attempts, the events and the final message must
//! match, faults included (HTTP 429/400/500, exceptions inside the stream, a stop reason of
//! `guardrail_intervened`, a stream without one, a dropped connection). Our SigV4 signer must
//! reproduce the signature the SDK put on each of 1.6's requests.
//!
//! The provider reads the process environment (AWS keys, region, bearer token), so every case
//! runs in one test, one after the other.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

#[allow(dead_code)] // the scripted server serves several test binaries; this one uses a part
mod server;

use base64::Engine;
use pi_ai::providers::bedrock::sigv4::{self, AwsCredentials, SigningInput};
use pi_ai::{
    stream_simple, AssistantMessageEvent, CacheRetention, Context, Message, Model, StreamOptions, ThinkingLevel,
};
use serde_json::{json, Value};
use server::{Ending, Reply, Server};

use std::sync::Arc;

/// Headers whose values differ per run or per HTTP stack; their presence is still compared.
const VOLATILE: &[&str] = &[
    "host",
    "content-length",
    "user-agent",
    "x-amz-user-agent",
    "amz-sdk-invocation-id",
    "x-amz-date",
];
/// Headers one HTTP stack adds and the other not.
const TRANSPORT: &[&str] = &["connection", "accept", "accept-encoding", "transfer-encoding"];

fn cases() -> Vec<Value> {
    let path = format!("{}/tests/golden/bedrock-requests.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("cases")).expect("json")
}

fn reply_of(case: &Value) -> Reply {
    let reply = &case["reply"];
    if let Some(status) = reply["status"].as_u64() {
        let mut r = Reply::status(status as u16, reply["body"].as_str().unwrap_or(""));
        for (name, value) in reply["headers"].as_object().into_iter().flatten() {
            r = r.with_header(name, value.as_str().unwrap_or_default());
        }
        return r;
    }
    let frames = reply["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| {
            base64::engine::general_purpose::STANDARD
                .decode(f.as_str().unwrap())
                .unwrap()
        })
        .collect();
    let r = Reply::bytes("application/vnd.amazon.eventstream", frames).with_header("x-amzn-requestid", "req-1");
    if reply["drop"].as_bool() == Some(true) {
        r.ending(Ending::Drop)
    } else {
        r
    }
}

fn options_of(case: &Value) -> StreamOptions {
    let o = &case["options"];
    StreamOptions {
        // Ambient AWS credentials: what pi's key resolution reports for Bedrock.
        api_key: Some("<authenticated>".into()),
        reasoning: o["reasoning"].as_str().and_then(ThinkingLevel::parse),
        session_id: o["sessionId"].as_str().map(String::from),
        cache_retention: o["cacheRetention"]
            .as_str()
            .and_then(CacheRetention::parse)
            .unwrap_or_default(),
        temperature: o["temperature"].as_f64(),
        max_tokens: o["maxTokens"].as_u64(),
        ..Default::default()
    }
}

fn set_env(case: &Value, home: &std::path::Path) {
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            std::env::remove_var(k);
        }
    }
    std::env::remove_var("PI_CACHE_RETENTION");
    std::env::set_var("AWS_CONFIG_FILE", home.join("config"));
    std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", home.join("credentials"));
    for (k, v) in case["env"].as_object().into_iter().flatten() {
        if let Some(v) = v.as_str().filter(|v| !v.is_empty()) {
            std::env::set_var(k, v);
        }
    }
}

fn header_of<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// Names and (where stable) values, sorted.
fn comparable_headers(headers: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .filter(|(k, _)| !TRANSPORT.contains(&k.as_str()))
        .map(|(k, v)| {
            let signed = k == "authorization" && v.starts_with("AWS4-");
            let stable = !(VOLATILE.contains(&k.as_str()) || signed);
            let v = if stable { v } else { String::from("*") };
            (k, v)
        })
        .collect();
    out.sort();
    out
}

/// Credential scope and signed header names of a SigV4 authorization, with the scope's date
/// left out: the cases were recorded on one day and run on another, and the signature
/// differs with the date (it is checked over 1.6's own request instead).
fn signature_shape(authorization: &str) -> String {
    let without_signature = authorization.split(", Signature=").next().unwrap_or_default();
    without_signature
        .split('/')
        .map(|part| {
            if part.len() == 8 && part.bytes().all(|b| b.is_ascii_digit()) {
                "<date>"
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn the_signature_shape_ignores_the_scope_date() {
    let on = |date: &str| {
        format!("AWS4-HMAC-SHA256 Credential=AKID/{date}/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=ab")
    };
    assert_eq!(signature_shape(&on("20261201")), signature_shape(&on("20261202")));
    assert_ne!(
        signature_shape(&on("20261201")),
        signature_shape(&on("20261201").replace("us-east-1", "eu-west-1"))
    );
}

/// Recompute 1.6's signature over its own request with our signer.
fn check_reference_signature(case: &Value, failures: &mut Vec<String>) {
    let name = case["name"].as_str().unwrap_or("?");
    let request = &case["request"];
    let headers: Vec<(String, String)> = request["headers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    let Some(authorization) = header_of(&headers, "authorization").filter(|a| a.starts_with("AWS4-")) else {
        return;
    };
    let signed: Vec<&str> = authorization
        .split("SignedHeaders=")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .unwrap()
        .split(';')
        .collect();
    let signed_headers: Vec<(String, String)> = headers
        .iter()
        .filter(|(k, _)| signed.contains(&k.as_str()))
        .cloned()
        .collect();
    let scope: Vec<&str> = authorization
        .split("Credential=")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .split('/')
        .collect();
    let env = case["env"].as_object().unwrap();
    let creds = AwsCredentials {
        access_key_id: scope[0].to_string(),
        secret_access_key: env["AWS_SECRET_ACCESS_KEY"].as_str().unwrap().to_string(),
        session_token: env.get("AWS_SESSION_TOKEN").and_then(Value::as_str).map(String::from),
    };
    let raw = request["rawBody"].as_str().unwrap();
    let input = SigningInput {
        method: "POST",
        path: request["path"].as_str().unwrap(),
        headers: &signed_headers,
        body: raw.as_bytes(),
        region: scope[2],
        service: scope[3],
        amz_date: header_of(&headers, "x-amz-date").unwrap(),
    };
    let ours = sigv4::authorization(&input, &creds);
    if ours != authorization {
        failures.push(format!(
            "{name}: signature\n  ours:   {ours}\n  theirs: {authorization}"
        ));
    }
}

/// What 1.6 adds to the final message, and the run's timestamp.
fn comparable_message(mut msg: Value) -> Value {
    if let Some(m) = msg.as_object_mut() {
        for key in ["timestamp", "durationMs", "rawStopReason", "diagnostics"] {
            m.shift_remove(key);
        }
    }
    if let Some(cost) = msg.pointer_mut("/usage/cost").and_then(Value::as_object_mut) {
        cost.shift_remove("totalFromProvider");
    }
    msg
}

#[tokio::test]
async fn requests_and_replies_match_the_reference_1_6() {
    let cases = cases();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let home = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        check_reference_signature(case, &mut failures);
        set_env(case, home.path());
        let attempts = case["attempts"].as_u64().unwrap() as usize;
        let server = Server::start(vec![reply_of(case); attempts]).await;
        let mut model_json = case["model"].clone();
        model_json["baseUrl"] = json!(server.base_url.trim_end_matches("/v1"));
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
        if requests.len() != attempts {
            failures.push(format!("{name}: {} attempts, 1.6 made {attempts}", requests.len()));
            continue;
        }
        let ours = requests.last().unwrap();
        let theirs = &case["request"];
        if ours.path != theirs["path"].as_str().unwrap_or_default() {
            failures.push(format!("{name}: path {} vs {}", ours.path, theirs["path"]));
        }
        let their_headers: Vec<(String, String)> = theirs["headers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        let (a, b) = (comparable_headers(&ours.headers), comparable_headers(&their_headers));
        if a != b {
            failures.push(format!("{name}: headers\n  ours:   {a:?}\n  theirs: {b:?}"));
        }
        let our_auth = ours.header("authorization").unwrap_or_default();
        let their_auth = header_of(&their_headers, "authorization").unwrap_or_default();
        if signature_shape(our_auth) != signature_shape(their_auth) {
            failures.push(format!(
                "{name}: authorization\n  ours:   {our_auth}\n  theirs: {their_auth}"
            ));
        }
        let (our_body, their_body) = (ours.body.to_string(), theirs["body"].to_string());
        if our_body != their_body {
            failures.push(format!("{name}: body\n  ours:   {our_body}\n  theirs: {their_body}"));
        }
        // The payload hash we sent is the hash of the body the server got.
        if let Some(hash) = ours.header("x-amz-content-sha256") {
            assert_eq!(hash, sigv4::sha256_hex(our_body.as_bytes()), "{name}");
        }

        let our_message =
            comparable_message(serde_json::to_value(Message::Assistant(Arc::new(message))).expect("json"));
        let their_message = comparable_message(case["message"].clone());
        let their_events = case["events"].as_array().cloned().unwrap_or_default();
        if events != their_events {
            failures.push(format!(
                "{name}: events\n  ours:   {}\n  theirs: {}",
                Value::Array(events.clone()),
                Value::Array(their_events)
            ));
        }
        if our_message != their_message {
            failures.push(format!(
                "{name}: message\n  ours:   {our_message}\n  theirs: {their_message}"
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

// ---- Bedrock against the project's mock server (`pi_test_support`) ------------------------
//
// A stored bearer token authenticates these calls, so the environment the test above sets does
// not reach them (a loopback base URL is always called as it is).

mod bedrock_on_the_mock {
    use pi_ai::{stream_simple, AssistantMessageEvent, Content, Context, Message, Model, StopReason, StreamOptions};
    use pi_test_support::{Api, Fault, MockServer, Script, Turn};
    use serde_json::json;

    fn model(server: &MockServer) -> Model {
        serde_json::from_value(json!({
            "id": "anthropic.claude-sonnet-4-5-20250929-v1:0", "name": "Claude Sonnet 4.5",
            "api": "bedrock-converse-stream", "provider": "amazon-bedrock",
            "baseUrl": server.base_url_for(Api::Bedrock), "reasoning": true, "input": ["text"],
            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
            "contextWindow": 200000, "maxTokens": 64000,
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
            api_key: Some("bedrock-key".into()),
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
    async fn thinking_text_and_tool_calls_stream_through_the_event_stream() {
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
                assert_eq!(t.thinking_signature.as_deref(), Some("mock-signature-0"));
                assert_eq!(x.text, "Reading it.");
                assert_eq!(call.name, "read");
                assert_eq!(call.arguments, json!({"path": "notes/todo.md"}));
            }
            other => panic!("unexpected content {other:?}"),
        }
        assert!(message.usage.output > 0 && message.usage.cost.total > 0.0);
        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].api, Some(Api::Bedrock));
        assert_eq!(
            requests[0].path,
            "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
        );
        assert_eq!(requests[0].header("authorization"), Some("Bearer bedrock-key"));
        assert_eq!(requests[0].body["messages"][0]["content"][0]["text"], "hello");
    }

    #[tokio::test]
    async fn throttling_and_server_errors_are_tried_three_times_and_validation_once() {
        for (status, attempts, expected) in [
            (
                429,
                3,
                "Throttling error: Too many requests, please wait before trying again.",
            ),
            (
                500,
                3,
                "Internal server error: The server encountered an internal error.",
            ),
            (400, 1, "Validation error: Malformed input request"),
            (
                403,
                1,
                "AccessDeniedException: The security token included in the request is invalid.",
            ),
        ] {
            let server = MockServer::start(Script::sequential(vec![Turn::fault(Fault::status(status))]))
                .await
                .expect("mock");
            let (names, message) = run(&server).await;
            assert_eq!(names, ["error"], "{status}");
            assert_eq!(message.error_message.as_deref(), Some(expected), "{status}");
            assert_eq!(server.requests().len(), attempts, "{status}");
        }
    }

    #[tokio::test]
    async fn a_dropped_stream_and_an_exception_frame_are_errors_that_keep_the_text() {
        let words = "alpha beta gamma delta";
        // messageStart, alpha, beta, then the connection drops / an exception frame comes.
        let dropped = Turn::text(words).with_fault(Fault::drop_after(3));
        let failed = Turn::text(words).with_fault(Fault::error_event_after(3));
        let server = MockServer::start(Script::queue(vec![dropped, failed]))
            .await
            .expect("mock");
        let (_, message) = run(&server).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(message.text(), "alpha beta ");
        let (names, message) = run(&server).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(
            message.error_message.as_deref(),
            Some("Internal server error: The server encountered an internal error.")
        );
        assert_eq!(message.text(), "alpha beta ");
        assert_eq!(names.last(), Some(&"error"));
    }
}
