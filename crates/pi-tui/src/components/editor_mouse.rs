//! The editor's share of the mouse (fullscreen), as pi 1.6's editor takes it: over the
//! completion menu a press picks an item, a click applies it (as Tab does) and the wheel
//! moves the pick; a click on the text puts the cursor on the clicked cell. A press or drag
//! on the text is left to the screen selection, and the wheel to the transcript.

use unicode_segmentation::UnicodeSegmentation;

use super::Editor;
use crate::component::Component;
use crate::component_mouse::{ComponentMouse, ComponentMouseKind};
use crate::input::InputEvent;
use crate::width::grapheme_width;

/// What the last render drew below the top border.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Drawn {
    /// Text rows shown (after the ones scrolled off).
    pub text_rows: usize,
    /// Rows of the completion menu under the bottom border.
    pub menu_rows: usize,
    /// Columns of padding left of the text and the menu.
    pub pad: usize,
}

impl Editor {
    pub(super) fn mouse(&mut self, m: &ComponentMouse) -> bool {
        let drawn = self.drawn;
        // The menu starts under the bottom border.
        let menu = drawn.text_rows + 2..drawn.text_rows + 2 + drawn.menu_rows;
        if let Some(inner) = m.within(&menu) {
            let Some(ac) = self.autocomplete.as_ref() else {
                return false;
            };
            let Some(keys) = ac.list.mouse_keys(&inner, "tui.input.tab") else {
                return false;
            };
            for k in keys {
                self.handle_input(&InputEvent::Key(k));
            }
            return true;
        }
        if m.kind != ComponentMouseKind::Click {
            return false;
        }
        // A click on a border does nothing more (pi takes it all the same).
        if m.row == 0 || m.row > drawn.text_rows {
            return true;
        }
        self.place_cursor(self.scroll + m.row - 1, m.column.saturating_sub(drawn.pad));
        true
    }

    /// Put the cursor on visual row `index` at the grapheme drawn over `column`: before a wide
    /// character whichever half was clicked, at the end of the line past its text, and on the
    /// last character of a wrapped row (its end is the next row's start).
    fn place_cursor(&mut self, index: usize, column: usize) {
        let rows = self.rows();
        let Some(row) = rows.get(index).copied() else {
            return;
        };
        let line = &self.state.lines[row.line];
        let chunk = &line[row.start..row.end];
        let mut at = chunk.len();
        let mut last = 0;
        let mut col = 0;
        for (i, g) in chunk.grapheme_indices(true) {
            last = i;
            let next = col + grapheme_width(g);
            if column < next {
                at = i;
                break;
            }
            col = next;
        }
        let last_of_line = rows.get(index + 1).is_none_or(|n| n.line != row.line);
        if !last_of_line && at == chunk.len() && !chunk.is_empty() {
            at = last;
        }
        self.state.line = row.line;
        self.state.col = row.start + at;
        self.sticky_col = None;
        self.last = super::LastAction::None;
        self.leave_history();
        self.menu_follows_cursor();
    }
}
