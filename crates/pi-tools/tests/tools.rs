//! Behaviour of the built-in tools against results recorded from the TypeScript pi, the golden
//! tool-use scenario, and the rules that need a live process or file system.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent::{AgentTool, ToolOutput, ToolUpdateFn};
use pi_tools::{create_tool, create_tools, ToolsOptions, ALL_TOOL_NAMES, DEFAULT_TOOL_NAMES};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn no_updates() -> ToolUpdateFn {
    Arc::new(|_| {})
}

fn tool(name: &str, cwd: &Path) -> Arc<dyn AgentTool> {
    create_tool(name, cwd, &ToolsOptions::default()).expect("known tool")
}

/// Run a tool the way the agent loop does: prepare, execute, and turn the outcome into the
/// `{isError, content, details}` shape of a tool result.
async fn run(tool: &dyn AgentTool, args: Value) -> Value {
    let args = tool.prepare_arguments(args);
    match tool.execute("call", args, CancellationToken::new(), no_updates()).await {
        Ok(out) => result_json(out.is_error, &out),
        Err(e) => json!({"isError": true, "content": [{"type": "text", "text": e.message}]}),
    }
}

fn result_json(is_error: bool, out: &ToolOutput) -> Value {
    let mut v = json!({"isError": is_error, "content": out.content});
    if let Some(d) = &out.details {
        v["details"] = d.clone();
    }
    v
}

fn text(v: &Value) -> String {
    v["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

/// Replace the fixture dir and temp log names the way the recorder did.
fn clean(v: &Value, cwd: &Path) -> Value {
    let s = serde_json::to_string(v).expect("json");
    let s = s.replace(&cwd.display().to_string(), "<CWD>");
    let re = regex_lite_log(&s);
    serde_json::from_str(&re).expect("json")
}

fn regex_lite_log(s: &str) -> String {
    let marker = "/pi-bash-";
    let tmp = std::env::temp_dir().display().to_string();
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(marker) {
        let (before, after) = rest.split_at(i);
        let hex: String = after[marker.len()..].chars().take(16).collect();
        let is_log = hex.len() == 16
            && hex.chars().all(|c| c.is_ascii_hexdigit())
            && after[marker.len() + 16..].starts_with(".log")
            && before.ends_with(tmp.trim_end_matches('/'));
        if is_log {
            out.push_str(&before[..before.len() - tmp.trim_end_matches('/').len()]);
            out.push_str("<LOG>");
            rest = &after[marker.len() + 16 + 4..];
        } else {
            out.push_str(before);
            out.push_str(marker);
            rest = &after[marker.len()..];
        }
    }
    out.push_str(rest);
    out
}

fn fixture(spec: &Value) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("canonical");
    for (rel, content) in spec["files"].as_object().expect("files") {
        let p = cwd.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, content.as_str().expect("text")).expect("write");
    }
    for (rel, b64) in spec["binaryFiles"].as_object().expect("binary files") {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().expect("b64"))
            .expect("decode");
        std::fs::write(cwd.join(rel), bytes).expect("write");
    }
    for d in spec["dirs"].as_array().expect("dirs") {
        std::fs::create_dir_all(cwd.join(d.as_str().expect("dir"))).expect("mkdir");
    }
    (dir, cwd)
}

/// Lines of the body (before any `[notice]`), sorted, plus the notice.
fn unordered(text: &str) -> (Vec<String>, String) {
    let (body, notice) = match text.rfind("\n\n[") {
        Some(i) => (&text[..i], &text[i..]),
        None => (text, ""),
    };
    let mut lines: Vec<String> = body.split('\n').map(str::to_string).collect();
    lines.sort();
    (lines, notice.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_match_the_typescript_pi() {
    let spec: Value = serde_json::from_str(include_str!("fixtures/pi_cases.json")).expect("cases json");
    let expected: Vec<Value> = serde_json::from_str(include_str!("fixtures/pi_expected.json")).expect("expected json");
    let (_guard, cwd) = fixture(&spec);
    let cases = spec["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), expected.len());
    let mut failures = Vec::new();
    for (i, (case, want)) in cases.iter().zip(&expected).enumerate() {
        let name = case["tool"].as_str().expect("tool");
        let raw = run(tool(name, &cwd).as_ref(), case["args"].clone()).await;
        if let Some(log) = raw["details"]["fullOutputPath"].as_str() {
            let _ = std::fs::remove_file(log);
        }
        let got = clean(&raw, &cwd);
        let same = if case["unordered"].as_bool() == Some(true) {
            got["isError"] == want["isError"]
                && unordered(&text(&got)) == unordered(&text(want))
                && got.get("details") == want.get("details")
        } else {
            &got == want
        };
        if !same {
            failures.push(format!(
                "case {i} {name} {}\n  want: {}\n  got:  {}",
                case["args"],
                truncate(&want.to_string()),
                truncate(&got.to_string())
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn truncate(s: &str) -> String {
    if s.len() <= 1500 {
        return s.to_string();
    }
    let mut end = 1500;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// The golden tool-use scenario (golden/scenarios/tools.json) on the golden fixture project.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_tool_scenario_gives_pis_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(
        cwd.join("hello.txt"),
        "Hello world\nThis is a test file.\nThird line.\n",
    )
    .expect("write");
    std::fs::create_dir_all(cwd.join("src")).expect("mkdir");
    std::fs::write(
        cwd.join("src/app.py"),
        "def main():\n    print(\"hi\")\n\n\nif __name__ == \"__main__\":\n    main()\n",
    )
    .expect("write");
    let tools = create_tools(&cwd, &DEFAULT_TOOL_NAMES, &ToolsOptions::default());
    let by_name = |n: &str| tools.iter().find(|t| t.name() == n).cloned().expect("tool");
    let turns: Vec<Vec<(&str, Value)>> = vec![
        vec![("read", json!({"path": "hello.txt"}))],
        vec![(
            "write",
            json!({"path": "notes/todo.md", "content": "# TODO\n\n- greet pi\n- run checks\n"}),
        )],
        vec![(
            "edit",
            json!({"path": "hello.txt", "edits": [{"oldText": "Hello world", "newText": "Hello pi"}]}),
        )],
        vec![(
            "bash",
            json!({"command": "cat hello.txt; find . -type f | sort; echo exit-ok"}),
        )],
        vec![
            ("read", json!({"path": "notes/todo.md", "offset": 3, "limit": 1})),
            ("bash", json!({"command": "wc -l hello.txt && echo to-stderr >&2"})),
        ],
        vec![
            ("read", json!({"path": "does-not-exist.txt"})),
            (
                "edit",
                json!({"path": "hello.txt", "edits": [{"oldText": "no such text", "newText": "x"}]}),
            ),
            ("bash", json!({"command": "echo failing; exit 3"})),
        ],
    ];
    let mut results = Vec::new();
    for turn in turns {
        let futures = turn.into_iter().map(|(name, args)| {
            let t = by_name(name);
            async move { run(t.as_ref(), args).await }
        });
        results.extend(futures::future::join_all(futures).await);
    }
    let results: Vec<Value> = results.iter().map(|r| clean(r, &cwd)).collect();
    let expected = vec![
        json!({"isError": false, "content": [{"type": "text", "text": "Hello world\nThis is a test file.\nThird line.\n"}]}),
        json!({"isError": false, "content": [{"type": "text", "text": "Successfully wrote to notes/todo.md"}]}),
        json!({"isError": false, "content": [{"type": "text", "text": "Successfully replaced 1 block(s) in hello.txt."}],
               "details": {"diff": "-1 Hello world\n+1 Hello pi\n 2 This is a test file.\n 3 Third line.",
                           "patch": "--- hello.txt\n+++ hello.txt\n@@ -1,3 +1,3 @@\n-Hello world\n+Hello pi\n This is a test file.\n Third line.\n",
                           "firstChangedLine": 1}}),
        json!({"isError": false, "content": [{"type": "text", "text": "Hello pi\nThis is a test file.\nThird line.\n./hello.txt\n./notes/todo.md\n./src/app.py\nexit-ok\n"}]}),
        json!({"isError": false, "content": [{"type": "text", "text": "- greet pi\n\n[2 more lines in file. Use offset=4 to continue.]"}]}),
        json!({"isError": false, "content": [{"type": "text", "text": "3 hello.txt\nto-stderr\n"}]}),
        json!({"isError": true, "content": [{"type": "text", "text": "ENOENT: no such file or directory, access '<CWD>/does-not-exist.txt'"}]}),
        json!({"isError": true, "content": [{"type": "text", "text": "Could not find the exact text in hello.txt. The old text must match exactly including all whitespace and newlines."}]}),
        json!({"isError": true, "content": [{"type": "text", "text": "failing\n\n\nCommand exited with code 3"}]}),
    ];
    assert_eq!(results, expected);
    let project = std::fs::read_to_string(cwd.join("hello.txt")).expect("read");
    assert_eq!(project, "Hello pi\nThis is a test file.\nThird line.\n");
}

#[test]
fn schemas_match_the_golden_tool_list() {
    // The golden tool list with descriptions removed: structure only.
    let golden: Value = serde_json::from_str(include_str!("fixtures/tools.all-tools.json")).expect("golden tools");
    let tools = create_tools("/", &ALL_TOOL_NAMES, &ToolsOptions::default());
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ALL_TOOL_NAMES);
    // Names, types, required lists and structure match; descriptions are our own words.
    fn strip_descriptions(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "description")
                    .map(|(k, v)| (k.clone(), strip_descriptions(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip_descriptions).collect()),
            other => other.clone(),
        }
    }
    for (t, g) in tools.iter().zip(golden.as_array().expect("array")) {
        assert_eq!(t.name(), g["function"]["name"]);
        assert_eq!(
            strip_descriptions(&t.parameters()),
            strip_descriptions(&g["function"]["parameters"]),
            "{}",
            t.name()
        );
        assert!(!t.description().is_empty());
        assert!(t.prompt_snippet().is_some());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_streams_progress_and_starts_with_an_empty_update() {
    let dir = tempfile::tempdir().expect("tempdir");
    let updates: Arc<Mutex<Vec<ToolOutput>>> = Arc::default();
    let sink = updates.clone();
    let on_update: ToolUpdateFn = Arc::new(move |u| sink.lock().expect("lock").push(u));
    let out = tool("bash", dir.path())
        .execute(
            "c",
            json!({"command": "echo one; sleep 0.3; echo two"}),
            CancellationToken::new(),
            on_update,
        )
        .await
        .expect("bash");
    assert_eq!(out.content[0].as_text(), Some("one\ntwo\n"));
    let updates = updates.lock().expect("lock");
    assert!(updates[0].content.is_empty() && updates[0].details.is_none());
    assert!(updates
        .iter()
        .any(|u| u.content.first().and_then(|c| c.as_text()) == Some("one\n")));
    assert_eq!(updates.last().and_then(|u| u.content[0].as_text()), Some("one\ntwo\n"));
}

fn process_alive(pid: i32) -> bool {
    // A zombie still has a /proc entry; only a running or sleeping process counts.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let state = s.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("child.pid");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let command = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
    let run = tokio::spawn({
        let t = tool("bash", dir.path());
        async move {
            t.execute("c", json!({ "command": command }), cancel, no_updates())
                .await
        }
    });
    let mut child_pid = None;
    for _ in 0..100 {
        if let Ok(s) = std::fs::read_to_string(&pid_file) {
            if let Ok(p) = s.trim().parse::<i32>() {
                child_pid = Some(p);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let child_pid = child_pid.expect("background child started");
    assert!(process_alive(child_pid));
    trigger.cancel();
    let err = run.await.expect("join").expect_err("aborted");
    assert_eq!(err.message, "Command aborted");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!process_alive(child_pid), "grandchild survived the abort");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_and_reports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = tool("bash", dir.path())
        .execute(
            "c",
            json!({"command": "sleep 20", "timeout": 0.3}),
            CancellationToken::new(),
            no_updates(),
        )
        .await
        .expect_err("timeout");
    assert_eq!(err.message, "Command timed out after 0.3 seconds");
}

/// Pids the command wrote to `file`, one per line, once `count` are there.
async fn wait_for_pids(file: &std::path::Path, count: usize) -> Vec<i32> {
    for _ in 0..250 {
        if let Ok(s) = std::fs::read_to_string(file) {
            let pids: Vec<i32> = s.lines().filter_map(|l| l.trim().parse().ok()).collect();
            if pids.len() >= count {
                return pids;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the command did not start its children");
}

/// A shell and two levels of children that all ignore SIGTERM (and SIGHUP, SIGINT).
fn stubborn_tree(pid_file: &std::path::Path) -> String {
    let f = pid_file.display();
    format!(
        "trap '' TERM HUP INT; (trap '' TERM HUP INT; (trap '' TERM HUP INT; echo $BASHPID >> {f}; sleep 30) & \
         echo $BASHPID >> {f}; sleep 30) & sleep 30 & echo $! >> {f}; wait"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_leaves_no_process_behind_even_when_children_ignore_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("pids");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let command = stubborn_tree(&pid_file);
    let run = tokio::spawn({
        let t = tool("bash", dir.path());
        async move {
            t.execute("c", json!({ "command": command }), cancel, no_updates())
                .await
        }
    });
    let pids = wait_for_pids(&pid_file, 3).await;
    assert!(pids.iter().all(|p| process_alive(*p)));
    trigger.cancel();
    let err = run.await.expect("join").expect_err("aborted");
    assert_eq!(err.message, "Command aborted");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let alive: Vec<i32> = pids.into_iter().filter(|p| process_alive(*p)).collect();
    assert!(alive.is_empty(), "still running after the abort: {alive:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_leaves_no_process_behind_even_when_children_ignore_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("pids");
    let started = std::time::Instant::now();
    let err = tool("bash", dir.path())
        .execute(
            "c",
            json!({"command": stubborn_tree(&pid_file), "timeout": 1}),
            CancellationToken::new(),
            no_updates(),
        )
        .await
        .expect_err("timeout");
    assert_eq!(err.message, "Command timed out after 1 seconds");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the timeout waited for the children"
    );
    let pids = wait_for_pids(&pid_file, 3).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let alive: Vec<i32> = pids.into_iter().filter(|p| process_alive(*p)).collect();
    assert!(alive.is_empty(), "still running after the timeout: {alive:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_output_is_saved_whole_to_a_temp_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = tool("bash", dir.path())
        .execute(
            "c",
            json!({"command": "seq 1 3000"}),
            CancellationToken::new(),
            no_updates(),
        )
        .await
        .expect("bash");
    let details = out.details.expect("details");
    let path = details["fullOutputPath"].as_str().expect("path").to_string();
    let text = out.content[0].as_text().expect("text").to_string();
    assert!(text.ends_with(&format!("\n\n[Showing lines 1001-3000 of 3000. Full output: {path}]")));
    let saved = std::fs::read_to_string(&path).expect("saved");
    assert_eq!(saved.lines().count(), 3000);
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    let _ = std::fs::remove_file(path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_settings_apply() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = ToolsOptions {
        command_prefix: Some("GREETING=hi".into()),
        ..Default::default()
    };
    let bash = create_tool("bash", dir.path(), &opts).expect("bash");
    let out = run(bash.as_ref(), json!({"command": "echo $GREETING"})).await;
    assert_eq!(text(&out), "hi\n");
    let opts = ToolsOptions {
        shell_path: Some("/no/such/shell".into()),
        ..Default::default()
    };
    let bash = create_tool("bash", dir.path(), &opts).expect("bash");
    let out = run(bash.as_ref(), json!({"command": "true"})).await;
    assert_eq!(text(&out), "Custom shell path not found: /no/such/shell");
    // The configured shell is invoked as `<shell> -c <command>`.
    let shell = dir.path().join("my-shell");
    std::fs::write(&shell, "#!/bin/sh\necho \"my-shell $1 [$2]\"\n").expect("write");
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let opts = ToolsOptions {
        shell_path: Some(shell),
        ..Default::default()
    };
    let custom = create_tool("bash", dir.path(), &opts).expect("bash");
    let out = run(custom.as_ref(), json!({"command": "ls -l"})).await;
    assert_eq!(text(&out), "my-shell -c [ls -l]\n");
    let gone = dir.path().join("gone");
    let bash = create_tool("bash", &gone, &ToolsOptions::default()).expect("bash");
    let out = run(bash.as_ref(), json!({"command": "true"})).await;
    assert_eq!(
        text(&out),
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            gone.display()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_file_edits_apply_in_request_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("f.txt"), "a\n").expect("write");
    let write = tool("write", dir.path());
    let edit = tool("edit", dir.path());
    let (w, e) = tokio::join!(
        run(write.as_ref(), json!({"path": "f.txt", "content": "first\n"})),
        run(
            edit.as_ref(),
            json!({"path": "f.txt", "edits": [{"oldText": "first", "newText": "second"}]})
        ),
    );
    assert_eq!(w["isError"], false);
    assert_eq!(e["isError"], false, "{e}");
    let content = std::fs::read_to_string(dir.path().join("f.txt")).expect("read");
    assert_eq!(content, "second\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_tools_report_operation_aborted() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("f.txt"), "a\n").expect("write");
    for (name, args) in [
        ("read", json!({"path": "f.txt"})),
        ("write", json!({"path": "g.txt", "content": "x"})),
        (
            "edit",
            json!({"path": "f.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
        ),
        ("grep", json!({"pattern": "a"})),
        ("find", json!({"pattern": "*"})),
        ("ls", json!({})),
    ] {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let err = tool(name, dir.path())
            .execute("c", args, cancel, no_updates())
            .await
            .expect_err("aborted");
        assert_eq!(err.message, "Operation aborted", "{name}");
    }
    assert!(!dir.path().join("g.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_images_are_resized_with_a_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image::DynamicImage::new_rgb8(3000, 1500);
    // The extension says text; the magic bytes decide.
    img.save_with_format(dir.path().join("shot.txt"), image::ImageFormat::Png)
        .expect("save");
    let out = run(tool("read", dir.path()).as_ref(), json!({"path": "shot.txt"})).await;
    assert_eq!(out["isError"], false);
    let note = text(&out);
    assert!(note.starts_with("Read image file [image/"), "{note}");
    assert!(note.ends_with(
        "[Image: original 3000x1500, displayed at 2000x1000. Multiply coordinates by 1.50 to map to original image.]"
    ));
    assert_eq!(out["content"][1]["type"], "image");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_files_give_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("blob.bin"), b"\x7fELF\x02\x01\x00\x00junk").expect("write");
    let out = run(tool("read", dir.path()).as_ref(), json!({"path": "blob.bin"})).await;
    assert_eq!(out["isError"], true);
    assert!(text(&out).starts_with("Cannot read binary file: "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitignore_is_honoured_inside_a_repository() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).expect("git");
    std::fs::create_dir_all(root.join("target")).expect("mkdir");
    std::fs::write(root.join(".gitignore"), "target/\n").expect("write");
    std::fs::write(root.join("target/out.rs"), "needle\n").expect("write");
    std::fs::write(root.join("lib.rs"), "needle\n").expect("write");
    let out = run(tool("grep", root).as_ref(), json!({"pattern": "needle"})).await;
    assert_eq!(text(&out), "lib.rs:1: needle");
    let out = run(tool("find", root).as_ref(), json!({"pattern": "*.rs"})).await;
    assert_eq!(text(&out), "lib.rs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_running_command_kills_its_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("child.pid");
    let command = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
    let task = tokio::spawn({
        let t = tool("bash", dir.path());
        async move {
            t.execute(
                "c",
                json!({ "command": command }),
                CancellationToken::new(),
                no_updates(),
            )
            .await
        }
    });
    let mut child_pid = None;
    for _ in 0..100 {
        if let Some(p) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
        {
            child_pid = Some(p);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let child_pid = child_pid.expect("background child started");
    task.abort();
    let _ = task.await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!process_alive(child_pid), "grandchild outlived the dropped run");
}

// ---- rules that changed in pi 1.6 ------------------------------------------------------------

fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_globs_are_relative_to_the_searched_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    write_files(
        cwd,
        &[
            ("src/a.ts", "needle\n"),
            ("pkg/src/b.ts", "needle\n"),
            ("pkg/c.ts", "needle\n"),
        ],
    );
    let grep = tool("grep", cwd);
    // Relative to `path`, not to the working directory.
    for glob in ["src/*.ts", "./src/*.ts"] {
        let r = run(grep.as_ref(), json!({"pattern": "needle", "path": "pkg", "glob": glob})).await;
        assert_eq!(text(&r), "src/b.ts:1: needle", "glob {glob}");
    }
    let r = run(grep.as_ref(), json!({"pattern": "needle", "glob": "src/*.ts"})).await;
    assert_eq!(text(&r), "src/a.ts:1: needle");
    // Without a slash it matches names at any depth.
    let r = run(grep.as_ref(), json!({"pattern": "needle", "glob": "*.ts"})).await;
    assert_eq!(unordered(&text(&r)).0.len(), 3, "{}", text(&r));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_and_find_note_the_limit_only_when_more_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    write_files(cwd, &[("a.txt", "x\nx\n"), ("b.md", ""), ("c.md", "")]);
    let grep = tool("grep", cwd);
    let r = run(grep.as_ref(), json!({"pattern": "x", "path": "a.txt", "limit": 2})).await;
    assert_eq!(
        r,
        json!({"isError": false, "content": [{"type": "text", "text": "a.txt:1: x\na.txt:2: x"}]})
    );
    let r = run(grep.as_ref(), json!({"pattern": "x", "path": "a.txt", "limit": 1})).await;
    assert_eq!(
        text(&r),
        "a.txt:1: x\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
    );
    assert_eq!(r["details"]["matchLimitReached"], 1);

    let find = tool("find", cwd);
    let r = run(find.as_ref(), json!({"pattern": "*.md", "limit": 2})).await;
    assert_eq!(
        r,
        json!({"isError": false, "content": [{"type": "text", "text": "b.md\nc.md"}]})
    );
    // A limit below 1 means 1.
    let r = run(find.as_ref(), json!({"pattern": "*.md", "limit": 0})).await;
    assert_eq!(
        text(&r),
        "b.md\n\n[1 results limit reached. Use limit=2 for more, or refine pattern]"
    );
    let ls = tool("ls", cwd);
    let r = run(ls.as_ref(), json!({"limit": 0})).await;
    assert!(
        text(&r).starts_with("a.txt\n\n[1 entries limit reached"),
        "{}",
        text(&r)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_path_patterns_are_anchored_at_the_search_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    write_files(
        cwd,
        &[
            ("src/a.ts", ""),
            ("pkg/src/b.ts", ""),
            ("src/deep/c.ts", ""),
            ("we[i]rd/src/d.ts", ""),
        ],
    );
    let find = tool("find", cwd);
    let found = |r: &Value| {
        let mut lines: Vec<String> = text(r).lines().map(String::from).collect();
        lines.sort();
        lines
    };
    let r = run(find.as_ref(), json!({"pattern": "src/*.ts"})).await;
    assert_eq!(found(&r), ["src/a.ts"]);
    let r = run(find.as_ref(), json!({"pattern": "./src/*.ts"})).await;
    assert_eq!(found(&r), ["src/a.ts"]);
    let r = run(find.as_ref(), json!({"pattern": "**/src/*.ts"})).await;
    assert_eq!(found(&r), ["pkg/src/b.ts", "src/a.ts", "we[i]rd/src/d.ts"]);
    let r = run(find.as_ref(), json!({"pattern": "src/*.ts", "path": "pkg"})).await;
    assert_eq!(found(&r), ["src/b.ts"]);
    // The search path is taken literally, glob characters and all.
    let r = run(find.as_ref(), json!({"pattern": "src/*.ts", "path": "we[i]rd"})).await;
    assert_eq!(found(&r), ["src/d.ts"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_rejects_timeouts_it_cannot_honour() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bash = tool("bash", dir.path());
    for t in [json!(0), json!(-1)] {
        let r = run(bash.as_ref(), json!({"command": "echo no", "timeout": t})).await;
        assert_eq!(
            r,
            json!({"isError": true, "content": [{"type": "text", "text": "Invalid timeout: must be a finite number of seconds"}]})
        );
    }
    let r = run(bash.as_ref(), json!({"command": "echo no", "timeout": 2_147_484})).await;
    assert_eq!(text(&r), "Invalid timeout: maximum is 2147483.647 seconds");
    let r = run(bash.as_ref(), json!({"command": "echo yes", "timeout": 2_147_483})).await;
    assert_eq!(text(&r), "yes\n");
    let r = run(bash.as_ref(), json!({"command": "echo before; kill -9 $$"})).await;
    assert_eq!(text(&r), "before\n\n\nCommand terminated without an exit code");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_accepts_extra_fields_and_a_single_edit_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    write_files(cwd, &[("f.txt", "one\ntwo\n")]);
    let edit = tool("edit", cwd);
    let r = run(
        edit.as_ref(),
        json!({"path": "f.txt", "edits": {"oldText": "one", "newText": "1", "note": "why"}, "reason": "x"}),
    )
    .await;
    assert_eq!(text(&r), "Successfully replaced 1 block(s) in f.txt.");
    assert_eq!(
        r["details"]["patch"],
        "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n two\n"
    );
    let r = run(
        edit.as_ref(),
        json!({"path": "f.txt", "edits": [{"oldText": "two", "newText": "2", "extra": true}]}),
    )
    .await;
    assert_eq!(text(&r), "Successfully replaced 1 block(s) in f.txt.");
    assert_eq!(std::fs::read_to_string(cwd.join("f.txt")).expect("read"), "1\n2\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_and_bash_give_structured_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    write_files(cwd, &[("a.txt", "hi\n")]);
    let exec = |name: &'static str, args: Value| {
        let t = tool(name, cwd);
        async move {
            let args = t.prepare_arguments(args);
            t.execute("c", args, CancellationToken::new(), no_updates())
                .await
                .expect("result")
        }
    };
    let out = exec("read", json!({"path": "a.txt"})).await;
    assert_eq!(out.structured_content, Some(json!("hi\n")));
    assert!(!out.is_error);
    // A non-zero exit is a returned error result that still carries the output.
    let out = exec("bash", json!({"command": "echo failing; exit 3"})).await;
    assert!(out.is_error);
    assert_eq!(
        out.content[0].as_text(),
        Some("failing\n\n\nCommand exited with code 3")
    );
    assert_eq!(out.details, None);
    let s = out.structured_content.expect("structured");
    assert_eq!(
        (s["output"].clone(), s["truncated"].clone(), s["exit_code"].clone()),
        (json!("failing\n"), json!(false), json!(3))
    );
    assert!(s["wall_time_seconds"].is_number() && s.get("full_output_path").is_none());
    let out = exec("bash", json!({"command": "true"})).await;
    assert_eq!(out.structured_content.expect("structured")["output"], "");
    // Output past the model's limit is still whole here, with the file it was saved to.
    let out = exec("bash", json!({"command": "seq 1 3000"})).await;
    let s = out.structured_content.expect("structured");
    assert_eq!(s["output"].as_str().map(|o| o.lines().count()), Some(3000));
    assert_eq!(s["truncated"], false);
    if let Some(path) = out.details.as_ref().and_then(|d| d["fullOutputPath"].as_str()) {
        let _ = std::fs::remove_file(path);
    }
}
