#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Scripts against a host with two fake tools: output layout, nested calls and their
//! results, discovery helpers, the store, errors, and the sandbox's walls and limits.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use pi_codemode::{
    execute, Block, CodemodeHost, CodemodeResult, Limits, ModelKind, Namespace, ScriptTool, ToolDeclaration,
    ToolOutcome,
};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

/// One successful script's store writes: what it set and what it deleted.
type StoreWrite = (Map<String, Value>, Vec<String>);

#[derive(Default)]
struct FakeHost {
    calls: Mutex<Vec<(String, String, Value)>>,
    /// Model calls running now, and the most that ran at once.
    models_in_flight: Mutex<(usize, usize)>,
    saved: Mutex<Vec<StoreWrite>>,
    store: Mutex<Map<String, Value>>,
}

fn tools() -> Vec<ScriptTool> {
    vec![
        ScriptTool {
            declaration: ToolDeclaration {
                name: "echo".into(),
                description: "Echo the text back.".into(),
                input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                output_schema: None,
            },
            namespace: None,
        },
        ScriptTool {
            declaration: ToolDeclaration {
                name: "mcp__demo-srv__add".into(),
                description: "Add two numbers.".into(),
                input_schema: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
                output_schema: Some(json!({"type": "object"})),
            },
            namespace: Some(Namespace {
                name: "mcp__demo_srv".into(),
                aliases: vec!["demo-srv".into()],
                description: None,
                instructions: Some("Demo instructions.".into()),
            }),
        },
        ScriptTool {
            declaration: ToolDeclaration {
                name: "slow".into(),
                description: "Waits until cancelled.".into(),
                input_schema: json!({"type": "object"}),
                output_schema: None,
            },
            namespace: None,
        },
    ]
}

#[async_trait]
impl CodemodeHost for FakeHost {
    fn callable_tools(&self) -> Vec<ScriptTool> {
        tools()
    }

    async fn call_tool(&self, call_id: String, name: &str, args: Value, cancel: CancellationToken) -> ToolOutcome {
        self.calls
            .lock()
            .unwrap()
            .push((call_id, name.to_string(), args.clone()));
        match name {
            "echo" => match args.get("text").and_then(Value::as_str) {
                Some("fail") => ToolOutcome {
                    text: "echo refused".into(),
                    is_error: true,
                    ..Default::default()
                },
                Some(text) => ToolOutcome {
                    text: format!("echo: {text}"),
                    ..Default::default()
                },
                None => ToolOutcome {
                    text: "Validation failed for tool \"echo\": text is required".into(),
                    is_error: true,
                    ..Default::default()
                },
            },
            "mcp__demo-srv__add" => {
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                ToolOutcome {
                    text: sum.to_string(),
                    structured: Some(
                        json!({"content": [{"type": "text", "text": sum.to_string()}], "isError": false, "sum": sum}),
                    ),
                    ..Default::default()
                }
            }
            _ => {
                cancel.cancelled().await;
                ToolOutcome {
                    text: "Operation aborted".into(),
                    is_error: true,
                    ..Default::default()
                }
            }
        }
    }

    fn search_tools(&self, tools: &[ScriptTool], query: &str, limit: usize) -> Vec<String> {
        tools
            .iter()
            .filter(|t| t.declaration.description.to_lowercase().contains(&query.to_lowercase()))
            .take(limit)
            .map(|t| t.declaration.name.clone())
            .collect()
    }

    fn load_store(&self) -> Map<String, Value> {
        self.store.lock().unwrap().clone()
    }

    fn models_of_type(&self, kind: ModelKind, provider: Option<&str>, available: bool) -> Vec<Value> {
        let catalogue = [
            (
                ModelKind::Chat,
                json!({"id": "chat-1", "provider": "acme", "api": "x", "headers": {"secret": "k"}}),
            ),
            (
                ModelKind::Chat,
                json!({"id": "chat-2", "provider": "other", "api": "x"}),
            ),
            (
                ModelKind::Classifier,
                json!({"id": "judge", "provider": "acme", "api": "y"}),
            ),
            (
                ModelKind::Image,
                json!({"id": "painter", "provider": "acme", "api": "z", "headers": {"secret": "k"}}),
            ),
        ];
        catalogue
            .into_iter()
            .filter(|(k, m)| *k == kind && provider.is_none_or(|p| m["provider"] == p))
            .filter(|(_, m)| !available || m["provider"] == "acme")
            .map(|(_, m)| m)
            .collect()
    }

    fn models_docs(&self) -> Option<String> {
        Some("DOCS/codemode.md".into())
    }

    async fn run_model(&self, call: pi_codemode::ModelCall, cancel: CancellationToken) -> Value {
        {
            let mut flight = self.models_in_flight.lock().unwrap();
            flight.0 += 1;
            flight.1 = flight.1.max(flight.0);
        }
        let usage = json!({"input": 10, "output": 2, "totalTokens": 12, "cost": {"input": 0.25, "output": 0.5, "total": 0.75, "totalFromProvider": true}});
        let prompt = call
            .context
            .pointer("/input/0/text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let wait_ms = if prompt == "forever" { 3_600_000 } else { 30 };
        let aborted = tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(wait_ms)) => false,
            () = cancel.cancelled() => true,
        };
        self.models_in_flight.lock().unwrap().0 -= 1;
        let model = call.model["id"].clone();
        if aborted {
            return json!({"provider": "acme", "model": model, "output": [], "stopReason": "aborted", "errorMessage": "Request was aborted"});
        }
        match call.kind {
            ModelKind::Classifier if call.context.pointer("/state/fail") == Some(&json!(true)) => {
                json!({"provider": "acme", "model": model, "answers": {}, "stopReason": "error", "errorMessage": "401 bad key"})
            }
            ModelKind::Classifier => json!({"provider": "acme", "model": model,
                "answers": {"ok": {"type": "bool", "probability": 0.9}}, "usage": usage, "stopReason": "stop"}),
            _ => json!({"provider": "acme", "model": model, "usage": usage, "stopReason": "stop",
                "output": [{"type": "text", "text": format!("drew {prompt}")}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]}),
        }
    }

    fn save_store(&self, set: Map<String, Value>, delete: Vec<String>) {
        let mut store = self.store.lock().unwrap();
        for key in &delete {
            store.remove(key);
        }
        for (k, v) in &set {
            store.insert(k.clone(), v.clone());
        }
        self.saved.lock().unwrap().push((set, delete));
    }
}

/// The tests of this binary run at once; the default two workers would make them wait for
/// each other (the pool has a test of its own in `tests/workers.rs`).
fn enough_workers() {
    std::env::set_var("PI_CODEMODE_MAX_WORKERS", "32");
}

async fn run_with(host: &Arc<FakeHost>, code: &str, cancel: CancellationToken, limits: Limits) -> CodemodeResult {
    enough_workers();
    let host: Arc<dyn CodemodeHost> = Arc::clone(host) as Arc<dyn CodemodeHost>;
    execute(host, "call_1", code, cancel, Arc::new(|_| {}), limits)
        .await
        .unwrap()
}

async fn run(host: &Arc<FakeHost>, code: &str) -> CodemodeResult {
    run_with(host, code, CancellationToken::new(), Limits::default()).await
}

fn text_of(result: &CodemodeResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            Block::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// The output after the header line block.
fn body(result: &CodemodeResult) -> String {
    let text = text_of(result);
    text.split_once("Output:\n").map(|(_, b)| b.to_string()).unwrap_or(text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_calls_resolve_to_text_structured_values_and_errors() {
    let host = Arc::new(FakeHost::default());
    let result = run(
        &host,
        r#"const a = await tools.echo({text: "hi"});
const s = await tools.mcp__demo_srv__add({a: 2, b: 3});
const raw = await tools["mcp__demo-srv__add"]({a: 1, b: 1});
let failed;
try { await tools.echo({text: "fail"}); } catch (e) { failed = e.message; }
const settled = await Promise.allSettled([tools.echo({text: "x"}), tools.echo({})]);
console.log("done", 1, {k: true});
text(a);
return {s: s.sum, raw: raw.sum, failed, settled: settled.map(r => r.status)};"#,
    )
    .await;
    assert!(!result.is_error, "{}", text_of(&result));
    let Block::Text(header) = &result.content[0] else {
        panic!()
    };
    assert!(header.starts_with("Script completed\nWall time "), "{header}");
    assert!(header.ends_with(" seconds\nOutput:\n"));
    assert_eq!(
        body(&result),
        "==> text 1/2 <==\necho: hi\n==> text 2/2 <==\n{\"s\":5,\"raw\":2,\"failed\":\"echo refused\",\"settled\":[\"fulfilled\",\"rejected\"]}\n<console_output>\ndone 1 {\"k\":true}\n</console_output>"
    );
    let calls = host.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 6);
    assert_eq!(calls[0].0, "call_1/1");
    assert_eq!(calls[1].1, "mcp__demo-srv__add");
    let details = &result.details["calls"];
    assert_eq!(details.as_array().unwrap().len(), 6);
    assert_eq!(details[0]["status"], "ok");
    assert_eq!(details[0]["args"], "{\"text\":\"hi\"}");
    assert_eq!(details[3]["status"], "error");
    assert_eq!(details[3]["error"], "echo refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_helpers_and_unknown_tools() {
    let host = Arc::new(FakeHost::default());
    let result = run(
        &host,
        r#"const ns = await describeNamespace("demo-srv");
const found = await searchTools("numbers", {limit: 3});
const d = await describeTool("mcp__demo_srv__add");
const none = await describeTool("nope");
text(JSON.stringify({ns, found: found.map(f => f.name), d: d.split("\n")[0], none: none === undefined, n: ALL_TOOLS.length, has: "echo" in tools}));
tools.Echo({text: "x"});"#,
    )
    .await;
    assert!(result.is_error);
    let out = body(&result);
    assert!(out.starts_with(
        "{\"ns\":{\"name\":\"mcp__demo_srv\",\"instructions\":\"Demo instructions.\",\"tools\":[\"mcp__demo_srv__add\"]},\"found\":[\"mcp__demo_srv__add\"],\"d\":\"Add two numbers.\",\"none\":true,\"n\":3,\"has\":true}\nScript error:\nTypeError: tools.Echo does not exist. Did you mean tools.echo?"
    ), "{out}");
    assert!(
        out.contains("codemode.js:6"),
        "the stack names the script's line: {out}"
    );
    assert!(out.ends_with("\n\nNo tool calls were made."), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_keeps_writes_of_successful_scripts_only() {
    let host = Arc::new(FakeHost::default());
    let ok = run(
        &host,
        "store('k', {n: 1}); store('gone', 2); store('gone', undefined); return load('k').n",
    )
    .await;
    assert_eq!(body(&ok), "1");
    assert_eq!(host.store.lock().unwrap().get("k"), Some(&json!({"n": 1})));
    let failed = run(&host, "store('k', 'changed'); throw new Error('boom')").await;
    assert!(failed.is_error);
    assert!(
        body(&failed).starts_with("Script error:\nError: boom"),
        "{}",
        body(&failed)
    );
    assert_eq!(host.store.lock().unwrap().get("k"), Some(&json!({"n": 1})));
    let next = run(&host, "return load('k')").await;
    assert_eq!(body(&next), "{\"n\":1}");
    let big = run(&host, "store('big', 'x'.repeat(300000))").await;
    assert!(body(&big).contains("RangeError: store(\"big\")"), "{}", body(&big));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_has_no_way_out() {
    let host = Arc::new(FakeHost::default());
    let probe = r#"const kinds = {};
for (const name of ["require", "process", "fetch", "setTimeout", "setInterval", "XMLHttpRequest", "WebAssembly", "Deno", "Bun", "std", "os", "scriptArgs", "print", "__bridge"]) {
  kinds[name] = typeof globalThis[name];
}
let imported;
try { await import("os"); imported = "yes"; } catch (e) { imported = e.name; }
let viaFunction;
try { viaFunction = typeof (new Function("return this"))().process; } catch (e) { viaFunction = e.name; }
return {kinds, imported, viaFunction};"#;
    let result = run(&host, probe).await;
    assert!(!result.is_error, "{}", text_of(&result));
    let value: Value = serde_json::from_str(&body(&result)).unwrap();
    for (name, kind) in value["kinds"].as_object().unwrap() {
        assert_eq!(kind, "undefined", "{name} must not exist in the sandbox");
    }
    assert_ne!(value["imported"], "yes");
    assert_eq!(value["viaFunction"], "undefined");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_stop_runaway_scripts() {
    let host = Arc::new(FakeHost::default());
    let started = Instant::now();
    let spin = run(&host, "// @options: {\"timeout_ms\": 200}\nwhile (true) {}").await;
    assert!(spin.is_error);
    assert!(
        body(&spin).starts_with("Script error:\nScript timed out: Execution timed out after 200 ms"),
        "{}",
        body(&spin)
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    let limits = Limits {
        memory_limit: 32 * 1024 * 1024,
    };
    let hog = run_with(
        &host,
        "const a = []; while (true) a.push('x'.repeat(1 << 16) + a.length);",
        CancellationToken::new(),
        limits,
    )
    .await;
    assert!(hog.is_error);
    assert!(body(&hog).contains("out of memory"), "{}", body(&hog));

    let deep = run(
        &host,
        "function f(n) { return f(n + 1) + 1; } try { f(0); } catch (e) { return e.name; }",
    )
    .await;
    assert_eq!(body(&deep), "RangeError");
    // Uncaught, the error names its place on the first line at the column pi 1.6 gives it.
    let uncaught = run(&host, "function f(n) { return f(n + 1) + 1; } return f(0);").await;
    assert!(
        body(&uncaught)
            .starts_with("Script error:\nRangeError: Maximum call stack size exceeded\n    at f (codemode.js:1:57)\n"),
        "{}",
        body(&uncaught)
    );

    let stalled = run(&host, "await new Promise(() => {});").await;
    assert!(stalled.is_error);
    assert!(body(&stalled).contains("nothing can settle"), "{}", body(&stalled));

    enough_workers();
    let bad = execute(
        host.clone(),
        "c",
        "// @options: {\"x\": 1}\nreturn 1",
        CancellationToken::new(),
        Arc::new(|_| {}),
        Limits::default(),
    )
    .await;
    assert!(bad.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_stops_the_script_and_cancels_running_calls() {
    let host = Arc::new(FakeHost::default());
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let result = run_with(
        &host,
        "text('before'); await tools.slow({}); text('after');",
        cancel,
        Limits::default(),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(result.is_error);
    assert_eq!(
        body(&result),
        "before\nScript error:\nScript aborted: The operation was aborted\n\nTool calls made before the failure (they are not undone): slow (cancelled)"
    );
    assert_eq!(result.details["calls"][0]["status"], "cancelled");

    // A busy loop is interrupted too.
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let spin = run_with(&host, "for (;;) {}", cancel, Limits::default()).await;
    assert!(body(&spin).contains("Script aborted"), "{}", body(&spin));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_images_and_output_budget() {
    let host = Arc::new(FakeHost::default());
    let exited = run(&host, "text('a'); exit(); text('never');").await;
    assert!(!exited.is_error);
    assert_eq!(body(&exited), "a");

    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let shown = run(&host, &format!("image('data:image/png;base64,{png}'); text('after')")).await;
    assert!(!shown.is_error, "{}", text_of(&shown));
    assert!(
        matches!(&shown.content[1], Block::Text(t) if t.starts_with("[Image saved to ") && t.contains("(image/png, 70B)]")),
        "{:?}",
        shown.content
    );
    assert!(matches!(&shown.content[2], Block::Image { mime_type, .. } if mime_type == "image/png"));
    let remote = run(&host, "image('https://example.com/x.png')").await;
    assert!(body(&remote).contains("remote URLs are not fetched"));

    let long = run(
        &host,
        "// @options: {\"max_output_tokens\": 10}\ntext('z'.repeat(1000))",
    )
    .await;
    assert!(
        body(&long).starts_with("Warning: truncated output (original token count: 250)"),
        "{}",
        body(&long)
    );
    let path = long.details["fullOutputPath"].as_str().unwrap().to_string();
    assert_eq!(std::fs::read_to_string(&path).unwrap().len(), 1000);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_list_the_catalogue_and_check_arguments_as_pi_does() {
    let host = Arc::new(FakeHost::default());
    let result = run(
        &host,
        r#"const all = await models.getModelsOfType("chat");
const acme = await models.getModelsOfType("chat", "acme");
const available = await models.getAvailableOfType("chat");
const one = await models.getModelOfType("chat", "other", "chat-2");
const none = await models.getModelOfType("chat", "other", "zzz");
const errors = [];
const attempt = async (f) => { try { await f(); errors.push("no error"); } catch (e) { errors.push(e.message); } };
await attempt(() => models.getModelsOfType("x"));
await attempt(() => models.getModelsOfType("chat", 3));
await attempt(() => models.getModelOfType("chat", "acme"));
await attempt(() => models.classify(undefined, {}));
await attempt(() => models.classify({provider: "acme", id: "nope"}, {}));
await attempt(() => models.generateImages({provider: "acme", id: "chat-1"}, {}));
await attempt(() => models.classify({provider: "acme", id: "judge"}, {state: {}, questions: {}}));
return {all: all.map(m => m.id), acme: acme.length, headers: "headers" in all[0], available: available.map(m => m.id),
  one: one.id, none: none === undefined, keys: Object.keys(models), frozen: Object.isFrozen(models), errors};"#,
    )
    .await;
    assert!(!result.is_error, "{}", text_of(&result));
    let value: Value = serde_json::from_str(&body(&result)).unwrap();
    assert_eq!(value["all"], json!(["chat-1", "chat-2"]));
    assert_eq!(value["acme"], 1);
    assert_eq!(value["headers"], false, "headers can carry credentials");
    assert_eq!(value["available"], json!(["chat-1"]));
    assert_eq!(value["one"], "chat-2");
    assert_eq!(value["none"], true);
    assert_eq!(
        value["keys"],
        json!([
            "getModelsOfType",
            "getAvailableOfType",
            "getModelOfType",
            "classify",
            "generateImages"
        ])
    );
    assert_eq!(value["frozen"], true);
    // pi 1.6's messages, word for word.
    assert_eq!(
        value["errors"],
        json!([
            "Unknown model type \"x\". Use \"chat\", \"image\", or \"classifier\".",
            "provider must be a string",
            "models.getModelOfType(type, provider, id) expects three strings, got (a string, a string). The provider and the id are separate arguments, for example models.getModelOfType(\"classifier\", \"typesafe\", \"jev-latest\").",
            "models.classify() expects a classifier model as its first argument, got null. models.getModelOfType() returns undefined for an unknown provider or id. List the classifier models you can use with models.getAvailableOfType(\"classifier\").",
            "Unknown classifier model \"acme/nope\". List the classifier models you can use with models.getAvailableOfType(\"classifier\").",
            "\"acme/chat-1\" is a chat model, not an image model. List the image models you can use with models.getAvailableOfType(\"image\").",
            "models.classify() context.questions must map question IDs to questions, got {}. Expected context: { state: { ... }, images?: [{ type: \"image\", data: <base64>, mimeType }], questions: { <id>: { type: \"choice\", instructions, criteria: { <label>: <meaning> } } | { type: \"score\", instructions, criteria: [<lowest level>, ..., <highest level>] } | { type: \"bool\", instructions, criteria: { true: <meaning>, false: <meaning> } } } }. See \"Classify\" in DOCS/codemode.md."
        ])
    );
}

const QUESTION: &str = r#"{ok: {type: "bool", instructions: "Fine?", criteria: {true: "yes", false: "no"}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_calls_run_through_the_host_as_nested_rows_with_their_usage() {
    let host = Arc::new(FakeHost::default());
    let code = format!(
        r#"const judge = await models.getModelOfType("classifier", "acme", "judge");
const [good, bad] = await Promise.all([
  models.classify(judge, {{state: {{x: 1}}, questions: {QUESTION}}}),
  models.classify({{provider: "acme", id: "judge", baseUrl: "http://elsewhere"}}, {{state: {{fail: true}}, questions: {QUESTION}}}),
]);
const art = await models.generateImages({{provider: "acme", id: "painter"}}, {{input: [{{type: "text", text: "a fox"}}]}});
return {{good: [good.stopReason, good.answers.ok.probability], bad: [bad.stopReason, bad.errorMessage], art: art.output.map(b => b.type)}};"#
    );
    let result = run(&host, &code).await;
    assert!(!result.is_error, "{}", text_of(&result));
    let text = body(&result);
    let (value, note) = text.split_once('\n').unwrap();
    let value: Value = serde_json::from_str(value).unwrap();
    assert_eq!(value["good"], json!(["stop", 0.9]));
    assert_eq!(value["bad"], json!(["error", "401 bad key"]));
    assert_eq!(value["art"], json!(["text", "image"]));
    // An image the script never showed is pointed out.
    assert_eq!(
        note,
        "Note: models.generateImages() returned 1 image that the script did not show. Show each image block of result.output with image(block)."
    );
    let calls = result.details["calls"].as_array().unwrap();
    let rows: Vec<(&str, &str, &str, &str, Option<f64>)> = calls
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["name"].as_str().unwrap(),
                c["args"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
                c["cost"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                "call_1/models.classify/1",
                "models.classify",
                "acme/judge",
                "ok",
                Some(0.75)
            ),
            (
                "call_1/models.classify/2",
                "models.classify",
                "acme/judge",
                "error",
                None
            ),
            (
                "call_1/models.generateImages/3",
                "models.generateImages",
                "acme/painter",
                "ok",
                Some(0.75)
            ),
        ]
    );
    assert_eq!(calls[1]["error"], "401 bad key");
    assert!(calls.iter().all(|c| c["durationMs"].as_f64().is_some()));
    // The two successful calls' usage, summed.
    assert_eq!(
        result.usage,
        Some(
            json!({"input": 20, "output": 4, "totalTokens": 24, "cost": {"input": 0.5, "output": 1.0, "total": 1.5, "totalFromProvider": true}})
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_four_model_calls_run_at_once_and_an_abort_cancels_them() {
    let host = Arc::new(FakeHost::default());
    let result = run(
        &host,
        r#"const calls = [];
for (let i = 0; i < 9; i++) calls.push(models.generateImages({provider: "acme", id: "painter"}, {input: [{type: "text", text: "p" + i}]}));
const all = await Promise.all(calls);
return all.map(r => r.output[0].text).join(",");"#,
    )
    .await;
    assert!(!result.is_error, "{}", text_of(&result));
    assert!(body(&result).starts_with("drew p0,drew p1,drew p2,drew p3,drew p4,drew p5,drew p6,drew p7,drew p8"));
    assert_eq!(host.models_in_flight.lock().unwrap().1, 4);

    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let result = run_with(
        &host,
        r#"await models.generateImages({provider: "acme", id: "painter"}, {input: [{type: "text", text: "forever"}]});"#,
        cancel,
        Limits::default(),
    )
    .await;
    assert!(result.is_error);
    assert_eq!(result.details["calls"][0]["status"], "cancelled");
}
