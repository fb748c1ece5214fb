//! The fullscreen layout's share of the mouse: the wheel, the scrollbar, the pill, the search
//! box's arrows, and selecting text: over the transcript (by line, scrolling along while the
//! pointer is held at its edge) or over the rest of the screen (the dock, by screen row).

use std::time::{Duration, Instant};

use super::scrollbar::Geometry;
use super::selection::{click_count, word_at, Granularity, Point, Selection};
use super::{Fullscreen, MouseAction, SearchKey};
use crate::input::{MouseEvent, MouseKind};
use crate::width::visible_width;

/// How often a drag held at the transcript's top or bottom edge scrolls it by a line.
const AUTO_SCROLL_EVERY: Duration = Duration::from_millis(50);

/// A drag held at an edge of the transcript: which way it scrolls, where the pointer is, and
/// when the next line comes.
#[derive(Debug, Clone, Copy)]
pub(super) struct AutoScroll {
    direction: isize,
    pointer: (usize, usize),
    due: Instant,
}

/// The target of the OSC 8 hyperlink drawn at `column` of `line`, if any.
pub(super) fn link_at(line: &str, column: usize) -> Option<String> {
    use unicode_segmentation::UnicodeSegmentation;
    let mut url: Option<&str> = None;
    let mut col = 0;
    for piece in crate::ansi::pieces(line) {
        match piece {
            crate::ansi::Piece::Escape(e) => {
                if let Some(rest) = e.strip_prefix("\x1b]8;") {
                    let target = rest.split_once(';').map_or("", |(_, t)| t);
                    let target = target.trim_end_matches('\x07').trim_end_matches("\x1b\\");
                    url = (!target.is_empty()).then_some(target);
                }
            }
            crate::ansi::Piece::Text(t) => {
                for g in t.graphemes(true) {
                    let w = crate::width::grapheme_width(g);
                    if (col..col + w.max(1)).contains(&column) {
                        return url.map(str::to_string);
                    }
                    col += w;
                }
            }
        }
    }
    None
}

impl Fullscreen {
    /// React to a mouse report over the screen of the last frame.
    pub fn handle_mouse(&mut self, m: &MouseEvent) -> MouseAction {
        // The search box's arrows: underlined under the pointer, a press steps through the
        // matches.
        let hover = self.search_button_at(m.row, m.column);
        let hover_changed = hover != self.search_hover;
        self.search_hover = hover;
        if let (Some(next), MouseKind::Press(0)) = (hover, m.kind) {
            self.search_key(if next { SearchKey::Next } else { SearchKey::Previous });
            return MouseAction::Redraw;
        }
        if hover_changed && m.kind == MouseKind::Move {
            return MouseAction::Redraw;
        }
        if let Some(action) = self.scrollbar_mouse(m) {
            return action;
        }
        let in_transcript = m.row < self.transcript_rows;
        match m.kind {
            MouseKind::WheelUp | MouseKind::WheelDown => {
                let direction = if m.kind == MouseKind::WheelUp { -1 } else { 1 };
                let mut step = self.wheel.next(direction, Instant::now());
                if m.alt {
                    step *= 5;
                }
                let before = self.viewport;
                self.viewport.scroll_by(step as isize * direction as isize);
                if self.viewport == before {
                    MouseAction::None
                } else {
                    MouseAction::Redraw
                }
            }
            MouseKind::Press(0) => {
                self.auto_scroll = None;
                let on_pill = self
                    .pill_columns
                    .is_some_and(|(from, to)| (from..to).contains(&m.column));
                if in_transcript && on_pill && m.row + 1 == self.transcript_rows {
                    // The pill is on the last transcript row.
                    self.selection = None;
                    self.viewport.to_bottom();
                    return MouseAction::Redraw;
                }
                if in_transcript && self.search.is_none() {
                    self.press((self.first_line + m.row, m.column), false);
                } else {
                    // Below the transcript (the editor, the footer), and anywhere while the
                    // search box is open, pi selects what the screen shows, by screen row.
                    let row = m.row.min(self.screen_rows.len().saturating_sub(1));
                    self.press((row, m.column.min(self.width.saturating_sub(1))), true);
                }
                MouseAction::Redraw
            }
            MouseKind::Drag(0) if self.dragging => {
                self.last_click = None;
                self.dragged = true;
                let Some(sel) = self.selection else {
                    return MouseAction::None;
                };
                if sel.screen {
                    let row = m.row.min(self.screen_rows.len().saturating_sub(1));
                    self.drag_to((row, m.column.min(self.width.saturating_sub(1))));
                    return MouseAction::Redraw;
                }
                // Held at the top or bottom row (or below, over the dock), the transcript
                // scrolls along on a timer; see [`Fullscreen::auto_scroll`].
                let last_row = self.transcript_rows.saturating_sub(1);
                let direction = if m.row == 0 {
                    -1
                } else if m.row >= last_row {
                    1
                } else {
                    0
                };
                let pointer = (m.row, m.column);
                self.auto_scroll = match self.auto_scroll {
                    _ if direction == 0 => None,
                    Some(a) => Some(AutoScroll {
                        direction,
                        pointer,
                        ..a
                    }),
                    None => Some(AutoScroll {
                        direction,
                        pointer,
                        due: Instant::now() + AUTO_SCROLL_EVERY,
                    }),
                };
                self.drag_to(self.transcript_point(pointer));
                MouseAction::Redraw
            }
            MouseKind::Release(_) if self.dragging => {
                self.dragging = false;
                self.auto_scroll = None;
                // The selection ends where the pointer is let go: output streaming in may
                // have moved other text under it since the last motion.
                if let Some(sel) = self.selection {
                    let point = if sel.screen {
                        let row = m.row.min(self.screen_rows.len().saturating_sub(1));
                        (row, m.column.min(self.width.saturating_sub(1)))
                    } else {
                        self.transcript_point((m.row, m.column))
                    };
                    self.drag_to(point);
                }
                let click = self
                    .selection
                    .filter(|s| s.is_empty() && s.granularity == Granularity::Character)
                    .filter(|_| !self.dragged)
                    .and_then(|s| self.click_action(s));
                // A click on a link opens it (links win over the click's other uses).
                let link = self.pressed_url.take().filter(|_| !self.dragged);
                if let Some(url) = link.filter(|_| self.selection.is_some_and(|s| s.is_empty())) {
                    self.selection = None;
                    return MouseAction::OpenUrl(url);
                }
                match self.selected_text().filter(|t| !t.trim().is_empty()) {
                    Some(text) => MouseAction::Copy(text),
                    None => {
                        self.selection = None;
                        click.unwrap_or(MouseAction::Redraw)
                    }
                }
            }
            _ => MouseAction::None,
        }
    }

    /// What a plain click that made the empty selection `sel` does: a transcript line's
    /// click, or a screen cell's below the transcript. A click on the search box itself does
    /// nothing (pi's box takes no clicks but its arrows).
    fn click_action(&self, sel: Selection) -> Option<MouseAction> {
        let (row, column) = sel.anchor;
        if !sel.screen {
            return Some(MouseAction::Click(row));
        }
        let on_box = self
            .search_rect
            .as_ref()
            .filter(|_| self.search.is_some())
            .is_some_and(|(rows, cols)| rows.contains(&row) && cols.contains(&column));
        if on_box {
            None
        } else if row < self.transcript_rows {
            Some(MouseAction::Click(self.first_line + row))
        } else {
            Some(MouseAction::ScreenClick { row, column })
        }
    }

    /// Which search button is at `(row, column)` (`true`: next), with the search open.
    fn search_button_at(&self, row: usize, column: usize) -> Option<bool> {
        let (at, previous, next) = self.search_buttons.filter(|_| self.search.is_some())?;
        let within = |(from, to): (usize, usize)| row == at && (from..to).contains(&column);
        if within(previous) {
            Some(false)
        } else if within(next) {
            Some(true)
        } else {
            None
        }
    }

    /// The transcript line and column under screen `(row, column)`, held inside the
    /// transcript rows and its lines.
    fn transcript_point(&self, (row, column): (usize, usize)) -> Point {
        let row = row.min(self.transcript_rows.saturating_sub(1));
        let line = (self.viewport.first_line() + row).min(self.transcript.len().saturating_sub(1));
        (line, column.min(self.width.saturating_sub(1)))
    }

    /// Move the selection's moving end to `point` (by word or line after a double or triple
    /// click).
    fn drag_to(&mut self, point: Point) {
        let Some(sel) = self.selection else { return };
        let range = match sel.granularity {
            Granularity::Character => None,
            Granularity::Word => self.word_range(point, sel.screen),
            Granularity::Line => Some(self.line_range(point.0, sel.screen)),
        };
        if let Some(s) = &mut self.selection {
            match range {
                Some(range) => s.extend_to(range),
                None if s.granularity == Granularity::Character => s.head = point,
                None => {}
            }
        }
    }

    /// A drag held at the transcript's edge: a line every 50 ms while it can still scroll,
    /// the selection following the pointer. True when the screen changed.
    pub(super) fn auto_scroll(&mut self) -> bool {
        let Some(mut a) = self.auto_scroll else {
            return false;
        };
        let now = Instant::now();
        let mut moved = false;
        while now >= a.due {
            let before = self.viewport;
            self.viewport.scroll_by(a.direction);
            if self.viewport == before {
                self.auto_scroll = None;
                return moved;
            }
            moved = true;
            a.due += AUTO_SCROLL_EVERY;
            self.drag_to(self.transcript_point(a.pointer));
        }
        self.auto_scroll = Some(a);
        moved
    }

    /// A left press at `point` (a transcript line, or a screen row when `screen`): the start
    /// of a drag, or the word (double click) or line (triple click) under it.
    fn press(&mut self, point: Point, screen: bool) {
        let (line, column) = point;
        let word = self.word_range(point, screen);
        // Screen rows and transcript lines never count as the same place.
        let key = if screen { usize::MAX - line } else { line };
        let count = click_count(&mut self.last_click, key, word.map(|((_, a), (_, b))| (a, b)));
        let mut selection = match (count, word) {
            (2, Some(word)) => Selection::of(word, Granularity::Word),
            (3, _) => Selection::of(self.line_range(line, screen), Granularity::Line),
            _ => Selection::at((line, column)),
        };
        selection.screen = screen;
        // The link under a single press, opened if the press turns out a click.
        self.pressed_url = if count == 1 {
            let raw = if screen {
                self.screen_rows.get(line).cloned()
            } else {
                self.transcript.iter_from(line).next().cloned()
            };
            raw.and_then(|l| link_at(&l, column))
        } else {
            None
        };
        self.selection = Some(selection);
        self.dragging = true;
        self.dragged = false;
    }

    /// Line `line` of the transcript (or row `line` of the last screen) without escapes.
    pub(super) fn plain_line(&self, line: usize, screen: bool) -> String {
        let raw = if screen {
            self.screen_rows.get(line)
        } else {
            self.transcript.iter_from(line).next()
        };
        raw.map(|l| crate::ansi::strip_ansi(l)).unwrap_or_default()
    }

    fn word_range(&self, (line, column): Point, screen: bool) -> Option<(Point, Point)> {
        let (from, to) = word_at(&self.plain_line(line, screen), column)?;
        Some(((line, from), (line, to)))
    }

    fn line_range(&self, line: usize, screen: bool) -> (Point, Point) {
        let w = visible_width(self.plain_line(line, screen).trim_end());
        ((line, 0), (line, w))
    }

    /// The scrollbar's share of the mouse: hovering its column, pressing on the track (a
    /// jump) or the thumb, and dragging. `None` when the event is not for it.
    fn scrollbar_mouse(&mut self, m: &MouseEvent) -> Option<MouseAction> {
        let total = self.transcript.len();
        let track = self.transcript_rows;
        let on_column = self.width > 1 && m.column + 1 == self.width && m.row < track;
        let usable = self.scrollbar.usable(total, track);
        if let Some(grab) = self.scrollbar.drag {
            return Some(match m.kind {
                MouseKind::Release(_) => {
                    self.scrollbar.drag = None;
                    self.scrollbar.hover = on_column && usable;
                    MouseAction::Redraw
                }
                MouseKind::Drag(_) | MouseKind::Move => {
                    let g = Geometry::new(total, track, self.viewport.first_line());
                    self.viewport
                        .scroll_to(g.top_for_pointer(m.row.min(track.saturating_sub(1)), grab));
                    self.scrollbar.activity();
                    MouseAction::Redraw
                }
                _ => MouseAction::None,
            });
        }
        let hover = on_column && usable;
        let hover_changed = hover != self.scrollbar.hover;
        self.scrollbar.hover = hover;
        match m.kind {
            MouseKind::Press(0) if hover => {
                self.selection = None;
                self.dragging = false;
                self.auto_scroll = None;
                self.last_click = None;
                let g = Geometry::new(total, track, self.viewport.first_line());
                let grab = if g.on_thumb(m.row) {
                    m.row - g.thumb_top
                } else {
                    let grab = g.thumb_height / 2;
                    self.viewport.scroll_to(g.top_for_pointer(m.row, grab));
                    grab
                };
                self.scrollbar.drag = Some(grab);
                Some(MouseAction::Redraw)
            }
            MouseKind::Move => Some(if hover_changed {
                MouseAction::Redraw
            } else {
                MouseAction::None
            }),
            _ => None,
        }
    }
}
