//! The Codex (ChatGPT) backend through the binary, beside pi 1.6: over SSE the request body
//! goes zstd-compressed, and over the WebSocket the session's socket is closed with a normal
//! close (`debug_close`) when the process ends.

use base64::Engine;
use pi_test_support::{Script, Turn};
use serde_json::json;

use crate::harness::{Fixture, Mock, Pi};

fn token() -> String {
    let b64 = |v: serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.sig",
        b64(json!({"alg": "none"})),
        b64(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-e2e"}}))
    )
}

/// One prompt to a Codex model at the mock with `transport`; what the mock saw.
fn run(command: Option<std::process::Command>, transport: &str) -> (Mock, Vec<Option<(u16, String)>>) {
    let mock = Mock::start(Script::sequential(vec![Turn::text("hello from codex")]));
    let fx = Fixture::new(&mock);
    let models = json!({"providers": {"codex-mock": {
        "baseUrl": mock.server.url(), "api": "openai-codex-responses", "apiKey": token(),
        "models": [{"id": "gpt-c", "reasoning": true, "input": ["text"]}],
    }}});
    fx.agent.write("models.json", models.to_string()).unwrap();
    fx.agent
        .write("settings.json", json!({"transport": transport}).to_string())
        .unwrap();
    let args = ["--model", "codex-mock/gpt-c", "-p", "hi"];
    let run = match command {
        Some(mut cmd) => {
            cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
            Pi::from_command(cmd).run()
        }
        None => fx.pi(args).run(),
    };
    run.assert_ok();
    assert!(run.stdout.contains("hello from codex"), "{run:?}");
    // The close frame may land just after the process ends.
    let mut closes = mock.server.websocket_closes();
    for _ in 0..100 {
        if !closes.is_empty() || transport == "sse" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        closes = mock.server.websocket_closes();
    }
    (mock, closes)
}

#[test]
fn sse_bodies_are_zstd_and_sockets_close_at_exit_as_in_1_6() {
    let (mock, closes) = run(None, "sse");
    let request = mock.requests().pop().expect("a request");
    assert_eq!(request.header("content-encoding"), Some("zstd"));
    assert_eq!(request.body["model"], "gpt-c", "the mock read the compressed body");
    assert!(closes.is_empty());

    let (mock, closes) = run(None, "websocket-cached");
    assert_eq!(mock.server.websocket_connections(), 1);
    assert_eq!(closes, vec![Some((1000, "debug_close".to_string()))]);

    let Some(reference) = pi_test_support::reference_pi("sse_bodies_are_zstd_and_sockets_close_at_exit_as_in_1_6")
    else {
        return;
    };
    let (theirs, _) = run(Some(reference.command()), "sse");
    let their_request = theirs.requests().pop().expect("a request");
    assert_eq!(their_request.header("content-encoding"), Some("zstd"));
    // The prompts' words differ (ours are our own); the fields do not.
    let keys = |body: &serde_json::Value| body.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>());
    assert_eq!(keys(&their_request.body), keys(&request.body));
    let (theirs, their_closes) = run(Some(reference.command()), "websocket-cached");
    assert_eq!(theirs.server.websocket_connections(), 1);
    assert_eq!(their_closes, closes);
}
