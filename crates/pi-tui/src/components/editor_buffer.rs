//! The editor's text model: lines and a cursor, grapheme-aware editing, word motion, the kill
//! ring, undo snapshots, and the word-wrapped layout used for drawing and vertical motion.

use unicode_segmentation::UnicodeSegmentation;

use super::word_motion::{word_backward, word_forward};
use crate::width::{grapheme_width, visible_width};

/// Emacs-style kill ring: consecutive kills join into one entry; yank-pop rotates.
#[derive(Debug, Clone, Default)]
pub struct KillRing {
    entries: Vec<String>,
}

impl KillRing {
    const MAX: usize = 60;

    /// Record killed text; `join` appends (or prepends when `backward`) to the last entry.
    pub fn push(&mut self, text: &str, join: bool, backward: bool) {
        if text.is_empty() {
            return;
        }
        if join {
            if let Some(last) = self.entries.last_mut() {
                if backward {
                    last.insert_str(0, text);
                } else {
                    last.push_str(text);
                }
                return;
            }
        }
        self.entries.push(text.to_string());
        if self.entries.len() > Self::MAX {
            self.entries.remove(0);
        }
    }

    pub fn top(&self) -> Option<&str> {
        self.entries.last().map(String::as_str)
    }

    /// Move the newest entry to the back and return the new newest.
    pub fn rotate(&mut self) -> Option<&str> {
        if self.entries.len() > 1 {
            if let Some(e) = self.entries.pop() {
                self.entries.insert(0, e);
            }
        }
        self.top()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Lines plus cursor (line index, byte column on a grapheme boundary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextState {
    pub lines: Vec<String>,
    pub line: usize,
    pub col: usize,
}

impl Default for TextState {
    fn default() -> Self {
        TextState {
            lines: vec![String::new()],
            line: 0,
            col: 0,
        }
    }
}

impl TextState {
    pub fn from_text(text: &str) -> Self {
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let line = lines.len() - 1;
        let col = lines[line].len();
        TextState { lines, line, col }
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    pub fn current(&self) -> &str {
        &self.lines[self.line]
    }

    fn prev_boundary(&self) -> Option<usize> {
        let l = self.current();
        l[..self.col].grapheme_indices(true).next_back().map(|(i, _)| i)
    }

    fn next_boundary(&self) -> Option<usize> {
        let l = self.current();
        l[self.col..].graphemes(true).next().map(|g| self.col + g.len())
    }

    /// Insert text (may contain newlines) at the cursor.
    pub fn insert(&mut self, text: &str) {
        let mut parts = text.split('\n');
        let first = parts.next().unwrap_or("");
        let rest: Vec<&str> = parts.collect();
        let tail = self.lines[self.line].split_off(self.col);
        self.lines[self.line].push_str(first);
        self.col += first.len();
        for p in rest {
            self.line += 1;
            self.lines.insert(self.line, p.to_string());
            self.col = p.len();
        }
        self.lines[self.line].push_str(&tail);
    }

    pub fn newline(&mut self) {
        self.insert("\n");
    }

    /// Delete the grapheme before the cursor (joining lines at column 0); returns it.
    pub fn backspace(&mut self) -> Option<String> {
        if self.col > 0 {
            let start = self.prev_boundary()?;
            let removed: String = self.lines[self.line].drain(start..self.col).collect();
            self.col = start;
            Some(removed)
        } else if self.line > 0 {
            let cur = self.lines.remove(self.line);
            self.line -= 1;
            self.col = self.lines[self.line].len();
            self.lines[self.line].push_str(&cur);
            Some("\n".into())
        } else {
            None
        }
    }

    /// Delete the grapheme under the cursor (joining the next line at line end).
    pub fn delete_forward(&mut self) -> Option<String> {
        if let Some(end) = self.next_boundary() {
            Some(self.lines[self.line].drain(self.col..end).collect())
        } else if self.line + 1 < self.lines.len() {
            let next = self.lines.remove(self.line + 1);
            self.lines[self.line].push_str(&next);
            Some("\n".into())
        } else {
            None
        }
    }

    pub fn left(&mut self) {
        if let Some(p) = self.prev_boundary() {
            self.col = p;
        } else if self.line > 0 {
            self.line -= 1;
            self.col = self.lines[self.line].len();
        }
    }

    pub fn right(&mut self) {
        if let Some(n) = self.next_boundary() {
            self.col = n;
        } else if self.line + 1 < self.lines.len() {
            self.line += 1;
            self.col = 0;
        }
    }

    pub fn line_start(&mut self) {
        self.col = 0;
    }

    pub fn line_end(&mut self) {
        self.col = self.current().len();
    }

    /// Position one word back (same line); at column 0 the previous line's end. `atomic`:
    /// byte ranges of the current line that move as one unit.
    fn word_left_target(&self, atomic: &[(usize, usize)]) -> (usize, usize) {
        if self.col == 0 {
            if self.line > 0 {
                return (self.line - 1, self.lines[self.line - 1].len());
            }
            return (0, 0);
        }
        (self.line, word_backward(self.current(), self.col, atomic))
    }

    fn word_right_target(&self, atomic: &[(usize, usize)]) -> (usize, usize) {
        let l = self.current();
        if self.col >= l.len() {
            if self.line + 1 < self.lines.len() {
                return (self.line + 1, 0);
            }
            return (self.line, self.col);
        }
        (self.line, word_forward(l, self.col, atomic))
    }

    pub fn word_left(&mut self) {
        self.word_left_over(&[]);
    }

    pub fn word_right(&mut self) {
        self.word_right_over(&[]);
    }

    /// Word left, stepping over each of `atomic` (current-line byte ranges) whole.
    pub fn word_left_over(&mut self, atomic: &[(usize, usize)]) {
        (self.line, self.col) = self.word_left_target(atomic);
    }

    pub fn word_right_over(&mut self, atomic: &[(usize, usize)]) {
        (self.line, self.col) = self.word_right_target(atomic);
    }

    /// Remove the text between the cursor and (line, col) (either order); returns it.
    pub(crate) fn cut_to(&mut self, line: usize, col: usize) -> String {
        let (a, b) = if (line, col) < (self.line, self.col) {
            ((line, col), (self.line, self.col))
        } else {
            ((self.line, self.col), (line, col))
        };
        let removed = if a.0 == b.0 {
            self.lines[a.0].drain(a.1..b.1).collect()
        } else {
            let tail = self.lines[b.0][b.1..].to_string();
            let mut r = self.lines[a.0].split_off(a.1);
            for l in self.lines.drain(a.0 + 1..=b.0) {
                r.push('\n');
                r.push_str(&l);
            }
            // `r` now ends with the kept tail of line b; cut it back off.
            r.truncate(r.len() - tail.len());
            self.lines[a.0].push_str(&tail);
            r
        };
        self.line = a.0;
        self.col = a.1;
        removed
    }

    pub fn delete_word_backward(&mut self) -> String {
        self.delete_word_backward_over(&[])
    }

    pub fn delete_word_forward(&mut self) -> String {
        self.delete_word_forward_over(&[])
    }

    pub fn delete_word_backward_over(&mut self, atomic: &[(usize, usize)]) -> String {
        let (l, c) = self.word_left_target(atomic);
        self.cut_to(l, c)
    }

    pub fn delete_word_forward_over(&mut self, atomic: &[(usize, usize)]) -> String {
        let (l, c) = self.word_right_target(atomic);
        self.cut_to(l, c)
    }

    /// Delete to line start (at column 0: the newline before).
    pub fn delete_to_line_start(&mut self) -> String {
        if self.col == 0 {
            return self.backspace().unwrap_or_default();
        }
        self.cut_to(self.line, 0)
    }

    /// Delete to line end (at line end: the newline after).
    pub fn delete_to_line_end(&mut self) -> String {
        let len = self.current().len();
        if self.col == len {
            return self.delete_forward().unwrap_or_default();
        }
        self.cut_to(self.line, len)
    }

    /// Jump to the next (or previous) occurrence of `ch` across lines.
    pub fn jump_to(&mut self, ch: char, forward: bool) -> bool {
        if forward {
            let mut line = self.line;
            let mut from = self.next_boundary().unwrap_or(self.col);
            loop {
                if let Some(p) = self.lines[line][from..].find(ch) {
                    self.line = line;
                    self.col = from + p;
                    return true;
                }
                line += 1;
                if line >= self.lines.len() {
                    return false;
                }
                from = 0;
            }
        } else {
            let mut line = self.line;
            let mut upto = self.col;
            loop {
                if let Some(p) = self.lines[line][..upto].rfind(ch) {
                    self.line = line;
                    self.col = p;
                    return true;
                }
                if line == 0 {
                    return false;
                }
                line -= 1;
                upto = self.lines[line].len();
            }
        }
    }
}

/// One visual (wrapped) row: logical line and byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisualRow {
    pub line: usize,
    pub start: usize,
    pub end: usize,
}

/// Word-wrap every logical line to `width` columns.
pub fn layout(lines: &[String], width: usize) -> Vec<VisualRow> {
    let width = width.max(1);
    let mut rows = Vec::new();
    for (li, l) in lines.iter().enumerate() {
        if visible_width(l) <= width {
            rows.push(VisualRow {
                line: li,
                start: 0,
                end: l.len(),
            });
            continue;
        }
        let mut start = 0;
        let mut w = 0;
        let mut last_space_end: Option<usize> = None;
        for (i, g) in l.grapheme_indices(true) {
            let gw = grapheme_width(g);
            if w + gw > width && i > start {
                let brk = match last_space_end {
                    Some(e) if e > start && e < i + g.len() => e,
                    _ => i,
                };
                rows.push(VisualRow {
                    line: li,
                    start,
                    end: brk,
                });
                start = brk;
                w = visible_width(&l[start..i]);
                last_space_end = None;
            }
            w += gw;
            if g.chars().all(char::is_whitespace) {
                last_space_end = Some(i + g.len());
            }
        }
        rows.push(VisualRow {
            line: li,
            start,
            end: l.len(),
        });
    }
    rows
}

/// Index of the visual row holding the cursor.
pub fn cursor_row(rows: &[VisualRow], line: usize, col: usize) -> usize {
    let mut found = 0;
    for (i, r) in rows.iter().enumerate() {
        if r.line == line && col >= r.start {
            let last_of_line = rows.get(i + 1).is_none_or(|n| n.line != line);
            if col < r.end || last_of_line || (col == r.end && r.start == r.end) {
                return i;
            }
            found = i;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(text: &str) -> TextState {
        TextState::from_text(text)
    }

    #[test]
    fn insert_and_delete() {
        let mut s = TextState::default();
        s.insert("héllo");
        s.insert("\nwörld");
        assert_eq!(s.text(), "héllo\nwörld");
        assert_eq!((s.line, s.col), (1, "wörld".len()));
        s.left();
        s.left();
        s.left();
        s.left();
        assert_eq!(s.backspace(), Some("w".into()));
        assert_eq!(s.backspace(), Some("\n".into()));
        assert_eq!(s.text(), "héllorld".replace("rld", "örld"));
        assert_eq!(s.delete_forward(), Some("ö".into()));
    }

    #[test]
    fn emoji_is_one_step() {
        let mut s = st("a👍🏽b");
        s.left();
        s.left();
        assert_eq!(s.col, 1);
        assert_eq!(s.delete_forward(), Some("👍🏽".into()));
    }

    #[test]
    fn word_motion_and_kills() {
        let mut s = st("foo bar.baz  qux");
        s.word_left();
        assert_eq!(&s.current()[s.col..], "qux");
        s.word_left();
        assert_eq!(&s.current()[s.col..], "baz  qux");
        s.word_left();
        assert_eq!(&s.current()[s.col..], ".baz  qux");
        assert_eq!(s.delete_word_backward(), "bar");
        assert_eq!(s.text(), "foo .baz  qux");
        s.line_start();
        s.word_right();
        assert_eq!(s.col, 3);
        assert_eq!(s.delete_to_line_end(), " .baz  qux");
        assert_eq!(s.delete_to_line_start(), "foo");
        let mut m = st("ab\ncd");
        m.line = 0;
        m.col = 1;
        m.word_right();
        assert_eq!((m.line, m.col), (0, 2));
        m.word_right();
        assert_eq!((m.line, m.col), (1, 0));
        m.col = 1;
        let cut = m.cut_to(0, 1);
        assert_eq!(cut, "b\nc");
        assert_eq!(m.text(), "ad");
    }

    #[test]
    fn jump() {
        let mut s = st("abc\ndxc");
        s.line = 0;
        s.col = 0;
        assert!(s.jump_to('c', true));
        assert_eq!((s.line, s.col), (0, 2));
        assert!(s.jump_to('c', true));
        assert_eq!((s.line, s.col), (1, 2));
        assert!(s.jump_to('a', false));
        assert_eq!((s.line, s.col), (0, 0));
        assert!(!s.jump_to('z', true));
    }

    #[test]
    fn wrapping_layout() {
        let lines = vec!["hello world foo".to_string(), String::new()];
        let rows = layout(&lines, 8);
        let texts: Vec<&str> = rows.iter().map(|r| &lines[r.line][r.start..r.end]).collect();
        assert_eq!(texts, ["hello ", "world ", "foo", ""]);
        assert_eq!(cursor_row(&rows, 0, 6), 1);
        assert_eq!(cursor_row(&rows, 0, 15), 2);
        assert_eq!(cursor_row(&rows, 1, 0), 3);
        let long = vec!["abcdefghij".to_string()];
        let rows = layout(&long, 4);
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn kill_ring() {
        let mut k = KillRing::default();
        k.push("a", false, false);
        k.push("b", true, false);
        k.push("z", true, true);
        assert_eq!(k.top(), Some("zab"));
        k.push("new", false, false);
        assert_eq!(k.rotate(), Some("zab"));
    }
}
