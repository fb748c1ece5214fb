//! Mermaid flowcharts and sequence diagrams in replies are drawn as box art, as pi 1.6 draws them
//! (`markdown.mermaid`); other diagram types stay code, and a flowchart that cannot be read
//! stays code with a line saying why.

use pi_test_support::{Script, Turn};

use super::pty::Pty;
use super::{quit, set_setting, setup, ENTER};

const FLOW: &str =
    "Here:\n\n```mermaid\ngraph TD\n  A[Start] --> B{Is it?}\n  B -->|Yes| C[OK]\n  B -->|No| D[Not OK]\n```\n\nDone.";

fn ask(pty: &mut Pty, text: &str, answer: &str) {
    pty.type_text(text);
    pty.send(ENTER);
    pty.wait_text(answer);
}

#[test]
fn flowcharts_and_sequence_diagrams_are_drawn_and_other_diagrams_stay_code() {
    let s = setup(Script::queue(vec![
        Turn::text(FLOW),
        Turn::text("Seq:\n\n```mermaid\nsequenceDiagram\n  Alice->>Bob: Hi\n```"),
        Turn::text("Class:\n\n```mermaid\nclassDiagram\n  Animal <|-- Duck\n```"),
        Turn::text("Bad:\n\n```mermaid\ngraph TD\n  A[open --> B\n```"),
    ]));
    let mut pty = s.pi(30, 100);
    ask(&mut pty, "one", "Done.");
    pty.wait_text("│ Start │");
    let screen = pty.contents();
    for part in ["║ Is it? ║", "▼Yes", "▼No", "│ Not OK │"] {
        assert!(screen.contains(part), "{part:?}:\n{screen}");
    }
    assert!(!screen.contains("```mermaid"), "{screen}");
    ask(&mut pty, "two", "Seq:");
    pty.wait_text("│ Alice │  │ Bob │");
    pty.wait_text("├────────▶│");
    assert!(!pty.contents().contains("sequenceDiagram"), "{}", pty.contents());
    ask(&mut pty, "three", "Class:");
    pty.wait_text("classDiagram");
    ask(&mut pty, "four", "Bad:");
    pty.wait_text("Mermaid diagram not rendered: line 2:");
    // Under the code block, after a blank line.
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim().to_string()).collect();
    let at = rows
        .iter()
        .position(|r| r.starts_with("Mermaid diagram not rendered"))
        .expect("warning row");
    assert_eq!(
        (rows[at - 2].as_str(), rows[at - 1].as_str()),
        ("```", ""),
        "{}",
        pty.contents()
    );
    quit(&mut pty);
}

#[test]
fn mermaid_off_shows_the_code() {
    let s = setup(Script::queue(vec![Turn::text(FLOW)]));
    set_setting(&s, "markdown", serde_json::json!({"mermaid": "off"}));
    let mut pty = s.pi(30, 100);
    ask(&mut pty, "one", "Done.");
    let screen = pty.contents();
    assert!(
        screen.contains("```mermaid") && screen.contains("A[Start] --> B{Is it?}"),
        "{screen}"
    );
    assert!(!screen.contains("│ Start │"), "{screen}");
    quit(&mut pty);
}

#[test]
fn a_diagram_wider_than_the_screen_stays_code() {
    let wide =
        "Wide:\n\n```mermaid\ngraph LR\n  A[a very long first label] --> B[a second very long label] --> C[third]\n```";
    let s = setup(Script::queue(vec![Turn::text(wide)]));
    let mut pty = Pty::spawn(&[], s.cwd.path(), s.agent.path(), 30, 60);
    pty.wait_text("mock-model");
    ask(&mut pty, "one", "Wide:");
    pty.wait_text("graph LR");
    assert!(!pty.contents().contains("│ third │"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn turning_diagrams_off_in_settings_redraws_the_transcript() {
    let s = setup(Script::queue(vec![Turn::text(FLOW)]));
    let mut pty = s.pi(30, 100);
    ask(&mut pty, "one", "Done.");
    pty.wait_text("│ Start │");
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Type to search");
    pty.type_text("mermaid");
    pty.wait_text("Mermaid diagrams");
    // streaming → off
    pty.send(ENTER);
    pty.wait_for("off", std::time::Duration::from_secs(10), |c| {
        c.lines()
            .any(|l| l.contains("Mermaid diagrams") && l.trim_end().ends_with("off"))
    });
    // Esc clears the search, Esc again closes the list.
    pty.send(super::ESC);
    std::thread::sleep(std::time::Duration::from_millis(300));
    if pty.contents().contains("Type to search") {
        pty.send(super::ESC);
    }
    pty.wait_for("the list closed", std::time::Duration::from_secs(10), |c| {
        !c.contains("Type to search")
    });
    pty.wait_text("```mermaid");
    assert!(!pty.contents().contains("│ Start │"), "{}", pty.contents());
    quit(&mut pty);
}
