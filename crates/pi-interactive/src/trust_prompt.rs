//! The project-trust question asked on the normal screen before the terminal UI starts, for
//! a folder whose `.pi/` files (or `.agents/skills`) nothing has decided about yet.

use std::io::Read;
use std::path::{Path, PathBuf};

use pi_tui::components::{SelectEvent, SelectItem, SelectList};
use pi_tui::{Component, Frame, InputEvent, InputParser, Terminal, Tui};

use super::theme::UiTheme;

/// The answer: whether the project's files count for this run, and where the decision is
/// saved (`None`: this session only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustAnswer {
    pub trusted: bool,
    pub save_for: Option<PathBuf>,
}

/// The choices, in pi's order, as (value, label).
fn choices(cwd: &Path) -> Vec<(String, String)> {
    let mut v = vec![("trust".to_string(), "Trust".to_string())];
    if let Some(parent) = cwd.parent() {
        v.push((
            "trust-parent".to_string(),
            format!("Trust parent folder ({})", parent.display()),
        ));
    }
    v.push(("trust-session".into(), "Trust (this session only)".into()));
    v.push(("distrust".into(), "Do not trust".into()));
    v.push(("distrust-session".into(), "Do not trust (this session only)".into()));
    v
}

/// What a chosen value means.
pub fn answer_for(value: &str, cwd: &Path) -> TrustAnswer {
    let here = Some(cwd.to_path_buf());
    match value {
        "trust" => TrustAnswer {
            trusted: true,
            save_for: here,
        },
        "trust-parent" => TrustAnswer {
            trusted: true,
            save_for: cwd.parent().map(Path::to_path_buf).or(here),
        },
        "trust-session" => TrustAnswer {
            trusted: true,
            save_for: None,
        },
        "distrust" => TrustAnswer {
            trusted: false,
            save_for: here,
        },
        // Also the answer to Escape: nothing is loaded and nothing is remembered.
        _ => TrustAnswer {
            trusted: false,
            save_for: None,
        },
    }
}

/// A question asked before the terminal UI starts, drawn as pi 1.6's startup selectors:
/// between rules, the question in bold (`head_token`'s colour), the choices, then the keys
/// (their names dim, what they do in `words_token`'s colour).
pub(crate) struct StartupQuestion {
    pub head: Vec<String>,
    pub head_token: &'static str,
    pub words_token: &'static str,
    pub list: SelectList,
    pub theme: UiTheme,
}

impl Component for StartupQuestion {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = &self.theme;
        let rule = t.paint("border", &"─".repeat(width));
        let inner = width.saturating_sub(2).max(1);
        out.push_line(rule.clone());
        out.push_line(String::new());
        for l in &self.head {
            if l.is_empty() {
                out.push_line(String::new());
            }
            for w in pi_tui::wrap_text(l, inner) {
                out.push_line(format!(" {}", t.bold(self.head_token, &w)));
            }
        }
        out.push_line(String::new());
        let mut list = Frame::default();
        self.list.render(inner, &mut list);
        for l in list.to_vec() {
            out.push_line(format!(" {l}"));
        }
        out.push_line(String::new());
        let kb = pi_tui::keybindings();
        let hint = |keys: &str, what: &str| {
            format!(
                "{}{}",
                t.paint("dim", keys),
                t.paint(self.words_token, &format!(" {what}"))
            )
        };
        let keys = [
            hint("↑↓", "navigate"),
            hint(&kb.keys("tui.select.confirm").join("/"), "select"),
            hint(&kb.keys("tui.select.cancel").join("/"), "cancel"),
        ]
        .join("  ");
        out.push_line(pi_tui::truncate_to_width(&format!(" {keys}"), width, ""));
        out.push_line(String::new());
        out.push_line(rule);
    }
    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.list.handle_input(event)
    }
}

/// Ask on the terminal; the answer (Escape or Ctrl+C: not trusted, not remembered).
pub fn ask(cwd: &Path, theme: &UiTheme) -> std::io::Result<TrustAnswer> {
    let items = choices(cwd)
        .into_iter()
        .map(|(value, label)| SelectItem::new(value).with_label(label))
        .collect();
    let question = StartupQuestion {
        head: vec![
            "Trust project folder?".to_string(),
            cwd.display().to_string(),
            String::new(),
            "This lets pi load the folder's .pi settings and resources, install the project \
             packages it is missing, and run the project's extensions."
                .to_string(),
        ],
        head_token: "accent",
        words_token: "muted",
        list: SelectList::new(items, 8, theme.select_list()),
        theme: theme.clone(),
    };
    let value = run_on_screen(question)?;
    Ok(answer_for(value.as_deref().unwrap_or("distrust-session"), cwd))
}

/// Show `question` on the normal screen until its list picks a value (Escape or Ctrl+C:
/// `None`), then give the screen back as it was.
pub(crate) fn run_on_screen(mut question: StartupQuestion) -> std::io::Result<Option<String>> {
    let dialog = &mut question;
    let mut term = Terminal::start()?;
    let (w, h) = term.size();
    let mut tui = Tui::new(w, h);
    tui.sync_focus(dialog);
    tui.render(dialog, &mut term)?;
    let mut parser = InputParser::new();
    let mut stdin = std::io::stdin();
    let mut buf = [0u8; 1024];
    let value = 'read: loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) | Err(_) => break None,
            Ok(n) => n,
        };
        let mut events = parser.feed(&buf[..n]);
        // A terminal writes a key's sequence at once: what is left over is a lone Escape.
        if parser.has_pending() {
            events.extend(parser.flush());
        }
        for ev in events {
            match ev {
                InputEvent::KittyFlags(_) => {
                    let _ = term.enable_kitty();
                    parser.set_kitty_active(true);
                }
                InputEvent::Key(k) if !k.is_release() && k.matches("ctrl+c") => break 'read None,
                ev => {
                    dialog.handle_input(&ev);
                    match dialog.list.take_event() {
                        Some(SelectEvent::Selected(item)) => break 'read Some(item.value),
                        Some(SelectEvent::Cancelled) => break 'read None,
                        _ => {}
                    }
                }
            }
        }
        tui.render(dialog, &mut term)?;
    };
    tui.finish(&mut term)?;
    let _ = term.disable_key_protocols();
    term.stop()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_choice_means_what_it_says() {
        let cwd = Path::new("/work/proj");
        let labels: Vec<String> = choices(cwd).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            labels,
            [
                "Trust",
                "Trust parent folder (/work)",
                "Trust (this session only)",
                "Do not trust",
                "Do not trust (this session only)"
            ]
        );
        assert_eq!(
            answer_for("trust-parent", cwd),
            TrustAnswer {
                trusted: true,
                save_for: Some(PathBuf::from("/work"))
            }
        );
        assert_eq!(answer_for("distrust", cwd).save_for, Some(cwd.to_path_buf()));
        assert!(answer_for("trust-session", cwd).trusted);
        assert_eq!(
            answer_for("anything else", cwd),
            TrustAnswer {
                trusted: false,
                save_for: None
            }
        );
    }
}
