//! `/fork`'s chooser: the user messages of the active path, two rows each (the text, then its
//! place in the list), newest selected first, as pi 1.6 lays it out.

use std::sync::Arc;

use pi_tui::components::{SelectEvent, SelectItem, SelectList};
use pi_tui::{truncate_to_width, Component, Frame, InputEvent};

use super::dialogs::DialogResult;
use super::theme::UiTheme;

/// Messages shown at once.
const VISIBLE: usize = 10;

pub struct ForkSelector {
    /// Keeps the choice and handles the keys (wrapping arrows, paging); drawn here.
    list: SelectList,
    /// Each message's text on one line, by position.
    texts: Vec<String>,
    theme: Arc<UiTheme>,
    result: Option<DialogResult>,
}

impl ForkSelector {
    /// `messages` are `(entry id, text)` oldest first; the newest starts selected.
    pub fn new(messages: Vec<(String, String)>, theme: Arc<UiTheme>) -> Self {
        let texts = messages
            .iter()
            .map(|(_, t)| t.replace('\n', " ").trim().to_string())
            .collect::<Vec<_>>();
        let items = messages.into_iter().map(|(id, _)| SelectItem::new(id)).collect();
        let mut list = SelectList::new(items, VISIBLE, theme.select_list());
        list.set_selected_index(texts.len().saturating_sub(1));
        ForkSelector {
            list,
            texts,
            theme,
            result: None,
        }
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }
}

impl Component for ForkSelector {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = &self.theme;
        let border = t.paint("border", &"─".repeat(width));
        let bold = pi_tui::Style::new().bold();
        out.push_line(String::new());
        out.push_line(truncate_to_width(
            &format!(" {}", bold.paint("Fork from Message")),
            width,
            "",
        ));
        let about = "Select a user message to copy the active path up to that point into a new session";
        for line in pi_tui::wrap_text(about, width.saturating_sub(2).max(1)) {
            out.push_line(format!(" {}", t.paint("muted", &line)));
        }
        out.push_line(String::new());
        out.push_line(border.clone());
        out.push_line(String::new());
        let n = self.texts.len();
        let selected = self.list.selected_index();
        let start = selected.saturating_sub(VISIBLE / 2).min(n.saturating_sub(VISIBLE));
        let end = (start + VISIBLE).min(n);
        for (i, text) in self.texts.iter().enumerate().take(end).skip(start) {
            let shown = truncate_to_width(text, width.saturating_sub(2), "...");
            if i == selected {
                out.push_line(format!("{}{}", t.paint("accent", "› "), bold.paint(&shown)));
            } else {
                out.push_line(format!("  {shown}"));
            }
            out.push_line(t.paint("muted", &format!("  Message {} of {n}", i + 1)));
            out.push_line(String::new());
        }
        if start > 0 || end < n {
            out.push_line(t.paint("muted", &format!("  ({}/{n})", selected + 1)));
        }
        out.push_line(String::new());
        out.push_line(border);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        match self.list.handle_key(k) {
            SelectEvent::Selected(item) => self.result = Some(DialogResult::Done(item.value)),
            SelectEvent::Cancelled => self.result = Some(DialogResult::Cancelled),
            SelectEvent::Ignored => return false,
            _ => {}
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> InputEvent {
        InputEvent::Key(pi_tui::parse_key(s, false).expect("key"))
    }

    fn messages(n: usize) -> Vec<(String, String)> {
        (1..=n).map(|i| (format!("e{i}"), format!("message {i}"))).collect()
    }

    #[test]
    fn the_newest_message_starts_selected_and_arrows_wrap() {
        let mut f = ForkSelector::new(messages(3), Arc::new(UiTheme::fallback()));
        let mut frame = Frame::default();
        f.render(60, &mut frame);
        let rows: Vec<String> = frame.to_vec().iter().map(|l| pi_tui::strip_ansi(l)).collect();
        assert!(rows.contains(&"› message 3".to_string()), "{rows:#?}");
        assert!(rows.contains(&"  Message 1 of 3".to_string()), "{rows:#?}");
        f.handle_input(&key("\x1b[B"));
        f.handle_input(&key("\r"));
        assert_eq!(f.take_result(), Some(DialogResult::Done("e1".into())));
    }

    #[test]
    fn a_long_list_shows_its_position() {
        let mut f = ForkSelector::new(messages(14), Arc::new(UiTheme::fallback()));
        let mut frame = Frame::default();
        f.render(60, &mut frame);
        let rows: Vec<String> = frame.to_vec().iter().map(|l| pi_tui::strip_ansi(l)).collect();
        assert!(rows.contains(&"  (14/14)".to_string()), "{rows:#?}");
        assert!(!rows.iter().any(|r| r.ends_with("message 4")), "{rows:#?}");
    }
}
