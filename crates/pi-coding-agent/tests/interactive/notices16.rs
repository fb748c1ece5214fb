//! pi 1.6's optional transcript notices and quiet startup: `showCacheMissNotices` names a
//! reply whose prompt was billed again instead of read from the cache (live, and again when
//! the transcript is rebuilt on resume); `quietStartup: "header"` keeps the header without
//! the loaded resources, `true` shows nothing above the transcript.

use pi_test_support::{Script, Turn, UsageSpec};

use super::pty::Pty;
use super::{quit, set_setting, setup, ENTER};

fn usage(input: u64, cache_read: u64) -> UsageSpec {
    UsageSpec {
        input: Some(input),
        output: Some(5),
        cache_read: Some(cache_read),
        cache_write: None,
    }
}

#[test]
fn cache_miss_notices_show_live_and_after_a_resume() {
    let s = setup(Script::queue(vec![
        Turn::text("one").with_usage(usage(30_000, 0)),
        Turn::text("two").with_usage(usage(1_000, 30_000)),
        Turn::text("three").with_usage(usage(31_000, 0)),
    ]));
    set_setting(&s, "showCacheMissNotices", serde_json::json!(true));
    let mut pty = s.pi(30, 100);
    for (ask, answer) in [("a", "one"), ("b", "two"), ("c", "three")] {
        pty.type_text(ask);
        pty.send(ENTER);
        pty.wait_text(answer);
    }
    pty.wait_text("Cache miss: 31k tokens re-billed");
    // Only the third reply missed: the second read its prompt from the cache.
    assert_eq!(pty.contents().matches("Cache miss").count(), 1, "{}", pty.contents());
    quit(&mut pty);
    let mut pty = Pty::spawn(&["-c"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("Cache miss: 31k tokens re-billed");
    quit(&mut pty);
    // Off (the default): nothing.
    set_setting(&s, "showCacheMissNotices", serde_json::json!(false));
    let mut pty = Pty::spawn(&["-c"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("three");
    assert!(!pty.contents().contains("Cache miss"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn quiet_startup_header_keeps_only_the_header() {
    let s = setup(Script::echo());
    std::fs::write(s.cwd.path().join("AGENTS.md"), "be brief").unwrap();
    set_setting(&s, "quietStartup", serde_json::json!("header"));
    let mut pty = s.pi(30, 100);
    pty.wait_text("Press ctrl+o to show full startup help.");
    assert!(!pty.contents().contains("and loaded resources"), "{}", pty.contents());
    // The full help lists the keys but not the loaded context files.
    pty.send("\x0f");
    pty.wait_text("to expand tools");
    assert!(!pty.contents().contains("AGENTS.md"), "{}", pty.contents());
    quit(&mut pty);
    set_setting(&s, "quietStartup", serde_json::json!(true));
    let mut pty = s.pi(30, 100);
    assert!(!pty.contents().contains("escape interrupt"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn compaction_shows_its_summary_panel_and_cost() {
    let s = setup(Script::queue(vec![
        Turn::text("one"),
        Turn::text("two"),
        Turn::text("The user asked twice; both were answered.").with_usage(usage(12_000, 0)),
    ]));
    set_setting(&s, "showCacheMissNotices", serde_json::json!(true));
    set_setting(&s, "compaction", serde_json::json!({"keepRecentTokens": 1}));
    let mut pty = s.pi(30, 100);
    for (ask, answer) in [("a", "one"), ("b", "two")] {
        pty.type_text(ask);
        pty.send(ENTER);
        pty.wait_text(answer);
    }
    pty.type_text("/compact");
    pty.send(ENTER);
    pty.wait_text("[compaction]");
    pty.wait_text("(ctrl+o to expand)");
    assert!(pty.contents().contains("Compacted from "), "{}", pty.contents());
    pty.wait_text("Compaction: 12k tokens billed");
    // Ctrl+O shows the summary itself.
    pty.send("\x0f");
    pty.wait_text("The user asked twice; both were answered.");
    quit(&mut pty);
    // A resumed session draws the panel from the transcript.
    let mut pty = Pty::spawn(&["-c"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("[compaction]");
    quit(&mut pty);
}

#[test]
fn scoped_models_are_named_under_the_header() {
    let s = setup(Script::echo());
    let mut pty = Pty::spawn(
        &["--models", "mock-openai/mock-model,mock-openai/mock-thinker:high"],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
    );
    pty.wait_text("Model scope: mock-model, mock-thinker:high (Ctrl+P to cycle)");
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let at = rows
        .iter()
        .position(|r| r.starts_with(" Model scope:"))
        .expect("notice");
    assert!(
        rows[at - 2].starts_with(" Pi can explain its own features"),
        "{}",
        pty.contents()
    );
    quit(&mut pty);
}
