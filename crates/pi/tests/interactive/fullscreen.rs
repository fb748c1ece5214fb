//! Fullscreen mode in a pseudo-terminal: the alternate screen and its layout, scrolling by
//! keys and wheel, the "jump to latest" pill, drag-select with copy, and what is left on the
//! normal screen at exit (transcript, resume command), mouse sequences included.

use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::pty::Pty;
use super::{quit, session_entries, set_setting, setup, ENTER};

const PAGE_UP: &str = "\x1b[5~";
const CTRL_END: &str = "\x1b[1;5F";

/// A reply of `n` numbered lines.
fn long_reply(n: usize) -> String {
    (1..=n).map(|i| format!("reply line {i:03}\n\n")).collect()
}

fn raw_text(pty: &Pty) -> String {
    String::from_utf8_lossy(&pty.raw()).to_string()
}

fn wait_raw(pty: &Pty, what: &str, f: impl Fn(&str) -> bool) {
    let start = std::time::Instant::now();
    while !f(&raw_text(pty)) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}; screen:\n{}",
            pty.contents()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn fullscreen_is_the_default_with_the_dock_pinned_and_the_transcript_left_at_exit() {
    let s = setup(Script::sequential(vec![Turn::text("echo: summarize the layout")]));
    let mut pty = s.pi(30, 100);
    let raw = raw_text(&pty);
    for seq in ["\x1b[?1049h", "\x1b[?7l", "\x1b[?1000h", "\x1b[?1002h", "\x1b[?1006h"] {
        assert!(raw.contains(seq), "{seq:?} not sent");
    }
    // The footer sits on the last row, the editor's rules above it; the header at the top.
    pty.wait_for("footer on the last row", Duration::from_secs(5), |_| {
        pty.rows()[29].contains("mock-model")
    });
    let rows = pty.rows();
    // pi 1.6's header: the two-row logo, the version beside it, the keys beside its foot.
    assert!(rows[1].starts_with(" ▀▀█  v"), "{rows:#?}");
    assert!(rows[2].starts_with(" █▀ █ escape interrupt"), "{rows:#?}");
    assert!(
        rows[25].starts_with("────") && rows[27].starts_with("────"),
        "{rows:#?}"
    );
    assert!(rows[6..25].iter().all(|r| r.trim().is_empty()), "{rows:#?}");

    pty.type_text("summarize the layout");
    pty.send(ENTER);
    pty.wait_text("echo: summarize the layout");
    let id = session_entries(s.agent.path())[0]["id"].as_str().unwrap().to_string();
    quit(&mut pty);
    let raw = raw_text(&pty);
    let left = &raw[raw.rfind("\x1b[?1049l").expect("alternate screen left")..];
    assert!(left.contains("\x1b[?1000l") && left.contains("\x1b[?7h") || raw.contains("\x1b[?1000l"));
    // Back on the normal screen: the transcript, then how to resume.
    let screen = pty.contents();
    assert!(screen.contains("echo: summarize the layout"), "{screen}");
    assert!(screen.contains("To resume this session:"), "{screen}");
    assert!(screen.contains(&format!("pi --session {id}")), "{screen}");
}

#[test]
fn resume_hint_exit_output_prints_only_the_command() {
    let s = setup(Script::sequential(vec![Turn::text("the-answer-text")]));
    set_setting(&s, "fullscreenExitOutput", serde_json::json!("resume-hint"));
    let mut pty = s.pi(30, 100);
    pty.type_text("question");
    pty.send(ENTER);
    pty.wait_text("the-answer-text");
    quit(&mut pty);
    let screen = pty.contents();
    assert!(screen.contains("To resume this session:"), "{screen}");
    assert!(!screen.contains("the-answer-text"), "{screen}");
}

#[test]
fn regular_mode_stays_inline_without_mouse_reporting() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = Pty::spawn(&["--tui-mode", "regular"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("mock-model");
    let raw = raw_text(&pty);
    assert!(!raw.contains("\x1b[?1049h") && !raw.contains("\x1b[?1000h"), "{raw:?}");
    // Inline: the footer follows the editor right under the header, not at the bottom.
    assert!(!pty.rows()[29].contains("mock-model"));
    quit(&mut pty);

    // The setting does the same.
    let s = setup(Script::sequential(vec![]));
    set_setting(&s, "tuiMode", serde_json::json!("regular"));
    let mut pty = s.pi(30, 100);
    assert!(!raw_text(&pty).contains("\x1b[?1049h"));
    quit(&mut pty);
}

#[test]
fn page_up_wheel_and_the_jump_to_latest_pill() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(60))]));
    let mut pty = s.pi(30, 100);
    pty.type_text("many lines please");
    pty.send(ENTER);
    pty.wait_text("reply line 060");
    assert!(!pty.contents().contains("reply line 001"));

    pty.send(PAGE_UP);
    pty.wait_text("Jump to latest message");
    let c = pty.contents();
    assert!(!c.contains("reply line 060"), "{c}");
    assert!(c.contains("Ctrl+End"));

    pty.send(CTRL_END);
    pty.wait_for("pill gone", Duration::from_secs(5), |c| {
        !c.contains("Jump to latest message") && c.contains("reply line 060")
    });

    // Wheel up three times over the transcript, then a click on the pill jumps back.
    for _ in 0..3 {
        pty.send("\x1b[<64;10;5M");
        std::thread::sleep(Duration::from_millis(60));
    }
    pty.wait_text("Jump to latest message");
    let pill_row = pty
        .rows()
        .iter()
        .position(|r| r.contains("Jump to latest message"))
        .expect("pill row");
    pty.send(&format!("\x1b[<0;50;{}M\x1b[<0;50;{}m", pill_row + 1, pill_row + 1));
    pty.wait_for("back at the end", Duration::from_secs(5), |c| {
        !c.contains("Jump to latest message") && c.contains("reply line 060")
    });
    quit(&mut pty);
}

#[test]
fn drag_selects_transcript_text_and_copies_it() {
    let s = setup(Script::sequential(vec![Turn::text("alpha beta gamma")]));
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
    pty.type_text("select me");
    pty.send(ENTER);
    pty.wait_text("alpha beta gamma");
    let rows = pty.rows();
    let row = rows
        .iter()
        .position(|r| r.contains("alpha beta gamma"))
        .expect("answer row");
    let col = rows[row].find("alpha").expect("column") + 1;
    let y = row + 1;
    // Press on "alpha", drag to the end of "beta", release.
    pty.send(&format!("\x1b[<0;{col};{y}M"));
    pty.send(&format!("\x1b[<32;{};{y}M", col + 6));
    pty.send(&format!("\x1b[<32;{};{y}M", col + 9));
    pty.send(&format!("\x1b[<0;{};{y}m", col + 9));
    let expected = base64_of("alpha beta");
    wait_raw(&pty, "OSC 52 copy", |raw| {
        raw.contains(&format!("\x1b]52;c;{expected}\x07"))
    });
    pty.wait_text("Copied!");
    // The flash sits in the top-right corner, its last cell in the last column.
    let top = pty.rows()[0].clone();
    let at = top.find("Copied!").map(|b| top[..b].chars().count()).unwrap();
    assert_eq!(at, 100 - " Copied! ".len() + 1, "{top:?}");
    quit(&mut pty);
}

#[test]
fn sigterm_restores_the_terminal() {
    a_signal_quits_and_restores_the_terminal("-TERM");
}

/// A closed terminal window sends SIGHUP: the run ends as a quit does, the terminal modes
/// are turned off and the session is kept.
#[test]
fn sighup_restores_the_terminal() {
    a_signal_quits_and_restores_the_terminal("-HUP");
}

fn a_signal_quits_and_restores_the_terminal(signal: &str) {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    assert!(raw_text(&pty).contains("\x1b[?1049h"));
    let pid = pty.pid().to_string();
    let status = std::process::Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0), "{signal}");
    wait_raw(&pty, "alternate screen left", |raw| {
        let tail = &raw[raw.rfind("\x1b[?1049h").unwrap_or(0)..];
        tail.contains("\x1b[?1049l") && tail.contains("\x1b[?1000l") && tail.contains("\x1b[?2004l")
    });
}

pub(super) fn base64_of(s: &str) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &x)| acc | (x as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn settings_switch_to_regular_mode_while_running_and_save_it() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(40, 100);
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Type to search");
    pty.type_text("tuimo");
    pty.wait_text("→ TUI mode");
    pty.send(ENTER);
    pty.wait_for("value regular", Duration::from_secs(5), |c| {
        c.lines().any(|l| l.contains("TUI mode") && l.contains("regular"))
    });
    let settings = super::wait_json(&s.agent.path().join("settings.json"), |v| v["tuiMode"] == "regular");
    assert_eq!(settings["tuiMode"], "regular");
    // The switch happens at once, the menu still open: the alternate screen is left, mouse off.
    wait_raw(&pty, "alternate screen left", |raw| {
        raw.contains("\x1b[?1049l") && raw.contains("\x1b[?1000l")
    });
    assert!(pty.contents().contains("→ TUI mode"), "{}", pty.contents());
    pty.send(super::ESC);
    pty.wait_for("the menu closed", Duration::from_secs(5), |c| {
        !c.contains("Type to search")
    });
    pty.wait_text("mock-model");
    quit(&mut pty);
}

#[test]
fn ctrl_x_copies_the_last_answer() {
    let s = setup(Script::sequential(vec![Turn::text("copy this answer")]));
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("WAYLAND_DISPLAY", ""), ("DISPLAY", "")],
    );
    pty.wait_text("mock-model");
    pty.type_text("question");
    pty.send(ENTER);
    pty.wait_text("copy this answer");
    pty.send("\x18");
    let expected = base64_of("copy this answer");
    wait_raw(&pty, "OSC 52 copy", |raw| {
        raw.contains(&format!("\x1b]52;c;{expected}\x07"))
    });
    pty.wait_text("Copied!");
    quit(&mut pty);
}

#[test]
fn wheel_events_in_one_burst_move_one_line_each() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(60))]));
    let mut pty = s.pi(30, 100);
    pty.type_text("many lines please");
    pty.send(ENTER);
    pty.wait_text("reply line 060");
    pty.wait_stable(Duration::from_millis(300));
    let row_of = |pty: &Pty, text: &str| pty.rows().iter().position(|r| r.contains(text));
    let before = row_of(&pty, "reply line 050").expect("line 050 shown");
    // Six reports in one write, as a terminal sends one quick notch or a trackpad flick: pi
    // 1.6 counts them as a burst, a line each, without speeding up.
    pty.send(&"\x1b[<64;10;5M".repeat(6));
    pty.wait_text("Jump to latest message");
    pty.wait_for("six lines down", Duration::from_secs(5), |_| {
        row_of(&pty, "reply line 050") == Some(before + 6)
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(row_of(&pty, "reply line 050"), Some(before + 6), "{:#?}", pty.rows());
    quit(&mut pty);
}

#[test]
fn quick_copies_stack_their_flashes_and_each_goes_after_a_second() {
    let s = setup(Script::sequential(vec![Turn::text("copy this answer")]));
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("WAYLAND_DISPLAY", ""), ("DISPLAY", "")],
    );
    pty.wait_text("mock-model");
    pty.type_text("question");
    pty.send(ENTER);
    pty.wait_text("copy this answer");
    // Two copies at once: two flashes, one a row, both flush with the right edge.
    pty.send("\x18\x18");
    pty.wait_for("two flashes", Duration::from_secs(5), |_| {
        let rows = pty.rows();
        rows[0].trim_end().ends_with(" Copied!") && rows[1].trim_end().ends_with(" Copied!")
    });
    assert!(!pty.rows()[2].contains("Copied!"), "{:#?}", pty.rows());
    // Each lasts a second.
    pty.wait_for("flashes gone", Duration::from_secs(5), |_| {
        !pty.rows()[..3].iter().any(|r| r.contains("Copied!"))
    });
    quit(&mut pty);
}

#[test]
fn transcript_search_finds_scrolls_to_and_steps_through_matches() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(60))]));
    let mut pty = s.pi(30, 100);
    pty.type_text("many lines please");
    pty.send(ENTER);
    pty.wait_text("reply line 060");
    // Ctrl+Shift+F as the kitty keyboard protocol reports it.
    pty.send("\x1b[102;6u");
    pty.wait_text("Find in transcript");
    pty.wait_text("↑ Shift+Enter · ↓ Enter");
    pty.type_text("line 005");
    pty.wait_text("1/1");
    // The box sits one row and one column in from the top-right corner.
    let rows = pty.rows();
    assert!(
        rows[1].trim_end().ends_with('┐') && rows[1].chars().count() <= 99,
        "{rows:#?}"
    );
    assert!(rows[2].contains("line 005") && rows[2].contains("1/1 │"), "{rows:#?}");
    pty.wait_text("reply line 005");
    assert!(!pty.contents().contains("reply line 060"));
    // Typed text went to the search, not to the editor.
    pty.send(super::ESC);
    pty.wait_for("search closed", Duration::from_secs(5), |c| !c.contains("1/1"));
    let rows = pty.rows();
    assert!(
        rows[25].starts_with("───") && !rows[26].contains("line 005"),
        "{rows:#?}"
    );
    pty.type_text("reply line 0");
    pty.send("\x1b[102;6u");
    std::thread::sleep(Duration::from_millis(100));
    pty.type_text("reply line 0");
    pty.wait_text("/60");
    quit_after_clearing(&mut pty);
}

/// The editor holds text: clear it first so Ctrl+D quits.
fn quit_after_clearing(pty: &mut Pty) {
    pty.send(super::ESC);
    std::thread::sleep(Duration::from_millis(100));
    pty.send(super::CTRL_C);
    std::thread::sleep(Duration::from_millis(100));
    quit(pty);
}

#[test]
fn the_working_indicator_sits_in_the_editor_border() {
    let s = setup(Script::sequential(vec![Turn::text("slow answer").with_delay_ms(400)]));
    let mut pty = s.pi(30, 100);
    pty.type_text("take your time");
    pty.send(ENTER);
    pty.wait_for("indicator in the border", Duration::from_secs(5), |_| {
        pty.rows()[25].starts_with("── ") && pty.rows()[25].contains(" Working ──")
    });
    // No loader line of its own above the editor.
    assert!(pty.rows()[24].trim().is_empty(), "{:#?}", pty.rows());
    pty.wait_text("slow answer");
    pty.wait_for("indicator gone", Duration::from_secs(5), |_| {
        !pty.rows()[25].contains("Working")
    });
    quit(&mut pty);
}

#[test]
fn ctrl_up_and_ctrl_down_stop_at_each_message() {
    let second = format!("second {}", long_reply(40));
    let s = setup(Script::sequential(vec![Turn::text(long_reply(40)), Turn::text(second)]));
    let mut pty = s.pi(30, 100);
    pty.type_text("first question");
    pty.send(ENTER);
    pty.wait_text("reply line 040");
    pty.type_text("second question");
    pty.send(ENTER);
    pty.wait_for("the second reply in full", Duration::from_secs(10), |c| {
        c.contains("reply line 040") && !c.contains("second question")
    });
    // The first two rows, without the scrollbar's column.
    let top_two = |pty: &Pty| {
        let rows = pty.rows();
        let text = |r: &str| r.trim_matches(|c| matches!(c, ' ' | '│' | '┃')).to_string();
        format!("{}|{}", text(&rows[0]), text(&rows[1]))
    };
    let press = |pty: &mut Pty, key: &str, want: &str| {
        pty.send(key);
        pty.wait_for(want, Duration::from_secs(5), |_| top_two(pty) == want);
    };
    // Ctrl+Up: the top of the reply above (its blank first line), then the user message's
    // own first line, then the first reply; Ctrl+Down goes back the same way.
    press(&mut pty, "\x1b[1;5A", "|second reply line 001");
    press(&mut pty, "\x1b[1;5A", "|second question");
    press(&mut pty, "\x1b[1;5A", "|reply line 001");
    press(&mut pty, "\x1b[1;6B", "|second question");
    press(&mut pty, "\x1b[1;5B", "|second reply line 001");
    assert!(pty.contents().contains("Jump to latest message"));
    quit(&mut pty);
}

#[test]
fn the_jump_pill_sits_over_the_last_row_and_names_the_bound_key() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(60))]));
    s.agent
        .write("keybindings.json", r#"{"tui.altScreen.bottom": ["ctrl+shift+end"]}"#)
        .unwrap();
    let mut pty = s.pi(30, 100);
    pty.type_text("many lines please");
    pty.send(ENTER);
    pty.wait_text("reply line 060");
    pty.send(PAGE_UP);
    pty.wait_text("Jump to latest message");
    let rows = pty.rows();
    let row = rows
        .iter()
        .position(|r| r.contains("Jump to latest"))
        .expect("pill row");
    // The transcript row stays visible beside the pill (pi composes it over the row).
    let pill = &rows[row];
    assert!(pill.starts_with(" reply line ") && !pill.contains('─'), "{rows:#?}");
    assert!(pill.contains(" ↓ Jump to latest message · Ctrl+Shift+End "), "{pill}");
    let start = pill.find('↓').map(|b| pill[..b].chars().count()).unwrap();
    // Centred as pi centres it: the label starts at (width - label width) / 2.
    let label = " ↓ Jump to latest message · Ctrl+Shift+End ".chars().count();
    assert_eq!(start, (100 - label) / 2 + 1, "{pill}");
    // A click on the row beside the pill does not jump; on the pill it does.
    pty.send(&format!("\x1b[<0;5;{}M\x1b[<0;5;{}m", row + 1, row + 1));
    std::thread::sleep(Duration::from_millis(200));
    assert!(pty.contents().contains("Jump to latest message"));
    pty.send(&format!("\x1b[<0;50;{}M\x1b[<0;50;{}m", row + 1, row + 1));
    pty.wait_for("back at the end", Duration::from_secs(5), |c| {
        !c.contains("Jump to latest message") && c.contains("reply line 060")
    });
    quit(&mut pty);
}

#[test]
fn the_search_box_says_no_matches_and_nothing_while_empty() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(10))]));
    let mut pty = s.pi(30, 100);
    pty.type_text("a few lines");
    pty.send(ENTER);
    pty.wait_text("reply line 010");
    pty.send("\x1b[102;6u");
    pty.wait_text("Find in transcript");
    let row = pty.rows()[2].clone();
    assert!(
        row.contains("│ Find in transcript") && row.trim_end().ends_with("│"),
        "{row}"
    );
    assert!(!row.contains("0/0"), "{row}");
    pty.type_text("zzz");
    pty.wait_text("No matches");
    let row = pty.rows()[2].clone();
    assert!(row.contains("│ zzz ") && row.contains(" No matches │"), "{row}");
    // The field's cursor is a reverse-video cell after the text, the counter is dim.
    let raw = raw_text(&pty);
    assert!(raw.contains("zzz\x1b[7m \x1b[27m"), "no cursor cell");
    assert!(raw.contains("\x1b[2m No matches \x1b[22m"), "counter not dim");
    // Matches in the theme's search colours (the system theme without reported colours draws
    // searchMatchText faint), underlined; the current one bold and inverse.
    for _ in 0..3 {
        pty.send("\x7f");
    }
    pty.type_text("line 00");
    pty.wait_text("1/9");
    // A match's words are marked, not the blank between them, as pi 1.6 marks them.
    wait_raw(&pty, "the current match", |raw| {
        raw.contains("\x1b[1;2;7mline\x1b[0m") && raw.contains("\x1b[1;2;7m00\x1b[0m")
    });
    let raw = raw_text(&pty);
    assert!(
        raw.contains("\x1b[2;4mline\x1b[0m") && raw.contains("\x1b[2;4m00\x1b[0m"),
        "other matches"
    );
    assert!(!raw.contains("mline 00"), "the blank is not marked");
    pty.send(super::ESC);
    pty.wait_for("search closed", Duration::from_secs(5), |c| !c.contains("1/9"));
    quit(&mut pty);
}

#[test]
fn the_search_field_edits_like_pi_inputs() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(10))]));
    let mut pty = s.pi(30, 100);
    pty.type_text("go");
    pty.send(ENTER);
    pty.wait_text("reply line 010");
    pty.send("\x1b[102;6u");
    pty.wait_text("Find in transcript");
    pty.type_text("xline 005");
    pty.wait_text("No matches");
    // Home, then Delete takes the stray first letter.
    pty.send("\x1b[H");
    pty.send("\x1b[3~");
    pty.wait_text("1/1");
    assert!(pty.rows()[2].contains("│ line 005 "), "{:#?}", pty.rows());
    // End, then Ctrl+W takes the last word back.
    pty.send("\x1b[F");
    pty.send("\x17");
    pty.wait_text("/10");
    assert!(pty.rows()[2].contains("│ line "), "{:#?}", pty.rows());
    pty.send(super::ESC);
    pty.wait_for("search closed", Duration::from_secs(5), |c| !c.contains("/10"));
    quit(&mut pty);
}

#[test]
fn the_search_buttons_name_the_bound_keys_and_step_when_clicked() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(10))]));
    s.agent
        .write(
            "keybindings.json",
            r#"{"tui.altScreen.searchNext": ["ctrl+n", "enter"]}"#,
        )
        .unwrap();
    let mut pty = s.pi(30, 100);
    pty.type_text("a few lines");
    pty.send(ENTER);
    pty.wait_text("reply line 010");
    pty.send("\x1b[102;6u");
    pty.type_text("line 00");
    pty.wait_text("/9");
    let bottom = pty.rows()[3].clone();
    assert!(bottom.contains("─ ↑ Shift+Enter · ↓ Ctrl+N ─┘"), "{bottom}");
    let counter = |pty: &Pty| {
        let row = pty.rows()[2].clone();
        let end = row.find("/9").expect("counter");
        let start = row[..end].rfind(' ').unwrap() + 1;
        row[start..end].parse::<usize>().unwrap()
    };
    let first = counter(&pty);
    let col = |ch: char| bottom.chars().position(|c| c == ch).unwrap() + 1;
    let click = |pty: &mut Pty, column: usize| {
        pty.send(&format!("\x1b[<0;{column};4M\x1b[<0;{column};4m"));
    };
    click(&mut pty, col('↓'));
    pty.wait_for("the next match", Duration::from_secs(5), |_| {
        counter(&pty) == first % 9 + 1
    });
    click(&mut pty, col('↑'));
    pty.wait_for("the previous match", Duration::from_secs(5), |_| counter(&pty) == first);
    pty.send(super::ESC);
    pty.wait_for("search closed", Duration::from_secs(5), |c| !c.contains("/9"));
    quit(&mut pty);
}

#[test]
fn reload_renames_the_keys_in_the_search_box_and_the_pill() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(40))]));
    let mut pty = s.pi(30, 100);
    pty.type_text("many lines please");
    pty.send(ENTER);
    pty.wait_text("reply line 040");
    s.agent
        .write(
            "keybindings.json",
            r#"{"tui.altScreen.searchNext": "ctrl+n", "tui.altScreen.bottom": "ctrl+shift+end"}"#,
        )
        .unwrap();
    pty.type_text("/reload");
    pty.send(ENTER);
    std::thread::sleep(Duration::from_millis(800));
    pty.send(PAGE_UP);
    pty.wait_text("Jump to latest message · Ctrl+Shift+End");
    pty.send("\x1b[102;6u");
    pty.wait_text("↓ Ctrl+N");
    pty.send(super::ESC);
    pty.wait_for("search closed", Duration::from_secs(5), |c| !c.contains("↓ Ctrl+N"));
    quit(&mut pty);
}

#[test]
fn half_page_keys_move_half_the_view() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(60))]));
    s.agent
        .write(
            "keybindings.json",
            r#"{"tui.altScreen.halfPageUp": "f5", "tui.altScreen.halfPageDown": "f6"}"#,
        )
        .unwrap();
    let mut pty = s.pi(30, 100);
    pty.type_text("many lines please");
    pty.send(ENTER);
    pty.wait_text("reply line 060");
    pty.wait_stable(Duration::from_millis(300));
    // Where line 1 of the reply would be: each reply line is followed by a blank one.
    let anchor = |pty: &Pty| {
        pty.rows().iter().enumerate().find_map(|(i, r)| {
            let n: isize = r.trim().strip_prefix("reply line ")?.get(..3)?.parse().ok()?;
            Some(i as isize - 2 * (n - 1))
        })
    };
    let rows = pty.rows();
    let transcript_rows = rows.iter().position(|r| r.starts_with("────")).unwrap() - 1;
    let before = anchor(&pty).unwrap();
    pty.send("\x1b[15~");
    pty.wait_text("Jump to latest message");
    let moved = anchor(&pty).unwrap() - before;
    assert_eq!(moved, (transcript_rows / 2) as isize, "{:#?}", pty.rows());
    pty.send("\x1b[17~");
    pty.wait_for("back at the end", Duration::from_secs(5), |c| {
        !c.contains("Jump to latest")
    });
    quit(&mut pty);
}
