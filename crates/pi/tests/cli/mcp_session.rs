//! MCP servers in sessions, through the binary against the mock LLM: the reference server from
//! npm (`@modelcontextprotocol/server-everything`, installed by `scripts/test-deps`) started by
//! pi from the agent dir's `mcp.json`, its tools declared and called like built-in ones, a
//! failing and a hanging server next to it, `--no-mcp`, and no server process left at exit.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::extensions::tool_results;
use crate::harness::{Fixture, Mock};

/// `node` and server-everything's `dist/index.js`, or a skip (a failure under CI).
pub(crate) fn everything() -> Option<(PathBuf, PathBuf)> {
    let node = pi_test_support::require::tool("node", "runs the reference MCP server")?;
    let script = std::env::var_os("PI_MCP_EVERYTHING_SERVER")
        .map(PathBuf::from)
        .filter(|p| p.exists());
    match script {
        Some(script) => Some((node, script)),
        None => pi_test_support::require::missing(
            "@modelcontextprotocol/server-everything (PI_MCP_EVERYTHING_SERVER)",
            "the reference MCP server the session connects to",
        ),
    }
}

fn write_config(fx: &Fixture, servers: Value) {
    std::fs::write(
        fx.agent.path().join("mcp.json"),
        serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap(),
    )
    .unwrap();
}

fn everything_entry(node: &Path, script: &Path, extra: Value) -> Value {
    let mut entry = json!({
        "command": node.display().to_string(),
        "args": [script.display().to_string(), "stdio"],
    });
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    entry
}

fn declared(body: &Value) -> Vec<(String, String)> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["function"]["name"].as_str().unwrap_or("").to_string(),
                t["function"]["description"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn the_model_calls_a_direct_mcp_tool_and_sees_its_result() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("mcp__everything__echo", json!({"message": "hi there"})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "everything": everything_entry(&node, &script, json!({"exposure": "direct"})) }),
    );
    let run = fx.pi(["-p", "echo something"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "done\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let tools = declared(&requests[0].body);
    let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(&names[..4], ["read", "bash", "edit", "write"], "{names:?}");
    assert!(names.contains(&"mcp__everything__echo"), "{names:?}");
    assert!(
        names.contains(&"mcp__everything__get_tiny_image"),
        "`-` becomes `_`: {names:?}"
    );
    let echo = tools.iter().find(|(n, _)| n == "mcp__everything__echo").unwrap();
    assert!(
        echo.1.to_lowercase().contains("echo"),
        "the server's description: {}",
        echo.1
    );
    assert_eq!(tool_results(&requests[1].body), vec!["Echo: hi there".to_string()]);
    // Print mode shows no MCP messages.
    assert!(!run.stderr.contains("MCP"), "{}", run.stderr);
}

#[test]
fn json_mode_reports_an_mcp_call_as_an_ordinary_tool_with_its_details() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("mcp__everything__echo", json!({})),
        Turn::tool_call("mcp__everything__echo", json!({"message": "ok"})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "everything": everything_entry(&node, &script, json!({"exposure": "direct"})) }),
    );
    let run = fx.pi(["--mode", "json", "echo"]).run();
    run.assert_ok();
    let ends: Vec<Value> = run
        .events()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 2, "{}", run.stdout);
    // Arguments are validated against the server's schema before the call.
    assert_eq!(ends[0]["isError"], true, "{}", ends[0]);
    let first = ends[0]["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(first.contains("Validation failed"), "{first}");
    let end = &ends[1];
    assert_eq!(end["toolName"], "mcp__everything__echo");
    assert_eq!(end["isError"], false, "{end}");
    assert_eq!(end["result"]["content"][0]["text"], "Echo: ok");
    assert_eq!(
        end["result"]["details"],
        json!({"server": "everything", "tool": "echo"})
    );
    assert_eq!(
        end["result"]["structuredContent"]["content"][0]["text"], "Echo: ok",
        "{end}"
    );
}

#[test]
fn a_failing_and_a_hanging_server_leave_the_others_working() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("mcp__broken__anything", json!({})),
        Turn::tool_call("mcp__everything__echo", json!({"message": "still here"})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({
            "everything": everything_entry(&node, &script, json!({"exposure": "direct"})),
            "broken": {"command": "/nonexistent/mcp-server", "exposure": "direct"},
            // Answers nothing: its handshake times out after one second.
            "hanging": {"command": "sleep", "args": ["30"], "exposure": "direct", "timeout": 1},
        }),
    );
    let started = Instant::now();
    let run = fx.pi(["-p", "go"]).run();
    run.assert_ok();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "a hanging server held the run up: {:?}",
        started.elapsed()
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let names: Vec<String> = declared(&requests[0].body).into_iter().map(|(n, _)| n).collect();
    assert!(names.iter().any(|n| n == "mcp__everything__echo"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__broken")), "{names:?}");
    let results = tool_results(&requests[2].body);
    assert_eq!(results[0], "Tool mcp__broken__anything not found", "{results:?}");
    assert_eq!(results[1], "Echo: still here");
}

/// pi 1.6 holds the first prompt at most ten seconds for servers whose tools are declared
/// directly: a server that never answers (its own handshake timeout is the default 30 s) does
/// not hold the run longer, the server that did connect is in the first request, and the
/// hanging server's process is gone when pi exits.
#[test]
fn the_first_prompt_waits_at_most_ten_seconds_for_a_hanging_direct_server() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let pid_file = fx.root.path().join("hanging.pid");
    write_config(
        &fx,
        json!({
            "everything": everything_entry(&node, &script, json!({"exposure": "direct"})),
            "hanging": {
                "command": "sh",
                "args": ["-c", format!("echo $$ > '{}'; exec sleep 120", pid_file.display())],
                "exposure": "direct",
            },
        }),
    );
    let started = Instant::now();
    let run = fx.pi(["-p", "hi"]).run();
    let took = started.elapsed();
    run.assert_ok();
    assert!(
        took >= Duration::from_millis(9500) && took < Duration::from_secs(20),
        "the first prompt should wait about ten seconds, took {took:?}"
    );
    let names: Vec<String> = declared(&mock.requests()[0].body).into_iter().map(|(n, _)| n).collect();
    assert!(names.iter().any(|n| n == "mcp__everything__echo"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__hanging")), "{names:?}");
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let gone = (0..100).any(|_| {
        let alive = std::process::Command::new("kill")
            .args(["-0", &pid])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if alive {
            std::thread::sleep(Duration::from_millis(20));
        }
        !alive
    });
    assert!(gone, "the hanging server (pid {pid}) outlived pi");
}

#[test]
fn no_mcp_leaves_the_servers_off() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let pid_file = fx.root.path().join("server.pid");
    write_config(
        &fx,
        json!({ "everything": {
            "command": "sh",
            "args": ["-c", format!("echo $$ > '{}'; exec '{}' '{}' stdio", pid_file.display(), node.display(), script.display())],
            "exposure": "direct",
        }}),
    );
    let run = fx.pi(["--no-mcp", "-p", "hi"]).run();
    run.assert_ok();
    let names: Vec<String> = declared(&mock.requests()[0].body).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["read", "bash", "edit", "write"]);
    assert!(!pid_file.exists(), "no server was started");
}

#[test]
fn the_server_process_is_gone_when_pi_exits() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let pid_file = fx.root.path().join("server.pid");
    write_config(
        &fx,
        json!({ "everything": {
            "command": "sh",
            "args": ["-c", format!("echo $$ > '{}'; exec '{}' '{}' stdio", pid_file.display(), node.display(), script.display())],
            "exposure": "direct",
        }}),
    );
    let run = fx.pi(["-p", "hi"]).run();
    run.assert_ok();
    let names: Vec<String> = declared(&mock.requests()[0].body).into_iter().map(|(n, _)| n).collect();
    assert!(names.iter().any(|n| n == "mcp__everything__echo"), "{names:?}");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let gone = (0..100).any(|_| {
        // Signal 0 only asks whether the process exists.
        let alive = std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if alive {
            std::thread::sleep(Duration::from_millis(20));
        }
        !alive
    });
    assert!(gone, "the MCP server (pid {pid}) outlived pi");
}

fn system_prompt(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "system" || m["role"] == "developer")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn tool_search_loads_deferred_tools_for_the_next_request() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("tool_search", json!({"query": "echo", "limit": 1})),
        Turn::tool_call("mcp__everything__echo", json!({"message": "loaded"})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "everything": everything_entry(&node, &script, json!({
            "exposure": "deferred",
            "description": "The reference test server.\nSecond line.",
        })) }),
    );
    let run = fx.pi(["-p", "find echo"]).run();
    run.assert_ok();
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let first: Vec<String> = declared(&requests[0].body).into_iter().map(|(n, _)| n).collect();
    assert_eq!(first, ["read", "bash", "edit", "write", "tool_search"]);
    let prompt = system_prompt(&requests[0].body);
    assert!(
        prompt.ends_with(
            "<mcp_servers>\nMCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.\n\
             - mcp__everything (tool_search): The reference test server.\n</mcp_servers>"
        ),
        "{prompt}"
    );
    let results = tool_results(&requests[1].body);
    assert!(
        results[0].starts_with("Loaded 1 tool. They are available from your next call:\n- mcp__everything__echo: "),
        "{results:?}"
    );
    let second: Vec<String> = declared(&requests[1].body).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        second.last().map(String::as_str),
        Some("mcp__everything__echo"),
        "{second:?}"
    );
    assert_eq!(tool_results(&requests[2].body)[1], "Echo: loaded");
}

/// `node` and server-filesystem's `dist/index.js`, or a skip (a failure under CI).
fn filesystem_server() -> Option<(PathBuf, PathBuf)> {
    let node = pi_test_support::require::tool("node", "runs the filesystem MCP server")?;
    match std::env::var_os("PI_MCP_FILESYSTEM_SERVER")
        .map(PathBuf::from)
        .filter(|p| p.exists())
    {
        Some(script) => Some((node, script)),
        None => pi_test_support::require::missing(
            "@modelcontextprotocol/server-filesystem (PI_MCP_FILESYSTEM_SERVER)",
            "a second MCP server from npm",
        ),
    }
}

#[test]
fn the_filesystem_server_reads_a_file_and_tool_exposure_and_flags_shape_its_tools() {
    let Some((node, script)) = filesystem_server() else {
        return;
    };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("mcp__fs__read_text_file", json!({"path": "hello.txt"})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "fs": {
            "command": node.display().to_string(),
            "args": [script.display().to_string(), "."],
            "exposure": "direct",
            "toolExposure": {"write_file": "hidden", "move_*": "hidden", "edit_file": "codemode"},
        }}),
    );
    let run = fx.pi(["--exclude-tools", "mcp__fs__list_*", "-p", "read it"]).run();
    run.assert_ok();
    let requests = mock.requests();
    let names: Vec<String> = declared(&requests[0].body).into_iter().map(|(n, _)| n).collect();
    assert!(names.iter().any(|n| n == "mcp__fs__read_text_file"), "{names:?}");
    assert!(names.iter().any(|n| n == "mcp__fs__directory_tree"), "{names:?}");
    for absent in [
        "mcp__fs__write_file",
        "mcp__fs__move_file",
        "mcp__fs__edit_file",
        "mcp__fs__list_directory",
        "mcp__fs__list_allowed_directories",
    ] {
        assert!(!names.iter().any(|n| n == absent), "{absent} declared: {names:?}");
    }
    // The server resolves the relative path against its cwd, the session's.
    assert_eq!(tool_results(&requests[1].body), vec![crate::harness::HELLO.to_string()]);
}

#[test]
fn the_resource_tools_list_and_read_a_servers_resources() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("list_mcp_resources", json!({"server": "everything"})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "everything": everything_entry(&node, &script, json!({"exposure": "direct"})) }),
    );
    let run = fx.pi(["-p", "resources"]).run();
    run.assert_ok();
    let requests = mock.requests();
    let names: Vec<String> = declared(&requests[0].body).into_iter().map(|(n, _)| n).collect();
    for tool in ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"] {
        assert!(names.iter().any(|n| n == tool), "{tool}: {names:?}");
    }
    let listing: Value = serde_json::from_str(&tool_results(&requests[1].body)[0]).expect("JSON listing");
    assert_eq!(listing["server"], "everything");
    let resources = listing["resources"].as_array().expect("resources");
    assert!(!resources.is_empty(), "{listing}");
    assert!(
        resources
            .iter()
            .all(|r| r["server"] == "everything" && r["uri"].is_string()),
        "{listing}"
    );

    // Read the first one back.
    let uri = resources[0]["uri"].as_str().unwrap().to_string();
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("read_mcp_resource", json!({"server": "everything", "uri": uri})),
        Turn::text("done"),
    ]));
    let fx2 = Fixture::new(&mock);
    write_config(
        &fx2,
        json!({ "everything": everything_entry(&node, &script, json!({"exposure": "direct"})) }),
    );
    let run = fx2.pi(["--mode", "json", "read"]).run();
    run.assert_ok();
    let end = run
        .events()
        .into_iter()
        .find(|e| e["type"] == "tool_execution_end")
        .expect("a tool_execution_end");
    assert_eq!(end["isError"], false, "{end}");
    assert_eq!(end["result"]["structuredContent"]["uri"], json!(uri), "{end}");
    assert!(!tool_results(&mock.requests()[1].body)[0].is_empty());
}

#[test]
fn rpc_abort_cancels_a_running_mcp_call_and_startup_problems_arrive_as_one_notify() {
    use std::io::{BufRead, BufReader, Write};
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call(
            "mcp__everything__trigger_long_running_operation",
            json!({"duration": 20, "steps": 20}),
        ),
        Turn::text("after abort"),
    ]));
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({
            "everything": everything_entry(&node, &script, json!({"exposure": "direct"})),
            "broken": {"command": "/nonexistent/mcp-server"},
        }),
    );
    let mut pi = fx.pi(["--mode", "rpc"]);
    pi.cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str::<Value>(&line) {
                if tx.send(value).is_err() {
                    break;
                }
            }
        }
    });
    let wait_for = |what: &dyn Fn(&Value) -> bool, seen: &mut Vec<Value>| -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no such event; seen: {seen:#?}"));
            seen.push(event.clone());
            if what(&event) {
                return event;
            }
        }
    };
    let mut seen = Vec::new();
    writeln!(stdin, r#"{{"type":"prompt","message":"run the long operation"}}"#).unwrap();
    let notify = wait_for(
        &|e| e["type"] == "extension_ui_request" && e["method"] == "notify",
        &mut seen,
    );
    let message = notify["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("MCP servers need attention:\n  broken: failed: spawn /nonexistent/mcp-server")
            && message.ends_with("\nRun /mcp to fix."),
        "{notify}"
    );
    wait_for(
        &|e| e["type"] == "tool_execution_start" && e["toolName"] == "mcp__everything__trigger_long_running_operation",
        &mut seen,
    );
    // A progress update shows the call reached the server.
    let update = wait_for(&|e| e["type"] == "tool_execution_update", &mut seen);
    assert!(
        update["partialResult"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        "{update}"
    );
    let started = Instant::now();
    writeln!(stdin, r#"{{"type":"abort"}}"#).unwrap();
    let end = wait_for(&|e| e["type"] == "tool_execution_end", &mut seen);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(end["isError"], true, "{end}");
    assert_eq!(end["result"]["content"][0]["text"], "MCP request aborted", "{end}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn builtin_names_turn_mcp_on_after_no_extensions_and_unknown_ones_fail() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "everything": everything_entry(&node, &script, json!({"exposure": "direct"})) }),
    );
    let off = fx.pi(["-ne", "-p", "hi"]).run();
    off.assert_ok();
    let on = fx.pi(["-ne", "-e", "builtin:mcp", "-p", "hi"]).run();
    on.assert_ok();
    let requests = mock.requests();
    let names = |i: usize| -> Vec<String> { declared(&requests[i].body).into_iter().map(|(n, _)| n).collect() };
    assert_eq!(names(0), ["read", "bash", "edit", "write"], "-ne leaves MCP off");
    assert!(names(1).iter().any(|n| n == "mcp__everything__echo"), "{:?}", names(1));

    let unknown = fx.pi(["-e", "builtin:nope", "-p", "hi"]).run();
    assert_eq!(unknown.code, 1, "{unknown:?}");
    assert!(
        unknown
            .stderr
            .contains("Error: Failed to load extension \"builtin:nope\": Unknown built-in extension: builtin:nope"),
        "{}",
        unknown.stderr
    );
}

/// `-builtin:mcp` among the user's `extensions` entries leaves the servers unstarted; a
/// trusted project's `+builtin:mcp` starts them again.
#[test]
fn settings_entries_turn_mcp_off_and_a_projects_on_again() {
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "everything": everything_entry(&node, &script, json!({"exposure": "direct"})) }),
    );
    fx.agent
        .write("settings.json", json!({"extensions": ["-builtin:mcp"]}).to_string())
        .unwrap();
    fx.pi(["-p", "hi"]).run().assert_ok();
    let project = fx.proj.join(".pi");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("settings.json"),
        json!({"extensions": ["+builtin:mcp"]}).to_string(),
    )
    .unwrap();
    fx.pi(["--approve", "-p", "hi"]).run().assert_ok();
    let requests = mock.requests();
    let names = |i: usize| -> Vec<String> { declared(&requests[i].body).into_iter().map(|(n, _)| n).collect() };
    assert_eq!(names(0), ["read", "bash", "edit", "write"], "the user turned MCP off");
    assert!(names(1).iter().any(|n| n == "mcp__everything__echo"), "{:?}", names(1));
}

#[test]
fn tools_entries_naming_mcp_tools_filter_them() {
    let Some((node, script)) = filesystem_server() else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "fs": {
            "command": node.display().to_string(),
            "args": [script.display().to_string(), "."],
            "exposure": "direct",
        }}),
    );
    // Only built-in names: every MCP tool stays.
    fx.pi(["--tools", "read", "-p", "hi"]).run().assert_ok();
    // An `mcp__` entry: only the MCP tools it matches are declared.
    fx.pi(["--tools", "read,mcp__fs__read_*", "-p", "hi"]).run().assert_ok();
    let requests = mock.requests();
    let names = |i: usize| -> Vec<String> { declared(&requests[i].body).into_iter().map(|(n, _)| n).collect() };
    let all = names(0);
    assert_eq!(all[0], "read");
    assert!(all.iter().any(|n| n == "mcp__fs__directory_tree"), "{all:?}");
    let filtered = names(1);
    assert_eq!(filtered[0], "read");
    assert!(
        filtered[1..].iter().all(|n| n.starts_with("mcp__fs__read_")),
        "{filtered:?}"
    );
    assert!(filtered.iter().any(|n| n == "mcp__fs__read_text_file"), "{filtered:?}");
}

#[test]
fn a_new_session_in_rpc_mode_keeps_the_servers_tools() {
    use std::io::{BufRead, BufReader, Write};
    let Some((node, script)) = everything() else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({ "everything": everything_entry(&node, &script, json!({"exposure": "direct"})) }),
    );
    let mut pi = fx.pi(["--mode", "rpc"]);
    pi.cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut wait_for = |what: &dyn Fn(&Value) -> bool| {
        for line in lines.by_ref().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str::<Value>(&line) {
                if what(&value) {
                    return value;
                }
            }
        }
        panic!("pi's output ended");
    };
    writeln!(stdin, r#"{{"type":"prompt","message":"first"}}"#).unwrap();
    wait_for(&|e| e["type"] == "agent_end");
    writeln!(stdin, r#"{{"id":"n","type":"new_session"}}"#).unwrap();
    let answer = wait_for(&|e| e["type"] == "response" && e["id"] == "n");
    assert_eq!(answer["success"], true, "{answer}");
    writeln!(stdin, r#"{{"type":"prompt","message":"second"}}"#).unwrap();
    wait_for(&|e| e["type"] == "agent_end");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for request in &requests {
        let names: Vec<String> = declared(&request.body).into_iter().map(|(n, _)| n).collect();
        assert!(names.iter().any(|n| n == "mcp__everything__echo"), "{names:?}");
    }
}

/// Each of `commands` sent in turn to `pi --mode rpc` (each waits for its response), and what
/// came back: the notices and the responses, in order, with the notices' ids masked.
fn rpc_answers(fx: &Fixture, command: Option<std::process::Command>, commands: &[Value]) -> Vec<Value> {
    use std::io::{BufRead, BufReader, Write};
    let mut cmd = match command {
        Some(mut cmd) => {
            cmd.args(["--mode", "rpc"]).current_dir(&fx.proj).envs(fx.agent.env());
            cmd
        }
        None => fx.pi(["--mode", "rpc"]).cmd,
    };
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str::<Value>(&line) {
                if tx.send(value).is_err() {
                    break;
                }
            }
        }
    });
    let mut answers = Vec::new();
    for command in commands {
        writeln!(stdin, "{command}").unwrap();
        loop {
            let mut event = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no response to {command}; seen: {answers:#?}"));
            let response = event["type"] == "response";
            if event["type"] == "extension_ui_request" {
                event["id"] = json!("<id>");
            }
            if response || event["type"] == "extension_ui_request" {
                answers.push(event);
            }
            if response {
                break;
            }
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    answers
}

/// `/mcp` as an RPC prompt is pi's own command, never a message to the model: the servers'
/// state as plain text, its subcommands, and their notices, exactly as pi 1.6 answers them.
#[test]
fn mcp_as_an_rpc_prompt_answers_as_pi_does() {
    let mock = Mock::start(Script::queue(vec![]));
    let fx = Fixture::new(&mock);
    write_config(
        &fx,
        json!({
            "broken": {"command": "/nonexistent/mcp-server"},
            "off": {"command": "true", "enabled": false},
        }),
    );
    let commands: Vec<Value> = [
        "/mcp",
        "/mcp reconnect",
        "/mcp login",
        "/mcp a b c",
        "/mcp logout nosuch",
    ]
    .iter()
    .enumerate()
    .map(|(i, m)| json!({"id": i.to_string(), "type": "prompt", "message": m}))
    .collect();
    let ours = rpc_answers(&fx, None, &commands);
    assert!(mock.requests().is_empty(), "a /mcp prompt reached the model");
    let notices: Vec<&str> = ours
        .iter()
        .filter(|a| a["method"] == "notify")
        .map(|a| a["message"].as_str().unwrap())
        .collect();
    assert!(
        notices
            .contains(&"broken: failed (codemode)\n    spawn /nonexistent/mcp-server ENOENT\noff: disabled (codemode)"),
        "{notices:#?}"
    );
    assert!(ours
        .iter()
        .filter(|a| a["type"] == "response" && a["command"] == "prompt")
        .all(|a| a["data"]["disposition"] == "handled"));
    let Some(reference) = crate::session16::reference(&fx, &[]) else {
        return;
    };
    let theirs = rpc_answers(&fx, Some(reference.cmd), &commands);
    // The startup report may come before or after the first answer; compare without it.
    let without_report = |answers: &[Value]| -> Vec<Value> {
        answers
            .iter()
            .filter(|a| {
                !a["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("MCP servers need attention"))
            })
            .cloned()
            .collect()
    };
    assert_eq!(without_report(&ours), without_report(&theirs));
}
