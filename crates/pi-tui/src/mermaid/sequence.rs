//! Mermaid `sequenceDiagram`s as text, in the basic subset: participants (declared, with
//! `as` aliases, or met in messages) drawn as boxes above and below their lifelines, and
//! messages between two of them as arrows with their labels centred above. Anything else
//! (notes, loops, activations, messages to oneself, ...) makes the diagram unreadable here, so
//! the caller shows its source.

use super::{Diagram, NotDrawn, Role};

struct Message {
    from: usize,
    to: usize,
    dashed: bool,
    label: String,
}

struct Chart {
    /// (id, shown name) in order of appearance.
    participants: Vec<(String, String)>,
    messages: Vec<Message>,
}

/// The arrows of the subset, longest first so `-->>` is not read as `-->`.
const ARROWS: [&str; 8] = ["-->>", "->>", "--x", "-x", "--)", "-)", "-->", "->"];

fn invalid(n: usize, why: &str) -> NotDrawn {
    NotDrawn::Invalid(format!("line {n}: {why}"))
}

fn participant(chart: &mut Chart, id: &str, name: Option<&str>) -> usize {
    if let Some(i) = chart.participants.iter().position(|(p, _)| p == id) {
        if let Some(name) = name {
            chart.participants[i].1 = name.to_string();
        }
        return i;
    }
    chart
        .participants
        .push((id.to_string(), name.unwrap_or(id).to_string()));
    chart.participants.len() - 1
}

fn parse(src: &str) -> Result<Chart, NotDrawn> {
    let mut chart = Chart {
        participants: Vec::new(),
        messages: Vec::new(),
    };
    let mut lines = src.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    // The header was checked by the caller.
    lines.find(|(_, l)| !l.is_empty() && !l.starts_with("%%"));
    for (n, line) in lines {
        if line.is_empty() || line.starts_with("%%") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("participant ") {
            let (id, name) = match rest.split_once(" as ") {
                Some((id, name)) => (id.trim(), Some(name.trim())),
                None => (rest.trim(), None),
            };
            if id.is_empty() {
                return Err(invalid(n, "a participant without a name"));
            }
            participant(&mut chart, id, name);
            continue;
        }
        let Some((at, arrow)) = ARROWS
            .iter()
            .filter_map(|a| line.find(a).map(|at| (at, *a)))
            .min_by_key(|(at, a)| (*at, usize::MAX - a.len()))
        else {
            return Err(invalid(n, "not a message or participant"));
        };
        let from = line[..at].trim();
        let rest = &line[at + arrow.len()..];
        let (to, label) = match rest.split_once(':') {
            Some((to, label)) => (to.trim(), label.trim()),
            None => (rest.trim(), ""),
        };
        if from.is_empty() || to.is_empty() || to.contains(char::is_whitespace) || from.contains(char::is_whitespace) {
            return Err(invalid(n, "not a message or participant"));
        }
        if from == to {
            return Err(invalid(n, "messages to oneself are not drawn"));
        }
        let from = participant(&mut chart, from, None);
        let to = participant(&mut chart, to, None);
        chart.messages.push(Message {
            from,
            to,
            dashed: arrow.starts_with("--"),
            label: label.to_string(),
        });
    }
    if chart.participants.is_empty() {
        return Err(NotDrawn::Invalid("no participants".to_string()));
    }
    Ok(chart)
}

/// A row being drawn: one cell a column, each with its role.
struct Row(Vec<(Role, char)>);

impl Row {
    fn put(&mut self, col: usize, role: Role, c: char) {
        if self.0.len() <= col {
            self.0.resize(col + 1, (Role::Text, ' '));
        }
        self.0[col] = (role, c);
    }

    fn text(&mut self, col: usize, role: Role, s: &str) {
        for (i, c) in s.chars().enumerate() {
            self.put(col + i, role, c);
        }
    }

    /// Runs of one role; blanks join the run before them.
    fn runs(self) -> Vec<(Role, String)> {
        let mut out: Vec<(Role, String)> = Vec::new();
        for (role, c) in self.0 {
            match out.last_mut() {
                Some((r, s)) if *r == role || c == ' ' => s.push(c),
                _ => out.push((role, c.to_string())),
            }
        }
        out
    }
}

fn width(s: &str) -> usize {
    crate::width::visible_width(s)
}

/// Draw a `sequenceDiagram`.
pub fn render(src: &str) -> Result<Diagram, NotDrawn> {
    let chart = parse(src)?;
    let n = chart.participants.len();
    let box_w: Vec<usize> = chart.participants.iter().map(|(_, name)| width(name) + 4).collect();
    // Lifeline columns: neighbours at least half of each box (rounded up) and a column apart,
    // and far enough apart for the labels of the messages between them (a column clear on
    // each side), as pi 1.6 spaces them.
    let mut centre = vec![box_w[0] / 2; n];
    for i in 1..n {
        let boxes = box_w[i - 1].div_ceil(2) + 1 + box_w[i].div_ceil(2);
        let labels = chart
            .messages
            .iter()
            .filter(|m| m.from.min(m.to) == i - 1 && m.from.max(m.to) == i)
            .map(|m| width(&m.label) + 2)
            .max()
            .unwrap_or(0);
        centre[i] = centre[i - 1] + boxes.max(labels);
    }
    // A message across several lifelines widens the last gap it spans when its label needs it.
    for m in &chart.messages {
        let (lo, hi) = (m.from.min(m.to), m.from.max(m.to));
        let need = width(&m.label) + 2;
        let have = centre[hi] - centre[lo];
        if need > have {
            for c in &mut centre[hi..] {
                *c += need - have;
            }
        }
    }
    let mut rows = Vec::new();
    let boxes = |top: bool| -> Vec<Row> {
        let mut r = [Row(Vec::new()), Row(Vec::new()), Row(Vec::new())];
        for (i, (_, name)) in chart.participants.iter().enumerate() {
            let (w, x) = (box_w[i], centre[i] - box_w[i] / 2);
            let rule = |l: char, mid: Option<char>, rt: char| -> String {
                (0..w)
                    .map(|c| match c {
                        0 => l,
                        c if c == w - 1 => rt,
                        c if Some(c) == mid.map(|_| w / 2) => mid.unwrap_or('─'),
                        _ => '─',
                    })
                    .collect()
            };
            let (upper, lower) = if top {
                (rule('┌', None, '┐'), rule('└', Some('┬'), '┘'))
            } else {
                (rule('┌', Some('┴'), '┐'), rule('└', None, '┘'))
            };
            r[0].text(x, Role::Border, &upper);
            r[1].put(x, Role::Border, '│');
            r[1].text(x + 2, Role::Text, name);
            r[1].put(x + w - 1, Role::Border, '│');
            r[2].text(x, Role::Border, &lower);
        }
        r.into()
    };
    let lifelines = || {
        let mut row = Row(Vec::new());
        for &c in &centre {
            row.put(c, Role::Edge, '│');
        }
        row
    };
    rows.extend(boxes(true));
    rows.push(lifelines());
    for m in &chart.messages {
        let (lo, hi) = (centre[m.from.min(m.to)], centre[m.from.max(m.to)]);
        let mut label = lifelines();
        let inner = hi - lo - 1;
        label.text(lo + 1 + inner.saturating_sub(width(&m.label)) / 2, Role::Text, &m.label);
        rows.push(label);
        let mut arrow = lifelines();
        let line = if m.dashed { '╌' } else { '─' };
        for c in lo + 1..hi {
            arrow.put(c, Role::Edge, line);
        }
        if m.from < m.to {
            arrow.put(lo, Role::Edge, '├');
            arrow.put(hi - 1, Role::Edge, '▶');
        } else {
            arrow.put(hi, Role::Edge, '┤');
            arrow.put(lo + 1, Role::Edge, '◄');
        }
        rows.push(arrow);
        rows.push(lifelines());
    }
    rows.extend(boxes(false));
    Ok(Diagram {
        rows: rows.into_iter().map(Row::runs).collect(),
    })
}
