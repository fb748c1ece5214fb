//! The conversation in the Chat Completions shape, as a [`Json`] tree that borrows the
//! message text (see [`crate::providers::json_tree`]).

use std::borrow::Cow;

use serde_json::Value;

use super::reasoning_details::is_reasoning_detail;
use super::Compat;
use crate::providers::grammar_tools::GrammarInputs;
use crate::providers::json_tree::Json;
use crate::transform::{sanitize_surrogates, transform_messages};
use crate::types::{AssistantMessage, Content, Context, Message, Model, ToolResultMessage, UserContent};

const TOOL_RESULTS_PROCESSED: &str = "I have processed the tool results.";
/// Assistant fields a thinking signature may name for replaying the raw reasoning.
const REASONING_FIELDS: [&str; 3] = ["reasoning", "reasoning_content", "reasoning_text"];

/// A thinking signature that holds a non-empty array of reasoning details.
fn reasoning_details_array(signature: Option<&str>) -> Option<Value> {
    let parsed: Value = serde_json::from_str(signature.filter(|s| !s.is_empty())?).ok()?;
    let items = parsed.as_array()?;
    (!items.is_empty() && items.iter().all(is_reasoning_detail)).then_some(parsed)
}

/// A tool call's signature holding one encrypted reasoning detail with an id and data.
fn legacy_encrypted_detail(signature: Option<&str>) -> Option<Value> {
    let parsed: Value = serde_json::from_str(signature.filter(|s| !s.is_empty())?).ok()?;
    let ok = is_reasoning_detail(&parsed)
        && parsed["type"] == "reasoning.encrypted"
        && parsed["id"].as_str().is_some_and(|s| !s.is_empty())
        && parsed["data"].as_str().is_some_and(|s| !s.is_empty());
    ok.then_some(parsed)
}

/// Tool-call ids this API accepts: Responses-style `call|item` ids become `call_item` in safe
/// characters (calls of one turn may share the call part), shortened to 40 with a hash of the
/// whole id when longer; OpenAI's own limit is 40.
fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    if let Some((call, item)) = id.split_once('|') {
        let call = crate::transform::sanitize_tool_call_id(call, usize::MAX);
        let item = crate::transform::sanitize_tool_call_id(item, usize::MAX);
        let combined = if item.is_empty() {
            call.clone()
        } else {
            format!("{call}_{item}")
        };
        if combined.chars().count() <= 40 {
            return combined;
        }
        let hash: String = crate::transform::short_hash(id).chars().take(8).collect();
        let keep = 40usize.saturating_sub(hash.len() + 1).max(1);
        let prefix: String = call.chars().take(keep).collect();
        return format!("{prefix}_{hash}");
    }
    if model.provider == "openai" && id.chars().count() > 40 {
        return id.chars().take(40).collect();
    }
    id.to_string()
}

/// The context's messages prepared for `model` (see [`transform_messages`]).
pub(crate) fn transform_for<'c>(model: &Model, context: &'c Context) -> Vec<Cow<'c, Message>> {
    let normalize = |id: &str, _: &AssistantMessage| normalize_tool_call_id(model, id);
    transform_messages(&context.messages, model, &normalize)
}

/// The request's `messages`: the system prompt, then `messages` (already transformed).
pub(crate) fn message_tree<'a>(
    model: &Model,
    system_prompt: Option<&'a str>,
    messages: &[&'a Message],
    compat: &Compat,
    grammar: &GrammarInputs,
) -> Vec<Json<'a>> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    each_message(model, system_prompt, messages, compat, grammar, &mut |m| out.push(m));
    out
}

/// About how many bytes the request's `messages` take written out: the text, which is most of
/// a long history, exactly, and a little for each message's keys and tool calls.
pub(crate) fn messages_size_estimate(system_prompt: Option<&str>, messages: &[&Message]) -> usize {
    let blocks = |content: &[Content]| -> usize {
        content
            .iter()
            .map(|c| match c {
                Content::Text(t) => t.text.len() + 32,
                Content::Thinking(t) => t.thinking.len() + 32,
                Content::Image(i) => i.data.len() + i.mime_type.len() + 64,
                // The arguments go out as a string of JSON: its quotes are escaped.
                Content::ToolCall(tc) => tc.id.len() + tc.name.len() + 80 + tc.arguments.to_string().len() * 5 / 4,
            })
            .sum()
    };
    let history: usize = messages
        .iter()
        .map(|m| {
            48 + match m {
                Message::User(u) => match &u.content {
                    UserContent::Text(t) => t.len(),
                    UserContent::Blocks(b) => blocks(b),
                },
                Message::Assistant(a) => blocks(&a.content),
                Message::ToolResult(r) => blocks(&r.content) + r.tool_call_id.len() + r.tool_name.len(),
            }
        })
        .sum();
    history + system_prompt.map_or(0, |s| s.len() + 32)
}

/// Hand each of the request's `messages` to `emit`, in order: the system prompt, then
/// `messages` (already transformed).
pub(crate) fn each_message<'a>(
    model: &Model,
    system_prompt: Option<&'a str>,
    messages: &[&'a Message],
    compat: &Compat,
    grammar: &GrammarInputs,
    emit: &mut dyn FnMut(Json<'a>),
) {
    if let Some(system) = system_prompt {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        emit(Json::object([
            ("role", Json::str(role)),
            ("content", Json::str(sanitize_surrogates(system))),
        ]));
    }
    let processed = || {
        Json::object([
            ("role", Json::str("assistant")),
            ("content", Json::str(TOOL_RESULTS_PROCESSED)),
        ])
    };
    let mut last_role: Option<&str> = None;
    let mut i = 0;
    while i < messages.len() {
        let msg = messages[i];
        if compat.requires_assistant_after_tool_result && last_role == Some("toolResult") {
            if let Message::User(_) = msg {
                emit(processed());
            }
        }
        match msg {
            Message::User(user) => {
                match &user.content {
                    UserContent::Text(s) => emit(Json::object([
                        ("role", Json::str("user")),
                        ("content", Json::str(sanitize_surrogates(s))),
                    ])),
                    UserContent::Blocks(blocks) => {
                        let parts: Vec<Json> = blocks
                            .iter()
                            .filter(|b| b.as_text().is_none_or(|t| !t.is_empty()))
                            .filter_map(user_part)
                            .collect();
                        if parts.is_empty() {
                            i += 1;
                            continue;
                        }
                        emit(Json::object([
                            ("role", Json::str("user")),
                            ("content", Json::Array(parts)),
                        ]));
                    }
                }
                last_role = Some("user");
            }
            Message::Assistant(a) => {
                if let Some(v) = assistant_message(model, compat, grammar, a) {
                    emit(v);
                }
                last_role = Some("assistant");
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                let mut j = i;
                while let Some(Message::ToolResult(result)) = messages.get(j).copied() {
                    emit(tool_message(result, compat));
                    if model.supports_images() {
                        images.extend(result.content.iter().filter_map(|c| match c {
                            Content::Image(img) => Some(image_url(&img.mime_type, &img.data)),
                            _ => None,
                        }));
                    }
                    j += 1;
                }
                i = j;
                if images.is_empty() {
                    last_role = Some("toolResult");
                } else {
                    if compat.requires_assistant_after_tool_result {
                        emit(processed());
                    }
                    let mut parts = vec![Json::object([
                        ("type", Json::str("text")),
                        ("text", Json::str("Attached image(s) from tool result:")),
                    ])];
                    parts.extend(images);
                    emit(Json::object([
                        ("role", Json::str("user")),
                        ("content", Json::Array(parts)),
                    ]));
                    last_role = Some("user");
                }
                continue;
            }
        }
        i += 1;
    }
}

fn image_url<'a>(mime: &str, data: &str) -> Json<'a> {
    Json::object([
        ("type", Json::str("image_url")),
        (
            "image_url",
            Json::object([("url", Json::string(format!("data:{mime};base64,{data}")))]),
        ),
    ])
}

fn user_part(block: &Content) -> Option<Json<'_>> {
    match block {
        Content::Text(t) => Some(Json::object([
            ("type", Json::str("text")),
            ("text", Json::str(sanitize_surrogates(&t.text))),
        ])),
        Content::Image(img) => Some(image_url(&img.mime_type, &img.data)),
        _ => None,
    }
}

/// The text blocks of `blocks` joined with newlines, borrowed when there is only one (most
/// messages): the request of a long history would otherwise hold a second copy of its text.
fn joined_text(blocks: &[Content]) -> Cow<'_, str> {
    let mut texts = blocks.iter().filter_map(Content::as_text);
    match (texts.next(), texts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(only), None) => Cow::Borrowed(only),
        _ => Cow::Owned(crate::types::join_text(blocks)),
    }
}

fn text_json(text: Cow<'_, str>) -> Json<'_> {
    match text {
        Cow::Borrowed(t) => Json::str(sanitize_surrogates(t)),
        Cow::Owned(t) => Json::string(sanitize_surrogates(&t).to_string()),
    }
}

fn tool_message<'a>(result: &'a ToolResultMessage, compat: &Compat) -> Json<'a> {
    let text = joined_text(&result.content);
    let content = if !text.trim().is_empty() {
        text
    } else if result.content.iter().any(|c| matches!(c, Content::Image(_))) {
        Cow::Borrowed("(see attached image)")
    } else {
        Cow::Borrowed("(no tool output)")
    };
    let mut m = Json::object([
        ("role", Json::str("tool")),
        ("content", text_json(content)),
        ("tool_call_id", Json::str(&result.tool_call_id)),
    ]);
    if compat.requires_tool_result_name && !result.tool_name.is_empty() {
        m.insert(Cow::Borrowed("name"), Json::str(&result.tool_name));
    }
    m
}

fn assistant_message<'a>(
    model: &Model,
    compat: &Compat,
    grammar: &GrammarInputs,
    a: &'a AssistantMessage,
) -> Option<Json<'a>> {
    let mut m = Json::object([
        ("role", Json::str("assistant")),
        (
            "content",
            if compat.requires_assistant_after_tool_result || compat.requires_non_null_assistant_content {
                Json::str("")
            } else {
                Json::Null
            },
        ),
    ]);
    let text_parts: Vec<&str> = a
        .content
        .iter()
        .filter_map(Content::as_text)
        .filter(|t| !t.trim().is_empty())
        .collect();
    // Borrowed when there is one part (the usual reply), as in `joined_text`.
    let text: Cow<'a, str> = match text_parts.as_slice() {
        [] => Cow::Borrowed(""),
        [only] => Cow::Borrowed(*only),
        parts => Cow::Owned(parts.concat()),
    };
    // Structured reasoning details: a thinking block's signature holding the array, else the
    // encrypted details older replies kept on their tool calls.
    let signed_details: Option<Value> = a.content.iter().find_map(|c| match c {
        Content::Thinking(t) => reasoning_details_array(t.thinking_signature.as_deref()),
        _ => None,
    });
    let legacy_details: Vec<Value> = a
        .tool_calls()
        .filter_map(|tc| legacy_encrypted_detail(tc.thought_signature.as_deref()))
        .collect();
    let thinking: Vec<&crate::types::ThinkingContent> = a
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Thinking(t) if !t.thinking.trim().is_empty() => Some(t),
            _ => None,
        })
        .collect();
    let content = Cow::Borrowed("content");
    if !thinking.is_empty() {
        if compat.requires_thinking_as_text {
            let joined: Vec<&str> = thinking.iter().map(|t| sanitize_surrogates(&t.thinking)).collect();
            let mut parts = vec![Json::object([
                ("type", Json::str("text")),
                ("text", Json::string(joined.join("\n\n"))),
            ])];
            parts.extend(
                text_parts
                    .iter()
                    .map(|t| Json::object([("type", Json::str("text")), ("text", Json::str(sanitize_surrogates(t)))])),
            );
            m.insert(content, Json::Array(parts));
        } else {
            if !text.is_empty() {
                m.insert(content, text_json(text));
            }
            if signed_details.is_none() && legacy_details.is_empty() {
                // The first block's signature names the field the server streamed it in.
                let mut field = thinking[0].thinking_signature.as_deref().unwrap_or_default();
                if model.provider == "opencode-go" && field == "reasoning" {
                    field = "reasoning_content";
                }
                if REASONING_FIELDS.contains(&field) {
                    let joined: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
                    m.insert(Cow::Borrowed(field), Json::string(joined.join("\n")));
                }
            }
        }
    } else if !text.is_empty() {
        m.insert(content, text_json(text));
    }
    let calls: Vec<&crate::types::ToolCall> = a.tool_calls().collect();
    if !calls.is_empty() {
        let tool_calls: Vec<Json> = calls
            .iter()
            .map(|tc| {
                // A grammar tool's call goes back as the raw input it was sampled as.
                if let Some(property) = grammar.get(&tc.name) {
                    let input = tc.arguments.get(property).and_then(Value::as_str).unwrap_or_default();
                    return Json::object([
                        ("id", Json::str(&tc.id)),
                        ("type", Json::str("custom")),
                        (
                            "custom",
                            Json::object([
                                ("name", Json::str(&tc.name)),
                                ("input", Json::string(input.to_string())),
                            ]),
                        ),
                    ]);
                }
                Json::object([
                    ("id", Json::str(&tc.id)),
                    ("type", Json::str("function")),
                    (
                        "function",
                        Json::object([
                            ("name", Json::str(&tc.name)),
                            ("arguments", Json::string(tc.arguments.to_string())),
                        ]),
                    ),
                ])
            })
            .collect();
        m.insert(Cow::Borrowed("tool_calls"), Json::Array(tool_calls));
    }
    if let Some(details) = signed_details {
        m.insert(Cow::Borrowed("reasoning_details"), Json::Value(Box::new(details)));
    } else if !legacy_details.is_empty() {
        m.insert(
            Cow::Borrowed("reasoning_details"),
            Json::Array(legacy_details.into_iter().map(|d| Json::Value(Box::new(d))).collect()),
        );
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && m.get("reasoning_content").is_none()
    {
        m.insert(Cow::Borrowed("reasoning_content"), Json::str(""));
    }
    let has_content = match m.get("content") {
        Some(Json::Str(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        _ => false,
    };
    if !has_content && m.get("tool_calls").is_none() {
        return None;
    }
    Some(m)
}
