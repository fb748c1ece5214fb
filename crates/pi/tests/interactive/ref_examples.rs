//! pi 1.6's own UI examples (`examples/extensions/` of the reference install) in our terminal
//! UI at 100x30, with what pi 1.6 shows for them where it shows it: a dialog, an overlay, a
//! custom footer, widgets above and below the editor, a built-in tool's renderer and a
//! message renderer.

use std::path::PathBuf;
use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::extensions::{extension_env, row_of};
use super::pty::Pty;
use super::{quit, setup, Setup, ENTER};

/// The reference's example `name`, or `None` when the reference is not installed.
fn example(name: &str) -> Option<PathBuf> {
    let r = pi_test_support::find_reference()?;
    let path = r
        .dir
        .join("node_modules/@earendil-works/pi-coding-agent/examples/extensions")
        .join(name);
    path.is_file().then_some(path)
}

/// `pi -e <example>` on a 100x30 screen once the first frame is there; `None` (after a
/// `skipped:` line, a failure under CI) without Node or the reference.
fn spawn_example(test: &str, name: &str, s: &Setup) -> Option<Pty> {
    let (node, modules) = extension_env(test)?;
    let Some(path) = example(name) else {
        return pi_test_support::require::missing("the reference pi's examples", test);
    };
    Some(super::extensions::spawn_extension(&path, s, &node, &modules))
}

/// The row of the editor's top border (the first full-width rule above the footer).
fn editor_top(pty: &Pty) -> usize {
    let rows = pty.rows();
    let footer = row_of(pty, "mock-model").expect("footer");
    (0..footer)
        .rev()
        .filter(|&r| rows[r].starts_with("────"))
        .nth(1)
        .expect("editor borders")
}

#[test]
fn timed_confirm_shows_a_select_dialog_in_the_editors_place() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "timed_confirm_shows_a_select_dialog_in_the_editors_place",
        "timed-confirm.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/timed-select");
    pty.send(ENTER);
    pty.wait_text("Pick an option");
    pty.wait_text("Option C");
    // The dialog sits above the footer, where the editor was; the first option is selected.
    let title = row_of(&pty, "Pick an option").expect("title");
    let a = row_of(&pty, "Option A").expect("option A");
    let footer = row_of(&pty, "mock-model").expect("footer");
    assert!(title < a && a < footer, "{:#?}", pty.rows());
    assert!(pty.rows()[a].contains("→ Option A"), "{:#?}", pty.rows());
    pty.send("\x1b[B");
    pty.wait_for("second selected", Duration::from_secs(10), |_| {
        row_of(&pty, "→ Option B").is_some()
    });
    pty.send(ENTER);
    pty.wait_text("Selected: Option B");
    assert!(!pty.contents().contains("Pick an option"), "the dialog closed");
    quit(&mut pty);
}

#[test]
fn overlay_test_draws_a_centred_70_column_overlay_that_takes_the_keys() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "overlay_test_draws_a_centred_70_column_overlay_that_takes_the_keys",
        "overlay-test.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/overlay-test");
    pty.send(ENTER);
    pty.wait_text("Search");
    pty.wait_text("Cancel");
    // 70 columns wide on 100: its box starts at column 15.
    let rows = pty.rows();
    let top = rows
        .iter()
        .position(|r| r.contains('╭') || r.contains('┌'))
        .expect("overlay top");
    let col = rows[top].chars().position(|c| c == '╭' || c == '┌').expect("corner");
    assert_eq!(col, 15, "{rows:#?}");
    // Typing goes into the selected field, Enter returns it.
    pty.type_text("abc");
    pty.wait_text("abc");
    pty.send(ENTER);
    pty.wait_text("Search: \"abc\"");
    assert!(
        row_of(&pty, "Cancel").is_none(),
        "the overlay closed: {:#?}",
        pty.rows()
    );
    quit(&mut pty);
}

#[test]
fn custom_footer_replaces_pis_footer_with_its_token_line() {
    let s = setup(Script::sequential(vec![Turn::text("a reply")]));
    let Some(mut pty) = spawn_example(
        "custom_footer_replaces_pis_footer_with_its_token_line",
        "custom-footer.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/footer");
    pty.send(ENTER);
    pty.wait_text("Custom footer enabled");
    // One line: totals on the left, the model on the right; pi's cwd line is gone.
    pty.wait_for("custom footer", Duration::from_secs(10), |_| {
        pty.rows()
            .iter()
            .any(|r| r.starts_with("↑0 ↓0 $0.000") && r.trim_end().ends_with("mock-model"))
    });
    let cwd = s.cwd.path().display().to_string();
    assert!(!pty.contents().contains(&cwd), "{}", pty.contents());
    // It follows the session: the reply's tokens are counted.
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("a reply");
    pty.wait_for("counted", Duration::from_secs(10), |_| {
        pty.rows()
            .iter()
            .any(|r| r.trim_end().ends_with("mock-model") && !r.starts_with("↑0 ↓0"))
    });
    pty.type_text("/footer");
    pty.send(ENTER);
    pty.wait_text("Default footer restored");
    pty.wait_text(&cwd);
    quit(&mut pty);
}

#[test]
fn widget_placement_puts_one_widget_above_and_one_below_the_editor() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "widget_placement_puts_one_widget_above_and_one_below_the_editor",
        "widget-placement.ts",
        &s,
    ) else {
        return;
    };
    pty.wait_text("Below editor widget");
    let above = row_of(&pty, "Above editor widget").expect("above");
    let below = row_of(&pty, "Below editor widget").expect("below");
    let top = editor_top(&pty);
    let footer = row_of(&pty, "mock-model").expect("footer");
    assert!(above < top && top < below && below < footer, "{:#?}", pty.rows());
    // Text widgets have one column of padding.
    assert!(
        pty.rows()[above].starts_with(" Above editor widget"),
        "{:#?}",
        pty.rows()
    );
    assert!(
        pty.rows()[below].starts_with(" Below editor widget"),
        "{:#?}",
        pty.rows()
    );
    quit(&mut pty);
}

#[test]
fn built_in_tool_renderer_draws_read_compactly() {
    let s = setup(Script::sequential(vec![
        Turn::tool_call("read", serde_json::json!({"path": "notes.txt"})),
        Turn::text("read it"),
    ]));
    std::fs::write(s.cwd.path().join("notes.txt"), "one\ntwo\nthree\n").expect("notes");
    let Some(mut pty) = spawn_example(
        "built_in_tool_renderer_draws_read_compactly",
        "built-in-tool-renderer.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("read the notes");
    pty.send(ENTER);
    pty.wait_text("read it");
    // The call on one line, the result as its line count (the file's trailing newline is
    // a fourth, empty line).
    pty.wait_text("read notes.txt");
    pty.wait_text("4 lines");
    assert!(row_of(&pty, "three").is_none(), "collapsed: {:#?}", pty.rows());
    quit(&mut pty);
}

#[test]
fn message_renderer_draws_status_messages_with_their_level() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "message_renderer_draws_status_messages_with_their_level",
        "message-renderer.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/status warn disk almost full");
    pty.send(ENTER);
    pty.wait_text("[WARN] disk almost full");
    let row = row_of(&pty, "[WARN] disk almost full").expect("message");
    // Inside a box padded by one column (the output padding).
    assert!(pty.rows()[row].starts_with(" [WARN]"), "{:#?}", pty.rows());
    assert!(!pty.contents().contains("  at "), "collapsed: no time");
    // Expanded, the time shows under it.
    pty.send("\x0f");
    pty.wait_for("time shown", Duration::from_secs(10), |_| {
        row_of(&pty, "[WARN] disk almost full")
            .and_then(|row| pty.rows().get(row + 1).cloned())
            .is_some_and(|r| r.trim_start().starts_with("at "))
    });
    assert!(s.server.requests().is_empty(), "display-only");
    quit(&mut pty);
}

#[test]
fn border_status_editor_shows_the_context_use_in_its_bottom_border() {
    let s = setup(Script::sequential(vec![Turn::text("a reply")]));
    let Some(mut pty) = spawn_example(
        "border_status_editor_shows_the_context_use_in_its_bottom_border",
        "border-status-editor.ts",
        &s,
    ) else {
        return;
    };
    // `ctx.getContextUsage()` before any message: 0% of the model's 128k window, as pi 1.6
    // shows it (not `ctx ?`, which is for a usage that is not known).
    pty.wait_for("context in the border", Duration::from_secs(10), |_| {
        pty.rows()
            .iter()
            .any(|r| r.starts_with("─ mock-openai/mock-model · off ─") && r.contains(" ctx 0%/128k · "))
    });
    assert!(!pty.contents().contains("ctx ?"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn snake_draws_its_board_over_the_transcript_above_the_footer() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "snake_draws_its_board_over_the_transcript_above_the_footer",
        "snake.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/snake");
    pty.send(ENTER);
    pty.wait_text("SNAKE");
    // pi 1.6 at 100x30: the board replaces the editor, a rounded box 82 columns wide from
    // the second column, its bottom border right above the cwd line.
    let title = row_of(&pty, "SNAKE │ Score: 0").expect("title");
    let rows = pty.rows();
    assert!(rows[title].starts_with(" │SNAKE │ Score: 0 │ High: 0"), "{rows:#?}");
    assert!(
        rows[title - 1].starts_with(" ╭") && rows[title - 1].trim_end().ends_with('╮'),
        "{rows:#?}"
    );
    assert_eq!(rows[title - 1].trim_end().chars().count(), 83, "{rows:#?}");
    let cwd = s.cwd.path().display().to_string();
    let cwd_row = row_of(&pty, &cwd).expect("cwd line");
    assert!(rows[cwd_row - 1].starts_with(" ╰"), "{rows:#?}");
    // Q leaves the game and gives the editor back.
    pty.send("q");
    pty.wait_for("game closed", Duration::from_secs(10), |c| !c.contains("SNAKE"));
    quit(&mut pty);
}

#[test]
fn overlay_percent_places_the_overlay_within_the_free_room() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "overlay_percent_places_the_overlay_within_the_free_room",
        "overlay-qa-tests.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/overlay-percent");
    pty.send(ENTER);
    pty.wait_text("Percent Test");
    // pi 1.6: row 0%, col 50% of the 70 columns a 30-wide overlay leaves free: column 35.
    let rows = pty.rows();
    assert_eq!(
        rows[0].find('╭').map(|b| rows[0][..b].chars().count()),
        Some(35),
        "{rows:#?}"
    );
    assert!(rows[0].contains("─ Percent Test ─"), "{rows:#?}");
    // Next: 50% down, centred.
    pty.send(" ");
    pty.wait_text("rowPercent: 50 (middle)");
    let row = row_of(&pty, "rowPercent: 50").expect("overlay");
    let rows = pty.rows();
    // The 8-row box in the middle of the 22 rows above it free: its top at row 11.
    assert_eq!(row, 11 + 2, "{rows:#?}");
    assert_eq!(
        rows[row].find('│').map(|b| rows[row][..b].chars().count()),
        Some(35),
        "{rows:#?}"
    );
    pty.send("\x1b");
    pty.wait_for("closed", Duration::from_secs(10), |c| !c.contains("Percent Test"));
    quit(&mut pty);
}

#[test]
fn a_components_own_passive_overlay_shows_beside_the_one_taking_keys() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "a_components_own_passive_overlay_shows_beside_the_one_taking_keys",
        "overlay-qa-tests.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/overlay-passive");
    pty.send(ENTER);
    pty.wait_text("Non-Capturing Demo");
    // `tui.showOverlay` from the component: a timer panel at the top right (margins 1 and
    // 2), which takes no keys.
    pty.wait_text("nonCapturing: true");
    let timer = row_of(&pty, "─ Timer ─").expect("timer panel");
    assert_eq!(timer, 1, "{:#?}", pty.rows());
    assert!(pty.rows()[timer].trim_end().ends_with("╮"), "{:#?}", pty.rows());
    assert_eq!(pty.rows()[timer].chars().count(), 98, "{:#?}", pty.rows());
    pty.send("ab");
    pty.wait_text("> ab");
    pty.wait_text("focused=true inputs=2");
    // Escape closes both.
    pty.send("\x1b");
    pty.wait_for("both closed", Duration::from_secs(10), |c| {
        !c.contains("Non-Capturing Demo") && !c.contains("nonCapturing: true")
    });
    quit(&mut pty);
}

#[test]
fn info_notifications_are_status_lines_the_next_one_replaces() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "info_notifications_are_status_lines_the_next_one_replaces",
        "overlay-qa-tests.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/overlay-stack");
    pty.send(ENTER);
    pty.wait_text("Overlay #3");
    // Three `notify(…, "info")` calls in a row: one status line, each replacing the one
    // before (pi 1.6's showStatus), not three lines (the overlays cover most of it).
    std::thread::sleep(Duration::from_millis(300));
    let shown = pty.rows().iter().filter(|r| r.contains("Showing overlay")).count();
    assert_eq!(shown, 1, "{:#?}", pty.rows());
    for _ in 0..3 {
        pty.send("\x1b");
        std::thread::sleep(Duration::from_millis(300));
    }
    pty.wait_text("Closed in order:");
    assert!(!pty.contents().contains("Showing overlay"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn overlay_handles_focus_raises_a_panel_and_gives_it_the_keys() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "overlay_handles_focus_raises_a_panel_and_gives_it_the_keys",
        "overlay-qa-tests.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/overlay-focus");
    pty.send(ENTER);
    pty.wait_text("Focus + Input Demo");
    pty.wait_text("Current focus: Controller");
    // Three non-capturing panels; the first, focused once while they were made, is drawn
    // over the second (its right border whole where they overlap), as pi 1.6 draws it.
    let alpha = row_of(&pty, "Alpha visible").expect("alpha");
    let rows = pty.rows();
    assert!(
        rows[alpha + 2].starts_with(" Pi │ Input: >                       │"),
        "{rows:#?}"
    );
    // Tab: the controller focuses Alpha, which takes the keys.
    pty.send("\t");
    pty.wait_text("Alpha FOCUSED");
    pty.wait_text("Current focus: Alpha");
    pty.type_text("hi");
    pty.wait_text("Keys: \"h\" \"i\"");
    // Tab in Alpha: Beta comes to the front, over Alpha.
    pty.send("\t");
    pty.wait_text("Beta FOCUSED");
    let beta = row_of(&pty, "Beta FOCUSED").expect("beta");
    let rows = pty.rows();
    assert!(rows[beta - 1].contains("│ Input: > hi           ╭────"), "{rows:#?}");
    pty.send("\x03");
    pty.wait_for("closed", Duration::from_secs(10), |c| !c.contains("Focus + Input Demo"));
    quit(&mut pty);
}

#[test]
fn tic_tac_toe_boards_keep_their_alignment_in_the_reply() {
    let s = setup(Script::echo());
    let Some(mut pty) = spawn_example(
        "tic_tac_toe_boards_keep_their_alignment_in_the_reply",
        "tic-tac-toe.ts",
        &s,
    ) else {
        return;
    };
    pty.type_text("/tic-tac-toe");
    pty.send(ENTER);
    pty.wait_text("ENTER play");
    // X in the centre: the game tells the model, and the echoed reply draws the board with
    // its lines indented as written (marked keeps a paragraph line's indent, as pi shows).
    pty.send(ENTER);
    pty.wait_text("Agent is thinking");
    // Escape leaves the game, showing the transcript.
    pty.send("\x1b");
    pty.wait_text("echo: Player X played at (row=1, col=1)");
    pty.wait_for("board rows", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.starts_with("  [1,0] |    X    | [1,2]"))
    });
    assert!(
        pty.rows().iter().any(|r| r.starts_with("  [2,0] | [2,1] | [2,2]")),
        "{:#?}",
        pty.rows()
    );
    quit(&mut pty);
}
