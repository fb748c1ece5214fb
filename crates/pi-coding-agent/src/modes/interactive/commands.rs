//! Slash commands and the selectors they open (model, resume, fork, theme, settings).

use std::path::{Path, PathBuf};

use pi_tui::components::{SelectItem, SelectList};
use pi_tui::{OverlayOptions, Tui};

use super::app::{App, Picker};
use super::events::Msg;
use super::footer::format_tokens;

/// The built-in commands, in pi's order, with descriptions for autocomplete.
pub const COMMANDS: &[(&str, &str)] = &[
    ("settings", "Open settings menu"),
    ("model", "Select model (opens selector UI)"),
    ("scoped-models", "Choose the models Ctrl+P cycles through"),
    ("export", "Export session (HTML default, or specify path: .html/.jsonl)"),
    ("import", "Import and resume a session from a JSONL file"),
    ("share", "Share the session as a secret GitHub gist"),
    ("copy", "Copy last agent message to clipboard"),
    ("name", "Set session display name"),
    ("session", "Show session info and stats"),
    ("changelog", "Show what changed in each version"),
    ("hotkeys", "Show all keyboard shortcuts"),
    ("fork", "Create a new fork from a previous message"),
    ("clone", "Duplicate the current session at the current position"),
    ("tree", "Navigate the session tree (switch branches)"),
    ("login", "Set up a provider's credentials"),
    ("logout", "Remove a provider's stored credentials"),
    ("new", "Start a new session"),
    ("compact", "Manually compact the session context"),
    ("resume", "Resume a different session"),
    ("reload", "Reload keybindings and themes"),
    ("quit", "Quit pi"),
];

/// Slash-command entries for the editor's autocomplete.
pub fn slash_commands() -> Vec<pi_tui::autocomplete::SlashCommand> {
    COMMANDS
        .iter()
        .map(|(n, d)| pi_tui::autocomplete::SlashCommand::new(*n, *d))
        .collect()
}

/// Pending picker work from a command that needs the TUI (the loop opens it).
pub enum Open {
    Model(Option<String>),
    Resume,
    Fork,
    Settings,
    Tree,
    Login,
    Logout,
    ScopedModels,
}

thread_local! {
    static TO_OPEN: std::cell::RefCell<Option<Open>> = const { std::cell::RefCell::new(None) };
}

/// A selector the last command asked for.
pub fn take_open() -> Option<Open> {
    TO_OPEN.with(|o| o.borrow_mut().take())
}

/// Ask the loop to open a selector after the current input.
pub fn request(open: Open) {
    TO_OPEN.with(|o| *o.borrow_mut() = Some(open));
}

/// Run a built-in command; false when `text` is not one (it is then sent as a prompt).
/// Switch the model off the input path (the switch records and announces a thinking change,
/// which the chat listens to); the outcome comes back as a notice.
pub(super) fn spawn_set_model(
    session: crate::session::AgentSession,
    model: pi_ai::Model,
    tx: tokio::sync::mpsc::UnboundedSender<Msg>,
) {
    tokio::spawn(async move {
        let id = model.id.clone();
        let msg = match session.set_model(model).await {
            Ok(()) => Msg::Notice {
                text: format!("Model: {id}"),
                error: false,
            },
            Err(e) => Msg::Notice {
                text: e.to_string(),
                error: true,
            },
        };
        let _ = tx.send(msg);
    });
}

pub fn run_command(app: &mut App, text: &str) -> bool {
    let (name, arg) = match text[1..].split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (&text[1..], ""),
    };
    let session = app.session();
    let tx = app.tx.clone();
    match name {
        "quit" => app.quit = true,
        "model" => {
            if !arg.is_empty() {
                let models = session.available_models();
                let exact: Vec<_> = models
                    .iter()
                    .filter(|m| format!("{}/{}", m.provider, m.id) == arg || m.id == arg)
                    .collect();
                if exact.len() == 1 {
                    let m = exact[0].clone();
                    spawn_set_model(session.clone(), m, tx);
                    return true;
                }
            }
            request(Open::Model((!arg.is_empty()).then(|| arg.to_string())));
        }
        "settings" => request(Open::Settings),
        "resume" => request(Open::Resume),
        "fork" => request(Open::Fork),
        "tree" => request(Open::Tree),
        "scoped-models" => request(Open::ScopedModels),
        "changelog" => app.info(super::changelog::markdown()),
        "share" => super::share::run(app),
        "login" => request(Open::Login),
        "logout" => request(Open::Logout),
        "new" => {
            let host = app.host.clone();
            tokio::spawn(async move {
                let msg = match host.new_session().await {
                    Ok(()) => Msg::Replaced {
                        notice: Some("✓ New session started".into()),
                        editor_text: None,
                    },
                    Err(e) => Msg::Notice {
                        text: e.to_string(),
                        error: true,
                    },
                };
                let _ = tx.send(msg);
            });
        }
        "clone" => {
            if session.messages().is_empty() {
                app.notice("Nothing to clone yet", "warning");
                return true;
            }
            let host = app.host.clone();
            tokio::spawn(async move {
                let msg = match host.clone_session().await {
                    Ok(()) => Msg::Replaced {
                        notice: Some("Cloned to new session".into()),
                        editor_text: None,
                    },
                    Err(e) => Msg::Notice {
                        text: e.to_string(),
                        error: true,
                    },
                };
                let _ = tx.send(msg);
            });
        }
        "import" => {
            if arg.is_empty() {
                app.notice("Usage: /import <path.jsonl>", "warning");
                return true;
            }
            let path = resolve(session.cwd(), arg);
            let host = app.host.clone();
            tokio::spawn(async move {
                let msg = match host.switch_session(&path).await {
                    Ok(()) => Msg::Replaced {
                        notice: Some(format!("Session imported from: {}", path.display())),
                        editor_text: None,
                    },
                    Err(e) => Msg::Notice {
                        text: e.to_string(),
                        error: true,
                    },
                };
                let _ = tx.send(msg);
            });
        }
        "name" => {
            if arg.is_empty() {
                match session.with_store(|s| s.session_name().map(str::to_string)) {
                    Some(n) => app.notice(format!("Session name: {n}"), "dim"),
                    None => app.notice("Usage: /name <name>", "warning"),
                }
                return true;
            }
            let name = arg.to_string();
            tokio::spawn(async move {
                let msg = match session.set_session_name(&name).await {
                    Ok(()) => Msg::Notice {
                        text: format!("Session name set: {name}"),
                        error: false,
                    },
                    Err(e) => Msg::Notice {
                        text: e.to_string(),
                        error: true,
                    },
                };
                let _ = tx.send(msg);
                let _ = tx.send(Msg::Footer);
            });
        }
        "session" => {
            let s = session.session_stats();
            let name = session.with_store(|st| st.session_name().map(str::to_string));
            let mut md = String::from("**Session Info**\n\n");
            if let Some(n) = name {
                md.push_str(&format!("Name: {n}  \n"));
            }
            md.push_str(&format!(
                "File: {}  \nID: {}\n\n**Messages**  \nUser: {}  \nAssistant: {}  \nTool Calls: {}  \nTool Results: {}  \nTotal: {}\n\n**Tokens**  \nInput: {}  \nOutput: {}  \n",
                s.session_file.as_deref().unwrap_or("In-memory"),
                s.session_id,
                s.user_messages,
                s.assistant_messages,
                s.tool_calls,
                s.tool_results,
                s.total_messages,
                s.tokens.input,
                s.tokens.output
            ));
            if s.tokens.cache_read > 0 {
                md.push_str(&format!("Cache Read: {}  \n", s.tokens.cache_read));
            }
            if s.tokens.cache_write > 0 {
                md.push_str(&format!("Cache Write: {}  \n", s.tokens.cache_write));
            }
            md.push_str(&format!("Total: {}\n", s.tokens.total));
            if s.cost > 0.0 {
                md.push_str(&format!("\n**Cost**  \nTotal: ${:.4}\n", s.cost));
            }
            app.info(md);
        }
        "hotkeys" => {
            let mut md = String::from("**Keyboard Shortcuts**\n\n| Key | Action |\n|---|---|\n");
            for d in app.kb.definitions() {
                let keys = app.kb.keys(d.id);
                // Keys that only act inside one selector are listed by that selector.
                if keys.is_empty()
                    || ["tui.select", "app.tree.", "app.models."]
                        .iter()
                        .any(|p| d.id.starts_with(p))
                {
                    continue;
                }
                md.push_str(&format!("| `{}` | {} |\n", keys.join("`, `"), d.description));
            }
            md.push_str("| `/` | Slash commands |\n| `!` | Run bash command |\n| `!!` | Run bash command (excluded from context) |\n");
            app.info(md);
        }
        "export" => {
            let Some(file) = session.with_store(|s| s.session_file().map(Path::to_path_buf)) else {
                app.notice("Cannot export an in-memory session", "error");
                return true;
            };
            let out = (!arg.is_empty()).then(|| resolve(session.cwd(), arg));
            let result = if out
                .as_ref()
                .is_some_and(|p| p.extension().is_some_and(|e| e == "jsonl"))
            {
                let out = out.clone().unwrap_or_default();
                std::fs::copy(&file, &out).map(|_| out).map_err(|e| e.to_string())
            } else {
                crate::export::export_file(&file, out.as_deref(), session.cwd()).map_err(|e| e.to_string())
            };
            match result {
                Ok(p) => app.notice(format!("Session exported to: {}", p.display()), "dim"),
                Err(e) => app.notice(format!("Export failed: {e}"), "error"),
            }
        }
        "copy" => match session.last_assistant_text().filter(|t| !t.trim().is_empty()) {
            None => app.notice("No agent messages to copy yet.", "error"),
            Some(text) => match copy_to_clipboard(&text) {
                Ok(()) => app.notice("Copied last agent message to clipboard", "dim"),
                Err(e) => app.notice(e, "error"),
            },
        },
        "compact" => {
            if session.messages().len() < 2 {
                app.notice("Nothing to compact (no messages yet)", "warning");
                return true;
            }
            let instructions = (!arg.is_empty()).then(|| arg.to_string());
            tokio::spawn(async move {
                // compaction_start / compaction_end reach the chat as session events.
                let msg = match session.compact(instructions.as_deref()).await {
                    Ok(r) => Msg::Notice {
                        text: format!("Compacted ({} tokens before)", r.tokens_before),
                        error: false,
                    },
                    Err(e) => Msg::Notice {
                        text: e.to_string(),
                        error: true,
                    },
                };
                let _ = tx.send(msg);
            });
        }
        "reload" => {
            let paths = paths_for(&session);
            let (kb, warning) = super::keys::load_keybindings(&paths.keybindings_path());
            pi_tui::set_keybindings(kb);
            app.kb = pi_tui::keybindings();
            if let Some(w) = warning {
                app.notice(w, "warning");
            }
            let theme = session
                .settings()
                .lock()
                .map(|s| super::theme::load_ui_theme(&paths, &s, None).0)
                .unwrap_or_else(|_| super::theme::UiTheme::fallback());
            app.set_theme(std::sync::Arc::new(theme));
            app.notice("Reloaded keybindings, extensions, skills, prompts, themes", "dim");
        }
        _ => return false,
    }
    true
}

fn resolve(cwd: &Path, arg: &str) -> PathBuf {
    let p = crate::config::paths::expand_tilde(arg);
    if p.is_absolute() {
        p
    } else {
        cwd.join(p)
    }
}

pub fn paths_for(session: &crate::session::AgentSession) -> crate::config::Paths {
    crate::config::Paths::new(
        crate::config::paths::agent_dir(),
        session.cwd(),
        crate::config::paths::home_dir(),
    )
}

fn copy_to_clipboard(text: &str) -> Result<(), String> {
    use std::io::Write;
    let candidates: &[(&str, &[&str])] = &[
        ("wl-copy", &[]),
        ("xclip", &["-selection", "clipboard"]),
        ("xsel", &["--clipboard", "--input"]),
        ("pbcopy", &[]),
    ];
    for (cmd, args) in candidates {
        let Ok(mut child) = std::process::Command::new(cmd)
            .args(*args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        else {
            continue;
        };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(text.as_bytes());
        }
        if child.wait().is_ok_and(|s| s.success()) {
            return Ok(());
        }
    }
    Err("No clipboard tool found (install wl-copy, xclip or xsel)".into())
}

fn show_list(app: &mut App, tui: &mut Tui, items: Vec<SelectItem>, picker: Picker, filter: Option<&str>) {
    if items.is_empty() {
        app.notice("Nothing to choose from", "warning");
        return;
    }
    let mut list = SelectList::new(items, 10, app.theme.select_list());
    if let Some(f) = filter {
        list.set_fuzzy_filter(f);
    }
    let id = tui.show_overlay(Box::new(list), OverlayOptions::default());
    app.picker = Some((id, picker));
}

pub fn open_model_picker(app: &mut App, tui: &mut Tui, filter: Option<&str>) {
    let session = app.session();
    let current = session.model();
    let items = session
        .available_models()
        .into_iter()
        .map(|m| {
            let mark = if current
                .as_ref()
                .is_some_and(|c| c.id == m.id && c.provider == m.provider)
            {
                " ✓"
            } else {
                ""
            };
            SelectItem::new(format!("{}/{}", m.provider, m.id))
                .with_label(format!("{}{mark}", m.id))
                .with_description(format!("[{}] ctx {}", m.provider, format_tokens(m.context_window)))
        })
        .collect();
    show_list(app, tui, items, Picker::Model, filter);
}

/// Open what the last command requested.
pub fn open_requested(app: &mut App, tui: &mut Tui) {
    let Some(open) = take_open() else { return };
    match open {
        Open::Model(f) => open_model_picker(app, tui, f.as_deref()),
        Open::Resume => {
            let session = app.session();
            let dir = session.with_store(|s| s.session_dir().map(Path::to_path_buf));
            let Some(dir) = dir else {
                app.notice("No saved sessions (sessions are not persisted)", "warning");
                return;
            };
            let current = session.with_store(|s| s.session_file().map(Path::to_path_buf));
            let infos: Vec<_> = pi_session::list_sessions(&dir)
                .into_iter()
                .filter(|i| Some(&i.path) != current.as_ref())
                .collect();
            let paths = infos.iter().map(|i| i.path.clone()).collect();
            let items = crate::modes::resume_picker::session_rows(&infos);
            show_list(app, tui, items, Picker::Resume(paths), None);
        }
        Open::Fork => {
            let items = app
                .host
                .fork_points()
                .into_iter()
                .map(|p| SelectItem::new(p.entry_id).with_label(p.text.replace('\n', " ")))
                .collect();
            show_list(app, tui, items, Picker::Fork, None);
        }
        Open::Tree => super::tree_nav::open(app, tui, None),
        Open::Settings => super::settings_menu::open(app, tui),
        Open::Login => super::login::open_login(app, tui),
        Open::ScopedModels => super::scoped_models::open(app, tui),
        Open::Logout => super::login::open_logout(app, tui),
    }
}

/// A selector's choice.
pub fn picked(app: &mut App, picker: Picker, value: String, tui: &mut Tui) {
    let tx = app.tx.clone();
    let host = app.host.clone();
    match picker {
        Picker::Model => {
            let session = app.session();
            let Some((provider, id)) = value.split_once('/') else {
                return;
            };
            match session.find_model(provider, id) {
                Some(m) => spawn_set_model(session.clone(), m, tx),
                None => app.notice(format!("Model not found: {value}"), "error"),
            }
            app.refresh_footer();
        }
        Picker::Resume(paths) => {
            let Some(path) = value.parse::<usize>().ok().and_then(|i| paths.get(i).cloned()) else {
                return;
            };
            tokio::spawn(async move {
                let msg = match host.switch_session(&path).await {
                    Ok(()) => Msg::Replaced {
                        notice: Some("Resumed session".into()),
                        editor_text: None,
                    },
                    Err(e) => Msg::Notice {
                        text: e.to_string(),
                        error: true,
                    },
                };
                let _ = tx.send(msg);
            });
        }
        Picker::Fork => {
            tokio::spawn(async move {
                let msg = match host.fork(&value).await {
                    Ok(text) => Msg::Replaced {
                        notice: Some("Branched to new session".into()),
                        editor_text: Some(text),
                    },
                    Err(e) => Msg::Notice {
                        text: e.to_string(),
                        error: true,
                    },
                };
                let _ = tx.send(msg);
            });
        }
        Picker::Settings | Picker::ScopedModels => {}
        Picker::LoginMethod => super::login::method_chosen(app, tui, &value),
        Picker::LoginProvider { oauth, options } => super::login::provider_chosen(app, tui, oauth, &options, &value),
        Picker::LoginKey(p) => super::login::key_entered(app, &p, &value),
        Picker::Logout(options) => super::login::logout_chosen(app, &options, &value),
        Picker::Tree => super::tree_nav::chosen(app, tui, value),
        Picker::TreeSummary(target) => super::tree_nav::summary_chosen(app, tui, target, &value),
        Picker::TreeCustom(target) => super::tree_nav::custom_entered(app, target, &value),
    }
}
