//! Fullscreen clicks on the transcript's collapsible parts, in a pseudo-terminal with SGR
//! mouse reports, as pi 1.6 takes them: a compaction summary expands or collapses, and a
//! reply's thinking hides or shows, each alone.

use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::mouse_dock::{click, row_starting};
use super::{quit, setup, ENTER};

#[test]
fn a_click_on_a_compaction_summary_expands_it_alone() {
    let s = setup(Script::queue(vec![
        Turn::text("one"),
        Turn::text("two"),
        Turn::text("The user asked twice; both were answered."),
        Turn::text("The turn so far."),
    ]));
    super::set_setting(&s, "compaction", serde_json::json!({"keepRecentTokens": 1}));
    let mut pty = s.pi(30, 100);
    for (ask, answer) in [("a", "one"), ("b", "two")] {
        pty.type_text(ask);
        pty.send(ENTER);
        pty.wait_text(answer);
    }
    pty.type_text("/compact");
    pty.send(ENTER);
    pty.wait_text("(ctrl+o to expand)");
    let label = row_starting(&pty, " [compaction]");
    click(&mut pty, label, 4);
    pty.wait_text("The user asked twice; both were answered.");
    // Later than a double click would be.
    std::thread::sleep(Duration::from_millis(600));
    let label = row_starting(&pty, " [compaction]");
    click(&mut pty, label, 4);
    pty.wait_text("(ctrl+o to expand)");
    assert!(!pty.contents().contains("both were answered"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn a_click_on_a_replys_thinking_hides_or_shows_that_thinking_alone() {
    let s = setup(Script::sequential(vec![
        Turn::text("first answer").with_thinking("first deep thoughts"),
        Turn::text("second answer").with_thinking("second deep thoughts"),
    ]));
    let mut pty = s.pi(30, 100);
    for (ask, answer) in [("a", "first answer"), ("b", "second answer")] {
        pty.type_text(ask);
        pty.send(ENTER);
        pty.wait_text(answer);
    }
    let thinking = row_starting(&pty, " first deep thoughts");
    click(&mut pty, thinking, 5);
    pty.wait_for("the first thinking hidden", Duration::from_secs(5), |c| {
        !c.contains("first deep thoughts") && c.contains("Thinking...")
    });
    // The other reply's thinking stays as it was; so do the answers.
    let c = pty.contents();
    assert!(c.contains("second deep thoughts") && c.contains("first answer"), "{c}");
    std::thread::sleep(Duration::from_millis(600));
    let label = row_starting(&pty, " Thinking...");
    click(&mut pty, label, 3);
    pty.wait_text("first deep thoughts");
    assert!(!pty.contents().contains("Thinking..."), "{}", pty.contents());
    // A click on an answer changes nothing.
    let answer = row_starting(&pty, " second answer");
    click(&mut pty, answer, 3);
    pty.wait_stable(Duration::from_millis(300));
    assert!(pty.contents().contains("second deep thoughts"));
    quit(&mut pty);
}

#[test]
fn a_click_on_a_tool_call_expands_it_but_not_on_a_typed_command() {
    let s = setup(Script::sequential(vec![
        Turn::tool_call("bash", serde_json::json!({"command": "seq 101 140"})),
        Turn::text("counted"),
    ]));
    let mut pty = s.pi(70, 100);
    pty.type_text("count");
    pty.send(ENTER);
    pty.wait_text("counted");
    assert!(pty.contents().contains("35 earlier lines"), "{}", pty.contents());
    // The blank row above the block takes no click.
    let call = row_starting(&pty, " $ seq 101 140");
    click(&mut pty, call - 2, 4);
    pty.wait_stable(Duration::from_millis(300));
    assert!(pty.contents().contains("35 earlier lines"), "{}", pty.contents());
    click(&mut pty, call, 4);
    pty.wait_for("the output in full", Duration::from_secs(5), |c| {
        c.lines().any(|l| l.trim_end() == " 101")
    });
    // A command typed with `!` takes no click (pi's bash block has no click region).
    std::thread::sleep(Duration::from_millis(600));
    pty.type_text("!seq 201 240");
    pty.send(ENTER);
    pty.wait_for("the command's tail", Duration::from_secs(10), |c| {
        c.lines().any(|l| l.trim_end() == " 240")
    });
    let typed = row_starting(&pty, " $ seq 201 240");
    click(&mut pty, typed, 4);
    pty.wait_stable(Duration::from_millis(300));
    assert!(
        !pty.contents().lines().any(|l| l.trim_end() == " 201"),
        "{}",
        pty.contents()
    );
    quit(&mut pty);
}
