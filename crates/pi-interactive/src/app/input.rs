//! The app's reactions to keys: the editor, the app's own shortcuts, and the overlay that
//! has the keys (its results go to the handler of its kind, which returns effects).

use std::time::{Duration, Instant};

use pi_tui::components::{SelectEvent, SelectList};
use pi_tui::{InputEvent, KeyEvent, OverlayId, Tui};

use super::super::commands::{self, Open};
use super::super::dialogs::{Dialog, DialogResult};
use super::super::effect::{blocking_task, notice, then, Effect};
use super::super::events::Msg;
use super::super::login_view::{LoginChoice, LoginFlow};
use super::super::scoped_models::ScopedModelsSelector;
use super::super::settings_menu::SettingsMenu;
use super::super::tool_block::ToolBlock;
use super::super::tree::{TreeEvent, TreeSelector};
use super::App;

impl App {
    /// Whether input handled since the last `set_screen_touched(false)` may have changed
    /// the screen (keys only sent to an extension component did not).
    pub fn screen_touched(&self) -> bool {
        self.screen_touched
    }

    pub fn set_screen_touched(&mut self, touched: bool) {
        self.screen_touched = touched;
    }

    pub fn handle_input(&mut self, ev: &InputEvent, tui: &mut Tui) {
        let before = self.screen_touched;
        self.screen_touched = true;
        // A bordered loader holds the keys: its cancel keys stop the task, the rest are
        // dropped (1.6 focuses the loader, not the editor).
        if self.view.reloading.is_some() {
            return;
        }
        if self.view.status_box.is_some() {
            if let InputEvent::Key(k) = ev {
                if !k.is_release() && pi_tui::keybindings().matches(k, "tui.select.cancel") {
                    if let Some(c) = &self.task_cancel {
                        c.cancel();
                    }
                }
            }
            return;
        }
        if self.picker.is_none() && self.extension_input(ev) {
            self.screen_touched = before;
            return;
        }
        if self.picker.is_none() && self.handle_search_input(ev, tui) {
            return;
        }
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
            // Keys bound to the editor's history actions go to the editor before the app's.
            let history =
                self.kb.matches(k, "tui.editor.historyPrevious") || self.kb.matches(k, "tui.editor.historyNext");
            // An open menu takes Escape and the page keys; the app's other keys still work
            // (Ctrl+C clears, Ctrl+L opens the model selector, ...).
            let menu = self.view.editor.is_showing_autocomplete();
            let for_menu = menu
                && ["tui.select.pageUp", "tui.select.pageDown", "app.interrupt"]
                    .iter()
                    .any(|id| self.kb.matches(k, id));
            if self.view.ext.editor().is_none()
                && !history
                && !for_menu
                && ((!menu && self.handle_viewport_key(k, tui)) || self.handle_app_key(k, tui))
            {
                return;
            }
            // The replacement editor hands the app's actions back itself.
            if self.view.ext.editor().is_some() && self.handle_viewport_key(k, tui) {
                return;
            }
        }
        if self.replacement_editor_input(ev) {
            self.screen_touched = before;
            return;
        }
        tui.handle_input(ev, &mut self.view);
        if let Some(pi_tui::components::EditorEvent::Submit(text)) = self.view.editor.take_event() {
            self.submit(text, false, tui);
        }
        self.update_editor_border();
    }

    /// Open a built-in selector.
    fn open(&mut self, what: Open, tui: &mut Tui) {
        let effects = commands::open_now(&self.ctx(), what);
        self.apply(effects, tui);
    }

    fn handle_app_key(&mut self, k: &KeyEvent, tui: &mut Tui) -> bool {
        let kb = self.kb.clone();
        self.handle_app_action(&|id: &str| kb.matches(k, id), tui)
    }

    /// Carry out the app action for which `is` holds (a key's, or one a replacement editor
    /// handed back); false when it is none of the app's.
    pub(super) fn handle_app_action(&mut self, is: &dyn Fn(&str) -> bool, tui: &mut Tui) -> bool {
        if is("app.interrupt") {
            if let Some(c) = &self.task_cancel {
                c.cancel();
            } else if let Some(c) = &self.bash_cancel {
                c.cancel();
            } else if self.busy || self.running {
                self.abort();
            } else if self.view.editor.text().trim_start().starts_with('!') {
                self.view.editor.set_text("");
            } else if self.view.editor.text().trim().is_empty() {
                // Twice within 500 ms on an empty editor: the configured action.
                let now = Instant::now();
                if self
                    .last_escape
                    .is_some_and(|t| now.duration_since(t) < Duration::from_millis(500))
                {
                    self.last_escape = None;
                    let action = self
                        .ctx()
                        .read_settings(|s| s.double_escape_action().to_string())
                        .unwrap_or_else(|| "tree".into());
                    match action.as_str() {
                        "fork" => self.open(Open::Fork, tui),
                        "none" => {}
                        _ => self.open(Open::Tree, tui),
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
            if self.header_in_chat {
                let header = self.header_block();
                if let Some(first) = self.view.chat.children_mut().first_mut() {
                    *first = header;
                }
            }
            let expanded = self.tools_expanded;
            for c in self.view.chat.children_mut() {
                if let Some(b) = c.as_mut().downcast_mut::<ToolBlock>() {
                    b.set_expanded(expanded);
                } else if let Some(b) = c.as_mut().downcast_mut::<super::super::summary_block::SummaryBlock>() {
                    b.set_expanded(expanded);
                }
            }
            for b in self.view.pending.bash_blocks_mut() {
                b.set_expanded(expanded);
            }
            self.status_line(format!(
                "Tool output: {}",
                if expanded { "expanded" } else { "collapsed" }
            ));
            return true;
        }
        if is("app.message.copy") {
            self.copy_key(tui);
            return true;
        }
        if is("app.thinking.toggle") {
            self.toggle_thinking();
            let hidden = self.hide_thinking;
            self.status_line(format!(
                "Thinking blocks: {}",
                if hidden { "hidden" } else { "visible" }
            ));
            return true;
        }
        if is("app.thinking.cycle") {
            let session = self.session();
            let task = blocking_task(async move {
                let text = match session.cycle_thinking_level().await {
                    Some(l) => format!("Thinking level: {l}"),
                    None => "Current model does not support thinking".to_string(),
                };
                // A status line, as 1.6: the next one replaces it.
                then(move |_| vec![Effect::StatusLine(text), Effect::RefreshFooter])
            });
            self.apply(vec![task], tui);
            return true;
        }
        if is("app.model.cycleForward") || is("app.model.cycleBackward") {
            let forward = is("app.model.cycleForward");
            let session = self.session();
            let task = blocking_task(async move {
                // As 1.6: status lines (one replaces the one right before it), the failure
                // in red, the thinking level named only when it is not off.
                let (said, switched) = match session.cycle_model(forward).await {
                    Ok(Some(c)) => {
                        let mut s = format!("Switched to {}", c.model.name);
                        let level = c.thinking_level.to_string();
                        if c.model.reasoning && level != "off" {
                            s.push_str(&format!(" (thinking: {level})"));
                        }
                        (Effect::StatusLine(s), true)
                    }
                    Ok(None) => {
                        let s = if session.scoped_models().is_empty() {
                            "Only one model available"
                        } else {
                            "Only one model in scope"
                        };
                        (Effect::StatusLine(s.to_string()), false)
                    }
                    Err(e) => (notice(e.to_string(), "error"), false),
                };
                then(move |_| {
                    let mut out = vec![said, Effect::RefreshFooter];
                    if switched {
                        out.push(Effect::CheckSubscription);
                    }
                    out
                })
            });
            self.apply(vec![task], tui);
            return true;
        }
        if is("app.model.select") {
            let effects = commands::open_model_picker(&self.ctx(), None);
            self.apply(effects, tui);
            return true;
        }
        if is("app.message.followUp") {
            let text = self.view.editor.expanded_text().trim().to_string();
            if !text.is_empty() {
                self.view.editor.add_to_history(&text);
                self.view.editor.set_text("");
                self.submit(text, true, tui);
            }
            return true;
        }
        if is("app.message.dequeue") {
            let session = self.session();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let q = session.clear_queue().await;
                let texts = q.steering.into_iter().chain(q.follow_up).collect();
                tx.send(Msg::Restore { texts, announce: true }).await;
            });
            return true;
        }
        // The session actions have no default keys; bound in keybindings.json they do what
        // /new, /tree, /fork and /resume do.
        if is("app.session.new") {
            self.apply(vec![Effect::ReplaceSession(super::super::effect::Replace::New)], tui);
            return true;
        }
        if is("app.session.tree") {
            self.open(Open::Tree, tui);
            return true;
        }
        if is("app.session.fork") {
            self.open(Open::Fork, tui);
            return true;
        }
        if is("app.session.resume") {
            self.open(Open::Resume, tui);
            return true;
        }
        if is("app.clipboard.pasteImage") {
            match super::super::clipboard_paste::read() {
                Ok(Some(super::super::clipboard_paste::Pasted::Image(path))) => {
                    self.view.editor.insert_text(&path.to_string_lossy());
                }
                Ok(Some(super::super::clipboard_paste::Pasted::Text(text))) => self.view.editor.insert_text(&text),
                Ok(None) => {}
                Err(e) => self.notice(format!("Failed to paste from clipboard: {e}"), "error"),
            }
            return true;
        }
        if is("app.suspend") {
            // Handled by the loop, which owns the terminal.
            return false;
        }
        false
    }

    /// After a key went to the overlay `id`: read what it produced and hand it to the
    /// handler for its kind.
    pub(super) fn after_picker_input(&mut self, id: OverlayId, tui: &mut Tui) {
        let mut live: Vec<Effect> = Vec::new();
        let event = if let Some(l) = tui.overlay_mut::<SelectList>(id) {
            match l.take_event() {
                Some(SelectEvent::Selected(item)) => Some(Ok(item.value)),
                Some(SelectEvent::Cancelled) => Some(Err(())),
                _ => None,
            }
        } else if let Some(t) = tui.overlay_mut::<TreeSelector>(id) {
            match t.take_event() {
                Some(TreeEvent::Selected(v)) => Some(Ok(v)),
                Some(TreeEvent::Label { id, label }) => {
                    live = super::super::tree_nav::label_changed(&self.ctx(), id, label);
                    None
                }
                Some(TreeEvent::Copy(text)) => {
                    live = super::super::tree_nav::copy_entry(text);
                    None
                }
                Some(TreeEvent::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(v) = tui.overlay_mut::<ScopedModelsSelector>(id) {
            let events = v.take_events();
            let (effects, close) = super::super::scoped_models::handle_events(&self.ctx(), events);
            live = effects;
            close.then_some(Err(()))
        } else if let Some(v) = tui.overlay_mut::<super::super::mcp_sign_in::McpSignInView>(id) {
            if let Some(url) = v.take_copy() {
                live.push(super::super::mcp_sign_in::copy_url(url, v.stage()));
            }
            match v.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(d) = tui.overlay_mut::<Dialog>(id) {
            match d.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(m) = tui.overlay_mut::<super::super::model_picker::ModelPicker>(id) {
            match m.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(m) = tui.overlay_mut::<super::super::text_dialog::TextDialog>(id) {
            match m.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(m) = tui.overlay_mut::<super::super::session_picker::SessionPicker>(id) {
            match m.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(m) = tui.overlay_mut::<super::super::trust_selector::TrustSelector>(id) {
            match m.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(m) = tui.overlay_mut::<super::super::fork_selector::ForkSelector>(id) {
            match m.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(m) = tui.overlay_mut::<super::super::thinking_picker::ThinkingPicker>(id) {
            match m.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(c) = tui.overlay_mut::<LoginChoice>(id) {
            match c.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(f) = tui.overlay_mut::<LoginFlow>(id) {
            if let Some(request) = f.take_request() {
                live.push(super::super::login::flow_request(f.id(), request));
            }
            match f.take_result() {
                Some(DialogResult::Done(v)) => Some(Ok(v)),
                Some(DialogResult::Cancelled) => Some(Err(())),
                None => None,
            }
        } else if let Some(m) = tui.overlay_mut::<SettingsMenu>(id) {
            let events = m.take_events();
            let (effects, close) = super::super::settings_menu::handle_events(&self.ctx(), events);
            live = effects;
            close.then_some(Err(()))
        } else {
            Some(Err(()))
        };
        self.apply(live, tui);
        let Some(result) = event else { return };
        tui.hide_overlay(id);
        let Some((_, picker)) = self.picker.take() else { return };
        let cx = self.ctx();
        let effects = match result {
            Ok(value) => commands::picked(&cx, picker, value),
            Err(()) => commands::cancelled(&cx, picker),
        };
        drop(cx);
        self.apply(effects, tui);
    }
}
