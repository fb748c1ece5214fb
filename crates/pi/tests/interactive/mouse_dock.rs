//! Fullscreen clicks on what is drawn in the editor's place, in a pseudo-terminal with SGR
//! mouse reports, as pi 1.6 takes them: the completion menu (a press picks, a click applies),
//! the editor's text (a click puts the cursor on the clicked cell), the transcript search box
//! (a click changes nothing there and the search keeps the keys), /settings rows and picker
//! search fields, the wheel over a picker that takes no mouse (the transcript scrolls
//! instead), and right or middle clicks (nothing).

use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::pty::Pty;
use super::{quit, setup, CTRL_C, ENTER, ESC};

/// Ctrl+Shift+F as the kitty keyboard protocol sends it: the transcript search.
const SEARCH: &str = "\x1b[102;6u";

/// A left press and release on screen row `row` (from 0) at column `col` (from 0).
pub(super) fn click(pty: &mut Pty, row: usize, col: usize) {
    press(pty, row, col);
    pty.send(&format!("\x1b[<0;{};{}m", col + 1, row + 1));
}

fn press(pty: &mut Pty, row: usize, col: usize) {
    pty.send(&format!("\x1b[<0;{};{}M", col + 1, row + 1));
}

/// The screen row whose text starts with `prefix`.
pub(super) fn row_starting(pty: &Pty, prefix: &str) -> usize {
    let rows = pty.rows();
    rows.iter()
        .position(|r| r.starts_with(prefix))
        .unwrap_or_else(|| panic!("no row starting with {prefix:?}:\n{rows:#?}"))
}

fn wait_row(pty: &Pty, what: &str, f: impl Fn(&[String]) -> bool) {
    let start = std::time::Instant::now();
    while !f(&pty.rows()) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{what}; screen:\n{}",
            pty.contents()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_press_on_a_menu_item_picks_it_and_the_click_applies_it() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.send("/");
    pty.wait_text("(1/");
    assert!(pty.rows()[row_starting(&pty, "→ ")].starts_with("→ settings"));
    let model = row_starting(&pty, "  model ");
    press(&mut pty, model, 4);
    wait_row(&pty, "the press picks `model`", |rows| {
        rows[model].starts_with("→ model")
    });
    // Nothing applied yet: the menu is still open.
    assert!(pty.contents().contains("(2/"), "{}", pty.contents());
    pty.send(&format!("\x1b[<0;5;{}m", model + 1));
    pty.wait_for("the menu closes", Duration::from_secs(10), |c| !c.contains("(2/"));
    // Applied as Tab applies it: the command is in the editor, not run.
    let editor = row_starting(&pty, "/model");
    assert_eq!(pty.rows()[editor].trim_end(), "/model");
    assert!(!pty.contents().contains("Only showing models"));
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("/model"));
    quit(&mut pty);
}

#[test]
fn a_press_moved_off_the_item_before_the_release_only_picks_it() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.send("/");
    pty.wait_text("(1/");
    let tree = row_starting(&pty, "  tree ");
    press(&mut pty, tree, 4);
    pty.send(&format!("\x1b[<32;9;{}M\x1b[<0;9;{}m", tree + 1, tree + 1));
    wait_row(&pty, "`tree` picked", |rows| {
        rows.iter().any(|r| r.starts_with("→ tree"))
    });
    pty.wait_stable(Duration::from_millis(300));
    assert!(pty.contents().contains("(3/"), "{}", pty.contents());
    // The wheel over the menu moves the pick a row.
    pty.send(&format!("\x1b[<65;5;{}M", tree + 1));
    wait_row(&pty, "the wheel picks `thinking`", |rows| {
        rows.iter().any(|r| r.starts_with("→ thinking"))
    });
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("→ thinking"));
    quit(&mut pty);
}

#[test]
fn a_click_in_the_editor_puts_the_cursor_on_the_clicked_cell() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("hello wide 日本語 text");
    pty.wait_text("日本語 text");
    let row = row_starting(&pty, "hello wide");
    // Column 12 is the right half of 日 (columns 11 and 12): the cursor goes before it.
    click(&mut pty, row, 12);
    pty.type_text("X");
    pty.wait_text("hello wide X日本語 text");
    // Past the end of the text: the end of the line.
    click(&mut pty, row, 60);
    pty.type_text("Z");
    pty.wait_text("hello wide X日本語 textZ");
    // A drag over the text selects it instead (the cursor stays where it was).
    pty.send(&format!("\x1b[<0;1;{r}M\x1b[<32;4;{r}M\x1b[<0;4;{r}m", r = row + 1));
    pty.type_text("Q");
    pty.wait_text("hello wide X日本語 textZQ");
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("hello wide"));
    quit(&mut pty);
}

#[test]
fn a_click_on_a_line_of_a_multi_line_draft_moves_there() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.send("\x1b[200~first line\nsecond line\x1b[201~");
    pty.wait_text("second line");
    let first = row_starting(&pty, "first line");
    click(&mut pty, first, 2);
    pty.type_text("X");
    pty.wait_text("fiXrst line");
    assert!(pty.rows()[first + 1].starts_with("second line"));
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("second line"));
    quit(&mut pty);
}

#[test]
fn a_click_on_the_search_box_keeps_the_search_and_its_cursor() {
    let s = setup(Script::sequential(vec![Turn::text("alpha beta gamma")]));
    let mut pty = s.pi(30, 100);
    pty.type_text("draft");
    pty.wait_text("draft");
    pty.send(SEARCH);
    pty.wait_text("Find in transcript");
    pty.type_text("escape");
    pty.wait_for("the query", Duration::from_secs(5), |c| c.contains("│ escape "));
    let rows = pty.rows();
    let col = rows[2]
        .find("│ escape")
        .map(|b| rows[2][..b].chars().count())
        .expect("search box");
    // On the query's second letter: nothing moves, the next letter goes at the end.
    click(&mut pty, 2, col + 3);
    pty.type_text("Z");
    pty.wait_text("escapeZ");
    // A click in the editor moves its cursor, but the search keeps the keys.
    let editor = row_starting(&pty, "draft");
    click(&mut pty, editor, 1);
    pty.type_text("Q");
    pty.wait_text("escapeZQ");
    assert!(pty.rows()[editor].starts_with("draft"));
    pty.send(ESC);
    pty.wait_for("search closed", Duration::from_secs(5), |c| !c.contains("escapeZQ"));
    pty.type_text("W");
    pty.wait_text("dWraft");
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("raft"));
    quit(&mut pty);
}

#[test]
fn the_wheel_over_the_model_picker_scrolls_the_transcript() {
    let reply: String = (1..=40).map(|i| format!("reply line {i:02}\n\n")).collect();
    let s = setup(Script::sequential(vec![Turn::text(reply)]));
    let mut pty = s.pi(30, 100);
    pty.type_text("lines");
    pty.send(ENTER);
    pty.wait_text("reply line 40");
    pty.type_text("/model");
    pty.send(ENTER);
    pty.wait_text("mock-thinker");
    let marker = row_starting(&pty, "→ ");
    pty.send(&format!(
        "\x1b[<65;5;{r}M\x1b[<64;5;{r}M\x1b[<64;5;{r}M",
        r = marker + 1
    ));
    pty.wait_text("Jump to latest message");
    // The picker's pick stayed where it was.
    assert!(pty.rows()[marker].starts_with("→ "), "{}", pty.contents());
    assert_eq!(row_starting(&pty, "→ "), marker);
    // A click on another model does nothing either (pi's model picker takes no mouse).
    let other = marker + 1;
    click(&mut pty, other, 6);
    pty.wait_stable(Duration::from_millis(300));
    assert_eq!(row_starting(&pty, "→ "), marker);
    pty.send(ESC);
    pty.wait_for("picker closed", Duration::from_secs(5), |c| !c.contains("mock-thinker"));
    quit(&mut pty);
}

#[test]
fn a_click_on_a_settings_row_changes_it_and_a_press_alone_only_picks_it() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Type to search");
    let block = row_starting(&pty, "  Block images");
    assert!(pty.rows()[block].trim_end().ends_with("false"));
    // Pressed, moved off and let go: the row is picked, its value unchanged.
    press(&mut pty, block, 5);
    pty.send(&format!("\x1b[<32;5;{r}M\x1b[<0;5;{r}m", r = block + 2));
    wait_row(&pty, "`Block images` picked", |rows| {
        rows[block].starts_with("→ Block images")
    });
    pty.wait_stable(Duration::from_millis(300));
    assert!(pty.rows()[block].trim_end().ends_with("false"), "{}", pty.contents());
    // A click changes it, as Enter does.
    click(&mut pty, block, 5);
    wait_row(&pty, "`Block images` on", |rows| {
        rows[block].trim_end().ends_with("true")
    });
    // A click on a row without a value list opens its submenu.
    pty.type_text("theme");
    pty.wait_for("the search", Duration::from_secs(5), |c| c.contains("> theme"));
    let rows = pty.rows();
    let theme = rows
        .iter()
        .position(|r| r.trim_start_matches(['→', ' ']).starts_with("Theme "))
        .unwrap_or_else(|| panic!("{rows:#?}"));
    click(&mut pty, theme, 4);
    pty.wait_text("Esc to go back");
    // A click on a theme in the submenu chooses it.
    let rows = pty.rows();
    let dark = rows
        .iter()
        .position(|r| r.trim_start_matches(['→', ' ']).starts_with("dark"))
        .unwrap_or_else(|| panic!("{rows:#?}"));
    click(&mut pty, dark, 4);
    pty.wait_text("Type to search");
    wait_row(&pty, "the theme row says dark", |rows| {
        rows.iter()
            .any(|r| r.contains("Theme ") && r.trim_end().ends_with("dark"))
    });
    pty.send(ESC);
    pty.wait_for("settings closed", Duration::from_secs(5), |c| {
        !c.contains("Type to search")
    });
    quit(&mut pty);
}

#[test]
fn a_press_in_a_picker_search_field_moves_its_cursor() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/model");
    pty.send(ENTER);
    pty.wait_text("mock-thinker");
    pty.type_text("mock");
    pty.wait_text("> mock");
    let field = row_starting(&pty, "> mock");
    // Column 3 is the query's second letter.
    click(&mut pty, field, 3);
    pty.type_text("X");
    pty.wait_text("> mXock");
    pty.send(ESC);
    pty.wait_for("picker closed", Duration::from_secs(5), |c| !c.contains("> mXock"));
    // The same in /settings.
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Type to search");
    pty.type_text("theme");
    pty.wait_text("> theme");
    let field = row_starting(&pty, "> theme");
    click(&mut pty, field, 2);
    pty.type_text("Y");
    pty.wait_text("> Ytheme");
    pty.send(ESC);
    pty.wait_for("settings closed", Duration::from_secs(5), |c| {
        !c.contains("Type to search")
    });
    // And in /scoped-models.
    pty.type_text("/scoped-models");
    pty.send(ENTER);
    pty.wait_text("Model Configuration");
    pty.type_text("mock");
    pty.wait_text("> mock");
    let field = row_starting(&pty, "> mock");
    click(&mut pty, field, 4);
    pty.type_text("Z");
    pty.wait_text("> moZck");
    pty.send(ESC);
    pty.wait_for("closed", Duration::from_secs(5), |c| !c.contains("Model Configuration"));
    quit(&mut pty);
}

#[test]
fn a_click_in_a_wrapped_or_scrolled_draft_lands_on_the_row_shown() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    // One line of 99 + 20 letters: it wraps after the 99th.
    let long = format!("{}{}", "a".repeat(99), "b".repeat(20));
    pty.send(&format!("\x1b[200~{long}\x1b[201~"));
    pty.wait_text("bbbbbbbbbbbbbbbbbbbb");
    let first = row_starting(&pty, "aaaa");
    // Past the end of the first row: on its last letter (its end is the next row's start).
    click(&mut pty, first, 99);
    pty.type_text("X");
    // The X goes before the last a (which moves down to the next row).
    let want = format!("{}X", "a".repeat(98));
    wait_row(&pty, "X before the last a", |rows| {
        rows[first].trim_end() == want && rows[first + 1].starts_with("abbb")
    });
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("bbbb"));
    // Twenty lines (Ctrl+J starts a new one): the editor shows the last ones, scrolled.
    for i in 1..=20 {
        pty.type_text(&format!("line {i:02}"));
        if i < 20 {
            pty.send("\n");
        }
    }
    pty.wait_text("line 20");
    pty.wait_text("more");
    let rows = pty.rows();
    let top = rows.iter().position(|r| r.starts_with("line ")).expect("a draft row");
    let shown = rows[top][..7].to_string();
    assert_ne!(shown, "line 01", "{rows:#?}");
    click(&mut pty, top, 2);
    pty.type_text("Y");
    let expected = format!("{}Y{}", &shown[..2], &shown[2..]);
    pty.wait_text(&expected);
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("line 20"));
    quit(&mut pty);
}

#[test]
fn right_and_middle_clicks_change_nothing_and_a_double_click_in_the_editor_copies_a_word() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("WAYLAND_DISPLAY", ""), ("DISPLAY", "")],
    );
    pty.wait_text("mock-model");
    pty.send("/");
    pty.wait_text("(1/");
    let tree = row_starting(&pty, "  tree ");
    // Right, then middle button on an item: no pick, no completion.
    for button in [2, 1] {
        pty.send(&format!("\x1b[<{button};5;{r}M\x1b[<{button};5;{r}m", r = tree + 1));
    }
    pty.wait_stable(Duration::from_millis(300));
    assert!(pty.rows()[row_starting(&pty, "→ ")].starts_with("→ settings"));
    pty.send(CTRL_C);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("(1/"));
    pty.type_text("alpha beta gamma");
    pty.wait_text("alpha beta gamma");
    let row = row_starting(&pty, "alpha beta");
    pty.send(&format!("\x1b[<2;3;{r}M\x1b[<2;3;{r}m", r = row + 1));
    pty.type_text("X");
    pty.wait_text("alpha beta gammaX");
    // Two clicks on "beta": the word is selected and copied (OSC 52 without a display).
    let (y, x) = (row + 1, 8);
    pty.send(&format!(
        "\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m"
    ));
    pty.wait_for("the word copied", Duration::from_secs(10), |_| {
        String::from_utf8_lossy(&pty.raw()).contains("\x1b]52;c;YmV0YQ==\x07")
    });
    // Ctrl+C twice within half a second quits.
    std::thread::sleep(Duration::from_millis(600));
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("gammaX"));
    quit(&mut pty);
}

#[test]
fn a_press_in_the_login_fields_moves_their_cursor() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 120);
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Sign in with an API key");
    pty.send("\x1b[B");
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.type_text("mock-anth");
    pty.wait_text("> mock-anth");
    let field = row_starting(&pty, "> mock-anth");
    // Column 4 is the "c": the letter goes before it, and the filter still finds the provider.
    click(&mut pty, field, 4);
    pty.type_text("o");
    pty.wait_text("> moock-anth");
    pty.send("\x7f");
    pty.wait_text("> mock-anth");
    pty.wait_for("filtered", Duration::from_secs(5), |c| {
        c.contains("mock-anthropic") && !c.contains("mock-responses")
    });
    pty.send(ENTER);
    pty.wait_text("Enter mock-anthropic API key");
    pty.type_text("sk-key");
    pty.wait_text("sk-key");
    let field = pty
        .rows()
        .iter()
        .position(|r| r.contains("sk-key"))
        .expect("the key field");
    let col = pty.rows()[field].find("sk-key").expect("key");
    click(&mut pty, field, col + 2);
    pty.type_text("X");
    pty.wait_text("skX-key");
    // Escape steps back through the login screens.
    for _ in 0..4 {
        let c = pty.contents();
        if !["Sign in with", "API key", "Select provider"]
            .iter()
            .any(|t| c.contains(t))
        {
            break;
        }
        pty.send(ESC);
        pty.wait_stable(Duration::from_millis(300));
    }
    quit(&mut pty);
}

#[test]
fn clicks_choose_a_models_thinking_level_in_the_settings_submenu() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Type to search");
    pty.type_text("per model");
    pty.wait_text("> per model");
    let row = row_starting(&pty, "→ Default thinking level per model");
    click(&mut pty, row, 5);
    pty.wait_text("Step 1/2");
    // Its search field takes a press too: "thinker" typed, "n" put back after "thi".
    pty.type_text("thiker");
    pty.wait_text("> thiker");
    let field = row_starting(&pty, "> thiker");
    click(&mut pty, field, 5);
    pty.type_text("n");
    pty.wait_text("> thinker");
    let thinker = row_starting(&pty, "→ mock-thinker");
    click(&mut pty, thinker, 5);
    pty.wait_text("Step 2/2");
    let high = pty
        .rows()
        .iter()
        .position(|r| r.trim_start().starts_with("high"))
        .expect("the high row");
    click(&mut pty, high, 6);
    pty.wait_text("Step 1/2");
    wait_row(&pty, "mock-thinker set to high", |rows| {
        rows.iter().any(|r| r.contains("mock-thinker") && r.contains("high"))
    });
    pty.send(ESC);
    pty.wait_text("1 configured");
    pty.send(ESC);
    pty.wait_for("settings closed", Duration::from_secs(5), |c| {
        !c.contains("Type to search")
    });
    quit(&mut pty);
}

#[test]
fn a_click_on_a_thinking_level_chooses_it() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = Pty::spawn(
        &["--model", "mock-openai/mock-thinker"],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
    );
    pty.wait_text("mock-thinker • medium");
    pty.type_text("/thinking");
    pty.send(ENTER);
    pty.wait_text("Thinking Level");
    let high = pty
        .rows()
        .iter()
        .position(|r| r.trim_start().starts_with("high"))
        .expect("the high row");
    press(&mut pty, high, 6);
    wait_row(&pty, "high picked", |rows| rows[high].starts_with("→"));
    pty.send(&format!("\x1b[<0;7;{}m", high + 1));
    pty.wait_for("the picker closed", Duration::from_secs(5), |c| {
        !c.contains("Thinking Level")
    });
    pty.wait_text("mock-thinker • high");
    quit(&mut pty);
}

/// A replacement editor made by an extension takes a click as pi-tui's editor does: its
/// cursor goes to the clicked cell.
#[test]
fn a_click_in_a_replacement_editor_puts_its_cursor_on_the_clicked_cell() {
    let Some((node, modules)) =
        super::extensions::extension_env("a_click_in_a_replacement_editor_puts_its_cursor_on_the_clicked_cell")
    else {
        return;
    };
    let s = setup(Script::sequential(vec![]));
    let mut pty = super::extensions::spawn_with("editor.ts", &s, &node, &modules);
    pty.wait_text("MODE:insert w=100");
    pty.type_text("hello there world");
    pty.wait_text("hello there world");
    let row = row_starting(&pty, "hello there");
    click(&mut pty, row, 6);
    pty.type_text("X");
    pty.wait_text("hello Xthere world");
    // Past the end of the text: the end of the line.
    click(&mut pty, row, 60);
    pty.type_text("Z");
    pty.wait_text("hello Xthere worldZ");
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(10), |c| !c.contains("worldZ"));
    quit(&mut pty);
}

/// An extension's component in the editor's place gets a click in its own rows and columns
/// through its `handleMouse`, as pi-tui hands it one.
#[test]
fn a_click_on_an_extension_component_reaches_its_handle_mouse() {
    let Some((node, modules)) =
        super::extensions::extension_env("a_click_on_an_extension_component_reaches_its_handle_mouse")
    else {
        return;
    };
    let s = setup(Script::sequential(vec![]));
    let mut pty = super::extensions::spawn_with("mouse.ts", &s, &node, &modules);
    pty.type_text("/clicky");
    pty.send(ENTER);
    pty.wait_text("CLICKY last=none");
    let row = row_starting(&pty, "CLICKY last=");
    click(&mut pty, row, 7);
    pty.wait_text("CLICKY last=click/left y=1 x=7");
    let top = row_starting(&pty, "CLICKY top row");
    click(&mut pty, top, 3);
    pty.wait_text("CLICKY last=click/left y=0 x=3");
    pty.send(ESC);
    pty.wait_text("clicky closed");
    quit(&mut pty);
}

/// As in pi 1.6, a component that takes a press gets the drags and the release after it, in
/// its own rows and columns (even past its edges), so it can select by dragging; a burst of
/// drags ends at the last position.
#[test]
fn an_extension_component_that_takes_a_press_gets_the_drag_and_release() {
    let Some((node, modules)) =
        super::extensions::extension_env("an_extension_component_that_takes_a_press_gets_the_drag_and_release")
    else {
        return;
    };
    let s = setup(Script::sequential(vec![]));
    let mut pty = super::extensions::spawn_with("mouse.ts", &s, &node, &modules);
    pty.type_text("/dragger");
    pty.send(ENTER);
    pty.wait_text("DRAGGER idle");
    let top = row_starting(&pty, "DRAGGER top row");
    press(&mut pty, top, 2);
    pty.wait_text("DRAGGER pressed y=0 x=2");
    let mut burst = String::new();
    for col in 3..=40 {
        burst.push_str(&format!("\x1b[<32;{};{}M", col + 1, top + 2));
    }
    pty.send(&burst);
    pty.wait_text("DRAGGER dragging y=0 x=2 to y=1 x=40");
    // Above the component: a row before its own first one.
    pty.send(&format!("\x1b[<32;{};{}M", 12, top));
    pty.wait_text("DRAGGER dragging y=0 x=2 to y=-1 x=11");
    pty.send(&format!("\x1b[<0;{};{}m", 16, top + 3));
    pty.wait_text("DRAGGER selected y=0 x=2 to y=2 x=15");
    pty.send(ESC);
    pty.wait_text("dragger closed");
    quit(&mut pty);
}
