//! Session events turned into owned messages for the UI loop. Only what the screen needs is
//! copied (stream deltas, not the growing message), so streaming stays linear.

use async_trait::async_trait;
use pi_agent::{AgentEvent, AgentMessage};
use pi_ai::{AssistantMessage, AssistantMessageEvent, Message};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::tool_block::content_text;
use crate::session::{SessionEvent, SessionListener};

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
    },
    Queue {
        steering: Vec<String>,
        follow_up: Vec<String>,
    },
    SessionName,
    ThinkingLevel,
}

/// Everything the loop reacts to.
pub enum Msg {
    Input(Vec<u8>),
    InputEnd,
    Resize,
    Ui(UiEvent),
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
    /// The session host replaced the session (new / resume / fork / clone / import).
    Replaced {
        notice: Option<String>,
        editor_text: Option<String>,
    },
    /// A background command's message for the chat (`error` in red).
    Notice {
        text: String,
        error: bool,
    },
    /// Refresh the footer (model or thinking level changed in the background).
    Footer,
    /// The background task in the status line ended; its outcome for the chat.
    TaskDone {
        text: String,
        error: bool,
    },
    /// The startup check found newer versions of these installed packages.
    PackageUpdates(Vec<String>),
    /// `/tree` navigation to `target` finished.
    TreeDone {
        target: String,
        result: Result<crate::session::tree_ops::NavigateOutcome, String>,
    },
}

/// Forwards session events into the loop's channel.
pub struct Forward(pub UnboundedSender<Msg>);

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
                AgentMessage::Llm(Message::Assistant(m)) => UiEvent::AssistantEnd(Box::new(m.clone())),
                _ => return None,
            },
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
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
            overflow: matches!(reason, crate::session::CompactionReason::Overflow),
            manual: matches!(reason, crate::session::CompactionReason::Manual),
        },
        SessionEvent::CompactionEnd { error_message, .. } => UiEvent::CompactionEnd {
            error: error_message.clone(),
        },
        SessionEvent::QueueUpdate { steering, follow_up } => UiEvent::Queue {
            steering: steering.clone(),
            follow_up: follow_up.clone(),
        },
        SessionEvent::SessionInfoChanged { .. } => UiEvent::SessionName,
        SessionEvent::ThinkingLevelChanged { .. } => UiEvent::ThinkingLevel,
    })
}

#[async_trait]
impl SessionListener for Forward {
    async fn on_event(&self, event: &SessionEvent<'_>) {
        if let Some(ev) = convert(event) {
            let _ = self.0.send(Msg::Ui(ev));
        }
    }
}
