//! Session replacement from extension commands (`ctx.newSession`, `ctx.fork`,
//! `ctx.switchSession`, `ctx.reload`), ours and pi 1.6's side by side against the mock: the
//! events the extension saw, what each call returned, and the session files left behind.
//! Without the reference pi only ours is checked.

use std::path::Path;

use serde_json::{json, Value};

use crate::extensions::{environment, fixture, pi_with};
use crate::harness::{json_lines, Fixture, Mock, Pi};
use crate::session16::reference;
use pi_test_support::Script;

type Runner<'a> = &'a dyn Fn(&Fixture, &[&str]) -> Option<Pi>;

/// An entry as `type` or `message/<role>:<text>`.
fn kind(entry: &Value) -> String {
    match entry["message"]["role"].as_str() {
        Some(role) => {
            let text = match &entry["message"]["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                _ => String::new(),
            };
            format!("message/{role}:{text}")
        }
        None => entry["type"].as_str().unwrap_or_default().to_string(),
    }
}

/// Each session file: its header's parent (as an index into the list, or "other") and the
/// kinds of its entries.
fn files(fx: &Fixture) -> Vec<Value> {
    let sessions = fx.sessions();
    sessions
        .iter()
        .map(|path| {
            let lines = json_lines(&std::fs::read_to_string(path).unwrap());
            let header = &lines[0];
            let parent = match header["parentSession"].as_str() {
                None => Value::Null,
                Some(p) => sessions
                    .iter()
                    .position(|s| s == Path::new(p))
                    .map(Value::from)
                    .unwrap_or_else(|| Value::from("other")),
            };
            json!({
                "parent": parent,
                "entries": lines[1..].iter().map(kind).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// Run the prompts of `setup` in turn (each continuing the last session unless it starts with
/// `new:`), then `last` with the
/// extension loaded; the extension's log and the session files.
fn replacement_record(run: Runner, setup: &[&str], last: &[&str], veto: bool) -> Option<Value> {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = fx.root.path().join("replace.log");
    for (i, prompt) in setup.iter().enumerate() {
        // `new:` starts another session instead of continuing the last one.
        let (fresh, prompt) = match prompt.strip_prefix("new:") {
            Some(rest) => (true, rest),
            None => (i == 0, *prompt),
        };
        let mut args = if fresh { vec![] } else { vec!["-c"] };
        args.extend(["-p", prompt]);
        run(&fx, &args)?.run().assert_ok();
    }
    let ext = fixture("replace.ts");
    let first = fx
        .sessions()
        .first()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut args: Vec<&str> = vec!["-c", "-e", &ext];
    let expanded: Vec<String> = last.iter().map(|a| a.replace("<FIRST>", &first)).collect();
    args.extend(expanded.iter().map(String::as_str));
    let mut pi = run(&fx, &args)?;
    pi.cmd.env("REPLACE_LOG", &log);
    if veto {
        pi.cmd.env("REPLACE_VETO", "1");
    }
    let out = pi.run();
    out.assert_ok();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    Some(json!({
        "log": log.lines().collect::<Vec<_>>(),
        "files": files(&fx),
        "stdout": out.stdout,
    }))
}

fn ours<'a>(env: &'a (std::path::PathBuf, std::path::PathBuf)) -> impl Fn(&Fixture, &[&str]) -> Option<Pi> + 'a {
    move |fx, args| Some(pi_with(fx, env, args))
}

/// Ours, checked against pi 1.6's record when the reference is installed.
fn compare(test: &str, setup: &[&str], last: &[&str], veto: bool) -> Option<Value> {
    let env = environment(test)?;
    let ours = replacement_record(&ours(&env), setup, last, veto).unwrap();
    if let Some(theirs) = replacement_record(&reference, setup, last, veto) {
        assert_eq!(ours, theirs, "ours:\n{ours:#}\npi 1.6:\n{theirs:#}");
    }
    Some(ours)
}

#[test]
fn ctx_new_session_seeds_the_new_file_and_the_next_prompt_goes_there() {
    let test = "ctx_new_session_seeds_the_new_file_and_the_next_prompt_goes_there";
    let Some(record) = compare(test, &["one"], &["-p", "/fresh", "two"], false) else {
        return;
    };
    let log = record["log"].to_string();
    assert!(log.contains("fresh result={\\\"cancelled\\\":false}"), "{record:#}");
    // The setup's writes return their entry ids at once, and the new file keeps those ids.
    assert!(
        log.contains("setup ids=true leaf=true parent=true label=seed"),
        "{record:#}"
    );
    assert!(log.contains("setup bad label: Entry nope0000 not found"), "{record:#}");
    assert!(
        log.contains("fresh setup entries kept=message,custom,label"),
        "{record:#}"
    );
    let files = record["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{record:#}");
    assert_eq!(files[1]["parent"], 0, "{record:#}");
}

#[test]
fn ctx_fork_before_a_prompt_and_at_the_leaf_write_new_files() {
    let test = "ctx_fork_before_a_prompt_and_at_the_leaf_write_new_files";
    let Some(before) = compare(test, &["one", "two"], &["-p", "/branch"], false) else {
        return;
    };
    assert_eq!(before["files"].as_array().unwrap().len(), 2, "{before:#}");
    let Some(at) = compare(test, &["one", "two"], &["-p", "/copy"], false) else {
        return;
    };
    assert_eq!(at["files"].as_array().unwrap().len(), 2, "{at:#}");
}

#[test]
fn ctx_switch_session_opens_another_file() {
    let test = "ctx_switch_session_opens_another_file";
    let Some(record) = compare(test, &["one", "new:two"], &["-p", "/goto <FIRST>", "three"], false) else {
        return;
    };
    assert!(record["log"].to_string().contains("goto result"), "{record:#}");
}

#[test]
fn ctx_reload_runs_the_reload_events() {
    let test = "ctx_reload_runs_the_reload_events";
    let Some(record) = compare(test, &["one"], &["-p", "/refresh"], false) else {
        return;
    };
    assert!(
        record["log"].to_string().contains("discover reason=reload"),
        "{record:#}"
    );
}

#[test]
fn a_vetoed_replacement_answers_cancelled_and_writes_nothing() {
    let test = "a_vetoed_replacement_answers_cancelled_and_writes_nothing";
    let Some(record) = compare(test, &["one", "two"], &["-p", "/fresh", "/branch", "/copy"], true) else {
        return;
    };
    assert_eq!(record["files"].as_array().unwrap().len(), 1, "{record:#}");
    let log = record["log"].to_string();
    assert!(log.contains("fresh result={\\\"cancelled\\\":true}"), "{record:#}");
}

/// `--mode json` through a `/fresh`: the type of every line, the header's included.
fn json_record(run: Runner) -> Option<Vec<String>> {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    run(&fx, &["-p", "one"])?.run().assert_ok();
    let ext = fixture("replace.ts");
    let mut pi = run(&fx, &["-c", "-e", &ext, "--mode", "json", "-p", "/fresh", "two"])?;
    pi.cmd.env("REPLACE_LOG", fx.root.path().join("replace.log"));
    let out = pi.run();
    out.assert_ok();
    Some(
        json_lines(&out.stdout)
            .iter()
            .map(|e| e["type"].as_str().unwrap_or_default().to_string())
            .collect(),
    )
}

#[test]
fn json_mode_streams_the_events_of_the_session_a_command_started() {
    let test = "json_mode_streams_the_events_of_the_session_a_command_started";
    let Some(env) = environment(test) else { return };
    let ours = json_record(&ours(&env)).unwrap();
    // One header (the first session's), then the second prompt's run in the new session.
    assert_eq!(ours.iter().filter(|t| *t == "session").count(), 1, "{ours:?}");
    assert_eq!(ours.first().map(String::as_str), Some("session"), "{ours:?}");
    assert!(ours.iter().any(|t| t == "agent_end"), "{ours:?}");
    if let Some(theirs) = json_record(&reference) {
        assert_eq!(ours, theirs);
    }
}

/// Send `command` as an RPC prompt, wait until the extension logged `done`, then answer
/// `get_state`'s response.
fn rpc_state_after(mut pi: Pi, command: &str, log: &Path, done: &str) -> Value {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    pi.cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let prompt = json!({"id": "1", "type": "prompt", "message": command});
    writeln!(stdin, "{prompt}").unwrap();
    stdin.flush().unwrap();
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(log).unwrap_or_default().contains(done) {
        assert!(start.elapsed().as_secs() < 30, "no `{done}` in the log");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    writeln!(stdin, "{}", json!({"id": "s", "type": "get_state"})).unwrap();
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut state = Value::Null;
    for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            if v["type"] == "response" && v["id"] == "s" {
                state = v;
                break;
            }
        }
    }
    drop(stdin);
    let _ = child.wait();
    state
}

/// RPC: `/fresh` as a prompt, then `get_state`: the client is in the new session, whose file
/// names the first as its parent and holds what `setup` wrote.
fn rpc_record(run: Runner) -> Option<Value> {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    run(&fx, &["-p", "one"])?.run().assert_ok();
    let first = fx.sessions()[0].display().to_string();
    let ext = fixture("replace.ts");
    let log = fx.root.path().join("replace.log");
    let mut pi = run(&fx, &["-c", "-e", &ext, "--mode", "rpc"])?;
    pi.cmd.env("REPLACE_LOG", &log);
    let state = rpc_state_after(pi, "/fresh", &log, "fresh result=");
    let file = state["data"]["sessionFile"].as_str().unwrap_or_default().to_string();
    let files = files(&fx);
    Some(json!({
        "log": std::fs::read_to_string(&log).unwrap_or_default().lines().collect::<Vec<_>>(),
        "stateIsTheNewFile": !file.is_empty() && file != first && fx.sessions().iter().any(|p| p == Path::new(&file)),
        "files": files,
    }))
}

#[test]
fn an_rpc_prompt_running_a_replacing_command_leaves_the_client_in_the_new_session() {
    let test = "an_rpc_prompt_running_a_replacing_command_leaves_the_client_in_the_new_session";
    let Some(env) = environment(test) else { return };
    let ours = rpc_record(&ours(&env)).unwrap();
    assert_eq!(ours["stateIsTheNewFile"], true, "{ours:#}");
    assert!(
        ours["log"]
            .to_string()
            .contains("fresh result={\\\"cancelled\\\":false}"),
        "{ours:#}"
    );
    assert_eq!(ours["files"][1]["parent"], 0, "{ours:#}");
    assert!(
        ours["files"][1]["entries"].to_string().contains("message/user:seeded"),
        "{ours:#}"
    );
    if let Some(theirs) = rpc_record(&reference) {
        assert_eq!(ours, theirs, "ours:\n{ours:#}\npi 1.6:\n{theirs:#}");
    }
}
