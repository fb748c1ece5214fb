//! Drawing over composed rows: restyled column ranges (selection, search matches), the
//! search box and the "jump to latest" pill drawn over a row.

use crate::width::{slice_columns, visible_width};

use super::SEARCH_PLACEHOLDER;

/// `line` with columns `from..to` in reverse video (their own styles dropped).
pub(super) fn reverse_columns(line: &str, from: usize, to: usize) -> String {
    restyle_columns(line, from, to, "\x1b[7m")
}

/// `line` with columns `from..to` drawn with the SGR sequence `sgr` only.
pub(super) fn restyle_columns(line: &str, from: usize, to: usize, sgr: &str) -> String {
    if to <= from {
        return line.to_string();
    }
    let w = visible_width(line);
    let left = slice_columns(line, 0, from);
    let left_pad = from.saturating_sub(visible_width(&left));
    let middle = crate::ansi::strip_ansi(&slice_columns(line, from, to - from));
    let middle_pad = (to - from).saturating_sub(visible_width(&middle));
    let right = if w > to {
        slice_columns(line, to, w - to)
    } else {
        String::new()
    };
    // Past the text the selection covers nothing: do not paint empty cells.
    let middle_pad = if w <= to { 0 } else { middle_pad };
    format!(
        "{left}{}\x1b[0m{sgr}{middle}{}\x1b[0m{right}",
        " ".repeat(left_pad),
        " ".repeat(middle_pad)
    )
}

/// The three rows of the search box, 40 % of the width (at least 32 columns). `counter` is
/// what stands dim at the right (`2/7`, `No matches`, nothing while the query is empty).
/// The text field shows its cursor as a reverse-video cell, as pi draws a focused input.
pub(super) fn search_box(
    field_input: &mut crate::components::Input,
    counter: &str,
    keys: &(String, String),
    hovered: Option<bool>,
    width: usize,
) -> SearchBox {
    let query = field_input.value();
    let w = (width * 2 / 5).max(32).min(width);
    if w < 8 {
        return SearchBox::default();
    }
    let inner = w - 2;
    let counter = if counter.is_empty() {
        String::new()
    } else {
        format!("\x1b[2m {counter} \x1b[22m")
    };
    let field_w = inner.saturating_sub(visible_width(&counter) + 1);
    let field = if query.is_empty() {
        let placeholder = crate::width::truncate_to_width(SEARCH_PLACEHOLDER, field_w, "");
        let mut chars = placeholder.chars();
        let first = chars.next().map(String::from).unwrap_or_else(|| " ".to_string());
        format!(
            "{}\x1b[2m\x1b[7m{first}\x1b[27m{}\x1b[22m",
            crate::component::CURSOR_MARKER,
            chars.as_str()
        )
    } else {
        // The field scrolls to keep its cursor in view.
        crate::component::render_lines(field_input, field_w.max(1))
            .into_iter()
            .next()
            .unwrap_or_default()
    };
    let pad = field_w.saturating_sub(visible_width(&field));
    // The buttons name the keys bound to the previous and next match; arrows alone when
    // the names do not fit, none when the arrows do not either.
    let available = inner.saturating_sub(3);
    let mut buttons = (format!("↑ {}", keys.0), " · ", format!("↓ {}", keys.1));
    let width_of = |b: &(String, &str, String)| visible_width(&b.0) + visible_width(b.1) + visible_width(&b.2);
    if width_of(&buttons) > available {
        buttons = ("↑".to_string(), " ", "↓".to_string());
    }
    let controls = width_of(&buttons);
    let (bottom, columns) = if controls <= available {
        let left_rule = inner - controls - 3;
        let previous = (1 + left_rule + 1, 1 + left_rule + 1 + visible_width(&buttons.0));
        let next_start = previous.1 + visible_width(buttons.1);
        let next = (next_start, next_start + visible_width(&buttons.2));
        // The button under the pointer is underlined (`Some(true)`: the next one).
        let mark = |text: &str, on: bool| {
            if on {
                format!("\x1b[4m{text}\x1b[24m")
            } else {
                text.to_string()
            }
        };
        (
            format!(
                "└{} {}{}{} ─┘",
                "─".repeat(left_rule),
                mark(&buttons.0, hovered == Some(false)),
                buttons.1,
                mark(&buttons.2, hovered == Some(true))
            ),
            Some((previous, next)),
        )
    } else {
        (format!("└{}┘", "─".repeat(inner)), None)
    };
    SearchBox {
        rows: vec![
            format!("┌{}┐", "─".repeat(inner)),
            format!("│ {field}{}{counter}│", " ".repeat(pad)),
            bottom,
        ],
        buttons: columns,
    }
}

/// The search box's rows and, on its bottom row, the columns (from the box's left edge) of
/// the previous-match and next-match buttons.
#[derive(Default)]
pub(super) struct SearchBox {
    pub rows: Vec<String>,
    pub buttons: Option<((usize, usize), (usize, usize))>,
}

/// `line` with `text` (`text_w` columns wide) drawn over it from column `col`.
pub(super) fn overlay_columns(line: &str, col: usize, text: &str, text_w: usize) -> String {
    let w = visible_width(line);
    let left = slice_columns(line, 0, col);
    let pad = col.saturating_sub(visible_width(&left));
    let right = if w > col + text_w {
        slice_columns(line, col + text_w, w - col - text_w)
    } else {
        String::new()
    };
    format!("{left}{}\x1b[0m{text}\x1b[0m{right}", " ".repeat(pad))
}
