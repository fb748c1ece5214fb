//! Fullscreen layout state: the transcript viewport (following the end or scrolled), the
//! mouse selection and its text, the scrollbar, the "jump to latest" pill, flash messages,
//! and composing the rows of one screen from the transcript and the dock below it.

pub mod dock;
mod images;
mod mouse;
mod paint;
mod scrollbar;
mod search;
mod selection;
mod wheel;

use std::time::{Duration, Instant};

use crate::component::Frame;
use crate::kitty::is_image_line;
use crate::screen::AltScreen;
use crate::style::Style;
use crate::width::{slice_columns, visible_width};

use paint::{overlay_columns, restyle_columns, reverse_columns, search_box};
pub use scrollbar::ScrollbarMode;
use scrollbar::{Geometry, Scrollbar};
use selection::{LastClick, Selection};
use wheel::WheelAccel;
pub use wheel::WheelStep;

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

/// Placeholder of the transcript search box.
pub const SEARCH_PLACEHOLDER: &str = "Find in transcript";

/// The transcript search: the query and where it matches.
#[derive(Debug, Default)]
struct Search {
    /// The query's field: typing, cursor keys and deletions as in pi's inputs.
    field: crate::components::Input,
    matches: Vec<search::Segments>,
    current: Option<usize>,
    /// The transcript's text as of this many lines.
    corpus: Option<(usize, search::Corpus)>,
    /// The matches are for this query over this many lines.
    searched: Option<(String, usize)>,
    /// The query changed: the next search picks the first match at or below this line (the
    /// match shown until then, else the top of the view).
    pick_from: Option<usize>,
}

impl Search {
    fn new() -> Search {
        Search {
            field: crate::components::Input::new(""),
            ..Search::default()
        }
    }

    fn query(&self) -> &str {
        self.field.value()
    }

    fn current_line(&self) -> Option<usize> {
        let m = self.matches.get(self.current?)?;
        m.first().map(|s| s.0)
    }

    /// The query changed.
    fn requery(&mut self, view_top: usize) {
        self.pick_from = Some(self.current_line().unwrap_or(view_top));
    }
}

/// A key for the open search box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchKey {
    Text(String),
    Backspace,
    /// Another key for the query's field (cursor movement, deleting words, ...).
    Key(crate::keys::KeyEvent),
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
    /// A plain click on this screen cell below the transcript (the editor, the footer).
    ScreenClick { row: usize, column: usize },
    /// A click on a hyperlink: open its target.
    OpenUrl(String),
}

/// The state of the fullscreen layout between frames.
pub struct Fullscreen {
    screen: AltScreen,
    viewport: Viewport,
    selection: Option<Selection>,
    dragging: bool,
    /// The pointer moved since the press: its release is no click.
    dragged: bool,
    /// The hyperlink under the last single press.
    pressed_url: Option<String>,
    /// A selecting drag held at the transcript's top or bottom edge.
    auto_scroll: Option<mouse::AutoScroll>,
    last_click: Option<LastClick>,
    scrollbar: Scrollbar,
    scrollbar_track: Style,
    scrollbar_thumb: Style,
    /// Flash messages, oldest first, each with the moment it goes away.
    flashes: Vec<(String, Instant)>,
    pill_style: Style,
    pill_text: String,
    /// The opening sequences of a search match and of the current one.
    match_sgr: String,
    /// The keys the search box's buttons name (previous, next).
    search_keys: (String, String),
    /// Where the search box's buttons were in the last frame: row, previous and next columns.
    search_buttons: Option<(usize, Columns, Columns)>,
    /// Where the open search box was drawn (rows, columns), last frame.
    search_rect: Option<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// The search button under the pointer (`true`: next).
    search_hover: Option<bool>,
    current_match_sgr: String,
    /// Columns the pill covers on the last transcript row in the last frame.
    pill_columns: Option<(usize, usize)>,
    wheel: WheelAccel,
    /// The transcript of the last frame (shared chunks) and how it sat on the screen.
    transcript: Frame,
    transcript_rows: usize,
    /// The rows of the last frame (without the selection and flashes): what a selection
    /// below the transcript takes its text from.
    screen_rows: Vec<String>,
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
            dragged: false,
            pressed_url: None,
            auto_scroll: None,
            last_click: None,
            scrollbar: Scrollbar::default(),
            scrollbar_track: Style::new().dim(),
            scrollbar_thumb: Style::new(),
            flashes: Vec::new(),
            pill_style: Style::new().inverse(),
            pill_text: JUMP_PILL.to_string(),
            match_sgr: "\x1b[4m".to_string(),
            search_keys: ("Shift+Enter".to_string(), "Enter".to_string()),
            search_buttons: None,
            search_rect: None,
            search_hover: None,
            current_match_sgr: "\x1b[1;7m".to_string(),
            pill_columns: None,
            wheel: WheelAccel::default(),
            transcript: Frame::new(),
            transcript_rows: 0,
            screen_rows: Vec::new(),
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

    /// The image protocol frames are drawn with (Kitty placements are reused).
    pub fn set_image_protocol(&mut self, images: Option<crate::components::ImageProtocol>) {
        self.screen.set_image_protocol(images);
    }

    pub fn set_wheel_step(&mut self, step: WheelStep) {
        self.wheel.set_step(step);
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

    /// Timers ran out (a flash, the scrollbar shown after scrolling) or a drag held at the
    /// transcript's edge scrolled it: true when the screen should be drawn again.
    pub fn expire(&mut self) -> bool {
        let flash = self.expire_flash();
        let scrolled = self.auto_scroll();
        self.scrollbar.expire() || flash || scrolled
    }

    /// Show `text` at the top right for `for_how_long`. Flashes stack as pi 1.6 stacks
    /// them: each keeps its own timer and a new one goes below those still showing (one
    /// row each), so two quick copies show two `Copied!` rows.
    pub fn flash(&mut self, text: impl Into<String>, for_how_long: Duration) {
        self.flashes.push((text.into(), Instant::now() + for_how_long));
    }

    /// The flash texts showing, top row first.
    pub fn flashes(&self) -> impl Iterator<Item = &str> {
        self.flashes.iter().map(|(t, _)| t.as_str())
    }

    /// Flashes ran out: true when any went, so the caller redraws without them.
    pub fn expire_flash(&mut self) -> bool {
        let now = Instant::now();
        let before = self.flashes.len();
        self.flashes.retain(|(_, until)| now < *until);
        self.flashes.len() != before
    }

    pub fn search_open(&self) -> bool {
        self.search.is_some()
    }

    /// Open the search box, or close it when open.
    pub fn toggle_search(&mut self) {
        self.search_hover = None;
        self.search = match self.search.take() {
            Some(_) => None,
            None => Some(Search::new()),
        };
    }

    pub fn close_search(&mut self) {
        self.search_hover = None;
        self.search = None;
    }

    /// The current match's number and the count (`N/M`).
    pub fn search_position(&self) -> Option<(usize, usize)> {
        let s = self.search.as_ref()?;
        Some((s.current.map_or(0, |c| c + 1), s.matches.len()))
    }

    /// Type into the search box or move between matches.
    pub fn search_key(&mut self, key: SearchKey) {
        let view_top = self.viewport.first_line();
        let Some(s) = self.search.as_mut() else { return };
        let before = s.query().to_string();
        match key {
            SearchKey::Text(t) => {
                let text = crate::input::InputEvent::Paste(t.replace(['\n', '\r'], " "));
                crate::component::Component::handle_input(&mut s.field, &text);
            }
            SearchKey::Backspace => {
                if let Some(k) = crate::keys::parse_key("\x7f", false) {
                    s.field.handle_key(&k);
                }
            }
            SearchKey::Key(k) => {
                s.field.handle_key(&k);
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
                return;
            }
        }
        if s.query() != before {
            s.requery(view_top);
        }
    }

    /// Scroll so the current match is in view (its first line a third of the way down) when
    /// it is not wholly.
    fn reveal_current(&mut self) {
        let Some(s) = self.search.as_ref() else { return };
        let Some(m) = s.current.and_then(|c| s.matches.get(c)) else {
            return;
        };
        let (Some(&(line, _, _)), Some(&(last, _, _))) = (m.first(), m.last()) else {
            return;
        };
        let rows = self.transcript_rows.max(1);
        let first = self.viewport.first_line();
        if line < first || last >= first + rows {
            let top = line.saturating_sub(rows / 3) as isize;
            self.viewport.scroll_by(top - first as isize);
        }
        // Showing a match stops following the end, as pi does (the "jump to latest" pill shows).
        self.viewport.pin();
    }

    /// Find the query in the rendered transcript (see [`search::Corpus`]) when the query or
    /// the transcript changed.
    fn refresh_search(&mut self, transcript: &Frame, rows: usize) {
        let Some(s) = self.search.as_mut() else { return };
        let key = (s.query().to_string(), transcript.len());
        if s.searched.as_ref() == Some(&key) && s.pick_from.is_none() {
            return;
        }
        s.searched = Some(key);
        if s.corpus.as_ref().is_none_or(|(n, _)| *n != transcript.len()) {
            s.corpus = Some((transcript.len(), search::Corpus::build(transcript)));
        }
        s.matches = s.corpus.as_ref().map(|(_, c)| c.find(s.query())).unwrap_or_default();
        if let Some(from) = s.pick_from.take() {
            self.viewport.layout(transcript.len(), rows);
            s.current = s
                .matches
                .iter()
                .position(|m| m.first().is_some_and(|f| f.0 >= from))
                .or((!s.matches.is_empty()).then_some(0));
            self.transcript_rows = rows;
            self.reveal_current();
        } else if s.current.is_some_and(|c| c >= s.matches.len()) {
            s.current = s.matches.len().checked_sub(1);
        }
    }

    /// Focus went away: a drag in progress is dropped with its selection, as pi drops it (a
    /// selection already made stays).
    pub fn end_drag(&mut self) {
        if self.dragging {
            self.selection = None;
            self.last_click = None;
        }
        self.dragging = false;
        self.auto_scroll = None;
    }

    pub fn clear_selection(&mut self) {
        self.selection = None;
        self.dragging = false;
        self.auto_scroll = None;
        self.last_click = None;
    }

    /// The selected text: escapes removed, trailing spaces trimmed, rows joined by `\n`.
    pub fn selected_text(&self) -> Option<String> {
        let sel = self.selection.filter(|s| !s.is_empty())?;
        let ((l0, c0), (l1, c1)) = sel.ordered();
        let mut out = Vec::new();
        for line_no in l0..=l1 {
            let plain = self.plain_line(line_no, sel.screen);
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
        if let Some(sel) = self.selection.filter(|s| !s.is_empty() && !s.screen) {
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
            for (k, m) in search.matches.iter().enumerate() {
                let sgr = if Some(k) == search.current {
                    &self.current_match_sgr
                } else {
                    &self.match_sgr
                };
                for &(line, from, to) in m.iter().filter(|s| (first..last).contains(&s.0)) {
                    let row = &mut rows[line - first];
                    if is_image_line(row) {
                        continue;
                    }
                    *row = restyle_columns(row, from, to.min(width), sgr);
                }
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
        if let Some(search) = &mut self.search {
            let (n, m) = (search.current.map_or(0, |c| c + 1), search.matches.len());
            let counter = if search.query().is_empty() {
                String::new()
            } else if m == 0 {
                "No matches".to_string()
            } else {
                format!("{n}/{m}")
            };
            let boxed = search_box(&mut search.field, &counter, &self.search_keys, self.search_hover, width);
            let box_w = boxed.rows.first().map_or(0, |l| visible_width(l));
            // One row and one column of margin from the top-right corner, as pi draws it.
            let col = width.saturating_sub(box_w + 1);
            crate::kitty::hide_under(&mut rows, 1, boxed.rows.len(), col, box_w);
            self.search_rect = Some((1..1 + boxed.rows.len(), col..col + box_w));
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
        self.screen_rows.clone_from(&rows);
        if let Some(sel) = self.selection.filter(|s| !s.is_empty() && s.screen) {
            let ((r0, c0), (r1, c1)) = sel.ordered();
            for (r, row) in rows.iter_mut().enumerate().take(r1 + 1).skip(r0) {
                if is_image_line(row) {
                    continue;
                }
                let from = if r == r0 { c0 } else { 0 };
                let to = if r == r1 { c1 } else { width };
                *row = reverse_columns(row, from, to.min(width));
            }
        }
        // One flash a row from the top, flush with the right edge; when there are more than
        // rows, the newest ones show.
        let skip = self.flashes.len().saturating_sub(rows.len());
        for (row, (text, _)) in rows.iter_mut().zip(self.flashes.iter().skip(skip)) {
            let boxed = crate::width::truncate_to_width(&format!(" {text} "), width, "");
            let w = visible_width(&boxed);
            // An image's row keeps the image; the flash is not drawn over it, as in pi.
            if w == 0 || is_image_line(row) {
                continue;
            }
            let left = slice_columns(row, 0, width - w);
            let pad = (width - w).saturating_sub(visible_width(&left));
            *row = format!("{left}{}\x1b[0m\x1b[7m{boxed}\x1b[0m", " ".repeat(pad));
        }
        rows
    }
}

#[cfg(test)]
mod tests;
