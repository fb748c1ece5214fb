//! AgentSession: the agent loop joined with the session file, the model registry, the settings
//! and the resources. Every mode (print, JSON, RPC, interactive) drives one of these.
//!
//! Event flow: the agent awaits its listeners in order; the session's own listener persists
//! `message_end` messages, keeps the retry bookkeeping, then hands the event to the session's
//! listeners (the mode's writer) before the agent goes on. A slow consumer therefore slows the
//! run instead of piling events up in memory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use async_trait::async_trait;
use pi_agent::{Agent, AgentEvent, AgentListener, AgentMessage, AgentTool};
use pi_ai::{
    AssistantMessage, Content, ImageContent, Message, Model, StopReason, ThinkingLevel, UserContent, UserMessage,
};
use pi_session::SessionManager;
use tokio_util::sync::CancellationToken;

use super::events::SessionEvent;
use super::retry::{is_retryable_error, retry_delay_ms, MAX_AGENT_RETRY_DELAY_MS};
use crate::config::paths::DocsPaths;
use crate::config::settings::SettingsManager;
use crate::config::ModelRegistry;
use crate::resources::loader::Resources;
use crate::resources::prompt_templates::expand_prompt_template;
use crate::resources::skills::expand_skill_command;

/// Receives every event of a session, awaited in order.
#[async_trait]
pub trait SessionListener: Send + Sync {
    async fn on_event(&self, event: &SessionEvent<'_>);
}

/// Why a session operation (a prompt, a model change, a compaction, a tree move, a user shell
/// command) could not be done; each text is the one pi shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No model is selected; `hint` says how to log in.
    #[error("No model selected.\n\n{hint}\n\nThen use /model to select a model.")]
    NoModel { hint: String },
    /// The selected model's provider has no credentials.
    #[error("No API key found for {provider}.\n\n{hint}")]
    NoApiKey { provider: String, hint: String },
    /// A switch to a model whose provider has no credentials.
    #[error("No API key for {provider}/{model}")]
    ModelWithoutKey { provider: String, model: String },
    /// A prompt during a run that does not say how to queue it.
    #[error("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")]
    Busy,
    /// A `/skill:name` command that does not resolve.
    #[error("{0}")]
    Skill(String),
    /// The session file could not be written.
    #[error("{0}")]
    Session(String),
    /// The agent refused to start the run.
    #[error("{0}")]
    Agent(String),
    /// A tree move to an entry the session does not have.
    #[error("Entry {0} not found")]
    EntryNotFound(String),
    /// A branch summary was asked for without a model.
    #[error("No model available for summarization")]
    NoSummaryModel,
    /// A compaction or a branch summary failed.
    #[error("{0}")]
    Summary(String),
    /// A user shell command could not run.
    #[error("{0}")]
    Bash(String),
    /// An extension's command failed.
    #[error("{0}")]
    Command(String),
}

impl From<pi_session::SessionError> for PromptError {
    fn from(e: pi_session::SessionError) -> Self {
        PromptError::Session(e.to_string())
    }
}

/// Everything a session is built from.
pub struct AgentSessionParts {
    pub cwd: PathBuf,
    pub agent: Agent,
    pub store: SessionManager,
    pub registry: Arc<Mutex<ModelRegistry>>,
    pub settings: Arc<Mutex<SettingsManager>>,
    pub resources: Arc<Resources>,
    pub docs: DocsPaths,
    /// `None` until a model is chosen (the agent then holds a placeholder).
    pub model: Option<Model>,
    /// The tool registry and the system prompt built from it.
    pub loadout: Arc<super::loadout::Loadout>,
    /// What outlives this session (kept by new / resume / fork / clone).
    pub services: Arc<crate::services::Services>,
}

struct RetryState {
    attempt: u32,
    /// Cancels the wait between attempts.
    cancel: Option<CancellationToken>,
}

pub(crate) struct Inner {
    pub(crate) cwd: PathBuf,
    pub(crate) agent: Agent,
    pub(crate) store: Mutex<SessionManager>,
    pub(crate) registry: Arc<Mutex<ModelRegistry>>,
    pub(crate) settings: Arc<Mutex<SettingsManager>>,
    pub(crate) resources: Arc<Resources>,
    pub(crate) docs: DocsPaths,
    pub(crate) services: Arc<crate::services::Services>,
    pub(crate) model: Mutex<Option<Model>>,
    listeners: Mutex<Vec<Arc<dyn SessionListener>>>,
    retry: Mutex<RetryState>,
    /// The first failure to write the session file (reported by the modes).
    pub(crate) persist_error: Mutex<Option<String>>,
    /// Texts of queued steering / follow-up messages, for display (`queue_update`).
    pub(crate) queued: Mutex<super::queue::QueuedTexts>,
    /// Scoped models (`--models`) for cycling.
    pub(crate) scoped_models: Mutex<Vec<crate::config::model_resolver::ScopedModel>>,
    /// Messages that finished or arrived during a run (user shell commands, extension messages
    /// sent without a turn), recorded when it ends.
    pub(crate) held_messages: Mutex<Vec<AgentMessage>>,
    /// Messages extensions sent for the next run (`deliverAs: "nextTurn"`), attached after
    /// the message that starts it.
    pub(crate) next_turn: Mutex<Vec<AgentMessage>>,
    pub(crate) compaction_cancel: Mutex<Option<CancellationToken>>,
    pub(crate) compacting: std::sync::atomic::AtomicBool,
    /// The run between its start and `agent_settled`, and whether an abort came meanwhile.
    pub(crate) run: super::run_state::RunState,
    /// This user prompt already had its one compact-and-retry after an overflow.
    pub(crate) overflow_recovery_attempted: std::sync::atomic::AtomicBool,
    extensions: Mutex<Arc<dyn super::extensions::SessionExtensions>>,
    /// The `PI_*` variables bash commands see, refreshed before each run.
    session_env: Mutex<Option<pi_tools::SessionEnv>>,
    /// The tools and the system prompt built from them; a `before_agent_start` override lasts
    /// one prompt, and the next prompt without one goes back to the built prompt.
    pub(crate) loadout: Arc<super::loadout::Loadout>,
    /// Keeps the provider's prompt cache of the last request warm (`cacheWarming`).
    pub(crate) cache_warmer: super::cache_warmer::CacheWarmer,
}

/// A running session. Cloning gives another handle to the same session.
#[derive(Clone)]
pub struct AgentSession {
    pub(crate) inner: Arc<Inner>,
}

/// A poisoned lock only means a panic elsewhere; the data is still consistent enough to use.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A user message of text followed by images, stamped now.
pub(crate) fn user_message(text: String, images: Vec<ImageContent>) -> AgentMessage {
    let mut content = vec![Content::text(text)];
    content.extend(images.into_iter().map(Content::Image));
    AgentMessage::Llm(Message::User(Arc::new(UserMessage {
        content: UserContent::Blocks(content),
        timestamp: pi_ai::now_ms(),
        extra: Default::default(),
    })))
}

/// The agent listener that ties the agent to the session.
struct Bridge(Weak<Inner>);

#[async_trait]
impl AgentListener for Bridge {
    async fn on_event(&self, event: &AgentEvent, _cancel: &CancellationToken) {
        let Some(inner) = self.0.upgrade() else { return };
        let session = AgentSession { inner };
        session.handle_agent_event(event).await;
    }
}

impl AgentSession {
    pub fn new(parts: AgentSessionParts) -> Self {
        let session_id = parts.store.session_id().to_string();
        parts
            .agent
            .update_stream_options(|o| o.session_id = Some(session_id.clone()));
        let inner = Arc::new(Inner {
            loadout: parts.loadout,
            cwd: parts.cwd,
            agent: parts.agent,
            store: Mutex::new(parts.store),
            registry: parts.registry,
            settings: parts.settings,
            resources: parts.resources,
            docs: parts.docs,
            services: parts.services,
            model: Mutex::new(parts.model),
            listeners: Mutex::new(Vec::new()),
            retry: Mutex::new(RetryState {
                attempt: 0,
                cancel: None,
            }),
            persist_error: Mutex::new(None),
            queued: Mutex::new(Default::default()),
            scoped_models: Mutex::new(Vec::new()),
            held_messages: Mutex::new(Vec::new()),
            next_turn: Mutex::new(Vec::new()),
            compaction_cancel: Mutex::new(None),
            compacting: Default::default(),
            run: Default::default(),
            overflow_recovery_attempted: Default::default(),
            extensions: Mutex::new(Arc::new(super::extensions::NoExtensions)),
            session_env: Mutex::new(None),
            cache_warmer: Default::default(),
        });
        inner.agent.subscribe(Arc::new(Bridge(Arc::downgrade(&inner))));
        inner.agent.set_stream_fn(super::cache_warmer::warming_stream_fn(
            inner.agent.stream_fn(),
            Arc::downgrade(&inner),
            session_id,
        ));
        AgentSession { inner }
    }

    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    pub fn model(&self) -> Option<Model> {
        lock(&self.inner.model).clone()
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        self.inner.agent.thinking_level()
    }

    pub fn subscribe(&self, listener: Arc<dyn SessionListener>) {
        lock(&self.inner.listeners).push(listener);
    }

    /// Run `f` with the session store.
    pub fn with_store<R>(&self, f: impl FnOnce(&mut SessionManager) -> R) -> R {
        f(&mut lock(&self.inner.store))
    }

    /// The session header as pi writes it (line 1 of the file and of JSON mode).
    pub fn header_json(&self) -> String {
        self.with_store(|s| serde_json::to_string(s.header()).unwrap_or_default())
    }

    pub fn persist_error(&self) -> Option<String> {
        lock(&self.inner.persist_error).clone()
    }

    pub fn is_streaming(&self) -> bool {
        self.inner.agent.is_streaming()
    }

    pub fn messages(&self) -> Vec<AgentMessage> {
        self.inner.agent.messages()
    }

    /// Read the transcript without copying it (the agent's state is locked meanwhile: do not
    /// call back into the session from `f`).
    pub fn with_messages<R>(&self, f: impl FnOnce(&[AgentMessage]) -> R) -> R {
        self.inner.agent.with_messages(f)
    }

    /// The last assistant message of the transcript, if the transcript ends with one.
    pub fn last_assistant(&self) -> Option<AssistantMessage> {
        self.inner
            .agent
            .with_messages(|m| m.last().and_then(AgentMessage::as_assistant).cloned())
    }

    /// The text of the most recent assistant message (pi's `getLastAssistantText`).
    pub fn last_assistant_text(&self) -> Option<String> {
        self.inner.agent.with_messages(|messages| {
            messages
                .iter()
                .rev()
                .filter_map(AgentMessage::as_assistant)
                .find(|a| a.stop_reason != StopReason::Aborted || !a.content.is_empty())
                .map(AssistantMessage::text)
        })
    }

    /// The one dispatch point of the session's events: the extensions observe each first (as
    /// pi 1.6 awaits its extension handlers before the session's listeners), then the mode's
    /// listeners, in order.
    pub(crate) async fn emit(&self, event: SessionEvent<'_>) {
        let extensions = self.extensions();
        extensions.observe(&event).await;
        let listeners: Vec<Arc<dyn SessionListener>> = lock(&self.inner.listeners).clone();
        for l in listeners {
            l.on_event(&event).await;
        }
    }

    async fn handle_agent_event(&self, event: &AgentEvent) {
        if let AgentEvent::MessageEnd { message } = event {
            self.persist(message);
        }
        if let AgentEvent::AgentEnd { messages, .. } = event {
            // The loop cannot know whether a retry follows; the session says so (pi 1.6).
            if self.next_retry().is_some() {
                let retrying = AgentEvent::AgentEnd {
                    messages: messages.clone(),
                    will_retry: true,
                };
                self.emit(SessionEvent::Agent(&retrying)).await;
                return;
            }
        }
        self.emit(SessionEvent::Agent(event)).await;
        if let AgentEvent::MessageStart {
            message: AgentMessage::Llm(Message::User(user)),
        } = event
        {
            self.dequeue_delivered(&user.content.text()).await;
        }
        if let AgentEvent::MessageEnd {
            message: AgentMessage::Llm(Message::Assistant(a)),
        } = event
        {
            let finished_retry = {
                let mut retry = lock(&self.inner.retry);
                let attempt = retry.attempt;
                if attempt > 0 && a.stop_reason != StopReason::Error {
                    retry.attempt = 0;
                    Some(attempt)
                } else {
                    None
                }
            };
            if let Some(attempt) = finished_retry {
                self.emit(SessionEvent::AutoRetryEnd {
                    success: true,
                    attempt,
                    final_error: None,
                })
                .await;
            }
        }
    }

    fn persist(&self, message: &AgentMessage) {
        let stored = message.clone();
        let result = self.with_store(|s| s.append_message(stored));
        if let Err(e) = result {
            let mut slot = lock(&self.inner.persist_error);
            if slot.is_none() {
                *slot = Some(e.to_string());
            }
        }
    }

    /// Add the skills, prompt templates and themes extensions discovered; the next prompt's
    /// system prompt lists the new skills. Returns the load's diagnostics.
    pub fn add_discovered_resources(
        &self,
        found: crate::resources::loader::DiscoveredPaths,
    ) -> Vec<crate::resources::Diagnostic> {
        let paths = crate::config::paths::Paths::for_cwd(&self.inner.cwd);
        let diagnostics = self.inner.resources.add_discovered(&paths, found);
        self.inner.loadout.invalidate();
        diagnostics
    }

    /// Expand `/skill:name` and prompt templates as pi does before a prompt is sent.
    pub fn expand_input(&self, text: &str) -> Result<String, PromptError> {
        let skills = self.inner.resources.skills();
        let text = match expand_skill_command(text, &skills) {
            Ok(Some(expanded)) => expanded,
            Ok(None) => text.to_string(),
            Err(e) => return Err(PromptError::Skill(e)),
        };
        Ok(expand_prompt_template(&text, &self.inner.resources.templates()))
    }

    fn docs_hint(&self) -> String {
        let docs = &self.inner.docs.docs;
        format!(
            "Use /login to log into a provider via OAuth or API key. See:\n  {}\n  {}",
            docs.join("providers.md").display(),
            docs.join("models.md").display()
        )
    }

    /// pi's checks before a prompt: a model is selected and its provider has credentials.
    pub(crate) fn check_model(&self) -> Result<Model, PromptError> {
        let Some(model) = self.model() else {
            return Err(PromptError::NoModel { hint: self.docs_hint() });
        };
        let has_auth = lock(&self.inner.registry).has_configured_auth(&model);
        if !has_auth {
            return Err(PromptError::NoApiKey {
                provider: model.provider.clone(),
                hint: self.docs_hint(),
            });
        }
        Ok(model)
    }

    /// Give bash commands this session's `PI_*` variables through `env` (pi 1.6).
    pub fn expose_session_env(&self, env: pi_tools::SessionEnv) {
        *lock(&self.inner.session_env) = Some(env);
        self.refresh_session_env();
    }

    /// Write the session id and file, provider, model and reasoning level as they are now.
    pub(crate) fn refresh_session_env(&self) {
        let Some(env) = lock(&self.inner.session_env).clone() else {
            return;
        };
        let (id, file) = self.with_store(|s| {
            (
                s.session_id().to_string(),
                s.session_file().map(|p| p.display().to_string()),
            )
        });
        let mut vars = vec![("PI_SESSION_ID".to_string(), id)];
        vars.extend(file.map(|f| ("PI_SESSION_FILE".to_string(), f)));
        if let Some(m) = self.model() {
            vars.push(("PI_PROVIDER".to_string(), m.provider.clone()));
            vars.push(("PI_MODEL".to_string(), m.id.clone()));
        }
        vars.push((
            "PI_REASONING_LEVEL".to_string(),
            self.thinking_level().as_str().to_string(),
        ));
        *lock(&env) = vars;
    }

    /// Send a user prompt and run the agent until it is done, including automatic retries.
    pub async fn prompt(&self, text: &str, images: Vec<ImageContent>) -> Result<(), PromptError> {
        self.prompt_with(text, images, None).await
    }

    /// [`Self::prompt`]; while a run is active, `behavior` says whether the text steers the run
    /// or follows it up (without one, a prompt during a run is an error, as in pi).
    pub async fn prompt_with(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        behavior: Option<super::queue::StreamingBehavior>,
    ) -> Result<(), PromptError> {
        let extensions = self.extensions();
        // 1. A command registered by an extension runs instead of a prompt.
        if let Some(rest) = text.strip_prefix('/') {
            let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if let Some(outcome) = extensions.run_command(name, args.trim()).await {
                return outcome.map_err(PromptError::Command);
            }
        }
        // pi's own `/mcp`, when no extension took the name.
        if let Some(args) = crate::mcp::plain::command_args(self, text) {
            crate::mcp::plain::run(self, args).await;
            return Ok(());
        }
        // 2. The input hook may rewrite or swallow the text.
        let text = match extensions.on_input(text).await {
            super::extensions::InputAction::Continue => text.to_string(),
            super::extensions::InputAction::Transform(t) => t,
            super::extensions::InputAction::Handled => return Ok(()),
        };
        let text = text.as_str();
        let expanded = self.expand_input(text)?;
        if self.is_streaming() {
            return match behavior {
                Some(b) => self.enqueue(b, expanded, images).await,
                None => Err(PromptError::Busy),
            };
        }
        let first = user_message(expanded.clone(), images);
        self.start_run(first, &expanded).await
    }

    /// Start a run with `first` (a user message, or a custom message an extension sent) and
    /// see it through: checks, compaction, `before_agent_start` (given `prompt_text`), the
    /// messages held for the next turn, retries, and `agent_settled`.
    pub(crate) async fn start_run(&self, first: AgentMessage, prompt_text: &str) -> Result<(), PromptError> {
        // Active until this returns, whichever way: a manual compaction waits for that.
        let _active = self.inner.run.begin();
        let extensions = self.extensions();
        self.flush_held_messages();
        self.check_model()?;
        self.refresh_session_env();
        self.compact_if_needed(false).await;
        // The first prompt waits a bounded time for MCP servers whose tools it declares.
        crate::mcp::before_prompt(self.services()).await;
        // `before_agent_start` sees the prompt and its inputs as the registry holds them now (a
        // tool added since the last prompt is in them) and may edit them for this run.
        let options = if extensions.handles("before_agent_start") {
            self.inner.loadout.prompt_options()
        } else {
            serde_json::Value::Null
        };
        let base_prompt = self.inner.loadout.system_prompt();
        let before = extensions.before_agent_start(prompt_text, &base_prompt, &options).await;
        let forced = match &before.options {
            Some(edited) => self.apply_prompt_edits(&options, edited),
            None => {
                self.inner.loadout.set_edits(Default::default());
                None
            }
        };
        let override_prompt = before.system_prompt.or(forced);
        let loadout = self.inner.loadout.current();
        // pi 1.6 records the loadout the model is given: a system message ahead of the first
        // message whenever the sections or tools differ from what the transcript declares.
        let declared = self.inner.agent.with_messages(|m| {
            super::system_message::declare_changes(m, &loadout.sections, &loadout.tools, pi_ai::now_ms())
        });
        self.inner.agent.set_tools(loadout.tools);
        // As pi: the override is for this prompt only (the transcript keeps the sections).
        self.inner.loadout.set_prompt_overridden(override_prompt.is_some());
        let system_prompt = override_prompt.unwrap_or(loadout.system_prompt);
        self.inner.agent.set_system_prompt(system_prompt);
        let mut messages: Vec<AgentMessage> = declared.into_iter().collect();
        messages.push(first);
        messages.append(&mut lock(&self.inner.next_turn));
        messages.extend(before.messages);
        self.inner
            .agent
            .prompt_messages(messages)
            .await
            .map_err(|e| PromptError::Agent(e.to_string()))?;
        self.retry_until_settled().await;
        self.compact_if_needed(true).await;
        self.flush_held_messages();
        // `agent_before_settle` may ask for more; each continuation settles the same way.
        while self.before_settle().await {
            if self.inner.agent.continue_run().await.is_err() {
                break;
            }
            self.retry_until_settled().await;
            self.compact_if_needed(true).await;
            self.flush_held_messages();
        }
        // The run's prompt edits end with it; the next run's handlers make their own.
        self.inner.loadout.set_edits(Default::default());
        self.emit_settled().await;
        Ok(())
    }

    /// Apply what `before_agent_start` handlers changed in `systemPromptOptions` (`base` as
    /// they were given it): the sections, guidelines and addendum for this run, the selected
    /// tools to the registry (as pi 1.6's loadout does). Returns a forced prompt, if one was set.
    fn apply_prompt_edits(&self, base: &serde_json::Value, edited: &serde_json::Value) -> Option<String> {
        let edits = super::prompt_edits::edits_of(base, edited);
        if let Some(names) = &edits.selected_tools {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            self.inner.loadout.registry().set_active(&names);
        }
        self.inner.loadout.set_edits(edits.prompt);
        edits.force
    }

    /// `agent_settled`: the prompt, its retries and recovery are over.
    pub(crate) async fn emit_settled(&self) {
        let aborted = self.inner.run.abort_requested()
            || self
                .last_assistant()
                .is_some_and(|a| a.stop_reason == StopReason::Aborted);
        self.emit(SessionEvent::AgentSettled { aborted }).await;
        let mode = lock(&self.inner.settings).cache_warming_mode();
        self.inner.cache_warmer.on_agent_settled(mode);
    }

    /// When the transcript ends in a failure an automatic retry will take on: its error text,
    /// attempt number (1-based), the attempts allowed and the delay before it.
    fn next_retry(&self) -> Option<(String, u32, u32, u64)> {
        let last = self.last_assistant()?;
        if last.stop_reason != StopReason::Error {
            return None;
        }
        let error_text = last.error_message.clone().unwrap_or_default();
        let context_window = self.model().map(|m| m.context_window);
        if pi_ai::is_context_overflow(&last, context_window) {
            return None;
        }
        let retry = lock(&self.inner.settings).retry();
        if !retry.enabled || !is_retryable_error(&error_text) {
            return None;
        }
        let attempt = lock(&self.inner.retry).attempt + 1;
        if attempt > retry.max_retries {
            return None;
        }
        let delay_ms = retry_delay_ms(retry.base_delay_ms, attempt).min(MAX_AGENT_RETRY_DELAY_MS);
        Some((error_text, attempt, retry.max_retries, delay_ms))
    }

    /// Leave the failed reply at the end of the transcript out of the context: in the session
    /// a `context_edit` (announced as `entry_appended`), in the agent's messages it goes.
    pub(crate) async fn omit_failed_reply(&self) {
        let edit = self.with_store(|s| {
            let target = s
                .find_message_entry(|m| m.as_assistant().is_some_and(|a| a.stop_reason == StopReason::Error))?
                .to_string();
            Some(s.append_context_edit(&target, None))
        });
        match edit {
            Some(Ok(entry)) => {
                let value = serde_json::to_value(&entry).unwrap_or_default();
                self.emit(SessionEvent::EntryAppended { entry: value }).await;
            }
            Some(Err(e)) => {
                lock(&self.inner.persist_error).get_or_insert(e.to_string());
            }
            None => {}
        }
        let mut messages = self.inner.agent.messages();
        messages.pop();
        self.inner.agent.replace_messages(messages);
    }

    /// Cancel a pending automatic retry (the failed reply stays the last message).
    pub fn abort_retry(&self) {
        if let Some(cancel) = lock(&self.inner.retry).cancel.take() {
            cancel.cancel();
        }
    }

    /// Stop the current run and any retry wait.
    pub fn abort(&self) {
        self.inner.run.request_abort();
        if let Some(cancel) = lock(&self.inner.retry).cancel.take() {
            cancel.cancel();
        }
        self.inner.agent.abort();
    }

    /// After a run: retry transient provider errors with exponential backoff (pi's session-level
    /// auto-retry). The failed reply is omitted from the context by a `context_edit` and stays
    /// in the session file; the retry continues the transcript without resending the prompt.
    async fn retry_until_settled(&self) {
        loop {
            let Some((error_text, attempt, max_attempts, delay_ms)) = self.next_retry() else {
                let failed_attempts = {
                    let mut state = lock(&self.inner.retry);
                    std::mem::take(&mut state.attempt)
                };
                let still_failing = self
                    .last_assistant()
                    .is_some_and(|a| a.stop_reason == StopReason::Error);
                if failed_attempts > 0 && still_failing {
                    let final_error = self.last_assistant().and_then(|a| a.error_message);
                    self.emit(SessionEvent::AutoRetryEnd {
                        success: false,
                        attempt: failed_attempts,
                        final_error,
                    })
                    .await;
                }
                return;
            };
            let cancel = {
                let mut state = lock(&self.inner.retry);
                state.attempt = attempt;
                let cancel = CancellationToken::new();
                state.cancel = Some(cancel.clone());
                cancel
            };
            self.emit(SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message: error_text,
            })
            .await;
            self.omit_failed_reply().await;
            let cancelled = tokio::select! {
                _ = cancel.cancelled() => true,
                _ = tokio::time::sleep(std::time::Duration::from_millis(delay_ms)) => false,
            };
            if cancelled {
                lock(&self.inner.retry).attempt = 0;
                self.emit(SessionEvent::AutoRetryEnd {
                    success: false,
                    attempt,
                    final_error: Some("Retry cancelled".to_string()),
                })
                .await;
                return;
            }
            if self.inner.agent.continue_run().await.is_err() {
                return;
            }
        }
    }

    /// Switch the model, recorded in the session (pi 1.6 leaves the settings' defaults alone).
    /// The thinking level comes from `modelThinkingLevels["provider/id"]`, else the
    /// `defaultThinkingLevel` setting, else the current level; it is clamped to the new model,
    /// and a change is recorded and announced (`thinking_level_changed`).
    pub async fn set_model(&self, model: Model) -> Result<(), PromptError> {
        self.select_model(model, "set").await
    }

    /// [`Self::set_model`], telling extensions why (`model_select`'s `source`: `set`, `cycle`).
    pub(crate) async fn select_model(&self, model: Model, source: &'static str) -> Result<(), PromptError> {
        if !lock(&self.inner.registry).has_configured_auth(&model) {
            return Err(PromptError::ModelWithoutKey {
                provider: model.provider.clone(),
                model: model.id.clone(),
            });
        }
        let wanted = {
            let settings = lock(&self.inner.settings);
            let key = format!("{}/{}", model.provider, model.id);
            settings
                .get("modelThinkingLevels")
                .and_then(|levels| levels.get(&key))
                .and_then(serde_json::Value::as_str)
                .and_then(ThinkingLevel::parse)
                .or_else(|| settings.default_thinking_level())
        }
        .unwrap_or_else(|| self.thinking_level());
        self.record_model(&model);
        self.inner.agent.set_model(model.clone());
        let previous = lock(&self.inner.model).replace(model.clone());
        if previous.as_ref().is_none_or(|p| !p.same_as(&model)) {
            self.emit(SessionEvent::ModelSelected {
                model: &model,
                previous: previous.as_ref(),
                source,
            })
            .await;
        }
        self.set_thinking_level(wanted).await;
        Ok(())
    }

    fn record_model(&self, model: &Model) {
        let result = self.with_store(|s| s.append_model_change(&model.provider, &model.id));
        if let Err(e) = result {
            lock(&self.inner.persist_error).get_or_insert(e.to_string());
        }
    }

    /// Use `model` without the auth check (startup and restore), optionally recording it.
    pub fn apply_model(&self, model: Model, record: bool) {
        if record {
            self.record_model(&model);
        }
        self.inner.agent.set_model(model.clone());
        *lock(&self.inner.model) = Some(model);
        let level = self.thinking_level();
        self.set_thinking_level_inner(level, false);
    }

    /// Set the thinking level (clamped to the model). Returns the level in effect.
    pub async fn set_thinking_level(&self, level: ThinkingLevel) -> ThinkingLevel {
        let before = self.thinking_level();
        let applied = self.set_thinking_level_inner(level, true);
        if applied != before {
            self.emit(SessionEvent::ThinkingLevelChanged {
                level: applied.as_str().to_string(),
                previous: before.as_str().to_string(),
            })
            .await;
        }
        applied
    }

    fn set_thinking_level_inner(&self, level: ThinkingLevel, record: bool) -> ThinkingLevel {
        let clamped = match self.model() {
            Some(m) => pi_ai::thinking::clamp_thinking_level(&m, level),
            None => level,
        };
        let changed = clamped != self.thinking_level();
        self.inner.agent.set_thinking_level(clamped);
        if record && changed {
            // pi 1.6: recorded in the session only; the settings' default is not rewritten.
            let result = self.with_store(|s| s.append_thinking_level_change(clamped.as_str()));
            if let Err(e) = result {
                lock(&self.inner.persist_error).get_or_insert(e.to_string());
            }
        }
        clamped
    }

    /// Record the starting model and thinking level of a new session (pi writes both).
    pub fn record_initial_state(&self) {
        let model = self.model();
        let level = self.thinking_level();
        self.with_store(|s| {
            if let Some(m) = &model {
                let _ = s.append_model_change(&m.provider, &m.id);
            }
            let _ = s.append_thinking_level_change(level.as_str());
        });
    }

    /// The tools the agent runs with.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.inner.agent.tools()
    }

    /// The registry of every tool this session knows (built-in, extension, MCP, codemode);
    /// changes reach the next request.
    pub fn tool_registry(&self) -> &Arc<pi_agent::ToolRegistry> {
        self.inner.loadout.registry()
    }

    /// Set the session's display name (`session_info`).
    pub async fn set_session_name(&self, name: &str) -> Result<(), PromptError> {
        self.with_store(|s| s.append_session_info(name))?;
        self.emit(SessionEvent::SessionInfoChanged { name: name.to_string() })
            .await;
        Ok(())
    }

    /// The settings (shared with the rest of the runtime).
    pub fn settings(&self) -> &Arc<Mutex<SettingsManager>> {
        &self.inner.settings
    }

    pub fn registry(&self) -> &Arc<Mutex<ModelRegistry>> {
        &self.inner.registry
    }

    /// The extension hooks in use now.
    pub(crate) fn extensions(&self) -> Arc<dyn super::extensions::SessionExtensions> {
        lock(&self.inner.extensions).clone()
    }

    /// Install the extension host's hooks.
    pub fn set_extensions(&self, extensions: Arc<dyn super::extensions::SessionExtensions>) {
        *lock(&self.inner.extensions) = extensions;
    }

    /// Skills, prompt templates and context files of this session.
    pub fn resources(&self) -> &Resources {
        &self.inner.resources
    }

    /// The services this session shares with the ones that replace it.
    pub fn services(&self) -> &Arc<crate::services::Services> {
        &self.inner.services
    }
}
