//! What `before_agent_start` handlers changed in pi 1.6's `systemPromptOptions`, read by
//! comparing the object they were given with the one they left.
//!
//! Every field applies, as pi 1.6 builds the run's prompt from the object the handlers left:
//! `sections` (added, replaced or removed tags), `promptGuidelines`, `appendSystemPrompt`,
//! `selectedTools` (as the run's active tools), `forceSystemPrompt`, and, when changed,
//! `customPrompt`, `toolSnippets`, `toolGuidelines`, `contextFiles`, `skills` and `cwd` in
//! place of the configured inputs. `hiddenTools` is pi's own (1.6 sets it again after the
//! handlers).

use serde_json::Value;

use crate::system_prompt::{PromptEdits, PromptInputs, PromptSkill};

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

/// `edited[key]` when it differs from `base[key]`.
fn changed<'a>(base: &Value, edited: &'a Value, key: &str) -> Option<&'a Value> {
    let value = edited.get(key)?;
    (base.get(key) != Some(value)).then_some(value)
}

/// `{name: text}` as pairs, in the object's order.
fn text_map(value: &Value) -> Vec<(String, String)> {
    value
        .as_object()
        .map(|map| {
            map.iter()
                .filter_map(|(name, text)| Some((name.clone(), text.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn text(value: &Value, key: &str) -> String {
    value.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// The inputs the handlers replaced.
fn inputs_of(base: &Value, edited: &Value) -> PromptInputs {
    let guidelines = |value: &Value| -> Vec<(String, Vec<String>)> {
        value
            .as_object()
            .map(|map| {
                map.iter()
                    .map(|(name, list)| (name.clone(), strings(Some(list))))
                    .collect()
            })
            .unwrap_or_default()
    };
    let files = |value: &Value| -> Vec<(String, String)> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .map(|file| (text(file, "path"), text(file, "content")))
            .collect()
    };
    let skills = |value: &Value| -> Vec<PromptSkill> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .map(|skill| PromptSkill {
                name: text(skill, "name"),
                description: text(skill, "description"),
                file_path: text(skill, "filePath"),
                base_dir: text(skill, "baseDir"),
                disable_model_invocation: skill
                    .get("disableModelInvocation")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            })
            .collect()
    };
    PromptInputs {
        custom_prompt: changed(base, edited, "customPrompt")
            .map(|v| v.as_str().filter(|text| !text.is_empty()).map(str::to_string)),
        tool_snippets: changed(base, edited, "toolSnippets").map(text_map),
        tool_guidelines: changed(base, edited, "toolGuidelines").map(guidelines),
        context_files: changed(base, edited, "contextFiles").map(files),
        skills: changed(base, edited, "skills").map(skills),
        cwd: changed(base, edited, "cwd").and_then(Value::as_str).map(str::to_string),
    }
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
            inputs: inputs_of(base, edited),
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
    fn replaced_inputs_are_read_and_untouched_ones_left_alone() {
        let mut base = base();
        base["toolSnippets"] = json!({"read": "reads", "bash": "runs"});
        base["contextFiles"] = json!([]);
        let mut edited = base.clone();
        edited["toolSnippets"]["read"] = json!("reads, edited");
        edited["contextFiles"] = json!([{"path": "/x/AGENTS.md", "content": "be brief"}]);
        edited["customPrompt"] = json!("You are a lighthouse.");
        let inputs = edits_of(&base, &edited).prompt.inputs;
        assert_eq!(
            inputs.tool_snippets,
            Some(vec![
                ("read".to_string(), "reads, edited".to_string()),
                ("bash".to_string(), "runs".to_string())
            ])
        );
        assert_eq!(
            inputs.context_files,
            Some(vec![("/x/AGENTS.md".to_string(), "be brief".to_string())])
        );
        assert_eq!(inputs.custom_prompt, Some(Some("You are a lighthouse.".to_string())));
        assert_eq!(inputs.tool_guidelines, None);
        assert_eq!(inputs.skills, None);
        assert_eq!(inputs.cwd, None);
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
