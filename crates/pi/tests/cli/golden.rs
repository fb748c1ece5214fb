//! The golden cases: the same command against the same scenario as the TypeScript pi, then
//! exit code, output, session file and request bodies compared after normalising.

use std::path::Path;

use serde_json::Value;

use crate::harness::{golden_dir, golden_file, json_lines, parse_cmd, Fixture, Mock, Run};
use crate::normalise::{diff, Normaliser};

/// Headers that belong to the HTTP client, not to pi.
const CLIENT_HEADERS: &[&str] = &[
    "host",
    "connection",
    "accept",
    "user-agent",
    "accept-language",
    "sec-fetch-mode",
    "accept-encoding",
    "content-length",
];

/// One event line made comparable: the usage of a `message_update` is a live object that pi
/// serializes some time after the event, so only its keys are compared (the keys every usage
/// has: pi's gains `reasoning` and the like when the provider first reports usage).
fn comparable_event(mut v: Value) -> Value {
    if v["type"] == "message_update" {
        if let Some(usage) = v.get_mut("usage").and_then(Value::as_object_mut) {
            usage.retain(|k, _| ["input", "output", "cacheRead", "cacheWrite", "totalTokens"].contains(&k.as_str()));
            usage.values_mut().for_each(|n| *n = Value::from("<N>"));
        }
    }
    // The usage and response id of a streaming start are as racy (pi shows them when the
    // provider's first event beat the serialization).
    if v["type"] == "message_start" && v["message"]["stopReason"] == "pending" {
        v["message"]["usage"] = Value::from("<USAGE>");
        if let Some(m) = v["message"].as_object_mut() {
            m.shift_remove("responseId");
        }
    }
    v
}

/// Events without tool progress updates (their number depends on timing), with each run of
/// `tool_execution_end` sorted by call id (parallel tools finish in any order).
fn comparable_stream(events: Vec<Value>, norm: &mut Normaliser) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for mut e in events {
        if e["type"] == "tool_execution_update" {
            continue;
        }
        norm.value(&mut e);
        out.push(comparable_event(e));
    }
    let mut i = 0;
    while i < out.len() {
        let mut j = i;
        while j < out.len() && out[j]["type"] == "tool_execution_end" {
            j += 1;
        }
        if j > i + 1 {
            out[i..j].sort_by_key(|e| e["toolCallId"].as_str().unwrap_or_default().to_owned());
        }
        i = j.max(i + 1);
    }
    out
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let t = e["type"].as_str().unwrap_or_default();
            match e["assistantMessageEvent"]["type"].as_str() {
                Some(sub) => format!("{t}/{sub}"),
                None => t.to_owned(),
            }
        })
        .collect()
}

/// The system prompt and the tool descriptions are ours to word: blank them.
fn comparable_body(mut body: Value) -> Value {
    for key in ["messages", "input"] {
        if let Some(first) = body.get_mut(key).and_then(|m| m.get_mut(0)) {
            if first["role"] == "system" || first["role"] == "developer" {
                first["content"] = Value::from("<SYSTEM>");
            }
        }
    }
    if let Some(system) = body.get_mut("system").and_then(Value::as_array_mut) {
        for block in system {
            block["text"] = Value::from("<SYSTEM>");
        }
    }
    if body.get("instructions").is_some() {
        body["instructions"] = Value::from("<SYSTEM>");
    }
    if let Some(tools) = body.get_mut("tools") {
        blank_descriptions(tools);
    }
    body
}

fn blank_descriptions(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, item) in map.iter_mut() {
                if k == "description" && item.is_string() {
                    *item = Value::from("<DESC>");
                } else {
                    blank_descriptions(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(blank_descriptions),
        _ => {}
    }
}

/// Every file under `dir` as `=== ./path` and its text, sorted by path.
fn project_listing(dir: &Path) -> String {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    let mut text = String::new();
    for f in files {
        let rel = f.strip_prefix(dir).unwrap().display().to_string();
        text.push_str(&format!(
            "=== ./{rel}\n{}",
            std::fs::read_to_string(&f).unwrap_or_default()
        ));
    }
    text
}

/// Compare everything a case recorded; returns the differences.
fn compare(golden: &Path, case: &str, fx: &Fixture, mock: &Mock, run: &Run, first_request: usize) -> Vec<String> {
    let mut problems = Vec::new();
    let mut note = |what: &str, d: Vec<String>| {
        for line in d {
            problems.push(format!("[{what}] {line}"));
        }
    };
    let ours_norm = || Normaliser::new(&fx.tmp(), &fx.agent_path());

    let rc: i32 = golden_file(golden, case, "rc").trim().parse().unwrap();
    if run.code != rc {
        note(
            "rc",
            vec![format!("ours {} theirs {rc}; stderr: {}", run.code, run.stderr)],
        );
    }

    // stdout: JSON events or text.
    let their_out = golden_file(golden, case, "stdout");
    if their_out.starts_with('{') {
        let mut n = ours_norm();
        let ours = comparable_stream(run.events(), &mut n);
        let theirs = comparable_stream(json_lines(&their_out), &mut Normaliser::golden());
        let (ot, tt) = (types(&ours), types(&theirs));
        if ot != tt {
            note("event types", vec![format!("ours   {ot:?}\ntheirs {tt:?}")]);
        }
        note("events", diff(&Value::from(ours), &Value::from(theirs)));
    } else {
        let ours = ours_norm().text(&run.stdout);
        if ours != their_out {
            note("stdout", vec![format!("ours {ours:?} theirs {their_out:?}")]);
        }
    }
    let their_err = golden_file(golden, case, "stderr");
    let ours_err = ours_norm().text(&run.stderr);
    if ours_err != their_err {
        note("stderr", vec![format!("ours {ours_err:?} theirs {their_err:?}")]);
    }

    // The project the tools changed.
    let their_project = golden.join(format!("{case}.project.txt"));
    if their_project.is_file() {
        let theirs = std::fs::read_to_string(&their_project).unwrap();
        let ours = project_listing(&fx.proj);
        if ours.trim_end() != theirs.trim_end() {
            note("project", vec![format!("ours:\n{ours}\ntheirs:\n{theirs}")]);
        }
    }

    // The session file.
    let their_session = golden.join(format!("{case}.session.jsonl"));
    if their_session.is_file() {
        let sessions = fx.sessions();
        if sessions.len() != 1 {
            note(
                "session",
                vec![format!("expected one session file, found {sessions:?}")],
            );
        } else {
            let mut n = ours_norm();
            let ours: Vec<Value> = (json_lines(&std::fs::read_to_string(&sessions[0]).unwrap()))
                .into_iter()
                .map(|mut v| {
                    n.value(&mut v);
                    v
                })
                .collect();
            let mut g = Normaliser::golden();
            let theirs: Vec<Value> = (json_lines(&std::fs::read_to_string(&their_session).unwrap()))
                .into_iter()
                .map(|mut v| {
                    g.value(&mut v);
                    v
                })
                .collect();
            note("session", diff(&Value::from(ours), &Value::from(theirs)));
        }
    }

    // Request bodies and pi's own headers.
    let their_requests = golden.join(format!("{case}.requests.jsonl"));
    if their_requests.is_file() {
        let theirs = json_lines(&std::fs::read_to_string(&their_requests).unwrap());
        let ours = mock.requests();
        let ours = &ours[first_request.min(ours.len())..];
        if ours.len() != theirs.len() {
            note(
                "requests",
                vec![format!("count ours {} theirs {}", ours.len(), theirs.len())],
            );
        }
        let mut n = ours_norm();
        let mut g = Normaliser::golden();
        for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
            if o.path != t["path"].as_str().unwrap_or_default() {
                note(
                    "requests",
                    vec![format!("#{i} path ours {} theirs {}", o.path, t["path"])],
                );
            }
            let mut ob = comparable_body(o.body.clone());
            let mut tb = comparable_body(t["body"].clone());
            n.value(&mut ob);
            g.value(&mut tb);
            note(&format!("request {i} body"), diff(&ob, &tb));
            for (name, value) in t["headers"].as_object().into_iter().flatten() {
                if CLIENT_HEADERS.contains(&name.as_str()) || name.starts_with("x-stainless") {
                    continue;
                }
                let mut tv = value.clone();
                let mut ov = Value::from(o.header(name).unwrap_or("<missing>"));
                // Session ids in headers (`session_id` of Chat Completions, `session-id` of
                // Responses): fresh in every run, so normalised as the bodies' ids are.
                let mut th = serde_json::json!({"session_id": tv});
                let mut oh = serde_json::json!({"session_id": ov});
                if name == "session_id" || name == "session-id" || name == "x-client-request-id" {
                    g.value(&mut th);
                    n.value(&mut oh);
                    tv = th["session_id"].take();
                    ov = oh["session_id"].take();
                }
                if ov != tv {
                    note(
                        &format!("request {i} header"),
                        vec![format!("{name}: ours {ov} theirs {tv}")],
                    );
                }
            }
        }
    }
    problems
}

/// Run one golden case in a fresh fixture (or the given one) and compare.
fn case_in(golden: &Path, mock: &Mock, fx: &Fixture, case: &str, stdin: Option<&str>) -> Vec<String> {
    let args = parse_cmd(&golden_file(golden, case, "cmd"));
    let first_request = mock.requests().len();
    let mut pi = fx.pi(&args);
    if let Some(text) = stdin {
        pi = pi.stdin(text);
    }
    let run = pi.run();
    compare(golden, case, fx, mock, &run, first_request)
}

/// Run each case against its scenario and fail with every difference found. No difference
/// is allowed: what varies from run to run (ids, times, paths) is normalised first.
#[track_caller]
fn check(cases: &[(&str, &str, Option<&str>)]) {
    let Some(golden) = golden_dir() else { return };
    check_cases_in(&golden, cases);
}

/// The 1.6 transcripts, for the cases whose 1.6 behaviour is already ours (`PI_GOLDEN16_DIR`
/// overrides the project's copy).
fn golden16_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("PI_GOLDEN16_DIR").map_or_else(pi_test_support::golden_16, std::path::PathBuf::from);
    if dir.join("scenarios").is_dir() {
        Some(dir)
    } else {
        pi_test_support::require::missing(
            &format!("golden transcripts in {}", dir.display()),
            "compares with the recorded TypeScript pi 1.6",
        )
    }
}

#[track_caller]
fn check_cases_in(golden: &Path, cases: &[(&str, &str, Option<&str>)]) {
    let golden = golden.to_path_buf();
    let mut failures = Vec::new();
    for (case, scenario, stdin) in cases {
        let mock = Mock::scenario(&golden, scenario);
        let fx = Fixture::new(&mock);
        let problems = case_in(&golden, &mock, &fx, case, *stdin);
        if !problems.is_empty() {
            failures.push(format!("== {case}\n{}", problems.join("\n")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The system prompt text of a request (any API), normalised.
fn system_text(body: &Value, fx: &Fixture) -> String {
    let raw = if let Some(blocks) = body["system"].as_array() {
        blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        let first = body["messages"]
            .get(0)
            .or_else(|| body["input"].get(0))
            .cloned()
            .unwrap_or_default();
        match &first["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        }
    };
    Normaliser::new(&fx.tmp(), &fx.agent_path()).text(&raw)
}

/// The cases that shape the system prompt and the tool list: the wording is ours, so the
/// prompt is checked for what the flags must put in or leave out; the bodies are compared
/// with the prompt and descriptions blanked.
#[test]
fn system_prompt_and_tool_cases() {
    let Some(golden) = golden_dir() else { return };
    let agents = "# Project rules\n\nAlways answer in haiku.\n";
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "system-prompt",
            &["You are a test system prompt."],
            &["Available tools"],
        ),
        ("append-system-prompt", &["APPENDED LINE"], &[]),
        ("agents-md", &["<TMP>/proj/AGENTS.md", "Always answer in haiku."], &[]),
        ("agents-md-disabled", &[], &["Always answer in haiku."]),
        ("no-tools", &[], &[]),
        ("all-tools", &[], &[]),
    ];
    let mut failures = Vec::new();
    for (case, has, lacks) in cases {
        let mock = Mock::scenario(&golden, "echo");
        let fx = Fixture::new(&mock);
        if case.starts_with("agents-md") {
            std::fs::write(fx.proj.join("AGENTS.md"), agents).unwrap();
        }
        let mut problems = case_in(&golden, &mock, &fx, case, None);
        let requests = mock.requests();
        if let Some(request) = requests.first() {
            let text = system_text(&request.body, &fx);
            if *case == "system-prompt" && !text.starts_with(has[0]) {
                problems.push(format!("[system] does not start with the custom prompt:\n{text}"));
            }
            for want in *has {
                if !text.contains(want) {
                    problems.push(format!("[system] lacks {want:?}:\n{text}"));
                }
            }
            for unwanted in *lacks {
                if text.contains(unwanted) {
                    problems.push(format!("[system] has {unwanted:?}:\n{text}"));
                }
            }
            if !text.trim_end().ends_with("<cwd>\n<TMP>/proj\n</cwd>") {
                problems.push(format!("[system] does not end with the cwd line:\n{text}"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!("== {case}\n{}", problems.join("\n")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A first run and its `--continue`, in one fixture.
#[track_caller]
fn check_pair(first: &str, second: &str, scenario: &str) {
    let Some(golden) = golden_dir() else { return };
    let mock = Mock::scenario(&golden, scenario);
    let fx = Fixture::new(&mock);
    let mut problems = case_in(&golden, &mock, &fx, first, None);
    problems.extend(case_in(&golden, &mock, &fx, second, None));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn hello_cases() {
    check(&[
        ("hello-print", "echo", None),
        ("hello-json", "echo", None),
        ("hello-nosession", "echo", None),
        ("hello-mock-anthropic", "echo", None),
        ("hello-mock-responses", "echo", None),
        ("model-slash", "echo", None),
    ]);
}

#[test]
fn input_cases() {
    check(&[
        ("stdin-only", "echo", Some("hello from stdin\n")),
        ("stdin-plus-arg", "echo", Some("hello from stdin\n")),
        ("at-file", "echo", None),
        ("two-messages", "echo", None),
    ]);
}

/// The informational commands as 1.6 runs them: the model table on stdout, the unknown
/// provider error on stderr.
#[test]
fn info_cases() {
    let Some(golden) = golden16_dir() else { return };
    check_cases_in(
        &golden,
        &[
            ("list-models", "echo", None),
            ("list-models-search", "echo", None),
            ("unknown-model", "echo", None),
        ],
    );
}

/// `--version` on stdout alone, as 1.6 does; the number is our own crate's.
#[test]
fn version_goes_to_stdout() {
    let Some(golden) = golden16_dir() else { return };
    let mock = Mock::scenario(&golden, "echo");
    let fx = Fixture::new(&mock);
    let run = fx.pi(parse_cmd(&golden_file(&golden, "version", "cmd"))).run();
    assert_eq!(run.code.to_string(), golden_file(&golden, "version", "rc").trim());
    assert_eq!(run.stdout, format!("{}\n", env!("CARGO_PKG_VERSION")));
    assert_eq!(run.stderr, golden_file(&golden, "version", "stderr"));
}

/// Help is worded our way; only where it goes is compared (stdout, as in 1.6).
#[test]
fn help_goes_to_stdout() {
    let Some(golden) = golden16_dir() else { return };
    let mock = Mock::scenario(&golden, "echo");
    let fx = Fixture::new(&mock);
    let run = fx.pi(parse_cmd(&golden_file(&golden, "help", "cmd"))).run();
    run.assert_ok();
    assert_eq!(run.stderr, "");
    assert!(run.stdout.contains("--mode"), "{}", run.stdout);
    assert!(run.stdout.contains("--session-id"), "{}", run.stdout);
}

#[test]
fn tools_json_openai() {
    check(&[("tools-json-mock-openai", "tools", None)]);
}

#[test]
fn tools_json_anthropic() {
    check(&[("tools-json-mock-anthropic", "tools", None)]);
}

#[test]
fn tools_json_responses() {
    check(&[("tools-json-mock-responses", "tools", None)]);
}

#[test]
fn tools_print() {
    check(&[("tools-print", "tools", None)]);
}

#[test]
fn think_openai() {
    check_pair("think-mock-openai-1", "think-mock-openai-2", "think");
}

#[test]
fn think_anthropic() {
    check_pair("think-mock-anthropic-1", "think-mock-anthropic-2", "think");
}

#[test]
fn think_responses() {
    check_pair("think-mock-responses-1", "think-mock-responses-2", "think");
}

#[test]
fn think_print() {
    check(&[("think-print", "think", None)]);
}
