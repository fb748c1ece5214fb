//! `pi mcp add|remove|list|login|logout`: configure and check MCP servers without a session. Each
//! command returns its output and exit code instead of printing.

mod args;
mod auth_store;
pub use auth_store::provider_tokens_from;
mod edit_commands;
mod list;
mod login;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::client::ProviderTokens;
use crate::config::resolve::EnvSource;
use crate::config::{load_mcp_config, project_config_path, LoadOptions, McpConfig};

/// What the commands print and return.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CliOutput {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
}

impl CliOutput {
    pub(crate) fn out(&mut self, line: impl AsRef<str>) {
        self.stdout.push_str(line.as_ref());
        self.stdout.push('\n');
    }

    pub(crate) fn err(&mut self, line: impl AsRef<str>) {
        self.stderr.push_str(line.as_ref());
        self.stderr.push('\n');
    }

    pub(crate) fn fail(mut self, line: impl AsRef<str>) -> Self {
        self.err(line);
        self.exit_code = 1;
        self
    }
}

/// Output that cannot wait for the command to end (the sign-in URL), and the terminal prompt
/// for a pasted redirect URL.
#[derive(Clone)]
pub struct CliIo {
    /// Print one line now.
    pub line: Arc<dyn Fn(&str) + Send + Sync>,
    /// Ask for the redirect URL the browser ended on; the answer arrives on the channel (none
    /// when stdin is not a terminal).
    pub ask_redirect_url: Option<Arc<dyn Fn() -> mpsc::Receiver<String> + Send + Sync>>,
}

/// Where the commands work and what they may use.
#[derive(Clone)]
pub struct CliContext {
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    /// Whether the project is trusted; read from `<agent_dir>/trust.json` when None.
    pub project_trusted: Option<bool>,
    /// Login tokens for `auth.provider` servers; read from `<agent_dir>/auth.json` when None.
    pub provider_tokens: Option<ProviderTokens>,
    pub env: EnvSource,
    /// Sent as `clientInfo.version`.
    pub client_version: String,
    /// Lines printed while a command runs; without it they join the output.
    pub io: Option<CliIo>,
    /// `login` opens the authorization URL in the browser.
    pub open_browser: bool,
}

impl CliContext {
    pub fn new(agent_dir: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            agent_dir: agent_dir.into(),
            cwd: cwd.into(),
            project_trusted: None,
            provider_tokens: None,
            env: EnvSource::Process,
            client_version: env!("CARGO_PKG_VERSION").to_string(),
            io: None,
            open_browser: true,
        }
    }

    pub(crate) fn trusted(&self) -> bool {
        self.project_trusted
            .unwrap_or_else(|| crate::trust::is_project_trusted(&self.agent_dir, &self.cwd))
    }

    pub(crate) fn project_config(&self) -> PathBuf {
        project_config_path(&self.cwd)
    }

    pub(crate) fn global_config(&self) -> PathBuf {
        self.agent_dir.join("mcp.json")
    }

    pub(crate) fn load(&self, project_trusted: bool) -> McpConfig {
        load_mcp_config(&LoadOptions {
            agent_dir: &self.agent_dir,
            cwd: &self.cwd,
            project_trusted,
        })
    }

    pub(crate) fn tokens(&self) -> ProviderTokens {
        match &self.provider_tokens {
            Some(tokens) => tokens.clone(),
            None => auth_store::provider_tokens_from(&self.agent_dir),
        }
    }
}

pub(crate) const HELP_HINT: &str = "Use \"pi mcp --help\" for usage.";

const HELP: &str = "Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]
  pi mcp login <server> [-l] [--timeout <seconds>]
  pi mcp logout <server> [-l]

Manage the MCP servers pi connects to, outside a session. Servers come from
~/.pi/agent/mcp.json and, once a project is trusted, from its .pi/mcp.json.

Commands:
  add <server>            Write a server entry (an existing one is replaced)
  remove <server>         Delete a server entry
  list                    Connect to each enabled server and report it (exit 1 on any problem)
  login <server>          Sign in to an OAuth server
  logout <server>         Forget the stored sign-in of a server

For add, remove, login and logout:
  -l, --local             Work on the project's .pi/mcp.json, not the global file

For add:
  --url <url>             A Streamable HTTP server instead of a command
  --env <KEY=VALUE>       Environment of a stdio server (repeat for more)
  --cwd <dir>             Working directory of a stdio server
  --header <KEY=VALUE>    HTTP header (repeat for more)
  --bearer-token-env-var <NAME>
                          Send \"Authorization: Bearer ${NAME}\"
  --oauth-client-id <id>  OAuth client id registered beforehand
  --oauth-client-secret <secret>
                          OAuth client secret (${NAME} and !command work)
  --oauth-callback-port <port>
                          Port of the local OAuth callback
  --oauth-client-name <name>
                          Client name for OAuth client registration
  --oauth-client-registration <mode>
                          auto (default), cimd or dcr
  --exposure <mode>       codemode (default), deferred, direct or hidden
  --description <text>    What the server is for (shown to the model)

Other options:
  --json                  list: print JSON
  --timeout <seconds>     login: give up after this long (default 300)";

/// Run `pi mcp <args>` (the words after `mcp`).
pub async fn run(args: &[String], context: &CliContext) -> CliOutput {
    let mut output = CliOutput::default();
    let Some(command) = args.first() else {
        output.out(HELP);
        return output;
    };
    if command == "help" || args.iter().any(|a| a == "--help" || a == "-h") {
        output.out(HELP);
        return output;
    }
    let rest = &args[1..];
    match command.as_str() {
        "add" => edit_commands::add(rest, context),
        "remove" => edit_commands::remove(rest, context),
        "list" => list::list(rest, context).await,
        "login" | "logout" => login::login_or_logout(command == "login", rest, context).await,
        other => output.fail(format!("Unknown mcp command \"{other}\".\n{HELP_HINT}")),
    }
}

/// Run `pi mcp <args>` to completion on a runtime of its own; returns (stdout, stderr, exit code).
/// Call it outside an async context (the CLI's dispatch, before any runtime starts).
pub fn run_cli(args: &[String], agent_dir: &Path, cwd: &Path) -> (String, String, i32) {
    let context = CliContext::new(agent_dir, cwd);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let output = match runtime {
        Ok(runtime) => runtime.block_on(async {
            let output = run(args, &context).await;
            // A token refresh a connection started is saved before the process ends.
            crate::oauth::refreshes_settled().await;
            output
        }),
        Err(e) => CliOutput::default().fail(format!("Could not start: {e}")),
    };
    (output.stdout, output.stderr, output.exit_code)
}
