//! `/mcp` outside the terminal UI (print, JSON and RPC modes): the servers' state as plain
//! text, `reconnect`, `logout` and `login`, each answered with a notice; print and JSON modes
//! show notices nowhere (and cannot sign in). In RPC mode `login` names the authorization URL
//! in a notice and asks, through an input dialog, for the URL the browser was redirected to;
//! the dialog is withdrawn once the browser came back by itself. An extension that registers
//! its own `/mcp` runs instead.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::extension_ui::{DialogOptions, ExtensionUiHost, NotifyType};
use crate::mcp::runtime::McpRuntime;
use crate::mcp::server::{McpServer, Phase};
use crate::session::AgentSession;

const USAGE: &str = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";
const NO_OAUTH: &str = "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.";

/// The arguments of `/mcp ...` when `text` is that command and MCP is on.
pub fn command_args<'t>(session: &AgentSession, text: &'t str) -> Option<&'t str> {
    let rest = text.strip_prefix("/mcp")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) || !session.services().mcp().is_on() {
        return None;
    }
    Some(rest.trim())
}

/// Run `/mcp <args>` and say what came of it.
pub async fn run(session: &AgentSession, args: &str) {
    let runtime = Arc::clone(session.services().mcp());
    let (text, kind) = answer(session, &runtime, args).await;
    session.services().extensions().ui().notify(&text, Some(kind)).await;
}

async fn answer(session: &AgentSession, runtime: &Arc<McpRuntime>, args: &str) -> (String, NotifyType) {
    let words: Vec<&str> = args.split_whitespace().collect();
    if words.is_empty() {
        runtime.wait_for_all().await;
        return (status_text(session, runtime), NotifyType::Info);
    }
    if words.len() > 2 {
        return (USAGE.into(), NotifyType::Warning);
    }
    runtime.wait_for_all().await;
    let name = words.get(1).copied();
    match words[0] {
        "login" | "logout" => {
            let server = match pick(
                runtime,
                name,
                uses_oauth,
                |s| matches!(s.phase(), Phase::NeedsSignIn(_)),
                NO_OAUTH,
            ) {
                Ok(server) => server,
                Err(e) => return e,
            };
            if words[0] == "login" {
                let ui = session.services().extensions().ui();
                if !ui.has_ui() {
                    let text = format!(
                        "Signing in to MCP server \"{}\" requires interactive mode.",
                        server.name()
                    );
                    return (text, NotifyType::Error);
                }
                return sign_in(runtime, &server, ui).await;
            }
            match runtime.sign_out(server.name()).await {
                Ok(text) => (text, NotifyType::Info),
                Err(e) => (e, NotifyType::Error),
            }
        }
        "reconnect" => {
            let server = match pick(
                runtime,
                name,
                |s| s.is_enabled(),
                |s| matches!(s.phase(), Phase::Failed(_) | Phase::Closed),
                "No enabled MCP server to reconnect.",
            ) {
                Ok(server) => server,
                Err(e) => return e,
            };
            match runtime.reconnect(&server).await {
                Phase::Failed(error) => (
                    format!("MCP server \"{}\" failed to connect: {error}", server.name()),
                    NotifyType::Error,
                ),
                _ => (
                    format!(
                        "Reconnected to MCP server \"{}\" ({}).",
                        server.name(),
                        describe_state(&server)
                    ),
                    NotifyType::Info,
                ),
            }
        }
        _ => (USAGE.into(), NotifyType::Warning),
    }
}

/// Sign in through the mode's dialogs: the URL in a notice, a pasted redirect URL through an
/// input dialog.
async fn sign_in(runtime: &Arc<McpRuntime>, server: &McpServer, ui: Arc<dyn ExtensionUiHost>) -> (String, NotifyType) {
    let name = server.name().to_string();
    let mut sign_in = match runtime.start_sign_in(&name) {
        Ok(sign_in) => sign_in,
        Err(e) => return (e, NotifyType::Error),
    };
    let controls = sign_in.controls();
    // Ends the input dialog once the browser's redirect arrived (or the sign-in ended).
    let answered = CancellationToken::new();
    while let Some(event) = sign_in.next_event().await {
        match event {
            pi_mcp::login::LoginEvent::AuthorizationUrl(url) => {
                let text = format!("Sign in to MCP server \"{name}\" in your browser:\n{url}");
                ui.notify(&text, Some(NotifyType::Info)).await;
                let (ui, controls, answered, name) =
                    (Arc::clone(&ui), controls.clone(), answered.clone(), name.clone());
                tokio::spawn(async move {
                    let title = format!(
                        "Waiting for sign-in to \"{name}\". If the browser cannot reach this machine, paste the URL it was redirected to."
                    );
                    let options = DialogOptions {
                        timeout: None,
                        cancel: Some(answered),
                    };
                    let pasted = ui
                        .input(&title, Some("http://127.0.0.1:.../callback?code=..."), options)
                        .await;
                    if let Some(url) = pasted.filter(|u| !u.trim().is_empty()) {
                        controls.paste_redirect_url(url.trim());
                    }
                });
            }
            pi_mcp::login::LoginEvent::Connecting => answered.cancel(),
            pi_mcp::login::LoginEvent::Contacting => {}
        }
    }
    answered.cancel();
    let (result, line) = sign_in.finish().await;
    let kind = match result {
        r if r.is_success() => NotifyType::Info,
        pi_mcp::login::LoginResult::Cancelled => NotifyType::Info,
        _ => NotifyType::Error,
    };
    (line, kind)
}

fn uses_oauth(server: &McpServer) -> bool {
    server.is_enabled() && server.entry.config.uses_oauth()
}

/// The server a subcommand means: the one named, or the only one that fits (or the only one
/// of those that is `preferred`).
fn pick(
    runtime: &McpRuntime,
    name: Option<&str>,
    eligible: impl Fn(&McpServer) -> bool,
    preferred: impl Fn(&McpServer) -> bool,
    none: &str,
) -> Result<Arc<McpServer>, (String, NotifyType)> {
    let servers = runtime.servers();
    if let Some(name) = name {
        return match servers.into_iter().find(|s| s.name() == name) {
            None => Err((format!("No MCP server named \"{name}\"."), NotifyType::Error)),
            Some(s) if !eligible(&s) => Err((none.to_string(), NotifyType::Error)),
            Some(s) => Ok(s),
        };
    }
    let candidates: Vec<_> = servers.into_iter().filter(|s| eligible(s)).collect();
    let wanted: Vec<_> = candidates.iter().filter(|s| preferred(s)).cloned().collect();
    match (candidates.len(), wanted.len()) {
        (0, _) => Err((none.to_string(), NotifyType::Info)),
        (1, _) => Ok(Arc::clone(&candidates[0])),
        (_, 1) => Ok(Arc::clone(&wanted[0])),
        _ => Err((
            format!(
                "Name the MCP server: {}.",
                candidates.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
            ),
            NotifyType::Warning,
        )),
    }
}

/// The short state of a server (`connected · 3 tools · resources`).
fn describe_state(server: &McpServer) -> String {
    match server.phase() {
        Phase::Disabled => "disabled".into(),
        Phase::Starting => "starting".into(),
        Phase::Connecting => "connecting…".into(),
        Phase::NeedsSignIn(_) => "needs sign-in".into(),
        Phase::Failed(error) => format!("failed: {}", error.lines().next().unwrap_or("unknown error")),
        Phase::Closed => "disconnected".into(),
        Phase::Connected(c) => {
            let n = c.tools.len();
            let resources = if c.client.server_info().has_resources() {
                " · resources"
            } else {
                ""
            };
            format!("connected · {n} tool{}{resources}", if n == 1 { "" } else { "s" })
        }
    }
}

/// One line per server (`demo: connected, 6 tools (deferred)`, an indented error under a
/// failed one), then the configuration errors.
pub fn status_text(session: &AgentSession, runtime: &McpRuntime) -> String {
    let servers = runtime.servers();
    let errors = runtime.config_errors();
    if servers.is_empty() && errors.is_empty() {
        let global = crate::config::paths::Paths::for_cwd(session.cwd())
            .agent_dir
            .join("mcp.json");
        return format!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            global.display()
        );
    }
    let mut lines: Vec<String> = servers
        .iter()
        .map(|server| {
            let name = server.name();
            let exposure = server.entry.config.exposure.as_str();
            let (state, tools, error) = match server.phase() {
                Phase::NeedsSignIn(_) => return format!("{name}: needs sign-in, run /mcp login {name} ({exposure})"),
                Phase::Disabled => ("disabled".to_string(), String::new(), None),
                Phase::Starting => ("starting".to_string(), String::new(), None),
                Phase::Connecting => ("connecting".to_string(), String::new(), None),
                Phase::Closed => ("disconnected, reconnects on next call".to_string(), String::new(), None),
                Phase::Failed(error) => ("failed".to_string(), String::new(), Some(error)),
                Phase::Connected(c) => ("connected".to_string(), format!(", {} tools", c.tools.len()), None),
            };
            let error = error
                .map(|e| format!("\n    {}", e.lines().collect::<Vec<_>>().join("\n    ")))
                .unwrap_or_default();
            format!("{name}: {state}{tools} ({exposure}){error}")
        })
        .collect();
    lines.extend(errors.iter().map(|e| format!("config error: {e}")));
    lines.join("\n")
}
