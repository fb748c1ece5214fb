//! The RPC backend of a real pi: every command acts on the session host's current
//! AgentSession, and every session event goes out as the same JSON line JSON mode prints.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_ai::{ImageContent, Model, ThinkingLevel};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::backend::{BashDeltaFn, RpcBackend, RpcError, RpcResult};
use super::command_sources::{with_builtin_commands, Sources};
use super::protocol::{QueueMode, StreamingBehavior};
use super::server::{Disposition, Preflight};
use super::types::{
    BashResult, Cancelled, CommandSource, CompactionResult, CycleModelResult, ForkMessage, ForkResult, PromptRequest,
    RpcSessionState, SessionStats, SlashCommand, SourceInfo, SourceOrigin, SourceScope,
};
use crate::modes::output::LineOutput;
use crate::resources::{PackageScope, ResourceScope};
use crate::runtime::StartupError;
use crate::session::{AgentSession, SessionEvent, SessionListener};
use crate::session_host::SessionHost;

/// Session events to the RPC output, in order.
/// A replacement's answer: `cancelled: true` when an extension stopped it.
fn cancelled(result: Result<(), StartupError>) -> RpcResult<Cancelled> {
    match result {
        Ok(()) => Ok(Cancelled { cancelled: false }),
        Err(StartupError::Cancelled) => Ok(Cancelled { cancelled: true }),
        Err(e) => Err(err(e)),
    }
}

struct EventLines(LineOutput);

#[async_trait]
impl SessionListener for EventLines {
    async fn on_event(&self, event: &SessionEvent<'_>) {
        if let Some(line) = event.wire_json() {
            self.0.send_line(line).await;
        }
    }
}

pub struct SessionBackend {
    host: Arc<SessionHost>,
    bash_cancel: Mutex<Option<CancellationToken>>,
}

fn err(e: impl std::fmt::Display) -> RpcError {
    RpcError::new(e.to_string())
}

/// The commands extensions registered, in load order, with where their extension came from
/// as pi 1.6 names it, and those of pi's built-in extensions where pi 1.6 lists them.
fn extension_commands(host: &SessionHost, session: &AgentSession) -> Vec<SlashCommand> {
    let mut listed = Vec::new();
    let settings = crate::session::agent_session::lock(session.settings()).snapshot();
    if let Some(runner) = host.services().extensions().runner() {
        let sources = Sources::new(session.cwd(), &settings);
        let registrations = runner.registrations();
        let registered = registrations.commands();
        // A name two extensions registered is invoked as `name:1`, `name:2`, as pi numbers them.
        let count = |name: &str| registered.iter().filter(|(_, c)| c.name == name).count();
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        listed.extend(registered.iter().map(|(ext, command)| {
            let occurrence = seen.entry(command.name.as_str()).or_default();
            *occurrence += 1;
            let name = if count(&command.name) > 1 {
                format!("{}:{occurrence}", command.name)
            } else {
                command.name.clone()
            };
            SlashCommand {
                name,
                description: command.description.clone().filter(|d| !d.is_empty()),
                source: CommandSource::Extension,
                source_info: sources.of(&ext.path),
            }
        }));
        let taken: Vec<&str> = registered.iter().map(|(_, c)| c.name.as_str()).collect();
        return with_builtin_commands(listed, host.args(), &settings, &taken);
    }
    with_builtin_commands(listed, host.args(), &settings, &[])
}

fn source_info(path: &Path, scope: &ResourceScope, base_dir: Option<&Path>) -> SourceInfo {
    if let ResourceScope::Package(p) = scope {
        return SourceInfo {
            path: path.display().to_string(),
            source: p.source.clone(),
            scope: match p.scope {
                PackageScope::User => SourceScope::User,
                PackageScope::Project => SourceScope::Project,
                PackageScope::Temporary => SourceScope::Temporary,
            },
            origin: SourceOrigin::Package,
            base_dir: Some(p.base_dir.display().to_string()),
        };
    }
    SourceInfo {
        path: path.display().to_string(),
        source: "local".to_string(),
        scope: match scope {
            ResourceScope::User => SourceScope::User,
            ResourceScope::Project => SourceScope::Project,
            ResourceScope::Path | ResourceScope::Package(_) => SourceScope::Temporary,
        },
        origin: SourceOrigin::TopLevel,
        base_dir: base_dir.map(|d| d.display().to_string()),
    }
}

impl SessionBackend {
    /// Bind the host to `output`: events of the current (and every later) session are sent.
    pub fn new(host: Arc<SessionHost>, output: LineOutput) -> Self {
        host.subscribe(Arc::new(EventLines(output)));
        SessionBackend {
            host,
            bash_cancel: Mutex::new(None),
        }
    }

    fn session(&self) -> AgentSession {
        self.host.session()
    }
}

#[async_trait]
impl RpcBackend for SessionBackend {
    async fn prompt(&self, request: PromptRequest, preflight: Preflight) -> RpcResult<()> {
        let session = self.session();
        let images: Vec<ImageContent> = request.images.unwrap_or_default();
        let behavior = request.streaming_behavior.map(|b| match b {
            StreamingBehavior::Steer => crate::session::StreamingBehavior::Steer,
            StreamingBehavior::FollowUp => crate::session::StreamingBehavior::FollowUp,
        });
        // An extension's command runs instead of a prompt, also during a run; pi 1.6 answers
        // once it ran, as handled (its failure is reported as an extension error).
        if let Some(rest) = request.message.strip_prefix('/') {
            let name = rest.split_whitespace().next().unwrap_or_default();
            if extension_commands(&self.host, &session).iter().any(|c| c.name == name) {
                let _ = session.prompt_with(&request.message, images, behavior).await;
                preflight.succeed_with(Disposition::Handled).await;
                return Ok(());
            }
        }
        if session.is_streaming() {
            if behavior.is_none() {
                return Err(RpcError::already_processing());
            }
            session
                .prompt_with(&request.message, images, behavior)
                .await
                .map_err(err)?;
            preflight.succeed_with(Disposition::Queued).await;
            return Ok(());
        }
        // `/mcp` (pi's own, or an extension's) is answered without a run.
        if crate::mcp::plain::command_args(&session, &request.message).is_some() {
            session
                .prompt_with(&request.message, images, behavior)
                .await
                .map_err(err)?;
            preflight.succeed_with(Disposition::Handled).await;
            return Ok(());
        }
        session.check_model().map_err(err)?;
        // A `/skill:` that does not resolve is refused before the client is told the prompt
        // started, as pi's preflight refuses it.
        session.expand_input(&request.message).map_err(err)?;
        preflight.succeed().await;
        // As in pi, failures after preflight reach the client as events (an `error` stop
        // reason), never as a second response to the same command: the result is not needed.
        let _ = session.prompt_with(&request.message, images, behavior).await;
        Ok(())
    }

    async fn steer(&self, message: String, images: Option<Vec<ImageContent>>) -> RpcResult<()> {
        self.session()
            .steer(&message, images.unwrap_or_default())
            .await
            .map_err(err)
    }

    async fn follow_up(&self, message: String, images: Option<Vec<ImageContent>>) -> RpcResult<()> {
        self.session()
            .follow_up(&message, images.unwrap_or_default())
            .await
            .map_err(err)
    }

    async fn abort(&self) -> RpcResult<()> {
        let session = self.session();
        session.abort();
        session.agent().wait_for_idle().await;
        Ok(())
    }

    async fn state(&self) -> RpcResult<RpcSessionState> {
        let s = self.session();
        let (session_file, session_id, session_name) = s.with_store(|st| {
            (
                st.session_file().map(|p| p.display().to_string()),
                st.session_id().to_string(),
                st.session_name().map(str::to_string),
            )
        });
        let queued = s.queued();
        let auto_compaction_enabled = s.settings().lock().map(|st| st.compaction().enabled).unwrap_or(true);
        Ok(RpcSessionState {
            model: s.model(),
            thinking_level: s.thinking_level(),
            is_streaming: s.is_streaming(),
            is_compacting: s.is_compacting(),
            steering_mode: s.agent().steering_mode(),
            follow_up_mode: s.agent().follow_up_mode(),
            session_file,
            session_id,
            session_name,
            auto_compaction_enabled,
            message_count: s.messages().len() as u64,
            pending_message_count: (queued.steering.len() + queued.follow_up.len()) as u64,
        })
    }

    async fn available_models(&self) -> RpcResult<Vec<Model>> {
        Ok(self.session().available_models())
    }

    async fn set_model(&self, model: Model) -> RpcResult<()> {
        self.session().set_model(model).await.map_err(err)
    }

    async fn cycle_model(&self) -> RpcResult<Option<CycleModelResult>> {
        let cycled = self.session().cycle_model(true).await.map_err(err)?;
        Ok(cycled.map(|c| CycleModelResult {
            model: c.model,
            thinking_level: c.thinking_level,
            is_scoped: c.is_scoped,
        }))
    }

    async fn set_thinking_level(&self, level: ThinkingLevel) -> RpcResult<()> {
        self.session().set_thinking_level(level).await;
        Ok(())
    }

    async fn cycle_thinking_level(&self) -> RpcResult<Option<ThinkingLevel>> {
        Ok(self.session().cycle_thinking_level().await)
    }

    // Both modes are saved to settings as pi does, so sessions that replace this one keep them.
    async fn set_steering_mode(&self, mode: QueueMode) -> RpcResult<()> {
        let session = self.session();
        session.agent().set_steering_mode(mode);
        if let Ok(mut s) = session.settings().lock() {
            s.set_steering_mode(mode);
        }
        Ok(())
    }

    async fn set_follow_up_mode(&self, mode: QueueMode) -> RpcResult<()> {
        let session = self.session();
        session.agent().set_follow_up_mode(mode);
        if let Ok(mut s) = session.settings().lock() {
            s.set_follow_up_mode(mode);
        }
        Ok(())
    }

    async fn set_auto_compaction(&self, enabled: bool) -> RpcResult<()> {
        if let Ok(mut s) = self.session().settings().lock() {
            s.set_compaction_enabled(enabled);
        }
        Ok(())
    }

    async fn set_auto_retry(&self, enabled: bool) -> RpcResult<()> {
        if let Ok(mut s) = self.session().settings().lock() {
            s.set_retry_enabled(enabled);
        }
        Ok(())
    }

    async fn abort_retry(&self) -> RpcResult<()> {
        self.session().abort_retry();
        Ok(())
    }

    async fn compact(&self, custom_instructions: Option<String>) -> RpcResult<CompactionResult> {
        let session = self.session();
        let result = session.compact(custom_instructions.as_deref()).await.map_err(err)?;
        Ok(result)
    }

    async fn bash(&self, command: String, mut on_delta: BashDeltaFn) -> RpcResult<BashResult> {
        let cancel = CancellationToken::new();
        if let Ok(mut slot) = self.bash_cancel.lock() {
            *slot = Some(cancel.clone());
        }
        let result = self
            .session()
            .execute_bash(&command, false, cancel, Some(&mut *on_delta))
            .await
            .map_err(err);
        if let Ok(mut slot) = self.bash_cancel.lock() {
            *slot = None;
        }
        result
    }

    async fn abort_bash(&self) -> RpcResult<()> {
        if let Some(cancel) = self.bash_cancel.lock().ok().and_then(|mut s| s.take()) {
            cancel.cancel();
        }
        Ok(())
    }

    async fn session_stats(&self) -> RpcResult<SessionStats> {
        Ok(self.session().session_stats())
    }

    async fn export_html(&self, output_path: Option<String>) -> RpcResult<String> {
        let session = self.session();
        let Some(file) = session.with_store(|s| s.session_file().map(Path::to_path_buf)) else {
            return Err(RpcError::export_in_memory());
        };
        if !file.exists() {
            return Err(RpcError::export_nothing_yet());
        }
        let output = output_path.map(std::path::PathBuf::from);
        // Extension tools' renderers draw their calls in the page, as in pi, in the colours
        // of the theme settings name (pi's global theme outside the terminal UI).
        let runner = session.services().extensions().runner();
        let theme = match runner {
            Some(_) => {
                let session = session.clone();
                tokio::task::spawn_blocking(move || {
                    let paths = crate::config::Paths::new(
                        crate::config::paths::agent_dir(),
                        session.cwd(),
                        crate::config::paths::home_dir(),
                    );
                    crate::extension_theme::startup_theme(&paths, &session)
                })
                .await
                .ok()
            }
            None => None,
        };
        crate::extensions::export_render::export_file(runner, file, output, session.cwd().to_path_buf(), theme)
            .await
            .map(|p| p.display().to_string())
            .map_err(err)
    }

    async fn new_session(&self, _parent_session: Option<String>) -> RpcResult<Cancelled> {
        cancelled(self.host.new_session().await)
    }

    async fn switch_session(&self, session_path: String) -> RpcResult<Cancelled> {
        cancelled(self.host.switch_session(Path::new(&session_path)).await)
    }

    async fn fork(&self, entry_id: String) -> RpcResult<ForkResult> {
        match self.host.fork(&entry_id).await {
            Ok(text) => Ok(ForkResult { text, cancelled: false }),
            Err(StartupError::Cancelled) => Ok(ForkResult {
                text: String::new(),
                cancelled: true,
            }),
            Err(e) => Err(err(e)),
        }
    }

    async fn clone_session(&self) -> RpcResult<Cancelled> {
        if self.session().with_store(|s| s.get_leaf_id().is_none()) {
            return Err(RpcError::clone_without_leaf());
        }
        cancelled(self.host.clone_session().await)
    }

    async fn fork_messages(&self) -> RpcResult<Vec<ForkMessage>> {
        Ok(self
            .host
            .fork_points()
            .into_iter()
            .map(|p| ForkMessage {
                entry_id: p.entry_id,
                text: p.text,
            })
            .collect())
    }

    async fn last_assistant_text(&self) -> RpcResult<Option<String>> {
        Ok(self.session().last_assistant_text())
    }

    async fn set_session_name(&self, name: String) -> RpcResult<()> {
        self.session().set_session_name(&name).await.map_err(err)
    }

    async fn messages(&self) -> RpcResult<Vec<Value>> {
        // Serialized straight from the agent's transcript: no copy of the messages first.
        Ok(self.session().with_messages(|messages| {
            messages
                .iter()
                .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
                .collect()
        }))
    }

    async fn clear_queue(&self) -> RpcResult<(Vec<String>, Vec<String>)> {
        let taken = self.session().clear_queue().await;
        Ok((taken.steering, taken.follow_up))
    }

    async fn available_thinking_levels(&self) -> RpcResult<Vec<ThinkingLevel>> {
        Ok(self.session().available_thinking_levels())
    }

    async fn entries(&self, since: Option<String>) -> RpcResult<(Vec<Value>, Option<String>)> {
        self.session().with_store(|s| {
            let all = s.get_entries();
            let from = match &since {
                None => 0,
                Some(id) => match all.iter().position(|e| &e.id == id) {
                    Some(i) => i + 1,
                    None => return Err(RpcError::new(format!("Entry not found: {id}"))),
                },
            };
            let entries = all[from..]
                .iter()
                .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
                .collect();
            Ok((entries, s.get_leaf_id().map(str::to_string)))
        })
    }

    async fn tree(&self) -> RpcResult<(Vec<Value>, Option<String>)> {
        self.session().with_store(|s| {
            let tree = s.get_tree();
            // Depth-first with an explicit stack: a long session is one deep chain.
            fn node(tree: &pi_session::SessionTree<'_>, i: usize) -> Value {
                let mut built: Vec<Option<Value>> = vec![None; tree.nodes.len()];
                let mut stack = vec![(i, false)];
                while let Some((n, expanded)) = stack.pop() {
                    let children = &tree.nodes[n].children;
                    if !expanded {
                        stack.push((n, true));
                        stack.extend(children.iter().rev().map(|&c| (c, false)));
                        continue;
                    }
                    let t = &tree.nodes[n];
                    let mut v = serde_json::json!({
                        "entry": serde_json::to_value(t.entry).unwrap_or(Value::Null),
                        "children": children.iter().map(|&c| built[c].take().unwrap_or(Value::Null)).collect::<Vec<_>>(),
                    });
                    if let Some(label) = t.label {
                        v["label"] = Value::from(label);
                    }
                    if let Some(ts) = t.label_timestamp {
                        v["labelTimestamp"] = Value::from(ts);
                    }
                    built[n] = Some(v);
                }
                built[i].take().unwrap_or(Value::Null)
            }
            let roots = tree.roots.iter().map(|&r| node(&tree, r)).collect();
            Ok((roots, s.get_leaf_id().map(str::to_string)))
        })
    }

    async fn commands(&self) -> RpcResult<Vec<SlashCommand>> {
        let session = self.session();
        let resources = session.resources();
        let mut commands = extension_commands(&self.host, &session);
        commands.extend(resources.templates().iter().map(|t| SlashCommand {
            name: t.name.clone(),
            description: (!t.description.is_empty()).then(|| t.description.clone()),
            source: CommandSource::Prompt,
            source_info: source_info(&t.file_path, &t.scope, None),
        }));
        commands.extend(resources.skills().iter().map(|s| SlashCommand {
            name: format!("skill:{}", s.name),
            description: (!s.description.is_empty()).then(|| s.description.clone()),
            source: CommandSource::Skill,
            source_info: source_info(&s.file_path, &s.scope, Some(&s.base_dir)),
        }));
        Ok(commands)
    }

    fn shutdown_requested(&self) -> bool {
        self.host.services().extensions().shutdown_requested()
    }

    async fn shutdown_wanted(&self) {
        self.host.services().extensions().shutdown_wanted().await
    }

    async fn shutdown(&self) {
        let session = self.session();
        session.abort();
        session.agent().wait_for_idle().await;
        // `session_shutdown` runs while the output is still open: what its handlers ask of
        // the UI (a last title, a notice) reaches the client, as in pi 1.6.
        crate::extensions::startup::shutdown(self.host.services().extensions()).await;
    }
}
