//! [`ExtensionRunner`]: what the session talks to. It starts the host only when extensions are
//! configured, loads them, keeps their registrations, dispatches events, runs tools and
//! commands, and survives a host that crashes or hangs (typed errors; `restart`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::connection::{lock, HostConnection, SpawnSpec};
use crate::error::{HostError, StartError};
use crate::handler::HostHandler;
use crate::host_files::{ensure_host_files, host_root};
use crate::modules::{locate_or_install, Modules, ModulesConfig, ModulesSource};
use crate::node::find_node;
use crate::protocol::{
    CommandInfo, CommandResult, Dispatched, ExtensionInfo, ExtensionSource, FlagInfo, InitializeParams,
    InitializeResult, LoadError, LoadResult, Mode, StateUpdate, ToolInfo, ToolResult, WireError, PROTOCOL_VERSION,
};

/// How long to wait, and how often to check that the host still answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// From spawning node to its greeting and `initialize` answer.
    pub connect: Duration,
    /// Loading every extension (cold TypeScript compiles of large packages take seconds).
    pub load: Duration,
    /// While waiting for an answer, ping the host this often ...
    pub liveness: Duration,
    /// ... and call it hung (and stop it) when a ping is not answered within this.
    pub ping: Duration,
    /// How long a clean shutdown may take before the process is killed.
    pub shutdown: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(15),
            load: Duration::from_secs(120),
            liveness: Duration::from_secs(5),
            ping: Duration::from_secs(5),
            shutdown: Duration::from_secs(2),
        }
    }
}

/// Everything a runner needs to start.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// The version `VERSION` reports to extensions.
    pub pi_version: String,
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    pub mode: Mode,
    pub project_trusted: bool,
    /// The files to load, in order (see [`crate::discovery::discover`]).
    pub extensions: Vec<ExtensionSource>,
    /// The node binary; `None`: `PI_NODE`, else `node` on `PATH`.
    pub node: Option<PathBuf>,
    pub modules: ModulesConfig,
    /// CLI values of extension flags, by flag name.
    pub flag_values: BTreeMap<String, Value>,
    /// State the host knows from the start (at least `allTools`, so that extensions wrapping
    /// `createBashTool` and friends see pi's definitions while loading).
    pub initial_state: Option<StateUpdate>,
    pub timeouts: Timeouts,
    /// Another host program in place of the Node host (a host for another language, speaking
    /// the same protocol): it is started as `program script`, and neither Node nor the npm
    /// packages are looked for.
    pub host_program: Option<HostProgram>,
    /// pi 1.6's pre-trust pass: the extensions load without being bound (their action methods
    /// still throw) until [`ExtensionRunner::extend`] completes the set once trust is decided.
    pub pre_trust: bool,
}

/// A host program of another language: `program` runs `script`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostProgram {
    pub program: PathBuf,
    pub script: PathBuf,
}

impl HostProgram {
    /// `PI_EXTENSION_HOST`'s form: the program, a space, the script (`python3 host.py`).
    pub fn parse(text: &str) -> Option<HostProgram> {
        let (program, script) = text.trim().split_once(char::is_whitespace)?;
        Some(HostProgram {
            program: PathBuf::from(program),
            script: PathBuf::from(script.trim()),
        })
    }
}

impl RunnerConfig {
    /// A configuration with defaults for everything but the essentials.
    pub fn new(
        pi_version: impl Into<String>,
        agent_dir: impl Into<PathBuf>,
        cwd: impl Into<PathBuf>,
        extensions: Vec<ExtensionSource>,
    ) -> RunnerConfig {
        RunnerConfig {
            pi_version: pi_version.into(),
            agent_dir: agent_dir.into(),
            cwd: cwd.into(),
            mode: Mode::Print,
            project_trusted: false,
            extensions,
            node: None,
            modules: ModulesConfig {
                dir: None,
                allow_install: true,
            },
            flag_values: BTreeMap::new(),
            initial_state: None,
            timeouts: Timeouts::default(),
            host_program: None,
            pre_trust: false,
        }
    }
}

/// What the loaded extensions registered, and what failed to load.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registrations {
    /// Loaded extensions in load order.
    pub extensions: Vec<ExtensionInfo>,
    /// Load failures and tool/flag conflicts, each as pi 1.6 reports it.
    pub errors: Vec<LoadError>,
    /// The MCP servers the extensions registered.
    pub mcp_servers: Vec<crate::protocol::RegisteredMcpServer>,
}

/// The name each command is run by, in registration order: a name several extensions
/// register is numbered by its occurrence (`name:1`, `name:2`), skipping numbers another
/// command already holds, as pi 1.6 names them.
pub fn invocation_names(names: &[&str]) -> Vec<String> {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for name in names {
        *counts.entry(name).or_default() += 1;
    }
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    names
        .iter()
        .map(|name| {
            let occurrence = {
                let n = seen.entry(name).or_default();
                *n += 1;
                *n
            };
            let mut invocation = if counts[name] > 1 {
                format!("{name}:{occurrence}")
            } else {
                (*name).to_string()
            };
            let mut suffix = occurrence;
            while taken.contains(&invocation) {
                suffix += 1;
                invocation = format!("{name}:{suffix}");
            }
            taken.insert(invocation.clone());
            invocation
        })
        .collect()
}

impl Registrations {
    /// Tools by name with their owner; when two extensions register a name, the first wins.
    pub fn tools(&self) -> Vec<(&ExtensionInfo, &ToolInfo)> {
        let mut seen = std::collections::HashSet::new();
        self.extensions
            .iter()
            .flat_map(|ext| ext.tools.iter().map(move |tool| (ext, tool)))
            .filter(|(_, tool)| seen.insert(tool.name.as_str()))
            .collect()
    }

    /// Commands with their owner, in load order (names may repeat; pi numbers them).
    pub fn commands(&self) -> Vec<(&ExtensionInfo, &CommandInfo)> {
        self.extensions
            .iter()
            .flat_map(|ext| ext.commands.iter().map(move |c| (ext, c)))
            .collect()
    }

    /// The name each of [`Self::commands`] is run by, in the same order: a name several
    /// extensions register is numbered (`name:1`, `name:2`), as pi 1.6 names them.
    pub fn command_invocations(&self) -> Vec<String> {
        let commands = self.commands();
        let names: Vec<&str> = commands.iter().map(|(_, c)| c.name.as_str()).collect();
        invocation_names(&names)
    }

    /// Flags by name with their owner; the first registration wins.
    pub fn flags(&self) -> Vec<(&ExtensionInfo, &FlagInfo)> {
        let mut seen = std::collections::HashSet::new();
        self.extensions
            .iter()
            .flat_map(|ext| ext.flags.iter().map(move |f| (ext, f)))
            .filter(|(_, flag)| seen.insert(flag.name.as_str()))
            .collect()
    }

    /// The tools an extension draws with its own `renderCall` / `renderResult`.
    pub fn self_rendered_tools(&self) -> std::collections::HashSet<&str> {
        self.extensions
            .iter()
            .flat_map(|e| e.tools.iter())
            .filter(|t| t.has_render_call || t.has_render_result)
            .map(|t| t.name.as_str())
            .collect()
    }

    /// Whether a `registerToolRenderer` resolver may draw any tool, built-in ones included.
    pub fn has_tool_renderers(&self) -> bool {
        self.extensions.iter().any(|e| e.tool_renderers)
    }

    /// Whether any extension handles `event` (so the caller can skip the round trip).
    pub fn handles(&self, event: &str) -> bool {
        self.extensions.iter().any(|ext| ext.events.iter().any(|e| e == event))
    }
}

/// What the `project_trust` handlers said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustOutcome {
    /// `Some(trusted)` from the first handler that decided.
    pub decision: Option<bool>,
    /// Whether that handler asked for the decision to be saved (`remember: true`).
    pub remember: bool,
    /// `ctx.ui.notify` calls, in order.
    pub notices: Vec<TrustNotice>,
    /// Handlers that threw or returned no result.
    pub errors: Vec<crate::protocol::ExtensionError>,
}

/// One `ctx.ui.notify` of a `project_trust` handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustNotice {
    pub message: String,
    /// `info`, `warning` or `error`.
    pub kind: String,
}

/// How long starting took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StartTimings {
    /// Spawning node until the host's greeting.
    pub spawn: Duration,
    /// `initialize` round trip.
    pub initialize: Duration,
    /// Loading every extension.
    pub load: Duration,
}

/// A tool call for an extension tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub call_id: String,
    pub name: String,
    pub params: Value,
}

/// The extension runtime of one session: a host process and what its extensions registered.
pub struct ExtensionRunner {
    config: RunnerConfig,
    handler: Arc<dyn HostHandler>,
    node: PathBuf,
    main: PathBuf,
    modules: Modules,
    host: Mutex<Option<Arc<HostConnection>>>,
    /// The files loaded now; starts as the configured list, replaced by `reload`.
    extensions: Mutex<Vec<ExtensionSource>>,
    registrations: Mutex<Arc<Registrations>>,
    timings: Mutex<StartTimings>,
    /// Loaded by a pre-trust pass and not yet extended to the final set.
    unbound: std::sync::atomic::AtomicBool,
}

fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, HostError> {
    serde_json::from_value(value).map_err(|e| HostError::BadReply {
        method: method.to_string(),
        message: e.to_string(),
    })
}

impl ExtensionRunner {
    /// The extension files loaded now (their paths as pi names them).
    pub fn loaded(&self) -> Vec<ExtensionSource> {
        lock(&self.extensions).clone()
    }

    /// Start the host and load the configured extensions. With no extensions configured this
    /// does nothing and returns `None`: no node process, no cost.
    pub async fn start(
        config: RunnerConfig,
        handler: Arc<dyn HostHandler>,
    ) -> Result<Option<ExtensionRunner>, StartError> {
        if config.extensions.is_empty() {
            return Ok(None);
        }
        let unbound = std::sync::atomic::AtomicBool::new(config.pre_trust);
        if let Some(host) = config.host_program.clone() {
            let runner = ExtensionRunner {
                extensions: Mutex::new(config.extensions.clone()),
                // A host of another language resolves nothing from npm.
                modules: Modules {
                    dir: PathBuf::new(),
                    source: ModulesSource::Configured,
                },
                config,
                handler,
                node: host.program,
                main: host.script,
                host: Mutex::new(None),
                registrations: Mutex::new(Arc::new(Registrations::default())),
                timings: Mutex::new(StartTimings::default()),
                unbound,
            };
            runner.boot().await?;
            return Ok(Some(runner));
        }
        let node = find_node(config.node.as_deref())?;
        let modules = locate_or_install(&config.modules, &config.agent_dir, &node).await?;
        let agent_dir = config.agent_dir.clone();
        let main = tokio::task::spawn_blocking(move || ensure_host_files(&agent_dir))
            .await
            .map_err(|e| StartError::HostFiles {
                path: host_root(&config.agent_dir),
                source: std::io::Error::other(e.to_string()),
            })??;
        let runner = ExtensionRunner {
            extensions: Mutex::new(config.extensions.clone()),
            config,
            handler,
            node,
            main,
            modules,
            host: Mutex::new(None),
            registrations: Mutex::new(Arc::new(Registrations::default())),
            timings: Mutex::new(StartTimings::default()),
            unbound,
        };
        runner.boot().await?;
        Ok(Some(runner))
    }

    /// Spawn a host, initialize it and load every extension.
    async fn boot(&self) -> Result<(), StartError> {
        let timeouts = self.config.timeouts;
        let cache_dir = host_root(&self.config.agent_dir).join("cache");
        let compile_cache = cache_dir.join("node-compile");
        let started = Instant::now();
        let host = Arc::new(
            HostConnection::spawn(
                SpawnSpec {
                    node: &self.node,
                    main: &self.main,
                    cwd: &self.config.cwd,
                    compile_cache: &compile_cache,
                    connect_timeout: timeouts.connect,
                },
                self.handler.clone(),
            )
            .await?,
        );
        let spawned = started.elapsed();
        let params = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            pi_version: self.config.pi_version.clone(),
            agent_dir: self.config.agent_dir.clone(),
            cwd: self.config.cwd.clone(),
            mode: self.config.mode,
            has_ui: self.config.mode.has_ui(),
            project_trusted: self.config.project_trusted,
            modules_dir: self.modules.dir.clone(),
            cache_dir,
            flag_values: self.config.flag_values.clone(),
            state: self.config.initial_state.clone(),
        };
        let params = serde_json::to_value(params).map_err(|e| HostError::BadReply {
            method: "initialize".into(),
            message: e.to_string(),
        })?;
        let init: InitializeResult = decode(
            "initialize",
            host.request("initialize", params, Some(timeouts.connect)).await?,
        )?;
        if init.protocol_version != PROTOCOL_VERSION {
            return Err(StartError::ProtocolMismatch {
                expected: PROTOCOL_VERSION,
                found: init.protocol_version,
            });
        }
        let initialized = started.elapsed();
        let list = lock(&self.extensions).clone();
        let bind = !self.unbound.load(std::sync::atomic::Ordering::SeqCst);
        let load = self
            .ask(
                &host,
                "load",
                json!({ "extensions": list, "bind": bind }),
                Some(timeouts.load),
                None,
            )
            .await?;
        let loaded: LoadResult = decode("load", load)?;
        *lock(&self.timings) = StartTimings {
            spawn: spawned,
            initialize: initialized - spawned,
            load: started.elapsed() - initialized,
        };
        *lock(&self.registrations) = Arc::new(Registrations {
            extensions: loaded.extensions,
            errors: loaded.errors,
            mcp_servers: loaded.mcp_servers,
        });
        *lock(&self.host) = Some(host);
        Ok(())
    }

    /// What the loaded extensions registered (and the load errors).
    pub fn registrations(&self) -> Arc<Registrations> {
        lock(&self.registrations).clone()
    }

    /// Where the host's npm packages came from.
    pub fn modules(&self) -> &Modules {
        &self.modules
    }

    /// How long the last start took.
    pub fn timings(&self) -> StartTimings {
        *lock(&self.timings)
    }

    /// Whether the host is up (it may have crashed or been stopped as hung).
    pub fn is_running(&self) -> bool {
        lock(&self.host).as_ref().is_some_and(|h| h.gone().is_none())
    }

    /// The host's pid, while it runs.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.host)
            .as_ref()
            .filter(|h| h.gone().is_none())
            .map(|h| h.hello().pid)
    }

    pub(crate) fn current(&self) -> Result<Arc<HostConnection>, HostError> {
        let host = lock(&self.host).clone().ok_or(HostError::NotRunning)?;
        match host.gone() {
            Some(reason) => Err(reason),
            None => Ok(host),
        }
    }

    /// Update the host's state mirror (read by synchronous getters). Ordered before any later
    /// dispatch.
    pub fn push_state(&self, update: &StateUpdate) -> Result<(), HostError> {
        let params = serde_json::to_value(update).map_err(|e| HostError::BadReply {
            method: "state".into(),
            message: e.to_string(),
        })?;
        self.current()?.notify("state", params)
    }

    /// Send the host a notification of pi's own (`models.event`: the events of a model request
    /// an extension streams).
    pub fn notify(&self, method: &str, params: Value) -> Result<(), HostError> {
        self.current()?.notify(method, params)
    }

    /// Run every handler of `event` in load order and return the combined result. No time
    /// limit (a handler may wait for the user), but a host that stops answering is stopped.
    pub async fn dispatch(&self, event: &str, payload: Value) -> Result<Dispatched, HostError> {
        self.dispatch_with(event, payload, None, None).await
    }

    /// [`Self::dispatch`] with a state update applied first and an optional time limit.
    pub async fn dispatch_with(
        &self,
        event: &str,
        payload: Value,
        state: Option<&StateUpdate>,
        timeout: Option<Duration>,
    ) -> Result<Dispatched, HostError> {
        let host = self.current()?;
        let mut params = json!({ "event": event, "payload": payload });
        if let Some(state) = state {
            params["state"] = serde_json::to_value(state).map_err(|e| HostError::BadReply {
                method: "dispatch".into(),
                message: e.to_string(),
            })?;
        }
        let answer = self.ask(&host, "dispatch", params, timeout, None).await?;
        decode("dispatch", answer)
    }

    /// Run an extension tool. Partial results go to `updates`; cancelling `cancel` aborts the
    /// tool's signal and waits for what it returns.
    pub async fn call_tool(
        &self,
        call: ToolCall,
        updates: Option<mpsc::Sender<ToolResult>>,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, HostError> {
        let host = self.current()?;
        if let Some(updates) = updates {
            host.route_updates(&call.call_id, updates);
        }
        let params = json!({ "callId": call.call_id, "name": call.name, "params": call.params });
        let notice = CancelNotice::tool(&call.call_id);
        let answer = self.ask(&host, "callTool", params, None, Some((cancel, notice))).await;
        host.unroute(&call.call_id);
        decode("callTool", answer?)
    }

    /// Run an extension's `/name` command with its argument text.
    pub async fn run_command(&self, name: &str, args: &str) -> Result<CommandResult, HostError> {
        let host = self.current()?;
        let answer = self
            .ask(&host, "runCommand", json!({ "name": name, "args": args }), None, None)
            .await?;
        decode("runCommand", answer)
    }

    /// A request of the terminal UI's screen protocol (`ui.render`, `ui.input`, and the
    /// renderers): the host answers at once, so a time limit keeps a stuck component from
    /// holding the screen.
    pub async fn ui_request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, HostError> {
        let host = self.current()?;
        self.ask(&host, method, params, Some(timeout), None).await
    }

    /// The key of a provider an extension registered with an `oauth` block, for a stored
    /// login (`provider.oauthKey`): `{apiKey, credential}`, `credential` being the refreshed
    /// login to store, or `null` when it was still valid. The refresh has pi 1.6's limit.
    pub async fn oauth_key(&self, provider: &str, credential: Value) -> Result<Value, HostError> {
        let host = self.current()?;
        let params = serde_json::json!({ "provider": provider, "credential": credential });
        self.ask(&host, "provider.oauthKey", params, Some(Duration::from_secs(30)), None)
            .await
    }

    /// Run the `oauth.login` of provider `provider` (`provider.oauthLogin`): its callbacks
    /// come back as `oauth.notify` / `oauth.prompt` naming `login_id`; answers `{credential}`.
    /// No time limit: the user may take a while in the browser. `provider.oauthCancel
    /// {loginId}` stops it.
    pub async fn oauth_login(&self, provider: &str, login_id: u64) -> Result<Value, HostError> {
        let host = self.current()?;
        let params = serde_json::json!({ "provider": provider, "loginId": login_id });
        self.ask(&host, "provider.oauthLogin", params, None, None).await
    }

    /// Run the handler of an extension's keyboard shortcut (`pi.registerShortcut`). No time
    /// limit: a handler may wait for the user.
    pub async fn run_shortcut(&self, key: &str) -> Result<CommandResult, HostError> {
        let host = self.current()?;
        let answer = self
            .ask(&host, "runShortcut", json!({ "key": key }), None, None)
            .await?;
        decode("runShortcut", answer)
    }

    /// Run the `setup` callback `setup_id` of a command's `ctx.newSession` against the new
    /// session (the host's mirror shows it); answers `{calls: [{method, args}]}`, the
    /// `SessionManager` calls it made, for pi to apply. No time limit: a setup may wait.
    pub async fn session_setup(&self, setup_id: u64) -> Result<Value, HostError> {
        let host = self.current()?;
        self.ask(&host, "session.setup", json!({ "setupId": setup_id }), None, None)
            .await
    }

    /// Set CLI values of extension flags (read by `pi.getFlag`).
    pub async fn set_flags(&self, values: &BTreeMap<String, Value>) -> Result<(), HostError> {
        let host = self.current()?;
        self.ask(&host, "setFlags", json!({ "values": values }), None, None)
            .await
            .map(|_| ())
    }

    /// Ask the host for its current registrations (after `registrations.changed`).
    pub async fn refresh_registrations(&self) -> Result<Arc<Registrations>, HostError> {
        let host = self.current()?;
        let answer = self.ask(&host, "registrations", json!({}), None, None).await?;
        let fresh: LoadResult = decode("registrations", answer)?;
        let mut current = lock(&self.registrations);
        let errors = current.errors.clone();
        *current = Arc::new(Registrations {
            extensions: fresh.extensions,
            errors,
            mcp_servers: fresh.mcp_servers,
        });
        Ok(current.clone())
    }

    /// A new extension runtime in the same host, as pi makes on session replacement
    /// (`reuse_modules: true`: factories run again on the modules already evaluated, so
    /// module-level state survives) and on `/reload` (`false`: modules are evaluated afresh).
    /// Either way every `pi` captured before is stale and old `pi.events` subscriptions end.
    ///
    /// `extensions` replaces the list of files when given (after a `project_trust` pass over
    /// the user's extensions, say, the full list with the project's).
    pub async fn reload(
        &self,
        extensions: Option<Vec<ExtensionSource>>,
        reuse_modules: bool,
        state: Option<&StateUpdate>,
    ) -> Result<Arc<Registrations>, HostError> {
        let host = self.current()?;
        let list = {
            let mut current = lock(&self.extensions);
            if let Some(extensions) = extensions {
                *current = extensions;
            }
            current.clone()
        };
        let mut params = json!({ "extensions": list, "reuseModules": reuse_modules });
        if let Some(state) = state {
            params["state"] = serde_json::to_value(state).map_err(|e| HostError::BadReply {
                method: "reload".into(),
                message: e.to_string(),
            })?;
        }
        let answer = self
            .ask(&host, "reload", params, Some(self.config.timeouts.load), None)
            .await?;
        let loaded: LoadResult = decode("reload", answer)?;
        let fresh = Arc::new(Registrations {
            extensions: loaded.extensions,
            errors: loaded.errors,
            mcp_servers: loaded.mcp_servers,
        });
        *lock(&self.registrations) = fresh.clone();
        Ok(fresh)
    }

    /// Complete a pre-trust pass with the final list of files (pi 1.6's final extension set):
    /// files loaded already keep their extension, so their factories run once; those that
    /// failed are not tried again; the others load now, and the set takes the list's order.
    /// The registrations (load errors of both passes, name conflicts of the final set) are
    /// replaced, and the extensions are bound.
    pub async fn extend(&self, extensions: Vec<ExtensionSource>) -> Result<Arc<Registrations>, HostError> {
        let host = self.current()?;
        *lock(&self.extensions) = extensions.clone();
        let answer = self
            .ask(
                &host,
                "extend",
                json!({ "extensions": extensions }),
                Some(self.config.timeouts.load),
                None,
            )
            .await?;
        let loaded: LoadResult = decode("extend", answer)?;
        self.unbound.store(false, std::sync::atomic::Ordering::SeqCst);
        let fresh = Arc::new(Registrations {
            extensions: loaded.extensions,
            errors: loaded.errors,
            mcp_servers: loaded.mcp_servers,
        });
        *lock(&self.registrations) = fresh.clone();
        Ok(fresh)
    }

    /// `project_trust` (pi 1.6's `emitProjectTrustEvent`) for `cwd`: the first handler that
    /// says `yes` or `no` decides, with whether to remember it; `None` when all were
    /// undecided. `has_ui`: whether the handlers' dialogs may ask (the terminal UI at
    /// startup only). Handler errors and `ctx.ui.notify` lines come back for the caller to
    /// print.
    pub async fn project_trust(&self, cwd: &std::path::Path, has_ui: bool) -> Result<TrustOutcome, HostError> {
        let dispatched = self
            .dispatch("project_trust", json!({ "cwd": cwd, "hasUI": has_ui }))
            .await?;
        let result = dispatched.result;
        let decision = match result.get("trusted").and_then(Value::as_str) {
            Some("yes") => Some(true),
            Some("no") => Some(false),
            _ => None,
        };
        let notices = result
            .get("notices")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|n| TrustNotice {
                        message: n.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
                        kind: n.get("type").and_then(Value::as_str).unwrap_or("info").to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(TrustOutcome {
            decision,
            remember: decision.is_some() && result.get("remember").and_then(Value::as_bool) == Some(true),
            notices,
            errors: dispatched.errors,
        })
    }

    /// Stop the host (if it still runs) and start a fresh one with the same extensions. Module
    /// state starts over, as with pi's `/reload`.
    pub async fn restart(&self) -> Result<(), StartError> {
        let old = lock(&self.host).take();
        if let Some(old) = old {
            self.stop(&old).await;
        }
        self.boot().await
    }

    /// Ask the host to exit; kill it if it does not within the shutdown time.
    pub async fn shutdown(&self) {
        let old = lock(&self.host).take();
        if let Some(old) = old {
            self.stop(&old).await;
        }
    }

    async fn stop(&self, host: &HostConnection) {
        if host.gone().is_none() {
            let limit = self.config.timeouts.shutdown;
            let _ = host.request("shutdown", json!({}), Some(limit)).await;
            let _ = tokio::time::timeout(limit, host.closed()).await;
        }
        host.kill(HostError::NotRunning);
    }

    /// Send a request and wait for its answer, checking that the host stays alive. When
    /// `cancel` fires (or the caller stops waiting), its notice tells the host to abort.
    pub(crate) async fn ask(
        &self,
        host: &HostConnection,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
        cancel: Option<(&CancellationToken, CancelNotice)>,
    ) -> Result<Value, HostError> {
        // Loading compiles TypeScript on the host's only thread for seconds at a time, so
        // unanswered pings then mean nothing; the load time limit covers a factory that loops.
        let check_liveness = !matches!(method, "load" | "reload" | "extend");
        let (id, mut answer) = host.send_request(method, params)?;
        let (token, notice) = match cancel {
            Some((token, notice)) => (Some(token), Some(notice)),
            None => (None, None),
        };
        let mut in_flight = InFlight {
            host,
            id,
            notice: notice.clone(),
            answered: false,
        };
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let mut cancel_sent = false;
        loop {
            let liveness = async {
                if check_liveness {
                    tokio::time::sleep(self.config.timeouts.liveness).await
                } else {
                    std::future::pending().await
                }
            };
            let until_deadline = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let cancelled = async {
                match token {
                    Some(token) if !cancel_sent => token.cancelled().await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                outcome = &mut answer => {
                    in_flight.answered = true;
                    return host.finish(method, outcome);
                }
                _ = liveness => {
                    if let Err(error) = self.check_alive(host, method, &mut answer).await {
                        return error;
                    }
                }
                _ = until_deadline => {
                    return Err(HostError::Timeout {
                        method: method.to_string(),
                        after: timeout.unwrap_or_default(),
                    });
                }
                _ = cancelled => {
                    cancel_sent = true;
                    if let Some(notice) = &notice {
                        notice.send(host);
                    }
                }
            }
        }
    }

    /// Ping the host; a host that does not answer is stopped and the call fails as hung.
    async fn check_alive(
        &self,
        host: &HostConnection,
        method: &str,
        answer: &mut oneshot::Receiver<Result<Value, WireError>>,
    ) -> Result<(), Result<Value, HostError>> {
        match host.request("ping", json!({}), Some(self.config.timeouts.ping)).await {
            Ok(_) => Ok(()),
            Err(HostError::Timeout { .. }) => {
                // The answer may have come in while we pinged.
                if let Ok(outcome) = answer.try_recv() {
                    return Err(host.finish(method, Ok(outcome)));
                }
                let error = HostError::Hung {
                    method: method.to_string(),
                };
                host.kill(error.clone());
                Err(Err(error))
            }
            // Gone: the answer channel reports why on the next turn.
            Err(_) => Ok(()),
        }
    }
}

/// The notification that tells the host to abort a request's work: `cancel {callId}` for a
/// tool call, `provider.cancel {streamId}` for a provider stream.
#[derive(Debug, Clone)]
pub(crate) struct CancelNotice {
    method: &'static str,
    params: Value,
}

impl CancelNotice {
    pub(crate) fn tool(call_id: &str) -> CancelNotice {
        CancelNotice {
            method: "cancel",
            params: json!({ "callId": call_id }),
        }
    }

    pub(crate) fn provider_stream(stream_id: u64) -> CancelNotice {
        CancelNotice {
            method: "provider.cancel",
            params: json!({ "streamId": stream_id }),
        }
    }

    fn send(&self, host: &HostConnection) {
        // A host that is gone has nothing left to abort.
        let _ = host.notify(self.method, self.params.clone());
    }
}

/// A request not yet answered. When its caller stops waiting (a time limit, or the future is
/// dropped), the waiter is forgotten and the work is told to abort.
struct InFlight<'a> {
    host: &'a HostConnection,
    id: u64,
    notice: Option<CancelNotice>,
    answered: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        self.host.forget(self.id);
        if let Some(notice) = &self.notice {
            notice.send(self.host);
        }
    }
}

impl Drop for ExtensionRunner {
    fn drop(&mut self) {
        if let Some(host) = lock(&self.host).take() {
            host.kill(HostError::NotRunning);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_command_names_are_numbered_by_occurrence_around_names_already_taken() {
        assert_eq!(invocation_names(&["a", "b"]), ["a", "b"]);
        assert_eq!(invocation_names(&["dup", "x", "dup"]), ["dup:1", "x", "dup:2"]);
        // `m:1` is an extension's own name: the first `m` takes the next free number.
        assert_eq!(invocation_names(&["m:1", "m", "m"]), ["m:1", "m:2", "m:3"]);
    }

    /// Compiled, never run: the session must be able to spawn these futures on any runtime.
    #[allow(dead_code)]
    fn futures_are_send(runner: &'static ExtensionRunner, config: RunnerConfig, token: &'static CancellationToken) {
        fn send<T: Send>(_: T) {}
        send(ExtensionRunner::start(config, Arc::new(crate::handler::NoHandler)));
        send(runner.dispatch("input", Value::Null));
        send(runner.reload(None, true, None));
        send(runner.restart());
        let call = ToolCall {
            call_id: String::new(),
            name: String::new(),
            params: Value::Null,
        };
        send(runner.call_tool(call, None, token));
    }

    #[test]
    fn the_runner_can_be_shared_between_tasks() {
        fn share<T: Send + Sync>() {}
        share::<ExtensionRunner>();
    }

    #[test]
    fn registrations_give_the_first_owner_of_a_name() -> Result<(), serde_json::Error> {
        let ext = |path: &str, tool: &str| -> Result<ExtensionInfo, serde_json::Error> {
            serde_json::from_value(json!({
                "path": path,
                "resolvedPath": path,
                "tools": [{ "name": tool, "parameters": { "type": "object" } }],
                "events": ["input"],
            }))
        };
        let regs = Registrations {
            extensions: vec![ext("/a.ts", "t")?, ext("/b.ts", "t")?, ext("/c.ts", "u")?],
            errors: Vec::new(),
            mcp_servers: Vec::new(),
        };
        let owners: Vec<(&str, &str)> = regs
            .tools()
            .iter()
            .map(|(e, t)| (e.path.as_str(), t.name.as_str()))
            .collect();
        assert_eq!(owners, [("/a.ts", "t"), ("/c.ts", "u")]);
        assert!(regs.handles("input"));
        assert!(!regs.handles("context"));
        Ok(())
    }
}
