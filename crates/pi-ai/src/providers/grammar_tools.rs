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

/// The one required string property that holds the raw input.
fn input_property(parameters: &Value) -> Option<String> {
    if parameters.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    let required = parameters.get("required")?.as_array()?;
    let [Value::String(name)] = required.as_slice() else {
        return None;
    };
    let kind = parameters.pointer(&format!("/properties/{name}/type"))?;
    (kind == "string").then(|| name.clone())
}

/// The grammar `tool` declares, when it declares a usable one. A tool whose grammar cannot be
/// used is declared as a plain function tool.
pub fn grammar_of(tool: &Tool) -> Option<Grammar<'_>> {
    let config = tool.constrained_sampling.as_ref()?;
    if config.get("type").and_then(Value::as_str) != Some("grammar") {
        return None;
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
        (None, None) => return None,
    };
    Some(Grammar {
        syntax,
        definition,
        property: input_property(&tool.parameters)?,
    })
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
