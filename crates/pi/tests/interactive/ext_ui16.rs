//! Extensions in the terminal UI, the calls pi 1.6 added or changed: the theme calls, the
//! working indicator, renderers of built-in tools and of custom entries.

use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::extensions::{extension_env, spawn_with};
use super::{quit, setup, ENTER};

#[test]
fn extensions_list_switch_and_follow_the_theme() {
    let Some((node, modules)) = extension_env("extensions_list_switch_and_follow_the_theme") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("theme.ts", &s, &node, &modules);
    pty.wait_text("widget theme=");
    // The list comes a moment after the first frame (theme files are read off the UI thread).
    std::thread::sleep(Duration::from_millis(300));
    pty.type_text("/themes");
    pty.send(ENTER);
    pty.wait_text("themes: system,dark,light current=");
    pty.wait_text("light=light differ=true missing=true");

    // By name: the Theme object changes at once, the widget is drawn again, the name is saved.
    pty.type_text("/settheme light");
    pty.send(ENTER);
    pty.wait_text("set light: success=true error=- now=light");
    pty.wait_text("widget theme=light");
    let settings = s.agent.path().join("settings.json");
    let saved = || {
        std::fs::read_to_string(&settings)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("theme").and_then(|t| t.as_str()).map(str::to_string))
    };
    pty.wait_for("theme saved", Duration::from_secs(10), |_| {
        saved().as_deref() == Some("light")
    });

    // A Theme object switches without saving.
    pty.type_text("/themeobject dark");
    pty.send(ENTER);
    pty.wait_text("object dark: success=true now=dark");
    pty.wait_text("widget theme=dark");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(saved().as_deref(), Some("light"), "a Theme object is not saved");

    // An unknown name fails and leaves the system theme, as pi does.
    pty.type_text("/settheme nope");
    pty.send(ENTER);
    pty.wait_text("set nope: success=false error=Theme not found: nope now=system");
    pty.wait_text("widget theme=system");
    quit(&mut pty);
}

#[test]
fn extensions_shape_the_working_indicator_and_the_hidden_thinking_label() {
    let Some((node, modules)) = extension_env("extensions_shape_the_working_indicator_and_the_hidden_thinking_label")
    else {
        return;
    };
    let slow = |text: &str| Turn::text(text).with_thinking("deep thoughts here").with_delay_ms(250);
    let s = setup(Script::sequential(vec![
        slow("first reply"),
        slow("second reply"),
        slow("third reply"),
        slow("fourth reply"),
    ]));
    let mut pty = spawn_with("working.ts", &s, &node, &modules);
    // Thinking hidden (Ctrl+T): the extension's label shows in its place.
    pty.send("\x14");
    std::thread::sleep(Duration::from_millis(200));
    pty.type_text("one");
    pty.send(ENTER);
    // The message and the frame, as given, in the editor's top border; for every run.
    pty.wait_text("@ Busy (custom)");
    pty.wait_text("first reply");
    pty.wait_text("Pondering...");
    assert!(!pty.contents().contains("Thinking..."), "{}", pty.contents());
    pty.wait_for("indicator gone", Duration::from_secs(10), |c| {
        !c.contains("Busy (custom)")
    });
    pty.type_text("two");
    pty.send(ENTER);
    pty.wait_text("@ Busy (custom)");
    pty.wait_text("second reply");
    pty.wait_for("indicator gone", Duration::from_secs(10), |c| {
        !c.contains("Busy (custom)")
    });

    // Hidden: a run shows no indicator.
    pty.type_text("/hideworking");
    pty.send(ENTER);
    std::thread::sleep(Duration::from_millis(300));
    pty.type_text("three");
    pty.send(ENTER);
    let mut seen = false;
    let start = std::time::Instant::now();
    while !pty.contents().contains("third reply") && start.elapsed() < Duration::from_secs(15) {
        seen |= pty.contents().contains("Busy (custom)") || pty.contents().contains("Working");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(pty.contents().contains("third reply"), "{}", pty.contents());
    assert!(!seen, "no working indicator while hidden");

    // pi's own again: the braille spinner and "Working", and pi's thinking label.
    pty.type_text("/resetworking");
    pty.send(ENTER);
    pty.wait_for("label reset", Duration::from_secs(10), |c| {
        c.contains("Thinking...") && !c.contains("Pondering...")
    });
    pty.type_text("four");
    pty.send(ENTER);
    pty.wait_text("Working");
    assert!(!pty.contents().contains("Busy (custom)"), "{}", pty.contents());
    pty.wait_text("fourth reply");
    quit(&mut pty);
}

#[test]
fn built_in_tools_take_renderers_from_overrides_and_resolvers_and_entries_from_entry_renderers() {
    let Some((node, modules)) =
        extension_env("built_in_tools_take_renderers_from_overrides_and_resolvers_and_entries_from_entry_renderers")
    else {
        return;
    };
    let s = setup(Script::sequential(vec![
        Turn::tool_call("read", serde_json::json!({"path": "notes.txt"})),
        Turn::text("read done"),
        Turn::tool_call("bash", serde_json::json!({"command": "printf 'out%s' put"})),
        Turn::text("bash done"),
    ]));
    std::fs::write(s.cwd.path().join("notes.txt"), "one\ntwo\nthree").expect("write notes");
    let mut pty = spawn_with("renderers.ts", &s, &node, &modules);
    pty.type_text("read it");
    pty.send(ENTER);
    pty.wait_text("read done");
    // The re-registered read tool is drawn by its renderers (inside the block's padding).
    pty.wait_text("READ CALL notes.txt");
    pty.wait_text("READ RESULT 3 lines expanded=false w=98");
    pty.send("\x0f");
    pty.wait_text("READ RESULT 3 lines expanded=true w=98");
    pty.send("\x0f");

    // A resolver draws bash's call; its result keeps pi's own rendering.
    pty.type_text("run it");
    pty.send(ENTER);
    pty.wait_text("bash done");
    pty.wait_text("BASH VIA RESOLVER printf 'out%s' put");
    pty.wait_text("output");

    // Custom entries show through their entry renderer only.
    pty.type_text("/plain");
    pty.send(ENTER);
    pty.type_text("/card hello card");
    pty.send(ENTER);
    pty.wait_text("[card] hello card expanded=false w=100");
    assert!(!pty.contents().contains("invisible entry"), "{}", pty.contents());
    pty.send("\x0f");
    pty.wait_text("[card] hello card expanded=true w=100");
    // Both entries are in the session, as pi writes them.
    quit(&mut pty);
    let sessions = s.agent.path().join("sessions");
    let mut text = String::new();
    for dir in std::fs::read_dir(&sessions).expect("sessions").flatten() {
        for f in std::fs::read_dir(dir.path()).expect("session dir").flatten() {
            text.push_str(&std::fs::read_to_string(f.path()).unwrap_or_default());
        }
    }
    assert!(text.contains("\"customType\":\"card\""), "{text}");
    assert!(text.contains("\"customType\":\"unrendered\""), "{text}");
}

#[test]
fn a_custom_editor_completes_commands_and_their_arguments() {
    let Some((node, modules)) = extension_env("a_custom_editor_completes_commands_and_their_arguments") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("editor2.ts", &s, &node, &modules);
    std::thread::sleep(Duration::from_millis(500));
    // pi's commands and the extension's are offered in the replacement editor.
    pty.type_text("/flav");
    pty.wait_text("Pick a flavour");
    pty.send("\t");
    pty.wait_for("command completed", Duration::from_secs(10), |c| c.contains("/flavour"));
    pty.type_text("v");
    pty.wait_text("flavour vanilla");
    pty.wait_text("flavour violet");
    assert!(!pty.contents().contains("flavour mint"), "{}", pty.contents());
    pty.type_text("io");
    pty.wait_for("one left", Duration::from_secs(10), |c| {
        c.contains("flavour violet") && !c.contains("flavour vanilla")
    });
    pty.send("\t");
    pty.wait_for("argument completed", Duration::from_secs(10), |c| {
        c.contains("/flavour violet") && c.matches("flavour violet").count() == 1
    });
    pty.send(ENTER);
    pty.wait_text("flavour is violet");
    assert!(s.server.requests().is_empty(), "a command, not a prompt");
    quit(&mut pty);
}

#[test]
fn the_html_export_draws_extension_tools_with_their_renderers() {
    let Some((s, mut pty)) =
        super::extensions::after_a_shout("the_html_export_draws_extension_tools_with_their_renderers")
    else {
        return;
    };
    pty.type_text("/export page.html");
    pty.send(ENTER);
    pty.wait_text("Session exported to:");
    let html = std::fs::read_to_string(s.cwd.path().join("page.html")).expect("export written");
    // The call's and the result's renderer lines, with their styles as inline CSS.
    assert!(
        html.contains("<span style=\"font-weight:bold\">SHOUT CALL hey there</span>"),
        "{html}"
    );
    assert!(html.contains("SHOUT RESULT 9 HEY THERE expanded=false w=100"), "{html}");
    assert!(html.contains("SHOUT RESULT 9 HEY THERE expanded=true w=100"), "{html}");
    quit(&mut pty);
}

#[test]
fn an_entry_appended_while_the_reply_streams_goes_before_the_reply() {
    let Some((node, modules)) = extension_env("an_entry_appended_while_the_reply_streams_goes_before_the_reply") else {
        return;
    };
    let s = setup(Script::sequential(vec![Turn::text(
        "streamed words arrive one by one until the reply ends here",
    )
    .with_delay_ms(60)]));
    let mut pty = spawn_with("stream_entry.ts", &s, &node, &modules);
    pty.type_text("go");
    pty.send(ENTER);
    pty.wait_text("until the reply ends here");
    pty.wait_text("[card] during the reply");
    // As pi 1.6 places it: above the reply that was streaming when it was appended.
    let rows = pty.rows();
    let card = rows.iter().position(|r| r.contains("[card] during the reply"));
    let reply = rows.iter().position(|r| r.contains("streamed words arrive"));
    let prompt = rows.iter().position(|r| r.trim() == "go");
    assert!(
        prompt < card && card < reply,
        "prompt {prompt:?}, card {card:?}, reply {reply:?}: {rows:#?}"
    );
    quit(&mut pty);
}
