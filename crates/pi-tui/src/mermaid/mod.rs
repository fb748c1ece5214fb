//! Mermaid flowcharts and sequence diagrams as box-drawing text for the terminal: [`render`]
//! reads a flowchart (`parse`), places its nodes (`layout`) and draws it (`draw`); a
//! `sequenceDiagram` goes to `sequence` (drawn on `canvas`, read through `statements`). Other
//! diagram types, and flowcharts the subset cannot read, are not drawn: the caller shows the
//! source instead.

mod canvas;
mod draw;
mod layout;
mod parse;
mod sequence;
mod statements;

use crate::width::visible_width;

/// What a piece of a drawn diagram is, for colouring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A node's outline.
    Border,
    /// A node's label.
    Text,
    /// Edge lines and arrowheads.
    Edge,
    /// An edge's label.
    EdgeLabel,
    /// The diagram's title (from its frontmatter).
    Title,
}

/// A drawn diagram: rows of (role, text) runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagram {
    pub rows: Vec<Vec<(Role, String)>>,
    /// What was left out of the drawing (statements that could not be read, a size cap).
    /// pi 1.6 shows the source instead, with the first of these, once a reply is complete.
    pub warnings: Vec<String>,
}

/// Why a diagram was not drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotDrawn {
    /// Another diagram type, or nothing to draw (no participants, too large): shown as code.
    Unsupported,
    /// A flowchart that could not be read, with the reason.
    Invalid(String),
}

impl Diagram {
    /// The widest row, in columns.
    pub fn width(&self) -> usize {
        self.plain().iter().map(|l| visible_width(l)).max().unwrap_or(0)
    }

    /// The rows as plain text.
    pub fn plain(&self) -> Vec<String> {
        self.styled(|_, t| t.to_string())
    }

    /// The rows with each run passed through `paint`.
    pub fn styled(&self, paint: impl Fn(Role, &str) -> String) -> Vec<String> {
        self.rows
            .iter()
            .map(|row| row.iter().map(|(role, text)| paint(*role, text)).collect())
            .collect()
    }
}

/// Draw a Mermaid flowchart (`graph` / `flowchart`) or sequence diagram.
pub fn render(src: &str) -> Result<Diagram, NotDrawn> {
    let src = &statements::strip_controls(src);
    let mut diagram = if statements::header_kind(src).as_deref() == Some("sequencediagram") {
        sequence::render(src)?
    } else {
        flowchart(&statements::body(src))?
    };
    // A frontmatter title goes centred above the drawing, a blank row under it, as in pi 1.6.
    if let Some(title) = statements::title(src) {
        let tw = visible_width(&title);
        let pad = diagram.width().max(tw).saturating_sub(tw) / 2;
        let mut row = Vec::new();
        if pad > 0 {
            row.push((Role::Text, " ".repeat(pad)));
        }
        row.push((Role::Title, title));
        diagram.rows.splice(0..0, [row, Vec::new()]);
    }
    Ok(diagram)
}

/// A flowchart, its source without frontmatter.
fn flowchart(src: &str) -> Result<Diagram, NotDrawn> {
    let chart = parse::parse(src).map_err(|e| match e {
        parse::ParseError::Unsupported => NotDrawn::Unsupported,
        parse::ParseError::Line(n, why) => NotDrawn::Invalid(format!("line {n}: {why}")),
    })?;
    if chart.nodes.is_empty() {
        return Err(NotDrawn::Invalid("no nodes".to_string()));
    }
    let placed = layout::layout(&chart);
    Ok(Diagram {
        rows: draw::draw(&chart, &placed),
        warnings: Vec::new(),
    })
}

/// Whether a code block's language names Mermaid (its first word, any case).
pub fn is_mermaid(lang: &str) -> bool {
    lang.split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("mermaid"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drawn(src: &str) -> String {
        let d = render(src).expect("drawn");
        d.plain().iter().map(|l| l.trim_end()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn a_top_down_decision_with_labels() {
        let art = drawn("graph TD\n  A[Start] --> B{Is it?}\n  B -->|Yes| C[OK]\n  B -->|No| D[Not OK]\n  C --> E((End))\n  D --> E");
        println!("{art}");
        for text in [
            "│ Start │",
            "║ Is it? ║",
            "│ OK │",
            "│ Not OK │",
            "│ End │",
            "▼Yes",
            "▼No",
        ] {
            assert!(art.contains(text), "{text:?} in\n{art}");
        }
        // Start is above the decision, both ends meet at End.
        let row = |t: &str| art.lines().position(|l| l.contains(t)).unwrap_or(usize::MAX);
        assert!(row("Start") < row("Is it?") && row("Is it?") < row("OK") && row("OK") < row("End"));
        assert_eq!(row("│ OK"), row("Not OK"), "one rank:\n{art}");
        // OK and Not OK join into one arrow into End.
        assert_eq!(art.matches('▼').count(), 4, "{art}");
        assert!(!art.contains("└┐"), "Start sits over the decision:\n{art}");
        assert!(art.contains('╤'), "the decision's exit:\n{art}");
        assert!(art.contains('╭') && art.contains('╯'), "End is round:\n{art}");
    }

    #[test]
    fn a_straight_chain_stays_in_one_column() {
        let art = drawn("graph TD\nA --> B\nB --> C");
        let cols: Vec<usize> = art
            .lines()
            .filter(|l| l.contains('▼'))
            .map(|l| l.find('▼').unwrap_or(0))
            .collect();
        assert_eq!(cols.len(), 2);
        assert_eq!(cols[0], cols[1], "\n{art}");
        assert_eq!(art.lines().count(), 13, "3 boxes, 2 gaps of 2\n{art}");
    }

    #[test]
    fn left_to_right_with_an_edge_label_and_a_dotted_edge() {
        let art = drawn("graph LR\n  A[Client] -->|request| B(Server)\n  B --> C[(Database)]\n  B -.-> D[Cache]");
        println!("{art}");
        for text in ["│ Client ├", "▶│ Server", "request", "│ Database │", "│ Cache │", "╌"] {
            assert!(art.contains(text), "{text:?} in\n{art}");
        }
        let line = art.lines().find(|l| l.contains("Client")).unwrap_or("");
        assert!(line.contains("Server"), "Client and Server on one row:\n{art}");
    }

    #[test]
    fn a_cycle_goes_round_the_side() {
        let art = drawn("graph TD\nA --> B\nB --> C\nC --> A");
        println!("{art}");
        assert!(art.contains('◀'), "{art}");
        assert_eq!(art.matches('▼').count(), 2, "{art}");
    }

    #[test]
    fn a_long_edge_passes_beside_the_middle_rank() {
        let art = drawn("graph TD\nA --> B\nB --> C\nA --> C");
        println!("{art}");
        // The long edge passes beside B and joins B's into C.
        assert_eq!(art.matches('▼').count(), 2, "{art}");
        // No line runs through B's box.
        let b = art.lines().find(|l| l.contains("│ B │")).unwrap_or("");
        assert!(!b.contains("│ B │─") && !b.contains("─│ B"), "{art}");
    }

    #[test]
    fn a_frontmatter_title_is_centred_above_the_drawing() {
        let d = render("---\ntitle: Login flow\n---\nsequenceDiagram\n  A->>B: hi").expect("drawn");
        // pi 1.6 (lovely-mermaid 0.3.3) for the same source.
        assert_eq!(d.plain()[..4], [" Login flow", "", "┌───┐  ┌───┐", "│ A │  │ B │"]);
        assert_eq!(d.rows[0][1], (Role::Title, "Login flow".to_string()));
        let d = render("---\ntitle: A title wider than the chart\n---\ngraph TD\nA-->B").expect("drawn");
        assert_eq!(d.plain()[0], "A title wider than the chart");
        assert_eq!(d.width(), 28);
    }

    #[test]
    fn other_diagrams_are_not_drawn() {
        assert_eq!(render("classDiagram\nA <|-- B"), Err(NotDrawn::Unsupported));
        // A sequence diagram without a participant has nothing to draw.
        assert_eq!(render("sequenceDiagram\n%% empty"), Err(NotDrawn::Unsupported));
        assert!(matches!(render("graph TD\nA[oops --> B"), Err(NotDrawn::Invalid(_))));
        assert!(is_mermaid("mermaid") && is_mermaid("Mermaid title") && !is_mermaid("rust"));
    }

    /// pi 1.6's drawing of these diagrams (lovely-mermaid 0.3.3), line for line.
    #[test]
    fn sequence_diagrams_as_pi_draws_them() {
        let art = drawn(
            "sequenceDiagram\n    participant Alice\n    participant Bob\n    Alice->>Bob: Hello Bob\n    Bob-->>Alice: Hi Alice",
        );
        let expected = [
            "┌───────┐   ┌─────┐",
            "│ Alice │   │ Bob │",
            "└───┬───┘   └──┬──┘",
            "    │          │",
            "    │Hello Bob │",
            "    ├─────────▶│",
            "    │          │",
            "    │ Hi Alice │",
            "    │◄╌╌╌╌╌╌╌╌╌┤",
            "    │          │",
            "┌───┴───┐   ┌──┴──┐",
            "│ Alice │   │ Bob │",
            "└───────┘   └─────┘",
        ];
        assert_eq!(art, expected.join("\n"));

        let art = drawn(
            "sequenceDiagram\n    participant C as Client\n    participant S as Server\n    participant D as DB\n    C->>S: GET /items\n    S->>D: query\n    D-->>S: rows\n    S-->>C: 200 OK\n    C->>D: x",
        );
        let expected = [
            "┌────────┐  ┌────────┐ ┌────┐",
            "│ Client │  │ Server │ │ DB │",
            "└────┬───┘  └────┬───┘ └──┬─┘",
            "     │           │        │",
            "     │GET /items │        │",
            "     ├──────────▶│        │",
            "     │           │        │",
            "     │           │ query  │",
            "     │           ├───────▶│",
            "     │           │        │",
            "     │           │  rows  │",
            "     │           │◄╌╌╌╌╌╌╌┤",
            "     │           │        │",
            "     │  200 OK   │        │",
            "     │◄╌╌╌╌╌╌╌╌╌╌┤        │",
            "     │           │        │",
            "     │         x │        │",
            "     ├───────────────────▶│",
            "     │           │        │",
            "┌────┴───┐  ┌────┴───┐ ┌──┴─┐",
            "│ Client │  │ Server │ │ DB │",
            "└────────┘  └────────┘ └────┘",
        ];
        assert_eq!(art, expected.join("\n"));
        // Without labels, the gap between boxes depends on their widths' parity, as in 1.6.
        let art = drawn("sequenceDiagram\n  Alice->>Bob: x\n  Bob->>Carol: y\n  Server->>DB: z");
        assert!(
            art.starts_with("┌───────┐  ┌─────┐  ┌───────┐ ┌────────┐ ┌────┐\n"),
            "{art}"
        );
        // Roles: boxes are borders, names and labels text, lifelines and arrows edges.
        let d = render("sequenceDiagram\nA->>B: go").expect("drawn");
        assert!(d.rows[1].contains(&(Role::Text, "A ".to_string())), "{:?}", d.rows[1]);
        assert!(
            d.rows[5].iter().any(|(r, t)| *r == Role::Edge && t.contains('▶')),
            "{:?}",
            d.rows[5]
        );
    }
}
