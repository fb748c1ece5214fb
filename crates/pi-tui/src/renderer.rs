//! The inline differential renderer: writes frames into the terminal's normal scrollback,
//! rewriting only from the first changed line, each frame inside synchronized output.

use std::io::{self, Write};

use crate::component::{Frame, CURSOR_MARKER};
use crate::width::{truncate_to_width, visible_width};

const SYNC_BEGIN: &str = "\x1b[?2026h";
const SYNC_END: &str = "\x1b[?2026l";
const CLEAR_ALL: &str = "\x1b[2J\x1b[H\x1b[3J";

/// What the last `render` call did (for tests and debugging).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameStats {
    /// The whole frame was written after clearing the screen and scrollback (or first frame).
    pub full_redraw: bool,
    /// First line index written, if any line was written.
    pub first_written: Option<usize>,
    /// How many content lines were written.
    pub lines_written: usize,
    /// Rows cleared because the content shrank.
    pub lines_cleared: usize,
}

/// Differential renderer state. Content row 0 is the row the cursor was on before the first
/// frame; rows move into scrollback as the content grows.
#[derive(Debug, Default)]
pub struct Renderer {
    prev: Frame,
    width: usize,
    height: usize,
    started: bool,
    /// Content row the terminal cursor is on.
    cursor_row: usize,
    /// Highest content row that exists on screen (written or scrolled into view).
    max_row: usize,
    show_hardware_cursor: bool,
    cursor_shown: bool,
    force_full: bool,
    /// `terminal.clearOnShrink`: redraw from a cleared screen when the content gets shorter.
    clear_on_shrink: bool,
    /// Overlays are shown; they need the rows below the content, so no shrink redraw.
    has_overlays: bool,
    /// Most lines drawn since the screen was last cleared (the working area's height).
    max_lines: usize,
    stats: FrameStats,
}

impl Renderer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Show the hardware cursor at the focused component's marker (hidden otherwise).
    pub fn set_show_hardware_cursor(&mut self, on: bool) {
        self.show_hardware_cursor = on;
    }

    /// Clear the screen and redraw whenever a frame is shorter than the tallest one drawn
    /// since the last clear, instead of blanking the rows left below it.
    pub fn set_clear_on_shrink(&mut self, on: bool) {
        self.clear_on_shrink = on;
    }

    pub fn clear_on_shrink(&self) -> bool {
        self.clear_on_shrink
    }

    /// Whether overlays are shown (they keep the rows below the content, so no shrink redraw).
    pub fn set_has_overlays(&mut self, on: bool) {
        self.has_overlays = on;
    }

    /// Make the next frame a full redraw (e.g. after resuming from suspend).
    pub fn request_full_redraw(&mut self) {
        self.force_full = true;
    }

    pub fn stats(&self) -> FrameStats {
        self.stats
    }

    /// Back on the main screen after fullscreen: the terminal kept it as this renderer left
    /// it, so frames go on from the last one (no clear, nothing written twice), except the
    /// image rows, which the alternate screen may have taken with it and are drawn again.
    pub fn resume_main_screen(&mut self) {
        if self.prev.iter().any(|l| crate::kitty::is_image_line(l)) {
            let mut prev = Frame::new();
            prev.extend_lines(self.prev.iter().map(|l| {
                if crate::kitty::is_image_line(l) {
                    String::new()
                } else {
                    l.clone()
                }
            }));
            self.prev = prev.sealed();
        }
    }

    /// Lines of the last frame.
    pub fn previous(&self) -> &Frame {
        &self.prev
    }

    /// Draw `frame` for a terminal of `width` x `height` cells.
    pub fn render<W: Write + ?Sized>(
        &mut self,
        frame: Frame,
        width: usize,
        height: usize,
        out: &mut W,
    ) -> io::Result<()> {
        let frame = frame.sealed();
        let height = height.max(1);
        let width = width.max(1);
        let mut buf = String::new();
        self.stats = FrameStats::default();
        let resized = self.started && (width != self.width || height != self.height);

        let shrank = self.clear_on_shrink && !self.has_overlays && frame.len() < self.max_lines;
        if !self.started || resized || self.force_full {
            let clear = self.started;
            self.full(&frame, width, clear, &mut buf);
        } else if shrank {
            self.full(&frame, width, true, &mut buf);
        } else {
            let first = frame.first_difference(&self.prev);
            let visible_top = self.max_row.saturating_sub(height - 1);
            // Content that shrinks above the screen cannot be scrolled back: redraw.
            let hides_above = visible_top > 0 && frame.len() <= visible_top;
            match first {
                None => {}
                Some(_) if hides_above => self.full(&frame, width, true, &mut buf),
                Some(first) if first < visible_top => self.full(&frame, width, true, &mut buf),
                Some(first) => self.partial(&frame, first, width, &mut buf),
            }
        }
        // The marker counts only on rows still on screen after this frame.
        let visible_top = self.max_row.saturating_sub(height - 1);
        let cursor = find_cursor(&frame, height, visible_top);
        self.place_cursor(cursor, &mut buf);
        self.width = width;
        self.height = height;
        self.started = true;
        self.force_full = false;
        self.prev = frame;
        if buf.is_empty() {
            return Ok(());
        }
        out.write_all(SYNC_BEGIN.as_bytes())?;
        out.write_all(buf.as_bytes())?;
        out.write_all(SYNC_END.as_bytes())?;
        out.flush()
    }

    /// Move below the content (so the shell prompt starts on a fresh line) and show the cursor.
    pub fn finish<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        if !self.started {
            return Ok(());
        }
        let mut buf = String::new();
        let last = self.prev.len().saturating_sub(1);
        self.move_to(last, &mut buf);
        buf.push_str("\r\n\x1b[?25h");
        self.cursor_row = last + 1;
        self.max_row = self.max_row.max(self.cursor_row);
        out.write_all(buf.as_bytes())?;
        out.flush()
    }

    /// As [`Self::finish`], the way pi 1.6 leaves its screen at exit: the cursor first steps
    /// one row below the last line where the screen has room (a cursor move, which never
    /// scrolls), then to a new line, so what is printed next sits one blank row below the
    /// frame unless the frame reaches the bottom.
    pub fn finish_spaced<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        if !self.started {
            return Ok(());
        }
        let mut buf = String::new();
        let last = self.prev.len().saturating_sub(1);
        self.move_to(last, &mut buf);
        buf.push_str("\x1b[B\r\n\x1b[?25h");
        self.cursor_row = last + 2;
        self.max_row = self.max_row.max(self.cursor_row);
        out.write_all(buf.as_bytes())?;
        out.flush()
    }

    fn full(&mut self, frame: &Frame, width: usize, clear: bool, buf: &mut String) {
        if clear {
            buf.push_str(CLEAR_ALL);
        } else if self.started {
            buf.push('\r');
        }
        for (i, line) in frame.iter().enumerate() {
            if i > 0 {
                buf.push_str("\r\n");
            }
            push_line(buf, line, width);
        }
        let n = frame.len();
        self.cursor_row = n.saturating_sub(1);
        self.max_row = self.cursor_row;
        self.max_lines = if clear { n } else { self.max_lines.max(n) };
        self.stats.full_redraw = true;
        self.stats.first_written = (n > 0).then_some(0);
        self.stats.lines_written = n;
    }

    fn partial(&mut self, frame: &Frame, first: usize, width: usize, buf: &mut String) {
        let prev_len = self.prev.len();
        let new_len = frame.len();
        let end = if new_len == prev_len {
            frame.last_difference(&self.prev).map_or(first, |l| l + 1)
        } else {
            new_len
        };
        let mut written = 0;
        for (k, line) in frame.iter_from(first).take(end.saturating_sub(first)).enumerate() {
            let row = first + k;
            if k == 0 {
                self.move_to(row, buf);
            } else {
                buf.push_str("\r\n");
                self.cursor_row = row;
                self.max_row = self.max_row.max(row);
            }
            buf.push_str("\x1b[2K");
            push_line(buf, line, width);
            written += 1;
        }
        // Content shrank: blank the rows that no longer have content.
        let mut cleared = 0;
        if new_len < prev_len {
            let start = new_len;
            if written == 0 {
                self.move_to(start, buf);
            } else {
                buf.push_str("\r\n");
                self.cursor_row = start;
            }
            buf.push_str("\x1b[2K");
            cleared += 1;
            for row in start + 1..prev_len {
                buf.push_str("\r\n\x1b[2K");
                self.cursor_row = row;
                cleared += 1;
            }
            let back_to = new_len.saturating_sub(1);
            self.move_to(back_to, buf);
        }
        self.max_lines = self.max_lines.max(new_len);
        self.stats.first_written = (written > 0).then_some(first);
        self.stats.lines_written = written;
        self.stats.lines_cleared = cleared;
    }

    /// Move the terminal cursor to column 0 of content row `row`, creating rows below the
    /// last existing one with newlines (which scroll the screen).
    fn move_to(&mut self, row: usize, buf: &mut String) {
        use std::fmt::Write as _;
        if row < self.cursor_row {
            let _ = write!(buf, "\x1b[{}A", self.cursor_row - row);
        } else if row > self.cursor_row {
            let within = row.min(self.max_row);
            if within > self.cursor_row {
                let _ = write!(buf, "\x1b[{}B", within - self.cursor_row);
            }
            for _ in within.max(self.cursor_row)..row {
                buf.push_str("\r\n");
            }
        }
        buf.push('\r');
        self.cursor_row = row;
        self.max_row = self.max_row.max(row);
    }

    fn place_cursor(&mut self, cursor: Option<(usize, usize)>, buf: &mut String) {
        use std::fmt::Write as _;
        match cursor {
            Some((row, col)) => {
                let moved = row != self.cursor_row || !buf.is_empty();
                if moved {
                    self.move_to(row, buf);
                    if col > 0 {
                        let _ = write!(buf, "\x1b[{col}C");
                    }
                }
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
    }
}

/// Control characters other than ESC would move the terminal cursor behind our back: tabs
/// become spaces (as wide as `visible_width` counts them), the rest are dropped.
fn sanitize(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for piece in crate::ansi::pieces(line) {
        match piece {
            crate::ansi::Piece::Escape(e) => out.push_str(e),
            crate::ansi::Piece::Text(t) => {
                for c in t.chars() {
                    if c == '\t' {
                        out.push_str(&" ".repeat(crate::width::TAB_WIDTH));
                    } else if !c.is_control() {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// Write one line: the cursor marker removed, cut to the width, styles closed at the end.
pub(crate) fn push_line(buf: &mut String, line: &str, width: usize) {
    let has_controls = line.bytes().any(|b| (b < 0x20 && b != 0x1b && b != 0x07) || b == 0x7f);
    if !has_controls && !line.contains('\x1b') && line.is_ascii() && line.len() <= width {
        buf.push_str(line);
        return;
    }
    let sanitized;
    let cleaned;
    let mut l: &str = line;
    if has_controls {
        sanitized = sanitize(l);
        l = &sanitized;
    }
    if l.contains(CURSOR_MARKER) {
        cleaned = l.replace(CURSOR_MARKER, "");
        l = &cleaned;
    }
    if visible_width(l) > width {
        buf.push_str(&truncate_to_width(l, width, ""));
    } else {
        buf.push_str(l);
    }
    if l.contains('\x1b') {
        buf.push_str("\x1b[0m");
        if l.contains("\x1b]8;") {
            buf.push_str("\x1b]8;;\x1b\\");
        }
    }
}

/// Row and column of the cursor marker within the last `height` lines (not above `top`).
fn find_cursor(frame: &Frame, height: usize, top: usize) -> Option<(usize, usize)> {
    let start = frame.len().saturating_sub(height).max(top);
    for (k, line) in frame.iter_from(start).enumerate() {
        if let Some(pos) = line.find(CURSOR_MARKER) {
            return Some((start + k, visible_width(&line[..pos])));
        }
    }
    None
}
