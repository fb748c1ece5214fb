//! A few of the reference pi's example extensions, copied at test time (never committed).

use std::path::{Path, PathBuf};

use pi_extensions::{Mode, ToolCall};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// Copy some of the reference pi's example extensions (never committed here) into a temp dir.
fn copy_examples(names: &[&str]) -> Option<(tempfile::TempDir, Vec<PathBuf>)> {
    let examples = reference_install()?.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
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
        pi_test_support::require::missing::<()>("reference pi 1.6.0 (its examples)", "loads the reference examples");
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
    let examples = reference_install()
        .ok_or("no reference pi install")?
        .join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
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
