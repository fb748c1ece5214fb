//! Measures loading a 5,000-message session (about 3.5 MB) and rebuilding its context.
//!
//! `cargo run -p pi-session --example session_load [--release] [-- <file.jsonl>]`: without a
//! file, one is generated in a temporary directory. Prints the file size and the best and
//! median time of open + build_context over 30 runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_ai::{AssistantMessage, Content, Message, StopReason, ToolCall, ToolResultMessage, Usage};
use pi_session::SessionManager;

fn filler(n: usize, seed: usize) -> String {
    const WORDS: [&str; 8] = ["session", "tree", "branch", "entry", "context", "model", "file", "leaf"];
    let mut s = String::with_capacity(n + 8);
    let mut i = seed;
    while s.len() < n {
        s.push_str(WORDS[i % WORDS.len()]);
        s.push(' ');
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    s
}

fn generate(dir: &std::path::Path) -> PathBuf {
    let mut sm = SessionManager::create(dir, "/bench/project");
    sm.append_model_change("mock", "mock-model").ok();
    sm.append_thinking_level_change("off").ok();
    let mut messages = 0;
    let mut turn = 0;
    while messages < 5000 {
        turn += 1;
        sm.append_message(Message::user_text(filler(250, turn))).ok();
        let call = ToolCall {
            id: format!("call_{turn}"),
            name: "read".into(),
            arguments: serde_json::json!({ "path": format!("src/file_{turn}.rs"), "offset": 1 }),
            ..Default::default()
        };
        let tool_use = AssistantMessage {
            content: vec![Content::text(filler(170, turn + 1)), Content::ToolCall(call)],
            api: "openai-completions".into(),
            provider: "mock".into(),
            model: "mock-model".into(),
            usage: Usage {
                input: 1000,
                output: 50,
                total_tokens: 1050,
                ..Default::default()
            },
            stop_reason: StopReason::ToolUse,
            timestamp: pi_ai::now_ms(),
            ..Default::default()
        };
        sm.append_message(Message::Assistant(Arc::new(tool_use))).ok();
        sm.append_message(Message::ToolResult(Arc::new(ToolResultMessage {
            tool_call_id: format!("call_{turn}"),
            tool_name: "read".into(),
            content: vec![Content::text(filler(760, turn + 2))],
            is_error: false,
            timestamp: pi_ai::now_ms(),
            ..Default::default()
        })))
        .ok();
        let reply = AssistantMessage {
            content: vec![Content::text(filler(380, turn + 3))],
            api: "openai-completions".into(),
            provider: "mock".into(),
            model: "mock-model".into(),
            stop_reason: StopReason::Stop,
            timestamp: pi_ai::now_ms(),
            ..Default::default()
        };
        sm.append_message(Message::Assistant(Arc::new(reply))).ok();
        messages += 4;
    }
    sm.session_file().map(PathBuf::from).unwrap_or_default()
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("pi-session-bench-{}", std::process::id()));
    let file = match std::env::args().nth(1) {
        Some(f) => PathBuf::from(f),
        None => generate(&tmp),
    };
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    let mut times: Vec<Duration> = Vec::new();
    let mut loads: Vec<Duration> = Vec::new();
    let mut count = 0;
    for _ in 0..30 {
        let start = Instant::now();
        let sm = match SessionManager::open_read_only(&file) {
            Ok(sm) => sm,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        loads.push(start.elapsed());
        let ctx = sm.build_context();
        times.push(start.elapsed());
        count = ctx.messages.len();
    }
    times.sort();
    loads.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{} messages in context, {:.2} MB: open + build_context best {:.2} ms, median {:.2} ms \
         (open alone: best {:.2} ms)",
        count,
        size as f64 / 1e6,
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(loads[0]),
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
