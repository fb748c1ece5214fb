//! The wire between pi and its extension host: JSON lines with ids both ways (see
//! `docs/extension-protocol.md`), and the typed parameters and results of each method.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version both ends must speak. Bumped on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 2;

/// One line of the wire, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Request { id: u64, method: String, params: Value },
    Response { id: u64, outcome: Result<Value, WireError> },
    Notification { method: String, params: Value },
}

/// The error half of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireError {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

#[derive(Deserialize)]
struct RawFrame {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<WireError>,
}

impl Frame {
    /// Read one line. A line that is not a frame is an error naming why.
    pub fn parse(line: &str) -> Result<Frame, String> {
        let raw: RawFrame = serde_json::from_str(line).map_err(|e| e.to_string())?;
        match (raw.id, raw.method) {
            (Some(id), Some(method)) => Ok(Frame::Request {
                id,
                method,
                params: raw.params.unwrap_or(Value::Null),
            }),
            (None, Some(method)) => Ok(Frame::Notification {
                method,
                params: raw.params.unwrap_or(Value::Null),
            }),
            (Some(id), None) => Ok(Frame::Response {
                id,
                outcome: match raw.error {
                    Some(error) => Err(error),
                    None => Ok(raw.result.unwrap_or(Value::Null)),
                },
            }),
            (None, None) => Err("a frame needs an id, a method or both".to_string()),
        }
    }

    /// The line to write, without its newline.
    pub fn to_line(&self) -> String {
        let value = match self {
            Frame::Request { id, method, params } => {
                serde_json::json!({ "id": id, "method": method, "params": params })
            }
            Frame::Response { id, outcome } => match outcome {
                Ok(result) => serde_json::json!({ "id": id, "result": result }),
                Err(error) => serde_json::json!({ "id": id, "error": error }),
            },
            Frame::Notification { method, params } => {
                serde_json::json!({ "method": method, "params": params })
            }
        };
        value.to_string()
    }
}

/// The host's first notification, `hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    pub protocol_version: u32,
    pub node: String,
    pub pid: u32,
}

/// How pi runs, as `ctx.mode` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Tui,
    Rpc,
    Json,
    #[default]
    Print,
}

impl Mode {
    /// Whether `ctx.hasUI` is true in this mode.
    pub fn has_ui(self) -> bool {
        matches!(self, Mode::Tui | Mode::Rpc)
    }
}

/// `initialize` parameters.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: u32,
    pub pi_version: String,
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    pub mode: Mode,
    #[serde(rename = "hasUI")]
    pub has_ui: bool,
    pub project_trusted: bool,
    pub modules_dir: PathBuf,
    pub cache_dir: PathBuf,
    pub flag_values: BTreeMap<String, Value>,
    /// The state mirror's first contents, for what factories read while loading (pi's tool
    /// definitions for the built-in tool factories, say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<StateUpdate>,
}

/// `initialize` result.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: u32,
    pub node: String,
    pub pid: u32,
}

/// One extension entry point to load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionSource {
    /// The path as pi names it in messages.
    pub path: String,
    /// The file to import, when it differs from `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_path: Option<PathBuf>,
}

/// A tool as an extension registered it (functions stay in the host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parameters: Value,
    #[serde(default)]
    pub prompt_snippet: Option<Value>,
    #[serde(default)]
    pub prompt_guidelines: Option<Value>,
    #[serde(default)]
    pub exposure: Option<String>,
    #[serde(default)]
    pub execution_mode: Option<String>,
    #[serde(default)]
    pub default_active: Option<bool>,
    #[serde(default)]
    pub has_render_call: bool,
    #[serde(default)]
    pub has_render_result: bool,
}

/// A slash command an extension registered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandInfo {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub has_completions: bool,
}

/// The type of a CLI flag an extension registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagType {
    Boolean,
    String,
}

/// A CLI flag an extension registered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlagInfo {
    pub name: String,
    #[serde(rename = "type")]
    pub flag_type: FlagType,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub default: Option<Value>,
}

/// A keyboard shortcut an extension registered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShortcutInfo {
    pub key: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// Everything one loaded extension registered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionInfo {
    pub path: String,
    pub resolved_path: PathBuf,
    #[serde(default)]
    pub tools: Vec<ToolInfo>,
    #[serde(default)]
    pub commands: Vec<CommandInfo>,
    #[serde(default)]
    pub flags: Vec<FlagInfo>,
    #[serde(default)]
    pub shortcuts: Vec<ShortcutInfo>,
    /// Event names with at least one handler.
    #[serde(default)]
    pub events: Vec<String>,
    #[serde(default)]
    pub message_renderers: Vec<String>,
    #[serde(default)]
    pub entry_renderers: Vec<String>,
    /// The extension registered `pi.registerToolRenderer` resolvers (which may draw any
    /// tool, registered or not).
    #[serde(default)]
    pub tool_renderers: bool,
    #[serde(default)]
    pub providers: Vec<ProviderInfo>,
    #[serde(default)]
    pub mcp_servers: Vec<String>,
    /// `provider/id` of each virtual model.
    #[serde(default)]
    pub virtual_models: Vec<String>,
}

/// A provider an extension registered (`pi.registerProvider`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    /// The provider id models are listed under.
    pub name: String,
    /// The serialisable part of the config, in models.json's shape (`baseUrl`, `apiKey`,
    /// `api`, `headers`, `authHeader`, `models`, `name`).
    #[serde(default)]
    pub config: Value,
    /// The provider streams itself: requests for its `api` go to the host (`provider.stream`).
    #[serde(default)]
    pub stream_simple: bool,
    /// Its `/login` sign-in, when it has one.
    #[serde(default)]
    pub oauth: Option<ProviderOauthInfo>,
}

/// The sign-in of a registered provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderOauthInfo {
    /// The name `/login` shows.
    pub name: String,
}

/// An extension that failed to load, or a conflict it caused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadError {
    pub path: String,
    pub error: String,
}

impl fmt::Display for LoadError {
    /// The line pi 1.6 prints after `Error: `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Failed to load extension \"{}\": {}", self.path, self.error)
    }
}

/// `load` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadResult {
    #[serde(default)]
    pub extensions: Vec<ExtensionInfo>,
    #[serde(default)]
    pub errors: Vec<LoadError>,
    /// Every server registered with `pi.registerMcpServer` so far, in registration order.
    #[serde(default, rename = "mcpServers")]
    pub mcp_servers: Vec<RegisteredMcpServer>,
}

/// A server an extension registered (`pi.registerMcpServer`), with its config as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredMcpServer {
    pub name: String,
    #[serde(default)]
    pub config: Value,
    pub extension_path: String,
}

/// A handler that threw, as pi reports extension errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionError {
    pub extension_path: String,
    pub event: String,
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

impl fmt::Display for ExtensionError {
    /// The print/json mode stderr line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Extension error ({}): {}", self.extension_path, self.error)
    }
}

/// `dispatch` result: the combined outcome and the handlers that threw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dispatched {
    #[serde(default)]
    pub result: Value,
    #[serde(default)]
    pub errors: Vec<ExtensionError>,
}

/// What a tool returned (or an update on the way).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    #[serde(default)]
    pub content: Vec<Value>,
    #[serde(default)]
    pub details: Value,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
}

/// `runCommand` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandResult {
    pub found: bool,
    #[serde(default)]
    pub error: Option<ExtensionError>,
}

/// New session entries for the mirror: appended in order, after dropping the old ones when
/// `reset` (a new or switched session).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EntriesDelta {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reset: bool,
    #[serde(default)]
    pub append: Vec<Value>,
}

/// A change to the host's mirror of pi's state; only the fields set are changed. Send it
/// before the events whose handlers read it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "hasUI")]
    pub has_ui: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_trusted: Option<bool>,
    /// The current model object (`ctx.model`); `Some(Value::Null)` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoped_models: Option<Vec<Value>>,
    /// The models `ctx.modelRegistry` lists as available (their provider has auth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<Value>>,
    /// Every model the registry knows, usable now or not (`ctx.modelRegistry.getAll()`), as
    /// the JSON text of the list: the host parses it only when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_models_json: Option<String>,
    /// Each provider's `{configured, source?, label?}` (`getProviderAuthStatus`), by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_auth: Option<Value>,
    /// The providers logged in with OAuth (`ctx.modelRegistry.isUsingOAuth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_providers: Option<Vec<String>>,
    /// pi's own providers registered the way extensions register theirs (pi 1.6's built-in
    /// `llama.cpp`), listed after the extensions' by `getRegisteredProviderIds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin_providers: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_messages: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_tools: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_tools: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// What `ctx.ui.getEditorText()` returns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    /// The current leaf entry id; when absent, the last appended entry becomes the leaf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<EntriesDelta>,
    /// The terminal UI's theme as escape sequences (`{name, appearance, colorMode, fg, bg,
    /// dim}`), for `ctx.ui.theme` and the components extensions draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<Value>,
    /// Every theme the user can switch to, `[{name, path, spec}]` with `spec` shaped as
    /// `theme` (`ctx.ui.getAllThemes()`, `getTheme(name)` and `setTheme` answer from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub themes: Option<Value>,
    /// The terminal's size, `{columns, rows}` (`tui.terminal` of components).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<Value>,
    /// The git branch the footer shows (`footerData.getGitBranch()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The theme token of pi's editor border (the thinking level's colour, or bash
    /// mode's), which a replacement editor is drawn with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_border: Option<String>,
    /// pi's slash commands (`{name, description}`) for a replacement editor's completions;
    /// extension commands come from the host itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_commands: Option<Vec<Value>>,
    /// Whether tool output is expanded (`ctx.ui.getToolsExpanded()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_expanded: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_are_classified_by_id_and_method() {
        let request = Frame::parse(r#"{"id":3,"method":"ui.confirm","params":{"args":[]}}"#);
        assert!(matches!(request, Ok(Frame::Request { id: 3, .. })));
        let note = Frame::parse(r#"{"method":"tool.update","params":{"callId":"a"}}"#);
        assert!(matches!(note, Ok(Frame::Notification { .. })));
        // A null result is still a result, not a missing one.
        assert_eq!(
            Frame::parse(r#"{"id":4,"result":null}"#),
            Ok(Frame::Response {
                id: 4,
                outcome: Ok(Value::Null)
            })
        );
        let failed = Frame::parse(r#"{"id":5,"error":{"code":"failed","message":"no"}}"#);
        assert!(matches!(failed, Ok(Frame::Response { outcome: Err(ref e), .. }) if e.message == "no"));
        assert!(Frame::parse(r#"{"params":{}}"#).is_err());
        assert!(Frame::parse("not json").is_err());
    }

    #[test]
    fn frames_round_trip_through_lines() {
        let frame = Frame::Request {
            id: 9,
            method: "dispatch".into(),
            params: json!({"event": "input"}),
        };
        assert_eq!(Frame::parse(&frame.to_line()), Ok(frame));
    }

    #[test]
    fn state_updates_carry_only_what_changed() {
        let update = StateUpdate {
            idle: Some(false),
            entries: Some(EntriesDelta {
                reset: false,
                append: vec![json!({"id": "a"})],
            }),
            ..StateUpdate::default()
        };
        assert_eq!(
            serde_json::to_value(&update).ok(),
            Some(json!({"idle": false, "entries": {"append": [{"id": "a"}]}}))
        );
    }

    #[test]
    fn load_errors_read_as_pi_prints_them() {
        let error = LoadError {
            path: "/x/b.ts".into(),
            error: "Tool \"dup\" conflicts with /x/a.ts".into(),
        };
        assert_eq!(
            error.to_string(),
            "Failed to load extension \"/x/b.ts\": Tool \"dup\" conflicts with /x/a.ts"
        );
    }
}
