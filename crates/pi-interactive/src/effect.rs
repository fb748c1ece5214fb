//! What commands, pickers, menus and dialogs ask of the app, and the read-only context they
//! decide it from.
//!
//! A handler never touches the app: it reads a [`Ctx`] (the session, the host, settings, the
//! theme, the keybindings, a sender and a copy of the few UI facts it may need) and returns
//! [`Effect`]s. `App::apply` is the one place that carries them out: it shows overlays,
//! writes the chat, sets the status line, quits, replaces the session, and starts tasks. A
//! task ([`Effect::Spawn`], [`Effect::Blocking`]) runs off the UI thread and ends with a
//! [`Then`]: a continuation the app runs with a fresh context, so what a task found (a
//! session list, a saved key) turns into effects on the UI thread like everything else.
//!
//! The same path is open to code registered at run time: an extension's command returns
//! effects from its handler (see `command_registry`), and its own dialog is an
//! [`Effect::Open`] with a [`Picker::Custom`] callback that receives the result.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use pi_tui::{Component, Keybindings};
use tokio_util::sync::CancellationToken;

use super::events::UiSender;
use super::login::{LoginBack, ProviderOption};
use super::theme::UiTheme;
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::session::AgentSession;
use pi_coding_agent::session_host::SessionHost;

/// A continuation from a finished task, run on the UI thread with a fresh context.
pub type Then = Box<dyn FnOnce(&Ctx<'_>) -> Vec<Effect> + Send>;

/// A future whose result comes back to the UI thread as a [`Then`].
pub type Task = Pin<Box<dyn Future<Output = Then> + Send>>;

/// A callback for a dialog opened by code outside the built-ins: the chosen value or the
/// entered text, `None` when it was cancelled.
pub type OnResult = Box<dyn FnOnce(&Ctx<'_>, Option<String>) -> Vec<Effect> + Send>;

/// What a shown overlay is choosing; its result goes back to the handler for that kind.
pub enum Picker {
    Model,
    Fork,
    Settings,
    Tree,
    /// The login method menu; for one provider's two kinds when it names them.
    LoginMethod(Option<Vec<ProviderOption>>),
    /// A provider list: accounts (`Some(true)`), keys (`Some(false)`) or both.
    LoginProvider {
        oauth: Option<bool>,
        options: Vec<ProviderOption>,
    },
    /// API-key entry; `back` is the list to reopen on cancel.
    LoginKey {
        provider: ProviderOption,
        back: Option<LoginBack>,
    },
    /// A sign-in under way.
    LoginFlow {
        provider: ProviderOption,
        back: Option<LoginBack>,
    },
    Logout(Vec<ProviderOption>),
    ScopedModels,
    /// "Summarize branch?" before moving to this entry.
    TreeSummary(String),
    /// A dialog opened by registered code; the callback gets the result. It reports nothing
    /// to the program status, as pi 1.6's own menus and pickers do not.
    Custom(OnResult),
    /// One of the few built-in dialogs pi 1.6 reports as blocked while open (the /import
    /// confirm, the tree's custom summary instructions, the missing-folder question): `kind`
    /// and `title` are what the program status says.
    Blocking {
        kind: &'static str,
        title: String,
        on_result: OnResult,
    },
    /// An extension's dialog (`ctx.ui.select`, `confirm`, `input`, `editor`), numbered so a
    /// timeout closes only its own. While it is open the program status reports blocked with
    /// `kind` (`question`, `permission`) and the dialog's title, as pi 1.6 does.
    Asking {
        id: u64,
        kind: &'static str,
        title: String,
        on_result: OnResult,
    },
}

impl std::fmt::Debug for Picker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Picker::Model => "Model",
            Picker::Fork => "Fork",
            Picker::Settings => "Settings",
            Picker::Tree => "Tree",
            Picker::LoginMethod(_) => "LoginMethod",
            Picker::LoginProvider { .. } => "LoginProvider",
            Picker::LoginKey { .. } => "LoginKey",
            Picker::LoginFlow { .. } => "LoginFlow",
            Picker::Logout(_) => "Logout",
            Picker::ScopedModels => "ScopedModels",
            Picker::TreeSummary(_) => "TreeSummary",
            Picker::Custom(_) => "Custom",
            Picker::Blocking { .. } => "Blocking",
            Picker::Asking { .. } => "Asking",
        };
        f.write_str(name)
    }
}

/// An overlay to show and what its result is for.
pub struct Overlay {
    pub view: Box<dyn Component>,
    pub picker: Picker,
}

/// How the session is replaced (each runs on the session host, off the UI thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replace {
    New,
    Clone,
    /// Resume or import the session file; `notice` says which on success.
    Switch {
        path: PathBuf,
        notice: String,
    },
    /// Resume (or import) a session file whose recorded folder is gone, in the current folder
    /// this time; `notice` says so on success (else "Resumed session in <folder>").
    SwitchHere {
        path: PathBuf,
        notice: Option<String>,
    },
    /// Copy a session file whose recorded folder is gone into a new session here.
    ForkHere(PathBuf),
    /// A new session branched before this entry; its text goes back into the editor.
    Fork(String),
    /// The same session file again on settings, resources and models read anew (`/reload`).
    Reload,
}

/// A change to what the running UI shows, from the settings menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UiChange {
    ShowImages(bool),
    HardwareCursor(bool),
    /// `terminal.showTerminalProgress`: the tab's progress indicator during runs.
    TerminalProgress(bool),
    /// `terminal.clearOnShrink`: the inline renderer clears the screen when output shrinks.
    ClearOnShrink(bool),
    /// `terminal.imageWidthCells`: new images and the tool results' images already shown.
    ImageWidth(usize),
    /// `enableSkillCommands`: the `/skill:name` commands join or leave the slash menu.
    SkillCommands(bool),
    EditorPadding(usize),
    /// `outputPad`: columns before messages and tool output.
    OutputPad(usize),
    AutocompleteMaxVisible(usize),
    HideThinking(bool),
    /// Switch between fullscreen (true) and regular mode once no dialog is open.
    Fullscreen(bool),
    WheelStep(pi_tui::WheelStep),
    /// `fullscreenScrollbar` changed.
    Scrollbar(pi_tui::ScrollbarMode),
    /// `markdown.mermaid` changed (`off`, `final`, `streaming`).
    Mermaid(&'static str),
    /// `showCacheMissNotices` changed: the transcript's cache lines come or go.
    CacheNotices,
}

/// Settings changes, applied under the settings lock and written after it is released.
pub type SettingsChange = Box<dyn FnOnce(&mut SettingsManager) + Send>;

/// One thing for the app to do.
pub enum Effect {
    /// A line in the chat, in a theme colour (`dim`, `warning`, `error`, `success`, `text`).
    Notice(String, &'static str),
    /// A markdown block in the chat.
    Info(String),
    /// A text block in the chat that styles its parts from the theme (`/session`).
    Themed(super::chat::TextBuilder),
    /// A markdown block between rules under a title (`/hotkeys`).
    TitledInfo(String, String),
    /// A startup notice between rules, under a title unless it is empty ("What's New").
    RuledInfo(String, String),
    /// A dim status line in the chat; one right after another replaces it.
    StatusLine(String),
    /// The status line's text (`None` hides it).
    #[allow(dead_code)] // for commands registered at run time; the built-ins use tasks
    Status(Option<String>),
    Quit,
    Open(Overlay),
    ReplaceSession(Replace),
    /// An extension's `ctx.reload()` started (`true`: the "Reloading ..." notice takes the
    /// editor's place, as for `/reload`) or failed (`false`: the editor is back).
    Reloading(bool),
    /// The session was replaced elsewhere (tree navigation): rebuild the chat.
    Replaced {
        notice: Option<String>,
        editor_text: Option<String>,
    },
    Spawn(Task),
    /// Blocking work (files, processes) on the blocking pool.
    Blocking(Box<dyn FnOnce() -> Then + Send>),
    /// Change settings; written off the UI thread.
    Settings(SettingsChange),
    /// The custom themes' problems, found again (`/reload`), for the startup header.
    ThemeIssues(Vec<pi_coding_agent::resources::Diagnostic>),
    /// A cancellable task shown in the status line starts (Esc cancels it; what is typed
    /// meanwhile waits for [`Effect::TaskFinished`]).
    TaskStarted {
        status: String,
        cancel: CancellationToken,
    },
    /// The same shown as pi 1.6's bordered loader in the editor's place: only the
    /// `tui.select.cancel` keys do anything until [`Effect::TaskFinished`].
    LoaderStarted {
        message: String,
        cancel: CancellationToken,
    },
    TaskFinished,
    RefreshFooter,
    SetTheme(Arc<UiTheme>),
    SetKeybindings(Arc<Keybindings>),
    Ui(UiChange),
    /// Text went to the clipboard tool (when that failed, OSC 52 is next): a fullscreen
    /// selection (flashed), or a copy a command asked for (`status` said in the chat).
    Copied {
        text: String,
        native: Result<(), String>,
        status: Option<String>,
    },
    /// What an extension shows changed (widgets, header, footer, custom components, ...).
    Extension(super::extension_ui::screen::ScreenChange),
    /// A step of the sign-in numbered so, for its screen.
    Login(u64, super::login::LoginStep),
    /// Close the dialog shown (its callback is not called): a screen whose work ended on its
    /// own, such as `/mcp login`'s sign-in screen once the sign-in finished.
    CloseOverlay,
    /// Close the extension dialog numbered so, if it is still shown (its timeout ran out);
    /// its callback is not called.
    CloseAsking(u64),
    /// The model may have changed (a switch, a sign-in): warn about a Claude subscription if
    /// it applies and has not been warned about in this run, as 1.6 does.
    CheckSubscription,
    /// An edit call's preview, worked out off the UI thread for the arguments `key` names.
    EditPreview {
        id: String,
        key: String,
        preview: Option<Result<String, String>>,
    },
}

impl std::fmt::Debug for Effect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Effect::Notice(t, s) => write!(f, "Notice({t:?}, {s})"),
            Effect::Info(t) => write!(f, "Info({} chars)", t.len()),
            Effect::Themed(_) => f.write_str("Themed"),
            Effect::TitledInfo(title, t) => write!(f, "TitledInfo({title:?}, {} chars)", t.len()),
            Effect::RuledInfo(title, t) => write!(f, "RuledInfo({title:?}, {} chars)", t.len()),
            Effect::StatusLine(t) => write!(f, "StatusLine({t:?})"),
            Effect::Status(s) => write!(f, "Status({s:?})"),
            Effect::Quit => f.write_str("Quit"),
            Effect::Open(o) => write!(f, "Open({:?})", o.picker),
            Effect::ReplaceSession(r) => write!(f, "ReplaceSession({r:?})"),
            Effect::Reloading(on) => write!(f, "Reloading({on})"),
            Effect::Replaced { notice, .. } => write!(f, "Replaced({notice:?})"),
            Effect::Spawn(_) => f.write_str("Spawn"),
            Effect::Blocking(_) => f.write_str("Blocking"),
            Effect::EditPreview { id, .. } => write!(f, "EditPreview({id:?})"),
            Effect::Settings(_) => f.write_str("Settings"),
            Effect::ThemeIssues(issues) => write!(f, "ThemeIssues({})", issues.len()),
            Effect::TaskStarted { status, .. } => write!(f, "TaskStarted({status:?})"),
            Effect::LoaderStarted { message, .. } => write!(f, "LoaderStarted({message:?})"),
            Effect::TaskFinished => f.write_str("TaskFinished"),
            Effect::RefreshFooter => f.write_str("RefreshFooter"),
            Effect::SetTheme(t) => write!(f, "SetTheme({})", t.name()),
            Effect::SetKeybindings(_) => f.write_str("SetKeybindings"),
            Effect::Ui(c) => write!(f, "Ui({c:?})"),
            Effect::Copied { text, native, .. } => write!(f, "Copied({} chars, {native:?})", text.len()),
            Effect::Extension(c) => write!(f, "Extension({c:?})"),
            Effect::Login(id, step) => write!(f, "Login({id}, {step:?})"),
            Effect::CloseOverlay => f.write_str("CloseOverlay"),
            Effect::CloseAsking(id) => write!(f, "CloseAsking({id})"),
            Effect::CheckSubscription => f.write_str("CheckSubscription"),
        }
    }
}

/// A chat line.
pub fn notice(text: impl Into<String>, style: &'static str) -> Effect {
    Effect::Notice(text.into(), style)
}

/// Run `task` off the UI thread; its continuation comes back as effects.
pub fn spawn(task: impl Future<Output = Then> + Send + 'static) -> Effect {
    Effect::Spawn(Box::pin(task))
}

/// Copy `text` to the clipboard (the clipboard tool, else OSC 52), then say `status`.
pub fn copy_text(text: String, status: &str) -> Effect {
    let status = status.to_string();
    Effect::Blocking(Box::new(move || {
        let native = super::commands::copy_to_clipboard(&text);
        Box::new(move |_| {
            vec![Effect::Copied {
                text,
                native,
                status: Some(status),
            }]
        })
    }))
}

/// Run blocking `work` on the blocking pool; its continuation comes back as effects.
pub fn blocking(work: impl FnOnce() -> Then + Send + 'static) -> Effect {
    Effect::Blocking(Box::new(work))
}

/// Run `task` to completion on the blocking pool: for session operations whose async body
/// writes files synchronously (session-file appends, settings saves, opening another
/// session), so the async threads never wait on that I/O.
pub fn blocking_task(task: impl Future<Output = Then> + Send + 'static) -> Effect {
    blocking(move || tokio::runtime::Handle::current().block_on(task))
}

/// A continuation that returns `effects` whatever the context (they must be `Send`).
pub fn then(effects: impl FnOnce(&Ctx<'_>) -> Vec<Effect> + Send + 'static) -> Then {
    Box::new(effects)
}

/// A continuation showing one chat line.
pub fn then_notice(text: impl Into<String>, style: &'static str) -> Then {
    let text = text.into();
    Box::new(move |_| vec![Effect::Notice(text, style)])
}

/// The few UI facts a handler may read (copied when the context is made).
#[derive(Debug, Clone, Copy, Default)]
pub struct UiState {
    /// A prompt is running.
    pub busy: bool,
    /// A status-line task (branch summary, share) is running.
    pub task_running: bool,
    pub hide_thinking: bool,
    /// The editor holds only whitespace.
    pub editor_empty: bool,
    /// Terminal rows.
    pub rows: usize,
    /// The alternate screen (fullscreen) is in use.
    pub fullscreen: bool,
}

/// What a handler may read: nothing in it can change the app.
pub struct Ctx<'a> {
    pub host: &'a Arc<SessionHost>,
    pub session: AgentSession,
    pub theme: &'a Arc<UiTheme>,
    pub kb: &'a Arc<Keybindings>,
    /// For tasks that report progress as they go (the app's loop channel).
    #[allow(dead_code)] // for commands registered at run time; the built-ins return tasks
    pub tx: &'a UiSender,
    pub ui: UiState,
    pub version: &'static str,
}

impl Ctx<'_> {
    /// The paths of the session's agent dir and cwd.
    pub fn paths(&self) -> pi_coding_agent::config::Paths {
        super::commands::paths_for(&self.session)
    }

    /// A copy of the settings to read after the lock is released (for work that reads
    /// files, such as theme discovery).
    pub fn settings_snapshot(&self) -> Option<SettingsManager> {
        self.read_settings(SettingsManager::snapshot)
    }

    /// Read settings (the lock is held only for `f`).
    pub fn read_settings<R>(&self, f: impl FnOnce(&SettingsManager) -> R) -> Option<R> {
        self.session.settings().lock().ok().map(|s| f(&s))
    }
}
