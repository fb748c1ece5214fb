//! A component taller than the screen, as pi 1.6 shows it: in fullscreen, in the editor's
//! place, its first rows (the transcript keeps one row and the footer its first line); as an
//! overlay, its first rows from the top of the screen; in regular mode, in place, the
//! terminal scrolls as the lines are written so its last rows and the footer are in view.

use std::time::Duration;

use pi_test_support::Script;

use super::extensions::{extension_env, row_of, spawn_with};
use super::pty::Pty;
use super::{quit, setup, ENTER};

#[test]
fn a_tall_component_in_the_editors_place_shows_its_top_in_fullscreen() {
    let Some((node, modules)) = extension_env("a_tall_component_in_the_editors_place_shows_its_top_in_fullscreen")
    else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("tall.ts", &s, &node, &modules);
    pty.type_text("/tall");
    pty.send(ENTER);
    pty.wait_text("tall row 01 of 50");
    let rows = pty.rows();
    // 30 rows: one of transcript, 28 of the component from its top, the footer's first line.
    assert_eq!(row_of(&pty, "tall row 01 of 50"), Some(1), "{rows:#?}");
    assert_eq!(row_of(&pty, "tall row 28 of 50"), Some(28), "{rows:#?}");
    assert!(!pty.contents().contains("tall row 29"), "{rows:#?}");
    assert!(
        !rows[29].contains("tall row"),
        "the footer keeps the last row: {rows:#?}"
    );
    assert!(!rows[29].trim().is_empty(), "{rows:#?}");
    pty.send("q");
    pty.wait_for("component closed", Duration::from_secs(10), |c| !c.contains("tall row"));

    // As an overlay: its first 30 rows, from the top of the screen.
    pty.type_text("/tallov");
    pty.send(ENTER);
    pty.wait_text("tall row 01 of 50");
    let rows = pty.rows();
    assert_eq!(row_of(&pty, "tall row 01 of 50"), Some(0), "{rows:#?}");
    assert_eq!(row_of(&pty, "tall row 30 of 50"), Some(29), "{rows:#?}");
    pty.send("q");
    pty.wait_for("overlay closed", Duration::from_secs(10), |c| !c.contains("tall row"));
    quit(&mut pty);
}

#[test]
fn a_tall_component_in_regular_mode_scrolls_to_its_end() {
    let Some((node, modules)) = extension_env("a_tall_component_in_regular_mode_scrolls_to_its_end") else {
        return;
    };
    let s = setup(Script::echo());
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interactive/fixtures/tall.ts");
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let mut pty = Pty::spawn_env(
        &["--tui-mode", "regular", "-e", fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty.type_text("/tall");
    pty.send(ENTER);
    pty.wait_text("tall row 50 of 50");
    let rows = pty.rows();
    assert_eq!(row_of(&pty, "tall row 50 of 50"), Some(27), "{rows:#?}");
    assert!(rows[29].contains("mock-model"), "{rows:#?}");
    pty.send("q");
    pty.wait_for("component closed", Duration::from_secs(10), |c| {
        !c.contains("tall row 50")
    });
    quit(&mut pty);
}
