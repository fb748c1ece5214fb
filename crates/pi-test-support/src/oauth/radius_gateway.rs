//! The mock's Radius gateway beyond sign-in: `GET /v1/config` (the account's model list and
//! the base URL its models are served at) and `POST /v1/messages` (the `pi-messages` API,
//! answered with an echo of the last user text), both for a bearer token the mock issued
//! (a Radius sign-in's access token) or [`MOCK_RADIUS_KEY`].

use serde_json::{json, Value};
use std::sync::Mutex;

use super::{json_answer, lock, Answer, OAuthRequest, State};

/// The API key the mock gateway accepts besides the access tokens it issued.
pub const MOCK_RADIUS_KEY: &str = "radius-mock-key";

/// The models `/v1/config` lists: two valid ones and one a client must drop (fields missing).
pub fn gateway_models() -> Value {
    json!([
        {"id": "gw-fast", "name": "Gateway Fast", "reasoning": false, "input": ["text"],
         "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0},
         "contextWindow": 200000, "maxTokens": 32000},
        {"id": "gw-deep", "name": "Gateway Deep", "reasoning": true, "input": ["text", "image"],
         "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
         "contextWindow": 1000000, "maxTokens": 64000,
         "thinkingLevelMap": {"xhigh": null}},
        {"id": "gw-broken", "name": "Broken (no limits)"}
    ])
}

fn bearer(request: &OAuthRequest) -> &str {
    request
        .header("authorization")
        .and_then(|a| a.strip_prefix("Bearer "))
        .unwrap_or_default()
}

fn authorized(state: &Mutex<State>, request: &OAuthRequest) -> bool {
    let token = bearer(request);
    token == MOCK_RADIUS_KEY || lock(state).access_tokens.contains(token)
}

fn unauthorized() -> Answer {
    json_answer(
        401,
        json!({"error": {"message": "Invalid or missing gateway token", "code": "unauthorized"}}),
    )
}

/// The text of the last user message of a pi-messages context.
fn last_user_text(body: &Value) -> String {
    let messages = body["context"]["messages"].as_array().cloned().unwrap_or_default();
    let Some(user) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &user["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// pi's assistant-message events for one text reply, as SSE.
fn echo_events(body: &Value) -> String {
    let text = format!("echo: {}", last_user_text(body));
    let usage = json!({"input": 10, "output": 3, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 13,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let events = [
        json!({"type": "start"}),
        json!({"type": "text_start", "contentIndex": 0}),
        json!({"type": "text_delta", "contentIndex": 0, "delta": text}),
        json!({"type": "text_end", "contentIndex": 0, "content": text}),
        json!({"type": "done", "reason": "stop", "usage": usage, "responseId": "gw-response-1"}),
    ];
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

fn refused_with(state: &Mutex<State>) -> Option<u16> {
    lock(state).radius_config_status
}

/// The answer to `request` if it is one of the gateway's routes.
pub(super) fn answer(state: &Mutex<State>, request: &OAuthRequest) -> Option<Answer> {
    match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/v1/config") => Some(if let Some(status) = refused_with(state) {
            json_answer(status, json!({"error": {"message": "gateway config unavailable"}}))
        } else if authorized(state, request) {
            let origin = lock(state).origin.clone();
            json_answer(
                200,
                json!({"baseUrl": format!("{origin}/v1"), "models": gateway_models()}),
            )
        } else {
            unauthorized()
        }),
        ("POST", "/v1/messages") => Some(if authorized(state, request) {
            let body: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
            (
                200,
                vec![("content-type", "text/event-stream".into())],
                echo_events(&body),
            )
        } else {
            unauthorized()
        }),
        _ => None,
    }
}
