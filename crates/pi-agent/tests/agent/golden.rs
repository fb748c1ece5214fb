//! Replays the TypeScript pi's JSON-mode transcripts through the loop (same replies, tools that
//! return the recorded results in the recorded order) and compares every line we print.
//!
//! Differences that are deliberate are normalised away: timestamps and durations, the usage
//! numbers of `message_update` (pi serializes a live object, so they depend on timing), and the
//! session-level lines (system messages, `agent_settled`), which the loop does not make.
//! Tool results are compared without `structuredContent` and the result's own `isError` (the
//! tools' business, not the loop's) and with `details: {}` and no details taken as equal.
//! Field order is compared exactly.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_agent::{Agent, AgentEvent, AgentMessage, AgentOptions, AgentTool, ToolError, ToolOutput};
use pi_ai::{AssistantMessage, AssistantMessageEvent, Content, Message, ToolCall};
use serde_json::Value;
use tokio::sync::watch;

use crate::faux::{model, Faux};

/// The JSON-mode transcripts of the TypeScript pi 1.6 in the repository's `testdata/`.
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/golden-1.6");

/// Whether a line is made by the session, not the loop.
fn session_level(v: &Value) -> bool {
    v["type"] == "agent_settled" || v["message"]["role"] == "system"
}

fn load(name: &str) -> Vec<Value> {
    let path = Path::new(GOLDEN).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1) // the session header is not an agent event
        .map(|l| serde_json::from_str::<Value>(l).expect("golden line is JSON"))
        .filter(|v| !session_level(v))
        .map(|mut v| {
            if let Some(messages) = v.get_mut("messages").and_then(Value::as_array_mut) {
                messages.retain(|m| m["role"] != "system");
            }
            v
        })
        .collect()
}

fn normalise(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.get("details") == Some(&serde_json::json!({})) {
                map.shift_remove("details");
            }
            if map.contains_key("content") && map.contains_key("structuredContent") {
                map.shift_remove("structuredContent");
                map.shift_remove("isError");
            }
            for (k, val) in map.iter_mut() {
                if (k == "timestamp" || k == "durationMs") && val.is_number() {
                    *val = Value::from(0);
                } else {
                    normalise(val);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        _ => {}
    }
}

/// The keys every usage object has (pi's live object gains `reasoning` and the like once the
/// provider reports usage, which in the recording happened at a time of its own).
fn usage_shape(v: &Value) -> Vec<&str> {
    ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
        .into_iter()
        .filter(|k| v.get(*k).is_some())
        .collect()
}

fn assistant(v: &Value) -> AssistantMessage {
    match serde_json::from_value::<Message>(v.clone()).expect("assistant message") {
        Message::Assistant(a) => std::sync::Arc::unwrap_or_clone(a),
        other => panic!("expected assistant, got {}", other.role()),
    }
}

/// Rebuild the provider events of one assistant reply from its JSON-mode lines.
fn reply_events(lines: &[Value]) -> Vec<AssistantMessageEvent> {
    let final_msg = assistant(&lines.last().expect("message_end")["message"]);
    let block = |i: usize| final_msg.content.get(i).cloned();
    let mut events = vec![AssistantMessageEvent::Start {
        partial: assistant(&lines[0]["message"]),
    }];
    for line in &lines[1..lines.len() - 1] {
        let e = &line["assistantMessageEvent"];
        let i = e["contentIndex"].as_u64().expect("contentIndex") as usize;
        let delta = || e["delta"].as_str().expect("delta").to_string();
        let event = match e["type"].as_str().expect("type") {
            "text_start" => AssistantMessageEvent::TextStart { content_index: i },
            "text_delta" => AssistantMessageEvent::TextDelta {
                content_index: i,
                delta: delta(),
            },
            "text_end" => match block(i) {
                Some(Content::Text(t)) => AssistantMessageEvent::TextEnd {
                    content_index: i,
                    content: t,
                },
                _ => panic!("text_end without a text block"),
            },
            "thinking_start" => AssistantMessageEvent::ThinkingStart { content_index: i },
            "thinking_delta" => AssistantMessageEvent::ThinkingDelta {
                content_index: i,
                delta: delta(),
            },
            "thinking_end" => match block(i) {
                Some(Content::Thinking(t)) => AssistantMessageEvent::ThinkingEnd {
                    content_index: i,
                    content: t,
                },
                _ => panic!("thinking_end without a thinking block"),
            },
            "toolcall_start" => match block(i) {
                Some(Content::ToolCall(tc)) => AssistantMessageEvent::ToolCallStart {
                    content_index: i,
                    id: tc.id,
                    name: tc.name,
                },
                _ => panic!("toolcall_start without a tool call"),
            },
            "toolcall_delta" => AssistantMessageEvent::ToolCallDelta {
                content_index: i,
                delta: delta(),
            },
            "toolcall_end" => {
                let mut call = e["toolCall"].clone();
                call.as_object_mut().expect("object").shift_remove("type");
                AssistantMessageEvent::ToolCallEnd {
                    content_index: i,
                    tool_call: serde_json::from_value::<ToolCall>(call).expect("tool call"),
                }
            }
            other => panic!("unexpected stream event {other}"),
        };
        events.push(event);
    }
    events.push(AssistantMessageEvent::Done {
        reason: final_msg.stop_reason,
        message: final_msg,
    });
    events
}

fn tool_output(v: &Value) -> ToolOutput {
    ToolOutput {
        content: serde_json::from_value(v["content"].clone()).expect("content"),
        details: v.get("details").cloned(),
        structured_content: None,
        is_error: false,
        terminate: false,
        usage: None,
    }
}

enum Step {
    Update(ToolOutput),
    End(ToolOutput, bool),
}

/// A step and its position among all recorded update/end events.
type Steps = HashMap<String, Vec<(usize, Step)>>;

struct Replay {
    faux: Arc<Faux>,
    prompt: AgentMessage,
    tools: Vec<Arc<dyn AgentTool>>,
    /// Advanced by a listener for each update/end event that goes out.
    cursor: watch::Sender<usize>,
}

fn replay(golden: &[Value]) -> Replay {
    let faux = Faux::new();
    let mut prompt = None;
    let mut reply: Vec<Value> = Vec::new();
    let mut steps: Steps = HashMap::new();
    let mut names = Vec::new();
    let mut index = 0;
    for line in golden {
        let role = line["message"]["role"].as_str();
        match line["type"].as_str().expect("type") {
            "message_start" if role == Some("user") && prompt.is_none() => {
                prompt = Some(serde_json::from_value(line["message"].clone()).expect("prompt"));
            }
            "message_start" if role == Some("assistant") => reply = vec![line.clone()],
            "message_update" => reply.push(line.clone()),
            "message_end" if role == Some("assistant") => {
                reply.push(line.clone());
                faux.push_events(reply_events(&reply));
            }
            "tool_execution_start" => {
                let name = line["toolName"].as_str().expect("name").to_string();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            "tool_execution_update" => {
                let id = line["toolCallId"].as_str().expect("id").to_string();
                steps
                    .entry(id)
                    .or_default()
                    .push((index, Step::Update(tool_output(&line["partialResult"]))));
                index += 1;
            }
            "tool_execution_end" => {
                let id = line["toolCallId"].as_str().expect("id").to_string();
                let is_error = line["isError"].as_bool().expect("isError");
                steps
                    .entry(id)
                    .or_default()
                    .push((index, Step::End(tool_output(&line["result"]), is_error)));
                index += 1;
            }
            _ => {}
        }
    }
    let (cursor, position) = watch::channel(0);
    let shared = Arc::new(Script {
        steps: Mutex::new(steps),
        position,
    });
    let tools = names
        .into_iter()
        .map(|name| {
            Arc::new(ReplayTool {
                name,
                script: shared.clone(),
            }) as Arc<dyn AgentTool>
        })
        .collect();
    Replay {
        faux,
        prompt: prompt.expect("a prompt"),
        tools,
        cursor,
    }
}

/// The recorded tool behaviour and the order its events must come out in.
struct Script {
    steps: Mutex<Steps>,
    /// How many update/end events have gone out.
    position: watch::Receiver<usize>,
}

/// Reports what the recorded tool reported, each step only when the recording says it is next.
struct ReplayTool {
    name: String,
    script: Arc<Script>,
}

#[async_trait::async_trait]
impl AgentTool for ReplayTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "replayed"
    }
    fn parameters(&self) -> Value {
        serde_json::json!({"type": "object"})
    }
    async fn execute(
        &self,
        tool_call_id: &str,
        _arguments: Value,
        _cancel: tokio_util::sync::CancellationToken,
        on_update: pi_agent::ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let mine = self
            .script
            .steps
            .lock()
            .unwrap()
            .remove(tool_call_id)
            .unwrap_or_default();
        let mut position = self.script.position.clone();
        for (index, step) in mine {
            position.wait_for(|p| *p == index).await.expect("cursor alive");
            match step {
                Step::Update(out) => on_update(out),
                Step::End(out, false) => return Ok(out),
                Step::End(out, true) => {
                    return Err(ToolError {
                        message: pi_ai::join_text(&out.content),
                        details: out.details,
                    })
                }
            }
        }
        Ok(ToolOutput::default())
    }
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

async fn check_transcript(name: &str) {
    let golden = load(name);
    let replay = replay(&golden);
    let agent = Agent::new(AgentOptions {
        model: model("mock-model"),
        tools: replay.tools,
        stream_fn: replay.faux.stream_fn(),
        ..Default::default()
    });
    let tx = replay.cursor;
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = lines.clone();
    agent.subscribe_fn(move |e| {
        if matches!(
            e,
            AgentEvent::ToolExecutionUpdate { .. } | AgentEvent::ToolExecutionEnd { .. }
        ) {
            tx.send_modify(|p| *p += 1);
        }
        l.lock().unwrap().push(e.to_json());
    });
    agent.prompt_messages(vec![replay.prompt]).await.unwrap();

    let ours: Vec<Value> = lines
        .lock()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l).expect("our line is JSON"))
        .collect();
    assert_eq!(ours.len(), golden.len(), "{name}: number of events");
    for (n, (mine, theirs)) in ours.iter().zip(&golden).enumerate() {
        let (mut mine, mut theirs) = (mine.clone(), theirs.clone());
        normalise(&mut mine);
        normalise(&mut theirs);
        if theirs["type"] == "message_update" {
            assert_eq!(keys(&mine), keys(&theirs), "{name} line {n}");
            let (me, te) = (&mine["assistantMessageEvent"], &theirs["assistantMessageEvent"]);
            assert_eq!(keys(me), keys(te), "{name} line {n}");
            assert_eq!(me.to_string(), te.to_string(), "{name} line {n}");
            assert_eq!(
                usage_shape(&mine["usage"]),
                usage_shape(&theirs["usage"]),
                "{name} line {n}"
            );
        } else {
            assert_eq!(mine.to_string(), theirs.to_string(), "{name} line {n}");
        }
    }
}

#[tokio::test]
async fn hello_json_matches_pi() {
    check_transcript("hello-json.stdout").await;
}

#[tokio::test]
async fn tools_json_openai_matches_pi() {
    check_transcript("tools-json-mock-openai.stdout").await;
}

#[tokio::test]
async fn tools_json_anthropic_matches_pi() {
    check_transcript("tools-json-mock-anthropic.stdout").await;
}

#[tokio::test]
async fn tools_json_responses_matches_pi() {
    check_transcript("tools-json-mock-responses.stdout").await;
}
