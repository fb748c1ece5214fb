//! The System One protocol: `{ model, state, questions }` posted to `<base>/systemone`
//! (TypeSafe, OpenRouter, Vercel's gateway), or wrapped as `{ model, input }` and posted to
//! `<base>/run` on Cloudflare Workers AI, whose envelope is unwrapped from the reply. `bool`
//! questions travel as System One's `noul`. Images go as TypeSafe `assets` (behind its opt-in
//! header), as `image_url` parts before the state (OpenRouter), or as a list of data URLs
//! (Cloudflare's Clef); a model's `compat.imageInput` overrides the guess.

use serde_json::{json, Map, Value};

use super::answers::{AnswerShape, ProbabilityEntry};
use super::{endpoint, parse_usage, post, ClassifierContext, ClassifierResult, Failure};
use crate::options::StreamOptions;
use crate::task_models::TaskModel;
use crate::types::InputKind;

/// Which service carries the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemOne {
    TypeSafe,
    Cloudflare,
}

/// TypeSafe's opt-in header for its experimental image input.
const IMAGE_OPT_IN: (&str, &str) = ("TypeSafe-Danger-Zone-Images", "true");
/// Clef takes at most this many images.
const MAX_DATA_URL_IMAGES: usize = 4;

impl SystemOne {
    fn label(self) -> &'static str {
        match self {
            SystemOne::TypeSafe => "System One API",
            SystemOne::Cloudflare => "Cloudflare Workers AI",
        }
    }

    fn api(self) -> &'static str {
        match self {
            SystemOne::TypeSafe => "typesafe-system-one",
            SystemOne::Cloudflare => "cloudflare-workers-ai-system-one",
        }
    }

    /// How images go when the model does not say, and whether the opt-in header is sent.
    fn detected_images(self, model: &TaskModel) -> (&'static str, bool) {
        match self {
            SystemOne::TypeSafe if model.provider == "openrouter" || model.base_url.contains("openrouter.ai") => {
                ("state-image-urls", false)
            }
            SystemOne::TypeSafe => ("assets", true),
            SystemOne::Cloudflare if model.id.starts_with("@cf/cloudflare/clef") => ("images", false),
            SystemOne::Cloudflare => ("assets", false),
        }
    }
}

/// The request body and whether it needs the image opt-in header.
pub fn request_body(
    service: SystemOne,
    model: &TaskModel,
    context: &ClassifierContext,
) -> Result<(Value, bool), String> {
    let label = service.label();
    let mut request = Map::new();
    request.insert("state".into(), context.state.clone());
    let questions: Map<String, Value> = context
        .questions
        .iter()
        .map(|(id, question)| {
            let mut question = question.clone();
            if ClassifierContext::question_type(&question) == "bool" {
                if let Some(q) = question.as_object_mut() {
                    q.insert("type".into(), json!("noul"));
                }
            }
            (id.clone(), question)
        })
        .collect();
    request.insert("questions".into(), Value::Object(questions));
    let mut opt_in = false;
    if !context.images.is_empty() {
        if !model.input.contains(&InputKind::Image) {
            return Err(format!("{label} does not support image input for {}", model.id));
        }
        let (detected_input, detected_opt_in) = service.detected_images(model);
        let input = model
            .compat_value("imageInput")
            .and_then(Value::as_str)
            .unwrap_or(detected_input);
        add_images(label, model, input, context, &mut request)?;
        opt_in = model
            .compat_value("sendImageOptInHeader")
            .and_then(Value::as_bool)
            .unwrap_or(detected_opt_in);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    match service {
        SystemOne::TypeSafe => body.extend(request),
        SystemOne::Cloudflare => {
            body.insert("input".into(), Value::Object(request));
        }
    }
    Ok((Value::Object(body), opt_in))
}

fn add_images(
    label: &str,
    model: &TaskModel,
    input: &str,
    context: &ClassifierContext,
    request: &mut Map<String, Value>,
) -> Result<(), String> {
    let images = &context.images;
    let data_url = |mime: &str, data: &str| format!("data:{mime};base64,{data}");
    let state = request.get("state").cloned().unwrap_or(Value::Null);
    match input {
        "images" => {
            if images.len() > MAX_DATA_URL_IMAGES {
                return Err(format!(
                    "{label} accepts at most {MAX_DATA_URL_IMAGES} images for {}, got {}",
                    model.id,
                    images.len()
                ));
            }
            let urls = images
                .iter()
                .map(|image| match image.mime_type.as_str() {
                    "image/png" | "image/jpeg" | "image/webp" => Ok(json!(data_url(&image.mime_type, &image.data))),
                    other => Err(format!(
                        "{label} accepts PNG, JPEG, and WebP images for {}, got {other}",
                        model.id
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            request.insert("images".into(), Value::Array(urls));
        }
        "state-image-urls" => {
            let mut parts: Vec<Value> = images
                .iter()
                .map(
                    |image| json!({"type": "image_url", "image_url": {"url": data_url(&image.mime_type, &image.data)}}),
                )
                .collect();
            parts.push(state);
            request.insert("state".into(), Value::Array(parts));
        }
        _ => {
            let mut assets = Map::new();
            for (index, image) in images.iter().enumerate() {
                let format = match image.mime_type.as_str() {
                    "image/png" => "png",
                    "image/jpeg" => "jpeg",
                    other => {
                        return Err(format!(
                            "{label} accepts PNG and JPEG images for {}, got {other}",
                            model.id
                        ))
                    }
                };
                assets.insert(
                    format!("<image-{}>", index + 1),
                    json!({"type": "image", "format": format, "data_base64": image.data}),
                );
            }
            // Every asset is named from the state, before it.
            let mut names: Vec<Value> = assets.keys().map(|k| json!(k)).collect();
            names.push(state);
            request.insert("assets".into(), Value::Object(assets));
            request.insert("state".into(), Value::Array(names));
        }
    }
    Ok(())
}

pub(super) async fn classify(
    service: SystemOne,
    model: &TaskModel,
    context: &ClassifierContext,
    options: &StreamOptions,
    out: &mut ClassifierResult,
) -> Result<(), String> {
    let label = service.label();
    let run = async {
        if model.api != service.api() {
            return Err(Failure::Message(format!("Unsupported classifier API: {}", model.api)));
        }
        let (body, opt_in) = request_body(service, model, context)?;
        let url = match service {
            SystemOne::TypeSafe => endpoint(&model.base_url, "systemone"),
            SystemOne::Cloudflare => endpoint(&model.base_url, "run"),
        };
        let mut options = options.clone();
        if opt_in {
            // The caller's headers come after, so they may replace it.
            options
                .headers
                .insert(0, (IMAGE_OPT_IN.0.to_string(), IMAGE_OPT_IN.1.to_string()));
        }
        let reply = post(&url, model, body, &options, &[]).await?;
        let result = match service {
            SystemOne::TypeSafe => reply
                .as_object()
                .cloned()
                .ok_or_else(|| format!("{label} returned an unexpected response"))?,
            SystemOne::Cloudflare => unwrap_cloudflare(&reply)?,
        };
        // The usage first: a reply with malformed answers was still billed.
        out.usage = parse_usage(result.get("usage"), model);
        out.answers = parse_answers(label, result.get("answers"), context)?;
        Ok(())
    };
    run.await.map_err(|failure: Failure| failure.describe(label))
}

/// The model's output inside Cloudflare's envelope: `result` itself (Cloudflare's own models)
/// or the completed run record's `result` (third-party models).
fn unwrap_cloudflare(reply: &Value) -> Result<Map<String, Value>, String> {
    const LABEL: &str = "Cloudflare Workers AI";
    let unexpected = || format!("{LABEL} returned an unexpected response");
    let envelope = reply.as_object().ok_or_else(unexpected)?;
    if envelope.get("success") == Some(&Value::Bool(false)) {
        let messages: Vec<&str> = envelope
            .get("errors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("message").and_then(Value::as_str))
            .collect();
        return Err(if messages.is_empty() {
            format!("{LABEL} request failed")
        } else {
            format!("{LABEL} error: {}", messages.join("; "))
        });
    }
    let result = envelope
        .get("result")
        .and_then(Value::as_object)
        .ok_or_else(unexpected)?;
    if result.contains_key("answers") {
        return Ok(result.clone());
    }
    if result.get("state").and_then(Value::as_str) != Some("Completed") {
        let state = match result.get("state") {
            None => "undefined".to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        return Err(format!("{LABEL} run did not complete (state: {state})"));
    }
    result
        .get("result")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(unexpected)
}

/// System One spells a choice's probabilities as a map from choice to number and a yes/no
/// answer as `noul`.
fn shape(label: &'static str) -> AnswerShape {
    AnswerShape {
        label,
        bool_type: "noul",
        bool_field: "noul",
        bool_word: "bool",
        probabilities: mapped_probabilities,
    }
}

fn mapped_probabilities(answer: &Value) -> Option<Vec<ProbabilityEntry<'_>>> {
    let map = answer.get("probabilities")?.as_object()?;
    Some(map.iter().map(|(choice, p)| Some((choice.clone(), Some(p)))).collect())
}

fn parse_answers(
    label: &'static str,
    value: Option<&Value>,
    context: &ClassifierContext,
) -> Result<Map<String, Value>, String> {
    let answers = value
        .and_then(Value::as_object)
        .ok_or_else(|| format!("{label} returned an unexpected response"))?;
    let shape = shape(label);
    let mut out = Map::new();
    for (id, question) in &context.questions {
        let answer = answers
            .get(id)
            .filter(|a| a.is_object())
            .ok_or_else(|| format!("{label} did not return an answer for {id}"))?;
        out.insert(id.clone(), shape.parse(id, question, answer)?);
    }
    Ok(out)
}
