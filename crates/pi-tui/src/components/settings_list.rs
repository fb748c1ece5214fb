//! `SettingsList`: label/value rows; Enter or Space cycles the highlighted row's value, or
//! asks the caller to open a submenu for rows without a fixed value list.

use crate::component::{Component, Frame};
use crate::component_mouse::{list_keys, ComponentMouse};
use crate::input::InputEvent;
use crate::keybindings::keybindings;
use crate::keys::{Key, KeyEvent};
use crate::style::Style;
use crate::width::{pad_to_width, truncate_to_width, visible_width, wrap_text};

/// One setting row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SettingItem {
    pub id: String,
    pub label: String,
    pub description: Option<String>,
    pub value: String,
    /// Values Enter cycles through; empty means the row opens a submenu.
    pub values: Vec<String>,
}

/// Colours of a settings list.
#[derive(Debug, Clone, Copy, Default)]
pub struct SettingsListTheme {
    pub label: Style,
    pub selected_label: Style,
    pub value: Style,
    pub selected_value: Style,
    pub description: Style,
    pub hint: Style,
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsEvent {
    Changed {
        id: String,
        value: String,
    },
    /// A row without a value list was activated: the caller shows its own selector.
    OpenSubmenu {
        id: String,
    },
    Cancelled,
    Handled,
    Ignored,
}

#[derive(Debug, Clone)]
pub struct SettingsList {
    items: Vec<SettingItem>,
    selected: usize,
    max_visible: usize,
    theme: SettingsListTheme,
    hint: String,
    last_event: Option<SettingsEvent>,
    /// The label column is at least this wide (a filtered list keeps the full list's column).
    min_label_width: usize,
}

impl SettingsList {
    pub fn new(items: Vec<SettingItem>, max_visible: usize, theme: SettingsListTheme) -> Self {
        SettingsList {
            items,
            selected: 0,
            max_visible: max_visible.max(1),
            theme,
            hint: "Enter/Space to change · Esc to close".to_string(),
            last_event: None,
            min_label_width: 0,
        }
    }

    /// Keep the label column at least `width` columns wide.
    pub fn set_min_label_width(&mut self, width: usize) {
        self.min_label_width = width;
    }

    /// Draw in other colours from now on (a theme change while the list is open).
    pub fn set_theme(&mut self, theme: SettingsListTheme) {
        self.theme = theme;
    }

    pub fn set_hint(&mut self, hint: impl Into<String>) {
        self.hint = hint.into();
    }

    /// Set a row's value from outside (e.g. after a submenu).
    pub fn set_value(&mut self, id: &str, value: impl Into<String>) {
        if let Some(it) = self.items.iter_mut().find(|i| i.id == id) {
            it.value = value.into();
        }
    }

    pub fn items(&self) -> &[SettingItem] {
        &self.items
    }

    pub fn selected_index(&self) -> usize {
        self.selected
    }

    pub fn take_event(&mut self) -> Option<SettingsEvent> {
        self.last_event.take()
    }

    /// The items shown: a window of `max_visible` around the selected one.
    fn window(&self) -> (usize, usize) {
        let n = self.items.len();
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(n.saturating_sub(self.max_visible));
        (start, (start + self.max_visible).min(n))
    }

    /// The keys that carry out a mouse report over the list's rows, as pi 1.6's settings list
    /// takes it: a press picks a row, a click changes it (as Enter does), and the wheel
    /// anywhere over the list (its description and hint too) moves the pick.
    pub fn mouse_keys(&self, m: &ComponentMouse) -> Option<Vec<KeyEvent>> {
        let (start, end) = self.window();
        let height = if m.is_wheel() { usize::MAX } else { end - start };
        list_keys(
            m,
            self.selected,
            start..end,
            self.items.len(),
            height,
            "tui.select.confirm",
        )
    }

    pub fn handle_key(&mut self, key: &KeyEvent) -> SettingsEvent {
        let kb = keybindings();
        let n = self.items.len();
        if n == 0 {
            return if kb.matches(key, "tui.select.cancel") {
                SettingsEvent::Cancelled
            } else {
                SettingsEvent::Ignored
            };
        }
        if kb.matches(key, "tui.select.up") {
            self.selected = if self.selected == 0 { n - 1 } else { self.selected - 1 };
            SettingsEvent::Handled
        } else if kb.matches(key, "tui.select.down") {
            self.selected = (self.selected + 1) % n;
            SettingsEvent::Handled
        } else if kb.matches(key, "tui.select.confirm") || (key.key == Key::Char(' ') && key.mods.is_empty()) {
            let it = &mut self.items[self.selected];
            if it.values.is_empty() {
                return SettingsEvent::OpenSubmenu { id: it.id.clone() };
            }
            let pos = it.values.iter().position(|v| *v == it.value);
            let next = pos.map_or(0, |p| (p + 1) % it.values.len());
            it.value = it.values[next].clone();
            SettingsEvent::Changed {
                id: it.id.clone(),
                value: it.value.clone(),
            }
        } else if kb.matches(key, "tui.select.cancel") {
            SettingsEvent::Cancelled
        } else {
            SettingsEvent::Ignored
        }
    }
}

impl Component for SettingsList {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let n = self.items.len();
        let (start, end) = self.window();
        let label_w = self
            .items
            .iter()
            .map(|i| visible_width(&i.label))
            .max()
            .unwrap_or(0)
            .max(self.min_label_width)
            .min(width / 2)
            + 2;
        for i in start..end {
            let it = &self.items[i];
            let sel = i == self.selected;
            // The cursor takes the selected row's colour (pi's accent).
            let prefix = if sel {
                self.theme.selected_label.paint("→ ")
            } else {
                "  ".to_string()
            };
            let label = pad_to_width(&truncate_to_width(&it.label, label_w.saturating_sub(2), ""), label_w);
            let value_w = width.saturating_sub(2 + label_w);
            let value = truncate_to_width(&it.value, value_w, "");
            let (ls, vs) = if sel {
                (self.theme.selected_label, self.theme.selected_value)
            } else {
                (self.theme.label, self.theme.value)
            };
            out.push_line(format!("{prefix}{}{}", ls.paint(&label), vs.paint(&value)));
        }
        if start > 0 || end < n {
            out.push_line(self.theme.hint.paint(&format!("  ({}/{})", self.selected + 1, n)));
        }
        if let Some(desc) = self.items.get(self.selected).and_then(|i| i.description.as_deref()) {
            out.push_line(String::new());
            for l in wrap_text(desc, width.saturating_sub(2).max(1)) {
                out.push_line(format!("  {}", self.theme.description.paint(&l)));
            }
        }
        out.push_line(String::new());
        out.push_line(truncate_to_width(
            &format!("  {}", self.theme.hint.paint(&self.hint)),
            width,
            "",
        ));
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let ev = self.handle_key(k);
        let used = ev != SettingsEvent::Ignored;
        if used {
            self.last_event = Some(ev);
        }
        used
    }

    fn handle_mouse(&mut self, m: &ComponentMouse) -> bool {
        let Some(keys) = self.mouse_keys(m) else {
            return false;
        };
        for k in keys {
            self.handle_input(&InputEvent::Key(k));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::render_lines;
    use crate::keys::parse_key;

    #[test]
    fn cycles_values() {
        let items = vec![
            SettingItem {
                id: "auto".into(),
                label: "Auto-compact".into(),
                description: Some("Compact when the context fills".into()),
                value: "true".into(),
                values: vec!["true".into(), "false".into()],
            },
            SettingItem {
                id: "theme".into(),
                label: "Theme".into(),
                value: "dark".into(),
                ..Default::default()
            },
        ];
        let mut s = SettingsList::new(items, 10, SettingsListTheme::default());
        let lines = render_lines(&mut s, 40);
        assert_eq!(lines[0], "→ Auto-compact  true");
        assert_eq!(lines[1], "  Theme         dark");
        assert_eq!(lines[3], "  Compact when the context fills");
        let key = |s: &str| parse_key(s, false).expect("key");
        assert_eq!(
            s.handle_key(&key("\r")),
            SettingsEvent::Changed {
                id: "auto".into(),
                value: "false".into()
            }
        );
        s.handle_key(&key("\x1b[B"));
        assert_eq!(
            s.handle_key(&key(" ")),
            SettingsEvent::OpenSubmenu { id: "theme".into() }
        );
    }
}
