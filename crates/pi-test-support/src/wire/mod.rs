//! The four wire formats: a planned reply becomes the SSE events of that API, and faults become
//! that API's error bodies and error events.

mod anthropic;
mod bedrock;
mod google;
mod mistral;
mod openai_completions;
mod openai_responses;

use serde_json::{json, Value};

use crate::conversation::Api;
use crate::plan::Plan;

/// Seconds since the epoch the mock reports as creation time: fixed, so replies are repeatable.
pub(crate) const CREATED: u64 = 1_796_000_000;

/// The events of a reply, in order: whole SSE events ending in a blank line, or for Bedrock
/// whole binary event-stream frames.
pub(crate) fn stream_events(api: Api, plan: &Plan) -> Vec<Vec<u8>> {
    let sse = match api {
        Api::Openai => openai_completions::events(plan),
        Api::Anthropic => anthropic::events(plan),
        Api::Responses => openai_responses::events(plan),
        Api::Google => google::events(plan),
        Api::Mistral => mistral::events(plan),
        Api::Bedrock => return bedrock::events(plan),
    };
    sse.into_iter().map(String::into_bytes).collect()
}

/// The content type of a 200 reply.
pub(crate) fn stream_content_type(api: Api) -> &'static str {
    match api {
        Api::Bedrock => "application/vnd.amazon.eventstream",
        _ => "text/event-stream",
    }
}

/// Extra headers of an HTTP error reply (Bedrock names the exception in one).
pub(crate) fn error_headers(api: Api, status: u16) -> Vec<(&'static str, String)> {
    match api {
        Api::Bedrock => vec![(
            "x-amzn-errortype",
            format!(
                "{}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                bedrock::error_type(status).0
            ),
        )],
        _ => Vec::new(),
    }
}

/// An error inside a 200 stream.
pub(crate) fn error_event(api: Api, message: Option<&str>, error_type: Option<&str>) -> Vec<u8> {
    if api == Api::Bedrock {
        return bedrock::error_event(message, error_type);
    }
    sse_error_event(api, message, error_type).into_bytes()
}

fn sse_error_event(api: Api, message: Option<&str>, error_type: Option<&str>) -> String {
    match api {
        Api::Anthropic => {
            let kind = error_type.unwrap_or("overloaded_error");
            let message = message.unwrap_or(if kind == "overloaded_error" {
                "Overloaded"
            } else {
                "Internal server error"
            });
            named(
                "error",
                &json!({"type": "error", "error": {"type": kind, "message": message}}),
            )
        }
        Api::Openai => {
            let kind = error_type.unwrap_or("server_error");
            let message = message.unwrap_or("The server had an error while processing your request.");
            data(&json!({"error": {"message": message, "type": kind, "param": null, "code": kind}}))
        }
        Api::Responses => {
            let kind = error_type.unwrap_or("server_error");
            let message = message.unwrap_or("The server had an error while processing your request.");
            named(
                "error",
                &json!({"type": "error", "code": kind, "message": message, "param": null}),
            )
        }
        // Mistral reports a failure inside the stream as a finish reason of `error`.
        Api::Mistral => {
            let _ = (message, error_type);
            data(&json!({
                "id": "cmpl-mock-error", "object": "chat.completion.chunk", "created": CREATED, "model": "mock-model",
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
            }))
        }
        Api::Google => {
            let message = message.unwrap_or("An internal error has occurred.");
            let status = error_type.unwrap_or("INTERNAL");
            // Google sends a bare JSON error object (no `data:` prefix) into the stream; its SDK
            // recognises one when a whole read is that object.
            json!({"error": {"code": 500, "message": message, "status": status}}).to_string()
        }
        // Bedrock's error frames are binary; `error_event` makes them.
        Api::Bedrock => String::new(),
    }
}

/// The body of an HTTP error status, shaped like the provider's.
pub(crate) fn error_body(api: Api, status: u16, message: Option<&str>) -> Value {
    match api {
        Api::Anthropic => {
            let (kind, default) = match status {
                400 => ("invalid_request_error", "Invalid request"),
                401 => ("authentication_error", "invalid x-api-key"),
                403 => ("permission_error", "Permission denied"),
                404 => ("not_found_error", "Not found"),
                413 => (
                    "request_too_large",
                    "Request exceeds the maximum allowed number of bytes.",
                ),
                429 => ("rate_limit_error", "Rate limited"),
                529 => ("overloaded_error", "Overloaded"),
                _ => ("api_error", "Internal server error"),
            };
            json!({"type": "error", "error": {"type": kind, "message": message.unwrap_or(default)}})
        }
        Api::Openai | Api::Responses => {
            let (kind, code, default) = match status {
                400 => ("invalid_request_error", Value::Null, "Invalid request"),
                401 => (
                    "invalid_request_error",
                    json!("invalid_api_key"),
                    "Incorrect API key provided.",
                ),
                404 => (
                    "invalid_request_error",
                    json!("model_not_found"),
                    "The model does not exist.",
                ),
                429 => (
                    "requests",
                    json!("rate_limit_exceeded"),
                    "Rate limit reached. Please try again later.",
                ),
                529 => ("server_error", json!("overloaded"), "The server is overloaded."),
                _ => (
                    "server_error",
                    Value::Null,
                    "The server had an error while processing your request.",
                ),
            };
            json!({"error": {"message": message.unwrap_or(default), "type": kind, "param": null, "code": code}})
        }
        Api::Mistral => {
            let (kind, default) = match status {
                400 => ("invalid_request_error", "Invalid request"),
                401 => ("authentication_error", "Unauthorized"),
                404 => ("invalid_request_error", "Invalid model"),
                429 => ("rate_limited", "Rate limit exceeded"),
                _ => ("internal_server_error", "Internal server error"),
            };
            json!({"object": "error", "message": message.unwrap_or(default), "type": kind, "param": null, "code": status.to_string()})
        }
        Api::Google => {
            let (state, default) = match status {
                400 => ("INVALID_ARGUMENT", "Request contains an invalid argument."),
                401 => ("UNAUTHENTICATED", "API key not valid."),
                403 => ("PERMISSION_DENIED", "Permission denied."),
                404 => ("NOT_FOUND", "Model not found."),
                429 => ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
                503 | 529 => ("UNAVAILABLE", "The model is overloaded. Please try again later."),
                _ => ("INTERNAL", "An internal error has occurred."),
            };
            json!({"error": {"code": status, "message": message.unwrap_or(default), "status": state}})
        }
        Api::Bedrock => json!({"message": message.unwrap_or(bedrock::error_type(status).1)}),
    }
}

/// `data: <json>` event.
pub(crate) fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// `event: <name>` + `data: <json>` event.
pub(crate) fn named(name: &str, value: &Value) -> String {
    format!("event: {name}\ndata: {value}\n\n")
}
