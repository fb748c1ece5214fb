//! Screens compared with pi 1.6 side by side at 100x30: the `Summarize branch?` selector,
//! the `/tree` search line's cursor, `/fork`'s message chooser and the lines a new, forked or
//! navigated session leaves in the transcript.

use std::time::Duration;

use pi_test_support::Script;
use vt100::Color;

use super::pty::Pty;
use super::{quit, setup, CTRL_C, ENTER, ESC, UP};

fn row_of(pty: &Pty, pred: impl Fn(&str) -> bool) -> u16 {
    let rows = pty.rows();
    rows.iter()
        .position(|r| pred(r))
        .unwrap_or_else(|| panic!("no such row in {rows:#?}")) as u16
}

/// Two exchanges, so `/tree` and `/fork` have something to offer.
fn two_exchanges(pty: &mut Pty) {
    for q in ["hello there", "second question"] {
        pty.type_text(q);
        pty.send(ENTER);
        pty.wait_text(&format!("echo: {q}"));
    }
}

#[test]
fn the_branch_summary_question_is_laid_out_as_pis_selector() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    two_exchanges(&mut pty);
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("Session Tree");
    pty.send(UP);
    pty.send(UP);
    pty.send(ENTER);
    pty.wait_text("Summarize branch?");
    let rows = pty.rows();
    let title = row_of(&pty, |r| r == " Summarize branch?") as usize;
    // Rule, blank, title, blank, choices, blank, key help, blank, rule.
    assert!(rows[title - 2].starts_with("────"), "{rows:#?}");
    assert_eq!(rows[title - 1], "", "{rows:#?}");
    assert_eq!(rows[title + 1], "", "{rows:#?}");
    assert_eq!(rows[title + 2], " → No summary", "{rows:#?}");
    assert_eq!(rows[title + 3], "   Summarize", "{rows:#?}");
    assert_eq!(rows[title + 4], "   Summarize with custom prompt", "{rows:#?}");
    assert_eq!(rows[title + 5], "", "{rows:#?}");
    assert_eq!(
        rows[title + 6],
        " ↑↓ navigate  enter select  escape/ctrl+c cancel",
        "{rows:#?}"
    );
    assert_eq!(rows[title + 7], "", "{rows:#?}");
    assert!(rows[title + 8].starts_with("────"), "{rows:#?}");
    pty.send(ENTER);
    pty.wait_text("Navigated to selected point");
    // A status line: dim, not the success colour.
    let row = row_of(&pty, |r| r.starts_with(" Navigated to selected point"));
    let cell = pty.cell_at(row, 1).expect("cell");
    assert!(cell.dim(), "the status line is dim");
    assert_eq!(cell.fgcolor(), Color::Default);
    quit(&mut pty);
}

#[test]
fn the_tree_search_line_shows_a_cursor_after_the_query() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    two_exchanges(&mut pty);
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("Session Tree");
    let row = row_of(&pty, |r| r.starts_with("  Type to search:"));
    assert!(pty.cell_at(row, 18).expect("cell").inverse(), "cursor after the label");
    pty.type_text("second");
    pty.wait_text("Type to search: second");
    // The filtered list is shorter, so the dock (and the search line) moved.
    let row = row_of(&pty, |r| r.starts_with("  Type to search:"));
    let inverse: Vec<u16> = (0..100)
        .filter(|&c| pty.cell_at(row, c).is_some_and(|cell| cell.inverse()))
        .collect();
    assert!(
        pty.cell_at(row, 24).expect("cell").inverse(),
        "cursor after the query: {inverse:?}"
    );
    assert!(!pty.cell_at(row, 23).expect("cell").inverse());
    // Escape clears the query, a second one closes the tree.
    pty.send(ESC);
    pty.wait_for("the query cleared", Duration::from_secs(5), |c| {
        !c.contains("search: second")
    });
    pty.send(ESC);
    pty.wait_for("the tree closed", Duration::from_secs(5), |c| {
        !c.contains("Session Tree")
    });
    quit(&mut pty);
}

#[test]
fn fork_lists_the_messages_two_rows_each_with_the_newest_selected() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    two_exchanges(&mut pty);
    pty.type_text("/fork");
    pty.send(ENTER);
    pty.wait_text("Fork from Message");
    let rows = pty.rows();
    let title = row_of(&pty, |r| r == " Fork from Message") as usize;
    assert!(pty.cell_at(title as u16, 1).expect("cell").bold());
    assert_eq!(
        rows[title + 1],
        " Select a user message to copy the active path up to that point into a new session"
    );
    assert!(rows[title + 3].starts_with("────"), "{rows:#?}");
    let list: Vec<&str> = rows[title + 5..title + 11].iter().map(String::as_str).collect();
    assert_eq!(
        list,
        [
            "  hello there",
            "  Message 1 of 2",
            "",
            "› second question",
            "  Message 2 of 2",
            "",
        ],
        "{rows:#?}"
    );
    assert!(rows[title + 12].starts_with("────"), "{rows:#?}");
    pty.send(ENTER);
    pty.wait_text("Forked to new session");
    // The chosen message comes back to the editor; the exchange before it stays.
    pty.wait_for("the message in the editor", Duration::from_secs(5), |c| {
        c.lines().any(|l| l.trim_end() == "second question") && c.contains("echo: hello there")
    });
    pty.send(CTRL_C);
    pty.wait_for("the editor cleared", Duration::from_secs(5), |c| {
        !c.lines().any(|l| l.trim_end() == "second question")
    });
    quit(&mut pty);
}

#[test]
fn a_new_session_is_announced_in_the_accent_colour_between_blank_rows() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("/new");
    pty.send(ENTER);
    pty.wait_text("New session started");
    let rows = pty.rows();
    let row = row_of(&pty, |r| r == " ✓ New session started") as usize;
    assert_eq!(&rows[row - 2..row], ["", ""], "{rows:#?}");
    assert_eq!(rows[row + 1], "", "{rows:#?}");
    // The `system` theme without reported colours: accent is palette colour 5 (success
    // would be 2).
    assert_eq!(pty.fg_at(row as u16, 1), Some(Color::Idx(5)));
    quit(&mut pty);
}

#[test]
fn thinking_level_changes_are_status_lines_that_replace_each_other() {
    let s = setup(Script::echo());
    let mut pty = Pty::spawn(
        &["--model", "mock-openai/mock-thinker"],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
    );
    pty.wait_text("mock-thinker");
    pty.type_text("/thinking");
    pty.send(ENTER);
    pty.wait_text("Thinking Level");
    pty.send("\x1b[B");
    pty.send(ENTER);
    pty.wait_text("Thinking level: ");
    pty.send("\x1b[Z"); // Shift+Tab cycles
    pty.wait_for("the next level", Duration::from_secs(5), |c| {
        c.lines()
            .filter(|l| l.trim_start().starts_with("Thinking level: "))
            .count()
            == 1
            && !c.contains("Thinking Level")
            && c.contains("Thinking level: ")
    });
    let before = pty.contents();
    std::thread::sleep(Duration::from_millis(300));
    let rows = pty.rows();
    let lines: Vec<&String> = rows.iter().filter(|l| l.contains("Thinking level: ")).collect();
    assert_eq!(lines.len(), 1, "{before}");
    let row = row_of(&pty, |r| r.starts_with(" Thinking level: "));
    assert!(pty.cell_at(row, 1).expect("cell").dim());
    quit(&mut pty);
}

#[test]
fn code_blocks_take_the_themes_syntax_colours() {
    let s = setup(Script::sequential(vec![pi_test_support::Turn::text(
        "```python\ndef f(x):\n    return x + 1\n```",
    )]));
    let mut pty = s.pi(30, 100);
    pty.type_text("code please");
    pty.send(ENTER);
    pty.wait_text("return x + 1");
    let row = row_of(&pty, |r| r.trim_start().starts_with("def f(x):"));
    let col = pty.rows()[row as usize].find("def").expect("def") as u16;
    // The `system` theme without reported colours: keywords in palette colour 4, numbers
    // in 5 (pi 1.6's syntax colours), not a fixed 24-bit palette.
    assert_eq!(pty.fg_at(row, col), Some(Color::Idx(4)), "{:#?}", pty.rows());
    let next = row + 1;
    let one = pty.rows()[next as usize].find('1').expect("1") as u16;
    assert_eq!(pty.fg_at(next, one), Some(Color::Idx(5)));
    quit(&mut pty);
}
