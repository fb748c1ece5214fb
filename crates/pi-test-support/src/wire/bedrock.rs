//! Amazon Bedrock's ConverseStream reply: AWS event-stream frames (`messageStart`, reasoning and
//! text deltas of content blocks, `toolUse` blocks with their input in pieces, `messageStop`,
//! `metadata` with the usage), exception frames for errors inside the stream, and the error
//! body and `x-amzn-errortype` of an HTTP error.

use serde_json::{json, Value};

use crate::plan::{Plan, Stop};

/// One frame with string headers: prelude (lengths, CRC), headers, payload, message CRC.
pub(crate) fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        // Header names and values here are short literals, well inside the format's limits.
        head.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
        head.extend_from_slice(name.as_bytes());
        head.push(7);
        head.extend_from_slice(&u16::try_from(value.len()).unwrap_or(u16::MAX).to_be_bytes());
        head.extend_from_slice(value.as_bytes());
    }
    let total = 12 + head.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&u32::try_from(total).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(&u32::try_from(head.len()).unwrap_or(u32::MAX).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

fn event(kind: &str, payload: &Value) -> Vec<u8> {
    frame(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.to_string().as_bytes(),
    )
}

pub(super) fn events(plan: &Plan) -> Vec<Vec<u8>> {
    let mut out = vec![event("messageStart", &json!({"role": "assistant"}))];
    let mut index = 0;
    if !plan.thinking.is_empty() {
        for piece in &plan.thinking {
            out.push(event(
                "contentBlockDelta",
                &json!({"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}}),
            ));
        }
        let signature = format!("mock-signature-{}", plan.turn_index);
        out.push(event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": index, "delta": {"reasoningContent": {"signature": signature}}}),
        ));
        out.push(event("contentBlockStop", &json!({"contentBlockIndex": index})));
        index += 1;
    }
    if !plan.text.is_empty() {
        for piece in &plan.text {
            out.push(event(
                "contentBlockDelta",
                &json!({"contentBlockIndex": index, "delta": {"text": piece}}),
            ));
        }
        out.push(event("contentBlockStop", &json!({"contentBlockIndex": index})));
        index += 1;
    }
    for (i, call) in plan.calls.iter().enumerate() {
        let id = format!("tooluse_mock{}c{i}", plan.turn_index);
        out.push(event(
            "contentBlockStart",
            &json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": id, "name": call.name}}}),
        ));
        for piece in &call.pieces {
            out.push(event(
                "contentBlockDelta",
                &json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}),
            ));
        }
        out.push(event("contentBlockStop", &json!({"contentBlockIndex": index})));
        index += 1;
    }
    let stop = match plan.stop {
        Stop::End => "end_turn",
        Stop::Tools => "tool_use",
        Stop::Length => "max_tokens",
    };
    out.push(event("messageStop", &json!({"stopReason": stop})));
    let t = plan.tokens;
    out.push(event(
        "metadata",
        &json!({
            "usage": {
                "inputTokens": t.input, "outputTokens": t.output,
                "cacheReadInputTokens": t.cache_read, "cacheWriteInputTokens": t.cache_write,
                "totalTokens": t.input + t.output + t.cache_read + t.cache_write,
            },
            "metrics": {"latencyMs": 1},
        }),
    ));
    out
}

/// An exception frame inside the stream (`throttlingException` unless the script names one).
pub(super) fn error_event(message: Option<&str>, error_type: Option<&str>) -> Vec<u8> {
    let kind = error_type.unwrap_or("internalServerException");
    let message = message.unwrap_or("The server encountered an internal error.");
    frame(
        &[
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        json!({"message": message}).to_string().as_bytes(),
    )
}

/// The exception name and default message of an HTTP error status.
pub(super) fn error_type(status: u16) -> (&'static str, &'static str) {
    match status {
        400 => ("ValidationException", "Malformed input request"),
        401 | 403 => (
            "AccessDeniedException",
            "The security token included in the request is invalid.",
        ),
        404 => ("ResourceNotFoundException", "Model not found"),
        408 => ("ModelTimeoutException", "Model timed out"),
        429 => (
            "ThrottlingException",
            "Too many requests, please wait before trying again.",
        ),
        503 | 529 => ("ServiceUnavailableException", "Service unavailable"),
        _ => ("InternalServerException", "The server encountered an internal error."),
    }
}
