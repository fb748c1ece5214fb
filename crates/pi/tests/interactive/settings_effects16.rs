//! What some `/settings` rows and settings do to the running screen, as in pi 1.6: the TUI
//! mode switching at once with the menu still open (and what the main screen and its
//! scrollback hold after), the image rows in fullscreen through iTerm2, the startup
//! warnings across a switch, and theme files pi's schema refuses.

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use pi_test_support::{Script, Turn};
use serde_json::json;

use super::pty::Pty;
use super::{quit, set_setting, setup, wait_json, ENTER, ESC};

/// Open `/settings` and search for the row `label` with `query`.
fn settings_row(pty: &mut Pty, query: &str, label: &str) {
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    pty.type_text(query);
    pty.wait_text(&format!("→ {label}"));
}

/// Close the open menu (Escape) and wait until the editor is back.
fn close_menu(pty: &mut Pty) {
    pty.send(ESC);
    pty.wait_for("the menu closed", Duration::from_secs(5), |c| {
        !c.contains("Type to search") && !c.contains("Enter to select")
    });
}

fn wait_mode(pty: &Pty, fullscreen: bool) {
    let start = std::time::Instant::now();
    while pty.alternate_screen() != fullscreen {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "still {} fullscreen; screen:\n{}",
            if fullscreen { "not" } else { "in" },
            pty.contents()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The first row holding `text`.
fn row_of(rows: &[String], text: &str) -> usize {
    rows.iter()
        .position(|r| r.contains(text))
        .unwrap_or_else(|| panic!("{text:?} not on screen:\n{}", rows.join("\n")))
}

#[test]
fn tui_mode_switches_at_once_with_the_menu_open_and_the_scrollback_holds_nothing_twice() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    assert!(pty.alternate_screen(), "fullscreen is the default");
    pty.type_text("hello there");
    pty.send(ENTER);
    pty.wait_text("echo: hello there");
    settings_row(&mut pty, "tui mode", "TUI mode");
    pty.send(ENTER);

    // Regular at once, the menu still open in the editor's place: the transcript and the
    // status line above it, the footer below.
    wait_mode(&pty, false);
    pty.wait_text("TUI mode: regular");
    pty.wait_stable(Duration::from_millis(200));
    let rows = pty.rows();
    let (echo, status, row, footer) = (
        row_of(&rows, "echo: hello there"),
        row_of(&rows, "TUI mode: regular"),
        row_of(&rows, "→ TUI mode"),
        row_of(&rows, "mock-model"),
    );
    assert!(echo < status && status < row && row < footer, "{}", rows.join("\n"));
    assert!(rows[row].trim_end().ends_with("regular"), "{}", rows[row]);
    let settings = s.agent.path().join("settings.json");
    let saved = wait_json(&settings, |v| v["tuiMode"] == "regular");
    assert_eq!(saved["tuiMode"], "regular");

    // Back to fullscreen, the menu still open; the status line says so.
    pty.send(ENTER);
    wait_mode(&pty, true);
    pty.wait_text("TUI mode: fullscreen");
    assert!(pty.contents().contains("→ TUI mode"), "{}", pty.contents());
    wait_json(&settings, |v| v["tuiMode"] == "fullscreen");

    // And regular again: the main screen goes on from what it showed before, so the
    // transcript is in the scrollback once (with one status line, updated in place).
    pty.send(ENTER);
    wait_mode(&pty, false);
    pty.wait_text("TUI mode: regular");
    pty.wait_stable(Duration::from_millis(300));
    let history = pty.history();
    let count = |text: &str| history.iter().filter(|l| l.contains(text)).count();
    assert_eq!(count("echo: hello there"), 1, "{}", history.join("\n"));
    assert_eq!(count("Pi can explain its own features"), 1, "{}", history.join("\n"));
    assert_eq!(count("TUI mode: "), 1, "{}", history.join("\n"));
    assert_eq!(count("→ TUI mode"), 1, "{}", history.join("\n"));

    // Closing the menu gives the editor its place back.
    pty.send(ESC);
    pty.wait_for("the menu closed", Duration::from_secs(5), |c| !c.contains("→ TUI mode"));
    pty.type_text("after");
    pty.send(ENTER);
    pty.wait_text("echo: after");
    quit(&mut pty);
}

#[test]
fn the_image_rows_are_hidden_in_fullscreen_through_iterm2_only() {
    let s = setup(Script::echo());
    let mut pty = Pty::spawn_unset(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_IMAGE_PROTOCOL", "iterm2")],
        &["TMUX"],
    );
    pty.wait_text("mock-model");
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    // Fullscreen draws no iTerm2 images: no "Show images" or "Image width" rows.
    pty.wait_text("(1/33)");
    let c = pty.contents();
    assert!(!c.contains("Show images") && !c.contains("Image width"), "{c}");
    assert!(c.contains("  Auto-resize images"), "{c}");
    pty.send(ESC);
    pty.wait_for("the menu closed", Duration::from_secs(5), |c| {
        !c.contains("→ Auto-compact")
    });
    quit(&mut pty);

    // In regular mode the terminal draws them: the rows are there.
    set_setting(&s, "tuiMode", json!("regular"));
    let mut pty = Pty::spawn_unset(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_IMAGE_PROTOCOL", "iterm2")],
        &["TMUX"],
    );
    pty.wait_text("mock-model");
    assert!(!pty.alternate_screen());
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("(1/35)");
    let c = pty.contents();
    assert!(c.contains("  Show images") && c.contains("  Image width"), "{c}");
    close_menu(&mut pty);
    quit(&mut pty);
}

/// A folder for `PATH` with only `setsid` (to start pi) and a `tmux` that says extended keys
/// are off, so both startup warnings show.
fn path_with_fake_tmux() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dir");
    let setsid = ["/usr/bin/setsid", "/bin/setsid"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("setsid");
    std::os::unix::fs::symlink(setsid, dir.path().join("setsid")).expect("symlink");
    let tmux = dir.path().join("tmux");
    std::fs::write(&tmux, "#!/bin/sh\necho off\n").expect("tmux script");
    std::fs::set_permissions(&tmux, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

#[test]
fn the_startup_warnings_stay_in_the_transcript_when_switching_to_regular() {
    let s = setup(Script::echo());
    // No ripgrep anywhere, offline: the warning shows (fd is there).
    let bin = s.agent.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::write(bin.join("fd"), "").expect("fd");
    let path = path_with_fake_tmux();
    let path = path.path().display().to_string();
    // iTerm2: the transcript is drawn again for the main screen (its images come back).
    let mut pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[
            ("PATH", &path),
            ("TMUX", "/tmp/tmux-0/default,1,0"),
            ("PI_IMAGE_PROTOCOL", "iterm2"),
        ],
    );
    pty.wait_text("Warning: ripgrep not found");
    pty.wait_text("Warning: tmux extended-keys is off");
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("echo: hello");
    settings_row(&mut pty, "tui mode", "TUI mode");
    pty.send(ENTER);
    wait_mode(&pty, false);
    pty.wait_text("TUI mode: regular");
    pty.wait_stable(Duration::from_millis(300));
    // pi 1.6 keeps both warnings, each once, and the message under them keeps its gap.
    let history = pty.history();
    let count = |text: &str| history.iter().filter(|l| l.contains(text)).count();
    assert_eq!(count("Warning: ripgrep not found"), 1, "{}", history.join("\n"));
    assert_eq!(count("Warning: tmux extended-keys is off"), 1, "{}", history.join("\n"));
    let hello = row_of(&history, " hello");
    assert!(
        history[hello - 1].trim().is_empty()
            && history[hello - 2].trim().is_empty()
            && history[hello - 3].contains("restart tmux."),
        "{}",
        history.join("\n")
    );
    close_menu(&mut pty);
    quit(&mut pty);
}

/// Every colour token pi 1.6 requires, set to `value`.
fn full_colors(value: &str) -> serde_json::Map<String, serde_json::Value> {
    pi_coding_agent::resources::themes::THEME_TOKENS
        .iter()
        .map(|t| (t.to_string(), json!(value)))
        .collect()
}

#[test]
fn a_theme_with_unknown_keys_is_refused_at_startup_and_left_out_of_the_list() {
    let s = setup(Script::echo());
    let mut bad = full_colors("#112233");
    bad.insert("fooBar".into(), json!("#ffffff"));
    let bad = json!({"name": "extra-key", "sparkle": true, "colors": bad});
    s.agent.write("themes/extra-key.json", bad.to_string()).expect("theme");
    // What pi 1.6 accepts still loads: vars, oklch, okhsl, #rgb, an optional token.
    let mut good = full_colors("base");
    good.insert("accent".into(), json!("oklch(0.7 0.1 200)"));
    good.insert("muted".into(), json!("okhsl(200 50% 60%)"));
    good.insert("border".into(), json!("#abc"));
    good.insert("thinkingMax".into(), json!(202));
    let good = json!({"$schema": "https://pi.dev/schemas/theme.schema.json", "name": "good-one",
        "appearance": "dark", "vars": {"base": "#445566"}, "colors": good});
    s.agent.write("themes/good-one.json", good.to_string()).expect("theme");
    set_setting(&s, "theme", json!("extra-key"));
    let mut pty = s.pi(50, 100);
    // Under the header: the file and why; then the error for the chosen theme, named by name.
    pty.wait_text("[Theme conflicts]");
    pty.wait_text("Fell back to the system theme.");
    let rows = pty.rows();
    let file = s.agent.path().join("themes/extra-key.json");
    let conflicts = row_of(&rows, "[Theme conflicts]");
    // The file as pi shows paths (the home folder, here the agent folder, as `~`).
    assert_eq!(rows[conflicts + 1].trim_end(), "  ~/themes/extra-key.json");
    assert_eq!(
        rows[conflicts + 2].trim_end(),
        format!("    Invalid theme \"{}\":", file.display())
    );
    let c = pty.contents();
    for line in [
        "  - /sparkle: schema is false",
        "  - /: must not have additional properties",
        "  - /colors/fooBar: schema is false",
        "  - /colors: must not have additional properties",
    ] {
        assert_eq!(c.matches(line).count(), 2, "{line:?}:\n{c}");
    }
    assert!(
        c.contains("Error: Failed to load theme \"extra-key\": Invalid theme \"extra-key\":"),
        "{c}"
    );
    // The theme list offers the good one only.
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    pty.type_text("theme");
    pty.wait_text("→ Theme");
    pty.send(ENTER);
    pty.wait_text("good-one");
    let rows = pty.rows();
    let list = &rows[row_of(&rows, "automatic")..row_of(&rows, "Enter to select")];
    assert!(list.iter().any(|r| r.contains("good-one")), "{}", rows.join("\n"));
    assert!(!list.iter().any(|r| r.contains("extra-key")), "{}", rows.join("\n"));
    pty.send(ESC);
    pty.wait_text("Type to search");
    close_menu(&mut pty);
    // Fixed and reloaded: the header no longer lists it.
    let fixed = json!({"name": "extra-key", "colors": full_colors("#112233")});
    s.agent
        .write("themes/extra-key.json", fixed.to_string())
        .expect("theme");
    pty.type_text("/reload");
    pty.send(ENTER);
    pty.wait_text("Reloaded");
    pty.wait_for("the section gone", Duration::from_secs(10), |c| {
        !c.contains("[Theme conflicts]")
    });
    quit(&mut pty);
}

#[test]
fn a_spinner_above_an_extension_editor_keeps_its_rows_until_clear_on_shrink_goes_off() {
    let test = "a_spinner_above_an_extension_editor_keeps_its_rows_until_clear_on_shrink_goes_off";
    let Some((node, modules)) = super::extensions::extension_env(test) else {
        return;
    };
    let s = setup(Script::sequential(vec![Turn::text("slow answer").with_delay_ms(1500)]));
    set_setting(&s, "tuiMode", json!("regular"));
    set_setting(&s, "terminal", json!({"clearOnShrink": true}));
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interactive/fixtures/editor.ts");
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let mut pty = Pty::spawn_env(
        &["-e", fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_text("MODE:insert");
    pty.type_text("go");
    pty.send(ENTER);
    // The extension's editor has no border to carry the spinner: it runs on rows of its own
    // above the editor, after a blank one.
    pty.wait_text("Working");
    let rows = pty.rows();
    let working = row_of(&rows, "Working");
    assert!(rows[working - 1].trim().is_empty(), "{}", rows.join("\n"));
    pty.wait_text("slow answer");
    pty.wait_for("the spinner gone", Duration::from_secs(10), |c| !c.contains("Working"));
    pty.wait_stable(Duration::from_millis(200));
    // Its two rows stay blank (the screen does not shrink): with the spacer above the
    // editor, three blank rows between the answer and the editor's top border.
    let gap = |pty: &Pty| {
        let rows = pty.rows();
        let answer = row_of(&rows, "slow answer");
        rows[answer + 1..].iter().take_while(|r| r.trim().is_empty()).count()
    };
    assert_eq!(gap(&pty), 3, "{}", pty.contents());
    // Clear on shrink off: the kept rows go at once.
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    pty.type_text("clear on");
    pty.wait_text("→ Clear on shrink");
    pty.send(ENTER);
    let settings = s.agent.path().join("settings.json");
    wait_json(&settings, |v| v["terminal"]["clearOnShrink"] == false);
    pty.send(ESC);
    pty.wait_for("the menu closed", Duration::from_secs(5), |c| {
        !c.contains("→ Clear on shrink")
    });
    pty.wait_stable(Duration::from_millis(200));
    assert_eq!(gap(&pty), 1, "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn leaving_fullscreen_after_a_regular_stint_draws_on_from_the_main_screen() {
    let s = setup(Script::echo());
    set_setting(&s, "tuiMode", json!("regular"));
    let mut pty = s.pi(30, 100);
    assert!(!pty.alternate_screen());
    pty.type_text("first");
    pty.send(ENTER);
    pty.wait_text("echo: first");
    settings_row(&mut pty, "tui mode", "TUI mode");
    pty.send(ENTER);
    wait_mode(&pty, true);
    close_menu(&mut pty);
    pty.type_text("second");
    pty.send(ENTER);
    pty.wait_text("echo: second");
    quit(&mut pty);
    // The exit transcript goes on from the frame regular mode left: each line once, the
    // menu gone, the resume hint under the footer.
    let history = pty.history();
    let count = |text: &str| history.iter().filter(|l| l.contains(text)).count();
    for line in [
        "echo: first",
        "echo: second",
        "Pi can explain its own features",
        "mock-model",
    ] {
        assert_eq!(count(line), 1, "{line}:\n{}", history.join("\n"));
    }
    assert_eq!(count("→ TUI mode"), 0, "{}", history.join("\n"));
    assert!(row_of(&history, "mock-model") < row_of(&history, "To resume this session"));
}

#[test]
fn tui_mode_stays_while_an_overlay_floats_over_the_screen() {
    let test = "tui_mode_stays_while_an_overlay_floats_over_the_screen";
    let Some((node, modules)) = super::extensions::extension_env(test) else {
        return;
    };
    let s = setup(Script::echo());
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interactive/fixtures/float.ts");
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let mut pty = Pty::spawn_env(
        &["-e", fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty.type_text("/float");
    pty.send(ENTER);
    pty.wait_text("FLOATING NOTE");
    settings_row(&mut pty, "tui mode", "TUI mode");
    pty.send(ENTER);
    // As pi 1.6: refused, the row keeps its value, nothing saved.
    pty.wait_text("Close active overlays before changing TUI mode");
    pty.wait_stable(Duration::from_millis(300));
    assert!(pty.alternate_screen());
    let rows = pty.rows();
    assert!(
        rows[row_of(&rows, "→ TUI mode")].trim_end().ends_with("fullscreen"),
        "{}",
        rows.join("\n")
    );
    let settings = std::fs::read_to_string(s.agent.path().join("settings.json")).unwrap_or_default();
    assert!(!settings.contains("tuiMode"), "{settings}");
    close_menu(&mut pty);
    quit(&mut pty);
}
