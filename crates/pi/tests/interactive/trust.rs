//! Project trust in the terminal UI: the question before it starts (asked only for an
//! undecided project with its own pi files, saved unless for this session only) and `/trust`.

use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup, ENTER};

#[test]
fn an_undecided_project_is_asked_about_before_the_ui_starts() {
    let s = setup(Script::sequential(vec![]));
    std::fs::create_dir_all(s.cwd.path().join(".pi")).unwrap();
    std::fs::write(s.cwd.path().join(".pi/settings.json"), "{}").unwrap();
    let mut pty = Pty::spawn(&[], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("Trust project folder?");
    let c = pty.contents();
    assert!(
        c.contains("Trust parent folder (") && c.contains("Do not trust (this session only)"),
        "{c}"
    );
    // Nothing of the project is loaded, and the UI has not started, while the question is open.
    assert!(!c.contains("mock-model"));
    pty.send(ENTER);
    pty.wait_text("mock-model");
    let trust = std::fs::read_to_string(s.agent.path().join("trust.json")).expect("trust.json written");
    let saved: serde_json::Value = serde_json::from_str(&trust).unwrap();
    let key = s.cwd.path().canonicalize().unwrap().to_string_lossy().to_string();
    assert_eq!(saved[&key], serde_json::json!(true), "{trust}");
    quit(&mut pty);

    // Decided now: no question the next time.
    let mut pty = s.pi(30, 100);
    assert!(!pty.contents().contains("Trust project folder?"));
    quit(&mut pty);
}

#[test]
fn a_session_only_answer_is_not_remembered() {
    let s = setup(Script::sequential(vec![]));
    std::fs::create_dir_all(s.cwd.path().join(".pi/skills")).unwrap();
    let mut pty = Pty::spawn(&[], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("Trust project folder?");
    // The last row: "Do not trust (this session only)".
    for _ in 0..4 {
        pty.send("\x1b[B");
        std::thread::sleep(Duration::from_millis(30));
    }
    pty.send(ENTER);
    pty.wait_text("mock-model");
    assert!(!s.agent.path().join("trust.json").exists());
    quit(&mut pty);
}

#[test]
fn trust_command_shows_the_state_and_saves_a_choice() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/trust");
    pty.send(ENTER);
    pty.wait_text("Saved decision: none");
    pty.wait_text("Current session: trusted");
    // pi 1.6's dialog: title, folder, decision lines, the choices, the keys.
    let rows = pty.rows();
    let title = rows.iter().position(|r| r == " Project trust").expect("title");
    let cwd = s.cwd.path().display().to_string();
    assert_eq!(rows[title + 1], format!(" {cwd}"), "{rows:#?}");
    assert_eq!(rows[title + 6], " →   Trust", "{rows:#?}");
    assert!(rows[title + 7].starts_with("     Trust parent folder ("), "{rows:#?}");
    assert_eq!(rows[title + 8], "     Do not trust", "{rows:#?}");
    assert_eq!(
        rows[title + 10],
        " ↑↓ navigate  enter save  escape/ctrl+c cancel",
        "{rows:#?}"
    );
    // Trust, Trust parent folder, Do not trust.
    pty.send("\x1b[B");
    std::thread::sleep(Duration::from_millis(30));
    pty.send("\x1b[B");
    std::thread::sleep(Duration::from_millis(30));
    pty.send(ENTER);
    pty.wait_text("Saved trust decision: untrusted. Restart pi for this to take effect.");
    let trust = std::fs::read_to_string(s.agent.path().join("trust.json")).expect("trust.json written");
    let saved: serde_json::Value = serde_json::from_str(&trust).unwrap();
    let key = s.cwd.path().canonicalize().unwrap().to_string_lossy().to_string();
    assert_eq!(saved[&key], serde_json::json!(false), "{trust}");
    // Opened again: the saved choice is ticked and highlighted.
    pty.type_text("/trust");
    pty.send(ENTER);
    pty.wait_text(&format!("Saved decision: untrusted ({key})"));
    pty.wait_text(" → ✓ Do not trust");
    // Trusting the parent drops the folder's own entry: the parent's decision covers it.
    pty.send("\x1b[A");
    std::thread::sleep(Duration::from_millis(30));
    pty.send(ENTER);
    pty.wait_text("Saved trust decision: trusted.");
    let trust = std::fs::read_to_string(s.agent.path().join("trust.json")).expect("trust.json");
    let saved: serde_json::Value = serde_json::from_str(&trust).unwrap();
    let parent = s
        .cwd
        .path()
        .canonicalize()
        .unwrap()
        .parent()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert_eq!(saved.get(&key), None, "{trust}");
    assert_eq!(saved[&parent], serde_json::json!(true), "{trust}");
    pty.type_text("/trust");
    pty.send(ENTER);
    pty.wait_text(&format!("Saved decision: trusted (inherited from {parent})"));
    pty.send("\x1b");
    pty.wait_for("the dialog closed", Duration::from_secs(10), |c| {
        !c.contains("Saved decision")
    });
    quit(&mut pty);
}
