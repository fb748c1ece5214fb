//! pi 1.6's `/settings` rows in a pseudo-terminal: their order, and each new row changing
//! the running UI and settings.json as 1.6 writes it.

use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, select_row, setup, wait_json, DOWN, ENTER, ESC};

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
