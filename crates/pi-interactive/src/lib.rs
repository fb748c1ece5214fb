//! Interactive mode: the terminal UI over a session host. One loop owns the terminal and the
//! screen; keys, session events and finished background work arrive on one bounded channel,
//! and the screen is redrawn once per batch (only from the first changed line).
//!
//! The app (`app.rs`) owns the screen state and is the only code that changes it. Slash
//! commands (`commands.rs`, found through `command_registry.rs`), pickers, menus and dialogs
//! get a read-only context and return effects (`effect.rs`); `App::apply` carries them out.
//! Work that blocks or waits (files, processes, the session host, settings writes) runs on
//! tasks whose continuations come back through the channel as more effects. Code loaded at
//! run time adds UI the same way: it registers commands in the registry (the slash menu and
//! autocomplete read from it) and opens its own dialogs with `Effect::Open` and a
//! `Picker::Custom` callback.

mod app;
mod bordered_loader;
mod bug_command;
mod cache_notices;
mod changelog;
mod chat;
mod chat_rebuild;
mod clipboard_paste;
mod clipboard_route;
mod command_registry;
mod commands;
mod commands_16;
mod crash_notice;
mod dialogs;
mod diff_view;
mod effect;
mod events;
mod exit_output;
pub mod extension_ui;
pub(crate) use pi_coding_agent::file_index;
mod footer;
mod fork_selector;
mod header;
mod keybindings_file;
mod keys;
mod loaded_resources;
mod login;
mod login_llama;
mod login_view;
mod mcp_menu;
mod mcp_sign_in;
mod missing_cwd;
mod model_picker;
mod program_status;
mod provider_brand;
mod scoped_models;
mod search_tools;
mod session_info;
mod session_picker;
mod session_search;
mod settings_menu;
mod settings_model_thinking;
mod settings_submenu;
mod settings_theme;
mod share;
mod slash_menu;
mod subscription_notice;
mod summary_block;
mod text_dialog;
pub(crate) mod theme;
mod theme_issues;
mod thinking_picker;
mod tmux_check;
mod tool_block;
mod tree;
mod tree_nav;
mod trust_prompt;
mod trust_selector;
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

use events::{Forward, Msg, UiSender};
pub use pi_coding_agent::modes::InteractiveOptions;
use pi_coding_agent::modes::{MissingCwdChoice, PromptQueue, TerminalUi};
use pi_coding_agent::session_host::SessionHost;

/// Before the terminal UI starts: when the project in `cwd` has files that need trust and
/// nothing has decided about them, ask (on the normal screen) and save the answer unless it
/// was for this session only. The answer, for this run; `None` when there was no question.
pub fn ask_project_trust(cwd: &std::path::Path) -> Option<bool> {
    let paths = pi_coding_agent::config::paths::Paths::for_cwd(cwd);
    let settings = pi_coding_agent::config::settings::SettingsManager::load(&paths);
    let trust_file = paths.agent_dir.join("trust.json");
    let query = pi_coding_agent::config::trust::TrustQuery {
        cwd: &paths.cwd,
        home: &paths.home,
        trust_file: &trust_file,
        cli_override: None,
        default: pi_coding_agent::config::trust::DefaultTrust::from_setting(
            settings.global_settings().get("defaultProjectTrust"),
        ),
        can_ask: true,
    };
    if !pi_coding_agent::config::trust::must_ask(&query) {
        return None;
    }
    let (theme, _) = load_ui_theme(&paths, &settings, None);
    let answer = match trust_prompt::ask(&paths.cwd, &theme) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("Warning: could not ask about project trust: {e}");
            return None;
        }
    };
    if let Some(dir) = &answer.save_for {
        if let Err(e) = pi_coding_agent::config::trust::save_decision(&trust_file, dir, answer.trusted) {
            eprintln!("Warning: {e}");
        }
    }
    Some(answer.trusted)
}

/// The terminal UI as `pi_coding_agent::app::run` takes it.
pub struct TerminalApp;

#[async_trait::async_trait(?Send)]
impl TerminalUi for TerminalApp {
    fn ask_project_trust(&self, cwd: &std::path::Path) -> Option<bool> {
        ask_project_trust(cwd)
    }

    fn ask_missing_cwd(&self, gone: &std::path::Path, cwd: &std::path::Path) -> Option<MissingCwdChoice> {
        let paths = pi_coding_agent::config::paths::Paths::for_cwd(cwd);
        let settings = pi_coding_agent::config::settings::SettingsManager::load(&paths);
        let (theme, _) = load_ui_theme(&paths, &settings, None);
        match missing_cwd::ask(gone, cwd, &theme) {
            Ok(choice) => Some(choice),
            Err(e) => {
                eprintln!("Warning: could not ask about the session's missing folder: {e}");
                None
            }
        }
    }

    async fn run(&self, host: Arc<SessionHost>, initial: PromptQueue, options: InteractiveOptions) -> i32 {
        run(host, initial, options).await
    }
}

/// Run the terminal UI until the user quits; restores the terminal and returns the exit code.
pub async fn run(host: Arc<SessionHost>, initial: PromptQueue, options: InteractiveOptions) -> i32 {
    // Themes' RGB colours go out as the nearest 256-colour entry where 24-bit colour is not
    // known to work (no `COLORTERM=truecolor`, a `*-direct` TERM or a terminal known for it),
    // unless the `terminal.trueColor` setting or `PI_TRUE_COLOR` says otherwise.
    let setting = host
        .session()
        .settings()
        .lock()
        .ok()
        .and_then(|s| s.terminal_true_color());
    pi_tui::set_truecolor(extension_ui::theme_colors::truecolor(setting));
    // Markdown links go out as OSC 8 links where the terminal takes them (detection, then
    // `PI_HYPERLINKS`, then `terminal.hyperlinks`).
    let overrides = host
        .session()
        .settings()
        .lock()
        .map(|s| s.terminal_capability_overrides())
        .unwrap_or_default();
    pi_tui::components::set_hyperlinks(pi_tui::components::Capabilities::detect_with(overrides).hyperlinks);
    let mut term = match Terminal::start() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("Error: could not start the terminal UI: {e}");
            return 1;
        }
    };
    // The terminal's colours make the `system` theme and decide a `light/dark` pair: they are
    // waited for briefly (the device attributes answer ends them early), and answers that
    // come later are applied when they come, so a terminal that never answers costs 100 ms.
    let wanted = theme_setting(&host);
    // A pair with `system` as one half may need the palette as well.
    let system = wanted == pi_coding_agent::resources::themes::SYSTEM_THEME
        || pi_coding_agent::resources::themes::parse_theme_pair(&wanted).is_some_and(|(l, d)| {
            l == pi_coding_agent::resources::themes::SYSTEM_THEME
                || d == pi_coding_agent::resources::themes::SYSTEM_THEME
        });
    let _ = term.query_colors(system);
    let early = if system || is_theme_pair(&wanted) {
        let answered = |b: &[u8]| InputParser::new().feed(b).contains(&InputEvent::DeviceAttributes);
        let early = pi_tui::read_stdin_for(Duration::from_millis(100), answered);
        let replies = InputParser::new().feed(&early);
        pi_coding_agent::resources::system_theme::record(&replies);
        pi_coding_agent::resources::system_theme::take_changed();
        // The background also decides a `light/dark` pair before the first frame.
        for reply in &replies {
            if let InputEvent::TerminalColor { slot: 11, rgb } = reply {
                pi_coding_agent::resources::themes::set_reported_background(*rgb);
            }
        }
        early
    } else {
        Vec::new()
    };
    // A panic that ends the UI loop is a crash: pi-tui's hook has restored the terminal and
    // printed it; it is recorded for `/bug` and the user told how to report it.
    crash_notice::install();
    let agent_dir = commands::paths_for(&host.session()).agent_dir;
    let run = std::panic::AssertUnwindSafe(run_in(&mut term, host.clone(), initial, options, early));
    let code = match futures::FutureExt::catch_unwind(run).await {
        Ok(code) => code,
        Err(payload) => {
            pi_tui::restore_now();
            crash_notice::crashed(&host, &agent_dir, payload.as_ref());
            return 1;
        }
    };
    let _ = term.disable_key_protocols();
    let _ = term.leave_fullscreen();
    let _ = term.stop();
    code
}

/// Draw the current state: the inline renderer, or the fullscreen layout.
fn draw(app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    app.prepare_extension_frame(tui.size());
    app.drop_stale_selection(tui);
    tui.sync_focus(app.view_mut());
    let (w, _) = tui.size();
    if let Some(fs) = tui.fullscreen() {
        let parts = app.view_mut().screen_parts(fs.transcript_width(w), w);
        let _ = tui.render_fullscreen(parts, term);
    } else {
        // A dialog stands in the editor's place in regular mode too, as in pi 1.6.
        let parts = app.view_mut().screen_parts(w, w);
        let _ = tui.render_parts(parts, term);
    }
}

/// Whether this run is fullscreen: `--tui-mode`, else the `tuiMode` setting.
fn wants_fullscreen(
    session: &pi_coding_agent::session::AgentSession,
    flag: Option<pi_coding_agent::cli::TuiMode>,
) -> bool {
    match flag {
        Some(mode) => mode == pi_coding_agent::cli::TuiMode::Fullscreen,
        None => session.settings().lock().map_or(true, |s| s.tui_fullscreen()),
    }
}

/// Change renderers while running (an open dialog stays open in the new layout). Fullscreen
/// draws a whole new screen; back on the main screen, the inline renderer goes on from what
/// it drew there before, as the terminal kept it, so the scrollback holds nothing twice.
fn switch_mode(fullscreen: bool, app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    if fullscreen == tui.fullscreen().is_some() {
        return;
    }
    // As pi 1.6 restarts its terminal: the progress indicator goes off with the old screen
    // and comes back on at once for a run (or compaction) still going.
    let progress = term.progress_active();
    if progress {
        let _ = term.set_progress(false);
    }
    // The status goes with the old screen and the terminal is asked again whether it takes
    // reports, as pi 1.6's restarted terminal does.
    let _ = term.requery_program_status();
    if fullscreen {
        start_fullscreen(app, tui, term);
        if let Some(fs) = tui.fullscreen_mut() {
            fs.screen_mut().request_full_redraw();
        }
    } else {
        leave_fullscreen(tui, term);
        tui.set_fullscreen(false);
        app.set_fullscreen(false);
    }
    if progress {
        let _ = term.set_progress(true);
    }
}

/// Enter the alternate screen and set the layout up from the settings.
fn start_fullscreen(app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    if term.enter_fullscreen().is_err() {
        return;
    }
    app.set_fullscreen(true);
    tui.set_fullscreen(true);
    fullscreen_looks(app, tui);
}

/// Free the images fullscreen frames left with the terminal, then leave the alternate screen.
fn leave_fullscreen(tui: &mut Tui, term: &mut Terminal) {
    if let Some(fs) = tui.fullscreen_mut() {
        let bytes = fs.screen_mut().exit_sequence();
        if !bytes.is_empty() {
            let _ = term.write_all(bytes.as_bytes()).and_then(|()| term.flush());
        }
    }
    let _ = term.leave_fullscreen();
}

/// The fullscreen layout's settings, colours and key names (again after a theme change or
/// `/reload`).
pub(crate) fn fullscreen_looks(app: &app::App, tui: &mut Tui) {
    let wheel = app
        .ctx()
        .read_settings(|s| s.fullscreen_wheel_lines())
        .flatten()
        .map_or(pi_tui::WheelStep::Auto, |n| pi_tui::WheelStep::Lines(n as usize));
    let theme = app.theme();
    let pill = pi_tui::Style {
        bg: theme.bg("selectedBg"),
        ..theme.fg("text")
    };
    let scrollbar = app
        .ctx()
        .read_settings(|s| pi_tui::ScrollbarMode::from_setting(s.fullscreen_scrollbar()))
        .unwrap_or_default();
    if let Some(fs) = tui.fullscreen_mut() {
        fs.set_image_protocol(app.image_protocol());
        fs.set_wheel_step(wheel);
        fs.set_pill_style(pill);
        let key_or_unbound = |id: &str| {
            let key = keys::key_display(&pi_tui::keybindings(), id);
            if key.is_empty() {
                "Unbound".to_string()
            } else {
                key
            }
        };
        fs.set_search_keys(
            key_or_unbound("tui.altScreen.searchPrevious"),
            key_or_unbound("tui.altScreen.searchNext"),
        );
        // pi 1.6: matches in the theme's search colours, underlined; the current one bold
        // and inverse.
        let matched = pi_tui::Style {
            bg: theme.bg("searchMatchBg"),
            ..theme.fg("searchMatchText")
        };
        fs.set_search_styles(matched.underline(), matched.bold().inverse());
        let bottom = keys::key_display(&pi_tui::keybindings(), "tui.altScreen.bottom");
        fs.set_pill_text(if bottom.is_empty() {
            " ↓ Jump to latest message ".to_string()
        } else {
            format!(" ↓ Jump to latest message · {bottom} ")
        });
        fs.set_scrollbar(scrollbar, theme.fg("scrollbarTrack"), theme.fg("scrollbarThumb"));
    }
}

/// The theme the settings name (`system` when none).
fn theme_setting(host: &SessionHost) -> String {
    host.session()
        .settings()
        .lock()
        .ok()
        .and_then(|s| s.theme().map(str::to_string))
        .unwrap_or_else(|| pi_coding_agent::resources::themes::SYSTEM_THEME.to_string())
}

/// A `light/dark` pair (decided by the terminal's background).
fn is_theme_pair(name: &str) -> bool {
    pi_coding_agent::resources::themes::parse_theme_pair(name).is_some() && !name.ends_with(".json")
}

/// Run the screen; `early`: input read while the terminal's colours were awaited, handled
/// first.
async fn run_in(
    term: &mut Terminal,
    host: Arc<SessionHost>,
    initial: PromptQueue,
    options: InteractiveOptions,
    early: Vec<u8>,
) -> i32 {
    let session = host.session();
    let paths = commands::paths_for(&session);
    let (kb, kb_warning) = keys::load_keybindings(&paths.keybindings_path());
    pi_tui::set_keybindings(kb);
    let (ui_theme, theme_warning) = match session.settings().lock() {
        Ok(s) => load_ui_theme(&paths, &s, None),
        Err(_) => (UiTheme::fallback(), None),
    };
    let (tx, mut rx) = UiSender::channel();
    if !early.is_empty() {
        tx.send(Msg::Input(early)).await;
    }
    host.subscribe(Arc::new(Forward(tx.clone())));
    // Extension dialogs, notices and errors from now on go to this screen.
    let early_ui = session.services().extensions().ui();
    session
        .services()
        .extensions()
        .set_ui(Arc::new(extension_ui::InteractiveUi::new(tx.clone())));

    login::set_llama_provider(!options.builtins_off.contains(&"llama"));
    let (w, h) = term.size();
    let mut tui = Tui::new(w, h);
    let mut app = app::App::new(
        host.clone(),
        Arc::new(ui_theme),
        pi_tui::keybindings(),
        tx.clone(),
        commands::builtins_without(&options.builtins_off),
        h,
        options.verbose,
    );
    // Theme files that are not themes, and name clashes, under the startup header: read on
    // the blocking pool, so the first frame never waits on the themes folders.
    if let Some(settings) = session.settings().lock().ok().map(|s| s.snapshot()) {
        let (paths, tx) = (paths.clone(), tx.clone());
        tokio::task::spawn_blocking(move || {
            let issues = pi_coding_agent::ui_theme::theme_diagnostics(&paths, &settings);
            if !issues.is_empty() {
                let then: effect::Then = Box::new(move |_| vec![effect::Effect::ThemeIssues(issues)]);
                tx.send_blocking(Msg::Then(then));
            }
        });
    }
    // pi 1.6 reports a theme it could not load before anything else; then the fd/ripgrep
    // check, and "What's New" after it.
    if let Some(e) = theme_warning {
        app.notice(e, "error");
    }
    let offline = pi_coding_agent::packages::is_offline();
    for w in search_tools::startup_warnings(&paths.bin_dir(), offline, std::env::var_os("PATH").as_deref()) {
        app.notice(w, "warning");
    }
    let startup = {
        let cx = app.ctx();
        let mut effects = settings_menu::startup(&cx);
        effects.extend(changelog::startup_notice(&cx));
        effects
    };
    app.apply(startup, &mut tui);
    app.apply_early_extension_ui(early_ui.as_ref(), &mut tui);
    // As pi orders the menu: built-ins, prompt templates, extension commands, skills.
    let mut slash = app.commands().slash_commands();
    slash_menu::add_builtin_arguments(&mut slash, &session);
    let builtin_count = slash.len();
    slash.extend(slash_menu::template_commands(session.resources()));
    if let Some(runner) = session.services().extensions().runner() {
        let builtins = &slash[..builtin_count];
        let more = extension_ui::slash::extension_commands(&runner, builtins, &paths.agent_dir, session.cwd(), &tx);
        slash.extend(more);
    }
    if session.settings().lock().is_ok_and(|s| s.enable_skill_commands()) {
        slash.extend(slash_menu::skill_commands(session.resources()));
    }
    let mut provider = pi_tui::autocomplete::CombinedAutocompleteProvider::new(slash, session.cwd());
    // `@` references search the project's files, walked once now and kept fresh.
    let files = file_index::shared();
    files.prewarm(session.cwd());
    provider.set_file_lister(files.lister());
    // Extensions may stack completion providers on pi's own.
    let provider: Box<dyn pi_tui::autocomplete::AutocompleteProvider> = match session.services().extensions().runner() {
        Some(runner) => Box::new(extension_ui::autocomplete::Stacked::new(
            provider,
            app.completion_chain(),
            runner,
            tx.clone(),
        )),
        None => Box::new(provider),
    };
    app.view_mut().editor.set_autocomplete_provider(provider);
    for w in options.warnings.iter().cloned().chain(kb_warning) {
        app.notice(w, "warning");
    }
    if let Some(w) = crash_notice::startup_warning(&paths.agent_dir) {
        app.notice(w, "warning");
    }
    app.check_subscription();
    if let Some(e) = session.persist_error() {
        app.notice(format!("The session could not be saved: {e}"), "warning");
    }

    // Input: a reader thread; resize: a polling thread (both end with the process).
    let tx_in = tx.clone();
    let tx_eof = tx.clone();
    let _ = pi_tui::spawn_stdin_reader(
        move |b| tx_in.send_blocking(Msg::Input(b.to_vec())),
        move || {
            tx_eof.send_blocking(Msg::InputEnd);
        },
    );
    let tx_rs = tx.clone();
    let _ = pi_tui::spawn_resize_watcher(Duration::from_millis(100), move |_, _| tx_rs.send_blocking(Msg::Resize));

    app.start_initial(initial);

    // As pi: installed packages are checked for updates in the background (never offline);
    // a notice says which have one.
    if !pi_coding_agent::config::offline::offline(pi_coding_agent::config::offline::NetworkUse::Checks) {
        let cwd = host.session().cwd().to_path_buf();
        let tx_updates = tx.clone();
        tokio::task::spawn_blocking(move || {
            let paths = pi_coding_agent::config::paths::Paths::for_cwd(cwd);
            let settings = pi_coding_agent::config::settings::SettingsManager::load(&paths);
            let names = pi_coding_agent::packages::updates::available_updates(&paths, &settings);
            if !names.is_empty() {
                tx_updates.send_blocking(Msg::PackageUpdates(names));
            }
        });
    }

    // Inside tmux: a warning when modified keys are not passed on (asked off the UI thread).
    if std::env::var_os("TMUX").is_some_and(|v| !v.is_empty()) {
        let tx_tmux = tx.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(warning) = tmux_check::warning() {
                let show: effect::Then = Box::new(move |_| vec![effect::Effect::Notice(warning, "warning")]);
                tx_tmux.send_blocking(Msg::Then(show));
            }
        });
    }

    if options.resume_picker {
        let effects = commands::open_now(&app.ctx(), commands::Open::Resume);
        app.apply(effects, &mut tui);
    }
    if wants_fullscreen(&session, options.tui_mode) {
        start_fullscreen(&mut app, &mut tui, term);
    } else if let Some(line) = app.take_scope_line() {
        // Regular mode: above the screen, into the scrollback, as pi 1.6 prints it.
        let _ = write!(term, "{line}\x1b[0m\r\n").and_then(|()| term.flush());
    }
    if let Some(title) = app.take_title() {
        let _ = term.set_title(&title);
    }
    draw(&mut app, &mut tui, term);

    // A closed terminal (SIGHUP) or a polite kill (SIGTERM) ends the run the way a quit
    // does, so the terminal is restored and the session saved.
    let mut hangup = signal_stream(tokio::signal::unix::SignalKind::hangup());
    let mut terminate = signal_stream(tokio::signal::unix::SignalKind::terminate());

    let started = Instant::now();
    let mut parser = InputParser::new();
    let mut fallback_sent = false;
    let mut tick = tokio::time::interval(Duration::from_millis(40));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_spin = Instant::now();
    // `/login`'s partner names animate at their own frame rate; the branch below is waited on
    // only while such a row is highlighted, so a closed list costs nothing.
    let mut brand_frame = tokio::time::interval(provider_brand::FRAME);
    brand_frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut pending_since: Option<Instant> = None;
    // `ctx.shutdown()` of an extension: pi 1.6 quits once the agent is idle.
    let extensions = Arc::clone(host.services().extensions());
    let mut shutdown_asked = false;
    loop {
        let mut dirty = false;
        if shutdown_asked && !app.session().is_streaming() {
            app.request_quit();
            break;
        }
        let brand_animating = app.brand_animating(&mut tui);
        tokio::select! {
            () = extensions.shutdown_wanted(), if !shutdown_asked => shutdown_asked = true,
            _ = brand_frame.tick(), if brand_animating => dirty = true,
            msg = rx.recv() => {
                let Some(msg) = msg else { break };
                let mut next = Some(msg);
                // Take everything already waiting, then draw once. Keys that only went to an
                // extension component (a replacement editor) change nothing yet: the frame
                // comes with the component's answer, and the host gets the CPU meanwhile.
                while let Some(m) = next {
                    let input = matches!(m, Msg::Input(_));
                    app.set_screen_touched(false);
                    handle_msg(m, &mut app, &mut tui, &mut parser, term);
                    dirty |= !input || app.screen_touched();
                    release_held_input(&mut app, &mut tui, term);
                    match app.take_loop_action().as_deref() {
                        Some("app.suspend") => suspend(&mut tui, term),
                        Some("app.editor.external") => external_editor(&mut app, &mut tui, term),
                        _ => {}
                    }
                    if app.quit_requested() {
                        break;
                    }
                    next = rx.try_recv().ok();
                }
                pending_since = parser.has_pending().then(Instant::now);
            }
            _ = recv_signal(&mut hangup) => app.request_quit(),
            _ = recv_signal(&mut terminate) => app.request_quit(),
            _ = tick.tick() => {
                if tui.fullscreen_mut().is_some_and(|f| f.expire()) {
                    dirty = true;
                }
                let _ = term.keep_progress_alive();
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
                if app.has_held_input() {
                    release_held_input(&mut app, &mut tui, term);
                    dirty = true;
                }
                // Live output whose wake-up did not fit in the channel.
                if app.apply_live() {
                    dirty = true;
                }
                if last_spin.elapsed() >= Duration::from_millis(80) && app.tick() {
                    last_spin = Instant::now();
                    dirty = true;
                }
            }
        }
        if app.quit_requested() {
            break;
        }
        if let Some(on) = app.take_mode_switch() {
            switch_mode(on, &mut app, &mut tui, term);
            dirty = true;
        }
        if dirty {
            app.freeze_if_idle();
            if let Some(status) = app.take_program_status() {
                let _ = term.set_program_status(&status);
            }
            if let Some(on) = app.take_progress() {
                let _ = term.set_progress(on);
            }
            if let Some(title) = app.take_title() {
                let _ = term.set_title(&title);
            }
            draw(&mut app, &mut tui, term);
        }
    }
    shutdown(&mut app, &mut tui, term, &mut rx).await;
    0
}

fn signal_stream(kind: tokio::signal::unix::SignalKind) -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(kind).ok()
}

/// The next delivery of a signal; never, when it could not be watched.
async fn recv_signal(s: &mut Option<tokio::signal::unix::Signal>) {
    match s {
        Some(s) => {
            if s.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending::<()>().await,
    }
}

/// Hand `ev` on, or hold it (behind what is held already) while the editor waits for a
/// completion applied in the background, so keys keep their order around it.
fn dispatch_input(ev: &InputEvent, app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    if !matches!(ev, InputEvent::KittyFlags(_)) && (app.holds_input() || app.has_held_input()) {
        app.hold_input(ev.clone());
        release_held_input(app, tui, term);
        return;
    }
    dispatch_now(ev, app, tui, term);
}

/// Hand on the held input once nothing holds it any more (a held Tab may hold it again).
fn release_held_input(app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    while let Some(ev) = app.next_held_input() {
        dispatch_now(&ev, app, tui, term);
        if app.quit_requested() {
            return;
        }
    }
}

fn dispatch_now(ev: &InputEvent, app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    // Everything but the app's own input handling (which tells) may change the screen.
    let touched = app.screen_touched();
    app.set_screen_touched(true);
    match ev {
        InputEvent::KittyFlags(_) => {
            let _ = term.enable_kitty();
            return;
        }
        InputEvent::ProgramStatusSupported => {
            let _ = term.program_status_confirmed();
            return;
        }
        // The terminal switched between dark and light: ask for its background again, which
        // decides a `light/dark` theme setting.
        InputEvent::ColorScheme { dark } => {
            let system = app.theme_name() == pi_coding_agent::resources::themes::SYSTEM_THEME;
            let _ = term.query_colors(system);
            let dark = *dark;
            app.run_then(Box::new(move |cx| theme::scheme_reported(cx, dark)), tui);
            return;
        }
        InputEvent::TerminalColor { slot, rgb } => {
            pi_coding_agent::resources::system_theme::record(std::slice::from_ref(ev));
            if *slot == 11 {
                let rgb = *rgb;
                app.run_then(Box::new(move |cx| theme::background_reported(cx, rgb)), tui);
            }
            return;
        }
        InputEvent::PaletteColor { .. } => {
            pi_coding_agent::resources::system_theme::record(std::slice::from_ref(ev));
            return;
        }
        // The end of a batch of colour reports: the `system` theme is made again from them
        // when they changed anything.
        InputEvent::DeviceAttributes => {
            if pi_coding_agent::resources::system_theme::take_changed() {
                app.run_then(Box::new(theme::system_colors_reported), tui);
            }
            return;
        }
        InputEvent::Mouse(m) => {
            app.handle_mouse(m, tui);
            return;
        }
        // Focus reports only matter to a drag in progress.
        InputEvent::Focus(false) => {
            app.focus_lost(tui);
            return;
        }
        InputEvent::Focus(true) => return,
        _ => {}
    }
    if let InputEvent::Key(k) = ev {
        if !k.is_release() && !app.overlay_open() && app.kb().matches(k, "app.suspend") {
            suspend(tui, term);
            return;
        }
        if !k.is_release() && !app.overlay_open() && app.kb().matches(k, "app.editor.external") {
            external_editor(app, tui, term);
            return;
        }
        if !k.is_release() && app.kb().matches(k, "app.editor.external") {
            if let Some(id) = app.overlay_id() {
                if tui.overlay_mut::<text_dialog::TextDialog>(id).is_some() {
                    dialog_external_editor(app, tui, term, id);
                    return;
                }
            }
        }
    }
    app.set_screen_touched(touched);
    app.handle_input(ev, tui);
}

fn handle_msg(msg: Msg, app: &mut app::App, tui: &mut Tui, parser: &mut InputParser, term: &mut Terminal) {
    match msg {
        Msg::Input(bytes) => {
            for ev in parser.feed(&bytes) {
                if let InputEvent::KittyFlags(_) = ev {
                    parser.set_kitty_active(true);
                }
                if app.filter_terminal_input(&ev) {
                    continue;
                }
                dispatch_input(&ev, app, tui, term);
                if app.quit_requested() {
                    return;
                }
            }
        }
        Msg::FilteredInput(data) => {
            let mut again = InputParser::new();
            again.set_kitty_active(parser.kitty_active());
            let mut events = again.feed(data.as_bytes());
            events.extend(again.flush());
            for ev in events {
                dispatch_input(&ev, app, tui, term);
                if app.quit_requested() {
                    return;
                }
            }
        }
        Msg::InputEnd => app.request_quit(),
        Msg::Resize => {
            let (w, h) = term.size();
            if (w, h) != tui.size() {
                tui.set_size(w, h);
                app.set_rows(h);
            }
        }
        Msg::Ui(ev) => app.on_event(ev),
        Msg::Live => {
            app.apply_live();
        }
        Msg::Then(then) => app.run_then(then, tui),
        Msg::PromptDone(err) => app.prompt_done(err),
        Msg::BashDone {
            id,
            output,
            exit_code,
            cancelled,
            truncated_path,
        } => app.bash_done(&id, output, exit_code, cancelled, truncated_path),
        Msg::Restore { texts, announce } => app.restore(texts, announce),
        Msg::PackageUpdates(names) => app.package_updates_notice(&names),
    }
}

/// Ctrl+Z: give the terminal back, stop the process, and redraw everything on return.
fn suspend(tui: &mut Tui, term: &mut Terminal) {
    finish_for_handover(tui, term);
    let kitty = term.kitty_active();
    let _ = term.disable_key_protocols();
    let _ = term.stop();
    let pid = std::process::id().to_string();
    // The shell's `kill` stops this process; the call returns once it is continued.
    let _ = std::process::Command::new("kill").args(["-TSTP", &pid]).status();
    resume_terminal(tui, term, kitty);
}

/// Leave the screen to the shell or a child program: in regular mode as at exit, a blank
/// row below the frame where the screen has room (pi 1.6 stops its renderer the same way).
fn finish_for_handover(tui: &mut Tui, term: &mut Terminal) {
    if tui.fullscreen().is_some() {
        let _ = tui.finish(term);
    } else {
        let _ = tui.finish_spaced(term);
    }
}

/// Take the terminal back after a child program had it (and the alternate screen, when the
/// run is fullscreen); the next frame redraws everything. The key protocol comes back too:
/// the kitty one once the terminal answers the query `restart` sends again, else
/// modifyOtherKeys, which nothing else would ask for again (Shift+Enter would stop working).
fn resume_terminal(tui: &mut Tui, term: &mut Terminal, kitty: bool) {
    let _ = term.restart();
    if !kitty {
        let _ = term.enable_fallback_keys();
    }
    if tui.fullscreen().is_some() {
        let _ = term.enter_fullscreen();
    }
    tui.request_full_redraw();
}

/// Ctrl+G: edit the prompt (paste markers expanded) in the external editor; what it saves
/// replaces the prompt, otherwise a status line says why the prompt stayed as it was.
fn external_editor(app: &mut app::App, tui: &mut Tui, term: &mut Terminal) {
    let content = app.view_mut().editor.expanded_text();
    match edit_externally(app, tui, term, &content) {
        Ok(Some(text)) => app.view_mut().editor.set_text(&text),
        Ok(None) => {}
        Err(message) => app.status_line(message),
    }
}

/// Ctrl+G in a text dialog (`/bug`'s description): as for the prompt, the dialog showing why
/// when its text stayed as it was.
fn dialog_external_editor(app: &mut app::App, tui: &mut Tui, term: &mut Terminal, id: pi_tui::OverlayId) {
    let Some(content) = tui.overlay_mut::<text_dialog::TextDialog>(id).map(|d| d.text()) else {
        return;
    };
    let result = edit_externally(app, tui, term, &content);
    if let Some(dialog) = tui.overlay_mut::<text_dialog::TextDialog>(id) {
        match result {
            Ok(Some(text)) => dialog.set_text(&text),
            Ok(None) => dialog.set_problem(None),
            Err(message) => dialog.set_problem(Some(message)),
        }
    }
}

/// Run the `externalEditor` setting's command, else `$VISUAL` / `$EDITOR` / `nano`, on
/// `content` with the terminal handed over: `Ok(Some(text))` with what it saved when it
/// exits with 0, `Err` saying why not.
fn edit_externally(
    app: &mut app::App,
    tui: &mut Tui,
    term: &mut Terminal,
    content: &str,
) -> Result<Option<String>, String> {
    let cmd = app
        .ctx()
        .read_settings(|s| s.external_editor_command())
        .unwrap_or_else(|| "nano".to_string());
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("pi-editor-{}-{stamp}", std::process::id()));
    let path = dir.join("prompt.md");
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, content)) {
        return Err(format!("Failed to launch external editor: {cmd} ({e})"));
    }
    finish_for_handover(tui, term);
    let kitty = term.kitty_active();
    let _ = term.disable_key_protocols();
    let _ = term.stop();
    let _ = term
        .write_all(format!("Launching external editor: {cmd}\r\nPi will resume when the editor exits.\r\n").as_bytes());
    let _ = term.flush();
    // The command's words are the program and its first arguments (`code --wait`).
    let mut words = cmd.split(' ').filter(|w| !w.is_empty());
    let status = match words.next() {
        Some(program) => std::process::Command::new(program).args(words).arg(&path).status(),
        None => Err(std::io::Error::other("empty command")),
    };
    resume_terminal(tui, term, kitty);
    let result = match status {
        Err(_) => Err(format!("Failed to launch external editor: {cmd}")),
        Ok(s) if s.success() => Ok(std::fs::read_to_string(&path).ok().map(|text| {
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            text.strip_suffix('\n').unwrap_or(text).to_string()
        })),
        Ok(s) => Err(format!(
            "External editor exited with {}; prompt unchanged",
            exit_description(s)
        )),
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// `code N`, or the signal's name when a signal ended the editor.
fn exit_description(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            let name = match sig {
                1 => "SIGHUP",
                2 => "SIGINT",
                3 => "SIGQUIT",
                6 => "SIGABRT",
                9 => "SIGKILL",
                11 => "SIGSEGV",
                13 => "SIGPIPE",
                15 => "SIGTERM",
                _ => return format!("signal {sig}"),
            };
            return name.to_string();
        }
    }
    "an unknown status".to_string()
}

async fn shutdown(app: &mut app::App, tui: &mut Tui, term: &mut Terminal, rx: &mut mpsc::Receiver<Msg>) {
    let session = app.session();
    if session.is_streaming() {
        session.abort();
        // The run may be waiting to hand the loop an event: keep taking them meanwhile.
        let idle = session.agent().wait_for_idle();
        tokio::pin!(idle);
        let deadline = tokio::time::sleep(Duration::from_secs(2));
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                _ = &mut idle => break,
                _ = &mut deadline => break,
                m = rx.recv() => if m.is_none() { break },
            }
        }
    }
    app.cancel_bash();
    // Settings changes still being written land before the process ends.
    let settings = session.settings().clone();
    let _ = tokio::task::spawn_blocking(move || pi_coding_agent::config::settings::flush(&settings)).await;
    draw(app, tui, term);
    let fullscreen = tui.fullscreen().is_some();
    if !fullscreen {
        // pi 1.6 leaves a blank row before what it prints at exit, when the screen has room.
        let _ = tui.finish_spaced(term);
    }
    let _ = term.disable_key_protocols();
    if fullscreen {
        let transcript = app
            .ctx()
            .read_settings(|s| s.fullscreen_exit_transcript())
            .unwrap_or(true);
        // After a stint in regular mode the main screen holds that renderer's frames: as
        // pi 1.6, it draws the last frame (dialogs closed) going on from them.
        if transcript && !tui.renderer().previous().is_empty() {
            leave_fullscreen(tui, term);
            tui.set_fullscreen(false);
            app.set_fullscreen(false);
            while tui.pop_overlay().is_some() {}
            draw(app, tui, term);
            let _ = tui.finish(term);
        } else {
            let document = if transcript {
                // The normal screen shows iTerm2 images again, as pi 1.6's exit transcript does.
                app.set_fullscreen(false);
                let (w, _) = tui.size();
                exit_output::document(app.view_mut(), w)
            } else {
                String::new()
            };
            leave_fullscreen(tui, term);
            let _ = term.write_all(document.as_bytes());
        }
    }
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        if let Some(hint) = exit_output::resume_hint(&app.session(), &app.theme()) {
            let _ = term.write_all(hint.as_bytes());
        }
    }
    // Late key releases after the protocol is switched off are read and dropped here.
    let deadline = Instant::now() + Duration::from_millis(50);
    while let Ok(Some(_)) = tokio::time::timeout_at(deadline.into(), rx.recv()).await {}
    let _ = term.flush();
}
