//! A minimal interactive loop: a transcript, the editor and a select overlay (Ctrl+L).
//! Enter submits into the transcript, Ctrl+C twice or Ctrl+D on an empty editor quits.
//! `cargo run -p pi-tui --example demo`

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use pi_tui::components::{
    Editor, EditorEvent, EditorTheme, Markdown, MarkdownTheme, SelectEvent, SelectItem, SelectList, SelectListTheme,
};
use pi_tui::{spawn_stdin_reader, Component, Container, Frame, InputEvent, InputParser, OverlayOptions, Terminal, Tui};

struct App {
    chat: Container,
    editor: Editor,
}

impl Component for App {
    fn render(&mut self, width: usize, out: &mut Frame) {
        self.chat.render(width, out);
        self.editor.render(width, out);
    }
    fn set_focused(&mut self, focused: bool) {
        self.editor.set_focused(focused);
    }
}

enum Msg {
    Bytes(Vec<u8>),
    Eof,
}

fn main() -> std::io::Result<()> {
    let mut term = Terminal::start()?;
    let (w, h) = term.size();
    let mut tui = Tui::new(w, h);
    let theme = Arc::new(MarkdownTheme::default());
    let mut app = App {
        chat: Container::new(),
        editor: Editor::new(EditorTheme::default()),
    };
    app.editor.set_terminal_rows(h);
    let (tx, rx) = mpsc::channel();
    let tx2 = tx.clone();
    spawn_stdin_reader(
        move |b| tx.send(Msg::Bytes(b.to_vec())).is_ok(),
        move || {
            let _ = tx2.send(Msg::Eof);
        },
    )?;
    let mut parser = InputParser::new();
    let mut overlay = None;
    tui.render(&mut app, &mut term)?;
    'outer: loop {
        let msg = match rx.recv_timeout(Duration::from_millis(150)) {
            Ok(m) => m,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if !term.kitty_active() {
                    term.enable_fallback_keys()?;
                }
                if parser.has_pending() {
                    Msg::Bytes(Vec::new())
                } else {
                    continue;
                }
            }
            Err(_) => break,
        };
        let events = match msg {
            Msg::Bytes(b) if b.is_empty() => parser.flush(),
            Msg::Bytes(b) => parser.feed(&b),
            Msg::Eof => break,
        };
        for ev in events {
            match &ev {
                InputEvent::KittyFlags(_) => {
                    term.enable_kitty()?;
                    parser.set_kitty_active(true);
                    continue;
                }
                InputEvent::Key(k) if k.matches("ctrl+c") && overlay.is_none() => break 'outer,
                InputEvent::Key(k) if k.matches("ctrl+d") && app.editor.is_empty() => break 'outer,
                InputEvent::Key(k) if k.matches("ctrl+l") && overlay.is_none() => {
                    let items = ["alpha", "beta", "gamma"].iter().map(|s| SelectItem::new(*s)).collect();
                    let list = SelectList::new(items, 5, SelectListTheme::default());
                    overlay = Some(tui.show_overlay(Box::new(list), OverlayOptions::default()));
                    continue;
                }
                _ => {}
            }
            tui.handle_input(&ev, &mut app);
            if let Some(id) = overlay {
                let event = tui.overlay_mut::<SelectList>(id).and_then(|l| l.take_event());
                match event {
                    Some(SelectEvent::Selected(item)) => {
                        app.editor.insert_text(&item.value);
                        tui.hide_overlay(id);
                        overlay = None;
                    }
                    Some(SelectEvent::Cancelled) => {
                        tui.hide_overlay(id);
                        overlay = None;
                    }
                    _ => {}
                }
            } else if let Some(EditorEvent::Submit(text)) = app.editor.take_event() {
                app.editor.add_to_history(&text);
                app.chat
                    .push(Box::new(Markdown::new(format!("> {text}\n"), theme.clone())));
            }
        }
        let (w, h) = term.size();
        if (w, h) != tui.size() {
            tui.set_size(w, h);
            app.editor.set_terminal_rows(h);
        }
        tui.render(&mut app, &mut term)?;
    }
    tui.finish(&mut term)?;
    term.disable_key_protocols()?;
    std::thread::sleep(Duration::from_millis(50));
    term.stop()
}
