//! Integration tests of pi-mcp against real servers: this binary is both the test runner and,
//! started with `PI_MCP_TEST_SERVER=stdio`, the MCP server the stdio tests spawn; the HTTP tests
//! serve the same server on 127.0.0.1.

// A test runner without libtest, so clippy's test allowances do not see its tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_mcp::config::EnvSource;
use pi_mcp::{CallOptions, ConnectOptions, ContentBlock, McpClient, McpError, ServerConfig};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

type TestFn = fn() -> Pin<Box<dyn Future<Output = ()>>>;

fn main() {
    if std::env::var("PI_MCP_TEST_SERVER").is_ok() {
        let log = std::env::var_os("PI_MCP_TEST_LOG").map(PathBuf::from);
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build();
        match runtime {
            Ok(rt) => rt.block_on(support::server::run_stdio(log)),
            Err(e) => eprintln!("runtime: {e}"),
        }
        return;
    }
    let tests: Vec<(&str, TestFn)> = vec![
        ("stdio_handshake_tools_calls_and_roots", || {
            Box::pin(stdio_handshake_tools_calls_and_roots())
        }),
        ("stdio_progress_restarts_the_timeout_and_timeouts_cancel", || {
            Box::pin(stdio_progress_restarts_the_timeout_and_timeouts_cancel())
        }),
        ("stdio_cancellation_sends_notifications_cancelled", || {
            Box::pin(stdio_cancellation_sends_notifications_cancelled())
        }),
        ("stdio_failures_report_stderr_and_spawn_errors", || {
            Box::pin(stdio_failures_report_stderr_and_spawn_errors())
        }),
        ("stdio_drop_kills_the_process_group", || {
            Box::pin(stdio_drop_kills_the_process_group())
        }),
        ("protocol_versions_are_checked", || {
            Box::pin(protocol_versions_are_checked())
        }),
        ("unresolved_env_fails_the_server", || {
            Box::pin(unresolved_env_fails_the_server())
        }),
        ("http_json_headers_session_and_delete", || {
            Box::pin(http_json_headers_session_and_delete())
        }),
        ("http_sse_answers_and_progress", || {
            Box::pin(http_sse_answers_and_progress())
        }),
        ("http_transient_failures_are_retried_at_connect", || {
            Box::pin(http_transient_failures_are_retried_at_connect())
        }),
        ("http_401_needs_sign_in", || Box::pin(http_401_needs_sign_in())),
        ("cli_list_add_remove_against_real_servers", || {
            Box::pin(support::cli_tests::cli_list_add_remove_against_real_servers())
        }),
        ("everything_server_over_stdio", || {
            Box::pin(everything_server_over_stdio())
        }),
        ("cli_messages_and_exit_codes", || {
            Box::pin(support::cli_tests::cli_messages_and_exit_codes())
        }),
    ];
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let outcome = std::panic::catch_unwind(|| {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build();
            match runtime {
                Ok(rt) => rt.block_on(test()),
                Err(e) => panic!("runtime: {e}"),
            }
        });
        match outcome {
            Ok(()) => {
                println!("test {name} ... ok");
                passed += 1;
            }
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}

/// A stdio server entry that runs this binary as the test server, logging what it receives.
pub fn stdio_config(log: &Path, extra_env: &[(&str, &str)]) -> ServerConfig {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut env = serde_json::Map::new();
    env.insert("PI_MCP_TEST_SERVER".into(), json!("stdio"));
    env.insert("PI_MCP_TEST_LOG".into(), json!(log.display().to_string()));
    for (k, v) in extra_env {
        env.insert((*k).into(), json!(v));
    }
    let entry = json!({"command": exe, "env": env});
    match pi_mcp::config::validate_server_config("test", &entry) {
        Ok(config) => config,
        Err(e) => panic!("config: {e}"),
    }
}

fn config(value: Value) -> ServerConfig {
    match pi_mcp::config::validate_server_config("test", &value) {
        Ok(config) => config,
        Err(e) => panic!("config: {e}"),
    }
}

/// The messages the stdio server logged.
pub fn received(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn text(block: &ContentBlock) -> &str {
    match block {
        ContentBlock::Text { text } => text,
        ContentBlock::Image { .. } => "<image>",
    }
}

async fn connect(config: &ServerConfig, cwd: &Path) -> McpClient {
    match McpClient::connect("test", config, &ConnectOptions::new(cwd, "1.6.0")).await {
        Ok(client) => client,
        Err(e) => panic!("connect: {e}"),
    }
}

async fn call(client: &McpClient, tool: &str, args: Value, options: &CallOptions) -> Result<Value, McpError> {
    client.call_tool(tool, args.as_object().cloned(), options).await
}

async fn stdio_handshake_tools_calls_and_roots() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("received.jsonl");
    let client = connect(&stdio_config(&log, &[]), dir.path()).await;
    let info = client.server_info().clone();
    assert_eq!(info.protocol_version, "2025-11-25");
    assert_eq!(info.name, "pi-mcp-test");
    assert_eq!(info.instructions.as_deref(), Some("Test server for pi.\nSecond line."));
    assert!(info.has_tools() && info.has_resources());

    let tools = client.list_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "red_pixel",
            "fail",
            "sleep",
            "progress",
            "roots",
            "crash",
            "spawn_child"
        ]
    );
    assert_eq!(tools[0].title.as_deref(), Some("Echo"));
    assert_eq!(tools[0].model_description("test"), "Echo the text back.");
    assert_eq!(tools[2].model_description("test"), "MCP tool fail from server test");
    assert_eq!(tools[0].annotations.get("readOnlyHint"), Some(&json!(true)));
    assert_eq!(tools[2].input_schema, json!({"type": "object", "properties": {}}));

    let echo = call(&client, "echo", json!({"text": "hello"}), &CallOptions::default())
        .await
        .expect("echo");
    let out = pi_mcp::convert_tool_result("test", "echo", &echo, &pi_mcp::ConvertOptions::default());
    assert_eq!(
        out.content,
        [ContentBlock::Text {
            text: "echoed: hello".into()
        }]
    );
    assert_eq!(out.structured_content["structuredContent"], json!({"echoed": "hello"}));

    let pixel = call(&client, "red_pixel", json!({}), &CallOptions::default())
        .await
        .expect("image");
    let out = pi_mcp::convert_tool_result("test", "red_pixel", &pixel, &pi_mcp::ConvertOptions::default());
    assert_eq!(
        out.content,
        [ContentBlock::Image {
            data: support::server::RED_PIXEL_PNG.into(),
            mime_type: "image/png".into()
        }]
    );

    let fail = call(&client, "fail", json!({}), &CallOptions::default())
        .await
        .expect("fail answers");
    let out = pi_mcp::convert_tool_result("test", "fail", &fail, &pi_mcp::ConvertOptions::default());
    assert!(out.is_error);
    assert_eq!(text(&out.content[0]), "it broke");

    let roots = call(&client, "roots", json!({}), &CallOptions::default())
        .await
        .expect("roots");
    let answer: Value = serde_json::from_str(roots["content"][0]["text"].as_str().unwrap_or("")).expect("roots json");
    let cwd = dir.path().display().to_string();
    let name = dir
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    assert_eq!(
        answer,
        json!({"roots": [{"uri": format!("file://{cwd}"), "name": name}]})
    );

    // Requests from the server: `ping` is answered; what pi does not serve (sampling,
    // elicitation, anything else) gets pi 1.6's "Method not found" error.
    let ask = |method: &'static str, params: Value| {
        let client = &client;
        async move {
            let answer = call(
                client,
                "ask",
                json!({"method": method, "params": params}),
                &CallOptions::default(),
            )
            .await
            .expect("ask");
            serde_json::from_str::<Value>(answer["content"][0]["text"].as_str().unwrap_or("")).expect("answer json")
        }
    };
    assert_eq!(ask("ping", json!({})).await, json!({"result": {}}));
    for (method, params) in [
        (
            "sampling/createMessage",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}),
        ),
        (
            "elicitation/create",
            json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}),
        ),
        ("x/unknown", json!({})),
    ] {
        assert_eq!(
            ask(method, params).await,
            json!({"error": {"code": -32601, "message": format!("Method not found: {method}")}}),
            "{method}"
        );
    }

    let mut changes = client.tool_list_changes();
    call(&client, "notify_changed", json!({}), &CallOptions::default())
        .await
        .expect("notify");
    tokio::time::timeout(Duration::from_secs(2), changes.changed())
        .await
        .expect("list_changed seen")
        .expect("open");

    client.ping(None).await.expect("ping");
    let stderr = client.stderr_tail().unwrap_or_default();
    assert_eq!(
        stderr,
        format!("test server started in {cwd}"),
        "the server runs in the session cwd"
    );
    client.close().await;

    let messages = received(&log);
    let init = &messages[0];
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["params"]["capabilities"], json!({"roots": {}}));
    assert_eq!(init["params"]["clientInfo"], json!({"name": "pi", "version": "1.6.0"}));
    assert_eq!(messages[1]["method"], "notifications/initialized");
    let lists: Vec<&Value> = messages.iter().filter(|m| m["method"] == "tools/list").collect();
    assert_eq!(lists.len(), 2);
    assert_eq!(lists[1]["params"]["cursor"], "page-2");
    let call = messages
        .iter()
        .find(|m| m["method"] == "tools/call")
        .expect("call logged");
    assert_eq!(call["params"]["name"], "echo");
    assert_eq!(call["params"]["arguments"], json!({"text": "hello"}));
    assert!(
        call["params"]["_meta"]["progressToken"].is_number() || call["params"]["_meta"]["progressToken"].is_string()
    );
    let methods: Vec<&str> = messages.iter().filter_map(|m| m["method"].as_str()).collect();
    assert!(
        !methods
            .iter()
            .any(|m| m.starts_with("prompts/") || m.starts_with("resources/") || *m == "logging/setLevel"),
        "{methods:?}"
    );
}

async fn stdio_progress_restarts_the_timeout_and_timeouts_cancel() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("received.jsonl");
    let mut entry = stdio_config(&log, &[]).raw;
    entry.insert("timeout".into(), json!(0.6));
    let client = connect(&config(Value::Object(entry)), dir.path()).await;
    assert_eq!(client.timeout(), Duration::from_millis(600));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    let options = CallOptions {
        on_progress: Some(Arc::new(move |p: &pi_mcp::Progress| {
            sink.lock().unwrap_or_else(|e| e.into_inner()).push(p.display_text())
        })),
        ..CallOptions::default()
    };
    // Five steps of 300 ms: 1.5 s in all, longer than the timeout, but never 600 ms without progress.
    let done = call(&client, "progress", json!({"steps": 5, "delay_ms": 300}), &options)
        .await
        .expect("progress keeps it alive");
    assert_eq!(done["content"][0]["text"], "done after 5 steps");
    assert_eq!(
        *seen.lock().unwrap_or_else(|e| e.into_inner()),
        ["step 1", "step 2", "step 3", "step 4", "step 5"]
    );

    let started = std::time::Instant::now();
    let error = call(&client, "sleep", json!({"ms": 5000}), &CallOptions::default())
        .await
        .expect_err("times out");
    assert_eq!(error, McpError::Timeout(600));
    assert_eq!(error.to_string(), "MCP request timed out after 600ms");
    assert!(started.elapsed() < Duration::from_secs(3));
    client.ping(None).await.expect("still connected");
    client.close().await;
    let messages = received(&log);
    let sleep_id = messages
        .iter()
        .find(|m| m["params"]["name"] == "sleep")
        .map(|m| m["id"].clone())
        .expect("sleep call");
    let cancelled = messages
        .iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .expect("cancel sent");
    assert_eq!(cancelled["params"]["requestId"], sleep_id);
    assert_eq!(cancelled["params"]["reason"], "Request timed out");
}

async fn stdio_cancellation_sends_notifications_cancelled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("received.jsonl");
    let client = connect(&stdio_config(&log, &[]), dir.path()).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let options = CallOptions {
        cancel: Some(cancel.clone()),
        ..CallOptions::default()
    };
    let started = std::time::Instant::now();
    let error = call(&client, "sleep", json!({"ms": 10000}), &options)
        .await
        .expect_err("aborted");
    assert_eq!(error.to_string(), "MCP request aborted");
    assert!(started.elapsed() < Duration::from_secs(2));
    // An already cancelled token fails at once without sending anything.
    assert_eq!(call(&client, "echo", json!({}), &options).await, Err(McpError::Aborted));
    client.ping(None).await.expect("still connected");
    client.close().await;
    let messages = received(&log);
    let cancelled = messages
        .iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .expect("cancel sent");
    assert_eq!(cancelled["params"]["reason"], "AbortError: This operation was aborted");
    assert_eq!(messages.iter().filter(|m| m["method"] == "tools/call").count(), 1);
}

async fn stdio_failures_report_stderr_and_spawn_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = config(json!({"command": "definitely-not-a-command"}));
    let error = McpClient::connect("nocmd", &missing, &ConnectOptions::new(dir.path(), "1.6.0"))
        .await
        .err()
        .expect("fails");
    assert_eq!(error.to_string(), "spawn definitely-not-a-command ENOENT");

    let crash = config(json!({"command": "sh", "args": ["-c", "echo 'boom on stderr' >&2; exit 2"]}));
    let error = McpClient::connect("crash", &crash, &ConnectOptions::new(dir.path(), "1.6.0"))
        .await
        .err()
        .expect("fails");
    assert_eq!(error.error, McpError::ConnectionClosed);
    assert_eq!(error.to_string(), "MCP connection closed\nboom on stderr");

    // A server that never answers `initialize` fails after the server's timeout.
    let silent = config(json!({"command": "sleep", "args": ["30"], "timeout": 0.5}));
    let started = std::time::Instant::now();
    let error = McpClient::connect("silent", &silent, &ConnectOptions::new(dir.path(), "1.6.0"))
        .await
        .err()
        .expect("times out");
    assert_eq!(error.error, McpError::Timeout(500));
    assert!(started.elapsed() < Duration::from_secs(3));

    let log = dir.path().join("received.jsonl");
    let client = connect(&stdio_config(&log, &[]), dir.path()).await;
    let error = call(&client, "crash", json!({}), &CallOptions::default())
        .await
        .expect_err("connection drops");
    assert_eq!(error, McpError::ConnectionClosed);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(client.is_closed());
    assert!(client.stderr_tail().unwrap_or_default().ends_with("boom on stderr"));
}

fn process_alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

async fn stdio_drop_kills_the_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("received.jsonl");
    let client = connect(&stdio_config(&log, &[]), dir.path()).await;
    let answer = call(&client, "spawn_child", json!({}), &CallOptions::default())
        .await
        .expect("spawned");
    let pid = answer["content"][0]["text"].as_str().unwrap_or("").to_string();
    assert!(process_alive(&pid), "grandchild {pid} runs");
    drop(client);
    let mut alive = true;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        alive = process_alive(&pid);
        if !alive {
            break;
        }
    }
    assert!(!alive, "the server's child {pid} was killed with its group");
}

async fn protocol_versions_are_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("received.jsonl");
    let old = connect(
        &stdio_config(&log, &[("PI_MCP_TEST_PROTOCOL", "2024-11-05")]),
        dir.path(),
    )
    .await;
    assert_eq!(old.server_info().protocol_version, "2024-11-05");
    assert_eq!(old.list_tools().await.expect("tools").len(), 8);
    old.close().await;
    let future = stdio_config(&log, &[("PI_MCP_TEST_PROTOCOL", "2099-01-01")]);
    let error = McpClient::connect("test", &future, &ConnectOptions::new(dir.path(), "1.6.0"))
        .await
        .err()
        .expect("refused");
    assert_eq!(
        error.error.to_string(),
        "MCP server selected unsupported protocol version 2099-01-01"
    );
}

async fn unresolved_env_fails_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("received.jsonl");
    let entry = stdio_config(&log, &[("SECRET", "${PI_MCP_SURELY_UNSET_VAR}")]);
    let error = McpClient::connect("web", &entry, &ConnectOptions::new(dir.path(), "1.6.0"))
        .await
        .err()
        .expect("fails");
    assert_eq!(
        error.to_string(),
        "Failed to resolve MCP server \"web\" env \"SECRET\" from environment variable: PI_MCP_SURELY_UNSET_VAR"
    );
    assert!(!log.exists(), "the server was never started");
}

fn fixed_env(pairs: &[(&str, &str)]) -> EnvSource {
    EnvSource::Fixed(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

async fn http_json_headers_session_and_delete() {
    let server = support::http_server::start(support::http_server::HttpOptions::default()).await;
    let entry = config(json!({"url": server.url, "headers": {"X-Demo": "1", "Authorization": "Bearer ${DEMO_TOKEN}"}}));
    let mut options = ConnectOptions::new(std::env::temp_dir(), "1.6.0");
    options.env = fixed_env(&[("DEMO_TOKEN", "tok123")]);
    let client = McpClient::connect("web", &entry, &options).await.expect("connects");
    assert_eq!(client.list_tools().await.expect("tools").len(), 8);
    let echo = call(&client, "echo", json!({"text": "over http"}), &CallOptions::default())
        .await
        .expect("echo");
    assert_eq!(echo["content"][0]["text"], "echoed: over http");
    client.close().await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    let requests = server.requests.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let init = &requests[0];
    assert_eq!(init.method, "POST");
    assert_eq!(
        init.body.as_ref().map(|b| b["method"].clone()),
        Some(json!("initialize"))
    );
    assert_eq!(init.header("accept"), Some("application/json, text/event-stream"));
    assert_eq!(init.header("content-type"), Some("application/json"));
    assert_eq!(init.header("x-demo"), Some("1"));
    assert_eq!(init.header("authorization"), Some("Bearer tok123"));
    assert_eq!(init.header("mcp-session-id"), None);
    let call_request = requests
        .iter()
        .find(|r| r.body.as_ref().is_some_and(|b| b["method"] == "tools/call"))
        .expect("call sent");
    assert_eq!(call_request.header("mcp-session-id"), Some("session-1"));
    assert_eq!(call_request.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(call_request.header("authorization"), Some("Bearer tok123"));
    assert!(
        requests
            .iter()
            .any(|r| r.method == "DELETE" && r.header("mcp-session-id") == Some("session-1")),
        "session deleted on close"
    );
}

async fn http_sse_answers_and_progress() {
    let server = support::http_server::start(support::http_server::HttpOptions {
        sse: true,
        ..Default::default()
    })
    .await;
    let entry = config(json!({"type": "http", "url": server.url}));
    let client = McpClient::connect("web", &entry, &ConnectOptions::new(std::env::temp_dir(), "1.6.0"))
        .await
        .expect("connects");
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    let options = CallOptions {
        on_progress: Some(Arc::new(move |p: &pi_mcp::Progress| {
            sink.lock().unwrap_or_else(|e| e.into_inner()).push(p.display_text())
        })),
        ..CallOptions::default()
    };
    let done = call(&client, "progress", json!({"steps": 2, "delay_ms": 20}), &options)
        .await
        .expect("progress");
    assert_eq!(done["content"][0]["text"], "done after 2 steps");
    assert_eq!(*seen.lock().unwrap_or_else(|e| e.into_inner()), ["step 1", "step 2"]);
    let tools = client.list_tools().await.expect("tools over sse");
    assert_eq!(tools.len(), 8);
    client.close().await;
}

async fn http_transient_failures_are_retried_at_connect() {
    let server = support::http_server::start(support::http_server::HttpOptions {
        fail_first: 2,
        ..Default::default()
    })
    .await;
    let entry = config(json!({"url": server.url}));
    let started = std::time::Instant::now();
    let client = McpClient::connect("web", &entry, &ConnectOptions::new(std::env::temp_dir(), "1.6.0"))
        .await
        .expect("third try connects");
    assert!(
        started.elapsed() >= Duration::from_millis(1_250),
        "waited 250 ms and 1 s"
    );
    client.close().await;
    let three = support::http_server::start(support::http_server::HttpOptions {
        fail_first: 3,
        ..Default::default()
    })
    .await;
    let entry = config(json!({"url": three.url}));
    assert!(
        McpClient::connect("web", &entry, &ConnectOptions::new(std::env::temp_dir(), "1.6.0"))
            .await
            .is_err(),
        "two retries only"
    );
}

async fn http_401_needs_sign_in() {
    let server = support::http_server::start(support::http_server::HttpOptions {
        bearer: Some("right".into()),
        ..Default::default()
    })
    .await;
    let entry = config(json!({"url": server.url}));
    let error = McpClient::connect("web", &entry, &ConnectOptions::new(std::env::temp_dir(), "1.6.0"))
        .await
        .err()
        .expect("401");
    assert!(error.needs_sign_in());
    assert_eq!(
        error.to_string(),
        "MCP server \"web\" requires sign-in. Run /mcp to sign in."
    );
    let provider = config(json!({"url": server.url, "auth": {"provider": "radius"}}));
    let mut options = ConnectOptions::new(std::env::temp_dir(), "1.6.0");
    let error = McpClient::connect("web", &provider, &options)
        .await
        .err()
        .expect("no token");
    assert_eq!(
        error.to_string(),
        "MCP server \"web\" requires sign-in. Run /login radius to sign in."
    );
    options.provider_tokens = Some(Arc::new(|p: &str| (p == "radius").then(|| "right".to_string())));
    let client = McpClient::connect("web", &provider, &options)
        .await
        .expect("provider token accepted");
    client.close().await;
}

/// The reference MCP server from npm (`@modelcontextprotocol/server-everything`), when
/// `PI_MCP_EVERYTHING_SERVER` names its `dist/index.js` and node is installed (`scripts/test-deps`
/// installs it). Tests never download it; without it the test reports itself skipped, and under
/// `CI` it fails.
async fn everything_server_over_stdio() {
    let Some(script) = std::env::var_os("PI_MCP_EVERYTHING_SERVER")
        .map(PathBuf::from)
        .filter(|p| p.exists())
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "everything_server_over_stdio: @modelcontextprotocol/server-everything is missing \
             (PI_MCP_EVERYTHING_SERVER unset or wrong); scripts/test-deps installs it"
        );
        println!(
            "skipped: everything_server_over_stdio (set PI_MCP_EVERYTHING_SERVER to server-everything's dist/index.js)"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let entry = config(json!({"command": "node", "args": [script.display().to_string(), "stdio"]}));
    let client = connect(&entry, dir.path()).await;
    let tools = client.list_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-roots-list"),
        "{names:?}"
    );
    assert_eq!(
        pi_mcp::mcp_tool_name("everything", "get-tiny-image", |_| false),
        "mcp__everything__get_tiny_image"
    );

    let echo = call(&client, "echo", json!({"message": "hi"}), &CallOptions::default())
        .await
        .expect("echo");
    assert_eq!(echo["content"][0]["text"], "Echo: hi");
    let image = call(&client, "get-tiny-image", json!({}), &CallOptions::default())
        .await
        .expect("image");
    let out = pi_mcp::convert_tool_result(
        "everything",
        "get-tiny-image",
        &image,
        &pi_mcp::ConvertOptions::default(),
    );
    assert!(out
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Image { mime_type, .. } if mime_type == "image/png")));
    let roots = call(&client, "get-roots-list", json!({}), &CallOptions::default())
        .await
        .expect("roots");
    let text = roots["content"][0]["text"].as_str().unwrap_or("").to_string();
    assert!(text.contains(&format!("file://{}", dir.path().display())), "{text}");

    let seen: Arc<Mutex<usize>> = Arc::default();
    let sink = seen.clone();
    let options = CallOptions {
        on_progress: Some(Arc::new(move |_: &pi_mcp::Progress| {
            *sink.lock().unwrap_or_else(|e| e.into_inner()) += 1
        })),
        timeout: Some(Duration::from_millis(900)),
        ..CallOptions::default()
    };
    // Two seconds in four steps: longer than the timeout, kept alive by progress.
    let done = call(
        &client,
        "trigger-long-running-operation",
        json!({"duration": 2, "steps": 4}),
        &options,
    )
    .await
    .expect("long operation");
    assert!(done["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .starts_with("Long running operation completed."));
    assert_eq!(*seen.lock().unwrap_or_else(|e| e.into_inner()), 4);
    client.close().await;
}
