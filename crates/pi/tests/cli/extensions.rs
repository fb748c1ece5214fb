//! TypeScript extensions through the binary in print and JSON mode against the mock LLM: an
//! extension tool the model calls, a `tool_call` guard, an `input` rewrite, a
//! `before_agent_start` system prompt, a crashing host, and no Node without extensions.
//!
//! They need Node and the npm packages extensions import: `PI_TEST_NODE` (else `/usr/bin/node`
//! or `node` on PATH) and `PI_EXTENSION_MODULES` (else the reference install's `node_modules`,
//! `PI_REFERENCE_PI`, else `PI_REFERENCE_DIR` or the `scripts/test-deps` cache). Without them each test prints `skipped:`
//! and passes, except under `CI`, where that is a failure.

use std::path::{Path, PathBuf};

use pi_test_support::{Fault, Script, Turn};
use serde_json::{json, Value};

use crate::harness::{Fixture, Mock};

pub(crate) fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/extensions")
        .join(name)
        .display()
        .to_string()
}

fn host_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pi-extensions/tests/fixtures")
        .join(name)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

fn find_node() -> Option<PathBuf> {
    if let Some(node) = std::env::var_os("PI_TEST_NODE") {
        return Some(PathBuf::from(node));
    }
    let usr = PathBuf::from("/usr/bin/node");
    if usr.is_file() {
        return Some(usr);
    }
    pi_extensions::node::find_node(None).ok()
}

fn find_modules() -> Option<PathBuf> {
    std::env::var_os("PI_EXTENSION_MODULES")
        .map(PathBuf::from)
        .or_else(|| {
            // `PI_REFERENCE_PI`, else the reference `scripts/test-deps` installs
            // (`PI_REFERENCE_DIR` or its cache folder), which is where CI has it.
            let reference = std::env::var_os("PI_REFERENCE_PI")
                .map(PathBuf::from)
                .or_else(|| pi_test_support::find_reference().map(|r| r.dir))?;
            Some(reference.join("node_modules"))
        })
        .filter(|dir| pi_extensions::modules::has_required_packages(dir))
}

/// Node and the packages, or `None` after a `skipped:` line (a failure under `CI`).
pub(crate) fn environment(test: &str) -> Option<(PathBuf, PathBuf)> {
    let found = (find_node(), find_modules());
    if let (Some(node), Some(modules)) = found {
        return Some((node, modules));
    }
    let missing = if found.0.is_none() {
        "node"
    } else {
        "the extension host packages"
    };
    assert!(std::env::var_os("CI").is_none(), "{test}: {missing} not found under CI");
    println!("skipped: {test}: {missing} not found (set PI_TEST_NODE / PI_EXTENSION_MODULES)");
    None
}

/// `pi` with the extension environment.
pub(crate) fn pi_with<I, S>(fx: &Fixture, env: &(PathBuf, PathBuf), args: I) -> crate::harness::Pi
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut pi = fx.pi(args);
    pi.cmd.env("PI_NODE", &env.0).env("PI_EXTENSION_MODULES", &env.1);
    pi
}

fn system_prompt(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "system" || m["role"] == "developer"))
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default()
}

fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        })
        .collect()
}

pub(crate) fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        })
        .collect()
}

/// The RPC response to the command with `id`.
fn response_to(events: &[Value], id: &str) -> Value {
    events
        .iter()
        .find(|e| e["type"] == "response" && e["id"] == id)
        .unwrap_or_else(|| panic!("no response {id}: {events:#?}"))
        .clone()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_model_calls_an_extension_tool_and_sees_its_result() {
    let Some(env) = environment("the_model_calls_an_extension_tool_and_sees_its_result") else {
        return;
    };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("shout", json!({"text": "hello"})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, ["-e", &fixture("glue.ts"), "-p", "call the tool"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "done\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(tool_names(&requests[0].body).contains(&"shout".to_string()));
    assert_eq!(tool_results(&requests[1].body), vec!["SHOUTED HELLO".to_string()]);
}

#[test]
fn a_tool_call_handler_blocks_bash_in_json_mode() {
    let Some(env) = environment("a_tool_call_handler_blocks_bash_in_json_mode") else {
        return;
    };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("bash", json!({"command": "echo ran > ran.txt"})),
        Turn::text("ok"),
    ]));
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, ["-e", &fixture("glue.ts"), "--mode", "json", "run bash"]).run();
    run.assert_ok();
    assert!(!fx.proj.join("ran.txt").exists(), "the blocked command ran");
    let requests = mock.requests();
    assert_eq!(
        tool_results(&requests[1].body),
        vec!["bash is off in this project".to_string()]
    );
    let end = run
        .events()
        .into_iter()
        .find(|e| e["type"] == "tool_execution_end")
        .expect("a tool_execution_end event");
    assert_eq!(end["isError"], true);
}

#[test]
fn input_and_before_agent_start_shape_the_request() {
    let Some(env) = environment("input_and_before_agent_start_shape_the_request") else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, ["-e", &fixture("glue.ts"), "-p", "rewrite:the prompt"]).run();
    run.assert_ok();
    let requests = mock.requests();
    let body = &requests[0].body;
    assert_eq!(user_texts(body), vec!["rewritten the prompt".to_string()]);
    let prompt = system_prompt(body);
    assert!(prompt.ends_with("\nGLUE-RULE: answer briefly."), "{prompt}");
    // The addition keeps the session's own prompt in front of it.
    assert!(prompt.len() > "GLUE-RULE: answer briefly.".len() + 100, "{prompt}");
}

#[test]
fn a_throwing_handler_is_reported_and_the_prompt_completes() {
    let Some(env) = environment("a_throwing_handler_is_reported_and_the_prompt_completes") else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let path = fixture("throws.ts");
    let run = pi_with(&fx, &env, ["-e", &path, "-p", "hello"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: hello\n");
    assert!(
        run.stderr
            .contains(&format!("Extension error ({path}): input handler broke")),
        "{}",
        run.stderr
    );
}

#[test]
fn a_crashing_host_gives_a_clear_error_and_the_prompt_completes() {
    let Some(env) = environment("a_crashing_host_gives_a_clear_error_and_the_prompt_completes") else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, ["-e", &host_fixture("crash.ts"), "-p", "hello"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: hello\n");
    assert!(run.stderr.contains("the extension host exited"), "{}", run.stderr);
    assert_eq!(run.stderr.matches("extension host exited").count(), 1, "{}", run.stderr);
}

#[test]
fn a_load_error_is_fatal_with_pis_hint() {
    let Some(env) = environment("a_load_error_is_fatal_with_pis_hint") else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let path = host_fixture("throws.ts");
    let run = pi_with(&fx, &env, ["-e", &path, "-p", "hello"]).run();
    assert_eq!(run.code, 1, "code {}: {}", run.code, run.stderr);
    assert!(
        run.stderr
            .contains(&format!("Error: Failed to load extension \"{path}\"")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Hint: Start without extensions using \"pi -ne\"."));
    assert!(mock.requests().is_empty());
}

#[test]
fn a_missing_extension_path_is_an_error_without_node() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let mut pi = fx.pi(["-e", "missing.ts", "-p", "hello"]);
    // A node that cannot run: reaching it would be a different error.
    pi.cmd.env("PI_NODE", "/nonexistent/node");
    let run = pi.run();
    assert_eq!(run.code, 1);
    let expected = format!(
        "Error: Failed to load extension \"{}\": Extension path does not exist: {}",
        fx.proj.join("missing.ts").display(),
        fx.proj.join("missing.ts").display()
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
}

#[test]
fn no_extensions_start_no_node() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let mut pi = fx.pi(["-p", "hello"]);
    // Were a host started, this node would fail the run.
    pi.cmd.env("PI_NODE", "/nonexistent/node");
    let run = pi.run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: hello\n");
    assert!(!fx.agent.path().join("extension-host").exists());
}

#[test]
fn rpc_replacement_sends_session_events_and_errors_reach_the_client() {
    let Some(env) = environment("rpc_replacement_sends_session_events_and_errors_reach_the_client") else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = fx.root.path().join("lifecycle.log");
    let path = fixture("lifecycle.ts");
    let mut pi = pi_with(&fx, &env, ["--mode", "rpc", "-e", &path]);
    pi.cmd.env("LIFECYCLE_LOG", &log);
    let run = pi
        .stdin("{\"id\":\"1\",\"type\":\"new_session\"}\n{\"id\":\"2\",\"type\":\"prompt\",\"message\":\"hi\"}\n")
        .run();
    run.assert_ok();
    let error = run
        .events()
        .into_iter()
        .find(|e| e["type"] == "extension_error")
        .expect("an extension_error record");
    assert_eq!(error["extensionPath"], path.as_str());
    assert_eq!(error["event"], "input");
    assert_eq!(error["error"], "no input today");
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        lines.lines().collect::<Vec<_>>(),
        vec!["start startup", "shutdown new", "start new", "shutdown quit"]
    );
}

#[test]
fn project_extensions_load_only_in_a_trusted_project() {
    let Some(env) = environment("project_extensions_load_only_in_a_trusted_project") else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let dir = fx.proj.join(".pi/extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("glue.ts"), dir.join("glue.ts")).unwrap();
    pi_with(&fx, &env, ["-p", "rewrite:untrusted"]).run().assert_ok();
    pi_with(&fx, &env, ["--approve", "-p", "rewrite:trusted"])
        .run()
        .assert_ok();
    let requests = mock.requests();
    assert_eq!(user_texts(&requests[0].body), vec!["rewrite:untrusted".to_string()]);
    assert!(!system_prompt(&requests[0].body).contains("GLUE-RULE"));
    assert_eq!(user_texts(&requests[1].body), vec!["rewritten trusted".to_string()]);
    assert!(system_prompt(&requests[1].body).contains("GLUE-RULE"));
}

#[test]
fn a_hung_host_is_stopped_and_the_prompt_completes() {
    let Some(env) = environment("a_hung_host_is_stopped_and_the_prompt_completes") else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    // The handler loops forever: the host stops answering pings and is stopped as hung.
    let run = pi_with(&fx, &env, ["-e", &host_fixture("hang.ts"), "-p", "block"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: block\n");
    assert!(
        run.stderr.contains("stopped responding during `dispatch`"),
        "{}",
        run.stderr
    );
}

#[test]
fn session_actions_of_an_extension_reach_the_session() {
    let Some(env) = environment("session_actions_of_an_extension_reach_the_session") else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    pi_with(&fx, &env, ["-e", &fixture("actions.ts"), "-p", "hello"])
        .run()
        .assert_ok();
    let entries = crate::harness::json_lines(&std::fs::read_to_string(fx.only_session()).unwrap());
    let custom = entries.iter().find(|e| e["type"] == "custom").expect("a custom entry");
    assert_eq!(custom["customType"], "glue-note");
    assert_eq!(custom["data"], json!({"seen": true}));
    assert!(entries
        .iter()
        .any(|e| e["type"] == "session_info" && e["name"] == "named by an extension"));
    assert_eq!(tool_names(&mock.requests()[0].body), vec!["read".to_string()]);
}

/// The events a logging extension saw in one `-p` run with a `probe_tool` call, one per line.
fn trace_of(mut pi: crate::harness::Pi, trace: &Path) -> Vec<String> {
    pi.cmd.env("PI_TRACE_FILE", trace);
    let run = pi.run();
    run.assert_ok();
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn probe_script() -> Script {
    Script::sequential(vec![
        Turn::tool_call("probe_tool", json!({"msg": "hello"})),
        Turn::text("Done: echo: hello"),
    ])
}

#[test]
fn an_extension_sees_a_prompts_events_in_the_order_and_shape_of_pi_16() {
    let test = "an_extension_sees_a_prompts_events_in_the_order_and_shape_of_pi_16";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(probe_script());
    let fx = Fixture::new(&mock);
    let trace_file = fx.root.path().join("ours.trace");
    let ours = trace_of(
        pi_with(&fx, &env, ["-e", &fixture("trace.ts"), "-p", "hi there"]),
        &trace_file,
    );
    // The core of pi's order (extensions-1.6.md §3.5), independent of the reference.
    let at = |line: &str| {
        ours.iter()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("{line} missing: {ours:#?}"))
    };
    assert!(at("session_start reason=startup") < at("input text=\"hi there\""));
    assert!(at("input text=\"hi there\"") < at("before_agent_start"));
    assert!(at("before_agent_start") < at("agent_start idle=false"));
    assert!(at("tool_execution_start tool=probe_tool") < at("tool_call tool=probe_tool"));
    assert!(at("tool_call tool=probe_tool") < at("tool_result tool=probe_tool"));
    assert!(at("turn_end turnIndex=0 toolResults=1 ids=2") < at("turn_start turnIndex=1"));
    assert!(at("agent_end messages=4") < at("agent_settled aborted=false idle=true"));
    assert_eq!(ours.last().map(String::as_str), Some("session_shutdown reason=quit"));

    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(probe_script());
    let fx = Fixture::new(&mock);
    let trace_file = fx.root.path().join("reference.trace");
    let mut cmd = reference.command();
    cmd.args(["-e", &fixture("trace.ts"), "-p", "hi there"])
        .current_dir(&fx.proj)
        .envs(fx.agent.env());
    let theirs = trace_of(crate::harness::Pi::from_command(cmd), &trace_file);
    // `provider_stream_event` runs beside `message_update` in pi 1.6 (extensions-1.6.md §3.1),
    // so only its count per request is compared, and the order of everything else.
    assert_eq!(stream_events_per_request(&ours), stream_events_per_request(&theirs));
    assert_eq!(without_stream_events(ours), without_stream_events(theirs));
}

#[test]
fn a_retried_prompt_gives_the_events_of_pi_16() {
    let test = "a_retried_prompt_gives_the_events_of_pi_16";
    let Some(env) = environment(test) else { return };
    let trace_for = |fx: &Fixture, name: &str, mut pi: crate::harness::Pi| {
        pi.cmd.current_dir(&fx.proj);
        trace_of(pi, &fx.root.path().join(name))
    };
    let setup = || {
        let mock = Mock::start(Script::sequential(vec![Turn::text("ok")]));
        mock.server.fail_next(1, Fault::status(500));
        let fx = Fixture::new(&mock);
        fx.agent
            .write("settings.json", r#"{"retry": {"baseDelayMs": 10}}"#)
            .unwrap();
        (mock, fx)
    };
    let (mock, fx) = setup();
    let ours = trace_for(
        &fx,
        "ours.trace",
        pi_with(&fx, &env, ["-e", &fixture("trace.ts"), "-p", "hi there"]),
    );
    assert_eq!(mock.requests().len(), 2);
    // Two runs, the failed reply ended as an error, one settling at the end.
    let count = |line: &str| ours.iter().filter(|l| l.as_str() == line).count();
    assert_eq!(count("agent_start idle=false"), 2, "{ours:#?}");
    assert_eq!(count("agent_settled aborted=false idle=true"), 1, "{ours:#?}");

    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let (mock, fx) = setup();
    let mut cmd = reference.command();
    cmd.args(["-e", &fixture("trace.ts"), "-p", "hi there"])
        .envs(fx.agent.env());
    let theirs = trace_for(&fx, "reference.trace", crate::harness::Pi::from_command(cmd));
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(without_stream_events(ours), without_stream_events(theirs));
}

fn without_stream_events(trace: Vec<String>) -> Vec<String> {
    trace.into_iter().filter(|l| l != "provider_stream_event").collect()
}

/// How many `provider_stream_event`s came between each response and its `message_end`.
fn stream_events_per_request(trace: &[String]) -> Vec<usize> {
    let mut counts = Vec::new();
    for line in trace {
        if line.starts_with("after_provider_response") {
            counts.push(0);
        } else if line == "provider_stream_event" {
            match counts.last_mut() {
                Some(n) => *n += 1,
                None => panic!("a provider event before any response: {trace:#?}"),
            }
        }
    }
    counts
}

#[test]
fn extensions_rewrite_the_request_and_replace_the_reply_before_it_is_recorded() {
    let test = "extensions_rewrite_the_request_and_replace_the_reply_before_it_is_recorded";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::sequential(vec![
        Turn::text("first reply"),
        Turn::text("second reply"),
    ]));
    let fx = Fixture::new(&mock);
    let rewrite = fixture("rewrite.ts");
    pi_with(&fx, &env, ["-e", &rewrite, "-p", "one"]).run().assert_ok();
    let run = pi_with(&fx, &env, ["-e", &rewrite, "-c", "-p", "two"]).run();
    run.assert_ok();
    // The reply as the extension replaced it is what the user sees and the session keeps.
    assert!(run.stdout.starts_with("rewritten after "), "{}", run.stdout);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.header("x-from-extension"), Some("yes"));
        assert_eq!(request.body["x_extension"], true);
    }
    // `context` dropped the first prompt from the second request; the replaced reply is
    // what the model is shown of its first answer.
    assert_eq!(user_texts(&requests[1].body), vec!["two".to_string()]);
    let body = requests[1].body.to_string();
    assert!(
        !body.contains("first reply") && body.contains("rewritten after "),
        "{body}"
    );
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    assert!(
        !session.contains("first reply") && !session.contains("second reply"),
        "{session}"
    );
    let replies: Vec<Value> = session
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["message"]["role"] == "assistant")
        .collect();
    assert_eq!(replies.len(), 2);
    for reply in replies {
        let text = reply["message"]["content"][0]["text"].as_str().unwrap().to_string();
        // Every stream event was seen before the reply ended, after a 200 response.
        let events: usize = text
            .trim_start_matches("rewritten after ")
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(events > 1 && text.ends_with("status 200"), "{text}");
    }
    assert!(!run.stderr.contains("error"), "{}", run.stderr);
}

#[test]
fn skills_and_prompts_an_extension_discovers_join_the_session() {
    let test = "skills_and_prompts_an_extension_discovers_join_the_session";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::sequential(vec![Turn::text("ok"), Turn::text("ok")]));
    let fx = Fixture::new(&mock);
    let discover = fixture("discover.ts");
    pi_with(&fx, &env, ["-e", &discover, "-p", "/greet Ada"])
        .run()
        .assert_ok();
    pi_with(&fx, &env, ["-e", &discover, "-p", "/skill:tidy-up now"])
        .run()
        .assert_ok();
    let requests = mock.requests();
    // The discovered skill is listed in the system prompt, and the template expanded.
    let prompt = system_prompt(&requests[0].body);
    assert!(
        prompt.contains("tidy-up") && prompt.contains("Tidies a folder"),
        "{prompt}"
    );
    assert_eq!(
        user_texts(&requests[0].body),
        vec!["Say hello to Ada warmly.".to_string()]
    );
    let skill = user_texts(&requests[1].body).join("\n");
    assert!(skill.contains("Sort the files by kind"), "{skill}");
    // RPC lists them among the commands.
    let run = pi_with(&fx, &env, ["--mode", "rpc", "-e", &discover])
        .stdin("{\"id\":\"1\",\"type\":\"get_commands\"}\n")
        .run();
    assert!(
        run.stdout.contains("\"skill:tidy-up\"") && run.stdout.contains("\"greet\""),
        "{}",
        run.stdout
    );
}

#[test]
fn agent_before_settle_adds_entries_and_asks_for_one_more_request() {
    let test = "agent_before_settle_adds_entries_and_asks_for_one_more_request";
    let Some(env) = environment(test) else { return };
    // The run's reply, requests and session entries; returns what the handler saw each time.
    let check = |run: crate::harness::Run, mock: &Mock, fx: &Fixture| {
        run.assert_ok();
        assert_eq!(run.stdout.trim(), "second", "{run:?}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(
            user_texts(&requests[1].body),
            vec!["go".to_string(), "please go on".to_string()]
        );
        let session = std::fs::read_to_string(fx.only_session()).unwrap();
        let entries: Vec<Value> = session.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let note = entries
            .iter()
            .find(|e| e["type"] == "custom_message")
            .expect("the note");
        assert_eq!(note["content"], "please go on");
        let mark = entries.iter().find(|e| e["type"] == "custom").expect("the mark");
        mark["data"]["seen"].clone()
    };
    let script = || Script::sequential(vec![Turn::text("first"), Turn::text("second")]);
    let args = ["-e", &fixture("settle.ts"), "-p", "go"].map(str::to_string);
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    let ours = check(pi_with(&fx, &env, &args).run(), &mock, &fx);
    assert_eq!(
        ours,
        json!([
            "completed canContinue=false entries=0",
            "completed canContinue=false entries=0"
        ])
    );
    // pi 1.6 does the same with the same extension.
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    let theirs = check(reference_run(&reference, &fx, &args).run(), &mock, &fx);
    assert_eq!(ours, theirs);
}

#[test]
fn a_compaction_draft_replaces_the_context_the_next_prompt_sees() {
    let test = "a_compaction_draft_replaces_the_context_the_next_prompt_sees";
    let Some(env) = environment(test) else { return };
    let extension = fixture("settle_compact.ts");
    // Two runs on one session: the second prompt's request and the compaction entry.
    let run_twice = |run: &dyn Fn(&Fixture, &[String]) -> crate::harness::Run| {
        let mock = Mock::start(Script::sequential(vec![Turn::text("first"), Turn::text("second")]));
        let fx = Fixture::new(&mock);
        run(&fx, &["-e", &extension, "-p", "go"].map(str::to_string)).assert_ok();
        run(&fx, &["-e", &extension, "-c", "-p", "again"].map(str::to_string)).assert_ok();
        let requests = mock.requests();
        assert_eq!(requests.len(), 2);
        let session = std::fs::read_to_string(fx.only_session()).unwrap();
        let compaction: Value = session
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["type"] == "compaction")
            .expect("a compaction entry");
        assert_eq!(
            compaction["firstKeptEntryId"], compaction["id"],
            "it keeps nothing: {compaction}"
        );
        assert_eq!(compaction["fromHook"], true);
        assert_eq!(compaction["details"], json!({"by": "settle_compact"}));
        assert!(
            compaction["tokensBefore"].as_u64().is_some_and(|n| n > 0),
            "{compaction}"
        );
        user_texts(&requests[1].body)
    };
    let ours = run_twice(&|fx, args| pi_with(fx, &env, args).run());
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert!(ours[0].contains("The user said go."), "the summary leads: {ours:?}");
    assert_eq!(ours[1], "again");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let theirs = run_twice(&|fx, args| reference_run(&reference, fx, args).run());
    assert_eq!(ours, theirs);
}

#[test]
fn a_tool_registered_after_load_can_be_turned_on_at_once() {
    let test = "a_tool_registered_after_load_can_be_turned_on_at_once";
    let Some(env) = environment(test) else { return };
    let args = ["-e", &fixture("late_tool.ts"), "-p", "go"].map(str::to_string);
    let script = || {
        Script::sequential(vec![
            Turn::tool_call("read", json!({"path": "hello.txt"})),
            Turn::text("done"),
        ])
    };
    let tools_of = |run: crate::harness::Run, mock: &Mock| {
        run.assert_ok();
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{run:?}");
        (tool_names(&requests[0].body), tool_names(&requests[1].body))
    };
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    let ours = tools_of(pi_with(&fx, &env, &args).run(), &mock);
    assert!(!ours.0.contains(&"late_tool".to_string()), "{ours:?}");
    assert!(ours.1.contains(&"late_tool".to_string()), "{ours:?}");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    let theirs = tools_of(reference_run(&reference, &fx, &args).run(), &mock);
    assert_eq!(ours, theirs);
}

/// The reference pi with `args`, in the fixture's project and agent dir.
pub(crate) fn reference_run(
    reference: &pi_test_support::ReferencePi,
    fx: &Fixture,
    args: &[String],
) -> crate::harness::Pi {
    let mut cmd = reference.command();
    cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
    crate::harness::Pi::from_command(cmd)
}

#[test]
fn ctx_shutdown_ends_an_rpc_session_whose_input_is_still_open() {
    use std::io::Write;
    let test = "ctx_shutdown_ends_an_rpc_session_whose_input_is_still_open";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = fx.root.path().join("lifecycle.log");
    let mut pi = pi_with(&fx, &env, ["--mode", "rpc", "-e", &fixture("shutdown.ts")]);
    pi.cmd
        .env("LIFECYCLE_LOG", &log)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"/bye\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    // stdin stays open: only the extension's request can end the process.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("pi did not shut down");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    drop(stdin);
    assert!(status.success(), "{status:?}");
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert!(
        stdout.contains("\"id\":\"1\""),
        "the command was answered first: {stdout}"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "bye\nshutdown quit\n");
}

#[test]
fn turn_end_adds_entries_and_asks_for_one_more_request_in_the_same_run() {
    let test = "turn_end_adds_entries_and_asks_for_one_more_request_in_the_same_run";
    let Some(env) = environment(test) else { return };
    let check = |run: crate::harness::Run, mock: &Mock, fx: &Fixture| {
        run.assert_ok();
        assert_eq!(run.stdout.trim(), "second", "{run:?}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(
            user_texts(&requests[1].body),
            vec!["go".to_string(), "and one more thing".to_string()]
        );
        let session = std::fs::read_to_string(fx.only_session()).unwrap();
        let entries: Vec<Value> = session.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let kinds: Vec<String> = entries
            .iter()
            .filter(|e| e["type"] != "session" && e["message"]["role"] != "system")
            .map(|e| match e["type"].as_str() {
                Some("message") => format!("message {}", e["message"]["role"].as_str().unwrap_or("")),
                other => other.unwrap_or("").to_string(),
            })
            .filter(|k| k.starts_with("message") || k.starts_with("custom"))
            .collect();
        assert_eq!(
            kinds,
            [
                "message user",
                "message assistant",
                "custom_message",
                "message assistant",
                "custom"
            ],
            "{session}"
        );
        let mark = entries.iter().find(|e| e["type"] == "custom").expect("the mark");
        mark["data"]["seen"].clone()
    };
    let script = || Script::sequential(vec![Turn::text("first"), Turn::text("second")]);
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, ["-e", &fixture("turnend.ts"), "-p", "go"]).run();
    let ours = check(run, &mock, &fx);
    assert_eq!(
        ours,
        json!([
            "turn 0 completed entries=0 continue=false",
            "turn 1 completed entries=0 continue=false"
        ])
    );

    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    let args = ["-e", &fixture("turnend.ts"), "-p", "go"].map(str::to_string);
    let theirs = check(reference_run(&reference, &fx, &args).run(), &mock, &fx);
    assert_eq!(ours, theirs);
}

/// Send `/ask` to an RPC pi, keep its stdin open until the command logged `done`, and return
/// the log.
fn ask_over_rpc(mut cmd: std::process::Command, log: &Path) -> String {
    use std::io::Write;
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"/ask\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(log).unwrap_or_default().contains("done") {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the command did not finish: {:?}", std::fs::read_to_string(log));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(stdin);
    let _ = child.wait();
    std::fs::read_to_string(log).unwrap()
}

#[test]
fn dialogs_are_announced_with_ui_prompt_events_in_rpc_mode_only() {
    let test = "dialogs_are_announced_with_ui_prompt_events_in_rpc_mode_only";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = fx.root.path().join("prompts.log");
    let mut pi = pi_with(&fx, &env, ["--mode", "rpc", "-e", &fixture("prompts.ts")]);
    pi.cmd.env("PROMPT_LOG", &log);
    let ours = ask_over_rpc(pi.cmd, &log);
    assert_eq!(
        ours,
        concat!(
            "start ui_prompt confirm Proceed?\n",
            "end ui_prompt confirm Proceed?\n",
            "answer false\n",
            "start ui_prompt input Name?\n",
            "end ui_prompt input Name?\n",
            "done\n",
        )
    );
    if let Some(reference) = pi_test_support::reference_pi(test) {
        let theirs_log = fx.root.path().join("reference-prompts.log");
        let mut cmd = reference.command();
        cmd.args(["--mode", "rpc", "-e", &fixture("prompts.ts")])
            .current_dir(&fx.proj)
            .envs(fx.agent.env())
            .env("PROMPT_LOG", &theirs_log);
        assert_eq!(ask_over_rpc(cmd, &theirs_log), ours);
    }
    // Print mode has nobody to ask: no prompt events (pi 1.6).
    std::fs::remove_file(&log).unwrap();
    let mut pi = pi_with(&fx, &env, ["-e", &fixture("prompts.ts"), "-p", "/ask"]);
    pi.cmd.env("PROMPT_LOG", &log);
    pi.run().assert_ok();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "answer false\ndone\n");
}

#[test]
fn extension_flags_reach_the_extension_and_other_unknown_flags_are_errors() {
    let test = "extension_flags_reach_the_extension_and_other_unknown_flags_are_errors";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::sequential(vec![Turn::text("ok"), Turn::text("ok")]));
    let fx = Fixture::new(&mock);
    let flags = fixture("flags.ts");
    let run = pi_with(&fx, &env, ["-e", &flags, "--plan", "--level", "high", "-p", "go"]).run();
    run.assert_ok();
    assert_eq!(
        user_texts(&mock.requests()[0].body),
        vec!["go plan=true level=high".to_string()]
    );
    // Defaults when the flags are not given.
    let run = pi_with(&fx, &env, ["-e", &flags, "-p", "go"]).run();
    run.assert_ok();
    assert_eq!(
        user_texts(&mock.requests()[1].body),
        vec!["go plan=false level=low".to_string()]
    );
    // A flag no extension registered is still refused, before any request.
    let run = pi_with(&fx, &env, ["-e", &flags, "--plan", "--nope", "-p", "go"]).run();
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("Unknown option: --nope"), "{}", run.stderr);
    assert_eq!(mock.requests().len(), 2);
}

#[test]
fn sent_messages_are_delivered_as_pi_delivers_them() {
    let test = "sent_messages_are_delivered_as_pi_delivers_them";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::sequential(vec![Turn::text("ok")]));
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, ["-e", &fixture("messages.ts"), "-p", "go"]).run();
    run.assert_ok();
    // Recorded at once: before the prompt; held for the next turn: after it.
    assert_eq!(
        user_texts(&mock.requests()[0].body),
        vec![
            "recorded now".to_string(),
            "go".to_string(),
            "for the next turn".to_string()
        ]
    );
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    let entries: Vec<Value> = session.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let custom: Vec<&Value> = entries.iter().filter(|e| e["type"] == "custom_message").collect();
    assert_eq!(custom.len(), 1, "{session}");
    assert_eq!(custom[0]["customType"], "note");
    assert_eq!(custom[0]["content"], "recorded now");
}

#[test]
fn an_extension_can_cancel_a_session_replacement() {
    let test = "an_extension_can_cancel_a_session_replacement";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, ["--mode", "rpc", "-e", &fixture("veto.ts")])
        .stdin(concat!(
            "{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"hi\"}\n",
            "{\"id\":\"2\",\"type\":\"new_session\"}\n",
            "{\"id\":\"3\",\"type\":\"clone\"}\n",
            "{\"id\":\"4\",\"type\":\"get_state\"}\n",
        ))
        .run();
    run.assert_ok();
    let events = run.events();
    let response = |id: &str| response_to(&events, id);
    assert_eq!(response("2")["data"], json!({"cancelled": true}));
    assert_eq!(response("3")["data"], json!({"cancelled": true}));
    // Nothing was replaced: no session_shutdown before the one at exit, and one session file.
    let errors: Vec<&Value> = events.iter().filter(|e| e["type"] == "extension_error").collect();
    assert!(errors.len() <= 1, "{errors:#?}");
    assert_eq!(fx.sessions().len(), 1);
}

#[test]
fn an_extension_can_cancel_or_write_a_compaction() {
    let test = "an_extension_can_cancel_or_write_a_compaction";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    // A finished exchange and a keep-recent window that leaves the prompt before the cut
    // (pi 1.6 refuses a compaction with nothing to summarise before extensions are asked).
    fx.agent
        .write("settings.json", r#"{"compaction": {"keepRecentTokens": 1}}"#)
        .unwrap();
    fx.pi(["-p", "hi"]).run().assert_ok();
    let run = pi_with(&fx, &env, ["--mode", "rpc", "-c", "-e", &fixture("compact.ts")])
        .stdin(concat!(
            "{\"id\":\"2\",\"type\":\"compact\",\"customInstructions\":\"cancel\"}\n",
            "{\"id\":\"3\",\"type\":\"compact\"}\n",
        ))
        .run();
    run.assert_ok();
    let events = run.events();
    let response = |id: &str| response_to(&events, id);
    assert_eq!(response("2")["success"], false);
    assert_eq!(response("2")["error"], "Compaction cancelled");
    assert_eq!(response("3")["success"], true, "{:?}", response("3"));
    let summary = response("3")["data"]["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(summary.starts_with("summary from extension (manual, "), "{summary}");
    // The model was asked for the reply only, never for a summary.
    assert_eq!(mock.requests().len(), 1);
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    let compaction: Value = session
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "compaction")
        .expect("a compaction entry");
    assert_eq!(compaction["summary"], summary.as_str());
    assert_eq!(compaction["fromHook"], true);
}

#[test]
fn user_bash_handlers_answer_fail_closed_or_let_the_command_run() {
    let test = "user_bash_handlers_answer_fail_closed_or_let_the_command_run";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, ["--mode", "rpc", "-e", &fixture("bash.ts")])
        .stdin(concat!(
            "{\"id\":\"1\",\"type\":\"bash\",\"command\":\"fake\"}\n",
            "{\"id\":\"2\",\"type\":\"bash\",\"command\":\"boom\"}\n",
            "{\"id\":\"3\",\"type\":\"bash\",\"command\":\"echo real\"}\n",
        ))
        .run();
    run.assert_ok();
    let events = run.events();
    let response = |id: &str| response_to(&events, id);
    assert_eq!(
        response("1")["data"]["output"],
        format!("faked in {}", fx.proj.display())
    );
    assert_eq!(response("2")["success"], false);
    assert_eq!(response("2")["error"], "no shell for you");
    assert!(events
        .iter()
        .any(|e| e["type"] == "extension_error" && e["event"] == "user_bash"));
    assert_eq!(response("3")["data"]["output"], "real\n");
}

#[test]
fn a_python_host_serves_a_tool_the_model_calls() {
    let test = "a_python_host_serves_a_tool_the_model_calls";
    let host = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/python-extension-host/host.py");
    let python = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("python3"))
            .find(|p| p.is_file())
    });
    let Some(python) = python.or_else(|| pi_test_support::require::missing("python3", test)) else {
        return;
    };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("py_word_count", json!({"text": "one two three"})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    let host = host.canonicalize().unwrap().display().to_string();
    let mut pi = fx.pi(["-e", &host, "-p", "count"]);
    pi.cmd
        .env("PI_EXTENSION_HOST", format!("{} {host}", python.display()))
        .env_remove("PI_NODE");
    let run = pi.run();
    run.assert_ok();
    assert_eq!(run.stdout, "done\n");
    let requests = mock.requests();
    assert!(tool_names(&requests[0].body).contains(&"py_word_count".to_string()));
    assert_eq!(tool_results(&requests[1].body), vec!["3 words".to_string()]);
}

/// The `extension_ui_request` records of an RPC run, as `method text`.
fn ui_records(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "extension_ui_request")
        .map(|e| {
            let text = ["statusText", "message", "title"]
                .iter()
                .find_map(|k| e[*k].as_str())
                .unwrap_or_default()
                .to_string();
            format!("{} {text}", e["method"].as_str().unwrap_or_default())
        })
        .collect()
}

#[test]
fn what_session_start_shows_at_startup_reaches_the_rpc_client() {
    let test = "what_session_start_shows_at_startup_reaches_the_rpc_client";
    let Some(env) = environment(test) else { return };
    let args = ["--mode", "rpc", "-e", &fixture("startup_ui.ts")].map(str::to_string);
    let input = "{\"id\":\"1\",\"type\":\"get_state\"}\n";
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, &args).stdin(input).run();
    let ours = ui_records(&run.stdout);
    assert_eq!(
        ours,
        vec!["setStatus Ready", "notify started", "setTitle pi startup"],
        "{}",
        run.stdout
    );
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let run = reference_run(&reference, &fx, &args).stdin(input).run();
    assert_eq!(ours, ui_records(&run.stdout), "{}", run.stdout);
}

/// The extension commands of a `get_commands` answer, pi's own built-in ones left out.
fn extension_commands(stdout: &str) -> Vec<Value> {
    let events: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    response_to(&events, "1")["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"] == "extension" && c["sourceInfo"]["source"] != "builtin")
        .cloned()
        .collect()
}

#[test]
fn rpc_get_commands_lists_extension_commands_numbering_a_shared_name() {
    let test = "rpc_get_commands_lists_extension_commands_numbering_a_shared_name";
    let Some(env) = environment(test) else { return };
    let (a, b) = (fixture("listed_a.ts"), fixture("listed_b.ts"));
    let args = ["--mode", "rpc", "-e", &a, "-e", &b].map(str::to_string);
    let input = "{\"id\":\"1\",\"type\":\"get_commands\"}\n";
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, &args).stdin(input).run();
    let ours = extension_commands(&run.stdout);
    let names: Vec<&str> = ours.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["hey:1", "solo", "hey:2"], "{}", run.stdout);
    assert_eq!(ours[1]["description"], "Only here");
    assert_eq!(
        ours[2]["sourceInfo"],
        json!({"path": b, "source": "cli", "scope": "temporary", "origin": "top-level"})
    );
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let run = reference_run(&reference, &fx, &args).stdin(input).run();
    assert_eq!(ours, extension_commands(&run.stdout), "{}", run.stdout);
}

/// The records of an RPC run that say what happened: UI requests and responses.
fn ui_and_responses(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| match e["type"].as_str() {
            Some("extension_ui_request") => Some(format!("ui {} {}", e["method"], e["message"])),
            Some("response") => Some(format!("response {} {}", e["command"], e["data"]["disposition"])),
            _ => None,
        })
        .collect()
}

#[test]
fn an_rpc_prompt_naming_an_extension_command_is_answered_handled_once_it_ran() {
    let test = "an_rpc_prompt_naming_an_extension_command_is_answered_handled_once_it_ran";
    let Some(env) = environment(test) else { return };
    let args = ["--mode", "rpc", "-e", &fixture("listed_a.ts")].map(str::to_string);
    let input = "{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"/solo now\"}\n";
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = pi_with(&fx, &env, &args).stdin(input).run();
    let ours = ui_and_responses(&run.stdout);
    assert_eq!(
        ours,
        ["ui \"notify\" \"solo ran\"", "response \"prompt\" \"handled\""],
        "{}",
        run.stdout
    );
    // No request reached the model.
    assert!(mock.requests().is_empty());
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let run = reference_run(&reference, &fx, &args).stdin(input).run();
    assert_eq!(ours, ui_and_responses(&run.stdout), "{}", run.stdout);
}

/// An RPC `compact` that arrives while extensions still settle the run (right after
/// `agent_end`) stops the run first, as pi 1.6 does: the settle handler's entries stand but its
/// continuation does not run, the run settles as aborted, and only then does the compaction
/// start.
#[test]
fn a_compact_during_the_settle_waits_for_the_run_to_settle_as_aborted() {
    use std::io::{BufRead, BufReader, Write};
    let test = "a_compact_during_the_settle_waits_for_the_run_to_settle_as_aborted";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let trace = fx.root.path().join("trace.log");
    let mut pi = pi_with(
        &fx,
        &env,
        [
            "--mode",
            "rpc",
            "-e",
            &fixture("trace.ts"),
            "-e",
            &fixture("slow_settle.ts"),
        ],
    );
    pi.cmd
        .env("PI_TRACE_FILE", &trace)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let send = |stdin: &mut std::process::ChildStdin, line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(&mut stdin, r#"{"id":"1","type":"prompt","message":"go"}"#);
    let mut wait_for = |wanted: &dyn Fn(&Value) -> bool| loop {
        let line = lines.next().expect("pi ended early").unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        if wanted(&value) {
            return value;
        }
    };
    wait_for(&|v| v["type"] == "agent_end");
    send(&mut stdin, r#"{"id":"2","type":"compact"}"#);
    let answer = wait_for(&|v| v["id"] == "2");
    // End of input ends RPC mode.
    drop(stdin);
    let _ = child.wait();

    let trace = std::fs::read_to_string(&trace).unwrap();
    let events: Vec<&str> = trace
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    let at = |name: &str| events.iter().position(|e| *e == name);
    let settled = trace.lines().find(|l| l.starts_with("agent_settled")).unwrap_or("");
    assert_eq!(settled.split_whitespace().nth(1), Some("aborted=true"), "{trace}");
    assert!(at("agent_before_settle") < at("agent_settled"), "{trace}");
    // The compaction starts after the settle (a session this small fails to compact).
    let compaction = at("session_before_compact").or(at("session_compact_failed"));
    assert!(
        compaction.is_some() && at("agent_settled") < compaction,
        "{trace}\n{answer}"
    );
    // No continuation ran: one run, one request.
    assert_eq!(events.iter().filter(|e| **e == "agent_start").count(), 1, "{trace}");
    assert_eq!(mock.requests().len(), 1);
    // The handler's entry was committed all the same.
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    assert!(session.contains("\"settle-note\""), "{session}");
}
