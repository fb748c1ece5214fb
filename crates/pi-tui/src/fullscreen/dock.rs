//! Fitting the dock (queued messages, status, widgets, editor, footer) into the rows the
//! transcript leaves, the way pi 1.6's stack layout shares them out.
//!
//! Every section keeps its own lines when they fit. When they do not, each section gives
//! up rows in proportion to its height (the editor never below three rows), and a section
//! that lost rows shows its first ones: a component taller than the screen is seen from
//! its top, unless its cursor would fall below the cut, in which case the view moves down
//! just far enough to keep the cursor on the last row.

use crate::component::CURSOR_MARKER;

/// One section of the dock, top to bottom.
pub struct DockSection {
    pub lines: Vec<String>,
    /// The fewest rows the section keeps when space is short.
    pub min_rows: usize,
}

impl DockSection {
    pub fn new(lines: Vec<String>, min_rows: usize) -> Self {
        DockSection { lines, min_rows }
    }
}

/// The dock's rows for a screen `height` rows high: the transcript always keeps one.
pub fn fit(sections: Vec<DockSection>, height: usize) -> Vec<String> {
    fit_spans(sections, height).0
}

/// [`fit`], with the rows of the result each section ended up on.
pub fn fit_spans(sections: Vec<DockSection>, height: usize) -> (Vec<String>, Vec<std::ops::Range<usize>>) {
    let (out, spans, _) = fit_placed(sections, height);
    (out, spans)
}

/// [`fit_spans`], with how many of each section's first lines were cut to keep its cursor
/// in view (what its first row on screen is, for the mouse).
pub fn fit_placed(sections: Vec<DockSection>, height: usize) -> (Vec<String>, Vec<std::ops::Range<usize>>, Vec<usize>) {
    let rows = height.saturating_sub(1);
    let mut sizes: Vec<usize> = sections.iter().map(|s| s.lines.len()).collect();
    let total: usize = sizes.iter().sum();
    if total > rows {
        let mins: Vec<usize> = sections.iter().map(|s| s.min_rows.min(s.lines.len())).collect();
        shrink(&mut sizes, &mins, total - rows);
    }
    let mut out = Vec::with_capacity(rows.min(total));
    let mut spans = Vec::with_capacity(sizes.len());
    let mut skipped = Vec::with_capacity(sizes.len());
    for (section, size) in sections.into_iter().zip(sizes) {
        let start = out.len();
        let (lines, offset) = clip(section.lines, size);
        out.extend(lines);
        spans.push(start..out.len());
        skipped.push(offset);
    }
    // Minimum sizes can still overflow a tiny window: the bottom rows win, as before.
    if out.len() > rows {
        let cut = out.len() - rows;
        out.drain(..cut);
        for (span, skip) in spans.iter_mut().zip(skipped.iter_mut()) {
            // A section whose top went off the screen starts that much further in.
            *skip += cut.saturating_sub(span.start).min(span.len());
            *span = span.start.saturating_sub(cut)..span.end.saturating_sub(cut);
        }
    }
    (out, spans, skipped)
}

/// Take `amount` rows away, each round sharing it out by current height (at least one row
/// per section that can still give), in order, until nothing is left or nobody can give.
fn shrink(sizes: &mut [usize], mins: &[usize], mut amount: usize) {
    while amount > 0 {
        let candidates: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] > mins[i]).collect();
        if candidates.is_empty() {
            return;
        }
        let total_weight: usize = candidates.iter().map(|&i| sizes[i].max(1)).sum();
        let mut given = 0;
        for i in candidates {
            if amount == 0 {
                break;
            }
            let proposed = (amount * sizes[i].max(1) / total_weight).max(1);
            let delta = amount.min(proposed).min(sizes[i] - mins[i]);
            sizes[i] -= delta;
            amount -= delta;
            given += delta;
        }
        if given == 0 {
            return;
        }
    }
}

/// The `rows` of `lines` on screen: the first ones, or the ones ending at the cursor; and
/// how many lines were cut above them.
fn clip(mut lines: Vec<String>, rows: usize) -> (Vec<String>, usize) {
    if lines.len() <= rows {
        return (lines, 0);
    }
    let offset = match lines.iter().position(|l| l.contains(CURSOR_MARKER)) {
        Some(cursor) if rows > 0 && cursor >= rows => cursor + 1 - rows,
        _ => 0,
    };
    lines.truncate(offset + rows);
    lines.drain(..offset);
    (lines, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(prefix: &str, n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("{prefix}{i}")).collect()
    }

    #[test]
    fn a_dock_that_fits_is_unchanged() {
        let out = fit(
            vec![
                DockSection::new(numbered("e", 3), 3),
                DockSection::new(numbered("f", 2), 0),
            ],
            30,
        );
        assert_eq!(out, ["e1", "e2", "e3", "f1", "f2"]);
    }

    #[test]
    fn a_tall_component_shows_its_top_and_the_footer_keeps_a_row() {
        // 30 rows: a spacer, a 50-line component in the editor's place, a 2-line footer.
        let out = fit(
            vec![
                DockSection::new(vec![String::new()], 0),
                DockSection::new(numbered("row", 50), 3),
                DockSection::new(numbered("foot", 2), 0),
            ],
            30,
        );
        assert_eq!(out.len(), 29);
        assert_eq!(out[0], "row1");
        assert_eq!(out[27], "row28");
        assert_eq!(out[28], "foot1");
    }

    #[test]
    fn the_cursor_stays_visible_when_the_section_is_cut() {
        let mut lines = numbered("l", 40);
        lines[35].push_str(CURSOR_MARKER);
        let out = fit(vec![DockSection::new(lines, 3)], 11);
        assert_eq!(out.len(), 10);
        assert!(out[9].starts_with("l36"));
        assert_eq!(out[0], "l27");
    }

    #[test]
    fn a_tiny_window_never_gets_more_rows_than_it_has() {
        let out = fit(
            vec![
                DockSection::new(numbered("e", 5), 3),
                DockSection::new(numbered("f", 2), 0),
            ],
            3,
        );
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn each_section_knows_its_rows_even_when_the_top_is_cut() {
        let sections = || {
            vec![
                DockSection::new(numbered("q", 2), 0),
                DockSection::new(numbered("e", 4), 3),
                DockSection::new(numbered("f", 2), 0),
            ]
        };
        let (out, spans) = fit_spans(sections(), 20);
        assert_eq!(spans, vec![0..2, 2..6, 6..8]);
        assert_eq!(out[2], "e1");
        // Three rows for everything: the editor's minimum pushes the top out.
        let (out, spans) = fit_spans(sections(), 4);
        assert_eq!(out.len(), 3);
        assert_eq!(spans[1].len(), out.iter().filter(|l| l.starts_with('e')).count());
        assert!(spans[0].is_empty());
    }

    #[test]
    fn a_section_cut_at_the_top_says_how_many_lines_went() {
        let mut lines = numbered("l", 40);
        lines[35].push_str(CURSOR_MARKER);
        let (out, spans, skipped) = fit_placed(vec![DockSection::new(lines, 3)], 11);
        assert_eq!(spans, vec![0..10]);
        assert_eq!(skipped, vec![26]);
        assert!(out[0].starts_with("l27"));
    }
}
