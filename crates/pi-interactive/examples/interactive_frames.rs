//! Times the interactive mode's render path: the first frame of an empty session, the first
//! frame of a 10,000-message session, and keystroke-to-frame with that history.
//! `cargo run -p pi-interactive --example interactive_frames`
#![allow(clippy::expect_used)] // a measuring tool on fixed inputs: a panic is a bug report

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_agent::AgentMessage;
use pi_ai::Message;
use pi_interactive::{build_transcript, Footer, FooterData, Pending, UiTheme, View};
use pi_tui::components::{Capabilities, Editor};
use pi_tui::{Container, InputEvent, InputParser, Tui};
use serde_json::json;

fn message(v: serde_json::Value) -> AgentMessage {
    AgentMessage::Llm(serde_json::from_value::<Message>(v).expect("message"))
}

fn history(n: usize) -> Vec<AgentMessage> {
    let usage = json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let mut out = Vec::with_capacity(n);
    for i in 0..n / 3 {
        out.push(message(
            json!({"role": "user", "content": format!("Question {i}: what does `f` do?"), "timestamp": 0}),
        ));
        out.push(message(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Answer **{i}**:\n\n- it reads\n- it writes\n\n```rust\nfn f() {{ {i} }}\n```")},
            {"type": "toolCall", "id": format!("c{i}"), "name": "read", "arguments": {"path": "src/lib.rs"}}
        ], "api": "openai-completions", "provider": "mock", "model": "m", "usage": usage,
           "stopReason": "toolUse", "timestamp": 0})));
        out.push(message(
            json!({"role": "toolResult", "toolCallId": format!("c{i}"), "toolName": "read",
            "content": [{"type": "text", "text": "line one\nline two\nline three"}], "isError": false, "timestamp": 0}),
        ));
    }
    out
}

fn screen(messages: &[AgentMessage], theme: &Arc<UiTheme>) -> View {
    let mut chat = Container::new();
    let mut tools = HashMap::new();
    build_transcript(
        messages,
        &mut chat,
        &mut tools,
        theme,
        false,
        false,
        Capabilities::detect(),
        &HashMap::new(),
    );
    let mut footer = Footer::new(theme.clone());
    footer.set_data(FooterData {
        cwd: "~/project".into(),
        model: Some("mock-model".into()),
        context_window: 128_000,
        ..Default::default()
    });
    let n = chat.len();
    let mut view = View {
        chat,
        pending: Pending::new(theme.clone(), "alt+up".into()),
        status: None,
        status_box: None,
        reloading: None,
        idle_status: false,
        editor: Editor::new(theme.editor("borderMuted")),
        footer,
        frozen: Default::default(),
        ext: pi_interactive::extension_ui::screen::ExtensionScreen::new(theme.clone()),
        live_starts: Vec::new(),
    };
    // As between runs: the whole transcript is finished.
    view.freeze(n);
    view
}

fn main() -> std::io::Result<()> {
    let t0 = Instant::now();
    let theme = Arc::new(UiTheme::fallback());
    let mut empty = screen(&[], &theme);
    let mut tui = Tui::new(120, 40);
    let mut sink = Vec::new();
    tui.render(&mut empty, &mut sink)?;
    println!("first frame, empty session: {:?}", t0.elapsed());

    let n = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let messages = history(n);
    let t = Instant::now();
    let mut big = screen(&messages, &theme);
    let mut tui = Tui::new(120, 40);
    tui.render(&mut big, &mut sink)?;
    println!("first frame, {} messages: {:?}", messages.len(), t.elapsed());

    let mut parser = InputParser::new();
    let mut times: Vec<Duration> = Vec::new();
    for (i, ch) in "the quick brown fox jumps over the lazy dog"
        .repeat(5)
        .chars()
        .enumerate()
    {
        let bytes = if i % 50 == 49 {
            "\x7f".to_string()
        } else {
            ch.to_string()
        };
        let events: Vec<InputEvent> = parser.feed(bytes.as_bytes());
        sink.clear();
        let t = Instant::now();
        for ev in &events {
            tui.handle_input(ev, &mut big);
        }
        tui.render(&mut big, &mut sink)?;
        times.push(t.elapsed());
    }
    assert!(!big.editor.is_empty(), "keys reached the editor");
    times.sort();
    let avg = times.iter().sum::<Duration>() / times.len() as u32;
    println!(
        "keystroke to frame with {} messages: avg {:?}, median {:?}, max {:?} ({} keys)",
        messages.len(),
        avg,
        times[times.len() / 2],
        times[times.len() - 1],
        times.len()
    );
    Ok(())
}
