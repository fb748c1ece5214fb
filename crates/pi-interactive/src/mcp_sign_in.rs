//! The sign-in screen of `/mcp` (pi 1.6's layout): the flow's progress while it contacts the
//! authorization server or connects, and once the authorization URL is known, the URL with
//! "Ctrl+click to open • ctrl+x to copy" under it and an input for the URL the browser was
//! redirected to. Enter hands that URL over, Esc cancels, the copy key asks for a copy
//! (read back with [`McpSignInView::take_copy`]; [`copy_url`] does it and reports on the hint).

use std::sync::{Arc, Mutex};

use pi_tui::components::{Input, InputFieldEvent};
use pi_tui::{hyperlink, keybindings, truncate_to_width, wrap_text, Component, Frame, InputEvent};

use super::dialogs::DialogResult;
use super::effect::{blocking, then, Effect};
use super::theme::UiTheme;

/// Where a sign-in is, as its screen shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    /// A line of progress ("Contacting the authorization server…", "Connecting…").
    Status(String),
    /// The authorization URL, waiting for the browser or a pasted redirect URL. `copied` is
    /// the outcome of the last copy (`Ok`, or the clipboard's error).
    Url {
        url: String,
        copied: Option<Result<(), String>>,
    },
}

/// The stage, shared by the flow (which moves it on) and the screen (which draws it).
pub type SharedStage = Arc<Mutex<Stage>>;

pub fn set_stage(stage: &SharedStage, next: Stage) {
    *stage.lock().unwrap_or_else(|p| p.into_inner()) = next;
}

fn read_stage(stage: &SharedStage) -> Stage {
    stage.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

pub struct McpSignInView {
    title: String,
    theme: Arc<UiTheme>,
    stage: SharedStage,
    input: Input,
    result: Option<DialogResult>,
    copy: Option<String>,
}

/// `keys what`, as 1.6's key hints read (`ctrl+x to copy`).
fn key_hint(theme: &UiTheme, id: &str, what: &str) -> String {
    let keys = keybindings().keys(id).join("/");
    format!(
        "{}{}",
        theme.paint("dim", &keys),
        theme.paint("muted", &format!(" {what}"))
    )
}

impl McpSignInView {
    pub fn new(title: String, theme: Arc<UiTheme>, stage: SharedStage) -> Self {
        McpSignInView {
            title,
            theme,
            stage,
            input: Input::new("> "),
            result: None,
            copy: None,
        }
    }

    pub fn stage(&self) -> SharedStage {
        Arc::clone(&self.stage)
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }

    /// The URL the copy key asked to copy, once.
    pub fn take_copy(&mut self) -> Option<String> {
        self.copy.take()
    }

    fn push_wrapped(&self, out: &mut Frame, text: &str, token: &str, width: usize) {
        for line in wrap_text(text, width.saturating_sub(2).max(1)) {
            out.push_line(format!(" {}", self.theme.paint(token, &line)));
        }
    }
}

impl Component for McpSignInView {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let border = t.paint("accent", &"─".repeat(width));
        out.push_line(border.clone());
        out.push_line(truncate_to_width(
            &format!(" {}", t.bold("accent", &self.title)),
            width,
            "…",
        ));
        out.push_line(String::new());
        let footer = match read_stage(&self.stage) {
            Stage::Status(text) => {
                self.push_wrapped(out, &text, "muted", width);
                key_hint(&t, "tui.select.cancel", "cancel")
            }
            Stage::Url { url, copied } => {
                self.push_wrapped(
                    out,
                    "Approve access in your browser. If it did not open, visit:",
                    "muted",
                    width,
                );
                // The whole URL, wrapped: a long one cannot be selected in one piece, which is
                // what the copy key is for.
                for line in wrap_text(&hyperlink(&url, &url), width.saturating_sub(2).max(1)) {
                    out.push_line(format!(" {}", t.paint("accent", &line)));
                }
                let suffix = match copied {
                    None => key_hint(&t, "app.message.copy", "to copy"),
                    Some(Ok(())) => t.paint("success", "Copied URL to clipboard"),
                    Some(Err(e)) => t.paint("error", &e),
                };
                out.push_line(truncate_to_width(
                    &format!(
                        " {} {} {suffix}",
                        t.paint("dim", &hyperlink("Ctrl+click to open", &url)),
                        t.paint("dim", "•")
                    ),
                    width,
                    "…",
                ));
                out.push_line(String::new());
                self.push_wrapped(
                    out,
                    "If the browser runs on another machine, paste the URL it was redirected to:",
                    "muted",
                    width,
                );
                let mut sub = Frame::default();
                self.input.render(width, &mut sub);
                for l in sub.to_vec() {
                    out.push_line(l);
                }
                format!(
                    "{} • {}",
                    key_hint(&t, "tui.select.confirm", "submit"),
                    key_hint(&t, "tui.select.cancel", "cancel")
                )
            }
        };
        out.push_line(String::new());
        out.push_line(truncate_to_width(&format!(" {footer}"), width, ""));
        out.push_line(border);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let kb = keybindings();
        let stage = read_stage(&self.stage);
        if let InputEvent::Key(k) = event {
            if kb.matches(k, "tui.select.cancel") {
                self.result = Some(DialogResult::Cancelled);
                return true;
            }
            let Stage::Url { url, .. } = &stage else {
                // Only Esc does something while the flow works.
                return true;
            };
            if kb.matches(k, "tui.select.confirm") {
                let value = self.input.value().trim().to_string();
                if !value.is_empty() {
                    self.result = Some(DialogResult::Done(value));
                }
                return true;
            }
            if kb.matches(k, "app.message.copy") {
                self.copy = Some(url.clone());
                return true;
            }
        }
        if !matches!(stage, Stage::Url { .. }) {
            return true;
        }
        // Typing and pastes go to the input; its own Enter/Esc were handled above.
        if let InputEvent::Key(k) = event {
            return !matches!(self.input.handle_key(k), InputFieldEvent::Ignored);
        }
        self.input.handle_input(event)
    }

    fn set_focused(&mut self, focused: bool) {
        self.input.set_focused(focused);
    }
}

/// Copy the sign-in URL: the clipboard tool, else OSC 52 (as the TUI's other copies), then
/// the screen's hint says how it went.
pub fn copy_url(url: String, stage: SharedStage) -> Effect {
    blocking(move || {
        let native = super::commands::copy_to_clipboard(&url);
        then(move |_| {
            // Without a clipboard tool the copy goes out as OSC 52, which cannot report
            // failure: once sent, the copy counts as done.
            let mut current = stage.lock().unwrap_or_else(|p| p.into_inner());
            if let Stage::Url { copied, .. } = &mut *current {
                *copied = Some(Ok(()));
            }
            drop(current);
            match native {
                Ok(()) if std::env::var("PI_CLIPBOARD_OSC52").is_ok_and(|v| v == "1") => vec![Effect::Copied {
                    text: url,
                    native: Ok(()),
                    status: None,
                }],
                Ok(()) => Vec::new(),
                Err(e) => vec![Effect::Copied {
                    text: url,
                    native: Err(e),
                    status: None,
                }],
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> InputEvent {
        InputEvent::Key(pi_tui::parse_key(s, false).expect("key"))
    }

    fn text(view: &mut McpSignInView) -> String {
        let mut frame = Frame::default();
        view.render(100, &mut frame);
        frame
            .to_vec()
            .iter()
            .map(|l| pi_tui::strip_ansi(l))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_url_stage_offers_the_copy_key_and_takes_a_pasted_redirect() {
        // The app's bindings (the copy key among them), as the terminal UI installs them.
        pi_tui::set_keybindings(super::super::keys::load_keybindings(std::path::Path::new("/nonexistent")).0);
        let stage: SharedStage = Arc::new(Mutex::new(Stage::Status("Contacting the authorization server…".into())));
        let mut view = McpSignInView::new("Sign in to secure".into(), Arc::new(UiTheme::fallback()), stage.clone());
        let shown = text(&mut view);
        assert!(shown.contains("Contacting the authorization server…"), "{shown}");
        assert!(
            shown.contains("escape/ctrl+c cancel") || shown.contains("cancel"),
            "{shown}"
        );
        // Nothing to copy or submit yet.
        view.handle_input(&key("\x18"));
        view.handle_input(&key("\r"));
        assert_eq!((view.take_copy(), view.take_result()), (None, None));

        let url = "http://127.0.0.1:9/authorize?client_id=abc&state=xyz";
        set_stage(
            &stage,
            Stage::Url {
                url: url.into(),
                copied: None,
            },
        );
        let shown = text(&mut view);
        assert!(shown.contains("Approve access in your browser. If it did not open, visit:"));
        assert!(shown.contains(url), "{shown}");
        assert!(shown.contains("Ctrl+click to open • ctrl+x to copy"), "{shown}");
        assert!(shown.contains("If the browser runs on another machine, paste the URL it was redirected to:"));
        assert!(shown.contains("enter submit • escape/ctrl+c cancel"), "{shown}");
        view.handle_input(&key("\x18"));
        assert_eq!(view.take_copy().as_deref(), Some(url));

        // An empty input is not submitted; a pasted URL is, trimmed.
        view.handle_input(&key("\r"));
        assert_eq!(view.take_result(), None);
        view.handle_input(&InputEvent::Paste(" http://127.0.0.1:1/callback?code=c ".into()));
        view.handle_input(&key("\r"));
        assert_eq!(
            view.take_result(),
            Some(DialogResult::Done("http://127.0.0.1:1/callback?code=c".into()))
        );

        set_stage(
            &stage,
            Stage::Url {
                url: url.into(),
                copied: Some(Ok(())),
            },
        );
        assert!(text(&mut view).contains("Ctrl+click to open • Copied URL to clipboard"));
        view.handle_input(&key("\x1b"));
        assert_eq!(view.take_result(), Some(DialogResult::Cancelled));
    }
}
