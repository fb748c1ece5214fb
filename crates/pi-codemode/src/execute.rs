//! One codemode call from start to result: parse the options line, wait for a worker, run the
//! script in the sandbox while answering its tool calls and discovery helpers through the
//! [`CodemodeHost`], cancel what is still running when it ends, and lay out the result.

use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::stream::{FuturesUnordered, StreamExt};
use serde::Serialize;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::declarations::{to_identifier, ToolDeclaration};
use crate::output::{self, Block};
use crate::pool::{self, NoWorker};
use crate::sandbox::{self, Ending, Reply, Request, ScriptSpec, StopFlag};
use crate::source::{parse_source, SourceError};

/// How many characters of a call's arguments and error the call list keeps.
const ARGS_PREVIEW_CHARS: usize = 200;
const ERROR_PREVIEW_CHARS: usize = 500;
/// `models.classify()` and `models.generateImages()` calls one script may have in flight.
const MAX_CONCURRENT_MODEL_CALLS: usize = 4;
pub const DEFAULT_SEARCH_LIMIT: usize = 8;
/// How long calls still running at the end get to notice their cancellation.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// A group of tools, such as one MCP server's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Namespace {
    pub name: String,
    /// Other names that find it (an MCP server's configured name).
    pub aliases: Vec<String>,
    pub description: Option<String>,
    pub instructions: Option<String>,
}

impl Namespace {
    /// `mcp__dev-radius`, `mcp__dev_radius`, `dev-radius` and `dev_radius` all name the same one.
    pub fn is_named(&self, query: &str) -> bool {
        let wanted = to_identifier(query);
        std::iter::once(&self.name)
            .chain(self.aliases.iter())
            .any(|name| name == query || to_identifier(name) == wanted)
    }
}

/// A tool a script may call.
#[derive(Debug, Clone)]
pub struct ScriptTool {
    pub declaration: ToolDeclaration,
    pub namespace: Option<Namespace>,
}

/// What a nested call produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutcome {
    /// The result's text blocks joined by newlines.
    pub text: String,
    pub structured: Option<Value>,
    /// An image block `{type, data, mimeType, note}` (what `read` of an image resolves to).
    pub image: Option<Value>,
    pub is_error: bool,
    /// The id the call ran under.
    pub call_id: Option<String>,
}

/// What the product gives codemode: the tools, the calls through its tool pipeline, the
/// ranking of `searchTools`, and the store of the session's branch.
#[async_trait]
pub trait CodemodeHost: Send + Sync {
    /// Every tool a script may call (never `codemode` itself).
    fn callable_tools(&self) -> Vec<ScriptTool>;
    /// Run one nested call through the tool pipeline (validation, hooks, abort).
    async fn call_tool(&self, call_id: String, name: &str, args: Value, cancel: CancellationToken) -> ToolOutcome;
    /// Names of the tools that best match `query`, best first.
    fn search_tools(&self, tools: &[ScriptTool], query: &str, limit: usize) -> Vec<String>;
    /// The store as the script starts with it.
    fn load_store(&self) -> Map<String, Value>;
    /// A successful script's writes.
    fn save_store(&self, set: Map<String, Value>, delete: Vec<String>);
    /// The catalogue entries of one kind (of one provider), for `models.*`; `available` keeps
    /// those the session has credentials for. `None` from [`CodemodeHost::models_docs`]
    /// leaves `models` out of the script's globals.
    fn models_of_type(&self, _kind: crate::ModelKind, _provider: Option<&str>, _available: bool) -> Vec<Value> {
        Vec::new()
    }
    /// Where the `models` reference for scripts lives (`None`: no `models` global).
    fn models_docs(&self) -> Option<String> {
        None
    }
    /// Run a checked `models.classify()` / `models.generateImages()` call with the session's
    /// credentials. The result is what the script gets (`{provider, model, answers | output,
    /// usage?, stopReason, errorMessage?}`): provider failures and aborts are in it, never
    /// thrown.
    async fn run_model(&self, call: crate::models::ModelCall, _cancel: CancellationToken) -> Value {
        json!({
            "provider": call.model.get("provider").cloned().unwrap_or(Value::Null),
            "model": call.model.get("id").cloned().unwrap_or(Value::Null),
            "stopReason": "error",
            "errorMessage": format!("{}() cannot run models in this host", call.name),
        })
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRecord {
    pub id: String,
    pub name: String,
    pub args: String,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A model call's cost in USD, when the service reports usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// The tool result of a script.
#[derive(Debug, Clone, PartialEq)]
pub struct CodemodeResult {
    pub content: Vec<Block>,
    /// `{calls: [...], fullOutputPath?}`.
    pub details: Value,
    pub is_error: bool,
    /// The summed usage of the script's model calls (`None` when none reported any).
    pub usage: Option<Value>,
}

/// Requests of one script (tool calls, searches, store writes) waiting for pi to take them.
const REQUEST_QUEUE: usize = 256;

/// Sandbox settings a caller may change (tests use a small heap).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub memory_limit: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_limit: sandbox::MEMORY_LIMIT_BYTES,
        }
    }
}

pub type UpdateFn = Arc<dyn Fn(Value) + Send + Sync>;

fn preview(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{head}...")
}

fn details_of(calls: &[CallRecord]) -> Value {
    json!({ "calls": calls })
}

struct Calls {
    records: Mutex<Vec<CallRecord>>,
    on_update: UpdateFn,
}

impl Calls {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<CallRecord>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn publish(&self) {
        let details = details_of(&self.lock());
        (self.on_update)(details);
    }

    /// Records a call that starts now (status `running`), tells the listener, and returns its
    /// index for the outcome.
    fn start(&self, id: String, name: String, args: String) -> usize {
        let index = {
            let mut records = self.lock();
            records.push(CallRecord {
                id,
                name,
                args,
                status: "running",
                duration_ms: None,
                error: None,
                cost: None,
            });
            records.len() - 1
        };
        self.publish();
        index
    }
}

/// The script value of a nested call: a tool with an output schema resolves to its structured
/// content (also on error results carrying one), an image read to its block, others to text;
/// other failures reject with the tool's error text.
fn script_value(tool: &ScriptTool, outcome: &ToolOutcome) -> Result<Value, String> {
    if tool.declaration.output_schema.is_some() {
        if let Some(structured) = &outcome.structured {
            return Ok(structured.clone());
        }
    }
    if outcome.is_error {
        return Err(if outcome.text.is_empty() {
            format!("Tool \"{}\" failed", tool.declaration.name)
        } else {
            outcome.text.clone()
        });
    }
    if let Some(image) = &outcome.image {
        return Ok(image.clone());
    }
    Ok(Value::String(outcome.text.clone()))
}

fn failed_before_start(started: Instant, error: String, calls: &[CallRecord]) -> CodemodeResult {
    CodemodeResult {
        content: vec![
            Block::Text(output::header(false, started.elapsed().as_secs_f64())),
            Block::Text(format!("Script error:\n{error}\n\nThe script did not start.")),
        ],
        details: details_of(calls),
        is_error: true,
        usage: None,
    }
}

/// Answer a discovery helper.
fn answer_global(host: &dyn CodemodeHost, tools: &[ScriptTool], name: &str, args: &[Value]) -> Result<Value, String> {
    let entry = |tool: &ScriptTool| json!({"name": to_identifier(&tool.declaration.name), "description": tool.declaration.sample()});
    match name {
        "searchTools" => {
            let Some(query) = args.first().and_then(Value::as_str) else {
                return Err("searchTools() expects a query string".to_string());
            };
            let options = args.get(1).filter(|v| !v.is_null());
            let limit = match options.and_then(|o| o.get("limit")) {
                None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
                Some(v) => v
                    .as_u64()
                    .filter(|n| *n > 0)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or("searchTools() limit must be a positive integer")?,
            };
            let namespace = match options.and_then(|o| o.get("namespace")) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.as_str()),
                Some(_) => return Err("searchTools() namespace must be a string".to_string()),
            };
            let candidates: Vec<ScriptTool> = tools
                .iter()
                .filter(|t| match namespace {
                    None | Some("") => true,
                    Some(ns) => t.namespace.as_ref().is_some_and(|n| n.is_named(ns)),
                })
                .cloned()
                .collect();
            let ranked = host.search_tools(&candidates, query, limit);
            Ok(Value::Array(
                ranked
                    .iter()
                    .filter_map(|name| candidates.iter().find(|t| &t.declaration.name == name))
                    .map(entry)
                    .collect(),
            ))
        }
        "describeTool" => {
            let Some(wanted) = args.first().and_then(Value::as_str) else {
                return Err("describeTool() expects a tool name".to_string());
            };
            Ok(tools
                .iter()
                .find(|t| t.declaration.name == wanted || to_identifier(&t.declaration.name) == wanted)
                .map(|t| Value::String(t.declaration.sample()))
                .unwrap_or(Value::Null))
        }
        "describeNamespace" => {
            let Some(wanted) = args.first().and_then(Value::as_str) else {
                return Err("describeNamespace() expects a namespace name".to_string());
            };
            let mut found: Option<&Namespace> = None;
            let mut names = Vec::new();
            for tool in tools {
                let Some(ns) = tool.namespace.as_ref().filter(|ns| ns.is_named(wanted)) else {
                    continue;
                };
                found.get_or_insert(ns);
                names.push(Value::String(to_identifier(&tool.declaration.name)));
            }
            let Some(ns) = found else {
                return Ok(Value::Null);
            };
            let mut out = Map::new();
            out.insert("name".into(), Value::String(ns.name.clone()));
            if let Some(d) = ns.description.as_ref().filter(|d| !d.is_empty()) {
                out.insert("description".into(), Value::String(d.clone()));
            }
            if let Some(i) = ns.instructions.as_ref().filter(|i| !i.is_empty()) {
                out.insert("instructions".into(), Value::String(i.clone()));
            }
            out.insert("tools".into(), Value::Array(names));
            Ok(Value::Object(out))
        }
        other => match (other.strip_prefix("models."), host.models_docs()) {
            (Some(function), Some(_)) => crate::models::answer(host, function, args),
            _ => Err(format!("{other}() is not available")),
        },
    }
}

/// Run one script. `Err` is a bad options line or empty input: the call fails before running.
pub async fn execute(
    host: Arc<dyn CodemodeHost>,
    tool_call_id: &str,
    input: &str,
    cancel: CancellationToken,
    on_update: UpdateFn,
    limits: Limits,
) -> Result<CodemodeResult, SourceError> {
    let started = Instant::now();
    let parsed = parse_source(input)?;
    let calls = Arc::new(Calls {
        records: Mutex::new(Vec::new()),
        on_update,
    });
    calls.publish();
    let tools = host.callable_tools();

    // The wait for a worker counts toward the script's deadline.
    let timeout_ms = parsed.options.timeout_ms;
    let deadline = timeout_ms.map(|ms| started + Duration::from_millis(ms));
    let wait = match timeout_ms {
        Some(ms) => Duration::from_millis(ms).min(pool::WORKER_WAIT),
        None => pool::WORKER_WAIT,
    };
    let permit = match pool::reserve(&cancel, wait).await {
        Ok(permit) => permit,
        Err(reason) => {
            let error = match (reason, timeout_ms) {
                (NoWorker::Aborted, _) => "Script aborted: The operation was aborted".to_string(),
                (NoWorker::TimedOut, Some(ms)) if Duration::from_millis(ms) <= pool::WORKER_WAIT => format!(
                    "Script timed out: Execution timed out after {ms} ms while waiting for a free codemode worker"
                ),
                (NoWorker::TimedOut, _) => format!(
                    "No codemode worker became free within {} seconds. All {} workers, shared by every session in this process, are held by other scripts. Retry after they finish.",
                    pool::WORKER_WAIT.as_secs(),
                    pool::max_workers()
                ),
            };
            return Ok(failed_before_start(started, error, &calls.lock()));
        }
    };

    let tools_json = Value::Array(
        tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.declaration.name,
                    "id": to_identifier(&t.declaration.name),
                    "description": t.declaration.sample(),
                })
            })
            .collect(),
    )
    .to_string();
    let store = host.load_store();
    let store_json = Value::Object(
        store
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.to_string())))
            .collect(),
    )
    .to_string();
    let mut globals: Vec<String> = vec!["searchTools".into(), "describeTool".into(), "describeNamespace".into()];
    if host.models_docs().is_some() {
        globals.extend(crate::models::FUNCTIONS.iter().map(|f| format!("models.{f}")));
    }
    let spec = ScriptSpec {
        code: parsed.code,
        tools_json,
        globals,
        store_json,
        deadline,
        timeout_ms,
        memory_limit: limits.memory_limit,
    };
    let (request_tx, mut requests) = tokio::sync::mpsc::channel(REQUEST_QUEUE);
    let (reply_tx, replies) = mpsc::channel();
    let stop = Arc::new(StopFlag::default());
    let finished = sandbox::spawn(
        spec,
        request_tx,
        replies,
        Arc::clone(&stop),
        Box::new(move || drop(permit)),
    );
    let mut finished = match finished {
        Ok(receiver) => receiver,
        Err(e) => {
            return Ok(failed_before_start(
                started,
                format!("Script sandbox failed: {e}"),
                &calls.lock(),
            ))
        }
    };

    // Not a child of `cancel`: on an abort the script must be marked stopped before its
    // running calls are cancelled, or a call's rejection could end it as a plain failure.
    let calls_cancel = CancellationToken::new();
    let mut running = FuturesUnordered::new();
    let mut count = 0usize;
    // `models.classify()` / `models.generateImages()` calls: at most four run at once per
    // script, the rest wait in call order.
    let model_slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_MODEL_CALLS));
    let mut models_running = FuturesUnordered::new();
    let mut model_count = 0usize;
    let mut model_usage: Option<Value> = None;
    let mut generated_images = 0usize;
    let mut aborted = false;
    let mut deadline_passed = deadline.is_none();
    let deadline_sleep = tokio::time::sleep_until(
        deadline
            .map(tokio::time::Instant::from_std)
            .unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86_400 * 365)),
    );
    tokio::pin!(deadline_sleep);
    let result = loop {
        tokio::select! {
            result = &mut finished => break result.ok(),
            Some(request) = requests.recv() => match request {
                Request::Call { id, name, args } => {
                    let Some(tool) = tools.iter().find(|t| t.declaration.name == name).cloned() else {
                        let _ = reply_tx.send(Reply::Settle { id, ok: false, payload: Some(format!("Tool {name} not found")) });
                        continue;
                    };
                    count += 1;
                    let call_id = format!("{tool_call_id}/{count}");
                    let args_value: Value = args.as_deref().and_then(|a| serde_json::from_str(a).ok()).unwrap_or_else(|| json!({}));
                    let index = calls.start(
                        call_id.clone(),
                        name.clone(),
                        preview(args.as_deref().unwrap_or_default(), ARGS_PREVIEW_CHARS),
                    );
                    let host = Arc::clone(&host);
                    let token = calls_cancel.child_token();
                    running.push(async move {
                        let began = Instant::now();
                        let outcome = host.call_tool(call_id, &name, args_value, token.clone()).await;
                        (id, index, tool, outcome, began.elapsed(), token.is_cancelled())
                    });
                }
                Request::Global { id, name, args } => {
                    let args: Vec<Value> = args.as_deref().and_then(|a| serde_json::from_str(a).ok()).unwrap_or_default();
                    let prepared = match (name.strip_prefix("models."), host.models_docs()) {
                        (Some(function), Some(docs)) => crate::models::prepare_call(host.as_ref(), function, &args, &docs),
                        _ => None,
                    };
                    match prepared {
                        Some(Err(message)) => {
                            let _ = reply_tx.send(Reply::Settle { id, ok: false, payload: Some(message) });
                            continue;
                        }
                        Some(Ok(call)) => {
                            model_count += 1;
                            let index = calls.start(
                                format!("{tool_call_id}/{}/{model_count}", call.name),
                                call.name.to_string(),
                                call.reference(),
                            );
                            let host = Arc::clone(&host);
                            let token = calls_cancel.child_token();
                            let slots = Arc::clone(&model_slots);
                            let kind = call.kind;
                            models_running.push(async move {
                                // The wait for a free slot counts toward the row's duration.
                                let began = Instant::now();
                                let _slot = slots.acquire_owned().await;
                                let result = host.run_model(call, token).await;
                                (id, index, kind, result, began.elapsed())
                            });
                            continue;
                        }
                        None => {}
                    }
                    let reply = match answer_global(host.as_ref(), &tools, &name, &args) {
                        Ok(Value::Null) => Reply::Settle { id, ok: true, payload: None },
                        Ok(value) => Reply::Settle { id, ok: true, payload: Some(value.to_string()) },
                        Err(message) => Reply::Settle { id, ok: false, payload: Some(message) },
                    };
                    let _ = reply_tx.send(reply);
                }
            },
            Some((id, index, tool, outcome, took, cancelled)) = running.next(), if !running.is_empty() => {
                let value = script_value(&tool, &outcome);
                {
                    let mut records = calls.lock();
                    if let Some(record) = records.get_mut(index) {
                        if let Some(call_id) = &outcome.call_id {
                            record.id = call_id.clone();
                        }
                        record.duration_ms = Some(took.as_secs_f64() * 1000.0);
                        if outcome.is_error {
                            record.status = if cancelled { "cancelled" } else { "error" };
                            let text = if outcome.text.is_empty() { format!("Tool \"{}\" failed", tool.declaration.name) } else { outcome.text.clone() };
                            record.error = Some(preview(&text, ERROR_PREVIEW_CHARS));
                        } else {
                            record.status = "ok";
                        }
                    }
                }
                calls.publish();
                let reply = match value {
                    Ok(value) => Reply::Settle { id, ok: true, payload: Some(value.to_string()) },
                    Err(message) => Reply::Settle { id, ok: false, payload: Some(message) },
                };
                let _ = reply_tx.send(reply);
            }
            Some((id, index, kind, result, took)) = models_running.next(), if !models_running.is_empty() => {
                {
                    let mut records = calls.lock();
                    if let Some(record) = records.get_mut(index) {
                        record.duration_ms = Some(took.as_secs_f64() * 1000.0);
                        record.status = match result.get("stopReason").and_then(Value::as_str) {
                            Some("stop") => "ok",
                            Some("aborted") => "cancelled",
                            _ => "error",
                        };
                        if let Some(message) = result.get("errorMessage").and_then(Value::as_str).filter(|m| !m.is_empty()) {
                            record.error = Some(preview(message, ERROR_PREVIEW_CHARS));
                        }
                        if let Some(usage) = result.get("usage").filter(|u| u.is_object()) {
                            record.cost = usage.pointer("/cost/total").and_then(Value::as_f64);
                            model_usage = Some(match model_usage.take() {
                                Some(total) => crate::models::combine_usage(&total, usage),
                                None => usage.clone(),
                            });
                        }
                    }
                }
                if kind == crate::ModelKind::Image {
                    generated_images += result
                        .get("output")
                        .and_then(Value::as_array)
                        .map_or(0, |blocks| blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("image")).count());
                }
                calls.publish();
                let _ = reply_tx.send(Reply::Settle { id, ok: true, payload: Some(result.to_string()) });
            }
            _ = cancel.cancelled(), if !aborted => {
                aborted = true;
                stop.stop();
                calls_cancel.cancel();
                let _ = reply_tx.send(Reply::Wake);
            }
            _ = &mut deadline_sleep, if !deadline_passed => {
                deadline_passed = true;
                // The VM notices the deadline itself; this only wakes it if it is waiting.
                let _ = reply_tx.send(Reply::Wake);
            }
        }
    };

    // Calls still running were cut off by the end of the script.
    calls_cancel.cancel();
    if !running.is_empty() || !models_running.is_empty() {
        let drain = async {
            while running.next().await.is_some() {}
            while models_running.next().await.is_some() {}
        };
        let _ = tokio::time::timeout(CANCEL_GRACE, drain).await;
    }
    for record in calls.lock().iter_mut() {
        if record.status == "running" {
            record.status = "cancelled";
        }
    }
    let result = result.unwrap_or_else(|| sandbox::ScriptResult {
        output: Vec::new(),
        ending: Ending::Failed(sandbox::ScriptError::Sandbox(
            "the sandbox thread ended without a result".into(),
        )),
    });

    let mut items = result.output;
    let ok = matches!(result.ending, Ending::Completed { .. });
    let mut error = None;
    match result.ending {
        Ending::Completed { value, writes } => {
            let mut set = Map::new();
            let mut delete = Vec::new();
            for (key, json) in writes {
                match json.and_then(|j| serde_json::from_str::<Value>(&j).ok()) {
                    Some(value) => {
                        delete.retain(|k| k != &key);
                        set.insert(key, value);
                    }
                    None => {
                        set.remove(&key);
                        if !delete.contains(&key) {
                            delete.push(key);
                        }
                    }
                }
            }
            if !set.is_empty() || !delete.is_empty() {
                host.save_store(set, delete);
            }
            if let Some(value) = value {
                items.push(sandbox::OutputItem::Text {
                    text: value,
                    console: false,
                });
            }
        }
        Ending::Failed(e) => error = Some(e),
    }
    let mut blocks = output::layout(&items);
    let records = calls.lock().clone();
    if let Some(error) = &error {
        let made: Vec<(String, String)> = records.iter().map(|r| (r.name.clone(), r.status.to_string())).collect();
        blocks.push(Block::Text(output::error_text(error, &made)));
    }
    if generated_images > 0 && !blocks.iter().any(|b| matches!(b, Block::Image { .. })) {
        let plural = if generated_images == 1 { "" } else { "s" };
        blocks.push(Block::Text(format!(
            "Note: models.generateImages() returned {generated_images} image{plural} that the script did not show. Show each image block of result.output with image(block)."
        )));
    }
    let budgeted = output::apply_budget(
        output::join_texts(blocks),
        parsed
            .options
            .max_output_tokens
            .unwrap_or(output::DEFAULT_MAX_OUTPUT_TOKENS),
    );
    let shown = output::join_texts(output::save_images(budgeted.blocks));
    let mut content = vec![Block::Text(output::header(ok, started.elapsed().as_secs_f64()))];
    content.extend(shown);
    let mut details = details_of(&records);
    if let (Some(path), Some(map)) = (&budgeted.full_output_path, details.as_object_mut()) {
        map.insert("fullOutputPath".into(), Value::String(path.display().to_string()));
    }
    Ok(CodemodeResult {
        content,
        details,
        is_error: !ok,
        usage: model_usage,
    })
}
