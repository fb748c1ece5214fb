//! pi 1.6's optional transcript notices and quiet startup: `showCacheMissNotices` names a
//! reply whose prompt was billed again instead of read from the cache (live, and again when
//! the transcript is rebuilt on resume); `quietStartup: "header"` keeps the header without
//! the loaded resources, `true` shows nothing above the transcript. Also the reasoning a
//! provider reports it dropped, the cache-warming line, and where regular mode puts the
//! model-scope line.

use std::time::Duration;

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

#[test]
fn regular_mode_prints_the_model_scope_above_the_screen() {
    let s = setup(Script::echo());
    let mut pty = Pty::spawn(
        &[
            "--tui-mode",
            "regular",
            "--models",
            "mock-openai/mock-model,mock-openai/mock-thinker:high",
        ],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
    );
    pty.wait_text("Model scope: mock-model, mock-thinker:high (Ctrl+P to cycle)");
    pty.wait_text("Pi can explain its own features");
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    // As pi 1.6: the first line, unpadded, before the header; the header no longer has it.
    assert!(rows[0].starts_with("Model scope: mock-model"), "{}", pty.contents());
    assert_eq!(pty.contents().matches("Model scope:").count(), 1, "{}", pty.contents());
    quit(&mut pty);
}

/// One reply's `input_transformations`: `n` thinking blocks Anthropic dropped.
fn dropped_thinking(n: usize) -> serde_json::Value {
    serde_json::Value::Array(
        (0..n)
            .map(|i| serde_json::json!({"type": "thinking_dropped", "path": format!("messages.{i}"), "reason": "invalid_signature"}))
            .collect(),
    )
}

#[test]
fn dropped_thinking_is_named_when_a_reply_reports_new_losses() {
    let s = setup(Script::queue(vec![
        Turn::text("one").with_input_transformations(dropped_thinking(1)),
        // The same block reported again by the next request: not news.
        Turn::text("two").with_input_transformations(dropped_thinking(1)),
        Turn::text("three").with_input_transformations(dropped_thinking(2)),
    ]));
    set_setting(&s, "showCacheMissNotices", serde_json::json!(true));
    let mut pty = Pty::spawn(
        &["--model", "mock-anthropic/mock-model"],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
    );
    pty.wait_text("mock-model");
    pty.type_text("a");
    pty.send(ENTER);
    pty.wait_text("Anthropic dropped 1 thinking block: invalid_signature (details in session)");
    for (ask, answer) in [("b", "two"), ("c", "three")] {
        pty.type_text(ask);
        pty.send(ENTER);
        pty.wait_text(answer);
    }
    pty.wait_text("Anthropic dropped 2 thinking blocks: invalid_signature (details in session)");
    assert_eq!(
        pty.contents().matches("Anthropic dropped").count(),
        2,
        "{}",
        pty.contents()
    );
    // The diagnostic is kept with the reply in the session.
    let session = std::fs::read_dir(s.agent.path().join("sessions"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| std::fs::read_to_string(f.path()).unwrap())
        .next()
        .expect("a session file");
    assert!(session.contains("anthropic_input_transformations"), "{session}");
    quit(&mut pty);
    // Live only, as in pi 1.6: a resumed transcript does not repeat it.
    let mut pty = Pty::spawn(&["-c"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("three");
    assert!(!pty.contents().contains("Anthropic dropped"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn cache_warms_show_as_one_growing_line_and_again_after_a_resume() {
    let s = setup(Script::echo());
    // A cache that lives 11 s (a refresh is due 1 s after each request), with writes dear
    // enough that warming pays while idle.
    let models = serde_json::json!({"providers": {"mock-anthropic": {
        "baseUrl": s.server.base_url_for(pi_test_support::Api::Anthropic),
        "api": "anthropic-messages",
        "apiKey": "sk-ant-mock",
        "models": [{"id": "mock-cached", "name": "Mock Cached", "reasoning": false, "input": ["text"],
                    "cost": {"input": 1000, "output": 0, "cacheRead": 0, "cacheWrite": 1000},
                    "promptCache": {"short": 11},
                    "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    s.agent.write("models.json", models.to_string()).unwrap();
    set_setting(&s, "showCacheMissNotices", serde_json::json!(true));
    let mut pty = Pty::spawn(&[], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("mock-cached");
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("Cache warmed: $");
    let first = pty.contents();
    // Later warms add to the same line instead of adding lines.
    pty.wait_for("a second warm", Duration::from_secs(20), |c| {
        c.contains("Cache warmed: $") && c != first && s.server.requests().len() >= 3
    });
    pty.wait_for("the line's total", Duration::from_secs(5), |c| {
        c.matches("Cache warmed").count() == 1
    });
    quit(&mut pty);
    // Rebuilt from the stored usage entries.
    let mut pty = Pty::spawn(&["-c"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("Cache warmed: $");
    assert_eq!(pty.contents().matches("Cache warmed").count(), 1, "{}", pty.contents());
    quit(&mut pty);
}

/// The token count after `↑` in the footer row (`↑60k ↓10 $0.060 …`), in tokens.
fn footer_input(contents: &str) -> Option<u64> {
    let at = contents.rfind('↑')?;
    let word: String = contents[at + '↑'.len_utf8()..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    let (num, scale) = match word.strip_suffix('k') {
        Some(n) => (n, 1_000.0),
        None => (word.as_str(), 1.0),
    };
    num.parse::<f64>().ok().map(|n| (n * scale) as u64)
}

#[test]
fn a_cache_warm_adds_its_usage_to_the_footer_totals_at_once() {
    // Every request (the reply, then each refresh) reports 30k input tokens.
    let turns = (0..6).map(|_| Turn::text("one").with_usage(usage(30_000, 0))).collect();
    let s = setup(Script::queue(turns));
    let models = serde_json::json!({"providers": {"mock-anthropic": {
        "baseUrl": s.server.base_url_for(pi_test_support::Api::Anthropic),
        "api": "anthropic-messages",
        "apiKey": "sk-ant-mock",
        "models": [{"id": "mock-cached", "name": "Mock Cached", "reasoning": false, "input": ["text"],
                    "cost": {"input": 1000, "output": 0, "cacheRead": 0, "cacheWrite": 1000},
                    "promptCache": {"short": 11},
                    "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    s.agent.write("models.json", models.to_string()).unwrap();
    // Notices off (the default): the footer still counts what the refresh cost.
    let mut pty = Pty::spawn(&[], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("mock-cached");
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("one");
    pty.wait_for("the reply's usage", Duration::from_secs(10), |c| {
        footer_input(c).is_some()
    });
    pty.wait_for("a refresh", Duration::from_secs(20), |_| s.server.requests().len() >= 2);
    // No key is pressed and no reply comes: the warm alone brings the footer up to date.
    pty.wait_for("the refresh counted", Duration::from_secs(5), |c| {
        footer_input(c).is_some_and(|n| n >= 60_000)
    });
    assert!(!pty.contents().contains("Cache warmed"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn compact_export_fork_and_clone_on_an_empty_session_say_what_pi_says() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("/compact");
    pty.send(ENTER);
    pty.wait_text("Error: Compaction failed: Nothing to compact (session too small)");
    pty.type_text("/export");
    pty.send(ENTER);
    pty.wait_text("Error: Failed to export session: Nothing to export yet - start a conversation first");
    // The compaction failure is said once.
    assert_eq!(
        pty.contents().matches("Nothing to compact").count(),
        1,
        "{}",
        pty.contents()
    );
    pty.type_text("/fork");
    pty.send(ENTER);
    pty.wait_text("No messages to fork from");
    pty.type_text("/clone");
    pty.send(ENTER);
    pty.wait_text("Error: This session has not been saved yet. Send a message before cloning or forking it.");
    // `/session` before any cost: an empty row under the block, as in pi 1.6.
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_text("Status: Inactive");
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim().to_string()).collect();
    let at = rows
        .iter()
        .position(|r| r.starts_with("Status: Inactive"))
        .expect("status row");
    assert!(
        rows[at + 1].replace('\u{a0}', "").is_empty() && rows[at + 2].replace('\u{a0}', "").is_empty(),
        "{}",
        pty.contents()
    );
    quit(&mut pty);
}

/// A `tmux` on PATH that answers `show -gv extended-keys` with `keys` and
/// `extended-keys-format` with `format`.
fn fake_tmux(dir: &std::path::Path, keys: &str, format: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("tmux");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncase \"$3\" in\n  extended-keys) echo {keys} ;;\n  extended-keys-format) echo {format} ;;\n  *) exit 1 ;;\nesac\n"),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default())
}

#[test]
fn inside_tmux_modified_keys_left_off_are_warned_about() {
    let s = setup(Script::echo());
    let bin = tempfile::tempdir().unwrap();
    let path = fake_tmux(bin.path(), "off", "csi-u");
    let env = [("TMUX", "/tmp/tmux-0/default,1,0"), ("PATH", path.as_str())];
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &env);
    pty.wait_text("Warning: tmux extended-keys is off. Modified Enter keys may not work.");
    quit(&mut pty);
    let path = fake_tmux(bin.path(), "on", "xterm");
    let env = [("TMUX", "/tmp/tmux-0/default,1,0"), ("PATH", path.as_str())];
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &env);
    pty.wait_text("Warning: tmux extended-keys-format is xterm. Pi works best with csi-u.");
    quit(&mut pty);
    // Set up well, or outside tmux: nothing.
    let path = fake_tmux(bin.path(), "on", "csi-u");
    let env = [("TMUX", "/tmp/tmux-0/default,1,0"), ("PATH", path.as_str())];
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &env);
    pty.wait_text("mock-model");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!pty.contents().contains("tmux extended-keys"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn notices_wrap_one_column_before_the_right_edge() {
    let s = setup(Script::echo());
    let bin = tempfile::tempdir().unwrap();
    let path = fake_tmux(bin.path(), "off", "csi-u");
    let env = [("TMUX", "/tmp/tmux-0/default,1,0"), ("PATH", path.as_str())];
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &env);
    pty.wait_text("to ~/.tmux.conf and restart tmux.");
    // The first line is 99 columns with its last word: as in pi 1.6 that word goes down.
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let at = rows
        .iter()
        .position(|r| r.starts_with(" Warning: tmux"))
        .expect("warning");
    assert!(rows[at].ends_with("`set -g extended-keys"), "{}", pty.contents());
    assert!(rows[at + 1].starts_with(" on`"), "{}", pty.contents());
    quit(&mut pty);
}
