//! App keys around the prompt editor as pi 1.6 wires them: Ctrl+C clears even with the
//! slash menu open, Ctrl+G hands the prompt to the configured external editor (and says when
//! it failed), Ctrl+V pastes the clipboard's image as a file path.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup, CTRL_C};

/// The editor's row: the one above the editor's bottom rule (empty while the screen has no
/// editor, as when an external editor has the terminal).
fn editor_row(pty: &Pty) -> String {
    let rows = pty.rows();
    match rows.iter().rposition(|r| r.starts_with("───")) {
        Some(bottom) if bottom > 0 => rows[bottom - 1].clone(),
        _ => String::new(),
    }
}

fn script(dir: &std::path::Path, name: &str, body: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[test]
fn ctrl_c_clears_the_editor_with_the_slash_menu_open() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("/mo");
    pty.wait_text("Select model");
    pty.send(CTRL_C);
    pty.wait_for("the editor cleared", Duration::from_secs(5), |c| {
        !c.contains("Select model") && editor_row(&pty).trim().is_empty()
    });
    quit(&mut pty);
}

#[test]
fn ctrl_g_edits_the_prompt_in_the_configured_editor() {
    let s = setup(Script::echo());
    let bin = tempfile::tempdir().expect("tmp");
    // The setting wins over $EDITOR. The editor appends to the file it is given, or fails
    // once a `fail` file exists next to it.
    let fail = bin.path().join("fail");
    let good = script(
        bin.path(),
        "good-editor",
        &format!("[ -e '{}' ] && exit 3\nprintf ' and more\\n' >> \"$1\"", fail.display()),
    );
    let bad = script(bin.path(), "bad-editor", "exit 4");
    s.agent
        .write(
            "settings.json",
            format!(r#"{{"externalEditor": "{}"}}"#, good.display()),
        )
        .unwrap();
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("EDITOR", bad.to_str().expect("utf8")), ("VISUAL", "")],
    );
    pty.wait_text("mock-model");
    pty.type_text("draft");
    pty.send("\x07");
    pty.wait_for("the edited prompt", Duration::from_secs(10), |_| {
        editor_row(&pty).contains("draft and more")
    });
    // A failing editor leaves the prompt as it was and says so.
    std::fs::write(&fail, "").expect("write");
    pty.send(CTRL_C);
    pty.type_text("kept");
    pty.send("\x07");
    pty.wait_text("External editor exited with code 3; prompt unchanged");
    assert_eq!(editor_row(&pty).trim(), "kept");
    // The terminal gets its modified-keys mode back (Shift+Enter keeps working).
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    let after = &raw[raw.rfind("Launching external editor").expect("launch line")..];
    assert!(after.contains("\x1b[>4;2m"), "{after:?}");
    pty.send(CTRL_C);
    std::thread::sleep(Duration::from_millis(100));
    quit(&mut pty);
}

#[test]
fn ctrl_v_pastes_a_clipboard_image_as_a_file_path() {
    let s = setup(Script::echo());
    let bin = tempfile::tempdir().expect("tmp");
    // A stand-in for wl-paste offering a PNG.
    script(
        bin.path(),
        "wl-paste",
        r#"case "$1" in --list-types) printf 'text/plain\nimage/png\n';; --type) printf 'PNGDATA';; esac"#,
    );
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PATH", &path), ("WAYLAND_DISPLAY", "wayland-test")],
    );
    pty.wait_text("mock-model");
    pty.type_text("see ");
    pty.send("\x16");
    pty.wait_for("a path in the editor", Duration::from_secs(10), |_| {
        editor_row(&pty).contains("pi-clipboard-")
    });
    let row = editor_row(&pty);
    let file = row.trim().trim_start_matches("see ").to_string();
    assert!(file.ends_with(".png"), "{row:?}");
    assert_eq!(std::fs::read(&file).expect("saved image"), b"PNGDATA");
    let _ = std::fs::remove_file(&file);
    pty.send(CTRL_C);
    std::thread::sleep(Duration::from_millis(100));
    quit(&mut pty);
}

#[test]
fn a_thinking_level_status_replaces_the_model_switch_status() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.send("\x10");
    pty.wait_text("Switched to Mock Thinker");
    pty.send("\x1b[Z");
    pty.wait_text("Thinking level: minimal");
    assert!(
        !pty.contents().contains("Switched to Mock Thinker"),
        "{}",
        pty.contents()
    );
    quit(&mut pty);
}

#[test]
fn alt_up_with_nothing_queued_says_so_in_one_status_line() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.send("\x1b[1;3A");
    pty.wait_text("No queued messages to restore");
    pty.send("\x1b[1;3A");
    std::thread::sleep(Duration::from_millis(300));
    // A status line replaces the one right before it instead of adding another.
    assert_eq!(pty.contents().matches("No queued messages to restore").count(), 1);
    quit(&mut pty);
}

#[test]
fn a_double_bang_command_shows_without_its_marks() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("!!echo kept-out");
    pty.send(super::ENTER);
    pty.wait_text("$ echo kept-out");
    assert!(!pty.contents().contains("$ !echo"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn bound_session_actions_open_the_tree_and_the_resume_picker() {
    let s = setup(Script::echo());
    s.agent
        .write(
            "keybindings.json",
            r#"{"app.session.tree": "f5", "app.session.resume": ["f6"]}"#,
        )
        .unwrap();
    let mut pty = s.pi(30, 100);
    pty.send("\x1b[15~");
    pty.wait_text("Session Tree");
    pty.send(super::ESC);
    pty.wait_for("tree closed", Duration::from_secs(5), |c| !c.contains("Session Tree"));
    pty.send("\x1b[17~");
    pty.wait_text("Resume Session");
    pty.send(super::ESC);
    pty.wait_for("picker closed", Duration::from_secs(5), |c| {
        !c.contains("Resume Session")
    });
    quit(&mut pty);
}
