//! Interactive mode: the terminal UI over a session host. One loop owns the terminal and the
//! screen; keys, session events and finished background work arrive on one channel, and the
//! screen is redrawn once per batch (only from the first changed line).

mod app;
mod changelog;
mod chat;
mod commands;
mod dialogs;
mod events;
mod footer;
mod header;
mod keys;
mod login;
mod scoped_models;
mod settings_menu;
mod share;
pub(crate) mod theme;
mod tool_block;
mod tree;
mod tree_nav;
mod view;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tui::{InputEvent, InputParser, Terminal, Tui};
use tokio::sync::mpsc;

pub use chat::{AssistantBlock, Notice, UserBlock};
pub use footer::{format_tokens, Footer, FooterData};
pub use keys::{load_keybindings, parse_user_bindings, APP_KEYBINDINGS};
pub use theme::{load_ui_theme, UiTheme};
pub use tool_block::{ToolBlock, ToolStatus};
pub use tree::{tree_rows, TreeEvent, TreeFilter, TreeSelector};
pub use view::{build_transcript, Pending, View};

use crate::modes::PromptQueue;
use crate::session_host::SessionHost;
use events::{Forward, Msg};

/// How the interactive mode starts.
#[derive(Debug, Clone, Default)]
pub struct InteractiveOptions {
    /// Startup warnings to show in the chat (model fallback, settings errors, ...).
    pub warnings: Vec<String>,
    /// `--verbose`.
    pub verbose: bool,
    /// `pi -r`: open the session picker first.
    pub resume_picker: bool,
}

/// Run the terminal UI until the user quits; restores the terminal and returns the exit code.
pub async fn run(host: Arc<SessionHost>, initial: PromptQueue, options: InteractiveOptions) -> i32 {
    let mut term = match Terminal::start() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("Error: could not start the terminal UI: {e}");
            return 1;
        }
    };
    let code = run_in(&mut term, host, initial, options).await;
    let _ = term.disable_key_protocols();
    let _ = term.stop();
    code
}

async fn run_in(term: &mut Terminal, host: Arc<SessionHost>, initial: PromptQueue, options: InteractiveOptions) -> i32 {
    let session = host.session();
    let paths = commands::paths_for(&session);
    let (kb, kb_warning) = keys::load_keybindings(&paths.keybindings_path());
    pi_tui::set_keybindings(kb);
    let (ui_theme, theme_warning) = match session.settings().lock() {
        Ok(s) => load_ui_theme(&paths, &s, None),
        Err(_) => (UiTheme::fallback(), None),
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    host.subscribe(Arc::new(Forward(tx.clone())));

    let (w, h) = term.size();
    let mut tui = Tui::new(w, h);
    let mut app = app::App::new(
        host.clone(),
        Arc::new(ui_theme),
        pi_tui::keybindings(),
        tx.clone(),
        h,
        options.verbose,
    );
    settings_menu::apply_startup(&mut app, &mut tui);
    changelog::startup_notice(&mut app);
    let mut provider =
        pi_tui::autocomplete::CombinedAutocompleteProvider::new(commands::slash_commands(), session.cwd());
    provider.set_commands(commands::slash_commands());
    app.view.editor.set_autocomplete_provider(Box::new(provider));
    for w in options.warnings.iter().cloned().chain(kb_warning).chain(theme_warning) {
        app.notice(w, "warning");
    }
    if let Some(e) = session.persist_error() {
        app.notice(format!("The session could not be saved: {e}"), "warning");
    }

    // Input: a reader thread; resize: a polling thread (both end with the process).
    let tx_in = tx.clone();
    let tx_eof = tx.clone();
    let _ = pi_tui::spawn_stdin_reader(
        move |b| tx_in.send(Msg::Input(b.to_vec())).is_ok(),
        move || {
            let _ = tx_eof.send(Msg::InputEnd);
        },
    );
    let tx_rs = tx.clone();
    let _ = pi_tui::spawn_resize_watcher(Duration::from_millis(100), move |_, _| tx_rs.send(Msg::Resize).is_ok());

    if initial.first.is_some() || !initial.rest.is_empty() {
        app.busy = true;
        let session = host.session();
        let tx2 = tx.clone();
        tokio::spawn(async move {
            let mut error = None;
            if let Some((text, images)) = initial.first {
                if let Err(e) = session.prompt(&text, images).await {
                    error = Some(e.0);
                }
            }
            for text in initial.rest {
                if let Err(e) = session.prompt(&text, Vec::new()).await {
                    error = Some(e.0);
                }
            }
            let _ = tx2.send(Msg::PromptDone(error));
        });
    }

    // As pi: installed packages are checked for updates in the background (never offline);
    // a notice says which have one.
    if !crate::packages::is_offline() {
        let cwd = host.session().cwd().to_path_buf();
        let tx_updates = tx.clone();
        tokio::task::spawn_blocking(move || {
            let paths = crate::config::paths::Paths::for_cwd(cwd);
            let settings = crate::config::settings::SettingsManager::load(&paths);
            let names = crate::packages::updates::available_updates(&paths, &settings);
            if !names.is_empty() {
                let _ = tx_updates.send(Msg::PackageUpdates(names));
            }
        });
    }

    if options.resume_picker {
        commands::request(commands::Open::Resume);
        commands::open_requested(&mut app, &mut tui);
    }
    let _ = term.set_title(&app.title());
    app.title_dirty = false;
    let _ = tui.render(&mut app.view, term);

    let started = Instant::now();
    let mut parser = InputParser::new();
    let mut fallback_sent = false;
    let mut tick = tokio::time::interval(Duration::from_millis(40));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_spin = Instant::now();
    let mut pending_since: Option<Instant> = None;
    loop {
        let mut dirty = false;
        tokio::select! {
            msg = rx.recv() => {
                let Some(msg) = msg else { break };
                dirty = true;
                let mut next = Some(msg);
                // Take everything already waiting, then draw once.
                while let Some(m) = next {
                    handle_msg(m, &mut app, &mut tui, &mut parser, term);
                    if app.quit {
                        break;
                    }
                    next = rx.try_recv().ok();
                }
                pending_since = parser.has_pending().then(Instant::now);
            }
            _ = tick.tick() => {
                if !fallback_sent && !term.kitty_active() && started.elapsed() > Duration::from_millis(150) {
                    let _ = term.enable_fallback_keys();
                    fallback_sent = true;
                }
                if pending_since.is_some_and(|t| t.elapsed() >= Duration::from_millis(10)) {
                    pending_since = None;
                    for ev in parser.flush() {
                        dispatch_input(&ev, &mut app, &mut tui, term);
                    }
                    dirty = true;
                }
                if last_spin.elapsed() >= Duration::from_millis(80) && app.tick() {
                    last_spin = Instant::now();
                    dirty = true;
                }
            }
        }
        if app.quit {
            break;
        }
        if dirty {
            app.freeze_if_idle();
            commands::open_requested(&mut app, &mut tui);
            if app.title_dirty {
                app.title_dirty = false;
                let _ = term.set_title(&app.title());
            }
            let _ = tui.render(&mut app.view, term);
        }
    }
    shutdown(&mut app, &mut tui, term, &mut rx).await;
    0
}

fn dispatch_input(ev: &InputEvent, app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    if let InputEvent::KittyFlags(_) = ev {
        let _ = term.enable_kitty();
        return;
    }
    if let InputEvent::Key(k) = ev {
        if !k.is_release() && app.picker.is_none() && app.kb.matches(k, "app.suspend") {
            suspend(tui, term);
            return;
        }
        if !k.is_release() && app.picker.is_none() && app.kb.matches(k, "app.editor.external") {
            external_editor(app, tui, term);
            return;
        }
    }
    app.handle_input(ev, tui);
}

fn handle_msg(msg: Msg, app: &mut app::App, tui: &mut Tui, parser: &mut InputParser, term: &mut Terminal) {
    match msg {
        Msg::Input(bytes) => {
            for ev in parser.feed(&bytes) {
                if let InputEvent::KittyFlags(_) = ev {
                    parser.set_kitty_active(true);
                }
                dispatch_input(&ev, app, tui, term);
                if app.quit {
                    return;
                }
            }
        }
        Msg::InputEnd => app.quit = true,
        Msg::Resize => {
            let (w, h) = term.size();
            if (w, h) != tui.size() {
                tui.set_size(w, h);
                app.view.editor.set_terminal_rows(h);
            }
        }
        Msg::Ui(ev) => app.on_event(ev),
        Msg::PromptDone(err) => app.prompt_done(err),
        Msg::BashDone {
            id,
            output,
            exit_code,
            cancelled,
            truncated_path,
        } => app.bash_done(&id, output, exit_code, cancelled, truncated_path),
        Msg::Restore { texts, announce } => app.restore(texts, announce),
        Msg::Replaced { notice, editor_text } => app.replaced(notice, editor_text),
        Msg::Notice { text, error } => app.notice(text, if error { "error" } else { "dim" }),
        Msg::Footer => app.refresh_footer(),
        Msg::TaskDone { text, error } => {
            app.notice(text, if error { "error" } else { "dim" });
            app.task_finished();
        }
        Msg::TreeDone { target, result } => tree_nav::done(app, tui, target, result),
        Msg::PackageUpdates(names) => app.package_updates_notice(&names),
    }
}

/// Ctrl+Z: give the terminal back, stop the process, and redraw everything on return.
fn suspend(tui: &mut Tui, term: &mut Terminal) {
    let _ = tui.finish(term);
    let _ = term.disable_key_protocols();
    let _ = term.stop();
    let pid = std::process::id().to_string();
    // The shell's `kill` stops this process; the call returns once it is continued.
    let _ = std::process::Command::new("kill").args(["-TSTP", &pid]).status();
    let _ = term.restart();
    tui.request_full_redraw();
}

/// Ctrl+G: edit the editor's text in `$VISUAL` / `$EDITOR`; the result replaces it.
fn external_editor(app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    let Some(cmd) = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
    else {
        app.notice(
            "No editor configured. Set $VISUAL or $EDITOR environment variable.",
            "warning",
        );
        return;
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let path = std::env::temp_dir().join(format!("pi-editor-{stamp}.pi.md"));
    if let Err(e) = std::fs::write(&path, app.view.editor.text()) {
        app.notice(format!("Could not write {}: {e}", path.display()), "error");
        return;
    }
    let _ = tui.finish(term);
    let _ = term.disable_key_protocols();
    let _ = term.stop();
    // The editor command may carry arguments (`code --wait`), so the shell parses it.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{cmd} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status();
    let _ = term.restart();
    tui.request_full_redraw();
    if status.is_ok_and(|s| s.success()) {
        if let Ok(text) = std::fs::read_to_string(&path) {
            let text = text.strip_suffix('\n').unwrap_or(&text);
            app.view.editor.set_text(text);
        }
    }
    let _ = std::fs::remove_file(&path);
}

async fn shutdown(app: &mut app::App, tui: &mut Tui, term: &mut Terminal, rx: &mut mpsc::UnboundedReceiver<Msg>) {
    let session = app.session();
    if session.is_streaming() {
        session.abort();
        let _ = tokio::time::timeout(Duration::from_secs(2), session.agent().wait_for_idle()).await;
    }
    if let Some(c) = &app.bash_cancel {
        c.cancel();
    }
    let _ = tui.render(&mut app.view, term);
    let _ = tui.finish(term);
    let _ = term.disable_key_protocols();
    // Late key releases after the protocol is switched off are read and dropped here.
    let deadline = Instant::now() + Duration::from_millis(50);
    while let Ok(Some(_)) = tokio::time::timeout_at(deadline.into(), rx.recv()).await {}
    let _ = term.flush();
}
