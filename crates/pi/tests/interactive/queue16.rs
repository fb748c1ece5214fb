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
