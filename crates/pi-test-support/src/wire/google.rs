//! Google Generative AI streaming (`streamGenerateContent?alt=sse`): `data:` chunks of
//! GenerateContentResponse with thought parts (thoughtSignature), text parts, functionCall parts
//! (whole, as Gemini sends them), and a last chunk with finishReason and usageMetadata.

use serde_json::{json, Value};

use super::data;
use crate::plan::{Plan, Stop};

pub(super) fn events(plan: &Plan) -> Vec<String> {
    let response_id = format!("mockresp{}", plan.turn_index);
    let chunk = |parts: Value| {
        data(&json!({
            "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}],
            "modelVersion": plan.model, "responseId": response_id,
        }))
    };
    let mut out = Vec::new();
    for (i, piece) in plan.thinking.iter().enumerate() {
        let mut part = json!({"text": piece, "thought": true});
        if i == 0 {
            part["thoughtSignature"] = json!(format!("mocksig{}", plan.turn_index));
        }
        out.push(chunk(json!([part])));
    }
    for piece in &plan.text {
        out.push(chunk(json!([{"text": piece}])));
    }
    for (i, call) in plan.calls.iter().enumerate() {
        let id = format!("call_mock_{}_{i}", plan.turn_index);
        out.push(chunk(
            json!([{"functionCall": {"id": id, "name": call.name, "args": call.arguments}}]),
        ));
    }
    let t = plan.tokens;
    let prompt = t.input + t.cache_read;
    let finish = match plan.stop {
        Stop::Length => "MAX_TOKENS",
        Stop::End | Stop::Tools => "STOP",
    };
    let mut usage = json!({
        "promptTokenCount": prompt,
        "candidatesTokenCount": t.output.saturating_sub(t.reasoning),
        "totalTokenCount": prompt + t.output,
    });
    if t.reasoning > 0 {
        usage["thoughtsTokenCount"] = json!(t.reasoning);
    }
    if t.cache_read > 0 {
        usage["cachedContentTokenCount"] = json!(t.cache_read);
    }
    out.push(data(&json!({
        "candidates": [{"finishReason": finish, "index": 0}],
        "usageMetadata": usage, "modelVersion": plan.model, "responseId": response_id,
    })));
    out
}
