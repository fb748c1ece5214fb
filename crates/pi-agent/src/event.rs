//! Agent events: what a run reports, in pi's order, and their JSON-mode line shape.
//!
//! Streaming updates do not copy the partial assistant message into every event (that would cost
//! as much as the message so far, per chunk). A `message_update` carries the provider event and a
//! [`StreamingMessage`] handle to the loop's accumulator. The loop waits for every listener
//! before it applies the next stream event, so while an event is being delivered the handle shows
//! the message exactly as of that event. A listener that keeps an event past its delivery, or
//! forwards it through a channel, calls [`AgentEvent::detach`] first.

use std::sync::{Arc, Mutex, MutexGuard};

use pi_ai::{AssistantMessage, AssistantMessageEvent, Content, PartialMessage, ToolResultMessage};
use serde::Serialize;
use serde_json::Value;

use crate::message::{assistant_json, AgentMessage};
use crate::tool::ToolOutput;

/// The assistant message being streamed, as of the event that carries it.
#[derive(Debug, Clone)]
pub struct StreamingMessage {
    inner: StreamingInner,
}

#[derive(Debug, Clone)]
enum StreamingInner {
    /// Shared with the loop's accumulator: exact while the event is being delivered.
    Live(Arc<Mutex<PartialMessage>>),
    /// A copy taken by [`AgentEvent::detach`].
    Frozen(Arc<AssistantMessage>),
}

impl StreamingMessage {
    pub(crate) fn live(partial: Arc<Mutex<PartialMessage>>) -> Self {
        StreamingMessage {
            inner: StreamingInner::Live(partial),
        }
    }

    /// Run `f` on the message (tool-call arguments still streaming are parsed as far as they go).
    pub fn with<R>(&self, f: impl FnOnce(&AssistantMessage) -> R) -> R {
        match &self.inner {
            StreamingInner::Live(p) => f(lock(p).snapshot()),
            StreamingInner::Frozen(m) => f(m),
        }
    }

    /// A copy of the message.
    pub fn snapshot(&self) -> AssistantMessage {
        self.with(AssistantMessage::clone)
    }

    /// The usage reported so far (zeros until the provider says anything). Cheap: streaming
    /// tool arguments are not parsed for it.
    pub fn usage(&self) -> pi_ai::Usage {
        match &self.inner {
            StreamingInner::Live(p) => lock(p).message().usage,
            StreamingInner::Frozen(m) => m.usage,
        }
    }

    /// The message as pi's JSON (`{"role":"assistant",...}`). While live, blocks that did not
    /// change since the previous event are not encoded again.
    pub fn to_json(&self) -> String {
        match &self.inner {
            StreamingInner::Live(p) => lock(p).to_json(),
            StreamingInner::Frozen(m) => assistant_json(m),
        }
    }

    fn freeze(&self) -> Self {
        match &self.inner {
            StreamingInner::Live(_) => StreamingMessage {
                inner: StreamingInner::Frozen(Arc::new(self.snapshot())),
            },
            StreamingInner::Frozen(_) => self.clone(),
        }
    }
}

/// A poisoned lock only means a panic elsewhere mid-update; the accumulator is still usable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Everything a run reports. See the crate docs for the order.
#[derive(Debug, Clone)]
pub enum AgentEvent {
    AgentStart,
    /// Every message this run added (prompts, injected messages, replies, tool results).
    /// `will_retry`: an automatic retry or recovery run follows (the loop itself never knows
    /// this; the session sets it).
    AgentEnd {
        messages: Vec<AgentMessage>,
        will_retry: bool,
    },
    TurnStart,
    TurnEnd {
        message: AssistantMessage,
        tool_results: Vec<ToolResultMessage>,
    },
    MessageStart {
        message: AgentMessage,
    },
    /// One step of the assistant's stream (never `start`, `done` or `error`: those become
    /// `message_start` and `message_end`).
    MessageUpdate {
        assistant_message_event: AssistantMessageEvent,
        message: StreamingMessage,
    },
    MessageEnd {
        message: AgentMessage,
    },
    /// `parent_tool_call_id` names the running call (a codemode script) that made this call;
    /// `None` for the model's own calls. The same holds for the update and the end.
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        args: Value,
        parent_tool_call_id: Option<String>,
    },
    /// `partial_result` is what the tool reported so far (accumulated, not a delta).
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        args: Value,
        partial_result: ToolOutput,
        parent_tool_call_id: Option<String>,
    },
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        result: ToolOutput,
        is_error: bool,
        /// How long the tool ran; `None` when it never ran.
        duration_ms: Option<u64>,
        parent_tool_call_id: Option<String>,
    },
}

impl AgentEvent {
    /// pi's wire name.
    pub fn type_name(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }

    /// The same event with its streaming message copied, safe to keep or send elsewhere.
    pub fn detach(&self) -> AgentEvent {
        match self {
            AgentEvent::MessageUpdate {
                assistant_message_event,
                message,
            } => AgentEvent::MessageUpdate {
                assistant_message_event: assistant_message_event.clone(),
                message: message.freeze(),
            },
            other => other.clone(),
        }
    }

    /// The event as one JSON line of pi's JSON mode (no trailing newline), field order included.
    pub fn to_json(&self) -> String {
        let t = self.type_name();
        let out = match self {
            AgentEvent::AgentStart | AgentEvent::TurnStart => serde_json::to_string(&Bare { ty: t }),
            AgentEvent::AgentEnd { messages, will_retry } => serde_json::to_string(&AgentEndWire {
                ty: t,
                messages,
                will_retry: *will_retry,
            }),
            AgentEvent::TurnEnd { message, tool_results } => {
                let message = assistant_json(message);
                let results = tool_results_json(tool_results);
                return format!("{{\"type\":\"turn_end\",\"message\":{message},\"toolResults\":{results}}}");
            }
            AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
                serde_json::to_string(&MessageWire { ty: t, message })
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
                message,
            } => {
                // pi 1.6: the delta and the usage so far, never the message (which would make
                // the stream grow with the square of the reply).
                let usage = serde_json::to_string(&message.usage()).unwrap_or_else(|_| "{}".to_string());
                let inner = assistant_message_event.to_delta_json();
                return format!("{{\"type\":\"message_update\",\"usage\":{usage},\"assistantMessageEvent\":{inner}}}");
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                parent_tool_call_id,
            } => serde_json::to_string(&ToolStartWire {
                ty: t,
                tool_call_id,
                tool_name,
                args,
                parent_tool_call_id: parent_tool_call_id.as_deref(),
            }),
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
                parent_tool_call_id,
            } => serde_json::to_string(&ToolUpdateWire {
                ty: t,
                tool_call_id,
                tool_name,
                args,
                partial_result: ToolOutputWire::from(partial_result),
                parent_tool_call_id: parent_tool_call_id.as_deref(),
            }),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
                duration_ms,
                parent_tool_call_id,
            } => serde_json::to_string(&ToolEndWire {
                ty: t,
                tool_call_id,
                tool_name,
                result: ToolOutputWire::from(result),
                is_error: *is_error,
                duration_ms: *duration_ms,
                parent_tool_call_id: parent_tool_call_id.as_deref(),
            }),
        };
        // Serializing plain data into a string cannot fail; keep a valid line regardless.
        out.unwrap_or_else(|_| format!("{{\"type\":\"{t}\"}}"))
    }
}

/// Tool-result messages as pi lists them, each with `"role":"toolResult"` first.
fn tool_results_json(results: &[ToolResultMessage]) -> String {
    let mut out = String::from("[");
    for (i, result) in results.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let body = serde_json::to_string(result).unwrap_or_else(|_| "{}".to_string());
        out.push_str("{\"role\":\"toolResult\",");
        out.push_str(body.strip_prefix('{').unwrap_or("}"));
    }
    out.push(']');
    out
}

#[derive(Serialize)]
struct Bare {
    #[serde(rename = "type")]
    ty: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgentEndWire<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    messages: &'a [AgentMessage],
    will_retry: bool,
}

#[derive(Serialize)]
struct MessageWire<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    message: &'a AgentMessage,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolStartWire<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    tool_call_id: &'a str,
    tool_name: &'a str,
    args: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_tool_call_id: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolUpdateWire<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    tool_call_id: &'a str,
    tool_name: &'a str,
    args: &'a Value,
    partial_result: ToolOutputWire<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_tool_call_id: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolEndWire<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    tool_call_id: &'a str,
    tool_name: &'a str,
    result: ToolOutputWire<'a>,
    is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_tool_call_id: Option<&'a str>,
}

/// A tool result as pi writes it: `{content, details?, terminate?}`.
#[derive(Serialize)]
pub struct ToolOutputWire<'a> {
    content: &'a [Content],
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a Value>,
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a pi_ai::Usage>,
    #[serde(rename = "isError", skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    terminate: bool,
}

impl<'a> From<&'a ToolOutput> for ToolOutputWire<'a> {
    fn from(o: &'a ToolOutput) -> Self {
        ToolOutputWire {
            content: &o.content,
            details: o.details.as_ref(),
            structured_content: o.structured_content.as_ref(),
            is_error: o.is_error,
            usage: o.usage.as_ref(),
            terminate: o.terminate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_carry_structured_content_and_a_returned_error() {
        let out = ToolOutput {
            content: vec![Content::text("failing")],
            structured_content: Some(serde_json::json!({"exit_code": 3})),
            is_error: true,
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&ToolOutputWire::from(&out)).expect("json"),
            r#"{"content":[{"type":"text","text":"failing"}],"structuredContent":{"exit_code":3},"isError":true}"#
        );
        let plain = ToolOutput::text("ok");
        assert_eq!(
            serde_json::to_string(&ToolOutputWire::from(&plain)).expect("json"),
            r#"{"content":[{"type":"text","text":"ok"}]}"#
        );
    }
    use pi_ai::{StopReason, TextContent};

    fn partial_with_text(text: &str) -> Arc<Mutex<PartialMessage>> {
        let mut p = PartialMessage::new();
        p.apply(&AssistantMessageEvent::Start {
            partial: AssistantMessage {
                api: "a".into(),
                provider: "p".into(),
                model: "m".into(),
                ..Default::default()
            },
        });
        p.apply(&AssistantMessageEvent::TextStart { content_index: 0 });
        p.apply(&AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: text.into(),
        });
        Arc::new(Mutex::new(p))
    }

    #[test]
    fn message_update_line_has_pi_shape() {
        let shared = partial_with_text("hi");
        let ev = AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: "hi".into(),
            },
            message: StreamingMessage::live(shared),
        };
        let line = ev.to_json();
        let v: Value = serde_json::from_str(&line).expect("valid json");
        let keys: Vec<&str> = v.as_object().expect("object").keys().map(String::as_str).collect();
        assert_eq!(keys, ["type", "usage", "assistantMessageEvent"]);
        let inner: Vec<&str> = v["assistantMessageEvent"]
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(inner, ["type", "contentIndex", "delta"]);
        assert_eq!(v["usage"]["totalTokens"], 0);
    }

    #[test]
    fn message_update_size_does_not_grow_with_the_message() {
        let shared = partial_with_text(&"x".repeat(100_000));
        let ev = AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: "y".into(),
            },
            message: StreamingMessage::live(shared),
        };
        assert!(ev.to_json().len() < 400, "{}", ev.to_json().len());
    }

    #[test]
    fn agent_end_says_whether_a_retry_follows() {
        let ev = AgentEvent::AgentEnd {
            messages: vec![],
            will_retry: true,
        };
        assert_eq!(ev.to_json(), r#"{"type":"agent_end","messages":[],"willRetry":true}"#);
    }

    #[test]
    fn detach_freezes_the_partial() {
        let shared = partial_with_text("a");
        let ev = AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextStart { content_index: 0 },
            message: StreamingMessage::live(shared.clone()),
        };
        let kept = ev.detach();
        lock(&shared).apply(&AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: "b".into(),
        });
        let AgentEvent::MessageUpdate { message, .. } = kept else {
            panic!("expected update")
        };
        assert_eq!(message.snapshot().text(), "a");
    }

    #[test]
    fn tool_end_omits_missing_details() {
        let ev = AgentEvent::ToolExecutionEnd {
            tool_call_id: "c".into(),
            tool_name: "read".into(),
            result: ToolOutput::text("x"),
            is_error: false,
            duration_ms: None,
            parent_tool_call_id: None,
        };
        assert_eq!(
            ev.to_json(),
            r#"{"type":"tool_execution_end","toolCallId":"c","toolName":"read","result":{"content":[{"type":"text","text":"x"}]},"isError":false}"#
        );
        let timed = AgentEvent::ToolExecutionEnd {
            tool_call_id: "c".into(),
            tool_name: "read".into(),
            result: ToolOutput::text("x"),
            is_error: false,
            duration_ms: Some(7),
            parent_tool_call_id: None,
        };
        assert!(timed.to_json().ends_with(r#""isError":false,"durationMs":7}"#));
    }

    #[test]
    fn nested_calls_name_their_parent_last() {
        let start = AgentEvent::ToolExecutionStart {
            tool_call_id: "c/1".into(),
            tool_name: "read".into(),
            args: serde_json::json!({"path": "a"}),
            parent_tool_call_id: Some("c".into()),
        };
        assert_eq!(
            start.to_json(),
            r#"{"type":"tool_execution_start","toolCallId":"c/1","toolName":"read","args":{"path":"a"},"parentToolCallId":"c"}"#
        );
        let end = AgentEvent::ToolExecutionEnd {
            tool_call_id: "c/1".into(),
            tool_name: "read".into(),
            result: ToolOutput::text("x"),
            is_error: false,
            duration_ms: Some(2),
            parent_tool_call_id: Some("c".into()),
        };
        assert!(end
            .to_json()
            .ends_with(r#""isError":false,"durationMs":2,"parentToolCallId":"c"}"#));
    }

    #[test]
    fn end_events_serialize_done_and_text_end() {
        let msg = AssistantMessage {
            content: vec![Content::Text(TextContent {
                text: "x".into(),
                ..Default::default()
            })],
            stop_reason: StopReason::Stop,
            ..Default::default()
        };
        let ev = AgentEvent::TurnEnd {
            message: msg,
            tool_results: vec![],
        };
        let v: Value = serde_json::from_str(&ev.to_json()).expect("json");
        assert_eq!(v["message"]["role"], "assistant");
        assert_eq!(v["toolResults"], serde_json::json!([]));
    }
}
