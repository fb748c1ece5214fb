//! `Editor`: the multi-line prompt editor (word-wrapped, scrolling, history, kill ring, undo,
//! word motion, jump-to-character, paste markers for large pastes, autocomplete).

use std::collections::BTreeMap;

use super::editor_buffer::{cursor_row, layout, KillRing, TextState, VisualRow};
use super::select_list::{SelectItem, SelectList, SelectListTheme};
use crate::autocomplete::{AutocompleteItem, AutocompleteProvider};
use crate::component::{render_lines, Component, Frame, CURSOR_MARKER};
use crate::component_mouse::ComponentMouse;
use crate::input::InputEvent;
use crate::keybindings::keybindings;
use crate::keys::{Key, KeyEvent};
use crate::style::Style;
use crate::width::{grapheme_width, truncate_to_width, visible_width};

const HISTORY_MAX: usize = 100;
const UNDO_MAX: usize = 200;
/// Pastes longer than this many lines or characters become a marker.
const PASTE_LINES: usize = 10;
const PASTE_CHARS: usize = 1000;

/// Colours of the editor.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditorTheme {
    pub border: Style,
    pub select_list: SelectListTheme,
}

/// What a key did to the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorEvent {
    /// Enter: the text with paste markers expanded, trimmed. The editor is now empty.
    Submit(String),
    /// The text changed.
    Changed,
    /// Used, text unchanged (cursor moved, autocomplete navigated, ...).
    Handled,
    /// Not an editor key (the application may use it).
    Ignored,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastAction {
    None,
    Type,
    Kill,
    Yank,
}

/// What undo gives back: the text and the pastes its markers stand for.
struct UndoStep {
    state: TextState,
    pastes: BTreeMap<u32, String>,
    paste_counter: u32,
}

struct Autocomplete {
    list: SelectList,
    items: Vec<AutocompleteItem>,
    prefix: String,
}

/// Multi-line text editor.
pub struct Editor {
    top_label: Option<String>,
    state: TextState,
    undo: Vec<UndoStep>,
    kill: KillRing,
    last: LastAction,
    /// Range of the last yank (line, start col, end col) for yank-pop.
    /// Where the last yank went in: its start and end (line, byte column), for yank-pop.
    yank_range: Option<((usize, usize), (usize, usize))>,
    history: Vec<String>,
    history_index: Option<usize>,
    /// What the editor held when history browsing began, given back when it ends.
    history_draft: Option<TextState>,
    pastes: BTreeMap<u32, String>,
    paste_counter: u32,
    jump: Option<bool>,
    focused: bool,
    padding_x: usize,
    terminal_rows: usize,
    scroll: usize,
    layout_width: usize,
    /// Column the cursor tries to keep on vertical motion.
    sticky_col: Option<usize>,
    theme: EditorTheme,
    provider: Option<Box<dyn AutocompleteProvider>>,
    autocomplete: Option<Autocomplete>,
    autocomplete_max_visible: usize,
    disable_submit: bool,
    last_event: Option<EditorEvent>,
    /// A completion the provider applies in the background is still to come.
    applying: bool,
    /// Where the last render put the text rows and the menu, for the mouse.
    drawn: mouse::Drawn,
}

impl Editor {
    pub fn new(theme: EditorTheme) -> Self {
        Editor {
            top_label: None,
            state: TextState::default(),
            undo: Vec::new(),
            kill: KillRing::default(),
            last: LastAction::None,
            yank_range: None,
            history: Vec::new(),
            history_index: None,
            history_draft: None,
            pastes: BTreeMap::new(),
            paste_counter: 0,
            jump: None,
            focused: true,
            padding_x: 0,
            terminal_rows: 24,
            scroll: 0,
            layout_width: 80,
            sticky_col: None,
            theme,
            provider: None,
            autocomplete: None,
            autocomplete_max_visible: 5,
            disable_submit: false,
            last_event: None,
            applying: false,
            drawn: mouse::Drawn::default(),
        }
    }

    pub fn set_theme(&mut self, theme: EditorTheme) {
        self.theme = theme;
    }

    /// Border colour (e.g. by thinking level or bash mode).
    /// Text carried in the top border (`── <label> ───`), e.g. a working indicator.
    pub fn set_top_label(&mut self, label: Option<String>) {
        self.top_label = label;
    }

    pub fn set_border_style(&mut self, style: Style) {
        self.theme.border = style;
    }

    pub fn set_padding_x(&mut self, p: usize) {
        self.padding_x = p;
    }

    /// Terminal height: the editor shows at most max(5, 30%) of it.
    pub fn set_terminal_rows(&mut self, rows: usize) {
        self.terminal_rows = rows;
    }

    pub fn set_autocomplete_provider(&mut self, p: Box<dyn AutocompleteProvider>) {
        self.provider = Some(p);
        self.autocomplete = None;
    }

    pub fn autocomplete_provider_mut(&mut self) -> Option<&mut (dyn AutocompleteProvider + 'static)> {
        self.provider.as_deref_mut()
    }

    pub fn set_autocomplete_max_visible(&mut self, n: usize) {
        self.autocomplete_max_visible = n.clamp(3, 20);
    }

    pub fn set_disable_submit(&mut self, on: bool) {
        self.disable_submit = on;
    }

    pub fn is_showing_autocomplete(&self) -> bool {
        self.autocomplete.is_some()
    }

    /// The raw text (paste markers not expanded).
    pub fn text(&self) -> String {
        self.state.text()
    }

    /// The text with paste markers replaced by their content.
    pub fn expanded_text(&self) -> String {
        self.expand_pastes(&self.state.text())
    }

    pub fn lines(&self) -> &[String] {
        &self.state.lines
    }

    /// Cursor as (line, byte column).
    pub fn cursor(&self) -> (usize, usize) {
        (self.state.line, self.state.col)
    }

    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// Replace the text (undoable); the cursor goes to the end.
    pub fn set_text(&mut self, text: &str) {
        self.snapshot();
        self.state = TextState::from_text(&normalize(text));
        self.history_index = None;
        self.autocomplete = None;
        self.last = LastAction::None;
    }

    /// Insert at the cursor as if typed (undoable).
    pub fn insert_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.autocomplete = None;
        self.history_index = None;
        self.snapshot();
        self.state.insert(&normalize(text));
        self.last = LastAction::None;
    }

    /// Remember a submitted text for up/down recall (trimmed, no consecutive duplicates).
    pub fn add_to_history(&mut self, text: &str) {
        let t = text.trim();
        if t.is_empty() || self.history.first().is_some_and(|h| h == t) {
            return;
        }
        self.history.insert(0, t.to_string());
        self.history.truncate(HISTORY_MAX);
    }

    pub fn take_event(&mut self) -> Option<EditorEvent> {
        self.last_event.take()
    }

    fn expand_pastes(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (id, content) in &self.pastes {
            for marker in marker_forms(*id, content) {
                if out.contains(&marker) {
                    out = out.replace(&marker, content);
                }
            }
        }
        out
    }

    fn snapshot(&mut self) {
        let same = self
            .undo
            .last()
            .is_some_and(|u| u.state == self.state && u.pastes == self.pastes);
        if !same {
            self.undo.push(UndoStep {
                state: self.state.clone(),
                pastes: self.pastes.clone(),
                paste_counter: self.paste_counter,
            });
            if self.undo.len() > UNDO_MAX {
                self.undo.remove(0);
            }
        }
    }

    fn undo(&mut self) -> EditorEvent {
        self.autocomplete = None;
        self.last = LastAction::None;
        self.history_index = None;
        self.history_draft = None;
        match self.undo.pop() {
            Some(u) => {
                self.state = u.state;
                // The pastes go back with the text, so its markers expand to what they showed.
                self.pastes = u.pastes;
                self.paste_counter = u.paste_counter;
                EditorEvent::Changed
            }
            None => EditorEvent::Handled,
        }
    }

    fn rows(&self) -> Vec<VisualRow> {
        layout(&self.state.lines, self.layout_width)
    }

    fn current_row(&self, rows: &[VisualRow]) -> usize {
        cursor_row(rows, self.state.line, self.state.col)
    }

    /// Move the cursor `delta` visual rows, keeping the display column.
    fn move_vertical(&mut self, delta: isize) {
        let rows = self.rows();
        let cur = self.current_row(&rows);
        let r = rows[cur];
        let line = &self.state.lines[r.line];
        let col_w = visible_width(&line[r.start..self.state.col.max(r.start)]);
        let want = *self.sticky_col.get_or_insert(col_w);
        let target = (cur as isize + delta).clamp(0, rows.len() as isize - 1) as usize;
        let t = rows[target];
        let tl = &self.state.lines[t.line];
        let mut col = t.start;
        let mut w = 0;
        let seg = &tl[t.start..t.end];
        let last_row_of_line = rows.get(target + 1).is_none_or(|n| n.line != t.line);
        use unicode_segmentation::UnicodeSegmentation;
        for (i, g) in seg.grapheme_indices(true) {
            let gw = grapheme_width(g);
            if w + gw > want {
                break;
            }
            // A wrapped row's end belongs to the next row; stop before it.
            if !last_row_of_line && t.start + i + g.len() == t.end {
                break;
            }
            w += gw;
            col = t.start + i + g.len();
        }
        self.state.line = t.line;
        self.state.col = col;
    }

    fn on_first_row(&self) -> bool {
        let rows = self.rows();
        self.current_row(&rows) == 0
    }

    fn on_last_row(&self) -> bool {
        let rows = self.rows();
        self.current_row(&rows) + 1 == rows.len()
    }

    fn navigate_history(&mut self, older: bool) -> EditorEvent {
        self.last = LastAction::None;
        if self.history.is_empty() {
            return EditorEvent::Handled;
        }
        let next: Option<usize> = match (self.history_index, older) {
            (None, true) => Some(0),
            (None, false) => return EditorEvent::Handled,
            (Some(i), true) if i + 1 < self.history.len() => Some(i + 1),
            (Some(_), true) => return EditorEvent::Handled,
            (Some(0), false) => None,
            (Some(i), false) => Some(i - 1),
        };
        if self.history_index.is_none() {
            self.snapshot();
            self.history_draft = Some(self.state.clone());
        }
        self.history_index = next;
        self.state = match next {
            // Going back puts the cursor at the entry's start, going forward at its end.
            Some(i) if older => TextState {
                line: 0,
                col: 0,
                ..TextState::from_text(&self.history[i])
            },
            Some(i) => TextState::from_text(&self.history[i]),
            None => self.history_draft.take().unwrap_or_else(|| TextState::from_text("")),
        };
        self.scroll = 0;
        EditorEvent::Changed
    }

    fn submit(&mut self) -> EditorEvent {
        self.autocomplete = None;
        let text = self.expand_pastes(&self.state.text()).trim().to_string();
        self.state = TextState::default();
        self.pastes.clear();
        self.paste_counter = 0;
        self.history_index = None;
        self.scroll = 0;
        self.undo.clear();
        self.last = LastAction::None;
        EditorEvent::Submit(text)
    }

    fn kill(&mut self, removed: String, backward: bool) -> EditorEvent {
        if removed.is_empty() {
            return EditorEvent::Handled;
        }
        let join = self.last == LastAction::Kill;
        self.kill.push(&removed, join, backward);
        self.last = LastAction::Kill;
        EditorEvent::Changed
    }

    fn yank(&mut self) -> EditorEvent {
        let Some(text) = self.kill.top().map(str::to_string) else {
            return EditorEvent::Handled;
        };
        self.snapshot();
        self.insert_yank(&text);
        EditorEvent::Changed
    }

    fn insert_yank(&mut self, text: &str) {
        self.leave_history();
        let start = (self.state.line, self.state.col);
        self.state.insert(text);
        self.yank_range = Some((start, (self.state.line, self.state.col)));
        self.last = LastAction::Yank;
    }

    fn yank_pop(&mut self) -> EditorEvent {
        if self.last != LastAction::Yank || self.kill.len() < 2 {
            return EditorEvent::Handled;
        }
        let Some((start, end)) = self.yank_range else {
            return EditorEvent::Handled;
        };
        let fits = |(l, c): (usize, usize)| {
            self.state
                .lines
                .get(l)
                .is_some_and(|t| c <= t.len() && t.is_char_boundary(c))
        };
        if !fits(start) || !fits(end) || start > end {
            return EditorEvent::Handled;
        }
        self.snapshot();
        // The yanked text (one line or several) comes out before the older entry goes in.
        (self.state.line, self.state.col) = end;
        self.state.cut_to(start.0, start.1);
        let text = self.kill.rotate().unwrap_or("").to_string();
        self.insert_yank(&text);
        EditorEvent::Changed
    }

    fn insert_char(&mut self, c: char) -> EditorEvent {
        self.history_index = None;
        // Typing coalesces into one undo step per word.
        if self.last != LastAction::Type || c.is_whitespace() {
            self.snapshot();
        }
        self.last = LastAction::Type;
        let mut buf = [0u8; 4];
        self.state.insert(c.encode_utf8(&mut buf));
        self.typed_for_autocomplete(c);
        EditorEvent::Changed
    }

    /// Handle one key.
    pub fn handle_key(&mut self, k: &KeyEvent) -> EditorEvent {
        let ev = self.handle_key_inner(k);
        if !matches!(ev, EditorEvent::Ignored) {
            // Any vertical motion keeps the sticky column; everything else resets it.
            let kb = keybindings();
            if !(kb.matches(k, "tui.editor.cursorUp") || kb.matches(k, "tui.editor.cursorDown")) {
                self.sticky_col = None;
            }
        }
        ev
    }

    fn handle_key_inner(&mut self, k: &KeyEvent) -> EditorEvent {
        let kb = keybindings();
        if let Some(forward) = self.jump {
            if kb.matches(k, "tui.editor.jumpForward") || kb.matches(k, "tui.editor.jumpBackward") {
                self.jump = None;
                return EditorEvent::Handled;
            }
            self.jump = None;
            if let Some(c) = k.text() {
                self.state.jump_to(c, forward);
                self.last = LastAction::None;
                return EditorEvent::Handled;
            }
        }
        if kb.matches(k, "tui.input.copy") {
            return EditorEvent::Ignored;
        }
        if kb.matches(k, "tui.editor.undo") {
            return self.undo();
        }
        if self.autocomplete.is_some() {
            if kb.matches(k, "tui.select.cancel") {
                self.autocomplete = None;
                return EditorEvent::Handled;
            }
            if [
                "tui.select.up",
                "tui.select.down",
                "tui.select.pageUp",
                "tui.select.pageDown",
            ]
            .iter()
            .any(|id| kb.matches(k, id))
            {
                if let Some(ac) = self.autocomplete.as_mut() {
                    ac.list.handle_key(k);
                }
                return EditorEvent::Handled;
            }
            if kb.matches(k, "tui.input.tab") {
                return match self.apply_completion(false) {
                    Accepted::Now => EditorEvent::Changed,
                    Accepted::Later | Accepted::Nothing => EditorEvent::Handled,
                };
            }
            if kb.matches(k, "tui.select.confirm") {
                // Only Enter on a command name submits: path and argument menus can have a `/`
                // prefix too (`see /tm`, `/open /tm`), so the text before the cursor decides.
                let is_command =
                    self.autocomplete.as_ref().is_some_and(|a| a.prefix.starts_with('/')) && self.in_command_name();
                if self.apply_completion(is_command) == Accepted::Later {
                    return EditorEvent::Handled;
                }
                if !is_command {
                    return EditorEvent::Changed;
                }
                self.autocomplete = None;
                // A completed command is submitted right away.
            }
        }
        if kb.matches(k, "tui.input.tab") {
            // On a command name Tab only opens the menu; elsewhere it completes a lone match.
            if self.in_command_name() {
                self.refresh_autocomplete(false);
                return EditorEvent::Handled;
            }
            self.refresh_autocomplete(true);
            let single = self.autocomplete.as_ref().is_some_and(|a| a.items.len() == 1);
            if single && self.apply_completion(false) == Accepted::Now {
                return EditorEvent::Changed;
            }
            return EditorEvent::Handled;
        }
        let action = |id: &str| kb.matches(k, id);
        if action("tui.editor.deleteToLineEnd") {
            self.leave_history();
            self.snapshot();
            let r = self.state.delete_to_line_end();
            return self.kill(r, false);
        }
        if action("tui.editor.deleteToLineStart") {
            self.leave_history();
            self.snapshot();
            let r = self.state.delete_to_line_start();
            return self.kill(r, true);
        }
        if action("tui.editor.deleteWordBackward") {
            self.leave_history();
            self.snapshot();
            let m = self.marker_ranges();
            let r = self.state.delete_word_backward_over(&m);
            return self.kill(r, true);
        }
        if action("tui.editor.deleteWordForward") {
            self.leave_history();
            self.snapshot();
            let m = self.marker_ranges();
            let r = self.state.delete_word_forward_over(&m);
            return self.kill(r, false);
        }
        if action("tui.editor.deleteCharBackward") || k.matches("shift+backspace") {
            self.leave_history();
            self.snapshot();
            self.last = LastAction::None;
            let removed = self.delete_marker_backward().or_else(|| self.state.backspace());
            self.menu_after_delete();
            return if removed.is_some() {
                EditorEvent::Changed
            } else {
                EditorEvent::Handled
            };
        }
        if action("tui.editor.deleteCharForward") || k.matches("shift+delete") {
            self.leave_history();
            self.snapshot();
            self.last = LastAction::None;
            let removed = match self.marker_after() {
                Some(end) => Some(self.state.lines[self.state.line].drain(self.state.col..end).collect()),
                None => self.state.delete_forward(),
            };
            self.menu_after_delete();
            return if removed.is_some() {
                EditorEvent::Changed
            } else {
                EditorEvent::Handled
            };
        }
        if action("tui.editor.yank") {
            return self.yank();
        }
        if action("tui.editor.yankPop") {
            return self.yank_pop();
        }
        // Bound history keys browse the entries wherever the cursor is.
        if action("tui.editor.historyPrevious") || action("tui.editor.historyNext") {
            self.autocomplete = None;
            return self.navigate_history(action("tui.editor.historyPrevious"));
        }
        let prev_last = self.last;
        self.last = LastAction::None;
        if action("tui.editor.cursorLineStart") {
            self.state.line_start();
            return EditorEvent::Handled;
        }
        if action("tui.editor.cursorLineEnd") {
            self.state.line_end();
            return EditorEvent::Handled;
        }
        if action("tui.editor.cursorWordLeft") {
            let m = self.marker_ranges();
            self.state.word_left_over(&m);
            return EditorEvent::Handled;
        }
        if action("tui.editor.cursorWordRight") {
            let m = self.marker_ranges();
            self.state.word_right_over(&m);
            return EditorEvent::Handled;
        }
        if action("tui.input.newLine") {
            self.autocomplete = None;
            self.leave_history();
            self.snapshot();
            self.state.newline();
            return EditorEvent::Changed;
        }
        if action("tui.input.submit") {
            if self.disable_submit {
                return EditorEvent::Handled;
            }
            // Terminals without shift+enter: a trailing backslash makes Enter a newline.
            if self.state.current()[..self.state.col].ends_with('\\') {
                self.snapshot();
                self.state.backspace();
                self.state.newline();
                return EditorEvent::Changed;
            }
            return self.submit();
        }
        if action("tui.editor.cursorUp") {
            // On the top row, Up first goes to the line start; from there (or on an empty
            // editor, or while browsing) it goes back through history.
            let first = self.on_first_row();
            if first && (self.state.is_empty() || self.history_index.is_some() || self.state.col == 0) {
                return self.navigate_history(true);
            }
            if first {
                self.state.line_start();
            } else {
                self.move_vertical(-1);
            }
            return EditorEvent::Handled;
        }
        if action("tui.editor.cursorDown") {
            if self.history_index.is_some() && self.on_last_row() {
                return self.navigate_history(false);
            }
            if self.on_last_row() {
                self.state.line_end();
            } else {
                self.move_vertical(1);
            }
            return EditorEvent::Handled;
        }
        // Paste markers move and delete as one unit.
        if action("tui.editor.cursorRight") {
            match self.marker_after() {
                Some(end) => self.state.col = end,
                None => self.state.right(),
            }
            self.menu_follows_cursor();
            return EditorEvent::Handled;
        }
        if action("tui.editor.cursorLeft") {
            match self.marker_before() {
                Some(start) => self.state.col = start,
                None => self.state.left(),
            }
            self.menu_follows_cursor();
            return EditorEvent::Handled;
        }
        if action("tui.editor.pageUp") || action("tui.editor.pageDown") {
            let page = self.max_visible_rows() as isize;
            self.move_vertical(if action("tui.editor.pageUp") { -page } else { page });
            return EditorEvent::Handled;
        }
        if action("tui.editor.jumpForward") {
            self.jump = Some(true);
            return EditorEvent::Handled;
        }
        if action("tui.editor.jumpBackward") {
            self.jump = Some(false);
            return EditorEvent::Handled;
        }
        self.last = prev_last;
        if k.key == Key::Char(' ') && k.mods.shift() && !k.mods.ctrl() && !k.mods.alt() {
            return self.insert_char(' ');
        }
        match k.text() {
            Some(c) => self.insert_char(c),
            None => EditorEvent::Ignored,
        }
    }

    /// Editing ends history browsing: Up and Down move in the text again.
    fn leave_history(&mut self) {
        self.history_index = None;
        self.history_draft = None;
    }

    /// An open menu is asked again for the text before the moved cursor (or closes).
    fn menu_follows_cursor(&mut self) {
        if self.autocomplete.is_some() {
            self.refresh_autocomplete(false);
        }
    }

    /// After a deletion: an open menu updates; a closed one reopens inside a `/command` line
    /// or a token opened by a trigger character.
    fn menu_after_delete(&mut self) {
        if self.autocomplete.is_some() || self.in_completable_context() {
            self.refresh_autocomplete(false);
        }
    }

    /// A slash command name is being typed on the first line: `/mo`, not `/model x`.
    fn in_command_name(&self) -> bool {
        let before = self.state.current()[..self.state.col].trim_start();
        self.state.line == 0 && before.starts_with('/') && !before.contains(' ')
    }

    fn max_visible_rows(&self) -> usize {
        (self.terminal_rows * 3 / 10).max(5)
    }
}

impl Component for Editor {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let max_pad = width.saturating_sub(1) / 2;
        let pad = self.padding_x.min(max_pad);
        let content_w = width.saturating_sub(pad * 2).max(1);
        // Without padding one column is kept free for the cursor at line end.
        let layout_w = content_w.saturating_sub(if pad > 0 { 0 } else { 1 }).max(1);
        self.layout_width = layout_w;
        let rows = self.rows();
        let cur = self.current_row(&rows);
        let max_rows = self.max_visible_rows();
        if cur < self.scroll {
            self.scroll = cur;
        } else if cur >= self.scroll + max_rows {
            self.scroll = cur + 1 - max_rows;
        }
        self.scroll = self.scroll.min(rows.len().saturating_sub(max_rows));
        let border = self.theme.border;
        let rule = |label: Option<String>| -> String {
            match label {
                Some(l) => {
                    let w = visible_width(&l);
                    if w > width {
                        border.paint(&truncate_to_width(&l, width, ""))
                    } else {
                        border.paint(&format!("{l}{}", "─".repeat(width - w)))
                    }
                }
                None => border.paint(&"─".repeat(width)),
            }
        };
        let top = match (&self.top_label, self.scroll) {
            (None, 0) => None,
            (None, n) => Some(scroll_border('↑', n, width)),
            (Some(l), 0) => Some(format!("── {l} ")),
            (Some(l), n) => Some(label_and_scroll(l, n, width)),
        };
        out.push_line(rule(top));
        // The hardware cursor's place is marked even under an open menu (for IME windows).
        let show_marker = self.focused;
        let lpad = " ".repeat(pad);
        let end = (self.scroll + max_rows).min(rows.len());
        for (i, r) in rows.iter().enumerate().take(end).skip(self.scroll) {
            let text = &self.state.lines[r.line][r.start..r.end];
            let mut line = String::with_capacity(text.len() + 16);
            line.push_str(&lpad);
            if i == cur && self.focused {
                let c = self.state.col.clamp(r.start, r.end) - r.start;
                line.push_str(&text[..c]);
                if show_marker {
                    line.push_str(CURSOR_MARKER);
                }
                let after = &text[c..];
                use unicode_segmentation::UnicodeSegmentation;
                match after.graphemes(true).next() {
                    Some(g) => {
                        line.push_str("\x1b[7m");
                        line.push_str(g);
                        line.push_str("\x1b[27m");
                        line.push_str(&after[g.len()..]);
                    }
                    None => line.push_str("\x1b[7m \x1b[27m"),
                }
            } else {
                line.push_str(text);
            }
            out.push_line(line);
        }
        let below = rows.len().saturating_sub(end);
        out.push_line(rule((below > 0).then(|| scroll_border('↓', below, width))));
        let mut menu_rows = 0;
        if let Some(ac) = self.autocomplete.as_mut() {
            let lines = render_lines(&mut ac.list, content_w);
            menu_rows = lines.len();
            for l in lines.iter() {
                out.push_line(format!("{lpad}{l}"));
            }
        }
        self.drawn = mouse::Drawn {
            text_rows: end.saturating_sub(self.scroll),
            menu_rows,
            pad,
        };
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let ev = match event {
            InputEvent::Key(k) => self.handle_key(k),
            InputEvent::Paste(text) => self.paste(text),
            _ => EditorEvent::Ignored,
        };
        let used = ev != EditorEvent::Ignored;
        if used {
            self.last_event = Some(ev);
        }
        used
    }

    fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    fn handle_mouse(&mut self, m: &ComponentMouse) -> bool {
        self.mouse(m)
    }
}

/// A border with ` ↑ N more ` in its middle (at its start when too narrow for that).
fn scroll_border(arrow: char, hidden: usize, width: usize) -> String {
    let label = format!(" {arrow} {hidden} more ");
    let w = visible_width(&label);
    if w + 2 <= width {
        let left = (width - w) / 2;
        return format!("{}{label}{}", "─".repeat(left), "─".repeat(width - left - w));
    }
    format!("─── {arrow} {hidden} more ")
}

/// The top border holding a label (the working indicator) and, in the middle, how many rows
/// are scrolled off above; the label alone when both do not fit.
fn label_and_scroll(label: &str, hidden: usize, width: usize) -> String {
    let more = format!(" ↑ {hidden} more ");
    let (lw, mw) = (visible_width(label), visible_width(&more));
    let start = width.saturating_sub(mw) / 2;
    let left_block = 3 + lw + 1;
    if mw + 2 <= width && start > left_block {
        return format!(
            "── {label} {}{more}{}",
            "─".repeat(start - left_block),
            "─".repeat(width - start - mw)
        );
    }
    format!("── {label} ")
}

#[path = "editor_autocomplete.rs"]
mod autocomplete;
use autocomplete::Accepted;

#[path = "editor_mouse.rs"]
mod mouse;

#[path = "editor_paste.rs"]
mod paste;
use paste::{marker_forms, normalize};

#[cfg(test)]
#[path = "editor_tests.rs"]
mod tests;
