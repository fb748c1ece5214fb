//! Seeded fuzzing of each provider's stream reader through a real HTTP response: valid streams
//! (the recorded 1.6 replies, and hand-written Anthropic and Google ones) mutated and cut at
//! random. Every stream ends in exactly one `done` or `error` event, within a deadline, and the
//! events rebuild the final message's content.
//! `PI_FUZZ_ITERS=20000 cargo test --release -p pi-ai --test providers stream_fuzz` runs longer.

use std::time::Duration;

use pi_ai::{stream_simple, AssistantMessageEvent, PartialMessage, StopReason};
use pi_test_support::fuzz::{self, Rng};
use serde_json::Value;

use super::server::{Ending, Reply, Server};
use super::{context, model, options};

fn anthropic_seed() -> Vec<String> {
    [
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"mock-model","content":[],"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":2}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me see."}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Reading it."}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":25}}"#,
        r#"{"type":"message_stop"}"#,
    ]
    .iter()
    .map(|data| {
        let kind = serde_json::from_str::<Value>(data).expect("seed")["type"].as_str().unwrap_or("").to_string();
        format!("event: {kind}\ndata: {data}\n\n")
    })
    .collect()
}

fn google_seed() -> Vec<String> {
    [
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Thinking","thought":true,"thoughtSignature":"c2ln"}]}}],"modelVersion":"mock-model"}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Reading it."}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read","args":{"path":"a.txt"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":2,"totalTokenCount":17}}"#,
    ]
    .iter()
    .map(|data| format!("data: {data}\r\n\r\n"))
    .collect()
}

/// (api, stream) pairs the mutations start from.
fn seeds() -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/stream-replies.json");
    let recorded: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("golden replies")).expect("JSON");
    let mut out: Vec<(String, String)> = recorded
        .iter()
        .filter_map(|case| {
            let api = case["api"].as_str()?.to_string();
            let sse: String = case["sse"].as_array()?.iter().filter_map(Value::as_str).collect();
            Some((api, sse))
        })
        .collect();
    out.push(("anthropic-messages".into(), anthropic_seed().concat()));
    out.push(("google-generative-ai".into(), google_seed().concat()));
    out
}

/// What a reader sees of content blocks: kind, text and tool calls, without signatures.
fn visible(content: &[pi_ai::Content]) -> Vec<String> {
    content
        .iter()
        .map(|c| match c {
            pi_ai::Content::Text(t) => format!("text:{}", t.text),
            pi_ai::Content::Thinking(t) => format!("thinking:{}", t.thinking),
            pi_ai::Content::ToolCall(t) => format!("call:{}:{}:{}", t.id, t.name, t.arguments),
            pi_ai::Content::Image(i) => format!("image:{}", i.mime_type),
        })
        .collect()
}

/// Split `body` into 1 to 4 chunks at random points (char boundaries).
fn chunked(rng: &mut Rng, body: &str) -> Vec<String> {
    let mut cuts: Vec<usize> = (0..rng.below(4)).map(|_| rng.below(body.len() + 1)).collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts {
        let mut cut = cut.max(start);
        while !body.is_char_boundary(cut) {
            cut += 1;
        }
        out.push(body[start..cut].to_string());
        start = cut;
    }
    out.push(body[start..].to_string());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_every_provider_stream_ends_once_and_rebuilds() {
    let seeds = seeds();
    let apis: Vec<&str> = {
        let mut a: Vec<&str> = seeds.iter().map(|(api, _)| api.as_str()).collect();
        a.dedup();
        a
    };
    assert!(apis.len() >= 4, "seeds for every API: {apis:?}");
    let mut rng = Rng::new(0x5eed_0000_0000_0b01);
    let iters = fuzz::iters(400);
    let mut replies = Vec::with_capacity(iters);
    let mut cases = Vec::with_capacity(iters);
    for i in 0..iters {
        let (api, seed) = &seeds[i % seeds.len()];
        // One in eight unchanged, so the valid paths stay covered under every chunking.
        let bytes = if rng.chance(8) {
            seed.as_bytes().to_vec()
        } else {
            fuzz::mutated(&mut rng, seed.as_bytes())
        };
        let body = String::from_utf8_lossy(&bytes).into_owned();
        let ending = match rng.below(10) {
            0 => Ending::Drop,
            _ => Ending::Complete,
        };
        replies.push(Reply::sse(chunked(&mut rng, &body)).ending(ending));
        cases.push((api.clone(), body));
    }
    let server = Server::start(replies).await;
    for (api, body) in cases {
        let mut opts = options();
        // A bad stream is never retried: each request takes exactly one scripted reply.
        opts.max_retries = Some(0);
        let stream = stream_simple(&model(&api, &server.base_url), &context(), opts);
        let events = tokio::time::timeout(Duration::from_secs(10), async move {
            let mut stream = stream;
            let mut events = Vec::new();
            while let Some(e) = stream.next_event().await {
                events.push(e);
            }
            events
        })
        .await
        .unwrap_or_else(|_| panic!("{api}: the stream did not end within 10 s for {body:?}"));
        let terminal = events.iter().filter(|e| e.is_terminal()).count();
        assert_eq!(terminal, 1, "{api}: {terminal} terminal events for {body:?}");
        assert!(
            events.last().is_some_and(AssistantMessageEvent::is_terminal),
            "{api}: events after the end for {body:?}"
        );
        let (final_message, ok) = match events.last() {
            Some(AssistantMessageEvent::Done { message, .. }) => (message, true),
            Some(AssistantMessageEvent::Error { error, .. }) => (error, false),
            _ => unreachable!("checked above"),
        };
        if ok {
            assert!(
                !matches!(final_message.stop_reason, StopReason::Error | StopReason::Aborted),
                "{api}: done with an error stop reason for {body:?}"
            );
            // What a consumer rebuilt from the deltas is what the final message holds.
            let mut partial = PartialMessage::new();
            for e in events.iter().filter(|e| !e.is_terminal()) {
                partial.apply(e);
            }
            // Signatures travel only in the final message; the visible parts must agree.
            assert_eq!(
                visible(&partial.snapshot().content),
                visible(&final_message.content),
                "{api}: rebuilt content for {body:?}"
            );
        } else {
            assert!(
                final_message.error_message.as_deref().is_some_and(|m| !m.is_empty()),
                "{api}: an error without a message for {body:?}"
            );
        }
    }
}
