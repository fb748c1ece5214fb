//! `ctx.ui.addAutocompleteProvider`: an extension's completions in pi's editor, opened by
//! `#` (pi-tui's default trigger) and by a trigger character the provider declares, filtered
//! as more is typed, accepted with Tab or Enter through the provider's own insertion, and
//! pi's own completions passing through the provider.

use std::time::Duration;

use pi_test_support::Script;

use super::extensions::{extension_env, spawn_with};
use super::pty::Pty;
use super::{quit, setup, ENTER, ESC};

const TAB: &str = "\t";
const DOWN: &str = "\x1b[B";
const CTRL_U: &str = "\x15";

/// The editor's first text row (the row under its top border that holds `text`).
fn editor_row(pty: &Pty, text: &str) -> String {
    pty.rows()
        .into_iter()
        .find(|r| r.starts_with(text))
        .unwrap_or_else(|| panic!("no editor row starting with {text:?}: {:#?}", pty.rows()))
}

#[test]
fn an_extension_provider_completes_in_the_editor() {
    let Some((node, modules)) = extension_env("an_extension_provider_completes_in_the_editor") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("autocomplete.ts", &s, &node, &modules);
    pty.wait_text("completions ready");

    // `#` where a token starts opens the extension's menu: label and description columns.
    pty.type_text("see #");
    pty.wait_text("Extension API for autocomplete");
    pty.wait_text("#1024");
    let first = pty.rows().into_iter().find(|r| r.contains("#2983")).expect("menu row");
    assert!(first.starts_with("→ #2983"), "selected first: {first:?}");
    // Typing filters through the provider.
    pty.type_text("2");
    pty.wait_for("filtered menu", Duration::from_secs(10), |c| {
        c.contains("#2753") && !c.contains("#1024")
    });
    // Down then Tab: the second one, as the provider inserts it; the menu closes.
    pty.send(DOWN);
    pty.wait_for("second selected", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.starts_with("→ #2753"))
    });
    pty.send(TAB);
    pty.wait_for("menu closed", Duration::from_secs(10), |c| {
        !c.contains("Reload stale resource settings")
    });
    // The provider's insertion is a host round trip away: the menu may close a frame before
    // the text changes.
    pty.wait_for("inserted", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.trim_end() == "see #2753")
    });
    assert_eq!(editor_row(&pty, "see ").trim_end(), "see #2753");

    // A declared trigger character (`$`) with an insertion of the provider's own; Enter
    // accepts (it does not submit).
    pty.type_text(" $P");
    pty.wait_text("environment variable");
    pty.wait_for("one variable", Duration::from_secs(10), |c| {
        c.contains("$PATH") && !c.contains("$HOME")
    });
    pty.send(ENTER);
    pty.wait_for("applied", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.trim_end() == "see #2753 ${PATH}")
    });
    assert!(!pty.contents().contains("environment variable"), "{}", pty.contents());

    // A `#` inside a word opens nothing.
    pty.type_text(" a#");
    std::thread::sleep(Duration::from_millis(400));
    assert!(!pty.contents().contains("Extension API"), "{}", pty.contents());

    // pi's own slash commands reach the editor through the provider, which marks them.
    pty.send(CTRL_U);
    pty.type_text("/mo");
    pty.wait_text("(via ext)");
    let model = pty
        .rows()
        .into_iter()
        .find(|r| r.contains("(via ext)"))
        .expect("menu row");
    assert!(model.starts_with("→ model"), "{model:?}");
    pty.send(TAB);
    pty.wait_for("command completed", Duration::from_secs(10), |c| {
        !c.contains("(via ext)")
    });
    pty.wait_for("inserted", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.trim_end() == "/model")
    });
    assert_eq!(editor_row(&pty, "/mo").trim_end(), "/model");

    // Nothing reached the model.
    assert!(s.server.requests().is_empty());
    pty.send(CTRL_U);
    quit(&mut pty);
}

#[test]
fn a_replacement_editor_completes_through_the_extension_provider() {
    let Some((node, modules)) = extension_env("a_replacement_editor_completes_through_the_extension_provider") else {
        return;
    };
    let s = setup(Script::echo());
    let fixture = |name: &str| format!("{}/tests/interactive/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let (editor, completions) = (fixture("editor2.ts"), fixture("autocomplete.ts"));
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let mut pty = Pty::spawn_env(
        &["-e", &editor, "-e", &completions],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_text("completions ready");
    // The CustomEditor (pi-tui's, in the host) asks the same chain.
    pty.type_text("see #1");
    pty.wait_text("Paste markers survive editor switches");
    pty.send(TAB);
    pty.wait_for("issue completed", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.trim_end() == "see #1024")
    });
    pty.type_text(" $U");
    pty.wait_text("$USER");
    pty.send(TAB);
    pty.wait_for("variable completed", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.trim_end() == "see #1024 ${USER}")
    });
    pty.send(CTRL_U);
    quit(&mut pty);
}

#[test]
fn keys_typed_while_a_completion_is_applied_follow_it() {
    keys_typed_around_completions("keys_typed_while_a_completion_is_applied_follow_it", false);
}

/// The same with a second completion typed right after the first one's held keys: ` $H` in
/// one write asks the provider twice (`$`, then `$H`), and the answer to the last one opens
/// the menu whatever order the two requests reach the host in.
#[test]
fn a_second_completion_right_after_held_keys_opens_its_menu() {
    keys_typed_around_completions("a_second_completion_right_after_held_keys_opens_its_menu", true);
}

fn keys_typed_around_completions(test: &str, second_completion: bool) {
    let Some((node, modules)) = extension_env(test) else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("autocomplete.ts", &s, &node, &modules);
    pty.wait_text("completions ready");
    pty.type_text("a $");
    pty.wait_text("$PATH");
    pty.type_text("P");
    pty.wait_for("one variable", Duration::from_secs(10), |c| {
        c.contains("$PATH") && !c.contains("$HOME")
    });
    // Tab and more keys in one write: the provider's insertion is a host round trip away,
    // and the keys must land after it, none lost.
    pty.send("\tx/y z");
    pty.wait_for("applied then typed", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.trim_end() == "a ${PATH}x/y z")
    });
    // Again, with Enter accepting and a key right after.
    if second_completion {
        pty.type_text(" $H");
        pty.wait_text("$HOME");
        pty.send("\r!");
        pty.wait_for("applied then typed", Duration::from_secs(10), |_| {
            pty.rows().iter().any(|r| r.trim_end() == "a ${PATH}x/y z ${HOME}!")
        });
    }
    // Tab with the menu closed asks the provider first; a key right after waits for that too.
    pty.send(CTRL_U);
    pty.type_text("b #102");
    pty.wait_text("#1024");
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(10), |c| !c.contains("Paste markers"));
    pty.send("\tq");
    pty.wait_for("completed then typed", Duration::from_secs(10), |_| {
        pty.rows()
            .iter()
            .any(|r| r.trim_end() == "b #1024q" || r.trim_end() == "b #1024 q")
    });
    pty.send(CTRL_U);
    quit(&mut pty);
}

/// Several keys of one write each ask the provider; the menu shows the answer for the text
/// as it is after the last key, every time (requests sent close together may reach the host
/// in another order than they were made).
#[test]
fn keys_of_one_write_open_the_menu_for_the_last_key() {
    let Some((node, modules)) = extension_env("keys_of_one_write_open_the_menu_for_the_last_key") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("autocomplete.ts", &s, &node, &modules);
    pty.wait_text("completions ready");
    for round in 0..5 {
        pty.send("x $HO");
        pty.wait_for(&format!("menu of round {round}"), Duration::from_secs(10), |c| {
            c.contains("$HOME") && !c.contains("$PATH")
        });
        pty.send(TAB);
        pty.wait_for(&format!("applied in round {round}"), Duration::from_secs(10), |_| {
            pty.rows().iter().any(|r| r.trim_end() == "x ${HOME}")
        });
        pty.send(" #27");
        pty.wait_for(&format!("issue menu of round {round}"), Duration::from_secs(10), |c| {
            c.contains("Reload stale resource settings") && !c.contains("Extension API")
        });
        pty.send(ESC);
        pty.wait_for("menu closed", Duration::from_secs(10), |c| !c.contains("Reload stale"));
        pty.send(CTRL_U);
        pty.wait_for("cleared", Duration::from_secs(10), |_| {
            !pty.rows().iter().any(|r| r.starts_with("x ${HOME}"))
        });
    }
    quit(&mut pty);
}
