//! The Responses event stream read into one assistant message: the loop shared by the
//! `openai-responses` family (OpenAI, Azure, Codex) whatever carries the events (an SSE body, a
//! WebSocket's text frames), with Codex's own reading of errors and of the final event.

use serde_json::{json, Map, Value};

use crate::providers::grammar_tools::{GrammarInputs, RawInput};
use crate::providers::lenient::EventHead;
use crate::providers::openai_responses::map_status;
use crate::sse::{SseStream, TransportError};
use crate::stream_driver::{Emitter, ProviderError};
use crate::types::{Content, Model, StopReason};

/// One event as its carrier delivered it: the SSE event name (empty for WebSocket frames) and
/// the JSON text.
pub(crate) struct RawEvent {
    pub event: String,
    pub data: String,
}

/// A source of Responses events.
pub(crate) trait ResponsesEvents {
    /// The next event; `Ok(None)` once the carrier ended cleanly.
    async fn next_event(&mut self) -> Result<Option<RawEvent>, Failure>;
    /// The carrier's name in error texts (`SSE`, `WebSocket`).
    fn carrier(&self) -> &'static str;
}

/// Who is speaking: OpenAI's SDK reading (any event with an `error` member fails) or the Codex
/// backend's (pi 1.6 reads it without the SDK: `error` and `response.failed` events carry a
/// code, and `response.done` ends the response like `response.completed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Responses,
    Codex,
}

/// Why reading stopped early.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The server said the request failed; `code` as it sent it (Codex retries some).
    Api { code: Option<String>, message: String },
    /// The carrier broke (connection closed or timed out): a WebSocket that breaks before any
    /// event falls back to SSE.
    Transport(String),
    /// Everything else: malformed events, the consumer gone, an abort.
    Provider(ProviderError),
}

impl Failure {
    pub(crate) fn into_provider_error(self) -> ProviderError {
        match self {
            Failure::Api { message, .. } | Failure::Transport(message) => ProviderError::Message(message),
            Failure::Provider(e) => e,
        }
    }
}

impl From<ProviderError> for Failure {
    fn from(e: ProviderError) -> Self {
        Failure::Provider(e)
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Provider(ProviderError::Message(message))
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::Provider(ProviderError::Message(message.to_string()))
    }
}

/// The events of an SSE body.
pub(crate) struct SseEvents<S> {
    sse: SseStream<S>,
}

impl<S> SseEvents<S> {
    pub(crate) fn new(sse: SseStream<S>) -> Self {
        SseEvents { sse }
    }
}

impl<S, E> ResponsesEvents for SseEvents<S>
where
    S: futures::Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    E: TransportError,
{
    async fn next_event(&mut self) -> Result<Option<RawEvent>, Failure> {
        match self.sse.next_event().await {
            Ok(Some(e)) => Ok(Some(RawEvent {
                event: e.event,
                data: e.data,
            })),
            Ok(None) => Ok(None),
            Err(crate::sse::SseError::Transport(_)) => Err("terminated".into()),
            Err(e) => Err(e.to_string().into()),
        }
    }

    fn carrier(&self) -> &'static str {
        "SSE"
    }
}

/// The statuses pi 1.6 keeps from a Codex response; any other reads as none.
fn codex_status(status: Option<&str>) -> Option<&str> {
    status.filter(|s| {
        matches!(
            *s,
            "completed" | "incomplete" | "failed" | "cancelled" | "queued" | "in_progress"
        )
    })
}

/// A value as JavaScript's template strings print it (`undefined` when absent).
fn js_text(v: Option<&Value>) -> String {
    match v {
        None => "undefined".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The output item being streamed and its content block.
enum Current {
    None,
    Reasoning {
        item: Value,
        index: usize,
    },
    Message {
        item: Value,
        index: usize,
    },
    Call {
        index: usize,
    },
    /// A custom (grammar) tool call: its raw input streams as text.
    Custom {
        index: usize,
        raw: RawInput,
    },
}

/// Read Responses events from `events` into `em` until the stream ends (or, for Codex, until
/// the response completes: a WebSocket stays open after it).
pub(crate) async fn read_events<E: ResponsesEvents>(
    em: &mut Emitter,
    model: &Model,
    events: &mut E,
    grammar: &GrammarInputs,
    dialect: Dialect,
) -> Result<(), Failure> {
    let codex = dialect == Dialect::Codex;
    let mut completed = false;
    let mut current = Current::None;
    loop {
        let Some(event) = events.next_event().await? else {
            break;
        };
        if event.data.starts_with("[DONE]") {
            break;
        }
        // The per-token events need only their type and delta: they are read without a JSON
        // tree; every other event is read whole.
        let head = EventHead::parse(&event.data);
        let token_event = head.as_ref().is_some_and(|h| {
            h.error.is_none()
                && matches!(
                    h.kind.get(),
                    Some(
                        "response.output_text.delta"
                            | "response.refusal.delta"
                            | "response.reasoning_summary_text.delta"
                            | "response.reasoning_text.delta"
                            | "response.function_call_arguments.delta"
                            | "response.custom_tool_call_input.delta"
                    )
                )
        });
        let data: Value = if token_event {
            Value::Null
        } else {
            match serde_json::from_str(&event.data) {
                Ok(v) => v,
                Err(e) if codex => {
                    return Err(format!("Invalid Codex {} JSON: {e}", events.carrier()).into());
                }
                Err(e) => return Err(format!("Could not parse stream message as JSON: {e}").into()),
            }
        };
        if codex {
            if !token_event && !data.get("type").is_some_and(Value::is_string) {
                continue;
            }
        } else if let Some(error) = data.get("error").filter(|e| !e.is_null() && *e != &json!(false)) {
            // The SDK treats any event carrying an `error` member as a failure, whatever its type.
            return Err(crate::providers::openai_completions::stream_error_message(error).into());
        }
        // An SSE event named `error` is the SDK's error too, its payload the whole data.
        if !codex && event.event == "error" && !data.is_null() {
            return Err(crate::providers::openai_completions::stream_error_message(&data).into());
        }
        let (kind, token_delta) = match (&head, token_event) {
            (Some(h), true) => (h.kind.get().unwrap_or(""), h.delta.get().unwrap_or("")),
            _ => match data.get("type").and_then(Value::as_str).unwrap_or("") {
                "response.done" if codex => ("response.completed", ""),
                other => (other, ""),
            },
        };
        // A WebSocket reply starts with its first event that is not a failure (an SSE reply
        // started with its response headers).
        let failure_event = codex && matches!(kind, "error" | "response.failed");
        if !em.is_started() && !failure_event {
            em.start().await?;
        }
        match kind {
            "response.created" => {
                if let Some(id) = data.pointer("/response/id").and_then(Value::as_str) {
                    em.output.response_id = Some(id.to_string());
                }
            }
            "response.output_item.added" => {
                let item = data.get("item").cloned().unwrap_or(Value::Null);
                match item.get("type").and_then(Value::as_str) {
                    Some("reasoning") => {
                        let index = em.thinking_start(None).await?;
                        current = Current::Reasoning { item, index };
                    }
                    Some("message") => {
                        let index = em.text_start().await?;
                        current = Current::Message { item, index };
                    }
                    Some("function_call") => {
                        let id = format!("{}|{}", js_text(item.get("call_id")), js_text(item.get("id")));
                        let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                        let index = em.tool_call_start(&id, name).await?;
                        if let Some(args) = item.get("arguments").and_then(Value::as_str) {
                            em.set_tool_call_raw_args(index, args.to_string());
                        }
                        current = Current::Call { index };
                    }
                    Some("custom_tool_call") => {
                        let (index, raw) = start_custom_call(em, &item, grammar).await?;
                        current = Current::Custom { index, raw };
                    }
                    _ => {}
                }
            }
            "response.custom_tool_call_input.delta" => {
                if let Current::Custom { index, raw } = &mut current {
                    if let Some(piece) = raw.push(token_delta) {
                        em.tool_call_delta(*index, &piece).await?;
                    }
                }
            }
            "response.custom_tool_call_input.done" => {
                if let Current::Custom { index, raw } = &mut current {
                    if let Some(piece) = raw.close(data.get("input").and_then(Value::as_str)) {
                        em.tool_call_delta(*index, &piece).await?;
                    }
                }
            }
            "response.reasoning_summary_part.added" => {
                if let Current::Reasoning { item, .. } = &mut current {
                    push_array(item, "summary", data.get("part").cloned().unwrap_or(Value::Null));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_summary_part.done" => {
                if let Current::Reasoning { item, index } = &mut current {
                    let delta = if kind == "response.reasoning_summary_part.done" {
                        "\n\n"
                    } else {
                        token_delta
                    };
                    if append_last_text(item, "summary", "text", delta) {
                        let index = *index;
                        em.thinking_delta(index, delta).await?;
                    }
                }
            }
            "response.reasoning_text.delta" => {
                if let Current::Reasoning { index, .. } = &current {
                    let delta = token_delta;
                    em.thinking_delta(*index, delta).await?;
                }
            }
            "response.content_part.added" => {
                if let Current::Message { item, .. } = &mut current {
                    let part = data.get("part").cloned().unwrap_or(Value::Null);
                    if matches!(
                        part.get("type").and_then(Value::as_str),
                        Some("output_text" | "refusal")
                    ) {
                        push_array(item, "content", part);
                    }
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Current::Message { item, index } = &mut current {
                    let (part_type, field) = if kind == "response.output_text.delta" {
                        ("output_text", "text")
                    } else {
                        ("refusal", "refusal")
                    };
                    let last_type = item
                        .get("content")
                        .and_then(Value::as_array)
                        .and_then(|c| c.last())
                        .and_then(|p| p.get("type"))
                        .and_then(Value::as_str);
                    if last_type == Some(part_type) {
                        let delta = token_delta;
                        append_last_text(item, "content", field, delta);
                        let index = *index;
                        em.text_delta(index, delta).await?;
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                if let Current::Call { index } = current {
                    let delta = token_delta;
                    em.tool_call_delta(index, delta).await?;
                }
            }
            "response.function_call_arguments.done" => {
                if let Current::Call { index } = current {
                    let full = data.get("arguments").and_then(Value::as_str).unwrap_or("").to_string();
                    let previous = em.tool_call_raw_args(index).unwrap_or("").to_string();
                    if let Some(rest) = full.strip_prefix(previous.as_str()).filter(|r| !r.is_empty()) {
                        let rest = rest.to_string();
                        em.tool_call_delta(index, &rest).await?;
                    }
                    em.set_tool_call_raw_args(index, full);
                }
            }
            "response.output_item.done" => {
                let item = data.get("item").cloned().unwrap_or(Value::Null);
                let item_type = item.get("type").and_then(Value::as_str);
                match (item_type, std::mem::replace(&mut current, Current::None)) {
                    (Some("reasoning"), Current::Reasoning { index, .. }) => {
                        let joined = |key: &str| -> String {
                            item.get(key)
                                .and_then(Value::as_array)
                                .map(|parts| {
                                    parts
                                        .iter()
                                        .map(|p| p.get("text").and_then(Value::as_str).unwrap_or(""))
                                        .collect::<Vec<_>>()
                                        .join("\n\n")
                                })
                                .unwrap_or_default()
                        };
                        let summary = joined("summary");
                        let content = joined("content");
                        let signature = item.to_string();
                        if let Some(block) = em.thinking_block(index) {
                            if !summary.is_empty() {
                                block.thinking = summary;
                            } else if !content.is_empty() {
                                block.thinking = content;
                            }
                            block.thinking_signature = Some(signature);
                        }
                        em.thinking_end(index).await?;
                    }
                    (Some("message"), Current::Message { index, .. }) => {
                        let text: String = item
                            .get("content")
                            .and_then(Value::as_array)
                            .map(|parts| {
                                parts
                                    .iter()
                                    .map(|p| {
                                        let field = if p.get("type").and_then(Value::as_str) == Some("output_text") {
                                            "text"
                                        } else {
                                            "refusal"
                                        };
                                        p.get(field).and_then(Value::as_str).unwrap_or("")
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        let mut sig = Map::new();
                        sig.insert("v".into(), json!(1));
                        sig.insert("id".into(), item.get("id").cloned().unwrap_or(Value::Null));
                        if let Some(phase) = item.get("phase").filter(|p| !p.is_null()) {
                            sig.insert("phase".into(), phase.clone());
                        }
                        if let Some(block) = em.text_block(index) {
                            block.text = text;
                            block.text_signature = Some(Value::Object(sig).to_string());
                        }
                        em.text_end(index).await?;
                    }
                    (Some("function_call"), previous) => {
                        let index = match previous {
                            Current::Call { index } => index,
                            // A call that was never announced: add it now.
                            _ => {
                                let id = format!("{}|{}", js_text(item.get("call_id")), js_text(item.get("id")));
                                let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                                em.tool_call_start(&id, name).await?
                            }
                        };
                        let raw = em.tool_call_raw_args(index).unwrap_or("").to_string();
                        if raw.is_empty() {
                            let args = item.get("arguments").and_then(Value::as_str).unwrap_or("{}");
                            em.set_tool_call_raw_args(index, args.to_string());
                        }
                        em.tool_call_end(index).await?;
                    }
                    (Some("custom_tool_call"), previous) => {
                        let (index, mut raw) = match previous {
                            Current::Custom { index, raw } => (index, raw),
                            _ => start_custom_call(em, &item, grammar).await?,
                        };
                        if let Some(piece) = raw.close(item.get("input").and_then(Value::as_str)) {
                            em.tool_call_delta(index, &piece).await?;
                        }
                        em.set_tool_call_raw_args(index, raw.arguments());
                        em.tool_call_end(index).await?;
                    }
                    (_, previous) => current = previous,
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = data.get("response").cloned().unwrap_or(Value::Null);
                if let Some(diagnostic) = reasoning_removals(response.get("input_transformations")) {
                    em.output.push_diagnostic(diagnostic);
                }
                if let Some(id) = response.get("id").and_then(Value::as_str) {
                    em.output.response_id = Some(id.to_string());
                }
                if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
                    let n = |p: &str| usage.pointer(p).and_then(Value::as_u64).unwrap_or(0);
                    let cached = n("/input_tokens_details/cached_tokens");
                    em.output.usage.input = n("/input_tokens").saturating_sub(cached);
                    em.output.usage.output = n("/output_tokens");
                    em.output.usage.cache_read = cached;
                    em.output.usage.cache_write = 0;
                    em.output.usage.total_tokens = n("/total_tokens");
                    em.output.usage.reasoning = Some(n("/output_tokens_details/reasoning_tokens"));
                }
                crate::cost::calculate_cost(model, &mut em.output.usage);
                apply_service_tier(model, &mut em.output.usage, response.get("service_tier"));
                let mut status = response.get("status").and_then(Value::as_str);
                if codex {
                    status = codex_status(status);
                    if let Some(end_turn) = response.get("end_turn").and_then(Value::as_bool) {
                        em.output.extra.insert("endTurn".into(), Value::Bool(end_turn));
                    }
                }
                em.output.raw_stop_reason = status.map(str::to_string);
                em.output.stop_reason = map_status(status);
                // pi 1.6: only the output token limit makes an incomplete response a length
                // stop; any other reason (or none) is an error that says so.
                if status == Some("incomplete") {
                    let reason = response
                        .pointer("/incomplete_details/reason")
                        .and_then(Value::as_str)
                        .filter(|r| !r.is_empty());
                    match reason {
                        Some("max_output_tokens") => {}
                        Some(r) => return Err(format!("Response incomplete: {r}").into()),
                        None => return Err("Response incomplete without a provider reason".into()),
                    }
                }
                if em.output.stop_reason == StopReason::Stop
                    && em.output.content.iter().any(|c| matches!(c, Content::ToolCall(_)))
                {
                    em.output.stop_reason = StopReason::ToolUse;
                }
                if codex {
                    // The Codex reply ends here; a WebSocket stays open for the next request.
                    completed = true;
                    break;
                }
            }
            "error" if codex => {
                let nested = data.get("error").filter(|e| e.is_object());
                let field = |name: &str| {
                    data.get(name)
                        .and_then(Value::as_str)
                        .or_else(|| nested.and_then(|e| e.get(name)).and_then(Value::as_str))
                        .map(str::to_string)
                };
                let code = field("code");
                let message = field("message")
                    .filter(|m| !m.is_empty())
                    .or_else(|| code.clone().filter(|c| !c.is_empty()))
                    .unwrap_or_else(|| data.to_string());
                return Err(Failure::Api {
                    code,
                    message: format!("Codex error: {message}"),
                });
            }
            "response.failed" if codex => {
                let error = data.pointer("/response/error");
                let text = |name: &str| error.and_then(|e| e.get(name)).and_then(Value::as_str);
                return Err(Failure::Api {
                    code: text("code").map(str::to_string),
                    message: text("message")
                        .filter(|m| !m.is_empty())
                        .unwrap_or("Codex response failed")
                        .to_string(),
                });
            }
            "error" => {
                return Err(format!(
                    "Error Code {}: {}",
                    js_text(data.get("code")),
                    js_text(data.get("message"))
                )
                .into());
            }
            "response.failed" => {
                let response = data.get("response");
                let error = response.and_then(|r| r.get("error")).filter(|e| e.is_object());
                let reason = response
                    .and_then(|r| r.pointer("/incomplete_details/reason"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let text = match (error, reason) {
                    (Some(e), _) => format!(
                        "{}: {}",
                        e.get("code")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .unwrap_or("unknown"),
                        e.get("message")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .unwrap_or("no message")
                    ),
                    (None, Some(r)) => format!("incomplete: {r}"),
                    (None, None) => "Unknown error (no error details in response)".to_string(),
                };
                return Err(text.into());
            }
            _ => {}
        }
    }
    if codex && !completed {
        return Err("Codex stream ended without a stop reason".into());
    }
    // A stream cut short leaves its last item open, without an end event: the TypeScript pi
    // does the same, so JSON-mode consumers see identical event sequences.
    if matches!(em.output.stop_reason, StopReason::Error | StopReason::Aborted) {
        return Err("An unknown error occurred".into());
    }
    Ok(())
}

/// Announce a custom tool call; its input fills the argument the declaration names (`input`
/// for a tool the request did not declare as a grammar tool).
async fn start_custom_call(
    em: &mut Emitter,
    item: &Value,
    grammar: &GrammarInputs,
) -> Result<(usize, RawInput), ProviderError> {
    let id = format!("{}|{}", js_text(item.get("call_id")), js_text(item.get("id")));
    let name = item.get("name").and_then(Value::as_str).unwrap_or("");
    let property = grammar.get(name).cloned().unwrap_or_else(|| "input".to_string());
    let index = em.tool_call_start(&id, name).await?;
    let mut raw = RawInput::new(property);
    if let Some(piece) = item.get("input").and_then(Value::as_str).and_then(|i| raw.push(i)) {
        em.tool_call_delta(index, &piece).await?;
    }
    Ok((index, raw))
}

/// Flex is half price, priority double (2.5x for gpt-5.5).
fn apply_service_tier(model: &Model, usage: &mut crate::types::Usage, tier: Option<&Value>) {
    let factor = match tier.and_then(Value::as_str) {
        Some("flex") => 0.5,
        Some("priority") if model.id == "gpt-5.5" => 2.5,
        Some("priority") => 2.0,
        _ => return,
    };
    let c = &mut usage.cost;
    c.input *= factor;
    c.output *= factor;
    c.cache_read *= factor;
    c.cache_write *= factor;
    c.total = c.input + c.output + c.cache_read + c.cache_write;
}

fn push_array(item: &mut Value, key: &str, value: Value) {
    if let Some(obj) = item.as_object_mut() {
        let entry = obj.entry(key.to_string()).or_insert_with(|| json!([]));
        if !entry.is_array() {
            *entry = json!([]);
        }
        if let Some(a) = entry.as_array_mut() {
            a.push(value);
        }
    }
}

/// Append `delta` to `item[key][-1][field]`; false when there is no last part.
fn append_last_text(item: &mut Value, key: &str, field: &str, delta: &str) -> bool {
    let Some(last) = item
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .and_then(|a| a.last_mut())
    else {
        return false;
    };
    let Some(obj) = last.as_object_mut() else {
        return false;
    };
    let entry = obj.entry(field.to_string()).or_insert_with(|| json!(""));
    if !entry.is_string() {
        *entry = json!("");
    }
    // In place: the cost of a delta is the length of the delta.
    if let Value::String(text) = entry {
        text.push_str(delta);
    }
    true
}

/// The `openai_input_transformations` diagnostic for reasoning items the API removed from
/// the input (other than at a turn boundary, where removal is expected), or none.
fn reasoning_removals(list: Option<&Value>) -> Option<Value> {
    let removed: Vec<Value> = list?
        .as_array()?
        .iter()
        .filter(|t| {
            t.get("type").and_then(Value::as_str) == Some("reasoning")
                && t.get("action").and_then(Value::as_str) == Some("removed")
                && t.get("reason").and_then(Value::as_str) != Some("turn_boundary")
        })
        .map(|t| {
            let mut out = serde_json::Map::new();
            for key in ["type", "id", "action", "reason"] {
                if let Some(v) = t.get(key) {
                    out.insert(key.to_string(), v.clone());
                }
            }
            Value::Object(out)
        })
        .collect();
    (!removed.is_empty()).then(|| {
        serde_json::json!({
            "type": "openai_input_transformations",
            "timestamp": crate::now_ms(),
            "details": {"transformations": removed},
        })
    })
}

#[cfg(test)]
mod reasoning_removal_tests {
    use super::reasoning_removals;

    #[test]
    fn only_reasoning_removed_outside_a_turn_boundary_is_reported() {
        let list = serde_json::json!([
            {"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "expired"},
            {"type": "reasoning", "id": "rs_2", "action": "removed", "reason": "turn_boundary"},
            {"type": "message", "id": "m", "action": "removed"}
        ]);
        let d = reasoning_removals(Some(&list)).expect("a diagnostic");
        assert_eq!(d["type"], "openai_input_transformations");
        assert_eq!(
            d["details"]["transformations"],
            serde_json::json!([{"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "expired"}])
        );
        assert!(reasoning_removals(Some(&serde_json::json!([list[1].clone()]))).is_none());
        assert!(reasoning_removals(None).is_none());
    }
}
