//! `/scoped-models`: choose (and order) the models Ctrl+P cycles through. Changes apply to the
//! session at once; Ctrl+S saves them as `enabledModels` in settings.json.
//!
//! The enabled set is `None` for "every model" (no filter) or the ordered `provider/id` list.
//! Saved entries that match no available model now (no key, an unknown id) stay in that list:
//! they are listed struck through as unavailable, counted apart, and saved again unless the
//! user turns them off.

use std::sync::Arc;

use pi_ai::Model;
use pi_tui::components::Input;
use pi_tui::{keybindings, truncate_to_width, wrap_text, Component, Frame, InputEvent, Keybindings};

use super::effect::{notice, Ctx, Effect, Overlay, Picker};
use super::keys::keys_display;
use super::model_picker::{RefreshSlot, REFRESHED, REFRESHING};
use super::theme::UiTheme;
use pi_coding_agent::config::model_resolver::{resolve_model_scope, ScopedModel};

pub type Enabled = Option<Vec<String>>;

fn is_enabled(enabled: &Enabled, id: &str) -> bool {
    enabled.as_ref().is_none_or(|e| e.iter().any(|x| x == id))
}

/// Whether `list` names exactly the available models (and nothing unavailable besides).
fn covers_exactly(list: &[String], all: &[String]) -> bool {
    list.len() == all.len() && list.iter().all(|x| all.contains(x))
}

/// A list naming every available model (and nothing else) is "all": `None`.
fn normalize(list: Vec<String>, all: &[String]) -> Enabled {
    (!covers_exactly(&list, all)).then_some(list)
}

/// Enter on a model, as pi 1.6 toggles: from "all" it turns just that model off; turning
/// the last one back on collapses the list back to "all".
pub fn toggle(enabled: &Enabled, all: &[String], id: &str) -> Enabled {
    let Some(list) = enabled else {
        return Some(all.iter().filter(|x| *x != id).cloned().collect());
    };
    let mut list = list.clone();
    match list.iter().position(|x| x == id) {
        Some(i) => {
            list.remove(i);
            Some(list)
        }
        None => {
            list.push(id.to_string());
            normalize(list, all)
        }
    }
}

/// Enable `targets` (all when `None`). Unavailable entries already in the list stay, so the
/// list then still differs from "all".
pub fn enable_all(enabled: &Enabled, all: &[String], targets: Option<&[String]>) -> Enabled {
    let list = enabled.as_ref()?;
    let mut list = list.clone();
    for id in targets.unwrap_or(all) {
        if !list.contains(id) {
            list.push(id.clone());
        }
    }
    normalize(list, all)
}

/// Disable `targets` (all when `None`).
pub fn clear_all(enabled: &Enabled, all: &[String], targets: Option<&[String]>) -> Enabled {
    match (enabled, targets) {
        (None, None) => Some(Vec::new()),
        (None, Some(t)) => Some(all.iter().filter(|id| !t.contains(id)).cloned().collect()),
        (Some(_), None) => Some(Vec::new()),
        (Some(list), Some(t)) => Some(list.iter().filter(|id| !t.contains(id)).cloned().collect()),
    }
}

/// Swap an enabled model with its neighbour.
pub fn move_by(enabled: &Enabled, id: &str, delta: isize) -> Enabled {
    let mut list = enabled.clone()?;
    if let Some(i) = list.iter().position(|x| x == id) {
        let j = i as isize + delta;
        if j >= 0 && (j as usize) < list.len() {
            list.swap(i, j as usize);
        }
    }
    Some(list)
}

/// Enabled entries first (in their order, unavailable ones included), then the rest.
pub fn sorted_ids(enabled: &Enabled, all: &[String]) -> Vec<String> {
    match enabled {
        None => all.to_vec(),
        Some(list) => list
            .iter()
            .cloned()
            .chain(all.iter().filter(|id| !list.contains(id)).cloned())
            .collect(),
    }
}

/// What Ctrl+S writes as `enabledModels`: nothing (the key removed) for "all", else the list
/// followed by the `kept` entries, saved ones the selector never listed and so the user could
/// not have turned off.
pub fn saved_patterns(enabled: &Enabled, all: &[String], kept: &[String]) -> Option<Vec<String>> {
    let list = enabled.as_ref()?;
    if covers_exactly(list, all) {
        return None;
    }
    let mut out = list.clone();
    for id in kept {
        if !out.contains(id) {
            out.push(id.clone());
        }
    }
    Some(out)
}

/// The saved patterns that match no available model, in their order.
pub fn unmatched_patterns(patterns: &[String], models: &[Model]) -> Vec<String> {
    patterns
        .iter()
        .filter(|p| resolve_model_scope(std::slice::from_ref(*p), models).0.is_empty())
        .cloned()
        .collect()
}

/// The enabled list the saved `enabledModels` patterns make of `models`: the models they
/// match, in pattern order, then the patterns matching nothing (listed as unavailable).
pub fn configured_ids(patterns: &[String], models: &[Model]) -> Enabled {
    if patterns.is_empty() {
        return None;
    }
    let mut ids: Vec<String> = resolve_model_scope(patterns, models)
        .0
        .iter()
        .map(|s| full_id(&s.model))
        .collect();
    for p in unmatched_patterns(patterns, models) {
        if !ids.contains(&p) {
            ids.push(p);
        }
    }
    Some(ids)
}

/// The line under the list when the catalogue refresh failed, in 1.6's words for this view.
pub fn refresh_warning(outcome: &pi_coding_agent::config::models_store_refresh::PickerRefresh) -> Option<String> {
    use pi_coding_agent::config::models_store_refresh::PickerRefresh;
    match outcome {
        PickerRefresh::Done => None,
        PickerRefresh::TimedOut => Some("Model refresh timed out; showing cached models.".into()),
        PickerRefresh::Failed(ids) => Some(format!("Could not refresh {}; showing cached models.", ids.join(", "))),
    }
}

fn full_id(m: &Model) -> String {
    format!("{}/{}", m.provider, m.id)
}

/// What the selector asks of its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopedEvent {
    Changed(Enabled),
    /// The `enabledModels` to save (`None` removes the key).
    Save(Option<Vec<String>>),
    Cancelled,
}

pub struct ScopedModelsSelector {
    /// The search field's row in the last render, for the mouse.
    search_row: usize,
    models: Vec<Model>,
    all: Vec<String>,
    enabled: Enabled,
    shown: Vec<String>,
    selected: usize,
    search: Input,
    dirty: bool,
    theme: Arc<UiTheme>,
    kb: Arc<Keybindings>,
    events: Vec<ScopedEvent>,
    /// The catalogue refresh started with the selector, and the line saying how it went.
    refresh_slot: RefreshSlot,
    refresh_status: Option<(String, &'static str)>,
    /// Saved entries matching no model that the list does not show (the session's own set
    /// was shown instead): saved again with the user's choice.
    kept: Vec<String>,
    /// The saved patterns the list was made from (empty: the session's own set was shown):
    /// a refresh that adds models applies them again, until the user changes the list.
    patterns: Vec<String>,
    /// The user changed the list since it opened.
    touched: bool,
}

const MAX_VISIBLE: usize = 8;

impl ScopedModelsSelector {
    pub fn new(models: Vec<Model>, enabled: Enabled, theme: Arc<UiTheme>, kb: Arc<Keybindings>) -> Self {
        let all = models.iter().map(full_id).collect();
        let mut s = ScopedModelsSelector {
            models,
            all,
            enabled,
            shown: Vec::new(),
            selected: 0,
            search: Input::new("> "),
            search_row: 0,
            dirty: false,
            theme,
            kb,
            events: Vec::new(),
            refresh_slot: RefreshSlot::default(),
            refresh_status: Some((REFRESHING.to_string(), "muted")),
            kept: Vec::new(),
            patterns: Vec::new(),
            touched: false,
        };
        s.refresh();
        s
    }

    /// The list was made from these saved patterns: a catalogue refresh applies them again.
    pub fn follow_patterns(&mut self, patterns: Vec<String>) {
        self.patterns = patterns;
    }

    /// Saved entries to write back with the user's list (see `kept`).
    pub fn keep_unlisted(&mut self, kept: Vec<String>) {
        self.kept = kept;
    }

    /// Where the catalogue refresh leaves its outcome.
    pub fn refresh_slot(&self) -> RefreshSlot {
        self.refresh_slot.clone()
    }

    /// Take a finished refresh: its models replace the list (the highlighted model stays
    /// highlighted when it is still there) and its outcome replaces the "Refreshing" line.
    fn apply_refresh(&mut self) {
        let Some((models, error)) = self.refresh_slot.lock().ok().and_then(|mut s| s.take()) else {
            return;
        };
        let keep = self.shown.get(self.selected).cloned();
        self.all = models.iter().map(full_id).collect();
        // As pi 1.6: while the user has not changed the list, a list made from the saved
        // patterns is made again from the refreshed models (a glob now matching a new model
        // turns it on; an entry that was unavailable may match now).
        if !self.touched && !self.patterns.is_empty() {
            self.enabled = configured_ids(&self.patterns, &models);
        }
        self.models = models;
        self.refresh();
        if let Some(i) = keep.and_then(|k| self.shown.iter().position(|x| *x == k)) {
            self.selected = i;
        }
        self.refresh_status = Some(match error {
            None => (REFRESHED.to_string(), "success"),
            Some(e) => (e, "warning"),
        });
        // As pi 1.6, the refreshed list is applied to the session: a saved set shown while the
        // session had none (after "all" was chosen) becomes the session's again.
        if self.enabled.is_some() {
            self.events.push(ScopedEvent::Changed(self.enabled.clone()));
        }
    }

    pub fn take_events(&mut self) -> Vec<ScopedEvent> {
        std::mem::take(&mut self.events)
    }

    fn model(&self, id: &str) -> Option<&Model> {
        self.models.iter().find(|m| full_id(m) == id)
    }

    fn refresh(&mut self) {
        let ids = sorted_ids(&self.enabled, &self.all);
        let q = self.search.value().to_string();
        self.shown = if q.is_empty() {
            ids
        } else {
            let keys: Vec<String> = ids
                .iter()
                .map(|id| {
                    self.model(id)
                        .map_or_else(|| id.clone(), |m| format!("{} {}", m.id, m.provider))
                })
                .collect();
            pi_tui::fuzzy::fuzzy_filter(&keys, &q, |k| k.as_str())
                .into_iter()
                .map(|i| ids[i].clone())
                .collect()
        };
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
    }

    fn targets(&self) -> Option<Vec<String>> {
        (!self.search.value().is_empty()).then(|| self.shown.clone())
    }

    fn changed(&mut self, enabled: Enabled) {
        self.enabled = enabled;
        self.dirty = true;
        self.touched = true;
        self.refresh();
        self.events.push(ScopedEvent::Changed(self.enabled.clone()));
    }

    fn footer(&self) -> String {
        let kb = &self.kb;
        let count = match &self.enabled {
            None => "all enabled".to_string(),
            Some(l) => {
                let available = l.iter().filter(|id| self.all.contains(id)).count();
                let unavailable = l.len() - available;
                let mut text = format!("{available}/{} enabled", self.all.len());
                if unavailable > 0 {
                    text.push_str(&format!(" · {unavailable} unavailable"));
                }
                text
            }
        };
        // Every key of an action, capitalised, as pi 1.6 spells them here.
        let key = |id: &str| keys_display(kb, id).join("/");
        let parts = [
            format!("{} toggle", key("tui.select.confirm")),
            format!("{} all", key("app.models.enableAll")),
            format!("{} clear", key("app.models.clearAll")),
            format!("{} provider", key("app.models.toggleProvider")),
            format!(
                "{}/{} reorder",
                key("app.models.reorderUp"),
                key("app.models.reorderDown")
            ),
            format!("{} save", key("app.models.save")),
            count,
        ];
        let t = &self.theme;
        let text = t.paint("dim", &format!("  {}", parts.join(" · ")));
        if self.dirty {
            format!("{text} {}", t.paint("warning", "(unsaved)"))
        } else {
            text
        }
    }
}

impl Component for ScopedModelsSelector {
    fn render(&mut self, width: usize, out: &mut Frame) {
        self.apply_refresh();
        let t = self.theme.clone();
        // pi 1.6's layout: flush left, a blank row under the rule.
        let top = out.len();
        out.push_line(t.paint("border", &"─".repeat(width)));
        out.push_line(String::new());
        out.push_line(truncate_to_width(&t.bold("accent", "Model Configuration"), width, "…"));
        let save = keys_display(&self.kb, "app.models.save").join("/");
        for l in wrap_text(&format!("Session-only. {save} to save to settings."), width.max(1)) {
            out.push_line(t.paint("muted", &l));
        }
        out.push_line(String::new());
        self.search_row = out.len() - top;
        self.search.render(width.max(1), out);
        out.push_line(String::new());
        if self.shown.is_empty() {
            out.push_line(t.paint("muted", "  No matching models"));
        } else {
            let start = self
                .selected
                .saturating_sub(MAX_VISIBLE / 2)
                .min(self.shown.len().saturating_sub(MAX_VISIBLE));
            let end = (start + MAX_VISIBLE).min(self.shown.len());
            for i in start..end {
                let id = &self.shown[i];
                let sel = i == self.selected;
                let Some(m) = self.model(id) else {
                    // A saved entry no model answers to now: its text struck through, no tick.
                    let struck = pi_tui::Style::new().strikethrough().paint(id);
                    let line = format!(
                        "{}  {}{}",
                        if sel { t.paint("accent", "→ ") } else { "  ".into() },
                        if sel { t.paint("accent", &struck) } else { struck },
                        t.paint("muted", " [unavailable]"),
                    );
                    out.push_line(truncate_to_width(&line, width, "…"));
                    continue;
                };
                // An enabled model is ticked before its id; the name follows when it says more.
                let mark = if is_enabled(&self.enabled, id) {
                    t.paint("accent", "✓ ")
                } else {
                    "  ".into()
                };
                let name = super::model_picker::distinct_name(&m.id, &m.name)
                    .map(|n| t.paint("muted", &format!(" ({n})")))
                    .unwrap_or_default();
                let line = format!(
                    "{}{mark}{}{name}{}",
                    if sel { t.paint("accent", "→ ") } else { "  ".into() },
                    if sel { t.paint("accent", &m.id) } else { m.id.clone() },
                    t.paint("muted", &format!(" [{}]", m.provider)),
                );
                out.push_line(truncate_to_width(&line, width, "…"));
            }
            if start > 0 || end < self.shown.len() {
                out.push_line(t.paint("muted", &format!("  ({}/{})", self.selected + 1, self.shown.len())));
            }
            if let Some(id) = self.shown.get(self.selected) {
                let about = match self.model(id) {
                    Some(m) => format!("  Model Name: {}", m.name),
                    None => "  Model unavailable".to_string(),
                };
                out.push_line(String::new());
                out.push_line(t.paint("muted", &about));
            }
        }
        out.push_line(String::new());
        if let Some((status, token)) = &self.refresh_status {
            out.push_line(truncate_to_width(&t.paint(token, &format!("  {status}")), width, "…"));
        }
        // The key list wraps, as pi's text does.
        for l in wrap_text(&self.footer(), width.max(1)) {
            out.push_line(l);
        }
        out.push_line(t.paint("border", &"─".repeat(width)));
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let kb = keybindings();
        let is = |id: &str| kb.matches(k, id);
        let n = self.shown.len();
        let current = self.shown.get(self.selected).cloned();
        if is("tui.select.up") {
            if n > 0 {
                self.selected = if self.selected == 0 { n - 1 } else { self.selected - 1 };
            }
        } else if is("tui.select.down") {
            if n > 0 {
                self.selected = if self.selected + 1 >= n { 0 } else { self.selected + 1 };
            }
        } else if is("app.models.reorderUp") || is("app.models.reorderDown") {
            let delta = if is("app.models.reorderUp") { -1 } else { 1 };
            if let (Some(list), Some(id)) = (&self.enabled, &current) {
                if let Some(i) = list.iter().position(|x| x == id) {
                    let j = i as isize + delta;
                    if j >= 0 && (j as usize) < list.len() {
                        let next = move_by(&self.enabled, id, delta);
                        self.selected = (self.selected as isize + delta).max(0) as usize;
                        self.changed(next);
                    }
                }
            }
        } else if is("tui.select.confirm") {
            if let Some(id) = current {
                let next = toggle(&self.enabled, &self.all, &id);
                self.changed(next);
            }
        } else if is("app.models.enableAll") {
            let next = enable_all(&self.enabled, &self.all, self.targets().as_deref());
            self.changed(next);
        } else if is("app.models.clearAll") {
            let next = clear_all(&self.enabled, &self.all, self.targets().as_deref());
            self.changed(next);
        } else if is("app.models.toggleProvider") {
            if let Some(provider) = current
                .as_deref()
                .and_then(|id| self.model(id))
                .map(|m| m.provider.clone())
            {
                let ids: Vec<String> = self
                    .models
                    .iter()
                    .filter(|m| m.provider == provider)
                    .map(full_id)
                    .collect();
                let next = if ids.iter().all(|id| is_enabled(&self.enabled, id)) {
                    clear_all(&self.enabled, &self.all, Some(&ids))
                } else {
                    enable_all(&self.enabled, &self.all, Some(&ids))
                };
                self.changed(next);
            }
        } else if is("app.models.save") {
            self.dirty = false;
            let patterns = saved_patterns(&self.enabled, &self.all, &self.kept);
            self.events.push(ScopedEvent::Save(patterns));
        } else if k.matches("ctrl+c") && !self.search.value().is_empty() {
            self.search.set_value("");
            self.refresh();
        } else if k.matches("escape") || k.matches("ctrl+c") {
            self.events.push(ScopedEvent::Cancelled);
        } else {
            self.search.handle_key(k);
            self.refresh();
        }
        true
    }

    fn set_focused(&mut self, focused: bool) {
        self.search.set_focused(focused);
    }

    /// Only the search field takes the mouse, as in pi 1.6: a press puts its cursor there.
    fn handle_mouse(&mut self, m: &pi_tui::ComponentMouse) -> bool {
        let row = self.search_row;
        m.within(&(row..row + 1))
            .is_some_and(|at| self.search.handle_mouse(&at))
    }
}

/// Open the selector with the session's current set (else the saved `enabledModels`).
pub fn open(cx: &Ctx<'_>) -> Vec<Effect> {
    let session = &cx.session;
    let models = session.available_models();
    if models.is_empty() {
        return vec![notice("No models available", "dim")];
    }
    let scoped = session.scoped_models();
    let patterns = session
        .settings()
        .lock()
        .ok()
        .and_then(|s| s.enabled_models())
        .unwrap_or_default();
    let unmatched = unmatched_patterns(&patterns, &models);
    // The session's own set when it has one (as pi 1.6, which then leaves the unavailable
    // saved entries out of the list); else the saved one, unavailable entries listed last.
    let (enabled, kept, follow) = if !scoped.is_empty() {
        (
            Some(scoped.iter().map(|s| full_id(&s.model)).collect()),
            unmatched,
            Vec::new(),
        )
    } else {
        (configured_ids(&patterns, &models), Vec::new(), patterns)
    };
    let mut view = ScopedModelsSelector::new(models, enabled, cx.theme.clone(), cx.kb.clone());
    view.keep_unlisted(kept);
    view.follow_patterns(follow);
    // The catalogues are refreshed while it is open, as in the model picker.
    let refresh = super::commands::picker_refresh(cx.paths(), view.refresh_slot(), refresh_warning);
    vec![
        Effect::Open(Overlay {
            view: Box::new(view),
            picker: Picker::ScopedModels,
        }),
        refresh,
    ]
}

/// The session's cycle set for `enabled`: none when all or no available model is enabled
/// (unavailable entries count for neither). Thinking levels the set already carried (from
/// `--models name:level`) are kept.
pub fn scope_for(enabled: &Enabled, models: &[Model], current: &[ScopedModel]) -> Vec<ScopedModel> {
    let Some(list) = enabled else { return Vec::new() };
    let ids: Vec<String> = models.iter().map(full_id).collect();
    let any = list.iter().any(|id| ids.contains(id));
    let every = ids.iter().all(|id| list.contains(id));
    if !any || every {
        return Vec::new();
    }
    list.iter()
        .filter_map(|id| models.iter().find(|m| full_id(m) == *id))
        .map(|m| ScopedModel {
            model: m.clone(),
            thinking_level: current
                .iter()
                .find(|s| s.model.same_as(m))
                .and_then(|s| s.thinking_level),
        })
        .collect()
}

/// React to the selector's events: the effects, and whether it should close.
pub fn handle_events(cx: &Ctx<'_>, events: Vec<ScopedEvent>) -> (Vec<Effect>, bool) {
    let session = &cx.session;
    let mut out = Vec::new();
    let mut close = false;
    for ev in events {
        match ev {
            ScopedEvent::Changed(enabled) => {
                let models = session.available_models();
                let scope = scope_for(&enabled, &models, &session.scoped_models());
                session.set_scoped_models(scope);
                out.push(Effect::RefreshFooter);
            }
            ScopedEvent::Save(patterns) => {
                out.push(Effect::Settings(Box::new(move |s| s.set_enabled_models(patterns))));
                out.push(notice("Model selection saved to settings", "dim"));
            }
            ScopedEvent::Cancelled => close = true,
        }
    }
    (out, close)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn toggling_from_all_turns_one_off_and_all_collapses_back_to_none() {
        let all = ids(&["a/1", "a/2", "b/1"]);
        let e = toggle(&None, &all, "a/1");
        assert_eq!(e, Some(ids(&["a/2", "b/1"])));
        assert_eq!(toggle(&e, &all, "a/1"), None);
        let e = toggle(&Some(ids(&["a/2"])), &all, "b/1");
        assert_eq!(e, Some(ids(&["a/2", "b/1"])));
        assert_eq!(sorted_ids(&e, &all), ids(&["a/2", "b/1", "a/1"]));
        assert_eq!(move_by(&e, "b/1", -1), Some(ids(&["b/1", "a/2"])));
        assert_eq!(enable_all(&e, &all, None), None);
        assert_eq!(clear_all(&None, &all, None), Some(vec![]));
        assert_eq!(clear_all(&None, &all, Some(&ids(&["a/1", "a/2"]))), Some(ids(&["b/1"])));
        assert_eq!(
            enable_all(&Some(vec![]), &all, Some(&ids(&["a/1"]))),
            Some(ids(&["a/1"]))
        );
    }

    #[test]
    fn unavailable_entries_are_listed_kept_and_saved() {
        let all = ids(&["a/1", "a/2"]);
        let e = Some(ids(&["a/1", "gone/x"]));
        // Listed after the enabled available ones, before the rest.
        assert_eq!(sorted_ids(&e, &all), ids(&["a/1", "gone/x", "a/2"]));
        // Enabling every available model keeps the unavailable entry, so the list stays.
        let every = enable_all(&e, &all, None);
        assert_eq!(every, Some(ids(&["a/1", "gone/x", "a/2"])));
        assert_eq!(saved_patterns(&every, &all, &[]), every);
        // Turning it off drops it; the list then names every available model, saved as "all".
        let off = toggle(&every, &all, "gone/x");
        assert_eq!(off, Some(ids(&["a/1", "a/2"])));
        assert_eq!(saved_patterns(&off, &all, &[]), None);
        assert_eq!(
            saved_patterns(&Some(ids(&["a/2", "a/1"])), &all, &ids(&["gone/x"])),
            None
        );
        // Entries the list never showed are saved again after the user's choice.
        assert_eq!(
            saved_patterns(&Some(ids(&["a/2"])), &all, &ids(&["gone/x", "a/2"])),
            Some(ids(&["a/2", "gone/x"]))
        );
        assert_eq!(saved_patterns(&None, &all, &ids(&["gone/x"])), None);
    }

    fn model(provider: &str, id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "openai-completions".into(),
            provider: provider.into(),
            base_url: String::new(),
            reasoning: false,
            input: Vec::new(),
            cost: Default::default(),
            context_window: 1000,
            max_tokens: 100,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    fn selector(models: Vec<Model>, patterns: &[&str]) -> ScopedModelsSelector {
        let patterns = ids(patterns);
        let enabled = configured_ids(&patterns, &models);
        let kb = pi_tui::keybindings();
        let mut s = ScopedModelsSelector::new(models, enabled, Arc::new(UiTheme::fallback()), kb);
        s.follow_patterns(patterns);
        s
    }

    fn refreshed(s: &mut ScopedModelsSelector, models: Vec<Model>, error: Option<String>) {
        *s.refresh_slot().lock().expect("slot") = Some((models, error));
        s.apply_refresh();
    }

    #[test]
    fn a_refresh_applies_the_saved_patterns_to_the_new_models() {
        let mut s = selector(vec![model("a", "1"), model("b", "1")], &["a/*", "c/9"]);
        assert_eq!(s.enabled, Some(ids(&["a/1", "c/9"])));
        refreshed(
            &mut s,
            vec![model("a", "1"), model("a", "2"), model("b", "1"), model("c", "9")],
            None,
        );
        // The glob takes the new model in; the entry that was unavailable is a model now.
        assert_eq!(s.enabled, Some(ids(&["a/1", "a/2", "c/9"])));
        assert_eq!(
            s.take_events(),
            vec![ScopedEvent::Changed(Some(ids(&["a/1", "a/2", "c/9"])))]
        );
        assert_eq!(s.refresh_status, Some((REFRESHED.to_string(), "success")));
    }

    #[test]
    fn a_refresh_keeps_a_list_the_user_changed() {
        let mut s = selector(vec![model("a", "1"), model("a", "2"), model("b", "1")], &["a/*"]);
        let next = toggle(&s.enabled, &s.all, "a/2");
        s.changed(next);
        s.take_events();
        refreshed(
            &mut s,
            vec![model("a", "1"), model("a", "2"), model("a", "3"), model("b", "1")],
            refresh_warning(&pi_coding_agent::config::models_store_refresh::PickerRefresh::Failed(
                ids(&["x", "y"]),
            )),
        );
        assert_eq!(s.enabled, Some(ids(&["a/1"])));
        assert_eq!(
            s.refresh_status,
            Some(("Could not refresh x, y; showing cached models.".to_string(), "warning"))
        );
    }

    #[test]
    fn the_session_scope_ignores_unavailable_entries() {
        let models = vec![model("a", "1"), model("a", "2")];
        let scope = scope_for(&Some(ids(&["a/2", "gone/x", "gone/y"])), &models, &[]);
        assert_eq!(scope.len(), 1);
        assert_eq!(scope[0].model.id, "2");
        // Every available model enabled, or none of them: no scope.
        assert!(scope_for(&Some(ids(&["a/1", "a/2", "gone/x"])), &models, &[]).is_empty());
        assert!(scope_for(&Some(ids(&["gone/x"])), &models, &[]).is_empty());
        assert_eq!(
            unmatched_patterns(&ids(&["a/1", "gone/x", "a/*"]), &models),
            ids(&["gone/x"])
        );
    }
}
