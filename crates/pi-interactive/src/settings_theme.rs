//! `/settings` → "Theme": pi 1.6's theme submenu. One theme for every terminal (`system`
//! first, then `automatic`, then the others by name), or automatic mode: a light and a dark
//! theme saved as `"theme": "<light>/<dark>"`, picked by the terminal's appearance. Moving
//! through a list previews the highlighted theme; Escape puts back the one shown before.

use std::sync::Arc;

use pi_tui::components::{SelectItem, SettingItem, SettingsEvent, SettingsList};
use pi_tui::{Component, ComponentMouse, Frame, KeyEvent};

use super::settings_submenu::{SelectSubmenu, SubmenuEvent};
use super::theme::UiTheme;
use pi_coding_agent::resources::themes::{parse_theme_pair, SYSTEM_THEME};

/// The value of the `automatic` row of the single-theme list.
const AUTOMATIC: &str = "/";

/// What the submenu asks of its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThemeEvent {
    /// Show this theme setting (a name or a `light/dark` pair) without saving it.
    Preview(String),
    /// The submenu closed: with the setting to save, or `None` when cancelled.
    Done(Option<String>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Light,
    Dark,
}

enum View {
    Single(Box<SelectSubmenu>),
    Automatic {
        list: Box<SettingsList>,
        pick: Option<(Side, Box<SelectSubmenu>)>,
    },
}

pub struct ThemeSubmenu {
    themes: Vec<String>,
    /// The terminal looks light (decides which half of a pair is shown).
    terminal_light: bool,
    /// The setting when the submenu opened: shown again on Escape.
    original: String,
    single: String,
    light: String,
    dark: String,
    view: View,
    theme: Arc<UiTheme>,
}

/// `preferred` when it is a theme on offer, else `system`, else the first one.
fn preferred(themes: &[String], preferred: Option<&str>) -> String {
    preferred
        .filter(|p| themes.iter().any(|t| t == p))
        .or_else(|| themes.iter().find(|t| *t == SYSTEM_THEME).map(String::as_str))
        .or(themes.first().map(String::as_str))
        .unwrap_or(SYSTEM_THEME)
        .to_string()
}

/// The themes with a tick on `current`; `system` says where its colours come from.
fn theme_items(themes: &[String], current: &str) -> Vec<SelectItem> {
    themes
        .iter()
        .map(|name| {
            let mark = if name == current { "✓ " } else { "  " };
            let item = SelectItem::new(name.clone()).with_label(format!("{mark}{name}"));
            if name == SYSTEM_THEME {
                item.with_description("Made from the colours your terminal reports")
            } else {
                item
            }
        })
        .collect()
}

impl ThemeSubmenu {
    /// `setting`: the `theme` setting (or the theme shown when there is none); `themes`:
    /// every theme on offer, `system` first.
    pub fn new(setting: &str, terminal_light: bool, themes: Vec<String>, theme: Arc<UiTheme>) -> Self {
        let pair = parse_theme_pair(setting);
        let fixed = (!setting.contains('/')).then_some(setting);
        let (light, dark) = match &pair {
            Some((l, d)) => (l.clone(), d.clone()),
            None => {
                let t = preferred(&themes, fixed);
                (t.clone(), t)
            }
        };
        let active = if terminal_light { &light } else { &dark };
        let single = preferred(&themes, fixed.or(pair.as_ref().map(|_| active.as_str())));
        let mut menu = ThemeSubmenu {
            themes,
            terminal_light,
            original: setting.to_string(),
            single,
            light,
            dark,
            view: View::Single(Box::new(SelectSubmenu::new("", None, Vec::new(), None, theme.clone()))),
            theme,
        };
        if pair.is_some() {
            menu.show_automatic();
        } else {
            menu.show_single();
        }
        menu
    }

    fn pair(&self) -> String {
        format!("{}/{}", self.light, self.dark)
    }

    fn show_single(&mut self) {
        let mut items = theme_items(&self.themes, &self.single);
        let system = items
            .iter()
            .position(|i| i.value == SYSTEM_THEME)
            .map(|i| items.remove(i));
        let automatic = SelectItem::new(AUTOMATIC)
            .with_label("  automatic")
            .with_description("A light and a dark theme, following the terminal's appearance");
        items.splice(0..0, system.into_iter().chain([automatic]));
        self.view = View::Single(Box::new(SelectSubmenu::new(
            "Theme",
            Some("Pick a theme, or automatic to follow the terminal's light or dark appearance.".into()),
            items,
            Some(&self.single),
            self.theme.clone(),
        )));
    }

    fn show_automatic(&mut self) {
        let row = |id: &str, label: &str, description: &str, value: &str, values: &[&str]| SettingItem {
            id: id.into(),
            label: label.into(),
            description: Some(description.into()),
            value: value.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        let items = vec![
            row(
                "light-theme",
                "Light theme",
                "The theme shown while the terminal is light",
                &self.light,
                &[],
            ),
            row(
                "dark-theme",
                "Dark theme",
                "The theme shown while the terminal is dark",
                &self.dark,
                &[],
            ),
            row(
                "apply",
                "Apply",
                "Save these two and go back",
                "save and go back",
                &["save and go back"],
            ),
            row(
                "single-mode",
                "Change mode",
                "Use one theme whatever the terminal's appearance",
                "switch to single theme",
                &["switch to single theme"],
            ),
        ];
        let mut list = SettingsList::new(items, 4, self.theme.settings_list());
        list.set_hint("Enter/Space to change · Esc to cancel");
        self.view = View::Automatic {
            list: Box::new(list),
            pick: None,
        };
    }

    fn pick(&self, side: Side) -> SelectSubmenu {
        let (title, description, current) = match side {
            Side::Light => ("Light Theme", "The theme for a light terminal", &self.light),
            Side::Dark => ("Dark Theme", "The theme for a dark terminal", &self.dark),
        };
        SelectSubmenu::new(
            title,
            Some(description.into()),
            theme_items(&self.themes, current),
            Some(current),
            self.theme.clone(),
        )
    }

    fn cancel(&self) -> Vec<ThemeEvent> {
        vec![ThemeEvent::Preview(self.original.clone()), ThemeEvent::Done(None)]
    }

    /// Handle a key; what the owner should do about it.
    pub fn handle_key(&mut self, k: &KeyEvent) -> Vec<ThemeEvent> {
        match &mut self.view {
            View::Single(menu) => match menu.handle_key(k) {
                Some(SubmenuEvent::Moved(v)) if v == AUTOMATIC => vec![ThemeEvent::Preview(self.pair())],
                Some(SubmenuEvent::Moved(v)) => vec![ThemeEvent::Preview(v)],
                Some(SubmenuEvent::Selected(v)) if v == AUTOMATIC => {
                    self.show_automatic();
                    vec![ThemeEvent::Preview(self.pair())]
                }
                Some(SubmenuEvent::Selected(v)) => vec![ThemeEvent::Done(Some(v))],
                Some(SubmenuEvent::Cancelled) => self.cancel(),
                None => Vec::new(),
            },
            View::Automatic {
                pick: Some((side, menu)),
                list,
            } => match menu.handle_key(k) {
                Some(SubmenuEvent::Moved(v)) => vec![ThemeEvent::Preview(v)],
                Some(SubmenuEvent::Selected(v)) => {
                    let (side, id) = (
                        *side,
                        if *side == Side::Light {
                            "light-theme"
                        } else {
                            "dark-theme"
                        },
                    );
                    list.set_value(id, v.clone());
                    match side {
                        Side::Light => self.light = v,
                        Side::Dark => self.dark = v,
                    }
                    self.close_pick();
                    vec![ThemeEvent::Preview(self.pair())]
                }
                Some(SubmenuEvent::Cancelled) => {
                    self.close_pick();
                    vec![ThemeEvent::Preview(self.pair())]
                }
                None => Vec::new(),
            },
            View::Automatic { list, pick } => match list.handle_key(k) {
                SettingsEvent::OpenSubmenu { id } => {
                    let side = if id == "light-theme" { Side::Light } else { Side::Dark };
                    let menu = self.pick(side);
                    if let View::Automatic { pick, .. } = &mut self.view {
                        *pick = Some((side, Box::new(menu)));
                    }
                    Vec::new()
                }
                SettingsEvent::Changed { id, .. } if id == "apply" => vec![ThemeEvent::Done(Some(self.pair()))],
                SettingsEvent::Changed { id, .. } if id == "single-mode" => {
                    let _ = pick;
                    self.single = if self.terminal_light {
                        self.light.clone()
                    } else {
                        self.dark.clone()
                    };
                    self.show_single();
                    vec![ThemeEvent::Preview(self.single.clone())]
                }
                SettingsEvent::Cancelled => self.cancel(),
                _ => Vec::new(),
            },
        }
    }

    /// Draw in `theme` from now on (the preview of the highlighted theme).
    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        match &mut self.view {
            View::Single(menu) => menu.set_theme(theme.clone()),
            View::Automatic { list, pick } => {
                list.set_theme(theme.settings_list());
                if let Some((_, menu)) = pick {
                    menu.set_theme(theme.clone());
                }
            }
        }
        self.theme = theme;
    }

    fn close_pick(&mut self) {
        if let View::Automatic { pick, .. } = &mut self.view {
            *pick = None;
        }
    }
}

impl ThemeSubmenu {
    /// The keys that carry out a mouse report over the submenu (its rows from the top) on
    /// the list shown, as pi 1.6's lists take the mouse; `None` off the list.
    pub fn mouse_keys(&self, m: &ComponentMouse) -> Option<Vec<KeyEvent>> {
        match &self.view {
            View::Single(menu) => menu.mouse_keys(m),
            View::Automatic { list, pick } => {
                // Under the five heading rows drawn in `render`.
                let below = m.within(&(AUTOMATIC_HEADING..usize::MAX))?;
                match pick {
                    Some((_, menu)) => menu.mouse_keys(&below),
                    None => list.mouse_keys(&below),
                }
            }
        }
    }
}

/// Rows above the light and dark list of the automatic theme.
const AUTOMATIC_HEADING: usize = 5;

impl Component for ThemeSubmenu {
    fn render(&mut self, width: usize, out: &mut Frame) {
        match &mut self.view {
            View::Single(menu) => menu.render(width, out),
            View::Automatic { list, pick } => {
                // The heading stays above the light or dark list, as in pi 1.6.
                let t = &self.theme;
                out.push_line(t.bold("accent", "Automatic Theme"));
                out.push_line(String::new());
                out.push_line(t.paint("muted", "Pick the themes for a light and for a dark terminal."));
                out.push_line(t.paint("muted", "The terminal has to report its appearance for this to work."));
                out.push_line(String::new());
                match pick {
                    Some((_, menu)) => menu.render(width, out),
                    None => list.render(width, out),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> KeyEvent {
        pi_tui::parse_key(s, false).expect("key")
    }

    fn themes() -> Vec<String> {
        ["system", "dark", "light", "nord"].map(String::from).to_vec()
    }

    fn screen(m: &mut ThemeSubmenu) -> String {
        pi_tui::strip_ansi(&pi_tui::render_lines(m, 100).join("\n"))
    }

    const DOWN: &str = "\x1b[B";

    #[test]
    fn system_then_automatic_then_the_rest_with_a_tick_and_live_preview() {
        let mut m = ThemeSubmenu::new("dark", false, themes(), Arc::new(UiTheme::fallback()));
        let s = screen(&mut m);
        let rows: Vec<&str> = s.lines().skip(4).collect();
        assert_eq!(s.lines().next(), Some("Theme"), "{s}");
        assert!(rows[0].starts_with("    system     Made from the colours"), "{s}");
        assert!(rows[1].starts_with("    automatic"), "{s}");
        assert!(rows[2].starts_with("→ ✓ dark"), "{s}");
        assert_eq!(rows[3..5], ["    light", "    nord"], "{s}");
        assert_eq!(m.handle_key(&key(DOWN)), [ThemeEvent::Preview("light".into())]);
        // Escape shows the theme from before and saves nothing.
        assert_eq!(
            m.handle_key(&key("\x1b")),
            [ThemeEvent::Preview("dark".into()), ThemeEvent::Done(None)]
        );
    }

    #[test]
    fn automatic_mode_picks_light_and_dark_and_saves_the_pair() {
        let mut m = ThemeSubmenu::new("system", false, themes(), Arc::new(UiTheme::fallback()));
        // system → automatic previews the pair made of the current theme.
        assert_eq!(m.handle_key(&key(DOWN)), [ThemeEvent::Preview("system/system".into())]);
        assert_eq!(m.handle_key(&key("\r")), [ThemeEvent::Preview("system/system".into())]);
        assert!(screen(&mut m).contains("Automatic Theme"));
        // Light theme → light.
        assert!(m.handle_key(&key("\r")).is_empty());
        assert!(screen(&mut m).contains("Light Theme"));
        m.handle_key(&key(DOWN));
        assert_eq!(m.handle_key(&key(DOWN)), [ThemeEvent::Preview("light".into())]);
        assert_eq!(m.handle_key(&key("\r")), [ThemeEvent::Preview("light/system".into())]);
        // Dark theme → dark, then Apply.
        m.handle_key(&key(DOWN));
        m.handle_key(&key("\r"));
        m.handle_key(&key(DOWN));
        assert_eq!(m.handle_key(&key("\r")), [ThemeEvent::Preview("light/dark".into())]);
        let s = screen(&mut m);
        assert!(s.contains("→ Dark theme   dark"), "{s}");
        m.handle_key(&key(DOWN));
        assert_eq!(m.handle_key(&key("\r")), [ThemeEvent::Done(Some("light/dark".into()))]);
    }

    #[test]
    fn a_saved_pair_opens_in_automatic_mode_and_can_go_back_to_one_theme() {
        let mut m = ThemeSubmenu::new("light/nord", false, themes(), Arc::new(UiTheme::fallback()));
        let s = screen(&mut m);
        assert!(
            s.contains("→ Light theme  light") && s.contains("Dark theme   nord"),
            "{s}"
        );
        for _ in 0..3 {
            m.handle_key(&key(DOWN));
        }
        // A dark terminal: the single list starts on the dark half.
        assert_eq!(m.handle_key(&key("\r")), [ThemeEvent::Preview("nord".into())]);
        assert!(screen(&mut m).contains("→ ✓ nord"));
        assert_eq!(m.handle_key(&key("\r")), [ThemeEvent::Done(Some("nord".into()))]);
    }
}
