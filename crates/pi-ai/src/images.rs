//! Image generation (pi 1.6's `generateImages`): the `openrouter-images` API, OpenRouter's
//! Chat Completions asked for image output (`modalities`) without streaming; the images come
//! back as data URLs on the reply's message.

use serde::Serialize;
use serde_json::{json, Value};

use crate::http::{self, ErrorBodyStyle, RetryPolicy};
use crate::options::StreamOptions;
use crate::providers::model_headers;
use crate::task_models::TaskModel;
use crate::types::{now_ms, Content, StopReason, Usage, UsageCost};

/// What to draw: text prompts and optional reference images.
#[derive(Debug, Clone, Default)]
pub struct ImagesContext {
    pub input: Vec<Content>,
}

/// The result, as pi 1.6 gives it to a caller (keys in its order).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantImages {
    pub api: String,
    pub provider: String,
    pub model: String,
    /// Text and image blocks, in the reply's order (text first).
    pub output: Vec<Content>,
    pub stop_reason: StopReason,
    pub timestamp: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// The request body, as pi 1.6 sends it.
pub fn request_body(model: &TaskModel, context: &ImagesContext) -> Value {
    let content: Vec<Value> = context
        .input
        .iter()
        .filter_map(|block| match block {
            Content::Text(t) => Some(json!({"type": "text", "text": t.text})),
            Content::Image(i) => Some(json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{};base64,{}", i.mime_type, i.data)},
            })),
            _ => None,
        })
        .collect();
    let modalities = if model.output.iter().any(|o| o == "text") {
        json!(["image", "text"])
    } else {
        json!(["image"])
    };
    json!({
        "model": model.id,
        "messages": [{"role": "user", "content": content}],
        "stream": false,
        "modalities": modalities,
    })
}

/// Generate images with `model`. Failures are in the result (`stopReason: "error"`), never a
/// panic or an `Err`.
pub async fn generate_images(model: &TaskModel, context: &ImagesContext, options: &StreamOptions) -> AssistantImages {
    let mut out = AssistantImages {
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        output: Vec::new(),
        stop_reason: StopReason::Stop,
        timestamp: now_ms(),
        response_id: None,
        usage: None,
        error_message: None,
    };
    let result = tokio::select! {
        r = request(model, context, options) => r,
        () = options.cancel.cancelled() => Err("Request was aborted".to_string()),
    };
    match result.and_then(|reply| read_reply(model, &reply, &mut out)) {
        Ok(()) => {}
        Err(message) => {
            out.stop_reason = if options.cancel.is_cancelled() {
                StopReason::Aborted
            } else {
                StopReason::Error
            };
            out.error_message = Some(message);
        }
    }
    out
}

async fn request(model: &TaskModel, context: &ImagesContext, options: &StreamOptions) -> Result<Value, String> {
    if model.api != "openrouter-images" {
        return Err(format!("No images API provider registered for api: {}", model.api));
    }
    let api_key = options
        .api_key
        .as_deref()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
    let mut body = request_body(model, context);
    if let Some(hook) = &options.on_payload {
        if let Some(replaced) = hook(&body, &model.as_model()) {
            body = replaced;
        }
    }
    let mut headers = vec![
        ("accept".to_string(), "application/json".to_string()),
        ("authorization".to_string(), format!("Bearer {api_key}")),
    ];
    headers.extend(model_headers(&model.as_model()));
    headers.extend(options.headers.iter().cloned());
    let url = format!("{}/chat/completions", model.base_url.trim_end_matches('/'));
    let bytes = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
    let response = http::post_json(
        &url,
        http::header_map(&headers)?,
        bytes.into(),
        RetryPolicy::from_options(options),
    )
    .await
    .map_err(|e| e.message(ErrorBodyStyle::ErrorField))?;
    let text = response.text().await.map_err(|e| e.to_string())?;
    // A reply that is not JSON fails with Node's words for it, as in 1.6.
    serde_json::from_str(&text).map_err(|_| crate::js_json::parse_error_message(&text))
}

/// The reply's id, usage, text and data-URL images. A reply without the `choices` list, or
/// whose first choice has no message, fails with the words Node gives 1.6 for reading
/// through the missing value (the id and usage read before stay).
fn read_reply(model: &TaskModel, reply: &Value, out: &mut AssistantImages) -> Result<(), String> {
    let missing = |value: Option<&Value>, key: &str| {
        let what = if value.is_some_and(Value::is_null) {
            "null"
        } else {
            "undefined"
        };
        format!("Cannot read properties of {what} (reading '{key}')")
    };
    if reply.is_null() {
        return Err(missing(Some(reply), "id"));
    }
    out.response_id = reply.get("id").and_then(Value::as_str).map(str::to_string);
    if let Some(usage) = reply.get("usage").filter(|u| u.is_object()) {
        out.usage = Some(parse_usage(usage, model));
    }
    let choices = reply.get("choices").filter(|c| !c.is_null());
    let Some(choices) = choices else {
        return Err(missing(reply.get("choices"), "0"));
    };
    let Some(choice) = choices.get(0).filter(|c| c.is_object()) else {
        return Ok(());
    };
    let Some(message) = choice.get("message").filter(|m| !m.is_null()) else {
        return Err(missing(choice.get("message"), "content"));
    };
    if let Some(text) = message.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
        out.output.push(Content::text(text));
    }
    for image in message.get("images").and_then(Value::as_array).into_iter().flatten() {
        let url = match image.get("image_url") {
            Some(Value::String(url)) => Some(url.as_str()),
            Some(other) => other.get("url").and_then(Value::as_str),
            None => None,
        };
        let Some((mime, data)) = url.and_then(split_data_url) else {
            continue;
        };
        out.output.push(Content::image(data, mime));
    }
    Ok(())
}

/// `data:<mime>;base64,<data>` into its MIME type and data.
fn split_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    (!mime.is_empty() && !mime.contains(';') && !data.is_empty()).then_some((mime, data))
}

/// OpenRouter's usage: cached and cache-write tokens are part of the prompt tokens.
fn parse_usage(raw: &Value, model: &TaskModel) -> Usage {
    let count = |v: Option<&Value>| v.and_then(Value::as_f64).filter(|n| *n > 0.0).unwrap_or(0.0) as u64;
    let prompt = count(raw.get("prompt_tokens"));
    let cached = count(raw.pointer("/prompt_tokens_details/cached_tokens"));
    let cache_write = count(raw.pointer("/prompt_tokens_details/cache_write_tokens"));
    let cache_read = if cache_write > 0 {
        cached.saturating_sub(cache_write)
    } else {
        cached
    };
    let input = prompt.saturating_sub(cache_read + cache_write);
    let output = count(raw.get("completion_tokens"));
    let per_million = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
    let mut cost = UsageCost {
        input: per_million(model.cost.input, input),
        output: per_million(model.cost.output, output),
        cache_read: per_million(model.cost.cache_read, cache_read),
        cache_write: per_million(model.cost.cache_write, cache_write),
        total: 0.0,
        total_from_provider: Some(false),
    };
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: input + output + cache_read + cache_write,
        cost,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_are_split_and_others_skipped() {
        assert_eq!(
            split_data_url("data:image/png;base64,QUJD"),
            Some(("image/png", "QUJD"))
        );
        assert_eq!(split_data_url("https://x/y.png"), None);
        assert_eq!(split_data_url("data:image/png,QUJD"), None);
        assert_eq!(split_data_url("data:;base64,QUJD"), None);
    }
}
