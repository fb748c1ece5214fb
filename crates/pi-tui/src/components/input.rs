//! `Input`: a single-line text field that scrolls horizontally to keep the cursor visible.

use unicode_segmentation::UnicodeSegmentation;

use super::editor_buffer::TextState;
use crate::component::{Component, Frame, CURSOR_MARKER};
use crate::component_mouse::{ComponentMouse, ComponentMouseKind};
use crate::input::InputEvent;
use crate::keybindings::keybindings;
use crate::keys::KeyEvent;
use crate::width::{grapheme_width, visible_width};

/// What a key did to the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputFieldEvent {
    Submit(String),
    Cancelled,
    Changed,
    Handled,
    Ignored,
}

/// One-line text input.
#[derive(Debug, Clone)]
pub struct Input {
    state: TextState,
    prompt: String,
    focused: bool,
    last_event: Option<InputFieldEvent>,
    /// Columns of text scrolled off to the left in the last render, for the mouse.
    scrolled: usize,
}

impl Default for Input {
    fn default() -> Self {
        Self::new("> ")
    }
}

impl Input {
    pub fn new(prompt: impl Into<String>) -> Self {
        Input {
            state: TextState::default(),
            prompt: prompt.into(),
            focused: true,
            last_event: None,
            scrolled: 0,
        }
    }

    pub fn value(&self) -> &str {
        &self.state.lines[0]
    }

    pub fn set_value(&mut self, v: &str) {
        let one_line: String = v.chars().filter(|c| *c != '\n' && *c != '\r').collect();
        self.state = TextState::from_text(&one_line);
    }

    pub fn take_event(&mut self) -> Option<InputFieldEvent> {
        self.last_event.take()
    }

    pub fn handle_key(&mut self, k: &KeyEvent) -> InputFieldEvent {
        let kb = keybindings();
        let m = |id: &str| kb.matches(k, id);
        if m("tui.input.submit") {
            return InputFieldEvent::Submit(self.value().to_string());
        }
        if m("tui.select.cancel") {
            return InputFieldEvent::Cancelled;
        }
        let before = self.state.lines[0].clone();
        if m("tui.editor.deleteCharBackward") {
            if self.state.col > 0 {
                self.state.backspace();
            }
        } else if m("tui.editor.deleteCharForward") {
            if self.state.col < self.state.lines[0].len() {
                self.state.delete_forward();
            }
        } else if m("tui.editor.deleteWordBackward") {
            if self.state.col > 0 {
                self.state.delete_word_backward();
            }
        } else if m("tui.editor.deleteToLineStart") {
            self.state.delete_to_line_start();
        } else if m("tui.editor.deleteToLineEnd") {
            if self.state.col < self.state.lines[0].len() {
                self.state.delete_to_line_end();
            }
        } else if m("tui.editor.cursorLeft") {
            if self.state.col > 0 {
                self.state.left();
            }
        } else if m("tui.editor.cursorRight") {
            if self.state.col < self.state.lines[0].len() {
                self.state.right();
            }
        } else if m("tui.editor.cursorWordLeft") {
            if self.state.col > 0 {
                self.state.word_left();
            }
        } else if m("tui.editor.cursorWordRight") {
            if self.state.col < self.state.lines[0].len() {
                self.state.word_right();
            }
        } else if m("tui.editor.cursorLineStart") {
            self.state.line_start();
        } else if m("tui.editor.cursorLineEnd") {
            self.state.line_end();
        } else if let Some(c) = k.text() {
            let mut b = [0u8; 4];
            self.state.insert(c.encode_utf8(&mut b));
        } else {
            return InputFieldEvent::Ignored;
        }
        if self.state.lines[0] != before {
            InputFieldEvent::Changed
        } else {
            InputFieldEvent::Handled
        }
    }
}

impl Component for Input {
    /// A press on the field puts the cursor on the pressed cell (at the end past the text),
    /// as pi 1.6's input takes it; other reports are not its own.
    fn handle_mouse(&mut self, m: &ComponentMouse) -> bool {
        if m.kind != ComponentMouseKind::Press || m.row != 0 {
            return false;
        }
        let target = self.scrolled + m.column.saturating_sub(visible_width(&self.prompt));
        let text = &self.state.lines[0];
        let mut col = 0;
        let mut at = text.len();
        for (i, g) in text.grapheme_indices(true) {
            let next = col + grapheme_width(g);
            if target < next {
                at = i;
                break;
            }
            col = next;
        }
        self.state.col = at;
        true
    }

    fn render(&mut self, width: usize, out: &mut Frame) {
        let pw = visible_width(&self.prompt);
        let avail = width.saturating_sub(pw + 1).max(1);
        let text = &self.state.lines[0];
        let col = self.state.col;
        // Scroll so the cursor stays within the visible window.
        let before_w = visible_width(&text[..col]);
        let skip_w = before_w.saturating_sub(avail.saturating_sub(1));
        let mut start = 0;
        let mut acc = 0;
        for (i, g) in text.grapheme_indices(true) {
            if acc >= skip_w {
                start = i;
                break;
            }
            acc += grapheme_width(g);
            start = i + g.len();
        }
        self.scrolled = acc.min(before_w);
        let mut line = self.prompt.clone();
        let mut used = 0;
        let mut cursor_drawn = false;
        for (i, g) in text[start..].grapheme_indices(true) {
            let gw = grapheme_width(g);
            if used + gw > avail {
                break;
            }
            if start + i == col && self.focused {
                line.push_str(CURSOR_MARKER);
                line.push_str(&format!("\x1b[7m{g}\x1b[27m"));
                cursor_drawn = true;
            } else {
                line.push_str(g);
            }
            used += gw;
        }
        if self.focused && !cursor_drawn {
            line.push_str(CURSOR_MARKER);
            line.push_str("\x1b[7m \x1b[27m");
        }
        out.push_line(line);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let ev = match event {
            InputEvent::Key(k) => self.handle_key(k),
            InputEvent::Paste(p) => {
                let clean: String = p.chars().filter(|c| !c.is_control()).collect();
                self.state.insert(&clean);
                InputFieldEvent::Changed
            }
            _ => InputFieldEvent::Ignored,
        };
        let used = ev != InputFieldEvent::Ignored;
        if used {
            self.last_event = Some(ev);
        }
        used
    }

    fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ansi::strip_ansi;
    use crate::component::render_lines;
    use crate::keys::parse_key;

    #[test]
    fn typing_scrolling_and_submit() {
        let mut i = Input::new("> ");
        for c in "hello world".chars() {
            i.handle_key(&parse_key(&c.to_string(), false).expect("key"));
        }
        assert_eq!(strip_ansi(&render_lines(&mut i, 40)[0]), "> hello world ");
        // Narrow: the tail around the cursor stays visible.
        assert_eq!(strip_ansi(&render_lines(&mut i, 8)[0]), "> orld ");
        i.handle_key(&parse_key("\x17", false).expect("key"));
        assert_eq!(i.value(), "hello ");
        assert_eq!(
            i.handle_key(&parse_key("\r", false).expect("key")),
            InputFieldEvent::Submit("hello ".into())
        );
        assert_eq!(
            i.handle_key(&parse_key("\x1b", false).expect("key")),
            InputFieldEvent::Cancelled
        );
    }
}
