//! The errors of starting an extension host and of talking to one.

use std::path::PathBuf;
use std::time::Duration;

/// Why an extension host could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("Node.js was not found: install it or set PI_NODE to a node binary to run extensions")]
    NodeNotFound,
    #[error(
        "the npm packages extensions need (jiti, typebox 1.x, @earendil-works/pi-tui, pi-ai, pi-agent-core) were not found{}",
        hint_suffix(.hint)
    )]
    ModulesMissing { hint: String },
    #[error("could not install the extension host packages into {dir}: {message}")]
    InstallFailed { dir: PathBuf, message: String },
    #[error("could not write the extension host files to {path}: {source}")]
    HostFiles {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not open a socket for the extension host: {0}")]
    Socket(#[source] std::io::Error),
    #[error("could not start {node}: {source}")]
    Spawn {
        node: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the extension host exited before it was ready ({status}){}", tail_suffix(.stderr))]
    ExitedEarly { status: String, stderr: String },
    #[error("the extension host did not connect within {0:?}")]
    ConnectTimeout(Duration),
    #[error("the extension host speaks protocol version {found}; this pi speaks {expected}")]
    ProtocolMismatch { expected: u32, found: u32 },
    #[error("the extension host sent an unreadable greeting: {0}")]
    BadGreeting(String),
    #[error(transparent)]
    Host(#[from] HostError),
}

/// A failure of one exchange with a running host.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HostError {
    #[error("the extension host exited ({status}){}", tail_suffix(.stderr))]
    Exited { status: String, stderr: String },
    #[error("the extension host stopped responding during `{method}` and was stopped")]
    Hung { method: String },
    #[error("extensions did not finish `{method}` within {after:?}")]
    Timeout { method: String, after: Duration },
    #[error("the extension host is not running")]
    NotRunning,
    #[error("the extension host could not do `{method}`: {message}")]
    Remote {
        method: String,
        code: String,
        message: String,
    },
    #[error("unreadable reply to `{method}`: {message}")]
    BadReply { method: String, message: String },
}

fn hint_suffix(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!(": {hint}")
    }
}

fn tail_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim_end();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("\n{trimmed}")
    }
}
