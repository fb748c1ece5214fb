//! Tools, chained events, the typed emitters and the state mirror.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_extensions::{HostError, InputOutcome, StateUpdate, ToolCall, ToolCallOutcome};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

#[tokio::test]
async fn tools_run_with_updates_and_abort() -> TestResult {
    let Some((node, modules)) = environment("tools") else {
        return Ok(());
    };
    let file = fixture("tool-and-events.ts");
    let setup = setup(node, modules, &[&file])?;
    let runner = start(&setup).await?;

    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
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
        editor_text: Some("draft".into()),
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
                "cwd={cwd} idle=true model=mock-1 entries=2 tools=read,echo_upper editor=draft"
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
        .emit_tool_call("c1", "bash", None, &json!({ "command": "rm -rf /tmp/x" }))
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
async fn built_in_tool_factories_run_pis_own_tools() -> TestResult {
    let Some((node, modules)) = environment("built-in factories") else {
        return Ok(());
    };
    let file = fixture("wrap-bash.ts");
    let mut setup = setup(node, modules, &[&file])?;
    let schema =
        json!({ "type": "object", "properties": { "command": { "type": "string" } }, "required": ["command"] });
    setup.config.initial_state = Some(StateUpdate {
        all_tools: Some(vec![
            json!({ "name": "bash", "description": "Run a command", "parameters": schema }),
        ]),
        ..StateUpdate::default()
    });
    let runner = start(&setup).await?;
    let regs = runner.registrations();
    assert!(regs.errors.is_empty(), "{:?}", regs.errors);
    let tools = regs.tools();
    let (_, tool) = tools.first().ok_or("no tool")?;
    assert_eq!(tool.name, "safe_bash");
    assert_eq!(tool.description.as_deref(), Some("Run a command"));
    assert_eq!(tool.parameters, schema, "the definition is pi's own");

    let call = |id: &str, command: &str| ToolCall {
        call_id: id.into(),
        name: "safe_bash".into(),
        params: json!({ "command": command }),
    };
    let ran = runner
        .call_tool(call("b1", "ls"), None, &CancellationToken::new())
        .await?;
    assert_eq!(ran.content, vec![json!({"type": "text", "text": "bash ran ls"})]);
    let refused = runner
        .call_tool(call("b2", "rm x"), None, &CancellationToken::new())
        .await?;
    assert!(refused.is_error);
    let asked = setup
        .recorder
        .requests
        .lock()
        .map(|r| r.iter().filter(|(m, _)| m == "tool.builtin").count())
        .unwrap_or(0);
    assert_eq!(asked, 1, "only the allowed call reached pi's bash");
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_state_update_of_megabytes_arrives_whole() -> TestResult {
    let Some((node, modules)) = environment("long lines") else {
        return Ok(());
    };
    let file = fixture("system-prompt.ts");
    let setup = setup(node, modules, &[&file])?;
    let runner = start(&setup).await?;
    // Two lines of several socket chunks each, multi-byte characters falling on chunk edges,
    // sent back to back so that one chunk ends the first and starts the second.
    let long = |seed: &str| -> String { (0..100_000).map(|i| format!("{seed}{i}é😀\n")).collect() };
    let first = long("a");
    let second = long("b");
    for prompt in [&first, &second] {
        runner.push_state(&StateUpdate {
            system_prompt: Some(prompt.clone()),
            ..StateUpdate::default()
        })?;
    }
    let call = ToolCall {
        call_id: "long-1".into(),
        name: "system_prompt".into(),
        params: json!({}),
    };
    let result = runner.call_tool(call, None, &CancellationToken::new()).await?;
    assert!(!result.is_error, "{:?}", result.content);
    let text = result.content[0]["text"].as_str().ok_or("no text")?;
    assert!(text.len() > 1_000_000);
    assert!(text == second, "the last update is held, unchanged");
    runner.shutdown().await;
    Ok(())
}
