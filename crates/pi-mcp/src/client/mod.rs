//! The MCP client: one connection to one server over stdio or Streamable HTTP, built on rmcp and
//! kept behind this module's types so the rest of pi never names rmcp's.

mod handler;
pub mod http;
mod observe;
mod request;
pub mod stdio;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use handler::PiClientHandler;
pub use handler::{LogMessage, LogSink, Progress, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};
use http::{HttpAuth, HttpFailure, PiHttpClient};
use observe::Observed;
use stdio::{ProcessGuard, StderrTail};

use crate::config::resolve::{expand_home, resolve_cwd, resolve_value, EnvSource};
use crate::config::{ServerConfig, TransportConfig};
use crate::error::McpError;
use crate::oauth::{AuthFile, Challenge, OAuthHttp, OAuthSession, OAuthSettings, OAuthTarget};

/// Per-request timeout when the server configures none.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;
/// A stdio message longer than this is dropped (the connection stays open).
const MAX_STDIO_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Delays between connection attempts to an HTTP server after a transient failure.
const CONNECT_RETRY_DELAYS_MS: [u64; 2] = [250, 1_000];

/// Looks up a provider's login token, for servers with `auth: {provider}`.
pub type ProviderTokens = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What a connection needs from its host.
#[derive(Clone)]
pub struct ConnectOptions {
    /// The session cwd: the stdio servers' default cwd and the one root offered to servers.
    pub cwd: PathBuf,
    /// pi's version, sent as `clientInfo.version`.
    pub client_version: String,
    /// Where `$VAR` values come from.
    pub env: EnvSource,
    /// Receives `notifications/message`.
    pub log: Option<LogSink>,
    /// Tokens for `auth.provider` servers.
    pub provider_tokens: Option<ProviderTokens>,
    /// The HTTP client to share; a new one is built when absent.
    pub http_client: Option<reqwest::Client>,
    /// Where OAuth servers' tokens are stored (`<agentDir>/mcp-auth.json`); without it they
    /// connect without a token and report that they need sign-in.
    pub oauth_file: Option<AuthFile>,
}

impl ConnectOptions {
    pub fn new(cwd: impl Into<PathBuf>, client_version: impl Into<String>) -> Self {
        Self {
            cwd: cwd.into(),
            client_version: client_version.into(),
            env: EnvSource::Process,
            log: None,
            provider_tokens: None,
            http_client: None,
            oauth_file: None,
        }
    }
}

/// What the server said about itself in `initialize`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    pub protocol_version: String,
    pub name: String,
    pub version: String,
    pub instructions: Option<String>,
    pub capabilities: Value,
}

impl ServerInfo {
    pub fn has_tools(&self) -> bool {
        self.capabilities.get("tools").is_some_and(|t| !t.is_null())
    }

    /// Servers that declare resources are marked as offering them (they are not listed at connect).
    pub fn has_resources(&self) -> bool {
        self.capabilities.get("resources").is_some_and(|r| !r.is_null())
    }
}

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// With `type` defaulted to `object` and `properties` to `{}`.
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    /// The boolean hints `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`.
    pub annotations: Map<String, Value>,
}

/// Receives the progress notifications of one call.
pub type ProgressSink = Arc<dyn Fn(&Progress) + Send + Sync>;

impl McpTool {
    /// The description the model gets: the tool's (trimmed), else its title, else a generic one.
    pub fn model_description(&self, server: &str) -> String {
        match (
            self.description.as_deref().map(str::trim).filter(|d| !d.is_empty()),
            &self.title,
        ) {
            (Some(description), _) => description.to_string(),
            (None, Some(title)) if !title.is_empty() => title.clone(),
            _ => format!("MCP tool {} from server {server}", self.name),
        }
    }
}

/// How one call behaves.
#[derive(Default, Clone)]
pub struct CallOptions {
    /// Cancelling it aborts the call and sends `notifications/cancelled`.
    pub cancel: Option<CancellationToken>,
    /// Overrides the server's timeout for this call.
    pub timeout: Option<Duration>,
    /// Called with each progress notification of the call (each also restarts the timeout).
    pub on_progress: Option<ProgressSink>,
}

/// Why connecting failed, with the server's stderr tail for stdio servers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.message())]
pub struct ConnectError {
    pub error: McpError,
    pub stderr: Option<String>,
    /// For a server that needs sign-in: what its last 401 said (sign-in uses it).
    pub challenge: Option<Challenge>,
}

impl ConnectError {
    /// The error and the stderr tail on the following line, as pi shows failed servers.
    pub fn message(&self) -> String {
        match &self.stderr {
            Some(tail) if !tail.is_empty() => format!("{}\n{tail}", self.error),
            _ => self.error.to_string(),
        }
    }

    pub fn needs_sign_in(&self) -> bool {
        matches!(self.error, McpError::NeedsSignIn { .. })
    }
}

/// What a transport set-up hands to [`McpClient::finish`].
struct Parts {
    progress: broadcast::Sender<Progress>,
    tools_changed: watch::Receiver<u64>,
    stderr: Option<StderrTail>,
    process: Option<ProcessGuard>,
    closed: Arc<AtomicBool>,
}

/// One live connection.
pub struct McpClient {
    server: String,
    service: RunningService<RoleClient, PiClientHandler>,
    info: ServerInfo,
    timeout: Duration,
    progress: broadcast::Sender<Progress>,
    tools_changed: watch::Receiver<u64>,
    stderr: Option<StderrTail>,
    process: Option<ProcessGuard>,
    /// Set when the server's stream ended (process exit, dropped connection).
    closed: Arc<AtomicBool>,
}

fn timeout_of(config: &ServerConfig) -> Duration {
    let seconds = config.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::from_secs(60))
}

fn sign_in_error(server: &str, config: &ServerConfig) -> McpError {
    let hint = match config.auth_provider() {
        Some(provider) => format!("/login {provider}"),
        None => "/mcp".into(),
    };
    McpError::NeedsSignIn {
        server: server.to_string(),
        hint,
    }
}

/// Whether an error comes from a pipe or socket the server closed.
pub(crate) fn is_closed_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::{BrokenPipe, ConnectionReset, UnexpectedEof};
            if matches!(io.kind(), BrokenPipe | ConnectionReset | UnexpectedEof) {
                return true;
            }
        }
        current = e.source();
    }
    false
}

fn init_error(error: rmcp::service::ClientInitializeError) -> McpError {
    use rmcp::service::ClientInitializeError as E;
    if is_closed_pipe(&error) {
        return McpError::ConnectionClosed;
    }
    match error {
        E::ConnectionClosed(_) => McpError::ConnectionClosed,
        E::TransportError { error, .. } if is_closed_pipe(error.error.as_ref()) => McpError::ConnectionClosed,
        E::JsonRpcError(data) => McpError::Rpc {
            code: data.code.0,
            message: data.message.to_string(),
        },
        other => McpError::Transport(other.to_string()),
    }
}

/// The handshake, bounded by the server's request timeout like every other request.
async fn initialize<F>(
    handshake: F,
    config: &ServerConfig,
) -> Result<RunningService<RoleClient, PiClientHandler>, McpError>
where
    F: std::future::Future<
        Output = Result<RunningService<RoleClient, PiClientHandler>, rmcp::service::ClientInitializeError>,
    >,
{
    let timeout = timeout_of(config);
    match tokio::time::timeout(timeout, handshake).await {
        Ok(result) => result.map_err(init_error),
        Err(_) => Err(McpError::Timeout(
            u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        )),
    }
}

impl McpClient {
    /// Connect to a server: start it (stdio) or reach it (HTTP), then `initialize`, and check the
    /// protocol revision it chose.
    pub async fn connect(
        server: &str,
        config: &ServerConfig,
        options: &ConnectOptions,
    ) -> Result<McpClient, ConnectError> {
        let plain = |error: McpError| ConnectError {
            error,
            stderr: None,
            challenge: None,
        };
        match &config.transport {
            TransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut resolved = Vec::with_capacity(env.len());
                for (key, value) in env {
                    let what = format!("MCP server \"{server}\" env \"{key}\"");
                    resolved.push((
                        key.clone(),
                        resolve_value(value, &what, &options.env).map_err(|e| plain(McpError::Config(e)))?,
                    ));
                }
                let command = expand_home(command);
                let args: Vec<String> = args.iter().map(|a| expand_home(a)).collect();
                let dir = resolve_cwd(&options.cwd, cwd.as_deref());
                let spawned = stdio::spawn_server(&command, &args, &resolved, &dir).map_err(plain)?;
                let handler = PiClientHandler::new(&options.cwd, &options.client_version, options.log.clone())
                    .map_err(|e| plain(McpError::Transport(e.to_string())))?;
                let progress = handler.progress.clone();
                let tools_changed = handler.tools_changed.subscribe();
                let stderr = spawned.stderr.clone();
                let closed = Arc::new(AtomicBool::new(false));
                let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(spawned.stdout, spawned.stdin)
                    .with_max_line_length(MAX_STDIO_MESSAGE_BYTES);
                let transport = Observed::new(transport, progress.clone(), closed.clone());
                match initialize(handler.serve(transport), config).await {
                    Ok(service) => {
                        let parts = Parts {
                            progress,
                            tools_changed,
                            stderr: Some(stderr),
                            process: Some(spawned.guard),
                            closed,
                        };
                        Self::finish(server, config, service, parts).await
                    }
                    Err(error) => {
                        drop(spawned.guard);
                        stderr.settle(Duration::from_millis(200)).await;
                        Err(ConnectError {
                            error,
                            stderr: Some(stderr.shown()),
                            challenge: None,
                        })
                    }
                }
            }
            TransportConfig::Http { url, headers, .. } => {
                let mut map = reqwest::header::HeaderMap::new();
                for (key, value) in headers {
                    let what = format!("MCP server \"{server}\" header \"{key}\"");
                    let value = resolve_value(value, &what, &options.env).map_err(|e| plain(McpError::Config(e)))?;
                    let name = reqwest::header::HeaderName::from_bytes(key.as_bytes()).map_err(|_| {
                        plain(McpError::Config(format!(
                            "MCP server \"{server}\" header \"{key}\" is not a valid header name"
                        )))
                    })?;
                    let value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
                        plain(McpError::Config(format!(
                            "MCP server \"{server}\" header \"{key}\" is not a valid header value"
                        )))
                    })?;
                    map.insert(name, value);
                }
                let client = options.http_client.clone().unwrap_or_default();
                let oauth = match (&options.oauth_file, config.uses_oauth()) {
                    (Some(file), true) => {
                        let oauth_config = match &config.transport {
                            TransportConfig::Http { oauth, .. } => oauth.as_ref(),
                            TransportConfig::Stdio { .. } => None,
                        };
                        let settings = OAuthSettings::from_config(oauth_config, server, &options.env)
                            .map_err(|e| plain(McpError::Config(e.to_string())))?;
                        Some(Arc::new(OAuthSession::new(OAuthTarget {
                            server: server.to_string(),
                            url: url.clone(),
                            settings,
                            file: file.clone(),
                            http: OAuthHttp::new(client.clone()),
                        })))
                    }
                    _ => None,
                };
                let auth: Option<HttpAuth> = match (config.auth_provider(), &options.provider_tokens, &oauth) {
                    (Some(provider), Some(tokens), _) => {
                        let provider = provider.to_string();
                        let tokens = tokens.clone();
                        Some(HttpAuth::Provider(Arc::new(move || tokens(&provider))))
                    }
                    (None, _, Some(session)) => Some(HttpAuth::OAuth(session.clone())),
                    _ => None,
                };
                let mut attempt = 0;
                loop {
                    let http = PiHttpClient::new(client.clone(), map.clone(), auth.clone());
                    match Self::connect_http(server, config, options, url, http.clone()).await {
                        Ok(connected) => return Ok(connected),
                        Err(error) => {
                            if http.last_failure() == HttpFailure::AuthRequired {
                                return Err(ConnectError {
                                    error: sign_in_error(server, config),
                                    stderr: None,
                                    challenge: oauth.as_ref().and_then(|o| o.challenge()),
                                });
                            }
                            let transient = http.last_failure() == HttpFailure::Transient;
                            let error = match (http.send_error(), &error.error) {
                                (Some(message), McpError::Transport(_)) => plain(McpError::Transport(message)),
                                _ => error,
                            };
                            match CONNECT_RETRY_DELAYS_MS.get(attempt) {
                                Some(delay) if transient => tokio::time::sleep(Duration::from_millis(*delay)).await,
                                _ => return Err(error),
                            }
                            attempt += 1;
                        }
                    }
                }
            }
        }
    }

    async fn connect_http(
        server: &str,
        config: &ServerConfig,
        options: &ConnectOptions,
        url: &str,
        http: PiHttpClient,
    ) -> Result<McpClient, ConnectError> {
        let plain = |error: McpError| ConnectError {
            error,
            stderr: None,
            challenge: None,
        };
        let handler = PiClientHandler::new(&options.cwd, &options.client_version, options.log.clone())
            .map_err(|e| plain(McpError::Transport(e.to_string())))?;
        let progress = handler.progress.clone();
        let tools_changed = handler.tools_changed.subscribe();
        let transport = StreamableHttpClientTransport::with_client(
            http,
            StreamableHttpClientTransportConfig::with_uri(url.to_string()),
        );
        let closed = Arc::new(AtomicBool::new(false));
        let transport = Observed::new(transport, progress.clone(), closed.clone());
        let service = initialize(handler.serve(transport), config).await.map_err(plain)?;
        let parts = Parts {
            progress,
            tools_changed,
            stderr: None,
            process: None,
            closed,
        };
        Self::finish(server, config, service, parts).await
    }

    async fn finish(
        server: &str,
        config: &ServerConfig,
        service: RunningService<RoleClient, PiClientHandler>,
        parts: Parts,
    ) -> Result<McpClient, ConnectError> {
        let Parts {
            progress,
            tools_changed,
            stderr,
            process,
            closed,
        } = parts;
        let peer_info = service.peer().peer_info();
        let info = peer_info.map(|info| {
            let implementation = info.server_info.as_ref();
            ServerInfo {
                protocol_version: info.protocol_version.to_string(),
                name: implementation.map(|i| i.name.clone()).unwrap_or_default(),
                version: implementation.map(|i| i.version.clone()).unwrap_or_default(),
                instructions: info.instructions.clone(),
                capabilities: serde_json::to_value(&info.capabilities).unwrap_or(Value::Null),
            }
        });
        let fail = |error: McpError| ConnectError {
            error,
            stderr: stderr.as_ref().map(StderrTail::shown),
            challenge: None,
        };
        let Some(info) = info else {
            return Err(fail(McpError::InvalidResult("Invalid MCP initialize result".into())));
        };
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&info.protocol_version.as_str()) {
            let error = fail(McpError::UnsupportedProtocolVersion(info.protocol_version.clone()));
            let _ = service.cancel().await;
            return Err(error);
        }
        Ok(McpClient {
            server: server.to_string(),
            service,
            info,
            timeout: timeout_of(config),
            progress,
            tools_changed,
            stderr,
            process,
            closed,
        })
    }

    pub fn server_name(&self) -> &str {
        &self.server
    }

    pub fn server_info(&self) -> &ServerInfo {
        &self.info
    }

    /// The per-request timeout in use.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The last 2 000 characters the server wrote to stderr (stdio servers only).
    pub fn stderr_tail(&self) -> Option<String> {
        self.stderr.as_ref().map(StderrTail::shown)
    }

    /// Whether the connection has dropped (the process exited, the stream ended).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst) || self.service.is_closed()
    }

    /// Changes each time the server sends `notifications/tools/list_changed`.
    pub fn tool_list_changes(&self) -> watch::Receiver<u64> {
        self.tools_changed.clone()
    }

    /// Close the connection: for stdio servers close stdin, then end the process group as MCP asks.
    pub async fn close(mut self) {
        let _ = self.service.close().await;
        if let Some(process) = self.process.take() {
            process.shutdown().await;
        }
    }
}
