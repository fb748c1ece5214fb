//! A provider an extension registers with an `oauth` block (`extensions/oauth_provider.ts`),
//! ours and pi 1.6's side by side against the mock: a stored login whose token expired is
//! refreshed by the extension before the request, the refreshed login is stored, the request
//! carries the key `getApiKey` derives, and a second run with the fresh login refreshes
//! nothing.

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
        json!(["refresh r1 a-stale", "getApiKey a-fresh", "getApiKey a-fresh"]),
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
