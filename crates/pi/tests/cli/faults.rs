//! Provider faults end to end: which layer retries, how many requests it costs, what the
//! events say and how each mode exits. As in pi 1.6 the provider layer does not retry unless
//! `retry.provider.maxRetries` says so; transient failures reach the session's auto-retry.

use pi_test_support::{AgentDir, Api, Fault, Script, Turn};
use serde_json::Value;

use crate::harness::{Fixture, Mock, Run};

/// Session retries after 10, 20, 40 ms instead of 2, 4, 8 s.
const FAST_RETRY: &str = r#"{"retry": {"baseDelayMs": 10, "provider": {"maxRetryDelayMs": 5000}}}"#;

fn fixture(mock: &Mock) -> Fixture {
    let fx = Fixture::new(mock);
    fx.agent.write("settings.json", FAST_RETRY).unwrap();
    fx
}

fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

/// The last assistant message of the run (from `agent_end`).
fn last_assistant(run: &Run) -> Value {
    let events = run.events();
    let end = of_type(&events, "agent_end").pop().cloned().expect("agent_end");
    end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .cloned()
        .unwrap()
}

fn anthropic() -> [&'static str; 4] {
    ["--provider", "mock-anthropic", "--model", "mock-model"]
}

#[test]
fn rate_limit_is_retried_by_the_session_at_its_own_delay() {
    // pi 1.6: the provider layer does not retry by default, and `retry-after` does not change
    // the session's backoff.
    let mock = Mock::start(Script::echo());
    mock.server.fail_next(1, Fault::rate_limited(1));
    let fx = fixture(&mock);
    let run = fx.pi(["--mode", "json", "-p", "hello"]).run();
    run.assert_ok();
    assert_eq!(mock.requests().len(), 2);
    let events = run.events();
    let starts = of_type(&events, "auto_retry_start");
    assert_eq!(starts.len(), 1, "{}", run.stdout);
    assert_eq!(starts[0]["delayMs"], 10);
    assert!(
        starts[0]["errorMessage"].as_str().unwrap().starts_with("429: {"),
        "{}",
        starts[0]
    );
    let ends = of_type(&events, "auto_retry_end");
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["success"], true);
    let last = last_assistant(&run);
    assert_eq!(last["stopReason"], "stop");
    assert_eq!(last["content"][0]["text"], "echo: hello");
}

#[test]
fn persistent_500_costs_four_requests_and_three_session_retries() {
    let mock = Mock::start(Script::sequential(vec![Turn::fault(Fault::status(500))]));
    let fx = fixture(&mock);
    let run = fx.pi(["--mode", "json", "-p", "hello"]).run();
    run.assert_ok();
    assert_eq!(mock.requests().len(), 4, "one request per session attempt (pi 1.6)");
    let events = run.events();
    let starts = of_type(&events, "auto_retry_start");
    let attempts: Vec<&Value> = starts.iter().map(|e| &e["attempt"]).collect();
    assert_eq!(attempts, [1, 2, 3]);
    let delays: Vec<&Value> = starts.iter().map(|e| &e["delayMs"]).collect();
    assert_eq!(delays, [10, 20, 40]);
    for s in &starts {
        assert_eq!(s["maxAttempts"], 3);
        assert!(s["errorMessage"].as_str().unwrap().contains("500"), "{s}");
    }
    let ends = of_type(&events, "auto_retry_end");
    assert_eq!(ends.len(), 1, "{}", run.stdout);
    assert_eq!(ends[0]["success"], false);
    assert_eq!(ends[0]["attempt"], 3);
    assert!(ends[0]["finalError"].as_str().unwrap().starts_with("500: {"));
    assert_eq!(last_assistant(&run)["stopReason"], "error");
    // Every attempt's failed reply stays in the session file.
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    let errors = session
        .lines()
        .filter(|l| l.contains("\"stopReason\":\"error\""))
        .count();
    assert_eq!(errors, 4, "{session}");
}

#[test]
fn bad_request_is_not_retried_print_exits_1_json_exits_0() {
    let mock = Mock::start(Script::echo());
    let fx = fixture(&mock);
    mock.server.fail_next(1, Fault::status(400).message("mock bad request"));
    let run = fx.pi(["-p", "hello"]).run();
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "400: {\"message\":\"mock bad request\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}\n"
    );
    assert_eq!(mock.requests().len(), 1);

    mock.server.clear_requests();
    mock.server.fail_next(1, Fault::status(400).message("mock bad request"));
    let run = fx.pi(["--mode", "json", "-p", "hello"]).run();
    run.assert_ok();
    assert_eq!(mock.requests().len(), 1);
    assert!(of_type(&run.events(), "auto_retry_start").is_empty());
    let last = last_assistant(&run);
    assert_eq!(last["stopReason"], "error");
    assert_eq!(
        last["errorMessage"],
        r#"400: {"message":"mock bad request","type":"invalid_request_error","param":null,"code":null}"#
    );
}

#[test]
fn dropped_stream_is_retried_by_the_session() {
    let turn = Turn::text("recovered answer").with_fault(Fault::drop_after(2).times(1));
    let mock = Mock::start(Script::sequential(vec![turn]));
    let fx = fixture(&mock);
    let run = fx.pi(["--mode", "json", "-p", "hello"]).run();
    run.assert_ok();
    assert_eq!(
        mock.requests().len(),
        2,
        "a stream that started is not retried by the provider"
    );
    let events = run.events();
    assert_eq!(of_type(&events, "auto_retry_start").len(), 1, "{}", run.stdout);
    let end = of_type(&events, "auto_retry_end");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["success"], true);
    assert_eq!(end[0]["attempt"], 1);
    assert_eq!(last_assistant(&run)["content"][0]["text"], "recovered answer");
}

#[test]
fn always_dropped_stream_gives_up_after_three_session_retries() {
    let turn = Turn::text("never").with_fault(Fault::drop_after(2));
    let mock = Mock::start(Script::sequential(vec![turn]));
    let fx = fixture(&mock);
    let run = fx.pi(["--mode", "json", "-p", "hello"]).run();
    run.assert_ok();
    assert_eq!(mock.requests().len(), 4);
    let events = run.events();
    assert_eq!(of_type(&events, "auto_retry_start").len(), 3);
    // As the TypeScript pi: each attempt is a whole agent run, its retry event after agent_end.
    let outline: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .filter(|t| matches!(*t, "agent_start" | "agent_end") || t.starts_with("auto_retry"))
        .collect();
    let mut expected = Vec::new();
    for _ in 0..3 {
        expected.extend(["agent_start", "agent_end", "auto_retry_start"]);
    }
    expected.extend(["agent_start", "agent_end", "auto_retry_end"]);
    assert_eq!(outline, expected);
    for s in of_type(&events, "auto_retry_start") {
        assert_eq!(s["errorMessage"], "terminated");
    }
    let end = of_type(&events, "auto_retry_end");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["success"], false);
    assert_eq!(end[0]["attempt"], 3);
}

#[test]
fn connection_refused_print_exits_1_with_connection_error() {
    let mock = Mock::start(Script::echo());
    let agent = AgentDir::golden(&mock.server).unwrap();
    let port = mock.server.addr().port();
    // Nothing listens on the port any more.
    drop(mock);
    let fx = Fixture::with_agent(agent);
    fx.agent.write("settings.json", FAST_RETRY).unwrap();
    let run = fx.pi(["-p", "hello"]).run();
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    // pi 1.6 keeps the cause.
    assert_eq!(
        run.stderr,
        format!("Connection error.: connect ECONNREFUSED 127.0.0.1:{port}\n")
    );
}

#[test]
fn anthropic_overloaded_error_mid_stream_is_retried() {
    let turn = Turn::text("after overload").with_fault(Fault::error_event_after(2).times(1));
    let mock = Mock::start(Script::sequential(vec![turn]));
    let fx = fixture(&mock);
    let mut args = vec!["--mode", "json"];
    args.extend(anthropic());
    args.extend(["-p", "hello"]);
    let run = fx.pi(&args).run();
    run.assert_ok();
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.api == Some(Api::Anthropic)));
    let events = run.events();
    let start = of_type(&events, "auto_retry_start");
    assert_eq!(start.len(), 1, "{}", run.stdout);
    assert!(
        start[0]["errorMessage"].as_str().unwrap().contains("verloaded"),
        "{}",
        start[0]
    );
    assert_eq!(of_type(&events, "auto_retry_end")[0]["success"], true);
    assert_eq!(last_assistant(&run)["content"][0]["text"], "after overload");
}

#[test]
fn openai_error_event_mid_stream_is_not_retried() {
    let turn = Turn::text("partial answer").with_fault(Fault::error_event_after(2).message("mock mid-stream error"));
    let mock = Mock::start(Script::sequential(vec![turn]));
    let fx = fixture(&mock);
    let run = fx.pi(["-p", "hello"]).run();
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stderr, "mock mid-stream error\n");
    assert_eq!(mock.requests().len(), 1);
}

#[test]
fn single_500_and_anthropic_529_are_retried_by_the_session() {
    let mock = Mock::start(Script::echo());
    let fx = fixture(&mock);
    for (fault, provider) in [
        (Fault::status(500), "mock-openai"),
        (Fault::overloaded(), "mock-anthropic"),
    ] {
        mock.server.clear_requests();
        mock.server.fail_next(1, fault);
        let run = fx
            .pi([
                "--mode",
                "json",
                "--provider",
                provider,
                "--model",
                "mock-model",
                "-p",
                "hello",
            ])
            .run();
        run.assert_ok();
        assert_eq!(mock.requests().len(), 2, "{provider}");
        let events = run.events();
        assert_eq!(
            of_type(&events, "auto_retry_start").len(),
            1,
            "{provider}: {}",
            run.stdout
        );
        assert_eq!(of_type(&events, "auto_retry_end")[0]["success"], true, "{provider}");
        assert_eq!(last_assistant(&run)["content"][0]["text"], "echo: hello", "{provider}");
    }
}

#[test]
fn length_stop_is_not_an_error() {
    let mock = Mock::start(Script::sequential(vec![Turn::text("cut short").with_length_stop()]));
    let fx = fixture(&mock);
    let run = fx.pi(["--mode", "json", "-p", "hello"]).run();
    run.assert_ok();
    assert_eq!(mock.requests().len(), 1);
    let last = last_assistant(&run);
    assert_eq!(last["stopReason"], "length");
    assert!(of_type(&run.events(), "auto_retry_start").is_empty());
}

/// A provider that starts its reply and then stalls without closing the connection fails
/// after `httpIdleTimeoutMs` of silence with pi 1.6's message, instead of waiting forever.
#[test]
fn a_stalled_stream_times_out_after_the_idle_timeout_as_1_6_does() {
    // The first event comes at once; every later one after a minute.
    let mock = Mock::start(Script::queue(vec![
        Turn::text("one two three four").with_delay_ms(60_000)
    ]));
    let fx = Fixture::new(&mock);
    fx.agent
        .write(
            "settings.json",
            r#"{"httpIdleTimeoutMs": 800, "retry": {"enabled": false}}"#,
        )
        .unwrap();
    let started = std::time::Instant::now();
    let run = fx.pi(["--mode", "json", "-p", "hello"]).run();
    let took = started.elapsed();
    run.assert_ok();
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
    let last = last_assistant(&run);
    assert_eq!(last["stopReason"], "error", "{last}");
    assert_eq!(
        last["errorMessage"], "terminated: Body Timeout Error (UND_ERR_BODY_TIMEOUT)",
        "{last}"
    );
}

#[test]
fn models_json_provider_and_model_headers_reach_every_request() {
    let mock = Mock::start(Script::sequential(vec![Turn::text("one"), Turn::text("two")]));
    let fx = fixture(&mock);
    let path = fx.agent.path().join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let openai = &mut models["providers"]["mock-openai"];
    openai["headers"] = serde_json::json!({"x-provider-header": "p", "x-shared": "from provider"});
    let model = openai["models"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["id"] == "mock-model")
        .unwrap();
    model["headers"] = serde_json::json!({"x-model-header": "m", "x-shared": "from model"});
    std::fs::write(&path, serde_json::to_string_pretty(&models).unwrap()).unwrap();
    fx.pi(["-p", "hello", "--model", "mock-openai/mock-model"])
        .run()
        .assert_ok();
    fx.pi(["-c", "-p", "again", "--model", "mock-openai/mock-model"])
        .run()
        .assert_ok();
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for sent in &requests {
        assert_eq!(sent.header("x-provider-header"), Some("p"));
        assert_eq!(sent.header("x-model-header"), Some("m"));
        assert_eq!(sent.header("x-shared"), Some("from model"));
    }
}

#[test]
fn an_overflow_on_the_only_prompt_still_compacts_and_continues() {
    // pi 1.6: the overflowed reply is left out of the context (a `context_edit`), and the
    // prompt before it, larger than what compaction keeps, is summarised.
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    fx.agent
        .write(
            "settings.json",
            r#"{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 10}}"#,
        )
        .unwrap();
    mock.server.fail_next(
        1,
        Fault::status(400).message("prompt is too long: 250000 tokens > 200000 maximum"),
    );
    let prompt = "explain this ".repeat(20);
    let run = fx.pi(["--mode", "json", "-p", &prompt]).run();
    run.assert_ok();
    let events = run.events();
    let ends = of_type(&events, "compaction_end");
    assert_eq!(ends.len(), 1, "{}", run.stdout);
    assert_eq!(ends[0]["reason"], "overflow");
    assert!(ends[0]["errorMessage"].is_null(), "{}", ends[0]);
    assert!(ends[0]["result"]["summary"].is_string(), "{}", ends[0]);
    // The failed request, the summary, the continued run.
    assert_eq!(mock.requests().len(), 3);
    let session = std::fs::read_dir(fx.agent.path().join("sessions"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| std::fs::read_to_string(f.path()).unwrap())
        .next()
        .expect("a session file");
    assert!(session.contains("\"type\":\"context_edit\""), "{session}");
}
