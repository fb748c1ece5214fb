//! The stateful agent: transcript and settings, runs (prompt, continue, abort), the steering and
//! follow-up queues, and event delivery to listeners.
//!
//! Event delivery: a run reports each event by first mirroring it into the agent's state and
//! then awaiting every listener in subscription order, one event at a time. Nothing is buffered:
//! a listener that waits (a JSON writer on a full pipe, a session store flushing on
//! `message_end`) holds the run at that point, so memory stays flat and order is total. A
//! listener that wants to hand events to another task uses a bounded channel and
//! [`AgentEvent::detach`]. Listeners are not interrupted by `abort`; they must return.
//!
//! Runs execute inside the future that `prompt`/`continue_run` return; no task is spawned. The
//! run is registered when the method is called (so `abort` and `steer` reach it at once), and
//! dropping the future ends it where it stands and returns the agent to idle.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_ai::{
    now_ms, AssistantMessage, Content, Message, Model, ModelCost, StopReason, StreamFn, StreamOptions, ThinkingLevel,
    UserContent, UserMessage,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{run_agent_loop, run_agent_loop_continue, EventSink, LoopConfig, QueuePoll};
use crate::batch::ToolExecution;
use crate::context::AgentContext;
use crate::event::{lock, AgentEvent, StreamingMessage};
use crate::hooks::{AgentHooks, HookError, NoHooks};
use crate::message::AgentMessage;
use crate::queue::{PendingQueue, QueueMode};
use crate::tool::AgentTool;

/// Why `prompt` or `continue_run` refused to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    #[error(
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    )]
    AlreadyPrompting,
    #[error("Agent is already processing. Wait for completion before continuing.")]
    AlreadyContinuing,
    #[error("No messages to continue from")]
    NoMessages,
    #[error("Cannot continue from message role: assistant")]
    CannotContinueFromAssistant,
}

/// Receives every event of every run, awaited in order.
#[async_trait]
pub trait AgentListener: Send + Sync {
    /// `cancel` is the run's abort signal.
    async fn on_event(&self, event: &AgentEvent, cancel: &CancellationToken);
}

struct FnListener<F>(F);

#[async_trait]
impl<F: Fn(&AgentEvent) + Send + Sync> AgentListener for FnListener<F> {
    async fn on_event(&self, event: &AgentEvent, _cancel: &CancellationToken) {
        (self.0)(event)
    }
}

/// Identifies a subscription for [`Agent::unsubscribe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListenerId(u64);

/// The model an agent has before one is set (pi's placeholder).
pub fn unknown_model() -> Model {
    Model {
        id: "unknown".into(),
        name: "unknown".into(),
        api: "unknown".into(),
        provider: "unknown".into(),
        base_url: String::new(),
        reasoning: false,
        input: Vec::new(),
        cost: ModelCost::default(),
        context_window: 0,
        max_tokens: 0,
        headers: None,
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
    }
}

/// How to build an [`Agent`]. `Default` streams through `pi_ai::stream_simple` with no hooks.
#[derive(Clone)]
pub struct AgentOptions {
    pub system_prompt: String,
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub messages: Vec<AgentMessage>,
    pub stream_fn: StreamFn,
    pub hooks: Arc<dyn AgentHooks>,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    pub tool_execution: ToolExecution,
    /// Base options of every LLM call (session id, thinking budgets, payload hook, ...).
    pub stream_options: StreamOptions,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            system_prompt: String::new(),
            model: unknown_model(),
            thinking_level: ThinkingLevel::Off,
            tools: Vec::new(),
            messages: Vec::new(),
            stream_fn: Arc::new(pi_ai::stream_simple),
            hooks: Arc::new(NoHooks),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            tool_execution: ToolExecution::Parallel,
            stream_options: StreamOptions::default(),
        }
    }
}

enum Streaming {
    Message(Box<AgentMessage>),
    Live(StreamingMessage),
}

struct State {
    system_prompt: String,
    model: Model,
    thinking_level: ThinkingLevel,
    tools: Vec<Arc<dyn AgentTool>>,
    messages: Vec<AgentMessage>,
    is_streaming: bool,
    streaming: Option<Streaming>,
    pending_tool_calls: Vec<String>,
    error_message: Option<String>,
}

struct Settings {
    stream_fn: StreamFn,
    hooks: Arc<dyn AgentHooks>,
    tool_execution: ToolExecution,
    stream_options: StreamOptions,
}

struct Inner {
    state: Mutex<State>,
    settings: Mutex<Settings>,
    steering: Mutex<PendingQueue>,
    follow_up: Mutex<PendingQueue>,
    listeners: Mutex<Vec<(ListenerId, Arc<dyn AgentListener>)>>,
    next_listener: AtomicU64,
    /// The active run's abort signal.
    run: Mutex<Option<CancellationToken>>,
    /// True while no run is active.
    idle: watch::Sender<bool>,
}

/// The agent. Cloning gives another handle to the same agent.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

/// Ends the run's bookkeeping however the run ends (completion, error, or a dropped future).
struct RunGuard {
    inner: Arc<Inner>,
    cancel: CancellationToken,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        {
            let mut state = lock(&self.inner.state);
            state.is_streaming = false;
            state.streaming = None;
            state.pending_tool_calls.clear();
        }
        *lock(&self.inner.run) = None;
        self.inner.idle.send_replace(true);
    }
}

enum RunKind {
    Prompt {
        messages: Vec<AgentMessage>,
        skip_initial_steering: bool,
    },
    Continue,
}

impl Default for Agent {
    fn default() -> Self {
        Agent::new(AgentOptions::default())
    }
}

impl Agent {
    pub fn new(options: AgentOptions) -> Self {
        let (idle, _) = watch::channel(true);
        Agent {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    system_prompt: options.system_prompt,
                    model: options.model,
                    thinking_level: options.thinking_level,
                    tools: options.tools,
                    messages: options.messages,
                    is_streaming: false,
                    streaming: None,
                    pending_tool_calls: Vec::new(),
                    error_message: None,
                }),
                settings: Mutex::new(Settings {
                    stream_fn: options.stream_fn,
                    hooks: options.hooks,
                    tool_execution: options.tool_execution,
                    stream_options: options.stream_options,
                }),
                steering: Mutex::new(PendingQueue::new(options.steering_mode)),
                follow_up: Mutex::new(PendingQueue::new(options.follow_up_mode)),
                listeners: Mutex::new(Vec::new()),
                next_listener: AtomicU64::new(0),
                run: Mutex::new(None),
                idle,
            }),
        }
    }

    // ---- runs ----

    /// Run with one user text message. Fails at once if a run is active.
    pub fn prompt(&self, text: impl Into<String>) -> impl Future<Output = Result<(), AgentError>> + Send + 'static {
        self.prompt_messages(vec![AgentMessage::user_text(text)])
    }

    /// Run with a user message of text followed by images.
    pub fn prompt_with_images(
        &self,
        text: impl Into<String>,
        images: Vec<Content>,
    ) -> impl Future<Output = Result<(), AgentError>> + Send + 'static {
        let mut content = vec![Content::text(text)];
        content.extend(images);
        let message = Message::User(Arc::new(UserMessage {
            content: UserContent::Blocks(content),
            timestamp: now_ms(),
            extra: Default::default(),
        }));
        self.prompt_messages(vec![message.into()])
    }

    /// Run with these messages as the prompt.
    pub fn prompt_messages(
        &self,
        messages: Vec<AgentMessage>,
    ) -> impl Future<Output = Result<(), AgentError>> + Send + 'static {
        let started = self.begin_run(AgentError::AlreadyPrompting);
        let agent = self.clone();
        async move {
            let guard = started?;
            agent
                .execute(
                    guard,
                    RunKind::Prompt {
                        messages,
                        skip_initial_steering: false,
                    },
                )
                .await;
            Ok(())
        }
    }

    /// Continue from the transcript. After an assistant message this delivers queued steering
    /// (then follow-up) messages instead, or fails.
    pub fn continue_run(&self) -> impl Future<Output = Result<(), AgentError>> + Send + 'static {
        let started = self.prepare_continue();
        let agent = self.clone();
        async move {
            let (guard, kind) = started?;
            agent.execute(guard, kind).await;
            Ok(())
        }
    }

    fn prepare_continue(&self) -> Result<(RunGuard, RunKind), AgentError> {
        if lock(&self.inner.run).is_some() {
            return Err(AgentError::AlreadyContinuing);
        }
        let last_is_assistant = {
            let state = lock(&self.inner.state);
            match state.messages.last() {
                None => return Err(AgentError::NoMessages),
                Some(m) => m.role() == "assistant",
            }
        };
        let kind = if last_is_assistant {
            let steering = lock(&self.inner.steering).drain();
            if !steering.is_empty() {
                RunKind::Prompt {
                    messages: steering,
                    skip_initial_steering: true,
                }
            } else {
                let follow_ups = lock(&self.inner.follow_up).drain();
                if follow_ups.is_empty() {
                    return Err(AgentError::CannotContinueFromAssistant);
                }
                RunKind::Prompt {
                    messages: follow_ups,
                    skip_initial_steering: false,
                }
            }
        } else {
            RunKind::Continue
        };
        let guard = self.begin_run(AgentError::AlreadyContinuing)?;
        Ok((guard, kind))
    }

    fn begin_run(&self, busy: AgentError) -> Result<RunGuard, AgentError> {
        let cancel = {
            let mut run = lock(&self.inner.run);
            if run.is_some() {
                return Err(busy);
            }
            let cancel = CancellationToken::new();
            *run = Some(cancel.clone());
            cancel
        };
        {
            let mut state = lock(&self.inner.state);
            state.is_streaming = true;
            state.streaming = None;
            state.error_message = None;
        }
        self.inner.idle.send_replace(false);
        Ok(RunGuard {
            inner: self.inner.clone(),
            cancel,
        })
    }

    async fn execute(&self, guard: RunGuard, kind: RunKind) {
        let cancel = guard.cancel.clone();
        let skip_initial = matches!(
            kind,
            RunKind::Prompt {
                skip_initial_steering: true,
                ..
            }
        );
        let (context, config) = self.snapshot(skip_initial);
        let sink = AgentSink {
            inner: self.inner.clone(),
            cancel: cancel.clone(),
        };
        let result = match kind {
            RunKind::Prompt { messages, .. } => run_agent_loop(messages, context, &config, &sink, &cancel).await,
            RunKind::Continue => run_agent_loop_continue(context, &config, &sink, &cancel).await,
        };
        if let Err(error) = result {
            self.fail_run(error, &config.model, &sink, cancel.is_cancelled()).await;
        }
        drop(guard);
    }

    /// The run's copy of the context, and its configuration.
    fn snapshot(&self, skip_initial_steering: bool) -> (AgentContext, LoopConfig) {
        let (context, model, thinking_level) = {
            let state = lock(&self.inner.state);
            (
                AgentContext {
                    system_prompt: state.system_prompt.clone(),
                    messages: with_headroom(&state.messages),
                    tools: state.tools.clone(),
                },
                state.model.clone(),
                state.thinking_level,
            )
        };
        let settings = lock(&self.inner.settings);
        let inner = self.inner.clone();
        let skip = AtomicBool::new(skip_initial_steering);
        let steering: QueuePoll = Arc::new(move || {
            if skip.swap(false, Ordering::SeqCst) {
                return Vec::new();
            }
            lock(&inner.steering).drain()
        });
        let inner = self.inner.clone();
        let follow_up: QueuePoll = Arc::new(move || lock(&inner.follow_up).drain());
        let config = LoopConfig {
            model,
            thinking_level,
            stream_fn: settings.stream_fn.clone(),
            stream_options: settings.stream_options.clone(),
            tool_execution: settings.tool_execution,
            hooks: settings.hooks.clone(),
            steering: Some(steering),
            follow_up: Some(follow_up),
        };
        (context, config)
    }

    /// A hook failed: record an error assistant message and end the run with it. pi emits no
    /// message events for it, only `agent_end`.
    async fn fail_run(&self, error: HookError, model: &Model, sink: &AgentSink, aborted: bool) {
        let message = AssistantMessage {
            content: vec![Content::text("")],
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            stop_reason: if aborted {
                StopReason::Aborted
            } else {
                StopReason::Error
            },
            timestamp: now_ms(),
            error_message: Some(error.0),
            ..Default::default()
        };
        {
            let mut state = lock(&self.inner.state);
            state.error_message = message.error_message.clone();
            state.messages.push(message.clone().into());
        }
        sink.emit(AgentEvent::AgentEnd {
            messages: vec![message.into()],
            will_retry: false,
        })
        .await;
    }

    /// Abort the active run, if any: the stream ends `aborted`, running tools are cancelled.
    pub fn abort(&self) {
        if let Some(cancel) = lock(&self.inner.run).as_ref() {
            cancel.cancel();
        }
    }

    /// The active run's abort signal.
    pub fn cancel_token(&self) -> Option<CancellationToken> {
        lock(&self.inner.run).clone()
    }

    /// Resolves when no run is active (after the last listener of `agent_end` returned).
    pub fn wait_for_idle(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut idle = self.inner.idle.subscribe();
        async move {
            let _ = idle.wait_for(|idle| *idle).await;
        }
    }

    // ---- queues ----

    /// Queue a message to inject after the current turn (after its whole tool batch).
    pub fn steer(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner.steering).push(message.into());
    }

    /// Queue a message to run when the agent would otherwise stop.
    pub fn follow_up(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner.follow_up).push(message.into());
    }

    pub fn clear_steering_queue(&self) {
        lock(&self.inner.steering).clear();
    }

    pub fn clear_follow_up_queue(&self) {
        lock(&self.inner.follow_up).clear();
    }

    pub fn clear_all_queues(&self) {
        self.clear_steering_queue();
        self.clear_follow_up_queue();
    }

    pub fn has_queued_messages(&self) -> bool {
        !lock(&self.inner.steering).is_empty() || !lock(&self.inner.follow_up).is_empty()
    }

    pub fn queued_steering(&self) -> Vec<AgentMessage> {
        lock(&self.inner.steering).iter().cloned().collect()
    }

    pub fn queued_follow_ups(&self) -> Vec<AgentMessage> {
        lock(&self.inner.follow_up).iter().cloned().collect()
    }

    pub fn steering_mode(&self) -> QueueMode {
        lock(&self.inner.steering).mode
    }

    pub fn set_steering_mode(&self, mode: QueueMode) {
        lock(&self.inner.steering).mode = mode;
    }

    pub fn follow_up_mode(&self) -> QueueMode {
        lock(&self.inner.follow_up).mode
    }

    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        lock(&self.inner.follow_up).mode = mode;
    }

    // ---- listeners ----

    pub fn subscribe(&self, listener: Arc<dyn AgentListener>) -> ListenerId {
        let id = ListenerId(self.inner.next_listener.fetch_add(1, Ordering::Relaxed));
        lock(&self.inner.listeners).push((id, listener));
        id
    }

    /// Subscribe a plain function (it must not block).
    pub fn subscribe_fn(&self, f: impl Fn(&AgentEvent) + Send + Sync + 'static) -> ListenerId {
        self.subscribe(Arc::new(FnListener(f)))
    }

    /// Returns whether the listener was subscribed.
    pub fn unsubscribe(&self, id: ListenerId) -> bool {
        let mut listeners = lock(&self.inner.listeners);
        let before = listeners.len();
        listeners.retain(|(i, _)| *i != id);
        listeners.len() != before
    }

    // ---- state ----

    pub fn system_prompt(&self) -> String {
        lock(&self.inner.state).system_prompt.clone()
    }

    pub fn set_system_prompt(&self, prompt: impl Into<String>) {
        lock(&self.inner.state).system_prompt = prompt.into();
    }

    pub fn model(&self) -> Model {
        lock(&self.inner.state).model.clone()
    }

    pub fn set_model(&self, model: Model) {
        lock(&self.inner.state).model = model;
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        lock(&self.inner.state).thinking_level
    }

    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        lock(&self.inner.state).thinking_level = level;
    }

    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        lock(&self.inner.state).tools.clone()
    }

    pub fn set_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        lock(&self.inner.state).tools = tools;
    }

    /// A copy of the transcript.
    pub fn messages(&self) -> Vec<AgentMessage> {
        lock(&self.inner.state).messages.clone()
    }

    /// Read the transcript without copying it.
    pub fn with_messages<R>(&self, f: impl FnOnce(&[AgentMessage]) -> R) -> R {
        f(&lock(&self.inner.state).messages)
    }

    pub fn replace_messages(&self, mut messages: Vec<AgentMessage>) {
        // Room for a run's new messages now, while nothing else is held: growing a long
        // history's vector later doubles it in the middle of a request.
        messages.reserve(RUN_HEADROOM);
        lock(&self.inner.state).messages = messages;
    }

    pub fn append_message(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner.state).messages.push(message.into());
    }

    /// True from the start of a run until its last listener returned.
    pub fn is_streaming(&self) -> bool {
        lock(&self.inner.state).is_streaming
    }

    /// The message between its `message_start` and `message_end`, as of the latest event.
    pub fn streaming_message(&self) -> Option<AgentMessage> {
        match &lock(&self.inner.state).streaming {
            None => None,
            Some(Streaming::Message(m)) => Some((**m).clone()),
            Some(Streaming::Live(s)) => Some(s.snapshot().into()),
        }
    }

    /// Ids of tool calls started and not yet ended, in start order.
    pub fn pending_tool_calls(&self) -> Vec<String> {
        lock(&self.inner.state).pending_tool_calls.clone()
    }

    /// The error of the last turn that ended in one, cleared when a run starts.
    pub fn error_message(&self) -> Option<String> {
        lock(&self.inner.state).error_message.clone()
    }

    /// Clear the transcript, run state and queues.
    pub fn reset(&self) {
        {
            let mut state = lock(&self.inner.state);
            state.messages.clear();
            state.streaming = None;
            state.pending_tool_calls.clear();
            state.error_message = None;
        }
        self.clear_all_queues();
    }

    // ---- settings ----

    pub fn set_stream_fn(&self, stream_fn: StreamFn) {
        lock(&self.inner.settings).stream_fn = stream_fn;
    }

    /// The function the agent streams replies through; other LLM calls of the same session
    /// (compaction, branch summaries) use it too, so a provider hook or a test double sees
    /// every request.
    pub fn stream_fn(&self) -> StreamFn {
        lock(&self.inner.settings).stream_fn.clone()
    }

    pub fn set_hooks(&self, hooks: Arc<dyn AgentHooks>) {
        lock(&self.inner.settings).hooks = hooks;
    }

    pub fn tool_execution(&self) -> ToolExecution {
        lock(&self.inner.settings).tool_execution
    }

    pub fn set_tool_execution(&self, mode: ToolExecution) {
        lock(&self.inner.settings).tool_execution = mode;
    }

    /// Change the base options of future LLM calls (session id, budgets, payload hook, ...).
    pub fn update_stream_options(&self, f: impl FnOnce(&mut StreamOptions)) {
        f(&mut lock(&self.inner.settings).stream_options);
    }
}

/// A run's event sink: mirror into the state, then every listener in order.
struct AgentSink {
    inner: Arc<Inner>,
    cancel: CancellationToken,
}

impl AgentSink {
    fn mirror(&self, event: &AgentEvent) {
        let mut state = lock(&self.inner.state);
        match event {
            AgentEvent::MessageStart { message } => {
                state.streaming = Some(Streaming::Message(Box::new(message.clone())))
            }
            AgentEvent::MessageUpdate { message, .. } => state.streaming = Some(Streaming::Live(message.clone())),
            AgentEvent::MessageEnd { message } => {
                state.streaming = None;
                state.messages.push(message.clone());
            }
            // Calls a running tool made are its business, not the run's pending calls (pi 1.6
            // reports them beside the agent's state).
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                parent_tool_call_id: None,
                ..
            } => {
                if !state.pending_tool_calls.contains(tool_call_id) {
                    state.pending_tool_calls.push(tool_call_id.clone());
                }
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                parent_tool_call_id: None,
                ..
            } => {
                state.pending_tool_calls.retain(|id| id != tool_call_id);
            }
            AgentEvent::ToolExecutionStart { .. } | AgentEvent::ToolExecutionEnd { .. } => {}
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(error) = &message.error_message {
                    state.error_message = Some(error.clone());
                }
            }
            AgentEvent::AgentEnd { .. } => state.streaming = None,
            AgentEvent::AgentStart | AgentEvent::TurnStart | AgentEvent::ToolExecutionUpdate { .. } => {}
        }
    }
}

#[async_trait]
impl EventSink for AgentSink {
    async fn emit(&self, event: AgentEvent) {
        self.mirror(&event);
        let listeners: Vec<Arc<dyn AgentListener>> =
            lock(&self.inner.listeners).iter().map(|(_, l)| l.clone()).collect();
        for listener in listeners {
            listener.on_event(&event, &self.cancel).await;
        }
    }
}

/// Messages a run usually adds (prompt, replies, tool results) before its vector must grow.
const RUN_HEADROOM: usize = 16;

/// A copy of `messages` with room for a run's additions: a clone is exactly as long as the
/// original, so the run's first push would reallocate (and for a long history copy) it all.
fn with_headroom(messages: &[AgentMessage]) -> Vec<AgentMessage> {
    let mut copy = Vec::with_capacity(messages.len() + RUN_HEADROOM);
    copy.extend_from_slice(messages);
    copy
}
