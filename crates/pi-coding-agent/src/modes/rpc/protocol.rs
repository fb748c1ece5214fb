//! RPC wire records: the commands a client sends, the responses pi answers with, and the rules
//! that turn one input line into one of them.
//!
//! Field names and order follow the TypeScript pi 0.73 exactly; clients parse these records.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use pi_ai::{ImageContent, ThinkingLevel};

use super::extension_ui::UiResponse;
use pi_ai::js_json;

/// How a prompt sent while the agent is busy is queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StreamingBehavior {
    #[serde(rename = "steer")]
    Steer,
    #[serde(rename = "followUp")]
    FollowUp,
}

/// Delivery of queued steering / follow-up messages (the agent's own type).
pub use pi_agent::QueueMode;

/// One command, without its `id` (the id travels beside it, see [`Envelope`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RpcCommand {
    #[serde(rename_all = "camelCase")]
    Prompt {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        streaming_behavior: Option<StreamingBehavior>,
    },
    Steer {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    FollowUp {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    Abort,
    #[serde(rename_all = "camelCase")]
    NewSession {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_session: Option<String>,
    },
    GetState,
    #[serde(rename_all = "camelCase")]
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    SetThinkingLevel {
        level: ThinkingLevel,
    },
    CycleThinkingLevel,
    SetSteeringMode {
        mode: QueueMode,
    },
    SetFollowUpMode {
        mode: QueueMode,
    },
    #[serde(rename_all = "camelCase")]
    Compact {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_instructions: Option<String>,
    },
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    AbortRetry,
    Bash {
        command: String,
    },
    AbortBash,
    GetSessionStats,
    #[serde(rename_all = "camelCase")]
    ExportHtml {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_path: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    SwitchSession {
        session_path: String,
    },
    #[serde(rename_all = "camelCase")]
    Fork {
        entry_id: String,
    },
    Clone,
    GetForkMessages,
    GetLastAssistantText,
    SetSessionName {
        name: String,
    },
    GetMessages,
    GetCommands,
    /// pi 1.6: drop both queues.
    ClearQueue,
    /// pi 1.6: the thinking levels of the current model.
    GetAvailableThinkingLevels,
    /// pi 1.6: the session's entries in append order, after `since` when given.
    GetEntries {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<String>,
    },
    /// pi 1.6: the session tree.
    GetTree,
}

/// Every command type pi 1.6 knows, in the order of its documentation.
pub const COMMAND_TYPES: [&str; 33] = [
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "new_session",
    "get_state",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "set_steering_mode",
    "set_follow_up_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "export_html",
    "switch_session",
    "fork",
    "clone",
    "get_fork_messages",
    "get_last_assistant_text",
    "set_session_name",
    "get_messages",
    "get_commands",
    "clear_queue",
    "get_available_thinking_levels",
    "get_entries",
    "get_tree",
];

impl RpcCommand {
    /// The wire `type` of this command, echoed as `command` in its response.
    pub fn type_name(&self) -> &'static str {
        match self {
            RpcCommand::Prompt { .. } => "prompt",
            RpcCommand::Steer { .. } => "steer",
            RpcCommand::FollowUp { .. } => "follow_up",
            RpcCommand::Abort => "abort",
            RpcCommand::NewSession { .. } => "new_session",
            RpcCommand::GetState => "get_state",
            RpcCommand::SetModel { .. } => "set_model",
            RpcCommand::CycleModel => "cycle_model",
            RpcCommand::GetAvailableModels => "get_available_models",
            RpcCommand::SetThinkingLevel { .. } => "set_thinking_level",
            RpcCommand::CycleThinkingLevel => "cycle_thinking_level",
            RpcCommand::SetSteeringMode { .. } => "set_steering_mode",
            RpcCommand::SetFollowUpMode { .. } => "set_follow_up_mode",
            RpcCommand::Compact { .. } => "compact",
            RpcCommand::SetAutoCompaction { .. } => "set_auto_compaction",
            RpcCommand::SetAutoRetry { .. } => "set_auto_retry",
            RpcCommand::AbortRetry => "abort_retry",
            RpcCommand::Bash { .. } => "bash",
            RpcCommand::AbortBash => "abort_bash",
            RpcCommand::GetSessionStats => "get_session_stats",
            RpcCommand::ExportHtml { .. } => "export_html",
            RpcCommand::SwitchSession { .. } => "switch_session",
            RpcCommand::Fork { .. } => "fork",
            RpcCommand::Clone => "clone",
            RpcCommand::GetForkMessages => "get_fork_messages",
            RpcCommand::GetLastAssistantText => "get_last_assistant_text",
            RpcCommand::SetSessionName { .. } => "set_session_name",
            RpcCommand::GetMessages => "get_messages",
            RpcCommand::GetCommands => "get_commands",
            RpcCommand::ClearQueue => "clear_queue",
            RpcCommand::GetAvailableThinkingLevels => "get_available_thinking_levels",
            RpcCommand::GetEntries { .. } => "get_entries",
            RpcCommand::GetTree => "get_tree",
        }
    }

    /// The command as a client writes it, with an optional id first.
    pub fn to_line(&self, id: Option<&str>) -> String {
        let mut map = Map::new();
        if let Some(id) = id {
            map.insert("id".into(), Value::String(id.into()));
        }
        if let Ok(Value::Object(fields)) = serde_json::to_value(self) {
            map.extend(fields);
        }
        Value::Object(map).to_string()
    }
}

/// A command line that parsed as JSON, with what pi needs to answer it.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The `id` exactly as sent (any JSON value, `null` included); `None` when absent.
    pub id: Option<Value>,
    /// The `type` exactly as sent; `None` when absent (then the response has no `command`).
    pub type_value: Option<Value>,
    pub command: Result<RpcCommand, CommandError>,
}

/// Why a JSON record is not a command pi can run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// pi answers `Unknown command: <type>` (with the request id since pi 0.79.7).
    #[error("Unknown command: {0}")]
    Unknown(String),
    /// A known type with missing or ill-typed fields: answered like a handler failure.
    #[error("{0}")]
    Invalid(String),
}

/// What one input line turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// Not JSON: answer with [`RpcResponse::parse_error`].
    Malformed(RpcResponse),
    /// An answer to an extension UI dialog: routed by id, never answered.
    UiResponse(UiResponse),
    /// A command (perhaps unknown or invalid) to dispatch.
    Command(Envelope),
}

/// Classify one input line (already stripped of its `\n` and one trailing `\r`).
pub fn parse_line(line: &str) -> Incoming {
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(_) => return Incoming::Malformed(RpcResponse::parse_error(&js_json::parse_error_message(line))),
    };
    if let Value::Object(map) = &value {
        if map.get("type").and_then(Value::as_str) == Some("extension_ui_response") {
            return Incoming::UiResponse(UiResponse::from_map(map));
        }
    }
    Incoming::Command(envelope(value))
}

fn envelope(value: Value) -> Envelope {
    // pi reads `command.id` and `command.type` off whatever JSON.parse returned; for a
    // non-object both are undefined.
    let (id, type_value) = match &value {
        Value::Object(map) => (map.get("id").cloned(), map.get("type").cloned()),
        _ => (None, None),
    };
    let known = type_value
        .as_ref()
        .and_then(Value::as_str)
        .filter(|t| COMMAND_TYPES.contains(t));
    let command = match known {
        None => Err(CommandError::Unknown(js_string(type_value.as_ref()))),
        Some(_) => serde_json::from_value::<RpcCommand>(value).map_err(|e| CommandError::Invalid(invalid_message(&e))),
    };
    Envelope {
        id,
        type_value,
        command,
    }
}

fn invalid_message(err: &serde_json::Error) -> String {
    // serde's text ("missing field `message`") is clear; drop its position suffix, which
    // refers to a re-serialized value rather than the client's line.
    let text = err.to_string();
    match text.find(" at line ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// JavaScript's `String(value)` for a JSON value (`undefined` when absent).
pub fn js_string(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if n.is_f64() => pi_ai::json_number::js_number_string(f),
            _ => n.to_string(),
        },
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

/// `{"id"?, "type":"response", "command", "success", "data"? | "error"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcResponse {
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub id: Option<Value>,
    #[serde(rename = "type")]
    pub kind: ResponseTag,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub command: Option<Value>,
    pub success: bool,
    /// `Some(Value::Null)` is written as `"data":null` (cycle commands with nothing to cycle).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The constant `"response"` tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResponseTag {
    #[serde(rename = "response")]
    Response,
}

/// Keep an explicit `null` as `Some(Value::Null)` instead of `None`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl RpcResponse {
    /// A success without `data`.
    pub fn ok(id: Option<Value>, command: &str) -> Self {
        Self {
            id,
            kind: ResponseTag::Response,
            command: Some(Value::String(command.into())),
            success: true,
            data: None,
            error: None,
        }
    }

    /// A success carrying `data` (serialized from a wire type).
    pub fn ok_with<T: Serialize>(id: Option<Value>, command: &str, data: &T) -> Self {
        let data = serde_json::to_value(data).unwrap_or(Value::Null);
        Self {
            data: Some(data),
            ..Self::ok(id, command)
        }
    }

    /// A failure: `success:false` and the error text.
    pub fn err(id: Option<Value>, command: Option<Value>, error: impl Into<String>) -> Self {
        Self {
            id,
            kind: ResponseTag::Response,
            command,
            success: false,
            data: None,
            error: Some(error.into()),
        }
    }

    /// The answer to a line that is not JSON: no id, `command:"parse"`.
    pub fn parse_error(js_message: &str) -> Self {
        Self::err(
            None,
            Some(Value::String("parse".into())),
            format!("Failed to parse command: {js_message}"),
        )
    }

    /// The answer to an unknown `type`, with the request's id (pi 1.6).
    pub fn unknown(id: Option<Value>, type_value: Option<Value>, type_text: &str) -> Self {
        Self::err(id, type_value, format!("Unknown command: {type_text}"))
    }

    /// One JSONL record (without the newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_type_echoes_the_id_and_the_type() {
        let Incoming::Command(env) = parse_line(r#"{"id":"28","type":"no_such_command"}"#) else {
            panic!("not a command")
        };
        let Err(CommandError::Unknown(text)) = &env.command else {
            panic!("not unknown")
        };
        let resp = RpcResponse::unknown(env.id.clone(), env.type_value.clone(), text);
        assert_eq!(
            resp.to_line(),
            r#"{"id":"28","type":"response","command":"no_such_command","success":false,"error":"Unknown command: no_such_command"}"#
        );
    }

    #[test]
    fn missing_type_omits_command_like_undefined() {
        let Incoming::Command(env) = parse_line("[1,2]") else {
            panic!()
        };
        let Err(CommandError::Unknown(text)) = &env.command else {
            panic!()
        };
        assert_eq!(
            RpcResponse::unknown(env.id.clone(), env.type_value.clone(), text).to_line(),
            r#"{"type":"response","success":false,"error":"Unknown command: undefined"}"#
        );
    }

    #[test]
    fn id_is_echoed_verbatim_including_numbers_and_null() {
        for (line, id) in [
            (r#"{"id":7,"type":"abort"}"#, Some(serde_json::json!(7))),
            (r#"{"id":null,"type":"abort"}"#, Some(Value::Null)),
            (r#"{"type":"abort"}"#, None),
        ] {
            let Incoming::Command(env) = parse_line(line) else {
                panic!()
            };
            assert_eq!(env.id, id);
            assert_eq!(env.command, Ok(RpcCommand::Abort));
        }
        assert_eq!(
            RpcResponse::ok(Some(Value::Null), "abort").to_line(),
            r#"{"id":null,"type":"response","command":"abort","success":true}"#
        );
    }

    #[test]
    fn invalid_fields_of_a_known_command_are_an_error_with_id() {
        let Incoming::Command(env) = parse_line(r#"{"id":"x","type":"set_session_name"}"#) else {
            panic!()
        };
        let Err(CommandError::Invalid(msg)) = env.command else {
            panic!()
        };
        assert_eq!(msg, "missing field `name`");
    }

    #[test]
    fn ui_responses_are_routed_not_dispatched() {
        let Incoming::UiResponse(r) = parse_line(r#"{"type":"extension_ui_response","id":"u1","value":"a"}"#) else {
            panic!()
        };
        assert_eq!(r.id.as_deref(), Some("u1"));
    }

    /// Answers recorded from the TypeScript pi 0.73.1 in RPC mode.
    #[test]
    fn odd_lines_answered_like_pi() {
        let answer = |line: &str| match parse_line(line) {
            Incoming::Malformed(r) => r.to_line(),
            Incoming::Command(Envelope {
                id,
                type_value,
                command: Err(CommandError::Unknown(t)),
            }) => RpcResponse::unknown(id, type_value, &t).to_line(),
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(
            answer(r#"{"id":"t","type":5}"#),
            r#"{"id":"t","type":"response","command":5,"success":false,"error":"Unknown command: 5"}"#
        );
        for line in ["[]", "\"str\"", "5", "{}"] {
            assert_eq!(
                answer(line),
                r#"{"type":"response","success":false,"error":"Unknown command: undefined"}"#
            );
        }
        assert_eq!(
            answer("\u{feff}{\"id\":\"bom\",\"type\":\"abort\"}"),
            "{\"type\":\"response\",\"command\":\"parse\",\"success\":false,\"error\":\"Failed to parse command: Unexpected token '\u{feff}', \\\"\u{feff}{\\\"id\\\":\\\"bo\\\"... is not valid JSON\"}"
        );
    }

    #[test]
    fn every_command_type_round_trips_its_name() {
        for t in COMMAND_TYPES {
            let Incoming::Command(env) = parse_line(&format!(r#"{{"type":"{t}"}}"#)) else {
                panic!()
            };
            match env.command {
                Ok(cmd) => assert_eq!(cmd.type_name(), t),
                // Commands with required fields: known, but invalid without them.
                Err(CommandError::Invalid(_)) => {}
                Err(e) => panic!("{t}: {e}"),
            }
        }
    }

    #[test]
    fn js_string_matches_javascript() {
        assert_eq!(js_string(Some(&serde_json::json!(5))), "5");
        assert_eq!(js_string(Some(&serde_json::json!(1.5))), "1.5");
        assert_eq!(js_string(Some(&serde_json::json!([1, null, "a"]))), "1,,a");
        assert_eq!(js_string(Some(&serde_json::json!({}))), "[object Object]");
    }
}
