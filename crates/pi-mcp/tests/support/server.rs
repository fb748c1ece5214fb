//! A small MCP server written against the protocol text, not the SDK under test: its tools echo,
//! return images, fail, sleep (until cancelled), report progress, ask `roots/list`, write to stderr
//! and crash. Every message it receives is recorded so tests can check the wire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// A 1×1 red PNG.
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

#[derive(Default)]
pub struct State {
    /// Every message received, in order.
    pub received: Mutex<Vec<Value>>,
    running: Mutex<HashMap<String, CancellationToken>>,
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    next_id: Mutex<u64>,
    /// The protocol version to answer with; the client's when None.
    pub protocol_version: Mutex<Option<String>>,
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

fn tools() -> Vec<Value> {
    let object = |props: Value| json!({"type": "object", "properties": props});
    vec![
        json!({"name": "echo", "description": "Echo the text back.", "inputSchema": object(json!({"text": {"type": "string"}})),
               "annotations": {"readOnlyHint": true, "title": "Echo"}}),
        json!({"name": "red_pixel", "description": "A red pixel.", "inputSchema": {"type": "object"}}),
        json!({"name": "fail", "inputSchema": {}}),
        json!({"name": "sleep", "inputSchema": object(json!({"ms": {"type": "integer"}}))}),
        json!({"name": "progress", "inputSchema": object(json!({"steps": {"type": "integer"}, "delay_ms": {"type": "integer"}}))}),
        json!({"name": "roots", "inputSchema": {"type": "object"}}),
        json!({"name": "crash", "inputSchema": {"type": "object"}}),
        json!({"name": "spawn_child", "inputSchema": {"type": "object"}}),
    ]
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

impl State {
    /// Handle one message; everything the server sends goes to `out`.
    pub async fn handle(self: &Arc<Self>, message: Value, out: mpsc::UnboundedSender<Value>) {
        self.received
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(message.clone());
        let method = message.get("method").and_then(Value::as_str).map(str::to_string);
        let id = message.get("id").cloned();
        let Some(method) = method else {
            // A response to one of our requests.
            if let Some(id) = id {
                if let Some(waiter) = self
                    .waiting
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&id_key(&id))
                {
                    let _ = waiter.send(message);
                }
            }
            return;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = id else {
            if method == "notifications/initialized" {
                let _ = out.send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "logger": "test", "data": "server initialized\nsecond line"}}));
            }
            if method == "notifications/cancelled" {
                if let Some(request) = params.get("requestId") {
                    if let Some(token) = self
                        .running
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get(&id_key(request))
                    {
                        token.cancel();
                    }
                }
            }
            return;
        };
        let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        let answer = match method.as_str() {
            "initialize" => {
                let requested = params.get("protocolVersion").cloned().unwrap_or(json!("2025-11-25"));
                let chosen = self
                    .protocol_version
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
                    .map(Value::String)
                    .unwrap_or(requested);
                Some(reply(json!({
                    "protocolVersion": chosen,
                    "capabilities": {"tools": {"listChanged": true}, "resources": {}, "logging": {}},
                    "serverInfo": {"name": "pi-mcp-test", "version": "1.0.0"},
                    "instructions": "Test server for pi.\nSecond line."
                })))
            }
            "ping" => Some(reply(json!({}))),
            "tools/list" => {
                let all = tools();
                let page = match params.get("cursor").and_then(Value::as_str) {
                    None => json!({"tools": all[..3].to_vec(), "nextCursor": "page-2"}),
                    Some("page-2") => json!({"tools": all[3..].to_vec(), "nextCursor": ""}),
                    Some(_) => json!({"tools": []}),
                };
                Some(reply(page))
            }
            "tools/call" => Some(reply(
                self.call(&id, &params, &out).await.unwrap_or_else(|| json!(null)),
            )),
            other => Some(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("Method not found: {other}")}}),
            ),
        };
        if let Some(answer) = answer {
            // A cancelled call gets no answer.
            if answer.get("result").is_some_and(Value::is_null) {
                return;
            }
            let _ = out.send(answer);
        }
    }

    /// Send the client a request and wait (5 s at most) for its answer.
    async fn ask(&self, out: &mpsc::UnboundedSender<Value>, method: &str, params: Option<Value>) -> Option<Value> {
        let request_id = {
            let mut next = self.next_id.lock().unwrap_or_else(|p| p.into_inner());
            *next += 1;
            json!(format!("srv-{next}"))
        };
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id_key(&request_id), tx);
        let mut request = json!({"jsonrpc": "2.0", "id": request_id, "method": method});
        if let Some(params) = params {
            request["params"] = params;
        }
        let _ = out.send(request);
        match tokio::time::timeout(Duration::from_secs(5), rx).await {
            Ok(Ok(answer)) => Some(answer),
            _ => None,
        }
    }

    async fn call(self: &Arc<Self>, id: &Value, params: &Value, out: &mpsc::UnboundedSender<Value>) -> Option<Value> {
        let name = params.get("name").and_then(Value::as_str).unwrap_or("");
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        let int = |key: &str, default: u64| args.get(key).and_then(Value::as_u64).unwrap_or(default);
        let token = params.pointer("/_meta/progressToken").cloned();
        Some(match name {
            "echo" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                json!({"content": [{"type": "text", "text": format!("echoed: {text}")}], "structuredContent": {"echoed": text}})
            }
            "red_pixel" => json!({"content": [{"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"}]}),
            "fail" => json!({"content": [{"type": "text", "text": "it broke"}], "isError": true}),
            "sleep" => {
                let cancel = CancellationToken::new();
                self.running
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(id_key(id), cancel.clone());
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(int("ms", 10_000))) => text_result("slept"),
                    _ = cancel.cancelled() => return None,
                }
            }
            "progress" => {
                let steps = int("steps", 3);
                for step in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(int("delay_ms", 50))).await;
                    if let Some(token) = &token {
                        let _ = out.send(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": step, "total": steps, "message": format!("step {step}")}}));
                    }
                }
                text_result(&format!("done after {steps} steps"))
            }
            "roots" => self.ask(out, "roots/list", None).await.map_or_else(
                || text_result("no roots answer"),
                |answer| text_result(&answer.get("result").cloned().unwrap_or(Value::Null).to_string()),
            ),
            // Any request to the client (`method`, `params`); the whole answer comes back.
            "ask" => {
                let method = args.get("method").and_then(Value::as_str).unwrap_or("ping");
                match self.ask(out, method, args.get("params").cloned()).await {
                    Some(mut answer) => {
                        if let Some(answer) = answer.as_object_mut() {
                            answer.remove("id");
                            answer.remove("jsonrpc");
                        }
                        text_result(&answer.to_string())
                    }
                    None => text_result("no answer"),
                }
            }
            "notify_changed" => {
                let _ = out.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
                text_result("changed")
            }
            "crash" => {
                eprintln!("boom on stderr");
                std::process::exit(3);
            }
            "spawn_child" => {
                let child = std::process::Command::new("sleep").arg("300").spawn();
                match child {
                    Ok(child) => text_result(&child.id().to_string()),
                    Err(e) => json!({"content": [{"type": "text", "text": e.to_string()}], "isError": true}),
                }
            }
            other => json!({"content": [{"type": "text", "text": format!("unknown tool {other}")}], "isError": true}),
        })
    }
}

/// Serve on stdin/stdout until stdin closes. Writes the received messages to `log` (one JSON a line)
/// as they arrive, so a test can read them after the process ended.
pub async fn run_stdio(log: Option<std::path::PathBuf>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let state = Arc::new(State::default());
    if let Ok(version) = std::env::var("PI_MCP_TEST_PROTOCOL") {
        *state.protocol_version.lock().unwrap_or_else(|p| p.into_inner()) = Some(version);
    }
    eprintln!(
        "test server started in {}",
        std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default()
    );
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(message) = rx.recv().await {
            let line = format!("{message}\n");
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(path) = &log {
            use std::io::Write;
            if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
                let _ = writeln!(file, "{message}");
            }
        }
        let state = state.clone();
        let tx = tx.clone();
        tokio::spawn(async move { state.handle(message, tx).await });
    }
    drop(tx);
    let _ = tokio::time::timeout(Duration::from_millis(200), writer).await;
}
