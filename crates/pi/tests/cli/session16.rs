//! pi 1.6's records of the prompt and tools, ours and the reference's side by side against
//! the mock: a compaction keeps the declared system message as its checkpoint (so the prompt
//! after it declares nothing again), and tools changed in the middle of a run are declared by
//! a system message before the next request. Without the reference pi only ours is checked.

use serde_json::{json, Value};

use crate::extensions::{environment, fixture, pi_with};
use crate::harness::{json_lines, Fixture, Mock, Pi};
use pi_test_support::{Script, Turn};

pub(crate) fn session_entries(fx: &Fixture) -> Vec<Value> {
    json_lines(&std::fs::read_to_string(fx.only_session()).unwrap())
}

/// An entry as `type` or `message/<role>`.
fn kind(entry: &Value) -> String {
    match entry["message"]["role"].as_str() {
        Some(role) => format!("message/{role}"),
        None => entry["type"].as_str().unwrap_or_default().to_string(),
    }
}

pub(crate) fn keys(v: &Value) -> Vec<String> {
    v.as_object().into_iter().flatten().map(|(k, _)| k.clone()).collect()
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

fn iso_ms(iso: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(iso).unwrap().timestamp_millis()
}

/// The reference pi with `args`, in the fixture's project and agent dir.
pub(crate) fn reference(fx: &Fixture, args: &[&str]) -> Option<Pi> {
    let reference = pi_test_support::reference_pi("compares with the TypeScript pi 1.6")?;
    let mut cmd = reference.command();
    cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
    Some(Pi::from_command(cmd))
}

/// Send `command` to an RPC process and keep its input open until the response with `id`
/// (both pis cancel a compaction when their input ends); returns that response.
pub(crate) fn rpc_until_answered(mut pi: Pi, command: &str, id: &str) -> Value {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    pi.cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{command}").unwrap();
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let wanted = id.to_string();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if v["type"] == "response" && v["id"] == wanted.as_str() {
                    let _ = tx.send(v);
                    return;
                }
            }
        }
    });
    let response = rx.recv_timeout(std::time::Duration::from_secs(30));
    drop(stdin);
    let _ = child.wait();
    response.unwrap_or_else(|_| panic!("no response to {command}"))
}

/// Two prompts against the echo mock, then an RPC `compact` keeping almost nothing (so the
/// first exchange is compacted); the mock, the fixture and the `compact` response.
pub(crate) fn two_prompts_then_compact(
    run: &dyn Fn(&Fixture, &[&str]) -> Option<Pi>,
) -> Option<(Mock, Fixture, Value)> {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    fx.agent
        .write("settings.json", r#"{"compaction": {"keepRecentTokens": 1}}"#)
        .unwrap();
    run(&fx, &["-p", "one"])?.run().assert_ok();
    run(&fx, &["-c", "-p", "two"])?.run().assert_ok();
    let response = rpc_until_answered(
        run(&fx, &["--mode", "rpc", "-c"])?,
        r#"{"id":"c","type":"compact"}"#,
        "c",
    );
    assert_eq!(response["success"], true, "{response}");
    Some((mock, fx, response))
}

/// Two prompts, an RPC `compact`, a third prompt; what the session and the last request show.
fn compaction_record(run: &dyn Fn(&Fixture, &[&str]) -> Option<Pi>) -> Option<Value> {
    let (mock, fx, _) = two_prompts_then_compact(run)?;
    run(&fx, &["-c", "-p", "three"])?.run().assert_ok();

    let entries = session_entries(&fx);
    let first_system = entries
        .iter()
        .find(|e| kind(e) == "message/system")
        .expect("a system message");
    let compaction = entries
        .iter()
        .find(|e| e["type"] == "compaction")
        .expect("a compaction");
    let checkpoint = &compaction["systemMessage"];
    assert_eq!(
        checkpoint["timestamp"].as_i64(),
        Some(iso_ms(compaction["timestamp"].as_str().unwrap())),
        "the checkpoint is stamped with the compaction's time: {compaction}"
    );
    // Nothing changed since the one system message: the checkpoint is it, as a whole.
    assert_eq!(checkpoint["sections"], first_system["message"]["sections"]);
    assert_eq!(checkpoint["toolsAdded"], first_system["message"]["toolsAdded"]);
    let requests = mock.requests();
    let last = requests.last().map(|r| r.body.clone()).unwrap();
    // The summary requests (the ones without tools) ask for the model's own output limit.
    let summary_caps: Vec<Value> = requests
        .iter()
        .filter(|r| r.body.get("tools").is_none())
        .map(|r| r.body["max_completion_tokens"].clone())
        .collect();
    Some(json!({
        "entries": entries.iter().map(kind).collect::<Vec<_>>(),
        "checkpointKeys": keys(checkpoint),
        "checkpointSections": keys(&checkpoint["sections"]),
        "checkpointTools": names(&checkpoint["toolsAdded"]),
        "lastRequestRoles": last["messages"].as_array().unwrap().iter().map(|m| m["role"].clone()).collect::<Vec<_>>(),
        "lastRequestTools": last["tools"].as_array().map_or(0, Vec::len),
        "summaryCaps": summary_caps,
    }))
}

#[test]
fn a_compaction_keeps_the_declared_system_message_as_pi_16_does() {
    let ours = compaction_record(&|fx, args| Some(fx.pi(args))).unwrap();
    assert_eq!(
        ours["entries"],
        json!([
            "session",
            "model_change",
            "thinking_level_change",
            "message/system",
            "message/user",
            "message/assistant",
            "message/user",
            "message/assistant",
            "compaction",
            "message/user",
            "message/assistant"
        ]),
        "the prompt after the compaction declares nothing again: {ours}"
    );
    assert_eq!(
        ours["checkpointKeys"],
        json!(["role", "content", "sections", "toolsAdded", "timestamp"])
    );
    assert_eq!(ours["checkpointTools"], json!(["read", "bash", "edit", "write"]));
    if let Some(theirs) = compaction_record(&reference) {
        assert_eq!(ours, theirs);
    }
}

/// A run whose extension, after the first turn, keeps `read` and `grep` active; what the events, the session and the second request show.
fn tool_change_record(run: &dyn Fn(&Fixture, &[String]) -> Option<Pi>) -> Option<Value> {
    let script = Script::sequential(vec![
        Turn::text("reading").with_tool_call("read", json!({"path": "hello.txt"})),
        Turn::text("done"),
    ]);
    let mock = Mock::start(script);
    let fx = Fixture::new(&mock);
    let args = ["--mode", "json", "-e", &fixture("tools_change.ts"), "go"].map(str::to_string);
    let out = run(&fx, &args)?.run();
    out.assert_ok();
    let ended: Vec<Value> = out
        .events()
        .into_iter()
        .filter(|e| e["type"] == "message_end")
        .map(|e| e["message"].clone())
        .collect();
    let systems: Vec<&Value> = ended.iter().filter(|m| m["role"] == "system").collect();
    assert_eq!(systems.len(), 2, "{ended:?}");
    let change = systems[1];
    let entries = session_entries(&fx);
    let stored = entries
        .iter()
        .filter(|e| kind(e) == "message/system")
        .nth(1)
        .expect("the change in the session");
    assert_eq!(&stored["message"], change, "the session keeps the message as sent");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let tools_of = |i: usize| -> Vec<String> {
        requests[i].body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .collect()
    };
    Some(json!({
        "roles": ended.iter().map(|m| m["role"].clone()).collect::<Vec<_>>(),
        "entries": entries.iter().map(kind).collect::<Vec<_>>(),
        "changeKeys": keys(change),
        "changeSections": keys(&change["sections"]),
        "added": names(&change["toolsAdded"]),
        "removed": names(&change["toolsRemoved"]),
        "requestTools": [tools_of(0), tools_of(1)],
    }))
}

#[test]
fn tools_changed_during_a_run_are_declared_before_the_next_request_as_pi_16_does() {
    let test = "tools_changed_during_a_run_are_declared_before_the_next_request_as_pi_16_does";
    let Some(env) = environment(test) else { return };
    let ours = tool_change_record(&|fx, args| Some(pi_with(fx, &env, args))).unwrap();
    assert_eq!(
        ours["roles"],
        json!(["system", "user", "assistant", "toolResult", "system", "assistant"])
    );
    assert_eq!(ours["added"], json!(["grep"]));
    assert_eq!(ours["removed"], json!(["bash", "edit", "write"]));
    assert_eq!(ours["requestTools"][1], json!(["read", "grep"]));
    let reference_args = |fx: &Fixture, args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        reference(fx, &args)
    };
    if let Some(theirs) = tool_change_record(&reference_args) {
        assert_eq!(ours, theirs);
    }
}
