//! The transcript's scrollbar in the rightmost column: when it shows (`auto` while scrolling
//! or hovered, `always`, `hidden`), where its thumb sits, and the scroll position a pointer on
//! the track asks for.

use std::time::{Duration, Instant};

use crate::style::Style;
use crate::width::{slice_columns, visible_width};

/// How long `auto` keeps the scrollbar up after the transcript moved.
const SHOW_AFTER_SCROLL: Duration = Duration::from_millis(1000);

/// When the scrollbar shows (setting `fullscreenScrollbar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScrollbarMode {
    /// While the transcript scrolls and while the pointer is over it.
    #[default]
    Auto,
    /// Always, in a column of its own.
    Always,
    Hidden,
}

impl ScrollbarMode {
    /// The setting's value; anything unknown is `auto`, the default.
    pub fn from_setting(value: &str) -> Self {
        match value {
            "always" => ScrollbarMode::Always,
            "hidden" => ScrollbarMode::Hidden,
            _ => ScrollbarMode::Auto,
        }
    }
}

/// Where the track and thumb are, in transcript rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Geometry {
    pub track_height: usize,
    pub thumb_top: usize,
    pub thumb_height: usize,
    pub max_top: usize,
}

impl Geometry {
    /// For `total` lines shown from `first` in `track` rows.
    pub fn new(total: usize, track: usize, first: usize) -> Geometry {
        let min_thumb = track.min(2);
        let proportional = ((track * track) as f64 / total.max(1) as f64).round() as usize;
        let thumb_height = proportional.clamp(min_thumb, track);
        let max_top = total.saturating_sub(track);
        let max_thumb_top = track - thumb_height;
        let thumb_top = if max_top == 0 {
            0
        } else {
            ((first.min(max_top) as f64 / max_top as f64) * max_thumb_top as f64).round() as usize
        };
        Geometry {
            track_height: track,
            thumb_top,
            thumb_height,
            max_top,
        }
    }

    pub fn on_thumb(&self, row: usize) -> bool {
        row >= self.thumb_top && row < self.thumb_top + self.thumb_height
    }

    /// The first line to show when the pointer is at `row` holding the thumb `grab` rows
    /// below its top.
    pub fn top_for_pointer(&self, row: usize, grab: usize) -> usize {
        let max_thumb_top = self.track_height - self.thumb_height;
        let thumb_top = row.saturating_sub(grab).min(max_thumb_top);
        if max_thumb_top == 0 {
            return 0;
        }
        ((thumb_top as f64 / max_thumb_top as f64) * self.max_top as f64).round() as usize
    }
}

/// The scrollbar's state between frames.
#[derive(Debug, Default)]
pub(super) struct Scrollbar {
    pub mode: ScrollbarMode,
    shown_until: Option<Instant>,
    /// The pointer is over the scrollbar column.
    pub hover: bool,
    /// Dragging the thumb, held this many rows below its top.
    pub drag: Option<usize>,
}

impl Scrollbar {
    /// Whether it is drawn for `total` lines in `track` rows.
    pub fn visible(&self, total: usize, track: usize) -> bool {
        match self.mode {
            ScrollbarMode::Hidden => false,
            ScrollbarMode::Always => track > 0,
            ScrollbarMode::Auto => {
                total > track
                    && (self.hover || self.drag.is_some() || self.shown_until.is_some_and(|t| Instant::now() < t))
            }
        }
    }

    /// Whether a pointer on its column may use it (an `auto` bar not shown yet counts).
    pub fn usable(&self, total: usize, track: usize) -> bool {
        match self.mode {
            ScrollbarMode::Hidden => false,
            ScrollbarMode::Always => track > 0,
            ScrollbarMode::Auto => total > track,
        }
    }

    /// The transcript moved: `auto` shows the bar for a while.
    pub fn activity(&mut self) {
        if self.mode == ScrollbarMode::Auto {
            self.shown_until = Some(Instant::now() + SHOW_AFTER_SCROLL);
        }
    }

    /// The time to show it ran out: true once, so the caller redraws without it.
    pub fn expire(&mut self) -> bool {
        if self.shown_until.is_some_and(|t| Instant::now() >= t) {
            self.shown_until = None;
            return !self.hover && self.drag.is_none();
        }
        false
    }

    /// Draw the track (`│`) and thumb (`┃`, `█` while hovered or dragged) in `column`.
    pub fn paint(&self, rows: &mut [String], column: usize, g: &Geometry, track: Style, thumb: Style) {
        let active = self.hover || self.drag.is_some();
        for (k, row) in rows.iter_mut().take(g.track_height).enumerate() {
            // An image's row is left whole (its placement would be cut off).
            if crate::kitty::is_image_line(row) {
                continue;
            }
            let cell = if g.on_thumb(k) {
                thumb.paint(if active { "█" } else { "┃" })
            } else {
                track.paint("│")
            };
            let left = slice_columns(row, 0, column);
            let pad = column.saturating_sub(visible_width(&left));
            *row = format!("{left}{}\x1b[0m{cell}", " ".repeat(pad));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thumb_is_proportional_and_moves_from_top_to_bottom() {
        let g = Geometry::new(100, 10, 0);
        assert_eq!((g.thumb_top, g.thumb_height, g.max_top), (0, 2, 90));
        assert_eq!(Geometry::new(100, 10, 90).thumb_top, 8);
        assert_eq!(Geometry::new(100, 10, 45).thumb_top, 4);
        // Content that fits fills the track.
        assert_eq!(Geometry::new(3, 10, 0).thumb_height, 10);
        // A huge transcript keeps a thumb of two rows.
        assert_eq!(Geometry::new(1_000_000, 20, 0).thumb_height, 2);
    }

    #[test]
    fn a_pointer_on_the_track_maps_to_a_scroll_position() {
        let g = Geometry::new(100, 10, 0);
        assert_eq!(g.top_for_pointer(0, 0), 0);
        assert_eq!(g.top_for_pointer(9, 1), 90);
        assert_eq!(g.top_for_pointer(4, 0), 45);
        assert_eq!(g.top_for_pointer(50, 0), 90);
    }

    #[test]
    fn auto_shows_after_activity_and_hides_again() {
        let mut s = Scrollbar::default();
        assert!(!s.visible(100, 10));
        s.activity();
        assert!(s.visible(100, 10));
        assert!(!s.visible(5, 10), "nothing to scroll");
        s.shown_until = Some(Instant::now());
        assert!(s.expire());
        assert!(!s.visible(100, 10));
        s.hover = true;
        assert!(s.visible(100, 10));
        s.mode = ScrollbarMode::Hidden;
        assert!(!s.visible(100, 10));
        s.mode = ScrollbarMode::Always;
        assert!(s.visible(5, 10));
    }

    #[test]
    fn painting_replaces_the_last_column() {
        let s = Scrollbar::default();
        let g = Geometry::new(20, 3, 0);
        let mut rows = vec!["abcdef".to_string(), "ab".to_string(), String::new()];
        s.paint(&mut rows, 5, &g, Style::new(), Style::new());
        let plain: Vec<String> = rows.iter().map(|r| crate::ansi::strip_ansi(r)).collect();
        assert_eq!(plain, ["abcde┃", "ab   ┃", "     │"]);
    }
}
