//! The assistant-message event stream: events, the channel that carries them, and the
//! accumulator that rebuilds the partial message from them.
//!
//! Unlike the TypeScript pi, events do not carry a copy of the whole partial message: that would
//! make each chunk cost as much as the message so far. A consumer that needs the partial (JSON
//! mode, the TUI) keeps a [`PartialMessage`] and applies every event to it; `to_delta_json`
//! renders an event as pi 1.6 puts it on the wire (the delta alone).

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures::Stream;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::partial_json::parse_partial;
use crate::types::{AssistantMessage, Content, StopReason, TextContent, ThinkingContent, ToolCall};

/// One step of a streaming assistant reply.
#[derive(Debug, Clone, PartialEq)]
pub enum AssistantMessageEvent {
    /// The reply began. `partial` has no content yet but carries api/provider/model/timestamp
    /// and whatever the provider already knows (response id, input usage).
    Start {
        partial: AssistantMessage,
    },
    TextStart {
        content_index: usize,
    },
    TextDelta {
        content_index: usize,
        delta: String,
    },
    /// The finished block (with its signature, if the API gives one).
    TextEnd {
        content_index: usize,
        content: TextContent,
    },
    ThinkingStart {
        content_index: usize,
    },
    ThinkingDelta {
        content_index: usize,
        delta: String,
    },
    ThinkingEnd {
        content_index: usize,
        content: ThinkingContent,
    },
    ToolCallStart {
        content_index: usize,
        id: String,
        name: String,
    },
    /// A raw fragment of the arguments' JSON.
    ToolCallDelta {
        content_index: usize,
        delta: String,
    },
    ToolCallEnd {
        content_index: usize,
        tool_call: ToolCall,
    },
    /// The reply completed; `message` is final (reason is stop, length or toolUse).
    Done {
        reason: StopReason,
        message: AssistantMessage,
    },
    /// The reply failed or was aborted; `error` keeps partial content and usage.
    Error {
        reason: StopReason,
        error: AssistantMessage,
    },
}

impl AssistantMessageEvent {
    /// True for `Done` and `Error`, after which nothing more arrives.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Error { .. })
    }

    /// pi's wire name of the event.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Start { .. } => "start",
            Self::TextStart { .. } => "text_start",
            Self::TextDelta { .. } => "text_delta",
            Self::TextEnd { .. } => "text_end",
            Self::ThinkingStart { .. } => "thinking_start",
            Self::ThinkingDelta { .. } => "thinking_delta",
            Self::ThinkingEnd { .. } => "thinking_end",
            Self::ToolCallStart { .. } => "toolcall_start",
            Self::ToolCallDelta { .. } => "toolcall_delta",
            Self::ToolCallEnd { .. } => "toolcall_end",
            Self::Done { .. } => "done",
            Self::Error { .. } => "error",
        }
    }

    /// The event as pi 1.6 writes it inside a `message_update`: the delta alone, without the
    /// partial message (`toolcall_start` names the call's `id` and `toolName`). Its cost is the
    /// size of the event, never of the message so far.
    pub fn to_delta_json(&self) -> String {
        use AssistantMessageEvent as E;
        let t = self.type_name();
        let s = |v: &str| serde_json::to_string(v).unwrap_or_else(|_| "\"\"".to_string());
        match self {
            E::Start { .. } => format!("{{\"type\":\"{t}\"}}"),
            E::TextStart { content_index } | E::ThinkingStart { content_index } => {
                format!("{{\"type\":\"{t}\",\"contentIndex\":{content_index}}}")
            }
            E::ToolCallStart {
                content_index,
                id,
                name,
            } => format!(
                "{{\"type\":\"{t}\",\"contentIndex\":{content_index},\"id\":{},\"toolName\":{}}}",
                s(id),
                s(name)
            ),
            E::TextDelta { content_index, delta }
            | E::ThinkingDelta { content_index, delta }
            | E::ToolCallDelta { content_index, delta } => format!(
                "{{\"type\":\"{t}\",\"contentIndex\":{content_index},\"delta\":{}}}",
                s(delta)
            ),
            E::TextEnd { content_index, content } => format!(
                "{{\"type\":\"{t}\",\"contentIndex\":{content_index},\"content\":{}}}",
                s(&content.text)
            ),
            E::ThinkingEnd { content_index, content } => format!(
                "{{\"type\":\"{t}\",\"contentIndex\":{content_index},\"content\":{}}}",
                s(&content.thinking)
            ),
            E::ToolCallEnd {
                content_index,
                tool_call,
            } => {
                let call = serde_json::to_string(&ToolCallWire(tool_call)).unwrap_or_else(|_| "{}".to_string());
                format!("{{\"type\":\"{t}\",\"contentIndex\":{content_index},\"toolCall\":{call}}}")
            }
            E::Done { reason, message } => format!(
                "{{\"type\":\"{t}\",\"reason\":\"{}\",\"message\":{}}}",
                reason.as_str(),
                assistant_json(message)
            ),
            E::Error { reason, error } => format!(
                "{{\"type\":\"{t}\",\"reason\":\"{}\",\"error\":{}}}",
                reason.as_str(),
                assistant_json(error)
            ),
        }
    }
}

/// A tool call block serialized by reference (`{"type":"toolCall",...}`) without cloning it.
struct ToolCallWire<'a>(&'a ToolCall);

impl serde::Serialize for ToolCallWire<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let call = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "toolCall")?;
        map.serialize_entry("id", &call.id)?;
        map.serialize_entry("name", &call.name)?;
        map.serialize_entry("arguments", &call.arguments)?;
        if let Some(sig) = &call.thought_signature {
            map.serialize_entry("thoughtSignature", sig)?;
        }
        for (k, v) in &call.extra {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// An assistant message as pi writes it, `"role":"assistant"` first, without cloning it.
pub fn assistant_json(message: &AssistantMessage) -> String {
    let body = serde_json::to_string(message).unwrap_or_else(|_| "{}".to_string());
    match body.strip_prefix('{') {
        Some(rest) if rest != "}" => format!("{{\"role\":\"assistant\",{rest}"),
        _ => "{\"role\":\"assistant\"}".to_string(),
    }
}

/// Rebuilds the partial assistant message from events, cheaply: text deltas append, and the
/// arguments of a streaming tool call are parsed only when a snapshot is asked for.
#[derive(Debug, Clone, Default)]
pub struct PartialMessage {
    message: AssistantMessage,
    /// Raw JSON of tool calls still streaming, by content index.
    pending_args: Vec<(usize, String)>,
    /// Whether `message` reflects every pending argument buffer.
    args_fresh: bool,
    /// The JSON of each content block as last serialized (`None`: changed since). Text and
    /// thinking deltas extend the cached JSON in place, so serializing the partial after each
    /// delta costs the size of the delta plus a copy, not a fresh encoding of the whole text.
    json_blocks: Vec<Option<String>>,
}

/// `text` as the inside of a JSON string literal.
fn escape_json_fragment(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default()
        .to_string()
}

impl PartialMessage {
    pub fn new() -> Self {
        Self::default()
    }

    /// Apply one event. Content indices past the end are created on demand so a misbehaving
    /// provider cannot cause a panic.
    pub fn apply(&mut self, event: &AssistantMessageEvent) {
        use AssistantMessageEvent as E;
        match event {
            E::TextDelta { content_index, delta } | E::ThinkingDelta { content_index, delta } => {
                self.extend_cached_json(*content_index, delta);
            }
            E::Start { .. } | E::Done { .. } | E::Error { .. } => self.json_blocks.clear(),
            E::TextStart { content_index }
            | E::TextEnd { content_index, .. }
            | E::ThinkingStart { content_index }
            | E::ThinkingEnd { content_index, .. }
            | E::ToolCallStart { content_index, .. }
            | E::ToolCallDelta { content_index, .. }
            | E::ToolCallEnd { content_index, .. } => self.invalidate_json(*content_index),
        }
        match event {
            E::Start { partial } => {
                self.message = partial.clone();
                self.pending_args.clear();
            }
            E::TextStart { content_index } => {
                self.put(*content_index, Content::Text(TextContent::default()));
            }
            E::TextDelta { content_index, delta } => {
                if let Some(Content::Text(t)) = self.slot(*content_index, || Content::Text(TextContent::default())) {
                    t.text.push_str(delta);
                }
            }
            E::TextEnd { content_index, content } => self.put(*content_index, Content::Text(content.clone())),
            E::ThinkingStart { content_index } => {
                self.put(*content_index, Content::Thinking(ThinkingContent::default()));
            }
            E::ThinkingDelta { content_index, delta } => {
                if let Some(Content::Thinking(t)) =
                    self.slot(*content_index, || Content::Thinking(ThinkingContent::default()))
                {
                    t.thinking.push_str(delta);
                }
            }
            E::ThinkingEnd { content_index, content } => {
                self.put(*content_index, Content::Thinking(content.clone()));
            }
            E::ToolCallStart {
                content_index,
                id,
                name,
            } => {
                let call = ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: Value::Object(Default::default()),
                    ..Default::default()
                };
                self.put(*content_index, Content::ToolCall(call));
                self.pending_args.push((*content_index, String::new()));
            }
            E::ToolCallDelta { content_index, delta } => {
                if let Some((_, buf)) = self.pending_args.iter_mut().find(|(i, _)| i == content_index) {
                    buf.push_str(delta);
                    self.args_fresh = false;
                }
            }
            E::ToolCallEnd {
                content_index,
                tool_call,
            } => {
                self.pending_args.retain(|(i, _)| i != content_index);
                self.put(*content_index, Content::ToolCall(tool_call.clone()));
            }
            E::Done { message, .. } | E::Error { error: message, .. } => {
                self.message = message.clone();
                self.pending_args.clear();
            }
        }
    }

    /// The partial message as of the last applied event, with streaming tool arguments parsed.
    pub fn snapshot(&mut self) -> &AssistantMessage {
        if !self.args_fresh {
            for (index, raw) in &self.pending_args {
                if let Some(Content::ToolCall(tc)) = self.message.content.get_mut(*index) {
                    tc.arguments = parse_partial(raw);
                }
            }
            self.args_fresh = true;
        }
        &self.message
    }

    /// The partial message as pi's JSON (`{"role":"assistant",...}`), with streaming tool
    /// arguments parsed. Blocks unchanged since the last call are not encoded again.
    pub fn to_json(&mut self) -> String {
        if !self.args_fresh {
            for (index, _) in &self.pending_args {
                if let Some(slot) = self.json_blocks.get_mut(*index) {
                    *slot = None;
                }
            }
        }
        self.snapshot();
        let content = std::mem::take(&mut self.message.content);
        let meta = serde_json::to_string(&self.message).unwrap_or_default();
        self.message.content = content;
        self.json_blocks.resize(self.message.content.len(), None);
        let mut out = String::with_capacity(meta.len() + 64);
        out.push_str("{\"role\":\"assistant\",\"content\":[");
        for (i, block) in self.message.content.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let cached = self.json_blocks[i].get_or_insert_with(|| serde_json::to_string(block).unwrap_or_default());
            out.push_str(cached);
        }
        out.push(']');
        // `meta` is `{"content":[],...}`: keep what follows the empty content list.
        out.push_str(meta.strip_prefix("{\"content\":[]").unwrap_or("}"));
        out
    }

    fn invalidate_json(&mut self, index: usize) {
        if let Some(slot) = self.json_blocks.get_mut(index) {
            *slot = None;
        }
    }

    /// Append a text or thinking delta to the block's cached JSON, which for a block still
    /// streaming (no signature yet) always ends with the closing `"}` of that text.
    fn extend_cached_json(&mut self, index: usize, delta: &str) {
        let plain = match self.message.content.get(index) {
            Some(Content::Text(t)) => t.text_signature.is_none() && t.extra.is_empty(),
            Some(Content::Thinking(t)) => t.thinking_signature.is_none() && t.redacted.is_none() && t.extra.is_empty(),
            _ => false,
        };
        match self.json_blocks.get_mut(index) {
            Some(Some(json)) if plain && json.ends_with("\"}") => {
                json.truncate(json.len() - 2);
                json.push_str(&escape_json_fragment(delta));
                json.push_str("\"}");
            }
            Some(slot) => *slot = None,
            None => {}
        }
    }

    /// The message without refreshing streaming tool arguments (cheap).
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    pub fn into_message(mut self) -> AssistantMessage {
        self.snapshot();
        self.message
    }

    fn put(&mut self, index: usize, block: Content) {
        let content = &mut self.message.content;
        if index < content.len() {
            content[index] = block;
        } else {
            while content.len() < index {
                content.push(Content::text(""));
            }
            content.push(block);
        }
    }

    fn slot(&mut self, index: usize, make: impl FnOnce() -> Content) -> Option<&mut Content> {
        if index >= self.message.content.len() {
            self.put(index, make());
        }
        self.message.content.get_mut(index)
    }
}

/// The sending half held by a provider task. After a terminal event every further send is
/// ignored, and a dropped receiver is not an error (the consumer simply stopped listening).
#[derive(Debug)]
pub struct EventSender {
    tx: mpsc::Sender<AssistantMessageEvent>,
    finished: bool,
}

impl EventSender {
    /// Send one event, waiting while the consumer is behind (backpressure reaches the socket).
    /// Returns false when the consumer is gone or the stream already ended.
    pub async fn send(&mut self, event: AssistantMessageEvent) -> bool {
        if self.finished {
            return false;
        }
        if event.is_terminal() {
            self.finished = true;
        }
        self.tx.send(event).await.is_ok()
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// True when the receiving side was dropped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// A stream of [`AssistantMessageEvent`]s ending with `Done` or `Error`.
#[derive(Debug)]
pub struct AssistantStream {
    rx: mpsc::Receiver<AssistantMessageEvent>,
}

/// How many events may wait between a provider and its consumer.
const CHANNEL_DEPTH: usize = 64;

/// A connected sender and stream.
pub fn event_channel() -> (EventSender, AssistantStream) {
    let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
    (EventSender { tx, finished: false }, AssistantStream { rx })
}

impl AssistantStream {
    /// A stream that yields `events` and ends (for tests and faux providers).
    pub fn from_events(events: Vec<AssistantMessageEvent>) -> Self {
        let (tx, rx) = mpsc::channel(events.len().max(1));
        for e in events {
            // Capacity equals the number of events, so this never fails.
            let _ = tx.try_send(e);
        }
        AssistantStream { rx }
    }

    /// Receive the next event; `None` after the terminal event has been taken or the sender
    /// vanished.
    pub async fn next_event(&mut self) -> Option<AssistantMessageEvent> {
        self.rx.recv().await
    }

    /// Drain the stream and return the final message. A sender that vanished without a
    /// terminal event yields an error message rather than a panic.
    pub async fn result(mut self) -> AssistantMessage {
        let mut partial = PartialMessage::new();
        while let Some(event) = self.rx.recv().await {
            match event {
                AssistantMessageEvent::Done { message, .. } => return message,
                AssistantMessageEvent::Error { error, .. } => return error,
                other => partial.apply(&other),
            }
        }
        let mut message = partial.into_message();
        message.stop_reason = StopReason::Error;
        message.error_message = Some("Stream ended without a final event".to_string());
        message
    }
}

impl Stream for AssistantStream {
    type Item = AssistantMessageEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use serde_json::json;

    fn start() -> AssistantMessageEvent {
        AssistantMessageEvent::Start {
            partial: AssistantMessage {
                api: "a".into(),
                provider: "p".into(),
                model: "m".into(),
                ..Default::default()
            },
        }
    }

    #[test]
    fn accumulator_rebuilds_text_and_tool_calls() {
        let mut p = PartialMessage::new();
        p.apply(&start());
        p.apply(&AssistantMessageEvent::TextStart { content_index: 0 });
        p.apply(&AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: "Hel".into(),
        });
        p.apply(&AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: "lo".into(),
        });
        p.apply(&AssistantMessageEvent::ToolCallStart {
            content_index: 1,
            id: "c1".into(),
            name: "read".into(),
        });
        p.apply(&AssistantMessageEvent::ToolCallDelta {
            content_index: 1,
            delta: r#"{"path":"a."#.into(),
        });
        let snap = p.snapshot().clone();
        assert_eq!(snap.text(), "Hello");
        assert_eq!(
            snap.tool_calls().next().map(|t| t.arguments.clone()),
            Some(json!({"path": "a."}))
        );
    }

    #[test]
    fn cached_json_equals_a_fresh_encoding_after_every_event() {
        let events = vec![
            start(),
            AssistantMessageEvent::ThinkingStart { content_index: 0 },
            AssistantMessageEvent::ThinkingDelta {
                content_index: 0,
                delta: "hm \"q\"\n".into(),
            },
            AssistantMessageEvent::ThinkingEnd {
                content_index: 0,
                content: ThinkingContent {
                    thinking: "hm \"q\"\n".into(),
                    thinking_signature: Some("s".into()),
                    ..Default::default()
                },
            },
            AssistantMessageEvent::TextStart { content_index: 1 },
            AssistantMessageEvent::TextDelta {
                content_index: 1,
                delta: "é\t<".into(),
            },
            AssistantMessageEvent::TextDelta {
                content_index: 1,
                delta: "\u{1F600}".into(),
            },
            AssistantMessageEvent::ToolCallStart {
                content_index: 2,
                id: "c".into(),
                name: "read".into(),
            },
            AssistantMessageEvent::ToolCallDelta {
                content_index: 2,
                delta: r#"{"path":"a"#.into(),
            },
        ];
        let mut p = PartialMessage::new();
        for e in &events {
            p.apply(e);
            let cached = p.to_json();
            let mut fresh =
                serde_json::to_value(crate::types::Message::Assistant(Arc::new(p.snapshot().clone()))).expect("json");
            // Field order: role first, as pi writes it.
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&cached).expect("valid json"),
                fresh.take()
            );
            assert!(cached.starts_with(r#"{"role":"assistant","content":["#));
        }
    }

    #[test]
    fn out_of_range_indices_do_not_panic() {
        let mut p = PartialMessage::new();
        p.apply(&AssistantMessageEvent::TextDelta {
            content_index: 3,
            delta: "x".into(),
        });
        assert_eq!(p.message().content.len(), 4);
    }

    #[test]
    fn delta_json_carries_no_partial() {
        let ev = AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: "x\"".into(),
        };
        assert_eq!(
            ev.to_delta_json(),
            r#"{"type":"text_delta","contentIndex":0,"delta":"x\""}"#
        );
        let start = AssistantMessageEvent::ToolCallStart {
            content_index: 2,
            id: "c1".into(),
            name: "read".into(),
        };
        assert_eq!(
            start.to_delta_json(),
            r#"{"type":"toolcall_start","contentIndex":2,"id":"c1","toolName":"read"}"#
        );
        let end = AssistantMessageEvent::ToolCallEnd {
            content_index: 2,
            tool_call: ToolCall {
                id: "c1".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                ..Default::default()
            },
        };
        let v: Value = serde_json::from_str(&end.to_delta_json()).expect("valid json");
        assert_eq!(
            v["toolCall"],
            serde_json::to_value(Content::ToolCall(ToolCall {
                id: "c1".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                ..Default::default()
            }))
            .expect("json")
        );
        assert!(v.get("partial").is_none());
    }

    #[tokio::test]
    async fn sender_ignores_events_after_terminal() {
        let (mut tx, rx) = event_channel();
        assert!(tx.send(start()).await);
        let done = AssistantMessageEvent::Done {
            reason: StopReason::Stop,
            message: AssistantMessage::default(),
        };
        assert!(tx.send(done).await);
        assert!(!tx.send(AssistantMessageEvent::TextStart { content_index: 0 }).await);
        drop(tx);
        let msg = rx.result().await;
        assert_eq!(msg.stop_reason, StopReason::Stop);
    }

    #[tokio::test]
    async fn vanished_sender_becomes_error() {
        let (mut tx, rx) = event_channel();
        tx.send(start()).await;
        drop(tx);
        let msg = rx.result().await;
        assert_eq!(msg.stop_reason, StopReason::Error);
    }
}
