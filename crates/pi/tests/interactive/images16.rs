//! Images in fullscreen, read from the bytes written to the pseudo-terminal (the vt100
//! screen ignores graphics): a Kitty image is transmitted once and then only placed as the
//! transcript scrolls, cropped at the top, and freed when pi leaves the alternate screen.
//! Also the capability overrides: `PI_IMAGE_PROTOCOL`, `PI_HYPERLINKS` and the
//! `terminal.hyperlinks` setting that wins over it.

use std::time::Duration;

use base64::Engine as _;
use pi_test_support::{Script, Turn};
use serde_json::json;

use super::pty::Pty;
use super::{quit, set_setting, setup, ENTER};

const CTRL_HOME: &str = "\x1b[1;5H";
/// An SGR wheel-down report over the transcript.
const WHEEL_DOWN: &str = "\x1b[<65;10;5M";

/// The header of a 180 x 36 px PNG: all the UI reads of an image is its size.
fn png_header() -> String {
    let mut v = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    v.extend_from_slice(&180u32.to_be_bytes());
    v.extend_from_slice(&36u32.to_be_bytes());
    v.extend_from_slice(&[8, 6, 0, 0, 0]);
    base64::engine::general_purpose::STANDARD.encode(v)
}

/// A session whose `read` result carries an image, followed by a long answer.
fn session_with_image(dir: &std::path::Path, cwd: &std::path::Path) -> std::path::PathBuf {
    let ts = "2026-11-30T04:21:41.975Z";
    let long: String = (1..=60).map(|i| format!("answer line {i:03}\n\n")).collect();
    let usage = json!({"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let entries = [
        json!({"type": "session", "version": 3, "id": "01a22aaf-ebce-70a3-b83f-f8e2faeb3ead", "timestamp": ts,
            "cwd": cwd}),
        json!({"type": "message", "id": "m1", "parentId": null, "timestamp": ts,
            "message": {"role": "user", "content": [{"type": "text", "text": "show it"}], "timestamp": 1}}),
        json!({"type": "message", "id": "m2", "parentId": "m1", "timestamp": ts,
            "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "t1", "name": "read",
                "arguments": {"path": "wide.png"}}], "api": "openai-completions", "provider": "mock-openai",
                "model": "mock-model", "usage": usage, "stopReason": "toolUse", "timestamp": 2}}),
        json!({"type": "message", "id": "m3", "parentId": "m2", "timestamp": ts,
            "message": {"role": "toolResult", "toolCallId": "t1", "toolName": "read",
                "content": [{"type": "text", "text": "Read image file [image/png]"},
                    {"type": "image", "data": png_header(), "mimeType": "image/png"}],
                "isError": false, "timestamp": 3}}),
        json!({"type": "message", "id": "m4", "parentId": "m3", "timestamp": ts,
            "message": {"role": "assistant", "content": [{"type": "text", "text": long}],
                "api": "openai-completions", "provider": "mock-openai", "model": "mock-model", "usage": usage,
                "stopReason": "stop", "timestamp": 4}}),
    ];
    let path = dir.join("image-session.jsonl");
    let text: String = entries.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&path, text).expect("session file");
    path
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
fn a_kitty_image_is_sent_once_then_placed_and_cropped_while_scrolling() {
    let s = setup(Script::sequential(vec![]));
    let session = session_with_image(s.agent.path(), s.cwd.path());
    let session = session.to_str().expect("utf8 path");
    let mut pty = Pty::spawn_unset(
        &["--session", session],
        s.cwd.path(),
        s.agent.path(),
        20,
        80,
        &[("KITTY_WINDOW_ID", "1")],
        &["TMUX", "PI_IMAGE_PROTOCOL"],
    );
    pty.wait_text("answer line 060");
    let payload = png_header();
    let transmissions = |raw: &str| raw.matches(&payload).count();
    // The image is above the view (the transcript follows its end): nothing sent yet.
    assert_eq!(transmissions(&raw_text(&pty)), 0);
    // To the top, then a line at a time down until the image has come into view whole and
    // its first row has gone above the view again.
    pty.send(CTRL_HOME);
    let whole = |id: &str| format!("\x1b_Ga=p,q=2,C=1,c=60,r=6,i={id}\x1b\\");
    // Cropped to its last 5 rows (source rows 6..36 of 36 px), on the top row.
    let cropped = |id: &str| format!("\x1b[1;1H\x1b_Ga=p,q=2,C=1,c=60,i={id},y=6,h=30,r=5\x1b\\");
    let id = |raw: &str| -> Option<String> {
        let at = raw.find(&payload)?;
        let start = raw[..at].rfind("\x1b_G")?;
        let controls = &raw[start + 3..at - 1];
        controls
            .split(',')
            .find_map(|c| c.strip_prefix("i="))
            .map(str::to_string)
    };
    for _ in 0..80 {
        let raw = raw_text(&pty);
        if id(&raw).is_some_and(|id| raw.contains(&whole(&id)) && raw.contains(&cropped(&id))) {
            break;
        }
        pty.send(WHEEL_DOWN);
        // A pause longer than the wheel's acceleration window: each report moves one line.
        std::thread::sleep(Duration::from_millis(230));
    }
    let raw = raw_text(&pty);
    let id = id(&raw).expect("the image was transmitted with an id");
    assert!(raw.contains(&whole(&id)), "never placed whole");
    assert!(raw.contains(&cropped(&id)), "never placed cropped at the top");
    // The data went once, with C=1 so the cursor stays where the row is.
    assert_eq!(transmissions(&raw), 1, "the image data was sent again");
    let at = raw.find(&payload).expect("payload");
    let controls = &raw[raw[..at].rfind("\x1b_G").expect("command") + 3..at];
    assert!(controls.starts_with("a=T,f=100,q=2,C=1,c=60,"), "{controls}");
    // Each redraw of the image first removes the placements (no ghosts left behind).
    let first_placement = raw.find(&whole(&id)).expect("placement");
    assert!(raw[..first_placement]
        .rfind("\x1b_Ga=d,d=a,q=2\x1b\\")
        .is_some_and(|d| d > at));
    // Leaving frees the images.
    quit(&mut pty);
    wait_raw(&pty, "images freed", |raw| raw.contains("\x1b_Ga=d,d=A,q=2\x1b\\"));
    let raw = raw_text(&pty);
    let freed = raw.rfind("\x1b_Ga=d,d=A,q=2\x1b\\").expect("freed");
    assert!(
        raw[freed..].contains("\x1b[?1049l"),
        "freed before leaving the alternate screen"
    );
}

#[test]
fn pi_image_protocol_none_shows_the_placeholder() {
    let s = setup(Script::sequential(vec![]));
    let session = session_with_image(s.agent.path(), s.cwd.path());
    let session = session.to_str().expect("utf8 path");
    let mut pty = Pty::spawn_unset(
        &["--session", session],
        s.cwd.path(),
        s.agent.path(),
        20,
        80,
        &[("KITTY_WINDOW_ID", "1"), ("PI_IMAGE_PROTOCOL", "none")],
        &["TMUX"],
    );
    pty.wait_text("answer line 060");
    pty.send(CTRL_HOME);
    for _ in 0..40 {
        if pty.contents().contains("[Image:") {
            break;
        }
        pty.send(WHEEL_DOWN);
        std::thread::sleep(Duration::from_millis(40));
    }
    // (The "jump to latest" pill may cover the end of the row.)
    pty.wait_text("[Image: [image/png]");
    assert!(!raw_text(&pty).contains("\x1b_Ga=T"));
    quit(&mut pty);
}

/// The raw output of a pi answering with a Markdown link, with `env` and `terminal` settings.
fn link_output(env: &[(&str, &str)], terminal: Option<serde_json::Value>) -> String {
    let s = setup(Script::sequential(vec![Turn::text(
        "See [the docs](https://example.com/docs) now.",
    )]));
    if let Some(t) = terminal {
        set_setting(&s, "terminal", t);
    }
    let mut pty = Pty::spawn_unset(&[], s.cwd.path(), s.agent.path(), 30, 100, env, &["TMUX"]);
    pty.wait_text("mock-model");
    pty.type_text("link please");
    pty.send(ENTER);
    pty.wait_text("now.");
    let raw = raw_text(&pty);
    quit(&mut pty);
    raw
}

#[test]
fn pi_hyperlinks_makes_links_and_the_setting_wins() {
    let osc8 = "\x1b]8;;https://example.com/docs\x1b\\";
    let raw = link_output(&[("PI_HYPERLINKS", "1")], None);
    assert!(raw.contains(osc8), "no OSC 8 link");
    assert!(!raw.contains("(https://example.com/docs)"));
    // The setting turns them off again: the address is written after the text.
    let raw = link_output(&[("PI_HYPERLINKS", "1")], Some(json!({"hyperlinks": false})));
    assert!(!raw.contains(osc8));
    assert!(raw.contains("(https://example.com/docs)"));
}

#[test]
fn iterm2_images_give_way_to_the_placeholder_in_fullscreen_and_return_at_exit() {
    let s = setup(Script::sequential(vec![]));
    let session = session_with_image(s.agent.path(), s.cwd.path());
    let session = session.to_str().expect("utf8 path");
    let mut pty = Pty::spawn_unset(
        &["--session", session],
        s.cwd.path(),
        s.agent.path(),
        20,
        80,
        &[("ITERM_SESSION_ID", "w0t0p0")],
        &["TMUX", "PI_IMAGE_PROTOCOL", "KITTY_WINDOW_ID", "TERM_PROGRAM"],
    );
    pty.wait_text("answer line 060");
    pty.send(CTRL_HOME);
    for _ in 0..40 {
        if pty.contents().contains("[Image:") {
            break;
        }
        pty.send(WHEEL_DOWN);
        std::thread::sleep(Duration::from_millis(40));
    }
    pty.wait_text("[Image: [image/png]");
    assert!(
        !raw_text(&pty).contains("\x1b]1337;File="),
        "an iTerm2 image in fullscreen"
    );
    // The transcript left on the normal screen at exit has the image again.
    quit(&mut pty);
    wait_raw(&pty, "the exit transcript's image", |raw| {
        raw.rfind("\x1b[?1049l")
            .is_some_and(|left| raw[left..].contains("\x1b]1337;File=inline=1;width=60;"))
    });
}

#[test]
fn image_width_cells_sets_how_wide_images_are_drawn() {
    let s = setup(Script::sequential(vec![]));
    set_setting(&s, "terminal", json!({"imageWidthCells": 30}));
    let session = session_with_image(s.agent.path(), s.cwd.path());
    let session = session.to_str().expect("utf8 path");
    let mut pty = Pty::spawn_unset(
        &["--session", session, "--tui-mode", "regular"],
        s.cwd.path(),
        s.agent.path(),
        20,
        80,
        &[("KITTY_WINDOW_ID", "1")],
        &["TMUX", "PI_IMAGE_PROTOCOL"],
    );
    pty.wait_text("answer line 060");
    // 180 x 36 px in 30 columns of 9 px: 270 x 54 px, 3 rows of 18 px.
    wait_raw(&pty, "the image at 30 columns", |raw| {
        raw.contains("\x1b_Ga=T,f=100,q=2,C=1,c=30,r=3,i=")
    });
    quit(&mut pty);
}

#[test]
fn image_width_changed_in_settings_redraws_the_images_shown() {
    let s = setup(Script::sequential(vec![]));
    let session = session_with_image(s.agent.path(), s.cwd.path());
    let session = session.to_str().expect("utf8 path");
    let mut pty = Pty::spawn_unset(
        &["--session", session, "--tui-mode", "regular"],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("KITTY_WINDOW_ID", "1")],
        &["TMUX", "PI_IMAGE_PROTOCOL"],
    );
    pty.wait_text("answer line 060");
    // 180 x 36 px at the default 60 columns of 9 px: 6 rows of 18 px.
    wait_raw(&pty, "the image at 60 columns", |raw| {
        raw.contains("\x1b_Ga=T,f=100,q=2,C=1,c=60,r=6,i=")
    });
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    pty.type_text("image width");
    pty.wait_text("→ Image width");
    pty.send(ENTER);
    // At once, as pi 1.6 does, the image already in the transcript: 80 columns, 8 rows.
    wait_raw(&pty, "the image at 80 columns", |raw| {
        raw.contains("\x1b_Ga=T,f=100,q=2,C=1,c=80,r=8,i=")
    });
    let settings = s.agent.path().join("settings.json");
    let saved = super::wait_json(&settings, |v| v["terminal"]["imageWidthCells"] == 80);
    assert_eq!(saved["terminal"]["imageWidthCells"], 80);
    pty.send(super::ESC);
    pty.wait_for("the menu closed", Duration::from_secs(5), |c| {
        !c.contains("→ Image width")
    });
    quit(&mut pty);
}
