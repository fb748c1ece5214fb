//! The model picker as pi 1.6 draws it in the dock: the hint, the search line, the current
//! model marked `✓` first, the saved default badged, the model's name, and Ctrl+S saving
//! the choice as the default (Enter only switches this session); and `/session`'s cost per
//! model once more than one model answered.

use std::time::Duration;

use pi_test_support::Script;

use super::{quit, read_json, setup, wait_json, Pty, DOWN, ENTER, ESC};

#[test]
fn model_picker_marks_the_current_model_and_ctrl_s_saves_the_default() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 100);
    pty.send("\x0c"); // Ctrl+L
    pty.wait_text("Only showing models from configured providers. Use /login to add providers.");
    pty.wait_text("→ ✓ mock-model [mock-openai]");
    pty.wait_text("Model Name: Mock Model");
    pty.wait_text("Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel");
    // Enter: this session only.
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Model: mock-model");
    pty.wait_for("footer on anthropic", Duration::from_secs(5), |c| {
        c.contains("(mock-anthropic) mock-model")
    });
    let settings_path = s.agent.path().join("settings.json");
    let saved = std::fs::read_to_string(&settings_path).unwrap_or_default();
    assert!(!saved.contains("defaultProvider"), "{saved}");

    // Typing filters; Ctrl+S switches and saves the default.
    pty.send("\x0c");
    pty.wait_text("→ ✓ mock-model [mock-anthropic]");
    pty.type_text("google/mock-thinker");
    pty.wait_for("filtered", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.starts_with("→") && l.contains("mock-thinker [mock-google]"))
    });
    pty.send("\x13"); // Ctrl+S
    pty.wait_text("Default model: mock-google/mock-thinker");
    let settings = wait_json(&settings_path, |v| v["defaultModel"] == "mock-thinker");
    assert_eq!(settings["defaultProvider"], "mock-google");
    // The default is badged the next time.
    pty.send("\x0c");
    pty.wait_text("→ ✓ mock-thinker [mock-google] · default");
    pty.send("\x1b");
    pty.wait_for("closed", Duration::from_secs(5), |c| !c.contains("Model Name:"));
    assert_eq!(read_json(&settings_path)["defaultModel"], "mock-thinker");
    quit(&mut pty);
}

#[test]
fn session_lists_the_cost_of_each_model_that_answered() {
    let s = setup(Script::echo());
    let mut pty = s.pi(50, 100);
    pty.type_text("first question");
    pty.send(ENTER);
    pty.wait_text("echo: first question");
    // One model: the total alone.
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_text("Cost");
    assert!(
        !pty.contents().contains("mock-openai/mock-model: $"),
        "{}",
        pty.contents()
    );
    pty.type_text("/model mock-anthropic/mock-model");
    // As in pi 1.6, Enter first takes the argument menu's choice, then submits.
    pty.wait_text("mock-anthropic\n");
    pty.send(ENTER);
    pty.wait_for("menu closed", Duration::from_secs(10), |c| {
        !c.contains("mock-anthropic\n")
    });
    pty.send(ENTER);
    pty.wait_text("Model: mock-model");
    pty.type_text("second question");
    pty.send(ENTER);
    pty.wait_text("echo: second question");
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_for("per-model cost", Duration::from_secs(10), |c| {
        c.contains("mock-openai/mock-model: $") && c.contains("mock-anthropic/mock-model: $")
    });
    let c = pty.contents();
    let line = c.lines().find(|l| l.contains("mock-anthropic/mock-model: $")).unwrap();
    assert!(line.trim_end().ends_with("tokens)"), "{line}");
    quit(&mut pty);
}

/// A catalogue server on a free port: every request is answered by `reply` (given the request
/// head, lowercased) after `delay`.
fn catalogue_server(delay: Duration, reply: impl Fn(&str) -> String + Send + 'static) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            std::thread::sleep(delay);
            let answer = reply(&String::from_utf8_lossy(&head).to_ascii_lowercase());
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

/// With a built-in provider's key set, start on the mock model all the same.
const MOCK_MODEL: [&str; 2] = ["--model", "mock-openai/mock-model"];

/// Esc closes the picker; then quit.
fn close_and_quit(pty: &mut Pty) {
    pty.send(ESC);
    pty.wait_for("closed", Duration::from_secs(5), |c| !c.contains("to set as default"));
    quit(pty);
}

/// As in pi 1.6, opening the model picker refreshes the catalogues of the providers with
/// credentials: "Refreshing model catalogs…" while it runs, then the list holds what the
/// catalogue added and "Model catalogs refreshed." (offline at once); a catalogue that cannot
/// be fetched is named in red, and the cached models stay listed.
#[test]
fn model_picker_refreshes_the_model_catalogues() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 100);
    pty.send("\x0c");
    pty.wait_text("Model catalogs refreshed.");
    close_and_quit(&mut pty);

    let model = serde_json::json!({
        "id": "claude-catalogue-9", "name": "Claude Catalogue 9", "api": "anthropic-messages",
        "provider": "anthropic", "baseUrl": "https://api.anthropic.com", "reasoning": true,
        "input": ["text"], "cost": {"input": 1, "output": 5, "cacheRead": 0.1, "cacheWrite": 1.25},
        "contextWindow": 500000, "maxTokens": 64000
    });
    let body = serde_json::json!({ "models": [model] }).to_string();
    let url = catalogue_server(Duration::from_millis(1500), move |head| {
        if !head.starts_with("get /api/models/providers/anthropic?") {
            return "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into();
        }
        format!(
            // Newer than the built-in catalogue, or the built-in one is kept (as in 1.6).
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nlast-modified: Fri, 01 Jan 2027 00:00:00 GMT\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    });
    let online = [("ANTHROPIC_API_KEY", "sk-test"), ("PI_MODEL_CATALOG_URL", url.as_str())];

    // As in 1.6, a `PI_OFFLINE` set to nothing still keeps the catalogues offline: the
    // stored ones are read again at once and nothing new is listed.
    let empty = [online[0], online[1], ("PI_OFFLINE", "")];
    let mut pty = Pty::spawn_env(&MOCK_MODEL, s.cwd.path(), s.agent.path(), 40, 100, &empty);
    pty.wait_text("mock-model");
    pty.send("\x0c");
    pty.wait_text("Model catalogs refreshed.");
    pty.type_text("catalogue");
    pty.wait_text("No matching models");
    assert!(!pty.contents().contains("claude-catalogue-9"), "{}", pty.contents());
    close_and_quit(&mut pty);

    let mut pty = Pty::spawn_unset(
        &MOCK_MODEL,
        s.cwd.path(),
        s.agent.path(),
        40,
        100,
        &online,
        &["PI_OFFLINE"],
    );
    pty.wait_text("mock-model");
    pty.send("\x0c");
    pty.wait_text("Refreshing model catalogs…");
    pty.type_text("catalogue");
    pty.wait_for("refreshed", Duration::from_secs(15), |c| {
        c.contains("→   claude-catalogue-9 [anthropic]") && c.contains("Model catalogs refreshed.")
    });
    assert!(!pty.contents().contains("Refreshing"), "{}", pty.contents());
    close_and_quit(&mut pty);

    // A catalogue that answers 500: named, and the cached models stay.
    let s = setup(Script::echo());
    let url = catalogue_server(Duration::ZERO, |_| {
        "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into()
    });
    let online = [("ANTHROPIC_API_KEY", "sk-test"), ("PI_MODEL_CATALOG_URL", url.as_str())];
    let mut pty = Pty::spawn_unset(
        &MOCK_MODEL,
        s.cwd.path(),
        s.agent.path(),
        40,
        100,
        &online,
        &["PI_OFFLINE"],
    );
    pty.wait_text("mock-model");
    pty.send("\x0c");
    pty.wait_for("failure", Duration::from_secs(20), |c| {
        c.contains("Could not refresh anthropic; showing cached models.")
    });
    let shown = pty.contents();
    assert!(shown.contains("→ ✓ mock-model [mock-openai]"), "{shown}");
    assert!(!shown.contains("Model catalogs refreshed."), "{shown}");
    assert!(!shown.contains("Model Name:"), "{shown}");
    close_and_quit(&mut pty);
}
