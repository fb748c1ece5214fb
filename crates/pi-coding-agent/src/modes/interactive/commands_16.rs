//! Slash commands pi 1.6 added: `/thinking` (pick or name the session's thinking level) and
//! `/trust` (see and change the saved trust decision of the current project).

use std::path::{Path, PathBuf};

use pi_ai::ThinkingLevel;
use pi_tui::components::SelectItem;

use super::dialogs::Dialog;
use super::effect::{blocking, blocking_task, notice, then, then_notice, Ctx, Effect, Overlay, Picker};

/// Short descriptions of the levels in the `/thinking` selector.
fn level_description(level: ThinkingLevel) -> &'static str {
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

/// `/thinking [level]`: with a level, set it for this session; without, open the selector.
pub fn thinking(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    let levels = cx.session.available_thinking_levels();
    let arg = arg.trim();
    if !arg.is_empty() {
        let wanted = arg.to_ascii_lowercase();
        return match levels.iter().find(|l| l.as_str() == wanted) {
            Some(&level) => vec![set_level(cx, level)],
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
    let default = cx.read_settings(|s| s.default_thinking_level()).flatten();
    let items = levels
        .iter()
        .map(|&l| {
            let mark = if l == current { "✓ " } else { "  " };
            let mut description = level_description(l).to_string();
            if Some(l) == default {
                description.push_str(" · default");
            }
            SelectItem::new(l.as_str())
                .with_label(format!("{mark}{}", l.as_str()))
                .with_description(description)
        })
        .collect();
    let mut dialog = Dialog::choice("Thinking Level", items, false, cx.theme.clone());
    dialog.select_value(current.as_str());
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        picker: Picker::Custom(Box::new(|cx, value| {
            match value.as_deref().and_then(ThinkingLevel::parse) {
                Some(level) => vec![set_level(cx, level)],
                None => Vec::new(),
            }
        })),
    })]
}

/// Set the level for this session (recorded in it; the saved default stays).
fn set_level(cx: &Ctx<'_>, level: ThinkingLevel) -> Effect {
    let session = cx.session.clone();
    blocking_task(async move {
        let applied = session.set_thinking_level(level).await;
        then(move |_| {
            vec![
                notice(format!("Thinking level: {}", applied.as_str()), "dim"),
                Effect::RefreshFooter,
            ]
        })
    })
}

/// `/trust`: the project's saved decision and this session's state, then a choice to save.
pub fn trust(cx: &Ctx<'_>, _: &str) -> Vec<Effect> {
    let paths = super::commands::paths_for(&cx.session);
    let cwd = paths.cwd.clone();
    let trust_file = paths.agent_dir.join("trust.json");
    let saved = match crate::config::trust::saved_decision(&trust_file, &cwd) {
        Ok(Some(true)) => "trusted".to_string(),
        Ok(Some(false)) => "not trusted".to_string(),
        Ok(None) => "none".to_string(),
        Err(e) => e,
    };
    let current = if cx.session.services().project_trusted() {
        "trusted"
    } else {
        "not trusted"
    };
    let mut items = vec![SelectItem::new("trust").with_label("Trust")];
    if let Some(parent) = cwd.parent() {
        items.push(SelectItem::new("trust-parent").with_label(format!("Trust parent folder ({})", parent.display())));
    }
    items.push(SelectItem::new("distrust").with_label("Do not trust"));
    let info = format!(
        "**Project trust**\n\n{}\n\nSaved decision: {saved}  \nCurrent session: {current}",
        cwd.display()
    );
    let dialog = Dialog::choice("Project trust", items, false, cx.theme.clone());
    vec![
        Effect::Info(info),
        Effect::Open(Overlay {
            view: Box::new(dialog),
            picker: Picker::Custom(Box::new(move |_, value| match value {
                Some(v) => save_trust(trust_file, cwd, &v),
                None => Vec::new(),
            })),
        }),
    ]
}

fn save_trust(trust_file: PathBuf, cwd: PathBuf, value: &str) -> Vec<Effect> {
    let (dir, trusted) = match value {
        "trust-parent" => (cwd.parent().map_or(cwd.clone(), Path::to_path_buf), true),
        "distrust" => (cwd, false),
        _ => (cwd, true),
    };
    vec![blocking(move || {
        match crate::config::trust::save_decision(&trust_file, &dir, trusted) {
            Ok(()) => then_notice(
                format!(
                    "Saved: {} is {}. /reload applies it to this session.",
                    dir.display(),
                    if trusted { "trusted" } else { "not trusted" }
                ),
                "dim",
            ),
            Err(e) => then_notice(e, "error"),
        }
    })]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_has_a_description() {
        for l in ThinkingLevel::ALL {
            assert!(!level_description(l).is_empty());
        }
        assert_eq!(level_description(ThinkingLevel::Off), "No reasoning");
    }
}
