//! Runs: event order, queues, abort, the agent's state and its refusals.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent::{Agent, AgentError, AgentEvent, AgentMessage, QueueMode, ToolOutput};
use pi_ai::{AssistantMessageEvent, Message, StopReason};
use serde_json::json;

use crate::faux::*;

#[tokio::test]
async fn plain_reply_event_order() {
    let faux = Faux::new();
    faux.push_text("hello there");
    let agent = agent_with(&faux, vec![]);
    let rec = Recorder::attach(&agent);

    agent.prompt("hi").await.unwrap();

    assert_eq!(
        rec.lines(),
        vec![
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant pending",
            "message_update text_start",
            "message_update text_delta",
            "message_update text_end",
            "message_end assistant stop",
            "turn_end stop []",
            "agent_end [user,assistant]",
        ]
    );
    assert!(!agent.is_streaming());
    assert!(agent.streaming_message().is_none());
    let messages = agent.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].as_assistant().unwrap().text(), "hello there");
    let call = &faux.calls()[0];
    assert_eq!(call.context.system_prompt.as_deref(), Some("You are a test."));
    assert_eq!(call.context.messages.len(), 1);
    assert_eq!(call.reasoning, None);
}

#[tokio::test]
async fn message_update_carries_the_partial_as_of_the_event() {
    let faux = Faux::new();
    let mut events = text_events("ab");
    // Split the delta in two so the partial grows between updates.
    events[2] = AssistantMessageEvent::TextDelta {
        content_index: 0,
        delta: "a".into(),
    };
    events.insert(
        3,
        AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: "b".into(),
        },
    );
    faux.push_events(events);
    let agent = agent_with(&faux, vec![]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let a = agent.clone();
    agent.subscribe_fn(move |e| {
        if let AgentEvent::MessageUpdate { message, .. } = e {
            s.lock().unwrap().push(message.snapshot().text());
            // The agent's state shows the same message while the event is delivered.
            let state = a.streaming_message().unwrap();
            assert_eq!(state.as_assistant().unwrap().text(), message.snapshot().text());
        }
    });
    agent.prompt("x").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec!["", "a", "ab", "ab"]);
}

#[tokio::test]
async fn follow_ups_run_after_the_agent_would_stop() {
    let faux = Faux::new();
    faux.push_text("first");
    faux.push_text("second");
    faux.push_text("third");
    let agent = agent_with(&faux, vec![]);
    agent.follow_up(AgentMessage::user_text("more 1"));
    agent.follow_up(AgentMessage::user_text("more 2"));
    let rec = Recorder::attach(&agent);

    agent.prompt("go").await.unwrap();

    assert_eq!(
        rec.outline(),
        vec![
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant pending",
            "message_end assistant stop",
            "turn_end stop []",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant pending",
            "message_end assistant stop",
            "turn_end stop []",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant pending",
            "message_end assistant stop",
            "turn_end stop []",
            "agent_end [user,assistant,user,assistant,user,assistant]",
        ]
    );
    assert_eq!(faux.calls().len(), 3);
}

#[tokio::test]
async fn queue_mode_all_delivers_every_follow_up_at_once() {
    let faux = Faux::new();
    faux.push_text("first");
    faux.push_text("second");
    let agent = agent_with(&faux, vec![]);
    agent.set_follow_up_mode(QueueMode::All);
    agent.follow_up(AgentMessage::user_text("a"));
    agent.follow_up(AgentMessage::user_text("b"));
    agent.prompt("go").await.unwrap();
    let calls = faux.calls();
    assert_eq!(calls.len(), 2);
    // Second call: go, first, a, b.
    assert_eq!(calls[1].context.messages.len(), 4);
}

#[tokio::test]
async fn steering_waits_for_the_whole_tool_batch() {
    let faux = Faux::new();
    faux.push_tools(&[
        ("c1", "echo", json!({"text": "one"})),
        ("c2", "echo", json!({"text": "two"})),
    ]);
    faux.push_text("steered reply");
    let agent = agent_with(&faux, vec![echo_tool()]);
    let a = agent.clone();
    agent.subscribe_fn(move |e| {
        if let AgentEvent::ToolExecutionStart { tool_call_id, .. } = e {
            if tool_call_id == "c1" {
                a.steer(AgentMessage::user_text("change of plan"));
            }
        }
    });
    let rec = Recorder::attach(&agent);

    agent.prompt("go").await.unwrap();

    assert_eq!(
        rec.outline(),
        vec![
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant pending",
            "message_end assistant toolUse",
            "tool_start c1",
            "tool_start c2",
            "tool_end c1",
            "tool_end c2",
            "message_start toolResult c1",
            "message_end toolResult c1",
            "message_start toolResult c2",
            "message_end toolResult c2",
            "turn_end toolUse [c1,c2]",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant pending",
            "message_end assistant stop",
            "turn_end stop []",
            "agent_end [user,assistant,toolResult,toolResult,user,assistant]",
        ]
    );
    // Both tools ran for real; the steering message came after their results.
    let ctx = &faux.calls()[1].context;
    let roles: Vec<&str> = ctx.messages.iter().map(Message::role).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "toolResult", "user"]);
}

#[tokio::test]
async fn steering_queued_before_the_run_is_injected_before_the_first_call() {
    let faux = Faux::new();
    faux.push_text("ok");
    let agent = agent_with(&faux, vec![]);
    agent.steer(AgentMessage::user_text("early"));
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        &rec.outline()[..6],
        [
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start user",
            "message_end user"
        ]
    );
    assert_eq!(faux.calls()[0].context.messages.len(), 2);
}

#[tokio::test]
async fn prompt_while_running_fails_with_steer_advice() {
    let faux = Faux::new();
    faux.push_hang(vec![AssistantMessageEvent::Start {
        partial: base_message(),
    }]);
    let agent = agent_with(&faux, vec![]);
    let run = agent.prompt("first");
    let err = agent.prompt("second").await.unwrap_err();
    assert_eq!(err, AgentError::AlreadyPrompting);
    assert!(err.to_string().contains("Use steer() or followUp()"));
    assert_eq!(
        agent.continue_run().await.unwrap_err().to_string(),
        "Agent is already processing. Wait for completion before continuing."
    );
    agent.abort();
    run.await.unwrap();
    assert!(!agent.is_streaming());
}

#[tokio::test]
async fn continue_rules() {
    let faux = Faux::new();
    let agent = agent_with(&faux, vec![]);
    assert_eq!(agent.continue_run().await.unwrap_err(), AgentError::NoMessages);

    faux.push_text("one");
    agent.prompt("go").await.unwrap();
    assert_eq!(
        agent.continue_run().await.unwrap_err().to_string(),
        "Cannot continue from message role: assistant"
    );

    // After an assistant message, queued steering becomes the prompt.
    faux.push_text("two");
    agent.steer(AgentMessage::user_text("next"));
    let rec = Recorder::attach(&agent);
    agent.continue_run().await.unwrap();
    assert_eq!(
        rec.outline()[..4],
        ["agent_start", "turn_start", "message_start user", "message_end user"]
    );
    assert_eq!(agent.messages().len(), 4);

    // From a user message, continue streams without a new prompt.
    agent.append_message(AgentMessage::user_text("again"));
    faux.push_text("three");
    let rec = Recorder::attach(&agent);
    agent.continue_run().await.unwrap();
    assert_eq!(
        rec.outline(),
        [
            "agent_start",
            "turn_start",
            "message_start assistant pending",
            "message_end assistant stop",
            "turn_end stop []",
            "agent_end [assistant]"
        ]
    );
}

#[tokio::test]
async fn a_run_works_on_a_snapshot_of_the_context() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "echo", json!({"text": "x"}))]);
    faux.push_text("done");
    let agent = agent_with(&faux, vec![echo_tool()]);
    let a = agent.clone();
    agent.subscribe_fn(move |e| {
        if matches!(e, AgentEvent::ToolExecutionStart { .. }) {
            a.set_system_prompt("changed");
            a.set_tools(vec![]);
        }
    });
    agent.prompt("go").await.unwrap();
    let calls = faux.calls();
    assert_eq!(calls[1].context.system_prompt.as_deref(), Some("You are a test."));
    assert_eq!(calls[1].context.tools.len(), 1);
    assert_eq!(agent.system_prompt(), "changed");
}

#[tokio::test]
async fn abort_during_stream_ends_aborted_and_returns_to_idle() {
    let faux = Faux::new();
    let mut events = text_events("partial text");
    events.truncate(3); // start, text_start, text_delta
    faux.push_hang(events);
    let agent = agent_with(&faux, vec![]);
    let a = agent.clone();
    agent.subscribe_fn(move |e| {
        if let AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { .. },
            ..
        } = e
        {
            a.abort();
        }
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();

    assert_eq!(
        rec.outline(),
        vec![
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant pending",
            "message_end assistant aborted",
            "turn_end aborted []",
            "agent_end [user,assistant]",
        ]
    );
    let last = agent.messages().pop().unwrap();
    let last = last.as_assistant().unwrap();
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.text(), "partial text");
    assert_eq!(agent.error_message().as_deref(), Some("Request was aborted"));
    assert!(!agent.is_streaming());
    assert!(agent.cancel_token().is_none());
    agent.wait_for_idle().await;
}

#[tokio::test]
async fn abort_during_tools_cancels_them_and_ends_the_run() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "wait", json!({}))]);
    let saw_cancel = Arc::new(Mutex::new(false));
    let flag = saw_cancel.clone();
    let wait = TestTool::new("wait", move |_, cancel, _| {
        let flag = flag.clone();
        async move {
            cancel.cancelled().await;
            *flag.lock().unwrap() = true;
            Err(pi_agent::ToolError::new("Operation aborted"))
        }
    })
    .arc();
    let agent = agent_with(&faux, vec![wait]);
    agent.follow_up(AgentMessage::user_text("stays queued"));
    let a = agent.clone();
    agent.subscribe_fn(move |e| {
        if matches!(e, AgentEvent::ToolExecutionStart { .. }) {
            a.abort();
        }
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();

    assert!(*saw_cancel.lock().unwrap());
    assert_eq!(
        rec.outline(),
        vec![
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant pending",
            "message_end assistant toolUse",
            "tool_start c1",
            "tool_end c1 error",
            "message_start toolResult c1 error",
            "message_end toolResult c1 error",
            "turn_end toolUse [c1]",
            "turn_start",
            "message_start assistant aborted",
            "message_end assistant aborted",
            "turn_end aborted []",
            "agent_end [user,assistant,toolResult,assistant]",
        ]
    );
    // No second LLM call was made, and the queued follow-up was left alone.
    assert_eq!(faux.calls().len(), 1);
    assert!(agent.has_queued_messages());
    assert!(!agent.is_streaming());
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_ignores_abort_is_dropped_after_the_grace_period() {
    let faux = Faux::new();
    faux.push_tools(&[("c1", "stubborn", json!({}))]);
    let stubborn = TestTool::new("stubborn", |_, _, _| async move {
        futures::future::pending::<()>().await;
        Ok(ToolOutput::text("never"))
    })
    .arc();
    let agent = agent_with(&faux, vec![stubborn]);
    let a = agent.clone();
    agent.subscribe_fn(move |e| {
        if matches!(e, AgentEvent::ToolExecutionStart { .. }) {
            a.abort();
        }
    });
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
    assert_eq!(end, ("Operation aborted".to_string(), true));
    assert!(!agent.is_streaming());
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_ignores_abort_is_dropped_after_the_grace_period() {
    let faux = Faux::new();
    let mut events = text_events("so far");
    events.truncate(3);
    faux.push_stuck(events);
    let agent = agent_with(&faux, vec![]);
    let a = agent.clone();
    agent.subscribe_fn(move |e| {
        if let AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { .. },
            ..
        } = e
        {
            a.abort();
        }
    });
    agent.prompt("go").await.unwrap();
    let last = agent.messages().pop().unwrap();
    let last = last.as_assistant().unwrap().clone();
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.text(), "so far");
    assert_eq!(last.error_message.as_deref(), Some("Request was aborted"));
}

#[tokio::test]
async fn dropping_the_run_future_returns_the_agent_to_idle() {
    let faux = Faux::new();
    let agent = agent_with(&faux, vec![]);
    let run = agent.prompt("go");
    assert!(agent.is_streaming());
    drop(run);
    assert!(!agent.is_streaming());
    tokio::time::timeout(Duration::from_secs(5), agent.wait_for_idle())
        .await
        .unwrap();
    faux.push_text("fine");
    agent.prompt("again").await.unwrap();
}

#[tokio::test]
async fn wait_for_idle_resolves_after_agent_end_listeners() {
    let faux = Faux::new();
    faux.push_text("x");
    let agent = agent_with(&faux, vec![]);
    let ended = Arc::new(Mutex::new(false));
    let e2 = ended.clone();
    agent.subscribe_fn(move |e| {
        if matches!(e, AgentEvent::AgentEnd { .. }) {
            *e2.lock().unwrap() = true;
        }
    });
    // The run is registered when `prompt` is called, so waiting cannot miss it.
    let handle = tokio::spawn(agent.prompt("go"));
    assert!(agent.is_streaming());
    agent.wait_for_idle().await;
    assert!(*ended.lock().unwrap());
    assert!(!agent.is_streaming());
    handle.await.unwrap().unwrap();
}

#[tokio::test]
async fn unsubscribe_stops_delivery() {
    let faux = Faux::new();
    faux.push_text("x");
    faux.push_text("y");
    let agent = agent_with(&faux, vec![]);
    let count = Arc::new(Mutex::new(0));
    let c = count.clone();
    let id = agent.subscribe_fn(move |_| *c.lock().unwrap() += 1);
    agent.prompt("a").await.unwrap();
    let after_first = *count.lock().unwrap();
    assert!(after_first > 0);
    assert!(agent.unsubscribe(id));
    agent.prompt("b").await.unwrap();
    assert_eq!(*count.lock().unwrap(), after_first);
}

#[tokio::test]
async fn error_reply_ends_the_run_without_follow_ups() {
    let faux = Faux::new();
    // No script: the faux provider answers with an error message.
    let agent = agent_with(&faux, vec![]);
    agent.follow_up(AgentMessage::user_text("later"));
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        rec.outline()[4..],
        [
            "message_start assistant error",
            "message_end assistant error",
            "turn_end error []",
            "agent_end [user,assistant]"
        ]
    );
    assert_eq!(agent.error_message().as_deref(), Some("faux: no reply scripted"));
    assert!(agent.has_queued_messages());
}

/// Slow listeners hold the run (backpressure) and see events strictly one at a time.
#[tokio::test]
async fn async_listeners_are_awaited_in_order() {
    struct Slow(Arc<Mutex<Vec<String>>>);
    #[async_trait::async_trait]
    impl pi_agent::AgentListener for Slow {
        async fn on_event(&self, event: &AgentEvent, _cancel: &tokio_util::sync::CancellationToken) {
            self.0.lock().unwrap().push(format!("begin {}", event.type_name()));
            tokio::task::yield_now().await;
            self.0.lock().unwrap().push(format!("end {}", event.type_name()));
        }
    }
    let faux = Faux::new();
    faux.push_tools(&[
        ("c1", "echo", json!({"text": "1"})),
        ("c2", "echo", json!({"text": "2"})),
    ]);
    faux.push_text("done");
    let agent: Agent = agent_with(&faux, vec![echo_tool()]);
    let log = Arc::new(Mutex::new(Vec::new()));
    agent.subscribe(Arc::new(Slow(log.clone())));
    agent.prompt("go").await.unwrap();
    let log = log.lock().unwrap();
    for pair in log.chunks(2) {
        let a = pair[0].strip_prefix("begin ").unwrap();
        let b = pair[1].strip_prefix("end ").unwrap();
        assert_eq!(a, b, "events interleaved: {log:?}");
    }
}
