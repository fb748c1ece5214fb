//! Warnings pi 1.6 shows in the chat at startup: a missing ripgrep when offline, and an
//! Anthropic model reached through a Claude subscription (also after a model switch or a
//! sign-in, once a run).

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup, DOWN, ENTER};

#[test]
fn offline_without_ripgrep_the_chat_says_so() {
    let s = setup(Script::echo());
    // A managed-binaries folder holding fd only, and a PATH without rg.
    let bin = s.agent.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("fd"), "").unwrap();
    // The harness starts pi through `setsid`, found on this PATH: it is the only thing there.
    let only_setsid = tempfile::tempdir().unwrap();
    let setsid = ["/usr/bin/setsid", "/bin/setsid"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("setsid");
    std::os::unix::fs::symlink(setsid, only_setsid.path().join("setsid")).unwrap();
    let path = only_setsid.path().display().to_string();
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("PATH", &path)]);
    pty.wait_text("Warning: ripgrep not found. Offline mode enabled, skipping download.");
    assert!(!pty.contents().contains("fd not found"), "{}", pty.contents());
    quit(&mut pty);

    // With rg in the managed folder: no warning.
    std::fs::write(bin.join("rg"), "").unwrap();
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("PATH", &path)]);
    pty.wait_text("mock-model");
    assert!(!pty.contents().contains("not found"), "{}", pty.contents());
    quit(&mut pty);
}

#[test]
fn the_ripgrep_warning_comes_before_whats_new() {
    let s = setup(Script::echo());
    // An update since 1.5, told in one line.
    super::set_setting(&s, "lastChangelogVersion", serde_json::json!("1.5.0"));
    super::set_setting(&s, "collapseChangelog", serde_json::json!(true));
    let bin = s.agent.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("fd"), "").unwrap();
    let only_setsid = tempfile::tempdir().unwrap();
    let setsid = ["/usr/bin/setsid", "/bin/setsid"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("setsid");
    std::os::unix::fs::symlink(setsid, only_setsid.path().join("setsid")).unwrap();
    let path = only_setsid.path().display().to_string();
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("PATH", &path)]);
    pty.wait_text("Updated to v");
    pty.wait_text("ripgrep not found");
    let c = pty.contents();
    assert!(c.find("ripgrep not found") < c.find("Updated to v"), "{c}");
    quit(&mut pty);
}

/// An agent folder whose default model is Anthropic's, with `key` stored for it.
fn anthropic_agent(key: &str, warn: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let auth = serde_json::json!({"anthropic": {"type": "api_key", "key": key}});
    std::fs::write(dir.path().join("auth.json"), auth.to_string()).unwrap();
    let settings = serde_json::json!({
        "defaultProvider": "anthropic",
        "defaultModel": "claude-sonnet-4-5",
        "warnings": {"anthropicExtraUsage": warn},
    });
    std::fs::write(dir.path().join("settings.json"), settings.to_string()).unwrap();
    dir
}

#[test]
fn a_claude_subscription_token_is_warned_about_unless_turned_off() {
    let cwd = tempfile::tempdir().unwrap();
    let agent = anthropic_agent("sk-ant-oat01-test", true);
    let mut pty = Pty::spawn(&[], cwd.path(), agent.path(), 30, 100);
    pty.wait_text("Anthropic subscription auth is active.");
    assert!(
        pty.contents().contains("Disable this warning in /settings."),
        "{}",
        pty.contents()
    );
    quit(&mut pty);

    // Off in the settings, or an ordinary API key: no warning.
    for (key, warn) in [("sk-ant-oat01-test", false), ("sk-ant-api03-test", true)] {
        let agent = anthropic_agent(key, warn);
        let mut pty = Pty::spawn(&[], cwd.path(), agent.path(), 30, 100);
        pty.wait_text("claude-sonnet-4-5");
        assert!(!pty.contents().contains("subscription"), "{}", pty.contents());
        quit(&mut pty);
    }
}

#[test]
fn without_any_model_the_chat_warns_and_the_footer_reads_zero_percent() {
    let cwd = tempfile::tempdir().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let mut pty = Pty::spawn_env(&[], cwd.path(), agent.path(), 30, 100, &[("PI_OFFLINE", "1")]);
    pty.wait_text("No models available");
    // pi 1.6 shows 0.0% when there is no model to measure against; `?` is only for a
    // context whose size is not known yet.
    pty.wait_text("0.0%/0 (auto)");
    // The model slot names pi 1.6's placeholder model, `unknown`, at the line's right end.
    let rows = pty.rows();
    let footer = rows.iter().find(|r| r.contains("0.0%/0 (auto)")).unwrap();
    assert!(footer.trim_end().ends_with(" unknown"), "{footer:?}");
    assert!(!pty.contents().contains("no-model"), "{}", pty.contents());
    // No model, no thinking: the editor's rules are drawn dim as pi 1.6 draws them (thinking
    // off), not in a thinking level's colour.
    let rules: Vec<u16> = (0..rows.len())
        .filter(|&i| rows[i].starts_with("────"))
        .map(|i| i as u16)
        .collect();
    assert!(rules.len() >= 2, "{rows:#?}");
    for row in &rules[rules.len() - 2..] {
        let cell = pty.cell_at(*row, 0).expect("cell");
        assert!(cell.dim(), "the editor's border on row {row} is dim");
        assert_eq!(cell.fgcolor(), vt100::Color::Default, "row {row}");
    }
    quit(&mut pty);
}

const SUBSCRIPTION: &str = "Anthropic subscription auth is active.";

/// How many times the subscription warning is on the screen.
fn warnings(pty: &Pty) -> usize {
    pty.contents().matches(SUBSCRIPTION).count()
}

/// `/model <name>`: Enter first takes the completion the menu offers, then submits.
fn switch_model(pty: &mut Pty, name: &str) {
    pty.type_text(&format!("/model {name}"));
    pty.send(ENTER);
    std::thread::sleep(std::time::Duration::from_millis(300));
    if pty.rows().iter().any(|r| r.starts_with("/model ")) {
        pty.send(ENTER);
    }
    pty.wait_for("the command ran", std::time::Duration::from_secs(10), |_| {
        !pty.rows().iter().any(|r| r.starts_with("/model "))
    });
}

/// As in 1.6 the warning also follows a switch to the subscribed model, by `/model`, the
/// picker or cycling, and a sign-in that makes the model in use a subscribed one; it is shown
/// once a run.
#[test]
fn the_subscription_warning_follows_model_switches_and_sign_ins_once_a_run() {
    let s = setup(Script::echo());
    let auth = serde_json::json!({"anthropic": {"type": "api_key", "key": "sk-ant-oat01-test"}});
    s.agent.write("auth.json", auth.to_string()).unwrap();
    let scope = "mock-openai/mock-model,anthropic/claude-sonnet-4-5";
    let args = ["--model", "mock-openai/mock-model", "--models", scope];

    // `/model` with an exact name: warned; back and forth again: not a second time.
    let mut pty = Pty::spawn(&args, s.cwd.path(), s.agent.path(), 40, 120);
    pty.wait_text("mock-model");
    assert_eq!(warnings(&pty), 0, "{}", pty.contents());
    switch_model(&mut pty, "anthropic/claude-sonnet-4-5");
    pty.wait_text(SUBSCRIPTION);
    switch_model(&mut pty, "mock-openai/mock-model");
    pty.wait_text("Model: mock-model");
    switch_model(&mut pty, "anthropic/claude-sonnet-4-5");
    pty.wait_for("second switch", std::time::Duration::from_secs(10), |c| {
        c.matches("Model: claude-sonnet-4-5").count() == 2
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(warnings(&pty), 1, "{}", pty.contents());
    quit(&mut pty);

    // Ctrl+P through the scope.
    let mut pty = Pty::spawn(&args, s.cwd.path(), s.agent.path(), 40, 120);
    pty.wait_text("mock-model");
    pty.send("\x10");
    pty.wait_text("Switched to");
    pty.wait_text(SUBSCRIPTION);
    quit(&mut pty);

    // The picker.
    let mut pty = Pty::spawn(&args, s.cwd.path(), s.agent.path(), 40, 120);
    pty.wait_text("mock-model");
    pty.send("\x0c");
    pty.wait_text("claude-sonnet-4-5");
    pty.type_text("claude-sonnet-4-5");
    pty.send(ENTER);
    pty.wait_text(SUBSCRIPTION);
    quit(&mut pty);

    // A sign-in with a subscription token while the Anthropic model is in use.
    let plain = serde_json::json!({"anthropic": {"type": "api_key", "key": "sk-ant-api03-test"}});
    s.agent.write("auth.json", plain.to_string()).unwrap();
    let on_claude = ["--model", "anthropic/claude-sonnet-4-5"];
    let mut pty = Pty::spawn(&on_claude, s.cwd.path(), s.agent.path(), 40, 120);
    pty.wait_text("claude-sonnet-4-5");
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Sign in with an API key");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.type_text("Anthropic");
    pty.wait_text("→ Anthropic");
    pty.send(ENTER);
    pty.wait_text("API key");
    pty.type_text("sk-ant-oat01-typed");
    pty.send(ENTER);
    pty.wait_text("Saved API key for Anthropic");
    pty.wait_text(SUBSCRIPTION);
    quit(&mut pty);
}
