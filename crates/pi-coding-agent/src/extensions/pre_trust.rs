//! pi 1.6's pre-trust pass: before anything of an undecided project loads, the extensions that
//! do not come from it (`-e`, the user's and the packages of the user's settings) load, and
//! their `project_trust` handlers may decide. The runner started here is the one the session
//! binds later (`startup::start` completes it with the project's extensions), so factories run
//! once. Session replacement into an undecided folder asks the same handlers again.

use std::path::Path;
use std::sync::Arc;

use pi_extensions::{discover, ExtensionRunner, Mode, RunnerConfig, StateUpdate, TrustNotice, TrustOutcome};
use serde_json::json;

use super::host::HostBridge;
use super::startup::discovery_input;
use crate::cli::{AppMode, Args};
use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;
use crate::config::trust;
use crate::services::Services;

/// What the pre-trust pass gave: a decision (already remembered by the services), and the
/// startup warnings pi 1.6 prints for handlers that failed.
#[derive(Debug, Default)]
pub struct PreTrust {
    pub decision: Option<bool>,
    /// The handlers' `ctx.ui.notify` calls, printed before the warnings (on stderr outside
    /// the terminal UI).
    pub notices: Vec<TrustNotice>,
    pub warnings: Vec<String>,
}

fn host_mode(mode: AppMode) -> Mode {
    match mode {
        AppMode::Print => Mode::Print,
        AppMode::Json => Mode::Json,
        AppMode::Rpc => Mode::Rpc,
        AppMode::Interactive => Mode::Tui,
    }
}

/// Whether `cwd` is one the handlers are asked about: trust-requiring files, no
/// `--approve`/`--no-approve`, and no decision made in this process yet.
fn undecided(args: &Args, services: &Services, paths: &Paths) -> bool {
    args.project_trust_override.is_none()
        && services.trust_decided(&paths.cwd).is_none()
        && trust::has_trust_requiring_resources(&paths.cwd, &paths.home)
}

/// The `project_trust` warnings of pi 1.6, and `remember: true` saved to `trust.json`.
fn settle(outcome: TrustOutcome, cwd: &Path, paths: &Paths, services: &Services) -> PreTrust {
    let mut warnings: Vec<String> = outcome
        .errors
        .iter()
        .map(|e| format!("Extension \"{}\" project_trust error: {}", e.extension_path, e.error))
        .collect();
    if let (Some(trusted), true) = (outcome.decision, outcome.remember) {
        if let Err(e) = trust::save_decision(&paths.agent_dir.join("trust.json"), cwd, trusted) {
            warnings.push(e);
        }
    }
    if let Some(trusted) = outcome.decision {
        services.remember_trust(cwd, trusted);
    }
    PreTrust {
        decision: outcome.decision,
        notices: outcome.notices,
        warnings,
    }
}

/// Run the pre-trust pass for the process's folder. Nothing starts when the folder needs
/// no decision or no extension outside the project is configured; a host that cannot start
/// is left to the normal start, which reports it.
pub async fn run(args: &Args, services: &Arc<Services>, paths: &Paths, mode: AppMode) -> PreTrust {
    if !undecided(args, services, paths) {
        return PreTrust::default();
    }
    let mut settings = SettingsManager::load(paths);
    settings.ignore_project();
    let found = discover(&discovery_input(args, &settings, paths, false));
    if found.sources.is_empty() {
        return PreTrust::default();
    }
    let mode = host_mode(mode);
    let slot = Arc::clone(services.extensions());
    let mut config = RunnerConfig::new(
        env!("CARGO_PKG_VERSION"),
        paths.agent_dir.clone(),
        &paths.cwd,
        found.sources,
    );
    config.mode = mode;
    config.pre_trust = true;
    let tools = pi_tools::ToolsOptions {
        shell_path: settings.shell_path().map(std::path::PathBuf::from),
        command_prefix: settings.shell_command_prefix().map(str::to_string),
        bin_dir: Some(paths.bin_dir()),
        ..Default::default()
    };
    // Extensions wrapping pi's built-in tools read their definitions while loading.
    let all_tools = pi_tools::create_tools(&paths.cwd, &pi_tools::ALL_TOOL_NAMES, &tools)
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name(),
                "label": tool.label(),
                "description": tool.description(),
                "parameters": tool.parameters(),
            })
        })
        .collect();
    config.initial_state = Some(StateUpdate {
        cwd: Some(paths.cwd.clone()),
        mode: Some(mode),
        has_ui: Some(mode.has_ui()),
        project_trusted: Some(false),
        all_tools: Some(all_tools),
        ..StateUpdate::default()
    });
    config.host_program = std::env::var("PI_EXTENSION_HOST")
        .ok()
        .and_then(|v| pi_extensions::HostProgram::parse(&v));
    let handler = HostBridge::spawn(&slot, paths.cwd.clone(), tools, mode);
    let Ok(Some(runner)) = ExtensionRunner::start(config, handler).await else {
        return PreTrust::default();
    };
    let runner = Arc::new(runner);
    slot.set_pre_trust(Arc::clone(&runner));
    if !runner.registrations().handles("project_trust") {
        return PreTrust::default();
    }
    // Dialogs can be answered only by a terminal UI, which is not up yet.
    match runner.project_trust(&paths.cwd, false).await {
        Ok(outcome) => settle(outcome, &paths.cwd, paths, services),
        Err(e) => PreTrust {
            warnings: vec![e.to_string()],
            ..PreTrust::default()
        },
    }
}

/// Session replacement into `cwd`: when it is undecided, the loaded extensions'
/// `project_trust` handlers are asked again (no dialogs), before its services load.
pub async fn on_replacement(args: &Args, services: &Arc<Services>, cwd: &Path) -> PreTrust {
    let paths = Paths::for_cwd(cwd);
    if !undecided(args, services, &paths) {
        return PreTrust::default();
    }
    let Some(runner) = services.extensions().runner() else {
        return PreTrust::default();
    };
    if !runner.registrations().handles("project_trust") {
        return PreTrust::default();
    }
    match runner.project_trust(cwd, false).await {
        Ok(outcome) => settle(outcome, cwd, &paths, services),
        Err(e) => PreTrust {
            warnings: vec![e.to_string()],
            ..PreTrust::default()
        },
    }
}
