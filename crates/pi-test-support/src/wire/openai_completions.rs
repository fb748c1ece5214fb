//! OpenAI Chat Completions streaming: `chat.completion.chunk` objects, a usage chunk, `[DONE]`.
//! A tool the request declared as `custom` (a grammar tool) is called with raw input deltas.

use serde_json::{json, Value};

use super::{data, CREATED};
use crate::plan::{Plan, Stop};

pub(super) fn events(plan: &Plan) -> Vec<String> {
    let id = format!("chatcmpl-mock{}", plan.turn_index);
    let chunk = |delta: Value, finish: Value| {
        data(&json!({
            "id": id, "object": "chat.completion.chunk", "created": CREATED, "model": plan.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        }))
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    for piece in &plan.thinking {
        out.push(chunk(json!({"reasoning_content": piece}), Value::Null));
    }
    for piece in &plan.text {
        out.push(chunk(json!({"content": piece}), Value::Null));
    }
    for (i, call) in plan.calls.iter().enumerate() {
        let call_id = format!("call_mock_{}_{i}", plan.turn_index);
        if plan.custom_tools.contains(&call.name) {
            // The input is the scripted arguments' first string (the one property a grammar
            // tool has).
            let input = call
                .arguments
                .as_object()
                .and_then(|args| args.values().find_map(Value::as_str))
                .unwrap_or_default();
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "id": call_id, "type": "custom",
                    "custom": {"name": call.name, "input": ""}}]}),
                Value::Null,
            ));
            let chars: Vec<char> = input.chars().collect();
            for piece in chars.chunks(12) {
                let piece: String = piece.iter().collect();
                out.push(chunk(
                    json!({"tool_calls": [{"index": i, "custom": {"input": piece}}]}),
                    Value::Null,
                ));
            }
            continue;
        }
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in &call.pieces {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    let finish = match plan.stop {
        Stop::End => "stop",
        Stop::Tools => "tool_calls",
        Stop::Length => "length",
    };
    out.push(chunk(json!({}), json!(finish)));
    let t = plan.tokens;
    let prompt = t.input + t.cache_read + t.cache_write;
    let mut details = json!({"cached_tokens": t.cache_read + t.cache_write});
    if t.cache_write > 0 {
        details["cache_write_tokens"] = json!(t.cache_write);
    }
    out.push(data(&json!({
        "id": id, "object": "chat.completion.chunk", "created": CREATED, "model": plan.model, "choices": [],
        "usage": {
            "prompt_tokens": prompt, "completion_tokens": t.output, "total_tokens": prompt + t.output,
            "prompt_tokens_details": details,
            "completion_tokens_details": {"reasoning_tokens": t.reasoning},
        },
    })));
    out.push("data: [DONE]\n\n".to_owned());
    out
}
