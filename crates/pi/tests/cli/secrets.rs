//! Secrets stay where the user put them: API keys (models.json, auth.json, the environment),
//! OAuth tokens and custom request headers reach the provider, and never the session file, an
//! HTML export, the output of a run or its error messages.

use std::path::Path;

use pi_test_support::{Fault, Script, Turn};
use serde_json::{json, Value};

use crate::harness::{Fixture, Mock, Run};

const MODELS_KEY: &str = "sk-models-SECRET-1a2b3c";
const HEADER_VALUE: &str = "hdr-SECRET-4d5e6f";
const AUTH_KEY: &str = "sk-auth-SECRET-7a8b9c";
const OAUTH_TOKEN: &str = "oauth-access-SECRET-0d1e2f";
const REFRESH_TOKEN: &str = "oauth-refresh-SECRET-3a4b5c";
const ENV_KEY: &str = "sk-env-SECRET-6d7e8f";
const ALL: &[&str] = &[MODELS_KEY, HEADER_VALUE, AUTH_KEY, OAUTH_TOKEN, REFRESH_TOKEN, ENV_KEY];

/// The golden agent dir with its mock-openai provider's key and a custom header replaced by
/// secrets, plus credentials in auth.json and the environment for other providers.
fn fixture(mock: &Mock) -> Fixture {
    let fx = Fixture::new(mock);
    let path = fx.agent.path().join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let openai = &mut models["providers"]["mock-openai"];
    openai["apiKey"] = json!(MODELS_KEY);
    openai["headers"] = json!({"x-team-token": HEADER_VALUE});
    std::fs::write(&path, serde_json::to_string_pretty(&models).unwrap()).unwrap();
    fx.agent
        .write(
            "auth.json",
            json!({
                "anthropic": {"type": "api_key", "key": AUTH_KEY},
                "openai-codex": {"type": "oauth", "access": OAUTH_TOKEN, "refresh": REFRESH_TOKEN, "expires": 4102444800000u64}
            })
            .to_string(),
        )
        .unwrap();
    fx
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in ALL {
        assert!(!text.contains(secret), "{what} holds the secret {secret}:\n{text}");
    }
}

/// Every file pi wrote under `dir`, except the files that hold the secrets on purpose.
fn assert_no_secret_in_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if path.is_dir() {
            assert_no_secret_in_files(&path);
        } else if !matches!(name.as_str(), "models.json" | "auth.json") {
            let bytes = std::fs::read(&path).unwrap_or_default();
            assert_no_secret(&path.display().to_string(), &String::from_utf8_lossy(&bytes));
        }
    }
}

fn run(fx: &Fixture, args: &[&str]) -> Run {
    let mut pi = fx.pi(args);
    pi.cmd.env("OPENAI_API_KEY", ENV_KEY);
    pi.run()
}

#[test]
fn keys_and_headers_reach_the_provider_but_no_file_output_or_export() {
    let mock = Mock::start(Script::echo());
    let fx = fixture(&mock);
    let run = run(
        &fx,
        &["--mode", "json", "-p", "hello", "--model", "mock-openai/mock-model"],
    );
    run.assert_ok();
    // The provider did get them.
    let requests = mock.requests();
    let sent = requests.last().expect("a request");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {MODELS_KEY}").as_str())
    );
    // models.json's provider `headers` go with every request (pi 1.6 sends them too).
    assert_eq!(sent.header("x-team-token"), Some(HEADER_VALUE));
    assert_no_secret("JSON output", &run.stdout);
    assert_no_secret("stderr", &run.stderr);

    let session = fx.only_session();
    let out = fx.root.path().join("export.html");
    let export = fx
        .pi([std::ffi::OsStr::new("--export"), session.as_os_str(), out.as_os_str()])
        .run();
    export.assert_ok();
    assert_no_secret("export output", &export.stdout);
    assert!(out.exists(), "the export was written");
    assert_no_secret_in_files(fx.agent.path());
    assert_no_secret_in_files(fx.root.path());
}

#[test]
fn provider_errors_do_not_repeat_the_key() {
    // A 401 whose body names the request as a careless proxy might: pi's message carries the
    // provider's text, never a key of its own making.
    let mock = Mock::start(Script::sequential(vec![Turn::fault(
        Fault::status(401).message("Incorrect API key provided"),
    )]));
    let fx = fixture(&mock);
    for args in [
        &["-p", "hello", "--model", "mock-openai/mock-model"][..],
        &["--mode", "json", "-p", "hello", "--model", "mock-openai/mock-model"][..],
    ] {
        let run = run(&fx, args);
        assert!(
            run.stdout.contains("Incorrect API key") || run.stderr.contains("Incorrect API key"),
            "the provider's error is shown: {}{}",
            run.stdout,
            run.stderr
        );
        assert_no_secret("stdout", &run.stdout);
        assert_no_secret("stderr", &run.stderr);
    }
    assert_no_secret_in_files(fx.agent.path());
}
