//! The theme as the interactive mode uses it: the product's `UiTheme`, and the answers to what
//! the terminal reports about its colours while the UI runs.

use std::sync::Arc;

use pi_coding_agent::resources::themes::builtin_theme;
pub use pi_coding_agent::ui_theme::*;

/// The terminal reported its background (OSC 11): a `light/dark` theme setting is decided
/// again by it, and the theme swapped when that changes the choice.
pub fn background_reported(cx: &super::effect::Ctx<'_>, rgb: (u8, u8, u8)) -> Vec<super::effect::Effect> {
    if !pi_coding_agent::resources::themes::set_reported_background(rgb) {
        return Vec::new();
    }
    appearance_changed(cx)
}

/// The terminal said it switched between dark and light (mode 2031): for a terminal that does
/// not report its background, that decides a `light/dark` theme setting.
pub fn scheme_reported(cx: &super::effect::Ctx<'_>, dark: bool) -> Vec<super::effect::Effect> {
    if !pi_coding_agent::resources::themes::set_reported_scheme(dark) {
        return Vec::new();
    }
    appearance_changed(cx)
}

/// What the terminal looks like may have changed: a `light/dark` setting is decided again,
/// and the theme swapped when that changes the choice.
fn appearance_changed(cx: &super::effect::Ctx<'_>) -> Vec<super::effect::Effect> {
    use super::effect::{blocking, then, Effect};
    let Some(settings) = cx.settings_snapshot() else {
        return Vec::new();
    };
    let pair = settings
        .theme()
        .is_some_and(|t| pi_coding_agent::resources::themes::parse_theme_pair(t).is_some() && !t.ends_with(".json"));
    if !pair {
        return Vec::new();
    }
    let current = cx.theme.name().to_string();
    let paths = cx.paths();
    vec![blocking(move || {
        let (theme, _) = load_ui_theme(&paths, &settings, None);
        then(move |_| {
            if theme.name() == current {
                Vec::new()
            } else {
                vec![Effect::SetTheme(std::sync::Arc::new(theme))]
            }
        })
    })]
}

/// The terminal reported new colours: the `system` theme, when it is the one shown, is made
/// again from them.
pub fn system_colors_reported(cx: &super::effect::Ctx<'_>) -> Vec<super::effect::Effect> {
    if cx.theme.name() != pi_coding_agent::resources::themes::SYSTEM_THEME || cx.theme.theme.source_path.is_some() {
        return Vec::new();
    }
    match builtin_theme(pi_coding_agent::resources::themes::SYSTEM_THEME) {
        Some(t) => vec![super::effect::Effect::SetTheme(Arc::new(UiTheme::new(t)))],
        None => Vec::new(),
    }
}
