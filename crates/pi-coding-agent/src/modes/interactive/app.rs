//! The interactive application's state and its reactions to keys (session events: `session_events`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tui::components::{Editor, Loader, SelectEvent, SelectList};
use pi_tui::{InputEvent, KeyEvent, Keybindings, OverlayId, Tui};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::chat::{AssistantBlock, InfoBlock, Notice};
use super::events::{Msg, UiEvent};
use super::footer::{git_branch, Footer, FooterData};
use super::keys::key_hint;
use super::theme::UiTheme;
use super::tool_block::ToolBlock;
use super::view::{build_transcript, Pending, View};
use crate::session::{AgentSession, StreamingBehavior};
use crate::session_host::SessionHost;

/// What a shown selector is choosing.
pub enum Picker {
    Model,
    Resume(Vec<std::path::PathBuf>),
    Fork,
    Settings,
    Tree,
    LoginMethod,
    LoginProvider {
        oauth: bool,
        options: Vec<super::login::ProviderOption>,
    },
    LoginKey(super::login::ProviderOption),
    Logout(Vec<super::login::ProviderOption>),
    ScopedModels,
    /// "Summarize branch?" before moving to this entry.
    TreeSummary(String),
    /// Custom summary instructions before moving to this entry.
    TreeCustom(String),
}

mod session_events;

pub struct App {
    pub host: Arc<SessionHost>,
    pub theme: Arc<UiTheme>,
    pub kb: Arc<Keybindings>,
    pub view: View,
    pub tx: UnboundedSender<Msg>,
    /// Chat index of each tool call's block.
    tools: HashMap<String, usize>,
    /// Chat index of the assistant reply being streamed.
    streaming: Option<usize>,
    pub hide_thinking: bool,
    pub tools_expanded: bool,
    /// A prompt task is running (set before the agent reports its start).
    pub busy: bool,
    /// The agent reported `agent_start` and not yet `agent_end`.
    running: bool,
    last_clear: Option<Instant>,
    last_escape: Option<Instant>,
    /// A retry wait: attempt, of, ends at.
    retry: Option<(u32, u32, Instant)>,
    pub quit: bool,
    pub bash_cancel: Option<CancellationToken>,
    /// Stops the background task shown in the status line (a `/tree` branch summary, a
    /// `/share` upload); Esc cancels it.
    pub task_cancel: Option<CancellationToken>,
    /// Messages submitted while that task ran.
    after_task: Vec<String>,
    bash_counter: u64,
    pub picker: Option<(OverlayId, Picker)>,
    pub title_dirty: bool,
    pub version: &'static str,
    /// The startup header is shown (not when `quietStartup` is set, unless `--verbose`).
    pub show_header: bool,
    /// How images are drawn (no protocol when `terminal.showImages` is off).
    pub caps: pi_tui::components::Capabilities,
}

impl App {
    pub fn new(
        host: Arc<SessionHost>,
        theme: Arc<UiTheme>,
        kb: Arc<Keybindings>,
        tx: UnboundedSender<Msg>,
        rows: usize,
        verbose: bool,
    ) -> Self {
        let session = host.session();
        let quiet = session.settings().lock().map(|s| s.quiet_startup()).unwrap_or(false);
        let hide_thinking = session
            .settings()
            .lock()
            .map(|s| s.hide_thinking_block())
            .unwrap_or(false);
        let show_images = session.settings().lock().map(|s| s.show_images()).unwrap_or(true);
        let mut caps = pi_tui::components::Capabilities::detect();
        if !show_images {
            caps.images = None;
        }
        let mut editor = Editor::new(theme.editor("borderMuted"));
        editor.set_terminal_rows(rows);
        let pending = Pending::new(theme.clone(), key_hint(&kb, "app.message.dequeue"));
        let mut app = App {
            host,
            view: View {
                chat: pi_tui::Container::new(),
                pending,
                status: None,
                editor,
                footer: Footer::new(theme.clone()),
                frozen: Default::default(),
            },
            theme,
            kb,
            tx,
            tools: HashMap::new(),
            streaming: None,
            hide_thinking,
            tools_expanded: false,
            busy: false,
            running: false,
            last_clear: None,
            last_escape: None,
            retry: None,
            quit: false,
            bash_cancel: None,
            task_cancel: None,
            after_task: Vec::new(),
            bash_counter: 0,
            picker: None,
            title_dirty: true,
            version: env!("CARGO_PKG_VERSION"),
            show_header: verbose || !quiet,
            caps,
        };
        app.update_editor_border();
        app.rebuild_chat();
        app.refresh_footer();
        app
    }

    pub fn session(&self) -> AgentSession {
        self.host.session()
    }

    fn header_text(&self) -> String {
        if self.tools_expanded {
            let session = self.session();
            super::header::expanded(&self.theme, &self.kb, self.version, session.resources())
        } else {
            super::header::compact(&self.theme, &self.kb, self.version)
        }
    }

    /// Rebuild the transcript from the current session (start, session switch).
    pub fn rebuild_chat(&mut self) {
        self.view.frozen = Default::default();
        self.view.chat.clear();
        self.tools.clear();
        self.streaming = None;
        if self.show_header {
            let header = Notice::new(self.header_text(), "text", self.theme.clone());
            self.view.chat.push(Box::new(header));
        }
        // Built straight from the agent's transcript: a long session is not copied first.
        self.session().with_messages(|messages| {
            build_transcript(
                messages,
                &mut self.view.chat,
                &mut self.tools,
                &self.theme,
                self.hide_thinking,
                self.tools_expanded,
                self.caps,
            );
        });
    }

    pub fn refresh_footer(&mut self) {
        let session = self.session();
        let data = FooterData::gather(&session, git_branch(session.cwd()));
        self.view.footer.set_data(data);
        self.title_dirty = true;
    }

    /// `π - <session name> - <cwd basename>` or `π - <cwd basename>`.
    pub fn title(&self) -> String {
        let session = self.session();
        let base = session
            .cwd()
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        match session.with_store(|s| s.session_name().map(str::to_string)) {
            Some(n) => format!("π - {n} - {base}"),
            None => format!("π - {base}"),
        }
    }

    fn update_editor_border(&mut self) {
        let session = self.session();
        let token = if self.view.editor.text().starts_with('!') {
            "bashMode"
        } else {
            match session.thinking_level().as_str() {
                "minimal" => "thinkingMinimal",
                "low" => "thinkingLow",
                "medium" => "thinkingMedium",
                "high" => "thinkingHigh",
                "xhigh" => "thinkingXhigh",
                _ => "thinkingOff",
            }
        };
        self.view.editor.set_border_style(self.theme.fg(token));
    }

    pub fn notice(&mut self, text: impl Into<String>, token: &'static str) {
        self.view
            .chat
            .push(Box::new(Notice::new(text, token, self.theme.clone())));
    }

    /// pi's "Package Updates Available" block, between warning-coloured rules.
    pub fn package_updates_notice(&mut self, names: &[String]) {
        let t = &self.theme;
        let mut text = format!(
            "{}\n{}{}\n{}",
            t.paint(
                "warning",
                &pi_tui::Style::new().bold().paint("Package Updates Available")
            ),
            t.paint("muted", "Package updates are available. Run "),
            t.paint("accent", "pi update"),
            t.paint("muted", "Packages:"),
        );
        for name in names {
            text.push_str(&format!("\n- {name}"));
        }
        self.notice(text, "text");
    }

    pub fn info(&mut self, markdown: impl Into<String>) {
        self.view.chat.push(Box::new(InfoBlock::new(markdown, &self.theme)));
    }

    pub fn set_status(&mut self, text: Option<String>) {
        match text {
            None => self.view.status = None,
            Some(t) => match &mut self.view.status {
                Some(l) => l.set_message(t),
                None => {
                    self.view.status = Some(Loader::new(t, self.theme.fg("accent"), self.theme.fg("muted")));
                }
            },
        }
    }

    /// Between runs, everything shown so far is finished.
    pub fn freeze_if_idle(&mut self) {
        if !self.busy && !self.running && self.bash_cancel.is_none() {
            self.view.freeze(self.view.chat.len());
        }
    }

    pub fn tick(&mut self) -> bool {
        self.retry_status();
        match &mut self.view.status {
            Some(l) if l.is_animated() => {
                l.tick();
                true
            }
            _ => false,
        }
    }

    // ----- input -------------------------------------------------------------------------

    pub fn handle_input(&mut self, ev: &InputEvent, tui: &mut Tui) {
        if let Some((id, _)) = &self.picker {
            let id = *id;
            tui.handle_input(ev, &mut self.view);
            self.after_picker_input(id, tui);
            return;
        }
        if let InputEvent::Key(k) = ev {
            if k.is_release() {
                return;
            }
            if !self.view.editor.is_showing_autocomplete() && self.handle_app_key(k, tui) {
                return;
            }
        }
        tui.handle_input(ev, &mut self.view);
        if let Some(pi_tui::components::EditorEvent::Submit(text)) = self.view.editor.take_event() {
            self.submit(text, false);
        }
        self.update_editor_border();
    }

    fn handle_app_key(&mut self, k: &KeyEvent, tui: &mut Tui) -> bool {
        let kb = self.kb.clone();
        let is = |id: &str| kb.matches(k, id);
        if is("app.interrupt") {
            if let Some(c) = &self.task_cancel {
                c.cancel();
            } else if let Some(c) = &self.bash_cancel {
                c.cancel();
            } else if self.busy || self.running {
                self.abort();
            } else if self.view.editor.text().starts_with('!') {
                self.view.editor.set_text("");
            } else if self.view.editor.is_empty() {
                // Twice within 500 ms on an empty editor: the configured action.
                let now = Instant::now();
                if self
                    .last_escape
                    .is_some_and(|t| now.duration_since(t) < Duration::from_millis(500))
                {
                    self.last_escape = None;
                    let action = self
                        .session()
                        .settings()
                        .lock()
                        .map(|s| s.double_escape_action().to_string())
                        .unwrap_or_else(|_| "tree".into());
                    match action.as_str() {
                        "fork" => super::commands::request(super::commands::Open::Fork),
                        "none" => {}
                        _ => super::commands::request(super::commands::Open::Tree),
                    }
                } else {
                    self.last_escape = Some(now);
                }
            }
            return true;
        }
        if is("app.clear") {
            let now = Instant::now();
            if self
                .last_clear
                .is_some_and(|t| now.duration_since(t) < Duration::from_millis(500))
            {
                self.quit = true;
            } else {
                self.view.editor.set_text("");
                self.last_clear = Some(now);
            }
            return true;
        }
        if is("app.exit") && self.view.editor.is_empty() {
            self.quit = true;
            return true;
        }
        if is("app.tools.expand") {
            self.tools_expanded = !self.tools_expanded;
            self.view.drop_frozen();
            if self.show_header {
                let header = Notice::new(self.header_text(), "text", self.theme.clone());
                if let Some(first) = self.view.chat.children_mut().first_mut() {
                    *first = Box::new(header);
                }
            }
            let expanded = self.tools_expanded;
            for c in self.view.chat.children_mut() {
                if let Some(b) = c.as_mut().downcast_mut::<ToolBlock>() {
                    b.set_expanded(expanded);
                }
            }
            return true;
        }
        if is("app.thinking.toggle") {
            self.toggle_thinking();
            return true;
        }
        if is("app.thinking.cycle") {
            let session = self.session();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let text = match session.cycle_thinking_level().await {
                    Some(l) => format!("Thinking level: {l}"),
                    None => "Current model does not support thinking".to_string(),
                };
                let _ = tx.send(Msg::Notice { text, error: false });
                let _ = tx.send(Msg::Footer);
            });
            return true;
        }
        if is("app.model.cycleForward") || is("app.model.cycleBackward") {
            let forward = is("app.model.cycleForward");
            let session = self.session();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let text = match session.cycle_model(forward).await {
                    Ok(Some(c)) => {
                        let mut s = format!("Switched to {}", c.model.name);
                        if c.model.reasoning {
                            s.push_str(&format!(" (thinking: {})", c.thinking_level));
                        }
                        s
                    }
                    Ok(None) => {
                        if session.scoped_models().is_empty() {
                            "Only one model available".to_string()
                        } else {
                            "Only one model in scope".to_string()
                        }
                    }
                    Err(e) => e.0,
                };
                let _ = tx.send(Msg::Notice { text, error: false });
                let _ = tx.send(Msg::Footer);
            });
            return true;
        }
        if is("app.model.select") {
            super::commands::open_model_picker(self, tui, None);
            return true;
        }
        if is("app.message.followUp") {
            let text = self.view.editor.expanded_text().trim().to_string();
            if !text.is_empty() {
                self.view.editor.add_to_history(&text);
                self.view.editor.set_text("");
                self.submit(text, true);
            }
            return true;
        }
        if is("app.message.dequeue") {
            let session = self.session();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let q = session.clear_queue().await;
                let texts = q.steering.into_iter().chain(q.follow_up).collect();
                let _ = tx.send(Msg::Restore { texts, announce: true });
            });
            return true;
        }
        if is("app.suspend") {
            // Handled by the loop, which owns the terminal.
            return false;
        }
        false
    }

    pub fn toggle_thinking(&mut self) {
        self.hide_thinking = !self.hide_thinking;
        self.view.drop_frozen();
        let hide = self.hide_thinking;
        for c in self.view.chat.children_mut() {
            if let Some(b) = c.as_mut().downcast_mut::<AssistantBlock>() {
                b.set_hide_thinking(hide);
            }
        }
        if let Ok(mut s) = self.session().settings().lock() {
            s.set_hide_thinking_block(hide);
        }
    }

    /// The status-line task is over: clear it and send what was typed meanwhile (the first as
    /// a prompt, the rest as follow-ups).
    pub fn task_finished(&mut self) {
        self.task_cancel = None;
        self.set_status(None);
        let texts = std::mem::take(&mut self.after_task);
        if !texts.is_empty() {
            self.view.pending.set(&[], &[]);
        }
        for t in texts {
            self.submit(t, true);
        }
    }

    /// Esc during a run: stop it and put every queued message back into the editor.
    fn abort(&mut self) {
        let session = self.session();
        session.abort();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let q = session.clear_queue().await;
            let texts: Vec<String> = q.steering.into_iter().chain(q.follow_up).collect();
            let _ = tx.send(Msg::Restore { texts, announce: false });
        });
    }

    pub fn restore(&mut self, texts: Vec<String>, announce: bool) {
        if announce {
            if texts.is_empty() {
                self.notice("No queued messages to restore", "dim");
            } else {
                self.notice(format!("Restored {} queued message(s) to editor", texts.len()), "dim");
            }
        }
        if texts.is_empty() {
            return;
        }
        let current = self.view.editor.text();
        let mut all = texts.join("\n\n");
        if !current.trim().is_empty() {
            all.push_str("\n\n");
            all.push_str(&current);
        }
        self.view.editor.set_text(&all);
        self.view.pending.set(&[], &[]);
    }

    /// Enter (or Alt+Enter with `follow_up`) on the editor's text.
    pub fn submit(&mut self, text: String, follow_up: bool) {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        self.view.editor.add_to_history(trimmed);
        if self.task_cancel.is_some() {
            let key = key_hint(&self.kb, "app.interrupt");
            self.notice(
                format!("Wait for the current task to finish (or press {key} to stop it)"),
                "warning",
            );
            self.view.editor.set_text(trimmed);
            return;
        }
        if trimmed.starts_with('/') && super::commands::run_command(self, trimmed) {
            return;
        }
        if let Some(cmd) = trimmed.strip_prefix('!') {
            let (exclude, cmd) = match cmd.strip_prefix('!') {
                Some(c) => (true, c.trim()),
                None => (false, cmd.trim()),
            };
            if !cmd.is_empty() {
                self.run_bash(cmd.to_string(), exclude);
                return;
            }
        }
        let session = self.session();
        let tx = self.tx.clone();
        let text = trimmed.to_string();
        if self.busy || self.running {
            let behavior = if follow_up {
                StreamingBehavior::FollowUp
            } else {
                StreamingBehavior::Steer
            };
            tokio::spawn(async move {
                if let Err(e) = session.prompt_with(&text, Vec::new(), Some(behavior)).await {
                    let _ = tx.send(Msg::Notice {
                        text: e.to_string(),
                        error: true,
                    });
                }
            });
            return;
        }
        self.busy = true;
        tokio::spawn(async move {
            let r = session.prompt(&text, Vec::new()).await;
            let _ = tx.send(Msg::PromptDone(r.err().map(|e| e.0)));
        });
    }

    fn run_bash(&mut self, command: String, exclude: bool) {
        if self.bash_cancel.is_some() {
            self.notice("A command is already running. Press Esc to cancel it.", "warning");
            return;
        }
        self.bash_counter += 1;
        let id = format!("user-bash-{}", self.bash_counter);
        let block = ToolBlock::user_bash(
            &id,
            serde_json::json!({"command": if exclude { format!("!{command}") } else { command.clone() }}),
            self.theme.clone(),
            self.tools_expanded,
        );
        self.tools.insert(id.clone(), self.view.chat.len());
        self.view.chat.push(Box::new(block));
        let cancel = CancellationToken::new();
        self.bash_cancel = Some(cancel.clone());
        let session = self.session();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let tx2 = tx.clone();
            let id2 = id.clone();
            let mut acc = String::new();
            let mut on_chunk = move |chunk: &str| {
                acc.push_str(chunk);
                let _ = tx2.send(Msg::Ui(UiEvent::ToolUpdate {
                    id: id2.clone(),
                    text: acc.clone(),
                }));
            };
            let r = session
                .execute_bash(&command, exclude, cancel, Some(&mut on_chunk))
                .await;
            let msg = match r {
                Ok(r) => Msg::BashDone {
                    id,
                    output: r.output,
                    exit_code: r.exit_code,
                    cancelled: r.cancelled,
                    truncated_path: r.full_output_path,
                },
                Err(e) => Msg::BashDone {
                    id,
                    output: e.0,
                    exit_code: None,
                    cancelled: false,
                    truncated_path: None,
                },
            };
            let _ = tx.send(msg);
        });
    }

    pub fn bash_done(
        &mut self,
        id: &str,
        output: String,
        exit_code: Option<i32>,
        cancelled: bool,
        path: Option<String>,
    ) {
        self.bash_cancel = None;
        if let Some(&i) = self.tools.get(id) {
            self.view.thaw(i);
        }
        if let Some(b) = self
            .tools
            .get(id)
            .and_then(|&i| self.view.chat.child_mut::<ToolBlock>(i))
        {
            let failed = cancelled || exit_code.is_some_and(|c| c != 0);
            b.finish(output, failed);
            let mut notes = Vec::new();
            if cancelled {
                notes.push("(cancelled)".to_string());
            } else if let Some(c) = exit_code.filter(|c| *c != 0) {
                notes.push(format!("(exit {c})"));
            }
            if let Some(p) = path {
                notes.push(format!("Full output: {p}"));
            }
            b.set_footnote((!notes.is_empty()).then(|| notes.join(" ")));
        }
    }

    /// Swap the theme everywhere (chat blocks are rebuilt from the session).
    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        self.theme = theme.clone();
        self.view.footer.set_theme(theme.clone());
        self.view.pending = Pending::new(theme.clone(), key_hint(&self.kb, "app.message.dequeue"));
        self.view.editor.set_theme(theme.editor("borderMuted"));
        self.update_editor_border();
        if !self.busy && !self.running {
            self.rebuild_chat();
        }
    }

    fn after_picker_input(&mut self, id: OverlayId, tui: &mut Tui) {
        let event = if let Some(l) = tui.overlay_mut::<SelectList>(id) {
            match l.take_event() {
                Some(SelectEvent::Selected(item)) => Some(Ok(item.value)),
                Some(SelectEvent::Cancelled) => Some(Err(())),
                _ => None,
            }
        } else if let Some(t) = tui.overlay_mut::<super::tree::TreeSelector>(id) {
            match t.take_event() {
                Some(super::tree::TreeEvent::Selected(v)) => Some(Ok(v)),
                Some(super::tree::TreeEvent::Label { id, label }) => {
                    super::tree_nav::label_changed(self, &id, label.as_deref());
                    None
                }
                Some(super::tree::TreeEvent::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(v) = tui.overlay_mut::<super::scoped_models::ScopedModelsSelector>(id) {
            let events = v.take_events();
            super::scoped_models::handle_events(self, events).then_some(Err(()))
        } else if let Some(d) = tui.overlay_mut::<super::dialogs::Dialog>(id) {
            match d.take_result() {
                Some(super::dialogs::DialogResult::Done(v)) => Some(Ok(v)),
                Some(super::dialogs::DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(m) = tui.overlay_mut::<super::settings_menu::SettingsMenu>(id) {
            let events = m.take_events();
            super::settings_menu::handle_events(self, tui, events).then_some(Err(()))
        } else {
            Some(Err(()))
        };
        let Some(result) = event else { return };
        tui.hide_overlay(id);
        let Some((_, picker)) = self.picker.take() else { return };
        match result {
            Ok(value) => super::commands::picked(self, picker, value, tui),
            Err(()) => super::tree_nav::cancelled(self, tui, picker),
        }
    }
}
