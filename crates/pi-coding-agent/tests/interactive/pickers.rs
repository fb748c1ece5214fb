//! The model picker as pi 1.6 draws it in the dock: the hint, the search line, the current
//! model marked `✓` first, the saved default badged, the model's name, and Ctrl+S saving
//! the choice as the default (Enter only switches this session); and `/session`'s cost per
//! model once more than one model answered.

use std::time::Duration;

use pi_test_support::Script;

use super::{quit, read_json, setup, wait_json, DOWN, ENTER};

#[test]
fn model_picker_marks_the_current_model_and_ctrl_s_saves_the_default() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 100);
    pty.send("\x0c"); // Ctrl+L
    pty.wait_text("Only showing models from configured providers. Use /login to add providers.");
    pty.wait_text("→ ✓ mock-model [mock-openai]");
    pty.wait_text("Model Name: Mock Model");
    pty.wait_text("Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel");
    // Enter: this session only.
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Model: mock-model");
    pty.wait_for("footer on anthropic", Duration::from_secs(5), |c| {
        c.contains("(mock-anthropic) mock-model")
    });
    let settings_path = s.agent.path().join("settings.json");
    let saved = std::fs::read_to_string(&settings_path).unwrap_or_default();
    assert!(!saved.contains("defaultProvider"), "{saved}");

    // Typing filters; Ctrl+S switches and saves the default.
    pty.send("\x0c");
    pty.wait_text("→ ✓ mock-model [mock-anthropic]");
    pty.type_text("google/mock-thinker");
    pty.wait_for("filtered", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.starts_with("→") && l.contains("mock-thinker [mock-google]"))
    });
    pty.send("\x13"); // Ctrl+S
    pty.wait_text("Default model: mock-google/mock-thinker");
    let settings = wait_json(&settings_path, |v| v["defaultModel"] == "mock-thinker");
    assert_eq!(settings["defaultProvider"], "mock-google");
    // The default is badged the next time.
    pty.send("\x0c");
    pty.wait_text("→ ✓ mock-thinker [mock-google] · default");
    pty.send("\x1b");
    pty.wait_for("closed", Duration::from_secs(5), |c| !c.contains("Model Name:"));
    assert_eq!(read_json(&settings_path)["defaultModel"], "mock-thinker");
    quit(&mut pty);
}

#[test]
fn session_lists_the_cost_of_each_model_that_answered() {
    let s = setup(Script::echo());
    let mut pty = s.pi(50, 100);
    pty.type_text("first question");
    pty.send(ENTER);
    pty.wait_text("echo: first question");
    // One model: the total alone.
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_text("Cost");
    assert!(
        !pty.contents().contains("mock-openai/mock-model: $"),
        "{}",
        pty.contents()
    );
    pty.type_text("/model mock-anthropic/mock-model");
    // As in pi 1.6, Enter first takes the argument menu's choice, then submits.
    pty.wait_text("mock-anthropic\n");
    pty.send(ENTER);
    pty.wait_for("menu closed", Duration::from_secs(10), |c| {
        !c.contains("mock-anthropic\n")
    });
    pty.send(ENTER);
    pty.wait_text("Model: mock-model");
    pty.type_text("second question");
    pty.send(ENTER);
    pty.wait_text("echo: second question");
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_for("per-model cost", Duration::from_secs(10), |c| {
        c.contains("mock-openai/mock-model: $") && c.contains("mock-anthropic/mock-model: $")
    });
    let c = pty.contents();
    let line = c.lines().find(|l| l.contains("mock-anthropic/mock-model: $")).unwrap();
    assert!(line.trim_end().ends_with("tokens)"), "{line}");
    quit(&mut pty);
}
