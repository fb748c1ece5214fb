//! The theme as extensions see it (`ctx.ui.theme`): every token's escape sequence and colour,
//! made from the same `UiTheme` the terminal UI paints with, in every mode.

use serde_json::Value;

use crate::ui_theme::UiTheme;

/// The theme the terminal UI will start with, as the extension host's Theme needs it.
pub fn startup_theme(paths: &crate::config::paths::Paths, session: &crate::session::AgentSession) -> serde_json::Value {
    let theme = match session.settings().lock() {
        Ok(s) => {
            // Every mode writes theme colours in the depth pi 1.6 picks for the terminal.
            pi_tui::set_truecolor(crate::theme_colors::truecolor(s.terminal_true_color()));
            crate::ui_theme::load_ui_theme(paths, &s, None).0
        }
        Err(_) => crate::ui_theme::UiTheme::fallback(),
    };
    theme_spec(&theme)
}

/// The theme as the host's Theme object needs it: the escape sequence of every token in its
/// slot (foreground or background).
pub fn theme_spec(theme: &UiTheme) -> Value {
    let mut fg = serde_json::Map::new();
    let mut bg = serde_json::Map::new();
    // Each token in its own slot only, as pi's Theme keeps them: `bg("accent")` and
    // `fg("selectedBg")` are unknown colours there. Optional tokens a theme leaves out take
    // the colour they fall back to.
    let optional = crate::resources::themes::OPTIONAL_TOKENS.iter().map(|(t, _)| t);
    for token in crate::resources::themes::THEME_TOKENS.iter().chain(optional) {
        let token = token.to_string();
        if crate::resources::themes::Theme::is_background(&token) {
            let back = theme
                .bg(&token)
                .map(|c| pi_tui::Style::new().bg(c).open())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "\x1b[49m".into());
            bg.insert(token, Value::String(back));
        } else {
            let open = theme.fg(&token).open();
            fg.insert(
                token,
                Value::String(if open.is_empty() { "\x1b[39m".into() } else { open }),
            );
        }
    }
    let dim: Vec<&String> = theme.theme.colors.keys().filter(|t| theme.fg(t).dim).collect();
    serde_json::json!({
        "name": theme.name(),
        "sourcePath": theme.theme.source_path.as_ref().map(|p| p.display().to_string()),
        "appearance": theme.appearance(),
        // The depth the escape sequences above were written in, and every token's colour.
        "colorMode": crate::theme_colors::mode_name(pi_tui::is_truecolor()),
        "colors": crate::theme_colors::colors(theme),
        "fg": fg,
        "bg": bg,
        "dim": dim,
    })
}
