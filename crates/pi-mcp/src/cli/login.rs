//! `pi mcp login` and `pi mcp logout`. Signing in through the browser (MCP OAuth) is not
//! implemented yet: login connects, says so when no sign-in is needed, and otherwise fails with a
//! clear message. Logout deletes a stored sign-in.

use super::args::{edit_distance, parse, Kind};
use super::auth_store::remove_sign_in;
use super::list::{probe, Probe};
use super::{CliContext, CliOutput, HELP_HINT};
use crate::config::{Scope, TransportConfig};

pub(crate) async fn login_or_logout(login: bool, args: &[String], context: &CliContext) -> CliOutput {
    let command = if login { "login" } else { "logout" };
    let output = CliOutput::default();
    let known: &[(&str, Kind)] = if login {
        &[("local", Kind::Flag), ("timeout", Kind::Value)]
    } else {
        &[("local", Kind::Flag)]
    };
    let parsed = match parse(args, known, usize::MAX) {
        Ok(parsed) => parsed,
        Err(message) => return output.fail(message),
    };
    let [name] = parsed.positional.as_slice() else {
        return output.fail(format!("Usage: pi mcp {command} <server> [-l]\n{HELP_HINT}"));
    };
    let trusted = context.trusted();
    let config = context.load(trusted);
    let Some(entry) = config.server(name) else {
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        let suggestion = names
            .iter()
            .find(|candidate| edit_distance(candidate, name) <= 2)
            .map(|s| format!(" Did you mean \"{s}\"?"))
            .unwrap_or_default();
        let project = context.project_config();
        let note = if !trusted && project.exists() {
            format!(
                " {} is ignored because the project is not trusted. Start pi in the project to trust it.",
                project.display()
            )
        } else {
            String::new()
        };
        let configured = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        return output.fail(format!(
            "No MCP server named \"{name}\".{suggestion}{note} Configured: {configured}."
        ));
    };
    if parsed.has("local") && entry.scope != Scope::Project {
        return output.fail(format!(
            "MCP server \"{name}\" is defined in {}, not in the project; omit --local.",
            entry.source.display()
        ));
    }
    if let Some(provider) = entry.config.auth_provider() {
        return output.fail(format!(
            "MCP server \"{name}\" uses the credentials of provider \"{provider}\". Run \"pi auth {command} {provider}\"."
        ));
    }
    let url = match &entry.config.transport {
        TransportConfig::Http { url, .. } if entry.config.uses_oauth() => url.clone(),
        _ => {
            return output.fail(format!(
                "MCP server \"{name}\" does not use OAuth. Only HTTP servers without an Authorization header do."
            ))
        }
    };
    let mut output = output;
    if !login {
        match remove_sign_in(&context.agent_dir, name, &url) {
            Ok(true) => output.out(format!("Signed out of MCP server \"{name}\".")),
            Ok(false) => output.out(format!("No stored credentials for MCP server \"{name}\".")),
            Err(e) => {
                return output.fail(format!(
                    "Could not update {}: {e}",
                    context.agent_dir.join("mcp-auth.json").display()
                ))
            }
        }
        return output;
    }
    let timeout = parsed
        .value("timeout")
        .map(str::trim)
        .map(|t| t.parse::<f64>())
        .unwrap_or(Ok(300.0));
    if !timeout.is_ok_and(|t| t.is_finite() && t > 0.0) {
        return output.fail("--timeout must be a positive number of seconds.");
    }
    match probe(entry, context).await {
        Probe::Connected { client, tools } => {
            output.out(format!(
                "Already signed in to MCP server \"{name}\" ({} tools).",
                tools.len()
            ));
            client.close().await;
            output
        }
        Probe::NeedsSignIn => output.fail(format!(
            "Sign-in to MCP server \"{name}\" failed: signing in with OAuth is not supported by this version of pi yet."
        )),
        Probe::Failed(error) => output.fail(format!("MCP server \"{name}\" failed to connect: {error}")),
    }
}
