//! Fullscreen layout state: the transcript viewport (following the end or scrolled), the
//! mouse selection and its text, the scrollbar, the "jump to latest" pill, flash messages,
//! and composing the rows of one screen from the transcript and the dock below it.

pub mod dock;
mod images;
mod paint;
mod scrollbar;
mod selection;

use std::time::{Duration, Instant};

use crate::component::Frame;
use crate::input::{MouseEvent, MouseKind};
use crate::kitty::is_image_line;
use crate::screen::AltScreen;
use crate::style::Style;
use crate::width::{slice_columns, visible_width};

use paint::{overlay_columns, restyle_columns, reverse_columns, search_box};
pub use scrollbar::ScrollbarMode;
use scrollbar::{Geometry, Scrollbar};
use selection::{click_count, word_at, Granularity, LastClick, Selection};

/// A range of screen columns, end excluded.
type Columns = (usize, usize);

/// Text of the pill shown while the transcript is scrolled away from its end.
pub const JUMP_PILL: &str = " ↓ Jump to latest message · Ctrl+End ";

/// Where the transcript is scrolled: following its end, or pinned at a first line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Viewport {
    /// First line shown; `None` follows the end (new lines keep it at the bottom).
    top: Option<usize>,
    total: usize,
    height: usize,
}

impl Viewport {
    /// Fit to `total` lines in `height` rows; the first line to show.
    pub fn layout(&mut self, total: usize, height: usize) -> usize {
        self.total = total;
        self.height = height.max(1);
        let max_top = self.max_top();
        match self.top {
            // A view pinned at the last screen (a search showed a match there) stays pinned.
            Some(t) if t <= max_top => t,
            _ => {
                self.top = None;
                max_top
            }
        }
    }

    fn max_top(&self) -> usize {
        self.total.saturating_sub(self.height)
    }

    pub fn following(&self) -> bool {
        self.top.is_none()
    }

    /// The first line shown as of the last layout.
    pub fn first_line(&self) -> usize {
        self.top.unwrap_or_else(|| self.max_top())
    }

    /// Move by `delta` lines (negative is up, towards the start).
    pub fn scroll_by(&mut self, delta: isize) {
        let max_top = self.max_top() as isize;
        let now = self.first_line() as isize;
        let next = (now + delta).clamp(0, max_top);
        self.top = (next < max_top).then_some(next as usize);
    }

    /// One page: the viewport height less 4 lines of context (at least 1).
    pub fn page(&self) -> isize {
        self.height.saturating_sub(4).max(1) as isize
    }

    /// Half the viewport height (at least 1), as pi's half-page keys move.
    pub fn half_page(&self) -> isize {
        (self.height / 2).max(1) as isize
    }

    pub fn to_top(&mut self) {
        self.top = (self.max_top() > 0).then_some(0);
    }

    pub fn to_bottom(&mut self) {
        self.top = None;
    }

    /// Stop following the end where the view is now (new lines no longer scroll it).
    pub fn pin(&mut self) {
        self.top = Some(self.first_line());
    }

    /// Show from line `top` (the end, following, when it is past the last full screen).
    pub fn scroll_to(&mut self, top: usize) {
        self.top = (top < self.max_top()).then_some(top);
    }
}

/// How far one wheel event scrolls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WheelStep {
    /// One line, growing to 6 while the wheel spins fast.
    Auto,
    Lines(usize),
}

/// Placeholder of the transcript search box.
pub const SEARCH_PLACEHOLDER: &str = "Find in transcript";

/// The transcript search: the query and where it matches (line, first column, end column).
#[derive(Debug, Default)]
struct Search {
    query: String,
    matches: Vec<(usize, usize, usize)>,
    current: Option<usize>,
    /// The matches are for this query over this many lines.
    searched: Option<(String, usize)>,
    /// The next search picks the first match at or below the viewport.
    pick_from_view: bool,
}

/// A key for the open search box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchKey {
    Text(String),
    Backspace,
    Next,
    Previous,
}

/// What a mouse event asks of the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MouseAction {
    /// Nothing visible changed.
    None,
    /// The screen changed (scroll, selection): redraw.
    Redraw,
    /// A selection was made: copy this text.
    Copy(String),
    /// A plain click (no drag) on this transcript line.
    Click(usize),
}

/// The state of the fullscreen layout between frames.
pub struct Fullscreen {
    screen: AltScreen,
    viewport: Viewport,
    selection: Option<Selection>,
    dragging: bool,
    last_click: Option<LastClick>,
    scrollbar: Scrollbar,
    scrollbar_track: Style,
    scrollbar_thumb: Style,
    flash: Option<(String, Instant)>,
    pill_style: Style,
    pill_text: String,
    /// The opening sequences of a search match and of the current one.
    match_sgr: String,
    /// The keys the search box's buttons name (previous, next).
    search_keys: (String, String),
    /// Where the search box's buttons were in the last frame: row, previous and next columns.
    search_buttons: Option<(usize, Columns, Columns)>,
    current_match_sgr: String,
    /// Columns the pill covers on the last transcript row in the last frame.
    pill_columns: Option<(usize, usize)>,
    wheel: WheelStep,
    last_wheel: Option<Instant>,
    wheel_speed: usize,
    /// The transcript of the last frame (shared chunks) and how it sat on the screen.
    transcript: Frame,
    transcript_rows: usize,
    first_line: usize,
    width: usize,
    was_following: bool,
    search: Option<Search>,
}

impl Default for Fullscreen {
    fn default() -> Self {
        Fullscreen {
            screen: AltScreen::new(),
            viewport: Viewport::default(),
            selection: None,
            dragging: false,
            last_click: None,
            scrollbar: Scrollbar::default(),
            scrollbar_track: Style::new().dim(),
            scrollbar_thumb: Style::new(),
            flash: None,
            pill_style: Style::new().inverse(),
            pill_text: JUMP_PILL.to_string(),
            match_sgr: "\x1b[4m".to_string(),
            search_keys: ("Shift+Enter".to_string(), "Enter".to_string()),
            search_buttons: None,
            current_match_sgr: "\x1b[1;7m".to_string(),
            pill_columns: None,
            wheel: WheelStep::Auto,
            last_wheel: None,
            wheel_speed: 1,
            transcript: Frame::new(),
            transcript_rows: 0,
            first_line: 0,
            width: 0,
            was_following: true,
            search: None,
        }
    }
}

impl Fullscreen {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn screen_mut(&mut self) -> &mut AltScreen {
        &mut self.screen
    }

    /// The image protocol frames are drawn with (Kitty placements are reused).
    pub fn set_image_protocol(&mut self, images: Option<crate::components::ImageProtocol>) {
        self.screen.set_image_protocol(images);
    }

    pub fn viewport(&self) -> &Viewport {
        &self.viewport
    }

    pub fn viewport_mut(&mut self) -> &mut Viewport {
        &mut self.viewport
    }

    pub fn set_pill_style(&mut self, style: Style) {
        self.pill_style = style;
    }

    /// The keys the search box names for the previous and next match.
    pub fn set_search_keys(&mut self, previous: impl Into<String>, next: impl Into<String>) {
        self.search_keys = (previous.into(), next.into());
    }

    /// How search matches are drawn: every match, and the current one.
    pub fn set_search_styles(&mut self, every: Style, current: Style) {
        self.match_sgr = every.open();
        self.current_match_sgr = current.open();
    }

    /// The pill's text: pi names the key bound to the end of the transcript in it.
    pub fn set_pill_text(&mut self, text: impl Into<String>) {
        self.pill_text = text.into();
    }

    pub fn set_wheel_step(&mut self, step: WheelStep) {
        self.wheel = step;
    }

    /// When the scrollbar shows, and its track and thumb colours.
    pub fn set_scrollbar(&mut self, mode: ScrollbarMode, track: Style, thumb: Style) {
        self.scrollbar.mode = mode;
        self.scrollbar_track = track;
        self.scrollbar_thumb = thumb;
    }

    /// The width to render the transcript at: `always` keeps the last column for the bar.
    pub fn transcript_width(&self, width: usize) -> usize {
        if self.scrollbar.mode == ScrollbarMode::Always && width > 1 {
            width - 1
        } else {
            width
        }
    }

    /// Timers ran out (a flash, the scrollbar shown after scrolling): true when the screen
    /// should be drawn again without them.
    pub fn expire(&mut self) -> bool {
        let flash = self.expire_flash();
        self.scrollbar.expire() || flash
    }

    /// Show `text` at the top right for `for_how_long`.
    pub fn flash(&mut self, text: impl Into<String>, for_how_long: Duration) {
        self.flash = Some((text.into(), Instant::now() + for_how_long));
    }

    /// A flash ran out: true once, so the caller redraws without it.
    pub fn expire_flash(&mut self) -> bool {
        if self.flash.as_ref().is_some_and(|(_, until)| Instant::now() >= *until) {
            self.flash = None;
            return true;
        }
        false
    }

    pub fn search_open(&self) -> bool {
        self.search.is_some()
    }

    /// Open the search box, or close it when open.
    pub fn toggle_search(&mut self) {
        self.search = match self.search.take() {
            Some(_) => None,
            None => Some(Search::default()),
        };
    }

    pub fn close_search(&mut self) {
        self.search = None;
    }

    /// The current match's number and the count (`N/M`).
    pub fn search_position(&self) -> Option<(usize, usize)> {
        let s = self.search.as_ref()?;
        Some((s.current.map_or(0, |c| c + 1), s.matches.len()))
    }

    /// Type into the search box or move between matches.
    pub fn search_key(&mut self, key: SearchKey) {
        let Some(s) = self.search.as_mut() else { return };
        match key {
            SearchKey::Text(t) => {
                s.query.push_str(&t.replace(['\n', '\r'], " "));
                s.pick_from_view = true;
            }
            SearchKey::Backspace => {
                s.query.pop();
                s.pick_from_view = true;
            }
            SearchKey::Next | SearchKey::Previous => {
                if s.matches.is_empty() {
                    return;
                }
                let n = s.matches.len();
                let c = s.current.unwrap_or(0);
                s.current = Some(if key == SearchKey::Next {
                    (c + 1) % n
                } else {
                    (c + n - 1) % n
                });
                self.reveal_current();
            }
        }
    }

    /// Scroll so the current match is in view (a third of the way down) when it is not.
    fn reveal_current(&mut self) {
        let Some(s) = self.search.as_ref() else { return };
        let Some(&(line, _, _)) = s.current.and_then(|c| s.matches.get(c)) else {
            return;
        };
        let rows = self.transcript_rows.max(1);
        let first = self.viewport.first_line();
        if line < first || line >= first + rows {
            let top = line.saturating_sub(rows / 3) as isize;
            self.viewport.scroll_by(top - first as isize);
        }
        // Showing a match stops following the end, as pi does (the "jump to latest" pill shows).
        self.viewport.pin();
    }

    /// Find the query in the rendered transcript (escapes removed, case ignored) when the
    /// query or the transcript changed.
    fn refresh_search(&mut self, transcript: &Frame, rows: usize) {
        let Some(s) = self.search.as_mut() else { return };
        let key = (s.query.clone(), transcript.len());
        if s.searched.as_ref() == Some(&key) && !s.pick_from_view {
            return;
        }
        s.searched = Some(key);
        s.matches.clear();
        let needle = s.query.to_lowercase();
        if !needle.is_empty() {
            for (i, line) in transcript.iter().enumerate() {
                let plain = crate::ansi::strip_ansi(line).to_lowercase();
                let mut from = 0;
                while let Some(pos) = plain[from..].find(&needle) {
                    let at = from + pos;
                    let col = visible_width(&plain[..at]);
                    s.matches.push((i, col, col + visible_width(&needle)));
                    from = at + needle.len().max(1);
                }
            }
        }
        if s.pick_from_view {
            s.pick_from_view = false;
            let first = self.viewport.layout(transcript.len(), rows);
            s.current = s
                .matches
                .iter()
                .position(|m| m.0 >= first)
                .or((!s.matches.is_empty()).then_some(0));
            self.transcript_rows = rows;
            self.reveal_current();
        } else if s.current.is_some_and(|c| c >= s.matches.len()) {
            s.current = s.matches.len().checked_sub(1);
        }
    }

    /// Stop extending the selection (focus lost mid-drag).
    pub fn end_drag(&mut self) {
        self.dragging = false;
    }

    pub fn clear_selection(&mut self) {
        self.selection = None;
        self.dragging = false;
    }

    /// The selected text: escapes removed, trailing spaces trimmed, rows joined by `\n`.
    pub fn selected_text(&self) -> Option<String> {
        let sel = self.selection.filter(|s| !s.is_empty())?;
        let ((l0, c0), (l1, c1)) = sel.ordered();
        let mut out = Vec::new();
        for (k, line) in self.transcript.iter_from(l0).take(l1 - l0 + 1).enumerate() {
            let plain = crate::ansi::strip_ansi(line);
            let line_no = l0 + k;
            let from = if line_no == l0 { c0 } else { 0 };
            let to = if line_no == l1 { c1 } else { usize::MAX };
            let w = visible_width(&plain);
            let piece = if from >= w {
                String::new()
            } else {
                slice_columns(&plain, from, to.min(w) - from)
            };
            out.push(piece.trim_end().to_string());
        }
        Some(out.join("\n"))
    }

    /// Compose one screen: the visible part of `transcript` above `dock` (cut from the top
    /// when taller than the window less one row), with the pill, selection and flash drawn.
    pub fn compose(&mut self, transcript: Frame, mut dock: Vec<String>, width: usize, height: usize) -> Vec<String> {
        let height = height.max(1);
        let dock_max = height.saturating_sub(1);
        if dock.len() > dock_max {
            dock.drain(..dock.len() - dock_max);
        }
        let rows_for_transcript = height - dock.len();
        self.refresh_search(&transcript, rows_for_transcript);
        let first = self.viewport.layout(transcript.len(), rows_for_transcript);
        let mut rows: Vec<String> = transcript.iter_from(first).take(rows_for_transcript).cloned().collect();
        rows.resize(rows_for_transcript, String::new());
        images::fit_to_viewport(&transcript, first, &mut rows);
        if let Some(sel) = self.selection.filter(|s| !s.is_empty()) {
            let ((l0, c0), (l1, c1)) = sel.ordered();
            for (k, row) in rows.iter_mut().enumerate() {
                let line = first + k;
                if line < l0 || line > l1 || is_image_line(row) {
                    continue;
                }
                let from = if line == l0 { c0 } else { 0 };
                let to = if line == l1 { c1 } else { width };
                *row = reverse_columns(row, from, to.min(width));
            }
        }
        if let Some(search) = &self.search {
            let last = first + rows.len();
            for (k, &(line, from, to)) in search.matches.iter().enumerate() {
                if line < first || line >= last {
                    continue;
                }
                let sgr = if Some(k) == search.current {
                    &self.current_match_sgr
                } else {
                    &self.match_sgr
                };
                let row = &mut rows[line - first];
                if is_image_line(row) {
                    continue;
                }
                *row = restyle_columns(row, from, to.min(width), sgr);
            }
        }
        // The pill is drawn over the middle of the last transcript row, which shows on both
        // sides of it.
        self.pill_columns = None;
        if !self.viewport.following() && rows_for_transcript > 0 {
            if let Some(last) = rows.last_mut().filter(|l| !is_image_line(l)) {
                let text = crate::width::truncate_to_width(&self.pill_text, width, "");
                let w = visible_width(&text);
                let col = (width - w) / 2;
                *last = overlay_columns(last, col, &self.pill_style.paint(&text), w);
                self.pill_columns = Some((col, col + w));
            }
        }
        // Scrolling shows an `auto` bar; new lines arriving while following do not.
        let following = self.viewport.following();
        if first != self.first_line && !(following && self.was_following) {
            self.scrollbar.activity();
        }
        self.was_following = following;
        if width > 1 && self.scrollbar.visible(transcript.len(), rows_for_transcript) {
            let g = Geometry::new(transcript.len(), rows_for_transcript, first);
            self.scrollbar
                .paint(&mut rows, width - 1, &g, self.scrollbar_track, self.scrollbar_thumb);
        }
        self.transcript = transcript;
        self.transcript_rows = rows_for_transcript;
        self.first_line = first;
        self.width = width;
        rows.extend(dock);
        if let Some(search) = &self.search {
            let (n, m) = (search.current.map_or(0, |c| c + 1), search.matches.len());
            let counter = if search.query.is_empty() {
                String::new()
            } else if m == 0 {
                "No matches".to_string()
            } else {
                format!("{n}/{m}")
            };
            let boxed = search_box(&search.query, &counter, &self.search_keys, width);
            let box_w = boxed.rows.first().map_or(0, |l| visible_width(l));
            // One row and one column of margin from the top-right corner, as pi draws it.
            let col = width.saturating_sub(box_w + 1);
            crate::kitty::hide_under(&mut rows, 1, boxed.rows.len(), col, box_w);
            self.search_buttons = boxed
                .buttons
                .filter(|_| rows.len() > 3)
                .map(|(p, n)| (3, (col + p.0, col + p.1), (col + n.0, col + n.1)));
            for (row, line) in rows.iter_mut().skip(1).zip(boxed.rows) {
                let left = slice_columns(row, 0, col);
                let pad = col.saturating_sub(visible_width(&left));
                *row = format!("{left}{}\x1b[0m{line}", " ".repeat(pad));
            }
        }
        if let Some((text, _)) = &self.flash {
            let boxed = format!(" {text} ");
            let w = visible_width(&boxed);
            if let Some(row) = rows.first_mut() {
                // Flush with the right edge, as pi composes its flashes.
                // An image's row keeps the image; the flash is not drawn over it, as in pi.
                if w <= width && !is_image_line(row) {
                    let left = slice_columns(row, 0, width - w);
                    let pad = (width - w).saturating_sub(visible_width(&left));
                    *row = format!("{left}{}\x1b[0m\x1b[7m{boxed}\x1b[0m", " ".repeat(pad));
                }
            }
        }
        rows
    }

    /// React to a mouse report over the screen of the last frame.
    pub fn handle_mouse(&mut self, m: &MouseEvent) -> MouseAction {
        if let Some(action) = self.scrollbar_mouse(m) {
            return action;
        }
        let in_transcript = m.row < self.transcript_rows;
        match m.kind {
            MouseKind::WheelUp | MouseKind::WheelDown => {
                let mut step = self.wheel_lines();
                if m.alt {
                    step *= 5;
                }
                let delta = if m.kind == MouseKind::WheelUp {
                    -(step as isize)
                } else {
                    step as isize
                };
                let before = self.viewport;
                self.viewport.scroll_by(delta);
                if self.viewport == before {
                    MouseAction::None
                } else {
                    MouseAction::Redraw
                }
            }
            MouseKind::Press(0) => {
                // The search box's arrows step through the matches.
                if let Some((row, previous, next)) = self.search_buttons.filter(|_| self.search.is_some()) {
                    let within = |(from, to): (usize, usize)| m.row == row && (from..to).contains(&m.column);
                    if within(previous) || within(next) {
                        self.search_key(if within(previous) {
                            SearchKey::Previous
                        } else {
                            SearchKey::Next
                        });
                        return MouseAction::Redraw;
                    }
                }
                let had = self.selection.take().is_some();
                let on_pill = self
                    .pill_columns
                    .is_some_and(|(from, to)| (from..to).contains(&m.column));
                if in_transcript && on_pill && m.row + 1 == self.transcript_rows {
                    // The pill is on the last transcript row.
                    self.viewport.to_bottom();
                    return MouseAction::Redraw;
                }
                if in_transcript {
                    self.press(self.first_line + m.row, m.column);
                    return MouseAction::Redraw;
                }
                self.last_click = None;
                if had {
                    MouseAction::Redraw
                } else {
                    MouseAction::None
                }
            }
            MouseKind::Drag(0) if self.dragging => {
                self.last_click = None;
                // Dragging past the edges scrolls the transcript along.
                if m.row >= self.transcript_rows {
                    self.viewport.scroll_by(1);
                } else if m.row == 0 {
                    self.viewport.scroll_by(-1);
                }
                let first = self.viewport.first_line();
                let row = m.row.min(self.transcript_rows.saturating_sub(1));
                let line = (first + row).min(self.transcript.len().saturating_sub(1));
                let range = self.selection.map(|s| s.granularity).and_then(|g| match g {
                    Granularity::Character => None,
                    Granularity::Word => self.word_range(line, m.column),
                    Granularity::Line => Some(self.line_range(line)),
                });
                if let Some(s) = &mut self.selection {
                    match range {
                        Some(range) => s.extend_to(range),
                        None if s.granularity == Granularity::Character => s.head = (line, m.column + 1),
                        None => {}
                    }
                }
                MouseAction::Redraw
            }
            MouseKind::Release(_) if self.dragging => {
                self.dragging = false;
                let click = self
                    .selection
                    .filter(|s| s.is_empty() && s.granularity == Granularity::Character)
                    .map(|s| s.anchor.0);
                match self.selected_text().filter(|t| !t.trim().is_empty()) {
                    Some(text) => MouseAction::Copy(text),
                    None => {
                        self.selection = None;
                        click.map_or(MouseAction::None, MouseAction::Click)
                    }
                }
            }
            _ => MouseAction::None,
        }
    }

    /// A left press on transcript `line` at `column`: the start of a drag, or the word
    /// (double click) or line (triple click) under it.
    fn press(&mut self, line: usize, column: usize) {
        let word = self.word_range(line, column);
        let count = click_count(&mut self.last_click, line, word.map(|((_, a), (_, b))| (a, b)));
        self.selection = Some(match (count, word) {
            (2, Some(word)) => Selection::of(word, Granularity::Word),
            (3, _) => Selection::of(self.line_range(line), Granularity::Line),
            _ => Selection::at((line, column)),
        });
        self.dragging = true;
    }

    fn plain_line(&self, line: usize) -> String {
        self.transcript
            .iter_from(line)
            .next()
            .map(|l| crate::ansi::strip_ansi(l))
            .unwrap_or_default()
    }

    fn word_range(&self, line: usize, column: usize) -> Option<((usize, usize), (usize, usize))> {
        let (from, to) = word_at(&self.plain_line(line), column)?;
        Some(((line, from), (line, to)))
    }

    fn line_range(&self, line: usize) -> ((usize, usize), (usize, usize)) {
        let w = visible_width(self.plain_line(line).trim_end());
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

    fn wheel_lines(&mut self) -> usize {
        match self.wheel {
            WheelStep::Lines(n) => n.clamp(1, 100),
            WheelStep::Auto => {
                let now = Instant::now();
                let fast = self
                    .last_wheel
                    .is_some_and(|t| now.duration_since(t) < Duration::from_millis(40));
                self.wheel_speed = if fast { (self.wheel_speed + 1).min(6) } else { 1 };
                self.last_wheel = Some(now);
                self.wheel_speed
            }
        }
    }
}

#[cfg(test)]
mod tests;
