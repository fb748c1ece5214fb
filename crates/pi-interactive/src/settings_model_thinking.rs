//! `/settings` → "Default thinking level per model": a two-step submenu (pick a model, then
//! its startup thinking level) that comes back to the model list after each choice, as pi
//! 1.6's does, until Escape leaves it. It only reports choices; the menu's owner saves them.

use std::collections::BTreeMap;
use std::sync::Arc;

use pi_tui::components::SelectItem;
use pi_tui::{Component, Frame, InputEvent};

use super::settings_submenu::{SelectSubmenu, SubmenuEvent};
use super::theme::UiTheme;

/// The value of the "(clear override)" row.
const CLEAR: &str = "__clear__";
/// The value of the row shown when no model has credentials.
const NONE: &str = "__none__";

/// One model offered in the first step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    pub provider: String,
    pub id: String,
    /// The levels it offers, lowest first (`off` only for a model without reasoning).
    pub levels: Vec<String>,
}

impl ModelChoice {
    /// `provider/id`, the key of `modelThinkingLevels`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}

/// What one key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Set (`Some`) or clear (`None`) the level of `provider/id`.
    Set {
        provider: String,
        id: String,
        level: Option<String>,
    },
    /// The submenu closed; the row now says `summary`.
    Closed { summary: String },
}

enum Step {
    Model(SelectSubmenu),
    Level { model: usize, dialog: SelectSubmenu },
}

pub struct ModelThinkingMenu {
    models: Vec<ModelChoice>,
    overrides: BTreeMap<String, String>,
    /// The level a cleared override falls back to (the `defaultThinkingLevel`).
    global_default: String,
    step: Step,
    /// The model the list starts on each time (the current one), as in pi 1.6.
    home: Option<String>,
    theme: Arc<UiTheme>,
}

/// What the row shows: `none` or `N configured`.
pub fn summary(overrides: &BTreeMap<String, String>) -> String {
    match overrides.len() {
        0 => "none".into(),
        n => format!("{n} configured"),
    }
}

/// The models in pi's order: the current one, the saved default, then by provider (the
/// registry's order within a provider).
pub fn sort_models(models: &mut [ModelChoice], current: Option<&str>, default: Option<&str>) {
    let rank = |m: &ModelChoice| {
        let key = m.key();
        if Some(key.as_str()) == current {
            0
        } else if Some(key.as_str()) == default {
            1
        } else {
            2
        }
    };
    models.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.provider.cmp(&b.provider)));
}

impl ModelThinkingMenu {
    /// `models` already sorted; the first step starts on `preselect` (the current model).
    pub fn new(
        models: Vec<ModelChoice>,
        overrides: BTreeMap<String, String>,
        global_default: String,
        preselect: Option<&str>,
        theme: Arc<UiTheme>,
    ) -> Self {
        let mut menu = ModelThinkingMenu {
            models,
            overrides,
            global_default,
            step: Step::Model(SelectSubmenu::new("", None, Vec::new(), None, theme.clone())),
            home: preselect.map(str::to_string),
            theme,
        };
        menu.show_models(preselect);
        menu
    }

    fn show_models(&mut self, preselect: Option<&str>) {
        let t = &self.theme;
        let mut items: Vec<SelectItem> = self
            .models
            .iter()
            .map(|m| {
                let item = SelectItem::new(m.key()).with_label(format!(
                    "{} {}",
                    m.id,
                    t.paint("muted", &format!("[{}]", m.provider))
                ));
                match self.overrides.get(&m.key()) {
                    Some(level) => item.with_description(level.clone()),
                    None => item,
                }
            })
            .collect();
        if items.is_empty() {
            items.push(
                SelectItem::new(NONE)
                    .with_label("No models available")
                    .with_description("Log in to a provider or configure an API key first"),
            );
        }
        let dialog = SelectSubmenu::new(
            "Per-Model Thinking Level",
            Some("Step 1/2 · Select a model to configure".into()),
            items,
            preselect,
            t.clone(),
        )
        .searchable()
        .with_primary_column(12, 46);
        self.step = Step::Model(dialog);
    }

    fn show_levels(&mut self, model: usize) {
        let Some(m) = self.models.get(model) else { return };
        let active = self.overrides.get(&m.key());
        let mut items: Vec<SelectItem> = m
            .levels
            .iter()
            .map(|level| {
                let mark = if Some(level) == active { "✓ " } else { "  " };
                SelectItem::new(level.clone())
                    .with_label(format!("{mark}{level}"))
                    .with_description(super::settings_menu::thinking_description(level))
            })
            .collect();
        if active.is_some() {
            items.push(
                SelectItem::new(CLEAR)
                    .with_label("  (clear override)")
                    .with_description(format!("Revert to global default ({})", self.global_default)),
            );
        }
        let title = format!("Thinking Level for {} [{}]", m.id, m.provider);
        let dialog = SelectSubmenu::new(
            title,
            Some("Step 2/2 · Select default thinking level for this model".into()),
            items,
            active.map(String::as_str),
            self.theme.clone(),
        );
        self.step = Step::Level { model, dialog };
    }

    /// Draw in `theme` from now on.
    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        match &mut self.step {
            Step::Model(dialog) | Step::Level { dialog, .. } => dialog.set_theme(theme.clone()),
        }
        self.theme = theme;
    }

    /// Handle a key; what it decided, if anything.
    pub fn handle_input(&mut self, event: &InputEvent) -> Option<Outcome> {
        let InputEvent::Key(k) = event else { return None };
        match &mut self.step {
            Step::Model(dialog) => match dialog.handle_key(k)? {
                SubmenuEvent::Cancelled => Some(Outcome::Closed {
                    summary: summary(&self.overrides),
                }),
                SubmenuEvent::Selected(key) => {
                    if let Some(i) = self.models.iter().position(|m| m.key() == key) {
                        self.show_levels(i);
                    }
                    None
                }
                SubmenuEvent::Moved(_) => None,
            },
            Step::Level { model, dialog } => {
                let result = dialog.handle_key(k)?;
                let model = *model;
                let m = self.models.get(model)?.clone();
                let key = m.key();
                let outcome = match result {
                    SubmenuEvent::Moved(_) => return None,
                    SubmenuEvent::Cancelled => None,
                    SubmenuEvent::Selected(level) if level == CLEAR => {
                        self.overrides.remove(&key);
                        Some(Outcome::Set {
                            provider: m.provider,
                            id: m.id,
                            level: None,
                        })
                    }
                    SubmenuEvent::Selected(level) => {
                        self.overrides.insert(key.clone(), level.clone());
                        Some(Outcome::Set {
                            provider: m.provider,
                            id: m.id,
                            level: Some(level),
                        })
                    }
                };
                // Back to the models, on the current one again (pi 1.6 starts over).
                let home = self.home.clone();
                self.show_models(home.as_deref());
                outcome
            }
        }
    }
}

impl ModelThinkingMenu {
    /// The keys that carry out a mouse report over the model or level list, as pi 1.6's
    /// settings lists take the mouse.
    pub fn mouse_keys(&self, m: &pi_tui::ComponentMouse) -> Option<Vec<pi_tui::KeyEvent>> {
        match &self.step {
            Step::Model(dialog) | Step::Level { dialog, .. } => dialog.mouse_keys(m),
        }
    }

    /// A press on the model list's search field puts its cursor there.
    pub fn search_mouse(&mut self, m: &pi_tui::ComponentMouse) -> bool {
        match &mut self.step {
            Step::Model(dialog) | Step::Level { dialog, .. } => dialog.search_mouse(m),
        }
    }
}

impl Component for ModelThinkingMenu {
    fn render(&mut self, width: usize, out: &mut Frame) {
        match &mut self.step {
            Step::Model(dialog) | Step::Level { dialog, .. } => dialog.render(width, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> InputEvent {
        InputEvent::Key(pi_tui::parse_key(s, false).expect("key"))
    }

    fn models() -> Vec<ModelChoice> {
        let m = |provider: &str, id: &str, levels: &[&str]| ModelChoice {
            provider: provider.into(),
            id: id.into(),
            levels: levels.iter().map(|l| l.to_string()).collect(),
        };
        vec![
            m("openai", "gpt", &["off"]),
            m("anthropic", "claude", &["off", "low", "high"]),
            m("openai", "o3", &["off", "low", "high"]),
        ]
    }

    #[test]
    fn current_model_first_then_default_then_by_provider() {
        let mut ms = models();
        sort_models(&mut ms, Some("openai/o3"), None);
        let keys: Vec<String> = ms.iter().map(ModelChoice::key).collect();
        assert_eq!(keys, ["openai/o3", "anthropic/claude", "openai/gpt"]);
        sort_models(&mut ms, Some("openai/gpt"), Some("openai/o3"));
        let keys: Vec<String> = ms.iter().map(ModelChoice::key).collect();
        assert_eq!(keys, ["openai/gpt", "openai/o3", "anthropic/claude"]);
    }

    #[test]
    fn choosing_a_level_sets_it_comes_back_to_the_models_and_can_clear_it() {
        let theme = Arc::new(UiTheme::fallback());
        let mut menu = ModelThinkingMenu::new(models(), BTreeMap::new(), "medium".into(), None, theme);
        // Second model (claude), second level (low).
        menu.handle_input(&key("\x1b[B"));
        assert_eq!(menu.handle_input(&key("\r")), None);
        menu.handle_input(&key("\x1b[B"));
        assert_eq!(
            menu.handle_input(&key("\r")),
            Some(Outcome::Set {
                provider: "anthropic".into(),
                id: "claude".into(),
                level: Some("low".into())
            })
        );
        // Back on the model list, from its top: claude's levels now offer to clear the override.
        menu.handle_input(&key("\x1b[B"));
        menu.handle_input(&key("\r"));
        let mut frame = Frame::default();
        menu.render(80, &mut frame);
        let text = frame.to_vec().join("\n");
        assert!(text.contains("Thinking Level for claude [anthropic]"), "{text}");
        assert!(text.contains("(clear override)") && text.contains("medium"), "{text}");
        // From `low` (highlighted) past `high` to the clear row.
        for _ in 0..2 {
            menu.handle_input(&key("\x1b[B"));
        }
        assert_eq!(
            menu.handle_input(&key("\r")),
            Some(Outcome::Set {
                provider: "anthropic".into(),
                id: "claude".into(),
                level: None
            })
        );
        assert_eq!(
            menu.handle_input(&key("\x1b")),
            Some(Outcome::Closed { summary: "none".into() })
        );
    }
}
