//! `pi mcp list [--json]`: connect to every enabled server as a session would and report its state,
//! tools, and the configuration errors; exit 1 when anything needs attention.

use serde_json::{json, Map, Value};

use super::args::{parse, Kind};
use super::{CliContext, CliOutput, HELP_HINT};
use crate::client::{ConnectError, ConnectOptions, McpClient, McpTool};
use crate::config::ServerEntry;
use crate::log::McpServerLog;
use crate::oauth::AuthFile;

/// The state of a connection attempt as `pi mcp` reports it.
pub(crate) enum Probe {
    Connected {
        client: Box<McpClient>,
        tools: Vec<McpTool>,
    },
    NeedsSignIn,
    Failed(String),
}

pub(crate) fn connect_options(context: &CliContext, server: &str) -> ConnectOptions {
    let mut options = ConnectOptions::new(&context.cwd, &context.client_version);
    options.env = context.env.clone();
    options.provider_tokens = Some(context.tokens());
    options.log = Some(McpServerLog::in_agent_dir(&context.agent_dir).sink(server));
    options.oauth_file = Some(AuthFile::in_agent_dir(&context.agent_dir));
    options
}

/// Connect and list the tools (a server whose listing fails has failed).
pub(crate) async fn probe(entry: &ServerEntry, context: &CliContext) -> Probe {
    let failed = |error: ConnectError| {
        if error.needs_sign_in() {
            Probe::NeedsSignIn
        } else {
            Probe::Failed(error.message())
        }
    };
    let client = match McpClient::connect(&entry.name, &entry.config, &connect_options(context, &entry.name)).await {
        Ok(client) => client,
        Err(error) => return failed(error),
    };
    match client.list_tools().await {
        Ok(tools) => Probe::Connected {
            client: Box::new(client),
            tools,
        },
        Err(error) => {
            let tail = client.stderr_tail().filter(|t| !t.is_empty());
            client.close().await;
            Probe::Failed(match tail {
                Some(tail) => format!("{error}\n{tail}"),
                None => error.to_string(),
            })
        }
    }
}

struct Report {
    entry: ServerEntry,
    state: &'static str,
    tools: Vec<String>,
    /// Tools whose exposure differs from the server's, in listing order.
    tool_exposure: Vec<(String, &'static str)>,
    resources: bool,
    error: Option<String>,
}

async fn report(entry: ServerEntry, context: &CliContext) -> Report {
    let mut report = Report {
        entry,
        state: "disabled",
        tools: Vec::new(),
        tool_exposure: Vec::new(),
        resources: false,
        error: None,
    };
    if !report.entry.config.enabled {
        return report;
    }
    match probe(&report.entry, context).await {
        Probe::Connected { client, tools } => {
            report.state = "connected";
            let exposure = report.entry.config.exposure;
            for tool in &tools {
                let own = report.entry.config.tool_exposure(&tool.name);
                if own != exposure {
                    report.tool_exposure.push((tool.name.clone(), own.as_str()));
                }
            }
            report.tools = tools.into_iter().map(|t| t.name).collect();
            report.resources = client.server_info().has_resources();
            client.close().await;
        }
        Probe::NeedsSignIn => report.state = "needs-auth",
        Probe::Failed(error) => {
            report.state = "failed";
            report.error = Some(error);
        }
    }
    report
}

fn to_json(report: &Report) -> Value {
    let entry = &report.entry;
    let mut object = Map::new();
    object.insert("name".into(), json!(entry.name));
    object.insert("scope".into(), json!(entry.scope.as_str()));
    object.insert("source".into(), json!(entry.source.display().to_string()));
    if let Some(path) = &entry.override_path {
        object.insert("override".into(), json!(path.display().to_string()));
    }
    object.insert("enabled".into(), json!(entry.config.enabled));
    object.insert("exposure".into(), json!(entry.config.exposure.as_str()));
    object.insert("transport".into(), json!(entry.config.describe_transport()));
    if let Some(provider) = entry.config.auth_provider() {
        object.insert("authProvider".into(), json!(provider));
    }
    object.insert("state".into(), json!(report.state));
    object.insert("tools".into(), json!(report.tools));
    if !report.tool_exposure.is_empty() {
        let map: Map<String, Value> = report
            .tool_exposure
            .iter()
            .map(|(t, e)| (t.clone(), json!(e)))
            .collect();
        object.insert("toolExposure".into(), Value::Object(map));
    }
    if report.resources {
        object.insert("resources".into(), json!(true));
    }
    if let Some(error) = &report.error {
        object.insert("error".into(), json!(error));
    }
    Value::Object(object)
}

pub(crate) async fn list(args: &[String], context: &CliContext) -> CliOutput {
    let mut output = CliOutput::default();
    let parsed = match parse(args, &[("json", Kind::Flag)], usize::MAX) {
        Ok(parsed) => parsed,
        Err(message) => return output.fail(message),
    };
    if !parsed.positional.is_empty() {
        return output.fail(format!("Usage: pi mcp list [--json]\n{HELP_HINT}"));
    }
    let trusted = context.trusted();
    let config = context.load(trusted);
    let project = context.project_config();
    let untrusted_note = (!trusted && project.exists()).then(|| {
        format!(
            "{} is ignored because the project is not trusted. Start pi in the project to trust it.",
            project.display()
        )
    });
    let reports = futures::future::join_all(config.servers.iter().cloned().map(|entry| report(entry, context))).await;
    let failed = !config.errors.is_empty() || reports.iter().any(|r| r.entry.config.enabled && r.state != "connected");
    output.exit_code = i32::from(failed);
    if parsed.has("json") {
        let mut top = Map::new();
        top.insert("servers".into(), Value::Array(reports.iter().map(to_json).collect()));
        top.insert("errors".into(), json!(config.errors));
        if let Some(note) = &untrusted_note {
            top.insert("note".into(), json!(note));
        }
        output.out(serde_json::to_string_pretty(&Value::Object(top)).unwrap_or_default());
        return output;
    }
    if reports.is_empty() && config.errors.is_empty() {
        output.out(format!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            context.global_config().display()
        ));
    }
    for report in &reports {
        let entry = &report.entry;
        let state = match report.state {
            "connected" => {
                let n = report.tools.len();
                format!("connected, {n} tool{}", if n == 1 { "" } else { "s" })
            }
            "needs-auth" => "needs sign-in".to_string(),
            other => other.to_string(),
        };
        output.out(format!(
            "{}: {state} ({}, {})",
            entry.name,
            entry.config.exposure.as_str(),
            entry.scope.as_str()
        ));
        output.out(format!("  {}", entry.config.describe_transport()));
        if let Some(path) = &entry.override_path {
            output.out(format!("  project override: {}", path.display()));
        }
        if report.state == "needs-auth" {
            match entry.config.auth_provider() {
                Some(provider) => output.out(format!("  sign in with: /login {provider} in pi")),
                None => output.out(format!("  sign in with: pi mcp login {}", entry.name)),
            }
        }
        if !report.tools.is_empty() {
            let tools: Vec<String> = report
                .tools
                .iter()
                .map(|tool| match report.tool_exposure.iter().find(|(t, _)| t == tool) {
                    Some((_, exposure)) => format!("{tool} [{exposure}]"),
                    None => tool.clone(),
                })
                .collect();
            output.out(format!("  tools: {}", tools.join(", ")));
        }
        if report.resources {
            output.out("  offers resources");
        }
        if let Some(error) = &report.error {
            output.out(format!("  {}", error.split('\n').collect::<Vec<_>>().join("\n  ")));
        }
    }
    for error in &config.errors {
        output.out(format!("config error: {error}"));
    }
    if let Some(note) = untrusted_note {
        output.out(note);
    }
    output
}
