//! `/login` details of pi 1.6 on a pseudo-terminal: the API-key list names the providers that
//! have no chat models of their own (TypeSafe), and entering its key saves it; the highlighted
//! partner names are animated (Radius shimmers, OpenRouter glows) only while a list is shown.

use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup, Setup, ENTER, ESC};

const DOWN: &str = "\x1b[B";

fn auth_json(s: &Setup) -> serde_json::Value {
    std::fs::read_to_string(s.agent.path().join("auth.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

fn open_key_list(pty: &mut Pty) {
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
}

/// Escape from a provider list to the method menu, and again to close it.
fn close_login(pty: &mut Pty) {
    pty.send(ESC);
    pty.wait_text("Select authentication method:");
    pty.send(ESC);
    pty.wait_for("the menu to close", Duration::from_secs(5), |c| {
        !c.contains("Select authentication method:")
    });
}

#[test]
fn typesafe_is_offered_for_an_api_key_and_its_key_is_saved() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    open_key_list(&mut pty);
    pty.type_text("typesafe");
    pty.wait_text("→ TypeSafe • not configured");
    pty.send(ENTER);
    pty.wait_text("Login to TypeSafe");
    pty.wait_text("Enter TypeSafe API key");
    pty.type_text("ts-key-1");
    pty.send(ENTER);
    pty.wait_for("the saved notice", Duration::from_secs(10), |c| {
        c.contains("Saved API key for TypeSafe")
    });
    let auth = auth_json(&s);
    assert_eq!(auth["typesafe"]["type"], "api_key");
    assert_eq!(auth["typesafe"]["key"], "ts-key-1");
    // The list says so the next time.
    open_key_list(&mut pty);
    pty.type_text("typesafe");
    pty.wait_text("→ TypeSafe ✓ configured");
    close_login(&mut pty);
    quit(&mut pty);
}

/// The distinct 24-bit colours written right before `name` in `raw` (the colour of its first
/// character).
fn colours_before(raw: &str, name: &str) -> std::collections::BTreeSet<String> {
    raw.match_indices(name)
        .filter_map(|(at, _)| {
            let head = &raw[..at];
            let start = head.rfind("\x1b[38;2;")?;
            let seq = &head[start..];
            (seq.len() < 20 && seq.ends_with('m')).then(|| seq.to_string())
        })
        .collect()
}

fn pi_truecolor(s: &Setup) -> Pty {
    let pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_TRUE_COLOR", "1"), ("COLORTERM", "truecolor")],
    );
    pty.wait_text("mock-model");
    pty
}

#[test]
fn the_highlighted_radius_row_shimmers_and_openrouter_glows_while_login_is_open() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = pi_truecolor(&s);
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    // Radius's row is animated only while highlighted: its first letter in the logo's colours.
    pty.send(DOWN);
    pty.send(DOWN);
    pty.wait_text("→ Sign in with Radius");
    let before = pty.raw().len();
    std::thread::sleep(Duration::from_millis(700));
    let raw = String::from_utf8_lossy(&pty.raw()[before..]).to_string();
    // Drawn again and again while nothing is typed, each character in its own colour.
    let frames = raw.matches("→").count();
    assert!(frames >= 5, "{frames} frames in 700 ms");
    assert!(
        raw.contains("\x1b[38;2;77;154;191m") || raw.contains("\x1b[38;2;131;204;210m"),
        "the logo's colours: {raw:?}"
    );
    // Highlighting another row stops the animation: nothing more is written.
    pty.send(DOWN);
    pty.wait_text("→ Sign in with an account");
    std::thread::sleep(Duration::from_millis(200));
    let still = pty.raw().len();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(pty.raw().len(), still, "no frames without an animated row");

    // OpenRouter's name glows in its lime, changing over time.
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.type_text("openrouter");
    pty.wait_text("→ OpenRouter ✦");
    let before = pty.raw().len();
    std::thread::sleep(Duration::from_millis(800));
    let raw = String::from_utf8_lossy(&pty.raw()[before..]).to_string();
    let colours = colours_before(&raw, "OpenRouter");
    assert!(colours.len() >= 3, "the glow changes: {colours:?}");
    // Closed, the screen stays still.
    close_login(&mut pty);
    std::thread::sleep(Duration::from_millis(200));
    let still = pty.raw().len();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(pty.raw().len(), still, "no frames once /login is closed");
    quit(&mut pty);
}
