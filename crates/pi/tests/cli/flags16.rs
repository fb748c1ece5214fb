//! The command line of pi 1.6 against the binary: the new flags (`--session-id`, `--name`,
//! `--tools` modifiers and patterns, `--exclude-tools`, `--thinking max`, `--`), the validated
//! values (`--mode`, `--provider`, `--tui-mode`, `--use-theme`), model ambiguity, and which
//! stream carries what.

use pi_test_support::{AgentDir, Script};
use serde_json::Value;

use crate::harness::{json_lines, Fixture, Mock};

fn echo() -> (Mock, Fixture) {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    (mock, fx)
}

/// The tool names of the last request (Chat Completions).
fn request_tools(mock: &Mock) -> Vec<String> {
    let requests = mock.requests();
    let body = &requests.last().expect("a request").body;
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn entries(path: &std::path::Path) -> Vec<Value> {
    json_lines(&std::fs::read_to_string(path).unwrap())
}

#[track_caller]
fn assert_fails(fx: &Fixture, mock: &Mock, args: &[&str], stderr: &str) {
    let run = fx.pi(args).run();
    assert_eq!(run.code, 1, "{args:?}: {run:?}");
    assert_eq!(run.stdout, "", "{args:?}");
    assert_eq!(run.stderr, format!("{stderr}\n"), "{args:?}");
    assert!(mock.requests().is_empty(), "{args:?} sent a request");
}

#[test]
fn bad_values_are_errors_before_anything_runs() {
    let (mock, fx) = echo();
    let cases: &[(&[&str], &str)] = &[
        (&["--mode"], "Error: --mode requires text, json, or rpc"),
        (&["--mode", "-p", "hi"], "Error: --mode requires text, json, or rpc"),
        (
            &["--mode", "bogus", "-p", "hi"],
            "Error: Invalid mode \"bogus\". Valid values: text, json, rpc",
        ),
        (&["--tui-mode"], "Error: --tui-mode requires regular or fullscreen"),
        (
            &["--tui-mode", "x", "-p", "hi"],
            "Error: Invalid TUI mode \"x\". Valid values: regular, fullscreen",
        ),
        (&["--use-theme"], "Error: --use-theme requires a theme name"),
        (&["-p", "hi", "--name"], "Error: --name requires a value"),
        (&["-p", "hi", "--name", "  "], "Error: --name requires a non-empty value"),
        (
            &["-p", "hi", "--provider", "mock-openai"],
            "Error: --provider requires --model (for example: --provider mock-openai --model <pattern>)",
        ),
        (
            &["-p", "hi", "-t", "+grep,read"],
            "Error: -t: tool names cannot be mixed with +name or -name entries",
        ),
        (
            &["-p", "hi", "--tools", "+gr*"],
            "Error: --tools: +name and -name entries take exact tool names, not patterns: +gr*",
        ),
        (&["-p", "hi", "-xt"], "Error: Unknown option: -xt"),
        (
            &["-p", "hi", "--session-id", "abc", "-c"],
            "Error: --session-id cannot be combined with --continue",
        ),
        (
            &["-p", "hi", "--session-id", "abc", "--session", "x", "-r"],
            "Error: --session-id cannot be combined with --session, --resume",
        ),
        (
            &["-p", "hi", "--session-id", "-bad"],
            "Error: Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character",
        ),
    ];
    for (args, stderr) in cases {
        assert_fails(&fx, &mock, args, stderr);
    }
    assert!(fx.sessions().is_empty());
}

#[test]
fn new_flags_are_accepted() {
    let (_mock, fx) = echo();
    let run = fx
        .pi([
            "-p",
            "--no-mcp",
            "-a",
            "--tui-mode",
            "regular",
            "--use-theme",
            "dark",
            "--no-session",
            "hello",
        ])
        .run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: hello\n");
    let run = fx
        .pi(["-na", "--approve", "--no-approve", "-p", "--no-session", "x"])
        .run();
    run.assert_ok();
}

#[test]
fn double_dash_makes_the_rest_messages() {
    let (mock, fx) = echo();
    let run = fx.pi(["-p", "--no-session", "--", "-dash prompt"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: -dash prompt\n");
    // `@file` still reads the file after `--`.
    let run = fx.pi(["-p", "--no-session", "--", "@hello.txt", "--model"]).run();
    run.assert_ok();
    let requests = mock.requests();
    let body = requests.last().unwrap().body.to_string();
    assert!(body.contains("Third line."), "{body}");
    assert!(body.contains("--model"), "{body}");
}

#[test]
fn session_id_pins_the_file_and_reopens_it() {
    let (mock, fx) = echo();
    let run = fx.pi(["-p", "--session-id", "my.run-1", "first"]).run();
    run.assert_ok();
    assert_eq!(
        run.stderr,
        "Warning: No project session found with id 'my.run-1'; creating a new session with that id.\n"
    );
    let path = fx.only_session();
    let file = path.file_name().unwrap().to_str().unwrap().to_owned();
    assert!(file.ends_with("_my.run-1.jsonl"), "{file}");
    assert_eq!(entries(&path)[0]["id"], "my.run-1");

    let run = fx.pi(["-p", "--session-id", "my.run-1", "second"]).run();
    run.assert_ok();
    assert_eq!(run.stderr, "", "an existing id opens quietly");
    assert_eq!(fx.sessions(), vec![path.clone()]);
    let requests = mock.requests();
    let body = requests.last().unwrap().body.to_string();
    assert!(
        body.contains("echo: first"),
        "the second run continues the first: {body}"
    );

    // With --fork the id names the copy, and an id in use is refused.
    let run = fx
        .pi(["-p", "--fork", "my.run-1", "--session-id", "my.run-1", "x"])
        .run();
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "Session already exists with id 'my.run-1'\n");
    let run = fx
        .pi(["-p", "--fork", "my.run-1", "--session-id", "copy", "third"])
        .run();
    run.assert_ok();
    let copy = fx
        .sessions()
        .into_iter()
        .find(|p| p.to_str().unwrap().ends_with("_copy.jsonl"))
        .expect("the fork's file");
    assert_eq!(entries(&copy)[0]["id"], "copy");
}

#[test]
fn session_id_with_no_session_writes_nothing() {
    let (_mock, fx) = echo();
    let run = fx.pi(["-p", "--no-session", "--session-id", "abc", "hi"]).run();
    run.assert_ok();
    assert_eq!(run.stderr, "");
    assert!(fx.sessions().is_empty());
}

#[test]
fn name_is_the_first_entry() {
    let (_mock, fx) = echo();
    fx.pi(["-p", "--name", " My\nrun ", "hello"]).run().assert_ok();
    let all = entries(&fx.only_session());
    assert_eq!(all[1]["type"], "session_info", "{all:?}");
    assert_eq!(all[1]["name"], "My run");
    assert_eq!(all[1]["parentId"], Value::Null);
    assert_eq!(all[2]["type"], "model_change", "the model is still recorded: {all:?}");
    let run = fx.pi(["--mode", "json", "-n", "Named", "--no-session", "x"]).run();
    run.assert_ok();
    assert!(
        !run.stdout.contains("session_info"),
        "naming sends no event: {}",
        run.stdout
    );
}

#[test]
fn tool_selection() {
    let (mock, fx) = echo();
    let run_tools = |args: &[&str]| {
        let mut all = vec!["-p", "--no-session"];
        all.extend_from_slice(args);
        all.push("x");
        fx.pi(all).run().assert_ok();
        request_tools(&mock)
    };
    assert_eq!(run_tools(&["-t", "+grep,-write"]), ["read", "bash", "edit", "grep"]);
    assert_eq!(run_tools(&["-xt", "read"]), ["bash", "edit", "write"]);
    assert_eq!(run_tools(&["--exclude-tools", "*e*"]), ["bash"]);
    assert_eq!(
        run_tools(&["--tools", "*"]),
        ["read", "bash", "edit", "write", "grep", "find", "ls"]
    );
    assert_eq!(run_tools(&["--tools", "ls,nope,read"]), ["ls", "read"]);
    assert_eq!(run_tools(&["--no-tools", "-t", "+ls"]), ["ls"]);
}

/// The golden agent dir offers `mock-model` from three providers, each with a key.
#[test]
fn a_model_offered_by_several_providers() {
    let (mock, fx) = echo();
    assert_fails(
        &fx,
        &mock,
        &["-p", "--no-session", "--model", "mock-model", "hi"],
        "Error: Model \"mock-model\" is ambiguous across providers: mock-anthropic/mock-model, mock-openai/mock-model, mock-responses/mock-model. More than one matching provider is authenticated. Use --provider or provider/model.",
    );
    // `gpt-4.1` is also a built-in id of several providers without keys here: the one
    // provider with a key is chosen.
    let agent = AgentDir::golden(&mock.server).unwrap();
    let models = agent.path().join("models.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&models).unwrap()).unwrap();
    let list = config["providers"]["mock-openai"]["models"].as_array_mut().unwrap();
    let mut extra = list[0].clone();
    extra["id"] = "gpt-4.1".into();
    list.push(extra);
    std::fs::write(&models, config.to_string()).unwrap();
    let fx = Fixture::with_agent(agent);
    let mut pi = fx.pi(["--mode", "json", "--no-session", "--model", "gpt-4.1", "hi"]);
    for var in [
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "COPILOT_GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_TOKEN",
    ] {
        pi.cmd.env_remove(var);
    }
    let run = pi.run();
    run.assert_ok();
    let end = run
        .events()
        .into_iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(end["message"]["provider"], "mock-openai", "{end}");
}

#[test]
fn thinking_max_is_clamped_to_the_model() {
    let (mock, fx) = echo();
    let run = fx
        .pi([
            "-p",
            "--no-session",
            "--provider",
            "mock-openai",
            "--model",
            "mock-thinker",
            "--thinking",
            "max",
            "x",
        ])
        .run();
    run.assert_ok();
    assert_eq!(run.stderr, "");
    let requests = mock.requests();
    assert_eq!(requests.last().unwrap().body["reasoning_effort"], "high");
    fx.pi(["-p", "--no-session", "--model", "mock-openai/mock-thinker:max", "x"])
        .run()
        .assert_ok();
    let requests = mock.requests();
    assert_eq!(requests.last().unwrap().body["reasoning_effort"], "high");
    let run = fx.pi(["-p", "--no-session", "--thinking", "huge", "x"]).run();
    assert_eq!(
        run.stderr,
        "Warning: Invalid thinking level \"huge\". Valid values: off, minimal, low, medium, high, xhigh, max\n"
    );
}

#[test]
fn streams_of_the_informational_commands() {
    let (_mock, fx) = echo();
    let run = fx.pi(["--list-models", "thinker"]).run();
    run.assert_ok();
    assert!(run.stdout.starts_with("provider "), "{run:?}");
    assert_eq!(run.stderr, "");
    let run = fx.pi(["-p", "--list-models"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "");
    assert!(run.stderr.starts_with("provider "), "{run:?}");
    // Unknown flags do not stop help.
    let run = fx.pi(["--help", "--bogus"]).run();
    run.assert_ok();
    assert!(run.stdout.contains("--session-id"));
    let run = fx.pi(["--export", "missing.jsonl"]).run();
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!("Error: File not found: {}\n", fx.proj.join("missing.jsonl").display())
    );
}

/// pi 1.6 refuses a millisecond setting it cannot read: a bad `httpIdleTimeoutMs` stops startup,
/// a bad `websocketConnectTimeoutMs` fails every request with the same words (and, since they
/// mention a timeout, the turn is retried as a transient error).
#[test]
fn unreadable_millisecond_settings_are_refused() {
    let (mock, fx) = echo();
    fx.agent
        .write("settings.json", r#"{"httpIdleTimeoutMs": "soon"}"#)
        .unwrap();
    let run = fx.pi(["-p", "hi"]).run();
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stderr, "Error: Invalid httpIdleTimeoutMs setting: soon\n");
    assert!(mock.requests().is_empty());
    // `pi auth login` reads it before its arguments, as 1.6 does.
    let run = fx.pi(["auth", "login", "nope"]).run();
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "Error: Invalid httpIdleTimeoutMs setting: soon\n")
    );

    fx.agent
        .write(
            "settings.json",
            r#"{"websocketConnectTimeoutMs": -5, "retry": {"maxRetries": 1, "baseDelayMs": 1}}"#,
        )
        .unwrap();
    // As 1.6: JSON mode reports the failure in its events and exits 0.
    let run = fx.pi(["--mode", "json", "-p", "hi"]).run();
    assert_eq!(run.code, 0, "{run:?}");
    assert!(mock.requests().is_empty(), "a request was sent");
    let events = run.events();
    let last_end = events
        .iter()
        .rev()
        .find(|e| e["type"] == "agent_end")
        .expect("agent_end");
    let message = &last_end["messages"][0];
    assert_eq!(message["stopReason"], "error");
    assert_eq!(message["errorMessage"], "Invalid websocketConnectTimeoutMs setting: -5");
    assert_eq!(message["content"], serde_json::json!([{"type": "text", "text": ""}]));
    let retry_end = events
        .iter()
        .find(|e| e["type"] == "auto_retry_end")
        .expect("auto_retry_end");
    assert_eq!(retry_end["finalError"], "Invalid websocketConnectTimeoutMs setting: -5");
    let run = fx.pi(["-p", "hi"]).run();
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("Invalid websocketConnectTimeoutMs setting: -5"),
        "{run:?}"
    );

    fx.agent
        .write("settings.json", r#"{"websocketConnectTimeoutMs": "disabled"}"#)
        .unwrap();
    fx.pi(["-p", "hi"]).run().assert_ok();
}

/// The attribution headers of requests to OpenRouter, OpenCode and NVIDIA providers, and
/// OpenCode's session header, with install telemetry on (the default) and off.
fn attribution(fx: &Fixture, mock: &Mock, command: impl Fn() -> std::process::Command) -> Vec<Vec<(String, String)>> {
    const NAMES: [&str; 6] = [
        "http-referer",
        "x-openrouter-title",
        "x-openrouter-categories",
        "x-billing-invoke-origin",
        "x-opencode-client",
        "x-opencode-session",
    ];
    let mut seen = Vec::new();
    for (provider, telemetry) in [
        ("openrouter", "1"),
        ("opencode", "yes"),
        ("nvidia", "1"),
        ("openrouter", "0"),
    ] {
        let models = serde_json::json!({"providers": {provider: {
            "baseUrl": format!("{}/v1", mock.server.url()), "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "m1"}],
        }}});
        fx.agent.write("models.json", models.to_string()).unwrap();
        let mut cmd = command();
        cmd.args([
            "--model",
            &format!("{provider}/m1"),
            "--session-id",
            "sess-attr",
            "--no-session",
            "-p",
            "hi",
        ])
        .current_dir(&fx.proj)
        .envs(fx.agent.env())
        .env("PI_TELEMETRY", telemetry);
        crate::harness::Pi::from_command(cmd).run().assert_ok();
        let request = mock.requests().pop().expect("a request");
        let mut headers: Vec<(String, String)> = request
            .headers
            .iter()
            .filter(|(k, _)| NAMES.contains(&k.as_str()))
            .cloned()
            .collect();
        headers.sort();
        seen.push(headers);
    }
    seen
}

#[test]
fn providers_are_told_it_is_pi_as_1_6_tells_them() {
    let (mock, fx) = echo();
    let ours = attribution(&fx, &mock, || std::process::Command::new(crate::harness::pi_bin()));
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(
        ours[0],
        [
            pair("http-referer", "https://pi.dev"),
            pair("x-openrouter-categories", "cli-agent"),
            pair("x-openrouter-title", "pi")
        ]
    );
    assert_eq!(
        ours[1],
        [pair("x-opencode-client", "pi"), pair("x-opencode-session", "sess-attr")]
    );
    assert_eq!(ours[2], [pair("x-billing-invoke-origin", "Pi")]);
    assert!(ours[3].is_empty(), "telemetry off: {:?}", ours[3]);
    let Some(reference) = pi_test_support::reference_pi("providers_are_told_it_is_pi_as_1_6_tells_them") else {
        return;
    };
    let theirs = attribution(&fx, &mock, || reference.command());
    assert_eq!(ours, theirs);
}
