//! Anthropic Messages streaming: message_start, content blocks (thinking with signature_delta,
//! text, tool_use with input_json_delta), message_delta with stop reason and usage, message_stop.

use serde_json::{json, Value};

use super::named;
use crate::plan::{Plan, Stop};

pub(super) fn events(plan: &Plan) -> Vec<String> {
    let t = plan.tokens;
    let mut out = vec![named(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": format!("msg_mock{}", plan.turn_index), "type": "message", "role": "assistant",
            "model": plan.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": t.input, "cache_creation_input_tokens": t.cache_write,
                "cache_read_input_tokens": t.cache_read, "output_tokens": 1},
        }}),
    )];
    out.push(named("ping", &json!({"type": "ping"})));
    let mut index = 0usize;
    let mut block = |out: &mut Vec<String>, start: Value, deltas: Vec<Value>| {
        out.push(named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push(named(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push(named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if !plan.thinking.is_empty() {
        let mut deltas: Vec<Value> = plan
            .thinking
            .iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": format!("mocksig{}", plan.turn_index)}));
        block(
            &mut out,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        );
    }
    if !plan.text.is_empty() {
        let deltas = plan
            .text
            .iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    for (i, call) in plan.calls.iter().enumerate() {
        let mut deltas = vec![json!({"type": "input_json_delta", "partial_json": ""})];
        deltas.extend(
            call.pieces
                .iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p})),
        );
        let id = format!("toolu_mock_{}_{i}", plan.turn_index);
        block(
            &mut out,
            json!({"type": "tool_use", "id": id, "name": call.name, "input": {}}),
            deltas,
        );
    }
    let stop = match plan.stop {
        Stop::End => "end_turn",
        Stop::Tools => "tool_use",
        Stop::Length => "max_tokens",
    };
    let mut delta = json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": t.output}});
    if let Some(list) = &plan.input_transformations {
        delta["input_transformations"] = list.clone();
    }
    out.push(named("message_delta", &delta));
    out.push(named("message_stop", &json!({"type": "message_stop"})));
    out
}
