//! Session replacement from an extension command in the terminal UI: after `ctx.fork` and
//! `ctx.newSession` the chat shows the new session (a fork puts its prompt back into the
//! editor), as after the app's own /fork and /new.

use std::time::Duration;

use pi_test_support::Script;

use super::extensions::extension_env;
use super::pty::Pty;
use super::{quit, setup, ENTER};

/// The lines the fixture wrote so far.
fn log_lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn wait_log(path: &std::path::Path, line_start: &str) {
    let start = std::time::Instant::now();
    while !log_lines(path).iter().any(|l| l.starts_with(line_start)) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no `{line_start}` line: {:?}",
            log_lines(path)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_chat_shows_the_session_an_extension_command_forked_or_started() {
    let test = "the_chat_shows_the_session_an_extension_command_forked_or_started";
    let Some((node, modules)) = extension_env(test) else {
        return;
    };
    let s = setup(Script::echo());
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/extensions/replace.ts");
    let log = s.cwd.path().join("replace.log");
    let (node, modules, log_env) = (
        node.display().to_string(),
        modules.display().to_string(),
        log.display().to_string(),
    );
    let mut pty = Pty::spawn_env(
        &["-e", fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[
            ("PI_NODE", &node),
            ("PI_EXTENSION_MODULES", &modules),
            ("REPLACE_LOG", &log_env),
        ],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty.type_text("first question");
    pty.send(ENTER);
    pty.wait_text("echo: first question");

    // Forked before the prompt: the reply is gone from the chat and the prompt is back in
    // the editor.
    pty.type_text("/branch");
    pty.send(ENTER);
    wait_log(&log, "branch result=");
    pty.wait_for("the forked chat", Duration::from_secs(20), |c| {
        !c.contains("echo: first question") && c.contains("first question")
    });
    assert!(
        log_lines(&log).contains(&"branch result={\"cancelled\":false}".to_string()),
        "{:?}",
        log_lines(&log)
    );

    // A new session seeded by `setup`: its message is the chat.
    pty.send("\x15"); // clear the editor (Ctrl+U)
    pty.type_text("/fresh");
    pty.send(ENTER);
    wait_log(&log, "fresh result=");
    pty.wait_text("seeded");
    assert!(!pty.contents().contains("first question"), "{}", pty.contents());
    quit(&mut pty);
}
