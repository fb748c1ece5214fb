//! A custom message (`pi.sendMessage` with `display: true`) in the chat: drawn by its
//! extension's message renderer when one is registered for its `customType` (the lines come
//! from the host for a width, an expanded state and a theme), else as pi's default block.
//! A custom entry (`pi.appendEntry`) is a block of the same kind drawn by its entry renderer,
//! and by nothing else (it is not part of the conversation).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pi_tui::{truncate_to_width, Component, Frame};
use serde_json::Value;

use super::super::chat::Notice;
use super::super::theme::UiTheme;

/// Counts blocks made without renderer lines, so the app knows when to look for them.
static MADE: AtomicU64 = AtomicU64::new(0);

/// How many message blocks were made so far.
pub fn made() -> u64 {
    MADE.load(Ordering::Relaxed)
}

/// What a renderer's lines were made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderKey {
    pub width: usize,
    pub expanded: bool,
    /// Changes with every theme.
    pub theme: usize,
}

pub struct MessageBlock {
    /// The message as extensions see it (`role`, `customType`, `content`, `details`, ...).
    message: Value,
    /// pi's block when no renderer draws the message (none for an entry).
    fallback: Option<Notice>,
    rendered: Option<(RenderKey, Option<Vec<String>>)>,
}

impl MessageBlock {
    pub fn new(message: Value, theme: Arc<UiTheme>) -> Self {
        MADE.fetch_add(1, Ordering::Relaxed);
        let text = match message.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            Some(v) => v.to_string(),
            None => String::new(),
        };
        MessageBlock {
            message,
            fallback: Some(Notice::new(text, "customMessageText", theme)),
            rendered: None,
        }
    }

    /// A custom entry (`{type: "custom", customType, data, ...}`), for its entry renderer.
    pub fn entry(entry: Value) -> Self {
        MADE.fetch_add(1, Ordering::Relaxed);
        MessageBlock {
            message: entry,
            fallback: None,
            rendered: None,
        }
    }

    pub fn custom_type(&self) -> Option<&str> {
        self.message.get("customType").and_then(Value::as_str)
    }

    /// Whether this is a custom entry (drawn only by an entry renderer).
    pub fn is_entry(&self) -> bool {
        self.fallback.is_none()
    }

    pub fn message(&self) -> &Value {
        &self.message
    }

    /// Whether the renderer's lines are for `key`.
    pub fn is_rendered_for(&self, key: RenderKey) -> bool {
        self.rendered.as_ref().is_some_and(|(k, _)| *k == key)
    }

    /// The renderer's lines for `key`; `None`: the renderer gave nothing, pi's default shows.
    pub fn set_rendered(&mut self, key: RenderKey, lines: Option<Vec<String>>) {
        self.rendered = Some((key, lines));
    }
}

impl Component for MessageBlock {
    fn render(&mut self, width: usize, out: &mut Frame) {
        match &self.rendered {
            Some((_, Some(lines))) => {
                out.push(super::super::chat::spacer());
                out.extend_lines(lines.iter().map(|l| truncate_to_width(l, width, "")));
            }
            _ => {
                if let Some(fallback) = &mut self.fallback {
                    fallback.render(width, out);
                }
            }
        }
    }

    fn invalidate(&mut self) {
        if let Some(fallback) = &mut self.fallback {
            fallback.invalidate();
        }
    }
}
