//! A command's session replacement (`ctx.newSession`, `ctx.fork`, `ctx.switchSession`,
//! `ctx.reload`) through the mode's [`SessionHost`], answered as pi 1.6 answers them
//! (`{cancelled}`); `ctx.newSession`'s `setup` runs in the host on the new session before its
//! `session_start`, and its calls are applied here. Also the replaced session's
//! `ctx.sendMessage` / `ctx.sendUserMessage`, which wait for the run they start.

use std::path::Path;
use std::sync::Arc;

use pi_extensions::protocol::EntriesDelta;
use serde_json::{json, Value};

use super::ExtensionSlot;
use crate::runtime::StartupError;
use crate::session::AgentSession;
use crate::session_host::{NewSessionRequest, SessionSetup};

/// Whether `method` is one this module answers.
pub fn handles(method: &str) -> bool {
    matches!(
        method,
        "ctx.newSession" | "ctx.fork" | "ctx.switchSession" | "ctx.reload" | "ctx.sendMessage" | "ctx.sendUserMessage"
    )
}

fn text(params: &Value, key: &str) -> Option<String> {
    params.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Answer one of [`handles`]' requests.
pub async fn answer(slot: &Arc<ExtensionSlot>, method: &str, params: &Value) -> Result<Value, String> {
    match method {
        "ctx.sendMessage" => {
            let session = slot.session().ok_or("no session is open")?;
            super::actions::send_message_and_wait(&session, params).await;
            return Ok(Value::Null);
        }
        "ctx.sendUserMessage" => {
            let session = slot.session().ok_or("no session is open")?;
            return super::actions::send_user_message_and_wait(&session, params)
                .await
                .map(|()| Value::Null);
        }
        _ => {}
    }
    let host = slot
        .session_host()
        .ok_or("session replacement is not available in this mode")?;
    // What the terminal UI shows once the new session is on screen: a notice, and the text
    // a fork puts back into the editor.
    let outcome: Result<(Option<&str>, Option<String>), StartupError> = match method {
        "ctx.newSession" => {
            let request = NewSessionRequest {
                parent_session: text(params, "parentSession"),
                setup: params
                    .get("setupId")
                    .and_then(Value::as_u64)
                    .map(|id| setup_in_host(slot, id)),
            };
            host.new_session_with(request).await.map(|()| (None, None))
        }
        "ctx.fork" => {
            let entry = text(params, "entryId").ok_or("Invalid entry ID for forking")?;
            if params.get("position").and_then(Value::as_str) == Some("at") {
                host.fork_at(Some(entry))
                    .await
                    .map(|()| (Some("Forked to new session"), None))
            } else {
                host.fork(&entry)
                    .await
                    .map(|text| (Some("Forked to new session"), Some(text)))
            }
        }
        "ctx.switchSession" => {
            let path = text(params, "sessionPath").ok_or("switchSession needs a session file")?;
            host.switch_session(Path::new(&path)).await.map(|()| (None, None))
        }
        "ctx.reload" => {
            let session = host.session();
            if session.is_streaming() {
                let message = "Wait for the current response to finish before reloading.";
                if slot.ui().reload_refused(message, false).await {
                    return Ok(Value::Null);
                }
                return Err(message.to_string());
            }
            // `ctx.reload()` resolves to nothing, as in pi.
            slot.ui().reloading(true).await;
            return match host.reload().await {
                Ok(()) => {
                    let notice = "Reloaded keybindings, extensions, skills, prompts, themes, and context files";
                    slot.ui().session_replaced(Some(notice), None).await;
                    Ok(Value::Null)
                }
                Err(e) => {
                    slot.ui().reloading(false).await;
                    let message = format!("Reload failed: {e}");
                    if slot.ui().reload_refused(&message, true).await {
                        return Ok(Value::Null);
                    }
                    Err(e.to_string())
                }
            };
        }
        _ => return Err(format!("`{method}` is not available in this mode yet")),
    };
    match outcome {
        Ok((notice, editor_text)) => {
            slot.ui().session_replaced(notice, editor_text.as_deref()).await;
            Ok(json!({ "cancelled": false }))
        }
        Err(StartupError::Cancelled) => Ok(json!({ "cancelled": true })),
        Err(e) => Err(e.to_string()),
    }
}

/// `setup(sm)` of a `ctx.newSession`: the host runs the callback `id` against the new
/// session (its mirror brought up to date first) and hands back the calls it made, which are
/// applied to the session's store in order; the agent's context then follows the store.
fn setup_in_host(slot: &Arc<ExtensionSlot>, id: u64) -> SessionSetup {
    let slot = Arc::clone(slot);
    Box::new(
        move |session: AgentSession| -> futures::future::BoxFuture<'static, ()> {
            Box::pin(async move {
                let Some(runner) = slot.runner() else { return };
                let mut state = super::startup::session_state(&session, None);
                let (entries, leaf) = session.with_store(|s| {
                    let entries: Vec<Value> = s
                        .get_entries()
                        .iter()
                        .filter_map(|e| serde_json::to_value(e).ok())
                        .collect();
                    (entries, s.get_leaf_id().map(str::to_string))
                });
                state.entries = Some(EntriesDelta {
                    reset: true,
                    append: entries,
                });
                state.leaf_id = leaf;
                let _ = runner.push_state(&state);
                match runner.session_setup(id).await {
                    Ok(answer) => {
                        let calls = answer
                            .get("calls")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default();
                        let problems = apply_setup_calls(&session, &calls);
                        for problem in problems {
                            slot.ui()
                                .report_extension_error("<runtime>", "session_setup", &problem)
                                .await;
                        }
                    }
                    Err(error) => slot.host_failed("session_setup", &error).await,
                }
            })
        },
    )
}

/// What went wrong applying one setup call.
struct SetupProblem(String);

impl From<pi_session::SessionError> for SetupProblem {
    fn from(error: pi_session::SessionError) -> Self {
        SetupProblem(error.to_string())
    }
}

/// Apply the `SessionManager` calls a setup made (`{method, args, id?}` each: `id` is the
/// entry id the host already returned to the extension, which the entry keeps); returns what
/// could not be applied.
fn apply_setup_calls(session: &AgentSession, calls: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    if calls.is_empty() {
        return problems;
    }
    for call in calls {
        let method = call.get("method").and_then(Value::as_str).unwrap_or_default();
        let args = call.get("args").and_then(Value::as_array).cloned().unwrap_or_default();
        let id = call.get("id").and_then(Value::as_str);
        let written = session.with_store(|store| match id {
            Some(id) => store.with_entry_id(id, |store| apply_setup_call(store, method, &args)),
            None => apply_setup_call(store, method, &args),
        });
        if let Err(SetupProblem(problem)) = written {
            problems.push(problem);
        }
    }
    // pi's `refreshContext()`: the conversation follows what setup wrote.
    let context = session.with_store(|s| s.build_context());
    session.agent().replace_messages(context.messages);
    problems
}

/// One `SessionManager` write of a setup.
fn apply_setup_call(store: &mut pi_session::SessionManager, method: &str, args: &[Value]) -> Result<(), SetupProblem> {
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
    let arg_str = |i: usize| args.get(i).and_then(Value::as_str).map(str::to_string);
    let invalid = |e: serde_json::Error| SetupProblem(format!("{method}: {e}"));
    match method {
        "appendMessage" => {
            let message: pi_agent::AgentMessage = serde_json::from_value(arg(0)).map_err(invalid)?;
            store.append_message(message)?;
        }
        "appendCustomEntry" => {
            store.append_custom(&arg_str(0).unwrap_or_default(), Some(arg(1)).filter(|d| !d.is_null()))?;
        }
        "appendCustomMessageEntry" => {
            let content: pi_ai::UserContent = serde_json::from_value(arg(1)).map_err(invalid)?;
            let display = arg(2).as_bool().unwrap_or(true);
            let details = Some(arg(3)).filter(|d| !d.is_null());
            store.append_custom_message(&arg_str(0).unwrap_or_default(), content, display, details)?;
        }
        "appendSessionInfo" => {
            store.append_session_info(&arg_str(0).unwrap_or_default())?;
        }
        "appendLabelChange" => {
            store.append_label(&arg_str(0).unwrap_or_default(), arg_str(1).as_deref())?;
        }
        "appendModelChange" => {
            store.append_model_change(&arg_str(0).unwrap_or_default(), &arg_str(1).unwrap_or_default())?;
        }
        "appendThinkingLevelChange" => {
            store.append_thinking_level_change(&arg_str(0).unwrap_or_default())?;
        }
        other => {
            return Err(SetupProblem(format!(
                "SessionManager.{other} is not available in a setup"
            )))
        }
    }
    Ok(())
}
