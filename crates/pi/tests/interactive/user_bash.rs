//! `!` commands typed while the agent works: they run at once, show above the editor while
//! the run goes on, and move into the chat (after the run's reply) when it settles.

use std::time::Duration;

use pi_test_support::{Script, Turn};
use serde_json::json;

use super::{quit, setup, ENTER};

/// The row of the first line containing `text`.
fn row_of(rows: &[String], text: &str) -> Option<usize> {
    rows.iter().position(|r| r.contains(text))
}

#[test]
fn a_bang_command_during_a_run_waits_above_the_editor_then_joins_the_chat() {
    let s = setup(Script::sequential(vec![
        Turn::tool_call("bash", json!({"command": "sleep 2; echo slept"})),
        Turn::text("Run finished."),
    ]));
    let mut pty = s.pi(30, 100);
    pty.type_text("go");
    pty.send(ENTER);
    pty.wait_text("$ sleep 2; echo slept");
    pty.type_text("!echo pending-bash-xyz");
    pty.send(ENTER);
    pty.wait_text("pending-bash-xyz");
    // While the run goes on the command sits in the dock: below the run's tool call, above
    // the editor, and the reply has not come yet.
    pty.wait_for("the command's output", Duration::from_secs(5), |c| {
        c.matches("pending-bash-xyz").count() >= 2
    });
    let rows = pty.rows();
    let tool = row_of(&rows, "$ sleep 2; echo slept").expect("tool row");
    let bash = row_of(&rows, "$ echo pending-bash-xyz").expect("bash row");
    let working = row_of(&rows, "Working").expect("working border");
    assert!(tool < bash && bash < working, "{rows:#?}");
    assert!(!pty.contents().contains("Run finished."));
    // Once the run settles it follows the reply in the chat.
    pty.wait_text("Run finished.");
    pty.wait_for("the command moved", Duration::from_secs(5), |c| {
        let reply = c.find("Run finished.");
        let bash = c.find("$ echo pending-bash-xyz");
        matches!((reply, bash), (Some(r), Some(b)) if r < b)
    });
    quit(&mut pty);
}
