//! Fullscreen in a pseudo-terminal, continued: the scrollbar (shown while scrolling, dragged,
//! its own column with `always`), double and triple clicks that select a word and a line, a
//! click that expands one tool result,
//! the program status reports (OSC 7501) a terminal that supports them receives, and the
//! status lines of Ctrl+O and Ctrl+T, each replacing the one before.

use std::time::Duration;

use pi_test_support::{Fault, Script, Turn};

use super::pty::Pty;
use super::{quit, set_setting, setup, ENTER};
use serde_json::json;

fn raw_text(pty: &Pty) -> String {
    String::from_utf8_lossy(&pty.raw()).to_string()
}

fn wait_raw(pty: &Pty, what: &str, f: impl Fn(&str) -> bool) {
    let start = std::time::Instant::now();
    while !f(&raw_text(pty)) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}; raw tail:\n{:?}",
            raw_text(pty).chars().rev().take(600).collect::<String>()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last column of the transcript rows (above the editor's top rule).
fn scrollbar_column(pty: &Pty) -> String {
    let rows = pty.rows();
    rows[..24].iter().map(|r| r.chars().nth(99).unwrap_or(' ')).collect()
}

fn long_reply(n: usize) -> String {
    (1..=n).map(|i| format!("reply line {i:03}\n\n")).collect()
}

#[test]
fn the_scrollbar_shows_while_scrolling_and_dragging_it_scrolls() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(80))]));
    let mut pty = s.pi(30, 100);
    pty.type_text("many lines");
    pty.send(ENTER);
    pty.wait_text("reply line 080");
    assert!(!scrollbar_column(&pty).contains('│'), "auto: hidden while following");

    pty.send("\x1b[<64;10;5M");
    pty.wait_for("scrollbar", Duration::from_secs(5), |_| {
        let col = scrollbar_column(&pty);
        col.contains('│') && col.contains('┃')
    });
    // Press on the top of the track and drag the thumb up there: the transcript starts over.
    pty.send("\x1b[<0;100;1M");
    pty.send("\x1b[<32;100;1M");
    pty.wait_text("many lines");
    pty.send("\x1b[<0;100;1m");
    // Idle again, the bar goes away after a second.
    pty.wait_for("scrollbar hidden", Duration::from_secs(5), |_| {
        !scrollbar_column(&pty).contains('┃')
    });
    quit(&mut pty);

    // `always`: the bar has a column of its own, even with nothing to scroll.
    let s = setup(Script::sequential(vec![]));
    set_setting(&s, "fullscreenScrollbar", serde_json::json!("always"));
    let mut pty = s.pi(30, 100);
    pty.wait_for("scrollbar column", Duration::from_secs(5), |_| {
        scrollbar_column(&pty).chars().all(|c| c == '┃')
    });
    quit(&mut pty);
}

#[test]
fn double_click_copies_a_word_and_triple_click_the_line() {
    let s = setup(Script::sequential(vec![Turn::text(
        "open crates/pi-tui/src/lib.rs now",
    )]));
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        // No display for a clipboard tool: the copy goes out as OSC 52.
        &[("WAYLAND_DISPLAY", ""), ("DISPLAY", "")],
    );
    pty.wait_text("mock-model");
    pty.type_text("where is it");
    pty.send(ENTER);
    pty.wait_text("lib.rs now");
    let rows = pty.rows();
    let row = rows.iter().position(|r| r.contains("lib.rs now")).expect("answer row");
    let x = rows[row].find("pi-tui").expect("column") + 1;
    let y = row + 1;
    let click = format!("\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m");
    pty.send(&click);
    pty.send(&click);
    let word = super::fullscreen::base64_of("crates/pi-tui/src/lib.rs");
    wait_raw(&pty, "the word copied", |raw| {
        raw.contains(&format!("\x1b]52;c;{word}\x07"))
    });
    pty.send(&click);
    // The whole row, the message's left padding included (only trailing blanks go).
    let line = super::fullscreen::base64_of(" open crates/pi-tui/src/lib.rs now");
    wait_raw(&pty, "the line copied", |raw| {
        raw.contains(&format!("\x1b]52;c;{line}\x07"))
    });
    quit(&mut pty);
}

#[test]
fn program_status_reports_go_to_a_terminal_that_supports_them() {
    let s = setup(Script::sequential(vec![
        Turn::text("first answer"),
        Turn::fault(Fault::status(400).message("upstream exploded")),
    ]));
    let mut pty = s.pi(30, 100);
    let raw = raw_text(&pty);
    assert!(raw.contains("\x1b]7501;?\x1b\\"), "the support query is sent");
    assert!(
        !raw.contains("\x1b]7501;state="),
        "no report before the terminal answers"
    );
    // The terminal answers the query: the current status follows at once.
    pty.send("\x1b]7501;?\x1b\\");
    wait_raw(&pty, "idle report", |raw| {
        raw.contains("\x1b]7501;state=idle:app=pi\x1b\\")
    });
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("first answer");
    wait_raw(&pty, "working then done", |raw| {
        let working = raw.find("\x1b]7501;state=working:app=pi");
        let done = raw.rfind("\x1b]7501;state=done:app=pi");
        working.is_some() && done > working
    });
    assert!(!raw_text(&pty).contains("hello\x1b\\"), "prompts are never reported");
    pty.type_text("again");
    pty.send(ENTER);
    // A failed reply: the report carries the error's first line (base64).
    wait_raw(&pty, "error report", |raw| {
        raw.contains("\x1b]7501;state=error:app=pi:msg=")
    });
    quit(&mut pty);
    wait_raw(&pty, "report withdrawn", |raw| {
        raw.contains("\x1b]7501;state=clear\x1b\\")
    });

    // `PI_PROGRAM_STATUS=0`: no query and no reports.
    let s = setup(Script::sequential(vec![]));
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_PROGRAM_STATUS", "0")],
    );
    pty.wait_text("mock-model");
    pty.send("\x1b]7501;?\x1b\\");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!raw_text(&pty).contains("\x1b]7501;"));
    quit(&mut pty);
}

#[test]
fn expanding_tools_and_hiding_thinking_say_so_in_one_status_line() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.send("\x0f");
    pty.wait_text("Tool output: expanded");
    pty.send("\x0f");
    pty.wait_text("Tool output: collapsed");
    pty.send("\x14");
    pty.wait_text("Thinking blocks: hidden");
    let screen = pty.contents();
    // Each replaced the one before.
    assert!(!screen.contains("Tool output:"), "{screen}");
    assert_eq!(screen.matches("Thinking blocks:").count(), 1, "{screen}");
    quit(&mut pty);
}

#[test]
fn a_click_on_a_tool_result_expands_and_collapses_it() {
    let s = setup(Script::sequential(vec![
        Turn::tool_call("bash", json!({"command": "seq 1 9"})),
        Turn::text("Counted."),
    ]));
    let mut pty = s.pi(40, 100);
    pty.type_text("count");
    pty.send(ENTER);
    pty.wait_text("Counted.");
    pty.wait_text("earlier lines, ctrl+o to expand");
    let click_on = |pty: &mut Pty, text: &str| {
        let rows = pty.rows();
        let y = rows.iter().position(|r| r.contains(text)).expect("row") + 1;
        pty.send(&format!("\x1b[<0;10;{y}M\x1b[<0;10;{y}m"));
    };
    click_on(&mut pty, "$ seq 1 9");
    pty.wait_for("expanded", Duration::from_secs(5), |c| {
        !c.contains("earlier lines, ctrl+o to expand") && c.lines().any(|l| l.trim() == "1")
    });
    // Later than a double click would be.
    std::thread::sleep(Duration::from_millis(600));
    click_on(&mut pty, "$ seq 1 9");
    pty.wait_text("earlier lines, ctrl+o to expand");
    std::thread::sleep(Duration::from_millis(600));
    // A click elsewhere (the answer) changes nothing.
    click_on(&mut pty, "Counted.");
    std::thread::sleep(Duration::from_millis(200));
    assert!(pty.contents().contains("earlier lines, ctrl+o to expand"));
    quit(&mut pty);
}

#[test]
fn the_progress_indicator_shows_during_a_run_only_when_asked() {
    const ON: &str = "\x1b]9;4;3\x07";
    const OFF: &str = "\x1b]9;4;0\x07";
    let s = setup(Script::sequential(vec![Turn::text("first answer")]));
    let mut pty = s.pi(30, 100);
    pty.type_text("one");
    pty.send(ENTER);
    pty.wait_text("first answer");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!raw_text(&pty).contains("\x1b]9;4;"), "off by default");
    quit(&mut pty);

    set_setting(&s, "terminal", json!({"showTerminalProgress": true}));
    let mut pty = s.pi(30, 100);
    pty.type_text("two");
    pty.send(ENTER);
    pty.wait_text("first answer");
    wait_raw(&pty, "progress on, then off", |raw| {
        raw.find(ON).is_some_and(|on| raw[on..].contains(OFF))
    });
    quit(&mut pty);
}
