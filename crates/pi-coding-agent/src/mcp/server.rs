//! One configured MCP server in a pi process: its connection state (starting, connecting,
//! connected with its tools, needs sign-in, failed), connecting in the background, reconnecting
//! for a call after the connection dropped, and closing at exit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pi_mcp::{ConnectOptions, Exposure, McpClient, McpTool, ServerEntry};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// A live connection and what the server offered when it was made.
pub struct Connection {
    pub client: Arc<McpClient>,
    pub tools: Vec<McpTool>,
}

/// Where a server is.
#[derive(Clone)]
pub enum Phase {
    /// `enabled: false` in its configuration: it never connects.
    Disabled,
    /// Configured and enabled, not yet asked to connect.
    Starting,
    Connecting,
    Connected(Arc<Connection>),
    NeedsSignIn(String),
    Failed(String),
    /// Closed at exit.
    Closed,
}

impl Phase {
    fn settled(&self) -> bool {
        !matches!(self, Phase::Starting | Phase::Connecting)
    }

    /// pi's short form for status lines (`connected, 3 tools`).
    pub fn describe(&self) -> String {
        match self {
            Phase::Disabled => "disabled".into(),
            Phase::Starting => "starting".into(),
            Phase::Connecting => "connecting".into(),
            Phase::Connected(c) => {
                let n = c.tools.len();
                format!("connected, {n} tool{}", if n == 1 { "" } else { "s" })
            }
            Phase::NeedsSignIn(_) => "needs sign-in".into(),
            Phase::Failed(_) => "failed".into(),
            Phase::Closed => "disconnected".into(),
        }
    }
}

pub struct McpServer {
    pub entry: ServerEntry,
    options: ConnectOptions,
    phase: watch::Sender<Phase>,
    /// One connection attempt at a time (startup, or a call that found the connection gone).
    connecting: tokio::sync::Mutex<()>,
    /// `enabled` of its configuration, until `/mcp` enables or disables it for the run.
    enabled: AtomicBool,
}

impl McpServer {
    pub fn new(entry: ServerEntry, options: ConnectOptions) -> Arc<McpServer> {
        let initial = if entry.config.enabled {
            Phase::Starting
        } else {
            Phase::Disabled
        };
        Arc::new(McpServer {
            enabled: AtomicBool::new(entry.config.enabled),
            entry,
            options,
            phase: watch::Sender::new(initial),
            connecting: tokio::sync::Mutex::new(()),
        })
    }

    pub fn name(&self) -> &str {
        &self.entry.name
    }

    /// How it connects (cwd, log, tokens, the OAuth credential file).
    pub fn connect_options(&self) -> &ConnectOptions {
        &self.options
    }

    pub fn phase(&self) -> Phase {
        self.phase.borrow().clone()
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::SeqCst)
    }

    /// Follow its phase (`/mcp` redraws when a server connects, fails or closes).
    pub fn watch_phase(&self) -> watch::Receiver<Phase> {
        self.phase.subscribe()
    }

    /// Disable it for the rest of the run: the connection closes and it stays `Disabled`.
    pub async fn disable(&self) {
        let _turn = self.connecting.lock().await;
        self.enabled.store(false, Ordering::SeqCst);
        if let Phase::Connected(c) = self.phase.send_replace(Phase::Disabled) {
            close_connection(c).await;
        }
    }

    /// Enable a disabled server and connect it; the phase says how it went.
    pub async fn enable(&self) -> Phase {
        {
            let _turn = self.connecting.lock().await;
            self.enabled.store(true, Ordering::SeqCst);
            if matches!(self.phase(), Phase::Disabled) {
                self.phase.send_replace(Phase::Starting);
            }
        }
        self.connect().await
    }

    /// The exposures its tools can have, known from the configuration before it connects.
    fn configured_exposures(&self) -> Vec<Exposure> {
        let config = &self.entry.config;
        std::iter::once(config.exposure)
            .chain(config.tool_exposure.iter().map(|(_, e)| *e))
            .collect()
    }

    pub fn has_exposure(&self, exposure: Exposure) -> bool {
        self.configured_exposures().contains(&exposure)
    }

    /// Some of its tools are declared to the model, so the first prompt waits for it.
    pub fn has_direct_tools(&self) -> bool {
        self.configured_exposures().contains(&Exposure::Direct)
    }

    /// Some of its tools are reached only through codemode or tool_search.
    pub fn has_indirect_tools(&self) -> bool {
        self.configured_exposures()
            .iter()
            .any(|e| matches!(e, Exposure::Codemode | Exposure::Deferred))
    }

    /// Whether its server-level exposure is codemode (else its indirect tools are deferred).
    pub fn reached_by_codemode(&self) -> bool {
        self.configured_exposures().contains(&Exposure::Codemode)
    }

    /// The server's `instructions`, once connected.
    pub fn instructions(&self) -> Option<String> {
        match &*self.phase.borrow() {
            Phase::Connected(c) => c.client.server_info().instructions.clone(),
            _ => None,
        }
    }

    /// Connect and list the tools; the phase says how it went. A server already connected is
    /// left as it is.
    pub async fn connect(&self) -> Phase {
        let _turn = self.connecting.lock().await;
        match self.phase() {
            Phase::Connected(c) if !c.client.is_closed() => return Phase::Connected(c),
            Phase::Disabled | Phase::Closed => return self.phase(),
            _ => {}
        }
        self.phase.send_replace(Phase::Connecting);
        let phase = match McpClient::connect(&self.entry.name, &self.entry.config, &self.options).await {
            Err(error) if error.needs_sign_in() => Phase::NeedsSignIn(error.message()),
            Err(error) => Phase::Failed(error.message()),
            Ok(client) => match client.list_tools().await {
                Ok(tools) => Phase::Connected(Arc::new(Connection {
                    client: Arc::new(client),
                    tools,
                })),
                Err(error) => {
                    let tail = client.stderr_tail().filter(|t| !t.is_empty());
                    client.close().await;
                    Phase::Failed(match tail {
                        Some(tail) => format!("{error}\n{tail}"),
                        None => error.to_string(),
                    })
                }
            },
        };
        // Shutdown may have closed the server while this attempt ran.
        if matches!(self.phase(), Phase::Closed) {
            if let Phase::Connected(c) = phase {
                close_connection(c).await;
            }
            return Phase::Closed;
        }
        self.phase.send_replace(phase.clone());
        phase
    }

    /// List the tools again (the server said `notifications/tools/list_changed`) and keep the
    /// new list with the connection; `None` when not connected or the listing failed.
    pub async fn refresh_tools(&self) -> Option<Arc<Connection>> {
        let Phase::Connected(connection) = self.phase() else {
            return None;
        };
        let tools = connection.client.list_tools().await.ok()?;
        let refreshed = Arc::new(Connection {
            client: Arc::clone(&connection.client),
            tools,
        });
        // Only if nothing else replaced the connection meanwhile.
        let mut kept = false;
        self.phase.send_if_modified(|phase| match phase {
            Phase::Connected(current) if Arc::ptr_eq(current, &connection) => {
                *phase = Phase::Connected(Arc::clone(&refreshed));
                kept = true;
                true
            }
            _ => false,
        });
        kept.then_some(refreshed)
    }

    /// Wait until the server is connected or has failed (or `limit` passes); true if settled.
    pub async fn settled(&self, limit: Option<Duration>) -> bool {
        let mut rx = self.phase.subscribe();
        let wait = rx.wait_for(Phase::settled);
        match limit {
            Some(limit) => tokio::time::timeout(limit, wait).await.is_ok_and(|r| r.is_ok()),
            None => wait.await.is_ok(),
        }
    }

    /// The connection a call uses: waits for startup, reconnects once when the connection
    /// dropped; the error is what the model is told.
    pub async fn client_for_call(&self, cancel: &CancellationToken) -> Result<Arc<McpClient>, String> {
        let name = &self.entry.name;
        tokio::select! {
            _ = self.settled(None) => {}
            _ = cancel.cancelled() => return Err("MCP request aborted".into()),
        }
        let phase = match self.phase() {
            Phase::Connected(c) if c.client.is_closed() => {
                tokio::select! {
                    phase = self.connect() => phase,
                    _ = cancel.cancelled() => return Err("MCP request aborted".into()),
                }
            }
            phase => phase,
        };
        match phase {
            Phase::Connected(c) => Ok(Arc::clone(&c.client)),
            Phase::Disabled => Err(format!("MCP server \"{name}\" is disabled.")),
            Phase::Starting | Phase::Connecting => Err(format!("MCP server \"{name}\" is still starting.")),
            Phase::NeedsSignIn(message) | Phase::Failed(message) => Err(message),
            Phase::Closed => Err(format!("MCP server \"{name}\" is closed.")),
        }
    }

    /// Drop the connection (if any) and connect again; the phase says how it went. A disabled
    /// or closed server stays as it is.
    pub async fn reconnect(&self) -> Phase {
        {
            let _turn = self.connecting.lock().await;
            match self.phase() {
                Phase::Disabled | Phase::Closed => return self.phase(),
                _ => {}
            }
            if let Phase::Connected(c) = self.phase.send_replace(Phase::Starting) {
                close_connection(c).await;
            }
        }
        self.connect().await
    }

    /// Close the connection (stdio servers: stdin closed, then the process group ended).
    pub async fn close(&self) {
        let _turn = self.connecting.lock().await;
        if let Phase::Connected(c) = self.phase.send_replace(Phase::Closed) {
            close_connection(c).await;
        }
    }
}

async fn close_connection(connection: Arc<Connection>) {
    match Arc::try_unwrap(connection) {
        Ok(connection) => match Arc::try_unwrap(connection.client) {
            Ok(client) => client.close().await,
            // A call still holds it; its process group is ended when the last holder drops it.
            Err(client) => drop(client),
        },
        Err(shared) => drop(shared),
    }
}
