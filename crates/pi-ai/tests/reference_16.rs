//! Stream shapes against the reference pi 1.6, live: `tests/golden/make-stream-replies.mjs`
//! feeds scripted SSE replies to 1.6's own pi-ai (`streamSimple`), and the same replies through
//! our providers must give the same event sequence (type, content index, delta) and the same
//! final message, less what 1.6 adds or prices its own way: `durationMs`, `rawStopReason`,
//! usage `reasoning`, `cost` (the recorded 0.73.1 replies in `providers.rs` still check the
//! cost). Needs the reference pi (`pi_test_support::reference_pi`).
//!
//! The cases where our providers still parse as 0.73.1 did are listed in [`STILL_0_73`]; every
//! other case must match 1.6.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

#[allow(dead_code)] // the scripted server serves several test binaries; this one uses a part
mod server;

use pi_ai::{stream_simple, AssistantMessage, AssistantMessageEvent, Context, Message, Model, StreamOptions};
use serde_json::{json, Value};
use server::{Reply, Server};
use std::sync::Arc;

/// Cases where 1.6 parses differently from 0.73.1 and our providers still follow 0.73.1 (the
/// recorded replies in `providers.rs` hold them to that): (case, what 1.6 does). None today.
const STILL_0_73: &[(&str, &str)] = &[];

/// 1.6's replies to the generator's scripted streams.
fn reference_replies() -> Option<Vec<Value>> {
    let reference = pi_test_support::reference_pi("parses scripted streams with 1.6's pi-ai")?;
    let out = tempfile::NamedTempFile::new().expect("temp file");
    let script = format!("{}/tests/golden/make-stream-replies.mjs", env!("CARGO_MANIFEST_DIR"));
    let run = std::process::Command::new(reference.node())
        .arg(script)
        .arg(out.path())
        .env("PI_REFERENCE_DIR", &reference.dir)
        .output()
        .expect("run node");
    assert!(
        run.status.success(),
        "make-stream-replies.mjs: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(out.path()).expect("replies");
    Some(serde_json::from_str(&text).expect("replies are JSON"))
}

async fn collect(model: &Model) -> (Vec<AssistantMessageEvent>, AssistantMessage) {
    let ctx = Context {
        system_prompt: None,
        messages: vec![Message::user_text("hi")],
        tools: vec![],
    };
    let options = StreamOptions {
        api_key: Some("k".into()),
        ..Default::default()
    };
    let mut stream = stream_simple(model, &ctx, options);
    let mut events = Vec::new();
    while let Some(e) = stream.next_event().await {
        let done = e.is_terminal();
        events.push(e);
        if done {
            break;
        }
    }
    let last = match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => message.clone(),
        Some(AssistantMessageEvent::Error { error, .. }) => error.clone(),
        other => panic!("stream ended without a terminal event: {other:?}"),
    };
    (events, last)
}

/// What 1.6 adds to the final message, or prices its own way; and the run's timestamp.
fn comparable_message(mut msg: Value) -> Value {
    if let Some(m) = msg.as_object_mut() {
        for key in ["timestamp", "durationMs", "rawStopReason"] {
            m.shift_remove(key);
        }
    }
    if let Some(usage) = msg.get_mut("usage").and_then(Value::as_object_mut) {
        usage.shift_remove("reasoning");
        usage.shift_remove("cost");
    }
    msg
}

#[tokio::test]
async fn stream_shapes_match_the_reference_1_6() {
    let Some(cases) = reference_replies() else { return };
    assert!(cases.len() > 20, "{} cases", cases.len());
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        if STILL_0_73.iter().any(|(known, _)| *known == name) {
            continue;
        }
        compared += 1;
        let chunks: Vec<String> = case["sse"]
            .as_array()
            .expect("sse")
            .iter()
            .map(|c| c.as_str().unwrap_or_default().to_string())
            .collect();
        let server = Server::start(vec![Reply::sse(chunks)]).await;
        let mut model: Model = serde_json::from_value(case["model"].clone()).expect("model");
        model.base_url = server.base_url.clone();
        let (events, msg) = collect(&model).await;
        let ours_events: Vec<Value> = events
            .iter()
            .map(|e| {
                let wire: Value = serde_json::from_str(&e.to_delta_json()).expect("json");
                let mut p = json!({"type": wire["type"]});
                for key in ["contentIndex", "delta"] {
                    if let Some(v) = wire.get(key) {
                        p[key] = v.clone();
                    }
                }
                p
            })
            .collect();
        let theirs_events = case["events"].as_array().cloned().unwrap_or_default();
        if ours_events != theirs_events {
            failures.push(format!(
                "{name}: events\n  ours:   {}\n  theirs: {}",
                Value::Array(ours_events),
                Value::Array(theirs_events)
            ));
        }
        let ours = comparable_message(serde_json::to_value(Message::Assistant(Arc::new(msg))).expect("json"));
        let theirs = comparable_message(case["message"].clone());
        if ours != theirs {
            failures.push(format!("{name}: message\n  ours:   {ours}\n  theirs: {theirs}"));
        }
    }
    assert!(compared > 15, "only {compared} of {} cases compared", cases.len());
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
