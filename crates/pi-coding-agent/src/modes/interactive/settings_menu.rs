//! `/settings`: the rows of the settings menu (in pi's order) and what changing each one does.
//! Every change is written to settings.json at once and applied to the running UI where it
//! matters (theme, thinking level, editor layout, images, queue modes).

use pi_tui::components::{SettingItem, SettingsList};
use pi_tui::{OverlayOptions, Tui};

use super::app::{App, Picker};
use super::commands::paths_for;
use super::events::Msg;
use crate::config::settings::{QueueMode, SettingsManager, Transport};

const BOOL: &[&str] = &["true", "false"];

fn item(id: &str, label: &str, description: &str, value: impl Into<String>, values: &[&str]) -> SettingItem {
    SettingItem {
        id: id.into(),
        label: label.into(),
        description: Some(description.into()),
        value: value.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

fn flag(id: &str, label: &str, description: &str, value: bool) -> SettingItem {
    item(id, label, description, value.to_string(), BOOL)
}

/// What the menu needs to know besides settings.json.
pub struct MenuState {
    pub images_supported: bool,
    pub hide_thinking: bool,
    pub thinking_level: String,
    pub thinking_levels: Vec<String>,
    pub theme: String,
    pub themes: Vec<String>,
}

/// The menu's rows, in the order pi shows them.
pub fn settings_items(s: &SettingsManager, st: &MenuState) -> Vec<SettingItem> {
    let mut items = vec![flag(
        "autocompact",
        "Auto-compact",
        "Compact the context automatically when it nears the window",
        s.compaction().enabled,
    )];
    if st.images_supported {
        items.push(flag(
            "show-images",
            "Show images",
            "Draw images inline in the terminal",
            s.show_images(),
        ));
        items.push(item(
            "image-width-cells",
            "Image width",
            "Preferred width of inline images, in terminal cells",
            s.image_width_cells().to_string(),
            &["60", "80", "120"],
        ));
    }
    items.extend([
        flag(
            "auto-resize-images",
            "Auto-resize images",
            "Scale large images down to at most 2000x2000 before sending them",
            s.image_auto_resize(),
        ),
        flag(
            "block-images",
            "Block images",
            "Never send images to the model provider",
            s.block_images(),
        ),
        flag(
            "skill-commands",
            "Skill commands",
            "Offer skills as /skill:name commands",
            s.enable_skill_commands(),
        ),
        flag(
            "show-hardware-cursor",
            "Show hardware cursor",
            "Keep the terminal cursor visible (it is always placed for IME input)",
            s.show_hardware_cursor(),
        ),
        item(
            "editor-padding",
            "Editor padding",
            "Columns of horizontal padding inside the input editor (0-3)",
            s.editor_padding_x().to_string(),
            &["0", "1", "2", "3"],
        ),
        item(
            "autocomplete-max-visible",
            "Autocomplete max items",
            "How many suggestions the autocomplete list shows at once (3-20)",
            s.autocomplete_max_visible().to_string(),
            &["3", "5", "7", "10", "15", "20"],
        ),
        flag(
            "clear-on-shrink",
            "Clear on shrink",
            "Blank the rows left over when the screen content gets shorter (may flicker)",
            s.clear_on_shrink(),
        ),
        flag(
            "terminal-progress",
            "Terminal progress",
            "Report progress to the terminal's tab bar (OSC 9;4)",
            s.show_terminal_progress(),
        ),
        item(
            "steering-mode",
            "Steering mode",
            "Messages sent with Enter during a run: 'one-at-a-time' delivers one per turn, 'all' delivers them together",
            s.steering_mode().as_str(),
            &["one-at-a-time", "all"],
        ),
        item(
            "follow-up-mode",
            "Follow-up mode",
            "Messages queued with Alt+Enter until the run ends: 'one-at-a-time' or 'all' together",
            s.follow_up_mode().as_str(),
            &["one-at-a-time", "all"],
        ),
        item(
            "transport",
            "Transport",
            "Connection preferred by providers that offer more than one",
            s.transport().as_str(),
            &["sse", "websocket", "websocket-cached", "auto"],
        ),
        flag(
            "hide-thinking",
            "Hide thinking",
            "Show thinking blocks as a single line",
            st.hide_thinking,
        ),
        flag(
            "collapse-changelog",
            "Collapse changelog",
            "Show a short changelog after an update",
            s.collapse_changelog(),
        ),
        flag(
            "quiet-startup",
            "Quiet startup",
            "Skip the startup listing of loaded resources",
            s.quiet_startup(),
        ),
        flag(
            "install-telemetry",
            "Install telemetry",
            "Send an anonymous version ping after an update",
            s.enable_install_telemetry(),
        ),
        item(
            "double-escape-action",
            "Double-escape action",
            "What Escape twice on an empty editor opens",
            s.double_escape_action(),
            &["tree", "fork", "none"],
        ),
        item(
            "tree-filter-mode",
            "Tree filter mode",
            "The filter /tree starts with",
            s.tree_filter_mode(),
            &["default", "no-tools", "user-only", "labeled-only", "all"],
        ),
    ]);
    let mut thinking = item(
        "thinking",
        "Thinking level",
        "How much thinking-capable models reason",
        st.thinking_level.clone(),
        &[],
    );
    thinking.values = st.thinking_levels.clone();
    items.push(thinking);
    let mut theme = item(
        "theme",
        "Theme",
        "Colour theme (applied as you cycle)",
        st.theme.clone(),
        &[],
    );
    theme.values = st.themes.clone();
    items.push(theme);
    items
}

pub fn open(app: &mut App, tui: &mut Tui) {
    let session = app.session();
    let paths = paths_for(&session);
    let state = |s: &SettingsManager| MenuState {
        images_supported: pi_tui::components::Capabilities::detect().images.is_some(),
        hide_thinking: app.hide_thinking,
        thinking_level: session.thinking_level().as_str().to_string(),
        thinking_levels: session
            .available_thinking_levels()
            .iter()
            .map(|l| l.as_str().to_string())
            .collect(),
        theme: app.theme.name().to_string(),
        themes: super::theme::theme_names(&paths, s),
    };
    let items = match session.settings().lock() {
        Ok(s) => settings_items(&s, &state(&s)),
        Err(_) => return,
    };
    let mut list = SettingsList::new(items, 10, app.theme.settings_list());
    list.set_hint("Enter/Space to change · Esc to close");
    let id = tui.show_overlay(Box::new(list), OverlayOptions::default());
    app.picker = Some((id, Picker::Settings));
}

fn with_settings(app: &App, f: impl FnOnce(&mut SettingsManager)) {
    if let Ok(mut s) = app.session().settings().lock() {
        f(&mut s);
    }
}

fn agent_mode(mode: QueueMode) -> pi_agent::QueueMode {
    match mode {
        QueueMode::All => pi_agent::QueueMode::All,
        QueueMode::OneAtATime => pi_agent::QueueMode::OneAtATime,
    }
}

/// Apply one changed row: write settings.json and update what is on screen.
pub fn apply(app: &mut App, tui: &mut Tui, id: &str, value: &str) {
    let on = value == "true";
    let number = value.parse::<u64>().ok();
    let session = app.session();
    match id {
        "autocompact" => {
            with_settings(app, |s| s.set_compaction_enabled(on));
            app.refresh_footer();
        }
        "show-images" => {
            with_settings(app, |s| s.set_show_images(on));
            app.caps.images = if on {
                pi_tui::components::Capabilities::detect().images
            } else {
                None
            };
            if !app.busy {
                app.rebuild_chat();
            }
        }
        "image-width-cells" => {
            if let Some(n) = number {
                with_settings(app, |s| s.set_image_width_cells(n));
            }
        }
        "auto-resize-images" => with_settings(app, |s| s.set_image_auto_resize(on)),
        "block-images" => with_settings(app, |s| s.set_block_images(on)),
        "skill-commands" => with_settings(app, |s| s.set_enable_skill_commands(on)),
        "show-hardware-cursor" => {
            with_settings(app, |s| s.set_show_hardware_cursor(on));
            tui.set_show_hardware_cursor(on);
        }
        "editor-padding" => {
            if let Some(n) = number {
                with_settings(app, |s| s.set_editor_padding_x(n));
                app.view.editor.set_padding_x(n as usize);
            }
        }
        "autocomplete-max-visible" => {
            if let Some(n) = number {
                with_settings(app, |s| s.set_autocomplete_max_visible(n));
                app.view.editor.set_autocomplete_max_visible(n as usize);
            }
        }
        "clear-on-shrink" => with_settings(app, |s| s.set_clear_on_shrink(on)),
        "terminal-progress" => with_settings(app, |s| s.set_show_terminal_progress(on)),
        "steering-mode" | "follow-up-mode" => {
            let Some(mode) = QueueMode::parse(value) else { return };
            if id == "steering-mode" {
                session.agent().set_steering_mode(agent_mode(mode));
                with_settings(app, |s| s.set_steering_mode(mode));
            } else {
                session.agent().set_follow_up_mode(agent_mode(mode));
                with_settings(app, |s| s.set_follow_up_mode(mode));
            }
        }
        "transport" => {
            if let Some(t) = Transport::parse(value) {
                with_settings(app, |s| s.set_transport(t));
            }
        }
        // The key handler's toggle updates every block and saves the setting.
        "hide-thinking" if on != app.hide_thinking => app.toggle_thinking(),
        "collapse-changelog" => with_settings(app, |s| s.set_collapse_changelog(on)),
        "quiet-startup" => with_settings(app, |s| s.set_quiet_startup(on)),
        "install-telemetry" => with_settings(app, |s| s.set_enable_install_telemetry(on)),
        "double-escape-action" => with_settings(app, |s| s.set_double_escape_action(value)),
        "tree-filter-mode" => with_settings(app, |s| s.set_tree_filter_mode(value)),
        "thinking" => {
            let Some(level) = pi_ai::ThinkingLevel::parse(value) else {
                return;
            };
            let tx = app.tx.clone();
            tokio::spawn(async move {
                session.set_thinking_level(level).await;
                let _ = tx.send(Msg::Footer);
            });
        }
        "theme" => {
            let paths = paths_for(&session);
            let theme = match session.settings().lock() {
                Ok(mut s) => {
                    s.set_theme(value);
                    super::theme::load_ui_theme(&paths, &s, Some(value)).0
                }
                Err(_) => return,
            };
            app.set_theme(std::sync::Arc::new(theme));
        }
        _ => {}
    }
}

/// Apply the editor and cursor settings at startup.
pub fn apply_startup(app: &mut App, tui: &mut Tui) {
    let Ok(s) = app.session().settings().lock().map(|s| {
        (
            s.editor_padding_x(),
            s.autocomplete_max_visible(),
            s.show_hardware_cursor(),
        )
    }) else {
        return;
    };
    app.view.editor.set_padding_x(s.0 as usize);
    app.view.editor.set_autocomplete_max_visible(s.1 as usize);
    tui.set_show_hardware_cursor(s.2);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(images: bool) -> MenuState {
        MenuState {
            images_supported: images,
            hide_thinking: false,
            thinking_level: "off".into(),
            thinking_levels: vec!["off".into(), "low".into()],
            theme: "dark".into(),
            themes: vec!["dark".into(), "light".into()],
        }
    }

    #[test]
    fn rows_follow_pis_order_and_hide_image_rows_without_image_support() {
        let s = SettingsManager::in_memory(serde_json::json!({"steeringMode": "all", "editorPaddingX": 2}));
        let ids: Vec<String> = settings_items(&s, &state(false)).into_iter().map(|i| i.id).collect();
        assert_eq!(ids[0], "autocompact");
        assert_eq!(ids[1], "auto-resize-images");
        assert!(!ids.contains(&"show-images".to_string()));
        assert_eq!(ids.last().map(String::as_str), Some("theme"));
        let items = settings_items(&s, &state(true));
        assert_eq!(items[1].id, "show-images");
        assert_eq!(items[2].id, "image-width-cells");
        let steering = items.iter().find(|i| i.id == "steering-mode").expect("row");
        assert_eq!(steering.value, "all");
        let padding = items.iter().find(|i| i.id == "editor-padding").expect("row");
        assert_eq!(padding.value, "2");
        // Every row's current value is one of its choices, so cycling starts in the right place.
        for i in &items {
            assert!(
                i.values.contains(&i.value),
                "{}: {} not in {:?}",
                i.id,
                i.value,
                i.values
            );
        }
    }
}
