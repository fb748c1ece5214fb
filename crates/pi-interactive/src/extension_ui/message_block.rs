//! A custom message (`pi.sendMessage` with `display: true`) in the chat: drawn by its
//! extension's message renderer when one is registered for its `customType` (the lines come
//! from the host for a width, an expanded state and a theme), else as pi's default block.
//! A custom entry (`pi.appendEntry`) is a block of the same kind drawn by its entry renderer,
//! and by nothing else (it is not part of the conversation). When the chat is built from a
//! session, its entries go where they stand among the messages ([`branch_entries`]).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pi_session::{Entry, EntryKind};
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

/// Where the chat's entries of the branch `path` start: at the last compaction's first kept
/// entry (or the compaction itself when that entry is gone), else at the root.
pub fn first_shown_entry(path: &[&Entry]) -> usize {
    let compaction = path
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction { .. }));
    match compaction.map(|at| (at, &path[at].kind)) {
        Some((
            at,
            EntryKind::Compaction {
                first_kept_entry_id, ..
            },
        )) => path[..at]
            .iter()
            .position(|e| &e.id == first_kept_entry_id)
            .unwrap_or(at),
        _ => 0,
    }
}

/// The custom entries of the branch `path` whose type is one of `types`, as extensions see
/// them, each with the number of context messages before it (of `messages`, the context's
/// length), in order. Entries a compaction left out of the context are not shown, as pi
/// shows only the context's entries.
pub fn branch_entries(path: &[&Entry], types: &HashSet<String>, messages: usize) -> Vec<(usize, Value)> {
    if types.is_empty() {
        return Vec::new();
    }
    let shown_from = first_shown_entry(path);
    // Counted from the end: the messages after an entry end the context in order.
    let mut after = 0usize;
    let mut out = Vec::new();
    for entry in path[shown_from..].iter().rev() {
        match &entry.kind {
            EntryKind::Custom { custom_type, .. } if types.contains(custom_type) => {
                if let Ok(value) = serde_json::to_value(entry) {
                    out.push((messages.saturating_sub(after), value));
                }
            }
            EntryKind::Message { .. } | EntryKind::CustomMessage { .. } => after += 1,
            EntryKind::BranchSummary { summary, .. } if !summary.is_empty() => after += 1,
            _ => {}
        }
    }
    out.reverse();
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Entry {
        Entry::from_value(v).expect("entry")
    }

    fn message(id: &str, role: &str) -> Entry {
        let m = match role {
            "user" => json!({"role": "user", "content": "hi", "timestamp": 1}),
            _ => json!({"role": "assistant", "content": [], "api": "x", "provider": "p", "model": "m",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": "stop", "timestamp": 1}),
        };
        entry(
            json!({"type": "message", "id": id, "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z", "message": m}),
        )
    }

    fn card(id: &str, custom_type: &str) -> Entry {
        entry(
            json!({"type": "custom", "id": id, "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z",
            "customType": custom_type, "data": {"n": id}}),
        )
    }

    #[test]
    fn entries_take_their_place_among_the_context_messages() {
        let path = [
            message("u1", "user"),
            card("c1", "card"),
            message("a1", "assistant"),
            card("x", "other"),
            message("u2", "user"),
            card("c2", "card"),
        ];
        let refs: Vec<&Entry> = path.iter().collect();
        let types: HashSet<String> = ["card".to_string()].into();
        let found = branch_entries(&refs, &types, 3);
        let at: Vec<(usize, &str)> = found
            .iter()
            .map(|(i, v)| (*i, v["id"].as_str().unwrap_or_default()))
            .collect();
        assert_eq!(at, [(1, "c1"), (3, "c2")]);
        assert_eq!(found[0].1["customType"], "card");
        assert_eq!(found[0].1["data"]["n"], "c1");
        assert!(branch_entries(&refs, &HashSet::new(), 3).is_empty());
    }

    #[test]
    fn entries_a_compaction_left_out_are_not_shown() {
        let compaction = entry(json!({"type": "compaction", "id": "k", "parentId": null,
            "timestamp": "2026-01-01T00:00:00.000Z", "summary": "s", "firstKeptEntryId": "u2", "tokensBefore": 10}));
        let path = [
            message("u1", "user"),
            card("c1", "card"),
            message("u2", "user"),
            card("c2", "card"),
            compaction,
            message("a2", "assistant"),
        ];
        let refs: Vec<&Entry> = path.iter().collect();
        let types: HashSet<String> = ["card".to_string()].into();
        // The context: the summary, u2, a2.
        let found = branch_entries(&refs, &types, 3);
        let at: Vec<(usize, &str)> = found
            .iter()
            .map(|(i, v)| (*i, v["id"].as_str().unwrap_or_default()))
            .collect();
        assert_eq!(at, [(2, "c2")]);
    }
}
