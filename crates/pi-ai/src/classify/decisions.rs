//! OpenAI's Decisions API: `POST <base>/decisions` with `{ model, input, questions }`. The
//! state goes as JSON text (with images: one user message of `input_text` and `input_image`
//! parts); questions become a list, `bool` as a `predicate` whose meanings join its
//! instructions. A gateway timeout (504) is not retried: the same input would time out again.

use serde_json::{json, Map, Value};

use super::answers::{AnswerShape, ProbabilityEntry};
use super::{endpoint, parse_usage, post, ClassifierContext, ClassifierResult, Failure};
use crate::http::HttpError;
use crate::options::StreamOptions;
use crate::task_models::TaskModel;

const LABEL: &str = "OpenAI Decisions";
const MAX_IMAGES: usize = 128;
const NO_RETRY_STATUSES: [u16; 1] = [504];

/// The request body, as pi 1.6 sends it.
pub fn request_body(model: &TaskModel, context: &ClassifierContext) -> Result<Value, String> {
    let questions: Vec<Value> = context
        .questions
        .iter()
        .map(|(name, question)| wire_question(name, question))
        .collect();
    Ok(json!({
        "model": model.id,
        "input": wire_input(context)?,
        "questions": questions,
    }))
}

fn wire_input(context: &ClassifierContext) -> Result<Value, String> {
    let state = json_text(&context.state);
    if context.images.is_empty() {
        return Ok(Value::String(state));
    }
    if context.images.len() > MAX_IMAGES {
        return Err(format!(
            "{LABEL} accepts at most {MAX_IMAGES} images, got {}",
            context.images.len()
        ));
    }
    let mut content = vec![json!({"type": "input_text", "text": state})];
    content.extend(context.images.iter().map(
        |image| json!({"type": "input_image", "image_url": format!("data:{};base64,{}", image.mime_type, image.data)}),
    ));
    Ok(json!([{"role": "user", "content": content}]))
}

/// `JSON.stringify` of the state (`undefined` state sends no text: a JSON `null` stands in).
fn json_text(value: &Value) -> String {
    value.to_string()
}

fn text_of(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn wire_question(name: &str, question: &Value) -> Value {
    let instructions = question.get("instructions").cloned().unwrap_or(Value::Null);
    let criteria = question.get("criteria");
    match ClassifierContext::question_type(question) {
        "choice" => {
            let choices: Vec<Value> = criteria
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(value, description)| match description {
                    Value::String(d) if !d.is_empty() => json!({"value": value, "description": d}),
                    Value::Null | Value::Bool(false) => json!({"value": value}),
                    Value::String(_) => json!({"value": value}),
                    other => json!({"value": value, "description": other}),
                })
                .collect();
            json!({"type": "choice", "name": name, "instructions": instructions, "choices": choices})
        }
        "score" => {
            let levels: Vec<Value> = criteria
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|label| json!({"label": label}))
                .collect();
            json!({"type": "score", "name": name, "instructions": instructions, "levels": levels})
        }
        _ => {
            let meanings: Vec<String> = [("true", "True means"), ("false", "False means")]
                .iter()
                .filter_map(|(key, words)| text_of(criteria.and_then(|c| c.get(*key))).map(|m| format!("{words}: {m}")))
                .collect();
            let instructions = if meanings.is_empty() {
                instructions
            } else {
                let base = match &instructions {
                    Value::String(s) => s.clone(),
                    Value::Null => "undefined".to_string(),
                    other => other.to_string(),
                };
                Value::String(format!("{base}\n\n{}", meanings.join("\n")))
            };
            json!({"type": "predicate", "name": name, "instructions": instructions})
        }
    }
}

pub(super) async fn classify(
    model: &TaskModel,
    context: &ClassifierContext,
    options: &StreamOptions,
    out: &mut ClassifierResult,
) -> Result<(), String> {
    let run = async {
        if model.api != "openai-decisions" {
            return Err(Failure::Message(format!("Unsupported classifier API: {}", model.api)));
        }
        let body = request_body(model, context)?;
        let reply = post(
            &endpoint(&model.base_url, "decisions"),
            model,
            body,
            options,
            &NO_RETRY_STATUSES,
        )
        .await?;
        let reply = reply
            .as_object()
            .ok_or_else(|| format!("{LABEL} returned an unexpected response"))?;
        // The usage first: a reply with malformed or refused answers was still billed.
        out.usage = parse_usage(reply.get("usage"), model);
        out.answers = parse_answers(reply.get("answers"), context)?;
        Ok(())
    };
    run.await.map_err(|failure: Failure| match failure {
        Failure::Http(HttpError::Status { status: 504, .. }) => format!(
            "{LABEL} error (504): the request timed out at the gateway. Very large inputs (above roughly 600K tokens) currently exceed its time limit."
        ),
        other => other.describe(LABEL),
    })
}

fn parse_answers(value: Option<&Value>, context: &ClassifierContext) -> Result<Map<String, Value>, String> {
    let list = value
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{LABEL} returned an unexpected response"))?;
    let by_name = |name: &str| {
        // The last answer of a name wins, as a map filled in order keeps it.
        list.iter()
            .rev()
            .find(|a| a.get("name").and_then(Value::as_str) == Some(name))
    };
    let mut out = Map::new();
    for (id, question) in &context.questions {
        let answer = by_name(id).ok_or_else(|| format!("{LABEL} did not return an answer for {id}"))?;
        out.insert(id.clone(), parse_answer(id, question, answer)?);
    }
    Ok(out)
}

/// Decisions spells a choice's probabilities as a list of `{ value, probability }` and a
/// yes/no answer as a `predicate`.
const SHAPE: AnswerShape = AnswerShape {
    label: LABEL,
    bool_type: "predicate",
    bool_field: "probability",
    bool_word: "predicate",
    probabilities: listed_probabilities,
};

fn listed_probabilities(answer: &Value) -> Option<Vec<ProbabilityEntry<'_>>> {
    let list = answer.get("probabilities")?.as_array()?;
    Some(
        list.iter()
            .map(|entry| {
                let value = entry.get("value").and_then(Value::as_str)?;
                Some((value.to_string(), entry.get("probability")))
            })
            .collect(),
    )
}

fn parse_answer(id: &str, question: &Value, answer: &Value) -> Result<Value, String> {
    if answer.get("type").and_then(Value::as_str) == Some("refusal") {
        return Err(format!("{LABEL} refused to answer {id}"));
    }
    SHAPE.parse(id, question, answer)
}
