//! The transcript's system messages (pi 1.6's `role: "system"`): replaying them gives the
//! prompt sections and tool declarations the model was last given, and a prompt whose loadout
//! differs starts with one new system message that declares only what changed (the first one
//! of a session declares everything). A transcript written by pi 0.73 holds none, so its next
//! prompt records the full loadout after the old entries.
//!
//! The messages are kept as [`CustomMessage`]s, written as read: the model never sees them as
//! messages (the request's system prompt and tools come from the loadout they describe).

use std::sync::Arc;

use pi_agent::{AgentMessage, AgentTool, CustomMessage};
use serde_json::{json, Map, Value};

use crate::system_prompt::PromptSections;

/// What the transcript's system messages declare, replayed in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeclaredLoadout {
    /// Section name to its text, in declaration order.
    pub sections: Map<String, Value>,
    /// Tool name to its declaration, in declaration order.
    pub tools: Map<String, Value>,
    /// Whether any system message was seen.
    pub recorded: bool,
}

fn system_fields(message: &AgentMessage) -> Option<&Map<String, Value>> {
    match message {
        AgentMessage::Custom(c) if c.role == "system" => Some(&c.fields),
        _ => None,
    }
}

/// Replay every system message of `messages`: sections are patched by name (`null` removes
/// one), then `toolsRemoved` and `toolsAdded` update the tools (a changed tool is removed and
/// added again, so it moves to the end as pi replays it).
pub fn replay(messages: &[AgentMessage]) -> DeclaredLoadout {
    let mut out = DeclaredLoadout::default();
    for fields in messages.iter().filter_map(system_fields) {
        out.recorded = true;
        if let Some(Value::Object(sections)) = fields.get("sections") {
            for (name, text) in sections {
                if text.is_null() {
                    out.sections.shift_remove(name);
                } else {
                    out.sections.insert(name.clone(), text.clone());
                }
            }
        }
        let named = |key: &str| -> Vec<(String, Value)> {
            fields
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| Some((t.get("name")?.as_str()?.to_string(), t.clone())))
                .collect()
        };
        for (name, _) in named("toolsRemoved") {
            out.tools.shift_remove(&name);
        }
        for (name, tool) in named("toolsAdded") {
            out.tools.shift_remove(&name);
            out.tools.insert(name, tool);
        }
    }
    out
}

/// A tool as a system message declares it: `{name, description, parameters,
/// constrainedSampling?}`.
pub fn tool_declaration(tool: &dyn AgentTool) -> Value {
    let mut decl = Map::new();
    decl.insert("name".into(), Value::from(tool.name()));
    decl.insert("description".into(), Value::from(tool.description()));
    decl.insert("parameters".into(), tool.parameters());
    if let Some(sampling) = tool.constrained_sampling() {
        decl.insert("constrainedSampling".into(), sampling);
    }
    Value::Object(decl)
}

/// The section texts that differ from `declared`: changed or new ones with their text, gone
/// ones as `null`. `None` when nothing changed.
fn section_patch(declared: &Map<String, Value>, current: &PromptSections) -> Option<Map<String, Value>> {
    let mut patch = Map::new();
    for (name, text) in &current.0 {
        if declared.get(name).and_then(Value::as_str) != Some(text.as_str()) {
            patch.insert(name.clone(), Value::from(text.as_str()));
        }
    }
    for name in declared.keys() {
        if current.get(name).is_none() {
            patch.insert(name.clone(), Value::Null);
        }
    }
    (!patch.is_empty()).then_some(patch)
}

/// The tools to add (new or changed, in `tools`' order) and remove (gone or changed) to
/// bring `declared` to `tools`; a changed tool is both removed and added, as pi replays it.
fn tool_changes(declared: &Map<String, Value>, tools: &[Arc<dyn AgentTool>]) -> (Vec<Value>, Vec<Value>) {
    let current: Vec<Value> = tools.iter().map(|t| tool_declaration(t.as_ref())).collect();
    let name_of = |t: &Value| t.get("name").and_then(Value::as_str).map(str::to_string);
    let added: Vec<Value> = current
        .iter()
        .filter(|t| name_of(t).is_none_or(|n| declared.get(&n) != Some(*t)))
        .cloned()
        .collect();
    let removed: Vec<Value> = declared
        .iter()
        .filter(|(name, decl)| {
            !current
                .iter()
                .any(|t| name_of(t).as_deref() == Some(name.as_str()) && t == *decl)
        })
        .map(|(name, _)| json!({ "name": name }))
        .collect();
    (added, removed)
}

/// A system message with pi's key order: role, content, sections, timestamp, toolsAdded,
/// toolsRemoved (empty parts left out).
fn system_message(
    sections: Option<Map<String, Value>>,
    timestamp: i64,
    added: Vec<Value>,
    removed: Vec<Value>,
) -> AgentMessage {
    let mut fields = Map::new();
    fields.insert("content".into(), Value::from(""));
    if let Some(patch) = sections {
        fields.insert("sections".into(), Value::Object(patch));
    }
    fields.insert("timestamp".into(), Value::from(timestamp));
    if !added.is_empty() {
        fields.insert("toolsAdded".into(), Value::Array(added));
    }
    if !removed.is_empty() {
        fields.insert("toolsRemoved".into(), Value::Array(removed));
    }
    AgentMessage::from(CustomMessage::new("system", fields))
}

/// The system message that brings the model from what `messages` declare to `sections` and
/// `tools`, stamped `timestamp`; `None` when the transcript already declares exactly that.
pub fn declare_changes(
    messages: &[AgentMessage],
    sections: &PromptSections,
    tools: &[Arc<dyn AgentTool>],
    timestamp: i64,
) -> Option<AgentMessage> {
    let declared = replay(messages);
    let (added, removed) = tool_changes(&declared.tools, tools);
    let patch = section_patch(&declared.sections, sections);
    if patch.is_none() && added.is_empty() && removed.is_empty() {
        return None;
    }
    Some(system_message(patch, timestamp, added, removed))
}

/// Between the requests of a run only the tools are declared again (pi 1.6's agent loop):
/// the system message of the tools added and removed since `messages` last declared them,
/// or `None` when they match.
pub fn declare_tool_changes(
    messages: &[AgentMessage],
    tools: &[Arc<dyn AgentTool>],
    timestamp: i64,
) -> Option<AgentMessage> {
    let (added, removed) = tool_changes(&replay(messages).tools, tools);
    if added.is_empty() && removed.is_empty() {
        return None;
    }
    Some(system_message(None, timestamp, added, removed))
}

/// Whether `message` is one of the transcript's system messages.
pub fn is_system(message: &AgentMessage) -> bool {
    system_fields(message).is_some()
}

/// The text of a system message's `content` (a string, or its text parts joined by lines).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// One system message declaring all that the transcript's system messages add up to (pi's
/// current system head), or `None` when the transcript has none: their texts joined by lines,
/// the replayed sections and tools, and the first one's timestamp, in pi's key order. A
/// `context` handler that changes the conversation gets it back in front of the list it
/// returned, and a compaction keeps it as its checkpoint.
pub fn current_head(messages: &[AgentMessage]) -> Option<AgentMessage> {
    let declared = replay(messages);
    if !declared.recorded {
        return None;
    }
    let mut texts = Vec::new();
    let mut timestamp = None;
    for fields in messages.iter().filter_map(system_fields) {
        if timestamp.is_none() {
            timestamp = fields.get("timestamp").cloned();
        }
        let text = content_text(fields.get("content"));
        if !text.is_empty() {
            texts.push(text);
        }
    }
    let mut fields = Map::new();
    fields.insert("content".into(), Value::from(texts.join("\n")));
    if !declared.sections.is_empty() {
        fields.insert("sections".into(), Value::Object(declared.sections));
    }
    if !declared.tools.is_empty() {
        fields.insert(
            "toolsAdded".into(),
            Value::Array(declared.tools.into_values().collect()),
        );
    }
    fields.insert("timestamp".into(), timestamp.unwrap_or(Value::from(0)));
    Some(AgentMessage::from(CustomMessage::new("system", fields)))
}

/// The checkpoint a compaction stores as its `systemMessage` (the session stamps it with the
/// compaction's own time): the context after the compaction replays the same prompt and
/// tools without declaring them again.
pub fn compaction_checkpoint(messages: &[AgentMessage]) -> Option<Value> {
    serde_json::to_value(current_head(messages)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use pi_agent::{ToolError, ToolOutput, ToolUpdateFn};
    use tokio_util::sync::CancellationToken;

    struct T(&'static str, &'static str);

    #[async_trait]
    impl AgentTool for T {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            self.1
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn constrained_sampling(&self) -> Option<Value> {
            (self.0 == "read").then(|| json!({"type": "json_schema", "strict": "prefer"}))
        }
        async fn execute(
            &self,
            _: &str,
            _: Value,
            _: CancellationToken,
            _: ToolUpdateFn,
        ) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("ok"))
        }
    }

    fn sections(pairs: &[(&str, &str)]) -> PromptSections {
        PromptSections(pairs.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect())
    }

    fn tools(list: &[(&'static str, &'static str)]) -> Vec<Arc<dyn AgentTool>> {
        list.iter()
            .map(|(n, d)| Arc::new(T(n, d)) as Arc<dyn AgentTool>)
            .collect()
    }

    #[test]
    fn the_first_message_declares_everything_in_pi_key_order() {
        let s = sections(&[("preamble", "p"), ("cwd", "<cwd>\n/x\n</cwd>")]);
        let msg = declare_changes(&[], &s, &tools(&[("read", "r"), ("bash", "b")]), 7).expect("a message");
        assert_eq!(
            serde_json::to_string(&msg).unwrap_or_default(),
            r#"{"role":"system","content":"","sections":{"preamble":"p","cwd":"<cwd>\n/x\n</cwd>"},"timestamp":7,"toolsAdded":[{"name":"read","description":"r","parameters":{"type":"object"},"constrainedSampling":{"type":"json_schema","strict":"prefer"}},{"name":"bash","description":"b","parameters":{"type":"object"}}]}"#
        );
    }

    #[test]
    fn an_unchanged_loadout_declares_nothing_and_changes_are_patches() {
        let s = sections(&[("preamble", "p"), ("tools", "t1")]);
        let t = tools(&[("read", "r"), ("bash", "b")]);
        let first = declare_changes(&[], &s, &t, 1).expect("first");
        let transcript = vec![first, AgentMessage::user_text("hi")];
        assert!(declare_changes(&transcript, &s, &t, 2).is_none());

        let s2 = sections(&[("preamble", "p"), ("tools", "t2"), ("addendum", "a")]);
        let t2 = tools(&[("read", "r"), ("bash", "b2"), ("grep", "g")]);
        let patch = declare_changes(&transcript, &s2, &t2, 3).expect("a patch");
        let v = serde_json::to_value(&patch).unwrap_or_default();
        assert_eq!(v["sections"], json!({"tools": "t2", "addendum": "a"}));
        let added: Vec<&str> = v["toolsAdded"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(added, ["bash", "grep"]);
        assert_eq!(v["toolsRemoved"], json!([{"name": "bash"}]));

        let mut transcript = transcript;
        transcript.push(patch);
        let replayed = replay(&transcript);
        assert_eq!(
            replayed.sections.keys().collect::<Vec<_>>(),
            ["preamble", "tools", "addendum"]
        );
        assert_eq!(replayed.tools.keys().collect::<Vec<_>>(), ["read", "bash", "grep"]);
        assert!(declare_changes(&transcript, &s2, &t2, 4).is_none());

        // A section that goes away is patched to null; a tool that goes is removed.
        let s3 = sections(&[("preamble", "p"), ("tools", "t2")]);
        let back = declare_changes(&transcript, &s3, &tools(&[("read", "r")]), 5).expect("a patch");
        let v = serde_json::to_value(&back).unwrap_or_default();
        assert_eq!(v["sections"], json!({"addendum": null}));
        assert!(v.get("toolsAdded").is_none());
        assert_eq!(v["toolsRemoved"], json!([{"name": "bash"}, {"name": "grep"}]));
    }

    #[test]
    fn a_run_declares_only_its_tool_changes() {
        let s = sections(&[("preamble", "p")]);
        let first = declare_changes(&[], &s, &tools(&[("read", "r")]), 1).expect("first");
        let transcript = vec![first, AgentMessage::user_text("hi")];
        assert!(declare_tool_changes(&transcript, &tools(&[("read", "r")]), 2).is_none());
        let msg = declare_tool_changes(&transcript, &tools(&[("grep", "g")]), 3).expect("changes");
        assert_eq!(
            serde_json::to_string(&msg).unwrap_or_default(),
            r#"{"role":"system","content":"","timestamp":3,"toolsAdded":[{"name":"grep","description":"g","parameters":{"type":"object"}}],"toolsRemoved":[{"name":"read"}]}"#
        );
    }

    #[test]
    fn the_head_and_the_compaction_checkpoint_add_up_every_declaration() {
        let s = sections(&[("preamble", "p"), ("cwd", "c")]);
        let first = declare_changes(&[], &s, &tools(&[("read", "r"), ("bash", "b")]), 10).expect("first");
        let later = declare_tool_changes(std::slice::from_ref(&first), &tools(&[("read", "r")]), 20).expect("later");
        let transcript = vec![first, AgentMessage::user_text("hi"), later];
        let head = compaction_checkpoint(&transcript).expect("a checkpoint");
        assert_eq!(
            serde_json::to_string(&head).unwrap_or_default(),
            r#"{"role":"system","content":"","sections":{"preamble":"p","cwd":"c"},"toolsAdded":[{"name":"read","description":"r","parameters":{"type":"object"},"constrainedSampling":{"type":"json_schema","strict":"prefer"}}],"timestamp":10}"#
        );
        assert!(compaction_checkpoint(&[AgentMessage::user_text("old")]).is_none());
    }

    #[test]
    fn a_transcript_without_system_messages_gets_the_full_loadout() {
        let old = vec![AgentMessage::user_text("from 0.73")];
        assert!(!replay(&old).recorded);
        let msg = declare_changes(&old, &sections(&[("preamble", "p")]), &[], 9).expect("full");
        let v = serde_json::to_value(&msg).unwrap_or_default();
        assert_eq!(v["sections"], json!({"preamble": "p"}));
        assert!(v.get("toolsAdded").is_none());
    }
}
