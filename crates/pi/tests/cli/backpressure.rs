//! `--mode json` into a slow pipe: a long reply's events (each carrying the whole partial
//! message, so the output grows with the square of the reply) are written with backpressure,
//! and pi's memory stays flat instead of buffering them.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pi_test_support::{Script, Turn};
use serde_json::Value;

use crate::harness::{pi_bin, Fixture, Mock};

/// Peak resident memory of a live process, in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct BigRun {
    bytes: u64,
    lines: u64,
    last_line: String,
    /// The line before the last (`agent_end`, before `agent_settled`).
    agent_end: String,
    peak_kib: u64,
}

/// Run a `tokens`-token reply in JSON mode, reading stdout slowly, and watch pi's memory.
fn run_big(tokens: usize) -> BigRun {
    let mock = Mock::start(Script::sequential(vec![Turn::big(tokens)]));
    let fx = Fixture::new(&mock);
    let mut child = Command::new(pi_bin())
        .args(["--mode", "json", "--no-session", "-p", "hello"])
        .current_dir(&fx.proj)
        .envs(fx.agent.env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        // A slow consumer: pauses after every 4 MiB, so pi keeps finding the pipe full.
        let mut reader = BufReader::with_capacity(64 * 1024, stdout);
        let (mut bytes, mut lines, mut since_pause) = (0u64, 0u64, 0u64);
        let mut line = Vec::new();
        let mut last = Vec::new();
        let mut before = Vec::new();
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).unwrap();
            if n == 0 {
                break;
            }
            bytes += n as u64;
            lines += 1;
            since_pause += n as u64;
            if since_pause > 4 << 20 {
                since_pause = 0;
                std::thread::sleep(Duration::from_millis(20));
            }
            std::mem::swap(&mut last, &mut line);
            std::mem::swap(&mut before, &mut line);
        }
        let mut rest = Vec::new();
        let _ = reader.read_to_end(&mut rest);
        (
            bytes,
            lines,
            String::from_utf8(last).unwrap(),
            String::from_utf8(before).unwrap(),
        )
    });
    let start = Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(kib) = vm_hwm_kib(pid) {
            peak = peak.max(kib);
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("pi did not finish a {tokens}-token reply within 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status:?}");
    let (bytes, lines, last_line, agent_end) = reader.join().unwrap();
    BigRun {
        bytes,
        lines,
        last_line,
        agent_end,
        peak_kib: peak,
    }
}

fn check_complete(run: &BigRun, tokens: usize) {
    let last: Value = serde_json::from_str(run.last_line.trim_end()).unwrap();
    assert_eq!(last["type"], "agent_settled");
    let last: Value = serde_json::from_str(run.agent_end.trim_end()).unwrap();
    assert_eq!(last["type"], "agent_end");
    let reply = last["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "assistant"))
        .and_then(|m| m["content"][0]["text"].as_str())
        .unwrap();
    assert!(reply.split_whitespace().count() >= tokens, "reply too short");
    assert!(run.lines as usize > tokens, "{} lines", run.lines);
}

#[test]
fn long_json_reply_into_a_slow_pipe_keeps_memory_flat() {
    let small = run_big(500);
    check_complete(&small, 500);
    let big = run_big(4000);
    check_complete(&big, 4000);
    // pi 1.6's updates carry deltas, so 8 times the tokens is about 8 times the output (0.73's
    // growing partials made it 64 times)...
    assert!(big.bytes > 6 * small.bytes, "{} vs {}", big.bytes, small.bytes);
    assert!(big.bytes < 12 * small.bytes, "{} vs {}", big.bytes, small.bytes);
    // ...in about the same memory.
    assert!(big.peak_kib < 200 * 1024, "peak {} KiB", big.peak_kib);
    assert!(
        big.peak_kib < small.peak_kib + 30 * 1024,
        "peak {} KiB vs {} KiB for the small reply",
        big.peak_kib,
        small.peak_kib
    );
}

/// The architecture's case: 20,000 tokens was about 2.6 GB of JSON lines with 0.73's growing
/// partials; with 1.6's delta updates it is a few megabytes (pi 1.6 writes about 6 MB).
#[test]
fn twenty_thousand_token_json_reply_completes_in_flat_memory() {
    let run = run_big(20_000);
    check_complete(&run, 20_000);
    assert!(run.bytes < 20 << 20, "{} bytes", run.bytes);
    assert!(run.peak_kib < 200 * 1024, "peak {} KiB", run.peak_kib);
}
