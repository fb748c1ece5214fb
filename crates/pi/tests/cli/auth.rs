//! `pi auth …` against the binary: credentials printed as a request would resolve them,
//! readiness checks with their exit codes, logout, and login without a terminal.

use pi_test_support::Script;
use serde_json::Value;

use crate::harness::{Fixture, Mock, Run};

fn fixture() -> (Mock, Fixture) {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    (mock, fx)
}

fn auth(fx: &Fixture, args: &[&str]) -> Run {
    let mut all = vec!["auth"];
    all.extend_from_slice(args);
    let mut pi = fx.pi(all);
    for var in ["OPENAI_API_KEY", "PI_TEST_KEY"] {
        pi.cmd.env_remove(var);
    }
    pi.run()
}

#[track_caller]
fn expect(run: &Run, code: i32, stdout: &str, stderr: &str) {
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (code, stdout, stderr),
        "{run:?}"
    );
}

/// Set a models.json field of the mock-openai provider.
fn set_provider_field(fx: &Fixture, field: &str, value: Value) {
    let path = fx.agent.path().join("models.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["providers"]["mock-openai"][field] = value;
    std::fs::write(&path, config.to_string()).unwrap();
}

#[test]
fn help_and_bad_commands() {
    let (_mock, fx) = fixture();
    for args in [&[][..], &["help"], &["check", "--help"]] {
        let run = auth(&fx, args);
        assert_eq!(run.code, 0);
        assert!(run.stdout.starts_with("Usage:\n  pi auth login"), "{run:?}");
    }
    expect(
        &auth(&fx, &["bogus"]),
        1,
        "",
        "Error: Unknown auth command \"bogus\". Use \"pi auth login\", \"pi auth logout\", \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth check\".\n",
    );
    expect(
        &auth(&fx, &["check", "--provider", "mock-openai", "--bogus"]),
        1,
        "",
        "Unknown option --bogus for \"auth check\".\nUse \"pi --help\" or \"pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]\".\n",
    );
    expect(
        &auth(&fx, &["print-api-key", "--provider", "mock-openai", "--json"]),
        1,
        "",
        "Error: --json is only supported by auth check\n",
    );
    expect(
        &auth(&fx, &["print-api-key", "--provider", "mock-openai", "hello"]),
        1,
        "",
        "Error: Auth commands only accept --provider and --model\n",
    );
    expect(
        &auth(&fx, &["print-api-key"]),
        1,
        "",
        "Error: Credential printing requires --provider <provider> or --model <model>\n",
    );
}

#[test]
fn print_api_key_resolves_like_a_request() {
    let (_mock, fx) = fixture();
    expect(
        &auth(&fx, &["print-api-key", "--provider", "mock-openai"]),
        0,
        "sk-mock-openai\n",
        "",
    );
    expect(
        &auth(
            &fx,
            &["print-api-key", "--provider", "mock-openai", "--model", "mock-thinker"],
        ),
        0,
        "sk-mock-openai\n",
        "",
    );
    // A `!command` key runs.
    set_provider_field(&fx, "apiKey", "!printf from-command".into());
    expect(
        &auth(&fx, &["print-api-key", "--provider", "mock-openai"]),
        0,
        "from-command\n",
        "",
    );
    // A stored key wins over models.json, and makes --model alone find the provider.
    fx.agent
        .write("auth.json", r#"{"mock-openai":{"type":"api_key","key":"sk-stored"}}"#)
        .unwrap();
    expect(
        &auth(&fx, &["print-api-key", "--provider", "mock-openai"]),
        0,
        "sk-stored\n",
        "",
    );
    expect(
        &auth(&fx, &["print-api-key", "--model", "mock-model"]),
        0,
        "sk-stored\n",
        "",
    );
    expect(
        &auth(&fx, &["print-api-key", "--model", "no-such-model"]),
        1,
        "",
        "Error: Model \"no-such-model\" not found. Use --list-models to see available models.\n",
    );
    expect(
        &auth(&fx, &["print-api-key", "--provider", "nope"]),
        1,
        "",
        "Error: Unknown provider \"nope\". Use --list-models to see available providers.\n",
    );
    expect(
        &auth(&fx, &["print-api-key", "--provider", "openai"]),
        1,
        "",
        "Error: No usable API key is configured\n",
    );
    expect(
        &auth(&fx, &["print-bearer-token", "--provider", "mock-openai"]),
        1,
        "",
        "Error: Provider \"mock-openai\" is not configured with an OAuth bearer token\n",
    );
}

#[test]
fn oauth_credentials_print_as_bearer_tokens() {
    let (_mock, fx) = fixture();
    let far = 4_102_444_800_000_i64; // 2100
    fx.agent
        .write(
            "auth.json",
            format!(r#"{{"anthropic":{{"type":"oauth","access":"tok-access","refresh":"r","expires":{far}}}}}"#),
        )
        .unwrap();
    expect(
        &auth(&fx, &["print-bearer-token", "--provider", "anthropic"]),
        0,
        "tok-access\n",
        "",
    );
    expect(
        &auth(&fx, &["print-api-key", "--provider", "anthropic"]),
        1,
        "",
        "Error: Provider \"anthropic\" is configured with OAuth, not an API key\n",
    );
    // Too close to its expiry for the asked lifetime: the refresh is tried (here against a
    // closed port) and its failure reported without the token.
    let run = auth(
        &fx,
        &[
            "print-bearer-token",
            "--provider",
            "anthropic",
            "--min-expiry",
            "876000h",
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.starts_with("Error: OAuth refresh failed for anthropic: "),
        "{run:?}"
    );
    assert!(!run.stderr.contains("tok-access"), "{run:?}");
}

#[test]
fn check_statuses_and_exit_codes() {
    let (_mock, fx) = fixture();
    expect(&auth(&fx, &["check", "--provider", "mock-openai"]), 0, "ready\n", "");
    expect(
        &auth(&fx, &["check", "--provider", "mock-openai", "--json"]),
        0,
        "{\"status\":\"ready\",\"provider\":\"mock-openai\",\"authType\":\"api_key\"}\n",
        "",
    );
    expect(
        &auth(&fx, &["check", "--provider", "mock-openai", "--credentials"]),
        0,
        "sk-mock-openai\n",
        "",
    );
    expect(
        &auth(&fx, &["check", "--provider", "mock-openai", "--json", "--credentials"]),
        0,
        "{\"status\":\"ready\",\"provider\":\"mock-openai\",\"authType\":\"api_key\",\"credentials\":\"sk-mock-openai\"}\n",
        "",
    );
    expect(
        &auth(&fx, &["check", "--provider", "nope", "--json"]),
        1,
        "{\"status\":\"not_ready\",\"provider\":\"nope\",\"reason\":\"provider_not_found\"}\n",
        "",
    );
    expect(
        &auth(&fx, &["check", "--provider", "openai", "--json"]),
        1,
        "{\"status\":\"not_ready\",\"provider\":\"openai\",\"reason\":\"credentials_not_configured\"}\n",
        "",
    );
    expect(&auth(&fx, &["check", "--provider", "openai"]), 1, "not_ready\n", "");
    // Offered by three providers with keys: the model names no one provider.
    expect(&auth(&fx, &["check", "--model", "mock-model"]), 2, "invalid\n", "");
    expect(
        &auth(&fx, &["check", "--model", "mock-anthropic/mock-model", "--json"]),
        0,
        "{\"status\":\"ready\",\"provider\":\"mock-anthropic\",\"authType\":\"api_key\"}\n",
        "",
    );
    expect(
        &auth(&fx, &["check"]),
        2,
        "",
        "Error: Auth checks require --provider <provider> or --model <model>\n",
    );
}

#[test]
fn logout_forgets_only_the_stored_key() {
    let (_mock, fx) = fixture();
    expect(
        &auth(&fx, &["logout", "mock-openai"]),
        0,
        "No stored credentials for mock-openai. Environment variables and models.json config are unchanged.\n",
        "",
    );
    fx.agent
        .write(
            "auth.json",
            r#"{"mock-openai":{"type":"api_key","key":"sk-stored"},"openai":{"type":"api_key","key":"k"}}"#,
        )
        .unwrap();
    expect(
        &auth(&fx, &["logout", "mock-openai"]),
        0,
        "Removed stored API key for mock-openai. Environment variables and models.json config are unchanged.\n",
        "",
    );
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(fx.agent.path().join("auth.json")).unwrap()).unwrap();
    assert_eq!(stored, serde_json::json!({"openai": {"type": "api_key", "key": "k"}}));
    // The models.json key is still there.
    expect(
        &auth(&fx, &["print-api-key", "--provider", "mock-openai"]),
        0,
        "sk-mock-openai\n",
        "",
    );
    expect(
        &auth(&fx, &["logout", "nope"]),
        1,
        "",
        "Unknown provider \"nope\".\nStored credentials: openai\n",
    );
    expect(&auth(&fx, &["logout"]), 1, "", "Usage: pi auth logout <provider>\n");
}

#[test]
fn login_needs_a_terminal() {
    let (_mock, fx) = fixture();
    expect(
        &auth(&fx, &["login", "openai", "--api-key"]),
        1,
        "",
        "\"pi auth login <provider> [--api-key] [--no-browser]\" requires an interactive terminal\n",
    );
    expect(
        &auth(&fx, &["login"]),
        1,
        "",
        "Usage: pi auth login <provider> [--api-key] [--no-browser]\n",
    );
    let run = auth(&fx, &["login", "mock-openai"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("Unknown provider \"mock-openai\".\nProviders: "),
        "{run:?}"
    );
    assert!(run.stderr.contains(" openai,"), "{run:?}");
    assert!(
        !fx.agent.path().join("auth.json").exists() || {
            let text = std::fs::read_to_string(fx.agent.path().join("auth.json")).unwrap();
            !text.contains("openai")
        }
    );
}
