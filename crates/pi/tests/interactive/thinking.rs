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

#[test]
fn ctrl_s_in_the_thinking_selector_saves_the_default() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = super::pty::Pty::spawn(
        &["--model", "mock-openai/mock-thinker"],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
    );
    pty.wait_text("mock-thinker • medium");
    pty.type_text("/thinking");
    pty.send(ENTER);
    pty.wait_text("Ctrl+S to set as default");
    // pi marks its built-in default (medium) while none is saved.
    pty.wait_text("Moderate reasoning (~8k tokens) · default");
    pty.send("\x1b[B"); // down to high
    pty.send("\x13"); // Ctrl+S
    pty.wait_text("Default thinking level: high");
    // The file is written off the UI thread, so it may land just after the notice.
    let saved = super::wait_json(&s.agent.path().join("settings.json"), |v| {
        v["defaultThinkingLevel"] == "high"
    });
    assert_eq!(saved["defaultThinkingLevel"], "high");
    pty.wait_text("mock-thinker • high");
    // Opened again: high is current and the default; typing filters by description.
    pty.type_text("/thinking");
    pty.send(ENTER);
    pty.wait_text("✓ high      Deep reasoning (~16k tokens) · default");
    pty.type_text("deep");
    pty.wait_for("filtered", Duration::from_secs(5), |c| !c.contains("No reasoning"));
    pty.send(ENTER);
    pty.wait_text("Thinking level: high");
    quit(&mut pty);
}
