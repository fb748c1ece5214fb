//! Tools whose single string argument an API takes as raw text under a grammar (pi's
//! `constrainedSampling: {"type": "grammar", ...}`, sent to OpenAI's APIs as custom tools):
//! which declared tools qualify for a model, and the streamed raw input written back as the
//! JSON arguments every other layer reads.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::providers::compat_bool;
use crate::types::{Model, Tool};

/// Tool name -> the argument its raw input fills, for the grammar tools of one request.
pub type GrammarInputs = HashMap<String, String>;

/// A grammar tool as declared: `syntax` is `lark` or `regex`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grammar<'a> {
    pub syntax: &'static str,
    pub definition: &'a str,
    pub property: String,
}

/// Whether the model's API takes grammar-constrained custom tools.
pub fn supported(model: &Model) -> bool {
    compat_bool(model, "supportsOpenAIGrammarTools").unwrap_or(false)
}

/// The one required string property that holds the raw input, or why the schema cannot
/// carry raw input (pi 1.6's wording).
fn input_property(parameters: &Value) -> Result<String, String> {
    if parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err("grammar constrained sampling requires an object parameter schema".into());
    }
    let required = parameters.get("required").and_then(Value::as_array);
    let Some([Value::String(name)]) = required.map(Vec::as_slice) else {
        return Err("grammar constrained sampling requires exactly one required string property".into());
    };
    let Some(property) = parameters.get("properties").and_then(|p| p.get(name)) else {
        return Err(format!(
            "grammar constrained sampling requires a properties entry for {name}"
        ));
    };
    if property.get("type").and_then(Value::as_str) != Some("string") {
        return Err(format!(
            "grammar constrained sampling property {name} must have type string"
        ));
    }
    Ok(name.clone())
}

/// The grammar `tool` declares, when it declares a usable one (a tool that declares an
/// unusable one is refused by [`check`] before any request is made).
pub fn grammar_of(tool: &Tool) -> Option<Grammar<'_>> {
    resolve(tool).ok().flatten()
}

/// `tool`'s grammar: `None` when it declares none, an error (pi 1.6's text) when the one it
/// declares cannot be used.
fn resolve(tool: &Tool) -> Result<Option<Grammar<'_>>, String> {
    let Some(config) = tool.constrained_sampling.as_ref() else {
        return Ok(None);
    };
    if config.get("type").and_then(Value::as_str) != Some("grammar") {
        return Ok(None);
    }
    let variant = |key: &str| {
        config
            .pointer(&format!("/variants/{key}"))
            .and_then(Value::as_str)
            .filter(|d| !d.trim().is_empty())
    };
    let (syntax, definition) = match (variant("openai_lark"), variant("openai_regex")) {
        (Some(lark), _) => ("lark", lark),
        (None, Some(regex)) => ("regex", regex),
        (None, None) => {
            return Err(format!(
                "Tool \"{}\" cannot use grammar constrained sampling: no supported grammar variant was provided.",
                tool.name
            ))
        }
    };
    let property = input_property(&tool.parameters)
        .map_err(|e| format!("Tool \"{}\" cannot use grammar constrained sampling: {e}.", tool.name))?;
    Ok(Some(Grammar {
        syntax,
        definition,
        property,
    }))
}

/// Refuse a request to `model` that declares a grammar tool it cannot send: as pi 1.6, a
/// model that takes grammar tools gets an error for a tool whose grammar or schema does not
/// fit (a model that does not take them gets every tool as a plain function tool).
pub fn check(model: &Model, tools: &[Tool]) -> Result<(), String> {
    if !supported(model) {
        return Ok(());
    }
    tools.iter().try_for_each(|t| resolve(t).map(|_| ()))
}

/// The grammar tools of a request to `model` (none when its API does not take them).
pub fn inputs(model: &Model, tools: &[Tool]) -> GrammarInputs {
    if !supported(model) {
        return GrammarInputs::new();
    }
    tools
        .iter()
        .filter_map(|t| grammar_of(t).map(|g| (t.name.clone(), g.property)))
        .collect()
}

/// The Responses declaration of a grammar tool.
pub fn custom_tool(tool: &Tool, grammar: &Grammar<'_>) -> Value {
    json!({
        "type": "custom",
        "name": tool.name,
        "description": tool.description,
        "format": {"type": "grammar", "syntax": grammar.syntax, "definition": grammar.definition},
    })
}

/// A custom tool call's raw input as it streams, and the JSON arguments text it becomes
/// (`{"<property>":"<input>"}`), written piece by piece so each delta costs its own length.
#[derive(Debug, Clone, Default)]
pub struct RawInput {
    pub property: String,
    pub input: String,
    started: bool,
    closed: bool,
}

fn escaped(text: &str) -> String {
    let quoted = Value::String(text.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

impl RawInput {
    pub fn new(property: String) -> RawInput {
        RawInput {
            property,
            ..RawInput::default()
        }
    }

    fn opening(&mut self) -> String {
        if self.started {
            return String::new();
        }
        self.started = true;
        format!("{{{}:\"", Value::String(self.property.clone()))
    }

    /// Add streamed input; the JSON text to append (`None` for nothing new).
    pub fn push(&mut self, delta: &str) -> Option<String> {
        if self.closed || delta.is_empty() {
            return None;
        }
        self.input.push_str(delta);
        Some(format!("{}{}", self.opening(), escaped(delta)))
    }

    /// End the input with the provider's complete text, if it sent one; the rest of the JSON
    /// text (`None` once closed). A final text that does not continue what streamed replaces it.
    pub fn close(&mut self, full: Option<&str>) -> Option<String> {
        if self.closed {
            return None;
        }
        let rest = match full {
            Some(full) if full.starts_with(self.input.as_str()) => full[self.input.len()..].to_string(),
            Some(full) => {
                self.input.clear();
                full.to_string()
            }
            None => String::new(),
        };
        self.input.push_str(&rest);
        self.closed = true;
        Some(format!("{}{}\"}}", self.opening(), escaped(&rest)))
    }

    /// The whole arguments text.
    pub fn arguments(&self) -> String {
        json!({ self.property.clone(): self.input }).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(sampling: Value) -> Tool {
        Tool {
            name: "codemode".into(),
            description: "d".into(),
            parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
            constrained_sampling: Some(sampling),
        }
    }

    #[test]
    fn a_grammar_needs_a_variant_and_one_required_string() {
        let t = tool(json!({"type": "grammar", "variants": {"openai_lark": "start: /x/"}}));
        let g = grammar_of(&t).unwrap();
        assert_eq!(
            (g.syntax, g.definition, g.property.as_str()),
            ("lark", "start: /x/", "code")
        );
        assert!(grammar_of(&tool(json!({"type": "json_schema", "strict": "prefer"}))).is_none());
        assert!(grammar_of(&tool(json!({"type": "grammar", "variants": {"openai_lark": " "}}))).is_none());
        let mut two = t.clone();
        two.parameters["required"] = json!(["code", "x"]);
        assert!(grammar_of(&two).is_none());
    }

    fn grammar_model(supported: bool) -> Model {
        let mut model = crate::models::get_model("openai", "gpt-5")
            .expect("a built-in model")
            .clone();
        model.compat = Some(json!({"supportsOpenAIGrammarTools": supported}));
        model
    }

    /// pi 1.6's errors for a grammar tool a grammar-taking model cannot be sent, word for
    /// word; a model without grammar tools takes them all as function tools.
    #[test]
    fn an_unusable_grammar_tool_is_an_error_only_where_grammars_are_taken() {
        let lark = json!({"type": "grammar", "variants": {"openai_lark": "start: /x/"}});
        let no_variant = tool(json!({"type": "grammar", "variants": {"openai_lark": " "}}));
        let mut two = tool(lark.clone());
        two.parameters["required"] = json!(["code", "x"]);
        let mut not_object = tool(lark.clone());
        not_object.parameters = json!({"type": "string"});
        let mut missing = tool(lark.clone());
        missing.parameters = json!({"type": "object", "properties": {}, "required": ["code"]});
        let mut number = tool(lark.clone());
        number.parameters["properties"]["code"]["type"] = json!("number");
        let cases = [
            (no_variant, "Tool \"codemode\" cannot use grammar constrained sampling: no supported grammar variant was provided."),
            (two, "Tool \"codemode\" cannot use grammar constrained sampling: grammar constrained sampling requires exactly one required string property."),
            (not_object, "Tool \"codemode\" cannot use grammar constrained sampling: grammar constrained sampling requires an object parameter schema."),
            (missing, "Tool \"codemode\" cannot use grammar constrained sampling: grammar constrained sampling requires a properties entry for code."),
            (number, "Tool \"codemode\" cannot use grammar constrained sampling: grammar constrained sampling property code must have type string."),
        ];
        for (bad, message) in cases {
            let tools = [tool(lark.clone()), bad];
            assert_eq!(check(&grammar_model(true), &tools), Err(message.to_string()));
            assert_eq!(check(&grammar_model(false), &tools), Ok(()));
        }
        assert_eq!(check(&grammar_model(true), &[tool(lark)]), Ok(()));
    }

    #[test]
    fn streamed_input_becomes_json_arguments_piece_by_piece() {
        let mut raw = RawInput::new("code".into());
        let mut text = String::new();
        text.push_str(&raw.push("return \"a\n").unwrap());
        assert!(raw.push("").is_none());
        text.push_str(&raw.push("b\";").unwrap());
        text.push_str(&raw.close(Some("return \"a\nb\"; // end")).unwrap());
        assert!(raw.close(None).is_none());
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, json!({"code": "return \"a\nb\"; // end"}));
        assert_eq!(raw.arguments(), text);
    }
}
