//! Mermaid `sequenceDiagram`s as text, laid out as pi 1.6 lays them out: a column per
//! participant with its box above and below a lifeline, then the items top to bottom, each
//! row band sized to its kind. Gaps between lifelines grow to fit the widest message label,
//! note or self-message between them. Notes are boxes, blocks are labelled full-width rules,
//! activations turn the lifeline double.

mod parse;

use parse::{Activation, Anchor, Head, Item, Sequence};

use super::canvas::{fit, text_width, Canvas, DOWN, LEFT, RIGHT, UP};
use super::{Diagram, NotDrawn, Role};

/// Fewest columns between neighbouring lifelines.
const MIN_GAP: usize = 5;
/// Participant names are cut to this many columns.
const NAME_WIDTH: usize = 24;
/// A larger drawing is refused.
const MAX_CELLS: usize = 1 << 21;

/// Where a note's box goes: (left column, width).
fn note_box(xs: &[usize], anchor: Anchor, text_w: usize) -> (usize, usize) {
    match anchor {
        Anchor::Over(a, b) => {
            let centre = (xs[a] + xs[b]) / 2;
            let w = (xs[b] - xs[a] + 5).max(text_w + 4);
            (centre.saturating_sub(w / 2), w)
        }
        Anchor::LeftOf(a) => {
            let w = text_w + 4;
            (xs[a].saturating_sub(w + 1), w)
        }
        Anchor::RightOf(a) => (xs[a] + 2, text_w + 4),
    }
}

fn label_width(text: &Option<String>) -> usize {
    text.as_deref().map_or(0, text_width)
}

/// Rows an item takes.
fn rows_of(item: &Item) -> usize {
    match item {
        Item::Note { .. } => 4,
        Item::Divider(_) => 2,
        Item::Message { from, to, .. } if from == to => 4,
        Item::Message { text, .. } => 2 + usize::from(text.is_some()),
    }
}

/// Lifeline columns: each gap fits both boxes, then grows for what must fit between columns.
fn columns(seq: &Sequence, box_w: &[usize]) -> Vec<usize> {
    let n = box_w.len();
    let mut gaps: Vec<usize> = (0..n.saturating_sub(1))
        .map(|i| MIN_GAP.max(box_w[i].div_ceil(2) + box_w[i + 1].div_ceil(2) + 1))
        .collect();
    // (first column, last column, columns needed between them)
    let mut needs: Vec<(usize, usize, usize)> = Vec::new();
    for item in &seq.items {
        match item {
            Item::Message { from, to, text, .. } if from != to => {
                needs.push(((*from).min(*to), (*from).max(*to), (label_width(text) + 2).max(4)));
            }
            Item::Message { from, text, .. } if from + 1 < n => {
                needs.push((*from, from + 1, 5 + label_width(text) + 2));
            }
            Item::Note { anchor, text } => {
                let tw = text_width(text);
                match *anchor {
                    Anchor::Over(a, b) if a < b => needs.push((a, b, tw.saturating_sub(1))),
                    Anchor::Over(a, _) => {
                        let need = (tw + 4).div_ceil(2) + 2;
                        if a > 0 {
                            needs.push((a - 1, a, need));
                        }
                        if a + 1 < n {
                            needs.push((a, a + 1, need));
                        }
                    }
                    Anchor::LeftOf(a) if a > 0 => needs.push((a - 1, a, tw + 7)),
                    Anchor::RightOf(a) if a + 1 < n => needs.push((a, a + 1, tw + 7)),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    // Narrow spans first, so a wide one only adds what they did not already give.
    needs.sort_by_key(|(l, r, _)| r - l);
    for (l, r, need) in needs {
        let have: usize = gaps[l..r].iter().sum();
        if have < need {
            gaps[r - 1] += need - have;
        }
    }
    let mut xs = vec![box_w[0] / 2; n];
    for i in 1..n {
        xs[i] = xs[i - 1] + gaps[i - 1];
    }
    // A note left of the first lifeline has no gap to grow: everything moves right instead.
    let pad = seq
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Note {
                anchor: Anchor::LeftOf(0),
                text,
            } => Some((text_width(text) + 5).saturating_sub(xs[0])),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    xs.iter_mut().for_each(|x| *x += pad);
    xs
}

fn draw_message(c: &mut Canvas, xs: &[usize], r: usize, item: &Item) {
    let Item::Message {
        from,
        to,
        text,
        dashed,
        head,
    } = item
    else {
        return;
    };
    let line = if *dashed { '╌' } else { '─' };
    if from == to {
        // Out of the lifeline, down two rows and back.
        let x = xs[*from];
        c.junction(x, r, RIGHT);
        c.set(x + 1, r, line, Role::Edge);
        c.set(x + 2, r, line, Role::Edge);
        c.set(x + 3, r, '╮', Role::Edge);
        c.set(x + 3, r + 1, '│', Role::Edge);
        c.set(x + 1, r + 2, if *head == Head::Cross { '×' } else { '◄' }, Role::Edge);
        c.set(x + 2, r + 2, line, Role::Edge);
        c.set(x + 3, r + 2, '╯', Role::Edge);
        if let Some(t) = text {
            c.text_over_lines(t, x + 5, r + 1, Role::Text);
        }
        return;
    }
    let (x0, x1) = (xs[*from], xs[*to]);
    let rightward = x1 > x0;
    let arrow_row = if text.is_some() { r + 1 } else { r };
    let (lo, hi) = (x0.min(x1), x0.max(x1));
    c.junction(x0, arrow_row, if rightward { RIGHT } else { LEFT });
    for x in lo + 1..hi {
        c.set(x, arrow_row, line, Role::Edge);
    }
    let head_ch = match (head, rightward) {
        (Head::Cross, _) => '×',
        (_, true) => '▶',
        _ => '◄',
    };
    c.set(if rightward { x1 - 1 } else { x1 + 1 }, arrow_row, head_ch, Role::Edge);
    if let Some(t) = text {
        let span = hi - lo - 1;
        let t = fit(t, span.max(1));
        c.text_over_lines(&t, lo + 1 + span.saturating_sub(text_width(&t)) / 2, r, Role::Text);
    }
}

/// A full-width rule naming a block's start, branch or end.
fn draw_divider(c: &mut Canvas, text: &str, r: usize, width: usize) {
    for x in 0..width {
        c.set(x, r, '─', Role::Edge);
    }
    let label = format!(" {} ", fit(text, width.saturating_sub(4)));
    c.text_over_lines(&label, 2, r, Role::EdgeLabel);
}

/// Draw a `sequenceDiagram`.
pub fn render(src: &str) -> Result<Diagram, NotDrawn> {
    let seq = parse::parse(src).ok_or(NotDrawn::Unsupported)?;
    let n = seq.labels.len();
    let names: Vec<String> = seq.labels.iter().map(|l| fit(l, NAME_WIDTH)).collect();
    let box_w: Vec<usize> = names.iter().map(|l| text_width(l).max(1) + 4).collect();
    let xs = columns(&seq, &box_w);

    let mut width = xs[n - 1] + box_w[n - 1].div_ceil(2) + 1;
    for item in &seq.items {
        width = width.max(match item {
            Item::Message { from, to, text, .. } if from == to => xs[*from] + 5 + label_width(text) + 1,
            Item::Note { anchor, text } => {
                let (x, w) = note_box(&xs, *anchor, text_width(text));
                x + w + 1
            }
            Item::Divider(text) => text_width(text) + 4,
            _ => 0,
        });
    }
    let mut tops = Vec::with_capacity(seq.items.len());
    let mut y = 4;
    for item in &seq.items {
        tops.push(y);
        y += rows_of(item);
    }
    let bottom = y;
    let height = bottom + 3;
    if width * height > MAX_CELLS {
        return Err(NotDrawn::Unsupported);
    }

    let mut c = Canvas::new(width, height);
    for (i, name) in names.iter().enumerate() {
        for by in [0, bottom] {
            c.rect(xs[i].saturating_sub(box_w[i] / 2), by, box_w[i], 3, name);
        }
    }
    for (item, &r) in seq.items.iter().zip(&tops) {
        if let Item::Note { anchor, text } = item {
            let (x, w) = note_box(&xs, *anchor, text_width(text));
            c.rect(x, r, w, 3, text);
        }
    }
    for &x in &xs {
        c.junction(x, 2, DOWN);
        c.seg_v(x, 3, bottom - 1);
        c.junction(x, bottom, UP);
    }
    for (item, &r) in seq.items.iter().zip(&tops) {
        match item {
            Item::Message { .. } => draw_message(&mut c, &xs, r, item),
            Item::Divider(text) => draw_divider(&mut c, text, r, width),
            Item::Note { .. } => {}
        }
    }
    activations(&mut c, &seq, &xs, &tops, bottom);
    c.finish();
    Ok(Diagram {
        rows: c.rows(),
        warnings: seq.warnings,
    })
}

/// Double the lifeline from the activating message's arrow to the ending one's.
fn activations(c: &mut Canvas, seq: &Sequence, xs: &[usize], tops: &[usize], bottom: usize) {
    let start = |k: usize| match &seq.items[k] {
        Item::Message {
            from,
            to,
            text: Some(_),
            ..
        } if from != to => tops[k] + 1,
        _ => tops[k],
    };
    // A message to oneself comes back two rows below where it left.
    let end = |k: usize| match &seq.items[k] {
        Item::Message { from, to, .. } if from == to => tops[k] + 2,
        _ => start(k),
    };
    for &Activation { at, from, to } in &seq.activations {
        let last = to.map_or(bottom - 1, end);
        for y in start(from)..=last {
            c.double_v(xs[at], y);
        }
    }
}

#[cfg(test)]
mod tests;
