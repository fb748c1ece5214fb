//! The engine RPC commands act on, as a trait: the session runtime implements it, the server
//! calls it, tests fake it.

use async_trait::async_trait;
use serde_json::Value;

use pi_ai::{ImageContent, Model, ThinkingLevel};

use super::protocol::QueueMode;
use super::server::Preflight;
use super::types::{
    BashResult, Cancelled, CompactionResult, CycleModelResult, ForkMessage, ForkResult, PromptRequest, RpcSessionState,
    SessionStats, SlashCommand,
};

/// A command that failed: the text goes to the client verbatim as `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RpcError(pub String);

impl RpcError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// `prompt` without `streamingBehavior` while the agent runs.
    pub fn already_processing() -> Self {
        Self::new(ALREADY_PROCESSING)
    }

    /// `clone` before the session has any entry.
    pub fn clone_without_leaf() -> Self {
        Self::new("Cannot clone session: no current entry selected")
    }

    /// `steer`/`follow_up` with an extension command (`/name`).
    pub fn extension_command_not_queueable(command: &str) -> Self {
        Self::new(format!(
            "Extension command \"/{command}\" cannot be queued. Use prompt() or execute the command when not streaming."
        ))
    }

    /// `export_html` on a session that is not persisted.
    pub fn export_in_memory() -> Self {
        Self::new("Cannot export in-memory session to HTML")
    }

    /// `export_html` before the session file exists.
    pub fn export_nothing_yet() -> Self {
        Self::new("Nothing to export yet - start a conversation first")
    }
}

/// Error text of a `prompt` rejected because the agent is busy.
pub const ALREADY_PROCESSING: &str =
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

/// Result type of every backend call.
pub type RpcResult<T> = Result<T, RpcError>;

/// Receives a user shell command's output chunks while it runs.
pub type BashDeltaFn = Box<dyn FnMut(&str) + Send>;

/// What RPC mode needs from the session runtime (pi's `AgentSession` + runtime host).
///
/// Calls may overlap: `get_state` arrives while `prompt` runs, `abort` while `bash` runs. Events
/// are not returned here; the backend pushes them (already serialized) on the event channel the
/// server was given. An event sent before a call returns is written before that call's response
/// (pi writes `thinking_level_changed` before the `set_model` response, for instance).
#[async_trait]
pub trait RpcBackend: Send + Sync + 'static {
    // ---- prompting -------------------------------------------------------------------------

    /// Run a prompt (input source `"rpc"`). pi answers it once, when **preflight** is over:
    /// the extension command ran, templates and skills were expanded, the message was queued,
    /// or the model and key were validated and the run is about to start.
    ///
    /// Call [`Preflight::succeed`] at that point (before the run emits `agent_start`): it writes
    /// the success response then and there. After that the future may go on running the whole
    /// prompt, or return at once and leave the run to a task; either way later failures appear
    /// only as events. Returning `Err` before `succeed` rejects the prompt (`success:false`, e.g.
    /// [`RpcError::already_processing`]); returning `Ok` without calling it counts as success.
    async fn prompt(&self, request: PromptRequest, preflight: Preflight) -> RpcResult<()>;
    /// Queue a steering message (skills and templates expanded).
    async fn steer(&self, message: String, images: Option<Vec<ImageContent>>) -> RpcResult<()>;
    /// Queue a follow-up message.
    async fn follow_up(&self, message: String, images: Option<Vec<ImageContent>>) -> RpcResult<()>;
    /// Abort the retry sleep and the run; resolve once the agent is idle.
    async fn abort(&self) -> RpcResult<()>;

    // ---- state and models ------------------------------------------------------------------

    async fn state(&self) -> RpcResult<RpcSessionState>;
    /// Models that have auth configured, in registry order (`get_available_models`; `set_model`
    /// looks its target up here and answers `Model not found: <provider>/<id>` itself).
    async fn available_models(&self) -> RpcResult<Vec<Model>>;
    /// Switch to a model from [`available_models`](Self::available_models); emits
    /// `thinking_level_changed` when the level is re-clamped.
    async fn set_model(&self, model: Model) -> RpcResult<()>;
    /// `None` when there is only one model to cycle through.
    async fn cycle_model(&self) -> RpcResult<Option<CycleModelResult>>;
    /// Set (and clamp to the model's capabilities) the thinking level.
    async fn set_thinking_level(&self, level: ThinkingLevel) -> RpcResult<()>;
    /// `None` when the model has no reasoning.
    async fn cycle_thinking_level(&self) -> RpcResult<Option<ThinkingLevel>>;

    // ---- queue modes and settings ----------------------------------------------------------

    /// Persisted to global settings.
    async fn set_steering_mode(&self, mode: QueueMode) -> RpcResult<()>;
    async fn set_follow_up_mode(&self, mode: QueueMode) -> RpcResult<()>;
    /// Persisted (`compaction.enabled`).
    async fn set_auto_compaction(&self, enabled: bool) -> RpcResult<()>;
    /// Persisted (`retry.enabled`).
    async fn set_auto_retry(&self, enabled: bool) -> RpcResult<()>;
    /// Cancel the retry backoff sleep.
    async fn abort_retry(&self) -> RpcResult<()>;

    // ---- compaction and bash ---------------------------------------------------------------

    /// Manual compaction (aborts the current run first; emits `compaction_start/end` with
    /// `reason:"manual"` before returning).
    async fn compact(&self, custom_instructions: Option<String>) -> RpcResult<CompactionResult>;
    /// Run a user shell command; records a `bashExecution` message without emitting an event.
    /// `on_delta` gets the output as it arrives (`bash_execution_update`).
    async fn bash(&self, command: String, on_delta: BashDeltaFn) -> RpcResult<BashResult>;
    /// Kill the running user bash command, if any.
    async fn abort_bash(&self) -> RpcResult<()>;

    // ---- session ---------------------------------------------------------------------------

    async fn session_stats(&self) -> RpcResult<SessionStats>;
    /// Write the HTML export; returns the path written.
    async fn export_html(&self, output_path: Option<String>) -> RpcResult<String>;
    /// Replace the runtime with a fresh session (an extension may cancel).
    async fn new_session(&self, parent_session: Option<String>) -> RpcResult<Cancelled>;
    /// Replace the runtime with the session at `session_path`.
    async fn switch_session(&self, session_path: String) -> RpcResult<Cancelled>;
    /// Fork before the user message `entry_id` into a new session.
    async fn fork(&self, entry_id: String) -> RpcResult<ForkResult>;
    /// Duplicate the active branch at the current leaf into a new session (`fork` with position
    /// `"at"`); [`RpcError::clone_without_leaf`] when the session is empty.
    async fn clone_session(&self) -> RpcResult<Cancelled>;
    /// All user messages in the file (every branch), in file order.
    async fn fork_messages(&self) -> RpcResult<Vec<ForkMessage>>;
    /// Text of the last assistant message (trimmed), skipping aborted empty ones.
    async fn last_assistant_text(&self) -> RpcResult<Option<String>>;
    /// Set the session name; the server has already trimmed it and rejected empty names.
    async fn set_session_name(&self, name: String) -> RpcResult<()>;
    /// The current context, each message serialized as pi writes an `AgentMessage`.
    async fn messages(&self) -> RpcResult<Vec<Value>>;
    /// Extension commands, then prompt templates, then skills.
    async fn commands(&self) -> RpcResult<Vec<SlashCommand>>;

    /// Drop both queues; the texts taken (steering, follow-up).
    async fn clear_queue(&self) -> RpcResult<(Vec<String>, Vec<String>)> {
        Err(RpcError::new("clear_queue is not supported"))
    }

    /// The thinking levels the current model offers (`off` alone without reasoning).
    async fn available_thinking_levels(&self) -> RpcResult<Vec<ThinkingLevel>> {
        Err(RpcError::new("get_available_thinking_levels is not supported"))
    }

    /// The session entries in append order (after `since` when given) and the leaf id.
    async fn entries(&self, _since: Option<String>) -> RpcResult<(Vec<Value>, Option<String>)> {
        Err(RpcError::new("get_entries is not supported"))
    }

    /// The session tree as `{entry, children, label?, labelTimestamp?}` nodes, and the leaf id.
    async fn tree(&self) -> RpcResult<(Vec<Value>, Option<String>)> {
        Err(RpcError::new("get_tree is not supported"))
    }

    // ---- lifecycle -------------------------------------------------------------------------

    /// True once an extension called `ctx.shutdown()`: the server shuts down after the command
    /// it is answering.
    fn shutdown_requested(&self) -> bool {
        false
    }

    /// Resolves when an extension calls `ctx.shutdown()` (never, by default).
    async fn shutdown_wanted(&self) {
        std::future::pending::<()>().await
    }

    /// Dispose of the runtime (abort what runs, emit `session_shutdown` to extensions). Called
    /// once, at stdin EOF or on a requested shutdown, after every owed response was written.
    async fn shutdown(&self);
}
