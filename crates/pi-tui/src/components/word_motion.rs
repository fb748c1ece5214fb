//! Word motion over one line: Unicode word boundaries (UAX #29), where a word stops at the
//! punctuation inside it (`foo.bar`, `a/b`) but not at `_`, runs of other symbols move as one,
//! and given byte ranges (the editor's paste markers) count as one unit.

use unicode_segmentation::UnicodeSegmentation;

/// Punctuation that ends a word even inside one Unicode word segment.
const WORD_PUNCT: &str = "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Space,
    Word,
    Other,
    Atomic,
}

struct Seg<'a> {
    start: usize,
    text: &'a str,
    kind: Kind,
}

/// Segments of `text` (which starts at byte `base` of its line); a segment overlapping one of
/// `atomic` (line byte ranges) becomes that whole range, clipped to `text`.
fn segments<'a>(text: &'a str, base: usize, atomic: &[(usize, usize)]) -> Vec<Seg<'a>> {
    let mut out: Vec<Seg<'a>> = Vec::new();
    for (i, s) in text.split_word_bound_indices() {
        let (a, b) = (base + i, base + i + s.len());
        if let Some(&(ra, rb)) = atomic.iter().find(|(ra, rb)| a < *rb && b > *ra) {
            let (ca, cb) = (ra.max(base), rb.min(base + text.len()));
            if out
                .last()
                .is_some_and(|l| l.kind == Kind::Atomic && l.start + l.text.len() >= cb)
            {
                continue;
            }
            out.push(Seg {
                start: ca,
                text: &text[ca - base..cb - base],
                kind: Kind::Atomic,
            });
            continue;
        }
        if out
            .last()
            .is_some_and(|l| l.kind == Kind::Atomic && l.start + l.text.len() > a)
        {
            continue;
        }
        let kind = if s.chars().any(char::is_whitespace) {
            Kind::Space
        } else if s.chars().any(char::is_alphanumeric) {
            Kind::Word
        } else {
            Kind::Other
        };
        out.push(Seg {
            start: a,
            text: s,
            kind,
        });
    }
    out
}

/// Byte column one word back from `col` in `line`.
pub(crate) fn word_backward(line: &str, col: usize, atomic: &[(usize, usize)]) -> usize {
    let mut segs = segments(&line[..col], 0, atomic);
    while segs.last().is_some_and(|s| s.kind == Kind::Space) {
        segs.pop();
    }
    let Some(last) = segs.last() else {
        return 0;
    };
    match last.kind {
        Kind::Atomic => last.start,
        // Back to just after the last punctuation inside the word.
        Kind::Word => match last.text.rfind(|c| WORD_PUNCT.contains(c)) {
            Some(p) => last.start + p + 1,
            None => last.start,
        },
        _ => {
            let mut at = last.start;
            while segs.last().is_some_and(|s| s.kind == Kind::Other) {
                at = segs.pop().map_or(at, |s| s.start);
            }
            at
        }
    }
}

/// Byte column one word forward from `col` in `line`.
pub(crate) fn word_forward(line: &str, col: usize, atomic: &[(usize, usize)]) -> usize {
    let segs = segments(&line[col..], col, atomic);
    let mut it = segs.iter().skip_while(|s| s.kind == Kind::Space).peekable();
    let Some(first) = it.peek() else {
        return line.len();
    };
    match first.kind {
        Kind::Atomic => first.start + first.text.len(),
        Kind::Word => match first.text.find(|c| WORD_PUNCT.contains(c)) {
            Some(p) => first.start + p,
            None => first.start + first.text.len(),
        },
        _ => {
            let mut at = first.start;
            while let Some(s) = it.next_if(|s| s.kind == Kind::Other) {
                at = s.start + s.text.len();
            }
            at
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn back_all(line: &str) -> Vec<usize> {
        let mut stops = Vec::new();
        let mut col = line.len();
        while col > 0 {
            col = word_backward(line, col, &[]);
            stops.push(col);
        }
        stops
    }

    #[test]
    fn underscores_join_and_punctuation_splits() {
        let line = "hello world foo.bar_baz qux";
        assert_eq!(back_all(line), [24, 16, 15, 12, 6, 0]);
        assert_eq!(word_forward(line, 12, &[]), 15);
        assert_eq!(word_forward(line, 15, &[]), 16);
        assert_eq!(word_forward(line, 16, &[]), 23);
        assert_eq!(word_forward(line, 23, &[]), 27);
    }

    #[test]
    fn symbol_runs_and_atomic_ranges() {
        assert_eq!(word_backward("a --> b", 5, &[]), 2);
        assert_eq!(word_forward("a --> b", 1, &[]), 5);
        let line = "x [paste #1 +12 lines] y";
        let m = [(2, 22)];
        assert_eq!(word_backward(line, 23, &m), 2);
        assert_eq!(word_forward(line, 1, &m), 22);
        assert_eq!(word_backward(line, 2, &m), 0);
    }
}
