//! `--mode json`: the session header, then every session event as one JSON line.

use std::sync::Arc;

use async_trait::async_trait;

use super::output::{LineOutput, LineWriter};
use super::PromptQueue;
use crate::session::{SessionEvent, SessionListener};
use crate::session_host::SessionHost;

struct JsonLines(LineOutput);

#[async_trait]
impl SessionListener for JsonLines {
    async fn on_event(&self, event: &SessionEvent<'_>) {
        if let Some(line) = event.wire_json() {
            self.0.send_line(line).await;
        }
    }
}

/// Run the prompts and stream the events (of the sessions that replace the first one too, as
/// pi 1.6 does; the header is the first session's only). Exit code 0 even when a run ended in
/// an error (the error is in the events); 1 when a prompt could not start.
pub async fn run(host: &SessionHost, prompts: PromptQueue) -> i32 {
    let (out, writer) = LineWriter::stdout();
    out.send_line(host.session().header_json()).await;
    host.subscribe(Arc::new(JsonLines(out)));
    let code = match super::run_prompts(host, prompts).await {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    };
    match writer.close().await {
        Ok(()) => code,
        Err(_) => code.max(1),
    }
}
