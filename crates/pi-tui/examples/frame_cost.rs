//! Prints the cost of a first frame, of adding 10,000 markdown messages, and of a keystroke
//! with that history (`cargo run -p pi-tui --example frame_cost`).

use std::sync::Arc;
use std::time::Instant;

use pi_tui::components::{Editor, EditorTheme, Markdown, MarkdownTheme};
use pi_tui::{Component, Container, Frame, InputParser, Tui};

struct App {
    chat: Container,
    editor: Editor,
}

impl Component for App {
    fn render(&mut self, width: usize, out: &mut Frame) {
        self.chat.render(width, out);
        self.editor.render(width, out);
    }
}

fn main() -> std::io::Result<()> {
    let t0 = Instant::now();
    let mut app = App {
        chat: Container::new(),
        editor: Editor::new(EditorTheme::default()),
    };
    let mut tui = Tui::new(120, 40);
    let mut sink = Vec::new();
    tui.render(&mut app, &mut sink)?;
    println!("first frame (empty): {:?}", t0.elapsed());
    let theme = Arc::new(MarkdownTheme::default());
    for i in 0..10_000 {
        app.chat.push(Box::new(Markdown::new(
            format!("Message **{i}** with some `code` and a [link](http://x.io/{i}).\n\n- item one\n- item two"),
            theme.clone(),
        )));
    }
    let t = Instant::now();
    tui.render(&mut app, &mut sink)?;
    println!(
        "frame with 10k new messages: {:?} ({} lines)",
        t.elapsed(),
        tui.renderer().previous().len()
    );
    let mut parser = InputParser::new();
    let mut times = Vec::new();
    for c in "hello world typing test".bytes() {
        let t = Instant::now();
        for ev in parser.feed(&[c]) {
            tui.handle_input(&ev, &mut app.editor);
        }
        let mut out = Vec::new();
        tui.render(&mut app, &mut out)?;
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "keystroke-to-frame with 10k messages: median {:?}, worst {:?}",
        times[times.len() / 2],
        times[times.len() - 1]
    );
    Ok(())
}
