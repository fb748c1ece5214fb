//! The `/thinking` selector as pi 1.6 draws it in the dock: a title, the cycle key, a search
//! line, the model's levels with the current one marked `✓` and the saved default
//! `· default`, and the keys. Enter picks for this session; Ctrl+S also saves the default.

use std::sync::Arc;

use pi_ai::ThinkingLevel;
use pi_tui::components::{Input, SelectEvent, SelectItem, SelectList};
use pi_tui::{keybindings, truncate_to_width, Component, ComponentMouse, Frame, InputEvent};

use super::dialogs::DialogResult;
use super::theme::UiTheme;

/// The value prefix of a pick that also saves the default.
pub const SAVE_PREFIX: &str = "save:";

/// Short descriptions of the levels.
pub fn level_description(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "No reasoning",
        ThinkingLevel::Minimal => "Very brief reasoning (~1k tokens)",
        ThinkingLevel::Low => "Light reasoning (~2k tokens)",
        ThinkingLevel::Medium => "Moderate reasoning (~8k tokens)",
        ThinkingLevel::High => "Deep reasoning (~16k tokens)",
        ThinkingLevel::Xhigh => "Extra-high reasoning (~32k tokens)",
        ThinkingLevel::Max => "Maximum reasoning",
    }
}

pub struct ThinkingPicker {
    items: Vec<SelectItem>,
    list: SelectList,
    search: Input,
    theme: Arc<UiTheme>,
    kb: Arc<pi_tui::Keybindings>,
    result: Option<DialogResult>,
    /// The rows the list took in the last render, for the mouse.
    list_rows: std::ops::Range<usize>,
    /// The search field's row in the last render.
    search_row: usize,
}

impl ThinkingPicker {
    /// `levels` the model supports, `current` the session's, `default` the saved one (pi
    /// marks its built-in default when none is saved).
    pub fn new(
        levels: &[ThinkingLevel],
        current: ThinkingLevel,
        default: ThinkingLevel,
        theme: Arc<UiTheme>,
        kb: Arc<pi_tui::Keybindings>,
    ) -> Self {
        let items: Vec<SelectItem> = levels
            .iter()
            .map(|&l| {
                let mark = if l == current { "✓ " } else { "  " };
                let mut description = level_description(l).to_string();
                if l == default {
                    description.push_str(" · default");
                }
                SelectItem::new(l.as_str())
                    .with_label(format!("{mark}{}", l.as_str()))
                    .with_description(description)
            })
            .collect();
        let list = Self::list(&theme, items.clone(), Some(current.as_str()));
        ThinkingPicker {
            items,
            list,
            search: Input::new("> "),
            theme,
            kb,
            result: None,
            list_rows: 0..0,
            search_row: 0,
        }
    }

    /// Every row shown at once, the names in a column 12 to 32 cells wide as pi's.
    fn list(theme: &UiTheme, items: Vec<SelectItem>, selected: Option<&str>) -> SelectList {
        let at = selected.and_then(|v| items.iter().position(|i| i.value == v));
        let mut list = SelectList::new(items.clone(), items.len().max(1), theme.select_list());
        list.set_primary_column(12, 32);
        list.set_no_match_text("  No matching items");
        if let Some(i) = at {
            list.set_selected_index(i);
        }
        list
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }

    /// The rows matching the search over level and description, the highlight kept.
    fn filter(&mut self) {
        let query = self.search.value().to_string();
        let keys: Vec<String> = self
            .items
            .iter()
            .map(|i| format!("{} {}", i.value, i.description.as_deref().unwrap_or("")))
            .collect();
        let shown: Vec<SelectItem> = if query.is_empty() {
            self.items.clone()
        } else {
            pi_tui::fuzzy::fuzzy_filter(&keys, &query, |k| k.as_str())
                .into_iter()
                .map(|i| self.items[i].clone())
                .collect()
        };
        let selected = self.list.selected_item().map(|i| i.value.clone());
        self.list = Self::list(&self.theme, shown, selected.as_deref());
    }
}

impl Component for ThinkingPicker {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let line = |s: String| truncate_to_width(&s, width, "…");
        let top = out.len();
        out.push_line(t.paint("border", &"─".repeat(width)));
        out.push_line(String::new());
        out.push_line(line("Thinking Level".into()));
        out.push_line(String::new());
        out.push_line(line(format!(
            "{} cycles thinking levels in-session",
            super::keys::key_display(&self.kb, "app.thinking.cycle")
        )));
        out.push_line(String::new());
        self.search_row = out.len() - top;
        self.search.render(width, out);
        out.push_line(String::new());
        let start = out.len() - top;
        self.list.render(width, out);
        self.list_rows = start..out.len() - top;
        out.push_line(String::new());
        out.push_line(line(t.paint(
            "dim",
            &format!(
                "  Enter to select · {} to set as default · Escape/Ctrl+C to cancel",
                super::keys::key_display(&self.kb, "app.thinking.save")
            ),
        )));
        out.push_line(t.paint("border", &"─".repeat(width)));
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let kb = keybindings();
        if self.kb.matches(k, "app.thinking.save") {
            if let Some(item) = self.list.selected_item() {
                self.result = Some(DialogResult::Done(format!("{SAVE_PREFIX}{}", item.value)));
            }
            return true;
        }
        let nav = [
            "tui.select.up",
            "tui.select.down",
            "tui.select.confirm",
            "tui.select.cancel",
        ];
        if nav.iter().any(|id| kb.matches(k, id)) {
            match self.list.handle_key(k) {
                SelectEvent::Selected(item) => self.result = Some(DialogResult::Done(item.value)),
                SelectEvent::Cancelled => self.result = Some(DialogResult::Cancelled),
                _ => {}
            }
            return true;
        }
        let before = self.search.value().to_string();
        self.search.handle_key(k);
        if self.search.value() != before {
            self.filter();
        }
        true
    }

    fn set_focused(&mut self, focused: bool) {
        self.search.set_focused(focused);
    }

    /// The list takes the mouse as pi 1.6's thinking selector does: a press picks a level, a
    /// click chooses it, the wheel moves the pick.
    fn handle_mouse(&mut self, m: &ComponentMouse) -> bool {
        let row = self.search_row;
        if let Some(at) = m.within(&(row..row + 1)) {
            return self.search.handle_mouse(&at);
        }
        let Some(keys) = m
            .within(&self.list_rows)
            .and_then(|inner| self.list.mouse_keys(&inner, "tui.select.confirm"))
        else {
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

    fn keybindings() -> pi_tui::Keybindings {
        let mut defs = pi_tui::TUI_KEYBINDINGS.to_vec();
        defs.extend_from_slice(crate::keys::APP_KEYBINDINGS);
        pi_tui::Keybindings::new(defs, Default::default())
    }

    fn key(p: &mut ThinkingPicker, bytes: &str) {
        p.handle_input(&InputEvent::Key(pi_tui::parse_key(bytes, false).expect("key")));
    }

    fn text(p: &mut ThinkingPicker) -> String {
        let mut f = Frame::default();
        p.render(100, &mut f);
        pi_tui::strip_ansi(&f.to_vec().join("\n"))
    }

    #[test]
    fn rows_marks_search_and_ctrl_s() {
        use ThinkingLevel::*;
        let mut p = ThinkingPicker::new(
            &[Off, Low, Medium, High],
            Medium,
            High,
            Arc::new(UiTheme::fallback()),
            Arc::new(keybindings()),
        );
        let shown = text(&mut p);
        assert!(shown.contains("\n    off       No reasoning\n"), "{shown}");
        assert!(
            shown.contains("→ ✓ medium    Moderate reasoning (~8k tokens)\n"),
            "{shown}"
        );
        assert!(
            shown.contains("    high      Deep reasoning (~16k tokens) · default"),
            "{shown}"
        );
        assert!(shown.contains("Shift+Tab cycles thinking levels in-session"), "{shown}");
        assert!(shown.contains("Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel"));
        // Typing filters over the level and its description.
        key(&mut p, "d");
        key(&mut p, "e");
        key(&mut p, "e");
        key(&mut p, "p");
        let shown = text(&mut p);
        assert!(shown.contains("→   high"), "{shown}");
        assert!(!shown.contains("off"), "{shown}");
        key(&mut p, "\x13");
        assert_eq!(p.take_result(), Some(DialogResult::Done("save:high".into())));
        key(&mut p, "\r");
        assert_eq!(p.take_result(), Some(DialogResult::Done("high".into())));
    }
}
