//! pi's own message roles in the session: building them from entries and what the LLM sees of them.
//!
//! pi stores `user`, `assistant` and `toolResult` messages plus roles of its own (`bashExecution`,
//! `custom`, and in rebuilt contexts `compactionSummary` / `branchSummary`), all as
//! [`pi_agent::AgentMessage`]: the LLM roles typed, any other role (or an LLM role whose shape
//! this version does not understand) as a [`CustomMessage`] written back as it was read.

pub use pi_agent::{AgentMessage, CustomMessage};
use pi_ai::{Content, Message, UserContent, UserMessage};
use serde_json::{Map, Value};
use std::sync::Arc;

use crate::ids;

/// The literal texts pi wraps summaries in when it shows them to the model.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// A custom-role message built from `(key, value)` pairs.
fn custom(role: &str, fields: impl IntoIterator<Item = (&'static str, Value)>) -> AgentMessage {
    let fields = fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    AgentMessage::from(CustomMessage::new(role, fields))
}

/// `{role:"compactionSummary", summary, tokensBefore, timestamp}` as pi rebuilds it.
pub fn compaction_summary_message(summary: &str, tokens_before: &Value, timestamp_iso: &str) -> AgentMessage {
    custom(
        "compactionSummary",
        [
            ("summary", Value::String(summary.into())),
            ("tokensBefore", tokens_before.clone()),
            ("timestamp", iso_ms_value(timestamp_iso)),
        ],
    )
}

/// `{role:"branchSummary", summary, fromId, timestamp}` as pi rebuilds it.
pub fn branch_summary_message(summary: &str, from_id: &str, timestamp_iso: &str) -> AgentMessage {
    custom(
        "branchSummary",
        [
            ("summary", Value::String(summary.into())),
            ("fromId", Value::String(from_id.into())),
            ("timestamp", iso_ms_value(timestamp_iso)),
        ],
    )
}

/// `{role:"custom", customType, content, display, details?, timestamp}` from a
/// `custom_message` entry.
pub fn custom_message(
    custom_type: &str,
    content: &UserContent,
    display: bool,
    details: Option<&Value>,
    timestamp_iso: &str,
) -> AgentMessage {
    let mut map = Map::new();
    map.insert("customType".into(), Value::String(custom_type.into()));
    map.insert("content".into(), serde_json::to_value(content).unwrap_or(Value::Null));
    map.insert("display".into(), Value::Bool(display));
    if let Some(d) = details {
        map.insert("details".into(), d.clone());
    }
    map.insert("timestamp".into(), iso_ms_value(timestamp_iso));
    AgentMessage::from(CustomMessage::new("custom", map))
}

/// JavaScript's `new Date(iso).getTime()` as JSON: a number, or `null` for NaN.
fn iso_ms_value(iso: &str) -> Value {
    ids::iso_to_ms(iso).map_or(Value::Null, Value::from)
}

/// The text pi gives the model for a `bashExecution` message.
pub fn bash_execution_text(msg: &Map<String, Value>) -> String {
    let s = |k: &str| msg.get(k).and_then(Value::as_str).unwrap_or("");
    let truthy = |k: &str| msg.get(k).is_some_and(is_truthy);
    let mut text = format!("Ran `{}`\n", s("command"));
    let output = s("output");
    if output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str("```\n");
        text.push_str(output);
        text.push_str("\n```");
    }
    if truthy("cancelled") {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = msg.get("exitCode").filter(|v| !v.is_null()) {
        if code.as_f64() != Some(0.0) {
            text.push_str(&format!("\n\nCommand exited with code {}", js_number(code)));
        }
    }
    let path = s("fullOutputPath");
    if truthy("truncated") && !path.is_empty() {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

fn js_number(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn is_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// pi's `convertToLlm`: the LLM messages for a rebuilt context. `bashExecution`, `custom`,
/// `branchSummary` and `compactionSummary` become user messages; an excluded bash run and any
/// role the model cannot see are dropped.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    // Sized up front: `filter_map` gives no exact length, and growing by doubling would leave
    // a long history's vector up to twice its size for the whole request.
    let mut out = Vec::with_capacity(messages.len());
    out.extend(messages.iter().filter_map(to_llm));
    out
}

fn to_llm(m: &AgentMessage) -> Option<Message> {
    let c = match m {
        AgentMessage::Llm(msg) => return Some(msg.clone()),
        AgentMessage::Custom(c) => c,
    };
    let map = &c.fields;
    let timestamp = map.get("timestamp").and_then(Value::as_i64).unwrap_or(0);
    let text = |t: String| UserContent::Blocks(vec![Content::text(t)]);
    let summary = || map.get("summary").and_then(Value::as_str).unwrap_or("").to_string();
    let content = match c.role.as_str() {
        "bashExecution" => {
            if map.get("excludeFromContext").is_some_and(is_truthy) {
                return None;
            }
            text(bash_execution_text(map))
        }
        "custom" => match map.get("content") {
            Some(Value::String(s)) => text(s.clone()),
            Some(v) => UserContent::Blocks(serde_json::from_value::<Vec<Content>>(v.clone()).ok()?),
            None => UserContent::Blocks(Vec::new()),
        },
        "branchSummary" => text(format!("{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}", summary())),
        "compactionSummary" => text(format!(
            "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
            summary()
        )),
        // An LLM role whose shape did not parse: try once more, else the model cannot see it.
        "user" | "assistant" | "toolResult" => {
            let mut object = map.clone();
            object.insert("role".into(), Value::String(c.role.clone()));
            return serde_json::from_value(Value::Object(object)).ok();
        }
        _ => return None,
    };
    Some(Message::User(Arc::new(UserMessage {
        content,
        timestamp,
        extra: Map::new(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn custom(v: Value) -> AgentMessage {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn llm_roles_parse_typed_and_others_stay_json() {
        let user = custom(json!({"role":"user","content":"hi","timestamp":1}));
        assert!(matches!(user, AgentMessage::Llm(Message::User(_))));
        let bash = custom(json!({"role":"bashExecution","command":"ls","output":"","exitCode":0,
            "cancelled":false,"truncated":false,"timestamp":2}));
        assert_eq!(bash.role(), "bashExecution");
        assert!(bash.as_llm().is_none());
        // Written back byte for byte, field order kept.
        assert_eq!(
            serde_json::to_string(&bash).unwrap(),
            r#"{"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false,"timestamp":2}"#
        );
    }

    #[test]
    fn bash_execution_text_matches_pi() {
        let m = json!({"command":"false","output":"boom","exitCode":1,"cancelled":false,
            "truncated":true,"fullOutputPath":"/tmp/o"});
        assert_eq!(
            bash_execution_text(m.as_object().unwrap()),
            "Ran `false`\n```\nboom\n```\n\nCommand exited with code 1\n\n[Output truncated. Full output: /tmp/o]"
        );
        let m = json!({"command":"sleep 9","output":"","exitCode":null,"cancelled":true,"truncated":false});
        assert_eq!(
            bash_execution_text(m.as_object().unwrap()),
            "Ran `sleep 9`\n(no output)\n\n(command cancelled)"
        );
    }

    #[test]
    fn convert_to_llm_maps_pi_roles_to_user_messages() {
        let msgs = vec![
            compaction_summary_message("S", &json!(10), "2026-01-01T00:00:00.000Z"),
            branch_summary_message("B", "root", "2026-01-01T00:00:00.000Z"),
            custom_message(
                "ext",
                &UserContent::Text("note".into()),
                true,
                None,
                "2026-01-01T00:00:00.000Z",
            ),
            custom(
                json!({"role":"bashExecution","command":"x","output":"","exitCode":0,"cancelled":false,
                "truncated":false,"excludeFromContext":true,"timestamp":1}),
            ),
            custom(json!({"role":"somethingNew","timestamp":1})),
        ];
        let llm = convert_to_llm(&msgs);
        assert_eq!(llm.len(), 3);
        let texts: Vec<String> = llm
            .iter()
            .map(|m| match m {
                Message::User(u) => u.content.text(),
                _ => panic!("not a user message"),
            })
            .collect();
        assert_eq!(
            texts[0],
            format!("{COMPACTION_SUMMARY_PREFIX}S{COMPACTION_SUMMARY_SUFFIX}")
        );
        assert_eq!(texts[1], format!("{BRANCH_SUMMARY_PREFIX}B{BRANCH_SUMMARY_SUFFIX}"));
        assert_eq!(texts[2], "note");
        assert_eq!(llm[0].timestamp(), 1_767_225_600_000);
    }
}
