//! The startup header at the top of the transcript: compact, or (while tool output is
//! expanded) every key; the loaded-resources listing follows it in the same block.

use pi_tui::{wrap_text, Component, Container, Frame, Keybindings, LineCache};

use super::chat::Notice;
use super::extension_ui::screen::HostLines;
use super::keys::key_hint;
use super::theme::UiTheme;

/// The header's block in the transcript: pi's header (indented a column, after a blank line)
/// and, when there is one, the resources listing flush left after another blank line.
pub struct HeaderBlock {
    /// `None` under `quietStartup`: only `[Extension issues]` is left to show.
    header: Option<Notice>,
    resources: String,
    cache: LineCache,
}

impl HeaderBlock {
    pub fn new(header: Notice, resources: String) -> Self {
        HeaderBlock {
            header: Some(header),
            resources,
            cache: LineCache::default(),
        }
    }

    /// No header, only `resources` (what `quietStartup` still shows), from the first row.
    pub fn bare(resources: String) -> Self {
        HeaderBlock {
            header: None,
            resources,
            cache: LineCache::default(),
        }
    }
}

impl Component for HeaderBlock {
    fn render(&mut self, width: usize, out: &mut Frame) {
        if let Some(header) = &mut self.header {
            header.render(width, out);
        }
        let lines = match self.cache.get(width) {
            Some(l) => l,
            None => {
                let mut lines = Vec::new();
                if !self.resources.is_empty() {
                    if self.header.is_some() {
                        lines.push(String::new());
                    }
                    for l in self.resources.lines() {
                        lines.extend(wrap_text(l, width.max(1)));
                    }
                }
                // pi's header area ends with a blank line (what follows it adds its own).
                lines.push(String::new());
                self.cache.set(width, lines)
            }
        };
        out.push(lines);
    }
    fn invalidate(&mut self) {
        if let Some(header) = &mut self.header {
            header.invalidate();
        }
        self.cache.clear();
    }
}

/// Whether `chat` holds nothing but the startup header (pi's or an extension's): pi's first
/// user message then has no blank line of its own, the header's last one standing for it.
pub fn only_header(chat: &mut Container) -> bool {
    match chat.len() {
        0 => true,
        1 => chat.child_mut::<HeaderBlock>(0).is_some() || chat.child_mut::<HostLines>(0).is_some(),
        _ => false,
    }
}

fn paint_hint(theme: &UiTheme, key: &str, text: &str) -> String {
    format!("{} {}", theme.paint("dim", key), theme.paint("muted", text))
}

/// pi's brand colours: fixed in every theme, sent as the nearest 256-colour entry where the
/// terminal has no 24-bit colour (as every RGB colour is).
const CORAL: pi_tui::Color = pi_tui::Color::Rgb(228, 138, 122);
const BLUE: pi_tui::Color = pi_tui::Color::Rgb(79, 142, 179);
const YELLOW: pi_tui::Color = pi_tui::Color::Rgb(234, 182, 93);

/// The two rows of pi's half-block logo, four cells wide. Each cell holds two square pixels
/// (upper and lower half), which gives this 4x4 picture of a "pi":
///
/// ```text
/// coral coral coral .
/// blue  .     coral .
/// blue  blue  .     yellow
/// blue  .     .     yellow
/// ```
///
/// The first cell has two colours, so it is an upper half block in coral on a blue background.
fn logo() -> [String; 2] {
    use pi_tui::Style;
    let top = format!(
        "{}{} ",
        Style::new().fg(CORAL).bg(BLUE).paint("▀"),
        Style::new().fg(CORAL).paint("▀█")
    );
    let bottom = format!(
        "{} {}",
        Style::new().fg(BLUE).paint("█▀"),
        Style::new().fg(YELLOW).paint("█")
    );
    [top, bottom]
}

/// Apple's Terminal draws gaps between half-block rows, so pi shows it a coloured `Pi` in
/// place of the logo.
fn logo_drawable() -> bool {
    !(cfg!(target_os = "macos") && std::env::var("TERM_PROGRAM").is_ok_and(|v| v == "Apple_Terminal"))
}

/// The header's first lines: the logo with the version beside its top row and `hints`
/// beside its bottom one, or the wordmark and version above the hints.
fn with_logo(t: &UiTheme, version: &str, hints: &str) -> String {
    use pi_tui::Style;
    let version = t.paint("dim", &format!("v{version}"));
    if !logo_drawable() {
        let mark = format!(
            "{}{}",
            Style::new().fg(CORAL).paint("P"),
            Style::new().fg(YELLOW).paint("i")
        );
        return format!("{mark} {version}\n{hints}");
    }
    let [top, bottom] = logo();
    format!("{top} {version}\n{bottom} {hints}")
}

/// The startup header: the logo with the version, the main keys and a pointer to the full
/// list (`details`: it also shows the loaded resources).
pub fn compact(t: &UiTheme, kb: &Keybindings, version: &str, details: bool) -> String {
    let key = |id: &str| key_hint(kb, id);
    let hints = [
        paint_hint(t, &key("app.interrupt"), "interrupt"),
        paint_hint(t, &format!("{}/{}", key("app.clear"), key("app.exit")), "clear/exit"),
        paint_hint(t, "/", "commands"),
        paint_hint(t, "!", "bash"),
        paint_hint(t, &key("app.tools.expand"), "more"),
    ];
    format!(
        "{}\n{}\n\n{}",
        with_logo(t, version, &hints.join(&t.paint("muted", " · "))),
        t.paint(
            "dim",
            &format!(
                "Press {} to show full startup help{}.",
                key("app.tools.expand"),
                if details { " and loaded resources" } else { "" }
            )
        ),
        onboarding(t)
    )
}

/// The pointer to pi's own docs, last in both forms of the header.
fn onboarding(t: &UiTheme) -> String {
    t.paint(
        "dim",
        "Pi can explain its own features and look up its docs. Ask it how to use or extend Pi.",
    )
}

/// The header with every key (shown while tool output is expanded, as pi does).
pub fn expanded(t: &UiTheme, kb: &Keybindings, version: &str) -> String {
    let key = |id: &str| key_hint(kb, id);
    let keys = [
        (key("app.interrupt"), "to interrupt"),
        (key("app.clear"), "to clear"),
        (format!("{} twice", key("app.clear")), "to exit"),
        (key("app.exit"), "to exit (empty)"),
        (key("app.suspend"), "to suspend"),
        (key("tui.editor.deleteToLineEnd"), "to delete to end"),
        (key("app.thinking.cycle"), "to cycle thinking level"),
        (
            format!("{}/{}", key("app.model.cycleForward"), key("app.model.cycleBackward")),
            "to cycle models",
        ),
        (key("app.model.select"), "to select model"),
        (key("app.tools.expand"), "to expand tools"),
        (key("app.thinking.toggle"), "to expand thinking"),
        (key("app.editor.external"), "for external editor"),
        ("/".to_string(), "for commands"),
        ("!".to_string(), "to run bash"),
        ("!!".to_string(), "to run bash (no context)"),
        (key("app.message.followUp"), "to queue follow-up"),
        (key("app.message.dequeue"), "to edit all queued messages"),
        (
            key("app.clipboard.pasteImage"),
            "to paste files on macOS, images, or text",
        ),
        ("drop files".to_string(), "to attach"),
    ];
    let hints: Vec<String> = keys
        .iter()
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, what)| paint_hint(t, k, what))
        .collect();
    // The first key sits beside the logo's bottom row, as pi 1.6 lays it out.
    format!("{}\n\n{}", with_logo(t, version, &hints.join("\n")), onboarding(t))
}
