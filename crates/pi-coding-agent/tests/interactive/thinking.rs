//! `/thinking`: a named level (case-insensitive, unknown ones listed) or the selector.

use std::time::Duration;

use pi_test_support::Script;

use super::{quit, setup, ENTER};

#[test]
fn thinking_command_names_a_level_or_opens_the_selector() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/thinking banana");
    pty.send(ENTER);
    pty.wait_text("Unknown thinking level \"banana\". Available levels: off");
    pty.type_text("/thinking OFF");
    // As in pi 1.6, Enter first takes the level the argument menu offers, then submits.
    pty.wait_text("→ off");
    pty.send(ENTER);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("→ off"));
    pty.send(ENTER);
    pty.wait_text("Thinking level: off");
    pty.type_text("/thinking");
    pty.send(ENTER);
    pty.wait_text("Thinking Level");
    pty.wait_text("✓ off");
    assert!(pty.contents().contains("No reasoning"));
    pty.send("\x1b");
    pty.wait_for("selector closed", Duration::from_secs(5), |c| {
        !c.contains("No reasoning")
    });
    quit(&mut pty);
}
