//! `/scoped-models` with saved `enabledModels` entries that match no available model: pi 1.6
//! lists them struck through as unavailable and counts them apart, Enter turns one off, and a
//! save keeps the others, also those the list did not show.

use std::time::Duration;

use pi_test_support::Script;
use serde_json::json;

use super::{quit, set_setting, setup, wait_json, DOWN, ENTER, ESC};

#[test]
fn unavailable_saved_models_are_listed_struck_through_and_saved_again() {
    let s = setup(Script::echo());
    // Nothing matches, so the session has no scope and the list starts from the saved entries.
    set_setting(&s, "enabledModels", json!(["nokey/whatever", "mock-openai/gone-model"]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/scoped-models");
    pty.send(ENTER);
    pty.wait_text("Model Configuration");
    pty.wait_text("0/8 enabled · 2 unavailable");
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let first = rows.iter().position(|r| r.contains("[unavailable]")).expect("row");
    assert_eq!(rows[first], "→   nokey/whatever [unavailable]", "{}", pty.contents());
    assert_eq!(rows[first + 1], "    mock-openai/gone-model [unavailable]");
    assert!(pty.contents().contains("  Model unavailable"), "{}", pty.contents());
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(raw.contains("\x1b[9mmock-openai/gone-model"), "not struck through");
    // The available models follow, none ticked.
    assert!(
        pty.contents().contains("    mock-model [mock-openai]"),
        "{}",
        pty.contents()
    );
    // Enter turns the first one off: it leaves the list; the save keeps the other.
    pty.send(ENTER);
    pty.wait_text("0/8 enabled · 1 unavailable");
    assert!(!pty.contents().contains("nokey/whatever ["), "{}", pty.contents());
    pty.send("\x13"); // Ctrl+S
    let path = s.agent.path().join("settings.json");
    let settings = wait_json(&path, |v| v["enabledModels"].as_array().is_some_and(|a| a.len() == 1));
    assert_eq!(settings["enabledModels"], json!(["mock-openai/gone-model"]));
    // Enabling one model lists it first, the unavailable entry after it.
    pty.send(DOWN);
    std::thread::sleep(Duration::from_millis(100));
    pty.send(ENTER);
    pty.wait_text("1/8 enabled · 1 unavailable");
    pty.send("\x13");
    let settings = wait_json(&path, |v| v["enabledModels"].as_array().is_some_and(|a| a.len() == 2));
    assert_eq!(
        settings["enabledModels"],
        json!(["mock-openai/gone-model", "mock-openai/mock-model"])
    );
    pty.send(ESC);
    pty.wait_for("selector closed", Duration::from_secs(5), |c| {
        !c.contains("Model Configuration")
    });
    quit(&mut pty);
}

#[test]
fn saving_the_session_scope_keeps_unavailable_saved_models() {
    let s = setup(Script::echo());
    set_setting(
        &s,
        "enabledModels",
        json!(["mock-openai/mock-model", "mock-openai/mock-thinker", "gone/x"]),
    );
    let mut pty = s.pi(30, 100);
    pty.type_text("/scoped-models");
    pty.send(ENTER);
    pty.wait_text("Model Configuration");
    // The session's own set is shown (as pi 1.6 does), without the unavailable entry.
    pty.wait_text("2/8 enabled");
    assert!(!pty.contents().contains("[unavailable]"), "{}", pty.contents());
    pty.send(DOWN);
    std::thread::sleep(Duration::from_millis(100));
    pty.send(ENTER);
    pty.wait_text("1/8 enabled");
    pty.send("\x13"); // Ctrl+S
    let path = s.agent.path().join("settings.json");
    let settings = wait_json(&path, |v| v["enabledModels"].as_array().is_some_and(|a| a.len() == 2));
    // The entry the list never showed is still saved.
    assert_eq!(settings["enabledModels"], json!(["mock-openai/mock-model", "gone/x"]));
    pty.send(ESC);
    pty.wait_for("selector closed", Duration::from_secs(5), |c| {
        !c.contains("Model Configuration")
    });
    quit(&mut pty);
}

#[test]
fn reopening_applies_the_saved_set_to_the_session_again() {
    let s = setup(Script::echo());
    set_setting(
        &s,
        "enabledModels",
        json!(["mock-openai/mock-model", "mock-openai/mock-thinker", "gone/x"]),
    );
    let mut pty = s.pi(30, 100);
    // "All" for this session only: Ctrl+P then cycles through every model.
    pty.type_text("/scoped-models");
    pty.send(ENTER);
    pty.wait_text("Model catalogs refreshed.");
    pty.send("\x01"); // Ctrl+A
    pty.wait_text("all enabled");
    pty.send(ESC);
    pty.wait_for("selector closed", Duration::from_secs(5), |c| {
        !c.contains("Model Configuration")
    });
    // Opened again, it shows the saved set and, once the catalogues are refreshed, the
    // session cycles through that set again (pi 1.6 does the same).
    pty.type_text("/scoped-models");
    pty.send(ENTER);
    pty.wait_text("2/8 enabled · 1 unavailable");
    pty.wait_text("Model catalogs refreshed.");
    pty.send(ESC);
    pty.wait_for("selector closed", Duration::from_secs(5), |c| {
        !c.contains("Model Configuration")
    });
    let footer = |pty: &super::pty::Pty| pty.rows().last().cloned().unwrap_or_default();
    pty.send("\x10"); // Ctrl+P
    pty.wait_for("the thinker", Duration::from_secs(5), |_| {
        footer(&pty).contains("(mock-openai) mock-thinker")
    });
    pty.send("\x10");
    pty.wait_for("back to the first", Duration::from_secs(5), |_| {
        footer(&pty).contains("(mock-openai) mock-model")
    });
    quit(&mut pty);
}
