//! OpenAI Responses streaming: response.created, output items (reasoning with a summary part,
//! message with an output_text part, function_call with argument deltas, custom_tool_call
//! with input deltas for tools the request declared as custom), response.completed.
//! Every event carries `type` and `sequence_number` and is sent with an `event:` line.

use serde_json::{json, Value};

use super::{named, CREATED};
use crate::plan::{Plan, Stop};

struct Writer {
    out: Vec<String>,
    seq: u64,
}

impl Writer {
    fn push(&mut self, kind: &str, mut body: Value) {
        if let Value::Object(map) = &mut body {
            let mut full = serde_json::Map::new();
            full.insert("type".into(), json!(kind));
            full.insert("sequence_number".into(), json!(self.seq));
            full.append(map);
            body = Value::Object(full);
        }
        self.seq += 1;
        self.out.push(named(kind, &body));
    }
}

pub(super) fn events(plan: &Plan) -> Vec<String> {
    let t = plan.turn_index;
    let id = format!("resp_mock{t}");
    let response = |status: &str, output: Value, usage: Value| {
        json!({
            "id": id, "object": "response", "created_at": CREATED, "status": status, "error": null,
            "incomplete_details": null, "model": plan.model, "output": output, "usage": usage,
        })
    };
    let mut w = Writer {
        out: Vec::new(),
        seq: 0,
    };
    w.push(
        "response.created",
        json!({"response": response("in_progress", json!([]), Value::Null)}),
    );
    w.push(
        "response.in_progress",
        json!({"response": response("in_progress", json!([]), Value::Null)}),
    );
    let mut items: Vec<Value> = Vec::new();

    if !plan.thinking.is_empty() {
        let index = items.len();
        let item_id = format!("rs_mock{t}");
        let text = plan.thinking_text();
        w.push(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "reasoning", "id": item_id, "summary": []}}),
        );
        let part = |text: &str| json!({"type": "summary_text", "text": text});
        w.push(
            "response.reasoning_summary_part.added",
            json!({"item_id": item_id, "output_index": index, "summary_index": 0, "part": part("")}),
        );
        for piece in &plan.thinking {
            w.push(
                "response.reasoning_summary_text.delta",
                json!({"item_id": item_id, "output_index": index, "summary_index": 0, "delta": piece}),
            );
        }
        w.push(
            "response.reasoning_summary_text.done",
            json!({"item_id": item_id, "output_index": index, "summary_index": 0, "text": text}),
        );
        w.push(
            "response.reasoning_summary_part.done",
            json!({"item_id": item_id, "output_index": index, "summary_index": 0, "part": part(&text)}),
        );
        // Key order type, id, summary: clients keep JSON.stringify(item) as the signature.
        let mut item = json!({"type": "reasoning", "id": item_id, "summary": [part(&text)]});
        if let Some(enc) = &plan.encrypted_content {
            item["encrypted_content"] = json!(enc);
        }
        w.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        items.push(item);
    }

    if !plan.text.is_empty() {
        let index = items.len();
        let item_id = format!("msg_mock{t}");
        let text = plan.text_text();
        let part = |text: &str| json!({"type": "output_text", "annotations": [], "text": text});
        w.push(
            "response.output_item.added",
            json!({"output_index": index,
            "item": {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
        );
        w.push(
            "response.content_part.added",
            json!({"item_id": item_id, "output_index": index, "content_index": 0, "part": part("")}),
        );
        for piece in &plan.text {
            w.push(
                "response.output_text.delta",
                json!({"item_id": item_id, "output_index": index, "content_index": 0, "delta": piece}),
            );
        }
        w.push(
            "response.output_text.done",
            json!({"item_id": item_id, "output_index": index, "content_index": 0, "text": text}),
        );
        w.push(
            "response.content_part.done",
            json!({"item_id": item_id, "output_index": index, "content_index": 0, "part": part(&text)}),
        );
        let item = json!({"id": item_id, "type": "message", "status": "completed", "content": [part(&text)], "role": "assistant"});
        w.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        items.push(item);
    }

    for (i, call) in plan.calls.iter().enumerate() {
        let index = items.len();
        if plan.custom_tools.contains(&call.name) {
            items.push(custom_call(&mut w, plan, i, index));
            continue;
        }
        let item_id = format!("fc_mock_{t}_{i}");
        let call_id = format!("call_mock_{t}_{i}");
        let item = |arguments: &str, status: &str| {
            json!({"type": "function_call", "id": item_id, "call_id": call_id, "name": call.name,
                "arguments": arguments, "status": status})
        };
        w.push(
            "response.output_item.added",
            json!({"output_index": index, "item": item("", "in_progress")}),
        );
        for piece in &call.pieces {
            w.push(
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": index, "delta": piece}),
            );
        }
        w.push(
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": index, "arguments": call.args_json}),
        );
        let done = item(&call.args_json, "completed");
        w.push(
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        );
        items.push(done);
    }

    let tk = plan.tokens;
    let input = tk.input + tk.cache_read;
    let usage = json!({
        "input_tokens": input, "input_tokens_details": {"cached_tokens": tk.cache_read},
        "output_tokens": tk.output, "output_tokens_details": {"reasoning_tokens": tk.reasoning},
        "total_tokens": input + tk.output,
    });
    // A length stop is reported as `response.completed` with status `incomplete`: the status is
    // what clients map to a stop reason, and pi 0.73 reads usage from `response.completed` only.
    let status = if plan.stop == Stop::Length {
        "incomplete"
    } else {
        "completed"
    };
    let mut done = response(status, Value::Array(items), usage);
    if plan.stop == Stop::Length {
        done["incomplete_details"] = json!({"reason": "max_output_tokens"});
    }
    if let Some(list) = &plan.input_transformations {
        done["input_transformations"] = list.clone();
    }
    w.push("response.completed", json!({"response": done}));
    w.out
}

/// A call of a custom tool: its input is the scripted arguments' first string (the one
/// property a grammar tool has), streamed in pieces.
fn custom_call(w: &mut Writer, plan: &Plan, i: usize, index: usize) -> Value {
    let t = plan.turn_index;
    let call = &plan.calls[i];
    let item_id = format!("ctc_mock_{t}_{i}");
    let call_id = format!("call_mock_{t}_{i}");
    let input = call
        .arguments
        .as_object()
        .and_then(|args| args.values().find_map(Value::as_str))
        .unwrap_or_default()
        .to_owned();
    let item = |input: &str, status: &str| {
        json!({"type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": call.name,
            "input": input, "status": status})
    };
    w.push(
        "response.output_item.added",
        json!({"output_index": index, "item": item("", "in_progress")}),
    );
    let chars: Vec<char> = input.chars().collect();
    for piece in chars.chunks(12) {
        let piece: String = piece.iter().collect();
        w.push(
            "response.custom_tool_call_input.delta",
            json!({"item_id": item_id, "output_index": index, "delta": piece}),
        );
    }
    w.push(
        "response.custom_tool_call_input.done",
        json!({"item_id": item_id, "output_index": index, "input": input}),
    );
    let done = item(&input, "completed");
    w.push(
        "response.output_item.done",
        json!({"output_index": index, "item": done}),
    );
    done
}
