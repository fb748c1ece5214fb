//! Unit tests of the faux provider.
use super::*;
use serde_json::json;
use std::sync::Arc;

fn names(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(AssistantMessageEvent::type_name).collect()
}

async fn collect(mut stream: AssistantStream) -> Vec<AssistantMessageEvent> {
    let mut events = Vec::new();
    while let Some(e) = stream.next_event().await {
        events.push(e);
    }
    events
}

fn context(text: &str) -> Context {
    Context {
        system_prompt: Some("sys".into()),
        messages: vec![Message::user_text(text)],
        tools: vec![],
    }
}

#[tokio::test]
async fn streams_blocks_in_order_and_finishes_with_done() {
    let faux = FauxProvider::new(FauxOptions {
        chunk_chars: Some(4),
        ..Default::default()
    });
    faux.set_responses(vec![faux_reply(
        vec![
            faux_thinking("plan it"),
            faux_text("Hello world"),
            faux_tool_call_with_id("c1", "read", json!({"path": "a.txt"})),
        ],
        StopReason::ToolUse,
    )
    .into()]);
    let model = faux.model().clone();
    let events = collect(faux.stream_fn()(&model, &context("hi"), StreamOptions::default())).await;
    let n = names(&events);
    assert_eq!(n.first(), Some(&"start"));
    assert_eq!(n.last(), Some(&"done"));
    let thinking_end = n.iter().position(|e| *e == "thinking_end").expect("thinking_end");
    let text_start = n.iter().position(|e| *e == "text_start").expect("text_start");
    assert!(thinking_end < text_start);
    assert_eq!(n.iter().filter(|e| **e == "text_delta").count(), 3, "11 chars in 4s");
    let args: String = events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolCallDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(args, r#"{"path":"a.txt"}"#);
    let AssistantMessageEvent::Done { reason, message } = events.last().expect("last") else {
        panic!("expected done");
    };
    assert_eq!(*reason, StopReason::ToolUse);
    assert_eq!(message.model, "faux-1");
    assert_eq!(message.api, "faux");
    assert_eq!(message.tool_calls().next().map(|t| t.id.as_str()), Some("c1"));
    // The accumulator rebuilds the same message from the events.
    let mut partial = crate::events::PartialMessage::new();
    for e in &events[..events.len() - 1] {
        partial.apply(e);
    }
    assert_eq!(partial.snapshot().content, message.content);
}

#[tokio::test]
async fn scripted_error_streams_content_then_error() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![faux_error(vec![faux_text("partial")], "boom").into()]);
    let model = faux.model().clone();
    let events = collect(faux.stream(&model, &context("hi"), StreamOptions::default())).await;
    assert_eq!(
        names(&events),
        ["start", "text_start", "text_delta", "text_end", "error"]
    );
    let AssistantMessageEvent::Error { reason, error } = &events[4] else {
        panic!("expected error");
    };
    assert_eq!(*reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("boom"));
    assert_eq!(error.text(), "partial");
}

#[tokio::test]
async fn empty_queue_is_an_error_reply() {
    let faux = FauxProvider::new(FauxOptions::default());
    let model = faux.model().clone();
    let msg = faux
        .stream(&model, &context("hi"), StreamOptions::default())
        .result()
        .await;
    assert_eq!(msg.stop_reason, StopReason::Error);
    assert_eq!(msg.error_message.as_deref(), Some("No more faux responses queued"));
    assert_eq!(faux.call_count(), 1);
}

#[tokio::test]
async fn dynamic_steps_see_the_request() {
    let faux = FauxProvider::new(FauxOptions::default());
    let step: FauxReplyFn = Arc::new(|ctx: &Context, _: &StreamOptions, call: u64, _: &Model| {
        let last = ctx.messages.last().map(|m| match m {
            Message::User(u) => u.content.text(),
            _ => String::new(),
        });
        faux_reply(
            vec![faux_text(format!("call {call}: {}", last.unwrap_or_default()))],
            StopReason::Stop,
        )
    });
    faux.append_responses(vec![FauxStep::Dynamic(step)]);
    assert_eq!(faux.pending_responses(), 1);
    let model = faux.model().clone();
    let msg = faux
        .stream(&model, &context("ping"), StreamOptions::default())
        .result()
        .await;
    assert_eq!(msg.text(), "call 1: ping");
    assert_eq!(faux.pending_responses(), 0);
}

#[tokio::test]
async fn cancelled_before_start_is_aborted() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![faux_reply(vec![faux_text("never")], StopReason::Stop).into()]);
    let options = StreamOptions::default();
    options.cancel.cancel();
    let model = faux.model().clone();
    let events = collect(faux.stream(&model, &context("hi"), options)).await;
    assert_eq!(names(&events), ["error"]);
    let AssistantMessageEvent::Error { reason, error } = &events[0] else {
        panic!("expected error");
    };
    assert_eq!(*reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    assert!(error.content.is_empty());
}

#[tokio::test]
async fn cancelled_mid_stream_keeps_what_streamed() {
    let faux = FauxProvider::new(FauxOptions {
        chunk_chars: Some(2),
        ..Default::default()
    });
    faux.set_responses(vec![faux_reply(vec![faux_text("abcdefgh")], StopReason::Stop).into()]);
    let options = StreamOptions::default();
    let cancel = options.cancel.clone();
    let model = faux.model().clone();
    let mut stream = faux.stream(&model, &context("hi"), options);
    let mut seen = Vec::new();
    while let Some(e) = stream.next_event().await {
        if matches!(e, AssistantMessageEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        seen.push(e);
    }
    let Some(AssistantMessageEvent::Error { reason, error }) = seen.last() else {
        panic!("expected an abort, got {:?}", names(&seen));
    };
    assert_eq!(*reason, StopReason::Aborted);
    assert!(error.text().starts_with("ab"), "{}", error.text());
    assert!(error.text().len() < 8);
}

#[test]
fn works_without_a_runtime() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![faux_reply(vec![faux_text("hi")], StopReason::Stop).into()]);
    let model = faux.model().clone();
    let stream = faux.stream(&model, &context("x"), StreamOptions::default());
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let msg = rt.block_on(stream.result());
    assert_eq!(msg.text(), "hi");
}

#[tokio::test]
async fn usage_is_estimated_with_session_cache() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![
        faux_reply(vec![faux_text("12345678")], StopReason::Stop).into(),
        faux_reply(vec![faux_text("x")], StopReason::Stop).into(),
    ]);
    let model = faux.model().clone();
    let options = StreamOptions {
        session_id: Some("s1".into()),
        ..Default::default()
    };
    let first_ctx = context("hello");
    let first = faux.stream(&model, &first_ctx, options.clone()).result().await;
    // "system:sys\n\nuser:hello" is 22 units: 6 tokens, all written to the cache.
    assert_eq!(
        (
            first.usage.input,
            first.usage.output,
            first.usage.cache_read,
            first.usage.cache_write
        ),
        (6, 2, 0, 6)
    );
    let mut second_ctx = first_ctx.clone();
    second_ctx.messages.push(Message::Assistant(Arc::new(first)));
    let second = faux.stream(&model, &second_ctx, options).result().await;
    assert_eq!(second.usage.cache_read, 6);
    assert_eq!(
        second.usage.total_tokens,
        second.usage.input + 1 + 6 + second.usage.cache_write
    );
    let scripted = Usage {
        input: 7,
        ..Default::default()
    };
    let mut reply = faux_reply(vec![faux_text("y")], StopReason::Stop);
    reply.usage = scripted;
    faux.set_responses(vec![reply.into()]);
    let third = faux
        .stream(&model, &context("z"), StreamOptions::default())
        .result()
        .await;
    assert_eq!(third.usage, scripted);
}

#[test]
fn custom_models_and_ids() {
    let faux = FauxProvider::new(FauxOptions {
        provider: Some("mock".into()),
        models: vec![FauxModel {
            id: "m2".into(),
            reasoning: true,
            ..Default::default()
        }],
        ..Default::default()
    });
    let m = faux.get_model("m2").expect("m2");
    assert_eq!(
        (m.name.as_str(), m.provider.as_str(), m.api.as_str()),
        ("m2", "mock", "faux")
    );
    assert!(m.reasoning);
    assert_eq!(m.context_window, 128_000);
    let (Content::ToolCall(a), Content::ToolCall(b)) = (faux_tool_call("t", json!({})), faux_tool_call("t", json!({})))
    else {
        panic!("tool calls");
    };
    assert_ne!(a.id, b.id);
}
