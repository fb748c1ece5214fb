//! The ConverseStream request body as pi 1.6 builds it and the AWS SDK serialises it: messages
//! with Bedrock's content blocks (blank text dropped, `<empty>` where a block is required),
//! consecutive tool results in one user message, cache points for Claude models that cache,
//! the output cap, and `additionalModelRequestFields` for thinking (Claude budgets or adaptive
//! effort, OpenAI's effort fields).

use serde_json::{json, Map, Value};

use super::credentials::Env;
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::{apply_payload_hook, js_number, output_cap};
use crate::thinking::adjust_max_tokens_for_thinking;
use crate::transform::{sanitize_tool_call_id, transform_messages};
use crate::types::{AssistantMessage, Content, Context, ImageContent, Message, Model, ThinkingLevel, UserContent};

/// What Bedrock gets where a block is required but pi has no text.
const EMPTY_TEXT: &str = "<empty>";
/// The beta that lets Claude 4.7+ drop replayed thinking bound to an older prompt.
const THINKING_BINDING_BETA: &str = "thinking-binding-controls-2026-08-01";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
/// Error tool results of Claude hold only text: their images move after the turn's results.
const ERROR_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

/// Lowercased id and name, also with runs of blanks, `_`, `.` and `:` as `-`, to match model
/// families in ids, names and inference-profile ARNs alike.
fn candidates(model: &Model) -> Vec<String> {
    let mut out = Vec::with_capacity(4);
    for value in [
        Some(model.id.as_str()),
        Some(model.name.as_str()).filter(|n| !n.is_empty()),
    ]
    .into_iter()
    .flatten()
    {
        let lower = value.to_lowercase();
        let mut dashed = String::with_capacity(lower.len());
        let mut in_run = false;
        for c in lower.chars() {
            if c.is_whitespace() || matches!(c, '_' | '.' | ':') {
                if !in_run {
                    dashed.push('-');
                }
                in_run = true;
            } else {
                dashed.push(c);
                in_run = false;
            }
        }
        out.push(lower);
        out.push(dashed);
    }
    out
}

fn any_contains(candidates: &[String], needles: &[&str]) -> bool {
    candidates.iter().any(|c| needles.iter().any(|n| c.contains(n)))
}

/// Anthropic's Claude on Bedrock (by id, or by name for application inference profiles).
pub fn is_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude") || id.contains("anthropic/claude") || name.contains("claude")
}

const CLAUDE_5: &[&str] = &["fable-5", "opus-5", "sonnet-5", "haiku-5"];

/// Claude models that think adaptively (an effort, no token budget).
pub fn is_adaptive(model: &Model) -> bool {
    let c = candidates(model);
    any_contains(&c, &["opus-4-6", "opus-4-7", "opus-4-8", "sonnet-4-6"]) || any_contains(&c, CLAUDE_5)
}

/// Claude 4.7+ (native `xhigh` effort and thinking block binding).
fn is_claude_47_plus(model: &Model) -> bool {
    let c = candidates(model);
    any_contains(&c, &["opus-4-7", "opus-4-8"]) || any_contains(&c, CLAUDE_5)
}

fn supports_prompt_caching(model: &Model, env: Env<'_>) -> bool {
    let c = candidates(model);
    if !any_contains(&c, &["claude"]) {
        return env("AWS_BEDROCK_FORCE_CACHE").as_deref() == Some("1");
    }
    any_contains(&c, CLAUDE_5) || any_contains(&c, &["-4-", "claude-3-7-sonnet", "claude-3-5-haiku"])
}

fn cache_point(retention: CacheRetention) -> Value {
    if retention == CacheRetention::Long {
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    } else {
        json!({"cachePoint": {"type": "default"}})
    }
}

/// The thinking level asked for, `None` when off.
fn requested_level(options: &StreamOptions) -> Option<ThinkingLevel> {
    options.reasoning.filter(|l| *l != ThinkingLevel::Off)
}

/// The body (after the `on_payload` hook). `retention` is the call's effective cache retention.
pub fn request_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    retention: CacheRetention,
    env: Env<'_>,
) -> Value {
    let caching = retention != CacheRetention::None && supports_prompt_caching(model, env);
    let level = requested_level(options);
    let mut max_tokens = output_cap::base_max_tokens(model, context, options.max_tokens);
    let mut budget = None;
    if let Some(level) = level.filter(|_| is_claude(model) && !is_adaptive(model)) {
        let (adjusted, b) =
            adjust_max_tokens_for_thinking(max_tokens, model.max_tokens, level, &options.thinking_budgets);
        max_tokens = output_cap::fit_to_context(model, context, adjusted);
        budget = Some(b.min(max_tokens.saturating_sub(1024)));
    }

    let mut body = Map::new();
    body.insert(
        "messages".into(),
        Value::Array(messages(model, context, caching, retention)),
    );
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let mut blocks = vec![json!({"text": system})];
        if caching {
            blocks.push(cache_point(retention));
        }
        body.insert("system".into(), Value::Array(blocks));
    }
    let mut inference = Map::new();
    if max_tokens > 0 {
        inference.insert("maxTokens".into(), json!(max_tokens));
    }
    if let Some(t) = options.temperature {
        inference.insert("temperature".into(), js_number(t));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"toolSpec": {
                    "name": tool.name,
                    "inputSchema": {"json": tool.parameters},
                    "description": tool.description,
                }})
            })
            .collect();
        body.insert("toolConfig".into(), json!({"tools": tools}));
    }
    if let Some(fields) = level.and_then(|level| additional_fields(model, level, budget, env)) {
        body.insert("additionalModelRequestFields".into(), fields);
    }
    apply_payload_hook(options, model, Value::Object(body))
}

fn is_gov_cloud(model: &Model, env: Env<'_>) -> bool {
    let region = env("AWS_REGION")
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .unwrap_or_default();
    let id = model.id.to_lowercase();
    region.to_lowercase().starts_with("us-gov-") || id.starts_with("us-gov.") || id.starts_with("arn:aws-us-gov:")
}

fn additional_fields(model: &Model, level: ThinkingLevel, budget: Option<u64>, env: Env<'_>) -> Option<Value> {
    if !model.reasoning {
        return None;
    }
    let mapped = |level: ThinkingLevel| {
        model
            .thinking_level_map
            .as_ref()
            .and_then(|m| m.get(level.as_str()))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if is_claude(model) {
        // GovCloud rejects `display` and block binding.
        let gov = is_gov_cloud(model, env);
        let binding = !gov && is_claude_47_plus(model);
        let mut thinking = Map::new();
        let mut fields = Map::new();
        if is_adaptive(model) {
            thinking.insert("type".into(), json!("adaptive"));
            if !gov {
                thinking.insert("display".into(), json!("summarized"));
            }
            if binding {
                thinking.insert(
                    "block_binding".into(),
                    json!({"prefix_mismatch_behavior": "drop_block"}),
                );
            }
            let effort = if level == ThinkingLevel::Xhigh && is_claude_47_plus(model) {
                "xhigh".to_string()
            } else {
                mapped(level).unwrap_or_else(|| {
                    match level {
                        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
                        ThinkingLevel::Medium => "medium",
                        _ => "high",
                    }
                    .to_string()
                })
            };
            fields.insert("thinking".into(), Value::Object(thinking));
            fields.insert("output_config".into(), json!({"effort": effort}));
            if binding {
                fields.insert("anthropic_beta".into(), json!([THINKING_BINDING_BETA]));
            }
        } else {
            thinking.insert("type".into(), json!("enabled"));
            thinking.insert("budget_tokens".into(), json!(budget.unwrap_or(1024)));
            if !gov {
                thinking.insert("display".into(), json!("summarized"));
            }
            fields.insert("thinking".into(), Value::Object(thinking));
            fields.insert("anthropic_beta".into(), json!([INTERLEAVED_THINKING_BETA]));
        }
        return Some(Value::Object(fields));
    }
    let c = candidates(model);
    if any_contains(&c, &["gpt-oss"]) {
        let effort = match level {
            ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            _ => "high",
        };
        return Some(json!({"reasoning_effort": effort}));
    }
    if any_contains(&c, &["gpt-"]) {
        let effort = mapped(level).unwrap_or_else(|| {
            match level {
                ThinkingLevel::Minimal => "low",
                other => other.as_str(),
            }
            .to_string()
        });
        return Some(json!({"reasoning": {"effort": effort}}));
    }
    None
}

fn image_block(image: &ImageContent) -> Value {
    let format = match image.mime_type.as_str() {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        // Bedrock takes these four; anything else would be refused by the service.
        _ => "png",
    };
    json!({"image": {"format": format, "source": {"bytes": image.data}}})
}

fn text_block(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"text": text}))
}

/// Objects keep their keys except empty ones (Bedrock's document type rejects them).
fn sanitize_document(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(sanitize_document).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.clone(), sanitize_document(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn tool_result_content(content: &[Content]) -> Vec<Value> {
    let mut out: Vec<Value> = content
        .iter()
        .filter_map(|c| match c {
            Content::Image(image) => Some(image_block(image)),
            Content::Text(t) => text_block(&t.text),
            _ => None,
        })
        .collect();
    if out.is_empty() {
        out.push(json!({"text": EMPTY_TEXT}));
    }
    out
}

/// An error result's content with each run of images replaced by the placeholder.
fn without_images(content: &[Content]) -> Vec<Content> {
    let mut out = Vec::new();
    let mut previous_placeholder = false;
    for block in content {
        if matches!(block, Content::Image(_)) {
            if !previous_placeholder {
                out.push(Content::text(ERROR_IMAGE_PLACEHOLDER));
            }
            previous_placeholder = true;
            continue;
        }
        previous_placeholder = matches!(block, Content::Text(t) if t.text == ERROR_IMAGE_PLACEHOLDER);
        out.push(block.clone());
    }
    out
}

fn assistant_blocks(model: &Model, message: &AssistantMessage) -> Vec<Value> {
    let mut blocks = Vec::new();
    for block in &message.content {
        match block {
            Content::Text(t) => blocks.extend(text_block(&t.text)),
            Content::ToolCall(call) => blocks.push(json!({"toolUse": {
                "toolUseId": call.id, "name": call.name, "input": sanitize_document(&call.arguments),
            }})),
            Content::Thinking(t) if t.redacted == Some(true) => {
                // Opaque reasoning goes back as the bytes it came as (base64 on the wire).
                if let Some(sig) = t.thinking_signature.as_deref().filter(|s| is_base64(s)) {
                    blocks.push(json!({"reasoningContent": {"redactedContent": sig}}));
                }
            }
            Content::Thinking(t) if t.thinking.trim().is_empty() => {}
            Content::Thinking(t) => {
                let signature = t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty());
                if !is_claude(model) {
                    blocks.push(json!({"reasoningContent": {"reasoningText": {"text": t.thinking}}}));
                } else if let Some(signature) = signature {
                    blocks.push(json!({"reasoningContent": {"reasoningText": {
                        "text": t.thinking, "signature": signature,
                    }}}));
                } else {
                    // Bedrock rejects unsigned reasoning: replay it as text.
                    blocks.push(json!({"text": t.thinking}));
                }
            }
            _ => {}
        }
    }
    blocks
}

fn is_base64(s: &str) -> bool {
    use base64::Engine;
    !s.is_empty() && base64::engine::general_purpose::STANDARD.decode(s).is_ok()
}

fn messages(model: &Model, context: &Context, caching: bool, retention: CacheRetention) -> Vec<Value> {
    let normalize = |id: &str, _: &AssistantMessage| sanitize_tool_call_id(id, 64);
    let transformed = transform_messages(&context.messages, model, &normalize);
    let claude = is_claude(model);
    let mut out: Vec<Value> = Vec::with_capacity(transformed.len());
    let mut i = 0;
    while i < transformed.len() {
        match transformed[i].as_ref() {
            Message::User(user) => {
                let content = match &user.content {
                    UserContent::Text(text) => vec![text_block(text).unwrap_or_else(|| json!({"text": EMPTY_TEXT}))],
                    UserContent::Blocks(blocks) => {
                        let mut content: Vec<Value> = blocks
                            .iter()
                            .filter_map(|b| match b {
                                Content::Text(t) => text_block(&t.text),
                                Content::Image(image) => Some(image_block(image)),
                                _ => None,
                            })
                            .collect();
                        if content.is_empty() {
                            content.push(json!({"text": EMPTY_TEXT}));
                        }
                        content
                    }
                };
                out.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant(assistant) => {
                let blocks = assistant_blocks(model, assistant);
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                let mut error_images = Vec::new();
                while let Some(Message::ToolResult(r)) = transformed.get(i).map(|m| m.as_ref()) {
                    let has_images = r.content.iter().any(|c| matches!(c, Content::Image(_)));
                    let content = if claude && r.is_error && has_images {
                        error_images.push(json!({"text": format!(
                            "Images from the error result of tool call {} ({}):",
                            r.tool_call_id, r.tool_name
                        )}));
                        error_images.extend(r.content.iter().filter_map(|c| match c {
                            Content::Image(image) => Some(image_block(image)),
                            _ => None,
                        }));
                        tool_result_content(&without_images(&r.content))
                    } else {
                        tool_result_content(&r.content)
                    };
                    results.push(json!({"toolResult": {
                        "toolUseId": r.tool_call_id,
                        "content": content,
                        "status": if r.is_error { "error" } else { "success" },
                    }}));
                    i += 1;
                }
                results.extend(error_images);
                out.push(json!({"role": "user", "content": results}));
                continue;
            }
        }
        i += 1;
    }
    if caching {
        if let Some(last) = out.last_mut().filter(|m| m["role"] == "user") {
            if let Some(content) = last.get_mut("content").and_then(Value::as_array_mut) {
                content.push(cache_point(retention));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str, name: &str) -> Model {
        serde_json::from_value(json!({
            "id": id, "name": name, "api": "bedrock-converse-stream", "provider": "amazon-bedrock",
            "baseUrl": "", "reasoning": true, "input": ["text", "image"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 200000, "maxTokens": 64000,
        }))
        .unwrap()
    }

    #[test]
    fn model_families_are_told_by_id_or_name() {
        assert!(is_claude(&model("anthropic.claude-3-haiku", "")));
        assert!(is_claude(&model(
            "arn:aws:bedrock:us-west-2:1:application-inference-profile/x",
            "My Claude"
        )));
        assert!(!is_claude(&model("amazon.nova-pro-v1:0", "Nova Pro")));
        assert!(is_adaptive(&model("us.anthropic.claude-sonnet-4-6", "")));
        assert!(is_adaptive(&model("profile", "Claude Opus 4.6")));
        assert!(!is_adaptive(&model("anthropic.claude-sonnet-4-5-20250929-v1:0", "")));
        let none = |_: &str| None;
        assert!(supports_prompt_caching(
            &model("anthropic.claude-3-7-sonnet-v1", ""),
            &none
        ));
        assert!(!supports_prompt_caching(
            &model("anthropic.claude-3-haiku-v1", ""),
            &none
        ));
        let force = |k: &str| (k == "AWS_BEDROCK_FORCE_CACHE").then(|| "1".to_string());
        assert!(supports_prompt_caching(&model("arn:profile", "custom"), &force));
    }
}
