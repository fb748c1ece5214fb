//! The app's reactions in fullscreen: the transcript viewport keys, the mouse (wheel,
//! selection, the "jump to latest" pill) and copying a selection.

use std::time::Duration;

use pi_tui::{
    Component, ComponentMouse, ComponentMouseKind, InputEvent, KeyEvent, MouseAction, MouseEvent, MouseKind, SearchKey,
    Tui,
};

use super::super::chat::AssistantBlock;
use super::super::effect::Effect;
use super::super::summary_block::SummaryBlock;
use super::super::tool_block::{ToolBlock, ToolStatus};
use super::App;

/// How long `Copied!` stays up.
const FLASH: Duration = Duration::from_secs(1);
/// How long a failed copy's reason stays up.
const ERROR_FLASH: Duration = Duration::from_secs(5);

/// A mouse press a component took (see `App::handle_mouse`).
#[derive(Debug, Clone, Copy)]
pub(super) struct MousePress {
    row: usize,
    column: usize,
    moved: bool,
}

impl App {
    /// PageUp/PageDown, Ctrl+Home/Ctrl+End, the previous/next-message keys and the optional
    /// half-page and line keys move the transcript; true when the key was one of them.
    pub(super) fn handle_viewport_key(&mut self, k: &KeyEvent, tui: &mut Tui) -> bool {
        let kb = self.kb.clone();
        let Some(fs) = tui.fullscreen_mut() else {
            return false;
        };
        let page = fs.viewport().page();
        let half = fs.viewport().half_page();
        let v = fs.viewport_mut();
        let is = |id: &str| kb.matches(k, id);
        if is("tui.altScreen.search") {
            fs.toggle_search();
            return true;
        }
        if is("tui.altScreen.pageUp") {
            v.scroll_by(-page);
        } else if is("tui.altScreen.pageDown") {
            v.scroll_by(page);
        } else if is("tui.altScreen.halfPageUp") {
            v.scroll_by(-half);
        } else if is("tui.altScreen.halfPageDown") {
            v.scroll_by(half);
        } else if is("tui.altScreen.lineUp") {
            v.scroll_by(-1);
        } else if is("tui.altScreen.lineDown") {
            v.scroll_by(1);
        } else if is("tui.altScreen.previousPrompt") || is("tui.altScreen.nextPrompt") {
            // The nearest marked message above (below) the first line shown, at the top.
            let up = is("tui.altScreen.previousPrompt");
            let now = v.first_line();
            let marks = self.view.marked_lines();
            let target = if up {
                marks.into_iter().rev().find(|&l| l < now)
            } else {
                marks.into_iter().find(|&l| l > now)
            };
            if let Some(line) = target {
                v.scroll_to(line);
            }
        } else if is("tui.altScreen.top") {
            v.to_top();
        } else if is("tui.altScreen.bottom") {
            v.to_bottom();
        } else {
            return false;
        }
        true
    }

    /// Input while the transcript search is open: it takes every key (the viewport keys
    /// still scroll). True when the search is open.
    pub(super) fn handle_search_input(&mut self, ev: &InputEvent, tui: &mut Tui) -> bool {
        if !tui.fullscreen().is_some_and(|f| f.search_open()) {
            return false;
        }
        let key = match ev {
            InputEvent::Paste(text) => Some(SearchKey::Text(text.clone())),
            InputEvent::Key(k) if k.is_release() => None,
            InputEvent::Key(k) => {
                let kb = self.kb.clone();
                let is = |id: &str| kb.matches(k, id);
                if is("tui.altScreen.searchClose") || is("tui.altScreen.search") {
                    if let Some(fs) = tui.fullscreen_mut() {
                        fs.close_search();
                    }
                    return true;
                }
                if is("tui.altScreen.searchPrevious") {
                    Some(SearchKey::Previous)
                } else if is("tui.altScreen.searchNext") {
                    Some(SearchKey::Next)
                } else if let Some(c) = k.text() {
                    Some(SearchKey::Text(c.to_string()))
                } else if self.handle_viewport_key(k, tui) {
                    None
                } else {
                    // Editing keys of the field: cursor moves, deletions.
                    Some(SearchKey::Key(k.clone()))
                }
            }
            _ => None,
        };
        if let (Some(key), Some(fs)) = (key, tui.fullscreen_mut()) {
            fs.search_key(key);
        }
        true
    }

    /// A mouse report (fullscreen only: regular mode does not ask for them). As in pi 1.6 the
    /// component under the pointer has it first (the editor's menu and text, a docked list);
    /// what none takes goes to the transcript: the wheel scrolls it, a press selects.
    pub fn handle_mouse(&mut self, m: &MouseEvent, tui: &mut Tui) {
        // A press an extension component got: its drags and release go to it as well (its
        // host decides whether the press captured them), then on as before.
        if self.ext_press.is_some() {
            match m.kind {
                MouseKind::Drag(_) => self.extension_gesture(false, (m.row, m.column)),
                MouseKind::Release(_) => self.extension_gesture(true, (m.row, m.column)),
                MouseKind::Press(_) => self.ext_press = None,
                MouseKind::Move | MouseKind::WheelUp | MouseKind::WheelDown => {}
            }
        }
        // A press a component took: the rest of the gesture is its own, and a release on the
        // cell it started on, without moving away, is a click.
        if let Some(press) = &mut self.mouse_press {
            let here = (m.row, m.column) == (press.row, press.column);
            match m.kind {
                MouseKind::Drag(_) | MouseKind::Move => {
                    press.moved |= !here;
                    return;
                }
                MouseKind::Release(_) => {
                    let click = here && !press.moved;
                    self.mouse_press = None;
                    if click {
                        self.component_mouse(m.row, m.column, ComponentMouseKind::Click, tui);
                    }
                    return;
                }
                // The wheel goes its own way meanwhile; another press starts anew.
                MouseKind::WheelUp | MouseKind::WheelDown => {}
                MouseKind::Press(_) => self.mouse_press = None,
            }
        }
        let kind = match m.kind {
            MouseKind::Press(0) => Some(ComponentMouseKind::Press),
            MouseKind::WheelUp => Some(ComponentMouseKind::WheelUp),
            MouseKind::WheelDown => Some(ComponentMouseKind::WheelDown),
            _ => None,
        };
        if let Some(kind) = kind {
            if self.component_mouse(m.row, m.column, kind, tui) {
                if kind == ComponentMouseKind::Press {
                    self.mouse_press = Some(MousePress {
                        row: m.row,
                        column: m.column,
                        moved: false,
                    });
                    if let Some(fs) = tui.fullscreen_mut() {
                        fs.clear_selection();
                    }
                }
                return;
            }
        }
        let Some(fs) = tui.fullscreen_mut() else { return };
        match fs.handle_mouse(m) {
            MouseAction::Copy(text) => {
                let on_select = self
                    .ctx()
                    .read_settings(|s| s.fullscreen_copy_on_select())
                    .unwrap_or(true);
                if on_select {
                    self.copy_selection(text, tui);
                }
            }
            MouseAction::Click(line) => self.click_transcript(line),
            // A click below the transcript: the editor puts its cursor there.
            MouseAction::ScreenClick { row, column } => {
                self.component_mouse(row, column, ComponentMouseKind::Click, tui);
            }
            // Web links only: the opener would launch files and other handlers too.
            MouseAction::OpenUrl(url) => pi_coding_agent::subcommands::auth_oauth::open_url(&url),
            MouseAction::None | MouseAction::Redraw => {}
        }
    }

    /// Hand a mouse report at screen `(row, column)` to what the last frame drew there in
    /// the editor's place: a docked dialog, the editor itself, or an extension's component
    /// or editor in its place (not a loader). Whether it took the report.
    fn component_mouse(&mut self, row: usize, column: usize, kind: ComponentMouseKind, tui: &mut Tui) -> bool {
        if let Some((id, taken)) = tui.docked_mouse(row, column, kind) {
            if taken && self.picker.as_ref().is_some_and(|(p, _)| *p == id) {
                self.after_picker_input(id, tui);
            }
            return taken;
        }
        if self.view.status_box.is_some() {
            return false;
        }
        let Some((rows, skipped)) = tui.editor_rows().filter(|(r, _)| r.contains(&row)) else {
            return false;
        };
        if self.view.ext.shows_inline() {
            // The host's component answers later, so what it does with the report cannot
            // decide this one: as pi-tui's editor, a press and the wheel also go on to the
            // screen (a press may start a selection), a click is the component's.
            let height = rows.len() + skipped;
            let sent = self.extension_mouse(
                (row - rows.start + skipped, column),
                (row, column),
                height,
                kind,
                tui.size().0,
            );
            return sent && kind == ComponentMouseKind::Click;
        }
        let at = ComponentMouse::new(kind, row - rows.start + skipped, column);
        if !self.view.editor.handle_mouse(&at) {
            return false;
        }
        // Handled as after a key: the menu's clicks replay the editor's own keys.
        if let Some(pi_tui::components::EditorEvent::Submit(text)) = self.view.editor.take_event() {
            self.submit(text, false, tui);
        }
        self.update_editor_border();
        true
    }

    /// A click on a tool call's block, or on a compaction or branch summary, expands or
    /// collapses that block alone; on a reply's thinking it shows or hides that thinking.
    fn click_transcript(&mut self, line: usize) {
        let Some(index) = self.view.child_at_line(line) else {
            return;
        };
        let start = self.view.child_start(index).unwrap_or(line);
        let Some(child) = self.view.chat.children_mut().get_mut(index) else {
            return;
        };
        if let Some(block) = child.as_mut().downcast_mut::<ToolBlock>() {
            // pi takes the click on the call and its result, once there is one: not on the
            // blank row above, not before any output, not on a `!command`.
            let waiting = block.status() == ToolStatus::Pending && block.output().is_empty();
            if line == start || waiting || block.is_user_bash() {
                return;
            }
            let expanded = !block.is_expanded();
            block.set_expanded(expanded);
        } else if let Some(block) = child.as_mut().downcast_mut::<SummaryBlock>() {
            let expanded = !block.is_expanded();
            block.set_expanded(expanded);
        } else if let Some(block) = child.as_mut().downcast_mut::<AssistantBlock>() {
            // A thinking part shows or hides alone.
            if !block.click(line.saturating_sub(start)) {
                return;
            }
        } else {
            return;
        }
        self.view.thaw(index);
    }

    /// Ctrl+X: the fullscreen selection (when copy-on-select left it to this key), else the
    /// last assistant message; fullscreen flashes the result, regular mode says it in the chat.
    pub(super) fn copy_key(&mut self, tui: &mut Tui) {
        let on_select = self
            .ctx()
            .read_settings(|s| s.fullscreen_copy_on_select())
            .unwrap_or(true);
        let selection = tui.fullscreen().filter(|_| !on_select).and_then(|f| f.selected_text());
        if let Some(text) = selection {
            self.copy_selection(text, tui);
            return;
        }
        if tui.fullscreen().is_none() {
            let effects = super::super::commands::copy_last(&self.ctx());
            self.apply(effects, tui);
            return;
        }
        match self.session().last_assistant_text().filter(|t| !t.trim().is_empty()) {
            Some(text) => self.copy_answer(text, tui),
            None => self.notice("No agent messages to copy yet.", "error"),
        }
    }

    /// Before a frame: a selection made over a transcript since rebuilt (a session switch, a
    /// compaction, a new look) is dropped, as pi drops it.
    pub fn drop_stale_selection(&mut self, tui: &mut Tui) {
        if std::mem::take(&mut self.transcript_replaced) {
            if let Some(fs) = tui.fullscreen_mut() {
                fs.clear_selection();
            }
        }
    }

    /// Focus went away: a drag in progress is dropped with its selection.
    pub fn focus_lost(&mut self, tui: &mut Tui) {
        if let Some(fs) = tui.fullscreen_mut() {
            fs.end_drag();
        }
    }

    /// Copy `text` with the system clipboard tool, on the blocking pool; the result comes
    /// back as [`Effect::Copied`].
    pub(super) fn copy_selection(&mut self, text: String, tui: &mut Tui) {
        let work = Effect::Blocking(Box::new(move || {
            let native = super::super::commands::copy_to_clipboard(&text);
            Box::new(move |_| {
                vec![Effect::Copied {
                    text,
                    native,
                    status: None,
                }]
            })
        }));
        self.apply(vec![work], tui);
    }

    /// Ctrl+X in fullscreen with no selection to take: the last answer, `Copied!` flashed
    /// when it worked and the reason in the chat when not, as pi 1.6 reports it.
    fn copy_answer(&mut self, text: String, tui: &mut Tui) {
        let work = Effect::Blocking(Box::new(move || {
            let native = super::super::commands::copy_to_clipboard(&text);
            Box::new(
                move |_| match super::super::clipboard_route::route(&native, &text).result {
                    Ok(()) => vec![Effect::Copied {
                        text,
                        native,
                        status: None,
                    }],
                    Err(e) => vec![super::super::effect::notice(e, "error")],
                },
            )
        }));
        self.apply(vec![work], tui);
    }

    /// After a copy: OSC 52 where pi 1.6 sends it (no display, a remote session,
    /// `PI_CLIPBOARD_OSC52=1`), then the status in the chat, or a flash for a selection:
    /// `Copied!`, or for five seconds why it failed.
    pub(super) fn copied(&mut self, text: &str, native: Result<(), String>, status: Option<String>, tui: &mut Tui) {
        let route = super::super::clipboard_route::route(&native, text);
        if route.osc52 {
            use base64::Engine as _;
            let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            tui.queue_raw(&format!("\x1b]52;c;{encoded}\x07"));
        }
        match (status, route.result, tui.fullscreen_mut()) {
            (Some(status), Ok(()), _) => self.status_line(status),
            (Some(_), Err(e), _) | (None, Err(e), None) => self.notice(e, "error"),
            (None, Ok(()), Some(fs)) => fs.flash("Copied!", FLASH),
            (None, Err(e), Some(fs)) => fs.flash(e, ERROR_FLASH),
            (None, Ok(()), None) => {}
        }
    }
}
