//! The MCP servers extensions register (`pi.registerMcpServer`): checked as pi 1.6 checks
//! them when the extension loads, then connected through pi's own MCP support (the built-in
//! `builtin:mcp`) with their tools joining the session. When MCP is off and no extension
//! handles `mcp_servers_change`, each server is reported once, as pi 1.6 reports it.

use std::sync::Arc;

use pi_extensions::{ExtensionError, LoadError, RegisteredMcpServer, Registrations};

use super::ExtensionSlot;
use crate::session::AgentSession;

/// pi 1.6's load error for a server whose config does not validate (the factory's
/// `registerMcpServer` call throws there, so the load fails).
pub fn invalid_servers(registrations: &Registrations) -> Vec<String> {
    registrations
        .mcp_servers
        .iter()
        .filter_map(|server| {
            let problem = pi_mcp::config::validate_server_config(&server.name, &server.config).err()?;
            let error = LoadError {
                path: server.extension_path.clone(),
                error: format!(
                    "Failed to load extension: Invalid MCP server registered by extension \"{}\": {problem}",
                    server.extension_path
                ),
            };
            Some(error.to_string())
        })
        .collect()
}

/// Connect (or report) the servers not seen before. Called once the extensions are bound and
/// after every change they make.
pub async fn take_up(slot: &Arc<ExtensionSlot>, session: &AgentSession, servers: &[RegisteredMcpServer]) {
    let fresh = slot.unseen_mcp_servers(servers);
    if fresh.is_empty() {
        return;
    }
    let handled = slot
        .runner()
        .is_some_and(|r| r.registrations().handles("mcp_servers_change"));
    if handled {
        return;
    }
    if slot.mcp_connects() {
        let entries = fresh
            .iter()
            .filter_map(|server| {
                let config = pi_mcp::config::validate_server_config(&server.name, &server.config).ok()?;
                Some(pi_mcp::ServerEntry {
                    name: server.name.clone(),
                    config,
                    source: std::path::PathBuf::from(&server.extension_path),
                    scope: pi_mcp::Scope::Global,
                    override_path: None,
                })
            })
            .collect();
        crate::mcp::connect_registered(session, entries);
        return;
    }
    let errors = fresh
        .iter()
        .map(|server| ExtensionError {
            extension_path: server.extension_path.clone(),
            event: "register_mcp_server".to_string(),
            error: format!(
                "MCP server \"{}\" is registered, but no loaded extension connects MCP servers; another extension may have replaced the built-in MCP support",
                server.name
            ),
            stack: None,
        })
        .collect();
    slot.report(errors).await;
}
