//! Extension dialogs as pi 1.6 shows them: the program status (OSC 7501) says blocked with
//! the dialog's kind and title while one waits (a custom component opened with `blocked`,
//! its own), and a timed dialog counts down in its title each second and closes with the
//! default when the count ends.

use std::time::{Duration, Instant};

use pi_test_support::Script;

use super::extensions::{extension_env, row_of, spawn_with};
use super::fullscreen::base64_of;
use super::pty::Pty;
use super::{quit, setup, ENTER, ESC};

fn raw_text(pty: &Pty) -> String {
    String::from_utf8_lossy(&pty.raw()).to_string()
}

/// Wait until the raw output after `from` bytes holds `what`.
fn wait_raw_after(pty: &Pty, from: usize, what: &str) {
    let start = Instant::now();
    loop {
        let raw = pty.raw();
        if String::from_utf8_lossy(&raw[from.min(raw.len())..]).contains(what) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no {what:?} after byte {from}; tail: {:?}",
            raw_text(pty).chars().rev().take(400).collect::<String>()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn blocked(kind: &str, title: &str) -> String {
    format!(
        "\x1b]7501;state=blocked:app=pi:kind={kind}:msg={}\x1b\\",
        base64_of(title)
    )
}

const IDLE: &str = "\x1b]7501;state=idle:app=pi\x1b\\";

#[test]
fn a_dialog_reports_blocked_with_its_kind_and_title_until_it_closes() {
    let Some((node, modules)) = extension_env("a_dialog_reports_blocked_with_its_kind_and_title_until_it_closes")
    else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("dialogs.ts", &s, &node, &modules);
    // The terminal says it takes program status reports.
    pty.send("\x1b]7501;?\x1b\\");
    wait_raw_after(&pty, 0, IDLE);

    // A confirm asks for permission, named by its title alone.
    let from = pty.raw().len();
    pty.type_text("/ask-confirm");
    pty.send(ENTER);
    pty.wait_text("Really delete them?");
    wait_raw_after(&pty, from, &blocked("permission", "Delete files"));
    let from = pty.raw().len();
    pty.send(ESC);
    pty.wait_text("confirm -> false");
    wait_raw_after(&pty, from, IDLE);

    // Select, input and editor ask a question.
    for (command, title, answer) in [
        ("/ask-select", "Pick a fruit", "select -> \"apple\""),
        ("/ask-input", "Your name", "input -> \"\""),
        ("/ask-editor", "Notes", "editor -> \"draft\""),
    ] {
        let from = pty.raw().len();
        pty.type_text(command);
        pty.send(ENTER);
        pty.wait_text(title);
        wait_raw_after(&pty, from, &blocked("question", title));
        let from = pty.raw().len();
        pty.send(ENTER);
        pty.wait_text(answer);
        wait_raw_after(&pty, from, IDLE);
    }

    // A custom component opened with `blocked` reports its own kind and message.
    let from = pty.raw().len();
    pty.type_text("/ask-custom");
    pty.send(ENTER);
    pty.wait_text("Overlay question");
    wait_raw_after(&pty, from, &blocked("permission", "Allow the overlay"));
    let from = pty.raw().len();
    pty.send("x");
    pty.wait_text("custom -> \"key \\\"x\\\"\"");
    wait_raw_after(&pty, from, IDLE);
    quit(&mut pty);
}

/// The row holding `text`, trimmed, once one does.
fn row_with(pty: &Pty, text: &str) -> String {
    pty.wait_text(text);
    let row = row_of(pty, text).expect("row");
    pty.rows()[row].trim().to_string()
}

#[test]
fn timed_dialogs_count_down_in_their_title_and_give_the_default_at_the_end() {
    let Some((node, modules)) =
        extension_env("timed_dialogs_count_down_in_their_title_and_give_the_default_at_the_end")
    else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("dialogs.ts", &s, &node, &modules);

    // A select: `Title (Ns)` from the whole seconds of the timeout, one less each second.
    pty.type_text("/ask-select 3000");
    pty.send(ENTER);
    assert_eq!(row_with(&pty, "Pick a fruit ("), "Pick a fruit (3s)");
    assert_eq!(row_with(&pty, "Pick a fruit (2s)"), "Pick a fruit (2s)");
    assert_eq!(row_with(&pty, "Pick a fruit (1s)"), "Pick a fruit (1s)");
    pty.wait_text("select -> undefined");
    assert!(row_of(&pty, "Pick a fruit").is_none(), "closed: {:#?}", pty.rows());

    // A confirm counts down after its message; it ends as No.
    pty.type_text("/ask-confirm 1500");
    pty.send(ENTER);
    pty.wait_text("Delete files");
    assert_eq!(row_with(&pty, "Really delete them? ("), "Really delete them? (2s)");
    pty.wait_text("confirm -> false");
    assert!(row_of(&pty, "Delete files").is_none(), "closed: {:#?}", pty.rows());

    // An input too; typed text is not kept when the time runs out.
    pty.type_text("/ask-input 2000");
    pty.send(ENTER);
    assert_eq!(row_with(&pty, "Your name ("), "Your name (2s)");
    pty.type_text("bob");
    pty.wait_text("input -> undefined");
    assert!(row_of(&pty, "Your name").is_none(), "closed: {:#?}", pty.rows());

    // An extension's AbortSignal closes its dialog too.
    pty.type_text("/ask-signal");
    pty.send(ENTER);
    pty.wait_text("Gone in a second");
    pty.wait_text("signal aborted=true -> false");
    assert!(row_of(&pty, "Abortable").is_none(), "closed: {:#?}", pty.rows());

    // Answered in time, the answer counts.
    pty.type_text("/ask-select 5000");
    pty.send(ENTER);
    pty.wait_text("Pick a fruit (5s)");
    pty.send("\x1b[B");
    pty.send(ENTER);
    pty.wait_text("select -> \"pear\"");
    quit(&mut pty);
}
