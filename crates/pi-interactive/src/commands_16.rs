//! Slash commands pi 1.6 added: `/thinking` (pick or name the session's thinking level) and
//! `/trust` (see and change the saved trust decision of the current project).

use std::path::PathBuf;

use pi_ai::ThinkingLevel;

use super::effect::{blocking, blocking_task, notice, then, then_notice, Ctx, Effect, Overlay, Picker};
use super::thinking_picker::{ThinkingPicker, SAVE_PREFIX};
use super::trust_selector::{trust_choices, TrustSelector};

/// `/thinking [level]`: with a level, set it for this session; without, open the selector.
pub fn thinking(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    let levels = cx.session.available_thinking_levels();
    let arg = arg.trim();
    if !arg.is_empty() {
        let wanted = arg.to_ascii_lowercase();
        return match levels.iter().find(|l| l.as_str() == wanted) {
            Some(&level) => set_level(cx, level, false),
            None => {
                let names: Vec<&str> = levels.iter().map(|l| l.as_str()).collect();
                vec![notice(
                    format!(
                        "Unknown thinking level \"{arg}\". Available levels: {}.",
                        names.join(", ")
                    ),
                    "error",
                )]
            }
        };
    }
    let current = cx.session.thinking_level();
    // pi marks its built-in default when none is saved.
    let default = cx
        .read_settings(|s| s.default_thinking_level())
        .flatten()
        .unwrap_or(ThinkingLevel::Medium);
    let picker = ThinkingPicker::new(&levels, current, default, cx.theme.clone(), cx.kb.clone());
    vec![Effect::Open(Overlay {
        view: Box::new(picker),
        picker: Picker::Custom(Box::new(|cx, value| {
            let Some(value) = value else { return Vec::new() };
            let (save, name) = match value.strip_prefix(SAVE_PREFIX) {
                Some(name) => (true, name),
                None => (false, value.as_str()),
            };
            match ThinkingLevel::parse(name) {
                Some(level) => set_level(cx, level, save),
                None => Vec::new(),
            }
        })),
    })]
}

/// Set the level for this session (recorded in it); with `save` also as the saved default.
fn set_level(cx: &Ctx<'_>, level: ThinkingLevel, save: bool) -> Vec<Effect> {
    let session = cx.session.clone();
    let mut effects = Vec::new();
    if save {
        effects.push(Effect::Settings(Box::new(move |s| s.set_default_thinking_level(level))));
    }
    effects.push(blocking_task(async move {
        let applied = session.set_thinking_level(level).await;
        then(move |_| {
            let status = if save {
                format!("Default thinking level: {}", level.as_str())
            } else {
                format!("Thinking level: {}", applied.as_str())
            };
            vec![Effect::StatusLine(status), Effect::RefreshFooter]
        })
    }));
    effects
}

/// `/trust`: the project's saved decision and this session's state, then a choice to save.
pub fn trust(cx: &Ctx<'_>, _: &str) -> Vec<Effect> {
    let paths = super::commands::paths_for(&cx.session);
    let cwd = paths.cwd.clone();
    let trust_file = paths.agent_dir.join("trust.json");
    let saved = pi_coding_agent::config::trust::saved_entry(&trust_file, &cwd);
    let view = TrustSelector::new(
        cwd.clone(),
        saved,
        cx.session.services().project_trusted(),
        cx.theme.clone(),
    );
    vec![Effect::Open(Overlay {
        view: Box::new(view),
        picker: Picker::Custom(Box::new(move |_, value| match value {
            Some(v) => save_trust(trust_file, cwd, &v),
            None => Vec::new(),
        })),
    })]
}

/// Save a choice as pi 1.6 does: trusting the parent also drops the project's own entry,
/// so the parent's decision covers it. The session keeps its state until pi starts again.
fn save_trust(trust_file: PathBuf, cwd: PathBuf, value: &str) -> Vec<Effect> {
    let Some(choice) = trust_choices(&cwd).into_iter().find(|c| c.value == value) else {
        return Vec::new();
    };
    let mut updates = vec![(choice.saved_path.clone(), Some(choice.trusted))];
    if choice.saved_path != cwd {
        updates.push((cwd, None));
    }
    let trusted = choice.trusted;
    vec![blocking(move || {
        match pi_coding_agent::config::trust::save_decisions(&trust_file, &updates) {
            Ok(()) => then(move |_| {
                vec![Effect::StatusLine(format!(
                    "Saved trust decision: {}. Restart pi for this to take effect.",
                    if trusted { "trusted" } else { "untrusted" }
                ))]
            }),
            Err(e) => then_notice(e, "error"),
        }
    })]
}
