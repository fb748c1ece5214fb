//! `pi mcp add|remove|list|login|logout`: the MCP crate does the work; this passes it the
//! agent dir, the cwd and the product's trust decision for the project (`.pi/mcp.json` is
//! read only in a trusted project), and prints what it returns.

use std::io::Write;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;
use crate::config::trust::{resolve_project_trust, DefaultTrust, TrustQuery};

/// Lines the sign-in prints before it ends (the URL), and on a terminal the prompt for the
/// redirect URL when the browser cannot reach this machine.
fn live_io() -> pi_mcp::cli::CliIo {
    use std::io::IsTerminal;
    let ask: Option<Arc<dyn Fn() -> mpsc::Receiver<String> + Send + Sync>> = if std::io::stdin().is_terminal() {
        Some(Arc::new(|| {
            let (tx, rx) = mpsc::channel(1);
            let _ = write!(
                std::io::stderr(),
                "If the browser cannot reach this machine, paste the URL it was redirected to: "
            );
            let _ = std::io::stderr().flush();
            // The read blocks until a line or EOF; the process exits when the sign-in ends either way.
            std::thread::spawn(move || {
                let mut line = String::new();
                if std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
                    let _ = tx.blocking_send(line);
                }
            });
            rx
        }))
    } else {
        None
    };
    pi_mcp::cli::CliIo {
        line: Arc::new(|line: &str| {
            let mut out = std::io::stdout();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }),
        ask_redirect_url: ask,
    }
}

/// `Some(exit code)` when `argv` is a `pi mcp` command.
pub fn run(argv: &[String], paths: &Paths) -> Option<i32> {
    if argv.first().map(String::as_str) != Some("mcp") {
        return None;
    }
    let args: Vec<String> = argv[1..]
        .iter()
        .filter(|a| !matches!(a.as_str(), "--approve" | "-a" | "--no-approve" | "-na"))
        .cloned()
        .collect();
    let cli_override = if argv.iter().any(|a| a == "--approve" || a == "-a") {
        Some(true)
    } else if argv.iter().any(|a| a == "--no-approve" || a == "-na") {
        Some(false)
    } else {
        None
    };
    let settings = SettingsManager::load(paths);
    let trust_file = paths.agent_dir.join("trust.json");
    // Like the package commands, `pi mcp` never asks: an undecided project is not trusted.
    let (trusted, _) = resolve_project_trust(&TrustQuery {
        cwd: &paths.cwd,
        home: &paths.home,
        trust_file: &trust_file,
        cli_override,
        default: DefaultTrust::from_setting(settings.global_settings().get("defaultProjectTrust")),
        can_ask: false,
    });
    let mut context = pi_mcp::cli::CliContext::new(&paths.agent_dir, &paths.cwd);
    context.project_trusted = Some(trusted);
    context.client_version = env!("CARGO_PKG_VERSION").to_string();
    context.io = Some(live_io());
    let output = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt.block_on(pi_mcp::cli::run(&args, &context)),
        Err(e) => {
            eprintln!("Error: could not start: {e}");
            return Some(1);
        }
    };
    let _ = std::io::stdout().write_all(output.stdout.as_bytes());
    let _ = std::io::stderr().write_all(output.stderr.as_bytes());
    Some(output.exit_code)
}
