//! Session events turned into owned messages for the UI loop, and the loop's bounded
//! channel. Only what the screen needs is copied (stream deltas, not the growing message),
//! so streaming stays linear.
//!
//! The channel is bounded: a producer that outruns the screen waits (session events are
//! awaited, so the run slows instead of buffering), and nothing that matters is dropped.
//! Live tool output is the exception to one-message-per-event: it is coalesced in
//! [`LiveOutput`] (a tool's latest full text replaces the one not yet shown; a `!` command's
//! chunks are appended to the ones not yet shown) and one wake-up message stands for all of
//! it, so a slow screen draws the newest output once instead of every stale step.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use pi_agent::{AgentEvent, AgentMessage};
use pi_ai::{AssistantMessage, AssistantMessageEvent, Message};
use serde_json::Value;
use tokio::sync::mpsc;

use super::effect::Then;

use super::tool_block::content_text;
use pi_coding_agent::session::{SessionEvent, SessionListener};

/// What the UI hears from the session.
#[derive(Debug, Clone)]
pub enum UiEvent {
    AgentStart,
    AgentEnd,
    UserMessage(String, Vec<pi_ai::ImageContent>),
    AssistantStart,
    TextDelta(usize, String),
    ThinkingDelta(usize, String),
    ToolCallStart {
        id: String,
        name: String,
    },
    ToolCallEnd {
        id: String,
        name: String,
        args: Value,
    },
    AssistantEnd(Box<AssistantMessage>),
    ToolStart {
        id: String,
        name: String,
        args: Value,
    },
    ToolUpdate {
        id: String,
        text: String,
    },
    ToolEnd {
        id: String,
        text: String,
        is_error: bool,
        images: Vec<pi_ai::ImageContent>,
        /// The result's details (for extension result renderers).
        details: Option<Value>,
    },
    RetryStart {
        attempt: u32,
        max: u32,
        delay_ms: u64,
    },
    RetryEnd {
        success: bool,
        final_error: Option<String>,
    },
    CompactionStart {
        overflow: bool,
        manual: bool,
    },
    CompactionEnd {
        error: Option<String>,
        /// What the summary cost, when the compaction recorded it.
        usage: Option<serde_json::Value>,
        /// The summary and the tokens before it, when it succeeded.
        summary: Option<(String, u64)>,
    },
    Queue {
        steering: Vec<String>,
        follow_up: Vec<String>,
    },
    SessionName,
    /// A custom message to show (`display: true`), as extensions see it.
    CustomMessage(Value),
    /// A custom entry an extension appended (`pi.appendEntry`), for its entry renderer.
    CustomEntry(Value),
    /// A cache warm was recorded: what it cost, and its note.
    CacheWarmed {
        cost: f64,
        note: Option<String>,
    },
    ThinkingLevel,
    /// The prompt is over: every retry, compaction and queued message done.
    Settled {
        aborted: bool,
    },
}

/// Everything the loop reacts to.
pub enum Msg {
    Input(Vec<u8>),
    /// Keys back from extensions' `onTerminalInput` listeners (maybe rewritten), to handle
    /// without asking them again.
    FilteredInput(String),
    InputEnd,
    Resize,
    Ui(UiEvent),
    /// Live tool output is waiting in [`LiveOutput`].
    Live,
    /// A task finished: its continuation, run with a fresh context.
    Then(Then),
    /// A prompt (or the initial prompts) finished; an error to show, if any.
    PromptDone(Option<String>),
    /// A `!` command finished.
    BashDone {
        id: String,
        output: String,
        exit_code: Option<i32>,
        cancelled: bool,
        truncated_path: Option<String>,
    },
    /// Queued texts taken back after an abort or a dequeue.
    Restore {
        texts: Vec<String>,
        announce: bool,
    },
    /// The startup check found newer versions of these installed packages.
    PackageUpdates(Vec<String>),
}

/// How many messages wait in the channel before producers wait.
pub const CHANNEL_CAPACITY: usize = 256;

/// Output of a running tool not yet shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveUpdate {
    /// The tool's whole output so far.
    Replace(String),
    /// Output to add after what is shown.
    Append(String),
}

/// Live tool output between its producers and the screen, coalesced per tool.
#[derive(Default)]
pub struct LiveOutput {
    pending: Mutex<Vec<(String, LiveUpdate)>>,
    /// Bytes handed over so far (what the screen will have to take in).
    bytes: AtomicUsize,
}

impl LiveOutput {
    /// Add an update; true when nothing was waiting before (a wake-up is needed).
    fn push(&self, id: &str, update: LiveUpdate) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let was_empty = pending.is_empty();
        let added = match &update {
            LiveUpdate::Replace(t) | LiveUpdate::Append(t) => t.len(),
        };
        self.bytes.fetch_add(added, Ordering::Relaxed);
        match pending.iter_mut().find(|(i, _)| i == id) {
            None => pending.push((id.to_string(), update)),
            Some((_, slot)) => match (slot, update) {
                (slot, LiveUpdate::Replace(t)) => *slot = LiveUpdate::Replace(t),
                (LiveUpdate::Replace(t) | LiveUpdate::Append(t), LiveUpdate::Append(more)) => t.push_str(&more),
            },
        }
        was_empty
    }

    /// Return updates whose block is not on screen yet (its start is still in the
    /// channel): they go before anything that arrived for the same tool meanwhile.
    pub fn put_back(&self, items: Vec<(String, LiveUpdate)>) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        for (id, older) in items {
            match pending.iter_mut().find(|(i, _)| *i == id) {
                None => pending.push((id, older)),
                Some((_, newer)) => {
                    if let LiveUpdate::Append(more) = newer {
                        let merged = match older {
                            LiveUpdate::Replace(mut t) => {
                                t.push_str(more);
                                LiveUpdate::Replace(t)
                            }
                            LiveUpdate::Append(mut t) => {
                                t.push_str(more);
                                LiveUpdate::Append(t)
                            }
                        };
                        *newer = merged;
                    }
                }
            }
        }
    }

    /// Everything waiting, oldest tool first.
    pub fn drain(&self) -> Vec<(String, LiveUpdate)> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Bytes handed over since the start.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// The sending side of the loop's channel.
#[derive(Clone)]
pub struct UiSender {
    tx: mpsc::Sender<Msg>,
    live: Arc<LiveOutput>,
}

impl UiSender {
    pub fn channel() -> (UiSender, mpsc::Receiver<Msg>) {
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        (
            UiSender {
                tx,
                live: Arc::default(),
            },
            rx,
        )
    }

    /// Send from a task, waiting while the channel is full; false once the loop is gone.
    pub async fn send(&self, msg: Msg) -> bool {
        self.tx.send(msg).await.is_ok()
    }

    /// Send from a thread outside the runtime (input reader, blocking pool).
    pub fn send_blocking(&self, msg: Msg) -> bool {
        self.tx.blocking_send(msg).is_ok()
    }

    pub fn live(&self) -> &LiveOutput {
        &self.live
    }

    /// A tool's whole output so far (from a task).
    pub async fn tool_output(&self, id: &str, text: String) {
        if self.live.push(id, LiveUpdate::Replace(text)) {
            let _ = self.tx.send(Msg::Live).await;
        }
    }

    /// A chunk of a `!` command's output, from a callback that cannot wait: when the
    /// channel is full the wake-up is skipped and the loop's timer picks the chunk up.
    pub fn append_output(&self, id: &str, chunk: &str) {
        if self.live.push(id, LiveUpdate::Append(chunk.to_string())) {
            let _ = self.tx.try_send(Msg::Live);
        }
    }
}

/// Forwards session events into the loop's channel.
pub struct Forward(pub UiSender);

fn images_of(content: &[pi_ai::Content]) -> Vec<pi_ai::ImageContent> {
    content
        .iter()
        .filter_map(|c| match c {
            pi_ai::Content::Image(i) => Some(i.clone()),
            _ => None,
        })
        .collect()
}

fn convert(event: &SessionEvent<'_>) -> Option<UiEvent> {
    Some(match event {
        SessionEvent::Agent(a) => match a {
            AgentEvent::AgentStart => UiEvent::AgentStart,
            AgentEvent::AgentEnd { .. } => UiEvent::AgentEnd,
            AgentEvent::MessageStart { message } => match message {
                AgentMessage::Llm(Message::User(u)) => UiEvent::UserMessage(
                    u.content.text(),
                    images_of(match &u.content {
                        pi_ai::UserContent::Blocks(b) => b,
                        pi_ai::UserContent::Text(_) => &[],
                    }),
                ),
                AgentMessage::Llm(Message::Assistant(_)) => UiEvent::AssistantStart,
                _ => return None,
            },
            AgentEvent::MessageUpdate {
                assistant_message_event,
                ..
            } => match assistant_message_event {
                AssistantMessageEvent::TextDelta { content_index, delta } => {
                    UiEvent::TextDelta(*content_index, delta.clone())
                }
                AssistantMessageEvent::ThinkingDelta { content_index, delta } => {
                    UiEvent::ThinkingDelta(*content_index, delta.clone())
                }
                AssistantMessageEvent::ToolCallStart { id, name, .. } => UiEvent::ToolCallStart {
                    id: id.clone(),
                    name: name.clone(),
                },
                AssistantMessageEvent::ToolCallEnd { tool_call, .. } => UiEvent::ToolCallEnd {
                    id: tool_call.id.clone(),
                    name: tool_call.name.clone(),
                    args: tool_call.arguments.clone(),
                },
                _ => return None,
            },
            AgentEvent::MessageEnd { message } => match message {
                AgentMessage::Llm(Message::Assistant(m)) => {
                    UiEvent::AssistantEnd(Box::new(pi_ai::AssistantMessage::clone(m)))
                }
                AgentMessage::Custom(c) if c.fields.get("display").and_then(Value::as_bool) == Some(true) => {
                    UiEvent::CustomMessage(super::view::custom_message_json(c))
                }
                _ => return None,
            },
            // Calls made by a codemode script show inside the script's row (its details).
            AgentEvent::ToolExecutionStart {
                parent_tool_call_id: Some(_),
                ..
            }
            | AgentEvent::ToolExecutionUpdate {
                parent_tool_call_id: Some(_),
                ..
            }
            | AgentEvent::ToolExecutionEnd {
                parent_tool_call_id: Some(_),
                ..
            } => return None,
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                ..
            } => UiEvent::ToolStart {
                id: tool_call_id.clone(),
                name: tool_name.clone(),
                args: args.clone(),
            },
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => UiEvent::ToolUpdate {
                id: tool_call_id.clone(),
                text: content_text(&partial_result.content),
            },
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } => UiEvent::ToolEnd {
                id: tool_call_id.clone(),
                text: content_text(&result.content),
                is_error: *is_error,
                images: images_of(&result.content),
                details: result.details.clone(),
            },
            AgentEvent::TurnStart | AgentEvent::TurnEnd { .. } => return None,
        },
        SessionEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            ..
        } => UiEvent::RetryStart {
            attempt: *attempt,
            max: *max_attempts,
            delay_ms: *delay_ms,
        },
        SessionEvent::AutoRetryEnd {
            success, final_error, ..
        } => UiEvent::RetryEnd {
            success: *success,
            final_error: final_error.clone(),
        },
        SessionEvent::CompactionStart { reason } => UiEvent::CompactionStart {
            overflow: matches!(reason, pi_coding_agent::session::CompactionReason::Overflow),
            manual: matches!(reason, pi_coding_agent::session::CompactionReason::Manual),
        },
        SessionEvent::CompactionEnd {
            error_message, result, ..
        } => UiEvent::CompactionEnd {
            error: error_message.clone(),
            usage: result.as_ref().and_then(|r| r.get("usage")).cloned(),
            summary: result.as_ref().and_then(|r| {
                let text = r.get("summary")?.as_str()?.to_string();
                Some((text, r.get("tokensBefore").and_then(|v| v.as_u64()).unwrap_or(0)))
            }),
        },
        SessionEvent::QueueUpdate { steering, follow_up } => UiEvent::Queue {
            steering: steering.clone(),
            follow_up: follow_up.clone(),
        },
        SessionEvent::SessionInfoChanged { .. } => UiEvent::SessionName,
        SessionEvent::ThinkingLevelChanged { .. } => UiEvent::ThinkingLevel,
        SessionEvent::AgentSettled { aborted } => UiEvent::Settled { aborted: *aborted },
        SessionEvent::EntryAppended { entry } if entry.get("type").and_then(Value::as_str) == Some("custom") => {
            UiEvent::CustomEntry(entry.clone())
        }
        SessionEvent::EntryAppended { entry } if super::cache_notices::warm_of(entry).is_some() => {
            let (cost, note) = super::cache_notices::warm_of(entry)?;
            UiEvent::CacheWarmed { cost, note }
        }
        SessionEvent::EntryAppended { .. }
        | SessionEvent::SummarizationRetry { .. }
        | SessionEvent::ModelSelected { .. }
        | SessionEvent::TreeNavigated { .. } => return None,
    })
}

#[async_trait]
impl SessionListener for Forward {
    async fn on_event(&self, event: &SessionEvent<'_>) {
        match convert(event) {
            Some(UiEvent::ToolUpdate { id, text }) => self.0.tool_output(&id, text).await,
            Some(ev) => {
                let _ = self.0.send(Msg::Ui(ev)).await;
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn live_output_is_coalesced_per_tool_and_woken_once() {
        let (tx, mut rx) = UiSender::channel();
        tx.tool_output("a", "1".into()).await;
        tx.tool_output("a", "12".into()).await;
        tx.append_output("b", "x");
        tx.append_output("b", "y");
        assert!(matches!(rx.try_recv(), Ok(Msg::Live)));
        assert!(rx.try_recv().is_err(), "one wake-up for everything waiting");
        assert_eq!(
            tx.live().drain(),
            [
                ("a".to_string(), LiveUpdate::Replace("12".into())),
                ("b".to_string(), LiveUpdate::Append("xy".into()))
            ]
        );
        tx.append_output("b", "z");
        assert!(
            matches!(rx.try_recv(), Ok(Msg::Live)),
            "drained: the next update wakes again"
        );
    }

    #[tokio::test]
    async fn a_full_channel_keeps_chunks_for_the_next_drain() {
        let (tx, _rx) = UiSender::channel();
        for _ in 0..CHANNEL_CAPACITY {
            assert!(tx.tx.try_send(Msg::Resize).is_ok());
        }
        tx.append_output("b", "kept");
        assert_eq!(
            tx.live().drain(),
            [("b".to_string(), LiveUpdate::Append("kept".into()))]
        );
    }
}
