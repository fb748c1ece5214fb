//! A provider an extension registers with an `oauth` block (`extensions/oauth_provider.ts`),
//! ours and pi 1.6's side by side against the mock: a stored login whose token expired is
//! refreshed by the extension before the request, the refreshed login is stored, the request
//! carries the key `getApiKey` derives, a second run with the fresh login refreshes
//! nothing, and `ctx.modelRegistry`'s auth calls give the derived key.

use pi_test_support::Script;
use serde_json::{json, Value};

use crate::extensions::{environment, fixture, pi_with, reference_run};
use crate::harness::{Fixture, Mock, Pi};

const EXPIRED_LOGIN: &str =
    r#"{"oauth-prov": {"type": "oauth", "refresh": "r1", "access": "a-stale", "expires": 1000}}"#;

/// Two runs on one agent dir: the extension's log, the stored login's fields (not its
/// expiry, a clock value) and each request's `Authorization` header.
fn record(run: &dyn Fn(&Fixture, &[String]) -> Option<Pi>) -> Option<Value> {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    fx.agent.write("auth.json", EXPIRED_LOGIN).unwrap();
    let log = fx.root.path().join("oauth.log");
    let args: Vec<String> = [
        "-e",
        &fixture("oauth_provider.ts"),
        "--model",
        "oauth-prov/om",
        "-p",
        "hello",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    for _ in 0..2 {
        let mut pi = run(&fx, &args)?;
        pi.cmd
            .env("OAUTH_LOG", &log)
            .env("OAUTH_BASE_URL", mock.server.base_url());
        let out = pi.run();
        out.assert_ok();
        assert!(out.stdout.contains("echo: hello"), "{out:?}");
    }
    // `/keys`: ctx.modelRegistry's auth calls with the (now fresh) login.
    let keys: Vec<String> = ["-e", &fixture("oauth_provider.ts"), "-p", "/keys"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let mut pi = run(&fx, &keys)?;
    pi.cmd.env("OAUTH_LOG", &log);
    pi.run().assert_ok();
    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(fx.agent.path().join("auth.json")).unwrap()).unwrap();
    let login = &auth["oauth-prov"];
    Some(json!({
        "log": std::fs::read_to_string(&log).unwrap_or_default().lines().collect::<Vec<_>>(),
        "stored": [&login["type"], &login["refresh"], &login["access"], login["expires"].as_i64().unwrap_or(0) > 1000],
        "authorization": mock.requests().iter().map(|r| r.header("authorization").unwrap_or_default().to_string()).collect::<Vec<_>>(),
    }))
}

#[test]
fn an_extension_providers_oauth_login_is_refreshed_and_keys_the_request_as_in_pi_1_6() {
    let test = "an_extension_providers_oauth_login_is_refreshed_and_keys_the_request_as_in_pi_1_6";
    let Some(env) = environment(test) else { return };
    let ours = record(&|fx, args| Some(pi_with(fx, &env, args))).unwrap();
    assert_eq!(
        ours["log"],
        json!([
            "refresh r1 a-stale",
            "getApiKey a-fresh",
            "getApiKey a-fresh",
            "getApiKey a-fresh",
            r#"request auth {"ok":true,"apiKey":"key-a-fresh"}"#,
            "getApiKey a-fresh",
            "provider key key-a-fresh",
            "getApiKey a-fresh",
            r#"provider auth {"auth":{"apiKey":"key-a-fresh"},"source":"OAuth"}"#,
            r#"oauth true status {"configured":true,"source":"stored"}"#,
        ]),
        "{ours:#}"
    );
    assert_eq!(ours["stored"], json!(["oauth", "r2", "a-fresh", true]), "{ours:#}");
    assert_eq!(
        ours["authorization"],
        json!(["Bearer key-a-fresh", "Bearer key-a-fresh"]),
        "{ours:#}"
    );
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let theirs = record(&|fx, args| Some(reference_run(&reference, fx, args))).unwrap();
    assert_eq!(ours, theirs, "ours:\n{ours:#}\npi 1.6:\n{theirs:#}");
}

/// Only an extension's provider can be used: without `--model` its model is the default, as
/// pi 1.6 picks the default once extensions are loaded.
#[test]
fn an_extension_provider_alone_gives_the_default_model() {
    let test = "an_extension_provider_alone_gives_the_default_model";
    let Some(env) = environment(test) else { return };
    let run = |pi: Pi, mock: &Mock, fx: &Fixture| -> (String, Vec<String>) {
        let mut pi = pi;
        pi.cmd
            .env("OAUTH_LOG", fx.root.path().join("oauth.log"))
            .env("OAUTH_BASE_URL", mock.server.base_url());
        let out = pi.run();
        out.assert_ok();
        let models = mock
            .requests()
            .iter()
            .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
            .collect();
        (out.stdout, models)
    };
    let setup = || {
        let mock = Mock::start(Script::echo());
        let fx = Fixture::new(&mock);
        fx.agent.write("models.json", r#"{"providers": {}}"#).unwrap();
        let fresh =
            r#"{"oauth-prov": {"type": "oauth", "refresh": "r1", "access": "a-good", "expires": 9999999999999}}"#;
        fx.agent.write("auth.json", fresh).unwrap();
        (mock, fx)
    };
    let args: Vec<String> = ["-e", &fixture("oauth_provider.ts"), "-p", "hello"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let (mock, fx) = setup();
    let ours = run(pi_with(&fx, &env, &args), &mock, &fx);
    assert_eq!(ours, ("echo: hello\n".to_string(), vec!["om".to_string()]));
    if let Some(reference) = pi_test_support::reference_pi(test) {
        let (mock, fx) = setup();
        assert_eq!(run(reference_run(&reference, &fx, &args), &mock, &fx), ours);
    }
}
