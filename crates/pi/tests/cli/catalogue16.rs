//! The built-in catalogue as `pi --list-models` shows it with a key for every provider,
//! offline: the same providers, models, limits and order as pi 1.6.

use std::process::{Command, Stdio};

use crate::harness::pi_bin;

/// Every key variable pi 1.6's providers read (Cloudflare's ids and Vertex's project too).
const KEYS: &[&str] = &[
    "AI_GATEWAY_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANT_LING_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AZURE_OPENAI_API_KEY",
    "BASETEN_API_KEY",
    "CEREBRAS_API_KEY",
    "CLOUDFLARE_ACCOUNT_ID",
    "CLOUDFLARE_API_KEY",
    "CLOUDFLARE_GATEWAY_ID",
    "COPILOT_GITHUB_TOKEN",
    "DEEPSEEK_API_KEY",
    "FIREWORKS_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_CLOUD_API_KEY",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_CLOUD_PROJECT",
    "GROQ_API_KEY",
    "HF_TOKEN",
    "KIMI_API_KEY",
    "META_API_KEY",
    "MINIMAX_API_KEY",
    "MINIMAX_CN_API_KEY",
    "MISTRAL_API_KEY",
    "MOONSHOT_API_KEY",
    "NVIDIA_API_KEY",
    "OPENAI_API_KEY",
    "OPENCODE_API_KEY",
    "OPENROUTER_API_KEY",
    "QWEN_TOKEN_PLAN_API_KEY",
    "QWEN_TOKEN_PLAN_CN_API_KEY",
    "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY",
    "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY",
    "QWEN_TOKEN_PLAN_TEAM_API_KEY",
    "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY",
    "RADIUS_API_KEY",
    "TOGETHER_API_KEY",
    "TYPESAFE_API_KEY",
    "XAI_API_KEY",
    "XIAOMI_API_KEY",
    "XIAOMI_TOKEN_PLAN_AMS_API_KEY",
    "XIAOMI_TOKEN_PLAN_CN_API_KEY",
    "XIAOMI_TOKEN_PLAN_SGP_API_KEY",
    "ZAI_API_KEY",
    "ZAI_CODING_CN_API_KEY",
];

/// `--list-models` of `program` in a fresh agent dir, with only the keys in the environment.
fn list(program: &std::path::Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let mut cmd = Command::new(program);
    cmd.arg("--list-models")
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null());
    for key in KEYS {
        cmd.env(key, "x");
    }
    // Into a file: Node may exit before a pipe has taken all of a long output.
    let path = dir.path().join("stdout");
    cmd.stdout(std::fs::File::create(&path).unwrap());
    let status = cmd.status().unwrap();
    assert!(status.success(), "{status:?}");
    std::fs::read_to_string(&path).unwrap()
}

#[test]
fn every_provider_s_models_list_as_in_pi_1_6() {
    let ours = list(pi_bin());
    let providers: std::collections::BTreeSet<&str> = ours
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    // Radius's gateway list is fetched; offline its shipped baseline counts.
    assert_eq!(providers.len(), 41, "{providers:?}");
    let Some(reference) = pi_test_support::reference_pi("every_provider_s_models_list_as_in_pi_1_6") else {
        return;
    };
    let theirs = list(&reference.cli);
    assert_eq!(ours.lines().count(), theirs.lines().count());
    for (i, (a, b)) in ours.lines().zip(theirs.lines()).enumerate() {
        assert_eq!(a, b, "line {i}");
    }
}
