//! `-p` / print mode: run the prompts, then print the final answer's text blocks.

use pi_ai::{Content, StopReason};

use super::PromptQueue;
use crate::session_host::SessionHost;

/// Run the prompts; print the last assistant message of the session they ended in. Exit code
/// 1 when it ended in an error or was aborted (the message goes to stderr), or when a prompt
/// could not start.
pub async fn run(host: &SessionHost, prompts: PromptQueue) -> i32 {
    if let Err(e) = super::run_prompts(host, prompts).await {
        eprintln!("{e}");
        return 1;
    }
    let Some(last) = host.session().last_assistant() else {
        return 0;
    };
    match last.stop_reason {
        StopReason::Error | StopReason::Aborted => {
            let fallback = if last.stop_reason == StopReason::Error {
                "Request error"
            } else {
                "Request aborted"
            };
            eprintln!("{}", last.error_message.as_deref().unwrap_or(fallback));
            1
        }
        _ => {
            let mut text = String::new();
            for block in &last.content {
                if let Content::Text(t) = block {
                    text.push_str(&t.text);
                    text.push('\n');
                }
            }
            let (out, writer) = super::output::LineWriter::stdout();
            if !text.is_empty() {
                text.pop();
                out.send_line(text).await;
            }
            match writer.close().await {
                Ok(()) => 0,
                Err(_) => 1,
            }
        }
    }
}
