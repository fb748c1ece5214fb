//! Starting, loading and reloading: what is registered, what fails and how it is worded.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_extensions::{ExtensionRunner, ExtensionSource, ModulesConfig, RunnerConfig, StartError};
use serde_json::json;

use crate::support::*;

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
    runner.reload(None, true, None).await?;
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
    runner.reload(None, false, None).await?;
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
async fn an_unreachable_registry_gives_a_clear_message() -> TestResult {
    let Some(node) = find_node() else {
        pi_test_support::require::missing::<()>("node", "offline install");
        return Ok(());
    };
    if pi_extensions::node::find_node(Some(&node.with_file_name("npm"))).is_err()
        && std::process::Command::new("npm").arg("--version").output().is_err()
    {
        pi_test_support::require::missing::<()>("npm", "offline install");
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
    if let Some(found) = pi_extensions::modules::find_modules(&config.modules, agent.path(), &node_path(&config)) {
        pi_test_support::require::missing::<()>(
            &format!("a node outside any pi install (packages found at {found:?})"),
            "offline install",
        );
        return Ok(());
    }
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
        pi_test_support::require::missing::<()>("node", "npm install");
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
    if let Some(found) = pi_extensions::modules::find_modules(&config.modules, agent.path(), &node_path(&config)) {
        pi_test_support::require::missing::<()>(
            &format!("a node outside any pi install (packages found at {found:?})"),
            "npm install",
        );
        return Ok(());
    }
    let started = Instant::now();
    let runner = ExtensionRunner::start(config, Arc::new(pi_extensions::NoHandler))
        .await?
        .ok_or("no runner")?;
    println!("install and start: {:?} from {:?}", started.elapsed(), runner.modules());
    assert!(runner.registrations().errors.is_empty());
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
        let rss = runner
            .pid()
            .and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
            .and_then(|status| status.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
            .unwrap_or_default();
        println!(
            "{round}: total {:?} (spawn to hello {:?}, initialize {:?}, load {:?}); host {rss}",
            total, t.spawn, t.initialize, t.load
        );
        runner.shutdown().await;
    }
    Ok(())
}

#[tokio::test]
async fn reload_can_change_the_list_of_files() -> TestResult {
    let Some((node, modules)) = environment("reload list") else {
        return Ok(());
    };
    let first = fixture("tool-and-events.ts");
    let setup = setup(node, modules, &[&first])?;
    let runner = start(&setup).await?;
    assert_eq!(runner.registrations().extensions.len(), 1);
    let both = [fixture("tool-and-events.ts"), fixture("second.ts")]
        .iter()
        .map(|p| ExtensionSource {
            path: p.display().to_string(),
            resolved_path: None,
        })
        .collect();
    let regs = runner.reload(Some(both), true, None).await?;
    assert_eq!(regs.extensions.len(), 2);
    assert!(regs.handles("before_agent_start"));
    // A restart keeps the new list.
    runner.restart().await?;
    assert_eq!(runner.registrations().extensions.len(), 2);
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_node_that_is_not_node_is_reported() -> TestResult {
    let Some((_, modules)) = environment("not node") else {
        return Ok(());
    };
    let fake = Path::new("/bin/false");
    if !fake.is_file() {
        pi_test_support::require::missing::<()>("/bin/false", "not node");
        return Ok(());
    }
    let file = fixture("trivial.ts");
    let setup = setup(fake.to_path_buf(), modules, &[&file])?;
    match ExtensionRunner::start(setup.config.clone(), setup.recorder.clone()).await {
        Err(StartError::ExitedEarly { status, .. }) => assert_eq!(status, "exit code 1"),
        Err(other) => return Err(format!("expected an early exit, got {other}").into()),
        Ok(_) => return Err("/bin/false ran the host".into()),
    }
    Ok(())
}

fn node_path(config: &RunnerConfig) -> PathBuf {
    config.node.clone().unwrap_or_else(|| PathBuf::from("node"))
}

#[tokio::test]
async fn a_pre_trust_pass_decides_and_is_extended_without_running_factories_again() -> TestResult {
    let Some((node, modules)) = environment("pre_trust") else {
        return Ok(());
    };
    let gate = fixture("trust-gate.ts");
    let second = fixture("second.ts");
    let mut setup = setup(node, modules, &[&gate])?;
    setup.config.pre_trust = true;
    let runner = start(&setup).await?;
    assert!(setup.recorder.wait_for_stdout("gate factory 1 servers=0").await);
    // Staged during the factory, committed once it resolved.
    let registrations = runner.registrations();
    assert_eq!(registrations.mcp_servers.len(), 1);
    assert_eq!(registrations.mcp_servers[0].name, "docs");
    assert_eq!(registrations.mcp_servers[0].extension_path, gate.display().to_string());

    let outcome = runner.project_trust(Path::new("/work/proj"), false).await?;
    assert_eq!(outcome.decision, Some(true));
    assert!(outcome.remember);
    assert_eq!(outcome.errors.len(), 1);
    assert_eq!(outcome.errors[0].error, "first handler broke");
    assert_eq!(outcome.notices.len(), 1);
    assert_eq!(outcome.notices[0].message, "asked about /work/proj in print");
    assert_eq!(outcome.notices[0].kind, "warning");

    // The final set puts the project's file first; the gate keeps its extension.
    let sources = [&second, &gate]
        .iter()
        .map(|f| ExtensionSource {
            path: f.display().to_string(),
            resolved_path: None,
        })
        .collect();
    let registrations = runner.extend(sources).await?;
    let order: Vec<String> = registrations.extensions.iter().map(|e| e.path.clone()).collect();
    assert_eq!(order, [second.display().to_string(), gate.display().to_string()]);
    assert!(registrations.errors.is_empty(), "{:?}", registrations.errors);
    runner.run_command("actions", "").await?;
    assert!(
        setup
            .recorder
            .wait_for_stdout(&format!("servers=docs@{}", gate.display()))
            .await,
        "{:?}",
        setup.recorder.stdout()
    );
    assert_eq!(
        setup
            .recorder
            .stdout()
            .iter()
            .filter(|l| l.starts_with("gate factory"))
            .count(),
        1,
        "the factory ran once"
    );
    runner.shutdown().await;
    Ok(())
}

/// The host starts without TurboFan (it only costs memory while hundreds of modules load) and
/// turns it on once the extensions have loaded, on the Node versions where it does that.
#[tokio::test]
async fn turbofan_is_paused_while_loading_and_on_afterwards() -> TestResult {
    let Some((node, modules)) = environment("optimizer") else {
        return Ok(());
    };
    let file = fixture("optimizer.ts");
    let setup = setup(node, modules, &[&file])?;
    let runner = start(&setup).await?;
    assert!(
        runner.registrations().errors.is_empty(),
        "{:?}",
        runner.registrations().errors
    );
    let call = pi_extensions::ToolCall {
        call_id: "opt-1".into(),
        name: "turbofan".into(),
        params: json!({}),
    };
    let result = runner
        .call_tool(call, None, &tokio_util::sync::CancellationToken::new())
        .await?;
    let text = result.content[0]["text"].as_str().ok_or("no text")?;
    let seen: serde_json::Value = serde_json::from_str(text)?;
    let major: u64 = seen["node"]
        .as_str()
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .ok_or("no node version")?;
    assert_eq!(seen["now"], true, "TurboFan is on after loading: {seen}");
    if (20..=24).contains(&major) {
        assert_eq!(seen["atLoad"], false, "TurboFan is paused while loading: {seen}");
    }
    runner.shutdown().await;
    Ok(())
}
