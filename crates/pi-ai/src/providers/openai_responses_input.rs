//! The conversation as Responses input items, as a [`Json`] tree that borrows the message text
//! (see [`crate::providers::json_tree`]).

use std::borrow::Cow;

use serde_json::Value;

use super::{normalize_tool_call_id, parse_text_signature};
use crate::providers::json_tree::Json;
use crate::transform::{sanitize_surrogates, short_hash, transform_messages};
use crate::types::{AssistantMessage, Content, Context, Message, Model, UserContent};

fn input_image<'a>(mime: &str, data: &str) -> Json<'a> {
    Json::object([
        ("type", Json::str("input_image")),
        ("detail", Json::str("auto")),
        ("image_url", Json::string(format!("data:{mime};base64,{data}"))),
    ])
}

fn input_text(text: &str) -> Json<'_> {
    Json::object([
        ("type", Json::str("input_text")),
        ("text", Json::str(sanitize_surrogates(text))),
    ])
}

/// Messages as Responses input items (system prompt first).
pub fn convert_messages(model: &Model, context: &Context) -> Vec<Value> {
    let transformed = transform_for(model, context);
    let messages: Vec<&Message> = transformed.iter().map(|m| m.as_ref()).collect();
    let grammar = crate::providers::grammar_tools::inputs(model, &context.tools);
    input_tree(model, context.system_prompt.as_deref(), &messages, &grammar)
        .iter()
        .map(Json::to_value)
        .collect()
}

/// The context's messages prepared for `model` (see [`transform_messages`]).
pub(super) fn transform_for<'c>(model: &Model, context: &'c Context) -> Vec<Cow<'c, Message>> {
    let normalize = |id: &str, source: &AssistantMessage| normalize_tool_call_id(model, id, source);
    transform_messages(&context.messages, model, &normalize)
}

/// The request's `input` items: the system prompt, then `messages` (already transformed);
/// calls of the tools in `grammar` are custom tool calls carrying their raw input.
pub(super) fn input_tree<'a>(
    model: &Model,
    system_prompt: Option<&'a str>,
    messages: &[&'a Message],
    grammar: &crate::providers::grammar_tools::GrammarInputs,
) -> Vec<Json<'a>> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = system_prompt {
        let developer = model.reasoning && crate::providers::compat_bool(model, "supportsDeveloperRole") != Some(false);
        let role = if developer { "developer" } else { "system" };
        out.push(Json::object([
            ("role", Json::str(role)),
            ("content", Json::str(sanitize_surrogates(system))),
        ]));
    }
    let mut msg_index = 0usize;
    for msg in messages {
        match *msg {
            Message::User(user) => {
                let parts: Vec<Json> = match &user.content {
                    UserContent::Text(s) => vec![input_text(s)],
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            Content::Text(t) => Some(input_text(&t.text)),
                            Content::Image(i) => Some(input_image(&i.mime_type, &i.data)),
                            _ => None,
                        })
                        .collect(),
                };
                if parts.is_empty() {
                    continue;
                }
                out.push(Json::object([
                    ("role", Json::str("user")),
                    ("content", Json::Array(parts)),
                ]));
            }
            Message::Assistant(a) => {
                let different_model = a.model != model.id && a.provider == model.provider && a.api == model.api;
                let mut items = Vec::new();
                let mut text_index = 0usize;
                for block in &a.content {
                    match block {
                        Content::Thinking(t) => {
                            // The signature is the reasoning item as received; one that does not
                            // parse cannot be replayed and is left out.
                            if let Some(item) = t
                                .thinking_signature
                                .as_deref()
                                .filter(|s| !s.is_empty())
                                .and_then(|s| serde_json::from_str::<Value>(s).ok())
                            {
                                items.push(Json::Value(Box::new(item)));
                            }
                        }
                        Content::Text(t) => {
                            let parsed = parse_text_signature(t.text_signature.as_deref());
                            let fallback = if text_index == 0 {
                                format!("msg_pi_{msg_index}")
                            } else {
                                format!("msg_pi_{msg_index}_{text_index}")
                            };
                            text_index += 1;
                            let (id, phase) = match parsed {
                                None => (fallback, None),
                                Some((id, phase)) if id.is_empty() => (fallback, phase),
                                Some((id, phase)) if id.chars().count() > 64 => {
                                    (format!("msg_{}", short_hash(&id)), phase)
                                }
                                Some(p) => p,
                            };
                            let mut item = Json::object([
                                ("type", Json::str("message")),
                                ("role", Json::str("assistant")),
                                (
                                    "content",
                                    Json::Array(vec![Json::object([
                                        ("type", Json::str("output_text")),
                                        ("text", Json::str(sanitize_surrogates(&t.text))),
                                        ("annotations", Json::Array(Vec::new())),
                                    ])]),
                                ),
                                ("status", Json::str("completed")),
                                ("id", Json::string(id)),
                            ]);
                            if let Some(phase) = phase {
                                item.insert(Cow::Borrowed("phase"), Json::string(phase));
                            }
                            items.push(item);
                        }
                        Content::ToolCall(tc) => {
                            let mut parts = tc.id.split('|');
                            let call_id = parts.next().unwrap_or("");
                            let mut item_id = parts.next();
                            let custom = grammar.get(&tc.name);
                            let (kind, prefix) = match custom {
                                Some(_) => ("custom_tool_call", "ctc_"),
                                None => ("function_call", "fc_"),
                            };
                            // Another model's item ids were paired with its own reasoning items,
                            // and a call's id must be of its item type (`fc_`, `ctc_`): otherwise
                            // no id.
                            if different_model || !item_id.is_some_and(|i| i.starts_with(prefix)) {
                                item_id = None;
                            }
                            let mut item = Json::object([("type", Json::str(kind))]);
                            if let Some(id) = item_id {
                                item.insert(Cow::Borrowed("id"), Json::str(id));
                            }
                            item.insert(Cow::Borrowed("call_id"), Json::str(call_id));
                            item.insert(Cow::Borrowed("name"), Json::str(&tc.name));
                            match custom {
                                Some(property) => {
                                    let input = tc.arguments.get(property).and_then(Value::as_str).unwrap_or_default();
                                    item.insert(
                                        Cow::Borrowed("input"),
                                        Json::string(sanitize_surrogates(input).to_string()),
                                    );
                                }
                                None => {
                                    item.insert(Cow::Borrowed("arguments"), Json::string(tc.arguments.to_string()));
                                }
                            }
                            items.push(item);
                        }
                        Content::Image(_) => {}
                    }
                }
                if items.is_empty() {
                    continue;
                }
                out.extend(items);
            }
            Message::ToolResult(r) => {
                let text = crate::types::join_text(&r.content);
                let has_text = !text.trim().is_empty();
                let has_images = r.content.iter().any(|c| matches!(c, Content::Image(_)));
                let call_id = r.tool_call_id.split('|').next().unwrap_or("");
                let output = if has_images && model.supports_images() {
                    let mut parts = Vec::new();
                    if has_text {
                        parts.push(Json::object([
                            ("type", Json::str("input_text")),
                            ("text", Json::string(sanitize_surrogates(&text).to_string())),
                        ]));
                    }
                    parts.extend(r.content.iter().filter_map(|c| match c {
                        Content::Image(i) => Some(input_image(&i.mime_type, &i.data)),
                        _ => None,
                    }));
                    Json::Array(parts)
                } else if has_text {
                    Json::string(sanitize_surrogates(&text).to_string())
                } else if has_images {
                    Json::str("(see attached image)")
                } else {
                    Json::str("(no tool output)")
                };
                let kind = if grammar.contains_key(&r.tool_name) {
                    "custom_tool_call_output"
                } else {
                    "function_call_output"
                };
                out.push(Json::object([
                    ("type", Json::str(kind)),
                    ("call_id", Json::str(call_id)),
                    ("output", output),
                ]));
            }
        }
        msg_index += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::{request_body, request_payload};
    use crate::options::StreamOptions;
    use crate::types::{
        AssistantMessage, Content, Context, Extra, InputKind, Message, Model, ModelCost, StopReason, TextContent,
        ThinkingContent, ToolCall, ToolResultMessage, UserContent, UserMessage,
    };
    use serde_json::json;

    fn model(provider: &str, reasoning: bool) -> Model {
        Model {
            id: "gpt-x".into(),
            name: "gpt-x".into(),
            api: "openai-responses".into(),
            provider: provider.into(),
            base_url: "http://x/v1".into(),
            reasoning,
            input: vec![InputKind::Text, InputKind::Image],
            cost: ModelCost::default(),
            context_window: 128_000,
            max_tokens: 16_384,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    fn context() -> Context {
        let assistant = |provider: &str, content: Vec<Content>| {
            Message::Assistant(Arc::new(AssistantMessage {
                content,
                api: "openai-responses".into(),
                provider: provider.into(),
                model: "gpt-x".into(),
                stop_reason: StopReason::ToolUse,
                ..Default::default()
            }))
        };
        let result = |id: &str, content: Vec<Content>| {
            Message::ToolResult(Arc::new(ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "read".into(),
                content,
                details: None,
                is_error: false,
                duration_ms: None,
                timestamp: 1,
                extra: Extra::new(),
            }))
        };
        Context {
            system_prompt: Some("Be \"brief\".".into()),
            messages: vec![
                Message::user_text("hi\nthere"),
                Message::User(Arc::new(UserMessage {
                    content: UserContent::Blocks(vec![Content::text("see"), Content::image("aGk=", "image/png")]),
                    timestamp: 2,
                    extra: Extra::new(),
                })),
                assistant(
                    "openai",
                    vec![
                        Content::Thinking(ThinkingContent {
                            thinking: "t".into(),
                            thinking_signature: Some(r#"{"type":"reasoning","id":"rs_1","summary":[]}"#.into()),
                            ..Default::default()
                        }),
                        Content::Text(TextContent {
                            text: "Reading.".into(),
                            text_signature: Some(r#"{"v":1,"id":"msg_a","phase":"commentary"}"#.into()),
                            extra: Extra::new(),
                        }),
                        Content::ToolCall(ToolCall {
                            id: "call_1|fc_item1".into(),
                            name: "read".into(),
                            arguments: json!({"path": "a"}),
                            ..Default::default()
                        }),
                    ],
                ),
                result(
                    "call_1|fc_item1",
                    vec![Content::text("body"), Content::image("aGk=", "image/png")],
                ),
                assistant(
                    "other",
                    vec![
                        Content::text("from elsewhere"),
                        Content::ToolCall(ToolCall {
                            id: "weird id!".into(),
                            name: "read".into(),
                            arguments: json!({}),
                            ..Default::default()
                        }),
                    ],
                ),
                result("weird id!", vec![]),
            ],
            tools: Vec::new(),
        }
    }

    #[test]
    fn the_borrowed_payload_is_byte_for_byte_the_value_body() {
        let ctx = context();
        for provider in ["openai", "azure"] {
            for reasoning in [false, true] {
                let m = model(provider, reasoning);
                let opts = StreamOptions {
                    session_id: Some("s".into()),
                    ..Default::default()
                };
                let value = request_body(&m, &ctx, &opts);
                let bytes = request_payload(&m, &ctx, &opts).expect("payload");
                assert_eq!(
                    String::from_utf8(bytes).expect("utf-8"),
                    serde_json::to_string(&value).expect("value"),
                    "{provider}, reasoning {reasoning}"
                );
            }
        }
    }
}
