//! A scripted stand-in for the LLM, test tools, and an event recorder.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::future::BoxFuture;
use pi_agent::{
    Agent, AgentEvent, AgentMessage, AgentOptions, AgentTool, ExecutionMode, ToolError, ToolOutput, ToolUpdateFn,
};
use pi_ai::{
    event_channel, AssistantMessage, AssistantMessageEvent, AssistantStream, Content, Context, Message, Model,
    ModelCost, StopReason, StreamFn, StreamOptions, TextContent, ThinkingLevel, ToolCall,
};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

pub fn model(id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: "faux-api".into(),
        provider: "faux".into(),
        base_url: String::new(),
        reasoning: true,
        input: Vec::new(),
        cost: ModelCost::default(),
        context_window: 100_000,
        max_tokens: 1000,
        headers: None,
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
    }
}

/// What the faux provider saw on one call.
#[derive(Clone)]
pub struct Call {
    pub model: String,
    pub context: Context,
    pub api_key: Option<String>,
    pub reasoning: Option<ThinkingLevel>,
    pub has_payload_hook: bool,
}

type Script = Box<dyn FnOnce(StreamOptions) -> AssistantStream + Send>;

/// Replies in order, one per LLM call; records every call.
#[derive(Default)]
pub struct Faux {
    script: Mutex<VecDeque<Script>>,
    pub calls: Mutex<Vec<Call>>,
}

pub fn base_message() -> AssistantMessage {
    AssistantMessage {
        api: "faux-api".into(),
        provider: "faux".into(),
        model: "faux-model".into(),
        timestamp: 1,
        ..Default::default()
    }
}

pub fn text_events(text: &str) -> Vec<AssistantMessageEvent> {
    let block = TextContent {
        text: text.into(),
        ..Default::default()
    };
    let mut done = base_message();
    done.content = vec![Content::Text(block.clone())];
    vec![
        AssistantMessageEvent::Start {
            partial: base_message(),
        },
        AssistantMessageEvent::TextStart { content_index: 0 },
        AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: text.into(),
        },
        AssistantMessageEvent::TextEnd {
            content_index: 0,
            content: block,
        },
        AssistantMessageEvent::Done {
            reason: StopReason::Stop,
            message: done,
        },
    ]
}

pub fn tool_events(calls: &[(&str, &str, Value)]) -> Vec<AssistantMessageEvent> {
    let mut events = vec![AssistantMessageEvent::Start {
        partial: base_message(),
    }];
    let mut done = base_message();
    done.stop_reason = StopReason::ToolUse;
    for (i, (id, name, args)) in calls.iter().enumerate() {
        let call = ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: args.clone(),
            ..Default::default()
        };
        events.push(AssistantMessageEvent::ToolCallStart {
            content_index: i,
            id: id.to_string(),
            name: name.to_string(),
        });
        events.push(AssistantMessageEvent::ToolCallDelta {
            content_index: i,
            delta: args.to_string(),
        });
        events.push(AssistantMessageEvent::ToolCallEnd {
            content_index: i,
            tool_call: call.clone(),
        });
        done.content.push(Content::ToolCall(call));
    }
    events.push(AssistantMessageEvent::Done {
        reason: StopReason::ToolUse,
        message: done,
    });
    events
}

impl Faux {
    pub fn new() -> Arc<Self> {
        Arc::new(Faux::default())
    }

    pub fn push_events(&self, events: Vec<AssistantMessageEvent>) {
        self.script
            .lock()
            .unwrap()
            .push_back(Box::new(move |_: StreamOptions| AssistantStream::from_events(events)));
    }

    pub fn push_text(&self, text: &str) {
        self.push_events(text_events(text));
    }

    pub fn push_tools(&self, calls: &[(&str, &str, Value)]) {
        self.push_events(tool_events(calls));
    }

    /// Send `events`, then wait for the abort and end `aborted` keeping what was sent, as a
    /// provider does.
    pub fn push_hang(&self, events: Vec<AssistantMessageEvent>) {
        self.script
            .lock()
            .unwrap()
            .push_back(Box::new(move |options: StreamOptions| {
                let (mut tx, rx) = event_channel();
                tokio::spawn(async move {
                    let mut partial = pi_ai::PartialMessage::new();
                    for e in events {
                        partial.apply(&e);
                        tx.send(e).await;
                    }
                    options.cancel.cancelled().await;
                    let mut error = partial.into_message();
                    error.stop_reason = StopReason::Aborted;
                    error.error_message = Some("Request was aborted".into());
                    tx.send(AssistantMessageEvent::Error {
                        reason: StopReason::Aborted,
                        error,
                    })
                    .await;
                });
                rx
            }));
    }

    /// Send `events` and never end, ignoring the abort (a broken provider).
    pub fn push_stuck(&self, events: Vec<AssistantMessageEvent>) {
        self.script.lock().unwrap().push_back(Box::new(move |_: StreamOptions| {
            let (mut tx, rx) = event_channel();
            tokio::spawn(async move {
                for e in events {
                    tx.send(e).await;
                }
                // Hold the sender until the consumer goes away.
                while !tx.is_closed() {
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            });
            rx
        }));
    }

    pub fn stream_fn(self: &Arc<Self>) -> StreamFn {
        let faux = self.clone();
        Arc::new(move |model: &Model, context: &Context, options: StreamOptions| {
            faux.calls.lock().unwrap().push(Call {
                model: model.id.clone(),
                context: context.clone(),
                api_key: options.api_key.clone(),
                reasoning: options.reasoning,
                has_payload_hook: options.on_payload.is_some(),
            });
            let next = faux.script.lock().unwrap().pop_front();
            match next {
                Some(script) => script(options),
                None => {
                    let mut error = base_message();
                    error.stop_reason = StopReason::Error;
                    error.error_message = Some("faux: no reply scripted".into());
                    AssistantStream::from_events(vec![AssistantMessageEvent::Error {
                        reason: StopReason::Error,
                        error,
                    }])
                }
            }
        })
    }

    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }
}

type RunFn = Arc<
    dyn Fn(Value, CancellationToken, ToolUpdateFn) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync,
>;

/// A tool whose behaviour is a closure.
pub struct TestTool {
    pub name: String,
    pub schema: Value,
    pub mode: ExecutionMode,
    pub prepare: Option<fn(Value) -> Value>,
    run: RunFn,
}

impl TestTool {
    pub fn new<F, Fut>(name: &str, run: F) -> Self
    where
        F: Fn(Value, CancellationToken, ToolUpdateFn) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        TestTool {
            name: name.into(),
            schema: json!({"type": "object"}),
            mode: ExecutionMode::Parallel,
            prepare: None,
            run: Arc::new(move |args: Value, cancel: CancellationToken, update: ToolUpdateFn| {
                Box::pin(run(args, cancel, update)) as BoxFuture<'static, Result<ToolOutput, ToolError>>
            }),
        }
    }

    pub fn schema(mut self, schema: Value) -> Self {
        self.schema = schema;
        self
    }

    pub fn sequential(mut self) -> Self {
        self.mode = ExecutionMode::Sequential;
        self
    }

    pub fn arc(self) -> Arc<dyn AgentTool> {
        Arc::new(self)
    }
}

#[async_trait]
impl AgentTool for TestTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn parameters(&self) -> Value {
        self.schema.clone()
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    fn prepare_arguments(&self, arguments: Value) -> Value {
        match self.prepare {
            Some(f) => f(arguments),
            None => arguments,
        }
    }
    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        (self.run)(arguments, cancel, on_update).await
    }
}

/// `echo {text}`: returns the text.
pub fn echo_tool() -> Arc<dyn AgentTool> {
    TestTool::new("echo", |args, _, _| async move {
        Ok(ToolOutput::text(args["text"].as_str().unwrap_or("").to_string()))
    })
    .schema(json!({"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}))
    .arc()
}

/// One short line per event, for order snapshots.
pub fn describe(event: &AgentEvent) -> String {
    fn role_of(m: &AgentMessage) -> String {
        match m {
            AgentMessage::Llm(Message::Assistant(a)) => format!("assistant {}", a.stop_reason.as_str()),
            AgentMessage::Llm(Message::ToolResult(t)) => {
                format!(
                    "toolResult {}{}",
                    t.tool_call_id,
                    if t.is_error { " error" } else { "" }
                )
            }
            other => other.role().to_string(),
        }
    }
    match event {
        AgentEvent::AgentStart => "agent_start".into(),
        AgentEvent::AgentEnd { messages, .. } => format!(
            "agent_end [{}]",
            messages
                .iter()
                .map(|m| m.role().to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
        AgentEvent::TurnStart => "turn_start".into(),
        AgentEvent::TurnEnd { message, tool_results } => format!(
            "turn_end {} [{}]",
            message.stop_reason.as_str(),
            tool_results
                .iter()
                .map(|t| t.tool_call_id.clone())
                .collect::<Vec<_>>()
                .join(",")
        ),
        AgentEvent::MessageStart { message } => format!("message_start {}", role_of(message)),
        AgentEvent::MessageEnd { message } => format!("message_end {}", role_of(message)),
        AgentEvent::MessageUpdate {
            assistant_message_event,
            ..
        } => format!("message_update {}", assistant_message_event.type_name()),
        AgentEvent::ToolExecutionStart { tool_call_id, .. } => format!("tool_start {tool_call_id}"),
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => format!("tool_update {tool_call_id}"),
        AgentEvent::ToolExecutionEnd {
            tool_call_id, is_error, ..
        } => format!("tool_end {tool_call_id}{}", if *is_error { " error" } else { "" }),
    }
}

/// Records every event (detached) and its one-line form.
#[derive(Clone, Default)]
pub struct Recorder {
    pub events: Arc<Mutex<Vec<AgentEvent>>>,
}

impl Recorder {
    pub fn attach(agent: &Agent) -> Self {
        let rec = Recorder::default();
        let events = rec.events.clone();
        agent.subscribe_fn(move |e| events.lock().unwrap().push(e.detach()));
        rec
    }

    pub fn lines(&self) -> Vec<String> {
        self.events.lock().unwrap().iter().map(describe).collect()
    }

    /// Lines without `message_update`, which depend on how the reply was chunked.
    pub fn outline(&self) -> Vec<String> {
        self.lines()
            .into_iter()
            .filter(|l| !l.starts_with("message_update"))
            .collect()
    }

    pub fn events(&self) -> Vec<AgentEvent> {
        self.events.lock().unwrap().clone()
    }
}

pub fn agent_with(faux: &Arc<Faux>, tools: Vec<Arc<dyn AgentTool>>) -> Agent {
    Agent::new(AgentOptions {
        model: model("faux-model"),
        system_prompt: "You are a test.".into(),
        tools,
        stream_fn: faux.stream_fn(),
        ..Default::default()
    })
}

pub fn text_of(content: &[Content]) -> String {
    pi_ai::join_text(content)
}
