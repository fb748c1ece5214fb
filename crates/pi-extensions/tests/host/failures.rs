//! Hosts that crash or hang are reported and can be restarted.

use std::time::{Duration, Instant};

use pi_extensions::HostError;
use serde_json::json;

use crate::support::*;

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
