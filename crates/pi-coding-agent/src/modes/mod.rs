//! The faces of pi over one AgentSession: print, JSON and RPC (and the terminal UI).

pub mod interactive;
pub mod json;
pub mod output;
pub mod print;
pub mod resume_picker;
pub mod rpc;

use pi_ai::ImageContent;

use crate::session::PromptError;
use crate::session_host::SessionHost;

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
