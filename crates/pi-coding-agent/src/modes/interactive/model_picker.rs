//! The model picker (`/model`, Ctrl+L) as pi 1.6 draws it in the dock: a hint (or the
//! all/scoped switch when scoped models exist), a search line, ten rows with the current
//! model marked `✓` and the saved default `· default`, the highlighted model's name, and the
//! keys. Enter picks for this session; Ctrl+S also saves the choice as the default.

use std::sync::Arc;

use pi_ai::Model;
use pi_tui::components::Input;
use pi_tui::{keybindings, truncate_to_width, Component, Frame, InputEvent};

use super::dialogs::DialogResult;
use super::theme::UiTheme;

const MAX_VISIBLE: usize = 10;
/// The value prefix of a pick that also saves the default.
pub const SAVE_PREFIX: &str = "save:";

#[derive(Clone)]
struct Row {
    provider: String,
    id: String,
    name: String,
}

impl Row {
    fn key(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}

/// The name when it says more than the id (`Mock Model` for `mock-model` says nothing new).
fn distinct_name(id: &str, name: &str) -> Option<String> {
    let words = |s: &str| -> Vec<String> {
        s.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let id_words = words(id);
    let compact: String = id_words.concat();
    let covered = |w: &String| id_words.contains(w) || (w.chars().count() > 1 && compact.contains(w.as_str()));
    if words(name).iter().all(covered) {
        None
    } else {
        Some(name.to_string())
    }
}

pub struct ModelPicker {
    all: Vec<Row>,
    scoped: Vec<Row>,
    scoped_view: bool,
    shown: Vec<Row>,
    selected: usize,
    current: Option<String>,
    default: Option<String>,
    search: Input,
    theme: Arc<UiTheme>,
    kb: Arc<pi_tui::Keybindings>,
    save_key: String,
    result: Option<DialogResult>,
}

impl ModelPicker {
    /// `models` with credentials; `scoped` the Ctrl+P set (empty: none); `default` the saved
    /// `provider/id`.
    pub fn new(
        models: Vec<Model>,
        scoped: Vec<Model>,
        current: Option<&Model>,
        default: Option<String>,
        filter: Option<&str>,
        theme: Arc<UiTheme>,
        kb: Arc<pi_tui::Keybindings>,
    ) -> Self {
        let save_key = super::keys::key_display(&kb, "app.models.save");
        let row = |m: &Model| Row {
            provider: m.provider.clone(),
            id: m.id.clone(),
            name: m.name.clone(),
        };
        let current = current.map(|m| format!("{}/{}", m.provider, m.id));
        let mut all: Vec<Row> = models.iter().map(row).collect();
        // The current model, the saved default, then by provider (stable within one).
        let rank = |r: &Row| {
            let key = r.key();
            if Some(&key) == current.as_ref() {
                0
            } else if Some(&key) == default.as_ref() {
                1
            } else {
                2
            }
        };
        all.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.provider.cmp(&b.provider)));
        let scoped: Vec<Row> = scoped.iter().map(row).collect();
        let mut search = Input::new("> ");
        if let Some(f) = filter {
            search.set_value(f);
        }
        let mut picker = ModelPicker {
            scoped_view: !scoped.is_empty(),
            all,
            scoped,
            shown: Vec::new(),
            selected: 0,
            current,
            default,
            search,
            theme,
            kb,
            save_key,
            result: None,
        };
        picker.filter();
        picker
    }

    #[cfg(test)]
    pub fn shown_count(&self) -> usize {
        self.shown.len()
    }

    #[cfg(test)]
    pub fn selected_key(&self) -> Option<String> {
        self.shown.get(self.selected).map(Row::key)
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }

    fn active(&self) -> &[Row] {
        if self.scoped_view {
            &self.scoped
        } else {
            &self.all
        }
    }

    /// Show the rows matching the search; without one, start on the current model.
    fn filter(&mut self) {
        let query = self.search.value().to_string();
        let rows = self.active().to_vec();
        if query.is_empty() {
            self.selected = rows.iter().position(|r| Some(r.key()) == self.current).unwrap_or(0);
            self.shown = rows;
            return;
        }
        let default = self.default.clone();
        let text = |r: &Row| {
            let d = if Some(r.key()) == default { " default" } else { "" };
            format!(
                "{} {}/{} {} {} {}{d}",
                r.provider, r.provider, r.id, r.provider, r.id, r.name
            )
        };
        let texts: Vec<String> = rows.iter().map(text).collect();
        self.shown = pi_tui::fuzzy::fuzzy_filter(&texts, &query, |t| t.as_str())
            .into_iter()
            .map(|i| rows[i].clone())
            .collect();
        self.selected = 0;
    }

    fn pick(&mut self, save: bool) {
        if let Some(r) = self.shown.get(self.selected) {
            let prefix = if save { SAVE_PREFIX } else { "" };
            self.result = Some(DialogResult::Done(format!("{prefix}{}", r.key())));
        }
    }
}

impl Component for ModelPicker {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let line = |s: String| truncate_to_width(&s, width, "…");
        out.push_line(t.paint("border", &"─".repeat(width)));
        out.push_line(String::new());
        if self.scoped.is_empty() {
            out.push_line(line(t.paint(
                "warning",
                "Only showing models from configured providers. Use /login to add providers.",
            )));
        } else {
            let (all, scoped) = if self.scoped_view {
                (t.paint("muted", "all"), t.paint("accent", "scoped"))
            } else {
                (t.paint("accent", "all"), t.paint("muted", "scoped"))
            };
            out.push_line(line(format!(
                "{}{all}{}{scoped}",
                t.paint("muted", "Scope: "),
                t.paint("muted", " | ")
            )));
            out.push_line(line(format!(
                "{}{}",
                t.paint("dim", "tab"),
                t.paint("muted", " scope (all/scoped)")
            )));
        }
        out.push_line(String::new());
        self.search.render(width, out);
        out.push_line(String::new());
        let n = self.shown.len();
        let start = self
            .selected
            .saturating_sub(MAX_VISIBLE / 2)
            .min(n.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(n);
        for (i, r) in self.shown.iter().enumerate().take(end).skip(start) {
            let selected = i == self.selected;
            let cursor = if selected {
                t.paint("accent", "→ ")
            } else {
                "  ".into()
            };
            let mark = if Some(r.key()) == self.current {
                t.paint("accent", "✓ ")
            } else {
                "  ".into()
            };
            let id = if selected {
                t.paint("accent", &r.id)
            } else {
                r.id.clone()
            };
            let name = distinct_name(&r.id, &r.name)
                .map(|n| t.paint("muted", &format!(" ({n})")))
                .unwrap_or_default();
            let default = if Some(r.key()) == self.default {
                t.paint("muted", " · default")
            } else {
                String::new()
            };
            let provider = t.paint("muted", &format!("[{}]", r.provider));
            out.push_line(line(format!("{cursor}{mark}{id}{name} {provider}{default}")));
        }
        if start > 0 || end < n {
            out.push_line(t.paint("muted", &format!("  ({}/{n})", self.selected + 1)));
        }
        match self.shown.get(self.selected) {
            None => out.push_line(t.paint("muted", "  No matching models")),
            Some(r) => {
                out.push_line(String::new());
                out.push_line(line(t.paint("muted", &format!("  Model Name: {}", r.name))));
            }
        }
        out.push_line(String::new());
        out.push_line(line(t.paint(
            "dim",
            &format!(
                "  Enter to select · {} to set as default · Escape/Ctrl+C to cancel",
                self.save_key
            ),
        )));
        out.push_line(t.paint("border", &"─".repeat(width)));
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let kb = keybindings();
        let n = self.shown.len();
        if kb.matches(k, "tui.input.tab") {
            if !self.scoped.is_empty() {
                self.scoped_view = !self.scoped_view;
                self.filter();
            }
        } else if kb.matches(k, "tui.select.up") {
            if n > 0 {
                self.selected = if self.selected == 0 { n - 1 } else { self.selected - 1 };
            }
        } else if kb.matches(k, "tui.select.down") {
            if n > 0 {
                self.selected = if self.selected + 1 >= n { 0 } else { self.selected + 1 };
            }
        } else if kb.matches(k, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if kb.matches(k, "tui.select.pageDown") {
            self.selected = (self.selected + MAX_VISIBLE).min(n.saturating_sub(1));
        } else if kb.matches(k, "tui.select.confirm") {
            self.pick(false);
        } else if kb.matches(k, "tui.select.cancel") {
            self.result = Some(DialogResult::Cancelled);
        } else if self.kb.matches(k, "app.models.save") {
            self.pick(true);
        } else {
            let before = self.search.value().to_string();
            self.search.handle_key(k);
            if self.search.value() != before {
                self.filter();
            }
        }
        true
    }

    fn set_focused(&mut self, focused: bool) {
        self.search.set_focused(focused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, id: &str, name: &str) -> Model {
        let mut m = pi_agent::unknown_model();
        m.provider = provider.into();
        m.id = id.into();
        m.name = name.into();
        m
    }

    fn keybindings() -> pi_tui::Keybindings {
        let mut defs = pi_tui::TUI_KEYBINDINGS.to_vec();
        defs.extend_from_slice(crate::modes::interactive::keys::APP_KEYBINDINGS);
        pi_tui::Keybindings::new(defs, Default::default())
    }

    fn text(p: &mut ModelPicker) -> String {
        let mut f = Frame::default();
        p.render(100, &mut f);
        pi_tui::strip_ansi(&f.to_vec().join("\n"))
    }

    #[test]
    fn current_first_marked_default_badged_and_ctrl_s_saves() {
        let models = vec![
            model("openai", "gpt", "GPT"),
            model("anthropic", "claude", "Claude Opus"),
            model("openai", "o3", "o3"),
        ];
        let current = models[2].clone();
        let mut p = ModelPicker::new(
            models,
            Vec::new(),
            Some(&current),
            Some("openai/gpt".into()),
            None,
            Arc::new(UiTheme::fallback()),
            Arc::new(keybindings()),
        );
        let shown = text(&mut p);
        let rows: Vec<&str> = shown.lines().filter(|l| l.contains('[')).collect();
        assert!(rows[0].starts_with("→ ✓ o3 [openai]"), "{shown}");
        assert!(rows[1].contains("gpt [openai] · default"), "{shown}");
        assert!(rows[2].contains("claude (Claude Opus) [anthropic]"), "{shown}");
        assert!(shown.contains("Model Name: o3"), "{shown}");
        assert!(
            shown.contains("Only showing models from configured providers"),
            "{shown}"
        );
        p.handle_input(&InputEvent::Key(pi_tui::parse_key("\x1b[B", false).expect("key")));
        p.handle_input(&InputEvent::Key(pi_tui::parse_key("\x13", false).expect("key")));
        assert_eq!(p.take_result(), Some(DialogResult::Done("save:openai/gpt".into())));
    }
}
