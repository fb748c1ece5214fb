//! Providers extensions register (`pi.registerProvider` with a JS `streamSimple`): their models
//! are selectable with `--model` and over RPC, the host streams their replies (text and tool
//! calls), and an abort reaches the JS stream's signal. Checked against pi 1.6 where it runs.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use pi_test_support::Script;
use serde_json::Value;

use crate::extensions::{environment, fixture, pi_with, reference_run};
use crate::harness::{Fixture, Mock};

const MODEL: &str = "echo-llm/echo-1";

#[test]
fn a_provider_streamed_by_an_extension_answers_and_calls_tools_as_in_pi_1_6() {
    let test = "a_provider_streamed_by_an_extension_answers_and_calls_tools_as_in_pi_1_6";
    let Some(env) = environment(test) else { return };
    let provider = fixture("provider.ts");
    // Nothing goes to the mock: the extension's provider answers everything.
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let args = |prompt: &str| ["-e", &provider, "--model", MODEL, "-p", prompt].map(str::to_string);
    let hello = pi_with(&fx, &env, args("hello")).run();
    hello.assert_ok();
    // The provider sees pi 1.6's transcript context: only `messages`, the system prompt first.
    assert_eq!(
        hello.stdout,
        "echo(echo-key): hello | roles=system,user | keys=messages\n"
    );
    let tool = pi_with(&fx, &env, args("call it")).run();
    tool.assert_ok();
    assert_eq!(tool.stdout, "tool said: from-bash\n");
    assert!(mock.requests().is_empty(), "the mock was asked: {:?}", mock.requests());
    // The session records the extension's model.
    let first = fx.sessions().into_iter().next().unwrap();
    let text = std::fs::read_to_string(first).unwrap();
    assert!(text.contains("\"provider\":\"echo-llm\""), "{text}");

    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let fx = Fixture::new(&mock);
    assert_eq!(
        reference_run(&reference, &fx, &args("hello")).run().stdout,
        hello.stdout
    );
    assert_eq!(
        reference_run(&reference, &fx, &args("call it")).run().stdout,
        tool.stdout
    );
}

#[test]
fn a_model_no_provider_has_is_still_an_error_after_extensions_load() {
    let test = "a_model_no_provider_has_is_still_an_error_after_extensions_load";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = pi_with(
        &fx,
        &env,
        ["-e", &fixture("provider.ts"), "--model", "nope/nope", "-p", "x"],
    )
    .run();
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr.trim_end(),
        "Error: Model \"nope/nope\" not found. Use --list-models to see available models."
    );
    assert!(mock.requests().is_empty());
}

/// Read RPC lines until one satisfies `wanted`; panics after 20 s.
fn wait_for(lines: &mut impl Iterator<Item = String>, seen: &mut Vec<Value>, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let Some(line) = lines.next() else { break };
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        seen.push(value.clone());
        if wanted(&value) {
            return value;
        }
    }
    panic!("not seen; got {seen:#?}");
}

#[test]
fn rpc_lists_and_selects_an_extension_model_and_abort_reaches_its_stream() {
    let test = "rpc_lists_and_selects_an_extension_model_and_abort_reaches_its_stream";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = fx.root.path().join("provider.log");
    let mut pi = pi_with(&fx, &env, ["--mode", "rpc", "-e", &fixture("provider.ts")]);
    pi.cmd
        .env("PROVIDER_LOG", &log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(20)).ok());
    let mut seen = Vec::new();
    let mut send = |line: &str| {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };

    send(r#"{"id":"models","type":"get_available_models"}"#);
    let models = wait_for(&mut lines, &mut seen, |v| v["id"] == "models");
    let listed: Vec<String> = models["data"]["models"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            format!(
                "{}/{}",
                m["provider"].as_str().unwrap_or(""),
                m["id"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(listed.contains(&MODEL.to_string()), "{listed:?}");

    send(r#"{"id":"set","type":"set_model","provider":"echo-llm","modelId":"echo-1"}"#);
    let set = wait_for(&mut lines, &mut seen, |v| v["id"] == "set");
    assert_eq!(set["success"], true, "{set}");

    send(r#"{"id":"p","type":"prompt","message":"please wait"}"#);
    // The JS stream has started once the assistant message has.
    wait_for(&mut lines, &mut seen, |v| {
        v["type"] == "message_start" && v["message"]["role"] == "assistant"
    });
    send(r#"{"id":"a","type":"abort"}"#);
    let end = wait_for(&mut lines, &mut seen, |v| v["type"] == "agent_end");
    let last = end["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["stopReason"], "aborted", "{end}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "aborted\n");
    // Closing stdin ends the RPC session.
    drop(stdin);
    let _ = child.wait();
}

/// `/exectest` of `exec.ts` in print mode: the results it wrote, and stderr.
fn exec_results(run: crate::harness::Pi, out: &std::path::Path) -> (Value, String) {
    let mut run = run;
    run.cmd.env("EXEC_OUT", out);
    let done = run.run();
    done.assert_ok();
    let text = std::fs::read_to_string(out).unwrap();
    (serde_json::from_str(&text).unwrap(), done.stderr)
}

#[test]
fn pi_exec_and_the_event_bus_answer_as_in_pi_1_6() {
    let test = "pi_exec_and_the_event_bus_answer_as_in_pi_1_6";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let path = fixture("exec.ts");
    let args = ["-e", &path, "-p", "/exectest"].map(str::to_string);
    let out = fx.root.path().join("ours.json");
    let (ours, stderr) = exec_results(pi_with(&fx, &env, &args), &out);
    let by_label = |results: &Value, label: &str| -> Value {
        results
            .as_array()
            .and_then(|a| a.iter().find(|r| r["label"] == label))
            .cloned()
            .unwrap_or_default()
    };
    let ok = by_label(&ours, "ok");
    assert_eq!(
        (ok["stdout"].clone(), ok["stderr"].clone(), ok["code"].clone()),
        ("out\n".into(), "err\n".into(), 0.into())
    );
    assert_eq!(by_label(&ours, "exit3")["code"], 3);
    let missing = by_label(&ours, "missing");
    assert_eq!(missing["code"], 1);
    assert_eq!(missing["stderr"], "spawn no-such-program-xyz ENOENT");
    assert_eq!(by_label(&ours, "cwd")["stdout"], "/tmp\n");
    assert_eq!(
        by_label(&ours, "defaultcwd")["stdout"],
        format!("{}\n", fx.proj.display())
    );
    for label in ["timeout", "abort"] {
        let r = by_label(&ours, label);
        assert_eq!(
            (r["code"].clone(), r["killed"].clone(), r["slow"].clone()),
            (143.into(), true.into(), false.into()),
            "{label}: {r}"
        );
    }
    let own = by_label(&ours, "selfkill");
    assert_eq!((own["code"].clone(), own["killed"].clone()), (143.into(), false.into()));
    assert_eq!(by_label(&ours, "bus")["seen"], serde_json::json!([{ "n": 1 }]));
    let failed = format!("Extension error ({path}): bus handler failed");
    assert_eq!(stderr.matches(&failed).count(), 2, "{stderr}");

    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let fx = Fixture::new(&mock);
    let theirs_out = fx.root.path().join("theirs.json");
    let (mut theirs, their_stderr) = exec_results(reference_run(&reference, &fx, &args), &theirs_out);
    let mut ours = ours;
    // Only the project folder differs between the two fixtures.
    for results in [&mut ours, &mut theirs] {
        if let Some(r) = results
            .as_array_mut()
            .and_then(|a| a.iter_mut().find(|r| r["label"] == "defaultcwd"))
        {
            r["stdout"] = Value::Null;
        }
    }
    assert_eq!(ours, theirs);
    assert_eq!(their_stderr.matches(&failed).count(), 2, "{their_stderr}");
}
