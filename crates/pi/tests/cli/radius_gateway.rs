//! A models.json provider with `"oauth": "radius"` lists the models its gateway serves
//! (`GET /v1/config`, kept in models-store.json) without listing them itself: fetched by
//! `pi update --models`, after a sign-in and by RPC mode's start-up refresh, never by a plain
//! `pi -p` or `--list-models`; its models answer through the gateway's `pi-messages` API.
//! Compared with pi 1.6 against the same mock gateway.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use pi_test_support::oauth::{OAuthMock, MOCK_RADIUS_KEY};
use serde_json::{json, Value};

use crate::harness::{pi_bin, Fixture, Mock};

struct Env {
    _rt: tokio::runtime::Runtime,
    gateway: OAuthMock,
    fx: Fixture,
    _llm: Mock,
}

fn setup() -> Env {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let gateway = rt.block_on(OAuthMock::start()).unwrap();
    let llm = Mock::start(pi_test_support::Script::echo());
    let fx = Fixture::new(&llm);
    // The gateway, and a provider of no catalogue (RPC mode needs a model to start with).
    let models = json!({"providers": {
        "corp": {
            "name": "Corp Gateway",
            "baseUrl": format!("{}/v1", gateway.url()),
            "oauth": "radius",
            "modelOverrides": {"gw-deep": {"name": "Deep (team)"}}
        },
        "local": {
            "baseUrl": llm.server.base_url(),
            "api": "openai-completions",
            "apiKey": "local-key",
            "models": [{"id": "local-1"}]
        }
    }});
    fx.agent.write("models.json", models.to_string()).unwrap();
    // Signed in: the gateway accepts the stored access token.
    let far = 4_102_444_800_000_i64;
    let login = json!({"corp": {"type": "oauth", "access": MOCK_RADIUS_KEY, "refresh": "unused", "expires": far}});
    fx.agent.write("auth.json", login.to_string()).unwrap();
    Env {
        _rt: rt,
        gateway,
        fx,
        _llm: llm,
    }
}

impl Env {
    /// `program` with the agent dir's environment; `online` drops `PI_OFFLINE`.
    fn run(&self, program: Command, args: &[&str], online: bool) -> (i32, String, String) {
        self.run_with(program, args, online, &[])
    }

    /// [`Env::run`] with `extra` variables set over the agent dir's.
    fn run_with(&self, program: Command, args: &[&str], online: bool, extra: &[(&str, &str)]) -> (i32, String, String) {
        let mut cmd = self.fx.command(program);
        cmd.args(args).stdin(Stdio::null()).env_remove("RADIUS_API_KEY");
        cmd.envs(extra.iter().copied());
        if online {
            cmd.env_remove("PI_OFFLINE");
        }
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn gateway_requests(&self, path: &str) -> Vec<pi_test_support::oauth::OAuthRequest> {
        self.gateway.requests().into_iter().filter(|r| r.path == path).collect()
    }

    fn store(&self) -> Value {
        let text = std::fs::read_to_string(self.fx.agent.path().join("models-store.json")).unwrap_or_default();
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

fn ours() -> Command {
    Command::new(pi_bin())
}

/// What a program shows of the gateway: `--list-models corp` before and after `pi update
/// --models`, and the reply of a fetched model.
fn walk(env: &Env, program: impl Fn() -> Command) -> Vec<String> {
    let mut seen = Vec::new();
    let (code, before, _) = env.run(program(), &["--list-models", "corp"], true);
    seen.push(format!("{code} {before}"));
    let (code, out, err) = env.run(program(), &["update", "--models"], false);
    seen.push(format!("{code} {out}{err}"));
    let (code, after, err) = env.run(program(), &["--list-models", "corp"], false);
    seen.push(format!("{code} {after}{err}"));
    let (code, reply, err) = env.run(
        program(),
        &["-p", "--no-session", "--model", "corp/gw-fast", "say hi"],
        false,
    );
    seen.push(format!("{code} {reply}{err}"));
    seen
}

#[test]
fn the_gateway_s_models_are_fetched_listed_and_answer() {
    let env = setup();
    let seen = walk(&env, ours);
    // Nothing stored yet, and `--list-models` does not fetch (online or not): the one
    // request is the update's.
    assert_eq!(seen[0], "0 No models matching \"corp\"\n", "{seen:?}");
    assert_eq!(seen[1], "0 Model catalogs refreshed\n", "{seen:?}");
    let config = env.gateway_requests("/v1/config");
    assert_eq!(config.len(), 1, "{config:?}");
    assert_eq!(
        config[0].header("authorization"),
        Some(format!("Bearer {MOCK_RADIUS_KEY}").as_str())
    );
    assert_eq!(config[0].header("accept"), Some("application/json"));
    let stored = env.store();
    let models = stored["corp"]["models"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = models.iter().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["gw-fast", "gw-deep"],
        "the entry missing fields is dropped: {stored}"
    );
    assert!(stored["corp"]["checkedAt"].is_i64(), "{stored}");
    assert_eq!(models[0]["api"], "pi-messages");
    assert_eq!(models[0]["baseUrl"], format!("{}/v1", env.gateway.url()));
    // Listed from the store, offline, with the gateway's limits and thinking.
    let listed: Vec<Vec<&str>> = seen[2]
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        listed,
        vec![
            vec!["corp", "gw-deep", "1M", "64K", "yes", "yes"],
            vec!["corp", "gw-fast", "200K", "32K", "no", "no"]
        ],
        "{seen:?}"
    );
    // A prompt reaches the gateway's pi-messages API with the login's token.
    assert_eq!(seen[3], "0 echo: say hi\n", "{seen:?}");
    let sent = env.gateway_requests("/v1/messages");
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {MOCK_RADIUS_KEY}").as_str())
    );
    let body: Value = serde_json::from_str(&sent[0].body).unwrap();
    assert_eq!(body["model"], "gw-fast");
    // A plain prompt fetches nothing.
    assert_eq!(env.gateway_requests("/v1/config").len(), 1);
}

#[test]
fn a_gateway_that_refuses_its_config_fails_the_update_and_keeps_the_stored_list() {
    let env = setup();
    let (code, _, _) = env.run(ours(), &["update", "--models"], false);
    assert_eq!(code, 0);
    env.gateway.fail_radius_config(Some(503));
    let (code, out, err) = env.run(ours(), &["update", "--models"], false);
    assert_eq!(code, 1, "{out}{err}");
    let gateway = env.gateway.url();
    assert!(
        err.contains(&format!(
            "Could not refresh model catalogs: corp: Could not load Radius config from {gateway}: 503: "
        )),
        "{err}"
    );
    let (_, listed, _) = env.run(ours(), &["--list-models", "corp"], false);
    assert!(listed.contains("gw-fast"), "the stored list stays: {listed}");
}

/// The gateway's models `get_available_models` answers once RPC mode's start-up refresh has
/// fetched them (asked until they come, at most about five seconds), the gateway's URL as
/// `<gateway>`.
fn rpc_gateway_models(env: &Env, program: Command) -> Vec<Value> {
    let mut cmd = env.fx.command(program);
    cmd.args(["--mode", "rpc", "--no-session"])
        .env_remove("PI_OFFLINE")
        .env_remove("RADIUS_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut listed = Vec::new();
    for attempt in 0..50 {
        let id = format!("m{attempt}");
        writeln!(stdin, r#"{{"id":"{id}","type":"get_available_models"}}"#).unwrap();
        stdin.flush().unwrap();
        let reply = loop {
            let line = rx.recv_timeout(Duration::from_secs(20)).expect("an answer");
            let value: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if value["id"] == id.as_str() {
                break value;
            }
        };
        listed = reply["data"]["models"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["provider"] == "corp")
            .map(|m| serde_json::from_str(&m.to_string().replace(&env.gateway.url(), "<gateway>")).unwrap())
            .collect();
        if !listed.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stdin);
    let _ = child.wait();
    listed
}

/// RPC mode's start-up refresh fetches the list (not under `PI_OFFLINE`), and the running
/// session offers the models once it has them.
#[test]
fn rpc_offers_the_gateway_s_models_after_its_startup_refresh() {
    let env = setup();
    let listed: Vec<(Value, Value, Value, Value)> = rpc_gateway_models(&env, ours())
        .into_iter()
        .map(|m| {
            (
                m["id"].clone(),
                m["name"].clone(),
                m["api"].clone(),
                m["baseUrl"].clone(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            (
                json!("gw-fast"),
                json!("Gateway Fast"),
                json!("pi-messages"),
                json!("<gateway>/v1")
            ),
            (
                json!("gw-deep"),
                json!("Deep (team)"),
                json!("pi-messages"),
                json!("<gateway>/v1")
            )
        ]
    );
    assert_eq!(env.gateway_requests("/v1/config").len(), 1);
}

/// The models RPC offers are pi 1.6's, field for field.
#[test]
fn rpc_offers_the_gateway_s_models_as_pi_1_6_does() {
    let Some(reference) = pi_test_support::reference_pi("rpc_offers_the_gateway_s_models_as_pi_1_6_does") else {
        return;
    };
    let theirs = rpc_gateway_models(&setup(), reference.command());
    let ours = rpc_gateway_models(&setup(), ours());
    assert_eq!(ours.len(), 2, "{ours:?}");
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(a, b);
    }
    assert_eq!(ours.len(), theirs.len());
}

#[test]
fn the_gateway_s_models_show_and_answer_as_in_pi_1_6() {
    let Some(reference) = pi_test_support::reference_pi("the_gateway_s_models_show_and_answer_as_in_pi_1_6") else {
        return;
    };
    let theirs_env = setup();
    let theirs = walk(&theirs_env, || reference.command());
    let ours_env = setup();
    let ours = walk(&ours_env, ours);
    let normalise = |seen: Vec<String>, env: &Env| -> Vec<String> {
        seen.into_iter()
            .map(|s| s.replace(&env.gateway.url(), "<gateway>"))
            .collect()
    };
    assert_eq!(normalise(ours, &ours_env), normalise(theirs, &theirs_env));
    let strip = |env: &Env| {
        let mut store = env.store();
        store["corp"]["checkedAt"] = Value::Null;
        store.to_string().replace(&env.gateway.url(), "<gateway>")
    };
    assert_eq!(strip(&ours_env), strip(&theirs_env));
}

/// The built-in `radius` fetches its list from its own gateway (moved to the mock by
/// `PI_OAUTH_ORIGIN`, as its sign-in is): the list replaces the shipped models.
#[test]
fn the_built_in_radius_replaces_its_shipped_models_with_its_gateway_s_list() {
    let env = setup();
    let far = 4_102_444_800_000_i64;
    let login = json!({"radius": {"type": "oauth", "access": MOCK_RADIUS_KEY, "refresh": "unused", "expires": far}});
    env.fx.agent.write("auth.json", login.to_string()).unwrap();
    let origin = env.gateway.url();
    let run = |args: &[&str]| env.run_with(ours(), args, false, &[("PI_OAUTH_ORIGIN", origin.as_str())]);
    let (_, shipped, _) = run(&["--list-models", "radius"]);
    assert!(shipped.contains("radius    balanced"), "{shipped}");
    let (code, out, err) = run(&["update", "--models"]);
    assert_eq!(code, 0, "{out}{err}");
    let (_, listed, _) = run(&["--list-models", "radius"]);
    let ids: Vec<&str> = listed
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(ids, ["gw-deep", "gw-fast"], "{listed}");
    let config = env.gateway_requests("/v1/config");
    assert_eq!(config.len(), 1);
    assert_eq!(
        config[0].header("authorization"),
        Some(format!("Bearer {MOCK_RADIUS_KEY}").as_str())
    );
}

/// A gateway login that cannot be renewed skips that gateway's list with 1.6's warning; the
/// update still succeeds.
#[test]
fn a_stale_gateway_login_is_a_warning_of_the_update_as_in_pi_1_6() {
    let outcome = |program: Command| {
        let env = setup();
        let stale = json!({"corp": {"type": "oauth", "access": "old", "refresh": "never-issued", "expires": 1}});
        env.fx.agent.write("auth.json", stale.to_string()).unwrap();
        let seen = env.run(program, &["update", "--models"], false);
        assert!(env.gateway_requests("/v1/config").is_empty());
        seen
    };
    let ours = outcome(ours());
    assert_eq!(
        ours,
        (
            0,
            "Model catalogs refreshed\n".to_string(),
            "Warning: skipped model catalog for corp: OAuth refresh failed for corp: Radius OAuth token request failed: invalid_grant: refresh token is invalid or was already used\nLog in again with `pi auth login corp` to refresh it.\n"
                .to_string()
        )
    );
    let Some(reference) =
        pi_test_support::reference_pi("a_stale_gateway_login_is_a_warning_of_the_update_as_in_pi_1_6")
    else {
        return;
    };
    assert_eq!(ours, outcome(reference.command()));
}
