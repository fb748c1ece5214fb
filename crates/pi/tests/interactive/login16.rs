//! `/login` details of pi 1.6 on a pseudo-terminal: the API-key list names the providers that
//! have no chat models of their own (TypeSafe) and the built-in llama.cpp provider (its server
//! URL asked, checked and saved with the key), says where an environment key comes from, and
//! animates the highlighted partner names (Radius shimmers, OpenRouter glows) only while a list
//! is shown.

use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup, Setup, ENTER, ESC};

const DOWN: &str = "\x1b[B";
const UP: &str = "\x1b[A";

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
    pty.wait_text("→ TypeSafe ✓ stored");
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
    // The last row stays highlighted on Down, as in pi 1.6 (no wrapping around).
    pty.send(DOWN);
    std::thread::sleep(Duration::from_millis(200));
    assert!(pty.contents().contains("→ Sign in with Radius"));
    // Highlighting another row stops the animation: nothing more is written.
    pty.send(UP);
    pty.wait_text("→ Sign in with an API key");
    std::thread::sleep(Duration::from_millis(200));
    let still = pty.raw().len();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(pty.raw().len(), still, "no frames without an animated row");

    // OpenRouter's name glows in its lime, changing over time.
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

/// A llama.cpp router that answers every request with a one-model catalogue; the requests'
/// first lines and `Authorization` headers are kept.
fn llama_router() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line == "\r\n" {
                    break;
                }
                let lower = line.to_lowercase();
                if lower.starts_with("get ") || lower.starts_with("authorization:") {
                    log.lock().expect("log").push(line.trim().to_string());
                }
                line.clear();
            }
            let body = r#"{"data":[{"id":"qwen-small","status":{"value":"loaded"}}]}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

#[test]
fn llama_cpp_asks_for_its_server_checks_it_and_saves_the_url_with_the_key() {
    let s = setup(Script::sequential(vec![]));
    let (url, seen) = llama_router();
    let mut pty = s.pi(30, 100);
    open_key_list(&mut pty);
    pty.type_text("llama");
    pty.wait_text("→ llama.cpp • not configured");
    pty.send(ENTER);
    pty.wait_text("Login to llama.cpp");
    pty.wait_text("llama.cpp server URL");
    pty.wait_text("e.g., http://127.0.0.1:9931");
    // The API path and a trailing slash are dropped from what is saved.
    pty.type_text(&format!("{url}/v1/"));
    pty.send(ENTER);
    pty.wait_text("API key (optional)");
    pty.type_text("sekrit");
    pty.send(ENTER);
    pty.wait_for("the saved notice", Duration::from_secs(10), |c| {
        c.contains("Saved API key for llama.cpp. Credentials saved to")
    });
    let auth = auth_json(&s);
    assert_eq!(auth["llama.cpp"]["type"], "api_key");
    assert_eq!(auth["llama.cpp"]["key"], "sekrit");
    assert_eq!(auth["llama.cpp"]["env"]["LLAMA_BASE_URL"], url.as_str());
    let seen = seen.lock().expect("log").clone();
    assert!(seen.iter().any(|l| l.starts_with("GET /models ")), "{seen:?}");
    assert!(seen.iter().any(|l| l == "authorization: Bearer sekrit"), "{seen:?}");
    // `/llama` counts the saved server as configured (it no longer asks for a login).
    pty.type_text("/llama");
    pty.send(ENTER);
    pty.wait_text("The llama.cpp model manager is not available");
    assert!(!pty.contents().contains("Configure llama.cpp with /login"));
    quit(&mut pty);
}

#[test]
fn llama_cpp_without_a_router_says_why_and_saves_nothing() {
    let s = setup(Script::sequential(vec![]));
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let mut pty = s.pi(30, 100);
    open_key_list(&mut pty);
    pty.type_text("llama");
    pty.wait_text("→ llama.cpp • not configured");
    pty.send(ENTER);
    pty.wait_text("llama.cpp server URL");
    pty.type_text(&url);
    pty.send(ENTER);
    pty.wait_text("API key (optional)");
    pty.send(ENTER);
    let said = format!("Failed to save API key for llama.cpp: Could not reach llama.cpp server at {url}: ");
    pty.wait_for("the error", Duration::from_secs(10), |c| {
        c.split_whitespace().collect::<Vec<_>>().join(" ").contains(&said)
    });
    // The cause is the connection's, not the HTTP client's wrapper.
    assert!(pty.contents().contains("refused"), "{}", pty.contents());
    assert!(auth_json(&s).get("llama.cpp").is_none());
    quit(&mut pty);
}

#[test]
fn a_key_from_the_environment_is_named_by_its_variable() {
    let s = setup(Script::sequential(vec![]));
    // Anthropic's key is the last of its variables (after the token ones).
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("ANTHROPIC_API_KEY", "sk-env")],
    );
    // The key may make an Anthropic model the default: wait for the editor instead.
    pty.wait_text("Pi can explain its own features");
    pty.wait_stable(Duration::from_millis(300));
    open_key_list(&mut pty);
    pty.type_text("anthropic");
    pty.wait_text("Anthropic ✓ env: ANTHROPIC_API_KEY");
    close_login(&mut pty);
    quit(&mut pty);
}

#[test]
fn llama_cpp_is_not_offered_without_its_built_in_extension() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = Pty::spawn_env(&["--no-extensions"], s.cwd.path(), s.agent.path(), 30, 100, &[]);
    pty.wait_text("mock-model");
    open_key_list(&mut pty);
    pty.type_text("llama.cpp");
    pty.wait_text("No matching providers");
    close_login(&mut pty);
    quit(&mut pty);
}
