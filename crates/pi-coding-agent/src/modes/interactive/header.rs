//! The startup header at the top of the transcript: compact, or (while tool output is
//! expanded) every key and the loaded context files, skills and prompt templates.

use pi_tui::Keybindings;

use super::keys::key_hint;
use super::theme::UiTheme;
use crate::resources::loader::Resources;

fn paint_hint(theme: &UiTheme, key: &str, text: &str) -> String {
    format!("{} {}", theme.paint("dim", key), theme.paint("muted", text))
}

/// The two rows of pi's half-block logo, each glyph in its fixed brand colour (the same
/// in every theme).
fn logo() -> [String; 2] {
    use pi_tui::{Color, Style};
    let coral = Style::new().fg(Color::Rgb(0xf0, 0x90, 0x82));
    let blue = Style::new().fg(Color::Rgb(0x4d, 0x9a, 0xbf));
    let yellow = Style::new().fg(Color::Rgb(0xf1, 0xbe, 0x57));
    [
        format!("{}{} ", coral.paint("▀▀"), blue.paint("█")),
        format!("{}{}", coral.paint("█▀ "), yellow.paint("█")),
    ]
}

/// The startup header: the logo with the version, the main keys and a pointer to the full
/// list (which names the loaded resources only when it shows them: `details`).
pub fn compact(t: &UiTheme, kb: &Keybindings, version: &str, details: bool) -> String {
    let key = |id: &str| key_hint(kb, id);
    let hints = [
        paint_hint(t, &key("app.interrupt"), "interrupt"),
        paint_hint(t, &format!("{}/{}", key("app.clear"), key("app.exit")), "clear/exit"),
        paint_hint(t, "/", "commands"),
        paint_hint(t, "!", "bash"),
        paint_hint(t, &key("app.tools.expand"), "more"),
    ];
    let [top, bottom] = logo();
    format!(
        "{top} {}\n{bottom} {}\n{}\n\n{}",
        t.paint("dim", &format!("v{version}")),
        hints.join(&t.paint("muted", " · ")),
        t.paint(
            "dim",
            &format!(
                "Press {} to show full startup help{}.",
                key("app.tools.expand"),
                if details { " and loaded resources" } else { "" }
            )
        ),
        t.paint(
            "dim",
            "Pi can explain its own features and look up its docs. Ask it how to use or extend Pi."
        )
    )
}

/// The header with every key and the loaded context files, skills and prompt templates
/// (shown while tool output is expanded, as pi does; `quietStartup: "header"` leaves the
/// resources out).
pub fn expanded(t: &UiTheme, kb: &Keybindings, version: &str, resources: Option<&Resources>) -> String {
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
    let [top, bottom] = logo();
    let mut lines = vec![format!("{top} {}", t.paint("dim", &format!("v{version}"))), bottom];
    lines.extend(
        keys.iter()
            .filter(|(k, _)| !k.is_empty())
            .map(|(k, what)| paint_hint(t, k, what)),
    );
    let mut section = |title: &str, items: Vec<String>| {
        if !items.is_empty() {
            lines.push(String::new());
            lines.push(t.paint("accent", &format!("[{title}]")));
            lines.extend(items.into_iter().map(|i| format!("  {}", t.paint("dim", &i))));
        }
    };
    let Some(resources) = resources else {
        return lines.join("\n");
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let shown = |p: &std::path::Path| match home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    };
    section(
        "Context",
        resources.context_files.iter().map(|f| shown(&f.path)).collect(),
    );
    section(
        "Skills",
        resources.skills.skills.iter().map(|s| s.name.clone()).collect(),
    );
    section(
        "Prompts",
        resources
            .templates
            .templates
            .iter()
            .map(|p| format!("/{}", p.name))
            .collect(),
    );
    lines.join("\n")
}
