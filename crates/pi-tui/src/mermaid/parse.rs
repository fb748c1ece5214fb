//! The Mermaid flowchart subset: `graph|flowchart TD|TB|BT|LR|RL`, nodes with labels and
//! shapes (`A[box]`, `A(round)`, `A{decision}`, `A((circle))`, …), and edges (`-->`, `---`,
//! `-.->`, `==>`, with `|label|` or `-- label -->` labels, chained `A --> B --> C`, and `&`
//! lists). Styling and interaction lines are skipped; `subgraph` groups are flattened.

use std::collections::HashMap;

/// How a node is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Box,
    Round,
    Decision,
    Circle,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub id: String,
    pub label: String,
    pub shape: Shape,
}

/// How an edge's line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    Solid,
    Dotted,
    Thick,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub label: Option<String>,
    pub line: Line,
    pub arrow: bool,
}

/// Which way ranks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Down,
    Right,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Flowchart {
    pub direction: Direction,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

/// Why a diagram was not drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Not a flowchart (another diagram type, or not Mermaid).
    Unsupported,
    /// A flowchart line that could not be read (1-based line number).
    Line(usize, String),
}

/// Read a flowchart.
pub fn parse(src: &str) -> Result<Flowchart, ParseError> {
    let mut lines = src
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, strip_comment(l).trim()))
        .filter(|(_, l)| !l.is_empty());
    let (_, header) = lines.next().ok_or(ParseError::Unsupported)?;
    let mut words = header.trim_end_matches(';').split_whitespace();
    if !matches!(words.next(), Some("graph" | "flowchart")) {
        return Err(ParseError::Unsupported);
    }
    let direction = match words.next().map(str::to_ascii_uppercase).as_deref() {
        None | Some("TD" | "TB" | "BT") => Direction::Down,
        Some("LR" | "RL") => Direction::Right,
        Some(_) => return Err(ParseError::Unsupported),
    };
    let mut chart = Builder {
        nodes: Vec::new(),
        index: HashMap::new(),
        edges: Vec::new(),
    };
    for (n, line) in lines {
        for statement in line.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            chart.statement(statement).map_err(|why| ParseError::Line(n, why))?;
        }
    }
    Ok(Flowchart {
        direction,
        nodes: chart.nodes,
        edges: chart.edges,
    })
}

fn strip_comment(line: &str) -> &str {
    match line.find("%%") {
        Some(at) => &line[..at],
        None => line,
    }
}

struct Builder {
    nodes: Vec<Node>,
    index: HashMap<String, usize>,
    edges: Vec<Edge>,
}

/// Statements that change only looks or behaviour, which a text diagram leaves out.
const SKIPPED: [&str; 7] = [
    "classDef",
    "class",
    "style",
    "linkStyle",
    "click",
    "direction",
    "accTitle",
];

impl Builder {
    fn statement(&mut self, s: &str) -> Result<(), String> {
        let first = s.split_whitespace().next().unwrap_or("");
        if SKIPPED.contains(&first) || first == "end" || first.starts_with("accDescr") {
            return Ok(());
        }
        if first == "subgraph" {
            return Ok(());
        }
        let mut rest = s;
        let mut sources = self.node_list(&mut rest)?;
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                return Ok(());
            }
            let (line, arrow, label) = link(&mut rest).ok_or_else(|| format!("cannot read `{}`", rest.trim()))?;
            let targets = self.node_list(&mut rest)?;
            for &from in &sources {
                for &to in &targets {
                    self.edges.push(Edge {
                        from,
                        to,
                        label: label.clone(),
                        line,
                        arrow,
                    });
                }
            }
            sources = targets;
        }
    }

    /// `A`, `A[label]`, `A & B(label)`: the nodes, created or updated.
    fn node_list(&mut self, rest: &mut &str) -> Result<Vec<usize>, String> {
        let mut out = vec![self.node(rest)?];
        loop {
            let t = rest.trim_start();
            match t.strip_prefix('&') {
                Some(after) => {
                    *rest = after;
                    out.push(self.node(rest)?);
                }
                None => return Ok(out),
            }
        }
    }

    fn node(&mut self, rest: &mut &str) -> Result<usize, String> {
        let t = rest.trim_start();
        let id_len = t
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$' | '@')))
            .map_or(t.len(), |(i, _)| i);
        // An id ends before a link that starts with `-` too (`A-->B`), but `a-b` is an id.
        let id_len = t[..id_len].find("--").map_or(id_len, |at| at.min(id_len));
        if id_len == 0 {
            return Err(format!("expected a node at `{}`", t));
        }
        let id = &t[..id_len];
        let mut after = &t[id_len..];
        let shape = shape_of(&mut after)?;
        *rest = after;
        let at = match self.index.get(id) {
            Some(&at) => at,
            None => {
                self.nodes.push(Node {
                    id: id.to_string(),
                    label: id.to_string(),
                    shape: Shape::Box,
                });
                self.index.insert(id.to_string(), self.nodes.len() - 1);
                self.nodes.len() - 1
            }
        };
        if let Some((label, shape)) = shape {
            self.nodes[at].label = label;
            self.nodes[at].shape = shape;
        }
        Ok(at)
    }
}

/// The shape brackets right after an id, and the label inside them.
fn shape_of(rest: &mut &str) -> Result<Option<(String, Shape)>, String> {
    const FORMS: [(&str, &str, Shape); 10] = [
        ("(((", ")))", Shape::Circle),
        ("((", "))", Shape::Circle),
        ("([", "])", Shape::Round),
        ("[(", ")]", Shape::Round),
        ("[[", "]]", Shape::Box),
        ("{{", "}}", Shape::Decision),
        ("(", ")", Shape::Round),
        ("[", "]", Shape::Box),
        ("{", "}", Shape::Decision),
        (">", "]", Shape::Box),
    ];
    for (open, close, shape) in FORMS {
        let Some(inner) = rest.strip_prefix(open) else {
            continue;
        };
        let end = inner.find(close).ok_or_else(|| format!("`{open}` without `{close}`"))?;
        let label = clean_label(&inner[..end]);
        *rest = &inner[end + close.len()..];
        return Ok(Some((label, shape)));
    }
    Ok(None)
}

/// A label without its quotes, with `<br>` as a space.
fn clean_label(raw: &str) -> String {
    let t = raw.trim();
    let t = t.strip_prefix('"').and_then(|x| x.strip_suffix('"')).unwrap_or(t);
    t.replace("<br>", " ").replace("<br/>", " ").replace("<br />", " ")
}

/// A link (`-->`, `---`, `-.->`, `==>`, `--o`…) with its label, if any.
fn link(rest: &mut &str) -> Option<(Line, bool, Option<String>)> {
    let t = rest.trim_start();
    // `A -- text --> B` / `A -. text .-> B` / `A == text ==> B`
    for (open, line) in [("--", Line::Solid), ("-.", Line::Dotted), ("==", Line::Thick)] {
        if let Some(after) = t.strip_prefix(open) {
            if after.starts_with(' ') && !after.trim_start().starts_with(['>', '-', '.', '=']) {
                let (text, tail) = labelled_tail(after, line)?;
                *rest = tail;
                return Some((line, true, Some(text)));
            }
        }
    }
    let body_len = t
        .char_indices()
        .find(|(_, c)| !matches!(c, '-' | '.' | '=' | '>' | '<' | 'o' | 'x'))
        .map_or(t.len(), |(i, _)| i);
    let mut body = &t[..body_len];
    // `o` and `x` only end a link (`--o`); as the first letters of the next id they do not.
    while body.len() > 3 && (body.ends_with('o') || body.ends_with('x')) && !body[..body.len() - 1].ends_with('-') {
        body = &body[..body.len() - 1];
    }
    if body.len() < 3 {
        return None;
    }
    let line = if body.contains('.') {
        Line::Dotted
    } else if body.contains('=') {
        Line::Thick
    } else if body.chars().all(|c| matches!(c, '-' | '>' | '<' | 'o' | 'x')) {
        Line::Solid
    } else {
        return None;
    };
    let arrow = body.ends_with('>') || body.ends_with('o') || body.ends_with('x');
    let mut tail = &t[body.len()..];
    let mut label = None;
    if let Some(after) = tail.trim_start().strip_prefix('|') {
        let end = after.find('|')?;
        label = Some(clean_label(&after[..end]));
        tail = &after[end + 1..];
    }
    *rest = tail;
    Some((line, arrow, label))
}

/// After `-- `: the label text up to the closing link (`-->`, `---`), and what follows it.
fn labelled_tail(after: &str, line: Line) -> Option<(String, &str)> {
    let closers: &[&str] = match line {
        Line::Solid => &["-->", "---"],
        Line::Dotted => &[".->", ".-"],
        Line::Thick => &["==>", "==="],
    };
    let (at, closer) = closers
        .iter()
        .filter_map(|c| after.find(c).map(|at| (at, *c)))
        .min_by_key(|(at, _)| *at)?;
    let text = clean_label(&after[..at]);
    let mut tail = &after[at + closer.len()..];
    // Longer closers (`--->`) keep going.
    tail = tail.trim_start_matches(['-', '.', '=', '>']);
    Some((text, tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(c: &Flowchart) -> Vec<(String, String, Option<String>)> {
        c.edges
            .iter()
            .map(|e| (c.nodes[e.from].id.clone(), c.nodes[e.to].id.clone(), e.label.clone()))
            .collect()
    }

    #[test]
    fn nodes_edges_labels_and_shapes_are_read() {
        let c = parse("graph TD\n  A[Start] --> B{Is it?}\n  B -->|Yes| C[OK]\n  B -- No --> D(Not OK)\n  C & D --> E((End)) %% done")
            .expect("parsed");
        assert_eq!(c.direction, Direction::Down);
        let shapes: Vec<(&str, &str, Shape)> = c
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.label.as_str(), n.shape))
            .collect();
        assert_eq!(
            shapes,
            [
                ("A", "Start", Shape::Box),
                ("B", "Is it?", Shape::Decision),
                ("C", "OK", Shape::Box),
                ("D", "Not OK", Shape::Round),
                ("E", "End", Shape::Circle)
            ]
        );
        assert_eq!(
            labels(&c),
            [
                ("A".into(), "B".into(), None),
                ("B".into(), "C".into(), Some("Yes".into())),
                ("B".into(), "D".into(), Some("No".into())),
                ("C".into(), "E".into(), None),
                ("D".into(), "E".into(), None)
            ]
        );
    }

    #[test]
    fn link_kinds_chains_and_skipped_lines() {
        let c = parse(
            "flowchart LR;\nA-->B-.->C==>D---E\nclassDef x fill:#f00\nstyle A fill:#fff\nsubgraph one\nF --> G\nend",
        )
        .expect("parsed");
        assert_eq!(c.direction, Direction::Right);
        let kinds: Vec<(Line, bool)> = c.edges.iter().map(|e| (e.line, e.arrow)).collect();
        assert_eq!(
            kinds,
            [
                (Line::Solid, true),
                (Line::Dotted, true),
                (Line::Thick, true),
                (Line::Solid, false),
                (Line::Solid, true)
            ]
        );
        assert_eq!(c.nodes.len(), 7);
    }

    #[test]
    fn other_diagrams_and_bad_lines_are_refused() {
        assert_eq!(parse("sequenceDiagram\nA->>B: hi"), Err(ParseError::Unsupported));
        assert_eq!(parse(""), Err(ParseError::Unsupported));
        assert!(matches!(parse("graph TD\nA[open --> B"), Err(ParseError::Line(2, _))));
        assert!(matches!(parse("graph TD\nA --> "), Err(ParseError::Line(2, _))));
    }
}
