//! A grid of cells for drawing diagrams whose lines are accumulated as direction bits, so
//! crossings and junctions resolve into the right box-drawing glyph whatever order they were
//! drawn in; boxes claim their cells so lines stop at their outline.

use unicode_segmentation::UnicodeSegmentation;

use super::Role;
use crate::width::grapheme_width;

pub const UP: u8 = 1;
pub const DOWN: u8 = 2;
pub const LEFT: u8 = 4;
pub const RIGHT: u8 = 8;

/// What a cell shows.
#[derive(Debug, Clone, PartialEq)]
enum Glyph {
    Char(char),
    /// A grapheme of more than one code point.
    Cluster(String),
    /// The second column of a wide grapheme: nothing of its own is printed.
    Cont,
}

#[derive(Debug, Clone)]
struct Cell {
    glyph: Glyph,
    role: Option<Role>,
    mask: u8,
    occupied: bool,
}

pub struct Canvas {
    pub w: usize,
    pub h: usize,
    cells: Vec<Cell>,
}

/// Graphemes of `s` with their widths, zero-width ones left out.
pub fn clusters(s: &str) -> impl Iterator<Item = (&str, usize)> {
    s.graphemes(true)
        .map(|g| (g, if g == "\t" { 1 } else { grapheme_width(g) }))
        .filter(|(_, w)| *w > 0)
}

/// Columns `s` takes on the canvas.
pub fn text_width(s: &str) -> usize {
    clusters(s).map(|(_, w)| w).sum()
}

/// `label` cut to `inner` columns with an ellipsis when it is wider.
pub fn fit(label: &str, inner: usize) -> String {
    if text_width(label) <= inner {
        return label.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for (g, w) in clusters(label) {
        if used + w + 1 > inner {
            break;
        }
        out.push_str(g);
        used += w;
    }
    out.push('…');
    out
}

fn mask_char(mask: u8) -> char {
    match mask {
        0 => ' ',
        m if m & (LEFT | RIGHT) == 0 => '│',
        m if m & (UP | DOWN) == 0 => '─',
        m if m == DOWN | RIGHT => '┌',
        m if m == DOWN | LEFT => '┐',
        m if m == UP | RIGHT => '└',
        m if m == UP | LEFT => '┘',
        m if m == UP | DOWN | RIGHT => '├',
        m if m == UP | DOWN | LEFT => '┤',
        m if m == DOWN | LEFT | RIGHT => '┬',
        m if m == UP | LEFT | RIGHT => '┴',
        _ => '┼',
    }
}

/// A single line meeting a double one: the mixed glyph.
fn double_tee(c: char, mask: u8) -> char {
    match c {
        '═' if mask & UP != 0 && mask & DOWN != 0 => '╪',
        '═' if mask & DOWN != 0 => '╤',
        '═' if mask & UP != 0 => '╧',
        '║' if mask & LEFT != 0 && mask & RIGHT != 0 => '╫',
        '║' if mask & RIGHT != 0 => '╟',
        '║' if mask & LEFT != 0 => '╢',
        c => c,
    }
}

impl Canvas {
    pub fn new(w: usize, h: usize) -> Canvas {
        let blank = Cell {
            glyph: Glyph::Char(' '),
            role: None,
            mask: 0,
            occupied: false,
        };
        Canvas {
            w,
            h,
            cells: vec![blank; w * h],
        }
    }

    fn cell(&mut self, x: usize, y: usize) -> Option<&mut Cell> {
        if x >= self.w || y >= self.h {
            return None;
        }
        self.cells.get_mut(y * self.w + x)
    }

    /// Put a character, whatever was there.
    pub fn set(&mut self, x: usize, y: usize, c: char, role: Role) {
        if let Some(cell) = self.cell(x, y) {
            cell.glyph = Glyph::Char(if c == '\t' { ' ' } else { c });
            cell.role = Some(role);
        }
    }

    fn set_cluster(&mut self, x: usize, y: usize, g: &str, role: Role) {
        let mut chars = g.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => self.set(x, y, c, role),
            _ => {
                if let Some(cell) = self.cell(x, y) {
                    cell.glyph = Glyph::Cluster(g.to_string());
                    cell.role = Some(role);
                }
            }
        }
    }

    fn set_cont(&mut self, x: usize, y: usize, role: Role) {
        if let Some(cell) = self.cell(x, y) {
            cell.glyph = Glyph::Cont;
            cell.role = Some(role);
        }
    }

    /// Add line bits to a cell no box claimed.
    pub fn add_bits(&mut self, x: usize, y: usize, bits: u8, role: Role) {
        if let Some(cell) = self.cell(x, y) {
            if cell.occupied {
                return;
            }
            cell.mask |= bits;
            if cell.role != Some(Role::Border) {
                cell.role = Some(role);
            }
        }
    }

    /// Add line bits even to a box's cell, so a line can meet its outline.
    pub fn junction(&mut self, x: usize, y: usize, bits: u8) {
        if let Some(cell) = self.cell(x, y) {
            cell.mask |= bits;
            if cell.role != Some(Role::Border) {
                cell.role = Some(Role::Edge);
            }
        }
    }

    /// A vertical line from `y0` to `y1`.
    pub fn seg_v(&mut self, x: usize, y0: usize, y1: usize) {
        let (a, b) = (y0.min(y1), y0.max(y1));
        for y in a..=b {
            let mut bits = 0;
            if y > a {
                bits |= UP;
            }
            if y < b {
                bits |= DOWN;
            }
            self.add_bits(x, y, bits, Role::Edge);
        }
    }

    /// Replace a lined cell's glyph with a double vertical line.
    pub fn double_v(&mut self, x: usize, y: usize) {
        if let Some(cell) = self.cell(x, y) {
            if cell.mask != 0 {
                cell.glyph = Glyph::Char('║');
            }
        }
    }

    /// Text from `x` on row `y`.
    pub fn text(&mut self, s: &str, x: usize, y: usize, role: Role) {
        let mut cur = x;
        for (g, w) in clusters(s) {
            self.set_cluster(cur, y, g, role);
            for k in 1..w {
                self.set_cont(cur + k, y, role);
            }
            cur += w;
        }
    }

    /// Text that wins over the lines under it (their bits are cleared).
    pub fn text_over_lines(&mut self, s: &str, x: usize, y: usize, role: Role) {
        let mut cur = x;
        for (g, w) in clusters(s) {
            for k in 0..w {
                if let Some(cell) = self.cell(cur + k, y) {
                    cell.mask = 0;
                }
                if k == 0 {
                    self.set_cluster(cur, y, g, role);
                } else {
                    self.set_cont(cur + k, y, role);
                }
            }
            cur += w;
        }
    }

    /// A rectangle with `label` centred on its middle row; its cells are claimed.
    pub fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, label: &str) {
        let (right, bottom) = (x + w - 1, y + h - 1);
        self.set(x, y, '┌', Role::Border);
        self.set(right, y, '┐', Role::Border);
        self.set(x, bottom, '└', Role::Border);
        self.set(right, bottom, '┘', Role::Border);
        for cx in x + 1..right {
            self.add_bits(cx, y, LEFT | RIGHT, Role::Border);
            self.add_bits(cx, bottom, LEFT | RIGHT, Role::Border);
        }
        for cy in y + 1..bottom {
            self.add_bits(x, cy, UP | DOWN, Role::Border);
            self.add_bits(right, cy, UP | DOWN, Role::Border);
        }
        for cy in y..=bottom {
            for cx in x..=right {
                if let Some(cell) = self.cell(cx, cy) {
                    cell.occupied = true;
                }
            }
        }
        let inner = w.saturating_sub(4).max(1);
        let text = fit(label, inner);
        let tx = x + 2 + inner.saturating_sub(text_width(&text)) / 2;
        self.text(&text, tx, y + 1, Role::Text);
    }

    /// Turn the accumulated bits into glyphs.
    pub fn finish(&mut self) {
        for cell in &mut self.cells {
            if cell.mask == 0 {
                continue;
            }
            match cell.glyph {
                Glyph::Char(' ') => cell.glyph = Glyph::Char(mask_char(cell.mask)),
                Glyph::Char(c @ ('═' | '║')) => cell.glyph = Glyph::Char(double_tee(c, cell.mask)),
                _ => {}
            }
        }
    }

    /// The rows as runs of one role, trailing blanks and blank rows at either end left out.
    /// Blanks no role claimed join the run before them.
    pub fn rows(&self) -> Vec<Vec<(Role, String)>> {
        let mut rows: Vec<Vec<(Role, String)>> = Vec::new();
        for y in 0..self.h {
            let row = &self.cells[y * self.w..(y + 1) * self.w];
            let last = row
                .iter()
                .rposition(|c| c.glyph != Glyph::Char(' '))
                .map_or(0, |i| i + 1);
            let mut runs: Vec<(Role, String)> = Vec::new();
            for cell in &row[..last] {
                let piece = match &cell.glyph {
                    Glyph::Char(c) => c.to_string(),
                    Glyph::Cluster(g) => g.clone(),
                    Glyph::Cont => continue,
                };
                match (runs.last_mut(), cell.role) {
                    (Some((r, s)), role) if role.is_none_or(|role| role == *r) => s.push_str(&piece),
                    (_, role) => runs.push((role.unwrap_or(Role::Text), piece)),
                }
            }
            rows.push(runs);
        }
        let first = rows.iter().position(|r| !r.is_empty()).unwrap_or(rows.len());
        let end = rows.iter().rposition(|r| !r.is_empty()).map_or(first, |i| i + 1);
        rows.drain(end..);
        rows.drain(..first);
        rows
    }
}
