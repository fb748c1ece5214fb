//! `models.classify()` and `models.generateImages()` of scripts, run as pi 1.6's model
//! runtime runs them: the catalogue's entry (models.json's provider `baseUrl` and, for a
//! classifier, its `compat` applied), the
//! registry's credentials for its provider, and every failure (no credentials, images a
//! classifier cannot take, provider errors, aborts) returned in the result, never thrown.

use std::sync::{Arc, Mutex};

use pi_ai::classify::{classify, ClassifierContext};
use pi_ai::images::{generate_images, ImagesContext};
use pi_ai::task_models::{get_task_model, TaskKind, TaskModel};
use pi_ai::{Content, InputKind, StreamOptions};
use pi_codemode::{ModelCall, ModelKind};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::config::ModelRegistry;

/// The result of a call that failed before reaching the provider, in 1.6's shape.
fn failed(kind: TaskKind, model: &Value, message: String, aborted: bool) -> Value {
    let field = |key: &str| model.get(key).cloned().unwrap_or(Value::Null);
    let (key, empty) = match kind {
        TaskKind::Classifier => ("answers", json!({})),
        TaskKind::Image => ("output", json!([])),
    };
    json!({
        "api": field("api"),
        "provider": field("provider"),
        "model": field("id"),
        key: empty,
        "stopReason": if aborted { "aborted" } else { "error" },
        "errorMessage": message,
        "timestamp": pi_ai::now_ms(),
    })
}

/// The model to call and the options carrying its credentials.
fn prepare(
    registry: &Mutex<ModelRegistry>,
    kind: TaskKind,
    provider: &str,
    id: &str,
    cancel: CancellationToken,
) -> Result<(TaskModel, StreamOptions), String> {
    let builtin = get_task_model(kind, provider, id).ok_or_else(|| format!("Unknown provider: {provider}"))?;
    let mut registry = registry.lock().unwrap_or_else(|e| e.into_inner());
    let mut model = registry.task_model(builtin);
    let as_model = model.as_model();
    if !registry.has_configured_auth(&as_model) {
        return Err(format!("Provider is not configured: {provider}"));
    }
    let auth = registry.request_auth(&as_model)?;
    // Cloudflare's endpoint names the account.
    model.base_url = registry.endpoint_url(provider, &model.base_url);
    let options = StreamOptions {
        api_key: auth.api_key,
        headers: auth.headers,
        cancel,
        ..Default::default()
    };
    Ok((model, options))
}

/// Run one checked call of a script.
pub async fn run(registry: Arc<Mutex<ModelRegistry>>, call: ModelCall, cancel: CancellationToken) -> Value {
    let kind = match call.kind {
        ModelKind::Classifier => TaskKind::Classifier,
        ModelKind::Image => TaskKind::Image,
        ModelKind::Chat => {
            return json!({"stopReason": "error", "errorMessage": "Chat models cannot be run from scripts"})
        }
    };
    let field = |key: &str| {
        call.model
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (provider, id) = (field("provider"), field("id"));
    // As in 1.6, a classifier that cannot take the images is refused before credentials are
    // looked up.
    let classifier_context = match kind {
        TaskKind::Classifier => match ClassifierContext::from_json(&call.context) {
            Ok(context) => {
                let takes_images =
                    get_task_model(kind, &provider, &id).is_some_and(|m| m.input.contains(&InputKind::Image));
                if !context.images.is_empty() && !takes_images {
                    let message = format!("Model {provider}/{id} does not accept image input");
                    return failed(kind, &call.model, message, false);
                }
                Some(context)
            }
            Err(message) => return failed(kind, &call.model, message, false),
        },
        TaskKind::Image => None,
    };
    let (model, options) = match prepare(&registry, kind, &provider, &id, cancel.clone()) {
        Ok(prepared) => prepared,
        Err(message) => return failed(kind, &call.model, message, cancel.is_cancelled()),
    };
    let result = match classifier_context {
        Some(context) => serde_json::to_value(classify(&model, &context, &options).await),
        None => {
            let input = images_input(&call.context);
            serde_json::to_value(generate_images(&model, &ImagesContext { input }, &options).await)
        }
    };
    result.unwrap_or_else(|e| failed(kind, &call.model, e.to_string(), false))
}

/// The text and image blocks of `context.input` (checked by codemode before the call).
fn images_input(context: &Value) -> Vec<Content> {
    let str_of = |block: &Value, key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    context
        .get("input")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .map(|block| match block.get("type").and_then(Value::as_str) {
                    Some("image") => Content::image(str_of(block, "data"), str_of(block, "mimeType")),
                    _ => Content::text(str_of(block, "text")),
                })
                .collect()
        })
        .unwrap_or_default()
}
