//! The extension events of session replacement (`/new`, `/resume`, `/fork`, `/clone`,
//! `/reload`): `session_shutdown` for the old session, a fresh extension runtime in the same
//! host (modules kept, except on `/reload`), and `session_start` for the new one, followed by
//! `resources_discover`.

use std::sync::Arc;

use serde_json::{json, Value};

use pi_extensions::protocol::ExtensionError;

use super::startup::session_state;
use super::ExtensionSlot;
use crate::resources::loader::DiscoveredPaths;
use crate::session::AgentSession;

/// Why a session is replaced, as pi names it in `session_shutdown` and `session_start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    New,
    Resume,
    Fork,
    Reload,
}

impl Replacement {
    pub fn as_str(self) -> &'static str {
        match self {
            Replacement::New => "new",
            Replacement::Resume => "resume",
            Replacement::Fork => "fork",
            Replacement::Reload => "reload",
        }
    }
}

fn session_file(session: &AgentSession) -> Option<String> {
    session.with_store(|s| s.session_file().map(|p| p.display().to_string()))
}

/// `session_before_switch` / `session_before_fork`: whether an extension cancelled the
/// replacement (the first `cancel: true` wins, as in pi).
pub async fn cancelled_by_extension(slot: &Arc<ExtensionSlot>, event: &str, payload: Value) -> bool {
    let Some(runner) = slot.runner() else { return false };
    let emitted = runner.emit_session_before(event, payload).await;
    slot.settle(event, emitted).await.is_some_and(|outcome| outcome.cancel)
}

/// Before the old session stops: `session_shutdown`, and a new extension runtime for the
/// session that follows. Returns the old session file (for `previousSessionFile`).
pub async fn before_replacement(
    slot: &Arc<ExtensionSlot>,
    old: &AgentSession,
    reason: Replacement,
    target: Option<String>,
) -> Option<String> {
    let previous = session_file(old);
    let runner = slot.runner()?;
    let mut payload = json!({ "reason": reason.as_str() });
    if let Some(target) = target {
        payload["targetSessionFile"] = Value::from(target);
    }
    let emitted = runner.emit("session_shutdown", payload).await;
    slot.settle("session_shutdown", emitted.map(|e| ((), e))).await;
    // `/reload` evaluates the modules afresh; the other replacements keep module state.
    let reuse_modules = reason != Replacement::Reload;
    match runner.reload(None, reuse_modules, None).await {
        Ok(registrations) => {
            let errors = registrations
                .errors
                .iter()
                .map(|e| pi_extensions::ExtensionError {
                    extension_path: e.path.clone(),
                    event: "load".into(),
                    error: e.error.clone(),
                    stack: None,
                })
                .collect();
            slot.report(errors).await;
        }
        Err(error) => slot.host_failed("reload", &error).await,
    }
    previous
}

/// The new session is current: join it and send `session_start`.
pub async fn after_replacement(
    slot: &Arc<ExtensionSlot>,
    session: &AgentSession,
    reason: Replacement,
    previous: Option<String>,
) {
    let Some(runner) = slot.runner() else { return };
    // The session was built with the new runtime's tools (`runtime::build_with_store`).
    let _ = runner.push_state(&session_state(session, None));
    super::startup::push_all_models(slot, session);
    // `session_start` handlers read the new session's entries.
    session.extensions().sync_mirror();
    let mut payload = json!({ "reason": reason.as_str() });
    // pi 1.6 names the previous file for new, resume and fork, not for a reload.
    if let Some(previous) = previous.filter(|_| reason != Replacement::Reload) {
        payload["previousSessionFile"] = Value::from(previous);
    }
    let emitted = runner.emit("session_start", payload).await;
    slot.settle("session_start", emitted.map(|e| ((), e))).await;
    discover_resources(slot, session, reason == Replacement::Reload).await;
}

/// `resources_discover` after a `session_start`: the skills, prompt templates and themes
/// extensions name join the session's (pi 1.6 sends `reload` after a reload, else `startup`).
/// A path that does not load is reported as an extension error of this event.
pub async fn discover_resources(slot: &Arc<ExtensionSlot>, session: &AgentSession, reload: bool) {
    const EVENT: &str = "resources_discover";
    let Some(runner) = slot.runner() else { return };
    if !runner.registrations().handles(EVENT) {
        return;
    }
    let payload = json!({
        "cwd": session.cwd().display().to_string(),
        "reason": if reload { "reload" } else { "startup" },
    });
    let dispatched = runner.dispatch(EVENT, payload).await.map(|d| (d.result, d.errors));
    let Some(result) = slot.settle(EVENT, dispatched).await else {
        return;
    };
    let list = |key: &str| -> Vec<String> {
        result
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let found = DiscoveredPaths {
        skill_paths: list("skillPaths"),
        prompt_paths: list("promptPaths"),
        theme_paths: list("themePaths"),
    };
    if found.is_empty() {
        return;
    }
    let problems: Vec<ExtensionError> = session
        .add_discovered_resources(found)
        .into_iter()
        .map(|d| ExtensionError {
            extension_path: d.path.display().to_string(),
            event: EVENT.to_string(),
            error: d.message,
            stack: None,
        })
        .collect();
    slot.report(problems).await;
}
