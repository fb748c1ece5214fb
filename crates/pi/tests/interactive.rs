//! End-to-end tests of the interactive mode: the real binary in a pseudo-terminal against the
//! mock LLM server, with the screen read back through a vt100 emulator.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

#[path = "interactive/audit16.rs"]
mod audit16;
#[path = "interactive/bug.rs"]
mod bug;
#[path = "interactive/components.rs"]
mod components;
#[path = "interactive/details16.rs"]
mod details16;
#[path = "interactive/editor_keys16.rs"]
mod editor_keys16;
#[path = "interactive/editor_menus.rs"]
mod editor_menus;
#[path = "interactive/ext_autocomplete.rs"]
mod ext_autocomplete;
#[path = "interactive/ext_dialogs16.rs"]
mod ext_dialogs16;
#[path = "interactive/ext_issues16.rs"]
mod ext_issues16;
#[path = "interactive/ext_listing.rs"]
mod ext_listing;
#[path = "interactive/ext_replace.rs"]
mod ext_replace;
#[path = "interactive/ext_restyle.rs"]
mod ext_restyle;
#[path = "interactive/ext_shutdown.rs"]
mod ext_shutdown;
#[path = "interactive/ext_ui16.rs"]
mod ext_ui16;
#[path = "interactive/extensions.rs"]
mod extensions;
#[path = "interactive/fullscreen.rs"]
mod fullscreen;
#[path = "interactive/fullscreen_select.rs"]
mod fullscreen_select;
#[path = "interactive/header16.rs"]
mod header16;
#[path = "interactive/hotkeys16.rs"]
mod hotkeys16;
#[path = "interactive/images16.rs"]
mod images16;
#[path = "interactive/keybindings16.rs"]
mod keybindings16;
#[path = "interactive/login.rs"]
mod login;
#[path = "interactive/login16.rs"]
mod login16;
#[path = "interactive/looks16.rs"]
mod looks16;
#[path = "interactive/mcp.rs"]
mod mcp;
#[path = "interactive/mermaid16.rs"]
mod mermaid16;
#[path = "interactive/mouse_dock.rs"]
mod mouse_dock;
#[path = "interactive/mouse_status.rs"]
mod mouse_status;
#[path = "interactive/mouse_transcript.rs"]
mod mouse_transcript;
#[path = "interactive/notices16.rs"]
mod notices16;
#[path = "interactive/pickers.rs"]
mod pickers;
#[path = "interactive/pty.rs"]
mod pty;
#[path = "interactive/queue16.rs"]
mod queue16;
#[path = "interactive/ref_examples.rs"]
mod ref_examples;
#[path = "interactive/resume16.rs"]
mod resume16;
#[path = "interactive/scoped16.rs"]
mod scoped16;
#[path = "interactive/screens16.rs"]
mod screens16;
#[path = "interactive/session16.rs"]
mod session16;
#[path = "interactive/settings16.rs"]
mod settings16;
#[path = "interactive/settings_effects16.rs"]
mod settings_effects16;
#[path = "interactive/slash_args16.rs"]
mod slash_args16;
#[path = "interactive/startup_notices.rs"]
mod startup_notices;
#[path = "interactive/tall_component.rs"]
mod tall_component;
#[path = "interactive/theme_query.rs"]
mod theme_query;
#[path = "interactive/thinking.rs"]
mod thinking;
#[path = "interactive/tools16.rs"]
mod tools16;
#[path = "interactive/transcript16.rs"]
mod transcript16;
#[path = "interactive/tree16.rs"]
mod tree16;
#[path = "interactive/trust.rs"]
mod trust;
#[path = "interactive/user_bash.rs"]
mod user_bash;

use std::time::Duration;

use pi_test_support::{AgentDir, MockServer, Script, Turn};
use pty::Pty;
use serde_json::json;

struct Setup {
    _rt: tokio::runtime::Runtime,
    server: MockServer,
    agent: AgentDir,
    cwd: tempfile::TempDir,
}

fn setup(script: Script) -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let server = rt.block_on(MockServer::start(script)).expect("mock server");
    let agent = AgentDir::new(&server).expect("agent dir");
    let cwd = tempfile::tempdir().expect("cwd");
    Setup {
        _rt: rt,
        server,
        agent,
        cwd,
    }
}

impl Setup {
    fn pi(&self, rows: u16, cols: u16) -> Pty {
        let pty = Pty::spawn(&[], self.cwd.path(), self.agent.path(), rows, cols);
        // The first frame: the footer names the model.
        pty.wait_text("mock-model");
        pty
    }
}

const ENTER: &str = "\r";
const ESC: &str = "\x1b";
const CTRL_D: &str = "\x04";
const CTRL_C: &str = "\x03";

fn quit(pty: &mut Pty) {
    pty.send(CTRL_D);
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
    // Bracketed paste off and the cursor shown again: the terminal is restored. (The reader
    // thread may still be taking the last bytes.)
    let restored = |raw: &str| {
        let tail = &raw[raw.rfind("\x1b[?2004h").unwrap_or(0)..];
        tail.contains("\x1b[?2004l") && tail.contains("\x1b[?25h")
    };
    let start = std::time::Instant::now();
    while !restored(&String::from_utf8_lossy(&pty.raw())) && start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        restored(&String::from_utf8_lossy(&pty.raw())),
        "terminal not restored (bracketed paste off, cursor shown)"
    );
}

#[test]
fn prompt_streams_the_answer_and_quits_cleanly() {
    let s = setup(Script::sequential(vec![Turn::text(
        "Here is **bold** and a list:\n\n- one\n- two",
    )]));
    let mut pty = s.pi(30, 100);
    pty.type_text("hello there");
    pty.wait_text("hello there");
    pty.send(ENTER);
    pty.wait_text("Here is bold and a list:");
    pty.wait_text("- one");
    // Footer totals appear after the reply.
    pty.wait_for("token totals", Duration::from_secs(10), |c| {
        c.contains('↑') && c.contains('↓')
    });
    assert_eq!(s.server.requests().len(), 1);
    quit(&mut pty);
}

#[test]
fn reload_reads_context_files_again_and_keeps_the_session() {
    let s = setup(Script::sequential(vec![Turn::text("first"), Turn::text("second")]));
    std::fs::write(s.cwd.path().join("AGENTS.md"), "old-rules-aaa\n").expect("write");
    let mut pty = s.pi(30, 100);
    pty.type_text("one");
    pty.send(ENTER);
    pty.wait_text("first");
    std::fs::write(s.cwd.path().join("AGENTS.md"), "new-rules-bbb\n").expect("write");
    pty.type_text("/reload");
    pty.send(ENTER);
    pty.wait_text("Reloaded keybindings");
    pty.type_text("two");
    pty.send(ENTER);
    pty.wait_text("second");
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2);
    let body = |i: usize| requests[i].body.to_string();
    assert!(body(0).contains("old-rules-aaa"), "{}", body(0));
    assert!(body(1).contains("new-rules-bbb") && !body(1).contains("old-rules-aaa"));
    // The same session continues: the second request still carries the first exchange.
    assert!(body(1).contains("first"), "{}", body(1));
    quit(&mut pty);
}

#[test]
fn tool_runs_and_its_output_is_shown() {
    let s = setup(Script::sequential(vec![
        Turn::tool_call("bash", json!({"command": "echo tool-output-xyz"})),
        Turn::text("All done."),
    ]));
    let mut pty = s.pi(30, 100);
    pty.type_text("run it");
    pty.send(ENTER);
    pty.wait_text("$ echo tool-output-xyz");
    pty.wait_text("All done.");
    let c = pty.contents();
    assert!(c.lines().any(|l| l.trim() == "tool-output-xyz"), "{c}");
    quit(&mut pty);
}

#[test]
fn enter_while_running_steers_and_escape_aborts() {
    let s = setup(Script::sequential(vec![
        Turn::tool_call("bash", json!({"command": "sleep 1.5; echo slept"})),
        Turn::text("Steered reply."),
        Turn::tool_call("bash", json!({"command": "sleep 30"})),
        Turn::text("never"),
    ]));
    let mut pty = s.pi(30, 100);
    pty.type_text("first");
    pty.send(ENTER);
    pty.wait_text("$ sleep 1.5; echo slept");
    pty.type_text("change course");
    pty.send(ENTER);
    pty.wait_text("Steering: change course");
    pty.wait_text("Steered reply.");
    // The steering message reached the model with the tool result.
    let reqs = s.server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].body.to_string().contains("change course"));

    // A long run: queue a follow-up, then Esc aborts and puts it back into the editor.
    pty.type_text("second");
    pty.send(ENTER);
    pty.wait_text("$ sleep 30");
    pty.type_text("later please");
    pty.send("\x1b\r");
    pty.wait_text("Follow-up: later please");
    pty.send(ESC);
    pty.wait_text("Operation aborted");
    pty.wait_for("queue restored", Duration::from_secs(5), |c| {
        !c.contains("Follow-up: later please") && c.contains("later please")
    });
    // Ctrl+D only quits on an empty editor.
    pty.send(CTRL_D);
    std::thread::sleep(Duration::from_millis(200));
    assert!(pty.is_running(), "quit with text in the editor");
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| {
        !c.contains("later please")
    });
    quit(&mut pty);
}

#[test]
fn resize_redraws_at_the_new_width() {
    let s = setup(Script::sequential(vec![Turn::text("short answer")]));
    let mut pty = s.pi(24, 100);
    pty.type_text("hi");
    pty.send(ENTER);
    pty.wait_text("short answer");
    pty.resize(20, 60);
    pty.wait_for("footer at 60 columns", Duration::from_secs(5), |_| {
        pty.rows()
            .iter()
            .any(|r| r.chars().count() == 60 && r.ends_with("mock-model"))
    });
    let rows = pty.rows();
    assert!(rows.iter().all(|r| r.chars().count() <= 60));
    quit(&mut pty);
}

#[test]
fn ctrl_c_clears_then_quits() {
    let s = setup(Script::echo());
    let mut pty = s.pi(24, 80);
    pty.type_text("some draft");
    pty.wait_text("some draft");
    pty.send(CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(5), |c| !c.contains("some draft"));
    std::thread::sleep(Duration::from_millis(600));
    pty.send(CTRL_C);
    std::thread::sleep(Duration::from_millis(100));
    pty.send(CTRL_C);
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn bang_runs_a_shell_command() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("!echo from-the-shell");
    pty.send(ENTER);
    pty.wait_text("$ echo from-the-shell");
    pty.wait_for("output", Duration::from_secs(10), |c| {
        c.lines().any(|l| l.trim() == "from-the-shell")
    });
    assert!(s.server.requests().is_empty());
    quit(&mut pty);
}

#[test]
fn bang_streams_a_long_output_and_export_copies_the_session() {
    let s = setup(Script::sequential(vec![Turn::text("Noted.")]));
    let mut pty = s.pi(50, 100);
    pty.type_text("!seq 1 3000");
    pty.send(ENTER);
    // Streamed chunk by chunk, shown as its last lines over a count of the rest (of the
    // 2000 lines the context keeps, as pi 1.6 counts them).
    pty.wait_for("the last line", Duration::from_secs(10), |c| {
        c.lines().any(|l| l.trim() == "3000") && c.contains("... 1980 more lines (ctrl+o to expand)")
    });
    pty.type_text("remember that");
    pty.send(ENTER);
    pty.wait_text("Noted.");
    let out = s.cwd.path().join("copy.jsonl");
    pty.type_text("/export copy.jsonl");
    pty.send(ENTER);
    // A copy is named by its full path, a page as it was asked for (pi 1.6's words).
    pty.wait_text(&format!("Session exported to: {}", out.display()));
    let text = std::fs::read_to_string(&out).expect("the exported copy");
    assert!(text.contains("remember that") && text.contains("Noted."), "{text}");
    pty.type_text("/export");
    pty.send(ENTER);
    pty.wait_for("the default page's bare name", Duration::from_secs(20), |c| {
        c.lines()
            .any(|l| l.starts_with(" Session exported to: pi-session-") && l.trim_end().ends_with(".html"))
    });
    pty.type_text("/export one.html");
    pty.send(ENTER);
    pty.wait_text("Session exported to: one.html");
    assert!(s.cwd.path().join("one.html").exists());
    quit(&mut pty);
}

#[test]
fn thinking_blocks_toggle_and_tools_expand() {
    let s = setup(Script::sequential(vec![
        Turn::tool_call("bash", json!({"command": "seq 1 9"})),
        Turn::text("Counted.").with_thinking("Pondering the count"),
    ]));
    let mut pty = s.pi(40, 100);
    pty.type_text("count");
    pty.send(ENTER);
    pty.wait_text("Counted.");
    pty.wait_text("Pondering the count");
    // Collapsed bash preview: the last five lines and a hint.
    pty.wait_text("earlier lines, ctrl+o to expand");
    pty.send("\x14"); // Ctrl+T
    pty.wait_for("thinking hidden", Duration::from_secs(5), |c| {
        c.contains("Thinking...") && !c.contains("Pondering the count")
    });
    pty.send("\x0f"); // Ctrl+O
    pty.wait_for("tool output expanded", Duration::from_secs(5), |c| {
        !c.contains("earlier lines, ctrl+o to expand") && c.lines().any(|l| l.trim() == "1")
    });
    quit(&mut pty);
}

#[test]
fn slash_commands_name_and_session() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 100);
    pty.type_text("/name my work");
    pty.send(ENTER);
    pty.wait_text("Session name set: my work");
    pty.wait_text("• my work");
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_text("Session Info");
    pty.wait_text("Name: my work");
    // No request yet, so nothing to keep warm (the mock models have no cache lifetime).
    pty.wait_text("Mode: idle");
    pty.wait_text("Status: Inactive (waiting for first request)");
    pty.type_text("/quit");
    pty.send(ENTER);
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn retry_wait_shows_a_countdown_and_escape_cancels_it() {
    let s = setup(Script::sequential(vec![Turn::fault(
        pi_test_support::Fault::overloaded(),
    )]));
    let mut pty = s.pi(30, 100);
    pty.type_text("try");
    pty.send(ENTER);
    pty.wait_text("Retrying (1/3) in");
    pty.send(ESC);
    pty.wait_for("retry cancelled", Duration::from_secs(10), |c| {
        !c.contains("Retrying (")
    });
    quit(&mut pty);
}

const DOWN: &str = "\x1b[B";

/// Move a list's `→` marker down to the row starting with `label`.
fn select_row(pty: &mut Pty, label: &str) {
    for _ in 0..60 {
        if pty.contents().contains(&format!("→ {label}")) {
            return;
        }
        pty.send(DOWN);
        std::thread::sleep(Duration::from_millis(40));
    }
    panic!("row {label} not found; screen:\n{}", pty.contents());
}

fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("json")
}

/// The JSON file once `done` holds for it: settings are written off the UI thread, a moment
/// after the screen shows the change.
fn wait_json(path: &std::path::Path, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let value = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        if done(&value) || std::time::Instant::now() > deadline {
            return value;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn settings_menu_changes_are_saved_and_applied() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 100);
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    pty.wait_text("Type to search · Enter/Space to change · Esc to cancel");
    // Typing narrows the rows.
    pty.type_text("treefil");
    pty.wait_for("search", Duration::from_secs(5), |c| {
        c.contains("→ Tree filter mode") && !c.contains("Auto-compact")
    });
    pty.send(ENTER);
    pty.wait_for("tree filter no-tools", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.contains("→ Tree filter mode") && l.trim_end().ends_with("no-tools"))
    });
    pty.send(&"\x7f".repeat(7));
    pty.wait_text("→ Auto-compact");
    select_row(&mut pty, "Steering mode");
    pty.send(ENTER);
    pty.wait_for("steering mode all", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.contains("→ Steering mode") && l.trim_end().ends_with("all"))
    });
    select_row(&mut pty, "Double-escape action");
    pty.send(ENTER);
    pty.wait_for("double escape fork", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.contains("→ Double-escape action") && l.trim_end().ends_with("fork"))
    });
    select_row(&mut pty, "Auto-compact");
    pty.send(" ");
    pty.wait_for("auto-compact off", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.contains("→ Auto-compact") && l.trim_end().ends_with("false"))
    });
    // Warnings: a list of its own, each warning on or off.
    select_row(&mut pty, "Warnings");
    pty.send(ENTER);
    pty.wait_for("extra usage on", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.starts_with("→ Anthropic extra usage") && l.trim_end().ends_with("true"))
    });
    pty.send(ENTER);
    pty.wait_for("extra usage off", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.starts_with("→ Anthropic extra usage") && l.trim_end().ends_with("false"))
    });
    pty.send(ESC);
    pty.wait_text("→ Warnings");
    // The theme opens its own list; Esc there goes back to the menu without a change.
    select_row(&mut pty, "Theme");
    pty.send(ENTER);
    // `system` is the default, listed first, then automatic mode.
    pty.wait_text("→ ✓ system");
    pty.send(DOWN);
    pty.wait_text("→   automatic");
    pty.send(DOWN);
    pty.wait_text("→   dark");
    pty.send(ESC);
    pty.wait_text("→ Theme");
    pty.send(ENTER);
    pty.wait_text("→ ✓ system");
    pty.send(&DOWN.repeat(3));
    pty.wait_text("→   light");
    pty.send(ENTER);
    pty.wait_for("theme light", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.contains("→ Theme") && l.trim_end().ends_with("light"))
    });
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("→ Theme"));
    // The theme was the last change: once it is in the file, so is everything before it.
    let settings = wait_json(&s.agent.path().join("settings.json"), |v| v["theme"] == "light");
    assert_eq!(settings["theme"], "light");
    assert_eq!(settings["warnings"]["anthropicExtraUsage"], false);
    assert_eq!(settings["treeFilterMode"], "no-tools");
    assert_eq!(settings["steeringMode"], "all");
    assert_eq!(settings["doubleEscapeAction"], "fork");
    assert_eq!(settings["compaction"]["enabled"], false);
    // The footer no longer says the context compacts automatically.
    assert!(!pty.contents().contains("(auto)"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn login_saves_an_api_key_and_logout_removes_it() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 120);
    let auth_path = s.agent.path().join("auth.json");
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Sign in with an API key");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.type_text("mock-anth");
    pty.wait_for("filtered", Duration::from_secs(5), |c| {
        c.contains("mock-anthropic") && !c.contains("mock-responses")
    });
    // Where the provider's key comes from today.
    pty.wait_text("✓ models_json_key");
    pty.send(ENTER);
    pty.wait_text("Enter mock-anthropic API key");
    pty.type_text("sk-typed-key");
    pty.send(ENTER);
    pty.wait_text("Saved API key for mock-anthropic");
    let auth = read_json(&auth_path);
    assert_eq!(
        auth["mock-anthropic"],
        json!({"type": "api_key", "key": "sk-typed-key"})
    );

    pty.type_text("/logout");
    pty.send(ENTER);
    pty.wait_text("Select provider to logout:");
    pty.send(ENTER);
    pty.wait_text("Removed stored API key for mock-anthropic");
    let auth = read_json(&auth_path);
    assert!(auth.get("mock-anthropic").is_none(), "{auth}");

    pty.type_text("/logout");
    pty.send(ENTER);
    pty.wait_text("No stored credentials to remove.");
    quit(&mut pty);
}

/// The `provider/id` of the model row marked `→` in the scoped-models selector.
fn marked_model(pty: &Pty) -> String {
    let c = pty.contents();
    let line = c
        .lines()
        .find(|l| l.trim_start().starts_with("→ "))
        .expect("marked row");
    // The row: "→ ", the tick of an enabled model, the id, the provider.
    let mut parts = line
        .trim_start()
        .trim_start_matches("→ ")
        .trim_start_matches("✓ ")
        .split_whitespace();
    let id = parts.next().expect("id");
    let provider = parts.next().expect("provider").trim_matches(|c| c == '[' || c == ']');
    format!("{provider}/{id}")
}

#[test]
fn scoped_models_choose_order_save_and_drive_cycling() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 120);
    pty.type_text("/scoped-models");
    pty.send(ENTER);
    pty.wait_text("Model Configuration");
    pty.wait_text("all enabled");
    // The catalogues are refreshed while it is open, as in the model picker.
    pty.wait_text("  Model catalogs refreshed.");
    // Every model is ticked; Enter turns one off, as pi 1.6 does.
    assert!(
        pty.contents().contains("→ ✓ mock-model [mock-openai]"),
        "{}",
        pty.contents()
    );
    pty.send(ENTER);
    pty.wait_text("7/8 enabled");
    pty.send("\x18"); // Ctrl+X: clear
    pty.wait_text("0/8 enabled");
    let first = marked_model(&pty);
    pty.send(ENTER);
    pty.wait_text("1/8 enabled");
    pty.send(DOWN);
    std::thread::sleep(Duration::from_millis(100));
    let second = marked_model(&pty);
    pty.send(ENTER);
    pty.wait_text("2/8 enabled");
    pty.send("\x1b\x1b[A"); // Alt+Up: the second moves before the first
    pty.wait_for("reordered", Duration::from_secs(5), |c| {
        let rows: Vec<&str> = c.lines().filter(|l| l.contains(" [mock-")).collect();
        rows.first().is_some_and(|r| r.trim_start().starts_with("→ "))
    });
    pty.send("\x13"); // Ctrl+S
                      // The file may be read while it is being written: wait_json retries until it parses.
    let settings_path = s.agent.path().join("settings.json");
    let settings = wait_json(&settings_path, |v| !v["enabledModels"].is_null());
    assert_eq!(settings["enabledModels"], json!([second, first]));
    // Session only: drop one more; cycling then has nothing to switch to.
    pty.send(ENTER);
    pty.wait_text("1/8 enabled");
    pty.send(ESC);
    pty.wait_for("selector closed", Duration::from_secs(5), |c| {
        !c.contains("Model Configuration")
    });
    pty.wait_text("Model selection saved to settings");
    pty.send("\x10"); // Ctrl+P
    pty.wait_text("Only one model in scope");
    let settings = read_json(&s.agent.path().join("settings.json"));
    assert_eq!(settings["enabledModels"], json!([second, first]));
    quit(&mut pty);
}

#[test]
fn changelog_shows_whats_new() {
    let s = setup(Script::echo());
    // Tall enough for the whole changelog, so its heading is still on screen.
    let mut pty = s.pi(150, 100);
    pty.type_text("/changelog");
    pty.send(ENTER);
    pty.wait_text("What's New");
    pty.wait_text("[0.73.1]");
    // As pi 1.6: a rule, the title, a blank row and the markdown's own padding row, then the
    // oldest section first.
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let title = rows.iter().position(|r| r == " What's New").expect("title row");
    assert!(rows[title - 1].starts_with("────"), "{}", pty.contents());
    assert_eq!(rows[title + 1..title + 4], ["", "", " [0.73.0]"], "{}", pty.contents());
    assert!(s.server.requests().is_empty());
    quit(&mut pty);
}

/// A folder holding a fake `gh`: `auth status` exits with `auth_code`; `gist create` records
/// its arguments and the uploaded file next to itself and prints a gist URL.
fn fake_gh(auth_code: i32) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("gist-args");
    let copy = dir.path().join("uploaded.html");
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = auth ]; then exit {auth_code}; fi\n\
         echo \"$@\" > '{}'\nfor a; do f=\"$a\"; done\ncp \"$f\" '{}'\n\
         echo https://gist.github.com/someone/f00dcafe\n",
        log.display(),
        copy.display()
    );
    let gh = dir.path().join("gh");
    std::fs::write(&gh, script).expect("write gh");
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn path_with(dir: &std::path::Path) -> String {
    format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default())
}

#[test]
fn share_uploads_a_secret_gist_through_gh() {
    let s = setup(Script::echo());
    let gh = fake_gh(0);
    let path = path_with(gh.path());
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        40,
        120,
        &[("PATH", &path), ("PI_SHARE_VIEWER_URL", "http://viewer.test/")],
    );
    pty.wait_text("mock-model");
    pty.type_text("share me");
    pty.send(ENTER);
    pty.wait_for("reply", Duration::from_secs(10), |c| c.matches("share me").count() >= 2);
    pty.type_text("/share");
    pty.send(ENTER);
    pty.wait_text("Share URL: http://viewer.test/#f00dcafe");
    pty.wait_text("Gist: https://gist.github.com/someone/f00dcafe");
    let args = std::fs::read_to_string(gh.path().join("gist-args")).expect("gh ran");
    assert!(args.starts_with("gist create --public=false "), "{args}");
    assert!(args.trim_end().ends_with("session.html"), "{args}");
    let html = std::fs::read_to_string(gh.path().join("uploaded.html")).expect("uploaded");
    assert!(html.contains("<html"), "not an HTML export");
    // The temporary export is gone.
    let uploaded = std::path::PathBuf::from(args.trim_end().rsplit(' ').next().expect("file"));
    assert!(!uploaded.exists());
    quit(&mut pty);
}

#[test]
fn share_explains_a_missing_or_logged_out_gh() {
    let s = setup(Script::echo());
    let gh = fake_gh(1);
    let path = path_with(gh.path());
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 120, &[("PATH", &path)]);
    pty.wait_text("mock-model");
    pty.type_text("/share");
    pty.send(ENTER);
    pty.wait_text("GitHub CLI is not logged in. Run 'gh auth login' first.");
    quit(&mut pty);

    // No gh at all (only the system folders, where setsid lives): pi 1.6 says the same, as
    // it takes any failure of `gh auth status` for a missing login.
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 120, &[("PATH", "/usr/bin:/bin")]);
    pty.wait_text("mock-model");
    pty.type_text("/share");
    pty.send(ENTER);
    pty.wait_text("Error: GitHub CLI is not logged in. Run 'gh auth login' first.");
    // The check comes before the upload: no loader was shown for it.
    assert!(!String::from_utf8_lossy(&pty.raw()).contains("Creating gist"));
    quit(&mut pty);
}

const UP: &str = "\x1b[A";

/// The entries of the one session file under the agent folder.
fn session_entries(agent: &std::path::Path) -> Vec<serde_json::Value> {
    fn find(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                find(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    find(&agent.join("sessions"), &mut files);
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0])
        .expect("session")
        .lines()
        .map(|l| serde_json::from_str(l).expect("entry"))
        .collect()
}

/// The session's entries once `done` holds for them (at most 10 s): the screen may show a
/// change before the line recording it reaches the file (pi writes off the UI thread), and a
/// line being appended is not read half-written.
fn wait_entries(agent: &std::path::Path, done: impl Fn(&[serde_json::Value]) -> bool) -> Vec<serde_json::Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut files = Vec::new();
        for dir in std::fs::read_dir(agent.join("sessions"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for e in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
                if e.path().extension().is_some_and(|x| x == "jsonl") {
                    files.push(e.path());
                }
            }
        }
        let entries: Option<Vec<serde_json::Value>> = match files.as_slice() {
            [file] => std::fs::read_to_string(file)
                .ok()
                .filter(|text| text.ends_with('\n'))
                .and_then(|text| text.lines().map(|l| serde_json::from_str(l).ok()).collect()),
            _ => None,
        };
        if let Some(entries) = &entries {
            if done(entries) {
                return entries.clone();
            }
        }
        if std::time::Instant::now() > deadline {
            return entries.unwrap_or_else(|| session_entries(agent));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn tree_edits_labels_and_summarizes_the_branch_left_behind() {
    let s = setup(Script::queue(vec![
        Turn::text("first answer"),
        Turn::text("second answer"),
        Turn::text("Summary of the abandoned branch"),
    ]));
    let mut pty = s.pi(50, 140);
    two_exchanges_then_tree_on_the_first_answer(&mut pty);
    pty.send("L");
    pty.wait_text("Label (empty to remove):");
    pty.type_text("checkpoint");
    pty.send(ENTER);
    pty.wait_text("[checkpoint] assistant: first answer");
    let labels: Vec<_> = wait_entries(s.agent.path(), |e| e.iter().any(|e| e["type"] == "label"))
        .into_iter()
        .filter(|e| e["type"] == "label")
        .collect();
    assert_eq!(labels.len(), 1);
    assert_eq!(labels[0]["label"], "checkpoint");
    pty.send("T");
    pty.wait_text("[+label time]");

    // Esc on the summary question goes back to the tree.
    pty.send(ENTER);
    pty.wait_text("Summarize branch?");
    pty.send(ESC);
    pty.wait_text("Session Tree");
    pty.send(ENTER);
    pty.wait_text("Summarize with custom prompt");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Navigated to selected point");
    let entries = wait_entries(s.agent.path(), |e| e.iter().any(|e| e["type"] == "branch_summary"));
    let summary = entries
        .iter()
        .find(|e| e["type"] == "branch_summary")
        .expect("branch summary entry");
    assert!(
        summary["summary"]
            .as_str()
            .is_some_and(|t| t.contains("Summary of the abandoned branch")),
        "{summary}"
    );
    // The summary request carried the branch being left.
    let reqs = s.server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[2].body.to_string().contains("second answer"));
    // The answer the session moved to is the new position's parent of the summary.
    let first_answer = entries
        .iter()
        .find(|e| e["message"]["role"] == "assistant" && e["message"]["content"].to_string().contains("first answer"))
        .expect("first answer");
    assert_eq!(summary["parentId"], first_answer["id"]);
    quit(&mut pty);
}

#[test]
fn share_can_be_cancelled_while_the_gist_is_created() {
    use std::os::unix::fs::PermissionsExt;
    let s = setup(Script::echo());
    let dir = tempfile::tempdir().expect("dir");
    let gh = dir.path().join("gh");
    std::fs::write(&gh, "#!/bin/sh\nif [ \"$1\" = auth ]; then exit 0; fi\nexec sleep 30\n").expect("gh");
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = path_with(dir.path());
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 120, &[("PATH", &path)]);
    pty.wait_text("mock-model");
    pty.type_text("hi");
    pty.send(ENTER);
    pty.wait_text("echo: hi");
    pty.type_text("/share");
    pty.send(ENTER);
    pty.wait_text("Creating gist...");
    // Under 1.6's bordered loader in the editor's place.
    pty.wait_for("the bordered loader", Duration::from_secs(10), |_| {
        bug::bordered_loader(&pty.rows(), "Creating gist...")
    });
    pty.send(ESC);
    pty.wait_text("Share cancelled");
    pty.wait_for("status cleared", Duration::from_secs(5), |c| {
        !c.contains("Creating gist...")
    });
    quit(&mut pty);
}

#[test]
fn tree_summary_with_custom_instructions_can_be_cancelled() {
    let s = setup(Script::queue(vec![
        Turn::text("first answer"),
        Turn::text("second answer"),
        Turn::text("a slow summary that never finishes in time").with_delay_ms(3000),
    ]));
    let mut pty = s.pi(50, 140);
    two_exchanges_then_tree_on_the_first_answer(&mut pty);
    pty.send(ENTER);
    pty.wait_text("Summarize branch?");
    pty.send(DOWN);
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Custom summarization instructions");
    pty.type_text("focus on the tests");
    pty.send(ENTER);
    pty.wait_text("Summarizing branch...");
    pty.wait_for("summary request", Duration::from_secs(5), |_| {
        s.server.requests().len() == 3
    });
    assert!(s.server.requests()[2].body.to_string().contains("focus on the tests"));
    pty.send(ESC);
    // Back in the tree, nothing changed.
    pty.wait_for("tree again", Duration::from_secs(5), |c| {
        c.contains("Session Tree") && !c.contains("Summarizing branch...")
    });
    pty.send(ESC);
    pty.wait_for("tree closed", Duration::from_secs(5), |c| !c.contains("Session Tree"));
    pty.wait_text("Branch summarization cancelled");
    let entries = session_entries(s.agent.path());
    assert!(entries.iter().all(|e| e["type"] != "branch_summary"));
    quit(&mut pty);
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn installed_packages_behind_their_remote_get_a_notice() {
    if pi_test_support::require::tool("git", "a git package behind its remote").is_none() {
        return;
    }
    let s = setup(Script::sequential(vec![]));
    let root = tempfile::tempdir().expect("root");
    let work = root.path().join("work");
    std::fs::create_dir_all(work.join("prompts")).unwrap();
    std::fs::write(work.join("prompts/hi.md"), "Say hi\n").unwrap();
    git(root.path(), &["init", "-q", work.to_str().unwrap()]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "one"]);
    let bare = root.path().join("r.git");
    git(
        root.path(),
        &["clone", "-q", "--bare", work.to_str().unwrap(), bare.to_str().unwrap()],
    );
    // Installed where pi keeps `git:example.com/u/r`, then the remote moves on.
    let installed = s.agent.path().join("git/example.com/u/r");
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
    git(
        root.path(),
        &["clone", "-q", bare.to_str().unwrap(), installed.to_str().unwrap()],
    );
    std::fs::write(work.join("prompts/bye.md"), "Say bye\n").unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "two"]);
    git(&work, &["push", "-q", bare.to_str().unwrap(), "HEAD:main"]);
    set_setting(&s, "packages", json!(["git:example.com/u/r"]));

    // Online (the check never runs offline).
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("PI_OFFLINE", "")]);
    pty.wait_text("Package Updates Available");
    pty.wait_text("- example.com/u/r");
    assert!(pty.contents().contains("pi update"));
    quit(&mut pty);
}

/// `pi -p first` in the fixture, so the project has a saved session.
fn saved_session(s: &Setup) {
    let bin = std::env::var("PI_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_pi").to_string());
    let out = std::process::Command::new(bin)
        .args(["-p", "first question"])
        .current_dir(s.cwd.path())
        .env("PI_CODING_AGENT_DIR", s.agent.path())
        .env("PI_OFFLINE", "1")
        .output()
        .expect("pi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn resume_flag_in_print_mode_picks_a_session_first() {
    let s = setup(Script::sequential(vec![
        Turn::text("first answer"),
        Turn::text("second answer"),
    ]));
    saved_session(&s);
    let mut pty = Pty::spawn(&["-r", "-p", "second question"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("Resume Session (Current Folder)");
    pty.wait_text("first question");
    pty.send(ENTER);
    pty.wait_text("second answer");
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
    // The reply went into the chosen session: both exchanges are in its one file.
    let dir = std::fs::read_dir(s.agent.path().join("sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        text.contains("first answer") && text.contains("second answer"),
        "{text}"
    );
    let second = &s.server.requests()[1];
    assert!(
        second.body.to_string().contains("first answer"),
        "history sent with the prompt"
    );
}

#[test]
fn resume_flag_in_print_mode_cancelled_exits_cleanly() {
    let s = setup(Script::sequential(vec![Turn::text("first answer")]));
    saved_session(&s);
    let mut pty = Pty::spawn(&["-r", "-p", "never sent"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("first question");
    pty.send(ESC);
    pty.wait_text("No session selected");
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
    assert_eq!(s.server.requests().len(), 1, "nothing was sent");
}

#[test]
fn quiet_startup_hides_the_header_unless_verbose() {
    let s = setup(Script::sequential(vec![]));
    set_setting(&s, "quietStartup", json!(true));
    let header = "to show full startup help";

    let mut quiet = s.pi(30, 100);
    assert!(!quiet.contents().contains(header), "{}", quiet.contents());
    quit(&mut quiet);

    let mut verbose = Pty::spawn(&["--verbose"], s.cwd.path(), s.agent.path(), 30, 100);
    verbose.wait_text(header);
    quit(&mut verbose);
}

#[test]
fn the_loaded_resources_are_listed_under_the_header_and_ctrl_o_expands_both() {
    let s = setup(Script::sequential(vec![]));
    std::fs::write(s.cwd.path().join("AGENTS.md"), "Be brief.\n").unwrap();
    std::fs::create_dir_all(s.agent.path().join("prompts")).unwrap();
    std::fs::write(s.agent.path().join("prompts/review.md"), "Review the code\n").unwrap();
    let mut pty = s.pi(40, 100);
    // At start, as pi 1.6: each section as one line, the context file relative to the cwd.
    pty.wait_text("[Context]");
    let rows = pty.rows();
    let at = rows
        .iter()
        .position(|r| r.trim_end() == "[Context]")
        .expect("section row");
    assert_eq!(rows[at + 1].trim_end(), "  AGENTS.md");
    assert!(rows.iter().any(|r| r.trim_end() == "  /review"), "{rows:#?}");
    assert!(!pty.contents().contains("to suspend"));
    pty.send("\x0f");
    pty.wait_text("to suspend");
    // Expanded: full paths, and prompts under their scope.
    let cwd = s.cwd.path().display().to_string();
    pty.wait_text(&format!("  {cwd}/AGENTS.md"));
    let rows = pty.rows();
    let at = rows
        .iter()
        .position(|r| r.trim_end() == "[Prompts]")
        .expect("section row");
    assert_eq!(rows[at + 1].trim_end(), "  user");
    assert_eq!(rows[at + 2].trim_end(), "    /review");
    quit(&mut pty);
}

/// Ask twice ("one", "two"), open `/tree`, and move the cursor to the first answer.
fn two_exchanges_then_tree_on_the_first_answer(pty: &mut Pty) {
    pty.type_text("one");
    pty.send(ENTER);
    pty.wait_text("first answer");
    pty.type_text("two");
    pty.send(ENTER);
    pty.wait_text("second answer");
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("Session Tree");
    pty.send(UP);
    pty.send(UP);
    pty.wait_for("cursor on the first answer", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.starts_with('›') && l.contains("assistant: first answer"))
    });
}

/// Set `key` in the fixture's settings.json, keeping what is there.
fn set_setting(s: &Setup, key: &str, value: serde_json::Value) {
    let settings = s.agent.path().join("settings.json");
    let mut current: serde_json::Value = std::fs::read_to_string(&settings)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    current[key] = value;
    std::fs::write(&settings, current.to_string()).expect("settings written");
}

fn last_changelog_version(s: &Setup) -> Option<String> {
    let text = std::fs::read_to_string(s.agent.path().join("settings.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["lastChangelogVersion"].as_str().map(str::to_string)
}

#[test]
fn whats_new_is_shown_once_after_an_update() {
    let version = env!("CARGO_PKG_VERSION");
    // First run: the version is recorded, nothing shown.
    let s = setup(Script::sequential(vec![]));
    let mut first = s.pi(40, 100);
    assert!(!first.contents().contains("What's New"));
    quit(&mut first);
    assert_eq!(last_changelog_version(&s).as_deref(), Some(version));

    // After an update: the newer sections, once.
    set_setting(&s, "lastChangelogVersion", json!("0.1.0"));
    let mut updated = s.pi(120, 100);
    updated.wait_text("What's New");
    updated.wait_text(&format!("[{version}]"));
    // As pi 1.6: between rules, the title, a blank row, the sections, a blank row.
    let rows: Vec<String> = updated.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let title = rows.iter().position(|r| r == " What's New").expect("title row");
    assert!(rows[title - 1].starts_with("────"), "{}", updated.contents());
    assert_eq!(rows[title + 1..title + 3], ["", " [0.73.0]"], "{}", updated.contents());
    let end = title
        + rows[title..]
            .iter()
            .position(|r| r.starts_with("────"))
            .expect("closing rule");
    assert_eq!(rows[end - 1], "", "{}", updated.contents());
    quit(&mut updated);
    assert_eq!(last_changelog_version(&s).as_deref(), Some(version));
    let mut again = s.pi(40, 100);
    assert!(!again.contents().contains("What's New"));
    quit(&mut again);

    // Condensed with collapseChangelog.
    set_setting(&s, "lastChangelogVersion", json!("0.1.0"));
    set_setting(&s, "collapseChangelog", json!(true));
    let mut collapsed = s.pi(40, 100);
    collapsed.wait_text(&format!("Updated to v{version}. Use /changelog"));
    let rows: Vec<String> = collapsed.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let line = rows.iter().position(|r| r.starts_with(" Updated to v")).expect("line");
    assert!(rows[line - 1].starts_with("────") && rows[line + 1].starts_with("────"));
    quit(&mut collapsed);
}
