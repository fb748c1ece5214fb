//! Fullscreen selection in a pseudo-terminal, as pi 1.6 does it: a drag held below the
//! transcript scrolls it to the end on its own, and a drag over the editor and footer selects
//! the screen there; each copy goes out as OSC 52 (no clipboard tool without a display).

use std::time::Duration;

use base64::Engine as _;
use pi_test_support::{Script, Turn};

use super::pty::Pty;
use super::{quit, setup, Setup, ENTER};

const PAGE_UP: &str = "\x1b[5~";

fn long_reply(n: usize) -> String {
    (1..=n).map(|i| format!("reply line {i:03}\n\n")).collect()
}

/// pi without a display, so a copy is sent as OSC 52.
fn headless(s: &Setup) -> Pty {
    let pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("WAYLAND_DISPLAY", ""), ("DISPLAY", "")],
    );
    pty.wait_text("mock-model");
    pty
}

/// The text of the `n`-th OSC 52 copy sent so far (counting from 1), once it is there.
fn nth_copy(pty: &Pty, n: usize) -> String {
    let start = std::time::Instant::now();
    loop {
        let raw = String::from_utf8_lossy(&pty.raw()).to_string();
        let copies: Vec<&str> = raw
            .split("\x1b]52;c;")
            .skip(1)
            .filter_map(|rest| rest.split('\x07').next())
            .collect();
        if let Some(b64) = copies.get(n - 1) {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).expect("base64");
            return String::from_utf8(bytes).expect("utf-8");
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no copy #{n}; screen:\n{}",
            pty.contents()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_drag_held_over_the_dock_scrolls_the_transcript_to_its_end() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(60))]));
    let mut pty = headless(&s);
    pty.type_text("many lines please");
    pty.send(ENTER);
    pty.wait_text("reply line 060");
    pty.send(PAGE_UP);
    pty.wait_text("Jump to latest message");
    let rows = pty.rows();
    let row = (1..10)
        .find(|&r| rows[r].starts_with(" reply line"))
        .expect("a reply row");
    // The row's text, without the scrollbar showing in the last column.
    let first = rows[row].trim_end_matches(['│', '┃']).trim().to_string();
    // Press on that row, then hold the pointer over the editor without moving it.
    pty.send(&format!("\x1b[<0;2;{}M\x1b[<32;6;27M", row + 1));
    pty.wait_for("scrolled to the end", Duration::from_secs(10), |c| {
        !c.contains("Jump to latest message") && c.contains("reply line 060")
    });
    pty.send("\x1b[<0;6;27m");
    let copied = nth_copy(&pty, 1);
    assert!(copied.starts_with(&format!("{first}\n")), "{copied:?}");
    // It ends at the pointer's column on the last transcript row: the last reply line's
    // first six cells.
    assert!(copied.ends_with("reply line 059\n\n reply"), "{copied:?}");
    pty.wait_text("Copied!");
    quit(&mut pty);
}

#[test]
fn a_drag_over_the_footer_and_editor_copies_what_the_screen_shows_there() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = headless(&s);
    pty.type_text("draft words here");
    pty.wait_text("draft words here");
    let rows = pty.rows();
    let editor = rows
        .iter()
        .position(|r| r.starts_with("draft words here"))
        .expect("editor row");
    let footer = rows[editor + 2].clone();
    assert!(footer.starts_with('/') || footer.starts_with('~'), "{rows:#?}");
    // Along the footer's first eight cells.
    let y = editor + 3;
    pty.send(&format!("\x1b[<0;1;{y}M\x1b[<32;5;{y}M\x1b[<32;8;{y}M\x1b[<0;8;{y}m"));
    assert_eq!(nth_copy(&pty, 1), footer.chars().take(8).collect::<String>());
    // From the editor's "words" down across its rule into the footer.
    let y = editor + 1;
    pty.send(&format!("\x1b[<0;7;{y}M\x1b[<32;3;{}M\x1b[<0;3;{}m", y + 2, y + 2));
    let rule: String = rows[editor + 1].trim_end().to_string();
    let expected = format!("words here\n{rule}\n{}", footer.chars().take(3).collect::<String>());
    assert_eq!(nth_copy(&pty, 2), expected);
    // The editor still has the draft.
    assert!(pty.rows()[editor].starts_with("draft words here"));
    pty.send(super::CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("draft words"));
    quit(&mut pty);
}

#[test]
fn on_a_desktop_without_a_clipboard_tool_the_reason_shows_instead_of_osc52() {
    let s = setup(Script::sequential(vec![Turn::text("alpha beta gamma")]));
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("WAYLAND_DISPLAY", ""), ("DISPLAY", ":99"), ("PATH", "/usr/bin:/bin")],
    );
    pty.wait_text("mock-model");
    pty.type_text("question");
    pty.send(ENTER);
    pty.wait_text("alpha beta gamma");
    let rows = pty.rows();
    let row = rows
        .iter()
        .position(|r| r.contains("alpha beta gamma"))
        .expect("answer row");
    let col = rows[row].find("alpha").expect("column") + 1;
    let y = row + 1;
    pty.send(&format!(
        "\x1b[<0;{col};{y}M\x1b[<32;{};{y}M\x1b[<0;{};{y}m",
        col + 4,
        col + 4
    ));
    let reason = "Clipboard unavailable: install `xclip` or `xsel`, or check X11 access";
    // A selection's failure is flashed at the top right, for longer than `Copied!` lasts.
    pty.wait_for("the reason flashed", Duration::from_secs(10), |_| {
        pty.rows()[0].trim_end().ends_with(&format!(" {reason}"))
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert!(pty.rows()[0].contains(reason), "{:#?}", pty.rows());
    assert!(
        !String::from_utf8_lossy(&pty.raw()).contains("\x1b]52;"),
        "no OSC 52 on a desktop"
    );
    // Ctrl+X's failure goes to the chat.
    pty.send("\x18");
    pty.wait_text(&format!("Error: {reason}"));
    quit(&mut pty);
}

#[test]
fn a_click_on_a_link_in_the_transcript_opens_it() {
    let s = setup(Script::sequential(vec![Turn::text(
        "Read [the docs](https://pi.dev/docs) first.",
    )]));
    let opened = s.cwd.path().join("opened.txt");
    let browser = s.cwd.path().join("browser.sh");
    std::fs::write(&browser, format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display())).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let browser = browser.display().to_string();
    // A terminal that shows OSC 8 links.
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("TERM_PROGRAM", "ghostty"), ("BROWSER", browser.as_str())],
    );
    pty.wait_text("mock-model");
    pty.type_text("links");
    pty.send(ENTER);
    pty.wait_text("Read the docs first.");
    let rows = pty.rows();
    let row = rows.iter().position(|r| r.contains("Read the docs")).expect("row");
    let col = rows[row].find("the docs").expect("column") + 3;
    pty.send(&format!("\x1b[<0;{col};{y}M\x1b[<0;{col};{y}m", y = row + 1));
    let start = std::time::Instant::now();
    while !opened.exists() {
        assert!(start.elapsed() < Duration::from_secs(10), "the link was not opened");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(std::fs::read_to_string(&opened).unwrap().trim(), "https://pi.dev/docs");
    quit(&mut pty);
}

#[test]
fn the_wheel_over_a_docked_list_moves_its_selection_not_the_transcript() {
    let s = setup(Script::sequential(vec![Turn::text(long_reply(40))]));
    let mut pty = s.pi(30, 100);
    pty.type_text("many lines");
    pty.send(ENTER);
    pty.wait_text("reply line 040");
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Type to search");
    let selected = |pty: &Pty| pty.rows().iter().position(|r| r.starts_with("→ "));
    let before = selected(&pty).expect("a selected row");
    let first_item = pty.rows()[before].clone();
    // Two notches down over the list: two rows down, the transcript stays at its end.
    let y = before + 1;
    pty.send(&format!("\x1b[<65;10;{y}M\x1b[<65;10;{y}M"));
    pty.wait_for("selection two rows down", Duration::from_secs(5), |_| {
        selected(&pty) == Some(before + 2)
    });
    assert!(!pty.contents().contains("Jump to latest message"));
    // Back up one.
    pty.send(&format!("\x1b[<64;10;{y}M"));
    pty.wait_for("selection one row up", Duration::from_secs(5), |_| {
        selected(&pty) == Some(before + 1)
    });
    pty.send(&format!("\x1b[<64;10;{y}M"));
    pty.wait_for("back at the first item", Duration::from_secs(5), |_| {
        pty.rows()[before] == first_item
    });
    // At the top the wheel stops: no wrapping round to the last item.
    pty.send(&format!("\x1b[<64;10;{y}M\x1b[<64;10;{y}M"));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(selected(&pty), Some(before), "{:#?}", pty.rows());
    assert_eq!(pty.rows()[before], first_item);
    // Over the transcript the wheel still scrolls it.
    pty.send("\x1b[<64;10;3M");
    pty.wait_text("Jump to latest message");
    pty.send(super::ESC);
    pty.wait_for("settings closed", Duration::from_secs(5), |c| {
        !c.contains("Type to search")
    });
    quit(&mut pty);
}
