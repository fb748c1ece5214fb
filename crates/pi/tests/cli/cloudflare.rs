//! Cloudflare Workers AI chat through the binary against the mock: the account id from the
//! environment, or from the stored login's `env`, fills the `{CLOUDFLARE_ACCOUNT_ID}` of the
//! endpoint, and without it the key alone configures nothing (no request is sent), as in
//! pi 1.6, which runs the same cases when it is installed.

use std::process::Command;

use pi_test_support::{Script, Turn};
use serde_json::json;

use crate::harness::{pi_bin, Fixture, Mock, Pi};

const MODEL: &str = "cloudflare-workers-ai/@cf/moonshotai/kimi-k2.7-code";

/// Where the key and account id come from.
#[derive(Debug, Clone, Copy)]
enum Setup {
    /// The key from the environment, and the account id if given.
    Environment(Option<&'static str>),
    /// Both from auth.json, as `pi auth login cloudflare-workers-ai` stores them.
    StoredLogin,
}

/// The paths the mock saw, the exit status and the output of one run.
fn run(pi: impl FnOnce(&Fixture) -> Command, setup: Setup) -> (Vec<String>, bool, String) {
    let mock = Mock::start(Script::sequential(vec![Turn::text("hello from the edge")]));
    let fx = Fixture::new(&mock);
    let path = fx.agent.path().join("models.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["providers"]["cloudflare-workers-ai"] = json!({
        "baseUrl": format!("{}/client/v4/accounts/{{CLOUDFLARE_ACCOUNT_ID}}/ai/v1", mock.server.url()),
    });
    std::fs::write(&path, config.to_string()).unwrap();
    let mut cmd = pi(&fx);
    cmd.env_remove("CLOUDFLARE_API_KEY").env_remove("CLOUDFLARE_ACCOUNT_ID");
    match setup {
        Setup::Environment(account) => {
            cmd.env("CLOUDFLARE_API_KEY", "cf-key");
            if let Some(account) = account {
                cmd.env("CLOUDFLARE_ACCOUNT_ID", account);
            }
        }
        Setup::StoredLogin => {
            let login = json!({"cloudflare-workers-ai": {"type": "api_key", "key": "cf-key",
                "env": {"CLOUDFLARE_ACCOUNT_ID": "stored7"}}});
            fx.agent.write("auth.json", login.to_string()).unwrap();
        }
    }
    cmd.args(["--model", MODEL, "-p", "hi"]);
    let run = Pi::from_command(cmd).run();
    let paths = mock.requests().into_iter().map(|r| r.path).collect();
    let output = format!("{}{}", run.stdout, run.stderr);
    (paths, run.code == 0, output)
}

fn ours(fx: &Fixture) -> Command {
    fx.command(Command::new(pi_bin()))
}

#[test]
fn the_account_id_names_the_endpoint_and_a_key_alone_configures_nothing() {
    let (paths, ok, output) = run(ours, Setup::Environment(Some("acct42")));
    assert!(ok, "{output}");
    assert_eq!(paths, ["/client/v4/accounts/acct42/ai/v1/chat/completions"]);
    assert!(output.contains("hello from the edge"), "{output}");

    let (paths, ok, output) = run(ours, Setup::StoredLogin);
    assert!(ok, "{output}");
    assert_eq!(paths, ["/client/v4/accounts/stored7/ai/v1/chat/completions"]);

    let (paths, ok, output) = run(ours, Setup::Environment(None));
    assert!(!ok);
    assert!(paths.is_empty(), "{paths:?}");
    assert!(
        output.starts_with("No API key found for cloudflare-workers-ai."),
        "{output}"
    );
}

#[test]
fn cloudflare_chat_resolves_as_pi_1_6_does() {
    let Some(reference) = pi_test_support::reference_pi("cloudflare_chat_resolves_as_pi_1_6_does") else {
        return;
    };
    for setup in [
        Setup::Environment(Some("acct42")),
        Setup::StoredLogin,
        Setup::Environment(None),
    ] {
        let theirs = run(|fx| fx.command(reference.command()), setup);
        let ours = run(ours, setup);
        assert_eq!(ours.0, theirs.0, "{setup:?}");
        assert_eq!(ours.1, theirs.1, "{setup:?}");
        assert_eq!(ours.2.lines().next(), theirs.2.lines().next(), "{setup:?}");
    }
}
