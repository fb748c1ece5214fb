//! The App's reactions to session events: the streaming reply, tool blocks, retries,
//! compaction, the queue, and session replacement.

use super::super::chat::{AssistantBlock, Notice, UserBlock};
use super::super::events::UiEvent;
use super::super::keys::key_hint;
use super::super::tool_block::{ToolBlock, ToolStatus};
use super::App;
use serde_json::Value;

/// The line a new session (`/new`) starts the transcript with.
pub(in super::super) const NEW_SESSION: &str = "✓ New session started";

impl App {
    /// `Retrying (n/max) in Ns... (<key> to cancel)`, counting down.
    pub(super) fn retry_status(&mut self) {
        let Some((attempt, max, deadline)) = self.retry else {
            return;
        };
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let key = key_hint(&self.kb, "app.interrupt");
        self.set_status(Some(format!(
            "Retrying ({attempt}/{max}) in {}s... ({key} to cancel)",
            left.as_millis().div_ceil(1000)
        )));
    }

    /// Under the first reply of a run that failed for good (not a transient error, not
    /// stopped by the user), point at `/bug`, as pi 1.6 does.
    fn suggest_bug_report(&mut self, m: &pi_ai::AssistantMessage) {
        if self.bug_hint_shown || !matches!(m.stop_reason, pi_ai::StopReason::Error) {
            return;
        }
        let error = m.error_message.as_deref().unwrap_or_default();
        let lower = error.to_lowercase();
        let stopped = ["abort", "cancel"].iter().any(|w| lower.contains(w));
        if stopped || pi_coding_agent::session::retry::is_retryable_error(error) {
            return;
        }
        self.bug_hint_shown = true;
        let text = "Should this be a bug in pi, /bug reports it to the developers.";
        let hint = Notice::new(text, "muted", self.theme.clone()).without_gap();
        self.view.chat.push(Box::new(hint));
    }

    fn ensure_tool(&mut self, id: &str, name: &str, args: serde_json::Value) {
        // A finished block keeps its call: a later call reusing the id (some providers
        // number calls per reply) gets a block of its own.
        if let Some(b) = self.tool_block(id).filter(|b| b.status() == ToolStatus::Pending) {
            if !args.is_null() && args.as_object().is_none_or(|o| !o.is_empty()) {
                b.set_args(args);
            }
            return;
        }
        let block = ToolBlock::new(id, name, args, self.theme.clone(), self.tools_expanded);
        self.tools.insert(id.to_string(), self.view.chat.len());
        self.view.chat.push(Box::new(block));
    }

    /// Add `block` to the chat; while a reply streams it goes before the reply, as pi puts
    /// the entries extensions append then (the blocks after it move down one place).
    fn put_before_streaming(&mut self, block: Box<dyn pi_tui::Component>) {
        let Some(at) = self.streaming.filter(|&i| i < self.view.chat.len()) else {
            self.view.chat.push(block);
            return;
        };
        self.view.thaw(at);
        self.view.chat.children_mut().insert(at, block);
        self.streaming = Some(at + 1);
        for i in self.tools.values_mut() {
            if *i >= at {
                *i += 1;
            }
        }
    }

    fn streaming_block(&mut self) -> Option<&mut AssistantBlock> {
        let i = self.streaming?;
        self.view.thaw(i);
        self.view.chat.child_mut::<AssistantBlock>(i)
    }

    pub fn on_event(&mut self, ev: UiEvent) {
        self.program_status.on_event(&ev);
        match ev {
            UiEvent::Settled { .. } => self.flush_pending_bash(),
            UiEvent::AgentStart => {
                self.running = true;
                self.show_working();
            }
            UiEvent::AgentEnd => {
                self.running = false;
                self.set_status(None);
                self.streaming = None;
                self.branch = super::super::footer::git_branch(self.session().cwd());
                self.refresh_footer();
            }
            UiEvent::CustomEntry(entry) => {
                // Only entries a renderer draws take a place in the chat (as after a rebuild).
                let drawn = entry
                    .get("customType")
                    .and_then(Value::as_str)
                    .is_some_and(|t| self.entry_renderer_types().contains(t));
                if drawn {
                    let block = super::super::extension_ui::message_block::MessageBlock::entry(entry);
                    self.put_before_streaming(Box::new(block));
                }
            }
            UiEvent::CacheWarmed { cost, note } => {
                // The refresh was billed: the footer's totals count it at once, notices on
                // or off (live only; a rebuilt transcript reads the session's totals anyway).
                self.refresh_footer();
                self.cache_warmed(cost, note);
            }
            UiEvent::CustomMessage(message) => {
                let block = super::super::extension_ui::message_block::MessageBlock::new(message, self.theme.clone());
                self.view.chat.push(Box::new(block));
            }
            UiEvent::UserMessage(text, images) => {
                let images = images
                    .into_iter()
                    .map(|i| pi_tui::components::Image::new(i.data, i.mime_type, self.caps))
                    .collect();
                let block = UserBlock::new(&text, &self.theme).with_images(images);
                let first = super::super::header::only_header(&mut self.view.chat);
                self.view
                    .chat
                    .push(Box::new(if first { block.without_gap() } else { block }));
                // The message is in the transcript now: the context estimate counts it.
                self.refresh_footer();
            }
            UiEvent::AssistantStart => {
                self.streaming = Some(self.view.chat.len());
                let block = AssistantBlock::new(self.theme.clone(), self.hide_thinking);
                self.view.chat.push(Box::new(block));
            }
            UiEvent::TextDelta(i, d) => {
                if let Some(b) = self.streaming_block() {
                    b.append_text(i, &d);
                }
            }
            UiEvent::ThinkingDelta(i, d) => {
                if let Some(b) = self.streaming_block() {
                    b.append_thinking(i, &d);
                }
            }
            UiEvent::ToolCallStart { id, name } => self.ensure_tool(&id, &name, serde_json::Value::Null),
            UiEvent::ToolCallEnd { id, name, args } => self.ensure_tool(&id, &name, args),
            UiEvent::AssistantEnd(m) => {
                // What extension components draw may follow the session (a footer's token
                // totals, say): their lines are asked for again once per reply.
                self.view.ext.mark_stale();
                if let Some(b) = self.streaming_block() {
                    b.set_message(&m);
                } else {
                    let b = AssistantBlock::from_message(&m, self.theme.clone(), self.hide_thinking);
                    self.view.chat.push(Box::new(b));
                }
                let cwd = self.session().cwd().to_path_buf();
                for c in &m.content {
                    if let pi_ai::Content::ToolCall(tc) = c {
                        self.ensure_tool(&tc.id, &tc.name, tc.arguments.clone());
                        let failed = matches!(m.stop_reason, pi_ai::StopReason::Aborted | pi_ai::StopReason::Error);
                        // The reply ended well: its calls' arguments are complete (an edit
                        // previews its diff now, before it runs).
                        if !failed {
                            if let Some((key, args)) = self.tool_block(&tc.id).and_then(|b| b.args_complete()) {
                                self.preview_edit(tc.id.clone(), key, args, cwd.clone());
                            }
                        }
                        if failed {
                            let text = m
                                .error_message
                                .clone()
                                .unwrap_or_else(|| "Operation aborted".to_string());
                            if let Some(b) = self.tool_block(&tc.id) {
                                if b.status() == ToolStatus::Pending {
                                    b.finish(text, true);
                                }
                            }
                        }
                    }
                }
                self.streaming = None;
                self.suggest_bug_report(&m);
                self.reasoning_dropped(&m);
                self.cache_miss_after(&m);
                self.refresh_footer();
            }
            UiEvent::ToolStart { id, name, args } => {
                self.ensure_tool(&id, &name, args);
                if let Some(b) = self.tool_block(&id) {
                    b.mark_started();
                }
            }
            UiEvent::ToolUpdate { id, text } => {
                if let Some(b) = self.tool_block(&id) {
                    b.set_output(text);
                }
            }
            UiEvent::ToolEnd {
                id,
                text,
                is_error,
                images,
                details,
            } => {
                // Output still waiting belongs before the result.
                self.apply_live();
                let caps = self.caps;
                if let Some(b) = self.tool_block(&id) {
                    b.set_details(details);
                    b.finish_timed(text, is_error);
                    let images = images
                        .into_iter()
                        .map(|i| pi_tui::components::Image::new(i.data, i.mime_type, caps))
                        .collect();
                    b.set_images(images);
                }
                self.refresh_footer();
            }
            UiEvent::RetryStart { attempt, max, delay_ms } => {
                // The failed reply leaves the transcript: count it afresh.
                self.totals.reset();
                let deadline = std::time::Instant::now() + std::time::Duration::from_millis(delay_ms);
                self.retry = Some((attempt, max, deadline));
                self.retry_status();
            }
            UiEvent::RetryEnd { success, final_error } => {
                self.retry = None;
                if self.running {
                    self.show_working();
                }
                if !success {
                    if let Some(e) = final_error {
                        self.notice(format!("Retry failed: {e}"), "error");
                    }
                }
            }
            UiEvent::CompactionStart { overflow, manual } => {
                let text = if manual {
                    "Compacting context... (Esc to cancel)".to_string()
                } else if overflow {
                    "Context overflow detected, Auto-compacting... (Esc to cancel)".to_string()
                } else {
                    "Auto-compacting... (Esc to cancel)".to_string()
                };
                self.set_status(Some(text));
            }
            UiEvent::CompactionEnd { error, usage, summary } => {
                // The transcript was rewritten: count it afresh.
                self.totals.reset();
                if self.running {
                    self.show_working();
                } else {
                    self.set_status(None);
                }
                if let Some((text, tokens)) = summary {
                    if self.streaming.is_none() {
                        // As pi 1.6: the transcript is drawn again from what the model now
                        // sees, the messages kept after the cut, with the new summary below
                        // them where it happened rather than first.
                        self.rebuild_chat();
                        self.drop_first_compaction_block();
                    }
                    let key = key_hint(&self.kb, "app.tools.expand");
                    let block = super::super::summary_block::SummaryBlock::new(
                        Some(tokens),
                        &text,
                        key,
                        self.tools_expanded,
                        self.theme.clone(),
                    );
                    self.view.chat.push(Box::new(block));
                }
                match error {
                    Some(e) => self.notice(e, "error"),
                    None => self.compaction_cost_after(usage),
                }
                self.refresh_footer();
            }
            UiEvent::Queue { steering, follow_up } => self.view.pending.set(&steering, &follow_up),
            UiEvent::SessionName => self.refresh_footer(),
            UiEvent::ThinkingLevel => {
                self.refresh_footer();
                self.update_editor_border();
            }
        }
    }

    /// Remove the transcript's first compaction summary (the one the session's context
    /// starts with), keeping the tool blocks' places right.
    fn drop_first_compaction_block(&mut self) {
        let children = self.view.chat.children_mut();
        let Some(at) = children.iter_mut().position(|c| {
            c.as_mut()
                .downcast_mut::<super::super::summary_block::SummaryBlock>()
                .is_some_and(|b| b.is_compaction())
        }) else {
            return;
        };
        children.remove(at);
        for i in self.tools.values_mut() {
            if *i > at {
                *i -= 1;
            }
        }
        self.view.drop_frozen();
    }

    pub fn prompt_done(&mut self, error: Option<String>) {
        self.busy = false;
        self.flush_pending_bash();
        self.retry = None;
        if !self.running {
            self.set_status(None);
        }
        if let Some(e) = error {
            self.notice(e, "error");
        }
        self.refresh_footer();
    }

    pub fn replaced(&mut self, notice: Option<String>, editor_text: Option<String>) {
        self.view.reloading = None;
        self.branch = super::super::footer::git_branch(self.session().cwd());
        // Output for blocks of the old session has nowhere to go.
        self.tx.live().drain();
        self.busy = false;
        self.running = false;
        self.set_status(None);
        self.view.pending.set(&[], &[]);
        // `!` commands of the old session are not part of the new one.
        self.view.pending.take_bash();
        self.rebuild_chat();
        match notice {
            // pi marks a fresh session in the accent colour, set off by a blank row below.
            Some(n) if n == NEW_SESSION => {
                let theme = self.theme.clone();
                self.view.chat.push(Box::new(Notice::new(n, "accent", theme).padded()));
            }
            // The rest are status lines (dim, the next one replaces them).
            Some(n) => self.status_line(n),
            None => {}
        }
        if let Some(t) = editor_text {
            self.view.editor.set_text(&t);
        }
        self.refresh_footer();
    }
}
