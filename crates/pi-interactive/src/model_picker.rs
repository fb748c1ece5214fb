//! The model picker (`/model`, Ctrl+L) as pi 1.6 draws it in the dock: a hint (or the
//! all/scoped switch when scoped models exist), a search line, ten rows with the current
//! model marked `✓` and the saved default `· default`, the highlighted model's name, and the
//! keys. Enter picks for this session; Ctrl+S also saves the choice as the default.
//! While it is open the model catalogues are refreshed (see [`open_refresh`]); the list is
//! reloaded when that ends and a line below it says how it went.

use std::sync::{Arc, Mutex};

use pi_ai::Model;
use pi_tui::components::Input;
use pi_tui::{keybindings, truncate_to_width, Component, ComponentMouse, Frame, InputEvent};

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
pub(super) fn distinct_name(id: &str, name: &str) -> Option<String> {
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

/// The models to show once the picker's catalogue refresh ended, and its error (`None`: it
/// succeeded). The refresh task fills it; the picker takes it at its next frame.
pub type RefreshSlot = Arc<Mutex<Option<(Vec<Model>, Option<String>)>>>;

/// The text 1.6 shows while the refresh runs, and when it succeeded.
pub const REFRESHING: &str = "Refreshing model catalogs…";
pub const REFRESHED: &str = "Model catalogs refreshed.";

/// What the picker says about a failed refresh (`None`: it succeeded).
pub fn refresh_error(outcome: &pi_coding_agent::config::models_store_refresh::PickerRefresh) -> Option<String> {
    use pi_coding_agent::config::models_store_refresh::PickerRefresh;
    match outcome {
        PickerRefresh::Done => None,
        PickerRefresh::TimedOut => Some("Model refresh timed out; showing cached models.".into()),
        PickerRefresh::Failed(ids) if ids.len() == 1 => {
            Some(format!("Could not refresh {}; showing cached models.", ids[0]))
        }
        PickerRefresh::Failed(ids) => Some(format!(
            "Could not refresh {} model catalogs ({}); showing cached models.",
            ids.len(),
            ids.join(", ")
        )),
    }
}

pub struct ModelPicker {
    all: Vec<Row>,
    /// The Ctrl+P set as keys, to rebuild `scoped` from refreshed models.
    scoped_keys: Vec<String>,
    refresh: RefreshSlot,
    /// The line under the list: the refresh under way, or that it succeeded (`true`).
    refresh_status: Option<(String, bool)>,
    error: Option<String>,
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
    /// The search field's row in the last render, for the mouse.
    search_row: usize,
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
        let all = sorted_rows(&models, current.as_ref(), default.as_ref());
        let scoped: Vec<Row> = scoped.iter().map(row).collect();
        let mut search = Input::new("> ");
        if let Some(f) = filter {
            search.set_value(f);
        }
        let mut picker = ModelPicker {
            scoped_view: !scoped.is_empty(),
            scoped_keys: scoped.iter().map(Row::key).collect(),
            refresh: Arc::default(),
            refresh_status: Some((REFRESHING.to_string(), false)),
            error: None,
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
            search_row: 0,
        };
        picker.filter();
        picker
    }

    /// Where the refresh task leaves its outcome.
    pub fn refresh_slot(&self) -> RefreshSlot {
        self.refresh.clone()
    }

    /// Take a finished refresh: its models replace the list (the highlighted model stays
    /// highlighted when it is still there) and its outcome replaces the "Refreshing" line.
    fn apply_refresh(&mut self) {
        let Some((models, error)) = self.refresh.lock().ok().and_then(|mut s| s.take()) else {
            return;
        };
        let keep = self.shown.get(self.selected).map(Row::key);
        self.all = sorted_rows(&models, self.current.as_ref(), self.default.as_ref());
        self.scoped = self
            .scoped_keys
            .iter()
            .map(|k| self.all.iter().find(|r| &r.key() == k).cloned())
            .zip(self.scoped.iter())
            .map(|(fresh, old)| fresh.unwrap_or_else(|| old.clone()))
            .collect();
        self.refresh_status = match &error {
            None => Some((REFRESHED.to_string(), true)),
            Some(_) => None,
        };
        self.error = error;
        self.filter();
        if let Some(i) = keep.and_then(|k| self.shown.iter().position(|r| r.key() == k)) {
            self.selected = i;
        }
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

/// Rows for `models`: the current model, the saved default, then by provider (stable within one).
fn sorted_rows(models: &[Model], current: Option<&String>, default: Option<&String>) -> Vec<Row> {
    let mut all: Vec<Row> = models
        .iter()
        .map(|m| Row {
            provider: m.provider.clone(),
            id: m.id.clone(),
            name: m.name.clone(),
        })
        .collect();
    let rank = |r: &Row| {
        let key = r.key();
        if Some(&key) == current {
            0
        } else if Some(&key) == default {
            1
        } else {
            2
        }
    };
    all.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.provider.cmp(&b.provider)));
    all
}

impl Component for ModelPicker {
    fn render(&mut self, width: usize, out: &mut Frame) {
        self.apply_refresh();
        let t = self.theme.clone();
        let line = |s: String| truncate_to_width(&s, width, "…");
        let top = out.len();
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
        self.search_row = out.len() - top;
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
        match (&self.error, self.shown.get(self.selected)) {
            (Some(e), _) => {
                for l in e.lines() {
                    out.push_line(line(t.paint("error", l)));
                }
            }
            (None, None) => out.push_line(t.paint("muted", "  No matching models")),
            (None, Some(r)) => {
                out.push_line(String::new());
                out.push_line(line(t.paint("muted", &format!("  Model Name: {}", r.name))));
            }
        }
        if let Some((status, success)) = &self.refresh_status {
            out.push_line(String::new());
            let style = if *success { "success" } else { "muted" };
            out.push_line(line(t.paint(style, &format!("  {status}"))));
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

    /// Only the search field takes the mouse (a press puts its cursor there), as in pi 1.6:
    /// the model list takes no clicks and leaves the wheel to the transcript.
    fn handle_mouse(&mut self, m: &ComponentMouse) -> bool {
        let row = self.search_row;
        m.within(&(row..row + 1))
            .is_some_and(|at| self.search.handle_mouse(&at))
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
        defs.extend_from_slice(crate::keys::APP_KEYBINDINGS);
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

    #[test]
    fn a_finished_refresh_reloads_the_list_and_says_how_it_went() {
        use pi_coding_agent::config::models_store_refresh::PickerRefresh;
        let models = vec![model("openai", "gpt", "GPT"), model("anthropic", "claude", "Claude")];
        let current = models[0].clone();
        let mut p = ModelPicker::new(
            models.clone(),
            Vec::new(),
            Some(&current),
            None,
            None,
            Arc::new(UiTheme::fallback()),
            Arc::new(keybindings()),
        );
        assert!(text(&mut p).contains("Refreshing model catalogs…"));
        // The highlighted row stays highlighted when the refresh adds rows before it.
        p.handle_input(&InputEvent::Key(pi_tui::parse_key("\x1b[B", false).expect("key")));
        let mut more = models.clone();
        more.push(model("anthropic", "claude-new", "Opus Nine"));
        *p.refresh_slot().lock().unwrap() = Some((more, None));
        let shown = text(&mut p);
        assert!(shown.contains("Model catalogs refreshed."), "{shown}");
        assert!(!shown.contains("Refreshing"), "{shown}");
        assert!(shown.contains("claude-new (Opus Nine) [anthropic]"), "{shown}");
        assert_eq!(p.selected_key().as_deref(), Some("anthropic/claude"));

        let failed = refresh_error(&PickerRefresh::Failed(vec!["anthropic".into()]));
        *p.refresh_slot().lock().unwrap() = Some((models, failed));
        let shown = text(&mut p);
        assert!(
            shown.contains("Could not refresh anthropic; showing cached models."),
            "{shown}"
        );
        assert!(
            !shown.contains("Model Name:") && !shown.contains("refreshed"),
            "{shown}"
        );
        assert_eq!(
            refresh_error(&PickerRefresh::Failed(vec!["a".into(), "b".into()])).as_deref(),
            Some("Could not refresh 2 model catalogs (a, b); showing cached models.")
        );
        assert_eq!(
            refresh_error(&PickerRefresh::TimedOut).as_deref(),
            Some("Model refresh timed out; showing cached models.")
        );
        assert_eq!(refresh_error(&PickerRefresh::Done), None);
    }
}
