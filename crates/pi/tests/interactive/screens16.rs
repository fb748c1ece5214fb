//! Screens compared with pi 1.6 cell by cell: the selection of `/tree` and `/resume` on the
//! terminal's own background when the `system` theme has no reported colours, `/session`'s
//! dim labels, and `/hotkeys`' tables drawn without a border colour.

use pi_test_support::Turn;
use vt100::Color;

use super::pty::Pty;
use super::{quit, setup, ENTER, ESC};

/// The selected row's background in a list: with the `system` theme and a terminal that
/// reports no colours, pi 1.6 leaves the selection on the terminal's own background.
fn selected_row_background(pty: &Pty) -> Option<Color> {
    let rows = pty.rows();
    let row = rows.iter().position(|r| r.starts_with('›'))?;
    pty.bg_at(row as u16, 0)
}

#[test]
fn without_reported_colours_the_tree_and_resume_selection_keep_the_terminal_background() {
    let s = setup(pi_test_support::Script::sequential(vec![Turn::text("first answer")]));
    let mut pty = s.pi(30, 100);
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("first answer");
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("Session Tree");
    assert_eq!(selected_row_background(&pty), Some(Color::Default));
    pty.send(ESC);
    pty.wait_for("the tree closed", std::time::Duration::from_secs(10), |c| {
        !c.contains("Session Tree")
    });
    pty.type_text("/resume");
    pty.send(ENTER);
    pty.wait_text("Resume Session");
    pty.wait_for("the session listed", std::time::Duration::from_secs(10), |c| {
        c.lines().any(|l| l.starts_with('›'))
    });
    assert_eq!(selected_row_background(&pty), Some(Color::Default));
    pty.send(ESC);
    pty.wait_for("the picker closed", std::time::Duration::from_secs(10), |c| {
        !c.contains("Resume Session")
    });
    quit(&mut pty);
}

#[test]
fn session_info_draws_headings_bold_and_labels_dim() {
    let s = setup(pi_test_support::Script::sequential(vec![Turn::text("first answer")]));
    s.agent
        .write("settings.json", r#"{"theme": "dark"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("first answer");
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_text("Cache Warming");
    let rows = pty.rows();
    let find = |start: &str| {
        rows.iter()
            .position(|r| r.starts_with(start))
            .unwrap_or_else(|| panic!("{start:?} in {rows:#?}")) as u16
    };
    // Headings: bold, in the text colour.
    let heading = find(" Session Info");
    assert!(pty.cell_at(heading, 1).expect("cell").bold());
    assert!(pty.cell_at(find(" Messages"), 1).expect("cell").bold());
    // A label is dim (the theme's `dim` colour), its value in the default colour.
    let id = find(" ID: ");
    let label = pty.fg_at(id, 1).expect("cell");
    assert_ne!(label, Color::Default, "{rows:#?}");
    assert!(!pty.cell_at(id, 1).expect("cell").bold());
    assert_eq!(pty.fg_at(id, 5), Some(Color::Default), "{rows:#?}");
    let user = find(" User: ");
    assert_eq!(pty.fg_at(user, 1), Some(label));
    assert_eq!(pty.fg_at(user, 7), Some(Color::Default));
    quit(&mut pty);
}

#[test]
fn hotkeys_tables_have_rules_in_the_text_colour() {
    let s = setup(pi_test_support::Script::sequential(vec![]));
    s.agent
        .write("settings.json", r#"{"theme": "dark"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    pty.type_text("/hotkeys");
    pty.send(ENTER);
    pty.wait_text("Run bash command (excluded from context)");
    let rows = pty.rows();
    let bottom = rows
        .iter()
        .rposition(|r| r.starts_with(" └"))
        .unwrap_or_else(|| panic!("{rows:#?}")) as u16;
    assert_eq!(pty.fg_at(bottom, 1), Some(Color::Default), "{rows:#?}");
    let row = rows
        .iter()
        .position(|r| r.contains("│ !!"))
        .unwrap_or_else(|| panic!("{rows:#?}")) as u16;
    assert_eq!(pty.fg_at(row, 1), Some(Color::Default), "{rows:#?}");
    quit(&mut pty);
}

#[test]
fn the_settings_cursor_takes_the_selected_rows_accent() {
    let s = setup(pi_test_support::Script::sequential(vec![]));
    s.agent
        .write("settings.json", r#"{"theme": "dark"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Auto-compact");
    let rows = pty.rows();
    let row = rows
        .iter()
        .position(|r| r.starts_with("→ Auto-compact"))
        .unwrap_or_else(|| panic!("{rows:#?}")) as u16;
    let accent = pty.fg_at(row, 2).expect("label cell");
    assert_ne!(accent, Color::Default);
    assert_eq!(pty.fg_at(row, 0), Some(accent), "{rows:#?}");
    // The other rows' labels are in the terminal's own colour.
    assert_eq!(pty.fg_at(row + 1, 2), Some(Color::Default), "{rows:#?}");
    pty.send(ESC);
    pty.wait_for("settings closed", std::time::Duration::from_secs(10), |c| {
        !c.contains("Auto-compact")
    });
    quit(&mut pty);
}

#[test]
fn the_built_in_dark_theme_has_pi_1_6_colours() {
    let s = setup(pi_test_support::Script::sequential(vec![Turn::text("first answer")]));
    s.agent
        .write("settings.json", r#"{"theme": "dark"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("first answer");
    let rows = pty.rows();
    // The version beside the logo is `dim`; the user's message sits on `userMessageBg` in
    // `userMessageText`: 1.6's OKHSL definitions resolved to sRGB.
    assert_eq!(pty.fg_at(1, 7), Some(Color::Rgb(0x7e, 0x88, 0x8e)), "{rows:#?}");
    let user = rows
        .iter()
        .position(|r| r.trim() == "hello")
        .unwrap_or_else(|| panic!("{rows:#?}")) as u16;
    assert_eq!(pty.bg_at(user, 1), Some(Color::Rgb(0x21, 0x3b, 0x49)), "{rows:#?}");
    assert_eq!(pty.fg_at(user, 1), Some(Color::Rgb(0xde, 0xe0, 0xe1)), "{rows:#?}");
    quit(&mut pty);
}

#[test]
fn tree_and_resume_titles_are_bold_in_the_terminal_colour() {
    let s = setup(pi_test_support::Script::sequential(vec![Turn::text("first answer")]));
    s.agent
        .write("settings.json", r#"{"theme": "dark"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("first answer");
    let title_cell = |pty: &Pty, title: &str| {
        let rows = pty.rows();
        let row = rows
            .iter()
            .position(|r| r.contains(title))
            .unwrap_or_else(|| panic!("{rows:#?}"));
        let col = rows[row].find(title).expect("title") as u16;
        pty.cell_at(row as u16, col).expect("cell")
    };
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("Session Tree");
    let cell = title_cell(&pty, "Session Tree");
    assert!(cell.bold());
    assert_eq!(cell.fgcolor(), Color::Default);
    pty.send(ESC);
    pty.wait_for("the tree closed", std::time::Duration::from_secs(10), |c| {
        !c.contains("Session Tree")
    });
    pty.type_text("/resume");
    pty.send(ENTER);
    pty.wait_text("Resume Session (Current Folder)");
    let cell = title_cell(&pty, "Resume Session");
    assert!(cell.bold());
    assert_eq!(cell.fgcolor(), Color::Default);
    pty.send(ESC);
    pty.wait_for("the picker closed", std::time::Duration::from_secs(10), |c| {
        !c.contains("Resume Session")
    });
    quit(&mut pty);
}

#[test]
fn changing_the_output_padding_keeps_the_notices() {
    let s = setup(pi_test_support::Script::sequential(vec![Turn::text("first answer")]));
    let mut pty = s.pi(30, 100);
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("first answer");
    pty.type_text("/name foo");
    pty.send(ENTER);
    pty.wait_text("Session name set: foo");
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Output padding");
    for _ in 0..6 {
        pty.send("\x1b[B");
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    pty.wait_text("→ Output padding");
    pty.send(ENTER); // 1 -> 0
    pty.send(ESC);
    pty.wait_for("the reply flush left", std::time::Duration::from_secs(10), |c| {
        c.lines().any(|l| l.starts_with("first answer"))
    });
    assert!(pty.contents().contains("Session name set: foo"), "{}", pty.contents());
    pty.wait_for("settings closed", std::time::Duration::from_secs(10), |c| {
        !c.contains("Output padding")
    });
    quit(&mut pty);
}
