#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The process's worker pool (a test binary of its own, so no other test holds a worker): two
//! scripts run at once, a third waits for a slot and gives up at its deadline without running.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use pi_codemode::{execute, Block, CodemodeHost, Limits, ScriptTool, ToolDeclaration, ToolOutcome};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

/// One tool, `wait`, that returns when its call is cancelled.
struct Host;

#[async_trait]
impl CodemodeHost for Host {
    fn callable_tools(&self) -> Vec<ScriptTool> {
        vec![ScriptTool {
            declaration: ToolDeclaration {
                name: "wait".into(),
                description: "Waits until cancelled.".into(),
                input_schema: json!({"type": "object"}),
                output_schema: None,
            },
            namespace: None,
        }]
    }

    async fn call_tool(&self, _id: String, _name: &str, _args: Value, cancel: CancellationToken) -> ToolOutcome {
        cancel.cancelled().await;
        ToolOutcome {
            text: "Operation aborted".into(),
            is_error: true,
            ..Default::default()
        }
    }

    fn search_tools(&self, _tools: &[ScriptTool], _query: &str, _limit: usize) -> Vec<String> {
        Vec::new()
    }

    fn load_store(&self) -> Map<String, Value> {
        Map::new()
    }

    fn save_store(&self, _set: Map<String, Value>, _delete: Vec<String>) {}
}

fn text(blocks: &[Block]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            Block::Image { .. } => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_script_waits_for_a_worker_and_times_out_without_starting() {
    let cancel = CancellationToken::new();
    let mut holders = Vec::new();
    for _ in 0..2 {
        let cancel = cancel.clone();
        holders.push(tokio::spawn(async move {
            execute(
                Arc::new(Host),
                "hold",
                "await tools.wait({})",
                cancel,
                Arc::new(|_| {}),
                Limits::default(),
            )
            .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let third = execute(
        Arc::new(Host),
        "late",
        "// @options: {\"timeout_ms\": 300}\nreturn 1",
        CancellationToken::new(),
        Arc::new(|_| {}),
        Limits::default(),
    )
    .await
    .unwrap();
    assert!(third.is_error);
    let shown = text(&third.content);
    assert!(shown.starts_with("Script failed\nWall time "), "{shown}");
    assert!(
        shown.ends_with("Script error:\nScript timed out: Execution timed out after 300 ms while waiting for a free codemode worker\n\nThe script did not start."),
        "{shown}"
    );
    // Once the holders are stopped their slots come back.
    cancel.cancel();
    for holder in holders {
        let result = holder.await.unwrap().unwrap();
        assert!(text(&result.content).contains("Script aborted"));
    }
    let after = execute(
        Arc::new(Host),
        "after",
        "return 2",
        CancellationToken::new(),
        Arc::new(|_| {}),
        Limits::default(),
    )
    .await
    .unwrap();
    assert!(text(&after.content).ends_with("Output:\n2"), "{}", text(&after.content));
}
