//! What the host asks of pi: the caller implements [`HostHandler`] to answer extension requests
//! (dialogs, `setModel`, nested tool calls, command context actions) and to receive the
//! fire-and-forget actions (`pi.sendMessage`, `pi.appendEntry`, `ui.notify`, ...) in order.

use async_trait::async_trait;
use serde_json::Value;

use crate::protocol::ExtensionError;

/// Which of the host's output streams a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// pi's side of the calls the host makes. Every method has a default, so a caller implements
/// only what its mode supports; a library never prints, so output is handed over, not shown.
#[async_trait]
pub trait HostHandler: Send + Sync + 'static {
    /// A request that needs an answer: `ui.select`, `ui.confirm`, `ui.input`, `ui.editor`,
    /// `pi.setModel`, `tool.execute`, `ctx.waitForIdle`, `ctx.newSession`, ... The error text
    /// reaches the extension as a rejected promise.
    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let _ = params;
        Err(format!("`{method}` is not available in this mode"))
    }

    /// A fire-and-forget action or report, called in the order the host sent them, on the task
    /// that reads the socket: queue the work (it may well dispatch events back to the host)
    /// rather than doing it here.
    fn notification(&self, method: &str, params: Value) {
        let _ = (method, params);
    }

    /// An error outside any request: a `pi.events` handler or a stray async failure.
    fn extension_error(&self, error: ExtensionError) {
        let _ = error;
    }

    /// Text the host (an extension's `console.log` or `process.stdout.write`, say) printed,
    /// passed on as it arrives: a chunk may end inside a line, and newlines are its own.
    fn output(&self, stream: OutputStream, line: &str) {
        let _ = (stream, line);
    }
}

/// A handler that answers nothing and drops everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHandler;

impl HostHandler for NoHandler {}
