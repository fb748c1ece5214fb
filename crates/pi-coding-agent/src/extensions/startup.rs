//! Starting the extension runner once per pi process (discovery, the host, load errors as pi
//! 1.6 reports them), joining it to each session, and stopping it at exit.

use std::path::Path;
use std::sync::Arc;

use pi_extensions::{
    discover, extension_tools, DiscoveryInput, ExtensionRunner, Mode, RunnerConfig, SettingsEntry, StateUpdate,
};
use serde_json::{json, Value};

use super::bridge::ExtensionBridge;
use super::host::HostBridge;
use super::ExtensionSlot;
use crate::cli::{AppMode, Args};
use crate::config::paths::Paths;
use crate::packages::source::PackageSpec;
use crate::session::agent_session::lock;
use crate::session::AgentSession;

/// What the host mirrors of `session` for the synchronous getters (`ctx.cwd`, `ctx.model`,
/// `pi.getActiveTools()`, ...).
pub fn session_state(session: &AgentSession, mode: Option<Mode>) -> StateUpdate {
    let registry = session.tool_registry();
    let all_tools: Vec<Value> = registry
        .entries()
        .iter()
        .map(|e| {
            json!({
                "name": e.tool.name(),
                "label": e.tool.label(),
                "description": e.tool.description(),
                "parameters": e.tool.parameters(),
            })
        })
        .collect();
    let (session_id, session_file) = session.with_store(|s| {
        (
            s.session_id().to_string(),
            s.session_file().map(|p| p.display().to_string()),
        )
    });
    StateUpdate {
        cwd: Some(session.cwd().to_path_buf()),
        mode,
        has_ui: mode.map(Mode::has_ui),
        model: Some(
            session
                .model()
                .and_then(|m| serde_json::to_value(m).ok())
                .unwrap_or(Value::Null),
        ),
        thinking_level: Some(session.thinking_level().to_string()),
        idle: Some(!session.is_streaming()),
        active_tools: Some(registry.active_names()),
        all_tools: Some(all_tools),
        session_id: Some(session_id),
        session_file,
        context_usage: Some(context_usage(session)),
        ..model_state(session)
    }
}

/// What `ctx.getContextUsage()` returns: `{tokens, contextWindow, percent}`, or `null`
/// (undefined in the host) without a model or a context window.
pub fn context_usage(session: &AgentSession) -> Value {
    session
        .context_usage()
        .and_then(|u| serde_json::to_value(u).ok())
        .unwrap_or(Value::Null)
}

/// What `ctx.modelRegistry` reads synchronously: the models that can be used now (extension
/// providers' included), each provider's auth status, and the providers logged in with OAuth.
/// (Every model known, for `getAll`, goes in [`push_all_models`].)
pub fn model_state(session: &AgentSession) -> StateUpdate {
    let registry = lock(session.registry());
    let json = |models: &[pi_ai::Model]| -> Vec<Value> {
        models.iter().filter_map(|m| serde_json::to_value(m).ok()).collect()
    };
    let all = registry.all();
    let mut providers: Vec<&str> = all.iter().map(|m| m.provider.as_str()).collect();
    providers.sort_unstable();
    providers.dedup();
    let oauth = providers
        .iter()
        .filter(|p| registry.provider_uses_oauth(p))
        .map(|p| p.to_string())
        .collect::<Vec<_>>();
    let auth: serde_json::Map<String, Value> = providers
        .iter()
        .map(|p| (p.to_string(), registry.auth_status(p)))
        .collect();
    StateUpdate {
        models: Some(json(&registry.available())),
        provider_auth: Some(Value::Object(auth)),
        oauth_providers: Some(oauth),
        ..StateUpdate::default()
    }
}

/// Send the host every model the registry knows (`ctx.modelRegistry.getAll()`). The catalogue
/// is large and most extensions never ask, so it goes as one JSON text the host parses only
/// when `getAll` (or a lookup over every model) is first called.
pub fn push_all_models(slot: &Arc<ExtensionSlot>, session: &AgentSession) {
    let Some(runner) = slot.runner() else { return };
    let json = {
        let registry = lock(session.registry());
        serde_json::to_string(registry.all()).unwrap_or_else(|_| "[]".to_string())
    };
    // Any field may change (a models.json edit renames a model or changes its window), so the
    // whole text tells whether the host has it already.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&json, &mut hasher);
    if !slot.note_all_models(std::hash::Hasher::finish(&hasher)) {
        return;
    }
    // A host that is gone is reported at the next event.
    let _ = runner.push_state(&StateUpdate {
        all_models_json: Some(json),
        ..StateUpdate::default()
    });
}

/// When the model registry changed since the host's model view was last brought up to date
/// (models.json read again, a login or logout, providers registered): send every model again
/// (when the list changed) and return what `ctx.modelRegistry` reads synchronously, for the
/// state update that goes before the next handler runs.
pub fn models_if_changed(slot: &Arc<ExtensionSlot>, session: &AgentSession) -> Option<StateUpdate> {
    let revision = lock(session.registry()).revision();
    if !slot.note_models_revision(revision) {
        return None;
    }
    push_all_models(slot, session);
    Some(model_state(session))
}

/// pi's own providers that pi 1.6 registers through its built-in extensions (`llama.cpp`),
/// for `ctx.modelRegistry.getRegisteredProviderIds()`.
pub fn builtin_providers(args: &Args, session: &AgentSession) -> Vec<String> {
    if super::builtin::enabled(args, &lock(session.settings()), super::builtin::LLAMA_CPP) {
        vec!["llama.cpp".to_string()]
    } else {
        Vec::new()
    }
}

/// Join the loaded extensions to `session`: their tools into its registry, the prompt
/// pipeline's hooks, and the host's state mirror. Nothing happens when none are loaded.
pub fn attach(session: &AgentSession, slot: &Arc<ExtensionSlot>) {
    let Some(runner) = slot.runner() else { return };
    let registry = session.tool_registry();
    for (tool, meta) in extension_tools(&runner) {
        registry.register(tool, meta);
    }
    session.set_extensions(Arc::new(ExtensionBridge::new(Arc::clone(slot))));
    slot.set_session(session);
    // A host that is gone is reported at the next event.
    let _ = runner.push_state(&session_state(session, None));
    push_all_models(slot, session);
}

/// What discovery needs: the command line, the settings in force and whether the project's
/// `.pi/extensions/` may load.
pub(super) fn discovery_input(
    args: &Args,
    settings: &crate::config::settings::SettingsManager,
    paths: &Paths,
    project_trusted: bool,
) -> DiscoveryInput {
    // Each scope's `extensions` against its own folder, the project's first, as pi 1.6
    // resolves them: a project entry is relative to the project's `.pi`, a user entry to the
    // agent folder, and both scopes' entries load (the merged settings would keep only one).
    let scope_entries = |map: &serde_json::Map<String, Value>, base_dir: &Path| -> Vec<SettingsEntry> {
        map.get("extensions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|value| SettingsEntry {
                value: value.to_string(),
                base_dir: base_dir.to_path_buf(),
            })
            .collect()
    };
    let mut settings_entries = scope_entries(settings.project_settings(), &paths.cwd.join(".pi"));
    settings_entries.extend(scope_entries(settings.global_settings(), &paths.agent_dir));
    // `-e git:…` / `-e npm:…` name packages (installed for this run while resources loaded);
    // their extensions come from the package, in the command line's order among the other
    // `-e` extensions, as pi 1.6 loads them.
    let cli_paths: Vec<String> = args
        .extensions
        .iter()
        .filter(|s| !super::builtin::is_builtin(s))
        .flat_map(|source| match PackageSpec::parse(source) {
            PackageSpec::Local(_) => vec![source.clone()],
            _ => crate::packages::temporary_package_resources(paths, settings, std::slice::from_ref(source))
                .extensions
                .into_iter()
                .map(|(path, _)| path.display().to_string())
                .collect(),
        })
        .collect();
    let package_paths = crate::packages::package_resources(paths, settings, false)
        .extensions
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    DiscoveryInput {
        cwd: paths.cwd.clone(),
        agent_dir: paths.agent_dir.clone(),
        cli_paths,
        package_paths,
        settings_entries,
        // `.pi/extensions/` loads only for a trusted project (`--approve`, a `project_trust`
        // handler, a saved decision, or `defaultProjectTrust`), as the project's other files.
        project_trusted,
        no_extensions: args.no_extensions,
    }
}

/// Discover and load the extensions for this process and join them to `session`. `Err`
/// carries pi's startup error lines (each printed after `Error: `); they are fatal, as in pi
/// 1.6. With nothing configured no Node process is started.
///
/// In the terminal UI the extensions load before the screen starts (a load error is fatal
/// there too); the UI takes over their dialogs and errors when it starts
/// (`ExtensionSlot::set_ui`).
pub async fn start(args: &Args, session: &AgentSession, mode: AppMode) -> Result<(), Vec<String>> {
    start_with(args, session, mode, true).await
}

/// `--list-models`: the extensions load (their factories run) and the providers they register
/// join the model registry, but no session starts (no `session_start`), as in pi 1.6. Returns
/// the load errors, which pi prints without failing; the host is stopped by [`shutdown`].
pub async fn load_for_listing(args: &Args, session: &AgentSession, mode: AppMode) -> Vec<String> {
    match start_with(args, session, mode, false).await {
        Ok(()) => Vec::new(),
        Err(errors) => errors,
    }
}

async fn start_with(args: &Args, session: &AgentSession, mode: AppMode, bind_session: bool) -> Result<(), Vec<String>> {
    let mode = match mode {
        AppMode::Print => Mode::Print,
        AppMode::Json => Mode::Json,
        AppMode::Rpc => Mode::Rpc,
        AppMode::Interactive => Mode::Tui,
    };
    let slot = Arc::clone(session.services().extensions());
    let mcp_on = crate::mcp::enabled_by(args, &lock(session.settings()));
    slot.set_mcp_connects(mcp_on);
    let paths = Paths::for_cwd(session.cwd());
    let project_trusted = session.services().project_trusted();
    let found = discover(&discovery_input(
        args,
        &lock(session.settings()),
        &paths,
        project_trusted,
    ));
    let mut errors: Vec<String> = super::builtin::unknown_errors(args);
    errors.extend(found.errors.iter().map(ToString::to_string));
    // A pre-trust pass loaded the user's extensions already: the final set joins them.
    if let Some(runner) = slot.take_pre_trust() {
        slot.set_runner(Some(Arc::clone(&runner)));
        let builtin = StateUpdate {
            builtin_providers: Some(builtin_providers(args, session)),
            ..StateUpdate::default()
        };
        // A host that is gone is reported when the final list loads.
        let _ = runner.push_state(&builtin);
        return finish_start(session, &slot, runner, found.sources, errors, mode, &paths).await;
    }
    if found.sources.is_empty() {
        return if errors.is_empty() { Ok(()) } else { Err(errors) };
    }
    let mut config = RunnerConfig::new(
        env!("CARGO_PKG_VERSION"),
        paths.agent_dir.clone(),
        session.cwd(),
        found.sources,
    );
    config.mode = mode;
    config.project_trusted = session.services().project_trusted();
    let mut state = session_state(session, Some(mode));
    state.builtin_providers = Some(builtin_providers(args, session));
    // `ctx.ui.theme` has the UI theme's colours from the first event on, in every mode.
    state.theme = Some(theme_for(&paths, session, mode));
    config.initial_state = Some(state);
    // A host of another language in place of the Node one (docs/extension-protocol.md).
    config.host_program = std::env::var("PI_EXTENSION_HOST")
        .ok()
        .and_then(|v| pi_extensions::HostProgram::parse(&v));
    let tools = {
        let settings = lock(session.settings());
        pi_tools::ToolsOptions {
            shell_path: settings.shell_path().map(std::path::PathBuf::from),
            command_prefix: settings.shell_command_prefix().map(str::to_string),
            bin_dir: Some(paths.bin_dir()),
            ..Default::default()
        }
    };
    if matches!(mode, Mode::Tui | Mode::Rpc) {
        // What extensions show before the terminal UI or the RPC server is up
        // (`session_start` handlers) waits for it.
        slot.set_ui(Arc::new(super::early_ui::EarlyUi::default()));
    }
    let handler = HostBridge::spawn(&slot, session.cwd().to_path_buf(), tools, mode);
    let runner = match ExtensionRunner::start(config, handler).await {
        Ok(Some(runner)) => Arc::new(runner),
        Ok(None) => return Ok(()),
        Err(e) => {
            errors.push(e.to_string());
            return Err(errors);
        }
    };
    errors.extend(runner.registrations().errors.iter().map(ToString::to_string));
    slot.set_runner(Some(Arc::clone(&runner)));
    if !bind_session {
        super::providers::apply(&slot, session).await;
        return if errors.is_empty() { Ok(()) } else { Err(errors) };
    }
    bind(session, &slot, errors).await
}

/// The theme `ctx.ui.theme` colours with. Outside the terminal UI pi 1.6 still colours with
/// its theme (`fg`, `bg`), while text styles (`bold`, `italic`, ...) stay plain unless stdout
/// is a terminal, as its text-style library decides.
fn theme_for(paths: &Paths, session: &AgentSession, mode: Mode) -> serde_json::Value {
    let mut theme = crate::extension_theme::startup_theme(paths, session);
    if mode != Mode::Tui {
        use std::io::IsTerminal;
        theme["textStyles"] = serde_json::Value::Bool(std::io::stdout().is_terminal());
        // A faint token's colour is its colour alone (the host adds the faint SGR), the
        // terminal's default when it has none, as pi 1.6 writes it.
        let dim: Vec<String> = theme["dim"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect();
        for token in dim {
            if let Some(open) = theme["fg"][&token].as_str() {
                let colour = open.replace("\x1b[2m", "");
                theme["fg"][&token] = json!(if colour.is_empty() {
                    "\x1b[39m".to_string()
                } else {
                    colour
                });
            }
        }
    }
    theme
}

/// Complete the pre-trust pass's runner with the final list (the project's extensions when it
/// is trusted), give it the session's state, and bind it.
async fn finish_start(
    session: &AgentSession,
    slot: &Arc<ExtensionSlot>,
    runner: Arc<ExtensionRunner>,
    sources: Vec<pi_extensions::ExtensionSource>,
    mut errors: Vec<String>,
    mode: Mode,
    paths: &Paths,
) -> Result<(), Vec<String>> {
    let mut state = session_state(session, Some(mode));
    state.project_trusted = Some(session.services().project_trusted());
    state.theme = Some(theme_for(paths, session, mode));
    if let Err(e) = runner.push_state(&state) {
        errors.push(e.to_string());
        return Err(errors);
    }
    match runner.extend(sources).await {
        Ok(registrations) => errors.extend(registrations.errors.iter().map(ToString::to_string)),
        Err(e) => {
            errors.push(e.to_string());
            return Err(errors);
        }
    }
    bind(session, slot, errors).await
}

/// Join the runner to `session` and start it (`session_start`, `resources_discover`); load
/// errors are fatal, as in pi 1.6.
async fn bind(session: &AgentSession, slot: &Arc<ExtensionSlot>, mut errors: Vec<String>) -> Result<(), Vec<String>> {
    let Some(runner) = slot.runner() else { return Ok(()) };
    attach(session, slot);
    errors.extend(super::mcp_servers::invalid_servers(&runner.registrations()));
    if !errors.is_empty() {
        return Err(errors);
    }
    // Registered providers are in the model registry before the CLI's model is settled.
    super::providers::apply(slot, session).await;
    // Handlers read a resumed session's entries (the first event would send them anyway).
    session.extensions().sync_mirror();
    let emitted = runner.emit("session_start", json!({ "reason": "startup" })).await;
    slot.settle("session_start", emitted.map(|errors| ((), errors))).await;
    // pi 1.6's bind: after `session_start`, the servers registered so far are taken up.
    let servers = match runner.refresh_registrations().await {
        Ok(registrations) => registrations.mcp_servers.clone(),
        Err(_) => runner.registrations().mcp_servers.clone(),
    };
    super::mcp_servers::take_up(slot, session, &servers).await;
    super::lifecycle::discover_resources(slot, session, false).await;
    Ok(())
}

/// pi's dispose at exit: `session_shutdown` (reason `quit`), then the host stops.
pub async fn shutdown(slot: &ExtensionSlot) {
    let Some(runner) = slot.runner() else { return };
    if runner.is_running() {
        let emitted = runner.emit("session_shutdown", json!({ "reason": "quit" })).await;
        slot.settle("session_shutdown", emitted.map(|errors| ((), errors)))
            .await;
    }
    runner.shutdown().await;
    slot.set_runner(None);
}

/// Stop the host without a session ending (nothing started one: `--list-models`).
pub async fn stop(slot: &ExtensionSlot) {
    if let Some(runner) = slot.runner() {
        runner.shutdown().await;
        slot.set_runner(None);
    }
}

/// pi 1.6's fatal load report: each line as an error, then how to start without extensions.
pub fn print_load_errors(errors: &[String], mut error: impl FnMut(&str)) {
    for line in errors {
        error(line);
    }
    eprintln!("Hint: Start without extensions using \"pi -ne\".");
}

/// pi 1.6's reading of the long flags the CLI did not know: those an extension registered get
/// their values (a boolean flag is `true`; a string flag takes the value after it), sent to the
/// host for `pi.getFlag`. The error lines for the rest, and for string flags without a value.
pub async fn apply_extension_flags(slot: &ExtensionSlot, unknown: &[(String, Option<String>)]) -> Vec<String> {
    if unknown.is_empty() {
        return Vec::new();
    }
    let runner = slot.runner();
    let registrations = runner.as_ref().map(|r| r.registrations());
    let mut values = std::collections::BTreeMap::new();
    let mut errors = Vec::new();
    let mut unclaimed = Vec::new();
    for (name, value) in unknown {
        let flag = registrations.as_ref().and_then(|r| {
            r.flags()
                .into_iter()
                .find(|(_, f)| &f.name == name)
                .map(|(_, f)| f.flag_type)
        });
        match (flag, value) {
            (None, _) => unclaimed.push(format!("--{name}")),
            (Some(pi_extensions::FlagType::Boolean), _) => {
                values.insert(name.clone(), Value::Bool(true));
            }
            (Some(pi_extensions::FlagType::String), Some(v)) => {
                values.insert(name.clone(), Value::String(v.clone()));
            }
            (Some(pi_extensions::FlagType::String), None) => {
                errors.push(format!("Extension flag \"--{name}\" requires a value"));
            }
        }
    }
    if let (Some(runner), false) = (&runner, values.is_empty()) {
        if let Err(error) = runner.set_flags(&values).await {
            slot.host_failed("flags", &error).await;
        }
    }
    match unclaimed.as_slice() {
        [] => {}
        [one] => errors.push(format!("Unknown option: {one}")),
        many => errors.push(format!("Unknown options: {}", many.join(", "))),
    }
    errors
}
