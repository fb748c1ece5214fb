//! Cross-provider hand-off: rewriting a conversation so the target model's API accepts it.
//!
//! Every provider runs [`transform_messages`] before it converts messages to its wire shape.
//! Content a different model produced is made neutral (its thinking is dropped: signatures only
//! hold for the model that made them, and readable thinking sent as text reads as part of the
//! reply; signatures go, tool-call ids are normalised and the matching results follow), failed
//! turns are dropped,
//! tool calls left without a result get a synthetic error result, and images are replaced by a
//! placeholder for text-only models.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::types::{
    now_ms, AssistantMessage, Content, Extra, Message, Model, StopReason, TextContent, ToolCall, ToolResultMessage,
    UserContent, UserMessage,
};

/// Text that stands in for an image in a user message sent to a text-only model.
pub const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
/// Text that stands in for an image in a tool result sent to a text-only model.
pub const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";
/// Content of the synthetic result of a tool call that never got one.
pub const NO_RESULT_TEXT: &str = "No result provided";

/// Whether `message` was produced by `model` itself (same provider, api and id), so its
/// signatures and opaque reasoning may be replayed.
pub fn is_same_model(message: &AssistantMessage, model: &Model) -> bool {
    message.provider == model.provider && message.api == model.api && message.model == model.id
}

/// Prepare `messages` for `model`. `normalize_id` maps a tool-call id from another model to
/// one the target accepts (called only for assistant messages of other models); results of
/// renamed calls are renamed with them.
pub fn transform_messages<'a>(
    messages: &'a [Message],
    model: &Model,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
) -> Vec<Cow<'a, Message>> {
    let mut id_map: HashMap<String, String> = HashMap::new();
    let text_only = !model.supports_images();
    let has_image = |blocks: &[Content]| blocks.iter().any(|b| matches!(b, Content::Image(_)));

    // Messages that need no change are borrowed: a long history is mostly those, and copying
    // it for every request was a large part of a resumed session's first request.
    let transformed: Vec<Cow<'a, Message>> = messages
        .iter()
        .map(|msg| match msg {
            Message::User(user) => match &user.content {
                UserContent::Blocks(blocks) if text_only && has_image(blocks) => {
                    let mut user = UserMessage::clone(user);
                    user.content = UserContent::Blocks(replace_images(blocks, USER_IMAGE_PLACEHOLDER));
                    Cow::Owned(Message::User(Arc::new(user)))
                }
                _ => Cow::Borrowed(msg),
            },
            Message::ToolResult(result) => {
                let strip_images = text_only && has_image(&result.content);
                let new_id = id_map.get(&result.tool_call_id);
                if !strip_images && new_id.is_none() {
                    return Cow::Borrowed(msg);
                }
                let mut result = ToolResultMessage::clone(result);
                if strip_images {
                    result.content = replace_images(&result.content, TOOL_IMAGE_PLACEHOLDER);
                }
                if let Some(new_id) = new_id {
                    result.tool_call_id = new_id.clone();
                }
                Cow::Owned(Message::ToolResult(Arc::new(result)))
            }
            Message::Assistant(assistant) => {
                if is_same_model(assistant, model) && !assistant.content.iter().any(drops_on_replay) {
                    Cow::Borrowed(msg)
                } else {
                    Cow::Owned(Message::Assistant(Arc::new(transform_assistant(
                        assistant,
                        model,
                        normalize_id,
                        &mut id_map,
                    ))))
                }
            }
        })
        .collect();

    // Second pass: drop failed turns, and give orphaned tool calls a result before the next
    // assistant or user message (and at the end).
    let mut out = Vec::with_capacity(transformed.len());
    let mut pending: Vec<ToolCall> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for msg in transformed {
        match msg.as_ref() {
            Message::Assistant(a) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                let calls: Vec<ToolCall> = a.tool_calls().cloned().collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                out.push(msg);
            }
            Message::ToolResult(r) => {
                answered.insert(r.tool_call_id.clone());
                out.push(msg);
            }
            Message::User(_) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                out.push(msg);
            }
        }
    }
    flush_orphans(&mut out, &mut pending, &mut answered);
    out
}

/// A block the model's own message loses when replayed to it: thinking with no signature and
/// no text (see [`transform_assistant`]).
fn drops_on_replay(block: &Content) -> bool {
    matches!(block, Content::Thinking(t)
        if t.redacted != Some(true)
            && t.thinking_signature.as_deref().is_none_or(str::is_empty)
            && t.thinking.trim().is_empty())
}

fn transform_assistant(
    msg: &AssistantMessage,
    model: &Model,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
    id_map: &mut HashMap<String, String>,
) -> AssistantMessage {
    let same = is_same_model(msg, model);
    let mut content = Vec::with_capacity(msg.content.len());
    for block in &msg.content {
        match block {
            Content::Thinking(t) => {
                // Another model's thinking is not replayed at all.
                let keep = same
                    && (t.redacted == Some(true)
                        || t.thinking_signature.as_deref().is_some_and(|s| !s.is_empty())
                        || !t.thinking.trim().is_empty());
                if keep {
                    content.push(block.clone());
                }
            }
            Content::Text(t) => {
                if same {
                    content.push(block.clone());
                } else {
                    content.push(Content::Text(TextContent {
                        text: t.text.clone(),
                        text_signature: None,
                        extra: Extra::new(),
                    }));
                }
            }
            Content::ToolCall(tc) => {
                let mut tc = tc.clone();
                if !same {
                    tc.thought_signature = None;
                    let new_id = normalize_id(&tc.id, msg);
                    if new_id != tc.id {
                        id_map.insert(tc.id.clone(), new_id.clone());
                        tc.id = new_id;
                    }
                }
                content.push(Content::ToolCall(tc));
            }
            Content::Image(_) => content.push(block.clone()),
        }
    }
    AssistantMessage { content, ..msg.clone() }
}

fn flush_orphans(out: &mut Vec<Cow<'_, Message>>, pending: &mut Vec<ToolCall>, answered: &mut HashSet<String>) {
    for call in pending.drain(..) {
        if !answered.contains(&call.id) {
            out.push(Cow::Owned(Message::ToolResult(Arc::new(ToolResultMessage {
                tool_call_id: call.id,
                tool_name: call.name,
                content: vec![Content::text(NO_RESULT_TEXT)],
                details: None,
                is_error: true,
                duration_ms: None,
                timestamp: now_ms(),
                extra: Extra::new(),
            }))));
        }
    }
    answered.clear();
}

/// Replace each run of images with one placeholder text block.
fn replace_images(blocks: &[Content], placeholder: &str) -> Vec<Content> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut previous_was_placeholder = false;
    for block in blocks {
        if let Content::Image(_) = block {
            if !previous_was_placeholder {
                out.push(Content::text(placeholder));
            }
            previous_was_placeholder = true;
            continue;
        }
        previous_was_placeholder = block.as_text() == Some(placeholder);
        out.push(block.clone());
    }
    out
}

/// Remove unpaired UTF-16 surrogates from outgoing text. A Rust `String` is valid UTF-8 and
/// cannot hold them (JSON input with a lone `\uD800` escape is rejected or replaced when it is
/// parsed), so text is already clean; the function exists so every provider applies the same
/// step at the same place as the TypeScript pi.
pub fn sanitize_surrogates(text: &str) -> &str {
    text
}

/// Keep `[A-Za-z0-9_-]`, replace anything else with `_`, and cut to `max` characters (the rule
/// several APIs impose on tool-call ids).
pub fn sanitize_tool_call_id(id: &str, max: usize) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect()
}

/// A short deterministic hash of `s` (base 36), for shortening long identifiers. Same output as
/// the TypeScript pi's `shortHash`, so replayed ids match across implementations.
pub fn short_hash(s: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in s.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", to_base36(h2), to_base36(h1))
}

fn to_base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".to_string();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{InputKind, ModelCost, ThinkingContent, UserMessage};

    fn model(provider: &str, api: &str, id: &str, images: bool) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: api.into(),
            provider: provider.into(),
            base_url: String::new(),
            reasoning: true,
            input: if images {
                vec![InputKind::Text, InputKind::Image]
            } else {
                vec![InputKind::Text]
            },
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    fn assistant(from: &Model, content: Vec<Content>, stop: StopReason) -> Message {
        Message::Assistant(Arc::new(AssistantMessage {
            content,
            stop_reason: stop,
            ..AssistantMessage::empty_for(from)
        }))
    }

    fn result(id: &str) -> Message {
        Message::ToolResult(Arc::new(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: vec![Content::text("ok")],
            ..Default::default()
        }))
    }

    fn call(id: &str) -> Content {
        Content::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: serde_json::json!({}),
            thought_signature: Some("sig".into()),
            ..Default::default()
        })
    }

    fn thinking(text: &str, sig: Option<&str>, redacted: bool) -> Content {
        Content::Thinking(ThinkingContent {
            thinking: text.into(),
            thinking_signature: sig.map(String::from),
            redacted: redacted.then_some(true),
            ..Default::default()
        })
    }

    fn split_pipe(id: &str, _: &AssistantMessage) -> String {
        sanitize_tool_call_id(id.split('|').next().unwrap_or(id), 64)
    }

    #[test]
    fn foreign_thinking_is_dropped_and_ids_follow() {
        let source = model("openai", "openai-responses", "gpt", true);
        let target = model("anthropic", "anthropic-messages", "claude", true);
        let text_with_sig = Content::Text(TextContent {
            text: "answer".into(),
            text_signature: Some("{\"v\":1}".into()),
            extra: Extra::new(),
        });
        let msgs = vec![
            Message::user_text("hi"),
            assistant(
                &source,
                vec![
                    thinking("pondering", Some("enc"), false),
                    thinking("secret", Some("data"), true),
                    thinking("  ", None, false),
                    text_with_sig,
                    call("call_1|fc_1"),
                ],
                StopReason::ToolUse,
            ),
            result("call_1|fc_1"),
        ];
        let out = transform_messages(&msgs, &target, &split_pipe);
        assert_eq!(out.len(), 3);
        let Message::Assistant(a) = &*out[1] else {
            panic!("assistant")
        };
        assert_eq!(a.content.len(), 2);
        assert_eq!(a.content[0], Content::text("answer"));
        let Content::ToolCall(tc) = &a.content[1] else {
            panic!("call")
        };
        assert_eq!(tc.id, "call_1");
        assert_eq!(tc.thought_signature, None);
        let Message::ToolResult(r) = &*out[2] else {
            panic!("result")
        };
        assert_eq!(r.tool_call_id, "call_1");
    }

    #[test]
    fn same_model_keeps_signed_and_redacted_thinking() {
        let m = model("anthropic", "anthropic-messages", "claude", true);
        let msgs = vec![assistant(
            &m,
            vec![
                thinking("", Some("sig"), false),
                thinking("x", Some("d"), true),
                call("id|x"),
            ],
            StopReason::ToolUse,
        )];
        let out = transform_messages(&msgs, &m, &split_pipe);
        let Message::Assistant(a) = &*out[0] else {
            panic!("assistant")
        };
        assert_eq!(a.content.len(), 3);
        let Content::ToolCall(tc) = &a.content[2] else {
            panic!("call")
        };
        assert_eq!(tc.id, "id|x");
        assert_eq!(tc.thought_signature.as_deref(), Some("sig"));
    }

    #[test]
    fn unchanged_messages_are_borrowed_and_changed_ones_copied() {
        let m = model("anthropic", "anthropic-messages", "claude", true);
        let other = model("openai", "openai-responses", "gpt", true);
        let msgs = vec![
            Message::user_text("hi"),
            assistant(&m, vec![Content::text("own")], StopReason::Stop),
            assistant(
                &m,
                vec![thinking("  ", None, false), Content::text("a")],
                StopReason::Stop,
            ),
            assistant(&other, vec![Content::text("foreign")], StopReason::Stop),
        ];
        let out = transform_messages(&msgs, &m, &split_pipe);
        let borrowed: Vec<bool> = out.iter().map(|c| matches!(c, Cow::Borrowed(_))).collect();
        assert_eq!(borrowed, [true, true, false, false]);
        let Message::Assistant(a) = &*out[2] else {
            panic!("assistant")
        };
        assert_eq!(
            a.content,
            vec![Content::text("a")],
            "empty unsigned thinking is dropped"
        );
    }

    #[test]
    fn failed_turns_drop_and_orphans_get_results() {
        let m = model("p", "openai-completions", "m", true);
        let msgs = vec![
            Message::user_text("a"),
            assistant(&m, vec![call("c1"), call("c2")], StopReason::ToolUse),
            result("c2"),
            Message::user_text("b"),
            assistant(&m, vec![Content::text("partial")], StopReason::Aborted),
            assistant(&m, vec![call("c3")], StopReason::ToolUse),
        ];
        let out = transform_messages(&msgs, &m, &split_pipe);
        let roles: Vec<_> = out
            .iter()
            .map(|m| match m.as_ref() {
                Message::ToolResult(r) => format!("toolResult:{}:{}", r.tool_call_id, r.is_error),
                other => other.role().to_string(),
            })
            .collect();
        assert_eq!(
            roles,
            vec![
                "user",
                "assistant",
                "toolResult:c2:false",
                "toolResult:c1:true",
                "user",
                "assistant",
                "toolResult:c3:true"
            ]
        );
        let Message::ToolResult(r) = &*out[3] else {
            panic!("result")
        };
        assert_eq!(r.content, vec![Content::text(NO_RESULT_TEXT)]);
    }

    #[test]
    fn images_become_placeholders_for_text_only_models() {
        let m = model("p", "openai-completions", "m", false);
        let msgs = vec![
            Message::User(Arc::new(UserMessage {
                content: UserContent::Blocks(vec![
                    Content::text("look"),
                    Content::image("AA", "image/png"),
                    Content::image("BB", "image/png"),
                ]),
                ..Default::default()
            })),
            Message::ToolResult(Arc::new(ToolResultMessage {
                tool_call_id: "c".into(),
                content: vec![Content::image("AA", "image/png")],
                ..Default::default()
            })),
        ];
        let out = transform_messages(&msgs, &m, &split_pipe);
        let Message::User(u) = &*out[0] else { panic!("user") };
        assert_eq!(
            u.content,
            UserContent::Blocks(vec![Content::text("look"), Content::text(USER_IMAGE_PLACEHOLDER)])
        );
        let Message::ToolResult(r) = &*out[1] else {
            panic!("result")
        };
        assert_eq!(r.content, vec![Content::text(TOOL_IMAGE_PLACEHOLDER)]);
    }

    #[test]
    fn short_hash_matches_the_reference() {
        // Values computed with the TypeScript implementation.
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("fc_abc"), "1qaoofs1vxahbg");
        assert_eq!(short_hash("héllo🙈"), "1l2as0416a3mad");
    }
}
