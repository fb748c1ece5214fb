//! A multi-line text dialog as pi 1.6's editor dialog draws it (`/bug`'s description): a
//! title, a description, an editor where Enter submits and Shift+Enter starts a new line
//! (Ctrl+G hands the text to the external editor), and the keys.

use std::sync::Arc;

use pi_tui::components::{Editor, EditorEvent};
use pi_tui::{keybindings, wrap_text, Component, Frame, InputEvent};

use super::dialogs::DialogResult;
use super::theme::UiTheme;

pub struct TextDialog {
    title: String,
    description: String,
    editor: Editor,
    theme: Arc<UiTheme>,
    result: Option<DialogResult>,
    /// Why the external editor left the text as it was (shown under the editor).
    problem: Option<String>,
}

impl TextDialog {
    pub fn new(title: &str, description: &str, prefill: &str, theme: Arc<UiTheme>) -> Self {
        let mut editor = Editor::new(theme.editor("borderMuted"));
        editor.set_text(prefill);
        TextDialog {
            title: title.to_string(),
            description: description.to_string(),
            editor,
            theme,
            result: None,
            problem: None,
        }
    }

    /// The text typed so far (paste markers expanded).
    pub fn text(&self) -> String {
        self.editor.expanded_text()
    }

    /// The text the external editor saved.
    pub fn set_text(&mut self, text: &str) {
        self.editor.set_text(text);
        self.problem = None;
    }

    /// Say (or stop saying) why the external editor left the text as it was.
    pub fn set_problem(&mut self, problem: Option<String>) {
        self.problem = problem;
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }
}

impl Component for TextDialog {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let border = t.paint("border", &"─".repeat(width));
        let text = |s: &str, token: &str, out: &mut Frame| {
            for l in s.lines() {
                for w in wrap_text(l, width.saturating_sub(2).max(1)) {
                    out.push_line(format!(" {}", t.paint(token, &w)));
                }
            }
        };
        out.push_line(border.clone());
        out.push_line(String::new());
        text(&self.title, "accent", out);
        if !self.description.is_empty() {
            out.push_line(String::new());
            text(&self.description, "text", out);
        }
        out.push_line(String::new());
        self.editor.render(width, out);
        if let Some(problem) = &self.problem {
            text(problem, "warning", out);
        }
        out.push_line(String::new());
        let kb = keybindings();
        let hint = |id: &str, what: &str| {
            format!(
                "{}{}",
                t.paint("dim", &kb.keys(id).join("/")),
                t.paint("muted", &format!(" {what}"))
            )
        };
        out.push_line(format!(
            " {}  {}  {}  {}",
            hint("tui.select.confirm", "submit"),
            hint("tui.input.newLine", "newline"),
            hint("tui.select.cancel", "cancel"),
            hint("app.editor.external", "external editor"),
        ));
        out.push_line(String::new());
        out.push_line(border);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else {
            return self.editor.handle_input(event);
        };
        if keybindings().matches(k, "tui.select.cancel") {
            self.result = Some(DialogResult::Cancelled);
            return true;
        }
        // Enter submits what is there, an empty text included (the description is optional).
        if keybindings().matches(k, "tui.input.submit") && !self.editor.is_showing_autocomplete() {
            self.result = Some(DialogResult::Done(self.editor.expanded_text()));
            return true;
        }
        if let EditorEvent::Submit(text) = self.editor.handle_key(k) {
            self.result = Some(DialogResult::Done(text));
        }
        true
    }

    fn set_focused(&mut self, focused: bool) {
        self.editor.set_focused(focused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_enter_adds_a_line_and_enter_submits_both() {
        let mut d = TextDialog::new(
            "Report a bug",
            "What went wrong? (optional)",
            "",
            Arc::new(UiTheme::fallback()),
        );
        let key =
            |d: &mut TextDialog, s: &str| d.handle_input(&InputEvent::Key(pi_tui::parse_key(s, false).expect("key")));
        for s in ["a", "\x1b[13;2u", "b"] {
            key(&mut d, s);
        }
        let mut f = Frame::default();
        d.render(60, &mut f);
        let shown = pi_tui::strip_ansi(&f.to_vec().join("\n"));
        assert!(
            shown.contains(" Report a bug") && shown.contains("What went wrong?"),
            "{shown}"
        );
        assert!(
            shown.contains("enter submit  shift+enter/ctrl+j newline  escape/ctrl+c cancel")
                && shown.contains(" external editor"),
            "{shown}"
        );
        key(&mut d, "\r");
        assert_eq!(d.take_result(), Some(DialogResult::Done("a\nb".into())));
    }
}
