//! The conversation in the Anthropic Messages shape, as a [`Json`] tree that borrows the
//! message text (see [`crate::providers::json_tree`]); the last user turn is marked for caching.

use serde_json::Value;

use super::{normalize_tool_call_id, to_claude_code_name, RequestPlan};
use crate::providers::json_tree::Json;
use crate::transform::{sanitize_surrogates, transform_messages};
use crate::types::{Content, Message, Model, UserContent};

fn image_block<'a>(data: &'a str, mime_type: &'a str) -> Json<'a> {
    Json::object([
        ("type", Json::str("image")),
        (
            "source",
            Json::object([
                ("type", Json::str("base64")),
                ("media_type", Json::str(mime_type)),
                ("data", Json::str(data)),
            ]),
        ),
    ])
}

fn text_block(text: &str) -> Json<'_> {
    Json::object([
        ("type", Json::str("text")),
        ("text", Json::str(sanitize_surrogates(text))),
    ])
}

/// Tool-result content: a plain string without images, blocks with them.
fn tool_result_content(content: &[Content]) -> Json<'_> {
    let has_images = content.iter().any(|c| matches!(c, Content::Image(_)));
    if !has_images {
        let texts: Vec<&str> = content.iter().filter_map(Content::as_text).collect();
        return Json::string(sanitize_surrogates(&texts.join("\n")).to_string());
    }
    let mut blocks: Vec<Json> = content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(text_block(&t.text)),
            Content::Image(i) => Some(image_block(&i.data, &i.mime_type)),
            _ => None,
        })
        .collect();
    if !content.iter().any(|c| matches!(c, Content::Text(_))) {
        blocks.insert(0, text_block("(see attached image)"));
    }
    Json::Array(blocks)
}

/// An error result's text with each run of images replaced by a note that they follow.
fn error_result_text(content: &[Content]) -> String {
    const PLACEHOLDER: &str = "(image attached after the tool results)";
    let mut texts: Vec<&str> = Vec::new();
    let mut previous_was_placeholder = false;
    for block in content {
        match block {
            Content::Image(_) => {
                if !previous_was_placeholder {
                    texts.push(PLACEHOLDER);
                }
                previous_was_placeholder = true;
            }
            Content::Text(t) => {
                previous_was_placeholder = t.text == PLACEHOLDER;
                texts.push(sanitize_surrogates(&t.text));
            }
            _ => previous_was_placeholder = false,
        }
    }
    texts.join("\n")
}

pub(super) fn convert_messages(messages: &[Message], model: &Model, plan: &RequestPlan) -> Vec<Value> {
    let transformed = transform_messages(messages, model, &|id, _| normalize_tool_call_id(id));
    let transformed: Vec<&Message> = transformed.iter().map(|m| m.as_ref()).collect();
    message_tree(&transformed, plan).iter().map(Json::to_value).collect()
}

/// The request's `messages` (already transformed), the last user turn marked for caching.
pub(super) fn message_tree<'a>(transformed: &[&'a Message], plan: &'a RequestPlan) -> Vec<Json<'a>> {
    let mut out: Vec<Json> = Vec::new();
    let mut i = 0;
    while i < transformed.len() {
        match transformed[i] {
            Message::User(user) => match &user.content {
                UserContent::Text(text) => {
                    if !text.trim().is_empty() {
                        out.push(Json::object([
                            ("role", Json::str("user")),
                            ("content", Json::str(sanitize_surrogates(text))),
                        ]));
                    }
                }
                UserContent::Blocks(blocks) => {
                    let converted: Vec<Json> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            Content::Text(t) if !t.text.trim().is_empty() => Some(text_block(&t.text)),
                            Content::Image(img) => Some(image_block(&img.data, &img.mime_type)),
                            _ => None,
                        })
                        .collect();
                    if !converted.is_empty() {
                        out.push(Json::object([
                            ("role", Json::str("user")),
                            ("content", Json::Array(converted)),
                        ]));
                    }
                }
            },
            Message::Assistant(assistant) => {
                let blocks: Vec<Json> = assistant
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        Content::Text(t) if !t.text.trim().is_empty() => Some(text_block(&t.text)),
                        Content::Thinking(t) if t.redacted == Some(true) => Some(Json::object([
                            ("type", Json::str("redacted_thinking")),
                            ("data", Json::str(t.thinking_signature.as_deref().unwrap_or_default())),
                        ])),
                        Content::Thinking(t) => {
                            let signature = t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty());
                            match signature {
                                Some(sig) => Some(Json::object([
                                    ("type", Json::str("thinking")),
                                    ("thinking", Json::str(sanitize_surrogates(&t.thinking))),
                                    ("signature", Json::str(sig)),
                                ])),
                                None if t.thinking.trim().is_empty() => None,
                                // Some compatible servers emit and accept unsigned thinking.
                                None if plan.allow_empty_signature => Some(Json::object([
                                    ("type", Json::str("thinking")),
                                    ("thinking", Json::str(sanitize_surrogates(&t.thinking))),
                                    ("signature", Json::str("")),
                                ])),
                                // An unsigned thinking block (e.g. from an aborted stream) is
                                // replayed as plain text: the API rejects it otherwise.
                                None => Some(text_block(&t.thinking)),
                            }
                        }
                        Content::ToolCall(tc) => {
                            let name = if plan.oauth {
                                Json::string(to_claude_code_name(&tc.name))
                            } else {
                                Json::str(&tc.name)
                            };
                            let input = if tc.arguments.is_object() {
                                Json::Ref(&tc.arguments)
                            } else {
                                Json::Object(Vec::new())
                            };
                            Some(Json::object([
                                ("type", Json::str("tool_use")),
                                ("id", Json::str(&tc.id)),
                                ("name", name),
                                ("input", input),
                            ]))
                        }
                        _ => None,
                    })
                    .collect();
                if !blocks.is_empty() {
                    out.push(Json::object([
                        ("role", Json::str("assistant")),
                        ("content", Json::Array(blocks)),
                    ]));
                }
            }
            Message::ToolResult(_) => {
                // Consecutive results travel together in one user turn.
                let mut results = Vec::new();
                // Error results may hold only text: their images follow all results of the turn.
                let mut error_images = Vec::new();
                while let Some(Message::ToolResult(r)) = transformed.get(i).copied() {
                    let has_images = r.content.iter().any(|c| matches!(c, Content::Image(_)));
                    let content = if r.is_error && has_images {
                        error_images.push(Json::object([
                            ("type", Json::str("text")),
                            (
                                "text",
                                Json::string(format!(
                                    "Images from the error result of tool call {} ({}):",
                                    r.tool_call_id, r.tool_name
                                )),
                            ),
                        ]));
                        error_images.extend(r.content.iter().filter_map(|c| match c {
                            Content::Image(img) => Some(image_block(&img.data, &img.mime_type)),
                            _ => None,
                        }));
                        Json::string(error_result_text(&r.content))
                    } else {
                        tool_result_content(&r.content)
                    };
                    results.push(Json::object([
                        ("type", Json::str("tool_result")),
                        ("tool_use_id", Json::str(&r.tool_call_id)),
                        ("content", content),
                        ("is_error", Json::Bool(r.is_error)),
                    ]));
                    i += 1;
                }
                results.extend(error_images);
                out.push(Json::object([
                    ("role", Json::str("user")),
                    ("content", Json::Array(results)),
                ]));
                continue;
            }
        }
        i += 1;
    }
    if let Some(cc) = &plan.cache_control {
        mark_last_user_message(&mut out, cc);
    }
    out
}

/// Put `cache_control` on the last block of the last message when it is a user message.
fn mark_last_user_message<'a>(messages: &mut [Json<'a>], cache_control: &'a Value) {
    let Some(last) = messages.last_mut() else { return };
    if !matches!(last.get("role"), Some(Json::Str(r)) if r == "user") {
        return;
    }
    let Some(content) = last.get_mut("content") else { return };
    match content {
        Json::Str(text) => {
            let text = std::mem::take(text);
            *content = Json::Array(vec![Json::object([
                ("type", Json::str("text")),
                ("text", Json::Str(text)),
                ("cache_control", Json::Ref(cache_control)),
            ])]);
        }
        Json::Array(blocks) => {
            if let Some(block) = blocks.last_mut() {
                let kind = match block.get("type") {
                    Some(Json::Str(k)) => k.to_string(),
                    _ => String::new(),
                };
                if matches!(kind.as_str(), "text" | "image" | "tool_result") {
                    block.insert(std::borrow::Cow::Borrowed("cache_control"), Json::Ref(cache_control));
                }
            }
        }
        _ => {}
    }
}
