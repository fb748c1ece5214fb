//! Sequence diagrams drawn cell for cell as pi 1.6 draws them. The expected grids are what
//! pi 1.6.0's renderer (lovely-mermaid 0.3.3, in its node_modules) printed for the same
//! sources: `node -e 'import("<pi>/node_modules/lovely-mermaid/dist/index.js")
//!   .then(m => console.log(m.render(SRC).plain.join("\n")))'`.

use super::super::{render, Role};

fn check(src: &str, expected: &[&str], warnings: &[&str]) {
    let d = render(src).expect("drawn");
    let got = d.plain();
    assert_eq!(got.join("\n"), expected.join("\n"), "\n{}", got.join("\n"));
    assert_eq!(d.warnings, warnings);
    assert_eq!(d.width(), expected.iter().map(|l| l.chars().count()).max().unwrap_or(0));
}

#[test]
fn roles_of_the_parts() {
    let d = render("sequenceDiagram\nA->>+B: go\nNote over A: n\nloop again\nB-->>A: x\nend").expect("drawn");
    let role_of = |row: usize, text: &str| d.rows[row].iter().find(|(_, t)| t.contains(text)).map(|(r, _)| *r);
    assert_eq!(role_of(0, "┌"), Some(Role::Border));
    assert_eq!(role_of(1, "A"), Some(Role::Text));
    assert_eq!(role_of(4, "go"), Some(Role::Text));
    assert_eq!(role_of(5, "▶"), Some(Role::Edge));
    assert_eq!(role_of(8, "n"), Some(Role::Text), "{:?}", d.rows[8]);
    assert_eq!(role_of(11, "loop again"), Some(Role::EdgeLabel), "{:?}", d.rows[11]);
    assert_eq!(role_of(11, "──"), Some(Role::Edge));
}

#[test]
fn a_statement_that_cannot_be_read_is_left_out_and_named() {
    let d = render("sequenceDiagram\n  A->>B: hi\n  what is this\n  Note A\n  participant").expect("drawn");
    assert_eq!(
        d.warnings,
        [
            "dropped, unreadable statement: \"what is this\"",
            "dropped, unreadable statement: \"Note A\"",
            "dropped, unreadable statement: \"participant\"",
        ]
    );
    assert!(d.plain().iter().any(|l| l.contains("├─────▶│")));
}

#[test]
fn a_diagram_past_the_item_cap_is_cut_with_a_warning() {
    let src = format!("sequenceDiagram\n{}", "A->>B\n".repeat(600));
    let d = render(&src).expect("drawn");
    assert_eq!(d.warnings, ["diagram truncated: item cap (512) reached"]);
    assert_eq!(d.plain().len(), 3 + 1 + 512 * 2 + 3);
}

#[test]
fn arrows_inside_names_and_odd_input_do_not_panic() {
    let d = render("sequenceDiagram\npre-x->>B: a\nB--)pre-x: b").expect("drawn");
    assert!(d.plain()[1].contains("│ pre-x │"), "{:?}", d.plain());
    for src in [
        "sequenceDiagram\n->>",
        "sequenceDiagram\nA->>: x",
        "sequenceDiagram\nNote over : x",
        "sequenceDiagram\nend\nelse\nactivate Z",
    ] {
        let _ = render(src);
    }
}

#[test]
fn notes_left_right_and_over() {
    check(
        "sequenceDiagram\n    participant Alice\n    participant Bob\n    Note left of Alice: Left note\n    Note right of Bob: Right side\n    Alice->>Bob: Hello\n    Note over Alice,Bob: Spanning note\n    Note over Bob: Just Bob",
        &[
            "          ┌───────┐    ┌─────┐",
            "          │ Alice │    │ Bob │",
            "          └───┬───┘    └──┬──┘",
            "              │           │",
            "┌───────────┐ │           │",
            "│ Left note │ │           │",
            "└───────────┘ │           │",
            "              │           │",
            "              │           │ ┌────────────┐",
            "              │           │ │ Right side │",
            "              │           │ └────────────┘",
            "              │           │",
            "              │   Hello   │",
            "              ├──────────▶│",
            "              │           │",
            "            ┌───────────────┐",
            "            │ Spanning note │",
            "            └───────────────┘",
            "              │           │",
            "              │     ┌──────────┐",
            "              │     │ Just Bob │",
            "              │     └──────────┘",
            "              │           │",
            "          ┌───┴───┐    ┌──┴──┐",
            "          │ Alice │    │ Bob │",
            "          └───────┘    └─────┘",
        ],
        &[],
    );
}

#[test]
fn a_note_over_the_first_lifeline_and_an_unlabelled_message() {
    check(
        "sequenceDiagram\n    A->>B\n    B-->>A: ok\n    Note over A: x",
        &[
            "┌───┐  ┌───┐",
            "│ A │  │ B │",
            "└─┬─┘  └─┬─┘",
            "  │      │",
            "  ├─────▶│",
            "  │      │",
            "  │  ok  │",
            "  │◄╌╌╌╌╌┤",
            "  │      │",
            "┌───┐    │",
            "│ x │    │",
            "└───┘    │",
            "  │      │",
            "┌─┴─┐  ┌─┴─┐",
            "│ A │  │ B │",
            "└───┘  └───┘",
        ],
        &[],
    );
}

#[test]
fn loop_alt_else_and_opt_blocks() {
    check(
        "sequenceDiagram\n    Alice->>Bob: Request\n    loop Every minute\n        Bob-->>Alice: Ping\n    end\n    alt is sick\n        Bob->>Alice: Not so good\n    else is well\n        Bob->>Alice: Fine\n    end\n    opt Extra\n        Alice->>Bob: Thanks\n    end",
        &[
            "┌───────┐     ┌─────┐",
            "│ Alice │     │ Bob │",
            "└───┬───┘     └──┬──┘",
            "    │            │",
            "    │  Request   │",
            "    ├───────────▶│",
            "    │            │",
            "── loop Every minute ─",
            "    │            │",
            "    │    Ping    │",
            "    │◄╌╌╌╌╌╌╌╌╌╌╌┤",
            "    │            │",
            "── end ───────────────",
            "    │            │",
            "── alt is sick ───────",
            "    │            │",
            "    │Not so good │",
            "    │◄───────────┤",
            "    │            │",
            "── else is well ──────",
            "    │            │",
            "    │    Fine    │",
            "    │◄───────────┤",
            "    │            │",
            "── end ───────────────",
            "    │            │",
            "── opt Extra ─────────",
            "    │            │",
            "    │   Thanks   │",
            "    ├───────────▶│",
            "    │            │",
            "── end ───────────────",
            "    │            │",
            "┌───┴───┐     ┌──┴──┐",
            "│ Alice │     │ Bob │",
            "└───────┘     └─────┘",
        ],
        &[],
    );
}

#[test]
fn par_and_critical_option_break_and_rect() {
    check(
        "sequenceDiagram\n    par Alice to Bob\n        Alice->>Bob: Hello guys!\n    and Alice to John\n        Alice->>John: Hello guys!\n    end\n    critical Connect\n        Bob->>John: connect\n    option Timeout\n        Bob->>Bob: retry\n    end\n    break when down\n        John-xAlice: fail\n    end\n    rect rgb(0,0,255)\n        Alice->>John: in rect\n    end",
        &[
            "┌───────┐     ┌─────┐    ┌──────┐",
            "│ Alice │     │ Bob │    │ John │",
            "└───┬───┘     └──┬──┘    └───┬──┘",
            "    │            │           │",
            "── par Alice to Bob ──────────────",
            "    │            │           │",
            "    │Hello guys! │           │",
            "    ├───────────▶│           │",
            "    │            │           │",
            "── and Alice to John ─────────────",
            "    │            │           │",
            "    │      Hello guys!       │",
            "    ├───────────────────────▶│",
            "    │            │           │",
            "── end ───────────────────────────",
            "    │            │           │",
            "── critical Connect ──────────────",
            "    │            │           │",
            "    │            │  connect  │",
            "    │            ├──────────▶│",
            "    │            │           │",
            "── option Timeout ────────────────",
            "    │            │           │",
            "    │            ├──╮        │",
            "    │            │  │ retry  │",
            "    │            │◄─╯        │",
            "    │            │           │",
            "── end ───────────────────────────",
            "    │            │           │",
            "── break when down ───────────────",
            "    │            │           │",
            "    │          fail          │",
            "    │×───────────────────────┤",
            "    │            │           │",
            "── end ───────────────────────────",
            "    │            │           │",
            "    │        in rect         │",
            "    ├───────────────────────▶│",
            "    │            │           │",
            "┌───┴───┐     ┌──┴──┐    ┌───┴──┐",
            "│ Alice │     │ Bob │    │ John │",
            "└───────┘     └─────┘    └──────┘",
        ],
        &[],
    );
}

#[test]
fn activations_with_marks_and_keywords() {
    check(
        "sequenceDiagram\n    Alice->>+John: Hello John\n    John->>+John: think\n    John-->>-Alice: Hi\n    activate Alice\n    Alice->>John: ok\n    deactivate Alice\n    Alice-)John: async\n    John--xAlice: lost",
        &[
            "┌───────┐   ┌──────┐",
            "│ Alice │   │ John │",
            "└───┬───┘   └───┬──┘",
            "    │           │",
            "    │Hello John │",
            "    ├──────────▶║",
            "    │           ║",
            "    │           ╟──╮",
            "    │           ║  │ think",
            "    │           ║◄─╯",
            "    │           ║",
            "    │    Hi     ║",
            "    ║◄╌╌╌╌╌╌╌╌╌╌╢",
            "    ║           ║",
            "    ║    ok     ║",
            "    ╟──────────▶║",
            "    │           ║",
            "    │   async   ║",
            "    ├──────────▶║",
            "    │           ║",
            "    │   lost    ║",
            "    │×╌╌╌╌╌╌╌╌╌╌╢",
            "    │           ║",
            "┌───┴───┐   ┌───┴──┐",
            "│ Alice │   │ John │",
            "└───────┘   └──────┘",
        ],
        &[],
    );
}

#[test]
fn self_messages_and_autonumber() {
    check(
        "sequenceDiagram\n    autonumber\n    Alice->>Alice: think\n    Alice->>Bob: hi\n    Bob->>Bob\n    Bob-->>Alice: done",
        &[
            "┌───────┐       ┌─────┐",
            "│ Alice │       │ Bob │",
            "└───┬───┘       └──┬──┘",
            "    │              │",
            "    ├──╮           │",
            "    │  │ 1. think  │",
            "    │◄─╯           │",
            "    │              │",
            "    │    2. hi     │",
            "    ├─────────────▶│",
            "    │              │",
            "    │              ├──╮",
            "    │              │  │ 3.",
            "    │              │◄─╯",
            "    │              │",
            "    │   4. done    │",
            "    │◄╌╌╌╌╌╌╌╌╌╌╌╌╌┤",
            "    │              │",
            "┌───┴───┐       ┌──┴──┐",
            "│ Alice │       │ Bob │",
            "└───────┘       └─────┘",
        ],
        &[],
    );
}

#[test]
fn a_far_left_note_semicolons_actors_and_entities() {
    check(
        "sequenceDiagram\n    Note left of A: a note at the far left\n    A->>B: hi; B->>A: yo %% comment\n    actor C as \"Carol <b>the</b> user\"\n    C->>A: &lt; x &amp; y",
        &[
            "                         ┌───┐  ┌───┐ ┌────────────────┐",
            "                         │ A │  │ B │ │ Carol the user │",
            "                         └─┬─┘  └─┬─┘ └────────┬───────┘",
            "                           │      │            │",
            "┌────────────────────────┐ │      │            │",
            "│ a note at the far left │ │      │            │",
            "└────────────────────────┘ │      │            │",
            "                           │      │            │",
            "                           │  hi  │            │",
            "                           ├─────▶│            │",
            "                           │      │            │",
            "                           │  yo  │            │",
            "                           │◄─────┤            │",
            "                           │      │            │",
            "                           │      │ &lt        │",
            "                           │◄──────────────────┤",
            "                           │      │            │",
            "                         ┌─┴─┐  ┌─┴─┐ ┌────────┴───────┐",
            "                         │ A │  │ B │ │ Carol the user │",
            "                         └───┘  └───┘ └────────────────┘",
        ],
        &["dropped, unreadable statement: \"x &amp\"","dropped, unreadable statement: \"y\""],
    );
}

#[test]
fn an_active_lifeline_crosses_a_block_rule() {
    check(
        "sequenceDiagram\n    A->>+B: go\n    loop retry\n        B->>C: try\n    end\n    B-->>-A: done\n    Note right of C: a very long note text",
        &[
            "┌───┐  ┌───┐  ┌───┐",
            "│ A │  │ B │  │ C │",
            "└─┬─┘  └─┬─┘  └─┬─┘",
            "  │      │      │",
            "  │  go  │      │",
            "  ├─────▶║      │",
            "  │      ║      │",
            "── loop retry ──────────────────────────────",
            "  │      ║      │",
            "  │      ║ try  │",
            "  │      ╟─────▶│",
            "  │      ║      │",
            "── end ──║──────────────────────────────────",
            "  │      ║      │",
            "  │ done ║      │",
            "  │◄╌╌╌╌╌╢      │",
            "  │      │      │",
            "  │      │      │ ┌───────────────────────┐",
            "  │      │      │ │ a very long note text │",
            "  │      │      │ └───────────────────────┘",
            "  │      │      │",
            "┌─┴─┐  ┌─┴─┐  ┌─┴─┐",
            "│ A │  │ B │  │ C │",
            "└───┘  └───┘  └───┘",
        ],
        &[],
    );
}

#[test]
fn long_names_are_cut() {
    check(
        "sequenceDiagram\n    participant L as A participant name longer than the limit\n    L->>L: self",
        &[
            "┌──────────────────────────┐",
            "│ A participant name long… │",
            "└─────────────┬────────────┘",
            "              │",
            "              ├──╮",
            "              │  │ self",
            "              │◄─╯",
            "              │",
            "┌─────────────┴────────────┐",
            "│ A participant name long… │",
            "└──────────────────────────┘",
        ],
        &[],
    );
}
