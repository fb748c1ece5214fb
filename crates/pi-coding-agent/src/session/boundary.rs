//! pi 1.6's boundary events (`agent_before_settle`, and the entries of `turn_end`): at the
//! last point a run can still be acted on, extensions return drafts of entries to append
//! (`custom`, `custom_message`, `context_edit`, `compaction`) and may ask for one more
//! request.
//!
//! Drafts are checked first and committed in order; one invalid draft drops them all (pi's
//! `Invalid boundary entries`). Each committed entry is announced as `entry_appended`.

use pi_agent::AgentMessage;
use pi_ai::StopReason;
use pi_session::{EntryKind, SessionManager};
use serde_json::{json, Map, Value};

use super::agent_session::{lock, AgentSession};
use super::events::SessionEvent;
use super::user_bash::append_recorded;

/// What the handlers of a boundary event left.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoundaryResult {
    /// Entry drafts, in the order to append them.
    pub entries: Vec<Value>,
    /// Whether one more request was asked for.
    pub continue_run: bool,
}

impl BoundaryResult {
    /// The host's combined result (`{entries, continue}`; `null` when no handler changed it).
    pub fn from_result(result: &Value) -> Option<BoundaryResult> {
        let result = result.as_object()?;
        Some(BoundaryResult {
            entries: result
                .get("entries")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            continue_run: result.get("continue").and_then(Value::as_bool).unwrap_or(false),
        })
    }
}

/// One checked draft.
#[derive(Debug, Clone, PartialEq)]
enum Draft {
    Custom {
        custom_type: String,
        data: Option<Value>,
    },
    CustomMessage(Box<AgentMessage>),
    /// `replacement` is the content the model sees instead (`None`: the target is left out).
    ContextEdit {
        target_id: String,
        replacement: Option<Value>,
    },
    /// A summary the extension wrote; `first_kept` `None` keeps nothing before it.
    Compaction {
        summary: String,
        first_kept: Option<String>,
        details: Option<Value>,
        usage: Option<Value>,
    },
}

fn text_field<'a>(draft: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    draft
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("{key} must be a non-empty string"))
}

/// Check one draft; the error names what is wrong.
fn parse_draft(value: &Value) -> Result<Draft, String> {
    let Value::Object(draft) = value else {
        return Err("an entry must be an object".into());
    };
    match draft.get("type").and_then(Value::as_str) {
        Some("custom") => Ok(Draft::Custom {
            custom_type: text_field(draft, "customType")?.to_string(),
            data: draft.get("data").filter(|d| !d.is_null()).cloned(),
        }),
        Some("custom_message") => {
            let mut fields = Map::new();
            fields.insert("role".into(), json!("custom"));
            fields.insert("customType".into(), json!(text_field(draft, "customType")?));
            let content = draft.get("content").cloned().unwrap_or_else(|| json!([]));
            if !(content.is_string() || content.is_array()) {
                return Err("content must be a string or an array of content blocks".into());
            }
            fields.insert("content".into(), content);
            fields.insert(
                "display".into(),
                json!(draft.get("display").and_then(Value::as_bool).unwrap_or(true)),
            );
            if let Some(details) = draft.get("details").filter(|d| !d.is_null()) {
                fields.insert("details".into(), details.clone());
            }
            fields.insert("timestamp".into(), json!(pi_ai::now_ms()));
            AgentMessage::from_map(fields)
                .map(|m| Draft::CustomMessage(Box::new(m)))
                .map_err(|_| "custom_message is not a valid message".to_string())
        }
        Some("context_edit") => {
            let replacement = match draft.get("replacement") {
                None | Some(Value::Null) => None,
                Some(Value::Object(r)) if r.get("content").is_some_and(|c| c.is_string() || c.is_array()) => {
                    r.get("content").cloned()
                }
                Some(_) => return Err("Context edit replacement must be null or contain string/array content".into()),
            };
            Ok(Draft::ContextEdit {
                target_id: text_field(draft, "targetId")?.to_string(),
                replacement,
            })
        }
        Some("compaction") => {
            let summary = draft
                .get("summary")
                .and_then(Value::as_str)
                .ok_or("summary must be a string")?;
            let first_kept = match draft.get("firstKeptEntryId") {
                None | Some(Value::Null) => None,
                Some(Value::String(id)) if !id.is_empty() => Some(id.clone()),
                Some(_) => return Err("firstKeptEntryId must be an entry id or null".into()),
            };
            Ok(Draft::Compaction {
                summary: summary.to_string(),
                first_kept,
                details: draft.get("details").filter(|d| !d.is_null()).cloned(),
                usage: draft.get("usage").filter(|u| !u.is_null()).cloned(),
            })
        }
        Some(other) => Err(format!("unknown entry type \"{other}\"")),
        None => Err("an entry needs a type".into()),
    }
}

/// Check every draft: all of them, or the first error.
fn parse_drafts(values: &[Value]) -> Result<Vec<Draft>, String> {
    values.iter().map(parse_draft).collect()
}

/// How the run's last activity ended, as boundary events name it.
pub(crate) fn outcome(last: Option<StopReason>) -> &'static str {
    match last {
        Some(StopReason::Aborted) => "aborted",
        Some(StopReason::Error) => "error",
        _ => "completed",
    }
}

/// pi's rules for a context edit's target: an entry on the active branch whose content the
/// model sees (a user, assistant or tool result message, or a custom message). A text
/// replacement of an assistant or tool result becomes one text block, as their content is.
fn checked_edit(store: &SessionManager, target_id: &str, replacement: Option<Value>) -> Result<Option<Value>, String> {
    let Some(target) = store.get_entry(target_id) else {
        return Err(format!("Entry {target_id} not found"));
    };
    if !store.get_branch(None).iter().any(|e| e.id == target_id) {
        return Err(format!("Entry {target_id} is not on the active branch"));
    }
    let role = match &target.kind {
        EntryKind::CustomMessage { .. } => "custom",
        EntryKind::Message { message, .. } => message.role(),
        _ => "",
    };
    if !matches!(role, "user" | "assistant" | "toolResult" | "custom") {
        return Err(format!("Entry {target_id} does not contribute editable model content"));
    }
    Ok(replacement.map(|content| match content {
        Value::String(text) if matches!(role, "assistant" | "toolResult") => json!([{ "type": "text", "text": text }]),
        other => other,
    }))
}

/// Why a draft was not written.
enum DraftError {
    /// It breaks pi's rules (reported to the extensions as invalid boundary entries).
    Invalid(String),
    /// The session could not write it (kept as the session's persistence error).
    Store(pi_session::SessionError),
}

/// Append one checked draft to `store`; the new entry's id.
fn append_draft(store: &mut SessionManager, draft: Draft) -> Result<String, DraftError> {
    let written = match draft {
        Draft::Custom { custom_type, data } => store.append_custom(&custom_type, data),
        Draft::CustomMessage(message) => append_recorded(store, &message),
        Draft::ContextEdit { target_id, replacement } => {
            let replacement = checked_edit(store, &target_id, replacement).map_err(DraftError::Invalid)?;
            store.append_context_edit(&target_id, replacement).map(|e| e.id)
        }
        Draft::Compaction {
            summary,
            first_kept,
            details,
            usage,
        } => {
            // As a summary pi writes: the tokens of the context it replaces, and the prompt
            // checkpoint the model keeps seeing.
            let messages = store.build_context().messages;
            let tokens_before = crate::compaction::estimate_context_tokens(&messages).tokens;
            let checkpoint = super::system_message::compaction_checkpoint(&messages);
            store.append_extension_compaction(
                &summary,
                first_kept.as_deref(),
                tokens_before,
                details,
                usage,
                checkpoint,
            )
        }
    };
    written.map_err(DraftError::Store)
}

/// Which boundary event asks: a queued steering or follow-up message lets a run go on after
/// any turn, but at the run's end only after the assistant's answer (pi's rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Boundary {
    TurnEnd,
    BeforeSettle,
}

impl Boundary {
    pub(crate) fn parse(event: &str) -> Option<Boundary> {
        match event {
            "turn_end" => Some(Boundary::TurnEnd),
            "agent_before_settle" => Some(Boundary::BeforeSettle),
            _ => None,
        }
    }
}

impl AgentSession {
    /// Whether one more request could run now (pi's `canContinue` of the boundary context,
    /// with no drafts).
    pub(crate) fn can_continue(&self, boundary: Boundary) -> bool {
        self.boundary_context(&[], boundary)
            .ok()
            .and_then(|c| c.get("canContinue").and_then(Value::as_bool))
            .unwrap_or(false)
    }

    /// What the context would be with `drafts` appended, as boundary handlers see it (pi's
    /// `{contextEntries, contextMessages, llmMessages, pendingMessages, canContinue}`), built
    /// on an in-memory copy of the branch. An invalid draft gives its error instead.
    pub(crate) fn boundary_context(&self, drafts: &[Value], boundary: Boundary) -> Result<Value, String> {
        let drafts = parse_drafts(drafts)?;
        let mut preview = self.with_store(|s| s.branch_preview());
        for draft in drafts {
            append_draft(&mut preview, draft).map_err(|e| match e {
                DraftError::Invalid(message) => message,
                DraftError::Store(e) => e.to_string(),
            })?;
        }
        let branch = preview.get_branch(None);
        let projected = pi_session::project_context(&branch);
        let context_entries: Vec<Value> = projected
            .iter()
            .map(|p| json!({ "sourceEntry": p.entry, "messages": p.messages }))
            .collect();
        let messages: Vec<AgentMessage> = projected.into_iter().flat_map(|p| p.messages).collect();
        let llm_messages = pi_session::convert_to_llm(&messages);
        let final_role = llm_messages.last().map(|m| m.role());
        let has_context = llm_messages.iter().any(|m| m.role() != "system");
        let context_can_continue = has_context && final_role != Some("assistant");
        let next_turn = lock(&self.inner.next_turn).clone();
        let agent = &self.inner.agent;
        let queued = agent.has_queued_messages();
        let mut pending = agent.queued_steering();
        pending.extend(agent.queued_follow_ups());
        pending.extend(next_turn.iter().cloned());
        let can_continue = context_can_continue
            || !next_turn.is_empty()
            || match boundary {
                Boundary::TurnEnd => queued,
                Boundary::BeforeSettle => final_role == Some("assistant") && queued,
            };
        Ok(json!({
            "contextEntries": context_entries,
            "contextMessages": messages,
            "llmMessages": llm_messages,
            "pendingMessages": pending,
            "canContinue": can_continue,
        }))
    }

    /// The boundary event's payload: the proposal so far and a preview of the context.
    fn boundary_payload(&self) -> Value {
        json!({
            "outcome": outcome(self.last_assistant().map(|a| a.stop_reason)),
            "entries": [],
            "continue": false,
            "context": self.boundary_context(&[], Boundary::BeforeSettle).unwrap_or(Value::Null),
        })
    }

    /// `agent_before_settle`, unless the run was aborted: commit the drafts, and say whether
    /// a continuation should run (asked for and possible, or messages are queued).
    pub(crate) async fn before_settle(&self) -> bool {
        const EVENT: &str = "agent_before_settle";
        let extensions = self.extensions();
        let aborted = self
            .last_assistant()
            .is_some_and(|a| a.stop_reason == StopReason::Aborted);
        if aborted || self.inner.run.abort_requested() || !extensions.handles(EVENT) {
            return false;
        }
        let Some(result) = extensions.boundary(EVENT, self.boundary_payload()).await else {
            return false;
        };
        self.commit_drafts(EVENT, &result.entries).await;
        // Stopped while the handlers ran: their entries stand, but nothing continues.
        if self.inner.run.abort_requested() {
            return false;
        }
        let can_continue = self.can_continue(Boundary::BeforeSettle);
        if result.continue_run && !can_continue {
            extensions
                .report_boundary_error(
                    EVENT,
                    format!("{EVENT} requested continuation without runnable model context"),
                )
                .await;
            return false;
        }
        result.continue_run && can_continue
    }

    /// Append the drafts of a boundary event in order, each announced as `entry_appended`;
    /// an invalid draft is reported and none is written.
    pub(crate) async fn commit_drafts(&self, event: &str, values: &[Value]) {
        if values.is_empty() {
            return;
        }
        let drafts = match parse_drafts(values) {
            Ok(drafts) => drafts,
            Err(message) => {
                self.extensions()
                    .report_boundary_error(event, format!("Invalid boundary entries: {message}"))
                    .await;
                return;
            }
        };
        let mut edited_context = false;
        for draft in drafts {
            let written = match draft {
                Draft::CustomMessage(message) => {
                    // Into the transcript as well, so the next request sees it.
                    self.record_outside_run(*message);
                    Ok(self.with_store(|s| s.get_leaf_id().map(str::to_string).unwrap_or_default()))
                }
                draft => {
                    edited_context |= matches!(draft, Draft::ContextEdit { .. } | Draft::Compaction { .. });
                    self.with_store(|s| append_draft(s, draft))
                }
            };
            match written {
                Ok(id) => {
                    let entry = self.with_store(|s| s.get_entry(&id).and_then(|e| serde_json::to_value(e).ok()));
                    if let Some(entry) = entry {
                        self.emit(SessionEvent::EntryAppended { entry }).await;
                    }
                }
                Err(DraftError::Invalid(message)) => {
                    // The preview the handlers saw checks the same rules, so this is a draft
                    // the session changed under (a target gone meanwhile).
                    self.extensions()
                        .report_boundary_error(event, format!("Invalid boundary entries: {message}"))
                        .await;
                }
                Err(DraftError::Store(e)) => {
                    lock(&self.inner.persist_error).get_or_insert(e.to_string());
                }
            }
        }
        if edited_context {
            // The model's context follows the session's projection of the edits and summaries.
            let context = self.with_store(|s| s.build_context());
            self.inner.agent.replace_messages(context.messages);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drafts_are_checked_before_any_is_written() {
        let good = json!({"type": "custom", "customType": "mark", "data": {"n": 1}});
        let edit = json!({"type": "context_edit", "targetId": "abc", "replacement": null});
        let message = json!({"type": "custom_message", "customType": "note", "content": "hi"});
        let drafts = parse_drafts(&[good.clone(), edit, message]).unwrap();
        assert_eq!(drafts.len(), 3);
        assert!(matches!(&drafts[1], Draft::ContextEdit { target_id, replacement: None } if target_id == "abc"));
        let bad = json!({"type": "context_edit", "targetId": "abc", "replacement": 3});
        assert_eq!(
            parse_drafts(&[good.clone(), bad]).unwrap_err(),
            "Context edit replacement must be null or contain string/array content"
        );
        let summary = json!({"type": "compaction", "summary": "so far", "firstKeptEntryId": null});
        assert!(matches!(
            &parse_drafts(&[summary]).unwrap()[0],
            Draft::Compaction { first_kept: None, .. }
        ));
        assert_eq!(
            parse_drafts(&[json!({"type": "compaction", "summary": "s", "firstKeptEntryId": 3})]).unwrap_err(),
            "firstKeptEntryId must be an entry id or null"
        );
        assert_eq!(
            parse_drafts(&[json!({"type": "nope"})]).unwrap_err(),
            "unknown entry type \"nope\""
        );
        assert_eq!(
            parse_drafts(&[json!({"type": "custom"})]).unwrap_err(),
            "customType must be a non-empty string"
        );
    }

    #[test]
    fn the_outcome_names_how_the_run_ended() {
        assert_eq!(outcome(Some(StopReason::Aborted)), "aborted");
        assert_eq!(outcome(Some(StopReason::Error)), "error");
        assert_eq!(outcome(Some(StopReason::Stop)), "completed");
        assert_eq!(outcome(None), "completed");
    }
}
