//! Crash safety: a writer killed with SIGKILL at a random point of its stream of entry writes
//! (one run after another, each cut at a seeded random moment) leaves a file that loads every
//! complete entry, and the next session continues it.
//!
//! The writer is this test binary itself, started again with `PI_CRASH_WRITER` naming the file
//! (so the test needs no helper binary); the parent kills it after a seeded random delay.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use pi_agent::AgentMessage;
use pi_session::SessionManager;
use serde_json::json;

/// More than any run gets through before its kill (a run lasts at most about 65 ms).
const WRITES: usize = 1_000_000;

fn message(v: serde_json::Value) -> AgentMessage {
    serde_json::from_value(v).expect("message")
}

pub fn user_message(text: &str) -> AgentMessage {
    message(json!({"role": "user", "content": text, "timestamp": 1}))
}

pub fn assistant_message(text: &str) -> AgentMessage {
    message(json!({
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-completions", "provider": "p", "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 2
    }))
}

/// A user message and a reply: nothing is written to a session file before both exist.
pub fn first_exchange(store: &mut SessionManager) {
    store.append_message(user_message("start")).expect("user");
    store.append_message(assistant_message("ok")).expect("assistant");
}

/// The child: write entries into the session at `PI_CRASH_WRITER` until killed.
#[test]
fn crash_writer_child() {
    let Ok(path) = std::env::var("PI_CRASH_WRITER") else {
        return;
    };
    let mut store = SessionManager::open(&path).expect("open");
    if store.get_entries().is_empty() {
        first_exchange(&mut store);
    }
    for i in 0..WRITES {
        store
            .append_custom("crash-test", Some(json!({"i": i, "pad": "x".repeat(i % 300)})))
            .expect("append");
    }
    // Finished before the kill: signal it so the parent knows this run proved nothing new.
    std::fs::write(format!("{path}.done"), "").expect("done marker");
}

fn custom_indices(store: &SessionManager) -> Vec<u64> {
    store
        .get_entries()
        .iter()
        .filter_map(|e| serde_json::to_value(e).ok())
        .filter(|v| v["customType"] == "crash-test")
        .filter_map(|v| v["data"]["i"].as_u64())
        .collect()
}

fn start_writer(path: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "crash::crash_writer_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("PI_CRASH_WRITER", path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn writer")
}

#[test]
fn sigkill_mid_write_keeps_every_complete_entry_and_the_file_continues() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng: u64 = 0xc4a5_0000_0000_0009;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let runs: usize = std::env::var("PI_CRASH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let mut killed_mid_write = 0;
    for run in 0..runs {
        let path = dir.path().join(format!("s{run}.jsonl"));
        // A header-only file is a valid session to open.
        std::fs::write(
            &path,
            format!(
                "{}\n",
                json!({"type": "session", "version": 3, "id": format!("crash-{run}"),
                       "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"})
            ),
        )
        .expect("header");
        let mut child = start_writer(&path);
        std::thread::sleep(Duration::from_millis(5 + next() % 60));
        let _ = child.kill();
        let _ = child.wait();
        if !Path::new(&format!("{}.done", path.display())).exists() {
            killed_mid_write += 1;
        }

        let store = SessionManager::open(&path).expect("a killed writer's file opens");
        let written = custom_indices(&store);
        // Every complete entry is there, in order, with no gap: what is lost is at most the
        // line the kill cut short.
        assert!(
            written.iter().enumerate().all(|(k, i)| *i == k as u64),
            "run {run}: entries out of order or missing: {:?}",
            &written[..written.len().min(20)]
        );
        assert!(store.load_report().skipped.len() <= 1, "{:?}", store.load_report());
        drop(store);

        // The file continues: a new writer appends after whatever the kill left.
        let mut store = SessionManager::open(&path).expect("reopen");
        if store.get_entries().len() < 2 {
            // Killed before the first exchange was written: nothing is persisted until the
            // session holds a conversation, so start it again.
            first_exchange(&mut store);
        }
        let before = custom_indices(&store).len();
        store
            .append_custom("crash-test", Some(json!({"i": before})))
            .expect("append after the crash");
        drop(store);
        let store = SessionManager::open(&path).expect("reopen again");
        assert_eq!(custom_indices(&store).len(), before + 1, "run {run}");
    }
    // On a loaded machine a run may finish before its kill; most must be cut mid-write.
    assert!(
        killed_mid_write * 2 >= runs,
        "only {killed_mid_write} of {runs} runs were killed mid-write"
    );
}
