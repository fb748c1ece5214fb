//! `pi mcp login` and `pi mcp logout`: login connects first (a server that needs no sign-in says
//! so), else signs in through the browser and prints the URL as soon as it is known; logout
//! deletes the stored sign-in (`mcp-auth.json`).

use super::args::{edit_distance, parse, Kind};
use std::time::Duration;

use super::list::connect_options;
use super::{CliContext, CliOutput, HELP_HINT};
use crate::config::Scope;
use crate::login::{start_login, LoginEvent, LoginHandle, LoginOptions, LoginResult};

/// `--timeout` when not given, in seconds.
const DEFAULT_LOGIN_TIMEOUT_SECS: f64 = 300.0;

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
    if !entry.config.uses_oauth() {
        return output.fail(format!(
            "MCP server \"{name}\" does not use OAuth. Only HTTP servers without an Authorization header do."
        ));
    }
    let mut output = output;
    if !login {
        match crate::login::logout(entry, &context.agent_dir) {
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
        .unwrap_or(Ok(DEFAULT_LOGIN_TIMEOUT_SECS));
    let timeout = match timeout {
        Ok(t) if t.is_finite() && t > 0.0 => t,
        _ => return output.fail("--timeout must be a positive number of seconds."),
    };
    let handle = start_login(
        entry.clone(),
        LoginOptions {
            agent_dir: context.agent_dir.clone(),
            connect: connect_options(context, name),
            timeout: Some(Duration::from_secs_f64(timeout.min(1e9))),
            open_browser: context.open_browser,
        },
    );
    let result = drive(handle, name, context, &mut output).await;
    let message = result.message(name, Some(timeout));
    if result.is_success() {
        output.out(message);
        output
    } else {
        output.fail(message)
    }
}

/// Show the URL as soon as it is known (and offer to paste the redirect URL on a terminal),
/// then wait for the end.
async fn drive(mut handle: LoginHandle, name: &str, context: &CliContext, output: &mut CliOutput) -> LoginResult {
    let mut asked = false;
    while let Some(event) = handle.events.recv().await {
        if let LoginEvent::AuthorizationUrl(url) = event {
            let line = format!("Sign in to MCP server \"{name}\" in your browser:\n{url}");
            match &context.io {
                Some(io) => (io.line)(&line),
                None => output.out(line),
            }
            if let (Some(ask), false) = (context.io.as_ref().and_then(|io| io.ask_redirect_url.clone()), asked) {
                asked = true;
                let mut answers = ask();
                let paste = handle.paster();
                tokio::spawn(async move {
                    if let Some(answer) = answers.recv().await {
                        paste(answer);
                    }
                });
            }
        }
    }
    handle.result().await
}
