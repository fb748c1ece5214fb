//! The image and classifier APIs against what the reference pi 1.6 does with them: each case of
//! `tests/golden/task-requests.json` (recorded from 1.6's own API functions by
//! `make-task-requests.mjs`) is replayed through ours against a scripted server with the same
//! replies; the requests (path, headers, body) and the results must be equal.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

#[allow(dead_code)] // the shared scripted server; this file uses part of it
mod server;

use pi_ai::classify::{classify, ClassifierContext};
use pi_ai::images::{generate_images, ImagesContext};
use pi_ai::task_models::TaskModel;
use pi_ai::{Content, StreamOptions};
use serde_json::{json, Value};
use server::{Reply, Server};

/// Headers of the transport, or that Node's fetch and the OpenAI SDK add on their own.
fn meaningful(headers: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = headers
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .filter(|(k, _)| {
            ![
                "host",
                "connection",
                "content-length",
                "accept-language",
                "sec-fetch-mode",
                "accept-encoding",
                "user-agent",
                "transfer-encoding",
            ]
            .contains(&k.as_str())
                && !k.starts_with("x-stainless-")
        })
        .filter(|(k, v)| !(k == "accept" && v == "*/*"))
        .collect();
    out.sort();
    out
}

/// The result less its timestamp, through JSON (key order aside, as maps compare).
fn comparable(mut result: Value) -> Value {
    if let Some(map) = result.as_object_mut() {
        map.shift_remove("timestamp");
    }
    result
}

/// The node server's address in the recorded case, replaced by ours.
fn rebase(value: &Value, theirs: &str, ours: &str) -> Value {
    serde_json::from_str(&value.to_string().replace(theirs, ours)).unwrap()
}

#[tokio::test]
async fn requests_and_results_match_the_reference_1_6() {
    let path = format!("{}/tests/golden/task-requests.json", env!("CARGO_MANIFEST_DIR"));
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() >= 29, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let replies = case["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let body = match &r["body"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Reply::status(r["status"].as_u64().unwrap() as u16, &body)
            })
            .collect();
        let server = Server::start(replies).await;
        let ours_root = server.base_url.trim_end_matches("/v1").to_string();
        let their_root = {
            let base = case["model"]["baseUrl"].as_str().unwrap();
            let port_end = base[7..].find('/').map_or(base.len(), |i| i + 7);
            base[..port_end].to_string()
        };
        let model = TaskModel::from_json(rebase(&case["model"], &their_root, &ours_root)).unwrap();
        let mut options = StreamOptions {
            api_key: Some("key-1".into()),
            max_retries: Some(0),
            ..Default::default()
        };
        if let Some(headers) = case["options"]["headers"].as_object() {
            options.headers = headers
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect();
        }
        let result = if case["fn"] == "images" {
            let input = case["context"]["input"]
                .as_array()
                .unwrap()
                .iter()
                .map(|block| match block["type"].as_str() {
                    Some("text") => Content::text(block["text"].as_str().unwrap()),
                    _ => Content::image(block["data"].as_str().unwrap(), block["mimeType"].as_str().unwrap()),
                })
                .collect();
            serde_json::to_value(generate_images(&model, &ImagesContext { input }, &options).await).unwrap()
        } else {
            let context = ClassifierContext::from_json(&case["context"]).unwrap();
            serde_json::to_value(classify(&model, &context, &options).await).unwrap()
        };

        let ours = server.requests();
        let theirs = case["requests"].as_array().unwrap();
        if ours.len() != theirs.len() {
            failures.push(format!("{name}: {} requests, 1.6 sent {}", ours.len(), theirs.len()));
        }
        for (our, their) in ours.iter().zip(theirs) {
            if our.path != their["path"].as_str().unwrap() {
                failures.push(format!("{name}: path {} vs {}", our.path, their["path"]));
            }
            let their_headers = meaningful(
                their["headers"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())),
            );
            let our_headers = meaningful(our.headers.clone());
            if our_headers != their_headers {
                failures.push(format!(
                    "{name}: headers\n  ours:   {our_headers:?}\n  theirs: {their_headers:?}"
                ));
            }
            let their_body = rebase(&their["body"], &their_root, &ours_root);
            // Compared as text: the key order is part of the request.
            let (our_text, their_text) = (our.body.to_string(), their_body.to_string());
            if our_text != their_text {
                failures.push(format!("{name}: body\n  ours:   {our_text}\n  theirs: {their_text}"));
            }
        }
        let (ours, theirs) = (comparable(result), comparable(case["result"].clone()));
        if ours != theirs {
            failures.push(format!("{name}: result\n  ours:   {ours}\n  theirs: {theirs}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn a_missing_key_or_unknown_api_fails_before_any_request() {
    let server = Server::start(vec![]).await;
    let model = TaskModel::from_json(json!({
        "type": "classifier", "id": "c", "name": "c", "api": "typesafe-system-one", "provider": "typesafe",
        "baseUrl": server.base_url, "input": ["text"], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }))
    .unwrap();
    let context = ClassifierContext::from_json(&json!({"state": 1, "questions": {}})).unwrap();
    let result = classify(&model, &context, &StreamOptions::default()).await;
    assert_eq!(
        result.error_message.as_deref(),
        Some("No API key for provider: typesafe")
    );
    let mut other = model.clone();
    other.api = "unknown-api".into();
    let options = StreamOptions {
        api_key: Some("k".into()),
        ..Default::default()
    };
    let result = classify(&other, &context, &options).await;
    assert_eq!(
        result.error_message.as_deref(),
        Some("No classifier API provider registered for api: unknown-api")
    );
    let image = generate_images(&other, &ImagesContext::default(), &options).await;
    assert_eq!(image.stop_reason, pi_ai::StopReason::Error);
    assert!(server.requests().is_empty());
}

/// The built-in model of `api` pointed at the mock, under the path its base URL has.
fn at_mock(mock: &pi_test_support::MockServer, api: &str, path: &str) -> TaskModel {
    let model = pi_ai::task_models::task_models()
        .iter()
        .find(|m| m.api == api)
        .expect("a built-in model of the api");
    let mut json = model.json.clone();
    json["baseUrl"] = json!(format!("{}{path}", mock.url()));
    TaskModel::from_json(json).unwrap()
}

/// Ask `model` for "a fox".
async fn draw(model: &TaskModel, options: &StreamOptions) -> pi_ai::images::AssistantImages {
    let input = vec![Content::text("a fox")];
    generate_images(model, &ImagesContext { input }, options).await
}

#[tokio::test]
async fn the_mock_speaks_every_task_api_and_its_faults() {
    let mock = pi_test_support::MockServer::start(pi_test_support::Script::echo())
        .await
        .unwrap();
    let options = StreamOptions {
        api_key: Some("key-1".into()),
        max_retries: Some(0),
        ..Default::default()
    };
    let image_model = at_mock(&mock, "openrouter-images", "/api/v1");
    let drawn = draw(&image_model, &options).await;
    assert_eq!(drawn.stop_reason, pi_ai::StopReason::Stop, "{:?}", drawn.error_message);
    assert!(drawn
        .output
        .iter()
        .any(|c| matches!(c, Content::Image(i) if i.data == pi_test_support::MOCK_PNG_BASE64)));

    // A closed connection is retried for images (1.6 goes through the OpenAI SDK there), and
    // reads as Node's reason; a cut reply as V8's words.
    mock.clear_requests();
    mock.fail_next(2, pi_test_support::Fault::drop_after(0));
    let retried = draw(
        &image_model,
        &StreamOptions {
            api_key: Some("key-1".into()),
            max_retries: Some(1),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(
        retried.error_message.as_deref(),
        Some("Connection error.: other side closed (UND_ERR_SOCKET)")
    );
    assert_eq!(mock.requests().len(), 2);
    mock.fail_next(1, pi_test_support::Fault::truncate_after(0));
    let cut = draw(&image_model, &options).await;
    let message = cut.error_message.unwrap_or_default();
    assert!(message.contains(" in JSON at position "), "{message}");

    let context = ClassifierContext::from_json(&json!({
        "state": {"text": "hello"},
        "questions": {
            "tone": {"type": "choice", "instructions": "Tone?", "criteria": {"warm": "friendly", "cold": "distant"}},
            "level": {"type": "score", "instructions": "Level?", "criteria": ["low", "mid", "high"]},
            "spam": {"type": "bool", "instructions": "Spam?", "criteria": {"true": "yes", "false": "no"}},
        },
    }))
    .unwrap();
    for (api, path) in [
        ("typesafe-system-one", "/v1"),
        ("cloudflare-workers-ai-system-one", "/client/v4/accounts/acc/ai"),
        ("openai-decisions", "/v1"),
    ] {
        let model = at_mock(&mock, api, path);
        let result = classify(&model, &context, &options).await;
        assert_eq!(
            result.stop_reason,
            pi_ai::StopReason::Stop,
            "{api}: {:?}",
            result.error_message
        );
        assert_eq!(result.answers["tone"]["choice"], "warm", "{api}");
        assert_eq!(result.answers["level"]["score"], 1.0, "{api}");
        assert_eq!(
            result.answers["spam"],
            json!({"type": "bool", "probability": 0.5}),
            "{api}"
        );
        assert_eq!(result.usage.as_ref().map(|u| u.input), Some(42), "{api}");

        mock.fail_next(1, pi_test_support::Fault::status(503).message("busy"));
        let failed = classify(&model, &context, &options).await;
        assert_eq!(failed.stop_reason, pi_ai::StopReason::Error, "{api}");
        let message = failed.error_message.unwrap_or_default();
        assert!(
            message.contains("(503)") && message.contains("busy"),
            "{api}: {message}"
        );
    }
    // The faults of an unstreamed reply, per API, with 1.6's words (recorded from its
    // classifier functions against a server that closes the connection, and in
    // task-requests.json for the rest). A closed connection is not retried, as 1.6's `fetch`.
    let retrying = StreamOptions {
        api_key: Some("key-1".into()),
        ..Default::default()
    };
    for (api, path, label, envelope) in [
        ("typesafe-system-one", "/v1", "System One API", false),
        (
            "cloudflare-workers-ai-system-one",
            "/client/v4/accounts/acc/ai",
            "Cloudflare Workers AI",
            true,
        ),
        ("openai-decisions", "/v1", "OpenAI Decisions", false),
    ] {
        let model = at_mock(&mock, api, path);
        mock.clear_requests();
        mock.fail_next(1, pi_test_support::Fault::drop_after(0));
        let dropped = classify(&model, &context, &retrying).await;
        assert_eq!(
            dropped.error_message.as_deref(),
            Some("fetch failed: other side closed (UND_ERR_SOCKET)"),
            "{api}"
        );
        assert_eq!(mock.requests().len(), 1, "{api}: a closed connection is not retried");

        mock.fail_next(1, pi_test_support::Fault::truncate_after(0));
        let cut = classify(&model, &context, &options).await;
        let message = cut.error_message.unwrap_or_default();
        assert!(message.contains(" in JSON at position "), "{api}: {message}");

        mock.fail_next(1, pi_test_support::Fault::error_event_after(0).message("model down"));
        let reported = classify(&model, &context, &options).await;
        let expected = if envelope {
            format!("{label} error: model down")
        } else {
            format!("{label} returned an unexpected response")
        };
        assert_eq!(reported.error_message, Some(expected), "{api}");
        assert!(reported.answers.is_empty(), "{api}");
    }
    mock.clear_requests();

    // No key: the mock refuses, but the client stops before sending.
    let keyless = classify(
        &at_mock(&mock, "openai-decisions", "/v1"),
        &context,
        &StreamOptions::default(),
    )
    .await;
    assert_eq!(
        keyless.error_message.as_deref(),
        Some("No API key for provider: openai")
    );
    assert!(mock.requests().is_empty(), "the keyless call sent nothing");
}
