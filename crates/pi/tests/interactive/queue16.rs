//! The queue while the agent works, as pi 1.6 shows it above the editor: one padded line per
//! steering and follow-up message, and the dequeue key as pi spells it.

use pi_test_support::{Script, Turn};

use super::{quit, setup, ENTER};

#[test]
fn queued_messages_show_above_the_editor_as_pi_16() {
    let mut slow = Turn::text("").with_delay_ms(30);
    slow.big = Some(400);
    let s = setup(Script::queue(vec![slow, Turn::text("steered"), Turn::text("followed")]));
    let mut pty = s.pi(30, 100);
    pty.type_text("go");
    pty.send(ENTER);
    pty.wait_text("Working");
    pty.type_text("steer this way");
    pty.send(ENTER);
    pty.type_text("and a follow-up");
    pty.send("\x1b\r"); // Alt+Enter
    pty.wait_text("Follow-up: and a follow-up");
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let at = rows
        .iter()
        .position(|r| r == " Steering: steer this way")
        .unwrap_or_else(|| panic!("{}", pty.contents()));
    assert_eq!(rows[at - 1], "");
    assert_eq!(rows[at + 1], " Follow-up: and a follow-up");
    assert_eq!(rows[at + 2], " ↳ Alt+Up to edit all queued messages");
    quit(&mut pty);
}

#[test]
fn restoring_the_queue_counts_the_messages_in_a_status_line() {
    let mut slow = Turn::text("").with_delay_ms(30);
    slow.big = Some(400);
    let s = setup(Script::queue(vec![slow, Turn::text("steered")]));
    let mut pty = s.pi(30, 100);
    pty.type_text("go");
    pty.send(ENTER);
    pty.wait_text("Working");
    pty.type_text("steer this way");
    pty.send(ENTER);
    pty.type_text("and a follow-up");
    pty.send("\x1b\r"); // Alt+Enter
    pty.wait_text("Follow-up: and a follow-up");
    pty.send("\x1b[1;3A"); // Alt+Up
    pty.wait_text("Restored 2 queued messages to editor");
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let at = rows
        .iter()
        .position(|r| r == " Restored 2 queued messages to editor")
        .unwrap_or_else(|| panic!("{rows:#?}"));
    // A dim status line.
    assert!(pty.cell_at(at as u16, 1).expect("cell").dim(), "{rows:#?}");
    pty.send("\x1b"); // stop the run
    pty.wait_for("the run stopped", std::time::Duration::from_secs(10), |c| {
        !c.contains("Working")
    });
    pty.send("\x03"); // clear the editor
    pty.wait_for("the editor cleared", std::time::Duration::from_secs(5), |c| {
        !c.lines().any(|l| l.trim_end() == "steer this way")
    });
    quit(&mut pty);
}

#[test]
fn while_the_first_reply_streams_the_footer_counts_the_prompt_and_system_message() {
    let mut slow = Turn::text("").with_delay_ms(30);
    slow.big = Some(400);
    let s = setup(Script::queue(vec![slow]));
    let mut pty = s.pi(30, 100);
    pty.wait_text("0.0%/128k");
    pty.type_text("go");
    pty.send(ENTER);
    pty.wait_text("Working");
    // The loadout's system message alone is far over 0.05% of the window.
    pty.wait_for("a context estimate", std::time::Duration::from_secs(5), |c| {
        c.lines().any(|l| l.contains("%/128k") && !l.contains("0.0%/128k"))
    });
    pty.send("\x1b");
    pty.wait_for("the run stopped", std::time::Duration::from_secs(10), |c| {
        !c.contains("Working")
    });
    quit(&mut pty);
}
