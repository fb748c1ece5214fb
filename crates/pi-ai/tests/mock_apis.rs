//! `stream_simple` against the project's mock LLM server, for all four wire APIs: text, thinking,
//! parallel tool calls, history replay (compared with the TypeScript pi's request bodies), HTTP
//! errors and retries, broken streams, malformed data, cancellation and refused connections.
//! Every stream is also checked for the event-sequence invariants consumers rely on.

// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_ai::{
    stream_simple, AssistantMessage, AssistantMessageEvent, AssistantStream, Content, Context, InputKind, Message,
    Model, ModelCost, PartialMessage, StopReason, StreamOptions, ThinkingLevel, Tool, ToolResultMessage,
};
use pi_test_support::{Api, Fault, FaultKind, MockServer, Script, Turn, UsageSpec};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

// ---- models, contexts, options ------------------------------------------------------------

fn api_name(api: Api) -> &'static str {
    match api {
        Api::Openai => "openai-completions",
        Api::Responses => "openai-responses",
        Api::Anthropic => "anthropic-messages",
        Api::Mistral => "mistral-conversations",
        Api::Google => "google-generative-ai",
        Api::Bedrock => "bedrock-converse-stream",
    }
}

fn provider(api: Api) -> &'static str {
    match api {
        Api::Openai => "mock-openai",
        Api::Responses => "mock-responses",
        Api::Anthropic => "mock-anthropic",
        Api::Mistral => "mock-mistral",
        Api::Google => "mock-google",
        Api::Bedrock => "mock-bedrock",
    }
}

fn model_at(api: Api, base_url: String) -> Model {
    Model {
        id: "mock-model".into(),
        name: "Mock".into(),
        api: api_name(api).into(),
        provider: provider(api).into(),
        base_url,
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: Vec::new(),
        },
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
    }
}

fn model(api: Api, server: &MockServer) -> Model {
    model_at(api, server.base_url_for(api))
}

/// The golden runs' reasoning model.
fn thinker(api: Api, server: &MockServer) -> Model {
    Model {
        id: "mock-thinker".into(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        context_window: 200_000,
        max_tokens: 32_000,
        ..model(api, server)
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("sk-test".into()),
        max_retry_delay_ms: Some(5_000),
        ..Default::default()
    }
}

/// [`options`] with the provider layer's retries on (pi 1.6 leaves them off unless
/// `retry.provider.maxRetries` is set).
fn retrying_options() -> StreamOptions {
    StreamOptions {
        max_retries: Some(2),
        ..options()
    }
}

fn thinking_options() -> StreamOptions {
    StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        ..options()
    }
}

fn context(user: &str) -> Context {
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![Message::user_text(user)],
        tools: vec![],
    }
}

fn tools() -> Vec<Tool> {
    ["read", "bash"]
        .iter()
        .map(|name| Tool {
            constrained_sampling: None,
            name: (*name).into(),
            description: format!("The {name} tool"),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": []}),
        })
        .collect()
}

fn tool_result(call: &pi_ai::ToolCall, text: &str, is_error: bool) -> Message {
    Message::ToolResult(Arc::new(ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: vec![Content::text(text)],
        is_error,
        ..Default::default()
    }))
}

/// An HTTP error status with a short `retry-after-ms`, so retry tests stay fast.
fn http_fault(status: u16, retry_after_ms: Option<u64>) -> Fault {
    Fault {
        kind: FaultKind::Http {
            status,
            message: None,
            retry_after: None,
            retry_after_ms,
        },
        times: None,
    }
}

/// The text most fault tests stream, one piece per word.
const WORDS: &str = "alpha beta gamma delta epsilon zeta eta theta iota kappa";

/// Events each API sends before its second text piece has gone out: a fault cut in here leaves
/// exactly "alpha beta " streamed.
fn after_two_words(api: Api) -> usize {
    match api {
        // role chunk, alpha, beta
        Api::Openai => 3,
        // message_start, ping, content_block_start, alpha, beta
        Api::Anthropic => 5,
        // created, in_progress, output_item.added, content_part.added, alpha, beta
        Api::Responses => 6,
        // one chunk per piece
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => 2,
    }
}

// ---- running a stream and checking its invariants -----------------------------------------

struct Run {
    events: Vec<AssistantMessageEvent>,
    message: AssistantMessage,
}

impl Run {
    fn names(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.type_name()).collect()
    }

    fn is_error(&self) -> bool {
        matches!(self.events.last(), Some(AssistantMessageEvent::Error { .. }))
    }

    fn error(&self) -> &str {
        self.message.error_message.as_deref().unwrap_or_default()
    }
}

/// Drain a stream (bounded in time: a hang is a failure) and check the invariants.
async fn drain(stream: AssistantStream) -> Run {
    drain_checked(stream, Closing::Required).await
}

/// Whether `done` may leave a block without its `*_end` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closing {
    Required,
    /// Documented exceptions only (a truncated Responses stream).
    NotRequired,
}

async fn drain_checked(mut stream: AssistantStream, closing: Closing) -> Run {
    let mut events = Vec::new();
    let deadline = Duration::from_secs(15);
    loop {
        match tokio::time::timeout(deadline, stream.next_event()).await {
            Ok(Some(e)) => events.push(e),
            Ok(None) => break,
            Err(_) => panic!("stream stalled after {:?}", events.last()),
        }
    }
    let message = match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => message.clone(),
        Some(AssistantMessageEvent::Error { error, .. }) => error.clone(),
        other => panic!("stream ended without a terminal event: {other:?}"),
    };
    check_invariants_with(&events, &message, closing);
    Run { events, message }
}

async fn run(model: &Model, context: &Context, options: StreamOptions) -> Run {
    drain(stream_simple(model, context, options)).await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

fn kind_of(content: &Content) -> Option<Kind> {
    match content {
        Content::Text(_) => Some(Kind::Text),
        Content::Thinking(_) => Some(Kind::Thinking),
        Content::ToolCall(_) => Some(Kind::ToolCall),
        _ => None,
    }
}

/// The rules every consumer relies on:
/// * at most one `start`, and it comes before any content event (so exactly one when there is
///   content);
/// * exactly one terminal event, and it is the last;
/// * blocks open in content-index order, deltas and ends name an open block of the same kind,
///   the final message has a block of that kind at every index that was opened;
/// * a `PartialMessage` fed every non-terminal event holds the final message's content.
fn check_invariants(events: &[AssistantMessageEvent], last: &AssistantMessage) {
    check_invariants_with(events, last, Closing::Required);
}

fn check_invariants_with(events: &[AssistantMessageEvent], last: &AssistantMessage, closing: Closing) {
    use AssistantMessageEvent as E;
    let starts = events.iter().filter(|e| matches!(e, E::Start { .. })).count();
    assert!(starts <= 1, "more than one start: {events:?}");
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "exactly one terminal event");
    assert!(events.last().unwrap().is_terminal(), "the terminal event is the last");

    let mut opened: Vec<Kind> = Vec::new();
    let mut open: Vec<bool> = Vec::new();
    let mut started = false;
    let mut partial = PartialMessage::new();
    for event in &events[..events.len() - 1] {
        partial.apply(event);
        let (index, kind, phase) = match event {
            E::Start { partial } => {
                assert!(opened.is_empty(), "start after content");
                assert_eq!(
                    (&partial.api, &partial.provider, &partial.model),
                    (&last.api, &last.provider, &last.model)
                );
                started = true;
                continue;
            }
            E::TextStart { content_index } => (*content_index, Kind::Text, 0),
            E::ThinkingStart { content_index } => (*content_index, Kind::Thinking, 0),
            E::ToolCallStart { content_index, .. } => (*content_index, Kind::ToolCall, 0),
            E::TextDelta { content_index, .. } => (*content_index, Kind::Text, 1),
            E::ThinkingDelta { content_index, .. } => (*content_index, Kind::Thinking, 1),
            E::ToolCallDelta { content_index, .. } => (*content_index, Kind::ToolCall, 1),
            E::TextEnd { content_index, .. } => (*content_index, Kind::Text, 2),
            E::ThinkingEnd { content_index, .. } => (*content_index, Kind::Thinking, 2),
            E::ToolCallEnd { content_index, .. } => (*content_index, Kind::ToolCall, 2),
            E::Done { .. } | E::Error { .. } => unreachable!("terminal events were counted"),
        };
        assert!(started, "{} before start", event.type_name());
        if phase == 0 {
            assert_eq!(index, opened.len(), "blocks open in content-index order");
            opened.push(kind);
            open.push(true);
            continue;
        }
        assert_eq!(
            opened.get(index),
            Some(&kind),
            "{} names a block of its kind",
            event.type_name()
        );
        assert!(open[index], "{} on a closed block", event.type_name());
        if phase == 2 {
            open[index] = false;
            let ended = match event {
                E::TextEnd { content, .. } => Content::Text(content.clone()),
                E::ThinkingEnd { content, .. } => Content::Thinking(content.clone()),
                E::ToolCallEnd { tool_call, .. } => Content::ToolCall(tool_call.clone()),
                _ => unreachable!(),
            };
            if matches!(events.last(), Some(E::Done { .. })) {
                assert_eq!(Some(&ended), last.content.get(index), "end event content is final");
            }
        }
    }
    let final_kinds: Vec<Option<Kind>> = last.content.iter().map(kind_of).collect();
    let opened_kinds: Vec<Option<Kind>> = opened.iter().copied().map(Some).collect();
    assert_eq!(final_kinds, opened_kinds, "final content matches the blocks streamed");
    if matches!(events.last(), Some(E::Done { .. })) && closing == Closing::Required {
        assert!(open.iter().all(|o| !o), "every block is closed before done");
    }
    assert_eq!(
        partial.snapshot().content,
        last.content,
        "the accumulated partial equals the final content"
    );
}

fn text_deltas(run: &Run) -> String {
    run.events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

// ---- per-API test generation --------------------------------------------------------------

/// One test per API for each scenario function, so a failure names the API.
macro_rules! per_api {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use pi_test_support::Api;

            #[tokio::test]
            async fn openai_completions() {
                super::$scenario(Api::Openai).await;
            }

            #[tokio::test]
            async fn openai_responses() {
                super::$scenario(Api::Responses).await;
            }

            #[tokio::test]
            async fn anthropic_messages() {
                super::$scenario(Api::Anthropic).await;
            }

            #[tokio::test]
            async fn google_generative_ai() {
                super::$scenario(Api::Google).await;
            }
        }
    )*};
}

per_api!(
    plain_text,
    thinking,
    parallel_tool_calls,
    replay_of_thinking_and_tool_results,
    http_400_is_not_retried,
    http_429_is_not_retried_by_default,
    http_429_with_retry_after_is_retried_once,
    http_500_every_time_gives_up_after_two_retries,
    overloaded_529_is_retried,
    overloaded_529_every_time_reports_it,
    dropped_connection_keeps_partial_text,
    error_event_mid_stream_keeps_partial_text,
    truncated_stream,
    malformed_sse_data_is_an_error,
    abort_mid_stream,
    abort_while_waiting_to_retry,
    length_stop,
    empty_stream,
    headers_and_payload_hook,
    async_provider_hooks,
    dropped_connection_mid_tool_call,
    connection_refused,
);

// ---- scenarios ----------------------------------------------------------------------------

async fn plain_text(api: Api) {
    let usage = UsageSpec {
        input: Some(120),
        output: Some(7),
        cache_read: Some(30),
        cache_write: None,
    };
    let turn = Turn::text("Hello from the mock.").with_usage(usage);
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&model(api, &server), &context("hello"), options()).await;
    let m = &run.message;
    assert_eq!(m.stop_reason, StopReason::Stop, "{:?}", m.error_message);
    assert_eq!(m.text(), "Hello from the mock.");
    assert_eq!(m.content.len(), 1);
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.cache_read, m.usage.cache_write),
        (120, 7, 30, 0)
    );
    assert_eq!(m.usage.total_tokens, 157);
    let cost = &m.usage.cost;
    assert!((cost.input - 120.0 * 3.0 / 1e6).abs() < 1e-12, "{cost:?}");
    assert!((cost.total - (120.0 * 3.0 + 7.0 * 15.0 + 30.0 * 0.3) / 1e6).abs() < 1e-12);
    let id = match api {
        Api::Openai => "chatcmpl-mock0",
        Api::Anthropic => "msg_mock0",
        Api::Responses => "resp_mock0",
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => "mockresp0",
    };
    assert_eq!(m.response_id.as_deref(), Some(id));
    assert_eq!((m.api.as_str(), m.model.as_str()), (api_name(api), "mock-model"));
    assert_eq!(
        run.names(),
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ]
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.api, Some(api));
    let (header, value) = match api {
        Api::Openai | Api::Responses => ("authorization", "Bearer sk-test"),
        Api::Anthropic => ("x-api-key", "sk-test"),
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => ("x-goog-api-key", "sk-test"),
    };
    assert_eq!(sent.header(header), Some(value));
    let user_text = match api {
        Api::Openai | Api::Anthropic => &sent.body["messages"],
        Api::Responses => &sent.body["input"],
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => &sent.body["contents"],
    };
    assert!(user_text.to_string().contains("\"hello\""), "{user_text}");
}

async fn thinking(api: Api) {
    let turn = Turn::text("The answer is 42.").with_thinking("Let me think step by step.");
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(
        &thinker(api, &server),
        &context("What is the answer?"),
        thinking_options(),
    )
    .await;
    let m = &run.message;
    assert_eq!(m.stop_reason, StopReason::Stop, "{:?}", m.error_message);
    let names = run.names();
    let first_thinking = names.iter().position(|n| *n == "thinking_start").unwrap();
    let first_text = names.iter().position(|n| *n == "text_start").unwrap();
    assert!(first_thinking < first_text, "{names:?}");
    let Content::Thinking(t) = &m.content[0] else {
        panic!("first block is thinking: {:?}", m.content)
    };
    assert_eq!(t.thinking, "Let me think step by step.");
    let signature = t.thinking_signature.as_deref().unwrap_or_default();
    match api {
        Api::Openai => assert_eq!(signature, "reasoning_content"),
        Api::Anthropic | Api::Google => assert_eq!(signature, "mocksig0"),
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Responses => {
            let item: Value = serde_json::from_str(signature).unwrap();
            assert_eq!(
                (item["type"].as_str(), item["id"].as_str()),
                (Some("reasoning"), Some("rs_mock0"))
            );
        }
    }
    assert_eq!(m.text(), "The answer is 42.");

    let body = &server.requests()[0].body;
    match api {
        Api::Openai => assert_eq!(body["reasoning_effort"], "high"),
        Api::Responses => assert_eq!(body["reasoning"], json!({"effort": "high", "summary": "auto"})),
        Api::Anthropic => assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 16384, "display": "summarized"})
        ),
        // An unknown Gemini model gets the dynamic budget.
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => assert_eq!(
            body["generationConfig"],
            json!({"maxOutputTokens": 32000, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": -1}})
        ),
    }
}

fn two_call_turn() -> Turn {
    Turn::text("Checking two things.")
        .with_tool_call("read", json!({"path": "notes/todo.md", "offset": 3, "limit": 1}))
        .with_tool_call("bash", json!({"command": "wc -l hello.txt && echo done"}))
}

async fn parallel_tool_calls(api: Api) {
    let server = MockServer::start(Script::sequential(vec![two_call_turn()]))
        .await
        .unwrap();
    let mut ctx = context("check");
    ctx.tools = tools();
    let run = run(&model(api, &server), &ctx, options()).await;
    let m = &run.message;
    assert_eq!(m.stop_reason, StopReason::ToolUse, "{:?}", m.error_message);
    assert_eq!(m.text(), "Checking two things.");
    let calls: Vec<&pi_ai::ToolCall> = m.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].name, "read");
    assert_eq!(
        calls[0].arguments,
        json!({"path": "notes/todo.md", "offset": 3, "limit": 1})
    );
    assert_eq!(calls[1].name, "bash");
    assert_eq!(calls[1].arguments, json!({"command": "wc -l hello.txt && echo done"}));
    for (i, call) in calls.iter().enumerate() {
        assert!(call.id.contains(&format!("mock_0_{i}")), "{}", call.id);
    }

    // Each call streams start, its argument pieces, end; the calls follow one another.
    let tool_events: Vec<(usize, &'static str)> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolCallStart { content_index, .. }
            | AssistantMessageEvent::ToolCallDelta { content_index, .. }
            | AssistantMessageEvent::ToolCallEnd { content_index, .. } => Some((*content_index, e.type_name())),
            _ => None,
        })
        .collect();
    for index in [1, 2] {
        let of: Vec<&str> = tool_events
            .iter()
            .filter(|(i, _)| *i == index)
            .map(|(_, n)| *n)
            .collect();
        assert_eq!(of.first(), Some(&"toolcall_start"), "{of:?}");
        assert_eq!(of.last(), Some(&"toolcall_end"), "{of:?}");
        let deltas = of.iter().filter(|n| **n == "toolcall_delta").count();
        // Gemini sends each call whole; the others stream the JSON in 12-character pieces.
        let least = if api == Api::Google { 1 } else { 3 };
        assert!(deltas >= least, "{api:?}: {deltas} argument pieces");
    }
    let end_of_first = tool_events.iter().position(|e| *e == (1, "toolcall_end")).unwrap();
    let start_of_second = tool_events.iter().position(|e| *e == (2, "toolcall_start")).unwrap();
    if api == Api::Openai {
        // Chat Completions interleaves calls by index, so like the TypeScript pi we close them
        // all when the stream finishes (golden tools-json-mock-openai: start 1, start 2, end 1,
        // end 2).
        assert!(end_of_first > start_of_second);
    } else {
        assert!(end_of_first < start_of_second);
    }
    // The streamed pieces join to the arguments.
    let raw: String = run
        .events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolCallDelta {
                content_index: 1,
                delta,
            } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&raw).unwrap(), calls[0].arguments);
}

/// The second request of a tool round: thinking replayed with its signature, both tool calls,
/// both results (one an error).
async fn replay_of_thinking_and_tool_results(api: Api) {
    let first = two_call_turn().with_thinking("Two checks at once.");
    let server = MockServer::start(Script::sequential(vec![first, Turn::text("All done.")]))
        .await
        .unwrap();
    let m = thinker(api, &server);
    let mut ctx = context("check");
    ctx.tools = tools();
    let reply = run(&m, &ctx, thinking_options()).await.message;
    assert_eq!(reply.stop_reason, StopReason::ToolUse, "{:?}", reply.error_message);
    let calls: Vec<pi_ai::ToolCall> = reply.tool_calls().cloned().collect();
    ctx.messages.push(Message::Assistant(Arc::new(reply)));
    ctx.messages.push(tool_result(&calls[0], "- greet pi", false));
    ctx.messages.push(tool_result(&calls[1], "exit 3", true));
    let last = run(&m, &ctx, thinking_options()).await.message;
    assert_eq!(last.stop_reason, StopReason::Stop, "{:?}", last.error_message);
    assert_eq!(last.text(), "All done.");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].turn_index,
        Some(1),
        "the mock saw one assistant turn in the history"
    );
    let body = &requests[1].body;
    match api {
        Api::Anthropic => {
            let msgs = body["messages"].as_array().unwrap();
            assert_eq!(msgs.len(), 3);
            assert_eq!(
                msgs[1],
                json!({"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Two checks at once.", "signature": "mocksig0"},
                    {"type": "text", "text": "Checking two things."},
                    {"type": "tool_use", "id": "toolu_mock_0_0", "name": "read",
                        "input": {"path": "notes/todo.md", "offset": 3, "limit": 1}},
                    {"type": "tool_use", "id": "toolu_mock_0_1", "name": "bash",
                        "input": {"command": "wc -l hello.txt && echo done"}},
                ]})
            );
            assert_eq!(
                msgs[2],
                json!({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_mock_0_0", "content": "- greet pi", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_mock_0_1", "content": "exit 3", "is_error": true,
                        "cache_control": {"type": "ephemeral"}},
                ]})
            );
        }
        Api::Openai => {
            let msgs = body["messages"].as_array().unwrap();
            assert_eq!(msgs.len(), 5, "{msgs:?}");
            // The developer role is OpenAI's own: a reasoning model elsewhere gets `system`.
            assert_eq!(
                msgs[0]["role"], "system",
                "reasoning models off api.openai.com get a system prompt"
            );
            assert_eq!(msgs[2]["role"], "assistant");
            assert_eq!(msgs[2]["content"], "Checking two things.");
            assert_eq!(msgs[2]["reasoning_content"], "Two checks at once.");
            assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_mock_0_0");
            assert_eq!(
                msgs[2]["tool_calls"][1]["function"],
                json!({"name": "bash", "arguments": r#"{"command":"wc -l hello.txt && echo done"}"#})
            );
            assert_eq!(
                msgs[3],
                json!({"role": "tool", "content": "- greet pi", "tool_call_id": "call_mock_0_0"})
            );
            assert_eq!(
                msgs[4],
                json!({"role": "tool", "content": "exit 3", "tool_call_id": "call_mock_0_1"})
            );
        }
        Api::Responses => {
            let input = body["input"].as_array().unwrap();
            let kinds: Vec<&str> = input
                .iter()
                .map(|i| i["type"].as_str().or(i["role"].as_str()).unwrap_or_default())
                .collect();
            assert_eq!(
                kinds,
                [
                    "developer",
                    "user",
                    "reasoning",
                    "message",
                    "function_call",
                    "function_call",
                    "function_call_output",
                    "function_call_output"
                ]
            );
            assert_eq!(input[2]["id"], "rs_mock0");
            assert_eq!(input[2]["summary"][0]["text"], "Two checks at once.");
            assert_eq!(input[3]["id"], "msg_mock0");
            assert_eq!(input[4]["call_id"], "call_mock_0_0");
            assert_eq!(input[4]["id"], "fc_mock_0_0");
            assert_eq!(
                input[7],
                json!({"type": "function_call_output", "call_id": "call_mock_0_1", "output": "exit 3"})
            );
        }
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => {
            let contents = body["contents"].as_array().unwrap();
            assert_eq!(contents.len(), 3, "{contents:?}");
            assert_eq!(
                contents[1],
                json!({"role": "model", "parts": [
                    {"thought": true, "text": "Two checks at once.", "thoughtSignature": "mocksig0"},
                    {"text": "Checking two things."},
                    {"functionCall": {"name": "read", "args": {"path": "notes/todo.md", "offset": 3, "limit": 1}}},
                    {"functionCall": {"name": "bash", "args": {"command": "wc -l hello.txt && echo done"}}},
                ]})
            );
            assert_eq!(
                contents[2],
                json!({"role": "user", "parts": [
                    {"functionResponse": {"name": "read", "response": {"output": "- greet pi"}}},
                    {"functionResponse": {"name": "bash", "response": {"error": "exit 3"}}},
                ]})
            );
        }
    }
}

async fn http_400_is_not_retried(api: Api) {
    let turn = Turn::fault(Fault::status(400).message("max_tokens: too large"));
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&model(api, &server), &context("hello"), options()).await;
    assert!(run.is_error());
    assert_eq!(run.message.stop_reason, StopReason::Error);
    assert!(run.message.content.is_empty());
    // pi 1.6 quotes the body's error object (OpenAI), with the provider named for Responses.
    let error_object = r#"{"message":"max_tokens: too large","type":"invalid_request_error","param":null,"code":null}"#;
    let expected = match api {
        Api::Openai => format!("400: {error_object}"),
        Api::Responses => format!("{} API error (400): {error_object}", model(api, &server).provider),
        Api::Anthropic => {
            r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#.into()
        }
        // The genai SDK reports the error body as it came.
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => r#"{"error":{"code":400,"message":"max_tokens: too large","status":"INVALID_ARGUMENT"}}"#.into(),
    };
    assert_eq!(run.error(), expected);
    assert_eq!(server.requests().len(), 1, "a 400 is not retried");
}

async fn http_429_is_not_retried_by_default(api: Api) {
    let server = MockServer::start(Script::sequential(vec![Turn::text("made it")]))
        .await
        .unwrap();
    server.fail_next(1, Fault::rate_limited(1));
    let run = run(&model(api, &server), &context("hello"), options()).await;
    assert!(run.is_error());
    assert!(run.error().contains("429"), "{}", run.error());
    assert_eq!(
        server.requests().len(),
        1,
        "the session's auto-retry takes it from here"
    );
}

async fn http_429_with_retry_after_is_retried_once(api: Api) {
    let server = MockServer::start(Script::sequential(vec![Turn::text("made it")]))
        .await
        .unwrap();
    server.fail_next(1, Fault::rate_limited(1));
    let began = Instant::now();
    let run = run(&model(api, &server), &context("hello"), retrying_options()).await;
    assert!(!run.is_error(), "{:?}", run.message.error_message);
    assert_eq!(run.message.text(), "made it");
    assert_eq!(server.requests().len(), 2);
    assert!(
        began.elapsed() >= Duration::from_millis(950),
        "retry-after: 1 was honoured"
    );
    let waited_too_long = StreamOptions {
        max_retry_delay_ms: Some(100),
        ..retrying_options()
    };
    server.fail_next(1, Fault::rate_limited(1));
    let refused = crate::run(&model(api, &server), &context("hello"), waited_too_long).await;
    assert!(refused.error().contains("429"), "{}", refused.error());
    assert_eq!(server.requests().len(), 3, "a delay over the limit is not waited for");
}

async fn http_500_every_time_gives_up_after_two_retries(api: Api) {
    let turn = Turn::fault(http_fault(500, Some(5)));
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&model(api, &server), &context("hello"), retrying_options()).await;
    assert!(run.is_error());
    assert!(run.error().contains("500"), "{}", run.error());
    assert!(
        run.error().contains("internal error")
            || run.error().contains("Internal server error")
            || run.error().contains("had an error"),
        "{}",
        run.error()
    );
    assert_eq!(server.requests().len(), 3, "one request and two retries");
    assert!(is_retryable_text(run.error()));
}

async fn overloaded_529_is_retried(api: Api) {
    let server = MockServer::start(Script::sequential(vec![Turn::text("made it")]))
        .await
        .unwrap();
    server.fail_next(1, http_fault(529, Some(5)));
    let run = run(&model(api, &server), &context("hello"), retrying_options()).await;
    assert!(!run.is_error(), "{:?}", run.message.error_message);
    assert_eq!(run.message.text(), "made it");
    assert_eq!(server.requests().len(), 2);
}

async fn overloaded_529_every_time_reports_it(api: Api) {
    let server = MockServer::start(Script::sequential(vec![Turn::fault(http_fault(529, Some(5)))]))
        .await
        .unwrap();
    let run = run(&model(api, &server), &context("hello"), retrying_options()).await;
    assert!(run.is_error());
    let e = run.error();
    assert!(e.contains("529"), "{e}");
    assert!(e.to_lowercase().contains("overloaded"), "{e}");
    assert!(is_retryable_text(e));
    assert_eq!(server.requests().len(), 3);
}

fn assert_partial_words(run: &Run) {
    assert_eq!(run.message.text(), "alpha beta ", "{:?}", run.names());
    assert_eq!(text_deltas(run), "alpha beta ");
}

async fn dropped_connection_keeps_partial_text(api: Api) {
    let turn = Turn::text(WORDS).with_fault(Fault::drop_after(after_two_words(api)));
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&model(api, &server), &context("hello"), options()).await;
    assert!(run.is_error(), "{:?}", run.names());
    assert_eq!(run.message.stop_reason, StopReason::Error);
    assert!(!run.error().is_empty());
    assert_partial_words(&run);
    assert_eq!(server.requests().len(), 1, "a stream that started is not retried here");
    // The session layer retries errors whose text matches its list of transient failures.
    assert!(is_retryable_text(run.error()), "{:?} reads as transient", run.error());
}

async fn error_event_mid_stream_keeps_partial_text(api: Api) {
    let fault = Fault::error_event_after(after_two_words(api)).message("Overloaded right now");
    let turn = Turn::text(WORDS).with_fault(fault);
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&model(api, &server), &context("hello"), options()).await;
    assert!(run.is_error(), "{:?}", run.names());
    assert_eq!(run.message.stop_reason, StopReason::Error);
    assert!(run.error().contains("Overloaded right now"), "{}", run.error());
    if api == Api::Responses {
        // An SSE event named `error` is the SDK's APIError (pi 1.6's SDK): its message alone.
        assert_eq!(run.error(), "Overloaded right now");
    }
    if api == Api::Openai {
        // The SDK's APIError without a status: just the message.
        assert_eq!(run.error(), "Overloaded right now");
    }
    if api == Api::Anthropic {
        // The whole event data, as the SDK throws it (the session layer matches `overloaded_error`).
        assert_eq!(
            run.error(),
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded right now"}}"#
        );
    }
    if api == Api::Google {
        assert_eq!(
            run.error(),
            r#"got status: INTERNAL. {"error":{"code":500,"message":"Overloaded right now","status":"INTERNAL"}}"#
        );
    }
    assert_partial_words(&run);
    assert_eq!(server.requests().len(), 1);
}

/// A stream that ends cleanly before its final events. Only the Anthropic client notices (it
/// requires `message_stop`); the TypeScript pi's other providers end with what arrived and the
/// default stop reason, and so do ours.
async fn truncated_stream(api: Api) {
    let turn = Turn::text(WORDS).with_fault(Fault::truncate_after(after_two_words(api)));
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    // The Responses provider leaves the open text block without `text_end` (see
    // `truncated_responses_stream_closes_its_blocks`).
    let closing = if api == Api::Responses {
        Closing::NotRequired
    } else {
        Closing::Required
    };
    let stream = stream_simple(&model(api, &server), &context("hello"), options());
    let run = drain_checked(stream, closing).await;
    assert_partial_words(&run);
    match api {
        Api::Anthropic => {
            assert!(run.is_error());
            assert_eq!(run.error(), "Anthropic stream ended before message_stop");
        }
        _ => {
            assert!(!run.is_error(), "{:?}", run.message.error_message);
            assert_eq!(run.message.stop_reason, StopReason::Stop);
        }
    }
}

/// A one-shot server that answers any request with `body` as a 200 event stream.
async fn raw_sse_server(body: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        // Read the head and the Content-Length body before answering.
        loop {
            let Ok(n) = socket.read(&mut chunk).await else { return };
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(head_end) = text.find("\r\n\r\n") {
                let length = text[..head_end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if buf.len() >= head_end + 4 + length {
                    break;
                }
            }
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        let _ = socket.write_all(head.as_bytes()).await;
        let _ = socket.write_all(body.as_bytes()).await;
        let _ = socket.shutdown().await;
    });
    format!("http://{addr}")
}

async fn malformed_sse_data_is_an_error(api: Api) {
    let body = match api {
        Api::Openai => concat!(
            r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
            "\n\ndata: {oops\n\n"
        ),
        Api::Anthropic => concat!(
            r#"event: message_start"#,
            "\n",
            r#"data: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3,"output_tokens":1}}}"#,
            "\n\n",
            r#"event: content_block_start"#,
            "\n",
            r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            "\n\nevent: content_block_delta\ndata: {oops\n\n"
        ),
        Api::Responses => "event: response.created\ndata: {oops\n\n",
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => concat!(
            r#"data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}]}"#,
            "\n\ndata: {oops\n\n"
        ),
    };
    let base = raw_sse_server(body.to_string()).await;
    let base = match api {
        Api::Openai | Api::Responses => format!("{base}/v1"),
        Api::Anthropic => base,
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => format!("{base}/v1beta"),
    };
    let run = run(&model_at(api, base), &context("hello"), options()).await;
    assert!(run.is_error(), "{:?}", run.names());
    assert_eq!(run.message.stop_reason, StopReason::Error);
    assert!(!run.error().is_empty());
    if api != Api::Responses {
        assert_eq!(run.message.text(), "Hi".get(..text_deltas(&run).len()).unwrap_or("Hi"));
    }
}

async fn abort_mid_stream(api: Api) {
    let turn = Turn::big(2_000).with_delay_ms(5);
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = stream_simple(&model(api, &server), &context("hello"), opts);
    let mut events = Vec::new();
    let mut deltas = 0;
    while deltas < 3 {
        let event = tokio::time::timeout(Duration::from_secs(5), stream.next_event())
            .await
            .unwrap()
            .unwrap();
        deltas += usize::from(matches!(event, AssistantMessageEvent::TextDelta { .. }));
        events.push(event);
    }
    let cancelled_at = Instant::now();
    cancel.cancel();
    // The terminal event and the end of the channel (the provider task is gone) arrive promptly.
    loop {
        match tokio::time::timeout(Duration::from_secs(2), stream.next_event()).await {
            Ok(Some(e)) => events.push(e),
            Ok(None) => break,
            Err(_) => panic!("the stream did not end after the abort"),
        }
    }
    assert!(cancelled_at.elapsed() < Duration::from_secs(1));
    let Some(AssistantMessageEvent::Error { reason, error }) = events.last().cloned() else {
        panic!("abort ends with an error event: {:?}", events.last())
    };
    check_invariants(&events, &error);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(error.stop_reason, StopReason::Aborted);
    // Each SDK words a cancel once the body streams its own way (golden rpc transcript).
    let expected = match api {
        Api::Anthropic => "This operation was aborted",
        _ => "Request was aborted",
    };
    assert_eq!(error.error_message.as_deref(), Some(expected));
    assert!(error.text().starts_with("lorem ipsum dolor "), "{:?}", error.text());
    assert!(error.text().len() < 2_000, "the reply was cut short");
    assert_eq!(server.requests().len(), 1);
}

async fn connection_refused(api: Api) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let base = match api {
        Api::Openai | Api::Responses => format!("http://{addr}/v1"),
        Api::Anthropic => format!("http://{addr}"),
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => format!("http://{addr}/v1beta"),
    };
    let opts = StreamOptions {
        max_retries: Some(1),
        ..options()
    };
    let run = run(&model_at(api, base), &context("hello"), opts).await;
    assert!(run.is_error());
    assert_eq!(run.error(), format!("Connection error.: connect ECONNREFUSED {addr}"));
    assert!(run.message.content.is_empty());
}

// ---- request bodies compared with the TypeScript pi's -------------------------------------

/// The golden `think` scenario: a reasoning reply, then `--continue` with a second question.
/// The second request must replay the thinking exactly as the TypeScript pi did
/// (`think-mock-*-2.01.json`).
async fn think_replay_matches_golden(api: Api, golden_history: Value) {
    let turn = Turn::text("The answer is 42.")
        .with_thinking("The user asks for the answer. Let me think step by step about it.");
    let server = MockServer::start(Script::sequential(vec![turn, Turn::text("Still 42.")]))
        .await
        .unwrap();
    let m = thinker(api, &server);
    let mut ctx = context("What is the answer?");
    let mut opts = thinking_options();
    opts.session_id = Some("01a22aaf-ddb6-7715-b277-f08286f64a0e".into());
    opts.max_tokens = None;
    let reply = run(&m, &ctx, opts.clone()).await.message;
    assert_eq!(reply.stop_reason, StopReason::Stop, "{:?}", reply.error_message);
    ctx.messages.push(Message::Assistant(Arc::new(reply)));
    ctx.messages.push(Message::User(Arc::new(pi_ai::UserMessage {
        content: pi_ai::UserContent::Blocks(vec![Content::text("And again?")]),
        ..Default::default()
    })));
    // The golden first user message was sent as blocks too.
    ctx.messages[0] = Message::User(Arc::new(pi_ai::UserMessage {
        content: pi_ai::UserContent::Blocks(vec![Content::text("What is the answer?")]),
        ..Default::default()
    }));
    let last = run(&m, &ctx, opts).await.message;
    assert_eq!(last.text(), "Still 42.", "{:?}", last.error_message);
    let body = &server.requests()[1].body;
    let sent = match api {
        Api::Anthropic => body["messages"].clone(),
        // Without the system prompt, which the golden file elides.
        Api::Openai => json!(body["messages"].as_array().unwrap()[1..]),
        Api::Responses => json!(body["input"].as_array().unwrap()[1..]),
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => unreachable!("no golden run for Google"),
    };
    assert_eq!(sent, golden_history);
    let (tokens_key, tokens) = match api {
        Api::Anthropic => ("max_tokens", 32_000),
        Api::Openai => ("max_completion_tokens", 32_000),
        Api::Responses => ("max_output_tokens", 32_000),
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => unreachable!(),
    };
    assert_eq!(body[tokens_key], tokens);
}

#[tokio::test]
async fn golden_think_replay_anthropic() {
    let history = json!([
        {"role": "user", "content": [{"type": "text", "text": "What is the answer?"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "The user asks for the answer. Let me think step by step about it.", "signature": "mocksig0"},
            {"type": "text", "text": "The answer is 42."}
        ]},
        {"role": "user", "content": [{"type": "text", "text": "And again?", "cache_control": {"type": "ephemeral"}}]}
    ]);
    think_replay_matches_golden(Api::Anthropic, history).await;
}

#[tokio::test]
async fn golden_think_replay_openai_completions() {
    let history = json!([
        {"role": "user", "content": [{"type": "text", "text": "What is the answer?"}]},
        {"role": "assistant", "content": "The answer is 42.", "reasoning_content": "The user asks for the answer. Let me think step by step about it."},
        {"role": "user", "content": [{"type": "text", "text": "And again?"}]}
    ]);
    think_replay_matches_golden(Api::Openai, history).await;
}

#[tokio::test]
async fn golden_think_replay_openai_responses() {
    let history = json!([
        {"role": "user", "content": [{"type": "input_text", "text": "What is the answer?"}]},
        {"type": "reasoning", "id": "rs_mock0", "summary": [{"type": "summary_text", "text": "The user asks for the answer. Let me think step by step about it."}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The answer is 42.", "annotations": []}], "status": "completed", "id": "msg_mock0"},
        {"role": "user", "content": [{"type": "input_text", "text": "And again?"}]}
    ]);
    think_replay_matches_golden(Api::Responses, history).await;
}

/// A Responses stream cut before `response.output_text.done` / `response.completed` ends with
/// `done` while its text block never got `text_end`: a consumer that renders on `*_end` loses
/// the text. The other providers close open blocks when the stream ends.
#[tokio::test]
#[ignore = "pi 0.73 itself sends no text_end when a Responses stream is cut short; we match it (tests/providers.rs stream_parsing_matches_the_reference)"]
async fn truncated_responses_stream_closes_its_blocks() {
    let api = Api::Responses;
    let turn = Turn::text(WORDS).with_fault(Fault::truncate_after(after_two_words(api)));
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&model(api, &server), &context("hello"), options()).await;
    assert_eq!(run.names().iter().filter(|n| **n == "text_end").count(), 1);
}

/// The messages of the last request of the golden tool scenario (`tools-json-mock-anthropic.07`):
/// thinking with its signature, text, single and parallel tool calls, results grouped per turn,
/// errors, and `cache_control` on the last result.
const GOLDEN_ANTHROPIC_TOOLS_07: &str = r##"[
{"role": "user", "content": [{"type": "text", "text": "Inspect hello.txt, create notes/todo.md, change the greeting to Hello pi, and run a quick check."}]},
{"role": "assistant", "content": [{"type": "thinking", "thinking": "The user wants me to inspect hello.txt first.", "signature": "mocksig0"}, {"type": "text", "text": "Let me read the file first."}, {"type": "tool_use", "id": "toolu_mock_0_0", "name": "read", "input": {"path": "hello.txt"}}]},
{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_mock_0_0", "content": "Hello world\nThis is a test file.\nThird line.\n", "is_error": false}]},
{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_mock_1_0", "name": "write", "input": {"path": "notes/todo.md", "content": "# TODO\n\n- greet pi\n- run checks\n"}}]},
{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_mock_1_0", "content": "Successfully wrote to notes/todo.md", "is_error": false}]},
{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_mock_2_0", "name": "edit", "input": {"path": "hello.txt", "edits": [{"oldText": "Hello world", "newText": "Hello pi"}]}}]},
{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_mock_2_0", "content": "Successfully replaced 1 block(s) in hello.txt.", "is_error": false}]},
{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_mock_3_0", "name": "bash", "input": {"command": "cat hello.txt; find . -type f | sort; echo exit-ok"}}]},
{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_mock_3_0", "content": "Hello pi\nThis is a test file.\nThird line.\n./hello.txt\n./notes/todo.md\n./src/app.py\nexit-ok\n", "is_error": false}]},
{"role": "assistant", "content": [{"type": "text", "text": "Checking two things at once."}, {"type": "tool_use", "id": "toolu_mock_4_0", "name": "read", "input": {"path": "notes/todo.md", "offset": 3, "limit": 1}}, {"type": "tool_use", "id": "toolu_mock_4_1", "name": "bash", "input": {"command": "wc -l hello.txt && echo to-stderr >&2"}}]},
{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_mock_4_0", "content": "- greet pi\n\n[2 more lines in file. Use offset=4 to continue.]", "is_error": false}, {"type": "tool_result", "tool_use_id": "toolu_mock_4_1", "content": "3 hello.txt\nto-stderr\n", "is_error": false}]},
{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_mock_5_0", "name": "read", "input": {"path": "does-not-exist.txt"}}, {"type": "tool_use", "id": "toolu_mock_5_1", "name": "edit", "input": {"path": "hello.txt", "edits": [{"oldText": "no such text", "newText": "x"}]}}, {"type": "tool_use", "id": "toolu_mock_5_2", "name": "bash", "input": {"command": "echo failing; exit 3"}}]},
{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_mock_5_0", "content": "ENOENT: no such file or directory, access '<TMP>/proj/does-not-exist.txt'", "is_error": true}, {"type": "tool_result", "tool_use_id": "toolu_mock_5_1", "content": "Could not find the exact text in hello.txt. The old text must match exactly including all whitespace and newlines.", "is_error": true}, {"type": "tool_result", "tool_use_id": "toolu_mock_5_2", "content": "failing\n\n\nCommand exited with code 3", "is_error": true, "cache_control": {"type": "ephemeral"}}]}
]"##;

/// The same request's history for Chat Completions (`tools-json-mock-openai.07`, system prompt
/// left out).
const GOLDEN_OPENAI_TOOLS_07: &str = r##"[
{"role": "user", "content": [{"type": "text", "text": "Inspect hello.txt, create notes/todo.md, change the greeting to Hello pi, and run a quick check."}]},
{"role": "assistant", "content": "Let me read the file first.", "reasoning_content": "The user wants me to inspect hello.txt first.", "tool_calls": [{"id": "call_mock_0_0", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"hello.txt\"}"}}]},
{"role": "tool", "content": "Hello world\nThis is a test file.\nThird line.\n", "tool_call_id": "call_mock_0_0"},
{"role": "assistant", "content": null, "tool_calls": [{"id": "call_mock_1_0", "type": "function", "function": {"name": "write", "arguments": "{\"path\":\"notes/todo.md\",\"content\":\"# TODO\\n\\n- greet pi\\n- run checks\\n\"}"}}]},
{"role": "tool", "content": "Successfully wrote to notes/todo.md", "tool_call_id": "call_mock_1_0"},
{"role": "assistant", "content": null, "tool_calls": [{"id": "call_mock_2_0", "type": "function", "function": {"name": "edit", "arguments": "{\"path\":\"hello.txt\",\"edits\":[{\"oldText\":\"Hello world\",\"newText\":\"Hello pi\"}]}"}}]},
{"role": "tool", "content": "Successfully replaced 1 block(s) in hello.txt.", "tool_call_id": "call_mock_2_0"},
{"role": "assistant", "content": null, "tool_calls": [{"id": "call_mock_3_0", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"cat hello.txt; find . -type f | sort; echo exit-ok\"}"}}]},
{"role": "tool", "content": "Hello pi\nThis is a test file.\nThird line.\n./hello.txt\n./notes/todo.md\n./src/app.py\nexit-ok\n", "tool_call_id": "call_mock_3_0"},
{"role": "assistant", "content": "Checking two things at once.", "tool_calls": [{"id": "call_mock_4_0", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"notes/todo.md\",\"offset\":3,\"limit\":1}"}}, {"id": "call_mock_4_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"wc -l hello.txt && echo to-stderr >&2\"}"}}]},
{"role": "tool", "content": "- greet pi\n\n[2 more lines in file. Use offset=4 to continue.]", "tool_call_id": "call_mock_4_0"},
{"role": "tool", "content": "3 hello.txt\nto-stderr\n", "tool_call_id": "call_mock_4_1"},
{"role": "assistant", "content": null, "tool_calls": [{"id": "call_mock_5_0", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"does-not-exist.txt\"}"}}, {"id": "call_mock_5_1", "type": "function", "function": {"name": "edit", "arguments": "{\"path\":\"hello.txt\",\"edits\":[{\"oldText\":\"no such text\",\"newText\":\"x\"}]}"}}, {"id": "call_mock_5_2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo failing; exit 3\"}"}}]},
{"role": "tool", "content": "ENOENT: no such file or directory, access '<TMP>/proj/does-not-exist.txt'", "tool_call_id": "call_mock_5_0"},
{"role": "tool", "content": "Could not find the exact text in hello.txt. The old text must match exactly including all whitespace and newlines.", "tool_call_id": "call_mock_5_1"},
{"role": "tool", "content": "failing\n\n\nCommand exited with code 3", "tool_call_id": "call_mock_5_2"}
]"##;

/// The same request's input for Responses (`tools-json-mock-responses.07`, system prompt left
/// out).
const GOLDEN_RESPONSES_TOOLS_07: &str = r##"[
{"role": "user", "content": [{"type": "input_text", "text": "Inspect hello.txt, create notes/todo.md, change the greeting to Hello pi, and run a quick check."}]},
{"type": "reasoning", "id": "rs_mock0", "summary": [{"type": "summary_text", "text": "The user wants me to inspect hello.txt first."}]},
{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me read the file first.", "annotations": []}], "status": "completed", "id": "msg_mock0"},
{"type": "function_call", "id": "fc_mock_0_0", "call_id": "call_mock_0_0", "name": "read", "arguments": "{\"path\":\"hello.txt\"}"},
{"type": "function_call_output", "call_id": "call_mock_0_0", "output": "Hello world\nThis is a test file.\nThird line.\n"},
{"type": "function_call", "id": "fc_mock_1_0", "call_id": "call_mock_1_0", "name": "write", "arguments": "{\"path\":\"notes/todo.md\",\"content\":\"# TODO\\n\\n- greet pi\\n- run checks\\n\"}"},
{"type": "function_call_output", "call_id": "call_mock_1_0", "output": "Successfully wrote to notes/todo.md"},
{"type": "function_call", "id": "fc_mock_2_0", "call_id": "call_mock_2_0", "name": "edit", "arguments": "{\"path\":\"hello.txt\",\"edits\":[{\"oldText\":\"Hello world\",\"newText\":\"Hello pi\"}]}"},
{"type": "function_call_output", "call_id": "call_mock_2_0", "output": "Successfully replaced 1 block(s) in hello.txt."},
{"type": "function_call", "id": "fc_mock_3_0", "call_id": "call_mock_3_0", "name": "bash", "arguments": "{\"command\":\"cat hello.txt; find . -type f | sort; echo exit-ok\"}"},
{"type": "function_call_output", "call_id": "call_mock_3_0", "output": "Hello pi\nThis is a test file.\nThird line.\n./hello.txt\n./notes/todo.md\n./src/app.py\nexit-ok\n"},
{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking two things at once.", "annotations": []}], "status": "completed", "id": "msg_mock4"},
{"type": "function_call", "id": "fc_mock_4_0", "call_id": "call_mock_4_0", "name": "read", "arguments": "{\"path\":\"notes/todo.md\",\"offset\":3,\"limit\":1}"},
{"type": "function_call", "id": "fc_mock_4_1", "call_id": "call_mock_4_1", "name": "bash", "arguments": "{\"command\":\"wc -l hello.txt && echo to-stderr >&2\"}"},
{"type": "function_call_output", "call_id": "call_mock_4_0", "output": "- greet pi\n\n[2 more lines in file. Use offset=4 to continue.]"},
{"type": "function_call_output", "call_id": "call_mock_4_1", "output": "3 hello.txt\nto-stderr\n"},
{"type": "function_call", "id": "fc_mock_5_0", "call_id": "call_mock_5_0", "name": "read", "arguments": "{\"path\":\"does-not-exist.txt\"}"},
{"type": "function_call", "id": "fc_mock_5_1", "call_id": "call_mock_5_1", "name": "edit", "arguments": "{\"path\":\"hello.txt\",\"edits\":[{\"oldText\":\"no such text\",\"newText\":\"x\"}]}"},
{"type": "function_call", "id": "fc_mock_5_2", "call_id": "call_mock_5_2", "name": "bash", "arguments": "{\"command\":\"echo failing; exit 3\"}"},
{"type": "function_call_output", "call_id": "call_mock_5_0", "output": "ENOENT: no such file or directory, access '<TMP>/proj/does-not-exist.txt'"},
{"type": "function_call_output", "call_id": "call_mock_5_1", "output": "Could not find the exact text in hello.txt. The old text must match exactly including all whitespace and newlines."},
{"type": "function_call_output", "call_id": "call_mock_5_2", "output": "failing\n\n\nCommand exited with code 3"}
]"##;

/// The golden tool scenario's turns (`scenarios/tools.json`) and the results pi's tools gave.
/// What each tool call of a turn returned: text and whether it was an error.
type TurnResults = Vec<Vec<(&'static str, bool)>>;

fn golden_tool_turns() -> (Vec<Turn>, TurnResults) {
    let turns = vec![
        Turn::text("Let me read the file first.")
            .with_thinking("The user wants me to inspect hello.txt first.")
            .with_tool_call("read", json!({"path": "hello.txt"})),
        Turn::tool_call(
            "write",
            json!({"path": "notes/todo.md", "content": "# TODO\n\n- greet pi\n- run checks\n"}),
        ),
        Turn::tool_call(
            "edit",
            json!({"path": "hello.txt", "edits": [{"oldText": "Hello world", "newText": "Hello pi"}]}),
        ),
        Turn::tool_call(
            "bash",
            json!({"command": "cat hello.txt; find . -type f | sort; echo exit-ok"}),
        ),
        Turn::text("Checking two things at once.")
            .with_tool_call("read", json!({"path": "notes/todo.md", "offset": 3, "limit": 1}))
            .with_tool_call("bash", json!({"command": "wc -l hello.txt && echo to-stderr >&2"})),
        Turn::tool_call("read", json!({"path": "does-not-exist.txt"}))
            .with_tool_call(
                "edit",
                json!({"path": "hello.txt", "edits": [{"oldText": "no such text", "newText": "x"}]}),
            )
            .with_tool_call("bash", json!({"command": "echo failing; exit 3"})),
        Turn::text("All done. I read hello.txt, created notes/todo.md, changed the greeting to \"Hello pi\" and ran the checks."),
    ];
    let results = vec![
        vec![("Hello world\nThis is a test file.\nThird line.\n", false)],
        vec![("Successfully wrote to notes/todo.md", false)],
        vec![("Successfully replaced 1 block(s) in hello.txt.", false)],
        vec![(
            "Hello pi\nThis is a test file.\nThird line.\n./hello.txt\n./notes/todo.md\n./src/app.py\nexit-ok\n",
            false,
        )],
        vec![
            ("- greet pi\n\n[2 more lines in file. Use offset=4 to continue.]", false),
            ("3 hello.txt\nto-stderr\n", false),
        ],
        vec![
            ("ENOENT: no such file or directory, access '<TMP>/proj/does-not-exist.txt'", true),
            (
                "Could not find the exact text in hello.txt. The old text must match exactly including all whitespace and newlines.",
                true,
            ),
            ("failing\n\n\nCommand exited with code 3", true),
        ],
    ];
    (turns, results)
}

/// The whole golden tool scenario through a provider and the mock: every reply is parsed from
/// the stream and replayed, and the last request carries exactly the history the TypeScript pi
/// sent.
async fn golden_tool_scenario(api: Api, golden: &str) {
    let (turns, results) = golden_tool_turns();
    let server = MockServer::start(Script::sequential(turns)).await.unwrap();
    let m = model(api, &server);
    let mut ctx = context("");
    ctx.messages = vec![Message::User(Arc::new(pi_ai::UserMessage {
        content: pi_ai::UserContent::Blocks(vec![Content::text(
            "Inspect hello.txt, create notes/todo.md, change the greeting to Hello pi, and run a quick check.",
        )]),
        ..Default::default()
    }))];
    ctx.tools = ["read", "bash", "edit", "write"]
        .iter()
        .map(|name| Tool {
            constrained_sampling: None,
            name: (*name).into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {}}),
        })
        .collect();
    for outputs in &results {
        let reply = run(&m, &ctx, options()).await.message;
        assert_eq!(reply.stop_reason, StopReason::ToolUse, "{:?}", reply.error_message);
        let calls: Vec<pi_ai::ToolCall> = reply.tool_calls().cloned().collect();
        assert_eq!(calls.len(), outputs.len());
        ctx.messages.push(Message::Assistant(Arc::new(reply)));
        for (call, (text, is_error)) in calls.iter().zip(outputs) {
            ctx.messages.push(tool_result(call, text, *is_error));
        }
    }
    let last = run(&m, &ctx, options()).await.message;
    assert!(last.text().starts_with("All done."), "{:?}", last.error_message);
    let requests = server.requests();
    assert_eq!(requests.len(), 7);
    let body = &requests[6].body;
    let golden: Value = serde_json::from_str(golden).unwrap();
    let (sent, tokens_key) = match api {
        Api::Anthropic => (body["messages"].clone(), "max_tokens"),
        Api::Openai => (
            json!(body["messages"].as_array().unwrap()[1..]),
            "max_completion_tokens",
        ),
        Api::Responses => (json!(body["input"].as_array().unwrap()[1..]), "max_output_tokens"),
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => unreachable!("no golden run for Google"),
    };
    assert_eq!(sent, golden);
    assert_eq!(body[tokens_key], 16384);
    assert_eq!(body["stream"], true);
}

#[tokio::test]
async fn golden_tool_scenario_anthropic() {
    golden_tool_scenario(Api::Anthropic, GOLDEN_ANTHROPIC_TOOLS_07).await;
}

#[tokio::test]
async fn golden_tool_scenario_openai_completions() {
    golden_tool_scenario(Api::Openai, GOLDEN_OPENAI_TOOLS_07).await;
}

#[tokio::test]
async fn golden_tool_scenario_openai_responses() {
    golden_tool_scenario(Api::Responses, GOLDEN_RESPONSES_TOOLS_07).await;
}

async fn abort_while_waiting_to_retry(api: Api) {
    let server = MockServer::start(Script::sequential(vec![Turn::text("never")]))
        .await
        .unwrap();
    server.fail_next(1, Fault::rate_limited(30));
    let opts = StreamOptions {
        max_retry_delay_ms: Some(60_000),
        ..retrying_options()
    };
    let cancel = opts.cancel.clone();
    let stream = stream_simple(&model(api, &server), &context("hello"), opts);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let began = Instant::now();
    let run = drain(stream).await;
    assert!(began.elapsed() < Duration::from_secs(5), "the 30 s wait was cut short");
    assert_eq!(run.message.stop_reason, StopReason::Aborted);
    assert_eq!(run.names(), ["error"]);
    assert_eq!(server.requests().len(), 1);
}

async fn length_stop(api: Api) {
    let turn = Turn::text("cut short").with_length_stop();
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&model(api, &server), &context("hello"), options()).await;
    assert!(!run.is_error(), "{:?}", run.message.error_message);
    assert_eq!(run.message.stop_reason, StopReason::Length);
    assert_eq!(run.message.text(), "cut short");
}

/// Arguments that had streamed are kept, parsed as far as they go.
async fn dropped_connection_mid_tool_call(api: Api) {
    let turn = Turn::tool_call("read", json!({"path": "a/very/long/path/to/some/file.txt", "limit": 5}));
    // Events before the third argument piece: Gemini sends the call whole, so it is cut before
    // the finish chunk instead.
    let after = match api {
        Api::Openai => 4,
        Api::Anthropic => 6,
        Api::Responses => 5,
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => 1,
    };
    let server = MockServer::start(Script::sequential(vec![turn.with_fault(Fault::drop_after(after))]))
        .await
        .unwrap();
    let mut ctx = context("read it");
    ctx.tools = tools();
    let run = run(&model(api, &server), &ctx, options()).await;
    assert!(run.is_error(), "{:?}", run.names());
    let call = run.message.tool_calls().next().expect("the started call is kept");
    assert_eq!(call.name, "read");
    match api {
        Api::Mistral | Api::Bedrock => {
            unreachable!("Mistral and Bedrock run their own scenarios (tests/wire_apis.rs, tests/bedrock.rs)")
        }
        Api::Google => assert_eq!(call.arguments["limit"], 5),
        // Two 12-character pieces: `{"path": "a/` and `very/long/pa`.
        _ => assert_eq!(call.arguments, json!({"path": "a/very/long/pa"})),
    }
}

#[tokio::test]
async fn anthropic_cache_usage() {
    let usage = UsageSpec {
        input: Some(10),
        output: Some(5),
        cache_read: Some(200),
        cache_write: Some(40),
    };
    let server = MockServer::start(Script::sequential(vec![Turn::text("cached").with_usage(usage)]))
        .await
        .unwrap();
    let run = run(&model(Api::Anthropic, &server), &context("hello"), options()).await;
    let u = &run.message.usage;
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens),
        (10, 5, 200, 40, 255)
    );
    assert!((u.cost.cache_write - 40.0 * 3.75 / 1e6).abs() < 1e-12);
}

/// An error while a thinking block streams: the block is kept (unsigned, so it is replayed as
/// text later) and the accumulated partial agrees with the error message.
#[tokio::test]
async fn anthropic_error_event_during_thinking() {
    // message_start, ping, content_block_start, two thinking pieces.
    let fault = Fault::error_event_after(5).message("Overloaded");
    let turn = Turn::text("never")
        .with_thinking("one two three four")
        .with_fault(fault);
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&thinker(Api::Anthropic, &server), &context("hello"), thinking_options()).await;
    assert!(run.is_error());
    let Content::Thinking(t) = &run.message.content[0] else {
        panic!("{:?}", run.message.content)
    };
    assert_eq!(t.thinking, "one two ");
    assert_eq!(t.thinking_signature, None);
}

/// A subscription (OAuth) token: Claude Code identity and tool names on the wire, pi's names
/// back in the reply.
#[tokio::test]
async fn anthropic_oauth_tool_names_round_trip() {
    let turn = Turn::tool_call("Read", json!({"path": "hello.txt"}));
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let mut ctx = context("read it");
    ctx.tools = tools();
    let opts = StreamOptions {
        api_key: Some("sk-ant-oat01-mock".into()),
        ..options()
    };
    let run = run(&model(Api::Anthropic, &server), &ctx, opts).await;
    assert_eq!(
        run.message.stop_reason,
        StopReason::ToolUse,
        "{:?}",
        run.message.error_message
    );
    let call = run.message.tool_calls().next().unwrap();
    assert_eq!(call.name, "read");
    let sent = &server.requests()[0];
    assert_eq!(sent.header("authorization"), Some("Bearer sk-ant-oat01-mock"));
    assert!(sent.header("x-api-key").is_none());
    assert!(sent
        .header("anthropic-beta")
        .unwrap()
        .starts_with("claude-code-20250219,oauth-2025-04-20"));
    assert_eq!(
        sent.body["system"][0]["text"],
        "You are Claude Code, Anthropic's official CLI for Claude."
    );
    assert_eq!(sent.body["tools"][0]["name"], "Read");
    assert_eq!(sent.body["tools"][1]["name"], "Bash");
}

/// The words the coding agent's auto-retry looks for in an error message (pi's list).
fn is_retryable_text(error: &str) -> bool {
    let pattern = "(?i)overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|http2 request did not get a response|timed? out|timeout|terminated|retry delay";
    regex::Regex::new(pattern).unwrap().is_match(error)
}

/// A 200 stream that ends before its first event: nothing to report but also nothing wrong by
/// the APIs' own rules (Anthropic only complains once `message_start` was seen), so, as in the
/// TypeScript pi, the reply is an empty `stop`.
async fn empty_stream(api: Api) {
    let turn = Turn::text("never").with_fault(Fault::truncate_after(0));
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&model(api, &server), &context("hello"), options()).await;
    assert!(!run.is_error(), "{:?}", run.message.error_message);
    assert_eq!(run.message.stop_reason, StopReason::Stop);
    assert!(run.message.content.is_empty());
    assert_eq!(run.names(), ["start", "done"]);
}

/// Model headers, then call headers, reach the server; the payload hook's body is what is sent.
async fn headers_and_payload_hook(api: Api) {
    let server = MockServer::start(Script::sequential(vec![Turn::text("ok")]))
        .await
        .unwrap();
    let mut m = model(api, &server);
    m.headers = Some(
        json!({"x-model-header": "m", "x-both": "from model"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let hook: pi_ai::PayloadHook = std::sync::Arc::new(|body: &Value, _: &Model| {
        let mut body = body.clone();
        body["x_hooked"] = json!(true);
        Some(body)
    });
    let opts = StreamOptions {
        headers: vec![("x-both".into(), "from call".into())],
        on_payload: Some(hook),
        ..options()
    };
    let run = run(&m, &context("hello"), opts).await;
    assert_eq!(run.message.text(), "ok");
    let sent = &server.requests()[0];
    assert_eq!(sent.header("x-model-header"), Some("m"));
    assert_eq!(sent.header("x-both"), Some("from call"));
    assert_eq!(sent.body["x_hooked"], true);
}

/// Records what the asynchronous provider hooks saw, and rewrites the headers and the body.
#[derive(Default)]
struct RecordingHooks {
    seen: std::sync::Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl pi_ai::ProviderHooks for RecordingHooks {
    fn wanted(&self) -> pi_ai::WantedHooks {
        pi_ai::WantedHooks {
            headers: true,
            payload: true,
            response: true,
            stream_events: true,
        }
    }

    async fn headers(&self, _model: &Model, headers: &[(String, String)]) -> Option<Vec<(String, String)>> {
        let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
        self.seen.lock().unwrap().push(format!("headers {}", names.join(",")));
        // Drop the model's header, keep the call's, add one.
        let mut out: Vec<(String, String)> = headers.iter().filter(|(n, _)| n != "x-model-header").cloned().collect();
        out.push(("x-added".into(), "yes".into()));
        Some(out)
    }

    async fn payload(&self, _model: &Model, body: &Value) -> Option<Value> {
        tokio::time::sleep(Duration::from_millis(5)).await;
        self.seen.lock().unwrap().push("payload".into());
        let mut body = body.clone();
        body["x_async_hooked"] = json!(true);
        Some(body)
    }

    async fn response(&self, _model: &Model, status: u16, headers: &[(String, String)]) {
        let has_type = headers.iter().any(|(n, _)| n == "content-type");
        self.seen
            .lock()
            .unwrap()
            .push(format!("response {status} content-type={has_type}"));
    }

    async fn stream_event(&self, _model: &Model, data: &Value) {
        assert!(data.is_object() || data.is_array(), "{data}");
        self.seen.lock().unwrap().push("event".into());
    }
}

/// The asynchronous hooks run in request order: headers, body, response, then each provider
/// event; their rewrites are what the server receives.
async fn async_provider_hooks(api: Api) {
    let server = MockServer::start(Script::sequential(vec![Turn::text("ok")]))
        .await
        .unwrap();
    let mut m = model(api, &server);
    m.headers = Some(json!({"x-model-header": "m"}).as_object().unwrap().clone());
    let hooks = std::sync::Arc::new(RecordingHooks::default());
    let opts = StreamOptions {
        headers: vec![("x-call".into(), "c".into())],
        provider_hooks: Some(hooks.clone()),
        ..options()
    };
    let run = run(&m, &context("hello"), opts).await;
    assert_eq!(run.message.text(), "ok", "{:?}", run.message.error_message);
    let sent = &server.requests()[0];
    assert_eq!(sent.header("x-model-header"), None);
    assert_eq!(sent.header("x-call"), Some("c"));
    assert_eq!(sent.header("x-added"), Some("yes"));
    assert_eq!(sent.body["x_async_hooked"], true);
    let seen = hooks.seen.lock().unwrap().clone();
    assert_eq!(
        seen[..3],
        [
            "headers x-model-header,x-call",
            "payload",
            "response 200 content-type=true"
        ]
    );
    assert!(seen.len() > 4 && seen[3..].iter().all(|s| s == "event"), "{seen:?}");
}

/// An error while a Gemini thinking block streams. The provider keeps the block's thought
/// signature (it came with the first piece), but no event before `thinking_end` carries a
/// signature, so a consumer rebuilding the message from the events cannot have it: the error
/// message and the accumulated partial disagree.
#[tokio::test]
#[ignore = "events.rs: thinking_start/thinking_delta carry no signature, so PartialMessage misses one set mid-block"]
async fn google_error_during_signed_thinking_keeps_events_and_message_in_step() {
    let fault = Fault::error_event_after(2).message("Overloaded");
    let turn = Turn::text("never")
        .with_thinking("one two three four")
        .with_fault(fault);
    let server = MockServer::start(Script::sequential(vec![turn])).await.unwrap();
    let run = run(&thinker(Api::Google, &server), &context("hello"), thinking_options()).await;
    assert!(run.is_error());
}

// ---- whole request bodies against the TypeScript pi 1.6.0 golden runs ----------------------

/// One request of a golden run (`tests/golden/CASE.requests.jsonl`).
struct GoldenRequest {
    path: String,
    headers: Value,
    body: Value,
}

fn golden_requests(case: &str) -> Vec<GoldenRequest> {
    let path = format!(
        "{}/../../testdata/golden-1.6/{case}.requests.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            GoldenRequest {
                path: v["path"].as_str().unwrap_or_default().to_string(),
                headers: v["headers"].clone(),
                body: v["body"].clone(),
            }
        })
        .collect()
}

/// The session's conversation; the system prompt (a `system` message in 1.6 sessions) travels
/// as `Context::system_prompt` instead.
fn golden_messages(case: &str) -> Vec<Message> {
    let path = format!(
        "{}/../../testdata/golden-1.6/{case}.session.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message" && e["message"]["role"] != "system")
        .map(|e| serde_json::from_value(e["message"].clone()).unwrap())
        .collect()
}

/// The tools a golden body declares, back in our shape.
fn golden_tools(api: Api, body: &Value) -> Vec<Tool> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let (f, schema) = match api {
                Api::Openai => (&t["function"], &t["function"]["parameters"]),
                Api::Anthropic => (t, &t["input_schema"]),
                _ => (t, &t["parameters"]),
            };
            Tool {
                constrained_sampling: None,
                name: f["name"].as_str().unwrap_or_default().into(),
                description: f["description"].as_str().unwrap_or_default().into(),
                parameters: schema.clone(),
            }
        })
        .collect()
}

fn golden_system_prompt(api: Api, body: &Value) -> Option<String> {
    let text = match api {
        Api::Anthropic => &body["system"][0]["text"],
        Api::Openai => &body["messages"][0]["content"],
        _ => &body["input"][0]["content"],
    };
    text.as_str().map(String::from)
}

/// Blank what is our own prose (tool descriptions) so the rest compares byte for byte.
fn blank_descriptions(api: Api, body: &mut Value) {
    for tool in body["tools"].as_array_mut().into_iter().flatten() {
        let t = if api == Api::Openai {
            &mut tool["function"]
        } else {
            tool
        };
        t["description"] = json!("");
    }
}

/// Every request of a golden run, rebuilt from the session's messages before the reply it
/// produced and sent to the mock: the body must be the TypeScript pi's byte for byte (tool
/// descriptions blanked), and the path and the headers a proxy sees must match.
async fn golden_bodies(api: Api, case: &str, reasoning: bool) {
    let requests = golden_requests(case);
    let messages = golden_messages(case);
    let assistant_at: Vec<usize> = (0..messages.len())
        .filter(|&i| matches!(messages[i], Message::Assistant(_)))
        .collect();
    let first = assistant_at.len() - requests.len();
    for (k, req) in requests.iter().enumerate() {
        let server = MockServer::start(Script::sequential(vec![Turn::text("x")]))
            .await
            .unwrap();
        let m = if reasoning {
            thinker(api, &server)
        } else {
            model(api, &server)
        };
        let mut tools = golden_tools(api, &req.body);
        for t in &mut tools {
            t.description = String::new();
        }
        let ctx = Context {
            system_prompt: golden_system_prompt(api, &req.body),
            messages: messages[..assistant_at[first + k]].to_vec(),
            tools,
        };
        let key = req.headers["x-api-key"]
            .as_str()
            .or_else(|| {
                req.headers["authorization"]
                    .as_str()
                    .and_then(|a| a.strip_prefix("Bearer "))
            })
            .map(String::from);
        let session = req.headers["session-id"]
            .as_str()
            .or_else(|| req.body["prompt_cache_key"].as_str())
            .map(String::from)
            .unwrap_or_else(|| "01a230b0-0000-7000-8000-000000000000".into());
        let opts = StreamOptions {
            api_key: key,
            reasoning: reasoning.then_some(ThinkingLevel::High),
            session_id: Some(session),
            ..Default::default()
        };
        let reply = run(&m, &ctx, opts).await.message;
        assert_eq!(
            reply.stop_reason,
            StopReason::Stop,
            "{case} #{k}: {:?}",
            reply.error_message
        );
        let sent = &server.requests()[0];
        assert_eq!(sent.path, req.path, "{case} #{k}");
        let mut theirs = req.body.clone();
        blank_descriptions(api, &mut theirs);
        assert_eq!(
            serde_json::to_string(&sent.body).unwrap(),
            serde_json::to_string(&theirs).unwrap(),
            "{case} request #{k}"
        );
        for name in [
            "anthropic-beta",
            "session-id",
            "session_id",
            "x-client-request-id",
            "anthropic-version",
        ] {
            assert_eq!(
                sent.header(name),
                req.headers[name].as_str(),
                "{case} #{k} header {name}"
            );
        }
        let ua = sent.header("user-agent").unwrap_or_default();
        assert!(
            ua.starts_with(&format!("pi/{} (", env!("CARGO_PKG_VERSION"))),
            "{case} #{k}: user-agent {ua}"
        );
        assert!(req.headers["user-agent"].as_str().unwrap().starts_with("pi/1.6.0 ("));
    }
}

#[tokio::test]
async fn golden_bodies_anthropic_tool_turns() {
    golden_bodies(Api::Anthropic, "tools-json-mock-anthropic", false).await;
}

#[tokio::test]
async fn golden_bodies_anthropic_thinking() {
    golden_bodies(Api::Anthropic, "think-mock-anthropic-1", true).await;
    golden_bodies(Api::Anthropic, "think-mock-anthropic-2", true).await;
}

#[tokio::test]
async fn golden_bodies_openai_completions() {
    golden_bodies(Api::Openai, "tools-json-mock-openai", false).await;
    golden_bodies(Api::Openai, "think-mock-openai-1", true).await;
    golden_bodies(Api::Openai, "think-mock-openai-2", true).await;
    golden_bodies(Api::Openai, "hello-print", false).await;
}

#[tokio::test]
async fn golden_bodies_openai_responses() {
    golden_bodies(Api::Responses, "tools-json-mock-responses", false).await;
    golden_bodies(Api::Responses, "think-mock-responses-1", true).await;
    golden_bodies(Api::Responses, "think-mock-responses-2", true).await;
}
