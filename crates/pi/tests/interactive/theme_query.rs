//! The terminal's background report (OSC 11) decides a `light/dark` theme setting: pi asks
//! at startup without waiting, and swaps the theme when the answer comes; a colour scheme
//! change notification (mode 2031) makes it ask again. The `system` theme also asks for the
//! 16 ANSI colours (OSC 4) and the device attributes, waits briefly for the answers, and is
//! made from them; a terminal that answers nothing leaves it on palette indices, with no hang.

use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup, CTRL_C};

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

/// The colour a reply gives for each query: a dark blue-grey background, a light foreground,
/// and a palette whose blue (4) is pure `#0000ff`.
fn answer_colours(pty: &mut Pty) {
    let mut reply = String::from("\x1b]10;rgb:dddd/dddd/dddd\x1b\\\x1b]11;rgb:1010/1010/1818\x1b\\");
    for i in 0..16 {
        let c = if i == 4 { "0000/0000/ffff" } else { "8080/8080/8080" };
        reply.push_str(&format!("\x1b]4;{i};rgb:{c}\x1b\\"));
    }
    reply.push_str("\x1b[?62;22c");
    pty.send(&reply);
}

fn is_rgb(c: Option<vt100::Color>) -> bool {
    matches!(c, Some(vt100::Color::Rgb(..)))
}

#[test]
fn the_system_theme_is_made_from_the_colours_the_terminal_reports() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = Pty::spawn(&[], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_for("the palette query", Duration::from_secs(10), |_| {
        String::from_utf8_lossy(&pty.raw()).contains("\x1b[c")
    });
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    for query in ["\x1b]10;?", "\x1b]11;?", "\x1b]4;0;?", "\x1b]4;15;?"] {
        assert!(raw.contains(query), "{query:?} asked");
    }
    answer_colours(&mut pty);
    pty.wait_text("mock-model");
    // The editor border takes the `thinkingOff` colour pi 1.6 computes from these answers
    // (`generateSystemThemeColors` of its dist/modes/interactive/theme/system-theme.js run in
    // node on the same colours gives #6c6c6c).
    pty.wait_for("derived colours", Duration::from_secs(10), |_| {
        is_rgb(border_colour(&pty))
    });
    assert_eq!(border_colour(&pty), Some(vt100::Color::Rgb(0x6c, 0x6c, 0x6c)));
    quit(&mut pty);
}

#[test]
fn a_terminal_that_does_not_answer_gets_palette_indices_without_a_hang() {
    let s = setup(Script::sequential(vec![]));
    let started = std::time::Instant::now();
    let mut pty = s.pi(30, 100);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "first frame after {:?}",
        started.elapsed()
    );
    assert!(String::from_utf8_lossy(&pty.raw()).contains("\x1b]4;15;?"));
    // Typing works straight away, and nothing is coloured by a guess.
    pty.type_text("still here");
    pty.wait_text("still here");
    assert!(!is_rgb(border_colour(&pty)), "{:?}", border_colour(&pty));
    // Ctrl+C clears the editor; then Ctrl+D quits.
    pty.send(CTRL_C);
    pty.wait_for("an empty editor", Duration::from_secs(10), |c| {
        !c.contains("still here")
    });
    quit(&mut pty);
}

#[test]
fn an_explicit_theme_does_not_ask_for_the_palette() {
    let s = setup(Script::sequential(vec![]));
    s.agent
        .write("settings.json", r#"{"theme": "dark"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(raw.contains("\x1b]11;?") && !raw.contains("\x1b]4;0;?"));
    quit(&mut pty);
}

#[test]
fn without_truecolor_rgb_colours_go_out_as_the_nearest_of_256() {
    let s = setup(Script::sequential(vec![]));
    s.agent
        .write("settings.json", r#"{"theme": "dark"}"#)
        .expect("settings");
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("COLORTERM", "")]);
    pty.wait_text("mock-model");
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(raw.contains("\x1b[38;5;") || raw.contains(";38;5;"), "256-colour codes");
    assert!(!raw.contains("38;2;"), "no 24-bit colour");
    quit(&mut pty);
    // With COLORTERM=truecolor (the harness default) they stay 24-bit.
    let mut pty = s.pi(30, 100);
    assert!(String::from_utf8_lossy(&pty.raw()).contains("38;2;"));
    quit(&mut pty);
}
