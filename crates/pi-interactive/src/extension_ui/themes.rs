//! The themes extensions see and switch: the catalogue the host's mirror holds for
//! `ctx.ui.getAllThemes()` / `getTheme(name)` (each theme with its colours as escape
//! sequences), and `ctx.ui.setTheme(name)` carried out as the settings menu does (shown at
//! once, saved when it was given by name).

use std::sync::Arc;

use serde_json::{json, Value};

use super::super::effect::{blocking, then, Ctx, Effect};
use super::super::theme::UiTheme;
use pi_coding_agent::config::paths::Paths;
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::extension_theme::theme_spec;
use pi_coding_agent::resources::loader::{theme_sources, ResourceOptions};
use pi_coding_agent::resources::themes::{builtin_theme, load_themes, SYSTEM_THEME};

/// Every theme the user can switch to, `[{name, path, spec}]`: the built-ins and the themes
/// of the themes folders, the system theme first and the rest by name, as pi 1.6 lists them.
/// Reads theme files: call it off the UI thread.
pub fn catalogue(paths: &Paths, settings: &SettingsManager) -> Value {
    let mut themes: Vec<(String, Option<String>, UiTheme)> = Vec::new();
    for name in [SYSTEM_THEME, "dark", "light"] {
        if let Some(t) = builtin_theme(name) {
            themes.push((name.to_string(), None, UiTheme::new(t)));
        }
    }
    let loaded = load_themes(paths, &theme_sources(paths, settings, &ResourceOptions::default()));
    for t in loaded.themes {
        if themes.iter().any(|(n, _, _)| *n == t.name) {
            continue;
        }
        let path = t.source_path.as_ref().map(|p| p.display().to_string());
        themes.push((t.name.clone(), path, UiTheme::new(t)));
    }
    themes.sort_by(|(a, _, _), (b, _, _)| {
        (a != SYSTEM_THEME)
            .cmp(&(b != SYSTEM_THEME))
            .then_with(|| a.to_lowercase().cmp(&b.to_lowercase()))
    });
    Value::Array(
        themes
            .iter()
            .map(|(name, path, theme)| json!({"name": name, "path": path, "spec": theme_spec(theme)}))
            .collect(),
    )
}

/// `ctx.ui.setTheme`: load the theme `name`, show it, and save it in settings when `persist`
/// (a name given by the extension, not a Theme object) and the setting differs.
pub fn set_theme_effects(cx: &Ctx<'_>, name: String, persist: bool) -> Vec<Effect> {
    let paths = cx.paths();
    let Some(snapshot) = cx.settings_snapshot() else {
        return Vec::new();
    };
    let saved = snapshot.theme().map(str::to_string);
    vec![blocking(move || {
        let theme = super::super::theme::load_ui_theme(&paths, &snapshot, Some(&name)).0;
        then(move |_| {
            let mut out = vec![Effect::SetTheme(Arc::new(theme))];
            if persist && saved.as_deref() != Some(name.as_str()) {
                out.push(Effect::Settings(Box::new(move |s| s.set_theme(&name))));
            }
            out
        })
    })]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_lists_the_system_theme_first_with_colours_for_every_theme() {
        let dir = tempfile::tempdir().expect("tempdir");
        let themes = dir.path().join("themes");
        std::fs::create_dir_all(&themes).expect("themes dir");
        let colors: serde_json::Map<String, Value> = pi_coding_agent::resources::themes::THEME_TOKENS
            .iter()
            .map(|t| (t.to_string(), json!("#112233")))
            .collect();
        let custom = json!({"name": "aurora", "colors": colors});
        std::fs::write(themes.join("aurora.json"), custom.to_string()).expect("write theme");
        let paths = Paths::new(
            dir.path().to_path_buf(),
            dir.path().to_path_buf(),
            dir.path().to_path_buf(),
        );
        let settings = SettingsManager::in_memory(json!({}));
        let list = catalogue(&paths, &settings);
        let names: Vec<&str> = list
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["system", "aurora", "dark", "light"]);
        let aurora = &list[1];
        assert!(aurora["path"].as_str().is_some_and(|p| p.ends_with("aurora.json")));
        assert!(aurora["spec"]["fg"]["accent"]
            .as_str()
            .is_some_and(|s| s.starts_with("\x1b[")));
        assert!(list[0]["path"].is_null(), "the system theme has no file");
    }
}
