//! The list screen `/settings` submenus share (theme, per-model thinking level): a bold title,
//! a muted description, an optional filter line, the choices and a key hint, drawn from the
//! first column as pi 1.6 draws them between the menu's two rules. It only reports keys'
//! outcomes; its owner decides what they mean.

use std::sync::Arc;

use pi_tui::components::{Input, SelectEvent, SelectItem, SelectList};
use pi_tui::{keybindings, strip_ansi, truncate_to_width, wrap_text, Component, ComponentMouse, Frame, KeyEvent};

use super::theme::UiTheme;

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubmenuEvent {
    /// Enter on the choice with this value.
    Selected(String),
    /// Escape.
    Cancelled,
    /// The highlight moved to the choice with this value.
    Moved(String),
}

/// The most rows shown at once, as in pi 1.6.
const MAX_VISIBLE: usize = 10;

pub struct SelectSubmenu {
    title: String,
    description: Option<String>,
    items: Vec<SelectItem>,
    search: Option<Input>,
    list: SelectList,
    primary: (usize, usize),
    theme: Arc<UiTheme>,
    /// The rows the list took in the last render, for the mouse.
    list_rows: std::ops::Range<usize>,
    /// The search field's row in the last render.
    search_row: usize,
}

impl SelectSubmenu {
    /// A list of `items` with `current` highlighted (the first choice when it is not one).
    pub fn new(
        title: impl Into<String>,
        description: Option<String>,
        items: Vec<SelectItem>,
        current: Option<&str>,
        theme: Arc<UiTheme>,
    ) -> Self {
        let mut menu = SelectSubmenu {
            title: title.into(),
            description,
            list: SelectList::new(Vec::new(), 1, theme.select_list()),
            items,
            search: None,
            primary: (12, 32),
            theme,
            list_rows: 0..0,
            search_row: 0,
        };
        menu.build_list(current);
        menu
    }

    /// Typing filters the choices (by label and description).
    pub fn searchable(mut self) -> Self {
        let mut input = Input::new("> ");
        input.set_focused(true);
        self.search = Some(input);
        self
    }

    /// Bounds of the first column's width (pi 1.6: 12 to 32; the model list 12 to 46).
    pub fn with_primary_column(mut self, min: usize, max: usize) -> Self {
        self.primary = (min, max);
        let current = self.selected_value().map(str::to_string);
        self.build_list(current.as_deref());
        self
    }

    /// Draw in `theme` from now on, keeping the filter and the highlight.
    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        self.theme = theme;
        let current = self.selected_value().map(str::to_string);
        self.build_list(current.as_deref());
    }

    /// The highlighted choice's value.
    pub fn selected_value(&self) -> Option<&str> {
        self.list.selected_item().map(|i| i.value.as_str())
    }

    /// Show the choices matching the filter, highlighting `preselect` when it is among them.
    fn build_list(&mut self, preselect: Option<&str>) {
        let query = self.search.as_ref().map(|s| s.value().to_string()).unwrap_or_default();
        let shown: Vec<SelectItem> = if query.is_empty() {
            self.items.clone()
        } else {
            let keys: Vec<String> = self
                .items
                .iter()
                .map(|i| {
                    let label = i.label.as_deref().unwrap_or(&i.value);
                    strip_ansi(&format!("{label} {}", i.description.as_deref().unwrap_or("")))
                })
                .collect();
            pi_tui::fuzzy::fuzzy_filter(&keys, &query, String::as_str)
                .into_iter()
                .map(|i| self.items[i].clone())
                .collect()
        };
        let at = preselect.and_then(|v| shown.iter().position(|i| i.value == v));
        let mut list = SelectList::new(
            shown.clone(),
            shown.len().clamp(1, MAX_VISIBLE),
            self.theme.select_list(),
        );
        list.set_primary_column(self.primary.0, self.primary.1);
        list.set_no_match_text("  No matching items");
        if let Some(i) = at {
            list.set_selected_index(i);
        }
        self.list = list;
    }

    /// Handle a key; what it decided, if anything.
    pub fn handle_key(&mut self, k: &KeyEvent) -> Option<SubmenuEvent> {
        let kb = keybindings();
        let list_key = [
            "tui.select.up",
            "tui.select.down",
            "tui.select.pageUp",
            "tui.select.pageDown",
            "tui.select.confirm",
            "tui.select.cancel",
        ]
        .iter()
        .any(|id| kb.matches(k, id));
        if !list_key {
            // Anything else edits the filter (cursor keys leave it and the highlight alone).
            let search = self.search.as_mut()?;
            let before = search.value().to_string();
            search.handle_key(k);
            if search.value() != before {
                self.build_list(None);
            }
            return None;
        }
        match self.list.handle_key(k) {
            SelectEvent::Selected(it) => Some(SubmenuEvent::Selected(it.value)),
            SelectEvent::Cancelled => Some(SubmenuEvent::Cancelled),
            SelectEvent::Changed(it) => Some(SubmenuEvent::Moved(it.value)),
            _ => None,
        }
    }
}

impl SelectSubmenu {
    /// The keys that carry out a mouse report over the submenu (its rows from the top) on
    /// its list, as pi 1.6's lists take the mouse; `None` off the list.
    pub fn mouse_keys(&self, m: &ComponentMouse) -> Option<Vec<KeyEvent>> {
        self.list.mouse_keys(&m.within(&self.list_rows)?, "tui.select.confirm")
    }

    /// A press on the search field (of a searchable submenu) puts its cursor there.
    pub fn search_mouse(&mut self, m: &ComponentMouse) -> bool {
        let row = self.search_row;
        match (&mut self.search, m.within(&(row..row + 1))) {
            (Some(search), Some(at)) => search.handle_mouse(&at),
            _ => false,
        }
    }
}

impl Component for SelectSubmenu {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let width = width.max(1);
        let top = out.len();
        out.push_line(truncate_to_width(&t.bold("accent", &self.title), width, ""));
        if let Some(d) = &self.description {
            out.push_line(String::new());
            for l in wrap_text(d, width) {
                out.push_line(t.paint("muted", &l));
            }
        }
        if let Some(s) = &mut self.search {
            out.push_line(String::new());
            self.search_row = out.len() - top;
            s.render(width, out);
        }
        out.push_line(String::new());
        let start = out.len() - top;
        self.list.render(width, out);
        self.list_rows = start..out.len() - top;
        out.push_line(String::new());
        let hint = if self.search.is_some() {
            "  Type to filter · Enter to select · Esc to go back"
        } else {
            "  Enter to select · Esc to go back"
        };
        out.push_line(truncate_to_width(&t.paint("dim", hint), width, ""));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> KeyEvent {
        pi_tui::parse_key(s, false).expect("key")
    }

    fn items() -> Vec<SelectItem> {
        vec![
            SelectItem::new("system").with_description("from the terminal"),
            SelectItem::new("dark"),
            SelectItem::new("light"),
        ]
    }

    #[test]
    fn draws_from_the_first_column_and_reports_moves() {
        let theme = Arc::new(UiTheme::fallback());
        let mut m = SelectSubmenu::new("Theme", Some("Pick one.".into()), items(), Some("dark"), theme);
        let lines: Vec<String> = pi_tui::render_lines(&mut m, 60).iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(lines[0], "Theme");
        assert_eq!(lines[2], "Pick one.");
        assert!(lines[5].starts_with("→ dark"), "{lines:?}");
        assert_eq!(
            lines.last().map(String::as_str),
            Some("  Enter to select · Esc to go back")
        );
        assert_eq!(m.handle_key(&key("\x1b[B")), Some(SubmenuEvent::Moved("light".into())));
        assert_eq!(m.handle_key(&key("\r")), Some(SubmenuEvent::Selected("light".into())));
        assert_eq!(m.handle_key(&key("\x1b")), Some(SubmenuEvent::Cancelled));
        // Not searchable: letters do nothing.
        assert_eq!(m.handle_key(&key("x")), None);
        assert_eq!(m.selected_value(), Some("light"));
    }

    #[test]
    fn a_searchable_list_filters_by_label_and_description() {
        let theme = Arc::new(UiTheme::fallback());
        let mut m = SelectSubmenu::new("Models", None, items(), None, theme).searchable();
        for c in ["t", "e", "r", "m"] {
            m.handle_key(&key(c));
        }
        assert_eq!(m.selected_value(), Some("system"));
        let text = pi_tui::render_lines(&mut m, 60).join("\n");
        assert!(!strip_ansi(&text).contains("light"), "{text}");
        assert!(strip_ansi(&text).contains("Type to filter"), "{text}");
    }
}
