//! Built-in tool blocks as pi 1.6 draws them (compared side by side at 100x30): a read is its
//! title until expanded, a write shows the content it writes, an edit its numbered diff with
//! the changed words reversed, a failed tool's output keeps the output colour, and a call
//! whose id an earlier reply used gets a block of its own.

use std::time::Duration;

use pi_test_support::{Script, Turn};
use serde_json::json;
use vt100::Color;

use super::pty::Pty;
use super::{quit, setup, ENTER};

fn ask(pty: &mut Pty, prompt: &str, answer: &str) {
    pty.type_text(prompt);
    pty.send(ENTER);
    pty.wait_text(answer);
}

/// The screen's rows without trailing blanks (a block's background pads some).
fn screen(pty: &Pty) -> Vec<String> {
    pty.rows().into_iter().map(|r| r.trim_end().to_string()).collect()
}

fn row_of(pty: &Pty, pred: impl Fn(&str) -> bool) -> u16 {
    let rows = screen(pty);
    rows.iter()
        .position(|r| pred(r))
        .unwrap_or_else(|| panic!("no such row in {rows:#?}")) as u16
}

/// Each prompt word runs one tool; the mock numbers the calls per rule, so every first call
/// has the same id.
fn script() -> Script {
    Script::matching()
        .rule(
            "doread",
            vec![
                Turn::tool_call("read", json!({"path": "hello.txt"})),
                Turn::text("Read it."),
            ],
        )
        .rule(
            "dobash",
            vec![
                Turn::tool_call("bash", json!({"command": "seq 1 40"})),
                Turn::text("Counted."),
            ],
        )
        .rule(
            "doedit",
            vec![
                Turn::tool_call(
                    "edit",
                    json!({"path": "hello.txt", "edits": [{"oldText": "line two", "newText": "line 2 changed"}]}),
                ),
                Turn::text("Edited."),
            ],
        )
        .rule(
            "dowrite",
            vec![
                Turn::tool_call("write", json!({"path": "new.txt", "content": "alpha\nbeta\ngamma\n"})),
                Turn::text("Wrote."),
            ],
        )
        .rule(
            "domissing",
            vec![
                Turn::tool_call("read", json!({"path": "missing.txt"})),
                Turn::text("Failed."),
            ],
        )
        .with_default(Turn::text("ok"))
}

#[test]
fn built_in_tools_render_as_pi_16_and_reused_call_ids_get_their_own_blocks() {
    let s = setup(script());
    std::fs::write(s.cwd.path().join("hello.txt"), "line one\nline two\nline three\n").expect("file");
    let mut pty = s.pi(30, 100);

    ask(&mut pty, "doread", "Read it.");
    let title = row_of(&pty, |r| r == " read hello.txt") as usize;
    let rows = screen(&pty);
    assert_eq!(rows[title + 1], "", "the read shows no content: {rows:#?}");
    assert!(!pty.contents().contains("line one"));

    // The next call reuses the id: the read above stays as it was.
    ask(&mut pty, "dobash", "Counted.");
    pty.wait_text("$ seq 1 40");
    let c = pty.contents();
    assert!(c.contains(" read hello.txt"), "{c}");
    assert!(c.contains("... (35 earlier lines, ctrl+o to expand)"), "{c}");

    ask(&mut pty, "doedit", "Edited.");
    let title = row_of(&pty, |r| r == " edit hello.txt") as usize;
    let rows = screen(&pty);
    assert_eq!(
        rows[title + 2..title + 6],
        ["  1 line one", " -2 line two", " +2 line 2 changed", "  3 line three"],
        "{rows:#?}"
    );
    // Only the changed words are reversed.
    let removed = (title + 3) as u16;
    assert!(pty.cell_at(removed, 9).expect("cell").inverse(), "`two` reversed");
    assert!(!pty.cell_at(removed, 4).expect("cell").inverse(), "`line` plain");

    ask(&mut pty, "dowrite", "Wrote.");
    let title = row_of(&pty, |r| r == " write new.txt") as usize;
    let rows = screen(&pty);
    assert_eq!(rows[title + 2..title + 5], [" alpha", " beta", " gamma"], "{rows:#?}");
    assert!(!pty.contents().contains("Successfully wrote"));

    ask(&mut pty, "domissing", "Failed.");
    let row = row_of(&pty, |r| r.starts_with(" ENOENT") || r.contains("missing.txt'"));
    // The error text is in the output colour (the system theme's dim), not red.
    let cell = pty.cell_at(row, 1).expect("cell");
    assert_ne!(cell.fgcolor(), Color::Idx(1), "{:?}", pty.rows());
    assert!(cell.dim());
    pty.wait_for("settled", Duration::from_secs(5), |c| c.contains("Failed."));
    quit(&mut pty);
}

#[test]
fn a_failed_bang_command_keeps_its_colour_and_ends_with_its_exit_code() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("!!echo hidden; exit 2");
    pty.send(ENTER);
    pty.wait_text("(exit 2)");
    let rows = screen(&pty);
    let title = row_of(&pty, |r| r == " $ echo hidden; exit 2") as usize;
    assert_eq!(
        rows[title + 1..title + 6],
        ["", " hidden", "", "", " (exit 2)"],
        "{rows:#?}"
    );
    assert!(rows[title + 6].starts_with("────"), "{rows:#?}");
    // Kept out of the context: dim title and rules; the output muted, the code in red.
    let title_cell = pty.cell_at(title as u16, 1).expect("cell");
    assert!(title_cell.dim() || title_cell.bold());
    assert_ne!(title_cell.fgcolor(), Color::Idx(2), "not the `!` colour");
    assert_ne!(
        pty.fg_at((title + 6) as u16, 0),
        Some(Color::Idx(1)),
        "the rule is not red"
    );
    assert_eq!(pty.fg_at((title + 2) as u16, 1), Some(Color::Default), "muted, not red");
    assert_eq!(pty.fg_at((title + 5) as u16, 1), Some(Color::Idx(1)));
    quit(&mut pty);
}

#[test]
fn a_reply_that_fails_for_good_points_at_bug_once() {
    let s = setup(Script::queue(vec![
        Turn::fault(pi_test_support::Fault::status(400).message("bad request here")),
        Turn::fault(pi_test_support::Fault::status(400).message("bad request again")),
    ]));
    let mut pty = s.pi(30, 100);
    ask(&mut pty, "first", "bad request here");
    let rows = screen(&pty);
    let error = row_of(&pty, |r| r.contains("bad request here")) as usize;
    assert!(rows[error + 1].contains("/bug"), "{rows:#?}");
    ask(&mut pty, "second", "bad request again");
    std::thread::sleep(Duration::from_millis(300));
    let hints = screen(&pty).iter().filter(|r| r.contains("/bug")).count();
    assert_eq!(hints, 1, "{:#?}", screen(&pty));
    quit(&mut pty);
}
