//! pi 1.6's built-in MCP support in sessions (`builtin:mcp`): the servers of the trusted
//! configuration connect in parallel when a mode starts, their tools join each session's tool
//! registry, the system prompt lists the servers whose tools are not declared, and the servers
//! stop at exit. `--no-mcp` (or `-ne` without `-e builtin:mcp`) leaves all of it off.

pub mod plain;
pub mod prompt;
pub mod resources;
pub mod runtime;
pub mod server;
pub mod sign_in;
pub mod tool;
pub mod tool_search;

use std::sync::Arc;

pub use runtime::{McpRuntime, ToolFilter, STARTUP_WAIT};

use crate::cli::Args;
use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;
use crate::extension_ui::NotifyType;
use crate::extensions::builtin;
use crate::services::Services;
use crate::session::agent_session::lock;
use crate::session::AgentSession;

/// Whether MCP is on for this run: the command line and the settings' `extensions` entries
/// decide (see [`builtin::enabled`]).
pub fn enabled_by(args: &Args, settings: &SettingsManager) -> bool {
    builtin::enabled(args, settings, builtin::MCP)
}

/// Load the configuration of `session`'s cwd and start connecting its servers in the
/// background (nothing is started when none is configured); the session's registry joins.
/// Needs a Tokio runtime.
pub fn start(args: &Args, session: &AgentSession) {
    let (tool_search, on) = {
        let settings = lock(session.settings());
        (
            builtin::enabled(args, &settings, builtin::TOOL_SEARCH),
            enabled_by(args, &settings),
        )
    };
    session.services().mcp().set_tool_search_enabled(tool_search);
    if !on {
        return;
    }
    session.services().mcp().set_on();
    let paths = Paths::for_cwd(session.cwd());
    let services = session.services();
    services.mcp().set_filter(ToolFilter::from_flags(
        args.tools.as_deref(),
        args.exclude_tools.as_deref(),
    ));
    let config = pi_mcp::load_mcp_config(&pi_mcp::LoadOptions {
        agent_dir: &paths.agent_dir,
        cwd: session.cwd(),
        project_trusted: services.project_trusted(),
    });
    if config.servers.is_empty() && config.errors.is_empty() {
        return;
    }
    let cwd = session.cwd().to_path_buf();
    let agent_dir = paths.agent_dir.clone();
    let tokens = pi_mcp::cli::provider_tokens_from(&agent_dir);
    let log = pi_mcp::log::McpServerLog::in_agent_dir(&agent_dir);
    let filter = ToolFilter::from_flags(args.tools.as_deref(), args.exclude_tools.as_deref());
    let runtime = services.mcp();
    runtime.start(config, filter, |server| {
        let mut options = pi_mcp::ConnectOptions::new(&cwd, env!("CARGO_PKG_VERSION"));
        options.log = Some(log.sink(server));
        options.provider_tokens = Some(Arc::clone(&tokens));
        options.oauth_file = Some(pi_mcp::oauth::AuthFile::in_agent_dir(&agent_dir));
        options
    });
    attach(session);
    // One combined report once the servers settled; print and JSON modes answer it with nothing.
    let slot = Arc::clone(services.extensions());
    let reporter = Arc::clone(runtime);
    runtime.track(tokio::spawn(async move {
        reporter.wait_for_all().await;
        let runtime = reporter;
        if let Some(report) = runtime.attention_report() {
            slot.ui().notify(&report, Some(NotifyType::Warning)).await;
        }
    }));
}

/// Connect servers extensions registered (`pi.registerMcpServer`) next to the configured ones;
/// their tools join `session` (and every session after it) as they connect.
pub fn connect_registered(session: &AgentSession, entries: Vec<pi_mcp::ServerEntry>) {
    if entries.is_empty() {
        return;
    }
    let paths = Paths::for_cwd(session.cwd());
    let cwd = session.cwd().to_path_buf();
    let tokens = pi_mcp::cli::provider_tokens_from(&paths.agent_dir);
    let agent_dir = paths.agent_dir.clone();
    let log = pi_mcp::log::McpServerLog::in_agent_dir(&paths.agent_dir);
    session.services().mcp().add_servers(entries, |server| {
        let mut options = pi_mcp::ConnectOptions::new(&cwd, env!("CARGO_PKG_VERSION"));
        options.log = Some(log.sink(server));
        options.provider_tokens = Some(Arc::clone(&tokens));
        options.oauth_file = Some(pi_mcp::oauth::AuthFile::in_agent_dir(&agent_dir));
        options
    });
    attach(session);
}

/// Before a prompt: the process's first one waits (boundedly) for servers with directly
/// declared tools, and says so when some are still connecting.
pub async fn before_prompt(services: &Services) {
    services.mcp().pick_up_sign_ins().await;
    if services.mcp().before_first_prompt().await {
        services
            .extensions()
            .ui()
            .notify(
                "MCP servers are still connecting; their tools become available once connected.",
                Some(NotifyType::Info),
            )
            .await;
    }
}

/// Join a (replacement) session to the servers already running: their tools, and
/// `tool_search` when a server's tools are deferred.
pub fn attach(session: &AgentSession) {
    let runtime = session.services().mcp();
    let registry = session.tool_registry();
    if runtime.has_deferred_tools()
        && runtime.tool_search_enabled()
        && registry.get(tool_search::TOOL_SEARCH_NAME).is_none()
    {
        let tool: Arc<dyn pi_agent::AgentTool> =
            Arc::new(tool_search::ToolSearch::new(registry, Some(Arc::clone(runtime))));
        let meta = pi_agent::ToolMeta::of(tool.as_ref(), pi_agent::ToolSource::Codemode);
        registry.register(tool, meta);
    }
    if runtime.activates_codemode() && registry.get(pi_codemode::TOOL_NAME).is_some() {
        registry.activate(pi_codemode::TOOL_NAME);
    }
    runtime.attach(registry);
}

/// Close the servers at exit.
pub async fn shutdown(runtime: &McpRuntime) {
    runtime.shutdown().await;
}
