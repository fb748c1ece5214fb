//! The alternate-screen renderer: every frame is exactly the window's rows; only rows that
//! changed are rewritten (each addressed absolutely), inside synchronized output.

use std::io::{self, Write};

use crate::component::CURSOR_MARKER;
use crate::renderer::{push_line, FrameStats};
use crate::width::visible_width;

const SYNC_BEGIN: &str = "\x1b[?2026h";
const SYNC_END: &str = "\x1b[?2026l";
/// Every row ends with the style and the hyperlink closed, so nothing bleeds into the next.
const ROW_END: &str = "\x1b[0m\x1b]8;;\x07";

/// Row-diff renderer for a screen the application owns entirely.
#[derive(Debug, Default)]
pub struct AltScreen {
    prev: Vec<String>,
    width: usize,
    height: usize,
    started: bool,
    force_full: bool,
    show_hardware_cursor: bool,
    cursor_shown: bool,
    stats: FrameStats,
}

impl AltScreen {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set_show_hardware_cursor(&mut self, on: bool) {
        self.show_hardware_cursor = on;
    }

    /// Make the next frame a full redraw (after a suspend, or when the screen was disturbed).
    pub fn request_full_redraw(&mut self) {
        self.force_full = true;
    }

    pub fn stats(&self) -> FrameStats {
        self.stats
    }

    /// The rows of the last frame.
    pub fn previous(&self) -> &[String] {
        &self.prev
    }

    /// Draw `rows` (cut or padded to `height`) on a `width` x `height` screen.
    pub fn render<W: Write + ?Sized>(
        &mut self,
        mut rows: Vec<String>,
        width: usize,
        height: usize,
        out: &mut W,
    ) -> io::Result<()> {
        use std::fmt::Write as _;
        let width = width.max(1);
        let height = height.max(1);
        rows.resize(height, String::new());
        self.stats = FrameStats::default();
        let full = !self.started || self.force_full || width != self.width || height != self.height;
        let mut buf = String::new();
        if full {
            buf.push_str("\x1b[2J");
            self.stats.full_redraw = true;
        }
        for (i, row) in rows.iter().enumerate() {
            if !full && self.prev.get(i) == Some(row) {
                continue;
            }
            let _ = write!(buf, "\x1b[{};1H\x1b[2K", i + 1);
            push_line(&mut buf, row, width);
            buf.push_str(ROW_END);
            self.stats.first_written.get_or_insert(i);
            self.stats.lines_written += 1;
        }
        let cursor = rows.iter().enumerate().find_map(|(i, r)| {
            r.find(CURSOR_MARKER)
                .map(|pos| (i, visible_width(&r[..pos]).min(width - 1)))
        });
        match cursor {
            Some((row, col)) => {
                let _ = write!(buf, "\x1b[{};{}H", row + 1, col + 1);
                if self.show_hardware_cursor && !self.cursor_shown {
                    buf.push_str("\x1b[?25h");
                    self.cursor_shown = true;
                }
            }
            None => {
                if self.cursor_shown {
                    buf.push_str("\x1b[?25l");
                    self.cursor_shown = false;
                }
            }
        }
        if !self.show_hardware_cursor && self.cursor_shown {
            buf.push_str("\x1b[?25l");
            self.cursor_shown = false;
        }
        self.width = width;
        self.height = height;
        self.started = true;
        self.force_full = false;
        self.prev = rows;
        if self.stats.lines_written == 0 && cursor.is_none() {
            return Ok(());
        }
        out.write_all(SYNC_BEGIN.as_bytes())?;
        out.write_all(buf.as_bytes())?;
        out.write_all(SYNC_END.as_bytes())?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn first_frame_clears_then_only_changed_rows_are_written() {
        let mut s = AltScreen::new();
        let mut out = Vec::new();
        s.render(rows(&["a", "b", "c"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\x1b[2J"));
        assert!(text.contains("\x1b[1;1H\x1b[2Ka\x1b[0m"));
        assert_eq!(s.stats().lines_written, 4, "padded to the height");

        let mut out = Vec::new();
        s.render(rows(&["a", "B", "c"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("\x1b[2J"));
        assert!(text.contains("\x1b[2;1H\x1b[2KB"));
        assert!(!text.contains("\x1b[1;1H\x1b[2K"));
        assert_eq!(s.stats().lines_written, 1);

        let mut out = Vec::new();
        s.render(rows(&["a", "B", "c"]), 10, 4, &mut out).unwrap();
        assert!(out.is_empty(), "nothing changed, nothing written");
    }

    #[test]
    fn a_size_change_redraws_everything_and_long_rows_are_cut() {
        let mut s = AltScreen::new();
        s.render(rows(&["abc"]), 10, 2, &mut Vec::new()).unwrap();
        let mut out = Vec::new();
        s.render(rows(&["abcdefgh"]), 4, 2, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\x1b[2J") && text.contains("abcd\x1b[0m") && !text.contains("abcde"));
    }

    #[test]
    fn cursor_marker_places_the_cursor() {
        let mut s = AltScreen::new();
        let mut out = Vec::new();
        s.render(vec![String::new(), format!("> ab{CURSOR_MARKER}")], 10, 3, &mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\x1b[2;5H"), "{text:?}");
        assert!(!text.contains(CURSOR_MARKER));
    }
}
