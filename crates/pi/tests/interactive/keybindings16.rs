//! Keybindings as pi 1.6 sets them up: the opt-in editor history actions, which win over
//! the app's keys, and the other defaults of Windows terminals under WSL.

use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::pty::Pty;
use super::{quit, setup, ENTER};

/// The editor's row: the one above the editor's bottom rule.
fn editor_row(pty: &Pty) -> String {
    let rows = pty.rows();
    let bottom = rows.iter().rposition(|r| r.starts_with("───")).expect("editor rule");
    rows[bottom - 1].clone()
}

#[test]
fn bound_history_keys_browse_the_history_before_app_keys() {
    let s = setup(Script::sequential(vec![Turn::text("first answer")]));
    s.agent
        .write(
            "keybindings.json",
            r#"{"tui.editor.historyPrevious": "ctrl+p", "tui.editor.historyNext": ["ctrl+n"]}"#,
        )
        .unwrap();
    let mut pty = s.pi(30, 100);
    pty.type_text("first question");
    pty.send(ENTER);
    pty.wait_text("first answer");
    pty.type_text("draft");
    // Ctrl+P cycles models by default; bound to history it recalls the last message.
    pty.send("\x10");
    pty.wait_for("the last message in the editor", Duration::from_secs(5), |_| {
        editor_row(&pty).contains("first question")
    });
    pty.send("\x0e");
    pty.wait_for("the draft back", Duration::from_secs(5), |_| {
        editor_row(&pty).contains("draft")
    });
    pty.send(super::CTRL_C);
    std::thread::sleep(Duration::from_millis(100));
    quit(&mut pty);
}

#[test]
fn wsl_uses_ctrl_f_for_the_transcript_search() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("WSL_DISTRO_NAME", "Ubuntu")],
    );
    pty.wait_text("mock-model");
    pty.send("\x06");
    pty.wait_text("Find in transcript");
    pty.send(super::ESC);
    pty.wait_for("search closed", Duration::from_secs(5), |c| {
        !c.contains("Find in transcript")
    });
    quit(&mut pty);
}
