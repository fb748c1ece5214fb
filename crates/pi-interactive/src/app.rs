//! The interactive application's state and the one place effects are carried out
//! ([`App::apply`]). Its reactions to keys live in `app/input.rs`, to prompts and `!`
//! commands in `app/prompt.rs`, to session events in `app/session_events.rs`; commands,
//! pickers and menus never see the app: they get a [`Ctx`] and return effects.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use pi_tui::components::{Editor, Loader};
use pi_tui::{Keybindings, OverlayId, OverlayOptions, Tui};
use tokio_util::sync::CancellationToken;

use super::chat::{AssistantBlock, InfoBlock, Notice};
use super::command_registry::CommandRegistry;
use super::effect::{Ctx, Effect, Picker, Replace, SettingsChange, Then, UiChange, UiState};
use super::events::{LiveUpdate, Msg, UiSender};
use super::extension_ui::screen::ExtensionScreen;
use super::footer::{git_branch, Footer, FooterData, Totals};
use super::theme::UiTheme;
use super::tool_block::ToolBlock;
use super::view::{build_transcript, Pending, View};
use pi_coding_agent::session::AgentSession;
use pi_coding_agent::session_host::SessionHost;

mod extensions;
mod held_input;
mod input;
mod login;
mod prompt;
mod screen;
mod session_events;

/// What the transcript rebuild puts between messages.
enum Insert {
    /// A custom entry an entry renderer draws.
    Entry(serde_json::Value),
    /// A recorded cache warm: its cost and note.
    Warm(f64, Option<String>),
}

pub struct App {
    host: Arc<SessionHost>,
    theme: Arc<UiTheme>,
    kb: Arc<Keybindings>,
    view: View,
    tx: UiSender,
    /// The slash commands (built-ins first); the editor's autocomplete lists the same.
    commands: CommandRegistry,
    /// Chat index of each tool call's block.
    tools: HashMap<String, usize>,
    /// Chat index of the assistant reply being streamed.
    streaming: Option<usize>,
    hide_thinking: bool,
    tools_expanded: bool,
    /// A prompt task is running (set before the agent reports its start).
    busy: bool,
    /// The agent reported `agent_start` and not yet `agent_end`.
    running: bool,
    last_clear: Option<Instant>,
    last_escape: Option<Instant>,
    /// A retry wait: attempt, of, ends at.
    retry: Option<(u32, u32, Instant)>,
    quit: bool,
    bash_cancel: Option<CancellationToken>,
    /// Stops the background task shown in the status line (a `/tree` branch summary, a
    /// `/share` upload); Esc cancels it.
    task_cancel: Option<CancellationToken>,
    /// The Claude subscription warning was shown: 1.6 shows it at most once a run.
    subscription_warned: bool,
    /// The `/bug` hint under a failed reply was shown (once a run, as 1.6).
    bug_hint_shown: bool,
    bash_counter: u64,
    picker: Option<(OverlayId, Picker)>,
    title_dirty: bool,
    version: &'static str,
    /// The startup header is shown (not when `quietStartup` is `true`, unless `--verbose`).
    show_header: bool,
    /// The loaded resources are listed under it (`quietStartup` false, or `--verbose`).
    show_resources: bool,
    /// `terminal.clearOnShrink`: a status spinner that ends keeps its rows (regular mode).
    clear_on_shrink: bool,
    /// What loading the custom themes found wrong (`[Theme conflicts]`).
    theme_issues: Vec<pi_coding_agent::resources::Diagnostic>,
    /// The chat's first block is the startup header block: the header, or under
    /// `quietStartup` the `[Extension issues]` alone (set at each rebuild of the chat).
    header_in_chat: bool,
    /// Input held while a completion is applied in the background, and since when.
    held_input: std::collections::VecDeque<pi_tui::InputEvent>,
    held_since: Option<std::time::Instant>,
    /// Input since the loop last asked may have changed the screen.
    screen_touched: bool,
    /// The transcript was built anew: a fullscreen selection no longer points at its text.
    transcript_replaced: bool,
    /// A mouse press the editor or a docked dialog took: the cell, and whether the pointer
    /// left it since (a release on the same cell without moving is a click).
    mouse_press: Option<screen::MousePress>,
    /// A press an extension component got: its drags and release go to it too.
    ext_press: Option<extensions::ExtensionPress>,
    /// How images are drawn (no protocol when `terminal.showImages` is off).
    caps: pi_tui::components::Capabilities,
    /// Token and cost totals for the footer, kept current as messages are added.
    totals: Totals,
    /// The git branch for the footer (read at start, on session changes and after runs).
    branch: Option<String>,
    rows: usize,
    /// A requested switch between fullscreen and regular mode, for the loop to carry out
    /// (it owns the terminal) once no dialog is open.
    mode_switch: Option<bool>,
    /// What the extension host was last told of the screen (see `app/extensions.rs`).
    ext_pushed: extensions::Pushed,
    /// The folder pi started in when nothing there needed trust and no flag decided it: a
    /// `/reload` that finds files needing trust there saves the folder as trusted (once).
    auto_trust_cwd: Option<std::path::PathBuf>,
    /// What the terminal is told about the program (OSC 7501).
    program_status: super::program_status::ProgramStatusReporter,
    /// `terminal.showTerminalProgress`, as read at start and set in /settings.
    terminal_progress: bool,
    /// The `Model scope: …` line is part of the header (fullscreen); in regular mode it is
    /// printed once above the screen instead, as pi 1.6 does.
    scope_in_header: bool,
    /// The alternate screen is in use: iTerm2 images are not drawn there.
    fullscreen: bool,
}

/// What the transcript is drawn with: detection, the `PI_*` variables and the `terminal.*`
/// settings (which win); no images with `terminal.showImages` off, and none through iTerm2
/// in fullscreen (pi 1.6 uses only Kitty images there and shows the text placeholder).
fn terminal_caps(session: &AgentSession, show_images: bool, fullscreen: bool) -> pi_tui::components::Capabilities {
    let overrides = session
        .settings()
        .lock()
        .map(|s| s.terminal_capability_overrides())
        .unwrap_or_default();
    let mut caps = pi_tui::components::Capabilities::detect_with(overrides);
    if !show_images || (fullscreen && caps.images == Some(pi_tui::components::ImageProtocol::ITerm2)) {
        caps.images = None;
    }
    caps
}

impl App {
    pub fn new(
        host: Arc<SessionHost>,
        theme: Arc<UiTheme>,
        kb: Arc<Keybindings>,
        tx: UiSender,
        commands: CommandRegistry,
        rows: usize,
        verbose: bool,
    ) -> Self {
        let session = host.session();
        let (quiet, details, hide_thinking, show_images, output_pad, mermaid) = session
            .settings()
            .lock()
            .map(|s| {
                (
                    s.quiet_startup(),
                    s.quiet_startup_choice() == "false",
                    s.hide_thinking_block(),
                    s.show_images(),
                    s.output_pad(),
                    s.mermaid_mode().to_string(),
                )
            })
            .unwrap_or((false, true, false, true, 1, "streaming".to_string()));
        super::chat::set_output_pad(output_pad as usize);
        super::chat::set_mermaid_mode(&mermaid);
        let caps = terminal_caps(&session, show_images, false);
        if let Ok(s) = session.settings().lock() {
            pi_tui::components::set_image_width(s.image_width_cells() as usize);
        }
        let mut editor = Editor::new(theme.editor("borderMuted"));
        editor.set_terminal_rows(rows);
        let pending = Pending::new(theme.clone(), super::keys::key_display(&kb, "app.message.dequeue"));
        let branch = git_branch(session.cwd());
        let auto_trust_cwd = {
            let paths = super::commands::paths_for(&session);
            (host.services().trust_override().is_none()
                && !pi_coding_agent::config::trust::has_trust_requiring_resources(&paths.cwd, &paths.home))
            .then_some(paths.cwd)
        };
        let mut app = App {
            host,
            view: View {
                chat: pi_tui::Container::new(),
                pending,
                status: None,
                status_box: None,
                reloading: None,
                idle_status: false,
                editor,
                footer: Footer::new(theme.clone()),
                frozen: Default::default(),
                ext: ExtensionScreen::new(theme.clone()),
                live_starts: Vec::new(),
            },
            theme,
            kb,
            tx,
            commands,
            tools: HashMap::new(),
            streaming: None,
            hide_thinking,
            tools_expanded: false,
            busy: false,
            running: false,
            last_clear: None,
            last_escape: None,
            retry: None,
            quit: false,
            bash_cancel: None,
            task_cancel: None,
            subscription_warned: false,
            bug_hint_shown: false,
            bash_counter: 0,
            picker: None,
            title_dirty: true,
            version: env!("CARGO_PKG_VERSION"),
            show_header: verbose || !quiet,
            show_resources: verbose || details,
            theme_issues: Vec::new(),
            clear_on_shrink: false,
            header_in_chat: false,
            held_input: Default::default(),
            held_since: None,
            screen_touched: false,
            transcript_replaced: false,
            mouse_press: None,
            ext_press: None,
            caps,
            totals: Totals::default(),
            branch,
            rows,
            mode_switch: None,
            ext_pushed: Default::default(),
            program_status: Default::default(),
            auto_trust_cwd,
            terminal_progress: false,
            scope_in_header: true,
            fullscreen: false,
        };
        app.update_editor_border();
        app.rebuild_chat();
        app.refresh_footer();
        app
    }

    pub fn session(&self) -> AgentSession {
        self.host.session()
    }

    /// What handlers may read, as of now.
    pub fn ctx(&self) -> Ctx<'_> {
        Ctx {
            host: &self.host,
            session: self.session(),
            theme: &self.theme,
            kb: &self.kb,
            tx: &self.tx,
            ui: UiState {
                busy: self.busy,
                task_running: self.task_cancel.is_some(),
                hide_thinking: self.hide_thinking,
                editor_empty: self.view.editor.text().trim().is_empty(),
                rows: self.rows,
                fullscreen: self.fullscreen,
            },
            version: self.version,
        }
    }

    pub fn commands(&self) -> &CommandRegistry {
        &self.commands
    }

    pub fn view_mut(&mut self) -> &mut View {
        &mut self.view
    }

    pub fn theme(&self) -> Arc<UiTheme> {
        self.theme.clone()
    }

    pub fn kb(&self) -> &Keybindings {
        &self.kb
    }

    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    pub fn request_quit(&mut self) {
        self.quit = true;
    }

    /// An overlay (picker, menu, dialog) has the keys.
    pub fn overlay_open(&self) -> bool {
        self.picker.is_some()
    }

    /// The open dialog's overlay.
    pub fn overlay_id(&self) -> Option<pi_tui::OverlayId> {
        self.picker.as_ref().map(|(id, _)| *id)
    }

    /// The program status report for the terminal, when it changed since last asked.
    pub fn take_program_status(&mut self) -> Option<pi_tui::program_status::ProgramStatus> {
        // As pi 1.6 reports them: a sign-in (an account or a key) names its provider; its own
        // pickers and menus report nothing.
        let blocked = match &self.picker {
            Some((_, Picker::LoginFlow { provider, .. } | Picker::LoginKey { provider, .. })) => {
                Some(("auth", Some(format!("Log in to {}", provider.name))))
            }
            Some((_, Picker::Asking { kind, title, .. })) => Some((*kind, Some(title.clone()))),
            Some((_, Picker::Blocking { kind, title, .. })) => Some((*kind, Some(title.clone()))),
            Some((_, Picker::TreeSummary(_))) => Some(("question", Some("Summarize branch?".to_string()))),
            _ => None,
        };
        // An extension's custom component opened with `blocked` reports it while it is open.
        let custom = self
            .view
            .ext
            .blocking()
            .map(|(kind, message)| (kind, Some(message.to_string())));
        self.program_status.set_blocked(blocked.or(custom));
        // The name is looked up only when the title is due too (it changed, or the session).
        if self.title_dirty || !self.program_status.has_name() {
            let name = self.session().with_store(|s| s.session_name().map(str::to_string));
            self.program_status.set_session_name(name);
        }
        self.program_status.take_report()
    }

    /// OSC 9;4 progress on or off, when that changed (`terminal.showTerminalProgress`).
    pub fn take_progress(&mut self) -> Option<bool> {
        self.program_status.take_progress(self.terminal_progress)
    }

    /// The terminal title, when it changed since last asked.
    pub fn take_title(&mut self) -> Option<String> {
        std::mem::take(&mut self.title_dirty).then(|| self.title())
    }

    /// The mode switch waiting to be carried out (at once, an open /settings menu included).
    pub fn take_mode_switch(&mut self) -> Option<bool> {
        self.mode_switch.take()
    }

    /// `/settings` changed the TUI mode. As pi 1.6: refused while an overlay floats over the
    /// screen (the row goes back); else the renderer is switched before the next frame, the
    /// setting saved and a status line says so.
    fn change_mode(&mut self, fullscreen: bool, tui: &mut Tui) {
        let name = |on: bool| if on { "fullscreen" } else { "regular" };
        if tui.has_floating_overlays() {
            if let Some((id, Picker::Settings)) = self.picker {
                if let Some(menu) = tui.overlay_mut::<super::settings_menu::SettingsMenu>(id) {
                    menu.set_value("tui-mode", name(self.fullscreen));
                }
            }
            self.status_line("Close active overlays before changing TUI mode");
            return;
        }
        self.mode_switch = Some(fullscreen);
        if self.view.status.is_none() {
            self.view.idle_status = false;
        }
        let value = name(fullscreen);
        let save: super::effect::SettingsChange = Box::new(move |s| s.set_tui_value("tuiMode", value.into()));
        self.apply(
            vec![Effect::Settings(save), Effect::StatusLine(format!("TUI mode: {value}"))],
            tui,
        );
    }

    pub fn set_rows(&mut self, rows: usize) {
        self.rows = rows;
        self.view.editor.set_terminal_rows(rows);
    }

    /// Stop a running `!` command (at exit).
    pub fn cancel_bash(&self) {
        if let Some(c) = &self.bash_cancel {
            c.cancel();
        }
    }

    /// Apply effects from handlers, in order.
    pub fn apply(&mut self, effects: Vec<Effect>, tui: &mut Tui) {
        for effect in effects {
            self.apply_one(effect, tui);
        }
    }

    /// The name of the theme shown.
    pub fn theme_name(&self) -> &str {
        self.theme.name()
    }

    /// Run a finished task's continuation.
    pub fn run_then(&mut self, then: Then, tui: &mut Tui) {
        let effects = then(&self.ctx());
        self.apply(effects, tui);
    }

    fn apply_one(&mut self, effect: Effect, tui: &mut Tui) {
        match effect {
            Effect::Notice(text, style) => self.notice(text, style),
            Effect::Info(md) => self.info(md),
            Effect::Themed(build) => self.view.chat.push(Box::new(Notice::themed(build, self.theme.clone()))),
            Effect::TitledInfo(title, md) => self.view.chat.push(Box::new(InfoBlock::titled(title, md, &self.theme))),
            Effect::RuledInfo(title, md) => self.view.chat.push(Box::new(InfoBlock::ruled(title, md, &self.theme))),
            Effect::StatusLine(text) => self.status_line(text),
            Effect::Status(text) => self.set_status(text),
            Effect::Quit => self.quit = true,
            Effect::Open(overlay) => {
                // One overlay at a time: a newer one replaces what is shown.
                if let Some((id, _)) = self.picker.take() {
                    tui.hide_overlay(id);
                }
                let id = tui.show_overlay(overlay.view, OverlayOptions::default());
                self.picker = Some((id, overlay.picker));
            }
            Effect::CheckSubscription => self.check_subscription(),
            Effect::EditPreview { id, key, preview } => {
                if let Some(b) = self.tool_block(&id) {
                    b.set_edit_preview(&key, preview);
                }
            }
            Effect::CloseOverlay => {
                if let Some((id, _)) = self.picker.take() {
                    tui.hide_overlay(id);
                }
            }
            Effect::CloseAsking(asking) => {
                if let Some((id, Picker::Asking { id: shown, .. })) = &self.picker {
                    if *shown == asking {
                        tui.hide_overlay(*id);
                        self.picker = None;
                    }
                }
            }
            Effect::ReplaceSession(how) => self.replace_session(how, tui),
            Effect::Reloading(on) => self.view.reloading = on.then(|| self.theme.clone()),
            Effect::Replaced { notice, editor_text } => self.replaced(notice, editor_text),
            Effect::ThemeIssues(issues) => self.set_theme_issues(issues),
            Effect::Spawn(task) => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let then = task.await;
                    tx.send(Msg::Then(then)).await;
                });
            }
            Effect::Blocking(work) => {
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let then = work();
                    tx.send_blocking(Msg::Then(then));
                });
            }
            Effect::Settings(change) => self.save_settings(change),
            Effect::TaskStarted { status, cancel } => {
                self.task_cancel = Some(cancel);
                self.set_status(Some(status));
            }
            Effect::LoaderStarted { message, cancel } => {
                self.task_cancel = Some(cancel);
                self.set_status(Some(message));
                self.view.status_box = Some(self.theme.clone());
            }
            Effect::TaskFinished => {
                self.task_cancel = None;
                self.view.status_box = None;
                self.view.reloading = None;
                self.set_status(None);
            }
            Effect::RefreshFooter => self.refresh_footer(),
            Effect::SetTheme(theme) => {
                // An open /settings menu is drawn in the new theme too (its preview).
                if let Some((id, Picker::Settings)) = self.picker {
                    if let Some(menu) = tui.overlay_mut::<super::settings_menu::SettingsMenu>(id) {
                        menu.set_theme(theme.clone());
                    }
                }
                self.set_theme(theme);
                super::fullscreen_looks(self, tui);
            }
            Effect::SetKeybindings(kb) => {
                self.kb = kb;
                super::fullscreen_looks(self, tui);
            }
            Effect::Ui(change) => self.ui_change(change, tui),
            Effect::Copied { text, native, status } => self.copied(&text, native, status, tui),
            Effect::Extension(change) => self.extension_change(change, tui),
            Effect::Login(id, step) => self.login_step(id, step, tui),
        }
    }

    fn ui_change(&mut self, change: UiChange, tui: &mut Tui) {
        match change {
            UiChange::ShowImages(on) => {
                self.caps = terminal_caps(&self.session(), on, self.fullscreen);
                if !self.busy {
                    self.restyle_chat();
                }
            }
            UiChange::HardwareCursor(on) => tui.set_show_hardware_cursor(on),
            UiChange::TerminalProgress(on) => self.terminal_progress = on,
            UiChange::ClearOnShrink(on) => {
                tui.set_clear_on_shrink(on);
                self.clear_on_shrink = on;
                // As pi 1.6: off, the rows a finished spinner kept go (unless one runs).
                if !on && self.view.status.is_none() {
                    self.view.idle_status = false;
                }
            }
            UiChange::ImageWidth(cols) => {
                // As pi 1.6: tool results redraw their images at the new width at once.
                pi_tui::components::set_image_width(cols);
                for child in self.view.chat.children_mut() {
                    if let Some(block) = child.as_mut().downcast_mut::<ToolBlock>() {
                        block.set_image_width(cols);
                    }
                }
                self.view.drop_frozen();
            }
            UiChange::SkillCommands(on) => {
                let session = self.session();
                if let Some(commands) = self
                    .view
                    .editor
                    .autocomplete_provider_mut()
                    .and_then(|p| p.commands_mut())
                {
                    crate::slash_menu::set_skill_commands(commands, session.resources(), on);
                }
            }
            UiChange::EditorPadding(n) => self.view.editor.set_padding_x(n),
            // As pi 1.6, the transcript is built again with or without its cache lines.
            UiChange::CacheNotices => {
                if !self.busy && !self.running {
                    self.restyle_chat();
                }
            }
            UiChange::OutputPad(n) => {
                // Blocks take the padding when built: the transcript is built again, unless a
                // run is streaming into it (then the blocks that follow get it). Notices and
                // info blocks stay where they were, as pi keeps them.
                super::chat::set_output_pad(n);
                if !self.busy && !self.running {
                    self.restyle_chat();
                }
            }
            UiChange::Mermaid(mode) => {
                // Diagrams are decided when blocks are built, as with the padding.
                super::chat::set_mermaid_mode(mode);
                if !self.busy && !self.running {
                    self.restyle_chat();
                }
            }
            UiChange::AutocompleteMaxVisible(n) => self.view.editor.set_autocomplete_max_visible(n),
            UiChange::HideThinking(hide) => {
                if hide != self.hide_thinking {
                    self.toggle_thinking();
                }
            }
            UiChange::Fullscreen(on) => self.change_mode(on, tui),
            UiChange::WheelStep(step) => {
                if let Some(fs) = tui.fullscreen_mut() {
                    fs.set_wheel_step(step);
                }
            }
            UiChange::Scrollbar(mode) => {
                let (track, thumb) = (self.theme.fg("scrollbarTrack"), self.theme.fg("scrollbarThumb"));
                if let Some(fs) = tui.fullscreen_mut() {
                    fs.set_scrollbar(mode, track, thumb);
                }
            }
        }
    }

    /// New / resume / import / fork / clone on the session host, on a task (the host
    /// opens files and builds the new session on the blocking pool).
    fn replace_session(&mut self, how: Replace, tui: &mut Tui) {
        let host = self.host.clone();
        let auto_trust_cwd = self.auto_trust_cwd.clone();
        // As pi 1.6: a notice stands in the editor's place (and takes the keys) until the
        // reload is done.
        let reload = matches!(how, Replace::Reload);
        if reload {
            self.view.reloading = Some(self.theme.clone());
        }
        let task = super::effect::spawn(async move {
            let result = match how {
                Replace::New => host
                    .new_session()
                    .await
                    .map(|()| (session_events::NEW_SESSION.to_string(), None)),
                Replace::Clone => host
                    .clone_session()
                    .await
                    .map(|()| ("Cloned to new session".to_string(), None)),
                Replace::Switch { path, notice } => host.switch_session(&path).await.map(|()| (notice, None)),
                Replace::SwitchHere { path, notice } => {
                    let here = host.session().cwd().display().to_string();
                    host.switch_session_here(&path)
                        .await
                        .map(|()| (notice.unwrap_or_else(|| format!("Resumed session in {here}")), None))
                }
                Replace::ForkHere(path) => {
                    let here = host.session().cwd().display().to_string();
                    host.fork_file_here(&path)
                        .await
                        .map(|id| (format!("Forked into new session {id} in {here}"), None))
                }
                Replace::Fork(entry) => host
                    .fork(&entry)
                    .await
                    .map(|text| ("Forked to new session".to_string(), Some(text))),
                Replace::Reload => host.reload().await.map(|()| {
                    let saved = auto_trust_cwd.is_some_and(|cwd| save_trust_after_reload(&host, &cwd));
                    let notice = "Reloaded keybindings, extensions, skills, prompts, themes, and context files";
                    let notice = if saved {
                        format!("{notice}; saved project trust")
                    } else {
                        notice.to_string()
                    };
                    (notice, None)
                }),
            };
            // A reload reads the theme files again: the header lists what is wrong now (read
            // here, off the UI thread).
            let issues = (reload && result.is_ok())
                .then(|| {
                    let session = host.session();
                    let settings = session.settings().lock().ok().map(|s| s.snapshot())?;
                    let paths = super::commands::paths_for(&session);
                    Some(pi_coding_agent::ui_theme::theme_diagnostics(&paths, &settings))
                })
                .flatten();
            let then: Then = match result {
                Ok((notice, editor_text)) => Box::new(move |_| {
                    let mut out: Vec<Effect> = issues.map(Effect::ThemeIssues).into_iter().collect();
                    out.push(Effect::Replaced {
                        notice: Some(notice),
                        editor_text,
                    });
                    out
                }),
                // An extension said no: the current session simply goes on.
                Err(pi_coding_agent::runtime::StartupError::Cancelled) => Box::new(move |_| match reload {
                    true => vec![Effect::TaskFinished],
                    false => Vec::new(),
                }),
                Err(e) if reload => {
                    let message = format!("Reload failed: {e}");
                    Box::new(move |_| vec![Effect::Notice(message, "error"), Effect::TaskFinished])
                }
                Err(e) => super::effect::then_notice(e.to_string(), "error"),
            };
            then
        });
        self.apply_one(task, tui);
    }

    /// Live tool output waiting beside the channel goes into its blocks; true when there
    /// was some.
    pub fn apply_live(&mut self) -> bool {
        let mut any = false;
        let mut early = Vec::new();
        for (id, update) in self.tx.live().drain() {
            let shown = match self.view.pending.bash_mut(&id) {
                Some(b) => Some(b),
                None => self.tool_block(&id),
            };
            let Some(b) = shown else {
                early.push((id, update));
                continue;
            };
            any = true;
            match update {
                LiveUpdate::Replace(text) => b.set_output(text),
                LiveUpdate::Append(chunk) => b.append_output(&chunk),
            }
        }
        if !early.is_empty() {
            self.tx.live().put_back(early);
        }
        any
    }

    /// The loaded-resources listing under the header (empty when nothing is loaded); under
    /// `quietStartup` only `[Extension issues]`, which pi 1.6 shows even then.
    pub(super) fn resources_text(&self) -> String {
        let session = self.session();
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let (extensions, auto_discovered) = self.listed_extensions();
        let text = super::loaded_resources::Listing {
            theme: &self.theme,
            resources: session.resources(),
            extensions,
            cwd: session.cwd(),
            home: home.clone(),
            auto_discovered,
            issues: self.extension_issues(),
            details: self.show_resources,
        }
        .text(self.tools_expanded);
        // pi 1.6's last section, after the extension issues.
        match super::theme_issues::section(&self.theme, &self.theme_issues, home.as_deref()) {
            Some(themes) if text.is_empty() => format!("{themes}\n"),
            Some(themes) => format!("{text}\n{themes}\n"),
            None => text,
        }
    }

    /// The custom themes' problems found at startup, listed under the header.
    pub fn set_theme_issues(&mut self, issues: Vec<pi_coding_agent::resources::Diagnostic>) {
        if issues != self.theme_issues {
            self.theme_issues = issues;
            // pi's own header block shows them (not one an extension put in its place); they
            // are read after start, so the block already on screen is drawn again.
            if self.header_in_chat && self.view.chat.child_mut::<super::header::HeaderBlock>(0).is_some() {
                let header = self.header_block();
                self.view.thaw(0);
                if let Some(first) = self.view.chat.children_mut().first_mut() {
                    *first = header;
                }
            }
        }
    }

    /// The startup header block: pi's header, and the loaded resources under it.
    fn header_block(&self) -> Box<dyn pi_tui::Component> {
        if !self.show_header {
            return Box::new(super::header::HeaderBlock::bare(self.resources_text()));
        }
        let text = if self.tools_expanded {
            super::header::expanded(&self.theme, &self.kb, self.version)
        } else {
            super::header::compact(&self.theme, &self.kb, self.version, self.show_resources)
        };
        let text = match self.model_scope_notice().filter(|_| self.scope_in_header) {
            Some(scope) => format!("{text}\n\n{scope}"),
            None => text,
        };
        let resources = self.resources_text();
        Box::new(super::header::HeaderBlock::new(
            Notice::new(text, "text", self.theme.clone()),
            resources,
        ))
    }

    /// Regular mode: the model-scope line leaves the header, to be printed above the screen
    /// before its first frame. Returns the line (none when no models are scoped or startup
    /// details are hidden).
    pub fn take_scope_line(&mut self) -> Option<String> {
        let line = self.model_scope_notice()?;
        self.scope_in_header = false;
        if self.show_header {
            let header = self.header_block();
            if let Some(first) = self.view.chat.children_mut().first_mut() {
                *first = header;
            }
        }
        Some(line)
    }

    /// `Model scope: a, b:high (Ctrl+P to cycle)` under the header when models are scoped
    /// (pi 1.6 shows it there rather than printing it before the screen).
    fn model_scope_notice(&self) -> Option<String> {
        let scoped = self.session().scoped_models();
        if scoped.is_empty() || !self.show_resources {
            return None;
        }
        let list: Vec<String> = scoped
            .iter()
            .map(|s| match s.thinking_level {
                Some(l) => format!("{}:{}", s.model.id, l.as_str()),
                None => s.model.id.clone(),
            })
            .collect();
        let keys = super::keys::keys_display(&self.kb, "app.model.cycleForward");
        let hint = if keys.is_empty() {
            String::new()
        } else {
            self.theme.paint("muted", &format!(" ({} to cycle)", keys.join("/")))
        };
        Some(format!(
            "{}{hint}",
            self.theme.paint("dim", &format!("Model scope: {}", list.join(", ")))
        ))
    }

    /// Rebuild the transcript from the current session (start, session switch).
    pub fn rebuild_chat(&mut self) {
        self.transcript_replaced = true;
        self.view.frozen = Default::default();
        self.view.chat.clear();
        self.tools.clear();
        self.streaming = None;
        self.totals.reset();
        self.header_in_chat = self.show_header || !self.extension_issues().is_empty();
        if self.header_in_chat {
            let header = self.header_block();
            self.view.chat.push(header);
        }
        // Custom entries an entry renderer draws go between the messages they came between.
        // Custom entries an entry renderer draws, and cache-warming lines, go between the
        // messages they came between.
        let mut inserts: Vec<(usize, Insert)> = self
            .branch_entry_blocks()
            .into_iter()
            .map(|(at, e)| (at, Insert::Entry(e)))
            .collect();
        inserts.extend(self.branch_warm_lines());
        // Stable: entries and warms at the same place keep their branch order per kind.
        inserts.sort_by_key(|(at, _)| *at);
        let notices = self.cache_miss_notices();
        // Built straight from the agent's transcript: a long session is not copied first.
        self.session().with_messages(|messages| {
            let mut from = 0;
            let mut inserts = inserts.into_iter();
            loop {
                let next = inserts.next();
                let to = next
                    .as_ref()
                    .map_or(messages.len(), |(at, _)| (*at).clamp(from, messages.len()));
                build_transcript(
                    &messages[from..to],
                    &mut self.view.chat,
                    &mut self.tools,
                    &self.theme,
                    self.hide_thinking,
                    self.tools_expanded,
                    self.caps,
                    &notices,
                );
                from = to;
                match next {
                    None => break,
                    Some((_, Insert::Entry(entry))) => {
                        let block = super::extension_ui::message_block::MessageBlock::entry(entry);
                        self.view.chat.push(Box::new(block));
                    }
                    Some((_, Insert::Warm(cost, note))) => self.cache_warmed(cost, note),
                }
            }
        });
    }

    /// Entering or leaving the alternate screen: iTerm2 images give way to their text
    /// placeholder there and come back after (the transcript is drawn again when that
    /// changes what it shows).
    pub fn set_fullscreen(&mut self, on: bool) {
        self.fullscreen = on;
        let show = self.ctx().read_settings(|s| s.show_images()).unwrap_or(true);
        let caps = terminal_caps(&self.session(), show, on);
        if caps != self.caps {
            self.caps = caps;
            if !self.busy {
                self.restyle_chat();
            }
        }
    }

    /// The image protocol the transcript's images are drawn with.
    pub fn image_protocol(&self) -> Option<pi_tui::components::ImageProtocol> {
        self.caps.images
    }

    /// Rebuild the transcript for a new look (theme, images), keeping the chat's notices,
    /// status lines and info blocks where they were, as pi keeps them.
    pub fn restyle_chat(&mut self) {
        let loose = super::chat_rebuild::take_loose(&mut self.view.chat, self.header_in_chat);
        self.rebuild_chat();
        let moved = super::chat_rebuild::put_back(&mut self.view.chat, self.header_in_chat, loose, &self.theme);
        for i in self.tools.values_mut() {
            *i = moved.get(*i).copied().unwrap_or(*i);
        }
    }

    pub fn refresh_footer(&mut self) {
        let session = self.session();
        let data = FooterData::gather(&session, self.branch.clone(), &mut self.totals);
        self.view.footer.set_data(data);
        self.title_dirty = true;
    }

    /// `π - <session name> - <cwd basename>` or `π - <cwd basename>`.
    pub fn title(&self) -> String {
        if let Some(title) = self.view.ext.title() {
            return title.to_string();
        }
        let session = self.session();
        let base = session
            .cwd()
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        match session.with_store(|s| s.session_name().map(str::to_string)) {
            Some(n) => format!("π - {n} - {base}"),
            None => format!("π - {base}"),
        }
    }

    fn update_editor_border(&mut self) {
        let token = self.editor_border_token();
        self.view.editor.set_border_style(self.theme.fg(token));
    }

    /// The editor border's theme token: bash mode's, else the thinking level's.
    pub(crate) fn editor_border_token(&self) -> &'static str {
        if self.view.editor.text().trim_start().starts_with('!') {
            return "bashMode";
        }
        match self.session().thinking_level().as_str() {
            "minimal" => "thinkingMinimal",
            "low" => "thinkingLow",
            "medium" => "thinkingMedium",
            "high" => "thinkingHigh",
            "xhigh" => "thinkingXhigh",
            _ => "thinkingOff",
        }
    }

    /// A dim status line; one right after another replaces it, as pi does.
    pub fn status_line(&mut self, text: impl Into<String>) {
        let last = self.view.chat.children_mut().last_mut();
        if let Some(n) = last.and_then(|c| c.as_mut().downcast_mut::<Notice>()) {
            if n.is_status() {
                n.set_text(text);
                self.view.drop_frozen();
                return;
            }
        }
        self.view
            .chat
            .push(Box::new(Notice::new(text, "dim", self.theme.clone()).as_status()));
    }

    /// The cache-warming lines of the branch, placed by the messages before them (when
    /// notices are on).
    fn branch_warm_lines(&self) -> Vec<(usize, Insert)> {
        if !self.cache_notices_on() {
            return Vec::new();
        }
        let session = self.session();
        let messages = session.with_messages(<[_]>::len);
        session.with_store(|s| {
            super::cache_notices::branch_warms(&s.get_branch(None), messages)
                .into_iter()
                .map(|(at, cost, note)| (at, Insert::Warm(cost, note)))
                .collect()
        })
    }

    fn cache_notices_on(&self) -> bool {
        self.session()
            .settings()
            .lock()
            .map(|s| s.show_cache_miss_notices())
            .unwrap_or(false)
    }

    /// The cache-miss lines of the session's replies (by reply timestamp), when shown.
    fn cache_miss_notices(&self) -> std::collections::HashMap<i64, String> {
        if !self.cache_notices_on() {
            return Default::default();
        }
        let session = self.session();
        let rate = |p: &str, id: &str| session.find_model(p, id).map_or(0.0, |m| m.cost.cache_read);
        session.with_store(|s| {
            super::cache_notices::all_misses(s.get_entries(), &rate)
                .iter()
                .filter_map(|(ts, m)| super::cache_notices::miss_text(m).map(|t| (*ts, t)))
                .collect()
        })
    }

    /// After a reply: a cache-miss line when the prompt was billed again (and notices are on).
    pub(super) fn cache_miss_after(&mut self, m: &pi_ai::AssistantMessage) {
        if matches!(m.stop_reason, pi_ai::StopReason::Aborted | pi_ai::StopReason::Error) || !self.cache_notices_on() {
            return;
        }
        let session = self.session();
        let rate = |p: &str, id: &str| session.find_model(p, id).map_or(0.0, |m| m.cost.cache_read);
        let text = session.with_store(|s| {
            super::cache_notices::miss_of(s.get_entries(), m, &rate)
                .and_then(|miss| super::cache_notices::miss_text(&miss))
        });
        if let Some(text) = text {
            self.view
                .chat
                .push(Box::new(Notice::new(text, "warning", self.theme.clone()).derived()));
        }
    }

    /// After a reply: a warning when the provider withheld reasoning from its request that
    /// the previous reply's request still had (and notices are on).
    pub(super) fn reasoning_dropped(&mut self, m: &pi_ai::AssistantMessage) {
        if matches!(m.stop_reason, pi_ai::StopReason::Aborted | pi_ai::StopReason::Error) || !self.cache_notices_on() {
            return;
        }
        if super::cache_notices::dropped_reasoning(m).is_none() {
            return;
        }
        // The reply may already be stored: the previous one is the last other assistant
        // message of the branch.
        let previous = self.session().with_store(|s| {
            s.get_branch(None).iter().rev().find_map(|e| match &e.kind {
                pi_session::EntryKind::Message {
                    message: pi_agent::AgentMessage::Llm(pi_ai::Message::Assistant(a)),
                    ..
                } if !(a.timestamp == m.timestamp && a.usage == m.usage) => Some(a.clone()),
                _ => None,
            })
        });
        if let Some(text) = super::cache_notices::drop_text(m, previous.as_deref()) {
            self.view
                .chat
                .push(Box::new(Notice::new(text, "warning", self.theme.clone())));
        }
    }

    /// A cache warm was recorded: its cost joins the warming line right above, when nothing
    /// came after that line and its note is the same, else a new line (notices on).
    pub(super) fn cache_warmed(&mut self, cost: f64, note: Option<String>) {
        if !self.cache_notices_on() {
            return;
        }
        let last = self.view.chat.children_mut().last_mut();
        if let Some(n) = last.and_then(|c| c.as_mut().downcast_mut::<Notice>()) {
            if n.add_warm(cost, &note) {
                self.view.drop_frozen();
                return;
            }
        }
        self.view
            .chat
            .push(Box::new(Notice::cache_warmed(cost, note, self.theme.clone())));
    }

    /// After a compaction: what its summary cost (when notices are on and it was recorded).
    pub(super) fn compaction_cost_after(&mut self, usage: Option<serde_json::Value>) {
        if let Some(usage) = usage.filter(|_| self.cache_notices_on()) {
            let text = super::cache_notices::summary_cost_text(true, &usage);
            self.view
                .chat
                .push(Box::new(Notice::new(text, "warning", self.theme.clone())));
        }
    }

    /// A chat line; errors and warnings read `Error: …` / `Warning: …` as in pi 1.6.
    pub fn notice(&mut self, text: impl Into<String>, token: &'static str) {
        let text = with_severity(text.into(), token);
        self.view
            .chat
            .push(Box::new(Notice::new(text, token, self.theme.clone())));
    }

    /// pi's "Package Updates Available" block, between warning-coloured rules.
    pub fn package_updates_notice(&mut self, names: &[String]) {
        let t = &self.theme;
        let mut text = format!(
            "{}\n{}{}\n{}",
            t.paint(
                "warning",
                &pi_tui::Style::new().bold().paint("Package Updates Available")
            ),
            t.paint("muted", "Package updates are available. Run "),
            t.paint("accent", "pi update"),
            t.paint("muted", "Packages:"),
        );
        for name in names {
            text.push_str(&format!("\n- {name}"));
        }
        self.notice(text, "text");
    }

    /// Warn once a run when the current model is Anthropic's through a Claude subscription
    /// (at start, and after a model switch or a sign-in, as 1.6).
    pub fn check_subscription(&mut self) {
        if self.subscription_warned {
            return;
        }
        if let Some(w) = super::subscription_notice::warning(&self.session()) {
            self.subscription_warned = true;
            self.notice(w, "warning");
        }
    }

    pub fn info(&mut self, markdown: impl Into<String>) {
        self.view.chat.push(Box::new(InfoBlock::new(markdown, &self.theme)));
    }

    pub fn set_status(&mut self, text: Option<String>) {
        match text {
            None => {
                // A spinner on rows of its own (above an extension's editor) leaves them
                // blank in regular mode with clear-on-shrink, as pi 1.6 does.
                let own_rows =
                    self.view.status.is_some() && self.view.status_box.is_none() && self.view.ext.editor().is_some();
                if own_rows && !self.fullscreen && self.clear_on_shrink {
                    self.view.idle_status = true;
                }
                self.view.status = None;
            }
            Some(t) => match &mut self.view.status {
                Some(l) => l.set_message(t),
                None => {
                    self.view.idle_status = false;
                    self.view.status = Some(Loader::new(t, self.theme.fg("accent"), self.theme.fg("muted")));
                }
            },
        }
    }

    /// Between runs, everything shown so far is finished.
    pub fn freeze_if_idle(&mut self) {
        if !self.busy && !self.running && self.bash_cancel.is_none() {
            self.view.freeze(self.view.chat.len());
        }
    }

    pub fn tick(&mut self) -> bool {
        self.retry_status();
        match &mut self.view.status {
            Some(l) if l.is_animated() => {
                let interval = l.interval();
                if !self.spinner_due(interval) {
                    return false;
                }
                let Some(l) = self.view.status.as_mut() else {
                    return false;
                };
                l.tick();
                true
            }
            // A `!` command's block turns its own spinner while the command runs.
            _ => self.bash_cancel.is_some(),
        }
    }

    pub fn toggle_thinking(&mut self) {
        self.hide_thinking = !self.hide_thinking;
        self.view.drop_frozen();
        let hide = self.hide_thinking;
        for c in self.view.chat.children_mut() {
            if let Some(b) = c.as_mut().downcast_mut::<AssistantBlock>() {
                b.set_hide_thinking(hide);
            }
        }
        self.save_settings(Box::new(move |s| s.set_hide_thinking_block(hide)));
    }

    /// Change settings now (in memory, under the lock, no I/O) and write the files on the
    /// blocking pool.
    fn save_settings(&self, change: SettingsChange) {
        let settings = self.session().settings().clone();
        pi_coding_agent::config::settings::change(&settings, change);
        tokio::task::spawn_blocking(move || pi_coding_agent::config::settings::flush(&settings));
    }

    /// Swap the theme everywhere (chat blocks are rebuilt from the session).
    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        self.theme = theme.clone();
        self.view.footer.set_theme(theme.clone());
        self.view.ext.set_theme(theme.clone());
        let bash = self.view.pending.take_bash();
        self.view.pending =
            Pending::new(theme.clone(), super::keys::key_display(&self.kb, "app.message.dequeue")).with_bash(bash);
        self.view.editor.set_theme(theme.editor("borderMuted"));
        self.update_editor_border();
        if !self.busy && !self.running {
            self.restyle_chat();
        }
    }

    /// Work out an edit call's preview on the blocking pool: it reads the file, which may be
    /// large, and the UI thread never waits on a file.
    fn preview_edit(&mut self, id: String, key: String, args: serde_json::Value, cwd: std::path::PathBuf) {
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let preview = pi_tools::edit::preview(&args, &cwd);
            let then: Then = Box::new(move |_| vec![Effect::EditPreview { id, key, preview }]);
            tx.send_blocking(Msg::Then(then));
        });
    }

    fn tool_block(&mut self, id: &str) -> Option<&mut ToolBlock> {
        let i = *self.tools.get(id)?;
        self.view.thaw(i);
        self.view.chat.child_mut::<ToolBlock>(i)
    }
}

/// `text` with the `Error: ` / `Warning: ` lead its colour stands for (once).
/// After a `/reload` in the folder pi started in with nothing there needing trust: when the
/// folder now has files needing trust, is trusted, and has no saved decision, save it as
/// trusted, as pi 1.6 does (true when saved).
fn save_trust_after_reload(host: &SessionHost, cwd: &std::path::Path) -> bool {
    use pi_coding_agent::config::trust;
    let paths = super::commands::paths_for(&host.session());
    if paths.cwd != cwd || !host.services().project_trusted() || !trust::has_trust_requiring_resources(cwd, &paths.home)
    {
        return false;
    }
    let trust_file = paths.agent_dir.join("trust.json");
    matches!(trust::saved_decision(&trust_file, cwd), Ok(None)) && trust::save_decision(&trust_file, cwd, true).is_ok()
}

fn with_severity(text: String, token: &str) -> String {
    let lead = match token {
        "error" => "Error: ",
        "warning" => "Warning: ",
        _ => return text,
    };
    if text.starts_with(lead) {
        text
    } else {
        format!("{lead}{text}")
    }
}

#[cfg(test)]
mod tests;
