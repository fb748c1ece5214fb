//! The extension host against real Node: loading, registrations, tools, chained events, the
//! state mirror, console output, crashes, hangs and restarts. Node is `PI_TEST_NODE`, else
//! `/usr/bin/node`, else `node` on PATH; the npm packages come from `PI_EXTENSION_MODULES` or the
//! reference pi install (`PI_REFERENCE_PI`, default `/tmp/reference-pi`). Without them each test
//! prints one `skipped:` line and passes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use pi_extensions::{
    ExtensionRunner, ExtensionSource, HostError, HostHandler, InputOutcome, Mode, ModulesConfig, OutputStream,
    RunnerConfig, StartError, StateUpdate, Timeouts, ToolCall, ToolCallOutcome,
};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn reference_install() -> PathBuf {
    std::env::var_os("PI_REFERENCE_PI")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/reference-pi"))
}

fn find_node() -> Option<PathBuf> {
    if let Some(node) = std::env::var_os("PI_TEST_NODE") {
        return Some(PathBuf::from(node));
    }
    let usr = PathBuf::from("/usr/bin/node");
    if usr.is_file() {
        return Some(usr);
    }
    pi_extensions::node::find_node(None).ok()
}

fn find_modules() -> Option<PathBuf> {
    let configured = std::env::var_os("PI_EXTENSION_MODULES").map(PathBuf::from);
    configured
        .or_else(|| Some(reference_install().join("node_modules")))
        .filter(|dir| pi_extensions::modules::has_required_packages(dir))
}

/// Node and the packages, or a `skipped:` line.
fn environment(test: &str) -> Option<(PathBuf, PathBuf)> {
    match (find_node(), find_modules()) {
        (Some(node), Some(modules)) => Some((node, modules)),
        (None, _) => {
            println!("skipped: {test}: node not found");
            None
        }
        (_, None) => {
            println!("skipped: {test}: extension host packages not found (set PI_EXTENSION_MODULES)");
            None
        }
    }
}

/// Records what the host tells pi and answers dialogs.
#[derive(Default)]
struct Recorder {
    output: Mutex<Vec<(OutputStream, String)>>,
    notifications: Mutex<Vec<(String, Value)>>,
    requests: Mutex<Vec<(String, Value)>>,
    select_answer: Mutex<Option<String>>,
}

impl Recorder {
    fn stdout(&self) -> Vec<String> {
        self.output
            .lock()
            .map(|o| {
                o.iter()
                    .filter(|(s, _)| *s == OutputStream::Stdout)
                    .map(|(_, l)| l.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn wait_for_stdout(&self, needle: &str) -> bool {
        for _ in 0..100 {
            if self.stdout().iter().any(|l| l.contains(needle)) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

#[async_trait]
impl HostHandler for Recorder {
    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        if let Ok(mut requests) = self.requests.lock() {
            requests.push((method.to_string(), params));
        }
        match method {
            "ui.select" => Ok(self
                .select_answer
                .lock()
                .ok()
                .and_then(|a| a.clone())
                .map(Value::from)
                .unwrap_or(Value::Null)),
            _ => Err(format!("{method} is not handled in this test")),
        }
    }

    fn notification(&self, method: &str, params: Value) {
        if let Ok(mut notes) = self.notifications.lock() {
            notes.push((method.to_string(), params));
        }
    }

    fn output(&self, stream: OutputStream, line: &str) {
        if let Ok(mut output) = self.output.lock() {
            output.push((stream, line.to_string()));
        }
    }
}

struct Setup {
    config: RunnerConfig,
    recorder: Arc<Recorder>,
    _agent: tempfile::TempDir,
}

fn setup(node: PathBuf, modules: PathBuf, files: &[&Path]) -> Result<Setup, std::io::Error> {
    let agent = tempfile::tempdir()?;
    let mut config = RunnerConfig::new(
        "1.6.0-test",
        agent.path(),
        agent.path(),
        files
            .iter()
            .map(|f| ExtensionSource {
                path: f.display().to_string(),
                resolved_path: None,
            })
            .collect(),
    );
    config.node = Some(node);
    config.modules = ModulesConfig {
        dir: Some(modules),
        allow_install: false,
    };
    config.timeouts = Timeouts {
        liveness: Duration::from_millis(500),
        ping: Duration::from_secs(3),
        ..Timeouts::default()
    };
    Ok(Setup {
        config,
        recorder: Arc::new(Recorder::default()),
        _agent: agent,
    })
}

async fn start(setup: &Setup) -> Result<ExtensionRunner, Box<dyn std::error::Error>> {
    ExtensionRunner::start(setup.config.clone(), setup.recorder.clone())
        .await?
        .ok_or_else(|| "no runner for a configured extension".into())
}

fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

#[tokio::test]
async fn nothing_configured_spawns_nothing() -> TestResult {
    let agent = tempfile::tempdir()?;
    let mut config = RunnerConfig::new("1.6.0", agent.path(), agent.path(), Vec::new());
    // A node path that cannot run proves nothing was spawned.
    config.node = Some(PathBuf::from("/nonexistent/node"));
    let runner = ExtensionRunner::start(config, Arc::new(pi_extensions::NoHandler)).await?;
    assert!(runner.is_none());
    assert!(!agent.path().join("extension-host").exists());
    Ok(())
}

#[tokio::test]
async fn load_reports_registrations_and_errors_as_pi_does() -> TestResult {
    let Some((node, modules)) = environment("load") else {
        return Ok(());
    };
    let names = [
        "tool-and-events.ts",
        "second.ts",
        "throws.ts",
        "dup-a.ts",
        "dup-b.ts",
        "not-a-factory.ts",
        "bad-import.ts",
        "unsupported.ts",
        "early-action.ts",
        "missing.ts",
    ];
    let paths: Vec<PathBuf> = names.iter().map(|n| fixture(n)).collect();
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let setup = setup(node, modules, &refs)?;
    let runner = start(&setup).await?;
    let regs = runner.registrations();

    let loaded: Vec<&str> = regs
        .extensions
        .iter()
        .filter_map(|e| Path::new(&e.path).file_name()?.to_str())
        .collect();
    assert_eq!(
        loaded,
        ["tool-and-events.ts", "second.ts", "dup-a.ts", "dup-b.ts"],
        "failed files are not loaded; load order is kept"
    );
    let tools: Vec<(&str, &str)> = regs
        .tools()
        .iter()
        .map(|(ext, tool)| (tool.name.as_str(), ext.path.as_str()))
        .collect();
    let dup_a = fixture("dup-a.ts").display().to_string();
    assert!(tools.contains(&("echo_upper", paths[0].to_str().unwrap_or(""))));
    assert!(
        tools.contains(&("dup", dup_a.as_str())),
        "the first owner keeps a duplicate tool"
    );
    assert!(
        !tools.iter().any(|(n, _)| *n == "ghost"),
        "a throwing factory leaves no tool behind"
    );
    let echo = regs.tools().into_iter().find(|(_, t)| t.name == "echo_upper");
    let schema = echo.map(|(_, t)| t.parameters.clone()).unwrap_or_default();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["text"]));
    assert_eq!(regs.commands()[0].1.name, "shout");
    assert_eq!(regs.flags()[0].1.name, "loud");
    assert!(regs.handles("input") && regs.handles("before_agent_start"));
    assert!(!regs.handles("agent_end"));

    let errors: Vec<String> = regs.errors.iter().map(ToString::to_string).collect();
    let at = |name: &str| fixture(name).display().to_string();
    let expected = [
        format!(
            "Failed to load extension \"{}\": Failed to load extension: factory exploded",
            at("throws.ts")
        ),
        format!(
            "Failed to load extension \"{}\": Extension does not export a valid factory function: {}",
            at("not-a-factory.ts"),
            at("not-a-factory.ts")
        ),
        format!(
            "Failed to load extension \"{}\": Failed to load extension: Extension runtime not initialized. \
             Action methods cannot be called during extension loading.",
            at("early-action.ts")
        ),
        format!(
            "Failed to load extension \"{}\": Extension path does not exist: {}",
            at("missing.ts"),
            at("missing.ts")
        ),
        format!(
            "Failed to load extension \"{}\": Tool \"dup\" conflicts with {}",
            at("dup-b.ts"),
            at("dup-a.ts")
        ),
        format!(
            "Failed to load extension \"{}\": Flag \"--dupflag\" conflicts with {}",
            at("dup-b.ts"),
            at("dup-a.ts")
        ),
    ];
    for line in &expected {
        assert!(errors.contains(line), "missing {line:?} in {errors:#?}");
    }
    let bad_import = errors
        .iter()
        .find(|e| e.contains("bad-import.ts"))
        .cloned()
        .unwrap_or_default();
    assert!(
        bad_import.contains("Cannot find module '@earendil-works/pi-mcp'"),
        "{bad_import}"
    );
    let unsupported = errors
        .iter()
        .find(|e| e.contains("unsupported.ts"))
        .cloned()
        .unwrap_or_default();
    assert!(
        unsupported.contains("\"createAgentSession\" from @earendil-works/pi-coding-agent is not supported"),
        "{unsupported}"
    );
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn tools_run_with_updates_and_abort() -> TestResult {
    let Some((node, modules)) = environment("tools") else {
        return Ok(());
    };
    let file = fixture("tool-and-events.ts");
    let setup = setup(node, modules, &[&file])?;
    let runner = start(&setup).await?;

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let call = ToolCall {
        call_id: "call-1".into(),
        name: "echo_upper".into(),
        params: json!({ "text": "hello" }),
    };
    let result = runner.call_tool(call, Some(tx), &cancel).await?;
    assert!(!result.is_error);
    assert_eq!(result.content, vec![json!({"type": "text", "text": "HELLO"})]);
    // Host facts come from this pi, and the truncation helper cut to two lines.
    let agent_dir = setup.config.agent_dir.display().to_string();
    assert_eq!(result.details["agentDir"], agent_dir.as_str());
    assert_eq!(result.details["version"], "1.6.0-test");
    assert_eq!(result.details["head"], "a\nb");
    let update = rx.try_recv()?;
    assert_eq!(update.content, vec![json!({"type": "text", "text": "working"})]);
    assert_eq!(update.details, json!({"step": 1}));

    // A slow call, cancelled: the tool sees its signal abort and its throw is the result.
    let cancel = CancellationToken::new();
    let slow = ToolCall {
        call_id: "call-2".into(),
        name: "echo_upper".into(),
        params: json!({ "text": "x", "slow": true }),
    };
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let aborted = runner.call_tool(slow, None, &cancel).await?;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(aborted.is_error);
    assert_eq!(aborted.content, vec![json!({"type": "text", "text": "aborted by pi"})]);

    let missing = ToolCall {
        call_id: "call-3".into(),
        name: "nope".into(),
        params: json!({}),
    };
    let missing = runner.call_tool(missing, None, &CancellationToken::new()).await?;
    assert!(missing.is_error);
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn extension_tools_run_as_agent_tools() -> TestResult {
    use pi_agent::{Exposure, ToolSource};
    let Some((node, modules)) = environment("agent tools") else {
        return Ok(());
    };
    let file = fixture("tool-and-events.ts");
    let setup = setup(node, modules, &[&file])?;
    let runner = Arc::new(start(&setup).await?);
    let tools = pi_extensions::extension_tools(&runner);
    assert_eq!(tools.len(), 1);
    let (tool, meta) = &tools[0];
    assert_eq!(tool.name(), "echo_upper");
    assert_eq!(tool.label(), "Echo upper");
    assert_eq!(tool.parameters()["type"], "object");
    assert_eq!(meta.exposure, Exposure::Direct);
    assert_eq!(meta.source, ToolSource::Extension(file.display().to_string()));

    let updates = Arc::new(Mutex::new(Vec::new()));
    let seen = updates.clone();
    let on_update: pi_agent::ToolUpdateFn = Arc::new(move |output| {
        if let Ok(mut seen) = seen.lock() {
            seen.push(output);
        }
    });
    let output = tool
        .execute(
            "a1",
            json!({ "text": "quiet" }),
            CancellationToken::new(),
            on_update.clone(),
        )
        .await?;
    assert_eq!(output.content, vec![pi_ai::Content::text("QUIET")]);
    assert_eq!(updates.lock().map(|u| u.len()).unwrap_or(0), 1);

    // An aborted call is an error result with the tool's message.
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let aborted = tool
        .execute("a2", json!({ "text": "x", "slow": true }), cancel, on_update)
        .await;
    assert_eq!(aborted.map_err(|e| e.message), Err("aborted by pi".to_string()));
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn chained_events_combine_in_load_order() -> TestResult {
    let Some((node, modules)) = environment("chained") else {
        return Ok(());
    };
    let first = fixture("tool-and-events.ts");
    let second = fixture("second.ts");
    let setup = setup(node, modules, &[&first, &second])?;
    let runner = start(&setup).await?;

    // input: the first handler transforms, the second sees its text and transforms again.
    let input = runner
        .dispatch("input", json!({ "text": "upper:hi", "source": "interactive" }))
        .await?;
    assert_eq!(
        InputOutcome::from_result(&input.result),
        InputOutcome::Transform {
            text: "HI!".into(),
            images: None
        }
    );

    // tool_call: the first block wins, with its reason.
    let call = |command: &str| json!({ "toolName": "bash", "toolCallId": "c", "input": { "command": command } });
    let blocked: ToolCallOutcome =
        pi_extensions::outcomes::parse(&runner.dispatch("tool_call", call("rm -rf /")).await?.result)?;
    assert_eq!(blocked.block_message().as_deref(), Some("dangerous command"));
    let second_says: ToolCallOutcome =
        pi_extensions::outcomes::parse(&runner.dispatch("tool_call", call("ls")).await?.result)?;
    assert_eq!(second_says.block_message().as_deref(), Some("second says no"));
    let read = json!({ "toolName": "read", "toolCallId": "c", "input": { "path": "x" } });
    let open: ToolCallOutcome = pi_extensions::outcomes::parse(&runner.dispatch("tool_call", read).await?.result)?;
    assert!(!open.block);
    assert_eq!(open.input, json!({"path": "x"}));

    // before_agent_start: messages collected, the returned system prompt chained.
    let start_result = runner
        .dispatch(
            "before_agent_start",
            json!({ "messageType": "user", "prompt": "p", "systemPrompt": "BASE" }),
        )
        .await?;
    let outcome: pi_extensions::BeforeAgentStartOutcome = pi_extensions::outcomes::parse(&start_result.result)?;
    assert_eq!(outcome.system_prompt.as_deref(), Some("BASE\nextra"));
    assert_eq!(outcome.messages.len(), 1);
    assert_eq!(outcome.messages[0]["customType"], "note");
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn the_state_mirror_feeds_synchronous_getters_and_console_log_stays_off_the_wire() -> TestResult {
    let Some((node, modules)) = environment("state") else {
        return Ok(());
    };
    let first = fixture("tool-and-events.ts");
    let second = fixture("second.ts");
    let setup = setup(node, modules, &[&first, &second])?;
    let runner = start(&setup).await?;
    runner.push_state(&StateUpdate {
        model: Some(json!({ "id": "mock-1", "provider": "mock" })),
        active_tools: Some(vec!["read".into(), "echo_upper".into()]),
        entries: Some(pi_extensions::EntriesDelta {
            reset: false,
            append: vec![
                json!({ "id": "e1", "parentId": null, "type": "message" }),
                json!({ "id": "e2", "parentId": "e1", "type": "message" }),
            ],
        }),
        ..StateUpdate::default()
    })?;
    let dispatched = runner.dispatch("session_start", json!({ "reason": "startup" })).await?;
    assert!(dispatched.errors.is_empty(), "{:?}", dispatched.errors);
    let cwd = setup.config.cwd.display().to_string();
    assert!(
        setup
            .recorder
            .wait_for_stdout(&format!(
                "cwd={cwd} idle=true model=mock-1 entries=2 tools=read,echo_upper"
            ))
            .await,
        "{:?}",
        setup.recorder.stdout()
    );
    assert!(
        setup
            .recorder
            .wait_for_stdout("second sees model=mock-1 state=e1>e2")
            .await
    );

    // A delta appends; the getters see the new branch.
    runner.push_state(&StateUpdate {
        entries: Some(pi_extensions::EntriesDelta {
            reset: false,
            append: vec![json!({ "id": "e3", "parentId": "e2", "type": "message" })],
        }),
        ..StateUpdate::default()
    })?;
    runner.dispatch("session_start", json!({ "reason": "new" })).await?;
    assert!(setup.recorder.wait_for_stdout("state=e1>e2>e3").await);

    // The input handler prints a line that looks like a protocol answer; it lands in stdout
    // and the exchange goes on.
    let input = runner.dispatch("input", json!({ "text": "plain" })).await?;
    assert!(
        setup
            .recorder
            .wait_for_stdout(r#"{"id":1,"result":"not the protocol"}"#)
            .await
    );
    assert_eq!(input.result["action"], "transform", "second.ts appends '!'");
    assert_eq!(input.result["text"], "plain!");
    assert!(setup.recorder.stdout().iter().any(|l| l == "loading tool-and-events"));
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn reload_keeps_or_renews_module_state_and_retires_old_apis() -> TestResult {
    let Some((node, modules)) = environment("reload") else {
        return Ok(());
    };
    let counter = fixture("counter.ts");
    let setup = setup(node, modules, &[&counter])?;
    let runner = start(&setup).await?;
    runner.run_command("runs", "").await?;
    assert!(setup.recorder.wait_for_stdout("factory runs: 1").await);

    // Session replacement: the same module, its factory run again.
    runner.reload(true, None).await?;
    runner.run_command("runs", "").await?;
    assert!(
        setup.recorder.wait_for_stdout("factory runs: 2").await,
        "{:?}",
        setup.recorder.stdout()
    );
    // The first runtime's pi is stale now.
    let stale = runner.run_command("stale", "").await?;
    let message = stale.error.map(|e| e.error).unwrap_or_default();
    assert!(
        message.starts_with("This extension ctx is stale after session replacement or reload."),
        "{message}"
    );
    // Only the current runtime's bus subscription hears an emit.
    runner.run_command("emit", "").await?;
    assert!(setup.recorder.wait_for_stdout("bus seen by run 2").await);
    assert!(!setup.recorder.stdout().iter().any(|l| l == "bus seen by run 1"));

    // /reload: the module is evaluated again, so its counter starts over.
    runner.reload(false, None).await?;
    runner.run_command("runs", "").await?;
    for _ in 0..100 {
        if setup.recorder.stdout().len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        setup.recorder.stdout(),
        [
            "factory runs: 1",
            "factory runs: 2",
            "bus seen by run 2",
            "factory runs: 1"
        ]
    );
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_crashing_host_is_reported_and_restarts() -> TestResult {
    let Some((node, modules)) = environment("crash") else {
        return Ok(());
    };
    let crash = fixture("crash.ts");
    let setup = setup(node, modules, &[&crash])?;
    let runner = start(&setup).await?;
    let first_pid = runner.pid();
    let crashed = runner.dispatch("input", json!({ "text": "x" })).await;
    match crashed {
        Err(HostError::Exited { status, .. }) => assert_eq!(status, "exit code 7"),
        other => return Err(format!("expected an exit, got {other:?}").into()),
    }
    assert!(!runner.is_running());
    // Later calls fail the same way instead of hanging.
    assert!(matches!(
        runner.dispatch("session_start", json!({})).await,
        Err(HostError::Exited { .. })
    ));
    runner.restart().await?;
    assert!(runner.is_running());
    assert_ne!(runner.pid(), first_pid);
    let again = runner.dispatch("session_start", json!({ "reason": "startup" })).await?;
    assert!(again.errors.is_empty());
    runner.shutdown().await;
    assert!(!runner.is_running());
    Ok(())
}

#[tokio::test]
async fn a_hanging_host_is_stopped_and_a_slow_handler_times_out() -> TestResult {
    let Some((node, modules)) = environment("hang") else {
        return Ok(());
    };
    let hang = fixture("hang.ts");
    let setup = setup(node, modules, &[&hang])?;
    let runner = start(&setup).await?;

    // A handler that never settles: the host still answers pings, so only a time limit ends
    // the wait, and the host stays usable.
    let waited = runner
        .dispatch_with(
            "input",
            json!({ "text": "wait" }),
            None,
            Some(Duration::from_millis(800)),
        )
        .await;
    assert!(matches!(waited, Err(HostError::Timeout { .. })), "{waited:?}");
    assert!(runner.is_running());
    assert!(runner.dispatch("input", json!({ "text": "fine" })).await.is_ok());

    // A handler that blocks the event loop: pings go unanswered, the host is stopped.
    let started = Instant::now();
    let blocked = runner.dispatch("input", json!({ "text": "block" })).await;
    assert!(matches!(blocked, Err(HostError::Hung { .. })), "{blocked:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!runner.is_running());
    runner.restart().await?;
    assert!(runner.dispatch("input", json!({ "text": "fine" })).await.is_ok());
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn typed_emitters_skip_events_nobody_handles() -> TestResult {
    let Some((node, modules)) = environment("emitters") else {
        return Ok(());
    };
    let file = fixture("tool-and-events.ts");
    let setup = setup(node, modules, &[&file])?;
    let runner = start(&setup).await?;
    let (input, errors) = runner.emit_input("upper:abc", None, "interactive", None).await?;
    assert!(errors.is_empty());
    assert_eq!(
        input,
        InputOutcome::Transform {
            text: "ABC".into(),
            images: None
        }
    );
    let (call, _) = runner
        .emit_tool_call("c1", "bash", &json!({ "command": "rm -rf /tmp/x" }))
        .await?;
    assert_eq!(call.block_message().as_deref(), Some("dangerous command"));

    runner.shutdown().await;
    // Events nobody handles never reach the host, so they succeed even with it stopped ...
    assert_eq!(runner.emit("agent_end", json!({ "messages": [] })).await?, vec![]);
    // ... and events someone handles report that it is gone.
    assert!(matches!(
        runner.emit_input("x", None, "interactive", None).await,
        Err(HostError::NotRunning)
    ));
    Ok(())
}

#[tokio::test]
async fn an_unreachable_registry_gives_a_clear_message() -> TestResult {
    let Some(node) = find_node() else {
        println!("skipped: offline install: node not found");
        return Ok(());
    };
    if pi_extensions::node::find_node(Some(&node.with_file_name("npm"))).is_err()
        && std::process::Command::new("npm").arg("--version").output().is_err()
    {
        println!("skipped: offline install: npm not found");
        return Ok(());
    }
    let agent = tempfile::tempdir()?;
    let mut config = RunnerConfig::new(
        "1.6.0-test",
        agent.path(),
        agent.path(),
        vec![ExtensionSource {
            path: fixture("trivial.ts").display().to_string(),
            resolved_path: None,
        }],
    );
    config.node = Some(node);
    config.modules = ModulesConfig {
        dir: Some(agent.path().join("nothing-here")),
        allow_install: true,
    };
    // A closed loopback port stands in for the registry; only npm reads these variables.
    std::env::set_var("npm_config_registry", "http://127.0.0.1:9/");
    std::env::set_var("npm_config_fetch_retries", "0");
    std::env::set_var("npm_config_cache", agent.path().join("npm-cache"));
    let started = ExtensionRunner::start(config, Arc::new(pi_extensions::NoHandler)).await;
    match started {
        Err(StartError::InstallFailed { message, dir }) => {
            assert!(message.contains("not reachable (offline?)"), "{message}");
            assert!(message.contains("PI_EXTENSION_MODULES"), "{message}");
            assert_eq!(dir, agent.path().join("extension-host"));
        }
        Err(other) => return Err(format!("expected an install failure, got {other}").into()),
        Ok(_) => return Err("an install from a closed port succeeded".into()),
    }
    Ok(())
}

/// The first-use install from the npm registry into `<agentDir>/extension-host`. Needs the
/// network; run with `--ignored --nocapture`.
#[tokio::test]
#[ignore = "downloads from the npm registry"]
async fn npm_install_on_first_use() -> TestResult {
    let Some(node) = find_node() else {
        println!("skipped: npm install: node not found");
        return Ok(());
    };
    let agent = tempfile::tempdir()?;
    let file = fixture("tool-and-events.ts");
    let mut config = RunnerConfig::new(
        "1.6.0-test",
        agent.path(),
        agent.path(),
        vec![ExtensionSource {
            path: file.display().to_string(),
            resolved_path: None,
        }],
    );
    // Point the node binary's ancestors away from any pi install so nothing is found.
    config.node = Some(node);
    config.modules = ModulesConfig {
        dir: Some(agent.path().join("nothing-here")),
        allow_install: true,
    };
    let started = Instant::now();
    let runner = ExtensionRunner::start(config, Arc::new(pi_extensions::NoHandler))
        .await?
        .ok_or("no runner")?;
    println!("install and start: {:?} from {:?}", started.elapsed(), runner.modules());
    assert!(runner.registrations().errors.is_empty());
    runner.shutdown().await;
    Ok(())
}

/// Copy some of the reference pi's example extensions (never committed here) into a temp dir.
fn copy_examples(names: &[&str]) -> Option<(tempfile::TempDir, Vec<PathBuf>)> {
    let examples = reference_install().join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
    let dir = tempfile::tempdir().ok()?;
    let mut copies = Vec::new();
    for name in names {
        let target = dir.path().join(name);
        std::fs::copy(examples.join(name), &target).ok()?;
        copies.push(target);
    }
    Some((dir, copies))
}

#[tokio::test]
async fn reference_examples_load_and_run() -> TestResult {
    let Some((node, modules)) = environment("examples") else {
        return Ok(());
    };
    let names = [
        "hello.ts",
        "input-transform.ts",
        "permission-gate.ts",
        "protected-paths.ts",
        "todo.ts",
        "truncated-tool.ts",
    ];
    let Some((_dir, copies)) = copy_examples(&names) else {
        println!("skipped: examples: the reference examples are not installed");
        return Ok(());
    };
    let refs: Vec<&Path> = copies.iter().map(PathBuf::as_path).collect();
    let mut setup = setup(node, modules, &refs)?;
    setup.config.mode = Mode::Rpc;
    let runner = start(&setup).await?;
    let regs = runner.registrations();
    assert!(regs.errors.is_empty(), "{:#?}", regs.errors);
    let tools: Vec<&str> = regs.tools().iter().map(|(_, t)| t.name.as_str()).collect();
    assert_eq!(tools, ["hello", "todo", "rg"]);

    let hello = runner
        .call_tool(
            ToolCall {
                call_id: "h".into(),
                name: "hello".into(),
                params: json!({ "name": "pi" }),
            },
            None,
            &CancellationToken::new(),
        )
        .await?;
    assert_eq!(hello.content, vec![json!({"type": "text", "text": "Hello, pi!"})]);

    let quick = runner
        .dispatch("input", json!({ "text": "?quick why", "source": "rpc" }))
        .await?;
    assert_eq!(quick.result["text"], "Respond briefly in 1-2 sentences: why");
    let ping = runner
        .dispatch("input", json!({ "text": "ping", "source": "rpc" }))
        .await?;
    assert_eq!(ping.result, json!({"action": "handled"}));
    let notified = setup
        .recorder
        .notifications
        .lock()
        .map(|n| n.iter().any(|(m, p)| m == "ui.notify" && p["args"][0] == "pong"))
        .unwrap_or(false);
    assert!(notified, "ctx.ui.notify reaches pi as a notification");

    // permission-gate asks through ctx.ui.select (a request to pi) and blocks on "No".
    if let Ok(mut answer) = setup.recorder.select_answer.lock() {
        *answer = Some("No".into());
    }
    let gate = runner
        .dispatch(
            "tool_call",
            json!({ "toolName": "bash", "toolCallId": "b", "input": { "command": "sudo ls" } }),
        )
        .await?;
    assert_eq!(gate.result["reason"], "Blocked by user");
    let asked = setup
        .recorder
        .requests
        .lock()
        .map(|r| r.iter().any(|(m, _)| m == "ui.select"))
        .unwrap_or(false);
    assert!(asked);
    let protected = runner
        .dispatch(
            "tool_call",
            json!({ "toolName": "write", "toolCallId": "w", "input": { "path": ".env" } }),
        )
        .await?;
    assert_eq!(protected.result["reason"], "Path \".env\" is protected");
    runner.shutdown().await;
    Ok(())
}

/// Start and load time of one trivial extension, cold (fresh agent dir: no transpile cache)
/// and warm. Run with `--ignored --nocapture` to see the numbers.
#[tokio::test]
#[ignore = "a measurement, not a check"]
async fn measure_start_and_load() -> TestResult {
    let Some((node, modules)) = environment("measure") else {
        return Ok(());
    };
    let trivial = fixture("trivial.ts");
    let setup = setup(node, modules, &[&trivial])?;
    for round in ["cold", "warm", "warm"] {
        let started = Instant::now();
        let runner = start(&setup).await?;
        let total = started.elapsed();
        let t = runner.timings();
        println!(
            "{round}: total {:?} (spawn to hello {:?}, initialize {:?}, load {:?})",
            total, t.spawn, t.initialize, t.load
        );
        runner.shutdown().await;
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Load every reference example (files and folders, found as pi discovers an extensions
/// folder) and list the ones that fail. Run with `--ignored --nocapture`.
#[tokio::test]
#[ignore = "a survey, not a check"]
async fn survey_reference_examples() -> TestResult {
    let Some((node, modules)) = environment("survey") else {
        return Ok(());
    };
    let examples = reference_install().join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
    let copy = tempfile::tempdir()?;
    let agent_extensions = copy.path().join("extensions");
    copy_tree(&examples, &agent_extensions)?;
    let found = pi_extensions::discover(&pi_extensions::DiscoveryInput {
        cwd: copy.path().to_path_buf(),
        agent_dir: copy.path().to_path_buf(),
        ..pi_extensions::DiscoveryInput::default()
    });
    let mut setup = setup(node, modules, &[])?;
    setup.config.extensions = found.sources.clone();
    let runner = start(&setup).await?;
    let regs = runner.registrations();
    println!(
        "{} of {} example entry points loaded in {:?}",
        regs.extensions.len(),
        found.sources.len(),
        runner.timings().load
    );
    for error in &regs.errors {
        println!("{}", error.to_string().lines().next().unwrap_or_default());
    }
    runner.shutdown().await;
    Ok(())
}
