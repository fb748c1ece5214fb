//! pi 1.6's `/settings` rows in a pseudo-terminal: their order, and each new row changing
//! the running UI and settings.json as 1.6 writes it.

use std::time::Duration;

use pi_test_support::{Script, Turn, UsageSpec};

use super::pty::Pty;
use super::{quit, select_row, setup, wait_json, DOWN, ENTER, ESC};

const CTRL_U: &str = "\x15";

/// Search for `query` and wait until `label` is the highlighted row.
fn find_row(pty: &mut Pty, query: &str, label: &str) {
    pty.type_text(query);
    pty.wait_text(&format!("→ {label}"));
}

/// Clear the search line (`n` characters).
fn clear_search(pty: &mut Pty, n: usize) {
    pty.send(&"\x7f".repeat(n));
    pty.wait_text("→ Auto-compact");
}

/// The highlighted row `label` shows `value`.
fn wait_value(pty: &Pty, label: &str, value: &str) {
    pty.wait_for(&format!("{label} = {value}"), Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.contains(&format!("→ {label}")) && l.trim_end().ends_with(value))
    });
}

#[test]
fn settings_has_pi_16s_rows_and_each_new_one_is_saved_and_applied() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 100);
    pty.type_text("pad me");
    pty.send(ENTER);
    pty.wait_text("echo: pad me");
    // One column before messages by default.
    assert!(
        pty.rows().iter().any(|r| r.starts_with(" echo: pad me")),
        "{}",
        pty.contents()
    );

    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    // 33 rows without image support (the old "Thinking level" row is gone).
    pty.wait_text("(1/33)");
    for (i, label) in [
        "Auto-resize images",
        "Block images",
        "Skill commands",
        "Show hardware cursor",
        "Editor padding",
        "Output padding",
        "Autocomplete max items",
    ]
    .into_iter()
    .enumerate()
    {
        pty.send(DOWN);
        pty.wait_text(&format!("→ {label}"));
        pty.wait_text(&format!("({}/33)", i + 2));
    }
    assert!(!pty.contents().contains("Thinking level "), "{}", pty.contents());
    pty.send(&"\x1b[A".repeat(7));
    pty.wait_text("→ Auto-compact");

    // Output padding: the transcript is drawn again without the column.
    find_row(&mut pty, "output pad", "Output padding");
    pty.send(ENTER);
    wait_value(&pty, "Output padding", "0");
    clear_search(&mut pty, 10);

    find_row(&mut pty, "share dest", "Session share destination");
    pty.send(ENTER);
    wait_value(&pty, "Session share destination", "gist");
    clear_search(&mut pty, 10);

    // 5 min is the default; the next choice turns it off, with 1.6's status line.
    find_row(&mut pty, "http idle", "HTTP idle timeout");
    wait_value(&pty, "HTTP idle timeout", "5 min");
    pty.send(ENTER);
    wait_value(&pty, "HTTP idle timeout", "disabled");
    pty.wait_text("HTTP idle timeout: disabled");
    clear_search(&mut pty, 9);

    find_row(&mut pty, "mermaid", "Mermaid diagrams");
    wait_value(&pty, "Mermaid diagrams", "streaming");
    pty.send(ENTER);
    wait_value(&pty, "Mermaid diagrams", "off");
    clear_search(&mut pty, 7);

    find_row(&mut pty, "cache miss", "Cache miss notices");
    pty.send(ENTER);
    wait_value(&pty, "Cache miss notices", "true");
    clear_search(&mut pty, 10);

    // false → true → header, as 1.6 cycles them.
    find_row(&mut pty, "quiet start", "Quiet startup");
    pty.send(ENTER);
    wait_value(&pty, "Quiet startup", "true");
    pty.send(ENTER);
    wait_value(&pty, "Quiet startup", "header");
    clear_search(&mut pty, 11);

    find_row(&mut pty, "project trust", "Default project trust");
    wait_value(&pty, "Default project trust", "Ask");
    pty.send(ENTER);
    wait_value(&pty, "Default project trust", "Always trust");
    clear_search(&mut pty, 13);

    // Per model: pick mock-thinker, then `low`; the list comes back with it marked.
    find_row(&mut pty, "per model", "Default thinking level per model");
    wait_value(&pty, "Default thinking level per model", "none");
    pty.send(ENTER);
    pty.wait_text("Step 1/2 · Select a model to configure");
    // The current model comes first.
    pty.wait_text("→ mock-model [mock-openai]");
    select_row(&mut pty, "mock-thinker [mock-openai]");
    pty.send(ENTER);
    pty.wait_text("Thinking Level for mock-thinker [mock-openai]");
    pty.wait_text("Step 2/2");
    pty.send(DOWN);
    pty.send(DOWN);
    pty.wait_text("→   low");
    pty.send(ENTER);
    pty.wait_text("Step 1/2 · Select a model to configure");
    // Back on the current model, the configured one showing its level.
    pty.wait_text("→ mock-model [mock-openai]");
    pty.wait_for("level shown", Duration::from_secs(5), |c| {
        c.lines()
            .any(|l| l.starts_with("  mock-thinker [mock-openai]") && l.trim_end().ends_with("low"))
    });
    pty.send(ESC);
    wait_value(&pty, "Default thinking level per model", "1 configured");
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));

    let settings = wait_json(&s.agent.path().join("settings.json"), |v| {
        v["modelThinkingLevels"]["mock-openai/mock-thinker"] == "low"
    });
    assert_eq!(settings["outputPad"], 0);
    assert_eq!(settings["sessionShareDestination"], "gist");
    assert_eq!(settings["httpIdleTimeoutMs"], 0);
    assert_eq!(settings["markdown"]["mermaid"], "off");
    assert_eq!(settings["showCacheMissNotices"], true);
    assert_eq!(settings["quietStartup"], "header");
    assert_eq!(settings["defaultProjectTrust"], "always");
    assert_eq!(settings["modelThinkingLevels"]["mock-openai/mock-thinker"], "low");
    // The transcript lost its column.
    pty.wait_for("unpadded transcript", Duration::from_secs(5), |c| {
        c.lines().any(|l| l.starts_with("echo: pad me"))
    });
    quit(&mut pty);
}

/// The colour of the first cell of the row that starts with `start` (trimmed), if shown.
fn colour_of_row(pty: &Pty, start: &str) -> Option<vt100::Color> {
    let row = pty.rows().iter().position(|r| r.trim_start().starts_with(start))?;
    let col = pty.rows()[row].find(|c: char| !c.is_whitespace())?;
    pty.fg_at(u16::try_from(row).ok()?, u16::try_from(col).ok()?)
}

/// Wait until the row starting with `start` is drawn in a colour `ok` accepts; that colour.
fn wait_colour(pty: &Pty, start: &str, what: &str, ok: impl Fn(vt100::Color) -> bool) -> vt100::Color {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(c) = colour_of_row(pty, start).filter(|c| ok(*c)) {
            return c;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: {start} is {:?}\n{}",
            colour_of_row(pty, start),
            pty.contents()
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

#[test]
fn theme_submenu_previews_offers_automatic_mode_and_saves_a_light_dark_pair() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    find_row(&mut pty, "theme", "Theme");
    wait_value(&pty, "Theme", "system");
    // The row in the system theme's accent (no colours reported: a palette index).
    let system = wait_colour(&pty, "→ Theme", "system accent", |_| true);
    pty.send(ENTER);
    // Title, description, `system` first with a tick, then `automatic`, then the rest.
    pty.wait_text("Pick a theme, or automatic");
    pty.wait_text("→ ✓ system");
    let rows = pty.rows();
    let at = |label: &str| rows.iter().position(|r| r.contains(label)).unwrap_or(usize::MAX);
    assert!(rows.iter().any(|r| r.starts_with("Theme")), "{}", pty.contents());
    assert!(at("✓ system") < at("  automatic"), "{}", pty.contents());
    assert!(
        at("  automatic") < at("  dark") && at("  dark") < at("  light"),
        "{}",
        pty.contents()
    );
    assert!(pty.contents().contains("Made from the colours your terminal reports"));
    assert!(pty.contents().contains("  Enter to select · Esc to go back"));
    // Moving previews: the title takes the dark theme's accent.
    pty.send(DOWN);
    pty.send(DOWN);
    pty.wait_text("→   dark");
    let dark = wait_colour(&pty, "Theme", "dark preview", |c| c != system);
    // Escape puts the system theme back and saves nothing.
    pty.send(ESC);
    wait_value(&pty, "Theme", "system");
    wait_colour(&pty, "→ Theme", "restored", |c| c == system);

    // Automatic: the light half `light`, the dark half `dark`, then Apply.
    pty.send(ENTER);
    pty.wait_text("→ ✓ system");
    pty.send(DOWN);
    pty.wait_text("→   automatic");
    pty.send(ENTER);
    pty.wait_text("Automatic Theme");
    wait_value(&pty, "Light theme", "system");
    pty.send(ENTER);
    pty.wait_text("Light Theme");
    pty.send(DOWN);
    pty.send(DOWN);
    pty.wait_text("→   light");
    pty.send(ENTER);
    wait_value(&pty, "Light theme", "light");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Dark Theme");
    pty.send(DOWN);
    pty.wait_text("→   dark");
    pty.send(ENTER);
    wait_value(&pty, "Dark theme", "dark");
    pty.send(DOWN);
    wait_value(&pty, "Apply", "save and go back");
    pty.send(ENTER);
    wait_value(&pty, "Theme", "light/dark");
    let settings = wait_json(&s.agent.path().join("settings.json"), |v| v["theme"] == "light/dark");
    assert_eq!(settings["theme"], "light/dark");
    // Nothing says the terminal is light: the dark half is shown.
    wait_colour(&pty, "→ Theme", "dark half", |c| c == dark);
    // Opened again, the pair opens automatic mode; Change mode goes back to one theme,
    // starting on the half shown now.
    pty.send(ENTER);
    wait_value(&pty, "Light theme", "light");
    pty.send("\x1b[A");
    wait_value(&pty, "Change mode", "switch to single theme");
    pty.send(ENTER);
    pty.wait_text("→ ✓ dark");
    pty.send(ESC);
    wait_value(&pty, "Theme", "light/dark");
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));
    quit(&mut pty);
}

#[test]
fn a_light_dark_pair_follows_the_terminal_appearance() {
    let s = setup(Script::echo());
    s.agent
        .write("settings.json", r#"{"theme": "light/dark"}"#)
        .expect("settings");
    let pty = Pty::spawn(&[], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("mock-model");
    let mut pty = pty;
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    find_row(&mut pty, "theme", "Theme");
    wait_value(&pty, "Theme", "light/dark");
    let dark = wait_colour(&pty, "→ Theme", "dark", |_| true);
    // The terminal says it turned light (mode 2031 report): the light half is shown.
    pty.send("\x1b[?997;2n");
    let light = wait_colour(&pty, "→ Theme", "light half", |c| c != dark);
    // And dark again.
    pty.send("\x1b[?997;1n");
    wait_colour(&pty, "→ Theme", "dark half again", |c| c == dark);
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));
    quit(&mut pty);
    // A light terminal by `COLORFGBG` starts on the light half.
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("COLORFGBG", "0;15")]);
    pty.wait_text("mock-model");
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    find_row(&mut pty, "theme", "Theme");
    wait_colour(&pty, "→ Theme", "light by COLORFGBG", |c| c == light);
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));
    quit(&mut pty);
}

#[test]
fn an_unknown_theme_falls_back_to_system_with_pi_16s_error() {
    let s = setup(Script::echo());
    s.agent
        .write("settings.json", r#"{"theme": "nosuch"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    pty.wait_text("Error: Failed to load theme \"nosuch\": Theme not found: nosuch");
    pty.wait_text("Fell back to the system theme.");
    // The row shows the setting; the submenu ticks the theme in use.
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    find_row(&mut pty, "theme", "Theme");
    wait_value(&pty, "Theme", "nosuch");
    pty.send(ENTER);
    pty.wait_text("→ ✓ system");
    pty.send(ESC);
    wait_value(&pty, "Theme", "nosuch");
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));
    quit(&mut pty);
}

#[test]
fn cache_miss_notices_come_and_go_as_the_row_changes() {
    let usage = |input, cache_read| UsageSpec {
        input: Some(input),
        output: Some(5),
        cache_read: Some(cache_read),
        cache_write: None,
    };
    let s = setup(Script::queue(vec![
        Turn::text("one").with_usage(usage(30_000, 0)),
        Turn::text("two").with_usage(usage(1_000, 30_000)),
        Turn::text("three").with_usage(usage(31_000, 0)),
    ]));
    let mut pty = s.pi(30, 100);
    for (ask, answer) in [("a", "one"), ("b", "two"), ("c", "three")] {
        pty.type_text(ask);
        pty.send(ENTER);
        pty.wait_text(answer);
    }
    // Off by default.
    assert!(!pty.contents().contains("Cache miss"), "{}", pty.contents());
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    find_row(&mut pty, "cache miss", "Cache miss notices");
    pty.send(ENTER);
    wait_value(&pty, "Cache miss notices", "true");
    // The transcript is built again with the line, as pi 1.6 rebuilds it.
    pty.wait_text("Cache miss: 31k tokens re-billed");
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    find_row(&mut pty, "cache miss", "Cache miss notices");
    pty.send(ENTER);
    wait_value(&pty, "Cache miss notices", "false");
    pty.send(ESC);
    pty.wait_for("line gone", Duration::from_secs(5), |c| !c.contains("Cache miss"));
    quit(&mut pty);
}

#[test]
fn terminal_progress_shows_in_the_tab_bar_during_a_run_once_turned_on() {
    const ON: &str = "\x1b]9;4;3\x07";
    const OFF: &str = "\x1b]9;4;0\x07";
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("first");
    pty.send(ENTER);
    pty.wait_text("echo: first");
    // Off by default: no progress reports.
    assert!(!String::from_utf8_lossy(&pty.raw()).contains(ON));
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    find_row(&mut pty, "terminal prog", "Terminal progress");
    pty.send(ENTER);
    wait_value(&pty, "Terminal progress", "true");
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));
    let before = pty.raw().len();
    pty.type_text("second");
    pty.send(ENTER);
    pty.wait_text("echo: second");
    // On while the run goes, off once it ended.
    pty.wait_for("progress off", Duration::from_secs(5), |_| {
        let raw = pty.raw();
        let after = String::from_utf8_lossy(&raw[before..]).to_string();
        after.find(ON).is_some_and(|on| after[on..].contains(OFF))
    });
    let settings = wait_json(&s.agent.path().join("settings.json"), |v| {
        v["terminal"]["showTerminalProgress"] == true
    });
    assert_eq!(settings["terminal"]["showTerminalProgress"], true);
    quit(&mut pty);
}

#[test]
fn clear_on_shrink_clears_the_screen_once_the_row_is_on_and_output_gets_shorter() {
    const CLEAR: &str = "\x1b[2J\x1b[H\x1b[3J";
    let s = setup(Script::echo());
    // The inline renderer's setting (fullscreen redraws its own screen).
    let mut pty = Pty::spawn(&["--tui-mode", "regular"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("mock-model");
    pty.type_text("first");
    pty.send(ENTER);
    pty.wait_text("echo: first");
    // Off by default: closing the (taller) menu only blanks the rows it left.
    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    let before = pty.raw().len();
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));
    assert!(!String::from_utf8_lossy(&pty.raw()[before..]).contains(CLEAR));

    pty.type_text("/settings");
    pty.send(ENTER);
    pty.wait_text("→ Auto-compact");
    find_row(&mut pty, "clear on", "Clear on shrink");
    pty.send(ENTER);
    wait_value(&pty, "Clear on shrink", "true");
    let before = pty.raw().len();
    pty.send(ESC);
    pty.wait_for("screen cleared", Duration::from_secs(5), |_| {
        String::from_utf8_lossy(&pty.raw()[before..]).contains(CLEAR)
    });
    // The transcript is drawn again after the clear.
    pty.wait_text("echo: first");
    let settings = wait_json(&s.agent.path().join("settings.json"), |v| {
        v["terminal"]["clearOnShrink"] == true
    });
    assert_eq!(settings["terminal"]["clearOnShrink"], true);
    quit(&mut pty);
}

#[test]
fn skill_commands_leave_and_rejoin_the_slash_menu_as_the_row_changes() {
    let s = setup(Script::echo());
    let agent = s.agent.path();
    std::fs::create_dir_all(agent.join("skills/demo")).expect("mkdir");
    std::fs::write(
        agent.join("skills/demo/SKILL.md"),
        "---\nname: demo\ndescription: A demo skill\n---\nDo the demo.\n",
    )
    .expect("write");
    let mut pty = s.pi(30, 100);
    let toggle = |pty: &mut Pty, value: &str| {
        pty.type_text("/settings");
        pty.send(ENTER);
        pty.wait_text("→ Auto-compact");
        find_row(pty, "skill com", "Skill commands");
        pty.send(ENTER);
        wait_value(pty, "Skill commands", value);
        pty.send(ESC);
        pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("Type to search"));
    };
    pty.type_text("/ski");
    pty.wait_text("[u] A demo skill");
    pty.send(ESC);
    pty.wait_for("menu closed", Duration::from_secs(5), |c| !c.contains("A demo skill"));
    pty.send(CTRL_U);

    toggle(&mut pty, "false");
    pty.type_text("/ski");
    pty.wait_for("editor shows /ski", Duration::from_secs(5), |c| c.contains("/ski"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pty.contents().contains("A demo skill"), "{}", pty.contents());
    // Typed out in full it still runs, as in pi 1.6: the skill's text goes to the model.
    pty.type_text("ll:demo go");
    pty.send(ENTER);
    pty.wait_text("Do the demo.");
    let settings = wait_json(&s.agent.path().join("settings.json"), |v| {
        v["enableSkillCommands"] == false
    });
    assert_eq!(settings["enableSkillCommands"], false);

    toggle(&mut pty, "true");
    pty.type_text("/ski");
    pty.wait_text("[u] A demo skill");
    pty.send(CTRL_U);
    quit(&mut pty);
}
