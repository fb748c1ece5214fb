//! Typed readings of the combined results of pi's chained events, as the host returns them
//! after applying 1.6's combination rules.

use serde::Deserialize;
use serde_json::Value;

/// `input`: what to do with the prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    Continue,
    /// Go on with this text (and these images, when given).
    Transform {
        text: String,
        images: Option<Value>,
    },
    /// An extension dealt with it; nothing is sent.
    Handled,
}

impl InputOutcome {
    pub fn from_result(result: &Value) -> InputOutcome {
        match result.get("action").and_then(Value::as_str) {
            Some("handled") => InputOutcome::Handled,
            Some("transform") => InputOutcome::Transform {
                text: result
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                images: result.get("images").filter(|v| !v.is_null()).cloned(),
            },
            _ => InputOutcome::Continue,
        }
    }
}

/// `tool_call`: the first block wins; `input` is the arguments after in-place edits.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ToolCallOutcome {
    #[serde(default)]
    pub block: bool,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub terminate: bool,
    #[serde(default)]
    pub input: Value,
}

impl ToolCallOutcome {
    /// The error text of a blocked call, as pi words it when no reason is given.
    pub fn block_message(&self) -> Option<String> {
        self.block.then(|| {
            self.reason
                .clone()
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| "Tool execution was blocked".to_string())
        })
    }
}

/// `tool_result`: the patched result, `None` when no handler changed it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultPatch {
    #[serde(default)]
    pub content: Option<Vec<Value>>,
    #[serde(default)]
    pub details: Option<Value>,
    #[serde(default)]
    pub is_error: Option<bool>,
    #[serde(default)]
    pub structured_content: Option<Value>,
    #[serde(default)]
    pub usage: Option<Value>,
}

/// `before_agent_start`: messages from every handler, and the last system prompt returned.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStartOutcome {
    #[serde(default)]
    pub messages: Vec<Value>,
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// `event.systemPromptOptions` after handlers edited it in place.
    #[serde(default)]
    pub system_prompt_options: Option<Value>,
}

/// `context` / `context_with_system`: the messages to send.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ContextOutcome {
    #[serde(default)]
    pub messages: Vec<Value>,
    /// Whether a handler returned a new list (edits in place are in `messages` either way).
    #[serde(default)]
    pub replaced: bool,
}

/// `session_before_*`: cancelled by the first handler that says so; else the last result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionBeforeOutcome {
    pub cancel: bool,
    /// The deciding result as returned (compaction, summary, ...), `Null` when none.
    pub result: Value,
}

impl SessionBeforeOutcome {
    pub fn from_result(result: &Value) -> SessionBeforeOutcome {
        SessionBeforeOutcome {
            cancel: result.get("cancel").and_then(Value::as_bool).unwrap_or(false),
            result: result.clone(),
        }
    }
}

/// Read a combined result into its typed shape; `Null` (no handler changed anything) gives
/// the default.
pub fn parse<T: for<'de> Deserialize<'de> + Default>(result: &Value) -> Result<T, String> {
    if result.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(result.clone()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_outcomes_read_each_action() {
        assert_eq!(
            InputOutcome::from_result(&json!({"action": "continue"})),
            InputOutcome::Continue
        );
        assert_eq!(
            InputOutcome::from_result(&json!({"action": "handled"})),
            InputOutcome::Handled
        );
        assert_eq!(
            InputOutcome::from_result(&json!({"action": "transform", "text": "HI"})),
            InputOutcome::Transform {
                text: "HI".into(),
                images: None
            }
        );
    }

    #[test]
    fn a_block_without_reason_gets_pis_words() -> Result<(), String> {
        let outcome: ToolCallOutcome = parse(&json!({"block": true, "input": {}}))?;
        assert_eq!(outcome.block_message().as_deref(), Some("Tool execution was blocked"));
        let open: ToolCallOutcome = parse(&Value::Null)?;
        assert_eq!(open.block_message(), None);
        Ok(())
    }

    #[test]
    fn session_before_reads_cancel() {
        assert!(SessionBeforeOutcome::from_result(&json!({"cancel": true})).cancel);
        assert!(!SessionBeforeOutcome::from_result(&Value::Null).cancel);
    }
}
