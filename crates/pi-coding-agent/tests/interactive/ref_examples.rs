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
