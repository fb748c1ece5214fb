//! The record of the calls one running tool made (`nestedCalls` on its result message, as pi
//! 1.6 keeps it): each call's id, name, status, arguments and duration, with pi's limits on
//! how much of it is kept, so a script making thousands of calls cannot bloat the session.

use std::time::Instant;

use pi_ai::ToolCall;
use serde::Serialize;
use serde_json::Value;

use crate::tool::ToolOutput;

/// More calls than this are counted out of the record (which is then incomplete).
const MAX_CALLS: usize = 256;
/// Arguments larger than this (as JSON bytes) are replaced by their size.
const MAX_ARGUMENT_BYTES_PER_CALL: usize = 8 * 1024;
/// Once the kept arguments reach this many bytes, later ones are replaced by their size.
const MAX_ARGUMENT_BYTES_TOTAL: usize = 32 * 1024;
/// A failed call's error text is cut to this many characters.
const MAX_ERROR_CHARS: usize = 500;

#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct CallRecord {
    id: String,
    name: String,
    /// `unfinished`, `ok` or `error`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments_bytes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// A started call's place in the record (`None`: the call was counted out).
pub(crate) struct Recorded(Option<(usize, Instant)>);

#[derive(Default)]
pub(crate) struct NestedRecorder {
    calls: Vec<CallRecord>,
    argument_bytes: usize,
    /// Something was left out.
    dropped: bool,
    /// What the calls' own model calls spent, summed (their result messages are not kept,
    /// so it goes on the running tool's result, as pi 1.6 counts it).
    usage: Option<pi_ai::Usage>,
}

impl NestedRecorder {
    pub(crate) fn start(&mut self, call: &ToolCall) -> Recorded {
        if self.calls.len() >= MAX_CALLS {
            self.dropped = true;
            return Recorded(None);
        }
        let json = serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".to_string());
        let bytes = json.len();
        let (arguments, arguments_bytes) =
            if bytes > MAX_ARGUMENT_BYTES_PER_CALL || self.argument_bytes + bytes > MAX_ARGUMENT_BYTES_TOTAL {
                self.dropped = true;
                (None, Some(bytes))
            } else {
                self.argument_bytes += bytes;
                (Some(call.arguments.clone()), None)
            };
        self.calls.push(CallRecord {
            id: call.id.clone(),
            name: call.name.clone(),
            status: "unfinished",
            arguments,
            arguments_bytes,
            duration_ms: None,
            error: None,
        });
        Recorded(Some((self.calls.len() - 1, Instant::now())))
    }

    pub(crate) fn finish(&mut self, recorded: Recorded, is_error: bool, result: &ToolOutput) {
        let Some((index, started)) = recorded.0 else {
            return;
        };
        let Some(record) = self.calls.get_mut(index) else {
            return;
        };
        record.status = if is_error { "error" } else { "ok" };
        record.duration_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        if is_error {
            let text = pi_ai::join_text(&result.content);
            if !text.is_empty() {
                record.error = Some(text.chars().take(MAX_ERROR_CHARS).collect());
            }
        }
    }

    /// Count what a call spent (calls counted out of the record included).
    pub(crate) fn add_usage(&mut self, usage: &pi_ai::Usage) {
        self.usage = Some(match &self.usage {
            Some(total) => crate::tool::combine_usage(total, usage),
            None => *usage,
        });
    }

    /// The calls' summed usage, if any reported one.
    pub(crate) fn usage(&self) -> Option<pi_ai::Usage> {
        self.usage
    }

    /// `{calls, complete}`, or `None` when no call was made.
    pub(crate) fn snapshot(&self) -> Option<Value> {
        if self.calls.is_empty() && !self.dropped {
            return None;
        }
        let complete = !self.dropped && self.calls.iter().all(|c| c.status != "unfinished");
        Some(serde_json::json!({ "calls": self.calls, "complete": complete }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, arguments: Value) -> ToolCall {
        crate::nested::nested_call(id.to_string(), "read", arguments)
    }

    #[test]
    fn the_record_keeps_pi_16_field_order_and_marks_unfinished_calls_incomplete() {
        let mut recorder = NestedRecorder::default();
        assert!(recorder.snapshot().is_none(), "no call, no record");
        let first = recorder.start(&call("c/1", json!({"path": "a"})));
        let _second = recorder.start(&call("c/2", json!({})));
        recorder.finish(first, true, &ToolOutput::text("boom"));
        let record = recorder.snapshot().unwrap();
        let text = serde_json::to_string(&record).unwrap();
        assert!(
            text.starts_with(
                r#"{"calls":[{"id":"c/1","name":"read","status":"error","arguments":{"path":"a"},"durationMs":"#
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                r#""error":"boom"},{"id":"c/2","name":"read","status":"unfinished","arguments":{}}],"complete":false}"#
            ),
            "{text}"
        );
    }

    #[test]
    fn large_arguments_and_calls_past_the_limit_are_counted_out() {
        let mut recorder = NestedRecorder::default();
        let big = json!({"content": "x".repeat(MAX_ARGUMENT_BYTES_PER_CALL)});
        let r = recorder.start(&call("c/1", big));
        recorder.finish(r, false, &ToolOutput::text("ok"));
        let record = recorder.snapshot().unwrap();
        assert!(record["calls"][0].get("arguments").is_none());
        assert_eq!(
            record["calls"][0]["argumentsBytes"],
            json!(MAX_ARGUMENT_BYTES_PER_CALL + 14)
        );
        assert_eq!(record["complete"], json!(false));
        for i in 0..MAX_CALLS + 3 {
            let r = recorder.start(&call(&format!("c/{i}"), json!({})));
            recorder.finish(r, false, &ToolOutput::text("ok"));
        }
        assert_eq!(
            recorder.snapshot().unwrap()["calls"].as_array().unwrap().len(),
            MAX_CALLS
        );
    }
}
