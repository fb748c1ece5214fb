//! The MCP servers of one pi process: loaded from the trusted configuration, connected in
//! parallel in the background, their tools registered with 1.6's names and exposures in every
//! session's tool registry (a replacement session gets them too), and closed at exit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use pi_agent::{AgentTool, ToolMeta, ToolRegistry, ToolSource};
use pi_mcp::{ConnectOptions, Exposure, McpConfig};
use tokio::task::JoinHandle;

use super::prompt::{render_servers_section, ListedServer, Reach};
use super::resources::{ResourceAgentTool, ResourceTool, RESOURCE_TOOL_NAMES};
use super::server::{McpServer, Phase};
use super::tool::McpAgentTool;
use crate::session::agent_session::lock;

/// How long the first prompt waits for servers with directly declared tools.
pub const STARTUP_WAIT: Duration = Duration::from_secs(10);

/// Which MCP tools the command line lets through (`--tools` entries starting with `mcp__`,
/// `--exclude-tools` patterns).
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    /// `--tools` entries that name MCP tools; when there are some, only the tools they match are
    /// declared directly.
    pub allow: Vec<String>,
    /// `--exclude-tools`: matching tools are left out altogether.
    pub exclude: Vec<String>,
}

impl ToolFilter {
    pub fn from_flags(tools: Option<&[String]>, exclude: Option<&[String]>) -> ToolFilter {
        ToolFilter {
            allow: tools
                .unwrap_or_default()
                .iter()
                .filter(|t| t.starts_with("mcp__"))
                .cloned()
                .collect(),
            exclude: exclude.unwrap_or_default().to_vec(),
        }
    }

    fn excluded(&self, name: &str) -> bool {
        crate::cli::tool_selection::matches_any(&self.exclude, name)
    }

    fn declared_directly(&self, name: &str) -> bool {
        self.allow.is_empty() || crate::cli::tool_selection::matches_any(&self.allow, name)
    }
}

fn registry_exposure(exposure: Exposure) -> pi_agent::Exposure {
    match exposure {
        Exposure::Codemode => pi_agent::Exposure::Codemode,
        Exposure::Deferred => pi_agent::Exposure::Deferred,
        Exposure::Direct => pi_agent::Exposure::Direct,
        Exposure::Hidden => pi_agent::Exposure::Hidden,
    }
}

type Registration = (Arc<dyn AgentTool>, ToolMeta);

#[derive(Default)]
pub struct McpRuntime {
    servers: Mutex<Vec<Arc<McpServer>>>,
    /// Problems of the configuration files (`<path>: <problem>`).
    config_errors: Mutex<Vec<String>>,
    /// Every MCP tool registered so far, for registries that join later.
    tools: Mutex<Vec<Registration>>,
    /// The registries of the sessions that use the servers.
    registries: Mutex<Vec<Weak<ToolRegistry>>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    filter: Mutex<ToolFilter>,
    /// The exposure the resource tools were registered with, once a server offered resources.
    resource_exposure: Mutex<Option<pi_agent::Exposure>>,
    /// The first prompt's wait for direct servers has happened.
    waited: AtomicBool,
    /// pi's own MCP support is on for this run (`/mcp` is its command).
    on: AtomicBool,
    /// `builtin:tool-search` is on for this run.
    tool_search: AtomicBool,
    /// `autoEnableCodemode: false` in a configuration file.
    codemode_not_automatic: AtomicBool,
}

impl McpRuntime {
    /// Start connecting every enabled server of `config` in the background; returns at once.
    /// `options_for` gives each server its connection options (cwd, log, tokens).
    pub fn start(
        self: &Arc<Self>,
        config: McpConfig,
        filter: ToolFilter,
        options_for: impl Fn(&str) -> ConnectOptions,
    ) {
        *lock(&self.filter) = filter;
        self.codemode_not_automatic
            .store(config.auto_enable_codemode == Some(false), Ordering::SeqCst);
        lock(&self.config_errors).extend(config.errors.iter().cloned());
        self.add_servers(config.servers, options_for);
    }

    /// Turn pi's own MCP support on for this run (even without servers: `/mcp` says so).
    pub fn set_on(&self) {
        self.on.store(true, Ordering::SeqCst);
    }

    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::SeqCst)
    }

    /// The `--tools` / `--exclude-tools` filter for the servers' tools.
    pub fn set_filter(&self, filter: ToolFilter) {
        *lock(&self.filter) = filter;
    }

    /// Start connecting more servers (those extensions register) next to the configured ones.
    pub fn add_servers(
        self: &Arc<Self>,
        entries: Vec<pi_mcp::ServerEntry>,
        options_for: impl Fn(&str) -> ConnectOptions,
    ) {
        let servers: Vec<Arc<McpServer>> = entries
            .into_iter()
            .map(|entry| {
                let options = options_for(&entry.name);
                McpServer::new(entry, options)
            })
            .collect();
        let mut tasks = lock(&self.tasks);
        for server in servers.iter().filter(|s| s.is_enabled()) {
            tasks.push(tokio::spawn(Self::connect_and_follow(
                Arc::downgrade(self),
                Arc::clone(server),
                false,
            )));
        }
        drop(tasks);
        lock(&self.servers).extend(servers);
    }

    /// Connect `server` (or, with `enable`, enable a disabled one first), register its tools,
    /// then follow `notifications/tools/list_changed`: list again and register what changed,
    /// for as long as the connection lasts.
    async fn connect_and_follow(runtime: Weak<McpRuntime>, server: Arc<McpServer>, enable: bool) {
        let phase = if enable {
            server.enable().await
        } else {
            server.connect().await
        };
        let Phase::Connected(connection) = phase else {
            return;
        };
        let mut changes = connection.client.tool_list_changes();
        drop(connection);
        match runtime.upgrade() {
            Some(runtime) => runtime.register_tools_of(&server),
            None => return,
        }
        while changes.changed().await.is_ok() {
            if server.refresh_tools().await.is_none() {
                continue;
            }
            match runtime.upgrade() {
                Some(runtime) => runtime.register_tools_of(&server),
                None => return,
            }
        }
    }

    /// `/mcp` Enable or Disable for the rest of the run: a disabled server's connection closes
    /// and its tools are withdrawn; an enabled one connects in the background.
    pub async fn set_enabled(self: &Arc<Self>, server: &Arc<McpServer>, enabled: bool) {
        if enabled {
            if !server.is_enabled() {
                let task = tokio::spawn(Self::connect_and_follow(Arc::downgrade(self), Arc::clone(server), true));
                self.track(task);
            }
        } else {
            server.disable().await;
            self.register_tools_of(server);
        }
    }

    /// A background task of the servers' that ends with them at shutdown.
    pub fn track(&self, task: JoinHandle<()>) {
        lock(&self.tasks).push(task);
    }

    pub fn servers(&self) -> Vec<Arc<McpServer>> {
        lock(&self.servers).clone()
    }

    /// Connect `server` again (`/mcp` Reconnect) and register what it offers now.
    pub async fn reconnect(self: &Arc<Self>, server: &Arc<McpServer>) -> Phase {
        let phase = server.reconnect().await;
        if let Phase::Connected(_) = phase {
            self.register_tools_of(server);
        }
        phase
    }

    pub fn set_tool_search_enabled(&self, enabled: bool) {
        self.tool_search.store(enabled, Ordering::SeqCst);
    }

    pub fn tool_search_enabled(&self) -> bool {
        self.tool_search.load(Ordering::SeqCst)
    }

    /// Whether an enabled server has tools with `codemode` exposure and the configuration lets
    /// that activate the codemode tool.
    pub fn activates_codemode(&self) -> bool {
        !self.codemode_not_automatic.load(Ordering::SeqCst)
            && lock(&self.servers)
                .iter()
                .any(|s| s.is_enabled() && s.has_exposure(Exposure::Codemode))
    }

    /// Whether an enabled server has tools with `deferred` exposure (so `tool_search` is on).
    pub fn has_deferred_tools(&self) -> bool {
        lock(&self.servers)
            .iter()
            .any(|s| s.is_enabled() && s.has_exposure(Exposure::Deferred))
    }

    pub fn config_errors(&self) -> Vec<String> {
        lock(&self.config_errors).clone()
    }

    /// Names no server's tool may take: the built-in tools and the tools already registered.
    fn is_taken(&self, name: &str, own_server: &str) -> bool {
        pi_tools::ALL_TOOL_NAMES.contains(&name)
            || lock(&self.tools)
                .iter()
                .any(|(tool, meta)| tool.name() == name && meta.source != ToolSource::Mcp(own_server.to_string()))
    }

    /// Register the tools of a server that just connected.
    fn register_tools_of(self: &Arc<Self>, server: &Arc<McpServer>) {
        // A disabled server offers nothing: its tools are all withdrawn.
        let connection = match server.phase() {
            Phase::Connected(connection) => Some(connection),
            Phase::Disabled => None,
            _ => return,
        };
        let offered = connection.as_ref().map_or(&[][..], |c| &c.tools[..]);
        let name = server.name();
        let tool_names: Vec<&str> = offered.iter().map(|t| t.name.as_str()).collect();
        let names = pi_mcp::mcp_tool_names(name, &tool_names, |candidate| self.is_taken(candidate, name));
        let readable = connection
            .as_ref()
            .is_some_and(|c| c.client.server_info().has_resources());
        let filter = lock(&self.filter).clone();
        let mut added: Vec<Registration> = Vec::new();
        for (tool, full_name) in offered.iter().zip(names) {
            if filter.excluded(&full_name) {
                continue;
            }
            let exposure = registry_exposure(server.entry.config.tool_exposure(&tool.name));
            let agent_tool: Arc<dyn AgentTool> =
                Arc::new(McpAgentTool::new(full_name.clone(), Arc::clone(server), tool, readable));
            let meta = ToolMeta {
                source: ToolSource::Mcp(name.to_string()),
                exposure,
                default_active: filter.declared_directly(&full_name),
                snippet: None,
                guidelines: Vec::new(),
            };
            added.push((agent_tool, meta));
        }
        let registries: Vec<Arc<ToolRegistry>> = {
            let mut registries = lock(&self.registries);
            registries.retain(|r| r.strong_count() > 0);
            registries.iter().filter_map(Weak::upgrade).collect()
        };
        let withdrawn: Vec<Registration> = {
            let mut tools = lock(&self.tools);
            let (mine, others): (Vec<Registration>, Vec<Registration>) = tools
                .drain(..)
                .partition(|(_, meta)| meta.source == ToolSource::Mcp(name.to_string()));
            *tools = others;
            mine.into_iter()
                .filter(|(tool, meta)| {
                    meta.exposure != pi_agent::Exposure::Hidden
                        && !added.iter().any(|(new, _)| new.name() == tool.name())
                })
                .map(|(tool, meta)| (tool, meta.exposure(pi_agent::Exposure::Hidden)))
                .collect()
        };
        for registry in &registries {
            for (tool, meta) in added.iter().chain(withdrawn.iter()) {
                registry.register(Arc::clone(tool), meta.clone());
            }
        }
        let mut tools = lock(&self.tools);
        tools.extend(added);
        tools.extend(withdrawn);
        drop(tools);
        let server_exposure = registry_exposure(server.entry.config.exposure);
        if readable && server_exposure != pi_agent::Exposure::Hidden {
            self.offer_resource_tools(server_exposure, &registries);
        }
    }

    /// Register the resource tools with the widest exposure among the servers offering
    /// resources (direct, then codemode, then deferred).
    fn offer_resource_tools(self: &Arc<Self>, exposure: pi_agent::Exposure, registries: &[Arc<ToolRegistry>]) {
        let width = |e: pi_agent::Exposure| match e {
            pi_agent::Exposure::Direct => 3,
            pi_agent::Exposure::Codemode => 2,
            pi_agent::Exposure::Deferred => 1,
            _ => 0,
        };
        {
            let mut current = lock(&self.resource_exposure);
            if current.is_some_and(|c| width(c) >= width(exposure)) {
                return;
            }
            *current = Some(exposure);
        }
        let filter = lock(&self.filter).clone();
        let mut registrations: Vec<Registration> = Vec::new();
        for kind in ResourceTool::ALL {
            let tool: Arc<dyn AgentTool> = Arc::new(ResourceAgentTool::new(kind, self));
            if filter.excluded(tool.name()) {
                continue;
            }
            let meta = ToolMeta {
                source: ToolSource::Mcp(String::new()),
                exposure,
                default_active: filter.declared_directly(tool.name()),
                snippet: None,
                guidelines: Vec::new(),
            };
            registrations.push((tool, meta));
        }
        for registry in registries {
            for (tool, meta) in &registrations {
                registry.register(Arc::clone(tool), meta.clone());
                // A tool registered again keeps its activation; a wider exposure may declare it.
                if exposure == pi_agent::Exposure::Direct && meta.default_active {
                    registry.activate(tool.name());
                }
            }
        }
        let mut tools = lock(&self.tools);
        tools.retain(|(tool, _)| !RESOURCE_TOOL_NAMES.contains(&tool.name()));
        tools.extend(registrations);
    }

    /// Join a session's registry: the tools known now go in, later ones follow as their servers
    /// connect.
    pub fn attach(&self, registry: &Arc<ToolRegistry>) {
        let mut registries = lock(&self.registries);
        registries.retain(|r| r.strong_count() > 0);
        if registries
            .iter()
            .any(|r| std::ptr::eq(r.as_ptr(), Arc::as_ptr(registry)))
        {
            return;
        }
        registries.push(Arc::downgrade(registry));
        for (tool, meta) in lock(&self.tools).iter() {
            registry.register(Arc::clone(tool), meta.clone());
        }
    }

    /// Wait up to `limit` for the servers that have directly declared tools (so they are in the
    /// first request); false when some were still connecting.
    pub async fn wait_for_direct_servers(&self, limit: Duration) -> bool {
        let waiting: Vec<Arc<McpServer>> = self
            .servers()
            .into_iter()
            .filter(|s| s.is_enabled() && s.has_direct_tools())
            .collect();
        if waiting.is_empty() {
            return true;
        }
        let all = futures::future::join_all(waiting.iter().map(|s| s.settled(None)));
        tokio::time::timeout(limit, all).await.is_ok()
    }

    /// The first prompt of the process waits (at most [`STARTUP_WAIT`]) for the servers whose
    /// tools are declared directly, so that they are in its first request; true when that wait
    /// ran out with servers still connecting.
    pub async fn before_first_prompt(&self) -> bool {
        if self.waited.swap(true, Ordering::SeqCst) {
            return false;
        }
        !self.wait_for_direct_servers(STARTUP_WAIT).await
    }

    /// Wait until every enabled server has connected or failed.
    pub async fn wait_for_all(&self) {
        let servers = self.servers();
        futures::future::join_all(servers.iter().map(|s| s.settled(None))).await;
    }

    /// The `mcp_servers` section for a prompt whose declared tools are `declared`: servers reached
    /// through codemode or tool_search are listed only while that tool is declared.
    pub fn prompt_section(&self, declared: &dyn Fn(&str) -> bool) -> Option<String> {
        let codemode = declared("codemode");
        let tool_search = declared("tool_search");
        let listed: Vec<ListedServer> = self
            .servers()
            .iter()
            .filter(|s| s.is_enabled() && s.has_indirect_tools())
            .filter_map(|s| {
                let reach = if s.reached_by_codemode() {
                    Reach::Codemode
                } else {
                    Reach::ToolSearch
                };
                let reachable = match reach {
                    Reach::Codemode => codemode,
                    Reach::ToolSearch => tool_search,
                };
                reachable.then(|| ListedServer {
                    name: s.name().to_string(),
                    reach,
                    summary: pi_mcp::mcp_server_summary(
                        s.entry.config.description.as_deref(),
                        s.instructions().as_deref(),
                    ),
                })
            })
            .collect();
        render_servers_section(&listed)
    }

    /// The combined startup report of the servers that need attention, once they settled (pi's
    /// `Warning: MCP servers need attention:` block); `None` when all is well.
    pub fn attention_report(&self) -> Option<String> {
        let mut lines: Vec<String> = self.config_errors().iter().map(|e| format!("  config: {e}")).collect();
        for server in self.servers() {
            match server.phase() {
                Phase::Failed(message) => {
                    let first = message.lines().next().unwrap_or("").to_string();
                    lines.push(format!("  {}: failed: {first}", server.name()));
                }
                Phase::NeedsSignIn(_) => lines.push(format!("  {}: needs sign-in", server.name())),
                _ => {}
            }
        }
        if lines.is_empty() {
            return None;
        }
        Some(format!(
            "MCP servers need attention:\n{}\nRun /mcp to fix.",
            lines.join("\n")
        ))
    }

    /// Close every connection and end the servers' processes (at exit).
    pub async fn shutdown(&self) {
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
        let servers = self.servers();
        futures::future::join_all(servers.iter().map(|s| s.close())).await;
        lock(&self.tools).clear();
        // A token refresh the server answered may have rotated the refresh token: its answer
        // is saved before pi exits.
        pi_mcp::oauth::refreshes_settled().await;
    }
}
