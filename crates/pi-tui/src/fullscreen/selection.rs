//! The mouse selection over the transcript: its two ends, what a double click (a word) and a
//! triple click (a line) take, and how a drag after them grows by whole words or lines.

use std::time::{Duration, Instant};

use unicode_segmentation::UnicodeSegmentation;

use crate::width::visible_width;

/// Clicks closer together than this count as a double or triple click.
const MULTI_CLICK: Duration = Duration::from_millis(500);

/// Characters that join words into one selection, as terminals do by default (paths, flags,
/// dotted names).
const JOINERS: [&str; 7] = ["/", "-", "+", "\\", "~", "_", "."];

/// A point in the transcript: line index and display column.
pub(super) type Point = (usize, usize);

/// What a press selects by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Granularity {
    Character,
    Word,
    Line,
}

/// A selection. By character both ends are the cells pressed and pointed at, each included;
/// by word or line they are the columns where the words or lines start and end.
#[derive(Debug, Clone, Copy)]
pub(super) struct Selection {
    pub anchor: Point,
    pub head: Point,
    pub granularity: Granularity,
    /// The word or line the double or triple click took; a drag keeps it selected.
    pub initial: Option<(Point, Point)>,
    /// Points are rows of the screen (a selection begun below the transcript), not
    /// transcript lines.
    pub screen: bool,
}

impl Selection {
    pub fn at(p: Point) -> Self {
        Selection {
            anchor: p,
            head: p,
            granularity: Granularity::Character,
            initial: None,
            screen: false,
        }
    }

    /// A whole word or line, from `range`.
    pub fn of(range: (Point, Point), granularity: Granularity) -> Self {
        Selection {
            anchor: range.0,
            head: range.1,
            granularity,
            initial: Some(range),
            screen: false,
        }
    }

    /// The first point and the one after the last selected cell.
    pub fn ordered(&self) -> (Point, Point) {
        let (start, end) = if self.anchor <= self.head {
            (self.anchor, self.head)
        } else {
            (self.head, self.anchor)
        };
        match self.granularity {
            Granularity::Character => (start, (end.0, end.1 + 1)),
            _ => (start, end),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.anchor == self.head
    }

    /// Move the moving end to `range` (the word or line under the pointer), keeping the
    /// first word or line selected whichever way the drag goes.
    pub fn extend_to(&mut self, range: (Point, Point)) {
        let Some(initial) = self.initial else {
            self.head = range.1;
            return;
        };
        if range.0 < initial.0 {
            self.anchor = initial.1;
            self.head = range.0;
        } else {
            self.anchor = initial.0;
            self.head = range.1;
        }
    }
}

/// The columns `start..end` of the word under column `col` of `plain` (a line without
/// escapes): letters and digits, joined through [`JOINERS`]. `None` off the text or on
/// a space or other punctuation.
pub(super) fn word_at(plain: &str, col: usize) -> Option<(usize, usize)> {
    struct Segment {
        start: usize,
        end: usize,
        word: bool,
        joiner: bool,
    }
    let mut segments = Vec::new();
    let mut start = 0;
    for piece in plain.split_word_bounds() {
        let end = start + visible_width(piece);
        let joiner = JOINERS.contains(&piece);
        let word = joiner || piece.chars().any(char::is_alphanumeric);
        segments.push(Segment {
            start,
            end,
            word,
            joiner,
        });
        start = end;
    }
    let hit = segments.iter().position(|s| col >= s.start && col < s.end)?;
    if !segments[hit].word {
        return None;
    }
    let joins = |a: &Segment, b: &Segment| a.word && b.word && (a.joiner || b.joiner);
    let mut first = hit;
    while first > 0 && joins(&segments[first - 1], &segments[first]) {
        first -= 1;
    }
    let mut last = hit;
    while last + 1 < segments.len() && joins(&segments[last], &segments[last + 1]) {
        last += 1;
    }
    Some((segments[first].start, segments[last].end))
}

/// The last press, to count double and triple clicks on the same word.
#[derive(Debug, Clone, Copy)]
pub(super) struct LastClick {
    at: Instant,
    count: u8,
    line: usize,
    word: (usize, usize),
}

/// How many clicks in a row this press on `word` of `line` makes (1, 2, 3, then 1 again),
/// remembering it for the next press. A press off any word starts over.
pub(super) fn click_count(last: &mut Option<LastClick>, line: usize, word: Option<(usize, usize)>) -> u8 {
    let now = Instant::now();
    let Some(word) = word else {
        *last = None;
        return 1;
    };
    let count = match *last {
        Some(l) if now.duration_since(l.at) <= MULTI_CLICK && l.line == line && l.word == word => l.count % 3 + 1,
        _ => 1,
    };
    *last = Some(LastClick {
        at: now,
        count,
        line,
        word,
    });
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_runs_through_path_and_flag_joiners_but_stops_at_spaces_and_quotes() {
        let line = "see crates/pi-tui/src/lib.rs and \"quoted\" text";
        assert_eq!(word_at(line, 0), Some((0, 3)));
        assert_eq!(word_at(line, 10), Some((4, 28)));
        assert_eq!(word_at(line, 3), None, "a space is no word");
        assert_eq!(word_at(line, 33), None, "a quote is no word");
        assert_eq!(word_at(line, 36), Some((34, 40)));
        assert_eq!(word_at(line, 100), None);
        assert_eq!(word_at("--tui-mode=x", 3), Some((0, 10)));
        // Wide characters count by display column.
        assert_eq!(word_at("日本 語x", 5), Some((5, 7)));
    }

    #[test]
    fn clicks_on_the_same_word_count_up_to_three_and_wrap() {
        let mut last = None;
        assert_eq!(click_count(&mut last, 4, Some((0, 3))), 1);
        assert_eq!(click_count(&mut last, 4, Some((0, 3))), 2);
        assert_eq!(click_count(&mut last, 4, Some((0, 3))), 3);
        assert_eq!(click_count(&mut last, 4, Some((0, 3))), 1);
        assert_eq!(click_count(&mut last, 5, Some((0, 3))), 1, "another line");
        assert_eq!(click_count(&mut last, 5, Some((4, 8))), 1, "another word");
        assert_eq!(click_count(&mut last, 5, None), 1);
        assert_eq!(click_count(&mut last, 5, Some((4, 8))), 1, "after a press off words");
    }

    #[test]
    fn a_drag_after_a_double_click_keeps_the_first_word() {
        let mut s = Selection::of(((3, 4), (3, 9)), Granularity::Word);
        s.extend_to(((5, 0), (5, 6)));
        assert_eq!(s.ordered(), ((3, 4), (5, 6)));
        s.extend_to(((1, 2), (1, 5)));
        assert_eq!(s.ordered(), ((1, 2), (3, 9)));
    }
}
