//! Small behaviours matched with pi 1.6 by running both: which of pi's own dialogs report
//! blocked to the program status (OSC 7501), the "Reloading ..." notice of an extension's
//! `ctx.reload()`, the progress indicator (OSC 9;4) across a TUI mode switch during a run, and
//! the blank row before the resume hint at exit in regular mode and above the external editor,
//! a reload refused while a reply streams, and the program status query again after a mode
//! switch, and the project trust a /reload saves.

use std::time::{Duration, Instant};

use pi_test_support::{Script, Turn};
use serde_json::json;

use super::extensions::extension_env;
use super::fullscreen::base64_of;
use super::pty::Pty;
use super::{quit, set_setting, setup, ENTER, ESC};

const DOWN: &str = "\x1b[B";
const IDLE: &str = "\x1b]7501;state=idle:app=pi\x1b\\";

fn raw_after(pty: &Pty, from: usize) -> String {
    let raw = pty.raw();
    String::from_utf8_lossy(&raw[from.min(raw.len())..]).to_string()
}

/// Wait until the raw output after `from` bytes holds `what`.
fn wait_raw_after(pty: &Pty, from: usize, what: &str) {
    let start = Instant::now();
    while !raw_after(pty, from).contains(what) {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "no {what:?} after byte {from}; got {:?}",
            raw_after(pty, from)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn blocked(kind: &str, message: &str) -> String {
    format!(
        "\x1b]7501;state=blocked:app=pi:kind={kind}:msg={}\x1b\\",
        base64_of(message)
    )
}

/// Escape, and wait until `text` is gone (a key typed right after an Escape would be read
/// as Alt+key).
fn close(pty: &mut Pty, text: &str) {
    pty.send(ESC);
    pty.wait_for("the dialog to close", Duration::from_secs(5), |c| !c.contains(text));
}

#[test]
fn only_the_dialogs_pi_reports_say_blocked() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    // The terminal says it takes program status reports.
    pty.send("\x1b]7501;?\x1b\\");
    wait_raw_after(&pty, 0, IDLE);

    // The model picker and the /login menus are pi's own pickers: nothing is reported.
    let from = pty.raw().len();
    pty.type_text("/model");
    pty.send(ENTER);
    pty.wait_text("mock-thinker");
    pty.wait_stable(Duration::from_millis(300));
    close(&mut pty, "mock-thinker");
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.wait_stable(Duration::from_millis(300));
    assert!(
        !raw_after(&pty, from).contains("state=blocked"),
        "a picker reported blocked: {:?}",
        raw_after(&pty, from)
    );

    // Typing an API key is part of signing in: blocked for the provider, until it closes.
    pty.type_text("anthropic");
    pty.wait_text("Anthropic");
    pty.send(ENTER);
    wait_raw_after(&pty, from, &blocked("auth", "Log in to Anthropic"));
    let from = pty.raw().len();
    pty.send(ESC);
    pty.wait_text("Select provider to configure:");
    wait_raw_after(&pty, from, IDLE);
    // Back to the method menu, then out.
    close(&mut pty, "Select provider to configure:");
    close(&mut pty, "Select authentication method:");

    // The /import confirm asks for permission, named by its first line.
    let from = pty.raw().len();
    pty.type_text("/import elsewhere.jsonl");
    pty.send(ENTER);
    pty.wait_text("Replace current session with elsewhere.jsonl?");
    wait_raw_after(&pty, from, &blocked("permission", "Import session"));
    let from = pty.raw().len();
    close(&mut pty, "Replace current session");
    wait_raw_after(&pty, from, IDLE);
    quit(&mut pty);
}

#[test]
fn the_tree_summary_question_reports_blocked() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.send("\x1b]7501;?\x1b\\");
    wait_raw_after(&pty, 0, IDLE);
    for q in ["first question", "second question"] {
        pty.type_text(q);
        pty.send(ENTER);
        pty.wait_text(&format!("echo: {q}"));
    }
    let from = pty.raw().len();
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("Session Tree");
    pty.wait_stable(Duration::from_millis(300));
    assert!(
        !raw_after(&pty, from).contains("state=blocked"),
        "the tree itself reports nothing"
    );
    // Up to the first answer, then choose it: the summary question waits.
    for _ in 0..2 {
        pty.send("\x1b[A");
    }
    pty.send(ENTER);
    pty.wait_text("Summarize branch?");
    wait_raw_after(&pty, from, &blocked("question", "Summarize branch?"));
    let from = pty.raw().len();
    close(&mut pty, "Summarize branch?");
    pty.wait_stable(Duration::from_millis(300));
    assert!(
        !raw_after(&pty, from).contains("state=blocked"),
        "{:?}",
        raw_after(&pty, from)
    );
    pty.send(ESC);
    pty.wait_for("the tree to close", Duration::from_secs(5), |c| {
        !c.contains("Session Tree")
    });
    quit(&mut pty);
}

#[test]
fn an_extension_reload_shows_the_reloading_notice() {
    let test = "an_extension_reload_shows_the_reloading_notice";
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
    let from = pty.raw().len();
    pty.type_text("/refresh");
    pty.send(ENTER);
    pty.wait_for("the reload's end", Duration::from_secs(30), |c| {
        c.contains("Reloaded keybindings, extensions, skills, prompts, themes, and context files")
    });
    assert!(
        raw_after(&pty, from)
            .contains("Reloading keybindings, extensions, skills, prompts, themes, and context files..."),
        "no reloading notice while ctx.reload() ran"
    );
    // The notice is gone and the editor is back: it takes keys.
    pty.type_text("still here");
    pty.wait_text("still here");
    assert!(!pty.contents().contains("Reloading"), "{}", pty.contents());
    pty.send("\x03");
    pty.wait_for("the editor cleared", Duration::from_secs(5), |c| {
        !c.contains("still here")
    });
    quit(&mut pty);
}

#[test]
fn an_extension_reload_while_a_reply_streams_warns_and_resolves() {
    let test = "an_extension_reload_while_a_reply_streams_warns_and_resolves";
    let Some((node, modules)) = extension_env(test) else {
        return;
    };
    let mut slow = Turn::text("slow answer");
    slow.big = Some(400);
    slow.delay_ms = Some(60);
    let s = setup(Script::sequential(vec![slow]));
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
    pty.type_text("go slowly");
    pty.send(ENTER);
    pty.wait_text("slow answer");
    pty.type_text("/refresh");
    pty.send(ENTER);
    // As pi 1.6's interactive mode: a warning in the chat, and the call resolves.
    pty.wait_text("Wait for the current response to finish before reloading.");
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("refresh result=null") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "ctx.reload() did not resolve: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!pty.contents().contains("Reloading"), "{}", pty.contents());
    pty.send(ESC);
    pty.wait_text("Operation aborted");
    quit(&mut pty);
}

#[test]
fn the_progress_indicator_comes_back_after_a_mode_switch_during_a_run() {
    let mut slow = Turn::text("slow answer");
    slow.big = Some(400);
    slow.delay_ms = Some(60);
    let s = setup(Script::sequential(vec![slow]));
    set_setting(&s, "terminal", json!({"showTerminalProgress": true}));
    let mut pty = s.pi(30, 100);
    pty.type_text("go slowly");
    pty.send(ENTER);
    pty.wait_text("slow answer");
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Terminal progress");
    pty.type_text("tui mode");
    pty.wait_text("TUI mode");
    let from = pty.raw().len();
    pty.send(ENTER);
    // Off with the old screen, the screen switched, and on again at once (not only with the
    // next keep-alive).
    wait_raw_after(&pty, from, "\x1b]9;4;0");
    let raw = raw_after(&pty, from);
    let off = raw.find("\x1b]9;4;0").unwrap();
    let switched = raw[off..]
        .find("\x1b[?1049")
        .map(|i| off + i)
        .expect("the screen switched after the indicator went off");
    wait_raw_after(&pty, from + switched, "\x1b]9;4;3");
    // Settings closed, the run stopped, then out.
    close(&mut pty, "→ TUI mode");
    pty.send(ESC);
    pty.wait_text("Operation aborted");
    quit(&mut pty);
}

fn exit_rows(reply: &str) -> Vec<String> {
    let s = setup(Script::sequential(vec![Turn::text(reply)]));
    let mut pty = Pty::spawn(&["--tui-mode", "regular"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("mock-model");
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("the end");
    pty.wait_stable(Duration::from_millis(300));
    quit(&mut pty);
    pty.wait_for("the resume hint", Duration::from_secs(5), |c| {
        c.contains("pi --session")
    });
    pty.rows()
}

#[test]
fn regular_mode_exit_leaves_a_blank_row_before_the_resume_hint_when_there_is_room() {
    let rows = exit_rows("short reply, the end");
    let at = rows
        .iter()
        .position(|r| r.starts_with("To resume this session:"))
        .expect("resume hint");
    assert!(rows[at - 1].trim().is_empty(), "{rows:#?}");
    assert!(rows[at - 2].contains("mock-model"), "the footer above: {rows:#?}");

    // A frame that fills the screen: the hint follows the footer directly.
    let long: Vec<String> = (0..30).map(|i| format!("para {i}")).collect();
    let rows = exit_rows(&format!("{}\n\nthe end", long.join("\n\n")));
    let at = rows
        .iter()
        .position(|r| r.starts_with("To resume this session:"))
        .expect("resume hint");
    assert!(rows[at - 1].contains("mock-model"), "{rows:#?}");
}

#[test]
fn a_mode_switch_clears_the_program_status_and_asks_the_terminal_again() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.send("\x1b]7501;?\x1b\\");
    wait_raw_after(&pty, 0, IDLE);
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("Terminal progress");
    pty.type_text("tui mode");
    pty.wait_text("TUI mode");
    let from = pty.raw().len();
    pty.send(ENTER);
    // The shown status is cleared and the terminal asked again, as a restarted pi 1.6 does.
    wait_raw_after(&pty, from, "\x1b]7501;state=clear\x1b\\\x1b]7501;?\x1b\\");
    pty.wait_stable(Duration::from_millis(300));
    let asked = raw_after(&pty, from);
    let after_query = &asked[asked.find("\x1b]7501;?").expect("query")..];
    assert!(
        !after_query.contains("state=idle"),
        "a report before the answer: {after_query:?}"
    );
    // Once the terminal answers again, the status is reported again.
    let from = pty.raw().len();
    pty.send("\x1b]7501;?\x1b\\");
    wait_raw_after(&pty, from, IDLE);
    close(&mut pty, "→ TUI mode");
    quit(&mut pty);
}

#[test]
fn regular_mode_leaves_a_blank_row_above_the_external_editor() {
    let s = setup(Script::echo());
    let bin = tempfile::tempdir().expect("tmp");
    let editor = bin.path().join("slow-editor");
    std::fs::write(&editor, "#!/bin/sh\nsleep 2\n").expect("write script");
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let editor = editor.display().to_string();
    let mut pty = Pty::spawn_env(
        &["--tui-mode", "regular"],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("VISUAL", editor.as_str()), ("EDITOR", editor.as_str())],
    );
    pty.wait_text("mock-model");
    pty.wait_stable(Duration::from_millis(300));
    pty.send("\x07");
    pty.wait_text("Pi will resume when the editor exits.");
    let rows = pty.rows();
    let at = rows
        .iter()
        .position(|r| r.starts_with("Launching external editor:"))
        .expect("launch line");
    assert!(rows[at - 1].trim().is_empty(), "{rows:#?}");
    assert!(rows[at - 2].contains("mock-model"), "the footer above: {rows:#?}");
    pty.wait_for("the editor back", Duration::from_secs(10), |c| {
        !c.contains("Pi will resume")
    });
    quit(&mut pty);
}

#[test]
fn reload_saves_trust_for_a_folder_that_gained_files_needing_it() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    let trust_file = s.agent.path().join("trust.json");
    // Nothing needed trust at startup; a prompt folder appears meanwhile.
    std::fs::create_dir_all(s.cwd.path().join(".pi/prompts")).expect("mkdir");
    std::fs::write(s.cwd.path().join(".pi/prompts/hi.md"), "say hi\n").expect("write");
    pty.type_text("/reload");
    pty.send(ENTER);
    pty.wait_text("context files; saved project trust");
    let saved = std::fs::read_to_string(&trust_file).expect("trust.json written");
    let cwd = s.cwd.path().canonicalize().expect("cwd");
    let saved: serde_json::Value = serde_json::from_str(&saved).expect("json");
    assert_eq!(saved[cwd.to_str().expect("utf8")], json!(true), "{saved}");
    // Saved once: the next reload says nothing of it.
    pty.type_text("/reload");
    pty.send(ENTER);
    pty.wait_for("the second reload", Duration::from_secs(15), |c| {
        c.matches("Reloaded keybindings").count() >= 2 || !c.contains("saved project trust")
    });
    pty.wait_stable(Duration::from_millis(300));
    assert_eq!(
        pty.contents().matches("saved project trust").count(),
        0,
        "{}",
        pty.contents()
    );
    quit(&mut pty);
}
