//! Classification (pi 1.6's `classify`): a state and named questions in, one answer per
//! question out (`choice` with probabilities, `score`, or `bool` with a probability). Three
//! APIs speak it: System One (`typesafe-system-one`, also served by OpenRouter and Vercel's
//! gateway), System One on Cloudflare Workers AI (`cloudflare-workers-ai-system-one`), and
//! OpenAI's Decisions (`openai-decisions`). This module holds what they share: the request
//! (bearer auth, retries, a timeout per attempt), the usage and the error words.

mod answers;
mod decisions;
mod system_one;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::http::{self, HttpError, RetryPolicy};
use crate::options::StreamOptions;
use crate::providers::model_headers;
use crate::task_models::TaskModel;
use crate::types::{now_ms, ImageContent, StopReason, Usage};

pub use decisions::request_body as decisions_body;
pub use system_one::{request_body as system_one_body, SystemOne};

/// What to classify and the questions to answer, as a caller gives them.
#[derive(Debug, Clone, Default)]
pub struct ClassifierContext {
    /// Any JSON value.
    pub state: Value,
    pub images: Vec<ImageContent>,
    /// Question id to `{ type: "choice" | "score" | "bool", instructions, criteria }`.
    pub questions: Map<String, Value>,
}

impl ClassifierContext {
    /// Read `{ state, images?, questions }` (the shape a script passes).
    pub fn from_json(value: &Value) -> Result<ClassifierContext, String> {
        let images = match value.get("images") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .map(|image| {
                    let field = |k: &str| image.get(k).and_then(Value::as_str).map(str::to_string);
                    match (field("data"), field("mimeType")) {
                        (Some(data), Some(mime_type)) => Ok(ImageContent {
                            data,
                            mime_type,
                            ..Default::default()
                        }),
                        _ => Err("images must be { type: \"image\", data, mimeType } blocks".to_string()),
                    }
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("images must be an array".to_string()),
        };
        let questions = value
            .get("questions")
            .and_then(Value::as_object)
            .cloned()
            .ok_or("questions must be an object")?;
        Ok(ClassifierContext {
            state: value.get("state").cloned().unwrap_or(Value::Null),
            images,
            questions,
        })
    }

    fn question_type(question: &Value) -> &str {
        question.get("type").and_then(Value::as_str).unwrap_or_default()
    }
}

/// The answers, as pi 1.6 gives them (keys in its order).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassifierResult {
    pub api: String,
    pub provider: String,
    pub model: String,
    pub answers: Map<String, Value>,
    pub stop_reason: StopReason,
    pub timestamp: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// Why a classification failed: an HTTP status with its body, or words of our own.
#[derive(Debug)]
pub(crate) enum Failure {
    Http(HttpError),
    Timeout(u64),
    Message(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Message(message)
    }
}

impl Failure {
    /// pi 1.6's words: `<label> error (<status>): <body>` for an HTTP status, the message
    /// otherwise.
    pub(crate) fn describe(&self, label: &str) -> String {
        match self {
            Failure::Http(HttpError::Status { status, body }) => {
                let body = body.trim();
                if body.is_empty() {
                    format!("{label} error ({status}): {label} returned {status}")
                } else {
                    format!("{label} error ({status}): {}", truncate(body))
                }
            }
            Failure::Http(HttpError::Connection { reason, .. }) => match reason {
                Some(reason) => format!("fetch failed: {reason}"),
                None => "fetch failed".to_string(),
            },
            Failure::Http(HttpError::Timeout) => "Request timed out".to_string(),
            Failure::Timeout(ms) => format!("Request timed out after {ms}ms"),
            Failure::Message(m) => m.clone(),
        }
    }
}

fn truncate(text: &str) -> String {
    const MAX: usize = 4000;
    let total = text.chars().count();
    if total <= MAX {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX).collect();
    format!("{kept}... [truncated {} chars]", total - MAX)
}

/// Classify with `model`. Failures are in the result (`stopReason: "error"`), never a panic.
pub async fn classify(model: &TaskModel, context: &ClassifierContext, options: &StreamOptions) -> ClassifierResult {
    let mut out = ClassifierResult {
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        answers: Map::new(),
        stop_reason: StopReason::Stop,
        timestamp: now_ms(),
        usage: None,
        error_message: None,
    };
    let run = async {
        match model.api.as_str() {
            "typesafe-system-one" => system_one::classify(SystemOne::TypeSafe, model, context, options, &mut out).await,
            "cloudflare-workers-ai-system-one" => {
                system_one::classify(SystemOne::Cloudflare, model, context, options, &mut out).await
            }
            "openai-decisions" => decisions::classify(model, context, options, &mut out).await,
            other => Err(format!("No classifier API provider registered for api: {other}")),
        }
    };
    let result = tokio::select! {
        r = run => r,
        () = options.cancel.cancelled() => Err("Request was aborted".to_string()),
    };
    if let Err(message) = result {
        out.answers = Map::new();
        out.stop_reason = if options.cancel.is_cancelled() {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        out.error_message = Some(message);
    }
    out
}

/// POST one classifier request (bearer auth, the model's and the caller's headers, retries
/// with a fresh timeout per attempt, none for a failed connection, as 1.6's `fetch`) and read
/// the JSON reply.
pub(crate) async fn post(
    url: &str,
    model: &TaskModel,
    body: Value,
    options: &StreamOptions,
    no_retry_statuses: &[u16],
) -> Result<Value, Failure> {
    let api_key = options
        .api_key
        .as_deref()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
    let mut body = body;
    if let Some(hook) = &options.on_payload {
        if let Some(replaced) = hook(&body, &model.as_model()) {
            body = replaced;
        }
    }
    let mut headers = vec![
        ("authorization".to_string(), format!("Bearer {api_key}")),
        ("content-type".to_string(), "application/json".to_string()),
    ];
    headers.extend(model_headers(&model.as_model()));
    headers.extend(options.headers.iter().cloned());
    let headers = http::header_map(&headers).map_err(Failure::Message)?;
    let bytes = bytes::Bytes::from(serde_json::to_vec(&body).map_err(|e| e.to_string())?);
    let policy = RetryPolicy {
        max_retries: options.max_retries.unwrap_or(2),
        ..RetryPolicy::from_options(options)
    };
    let response = http::send_with_fetch_retry(
        || http::client().post(url).headers(headers.clone()).body(bytes.clone()),
        policy,
        no_retry_statuses,
    )
    .await
    .map_err(|e| match (e, options.timeout_ms) {
        (HttpError::Timeout, Some(ms)) => Failure::Timeout(ms),
        (e, _) => Failure::Http(e),
    })?;
    let text = response.text().await.map_err(|e| e.to_string())?;
    // A reply that is not JSON fails with Node's words for it, as in 1.6.
    serde_json::from_str(&text).map_err(|_| Failure::Message(crate::js_json::parse_error_message(&text)))
}

/// A finite number of the reply, or `<label> returned an invalid <field>`.
pub(crate) fn required_number(label: &str, value: Option<&Value>, field: &str) -> Result<Value, String> {
    match value {
        Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => Ok(Value::Number(n.clone())),
        _ => Err(format!("{label} returned an invalid {field}")),
    }
}

/// `{ input_tokens, output_tokens }` priced from the catalogue; `None` when the reply has no
/// usage object (a malformed one leaves the result without usage rather than failing it).
pub(crate) fn parse_usage(value: Option<&Value>, model: &TaskModel) -> Option<Usage> {
    let value = value.filter(|v| v.is_object())?;
    if value.get("input_tokens").is_none() && value.get("output_tokens").is_none() {
        return None;
    }
    let count = |v: Option<&Value>| {
        v.and_then(Value::as_f64)
            .filter(|n| n.is_finite() && *n > 0.0)
            .unwrap_or(0.0) as u64
    };
    let mut usage = Usage {
        input: count(value.get("input_tokens")),
        output: count(value.get("output_tokens")),
        ..Default::default()
    };
    usage.total_tokens = usage.input + usage.output;
    usage.cost = crate::cost::calculate_cost(&model.as_model(), &mut usage);
    Some(usage)
}

/// `<base>/<path>`, the base's trailing slashes dropped.
pub(crate) fn endpoint(base_url: &str, path: &str) -> String {
    format!("{}/{path}", base_url.trim_end_matches('/'))
}
