//! The terminal UI's colours: a resolved pi theme turned into terminal styles, plus the
//! markdown, editor and list themes derived from it. The interactive mode paints with it; the
//! other modes hand its colours to extensions (`extension_theme`).

use std::path::Path;
use std::sync::Arc;

use pi_tui::components::{EditorTheme, MarkdownTheme, SelectListTheme, SettingsListTheme};
use pi_tui::{Color, Style};

use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;
use crate::resources::loader::{theme_sources, ResourceOptions};
use crate::resources::themes::{builtin_theme, load_themes, Theme, ThemeColor};

/// A theme ready to paint with.
#[derive(Clone)]
pub struct UiTheme {
    pub theme: Theme,
    pub markdown: Arc<MarkdownTheme>,
    /// Tokens drawn faint rather than in a colour of their own (the `system` theme's greys).
    faint: Arc<std::collections::HashSet<&'static str>>,
}

fn to_color(c: ThemeColor) -> Option<Color> {
    match c {
        ThemeColor::Default => None,
        ThemeColor::Index(n) => Some(Color::Indexed(n)),
        ThemeColor::Rgb(r, g, b) => Some(Color::Rgb(r, g, b)),
    }
}

impl UiTheme {
    pub fn new(theme: Theme) -> Self {
        // Only the palette-index form greys by faintness; derived colours have real greys.
        let faint = if theme.name == crate::resources::themes::SYSTEM_THEME
            && theme.source_path.is_none()
            && theme.colors.get("dim") == Some(&ThemeColor::Default)
        {
            crate::resources::themes::system_faint_tokens().collect()
        } else {
            Default::default()
        };
        let mut t = UiTheme {
            theme,
            markdown: Arc::new(MarkdownTheme::default()),
            faint: Arc::new(faint),
        };
        t.markdown = Arc::new(t.markdown_theme());
        t
    }

    /// The built-in dark theme (always available).
    pub fn fallback() -> Self {
        match builtin_theme("dark") {
            Some(t) => UiTheme::new(t),
            None => UiTheme::new(Theme {
                name: "dark".into(),
                colors: Default::default(),
                export: Default::default(),
                source_path: None,
            }),
        }
    }

    pub fn name(&self) -> &str {
        &self.theme.name
    }

    /// `"light"` for a theme made for light backgrounds (its message panels are light),
    /// else `"dark"`: what a Theme's `appearance` says.
    pub fn appearance(&self) -> &'static str {
        match self.theme.color("userMessageBg") {
            ThemeColor::Rgb(r, g, b) if u32::from(r) * 299 + u32::from(g) * 587 + u32::from(b) * 114 > 128_000 => {
                "light"
            }
            _ if self.theme.name == "light" => "light",
            _ => "dark",
        }
    }

    /// Foreground style of a token.
    pub fn fg(&self, token: &str) -> Style {
        Style {
            fg: to_color(self.theme.color(token)),
            dim: self.faint.contains(token),
            ..Style::default()
        }
    }

    /// Background colour of a token.
    pub fn bg(&self, token: &str) -> Option<Color> {
        to_color(self.theme.color(token))
    }

    pub fn paint(&self, token: &str, text: &str) -> String {
        self.fg(token).paint(text)
    }

    pub fn bold(&self, token: &str, text: &str) -> String {
        Style {
            bold: true,
            ..self.fg(token)
        }
        .paint(text)
    }

    fn markdown_theme(&self) -> MarkdownTheme {
        MarkdownTheme {
            heading: Style {
                bold: true,
                ..self.fg("mdHeading")
            },
            link: Style {
                underline: true,
                ..self.fg("mdLink")
            },
            link_url: self.fg("mdLinkUrl"),
            code: self.fg("mdCode"),
            code_block: self.fg("mdCodeBlock"),
            code_block_border: self.fg("mdCodeBlockBorder"),
            quote: Style {
                italic: true,
                ..self.fg("mdQuote")
            },
            quote_border: self.fg("mdQuoteBorder"),
            hr: self.fg("mdHr"),
            list_bullet: self.fg("mdListBullet"),
            // pi 1.6 draws table rules in the text's own colour (no theme token for them).
            table_border: Style::new(),
            // As pi 1.6 colours diagrams: muted outlines, accent edges.
            diagram: pi_tui::components::DiagramTheme {
                border: self.fg("borderMuted"),
                text: self.fg("text"),
                edge: self.fg("accent"),
                edge_label: self.fg("text"),
                warning: self.fg("warning"),
            },
            highlighter: Some(self.code_highlighter()),
            ..MarkdownTheme::default()
        }
    }

    /// Code blocks coloured by the theme's syntax colours, as pi 1.6 colours them (plain
    /// text in the text colour).
    fn code_highlighter(&self) -> pi_tui::components::Highlighter {
        use pi_tui::highlight::CodeToken;
        let styles: Vec<(CodeToken, Style)> = [
            (CodeToken::Plain, "text"),
            (CodeToken::Keyword, "syntaxKeyword"),
            (CodeToken::Function, "syntaxFunction"),
            (CodeToken::Variable, "syntaxVariable"),
            (CodeToken::String, "syntaxString"),
            (CodeToken::Number, "syntaxNumber"),
            (CodeToken::Type, "syntaxType"),
            (CodeToken::Operator, "syntaxOperator"),
            (CodeToken::Punctuation, "syntaxPunctuation"),
            (CodeToken::Comment, "syntaxComment"),
            // Decorators and attributes, as pi 1.6's highlighter paints its `meta` class.
            (CodeToken::Meta, "muted"),
            (CodeToken::Added, "toolDiffAdded"),
            (CodeToken::Removed, "toolDiffRemoved"),
        ]
        .into_iter()
        .map(|(token, name)| (token, self.fg(name)))
        .collect();
        std::sync::Arc::new(move |code: &str, lang: &str| {
            let paint = |token: CodeToken, text: &str| match styles.iter().find(|(t, _)| *t == token) {
                Some((_, style)) => style.paint(text),
                None => text.to_string(),
            };
            pi_tui::highlight::highlight_with(code, lang, &paint)
        })
    }

    pub fn select_list(&self) -> SelectListTheme {
        SelectListTheme {
            selected: self.fg("accent"),
            description: self.fg("muted"),
            scroll_info: self.fg("muted"),
            no_match: self.fg("muted"),
        }
    }

    pub fn settings_list(&self) -> SettingsListTheme {
        // As pi 1.6: rows in the terminal's own colour, the selected one and its cursor in
        // the accent.
        SettingsListTheme {
            label: Style::new(),
            selected_label: self.fg("accent"),
            value: self.fg("muted"),
            selected_value: self.fg("accent"),
            description: self.fg("dim"),
            hint: self.fg("dim"),
        }
    }

    pub fn editor(&self, border_token: &str) -> EditorTheme {
        EditorTheme {
            border: self.fg(border_token),
            select_list: self.select_list(),
        }
    }
}

/// Names of every theme the user can pick, in pi 1.6's order: `system` (the default) first,
/// then the built-in and custom ones by name.
pub fn theme_names(paths: &Paths, settings: &SettingsManager) -> Vec<String> {
    let mut names = vec!["dark".to_string(), "light".to_string()];
    let loaded = load_themes(paths, &theme_sources(paths, settings, &ResourceOptions::default()));
    for t in loaded.themes {
        if !names.contains(&t.name) && t.name != crate::resources::themes::SYSTEM_THEME {
            names.push(t.name);
        }
    }
    names.sort_by(|a, b| a.to_lowercase().cmp(&b.to_lowercase()).then_with(|| a.cmp(b)));
    names.insert(0, crate::resources::themes::SYSTEM_THEME.to_string());
    names
}

/// The theme named in settings (a built-in, or a custom JSON theme from the themes folders;
/// a `light/dark` pair by the terminal background), else `system`. Returns an error to show
/// when the name is unknown (the `system` theme is used then).
pub fn load_ui_theme(paths: &Paths, settings: &SettingsManager, name: Option<&str>) -> (UiTheme, Option<String>) {
    let wanted = name
        .map(str::to_string)
        .or_else(|| settings.theme().map(str::to_string))
        .unwrap_or_else(|| crate::resources::themes::SYSTEM_THEME.to_string());
    let wanted = crate::resources::themes::resolve_theme_setting(&wanted, std::env::var("COLORFGBG").ok().as_deref());
    if let Some(t) = builtin_theme(&wanted) {
        return (UiTheme::new(t), None);
    }
    let loaded = load_themes(paths, &theme_sources(paths, settings, &ResourceOptions::default()));
    if let Some(t) = loaded.themes.into_iter().find(|t| t.name == wanted) {
        return (UiTheme::new(t), None);
    }
    // A path to a theme file also works.
    let p = Path::new(&wanted);
    if p.extension().is_some_and(|e| e == "json") {
        if let Ok(t) = crate::resources::themes::load_theme_file(p) {
            return (UiTheme::new(t), None);
        }
    }
    // A file of that name in the themes folder that did not load: its problems, named by
    // the theme's name, as pi 1.6 reports them.
    let file = paths.themes_dir().join(format!("{wanted}.json"));
    let reason = if file.is_file() {
        match crate::resources::themes::load_theme_file_as(&file, &wanted) {
            Ok(t) => return (UiTheme::new(t), None),
            Err(e) => e,
        }
    } else {
        format!("Theme not found: {wanted}")
    };
    // As pi 1.6: the system theme instead, and an error that says so.
    let system = builtin_theme(crate::resources::themes::SYSTEM_THEME).map_or_else(UiTheme::fallback, UiTheme::new);
    (
        system,
        Some(format!(
            "Failed to load theme \"{wanted}\": {reason}\nFell back to the system theme."
        )),
    )
}

/// What loading the custom themes found wrong (files that are not themes, name clashes):
/// pi 1.6's `[Theme conflicts]` under the startup header.
pub fn theme_diagnostics(paths: &Paths, settings: &SettingsManager) -> Vec<crate::resources::Diagnostic> {
    load_themes(paths, &theme_sources(paths, settings, &ResourceOptions::default())).diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_theme_uses_the_terminal_palette_and_faint_greys() {
        let t = UiTheme::new(builtin_theme("system").expect("system theme"));
        assert_eq!(t.fg("error").fg, Some(Color::Indexed(1)));
        assert_eq!(t.fg("accent").fg, Some(Color::Indexed(5)));
        // Body text and panels are the terminal's own colours; greys are faint.
        assert_eq!(t.fg("text"), Style::default());
        assert!(t.bg("userMessageBg").is_none());
        assert!(t.fg("muted").dim && t.fg("muted").fg.is_none());
        assert!(t.fg("scrollbarTrack").dim);
    }

    #[test]
    fn a_light_dark_pair_picks_by_the_background() {
        use crate::resources::themes::resolve_theme_setting;
        assert_eq!(resolve_theme_setting("light/dark", Some("0;15")), "light");
        assert_eq!(resolve_theme_setting("light/dark", Some("15;0")), "dark");
        assert_eq!(resolve_theme_setting("light/dark", None), "dark");
        assert_eq!(resolve_theme_setting("system", None), "system");
        assert_eq!(resolve_theme_setting("./themes/x.json", None), "./themes/x.json");
    }

    #[test]
    fn builtin_themes_paint_with_colour() {
        let t = UiTheme::new(builtin_theme("light").expect("light theme"));
        assert!(t.paint("error", "x").contains("\x1b["));
        assert!(t.bg("userMessageBg").is_some());
    }
}

#[cfg(test)]
mod listing_tests {
    use super::*;

    #[test]
    fn custom_themes_are_listed_by_name_after_system() {
        let tmp = tempfile::tempdir().expect("tmp");
        let agent = tmp.path().join("agent");
        std::fs::create_dir_all(agent.join("themes")).expect("dir");
        // A theme as pi 1.6 writes one: schema, appearance, OKHSL colours, export.
        let dark = builtin_theme("dark").expect("dark");
        let colors: serde_json::Map<String, serde_json::Value> =
            dark.colors.keys().map(|k| (k.clone(), "#112233".into())).collect();
        let mut json = serde_json::json!({ "colors": colors, "export": {"pageBg": "okhsl(262 14% 16%)"} });
        for name in ["mint", "Aurora"] {
            json["name"] = name.into();
            json["$schema"] = "https://pi.dev/schemas/theme.schema.json".into();
            json["appearance"] = "dark".into();
            json["vars"] = serde_json::json!({"sea": "okhsl(234 3% 89%)"});
            json["colors"]["accent"] = "sea".into();
            std::fs::write(agent.join("themes").join(format!("{name}.json")), json.to_string()).expect("write");
        }
        let paths = Paths::new(&agent, tmp.path(), tmp.path());
        let settings = SettingsManager::in_memory(serde_json::json!({}));
        assert_eq!(
            theme_names(&paths, &settings),
            ["system", "Aurora", "dark", "light", "mint"]
        );
    }
}
