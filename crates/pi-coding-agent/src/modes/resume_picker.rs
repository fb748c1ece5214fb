//! `pi -r` in print and JSON mode: choose one of the project's sessions in a small list on the
//! terminal before the mode starts (the interactive mode opens its own picker instead).

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use pi_tui::components::{SelectEvent, SelectItem, SelectList};
use pi_tui::{Component, Frame, InputEvent, InputParser, Terminal, Tui};

use crate::ui_theme::UiTheme;

/// What the user did with the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Session(PathBuf),
    /// Esc, Ctrl+C, or the end of input.
    Cancelled,
    /// The project has no saved sessions.
    NoSessions,
}

/// The list with a title line above it.
struct Screen {
    title: String,
    list: SelectList,
}

impl Component for Screen {
    fn render(&mut self, width: usize, out: &mut Frame) {
        out.push_line(pi_tui::truncate_to_width(&self.title, width, ""));
        self.list.render(width, out);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.list.handle_input(event)
    }
}

/// List rows for sessions (value = index into `infos`; label = name or first message).
pub(crate) fn session_rows(infos: &[pi_session::SessionInfo]) -> Vec<SelectItem> {
    infos
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let label = i.name.clone().unwrap_or_else(|| i.first_message.replace('\n', " "));
            SelectItem::new(k.to_string())
                .with_label(label)
                .with_description(format!("{} msgs", i.message_count))
        })
        .collect()
}

/// The sessions of `session_dir`, newest first, as list rows.
fn rows(session_dir: &Path) -> (Vec<PathBuf>, Vec<SelectItem>) {
    let infos = pi_session::list_sessions(session_dir);
    let paths = infos.iter().map(|i| i.path.clone()).collect();
    (paths, session_rows(&infos))
}

/// Show the sessions of `session_dir` and wait for a choice.
pub fn pick_session(session_dir: &Path) -> std::io::Result<Choice> {
    let (paths, items) = rows(session_dir);
    if items.is_empty() {
        return Ok(Choice::NoSessions);
    }
    let theme = UiTheme::fallback();
    let mut screen = Screen {
        title: format!(
            "{}  {}",
            theme.paint("accent", "Resume Session (Current Folder)"),
            theme.paint("dim", "↑/↓ move · enter open · esc cancel")
        ),
        list: SelectList::new(items, 10, theme.select_list()),
    };
    let mut term = Terminal::start()?;
    let (tx, rx) = mpsc::channel::<Option<Vec<u8>>>();
    let tx_eof = tx.clone();
    let _ = pi_tui::spawn_stdin_reader(
        move |bytes| tx.send(Some(bytes.to_vec())).is_ok(),
        move || {
            let _ = tx_eof.send(None);
        },
    );
    let (w, h) = term.size();
    let mut tui = Tui::new(w, h);
    let mut parser = InputParser::new();
    let choice = loop {
        tui.render(&mut screen, &mut term)?;
        let Ok(Some(bytes)) = rx.recv() else {
            break Choice::Cancelled;
        };
        let mut picked = None;
        for event in parser.feed(&bytes).iter().chain(parser.flush().iter()) {
            if matches!(event, InputEvent::Key(k) if k.matches("ctrl+c")) {
                picked = Some(Choice::Cancelled);
                break;
            }
            screen.handle_input(event);
            match screen.list.take_event() {
                Some(SelectEvent::Selected(item)) => {
                    let path = item.value.parse::<usize>().ok().and_then(|i| paths.get(i).cloned());
                    picked = Some(path.map_or(Choice::Cancelled, Choice::Session));
                    break;
                }
                Some(SelectEvent::Cancelled) => {
                    picked = Some(Choice::Cancelled);
                    break;
                }
                _ => {}
            }
        }
        if let Some(choice) = picked {
            break choice;
        }
    };
    let _ = tui.finish(&mut term);
    let _ = term.stop();
    Ok(choice)
}
