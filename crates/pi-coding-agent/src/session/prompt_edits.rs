//! What `before_agent_start` handlers changed in pi 1.6's `systemPromptOptions`, read by
//! comparing the object they were given with the one they left.
//!
//! Applied: `sections` (added, replaced or removed tags), `promptGuidelines`,
//! `appendSystemPrompt`, `selectedTools` (as the run's active tools) and `forceSystemPrompt`.
//! The other fields (`customPrompt`, `toolSnippets`, `toolGuidelines`, `hiddenTools`,
//! `contextFiles`, `skills`) are read-only here: edits to them are not applied.

use serde_json::Value;

use crate::system_prompt::PromptEdits;

/// The edits of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunEdits {
    pub prompt: PromptEdits,
    /// The tools to declare, when the handlers changed the list.
    pub selected_tools: Option<Vec<String>>,
    /// The whole prompt text, when a handler set `forceSystemPrompt`.
    pub force: Option<String>,
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The edits that turn `base` (as sent) into `edited` (as the handlers left it).
pub fn edits_of(base: &Value, edited: &Value) -> RunEdits {
    let sections = edited
        .get("sections")
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(name, body)| Some((name.clone(), body.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let append = edited
        .get("appendSystemPrompt")
        .and_then(Value::as_str)
        .filter(|text| Some(*text) != base.get("appendSystemPrompt").and_then(Value::as_str))
        .map(str::to_string);
    let selected = strings(edited.get("selectedTools"));
    let selected_tools = (edited.get("selectedTools").is_some_and(Value::is_array)
        && selected != strings(base.get("selectedTools")))
    .then_some(selected);
    RunEdits {
        prompt: PromptEdits {
            sections,
            prompt_guidelines: strings(edited.get("promptGuidelines")),
            append,
        },
        selected_tools,
        force: edited
            .get("forceSystemPrompt")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "selectedTools": ["read", "bash"],
            "appendSystemPrompt": "",
            "promptGuidelines": [],
            "sections": {},
        })
    }

    #[test]
    fn an_untouched_object_edits_nothing() {
        assert_eq!(edits_of(&base(), &base()), RunEdits::default());
    }

    #[test]
    fn sections_keep_the_order_handlers_added_them_in() {
        let mut edited = base();
        edited["sections"] = json!({"zeta": "last?", "alpha": "A", "gone": 3});
        edited["promptGuidelines"] = json!(["Say please"]);
        edited["appendSystemPrompt"] = json!("more");
        edited["forceSystemPrompt"] = json!("all of it");
        let edits = edits_of(&base(), &edited);
        assert_eq!(
            edits.prompt.sections,
            vec![
                ("zeta".to_string(), "last?".to_string()),
                ("alpha".to_string(), "A".to_string())
            ]
        );
        assert_eq!(edits.prompt.prompt_guidelines, ["Say please"]);
        assert_eq!(edits.prompt.append.as_deref(), Some("more"));
        assert_eq!(edits.force.as_deref(), Some("all of it"));
        assert_eq!(edits.selected_tools, None);
    }

    #[test]
    fn a_changed_tool_list_is_the_runs_selection() {
        let mut edited = base();
        edited["selectedTools"] = json!(["read"]);
        assert_eq!(
            edits_of(&base(), &edited).selected_tools,
            Some(vec!["read".to_string()])
        );
    }
}
