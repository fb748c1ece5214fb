//! Snapshots of the interactive mode's blocks (as plain text), and the whole screen drawn
//! through the renderer into a vt100 emulator.

use std::collections::HashMap;
use std::sync::Arc;

use pi_agent::AgentMessage;
use pi_ai::{AssistantMessage, Message};
use pi_interactive::{
    build_transcript, AssistantBlock, Footer, FooterData, Pending, ToolBlock, UiTheme, UserBlock, View,
};
use pi_tui::components::{Capabilities, Editor};
use pi_tui::{render_lines, strip_ansi, Component, Container, Tui};
use serde_json::json;

fn plain(c: &mut dyn Component, width: usize) -> Vec<String> {
    render_lines(c, width)
        .iter()
        .map(|l| strip_ansi(l).trim_end().to_string())
        .collect()
}

fn assistant(content: serde_json::Value, stop: &str) -> AssistantMessage {
    serde_json::from_value(json!({
        "role": "assistant", "content": content, "api": "openai-completions", "provider": "mock",
        "model": "mock-model", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
        "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": stop, "timestamp": 0
    }))
    .expect("assistant message")
}

#[test]
fn user_block_snapshot() {
    let theme = UiTheme::fallback();
    let mut b = UserBlock::new("Fix the *bug* please", &theme);
    assert_eq!(plain(&mut b, 30), vec!["", "", " Fix the bug please", ""]);
    // Every line of the block is painted on the user background, full width.
    let raw = render_lines(&mut b, 30);
    assert!(raw[2].contains("\x1b[48;"), "{:?}", raw[2]);
}

#[test]
fn assistant_block_snapshot_with_thinking_shown_and_hidden() {
    let theme = Arc::new(UiTheme::fallback());
    let m = assistant(
        json!([
            {"type": "thinking", "thinking": "Let me think."},
            {"type": "text", "text": "# Title\n\nSome `code`.\n\n1. one\n2. two"}
        ]),
        "stop",
    );
    let mut b = AssistantBlock::from_message(&m, theme.clone(), false);
    assert_eq!(
        plain(&mut b, 40),
        vec![
            "",
            " Let me think.",
            "",
            " Title",
            "",
            " Some code.",
            // The source has a blank line before the list; pi keeps it.
            "",
            " 1. one",
            " 2. two"
        ]
    );
    b.set_hide_thinking(true);
    assert_eq!(plain(&mut b, 40)[1], " Thinking...");

    let aborted = assistant(json!([{"type": "text", "text": "partial"}]), "aborted");
    let mut b = AssistantBlock::from_message(&aborted, theme, false);
    assert_eq!(plain(&mut b, 40), vec!["", " partial", "", " Operation aborted"]);
}

#[test]
fn streaming_deltas_build_the_reply() {
    let theme = Arc::new(UiTheme::fallback());
    let mut b = AssistantBlock::new(theme, false);
    assert!(plain(&mut b, 40).is_empty());
    b.append_text(0, "Hello ");
    b.append_text(0, "**world**");
    assert_eq!(plain(&mut b, 40), vec!["", " Hello world"]);
}

#[test]
fn tool_block_snapshot_pending_then_done() {
    let theme = Arc::new(UiTheme::fallback());
    let mut b = ToolBlock::new("c1", "grep", json!({"pattern": "fn main", "path": "src"}), theme, false);
    assert_eq!(plain(&mut b, 50), vec!["", "", " grep /fn main/ in src", ""]);
    b.finish("src/main.rs:1:fn main() {}".into(), false);
    assert_eq!(
        plain(&mut b, 50),
        vec!["", "", " grep /fn main/ in src", "", " src/main.rs:1:fn main() {}", ""]
    );
}

fn message(v: serde_json::Value) -> AgentMessage {
    AgentMessage::Llm(serde_json::from_value::<Message>(v).expect("message"))
}

#[test]
fn screen_bytes_through_a_terminal_emulator() {
    let theme = Arc::new(UiTheme::fallback());
    let history = vec![
        message(json!({"role": "user", "content": "list files", "timestamp": 0})),
        message(json!({"role": "assistant", "content": [
            {"type": "text", "text": "Listing."},
            {"type": "toolCall", "id": "t1", "name": "ls", "arguments": {"path": "."}}
        ], "api": "a", "provider": "p", "model": "m", "usage": {"input": 0, "output": 0, "cacheRead": 0,
           "cacheWrite": 0, "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": "toolUse", "timestamp": 0})),
        message(json!({"role": "toolResult", "toolCallId": "t1", "toolName": "ls",
            "content": [{"type": "text", "text": "Cargo.toml\nsrc/"}], "isError": false, "timestamp": 0})),
    ];
    let mut chat = Container::new();
    let mut tools = HashMap::new();
    build_transcript(
        &history,
        &mut chat,
        &mut tools,
        &theme,
        false,
        false,
        Capabilities::detect(),
        &HashMap::new(),
    );
    let mut footer = Footer::new(theme.clone());
    footer.set_data(FooterData {
        cwd: "~/proj".into(),
        model: Some("mock-model".into()),
        context_window: 128_000,
        ..Default::default()
    });
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
    let (w, h) = (50u16, 20u16);
    let mut tui = Tui::new(w as usize, h as usize);
    let mut bytes = Vec::new();
    tui.render(&mut view, &mut bytes).expect("render");
    let mut vt = vt100::Parser::new(h, w, 0);
    vt.process(&bytes);
    let screen: Vec<String> = vt.screen().rows(0, w).map(|r| r.trim_end().to_string()).collect();
    let expected_tail = [
        " list files",
        "",
        "",
        " Listing.",
        "",
        "",
        " ls .",
        "",
        " Cargo.toml",
        " src/",
        "",
        "",
        &"─".repeat(50),
        "",
        &"─".repeat(50),
        "~/proj",
    ];
    let start = screen
        .iter()
        .position(|l| l == " list files")
        .expect("user message on screen");
    assert_eq!(
        &screen[start..start + expected_tail.len()],
        &expected_tail[..],
        "{screen:#?}"
    );
    assert!(screen[start + expected_tail.len()].ends_with("mock-model"));

    // Typing redraws only the editor line.
    view.editor.insert_text("x");
    bytes.clear();
    tui.render(&mut view, &mut bytes).expect("render");
    let stats = tui.stats();
    assert!(!stats.full_redraw);
    assert_eq!(stats.lines_written, 1);
    vt.process(&bytes);
    assert!(vt.screen().contents().contains("\nx"));
}

#[test]
fn tool_images_fall_back_to_text_without_a_protocol() {
    use pi_tui::components::Capabilities;
    // A 1x1 PNG.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let history = vec![
        message(json!({"role": "assistant", "content": [
            {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a.png"}}
        ], "api": "a", "provider": "p", "model": "m", "usage": {"input": 0, "output": 0, "cacheRead": 0,
           "cacheWrite": 0, "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": "toolUse", "timestamp": 0})),
        message(json!({"role": "toolResult", "toolCallId": "t1", "toolName": "read",
            "content": [{"type": "text", "text": "Read image file [image/png]"},
                        {"type": "image", "data": png, "mimeType": "image/png"}], "isError": false, "timestamp": 0})),
    ];
    let theme = Arc::new(UiTheme::fallback());
    let mut chat = Container::new();
    let mut tools = HashMap::new();
    let caps = Capabilities {
        images: None,
        true_color: true,
        hyperlinks: false,
    };
    build_transcript(
        &history,
        &mut chat,
        &mut tools,
        &theme,
        false,
        false,
        caps,
        &HashMap::new(),
    );
    let text = plain(&mut chat, 60).join("\n");
    assert!(text.contains("image/png"), "{text}");
    assert!(text.contains("1x1"), "{text}");
}
