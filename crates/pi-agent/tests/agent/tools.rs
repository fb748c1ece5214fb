//! Tool batches: modes, ordering, validation, failures, updates, terminate.

use std::sync::{Arc, Mutex};

use pi_agent::{AgentEvent, ToolError, ToolExecution, ToolOutput};
use pi_ai::{Content, Message};
use serde_json::{json, Value};
use tokio::sync::Notify;

use crate::faux::*;

/// The tool-result messages the second LLM call saw, as (id, text, is_error).
fn results_seen(faux: &Faux) -> Vec<(String, String, bool)> {
    faux.calls()[1]
        .context
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(t) => Some((t.tool_call_id.clone(), text_of(&t.content), t.is_error)),
            _ => None,
        })
        .collect()
}

/// `slow` finishes only after `fast` did, so completion order differs from source order.
fn racing_tools(log: Arc<Mutex<Vec<String>>>) -> Vec<Arc<dyn pi_agent::AgentTool>> {
    let gate = Arc::new(Notify::new());
    let g = gate.clone();
    let l = log.clone();
    let slow = TestTool::new("slow", move |_, _, _| {
        let g = g.clone();
        let l = l.clone();
        async move {
            l.lock().unwrap().push("slow started".into());
            g.notified().await;
            Ok(ToolOutput::text("slow done"))
        }
    })
    .arc();
    let fast = TestTool::new("fast", move |_, _, _| {
        let gate = gate.clone();
        let log = log.clone();
        async move {
            log.lock().unwrap().push("fast started".into());
            gate.notify_one();
            Ok(ToolOutput::text("fast done"))
        }
    })
    .arc();
    vec![slow, fast]
}

#[tokio::test]
async fn parallel_ends_follow_completion_and_results_follow_source_order() {
    let faux = Faux::new();
    faux.push_tools(&[("a", "slow", json!({})), ("b", "fast", json!({}))]);
    faux.push_text("done");
    let log = Arc::new(Mutex::new(Vec::new()));
    let agent = agent_with(&faux, racing_tools(log.clone()));
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();

    assert_eq!(
        rec.outline()[6..15],
        [
            "tool_start a",
            "tool_start b",
            "tool_end b",
            "tool_end a",
            "message_start toolResult a",
            "message_end toolResult a",
            "message_start toolResult b",
            "message_end toolResult b",
            "turn_end toolUse [a,b]",
        ]
    );
    assert_eq!(
        results_seen(&faux),
        vec![
            ("a".into(), "slow done".into(), false),
            ("b".into(), "fast done".into(), false)
        ]
    );
}

#[tokio::test]
async fn sequential_option_runs_one_call_at_a_time() {
    let faux = Faux::new();
    faux.push_tools(&[
        ("c1", "echo", json!({"text": "1"})),
        ("c2", "echo", json!({"text": "2"})),
    ]);
    faux.push_text("done");
    let agent = agent_with(&faux, vec![echo_tool()]);
    agent.set_tool_execution(ToolExecution::Sequential);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        rec.outline()[6..17],
        [
            "tool_start c1",
            "tool_end c1",
            "message_start toolResult c1",
            "message_end toolResult c1",
            "tool_start c2",
            "tool_end c2",
            "message_start toolResult c2",
            "message_end toolResult c2",
            "turn_end toolUse [c1,c2]",
            "turn_start",
            "message_start assistant pending",
        ]
    );
}

#[tokio::test]
async fn one_sequential_tool_makes_the_batch_sequential() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "echo", json!({"text": "1"})), ("c2", "seq", json!({}))]);
    faux.push_text("done");
    let seq = TestTool::new("seq", |_, _, _| async { Ok(ToolOutput::text("s")) })
        .sequential()
        .arc();
    let agent = agent_with(&faux, vec![echo_tool(), seq]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        rec.outline()[6..10],
        [
            "tool_start c1",
            "tool_end c1",
            "message_start toolResult c1",
            "message_end toolResult c1"
        ]
    );
}

#[tokio::test]
async fn unknown_tool_and_invalid_arguments_become_error_results() {
    let faux = Faux::new();
    faux.push_tools(&[
        ("c1", "nope", json!({})),
        ("c2", "echo", json!({"text": ["not", "a string"]})),
        ("c3", "echo", json!({"text": 42})),
    ]);
    faux.push_text("done");
    let agent = agent_with(&faux, vec![echo_tool()]);
    agent.prompt("go").await.unwrap();
    let results = results_seen(&faux);
    assert_eq!(results[0], ("c1".into(), "Tool nope not found".into(), true));
    assert_eq!(
        results[1].1,
        "Validation failed for tool \"echo\":\n  - text: expected string, got array\n\nReceived arguments:\n{\n  \"text\": [\n    \"not\",\n    \"a string\"\n  ]\n}"
    );
    assert!(results[1].2);
    // Coerced like pi: 42 becomes "42".
    assert_eq!(results[2], ("c3".into(), "42".into(), false));
}

#[tokio::test]
async fn prepare_arguments_runs_before_validation() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "legacy", json!({"old": "v"}))]);
    faux.push_text("done");
    let mut legacy = TestTool::new("legacy", |args, _, _| async move {
        Ok(ToolOutput::text(args["new"].as_str().unwrap_or("missing").to_string()))
    })
    .schema(json!({"type": "object", "required": ["new"], "properties": {"new": {"type": "string"}}}));
    legacy.prepare = Some(|args: Value| json!({"new": args["old"].clone()}));
    let agent = agent_with(&faux, vec![legacy.arc()]);
    agent.prompt("go").await.unwrap();
    assert_eq!(results_seen(&faux), vec![("c1".into(), "v".into(), false)]);
}

#[tokio::test]
async fn tool_errors_and_panics_are_results_the_model_sees() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "fail", json!({})), ("c2", "boom", json!({}))]);
    faux.push_text("done");
    let fail = TestTool::new("fail", |_, _, _| async { Err(ToolError::new("disk on fire")) }).arc();
    let boom = TestTool::new("boom", |args, _, _| async move {
        if args.is_object() {
            panic!("kaboom");
        }
        Ok(ToolOutput::default())
    })
    .arc();
    let agent = agent_with(&faux, vec![fail, boom]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    let results = results_seen(&faux);
    assert_eq!(results[0], ("c1".into(), "disk on fire".into(), true));
    assert!(results[1].1.contains("kaboom"), "{:?}", results[1]);
    assert!(results[1].2);
    // Error results carry empty details, as pi's do.
    let end = rec
        .events()
        .into_iter()
        .find(|e| matches!(e, AgentEvent::ToolExecutionEnd { .. }))
        .unwrap();
    // A tool that ran reports how long it took.
    let AgentEvent::ToolExecutionEnd { duration_ms, .. } = &end else {
        unreachable!()
    };
    let ms = duration_ms.expect("the tool ran");
    assert_eq!(
        end.to_json(),
        format!(
            r#"{{"type":"tool_execution_end","toolCallId":"c1","toolName":"fail","result":{{"content":[{{"type":"text","text":"disk on fire"}}],"details":{{}}}},"isError":true,"durationMs":{ms}}}"#
        )
    );
}

#[tokio::test]
async fn progress_updates_arrive_before_the_end() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "progress", json!({}))]);
    faux.push_text("done");
    let progress = TestTool::new("progress", |_, _, update| async move {
        update(ToolOutput::default());
        tokio::task::yield_now().await;
        update(ToolOutput::text("half"));
        update(ToolOutput::text("half and more"));
        Ok(ToolOutput::text("all"))
    })
    .arc();
    let agent = agent_with(&faux, vec![progress]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    let lines = rec.outline();
    let start = lines.iter().position(|l| l == "tool_start c1").unwrap();
    assert_eq!(
        lines[start..start + 5],
        [
            "tool_start c1",
            "tool_update c1",
            "tool_update c1",
            "tool_update c1",
            "tool_end c1"
        ]
    );
    let update = rec
        .events()
        .into_iter()
        .find(|e| matches!(e, AgentEvent::ToolExecutionUpdate { .. }))
        .unwrap();
    assert_eq!(
        update.to_json(),
        r#"{"type":"tool_execution_update","toolCallId":"c1","toolName":"progress","args":{},"partialResult":{"content":[]}}"#
    );
}

fn terminating(name: &str, terminate: bool) -> Arc<dyn pi_agent::AgentTool> {
    TestTool::new(name, move |_, _, _| async move {
        Ok(ToolOutput {
            content: vec![Content::text("t")],
            details: None,
            terminate,
            ..Default::default()
        })
    })
    .arc()
}

#[tokio::test]
async fn a_batch_ends_the_run_only_if_every_result_terminates() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "stop", json!({})), ("c2", "stop", json!({}))]);
    let agent = agent_with(&faux, vec![terminating("stop", true), terminating("go", false)]);
    let rec = Recorder::attach(&agent);
    agent.prompt("x").await.unwrap();
    assert_eq!(faux.calls().len(), 1);
    assert_eq!(
        rec.outline().last().map(String::as_str),
        Some("agent_end [user,assistant,toolResult,toolResult]")
    );

    // One result that does not terminate keeps the run going.
    let faux = Faux::new();
    faux.push_tools(&[("c1", "stop", json!({})), ("c2", "go", json!({}))]);
    faux.push_text("more");
    let agent = agent_with(&faux, vec![terminating("stop", true), terminating("go", false)]);
    agent.prompt("x").await.unwrap();
    assert_eq!(faux.calls().len(), 2);
}

/// A reply cut at the output token limit runs none of its calls: each gets pi 1.6's error
/// result, and the next request carries them.
#[tokio::test]
async fn calls_of_a_reply_cut_at_the_token_limit_are_not_run() {
    let faux = Faux::new();
    let mut events = tool_events(&[
        ("t1", "echo", json!({"text": "1"})),
        ("t2", "echo", json!({"text": "2"})),
    ]);
    if let Some(pi_ai::AssistantMessageEvent::Done { reason, message }) = events.last_mut() {
        *reason = pi_ai::StopReason::Length;
        message.stop_reason = pi_ai::StopReason::Length;
    }
    faux.push_events(events);
    faux.push_text("done");
    let ran = Arc::new(Mutex::new(0));
    let counter = ran.clone();
    let echo = TestTool::new("echo", move |_, _, _| {
        let counter = counter.clone();
        async move {
            *counter.lock().unwrap() += 1;
            Ok(ToolOutput::text("ran"))
        }
    })
    .arc();
    let agent = agent_with(&faux, vec![echo]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(*ran.lock().unwrap(), 0, "no call ran");
    assert_eq!(
        rec.outline()[6..13],
        [
            "tool_start t1",
            "tool_end t1 error",
            "message_start toolResult t1 error",
            "message_end toolResult t1 error",
            "tool_start t2",
            "tool_end t2 error",
            "message_start toolResult t2 error",
        ]
    );
    let text = |name: &str| {
        format!(
            "Tool call \"{name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
        )
    };
    assert_eq!(
        results_seen(&faux),
        vec![("t1".into(), text("echo"), true), ("t2".into(), text("echo"), true)]
    );
}

fn usage(input: u64, cost: f64) -> pi_ai::Usage {
    pi_ai::Usage {
        input,
        total_tokens: input,
        cost: pi_ai::UsageCost {
            input: cost,
            total: cost,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A tool that spends on its own model calls and runs `spender` once through the pipeline,
/// as a codemode script does.
struct Nesting {
    spender: Arc<dyn pi_agent::AgentTool>,
}

#[async_trait::async_trait]
impl pi_agent::AgentTool for Nesting {
    fn name(&self) -> &str {
        "nesting"
    }
    fn description(&self) -> &str {
        "runs spender"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    fn runs_nested_tools(&self) -> bool {
        true
    }
    async fn execute(
        &self,
        _id: &str,
        _args: Value,
        cancel: tokio_util::sync::CancellationToken,
        _update: pi_agent::ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let pipeline = pi_agent::NestedPipeline::current().ok_or_else(|| ToolError::new("no pipeline"))?;
        let call = pi_agent::nested_call("n/1".into(), "spender", json!({}));
        pipeline
            .run(Arc::clone(&self.spender), call, &cancel, Arc::new(|_| {}))
            .await;
        Ok(ToolOutput {
            usage: Some(usage(10, 0.25)),
            ..ToolOutput::text("nested done")
        })
    }
}

/// What a tool spent on models, and what the calls it made spent, end up summed as `usage` on
/// its result message (pi 1.6), which the session's totals count; a tool that spent nothing
/// has none.
#[tokio::test]
async fn a_tools_own_and_nested_model_usage_go_on_its_result_message() {
    let spender = TestTool::new("spender", |_, _, _| async {
        Ok(ToolOutput {
            usage: Some(usage(5, 0.5)),
            ..ToolOutput::text("spent")
        })
    })
    .arc();
    let faux = Faux::new();
    faux.push_tools(&[
        ("c1", "nesting", json!({})),
        ("c2", "spender", json!({})),
        ("c3", "free", json!({})),
    ]);
    faux.push_text("done");
    let free = TestTool::new("free", |_, _, _| async { Ok(ToolOutput::text("free")) }).arc();
    let nesting: Arc<dyn pi_agent::AgentTool> = Arc::new(Nesting {
        spender: Arc::clone(&spender),
    });
    let agent = agent_with(&faux, vec![nesting, spender, free]);
    agent.prompt("x").await.unwrap();
    let usages: Vec<(String, Option<Value>)> = faux.calls()[1]
        .context
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(t) => Some((t.tool_call_id.clone(), t.extra.get("usage").cloned())),
            _ => None,
        })
        .collect();
    let cost = |(_, u): &(String, Option<Value>)| u.as_ref().map(|u| (u["input"].clone(), u["cost"]["total"].clone()));
    assert_eq!(usages.len(), 3, "{usages:?}");
    assert_eq!(cost(&usages[0]), Some((json!(15), json!(0.75))), "{usages:?}");
    assert_eq!(cost(&usages[1]), Some((json!(5), json!(0.5))), "{usages:?}");
    assert_eq!(cost(&usages[2]), None, "{usages:?}");
}
