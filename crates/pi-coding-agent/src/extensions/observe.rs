//! The session's events as pi's extension events: each [`SessionEvent`] that pi 1.6 shows to
//! extensions gets its name and payload here, and goes to the handlers (awaited, before the
//! mode's listeners see the event). The host's state mirror (idle, model, thinking level,
//! entries) is brought up to date first, so handlers that read `ctx` see the state the event
//! describes. Nothing is built for an event no extension handles.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use pi_agent::AgentEvent;
use pi_extensions::{EntriesDelta, ExtensionRunner, StateUpdate};
use serde_json::{json, Map, Value};

use super::ExtensionSlot;
use crate::session::agent_session::lock;
use crate::session::boundary::BoundaryResult;
use crate::session::events::SessionEvent;
use crate::session::AgentSession;

/// What the observer remembers between events: the turn count of the current run and how
/// much of which session's entry list the host already mirrors.
#[derive(Default)]
pub struct EventObserver {
    turn_index: AtomicU32,
    mirrored: Mutex<MirroredEntries>,
}

#[derive(Default)]
struct MirroredEntries {
    session_id: String,
    count: usize,
}

/// An agent event's JSON line as an object without its `type` (the payload pi hands handlers).
fn payload_of(event: &AgentEvent) -> Map<String, Value> {
    let mut map = match serde_json::from_str(&event.to_json()) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    map.remove("type");
    map
}

impl EventObserver {
    /// Hand `event` to the extensions that handle it.
    pub async fn observe(&self, slot: &Arc<ExtensionSlot>, event: &SessionEvent<'_>) {
        let Some(runner) = slot.runner() else { return };
        self.update_mirror(slot, &runner, event);
        let Some(name) = extension_event_name(event) else {
            self.after(event);
            return;
        };
        if name == "message_end" {
            // Delivered by the agent loop's hook (`ExtensionHooks::message_end`), which may
            // replace the message before anyone sees it.
            self.after(event);
            return;
        }
        if !runner.registrations().handles(name) {
            self.after(event);
            return;
        }
        let payload = self.payload(slot, event);
        self.after(event);
        if name == "turn_end" {
            // A boundary event: its drafts and `continue` are acted on at the turn's
            // boundary by the agent loop's hooks.
            let dispatched = runner
                .dispatch(name, Value::Object(payload))
                .await
                .map(|d| (d.result, d.errors));
            slot.apply_pending_actions().await;
            let result = slot.settle(name, dispatched).await;
            slot.set_turn_boundary(result.as_ref().and_then(BoundaryResult::from_result));
            return;
        }
        let emitted = runner.emit(name, Value::Object(payload)).await;
        slot.settle(name, emitted.map(|errors| ((), errors))).await;
        if name == "agent_settled" {
            // What the handlers printed (notify.ts writes an escape sequence) was in the host's
            // pipe before its answer; let the output task pass it on before pi prints the reply,
            // in the order pi 1.6 writes them (a yield runs the I/O driver first).
            tokio::task::yield_now().await;
        }
    }

    /// Bookkeeping once an event's payload is built: turn indexes count per run.
    fn after(&self, event: &SessionEvent<'_>) {
        match event {
            SessionEvent::Agent(AgentEvent::AgentStart) => self.turn_index.store(0, Ordering::SeqCst),
            SessionEvent::Agent(AgentEvent::TurnEnd { .. }) => {
                self.turn_index.fetch_add(1, Ordering::SeqCst);
            }
            _ => {}
        }
    }

    /// The state handlers may read while this event is delivered (`ctx.isIdle()`, `ctx.model`,
    /// `ctx.sessionManager.getEntries()`).
    fn update_mirror(&self, slot: &Arc<ExtensionSlot>, runner: &ExtensionRunner, event: &SessionEvent<'_>) {
        let mut update = StateUpdate::default();
        match event {
            SessionEvent::Agent(AgentEvent::AgentStart) => update.idle = Some(false),
            SessionEvent::AgentSettled { .. } => update.idle = Some(true),
            SessionEvent::ModelSelected { model, .. } => {
                update.model = Some(serde_json::to_value(model).unwrap_or(Value::Null));
            }
            SessionEvent::ThinkingLevelChanged { level, .. } => update.thinking_level = Some(level.clone()),
            SessionEvent::SessionInfoChanged { name } => update.session_name = Some(name.clone()),
            _ => {}
        }
        if let Some(session) = slot.session() {
            let model_changed = update.model.is_some();
            if let Some((delta, leaf)) = self.entries_delta(&session) {
                update.entries = Some(delta);
                update.leaf_id = leaf;
            }
            // The context's size changes with the entries and the model's window.
            if model_changed || update.entries.is_some() {
                update.context_usage = Some(super::startup::context_usage(&session));
            }
            with_models(slot, &session, &mut update);
        }
        if update != StateUpdate::default() {
            // A lost host shows up at the next dispatch; nothing to report here.
            let _ = runner.push_state(&update);
        }
    }

    /// Bring the mirrored entries up to date before a handler runs outside any event (a
    /// command run from the prompt reads `ctx.sessionManager` straight away).
    pub fn sync_entries(&self, slot: &Arc<ExtensionSlot>, runner: &ExtensionRunner) {
        let Some(session) = slot.session() else { return };
        let mut update = StateUpdate::default();
        if let Some((delta, leaf)) = self.entries_delta(&session) {
            update.entries = Some(delta);
            update.leaf_id = leaf;
        }
        with_models(slot, &session, &mut update);
        if update != StateUpdate::default() {
            // A lost host shows up when the command is sent.
            let _ = runner.push_state(&update);
        }
    }

    /// The entries appended since the last push (all of them, with a reset, after the session
    /// was replaced), and the current leaf. `None` when nothing changed.
    fn entries_delta(&self, session: &AgentSession) -> Option<(EntriesDelta, Option<String>)> {
        let mut mirrored = lock(&self.mirrored);
        session.with_store(|store| {
            let entries = store.get_entries();
            let same_session = mirrored.session_id == store.session_id();
            let reset = !same_session || entries.len() < mirrored.count;
            let from = if reset { 0 } else { mirrored.count };
            if !reset && from == entries.len() {
                return None;
            }
            let append = entries[from..]
                .iter()
                .filter_map(|e| serde_json::to_value(e).ok())
                .collect();
            mirrored.session_id = store.session_id().to_string();
            mirrored.count = entries.len();
            Some((EntriesDelta { reset, append }, store.get_leaf_id().map(str::to_string)))
        })
    }

    fn payload(&self, slot: &Arc<ExtensionSlot>, event: &SessionEvent<'_>) -> Map<String, Value> {
        let turn_index = self.turn_index.load(Ordering::SeqCst);
        match event {
            SessionEvent::Agent(agent_event) => {
                let mut map = payload_of(agent_event);
                match agent_event {
                    AgentEvent::TurnStart => {
                        map.insert("turnIndex".into(), json!(turn_index));
                        map.insert("timestamp".into(), json!(pi_ai::now_ms()));
                    }
                    AgentEvent::TurnEnd { tool_results, message } => {
                        map.insert("turnIndex".into(), json!(turn_index));
                        // pi's BoundaryState: nothing proposed yet, and how the turn ended.
                        map.insert("entries".into(), json!([]));
                        map.insert("continue".into(), json!(false));
                        let outcome = crate::session::boundary::outcome(Some(message.stop_reason));
                        map.insert("outcome".into(), json!(outcome));
                        let context = slot.session().and_then(|s| {
                            s.boundary_context(&[], crate::session::boundary::Boundary::TurnEnd)
                                .ok()
                        });
                        map.insert("context".into(), context.unwrap_or(Value::Null));
                        let (message_id, result_ids) = slot
                            .session()
                            .map(|s| persisted_turn_ids(&s, tool_results.len()))
                            .unwrap_or_default();
                        map.insert("messageEntryId".into(), json!(message_id));
                        map.insert("toolResultEntryIds".into(), json!(result_ids));
                    }
                    AgentEvent::MessageUpdate { message, .. } => {
                        // Handlers get the message so far (the wire line carries only the delta).
                        let partial = serde_json::from_str(&message.to_json()).unwrap_or(Value::Null);
                        if let Some(Value::Object(inner)) = map.get_mut("assistantMessageEvent") {
                            inner.insert("partial".into(), partial.clone());
                        }
                        map.remove("usage");
                        map.insert("message".into(), partial);
                    }
                    _ => {}
                }
                map
            }
            SessionEvent::CompactionEnd {
                reason,
                result,
                aborted,
                will_retry,
                error_message,
            } => {
                let mut map = Map::new();
                map.insert("reason".into(), json!(reason.as_str()));
                map.insert("willRetry".into(), json!(will_retry));
                if result.is_some() {
                    let entry = slot
                        .session()
                        .and_then(|s| {
                            s.with_store(|store| {
                                store
                                    .get_leaf_id()
                                    .and_then(|id| store.get_entry(id))
                                    .and_then(|e| serde_json::to_value(e).ok())
                            })
                        })
                        .unwrap_or(Value::Null);
                    let from_extension = entry.get("fromHook").and_then(Value::as_bool).unwrap_or(false);
                    map.insert("fromExtension".into(), json!(from_extension));
                    map.insert("compactionEntry".into(), entry);
                } else {
                    map.insert("fromExtension".into(), json!(false));
                    map.insert("aborted".into(), json!(aborted));
                    if let Some(message) = error_message {
                        map.insert("errorMessage".into(), json!(message));
                    }
                }
                map
            }
            SessionEvent::SessionInfoChanged { name } => object(json!({ "name": name })),
            SessionEvent::ThinkingLevelChanged { level, previous } => {
                object(json!({ "level": level, "previousLevel": previous }))
            }
            SessionEvent::ModelSelected {
                model,
                previous,
                source,
            } => {
                let mut map = object(json!({ "model": model, "source": source }));
                if let Some(previous) = previous {
                    map.insert("previousModel".into(), json!(previous));
                }
                map
            }
            SessionEvent::TreeNavigated {
                new_leaf_id,
                old_leaf_id,
                summary_entry,
            } => {
                let mut map = object(json!({
                    "newLeafId": new_leaf_id,
                    "oldLeafId": old_leaf_id,
                    "fromExtension": false,
                }));
                if let Some(entry) = summary_entry {
                    map.insert("summaryEntry".into(), entry.clone());
                }
                map
            }
            SessionEvent::AgentSettled { aborted } => object(json!({ "aborted": aborted })),
            _ => Map::new(),
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// pi 1.6's extension event for a session event, if extensions see it at all.
pub fn extension_event_name(event: &SessionEvent<'_>) -> Option<&'static str> {
    Some(match event {
        SessionEvent::Agent(agent_event) => agent_event.type_name(),
        SessionEvent::CompactionEnd { result: Some(_), .. } => "session_compact",
        SessionEvent::CompactionEnd { result: None, .. } => "session_compact_failed",
        SessionEvent::SessionInfoChanged { .. } => "session_info_changed",
        SessionEvent::ThinkingLevelChanged { .. } => "thinking_level_select",
        SessionEvent::ModelSelected { .. } => "model_select",
        SessionEvent::TreeNavigated { .. } => "session_tree",
        SessionEvent::AgentSettled { .. } => "agent_settled",
        SessionEvent::AutoRetryStart { .. }
        | SessionEvent::AutoRetryEnd { .. }
        | SessionEvent::CompactionStart { .. }
        | SessionEvent::QueueUpdate { .. }
        | SessionEvent::SummarizationRetry { .. }
        | SessionEvent::EntryAppended { .. } => return None,
    })
}

/// The entry ids of a turn just persisted: its assistant message and its `tool_results`
/// results, which are the last entries of the branch. Walks back from the leaf, so it costs
/// the turn's size, not the history's.
fn persisted_turn_ids(session: &AgentSession, tool_results: usize) -> (Option<String>, Vec<String>) {
    session.with_store(|store| {
        let mut ids = Vec::with_capacity(tool_results + 1);
        let mut at = store.get_leaf_id().map(str::to_string);
        while let Some(id) = at {
            if ids.len() == tool_results + 1 {
                break;
            }
            let Some(entry) = store.get_entry(&id) else { break };
            at = entry.parent_id.clone();
            if matches!(entry.kind, pi_session::EntryKind::Message { .. }) {
                ids.push(id);
            }
        }
        ids.reverse();
        if ids.len() < tool_results + 1 {
            return (None, Vec::new());
        }
        let mut ids = ids.into_iter();
        let message = ids.next();
        (message, ids.collect())
    })
}

/// Add the model registry's view to `update` when it changed since the host last got it.
fn with_models(slot: &Arc<ExtensionSlot>, session: &AgentSession, update: &mut StateUpdate) {
    if let Some(models) = super::startup::models_if_changed(slot, session) {
        update.models = models.models;
        update.provider_auth = models.provider_auth;
        update.oauth_providers = models.oauth_providers;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::events::CompactionReason;

    #[test]
    fn events_extensions_see_have_pi_names() {
        assert_eq!(
            extension_event_name(&SessionEvent::Agent(&AgentEvent::AgentStart)),
            Some("agent_start")
        );
        assert_eq!(
            extension_event_name(&SessionEvent::AgentSettled { aborted: false }),
            Some("agent_settled")
        );
        let failed = SessionEvent::CompactionEnd {
            reason: CompactionReason::Threshold,
            result: None,
            aborted: false,
            will_retry: false,
            error_message: Some("x".into()),
        };
        assert_eq!(extension_event_name(&failed), Some("session_compact_failed"));
        assert_eq!(
            extension_event_name(&SessionEvent::QueueUpdate {
                steering: vec![],
                follow_up: vec![]
            }),
            None
        );
    }

    #[test]
    fn agent_event_payloads_are_their_wire_lines_without_the_type() {
        let observer = EventObserver::default();
        let slot = Arc::new(ExtensionSlot::default());
        let end = AgentEvent::ToolExecutionEnd {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            result: pi_agent::ToolOutput::text("ok"),
            is_error: false,
            duration_ms: Some(3),
            parent_tool_call_id: None,
        };
        let payload = observer.payload(&slot, &SessionEvent::Agent(&end));
        assert_eq!(payload.get("toolCallId"), Some(&json!("c1")));
        assert_eq!(payload.get("durationMs"), Some(&json!(3)));
        assert!(!payload.contains_key("type"));
    }
}
