//! `ctx.modelRegistry` as pi 1.6 has it (`extensions/registry16.ts`), ours and pi 1.6's side
//! by side against the mock: the registered provider ids (pi's own `llama.cpp` included, not
//! with `--no-extensions`), `getAll` with models whose provider has no auth, the order of the
//! available providers, `getProviderAuthStatus`, `isUsingOAuth`,
//! `getProviderAuth`, `stream`, and requests aborted before and during their run, where pi
//! must stop the request it made (the mock sees the reply cut off while pi still runs).

use std::path::Path;
use std::time::{Duration, Instant};

use pi_test_support::{Script, Turn};
use serde_json::json;

use crate::extensions::{environment, fixture, pi_with, reference_run};
use crate::harness::{Fixture, Mock, Pi};

/// Echo, except `slow`: a long reply streamed a piece every 30 ms (about ten seconds).
fn slow_mock() -> Mock {
    let script = Script::matching()
        .rule("slow", vec![Turn::big(300).with_delay_ms(30)])
        .with_default(Turn::text("echo: {{last_user}}"));
    Mock::start(script)
}

/// The mock's providers plus `mock-locked`, whose key names a variable that is not set: its
/// models are known but not available.
fn fixture_with_locked_provider(mock: &Mock) -> Fixture {
    let fx = Fixture::new(mock);
    let path = fx.agent.path().join("models.json");
    let mut models: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut locked = models["providers"]["mock-openai"].clone();
    locked["apiKey"] = json!("$PI_EXT_REGISTRY_UNSET_KEY");
    models["providers"]["mock-locked"] = locked;
    std::fs::write(&path, serde_json::to_string_pretty(&models).unwrap()).unwrap();
    fx
}

/// What one run logged, and whether the mock saw the aborted request cut off while pi was
/// still running (checked between the extension's `cut` and `done` lines).
struct Record {
    log: Vec<String>,
    cut_while_running: bool,
}

fn run(pi: Pi, mock: &Mock, log: &Path) -> Record {
    let mut pi = pi;
    pi.cmd
        .env("REGISTRY_LOG", log)
        .env("CUT_HOLD_MS", "1500")
        .env_remove("PI_EXT_REGISTRY_UNSET_KEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = pi.cmd.spawn().unwrap();
    let start = Instant::now();
    let read = || std::fs::read_to_string(log).unwrap_or_default();
    while !read().contains("\ncut ") && start.elapsed() < Duration::from_secs(60) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The first two slow requests (aborted before and at the fifth event) were cut already.
    let before = mock.server.streams_cut();
    let seen = Instant::now();
    let mut cut_while_running = false;
    while seen.elapsed() < Duration::from_millis(1200) && !read().contains("\ndone") {
        if mock.server.streams_cut() > before {
            cut_while_running = !read().contains("\ndone");
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Record {
        log: read().lines().map(str::to_string).collect(),
        cut_while_running,
    }
}

fn args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = extra.iter().map(|a| a.to_string()).collect();
    args.extend([
        "-e".to_string(),
        fixture("registry16.ts"),
        "-p".to_string(),
        "/registry".to_string(),
    ]);
    args
}

#[test]
fn the_model_registry_lists_streams_and_stops_requests_as_pi_1_6() {
    let test = "the_model_registry_lists_streams_and_stops_requests_as_pi_1_6";
    let Some(env) = environment(test) else { return };
    let mock = slow_mock();
    let fx = fixture_with_locked_provider(&mock);
    let args = args(&[]);
    let ours = run(pi_with(&fx, &env, &args), &mock, &fx.root.path().join("ours.log"));
    let log = ours.log.join("\n");
    assert_eq!(ours.log[0], r#"ids ["probe-prov","llama.cpp"]"#, "{log}");
    assert!(log.contains("all>available true builtins listed=true"), "{log}");
    assert!(
        log.contains("locked listed=true available=false find=Mock Model"),
        "{log}"
    );
    assert!(log.contains("oauth false"), "{log}");
    assert!(
        log.contains(r#"status [{"configured":true,"source":"models_json_key"},{"configured":false},{"configured":true,"source":"fallback"},{"configured":false}] configured=false"#),
        "{log}"
    );
    // Providers only an extension defines come after models.json's.
    assert!(
        log.contains("available providers mock-openai,mock-anthropic,mock-responses,probe-prov"),
        "{log}"
    );
    assert!(
        log.contains(r#"auth {"auth":{"apiKey":"sk-mock-openai"},"source":"configured API key"}"#),
        "{log}"
    );
    assert!(log.contains("auth unknown undefined"), "{log}");
    assert!(
        log.contains("stream start,text_start,text_delta,text_end,done partial=echo: ping result=stop echo: ping"),
        "{log}"
    );
    assert!(
        log.contains("aborted before aborted This operation was aborted content=0"),
        "{log}"
    );
    assert!(log.contains("stream aborted error aborted text=true"), "{log}");
    assert!(
        log.contains("cut aborted Request was aborted text=true keys=api,content,durationMs,errorMessage,model,provider,responseId,role,stopReason,timestamp,usage"),
        "{log}"
    );
    assert!(ours.cut_while_running, "pi went on with the aborted request:\n{log}");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = slow_mock();
    let fx = fixture_with_locked_provider(&mock);
    let theirs = run(
        reference_run(&reference, &fx, &args),
        &mock,
        &fx.root.path().join("theirs.log"),
    );
    assert_eq!(ours.log, theirs.log);
    assert!(theirs.cut_while_running);
}

#[test]
fn without_builtin_extensions_no_builtin_provider_is_registered() {
    let test = "without_builtin_extensions_no_builtin_provider_is_registered";
    let Some(env) = environment(test) else { return };
    let mock = slow_mock();
    let fx = fixture_with_locked_provider(&mock);
    let args = args(&["-ne"]);
    let first_line = |pi: Pi, name: &str| {
        let log = fx.root.path().join(name);
        let mut pi = pi;
        pi.cmd.env("REGISTRY_LOG", &log);
        pi.run().assert_ok();
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let ours = first_line(pi_with(&fx, &env, &args), "ours.log");
    assert_eq!(ours, r#"ids ["probe-prov"]"#);
    if let Some(reference) = pi_test_support::reference_pi(test) {
        assert_eq!(first_line(reference_run(&reference, &fx, &args), "theirs.log"), ours);
    }
}

/// What `/edit` of `registry_refresh.ts` listed.
fn listings(pi: Pi, log: &Path) -> Vec<serde_json::Value> {
    let mut pi = pi;
    pi.cmd.env("REFRESH_LOG", log);
    pi.run().assert_ok();
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn get_all_follows_a_models_json_edit_read_again() {
    let test = "get_all_follows_a_models_json_edit_read_again";
    let Some(env) = environment(test) else { return };
    let args = ["-e", &fixture("registry_refresh.ts"), "-p", "/edit"].map(str::to_string);
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = fx.root.path().join("refresh.log");
    let ours = listings(pi_with(&fx, &env, &args), &log);
    assert_eq!(ours.len(), 3, "{ours:#?}");
    // Not only new ids: a renamed model and its new window show in every listing.
    let renamed = &ours[1];
    let all = renamed["all"].to_string();
    assert!(all.contains("mock-openai/mock-model Renamed Model 777777"), "{all}");
    assert!(
        renamed["available"].to_string().contains("Renamed Model 777777"),
        "{renamed}"
    );
    assert_eq!(renamed["found"], serde_json::Value::Null);
    let added = &ours[2];
    assert!(
        added["all"].to_string().contains("mock-openai/added-model Added Model"),
        "{added}"
    );
    assert_eq!(added["found"], "Added Model");
    assert!(!ours[0]["all"].to_string().contains("Renamed"));

    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = fx.root.path().join("refresh.log");
    let theirs = listings(reference_run(&reference, &fx, &args), &log);
    assert_eq!(ours, theirs);
}

/// What `registry_auth.ts` logged over one RPC run: `/key` (a key for `mock-locked` written
/// into auth.json, then `refresh()` unless `refresh` is false), then, once that ran, `/look`.
fn auth_listings(mut pi: Pi, log: &Path, refresh: bool) -> Vec<String> {
    use std::io::Write;
    pi.cmd
        .env("AUTH_LOG", log)
        .env_remove("PI_EXT_REGISTRY_UNSET_KEY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if !refresh {
        pi.cmd.env("AUTH_NO_REFRESH", "1");
    }
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let read = || std::fs::read_to_string(log).unwrap_or_default();
    let wait_for = |text: &str| {
        let start = Instant::now();
        while !read().contains(text) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    writeln!(stdin, r#"{{"id":"1","type":"prompt","message":"/key"}}"#).unwrap();
    wait_for(if refresh { "refreshed " } else { "written " });
    writeln!(stdin, r#"{{"id":"2","type":"prompt","message":"/look"}}"#).unwrap();
    wait_for("later ");
    drop(stdin);
    child.wait().unwrap();
    read().lines().map(str::to_string).collect()
}

/// A key stored in auth.json while pi runs reaches `ctx.modelRegistry` once the extension asks
/// the registry to read its files again (`refresh()`), as in pi 1.6; without that, pi 1.6's
/// view stays as it was, and so does ours.
#[test]
fn the_model_registry_follows_a_key_stored_meanwhile_after_refresh() {
    let test = "the_model_registry_follows_a_key_stored_meanwhile_after_refresh";
    let Some(env) = environment(test) else { return };
    let args = ["--mode", "rpc", "-e", &fixture("registry_auth.ts")].map(str::to_string);
    let runs = |reference: Option<&pi_test_support::ReferencePi>| -> Vec<Vec<String>> {
        [true, false]
            .into_iter()
            .map(|refresh| {
                let mock = Mock::start(Script::echo());
                let fx = fixture_with_locked_provider(&mock);
                let log = fx.root.path().join("auth.log");
                let pi = match reference {
                    Some(r) => reference_run(r, &fx, &args),
                    None => pi_with(&fx, &env, &args),
                };
                auth_listings(pi, &log, refresh)
            })
            .collect()
    };
    let ours = runs(None);
    let off = "available=false auth={\"configured\":false}";
    let on = "available=true auth={\"configured\":true,\"source\":\"stored\"}";
    assert_eq!(
        ours[0],
        [
            format!("before {off}"),
            format!("written {off}"),
            format!("refreshed {on}"),
            format!("later {on}")
        ]
    );
    assert_eq!(
        ours[1],
        [
            format!("before {off}"),
            format!("written {off}"),
            format!("later {off}")
        ]
    );
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    assert_eq!(ours, runs(Some(&reference)));
}
