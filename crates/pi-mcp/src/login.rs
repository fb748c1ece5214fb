//! Signing in to and out of one configured OAuth server, for `pi mcp login|logout` and for the
//! terminal UI's `/mcp`: [`start_login`] connects first (a server that needs no sign-in says so),
//! else runs the browser sign-in, reporting its progress, accepting a pasted redirect URL, and
//! stopping on cancel; then it connects again to count the tools.

use std::path::Path;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::client::{ConnectError, ConnectOptions, McpClient};
use crate::config::{ServerEntry, TransportConfig};
use crate::oauth::{
    sign_in, AuthFile, Challenge, OAuthError, OAuthHttp, OAuthSettings, OAuthTarget, SignInEvent, SignInOptions,
};

/// Progress of a sign-in, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginEvent {
    /// Discovery and client registration (`Contacting the authorization server…`).
    Contacting,
    /// Open this URL to approve access; a redirect URL may be pasted from now on.
    AuthorizationUrl(String),
    /// The approval arrived; tokens are exchanged and the server is connected again.
    Connecting,
}

/// How a sign-in ended; `message` is the line pi shows for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginResult {
    /// Connecting worked without signing in.
    AlreadySignedIn {
        tools: usize,
    },
    SignedIn {
        tools: usize,
    },
    /// Cancelled, or not done within the timeout.
    Cancelled,
    /// The server does not sign in with OAuth (stdio, an Authorization header, `auth.provider`).
    NotOAuth(String),
    /// It failed to connect for another reason than sign-in.
    ConnectFailed(String),
    Failed(String),
    /// Signed in, but connecting afterwards failed.
    SignedInButFailed(String),
}

impl LoginResult {
    /// The line pi prints for this result (`timeout_secs` for the cancelled one).
    pub fn message(&self, server: &str, timeout_secs: Option<f64>) -> String {
        match self {
            Self::AlreadySignedIn { tools } => format!("Already signed in to MCP server \"{server}\" ({tools} tools)."),
            Self::SignedIn { tools } => format!("Signed in to MCP server \"{server}\" ({tools} tools)."),
            Self::Cancelled => match timeout_secs {
                Some(secs) => format!(
                    "Sign-in to MCP server \"{server}\" was cancelled or not completed within {} seconds.",
                    secs.round()
                ),
                None => "Sign-in cancelled.".to_string(),
            },
            Self::NotOAuth(message) => message.clone(),
            Self::ConnectFailed(error) => format!("MCP server \"{server}\" failed to connect: {error}"),
            Self::Failed(error) => format!("Sign-in to MCP server \"{server}\" failed: {error}"),
            Self::SignedInButFailed(error) => format!("Signed in, but {error}"),
        }
    }

    pub fn is_success(&self) -> bool {
        matches!(self, Self::AlreadySignedIn { .. } | Self::SignedIn { .. })
    }
}

/// A sign-in running in the background.
pub struct LoginHandle {
    /// Progress, in order; closed when the sign-in ends.
    pub events: mpsc::UnboundedReceiver<LoginEvent>,
    paste: mpsc::Sender<String>,
    cancel: CancellationToken,
    result: oneshot::Receiver<LoginResult>,
}

impl LoginHandle {
    /// Hand over a redirect URL the user pasted from the browser's address bar.
    pub fn paste_redirect_url(&self, url: impl Into<String>) {
        let _ = self.paste.try_send(url.into());
    }

    /// A function that hands over a pasted redirect URL, for another task to call.
    pub fn paster(&self) -> impl Fn(String) + Send + Sync + 'static {
        let paste = self.paste.clone();
        move |url| {
            let _ = paste.try_send(url);
        }
    }

    /// Stop the sign-in; it ends with [`LoginResult::Cancelled`].
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Wait for the end.
    pub async fn result(self) -> LoginResult {
        self.result.await.unwrap_or(LoginResult::Cancelled)
    }
}

/// What a sign-in needs besides the server.
pub struct LoginOptions {
    pub agent_dir: std::path::PathBuf,
    /// How the server is connected (cwd, env, log); its `oauth_file` is set to the agent dir's.
    pub connect: ConnectOptions,
    /// Give up after this long.
    pub timeout: Option<std::time::Duration>,
    /// Open the authorization URL in the browser.
    pub open_browser: bool,
}

/// The OAuth target of `entry`, or the message saying why it has none.
pub fn oauth_target(entry: &ServerEntry, agent_dir: &Path, options: &ConnectOptions) -> Result<OAuthTarget, String> {
    let name = &entry.name;
    if let Some(provider) = entry.config.auth_provider() {
        return Err(format!(
            "MCP server \"{name}\" uses the credentials of provider \"{provider}\"."
        ));
    }
    let (url, oauth) = match &entry.config.transport {
        TransportConfig::Http { url, oauth, .. } if entry.config.uses_oauth() => (url.clone(), oauth.clone()),
        _ => {
            return Err(format!(
                "MCP server \"{name}\" does not use OAuth. Only HTTP servers without an Authorization header do."
            ))
        }
    };
    let settings = OAuthSettings::from_config(oauth.as_ref(), name, &options.env).map_err(|e| e.to_string())?;
    Ok(OAuthTarget {
        server: name.clone(),
        url,
        settings,
        file: AuthFile::in_agent_dir(agent_dir),
        http: OAuthHttp::new(options.http_client.clone().unwrap_or_default()),
    })
}

/// Delete the stored sign-in of `entry`; whether there was one.
pub fn logout(entry: &ServerEntry, agent_dir: &Path) -> Result<bool, String> {
    let options = ConnectOptions::new(agent_dir, "");
    let target = oauth_target(entry, agent_dir, &options)?;
    target
        .file
        .remove(&target.server, &target.url)
        .map_err(|e| e.to_string())
}

enum Probed {
    Connected(usize),
    NeedsSignIn(Option<Challenge>),
    Failed(String),
}

async fn connect_and_count(entry: &ServerEntry, options: &ConnectOptions) -> Probed {
    let failed = |error: ConnectError| {
        if error.needs_sign_in() {
            Probed::NeedsSignIn(error.challenge)
        } else {
            Probed::Failed(error.message())
        }
    };
    let client = match McpClient::connect(&entry.name, &entry.config, options).await {
        Ok(client) => client,
        Err(error) => return failed(error),
    };
    let tools = client.list_tools().await;
    client.close().await;
    match tools {
        Ok(tools) => Probed::Connected(tools.len()),
        Err(error) => Probed::Failed(error.to_string()),
    }
}

/// Start signing in to `entry` in the background (on the current tokio runtime).
pub fn start_login(entry: ServerEntry, mut options: LoginOptions) -> LoginHandle {
    let (events_tx, events) = mpsc::unbounded_channel();
    let (paste, mut pasted) = mpsc::channel::<String>(4);
    let (result_tx, result) = oneshot::channel();
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    options.connect.oauth_file = Some(AuthFile::in_agent_dir(&options.agent_dir));
    if let Some(timeout) = options.timeout {
        let token = cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(timeout) => token.cancel(),
                _ = token.cancelled() => {}
            }
        });
    }
    tokio::spawn(async move {
        let outcome = run(&entry, &options, &token, &events_tx, &mut pasted).await;
        token.cancel();
        let _ = result_tx.send(outcome);
    });
    LoginHandle {
        events,
        paste,
        cancel,
        result,
    }
}

async fn run(
    entry: &ServerEntry,
    options: &LoginOptions,
    cancel: &CancellationToken,
    events: &mpsc::UnboundedSender<LoginEvent>,
    pasted: &mut mpsc::Receiver<String>,
) -> LoginResult {
    let target = match oauth_target(entry, &options.agent_dir, &options.connect) {
        Ok(target) => target,
        Err(message) => return LoginResult::NotOAuth(message),
    };
    // Connecting first answers whether a sign-in is needed and records the server's challenge.
    let challenge = tokio::select! {
        _ = cancel.cancelled() => return LoginResult::Cancelled,
        probed = connect_and_count(entry, &options.connect) => match probed {
            Probed::Connected(tools) => return LoginResult::AlreadySignedIn { tools },
            Probed::NeedsSignIn(challenge) => challenge,
            Probed::Failed(error) => return LoginResult::ConnectFailed(error),
        },
    };
    let (paste_tx, paste_rx) = mpsc::channel(4);
    let forward = async {
        while let Some(url) = pasted.recv().await {
            if paste_tx.send(url).await.is_err() {
                break;
            }
        }
        std::future::pending::<()>().await;
    };
    let sender = events.clone();
    let signing = sign_in(SignInOptions {
        target,
        challenge,
        cancel: cancel.clone(),
        on_event: std::sync::Arc::new(move |event| {
            let _ = sender.send(match event {
                SignInEvent::Contacting => LoginEvent::Contacting,
                SignInEvent::AuthorizationUrl(url) => LoginEvent::AuthorizationUrl(url),
                SignInEvent::Exchanging => LoginEvent::Connecting,
            });
        }),
        pasted: Some(paste_rx),
        open_browser: options.open_browser,
    });
    let signed = tokio::select! {
        r = signing => r,
        _ = forward => Err(OAuthError::Cancelled),
    };
    match signed {
        Ok(_) => {}
        Err(OAuthError::Cancelled) => return LoginResult::Cancelled,
        Err(error) => return LoginResult::Failed(error.to_string()),
    }
    match connect_and_count(entry, &options.connect).await {
        Probed::Connected(tools) => LoginResult::SignedIn { tools },
        Probed::NeedsSignIn(_) => {
            LoginResult::SignedInButFailed(format!("MCP server \"{}\" still requires sign-in.", entry.name))
        }
        Probed::Failed(error) => LoginResult::SignedInButFailed(error),
    }
}
