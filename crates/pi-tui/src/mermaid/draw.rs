//! A laid-out flowchart drawn on a grid of cells: edges as box-drawing lines (junctions merged
//! from the directions meeting in a cell), boxes with their labels, arrowheads and edge
//! labels, each cell tagged with what it belongs to so it can be coloured.

use super::layout::{Layout, Slot};
use super::parse::{Direction, Flowchart, Line, Shape};
use super::Role;
use crate::width::visible_width;

const UP: u8 = 1;
const DOWN: u8 = 2;
const LEFT: u8 = 4;
const RIGHT: u8 = 8;

#[derive(Clone, Copy)]
struct Cell {
    ch: Option<char>,
    role: Role,
    lines: u8,
    style: Line,
}

const BLANK: Cell = Cell {
    ch: None,
    role: Role::Edge,
    lines: 0,
    style: Line::Solid,
};

struct Canvas {
    rows: Vec<Vec<Cell>>,
    direction: Direction,
}

impl Canvas {
    fn cell(&mut self, x: usize, y: usize) -> &mut Cell {
        if self.rows.len() <= y {
            self.rows.resize(y + 1, Vec::new());
        }
        let row = &mut self.rows[y];
        if row.len() <= x {
            row.resize(x + 1, BLANK);
        }
        &mut row[x]
    }

    /// Abstract (along the flow, across it) to (column, row).
    fn at(&self, main: usize, cross: usize) -> (usize, usize) {
        match self.direction {
            Direction::Down => (cross, main),
            Direction::Right => (main, cross),
        }
    }

    /// Direction bits for "toward the previous/next main" and "previous/next cross".
    fn bits(&self) -> [u8; 4] {
        match self.direction {
            Direction::Down => [UP, DOWN, LEFT, RIGHT],
            Direction::Right => [LEFT, RIGHT, UP, DOWN],
        }
    }

    fn line(&mut self, main: usize, cross: usize, bits: u8, style: Line) {
        let (x, y) = self.at(main, cross);
        let c = self.cell(x, y);
        c.lines |= bits;
        c.style = style;
    }

    fn put(&mut self, x: usize, y: usize, ch: char, role: Role) {
        let c = self.cell(x, y);
        c.ch = Some(ch);
        c.role = role;
    }

    fn text(&mut self, x: usize, y: usize, text: &str, role: Role) {
        let mut col = x;
        for ch in text.chars() {
            self.put(col, y, ch, role);
            // Wide characters take two cells; the second stays empty text.
            let w = visible_width(ch.encode_utf8(&mut [0u8; 4]));
            for k in 1..w {
                let c = self.cell(col + k, y);
                c.ch = Some('\0');
                c.role = role;
            }
            col += w.max(1);
        }
    }
}

/// Where a line leaves a box: the border cell (column, row) and the side's direction bit.
struct Attach {
    x: usize,
    y: usize,
    out: u8,
}

pub fn draw(chart: &Flowchart, layout: &Layout) -> Vec<Vec<(Role, String)>> {
    let mut canvas = Canvas {
        rows: Vec::new(),
        direction: chart.direction,
    };
    let [m_prev, m_next, c_prev, c_next] = canvas.bits();
    let mut attach: Vec<Attach> = Vec::new();
    let mut arrows: Vec<(usize, usize, char)> = Vec::new();
    let mut labels: Vec<(usize, usize, String)> = Vec::new();
    let (ahead, back_arrow) = match chart.direction {
        Direction::Down => ('▼', '◀'),
        Direction::Right => ('▶', '▲'),
    };
    for route in &layout.routes {
        let edge = &chart.edges[route.edge];
        for (k, pair) in route.slots.windows(2).enumerate() {
            let (a, b) = (&layout.slots[pair[0]], &layout.slots[pair[1]]);
            let (sc, tc) = (a.cross_mid() as usize, b.cross_mid() as usize);
            let exit = a.main + a.main_size;
            if a.node.is_some() {
                let (x, y) = canvas.at(exit - 1, sc);
                attach.push(Attach { x, y, out: m_next });
            } else {
                for m in a.main..exit {
                    canvas.line(m, sc, m_prev | m_next, edge.line);
                }
            }
            let (rank_start, rank_size) = layout.ranks[a.rank];
            let bus = rank_start + rank_size;
            let last = b.main.saturating_sub(1);
            for m in exit..bus {
                canvas.line(m, sc, m_prev | m_next, edge.line);
            }
            if sc == tc {
                canvas.line(bus, sc, m_prev | m_next, edge.line);
            } else {
                let (toward_t, toward_s) = if tc > sc { (c_next, c_prev) } else { (c_prev, c_next) };
                canvas.line(bus, sc, m_prev | toward_t, edge.line);
                for c in sc.min(tc) + 1..sc.max(tc) {
                    canvas.line(bus, c, c_prev | c_next, edge.line);
                }
                canvas.line(bus, tc, toward_s | m_next, edge.line);
            }
            for m in bus + 1..=last {
                canvas.line(m, tc, m_prev | m_next, edge.line);
            }
            if b.node.is_some() && edge.arrow {
                let (x, y) = canvas.at(last, tc);
                arrows.push((x, y, ahead));
            }
            // The label goes by the first stretch of the edge.
            if k == 0 {
                if let Some(text) = &edge.label {
                    let (x, y) = match chart.direction {
                        // After the arrowhead (or line) going into the next rank.
                        Direction::Down => (tc + 1, last),
                        // Above the stretch that runs into the target.
                        Direction::Right => (bus + 1, tc.saturating_sub(1)),
                    };
                    labels.push((x, y, text.clone()));
                }
            }
        }
    }
    // Edges that close a cycle go round the far side, each in a lane of its own.
    let far = layout
        .slots
        .iter()
        .map(|s| s.cross.max(0) as usize + s.cross_size)
        .max()
        .unwrap_or(0);
    for (i, &e) in layout.back.iter().enumerate() {
        let edge = &chart.edges[e];
        if edge.from == edge.to {
            continue;
        }
        let (s, t) = (slot_of(layout, edge.from), slot_of(layout, edge.to));
        let (ms, mt) = (s.main + s.main_size / 2, t.main + t.main_size / 2);
        let lane = far + 1 + 2 * i;
        let s_end = s.cross as usize + s.cross_size;
        let t_end = t.cross as usize + t.cross_size;
        let (x, y) = canvas.at(ms, s_end - 1);
        attach.push(Attach { x, y, out: c_next });
        for c in s_end..lane {
            canvas.line(ms, c, c_prev | c_next, edge.line);
        }
        let (toward_t, toward_s) = if mt < ms { (m_prev, m_next) } else { (m_next, m_prev) };
        canvas.line(ms, lane, c_prev | toward_t, edge.line);
        for m in ms.min(mt) + 1..ms.max(mt) {
            canvas.line(m, lane, m_prev | m_next, edge.line);
        }
        canvas.line(mt, lane, toward_s | c_prev, edge.line);
        for c in t_end + 1..lane {
            canvas.line(mt, c, c_prev | c_next, edge.line);
        }
        if edge.arrow {
            let (x, y) = canvas.at(mt, t_end);
            arrows.push((x, y, back_arrow));
        } else {
            canvas.line(mt, t_end, c_prev | c_next, edge.line);
        }
        if let Some(text) = &edge.label {
            let (x, y) = canvas.at(ms.min(mt) + (ms.max(mt) - ms.min(mt)) / 2, lane + 1);
            labels.push((x, y, text.clone()));
        }
    }
    for slot in &layout.slots {
        if let Some(node) = slot.node {
            draw_box(
                &mut canvas,
                slot,
                &chart.nodes[node].label,
                chart.nodes[node].shape,
                &attach,
            );
        }
    }
    for (x, y, ch) in arrows {
        canvas.put(x, y, ch, Role::Edge);
    }
    for (x, y, text) in labels {
        canvas.text(x, y, &text, Role::EdgeLabel);
    }
    finish(canvas)
}

fn slot_of(layout: &Layout, node: usize) -> &Slot {
    &layout.slots[node]
}

fn draw_box(canvas: &mut Canvas, slot: &Slot, label: &str, shape: Shape, attach: &[Attach]) {
    let (x0, y0) = canvas.at(slot.main, slot.cross as usize);
    let (w, h) = match canvas.direction {
        Direction::Down => (slot.cross_size, slot.main_size),
        Direction::Right => (slot.main_size, slot.cross_size),
    };
    let [tl, tr, bl, br, hz, vt] = match shape {
        Shape::Box => ['┌', '┐', '└', '┘', '─', '│'],
        Shape::Round | Shape::Circle => ['╭', '╮', '╰', '╯', '─', '│'],
        Shape::Decision => ['╔', '╗', '╚', '╝', '═', '║'],
    };
    let double = shape == Shape::Decision;
    let tee = |out: u8| match (out, double) {
        (DOWN, false) => '┬',
        (DOWN, true) => '╤',
        (UP, false) => '┴',
        (UP, true) => '╧',
        (RIGHT, false) => '├',
        (RIGHT, true) => '╟',
        (_, false) => '┤',
        (_, true) => '╢',
    };
    let (x1, y1) = (x0 + w - 1, y0 + h - 1);
    for x in x0..=x1 {
        for y in y0..=y1 {
            let ch = if (x, y) == (x0, y0) {
                tl
            } else if (x, y) == (x1, y0) {
                tr
            } else if (x, y) == (x0, y1) {
                bl
            } else if (x, y) == (x1, y1) {
                br
            } else if y == y0 || y == y1 {
                hz
            } else if x == x0 || x == x1 {
                vt
            } else {
                ' '
            };
            let ch = attach.iter().find(|a| a.x == x && a.y == y).map_or(ch, |a| tee(a.out));
            canvas.put(x, y, ch, Role::Border);
        }
    }
    canvas.text(x0 + 2, y0 + h / 2, label, Role::Text);
}

fn line_glyph(bits: u8, style: Line) -> char {
    let vertical = bits & (UP | DOWN) != 0 && bits & (LEFT | RIGHT) == 0;
    let horizontal = bits & (LEFT | RIGHT) != 0 && bits & (UP | DOWN) == 0;
    match (vertical, horizontal, style) {
        (true, _, Line::Solid) => '│',
        (true, _, Line::Dotted) => '╎',
        (true, _, Line::Thick) => '┃',
        (_, true, Line::Solid) => '─',
        (_, true, Line::Dotted) => '╌',
        (_, true, Line::Thick) => '━',
        _ => match bits {
            b if b == DOWN | RIGHT => '┌',
            b if b == DOWN | LEFT => '┐',
            b if b == UP | RIGHT => '└',
            b if b == UP | LEFT => '┘',
            b if b == UP | DOWN | RIGHT => '├',
            b if b == UP | DOWN | LEFT => '┤',
            b if b == DOWN | LEFT | RIGHT => '┬',
            b if b == UP | LEFT | RIGHT => '┴',
            _ => '┼',
        },
    }
}

/// Rows of (role, text) runs, trailing blanks left off.
fn finish(canvas: Canvas) -> Vec<Vec<(Role, String)>> {
    canvas
        .rows
        .into_iter()
        .map(|row| {
            let mut runs: Vec<(Role, String)> = Vec::new();
            let end = row
                .iter()
                .rposition(|c| c.ch.is_some() || c.lines != 0)
                .map_or(0, |i| i + 1);
            for c in &row[..end] {
                let (role, ch) = match c.ch {
                    Some('\0') => continue,
                    Some(ch) => (c.role, ch),
                    None if c.lines != 0 => (Role::Edge, line_glyph(c.lines, c.style)),
                    None => (Role::Edge, ' '),
                };
                match runs.last_mut() {
                    Some((r, text)) if *r == role => text.push(ch),
                    _ => runs.push((role, ch.to_string())),
                }
            }
            runs
        })
        .collect()
}
