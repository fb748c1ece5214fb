//! `/settings`: the rows of the settings menu (in pi's order) and what changing each one does.
//! Every change is written to settings.json at once and applied to the running UI where it
//! matters (theme, thinking level, editor layout, images, queue modes).

use std::collections::BTreeMap;
use std::sync::Arc;

use pi_tui::components::{Input, SettingItem, SettingsEvent, SettingsList, SettingsListTheme};
use pi_tui::{Component, ComponentMouse, Frame, InputEvent};

use super::effect::{blocking, blocking_task, then, Ctx, Effect, Overlay, Picker, UiChange};
use super::settings_model_thinking::{sort_models, ModelChoice, ModelThinkingMenu, Outcome};
use super::settings_theme::{ThemeEvent, ThemeSubmenu};
use super::theme::UiTheme;
use pi_coding_agent::config::settings::{CacheWarmingMode, QueueMode, SettingsManager, Transport};

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
    pub theme: String,
    pub themes: Vec<String>,
    /// `warnings.anthropicExtraUsage`.
    pub warn_extra_usage: bool,
    /// The models with credentials, in the per-model submenu's order.
    pub models: Vec<ModelChoice>,
    /// The current model's `provider/id`.
    pub current_model: Option<String>,
    /// `defaultThinkingLevel`, else pi's default (`medium`).
    pub default_thinking_level: String,
    /// The keys that queue a follow-up and cycle the thinking level, as the rows name them.
    pub follow_up_keys: String,
    pub cycle_thinking_keys: String,
}

/// pi 1.6's HTTP idle timeout choices: label and milliseconds (`0`: disabled).
const HTTP_IDLE_TIMEOUTS: [(&str, u64); 5] = [
    ("30 sec", 30_000),
    ("1 min", 60_000),
    ("2 min", 120_000),
    ("5 min", 300_000),
    ("disabled", 0),
];

/// An idle timeout as the row shows it: a choice's label, else seconds.
pub fn format_http_idle_timeout(ms: u64) -> String {
    HTTP_IDLE_TIMEOUTS
        .iter()
        .find(|(_, v)| *v == ms)
        .map_or_else(|| format!("{} sec", ms as f64 / 1000.0), |(l, _)| l.to_string())
}

/// Whether the image rows are offered: the terminal draws images, and not through iTerm2 in
/// fullscreen (pi 1.6 draws no iTerm2 images on the alternate screen, so the rows would
/// change nothing there). `terminal.showImages` does not matter: the row turns it back on.
pub fn image_rows_shown(protocol: Option<pi_tui::components::ImageProtocol>, fullscreen: bool) -> bool {
    match protocol {
        Some(pi_tui::components::ImageProtocol::ITerm2) => !fullscreen,
        Some(_) => true,
        None => false,
    }
}

/// `defaultProjectTrust` values and the labels the row shows for them.
const PROJECT_TRUST: [(&str, &str); 3] = [("ask", "Ask"), ("always", "Always trust"), ("never", "Never trust")];

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
            "output-padding",
            "Output padding",
            "Columns before messages, tool output and command output (0-1)",
            s.output_pad().to_string(),
            &["0", "1"],
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
            &format!(
                "Messages queued with {} until the run ends: 'one-at-a-time' or 'all' together",
                st.follow_up_keys
            ),
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
        item(
            "share-destination",
            "Session share destination",
            "Where /share uploads a session ('auto': Radius when signed in, else a GitHub gist)",
            s.session_share_destination(),
            &["auto", "gist", "radius"],
        ),
        SettingItem {
            id: "http-idle-timeout".into(),
            label: "HTTP idle timeout".into(),
            description: Some(
                "How long a provider response may pause before it fails; turn it off for local models that think longer than five minutes"
                    .into(),
            ),
            value: format_http_idle_timeout(s.http_idle_timeout_ms()),
            values: HTTP_IDLE_TIMEOUTS.iter().map(|(l, _)| l.to_string()).collect(),
        },
        item(
            "cache-warming",
            "Cache warming",
            "Resend the last request before the provider's prompt cache expires: 'off', while the agent runs ('streaming'), or also for a while after it stops ('idle')",
            s.cache_warming_mode().as_str(),
            &["off", "streaming", "idle"],
        ),
        flag(
            "hide-thinking",
            "Hide thinking",
            "Show thinking blocks as a single line",
            st.hide_thinking,
        ),
        item(
            "mermaid-rendering",
            "Mermaid diagrams",
            "Draw Mermaid code blocks as diagrams: never, once a reply is complete, or while it streams",
            s.mermaid_mode(),
            &["off", "final", "streaming"],
        ),
        flag(
            "cache-miss-notices",
            "Cache miss notices",
            "Note in the transcript what cache misses, compactions and cache warming cost",
            s.show_cache_miss_notices(),
        ),
        flag(
            "collapse-changelog",
            "Collapse changelog",
            "Show a short changelog after an update",
            s.collapse_changelog(),
        ),
        item(
            "quiet-startup",
            "Quiet startup",
            "Skip the startup listing of loaded resources ('header': keep the logo and key hints)",
            s.quiet_startup_choice(),
            &["true", "header", "false"],
        ),
        flag(
            "install-telemetry",
            "Install telemetry",
            "Send an anonymous version ping after an update",
            s.enable_install_telemetry(),
        ),
        SettingItem {
            id: "default-project-trust".into(),
            label: "Default project trust".into(),
            description: Some(
                "What happens in a project with its own resources when no saved decision or extension decides".into(),
            ),
            value: PROJECT_TRUST
                .iter()
                .find(|(v, _)| *v == s.default_project_trust())
                .map_or("Ask", |(_, l)| l)
                .to_string(),
            values: PROJECT_TRUST.iter().map(|(_, l)| l.to_string()).collect(),
        },
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
    // These open a list of their own (the theme is previewed while moving through it).
    items.push(item(
        "warnings",
        "Warnings",
        "Turn individual warnings on or off",
        "configure",
        &[],
    ));
    let overrides: BTreeMap<String, String> = model_overrides(s);
    items.push(item(
        "model-thinking",
        "Default thinking level per model",
        &format!(
            "The thinking level a model starts with; {} still changes it for the session",
            st.cycle_thinking_keys
        ),
        super::settings_model_thinking::summary(&overrides),
        &[],
    ));
    let fullscreen = s.tui_fullscreen();
    let wheel = s.fullscreen_wheel_lines().map_or("auto".to_string(), |n| n.to_string());
    let mut wheel_values: Vec<String> = ["auto", "1", "2", "3", "5", "10"].map(String::from).to_vec();
    if !wheel_values.contains(&wheel) {
        wheel_values.push(wheel.clone());
    }
    items.extend([
        item(
            "tui-mode",
            "TUI mode",
            "Fullscreen owns the window; regular writes into the terminal's scrollback",
            if fullscreen { "fullscreen" } else { "regular" },
            &["regular", "fullscreen"],
        ),
        item(
            "fullscreen-exit-output",
            "Fullscreen exit output",
            "What stays on the screen after leaving fullscreen: the transcript, or only how to resume",
            if s.fullscreen_exit_transcript() {
                "transcript"
            } else {
                "resume-hint"
            },
            &["transcript", "resume-hint"],
        ),
        item(
            "fullscreen-scrollbar",
            "Fullscreen scrollbar",
            "When fullscreen shows a scrollbar (no effect in regular mode)",
            s.fullscreen_scrollbar(),
            &["auto", "always", "hidden"],
        ),
        flag(
            "fullscreen-copy-on-select",
            "Fullscreen copy on select",
            "Copy a mouse selection as soon as it is made (off: Ctrl+X copies it)",
            s.fullscreen_copy_on_select(),
        ),
        SettingItem {
            id: "fullscreen-wheel-scroll-lines".into(),
            label: "Fullscreen wheel scrolling".into(),
            description: Some("Lines per wheel step; auto speeds up fast spins".into()),
            value: wheel,
            values: wheel_values,
        },
    ]);
    items.push(item(
        "theme",
        "Theme",
        "The colours of the interface",
        st.theme.clone(),
        &[],
    ));
    items
}

/// What each thinking level means, for the per-model level list.
pub fn thinking_description(level: &str) -> &'static str {
    match level {
        "off" => "No reasoning",
        "minimal" => "A very short think (about 1k tokens)",
        "low" => "A short think (about 2k tokens)",
        "medium" => "A moderate think (about 8k tokens)",
        "high" => "A long think (about 16k tokens)",
        "xhigh" => "The longest think (about 32k tokens)",
        "max" => "As much reasoning as the model allows",
        _ => "",
    }
}

/// `modelThinkingLevels` as text values.
fn model_overrides(s: &SettingsManager) -> BTreeMap<String, String> {
    s.model_thinking_levels()
        .into_iter()
        .filter_map(|(k, v)| v.as_str().map(|v| (k, v.to_string())))
        .collect()
}

/// The value a warnings change reports: `<warning>=<true|false>`.
fn warning_value(name: &str, on: bool) -> String {
    format!("{name}={on}")
}

/// What the menu asks of its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MenuEvent {
    /// A setting changed: save and apply it.
    Changed {
        id: String,
        value: String,
    },
    /// Show a value without saving it (the theme while moving through the list).
    Preview {
        id: String,
        value: String,
    },
    /// Set (`Some`) or clear the startup thinking level of one model.
    ModelThinking {
        provider: String,
        id: String,
        level: Option<String>,
    },
    Closed,
}

/// The open submenu: the theme, the warnings, or the per-model thinking levels.
enum Open {
    Theme(Box<ThemeSubmenu>),
    Warnings(SettingsList),
    ModelThinking(Box<ModelThinkingMenu>),
}

const HINT: &str = "Type to search · Enter/Space to change · Esc to cancel";

/// The settings list between two rules, with a search line and its submenus.
pub struct SettingsMenu {
    /// Every row with its current value; `list` shows those matching the search.
    all: Vec<SettingItem>,
    search: Input,
    list_theme: SettingsListTheme,
    list: SettingsList,
    open: Option<Open>,
    /// What the theme and warnings submenus start from (kept as choices are made).
    submenu_state: SubmenuState,
    /// The theme setting shown now (a preview while the theme submenu is open).
    previewed: String,
    /// What the per-model submenu starts from (its choices are kept as they are made).
    model_thinking: ModelThinkingState,
    theme: Arc<UiTheme>,
    events: Vec<MenuEvent>,
    /// The rows the list (or the open submenu) took in the last render, for the mouse.
    list_rows: std::ops::Range<usize>,
}

/// The theme and warnings submenus' starting points.
pub struct SubmenuState {
    /// The `theme` setting (the theme shown when there is none).
    pub theme: String,
    /// Every theme on offer, `system` first.
    pub themes: Vec<String>,
    /// The terminal looks light.
    pub terminal_light: bool,
    /// `warnings.anthropicExtraUsage`.
    pub warn_extra_usage: bool,
}

/// The per-model submenu's models and the levels chosen so far.
#[derive(Default)]
pub struct ModelThinkingState {
    pub models: Vec<ModelChoice>,
    pub overrides: BTreeMap<String, String>,
    pub current_model: Option<String>,
    pub default_thinking_level: String,
}

impl SettingsMenu {
    pub fn new(
        items: Vec<SettingItem>,
        submenu_state: SubmenuState,
        model_thinking: ModelThinkingState,
        theme: Arc<UiTheme>,
    ) -> Self {
        let list_theme = theme.settings_list();
        let mut menu = SettingsMenu {
            all: items,
            search: Input::new("> "),
            list_theme,
            list: SettingsList::new(Vec::new(), 10, list_theme),
            open: None,
            previewed: submenu_state.theme.clone(),
            submenu_state,
            model_thinking,
            theme,
            events: Vec::new(),
            list_rows: 0..0,
        };
        menu.rebuild();
        menu
    }

    /// Show the rows whose label matches the search (all of them without one).
    fn rebuild(&mut self) {
        let q = self.search.value().to_string();
        let rows: Vec<SettingItem> = if q.is_empty() {
            self.all.clone()
        } else {
            pi_tui::fuzzy::fuzzy_filter(&self.all, &q, |i| i.label.as_str())
                .into_iter()
                .map(|i| self.all[i].clone())
                .collect()
        };
        self.list = SettingsList::new(rows, 10, self.list_theme);
        self.list.set_hint(HINT);
        let widest = self
            .all
            .iter()
            .map(|i| pi_tui::visible_width(&i.label))
            .max()
            .unwrap_or(0);
        self.list.set_min_label_width(widest);
    }

    /// Show `value` on row `id` (a change the app refused is put back).
    pub fn set_value(&mut self, id: &str, value: &str) {
        if let Some(it) = self.all.iter_mut().find(|i| i.id == id) {
            it.value = value.to_string();
        }
        self.list.set_value(id, value);
    }

    /// Draw in `theme` from now on, the open submenu included (a theme preview or change).
    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        self.list_theme = theme.settings_list();
        self.list.set_theme(self.list_theme);
        match &mut self.open {
            Some(Open::Theme(menu)) => menu.set_theme(theme.clone()),
            Some(Open::Warnings(list)) => list.set_theme(self.list_theme),
            Some(Open::ModelThinking(menu)) => menu.set_theme(theme.clone()),
            None => {}
        }
        self.theme = theme;
    }

    pub fn take_events(&mut self) -> Vec<MenuEvent> {
        std::mem::take(&mut self.events)
    }

    fn open_submenu(&mut self, id: &str) {
        match id {
            "model-thinking" => {
                let st = &self.model_thinking;
                self.open = Some(Open::ModelThinking(Box::new(ModelThinkingMenu::new(
                    st.models.clone(),
                    st.overrides.clone(),
                    st.default_thinking_level.clone(),
                    st.current_model.as_deref(),
                    self.theme.clone(),
                ))));
            }
            "theme" => {
                let st = &self.submenu_state;
                self.open = Some(Open::Theme(Box::new(ThemeSubmenu::new(
                    &st.theme,
                    st.terminal_light,
                    st.themes.clone(),
                    self.theme.clone(),
                ))));
            }
            "warnings" => {
                let row = item(
                    "anthropic-extra-usage",
                    "Anthropic extra usage",
                    "Warn when an Anthropic subscription may be billed for extra usage",
                    self.submenu_state.warn_extra_usage.to_string(),
                    BOOL,
                );
                let mut list = SettingsList::new(vec![row], 1, self.list_theme);
                list.set_hint("Enter/Space to change · Esc to cancel");
                self.open = Some(Open::Warnings(list));
            }
            _ => {}
        }
    }

    /// Show `setting` unless it is what is shown already.
    fn preview(&mut self, setting: String) {
        if setting != self.previewed {
            self.previewed = setting.clone();
            self.events.push(MenuEvent::Preview {
                id: "theme".into(),
                value: setting,
            });
        }
    }

    fn submenu_input(&mut self, event: &InputEvent) {
        let InputEvent::Key(k) = event else { return };
        match &mut self.open {
            Some(Open::ModelThinking(menu)) => match menu.handle_input(event) {
                Some(Outcome::Set { provider, id, level }) => {
                    let key = format!("{provider}/{id}");
                    match &level {
                        Some(l) => self.model_thinking.overrides.insert(key, l.clone()),
                        None => self.model_thinking.overrides.remove(&key),
                    };
                    self.events.push(MenuEvent::ModelThinking { provider, id, level });
                }
                Some(Outcome::Closed { summary }) => {
                    self.open = None;
                    self.set_value("model-thinking", &summary);
                }
                None => {}
            },
            Some(Open::Theme(menu)) => {
                for ev in menu.handle_key(k) {
                    match ev {
                        ThemeEvent::Preview(setting) => self.preview(setting),
                        ThemeEvent::Done(setting) => {
                            self.open = None;
                            if let Some(value) = setting {
                                self.previewed = value.clone();
                                self.submenu_state.theme = value.clone();
                                self.set_value("theme", &value);
                                self.events.push(MenuEvent::Changed {
                                    id: "theme".into(),
                                    value,
                                });
                            }
                        }
                    }
                }
            }
            // The row keeps saying "configure"; the submenu remembers the choice.
            Some(Open::Warnings(list)) => match list.handle_key(k) {
                SettingsEvent::Changed { value, .. } => {
                    let on = value == "true";
                    self.submenu_state.warn_extra_usage = on;
                    self.events.push(MenuEvent::Changed {
                        id: "warnings".into(),
                        value: warning_value("anthropicExtraUsage", on),
                    });
                }
                SettingsEvent::Cancelled => self.open = None,
                _ => {}
            },
            None => {}
        }
    }
}

impl Component for SettingsMenu {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let top = out.len();
        out.push_line(self.theme.paint("border", &"─".repeat(width)));
        // A submenu takes the list's place between the two rules, as in pi 1.6.
        let sub: Option<&mut dyn Component> = match &mut self.open {
            Some(Open::Theme(menu)) => Some(menu.as_mut()),
            Some(Open::Warnings(list)) => Some(list),
            Some(Open::ModelThinking(menu)) => Some(menu.as_mut()),
            None => None,
        };
        if let Some(sub) = sub {
            let start = out.len() - top;
            sub.render(width, out);
            self.list_rows = start..out.len() - top;
            out.push_line(self.theme.paint("border", &"─".repeat(width)));
            return;
        }
        self.search.render(width.max(1), out);
        out.push_line(String::new());
        if self.list.items().is_empty() {
            out.push_line(self.theme.paint("muted", "  No matching settings"));
            out.push_line(String::new());
            out.push_line(self.theme.paint("dim", &format!("  {HINT}")));
            self.list_rows = 0..0;
        } else {
            let start = out.len() - top;
            self.list.render(width, out);
            self.list_rows = start..out.len() - top;
        }
        out.push_line(self.theme.paint("border", &"─".repeat(width)));
    }

    /// The list takes the mouse as pi 1.6's settings list does (a press picks a row, a click
    /// changes it, the wheel moves the pick); so do the submenus.
    fn handle_mouse(&mut self, m: &ComponentMouse) -> bool {
        // The search line under the top rule: a press puts its cursor there.
        if self.open.is_none() {
            if let Some(at) = m.within(&(1..2)) {
                return self.search.handle_mouse(&at);
            }
        }
        let Some(inner) = m.within(&self.list_rows) else {
            return false;
        };
        if let Some(Open::ModelThinking(menu)) = &mut self.open {
            if menu.search_mouse(&inner) {
                return true;
            }
        }
        let keys = match &self.open {
            None => self.list.mouse_keys(&inner),
            Some(Open::Warnings(list)) => list.mouse_keys(&inner),
            Some(Open::Theme(menu)) => menu.mouse_keys(&inner),
            Some(Open::ModelThinking(menu)) => menu.mouse_keys(&inner),
        };
        let Some(keys) = keys else { return false };
        for k in keys {
            self.handle_input(&InputEvent::Key(k));
        }
        true
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        if self.open.is_some() {
            self.submenu_input(event);
            return true;
        }
        let InputEvent::Key(k) = event else { return false };
        // While a search is typed, a space is part of it (it changes a row otherwise).
        if k.text() == Some(' ') && !self.search.value().is_empty() {
            self.search.handle_key(k);
            self.rebuild();
            return true;
        }
        match self.list.handle_key(k) {
            SettingsEvent::Changed { id, value } => {
                self.set_value(&id, &value);
                self.events.push(MenuEvent::Changed { id, value });
            }
            SettingsEvent::OpenSubmenu { id } => self.open_submenu(&id),
            SettingsEvent::Cancelled => self.events.push(MenuEvent::Closed),
            SettingsEvent::Handled => {}
            // Everything else edits the search (spaces change the selected row instead).
            SettingsEvent::Ignored => {
                if k.text() == Some(' ') {
                    return true;
                }
                self.search.handle_key(k);
                self.rebuild();
            }
        }
        true
    }
}

/// `/settings`: the theme list and the models with credentials are found on the blocking
/// pool (models.json is read again), then the menu opens.
pub fn open(cx: &Ctx<'_>) -> Vec<Effect> {
    let paths = cx.paths();
    let Some(snapshot) = cx.settings_snapshot() else {
        return Vec::new();
    };
    let session = cx.session.clone();
    vec![blocking(move || {
        let themes = super::theme::theme_names(&paths, &snapshot);
        let models: Vec<ModelChoice> = session
            .available_models()
            .iter()
            .map(|m| ModelChoice {
                provider: m.provider.clone(),
                id: m.id.clone(),
                levels: pi_ai::thinking::supported_thinking_levels(m)
                    .iter()
                    .map(|l| l.as_str().to_string())
                    .collect(),
            })
            .collect();
        then(move |cx| open_with(cx, themes, models))
    })]
}

fn open_with(cx: &Ctx<'_>, themes: Vec<String>, mut models: Vec<ModelChoice>) -> Vec<Effect> {
    let session = &cx.session;
    let current_model = session.model().map(|m| format!("{}/{}", m.provider, m.id));
    let state = |s: &SettingsManager, models: Vec<ModelChoice>| MenuState {
        images_supported: image_rows_shown(
            pi_tui::components::Capabilities::detect_with(s.terminal_capability_overrides()).images,
            cx.ui.fullscreen,
        ),
        hide_thinking: cx.ui.hide_thinking,
        // The setting as saved (a `light/dark` pair shows as one), as pi 1.6's row shows it.
        theme: s.theme().map_or_else(|| cx.theme.name().to_string(), str::to_string),
        themes,
        warn_extra_usage: s.warning_enabled("anthropicExtraUsage"),
        models,
        current_model: current_model.clone(),
        default_thinking_level: s.default_thinking_level().map_or("medium", |l| l.as_str()).to_string(),
        follow_up_keys: super::keys::keys_display(cx.kb, "app.message.followUp").join("/"),
        cycle_thinking_keys: super::keys::keys_display(cx.kb, "app.thinking.cycle").join("/"),
    };
    let terminal_light =
        pi_coding_agent::resources::themes::default_theme_name(std::env::var("COLORFGBG").ok().as_deref()) == "light";
    let Some((items, submenu_state, model_thinking)) = cx.read_settings(|s| {
        let default_model = match (s.default_provider(), s.default_model()) {
            (Some(p), Some(m)) => Some(format!("{p}/{m}")),
            _ => None,
        };
        sort_models(&mut models, current_model.as_deref(), default_model.as_deref());
        let st = state(s, models);
        let model_thinking = ModelThinkingState {
            overrides: model_overrides(s),
            models: st.models.clone(),
            current_model: st.current_model.clone(),
            default_thinking_level: st.default_thinking_level.clone(),
        };
        let submenu_state = SubmenuState {
            theme: st.theme.clone(),
            themes: st.themes.clone(),
            terminal_light,
            warn_extra_usage: st.warn_extra_usage,
        };
        (settings_items(s, &st), submenu_state, model_thinking)
    }) else {
        return Vec::new();
    };
    let menu = SettingsMenu::new(items, submenu_state, model_thinking, cx.theme.clone());
    vec![Effect::Open(Overlay {
        view: Box::new(menu),
        picker: Picker::Settings,
    })]
}

/// A settings change, written to settings.json off the UI thread.
fn save(change: impl FnOnce(&mut SettingsManager) + Send + 'static) -> Effect {
    Effect::Settings(Box::new(change))
}

/// One changed row: the settings.json write and what changes on screen.
pub fn apply(cx: &Ctx<'_>, id: &str, value: &str) -> Vec<Effect> {
    let on = value == "true";
    let number = value.parse::<u64>().ok();
    let session = &cx.session;
    match id {
        "autocompact" => vec![save(move |s| s.set_compaction_enabled(on)), Effect::RefreshFooter],
        "show-images" => vec![
            save(move |s| s.set_show_images(on)),
            Effect::Ui(UiChange::ShowImages(on)),
        ],
        "image-width-cells" => number
            .map(|n| {
                vec![
                    save(move |s| s.set_image_width_cells(n)),
                    Effect::Ui(UiChange::ImageWidth(n as usize)),
                ]
            })
            .unwrap_or_default(),
        "auto-resize-images" => vec![save(move |s| s.set_image_auto_resize(on))],
        "block-images" => vec![save(move |s| s.set_block_images(on))],
        // A typed `/skill:name` still runs while off, as in pi 1.6: only the menu changes.
        "skill-commands" => vec![
            save(move |s| s.set_enable_skill_commands(on)),
            Effect::Ui(UiChange::SkillCommands(on)),
        ],
        "show-hardware-cursor" => vec![
            save(move |s| s.set_show_hardware_cursor(on)),
            Effect::Ui(UiChange::HardwareCursor(on)),
        ],
        "editor-padding" => number
            .map(|n| {
                vec![
                    save(move |s| s.set_editor_padding_x(n)),
                    Effect::Ui(UiChange::EditorPadding(n as usize)),
                ]
            })
            .unwrap_or_default(),
        "autocomplete-max-visible" => number
            .map(|n| {
                vec![
                    save(move |s| s.set_autocomplete_max_visible(n)),
                    Effect::Ui(UiChange::AutocompleteMaxVisible(n as usize)),
                ]
            })
            .unwrap_or_default(),
        "clear-on-shrink" => vec![
            save(move |s| s.set_clear_on_shrink(on)),
            Effect::Ui(UiChange::ClearOnShrink(on)),
        ],
        "terminal-progress" => vec![
            save(move |s| s.set_show_terminal_progress(on)),
            Effect::Ui(UiChange::TerminalProgress(on)),
        ],
        "steering-mode" | "follow-up-mode" => {
            let Some(mode) = QueueMode::parse(value) else {
                return Vec::new();
            };
            if id == "steering-mode" {
                session.agent().set_steering_mode(mode);
                vec![save(move |s| s.set_steering_mode(mode))]
            } else {
                session.agent().set_follow_up_mode(mode);
                vec![save(move |s| s.set_follow_up_mode(mode))]
            }
        }
        "cache-warming" => CacheWarmingMode::parse(value)
            .map(|mode| {
                vec![
                    save(move |s| s.set_cache_warming_mode(mode)),
                    Effect::StatusLine(format!("Cache warming: {}", mode.as_str())),
                ]
            })
            .unwrap_or_default(),
        "transport" => Transport::parse(value)
            .map(|t| vec![save(move |s| s.set_transport(t))])
            .unwrap_or_default(),
        // The app's toggle updates every block and saves the setting.
        "hide-thinking" if on != cx.ui.hide_thinking => vec![Effect::Ui(UiChange::HideThinking(on))],
        "collapse-changelog" => vec![save(move |s| s.set_collapse_changelog(on))],
        "quiet-startup" => {
            let value = value.to_string();
            vec![save(move |s| s.set_quiet_startup_choice(&value))]
        }
        "output-padding" => {
            let pad = u64::from(value != "0");
            vec![
                save(move |s| s.set_output_pad(pad)),
                Effect::Ui(UiChange::OutputPad(pad as usize)),
            ]
        }
        "share-destination" => {
            let value = value.to_string();
            vec![save(move |s| s.set_session_share_destination(&value))]
        }
        "http-idle-timeout" => {
            let Some(&(label, ms)) = HTTP_IDLE_TIMEOUTS.iter().find(|(l, _)| *l == value) else {
                return Vec::new();
            };
            // New requests get the timeout at once: the body's idle limit, and the wait for
            // headers unless `retry.provider.timeoutMs` sets that.
            pi_ai::http::configure_idle_timeout(ms);
            if cx.read_settings(|s| s.provider_retry().timeout_ms).flatten().is_none() {
                session
                    .agent()
                    .update_stream_options(|o| o.timeout_ms = (ms > 0).then_some(ms));
            }
            vec![
                save(move |s| s.set_http_idle_timeout_ms(ms)),
                Effect::StatusLine(format!("HTTP idle timeout: {label}")),
            ]
        }
        "mermaid-rendering" => {
            let mode = match value {
                "off" => "off",
                "final" => "final",
                _ => "streaming",
            };
            let value = value.to_string();
            vec![
                save(move |s| s.set_mermaid_mode(&value)),
                Effect::Ui(UiChange::Mermaid(mode)),
            ]
        }
        "cache-miss-notices" => vec![
            save(move |s| s.set_show_cache_miss_notices(on)),
            Effect::Ui(UiChange::CacheNotices),
        ],
        "default-project-trust" => {
            let Some(&(trust, _)) = PROJECT_TRUST.iter().find(|(_, l)| *l == value) else {
                return Vec::new();
            };
            vec![save(move |s| s.set_default_project_trust(trust))]
        }
        "install-telemetry" => vec![save(move |s| s.set_enable_install_telemetry(on))],
        "double-escape-action" => {
            let value = value.to_string();
            vec![save(move |s| s.set_double_escape_action(&value))]
        }
        "tree-filter-mode" => {
            let value = value.to_string();
            vec![save(move |s| s.set_tree_filter_mode(&value))]
        }
        "warnings" => {
            let Some((name, on)) = value.split_once('=') else {
                return Vec::new();
            };
            let (name, on) = (name.to_string(), on == "true");
            vec![save(move |s| {
                let mut map = s
                    .get("warnings")
                    .and_then(|v| v.as_object())
                    .cloned()
                    .unwrap_or_default();
                map.insert(name, serde_json::Value::Bool(on));
                s.set_warnings(map);
            })]
        }
        // The app switches at once (the menu stays open) and then saves it, or refuses.
        "tui-mode" => vec![Effect::Ui(UiChange::Fullscreen(value == "fullscreen"))],
        "fullscreen-exit-output" => {
            let v = value.to_string();
            vec![save(move |s| s.set_tui_value("fullscreenExitOutput", v.into()))]
        }
        "fullscreen-scrollbar" => {
            let v = value.to_string();
            vec![
                save(move |s| s.set_tui_value("fullscreenScrollbar", v.into())),
                Effect::Ui(UiChange::Scrollbar(pi_tui::ScrollbarMode::from_setting(value))),
            ]
        }
        "fullscreen-copy-on-select" => vec![save(move |s| s.set_tui_value("fullscreenCopyOnSelect", on.into()))],
        "fullscreen-wheel-scroll-lines" => {
            let v: serde_json::Value = number.map_or_else(|| "auto".into(), Into::into);
            let step = number.map_or(pi_tui::WheelStep::Auto, |n| pi_tui::WheelStep::Lines(n as usize));
            vec![
                save(move |s| s.set_tui_value("fullscreenWheelScrollLines", v)),
                Effect::Ui(UiChange::WheelStep(step)),
            ]
        }
        "theme" => {
            let mut out = load_theme(cx, value);
            let value = value.to_string();
            out.insert(0, save(move |s| s.set_theme(&value)));
            out
        }
        _ => Vec::new(),
    }
}

/// Save one model's startup thinking level; for the current model the session takes it (or,
/// cleared, the default level) at once, as pi 1.6 does.
fn apply_model_thinking(cx: &Ctx<'_>, provider: String, id: String, level: Option<String>) -> Vec<Effect> {
    let session = &cx.session;
    let is_current = session.model().is_some_and(|m| m.provider == provider && m.id == id);
    let now = match &level {
        Some(l) => pi_ai::ThinkingLevel::parse(l),
        None => cx
            .read_settings(|s| s.default_thinking_level())
            .flatten()
            .or(Some(pi_ai::ThinkingLevel::Medium)),
    };
    let mut out = vec![save(move |s| {
        s.set_model_thinking_level(&provider, &id, level.as_deref())
    })];
    if let (true, Some(now)) = (is_current, now) {
        let session = session.clone();
        out.push(blocking_task(async move {
            session.set_thinking_level(now).await;
            then(|_| vec![Effect::RefreshFooter])
        }));
    }
    out
}

/// Show the theme `name` (a built-in, or one from the themes folders: read from a copy of
/// the settings, so the lock is not held while theme files are read).
fn load_theme(cx: &Ctx<'_>, name: &str) -> Vec<Effect> {
    let paths = cx.paths();
    cx.settings_snapshot()
        .map(|s| {
            vec![Effect::SetTheme(Arc::new(
                super::theme::load_ui_theme(&paths, &s, Some(name)).0,
            ))]
        })
        .unwrap_or_default()
}

/// React to the menu's events: the effects, and whether it closed.
pub fn handle_events(cx: &Ctx<'_>, events: Vec<MenuEvent>) -> (Vec<Effect>, bool) {
    let mut out = Vec::new();
    let mut closed = false;
    for ev in events {
        match ev {
            MenuEvent::Changed { id, value } => out.extend(apply(cx, &id, &value)),
            // A theme shown while browsing, not saved.
            MenuEvent::Preview { value, .. } => out.extend(load_theme(cx, &value)),
            MenuEvent::ModelThinking { provider, id, level } => {
                out.extend(apply_model_thinking(cx, provider, id, level));
            }
            MenuEvent::Closed => closed = true,
        }
    }
    (out, closed)
}

/// The editor, cursor, renderer and progress-indicator settings applied at startup.
pub fn startup(cx: &Ctx<'_>) -> Vec<Effect> {
    cx.read_settings(|s| {
        vec![
            Effect::Ui(UiChange::EditorPadding(s.editor_padding_x() as usize)),
            Effect::Ui(UiChange::AutocompleteMaxVisible(s.autocomplete_max_visible() as usize)),
            Effect::Ui(UiChange::HardwareCursor(s.show_hardware_cursor())),
            Effect::Ui(UiChange::TerminalProgress(s.show_terminal_progress())),
            Effect::Ui(UiChange::ClearOnShrink(s.clear_on_shrink())),
        ]
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(images: bool) -> MenuState {
        MenuState {
            images_supported: images,
            hide_thinking: false,
            theme: "dark".into(),
            themes: vec!["dark".into(), "light".into()],
            warn_extra_usage: true,
            models: Vec::new(),
            current_model: None,
            default_thinking_level: "medium".into(),
            follow_up_keys: "Ctrl+Q".into(),
            cycle_thinking_keys: "Shift+Tab".into(),
        }
    }

    /// pi 1.6's rows, in its order, without the image rows (no image support).
    const ROWS_16: [&str; 31] = [
        "Auto-compact",
        "Auto-resize images",
        "Block images",
        "Skill commands",
        "Show hardware cursor",
        "Editor padding",
        "Output padding",
        "Autocomplete max items",
        "Clear on shrink",
        "Terminal progress",
        "Steering mode",
        "Follow-up mode",
        "Transport",
        "Session share destination",
        "HTTP idle timeout",
        "Cache warming",
        "Hide thinking",
        "Mermaid diagrams",
        "Cache miss notices",
        "Collapse changelog",
        "Quiet startup",
        "Install telemetry",
        "Default project trust",
        "Double-escape action",
        "Tree filter mode",
        "Warnings",
        "Default thinking level per model",
        "TUI mode",
        "Fullscreen exit output",
        "Fullscreen scrollbar",
        "Fullscreen copy on select",
    ];

    #[test]
    fn rows_are_pi_16s_in_its_order_with_its_values() {
        let s = SettingsManager::in_memory(serde_json::json!({
            "httpIdleTimeoutMs": 120000,
            "defaultProjectTrust": "never",
            "quietStartup": "header",
            "outputPad": 0,
            "markdown": {"mermaid": "final"},
            "modelThinkingLevels": {"a/b": "low", "c/d": "high"},
        }));
        let items = settings_items(&s, &state(false));
        let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels[..31], ROWS_16);
        assert_eq!(labels[31..], ["Fullscreen wheel scrolling", "Theme"]);
        let value = |id: &str| items.iter().find(|i| i.id == id).map(|i| i.value.clone()).expect(id);
        assert_eq!(value("http-idle-timeout"), "2 min");
        assert_eq!(value("default-project-trust"), "Never trust");
        assert_eq!(value("quiet-startup"), "header");
        assert_eq!(value("output-padding"), "0");
        assert_eq!(value("mermaid-rendering"), "final");
        assert_eq!(value("share-destination"), "auto");
        assert_eq!(value("model-thinking"), "2 configured");
        // Key names come from the keybindings.
        let follow_up = items.iter().find(|i| i.id == "follow-up-mode").expect("row");
        assert!(follow_up.description.as_deref().is_some_and(|d| d.contains("Ctrl+Q")));
        assert_eq!(format_http_idle_timeout(45_000), "45 sec");
        let plain = SettingsManager::in_memory(serde_json::json!({}));
        let items = settings_items(&plain, &state(false));
        let value = |id: &str| items.iter().find(|i| i.id == id).map(|i| i.value.clone()).expect(id);
        assert_eq!(value("http-idle-timeout"), "5 min");
        assert_eq!(value("default-project-trust"), "Ask");
        assert_eq!(value("model-thinking"), "none");
        assert_eq!(value("output-padding"), "1");
    }

    #[test]
    fn image_rows_are_offered_unless_fullscreen_draws_through_iterm2() {
        use pi_tui::components::ImageProtocol::{ITerm2, Kitty};
        assert!(image_rows_shown(Some(Kitty), true) && image_rows_shown(Some(Kitty), false));
        assert!(image_rows_shown(Some(ITerm2), false));
        assert!(!image_rows_shown(Some(ITerm2), true));
        assert!(!image_rows_shown(None, false));
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
        let warming = items.iter().find(|i| i.id == "cache-warming").expect("row");
        assert_eq!(warming.value, "idle");
        // Every row's current value is one of its choices, so cycling starts in the right place.
        for i in items.iter().filter(|i| !i.values.is_empty()) {
            assert!(
                i.values.contains(&i.value),
                "{}: {} not in {:?}",
                i.id,
                i.value,
                i.values
            );
        }
        // The thinking level is /thinking's now; the theme row shows the setting.
        assert!(!items.iter().any(|i| i.id == "thinking"));
        let theme = items.iter().find(|i| i.id == "theme").expect("row");
        assert_eq!(theme.value, "dark");
        assert!(theme.values.is_empty(), "the theme row opens a submenu");
    }
}
