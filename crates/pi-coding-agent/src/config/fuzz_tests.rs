//! Seeded fuzzing of the configuration readers: mutated models.json and settings.json texts
//! load or fail with a message, never panic; comment stripping leaves valid JSON as it was.
//! `PI_FUZZ_ITERS=200000 cargo test --release -p pi-coding-agent --lib config::fuzz_tests` runs longer.

use pi_test_support::fuzz::{self, Rng};
use serde_json::Value;

use super::models_json;
use super::settings::{parse_settings, SettingsManager};

const MODELS: &[&str] = &[
    r#"{
  // a local server
  "providers": {
    "local": {
      "baseUrl": "http://127.0.0.1:8080/v1",
      "api": "openai-completions",
      "apiKey": "$LOCAL_KEY",
      "headers": {"x-team": "a"},
      "compat": {"supportsDeveloperRole": false},
      "models": [
        {"id": "m1", "name": "M 1", "reasoning": true, "input": ["text", "image"],
         "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0},
         "contextWindow": 128000, "maxTokens": 16384,},
      ],
    },
    "anthropic": {"modelOverrides": {"claude-x": {"name": "X", "cost": {"input": 3}}}},
  },
}"#,
    r#"{"providers": {"openai": {"baseUrl": "https://proxy.example/v1"}}}"#,
    r#"{"providers": {"p": {"api": "anthropic-messages", "baseUrl": "http://h", "apiKey": "k", "models": [{"id": "a"}]}}}"#,
    r#"{"providers": {}}"#,
    "[]",
];

const SETTINGS: &[&str] = &[
    r#"{"defaultProvider": "anthropic", "defaultModel": "claude", "defaultThinkingLevel": "high",
       "queueMode": "all", "websockets": true, "theme": "dark", "compaction": {"enabled": true, "reserveTokens": 1000, "keepRecentTokens": 20000},
       "retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": 10, "maxDelayMs": 100},
       "skills": {"enableSkillCommands": false, "customDirectories": ["~/s"]},
       "packages": ["npm:x", {"source": "git:y", "extensions": ["a.ts"]}],
       "extensions": ["./e.ts"], "enabledModels": ["anthropic/*"], "sessionDir": "~/sessions",
       "shellPath": "/bin/bash", "hideThinkingBlock": true, "terminal": {"showImages": false}}"#,
    r#"{"steeringMode": "one-at-a-time", "followUpMode": "all", "transport": "sse", "images": {"autoResize": true, "blockImages": false}}"#,
    "{}",
];

#[test]
fn fuzz_models_json_loads_or_says_why() {
    let builtin = |name: &str| matches!(name, "anthropic" | "openai" | "google");
    let mut rng = Rng::new(0x5eed_0000_0000_0c01);
    for seed in MODELS {
        // Every seed is a real file: it must load or be rejected for its content, not crash.
        let _ = models_json::parse(seed, &builtin);
    }
    for _ in 0..fuzz::iters(3_000) {
        let seed = *rng.pick(MODELS);
        let bytes = fuzz::mutated(&mut rng, seed.as_bytes());
        let text = String::from_utf8_lossy(&bytes);
        if let Err(message) = models_json::parse(&text, &builtin) {
            assert!(!message.is_empty());
            assert!(
                message.starts_with("Failed to parse models.json")
                    || message.starts_with("Invalid models.json schema")
                    || message.starts_with("Failed to load models.json"),
                "unexpected message for {text:?}: {message}"
            );
        }
    }
}

#[test]
fn fuzz_comment_stripping_keeps_valid_json_and_never_panics() {
    let mut rng = Rng::new(0x5eed_0000_0000_0c02);
    let values = [
        r#"{"url": "http://x//y", "s": "a, ]", "n": [1, 2, 3], "e": "\"//\""}"#,
        r#"["//", ",}", {"k": "\\"}]"#,
    ];
    for v in values {
        // Text without comments or trailing commas parses to the same value after stripping.
        let before: Value = serde_json::from_str(v).expect("seed is JSON");
        let after: Value = serde_json::from_str(&models_json::strip_json_comments(v)).expect("still JSON");
        assert_eq!(before, after, "{v}");
    }
    for _ in 0..fuzz::iters(5_000) {
        let seed = *rng.pick(&values[..]);
        let bytes = fuzz::mutated(&mut rng, seed.as_bytes());
        let text = String::from_utf8_lossy(&bytes);
        let stripped = models_json::strip_json_comments(&text);
        assert!(stripped.len() <= text.len(), "stripping never adds text: {text:?}");
    }
}

#[test]
fn fuzz_settings_parse_and_load_without_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let global = dir.path().join("settings.json");
    let project = dir.path().join("project-settings.json");
    let mut rng = Rng::new(0x5eed_0000_0000_0c03);
    for i in 0..fuzz::iters(1_500) {
        let seed = *rng.pick(SETTINGS);
        let bytes = fuzz::mutated(&mut rng, seed.as_bytes());
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = parse_settings(&text);
        // Every tenth input goes through the whole manager (files, merge, typed getters).
        if i % 10 == 0 {
            std::fs::write(&global, &bytes).expect("write");
            std::fs::write(&project, SETTINGS[i % SETTINGS.len()]).expect("write");
            let manager = SettingsManager::from_files(global.clone(), project.clone());
            // A blank file reads as empty settings, as in pi.
            if parsed.is_err() && !text.trim().is_empty() {
                assert!(
                    manager.load_error(super::settings::SettingsScope::Global).is_some(),
                    "a global file that does not parse is reported: {text:?}"
                );
            }
            // The typed getters read whatever shapes the merged file holds.
            let _ = format!("{:?}", manager.session_dir());
            let _ = format!("{:?}", manager.default_provider());
            let _ = format!("{:?}", manager.default_model());
            let _ = format!("{:?}", manager.default_thinking_level());
            let _ = format!("{:?}", manager.transport());
            let _ = format!("{:?}", manager.steering_mode());
            let _ = format!("{:?}", manager.follow_up_mode());
            let _ = format!("{:?}", manager.theme());
            let _ = format!("{:?}", manager.compaction());
            let _ = format!("{:?}", manager.branch_summary());
            let _ = format!("{:?}", manager.retry());
            let _ = format!("{:?}", manager.provider_retry());
            let _ = format!("{:?}", manager.hide_thinking_block());
            let _ = format!("{:?}", manager.shell_path());
            let _ = format!("{:?}", manager.shell_command_prefix());
            let _ = format!("{:?}", manager.npm_command());
            let _ = format!("{:?}", manager.quiet_startup());
            let _ = format!("{:?}", manager.collapse_changelog());
            let _ = format!("{:?}", manager.packages());
            let _ = format!("{:?}", manager.extension_paths());
            let _ = format!("{:?}", manager.skill_paths());
            let _ = format!("{:?}", manager.prompt_template_paths());
            let _ = format!("{:?}", manager.theme_paths());
            let _ = format!("{:?}", manager.enable_skill_commands());
            let _ = format!("{:?}", manager.thinking_budgets());
            let _ = format!("{:?}", manager.show_images());
            let _ = format!("{:?}", manager.image_width_cells());
            let _ = format!("{:?}", manager.image_auto_resize());
            let _ = format!("{:?}", manager.block_images());
            let _ = format!("{:?}", manager.enabled_models());
            let _ = format!("{:?}", manager.double_escape_action());
            let _ = format!("{:?}", manager.tree_filter_mode());
            let _ = format!("{:?}", manager.editor_padding_x());
            let _ = format!("{:?}", manager.autocomplete_max_visible());
            let _ = format!("{:?}", manager.code_block_indent());
        }
    }
}
