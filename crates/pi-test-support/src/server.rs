//! The mock LLM server: accepts connections on 127.0.0.1, answers each API route from the
//! script, injects faults, and records every request.
//!
//! Base URLs clients need (see [`MockServer::base_url_for`]):
//! * OpenAI Chat Completions and Responses: `http://127.0.0.1:PORT/v1` (clients append
//!   `/chat/completions` or `/responses`),
//! * Anthropic Messages: `http://127.0.0.1:PORT` (the SDK appends `/v1/messages`),
//! * Google Generative AI: `http://127.0.0.1:PORT/v1beta` (clients append
//!   `/models/{model}:streamGenerateContent?alt=sse`).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::conversation::Api;
use crate::error::MockError;
use crate::http::{Conn, HttpRequest};
use crate::plan::Plan;
use crate::pyjson;
use crate::request_head;
use crate::script::{Fault, FaultKind, Script, Turn};
use crate::task_apis::TaskReply;
use crate::wire;

/// One request as the mock saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// 1-based, in arrival order, over the server's life.
    pub seq: usize,
    /// Seconds since the Unix epoch.
    pub time: f64,
    pub method: String,
    /// The request target, query included.
    pub path: String,
    /// The API of the route, `None` for unknown routes.
    pub api: Option<Api>,
    /// Lowercased names in arrival order.
    pub headers: Vec<(String, String)>,
    pub body_bytes: usize,
    /// The parsed JSON body (`Null` if it was not JSON).
    pub body: Value,
    /// Index of the turn that answered, within its turn list.
    pub turn_index: Option<usize>,
    /// The turn that answered, after `{{last_user}}` templating.
    pub turn: Option<Turn>,
    /// The fault that fired for this request, if any.
    pub fault: Option<Fault>,
}

impl RecordedRequest {
    /// A header's value (name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    /// The golden log line for this request (Python `json.dumps` style, no newline).
    pub fn to_log_line(&self) -> String {
        let mut headers = serde_json::Map::new();
        for (k, v) in &self.headers {
            match headers.get_mut(k) {
                Some(Value::String(existing)) => {
                    existing.push_str(", ");
                    existing.push_str(v);
                }
                _ => {
                    headers.insert(k.clone(), json!(v));
                }
            }
        }
        let mut line = json!({
            "seq": self.seq, "time": self.time, "method": self.method, "path": self.path,
            "api": self.api.map(Api::as_str), "headers": headers, "body_bytes": self.body_bytes,
            "body": self.body, "turn_index": self.turn_index,
            "turn": self.turn.as_ref().and_then(|t| serde_json::to_value(t).ok()),
        });
        if let Some(fault) = &self.fault {
            line["fault"] = serde_json::to_value(fault).unwrap_or(Value::Null);
        }
        pyjson::to_string(&line)
    }
}

#[derive(Default)]
pub(crate) struct State {
    requests: Vec<StoredRequest>,
    /// Requests seen so far, recorded or cleared.
    seen: usize,
    /// API requests answered so far (the `queue` mode's turn index).
    api_requests: usize,
    /// How often each turn's fault fired: key (rule, turn index).
    fault_hits: HashMap<(Option<usize>, usize), u32>,
    /// Faults for the next requests, whatever their turn.
    pending: VecDeque<Fault>,
    /// WebSocket upgrades accepted so far.
    pub websocket_connections: usize,
    /// The close frames clients sent: code and reason (`None` for a close without a frame).
    pub websocket_closes: Vec<Option<(u16, String)>>,
    /// Answer WebSocket upgrades with this status instead of accepting them.
    pub refuse_websockets: Option<u16>,
    /// Streamed replies the client stopped reading before their end (a write failed).
    streams_cut: usize,
}

pub(crate) struct Shared {
    script: Script,
    regexes: Vec<regex::Regex>,
    state: Mutex<State>,
    log: Option<tokio::sync::Mutex<tokio::fs::File>>,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave State inconsistent in a way that matters
        // to a test double; keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Options for [`MockServer::builder`].
pub struct MockServerBuilder {
    script: Script,
    port: u16,
    log: Option<PathBuf>,
}

impl MockServerBuilder {
    /// Listen on this port (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Append every request to this JSONL file, in the golden `*.requests.jsonl` format.
    pub fn log_file(mut self, path: impl AsRef<Path>) -> Self {
        self.log = Some(path.as_ref().to_owned());
        self
    }

    /// Bind and start serving.
    pub async fn start(self) -> Result<MockServer, MockError> {
        let regexes = self.script.compile()?;
        let log = match &self.log {
            Some(path) => {
                let file = tokio::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .await
                    .map_err(|source| MockError::Io {
                        path: path.clone(),
                        source,
                    })?;
                Some(tokio::sync::Mutex::new(file))
            }
            None => None,
        };
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .map_err(|source| MockError::Bind {
                port: self.port,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| MockError::Bind {
            port: self.port,
            source,
        })?;
        let shared = Arc::new(Shared {
            script: self.script,
            regexes,
            state: Mutex::new(State::default()),
            log,
        });
        let (stop_tx, stop_rx) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared), stop_rx));
        Ok(MockServer {
            addr,
            shared,
            stop: stop_tx,
            task: Some(task),
        })
    }
}

/// A running mock LLM server. Dropping it stops accepting and closes open connections.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Start on a free port of 127.0.0.1.
    pub async fn start(script: Script) -> Result<MockServer, MockError> {
        Self::builder(script).start().await
    }

    /// Start with options (fixed port, request log file).
    pub fn builder(script: Script) -> MockServerBuilder {
        MockServerBuilder {
            script,
            port: 0,
            log: None,
        }
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: the Anthropic base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the OpenAI (Chat Completions and Responses) base URL.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// The base URL a client of `api` is configured with.
    pub fn base_url_for(&self, api: Api) -> String {
        match api {
            Api::Openai | Api::Responses => self.base_url(),
            Api::Anthropic => self.url(),
            Api::Google => format!("{}/v1beta", self.url()),
            Api::Mistral => format!("{}/mistral", self.url()),
            Api::Bedrock => self.url(),
        }
    }

    /// How many streamed replies the client cut off (closed the connection before their end):
    /// a cancelled request shows up here.
    pub fn streams_cut(&self) -> usize {
        self.shared.state().streams_cut
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .state()
            .requests
            .iter_mut()
            .map(|stored| stored.record().clone())
            .collect()
    }

    /// Forget the recorded requests (turn choice does not depend on them).
    pub fn clear_requests(&self) {
        self.shared.state().requests.clear();
    }

    /// Answer the next `n` API requests with `fault`, whatever turn they would get; then serve
    /// normally. Retry behaviour is tested with this.
    pub fn fail_next(&self, n: usize, fault: Fault) {
        let mut state = self.shared.state();
        state.pending.extend(std::iter::repeat_n(fault, n));
    }

    /// WebSocket connections accepted so far (the Codex transport's).
    pub fn websocket_connections(&self) -> usize {
        self.shared.state().websocket_connections
    }

    /// The close frames clients sent so far: `(code, reason)`, `None` for a bare close.
    pub fn websocket_closes(&self) -> Vec<Option<(u16, String)>> {
        self.shared.state().websocket_closes.clone()
    }

    /// Answer WebSocket upgrades with `status` (or accept them again with `None`): a client
    /// that can fall back to SSE then does.
    pub fn refuse_websockets(&self, status: Option<u16>) {
        self.shared.state().refuse_websockets = status;
    }

    /// Stop accepting, close open connections and wait for the server task.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let for_connections = stop.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let shared = Arc::clone(&shared);
                let mut stop = for_connections.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = serve(Conn::new(stream), shared) => {}
                        _ = stop.wait_for(|s| *s) => {}
                    }
                });
            }
            _ = stop.wait_for(|s| *s) => break,
        }
    }
}

/// Serve requests on one connection until it closes or a fault drops it.
async fn serve(mut conn: Conn, shared: Arc<Shared>) {
    while let Ok(Some(request)) = conn.read_request().await {
        if crate::websocket::is_upgrade(&request) {
            crate::websocket::serve(conn, &shared, request).await;
            return;
        }
        let close = request.close;
        match handle(&mut conn, &shared, request).await {
            Ok(true) if !close => {}
            _ => return,
        }
    }
}

pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

fn json_headers() -> Vec<(&'static str, String)> {
    vec![("content-type", "application/json".to_owned())]
}

/// Answer one request. `Ok(true)`: the connection can serve another request.
async fn handle(conn: &mut Conn, shared: &Shared, request: HttpRequest) -> std::io::Result<bool> {
    let api = if request.method == "POST" {
        Api::from_path(&request.target)
    } else {
        None
    };
    let time = now();
    let record = || RecordedRequest {
        seq: 0,
        time,
        method: request.method.clone(),
        path: request.target.clone(),
        api,
        headers: request.headers.clone(),
        body_bytes: request.body.len(),
        body: Value::Null,
        turn_index: None,
        turn: None,
        fault: None,
    };
    // pi 1.6's image and classifier APIs: answered without a script.
    if crate::task_apis::may_be_task(&request) {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if let Some(task) = crate::task_apis::TaskApi::of(&request, &body) {
            let fault = shared.state().pending.pop_front();
            let mut recorded = record();
            recorded.fault = fault.clone();
            recorded.api = None;
            let reply = crate::task_apis::answer(task, &request, &body, fault.as_ref());
            push_record(shared, recorded, Body::Parsed(body)).await;
            return match reply {
                TaskReply::Json(status, reply) => {
                    conn.write_response(status, &json_headers(), reply.to_string().as_bytes())
                        .await?;
                    Ok(true)
                }
                TaskReply::Cut(bytes) => {
                    conn.write_response(200, &json_headers(), &bytes).await?;
                    Ok(true)
                }
                TaskReply::Drop => Ok(false),
            };
        }
    }
    let Some(api) = api else {
        push_record(shared, record(), Body::Raw(request.body)).await;
        let body = json!({"error": {"message": format!("no mock route for {} {}", request.method, request.target)}});
        conn.write_response(404, &json_headers(), body.to_string().as_bytes())
            .await?;
        return Ok(true);
    };
    // The answer needs a few fields; the body's tree is built only when a test reads the record.
    let head = match request_head::read(api, &request.body) {
        Some(head) => head,
        None => {
            let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            if !body.is_object() {
                push_record(shared, record(), Body::Parsed(body)).await;
                let body = wire::error_body(api, 400, Some("the request body is not a JSON object"));
                conn.write_response(400, &json_headers(), body.to_string().as_bytes())
                    .await?;
                return Ok(true);
            }
            request_head::from_value(api, &body)
        }
    };

    let (turn, index, fault) = choose_turn(shared, &head.facts);
    let model = match api {
        Api::Google => google_model(&request.target),
        Api::Bedrock => bedrock_model(&request.target),
        _ => head.model.unwrap_or_else(|| "mock-model".to_owned()),
    };
    let body_len = request.body.len();
    // Recorded before anything is answered, so a client that has its answer finds it recorded.
    let mut recorded = record();
    recorded.turn_index = Some(index);
    recorded.turn = Some(turn.clone());
    recorded.fault = fault.clone();
    push_record(shared, recorded, Body::Raw(request.body)).await;

    if let Some(Fault {
        kind:
            FaultKind::Http {
                status,
                message,
                retry_after,
                retry_after_ms,
            },
        ..
    }) = &fault
    {
        let mut headers = json_headers();
        if let Some(secs) = retry_after {
            headers.push(("retry-after", secs.to_string()));
        }
        if let Some(ms) = retry_after_ms {
            headers.push(("retry-after-ms", ms.to_string()));
        }
        if api == Api::Anthropic {
            headers.push(("request-id", format!("req_mock{index}")));
        }
        headers.extend(wire::error_headers(api, *status));
        let body = wire::error_body(api, *status, message.as_deref());
        conn.write_response(*status, &headers, body.to_string().as_bytes())
            .await?;
        return Ok(true);
    }

    let mut plan = Plan::new(&turn, index, &model, body_len);
    plan.custom_tools = head.custom_tools;
    let events = wire::stream_events(api, &plan);
    let headers = vec![
        ("content-type", wire::stream_content_type(api).to_owned()),
        ("cache-control", "no-cache".to_owned()),
    ];
    conn.start_chunked(200, &headers).await?;
    // Stream faults cut in after this many events (half the stream unless the script says).
    let stop_at = fault.as_ref().and_then(|f| match &f.kind {
        FaultKind::Drop { after_events }
        | FaultKind::Truncate { after_events }
        | FaultKind::ErrorEvent { after_events, .. } => {
            Some(after_events.unwrap_or(events.len() / 2).min(events.len()))
        }
        FaultKind::Http { .. } => None,
    });
    let delay = turn.delay_ms.filter(|ms| *ms > 0).map(Duration::from_millis);
    for (i, event) in events.iter().enumerate() {
        if Some(i) == stop_at {
            break;
        }
        if let (Some(delay), true) = (delay, i > 0) {
            tokio::time::sleep(delay).await;
        }
        if let Err(error) = conn.write_chunk(event).await {
            shared.state().streams_cut += 1;
            return Err(error);
        }
    }
    match fault.map(|f| f.kind) {
        // Close without the terminating chunk: the client sees the connection drop mid-body.
        Some(FaultKind::Drop { .. }) => Ok(false),
        Some(FaultKind::ErrorEvent {
            message, error_type, ..
        }) => {
            let event = wire::error_event(api, message.as_deref(), error_type.as_deref());
            if api == Api::Google {
                // Google's SDK only sees the error when it arrives as a read of its own.
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            conn.write_chunk(&event).await?;
            conn.finish_chunked().await?;
            Ok(true)
        }
        _ => {
            conn.finish_chunked().await?;
            Ok(true)
        }
    }
}

/// The turn that answers a conversation, and the fault that fires for it.
pub(crate) fn choose_turn(shared: &Shared, facts: &crate::script::ConversationFacts) -> (Turn, usize, Option<Fault>) {
    let mut state = shared.state();
    let choice = shared.script.choose(&shared.regexes, facts, state.api_requests);
    state.api_requests += 1;
    let turn = choice.turn.render(&facts.last_user);
    let fault = match state.pending.pop_front() {
        Some(fault) => Some(fault),
        None => turn.fault.clone().filter(|fault| {
            let hits = state.fault_hits.entry((choice.rule, choice.index)).or_insert(0);
            *hits += 1;
            fault.times.is_none_or(|times| *hits <= times)
        }),
    };
    (turn, choice.index, fault)
}

/// The model id of `/model/{id}/converse-stream`, percent-decoded.
fn bedrock_model(target: &str) -> String {
    let path = target.split('?').next().unwrap_or(target);
    let id = path
        .strip_prefix("/model/")
        .and_then(|rest| rest.strip_suffix("/converse-stream"))
        .unwrap_or("mock-model");
    url::form_urlencoded::parse(format!("m={id}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| id.to_owned())
}

fn google_model(target: &str) -> String {
    let path = target.split('?').next().unwrap_or(target);
    path.rsplit_once("/models/")
        .map(|(_, rest)| rest.split(':').next().unwrap_or(rest).to_owned())
        .unwrap_or_else(|| "mock-model".to_owned())
}

/// A recorded request's body: parsed, or its bytes until a test reads it.
pub(crate) enum Body {
    Parsed(Value),
    Raw(Vec<u8>),
}

impl Body {
    fn into_value(self) -> Value {
        match self {
            Body::Parsed(value) => value,
            Body::Raw(bytes) => serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }
}

/// A request as kept by the server: its body is parsed on first read.
pub(crate) struct StoredRequest {
    record: RecordedRequest,
    raw_body: Option<Vec<u8>>,
}

impl StoredRequest {
    fn new(mut record: RecordedRequest, body: Body) -> Self {
        match body {
            Body::Parsed(value) => {
                record.body = value;
                Self { record, raw_body: None }
            }
            Body::Raw(bytes) => Self {
                record,
                raw_body: Some(bytes),
            },
        }
    }

    /// The record with its body parsed (once).
    fn record(&mut self) -> &RecordedRequest {
        if let Some(bytes) = self.raw_body.take() {
            self.record.body = Body::Raw(bytes).into_value();
        }
        &self.record
    }
}

pub(crate) async fn push_record(shared: &Shared, mut record: RecordedRequest, body: Body) {
    let line = {
        let mut state = shared.state();
        state.seen += 1;
        record.seq = state.seen;
        let mut stored = StoredRequest::new(record, body);
        // The log is written as the request arrives, so it needs the tree now.
        let line = shared.log.as_ref().map(|_| stored.record().to_log_line());
        state.requests.push(stored);
        line
    };
    if let (Some(log), Some(mut line)) = (&shared.log, line) {
        line.push('\n');
        let mut file = log.lock().await;
        // The log is a convenience; a failed write must not fail the request.
        let _ = file.write_all(line.as_bytes()).await;
        let _ = file.flush().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn google_model_from_path() {
        assert_eq!(
            google_model("/v1beta/models/mock-model:streamGenerateContent?alt=sse"),
            "mock-model"
        );
    }
}
