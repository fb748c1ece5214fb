//! The output token cap of a request: the caller's or the model's limit, fitted into the room
//! the context window leaves after the (estimated) input.
//!
//! The input is estimated the way pi does: the last usable assistant usage plus the messages
//! after it, each at 3.5 characters (UTF-16 units) per token; without such a usage every message
//! counts, and the system prompt and tool declarations count as the leading system message.

use crate::types::{Content, Context, Message, Model, Usage, UserContent};

/// Tokens always kept free beside the input.
const SAFETY_TOKENS: u64 = 4096;
/// Share of the input kept free on top, for servers that count the input higher.
const SAFETY_RATIO: f64 = 0.15;
/// Below this room the ratio margin is dropped and the cap is at most this.
const MIN_OUTPUT_WITH_RATIO_MARGIN: u64 = 32_768;
const CHARS_PER_TOKEN: f64 = 3.5;
/// What an image counts as, in characters.
const IMAGE_CHARS: usize = 4800;

/// `max_tokens` fitted into `model.contextWindow` for this context (at least 1 unless
/// `max_tokens` is 0; unchanged when the model declares no window).
pub fn fit_to_context(model: &Model, context: &Context, max_tokens: u64) -> u64 {
    if model.context_window == 0 {
        return max_tokens.max(1);
    }
    let window = i128::from(model.context_window);
    let input = i128::from(estimate_input_tokens(context));
    let ratio_margin = (input as f64 * SAFETY_RATIO).ceil() as i128;
    let margin = ratio_margin.max(i128::from(SAFETY_TOKENS));
    let mut room = window - input - margin;
    if room < i128::from(MIN_OUTPUT_WITH_RATIO_MARGIN) {
        room = i128::from(MIN_OUTPUT_WITH_RATIO_MARGIN).min(window - input - i128::from(SAFETY_TOKENS));
    }
    let room = u64::try_from(room.max(1)).unwrap_or(1);
    max_tokens.min(room)
}

/// The request's output cap before any thinking adjustment: the option, else the model's
/// limit, fitted to the context.
pub fn base_max_tokens(model: &Model, context: &Context, requested: Option<u64>) -> u64 {
    fit_to_context(model, context, requested.unwrap_or(model.max_tokens))
}

fn tokens(chars: usize) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

fn utf16_len(s: &str) -> usize {
    // ASCII is one unit per byte; only other text needs the walk.
    if s.is_ascii() {
        s.len()
    } else {
        s.encode_utf16().count()
    }
}

fn content_chars(blocks: &[Content]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            Content::Text(t) => utf16_len(&t.text),
            _ => IMAGE_CHARS,
        })
        .sum()
}

fn message_tokens(message: &Message) -> u64 {
    match message {
        Message::User(u) => match &u.content {
            UserContent::Text(s) => tokens(utf16_len(s)),
            UserContent::Blocks(b) => tokens(content_chars(b)),
        },
        Message::ToolResult(r) => tokens(content_chars(&r.content)),
        Message::Assistant(a) => tokens(
            a.content
                .iter()
                .map(|b| match b {
                    Content::Text(t) => utf16_len(&t.text),
                    Content::Thinking(t) => utf16_len(&t.thinking),
                    Content::ToolCall(c) => utf16_len(&c.name) + utf16_len(&c.arguments.to_string()),
                    Content::Image(_) => 0,
                })
                .sum(),
        ),
    }
}

fn context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

/// The system prompt and tools as the leading system message counts them.
fn system_tokens(context: &Context) -> u64 {
    let prompt = context.system_prompt.as_deref().map_or(0, |p| tokens(utf16_len(p)));
    let tools = if context.tools.is_empty() {
        0
    } else {
        serde_json::to_string(&context.tools).map_or(0, |s| tokens(utf16_len(&s)))
    };
    prompt + tools
}

/// Estimated input tokens of a request for `context`.
pub fn estimate_input_tokens(context: &Context) -> u64 {
    let messages = &context.messages;
    // The leading system message carries timestamp 0, so it never hides a later usage.
    let mut latest_prefix = 0_i64;
    let mut last_usage: Option<(usize, u64)> = None;
    for (i, m) in messages.iter().enumerate() {
        if let Message::Assistant(a) = m {
            let usable = !matches!(
                a.stop_reason,
                crate::types::StopReason::Error | crate::types::StopReason::Aborted
            );
            let tokens = context_tokens(&a.usage);
            if a.timestamp >= latest_prefix && usable && tokens > 0 {
                last_usage = Some((i, tokens));
            }
        }
        latest_prefix = latest_prefix.max(m.timestamp());
    }
    match last_usage {
        Some((index, usage_tokens)) => usage_tokens + messages[index + 1..].iter().map(message_tokens).sum::<u64>(),
        None => system_tokens(context) + messages.iter().map(message_tokens).sum::<u64>(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::types::{AssistantMessage, StopReason};

    fn model(window: u64, max: u64) -> Model {
        Model {
            context_window: window,
            max_tokens: max,
            ..crate::providers::openai_completions::tests::model("p", "http://x/v1", false)
        }
    }

    fn context_of(chars: usize) -> Context {
        Context {
            system_prompt: None,
            messages: vec![Message::user_text("x".repeat(chars))],
            tools: vec![],
        }
    }

    #[test]
    fn a_large_window_keeps_the_model_limit() {
        assert_eq!(base_max_tokens(&model(200_000, 32_000), &context_of(35), None), 32_000);
        assert_eq!(base_max_tokens(&model(200_000, 32_000), &context_of(35), Some(77)), 77);
    }

    #[test]
    fn the_room_keeps_a_margin_of_fifteen_percent_or_4096() {
        // 350 000 chars = 100 000 tokens; margin 15 000; room 200 000 - 115 000 = 85 000.
        assert_eq!(
            fit_to_context(&model(200_000, 128_000), &context_of(350_000), 128_000),
            85_000
        );
        // 3 500 chars = 1 000 tokens; margin 4096; room 200 000 - 5 096.
        assert_eq!(
            fit_to_context(&model(200_000, 500_000), &context_of(3_500), 500_000),
            194_904
        );
    }

    #[test]
    fn a_small_room_drops_the_ratio_and_caps_at_32768() {
        // 32k window, 1 000 tokens in: room 32 000 - 1 000 - 4 096.
        assert_eq!(
            fit_to_context(&model(32_000, 32_000), &context_of(3_500), 32_000),
            26_904
        );
        // A nearly full large window: 180 000 in; ratio room 200k - 180k - 27k < 32768.
        assert_eq!(
            fit_to_context(&model(200_000, 64_000), &context_of(630_000), 64_000),
            15_904
        );
        // Overfull: still 1.
        assert_eq!(fit_to_context(&model(1_000, 500), &context_of(35_000), 500), 1);
        assert_eq!(fit_to_context(&model(0, 500), &context_of(35_000), 500), 500);
    }

    #[test]
    fn the_last_assistant_usage_stands_for_the_prefix() {
        let mut ctx = context_of(350_000);
        ctx.system_prompt = Some("s".repeat(7_000));
        let after_prompt = ctx.messages[0].timestamp() + 1;
        ctx.messages.push(Message::Assistant(Arc::new(AssistantMessage {
            timestamp: after_prompt,
            usage: Usage {
                total_tokens: 1_000,
                ..Default::default()
            },
            stop_reason: StopReason::Stop,
            ..Default::default()
        })));
        ctx.messages.push(Message::user_text("y".repeat(35)));
        assert_eq!(estimate_input_tokens(&ctx), 1_010);
        // An aborted reply's usage does not count: everything is estimated.
        if let Message::Assistant(a) = &mut ctx.messages[1] {
            Arc::make_mut(a).stop_reason = StopReason::Aborted;
        }
        assert_eq!(estimate_input_tokens(&ctx), 2_000 + 100_000 + 10);
    }
}
