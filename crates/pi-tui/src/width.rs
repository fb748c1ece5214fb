//! Display width of terminal text (ANSI-aware, wide characters, emoji) and the width-bounded
//! operations built on it: truncation, padding, column slicing and word wrapping that keep
//! styles intact.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use crate::ansi::{pieces, Piece, SgrState};

/// Columns a tab occupies (tabs are shown as spaces).
pub const TAB_WIDTH: usize = 3;

/// Columns one grapheme cluster occupies.
pub fn grapheme_width(g: &str) -> usize {
    let bytes = g.as_bytes();
    if bytes.len() == 1 {
        return match bytes[0] {
            b'\t' => TAB_WIDTH,
            0..=0x1f | 0x7f => 0,
            _ => 1,
        };
    }
    let mut chars = g.chars();
    let first = chars.next().unwrap_or(' ');
    // Emoji presentation selector, ZWJ sequences and flag pairs all draw as one wide glyph.
    if g.contains('\u{FE0F}') || ('\u{1F1E6}'..='\u{1F1FF}').contains(&first) {
        return 2;
    }
    let w = UnicodeWidthStr::width(g);
    if g.contains('\u{200D}') && w >= 2 {
        return 2;
    }
    w.min(2)
}

/// Visible columns of `s`, ignoring escape sequences.
pub fn visible_width(s: &str) -> usize {
    // Fast path: printable ASCII without escapes.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.len();
    }
    let mut w = 0;
    for piece in pieces(s) {
        if let Piece::Text(t) = piece {
            w += text_width(t);
        }
    }
    w
}

fn text_width(t: &str) -> usize {
    if t.is_ascii() {
        return t
            .bytes()
            .map(|b| match b {
                b'\t' => TAB_WIDTH,
                0..=0x1f | 0x7f => 0,
                _ => 1,
            })
            .sum();
    }
    t.graphemes(true).map(grapheme_width).sum()
}

/// Truncate to at most `max` columns; when cut, the result ends with `ellipsis` (which counts
/// toward `max`). Styles open at the cut are closed before the ellipsis.
pub fn truncate_to_width(s: &str, max: usize, ellipsis: &str) -> String {
    if visible_width(s) <= max {
        return s.to_string();
    }
    let ell_w = visible_width(ellipsis);
    if ell_w > max {
        return take_columns(ellipsis, max).0;
    }
    let (mut out, _, state) = take_columns_state(s, max - ell_w);
    out.push_str(&state.suffix());
    out.push_str(ellipsis);
    out
}

/// Pad with spaces to exactly `width` columns (truncating without ellipsis when wider).
pub fn pad_to_width(s: &str, width: usize) -> String {
    let w = visible_width(s);
    if w > width {
        let (mut out, used, state) = take_columns_state(s, width);
        out.push_str(&state.suffix());
        out.extend(std::iter::repeat_n(' ', width - used));
        return out;
    }
    let mut out = String::with_capacity(s.len() + width - w);
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', width - w));
    out
}

/// The first `cols` columns of `s` (escape sequences kept) and the columns actually taken
/// (less than `cols` when a wide character would straddle the limit).
pub fn take_columns(s: &str, cols: usize) -> (String, usize) {
    let (out, used, _) = take_columns_state(s, cols);
    (out, used)
}

fn take_columns_state(s: &str, cols: usize) -> (String, usize, SgrState) {
    let mut out = String::new();
    let mut used = 0;
    let mut state = SgrState::new();
    'outer: for piece in pieces(s) {
        match piece {
            Piece::Escape(e) => {
                state.apply(e);
                out.push_str(e);
            }
            Piece::Text(t) => {
                for g in t.graphemes(true) {
                    let gw = grapheme_width(g);
                    if used + gw > cols {
                        break 'outer;
                    }
                    used += gw;
                    push_grapheme(&mut out, g);
                }
            }
        }
    }
    (out, used, state)
}

fn push_grapheme(out: &mut String, g: &str) {
    if g == "\t" {
        out.push_str(&" ".repeat(TAB_WIDTH));
    } else {
        out.push_str(g);
    }
}

/// Columns `[start, start + len)` of `s`, padded to exactly `len` columns. Styles active at
/// `start` are re-established at the front and closed at the end; a wide character cut by
/// either edge becomes spaces.
pub fn slice_columns(s: &str, start: usize, len: usize) -> String {
    let mut out = String::new();
    let mut state = SgrState::new();
    let mut col = 0;
    let end = start + len;
    let mut started = false;
    let mut produced = 0;
    'outer: for piece in pieces(s) {
        match piece {
            Piece::Escape(e) => {
                state.apply(e);
                if started {
                    out.push_str(e);
                }
            }
            Piece::Text(t) => {
                for g in t.graphemes(true) {
                    let gw = grapheme_width(g);
                    if col >= end {
                        break 'outer;
                    }
                    if col + gw <= start {
                        col += gw;
                        continue;
                    }
                    if !started {
                        out.push_str(&state.prefix());
                        started = true;
                    }
                    if col < start || col + gw > end {
                        // Straddles an edge: show the visible part as blanks.
                        let visible = (col + gw).min(end) - col.max(start);
                        out.extend(std::iter::repeat_n(' ', visible));
                        produced += visible;
                    } else {
                        push_grapheme(&mut out, g);
                        produced += gw;
                    }
                    col += gw;
                }
            }
        }
    }
    if started {
        out.push_str(&state.suffix());
    }
    out.extend(std::iter::repeat_n(' ', len.saturating_sub(produced)));
    out
}

/// Word-wrap `text` to `width` columns. Newlines start new lines; words longer than the width
/// are broken by grapheme; styles are closed at each line end and reopened on the next line.
pub fn wrap_text(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut state = SgrState::new();
    for src in text.split('\n') {
        wrap_line(src, width, &mut state, &mut lines);
    }
    lines
}

enum Tok<'a> {
    Esc(&'a str),
    Space(&'a str, usize),
    Word(&'a str, usize),
}

fn tokens(line: &str) -> Vec<Tok<'_>> {
    let mut toks = Vec::new();
    for piece in pieces(line) {
        match piece {
            Piece::Escape(e) => toks.push(Tok::Esc(e)),
            Piece::Text(t) if t.is_ascii() => ascii_tokens(t, &mut toks),
            Piece::Text(t) => {
                for w in t.split_word_bounds() {
                    let ww = text_width(w);
                    if w.chars().all(char::is_whitespace) {
                        toks.push(Tok::Space(w, ww));
                    } else {
                        toks.push(Tok::Word(w, ww));
                    }
                }
            }
        }
    }
    toks
}

/// Runs of spaces and of everything else (ASCII text is most of what is wrapped, and Unicode
/// word segmentation is slow). Lines break only at spaces, as pi wraps, so "word," and
/// "a-b" stay whole unless longer than the line.
fn ascii_tokens<'a>(t: &'a str, toks: &mut Vec<Tok<'a>>) {
    let bytes = t.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let space = bytes[start].is_ascii_whitespace();
        let end = bytes[start..]
            .iter()
            .position(|b| b.is_ascii_whitespace() != space)
            .map_or(bytes.len(), |n| start + n);
        let piece = &t[start..end];
        let w = text_width(piece);
        toks.push(if space {
            Tok::Space(piece, w)
        } else {
            Tok::Word(piece, w)
        });
        start = end;
    }
}

struct LineBuilder<'s> {
    width: usize,
    cur: String,
    cur_w: usize,
    /// Whitespace (and escapes) held back until the next word shows it fits.
    pending: String,
    pending_w: usize,
    state: &'s mut SgrState,
    out: &'s mut Vec<String>,
}

impl LineBuilder<'_> {
    fn start_line(&mut self) {
        // Room for a full line of plain text and its escapes, so appending rarely reallocates.
        let mut cur = String::with_capacity(self.width + 32);
        cur.push_str(&self.state.prefix());
        self.cur = cur;
        self.cur_w = 0;
    }

    fn finish_line(&mut self) {
        let mut line = std::mem::take(&mut self.cur);
        line.push_str(&self.state.suffix());
        self.out.push(line);
        self.start_line();
    }

    fn push_word(&mut self, word: &str, ww: usize) {
        if self.cur_w + self.pending_w + ww <= self.width {
            self.flush_pending();
            self.append(word, ww);
            return;
        }
        // Does not fit: break before it, dropping the held whitespace (its escapes still apply).
        // Whitespace that starts the source line is the row's content, as pi-tui keeps it: the
        // row ends (blank) before the word rather than the word taking its place.
        let pending = std::mem::take(&mut self.pending);
        let indent = std::mem::take(&mut self.pending_w) > 0;
        if self.cur_w > 0 || indent {
            self.finish_line();
        }
        for p in pieces(&pending) {
            if let Piece::Escape(e) = p {
                self.state.apply(e);
                self.cur.push_str(e);
            }
        }
        if ww <= self.width {
            self.append(word, ww);
            return;
        }
        for g in word.graphemes(true) {
            let gw = grapheme_width(g);
            if self.cur_w + gw > self.width && self.cur_w > 0 {
                self.finish_line();
            }
            push_grapheme(&mut self.cur, g);
            self.cur_w += gw;
        }
    }

    fn append(&mut self, word: &str, ww: usize) {
        if word.contains('\t') {
            self.cur.push_str(&word.replace('\t', &" ".repeat(TAB_WIDTH)));
        } else {
            self.cur.push_str(word);
        }
        self.cur_w += ww;
    }

    fn flush_pending(&mut self) {
        if !self.pending.is_empty() {
            let p = std::mem::take(&mut self.pending);
            self.append(&p, self.pending_w);
            self.pending_w = 0;
        }
    }
}

fn wrap_line(src: &str, width: usize, state: &mut SgrState, out: &mut Vec<String>) {
    let mut b = LineBuilder {
        width,
        cur: String::new(),
        cur_w: 0,
        pending: String::new(),
        pending_w: 0,
        state,
        out,
    };
    b.start_line();
    for tok in tokens(src) {
        match tok {
            Tok::Esc(e) => {
                b.state.apply(e);
                if b.pending.is_empty() {
                    b.cur.push_str(e);
                } else {
                    b.pending.push_str(e);
                }
            }
            Tok::Space(s, w) => {
                b.pending.push_str(s);
                b.pending_w += w;
            }
            Tok::Word(word, ww) => b.push_word(word, ww),
        }
    }
    // Trailing whitespace is kept when it fits.
    if b.cur_w + b.pending_w <= width {
        b.flush_pending();
    } else {
        let pending = std::mem::take(&mut b.pending);
        for p in pieces(&pending) {
            if let Piece::Escape(e) = p {
                b.cur.push_str(e);
            }
        }
    }
    let mut line = std::mem::take(&mut b.cur);
    line.push_str(&b.state.suffix());
    b.out.push(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(visible_width("hello"), 5);
        assert_eq!(visible_width("\x1b[31mred\x1b[39m"), 3);
        assert_eq!(visible_width("日本語"), 6);
        assert_eq!(visible_width("😀"), 2);
        assert_eq!(visible_width("👍🏽"), 2);
        assert_eq!(visible_width("👨‍👩‍👧"), 2);
        assert_eq!(visible_width("🇩🇪"), 2);
        assert_eq!(visible_width("❤️"), 2);
        assert_eq!(visible_width("e\u{301}"), 1);
        assert_eq!(visible_width("a\tb"), 2 + TAB_WIDTH);
        assert_eq!(visible_width("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), 4);
    }

    #[test]
    fn truncate() {
        assert_eq!(truncate_to_width("hello world", 8, "..."), "hello...");
        assert_eq!(truncate_to_width("short", 8, "..."), "short");
        assert_eq!(
            truncate_to_width("\x1b[1mhello world\x1b[22m", 8, "..."),
            "\x1b[1mhello\x1b[22m..."
        );
        // A wide character never straddles the limit.
        assert_eq!(truncate_to_width("日本語です", 6, "…"), "日本…");
    }

    #[test]
    fn pad() {
        assert_eq!(pad_to_width("ab", 4), "ab  ");
        assert_eq!(pad_to_width("日本", 5), "日本 ");
        assert_eq!(pad_to_width("日本", 3), "日 ");
    }

    #[test]
    fn slicing() {
        assert_eq!(slice_columns("abcdef", 2, 3), "cde");
        assert_eq!(slice_columns("ab", 1, 3), "b  ");
        assert_eq!(slice_columns("\x1b[31mabcdef\x1b[39m", 2, 2), "\x1b[31mcd\x1b[39m");
        assert_eq!(slice_columns("日本語", 1, 3), " 本");
    }

    #[test]
    fn wrapping_words() {
        assert_eq!(wrap_text("the quick brown fox", 10), vec!["the quick", "brown fox"]);
        assert_eq!(wrap_text("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap_text("a\n\nb", 10), vec!["a", "", "b"]);
        assert_eq!(wrap_text("", 10), vec![""]);
        // Breaks only at spaces: punctuation stays with its word.
        assert_eq!(
            wrap_text("one two, three-four", 7),
            vec!["one", "two,", "three-f", "our"]
        );
        assert_eq!(wrap_text("tab\there", 20), vec!["tab   here"]);
        for line in wrap_text("日本語のテキストを折り返す", 7) {
            assert!(visible_width(&line) <= 7, "{line}");
        }
    }

    #[test]
    fn an_indent_before_a_word_that_does_not_fit_keeps_its_row() {
        // pi-tui: the indent is the first row's content, so the word starts on the next row.
        assert_eq!(wrap_text("    abcdefghij", 8), vec!["", "abcdefgh", "ij"]);
        assert_eq!(wrap_text("  abcdef", 6), vec!["", "abcdef"]);
        // A word that fits after the indent stays on its row.
        assert_eq!(wrap_text("  abc defgh", 6), vec!["  abc", "defgh"]);
    }

    #[test]
    fn wrapping_keeps_styles() {
        let lines = wrap_text("\x1b[31mred words here\x1b[39m plain", 10);
        assert_eq!(lines, vec!["\x1b[31mred words\x1b[39m", "\x1b[31mhere\x1b[39m plain"]);
    }
}
