//! Signing in to and out of the session's OAuth servers, for `/mcp` (the screen drives a
//! [`McpSignIn`]: progress lines, a pasted redirect URL, cancel, the result), and picking up
//! sign-ins made elsewhere (`pi mcp login` in another terminal, or run by the agent) before a
//! prompt: a server that needs sign-in and now has stored tokens connects again.

use std::sync::Arc;

use pi_mcp::login::{start_login, LoginEvent, LoginHandle, LoginOptions, LoginResult};

use super::runtime::McpRuntime;
use super::server::{McpServer, Phase};

/// How long a sign-in from `/mcp` may take before it is given up.
pub const SIGN_IN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// A sign-in under way for one server.
pub struct McpSignIn {
    server: Arc<McpServer>,
    runtime: Arc<McpRuntime>,
    handle: LoginHandle,
}

impl McpSignIn {
    /// The next progress event; `None` once the sign-in ended (then call [`McpSignIn::finish`]).
    pub async fn next_event(&mut self) -> Option<LoginEvent> {
        self.handle.events.recv().await
    }

    /// The line a screen shows for an event.
    pub fn describe(event: &LoginEvent) -> String {
        match event {
            LoginEvent::Contacting => "Contacting the authorization server…".into(),
            LoginEvent::AuthorizationUrl(url) => format!("Open this URL to sign in:\n{url}"),
            LoginEvent::Connecting => "Connecting…".into(),
        }
    }

    /// Hand over the redirect URL the user pasted from the browser's address bar.
    pub fn paste_redirect_url(&self, url: &str) {
        self.handle.paste_redirect_url(url);
    }

    /// Paste and cancel, for a screen while another task waits for the events.
    pub fn controls(&self) -> SignInControls {
        SignInControls {
            paste: Arc::new(self.handle.paster()),
            cancel: self.handle.cancel_token(),
        }
    }

    /// Stop the sign-in (Esc); it finishes as cancelled.
    pub fn cancel(&self) {
        self.handle.cancel();
    }

    /// Wait for the end; a successful sign-in reconnects the server and registers its tools.
    /// Returns the result and the line to show (`Signed in to MCP server "x" (N tools).`).
    pub async fn finish(self) -> (LoginResult, String) {
        let name = self.server.name().to_string();
        let result = self.handle.result().await;
        let message = match &result {
            LoginResult::Cancelled => "Sign-in cancelled.".to_string(),
            LoginResult::Failed(error) | LoginResult::ConnectFailed(error) => format!("Sign-in failed: {error}"),
            other => other.message(&name, None),
        };
        if result.is_success() {
            if let Phase::Failed(error) | Phase::NeedsSignIn(error) = self.runtime.reconnect(&self.server).await {
                let line = format!("Signed in, but {}", error.lines().next().unwrap_or_default());
                return (LoginResult::SignedInButFailed(error), line);
            }
        }
        (result, message)
    }
}

/// What a sign-in screen does to a sign-in another task follows.
#[derive(Clone)]
pub struct SignInControls {
    paste: Arc<dyn Fn(String) + Send + Sync>,
    cancel: tokio_util::sync::CancellationToken,
}

impl SignInControls {
    pub fn paste_redirect_url(&self, url: &str) {
        (self.paste)(url.to_string());
    }

    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}

impl McpRuntime {
    fn server_named(&self, name: &str) -> Result<Arc<McpServer>, String> {
        self.servers()
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("No MCP server named \"{name}\"."))
    }

    /// Start signing in to `name` in the background (the browser is opened). Errors are the
    /// notices pi shows: unknown server, or one that does not use OAuth.
    pub fn start_sign_in(self: &Arc<Self>, name: &str) -> Result<McpSignIn, String> {
        let server = self.server_named(name)?;
        let options = server.connect_options().clone();
        let agent_dir = options
            .oauth_file
            .as_ref()
            .and_then(|f| f.path().parent().map(std::path::Path::to_path_buf))
            .ok_or_else(|| format!("MCP server \"{name}\" does not use OAuth."))?;
        pi_mcp::login::oauth_target(&server.entry, &agent_dir, &options)?;
        let handle = start_login(
            server.entry.clone(),
            LoginOptions {
                agent_dir,
                connect: options,
                timeout: Some(SIGN_IN_TIMEOUT),
                open_browser: true,
            },
        );
        Ok(McpSignIn {
            server,
            runtime: Arc::clone(self),
            handle,
        })
    }

    /// Forget the stored sign-in of `name` and drop its connection (it needs sign-in again).
    /// Returns the notice: `Signed out of MCP server "x".` or `No stored credentials …`.
    pub async fn sign_out(self: &Arc<Self>, name: &str) -> Result<String, String> {
        let server = self.server_named(name)?;
        let agent_dir = server
            .connect_options()
            .oauth_file
            .as_ref()
            .and_then(|f| f.path().parent().map(std::path::Path::to_path_buf))
            .ok_or_else(|| format!("MCP server \"{name}\" does not use OAuth."))?;
        let removed = pi_mcp::login::logout(&server.entry, &agent_dir)?;
        if removed {
            self.reconnect(&server).await;
            Ok(format!("Signed out of MCP server \"{name}\"."))
        } else {
            Ok(format!("No stored credentials for MCP server \"{name}\"."))
        }
    }

    /// Servers that need sign-in but whose tokens were stored meanwhile connect again.
    pub async fn pick_up_sign_ins(self: &Arc<Self>) {
        for server in self.servers() {
            if !matches!(server.phase(), Phase::NeedsSignIn(_)) {
                continue;
            }
            let options = server.connect_options();
            let (Some(file), pi_mcp::TransportConfig::Http { url, .. }) =
                (&options.oauth_file, &server.entry.config.transport)
            else {
                continue;
            };
            if file.tokens(server.name(), url).is_some() {
                self.reconnect(&server).await;
            }
        }
    }
}
