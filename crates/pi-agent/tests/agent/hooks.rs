//! Hooks: context shaping, keys, tool interception, turn boundaries, failures.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_agent::{
    AfterToolCall, AgentEvent, AgentHooks, AgentMessage, BeforeToolCall, CustomMessage, HookError, NextTurn,
    ToolCallContext, ToolOutput, TurnContext,
};
use pi_ai::{Content, Message, StopReason, ThinkingLevel};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::faux::*;

#[derive(Default)]
struct Hooks {
    fail_transform: bool,
    fail_key: bool,
    key_calls: Mutex<Vec<String>>,
    stop_after_turn: bool,
    next_turn_model: Option<String>,
}

#[async_trait]
impl AgentHooks for Hooks {
    async fn transform_context(
        &self,
        messages: &[AgentMessage],
        _cancel: &CancellationToken,
    ) -> Result<Option<Vec<AgentMessage>>, HookError> {
        if self.fail_transform {
            return Err(HookError::new("context hook exploded"));
        }
        // Keep only the last message, to show the transform reaches the request.
        Ok(Some(messages.last().cloned().into_iter().collect()))
    }

    async fn convert_to_llm(&self, messages: &[AgentMessage]) -> Result<Vec<Message>, HookError> {
        Ok(messages
            .iter()
            .map(|m| match m {
                AgentMessage::Llm(m) => m.clone(),
                AgentMessage::Custom(c) => Message::user_text(format!("[{}]", c.role)),
            })
            .collect())
    }

    async fn get_api_key(&self, provider: &str) -> Result<Option<String>, HookError> {
        self.key_calls.lock().unwrap().push(provider.to_string());
        if self.fail_key {
            return Err(HookError::new(format!("No API key found for \"{provider}\".")));
        }
        Ok(Some(format!("key-{}", self.key_calls.lock().unwrap().len())))
    }

    async fn prepare_next_turn(&self, _turn: TurnContext<'_>) -> Result<Option<NextTurn>, HookError> {
        Ok(self.next_turn_model.as_ref().map(|id| NextTurn {
            model: Some(model(id)),
            thinking_level: Some(ThinkingLevel::High),
            ..Default::default()
        }))
    }

    async fn should_stop_after_turn(&self, _turn: TurnContext<'_>) -> Result<bool, HookError> {
        Ok(self.stop_after_turn)
    }
}

#[tokio::test]
async fn transform_then_convert_shape_the_request_and_keys_are_asked_per_call() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "echo", json!({"text": "x"}))]);
    faux.push_text("done");
    let agent = agent_with(&faux, vec![echo_tool()]);
    let hooks = Arc::new(Hooks::default());
    agent.set_hooks(hooks.clone());
    let mut fields = Map::new();
    fields.insert("command".into(), json!("ls"));
    agent
        .prompt_messages(vec![CustomMessage::new("bashExecution", fields).into()])
        .await
        .unwrap();

    let calls = faux.calls();
    assert_eq!(calls.len(), 2);
    // transform kept only the last message; convert turned the custom role into user text.
    assert_eq!(calls[0].context.messages.len(), 1);
    match &calls[0].context.messages[0] {
        Message::User(u) => assert_eq!(u.content.text(), "[bashExecution]"),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(calls[1].context.messages[0].role(), "toolResult");
    assert_eq!(*hooks.key_calls.lock().unwrap(), vec!["faux", "faux"]);
    assert_eq!(calls[0].api_key.as_deref(), Some("key-1"));
    assert_eq!(calls[1].api_key.as_deref(), Some("key-2"));
    // The custom message stays in the transcript as it was.
    assert_eq!(agent.messages()[0].role(), "bashExecution");
}

#[tokio::test]
async fn default_conversion_drops_custom_messages_and_payload_hook_reaches_the_stream() {
    let faux = Faux::new();
    faux.push_text("ok");
    let agent = agent_with(&faux, vec![]);
    agent.update_stream_options(|o| {
        o.on_payload = Some(Arc::new(|_: &Value, _: &pi_ai::Model| -> Option<Value> { None }));
        o.api_key = Some("fallback".into());
    });
    agent.set_thinking_level(ThinkingLevel::Low);
    agent.append_message(CustomMessage::new("custom", Map::new()));
    agent.prompt("hi").await.unwrap();
    let call = &faux.calls()[0];
    assert_eq!(call.context.messages.len(), 1);
    assert!(call.has_payload_hook);
    assert_eq!(call.api_key.as_deref(), Some("fallback"));
    assert_eq!(call.reasoning, Some(ThinkingLevel::Low));
}

#[tokio::test]
async fn a_failing_hook_ends_the_run_with_a_synthetic_error_message() {
    for (hooks, text) in [
        (
            Hooks {
                fail_transform: true,
                ..Default::default()
            },
            "context hook exploded",
        ),
        (
            Hooks {
                fail_key: true,
                ..Default::default()
            },
            "No API key found for \"faux\".",
        ),
    ] {
        let faux = Faux::new();
        let agent = agent_with(&faux, vec![]);
        agent.set_hooks(Arc::new(hooks));
        let rec = Recorder::attach(&agent);
        agent.prompt("go").await.unwrap();
        assert_eq!(
            rec.lines(),
            vec![
                "agent_start",
                "turn_start",
                "message_start user",
                "message_end user",
                "agent_end [assistant]",
            ]
        );
        assert!(faux.calls().is_empty());
        let last = agent.messages().pop().unwrap();
        let last = last.as_assistant().unwrap().clone();
        assert_eq!(last.stop_reason, StopReason::Error);
        assert_eq!(last.error_message.as_deref(), Some(text));
        assert_eq!(last.content, vec![Content::text("")]);
        assert_eq!(agent.error_message().as_deref(), Some(text));
        assert!(!agent.is_streaming());
    }
}

#[tokio::test]
async fn should_stop_after_turn_stops_at_the_boundary() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "echo", json!({"text": "x"}))]);
    faux.push_text("never asked for");
    let agent = agent_with(&faux, vec![echo_tool()]);
    agent.set_hooks(Arc::new(Hooks {
        stop_after_turn: true,
        ..Hooks::default()
    }));
    agent.follow_up(AgentMessage::user_text("not now"));
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        rec.outline()[6..],
        [
            "tool_start c1",
            "tool_end c1",
            "message_start toolResult c1",
            "message_end toolResult c1",
            "turn_end toolUse [c1]",
            "agent_end [user,assistant,toolResult]",
        ]
    );
    assert_eq!(faux.calls().len(), 1);
    assert!(agent.has_queued_messages());
}

#[tokio::test]
async fn prepare_next_turn_replaces_model_and_thinking_for_the_next_call() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "echo", json!({"text": "x"}))]);
    faux.push_text("done");
    let agent = agent_with(&faux, vec![echo_tool()]);
    agent.set_hooks(Arc::new(Hooks {
        next_turn_model: Some("bigger-model".into()),
        ..Hooks::default()
    }));
    agent.prompt("go").await.unwrap();
    let calls = faux.calls();
    assert_eq!(calls[0].model, "faux-model");
    assert_eq!(calls[0].reasoning, None);
    assert_eq!(calls[1].model, "bigger-model");
    assert_eq!(calls[1].reasoning, Some(ThinkingLevel::High));
    // The agent's own settings are untouched.
    assert_eq!(agent.model().id, "faux-model");
}

/// Blocks `echo` with "x" as text, rewrites "rewrite", replaces results of everything else.
struct Gate {
    fail_after: bool,
}

#[async_trait]
impl AgentHooks for Gate {
    async fn before_tool_call(
        &self,
        call: ToolCallContext<'_>,
        _cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCall>, HookError> {
        match call.args["text"].as_str() {
            Some("block") => Ok(Some(BeforeToolCall::block("not allowed here"))),
            Some("block-silently") => Ok(Some(BeforeToolCall {
                block: true,
                ..Default::default()
            })),
            Some("throw") => Err(HookError::new("hook threw")),
            Some("rewrite") => Ok(Some(BeforeToolCall {
                args: Some(json!({"text": "rewritten"})),
                ..Default::default()
            })),
            _ => Ok(None),
        }
    }

    async fn after_tool_call(
        &self,
        call: ToolCallContext<'_>,
        result: &ToolOutput,
        _is_error: bool,
        _cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCall>, HookError> {
        if self.fail_after {
            return Err(HookError::new("after hook threw"));
        }
        if call.args["text"] == "replace" {
            return Ok(Some(AfterToolCall {
                content: Some(vec![Content::text(format!("replaced {}", text_of(&result.content)))]),
                details: Some(json!({"n": 1})),
                is_error: Some(true),
                terminate: None,
            }));
        }
        Ok(None)
    }
}

#[tokio::test]
async fn before_and_after_tool_call_hooks() {
    let faux = Faux::new();
    faux.push_tools(&[
        ("c1", "echo", json!({"text": "block"})),
        ("c2", "echo", json!({"text": "block-silently"})),
        ("c3", "echo", json!({"text": "throw"})),
        ("c4", "echo", json!({"text": "rewrite"})),
        ("c5", "echo", json!({"text": "replace"})),
    ]);
    faux.push_text("done");
    let agent = agent_with(&faux, vec![echo_tool()]);
    agent.set_hooks(Arc::new(Gate { fail_after: false }));
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();

    let results: Vec<(String, bool, Option<Value>)> = faux.calls()[1]
        .context
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(t) => Some((text_of(&t.content), t.is_error, t.details.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        vec![
            ("not allowed here".into(), true, Some(json!({}))),
            ("Tool execution was blocked".into(), true, Some(json!({}))),
            ("hook threw".into(), true, Some(json!({}))),
            ("rewritten".into(), false, None),
            ("replaced replace".into(), true, Some(json!({"n": 1}))),
        ]
    );
    // Blocked calls end during preparation, before the allowed ones run.
    let outline = rec.outline();
    let ends: Vec<&String> = outline.iter().filter(|l| l.starts_with("tool_")).collect();
    assert_eq!(
        ends[..8],
        [
            "tool_start c1",
            "tool_end c1 error",
            "tool_start c2",
            "tool_end c2 error",
            "tool_start c3",
            "tool_end c3 error",
            "tool_start c4",
            "tool_start c5",
        ]
    );
    let mut rest: Vec<&str> = ends[8..].iter().map(|s| s.as_str()).collect();
    rest.sort();
    assert_eq!(rest, ["tool_end c4", "tool_end c5 error"]);
}

#[tokio::test]
async fn a_failing_after_hook_turns_the_result_into_an_error() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "echo", json!({"text": "fine"}))]);
    faux.push_text("done");
    let agent = agent_with(&faux, vec![echo_tool()]);
    agent.set_hooks(Arc::new(Gate { fail_after: true }));
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    let end = rec
        .events()
        .into_iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, is_error, .. } => Some((text_of(&result.content), is_error)),
            _ => None,
        })
        .unwrap();
    assert_eq!(end, ("after hook threw".to_string(), true));
}
