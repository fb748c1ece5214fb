//! One command (or one situation) per test, against the real binary: errors, commands sent
//! while a prompt streams, bash and its abort, session replacement, and stdin EOF.

use std::time::{Duration, Instant};

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::harness::{read_jsonl, Pi, World};

/// A script whose "slow" prompts stream for a long time (far longer than any test waits),
/// and whose other prompts are echoed.
fn slow_world() -> World {
    World::new(
        Script::matching()
            .rule("slow", vec![Turn::big(2000).with_delay_ms(10)])
            .with_default(Turn::text("echo: {{last_user}}")),
    )
}

fn ok(r: &Value) -> &Value {
    assert_eq!(r["success"], true, "command failed: {r}");
    &r["data"]
}

fn error(r: &Value) -> &str {
    assert_eq!(r["success"], false, "command succeeded: {r}");
    r["error"].as_str().expect("error text")
}

/// Start a slow prompt and wait until its reply streams.
fn start_slow(pi: &mut Pi, id: &str) {
    ok(&pi.call(json!({"id": id, "type": "prompt", "message": "slow reply please"})));
    pi.wait_for("streamed text", |l| {
        l["type"] == "message_update" && l["assistantMessageEvent"]["type"] == "text_delta"
    });
}

fn state(pi: &mut Pi, id: &str) -> Value {
    ok(&pi.call(json!({"id": id, "type": "get_state"}))).clone()
}

#[test]
fn bad_lines_and_unknown_commands_get_pis_errors() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();

    pi.send_line("this is not json");
    let r = pi.wait_for("parse error", |l| l["command"] == "parse");
    assert_eq!(
        error(&r),
        "Failed to parse command: Unexpected token 'h', \"this is not json\" is not valid JSON"
    );
    assert!(r.get("id").is_none());

    // pi 1.6 answers an unknown command with its id.
    pi.send(&json!({"id": "u1", "type": "no_such_command"}));
    let r = pi.wait_for("unknown command", |l| l["command"] == "no_such_command");
    assert_eq!(error(&r), "Unknown command: no_such_command");
    assert_eq!(r["id"], "u1");

    let r = pi.call(json!({"id": "m1", "type": "set_model", "provider": "nope", "modelId": "missing"}));
    assert_eq!(error(&r), "Model not found: nope/missing");

    // The process is still serving after the errors.
    assert_eq!(state(&mut pi, "s1")["isStreaming"], false);
    pi.close_stdin();
    assert!(pi.wait_exit().success());
}

#[test]
fn prompt_runs_and_is_saved() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();
    ok(&pi.call(json!({"id": "p1", "type": "prompt", "message": "hi there"})));
    let end = pi.event("agent_end");
    // The loadout's system message, the prompt and the reply.
    assert_eq!(end["messages"].as_array().map(Vec::len), Some(3));
    assert_eq!(end["messages"][0]["role"], "system");
    // The prompt is answered before its first event.
    let types: Vec<&str> = pi.seen.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(types[..3], ["response", "agent_start", "turn_start"]);
    let text = pi.call(json!({"id": "t", "type": "get_last_assistant_text"}));
    assert_eq!(ok(&text)["text"], "echo: hi there");
    let stats = pi.call(json!({"id": "st", "type": "get_session_stats"}));
    let stats = ok(&stats);
    assert_eq!(stats["userMessages"], 1);
    assert_eq!(stats["assistantMessages"], 1);
    let file = stats["sessionFile"].as_str().expect("session file").to_string();
    let types: Vec<String> = read_jsonl(std::path::Path::new(&file))
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        types,
        [
            "session",
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message"
        ]
    );
}

#[test]
fn steer_and_follow_up_while_streaming_update_the_queue_then_abort_stops_the_run() {
    let world = slow_world();
    let mut pi = world.spawn();
    start_slow(&mut pi, "p1");

    let r = pi.call(json!({"id": "p2", "type": "prompt", "message": "while busy"}));
    assert_eq!(
        error(&r),
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    );

    pi.send(&json!({"id": "s", "type": "steer", "message": "steering message"}));
    let q = pi.event("queue_update");
    assert_eq!(q["steering"], json!(["steering message"]));
    assert_eq!(q["followUp"], json!([]));
    ok(&pi.response("s"));

    pi.send(&json!({"id": "f", "type": "follow_up", "message": "follow-up message"}));
    let q = pi.event("queue_update");
    assert_eq!(q["followUp"], json!(["follow-up message"]));
    ok(&pi.response("f"));

    // A prompt with streamingBehavior queues instead of failing.
    pi.send(&json!({"id": "p3", "type": "prompt", "message": "queued prompt", "streamingBehavior": "followUp"}));
    let q = pi.event("queue_update");
    assert_eq!(q["followUp"], json!(["follow-up message", "queued prompt"]));
    ok(&pi.response("p3"));

    let s = state(&mut pi, "g1");
    assert_eq!(s["isStreaming"], true);
    assert_eq!(s["pendingMessageCount"], 3);

    let started = Instant::now();
    pi.send(&json!({"id": "a", "type": "abort"}));
    let end = pi.event("agent_end");
    let last = end["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["stopReason"], "aborted");
    ok(&pi.response("a"));
    // pi answers abort once the run has ended.
    let at = |pred: &dyn Fn(&Value) -> bool| pi.seen.iter().position(pred);
    let (end_at, abort_at) = (at(&|l| l["type"] == "agent_end"), at(&|l| l["id"] == "a"));
    assert!(
        end_at < abort_at,
        "agent_end {end_at:?} before the abort response {abort_at:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "abort took {:?}",
        started.elapsed()
    );

    let s = state(&mut pi, "g2");
    assert_eq!(s["isStreaming"], false);
    // pi keeps the queued messages after an abort (the golden get_state after abort shows 2).
    assert_eq!(s["pendingMessageCount"], 3);
    // The system message, the prompt and the aborted reply.
    assert_eq!(s["messageCount"], 3);
}

#[test]
fn bash_runs_and_abort_bash_cancels_a_long_command() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();

    let r = pi.call(json!({"id": "b1", "type": "bash", "command": "echo from-rpc-bash; exit 3"}));
    let data = ok(&r);
    assert_eq!(data["output"], "from-rpc-bash\n");
    assert_eq!(data["exitCode"], 3);
    assert_eq!(data["cancelled"], false);

    let started = Instant::now();
    pi.send(&json!({"id": "b2", "type": "bash", "command": "echo started; sleep 30"}));
    std::thread::sleep(Duration::from_millis(300));
    // get_state is answered while bash runs.
    assert_eq!(state(&mut pi, "g")["isStreaming"], false);
    ok(&pi.call(json!({"id": "ab", "type": "abort_bash"})));
    let r = pi.response("b2");
    let data = ok(&r);
    assert_eq!(data["cancelled"], true, "{data}");
    assert!(data["exitCode"].is_null(), "{data}");
    assert!(started.elapsed() < Duration::from_secs(10));

    // Both runs are in the context as bash execution messages.
    let msgs = pi.call(json!({"id": "m", "type": "get_messages"}));
    let msgs = ok(&msgs)["messages"].as_array().cloned().unwrap_or_default();
    let roles: Vec<&str> = msgs.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["bashExecution", "bashExecution"]);
}

#[test]
fn export_html_writes_the_file_it_names() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();
    ok(&pi.call(json!({"id": "p", "type": "prompt", "message": "export me"})));
    pi.event("agent_end");
    let out = world.proj().join("out.html");
    let r = pi.call(json!({"id": "e", "type": "export_html", "outputPath": out.display().to_string()}));
    assert_eq!(ok(&r)["path"], out.display().to_string());
    let html = std::fs::read_to_string(&out).expect("html written");
    assert!(html.contains("<html"), "not an HTML page");
}

#[test]
fn session_commands_replace_the_session() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();
    ok(&pi.call(json!({"id": "p1", "type": "prompt", "message": "first"})));
    pi.event("agent_end");
    ok(&pi.call(json!({"id": "p2", "type": "prompt", "message": "second"})));
    pi.event("agent_end");
    let first = state(&mut pi, "g0");
    let first_file = first["sessionFile"].as_str().expect("file").to_string();

    // Fork errors: an id that does not exist, and one that is not a user message.
    let r = pi.call(json!({"id": "f0", "type": "fork", "entryId": "deadbeef"}));
    assert_eq!(error(&r), "Invalid entry ID for forking");
    let points = pi.call(json!({"id": "fm", "type": "get_fork_messages"}));
    let points = ok(&points)["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(points.len(), 2);
    let entries = read_jsonl(std::path::Path::new(&first_file));
    let assistant_id = entries
        .iter()
        .find(|e| e["message"]["role"] == "assistant")
        .and_then(|e| e["id"].as_str())
        .expect("assistant entry")
        .to_string();
    let r = pi.call(json!({"id": "f1", "type": "fork", "entryId": assistant_id}));
    assert_eq!(error(&r), "Invalid entry ID for forking");
    assert_eq!(state(&mut pi, "g1")["sessionFile"], first_file.as_str());

    // Fork at the second prompt: a new file with the first exchange, the text handed back.
    let r = pi.call(json!({"id": "f2", "type": "fork", "entryId": points[1]["entryId"]}));
    assert_eq!(ok(&r)["text"], "second");
    assert_eq!(ok(&r)["cancelled"], false);
    let forked = state(&mut pi, "g2");
    assert_ne!(forked["sessionFile"], first_file.as_str());
    // The system message and the first exchange.
    assert_eq!(forked["messageCount"], 3);

    // Clone: another file, same messages.
    ok(&pi.call(json!({"id": "c", "type": "clone"})));
    let cloned = state(&mut pi, "g3");
    assert_ne!(cloned["sessionFile"], forked["sessionFile"]);
    assert_eq!(cloned["messageCount"], 3);

    // Back to the first file.
    ok(&pi.call(json!({"id": "sw", "type": "switch_session", "sessionPath": first_file})));
    let back = state(&mut pi, "g4");
    assert_eq!(back["sessionFile"], first_file.as_str());
    // The system message and two exchanges.
    assert_eq!(back["messageCount"], 5);

    // New session: empty.
    ok(&pi.call(json!({"id": "n", "type": "new_session"})));
    let fresh = state(&mut pi, "g5");
    assert_eq!(fresh["messageCount"], 0);
    assert_ne!(fresh["sessionFile"], first_file.as_str());

    // A prompt in the new session lands in its file.
    ok(&pi.call(json!({"id": "p3", "type": "prompt", "message": "third"})));
    pi.event("agent_end");
    pi.close_stdin();
    assert!(pi.wait_exit().success());
    let fresh_file = fresh["sessionFile"].as_str().expect("file");
    let roles: Vec<Value> = read_jsonl(std::path::Path::new(fresh_file))
        .iter()
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"]["role"].clone())
        .collect();
    // A new session declares its loadout again before its first prompt.
    assert_eq!(roles, [json!("system"), json!("user"), json!("assistant")]);
    assert_eq!(world.session_files().len(), 4);
}

#[test]
fn switch_session_to_a_missing_file_starts_a_session_there() {
    // pi opens a missing path as a new session that will be written at that path.
    let world = World::new(Script::echo());
    let mut pi = world.spawn();
    let path = world.root.path().join("elsewhere/missing.jsonl");
    let r = pi.call(json!({"id": "sw", "type": "switch_session", "sessionPath": path.display().to_string()}));
    assert_eq!(ok(&r)["cancelled"], false, "{r}");
    let s = state(&mut pi, "g");
    assert_eq!(s["sessionFile"], path.display().to_string());
    assert_eq!(s["messageCount"], 0);
}

#[test]
fn fork_before_any_prompt() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();
    let r = pi.call(json!({"id": "f", "type": "fork", "entryId": "00000000"}));
    assert_eq!(error(&r), "Invalid entry ID for forking");
}

#[test]
fn settings_commands_show_in_state() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();
    ok(&pi.call(json!({"id": "1", "type": "set_steering_mode", "mode": "all"})));
    ok(&pi.call(json!({"id": "2", "type": "set_follow_up_mode", "mode": "all"})));
    ok(&pi.call(json!({"id": "3", "type": "set_auto_compaction", "enabled": false})));
    ok(&pi.call(json!({"id": "4", "type": "set_auto_retry", "enabled": false})));
    ok(&pi.call(json!({"id": "5", "type": "abort_retry"})));
    ok(&pi.call(json!({"id": "6", "type": "abort_bash"})));
    ok(&pi.call(json!({"id": "7", "type": "abort"})));
    let s = state(&mut pi, "g");
    assert_eq!(s["steeringMode"], "all");
    assert_eq!(s["followUpMode"], "all");
    assert_eq!(s["autoCompactionEnabled"], false);

    pi.send(&json!({"id": "n", "type": "set_session_name", "name": "named"}));
    let e = pi.event("session_info_changed");
    assert_eq!(e["name"], "named");
    ok(&pi.response("n"));
    assert_eq!(state(&mut pi, "g2")["sessionName"], "named");

    // Thinking levels on a model without reasoning stay off.
    pi.send(&json!({"id": "t", "type": "set_thinking_level", "level": "high"}));
    ok(&pi.response("t"));
    assert_eq!(state(&mut pi, "g3")["thinkingLevel"], "off");
    let r = pi.call(json!({"id": "ct", "type": "cycle_thinking_level"}));
    assert!(ok(&r).is_null(), "{r}");

    // pi 1.6: set_model to a reasoning model keeps the current level ("off"), unannounced.
    let r = pi.call(json!({"id": "sm", "type": "set_model", "provider": "mock-anthropic", "modelId": "mock-thinker"}));
    assert_eq!(ok(&r)["id"], "mock-thinker");
    assert_eq!(state(&mut pi, "g4")["thinkingLevel"], "off");
    assert!(!pi.seen.iter().any(|l| l["type"] == "thinking_level_changed"));

    let r = pi.call(json!({"id": "cm", "type": "cycle_model"}));
    assert!(ok(&r)["model"]["id"].is_string(), "{r}");
    let r = pi.call(json!({"id": "am", "type": "get_available_models"}));
    assert_eq!(ok(&r)["models"].as_array().map(Vec::len), Some(6));
    // With nothing configured only the commands of pi's built-in extensions are listed.
    let r = pi.call(json!({"id": "gc", "type": "get_commands"}));
    let names: Vec<&str> = ok(&r)["commands"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["llama", "mcp"], "{r}");
}

/// A mock that summarises, with a keep-recent window so small that a second prompt leaves
/// the first exchange to summarise (pi 1.6 refuses when nothing precedes the kept range).
fn summarising_world() -> World {
    let world = World::new(
        Script::matching()
            .rule(
                "context checkpoint summary|conversation to summarize",
                vec![Turn::text("## Goal\nsummary")],
            )
            .with_default(Turn::text("echo: {{last_user}}")),
    );
    world
        .agent
        .write("settings.json", r#"{"compaction": {"keepRecentTokens": 4}}"#)
        .expect("settings");
    world
}

#[test]
fn compact_refuses_a_session_with_nothing_before_the_kept_range() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();
    ok(&pi.call(json!({"id": "p", "type": "prompt", "message": "only one"})));
    pi.event("agent_settled");
    pi.send(&json!({"id": "c", "type": "compact"}));
    let end = pi.event("compaction_end");
    assert_eq!(
        end["errorMessage"],
        "Compaction failed: Nothing to compact (session too small)"
    );
    assert_eq!(error(&pi.response("c")), "Nothing to compact (session too small)");
    pi.close_stdin();
    assert!(pi.wait_exit().success());
    assert_eq!(world.server.requests().len(), 1, "no summary request");
}

#[test]
fn compact_summarises_and_reports() {
    let world = summarising_world();
    let mut pi = world.spawn();
    for (i, m) in ["one", "two"].iter().enumerate() {
        ok(&pi.call(json!({"id": format!("p{i}"), "type": "prompt", "message": m})));
        pi.event("agent_end");
    }
    pi.send(&json!({"id": "c", "type": "compact"}));
    let start = pi.event("compaction_start");
    assert_eq!(start["reason"], "manual");
    let end = pi.event("compaction_end");
    assert_eq!(end["aborted"], false);
    let r = pi.response("c");
    assert_eq!(ok(&r)["summary"], "## Goal\nsummary");
    assert_eq!(end["result"], ok(&r).clone());
}

#[test]
fn stdin_eof_while_a_prompt_streams_saves_the_work_and_exits_0() {
    // TypeScript pi exits at once and, before the first reply has ended, loses the exchange
    // (its file is written from the first assistant message); we keep what was said.
    let world = slow_world();
    let mut pi = world.spawn();
    start_slow(&mut pi, "p");
    let file = state(&mut pi, "g")["sessionFile"].as_str().expect("file").to_string();
    let started = Instant::now();
    pi.close_stdin();
    let status = pi.wait_exit();
    assert!(status.success(), "exit {status:?}: {}", pi.stderr());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "exit took {:?}",
        started.elapsed()
    );
    // pi stops listening before it winds the run down, so what follows on stdout is not
    // asserted; the session file is.
    pi.drain();
    let roles: Vec<Value> = read_jsonl(std::path::Path::new(&file))
        .iter()
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"]["role"].clone())
        .collect();
    assert_eq!(
        roles,
        [json!("system"), json!("user"), json!("assistant")],
        "the loadout, the user message and the partial reply are saved"
    );
}

#[test]
fn state_is_answered_while_a_prompt_streams() {
    let world = slow_world();
    let mut pi = world.spawn();
    start_slow(&mut pi, "p");
    let started = Instant::now();
    let s = state(&mut pi, "g");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(s["isStreaming"], true);
    // The system message and the prompt.
    assert_eq!(s["messageCount"], 2);
    let r = pi.call(json!({"id": "m", "type": "get_messages"}));
    assert_eq!(ok(&r)["messages"].as_array().map(Vec::len), Some(2));
    ok(&pi.call(json!({"id": "a", "type": "abort"})));
}

#[test]
fn session_stats_count_the_whole_file_after_compaction() {
    let world = summarising_world();
    let mut pi = world.spawn();
    for (i, m) in ["one", "two"].iter().enumerate() {
        ok(&pi.call(json!({"id": format!("p{i}"), "type": "prompt", "message": m})));
        pi.event("agent_end");
    }
    ok(&pi.call(json!({"id": "c", "type": "compact"})));
    let msgs = pi.call(json!({"id": "m", "type": "get_messages"}));
    let context = ok(&msgs)["messages"].as_array().map(Vec::len);
    let stats = pi.call(json!({"id": "s", "type": "get_session_stats"}));
    // pi 1.6 counts every message entry, the compacted ones too (the system message and the
    // two exchanges), not just the context after the summary.
    assert_eq!(ok(&stats)["totalMessages"], 5, "{stats}");
    assert_eq!(ok(&stats)["userMessages"], 2, "{stats}");
    assert!(context.is_some_and(|n| n < 5), "the context is smaller: {context:?}");
}

#[test]
fn model_switches_keep_the_thinking_level_and_leave_settings_alone() {
    let world = World::new(Script::echo());
    let mut pi = world.spawn();
    // pi 1.6: mock-openai/mock-model (off) -> mock-openai/mock-thinker keeps "off", unannounced.
    let r = pi.call(json!({"id": "c1", "type": "cycle_model"}));
    assert_eq!(ok(&r)["model"]["id"], "mock-thinker");
    assert_eq!(ok(&r)["thinkingLevel"], "off");
    assert!(!pi.seen.iter().any(|l| l["type"] == "thinking_level_changed"));
    // A level chosen on the thinker is announced, then clamped to off on a model without
    // reasoning, announced again.
    pi.send(&json!({"id": "t", "type": "set_thinking_level", "level": "high"}));
    assert_eq!(pi.event("thinking_level_changed")["level"], "high");
    ok(&pi.response("t"));
    let r = pi.call(json!({"id": "c2", "type": "cycle_model"}));
    assert_eq!(ok(&r)["model"]["id"], "mock-model");
    assert_eq!(ok(&r)["thinkingLevel"], "off");
    let changes: Vec<Value> = pi
        .seen
        .iter()
        .filter(|l| l["type"] == "thinking_level_changed")
        .cloned()
        .collect();
    assert_eq!(
        changes.last().map(|c| c["level"].clone()),
        Some(json!("off")),
        "{changes:?}"
    );
    // Nothing of this reached settings.json.
    let settings = std::fs::read_to_string(world.agent.path().join("settings.json")).unwrap_or_default();
    assert!(!settings.contains("defaultThinkingLevel"), "{settings}");
    assert!(!settings.contains("mock-thinker"), "{settings}");
}
