//! Built-in slash commands with missing, bad or completed arguments, as pi 1.6 answers them:
//! `/import` asks before replacing the session and reports a missing file, the argument
//! menus of `/login` and `/mcp`.

use std::time::Duration;

use pi_test_support::Script;

use super::{quit, setup, ENTER, ESC};

#[test]
fn import_needs_a_path_asks_first_and_reports_a_missing_file() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("/import");
    // Escape closes the command menu; Enter then runs the command as typed.
    pty.send(ESC);
    pty.send(ENTER);
    pty.wait_text("Error: Usage: /import <path.jsonl>");
    pty.type_text("/import nope.jsonl");
    pty.send(ESC);
    pty.send(ENTER);
    pty.wait_text("Replace current session with nope.jsonl?");
    pty.send(ESC);
    pty.wait_text("Import cancelled");
    pty.type_text("/import nope.jsonl");
    pty.send(ESC);
    pty.send(ENTER);
    pty.wait_text("Replace current session with nope.jsonl?");
    pty.send(ENTER);
    pty.wait_text("Failed to import session: File not found:");
    assert!(!pty.contents().contains("Session imported from"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn login_and_mcp_complete_their_arguments() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("/login ");
    pty.wait_text("Radius · account/API key");
    pty.wait_text("OpenRouter · account/API key");
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Radius ·"));
    pty.send("\x15");
    pty.type_text("/mcp re");
    pty.wait_for("the action menu", Duration::from_secs(5), |_| {
        pty.rows().iter().any(|r| r.starts_with("→ reconnect"))
    });
    pty.send("\t");
    pty.wait_for("completed", Duration::from_secs(5), |_| {
        pty.rows().iter().any(|r| r.trim_end() == "/mcp reconnect")
    });
    pty.send("\x15");
    quit(&mut pty);
}

#[test]
fn an_argument_to_a_command_without_one_makes_a_prompt() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("/tree now");
    pty.send(ENTER);
    // Sent to the model as it is (the echo answers), no tree opened.
    pty.wait_text("echo: /tree now");
    assert!(!pty.contents().contains("Session Tree"), "{}", pty.contents());
    quit(&mut pty);
}
