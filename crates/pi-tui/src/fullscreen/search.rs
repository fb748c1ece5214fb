//! Finding a query in the rendered transcript as pi 1.6 does: the text of all lines (escapes
//! removed) with every run of blanks and line ends taken as one space, case ignored, so a
//! query may run on from one line to the next.

use unicode_segmentation::UnicodeSegmentation;

use crate::component::Frame;
use crate::width::visible_width;

/// Where one match shows: `(line, first column, end column)` on each line it touches.
pub(super) type Segments = Vec<(usize, usize, usize)>;

/// A piece of the searchable text and where it sits on the screen: a run of printable ASCII
/// without spaces (one column a byte), or one grapheme of another line.
#[derive(Debug)]
struct Run {
    /// Byte offset in [`Corpus::text`].
    at: usize,
    len: usize,
    line: usize,
    col: usize,
    width: usize,
    /// Byte `k` of the run is column `col + k`.
    linear: bool,
}

/// The transcript as one searchable text.
#[derive(Debug, Default)]
pub(super) struct Corpus {
    text: String,
    runs: Vec<Run>,
}

impl Corpus {
    pub fn build(transcript: &Frame) -> Corpus {
        let mut c = Corpus::default();
        let mut gap = false;
        for (line, raw) in transcript.iter().enumerate() {
            let plain = crate::ansi::strip_ansi(raw);
            if plain.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                // Most lines: whole words at a time, no segmentation.
                let bytes = plain.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i] == b' ' {
                        gap |= !c.text.is_empty();
                        i += 1;
                        continue;
                    }
                    let end = bytes[i..]
                        .iter()
                        .position(|&b| b == b' ')
                        .map_or(bytes.len(), |p| i + p);
                    c.push(&plain[i..end].to_ascii_lowercase(), line, i, end - i, true, &mut gap);
                    i = end;
                }
            } else {
                let mut col = 0;
                for g in plain.graphemes(true) {
                    let w = visible_width(g);
                    if g.chars().all(char::is_whitespace) {
                        gap |= !c.text.is_empty();
                    } else {
                        c.push(&g.to_lowercase(), line, col, w, false, &mut gap);
                    }
                    col += w;
                }
            }
            gap |= !c.text.is_empty();
        }
        c
    }

    fn push(&mut self, piece: &str, line: usize, col: usize, width: usize, linear: bool, gap: &mut bool) {
        if std::mem::take(gap) {
            self.text.push(' ');
        }
        self.runs.push(Run {
            at: self.text.len(),
            len: piece.len(),
            line,
            col,
            width,
            linear,
        });
        self.text.push_str(piece);
    }

    /// Every match of `query` (blanks collapsed and trimmed, case ignored), in order, not
    /// overlapping. A blank query matches nothing.
    pub fn find(&self, query: &str) -> Vec<Segments> {
        let needle = query.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        if needle.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut first_run = 0;
        for (start, hit) in self.text.match_indices(&needle) {
            let end = start + hit.len();
            while first_run < self.runs.len() && self.runs[first_run].at + self.runs[first_run].len <= start {
                first_run += 1;
            }
            let mut segments: Segments = Vec::new();
            for r in self.runs[first_run..].iter().take_while(|r| r.at < end) {
                let (from, to) = if r.linear {
                    (r.col + start.max(r.at) - r.at, r.col + end.min(r.at + r.len) - r.at)
                } else {
                    (r.col, r.col + r.width)
                };
                match segments.last_mut() {
                    Some(last) if last.0 == r.line && from <= last.2 => last.2 = last.2.max(to),
                    _ => segments.push((r.line, from, to)),
                }
            }
            if !segments.is_empty() {
                out.push(segments);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(lines: &[&str]) -> Corpus {
        let mut f = Frame::new();
        f.extend_lines(lines.iter().map(|l| l.to_string()));
        Corpus::build(&f.sealed())
    }

    #[test]
    fn blanks_and_line_ends_are_one_space_and_case_is_ignored() {
        let c = corpus(&["  reply line \x1b[1m110\x1b[0m word110", "", " Reply   line 111"]);
        assert_eq!(c.find("110"), vec![vec![(0, 13, 16)], vec![(0, 21, 24)]]);
        // Across the blank line, from one line to the next.
        assert_eq!(c.find("word110 reply"), vec![vec![(0, 17, 24), (2, 1, 6)]]);
        // Words apart stay apart on screen: the blank between them is not marked.
        assert_eq!(
            c.find("  REPLY    line "),
            vec![vec![(0, 2, 7), (0, 8, 12)], vec![(2, 1, 6), (2, 9, 13)]]
        );
        assert!(c.find("   ").is_empty());
        assert!(c.find("110word").is_empty());
    }

    #[test]
    fn wide_and_accented_text_maps_to_display_columns() {
        let c = corpus(&["日本 語x Été"]);
        assert_eq!(c.find("語x"), vec![vec![(0, 5, 8)]]);
        assert_eq!(c.find("été"), vec![vec![(0, 9, 12)]]);
        assert_eq!(c.find("本 語"), vec![vec![(0, 2, 4), (0, 5, 7)]]);
    }
}
