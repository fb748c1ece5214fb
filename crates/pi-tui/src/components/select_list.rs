//! `SelectList`: a scrolling list of items with optional descriptions, filterable by prefix
//! or fuzzily, driven by the `tui.select.*` keybindings.

use crate::component::{Component, Frame};
use crate::component_mouse::{list_keys, ComponentMouse};
use crate::fuzzy::FuzzyMatcher;
use crate::input::InputEvent;
use crate::keybindings::keybindings;
use crate::keys::KeyEvent;
use crate::style::Style;
use crate::width::{truncate_to_width, visible_width};

const PRIMARY_GAP: usize = 2;
const MIN_DESCRIPTION_WIDTH: usize = 10;

/// One selectable entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectItem {
    pub value: String,
    /// Shown instead of `value` when set.
    pub label: Option<String>,
    pub description: Option<String>,
}

impl SelectItem {
    pub fn new(value: impl Into<String>) -> Self {
        SelectItem {
            value: value.into(),
            ..Default::default()
        }
    }

    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    #[must_use]
    pub fn with_description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    fn display(&self) -> &str {
        self.label.as_deref().filter(|l| !l.is_empty()).unwrap_or(&self.value)
    }
}

/// Colours of a select list.
#[derive(Debug, Clone, Copy, Default)]
pub struct SelectListTheme {
    pub selected: Style,
    pub description: Style,
    pub scroll_info: Style,
    pub no_match: Style,
}

/// What a key did to the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectEvent {
    /// Enter on this item.
    Selected(SelectItem),
    Cancelled,
    /// The highlighted item changed.
    Changed(SelectItem),
    /// Key not used.
    Ignored,
    /// Key used, nothing to report.
    Handled,
}

/// A list with a highlighted row.
#[derive(Debug, Clone)]
pub struct SelectList {
    items: Vec<SelectItem>,
    filtered: Vec<usize>,
    selected: usize,
    max_visible: usize,
    theme: SelectListTheme,
    min_primary: usize,
    max_primary: usize,
    no_match_text: String,
    last_event: Option<SelectEvent>,
}

impl SelectList {
    pub fn new(items: Vec<SelectItem>, max_visible: usize, theme: SelectListTheme) -> Self {
        let filtered = (0..items.len()).collect();
        SelectList {
            items,
            filtered,
            selected: 0,
            max_visible: max_visible.max(1),
            theme,
            min_primary: 32,
            max_primary: 32,
            no_match_text: "  No matching commands".to_string(),
            last_event: None,
        }
    }

    /// Bounds of the first column's width (default 32).
    pub fn set_primary_column(&mut self, min: usize, max: usize) {
        self.min_primary = min.min(max).max(1);
        self.max_primary = min.max(max).max(1);
    }

    pub fn set_no_match_text(&mut self, text: impl Into<String>) {
        self.no_match_text = text.into();
    }

    pub fn set_items(&mut self, items: Vec<SelectItem>) {
        self.items = items;
        self.filtered = (0..self.items.len()).collect();
        self.selected = 0;
    }

    /// Keep items whose value starts with `prefix` (case-insensitive).
    pub fn set_filter(&mut self, prefix: &str) {
        let p = prefix.to_lowercase();
        self.filtered = (0..self.items.len())
            .filter(|&i| self.items[i].value.to_lowercase().starts_with(&p))
            .collect();
        self.selected = 0;
    }

    /// Keep items fuzzily matching `query` (label or value), best first.
    pub fn set_fuzzy_filter(&mut self, query: &str) {
        let mut m = FuzzyMatcher::new(false);
        self.filtered = m.filter(&self.items, query, |it| it.display());
        self.selected = 0;
    }

    pub fn set_selected_index(&mut self, i: usize) {
        self.selected = i.min(self.filtered.len().saturating_sub(1));
    }

    pub fn selected_index(&self) -> usize {
        self.selected
    }

    pub fn selected_item(&self) -> Option<&SelectItem> {
        self.filtered.get(self.selected).map(|&i| &self.items[i])
    }

    pub fn visible_count(&self) -> usize {
        self.filtered.len()
    }

    /// The last event produced through `Component::handle_input`.
    pub fn take_event(&mut self) -> Option<SelectEvent> {
        self.last_event.take()
    }

    pub fn handle_key(&mut self, key: &KeyEvent) -> SelectEvent {
        let kb = keybindings();
        let n = self.filtered.len();
        if kb.matches(key, "tui.select.up") {
            if n == 0 {
                return SelectEvent::Handled;
            }
            self.selected = if self.selected == 0 { n - 1 } else { self.selected - 1 };
            self.changed()
        } else if kb.matches(key, "tui.select.down") {
            if n == 0 {
                return SelectEvent::Handled;
            }
            self.selected = if self.selected + 1 >= n { 0 } else { self.selected + 1 };
            self.changed()
        } else if kb.matches(key, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(self.max_visible);
            self.changed()
        } else if kb.matches(key, "tui.select.pageDown") {
            self.selected = (self.selected + self.max_visible).min(n.saturating_sub(1));
            self.changed()
        } else if kb.matches(key, "tui.select.confirm") {
            match self.selected_item() {
                Some(it) => SelectEvent::Selected(it.clone()),
                None => SelectEvent::Handled,
            }
        } else if kb.matches(key, "tui.select.cancel") {
            SelectEvent::Cancelled
        } else {
            SelectEvent::Ignored
        }
    }

    /// The keys that carry out a mouse report over the list's rows (see
    /// [`crate::component_mouse::list_keys`]); a click runs `activate`.
    pub fn mouse_keys(&self, m: &ComponentMouse, activate: &str) -> Option<Vec<KeyEvent>> {
        let (start, end) = self.window();
        let n = self.filtered.len();
        let height = end - start + usize::from(start > 0 || end < n);
        list_keys(m, self.selected, start..end, n, height, activate)
    }

    /// The items shown: a window of `max_visible` around the selected one.
    fn window(&self) -> (usize, usize) {
        let n = self.filtered.len();
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(n.saturating_sub(self.max_visible));
        (start, (start + self.max_visible).min(n))
    }

    fn changed(&self) -> SelectEvent {
        match self.selected_item() {
            Some(it) => SelectEvent::Changed(it.clone()),
            None => SelectEvent::Handled,
        }
    }

    fn primary_width(&self) -> usize {
        let widest = self
            .filtered
            .iter()
            .map(|&i| visible_width(self.items[i].display()) + PRIMARY_GAP)
            .max()
            .unwrap_or(0);
        widest.clamp(self.min_primary, self.max_primary)
    }

    fn render_item(&self, item: &SelectItem, selected: bool, width: usize, primary: usize) -> String {
        let prefix = if selected { "→ " } else { "  " };
        let pw = 2;
        let desc = item
            .description
            .as_deref()
            .map(|d| {
                d.split(['\r', '\n'])
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty());
        if let Some(desc) = desc.filter(|_| width > 40) {
            let col = primary.min(width.saturating_sub(pw + 4)).max(1);
            let max_primary = col.saturating_sub(PRIMARY_GAP).max(1);
            let value = truncate_to_width(item.display(), max_primary, "");
            let vw = visible_width(&value);
            let spacing = " ".repeat(col.saturating_sub(vw).max(1));
            let desc_start = pw + vw + spacing.len();
            let remaining = width.saturating_sub(desc_start + 2);
            if remaining > MIN_DESCRIPTION_WIDTH {
                let d = truncate_to_width(&desc, remaining, "");
                if selected {
                    return self.theme.selected.paint(&format!("{prefix}{value}{spacing}{d}"));
                }
                return format!(
                    "{prefix}{value}{}",
                    self.theme.description.paint(&format!("{spacing}{d}"))
                );
            }
        }
        let max = width.saturating_sub(pw + 2);
        let value = truncate_to_width(item.display(), max, "");
        if selected {
            self.theme.selected.paint(&format!("{prefix}{value}"))
        } else {
            format!("{prefix}{value}")
        }
    }
}

impl Component for SelectList {
    fn render(&mut self, width: usize, out: &mut Frame) {
        if self.filtered.is_empty() {
            out.push_line(truncate_to_width(
                &self.theme.no_match.paint(&self.no_match_text),
                width,
                "",
            ));
            return;
        }
        let primary = self.primary_width();
        let n = self.filtered.len();
        let (start, end) = self.window();
        for i in start..end {
            let item = &self.items[self.filtered[i]];
            out.push_line(self.render_item(item, i == self.selected, width, primary));
        }
        if start > 0 || end < n {
            let info = format!("  ({}/{})", self.selected + 1, n);
            out.push_line(
                self.theme
                    .scroll_info
                    .paint(&truncate_to_width(&info, width.saturating_sub(2), "")),
            );
        }
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let ev = self.handle_key(k);
        let used = ev != SelectEvent::Ignored;
        if used {
            self.last_event = Some(ev);
        }
        used
    }

    fn handle_mouse(&mut self, m: &ComponentMouse) -> bool {
        let Some(keys) = self.mouse_keys(m, "tui.select.confirm") else {
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

    fn items() -> Vec<SelectItem> {
        (1..=6)
            .map(|i| SelectItem::new(format!("item{i}")).with_description(format!("desc {i}")))
            .collect()
    }

    #[test]
    fn renders_window_and_scroll_info() {
        let mut l = SelectList::new(items(), 3, SelectListTheme::default());
        let lines = render_lines(&mut l, 60);
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("→ item1"));
        assert!(lines[0].contains("desc 1"));
        assert_eq!(lines[3], "  (1/6)");
        let lines = render_lines(&mut l, 20);
        assert_eq!(lines[1], "  item2");
    }

    #[test]
    fn keys_move_and_select() {
        let mut l = SelectList::new(items(), 3, SelectListTheme::default());
        let key = |s: &str| parse_key(s, false).expect("key");
        assert_eq!(l.handle_key(&key("\x1b[A")), SelectEvent::Changed(items()[5].clone()));
        assert_eq!(l.handle_key(&key("\x1b[B")), SelectEvent::Changed(items()[0].clone()));
        l.handle_key(&key("\x1b[B"));
        assert_eq!(l.handle_key(&key("\r")), SelectEvent::Selected(items()[1].clone()));
        assert_eq!(l.handle_key(&key("\x1b")), SelectEvent::Cancelled);
        assert_eq!(l.handle_key(&key("x")), SelectEvent::Ignored);
    }

    #[test]
    fn filters() {
        let mut l = SelectList::new(items(), 3, SelectListTheme::default());
        l.set_filter("ITEM3");
        assert_eq!(l.visible_count(), 1);
        l.set_filter("zzz");
        assert_eq!(render_lines(&mut l, 40), ["  No matching commands"]);
        l.set_fuzzy_filter("i5");
        assert_eq!(l.selected_item().map(|i| i.value.as_str()), Some("item5"));
    }
}
