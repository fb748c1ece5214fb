//! The events of the calls a codemode script makes, compared with pi 1.6: in JSON and RPC
//! mode each nested call is a `tool_execution_start/update/end` with the id
//! `<script call id>/<n>` and `parentToolCallId`, the script's result message (and its
//! session entry) carries the `nestedCalls` record, and extensions see the same events and
//! `tool_call`/`tool_result` hooks naming the parent.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::harness::{Fixture, Mock};

/// A script whose calls succeed (read, bash with output) and fail before running (invalid
/// arguments), so the events of both paths are pinned.
fn scenario() -> Script {
    Script::sequential(vec![
        Turn::tool_call(
            "codemode",
            json!({"code": "const a = await tools.read({path: 'hello.txt'});\n\
                    const b = await tools.bash({command: 'echo hi'});\n\
                    let e; try { await tools.read({}); } catch (x) { e = 'rejected'; }\n\
                    return {a: a.split('\\n')[0], b: b.output, e};"}),
        ),
        Turn::text("done"),
    ])
}

/// What must agree with pi 1.6 in a tool event: the fields, with a duration's presence for
/// its value, and a successful result (error texts are the validator's wording, which differs).
fn tool_event(event: &Value) -> Value {
    let mut out = json!({
        "type": event["type"],
        "toolCallId": event["toolCallId"],
        "toolName": event["toolName"],
        "parentToolCallId": event.get("parentToolCallId").cloned().unwrap_or(Value::Null),
    });
    if event["type"] == "tool_execution_start" {
        out["args"] = event["args"].clone();
    }
    if event["type"] == "tool_execution_end" {
        out["isError"] = event["isError"].clone();
        out["hasDuration"] = json!(event.get("durationMs").is_some());
        if event["isError"] == false && event["toolName"] != "codemode" {
            out["content"] = event["result"]["content"].clone();
            out["structuredContent"] = event["result"]["structuredContent"].clone();
            if let Some(fields) = out["structuredContent"].as_object_mut() {
                // bash's wall time is the machine's.
                fields.remove("wall_time_seconds");
            }
        }
    }
    out
}

/// The start and end events of every call, in order (updates interleave with timing).
fn tool_events(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_execution_start" || e["type"] == "tool_execution_end")
        .map(tool_event)
        .collect()
}

/// The `nestedCalls` record with durations as presence and errors as presence.
fn nested_record(message: &Value) -> Value {
    let record = &message["nestedCalls"];
    let calls: Vec<Value> = record["calls"]
        .as_array()
        .unwrap_or_else(|| panic!("no nestedCalls: {message}"))
        .iter()
        .map(|c| {
            let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
            json!({"keys": keys, "id": c["id"], "name": c["name"], "status": c["status"], "arguments": c["arguments"]})
        })
        .collect();
    json!({"calls": calls, "complete": record["complete"]})
}

fn tool_result_message(events: &[Value]) -> Value {
    events
        .iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "toolResult")
        .map(|e| e["message"].clone())
        .expect("a tool result message")
}

fn json_events(cmd: Command) -> Vec<Value> {
    let run = crate::harness::Pi::from_command(cmd).run();
    run.assert_ok();
    run.events()
}

/// Send one prompt over RPC and collect the lines up to `agent_end`.
fn rpc_events(mut cmd: Command) -> Vec<Value> {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"go\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut events = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = lines.recv_timeout(left) else {
            let _ = child.kill();
            panic!("no agent_end over RPC: {events:#?}");
        };
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let end = event["type"] == "agent_end";
        events.push(event);
        if end {
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    events
}

fn ours(fx: &Fixture, mode: &str) -> Command {
    let args: Vec<&str> = match mode {
        "json" => vec!["--tools", "read,bash,codemode", "--mode", "json", "go"],
        _ => vec!["--tools", "read,bash,codemode", "--mode", "rpc"],
    };
    fx.pi(args).cmd
}

fn theirs(reference: &pi_test_support::ReferencePi, fx: &Fixture, mode: &str) -> Command {
    let mut cmd = reference.command();
    match mode {
        "json" => cmd.args(["--tools", "read,bash,codemode", "--mode", "json", "go"]),
        _ => cmd.args(["--tools", "read,bash,codemode", "--mode", "rpc"]),
    };
    cmd.current_dir(&fx.proj).envs(fx.agent.env());
    cmd
}

#[test]
fn nested_calls_are_tool_events_with_their_parent_as_in_pi_16() {
    let test = "nested_calls_are_tool_events_with_their_parent_as_in_pi_16";
    let mock = Mock::start(scenario());
    let fx = Fixture::new(&mock);
    let events = json_events(ours(&fx, "json"));
    let got = tool_events(&events);
    let nested = |n: u32| format!("call_mock_0_0/{n}");
    assert_eq!(
        got.iter()
            .map(|e| e["toolCallId"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "call_mock_0_0",
            &nested(1),
            &nested(1),
            &nested(2),
            &nested(2),
            &nested(3),
            &nested(3),
            "call_mock_0_0"
        ]
    );
    assert!(
        got[1..7].iter().all(|e| e["parentToolCallId"] == "call_mock_0_0"),
        "{got:#?}"
    );
    assert_eq!(got[0]["parentToolCallId"], Value::Null);
    // The invalid call never ran: its end has no duration, and it is an error.
    assert_eq!(got[6]["isError"], true);
    assert_eq!(got[6]["hasDuration"], false);
    assert_eq!(got[4]["structuredContent"]["output"], "hi\n");
    // bash's progress is reported as the nested call's updates.
    assert!(events.iter().any(|e| e["type"] == "tool_execution_update"
        && e["toolCallId"] == nested(2).as_str()
        && e["parentToolCallId"] == "call_mock_0_0"));
    // Only the script's result is a message; it records the calls it made.
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "toolResult")
        .collect();
    assert_eq!(results.len(), 1);
    let message = tool_result_message(&events);
    let record = nested_record(&message);
    assert_eq!(
        record,
        json!({"calls": [
            {"keys": ["id", "name", "status", "arguments", "durationMs"], "id": nested(1), "name": "read", "status": "ok", "arguments": {"path": "hello.txt"}},
            {"keys": ["id", "name", "status", "arguments", "durationMs"], "id": nested(2), "name": "bash", "status": "ok", "arguments": {"command": "echo hi"}},
            {"keys": ["id", "name", "status", "arguments", "durationMs", "error"], "id": nested(3), "name": "read", "status": "error", "arguments": {}},
        ], "complete": true})
    );
    // The record is part of the session entry, so a resumed session keeps it.
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    let entry = session
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["message"]["role"] == "toolResult")
        .unwrap();
    assert_eq!(nested_record(&entry["message"]), record);

    // RPC carries the same events.
    let mock_rpc = Mock::start(scenario());
    let fx_rpc = Fixture::new(&mock_rpc);
    let rpc = rpc_events(ours(&fx_rpc, "rpc"));
    assert_eq!(tool_events(&rpc), got);
    assert_eq!(nested_record(&tool_result_message(&rpc)), record);

    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(scenario());
    let fx = Fixture::new(&mock);
    let theirs_json = json_events(theirs(&reference, &fx, "json"));
    assert_eq!(tool_events(&theirs_json), got);
    assert_eq!(nested_record(&tool_result_message(&theirs_json)), record);
    let mock = Mock::start(scenario());
    let fx = Fixture::new(&mock);
    let theirs_rpc = rpc_events(theirs(&reference, &fx, "rpc"));
    assert_eq!(tool_events(&theirs_rpc), got);
}

#[test]
fn extensions_see_nested_calls_with_their_parent_as_in_pi_16() {
    let test = "extensions_see_nested_calls_with_their_parent_as_in_pi_16";
    let Some(env) = crate::extensions::environment(test) else {
        return;
    };
    let trace_of = |mut cmd: Command, fx: &Fixture| {
        let trace = fx.root.path().join("nested.trace");
        cmd.env("PI_TRACE_FILE", &trace);
        crate::harness::Pi::from_command(cmd).run().assert_ok();
        std::fs::read_to_string(&trace).unwrap_or_default()
    };
    let nested = crate::extensions::fixture("nested.ts");
    let args = ["-e", nested.as_str(), "--tools", "read,bash,codemode", "-p", "go"];
    let mock = Mock::start(scenario());
    let fx = Fixture::new(&mock);
    let ours = trace_of(crate::extensions::pi_with(&fx, &env, args).cmd, &fx);
    let id = "call_mock_0_0";
    // The invalid call fails validation before the hooks: no tool_call, no tool_result.
    assert_eq!(
        ours,
        format!(
            "tool_execution_start codemode {id} parent=-\n\
             tool_call codemode {id} parent=-\n\
             tool_execution_start read {id}/1 parent={id}\n\
             tool_call read {id}/1 parent={id}\n\
             tool_result read {id}/1 parent={id} isError=false\n\
             tool_execution_end read {id}/1 parent={id} isError=false\n\
             tool_execution_start bash {id}/2 parent={id}\n\
             tool_call bash {id}/2 parent={id}\n\
             tool_result bash {id}/2 parent={id} isError=false\n\
             tool_execution_end bash {id}/2 parent={id} isError=false\n\
             tool_execution_start read {id}/3 parent={id}\n\
             tool_execution_end read {id}/3 parent={id} isError=true\n\
             tool_result codemode {id} parent=- isError=false\n\
             tool_execution_end codemode {id} parent=- isError=false\n"
        )
    );
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(scenario());
    let fx = Fixture::new(&mock);
    let mut cmd = reference.command();
    cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
    assert_eq!(trace_of(cmd, &fx), ours);
}
