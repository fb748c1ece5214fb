//! Startup: from parsed arguments to a ready AgentSession (settings, session file, models,
//! resources, tools, system prompt), in pi's order. Nothing here prints; problems come back as
//! warnings or a [`StartupError`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent::{Agent, AgentOptions};
use pi_ai::{Model, ThinkingLevel};
use pi_session::SessionManager;

use crate::cli::Args;
use crate::config::model_resolver::{
    self, resolve_cli_model, resolve_model_scope, InitialModelOptions, ScopedModel, DEFAULT_MODEL_PER_PROVIDER,
};
use crate::config::paths::{self, DocsPaths, Paths};
use crate::config::settings::SettingsManager;
use crate::extensions::hooks::ExtensionHooks;
use crate::extensions::provider_events::ExtensionProviderHooks;
use crate::services::Services;
use crate::session::agent_session::lock;
use crate::session::hooks::SessionHooks;
use crate::session::loadout::Loadout;
use crate::session::{AgentSession, AgentSessionParts};
use crate::system_prompt::{build_sections, SystemPromptInput};

/// A startup failure, exit code 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartupError {
    /// Printed as `Error: <message>`.
    #[error("{0}")]
    Failed(String),
    /// Printed as it is: pi words "No session found matching '…'" without the prefix.
    #[error("{0}")]
    Bare(String),
    /// An extension cancelled a session replacement (`session_before_switch` / `_fork`);
    /// the current session goes on unchanged.
    #[error("Cancelled by an extension")]
    Cancelled,
    /// The session to open was recorded in a folder that is gone (interactive mode asks
    /// whether to continue or fork it here; the other modes print this).
    #[error(
        "Stored session working directory does not exist: {}\nSession file: {}\nCurrent working directory: {}",
        session_cwd.display(),
        file.display(),
        cwd.display()
    )]
    MissingCwd {
        session_cwd: PathBuf,
        file: PathBuf,
        cwd: PathBuf,
    },
}

/// What startup produced.
pub struct Runtime {
    pub session: AgentSession,
    pub paths: Paths,
    pub scoped_models: Vec<ScopedModel>,
    /// Printed as `Warning: <text>` (yellow on a terminal).
    pub warnings: Vec<String>,
    /// The CLI's `--model` matched nothing before the extensions loaded: it is resolved again
    /// once their providers are registered ([`resolve_deferred_cli_model`]), and this error is
    /// printed if it still matches nothing. The session meanwhile has the fallback model.
    pub deferred_model_error: Option<String>,
}

/// A new session with the id `--session-id` chose (or a generated one).
fn with_id(mut store: SessionManager, id: Option<&str>) -> SessionManager {
    if let Some(id) = id {
        store.new_session(pi_session::NewSessionOptions {
            id: Some(id.to_string()),
            parent_session: None,
        });
    }
    store
}

/// The session of the current directory whose header id is exactly `id`.
fn find_by_exact_id(session_dir: &Path, id: &str) -> Option<PathBuf> {
    pi_session::list_sessions(session_dir)
        .into_iter()
        .find(|s| s.id == id)
        .map(|s| s.path)
}

/// Open the session store the flags ask for; `warnings` gets what the user should know.
fn open_store(
    args: &Args,
    paths: &Paths,
    session_dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<SessionManager, StartupError> {
    let cwd = paths.cwd.to_string_lossy().to_string();
    let err = |e: pi_session::SessionError| StartupError::Failed(e.to_string());
    // A path is taken as it is: `--session new.jsonl` starts a session file there, as in pi.
    let find = |arg: &str| -> Result<PathBuf, StartupError> {
        if pi_session::looks_like_path(arg) {
            return Ok(paths::resolve_against(&paths.cwd, Path::new(arg)));
        }
        pi_session::find_session(session_dir, &paths.sessions_dir(), arg)
            .map(|found| found.info.path)
            .ok_or_else(|| StartupError::Bare(format!("No session found matching '{arg}'")))
    };
    let session_id = args.session_id.as_deref();
    // `--help` and `--list-models` only look: nothing is written.
    if args.no_session || args.help || args.list_models.is_some() {
        return Ok(with_id(SessionManager::in_memory(&cwd), session_id));
    }
    if let Some(source) = &args.fork {
        if let Some(e) = crate::cli::session_flags::fork_error(args) {
            return Err(StartupError::Failed(e));
        }
        if let Some(id) = session_id {
            if find_by_exact_id(session_dir, id).is_some() {
                return Err(StartupError::Bare(format!("Session already exists with id '{id}'")));
            }
        }
        let arg = source;
        let source = find(arg)?;
        if !source.is_file() {
            return Err(StartupError::Failed(format!(
                "Cannot fork: source session file is empty or invalid: {arg}"
            )));
        }
        return SessionManager::fork_from_as(&source, &cwd, session_dir, session_id.map(str::to_string)).map_err(err);
    }
    if let Some(arg) = &args.session {
        let path = find(arg)?;
        return SessionManager::open_in(&path, Some(session_dir.to_path_buf()), None).map_err(err);
    }
    if args.continue_session {
        return SessionManager::continue_recent(session_dir, &cwd).map_err(err);
    }
    if let Some(id) = session_id {
        if let Some(path) = find_by_exact_id(session_dir, id) {
            return SessionManager::open_in(&path, Some(session_dir.to_path_buf()), None).map_err(err);
        }
        warnings.push(format!(
            "No project session found with id '{id}'; creating a new session with that id."
        ));
    }
    Ok(with_id(SessionManager::create(session_dir, &cwd), session_id))
}

/// The tool names this run enables.
fn tool_names(args: &Args) -> Vec<String> {
    crate::cli::tool_selection::select_tools(
        crate::cli::tool_selection::ToolFlags {
            tools: args.tools.as_deref(),
            exclude: args.exclude_tools.as_deref(),
            no_tools: args.no_tools,
            no_builtin_tools: args.no_builtin_tools,
        },
        &pi_tools::DEFAULT_TOOL_NAMES,
        &pi_tools::ALL_TOOL_NAMES,
    )
}

/// The built-in tools in a fresh registry: the selected ones active in the order given, the
/// other built-ins registered but inactive (so `setActiveTools` and `--tools +x` can reach
/// them); the system prompt is rebuilt from the registry whenever it changes.
fn tool_loadout(
    cwd: &Path,
    selected: &[String],
    options: &pi_tools::ToolsOptions,
    resources: &crate::resources::loader::Resources,
    docs: DocsPaths,
    mcp: Arc<crate::mcp::McpRuntime>,
) -> Loadout {
    let registry = pi_agent::ToolRegistry::new();
    for tool in pi_tools::create_tools(cwd, selected, options) {
        let meta = pi_agent::ToolMeta::of(tool.as_ref(), pi_agent::ToolSource::Builtin);
        registry.register(tool, meta);
    }
    let others: Vec<&str> = pi_tools::ALL_TOOL_NAMES
        .iter()
        .copied()
        .filter(|n| !selected.iter().any(|s| s == n))
        .collect();
    for tool in pi_tools::create_tools(cwd, &others, options) {
        let meta = pi_agent::ToolMeta::of(tool.as_ref(), pi_agent::ToolSource::Builtin).default_active(false);
        registry.register(tool, meta);
    }
    Loadout::new(
        registry,
        Box::new(ResourcePrompt {
            custom: resources.prompt_sources.custom.clone(),
            append: resources.prompt_sources.append.clone(),
            context_files: resources.context_files.clone(),
            resources: resources.clone(),
            cwd: cwd.to_path_buf(),
            docs,
            mcp,
        }),
    )
}

/// The session's system prompt source: the cwd's resources, the docs and the MCP servers.
struct ResourcePrompt {
    custom: Option<String>,
    append: Vec<String>,
    context_files: Vec<crate::resources::context_files::ContextFile>,
    // Read at each build: extensions may add skills after startup (`resources_discover`).
    resources: crate::resources::loader::Resources,
    cwd: PathBuf,
    docs: DocsPaths,
    mcp: Arc<crate::mcp::McpRuntime>,
}

impl crate::session::loadout::PromptSource for ResourcePrompt {
    fn build(
        &self,
        tools: &[crate::system_prompt::ToolPrompt],
        edits: &crate::system_prompt::PromptEdits,
    ) -> crate::system_prompt::PromptSections {
        let mcp_servers = self.mcp.prompt_section(&|name| tools.iter().any(|t| t.name == name));
        // A run's `before_agent_start` handlers may have replaced any input (pi 1.6 builds the
        // prompt from the options object they leave).
        let replaced = &edits.inputs;
        let tools = replaced.tools(tools);
        let custom_prompt = match &replaced.custom_prompt {
            Some(custom) => custom.as_deref(),
            None => self.custom.as_deref(),
        };
        let context_files: Vec<crate::resources::context_files::ContextFile> = match &replaced.context_files {
            Some(files) => files
                .iter()
                .map(|(path, content)| crate::resources::context_files::ContextFile {
                    path: PathBuf::from(path),
                    content: content.clone(),
                })
                .collect(),
            None => self.context_files.clone(),
        };
        let skills = match &replaced.skills {
            Some(skills) => skills.iter().map(prompt_skill).collect(),
            None => self.resources.skills(),
        };
        let cwd = replaced.cwd.as_ref().map_or_else(|| self.cwd.clone(), PathBuf::from);
        build_sections(&SystemPromptInput {
            custom_prompt,
            tools: &tools,
            append: &self.append,
            context_files: &context_files,
            skills: &skills,
            cwd: &cwd,
            docs: &self.docs,
            mcp_servers: mcp_servers.as_deref(),
            edits,
        })
    }

    fn options(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::json;
        let skills: Vec<serde_json::Value> = self
            .resources
            .skills()
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "description": s.description,
                    "filePath": s.file_path,
                    "baseDir": s.base_dir,
                    "disableModelInvocation": s.disable_model_invocation,
                })
            })
            .collect();
        let files: Vec<serde_json::Value> = self
            .context_files
            .iter()
            .map(|f| json!({ "path": f.path, "content": f.content }))
            .collect();
        let mut options = serde_json::Map::new();
        if let Some(custom) = &self.custom {
            options.insert("customPrompt".into(), json!(custom));
        }
        options.insert("appendSystemPrompt".into(), json!(self.append.join("\n\n")));
        options.insert("cwd".into(), json!(self.cwd.to_string_lossy()));
        options.insert("contextFiles".into(), json!(files));
        options.insert("skills".into(), json!(skills));
        options
    }
}

/// A skill an extension listed in `systemPromptOptions.skills`, for the prompt's skills section.
fn prompt_skill(skill: &crate::system_prompt::PromptSkill) -> crate::resources::skills::Skill {
    crate::resources::skills::Skill {
        name: skill.name.clone(),
        description: skill.description.clone(),
        file_path: PathBuf::from(&skill.file_path),
        base_dir: PathBuf::from(&skill.base_dir),
        // The prompt shows no scope; an extension's list has none to give.
        scope: crate::resources::ResourceScope::Path,
        disable_model_invocation: skill.disable_model_invocation,
    }
}

/// Build everything a mode needs. `cwd` is the process's working directory.
pub fn build_runtime(args: &Args, cwd: &Path) -> Result<Runtime, StartupError> {
    let services = Services::load(&Paths::for_cwd(cwd), Services::resource_options_from(args));
    build_runtime_on(args, cwd, &services)
}

/// [`build_runtime`] on services made before (the pre-trust pass uses their extension slot
/// and records its decision in them).
pub fn build_runtime_on(args: &Args, cwd: &Path, services: &Arc<Services>) -> Result<Runtime, StartupError> {
    let startup_paths = Paths::for_cwd(cwd);
    let settings = SettingsManager::load(&startup_paths);
    let session_dir = paths::resolve_session_dir(args.session_dir.as_deref(), settings.session_dir(), &startup_paths);
    let mut warnings = Vec::new();
    let mut store = open_store(args, &startup_paths, &session_dir, &mut warnings)?;
    // `--name` is the session's first entry of this run, before the model and thinking level.
    if let Some(raw) = &args.name {
        let name = crate::cli::session_flags::session_name(raw).map_err(StartupError::Failed)?;
        store
            .append_session_info(&name)
            .map_err(|e| StartupError::Failed(e.to_string()))?;
    }
    let mut runtime = build_session(args, cwd, store, services, true)?;
    warnings.append(&mut runtime.warnings);
    runtime.warnings = warnings;
    Ok(runtime)
}

/// Build the runtime around an already opened session store (new, resumed or forked), on the
/// process's kept services. The CLI's model, thinking and tool options apply again, as in pi.
pub fn build_with_store(
    args: &Args,
    cwd: &Path,
    store: SessionManager,
    services: &Arc<Services>,
) -> Result<Runtime, StartupError> {
    build_session(args, cwd, store, services, false)
}

/// The model `--provider` / `--model` name among the registry's models.
fn cli_model(
    args: &Args,
    registry: &crate::config::model_registry::ModelRegistry,
) -> crate::config::model_resolver::CliModel {
    // Without `--model` there is nothing to resolve; asking for every model would build the
    // whole catalogue for nothing.
    if args.model.is_none() {
        return crate::config::model_resolver::CliModel::default();
    }
    resolve_cli_model(
        args.provider.as_deref(),
        args.model.as_deref(),
        registry.all(),
        DEFAULT_MODEL_PER_PROVIDER,
        &|provider| registry.provider_has_auth(provider),
        args.api_key.is_some(),
        args.thinking,
    )
}

/// The starting model once extension providers are in the registry, for a start that found
/// none before (pi 1.6 picks its default after the extensions load, so an extension's
/// provider may give it): the settings' default, else the first available model.
pub fn initial_model_after_extensions(
    settings: &SettingsManager,
    registry: &crate::config::model_registry::ModelRegistry,
) -> Option<(Model, ThinkingLevel)> {
    let options = InitialModelOptions {
        scoped_models: &[],
        is_continuing: false,
        default_provider: settings.default_provider(),
        default_model_id: settings.default_model(),
        default_thinking_level: settings.default_thinking_level(),
    };
    let (model, level) =
        model_resolver::find_initial_model(&options, registry, &registry.available(), DEFAULT_MODEL_PER_PROVIDER);
    model.map(|m| (m, level))
}

/// The CLI model once extension providers are in the registry: the model, the thinking level
/// a `model:level` pattern gave and the warning to show, or the error to print.
pub fn resolve_deferred_cli_model(
    args: &Args,
    registry: &crate::config::model_registry::ModelRegistry,
) -> Result<(Model, Option<ThinkingLevel>, Option<String>), String> {
    let cli = cli_model(args, registry);
    if let Some(error) = cli.error {
        return Err(error);
    }
    match cli.model {
        Some(model) => Ok((model, args.thinking.or(cli.thinking_level), cli.warning)),
        None => Err("--model matched no model".to_string()),
    }
}

fn build_session(
    args: &Args,
    cwd: &Path,
    store: SessionManager,
    services: &Arc<Services>,
    defer_model_error: bool,
) -> Result<Runtime, StartupError> {
    let mut deferred_model_error = None;
    let mut warnings = Vec::new();
    let startup_paths = Paths::for_cwd(cwd);
    let mut store = store;
    // A resumed session runs in the folder it was recorded in, or here when that is gone and
    // the user said so.
    let recorded = PathBuf::from(store.cwd());
    if args.session_here && recorded != cwd && !recorded.is_dir() {
        store.run_in(&cwd.display().to_string());
    }
    let session_cwd = PathBuf::from(store.cwd());
    if session_cwd != cwd && !session_cwd.is_dir() {
        return Err(StartupError::MissingCwd {
            session_cwd,
            file: store.session_file().map(Path::to_path_buf).unwrap_or_default(),
            cwd: cwd.to_path_buf(),
        });
    }
    let paths = Paths::new(
        startup_paths.agent_dir.clone(),
        session_cwd.clone(),
        startup_paths.home.clone(),
    );
    let (cwd_services, first_load) = services.for_cwd(&paths);
    let settings_arc = Arc::clone(&cwd_services.settings);
    let mut settings = lock(&settings_arc);
    if first_load {
        for e in settings.drain_errors() {
            warnings.push(format!(
                "(startup session lookup, {} settings) {}",
                e.scope.as_str(),
                e.message
            ));
        }
    }

    let registry_arc = Arc::clone(services.registry());
    let mut registry = lock(&registry_arc);
    if let (true, Some(e)) = (first_load, services.registry_error()) {
        warnings.push(format!("errors loading models.json:\n{e}"));
    }

    // Models: the CLI choice, else the session's, else the scope's or the defaults.
    let cli = cli_model(args, &registry);
    if let Some(e) = cli.error {
        // At first startup an extension may still register the model's provider.
        if !defer_model_error || args.api_key.is_some() {
            return Err(StartupError::Failed(e));
        }
        deferred_model_error = Some(e);
    }
    warnings.extend(cli.warning);
    let patterns = args.models.clone().or_else(|| settings.enabled_models());
    let scoped_models = match &patterns {
        Some(p) => {
            let (scoped, scope_warnings) = resolve_model_scope(p, &registry.available());
            warnings.extend(scope_warnings);
            scoped
        }
        None => Vec::new(),
    };
    if let Some(key) = &args.api_key {
        let Some(model) = cli.model.as_ref().or(scoped_models.first().map(|s| &s.model)) else {
            return Err(StartupError::Failed(
                "--api-key requires a model to be specified via --model, --provider/--model, or --models".into(),
            ));
        };
        registry.auth_mut().set_runtime_api_key(&model.provider, key);
    }

    let context = store.build_context();
    let resuming = !context.messages.is_empty() || context.model.is_some();
    let default_level = settings.default_thinking_level();
    let (model, mut thinking): (Option<Model>, ThinkingLevel) = if let Some(m) = cli.model.clone() {
        (Some(m), default_level.unwrap_or(model_resolver::DEFAULT_THINKING_LEVEL))
    } else if let (true, Some(saved)) = (resuming, context.model.as_ref()) {
        let restored = model_resolver::restore_model_from_session(
            &saved.provider,
            &saved.model_id,
            None,
            &*registry,
            &registry.available(),
            DEFAULT_MODEL_PER_PROVIDER,
        );
        warnings.extend(restored.fallback_message);
        (restored.model, context.thinking_level)
    } else {
        let options = InitialModelOptions {
            scoped_models: &scoped_models,
            is_continuing: args.continue_session || args.resume,
            default_provider: settings.default_provider(),
            default_model_id: settings.default_model(),
            default_thinking_level: default_level,
        };
        model_resolver::find_initial_model(&options, &*registry, &registry.available(), DEFAULT_MODEL_PER_PROVIDER)
    };
    if let Some(level) = args.thinking.or(cli.thinking_level) {
        thinking = level;
    }
    // Clamped to the model; without a model there is no thinking (pi 1.6 starts at `off`,
    // which also colours the editor's border).
    thinking = match &model {
        Some(m) => pi_ai::thinking::clamp_thinking_level(m, thinking),
        None => ThinkingLevel::Off,
    };

    let resources = Arc::clone(&cwd_services.resources);
    // Filled by the session once it exists, read by bash when a command starts.
    let session_env = pi_tools::SessionEnv::default();
    let tools_options = pi_tools::ToolsOptions {
        shell_path: settings.shell_path().map(PathBuf::from),
        command_prefix: settings.shell_command_prefix().map(str::to_string),
        auto_resize_images: settings.image_auto_resize(),
        bin_dir: Some(paths.bin_dir()),
        session_env: Some(session_env.clone()),
        ..Default::default()
    };
    let docs = DocsPaths::installed();
    let loadout = Arc::new(
        tool_loadout(
            &session_cwd,
            &tool_names(args),
            &tools_options,
            &resources,
            docs.clone(),
            Arc::clone(services.mcp()),
        )
        .with_codemode_settings(crate::codemode::CodemodeSettings::from_settings(&settings)),
    );
    let initial = loadout.current();

    let provider_retry = settings.provider_retry();
    // As pi 1.6: the idle timeout applies to every response of the process (set once, before
    // the first request), and bounds the wait for headers unless `retry.provider.timeoutMs` says.
    // A value that is not a duration stops startup, as in pi 1.6.
    let idle_ms = settings.http_idle_timeout_setting().map_err(StartupError::Failed)?;
    pi_ai::http::configure_idle_timeout(idle_ms);
    pi_ai::identity::set_attribution(settings.install_telemetry_active());
    let mut stream_options = pi_ai::StreamOptions {
        thinking_budgets: settings.thinking_budgets().unwrap_or_default(),
        max_retries: provider_retry.max_retries,
        max_retry_delay_ms: Some(provider_retry.max_retry_delay_ms),
        timeout_ms: provider_retry.timeout_ms.or((idle_ms > 0).then_some(idle_ms)),
        transport: settings.transport().to_stream(),
        websocket_connect_timeout_ms: settings.websocket_connect_timeout_ms().ok().flatten(),
        invalid_setting: settings.websocket_connect_timeout_ms().err(),
        ..Default::default()
    };
    stream_options.session_id = Some(store.session_id().to_string());
    stream_options.provider_hooks = Some(Arc::new(ExtensionProviderHooks::new(Arc::clone(services.extensions()))));
    let agent = Agent::new(AgentOptions {
        system_prompt: initial.system_prompt,
        model: model.clone().unwrap_or_else(pi_agent::unknown_model),
        thinking_level: thinking,
        tools: initial.tools,
        messages: context.messages,
        // The session's hooks come first; extension sources join the chain after them.
        hooks: Arc::new(pi_agent::HookChain::new(vec![
            Arc::new(SessionHooks::new(Arc::clone(&registry_arc)).with_loadout(Arc::clone(&loadout))),
            Arc::new(ExtensionHooks::new(Arc::clone(services.extensions()))),
        ])),
        steering_mode: settings.steering_mode(),
        follow_up_mode: settings.follow_up_mode(),
        stream_options,
        // Models of providers that extensions stream themselves go to the extension host.
        stream_fn: crate::config::ModelRegistry::with_endpoints(
            Arc::clone(&registry_arc),
            crate::extensions::providers::stream_fn(Arc::clone(services.extensions())),
        ),
        ..Default::default()
    });
    // As pi 1.6: a transport picked in `/settings` applies to this session's next request.
    let live = agent.clone();
    settings.on_transport_change(move |transport| {
        live.update_stream_options(|options| options.transport = transport.to_stream());
    });
    drop(settings);
    drop(registry);
    // A session whose only entries are names (`--name`) still needs its model recorded.
    let is_new = store
        .get_entries()
        .iter()
        .all(|e| matches!(e.kind, pi_session::EntryKind::SessionInfo { .. }));
    let session = AgentSession::new(AgentSessionParts {
        cwd: session_cwd,
        agent,
        store,
        registry: registry_arc,
        settings: settings_arc,
        resources,
        docs,
        model,
        loadout,
        services: Arc::clone(services),
    });
    if is_new {
        session.record_initial_state();
    }
    session.set_scoped_models(scoped_models.clone());
    session.expose_session_env(session_env);
    // A replacement session gets the extensions already running (none at first startup: they
    // start with the mode's runtime and join then).
    crate::extensions::attach(&session, services.extensions());
    let codemode =
        crate::extensions::builtin::enabled(args, &lock(session.settings()), crate::extensions::builtin::CODEMODE);
    if codemode {
        let named = tool_names(args).iter().any(|n| n == pi_codemode::TOOL_NAME);
        crate::codemode::attach(&session, named);
    }
    crate::mcp::attach(&session);
    warnings.extend(session_diagnostics(&session));
    Ok(Runtime {
        session,
        paths,
        scoped_models,
        warnings,
        deferred_model_error,
    })
}

/// Lines skipped while loading the session file are worth a warning: nothing was lost, but
/// the user should know the file is damaged.
fn session_diagnostics(session: &AgentSession) -> Vec<String> {
    session.with_store(|s| {
        let report = s.load_report();
        report
            .skipped
            .iter()
            .map(|skip| {
                format!(
                    "Skipped unreadable line {} of the session file: {}",
                    skip.line, skip.reason
                )
            })
            .collect()
    })
}
