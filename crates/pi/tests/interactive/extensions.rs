//! Extensions in the terminal UI: dialogs and notices, and what extensions draw themselves
//! (statuses, widgets, header, footer, title, editor text, custom components with keys).

use std::path::PathBuf;
use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::pty::Pty;
use super::{quit, setup, ENTER};

/// Node and the packages the extension host needs, or `None` after a `skipped:` line (a
/// failure under `CI`).
pub(super) fn extension_env(test: &str) -> Option<(PathBuf, PathBuf)> {
    let node = std::env::var_os("PI_TEST_NODE")
        .map(PathBuf::from)
        .or_else(|| pi_extensions::node::find_node(None).ok());
    let modules = std::env::var_os("PI_EXTENSION_MODULES")
        .map(PathBuf::from)
        .or_else(|| pi_test_support::find_reference().map(|r| r.dir.join("node_modules")))
        .filter(|dir| pi_extensions::modules::has_required_packages(dir));
    match (node, modules) {
        (Some(node), Some(modules)) => Some((node, modules)),
        _ => pi_test_support::require::missing("node and the extension host packages", test),
    }
}

#[test]
fn an_extension_command_opens_a_dialog_and_shows_a_notice() {
    let Some((node, modules)) = extension_env("an_extension_command_opens_a_dialog_and_shows_a_notice") else {
        return;
    };
    let s = setup(Script::echo());
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interactive/fixtures/ui.ts");
    let node = node.display().to_string();
    let modules = modules.display().to_string();
    let mut pty = Pty::spawn_env(
        &["-e", fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty.type_text("/pick");
    pty.send(ENTER);
    pty.wait_text("Pick a letter");
    pty.wait_text("beta");
    // Laid out as pi 1.6's selector prompts: rule, blank, title, blank, choices, blank, key
    // help, blank, rule.
    let rows = pty.rows();
    let title = rows
        .iter()
        .position(|r| r == " Pick a letter")
        .unwrap_or_else(|| panic!("no title row in {rows:#?}"));
    assert!(rows[title - 2].starts_with("────"), "{rows:#?}");
    assert_eq!(rows[title - 1], "", "{rows:#?}");
    assert_eq!(rows[title + 1], "", "{rows:#?}");
    assert_eq!(rows[title + 2], " → alpha", "{rows:#?}");
    assert_eq!(rows[title + 3], "   beta", "{rows:#?}");
    assert_eq!(rows[title + 4], "", "{rows:#?}");
    assert_eq!(
        rows[title + 5],
        " ↑↓ navigate  enter select  escape/ctrl+c cancel",
        "{rows:#?}"
    );
    assert_eq!(rows[title + 6], "", "{rows:#?}");
    assert!(rows[title + 7].starts_with("────"), "{rows:#?}");
    pty.send("\x1b[B");
    pty.send(ENTER);
    pty.wait_text("picked beta in tui");
    // Nothing was sent to the model: the command ran instead of a prompt.
    assert!(s.server.requests().is_empty());
    quit(&mut pty);
}

/// `pi -e <fixture>` on a 100x30 screen, once the first frame is there.
pub(super) fn spawn_with(fixture: &str, s: &super::Setup, node: &std::path::Path, modules: &std::path::Path) -> Pty {
    let fixture = format!("{}/tests/interactive/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
    spawn_extension(std::path::Path::new(&fixture), s, node, modules)
}

/// `pi -e <path>` on a 100x30 screen with the extension host's Node and packages, once the
/// first frame is there.
pub(super) fn spawn_extension(
    path: &std::path::Path,
    s: &super::Setup,
    node: &std::path::Path,
    modules: &std::path::Path,
) -> Pty {
    let path = path.display().to_string();
    let node = node.display().to_string();
    let modules = modules.display().to_string();
    let pty = Pty::spawn_env(
        &["-e", &path],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty
}

pub(super) fn row_of(pty: &Pty, text: &str) -> Option<usize> {
    pty.rows().iter().position(|r| r.contains(text))
}

#[test]
fn statuses_widgets_header_footer_and_title_show_where_pi_puts_them() {
    let Some((node, modules)) = extension_env("statuses_widgets_header_footer_and_title_show_where_pi_puts_them")
    else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("screen.ts", &s, &node, &modules);
    // From session_start, before the screen was up: a status under the footer, a text
    // widget above the editor and a component widget below it, drawn at the screen's width.
    pty.wait_text("status-ready");
    pty.wait_text("below component at 100");
    let above = row_of(&pty, "Above widget line").expect("widget above");
    let below = row_of(&pty, "below component at 100").expect("widget below");
    let model = row_of(&pty, "mock-model").expect("footer");
    let status = row_of(&pty, "status-ready").expect("status");
    assert!(above < below && below < model && model < status, "{:#?}", pty.rows());
    assert!(
        pty.rows()[above].starts_with(" Above widget line"),
        "padded like pi's text widgets"
    );

    // Extension commands are in the slash menu, tagged as pi tags a `-e` extension's.
    pty.type_text("/f");
    pty.wait_text("[t] Replace the footer");
    pty.type_text("ooter");
    pty.send(ENTER);
    pty.send(ENTER);
    pty.wait_text("custom footer 100 statuses=1");
    pty.send(super::CTRL_C);
    // A footer of the extension's replaces pi's (and the status line with it).
    pty.type_text("/footer");
    pty.send(ENTER);
    pty.wait_text("custom footer 100 statuses=1");
    assert!(!pty.contents().contains("mock-model"), "{}", pty.contents());

    // The header replaces pi's startup header.
    pty.type_text("/header");
    pty.send(ENTER);
    pty.wait_text("CUSTOM HEADER");
    assert!(!pty.contents().contains("escape interrupt"), "{}", pty.contents());
    // The loaded-resources listing stays under it, as in pi 1.6.
    let rows = pty.rows();
    let header = rows
        .iter()
        .position(|r| r.contains("CUSTOM HEADER"))
        .expect("header row");
    let listing = rows.iter().position(|r| r.trim_end() == "[Extensions]");
    assert!(listing.is_some_and(|l| l > header), "{rows:#?}");

    // The terminal title.
    pty.type_text("/title hello there");
    pty.send(ENTER);
    pty.wait_for("title", Duration::from_secs(10), |_| {
        String::from_utf8_lossy(&pty.raw()).contains("\x1b]0;hello there\x07")
    });

    // A resize draws components again at the new width.
    pty.resize(30, 80);
    pty.wait_text("custom footer 80");
    pty.wait_text("below component at 80");
    quit(&mut pty);
}

#[test]
fn custom_components_take_keys_and_resolve_with_their_result() {
    let Some((node, modules)) = extension_env("custom_components_take_keys_and_resolve_with_their_result") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("screen.ts", &s, &node, &modules);
    pty.wait_text("status-ready");

    // An overlay 40 columns wide: keys go to it, not to the editor.
    pty.type_text("/game");
    pty.send(ENTER);
    pty.wait_text("count=0 width=40");
    pty.send("+");
    pty.send("+");
    pty.wait_text("count=2 width=40");
    let row = row_of(&pty, "count=2").expect("overlay row");
    let col = pty.rows()[row].find("count=2").expect("overlay column");
    assert_eq!(col, 30, "centred: (100 - 40) / 2");
    pty.send("q");
    pty.wait_text("game over with 2");
    assert!(!pty.contents().contains("count=2"), "the overlay is gone");

    // Without options an overlay takes its component's `width` (60: centred at 20).
    pty.type_text("/sized");
    pty.send(ENTER);
    pty.wait_text("sized box width=60");
    let row = row_of(&pty, "sized box").expect("sized row");
    assert_eq!(pty.rows()[row].find("sized box"), Some(20), "{:#?}", pty.rows());
    pty.send("q");
    pty.wait_for("sized closed", Duration::from_secs(10), |c| !c.contains("sized box"));

    // In the editor's place, then the editor is back with the text an extension put there.
    pty.type_text("/inline");
    pty.send(ENTER);
    pty.wait_text("count=0 width=100");
    pty.send("+");
    pty.wait_text("count=1 width=100");
    pty.send("\x1b");
    pty.wait_text("inline done with 1; editor says \"\"");
    pty.type_text("/prefill");
    pty.send(ENTER);
    pty.wait_text("text from the extension");

    // Tools expanded: the extension sees the state change.
    pty.send(super::CTRL_C);
    pty.type_text("/expand");
    pty.send(ENTER);
    pty.wait_text("expanded false -> true");
    assert!(s.server.requests().is_empty(), "no prompt reached the model");
    quit(&mut pty);
}

#[test]
fn a_message_renderer_draws_custom_messages_again_on_expand_and_resize() {
    let Some((node, modules)) = extension_env("a_message_renderer_draws_custom_messages_again_on_expand_and_resize")
    else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("screen.ts", &s, &node, &modules);
    pty.wait_text("status-ready");
    pty.type_text("/note first words");
    pty.send(ENTER);
    pty.wait_text("NOTE first words expanded=false w=100");
    // Ctrl+O expands tool output and custom messages with it.
    pty.send("\x0f");
    pty.wait_text("NOTE first words expanded=true w=100");
    pty.resize(30, 90);
    pty.wait_text("NOTE first words expanded=true w=90");
    quit(&mut pty);
}

/// `screen.ts` loaded and one prompt run in which the model calls its `shout` tool; `None`
/// (a printed skip) without Node or the host packages.
pub(super) fn after_a_shout(test: &str) -> Option<(super::Setup, Pty)> {
    let (node, modules) = extension_env(test)?;
    let s = setup(Script::sequential(vec![
        Turn::tool_call("shout", serde_json::json!({"text": "hey there"})),
        Turn::text("all shouted"),
    ]));
    let mut pty = spawn_with("screen.ts", &s, &node, &modules);
    pty.wait_text("status-ready");
    pty.type_text("shout please");
    pty.send(ENTER);
    pty.wait_text("all shouted");
    Some((s, pty))
}

#[test]
fn an_extension_tool_is_drawn_by_its_call_and_result_renderers() {
    let Some((_s, mut pty)) = after_a_shout("an_extension_tool_is_drawn_by_its_call_and_result_renderers") else {
        return;
    };
    // The content is 98 columns wide inside the tool block's padding.
    pty.wait_text("SHOUT CALL hey there");
    pty.wait_text("SHOUT RESULT 9 HEY THERE expanded=false w=98");
    pty.send("\x0f");
    pty.wait_text("SHOUT RESULT 9 HEY THERE expanded=true w=98");
    pty.resize(30, 80);
    pty.wait_text("expanded=true w=78");
    quit(&mut pty);
}

#[test]
fn a_registered_shortcut_fires_unless_the_key_is_reserved_for_the_app() {
    let Some((node, modules)) = extension_env("a_registered_shortcut_fires_unless_the_key_is_reserved_for_the_app")
    else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("screen.ts", &s, &node, &modules);
    pty.wait_text("status-ready");
    pty.send("\x1bz");
    pty.wait_text("shortcut alt+z fired");
    // Ctrl+C still clears the editor.
    pty.type_text("draft text");
    pty.wait_text("draft text");
    pty.send(super::CTRL_C);
    pty.wait_for("editor cleared", Duration::from_secs(10), |c| !c.contains("draft text"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pty.contents().contains("shortcut ctrl+c fired"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn a_replacement_editor_edits_submits_and_keeps_the_app_keys() {
    let Some((node, modules)) = extension_env("a_replacement_editor_edits_submits_and_keeps_the_app_keys") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("editor.ts", &s, &node, &modules);
    // The extension's editor is in pi's place, drawn at the screen's width.
    pty.wait_text("MODE:insert w=100");
    pty.type_text("hello there");
    pty.wait_text("hello there");
    // The cursor in the middle: the text after it is still drawn (pi-tui's cursor markers
    // become inverse video).
    pty.send("\x1b[D\x1b[D");
    std::thread::sleep(Duration::from_millis(300));
    pty.wait_text("hello there");
    pty.send("\x1b[C\x1b[C");
    // Escape is the editor's own key in insert mode: no abort, no tree, a mode change.
    pty.send(super::ESC);
    pty.wait_text("MODE:command w=100");
    pty.type_text("zzz");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !pty.contents().contains("zzz"),
        "command mode ignores letters: {}",
        pty.contents()
    );
    pty.type_text("i");
    pty.wait_text("MODE:insert");
    // Enter submits through pi: the model gets the text and its echo shows.
    pty.send(ENTER);
    pty.wait_for("reply", Duration::from_secs(15), |_| s.server.requests().len() == 1);
    pty.wait_for("editor emptied", Duration::from_secs(10), |c| {
        c.matches("hello there").count() >= 2 && row_of(&pty, "MODE:insert").is_some()
    });
    // Ctrl+C is the app's (clear), handed back by the editor.
    pty.type_text("draft words");
    pty.wait_text("draft words");
    pty.send(super::CTRL_C);
    pty.wait_for("cleared", Duration::from_secs(10), |c| !c.contains("draft words"));

    // pi's own editor again, with the text the replacement had.
    pty.type_text("/plain");
    pty.send(ENTER);
    pty.wait_text("plain editor (had function)");
    assert!(row_of(&pty, "MODE:").is_none(), "{}", pty.contents());
    pty.type_text("/fancy");
    pty.send(ENTER);
    pty.wait_text("MODE:insert");
    // Ctrl+D on the empty replacement quits through pi.
    quit(&mut pty);
}

#[test]
fn terminal_input_listeners_swallow_and_rewrite_keys_first() {
    let Some((node, modules)) = extension_env("terminal_input_listeners_swallow_and_rewrite_keys_first") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("editor.ts", &s, &node, &modules);
    pty.wait_text("MODE:insert");
    pty.type_text("/plain");
    pty.send(ENTER);
    pty.wait_text("plain editor");
    pty.type_text("/filter");
    pty.send(ENTER);
    pty.wait_text("filter on");
    // x never arrives, y arrives as z, the rest as typed.
    pty.type_text("axbyc");
    pty.wait_text("abzc");
    pty.send(super::CTRL_C);
    pty.type_text("/unfilter");
    pty.send(ENTER);
    pty.wait_text("filter off");
    pty.type_text("xy");
    pty.wait_text("xy");
    quit_after_clear(&mut pty);
}

/// Clear the editor, then quit with Ctrl+D.
fn quit_after_clear(pty: &mut Pty) {
    pty.send(super::CTRL_C);
    std::thread::sleep(Duration::from_millis(200));
    quit(pty);
}

#[test]
fn an_extension_command_completes_its_argument_in_the_slash_menu() {
    let Some((node, modules)) = extension_env("an_extension_command_completes_its_argument_in_the_slash_menu") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("screen.ts", &s, &node, &modules);
    pty.wait_text("status-ready");
    pty.type_text("/color b");
    pty.wait_text("the colour blue");
    pty.wait_text("the colour black");
    assert!(!pty.contents().contains("the colour red"), "{}", pty.contents());
    pty.type_text("l");
    pty.wait_for("narrowed", Duration::from_secs(10), |c| {
        c.contains("the colour blue") && c.contains("the colour black")
    });
    pty.type_text("u");
    pty.wait_for("one left", Duration::from_secs(10), |c| {
        c.contains("the colour blue") && !c.contains("the colour black")
    });
    pty.send("\t");
    pty.wait_for("applied", Duration::from_secs(10), |c| !c.contains("the colour blue"));
    pty.send(ENTER);
    pty.wait_text("colour is blue");
    quit(&mut pty);
}
