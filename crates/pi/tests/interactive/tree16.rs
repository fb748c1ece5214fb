//! `/tree` as pi 1.6 draws it: the title, the two help rows, the search line, the rows with
//! the branch holding the active leaf first, fork connectors with fold marks, gutters, the
//! active-path dots and the `(n/m)` counter (compared with 1.6's screen at 100x30).

use std::time::Duration;

use pi_test_support::Script;

use super::{quit, setup, ENTER, ESC, UP};

fn tree_block(rows: &[String]) -> Vec<String> {
    let start = rows.iter().position(|r| r.contains("Session Tree")).expect("title");
    rows[start..]
        .iter()
        .take_while(|r| !r.contains("/tmp") && !r.starts_with('/'))
        .map(|r| r.trim_end().to_string())
        .collect()
}

#[test]
fn tree_matches_pi_16_after_a_branch() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("hello there, what is 2+2?");
    pty.send(ENTER);
    pty.wait_text("echo: hello there, what is 2+2?");
    pty.type_text("second question");
    pty.send(ENTER);
    pty.wait_text("echo: second question");
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("(5/5)");
    pty.send(UP);
    pty.send(UP);
    pty.send(ENTER);
    pty.wait_text("Summarize branch?");
    pty.send(ENTER);
    pty.wait_text("Navigated to selected point");
    pty.type_text("branch question");
    pty.send(ENTER);
    pty.wait_text("echo: branch question");
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("(5/7)");
    let block = tree_block(&pty.rows());
    let want = [
        "   Session Tree",
        "  ↑/↓ move · ←/→ page · ctrl+←/→ branch · ctrl+x copy · shift+l label · shift+t label time",
        "  filters ctrl+d/t/u/l/a · cycle ctrl+o/shift+ctrl+o",
        "  Type to search:",
        "────────────────────────────────────────────────────────────────────────────────────────────────────",
        "",
        "  • [system]",
        "  • user: hello there, what is 2+2?",
        "  • assistant: echo: hello there, what is 2+2?",
        "  ├⊟ • user: branch question",
        "› │     • assistant: echo: branch question",
        "  └⊟ user: second question",
        "        assistant: echo: second question",
        "  (5/7)",
        "",
        "────────────────────────────────────────────────────────────────────────────────────────────────────",
    ];
    assert_eq!(block, want, "{}", pty.contents());
    // Ctrl+A shows every entry and says so; typing searches; Esc clears the search first.
    pty.send("\x01");
    pty.wait_text("(7/9) [all]");
    assert!(pty.contents().contains("  • [model: mock-model]"), "{}", pty.contents());
    pty.send("\x04");
    pty.type_text("sec");
    pty.wait_text("Type to search: sec");
    pty.wait_text("(2/2)");
    // The cursor stays where the search left it (the last match), as in pi.
    pty.send(ESC);
    pty.wait_text("(7/7)");
    pty.send(ESC);
    pty.wait_for("tree closed", Duration::from_secs(5), |c| !c.contains("Session Tree"));
    quit(&mut pty);
}
