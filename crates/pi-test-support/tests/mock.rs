//! Black-box tests of the mock LLM server: each wire format over real HTTP, faults, recording,
//! the binary, and (when node and the TypeScript pi are installed) the golden comparison.

// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "mock/golden.rs"]
mod golden;

use pi_test_support::{Api, Fault, MockServer, Script, Turn};
use serde_json::{json, Value};

/// One SSE event: optional `event:` name and the `data:` text.
#[derive(Debug)]
struct Sse {
    event: Option<String>,
    data: String,
}

fn parse_sse(text: &str) -> Vec<Sse> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_owned());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push(d);
                }
            }
            Sse {
                event,
                data: data.join("\n"),
            }
        })
        .collect()
}

fn json_of(events: &[Sse]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.data != "[DONE]")
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect()
}

fn path_for(api: Api, model: &str) -> String {
    match api {
        Api::Openai | Api::Mistral => "/chat/completions".into(),
        Api::Responses => "/responses".into(),
        Api::Anthropic => "/v1/messages".into(),
        Api::Google => format!("/models/{model}:streamGenerateContent?alt=sse"),
        Api::Bedrock => format!("/model/{model}/converse-stream"),
    }
}

fn body_for(api: Api, user: &str) -> Value {
    match api {
        Api::Openai | Api::Anthropic | Api::Mistral => json!({"model": "mock-model", "stream": true,
            "messages": [{"role": "user", "content": [{"type": "text", "text": user}]}]}),
        Api::Responses => json!({"model": "mock-model", "stream": true,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": user}]}]}),
        Api::Google => json!({"contents": [{"role": "user", "parts": [{"text": user}]}]}),
        Api::Bedrock => json!({"messages": [{"role": "user", "content": [{"text": user}]}]}),
    }
}

async fn post(server: &MockServer, api: Api, body: &Value) -> reqwest::Response {
    let url = format!("{}{}", server.base_url_for(api), path_for(api, "mock-model"));
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("authorization", "Bearer sk-test")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

async fn stream(server: &MockServer, api: Api, user: &str) -> Vec<Sse> {
    let response = post(server, api, &body_for(api, user)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    parse_sse(&response.text().await.unwrap())
}

fn full_turn() -> Turn {
    Turn::text("Let me read it.")
        .with_thinking("Reading first.")
        .with_tool_call("read", json!({"path": "hello.txt", "limit": 5}))
        .with_tool_call("bash", json!({"command": "ls"}))
}

const ARGS0: &str = r#"{"path": "hello.txt", "limit": 5}"#;

#[tokio::test]
async fn openai_completions_stream_has_the_chunk_grammar() {
    let server = MockServer::start(Script::sequential(vec![full_turn()])).await.unwrap();
    let events = stream(&server, Api::Openai, "hi").await;
    assert_eq!(events.last().unwrap().data, "[DONE]");
    let chunks = json_of(&events);
    assert!(chunks
        .iter()
        .all(|c| c["id"] == "chatcmpl-mock0" && c["object"] == "chat.completion.chunk"));
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let deltas: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"].get(0))
        .map(|c| &c["delta"])
        .collect();
    let join = |key: &str| deltas.iter().filter_map(|d| d[key].as_str()).collect::<String>();
    assert_eq!(join("reasoning_content"), "Reading first.");
    assert_eq!(join("content"), "Let me read it.");
    let calls: Vec<&Value> = deltas.iter().filter_map(|d| d["tool_calls"].get(0)).collect();
    let first: Vec<&&Value> = calls.iter().filter(|c| c.get("id").is_some()).collect();
    assert_eq!(first.len(), 2);
    assert_eq!(
        (first[0]["id"].as_str(), first[0]["function"]["name"].as_str()),
        (Some("call_mock_0_0"), Some("read"))
    );
    let args0: String = calls
        .iter()
        .filter(|c| c["index"] == 0)
        .filter_map(|c| c["function"]["arguments"].as_str())
        .collect();
    assert_eq!(args0, ARGS0);
    assert!(
        calls.iter().filter(|c| c["index"] == 0).count() > 2,
        "arguments arrive in several chunks"
    );
    let finish: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"].get(0))
        .map(|c| &c["finish_reason"])
        .collect();
    assert_eq!(finish.iter().filter(|f| !f.is_null()).count(), 1);
    assert_eq!(*finish.last().unwrap(), "tool_calls");
    let usage = &chunks.last().unwrap()["usage"];
    let body_bytes = server.requests()[0].body_bytes as u64;
    assert_eq!(usage["prompt_tokens"], body_bytes / 4);
    assert_eq!(
        usage["completion_tokens"],
        2 + 4 + 3 + 2,
        "words of thinking and text, argument pieces"
    );
}

#[tokio::test]
async fn anthropic_stream_has_blocks_signature_and_stop_reason() {
    let server = MockServer::start(Script::sequential(vec![full_turn()])).await.unwrap();
    let events = stream(&server, Api::Anthropic, "hi").await;
    let names: Vec<&str> = events.iter().map(|e| e.event.as_deref().unwrap()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(&names[names.len() - 2..], &["message_delta", "message_stop"]);
    assert_eq!(names.iter().filter(|n| **n == "content_block_start").count(), 4);
    let data = json_of(&events);
    assert_eq!(data[0]["message"]["id"], "msg_mock0");
    assert!(data[0]["message"]["usage"]["input_tokens"].as_u64().unwrap() > 0);
    let starts: Vec<&Value> = data.iter().filter(|d| d["type"] == "content_block_start").collect();
    assert_eq!(starts[0]["content_block"]["type"], "thinking");
    assert_eq!(starts[1]["content_block"]["type"], "text");
    assert_eq!(starts[2]["content_block"]["id"], "toolu_mock_0_0");
    let deltas: Vec<&Value> = data
        .iter()
        .filter(|d| d["type"] == "content_block_delta")
        .map(|d| &d["delta"])
        .collect();
    assert!(deltas
        .iter()
        .any(|d| d["type"] == "signature_delta" && d["signature"] == "mocksig0"));
    let json0: String = data
        .iter()
        .filter(|d| d["type"] == "content_block_delta" && d["index"] == 2)
        .filter_map(|d| d["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(json0, ARGS0);
    let delta = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 11);
}

#[tokio::test]
async fn responses_stream_has_items_and_completed_usage() {
    let turn = full_turn();
    let turn = Turn {
        encrypted_content: Some("enc".into()),
        ..turn
    };
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let events = stream(&server, Api::Responses, "hi").await;
    let data = json_of(&events);
    for (e, d) in events.iter().zip(&data) {
        assert_eq!(e.event.as_deref(), d["type"].as_str(), "event line names the type");
    }
    let seq: Vec<u64> = data.iter().map(|d| d["sequence_number"].as_u64().unwrap()).collect();
    assert!(seq.windows(2).all(|w| w[1] == w[0] + 1));
    assert_eq!(data[0]["type"], "response.created");
    assert_eq!(data[0]["response"]["id"], "resp_mock0");
    let done: Vec<&Value> = data
        .iter()
        .filter(|d| d["type"] == "response.output_item.done")
        .map(|d| &d["item"])
        .collect();
    assert_eq!(
        done[0].to_string(),
        r#"{"type":"reasoning","id":"rs_mock0","summary":[{"type":"summary_text","text":"Reading first."}],"encrypted_content":"enc"}"#
    );
    assert_eq!(done[1]["id"], "msg_mock0");
    assert_eq!(done[1]["content"][0]["text"], "Let me read it.");
    assert_eq!(
        (done[2]["id"].as_str(), done[2]["call_id"].as_str()),
        (Some("fc_mock_0_0"), Some("call_mock_0_0"))
    );
    assert_eq!(done[2]["arguments"], ARGS0);
    let thinking: String = data
        .iter()
        .filter(|d| d["type"] == "response.reasoning_summary_text.delta")
        .filter_map(|d| d["delta"].as_str())
        .collect();
    assert_eq!(thinking, "Reading first.");
    let completed = data.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    assert_eq!(completed["response"]["status"], "completed");
    let usage = &completed["response"]["usage"];
    assert_eq!(usage["total_tokens"], usage["input_tokens"].as_u64().unwrap() + 11);
}

#[tokio::test]
async fn google_stream_has_thought_text_and_function_call_parts() {
    let server = MockServer::start(Script::sequential(vec![full_turn()])).await.unwrap();
    let events = stream(&server, Api::Google, "hi").await;
    let data = json_of(&events);
    let parts: Vec<&Value> = data
        .iter()
        .filter_map(|d| d["candidates"][0]["content"]["parts"].as_array())
        .flatten()
        .collect();
    assert_eq!(parts[0]["thought"], true);
    assert_eq!(parts[0]["thoughtSignature"], "mocksig0");
    let text: String = parts
        .iter()
        .filter(|p| p["thought"].is_null())
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(text, "Let me read it.");
    let calls: Vec<&Value> = parts.iter().filter_map(|p| p.get("functionCall")).collect();
    assert_eq!(calls[0]["args"], json!({"path": "hello.txt", "limit": 5}));
    assert_eq!(calls[1]["name"], "bash");
    let last = data.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"]["thoughtsTokenCount"], 2);
    assert_eq!(
        server.requests()[0].path,
        "/v1beta/models/mock-model:streamGenerateContent?alt=sse"
    );
}

#[tokio::test]
async fn http_faults_have_provider_shaped_bodies_and_headers() {
    let server = MockServer::start(Script::sequential(vec![Turn::text("ok")]))
        .await
        .unwrap();
    server.fail_next(1, Fault::rate_limited(1));
    let response = post(&server, Api::Openai, &body_for(Api::Openai, "x")).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");

    server.fail_next(1, Fault::overloaded());
    let response = post(&server, Api::Anthropic, &body_for(Api::Anthropic, "x")).await;
    assert_eq!(response.status(), 529);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["type"], "overloaded_error");

    server.fail_next(1, Fault::status(400).message("bad thing"));
    let response = post(&server, Api::Google, &body_for(Api::Google, "x")).await;
    assert_eq!(response.status(), 400);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(
        (body["error"]["status"].as_str(), body["error"]["message"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("bad thing"))
    );

    // After the queued faults, the script answers again.
    assert_eq!(
        post(&server, Api::Openai, &body_for(Api::Openai, "x")).await.status(),
        200
    );
    let faults: Vec<bool> = server.requests().iter().map(|r| r.fault.is_some()).collect();
    assert_eq!(faults, vec![true, true, true, false]);
}

#[tokio::test]
async fn a_turn_fault_fires_the_given_number_of_times_then_the_turn_is_served() {
    let turn = Turn::text("finally").with_fault(Fault::status(500).times(2));
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let statuses = [
        post(&server, Api::Responses, &body_for(Api::Responses, "x"))
            .await
            .status()
            .as_u16(),
        post(&server, Api::Responses, &body_for(Api::Responses, "x"))
            .await
            .status()
            .as_u16(),
        post(&server, Api::Responses, &body_for(Api::Responses, "x"))
            .await
            .status()
            .as_u16(),
    ];
    assert_eq!(statuses, [500, 500, 200]);
    assert!(server.requests().iter().all(|r| r.turn_index == Some(0)));
}

#[tokio::test]
async fn dropped_connection_is_a_body_error() {
    let server = MockServer::start(Script::sequential(vec![Turn::big(50).with_fault(Fault::drop_after(5))]))
        .await
        .unwrap();
    let mut response = post(&server, Api::Openai, &body_for(Api::Openai, "x")).await;
    assert_eq!(response.status(), 200);
    let mut received = Vec::new();
    let result = loop {
        match response.chunk().await {
            Ok(Some(bytes)) => received.extend_from_slice(&bytes),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    assert!(result.is_err(), "the client must see the connection drop");
    assert_eq!(parse_sse(&String::from_utf8_lossy(&received)).len(), 5);
}

#[tokio::test]
async fn error_events_and_truncation_end_the_stream_early() {
    let script = Script::sequential(vec![Turn::big(20).with_fault(Fault::error_event_after(4))]);
    let server = MockServer::start(script).await.unwrap();
    let events = stream(&server, Api::Anthropic, "x").await;
    let last = events.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("error"));
    let error: Value = serde_json::from_str(&last.data).unwrap();
    assert_eq!(error["error"]["type"], "overloaded_error");
    assert_eq!(events.len(), 5);

    let events = stream(&server, Api::Openai, "x").await;
    let error: Value = serde_json::from_str(&events.last().unwrap().data).unwrap();
    assert!(error["error"]["message"].is_string());

    let script = Script::sequential(vec![Turn::big(20).with_fault(Fault::truncate_after(6))]);
    let server = MockServer::start(script).await.unwrap();
    let events = stream(&server, Api::Anthropic, "x").await;
    assert_eq!(events.len(), 6);
    assert!(events.iter().all(|e| e.event.as_deref() != Some("message_stop")));
}

#[tokio::test]
async fn match_rules_template_and_record_requests_to_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.jsonl");
    let script = Script::from_json(
        r#"{"mode": "match", "rules": [{"match": "use a tool", "turns": [
            {"text": "Running.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "Done."}]}], "default": {"text": "echo: {{last_user}}"}}"#,
    )
    .unwrap();
    let server = MockServer::builder(script).log_file(&log).start().await.unwrap();
    let events = stream(&server, Api::Openai, "hello there").await;
    let text: String = json_of(&events)
        .iter()
        .filter_map(|c| {
            c["choices"]
                .get(0)
                .and_then(|c| c["delta"]["content"].as_str())
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "echo: hello there");
    let body = json!({"model": "m", "messages": [
        {"role": "user", "content": "please use a tool"},
        {"role": "assistant", "content": null, "tool_calls": []},
        {"role": "tool", "tool_call_id": "c", "content": "hi"}]});
    let _ = post(&server, Api::Openai, &body).await.text().await.unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].turn_index, Some(1));
    assert_eq!(requests[1].turn.as_ref().unwrap().text.as_deref(), Some("Done."));
    assert_eq!(requests[0].header("Authorization"), Some("Bearer sk-test"));
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let keys: Vec<&str> = lines[0].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "seq",
            "time",
            "method",
            "path",
            "api",
            "headers",
            "body_bytes",
            "body",
            "turn_index",
            "turn"
        ]
    );
    assert_eq!(lines[0]["turn"], json!({"text": "echo: hello there"}));
    assert_eq!(
        (lines[1]["seq"].as_u64(), lines[1]["api"].as_str()),
        (Some(2), Some("openai"))
    );
}

#[tokio::test]
async fn unknown_routes_get_404_and_keep_alive_serves_more() {
    let server = MockServer::start(Script::echo()).await.unwrap();
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let _ = response.text().await;
    for _ in 0..3 {
        let url = format!("{}/chat/completions", server.base_url());
        let r = client
            .post(url)
            .body(body_for(Api::Openai, "again").to_string())
            .send()
            .await
            .unwrap();
        assert!(r.text().await.unwrap().contains("again"));
    }
    assert_eq!(server.requests().len(), 4);
    server.shutdown().await;
}

#[tokio::test]
async fn the_binary_prints_its_url_and_serves_a_scenario() {
    use tokio::io::AsyncBufReadExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.json");
    std::fs::write(&script, r#"{"mode": "sequential", "turns": [{"text": "from file"}]}"#).unwrap();
    let log = dir.path().join("log.jsonl");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_pi-mock-llm"))
        .arg("--script")
        .arg(&script)
        .arg("--log")
        .arg(&log)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let url = lines.next_line().await.unwrap().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let response = reqwest::Client::new()
        .post(format!("{url}/v1/messages"))
        .body(body_for(Api::Anthropic, "x").to_string())
        .send()
        .await
        .unwrap();
    assert!(response.text().await.unwrap().contains(r#""text":"file""#));
    child.kill().await.unwrap();
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
}
