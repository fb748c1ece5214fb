//! `models.*` in scripts: listing the session's model catalogue by type, and the argument
//! checks of `models.classify()` and `models.generateImages()` with the messages pi 1.6 gives,
//! so a script learns the expected shape instead of meeting a provider error; the checked
//! calls then run through the host (see `execute.rs`). Chat models are listed but never run
//! from a script.

use serde_json::Value;

use crate::execute::CodemodeHost;

/// The functions of the `models` global, in the order `Object.keys(models)` lists them.
pub const FUNCTIONS: [&str; 5] = [
    "getModelsOfType",
    "getAvailableOfType",
    "getModelOfType",
    "classify",
    "generateImages",
];

/// The kinds of model the catalogue holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    Chat,
    Image,
    Classifier,
}

impl ModelKind {
    pub const ALL: [ModelKind; 3] = [ModelKind::Chat, ModelKind::Image, ModelKind::Classifier];

    pub fn as_str(self) -> &'static str {
        match self {
            ModelKind::Chat => "chat",
            ModelKind::Image => "image",
            ModelKind::Classifier => "classifier",
        }
    }

    /// `an image`, `a classifier`.
    fn with_article(self) -> String {
        match self {
            ModelKind::Image => "an image".to_string(),
            other => format!("a {}", other.as_str()),
        }
    }

    fn parse(value: Option<&Value>) -> Result<ModelKind, String> {
        let found = value
            .and_then(Value::as_str)
            .and_then(|s| ModelKind::ALL.into_iter().find(|k| k.as_str() == s));
        found.ok_or_else(|| {
            let shown = match value {
                None => "undefined".to_string(),
                Some(v) => v.to_string(),
            };
            format!("Unknown model type {shown}. Use \"chat\", \"image\", or \"classifier\".")
        })
    }
}

/// A script value in an error message: `undefined`, `a string`, `an array`, or its keys.
fn describe_value(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_string(),
        Some(Value::Null) => "null".to_string(),
        Some(Value::Array(items)) if items.is_empty() => "an empty array".to_string(),
        Some(Value::Array(_)) => "an array".to_string(),
        Some(Value::Object(map)) if map.is_empty() => "{}".to_string(),
        Some(Value::Object(map)) => {
            let keys: Vec<&str> = map.keys().take(6).map(String::as_str).collect();
            let more = if map.len() > 6 { ", ..." } else { "" };
            format!("{{ {}{more} }}", keys.join(", "))
        }
        Some(Value::String(_)) => "a string".to_string(),
        Some(Value::Number(_)) => "a number".to_string(),
        Some(Value::Bool(_)) => "a boolean".to_string(),
    }
}

fn provider_arg(value: Option<&Value>) -> Result<Option<&str>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err("provider must be a string".to_string()),
    }
}

/// The catalogue entry a script sees: `headers` dropped, since models.json headers can carry
/// credentials.
fn model_info(mut model: Value) -> Value {
    if let Some(map) = model.as_object_mut() {
        map.remove("headers");
    }
    model
}

fn find(host: &dyn CodemodeHost, kind: ModelKind, provider: &str, id: &str) -> Option<Value> {
    host.models_of_type(kind, Some(provider), false)
        .into_iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(id))
}

/// Answer the listing functions `models.<name>(...args)` (the calls that run a model go
/// through [`prepare_call`]).
pub fn answer(host: &dyn CodemodeHost, name: &str, args: &[Value]) -> Result<Value, String> {
    let list = |models: Vec<Value>| Value::Array(models.into_iter().map(model_info).collect());
    match name {
        "getModelsOfType" | "getAvailableOfType" => {
            let kind = ModelKind::parse(args.first())?;
            let provider = provider_arg(args.get(1))?;
            Ok(list(host.models_of_type(kind, provider, name == "getAvailableOfType")))
        }
        "getModelOfType" => {
            let (Some(Value::String(provider)), Some(Value::String(id))) = (args.get(1), args.get(2)) else {
                let given: Vec<String> = args.iter().map(|a| describe_value(Some(a))).collect();
                return Err(format!(
                    "models.getModelOfType(type, provider, id) expects three strings, got ({}). The provider and the id are separate arguments, for example models.getModelOfType(\"classifier\", \"typesafe\", \"jev-latest\").",
                    given.join(", ")
                ));
            };
            let kind = ModelKind::parse(args.first())?;
            Ok(find(host, kind, provider, id).map(model_info).unwrap_or(Value::Null))
        }
        "classify" | "generateImages" => Err(format!("models.{name}() runs through the script's call queue")),
        other => Err(format!("models.{other}() is not available")),
    }
}

/// A checked `models.classify()` or `models.generateImages()` call, ready for the host to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    /// `models.classify` or `models.generateImages`: the name of its call row.
    pub name: &'static str,
    pub kind: ModelKind,
    /// The catalogue's entry (never the script's object: a script-supplied base URL or headers
    /// must not receive the credentials).
    pub model: Value,
    pub context: Value,
}

impl ModelCall {
    /// `provider/id`, what its call row shows (never prompts or image data).
    pub fn reference(&self) -> String {
        let field = |key: &str| {
            self.model
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        format!("{}/{}", field("provider"), field("id"))
    }
}

/// Check `models.<function>(...args)` when it runs a model: `None` for the other functions,
/// `Err` with pi 1.6's message for a bad model or context.
pub fn prepare_call(
    host: &dyn CodemodeHost,
    function: &str,
    args: &[Value],
    docs_path: &str,
) -> Option<Result<ModelCall, String>> {
    let call = match function {
        "classify" => model_call(host, "models.classify", ModelKind::Classifier, args, |context| {
            check_classifier_context(context, docs_path)
        }),
        "generateImages" => model_call(host, "models.generateImages", ModelKind::Image, args, |context| {
            check_images_context(context, docs_path)
        }),
        _ => return None,
    };
    Some(call)
}

/// Resolve the script's model by provider and id only, then check the context.
fn model_call(
    host: &dyn CodemodeHost,
    name: &'static str,
    kind: ModelKind,
    args: &[Value],
    check: impl Fn(Option<&Value>) -> Result<(), String>,
) -> Result<ModelCall, String> {
    let list_hint = format!(
        "List the {} models you can use with models.getAvailableOfType(\"{}\").",
        kind.as_str(),
        kind.as_str()
    );
    let given = args.first();
    let provider = given.and_then(|m| m.get("provider")).and_then(Value::as_str);
    let id = given.and_then(|m| m.get("id")).and_then(Value::as_str);
    let (Some(provider), Some(id)) = (provider, id) else {
        // `undefined` arrives as null: the arguments cross the sandbox as a JSON array.
        let undefined_hint = if matches!(given, None | Some(Value::Null)) {
            " models.getModelOfType() returns undefined for an unknown provider or id."
        } else {
            ""
        };
        return Err(format!(
            "{name}() expects {} model as its first argument, got {}.{undefined_hint} {list_hint}",
            kind.with_article(),
            describe_value(given)
        ));
    };
    let reference = format!("{provider}/{id}");
    let Some(model) = find(host, kind, provider, id) else {
        let actual = ModelKind::ALL
            .into_iter()
            .find(|other| *other != kind && find(host, *other, provider, id).is_some());
        return Err(match actual {
            Some(actual) => format!(
                "\"{reference}\" is {} model, not {} model. {list_hint}",
                actual.with_article(),
                kind.with_article()
            ),
            None => format!("Unknown {} model \"{reference}\". {list_hint}", kind.as_str()),
        });
    };
    check(args.get(1))?;
    Ok(ModelCall {
        name,
        kind,
        model,
        context: args.get(1).cloned().unwrap_or(Value::Null),
    })
}

/// The sum of two usages as pi 1.6 adds a script's model calls: token counts and costs added,
/// the optional splits kept when either side has them, `totalFromProvider` only when both are.
pub fn combine_usage(first: &Value, second: &Value) -> Value {
    match (first, second) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = serde_json::Map::new();
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let value = match (a.get(key), b.get(key)) {
                    (Some(Value::Bool(x)), Some(Value::Bool(y))) => Value::Bool(*x && *y),
                    (Some(Value::Bool(_)), None) | (None, Some(Value::Bool(_))) => Value::Bool(false),
                    (Some(x), Some(y)) => combine_usage(x, y),
                    (Some(x), None) | (None, Some(x)) => x.clone(),
                    (None, None) => continue,
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        (Value::Number(_), Value::Number(_)) => {
            let sum = first.as_f64().unwrap_or(0.0) + second.as_f64().unwrap_or(0.0);
            // Token counts stay integers when both sides are.
            match (first.as_u64(), second.as_u64()) {
                (Some(x), Some(y)) => Value::from(x.saturating_add(y)),
                _ => serde_json::Number::from_f64(sum).map_or(Value::Null, Value::Number),
            }
        }
        _ => second.clone(),
    }
}

const CLASSIFIER_CONTEXT_SHAPE: &str = "{ state: { ... }, images?: [{ type: \"image\", data: <base64>, mimeType }], questions: { <id>: { type: \"choice\", instructions, criteria: { <label>: <meaning> } } | { type: \"score\", instructions, criteria: [<lowest level>, ..., <highest level>] } | { type: \"bool\", instructions, criteria: { true: <meaning>, false: <meaning> } } } }";

fn is_object(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Object(_)))
}

fn is_image_block(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("image")
        && value.get("data").is_some_and(Value::is_string)
        && value.get("mimeType").is_some_and(Value::is_string)
}

fn check_classifier_context(context: Option<&Value>, docs_path: &str) -> Result<(), String> {
    let fail = |problem: String| {
        format!("models.classify() {problem}. Expected context: {CLASSIFIER_CONTEXT_SHAPE}. See \"Classify\" in {docs_path}.")
    };
    let Some(Value::Object(context)) = context else {
        return Err(fail(format!(
            "expects a context object as its second argument, got {}",
            describe_value(context)
        )));
    };
    let state = context.get("state");
    if !is_object(state) {
        return Err(fail(format!(
            "context.state must be an object, got {}",
            describe_value(state)
        )));
    }
    match context.get("images") {
        None => {}
        Some(Value::Array(images)) => {
            if let Some((index, image)) = images.iter().enumerate().find(|(_, i)| !is_image_block(i)) {
                return Err(fail(format!(
                    "context.images[{index}] must be an image block, got {}",
                    describe_value(Some(image))
                )));
            }
        }
        Some(other) => {
            return Err(fail(format!(
                "context.images must be an array, got {}",
                describe_value(Some(other))
            )));
        }
    }
    let questions = match context.get("questions") {
        Some(Value::Object(q)) if !q.is_empty() => q,
        other => {
            return Err(fail(format!(
                "context.questions must map question IDs to questions, got {}",
                describe_value(other)
            )))
        }
    };
    let strings = |values: Vec<&Value>| !values.is_empty() && values.iter().all(|v| v.is_string());
    for (id, question) in questions {
        let at = format!("context.questions.{id}");
        let Value::Object(question) = question else {
            return Err(fail(format!(
                "{at} must be a question object, got {}",
                describe_value(Some(question))
            )));
        };
        if !question.get("instructions").is_some_and(Value::is_string) {
            return Err(fail(format!("{at}.instructions must be a string")));
        }
        let criteria = question.get("criteria");
        match question.get("type").and_then(Value::as_str) {
            Some("choice") => {
                let ok = matches!(criteria, Some(Value::Object(c)) if strings(c.values().collect()));
                if !ok {
                    return Err(fail(format!(
                        "{at} is a \"choice\" question, so criteria must map each label to its meaning"
                    )));
                }
            }
            Some("score") => {
                let ok = matches!(criteria, Some(Value::Array(c)) if strings(c.iter().collect()));
                if !ok {
                    return Err(fail(format!(
                        "{at} is a \"score\" question, so criteria must list the levels as strings, lowest first"
                    )));
                }
            }
            Some("bool") => {
                let label = |key: &str| criteria.and_then(|c| c.get(key)).is_some_and(Value::is_string);
                if !(label("true") && label("false")) {
                    return Err(fail(format!(
                        "{at} is a \"bool\" question, so criteria must be {{ true: string, false: string }}"
                    )));
                }
            }
            _ => {
                let shown = question
                    .get("type")
                    .map(Value::to_string)
                    .unwrap_or_else(|| "undefined".to_string());
                return Err(fail(format!(
                    "{at}.type must be \"choice\", \"score\", or \"bool\", got {shown}"
                )));
            }
        }
    }
    Ok(())
}

fn check_images_context(context: Option<&Value>, docs_path: &str) -> Result<(), String> {
    let fail = |problem: String| {
        format!("models.generateImages() {problem}. Expected context: {{ input: [{{ type: \"text\", text: <prompt> }}, ...optional {{ type: \"image\", data: <base64>, mimeType }} references] }}. See \"Generate images\" in {docs_path}.")
    };
    let Some(Value::Object(context)) = context else {
        return Err(fail(format!(
            "expects a context object as its second argument, got {}",
            describe_value(context)
        )));
    };
    let input = match context.get("input") {
        Some(Value::Array(input)) if !input.is_empty() => input,
        other => {
            return Err(fail(format!(
                "context.input must be a non-empty array of blocks, got {}",
                describe_value(other)
            )))
        }
    };
    for (index, block) in input.iter().enumerate() {
        let text = block.get("type").and_then(Value::as_str) == Some("text")
            && block.get("text").is_some_and(Value::is_string);
        if !text && !is_image_block(block) {
            return Err(fail(format!(
                "context.input[{index}] must be a text or image block, got {}",
                describe_value(Some(block))
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_described_as_pi_describes_them() {
        assert_eq!(describe_value(None), "undefined");
        assert_eq!(describe_value(Some(&Value::Null)), "null");
        assert_eq!(describe_value(Some(&json!({"a": 1, "b": 2}))), "{ a, b }");
        assert_eq!(
            describe_value(Some(&json!({"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1}))),
            "{ a, b, c, d, e, f, ... }"
        );
        assert_eq!(describe_value(Some(&json!([]))), "an empty array");
        assert_eq!(describe_value(Some(&json!("x"))), "a string");
    }

    #[test]
    fn contexts_are_checked_before_anything_runs() {
        let shape = check_classifier_context(Some(&json!({"state": {}, "questions": {"q": {"type": "score", "instructions": "i", "criteria": ["low", 2]}}})), "D")
            .unwrap_err();
        assert!(
            shape.starts_with("models.classify() context.questions.q is a \"score\" question, so criteria must list the levels as strings, lowest first. Expected context: { state:"),
            "{shape}"
        );
        assert!(shape.ends_with("See \"Classify\" in D."));
        assert!(check_classifier_context(
            Some(&json!({"state": {}, "questions": {"q": {"type": "bool", "instructions": "i", "criteria": {"true": "y", "false": "n"}}}})),
            "D"
        )
        .is_ok());
        let images = check_images_context(Some(&json!({"prompt": "cat"})), "D").unwrap_err();
        assert!(
            images.starts_with(
                "models.generateImages() context.input must be a non-empty array of blocks, got undefined."
            ),
            "{images}"
        );
    }
}
