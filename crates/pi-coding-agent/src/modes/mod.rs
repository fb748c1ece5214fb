//! The faces of pi over one AgentSession: print, JSON and RPC (the terminal UI is the
//! `pi-interactive` crate, handed to `app::run` by the binary).

pub mod json;
pub mod output;
pub mod print;
pub mod resume_picker;
pub mod rpc;

use pi_ai::ImageContent;

use crate::session::PromptError;
use crate::session_host::SessionHost;

/// How the interactive mode starts.
#[derive(Debug, Clone, Default)]
pub struct InteractiveOptions {
    /// Startup warnings to show in the chat (model fallback, settings errors, ...).
    pub warnings: Vec<String>,
    /// `--verbose`.
    pub verbose: bool,
    /// `pi -r`: open the session picker first.
    pub resume_picker: bool,
    /// `--tui-mode`: overrides the `tuiMode` setting for this run.
    pub tui_mode: Option<crate::cli::TuiMode>,
    /// Commands of pi's built-in extensions that are off for this run (`/llama`, `/mcp`):
    /// neither listed nor run, as without their extension pi 1.6 has no such command.
    pub builtins_off: Vec<&'static str>,
}

/// The terminal UI. It is the `pi-interactive` crate, which builds on this one, so the binary
/// hands it to `app::run`; every other face runs without it.
#[async_trait::async_trait(?Send)]
pub trait TerminalUi {
    /// Before anything of the project in `cwd` loads: ask whether to trust it, when nothing
    /// has decided yet. The answer for this run; `None` when there was no question.
    fn ask_project_trust(&self, cwd: &std::path::Path) -> Option<bool>;
    /// Before the session opens: the folder the chosen session was recorded in is gone.
    /// Ask whether to run it in `cwd` or fork it there; `None` when the question could not
    /// be asked (the error is printed then, as without a terminal).
    fn ask_missing_cwd(&self, gone: &std::path::Path, cwd: &std::path::Path) -> Option<MissingCwdChoice>;
    /// Run the UI over `host` until the user quits; the exit code.
    async fn run(&self, host: std::sync::Arc<SessionHost>, initial: PromptQueue, options: InteractiveOptions) -> i32;
}

/// The answer to a session whose recorded folder is gone (pi 1.6's startup question).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingCwdChoice {
    /// Run it in the current folder this time; the header keeps the old one, so the question
    /// comes again next time.
    Continue,
    /// Copy it into the current folder as a new session (as `--fork`); the original stays.
    Fork,
    /// Start nothing.
    Cancel,
}

/// The prompts of a non-interactive run: the first may carry images; each is a full run.
#[derive(Debug, Clone, Default)]
pub struct PromptQueue {
    pub first: Option<(String, Vec<ImageContent>)>,
    pub rest: Vec<String>,
}

/// Send each prompt in turn, waiting for each run (and its retries) to finish. Each goes to
/// the host's current session: an extension command may have replaced the one before.
pub async fn run_prompts(host: &SessionHost, prompts: PromptQueue) -> Result<(), PromptError> {
    if let Some((text, images)) = prompts.first {
        host.session().prompt(&text, images).await?;
    }
    for text in prompts.rest {
        host.session().prompt(&text, Vec::new()).await?;
    }
    Ok(())
}
