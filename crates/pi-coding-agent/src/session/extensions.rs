//! The points where an extension host joins the prompt pipeline. The session calls these in
//! pi's order; [`NoExtensions`] (the default) changes nothing.

use async_trait::async_trait;
use pi_agent::AgentMessage;

use super::events::SessionEvent;

/// What the input hook decided about a prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum InputAction {
    /// Go on with the text as typed.
    Continue,
    /// Go on with this text instead.
    Transform(String),
    /// The extension dealt with it; nothing is sent.
    Handled,
}

/// Additions to a run, from `before_agent_start`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeAgentStart {
    /// Custom messages appended after the user message.
    pub messages: Vec<AgentMessage>,
    /// The system prompt for this run (`None`: the session's).
    pub system_prompt: Option<String>,
    /// `systemPromptOptions` as the handlers left it (`None`: no extension saw it).
    pub options: Option<serde_json::Value>,
}

/// What `session_before_compact` decided. One is made per compaction, so the size of the
/// `Use` variant costs nothing worth boxing.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum CompactDecision {
    /// Summarise as usual.
    Proceed,
    /// Do not compact (a manual `/compact` fails with `Compaction cancelled`).
    Cancel,
    /// Use this summary instead of asking the model.
    Use {
        summary: String,
        first_kept_entry_id: String,
        tokens_before: Option<u64>,
        details: Option<serde_json::Value>,
        /// What the extension says its summary cost (kept in the entry as given).
        usage: Option<serde_json::Value>,
    },
}

/// What `user_bash` decided about a user shell command.
#[derive(Debug, Clone, PartialEq)]
pub enum UserBashDecision {
    /// Run it as usual.
    Run,
    /// Do not run it: this is its result.
    Result(super::user_bash::BashResult),
    /// Stop: a handler threw or answered something pi does not accept (the text says which).
    Abort(String),
}

/// A branch summary an extension wrote: its text, `details` and `usage`, stored as given.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionSummary {
    pub summary: String,
    pub details: Option<serde_json::Value>,
    pub usage: Option<serde_json::Value>,
}

/// What `session_before_tree` decided about a move in the session tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeDecision {
    /// Stay where the session is.
    pub cancel: bool,
    /// A branch summary to write instead of asking the model (used only when the move asked
    /// for a summary, as pi 1.6 does).
    pub summary: Option<ExtensionSummary>,
    /// Instructions for the model's summary, replacing the user's.
    pub custom_instructions: Option<String>,
    pub replace_instructions: Option<bool>,
    pub label: Option<String>,
}

/// Hooks of the prompt pipeline (pi's extension events that shape a prompt).
#[async_trait]
pub trait SessionExtensions: Send + Sync {
    /// A `/name args` command registered by an extension: `Some` when it ran (with its error,
    /// if any), `None` when no extension owns the name.
    async fn run_command(&self, _name: &str, _args: &str) -> Option<Result<(), String>> {
        None
    }

    /// The `input` event, before skill and template expansion.
    async fn on_input(&self, _text: &str) -> InputAction {
        InputAction::Continue
    }

    /// The `before_agent_start` event, after the user message is built. `options` is pi 1.6's
    /// `systemPromptOptions` for the prompt as it stands.
    async fn before_agent_start(
        &self,
        _prompt: &str,
        _system_prompt: &str,
        _options: &serde_json::Value,
    ) -> BeforeAgentStart {
        BeforeAgentStart::default()
    }

    /// Every event of the session (the agent loop's, retries, compaction, model and thinking
    /// changes, tree moves, settling), before the mode's listeners see it. Extensions observe
    /// these; what they return does not change the event.
    async fn observe(&self, _event: &SessionEvent<'_>) {}

    /// Whether an extension handles `event`, so the session builds a costly payload (the
    /// branch's entries) only when someone reads it.
    fn handles(&self, _event: &str) -> bool {
        false
    }

    /// Bring what extensions read of the session (its entries) up to date outside any event:
    /// a session that replaced another, before its `session_start`.
    fn sync_mirror(&self) {}

    /// `user_bash` before a `!command` (or RPC `bash`) runs.
    async fn user_bash(&self, _command: &str, _exclude_from_context: bool, _cwd: &str) -> UserBashDecision {
        UserBashDecision::Run
    }

    /// `session_before_tree`, with pi's payload (the target, the old leaf, the entries a
    /// summary would cover).
    async fn before_tree(&self, _payload: serde_json::Value) -> TreeDecision {
        TreeDecision::default()
    }

    /// `session_before_compact`, with pi's payload (preparation, branch entries, reason, ...).
    async fn before_compact(&self, _payload: serde_json::Value) -> CompactDecision {
        CompactDecision::Proceed
    }

    /// A boundary event (`agent_before_settle`): the entry drafts and continuation the
    /// handlers left, or `None` when none changed the proposal.
    async fn boundary(&self, _event: &str, _payload: serde_json::Value) -> Option<super::boundary::BoundaryResult> {
        None
    }

    /// Report a boundary problem as pi does (an extension error from `<boundary>`).
    async fn report_boundary_error(&self, _event: &str, _message: String) {}

    /// `cache_warming_decision` before a cache refresh, with pi's payload (`warmCost`,
    /// `missCost`, `continuationProbability`, `action`): `Some(true)` to warm, `Some(false)` to
    /// stop, `None` when no handler chose (pi's own decision stands).
    async fn cache_warming_decision(&self, _payload: serde_json::Value) -> Option<bool> {
        None
    }
}

/// No extensions loaded.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExtensions;

impl SessionExtensions for NoExtensions {}
