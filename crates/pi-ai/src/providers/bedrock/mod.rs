//! The `bedrock-converse-stream` API: Amazon Bedrock's ConverseStream
//! (`POST <endpoint>/model/<modelId>/converse-stream`), body and headers as pi 1.6 sends them
//! through the AWS SDK, the reply an AWS event stream.
//!
//! `credentials` decides endpoint, region and authentication, `sigv4` signs, `body` builds the
//! request and `event_stream` decodes the binary frames. Like the SDK, a request that fails
//! before the stream starts with a throttling, server or connection error is tried up to three
//! times in all, each attempt signed anew.

pub mod body;
pub mod credentials;
pub mod event_stream;
mod profile_services;
pub mod sigv4;

use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use crate::cost::calculate_cost;
use crate::events::AssistantStream;
use crate::http;
use crate::options::StreamOptions;
use crate::providers::cache_retention;
use crate::stream_driver::{spawn_provider, Emitter, ProviderError, ABORT_MESSAGE};
use crate::types::{Context, Model, StopReason};
use credentials::{BedrockAuth, Target};
use event_stream::{Frame, FrameDecoder};

/// Attempts of one request, as the SDK's standard retry mode.
const MAX_ATTEMPTS: u32 = 3;
/// Stands in for readable thinking the model sent encrypted.
const REDACTED_THINKING: &str = "[Reasoning redacted]";
const DATA_RETENTION_DOCS: &str = "https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html";

/// Stream a reply. `api_key` is a Bedrock bearer token, or the marker of ambient AWS credentials.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let env = crate::env_keys::process_env;
    let body = body::request_body(model, context, &options, cache_retention(&options), &env);
    let owned_model = model.clone();
    let headers: Vec<(String, String)> = options
        .headers
        .iter()
        .filter(|(name, _)| !is_reserved_header(name))
        .cloned()
        .collect();
    let timeout = options.timeout_ms.map(Duration::from_millis);
    spawn_provider(model, options.cancel.clone(), ABORT_MESSAGE, move |em| {
        Box::pin(async move {
            let target = credentials::resolve(&owned_model, &api_key, &env).await?;
            let payload = serde_json::to_vec(&body).map_err(|e| ProviderError::Message(e.to_string()))?;
            drop(body);
            let payload = match crate::provider_hooks::current() {
                Some(call) => crate::provider_hooks::rewrite_payload(&call, payload).await,
                None => payload,
            };
            let response = send(&owned_model, &target, &headers, payload, timeout).await?;
            if let Some(call) = crate::provider_hooks::current() {
                crate::provider_hooks::report_response(&call, &response).await;
            }
            read_stream(em, &owned_model, response).await
        })
    })
}

/// `host` and `x-amz-*` take part in the signature and `authorization` is the signature's:
/// caller headers never replace them.
fn is_reserved_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("x-amz-") || lower == "authorization" || lower == "host"
}

/// `/model/<id>/converse-stream` with the id percent-encoded (`:` and `/` of ARNs included).
pub fn request_path(model_id: &str) -> String {
    format!("/model/{}/converse-stream", sigv4::uri_encode(model_id))
}

/// The headers of one attempt, signed when the target uses SigV4.
pub fn attempt_headers(
    url: &url::Url,
    target: &Target,
    extra: &[(String, String)],
    payload: &[u8],
    attempt: u32,
    amz_date: &str,
) -> Vec<(String, String)> {
    let host = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let mut headers: Vec<(String, String)> = vec![
        ("content-type".into(), "application/json".into()),
        ("content-length".into(), payload.len().to_string()),
        ("x-amz-user-agent".into(), format!("pi/{}", env!("CARGO_PKG_VERSION"))),
        ("user-agent".into(), http::user_agent().to_string()),
        ("host".into(), host),
        ("amz-sdk-invocation-id".into(), uuid::Uuid::new_v4().to_string()),
        (
            "amz-sdk-request".into(),
            format!("attempt={attempt}; max={MAX_ATTEMPTS}"),
        ),
    ];
    for (name, value) in extra {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name.to_ascii_lowercase(), value.clone()));
    }
    match &target.auth {
        BedrockAuth::Bearer(token) => headers.push(("authorization".into(), format!("Bearer {token}"))),
        BedrockAuth::Signed(creds) => {
            headers.push(("x-amz-date".into(), amz_date.to_string()));
            if let Some(token) = &creds.session_token {
                headers.push(("x-amz-security-token".into(), token.clone()));
            }
            headers.push(("x-amz-content-sha256".into(), sigv4::sha256_hex(payload)));
            let input = sigv4::SigningInput {
                method: "POST",
                path: url.path(),
                headers: &headers,
                body: payload,
                region: &target.region,
                service: "bedrock",
                amz_date,
            };
            let authorization = sigv4::authorization(&input, creds);
            headers.push(("authorization".into(), authorization));
        }
    }
    headers
}

fn is_retryable(status: u16, error_type: Option<&str>) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
        || matches!(
            error_type,
            Some("ThrottlingException" | "ServiceUnavailableException" | "InternalServerException")
        )
}

async fn send(
    model: &Model,
    target: &Target,
    extra: &[(String, String)],
    payload: Vec<u8>,
    timeout: Option<Duration>,
) -> Result<reqwest::Response, ProviderError> {
    let url_text = format!("{}{}", target.endpoint, request_path(&model.id));
    let url = url::Url::parse(&url_text).map_err(|_| format!("Invalid Bedrock endpoint: {}", target.endpoint))?;
    let payload = bytes::Bytes::from(payload);
    let mut attempt = 1;
    loop {
        let amz_date = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
        let headers = attempt_headers(&url, target, extra, &payload, attempt, &amz_date);
        let mut request = http::client().post(url.clone()).body(payload.clone());
        for (name, value) in &headers {
            // reqwest writes these from the URL and the body itself.
            if name != "host" && name != "content-length" {
                request = request.header(name.as_str(), value.as_str());
            }
        }
        // `None`: no response headers within the timeout.
        let sent = match timeout {
            Some(limit) => tokio::time::timeout(limit, request.send()).await.ok(),
            None => Some(request.send().await),
        };
        let retry = attempt < MAX_ATTEMPTS;
        let Some(sent) = sent else {
            if retry {
                backoff(attempt).await;
                attempt += 1;
                continue;
            }
            return Err("Request timed out".into());
        };
        match sent {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status().as_u16();
                let error_type = response
                    .headers()
                    .get("x-amzn-errortype")
                    .and_then(|v| v.to_str().ok())
                    .map(|v| v.split(':').next().unwrap_or(v).to_string());
                let text = response.text().await.unwrap_or_default();
                let error = ServiceError::from_response(status, error_type, &text);
                if retry && is_retryable(status, error.name.as_deref()) {
                    backoff(attempt).await;
                    attempt += 1;
                    continue;
                }
                return Err(ProviderError::Message(error.describe()));
            }
            Err(_) if retry => {
                backoff(attempt).await;
                attempt += 1;
            }
            Err(err) => return Err(ProviderError::Message(transport_error(&err))),
        }
    }
}

async fn backoff(attempt: u32) {
    tokio::time::sleep(Duration::from_millis(100u64 << attempt.min(6))).await;
}

fn transport_error(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        return "Request timed out".to_string();
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => match err.url() {
                    Some(u) => format!(
                        "connect ECONNREFUSED {}:{}",
                        u.host_str().unwrap_or_default(),
                        u.port_or_known_default().unwrap_or_default()
                    ),
                    None => "connect ECONNREFUSED".to_string(),
                },
                _ => "socket hang up".to_string(),
            };
        }
        source = s.source();
    }
    "socket hang up".to_string()
}

/// A modelled Bedrock error: its exception name and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    pub name: Option<String>,
    pub message: String,
}

impl ServiceError {
    /// An HTTP error reply: the name from `x-amzn-errortype` or the body's `__type`/`code`.
    pub fn from_response(status: u16, header_type: Option<String>, body: &str) -> Self {
        let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let field = |k: &str| json.get(k).and_then(Value::as_str).map(str::to_string);
        let name = header_type
            .filter(|t| !t.is_empty())
            .or_else(|| field("__type").map(|t| t.rsplit('#').next().unwrap_or(&t).to_string()))
            .or_else(|| field("code"));
        let message = field("message").or_else(|| field("Message"));
        match (name, message) {
            (Some(name), Some(message)) => ServiceError {
                name: Some(name),
                message,
            },
            (Some(name), None) => ServiceError {
                message: name.clone(),
                name: Some(name),
            },
            (None, message) => ServiceError {
                name: Some("Unknown".to_string()),
                message: match message {
                    Some(m) => m,
                    None if body.trim().is_empty() => "UnknownError".to_string(),
                    None => format!("{status}: {}", body.trim()),
                },
            },
        }
    }

    /// An exception frame of the stream (`:exception-type` is camelCase there).
    fn from_frame(frame: &Frame) -> Self {
        let kind = frame
            .header(":exception-type")
            .or_else(|| frame.header(":error-code"))
            .unwrap_or("Unknown");
        let mut name: String = kind.chars().take(1).flat_map(char::to_uppercase).collect();
        name.push_str(&kind[kind.chars().next().map_or(0, char::len_utf8)..]);
        let json: Value = serde_json::from_slice(&frame.payload).unwrap_or(Value::Null);
        let message = json
            .get("message")
            .or_else(|| json.get("Message"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| frame.header(":error-message").map(str::to_string))
            .unwrap_or_else(|| name.clone());
        ServiceError {
            name: Some(name),
            message,
        }
    }

    /// pi's wording: a stable prefix per exception, the message, and a pointer to the docs
    /// when a data retention mode was refused.
    pub fn describe(&self) -> String {
        let prefix = match self.name.as_deref() {
            Some("InternalServerException") => "Internal server error",
            Some("ModelStreamErrorException") => "Model stream error",
            Some("ValidationException") => "Validation error",
            Some("ThrottlingException") => "Throttling error",
            Some("ServiceUnavailableException") => "Service unavailable",
            Some(other) => other,
            None => return self.message.clone(),
        };
        let hint = if self.message.to_lowercase().contains("data retention mode") {
            format!(" See {DATA_RETENTION_DOCS} for supported data retention modes.")
        } else {
            String::new()
        };
        format!("{prefix}: {}{hint}", self.message)
    }
}

/// What a content block index of the stream became.
#[derive(Debug)]
struct OpenBlock {
    wire_index: u64,
    content_index: usize,
    kind: BlockKind,
}

#[derive(Debug)]
enum BlockKind {
    Text,
    Thinking { redacted: Option<Vec<u8>> },
    Tool,
}

fn mapped_stop(reason: &str) -> Result<StopReason, String> {
    match reason {
        "end_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" | "model_context_window_exceeded" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        other => Err(format!("Provider stopped with: {other}")),
    }
}

async fn read_stream(em: &mut Emitter, model: &Model, mut response: reqwest::Response) -> Result<(), ProviderError> {
    let mut decoder = FrameDecoder::new();
    let mut frames = Vec::new();
    let mut open: Vec<OpenBlock> = Vec::new();
    let mut stop: Option<Result<StopReason, String>> = None;
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(_) => {
                // Node's word for a response cut off mid-body.
                flush_redacted(em, &mut open);
                return Err("aborted".into());
            }
        };
        if let Err(e) = decoder.feed(&chunk, &mut frames) {
            flush_redacted(em, &mut open);
            return Err(ProviderError::Message(e.to_string()));
        }
        for frame in frames.drain(..) {
            if let Err(e) = handle_frame(em, model, &frame, &mut open, &mut stop).await {
                flush_redacted(em, &mut open);
                return Err(e);
            }
        }
    }
    flush_redacted(em, &mut open);
    decoder.finish().map_err(|e| e.to_string())?;
    match stop {
        None => Err("Bedrock stream ended without a stop reason".into()),
        Some(Err(message)) => Err(ProviderError::Message(message)),
        Some(Ok(reason)) => {
            em.output.stop_reason = reason;
            Ok(())
        }
    }
}

async fn handle_frame(
    em: &mut Emitter,
    model: &Model,
    frame: &Frame,
    open: &mut Vec<OpenBlock>,
    stop: &mut Option<Result<StopReason, String>>,
) -> Result<(), ProviderError> {
    match frame.header(":message-type") {
        Some("event") => {}
        Some("exception") | Some("error") => {
            return Err(ProviderError::Message(ServiceError::from_frame(frame).describe()));
        }
        _ => return Ok(()),
    }
    let event: Value = serde_json::from_slice(&frame.payload).map_err(|_| "Bedrock sent an event that is not JSON")?;
    // Stream-event hooks see each event as the SDK hands it over: `{ <eventType>: payload }`.
    if crate::provider_hooks::current().is_some() {
        let name = frame.header(":event-type").unwrap_or_default();
        crate::provider_hooks::report_stream_event(&serde_json::json!({ name: event }).to_string()).await;
    }
    let index = event.get("contentBlockIndex").and_then(Value::as_u64).unwrap_or(0);
    match frame.header(":event-type").unwrap_or_default() {
        "messageStart" => {
            if event.get("role").and_then(Value::as_str) != Some("assistant") {
                return Err("Unexpected assistant message start but got user message start instead".into());
            }
            em.start().await?;
        }
        "contentBlockStart" => {
            if let Some(tool) = event.pointer("/start/toolUse") {
                let id = tool.get("toolUseId").and_then(Value::as_str).unwrap_or_default();
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                let content_index = em.tool_call_start(id, name).await?;
                open.push(OpenBlock {
                    wire_index: index,
                    content_index,
                    kind: BlockKind::Tool,
                });
            }
        }
        "contentBlockDelta" => content_delta(em, &event, index, open).await?,
        "contentBlockStop" => {
            if let Some(at) = open.iter().position(|b| b.wire_index == index) {
                let mut block = open.remove(at);
                match &mut block.kind {
                    BlockKind::Text => em.text_end(block.content_index).await?,
                    BlockKind::Thinking { redacted } => {
                        settle_redacted(em, block.content_index, redacted);
                        em.thinking_end(block.content_index).await?;
                    }
                    BlockKind::Tool => em.tool_call_end(block.content_index).await?,
                }
            }
        }
        "messageStop" => {
            let reason = event.get("stopReason").and_then(Value::as_str).unwrap_or_default();
            em.output.raw_stop_reason = Some(reason.to_string());
            *stop = Some(mapped_stop(reason));
        }
        "metadata" => {
            if let Some(usage) = event.get("usage") {
                let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
                let u = &mut em.output.usage;
                u.input = n("inputTokens");
                u.output = n("outputTokens");
                u.cache_read = n("cacheReadInputTokens");
                u.cache_write = n("cacheWriteInputTokens");
                u.cache_write_1h = usage.get("cacheDetails").and_then(Value::as_array).map(|details| {
                    details
                        .iter()
                        .filter(|d| d.get("ttl").and_then(Value::as_str) == Some("1h"))
                        .filter_map(|d| d.get("inputTokens").and_then(Value::as_u64))
                        .sum()
                });
                let total = n("totalTokens");
                u.total_tokens = if total > 0 { total } else { u.input + u.output };
                calculate_cost(model, &mut em.output.usage);
            }
        }
        _ => {}
    }
    Ok(())
}

async fn content_delta(
    em: &mut Emitter,
    event: &Value,
    index: u64,
    open: &mut Vec<OpenBlock>,
) -> Result<(), ProviderError> {
    let Some(delta) = event.get("delta") else {
        return Ok(());
    };
    let at = open.iter().position(|b| b.wire_index == index);
    if let Some(text) = delta.get("text").and_then(Value::as_str) {
        // Text blocks have no start event: the first delta opens one.
        let at = match at {
            Some(at) => at,
            None => {
                let content_index = em.text_start().await?;
                open.push(OpenBlock {
                    wire_index: index,
                    content_index,
                    kind: BlockKind::Text,
                });
                open.len() - 1
            }
        };
        if matches!(open[at].kind, BlockKind::Text) {
            em.text_delta(open[at].content_index, text).await?;
        }
    } else if let Some(tool) = delta.get("toolUse") {
        if let Some(block) = at.map(|at| &open[at]).filter(|b| matches!(b.kind, BlockKind::Tool)) {
            let input = tool.get("input").and_then(Value::as_str).unwrap_or_default();
            em.tool_call_delta(block.content_index, input).await?;
        }
    } else if let Some(reasoning) = delta.get("reasoningContent") {
        let at = match at {
            Some(at) => at,
            None => {
                let content_index = em.thinking_start(Some(String::new())).await?;
                open.push(OpenBlock {
                    wire_index: index,
                    content_index,
                    kind: BlockKind::Thinking { redacted: None },
                });
                open.len() - 1
            }
        };
        let content_index = open[at].content_index;
        let BlockKind::Thinking { redacted } = &mut open[at].kind else {
            return Ok(());
        };
        if let Some(text) = reasoning.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            em.thinking_delta(content_index, text).await?;
        }
        if let Some(signature) = reasoning
            .get("signature")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            if redacted.is_none() {
                if let Some(block) = em.thinking_block(content_index) {
                    block
                        .thinking_signature
                        .get_or_insert_with(String::new)
                        .push_str(signature);
                }
            }
        }
        if let Some(chunk) = reasoning.get("redactedContent").and_then(Value::as_str) {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(chunk)
                .map_err(|_| "Bedrock sent redacted reasoning that is not base64")?;
            if !bytes.is_empty() {
                if redacted.is_none() {
                    *redacted = Some(Vec::new());
                    if let Some(block) = em.thinking_block(content_index) {
                        block.redacted = Some(true);
                        block.thinking_signature = Some(String::new());
                    }
                    em.thinking_delta(content_index, REDACTED_THINKING).await?;
                }
                if let Some(buffer) = redacted.as_mut() {
                    buffer.extend_from_slice(&bytes);
                }
            }
        }
    }
    Ok(())
}

/// Encrypted reasoning is kept, base64-encoded, as the block's signature.
fn settle_redacted(em: &mut Emitter, content_index: usize, redacted: &mut Option<Vec<u8>>) {
    if let Some(bytes) = redacted.take() {
        if let Some(block) = em.thinking_block(content_index) {
            block.thinking_signature = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
        }
    }
}

/// A stream may end without stopping every block: keep what encrypted reasoning arrived.
fn flush_redacted(em: &mut Emitter, open: &mut Vec<OpenBlock>) {
    for block in open.iter_mut() {
        if let BlockKind::Thinking { redacted } = &mut block.kind {
            settle_redacted(em, block.content_index, redacted);
        }
    }
    open.clear();
}
