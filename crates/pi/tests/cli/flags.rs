//! Command-line behaviour of the binary: bad options, where informational output goes, file
//! arguments, and the session flags (`--no-session`, `-c`, `--session`, `--fork`, `--export`).
//! The flags new in 1.6 have their own file (`flags16.rs`).

use pi_test_support::Script;
use serde_json::Value;

use crate::harness::{golden_dir, json_lines, Fixture, Mock};

fn echo() -> (Mock, Fixture) {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    (mock, fx)
}

/// The user and assistant texts of the last request body (Chat Completions), system left out.
fn conversation(mock: &Mock) -> Vec<(String, String)> {
    let requests = mock.requests();
    let body = &requests.last().expect("a request").body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user" || m["role"] == "assistant")
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap().to_owned(), text)
        })
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

fn session_id(path: &std::path::Path) -> String {
    let header = json_lines(&std::fs::read_to_string(path).unwrap()).remove(0);
    header["id"].as_str().unwrap().to_owned()
}

#[test]
fn unknown_short_option_is_an_error() {
    let (mock, fx) = echo();
    let run = fx.pi(["-x", "-p", "hello"]).run();
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "Error: Unknown option: -x\n");
    assert!(mock.requests().is_empty());
}

#[test]
fn unknown_long_option_is_an_error() {
    let (mock, fx) = echo();
    let run = fx.pi(["--foo", "-p", "hello"]).run();
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "Error: Unknown option: --foo\n");
    assert!(mock.requests().is_empty());
}

/// 1.6 prints `--version` on stdout always, and a plain `--help` on stdout too, even when
/// stdout is a pipe; with `-p` or `--mode`, stdout belongs to the answer and help goes to stderr.
#[test]
fn version_and_help_streams() {
    let (_mock, fx) = echo();
    let version = format!("{}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["--version"][..], &["--version", "-p"], &["--mode", "rpc", "-v"]] {
        let run = fx.pi(args).run();
        run.assert_ok();
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            (version.as_str(), ""),
            "{args:?}"
        );
    }
    let run = fx.pi(["--help"]).stdin("").run();
    run.assert_ok();
    assert!(run.stdout.contains("--print"), "{}", run.stdout);
    assert_eq!(run.stderr, "");
    for args in [&["--help", "-p"][..], &["--mode", "json", "-h"]] {
        let run = fx.pi(args).run();
        run.assert_ok();
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(run.stderr.contains("--print"), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn print_mode_reads_piped_stdin() {
    let (mock, fx) = echo();
    let run = fx.pi(["-p"]).stdin("piped question\n").run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: piped question\n");
    assert_eq!(conversation(&mock), pairs(&[("user", "piped question")]));
    // Piped stdin alone selects print mode.
    let run = fx.pi(["--no-session"]).stdin("no flag").run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: no flag\n");
}

#[test]
fn missing_file_argument_is_an_error() {
    let (mock, fx) = echo();
    let run = fx.pi(["-p", "@missing.txt", "what is this"]).run();
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    let abs = fx.proj.join("missing.txt");
    assert_eq!(run.stderr, format!("Error: File not found: {}\n", abs.display()));
    assert!(mock.requests().is_empty());
}

#[test]
fn no_session_writes_no_file() {
    let (_mock, fx) = echo();
    fx.pi(["-p", "--no-session", "hello"]).run().assert_ok();
    fx.pi(["--mode", "json", "--no-session", "-p", "hello"])
        .run()
        .assert_ok();
    assert!(fx.sessions().is_empty(), "{:?}", fx.sessions());
    fx.pi(["-p", "hello"]).run().assert_ok();
    assert_eq!(fx.sessions().len(), 1);
}

#[test]
fn continue_resumes_the_latest_session() {
    let (mock, fx) = echo();
    fx.pi(["-p", "first"]).run().assert_ok();
    let run = fx.pi(["-c", "-p", "second"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "echo: second\n");
    assert_eq!(
        conversation(&mock),
        pairs(&[("user", "first"), ("assistant", "echo: first"), ("user", "second")])
    );
    let session = fx.only_session();
    let messages = json_lines(&std::fs::read_to_string(session).unwrap())
        .into_iter()
        .filter(|e| e["type"] == "message")
        .count();
    // The loadout's system message once (the second prompt's loadout is unchanged), then
    // two prompts and their replies.
    assert_eq!(messages, 5);
}

#[test]
fn session_by_id_prefix_reopens_it() {
    let (mock, fx) = echo();
    fx.pi(["-p", "one"]).run().assert_ok();
    let path = fx.only_session();
    let id = session_id(&path);
    // A newer session, so "latest" would be the wrong one.
    fx.pi(["-p", "other"]).run().assert_ok();
    let other = fx.sessions().into_iter().find(|p| *p != path).unwrap();
    let other_id = session_id(&other);
    // UUIDv7 ids of runs a moment apart share their leading (time) digits.
    let common = id.chars().zip(other_id.chars()).take_while(|(a, b)| a == b).count();
    let prefix = &id[..common + 1];
    let run = fx.pi(["--session", prefix, "-p", "two"]).run();
    run.assert_ok();
    assert_eq!(
        conversation(&mock),
        pairs(&[("user", "one"), ("assistant", "echo: one"), ("user", "two")])
    );
    assert_eq!(fx.sessions().len(), 2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"text\":\"echo: two\""), "{text}");

    let run = fx.pi(["--session", "zzzz-no-such", "-p", "x"]).run();
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("No session found matching 'zzzz-no-such'"),
        "{}",
        run.stderr
    );
}

#[test]
fn fork_copies_the_session_into_a_new_file() {
    let (mock, fx) = echo();
    fx.pi(["-p", "one"]).run().assert_ok();
    let source = fx.only_session();
    let source_text = std::fs::read_to_string(&source).unwrap();
    let id = session_id(&source);
    let run = fx.pi(["--fork", &id[..8], "-p", "two"]).run();
    run.assert_ok();
    assert_eq!(
        conversation(&mock),
        pairs(&[("user", "one"), ("assistant", "echo: one"), ("user", "two")])
    );
    let sessions = fx.sessions();
    assert_eq!(sessions.len(), 2);
    // The source is untouched; the fork has its own id and points back at the source.
    assert_eq!(std::fs::read_to_string(&source).unwrap(), source_text);
    let fork = sessions.iter().find(|p| **p != source).unwrap();
    let entries = json_lines(&std::fs::read_to_string(fork).unwrap());
    assert_ne!(entries[0]["id"], Value::from(id.clone()));
    assert_eq!(
        entries[0]["parentSession"].as_str().map(std::path::Path::new),
        Some(source.as_path())
    );
    // The system message, then two prompts and replies.
    assert_eq!(entries.iter().filter(|e| e["type"] == "message").count(), 5);

    let run = fx.pi(["--fork", &id[..8], "--no-session", "-p", "x"]).run();
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "Error: --fork cannot be combined with --no-session\n");
    let run = fx.pi(["--fork", &id[..8], "-c", "--session", "x", "-p", "x"]).run();
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Error: --fork cannot be combined with --session, --continue\n"
    );
    let run = fx.pi(["--fork", "nofile.jsonl", "-p", "x"]).run();
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Error: Cannot fork: source session file is empty or invalid: nofile.jsonl\n"
    );
    assert_eq!(mock.requests().len(), 2, "no request after the failed starts");
}

#[test]
fn export_writes_html() {
    let Some(golden) = golden_dir() else { return };
    let (_mock, fx) = echo();
    let out = fx.proj.join("out.html");
    let input = golden.join("tools-print.session.jsonl");
    let run = fx
        .pi(["--export", input.to_str().unwrap(), out.to_str().unwrap()])
        .run();
    run.assert_ok();
    // 1.6 reports the written file on stdout.
    assert_eq!(run.stdout, format!("Exported to: {}\n", out.display()));
    assert_eq!(run.stderr, "");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"),
        "{}",
        &html[..80]
    );
    assert!(html.contains("notes/todo.md"));

    let run = fx.pi(["--export", "/nonexistent/x.jsonl"]).run();
    assert_eq!(run.code, 1);
    assert!(run.stderr.starts_with("Error: "), "{}", run.stderr);
}

/// pi 1.6's `message_update` carries the delta and the usage, never the message: a client
/// rebuilds the text from the deltas, and `text_end` and `message_end` give the whole of it.
#[test]
fn json_updates_carry_deltas_that_rebuild_the_reply() {
    let (_mock, fx) = echo();
    let run = fx.pi(["--mode", "json", "--no-session", "-p", "hello"]).run();
    run.assert_ok();
    let events = run.events();
    let mut seen = String::new();
    let mut updates = 0;
    for e in events.iter().filter(|e| e["type"] == "message_update") {
        updates += 1;
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["type", "usage", "assistantMessageEvent"], "{e}");
        let ev = &e["assistantMessageEvent"];
        assert!(ev.get("partial").is_none(), "{e}");
        match ev["type"].as_str().unwrap() {
            "text_delta" => seen.push_str(ev["delta"].as_str().unwrap()),
            "text_end" => assert_eq!(ev["content"].as_str().unwrap(), seen),
            _ => {}
        }
    }
    assert_eq!(seen, "echo: hello");
    assert!(updates >= 4);
    let end = events.iter().rfind(|e| e["type"] == "message_end").unwrap();
    assert_eq!(end["message"]["content"][0]["text"], "echo: hello");
    assert_eq!(end["message"]["thinkingLevel"], "off");
    assert!(end["message"]["durationMs"].is_u64(), "{end}");
    // The streaming start says it is pending; the run closes with agent_settled.
    let start = events
        .iter()
        .find(|e| e["type"] == "message_start" && e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(start["message"]["stopReason"], "pending");
    assert_eq!(
        events.last().unwrap(),
        &serde_json::json!({"type": "agent_settled", "aborted": false})
    );
}

#[test]
fn session_path_that_does_not_exist_starts_a_session_there() {
    let (_mock, fx) = echo();
    let run = fx.pi(["-p", "--session", "mine.jsonl", "hello"]).run();
    run.assert_ok();
    let entries = json_lines(&std::fs::read_to_string(fx.proj.join("mine.jsonl")).unwrap());
    assert_eq!(entries[0]["type"], "session");
    let roles: Vec<&str> = entries
        .iter()
        .filter(|e| e["type"] == "message")
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    assert!(fx.sessions().is_empty());
}
