//! The terminal's background report (OSC 11) decides a `light/dark` theme setting: pi asks
//! at startup without waiting, and swaps the theme when the answer comes; a colour scheme
//! change notification (mode 2031) makes it ask again.

use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup};

/// The colour of the editor's top border (the last row of `─` above the editor).
fn border_colour(pty: &Pty) -> Option<vt100::Color> {
    let rows = pty.rows();
    let row = rows.iter().rposition(|r| r.starts_with("────"))?;
    // The bottom border is the last such row; the top one is the one before it.
    let top = rows[..row].iter().rposition(|r| r.starts_with("────"))?;
    pty.fg_at(top as u16, 0)
}

#[test]
fn a_background_report_picks_the_light_or_dark_theme_of_a_pair() {
    let s = setup(Script::sequential(vec![]));
    s.agent
        .write("settings.json", r#"{"theme": "light/dark"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(raw.contains("\x1b]11;?"), "the background is asked for");
    let dark = border_colour(&pty).expect("border");
    // A white background: the light theme.
    pty.send("\x1b]11;rgb:ffff/ffff/ffff\x07");
    pty.wait_for("the light theme", Duration::from_secs(10), |_| {
        border_colour(&pty).is_some_and(|c| c != dark)
    });
    // A black one again: back to dark.
    pty.send("\x1b]11;rgb:0000/0000/0000\x1b\\");
    pty.wait_for("the dark theme", Duration::from_secs(10), |_| {
        border_colour(&pty) == Some(dark)
    });
    quit(&mut pty);
}

#[test]
fn a_colour_scheme_change_asks_for_the_background_again() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    // Notifications are asked for with the colours, and turned off at exit.
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(raw.contains("\x1b[?2031h"), "colour scheme notifications are asked for");
    let asked = |pty: &Pty| String::from_utf8_lossy(&pty.raw()).matches("\x1b]11;?").count();
    let before = asked(&pty);
    // The terminal turned light: pi asks for the background again.
    pty.send("\x1b[?997;2n");
    pty.wait_for("a second background query", Duration::from_secs(10), |_| {
        asked(&pty) > before
    });
    quit(&mut pty);
    let start = std::time::Instant::now();
    while !String::from_utf8_lossy(&pty.raw()).contains("\x1b[?2031l") && start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        String::from_utf8_lossy(&pty.raw()).contains("\x1b[?2031l"),
        "notifications turned off at exit"
    );
}
