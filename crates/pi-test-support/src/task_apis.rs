//! The image and classifier APIs of pi 1.6, answered without a script: OpenRouter image
//! generation (Chat Completions with `modalities` holding `image` and no streaming) gets one
//! small PNG and a caption; System One (`…/systemone`), Cloudflare Workers AI (`…/ai/run`, in
//! Cloudflare's envelope) and OpenAI Decisions (`…/decisions`) get one answer per question:
//! the first choice, the middle score level, a `bool` (`noul` / `predicate`) of 0.5. A request
//! without a bearer token gets 401; the server's pending faults (`fail_next`) apply as an
//! unstreamed reply takes them (see [`answer`]). Requests are recorded like the others, with
//! no API.

use serde_json::{json, Map, Value};

use crate::http::HttpRequest;
use crate::script::{Fault, FaultKind};

/// A 1×1 transparent PNG.
pub const MOCK_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// Which task API a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskApi {
    Images,
    SystemOne,
    Cloudflare,
    Decisions,
}

/// Whether a request can be one of these APIs, judged without parsing its body: a chat
/// request is one only when it names `modalities`, so a resumed conversation of megabytes is
/// not parsed twice to find out.
pub(crate) fn may_be_task(request: &HttpRequest) -> bool {
    let path = request.target.split('?').next().unwrap_or_default();
    request.method == "POST"
        && (path.ends_with("/systemone")
            || path.ends_with("/ai/run")
            || path.ends_with("/decisions")
            || (path.ends_with("/chat/completions")
                && memchr::memmem::find(&request.body, b"\"modalities\"").is_some()))
}

impl TaskApi {
    pub(crate) fn of(request: &HttpRequest, body: &Value) -> Option<TaskApi> {
        if request.method != "POST" {
            return None;
        }
        let path = request.target.split('?').next().unwrap_or_default();
        let wants_images = body
            .get("modalities")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|v| v == "image"));
        if path.ends_with("/chat/completions") && wants_images && body.get("stream") != Some(&Value::Bool(true)) {
            Some(TaskApi::Images)
        } else if path.ends_with("/systemone") {
            Some(TaskApi::SystemOne)
        } else if path.ends_with("/ai/run") {
            Some(TaskApi::Cloudflare)
        } else if path.ends_with("/decisions") {
            Some(TaskApi::Decisions)
        } else {
            None
        }
    }
}

/// How the server answers a task request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TaskReply {
    /// A status and a JSON body.
    Json(u16, Value),
    /// A 200 whose JSON body is cut short (the `truncate` fault).
    Cut(Vec<u8>),
    /// The connection closes before any answer (the `drop` fault).
    Drop,
}

/// How `request` is answered. The faults of a reply that is not streamed: `http` answers
/// with the status, `drop` closes the connection unanswered, `truncate` sends half of the
/// JSON reply, and `error_event` a 200 that reports an error in the service's own shape
/// (Cloudflare's `success: false` envelope, an `error` object for the others).
pub(crate) fn answer(api: TaskApi, request: &HttpRequest, body: &Value, fault: Option<&Fault>) -> TaskReply {
    let authorized = request
        .header("authorization")
        .is_some_and(|v| v.starts_with("Bearer ") && v.len() > "Bearer ".len());
    if !authorized {
        return TaskReply::Json(401, json!({"error": {"message": "missing bearer token"}}));
    }
    match fault.map(|f| &f.kind) {
        Some(FaultKind::Http { status, message, .. }) => {
            let message = message.clone().unwrap_or_else(|| format!("mock error {status}"));
            TaskReply::Json(*status, json!({"error": {"message": message}}))
        }
        Some(FaultKind::Drop { .. }) => TaskReply::Drop,
        Some(FaultKind::Truncate { .. }) => {
            let full = ok_reply(api, body).to_string().into_bytes();
            TaskReply::Cut(full[..full.len() / 2].to_vec())
        }
        Some(FaultKind::ErrorEvent { message, .. }) => {
            let message = message.clone().unwrap_or_else(|| "mock error".to_string());
            let reply = match api {
                TaskApi::Cloudflare => {
                    json!({"success": false, "errors": [{"code": 3040, "message": message}], "result": null})
                }
                _ => json!({"error": {"message": message}}),
            };
            TaskReply::Json(200, reply)
        }
        None => TaskReply::Json(200, ok_reply(api, body)),
    }
}

/// The successful reply of each API.
fn ok_reply(api: TaskApi, body: &Value) -> Value {
    match api {
        TaskApi::Images => images_reply(body),
        TaskApi::SystemOne => system_one_reply(body),
        TaskApi::Cloudflare => {
            let input = body.get("input").cloned().unwrap_or(Value::Null);
            let mut result = system_one_reply(&input);
            if let Some(map) = result.as_object_mut() {
                map.insert("model".into(), body.get("model").cloned().unwrap_or(Value::Null));
            }
            json!({"success": true, "errors": [], "result": result})
        }
        TaskApi::Decisions => decisions_reply(body),
    }
}

fn images_reply(body: &Value) -> Value {
    let with_text = body
        .get("modalities")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|v| v == "text"));
    json!({
        "id": "gen-mock",
        "object": "chat.completion",
        "model": body.get("model").cloned().unwrap_or(Value::Null),
        "choices": [{
            "index": 0,
            "finish_reason": "stop",
            "message": {
                "role": "assistant",
                "content": if with_text { "mock image" } else { "" },
                "images": [{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{MOCK_PNG_BASE64}")}}],
            },
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    })
}

fn questions(body: &Value) -> Vec<(String, Value)> {
    match body.get("questions") {
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(Value::Array(list)) => list
            .iter()
            .map(|q| {
                (
                    q.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                    q.clone(),
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn usage() -> Value {
    json!({"input_tokens": 42, "output_tokens": 0})
}

fn system_one_reply(body: &Value) -> Value {
    let mut answers = Map::new();
    for (id, question) in questions(body) {
        let answer = match question.get("type").and_then(Value::as_str) {
            Some("choice") => {
                let labels: Vec<String> = question
                    .get("criteria")
                    .and_then(Value::as_object)
                    .map(|c| c.keys().cloned().collect())
                    .unwrap_or_default();
                let share = 1.0 / labels.len().max(1) as f64;
                let probabilities: Map<String, Value> = labels.iter().map(|l| (l.clone(), json!(share))).collect();
                json!({"type": "choice", "choice": labels.first(), "probabilities": probabilities, "confidence": share})
            }
            Some("score") => {
                let levels = question.get("criteria").and_then(Value::as_array).map_or(1, Vec::len);
                json!({"type": "score", "score": (levels.saturating_sub(1) / 2) as f64, "confidence": 0.5})
            }
            _ => json!({"type": "noul", "noul": 0.5}),
        };
        answers.insert(id, answer);
    }
    json!({"answers": answers, "usage": usage()})
}

fn decisions_reply(body: &Value) -> Value {
    let answers: Vec<Value> = questions(body)
        .into_iter()
        .map(|(name, question)| match question.get("type").and_then(Value::as_str) {
            Some("choice") => {
                let values: Vec<Value> = question
                    .get("choices")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.get("value").cloned())
                    .collect();
                let share = 1.0 / values.len().max(1) as f64;
                let probabilities: Vec<Value> = values
                    .iter()
                    .map(|v| json!({"value": v, "probability": share}))
                    .collect();
                json!({"name": name, "type": "choice", "choice": values.first(), "probabilities": probabilities, "confidence": share})
            }
            Some("score") => {
                let levels = question.get("levels").and_then(Value::as_array).map_or(1, Vec::len);
                json!({"name": name, "type": "score", "score": (levels.saturating_sub(1) / 2) as f64, "confidence": 0.5})
            }
            _ => json!({"name": name, "type": "predicate", "probability": 0.5}),
        })
        .collect();
    json!({"answers": answers, "usage": usage()})
}
