//! Seeded fuzzing of RPC command dispatch against a running `pi --mode rpc`: valid JSON lines of
//! every command type with fields missing, of the wrong type, or extra, and ids of every JSON
//! type. Each line must get one response within a few seconds (no hang), a failed one must say
//! why, the process must stay up and exit cleanly at end of input (no panic), and every session
//! file it wrote must load again with every line an entry.
//! `PI_FUZZ_ITERS=2000 cargo test -p pi-coding-agent --test cli rpc_fuzz` runs longer.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use pi_test_support::fuzz::{self, Rng};
use pi_test_support::Script;
use serde_json::{json, Map, Value};

use crate::harness::{pi_bin, Fixture, Mock};

/// The longest a response may take: a prompt answers at once, a bash command is `echo`.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(15);

/// Each command type and its fields with a valid value (`None`: the field is optional).
fn commands(tmp: &Path) -> Vec<(&'static str, Vec<(&'static str, Value)>)> {
    let inside = |name: &str| Value::String(tmp.join(name).display().to_string());
    vec![
        (
            "prompt",
            vec![
                ("message", json!("fuzz prompt")),
                ("streamingBehavior", json!("followUp")),
            ],
        ),
        ("steer", vec![("message", json!("fuzz steer"))]),
        ("follow_up", vec![("message", json!("fuzz follow-up"))]),
        ("abort", vec![]),
        ("new_session", vec![("parentSession", inside("no-such-parent.jsonl"))]),
        ("get_state", vec![]),
        (
            "set_model",
            vec![("provider", json!("mock-openai")), ("modelId", json!("mock-model"))],
        ),
        ("cycle_model", vec![]),
        ("get_available_models", vec![]),
        ("set_thinking_level", vec![("level", json!("low"))]),
        ("cycle_thinking_level", vec![]),
        ("set_steering_mode", vec![("mode", json!("all"))]),
        ("set_follow_up_mode", vec![("mode", json!("one-at-a-time"))]),
        ("compact", vec![("customInstructions", json!("short"))]),
        ("set_auto_compaction", vec![("enabled", json!(false))]),
        ("set_auto_retry", vec![("enabled", json!(true))]),
        ("abort_retry", vec![]),
        ("bash", vec![("command", json!("echo fuzz"))]),
        ("abort_bash", vec![]),
        ("get_session_stats", vec![]),
        ("export_html", vec![("outputPath", inside("fuzz-export.html"))]),
        ("switch_session", vec![("sessionPath", inside("no-such-session.jsonl"))]),
        ("fork", vec![("entryId", json!("00000000"))]),
        ("clone", vec![]),
        ("get_fork_messages", vec![]),
        ("get_last_assistant_text", vec![]),
        ("set_session_name", vec![("name", json!("fuzzed"))]),
        ("get_messages", vec![]),
        ("get_commands", vec![]),
        ("clear_queue", vec![]),
        ("get_available_thinking_levels", vec![]),
        ("get_entries", vec![("since", json!("00000000"))]),
        ("get_tree", vec![]),
        ("no_such_command", vec![]),
    ]
}

/// A value of a random JSON type (never a string that names a path or a shell command).
fn wrong_value(rng: &mut Rng) -> Value {
    match rng.below(9) {
        0 => Value::Null,
        1 => json!(rng.chance(2)),
        2 => json!(rng.below(1000) as i64 - 500),
        3 => json!(1.5e300),
        4 => json!(""),
        5 => json!("   "),
        6 => json!([1, "two", null]),
        7 => json!({"nested": {"deep": [true]}}),
        _ => json!("\u{0}\u{fffd}\u{2028}é"),
    }
}

/// One command line: the type's fields each valid, wrong or left out, maybe extra fields, and
/// an id of any JSON type or none. The id is returned when it is a string.
fn command_line(rng: &mut Rng, table: &[(&'static str, Vec<(&'static str, Value)>)], n: usize) -> (String, Value) {
    let (kind, fields) = rng.pick(table);
    let mut obj = Map::new();
    let id = match rng.below(6) {
        0 => Value::Null,
        1 => json!(n),
        2 => wrong_value(rng),
        _ => json!(format!("fz-{n}")),
    };
    let id = if rng.below(8) != 0 {
        obj.insert("id".into(), id.clone());
        id
    } else {
        Value::Null
    };
    obj.insert(
        "type".into(),
        if rng.below(30) == 0 {
            wrong_value(rng)
        } else {
            json!(kind)
        },
    );
    for (name, valid) in fields {
        match rng.below(4) {
            0 => {}
            1 => {
                obj.insert((*name).into(), wrong_value(rng));
            }
            _ => {
                obj.insert((*name).into(), valid.clone());
            }
        }
    }
    for _ in 0..rng.below(3) {
        let name = rng.pick(&["extra", "images", "message", "level", "enabled", "id2", "__proto__"]);
        obj.insert((*name).into(), wrong_value(rng));
    }
    (Value::Object(obj).to_string(), id)
}

/// The process's stdout, line by line, on a thread (so a wait can time out).
fn lines_of(child: &mut Child) -> Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The next `response` line, skipping events; fails on a hang, a closed pipe or a non-JSON line.
fn next_response(rx: &Receiver<String>, sent: &str) -> Value {
    let deadline = Instant::now() + RESPONSE_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = match rx.recv_timeout(left) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no response within {RESPONSE_TIMEOUT:?} to {sent}"),
            Err(RecvTimeoutError::Disconnected) => panic!("pi closed its output after {sent}"),
        };
        let value: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}) after {sent}: {line}"));
        if value["type"] == "response" {
            return value;
        }
    }
}

fn send(stdin: &mut ChildStdin, line: &str) {
    stdin.write_all(line.as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin.flush().unwrap();
}

#[test]
fn fuzzed_commands_each_get_an_answer_and_leave_loadable_sessions() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let tmp = fx.root.path().canonicalize().unwrap();
    let table = commands(&tmp);
    let mut child = Command::new(pi_bin())
        .args(["--mode", "rpc"])
        .current_dir(&fx.proj)
        .envs(fx.agent.env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines_of(&mut child);
    let mut stdin = child.stdin.take().unwrap();
    let mut rng = Rng::new(0x5eed_0000_0000_0c01);
    let (mut succeeded, mut refused) = (0, 0);
    for n in 0..fuzz::iters(150) {
        let (line, id) = command_line(&mut rng, &table, n);
        send(&mut stdin, &line);
        let response = next_response(&rx, &line);
        match response["success"] {
            Value::Bool(true) => succeeded += 1,
            Value::Bool(false) => {
                refused += 1;
                let error = response["error"].as_str().unwrap_or_default();
                assert!(
                    !error.trim().is_empty(),
                    "a refusal without a reason for {line}: {response}"
                );
                assert!(!error.contains("panicked"), "{line}: {response}");
            }
            _ => panic!("no success flag for {line}: {response}"),
        }
        if id.is_string() && response["command"] != "parse" {
            assert_eq!(response["id"], id, "the id is not echoed for {line}: {response}");
        }
    }
    // Still answering, and sane.
    send(&mut stdin, r#"{"id":"final","type":"get_state"}"#);
    let state = next_response(&rx, "the final get_state");
    assert_eq!(
        (state["id"].clone(), state["success"].clone()),
        (json!("final"), json!(true)),
        "{state}"
    );
    assert!(succeeded > 0 && refused > 0, "{succeeded} succeeded, {refused} refused");

    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("pi did not exit at end of input");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(status.success(), "exit {status:?}: {stderr}");

    let sessions = fx.sessions();
    assert!(!sessions.is_empty(), "no session was written");
    for file in sessions {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("{}:{}: not JSON ({e}): {line}", file.display(), i + 1));
        }
        let session = pi_session::SessionManager::open_read_only(&file)
            .unwrap_or_else(|e| panic!("{} does not load: {e}", file.display()));
        assert_eq!(
            session.load_report().skipped,
            vec![],
            "{}: lines that are not entries",
            file.display()
        );
    }
}
