//! The `pi` command from start to exit code: pi 1.6's order of checks, then the chosen mode.

use std::io::{IsTerminal, Read};
use std::path::Path;

use crate::cli::console::Console;
use crate::cli::file_args::process_file_args;
use crate::cli::initial_message::build_initial_prompts;
use crate::cli::list_models::list_models_text;
use crate::cli::{self, AppMode, Severity};
use crate::config::paths::DocsPaths;
use crate::modes::{self, MissingCwdChoice, PromptQueue};
use crate::runtime::{build_runtime_on, StartupError};

fn no_models_message() -> String {
    let docs = DocsPaths::installed().docs;
    format!(
        "No models available. Use /login to log into a provider via OAuth or API key. See:\n  {}\n  {}",
        docs.join("providers.md").display(),
        docs.join("models.md").display()
    )
}

/// Read piped stdin (trimmed); `None` when it is a terminal or empty.
fn read_piped_stdin() -> Option<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return None;
    }
    let mut text = String::new();
    stdin.lock().read_to_string(&mut text).ok()?;
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

/// The session `pi -r` should open in print or JSON mode, chosen on the terminal; `Err` with
/// the exit code when nothing was chosen (no terminal, no sessions, or cancelled: pi exits 0).
fn pick_session_to_resume(args: &cli::Args, cwd: &std::path::Path) -> Result<std::path::PathBuf, i32> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(0);
    }
    let paths = crate::config::paths::Paths::for_cwd(cwd);
    let settings = crate::config::settings::SettingsManager::load(&paths);
    let dir = crate::config::paths::resolve_session_dir(args.session_dir.as_deref(), settings.session_dir(), &paths);
    match modes::resume_picker::pick_session(&dir) {
        Ok(modes::resume_picker::Choice::Session(path)) => Ok(path),
        Ok(_) => Err(0),
        Err(e) => {
            eprintln!("Error: could not start the session picker: {e}");
            Err(1)
        }
    }
}

/// The working directory, or the exit code when it is gone.
fn current_dir(color: bool) -> Result<std::path::PathBuf, i32> {
    std::env::current_dir().map_err(|e| {
        let console = Console {
            stdout_taken: false,
            color,
        };
        if e.kind() == std::io::ErrorKind::NotFound {
            console.error(
                "The current working directory no longer exists. Change to an existing directory and try again.",
            );
        } else {
            console.error(&format!("The current working directory is not accessible: {e}"));
        }
        1
    })
}

/// Run pi with `argv` (without the program name) and `ui` as its terminal face; returns the
/// exit code.
pub fn run(argv: &[String], ui: &dyn modes::TerminalUi) -> i32 {
    let color = std::io::stderr().is_terminal();
    // `--offline` applies to the subcommands too; as in 1.6, a `PI_OFFLINE` of `1`, `true` or
    // `yes` is the same and becomes `1`, which children (bash) see.
    if argv.iter().any(|a| a == "--offline")
        || std::env::var_os("PI_OFFLINE").is_some_and(|v| crate::config::offline::is_truthy(&v))
    {
        std::env::set_var("PI_OFFLINE", "1");
        std::env::set_var("PI_SKIP_VERSION_CHECK", "1");
    }
    if let Some(code) = crate::subcommands::auth::run(argv) {
        return code;
    }
    let cwd = match current_dir(color) {
        Ok(cwd) => cwd,
        Err(code) => return code,
    };
    if let Some(code) = crate::packages::cli::run(argv) {
        return code;
    }
    if let Some(code) = crate::subcommands::mcp::run(argv, &crate::config::paths::Paths::for_cwd(&cwd)) {
        return code;
    }
    if argv.first().is_some_and(|a| a == "config") {
        return crate::packages::config_cmd::run(crate::config::paths::Paths::for_cwd(cwd));
    }
    let args = cli::parse_args(argv);
    if args.offline {
        // Children (bash) see it too, as with pi.
        std::env::set_var("PI_OFFLINE", "1");
        std::env::set_var("PI_SKIP_VERSION_CHECK", "1");
    }
    std::env::set_var("PI_CODING_AGENT", "true");
    // pi 1.6 names itself to the tools and scripts it runs.
    std::env::set_var("AI_AGENT", "pi");

    let mut console = Console {
        stdout_taken: false,
        color,
    };
    for d in &args.diagnostics {
        match d.severity {
            Severity::Error => console.error(&d.message),
            Severity::Warning => console.warning(&d.message),
        }
    }
    if args.has_errors() {
        return 1;
    }
    if args.version {
        console.out(env!("CARGO_PKG_VERSION"));
        return 0;
    }
    if let Some(input) = &args.export {
        let output = args.messages.first().map(Path::new);
        // Relative to the working directory, so a missing file is named in full.
        let input = cwd.join(input);
        return match crate::export::export_file(&input, output, &cwd) {
            Ok(path) => {
                console.out(&format!("Exported to: {}", path.display()));
                0
            }
            Err(e) => {
                console.error(&e.to_string());
                1
            }
        };
    }
    let mode = AppMode::resolve(&args, std::io::stdin().is_terminal(), std::io::stdout().is_terminal());
    console.stdout_taken = !mode.is_interactive() && !cli::is_plain_metadata_command(&args);
    if mode == AppMode::Rpc && !args.file_args.is_empty() {
        console.error("@file arguments are not supported in RPC mode");
        return 1;
    }
    if let Some(e) = cli::session_flags::fork_error(&args) {
        console.error(&e);
        return 1;
    }
    if let Some(e) = cli::session_flags::session_id_error(&args) {
        console.error(&e);
        return 1;
    }

    // `-r` outside the interactive mode: the session is chosen before anything starts.
    let mut args = args;
    args.cannot_prompt = !mode.is_interactive();
    // Outside the terminal UI one thread drives the session: the provider stream, the agent
    // loop and the output writer hand events to each other without crossing threads; blocking
    // work (files, processes, credentials) still goes to the blocking pool. The terminal UI
    // reads input and redraws on tasks of its own, so it gets worker threads.
    let runtime_builder = if mode.is_interactive() {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let Ok(rt) = { runtime_builder }.enable_all().build() else {
        console.error("Could not start the async runtime");
        return 1;
    };
    let services = crate::services::Services::load(
        &crate::config::paths::Paths::for_cwd(&cwd),
        crate::services::Services::resource_options_from(&args),
    );
    // An undecided project: the extensions from outside it may decide (`project_trust`), else
    // the terminal UI asks before anything of it is loaded.
    let mut trust_warnings = Vec::new();
    if !args.help && args.list_models.is_none() {
        let pre = rt.block_on(crate::extensions::pre_trust::run(
            &args,
            &services,
            &crate::config::paths::Paths::for_cwd(&cwd),
            mode,
        ));
        if !mode.is_interactive() {
            for n in &pre.notices {
                console.notice(&n.message, &n.kind);
            }
            for w in &pre.warnings {
                console.warning(w);
            }
        } else {
            trust_warnings = pre.warnings;
        }
        if mode.is_interactive() && pre.decision.is_none() && args.project_trust_override.is_none() {
            if let Some(trusted) = ui.ask_project_trust(&cwd) {
                services.remember_trust(&cwd, trusted);
            }
        }
    }
    if args.resume && !mode.is_interactive() && !args.help && args.list_models.is_none() {
        match pick_session_to_resume(&args, &cwd) {
            Ok(path) => {
                args.resume = false;
                args.session = Some(path.to_string_lossy().into_owned());
            }
            Err(code) => {
                console.info("No session selected");
                return code;
            }
        }
    }

    let mut built = build_runtime_on(&args, &cwd, &services);
    // pi 1.6 asks in interactive mode when the session's folder is gone: run it here this
    // time, fork it here, or start nothing.
    if let Err(StartupError::MissingCwd { session_cwd, file, .. }) = &built {
        let ask = mode.is_interactive() && !args.help && args.list_models.is_none();
        match ask.then(|| ui.ask_missing_cwd(session_cwd, &cwd)).flatten() {
            Some(MissingCwdChoice::Continue) => {
                args.session = Some(file.to_string_lossy().into_owned());
                args.session_here = true;
                built = build_runtime_on(&args, &cwd, &services);
            }
            Some(MissingCwdChoice::Fork) => {
                args.session = None;
                args.fork = Some(file.to_string_lossy().into_owned());
                built = build_runtime_on(&args, &cwd, &services);
            }
            Some(MissingCwdChoice::Cancel) => return 0,
            None => {}
        }
    }
    let runtime = match built {
        Ok(mut r) => {
            r.warnings.splice(0..0, trust_warnings);
            r
        }
        Err(e @ (StartupError::Failed(_) | StartupError::Cancelled | StartupError::MissingCwd { .. })) => {
            console.error(&e.to_string());
            return 1;
        }
        Err(StartupError::Bare(e)) => {
            console.bare_error(&e);
            return 1;
        }
    };
    // The terminal UI shows startup warnings in the chat instead.
    if !mode.is_interactive() || args.help || args.list_models.is_some() {
        for w in &runtime.warnings {
            console.warning(w);
        }
    }
    let mut has_model = runtime.session.model().is_some();
    // `--help` loads no extensions and `--list-models` needs no model: a model that matched
    // nothing is an error at once.
    if let (Some(e), true) = (&runtime.deferred_model_error, args.help || args.list_models.is_some()) {
        console.error(e);
        return 1;
    }
    if args.help {
        if !has_model {
            console.warning(&no_models_message());
        }
        console.info(cli::help::help_text().trim_end());
        return 0;
    }
    if let Some(search) = &args.list_models {
        // pi 1.6 runs the factories first so extension providers are listed; their load
        // errors are printed and the listing goes on (exit 0).
        rt.block_on(async {
            let errors = crate::extensions::startup::load_for_listing(&args, &runtime.session, mode).await;
            for line in &errors {
                console.error(line);
            }
            crate::extensions::startup::stop(runtime.session.services().extensions()).await;
        });
        let available = runtime
            .session
            .registry()
            .lock()
            .map(|r| r.available())
            .unwrap_or_default();
        if available.is_empty() {
            console.info(&no_models_message());
            return 0;
        }
        match list_models_text(&available, search.as_deref()) {
            Ok(table) | Err(table) => console.info(&table),
        }
        return 0;
    }
    // Errors of the runtime's own checks. Unknown long flags may belong to an extension: they
    // are judged once the extensions are loaded, unless another error stops the start anyway.
    let provider_error = args
        .provider
        .as_deref()
        .filter(|_| args.model.is_none())
        .map(|p| format!("--provider requires --model (for example: --provider {p} --model <pattern>)"));
    let runtime_errors: Vec<String> = match provider_error {
        Some(e) => args
            .unknown_flag_error()
            .map(|d| d.message)
            .into_iter()
            .chain([e])
            .collect(),
        None => Vec::new(),
    };

    let stdin_text = if mode == AppMode::Rpc { None } else { read_piped_stdin() };
    let auto_resize = runtime
        .session
        .settings()
        .lock()
        .map(|s| s.image_auto_resize())
        .unwrap_or(true);
    let files = match process_file_args(&args.file_args, runtime.session.cwd(), auto_resize) {
        Ok(f) => f,
        Err(e) => {
            console.error(&e);
            return 1;
        }
    };
    let initial = build_initial_prompts(&args.messages, &files.text, files.images, stdin_text.as_deref());
    if !runtime_errors.is_empty() {
        for e in &runtime_errors {
            console.error(e);
        }
        return 1;
    }
    let prompts = PromptQueue {
        first: initial.first.map(|t| (t, initial.images)),
        rest: initial.rest,
    };

    let session = runtime.session;
    // The session at exit: the host's, which an extension command may have replaced.
    let mut last = session.clone();
    let code = rt.block_on(async {
        crate::mcp::start(&args, &session);
        if let Err(errors) = crate::extensions::start(&args, &session, mode).await {
            crate::extensions::startup::print_load_errors(&errors, |line| console.error(line));
            return 1;
        }
        let flag_errors =
            crate::extensions::startup::apply_extension_flags(session.services().extensions(), &args.unknown_flags)
                .await;
        if !flag_errors.is_empty() {
            for e in &flag_errors {
                console.error(e);
            }
            crate::extensions::startup::shutdown(session.services().extensions()).await;
            return 1;
        }
        if runtime.deferred_model_error.is_some() {
            // Extension providers are registered now: the CLI's model may be one of theirs.
            let resolved = {
                let registry = crate::session::agent_session::lock(session.registry());
                crate::runtime::resolve_deferred_cli_model(&args, &registry)
            };
            match resolved {
                Ok((model, thinking, warning)) => {
                    if let Some(w) = &warning {
                        console.warning(w);
                    }
                    session.apply_model(model.clone(), true);
                    let level = thinking.unwrap_or_else(|| session.thinking_level());
                    session
                        .set_thinking_level(pi_ai::thinking::clamp_thinking_level(&model, level))
                        .await;
                    has_model = true;
                }
                Err(e) => {
                    console.error(&e);
                    crate::extensions::startup::shutdown(session.services().extensions()).await;
                    return 1;
                }
            }
        }
        if !has_model && args.model.is_none() {
            // pi 1.6 picks its default model after the extensions load: the only usable
            // provider may be one an extension registered.
            let picked = {
                let settings = crate::session::agent_session::lock(session.settings());
                let registry = crate::session::agent_session::lock(session.registry());
                crate::runtime::initial_model_after_extensions(&settings, &registry)
            };
            if let Some((model, level)) = picked {
                session.apply_model(model.clone(), true);
                session
                    .set_thinking_level(pi_ai::thinking::clamp_thinking_level(&model, level))
                    .await;
                has_model = true;
            }
        }
        if !mode.is_interactive() && !has_model {
            console.error(&no_models_message());
            crate::extensions::startup::shutdown(session.services().extensions()).await;
            return 1;
        }
        if matches!(mode, AppMode::Rpc | AppMode::Interactive) {
            // Detached: the process does not wait for it at exit. What it stores reaches the
            // session's registry when it ends.
            let registry = std::sync::Arc::clone(session.registry());
            drop(crate::config::models_store_refresh::refresh_in_background(
                &runtime.paths,
                move || crate::session::agent_session::lock(&registry).refresh(),
            ));
        }
        // Every mode runs on a session host: extension commands replace the session through it.
        let host = std::sync::Arc::new(crate::session_host::SessionHost::new(
            args.clone(),
            cwd.clone(),
            session.clone(),
        ));
        session.services().extensions().set_session_host(&host);
        let code = match mode {
            AppMode::Json => modes::json::run(&host, prompts).await,
            AppMode::Print => modes::print::run(&host, prompts).await,
            AppMode::Rpc => {
                let server = crate::modes::rpc::RpcServer::new(tokio::io::stdout());
                session
                    .services()
                    .extensions()
                    .take_over_ui(std::sync::Arc::new(server.extension_ui()))
                    .await;
                let backend = std::sync::Arc::new(crate::modes::rpc::session_backend::SessionBackend::new(
                    std::sync::Arc::clone(&host),
                    server.output(),
                ));
                match server.run(backend, tokio::io::stdin()).await {
                    Ok(()) => 0,
                    Err(_) => 1,
                }
            }
            AppMode::Interactive => {
                // Without a model pi 1.6 starts anyway and says so in the chat.
                let mut warnings = runtime.warnings.clone();
                if !has_model {
                    warnings.push(no_models_message());
                }
                let options = modes::InteractiveOptions {
                    warnings,
                    verbose: args.verbose,
                    resume_picker: args.resume,
                    tui_mode: args.tui_mode,
                    builtins_off: crate::extensions::builtin::commands_off(&args, &session),
                };
                ui.run(std::sync::Arc::clone(&host), prompts, options).await
            }
        };
        last = host.session();
        crate::extensions::startup::shutdown(session.services().extensions()).await;
        crate::mcp::shutdown(session.services().mcp()).await;
        // The sockets the sessions kept open say goodbye before the process ends.
        pi_ai::providers::openai_codex::close_sessions(None).await;
        code
    });
    if let Some(e) = last.persist_error() {
        console.warning(&format!("The session could not be saved: {e}"));
    }
    // Bash children started by tools must not outlive pi.
    pi_tools::kill_running_process_groups();
    rt.shutdown_timeout(std::time::Duration::from_millis(100));
    // Everything is written and saved; freeing a long history would only delay the exit.
    std::mem::forget(session);
    std::mem::forget(last);
    code
}
