//! RPC mode against pi's golden command/response pairs, and the server loop over in-memory
//! pipes with fake backends: overlapping commands, event ordering, parse errors, extension UI
//! round trips, and EOF while work is in flight.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use pi_ai::{ImageContent, Model, ThinkingLevel};
use pi_coding_agent::modes::rpc::*;

/// The command/response pairs pi 1.6 answered (`PI_GOLDEN_DIR` overrides where they are).
fn golden_text() -> String {
    let dir = std::env::var("PI_GOLDEN_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/golden-1.6").into());
    let path = std::path::Path::new(&dir).join("rpc.responses.jsonl");
    std::fs::read_to_string(&path).unwrap_or_else(|_| {
        println!("skipped: no {}", path.display());
        String::new()
    })
}

fn golden_pairs() -> Vec<(Value, Value)> {
    golden_text()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("golden line");
            (v["command"].clone(), v["response"].clone())
        })
        .collect()
}

/// Same keys in the same order, same values; numbers compared as numbers (the golden file was
/// re-serialized, so `6e-06` and `0.000006` are the same value).
fn assert_same(got: &Value, want: &Value, at: &str) {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            let gk: Vec<&String> = g.keys().collect();
            let wk: Vec<&String> = w.keys().collect();
            assert_eq!(gk, wk, "keys at {at}");
            for (k, wv) in w {
                assert_same(&g[k], wv, &format!("{at}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "length at {at}");
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                assert_same(gv, wv, &format!("{at}[{i}]"));
            }
        }
        (Value::Number(g), Value::Number(w)) => assert_eq!(g.as_f64(), w.as_f64(), "number at {at}"),
        _ => assert_eq!(got, want, "value at {at}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing and serialization of every golden pair.
// ---------------------------------------------------------------------------------------------

#[test]
fn every_golden_command_parses_and_reserializes() {
    for (command, _) in golden_pairs() {
        let line = command.to_string();
        let Incoming::Command(env) = parse_line(&line) else {
            panic!("{line} is not a command")
        };
        assert_eq!(env.id, Some(command["id"].clone()));
        match env.command {
            Ok(parsed) => {
                assert_eq!(parsed.type_name(), command["type"]);
                let again: Value = serde_json::from_str(&parsed.to_line(command["id"].as_str())).expect("json");
                assert_same(&again, &command, &line);
            }
            Err(CommandError::Unknown(t)) => assert_eq!(t, "no_such_command"),
            Err(e) => panic!("{line}: {e}"),
        }
    }
}

/// Decode a golden `data` into the wire type and serialize it back: field names, order,
/// omissions and nulls must survive.
fn round_trip<T: DeserializeOwned + serde::Serialize>(data: &Value, at: &str) {
    let typed: T = serde_json::from_value(data.clone()).unwrap_or_else(|e| panic!("{at}: {e}"));
    let again = serde_json::to_value(&typed).expect("serialize");
    assert_same(&again, data, at);
}

#[test]
fn every_golden_data_shape_round_trips_through_its_type() {
    for (command, response) in golden_pairs() {
        let at = format!("{} #{}", command["type"], command["id"]);
        let Some(data) = response.get("data") else { continue };
        match command["type"].as_str().expect("type") {
            "get_state" => round_trip::<RpcSessionState>(data, &at),
            "get_available_models" => round_trip::<ModelList>(data, &at),
            "get_messages" => round_trip::<MessageList>(data, &at),
            "get_last_assistant_text" => round_trip::<LastAssistantText>(data, &at),
            "get_session_stats" => round_trip::<SessionStats>(data, &at),
            "bash" => round_trip::<BashResult>(data, &at),
            "set_model" => round_trip::<Model>(data, &at),
            "cycle_thinking_level" => round_trip::<ThinkingLevelResult>(data, &at),
            "cycle_model" => round_trip::<CycleModelResult>(data, &at),
            "get_fork_messages" => round_trip::<ForkMessages>(data, &at),
            "compact" => round_trip::<CompactionResult>(data, &at),
            "get_commands" => round_trip::<CommandList>(data, &at),
            "export_html" => round_trip::<ExportedPath>(data, &at),
            "fork" => round_trip::<ForkResult>(data, &at),
            "clone" | "switch_session" | "new_session" => round_trip::<Cancelled>(data, &at),
            // pi 1.6: what became of the message.
            "prompt" => assert_eq!(data, &json!({"disposition": "started"}), "{at}"),
            "steer" | "follow_up" => assert_eq!(data, &json!({"disposition": "queued"}), "{at}"),
            other => panic!("no type for {other} data"),
        }
    }
}

#[test]
fn response_envelopes_match_pi() {
    let ok = RpcResponse::ok(Some(json!("3")), "prompt").to_line();
    assert_eq!(ok, r#"{"id":"3","type":"response","command":"prompt","success":true}"#);
    let no_id = RpcResponse::ok(None, "abort").to_line();
    assert_eq!(no_id, r#"{"type":"response","command":"abort","success":true}"#);
    let null_data = RpcResponse::ok_with(Some(json!("9")), "cycle_model", &Option::<CycleModelResult>::None).to_line();
    assert_eq!(
        null_data,
        r#"{"id":"9","type":"response","command":"cycle_model","success":true,"data":null}"#
    );
    let empty_text = RpcResponse::ok_with(None, "get_last_assistant_text", &LastAssistantText { text: None }).to_line();
    assert_eq!(
        empty_text,
        r#"{"type":"response","command":"get_last_assistant_text","success":true,"data":{}}"#
    );
    let failed = RpcResponse::err(Some(json!("15")), Some(json!("prompt")), ALREADY_PROCESSING).to_line();
    assert_eq!(
        failed,
        r#"{"id":"15","type":"response","command":"prompt","success":false,"error":"Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."}"#
    );
    let bash = BashResult {
        output: String::new(),
        exit_code: None,
        cancelled: true,
        truncated: false,
        full_output_path: None,
    };
    assert_eq!(
        serde_json::to_string(&bash).expect("json"),
        r#"{"output":"","cancelled":true,"truncated":false}"#
    );
    let usage = ContextUsage {
        tokens: None,
        context_window: 128000,
        percent: None,
    };
    assert_eq!(
        serde_json::to_string(&usage).expect("json"),
        r#"{"tokens":null,"contextWindow":128000,"percent":null}"#
    );
}

// ---------------------------------------------------------------------------------------------
// A client over in-memory pipes.
// ---------------------------------------------------------------------------------------------

struct Client {
    input: Option<DuplexStream>,
    output: Lines<BufReader<DuplexStream>>,
    server: JoinHandle<std::io::Result<()>>,
}

/// Start a server; `make` builds the backend from the server's output and UI handles.
fn start<B: RpcBackend>(make: impl FnOnce(LineOutput, ExtensionUi) -> Arc<B>) -> (Client, Arc<B>) {
    let (client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let server = RpcServer::new(server_out);
    let backend = make(server.output(), server.extension_ui());
    let b = Arc::clone(&backend);
    let handle = tokio::spawn(async move { server.run(b, server_in).await });
    let client = Client {
        input: Some(client_in),
        output: BufReader::new(client_out).lines(),
        server: handle,
    };
    (client, backend)
}

impl Client {
    async fn send_raw(&mut self, text: &str) {
        self.send_bytes(text.as_bytes()).await;
    }

    async fn send_bytes(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input open");
        input.write_all(bytes).await.expect("write");
    }

    async fn send(&mut self, value: Value) {
        self.send_raw(&format!("{value}\n")).await;
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.output.next_line())
            .await
            .expect("a line within 10 s (hang guard)")
            .expect("read")
            .expect("output still open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"))
    }

    /// Read until the response to `id`, returning it and the events before it.
    async fn response_to(&mut self, id: &str) -> (Value, Vec<Value>) {
        let mut events = Vec::new();
        loop {
            let v = self.recv().await;
            if v["type"] == "response" && v["id"] == id {
                return (v, events);
            }
            events.push(v);
        }
    }

    /// Close stdin and collect everything written until the server ends.
    async fn finish(mut self) -> Vec<Value> {
        self.input = None;
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(Duration::from_secs(10), self.output.next_line())
            .await
            .expect("output ends within 10 s (hang guard)")
            .expect("read")
        {
            rest.push(serde_json::from_str(&line).expect("json"));
        }
        self.server.await.expect("join").expect("server result");
        rest
    }
}

// ---------------------------------------------------------------------------------------------
// The golden session replayed against a scripted backend.
// ---------------------------------------------------------------------------------------------

/// Answers each command with the next golden result for its type.
struct Scripted {
    queues: Mutex<HashMap<String, VecDeque<Result<Value, String>>>>,
    models: Vec<Model>,
    set_models: Mutex<Vec<String>>,
    shut_down: AtomicBool,
}

impl Scripted {
    fn from_golden() -> Self {
        let mut queues: HashMap<String, VecDeque<Result<Value, String>>> = HashMap::new();
        let mut models = Vec::new();
        for (command, response) in golden_pairs() {
            let kind = command["type"].as_str().expect("type").to_string();
            if kind == "get_available_models" {
                let list: ModelList = serde_json::from_value(response["data"].clone()).expect("models");
                models = list.models;
            }
            let result = if response["success"] == true {
                Ok(response.get("data").cloned().unwrap_or(Value::Null))
            } else {
                Err(response["error"].as_str().expect("error").to_string())
            };
            queues.entry(kind).or_default().push_back(result);
        }
        Self {
            queues: Mutex::new(queues),
            models,
            set_models: Mutex::default(),
            shut_down: AtomicBool::new(false),
        }
    }

    fn next<T: DeserializeOwned>(&self, command: &str) -> RpcResult<T> {
        let next = self
            .queues
            .lock()
            .expect("lock")
            .get_mut(command)
            .and_then(VecDeque::pop_front);
        match next {
            Some(Ok(v)) => Ok(serde_json::from_value(v).unwrap_or_else(|e| panic!("{command}: {e}"))),
            Some(Err(e)) => Err(RpcError::new(e)),
            None => panic!("unexpected {command} call"),
        }
    }

    fn unit(&self, command: &str) -> RpcResult<()> {
        self.next::<Value>(command).map(|_| ())
    }
}

#[async_trait]
impl RpcBackend for Scripted {
    async fn prompt(&self, _request: PromptRequest, preflight: Preflight) -> RpcResult<()> {
        // A scripted success starts a run: answered at preflight, as a real prompt is.
        let result = self.unit("prompt");
        if result.is_ok() {
            preflight.succeed().await;
        }
        result
    }
    async fn steer(&self, _m: String, _i: Option<Vec<ImageContent>>) -> RpcResult<()> {
        self.unit("steer")
    }
    async fn follow_up(&self, _m: String, _i: Option<Vec<ImageContent>>) -> RpcResult<()> {
        self.unit("follow_up")
    }
    async fn abort(&self) -> RpcResult<()> {
        self.unit("abort")
    }
    async fn state(&self) -> RpcResult<RpcSessionState> {
        self.next("get_state")
    }
    async fn available_models(&self) -> RpcResult<Vec<Model>> {
        Ok(self.models.clone())
    }
    async fn set_model(&self, model: Model) -> RpcResult<()> {
        self.set_models
            .lock()
            .expect("lock")
            .push(format!("{}/{}", model.provider, model.id));
        Ok(())
    }
    async fn cycle_model(&self) -> RpcResult<Option<CycleModelResult>> {
        self.next("cycle_model")
    }
    async fn set_thinking_level(&self, _level: ThinkingLevel) -> RpcResult<()> {
        self.unit("set_thinking_level")
    }
    async fn cycle_thinking_level(&self) -> RpcResult<Option<ThinkingLevel>> {
        self.next::<Option<ThinkingLevelResult>>("cycle_thinking_level")
            .map(|r| r.map(|r| r.level))
    }
    async fn set_steering_mode(&self, _mode: QueueMode) -> RpcResult<()> {
        self.unit("set_steering_mode")
    }
    async fn set_follow_up_mode(&self, _mode: QueueMode) -> RpcResult<()> {
        self.unit("set_follow_up_mode")
    }
    async fn set_auto_compaction(&self, _enabled: bool) -> RpcResult<()> {
        self.unit("set_auto_compaction")
    }
    async fn set_auto_retry(&self, _enabled: bool) -> RpcResult<()> {
        self.unit("set_auto_retry")
    }
    async fn abort_retry(&self) -> RpcResult<()> {
        self.unit("abort_retry")
    }
    async fn compact(&self, _custom: Option<String>) -> RpcResult<CompactionResult> {
        self.next("compact")
    }
    async fn bash(&self, _command: String, _on_delta: BashDeltaFn) -> RpcResult<BashResult> {
        self.next("bash")
    }
    async fn abort_bash(&self) -> RpcResult<()> {
        self.unit("abort_bash")
    }
    async fn session_stats(&self) -> RpcResult<SessionStats> {
        self.next("get_session_stats")
    }
    async fn export_html(&self, _path: Option<String>) -> RpcResult<String> {
        self.next::<ExportedPath>("export_html").map(|p| p.path)
    }
    async fn new_session(&self, _parent: Option<String>) -> RpcResult<Cancelled> {
        self.next("new_session")
    }
    async fn switch_session(&self, _path: String) -> RpcResult<Cancelled> {
        self.next("switch_session")
    }
    async fn fork(&self, _entry_id: String) -> RpcResult<ForkResult> {
        self.next("fork")
    }
    async fn clone_session(&self) -> RpcResult<Cancelled> {
        self.next("clone")
    }
    async fn fork_messages(&self) -> RpcResult<Vec<ForkMessage>> {
        self.next::<ForkMessages>("get_fork_messages").map(|m| m.messages)
    }
    async fn last_assistant_text(&self) -> RpcResult<Option<String>> {
        self.next::<LastAssistantText>("get_last_assistant_text")
            .map(|t| t.text)
    }
    async fn set_session_name(&self, name: String) -> RpcResult<()> {
        assert_eq!(name, "golden-rpc");
        self.unit("set_session_name")
    }
    async fn messages(&self) -> RpcResult<Vec<Value>> {
        self.next::<MessageList>("get_messages").map(|m| m.messages)
    }
    async fn commands(&self) -> RpcResult<Vec<SlashCommand>> {
        self.next::<CommandList>("get_commands").map(|c| c.commands)
    }
    async fn shutdown(&self) {
        self.shut_down.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn golden_session_is_answered_exactly() {
    let (mut client, backend) = start(|_, _| Arc::new(Scripted::from_golden()));
    for (command, want) in golden_pairs() {
        client.send(command.clone()).await;
        let got = client.recv().await;
        assert_same(&got, &want, &command.to_string());
    }
    // The parse error of the same session.
    client.send_raw("this is not json\n").await;
    assert_same(
        &client.recv().await,
        &json!({"type": "response", "command": "parse", "success": false,
                "error": "Failed to parse command: Unexpected token 'h', \"this is not json\" is not valid JSON"}),
        "parse error",
    );
    assert!(client.finish().await.is_empty());
    assert!(backend.shut_down.load(Ordering::SeqCst));
    assert_eq!(
        *backend.set_models.lock().expect("lock"),
        ["mock-anthropic/mock-thinker", "mock-openai/mock-model"],
        "the unknown model never reaches the backend"
    );
}

// ---------------------------------------------------------------------------------------------
// Server behaviour with a hand-written fake.
// ---------------------------------------------------------------------------------------------

/// A small live backend: prompts start a background "run" that streams events until aborted;
/// bash waits for the test to release it.
struct Live {
    output: LineOutput,
    ui: ExtensionUi,
    level: Mutex<ThinkingLevel>,
    name: Mutex<Option<String>>,
    streaming: Arc<AtomicBool>,
    /// A run is between its `agent_start` and `agent_end` lines.
    running: Arc<AtomicBool>,
    stop_run: Arc<Notify>,
    release_bash: Arc<Notify>,
    shut_down: AtomicBool,
    exit_after_next: AtomicBool,
}

impl Live {
    fn new(output: LineOutput, ui: ExtensionUi) -> Arc<Self> {
        Arc::new(Self {
            output,
            ui,
            level: Mutex::new(ThinkingLevel::Off),
            name: Mutex::default(),
            streaming: Arc::default(),
            running: Arc::default(),
            stop_run: Arc::default(),
            release_bash: Arc::default(),
            shut_down: AtomicBool::new(false),
            exit_after_next: AtomicBool::new(false),
        })
    }

    fn fail<T>() -> RpcResult<T> {
        Err(RpcError::new("not in this fake"))
    }
}

#[async_trait]
impl RpcBackend for Live {
    async fn prompt(&self, request: PromptRequest, preflight: Preflight) -> RpcResult<()> {
        if request.message == "/ask" {
            // An extension command asking the user during preflight.
            let options = ["red".to_string(), "blue".to_string()];
            let picked = self.ui.select("Colour?", &options, DialogOptions::default()).await;
            self.output.send(&json!({"type": "picked", "value": picked})).await;
            return Ok(());
        }
        if self.streaming.load(Ordering::SeqCst) && request.streaming_behavior.is_none() {
            return Err(RpcError::already_processing());
        }
        self.streaming.store(true, Ordering::SeqCst);
        self.running.store(true, Ordering::SeqCst);
        // Answer, then run the whole prompt inside this future, as pi's `session.prompt` does.
        preflight.succeed().await;
        self.output.send(&json!({"type": "agent_start"})).await;
        let mut n = 0u32;
        loop {
            tokio::select! {
                () = self.stop_run.notified() => break,
                () = tokio::time::sleep(Duration::from_millis(2)) => {
                    self.output.send(&json!({"type": "message_update", "n": n})).await;
                    n += 1;
                }
            }
        }
        self.streaming.store(false, Ordering::SeqCst);
        self.output.send(&json!({"type": "agent_end"})).await;
        self.running.store(false, Ordering::SeqCst);
        if request.message == "fail late" {
            // Only events report failures after preflight.
            return Err(RpcError::new("provider exploded"));
        }
        Ok(())
    }
    async fn steer(&self, _m: String, _i: Option<Vec<ImageContent>>) -> RpcResult<()> {
        Self::fail()
    }
    async fn follow_up(&self, _m: String, _i: Option<Vec<ImageContent>>) -> RpcResult<()> {
        Self::fail()
    }
    async fn abort(&self) -> RpcResult<()> {
        self.stop_run.notify_one();
        Ok(())
    }
    async fn state(&self) -> RpcResult<RpcSessionState> {
        Ok(RpcSessionState {
            model: None,
            thinking_level: *self.level.lock().expect("lock"),
            is_streaming: self.streaming.load(Ordering::SeqCst),
            is_compacting: false,
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            session_file: None,
            session_id: "s1".into(),
            session_name: self.name.lock().expect("lock").clone(),
            auto_compaction_enabled: true,
            message_count: 0,
            pending_message_count: 0,
        })
    }
    async fn available_models(&self) -> RpcResult<Vec<Model>> {
        Ok(Vec::new())
    }
    async fn set_model(&self, _model: Model) -> RpcResult<()> {
        Self::fail()
    }
    async fn cycle_model(&self) -> RpcResult<Option<CycleModelResult>> {
        Ok(None)
    }
    async fn set_thinking_level(&self, level: ThinkingLevel) -> RpcResult<()> {
        *self.level.lock().expect("lock") = level;
        Ok(())
    }
    async fn cycle_thinking_level(&self) -> RpcResult<Option<ThinkingLevel>> {
        Ok(None)
    }
    async fn set_steering_mode(&self, _mode: QueueMode) -> RpcResult<()> {
        Ok(())
    }
    async fn set_follow_up_mode(&self, _mode: QueueMode) -> RpcResult<()> {
        Ok(())
    }
    async fn set_auto_compaction(&self, _enabled: bool) -> RpcResult<()> {
        Ok(())
    }
    async fn set_auto_retry(&self, _enabled: bool) -> RpcResult<()> {
        Ok(())
    }
    async fn abort_retry(&self) -> RpcResult<()> {
        Ok(())
    }
    async fn compact(&self, _custom: Option<String>) -> RpcResult<CompactionResult> {
        Err(RpcError::new("Nothing to compact (session too small)"))
    }
    async fn bash(&self, command: String, _on_delta: BashDeltaFn) -> RpcResult<BashResult> {
        self.release_bash.notified().await;
        Ok(BashResult {
            output: format!("{command}\n"),
            exit_code: Some(0),
            cancelled: false,
            truncated: false,
            full_output_path: None,
        })
    }
    async fn abort_bash(&self) -> RpcResult<()> {
        Ok(())
    }
    async fn session_stats(&self) -> RpcResult<SessionStats> {
        Self::fail()
    }
    async fn export_html(&self, _path: Option<String>) -> RpcResult<String> {
        Err(RpcError::export_in_memory())
    }
    async fn new_session(&self, _parent: Option<String>) -> RpcResult<Cancelled> {
        Ok(Cancelled { cancelled: false })
    }
    async fn switch_session(&self, _path: String) -> RpcResult<Cancelled> {
        Self::fail()
    }
    async fn fork(&self, entry_id: String) -> RpcResult<ForkResult> {
        // A bug in the backend must not take the server down.
        tokio::task::yield_now().await;
        panic!("fork exploded on {entry_id}");
    }
    async fn clone_session(&self) -> RpcResult<Cancelled> {
        Err(RpcError::clone_without_leaf())
    }
    async fn fork_messages(&self) -> RpcResult<Vec<ForkMessage>> {
        Ok(Vec::new())
    }
    async fn last_assistant_text(&self) -> RpcResult<Option<String>> {
        Ok(None)
    }
    async fn set_session_name(&self, name: String) -> RpcResult<()> {
        // pi emits session_info_changed before answering.
        self.output
            .send(&json!({"type": "session_info_changed", "name": name}))
            .await;
        *self.name.lock().expect("lock") = Some(name);
        if name_requests_exit(self) {
            self.exit_after_next.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
    async fn messages(&self) -> RpcResult<Vec<Value>> {
        Ok(Vec::new())
    }
    async fn commands(&self) -> RpcResult<Vec<SlashCommand>> {
        Ok(Vec::new())
    }
    fn shutdown_requested(&self) -> bool {
        self.exit_after_next.load(Ordering::SeqCst)
    }
    async fn shutdown(&self) {
        self.stop_run.notify_one();
        // As the real backend does: a run being stopped finishes (its agent_end written)
        // before shutdown returns and the server drops what still runs.
        for _ in 0..1000 {
            if !self.running.load(Ordering::SeqCst) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        self.shut_down.store(true, Ordering::SeqCst);
        self.output.send(&json!({"type": "session_shutdown"})).await;
    }
}

fn name_requests_exit(live: &Live) -> bool {
    live.name.lock().expect("lock").as_deref() == Some("exit")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_state_is_answered_while_bash_runs_and_prompt_streams() {
    let (mut client, backend) = start(Live::new);
    client.send(json!({"id": "p", "type": "prompt", "message": "go"})).await;
    let (resp, _) = client.response_to("p").await;
    assert_eq!(resp["success"], true);
    client
        .send(json!({"id": "b", "type": "bash", "command": "echo hi"}))
        .await;
    client.send(json!({"id": "s", "type": "get_state"})).await;
    let (state, events) = client.response_to("s").await;
    assert_eq!(state["data"]["isStreaming"], true);
    assert!(
        events.iter().all(|e| e["type"] != "response"),
        "bash still running: {events:?}"
    );
    // A second prompt without streamingBehavior is rejected, with its id.
    client
        .send(json!({"id": "p2", "type": "prompt", "message": "again"}))
        .await;
    let (rejected, _) = client.response_to("p2").await;
    assert_same(
        &rejected,
        &json!({"id": "p2", "type": "response", "command": "prompt", "success": false, "error": ALREADY_PROCESSING}),
        "busy prompt",
    );
    backend.release_bash.notify_one();
    let (bash, _) = client.response_to("b").await;
    assert_eq!(bash["data"]["output"], "echo hi\n");
    client.send(json!({"id": "a", "type": "abort"})).await;
    let (abort, before_abort_response) = client.response_to("a").await;
    assert_eq!(abort["success"], true);
    let rest = client.finish().await;
    // agent_end may be written just before or just after the abort's response.
    assert!(before_abort_response
        .iter()
        .chain(&rest)
        .any(|e| e["type"] == "agent_end"));
}

#[tokio::test]
async fn pipelined_commands_see_each_others_effects_in_order() {
    let (mut client, _backend) = start(Live::new);
    client
        .send_raw(concat!(
            r#"{"id":"1","type":"set_thinking_level","level":"high"}"#,
            "\n",
            r#"{"id":"2","type":"get_state"}"#,
            "\n",
            r#"{"id":"3","type":"set_session_name","name":"  named  "}"#,
            "\n",
            r#"{"id":"4","type":"get_state"}"#,
            "\n",
        ))
        .await;
    assert_eq!(client.recv().await["id"], "1");
    let state = client.recv().await;
    assert_eq!(state["data"]["thinkingLevel"], "high");
    let event = client.recv().await;
    assert_same(
        &event,
        &json!({"type": "session_info_changed", "name": "named"}),
        "event before response",
    );
    assert_eq!(client.recv().await["id"], "3");
    assert_eq!(client.recv().await["data"]["sessionName"], "named");
    client.finish().await;
}

#[tokio::test]
async fn bad_lines_get_pis_answers() {
    let (mut client, _backend) = start(Live::new);
    client.send_raw("\n").await;
    assert_same(
        &client.recv().await,
        &json!({"type": "response", "command": "parse", "success": false, "error": "Failed to parse command: Unexpected end of JSON input"}),
        "empty line",
    );
    client.send(json!({"id": "x", "type": "nope"})).await;
    assert_same(
        &client.recv().await,
        &json!({"id": "x", "type": "response", "command": "nope", "success": false, "error": "Unknown command: nope"}),
        "unknown",
    );
    client
        .send(json!({"id": "n", "type": "set_session_name", "name": "   "}))
        .await;
    assert_same(
        &client.recv().await,
        &json!({"id": "n", "type": "response", "command": "set_session_name", "success": false, "error": "Session name cannot be empty"}),
        "empty name",
    );
    // 0.73: handler failures keep id and command.
    client.send(json!({"id": 5, "type": "compact"})).await;
    assert_same(
        &client.recv().await,
        &json!({"id": 5, "type": "response", "command": "compact", "success": false, "error": "Nothing to compact (session too small)"}),
        "handler error",
    );
    client.send(json!({"id": "c", "type": "clone"})).await;
    assert_eq!(
        client.recv().await["error"],
        "Cannot clone session: no current entry selected"
    );
    client
        .send(json!({"id": "m", "type": "set_model", "provider": "nope", "modelId": "missing"}))
        .await;
    assert_eq!(client.recv().await["error"], "Model not found: nope/missing");
    client.send(json!({"id": "t", "type": "get_last_assistant_text"})).await;
    assert_same(
        &client.recv().await,
        &json!({"id": "t", "type": "response", "command": "get_last_assistant_text", "success": true, "data": {}}),
        "no text",
    );
    client.send(json!({"id": "cy", "type": "cycle_model"})).await;
    assert_same(
        &client.recv().await,
        &json!({"id": "cy", "type": "response", "command": "cycle_model", "success": true, "data": null}),
        "cycle nothing",
    );
    // Invalid UTF-8 becomes U+FFFD, as in Node; the id is echoed so.
    client
        .send_bytes(b"{\"id\":\"a\xff\",\"type\":\"get_last_assistant_text\"}\n")
        .await;
    assert_eq!(client.recv().await["id"], "a\u{fffd}");
    // JavaScript's trim: no-break space and line separators go too.
    client
        .send(json!({"id": "u", "type": "set_session_name", "name": "  \u{a0}x\u{2028} "}))
        .await;
    let (named, events) = client.response_to("u").await;
    assert_eq!(named["success"], true);
    assert_eq!(events, [json!({"type": "session_info_changed", "name": "x"})]);
    client.send(json!({"id": "f", "type": "fork", "entryId": "e1"})).await;
    assert_same(
        &client.recv().await,
        &json!({"id": "f", "type": "response", "command": "fork", "success": false, "error": "fork exploded on e1"}),
        "panic",
    );
    // A stray UI response is ignored: the next answer is the get_state below.
    client
        .send(json!({"type": "extension_ui_response", "id": "unknown", "value": "x"}))
        .await;
    // CRLF input and a final line without a newline.
    client.send_raw("{\"id\":\"crlf\",\"type\":\"get_state\"}\r\n").await;
    assert_eq!(client.recv().await["id"], "crlf");
    client.send_raw(r#"{"id":"last","type":"abort"}"#).await;
    let rest = client.finish().await;
    assert_eq!(rest.first().map(|v| v["id"].clone()), Some(json!("last")));
}

#[tokio::test]
async fn extension_dialog_round_trip_during_a_command() {
    let (mut client, _backend) = start(Live::new);
    client
        .send(json!({"id": "ask", "type": "prompt", "message": "/ask"}))
        .await;
    let request = client.recv().await;
    assert_eq!(request["type"], "extension_ui_request");
    assert_eq!(request["method"], "select");
    assert_eq!(request["options"], json!(["red", "blue"]));
    // Other commands are served while the dialog waits.
    client.send(json!({"id": "s", "type": "get_state"})).await;
    assert_eq!(client.recv().await["id"], "s");
    client
        .send(json!({"type": "extension_ui_response", "id": request["id"], "value": "blue"}))
        .await;
    assert_same(
        &client.recv().await,
        &json!({"type": "picked", "value": "blue"}),
        "picked",
    );
    assert_same(
        &client.recv().await,
        &json!({"id": "ask", "type": "response", "command": "prompt", "success": true, "data": {"disposition": "handled"}}),
        "an extension command is handled, no run follows",
    );
    client.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eof_while_a_prompt_runs_waits_for_owed_responses_then_shuts_down() {
    let (mut client, backend) = start(Live::new);
    client.send(json!({"id": "p", "type": "prompt", "message": "go"})).await;
    client
        .send(json!({"id": "b", "type": "bash", "command": "sleepy"}))
        .await;
    let (resp, _) = client.response_to("p").await;
    assert_eq!(resp["success"], true);
    // Close stdin while bash is in flight and the run streams; bash's answer is still owed.
    client.input = None;
    let release = Arc::clone(&backend.release_bash);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        release.notify_one();
    });
    let rest = client.finish().await;
    let bash_at = rest
        .iter()
        .position(|v| v["id"] == "b")
        .expect("bash answered after EOF");
    let shutdown_at = rest
        .iter()
        .position(|v| v["type"] == "session_shutdown")
        .expect("shutdown event");
    assert!(bash_at < shutdown_at, "owed responses come before shutdown");
    assert!(backend.shut_down.load(Ordering::SeqCst));
    assert!(rest.iter().all(|v| v["type"] != "response" || v["id"] == "b"));
}

#[tokio::test]
async fn requested_shutdown_ends_the_loop_after_the_command() {
    let (mut client, backend) = start(Live::new);
    client
        .send(json!({"id": "x", "type": "set_session_name", "name": "exit"}))
        .await;
    let (resp, _) = client.response_to("x").await;
    assert_eq!(resp["success"], true);
    // The input stays open, yet the server ends.
    let server = std::mem::replace(&mut client.server, tokio::spawn(async { Ok(()) }));
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("server ends (hang guard)")
        .expect("join")
        .expect("ok");
    assert!(backend.shut_down.load(Ordering::SeqCst));
    assert_eq!(client.recv().await["type"], "session_shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_answers_once_at_preflight_before_its_events() {
    let (mut client, _backend) = start(Live::new);
    client
        .send(json!({"id": "p", "type": "prompt", "message": "fail late"}))
        .await;
    assert_same(
        &client.recv().await,
        &json!({"id": "p", "type": "response", "command": "prompt", "success": true, "data": {"disposition": "started"}}),
        "the response comes first",
    );
    assert_eq!(client.recv().await["type"], "agent_start");
    client.send(json!({"id": "a", "type": "abort"})).await;
    let mut seen = Vec::new();
    loop {
        let v = client.recv().await;
        let end = v["type"] == "agent_end";
        seen.push(v);
        if end {
            break;
        }
    }
    // The prompt future has now failed; a later command flushes anything it might have written.
    client.send(json!({"id": "s", "type": "get_state"})).await;
    let (state, events) = client.response_to("s").await;
    assert_eq!(state["data"]["isStreaming"], false);
    seen.extend(events);
    seen.extend(client.finish().await);
    assert!(
        seen.iter().all(|v| v["id"] != "p"),
        "no second prompt response: {seen:?}"
    );
}
