//! Prompt cache warming (`cacheWarming`): an idle RPC session resends its last request with a
//! one-token cap before the model's cache entry expires and records a `usage` entry, as pi 1.6
//! does; an extension's `cache_warming_decision` can stop it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use pi_test_support::{AgentDir, Script};
use serde_json::{json, Value};

use crate::harness::{Fixture, Mock};

/// A model whose cache lives 11 s (so the refresh is due 1 s after a request) and whose cache
/// writes are dear enough that warming pays even when idle.
fn cached_model_agent(mock: &Mock) -> AgentDir {
    let agent = AgentDir::new(&mock.server).unwrap();
    let models = json!({"providers": {"mock-anthropic": {
        "baseUrl": mock.server.base_url_for(pi_test_support::Api::Anthropic),
        "api": "anthropic-messages",
        "apiKey": "sk-ant-mock",
        "models": [{"id": "mock-cached", "name": "Mock Cached", "reasoning": false, "input": ["text"],
                    "cost": {"input": 1000, "output": 0, "cacheRead": 0, "cacheWrite": 1000},
                    "promptCache": {"short": 11},
                    "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    agent.write("models.json", models.to_string()).unwrap();
    agent
}

/// An RPC process and its stdout, line by line.
struct Rpc {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
}

impl Rpc {
    fn spawn(mut cmd: Command) -> Rpc {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    if tx.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        Rpc { child, stdin, lines }
    }

    fn send(&mut self, command: Value) {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The first line `matches` accepts within `timeout`.
    fn wait_for(&self, timeout: Duration, matches: impl Fn(&Value) -> bool) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if matches(&line) => return Some(line),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_type(line: &Value, kind: &str) -> bool {
    line["type"] == kind
}

fn usage_entries(session: &str) -> Vec<Value> {
    session
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "usage")
        .collect()
}

/// Prompt once, then wait for the refresh: its request repeats the prompt's with a one-token
/// cap, and a `usage` entry of kind `cache_warm` reaches the client and the session file.
fn check_warming(cmd: Command, mock: &Mock, fx: &Fixture, who: &str) {
    let mut rpc = Rpc::spawn(cmd);
    rpc.send(json!({"id": "1", "type": "prompt", "message": "hello"}));
    rpc.wait_for(Duration::from_secs(30), |l| is_type(l, "agent_settled"))
        .unwrap_or_else(|| panic!("{who}: the prompt did not settle"));
    let appended = rpc
        .wait_for(Duration::from_secs(15), |l| {
            is_type(l, "entry_appended") && l["entry"]["type"] == "usage"
        })
        .unwrap_or_else(|| panic!("{who}: no cache refresh was recorded"));
    let entry = &appended["entry"];
    assert_eq!(entry["kind"], "cache_warm", "{who}: {entry}");
    assert_eq!(entry["provider"], "mock-anthropic", "{who}: {entry}");
    assert_eq!(entry["model"], "mock-cached", "{who}: {entry}");
    assert!(
        entry["usage"]["input"].as_u64().is_some_and(|n| n > 0),
        "{who}: {entry}"
    );
    assert!(entry.get("note").is_none(), "{who}: {entry}");
    let requests = mock.requests();
    assert!(requests.len() >= 2, "{who}: {} requests", requests.len());
    let (prompt, refresh) = (&requests[0].body, &requests[1].body);
    assert_eq!(refresh["max_tokens"], 1, "{who}: {refresh}");
    assert_ne!(prompt["max_tokens"], 1, "{who}: {prompt}");
    assert_eq!(
        refresh["messages"], prompt["messages"],
        "{who}: the refresh repeats the request"
    );
    assert_eq!(refresh["system"], prompt["system"], "{who}");
    assert_eq!(refresh["tools"], prompt["tools"], "{who}");
    // The usage entry stays out of the conversation: the next prompt continues it.
    rpc.send(json!({"id": "2", "type": "prompt", "message": "again"}));
    rpc.wait_for(Duration::from_secs(30), |l| is_type(l, "agent_settled"))
        .unwrap_or_else(|| panic!("{who}: the second prompt did not settle"));
    let next = mock
        .requests()
        .into_iter()
        .map(|r| r.body)
        .find(|b| b["max_tokens"] != 1 && b["messages"].as_array().is_some_and(|m| m.len() > 1))
        .unwrap_or_else(|| panic!("{who}: no second prompt request"));
    let roles: Vec<&str> = next["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{who}: {next}");
    drop(rpc);
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    let written = usage_entries(&session);
    assert!(!written.is_empty(), "{who}: {session}");
    let keys: Vec<&str> = written[0].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "type",
            "id",
            "parentId",
            "timestamp",
            "kind",
            "provider",
            "model",
            "usage"
        ],
        "{who}"
    );
}

fn rpc_args() -> [&'static str; 4] {
    ["--mode", "rpc", "--model", "mock-anthropic/mock-cached"]
}

#[test]
fn an_idle_session_keeps_the_prompt_cache_warm_and_records_what_it_cost() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::with_agent(cached_model_agent(&mock));
    check_warming(fx.pi(rpc_args()).cmd, &mock, &fx, "ours");

    let test = "an_idle_session_keeps_the_prompt_cache_warm_and_records_what_it_cost";
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::with_agent(cached_model_agent(&mock));
    let mut cmd = reference.command();
    cmd.args(rpc_args()).current_dir(&fx.proj).envs(fx.agent.env());
    check_warming(cmd, &mock, &fx, "pi 1.6");
}

#[test]
fn cache_warming_off_sends_no_refresh() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::with_agent(cached_model_agent(&mock));
    fx.agent.write("settings.json", r#"{"cacheWarming": "off"}"#).unwrap();
    let mut rpc = Rpc::spawn(fx.pi(rpc_args()).cmd);
    rpc.send(json!({"id": "1", "type": "prompt", "message": "hello"}));
    rpc.wait_for(Duration::from_secs(30), |l| is_type(l, "agent_settled"))
        .expect("settled");
    // The refresh would be due after 1 s.
    let refresh = rpc.wait_for(Duration::from_millis(2500), |l| is_type(l, "entry_appended"));
    assert!(refresh.is_none(), "{refresh:?}");
    assert_eq!(mock.requests().len(), 1);
}

#[test]
fn an_extension_decides_whether_the_cache_is_warmed() {
    let test = "an_extension_decides_whether_the_cache_is_warmed";
    let Some(env) = crate::extensions::environment(test) else {
        return;
    };
    for (action, warmed) in [("stop", false), ("warm", true)] {
        let mock = Mock::start(Script::echo());
        let fx = Fixture::with_agent(cached_model_agent(&mock));
        // Cache reads as dear as writes: pi's own decision is "stop" (nothing to save).
        let models = std::fs::read_to_string(fx.agent.path().join("models.json"))
            .unwrap()
            .replace("\"cacheRead\":0", "\"cacheRead\":1000");
        fx.agent.write("models.json", models).unwrap();
        let log = fx.root.path().join("warming.log");
        let extension = crate::extensions::fixture("warming.ts");
        let mut args = rpc_args().to_vec();
        args.extend(["-e", extension.as_str()]);
        let mut pi = crate::extensions::pi_with(&fx, &env, args);
        pi.cmd.env("WARMING_LOG", &log).env("WARMING_ACTION", action);
        let mut rpc = Rpc::spawn(pi.cmd);
        rpc.send(json!({"id": "1", "type": "prompt", "message": "hello"}));
        rpc.wait_for(Duration::from_secs(30), |l| is_type(l, "agent_settled"))
            .expect("settled");
        let refresh = rpc.wait_for(Duration::from_secs(if warmed { 15 } else { 3 }), |l| {
            is_type(l, "entry_appended")
        });
        assert_eq!(refresh.is_some(), warmed, "{action}: {refresh:?}");
        let seen: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(!seen.is_empty(), "{action}: the handler was not asked");
        assert_eq!(
            seen[0],
            json!({"action": "stop", "hasCosts": true, "continuationProbability": 0.15}),
            "{action}"
        );
        if let Some(line) = refresh {
            assert_eq!(line["entry"]["note"], "extension override", "{line}");
        }
        assert_eq!(mock.requests().len(), if warmed { 2 } else { 1 }, "{action}");
    }
}
