//! The reference TypeScript pi 1.6 against this mock reproduces its golden transcripts
//! (`testdata/golden-1.6/`), and every recorded request (0.73 and 1.6) gets its recorded turn.
//! The first needs the reference pi (see `pi_test_support::reference_pi`).

use std::path::{Path, PathBuf};

use pi_test_support::{golden_073, golden_16, reference_pi, AgentDir, MockServer, Script};
use serde_json::Value;

const TOOLS_PROMPT: &str =
    "Inspect hello.txt, create notes/todo.md, change the greeting to Hello pi, and run a quick check.";

/// Normalise one event line: drop live partial snapshots (their content depends on timing in
/// the TypeScript pi), and replace times, durations, ids, the scratch path and the input-token numbers
/// (they follow the request size, which follows the scratch path length).
fn normalise(value: &mut Value, tmp: &str) {
    if value["type"] == "message_update" {
        if let Some(obj) = value.as_object_mut() {
            obj.remove("message");
            // 1.6 adds the live usage object, read when the line is written.
            obj.remove("usage");
        }
        if let Some(event) = value.get_mut("assistantMessageEvent").and_then(Value::as_object_mut) {
            event.remove("partial");
        }
    }
    if value["type"] == "message_start" && value["message"]["role"] == "assistant" {
        value["message"]["usage"] = Value::Null;
        // Whether the reply's id has arrived when the line is written is a race in 1.6.
        if let Some(message) = value["message"].as_object_mut() {
            message.remove("responseId");
        }
    }
    scrub(value, tmp);
    blank_prose(value);
}

/// The reference's own wording is masked in `testdata/` (see its README): the system prompt
/// sections of 1.6's `system` messages and tool descriptions are blanked on both sides.
fn blank_prose(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("role").and_then(Value::as_str) == Some("system") {
                if let Some(Value::Object(sections)) = map.get_mut("sections") {
                    sections.values_mut().for_each(|s| *s = Value::from("<SYSTEM>"));
                }
            }
            for (key, item) in map.iter_mut() {
                if key == "description" && item.is_string() {
                    *item = Value::from("<DESC>");
                } else {
                    blank_prose(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(blank_prose),
        _ => {}
    }
}

fn scrub(value: &mut Value, tmp: &str) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match key.as_str() {
                    "timestamp" | "id" | "parentId" if !item.as_str().is_some_and(|s| s.contains("mock")) => {
                        *item = Value::from("<X>");
                    }
                    "durationMs" | "wall_time_seconds" if item.is_number() => *item = Value::from("<X>"),
                    "usage" if item.is_object() => {
                        for k in ["input", "totalTokens", "cost"] {
                            item[k] = Value::from("<X>");
                        }
                    }
                    _ => scrub(item, tmp),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| scrub(i, tmp)),
        Value::String(s) if s.contains(tmp) => *s = s.replace(tmp, "<TMP>"),
        _ => {}
    }
}

/// Ordered lines, plus the tool execution lines as a sorted list (parallel tools finish in any
/// order); streaming progress updates of tools are left out.
fn comparable(stdout: &str, tmp: &str) -> (Vec<String>, Vec<String>) {
    let mut ordered = Vec::new();
    let mut tools = Vec::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let mut value: Value = serde_json::from_str(line).unwrap_or_else(|_| Value::String(line.to_owned()));
        normalise(&mut value, tmp);
        let kind = value["type"].as_str().unwrap_or_default().to_owned();
        if kind == "tool_execution_update" {
            continue;
        }
        if kind.starts_with("tool_execution") {
            tools.push(value.to_string());
        } else {
            ordered.push(value.to_string());
        }
    }
    tools.sort();
    (ordered, tools)
}

fn fixture(root: &Path) -> PathBuf {
    let proj = root.join("proj");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(
        proj.join("hello.txt"),
        "Hello world\nThis is a test file.\nThird line.\n",
    )
    .unwrap();
    std::fs::write(
        proj.join("src/app.py"),
        "def main():\n    print(\"hi\")\n\n\nif __name__ == \"__main__\":\n    main()\n",
    )
    .unwrap();
    proj
}

async fn check_case(cli: &Path, golden: &Path, case: &str, scenario: &str, args: &[&str]) {
    let script = Script::from_file(&golden.join("scenarios").join(format!("{scenario}.json"))).unwrap();
    let server = MockServer::start(script).await.unwrap();
    let agent = AgentDir::golden(&server).unwrap();
    let root = tempfile::tempdir().unwrap();
    let proj = fixture(root.path());
    let output = tokio::process::Command::new(cli)
        .args(args)
        .current_dir(&proj)
        .envs(agent.env())
        .output()
        .await
        .unwrap();
    let expected_rc: i32 = std::fs::read_to_string(golden.join(format!("{case}.rc")))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(expected_rc),
        "{case}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tmp = root.path().display().to_string();
    let ours = comparable(&String::from_utf8_lossy(&output.stdout), &tmp);
    let theirs = comparable(
        &std::fs::read_to_string(golden.join(format!("{case}.stdout"))).unwrap(),
        "<TMP>",
    );
    assert_eq!(ours.0.len(), theirs.0.len(), "{case}: number of events");
    for (i, (a, b)) in ours.0.iter().zip(&theirs.0).enumerate() {
        assert_eq!(a, b, "{case}: event {i}");
    }
    assert_eq!(ours.1, theirs.1, "{case}: tool executions");
    // Every reply reported input tokens = request body bytes / 4.
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        std::fs::read_to_string(golden.join(format!("{case}.requests.jsonl")))
            .unwrap()
            .lines()
            .count()
    );
}

#[tokio::test]
async fn typescript_pi_against_the_mock_matches_the_golden_transcripts() {
    let Some(reference) = reference_pi("runs the reference pi against the mock") else {
        return;
    };
    let (cli, golden) = (reference.cli, golden_16());
    check_case(&cli, &golden, "hello-json", "echo", &["--mode", "json", "-p", "hello"]).await;
    for provider in ["mock-openai", "mock-anthropic", "mock-responses"] {
        let case = format!("tools-json-{provider}");
        let args = [
            "--mode",
            "json",
            "--provider",
            provider,
            "--model",
            "mock-model",
            "-p",
            TOOLS_PROMPT,
        ];
        check_case(&cli, &golden, &case, "tools", &args).await;
    }
}

/// Which scenario answered each golden case.
fn scenario_of(case: &str) -> &'static str {
    if case.starts_with("think") {
        "think"
    } else if case.starts_with("tools") {
        "tools"
    } else if case == "rpc" {
        "rpc"
    } else {
        "echo"
    }
}

#[tokio::test]
async fn replayed_golden_requests_get_the_golden_turns() {
    replay_golden_requests(&golden_073()).await;
    replay_golden_requests(&golden_16()).await;
}

async fn replay_golden_requests(golden: &Path) {
    let dir = std::fs::read_dir(golden).unwrap();
    let mut logs: Vec<PathBuf> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".requests.jsonl"))
        .collect();
    logs.sort();
    let client = reqwest::Client::new();
    let mut checked = 0;
    for log in logs {
        let name = log
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".requests.jsonl", "");
        let scenario = golden.join("scenarios").join(format!("{}.json", scenario_of(&name)));
        let server = MockServer::start(Script::from_file(&scenario).unwrap()).await.unwrap();
        let recorded: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for request in &recorded {
            let url = format!("{}{}", server.url(), request["path"].as_str().unwrap());
            // Only the choice of turn is compared; the reply itself need not be read.
            let response = client.post(url).body(request["body"].to_string()).send().await.unwrap();
            assert_eq!(response.status(), 200);
        }
        for (ours, theirs) in server.requests().iter().zip(&recorded) {
            assert_eq!(
                ours.turn_index,
                theirs["turn_index"].as_u64().map(|i| i as usize),
                "{name} seq {}",
                theirs["seq"]
            );
            assert_eq!(
                serde_json::to_value(ours.turn.as_ref().unwrap()).unwrap(),
                theirs["turn"],
                "{name} seq {}",
                theirs["seq"]
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} golden requests replayed");
}
