//! The app's side of what extensions draw: screen changes from the host applied to the
//! view and the overlays, the lines of extension components fetched before a frame (only
//! those that changed or changed width), keys for the focused extension component, and the
//! host's mirror of the UI facts components read (theme, terminal size, git branch, tools
//! expanded, editor text), pushed when they change.

use std::sync::Arc;
use std::time::Duration;

use pi_extensions::{ExtensionRunner, StateUpdate};
use pi_tui::{ComponentMouseKind, InputEvent, Tui};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::super::effect::Effect;
use super::super::events::{Msg, UiSender};
use super::super::extension_ui::autocomplete::Chain;
use super::super::extension_ui::keys::encode_key;
use super::super::extension_ui::message_block::{self, MessageBlock, RenderKey};
use super::super::extension_ui::screen::{overlay_options, HostLines, ScreenChange};
use super::super::extension_ui::shortcuts::shortcut_for;
use super::super::extension_ui::tool_render::{request_item, ToolState};
use super::super::extension_ui::working::Working;
use super::super::extension_ui::{extension_error_text, notice_style};
use super::super::theme::UiTheme;
use super::super::tool_block::ToolBlock;
use super::App;
use pi_coding_agent::extension_theme::theme_spec;
use pi_coding_agent::extension_ui::ExtensionUiHost;
use pi_coding_agent::extension_ui::WidgetPlacement;
use pi_coding_agent::extensions::early_ui::{EarlyCall, EarlyUi};
use pi_coding_agent::resources::ResourceScope;

/// A component that takes longer than this to render is drawn with its old lines.
const RENDER_TIMEOUT: Duration = Duration::from_secs(5);

/// What the host's mirror was last told, so only changes are pushed.
#[derive(Default)]
pub struct Pushed {
    theme: Option<Arc<UiTheme>>,
    size: Option<(usize, usize)>,
    branch: Option<Option<String>>,
    expanded: Option<bool>,
    editor_text: Option<String>,
    editor_border: Option<&'static str>,
    /// How many slash commands the replacement editor's completions were sent with.
    editor_commands: Option<usize>,
    /// What the message renderers' lines were last looked for, and whether a request for
    /// them is on its way.
    message_key: Option<RenderKey>,
    messages_made: u64,
    messages_in_flight: bool,
    tool_key: Option<RenderKey>,
    tools_in_flight: bool,
    /// Keys for extension components and `onTerminalInput` listeners, sent in order by one
    /// task.
    keys: Option<mpsc::Sender<KeyJob>>,
    /// The latest drag for an extension component not yet sent (see [`KeyJob::Drag`]).
    drag: DragSlot,
    /// The app's keybindings were sent to the host (for the keybindings components get).
    keybindings_sent: bool,
    /// The theme catalogue (`ctx.ui.getAllThemes()`) was sent for this extension runtime.
    themes_sent: bool,
    /// The working indicator as extensions set it.
    working: Working,
    /// Whether extensions stacked completion providers (shared with the editor's provider).
    completions: Arc<Chain>,
    /// An app action a replacement editor handed back that only the loop can carry out
    /// (suspend, the external editor: they need the terminal).
    loop_action: Option<String>,
}

/// A key on its way to the host: for a component (by id), or through the terminal input
/// listeners.
enum KeyJob {
    Component(u64, String),
    Filter(String),
    /// A mouse report for a component, as pi-tui's `handleMouse` takes it.
    Mouse(u64, Value),
    /// The latest drag waiting in [`Pushed::drag`] (taken when the job's turn comes).
    Drag,
}

/// A press an extension component got: which one, the screen cell of its top-left corner
/// and its size then, so the rest of the gesture is told in the same coordinates.
#[derive(Debug, Clone, Copy)]
pub(super) struct ExtensionPress {
    id: u64,
    origin: (i64, i64),
    size: (usize, usize),
}

/// A mouse event as pi-tui's `handleMouse` takes it, at screen `(row, column)`.
fn mouse_event(press: &ExtensionPress, kind: &str, button: &str, screen: (usize, usize)) -> Value {
    json!({
        "type": kind,
        "button": button,
        "x": screen.1 as i64 - press.origin.1,
        "y": screen.0 as i64 - press.origin.0,
        "screenX": screen.1,
        "screenY": screen.0,
        "width": press.size.0,
        "height": press.size.1,
        "shift": false,
        "alt": false,
        "ctrl": false,
    })
}

/// Lines as the host sends them: `{lines: {id: [..] | null}}`.
fn parse_lines(answer: &Value, items: &[(u64, usize)]) -> Vec<(u64, usize, Option<Vec<String>>)> {
    let lines = answer.get("lines");
    items
        .iter()
        .map(|&(id, width)| {
            let these = lines
                .and_then(|l| l.get(id.to_string()))
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect());
            (id, width, these)
        })
        .collect()
}

fn change_msg(change: ScreenChange) -> Msg {
    Msg::Then(Box::new(move |_| vec![Effect::Extension(change)]))
}

impl App {
    /// The types of custom entries an extension's entry renderer draws.
    pub(super) fn entry_renderer_types(&self) -> std::collections::HashSet<String> {
        let Some(runner) = self.extension_runner() else {
            return Default::default();
        };
        let registrations = runner.registrations();
        registrations
            .extensions
            .iter()
            .flat_map(|e| e.entry_renderers.iter().cloned())
            .collect()
    }

    /// The custom entries of the session's branch that entry renderers draw, each with the
    /// number of transcript messages before it.
    pub(super) fn branch_entry_blocks(&self) -> Vec<(usize, Value)> {
        let types = self.entry_renderer_types();
        if types.is_empty() {
            return Vec::new();
        }
        let session = self.session();
        let messages = session.with_messages(<[_]>::len);
        session.with_store(|store| message_block::branch_entries(&store.get_branch(None), &types, messages))
    }

    /// What says whether extensions stacked completion providers, for the editor's provider.
    pub fn completion_chain(&self) -> Arc<Chain> {
        self.ext_pushed.completions.clone()
    }

    /// The loaded extensions for the startup listing (pi's own built-ins left out), each with
    /// its scope group: the user's, the project's, or a path given for this run; and those
    /// of them found in an `extensions/` folder (not named by the settings).
    pub(super) fn listed_extensions(&self) -> (Vec<(std::path::PathBuf, ResourceScope)>, Vec<std::path::PathBuf>) {
        let Some(runner) = self.extension_runner() else {
            return Default::default();
        };
        let session = self.session();
        let agent_dir = super::super::commands::paths_for(&session).agent_dir;
        let project = session.cwd().join(".pi");
        // What each settings file's `extensions` names (a file, or a folder of them), against
        // its own folder; the project's first, as pi ranks them.
        let named: Vec<(std::path::PathBuf, ResourceScope)> = session
            .settings()
            .lock()
            .map(|s| {
                let entries = |map: &serde_json::Map<String, Value>, base: &std::path::Path, scope: ResourceScope| {
                    map.get("extensions")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .filter(|v| !v.starts_with(['-', '!', '+']) && !v.starts_with("builtin:"))
                        .map(|v| (pi_extensions::discovery::absolute(base, v), scope.clone()))
                        .collect::<Vec<_>>()
                };
                let mut all = entries(s.project_settings(), &project, ResourceScope::Project);
                all.extend(entries(s.global_settings(), &agent_dir, ResourceScope::User));
                all
            })
            .unwrap_or_default();
        // A package's extensions are its entries or in them (the deepest entry wins, for
        // packages inside packages). Not its whole folder: a `-e` file's package is the
        // folder the file is in, which may hold other extensions too.
        let packages: Vec<(&std::path::PathBuf, &pi_coding_agent::resources::PackageOrigin)> = session
            .resources()
            .package_extensions
            .iter()
            .filter_map(|(entry, scope)| match scope {
                ResourceScope::Package(origin) => Some((entry, origin)),
                _ => None,
            })
            .collect();
        let mut auto = Vec::new();
        let listed = runner
            .registrations()
            .extensions
            .iter()
            .filter(|e| !e.path.starts_with("builtin:"))
            .map(|e| {
                let path = std::path::PathBuf::from(&e.path);
                let package = packages
                    .iter()
                    .filter(|(entry, _)| path.starts_with(entry))
                    .max_by_key(|(entry, _)| entry.components().count())
                    .map(|(_, origin)| origin);
                let setting = named.iter().find(|(p, _)| path.starts_with(p)).map(|(_, s)| s.clone());
                let scope = if let Some(origin) = package {
                    ResourceScope::Package((*origin).clone())
                } else if let Some(scope) = setting {
                    scope
                } else if path.starts_with(&agent_dir) {
                    auto.push(path.clone());
                    ResourceScope::User
                } else if path.starts_with(&project) {
                    auto.push(path.clone());
                    ResourceScope::Project
                } else {
                    ResourceScope::Path
                };
                (path, scope)
            })
            .collect();
        (listed, auto)
    }

    /// pi 1.6's `[Extension issues]`: load failures, commands named like the app's own, and
    /// shortcuts clashing with the app's keys or each other's.
    pub(super) fn extension_issues(&self) -> Vec<super::super::loaded_resources::Issue> {
        let Some(runner) = self.extension_runner() else {
            return Vec::new();
        };
        super::super::extension_ui::issues::extension_issues(
            &runner.registrations(),
            &self.kb,
            super::super::commands::is_core_command,
        )
    }

    fn extension_runner(&self) -> Option<Arc<ExtensionRunner>> {
        self.session().services().extensions().runner()
    }

    /// What extensions showed before the terminal UI was up, first.
    pub fn apply_early_extension_ui(&mut self, early: &dyn ExtensionUiHost, tui: &mut Tui) {
        let Some(early) = early.as_any().and_then(|a| a.downcast_ref::<EarlyUi>()) else {
            return;
        };
        for call in early.take() {
            match call {
                EarlyCall::Notify(text, kind) => match notice_style(kind) {
                    "dim" => self.status_line(text),
                    style => self.notice(text, style),
                },
                EarlyCall::Error(path, _event, error) => self.notice(extension_error_text(&path, &error), "error"),
                EarlyCall::Status(key, text) => self.extension_change(ScreenChange::Status { key, text }, tui),
                EarlyCall::Widget(key, lines, placement) => {
                    let below = placement == Some(WidgetPlacement::BelowEditor);
                    self.extension_change(ScreenChange::WidgetLines { key, lines, below }, tui);
                }
                EarlyCall::Title(title) => self.extension_change(ScreenChange::Title(title), tui),
                EarlyCall::EditorText(text) => self.extension_change(ScreenChange::EditorText(text), tui),
                EarlyCall::Screen(method, params) => {
                    if let Some(change) = ScreenChange::from_notification(&method, &params) {
                        self.extension_change(change, tui);
                    }
                }
            }
        }
    }

    /// Carry out a change to what extensions show.
    pub(super) fn extension_change(&mut self, change: ScreenChange, tui: &mut Tui) {
        let ext = &mut self.view.ext;
        match change {
            ScreenChange::Status { key, text } => ext.set_status(key, text),
            ScreenChange::WidgetLines { key, lines, below } => ext.set_widget(key, lines.map(Ok), below),
            ScreenChange::WidgetComponent { key, id, below } => ext.set_widget(key, Some(Err(id)), below),
            ScreenChange::Header(id) => {
                ext.set_header(id);
                if id.is_none() {
                    self.restore_header();
                }
            }
            ScreenChange::Footer(id) => ext.set_footer(id),
            ScreenChange::Custom {
                id,
                overlay,
                options,
                blocked,
            } => {
                if let Some((kind, message)) = blocked {
                    ext.set_blocking(id, kind, message);
                }
                if overlay {
                    let options = overlay_options(&options);
                    let oid = tui.show_overlay(Box::new(HostLines::new()), options);
                    ext.add_custom(id, Some((oid, options)));
                } else {
                    ext.add_custom(id, None);
                }
            }
            ScreenChange::CustomClose(id) => {
                if let Some(oid) = ext.close_custom(id) {
                    tui.hide_overlay(oid);
                }
            }
            ScreenChange::CustomFocus(id) => {
                if let Some(oid) = ext.raise(id) {
                    tui.raise_overlay(oid);
                }
            }
            ScreenChange::CustomHidden { id, hidden } => {
                if let Some(oid) = ext.set_hidden(id, hidden) {
                    tui.set_overlay_hidden(oid, hidden);
                }
            }
            ScreenChange::RequestRender => ext.mark_stale(),
            ScreenChange::Lines(_) | ScreenChange::InputLines(..) => {
                let changed = match change {
                    ScreenChange::Lines(lines) => ext.store(lines),
                    ScreenChange::InputLines(id, width, lines, text) => {
                        // Text the host had already does not undo what the app did to
                        // the editor since (an action such as clear, handed back by a key).
                        let known = |t: &String| ext.editor_text() == Some(t.as_str());
                        if let Some(text) = text.filter(|t| ext.editor() == Some(id) && !known(t)) {
                            // pi's editor holds the replacement's text, for what reads it
                            // (the app's keys, getEditorText, a later switch back).
                            self.view.editor.set_text(&text);
                            self.view.ext.set_editor_text(text);
                        }
                        match lines {
                            Some(lines) => self.view.ext.store_reply(id, width, lines),
                            None => Vec::new(),
                        }
                    }
                    _ => Vec::new(),
                };
                for id in changed {
                    if let Some(oid) = self.view.ext.overlay_of(id) {
                        let lines = self.view.ext.lines_of(id).to_vec();
                        if let Some(o) = tui.overlay_mut::<HostLines>(oid) {
                            o.set(lines);
                        }
                    }
                    if self.view.ext.header() == Some(id) {
                        self.show_extension_header();
                    }
                }
            }
            ScreenChange::MessageLines { key, items } => {
                self.ext_pushed.messages_in_flight = false;
                for (index, message, lines) in items {
                    let holds = |chat: &mut pi_tui::Container, i: usize| {
                        chat.child_mut::<MessageBlock>(i)
                            .is_some_and(|b| b.message() == &message)
                    };
                    // An entry put in before a streaming reply moves the blocks after it.
                    let len = self.view.chat.len();
                    let Some(index) = (index..len).find(|&i| holds(&mut self.view.chat, i)) else {
                        continue;
                    };
                    if let Some(block) = self.view.chat.child_mut::<MessageBlock>(index) {
                        block.set_rendered(key, lines);
                        self.view.thaw(index);
                    }
                }
            }
            ScreenChange::ToolLines { width, items } => {
                self.ext_pushed.tools_in_flight = false;
                for (index, id, call, result) in items {
                    // The block may have moved down since (an entry put in before a reply).
                    let index = self.tools.get(&id).copied().unwrap_or(index);
                    let Some(block) = self.view.chat.child_mut::<ToolBlock>(index) else {
                        continue;
                    };
                    if block.id != id {
                        continue;
                    }
                    if let Some(ext) = &mut block.ext {
                        ext.set_lines(width, call, result);
                    }
                    block.invalidate_render();
                    self.view.thaw(index);
                }
            }
            ScreenChange::Editor(id) => {
                ext.set_editor(id);
                // The host built the replacement with the last editor text it was sent, which
                // can be older than pi's editor: keys typed after a submit and before this
                // change went to pi's editor. Recording the host's text (not pi's) makes the
                // next state push hand pi's current text to the replacement.
                let host_text = self.ext_pushed.editor_text.clone().unwrap_or_default();
                self.view.ext.set_editor_text(host_text);
            }
            ScreenChange::EditorSubmit(text) => {
                self.view.editor.set_text("");
                self.view.ext.set_editor_text(String::new());
                self.submit(text, false, tui);
            }
            ScreenChange::EditorAction(action) => match action.as_str() {
                "app.suspend" | "app.editor.external" => self.ext_pushed.loop_action = Some(action),
                _ => {
                    self.handle_app_action(&|id| id == action, tui);
                }
            },
            ScreenChange::TerminalInput(on) => ext.set_terminal_input(on),
            ScreenChange::Completions { typed, prefix, items } => {
                if self.view.editor.text() == typed {
                    self.view
                        .editor
                        .show_suggestions(pi_tui::autocomplete::Suggestions { items, prefix });
                }
            }
            ScreenChange::Autocomplete(triggers) => self.ext_pushed.completions.set(triggers),
            ScreenChange::Suggested { at, force, suggestions } => {
                let editor = &mut self.view.editor;
                // While a completion is being applied, an answer for the text before it is
                // out of date (the text it was asked for is about to change).
                let applying = editor.is_applying() && !force;
                if force {
                    editor.stop_applying();
                }
                if !applying && at.is_now(editor.lines(), editor.cursor()) {
                    editor.answer_suggestions(suggestions, force);
                }
            }
            ScreenChange::SuggestedStale => self.view.editor.stop_applying(),
            ScreenChange::Applied { at, applied, submit } => {
                let editor = &mut self.view.editor;
                // The keys held meanwhile go on after this, whether it still applies or not.
                editor.stop_applying();
                if at.is_now(editor.lines(), editor.cursor()) {
                    editor.set_applied(applied);
                    if let Some(text) = submit.then(|| editor.submit_now()).flatten() {
                        self.submit(text, false, tui);
                    }
                }
            }
            ScreenChange::ToolsExpanded(on) => self.set_tools_expanded(on),
            ScreenChange::WorkingMessage(message) => {
                let shown = self.ext_pushed.working.is_shown(self.view.status.as_ref());
                self.ext_pushed.working.message = message;
                if let Some(loader) = self.view.status.as_mut().filter(|_| shown) {
                    self.ext_pushed.working.retext(loader);
                }
            }
            ScreenChange::WorkingVisible(visible) => {
                let shown = self.ext_pushed.working.is_shown(self.view.status.as_ref());
                self.ext_pushed.working.visible = visible;
                if !visible && shown {
                    self.set_status(None);
                } else if visible && self.running && self.view.status.is_none() {
                    self.show_working();
                }
            }
            ScreenChange::WorkingIndicator(indicator) => {
                let shown = self.ext_pushed.working.is_shown(self.view.status.as_ref());
                self.ext_pushed.working.indicator = indicator;
                if shown {
                    self.show_working();
                }
            }
            ScreenChange::HiddenThinkingLabel(label) => self.set_hidden_thinking_label(label.as_deref()),
            ScreenChange::EditorText(text) => self.view.editor.set_text(&text),
            ScreenChange::Paste(text) => {
                self.view.editor.insert_text(&text);
            }
            ScreenChange::Title(title) => {
                ext.set_title(title);
                self.title_dirty = true;
            }
            ScreenChange::Reset => {
                // A /reload may have brought themes.
                self.ext_pushed.themes_sent = false;
                // pi's working indicator and thinking label again (kept across runs until now).
                let shown = self.ext_pushed.working.is_shown(self.view.status.as_ref());
                self.ext_pushed.working = Working::default();
                if shown {
                    self.show_working();
                }
                self.set_hidden_thinking_label(None);
                self.ext_pushed.completions.set(None);
                for oid in self.view.ext.reset() {
                    tui.hide_overlay(oid);
                }
                self.restore_header();
                self.title_dirty = true;
            }
        }
    }

    /// The extension header in the startup header's place (when the header is shown).
    fn show_extension_header(&mut self) {
        let Some(id) = self.view.ext.header() else { return };
        if !self.show_header || self.view.chat.is_empty() {
            return;
        }
        // pi's header area starts with a blank line, as the built-in header does; the
        // loaded-resources listing stays under the extension's header.
        let resources = self.resources_text();
        let listing = (!resources.is_empty())
            .then(|| std::iter::once(String::new()).chain(resources.lines().map(str::to_string)));
        let mut block = HostLines::new();
        // It ends with a blank line, as pi's own header does.
        block.set(
            std::iter::once(String::new())
                .chain(self.view.ext.lines_of(id).iter().cloned())
                .chain(listing.into_iter().flatten())
                .chain(std::iter::once(String::new()))
                .collect(),
        );
        self.view.thaw(0);
        if let Some(first) = self.view.chat.children_mut().first_mut() {
            *first = Box::new(block);
        }
    }

    /// pi's own startup header again, after an extension's.
    fn restore_header(&mut self) {
        if !self.show_header || self.view.chat.child_mut::<HostLines>(0).is_none() {
            return;
        }
        let header = self.header_block();
        self.view.thaw(0);
        if let Some(first) = self.view.chat.children_mut().first_mut() {
            *first = header;
        }
    }

    /// The working indicator of a run, as extensions shaped it (or nothing, when they hid
    /// it).
    pub(super) fn show_working(&mut self) {
        if !self.ext_pushed.working.visible {
            self.set_status(None);
            return;
        }
        let loader = self
            .ext_pushed
            .working
            .loader(self.theme.fg("accent"), self.theme.fg("muted"));
        self.view.status = Some(loader);
    }

    /// Whether the status spinner's next frame is due (an extension's indicator has its own
    /// interval).
    pub(super) fn spinner_due(&mut self, interval: Duration) -> bool {
        self.ext_pushed.working.frame_due(interval)
    }

    /// The label of hidden thinking blocks, on every assistant block.
    fn set_hidden_thinking_label(&mut self, label: Option<&str>) {
        let label = super::super::chat::set_hidden_thinking_label(label);
        self.view.drop_frozen();
        for c in self.view.chat.children_mut() {
            if let Some(b) = c.as_mut().downcast_mut::<super::super::chat::AssistantBlock>() {
                b.set_hidden_label(label.clone());
            }
        }
    }

    /// `ctx.ui.setToolsExpanded`: as the expand key does.
    fn set_tools_expanded(&mut self, on: bool) {
        if on == self.tools_expanded {
            return;
        }
        self.tools_expanded = on;
        self.view.drop_frozen();
        for c in self.view.chat.children_mut() {
            if let Some(b) = c.as_mut().downcast_mut::<ToolBlock>() {
                b.set_expanded(on);
            }
        }
    }

    /// Before a frame: tell the host what changed of what its components read, and ask for
    /// the lines of the extension components that changed or changed width.
    pub fn prepare_extension_frame(&mut self, (width, height): (usize, usize)) {
        let Some(runner) = self.extension_runner() else { return };
        self.push_ui_state(&runner, width, height);
        // A header put back by a rebuild (theme change, new session) is the extension's again.
        if self.view.ext.header().is_some() && self.show_header && self.view.chat.child_mut::<HostLines>(0).is_none() {
            self.show_extension_header();
        }
        self.render_messages(&runner, width);
        self.render_tools(&runner, width);
        let Some(items) = self.view.ext.wanted(width) else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let params = json!({
                "items": items.iter().map(|(id, w)| json!({"id": id, "width": w})).collect::<Vec<_>>(),
            });
            let change = match runner.ui_request("ui.render", params, RENDER_TIMEOUT).await {
                Ok(answer) => ScreenChange::Lines(parse_lines(&answer, &items)),
                // The old lines stay; a host that is gone is reported by the next event.
                Err(_) => ScreenChange::Lines(items.iter().map(|&(id, w)| (id, w, None)).collect()),
            };
            tx.send(change_msg(change)).await;
        });
    }

    /// Ask the message renderers for the lines of custom messages not drawn for this width,
    /// expanded state and theme (looked for only when one of those changed or a message
    /// block was added).
    fn render_messages(&mut self, runner: &Arc<ExtensionRunner>, width: usize) {
        if self.ext_pushed.messages_in_flight {
            return;
        }
        let key = RenderKey {
            width,
            expanded: self.tools_expanded,
            theme: Arc::as_ptr(&self.theme) as usize,
        };
        let made = message_block::made();
        if self.ext_pushed.message_key == Some(key) && self.ext_pushed.messages_made == made {
            return;
        }
        self.ext_pushed.message_key = Some(key);
        self.ext_pushed.messages_made = made;
        let registrations = runner.registrations();
        let types: std::collections::HashSet<&str> = registrations
            .extensions
            .iter()
            .flat_map(|e| e.message_renderers.iter().map(String::as_str))
            .collect();
        let entry_types: std::collections::HashSet<&str> = registrations
            .extensions
            .iter()
            .flat_map(|e| e.entry_renderers.iter().map(String::as_str))
            .collect();
        if types.is_empty() && entry_types.is_empty() {
            return;
        }
        let mut items = Vec::new();
        for (i, child) in self.view.chat.children_mut().iter_mut().enumerate() {
            let Some(b) = child.as_mut().downcast_mut::<MessageBlock>() else {
                continue;
            };
            let known = if b.is_entry() { &entry_types } else { &types };
            if b.custom_type().is_some_and(|t| known.contains(t)) && !b.is_rendered_for(key) {
                items.push((i, b.message().clone()));
            }
        }
        if items.is_empty() {
            return;
        }
        self.ext_pushed.messages_in_flight = true;
        let runner = runner.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let params = json!({
                "expanded": key.expanded,
                "width": key.width,
                "items": items.iter().map(|(_, m)| m).collect::<Vec<_>>(),
            });
            let answer = runner.ui_request("ui.renderMessages", params, RENDER_TIMEOUT).await;
            let lines = answer
                .ok()
                .and_then(|a| a.get("lines").and_then(Value::as_array).cloned())
                .unwrap_or_default();
            let items = items
                .into_iter()
                .enumerate()
                .map(|(n, (index, message))| {
                    let these = lines
                        .get(n)
                        .and_then(Value::as_array)
                        .map(|a| a.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect());
                    (index, message, these)
                })
                .collect();
            tx.send(change_msg(ScreenChange::MessageLines { key, items })).await;
        });
    }

    /// Ask extension tools' renderers for the lines of tool blocks whose call or result
    /// changed, or all of them when the width, expanded state or theme changed. Between
    /// those, only the newest blocks are looked at (where running tools are).
    fn render_tools(&mut self, runner: &Arc<ExtensionRunner>, width: usize) {
        /// Running tools are among this many last blocks of the chat.
        const LIVE_TAIL: usize = 64;
        if self.ext_pushed.tools_in_flight {
            return;
        }
        let registrations = runner.registrations();
        let names = registrations.self_rendered_tools();
        let any_tool = registrations.has_tool_renderers();
        if names.is_empty() && !any_tool {
            return;
        }
        let inner = width.saturating_sub(2).max(1);
        let key = RenderKey {
            width: inner,
            expanded: self.tools_expanded,
            theme: Arc::as_ptr(&self.theme) as usize,
        };
        let len = self.view.chat.len();
        let from = if self.ext_pushed.tool_key == Some(key) {
            len.saturating_sub(LIVE_TAIL)
        } else {
            0
        };
        self.ext_pushed.tool_key = Some(key);
        let cwd = self.session().cwd().display().to_string();
        let mut items = Vec::new();
        for (i, child) in self.view.chat.children_mut().iter_mut().enumerate().skip(from) {
            let Some(b) = child.as_mut().downcast_mut::<ToolBlock>() else {
                continue;
            };
            if !any_tool && !names.contains(b.name()) {
                continue;
            }
            let state = ToolState::of(b);
            let current = b.ext.as_ref().is_some_and(|e| e.is_current(key, &state));
            if current {
                continue;
            }
            items.push((i, b.id.clone(), request_item(b, &cwd)));
            b.ext.get_or_insert_with(Default::default).asked(key, state);
        }
        if items.is_empty() {
            return;
        }
        self.ext_pushed.tools_in_flight = true;
        let runner = runner.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let params = json!({
                "width": inner,
                "items": items.iter().map(|(_, _, item)| item).collect::<Vec<_>>(),
            });
            let answer = runner.ui_request("ui.renderTools", params, RENDER_TIMEOUT).await;
            let answered = answer
                .ok()
                .and_then(|a| a.get("items").and_then(Value::as_array).cloned())
                .unwrap_or_default();
            let lines = |v: Option<&Value>| -> Option<Vec<String>> {
                v.and_then(Value::as_array)
                    .map(|a| a.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect())
            };
            let items = items
                .into_iter()
                .enumerate()
                .map(|(n, (index, id, _))| {
                    let one = answered.get(n);
                    (
                        index,
                        id,
                        lines(one.and_then(|o| o.get("call"))),
                        lines(one.and_then(|o| o.get("result"))),
                    )
                })
                .collect();
            tx.send(change_msg(ScreenChange::ToolLines { width: inner, items }))
                .await;
        });
    }

    fn push_ui_state(&mut self, runner: &Arc<ExtensionRunner>, width: usize, height: usize) {
        let mut update = StateUpdate::default();
        let mut any = false;
        let border = self.editor_border_token();
        // Slash commands for a replacement editor's completions (sent while one is shown).
        let commands = self.view.ext.editor().is_some().then(|| self.commands.slash_commands());
        let pushed = &mut self.ext_pushed;
        if !pushed.theme.as_ref().is_some_and(|t| Arc::ptr_eq(t, &self.theme)) {
            update.theme = Some(theme_spec(&self.theme));
            pushed.theme = Some(self.theme.clone());
            any = true;
        }
        if pushed.size != Some((width, height)) {
            update.terminal = Some(json!({"columns": width, "rows": height}));
            pushed.size = Some((width, height));
            any = true;
        }
        if pushed.branch.as_ref() != Some(&self.branch) {
            update.git_branch = self.branch.clone();
            pushed.branch = Some(self.branch.clone());
            any = true;
        }
        if pushed.expanded != Some(self.tools_expanded) {
            update.tools_expanded = Some(self.tools_expanded);
            pushed.expanded = Some(self.tools_expanded);
            any = true;
        }
        if pushed.editor_border != Some(border) {
            update.editor_border = Some(border.to_string());
            pushed.editor_border = Some(border);
            any = true;
        }
        if let Some(commands) = commands {
            if pushed.editor_commands != Some(commands.len()) {
                pushed.editor_commands = Some(commands.len());
                update.editor_commands = Some(
                    commands
                        .iter()
                        .map(|c| json!({"name": c.name, "description": c.description}))
                        .collect(),
                );
                any = true;
            }
        }
        let text = self.view.editor.text();
        // A replacement editor's own text came from the host: it needs no echo.
        let from_host = self.view.ext.editor().is_some() && self.view.ext.editor_text() == Some(text.as_str());
        if from_host {
            pushed.editor_text = Some(text.clone());
        }
        if pushed.editor_text.as_deref() != Some(text.as_str()) {
            update.editor_text = Some(text.clone());
            pushed.editor_text = Some(text);
            any = true;
        }
        if any {
            let _ = runner.push_state(&update);
        }
        if !self.ext_pushed.themes_sent {
            self.ext_pushed.themes_sent = true;
            let session = self.session();
            let paths = super::super::commands::paths_for(&session);
            let settings = session.settings().lock().ok().map(|s| s.snapshot());
            let runner = runner.clone();
            // Theme files are read off the UI thread; the list arrives a moment later.
            tokio::task::spawn_blocking(move || {
                let Some(settings) = settings else { return };
                let update = StateUpdate {
                    themes: Some(super::super::extension_ui::themes::catalogue(&paths, &settings)),
                    ..StateUpdate::default()
                };
                let _ = runner.push_state(&update);
            });
        }
        if !self.ext_pushed.keybindings_sent {
            self.ext_pushed.keybindings_sent = true;
            let bindings = keybinding_table(&self.kb);
            let runner = runner.clone();
            tokio::spawn(async move {
                // Without them components keep pi-tui's defaults; nothing else to do.
                let _ = runner
                    .ui_request("ui.keybindings", json!({ "bindings": bindings }), RENDER_TIMEOUT)
                    .await;
            });
        }
    }

    /// The app action a replacement editor handed back for the loop, if any.
    pub fn take_loop_action(&mut self) -> Option<String> {
        self.ext_pushed.loop_action.take()
    }

    /// With `onTerminalInput` listeners, a key goes to them first (in order with the keys
    /// for components); what they pass on comes back as [`Msg::FilteredInput`].
    pub fn filter_terminal_input(&mut self, ev: &InputEvent) -> bool {
        if !self.view.ext.terminal_input() {
            return false;
        }
        match terminal_bytes(ev) {
            Some(Some(data)) => self.send_key(KeyJob::Filter(data)),
            _ => false,
        }
    }

    /// A key for the replacement editor, when one is shown in the editor's place.
    pub(super) fn replacement_editor_input(&mut self, ev: &InputEvent) -> bool {
        let Some(id) = self.view.ext.editor() else { return false };
        match terminal_bytes(ev) {
            Some(Some(data)) => self.send_key(KeyJob::Component(id, data)),
            // A key with no terminal encoding is still the replacement editor's to swallow.
            Some(None) => true,
            None => false,
        }
    }

    fn send_key(&mut self, job: KeyJob) -> bool {
        if self.ext_pushed.keys.is_none() {
            let Some(runner) = self.extension_runner() else {
                return false;
            };
            let drag = self.ext_pushed.drag.clone();
            self.ext_pushed.keys = Some(spawn_key_sender(runner, self.tx.clone(), drag));
        }
        self.ext_pushed
            .keys
            .as_ref()
            .is_some_and(|keys| keys.try_send(job).is_ok())
    }

    /// A mouse report for the extension component (or replacement editor) drawn in the
    /// editor's place, in its own rows and columns: sent to the host in order with the keys,
    /// its new lines come back as a screen change. Whether there was one to take it. A press
    /// starts a gesture: the drags and the release that follow go to the same component.
    pub(super) fn extension_mouse(
        &mut self,
        local: (usize, usize),
        screen: (usize, usize),
        height: usize,
        kind: ComponentMouseKind,
        width: usize,
    ) -> bool {
        let Some(id) = self.view.ext.inline_target() else {
            return false;
        };
        let (kind, button, delta) = match kind {
            ComponentMouseKind::Press => ("press", "left", None),
            ComponentMouseKind::Click => ("click", "left", None),
            ComponentMouseKind::WheelUp => ("wheel", "none", Some(-1)),
            ComponentMouseKind::WheelDown => ("wheel", "none", Some(1)),
        };
        let press = ExtensionPress {
            id,
            origin: (screen.0 as i64 - local.0 as i64, screen.1 as i64 - local.1 as i64),
            size: (width, height),
        };
        let mut event = mouse_event(&press, kind, button, screen);
        if let Some(delta) = delta {
            event["wheelDelta"] = json!(delta);
        } else if kind == "click" {
            event["clickCount"] = json!(1);
        }
        let sent = self.send_key(KeyJob::Mouse(id, event));
        if sent && kind == "press" {
            self.ext_press = Some(press);
        }
        sent
    }

    /// A drag or release after a press on an extension component: as pi-tui 1.6 does, it
    /// goes to the component the press went to, in that component's rows and columns
    /// (which may lie outside it). Drags are coalesced: while one waits, only the latest
    /// position is kept. A release ends the gesture.
    pub(super) fn extension_gesture(&mut self, release: bool, screen: (usize, usize)) {
        let Some(press) = self.ext_press else { return };
        if release {
            self.ext_press = None;
            let event = mouse_event(&press, "release", "left", screen);
            self.send_key(KeyJob::Mouse(press.id, event));
            return;
        }
        let event = mouse_event(&press, "drag", "left", screen);
        let waiting = {
            let mut slot = self.ext_pushed.drag.lock().unwrap_or_else(|e| e.into_inner());
            slot.replace((press.id, event)).is_some()
        };
        if !waiting && !self.send_key(KeyJob::Drag) {
            self.ext_pushed.drag.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
    }

    /// A key for the focused extension component, if one has the keys: sent to the host
    /// in order, its new lines come back as a screen change.
    pub(super) fn extension_input(&mut self, ev: &InputEvent) -> bool {
        let Some(id) = self.view.ext.focused() else {
            return self.extension_shortcut(ev);
        };
        match terminal_bytes(ev) {
            Some(Some(data)) => self.send_key(KeyJob::Component(id, data)),
            // A key with no terminal encoding is still the replacement editor's to swallow.
            Some(None) => true,
            None => false,
        };
        true
    }
}

impl App {
    /// A key an extension registered as a shortcut runs its handler (on a task: it may open
    /// dialogs); its failure is reported like any extension error.
    fn extension_shortcut(&mut self, ev: &InputEvent) -> bool {
        let InputEvent::Key(k) = ev else { return false };
        if k.is_release() || self.view.editor.is_showing_autocomplete() {
            return false;
        }
        let Some(runner) = self.extension_runner() else {
            return false;
        };
        let registrations = runner.registrations();
        let Some(key) = shortcut_for(k, &registrations.extensions, &self.kb).map(str::to_string) else {
            return false;
        };
        let slot = self.session().services().extensions().clone();
        tokio::spawn(async move {
            match runner.run_shortcut(&key).await {
                Ok(result) => slot.report(result.error.into_iter().collect()).await,
                Err(e) => slot.host_failed("shortcut", &e).await,
            }
        });
        true
    }
}

/// Every keybinding id with its keys, as the host's keybindings manager takes them.
fn keybinding_table(kb: &pi_tui::Keybindings) -> serde_json::Map<String, Value> {
    pi_tui::TUI_KEYBINDINGS
        .iter()
        .chain(super::super::keys::APP_KEYBINDINGS)
        .map(|d| (d.id.to_string(), json!(kb.keys(d.id))))
        .collect()
}

/// Where the latest drag waits for the key task, shared with it.
type DragSlot = Arc<std::sync::Mutex<Option<(u64, Value)>>>;

/// Keys typed ahead of the host's answers. A host this far behind is not answering; past the
/// bound a key is not queued and the app handles it as if no extension wanted it.
const KEY_QUEUE: usize = 1024;

/// One task sends the keys for extension components and terminal input listeners, one at a
/// time, so they arrive in the order typed; a component's answer carries its new lines, a
/// listener's the keys to handle.
fn spawn_key_sender(runner: Arc<ExtensionRunner>, tx: UiSender, drag: DragSlot) -> mpsc::Sender<KeyJob> {
    let (keys, mut queued) = mpsc::channel::<KeyJob>(KEY_QUEUE);
    tokio::spawn(async move {
        while let Some(job) = queued.recv().await {
            let (id, method, params) = match job {
                KeyJob::Component(id, data) => (id, "ui.input", json!({"id": id, "data": data})),
                KeyJob::Mouse(id, event) => (id, "ui.mouse", json!({"id": id, "event": event})),
                KeyJob::Drag => {
                    let taken = drag.lock().unwrap_or_else(|e| e.into_inner()).take();
                    let Some((id, event)) = taken else { continue };
                    (id, "ui.mouse", json!({"id": id, "event": event}))
                }
                KeyJob::Filter(data) => {
                    let answer = runner
                        .ui_request("ui.terminalInput", json!({ "data": &data }), RENDER_TIMEOUT)
                        .await;
                    // A host that cannot answer does not swallow the key.
                    let pass = match answer {
                        Ok(a) if a.get("consume").and_then(Value::as_bool) == Some(true) => None,
                        Ok(a) => Some(a.get("data").and_then(Value::as_str).map_or(data, str::to_string)),
                        Err(_) => Some(data),
                    };
                    if let Some(pass) = pass {
                        tx.send(Msg::FilteredInput(pass)).await;
                    }
                    continue;
                }
            };
            let answer = runner.ui_request(method, params, RENDER_TIMEOUT).await;
            let Ok(answer) = answer else { continue };
            let Some(width) = answer.get("width").and_then(Value::as_u64) else {
                continue;
            };
            let text = answer.get("text").and_then(Value::as_str).map(str::to_string);
            // `null` lines: unchanged (the text of an editor may still have changed).
            let lines: Option<Vec<String>> = answer
                .get("lines")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect());
            if lines.is_some() || text.is_some() {
                let change = ScreenChange::InputLines(id, width as usize, lines, text);
                tx.send(change_msg(change)).await;
            }
        }
    });
    keys
}

/// The bytes a terminal would send for `ev`, as extensions read input: `None` for an event
/// that is not a key or a paste, `Some(None)` for a key with no terminal encoding.
fn terminal_bytes(ev: &InputEvent) -> Option<Option<String>> {
    match ev {
        InputEvent::Key(k) => Some(encode_key(k)),
        InputEvent::Paste(text) => Some(Some(format!("\x1b[200~{text}\x1b[201~"))),
        _ => None,
    }
}
