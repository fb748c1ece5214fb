//! The built-in slash commands and the selectors they open (model, resume, fork). Each
//! command reads the context and returns effects; files, processes and the session host's
//! work run as tasks whose outcome comes back as effects.

use std::path::{Path, PathBuf};

use pi_tui::components::SelectItem;

use super::command_registry::CommandRegistry;
use super::effect::{blocking, blocking_task, notice, spawn, then, then_notice, Ctx, Effect, Overlay, Picker, Replace};
use super::theme::UiTheme;

type Builtin = fn(&Ctx<'_>, &str) -> Vec<Effect>;

/// The built-in commands, in pi's order, with descriptions for autocomplete.
const BUILTINS: &[(&str, &str, Builtin)] = &[
    ("settings", "Open settings menu", |cx, _| open_now(cx, Open::Settings)),
    ("model", "Select model (opens selector UI)", model),
    ("tree", "Navigate session tree (switch branches)", |cx, _| {
        open_now(cx, Open::Tree)
    }),
    ("thinking", "Set thinking level", super::commands_16::thinking),
    ("scoped-models", "Enable/disable models for Ctrl+P cycling", |cx, _| {
        open_now(cx, Open::ScopedModels)
    }),
    (
        "export",
        "Export session (HTML default, or specify path: .html/.jsonl)",
        export,
    ),
    (
        "import",
        "Import a JSONL session, preserving its ID and working directory",
        import,
    ),
    (
        "share",
        "Share session via a Radius artifact or a GitHub gist",
        |cx, _| super::share::run(cx),
    ),
    ("bug", "Report a bug to the Pi developers", super::bug_command::bug),
    ("copy", "Copy last agent message to clipboard", copy),
    ("name", "Set session display name", name),
    (
        "session",
        "Show session info and stats",
        super::session_info::session_info,
    ),
    ("changelog", "Show changelog entries", |_, _| {
        vec![Effect::TitledInfo("What's New".into(), super::changelog::markdown())]
    }),
    ("hotkeys", "Show all keyboard shortcuts", hotkeys),
    ("fork", "Create a new fork from a previous user message", |cx, _| {
        open_now(cx, Open::Fork)
    }),
    ("clone", "Duplicate the current session at the current position", clone),
    (
        "trust",
        "Save project trust decision for future sessions",
        super::commands_16::trust,
    ),
    ("login", "Configure provider authentication", |cx, arg| {
        super::login::command(cx, arg)
    }),
    ("logout", "Remove provider authentication", |cx, _| {
        open_now(cx, Open::Logout)
    }),
    ("new", "Start a new session", |_, _| {
        vec![Effect::ReplaceSession(Replace::New)]
    }),
    ("compact", "Manually compact the session context", compact),
    ("resume", "Resume another session", |cx, _| open_now(cx, Open::Resume)),
    (
        "reload",
        "Reload keybindings, extensions, skills, prompts, themes, and context files",
        reload,
    ),
    ("quit", "Quit pi", |_, _| vec![Effect::Quit]),
    ("llama", "Manage llama.cpp router models", super::bug_command::llama),
    (
        "mcp",
        "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
        super::mcp_menu::command,
    ),
];

/// Built-ins that take no argument: with one, pi 1.6 does not run them and the text goes
/// on as a prompt (`/tree x` is a message, not the tree).
const NO_ARGUMENT: &[&str] = &[
    "settings",
    "scoped-models",
    "share",
    "copy",
    "session",
    "changelog",
    "hotkeys",
    "fork",
    "clone",
    "tree",
    "trust",
    "logout",
    "new",
    "reload",
    "resume",
    "quit",
];

/// Whether `text` names an argument-less built-in but gives it an argument.
pub fn is_builtin_with_stray_argument(text: &str) -> bool {
    let Some(body) = text.strip_prefix('/') else {
        return false;
    };
    match body.split_once(char::is_whitespace) {
        Some((name, arg)) => NO_ARGUMENT.contains(&name) && !arg.trim().is_empty(),
        None => false,
    }
}

/// Whether `name` is one of pi 1.6's own interactive commands (an extension command of the
/// same name is reported under `[Extension issues]`). `/mcp` and `/llama` are left out: pi
/// 1.6 has them from built-in extensions.
pub fn is_core_command(name: &str) -> bool {
    !matches!(name, "mcp" | "llama") && BUILTINS.iter().any(|(n, _, _)| *n == name)
}

/// A registry holding the built-ins, in pi's order; later registrations come after them.
#[cfg(test)]
pub fn builtins() -> CommandRegistry {
    builtins_without(&[])
}

/// The built-ins except the named ones (those of built-in extensions that are off).
pub fn builtins_without(off: &[&str]) -> CommandRegistry {
    let mut r = CommandRegistry::default();
    for (name, description, handler) in BUILTINS.iter().filter(|(n, _, _)| !off.contains(n)) {
        let handler = *handler;
        r.register(*name, *description, move |cx: &Ctx<'_>, arg: &str| handler(cx, arg));
    }
    r
}

/// A selector a command or a key opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    Resume,
    Fork,
    Settings,
    Tree,
    Logout,
    ScopedModels,
}

/// Build the overlay for `what` now.
pub fn open_now(cx: &Ctx<'_>, what: Open) -> Vec<Effect> {
    match what {
        Open::Resume => open_resume(cx),
        Open::Fork => {
            let messages: Vec<(String, String)> = cx
                .host
                .fork_points()
                .into_iter()
                .map(|p| (p.entry_id, p.text))
                .collect();
            if messages.is_empty() {
                return vec![Effect::StatusLine("No messages to fork from".into())];
            }
            vec![Effect::Open(Overlay {
                view: Box::new(super::fork_selector::ForkSelector::new(messages, cx.theme.clone())),
                picker: Picker::Fork,
            })]
        }
        Open::Tree => super::tree_nav::open(cx, None),
        Open::Settings => super::settings_menu::open(cx),
        Open::ScopedModels => super::scoped_models::open(cx),
        Open::Logout => super::login::open_logout(cx),
    }
}

/// Switch the model off the input path (the switch records and announces a thinking change,
/// which the chat listens to); the outcome comes back as a notice.
pub(super) fn set_model(session: pi_coding_agent::session::AgentSession, model: pi_ai::Model) -> Effect {
    blocking_task(async move {
        let id = model.id.clone();
        match session.set_model(model).await {
            Ok(()) => then(move |_| {
                vec![
                    Effect::StatusLine(format!("Model: {id}")),
                    Effect::RefreshFooter,
                    Effect::CheckSubscription,
                ]
            }),
            Err(e) => then_notice(e.to_string(), "error"),
        }
    })
}

/// `/model <text>`: a unique exact match (among the cycle set when there is one) is taken at
/// once. Otherwise, as pi 1.6, the catalogues are refreshed first ("Refreshing model
/// catalogs…" in the chat) and the text is tried again; still no single match opens the
/// picker searching for it.
fn model(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    use pi_coding_agent::config::model_resolver::find_exact_model_reference;
    use pi_coding_agent::config::models_store_refresh::{refresh_for_picker, PickerRefresh};
    let arg = arg.trim();
    if arg.is_empty() {
        return open_model_picker(cx, None);
    }
    let scoped: Vec<pi_ai::Model> = cx.session.scoped_models().into_iter().map(|s| s.model).collect();
    let cached = if scoped.is_empty() {
        cx.session.available_models()
    } else {
        scoped.clone()
    };
    if let Some(m) = find_exact_model_reference(arg, &cached) {
        return vec![set_model(cx.session.clone(), m.clone())];
    }
    if !scoped.is_empty() {
        return open_model_picker(cx, Some(arg));
    }
    let paths = cx.paths();
    let arg = arg.to_string();
    vec![
        Effect::StatusLine(super::model_picker::REFRESHING.into()),
        blocking(move || {
            let outcome = refresh_for_picker(&paths);
            then(move |cx| {
                let mut out = Vec::new();
                match outcome {
                    PickerRefresh::Done => {}
                    PickerRefresh::TimedOut => {
                        out.push(notice("Model refresh timed out; searching cached models.", "warning"))
                    }
                    PickerRefresh::Failed(ids) => out.push(notice(
                        format!("Could not refresh {}; searching cached models.", ids.join(", ")),
                        "warning",
                    )),
                }
                match find_exact_model_reference(&arg, &cx.session.available_models()) {
                    Some(m) => out.push(set_model(cx.session.clone(), m.clone())),
                    None => out.extend(open_model_picker(cx, Some(&arg))),
                }
                out
            })
        }),
    ]
}

/// `/import <path>`: asks before replacing the session, as pi 1.6 does; a missing file is an
/// error, not an empty session.
fn import(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    let arg = arg.trim();
    let arg = arg
        .strip_prefix('"')
        .and_then(|a| a.strip_suffix('"'))
        .unwrap_or(arg)
        .to_string();
    if arg.is_empty() {
        return vec![notice("Usage: /import <path.jsonl>", "error")];
    }
    let path = resolve(cx.session.cwd(), &arg);
    let title = format!("Import session\nReplace current session with {arg}?");
    let items = vec![SelectItem::new("Yes"), SelectItem::new("No")];
    let dialog = super::dialogs::Dialog::selector(title, items, cx.theme.clone());
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        // pi 1.6 asks this as a permission, named by the dialog's first line.
        picker: Picker::Blocking {
            kind: "permission",
            title: "Import session".into(),
            on_result: Box::new(move |cx, value| {
                if value.as_deref() != Some("Yes") {
                    return vec![Effect::StatusLine("Import cancelled".into())];
                }
                if !path.is_file() {
                    return vec![notice(
                        format!("Failed to import session: File not found: {}", path.display()),
                        "error",
                    )];
                }
                let notice = format!("Session imported from: {arg}");
                switch_or_ask(cx, path, notice.clone(), Some(notice), "Import cancelled")
            }),
        },
    })]
}

fn clone(cx: &Ctx<'_>, _: &str) -> Vec<Effect> {
    // As pi 1.6: a session whose file is not written yet (no reply so far) cannot be cloned.
    let unsaved = cx
        .session
        .with_store(|s| s.session_file().map(|f| !f.exists()))
        .unwrap_or(false);
    if unsaved {
        return vec![notice(
            "This session has not been saved yet. Send a message before cloning or forking it.",
            "error",
        )];
    }
    if cx.session.with_messages(<[_]>::is_empty) {
        return vec![Effect::StatusLine("Nothing to clone yet".into())];
    }
    vec![Effect::ReplaceSession(Replace::Clone)]
}

fn name(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    if arg.is_empty() {
        return vec![match cx.session.with_store(|s| s.session_name().map(str::to_string)) {
            Some(n) => notice(format!("Session name: {n}"), "dim"),
            None => notice("Usage: /name <name>", "warning"),
        }];
    }
    let name = arg.to_string();
    let session = cx.session.clone();
    vec![blocking_task(async move {
        match session.set_session_name(&name).await {
            Ok(()) => then(move |_| {
                vec![
                    notice(format!("Session name set: {name}"), "dim"),
                    Effect::RefreshFooter,
                ]
            }),
            Err(e) => then(move |_| vec![notice(e.to_string(), "error"), Effect::RefreshFooter]),
        }
    })]
}

/// `/hotkeys`: pi 1.6's three tables (navigation, editing, other) with the keys bound now,
/// every key of an action joined by `/` and capitalized as pi shows them.
fn hotkeys(cx: &Ctx<'_>, _: &str) -> Vec<Effect> {
    let k = |id: &str| format!("`{}`", super::keys::keys_display(cx.kb, id).join("/"));
    let rows = |rows: &[(String, &str)]| -> String {
        let mut t = String::from("| Key | Action |\n|-----|--------|\n");
        for (key, what) in rows {
            t.push_str(&format!("| {key} | {what} |\n"));
        }
        t
    };
    let navigation = rows(&[
        (
            format!(
                "{} / {} / {} / {}",
                k("tui.editor.cursorUp"),
                k("tui.editor.cursorDown"),
                k("tui.editor.cursorLeft"),
                k("tui.editor.cursorRight")
            ),
            "Move cursor / browse history",
        ),
        (
            format!(
                "{} / {}",
                k("tui.editor.cursorWordLeft"),
                k("tui.editor.cursorWordRight")
            ),
            "Move by word",
        ),
        (k("tui.editor.cursorLineStart"), "Start of line"),
        (k("tui.editor.cursorLineEnd"), "End of line"),
        (k("tui.editor.jumpForward"), "Jump forward to character"),
        (k("tui.editor.jumpBackward"), "Jump backward to character"),
        (
            format!("{} / {}", k("tui.editor.pageUp"), k("tui.editor.pageDown")),
            "Scroll by page",
        ),
    ]);
    let editing = rows(&[
        (k("tui.input.submit"), "Send message"),
        (k("tui.input.newLine"), "New line"),
        (k("tui.editor.deleteWordBackward"), "Delete word backwards"),
        (k("tui.editor.deleteWordForward"), "Delete word forwards"),
        (k("tui.editor.deleteToLineStart"), "Delete to start of line"),
        (k("tui.editor.deleteToLineEnd"), "Delete to end of line"),
        (k("tui.editor.yank"), "Paste the most-recently-deleted text"),
        (k("tui.editor.yankPop"), "Cycle through the deleted text after pasting"),
        (k("tui.editor.undo"), "Undo"),
    ]);
    let other = rows(&[
        (k("tui.input.tab"), "Path completion / accept autocomplete"),
        (k("app.interrupt"), "Cancel autocomplete / abort streaming"),
        (k("app.clear"), "Clear editor (first) / exit (second)"),
        (k("app.exit"), "Exit (when editor is empty)"),
        (k("app.suspend"), "Suspend to background"),
        (k("app.thinking.cycle"), "Cycle thinking level"),
        (
            format!("{} / {}", k("app.model.cycleForward"), k("app.model.cycleBackward")),
            "Cycle models",
        ),
        (k("app.model.select"), "Open model selector"),
        (k("app.tools.expand"), "Toggle tool output expansion"),
        (k("app.thinking.toggle"), "Toggle thinking block visibility"),
        (k("app.editor.external"), "Edit message in external editor"),
        (k("app.message.copy"), "Copy selection or last assistant message"),
        (k("app.message.followUp"), "Queue follow-up message"),
        (k("app.message.dequeue"), "Restore queued messages"),
        (
            k("app.clipboard.pasteImage"),
            "Paste files on macOS, images, or text from clipboard",
        ),
        ("`/`".into(), "Slash commands"),
        ("`!`".into(), "Run bash command"),
        ("`!!`".into(), "Run bash command (excluded from context)"),
    ]);
    let mut text = format!("**Navigation**\n{navigation}\n**Editing**\n{editing}\n**Other**\n{other}");
    // The keys extensions registered, with what they said they do.
    let extensions = cx
        .session
        .services()
        .extensions()
        .runner()
        .map(|r| super::extension_ui::shortcuts::listed(&r.registrations().extensions, cx.kb))
        .unwrap_or_default();
    if !extensions.is_empty() {
        let listed: Vec<(String, &str)> = extensions
            .iter()
            .map(|(key, what)| (format!("`{}`", super::keys::capitalized(key)), what.as_str()))
            .collect();
        text.push_str(&format!("\n**Extensions**\n{}", rows(&listed)));
    }
    vec![Effect::TitledInfo("Keyboard Shortcuts".into(), text)]
}

fn export(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    let Some(file) = cx.session.with_store(|s| s.session_file().map(Path::to_path_buf)) else {
        return vec![notice("Cannot export an in-memory session", "error")];
    };
    let cwd = cx.session.cwd().to_path_buf();
    let out = (!arg.is_empty()).then(|| resolve(&cwd, arg));
    // pi 1.6 names a page as it was asked for: the default file's bare name, a relative
    // path as typed; a `.jsonl` copy by its full path.
    let typed = (!arg.is_empty() && !arg.starts_with('~') && Path::new(arg).is_relative()).then(|| arg.to_string());
    // Extension tools' renderers draw their calls in the page, as in pi.
    let runner = cx.session.services().extensions().runner();
    vec![blocking_task(async move {
        // The file is written with the first reply: before that there is nothing to export
        // as a page.
        let jsonl = out
            .as_ref()
            .is_some_and(|o| o.extension().is_some_and(|e| e == "jsonl"));
        if !file.exists() && !jsonl {
            return then_notice(
                "Failed to export session: Nothing to export yet - start a conversation first",
                "error",
            );
        }
        let result = match out {
            Some(out) if out.extension().is_some_and(|e| e == "jsonl") => std::fs::copy(&file, &out)
                .map(|_| out.display().to_string())
                .map_err(|e| e.to_string()),
            out => {
                let default = out.is_none();
                pi_coding_agent::extensions::export_render::export_file(runner, file, out, cwd, None)
                    .await
                    .map(|p| match (default, typed) {
                        (true, _) => p
                            .file_name()
                            .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned()),
                        (false, Some(t)) => t,
                        (false, None) => p.display().to_string(),
                    })
                    .map_err(|e| e.to_string())
            }
        };
        match result {
            Ok(p) => then(move |_| vec![Effect::StatusLine(format!("Session exported to: {p}"))]),
            Err(e) => then_notice(format!("Failed to export session: {e}"), "error"),
        }
    })]
}

fn copy(cx: &Ctx<'_>, _: &str) -> Vec<Effect> {
    copy_last(cx)
}

/// The last assistant message to the clipboard, said in the chat.
pub(super) fn copy_last(cx: &Ctx<'_>) -> Vec<Effect> {
    match cx.session.last_assistant_text().filter(|t| !t.trim().is_empty()) {
        None => vec![notice("No agent messages to copy yet.", "error")],
        Some(text) => vec![super::effect::copy_text(text, "Copied last agent message to clipboard")],
    }
}

fn compact(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    // A session too small to compact is the session's own error, as in pi 1.6.
    let instructions = (!arg.is_empty()).then(|| arg.to_string());
    let session = cx.session.clone();
    vec![spawn(async move {
        // compaction_start / compaction_end reach the chat as session events.
        match session.compact(instructions.as_deref()).await {
            // The `[compaction]` panel the session's compaction_end draws says it; a failure
            // is reported by that event too (`Compaction failed: …`).
            Ok(_) | Err(_) => then(|_| Vec::new()),
        }
    })]
}

fn reload(cx: &Ctx<'_>, _: &str) -> Vec<Effect> {
    if cx.ui.busy || cx.session.is_streaming() {
        return vec![notice(
            "Wait for the current response to finish before reloading.",
            "warning",
        )];
    }
    if cx.session.is_compacting() {
        return vec![notice("Wait for compaction to finish before reloading.", "warning")];
    }
    let paths = cx.paths();
    let snapshot = cx.settings_snapshot();
    vec![blocking(move || {
        let (kb, warning) = super::keys::load_keybindings(&paths.keybindings_path());
        let theme = snapshot
            .map(|s| super::theme::load_ui_theme(&paths, &s, None).0)
            .unwrap_or_else(UiTheme::fallback);
        then(move |_| {
            pi_tui::set_keybindings(kb);
            let mut out = vec![Effect::SetKeybindings(pi_tui::keybindings())];
            if let Some(w) = warning {
                out.push(notice(w, "warning"));
            }
            out.push(Effect::SetTheme(std::sync::Arc::new(theme)));
            // Settings, context files, skills, prompt templates and models.json are read
            // again, and the same session file continues on them.
            out.push(Effect::ReplaceSession(Replace::Reload));
            out
        })
    })]
}

fn resolve(cwd: &Path, arg: &str) -> PathBuf {
    let p = pi_coding_agent::config::paths::expand_tilde(arg);
    if p.is_absolute() {
        p
    } else {
        cwd.join(p)
    }
}

pub fn paths_for(session: &pi_coding_agent::session::AgentSession) -> pi_coding_agent::config::Paths {
    pi_coding_agent::config::Paths::new(
        pi_coding_agent::config::paths::agent_dir(),
        session.cwd(),
        pi_coding_agent::config::paths::home_dir(),
    )
}

pub(super) fn copy_to_clipboard(text: &str) -> Result<(), String> {
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

pub fn open_model_picker(cx: &Ctx<'_>, filter: Option<&str>) -> Vec<Effect> {
    let models = cx.session.available_models();
    if models.is_empty() {
        return vec![notice("No models available. Use /login to add a provider.", "warning")];
    }
    let current = cx.session.model();
    let scoped = cx.session.scoped_models().into_iter().map(|s| s.model).collect();
    let default = cx
        .read_settings(|s| match (s.default_provider(), s.default_model()) {
            (Some(p), Some(m)) => Some(format!("{p}/{m}")),
            _ => None,
        })
        .flatten();
    let picker = super::model_picker::ModelPicker::new(
        models,
        scoped,
        current.as_ref(),
        default,
        filter,
        cx.theme.clone(),
        cx.kb.clone(),
    );
    let refresh = picker_refresh(cx.paths(), picker.refresh_slot(), super::model_picker::refresh_error);
    vec![
        Effect::Open(Overlay {
            view: Box::new(picker),
            picker: Picker::Model,
        }),
        refresh,
    ]
}

/// The catalogue refresh of an open model picker, on the blocking pool: its outcome (said by
/// `say`, which is `None` for success) and the models then available go to `slot`, where
/// the picker takes them at its next frame.
pub(super) fn picker_refresh(
    paths: pi_coding_agent::config::Paths,
    slot: super::model_picker::RefreshSlot,
    say: fn(&pi_coding_agent::config::models_store_refresh::PickerRefresh) -> Option<String>,
) -> Effect {
    Effect::Blocking(Box::new(move || {
        let outcome = pi_coding_agent::config::models_store_refresh::refresh_for_picker(&paths);
        let error = say(&outcome);
        Box::new(move |cx: &Ctx<'_>| {
            let models = cx.session.available_models();
            if let Ok(mut s) = slot.lock() {
                *s = Some((models, error));
            }
            Vec::new()
        })
    }))
}

/// A model chosen in the picker: for this session, and with Ctrl+S also as the saved default.
fn model_chosen(cx: &Ctx<'_>, value: &str) -> Vec<Effect> {
    let (save, key) = match value.strip_prefix(super::model_picker::SAVE_PREFIX) {
        Some(key) => (true, key),
        None => (false, value),
    };
    let Some((provider, id)) = key.split_once('/') else {
        return Vec::new();
    };
    let Some(model) = cx.session.find_model(provider, id) else {
        return vec![
            notice(format!("Model not found: {key}"), "error"),
            Effect::RefreshFooter,
        ];
    };
    if !save {
        return vec![set_model(cx.session.clone(), model), Effect::RefreshFooter];
    }
    let session = cx.session.clone();
    let (provider, id) = (provider.to_string(), id.to_string());
    vec![
        Effect::Settings(Box::new({
            let (provider, id) = (provider.clone(), id.clone());
            move |s| s.set_default_model_and_provider(&provider, &id)
        })),
        blocking_task(async move {
            match session.set_model(model).await {
                Ok(()) => then(move |_| {
                    vec![
                        Effect::StatusLine(format!("Default model: {provider}/{id}")),
                        Effect::RefreshFooter,
                        Effect::CheckSubscription,
                    ]
                }),
                Err(e) => then_notice(e.to_string(), "error"),
            }
        }),
    ]
}

/// The resume list: the session files of this folder and of every project are read on the
/// blocking pool, then the picker opens.
fn open_resume(cx: &Ctx<'_>) -> Vec<Effect> {
    let dir = cx.session.with_store(|s| s.session_dir().map(Path::to_path_buf));
    let Some(dir) = dir else {
        return vec![notice("No saved sessions (sessions are not persisted)", "warning")];
    };
    let current = cx.session.with_store(|s| s.session_file().map(Path::to_path_buf));
    vec![blocking(move || {
        let here = pi_session::list_sessions(&dir);
        // Per-project folders sit under one root; a custom session folder is its own root.
        let per_project = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("--"));
        let root = if per_project {
            dir.parent().map_or(dir.clone(), Path::to_path_buf)
        } else {
            dir.clone()
        };
        let all = pi_session::list_all(&root);
        let all = if all.is_empty() { here.clone() } else { all };
        then(move |cx| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            let session = cx.session.clone();
            let picker = super::session_picker::SessionPicker::new(here, all, current, cx.theme.clone(), now)
                .with_current_rename(Box::new(move |name| {
                    let session = session.clone();
                    tokio::spawn(async move {
                        let _ = session.set_session_name(&name).await;
                    });
                }));
            vec![Effect::Open(Overlay {
                view: Box::new(picker),
                picker: Picker::Custom(Box::new(|cx, value| match value {
                    Some(path) => resume_chosen(cx, PathBuf::from(path)),
                    None => Vec::new(),
                })),
            })]
        })
    })]
}

/// The folder a session file's header records.
fn recorded_cwd(path: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(file).read_line(&mut first).ok()?;
    let header: serde_json::Value = serde_json::from_str(first.trim()).ok()?;
    header.get("cwd")?.as_str().map(str::to_string)
}

/// A session chosen in `/resume`: switched to, unless the folder it was recorded in is gone;
/// then, as pi 1.6, the choice of continuing here (this time), forking here, or not.
fn resume_chosen(cx: &Ctx<'_>, path: PathBuf) -> Vec<Effect> {
    switch_or_ask(cx, path, "Resumed session".into(), None, "Resume cancelled")
}

/// Switch to `path` with `notice`, unless the folder it was recorded in is gone: then ask
/// whether to continue here (`continued` is said then, else where it runs) or fork here;
/// `cancelled` is said when neither.
fn switch_or_ask(
    cx: &Ctx<'_>,
    path: PathBuf,
    notice: String,
    continued: Option<String>,
    cancelled: &'static str,
) -> Vec<Effect> {
    let here = cx.session.cwd().display().to_string();
    let gone = recorded_cwd(&path).filter(|c| *c != here && !Path::new(c).is_dir());
    let Some(gone) = gone else {
        return vec![Effect::ReplaceSession(Replace::Switch { path, notice })];
    };
    let items = super::missing_cwd::choices(&here);
    let title = super::missing_cwd::title(&gone);
    let dialog = super::dialogs::Dialog::selector(title.clone(), items, cx.theme.clone());
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        // pi 1.6 reports this question, with its whole text, while it waits.
        picker: Picker::Blocking {
            kind: "question",
            title,
            on_result: Box::new(move |_, value| match value.as_deref() {
                Some("continue") => vec![Effect::ReplaceSession(Replace::SwitchHere {
                    path,
                    notice: continued,
                })],
                Some("fork") => vec![Effect::ReplaceSession(Replace::ForkHere(path))],
                _ => vec![Effect::StatusLine(cancelled.into())],
            }),
        },
    })]
}

/// A selector's choice.
pub fn picked(cx: &Ctx<'_>, picker: Picker, value: String) -> Vec<Effect> {
    match picker {
        Picker::Model => model_chosen(cx, &value),
        Picker::Fork => vec![Effect::ReplaceSession(Replace::Fork(value))],
        Picker::Settings | Picker::ScopedModels => Vec::new(),
        Picker::LoginMethod(only) => super::login::method_chosen(cx, only, &value),
        Picker::LoginProvider { oauth, options } => super::login::provider_chosen(cx, oauth, &options, &value),
        Picker::LoginKey { provider, .. } => super::login::key_entered(cx, provider, &value),
        // A sign-in screen closes with its flow's end, not with a value.
        Picker::LoginFlow { .. } => Vec::new(),
        Picker::Logout(options) => super::login::logout_chosen(cx, &options, &value),
        Picker::Tree => super::tree_nav::chosen(cx, value),
        Picker::TreeSummary(target) => super::tree_nav::summary_chosen(cx, target, &value),
        Picker::Custom(on_result) | Picker::Asking { on_result, .. } | Picker::Blocking { on_result, .. } => {
            on_result(cx, Some(value))
        }
    }
}

/// A selector was closed without a choice.
pub fn cancelled(cx: &Ctx<'_>, picker: Picker) -> Vec<Effect> {
    match picker {
        Picker::TreeSummary(_) => super::tree_nav::cancelled(cx, picker),
        Picker::Custom(on_result) | Picker::Asking { on_result, .. } | Picker::Blocking { on_result, .. } => {
            on_result(cx, None)
        }
        Picker::LoginProvider { oauth, .. } => super::login::list_cancelled(cx, oauth),
        Picker::LoginKey { back, .. } | Picker::LoginFlow { back, .. } => super::login::flow_cancelled(cx, back),
        _ => Vec::new(),
    }
}
