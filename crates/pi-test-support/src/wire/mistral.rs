//! Mistral's chat stream: Chat Completions chunks whose thinking arrives as typed content
//! chunks, tool calls with nine-character ids, the usage in the finishing chunk, `[DONE]`.

use serde_json::{json, Value};

use super::{data, CREATED};
use crate::plan::{Plan, Stop};

pub(super) fn events(plan: &Plan) -> Vec<String> {
    let id = format!("cmpl-mock{}", plan.turn_index);
    let chunk = |delta: Value, finish: Value, usage: Option<Value>| {
        let mut c = json!({
            "id": id, "object": "chat.completion.chunk", "created": CREATED, "model": plan.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let Some(u) = usage {
            c["usage"] = u;
        }
        data(&c)
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null, None)];
    for piece in &plan.thinking {
        out.push(chunk(
            json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]}),
            Value::Null,
            None,
        ));
    }
    for piece in &plan.text {
        out.push(chunk(json!({"content": piece}), Value::Null, None));
    }
    for (i, call) in plan.calls.iter().enumerate() {
        let call_id = format!("mock{}c{i:03}", plan.turn_index % 10);
        // Mistral repeats the id and name on every piece of a call.
        for piece in &call.pieces {
            out.push(chunk(
                json!({"tool_calls": [{"id": call_id, "index": i,
                    "function": {"name": call.name, "arguments": piece}}]}),
                Value::Null,
                None,
            ));
        }
    }
    let finish = match plan.stop {
        Stop::End => "stop",
        Stop::Tools => "tool_calls",
        Stop::Length => "length",
    };
    let t = plan.tokens;
    let prompt = t.input + t.cache_read + t.cache_write;
    let usage = json!({
        "prompt_tokens": prompt, "completion_tokens": t.output, "total_tokens": prompt + t.output,
        "prompt_tokens_details": {"cached_tokens": t.cache_read + t.cache_write},
    });
    out.push(chunk(json!({"content": ""}), json!(finish), Some(usage)));
    out.push("data: [DONE]\n\n".to_owned());
    out
}
