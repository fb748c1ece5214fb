//! Unit tests of the Anthropic provider: request bodies, headers, names.
use super::*;
use crate::types::UserContent;
use crate::types::{AssistantMessage, InputKind, ModelCost, TextContent, ThinkingContent, ToolCall, UserMessage};
use std::sync::Arc;

fn model(id: &str, reasoning: bool) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: "anthropic-messages".into(),
        provider: "mock-anthropic".into(),
        base_url: "http://127.0.0.1:1".into(),
        reasoning,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost::default(),
        context_window: 200_000,
        max_tokens: 64_000,
        headers: None,
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
    }
}

fn tool(name: &str) -> Tool {
    Tool {
        constrained_sampling: None,
        name: name.into(),
        description: format!("{name} tool"),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

fn user(text: &str) -> Message {
    Message::User(Arc::new(UserMessage {
        content: UserContent::Blocks(vec![Content::text(text)]),
        ..Default::default()
    }))
}

#[test]
fn golden_hello_body_shape() {
    let m = model("mock-model", false);
    let ctx = Context {
        system_prompt: Some("sys".into()),
        messages: vec![user("hello")],
        tools: vec![tool("read"), tool("write")],
    };
    let options = StreamOptions {
        max_tokens: Some(16384),
        ..Default::default()
    };
    let plan = plan_request(&m, &ctx, &options, false);
    let body = build_body(&m, &ctx, &options, &plan);
    let keys: Vec<&String> = body.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["model", "messages", "max_tokens", "stream", "system", "tools"]);
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}])
    );
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(body["tools"][0]["eager_input_streaming"], json!(true));
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(body["tools"][1]["cache_control"], json!({"type": "ephemeral"}));
    assert!(
        body.get("thinking").is_none(),
        "non-reasoning models get no thinking field"
    );
}

#[test]
fn budget_thinking_matches_golden_think_case() {
    let mut m = model("mock-thinker", true);
    m.max_tokens = 32_000;
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        ..Default::default()
    };
    let plan = plan_request(&m, &Context::default(), &options, false);
    let body = build_body(&m, &Context::default(), &options, &plan);
    assert_eq!(body["max_tokens"], json!(32000));
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 16384, "display": "summarized"})
    );
}

#[test]
fn reasoning_model_with_thinking_off_disables_it_and_keeps_temperature() {
    let m = model("mock-thinker", true);
    let options = StreamOptions {
        temperature: Some(0.5),
        ..Default::default()
    };
    let plan = plan_request(&m, &Context::default(), &options, false);
    let body = build_body(&m, &Context::default(), &options, &plan);
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
    assert_eq!(body["temperature"], json!(0.5));
}

#[test]
fn adaptive_models_send_effort() {
    let m = model("claude-opus-4-6", true);
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::Minimal),
        temperature: Some(1.0),
        ..Default::default()
    };
    let plan = plan_request(&m, &Context::default(), &options, false);
    let body = build_body(&m, &Context::default(), &options, &plan);
    assert_eq!(body["thinking"], json!({"type": "adaptive", "display": "summarized"}));
    assert_eq!(body["output_config"], json!({"effort": "low"}));
    assert!(
        body.get("temperature").is_none(),
        "temperature is not sent with thinking"
    );
}

#[test]
fn history_is_converted_like_pi() {
    let m = model("mock-thinker", true);
    let assistant = AssistantMessage {
        content: vec![
            Content::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                thinking_signature: Some("sig".into()),
                ..Default::default()
            }),
            Content::Thinking(ThinkingContent {
                thinking: "unsigned".into(),
                ..Default::default()
            }),
            Content::Text(TextContent {
                text: "Reading.".into(),
                ..Default::default()
            }),
            Content::ToolCall(ToolCall {
                id: "call|odd id".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                ..Default::default()
            }),
        ],
        api: m.api.clone(),
        provider: m.provider.clone(),
        model: m.id.clone(),
        stop_reason: StopReason::ToolUse,
        ..Default::default()
    };
    let result = Message::ToolResult(Arc::new(crate::types::ToolResultMessage {
        tool_call_id: "call|odd id".into(),
        tool_name: "read".into(),
        content: vec![Content::text("file body")],
        is_error: false,
        ..Default::default()
    }));
    let ctx = Context {
        system_prompt: None,
        messages: vec![user("go"), Message::Assistant(Arc::new(assistant)), result],
        tools: vec![],
    };
    let plan = plan_request(&m, &ctx, &StreamOptions::default(), false);
    let msgs = convert_messages(&ctx.messages, &m, &plan);
    assert_eq!(
        msgs[1]["content"][0],
        json!({"type": "thinking", "thinking": "hmm", "signature": "sig"})
    );
    assert_eq!(msgs[1]["content"][1], json!({"type": "text", "text": "unsigned"}));
    assert_eq!(msgs[1]["content"][3]["type"], json!("tool_use"));
    assert_eq!(
        msgs[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "call|odd id", "content": "file body", "is_error": false, "cache_control": {"type": "ephemeral"}})
    );
}

#[test]
fn oauth_tool_names_round_trip() {
    assert_eq!(to_claude_code_name("read"), "Read");
    assert_eq!(to_claude_code_name("custom"), "custom");
    assert_eq!(from_claude_code_name("Read", &[tool("read")]), "read");
    assert_eq!(normalize_tool_call_id("call|x.y"), "call_x_y");
}

fn beta_header(m: &Model, ctx: &Context, options: &StreamOptions, key: &str) -> Option<String> {
    let plan = plan_request(m, ctx, options, is_oauth_token(key));
    let h = build_headers(m, ctx, options, key, &plan).expect("headers");
    h.get("anthropic-beta").and_then(|v| v.to_str().ok()).map(String::from)
}

#[test]
fn headers_follow_the_sdk() {
    let m = model("mock-model", false);
    let ctx = Context::default();
    let opts = StreamOptions::default();
    let plan = plan_request(&m, &ctx, &opts, false);
    let h = build_headers(&m, &ctx, &opts, "sk-ant-mock", &plan).expect("headers");
    assert_eq!(h.get("x-api-key").and_then(|v| v.to_str().ok()), Some("sk-ant-mock"));
    assert_eq!(
        h.get("anthropic-version").and_then(|v| v.to_str().ok()),
        Some(API_VERSION)
    );
    // A model that does not reason gets no beta features at all.
    assert_eq!(beta_header(&m, &ctx, &opts, "k"), None);
    // Interleaved thinking only while a budget-thinking model thinks.
    let thinker = model("mock-thinker", true);
    assert_eq!(beta_header(&thinker, &ctx, &opts, "k"), None);
    let high = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        ..Default::default()
    };
    assert_eq!(
        beta_header(&thinker, &ctx, &high, "k").as_deref(),
        Some(INTERLEAVED_THINKING_BETA)
    );
    let adaptive = model("claude-sonnet-4-6", true);
    assert_eq!(beta_header(&adaptive, &ctx, &high, "k"), None);
    let mut forced = model("custom", true);
    forced.compat = Some(json!({"forceAdaptiveThinking": true}));
    assert_eq!(beta_header(&forced, &ctx, &high, "k"), None);
    // OAuth features come first; a configured header replaces the list.
    assert_eq!(
        beta_header(&thinker, &ctx, &high, "sk-ant-oat-1").as_deref(),
        Some("claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14")
    );
    let configured = StreamOptions {
        headers: vec![("anthropic-beta".into(), "a, b,a".into())],
        ..high.clone()
    };
    assert_eq!(beta_header(&thinker, &ctx, &configured, "k").as_deref(), Some("a,b"));
    let mut fine = model("mock-model", false);
    fine.compat = Some(json!({"supportsEagerToolInputStreaming": false}));
    let with_tools = Context {
        tools: vec![tool("read")],
        ..Default::default()
    };
    assert_eq!(
        beta_header(&fine, &with_tools, &opts, "k").as_deref(),
        Some(FINE_GRAINED_TOOL_STREAMING_BETA)
    );
}

#[test]
fn session_affinity_header_for_openrouter() {
    let mut m = model("anthropic/claude", false);
    m.provider = "openrouter".into();
    let ctx = Context::default();
    let opts = StreamOptions {
        session_id: Some("s1".into()),
        ..Default::default()
    };
    let plan = plan_request(&m, &ctx, &opts, false);
    let h = build_headers(&m, &ctx, &opts, "k", &plan).expect("headers");
    assert_eq!(h.get("x-session-id").and_then(|v| v.to_str().ok()), Some("s1"));
    let plain = model("mock-model", false);
    let h = build_headers(&plain, &ctx, &opts, "k", &plan).expect("headers");
    assert!(h.get("x-session-id").is_none() && h.get("x-session-affinity").is_none());
}

#[test]
fn max_tokens_fit_the_window_and_budgets_leave_answer_room() {
    let mut m = model("mock-thinker", true);
    m.context_window = 40_000;
    m.max_tokens = 64_000;
    let ctx = Context::default();
    let high = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        ..Default::default()
    };
    let plan = plan_request(&m, &ctx, &high, false);
    // Room 40000 - 4096 = 35904 (< 32768 is false: ratio margin kept at 4096).
    assert_eq!(plan.max_tokens, 35_904);
    assert_eq!(plan.thinking, Thinking::Budget { budget_tokens: 16_384 });
    m.context_window = 12_000;
    let plan = plan_request(&m, &ctx, &high, false);
    assert_eq!(plan.max_tokens, 12_000 - 4096);
    assert_eq!(
        plan.thinking,
        Thinking::Budget {
            budget_tokens: 12_000 - 4096 - 1024
        }
    );
}

#[test]
fn tool_schemas_keep_allowed_root_keywords() {
    let t = Tool {
        constrained_sampling: None,
        name: "edit".into(),
        description: "d".into(),
        parameters: json!({"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/$defs/x"}},
            "additionalProperties": false, "$defs": {"x": {"type": "string"}}, "anyOf": []}),
    };
    assert_eq!(
        serde_json::to_string(&input_schema(&t.parameters)).expect("json"),
        r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"required":["a"],"additionalProperties":false,"$defs":{"x":{"type":"string"}}}"##
    );
}

#[test]
fn error_result_images_follow_the_results() {
    let m = model("mock-model", false);
    let result = |id: &str, is_error: bool| {
        Message::ToolResult(Arc::new(crate::types::ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "shot".into(),
            content: vec![Content::text("failed"), Content::image("aGk=", "image/png")],
            is_error,
            ..Default::default()
        }))
    };
    let call = |id: &str| {
        Content::ToolCall(ToolCall {
            id: id.into(),
            name: "shot".into(),
            arguments: json!({}),
            ..Default::default()
        })
    };
    let ctx = Context {
        system_prompt: None,
        messages: vec![
            user("go"),
            Message::Assistant(Arc::new(AssistantMessage {
                content: vec![call("a"), call("b")],
                api: m.api.clone(),
                provider: m.provider.clone(),
                model: m.id.clone(),
                stop_reason: StopReason::ToolUse,
                ..Default::default()
            })),
            result("a", true),
            result("b", false),
        ],
        tools: vec![],
    };
    let options = StreamOptions {
        cache_retention: crate::options::CacheRetention::None,
        ..Default::default()
    };
    let plan = plan_request(&m, &ctx, &options, false);
    let msgs = convert_messages(&ctx.messages, &m, &plan);
    let content = msgs[2]["content"].as_array().expect("blocks");
    assert_eq!(content.len(), 4);
    assert_eq!(
        content[0]["content"],
        json!("failed\n(image attached after the tool results)")
    );
    assert_eq!(content[1]["content"][1]["type"], "image");
    assert_eq!(
        content[2],
        json!({"type": "text", "text": "Images from the error result of tool call a (shot):"})
    );
    assert_eq!(content[3]["type"], "image");
}

#[test]
fn the_borrowed_payload_is_byte_for_byte_the_value_body() {
    let m = model("mock-thinker", true);
    let assistant = |content: Vec<Content>| {
        Message::Assistant(Arc::new(AssistantMessage {
            content,
            api: m.api.clone(),
            provider: m.provider.clone(),
            model: m.id.clone(),
            stop_reason: StopReason::ToolUse,
            ..Default::default()
        }))
    };
    let result = |id: &str, content: Vec<Content>| {
        Message::ToolResult(Arc::new(crate::types::ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content,
            is_error: id == "c2",
            ..Default::default()
        }))
    };
    let histories = [
        vec![
            user("first \"question\"\n"),
            Message::User(Arc::new(crate::types::UserMessage {
                content: crate::types::UserContent::Blocks(vec![
                    Content::text("see"),
                    Content::image("aGk=", "image/png"),
                ]),
                timestamp: 1,
                extra: Default::default(),
            })),
            assistant(vec![
                Content::Thinking(ThinkingContent {
                    thinking: "hmm".into(),
                    thinking_signature: Some("sig".into()),
                    ..Default::default()
                }),
                Content::Thinking(ThinkingContent {
                    thinking: "redacted".into(),
                    thinking_signature: Some("opaque".into()),
                    redacted: Some(true),
                    ..Default::default()
                }),
                Content::Text(TextContent {
                    text: "Reading.".into(),
                    ..Default::default()
                }),
                Content::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "a"}),
                    ..Default::default()
                }),
                Content::ToolCall(ToolCall {
                    id: "c2".into(),
                    name: "read".into(),
                    arguments: json!("not an object"),
                    ..Default::default()
                }),
            ]),
            result("c1", vec![Content::text("file body")]),
            result("c2", vec![Content::image("aGk=", "image/png")]),
        ],
        vec![user("only a question")],
    ];
    for messages in histories {
        let ctx = Context {
            system_prompt: Some("Be brief.".into()),
            messages,
            tools: vec![tool("read")],
        };
        for (retention, oauth) in [
            (crate::options::CacheRetention::Short, false),
            (crate::options::CacheRetention::None, false),
            (crate::options::CacheRetention::Short, true),
        ] {
            let options = StreamOptions {
                cache_retention: retention,
                ..Default::default()
            };
            let plan = plan_request(&m, &ctx, &options, oauth);
            let value = build_body(&m, &ctx, &options, &plan);
            let bytes = request_payload(&m, &ctx, &options, &plan).expect("payload");
            assert_eq!(
                String::from_utf8(bytes).expect("utf-8"),
                serde_json::to_string(&value).expect("value"),
                "{retention:?}, oauth {oauth}"
            );
        }
    }
}
