//! `/trust`'s dialog as pi 1.6 lays it out: the folder, the saved decision (and where it
//! comes from) and this session's state, then the choices with the saved one ticked.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_tui::{keybindings, truncate_to_width, wrap_text, Component, Frame, InputEvent};

use super::dialogs::DialogResult;
use super::theme::UiTheme;

/// One choice: its label, the decision it makes, and the folder it is saved for.
pub struct TrustChoice {
    pub value: &'static str,
    pub label: String,
    pub trusted: bool,
    pub saved_path: PathBuf,
}

/// The choices for `cwd`, in pi's order: trust it, trust its parent, do not trust it.
pub fn trust_choices(cwd: &Path) -> Vec<TrustChoice> {
    let mut v = vec![TrustChoice {
        value: "trust",
        label: "Trust".into(),
        trusted: true,
        saved_path: cwd.to_path_buf(),
    }];
    if let Some(parent) = cwd.parent() {
        v.push(TrustChoice {
            value: "trust-parent",
            label: format!("Trust parent folder ({})", parent.display()),
            trusted: true,
            saved_path: parent.to_path_buf(),
        });
    }
    v.push(TrustChoice {
        value: "distrust",
        label: "Do not trust".into(),
        trusted: false,
        saved_path: cwd.to_path_buf(),
    });
    v
}

pub struct TrustSelector {
    cwd: PathBuf,
    /// The saved decision and the folder it was saved for, or why it could not be read.
    saved: Result<Option<(bool, PathBuf)>, String>,
    session_trusted: bool,
    choices: Vec<TrustChoice>,
    selected: usize,
    theme: Arc<UiTheme>,
    result: Option<DialogResult>,
}

impl TrustSelector {
    pub fn new(
        cwd: PathBuf,
        saved: Result<Option<(bool, PathBuf)>, String>,
        session_trusted: bool,
        theme: Arc<UiTheme>,
    ) -> Self {
        let choices = trust_choices(&cwd);
        let mut s = TrustSelector {
            cwd,
            saved,
            session_trusted,
            choices,
            selected: 0,
            theme,
            result: None,
        };
        s.selected = (0..s.choices.len()).find(|&i| s.is_saved(i)).unwrap_or(0);
        s
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }

    /// Whether choice `i` is what the trust file says now (the tick).
    fn is_saved(&self, i: usize) -> bool {
        let c = &self.choices[i];
        matches!(&self.saved, Ok(Some((d, p))) if *d == c.trusted && same_dir(p, &c.saved_path))
    }

    fn saved_text(&self) -> String {
        match &self.saved {
            Ok(None) => "none".into(),
            Ok(Some((d, path))) => {
                let label = if *d { "trusted" } else { "untrusted" };
                if same_dir(path, &self.cwd) {
                    format!("{label} ({})", path.display())
                } else {
                    format!("{label} (inherited from {})", path.display())
                }
            }
            Err(e) => e.clone(),
        }
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let c = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    c(a) == c(b)
}

impl Component for TrustSelector {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let inner = width.saturating_sub(2).max(1);
        let text = |out: &mut Frame, s: &str| {
            for w in wrap_text(s, inner) {
                out.push_line(format!(" {w}"));
            }
        };
        out.push_line(t.paint("border", &"─".repeat(width)));
        out.push_line(String::new());
        text(out, &t.bold("accent", "Project trust"));
        text(out, &t.paint("muted", &self.cwd.display().to_string()));
        out.push_line(String::new());
        text(
            out,
            &t.paint("muted", &format!("Saved decision: {}", self.saved_text())),
        );
        let current = if self.session_trusted { "trusted" } else { "untrusted" };
        text(out, &t.paint("muted", &format!("Current session: {current}")));
        out.push_line(String::new());
        for i in 0..self.choices.len() {
            let selected = i == self.selected;
            let prefix = if selected {
                t.paint("accent", "→ ")
            } else {
                "  ".into()
            };
            let tick = if self.is_saved(i) {
                t.paint("accent", "✓ ")
            } else {
                "  ".into()
            };
            let label = t.paint(if selected { "accent" } else { "text" }, &self.choices[i].label);
            text(out, &format!("{prefix}{tick}{label}"));
        }
        out.push_line(String::new());
        let kb = keybindings();
        let hint =
            |key: String, what: &str| format!("{}{}", t.paint("dim", &key), t.paint("muted", &format!(" {what}")));
        let keys = |id: &str| kb.keys(id).join("/");
        let hints = [
            hint("↑↓".into(), "navigate"),
            hint(keys("tui.select.confirm"), "save"),
            hint(keys("tui.select.cancel"), "cancel"),
        ];
        out.push_line(truncate_to_width(&format!(" {}", hints.join("  ")), width, ""));
        out.push_line(String::new());
        out.push_line(t.paint("border", &"─".repeat(width)));
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let kb = keybindings();
        // pi's list also moves with j and k.
        let plain = |c: char| k.key == pi_tui::Key::Char(c) && k.mods.is_empty();
        if kb.matches(k, "tui.select.up") || plain('k') {
            self.selected = self.selected.saturating_sub(1);
        } else if kb.matches(k, "tui.select.down") || plain('j') {
            self.selected = (self.selected + 1).min(self.choices.len().saturating_sub(1));
        } else if kb.matches(k, "tui.select.confirm") {
            self.result = Some(DialogResult::Done(self.choices[self.selected].value.to_string()));
        } else if kb.matches(k, "tui.select.cancel") {
            self.result = Some(DialogResult::Cancelled);
        } else {
            return false;
        }
        true
    }
}
