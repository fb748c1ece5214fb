//! The question asked when a session's recorded folder is gone: continue it in the current
//! folder, fork it there, or cancel. In the running UI (`/resume`, `/import`) it is a
//! dialog; at startup (`--session`) it is asked on the normal screen before the UI starts.

use std::path::Path;

use pi_coding_agent::modes::MissingCwdChoice;
use pi_tui::components::{SelectItem, SelectList};
use pi_tui::{Component, Frame, InputEvent};

use super::theme::UiTheme;

/// The question's title.
pub fn title(gone: &str) -> String {
    format!("Session cwd does not exist: {gone}")
}

/// The choices, in pi 1.6's order and words, for running in `here`.
pub fn choices(here: &str) -> Vec<SelectItem> {
    vec![
        SelectItem::new("continue").with_label(format!("Continue in {here} (asks again next time)")),
        SelectItem::new("fork").with_label(format!("Fork into {here} (new session ID, original kept)")),
        SelectItem::new("cancel").with_label("Cancel"),
    ]
}

/// What a chosen value means (anything else, Escape included: cancel).
pub fn choice_for(value: Option<&str>) -> MissingCwdChoice {
    match value {
        Some("continue") => MissingCwdChoice::Continue,
        Some("fork") => MissingCwdChoice::Fork,
        _ => MissingCwdChoice::Cancel,
    }
}

/// Drawn as pi 1.6's startup selector: between rules, the question in bold, the choices,
/// then the keys.
struct StartupQuestion {
    title: String,
    list: SelectList,
    theme: UiTheme,
}

impl Component for StartupQuestion {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = &self.theme;
        let rule = t.paint("border", &"─".repeat(width));
        let inner = width.saturating_sub(2).max(1);
        out.push_line(rule.clone());
        out.push_line(String::new());
        for w in pi_tui::wrap_text(&self.title, inner) {
            out.push_line(format!(" {}", t.bold("text", &w)));
        }
        out.push_line(String::new());
        let mut list = Frame::default();
        self.list.render(inner, &mut list);
        for l in list.to_vec() {
            out.push_line(format!(" {l}"));
        }
        out.push_line(String::new());
        let kb = pi_tui::keybindings();
        let keys = [
            "↑↓ navigate".to_string(),
            format!("{} select", kb.keys("tui.select.confirm").join("/")),
            format!("{} cancel", kb.keys("tui.select.cancel").join("/")),
        ]
        .map(|k| t.paint("dim", &k))
        .join("  ");
        out.push_line(pi_tui::truncate_to_width(&format!(" {keys}"), width, ""));
        out.push_line(String::new());
        out.push_line(rule);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.list.handle_input(event)
    }
}

/// Ask on the terminal before the UI starts.
pub fn ask(gone: &Path, here: &Path, theme: &UiTheme) -> std::io::Result<MissingCwdChoice> {
    let mut question = StartupQuestion {
        title: title(&gone.display().to_string()),
        list: SelectList::new(choices(&here.display().to_string()), 8, theme.select_list()),
        theme: theme.clone(),
    };
    let value = super::trust_prompt::run_on_screen(&mut question, |q| &mut q.list)?;
    Ok(choice_for(value.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choices_say_what_they_do_and_escape_cancels() {
        let labels: Vec<String> = choices("/work/proj").into_iter().filter_map(|i| i.label).collect();
        assert_eq!(
            labels,
            [
                "Continue in /work/proj (asks again next time)",
                "Fork into /work/proj (new session ID, original kept)",
                "Cancel"
            ]
        );
        assert_eq!(choice_for(Some("continue")), MissingCwdChoice::Continue);
        assert_eq!(choice_for(Some("fork")), MissingCwdChoice::Fork);
        assert_eq!(choice_for(None), MissingCwdChoice::Cancel);
    }
}
