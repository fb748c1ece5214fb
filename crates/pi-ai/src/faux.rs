//! A scripted fake provider for tests: queued assistant replies streamed back with the same
//! event sequence a real provider emits (start, per-block start/delta/end, done or error).
//!
//! ```
//! use pi_ai::faux::{faux_reply, faux_text, faux_tool_call, FauxOptions, FauxProvider};
//! use pi_ai::StopReason;
//! use serde_json::json;
//!
//! let faux = FauxProvider::new(FauxOptions::default());
//! faux.set_responses(vec![
//!     faux_reply(vec![faux_tool_call("read", json!({"path": "a.txt"}))], StopReason::ToolUse).into(),
//!     faux_reply(vec![faux_text("Done.")], StopReason::Stop).into(),
//! ]);
//! let stream_fn = faux.stream_fn(); // hand this to the agent loop
//! assert_eq!(faux.pending_responses(), 2);
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

use crate::events::{event_channel, AssistantMessageEvent, AssistantStream, EventSender};
use crate::options::{CacheRetention, StreamFn, StreamOptions};
use crate::types::{
    now_ms, AssistantMessage, Content, Context, InputKind, Message, Model, ModelCost, StopReason, TextContent,
    ThinkingContent, ToolCall, ToolResultMessage, Usage, UserContent,
};

const DEFAULT_API: &str = "faux";
const DEFAULT_PROVIDER: &str = "faux";
const DEFAULT_MODEL_ID: &str = "faux-1";
const DEFAULT_MODEL_NAME: &str = "Faux Model";
const DEFAULT_BASE_URL: &str = "http://localhost:0";

/// A text block.
pub fn faux_text(text: impl Into<String>) -> Content {
    Content::text(text)
}

/// A thinking block.
pub fn faux_thinking(thinking: impl Into<String>) -> Content {
    Content::Thinking(ThinkingContent {
        thinking: thinking.into(),
        ..Default::default()
    })
}

/// A tool call with a generated id (`tool_<n>`, unique in the process).
pub fn faux_tool_call(name: impl Into<String>, arguments: Value) -> Content {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = format!("tool_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    faux_tool_call_with_id(id, name, arguments)
}

/// A tool call with the given id.
pub fn faux_tool_call_with_id(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Content {
    Content::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        ..Default::default()
    })
}

/// A scripted reply. api, provider and model are replaced by the requesting model's; a usage
/// left at zero is replaced by an estimate (4 characters per token, with prompt caching per
/// session id); a non-zero usage is kept as scripted.
pub fn faux_reply(content: Vec<Content>, stop_reason: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: DEFAULT_API.to_string(),
        provider: DEFAULT_PROVIDER.to_string(),
        model: DEFAULT_MODEL_ID.to_string(),
        stop_reason,
        timestamp: now_ms(),
        ..Default::default()
    }
}

/// A failed reply: streams `content` (may be empty), then ends with an `error` event.
pub fn faux_error(content: Vec<Content>, error_message: impl Into<String>) -> AssistantMessage {
    let mut reply = faux_reply(content, StopReason::Error);
    reply.error_message = Some(error_message.into());
    reply
}

/// Builds a reply from the request: the context, the options, the 1-based number of this call
/// and the model asked for.
pub type FauxReplyFn = Arc<dyn Fn(&Context, &StreamOptions, u64, &Model) -> AssistantMessage + Send + Sync>;

/// One queued response.
#[derive(Clone)]
pub enum FauxStep {
    Reply(Box<AssistantMessage>),
    Dynamic(FauxReplyFn),
}

impl From<AssistantMessage> for FauxStep {
    fn from(reply: AssistantMessage) -> Self {
        FauxStep::Reply(Box::new(reply))
    }
}

impl std::fmt::Debug for FauxStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FauxStep::Reply(m) => f.debug_tuple("Reply").field(m).finish(),
            FauxStep::Dynamic(_) => f.write_str("Dynamic(..)"),
        }
    }
}

/// A model of the faux provider; unset fields take the defaults of `faux-1`.
#[derive(Debug, Clone, Default)]
pub struct FauxModel {
    pub id: String,
    pub name: Option<String>,
    pub reasoning: bool,
    pub input: Option<Vec<InputKind>>,
    pub cost: ModelCost,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub struct FauxOptions {
    /// Default `faux`.
    pub api: Option<String>,
    /// Default `faux`.
    pub provider: Option<String>,
    /// Default: one model `faux-1`.
    pub models: Vec<FauxModel>,
    /// Characters per delta event; default 16 (pi's tokens of 4 characters, 4 at a time).
    pub chunk_chars: Option<usize>,
    /// Pace deltas at this many tokens per second; `None` streams as fast as consumed.
    pub tokens_per_second: Option<f64>,
}

#[derive(Default)]
struct State {
    pending: VecDeque<FauxStep>,
    calls: u64,
    /// Last prompt text per session id, for the cache estimate.
    prompts: HashMap<String, String>,
}

/// A scripted provider. Clones share the queue and the call count.
#[derive(Clone)]
pub struct FauxProvider {
    api: String,
    provider: String,
    models: Arc<Vec<Model>>,
    chunk_chars: usize,
    tokens_per_second: Option<f64>,
    state: Arc<Mutex<State>>,
}

impl FauxProvider {
    pub fn new(options: FauxOptions) -> Self {
        let api = options.api.unwrap_or_else(|| DEFAULT_API.to_string());
        let provider = options.provider.unwrap_or_else(|| DEFAULT_PROVIDER.to_string());
        let mut definitions = options.models;
        if definitions.is_empty() {
            definitions.push(FauxModel {
                id: DEFAULT_MODEL_ID.to_string(),
                name: Some(DEFAULT_MODEL_NAME.to_string()),
                ..Default::default()
            });
        }
        let models = definitions
            .into_iter()
            .map(|d| Model {
                name: d.name.unwrap_or_else(|| d.id.clone()),
                id: d.id,
                api: api.clone(),
                provider: provider.clone(),
                base_url: DEFAULT_BASE_URL.to_string(),
                reasoning: d.reasoning,
                input: d.input.unwrap_or_else(|| vec![InputKind::Text, InputKind::Image]),
                cost: d.cost,
                context_window: d.context_window.unwrap_or(128_000),
                max_tokens: d.max_tokens.unwrap_or(16_384),
                headers: None,
                compat: None,
                thinking_level_map: None,
                prompt_cache: None,
            })
            .collect();
        FauxProvider {
            api,
            provider,
            models: Arc::new(models),
            chunk_chars: options.chunk_chars.unwrap_or(16).max(1),
            tokens_per_second: options.tokens_per_second.filter(|t| *t > 0.0),
            state: Arc::default(),
        }
    }

    pub fn api(&self) -> &str {
        &self.api
    }

    pub fn provider(&self) -> &str {
        &self.provider
    }

    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// The first model.
    pub fn model(&self) -> &Model {
        // `new` always creates at least one model.
        &self.models[0]
    }

    pub fn get_model(&self, id: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.id == id)
    }

    /// Replace the queue of responses.
    pub fn set_responses(&self, steps: Vec<FauxStep>) {
        self.lock().pending = steps.into();
    }

    pub fn append_responses(&self, steps: Vec<FauxStep>) {
        self.lock().pending.extend(steps);
    }

    pub fn pending_responses(&self) -> usize {
        self.lock().pending.len()
    }

    /// How many calls were made, including those that found the queue empty.
    pub fn call_count(&self) -> u64 {
        self.lock().calls
    }

    /// The provider as a [`StreamFn`].
    pub fn stream_fn(&self) -> StreamFn {
        let this = self.clone();
        Arc::new(move |model: &Model, context: &Context, options: StreamOptions| this.stream(model, context, options))
    }

    /// Answer one call with the next queued response; an empty queue yields an error reply
    /// `No more faux responses queued`.
    pub fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let (step, call) = {
            let mut state = self.lock();
            state.calls += 1;
            (state.pending.pop_front(), state.calls)
        };
        let mut message = match step {
            Some(FauxStep::Reply(reply)) => *reply,
            Some(FauxStep::Dynamic(build)) => build(context, &options, call, model),
            None => faux_error(Vec::new(), "No more faux responses queued"),
        };
        message.api = self.api.clone();
        message.provider = self.provider.clone();
        message.model = model.id.clone();
        if message.usage == Usage::default() {
            message.usage = self.estimate_usage(&message, context, &options);
        }
        let script = Script {
            message,
            chunk_chars: self.chunk_chars,
            tokens_per_second: self.tokens_per_second,
            options,
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let (tx, rx) = event_channel();
                handle.spawn(script.play(tx));
                rx
            }
            // Without a runtime there is nothing to pace or cancel against: hand over every event.
            Err(_) => AssistantStream::from_events(script.events()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves the queue usable.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// pi's estimate: prompt and reply at 4 UTF-16 units per token, rounded up; with a session
    /// id and caching on, the prefix shared with the session's previous prompt is a cache read
    /// and the rest a cache write.
    fn estimate_usage(&self, message: &AssistantMessage, context: &Context, options: &StreamOptions) -> Usage {
        let prompt = serialize_context(context);
        let prompt_tokens = estimate_tokens(&prompt);
        let output = estimate_tokens(&content_text(&message.content));
        let (mut input, mut cache_read, mut cache_write) = (prompt_tokens, 0, 0);
        if let Some(session) = options
            .session_id
            .as_ref()
            .filter(|_| options.cache_retention != CacheRetention::None)
        {
            let mut state = self.lock();
            if let Some(previous) = state.prompts.get(session) {
                let shared = common_prefix_chars(previous, &prompt);
                let (cached, _) = split_at_char(previous, shared);
                let (_, fresh) = split_at_char(&prompt, shared);
                cache_read = estimate_tokens(cached);
                cache_write = estimate_tokens(fresh);
                input = prompt_tokens.saturating_sub(cache_read);
            } else {
                cache_write = prompt_tokens;
            }
            state.prompts.insert(session.clone(), prompt);
        }
        Usage {
            input,
            output,
            cache_read,
            cache_write,
            total_tokens: input + output + cache_read + cache_write,
            ..Default::default()
        }
    }
}

impl std::fmt::Debug for FauxProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FauxProvider")
            .field("api", &self.api)
            .field("provider", &self.provider)
            .field("pending", &self.pending_responses())
            .finish_non_exhaustive()
    }
}

/// One reply about to be streamed.
struct Script {
    message: AssistantMessage,
    chunk_chars: usize,
    tokens_per_second: Option<f64>,
    options: StreamOptions,
}

impl Script {
    /// Every event of the reply, in order, as if never cancelled.
    fn events(self) -> Vec<AssistantMessageEvent> {
        let mut events = vec![AssistantMessageEvent::Start {
            partial: self.start_partial(),
        }];
        for (index, block) in self.message.content.iter().enumerate() {
            events.extend(block_events(index, block, self.chunk_chars));
        }
        events.push(finish(self.message));
        events
    }

    async fn play(self, mut tx: EventSender) {
        let cancel = self.options.cancel.clone();
        let mut partial = self.start_partial();
        if cancel.is_cancelled() {
            tx.send(aborted(partial)).await;
            return;
        }
        if !tx
            .send(AssistantMessageEvent::Start {
                partial: partial.clone(),
            })
            .await
        {
            return;
        }
        for (index, block) in self.message.content.iter().enumerate() {
            for event in block_events(index, block, self.chunk_chars) {
                if let Some(delta) = delta_text(&event) {
                    self.pace(delta).await;
                    if cancel.is_cancelled() {
                        tx.send(aborted(partial)).await;
                        return;
                    }
                }
                apply_to_partial(&mut partial, &event);
                if !tx.send(event).await {
                    return;
                }
            }
        }
        tx.send(finish(self.message)).await;
    }

    /// The message with no content yet.
    fn start_partial(&self) -> AssistantMessage {
        AssistantMessage {
            content: Vec::new(),
            ..self.message.clone()
        }
    }

    async fn pace(&self, chunk: &str) {
        match self.tokens_per_second {
            Some(rate) => {
                let seconds = estimate_tokens(chunk) as f64 / rate;
                tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 60.0))).await;
            }
            None => tokio::task::yield_now().await,
        }
    }
}

/// The start, deltas and end of one content block.
fn block_events(index: usize, block: &Content, chunk_chars: usize) -> Vec<AssistantMessageEvent> {
    use AssistantMessageEvent as E;
    let mut events = Vec::new();
    match block {
        Content::Text(t) => {
            events.push(E::TextStart { content_index: index });
            for delta in chunks(&t.text, chunk_chars) {
                events.push(E::TextDelta {
                    content_index: index,
                    delta,
                });
            }
            events.push(E::TextEnd {
                content_index: index,
                content: t.clone(),
            });
        }
        Content::Thinking(t) => {
            events.push(E::ThinkingStart { content_index: index });
            for delta in chunks(&t.thinking, chunk_chars) {
                events.push(E::ThinkingDelta {
                    content_index: index,
                    delta,
                });
            }
            events.push(E::ThinkingEnd {
                content_index: index,
                content: t.clone(),
            });
        }
        Content::ToolCall(tc) => {
            events.push(E::ToolCallStart {
                content_index: index,
                id: tc.id.clone(),
                name: tc.name.clone(),
            });
            let json = serde_json::to_string(&tc.arguments).unwrap_or_default();
            for delta in chunks(&json, chunk_chars) {
                events.push(E::ToolCallDelta {
                    content_index: index,
                    delta,
                });
            }
            events.push(E::ToolCallEnd {
                content_index: index,
                tool_call: tc.clone(),
            });
        }
        // Assistant replies carry no images; a scripted one is shown as an empty text block so
        // content indices stay aligned with the final message.
        Content::Image(_) => {
            events.push(E::TextStart { content_index: index });
            events.push(E::TextEnd {
                content_index: index,
                content: TextContent::default(),
            });
        }
    }
    events
}

fn delta_text(event: &AssistantMessageEvent) -> Option<&str> {
    match event {
        AssistantMessageEvent::TextDelta { delta, .. }
        | AssistantMessageEvent::ThinkingDelta { delta, .. }
        | AssistantMessageEvent::ToolCallDelta { delta, .. } => Some(delta),
        _ => None,
    }
}

/// Keep the partial an abort reports in step with what was streamed.
fn apply_to_partial(partial: &mut AssistantMessage, event: &AssistantMessageEvent) {
    use AssistantMessageEvent as E;
    match event {
        E::TextStart { .. } => partial.content.push(Content::text("")),
        E::ThinkingStart { .. } => partial.content.push(faux_thinking("")),
        E::ToolCallStart { id, name, .. } => {
            partial.content.push(faux_tool_call_with_id(
                id.clone(),
                name.clone(),
                Value::Object(Default::default()),
            ));
        }
        E::TextDelta { delta, .. } => {
            if let Some(Content::Text(t)) = partial.content.last_mut() {
                t.text.push_str(delta);
            }
        }
        E::ThinkingDelta { delta, .. } => {
            if let Some(Content::Thinking(t)) = partial.content.last_mut() {
                t.thinking.push_str(delta);
            }
        }
        E::ToolCallEnd { tool_call, .. } => {
            if let Some(last) = partial.content.last_mut() {
                *last = Content::ToolCall(tool_call.clone());
            }
        }
        _ => {}
    }
}

fn aborted(mut partial: AssistantMessage) -> AssistantMessageEvent {
    partial.stop_reason = StopReason::Aborted;
    partial.error_message = Some("Request was aborted".to_string());
    partial.timestamp = now_ms();
    AssistantMessageEvent::Error {
        reason: StopReason::Aborted,
        error: partial,
    }
}

/// `done` for stop, length and toolUse; `error` for error and aborted.
fn finish(message: AssistantMessage) -> AssistantMessageEvent {
    match message.stop_reason {
        StopReason::Error | StopReason::Aborted => AssistantMessageEvent::Error {
            reason: message.stop_reason,
            error: message,
        },
        reason => AssistantMessageEvent::Done { reason, message },
    }
}

/// `text` in pieces of `size` characters; an empty text is one empty piece.
fn chunks(text: &str, size: usize) -> Vec<String> {
    if text.is_empty() {
        return vec![String::new()];
    }
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Tokens at 4 UTF-16 units each, rounded up (JavaScript string length).
fn estimate_tokens(text: &str) -> u64 {
    let units = text.encode_utf16().count() as u64;
    units.div_ceil(4)
}

fn common_prefix_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

fn split_at_char(s: &str, chars: usize) -> (&str, &str) {
    let at = s.char_indices().nth(chars).map_or(s.len(), |(i, _)| i);
    s.split_at(at)
}

fn content_text(blocks: &[Content]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            Content::Text(t) => t.text.clone(),
            Content::Image(i) => format!("[image:{}:{}]", i.mime_type, i.data.len()),
            Content::Thinking(t) => t.thinking.clone(),
            Content::ToolCall(tc) => tool_call_text(tc),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn tool_call_text(tc: &ToolCall) -> String {
    format!(
        "{}:{}",
        tc.name,
        serde_json::to_string(&tc.arguments).unwrap_or_default()
    )
}

fn tool_result_text(result: &ToolResultMessage) -> String {
    let mut parts = vec![result.tool_name.clone()];
    parts.extend(result.content.iter().map(|b| content_text(std::slice::from_ref(b))));
    parts.join("\n")
}

/// The prompt as text, for the token estimate.
fn serialize_context(context: &Context) -> String {
    let mut parts = Vec::new();
    if let Some(system) = context.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        parts.push(format!("system:{system}"));
    }
    for message in &context.messages {
        let text = match message {
            Message::User(u) => match &u.content {
                UserContent::Text(s) => s.clone(),
                UserContent::Blocks(b) => content_text(b),
            },
            Message::Assistant(a) => content_text(&a.content),
            Message::ToolResult(r) => tool_result_text(r),
        };
        parts.push(format!("{}:{text}", message.role()));
    }
    if !context.tools.is_empty() {
        parts.push(format!(
            "tools:{}",
            serde_json::to_string(&context.tools).unwrap_or_default()
        ));
    }
    parts.join("\n\n")
}

#[cfg(test)]
#[path = "faux_tests.rs"]
mod tests;
